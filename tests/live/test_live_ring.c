/* SPDX-License-Identifier: MIT */
/*
 * Live, ring level: the reference behaviours of
 * doc/kernel.md 8.1, produced through the library's policy
 * API (policy -> plan -> iour_plan__create_ring / iour_plan__apply_ring),
 * answered by the running kernel through liburing submissions, and
 * confirmed by the enforcement check in ring-fd mode.  These run on every
 * kernel with per-ring restrictions (5.10+), this one included.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "live.h"
#include "base/internal.h"
#include "ring_util.h"

#define SQE_FIXED 0x01
#define SQE_DRAIN 0x02
#define SQE_LINK 0x04
#define SQE_ASYNC 0x10

/* A ring created through a ring plan, mapped with liburing. */
struct pring {
	struct iour_policy *p;
	struct iour_plan *pl;
	struct iour_report *rep;
	struct io_uring ring;
	int fd;
};

static void pring_open(struct pring *r, struct iour_ruleset *rs, uint32_t dflt, int status)
{
	struct io_uring_params params;
	char why[256];
	int rc;

	memset(r, 0, sizeof(*r));
	r->fd = -1;
	cr_assert_eq(live_policy(&r->p, IOUR_POLICY_TARGET_RING, rs, NULL, dflt), 0);
	iour_ruleset__free(rs);
	rc = iour_policy__plan(r->p, NULL, &r->pl);
	cr_assert_eq(rc, 0, "plan: %s", iour_errname(rc));
	cr_assert(live_report_is(iour_plan__report(r->pl), status, IOUR_MECH_RING_DISABLED, why,
				 sizeof(why)), "planned: %s", why);
	memset(&params, 0, sizeof(params));
	rc = iour_plan__create_ring(r->pl, 8, &params, NULL, &r->fd, &r->rep);
	cr_assert_eq(rc, 0, "create_ring: %s", iour_errname(rc));
	cr_assert(live_report_is(r->rep, status, IOUR_MECH_RING_DISABLED, why, sizeof(why)),
		  "applied: %s", why);
	cr_assert_eq(ring_mmap(r->fd, &params, &r->ring), 0);
}

static void pring_close(struct pring *r)
{
	io_uring_queue_exit(&r->ring);
	iour_report__free(r->rep);
	iour_plan__free(r->pl);
	iour_policy__free(r->p);
}

static void check_verify(const struct iour_verify_req *reqs, size_t n, int fd, const char *what)
{
	char why[512];
	int rc = live_verify(reqs, n, LV_RING, fd, why, sizeof(why));

	cr_expect_eq(rc, 0, "%s: %s", what, why);
	if (rc == 0)
		live_log("%s: the enforcement check confirmed %zu answers on the ring", what, n);
}

/* register-restrictions.c "sqe_op": WRITEV and WRITE only. */
Test(live_ring, sqe_op_allow_list)
{
	static const uint32_t ops[] = { OP_WRITEV, OP_WRITE };
	struct pring r;
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	struct iovec wv = { .iov_base = "abcdefgh", .iov_len = 8 };
	char buf[8];
	struct iovec rv = { .iov_base = buf, .iov_len = 8 };
	int pfd[2], i, seen = 0;

	LIVE_REQUIRE(LIVE_RING);
	pring_open(&r, rs_make(ops, 2, 0, 0, NULL, -1), IOUR_POLICY_DEFAULT_DENY,
		   IOUR_STATUS_FULLY);
	live_print_plan(r.pl);
	cr_assert_eq(pipe(pfd), 0);
	sqe = io_uring_get_sqe(&r.ring);
	io_uring_prep_writev(sqe, pfd[1], &wv, 1, 0);
	sqe->user_data = 1;
	sqe = io_uring_get_sqe(&r.ring);
	io_uring_prep_readv(sqe, pfd[0], &rv, 1, 0);
	sqe->user_data = 2;
	cr_expect_eq(io_uring_submit(&r.ring), 2, "both SQEs are consumed");
	for (i = 0; i < 2; i++) {
		cr_assert_eq(io_uring_wait_cqe(&r.ring, &cqe), 0);
		if (cqe->user_data == 1) {
			cr_expect_eq(cqe->res, 8, "WRITEV allowed: %d", cqe->res);
			seen |= 1;
		} else if (cqe->user_data == 2) {
			cr_expect_eq(cqe->res, -EACCES, "READV denied: %d", cqe->res);
			seen |= 2;
		}
		io_uring_cqe_seen(&r.ring, cqe);
	}
	cr_expect_eq(seen, 3);
	{
		const struct iour_verify_req reqs[] = {
			live_req(OP_WRITEV, IOUR_EXPECT_ALLOW), live_req(OP_WRITE, IOUR_EXPECT_ALLOW),
			live_req(OP_READV, IOUR_EXPECT_DENY),   live_req(OP_READ, IOUR_EXPECT_DENY),
			live_req(OP_NOP, IOUR_EXPECT_DENY),
		};
		check_verify(reqs, 5, r.fd, "ring sqe_op");
	}
	close(pfd[0]);
	close(pfd[1]);
	pring_close(&r);
}

/* "register_op": only REGISTER_BUFFERS among the register opcodes. */
Test(live_ring, register_op_allow_list)
{
	static const uint32_t regs[] = { REG_BUFFERS };
	struct pring r;
	char mem[4096];
	struct iovec iov = { .iov_base = mem, .iov_len = sizeof(mem) };
	int pfd[2], rc;

	LIVE_REQUIRE(LIVE_RING);
	/* The request side is not restricted by the classic part, and the
	 * policy's default for unmentioned opcodes is "allow". */
	pring_open(&r, rs_make(NULL, -1, 0x7f, 0, regs, 1), IOUR_POLICY_DEFAULT_ALLOW,
		   IOUR_STATUS_FULLY);
	rc = io_uring_register_buffers(&r.ring, &iov, 1);
	cr_expect_eq(rc, 0, "REGISTER_BUFFERS allowed: %d", rc);
	cr_assert_eq(pipe(pfd), 0);
	rc = io_uring_register_files(&r.ring, pfd, 1);
	cr_expect_eq(rc, -EACCES, "REGISTER_FILES denied: %d", rc);
	{
		const struct iour_verify_req reqs[] = { live_req(OP_NOP, IOUR_EXPECT_ALLOW),
							live_req(OP_READ, IOUR_EXPECT_ALLOW) };
		check_verify(reqs, 2, r.fd, "ring register_op (request side open)");
	}
	close(pfd[0]);
	close(pfd[1]);
	pring_close(&r);
}

/* "fixed_file": WRITEV and READV, FIXED_FILE required, REGISTER_FILES. */
Test(live_ring, fixed_file_required)
{
	static const uint32_t ops[] = { OP_WRITEV, OP_READV };
	static const uint32_t regs[] = { REG_FILES };
	struct pring r;
	struct io_uring_sqe *sqe;
	struct iovec wv = { .iov_base = "abcdefgh", .iov_len = 8 };
	char buf[8];
	struct iovec rv = { .iov_base = buf, .iov_len = 8 };
	int pfd[2], res;

	LIVE_REQUIRE(LIVE_RING);
	pring_open(&r, rs_make(ops, 2, 0, SQE_FIXED, regs, 1), IOUR_POLICY_DEFAULT_DENY,
		   IOUR_STATUS_FULLY);
	cr_assert_eq(pipe(pfd), 0);
	cr_assert_eq(io_uring_register_files(&r.ring, pfd, 2), 0);
	sqe = io_uring_get_sqe(&r.ring);
	io_uring_prep_writev(sqe, 1, &wv, 1, 0);
	sqe->flags |= IOSQE_FIXED_FILE;
	res = live_submit(&r.ring, sqe);
	cr_expect_eq(res, 8, "WRITEV on fixed file 1: %d", res);
	sqe = io_uring_get_sqe(&r.ring);
	io_uring_prep_readv(sqe, 0, &rv, 1, 0);
	sqe->flags |= IOSQE_FIXED_FILE;
	res = live_submit(&r.ring, sqe);
	cr_expect_eq(res, 8, "READV on fixed file 0: %d", res);
	sqe = io_uring_get_sqe(&r.ring);
	io_uring_prep_writev(sqe, pfd[1], &wv, 1, 0);
	res = live_submit(&r.ring, sqe);
	cr_expect_eq(res, -EACCES, "WRITEV without FIXED_FILE: %d", res);
	close(pfd[0]);
	close(pfd[1]);
	pring_close(&r);
}

/* "flags": WRITEV; ASYNC and IO_LINK allowed, FIXED_FILE required; the
 * files are registered while the ring is still disabled, then the plan is
 * applied with iour_plan__apply_ring. */
Test(live_ring, sqe_flags_allowed_and_required)
{
	static const uint32_t ops[] = { OP_WRITEV };
	static const struct {
		uint8_t flags;
		bool allowed;
	} cases[] = {
		{ SQE_FIXED, true },		   { SQE_FIXED | SQE_ASYNC, true },
		{ SQE_FIXED | SQE_LINK, true },	   { SQE_FIXED | SQE_DRAIN, false },
		{ SQE_DRAIN, false },		   { SQE_ASYNC, false },
		{ 0, false },
	};
	struct iour_ruleset *rs = rs_make(ops, 1, SQE_ASYNC | SQE_LINK, SQE_FIXED, NULL, 0);
	struct iour_verify_req reqs[IOUR_ARRAY_SIZE(cases)];
	struct iour_report *rep = NULL;
	struct iour_policy *p;
	struct iour_plan *pl;
	struct io_uring ring;
	struct iovec wv = { .iov_base = "x", .iov_len = 1 };
	int pfd[2], rc;
	size_t i;
	char why[512];

	LIVE_REQUIRE(LIVE_RING);
	cr_assert_eq(live_policy(&p, IOUR_POLICY_TARGET_RING, rs, NULL, IOUR_POLICY_DEFAULT_DENY), 0);
	iour_ruleset__free(rs);
	cr_assert_eq(iour_policy__plan(p, NULL, &pl), 0);
	cr_assert_eq(ring_init_disabled(&ring, 0), 0);
	cr_assert_eq(pipe(pfd), 0);
	/* Index 0 is the pipe's write end. */
	cr_assert_eq(io_uring_register_files(&ring, &pfd[1], 1), 0, "files while disabled");
	rc = iour_plan__apply_ring(pl, ring.ring_fd, NULL, &rep);
	cr_assert_eq(rc, 0, "apply_ring: %s", iour_errname(rc));
	cr_assert(live_report_is(rep, IOUR_STATUS_FULLY, IOUR_MECH_RING_DISABLED, why, sizeof(why)),
		  "%s", why);
	for (i = 0; i < IOUR_ARRAY_SIZE(cases); i++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
		int res;

		io_uring_prep_writev(sqe, (cases[i].flags & SQE_FIXED) ? 0 : pfd[1], &wv, 1, 0);
		sqe->flags = cases[i].flags;
		res = live_submit(&ring, sqe);
		if (cases[i].allowed)
			cr_expect_eq(res, 1, "flags %#x allowed: %d", cases[i].flags, res);
		else
			cr_expect_eq(res, -EACCES, "flags %#x denied: %d", cases[i].flags, res);
		reqs[i] = live_req(OP_WRITEV, cases[i].allowed ? IOUR_EXPECT_ALLOW : IOUR_EXPECT_DENY);
		reqs[i].sqe_flags = cases[i].flags;
	}
	live_log("ring flags: %zu flag combinations answered as the policy says",
		 IOUR_ARRAY_SIZE(cases));
	check_verify(reqs, IOUR_ARRAY_SIZE(cases), ring.ring_fd, "ring flags");
	iour_report__free(rep);
	io_uring_queue_exit(&ring);
	close(pfd[0]);
	close(pfd[1]);
	iour_plan__free(pl);
	iour_policy__free(p);
}

/* "empty": nothing allowed at all. */
Test(live_ring, empty_set_denies_everything)
{
	struct pring r;
	char mem[64];
	struct iovec iov = { .iov_base = mem, .iov_len = sizeof(mem) };
	struct io_uring_sqe *sqe;
	int pfd[2], res;

	LIVE_REQUIRE(LIVE_RING);
	pring_open(&r, rs_make(NULL, 0, 0, 0, NULL, 0), IOUR_POLICY_DEFAULT_DENY,
		   IOUR_STATUS_FULLY);
	cr_assert_eq(pipe(pfd), 0);
	cr_expect_eq(io_uring_register_buffers(&r.ring, &iov, 1), -EACCES);
	cr_expect_eq(io_uring_register_files(&r.ring, pfd, 1), -EACCES);
	sqe = io_uring_get_sqe(&r.ring);
	io_uring_prep_writev(sqe, pfd[1], &iov, 1, 0);
	res = live_submit(&r.ring, sqe);
	cr_expect_eq(res, -EACCES, "WRITEV: %d", res);
	{
		const struct iour_verify_req reqs[] = { live_req(OP_NOP, IOUR_EXPECT_DENY),
							live_req(OP_WRITEV, IOUR_EXPECT_DENY),
							live_req(OP_READ, IOUR_EXPECT_DENY) };
		check_verify(reqs, 3, r.fd, "ring empty set");
	}
	close(pfd[0]);
	close(pfd[1]);
	pring_close(&r);
}

/* "rings_not_disabled": an enabled ring cannot be restricted; the
 * executor reports that nothing was applied. */
Test(live_ring, enabled_ring_is_refused)
{
	static const uint32_t ops[] = { OP_NOP };
	struct iour_ruleset *rs = rs_make(ops, 1, 0, 0, NULL, -1);
	struct iour_report *rep = NULL;
	struct iour_policy *p;
	struct iour_plan *pl;
	struct io_uring ring;
	uint32_t done = 1;
	int32_t err = 0;
	int rc;

	LIVE_REQUIRE(LIVE_RING);
	cr_assert_eq(live_policy(&p, IOUR_POLICY_TARGET_RING, rs, NULL, IOUR_POLICY_DEFAULT_DENY), 0);
	iour_ruleset__free(rs);
	cr_assert_eq(iour_policy__plan(p, NULL, &pl), 0);
	cr_assert_eq(io_uring_queue_init(8, &ring, 0), 0);
	rc = iour_plan__apply_ring(pl, ring.ring_fd, NULL, &rep);
	cr_expect_eq(rc, -EBADFD, "apply_ring on an enabled ring: %s", iour_errname(rc));
	cr_expect_eq(iour_report__status(rep), IOUR_STATUS_NOT_ENFORCED);
	cr_assert_eq(iour_report__steps(rep, &done, NULL), 0);
	cr_expect_eq(done, 0);
	cr_assert_eq(iour_report__error(rep, &err), 0);
	cr_expect_eq(err, -EBADFD);
	{
		const struct iour_verify_req reqs[] = { live_req(OP_NOP, IOUR_EXPECT_ALLOW),
							live_req(OP_READ, IOUR_EXPECT_ALLOW) };
		check_verify(reqs, 2, ring.ring_fd, "ring left unrestricted, as reported");
	}
	iour_report__free(rep);
	io_uring_queue_exit(&ring);
	iour_plan__free(pl);
	iour_policy__free(p);
}

/* "rings_disabled": a disabled ring cannot submit; the enforcement check
 * says so instead of checking anything. */
Test(live_ring, disabled_ring_cannot_submit)
{
	const struct iour_verify_req req = live_req(OP_NOP, IOUR_EXPECT_ALLOW);
	struct io_uring ring;
	int rc;

	LIVE_REQUIRE(LIVE_RING);
	cr_assert_eq(ring_init_disabled(&ring, 0), 0);
	rc = live_verify(&req, 1, LV_RING, ring.ring_fd, NULL, 0);
	cr_expect_eq(rc, -EBADFD, "verify on a disabled ring: %s", iour_errname(rc));
	cr_expect_eq(io_uring_submit(&ring), 0, "nothing was left queued");
	io_uring_queue_exit(&ring);
}

/* A task policy on this kernel, whatever it is, with the seccomp
 * companion: the report's claim is confirmed by the enforcement check.
 * Linux 7.0+: task restrictions, checked on a fresh ring.  Older kernels:
 * the rings made through the plan are restricted, and io_uring_setup
 * fails with ENOSYS for the task. */
static int task_policy_child(void *arg, struct child_msg *m)
{
	static const uint32_t ops[] = { OP_NOP, OP_READ };
	const struct iour_verify_req reqs[] = { live_req(OP_NOP, IOUR_EXPECT_ALLOW),
						live_req(OP_READ, IOUR_EXPECT_ALLOW),
						live_req(OP_WRITE, IOUR_EXPECT_DENY),
						live_req(OP_SOCKET, IOUR_EXPECT_DENY) };
	struct iour_ruleset *rs = rs_make(ops, 2, 0, 0, NULL, -1);
	struct iour_report *rep = NULL;
	struct iour_policy *p;
	struct iour_plan *pl;
	char why[512];
	int rc, fd = -1, st, task = *(int *)arg;

	CHK(m, live_policy(&p, IOUR_POLICY_TARGET_TASK, rs, NULL, IOUR_POLICY_DEFAULT_DENY) == 0);
	CHK(m, iour_policy__set_attr(p, IOUR_POLICY_ATTR_COMPANION, IOUR_POLICY_COMPANION_ENOSYS) ==
		       0);
	rc = iour_policy__plan(p, NULL, &pl);
	CHKF(m, rc == 0, "plan: %s", iour_errname(rc));
	if (!task) /* a ring through the plan, before the companion */
		CHKF(m, (rc = iour_plan__create_ring(pl, 8, NULL, NULL, &fd, NULL)) == 0,
		     "create_ring: %s", iour_errname(rc));
	rc = iour_plan__apply_task(pl, NULL, &rep);
	CHKF(m, rc == 0, "apply_task: %s", iour_errname(rc));
	live_print_report("task policy, applied", rep);
	st = iour_report__status(rep);
	if (task) {
		CHKF(m, live_report_is(rep, IOUR_STATUS_FULLY, IOUR_MECH_TASK, why, sizeof(why)), "%s",
		     why);
		rc = live_verify(reqs, 4, LV_PLAIN, -1, why, sizeof(why));
		CHKF(m, rc == 0, "fresh ring: %s", why);
	} else {
		CHKF(m, st == IOUR_STATUS_PARTIALLY &&
				(iour_report__mechanism(rep) & IOUR_MECH_COMPANION),
		     "%s", "a companion fallback is partial");
		/* The claim "io_uring_setup fails with ENOSYS". */
		rc = live_verify(reqs, 1, LV_PLAIN, -1, why, sizeof(why));
		CHKF(m, rc == -ENOSYS, "fresh ring after the companion: %s", why);
		/* The claim "rings created through the library are restricted". */
		rc = live_verify(reqs, 4, LV_RING, fd, why, sizeof(why));
		CHKF(m, rc == 0, "the plan's ring: %s", why);
		close(fd);
	}
	iour_report__free(rep);
	iour_plan__free(pl);
	iour_policy__free(p);
	return 0;
}

Test(live_ring, task_policy_report_confirmed)
{
	int task;

	LIVE_REQUIRE(LIVE_RING);
	task = live_missing(LIVE_TASK) == NULL;
	LIVE_CHILD(task_policy_child, &task);
	live_log("task policy on this kernel (%s): the report was confirmed by the enforcement "
		 "check", task ? "task restrictions" : "ring fallback and seccomp companion");
}

/* ---- ring-level argument filters (Linux 7.0+) ---- */

static void filter_ring(struct iour_filter *flt, const struct iour_verify_req *reqs, size_t n,
			const char *what, int deny_rest_op)
{
	struct iour_policy *p;
	struct iour_plan *pl;
	struct iour_report *rep = NULL;
	char why[256];
	int fd = -1, rc;

	cr_assert_eq(live_policy(&p, IOUR_POLICY_TARGET_RING, NULL, flt, IOUR_POLICY_DEFAULT_DENY), 0);
	iour_filter__free(flt);
	cr_assert_eq(iour_policy__plan(p, NULL, &pl), 0);
	if (deny_rest_op >= 0)
		cr_expect_eq(live_filter_flags(pl, (uint32_t)deny_rest_op) & 1, 1,
			     "%s: DENY_REST on the last filter", what);
	rc = iour_plan__create_ring(pl, 8, NULL, NULL, &fd, &rep);
	cr_assert_eq(rc, 0, "%s: create_ring: %s", what, iour_errname(rc));
	cr_expect(live_report_is(rep, IOUR_STATUS_FULLY, IOUR_MECH_RING, why, sizeof(why)), "%s: %s",
		  what, why);
	check_verify(reqs, n, fd, what);
	close(fd);
	iour_report__free(rep);
	iour_plan__free(pl);
	iour_policy__free(p);
}

Test(live_ring_bpf, socket_family)
{
	struct iour_filter *f = NULL;
	const struct iour_verify_req reqs[] = {
		live_socket(2, 1, IOUR_EXPECT_ALLOW), live_socket(10, 1, IOUR_EXPECT_DENY),
		live_socket(1, 1, IOUR_EXPECT_DENY), live_req(OP_NOP, IOUR_EXPECT_ALLOW),
		live_req(OP_READ, IOUR_EXPECT_DENY),
	};

	LIVE_REQUIRE(LIVE_RING_BPF);
	cr_assert_eq(live_rule(&f, OP_SOCKET, IOUR_ALLOW, IOUR_FIELD_SOCKET_FAMILY, IOUR_CMP_EQ, 2, 0,
			       IOUR_DENY), 0);
	cr_assert_eq(iour_filter__set_default(f, OP_NOP, IOUR_ALLOW), 0);
	filter_ring(f, reqs, IOUR_ARRAY_SIZE(reqs), "ring filter AF_INET only", -1);
}

Test(live_ring_bpf, socket_type)
{
	struct iour_filter *f = NULL;
	const struct iour_verify_req reqs[] = {
		live_socket(2, 1, IOUR_EXPECT_ALLOW), live_socket(10, 1, IOUR_EXPECT_ALLOW),
		live_socket(2, 1 | 02000000, IOUR_EXPECT_ALLOW), live_socket(2, 2, IOUR_EXPECT_DENY),
	};

	LIVE_REQUIRE(LIVE_RING_BPF);
	cr_assert_eq(live_rule(&f, OP_SOCKET, IOUR_ALLOW, IOUR_FIELD_SOCKET_TYPE, IOUR_CMP_EQ, 1, 0,
			       IOUR_DENY), 0);
	filter_ring(f, reqs, IOUR_ARRAY_SIZE(reqs), "ring filter SOCK_STREAM only", -1);
}

Test(live_ring_bpf, deny_rest)
{
	struct iour_filter *f = NULL;
	struct iour_verify_req reqs[] = {
		live_req(OP_NOP, IOUR_EXPECT_ALLOW), live_req(OP_NOP, IOUR_EXPECT_DENY),
		live_socket(2, 1, IOUR_EXPECT_DENY), live_req(OP_READ, IOUR_EXPECT_DENY),
	};

	LIVE_REQUIRE(LIVE_RING_BPF);
	reqs[1].sqe_flags = SQE_DRAIN;
	cr_assert_eq(live_rule(&f, OP_NOP, IOUR_ALLOW, IOUR_FIELD_SQE_FLAGS, IOUR_CMP_NONE_BITS,
			       SQE_DRAIN, 0, IOUR_DENY), 0);
	filter_ring(f, reqs, IOUR_ARRAY_SIZE(reqs), "ring filter NOP only, DENY_REST", OP_NOP);
}
