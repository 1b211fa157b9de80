/* SPDX-License-Identifier: MIT */
/*
 * The seccomp companion against the real kernel.  Every installation
 * happens in a forked child (a seccomp filter cannot be removed); the
 * child reports through its exit status and prints what failed.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <liburing.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cbpf/cbpf_internal.h"
#include "enforce/enforce_internal.h"
#include "kernel_facts_oracle.h"
#include "kernel_oracle.h"
#include "base/miniring.h"
#include "base/sys.h"
#include "iouring_restrict/cbpf.h"
#include "iouring_restrict/companion.h"
#include "uring_avail.h"

#define CHECK(cond)                                                                  \
	do {                                                                         \
		if (!(cond)) {                                                       \
			fprintf(stderr, "child check failed at %s:%d: %s\n", __FILE__, \
				__LINE__, #cond);                                    \
			return 1;                                                    \
		}                                                                    \
	} while (0)

/* Run fn in a forked child; its return value becomes the exit status. */
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

/* io_uring_setup(1, NULL): -EFAULT means "io_uring usable here". */
static long setup_probe(void)
{
	return iour__setup(1, NULL);
}

static int nop_works(struct iour__ring *r)
{
	struct kio_sqe s;
	struct kio_cqe c;

	memset(&s, 0, sizeof(s));
	s.opcode = IOUR_OP_NOP;
	s.user_data = 5;
	return iour__ring_submit_one(r, &s, &c) == 0 && c.res == 0 && c.user_data == 5;
}

static int grandchild_probe(void *arg)
{
	long want = *(long *)arg;
	struct io_uring lr;

	CHECK(setup_probe() == want);
	CHECK(io_uring_queue_init(4, &lr, 0) == want);
	return 0;
}

struct setup_case {
	uint32_t errno_value; /* 0: default */
	long want;            /* what io_uring_setup then returns */
};

static int child_setup_denied(void *arg)
{
	const struct setup_case *c = arg;
	IOUR_OPTS(iour_companion_opts, o, .errno_value = c->errno_value);
	struct iour__ring before, after;
	long want = c->want;

	CHECK(iour__ring_init(&before, 4, 0) == 0);
	CHECK(iour_companion_install(&o) == 0);
	CHECK(setup_probe() == want);
	CHECK(iour__ring_init(&after, 4, 0) == (int)want);
	/* the ring created before keeps working: only setup is denied */
	CHECK(nop_works(&before));
	CHECK(nop_works(&before));
	CHECK(iour__register(before.fd, KIO_REGISTER_PROBE, NULL, 0) == -EINVAL);
	/* inherited by children */
	CHECK(in_child(grandchild_probe, &want) == 0);
	iour__ring_exit(&before);
	return 0;
}

Test(companion, setup_denied_in_child_and_grandchild_parent_unaffected)
{
	UNIT_REQUIRE_URING();
	static const struct setup_case cases[] = {
		{ 0, -ENOSYS },
		{ ENOSYS, -ENOSYS },
		{ EPERM, -EPERM },
		{ 1, -1 },
		{ 4095, -4095 },
	};
	struct iour__ring r;
	size_t i;

	for (i = 0; i < IOUR_ARRAY_SIZE(cases); i++) {
		cr_assert_eq(in_child(child_setup_denied, (void *)&cases[i]), 0, "errno_value %u",
			     cases[i].errno_value);
		/* the parent still creates rings */
		cr_assert_eq(setup_probe(), -EFAULT);
		cr_assert_eq(iour__ring_init(&r, 4, 0), 0);
		cr_assert(nop_works(&r));
		iour__ring_exit(&r);
	}
	fprintf(stderr, "companion: %zu errno variants denied setup in child and grandchild\n", i);
}

static int child_enter_register(void *arg)
{
	IOUR_OPTS(iour_companion_opts, o, .flags = *(uint32_t *)arg, .errno_value = EPERM);
	bool enter = o.flags & IOUR_COMPANION_ENTER, reg = o.flags & IOUR_COMPANION_REGISTER;
	struct iour__ring before;
	struct kio_sqe s;
	struct kio_cqe c;

	CHECK(iour__ring_init(&before, 4, 0) == 0);
	CHECK(iour_companion_install(&o) == 0);
	CHECK(setup_probe() == -EPERM);
	memset(&s, 0, sizeof(s));
	s.opcode = IOUR_OP_NOP;
	if (enter) {
		CHECK(iour__ring_submit_one(&before, &s, &c) == -EPERM);
		CHECK(*before.sq_tail == *before.sq_head); /* rolled back */
	} else {
		CHECK(iour__ring_submit_one(&before, &s, &c) == 0);
	}
	/* PROBE with a NULL arg: -EINVAL from io_uring, -EPERM from the filter */
	CHECK(iour__register(before.fd, KIO_REGISTER_PROBE, NULL, 0) == (reg ? -EPERM : -EINVAL));
	iour__ring_exit(&before);
	return 0;
}

Test(companion, enter_and_register_variants)
{
	UNIT_REQUIRE_URING();
	static const uint32_t flags[] = { IOUR_COMPANION_ENTER, IOUR_COMPANION_REGISTER,
					  IOUR_COMPANION_ENTER | IOUR_COMPANION_REGISTER };
	size_t i;

	for (i = 0; i < IOUR_ARRAY_SIZE(flags); i++)
		cr_assert_eq(in_child(child_enter_register, (void *)&flags[i]), 0, "flags %u",
			     flags[i]);
}

static int drop_to_nobody(void)
{
	if (setgroups(0, NULL) || setresgid(65534, 65534, 65534) ||
	    setresuid(65534, 65534, 65534))
		return -1;
	return 0;
}

/* Tests run as root, and CAP_SYS_ADMIN lets seccomp in without
 * no_new_privs; the documented -EACCES needs an unprivileged task. */
static int child_nnp_required(void *arg)
{
	IOUR_OPTS(iour_companion_opts, o);

	(void)arg;
	CHECK(drop_to_nobody() == 0);
	CHECK(prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 0);
	CHECK(iour_companion_install(&o) == -EACCES);
	CHECK(iour_companion_install(NULL) == -EACCES);
	/* nothing changed */
	CHECK(setup_probe() == -EFAULT);
	CHECK(prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 0);
	o.flags = IOUR_COMPANION_SET_NNP;
	CHECK(iour_companion_install(&o) == 0);
	CHECK(prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 1);
	CHECK(setup_probe() == -ENOSYS);
	return 0;
}

static int child_root_without_nnp(void *arg)
{
	(void)arg;
	CHECK(prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 0);
	CHECK(iour_companion_install(NULL) == 0);
	CHECK(prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 0); /* not set behind our back */
	CHECK(setup_probe() == -ENOSYS);
	return 0;
}

Test(companion, no_new_privs_rules)
{
	UNIT_REQUIRE_URING();
	if (geteuid() != 0)
		cr_skip_test("needs root to test both the privileged and the nobody case");
	cr_assert_eq(in_child(child_nnp_required, NULL), 0);
	cr_assert_eq(in_child(child_root_without_nnp, NULL), 0);
}

struct thread_ctx {
	int go[2], done[2];
	long seen;
};

static void *other_thread(void *arg)
{
	struct thread_ctx *t = arg;
	char b;

	if (read(t->go[0], &b, 1) != 1)
		return NULL;
	t->seen = setup_probe();
	if (write(t->done[1], "x", 1) != 1)
		return NULL;
	return NULL;
}

static int child_threads(void *arg)
{
	uint32_t flags = *(uint32_t *)arg;
	IOUR_OPTS(iour_companion_opts, o, .flags = flags);
	struct thread_ctx t = { .seen = 1 };
	pthread_t th;
	char b;

	CHECK(pipe(t.go) == 0 && pipe(t.done) == 0);
	CHECK(pthread_create(&th, NULL, other_thread, &t) == 0);
	CHECK(iour_task_thread_count() == 2);
	CHECK(iour_companion_install(&o) == 0);
	CHECK(setup_probe() == -ENOSYS);
	CHECK(write(t.go[1], "x", 1) == 1);
	CHECK(read(t.done[0], &b, 1) == 1);
	pthread_join(th, NULL);
	if (flags & IOUR_COMPANION_ALL_THREADS)
		CHECK(t.seen == -ENOSYS);
	else
		CHECK(t.seen == -EFAULT); /* an existing thread is not covered */
	return 0;
}

static void *thread_own_filter(void *arg)
{
	struct thread_ctx *t = arg;
	struct sock_filter allow = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	struct sock_fprog fp = { 1, &allow };
	char b;

	t->seen = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &fp);
	if (write(t->done[1], "x", 1) != 1 || read(t->go[0], &b, 1) != 1)
		return NULL;
	return NULL;
}

/* A thread that runs its own, different filter cannot be synchronised. */
static int child_tsync_busy(void *arg)
{
	IOUR_OPTS(iour_companion_opts, o, .flags = IOUR_COMPANION_ALL_THREADS);
	struct thread_ctx t = { .seen = 1 };
	pthread_t th;
	char b;

	(void)arg;
	CHECK(pipe(t.go) == 0 && pipe(t.done) == 0);
	CHECK(pthread_create(&th, NULL, thread_own_filter, &t) == 0);
	CHECK(read(t.done[0], &b, 1) == 1);
	CHECK(t.seen == 0);
	CHECK(iour_companion_install(&o) == -EBUSY);
	CHECK(setup_probe() == -EFAULT); /* nothing installed here */
	CHECK(write(t.go[1], "x", 1) == 1);
	pthread_join(th, NULL);
	return 0;
}

Test(companion, threads_calling_only_or_all)
{
	UNIT_REQUIRE_URING();
	uint32_t none = 0, all = IOUR_COMPANION_ALL_THREADS;

	cr_assert_eq(in_child(child_threads, &none), 0);
	cr_assert_eq(in_child(child_threads, &all), 0);
	cr_assert_eq(in_child(child_tsync_busy, NULL), 0);
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

/* Whether this machine runs i386 system calls at all: a kernel built
 * without IA32_EMULATION, or booted with ia32_emulation=0, answers
 * `int $0x80` with SIGSEGV.  Probed in a forked child, which may die. */
static int child_int80_probe(void *arg)
{
	struct rlimit no_core = { 0, 0 };

	(void)arg;
	setrlimit(RLIMIT_CORE, &no_core); /* the fault leaves no core file */
	/* the kernel's default action, not a sanitizer's handler (which would
	 * report the expected fault as an error of the test) */
	signal(SIGSEGV, SIG_DFL);
	return int80(20 /* i386 getpid */, 0, 0) == getpid() ? 0 : 1;
}

/* x32 getpid (39 | bit 30): the pid where the kernel runs x32 system
 * calls (CONFIG_X86_X32_ABI), -ENOSYS where it does not. */
static long x32_getpid(void)
{
	long r = syscall(39 | 0x40000000);

	return r == -1 ? -errno : r;
}

static int child_x32(void *arg)
{
	IOUR_OPTS(iour_companion_opts, o, .errno_value = EPERM);
	long getpid_before = x32_getpid();

	(void)arg;
	CHECK(getpid_before == getpid() || getpid_before == -ENOSYS);
	/* before: x32 io_uring_setup reaches io_uring (EFAULT) or is not
	 * built (ENOSYS), as x32 getpid showed */
	CHECK(syscall(ORACLE_NR_IO_URING_SETUP | 0x40000000, 1, NULL) == -1 &&
	      errno == (getpid_before == -ENOSYS ? ENOSYS : EFAULT));
	CHECK(iour_companion_install(&o) == 0);
	/* after: denied by the filter, whether or not x32 is built */
	CHECK(syscall(ORACLE_NR_IO_URING_SETUP | 0x40000000, 1, NULL) == -1 && errno == EPERM);
	/* other x32 calls pass the filter: the same answer as before */
	CHECK(x32_getpid() == getpid_before);
	return 0;
}

static int child_ia32_live(void *arg)
{
	IOUR_OPTS(iour_companion_opts, o, .errno_value = EPERM);

	(void)arg;
	/* before: ia32 reaches io_uring (EFAULT) */
	CHECK(int80(ORACLE_NR_IO_URING_SETUP, 1, 0) == -EFAULT);
	CHECK(iour_companion_install(&o) == 0);
	CHECK(int80(ORACLE_NR_IO_URING_SETUP, 1, 0) == -EPERM);
	/* other ia32 calls pass the filter */
	CHECK(int80(20 /* i386 getpid */, 0, 0) == getpid());
	CHECK(int80(ORACLE_NR_IO_URING_ENTER, -1, 0) == -EBADF); /* i386 io_uring_enter: not denied */
	return 0;
}

/* The companion's i386 arm without running i386 code: the program
 * compares the arch word with AUDIT_ARCH_I386 (decoded by the seccomp
 * listing), and the simulator sends (i386, io_uring_setup) to the errno
 * return and other i386 calls to ALLOW. */
static void check_i386_arm(void)
{
	IOUR_OPTS(iour_companion_opts, o, .errno_value = EPERM);
	struct iour_insn prog[IOUR__COMPANION_MAX_INSNS];
	static const struct {
		uint32_t nr, arch, ret;
	} cases[] = {
		{ ORACLE_NR_IO_URING_SETUP, AUDIT_ARCH_I386, SECCOMP_RET_ERRNO | EPERM },
		{ ORACLE_NR_IO_URING_ENTER, AUDIT_ARCH_I386, SECCOMP_RET_ALLOW },
		{ ORACLE_NR_IO_URING_REGISTER, AUDIT_ARCH_I386, SECCOMP_RET_ALLOW },
		{ 20, AUDIT_ARCH_I386, SECCOMP_RET_ALLOW },
		{ ORACLE_NR_IO_URING_SETUP | 0x40000000U, AUDIT_ARCH_X86_64, SECCOMP_RET_ERRNO | EPERM },
		{ ORACLE_NR_IO_URING_SETUP, AUDIT_ARCH_X86_64, SECCOMP_RET_ERRNO | EPERM },
		{ ORACLE_NR_IO_URING_SETUP, AUDIT_ARCH_ARM, SECCOMP_RET_KILL_PROCESS },
	};
	char text[4096];
	size_t len = sizeof(text), i;
	int n = iour_companion_program(&o, prog, IOUR_ARRAY_SIZE(prog));

	cr_assert_gt(n, 0);
	cr_assert_eq(iour_cbpf_disasm(prog, (size_t)n, IOUR_OPCODE_ANY,
				      IOUR_DISASM_TEXT | IOUR_DISASM_SECCOMP, text, &len),
		     0);
	cr_assert(strstr(text, "ld arch") != NULL, "%s", text);
	cr_assert(strstr(text, "jeq #0x40000003") != NULL, "no AUDIT_ARCH_I386 arm:\n%s", text);
	for (i = 0; i < IOUR_ARRAY_SIZE(cases); i++) {
		uint8_t ctx[IOUR_CTX_SIZE];

		memset(ctx, 0, sizeof(ctx));
		memcpy(ctx, &cases[i].nr, 4);
		memcpy(ctx + 4, &cases[i].arch, 4);
		cr_assert_eq(iour__cbpf_run_unchecked(prog, ctx, NULL), cases[i].ret,
			     "nr 0x%x arch 0x%x", cases[i].nr, cases[i].arch);
	}
}
#endif

/* A 32-bit process (or int 0x80) must not bypass the filter.  The x32 bit
 * and the program's i386 arm are checked everywhere; the live i386 part
 * needs IA-32 emulation and skips, saying so, where `int $0x80` faults. */
Test(companion, ia32_and_x32_numbers_are_denied)
{
	UNIT_REQUIRE_URING();
#if defined(__x86_64__)
	int probe;

	check_i386_arm();
	cr_assert_eq(in_child(child_x32, NULL), 0);
	probe = in_child(child_int80_probe, NULL);
	if (probe != 0)
		cr_skip_test("no IA-32 emulation: int $0x80 %s in a probe child; x32 denial and "
			     "the program's i386 arm (decoded, simulated) passed, the live i386 "
			     "part was not run",
			     probe == 128 + SIGSEGV ? "raised SIGSEGV" : "did not return getpid");
	cr_assert_eq(in_child(child_ia32_live, NULL), 0);
#else
	cr_skip_test("x86-64 only");
#endif
}

/* Stack companions until seccomp's total-length limit answers -ENOMEM. */
static int child_enomem(void *arg)
{
	int i, rc = 0;

	(void)arg;
	for (i = 0; i < 10000 && rc == 0; i++)
		rc = iour_companion_install(NULL);
	CHECK(rc == -ENOMEM);
	CHECK(i > 100);
	fprintf(stderr, "companion: -ENOMEM after %d stacked filters\n", i - 1);
	CHECK(setup_probe() == -ENOSYS);
	return 0;
}

Test(companion, seccomp_size_limit_gives_enomem)
{
	cr_assert_eq(in_child(child_enomem, NULL), 0);
}

static long fake_prctl(void *ctx, int option, unsigned long a2, unsigned long a3,
		       unsigned long a4, unsigned long a5)
{
	if (option == PR_GET_SECCOMP)
		return -EINVAL; /* what a kernel without CONFIG_SECCOMP says */
	return iour__sys_real()->prctl(ctx, option, a2, a3, a4, a5);
}

Test(companion, fault_injected_no_seccomp_gives_eopnotsupp)
{
	UNIT_REQUIRE_URING();
	struct iour_sys_ops ops = *iour__sys_real();

	ops.prctl = fake_prctl;
	iour__sys_set(&ops);
	cr_assert_eq(iour_companion_install(NULL), -EOPNOTSUPP);
	iour__sys_set(NULL);
	cr_assert_eq(setup_probe(), -EFAULT); /* nothing was installed */
}

Test(companion, bad_input)
{
	UNIT_REQUIRE_URING();
	struct {
		struct iour_companion_opts o;
		uint64_t extra;
	} big;
	struct iour_companion_opts o;
	struct iour_insn buf[IOUR__COMPANION_MAX_INSNS];

	memset(&o, 0, sizeof(o));
	o.sz = sizeof(o);
	o.flags = 1U << 7;
	cr_assert_eq(iour_companion_install(&o), -EINVAL);
	cr_assert_eq(iour_companion_program(&o, NULL, 0), -EINVAL);
	o.flags = 0;
	o.errno_value = 4096;
	cr_assert_eq(iour_companion_install(&o), -EINVAL);
	cr_assert_eq(iour_companion_program(&o, buf, 16), -EINVAL);
	o.errno_value = 0;
	o.sz = 4;
	cr_assert_eq(iour_companion_install(&o), -EINVAL);
	memset(&big, 0, sizeof(big));
	big.o.sz = sizeof(big);
	big.extra = 1;
	cr_assert_eq(iour_companion_install(&big.o), -E2BIG);
	cr_assert_eq(iour_companion_program(&big.o, buf, 16), -E2BIG);
	big.extra = 0;
	cr_assert_gt(iour_companion_program(&big.o, buf, 16), 0);
	/* nothing was installed by any of these */
	cr_assert_eq(setup_probe(), -EFAULT);
}

/* Run the attached program in the kernel's BPF engine on (nr, arch); the
 * returns were renumbered 1/2/3 (remap_rets), so the delivered length says
 * which return the program reached. */
static int run_prog(struct kernel_oracle *ko, uint32_t nr, uint32_t arch)
{
	uint8_t ctx[40];
	size_t len;

	memset(ctx, 0, sizeof(ctx));
	memcpy(ctx, &nr, 4);
	memcpy(ctx + 4, &arch, 4);
	if (oracle_run(ko, ctx, &len) != 1)
		return -1;
	return (int)len;
}

static void remap_rets(struct iour_insn *p, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		if (p[i].code != (BPF_RET | BPF_K))
			continue;
		if (p[i].k == SECCOMP_RET_ALLOW)
			p[i].k = 1;
		else if ((p[i].k & SECCOMP_RET_ACTION_FULL) == SECCOMP_RET_ERRNO)
			p[i].k = 2;
		else if (p[i].k == SECCOMP_RET_KILL_PROCESS)
			p[i].k = 3;
	}
}

Test(companion, program_export_checked_and_run_by_the_kernel)
{
	static const uint32_t flag_sets[] = { 0, IOUR_COMPANION_ENTER, IOUR_COMPANION_REGISTER,
					      IOUR_COMPANION_ENTER | IOUR_COMPANION_REGISTER };
	static const uint32_t arches[] = { AUDIT_ARCH_X86_64, AUDIT_ARCH_I386, AUDIT_ARCH_AARCH64,
					   AUDIT_ARCH_ARM, AUDIT_ARCH_RISCV64, 0, 0xffffffff };
	/* Only the x86-64 program folds the x32 bit (30) out of the number;
	 * the arm64 one compares numbers as they are. */
#if defined(__x86_64__)
	const uint32_t native = AUDIT_ARCH_X86_64, compat = AUDIT_ARCH_I386, fold = 0x40000000U;
#elif defined(__aarch64__)
	const uint32_t native = AUDIT_ARCH_AARCH64, compat = AUDIT_ARCH_ARM, fold = 0;
#else
	const uint32_t native = 0, compat = 0, fold = 0;
	cr_skip_test("expectations written for x86-64 and arm64");
#endif
	unsigned long cases = 0;
	size_t f, a;

	for (f = 0; f < IOUR_ARRAY_SIZE(flag_sets); f++) {
		IOUR_OPTS(iour_companion_opts, o, .flags = flag_sets[f], .errno_value = 13);
		struct iour_insn prog[IOUR__COMPANION_MAX_INSNS];
		struct kernel_oracle ko;
		int n = iour_companion_program(&o, NULL, 0);
		uint32_t nr, i;

		cr_assert_gt(n, 0);
		cr_assert_leq(n, IOUR__COMPANION_MAX_INSNS);
		cr_assert_eq(iour_companion_program(&o, prog, (size_t)n - 1), -ERANGE);
		cr_assert_eq(iour_companion_program(&o, prog, (size_t)n), n);
		/* the kernel's checkers accept it */
		cr_assert_eq(oracle_socket_accepts(prog, (size_t)n), 0);
		cr_assert_eq(oracle_seccomp_accepts(prog, (size_t)n), 0);
		/* the errno is in the program */
		for (i = 0; i < (uint32_t)n; i++)
			if (prog[i].code == (BPF_RET | BPF_K) &&
			    (prog[i].k & SECCOMP_RET_ACTION_FULL) == SECCOMP_RET_ERRNO)
				cr_assert_eq(prog[i].k & SECCOMP_RET_DATA, 13);

		remap_rets(prog, n);
		cr_assert_eq(oracle_open(&ko), 0);
		cr_assert_eq(oracle_attach(&ko, prog, (size_t)n), 0);
		for (a = 0; a < IOUR_ARRAY_SIZE(arches); a++) {
			for (i = 0; i < 1200; i++) {
				int want, got;
				uint32_t m;

				nr = i < 600 ? i : (i < 1000 ? (i - 600) | 0x40000000U
							     : (uint32_t)random());
				if (i >= 1100)
					nr = ORACLE_NR_IO_URING_SETUP + (i % 3) + ((i & 4) ? 0x40000000U : 0) +
					     ((i & 8) ? 0x80000000U : 0);
				m = nr & ~fold;
				if (arches[a] != native && arches[a] != compat)
					want = 3;
				else if (m == ORACLE_NR_IO_URING_SETUP ||
					 (m == ORACLE_NR_IO_URING_ENTER && (flag_sets[f] & IOUR_COMPANION_ENTER)) ||
					 (m == ORACLE_NR_IO_URING_REGISTER && (flag_sets[f] & IOUR_COMPANION_REGISTER)))
					want = 2;
				else
					want = 1;
				got = run_prog(&ko, nr, arches[a]);
				cr_assert_eq(got, want, "flags %u arch 0x%x nr 0x%x: got %d want %d",
					     flag_sets[f], arches[a], nr, got, want);
				cases++;
			}
		}
		oracle_close(&ko);
	}
	fprintf(stderr, "companion: %lu (flags, arch, nr) cases run in the kernel's BPF engine\n",
		cases);
}
