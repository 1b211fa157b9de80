/* SPDX-License-Identifier: MIT */
/*
 * Live, ring acquisition (doc/security.md, section 3a, "Ring
 * acquisition"): a program under `iour-restrict run` tries to take a ring
 * no policy restricts from another process, for real.
 *
 * escape-try (tests/progs/escape_try.c) PTRACE_SEIZEs its target, injects
 * io_uring_setup into it, takes the ring with pidfd_getfd and submits
 * OPENAT on it; it also tries PTRACE_ATTACH, pidfd_getfd of fd 0,
 * process_vm_readv/writev and opening /proc/TARGET/mem for writing.  Under
 * `run` with a NOP-only policy, as uid 65534 and as root, every step
 * fails; with `--allow-ptrace` (the positive control) the stolen ring
 * opens "/".  The targets: the program's parent (the ring broker before
 * 7.0; with task restrictions or `--broker=off`, the unrestricted process
 * that started run) and, under the broker, the broker's parent (an
 * unrestricted process of the same uid, dumpable).  The report line's
 * clause about other processes' rings must agree with what happened.
 *
 * Also measured: io_uring's fixed-file table refuses ring fds, so
 * MSG_RING's send-fd and FIXED_FD_INSTALL, which move files out of such a
 * table, cannot carry a ring; and `iour-restrict agent` is not dumpable,
 * so a process of its uid cannot attach to it, take its fds or touch its
 * memory.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "live.h"

#define NOBODY 65534

static const char nop_only[] =
	"{ \"defaultAction\": \"deny\",\n"
	"  \"entries\": [ { \"names\": [\"nop\"], \"action\": \"allow\" } ] }\n";

static bool broker_mode(void)
{
	return live_missing(LIVE_TASK) != NULL;
}

static int landlock_abi(void)
{
	long abi = syscall(444 /* landlock_create_ruleset */, NULL, 0, 1 /* VERSION */);

	return abi < 0 ? 0 : (int)abi;
}

static int yama_scope(void)
{
	char b[8] = "";
	int fd = open("/proc/sys/kernel/yama/ptrace_scope", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	if (read(fd, b, sizeof(b) - 1) <= 0)
		b[0] = '\0';
	close(fd);
	return b[0] >= '0' && b[0] <= '9' ? b[0] - '0' : -1;
}

/*
 * A process of `uid`, dumpable and unrestricted, runs `iour-restrict run
 * POLICY OPT... -- escape-try TARGET STEP...` and waits for it.  Its
 * output into *out and *err; the exit status.
 */
static int escape_run(uid_t uid, const char *const *opts, const char *target,
		      const char *const *steps, char **out, char **err)
{
	char tool[4096], prog[4096], pol[64] = "/tmp/iour-escape-XXXXXX";
	char *argv[64];
	int o = memfd_create("out", 0), e = memfd_create("err", 0), pf, n = 0, st;
	pid_t pid;

	live_prog_path(tool, sizeof(tool), "tools/iour-restrict");
	live_prog_path(prog, sizeof(prog), "tests/escape-try");
	pf = mkstemp(pol);
	cr_assert(o >= 0 && e >= 0 && pf >= 0);
	cr_assert_eq(write(pf, nop_only, strlen(nop_only)), (ssize_t)strlen(nop_only));
	cr_assert_eq(fchmod(pf, 0644), 0);
	close(pf);
	argv[n++] = tool;
	argv[n++] = "run";
	argv[n++] = pol;
	for (; opts && *opts; opts++)
		argv[n++] = (char *)*opts;
	argv[n++] = "--";
	argv[n++] = prog;
	argv[n++] = (char *)target;
	for (; *steps && n < 62; steps++)
		argv[n++] = (char *)*steps;
	argv[n] = NULL;
	fflush(NULL);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		pid_t g;

		if (uid && (setgroups(0, NULL) || setgid(uid) || setuid(uid)))
			_exit(124);
		prctl(PR_SET_DUMPABLE, 1, 0, 0, 0); /* as after an execve */
		g = fork();
		if (g == 0) {
			dup2(o, 1);
			dup2(e, 2);
			execv(tool, argv);
			_exit(125);
		}
		if (g < 0 || waitpid(g, &st, 0) != g)
			_exit(126);
		_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
	}
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	unlink(pol);
	*out = live_slurp(o);
	*err = live_slurp(e);
	close(o);
	close(e);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static const char *const all_steps[] = { "steal",    "attach", "getfd", "vm_writev",
					 "vm_readv", "mem",    NULL };

/* What the report line says about /proc/PID/mem of other processes. */
static bool report_says_mem_open(const char *err)
{
	if (strstr(err, "/proc/PID/mem of other processes of the same uid is open"))
		return true;
	cr_assert(strstr(err, "other processes' rings are closed"),
		  "the report line says nothing about other processes' rings: %s", err);
	return false;
}

/* Every step failed; /proc/TARGET/mem as the report line says (`mem_may`:
 * the target is dumpable, of the same uid and holds no capability the
 * program lacks, so only Landlock or Yama keep it closed; a root target
 * holds CAP_SYS_PTRACE, which a root program under run has lost, and the
 * kernel's capability check then denies its memory whatever else). */
static void expect_closed(const char *who, const char *out, const char *err, bool mem_may)
{
	bool mem_open = report_says_mem_open(err) && mem_may;

	cr_assert(strstr(out, "seize: EPERM\n"), "%s: %s", who, out);
	cr_assert(!strstr(out, "inject:") && !strstr(out, "openat:"), "%s: %s", who, out);
	cr_assert(strstr(out, "attach: EPERM\n"), "%s: %s", who, out);
	cr_assert(strstr(out, "getfd0: EPERM\n"), "%s: %s", who, out);
	cr_assert(strstr(out, "vm_writev: EPERM\n"), "%s: %s", who, out);
	cr_assert(strstr(out, "vm_readv: EPERM\n"), "%s: %s", who, out);
	if (mem_open)
		cr_assert(strstr(out, "mem: ok\n"), "%s: the report says /proc/PID/mem is open: %s",
			  who, out);
	else
		cr_assert(strstr(out, "mem: EACCES\n"), "%s: %s", who, out);
	for (char *q = (char *)out; *q; q++)
		if (*q == '\n')
			*q = '|';
	live_log("%s: %s", who, out);
}

static void escape_closed(uid_t uid, const char *const *opts, const char *label)
{
	char *out, *err, who[128];
	int rc;

	LIVE_REQUIRE(LIVE_RING);
	live_log("Landlock ABI %d, Yama ptrace_scope %d", landlock_abi(), yama_scope());
	/* the parent: the broker, or the unrestricted process that ran run */
	rc = escape_run(uid, opts, "parent", all_steps, &out, &err);
	cr_assert_eq(rc, 0, "%s", err);
	snprintf(who, sizeof(who), "%s, uid %u, target parent", label, (unsigned)uid);
	/* the broker is not dumpable: its memory is closed everywhere */
	expect_closed(who, out, err, uid != 0 && !(broker_mode() && !(opts && opts[0])));
	live_log("%s", strchr(err, ';') ? strchr(err, ';') + 2 : err);
	free(out);
	free(err);
	if (!broker_mode() || (opts && opts[0]))
		return; /* the parent was the unrestricted process already */
	rc = escape_run(uid, opts, "grandparent", all_steps, &out, &err);
	cr_assert_eq(rc, 0, "%s", err);
	snprintf(who, sizeof(who), "%s, uid %u, target the broker's parent", label, (unsigned)uid);
	expect_closed(who, out, err, uid != 0);
	free(out);
	free(err);
}

Test(live_escape, run_nobody_cannot_take_a_ring)
{
	escape_closed(NOBODY, NULL, broker_mode() ? "run (broker)" : "run (task)");
}

Test(live_escape, run_root_cannot_take_a_ring)
{
	escape_closed(0, NULL, broker_mode() ? "run (broker)" : "run (task)");
}

Test(live_escape, run_companion_cannot_take_a_ring)
{
	static const char *const off[] = { "--broker=off", NULL };

	if (!broker_mode())
		cr_skip_test("skipped: the kernel has task restrictions; --broker=off changes "
			     "nothing (run_nobody_cannot_take_a_ring runs the task path)");
	escape_closed(NOBODY, off, "run --broker=off (companion)");
}

/* The positive control: with --allow-ptrace the escape works, so the
 * tests above attack for real. */
static void escape_open(uid_t uid, const char *const *opts, const char *target, const char *label)
{
	char *out, *err;
	int rc, y = yama_scope();

	if ((y >= 1 && uid != 0) || y >= 3)
		cr_skip_test("skipped: Yama ptrace_scope %d denies attaching to a non-descendant "
			     "whatever run does: the positive control cannot run here",
			     y);
	rc = escape_run(uid, opts, target, all_steps, &out, &err);
	cr_assert_eq(rc, 0, "%s", err);
	cr_assert(strstr(err, "other processes' rings are NOT closed (--allow-ptrace)"), "%s", err);
	cr_assert(strstr(out, "seize: ok\n"), "%s: %s", label, out);
#if defined(__x86_64__)
	cr_assert(strstr(out, "inject: ok\ngetfd: ok\nopenat: ok\n"),
		  "%s: the stolen ring did not open \"/\": %s", label, out);
#endif
	cr_assert(strstr(out, "attach: ok\n"), "%s: %s", label, out);
	cr_assert(strstr(out, "getfd0: ok\n"), "%s: %s", label, out);
	cr_assert(strstr(out, "vm_writev: EFAULT\n"), "%s: %s", label, out);
	cr_assert(strstr(out, "vm_readv: EFAULT\n"), "%s: %s", label, out);
	cr_assert(strstr(out, "mem: ok\n"), "%s: %s", label, out);
	for (char *q = out; *q; q++)
		if (*q == '\n')
			*q = '|';
	live_log("%s, uid %u: %s", label, (unsigned)uid, out);
	free(out);
	free(err);
#if !defined(__x86_64__)
	cr_skip_test("skipped: the injection is written for x86-64; the attach, pidfd_getfd, "
		     "process_vm_* and /proc/PID/mem steps of the control passed");
#endif
}

Test(live_escape, run_allow_ptrace_takes_a_ring)
{
	static const char *const allow[] = { "--allow-ptrace", NULL };

	LIVE_REQUIRE(LIVE_RING);
	escape_open(NOBODY, allow, "parent",
		    broker_mode() ? "run --allow-ptrace (broker)" : "run --allow-ptrace (task)");
	escape_open(0, allow, "parent",
		    broker_mode() ? "run --allow-ptrace (broker)" : "run --allow-ptrace (task)");
}

Test(live_escape, run_companion_allow_ptrace_takes_a_ring)
{
	static const char *const allow[] = { "--broker=off", "--allow-ptrace", NULL };

	LIVE_REQUIRE(LIVE_RING);
	if (!broker_mode())
		cr_skip_test("skipped: the kernel has task restrictions (run_allow_ptrace_takes_a_"
			     "ring runs the task path)");
	escape_open(NOBODY, allow, "parent", "run --broker=off --allow-ptrace (companion)");
}

/* io_uring never puts a ring fd in a fixed-file table: REGISTER_FILES,
 * REGISTER_FILES_UPDATE and IORING_OP_FILES_UPDATE refuse it (EBADF), and
 * opening /proc/self/fd/RING fails (ENXIO), also as a direct descriptor.
 * MSG_RING's send-fd and FIXED_FD_INSTALL move files out of a fixed table
 * only, so neither can carry a ring. */
Test(live_escape, ring_fd_refused_in_fixed_tables)
{
	struct io_uring a, b;
	struct io_uring_sqe *s;
	struct io_uring_cqe *c;
	char path[64];
	int fds[1], rc;

	LIVE_REQUIRE(LIVE_RING);
	cr_assert_eq(io_uring_queue_init(8, &a, 0), 0);
	cr_assert_eq(io_uring_queue_init(8, &b, 0), 0);
	fds[0] = b.ring_fd;
	rc = io_uring_register_files(&a, fds, 1);
	cr_assert_eq(rc, -EBADF, "REGISTER_FILES with a ring fd: %d", rc);
	{
		int empty[2] = { -1, -1 }; /* sparse slots, 5.5+ */

		cr_assert_eq(io_uring_register_files(&a, empty, 2), 0);
	}
	rc = io_uring_register_files_update(&a, 0, fds, 1);
	cr_assert_eq(rc, -EBADF, "REGISTER_FILES_UPDATE with a ring fd: %d", rc);
	s = io_uring_get_sqe(&a);
	io_uring_prep_files_update(s, fds, 1, 1);
	cr_assert_eq(io_uring_submit_and_wait(&a, 1), 1);
	cr_assert_eq(io_uring_wait_cqe(&a, &c), 0);
	cr_assert_eq(c->res, -EBADF, "IORING_OP_FILES_UPDATE with a ring fd: %d", c->res);
	io_uring_cqe_seen(&a, c);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", b.ring_fd);
	s = io_uring_get_sqe(&a);
	io_uring_prep_openat_direct(s, AT_FDCWD, path, O_RDWR, 0, 1);
	cr_assert_eq(io_uring_submit_and_wait(&a, 1), 1);
	cr_assert_eq(io_uring_wait_cqe(&a, &c), 0);
	cr_assert_lt(c->res, 0, "OPENAT of /proc/self/fd/RING (direct) gave %d", c->res);
	live_log("ring fd in a fixed table: REGISTER_FILES, FILES_UPDATE and OP_FILES_UPDATE "
		 "-EBADF; OPENAT(direct) of /proc/self/fd/RING %d (%s)",
		 c->res, strerror(-c->res));
	io_uring_cqe_seen(&a, c);
	io_uring_queue_exit(&a);
	io_uring_queue_exit(&b);
}

/* escape-try TARGET STEPS as `uid`, unconfined; its stdout. */
static char *try_as(uid_t uid, pid_t target, const char *const *steps)
{
	char prog[4096], t[16];
	char *argv[16];
	int o = memfd_create("out", 0), n = 0, st;
	pid_t pid;

	live_prog_path(prog, sizeof(prog), "tests/escape-try");
	snprintf(t, sizeof(t), "%d", (int)target);
	argv[n++] = prog;
	argv[n++] = t;
	for (; *steps && n < 15; steps++)
		argv[n++] = (char *)*steps;
	argv[n] = NULL;
	cr_assert_geq(o, 0);
	fflush(NULL);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		if (setgroups(0, NULL) || setgid(uid) || setuid(uid))
			_exit(124);
		dup2(o, 1);
		execv(prog, argv);
		_exit(125);
	}
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "escape-try: status %d", st);
	{
		char *s = live_slurp(o);

		close(o);
		return s;
	}
}

/* `uid` executes argv (a dumpable process, as after any execve). */
static pid_t spawn_as(uid_t uid, char *const argv[])
{
	pid_t pid;

	fflush(NULL);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);

		if (setgroups(0, NULL) || setgid(uid) || setuid(uid))
			_exit(124);
		dup2(null, 0);
		dup2(null, 1);
		dup2(null, 2);
		execv(argv[0], argv);
		_exit(125);
	}
	return pid;
}

/* The agent makes itself non-dumpable: a process of its uid (a
 * container's, in the same user namespace) can neither ptrace it, nor
 * take its fds, nor read or write its memory; the same process can do all
 * of that to a dumpable process of that uid (the control). */
Test(live_escape, agent_is_not_dumpable)
{
	static const char *const steps[] = { "attach", "getfd", "vm_readv", "mem", NULL };
	char tool[4096], dir[64] = "/tmp/iour-escape-agent-XXXXXX", sock[128];
	char *agent_argv[] = { tool, "agent", "--socket", sock, NULL };
	char *out;
	pid_t agent, sl;
	int i;

	if (yama_scope() >= 2)
		cr_skip_test("skipped: Yama ptrace_scope %d: the control cannot attach",
			     yama_scope());
	live_prog_path(tool, sizeof(tool), "tools/iour-restrict");
	cr_assert_not_null(mkdtemp(dir));
	cr_assert_eq(chown(dir, NOBODY, NOBODY), 0);
	snprintf(sock, sizeof(sock), "%s/agent.sock", dir);
	agent = spawn_as(NOBODY, agent_argv);
	for (i = 0; i < 200 && access(sock, F_OK); i++)
		usleep(10000);
	cr_assert_eq(access(sock, F_OK), 0, "the agent did not create its socket");
	out = try_as(NOBODY, agent, steps);
	kill(agent, SIGTERM);
	waitpid(agent, NULL, 0);
	unlink(sock);
	rmdir(dir);
	cr_assert(strstr(out, "attach: EPERM\ngetfd0: EPERM\nvm_readv: EPERM\nmem: EACCES\n"),
		  "the agent: %s", out);
	free(out);
	/* The control: a process of the same uid, dumpable as after an
	 * ordinary exec, that waits (no /bin/sleep in the guests). */
	fflush(NULL);
	sl = fork();
	cr_assert_geq(sl, 0);
	if (sl == 0) {
		if (setgroups(0, NULL) || setgid(NOBODY) || setuid(NOBODY))
			_exit(124);
		prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
		for (;;)
			pause();
	}
	usleep(50000);
	out = try_as(NOBODY, sl, steps);
	kill(sl, SIGKILL);
	waitpid(sl, NULL, 0);
	if (yama_scope() == 1) {
		live_log("agent not dumpable: attach, pidfd_getfd, process_vm_readv, /proc/PID/mem "
			 "denied; control not a descendant under Yama 1: %s",
			 out);
		free(out);
		return;
	}
	cr_assert(strstr(out, "attach: ok\ngetfd0: ok\nvm_readv: EFAULT\nmem: ok\n"),
		  "the control (a dumpable process of the same uid): %s", out);
	live_log("agent not dumpable: attach, pidfd_getfd, process_vm_readv, /proc/PID/mem "
		 "denied to its uid; all four work on a dumpable process of that uid");
	free(out);
}

/* explain's ring-acquire row describes the mechanism run uses here (its
 * default) and says closed exactly when run's line says other processes'
 * rings are closed; run_nobody_cannot_take_a_ring shows that line true. */
Test(live_escape, explain_ring_acquire_agrees_with_run)
{
	char tool[4096], pol[64] = "/tmp/iour-escape-XXXXXX", cmd[4400], line[1024];
	char *out, *err;
	const char *const steps[] = { "mem", NULL };
	bool says_closed = false, found = false;
	FILE *p;
	int pf, rc;

	LIVE_REQUIRE(LIVE_RING);
	live_prog_path(tool, sizeof(tool), "tools/iour-restrict");
	pf = mkstemp(pol);
	cr_assert_geq(pf, 0);
	cr_assert_eq(write(pf, nop_only, strlen(nop_only)), (ssize_t)strlen(nop_only));
	close(pf);
	snprintf(cmd, sizeof(cmd), "%s explain %s", tool, pol);
	p = popen(cmd, "r");
	cr_assert_not_null(p);
	while (fgets(line, sizeof(line), p)) {
		if (strncmp(line, "ring-acquire ", 13))
			continue;
		found = true;
		says_closed = strstr(line, " closed ") && !strstr(line, "open: ");
	}
	cr_assert_eq(pclose(p), 0);
	unlink(pol);
	cr_assert(found, "explain printed no ring-acquire row");
	rc = escape_run(NOBODY, NULL, "parent", steps, &out, &err);
	cr_assert_eq(rc, 0, "%s", err);
	cr_assert_eq(says_closed, !report_says_mem_open(err),
		     "explain says ring-acquire is %s, run says: %s",
		     says_closed ? "closed" : "open", err);
	live_log("explain: ring-acquire %s; run agrees", says_closed ? "closed" : "open");
	free(out);
	free(err);
}
