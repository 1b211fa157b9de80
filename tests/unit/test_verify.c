/* SPDX-License-Identifier: MIT */
/*
 * The enforcement check against the real kernel.  Restrictions the
 * kernel here can enforce are per-ring ones (6.18 has no task-level
 * restrictions), so the "enforced" cases use a ring restricted with a raw
 * IORING_REGISTER_RESTRICTIONS; the "not enforced" cases use the plain
 * mode on this unrestricted kernel; the "unusable" cases use the seccomp
 * companion in a forked child.
 */
#include <criterion/criterion.h>
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <liburing.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/miniring.h"
#include "base/sys.h"
#include "iouring_restrict/companion.h"
#include "iouring_restrict/errors.h"
#include "iouring_restrict/verify.h"
#include "uring_avail.h"

#define CHECK(cond)                                                                  \
	do {                                                                         \
		if (!(cond)) {                                                       \
			fprintf(stderr, "child check failed at %s:%d: %s\n", __FILE__, \
				__LINE__, #cond);                                    \
			return 1;                                                    \
		}                                                                    \
	} while (0)

#define ASYNC 0x10U /* IOSQE_ASYNC */

static int in_child(int (*fn)(void *), void *arg)
{
	int st;
	pid_t pid = fork();

	cr_assert_geq(pid, 0);
	if (pid == 0)
		_exit(fn(arg));
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static struct iour_verify_req rq(uint32_t op, uint32_t expect)
{
	struct iour_verify_req r;

	memset(&r, 0, sizeof(r));
	r.sz = sizeof(r);
	r.opcode = op;
	r.expect = expect;
	return r;
}

static struct sockaddr_in lo_port1;
static struct sockaddr_un unix_missing;

static struct iour_verify_req rq_socket(uint32_t expect)
{
	struct iour_verify_req r = rq(IOUR_OP_SOCKET, expect);

	r.family = AF_INET;
	r.type = SOCK_STREAM;
	return r;
}

static struct iour_verify_req rq_open(uint32_t op, const char *path, uint32_t expect)
{
	struct iour_verify_req r = rq(op, expect);

	r.path = path;
	r.open_flags = O_RDONLY;
	return r;
}

static struct iour_verify_req rq_connect(const void *addr, uint32_t len, uint32_t expect)
{
	struct iour_verify_req r = rq(IOUR_OP_CONNECT, expect);

	r.addr = addr;
	r.addrlen = len;
	return r;
}

static void init_addrs(void)
{
	memset(&lo_port1, 0, sizeof(lo_port1));
	lo_port1.sin_family = AF_INET;
	lo_port1.sin_port = htons(1);
	lo_port1.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	memset(&unix_missing, 0, sizeof(unix_missing));
	unix_missing.sun_family = AF_UNIX;
	strcpy(unix_missing.sun_path, "/nonexistent/iour-verify.sock");
}

/* A ring restricted the classic way: only NOP, no SQE flag. */
static int restricted_ring(bool enable)
{
	struct kio_restriction res[2];
	struct kio_params p;
	int fd;

	memset(&p, 0, sizeof(p));
	p.flags = KIO_SETUP_R_DISABLED;
	fd = (int)iour__setup(4, &p);
	cr_assert_geq(fd, 0);
	memset(res, 0, sizeof(res));
	res[0].opcode = KIO_RESTRICTION_SQE_OP;
	res[0].sqe_op = IOUR_OP_NOP;
	res[1].opcode = KIO_RESTRICTION_SQE_FLAGS_ALLOWED;
	cr_assert_eq(iour__register(fd, KIO_REGISTER_RESTRICTIONS, res, 2), 0);
	if (enable)
		cr_assert_eq(iour__register(fd, KIO_REGISTER_ENABLE_RINGS, NULL, 0), 0);
	return fd;
}

static const char *helper_path(void)
{
	static char buf[4096];
	const char *dir = getenv("IOUR_EXAMPLES_DIR");

	snprintf(buf, sizeof(buf), "%s/iour-verify-helper", dir ? dir : "build/examples");
	return access(buf, X_OK) == 0 ? buf : NULL;
}

/* The request set for a ring that allows only NOP without flags. */
static size_t nop_only_reqs(struct iour_verify_req *r)
{
	size_t n = 0;

	init_addrs();
	r[n++] = rq(IOUR_OP_NOP, IOUR_EXPECT_ALLOW);
	r[n] = rq(IOUR_OP_NOP, IOUR_EXPECT_DENY);
	r[n++].sqe_flags = ASYNC;
	r[n++] = rq(IOUR_OP_WRITE, IOUR_EXPECT_DENY);
	r[n++] = rq(IOUR_OP_READ, IOUR_EXPECT_DENY);
	r[n++] = rq(IOUR_OP_WRITEV, IOUR_EXPECT_DENY);
	r[n++] = rq_socket(IOUR_EXPECT_DENY);
	r[n++] = rq_open(IOUR_OP_OPENAT, "/dev/null", IOUR_EXPECT_DENY);
	r[n++] = rq_open(IOUR_OP_OPENAT2, "/dev/null", IOUR_EXPECT_DENY);
	r[n++] = rq_connect(&lo_port1, sizeof(lo_port1), IOUR_EXPECT_DENY);
	return n;
}

static void assert_all_match(const struct iour_verify_req *r, const struct iour_verify_result *res,
			     size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		cr_assert_eq(res[i].status, IOUR_VERIFY_MATCH, "request %zu (op %u): status %u res %d",
			     i, r[i].opcode, res[i].status, res[i].res);
		cr_assert_eq(res[i].observed, r[i].expect);
		if (r[i].expect == IOUR_EXPECT_DENY)
			cr_assert_eq(res[i].res, -EACCES);
		else
			cr_assert_neq(res[i].res, -EACCES);
		cr_assert_eq(res[i].resv, 0);
	}
}

/* (a) ring mode: the kernel enforces the ring's allow-list. */
Test(verify, ring_fd_restricted_ring_passes)
{
	UNIT_REQUIRE_URING();
	struct iour_verify_req r[16];
	struct iour_verify_result res[16];
	IOUR_OPTS(iour_verify_opts, o, .flags = IOUR_VERIFY_RING_FD);
	struct iour__ring mine;
	struct kio_params p;
	struct kio_sqe s;
	struct kio_cqe c;
	size_t n = nop_only_reqs(r);
	int rc;

	o.ring_fd = restricted_ring(true);
	rc = iour_verify(r, n, res, &o);
	cr_assert_eq(rc, 0, "rc %s", iour_errname(rc));
	assert_all_match(r, res, n);
	cr_assert_eq(res[0].res, 0);

	/* the caller's ring is still consistent and still restricted */
	cr_assert_eq(iour__ring_learn(o.ring_fd, 0, &p), 0);
	cr_assert_eq(iour__ring_from_fd(&mine, o.ring_fd, &p), 0);
	cr_assert_eq(*mine.sq_head, n, "the check consumed exactly its %zu SQEs", n);
	memset(&s, 0, sizeof(s));
	s.opcode = IOUR_OP_NOP;
	cr_assert_eq(iour__ring_submit_one(&mine, &s, &c), 0);
	cr_assert_eq(c.res, 0);
	s.opcode = IOUR_OP_WRITE;
	s.fd = 1;
	cr_assert_eq(iour__ring_submit_one(&mine, &s, &c), 0);
	cr_assert_eq(c.res, -EACCES);
	iour__ring_exit(&mine);
	close(o.ring_fd);
	fprintf(stderr, "verify: ring mode, %zu requests matched on a NOP-only ring\n", n);
}

Test(verify, ring_fd_wrong_expectations_not_enforced)
{
	UNIT_REQUIRE_URING();
	struct iour_verify_req r[3] = { rq(IOUR_OP_NOP, IOUR_EXPECT_DENY),
					rq(IOUR_OP_WRITE, IOUR_EXPECT_ALLOW),
					rq(IOUR_OP_NOP, IOUR_EXPECT_ALLOW) };
	struct iour_verify_result res[3];
	IOUR_OPTS(iour_verify_opts, o, .flags = IOUR_VERIFY_RING_FD);

	o.ring_fd = restricted_ring(true);
	cr_assert_eq(iour_verify(r, 3, res, &o), -IOUR_ERRNO__NOT_ENFORCED);
	cr_assert_eq(res[0].status, IOUR_VERIFY_MISMATCH);
	cr_assert_eq(res[0].observed, IOUR_EXPECT_ALLOW);
	cr_assert_eq(res[0].res, 0);
	cr_assert_eq(res[1].status, IOUR_VERIFY_MISMATCH);
	cr_assert_eq(res[1].observed, IOUR_EXPECT_DENY);
	cr_assert_eq(res[1].res, -EACCES);
	cr_assert_eq(res[2].status, IOUR_VERIFY_MATCH, "requests after a mismatch still run");
	/* results are optional */
	cr_assert_eq(iour_verify(r, 3, NULL, &o), -IOUR_ERRNO__NOT_ENFORCED);
	close(o.ring_fd);
}

/* (b) plain mode on this kernel: nothing is restricted. */
Test(verify, plain_mode_deny_expectation_fails_on_unrestricted_kernel)
{
	UNIT_REQUIRE_URING();
	struct iour_verify_req r[16];
	struct iour_verify_result res[16];
	size_t n = nop_only_reqs(r), i;

	/* every "deny" above is allowed here: the check must say so */
	cr_assert_eq(iour_verify(r, n, res, NULL), -IOUR_ERRNO__NOT_ENFORCED);
	for (i = 0; i < n; i++) {
		cr_assert_eq(res[i].observed, IOUR_EXPECT_ALLOW, "request %zu res %d", i,
			     res[i].res);
		cr_assert_eq(res[i].status,
			     r[i].expect == IOUR_EXPECT_ALLOW ? IOUR_VERIFY_MATCH : IOUR_VERIFY_MISMATCH);
	}
	fprintf(stderr, "verify: plain mode, %zu deny expectations reported as not enforced\n",
		n - 1);
}

Test(verify, plain_mode_allow_expectations_pass)
{
	UNIT_REQUIRE_URING();
	struct iour_verify_req r[16];
	struct iour_verify_result res[16];
	size_t n = 0;

	init_addrs();
	r[n++] = rq(IOUR_OP_NOP, IOUR_EXPECT_ALLOW);
	r[n] = rq(IOUR_OP_NOP, IOUR_EXPECT_ALLOW);
	r[n++].sqe_flags = ASYNC | 0x02 /* IO_DRAIN */;
	r[n++] = rq(IOUR_OP_READ, IOUR_EXPECT_ALLOW);
	r[n++] = rq(IOUR_OP_READV, IOUR_EXPECT_ALLOW);
	r[n++] = rq(IOUR_OP_WRITE, IOUR_EXPECT_ALLOW);
	r[n++] = rq(IOUR_OP_WRITEV, IOUR_EXPECT_ALLOW);
	r[n++] = rq_socket(IOUR_EXPECT_ALLOW);
	r[n++] = rq_open(IOUR_OP_OPENAT, "/dev/null", IOUR_EXPECT_ALLOW);
	r[n++] = rq_open(IOUR_OP_OPENAT2, "/dev/null", IOUR_EXPECT_ALLOW);
	r[n++] = rq_open(IOUR_OP_OPENAT, "/nonexistent/x", IOUR_EXPECT_ALLOW);
	r[n++] = rq_connect(&lo_port1, sizeof(lo_port1), IOUR_EXPECT_ALLOW);
	r[n++] = rq_connect(&unix_missing, sizeof(unix_missing), IOUR_EXPECT_ALLOW);
	r[n] = rq_connect(&lo_port1, 1, IOUR_EXPECT_ALLOW); /* stale addrlen: family given */
	r[n++].family = AF_INET;

	cr_assert_eq(iour_verify(r, n, res, NULL), 0);
	assert_all_match(r, res, n);
	cr_assert_eq(res[0].res, 0);
	cr_assert_eq(res[2].res, 1);
	cr_assert_eq(res[3].res, 1);
	cr_assert_eq(res[4].res, 1);
	cr_assert_eq(res[5].res, 1);
	cr_assert_geq(res[6].res, 0);
	cr_assert_geq(res[7].res, 0);
	cr_assert_geq(res[8].res, 0);
	cr_assert_eq(res[9].res, -ENOENT);
	cr_assert_eq(res[10].res, -ECONNREFUSED);
	cr_assert_eq(res[11].res, -ENOENT);
	cr_assert_eq(res[12].res, -EINVAL);
	fprintf(stderr, "verify: plain mode, %zu allow expectations matched\n", n);
}

Test(verify, plain_mode_ring_flag_variants)
{
	UNIT_REQUIRE_URING();
	static const uint32_t flags[] = {
		KIO_SETUP_SUBMIT_ALL, KIO_SETUP_SQE128 | KIO_SETUP_CQE32, KIO_SETUP_NO_SQARRAY,
		KIO_SETUP_SINGLE_ISSUER | KIO_SETUP_DEFER_TASKRUN,
		KIO_SETUP_COOP_TASKRUN | KIO_SETUP_TASKRUN_FLAG,
	};
	struct iour_verify_req r[2] = { rq(IOUR_OP_NOP, IOUR_EXPECT_ALLOW),
					rq(IOUR_OP_WRITE, IOUR_EXPECT_ALLOW) };
	size_t i;

	for (i = 0; i < IOUR_ARRAY_SIZE(flags); i++) {
		IOUR_OPTS(iour_verify_opts, o, .ring_flags = flags[i]);

		cr_assert_eq(iour_verify(r, 2, NULL, &o), 0, "ring_flags 0x%x", flags[i]);
	}
}

/* (c) io_uring unusable in the child. */
struct companion_case {
	uint32_t errno_value;
	uint32_t flags;
	bool ring_mode;
	int want;      /* iour_verify's answer */
	int want_res;  /* results[0].res */
};

static int child_companion(void *arg)
{
	const struct companion_case *c = arg;
	IOUR_OPTS(iour_companion_opts, co, .errno_value = c->errno_value, .flags = c->flags);
	IOUR_OPTS(iour_verify_opts, o);
	struct iour_verify_req r[2] = { rq(IOUR_OP_NOP, IOUR_EXPECT_ALLOW),
					rq(IOUR_OP_WRITE, IOUR_EXPECT_DENY) };
	struct iour_verify_result res[2];
	int rc;

	if (c->ring_mode) {
		o.flags = IOUR_VERIFY_RING_FD;
		o.ring_fd = restricted_ring(true);
	}
	CHECK(iour_companion_install(&co) == 0);
	rc = iour_verify(r, 2, res, &o);
	if (rc != c->want) {
		fprintf(stderr, "verify gave %s, want %s\n", iour_errname(rc), iour_errname(c->want));
		return 1;
	}
	if (c->want == 0) {
		CHECK(res[0].status == IOUR_VERIFY_MATCH && res[1].status == IOUR_VERIFY_MATCH);
	} else {
		CHECK(res[1].status == IOUR_VERIFY_NOT_RUN);
		CHECK(res[0].res == c->want_res);
		CHECK(res[1].res == c->want_res);
	}
	return 0;
}

Test(verify, companion_makes_io_uring_unusable)
{
	UNIT_REQUIRE_URING();
	static const struct companion_case cases[] = {
		{ 0, 0, false, -ENOSYS, -ENOSYS },
		{ EPERM, 0, false, -EPERM, -EPERM },
		{ EACCES, 0, false, -EPERM, -EACCES },
		{ ENOMEM, 0, false, -ENOMEM, -ENOMEM },
		{ 4095, 0, false, -ECHILD, -4095 },
		/* a restricted ring created before a setup-only companion still
		 * works and is still checked */
		{ 0, 0, true, 0, 0 },
		{ 0, IOUR_COMPANION_ENTER, true, -ENOSYS, -ENOSYS },
		{ EPERM, IOUR_COMPANION_ENTER | IOUR_COMPANION_REGISTER, true, -EPERM, -EPERM },
	};
	size_t i;

	for (i = 0; i < IOUR_ARRAY_SIZE(cases); i++)
		cr_assert_eq(in_child(child_companion, (void *)&cases[i]), 0, "case %zu", i);
	/* and the test process itself is untouched */
	cr_assert_eq(iour_verify((struct iour_verify_req[]){ rq(IOUR_OP_NOP, IOUR_EXPECT_ALLOW) }, 1,
				 NULL, NULL),
		     0);
}

static int child_seccomp_kill(void *arg)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 425, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog fp = { 4, f };
	struct iour_verify_req r = rq(IOUR_OP_NOP, IOUR_EXPECT_ALLOW);
	struct iour_verify_result res;

	(void)arg;
	CHECK(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0);
	CHECK(syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &fp) == 0);
	CHECK(iour_verify(&r, 1, &res, NULL) == -EPERM);
	CHECK(res.status == IOUR_VERIFY_NOT_RUN && res.res == -EPERM);
	return 0;
}

Test(verify, seccomp_kill_on_setup_is_eperm)
{
	cr_assert_eq(in_child(child_seccomp_kill, NULL), 0);
}

/* (d) after an exec of the helper. */
Test(verify, exec_mode_with_helper)
{
	UNIT_REQUIRE_URING();
	const char *helper = helper_path();
	struct iour_verify_req r[16];
	struct iour_verify_result res[16];
	char *argv[] = { "iour-verify-helper", "extra-arg", NULL };
	char *envp[] = { "IOUR_TEST=1", "IOUR_VERIFY_FD=stale", NULL };
	size_t n;

	if (!helper)
		cr_skip_test("build/examples/iour-verify-helper not built (run make first)");
	{
		IOUR_OPTS(iour_verify_opts, o, .exec_path = helper);

		n = nop_only_reqs(r);
		cr_assert_eq(iour_verify(r, n, res, &o), -IOUR_ERRNO__NOT_ENFORCED);
		cr_assert_eq(res[0].status, IOUR_VERIFY_MATCH);
		cr_assert_eq(res[2].status, IOUR_VERIFY_MISMATCH);
		cr_assert_eq(iour_verify(r, 1, res, &o), 0);
	}
	{
		IOUR_OPTS(iour_verify_opts, o, .exec_path = helper, .exec_argv = argv,
			  .exec_envp = envp, .flags = IOUR_VERIFY_RING_FD);

		o.ring_fd = restricted_ring(true);
		n = nop_only_reqs(r);
		cr_assert_eq(iour_verify(r, n, res, &o), 0);
		assert_all_match(r, res, n);
		r[0].expect = IOUR_EXPECT_DENY;
		cr_assert_eq(iour_verify(r, n, res, &o), -IOUR_ERRNO__NOT_ENFORCED);
		cr_assert_eq(res[0].status, IOUR_VERIFY_MISMATCH);
		close(o.ring_fd);
	}
	cr_assert_null(getenv(IOUR_VERIFY_ENV), "the caller's environment was changed");
	fprintf(stderr, "verify: exec mode through %s\n", helper);
}

static int child_exec_companion(void *arg)
{
	IOUR_OPTS(iour_verify_opts, o, .exec_path = arg);
	struct iour_verify_req r = rq(IOUR_OP_NOP, IOUR_EXPECT_ALLOW);
	struct iour_verify_result res;

	CHECK(iour_companion_install(NULL) == 0);
	CHECK(iour_verify(&r, 1, &res, &o) == -ENOSYS);
	CHECK(res.res == -ENOSYS);
	return 0;
}

Test(verify, exec_mode_companion_survives_exec)
{
	const char *helper = helper_path();

	if (!helper)
		cr_skip_test("build/examples/iour-verify-helper not built (run make first)");
	cr_assert_eq(in_child(child_exec_companion, (void *)helper), 0);
}

Test(verify, exec_failures_and_timeout)
{
	struct iour_verify_req r[2] = { rq(IOUR_OP_NOP, IOUR_EXPECT_ALLOW),
					rq(IOUR_OP_NOP, IOUR_EXPECT_ALLOW) };
	struct iour_verify_result res[2];
	char *sleep_argv[] = { "sleep", "10", NULL };
	struct timespec t0, t1;

	{
		IOUR_OPTS(iour_verify_opts, o, .exec_path = "/nonexistent/helper");

		cr_assert_eq(iour_verify(r, 2, res, &o), -ECHILD);
		cr_assert_eq(res[0].status, IOUR_VERIFY_NOT_RUN);
		cr_assert_eq(res[0].res, -ENOENT);
		cr_assert_eq(res[1].res, -ENOENT);
	}
	{
		IOUR_OPTS(iour_verify_opts, o, .exec_path = "/bin/true");

		cr_assert_eq(iour_verify(r, 2, res, &o), -ECHILD);
		cr_assert_eq(res[0].status, IOUR_VERIFY_NOT_RUN);
	}
	{
		IOUR_OPTS(iour_verify_opts, o, .exec_path = "/bin/sleep", .exec_argv = sleep_argv,
			  .timeout_ms = 300);

		clock_gettime(CLOCK_MONOTONIC, &t0);
		cr_assert_eq(iour_verify(r, 2, res, &o), -ETIMEDOUT);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		cr_assert_lt(t1.tv_sec - t0.tv_sec, 5, "the child was not killed at the timeout");
	}
}

/* Errors about the ring named by ring_fd. */
Test(verify, ring_fd_errors)
{
	UNIT_REQUIRE_URING();
	struct iour_verify_req r = rq(IOUR_OP_NOP, IOUR_EXPECT_ALLOW);
	struct iour_verify_result res;
	IOUR_OPTS(iour_verify_opts, o, .flags = IOUR_VERIFY_RING_FD);
	struct io_uring lr;
	struct io_uring_cqe *lc;
	struct iour__ring mine;
	struct kio_params p;
	struct kio_sqe s;
	struct kio_cqe c;
	int pp[2];

	o.ring_fd = 987;
	cr_assert_eq(iour_verify(&r, 1, &res, &o), -EBADF);

	cr_assert_eq(pipe(pp), 0);
	o.ring_fd = pp[0];
	cr_assert_eq(iour_verify(&r, 1, &res, &o), -ENOTTY);
	cr_assert_eq(res.status, IOUR_VERIFY_NOT_RUN);
	cr_assert_eq(res.res, -ENOTTY);
	close(pp[0]);
	close(pp[1]);

	/* still disabled: -EBADFD, and nothing is left queued on it */
	o.ring_fd = restricted_ring(false);
	cr_assert_eq(iour_verify(&r, 1, &res, &o), -EBADFD);
	cr_assert_eq(res.status, IOUR_VERIFY_FAILED);
	cr_assert_eq(res.res, -EBADFD);
	cr_assert_eq(iour__register(o.ring_fd, KIO_REGISTER_ENABLE_RINGS, NULL, 0), 0);
	cr_assert_eq(iour__ring_learn(o.ring_fd, 0, &p), 0);
	cr_assert_eq(iour__ring_from_fd(&mine, o.ring_fd, &p), 0);
	cr_assert_eq(*mine.sq_tail, 0, "a rolled-back SQE is still queued");
	memset(&s, 0, sizeof(s));
	cr_assert_eq(iour__ring_submit_one(&mine, &s, &c), 0);
	cr_assert_eq(*mine.cq_tail, 1);
	iour__ring_exit(&mine);
	close(o.ring_fd);

	/* somebody's completion is pending: -EBUSY, and it stays there */
	cr_assert_eq(io_uring_queue_init(4, &lr, 0), 0);
	io_uring_prep_nop(io_uring_get_sqe(&lr));
	cr_assert_eq(io_uring_submit(&lr), 1);
	o.ring_fd = lr.ring_fd;
	cr_assert_eq(iour_verify(&r, 1, &res, &o), -EBUSY);
	cr_assert_eq(io_uring_peek_cqe(&lr, &lc), 0);
	io_uring_cqe_seen(&lr, lc);
	io_uring_queue_exit(&lr);

	/* flags the check cannot drive */
	o.ring_fd = 0;
	o.ring_flags = KIO_SETUP_SINGLE_ISSUER;
	cr_assert_eq(iour_verify(&r, 1, &res, &o), -EOPNOTSUPP);
	o.ring_flags = KIO_SETUP_SQPOLL;
	cr_assert_eq(iour_verify(&r, 1, &res, &o), -EOPNOTSUPP);
}

Test(verify, prep_failure_gives_echild)
{
	UNIT_REQUIRE_URING();
	struct iour_verify_req r[3] = { rq(IOUR_OP_NOP, IOUR_EXPECT_ALLOW),
					rq_connect(&lo_port1, sizeof(lo_port1), IOUR_EXPECT_ALLOW),
					rq(IOUR_OP_NOP, IOUR_EXPECT_ALLOW) };
	struct iour_verify_result res[3];

	init_addrs();
	r[1].family = 12345; /* socket() fails: EAFNOSUPPORT */
	cr_assert_eq(iour_verify(r, 3, res, NULL), -ECHILD);
	cr_assert_eq(res[0].status, IOUR_VERIFY_MATCH);
	cr_assert_eq(res[1].status, IOUR_VERIFY_FAILED);
	cr_assert_eq(res[1].res, -EAFNOSUPPORT);
	cr_assert_eq(res[2].status, IOUR_VERIFY_MATCH);
	/* a mismatch outranks the failure */
	r[2].expect = IOUR_EXPECT_DENY;
	cr_assert_eq(iour_verify(r, 3, res, NULL), -IOUR_ERRNO__NOT_ENFORCED);
}

static int child_no_fds(void *arg)
{
	struct iour_verify_req r = rq(IOUR_OP_NOP, IOUR_EXPECT_ALLOW);
	struct rlimit rl = { 3, 3 };
	int fd;

	(void)arg;
	for (fd = 3; fd < 1024; fd++)
		close(fd);
	CHECK(setrlimit(RLIMIT_NOFILE, &rl) == 0);
	CHECK(iour_verify(&r, 1, NULL, NULL) == -EMFILE);
	return 0;
}

static int child_no_fork(void *arg)
{
	struct iour_verify_req r = rq(IOUR_OP_NOP, IOUR_EXPECT_ALLOW);
	struct rlimit rl = { 0, 0 };

	(void)arg;
	CHECK(setgroups(0, NULL) == 0 && setresgid(65534, 65534, 65534) == 0 &&
	      setresuid(65534, 65534, 65534) == 0);
	CHECK(setrlimit(RLIMIT_NPROC, &rl) == 0);
	CHECK(iour_verify(&r, 1, NULL, NULL) == -EAGAIN);
	return 0;
}

Test(verify, resource_errors)
{
	cr_assert_eq(in_child(child_no_fds, NULL), 0, "-EMFILE");
	if (geteuid() != 0)
		cr_skip_test("needs root to drop to nobody for RLIMIT_NPROC");
	cr_assert_eq(in_child(child_no_fork, NULL), 0, "-EAGAIN");
}

static int count_dir(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *de;
	int n = 0;

	cr_assert_not_null(d);
	while ((de = readdir(d)) != NULL)
		n++;
	closedir(d);
	return n;
}

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif

/* The mappings of /proc/self/maps.  Under ASan its allocator maps new
 * anonymous regions whenever it likes, so only the io_uring mappings (the
 * ones a leaked ring would leave) are counted there. */
static int count_maps(const char *path)
{
	FILE *f = fopen(path, "r");
	char line[512];
	int n = 0;

	cr_assert_not_null(f);
	while (fgets(line, sizeof(line), f)) {
#ifdef UNDER_ASAN
		n += strstr(line, "io_uring") != NULL;
#else
		n += strchr(line, '\n') != NULL;
#endif
	}
	fclose(f);
	return n;
}

/* The check leaves no trace in the calling process. */
Test(verify, never_changes_the_caller)
{
	UNIT_REQUIRE_URING();
	struct iour_verify_req r[16];
	struct iour_verify_result res[16];
	const char *helper = helper_path();
	size_t n = nop_only_reqs(r);
	int fds, maps, threads, i;

	iour_verify(r, n, res, NULL); /* warm up lazily created state */
	fds = count_dir("/proc/self/fd");
	maps = count_maps("/proc/self/maps");
	threads = iour_task_thread_count();
	for (i = 0; i < 5; i++) {
		IOUR_OPTS(iour_verify_opts, o, .exec_path = (i & 1) ? helper : NULL);

		iour_verify(r, n, res, &o);
	}
	cr_assert_eq(count_dir("/proc/self/fd"), fds, "descriptor leak");
	cr_assert_eq(count_maps("/proc/self/maps"), maps, "mapping leak");
	cr_assert_eq(waitpid(-1, NULL, WNOHANG), -1, "a child was left behind");
	cr_assert_eq(errno, ECHILD);
	cr_assert_eq(iour_task_thread_count(), threads);

	/* a caller that ignores SIGCHLD (children are reaped by the kernel) */
	signal(SIGCHLD, SIG_IGN);
	cr_assert_eq(iour_verify(r, 1, res, NULL), 0);
	cr_assert_eq(iour_verify(r, n, res, NULL), -IOUR_ERRNO__NOT_ENFORCED);
	signal(SIGCHLD, SIG_DFL);
}

/* (e) every bad input. */
Test(verify, bad_input)
{
	UNIT_REQUIRE_URING();
	struct iour_verify_req r[2], ok = rq(IOUR_OP_NOP, IOUR_EXPECT_ALLOW), many[257];
	struct iour_verify_result res[2] = { { 77, 77, 77, 77 }, { 77, 77, 77, 77 } };
	struct {
		struct iour_verify_opts o;
		uint64_t extra;
	} bigo;
	struct {
		struct iour_verify_req q;
		uint64_t extra;
	} bigr[1];
	char longpath[IOUR_VERIFY_MAX_PATH + 2];
	char *argv[] = { "x", NULL };
	IOUR_OPTS(iour_verify_opts, o);
	int cnt = 0;

#define BAD(want, reqs, nr, opts)                                                         \
	do {                                                                              \
		int rc_ = iour_verify(reqs, nr, res, opts);                               \
		cr_assert_eq(rc_, want, "line %d: got %s", __LINE__, iour_errname(rc_)); \
		cr_assert_eq(res[0].res, 77, "results touched on an input error");       \
		cnt++;                                                                    \
	} while (0)

	init_addrs();
	BAD(-EINVAL, NULL, 1, NULL);
	BAD(-EINVAL, &ok, 0, NULL);
	memset(many, 0, sizeof(many));
	for (int i = 0; i < 257; i++)
		many[i] = ok;
	BAD(-EINVAL, many, 257, NULL);

	/* sz: too small, unaligned stride, mismatching elements */
	r[0] = ok;
	r[0].sz = 4;
	BAD(-EINVAL, r, 1, NULL);
	r[0].sz = sizeof(ok) + 4;
	BAD(-EINVAL, r, 1, NULL);
	r[0] = r[1] = ok;
	r[1].sz = offsetof(struct iour_verify_req, sqe_flags);
	BAD(-EINVAL, r, 2, NULL);
	/* a newer caller with unknown non-zero fields / zero fields */
	memset(bigr, 0, sizeof(bigr));
	bigr[0].q = ok;
	bigr[0].q.sz = sizeof(bigr[0]);
	bigr[0].extra = 1;
	BAD(-E2BIG, &bigr[0].q, 1, NULL);
	bigr[0].extra = 0;
	cr_assert_eq(iour_verify(&bigr[0].q, 1, NULL, NULL), 0);
	/* an older caller that stops after `expect` */
	r[0] = ok;
	r[0].sz = 16;
	cr_assert_eq(iour_verify(r, 1, NULL, NULL), 0);

	/* expectations and flags */
	r[0] = ok;
	r[0].expect = 0;
	BAD(-EINVAL, r, 1, NULL);
	r[0].expect = 3;
	BAD(-EINVAL, r, 1, NULL);
	r[0] = ok;
	r[0].sqe_flags = 0x20; /* BUFFER_SELECT */
	BAD(-EINVAL, r, 1, NULL);
	r[0].sqe_flags = 0x40; /* CQE_SKIP_SUCCESS */
	BAD(-EINVAL, r, 1, NULL);
	r[0].sqe_flags = 0x80;
	BAD(-EINVAL, r, 1, NULL);
	r[0] = ok;
	r[0].resv = 1;
	BAD(-EINVAL, r, 1, NULL);

	/* opcodes */
	r[0] = ok;
	r[0].opcode = 3; /* FSYNC */
	BAD(-EOPNOTSUPP, r, 1, NULL);
	r[0].opcode = 300;
	BAD(-EINVAL, r, 1, NULL);

	/* fields the opcode does not use */
	r[0] = ok;
	r[0].family = AF_INET;
	BAD(-EINVAL, r, 1, NULL);
	r[0] = ok;
	r[0].path = "/dev/null";
	BAD(-EINVAL, r, 1, NULL);
	r[0] = rq_socket(IOUR_EXPECT_ALLOW);
	r[0].addrlen = 4;
	BAD(-EINVAL, r, 1, NULL);
	r[0] = rq_socket(IOUR_EXPECT_ALLOW);
	r[0].open_flags = 1;
	BAD(-EINVAL, r, 1, NULL);
	r[0] = rq_open(IOUR_OP_OPENAT, "/dev/null", IOUR_EXPECT_ALLOW);
	r[0].protocol = 1;
	BAD(-EINVAL, r, 1, NULL);

	/* paths */
	r[0] = rq_open(IOUR_OP_OPENAT, NULL, IOUR_EXPECT_ALLOW);
	BAD(-EINVAL, r, 1, NULL);
	memset(longpath, 'a', sizeof(longpath) - 1);
	longpath[sizeof(longpath) - 1] = '\0';
	r[0] = rq_open(IOUR_OP_OPENAT2, longpath, IOUR_EXPECT_ALLOW);
	BAD(-EINVAL, r, 1, NULL);
	r[0] = rq_open(IOUR_OP_OPENAT, "/dev/null", IOUR_EXPECT_ALLOW);
	r[0].open_flags = 1ULL << 32;
	BAD(-EINVAL, r, 1, NULL);
	r[0] = rq_open(IOUR_OP_OPENAT, "/dev/null", IOUR_EXPECT_ALLOW);
	r[0].open_resolve = 1;
	BAD(-EINVAL, r, 1, NULL);

	/* addresses */
	r[0] = rq_connect(NULL, 16, IOUR_EXPECT_ALLOW);
	BAD(-EINVAL, r, 1, NULL);
	r[0] = rq_connect(&lo_port1, 0, IOUR_EXPECT_ALLOW);
	BAD(-EINVAL, r, 1, NULL);
	r[0] = rq_connect(&lo_port1, IOUR_VERIFY_MAX_ADDR + 1, IOUR_EXPECT_ALLOW);
	BAD(-EINVAL, r, 1, NULL);
	r[0] = rq_connect(&lo_port1, 1, IOUR_EXPECT_ALLOW); /* no family to take */
	BAD(-EINVAL, r, 1, NULL);

	/* options */
	r[0] = ok;
	o.flags = 1U << 5;
	BAD(-EINVAL, r, 1, &o);
	o.flags = IOUR_VERIFY_RING_FD;
	o.ring_fd = -1;
	BAD(-EINVAL, r, 1, &o);
	o.flags = 0;
	o.ring_fd = 3;
	BAD(-EINVAL, r, 1, &o);
	o.ring_fd = 0;
	o.ring_flags = 1U << 29;
	BAD(-EINVAL, r, 1, &o);
	o.ring_flags = KIO_SETUP_R_DISABLED;
	BAD(-EINVAL, r, 1, &o);
	o.ring_flags = KIO_SETUP_DEFER_TASKRUN;
	BAD(-EINVAL, r, 1, &o);
	o.ring_flags = KIO_SETUP_SQPOLL;
	BAD(-EOPNOTSUPP, r, 1, &o);
	o.ring_flags = KIO_SETUP_CQE_MIXED;
	BAD(-EOPNOTSUPP, r, 1, &o);
	o.ring_flags = 0;
	o.exec_path = "";
	BAD(-EINVAL, r, 1, &o);
	o.exec_path = NULL;
	o.exec_argv = argv;
	BAD(-EINVAL, r, 1, &o);
	o.exec_argv = NULL;
	o.sz = 4;
	BAD(-EINVAL, r, 1, &o);
	memset(&bigo, 0, sizeof(bigo));
	bigo.o.sz = sizeof(bigo);
	bigo.extra = 1;
	BAD(-E2BIG, r, 1, &bigo.o);
#undef BAD
	fprintf(stderr, "verify: %d bad inputs rejected before any child was created\n", cnt);
}

Test(verify, serve_errors)
{
	int pp[2], fd;

	unsetenv(IOUR_VERIFY_ENV);
	cr_assert_eq(iour_verify_serve(), -ENOENT);
	setenv(IOUR_VERIFY_ENV, "abc", 1);
	cr_assert_eq(iour_verify_serve(), -EINVAL);
	setenv(IOUR_VERIFY_ENV, "-3", 1);
	cr_assert_eq(iour_verify_serve(), -EINVAL);
	setenv(IOUR_VERIFY_ENV, "987", 1);
	cr_assert_eq(iour_verify_serve(), -EBADF);
	cr_assert_eq(pipe(pp), 0);
	{
		char v[16];

		snprintf(v, sizeof(v), "%d", pp[0]);
		setenv(IOUR_VERIFY_ENV, v, 1);
		cr_assert_eq(iour_verify_serve(), -EINVAL);
		/* a channel with garbage in it */
		fd = memfd_create("junk", MFD_CLOEXEC);
		cr_assert_geq(fd, 0);
		cr_assert_eq(ftruncate(fd, 4096), 0);
		cr_assert_eq(pwrite(fd, "garbage", 7, 0), 7);
		snprintf(v, sizeof(v), "%d", fd);
		setenv(IOUR_VERIFY_ENV, v, 1);
		cr_assert_eq(iour_verify_serve(), -EINVAL);
		cr_assert_geq(fcntl(fd, F_GETFD), 0, "a descriptor that is not a channel was closed");
		cr_assert_str_eq(getenv(IOUR_VERIFY_ENV), v);
		close(fd);
	}
	close(pp[0]);
	close(pp[1]);
	unsetenv(IOUR_VERIFY_ENV);
}
