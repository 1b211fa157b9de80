/* SPDX-License-Identifier: MIT */
/*
 * Live attacks on the promises of doc/security.md §2 and §3 that the other
 * live files do not attack: every opcode denied as a whole, requests
 * reaching the gates through an SQPOLL thread or as a link member, the SQE
 * gate and filters of a ring created disabled under task restrictions,
 * threads before and after a task policy, rings that inherit task
 * restrictions (-EBUSY), a plan for another kernel (refused), and the
 * filter fields no other live test denies (SOCKET protocol and type flags,
 * OPENAT mode, ring-path OPENAT and CONNECT, IPv6 address prefixes).
 *
 * Every test does the forbidden thing on the running kernel and asserts
 * that it fails and had no effect.  The ring-level classic tests run on
 * every kernel with per-ring restrictions (this one, and the 7.x guest of
 * make check-newkernel); the task and filter tests need Linux 7.0+ (7.2 for
 * CONNECT) and skip elsewhere, saying why.  Only loopback addresses and
 * temporary paths are used.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "base/internal.h"
#include "live.h"
#include "ring_util.h"

#ifndef __NR_io_uring_register
#define __NR_io_uring_register 427
#endif
#ifndef __NR_io_uring_enter
#define __NR_io_uring_enter 426
#endif

#define AF_UNIX_ 1
#define AF_INET_ 2
#define AF_INET6_ 10
#define STREAM 1
#define SOCK_NONBLOCK_ 04000
#define SOCK_CLOEXEC_ 02000000
#define REG_ENABLE_RINGS 12

/* ---- helpers ---- */

/*
 * A ring created through a plan of a ring policy (classic part `rs`,
 * filters `flt`, both freed here), with the caller's setup `flags` and
 * SQPOLL idle time, mapped with liburing.  0, or -errno / library error;
 * the report must say fully enforced.
 */
/* The status plan_ring() and task_apply() expect: fully enforced, or
 * partially (a closed filter fallback) where a test says so. */
static int want_status = IOUR_STATUS_FULLY;

static int plan_ring(struct iour_ruleset *rs, struct iour_filter *flt, uint32_t dflt,
		     unsigned flags, struct io_uring *ring, char *why, size_t len)
{
	struct io_uring_params params;
	struct iour_report *rep = NULL;
	struct iour_policy *p = NULL;
	struct iour_plan *pl = NULL;
	int rc, fd = -1;

	rc = live_policy(&p, IOUR_POLICY_TARGET_RING, rs, flt, dflt);
	iour_ruleset__free(rs);
	iour_filter__free(flt);
	if (!rc)
		rc = iour_policy__plan(p, NULL, &pl);
	memset(&params, 0, sizeof(params));
	params.flags = flags;
	params.sq_thread_idle = 20000; /* ms: the SQPOLL thread stays awake */
	if (!rc)
		rc = iour_plan__create_ring(pl, 8, &params, NULL, &fd, &rep);
	if (!rc && !live_report_is(rep, want_status, 0, why, len))
		rc = -EPROTO;
	if (!rc && want_status != IOUR_STATUS_FULLY &&
	    !(iour_report__flags(rep) & IOUR_REPORT_TIGHTENED)) {
		snprintf(why, len, "%s", "the report is not marked tightened");
		rc = -EPROTO;
	}
	else if (rc)
		snprintf(why, len, "plan/create_ring: %s", iour_errname(rc));
	if (!rc && (rc = ring_mmap(fd, &params, ring)))
		snprintf(why, len, "mmap: %d", rc);
	if (rc && fd >= 0)
		close(fd);
	iour_report__free(rep);
	iour_plan__free(pl);
	iour_policy__free(p);
	return rc;
}

/* Publish every SQE prepared so far without any system call (SQPOLL). */
static void publish_sq(struct io_uring *ring)
{
	io_uring_smp_store_release(ring->sq.ktail, ring->sq.sqe_tail);
}

/* SQPOLL wakeups this process had to give (io_uring_enter with to_submit
 * 0 and IORING_ENTER_SQ_WAKEUP: the thread still does the submitting). */
static int sq_wakeups;

/*
 * Wait up to 10 s for `n` completions (polling the CQ ring); res[user_data]
 * receives each result.  Returns how many came.  On an SQPOLL ring whose
 * thread went to sleep (IORING_SQ_NEED_WAKEUP: it can fall asleep before
 * the ring is enabled, and then sleeps until woken), the thread is woken
 * with io_uring_enter(fd, 0, 0, SQ_WAKEUP): that call submits nothing
 * itself, so every request is still submitted by the SQPOLL thread.
 */
static int poll_cqes(struct io_uring *ring, int n, int *res, int nres)
{
	struct io_uring_cqe *cqe;
	int got = 0, i;

	for (i = 0; i < 10000 && got < n; i++) {
		while (got < n && io_uring_peek_cqe(ring, &cqe) == 0) {
			if (cqe->user_data < (uint64_t)nres)
				res[cqe->user_data] = cqe->res;
			io_uring_cqe_seen(ring, cqe);
			got++;
		}
		if (got >= n)
			break;
		if ((ring->flags & IORING_SETUP_SQPOLL) &&
		    (IO_URING_READ_ONCE(*ring->sq.kflags) & IORING_SQ_NEED_WAKEUP) &&
		    syscall(__NR_io_uring_enter, ring->ring_fd, 0, 0, IORING_ENTER_SQ_WAKEUP, NULL,
			    0) == 0)
			sq_wakeups++;
		usleep(1000);
	}
	return got;
}

/* Bytes waiting in a pipe (0 if empty: nothing was written). */
static int pipe_pending(int rfd)
{
	char buf[16];
	int fl = fcntl(rfd, F_GETFL);
	ssize_t n;

	fcntl(rfd, F_SETFL, fl | O_NONBLOCK);
	n = read(rfd, buf, sizeof(buf));
	fcntl(rfd, F_SETFL, fl);
	return n > 0 ? (int)n : 0;
}

static struct iour_filter *rule(uint32_t opcode, uint32_t verdict, uint32_t field, uint32_t op,
				uint64_t value, uint64_t arg, uint32_t dflt)
{
	struct iour_filter *f = NULL;

	if (live_rule(&f, opcode, verdict, field, op, value, arg, dflt)) {
		iour_filter__free(f);
		return NULL;
	}
	return f;
}

/* SOCKET AF_INET only, NOP allowed. */
static struct iour_filter *inet_only(void)
{
	struct iour_filter *f = rule(OP_SOCKET, IOUR_ALLOW, IOUR_FIELD_SOCKET_FAMILY, IOUR_CMP_EQ,
				     AF_INET_, 0, IOUR_DENY);

	if (f && iour_filter__set_default(f, OP_NOP, IOUR_ALLOW)) {
		iour_filter__free(f);
		return NULL;
	}
	return f;
}

/* ---- §2: every opcode can be denied as a whole ---- */

static bool supported(const struct iour_features *f, uint32_t op)
{
	return op < 256 && (f->supported_ops[op / 64] >> (op % 64)) & 1;
}

/*
 * Every request opcode the kernel supports, except NOP, as a zeroed SQE
 * (fd -1) on a ring that allows only NOP.  On a ring without SQE128, the
 * 128-byte opcodes (NOP128, URING_CMD128, Linux 6.19+) fail with -EINVAL
 * before the restriction is looked at (the kernel checks the SQE size
 * first); on an SQE128 ring they reach the gate and get -EACCES like the
 * rest.  Returns the number tried.
 */
static int deny_every_sqe_op(const struct iour_features *f, unsigned flags)
{
	static const uint32_t nop[] = { OP_NOP };
	struct io_uring ring;
	char why[256];
	int tried = 0, rc, fds;
	uint32_t op;

	rc = plan_ring(rs_make(nop, 1, 0, 0, NULL, 0), NULL, IOUR_POLICY_DEFAULT_DENY, flags,
		       &ring, why, sizeof(why));
	cr_assert_eq(rc, 0, "%s", why);
	fds = count_fds();
	for (op = 1; op < f->op_last; op++) {
		struct io_uring_sqe *sqe;
		int res, want = -EACCES;

		if (!supported(f, op))
			continue;
		if (!(flags & IORING_SETUP_SQE128) &&
		    (op == IOUR_OP_NOP128 || op == IOUR_OP_URING_CMD128))
			want = -EINVAL;
		sqe = io_uring_get_sqe(&ring);
		cr_assert_not_null(sqe);
		memset(sqe, 0, (flags & IORING_SETUP_SQE128) ? 128 : 64);
		sqe->opcode = (uint8_t)op;
		sqe->fd = -1;
		res = live_submit(&ring, sqe);
		cr_expect_eq(res, want, "opcode %u (%s), ring flags %#x: %d, expected %d", op,
			     iour_opcode_name(op), flags, res, want);
		tried++;
	}
	cr_expect_eq(count_fds(), fds, "no request created a file descriptor");
	io_uring_queue_exit(&ring);
	return tried;
}

Test(live_ring, every_supported_opcode_denied)
{
	const struct iour_features *f;
	int n, n128;

	LIVE_REQUIRE(LIVE_RING);
	f = live_features();
	cr_assert(f->op_last > 1 && f->nr_supported_ops > 1, "op_last %u, %u supported", f->op_last,
		  f->nr_supported_ops);
	n = deny_every_sqe_op(f, 0);
	/* SQE128 rings exist from 5.19: io_uring_setup refuses the flag
	 * with -EINVAL before (measured on 5.10). */
	{
		struct io_uring probe_ring;
		int prc = io_uring_queue_init(2, &probe_ring, IORING_SETUP_SQE128);

		if (prc == -EINVAL) {
			live_log("ring {NOP}: all %d other supported request opcodes (op_last %u) "
				 "denied: -EACCES; no SQE128 ring on this kernel (setup -EINVAL)",
				 n, f->op_last);
			return;
		}
		cr_assert_eq(prc, 0, "an SQE128 ring: %d", prc);
		io_uring_queue_exit(&probe_ring);
	}
	n128 = deny_every_sqe_op(f, IORING_SETUP_SQE128);
	cr_expect_eq(n, n128);
	live_log("ring {NOP}: all %d other supported request opcodes (op_last %u) denied: "
		 "-EACCES (NOP128 and URING_CMD128, if supported, -EINVAL before the gate on a "
		 "64-byte ring and -EACCES on an SQE128 ring)", n, f->op_last);
}

/*
 * Every register opcode below the kernel's IORING_REGISTER_LAST, with NULL
 * arguments, on an enabled ring whose set allows no register opcode: the
 * gate answers -EACCES before any handler looks at the arguments.  The one
 * exception is the library's split-gate sentinel (Linux 7.0+, ruleset.h):
 * ENABLE_RINGS stays allowed so that the register gate is on at all, and
 * answers -EBADFD on an enabled ring.
 */
Test(live_ring, every_register_opcode_denied)
{
	static const uint32_t nop[] = { OP_NOP };
	const struct iour_features *f;
	struct io_uring ring;
	char why[256];
	uint32_t op;
	int rc, denied = 0;

	LIVE_REQUIRE(LIVE_RING);
	f = live_features();
	cr_assert_gt(f->reg_last, REG_ENABLE_RINGS, "reg_last %u", f->reg_last);
	rc = plan_ring(rs_make(nop, 1, 0, 0, NULL, 0), NULL, IOUR_POLICY_DEFAULT_DENY, 0, &ring, why,
		       sizeof(why));
	cr_assert_eq(rc, 0, "%s", why);
	for (op = 0; op < f->reg_last; op++) {
		long r = syscall(__NR_io_uring_register, ring.ring_fd, op, NULL, 0);
		int err = r < 0 ? -errno : (int)r;
		int want = (f->split_gates && op == REG_ENABLE_RINGS) ? -EBADFD : -EACCES;

		cr_expect_eq(err, want, "register opcode %u (%s): %d, expected %d", op,
			     iour_register_op_name(op), err, want);
		denied += err == -EACCES;
	}
	/* Still restricted after all of that. */
	{
		const struct iour_verify_req reqs[] = { live_req(OP_NOP, IOUR_EXPECT_ALLOW),
							live_req(OP_READ, IOUR_EXPECT_DENY) };

		rc = live_verify(reqs, 2, LV_RING, ring.ring_fd, why, sizeof(why));
		cr_expect_eq(rc, 0, "%s", why);
	}
	io_uring_queue_exit(&ring);
	live_log("ring without register opcodes: %d of %u register opcodes -EACCES%s", denied,
		 f->reg_last,
		 f->split_gates ? "; ENABLE_RINGS (the split-gate sentinel) -EBADFD" : "");
}

/* ---- §2: SQPOLL and link members go through the same gates ---- */

/*
 * On `ring` (restricted so that `bad` is denied and NOP with IO_LINK is
 * allowed): `bad` alone, then the link NOP -> `bad`.  With `sqpoll` the SQEs
 * are only published in the SQ ring and the SQPOLL thread submits them (at
 * most woken by poll_cqes, which submits nothing); otherwise
 * io_uring_submit.  `bad` completes with -EACCES both times; the link head
 * never ran (-ECANCELED).
 */
static void attack_link(struct io_uring *ring, bool sqpoll,
			void (*prep_bad)(struct io_uring_sqe *sqe, void *arg), void *arg,
			const char *what)
{
	struct io_uring_sqe *sqe;
	int res[4] = { 1, 1, 1, 1 }, got, rc;

	sqe = io_uring_get_sqe(ring);
	prep_bad(sqe, arg);
	sqe->user_data = 1;
	if (sqpoll) {
		publish_sq(ring);
	} else {
		rc = io_uring_submit(ring);
		cr_assert_eq(rc, 1, "%s: submit: %d", what, rc);
	}
	got = poll_cqes(ring, 1, res, 4);
	cr_assert_eq(got, 1, "%s alone: no completion (SQ flags %#x)", what, *ring->sq.kflags);
	cr_expect_eq(res[1], -EACCES, "%s alone%s: %d", what, sqpoll ? " via SQPOLL" : "", res[1]);

	sqe = io_uring_get_sqe(ring);
	io_uring_prep_nop(sqe);
	sqe->flags = IOSQE_IO_LINK;
	sqe->user_data = 2;
	sqe = io_uring_get_sqe(ring);
	prep_bad(sqe, arg);
	sqe->user_data = 3;
	if (sqpoll) {
		publish_sq(ring);
	} else {
		rc = io_uring_submit(ring);
		cr_assert_eq(rc, 2, "%s: link submit: %d", what, rc);
	}
	got = poll_cqes(ring, 2, res, 4);
	cr_assert_eq(got, 2, "%s: link: %d completions", what, got);
	cr_expect_eq(res[3], -EACCES, "%s as the second link member%s: %d", what,
		     sqpoll ? " via SQPOLL" : "", res[3]);
	cr_expect_eq(res[2], -ECANCELED, "the link head NOP: %d", res[2]);
}

static void prep_write(struct io_uring_sqe *sqe, void *arg)
{
	io_uring_prep_write(sqe, *(int *)arg, "x", 1, 0);
}

Test(live_ring, forbidden_via_sqpoll_and_link)
{
	static const uint32_t nop[] = { OP_NOP };
	struct io_uring ring;
	char why[256];
	int pfd[2], rc, pass;

	LIVE_REQUIRE(LIVE_RING);
	cr_assert_eq(pipe(pfd), 0);
	for (pass = 0; pass < 2; pass++) {
		bool sqpoll = pass == 0;

		rc = plan_ring(rs_make(nop, 1, IOSQE_IO_LINK, 0, NULL, 0), NULL,
			       IOUR_POLICY_DEFAULT_DENY, sqpoll ? IORING_SETUP_SQPOLL : 0, &ring, why,
			       sizeof(why));
		cr_assert_eq(rc, 0, "%s", why);
		attack_link(&ring, sqpoll, prep_write, &pfd[1], "WRITE");
		io_uring_queue_exit(&ring);
		cr_expect_eq(pipe_pending(pfd[0]), 0, "nothing was written to the pipe");
	}
	/* The same WRITE is executed when allowed: the attack reaches it. */
	{
		static const uint32_t nw[] = { OP_NOP, OP_WRITE };
		int res[2] = { 1, 1 };
		struct io_uring_sqe *sqe;

		rc = plan_ring(rs_make(nw, 2, IOSQE_IO_LINK, 0, NULL, 0), NULL,
			       IOUR_POLICY_DEFAULT_DENY, IORING_SETUP_SQPOLL, &ring, why, sizeof(why));
		cr_assert_eq(rc, 0, "%s", why);
		sqe = io_uring_get_sqe(&ring);
		prep_write(sqe, &pfd[1]);
		sqe->user_data = 1;
		publish_sq(&ring);
		cr_assert_eq(poll_cqes(&ring, 1, res, 2), 1);
		cr_expect_eq(res[1], 1, "allowed WRITE via SQPOLL: %d", res[1]);
		cr_expect_eq(pipe_pending(pfd[0]), 1);
		io_uring_queue_exit(&ring);
	}
	close(pfd[0]);
	close(pfd[1]);
	live_log("ring {NOP}: WRITE via SQPOLL (no submitting io_uring_enter) and as the second member of "
		 "NOP->WRITE (SQPOLL and io_uring_enter): -EACCES, head -ECANCELED, nothing "
		 "written; an allowed WRITE via SQPOLL runs (SQPOLL thread woken %d times, "
		 "with to_submit 0)", sq_wakeups);
}

static void prep_socket6(struct io_uring_sqe *sqe, void *arg)
{
	(void)arg;
	io_uring_prep_socket(sqe, AF_INET6_, STREAM, 0, 0);
}

Test(live_ring_bpf, linked_and_sqpoll)
{
	struct io_uring ring;
	char why[256];
	int rc, pass, fds;

	LIVE_REQUIRE(LIVE_RING_BPF);
	fds = count_fds();
	for (pass = 0; pass < 2; pass++) {
		bool sqpoll = pass == 0;

		rc = plan_ring(NULL, inet_only(), IOUR_POLICY_DEFAULT_DENY,
			       sqpoll ? IORING_SETUP_SQPOLL : 0, &ring, why, sizeof(why));
		cr_assert_eq(rc, 0, "%s", why);
		attack_link(&ring, sqpoll, prep_socket6, NULL, "SOCKET(AF_INET6)");
		if (sqpoll) { /* the filter lets AF_INET through on this path */
			struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
			int res[2] = { -1, -1 };

			io_uring_prep_socket(sqe, AF_INET_, STREAM, 0, 0);
			sqe->user_data = 1;
			publish_sq(&ring);
			cr_assert_eq(poll_cqes(&ring, 1, res, 2), 1);
			cr_expect_geq(res[1], 0, "SOCKET(AF_INET) via SQPOLL: %d", res[1]);
			if (res[1] >= 0)
				close(res[1]);
		}
		io_uring_queue_exit(&ring);
	}
	cr_expect_eq(count_fds(), fds, "no socket was left behind");
	live_log("ring filter AF_INET only: SOCKET(AF_INET6) via SQPOLL and as the second link "
		 "member: -EACCES; SOCKET(AF_INET) via SQPOLL allowed (SQPOLL thread woken %d "
		 "times, with to_submit 0)", sq_wakeups);
}

/* ---- a plan for another kernel is refused on this one ---- */

Test(live_ring, forced_level_mismatch_refused)
{
	static const uint32_t nop[] = { OP_NOP };
	struct iour_ruleset *rs = rs_make(nop, 1, 0, 0, NULL, 0);
	const struct iour_features *f;
	struct iour_report *rep = NULL;
	struct iour_policy *p;
	struct iour_plan *pl;
	struct iour_decision d = { .sz = sizeof(d) };
	IOUR_OPTS(iour_plan_opts, o, .flags = IOUR_PLAN_FORCE_LEVEL);
	int rc, fd = 12345, fds, i, n, mismatch = 0;

	LIVE_REQUIRE(LIVE_RING);
	f = live_features();
	/* Level 3 describes Linux 6.18 (coupled gates, 63/36 opcodes), level
	 * 2 Linux 6.1 (49/26): pick the one this kernel is not. */
	o.level = f->split_gates ? IOUR_LEVEL_QUERY : IOUR_LEVEL_RING;
	if (!f->split_gates && f->op_last == 49)
		o.level = IOUR_LEVEL_QUERY;
	cr_assert_eq(live_policy(&p, IOUR_POLICY_TARGET_RING, rs, NULL, IOUR_POLICY_DEFAULT_DENY), 0);
	iour_ruleset__free(rs);
	rc = iour_policy__plan(p, &o, &pl);
	cr_assert_eq(rc, 0, "plan at level %u: %s", o.level, iour_errname(rc));
	fds = count_fds();
	rc = iour_plan__create_ring(pl, 8, NULL, NULL, &fd, &rep);
	cr_expect_eq(rc, -IOUR_ERRNO__KERNEL_MISMATCH, "create_ring of a level-%u plan: %s",
		     o.level, iour_errname(rc));
	cr_expect_eq(fd, 12345, "no ring fd written on error (policy.h): %d", fd);
	cr_expect_eq(count_fds(), fds, "no descriptor left behind");
	cr_assert_not_null(rep);
	cr_expect_eq(iour_report__status(rep), IOUR_STATUS_NOT_ENFORCED);
	n = iour_report__decision_cnt(rep);
	for (i = 0; i < n; i++)
		if (!iour_report__decision(rep, (size_t)i, &d) &&
		    d.reason == IOUR_REASON_KERNEL_MISMATCH)
			mismatch++;
	cr_expect_geq(mismatch, 1, "a KERNEL_MISMATCH decision");
	iour_report__free(rep);
	iour_plan__free(pl);
	iour_policy__free(p);
	live_log("a ring plan forced to level %u is refused on this kernel (op_last %u, %s "
		 "gates): KERNEL_MISMATCH, no fd, NOT_ENFORCED", o.level, f->op_last,
		 f->split_gates ? "split" : "coupled");
}

/* ---- task level (Linux 7.0+) ---- */

/* Plan and apply a task policy; the applied report's flags in *flags. */
static int task_apply(struct iour_ruleset *rs, struct iour_filter *flt, uint32_t threads,
		      int want_rc, int *flags, struct child_msg *m)
{
	struct iour_report *rep = NULL;
	struct iour_policy *p;
	struct iour_plan *pl;
	int rc;

	rc = live_policy(&p, IOUR_POLICY_TARGET_TASK, rs, flt, IOUR_POLICY_DEFAULT_DENY);
	iour_ruleset__free(rs);
	iour_filter__free(flt);
	CHKF(m, rc == 0, "policy: %s", iour_errname(rc));
	CHK(m, iour_policy__set_attr(p, IOUR_POLICY_ATTR_THREADS, threads) == 0);
	rc = iour_policy__plan(p, NULL, &pl);
	CHKF(m, rc == 0, "plan: %s", iour_errname(rc));
	rc = iour_plan__apply_task(pl, NULL, &rep);
	if (rc != want_rc) {
		char desc[1024] = "";
		size_t len = sizeof(desc);

		if (rep)
			(void)iour_report__describe(rep, desc, &len);
		CHKF(m, rc == want_rc, "apply_task: %s, expected %s; report: %.700s",
		     iour_errname(rc), iour_errname(want_rc), desc);
	}
	if (flags)
		*flags = iour_report__flags(rep);
	if (!rc) {
		char why[256];

		CHKF(m, live_report_is(rep, want_status, IOUR_MECH_TASK, why, sizeof(why)),
		     "%s", why);
		CHKF(m, want_status == IOUR_STATUS_FULLY ||
				(iour_report__flags(rep) & IOUR_REPORT_TIGHTENED),
		     "%s", "the report is not marked tightened");
	}
	iour_report__free(rep);
	iour_plan__free(pl);
	iour_policy__free(p);
	return 0;
}

/* An allow-everything task filter for `op` on fd -1: 0 or -errno. */
static int task_allow_filter(uint32_t op)
{
	static const struct iour_insn allow[] = { { 0x06, 0, 0, 1 } };
	struct {
		uint16_t cmd_type, cmd_flags;
		uint32_t resv;
		uint32_t opcode, flags, filter_len;
		uint8_t pdu_size, resv1[3];
		uint64_t filter_ptr, resv2[5];
	} bpf;

	_Static_assert(sizeof(bpf) == 72, "struct io_uring_bpf");
	memset(&bpf, 0, sizeof(bpf));
	bpf.cmd_type = 1; /* IO_URING_BPF_CMD_FILTER */
	bpf.opcode = op;
	bpf.filter_len = 1;
	bpf.filter_ptr = (uint64_t)(uintptr_t)allow;
	return syscall(__NR_io_uring_register, -1, 37 /* BPF_FILTER */, &bpf, 1) ? -errno : 0;
}

/* The task plan of disabled_child: its report's BPF_FILTER note and its
 * set's register entries, against what the probe measured (doc/kernel.md
 * 3.3). */
static int check_gate_plan(struct child_msg *m)
{
	static const uint32_t ops[] = { OP_NOP, OP_SOCKET };
	const bool gated =
		(live_features()->flags & IOUR_FEATURES_TASK_SET_GATES_FILTERS) != 0;
	const struct iour_report *r;
	struct iour_policy *p;
	struct iour_plan *pl;
	bool note = false, bpf = false, enable = false, other = false;
	size_t i, k;
	int rc;

	rc = live_policy(&p, IOUR_POLICY_TARGET_TASK, rs_make(ops, 2, 0, 0, NULL, 0), inet_only(),
			 IOUR_POLICY_DEFAULT_DENY);
	CHKF(m, rc == 0, "policy: %s", iour_errname(rc));
	CHK(m, iour_policy__plan(p, NULL, &pl) == 0);
	r = iour_plan__report(pl);
	for (i = 0; i < (size_t)iour_report__decision_cnt(r); i++) {
		struct iour_decision d = { .sz = sizeof(d) };

		if (!iour_report__decision(r, i, &d) && d.text &&
		    strstr(d.text, "lists register opcode BPF_FILTER"))
			note = true;
	}
	for (i = 0; i < (size_t)iour_plan__step_cnt(pl); i++) {
		struct iour_plan_step s = { .sz = sizeof(s) };
		uint8_t arg[4096];
		size_t len = sizeof(arg);

		CHK(m, iour_plan__step(pl, i, &s) == 0);
		if (s.op != IOUR_STEP_RESTRICTIONS || s.side != IOUR_STEP_TASK)
			continue;
		CHK(m, iour_plan__step_arg(pl, i, arg, &len) == 0);
		for (k = 16; k + 16 <= len; k += 16) { /* header, then 16-byte entries */
			if (arg[k] != 0 || arg[k + 1] != 0) /* IORING_RESTRICTION_REGISTER_OP */
				continue;
			bpf |= arg[k + 2] == 37;
			enable |= arg[k + 2] == REG_ENABLE_RINGS;
			other |= arg[k + 2] != 37 && arg[k + 2] != REG_ENABLE_RINGS;
		}
	}
	CHKF(m, note == gated && bpf == gated, "kernel %s the task's filters: note %d, BPF_FILTER %d",
	     gated ? "gates" : "does not gate", note, bpf);
	CHKF(m, enable && !other, "register entries: ENABLE_RINGS %d, others %d", enable, other);
	iour_plan__free(pl);
	iour_policy__free(p);
	return 0;
}

/*
 * security.md §3, a ring created disabled under task restrictions: a task
 * set {NOP, SOCKET} with no register opcode and an AF_INET-only SOCKET
 * filter; the disabled ring cannot register files (Linux 7.2 gates the
 * inherited register set before the ring is enabled), is enabled, and then
 * denies WRITE, SOCKET(AF_INET6) and REGISTER_BUFFERS.  Where the kernel
 * gates the task's filters by its set (7.3.4, doc/kernel.md 3.3) the set
 * lists BPF_FILTER: the task then adds allow-everything filters for WRITE
 * and SOCKET, which change nothing (a filter only adds denials).
 */
static int disabled_child(void *arg, struct child_msg *m)
{
	static const uint32_t ops[] = { OP_NOP, OP_SOCKET };
	const struct iour_verify_req reqs[] = {
		live_req(OP_NOP, IOUR_EXPECT_ALLOW), live_req(OP_WRITE, IOUR_EXPECT_DENY),
		live_socket(AF_INET_, STREAM, IOUR_EXPECT_ALLOW),
		live_socket(AF_INET6_, STREAM, IOUR_EXPECT_DENY),
	};
	struct io_uring ring;
	char mem[64], why[512];
	struct iovec iov = { .iov_base = mem, .iov_len = sizeof(mem) };
	int pfd[2], rc;

	(void)arg;
	if (check_gate_plan(m))
		return 1;
	if (task_apply(rs_make(ops, 2, 0, 0, NULL, 0), inet_only(), IOUR_POLICY_THREADS_REPORT, 0,
		       NULL, m))
		return 1;
	rc = task_allow_filter(OP_WRITE);
	CHKF(m, rc == 0, "the task's own WRITE filter: %d", rc);
	rc = task_allow_filter(OP_SOCKET);
	CHKF(m, rc == 0, "the task's own SOCKET filter: %d", rc);
	CHK(m, pipe(pfd) == 0);
	rc = ring_init_disabled(&ring, 0);
	CHKF(m, rc == 0, "a disabled ring: %d", rc);
	/* Measured on Linux 7.2: the inherited register gate already applies
	 * while the ring is disabled (security.md §3). */
	rc = io_uring_register_files(&ring, pfd, 2);
	CHKF(m, rc == -EACCES, "REGISTER_FILES while disabled: %d", rc);
	rc = syscall(__NR_io_uring_register, ring.ring_fd, REG_ENABLE_RINGS, NULL, 0) ? -errno : 0;
	CHKF(m, rc == 0, "enable: %d", rc);
	rc = io_uring_register_buffers(&ring, &iov, 1);
	CHKF(m, rc == -EACCES, "REGISTER_BUFFERS after enable: %d", rc);
	{
		struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
		int res;

		CHK(m, sqe != NULL);
		io_uring_prep_write(sqe, pfd[1], "x", 1, 0);
		res = live_submit(&ring, sqe);
		CHKF(m, res == -EACCES, "WRITE: %d", res);
		CHKF(m, pipe_pending(pfd[0]) == 0, "%s", "nothing written");
	}
	/* Last: the check in ring-fd mode moves the ring's indexes. */
	rc = live_verify(reqs, IOUR_ARRAY_SIZE(reqs), LV_RING, ring.ring_fd, why, sizeof(why));
	CHKF(m, rc == 0, "the enabled ring: %.800s", why);
	io_uring_queue_exit(&ring);
	close(pfd[0]);
	close(pfd[1]);
	return 0;
}

Test(live_task, disabled_ring_still_gated)
{
	LIVE_REQUIRE(LIVE_TASK | LIVE_TASK_BPF);
	LIVE_CHILD(disabled_child, NULL);
	live_log("task {NOP, SOCKET} + AF_INET filter (set lists BPF_FILTER: %s), then the task's "
		 "own allow-all WRITE and SOCKET filters: a ring created disabled: REGISTER_FILES "
		 "-EACCES while disabled; once enabled WRITE, SOCKET(AF_INET6), REGISTER_BUFFERS "
		 "denied",
		 (live_features()->flags & IOUR_FEATURES_TASK_SET_GATES_FILTERS) ? "yes" : "no");
}

/* ring.h: -EBUSY when new rings inherit the task's restrictions. */
static int ebusy_child(void *arg, struct child_msg *m)
{
	static const uint32_t ops[] = { OP_NOP };
	struct iour_ruleset *rs;
	struct io_uring ring;
	int rc, fd = 4321, fds;

	(void)arg;
	if (task_apply(rs_make(ops, 1, 0, 0, NULL, -1), NULL, IOUR_POLICY_THREADS_REPORT, 0, NULL,
		       m))
		return 1;
	rs = rs_make(ops, 1, 0, 0, NULL, -1);
	fds = count_fds();
	rc = iour_ring_create(8, NULL, rs, NULL, &fd);
	CHKF(m, rc == -EBUSY, "iour_ring_create: %s", iour_errname(rc));
	CHKF(m, fd == -1, "fd %d", fd);
	CHKF(m, count_fds() == fds, "%s", "no descriptor leaked");
	CHK(m, ring_init_disabled(&ring, 0) == 0);
	rc = iour_ring_apply(ring.ring_fd, rs, NULL);
	CHKF(m, rc == -EBUSY, "iour_ring_apply: %s", iour_errname(rc));
	io_uring_queue_exit(&ring);
	iour_ruleset__free(rs);
	return 0;
}

Test(live_task, ring_restrictions_ebusy_under_task_set)
{
	LIVE_REQUIRE(LIVE_TASK);
	LIVE_CHILD(ebusy_child, NULL);
	live_log("task {NOP}: iour_ring_create and iour_ring_apply answer -EBUSY, no fd");
}

/* ---- threads before and after a task policy ---- */

struct thr {
	int rfd;  /* a pipe with data to READ */
	int go;   /* pipe: the thread waits for a byte */
	int res;  /* READ's result on the thread's own new ring */
	int nop;  /* NOP's result */
};

static void *thr_main(void *arg)
{
	struct thr *t = arg;
	struct io_uring ring;
	struct io_uring_sqe *sqe;
	char c, buf[4];

	if (t->go >= 0 && read(t->go, &c, 1) != 1)
		return NULL;
	if (io_uring_queue_init(8, &ring, 0)) {
		t->res = -9999;
		return NULL;
	}
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_nop(sqe);
	t->nop = live_submit(&ring, sqe);
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_read(sqe, t->rfd, buf, 1, 0);
	t->res = live_submit(&ring, sqe);
	io_uring_queue_exit(&ring);
	return NULL;
}

static int threads_child(void *arg, struct child_msg *m)
{
	static const uint32_t ops[] = { OP_NOP };
	struct thr a = { -1, -1, 1, 1 }, b = { -1, -1, 1, 1 };
	pthread_t ta, tb;
	int data[2], go[2], flags = 0;

	(void)arg;
	CHK(m, pipe(data) == 0 && write(data[1], "ab", 2) == 2 && pipe(go) == 0);
	a.rfd = b.rfd = data[0];
	a.go = go[0];
	CHK(m, pthread_create(&ta, NULL, thr_main, &a) == 0);
	if (task_apply(rs_make(ops, 1, 0, 0, NULL, -1), NULL, IOUR_POLICY_THREADS_REPORT, 0,
		       &flags, m))
		return 1;
	CHKF(m, flags & IOUR_REPORT_OTHER_THREADS, "report flags %#x lack OTHER_THREADS", flags);
	/* Thread A existed before: its new ring is not restricted (the
	 * documented caveat). */
	CHK(m, write(go[1], "g", 1) == 1);
	CHK(m, pthread_join(ta, NULL) == 0);
	CHKF(m, a.nop == 0 && a.res == 1, "thread A (before): NOP %d, READ %d", a.nop, a.res);
	/* Thread B is created afterwards: it inherits the task set. */
	CHK(m, pthread_create(&tb, NULL, thr_main, &b) == 0);
	CHK(m, pthread_join(tb, NULL) == 0);
	CHKF(m, b.nop == 0 && b.res == -EACCES, "thread B (after): NOP %d, READ %d", b.nop, b.res);
	/* The calling thread itself. */
	{
		struct thr c = { data[0], -1, 1, 1 };

		thr_main(&c);
		CHKF(m, c.nop == 0 && c.res == -EACCES, "caller: NOP %d, READ %d", c.nop, c.res);
	}
	return 0;
}

static int refuse_child(void *arg, struct child_msg *m)
{
	static const uint32_t ops[] = { OP_NOP };
	struct thr a = { -1, -1, 1, 1 };
	struct iour_features f = { .sz = sizeof(f) };
	IOUR_OPTS(iour_probe_opts, po, .flags = IOUR_PROBE_NO_CACHE);
	pthread_t ta;
	int data[2], go[2];

	(void)arg;
	CHK(m, pipe(data) == 0 && write(data[1], "ab", 2) == 2 && pipe(go) == 0);
	a.rfd = data[0];
	a.go = go[0];
	CHK(m, pthread_create(&ta, NULL, thr_main, &a) == 0);
	if (task_apply(rs_make(ops, 1, 0, 0, NULL, -1), NULL, IOUR_POLICY_THREADS_REFUSE, -EBUSY,
		       NULL, m))
		return 1;
	CHK(m, iour_probe(&po, &f) == 0);
	CHKF(m, f.task_restrictions == IOUR_AVAIL_YES,
	     "after the refusal the task is still unrestricted: %u", f.task_restrictions);
	CHK(m, write(go[1], "g", 1) == 1);
	CHK(m, pthread_join(ta, NULL) == 0);
	CHKF(m, a.res == 1, "thread A: READ %d", a.res);
	return 0;
}

Test(live_task, threads_before_and_after)
{
	LIVE_REQUIRE(LIVE_TASK);
	LIVE_CHILD(threads_child, NULL);
	LIVE_CHILD(refuse_child, NULL);
	live_log("task {NOP} with a thread running: OTHER_THREADS reported; that thread's new "
		 "ring runs READ (not covered, documented); a thread created afterwards and the "
		 "caller get READ -EACCES; THREADS_REFUSE gives -EBUSY with nothing applied");
}

/* ---- filter fields no other live test denies ---- */

static int add_rule(struct iour_filter *f, uint32_t opcode, uint32_t verdict, uint32_t field,
		    uint32_t op, uint64_t value, uint64_t arg, const uint8_t *addr6)
{
	struct iour_cmp c;

	memset(&c, 0, sizeof(c));
	c.sz = sizeof(c);
	c.field = field;
	c.op = op;
	c.value = value;
	c.arg = arg;
	if (addr6)
		memcpy(c.addr6, addr6, 16);
	return iour_filter__add_rule(f, opcode, verdict, &c, 1);
}

/* SOCKET: deny SOCK_NONBLOCK, then allow protocol 0 or IPPROTO_TCP, deny
 * the rest; OPENAT: deny a mode with S_IWOTH; NOP allowed. */
static struct iour_filter *fields_filter(void)
{
	struct iour_filter *f = NULL;

	if (iour_filter__new(NULL, &f) ||
	    add_rule(f, OP_SOCKET, IOUR_DENY, IOUR_FIELD_SOCKET_TYPE_FLAGS, IOUR_CMP_ANY_BITS,
		     SOCK_NONBLOCK_, 0, NULL) ||
	    add_rule(f, OP_SOCKET, IOUR_ALLOW, IOUR_FIELD_SOCKET_PROTOCOL, IOUR_CMP_LE, 6, 0, NULL) ||
	    add_rule(f, OP_OPENAT, IOUR_DENY, IOUR_FIELD_OPEN_MODE, IOUR_CMP_ANY_BITS, S_IWOTH, 0,
		     NULL) ||
	    iour_filter__set_default(f, OP_SOCKET, IOUR_DENY) ||
	    iour_filter__set_default(f, OP_OPENAT, IOUR_ALLOW) ||
	    iour_filter__set_default(f, OP_NOP, IOUR_ALLOW)) {
		iour_filter__free(f);
		return NULL;
	}
	return f;
}

struct fields_case {
	char dir[4096];
	char p_bad[4200], p_ok[4200];
	struct iour_verify_req r[7];
};

static void fields_reqs(struct fields_case *c)
{
	cr_assert_eq(test_tmp_template(c->dir, sizeof(c->dir), "iour-attack-", NULL), 0);
	cr_assert_not_null(mkdtemp(c->dir));
	snprintf(c->p_bad, sizeof(c->p_bad), "%s/world-writable", c->dir);
	snprintf(c->p_ok, sizeof(c->p_ok), "%s/private", c->dir);
	c->r[0] = live_socket(AF_INET_, STREAM | SOCK_CLOEXEC_, IOUR_EXPECT_ALLOW);
	c->r[1] = live_socket(AF_INET_, STREAM | SOCK_NONBLOCK_, IOUR_EXPECT_DENY);
	c->r[2] = live_socket(AF_INET_, STREAM, IOUR_EXPECT_ALLOW);
	c->r[2].protocol = 6; /* IPPROTO_TCP */
	c->r[3] = live_socket(AF_INET_, STREAM, IOUR_EXPECT_DENY);
	c->r[3].protocol = 132; /* IPPROTO_SCTP */
	c->r[4] = live_open(OP_OPENAT, c->p_bad, O_CREAT | O_WRONLY, 0, IOUR_EXPECT_DENY);
	c->r[4].open_mode = 0602;
	c->r[5] = live_open(OP_OPENAT, c->p_ok, O_CREAT | O_WRONLY, 0, IOUR_EXPECT_ALLOW);
	c->r[5].open_mode = 0600;
	c->r[6] = live_req(OP_NOP, IOUR_EXPECT_ALLOW);
	/* Debian's 7.3.4 leaves SOCK_NONBLOCK/SOCK_CLOEXEC out of the payload
	 * (doc/kernel.md 4.3): the plan cannot run the SOCK_NONBLOCK rule and
	 * falls back closed, so every SOCKET request is denied. */
	if (live_features()->flags & IOUR_FEATURES_SOCKET_FLAGS_HIDDEN) {
		for (int i = 0; i < 4; i++)
			c->r[i].expect = IOUR_EXPECT_DENY;
		want_status = IOUR_STATUS_PARTIALLY;
		live_log("%s", "SOCKET type flags hidden by this kernel: SOCKET expected denied "
				"(fallback closed)");
	}
}

static void fields_cleanup(struct fields_case *c)
{
	cr_expect_neq(access(c->p_bad, F_OK), 0, "the denied OPENAT created no file");
	unlink(c->p_bad);
	unlink(c->p_ok);
	rmdir(c->dir);
}

Test(live_ring_bpf, socket_protocol_type_flags_open_mode)
{
	struct fields_case c;
	struct io_uring ring;
	char why[1024];
	int rc;

	LIVE_REQUIRE(LIVE_RING_BPF);
	fields_reqs(&c);
	rc = plan_ring(NULL, fields_filter(), IOUR_POLICY_DEFAULT_DENY, 0, &ring, why, sizeof(why));
	cr_assert_eq(rc, 0, "%s", why);
	rc = live_verify(c.r, IOUR_ARRAY_SIZE(c.r), LV_RING, ring.ring_fd, why, sizeof(why));
	cr_expect_eq(rc, 0, "%s", why);
	io_uring_queue_exit(&ring);
	fields_cleanup(&c);
	live_log("ring filters: SOCK_NONBLOCK, protocol SCTP and OPENAT mode 0602 denied; "
		 "SOCK_CLOEXEC, IPPROTO_TCP, mode 0600 allowed; no file created");
}

static int fields_child(void *arg, struct child_msg *m)
{
	struct fields_case *c = arg;
	char why[1024];
	int rc;

	if (task_apply(NULL, fields_filter(), IOUR_POLICY_THREADS_REPORT, 0, NULL, m))
		return 1;
	rc = live_verify(c->r, IOUR_ARRAY_SIZE(c->r), LV_PLAIN, -1, why, sizeof(why));
	CHKF(m, rc == 0, "fresh ring: %.800s", why);
	unlink(c->p_ok);
	rc = live_verify(c->r, IOUR_ARRAY_SIZE(c->r), LV_EXEC, -1, why, sizeof(why));
	CHKF(m, rc == 0, "after execve: %.800s", why);
	return 0;
}

Test(live_task_bpf, socket_protocol_type_flags_open_mode)
{
	struct fields_case c;

	LIVE_REQUIRE(LIVE_TASK | LIVE_TASK_BPF);
	fields_reqs(&c);
	LIVE_CHILD(fields_child, &c);
	fields_cleanup(&c);
	live_log("task filters: SOCK_NONBLOCK, protocol SCTP and OPENAT mode 0602 denied on a "
		 "fresh ring and after execve; no file created");
}

/* CONNECT on the ring path (7.2): port 22 denied, ::1/128 denied (an addr6
 * prefix rule), IPv4 loopback port 1 allowed (refused by the network). */
struct sin4 {
	uint16_t family, port;
	uint32_t addr;
	uint8_t zero[8];
};
struct sin6 {
	uint16_t family, port;
	uint32_t flow;
	uint8_t addr[16];
	uint32_t scope;
};
static const struct sin4 lo_1 = { AF_INET_, 0x0100, 0x0100007f, { 0 } };
static const struct sin4 lo_22 = { AF_INET_, 0x1600, 0x0100007f, { 0 } };
static const struct sin6 lo6_1 = { AF_INET6_, 0x0100, 0, { [15] = 1 }, 0 };

static struct iour_filter *connect_filter(void)
{
	static const uint8_t lo6[16] = { [15] = 1 };
	struct iour_filter *f = NULL;

	if (iour_filter__new(NULL, &f) ||
	    add_rule(f, OP_CONNECT, IOUR_DENY, IOUR_FIELD_CONNECT_PORT, IOUR_CMP_EQ, 22, 0, NULL) ||
	    add_rule(f, OP_CONNECT, IOUR_DENY, IOUR_FIELD_CONNECT_ADDR6, IOUR_CMP_IN_PREFIX, 0, 128,
		     lo6) ||
	    iour_filter__set_default(f, OP_CONNECT, IOUR_ALLOW) ||
	    iour_filter__set_default(f, OP_NOP, IOUR_ALLOW)) {
		iour_filter__free(f);
		return NULL;
	}
	return f;
}

static const struct iour_verify_req r_connect[] = {
	{ .sz = sizeof(struct iour_verify_req), .opcode = OP_CONNECT, .expect = IOUR_EXPECT_ALLOW,
	  .addr = &lo_1, .addrlen = sizeof(lo_1) },
	{ .sz = sizeof(struct iour_verify_req), .opcode = OP_CONNECT, .expect = IOUR_EXPECT_DENY,
	  .addr = &lo_22, .addrlen = sizeof(lo_22) },
	{ .sz = sizeof(struct iour_verify_req), .opcode = OP_CONNECT, .expect = IOUR_EXPECT_DENY,
	  .addr = &lo6_1, .addrlen = sizeof(lo6_1) },
	/* addr_len 24 (SIN6_LEN_RFC2133, no sin6_scope_id): the kernel fills
	 * the address from it, so the ::1/128 rule denies this too (the
	 * library's model said "allow" before 1.1.0, doc/kernel.md 4.3) */
	{ .sz = sizeof(struct iour_verify_req), .opcode = OP_CONNECT, .expect = IOUR_EXPECT_DENY,
	  .addr = &lo6_1, .addrlen = 24 },
};

Test(live_ring_bpf, connect_port_and_addr6_prefix)
{
	struct io_uring ring;
	char why[1024];
	int rc;

	LIVE_REQUIRE(LIVE_RING_BPF | LIVE_CONNECT);
	rc = plan_ring(NULL, connect_filter(), IOUR_POLICY_DEFAULT_DENY, 0, &ring, why,
		       sizeof(why));
	cr_assert_eq(rc, 0, "%s", why);
	rc = live_verify(r_connect, IOUR_ARRAY_SIZE(r_connect), LV_RING, ring.ring_fd, why,
			 sizeof(why));
	cr_expect_eq(rc, 0, "%s", why);
	io_uring_queue_exit(&ring);
	live_log("ring filter CONNECT: 127.0.0.1:22 and [::1]:1 (addr6 in ::1/128, addr_len 28 "
		 "and 24) denied, 127.0.0.1:1 allowed");
}

static int connect_child(void *arg, struct child_msg *m)
{
	char why[1024];
	int rc;

	(void)arg;
	if (task_apply(NULL, connect_filter(), IOUR_POLICY_THREADS_REPORT, 0, NULL, m))
		return 1;
	rc = live_verify(r_connect, IOUR_ARRAY_SIZE(r_connect), LV_PLAIN, -1, why, sizeof(why));
	CHKF(m, rc == 0, "fresh ring: %.800s", why);
	return 0;
}

Test(live_task_bpf, connect_addr6_prefix)
{
	LIVE_REQUIRE(LIVE_TASK | LIVE_TASK_BPF | LIVE_CONNECT);
	LIVE_CHILD(connect_child, NULL);
	live_log("task filter CONNECT: [::1]:1 (addr6 in ::1/128) and port 22 denied, "
		 "127.0.0.1:1 allowed");
}

/* The requests above on an unrestricted ring: none is denied, so the deny
 * answers above come from the filters (runs on every kernel). */
Test(live_ring, attack_requests_answered_unrestricted)
{
	struct fields_case c;
	struct iour_verify_req all[16];
	char why[1024];
	size_t i, n = 0;
	int rc;

	LIVE_REQUIRE(LIVE_RING);
	fields_reqs(&c);
	for (i = 0; i < IOUR_ARRAY_SIZE(c.r); i++)
		all[n++] = c.r[i];
	for (i = 0; i < IOUR_ARRAY_SIZE(r_connect); i++)
		all[n++] = r_connect[i];
	/* Opcodes the kernel does not know (SOCKET before 5.19) are refused
	 * unrun (doc/kernel.md 1.7): expected denied there. */
	for (i = 0; i < n; i++)
		all[i].expect = all[i].opcode < live_features()->op_last ? IOUR_EXPECT_ALLOW :
									   IOUR_EXPECT_DENY;
	rc = live_verify(all, n, LV_PLAIN, -1, why, sizeof(why));
	cr_expect_eq(rc, 0, "%s", why);
	unlink(c.p_bad);
	unlink(c.p_ok);
	rmdir(c.dir);
	live_log("the attack tests' %zu requests are answered (none denied) on an unrestricted "
		 "ring", n);
}

/* ---- a filter shadowed by the classic allow-list ---- */

/* Whether the report holds a NOTE with reason SHADOWED for `opcode`. */
static int shadowed_noted(const struct iour_report *r, uint32_t opcode)
{
	struct iour_decision d = { .sz = sizeof(d) };
	int i, n = iour_report__decision_cnt(r), found = 0;

	for (i = 0; i < n; i++)
		if (!iour_report__decision(r, (size_t)i, &d) && d.kind == IOUR_DECISION_NOTE &&
		    d.reason == IOUR_REASON_SHADOWED && d.opcode == opcode)
			found++;
	return found;
}

/*
 * design.md: a classic allow-list {NOP} with an allow rule for SOCKET
 * AF_INET: the plan notes that the rule is never used, and the kernel
 * denies SOCKET(AF_INET) whatever the filter says (on 7.x the filter is
 * registered too; before 7.0 there are no filters, and the classic gate
 * alone answers).
 */
Test(live_ring, shadowed_filter_noted_and_denied)
{
	static const uint32_t nop[] = { OP_NOP };
	struct iour_ruleset *rs = rs_make(nop, 1, 0, 0, NULL, -1);
	struct iour_report *rep = NULL;
	struct iour_filter *flt;
	struct iour_policy *p;
	struct iour_plan *pl;
	const struct iour_verify_req reqs[] = { live_socket(AF_INET_, STREAM, IOUR_EXPECT_DENY),
						live_socket(AF_INET6_, STREAM, IOUR_EXPECT_DENY),
						live_req(OP_NOP, IOUR_EXPECT_ALLOW) };
	char why[512];
	int rc, fd = -1;

	LIVE_REQUIRE(LIVE_RING);
	flt = inet_only();
	cr_assert_eq(live_policy(&p, IOUR_POLICY_TARGET_RING, rs, flt, IOUR_POLICY_DEFAULT_DENY), 0);
	iour_ruleset__free(rs);
	iour_filter__free(flt);
	rc = iour_policy__plan(p, NULL, &pl);
	cr_assert_eq(rc, 0, "plan: %s", iour_errname(rc));
	cr_expect_eq(shadowed_noted(iour_plan__report(pl), OP_SOCKET), 1,
		     "the plan notes the shadowed SOCKET rule once");
	rc = iour_plan__create_ring(pl, 8, NULL, NULL, &fd, &rep);
	cr_assert_eq(rc, 0, "create_ring: %s", iour_errname(rc));
	cr_expect_eq(shadowed_noted(rep, OP_SOCKET), 1, "the applied report notes it too");
	rc = live_verify(reqs, IOUR_ARRAY_SIZE(reqs), LV_RING, fd, why, sizeof(why));
	cr_expect_eq(rc, 0, "%s", why);
	close(fd);
	iour_report__free(rep);
	iour_plan__free(pl);
	iour_policy__free(p);
	live_log("classic {NOP} + SOCKET AF_INET allow rule: SHADOWED noted; SOCKET(AF_INET) "
		 "denied by the kernel");
}

/*
 * security.md §3: restrictions registered on a ring itself do not gate its
 * register operations until it is enabled (files can be registered in
 * between); once enabled, the same operation is denied.
 */
Test(live_ring, disabled_ring_register_gate_starts_at_enable)
{
	static const uint32_t nop[] = { OP_NOP };
	struct iour_ruleset *rs = rs_make(nop, 1, 0, 0, NULL, 0);
	IOUR_OPTS(iour_ring_apply_opts, o, .flags = IOUR_RING_APPLY_NO_ENABLE);
	struct io_uring ring;
	int pfd[2], rc;

	LIVE_REQUIRE(LIVE_RING);
	cr_assert_eq(pipe(pfd), 0);
	cr_assert_eq(ring_init_disabled(&ring, 0), 0);
	rc = iour_ring_apply(ring.ring_fd, rs, &o);
	cr_assert_eq(rc, 0, "apply, not enabled: %s", iour_errname(rc));
	rc = io_uring_register_files(&ring, pfd, 1);
	cr_expect_eq(rc, 0, "REGISTER_FILES on the restricted, still disabled ring: %d", rc);
	cr_assert_eq(iour_ring_enable(ring.ring_fd), 0);
	rc = io_uring_unregister_files(&ring);
	cr_expect_eq(rc, -EACCES, "UNREGISTER_FILES once enabled: %d", rc);
	rc = io_uring_register_files(&ring, pfd, 1);
	cr_expect_eq(rc, -EACCES, "REGISTER_FILES once enabled: %d", rc);
	io_uring_queue_exit(&ring);
	iour_ruleset__free(rs);
	close(pfd[0]);
	close(pfd[1]);
	live_log("ring-level set: REGISTER_FILES allowed while the ring is disabled, -EACCES "
		 "once it is enabled");
}
