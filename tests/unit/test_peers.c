/* SPDX-License-Identifier: MIT */
/*
 * The peer guard (lib/enforce/peers.h): its seccomp program's decisions in every
 * ABI (simulator and the kernel's own BPF engine), the program installed
 * alone against a real sibling process in each ABI (x86-64, x32, i386),
 * and the whole guard: what it closes, what it leaves working (the
 * Landlock domain must change no file operation), and that the process
 * outside it can still read the guarded one's memory (the broker's
 * direction).  Installations happen in forked children.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cbpf/cbpf_internal.h"
#include "kernel_oracle.h"
#include "enforce/peers.h"
#include "iouring_restrict/iouring_restrict.h"

#define CHECK(cond)                                                                               \
	do {                                                                                      \
		if (!(cond)) {                                                                    \
			fprintf(stderr, "child check failed at %s:%d: %s (errno %d)\n", __FILE__, \
				__LINE__, #cond, errno);                                          \
			return 1;                                                                 \
		}                                                                                 \
	} while (0)

#define X32 0x40000000U
#define ATTACH 16U
#define SEIZE 0x4206U

static int in_child(int (*fn)(void *), void *arg)
{
	int st;
	pid_t pid = fork();

	cr_assert_geq(pid, 0);
	if (pid == 0)
		_exit(fn(arg));
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return WEXITSTATUS(st);
}

/* A sibling to attack: same uid, dumpable, sleeping until killed. */
static pid_t sibling(void)
{
	pid_t pid = fork();

	cr_assert_geq(pid, 0);
	if (pid == 0) {
		for (;;)
			pause();
	}
	return pid;
}

static void sibling_end(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/* ---- the program's decisions ------------------------------------------- */

enum { ALLOW = 1, DENY = 2, KILL = 3 };

/* The expected answer, written from the system-call tables (x86-64:
 * arch/x86/entry/syscalls/syscall_64.tbl and syscall_32.tbl; arm64 and
 * riscv64: the generic table; arm: its EABI table). */
static int expect(uint32_t arch, uint32_t nr, uint64_t arg0)
{
	uint32_t lo = (uint32_t)arg0;
	int req = lo == ATTACH || lo == SEIZE ? DENY : ALLOW;

#if defined(__x86_64__)
	if (arch == AUDIT_ARCH_X86_64) {
		uint32_t m = nr & ~X32;

		if (m == 101 || m == 521)
			return req;
		return m == 310 || m == 311 || m == 539 || m == 540 || m == 438 ? DENY : ALLOW;
	}
	if (arch == AUDIT_ARCH_I386) {
		if (nr == 26)
			return req;
		return nr == 347 || nr == 348 || nr == 438 ? DENY : ALLOW;
	}
#elif defined(__aarch64__)
	if (arch == AUDIT_ARCH_AARCH64) {
		if (nr == 117)
			return req;
		return nr == 270 || nr == 271 || nr == 438 ? DENY : ALLOW;
	}
	if (arch == AUDIT_ARCH_ARM) {
		if (nr == 26)
			return req;
		return nr == 376 || nr == 377 || nr == 438 ? DENY : ALLOW;
	}
#endif
	return KILL;
}

static int classify(uint32_t ret)
{
	if (ret == SECCOMP_RET_ALLOW)
		return ALLOW;
	if (ret == (SECCOMP_RET_ERRNO | EPERM))
		return DENY;
	if (ret == SECCOMP_RET_KILL_PROCESS)
		return KILL;
	return -1;
}

static void make_ctx(uint8_t ctx[IOUR_CTX_SIZE], uint32_t arch, uint32_t nr, uint64_t arg0)
{
	memset(ctx, 0, IOUR_CTX_SIZE);
	memcpy(ctx, &nr, 4);
	memcpy(ctx + 4, &arch, 4);
	memcpy(ctx + 16, &arg0, 8);
}

Test(peers, program_decisions_every_abi_simulated_and_in_the_kernel)
{
	static const uint32_t arches[] = { AUDIT_ARCH_X86_64,  AUDIT_ARCH_I386,
					   AUDIT_ARCH_AARCH64, AUDIT_ARCH_ARM,
					   AUDIT_ARCH_RISCV64, 0,
					   0xffffffffU };
	static const uint64_t args[] = { 0,          ATTACH, SEIZE,
					 0, /* TRACEME */
					 17,         0x4207, 0x4206ULL | (1ULL << 32),
					 16ULL << 32 };
	struct iour_insn prog[IOUR__PEERS_MAX_INSNS], remap[IOUR__PEERS_MAX_INSNS];
	struct kernel_oracle ko;
	unsigned long cases = 0;
	int n = iour__peers_build(prog), i;
	size_t a, k;

#if !defined(__x86_64__) && !defined(__aarch64__)
	cr_skip_test("expectations written for x86-64 and arm64");
#endif
	cr_assert_gt(n, 0);
	cr_assert_leq(n, IOUR__PEERS_MAX_INSNS);
	cr_assert_eq(oracle_socket_accepts(prog, (size_t)n), 0);
	cr_assert_eq(oracle_seccomp_accepts(prog, (size_t)n), 0);
	/* The kernel's engine returns a length: 1 allow, 2 deny, 3 kill. */
	memcpy(remap, prog, sizeof(prog));
	for (i = 0; i < n; i++)
		if (remap[i].code == (BPF_RET | BPF_K))
			remap[i].k = (uint32_t)classify(remap[i].k);
	cr_assert_eq(oracle_open(&ko), 0);
	cr_assert_eq(oracle_attach(&ko, remap, (size_t)n), 0);
	for (a = 0; a < IOUR_ARRAY_SIZE(arches); a++) {
		for (i = 0; i < 1400; i++) {
			uint32_t nr = i < 600  ? (uint32_t)i :
				      i < 1200 ? ((uint32_t)i - 600) | X32 :
						 (uint32_t)random();

			for (k = 0; k < IOUR_ARRAY_SIZE(args); k++) {
				uint8_t ctx[IOUR_CTX_SIZE];
				int want = expect(arches[a], nr, args[k]), sim, ker;
				size_t len = 0;

				make_ctx(ctx, arches[a], nr, args[k]);
				sim = classify(iour__cbpf_run_unchecked(prog, ctx, NULL));
				cr_assert_eq(oracle_run(&ko, ctx, &len), 1);
				ker = (int)len;
				cr_assert_eq(sim, want,
					     "arch 0x%x nr 0x%x arg0 0x%llx: sim %d want %d",
					     arches[a], nr, (unsigned long long)args[k], sim, want);
				cr_assert_eq(ker, want, "arch 0x%x nr 0x%x arg0 0x%llx: kernel %d",
					     arches[a], nr, (unsigned long long)args[k], ker);
				cases++;
				if (nr > 600 && (nr & ~X32) != 101 && (nr & ~X32) != 521 &&
				    nr != 26 && nr != 117)
					break; /* the argument matters for ptrace only */
			}
		}
	}
	oracle_close(&ko);
	fprintf(stderr, "peers: %lu (arch, nr, arg0) cases, simulator and kernel agree\n", cases);
}

/* ---- the seccomp part alone, live ---------------------------------------- */

static int install_seccomp_only(void)
{
	struct iour_insn prog[IOUR__PEERS_MAX_INSNS];
	struct sock_fprog fp;
	int n = iour__peers_build(prog);

	if (n <= 0 || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -1;
	fp.len = (unsigned short)n;
	fp.filter = (struct sock_filter *)prog;
	return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &fp);
}

#if defined(__x86_64__)
static long int80(long nr, long a, long b)
{
	long ret;

	__asm__ volatile("int $0x80"
			 : "=a"(ret)
			 : "a"(nr), "b"(a), "c"(b), "d"(0L), "S"(0L), "D"(0L)
			 : "memory", "r8", "r9", "r10", "r11");
	return ret;
}

static int child_int80_probe(void *arg)
{
	struct rlimit no_core = { 0, 0 };

	(void)arg;
	setrlimit(RLIMIT_CORE, &no_core);
	signal(SIGSEGV, SIG_DFL);
	return int80(20 /* i386 getpid */, 0, 0) == getpid() ? 0 : 1;
}
#endif

static long sc(long nr, long a, long b, long c, long d)
{
	long r = syscall(nr, a, b, c, d, 0L, 0L);

	return r < 0 ? -errno : r;
}

struct target {
	pid_t pid;
	int ia32; /* int $0x80 works here */
};

/* Before the filter: the attack works (the control); after: EPERM in
 * every ABI, while the calls the filter must not touch keep working. */
static int child_seccomp_only(void *arg)
{
	const struct target *t = arg;
	char buf = 0, path[64];
	struct iovec l = { &buf, 1 }, r = { NULL, 1 };
	int pidfd = (int)syscall(SYS_pidfd_open, t->pid, 0), st, fd;
	pid_t gc;

	CHECK(pidfd >= 0);
	/* control: this process may attach, take fds, write memory */
	CHECK(ptrace(PTRACE_SEIZE, t->pid, 0, 0) == 0);
	CHECK(ptrace(PTRACE_INTERRUPT, t->pid, 0, 0) == 0);
	CHECK(waitpid(t->pid, &st, __WALL) == t->pid && WIFSTOPPED(st));
	CHECK(ptrace(PTRACE_DETACH, t->pid, 0, 0) == 0);
	fd = (int)syscall(SYS_pidfd_getfd, pidfd, 0, 0);
	CHECK(fd >= 0);
	close(fd);
	CHECK(process_vm_writev(t->pid, &l, 1, &r, 1, 0) == -1 && errno == EFAULT);

	CHECK(install_seccomp_only() == 0);
	/* x86-64 (arm64) numbers */
	CHECK(ptrace(PTRACE_SEIZE, t->pid, 0, 0) == -1 && errno == EPERM);
	CHECK(ptrace(PTRACE_ATTACH, t->pid, 0, 0) == -1 && errno == EPERM);
	CHECK(sc(SYS_pidfd_getfd, pidfd, 0, 0, 0) == -EPERM);
	CHECK(process_vm_writev(t->pid, &l, 1, &r, 1, 0) == -1 && errno == EPERM);
	CHECK(process_vm_readv(t->pid, &l, 1, &r, 1, 0) == -1 && errno == EPERM);
	/* requests that need an attached tracee pass the filter */
	CHECK(sc(SYS_ptrace, PTRACE_PEEKDATA, t->pid, 0, 0) == -ESRCH);
#if defined(__x86_64__)
	/* x32 numbers: ptrace 521, process_vm_* 539/540, pidfd_getfd 438 */
	CHECK(sc(521 | X32, ATTACH, t->pid, 0, 0) == -EPERM);
	CHECK(sc(521 | X32, SEIZE, t->pid, 0, 0) == -EPERM);
	CHECK(sc(101 | X32, SEIZE, t->pid, 0, 0) == -EPERM);
	CHECK(sc(539 | X32, t->pid, 0, 0, 0) == -EPERM);
	CHECK(sc(540 | X32, t->pid, 0, 0, 0) == -EPERM);
	CHECK(sc(438 | X32, pidfd, 0, 0, 0) == -EPERM);
	/* i386: ptrace 26, process_vm_* 347/348, pidfd_getfd 438 */
	if (t->ia32) {
		CHECK(int80(26, ATTACH, t->pid) == -EPERM);
		CHECK(int80(26, SEIZE, t->pid) == -EPERM);
		CHECK(int80(347, t->pid, 0) == -EPERM);
		CHECK(int80(348, t->pid, 0) == -EPERM);
		CHECK(int80(438, pidfd, 0) == -EPERM);
		CHECK(int80(20, 0, 0) == getpid()); /* getpid passes */
	}
#endif
	/* /proc/PID/mem is not a system call the filter sees: Landlock's part */
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)t->pid);
	fd = open(path, O_RDWR | O_CLOEXEC);
	CHECK(fd >= 0);
	close(fd);
	/* PTRACE_TRACEME in a child of this process passes */
	gc = fork();
	CHECK(gc >= 0);
	if (gc == 0)
		_exit(ptrace(PTRACE_TRACEME, 0, 0, 0) == 0 ? 0 : 1);
	CHECK(waitpid(gc, &st, 0) == gc && WIFEXITED(st) && WEXITSTATUS(st) == 0);
	return 0;
}

Test(peers, seccomp_part_denies_every_abi_live)
{
	struct target t = { .pid = sibling(), .ia32 = 0 };
	int rc;

#if defined(__x86_64__)
	t.ia32 = in_child(child_int80_probe, NULL) == 0;
#endif
	rc = in_child(child_seccomp_only, &t);
	sibling_end(t.pid);
	cr_assert_eq(rc, 0);
	if (!t.ia32)
		cr_skip_test("no IA-32 emulation: int $0x80 faults here; x86-64 and x32 numbers "
			     "and the program's i386 arm (simulated) passed, live i386 not run");
}

/* ---- the whole guard ----------------------------------------------------- */

static int cap_in(const char *field, int cap)
{
	char line[256];
	FILE *f = fopen("/proc/self/status", "r");
	unsigned long long v = 0;
	size_t len = strlen(field);

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, field, len))
			v = strtoull(line + len, NULL, 16);
	fclose(f);
	return (int)((v >> cap) & 1);
}

static int landlock_abi(void)
{
	long abi = syscall(444, NULL, 0, 1);

	return abi < 0 ? 0 : (int)abi;
}

/* File operations a Landlock domain could change, under the guard. */
static int file_ops(const char *dir)
{
	char a[256], b[256], f[300], g[300], h[300], p[300], d[300];
	int fd;

	snprintf(a, sizeof(a), "%s/a", dir);
	snprintf(b, sizeof(b), "%s/b", dir);
	CHECK(mkdir(a, 0700) == 0 && mkdir(b, 0700) == 0);
	snprintf(f, sizeof(f), "%s/f", a);
	snprintf(g, sizeof(g), "%s/g", b);
	snprintf(h, sizeof(h), "%s/h", a);
	fd = open(f, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0600);
	CHECK(fd >= 0 && write(fd, "x", 1) == 1 && ftruncate(fd, 0) == 0);
	close(fd);
	CHECK(rename(f, g) == 0); /* across directories */
	CHECK(link(g, h) == 0);   /* a link across them */
	CHECK(syscall(SYS_renameat2, AT_FDCWD, g, AT_FDCWD, h, 2 /* EXCHANGE */) == 0);
	snprintf(p, sizeof(p), "%s/fifo", b);
	CHECK(mkfifo(p, 0600) == 0);
	CHECK(rename(p, f) == 0);
	snprintf(d, sizeof(d), "%s/sub", a);
	CHECK(mkdir(d, 0700) == 0);
	snprintf(p, sizeof(p), "%s/sub", b);
	CHECK(rename(d, p) == 0); /* a directory across directories */
	fd = open(g, O_RDWR | O_TRUNC | O_CLOEXEC);
	CHECK(fd >= 0);
	close(fd);
	if (geteuid() == 0) {
		snprintf(p, sizeof(p), "%s/blk", a);
		CHECK(mknod(p, S_IFBLK | 0600, makedev(7, 0)) == 0);
		snprintf(p, sizeof(p), "%s/chr", a);
		CHECK(mknod(p, S_IFCHR | 0600, makedev(1, 3)) == 0);
	}
	return 0;
}

struct guard_arg {
	pid_t sibling;
	char dir[128];
	int sync[2];
};

static int child_guard(void *arg)
{
	struct guard_arg *g = arg;
	struct iour__peers p;
	char path[64];
	int fd;

	CHECK(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0);
	CHECK(iour__peers_prepare(&p) == 0);
	CHECK(p.landlock_abi >= 2 && p.ruleset >= 0);
	CHECK(iour__peers_apply(&p, false) == 0);
	CHECK(p.ruleset == -1);
	CHECK((p.closes & (IOUR__PEERS_SECCOMP | IOUR__PEERS_LANDLOCK | IOUR__PEERS_NOCAP)) ==
	      (IOUR__PEERS_SECCOMP | IOUR__PEERS_LANDLOCK | IOUR__PEERS_NOCAP));
	CHECK(IOUR__PEERS_CLOSED(p.closes));
	/* no CAP_SYS_PTRACE in any set */
	CHECK(cap_in("CapEff:", 19) == 0 && cap_in("CapPrm:", 19) == 0 &&
	      cap_in("CapInh:", 19) == 0 && cap_in("CapAmb:", 19) == 0);
	if (geteuid() == 0)
		CHECK(cap_in("CapBnd:", 19) == 0);
	/* Landlock: another process's memory and fds are out of reach */
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)g->sibling);
	fd = open(path, O_RDWR | O_CLOEXEC);
	CHECK(fd < 0 && errno == EACCES);
	snprintf(path, sizeof(path), "/proc/%d/fd/0", (int)g->sibling);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	CHECK(fd < 0 && errno == EACCES);
	/* its own memory stays readable */
	fd = open("/proc/self/mem", O_RDWR | O_CLOEXEC);
	CHECK(fd >= 0);
	close(fd);
	CHECK(file_ops(g->dir) == 0);
	/* the process outside the guard reads this one's memory now */
	CHECK(write(g->sync[1], "r", 1) == 1);
	CHECK(read(g->sync[0], path, 1) == 1 && path[0] == 'k');
	return 0;
}

Test(peers, guard_closes_and_changes_no_file_operation)
{
	struct guard_arg g;
	char c, path[64];
	int st, up[2], down[2], fd;
	pid_t pid;

	if (landlock_abi() < 2)
		cr_skip_test("skipped: no Landlock ABI 2 here (ABI %d): the guard leaves "
			     "/proc/PID/mem open, tested by the seccomp part's test",
			     landlock_abi());
	g.sibling = sibling();
	snprintf(g.dir, sizeof(g.dir), "/tmp/iour-peers-XXXXXX");
	cr_assert_not_null(mkdtemp(g.dir));
	cr_assert_eq(pipe(up), 0);
	cr_assert_eq(pipe(down), 0);
	g.sync[0] = down[0];
	g.sync[1] = up[1];
	fflush(NULL);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0)
		_exit(child_guard(&g));
	if (read(up[0], &c, 1) == 1) {
		snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
		fd = open(path, O_RDWR | O_CLOEXEC);
		cr_expect_geq(fd, 0,
			      "the unguarded parent cannot open the guarded child's "
			      "memory: %s",
			      strerror(errno));
		if (fd >= 0)
			close(fd);
		cr_assert_eq(write(down[1], "k", 1), 1);
	}
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	sibling_end(g.sibling);
	{
		char cmd[200];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", g.dir);
		cr_expect_eq(system(cmd), 0);
	}
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child status %d", st);
}

/* The control for the file operations: a domain that handles REFER with
 * no rule denies a rename across directories (EXDEV), so the test above
 * would see a domain that changed them. */
static int child_refer_control(void *arg)
{
	const char *dir = arg;
	uint64_t handled = 1ULL << 13;
	char a[256], b[256], f[300], g[300];
	int rs, fd;

	snprintf(a, sizeof(a), "%s/ca", dir);
	snprintf(b, sizeof(b), "%s/cb", dir);
	CHECK(mkdir(a, 0700) == 0 && mkdir(b, 0700) == 0);
	snprintf(f, sizeof(f), "%s/f", a);
	snprintf(g, sizeof(g), "%s/g", b);
	fd = open(f, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
	CHECK(fd >= 0);
	close(fd);
	rs = (int)syscall(444, &handled, sizeof(handled), 0);
	CHECK(rs >= 0);
	CHECK(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0);
	CHECK(syscall(446, rs, 0) == 0);
	CHECK(rename(f, g) == -1 && errno == EXDEV);
	return 0;
}

Test(peers, refer_control_without_the_rule)
{
	char dir[64] = "/tmp/iour-peers-XXXXXX", cmd[128];
	int rc;

	if (landlock_abi() < 2)
		cr_skip_test("skipped: no Landlock ABI 2 here");
	cr_assert_not_null(mkdtemp(dir));
	rc = in_child(child_refer_control, dir);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	cr_expect_eq(system(cmd), 0);
	cr_assert_eq(rc, 0);
}

Test(peers, describe_names_what_is_open)
{
	char buf[256];

	cr_assert(strstr(
		iour__peers_describe(IOUR__PEERS_SECCOMP | IOUR__PEERS_NOCAP | IOUR__PEERS_LANDLOCK,
				     buf, sizeof(buf)),
		"are closed"));
	cr_assert(strstr(
		iour__peers_describe(IOUR__PEERS_SECCOMP | IOUR__PEERS_NOCAP, buf, sizeof(buf)),
		"/proc/PID/mem of other processes of the same uid is open"));
	cr_assert(strstr(
		iour__peers_describe(IOUR__PEERS_SECCOMP | IOUR__PEERS_LANDLOCK, buf, sizeof(buf)),
		"CAP_SYS_PTRACE"));
	cr_assert(strstr(iour__peers_describe(0, buf, sizeof(buf)), "NOT closed"));
}

/* ---- iour_plan__apply_task() applies it ---------------------------------- */

struct apply_arg {
	struct iour_plan *plan;
	pid_t sibling;
	bool allow;
};

/* The task plan of this kernel (task restrictions, or the companion),
 * applied: the guard is in place (seize of a sibling fails) and the
 * report says so in one note; with IOUR_APPLY_ALLOW_PTRACE, neither. */
static int child_apply(void *arg)
{
	struct apply_arg *a = arg;
	IOUR_OPTS(iour_apply_opts, o, .flags = a->allow ? IOUR_APPLY_ALLOW_PTRACE : 0);
	struct iour_report *rep = NULL;
	struct iour_decision d = { .sz = sizeof(d) };
	int i, n, notes = 0, st;

	CHECK(iour_plan__apply_task(a->plan, &o, &rep) == 0);
	n = iour_report__decision_cnt(rep);
	for (i = 0; i < n; i++) {
		CHECK(iour_report__decision(rep, (size_t)i, &d) == 0);
		if (d.kind == IOUR_DECISION_NOTE && !strncmp(d.text, "peer guard: ", 12)) {
			notes++;
			CHECK(IOUR__PEERS_CLOSED((uint32_t)d.value) ==
			      !!strstr(d.text, "other processes' rings are closed"));
			CHECK((d.value & IOUR__PEERS_SECCOMP) && (d.value & IOUR__PEERS_NOCAP));
			fprintf(stderr, "peers: apply_task's note: %s\n", d.text);
		}
	}
	iour_report__free(rep);
	if (a->allow) {
		CHECK(notes == 0);
		CHECK(ptrace(PTRACE_SEIZE, a->sibling, 0, 0) == 0);
		CHECK(ptrace(PTRACE_INTERRUPT, a->sibling, 0, 0) == 0);
		CHECK(waitpid(a->sibling, &st, __WALL) == a->sibling);
		CHECK(ptrace(PTRACE_DETACH, a->sibling, 0, 0) == 0);
	} else {
		CHECK(notes == 1);
		CHECK(ptrace(PTRACE_SEIZE, a->sibling, 0, 0) == -1 && errno == EPERM);
	}
	return 0;
}

Test(peers, apply_task_applies_the_guard_and_notes_it)
{
	struct iour_policy *p;
	struct iour_ruleset *rs;
	struct apply_arg a = { .allow = false };
	struct iour_plan_info info = { .sz = sizeof(info) };
	int rc1, rc2;

	cr_assert_eq(iour_ruleset__new(NULL, &rs), 0);
	cr_assert_eq(iour_ruleset__allow_sqe_op(rs, 0 /* NOP */), 0);
	cr_assert_eq(iour_policy__new(NULL, &p), 0);
	cr_assert_eq(iour_policy__set_ruleset(p, rs), 0);
	iour_ruleset__free(rs);
	cr_assert_eq(iour_policy__plan(p, NULL, &a.plan), 0);
	cr_assert_eq(iour_plan__info(a.plan, &info), 0);
	if (info.flags & IOUR_PLAN_INFO_REFUSED)
		cr_skip_test("skipped: the plan is refused on this kernel");
	a.sibling = sibling();
	rc1 = in_child(child_apply, &a);
	a.allow = true;
	rc2 = in_child(child_apply, &a);
	sibling_end(a.sibling);
	iour_plan__free(a.plan);
	iour_policy__free(p);
	cr_assert_eq(rc1, 0, "the guard by default");
	cr_assert_eq(rc2, 0, "IOUR_APPLY_ALLOW_PTRACE");
}
