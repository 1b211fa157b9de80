/* SPDX-License-Identifier: MIT */
/*
 * Live, the ring broker (include/iouring_restrict/broker.h) on the real
 * kernel: unmodified programs get rings restricted by a policy.
 *
 * - through the API (any kernel with per-ring restrictions, 5.10+): a
 *   child installs the broker's filter and executes broker-try
 *   (tests/progs/broker_try.c, raw system calls only), this process serves
 *   it: counters and events, a caller killed before the answer, the
 *   broker gone (the next io_uring_setup fails with ENOSYS), bad input;
 *   callers whose params lie in a FUSE page that never arrives
 *   (tests/common/fuse_stall.h): they do not stall the broker or another
 *   broker of the same loop, get EFAULT at the deadline, and many of them
 *   at once are bounded (max_workers, process_workers); the ring quota
 *   (max_rings) counts the rings alive;
 * - through `iour-restrict run`, which is a broker on kernels without task
 *   restrictions (before 7.0): every setup flag against what the kernel
 *   itself answers unconfined, requests allowed and denied, the program
 *   cannot restrict or enable its ring, fork, threads and exec, a liburing
 *   program (uring-try), fio, inherited rings, and run's broker killed;
 *   under systemd's NOTIFY_SOCKET the command becomes the main PID before
 *   it runs (any kernel: on 7.0+ run is the command itself).
 *
 * The programs are found next to the examples' directory as in
 * test_live_cli.c (build tree, or /progs and /tools in the guests:
 * scripts/guest-payloads/30-cli.sh).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fuse_stall.h"
#include "live.h"
#include "scm.h"
#include "base/sys.h" /* the syscall seam: one test injects timing */

/* ---- helpers ------------------------------------------------------------- */

/* A policy allowing READ only (and the register opcodes the default
 * allows): NOP, OPENAT, ... get -EACCES from a restricted ring. */
static const char read_only[] =
	"{ \"defaultAction\": \"deny\",\n"
	"  \"entries\": [ { \"names\": [\"read\"], \"action\": \"allow\" } ] }\n";

/* iour-restrict run - [opts] -- broker-try STEPS (NULL-terminated). */
static int run_try(const char *policy, const char *opt, const char *const *steps, char **out,
		   char **err)
{
	char tool[4096], prog[4096];
	char *argv[64];
	int n = 0;

	live_prog_path(tool, sizeof(tool), "tools/iour-restrict");
	live_prog_path(prog, sizeof(prog), "tests/broker-try");
	argv[n++] = tool;
	argv[n++] = "run";
	argv[n++] = "-";
	if (opt)
		argv[n++] = (char *)opt;
	argv[n++] = "--";
	argv[n++] = prog;
	for (; *steps && n < 62; steps++)
		argv[n++] = (char *)*steps;
	argv[n] = NULL;
	return live_run_argv(argv, policy, out, err);
}

/* broker-try STEPS unconfined: what the kernel itself answers. */
static int try_direct(const char *const *steps, char **out)
{
	char prog[4096], *err;
	char *argv[64];
	int n = 0, rc;

	live_prog_path(prog, sizeof(prog), "tests/broker-try");
	argv[n++] = prog;
	for (; *steps && n < 62; steps++)
		argv[n++] = (char *)*steps;
	argv[n] = NULL;
	rc = live_run_argv(argv, NULL, out, &err);
	free(err);
	return rc;
}

/* run's broker is used on kernels without task restrictions only. */
static void need_run_broker(void)
{
	LIVE_REQUIRE(LIVE_RING);
	if (!live_missing(LIVE_TASK))
		cr_skip_test("skipped: this kernel has task restrictions, which run uses instead "
			     "of the broker (test_live_cli.c tests that)");
}

static struct iour_plan *read_only_plan(void)
{
	struct iour_policy *pol = NULL;
	struct iour_plan *plan = NULL;
	struct iour_load_error le = { .sz = sizeof(le) };
	IOUR_OPTS(iour_policy_load_opts, lo);

	cr_assert_eq(iour_policy__load_json(read_only, strlen(read_only), &lo, &pol, &le), 0);
	cr_assert_eq(iour_policy__set_attr(pol, IOUR_POLICY_ATTR_TARGET, IOUR_POLICY_TARGET_RING),
		     0);
	cr_assert_eq(iour_policy__plan(pol, NULL, &plan), 0);
	iour_policy__free(pol);
	return plan;
}

/* A confined child: installs the broker's filter, passes the listener,
 * then executes broker-try STEPS with stdin `in_fd` and stdout `out_fd`. */
static pid_t confined_child(const char *const *steps, int in_fd, int out_fd, int *listener)
{
	char prog[4096];
	char *argv[64];
	int sv[2], n = 0;
	pid_t pid;

	live_prog_path(prog, sizeof(prog), "tests/broker-try");
	argv[n++] = prog;
	for (; *steps && n < 62; steps++)
		argv[n++] = (char *)*steps;
	argv[n] = NULL;
	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	fflush(NULL);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		int lfd = -1;

		close(sv[0]);
		if (iour_broker__install(NULL, &lfd) || send_fds(sv[1], &lfd, 1))
			_exit(120);
		close(lfd);
		dup2(in_fd, 0);
		dup2(out_fd, 1);
		execv(prog, argv);
		_exit(121);
	}
	close(sv[1]);
	*listener = recv_one_fd(sv[0]);
	close(sv[0]);
	cr_assert_geq(*listener, 0, "the child did not pass a listener");
	return pid;
}

struct events {
	int n;
	int result[8];
	uint32_t flags[8];
	char what[8][256];
};

static void on_ring(void *arg, const struct iour_broker_event *ev)
{
	struct events *e = arg;

	if (e->n < 8) {
		e->result[e->n] = ev->result;
		e->flags[e->n] = ev->setup_flags;
		snprintf(e->what[e->n], sizeof(e->what[0]), "%s", ev->what);
		e->n++;
	}
}

/* Serve until `pid` exits and the broker has reaped its workers (counters
 * and events come when a worker is reaped, which can be after its caller
 * saw the answer); the wait status. */
static int serve_until_exit(struct iour_broker *b, pid_t pid)
{
	int st = 0, r = 0;
	bool exited = false;

	while (r != -ENOENT) {
		struct pollfd p = { .fd = iour_broker__fd(b), .events = POLLIN };

		if (!exited && waitpid(pid, &st, WNOHANG) == pid)
			exited = true;
		if (poll(&p, 1, 50) == 1 && (p.revents & POLLIN)) {
			r = iour_broker__serve(b);
			cr_assert(r == 0 || r == -ENOENT, "serve: %d", r);
		}
	}
	if (!exited)
		cr_assert_eq(waitpid(pid, &st, 0), pid);
	return st;
}

/* ---- the API --------------------------------------------------------------- */

Test(live_broker, api_serves_counts_and_reports)
{
	static const char *const steps[] = { "setup:0", "nop", "read", "setup:sqpoll", NULL };
	struct events ev = { 0 };
	IOUR_OPTS(iour_broker_opts, bo, .on_ring = on_ring, .arg = &ev);
	struct iour_broker_counters c = { .sz = sizeof(c) };
	struct iour_plan *plan;
	struct iour_broker *b = NULL;
	int out = memfd_create("out", 0), lfd, st;
	bool sq;
	char *text;
	pid_t pid;

	LIVE_REQUIRE(LIVE_RING);
	plan = read_only_plan();
	pid = confined_child(steps, 0, out, &lfd);
	cr_assert_eq(iour_broker__new(plan, lfd, &bo, &b), 0);
	/* the fd to poll is the broker's own, not the listener */
	cr_assert(iour_broker__fd(b) >= 0 && iour_broker__fd(b) != lfd);
	st = serve_until_exit(b, pid);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %#x", st);
	text = live_slurp(out);
	cr_assert_str_eq(text, "setup: ok\nnop: EACCES\nread: ok\nsetup: EPERM\n");
	cr_assert_eq(iour_broker__counters(b, &c), 0);
	cr_assert_eq(c.notifications, 2);
	cr_assert_eq(c.served, 1);
	cr_assert_eq(c.refused, 1);
	cr_assert_eq(c.refused_flags, 1);
	cr_assert_eq(c.gone, 0);
	cr_assert_eq(ev.n, 2);
	/* events come as workers are reaped, not always in call order */
	sq = ev.flags[0] == 2 /* IORING_SETUP_SQPOLL */;
	cr_assert_geq(ev.result[sq ? 1 : 0], 0, "%s", ev.what[sq ? 1 : 0]);
	cr_assert_eq(ev.flags[sq ? 1 : 0], 0);
	cr_assert_eq(ev.result[sq ? 0 : 1], -EPERM);
	cr_assert_eq(ev.flags[sq ? 0 : 1], 2 /* IORING_SETUP_SQPOLL */);
	cr_assert(strstr(ev.what[sq ? 0 : 1], "SQPOLL"), "%s", ev.what[sq ? 0 : 1]);
	/* Now nothing is confined: serve says so. */
	cr_assert_eq(iour_broker__serve(b), -ENOENT);
	live_log("broker API: ring served (%s); SQPOLL refused (%s)", ev.what[sq ? 1 : 0],
		 ev.what[sq ? 0 : 1]);
	iour_broker__free(b);
	iour_plan__free(plan);
	free(text);
	close(out);
}

Test(live_broker, api_broker_gone_fails_closed)
{
	static const char *const steps[] = { "setup:0", "nop", "wait", "setup:0", "nop", NULL };
	struct iour_broker_counters c = { .sz = sizeof(c) };
	struct iour_plan *plan;
	struct iour_broker *b = NULL;
	int out = memfd_create("out", 0), in[2], lfd, st;
	char *text;
	pid_t pid;

	LIVE_REQUIRE(LIVE_RING);
	plan = read_only_plan();
	cr_assert_eq(pipe(in), 0);
	pid = confined_child(steps, in[0], out, &lfd);
	close(in[0]);
	cr_assert_eq(iour_broker__new(plan, lfd, NULL, &b), 0);
	/* Serve the first ring, then go away. */
	while (iour_broker__counters(b, &c) == 0 && !c.served)
		cr_assert_eq(iour_broker__serve(b), 0);
	iour_broker__free(b);
	cr_assert_eq(write(in[1], "x", 1), 1);
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %#x", st);
	text = live_slurp(out);
	cr_assert_str_eq(text, "setup: ok\nnop: EACCES\nsetup: ENOSYS\nnop: no ring\n");
	live_log("broker gone: the next io_uring_setup got ENOSYS");
	iour_plan__free(plan);
	free(text);
	close(in[1]);
	close(out);
}

/* Wait until `pid` (not our child) is a zombie or gone: out of its call. */
static void wait_dead(pid_t pid)
{
	for (int i = 0; i < 500; i++) {
		char path[64], st[256] = "";
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%d/stat", pid);
		f = fopen(path, "r");
		if (!f)
			return;
		if (!fgets(st, sizeof(st), f))
			st[0] = '\0';
		fclose(f);
		if (strstr(st, ") Z ") || strstr(st, ") X "))
			return;
		usleep(10000);
	}
	cr_assert_fail("process %d did not die", pid);
}

/* The syscall seam's io_uring_setup, for the test below: the caller is
 * killed just before the broker creates its ring, i.e. after the broker
 * took and read the notification and before it answers.  Only the timing
 * is injected; every call still goes to the real kernel. */
static pid_t victim;
static long setup_killing(void *ctx, uint32_t entries, void *params)
{
	if (victim > 0) {
		kill(victim, SIGKILL);
		wait_dead(victim);
		victim = 0;
	}
	return iour__sys_real()->io_uring_setup(ctx, entries, params);
}

/* The confined child: forks two grandchildren that call io_uring_setup
 * (both are killed by the test), reports their pids, then on "g" creates a
 * ring itself and reports whether it got one. */
static pid_t killed_callers_child(int *lfd, int rep[2], int go[2], pid_t gc[2])
{
	int sv[2];
	pid_t pid;

	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	fflush(NULL);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		struct io_uring_params p;
		pid_t g[2];
		char x;
		long fd;

		close(sv[0]);
		if (iour_broker__install(NULL, lfd) || send_fds(sv[1], lfd, 1))
			_exit(120);
		close(*lfd);
		for (int i = 0; i < 2; i++) {
			if (read(go[0], &x, 1) != 1)
				_exit(122);
			g[i] = fork();
			if (g[i] == 0) {
				memset(&p, 0, sizeof(p));
				syscall(__NR_io_uring_setup, 4, &p); /* waits; killed */
				_exit(0);
			}
			if (write(rep[1], &g[i], sizeof(g[i])) != sizeof(g[i]))
				_exit(122);
		}
		if (read(go[0], &x, 1) != 1)
			_exit(122);
		memset(&p, 0, sizeof(p));
		fd = syscall(__NR_io_uring_setup, 4, &p);
		dprintf(rep[1], "%s", fd >= 0 ? "served" : "refused");
		_exit(0);
	}
	close(sv[1]);
	*lfd = recv_one_fd(sv[0]);
	close(sv[0]);
	cr_assert_geq(*lfd, 0);
	(void)gc;
	return pid;
}

Test(live_broker, api_callers_killed_before_the_answer)
{
	struct iour_broker_counters c = { .sz = sizeof(c) };
	struct iour_sys_ops ops = *iour__sys_real();
	struct iour_plan *plan;
	struct iour_broker *b = NULL;
	int go[2], rep[2], lfd = -1, st, rings_before;
	pid_t pid, gc[2] = { 0, 0 };
	char line[64] = "";

	LIVE_REQUIRE(LIVE_RING);
	plan = read_only_plan();
	rings_before = iour_ring_fds(NULL, 0);
	cr_assert_eq(pipe(go), 0);
	cr_assert_eq(pipe(rep), 0);
	pid = killed_callers_child(&lfd, rep, go, gc);
	cr_assert_eq(iour_broker__new(plan, lfd, NULL, &b), 0);

	/* 1. Killed while its notification waited, before the broker took it:
	 *    the kernel withdraws it; nothing reaches the broker for it. */
	cr_assert_eq(write(go[1], "g", 1), 1);
	cr_assert_eq(read(rep[0], &gc[0], sizeof(gc[0])), (ssize_t)sizeof(gc[0]));
	{
		struct pollfd p = { .fd = lfd, .events = POLLIN };

		cr_assert_eq(poll(&p, 1, 10000), 1, "no notification from the first caller");
	}
	cr_assert_eq(kill(gc[0], SIGKILL), 0);
	wait_dead(gc[0]);

	/* 2. Killed after the broker read its params, before the answer. */
	cr_assert_eq(write(go[1], "g", 1), 1);
	cr_assert_eq(read(rep[0], &gc[1], sizeof(gc[1])), (ssize_t)sizeof(gc[1]));
	{
		struct pollfd p = { .fd = lfd, .events = POLLIN };

		cr_assert_eq(poll(&p, 1, 10000), 1, "no notification from the second caller");
	}
	victim = gc[1];
	ops.io_uring_setup = setup_killing;
	iour__sys_set(&ops);
	/* the worker forked for the call inherits the injected seam; its
	 * outcome is counted when it is reaped */
	do
		cr_assert_eq(iour_broker__serve(b), 0);
	while (iour_broker__counters(b, &c) == 0 && !c.gone && !c.served && !c.refused);
	iour__sys_set(NULL);
	cr_assert_eq(iour_broker__counters(b, &c), 0);
	cr_assert_eq(c.served, 0, "a ring was installed in a dead caller");
	cr_assert_eq(c.gone, 1, "gone %llu refused %llu", (unsigned long long)c.gone,
		     (unsigned long long)c.refused);
	/* The broker's own copy of the ring was closed. */
	cr_assert_eq(iour_ring_fds(NULL, 0), rings_before, "the broker leaked a ring fd");

	/* 3. The broker still serves the living. */
	cr_assert_eq(write(go[1], "g", 1), 1);
	do {
		/* the caller may exit before its worker is reaped: the
		 * serve that counts it can also find everyone gone */
		st = iour_broker__serve(b);
		cr_assert(st == 0 || st == -ENOENT, "serve: %d", st);
	} while (iour_broker__counters(b, &c) == 0 && !c.served && st == 0);
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %#x", st);
	cr_assert_gt(read(rep[0], line, sizeof(line) - 1), 0);
	cr_assert_str_eq(line, "served");
	cr_assert_eq(iour_ring_fds(NULL, 0), rings_before, "the broker leaked a ring fd");
	live_log("callers killed before the answer (waiting; and while served): nothing "
		 "installed, no fd leaked (gone %llu); the next caller served",
		 (unsigned long long)c.gone);
	iour_broker__free(b);
	iour_plan__free(plan);
	close(go[0]);
	close(go[1]);
	close(rep[0]);
	close(rep[1]);
}

/* ---- callers that stall their broker (doc/security.md 3a) ---------------- */

static long long ms_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A confined child's output, read without waiting. */
struct out {
	int fd;
	char text[4096];
	size_t len;
};

static void out_open(struct out *o, int *wr)
{
	int p[2];

	cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
	cr_assert_eq(fcntl(p[0], F_SETFL, O_NONBLOCK), 0);
	o->fd = p[0];
	o->len = 0;
	o->text[0] = '\0';
	*wr = p[1];
}

static const char *out_text(struct out *o)
{
	ssize_t n;

	while ((n = read(o->fd, o->text + o->len, sizeof(o->text) - 1 - o->len)) > 0) {
		o->len += (size_t)n;
		o->text[o->len] = '\0';
	}
	return o->text;
}

/* One round of a loop that serves several brokers, as the OCI agent's
 * does (IOUR_BROKER_NONBLOCK): at most 10 ms. */
static void serve_round(struct iour_broker *const *b, int n)
{
	struct pollfd p[4];

	for (int i = 0; i < n; i++) {
		p[i].fd = b[i] ? iour_broker__fd(b[i]) : -1;
		p[i].events = POLLIN;
		p[i].revents = 0;
	}
	if (poll(p, (nfds_t)n, 10) <= 0)
		return;
	for (int i = 0; i < n; i++) {
		if (p[i].revents & POLLIN) {
			int r = iour_broker__serve(b[i]);

			cr_assert(r == 0 || r == -EAGAIN || r == -ENOENT, "serve: %d", r);
		}
	}
}

static struct iour_broker_counters counters_of(struct iour_broker *b)
{
	struct iour_broker_counters c = { .sz = sizeof(c) };

	cr_assert_eq(iour_broker__counters(b, &c), 0);
	return c;
}

/* Serve until every broker says -ENOENT (their children have exited). */
static void serve_to_end(struct iour_broker *const *b, int n)
{
	long long end = ms_now() + 20000;
	int left = n;
	bool done[4] = { false, false, false, false };

	while (left && ms_now() < end) {
		serve_round(b, n);
		for (int i = 0; i < n; i++) {
			if (!done[i] && iour_broker__serve(b[i]) == -ENOENT) {
				done[i] = true;
				left--;
			}
		}
	}
	cr_assert_eq(left, 0, "a broker still has work 20 s after its callers exited");
}

static void fuse_or_skip(struct fuse_stall *fs)
{
	char why[256];

	if (fuse_stall_start(fs, why, sizeof(why)))
		cr_skip_test("skipped: %s", why);
}

/* Does process `w` hold this process's file `fd` (kcmp)? */
static bool holds(pid_t w, int fd)
{
	char path[64];
	bool found = false;
	DIR *fds;
	struct dirent *f;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)w);
	fds = opendir(path);
	cr_assert_not_null(fds, "%s", path);
	while (!found && (f = readdir(fds)))
		if (f->d_name[0] != '.')
			found = syscall(SYS_kcmp, getpid(), w, 0 /* KCMP_FILE */, fd,
					atoi(f->d_name)) == 0;
	closedir(fds);
	return found;
}

/*
 * The broker's workers, as the program could see them (doc/security.md
 * 3a, "No caller stalls the broker"): every child of this process but
 * the `nnot` in `not` is a worker (busy or spare) of one of two brokers,
 * whose listeners are `lfd[2]` and epoll fds `ep[2]`.  Each blocks every
 * signal a handler could catch, holds its own broker's listener and
 * neither the other's nor any epoll, and no more than its listener, its
 * two pipes, the quota set and its caller's /proc/PID, mem and maps
 * besides 0-2.  Returns how many it checked.
 */
static int check_workers(const pid_t *not, int nnot, const int lfd[2], const int ep[2])
{
	char path[320], line[256];
	int checked = 0;
	DIR *tasks = opendir("/proc/self/task");
	struct dirent *t;

	cr_assert_not_null(tasks);
	while ((t = readdir(tasks))) {
		FILE *cf;
		long w;

		if (t->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/children", t->d_name);
		cf = fopen(path, "re");
		if (!cf)
			continue;
		while (fscanf(cf, "%ld", &w) == 1) {
			unsigned long long blk = 0;
			bool skip = false, a, b;
			DIR *fds;
			struct dirent *f;
			FILE *sf;
			int nfd = 0;

			for (int i = 0; i < nnot; i++)
				skip = skip || w == not[i];
			snprintf(path, sizeof(path), "/proc/%ld/status", w);
			sf = skip ? NULL : fopen(path, "re");
			if (!sf)
				continue; /* not a worker, or exited meanwhile */
			while (fgets(line, sizeof(line), sf))
				if (!strncmp(line, "SigBlk:", 7))
					blk = strtoull(line + 7, NULL, 16);
			fclose(sf);
			/* signals 1-31 but SIGKILL and SIGSTOP */
			cr_assert_eq(blk & 0x7ffbfeffULL, 0x7ffbfeffULL,
				     "worker %ld does not block every signal: SigBlk %llx", w, blk);
			/* a spare forked a moment ago closes what it inherited
			 * before it waits for a call: give it that moment */
			for (int k = 0; k < 40; k++) {
				a = holds((pid_t)w, lfd[0]);
				b = holds((pid_t)w, lfd[1]);
				if (a != b)
					break;
				usleep(25000);
			}
			cr_assert(a != b, "worker %ld holds %s listener", w, a ? "both brokers'" : "no");
			cr_assert(!holds((pid_t)w, ep[0]) && !holds((pid_t)w, ep[1]),
				  "worker %ld holds a broker's epoll fd", w);
			snprintf(path, sizeof(path), "/proc/%ld/fd", w);
			fds = opendir(path);
			cr_assert_not_null(fds, "%s", path);
			while ((f = readdir(fds)))
				nfd += f->d_name[0] != '.';
			closedir(fds);
			/* 0-2, the listener, its call and report pipes, the quota
			 * set, and a busy one its caller's /proc/PID, mem, maps */
			cr_assert_leq(nfd, 9, "worker %ld holds %d fds", w, nfd);
			checked++;
		}
		fclose(cf);
	}
	closedir(tasks);
	return checked;
}

/*
 * A caller whose io_uring_params lie in a FUSE page that never arrives.
 * Reading them waits forever (the positive control: a plain pread of its
 * /proc/PID/mem does not return); the broker's worker waits in its place:
 * - a second broker served by the same loop (a second container of the
 *   agent) serves its caller at once meanwhile;
 * - the stalled call gets EFAULT at the deadline, counted and reported;
 * - the same caller's next io_uring_setup is served.
 */
Test(live_broker, api_fuse_stall_does_not_stall_the_loop)
{
	struct fuse_stall fs;
	struct events ev_a = { 0 }, ev_b = { 0 };
	IOUR_OPTS(iour_broker_opts, oa, .flags = IOUR_BROKER_NONBLOCK, .on_ring = on_ring,
		  .arg = &ev_a, .deadline_ms = 1500);
	IOUR_OPTS(iour_broker_opts, ob, .flags = IOUR_BROKER_NONBLOCK, .on_ring = on_ring,
		  .arg = &ev_b);
	struct iour_broker *b[2] = { NULL, NULL };
	struct iour_plan *plan;
	struct out out_a, out_b;
	char step_a[160], *at;
	const char *steps_a[] = { step_a, "setup:0", "nop", NULL };
	static const char *const steps_b[] = { "wait", "setup:0", "nop", NULL };
	int wa, wb, in_b[2], lfd_a, lfd_b, ctl[2], st;
	long long t_taken, t0, t_b, t_a;
	unsigned long long addr;
	pid_t pa, pb, reader;

	LIVE_REQUIRE(LIVE_RING);
	fuse_or_skip(&fs);
	plan = read_only_plan();
	snprintf(step_a, sizeof(step_a), "setup-file:%s", fs.file);
	out_open(&out_a, &wa);
	out_open(&out_b, &wb);
	cr_assert_eq(pipe(in_b), 0);
	pa = confined_child(steps_a, 0, wa, &lfd_a);
	pb = confined_child(steps_b, in_b[0], wb, &lfd_b);
	close(wa);
	close(wb);
	close(in_b[0]);
	cr_assert_eq(iour_broker__new(plan, lfd_a, &oa, &b[0]), 0);
	cr_assert_eq(iour_broker__new(plan, lfd_b, &ob, &b[1]), 0);

	/* A's call is taken; its worker reads the params and waits */
	t0 = ms_now();
	while (!(counters_of(b[0]).notifications == 1 && strstr(out_text(&out_a), "params-at: "))) {
		serve_round(b, 2);
		cr_assert_lt(ms_now() - t0, 10000, "A's call never came: %s", out_a.text);
	}
	t_taken = ms_now();
	/* (e) A's worker, stalled, and the spares hold nothing of the broker
	 * process but what they need: not B's listener, not B's epoll */
	{
		const int lfds[2] = { lfd_a, lfd_b };
		const int eps[2] = { iour_broker__fd(b[0]), iour_broker__fd(b[1]) };
		const pid_t not_workers[] = { pa, pb, fs.server };
		int n = check_workers(not_workers, 3, lfds, eps);

		cr_assert_geq(n, 1, "no worker found while A's call is served");
		live_log("FUSE stall: %d worker(s): every signal blocked, each holds its own "
			 "broker's listener only, no epoll",
			 n);
	}
	at = strstr(out_a.text, "params-at: ");
	cr_assert_eq(sscanf(at, "params-at: %llx", &addr), 1);

	/* (d) the attack is real: a plain reader of those params waits */
	cr_assert_eq(pipe(ctl), 0);
	reader = fork();
	cr_assert_geq(reader, 0);
	if (reader == 0) {
		char path[64], buf[120];
		int mem;
		ssize_t n;

		snprintf(path, sizeof(path), "/proc/%d/mem", pa);
		mem = open(path, O_RDONLY);
		n = mem < 0 ? -1 : pread(mem, buf, sizeof(buf), (off_t)addr);
		(void)!write(ctl[1], &n, sizeof(n));
		_exit(0);
	}
	close(ctl[1]);
	{
		struct pollfd p = { .fd = ctl[0], .events = POLLIN };

		while (ms_now() - t_taken < 500) {
			serve_round(b, 2);
			cr_assert_eq(
				poll(&p, 1, 0), 0,
				"a plain read of the FUSE page returned: the stall is not real");
		}
	}

	/* (a) meanwhile B, a second broker of the same loop, is served */
	cr_assert_eq(write(in_b[1], "x", 1), 1);
	t0 = ms_now();
	while (!strstr(out_text(&out_b), "nop: ")) {
		serve_round(b, 2);
		cr_assert_lt(ms_now() - t0, 10000, "B was not served: %s", out_b.text);
	}
	t_b = ms_now() - t0;
	cr_assert_str_eq(out_b.text, "setup: ok\nnop: EACCES\n");
	cr_assert_eq(counters_of(b[0]).refused_deadline, 0,
		     "A was answered before B was served: nothing was shown");
	cr_assert_lt(t_b, 1000, "B waited %lld ms while A stalled", t_b);

	/* (b) A gets EFAULT at the deadline */
	while (!strstr(out_text(&out_a), "setup: EFAULT")) {
		serve_round(b, 2);
		cr_assert_lt(ms_now() - t_taken, 10000, "A was never answered: %s", out_a.text);
	}
	t_a = ms_now() - t_taken;
	cr_assert_geq(t_a, 1400, "A answered after %lld ms, before its deadline", t_a);
	cr_assert_lt(t_a, 4000, "A answered after %lld ms", t_a);
	cr_assert_eq(counters_of(b[0]).refused_deadline, 1);
	cr_assert_eq(counters_of(b[0]).refused, 1);
	cr_assert_eq(ev_a.n, 1);
	cr_assert_eq(ev_a.result[0], -EFAULT);
	cr_assert(strstr(ev_a.what[0], "could not be read in time"), "%s", ev_a.what[0]);

	/* (c) A's next io_uring_setup is served (A itself then waits in its
	 * own mmap until the FUSE read ends: the stuck reads hold its memory
	 * map's lock, which only A pays for) */
	t0 = ms_now();
	while (ev_a.n < 2) {
		serve_round(b, 2);
		cr_assert_lt(ms_now() - t0, 10000, "A's next call was not served");
	}
	cr_assert_geq(ev_a.result[1], 0, "%s", ev_a.what[1]);
	cr_assert(strstr(ev_a.what[1], "ring fd"), "%s", ev_a.what[1]);

	/* the end: the FUSE server goes, every stuck read ends */
	fuse_stall_stop(&fs);
	kill(reader, SIGKILL);
	cr_assert_eq(waitpid(reader, NULL, 0), reader);
	cr_assert_eq(waitpid(pb, &st, 0), pb);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "B: status %#x", st);
	t0 = ms_now();
	while (waitpid(pa, &st, WNOHANG) != pa) {
		serve_round(b, 2);
		cr_assert_lt(ms_now() - t0, 10000, "A did not exit: %s", out_text(&out_a));
	}
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "A: status %#x", st);
	serve_to_end(b, 2);
	cr_assert(strstr(out_text(&out_a), "setup: EFAULT\nsetup: ok\nnop: EACCES\n"), "%s",
		  out_a.text);
	live_log("FUSE stall: B served in %lld ms while A stalled; A got EFAULT after %lld ms "
		 "(%s); A's next ring served",
		 t_b, t_a, ev_a.what[0]);
	iour_broker__free(b[0]);
	iour_broker__free(b[1]);
	iour_plan__free(plan);
	close(ctl[0]);
	close(in_b[1]);
}

/*
 * Many stalling calls cannot exhaust the brokers: at max_workers a broker
 * stops taking its listener's calls (its callers wait, killed workers the
 * kernel keeps waiting included); beyond process_workers a call gets
 * ENOMEM at once; another broker is served all along.
 */
Test(live_broker, api_stalling_callers_are_bounded)
{
	struct fuse_stall fs;
	IOUR_OPTS(iour_broker_opts, oa, .flags = IOUR_BROKER_NONBLOCK, .deadline_ms = 800,
		  .max_workers = 2);
	IOUR_OPTS(iour_broker_opts, ob, .flags = IOUR_BROKER_NONBLOCK, .process_workers = 2);
	IOUR_OPTS(iour_broker_opts, oc, .flags = IOUR_BROKER_NONBLOCK);
	struct iour_broker *b[3] = { NULL, NULL, NULL };
	struct iour_broker_counters ca;
	struct iour_plan *plan;
	struct out out_a, out_b, out_c;
	char step_a[160];
	const char *steps_a[] = { step_a, NULL };
	static const char *const steps_bc[] = { "wait", "setup:0", "nop", NULL };
	int wa, wb, wc, in_b[2], in_c[2], lfd[3], st;
	long long t0;
	bool stuck;
	pid_t pid[3];

	LIVE_REQUIRE(LIVE_RING);
	fuse_or_skip(&fs);
	plan = read_only_plan();
	snprintf(step_a, sizeof(step_a), "setup-files:3:%s", fs.file);
	out_open(&out_a, &wa);
	out_open(&out_b, &wb);
	out_open(&out_c, &wc);
	cr_assert_eq(pipe(in_b), 0);
	cr_assert_eq(pipe(in_c), 0);
	pid[0] = confined_child(steps_a, 0, wa, &lfd[0]);
	pid[1] = confined_child(steps_bc, in_b[0], wb, &lfd[1]);
	pid[2] = confined_child(steps_bc, in_c[0], wc, &lfd[2]);
	close(wa);
	close(wb);
	close(wc);
	close(in_b[0]);
	close(in_c[0]);
	cr_assert_eq(iour_broker__new(plan, lfd[0], &oa, &b[0]), 0);
	cr_assert_eq(iour_broker__new(plan, lfd[1], &ob, &b[1]), 0);
	cr_assert_eq(iour_broker__new(plan, lfd[2], &oc, &b[2]), 0);

	/* A's three threads call; two workers take two calls, the third waits */
	t0 = ms_now();
	while (counters_of(b[0]).notifications < 2) {
		serve_round(b, 3);
		cr_assert_lt(ms_now() - t0, 10000, "A's calls never came");
	}
	while (ms_now() - t0 < 300)
		serve_round(b, 3);
	ca = counters_of(b[0]);
	cr_assert_eq(ca.notifications, 2, "max_workers 2, yet %llu calls taken",
		     (unsigned long long)ca.notifications);
	cr_assert_geq(ca.deferred, 1);

	/* B's broker allows 2 working workers in the process: A has them */
	cr_assert_eq(write(in_b[1], "x", 1), 1);
	while (!strstr(out_text(&out_b), "nop: ")) {
		serve_round(b, 3);
		cr_assert_lt(ms_now() - t0, 10000, "B was not answered: %s", out_b.text);
	}
	cr_assert_str_eq(out_b.text, "setup: ENOMEM\nnop: no ring\n");
	cr_assert_eq(counters_of(b[1]).refused_busy, 1);
	cr_assert_eq(counters_of(b[0]).refused_deadline, 0, "B came after A's deadline");

	/* C, a broker with the default limits, is served */
	cr_assert_eq(write(in_c[1], "x", 1), 1);
	while (!strstr(out_text(&out_c), "nop: ")) {
		serve_round(b, 3);
		cr_assert_lt(ms_now() - t0, 10000, "C was not served: %s", out_c.text);
	}
	cr_assert_str_eq(out_c.text, "setup: ok\nnop: EACCES\n");

	/* A's two calls get EFAULT at the deadline.  Their workers, killed,
	 * may still wait in the kernel (a FUSE read through /proc/PID/mem
	 * ignores SIGKILL on 6.18 until the server answers or goes) and
	 * then still hold A's two slots, the third call untaken until they
	 * exit; or exit at once, and the third call is taken and stalls in
	 * turn */
	while (counters_of(b[0]).refused_deadline < 2) {
		serve_round(b, 3);
		cr_assert_lt(ms_now() - t0, 10000, "A's calls were not answered");
	}
	while (ms_now() - t0 < 1800)
		serve_round(b, 3);
	ca = counters_of(b[0]);
	cr_assert_geq(ca.refused_deadline, 2);
	stuck = ca.notifications == 2;

	/* the FUSE server goes: the killed workers exit, the third call is
	 * taken and refused (its params cannot be read) */
	fuse_stall_stop(&fs);
	while (waitpid(pid[0], &st, WNOHANG) != pid[0]) {
		serve_round(b, 3);
		cr_assert_lt(ms_now() - t0, 20000, "A did not exit: %s", out_text(&out_a));
	}
	cr_assert_eq(waitpid(pid[1], NULL, 0), pid[1]);
	cr_assert_eq(waitpid(pid[2], NULL, 0), pid[2]);
	serve_to_end(b, 3);
	ca = counters_of(b[0]);
	cr_assert_eq(ca.notifications, 3);
	cr_assert_eq(ca.refused, 3);
	live_log("stalling callers bounded: A's third call waited behind max_workers 2; B got "
		 "ENOMEM at process_workers 2; C served; the killed workers %s; A: %s",
		 stuck ? "waited in the kernel until the FUSE server went" : "exited at once",
		 out_text(&out_a));
	for (int i = 0; i < 3; i++)
		iour_broker__free(b[i]);
	iour_plan__free(plan);
	close(in_b[1]);
	close(in_c[1]);
}

/*
 * The ring quota (max_rings) counts the rings alive, not the calls: a
 * program holding 3 rings of a max_rings 3 broker gets ENOMEM for the
 * fourth; once it has closed them it gets 3 again.  Control: without a
 * quota the same program holds 8.
 */
static char *quota_run(uint32_t max_rings, struct events *ev, struct iour_broker_counters *c)
{
	static const char *const steps[] = { "rings:4:8", "close-rings", "rings:4:8", "close-rings",
					     NULL };
	IOUR_OPTS(iour_broker_opts, bo, .on_ring = on_ring, .arg = ev, .max_rings = max_rings);
	struct iour_plan *plan = read_only_plan();
	struct iour_broker *b = NULL;
	int out = memfd_create("out", 0), lfd, st;
	char *text;
	pid_t pid;

	pid = confined_child(steps, 0, out, &lfd);
	cr_assert_eq(iour_broker__new(plan, lfd, &bo, &b), 0);
	st = serve_until_exit(b, pid);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %#x", st);
	c->sz = sizeof(*c);
	cr_assert_eq(iour_broker__counters(b, c), 0);
	text = live_slurp(out);
	iour_broker__free(b);
	iour_plan__free(plan);
	close(out);
	return text;
}

Test(live_broker, api_ring_quota_counts_rings_alive)
{
	struct events ev = { 0 }, ev0 = { 0 };
	struct iour_broker_counters c, c0;
	char *text, *text0;
	int nrefused = 0, refused_at = 0;

	LIVE_REQUIRE(LIVE_RING);
	text = quota_run(3, &ev, &c);
	cr_assert_str_eq(text,
			 "rings: 3 ENOMEM\nclose-rings: 3\nrings: 3 ENOMEM\nclose-rings: 3\n");
	cr_assert_eq(c.served, 6);
	cr_assert_eq(c.refused_quota, 2);
	cr_assert_eq(c.refused, 2);
	cr_assert_eq(ev.n, 8);
	/* events come as workers are reaped, not always in call order */
	for (int i = 0; i < ev.n; i++) {
		if (ev.result[i] != -ENOMEM)
			continue;
		cr_assert(strstr(ev.what[i], "ring quota: 3 rings alive (max_rings 3) (ENOMEM)"),
			  "%s", ev.what[i]);
		refused_at = i;
		nrefused++;
	}
	cr_assert_eq(nrefused, 2, "%d events said ENOMEM", nrefused);
	/* the control: no quota, the same program */
	text0 = quota_run(0, &ev0, &c0);
	cr_assert_str_eq(text0, "rings: 8 none failed\nclose-rings: 8\n"
				"rings: 8 none failed\nclose-rings: 8\n");
	cr_assert_eq(c0.refused_quota, 0);
	live_log("ring quota: max_rings 3 held 3, then ENOMEM (%s); closed, 3 again; "
		 "without a quota 8 of 8",
		 ev.what[refused_at]);
	free(text);
	free(text0);
}

Test(live_broker, api_bad_input)
{
	struct iour_plan *plan;
	struct iour_broker *b = NULL;
	struct iour_broker_counters c = { .sz = 4 };
	struct {
		struct iour_broker_opts o;
		char extra[8];
	} big;
	IOUR_OPTS(iour_broker_opts, o);
	int p[2];

	LIVE_REQUIRE(LIVE_RING);
	plan = read_only_plan();
	cr_assert_eq(pipe(p), 0);
	cr_assert_eq(iour_broker__new(NULL, p[0], NULL, &b), -EINVAL);
	cr_assert_eq(iour_broker__new(plan, -1, NULL, &b), -EINVAL);
	cr_assert_eq(iour_broker__new(plan, p[0], NULL, NULL), -EINVAL);
	o.flags = 1U << 31;
	cr_assert_eq(iour_broker__new(plan, p[0], &o, &b), -EINVAL);
	cr_assert_eq(iour_broker__install(&o, &p[1]), -EINVAL);
	o.flags = 0;
	o.sz = 2;
	cr_assert_eq(iour_broker__new(plan, p[0], &o, &b), -EINVAL);
	memset(&big, 0, sizeof(big));
	big.o.sz = sizeof(big);
	big.extra[3] = 1;
	cr_assert_eq(iour_broker__new(plan, p[0], &big.o, &b), -E2BIG);
	cr_assert_eq(iour_broker__install(NULL, NULL), -EINVAL);
	cr_assert_null(b, "nothing may be handed out on failure");
	cr_assert_eq(iour_broker__fd(NULL), -EINVAL);
	cr_assert_eq(iour_broker__serve(NULL), -EINVAL);
	cr_assert_eq(iour_broker__counters(NULL, &c), -EINVAL);
	iour_broker__free(NULL);
	/* A good one, to check counters' sz. */
	cr_assert_eq(iour_broker__new(plan, p[0], NULL, &b), 0);
	cr_assert_eq(iour_broker__counters(b, &c), -EINVAL);
	c.sz = IOUR_OPTS_MAX_SZ + 1;
	cr_assert_eq(iour_broker__counters(b, &c), -EINVAL);
	c.sz = offsetof(struct iour_broker_counters, served);
	c.notifications = 77;
	cr_assert_eq(iour_broker__counters(b, &c), 0);
	cr_assert_eq(c.notifications, 0);
	iour_broker__free(b); /* closes p[0] */
	close(p[1]);
	/* IOUR_BROKER_NONBLOCK: nothing pending (an empty pipe stands in for
	 * a listener with no notification; a waiting serve would block here
	 * forever) gives -EAGAIN at once; install refuses the flag. */
	cr_assert_eq(pipe(p), 0);
	o.sz = sizeof(o);
	o.flags = IOUR_BROKER_NONBLOCK;
	cr_assert_eq(iour_broker__install(&o, &p[1]), -EINVAL);
	b = NULL;
	cr_assert_eq(iour_broker__new(plan, p[0], &o, &b), 0);
	cr_assert_eq(iour_broker__serve(b), -EAGAIN);
	iour_broker__free(b);
	close(p[1]);
	iour_plan__free(plan);
}

/* ---- iour-restrict run --------------------------------------------------------- */

/* Each flag set: what the broker answers, against the kernel unconfined. */
static const struct {
	const char *spec;
	const char *refused; /* the broker's errno, or NULL: served like the kernel */
} flag_cases[] = {
	{ "setup:0", NULL },
	{ "setup:sqpoll", "EPERM" },
	{ "setup:r_disabled", "EPERM" },
	{ "setup:attach_wq", "EINVAL" },
	{ "setup:no_mmap", "EINVAL" },
	{ "setup:unknown", "EINVAL" },
	{ "setup:single_issuer", NULL },
	{ "setup:single_issuer+defer_taskrun", NULL },
	{ "setup:defer_taskrun", NULL }, /* without SINGLE_ISSUER: the kernel says EINVAL */
	{ "setup:coop_taskrun+taskrun_flag", NULL },
	{ "setup:submit_all", NULL },
	{ "setup:cqsize", NULL },
	{ "setup:cqsize+clamp", NULL },
	{ "setup:sqe128+cqe32", NULL },
	{ "setup:no_sqarray", NULL },
	{ "setup:iopoll", NULL },
	{ "setup-ro", NULL },   /* params in a read-only page: EFAULT, as the kernel */
	{ "setup-null", NULL }, /* params at NULL: EFAULT */
};

Test(live_broker, run_every_setup_flag)
{
	char *direct, *out, *err, want[512];
	int rc;

	need_run_broker();
	for (size_t i = 0; i < sizeof(flag_cases) / sizeof(flag_cases[0]); i++) {
		const char *const steps[] = { flag_cases[i].spec, "nop", "read", NULL };

		cr_assert_eq(try_direct(steps, &direct), 0);
		rc = run_try(read_only, NULL, steps, &out, &err);
		cr_assert_eq(rc, 0, "%s: status %d, output:\n%s\nstderr: %s", flag_cases[i].spec,
			     rc, out, err);
		if (flag_cases[i].refused) {
			snprintf(want, sizeof(want), "setup: %s\nnop: no ring\nread: no ring\n",
				 flag_cases[i].refused);
		} else if (strncmp(direct, "setup: ok\n", 10)) {
			/* The kernel refuses it itself: the same answer. */
			snprintf(want, sizeof(want), "%s", direct);
		} else {
			/* Served: the same ring, restricted: NOP denied before the
			 * kernel looks at it (5.10 refuses NOP on an IOPOLL ring
			 * with EINVAL only after the gate), READ as unconfined. */
			const char *rd = strstr(direct, "\nread: ");

			cr_assert(!strncmp(direct, "setup: ok\nnop: ", 15) && rd,
				  "%s unconfined: %s", flag_cases[i].spec, direct);
			snprintf(want, sizeof(want), "setup: ok\nnop: EACCES%s", rd);
		}
		cr_assert_str_eq(out, want, "%s: unconfined it was:\n%s\nstderr: %s",
				 flag_cases[i].spec, direct, err);
		for (char *q = out; *q; q++)
			if (*q == '\n')
				*q = '|';
		live_log("run broker, %s: %s", flag_cases[i].spec, out);
		free(direct);
		free(out);
		free(err);
	}
}

Test(live_broker, run_restricts_and_says_so)
{
	static const char *const steps[] = {
		"setup:0", "nop", "read", "openat", "register-restrictions", "enable", NULL
	};
	char *out, *err;
	int rc;

	need_run_broker();
	rc = run_try(read_only, NULL, steps, &out, &err);
	cr_assert_eq(rc, 0, "%s", err);
	/* READ completes with its data intact; NOP and OPENAT are refused; the
	 * program can neither register restrictions of its own nor enable the
	 * ring (it is enabled and restricted already: EBADFD, or EACCES where
	 * the set gates those register opcodes). */
	cr_assert(!strncmp(out, "setup: ok\nnop: EACCES\nread: ok\nopenat: EACCES\n", 46), "%s",
		  out);
	cr_assert(strstr(out, "register-restrictions: EBADFD\n") ||
			  strstr(out, "register-restrictions: EACCES\n"),
		  "%s", out);
	cr_assert(strstr(out, "enable: EBADFD\n") || strstr(out, "enable: EACCES\n"), "%s", out);
	cr_assert(strstr(err, "(ring broker: ring restrictions)"), "%s", err);
	cr_assert(strstr(err, "every io_uring ring the command and all it starts create is "
			      "restricted"),
		  "%s", err);
	live_log("run broker: %s", err);
	free(out);
	free(err);
}

/* One datagram from the fake NOTIFY_SOCKET: its text, and the sender's pid
 * from SCM_CREDENTIALS.  0 when none is queued. */
static int notify_recv(int s, char *buf, size_t len, pid_t *from)
{
	char cbuf[CMSG_SPACE(sizeof(struct ucred))];
	struct iovec iov = { .iov_base = buf, .iov_len = len - 1 };
	struct msghdr m = { .msg_iov = &iov,
			    .msg_iovlen = 1,
			    .msg_control = cbuf,
			    .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm;
	ssize_t n = recvmsg(s, &m, MSG_DONTWAIT);

	if (n < 0) {
		cr_assert_eq(errno, EAGAIN, "recvmsg: %s", strerror(errno));
		return 0;
	}
	buf[n] = '\0';
	*from = -1;
	for (cm = CMSG_FIRSTHDR(&m); cm; cm = CMSG_NXTHDR(&m, cm))
		if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_CREDENTIALS) {
			struct ucred uc;

			memcpy(&uc, CMSG_DATA(cm), sizeof(uc));
			*from = uc.pid;
		}
	return 1;
}

/*
 * A Type=notify unit (doc/systemd.md): systemd accepts READY=1 from the
 * unit's main PID only (NotifyAccess=main, the default).  The main PID is
 * run's; when run is a broker the command is its child, so run must send
 * MAINPID=<the command's pid> before the command can send READY=1.  A fake
 * NOTIFY_SOCKET records who sent what, in order, as systemd would see it.
 */
Test(live_broker, run_notify_socket_names_the_command)
{
	static const char *const steps[] = { "setup:0", "read", "notify", NULL };
	char dir[] = "/tmp/iour-notify-XXXXXX", path[64], buf[64], *out, *err, *p;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int s, one = 1, rc, cmd_pid = 0, cmd_ppid = 0;
	pid_t from1 = 0, from2 = 0;
	char msg1[64] = "", msg2[64] = "", extra[64];
	bool broker;

	LIVE_REQUIRE(LIVE_RING);
	broker = live_missing(LIVE_TASK) != NULL;
	cr_assert_not_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/notify", dir);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	cr_assert_geq(s, 0);
	cr_assert_eq(setsockopt(s, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)), 0);
	cr_assert_eq(bind(s, (struct sockaddr *)&sa, sizeof(sa)), 0, "bind %s: %s", path,
		     strerror(errno));
	cr_assert_eq(setenv("NOTIFY_SOCKET", path, 1), 0);
	rc = run_try(read_only, NULL, steps, &out, &err);
	unsetenv("NOTIFY_SOCKET");
	cr_assert_eq(rc, 0, "exit %d; stdout:\n%s\nstderr:\n%s", rc, out, err);
	cr_assert(!strncmp(out, "setup: ok\nread: ok\npid: ", strlen("setup: ok\nread: ok\npid: ")),
		  "%s", out);
	p = strstr(out, "pid: ");
	cr_assert(p && sscanf(p, "pid: %d %d", &cmd_pid, &cmd_ppid) == 2, "%s", out);
	cr_assert(strstr(out, "notify: ok\n"), "%s", out);
	notify_recv(s, msg1, sizeof(msg1), &from1);
	notify_recv(s, msg2, sizeof(msg2), &from2);
	cr_assert_eq(notify_recv(s, extra, sizeof(extra), &from2), 0, "a third message: %s", extra);
	if (broker) {
		/* run (the command's parent) named the command first ... */
		snprintf(buf, sizeof(buf), "MAINPID=%d", cmd_pid);
		cr_assert_str_eq(msg1, buf, "first message (from %d)", (int)from1);
		cr_assert_eq(from1, cmd_ppid, "MAINPID= sent by %d, not by run (%d)", (int)from1,
			     cmd_ppid);
		cr_assert_neq(cmd_pid, cmd_ppid);
		/* ... so READY=1 comes from what is then the main PID. */
		cr_assert_str_eq(msg2, "READY=1");
		cr_assert_eq(from2, cmd_pid);
	} else {
		/* Task restrictions: run executed the command in its own process,
		 * which stays the main PID; nothing else is said. */
		cr_assert_str_eq(msg1, "READY=1");
		cr_assert_eq(from1, cmd_pid);
		cr_assert_str_eq(msg2, "", "a second message: %s", msg2);
		cr_assert_eq(cmd_ppid, getpid(), "the command is not run's own process");
	}
	live_log("run under NOTIFY_SOCKET (%s): '%s' from %d, then '%s' from %d",
		 broker ? "broker" : "task restrictions", msg1, (int)from1, msg2, (int)from2);
	close(s);
	unlink(path);
	rmdir(dir);
	free(out);
	free(err);
}

Test(live_broker, run_fork_threads_exec)
{
	static const char *const steps[] = { "fork", "thread", "exec", "setup:0",
					     "nop",  "read",   NULL };
	char *out, *err;
	int rc;

	need_run_broker();
	/* Repeated: the broker serves three processes' rings at once, and a
	 * race between them (or in installing the fd) showed only now and then. */
	for (int round = 0; round < 20; round++) {
		rc = run_try(read_only, NULL, steps, &out, &err);
		cr_assert_eq(rc, 0, "round %d: exit %d; stdout:\n%s\nstderr:\n%s", round, rc,
			     out ? out : "", err);
		cr_assert_str_eq(out,
				 "child setup: ok\nchild nop: EACCES\nchild read: ok\n"
				 "thread setup: ok\nthread nop: EACCES\nthread read: ok\n"
				 "setup: ok\nnop: EACCES\nread: ok\n",
				 "round %d: %s", round, err);
		free(out);
		free(err);
	}
}

Test(live_broker, run_off_keeps_the_companion)
{
	static const char *const steps[] = { "setup:0", NULL };
	char *out, *err;
	int rc;

	need_run_broker();
	rc = run_try(read_only, "--broker=off", steps, &out, &err);
	cr_assert_eq(rc, 0, "%s", err);
	cr_assert_str_eq(out, "setup: ENOSYS\n", "%s", err);
	cr_assert(strstr(err, "seccomp companion"), "%s", err);
	cr_assert(!strstr(err, "ring broker"), "%s", err);
	free(out);
	free(err);
}

Test(live_broker, run_liburing_program)
{
	char tool[4096], prog[4096], *out, *err;
	char *argv[] = { tool, "run", "-", "--", prog, "nop", "read", "openat-r", NULL };
	int rc;

	need_run_broker();
	live_prog_path(tool, sizeof(tool), "tools/iour-restrict");
	live_prog_path(prog, sizeof(prog), "tests/uring-try");
	rc = live_run_argv(argv, read_only, &out, &err);
	cr_assert_eq(rc, 0, "%s", err);
	cr_assert_str_eq(out, "setup: ok\nnop: EACCES\nread: ok\nopenat-r: EACCES\n", "%s", err);
	free(out);
	free(err);
}

Test(live_broker, run_fio)
{
	char tool[4096], pol[4096], dir[] = "/tmp/iour-broker-fio-XXXXXX", file[4200];
	char *out, *err;
	const char *fio = access("/usr/bin/fio", X_OK) == 0 ? "/usr/bin/fio" : NULL;
	int rc;

	need_run_broker();
	if (!fio)
		cr_skip_test("skipped: fio is not installed (scripts/deps.sh fio)");
	live_prog_path(tool, sizeof(tool), "tools/iour-restrict");
	snprintf(pol, sizeof(pol), "%s/../../examples/policies/fio.json", live_examples_dir());
	if (access(pol, R_OK)) /* a deeper O (the coverage build): make runs in the tree */
		snprintf(pol, sizeof(pol), "examples/policies/fio.json");
	if (access(pol, R_OK))
		snprintf(pol, sizeof(pol), "/progs/policies/fio.json");
	cr_assert_eq(access(pol, R_OK), 0, "examples/policies/fio.json is missing");
	cr_assert_not_null(mkdtemp(dir));
	snprintf(file, sizeof(file), "--filename=%s/fio.dat", dir);
	{
		char *argv[] = { tool,
				 "run",
				 pol,
				 "--",
				 (char *)fio,
				 "--name=broker",
				 "--ioengine=io_uring",
				 file,
				 "--size=256k",
				 "--bs=4k",
				 "--rw=randrw",
				 "--iodepth=4",
				 "--direct=0",
				 NULL };

		rc = live_run_argv(argv, NULL, &out, &err);
	}
	cr_assert_eq(rc, 0, "fio under fio.json: %s\n%s", out, err);
	cr_assert(strstr(out, "READ: bw="), "%s", out);
	cr_assert(strstr(out, "WRITE: bw="), "%s", out);
	cr_assert(strstr(err, "ring broker"), "%s", err);
	live_log("fio --ioengine=io_uring completed under fio.json through the broker");
	snprintf(file, sizeof(file), "%s/fio.dat", dir);
	unlink(file);
	rmdir(dir);
	free(out);
	free(err);
}

/* `learn` PROG STEPS into `pol`; skips where learn cannot trace here. */
static void learn_into(const char *pol, char *prog, char *const *steps)
{
	char tool[4096], *out, *err;
	char *argv[16];
	int n = 0, rc;

	live_prog_path(tool, sizeof(tool), "tools/iour-restrict");
	argv[n++] = tool;
	argv[n++] = "learn";
	argv[n++] = "-q";
	argv[n++] = "-o";
	argv[n++] = (char *)pol;
	argv[n++] = "--";
	argv[n++] = prog;
	for (; *steps && n < 15; steps++)
		argv[n++] = *steps;
	argv[n] = NULL;
	rc = live_run_argv(argv, NULL, &out, &err);
	if (rc != 0 && (strstr(err, "tracefs") || strstr(err, "PID namespace")))
		cr_skip_test("skipped: learn cannot trace here: %s", err);
	cr_assert_eq(rc, 0, "learn %s: %s\n%s", prog, out, err);
	free(out);
	free(err);
}

/* Issue 17: a raw-syscall program (broker-try) and a liburing one
 * (uring-try) under `run` with the policy `learn` recorded from them:
 * what they did while learned completes, the rest gets EACCES. */
Test(live_broker, run_learned_policies)
{
	static const struct {
		const char *prog;
		char *learned[4];
		char *run[5];
		const char *want;
	} cases[] = {
		{ "tests/broker-try",
		  { "setup:0", "nop", "read", NULL },
		  { "setup:0", "nop", "read", "openat", NULL },
		  "setup: ok\nnop: ok\nread: ok\nopenat: EACCES\n" },
		{ "tests/uring-try",
		  { "nop", "read", NULL },
		  { "nop", "read", "openat-r", NULL },
		  "setup: ok\nnop: ok\nread: ok\nopenat-r: EACCES\n" },
	};
	char dir[] = "/tmp/iour-broker-learn-XXXXXX";

	need_run_broker();
	cr_assert_not_null(mkdtemp(dir));
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char tool[4096], prog[4096], pol[4200], *out, *err;
		char *argv[16];
		int n = 0, rc;

		live_prog_path(tool, sizeof(tool), "tools/iour-restrict");
		live_prog_path(prog, sizeof(prog), cases[i].prog);
		snprintf(pol, sizeof(pol), "%s/learned-%zu.json", dir, i);
		learn_into(pol, prog, cases[i].learned);
		argv[n++] = tool;
		argv[n++] = "run";
		argv[n++] = pol;
		argv[n++] = "--";
		argv[n++] = prog;
		for (char *const *st = cases[i].run; *st; st++)
			argv[n++] = *st;
		argv[n] = NULL;
		rc = live_run_argv(argv, NULL, &out, &err);
		cr_assert_eq(rc, 0, "%s under its learned policy: %s", cases[i].prog, err);
		cr_assert_str_eq(out, cases[i].want, "%s under its learned policy: %s",
				 cases[i].prog, err);
		cr_assert(strstr(err, "ring broker"), "%s", err);
		unlink(pol);
		free(out);
		free(err);
	}
	rmdir(dir);
	live_log("broker-try (raw system calls) and uring-try (liburing) under the "
		 "policies learned from them: learned requests complete, OPENAT gets EACCES");
}

/* qemu-io's policy (tests/guest/policies), in the tree or in a guest. */
static void qemu_io_policy(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/../../tests/guest/policies/%s", live_examples_dir(), name);
	if (access(buf, R_OK)) /* a deeper O (the coverage build): make runs in the tree */
		snprintf(buf, len, "tests/guest/policies/%s", name);
	if (access(buf, R_OK))
		snprintf(buf, len, "/progs/policies/%s", name);
	cr_assert_eq(access(buf, R_OK), 0, "tests/guest/policies/%s is missing", name);
}

/* qemu-io --aio io_uring under the policy learned from it: it writes,
 * reads back and verifies a pattern through brokered rings; without
 * WRITEV its write gets EACCES and the image keeps the first pattern. */
Test(live_broker, run_qemu_io)
{
	char tool[4096], pol[4096], nowrite[4096], dir[] = "/tmp/iour-broker-qio-XXXXXX", img[4200];
	char *out, *err;
	int rc, fd;

	need_run_broker();
	if (access("/usr/bin/qemu-io", X_OK))
		cr_skip_test("skipped: qemu-io is not installed (scripts/deps.sh qemu-utils)");
	live_prog_path(tool, sizeof(tool), "tools/iour-restrict");
	qemu_io_policy(pol, sizeof(pol), "qemu-io.json");
	qemu_io_policy(nowrite, sizeof(nowrite), "qemu-io-nowrite.json");
	cr_assert_not_null(mkdtemp(dir));
	snprintf(img, sizeof(img), "%s/disk.img", dir);
	fd = open(img, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
	cr_assert_geq(fd, 0);
	cr_assert_eq(ftruncate(fd, 1 << 20), 0);
	close(fd);
	{
		char *argv[] = { tool,
				 "run",
				 pol,
				 "--",
				 "/usr/bin/qemu-io",
				 "-f",
				 "raw",
				 "--aio",
				 "io_uring",
				 "-c",
				 "write -P 0x5a 0 64k",
				 "-c",
				 "read -P 0x5a 0 64k",
				 "-c",
				 "flush",
				 img,
				 NULL };

		rc = live_run_argv(argv, NULL, &out, &err);
	}
	cr_assert_eq(rc, 0, "qemu-io under qemu-io.json: %s\n%s", out, err);
	cr_assert(strstr(out, "wrote 65536/65536 bytes at offset 0"), "%s", out);
	cr_assert(strstr(out, "read 65536/65536 bytes at offset 0"), "%s", out);
	cr_assert_null(strstr(out, "Pattern verification failed"), "%s", out);
	cr_assert(strstr(err, "ring broker"), "%s", err);
	free(out);
	free(err);
	{
		char *argv[] = { tool,
				 "run",
				 nowrite,
				 "--",
				 "/usr/bin/qemu-io",
				 "-f",
				 "raw",
				 "--aio",
				 "io_uring",
				 "-c",
				 "write -P 0xa5 0 64k",
				 "-c",
				 "read -P 0x5a 0 64k",
				 img,
				 NULL };

		rc = live_run_argv(argv, NULL, &out, &err);
	}
	cr_assert(strstr(out, "write failed: Permission denied"), "exit %d: %s\n%s", rc, out, err);
	cr_assert(strstr(out, "read 65536/65536 bytes at offset 0"), "%s", out);
	cr_assert_null(strstr(out, "Pattern verification failed"), "%s", out);
	live_log(
		"qemu-io --aio io_uring: learned policy completes, its write refused without WRITEV");
	unlink(img);
	rmdir(dir);
	free(out);
	free(err);
}

/* Issue 18, item 4: rings the parent passes down are closed by default. */
Test(live_broker, run_closes_inherited_rings)
{
	static const char *const steps[] = { "fds", NULL };
	struct io_uring_params p;
	char *out, *err;
	int fd, rc;

	LIVE_REQUIRE(LIVE_RING);
	memset(&p, 0, sizeof(p));
	fd = (int)syscall(__NR_io_uring_setup, 4, &p);
	cr_assert_geq(fd, 0);
	cr_assert_eq(fcntl(fd, F_SETFD, 0), 0); /* inherited across execve */

	rc = run_try(read_only, NULL, steps, &out, &err);
	cr_assert_eq(rc, 0, "%s", err);
	cr_assert_str_eq(out, "rings: 0\n", "%s", err);
	cr_assert(strstr(err, "1 inherited io_uring fd closed"), "%s", err);
	free(out);
	free(err);

	rc = run_try(read_only, "--existing-rings=keep", steps, &out, &err);
	cr_assert_eq(rc, 0, "%s", err);
	cr_assert_str_eq(out, "rings: 1\n", "%s", err);
	cr_assert(strstr(err, "inherited io_uring fds kept (--existing-rings=keep): they are NOT "
			      "restricted"),
		  "%s", err);
	free(out);
	free(err);

	rc = run_try(read_only, "--existing-rings=refuse", steps, &out, &err);
	cr_assert_eq(rc, 1, "%s", err);
	cr_assert_str_eq(out, "", "the command ran");
	cr_assert(strstr(err, "--existing-rings=refuse"), "%s", err);
	free(out);
	free(err);
	close(fd);
}

Test(live_broker, run_broker_killed_fails_closed)
{
	char tool[4096], prog[4096], polpath[] = "/tmp/iour-broker-pol-XXXXXX";
	char *argv[] = {
		tool, "run", polpath, "--", prog, "setup:0", "nop", "wait", "setup:0", NULL
	};
	char buf[256];
	size_t got = 0;
	int in[2], o[2], pfd, st;
	pid_t pid;

	need_run_broker();
	live_prog_path(tool, sizeof(tool), "tools/iour-restrict");
	live_prog_path(prog, sizeof(prog), "tests/broker-try");
	pfd = mkstemp(polpath);
	cr_assert_geq(pfd, 0);
	cr_assert_eq(write(pfd, read_only, strlen(read_only)), (ssize_t)strlen(read_only));
	close(pfd);
	cr_assert_eq(pipe(in), 0);
	cr_assert_eq(pipe(o), 0);
	fflush(NULL);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		dup2(in[0], 0);
		dup2(o[1], 1);
		close(in[1]);
		close(o[0]);
		execv(tool, argv);
		_exit(125);
	}
	close(in[0]);
	close(o[1]);
	/* The first ring, through the broker. */
	while (got < sizeof(buf) - 1 && !strstr(buf, "nop: ")) {
		ssize_t k = read(o[0], buf + got, sizeof(buf) - 1 - got);

		cr_assert_gt(k, 0, "the command's output ended: %s", buf);
		got += (size_t)k;
		buf[got] = '\0';
	}
	cr_assert(!strncmp(buf, "setup: ok\nnop: EACCES", 21), "%s", buf);
	/* Kill the broker (run itself); the command lives on. */
	cr_assert_eq(kill(pid, SIGKILL), 0);
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert_eq(write(in[1], "x", 1), 1);
	for (;;) {
		ssize_t k = read(o[0], buf + got, sizeof(buf) - 1 - got);

		if (k <= 0)
			break;
		got += (size_t)k;
		buf[got] = '\0';
	}
	cr_assert_str_eq(buf, "setup: ok\nnop: EACCES\nsetup: ENOSYS\n");
	live_log("run's broker killed: the command's next io_uring_setup got ENOSYS");
	close(in[1]);
	close(o[0]);
	unlink(polpath);
}
