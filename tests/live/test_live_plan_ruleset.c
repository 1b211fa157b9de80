/* SPDX-License-Identifier: MIT */
/*
 * Live: iour_plan__get_ruleset() says what a ring created from the plan
 * allows, and the running kernel agrees.  For hand-picked and random
 * policies planned for the running kernel, every request opcode the
 * kernel knows is submitted on the ring (fd -1 and zeroed arguments, so
 * that an allowed request fails at once for an ordinary reason), NOP with
 * each SQE flag (READ with BUFFER_SELECT), and every register opcode is
 * called with no argument: the kernel's -EACCES must come exactly where
 * the getter's set does not allow (doc/kernel.md 1.5, 2.3, 2.4).  The
 * 128-byte requests (NOP128, URING_CMD128) are not submitted: a ring of
 * 64-byte SQEs refuses them before the gate; nor is CQE_SKIP_SUCCESS
 * where the set allows it (no completion) or the kernel predates it.  A plan the getter gives
 * NULL for must leave the ring refusing nothing.
 */
#include <errno.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "live.h"
#include "ring_util.h"

#ifndef __NR_io_uring_register
#define __NR_io_uring_register 427
#endif

#define SQE_VALID 0x7fU
#define SQE_BUFFER_SELECT 0x20U
#define SQE_CQE_SKIP_SUCCESS 0x40U
#define FEAT_CQE_SKIP (1U << 11) /* IORING_FEAT_CQE_SKIP, Linux 5.17 */
#define N_RANDOM 6

static uint64_t rng_next(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ULL;
}

static unsigned int rng_below(uint64_t *s, unsigned int n)
{
	return (unsigned int)(rng_next(s) % n);
}

/* Does the getter's set let a request with `op` and `flags` through? */
static bool set_allows(const struct iour_ruleset *rs, uint32_t op, uint32_t flags)
{
	uint32_t allowed = SQE_VALID, required = 0;

	if (!rs)
		return true;
	(void)iour_ruleset__sqe_flags(rs, &allowed, &required);
	/* An opcode beyond the library's table is not in the set. */
	return iour_ruleset__sqe_op_allowed(rs, op) == 1 && (flags & required) == required &&
	       !(flags & ~allowed);
}

/* One SQE with `op` and `flags`, fd -1, arguments zero; its result, or
 * 1 if no completion came within 2 s (an allowed request that blocks).
 * Completions of earlier requests (the notification a zero-copy send
 * posts after its result) are passed over. */
static int submit_one(struct io_uring *ring, uint8_t op, uint8_t flags)
{
	static uint64_t seq = 0x5150000;
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
	struct io_uring_cqe *cqe = NULL;
	uint64_t ud = ++seq;
	int res;

	cr_assert_not_null(sqe);
	memset(sqe, 0, sizeof(*sqe));
	sqe->opcode = op;
	sqe->flags = flags;
	sqe->fd = -1;
	sqe->user_data = ud;
	cr_assert_eq(io_uring_submit(ring), 1, "opcode %u", op);
	/* Polled: a timed wait would add a TIMEOUT request, which the ring
	 * may refuse. */
	for (int i = 0;; i++) {
		if (io_uring_peek_cqe(ring, &cqe) == 0) {
			if (cqe->user_data == ud)
				break;
			io_uring_cqe_seen(ring, cqe);
			continue;
		}
		if (i == 2000)
			return 1;
		usleep(1000);
	}
	res = cqe->res;
	io_uring_cqe_seen(ring, cqe);
	return res;
}

struct tally {
	unsigned int policies, unrestricted, reqs, reqs_denied, regs, regs_denied, not_gated;
};

/* Plan @p for the running kernel, create its ring, and hold every
 * request opcode, NOP's SQE flags and every register opcode against the
 * getter's set. */
static void check_policy(struct iour_policy *p, const char *what, struct tally *t)
{
	struct iour_plan_info info = { .sz = sizeof(info) };
	struct io_uring_params params;
	struct iour_ruleset *rs = NULL;
	struct iour_plan *pl = NULL;
	struct io_uring ring;
	int rc, fd = -1;

	rc = iour_policy__plan(p, NULL, &pl);
	cr_assert_eq(rc, 0, "%s: plan: %s", what, iour_errname(rc));
	cr_assert_eq(iour_plan__info(pl, &info), 0);
	cr_assert_eq(iour_plan__get_ruleset(pl, IOUR_STEP_RING, &rs), 0, "%s", what);
	memset(&params, 0, sizeof(params));
	rc = iour_plan__create_ring(pl, 8, &params, NULL, &fd, NULL);
	cr_assert_eq(rc, 0, "%s: create_ring: %s", what, iour_errname(rc));
	cr_assert_eq(ring_mmap(fd, &params, &ring), 0);
	t->policies++;
	t->unrestricted += !rs;
	for (uint32_t op = 0; op < info.op_last && op < 256; op++) {
		const char *name = iour_opcode_name(op);
		size_t nl = name ? strlen(name) : 0;
		bool allow = set_allows(rs, op, 0);
		int res;

		if (nl > 3 && !strcmp(name + nl - 3, "128")) {
			/* NOP128, URING_CMD128: on a ring of 64-byte SQEs
			 * the kernel refuses them (-EINVAL) before the gate. */
			t->not_gated++;
			continue;
		}
		res = submit_one(&ring, (uint8_t)op, 0);

		cr_assert_eq(res == -EACCES, !allow, "%s: request opcode %u (%s): result %d, the "
			     "getter says %s", what, op, iour_opcode_name(op) ? iour_opcode_name(op) : "?",
			     res, allow ? "allowed" : "not allowed");
		t->reqs++;
		t->reqs_denied += !allow;
	}
	for (uint32_t bit = 0; bit < 7; bit++) {
		uint32_t fl = 1U << bit;
		/* The kernel refuses BUFFER_SELECT on an opcode that takes no
		 * buffer (-EOPNOTSUPP) before the gate: READ takes one. */
		uint32_t op = fl == SQE_BUFFER_SELECT ? OP_READ : OP_NOP;
		bool allow = set_allows(rs, op, fl);
		int res;

		if (fl == SQE_CQE_SKIP_SUCCESS && (allow || !(params.features & FEAT_CQE_SKIP))) {
			/* A NOP that succeeds would post no completion; before
			 * Linux 5.17 the flag is unknown (-EINVAL before the
			 * gate). */
			t->not_gated++;
			continue;
		}
		res = submit_one(&ring, (uint8_t)op, (uint8_t)fl);
		cr_assert_eq(res == -EACCES, !allow, "%s: %s with SQE flag %#x: result %d, the "
			     "getter says %s", what, iour_opcode_name(op), fl, res,
			     allow ? "allowed" : "not allowed");
		t->reqs++;
		t->reqs_denied += !allow;
	}
	for (uint32_t op = 0; op < info.reg_last && op < 256; op++) {
		bool allow = !rs || iour_ruleset__register_op_allowed(rs, op) == 1;
		long r = syscall(__NR_io_uring_register, fd, op, NULL, 0);
		int err = r < 0 ? errno : 0;

		cr_assert_eq(err == EACCES, !allow, "%s: register opcode %u (%s): %ld (%s), the "
			     "getter says %s", what, op,
			     iour_register_op_name(op) ? iour_register_op_name(op) : "?", r,
			     strerror(err), allow ? "allowed" : "not allowed");
		t->regs++;
		t->regs_denied += !allow;
	}
	io_uring_queue_exit(&ring);
	iour_ruleset__free(rs);
	iour_plan__free(pl);
}

static struct iour_policy *ring_policy(struct iour_ruleset *rs, uint32_t dflt)
{
	struct iour_policy *p = NULL;

	cr_assert_eq(live_policy(&p, IOUR_POLICY_TARGET_RING, rs, NULL, dflt), 0);
	iour_ruleset__free(rs);
	return p;
}

Test(live_plan_ruleset, ring_refuses_exactly_what_the_getter_does_not_allow)
{
	static const uint32_t rw[] = { OP_NOP, OP_READ, OP_WRITE };
	static const uint32_t open_ops[] = { OP_NOP, OP_OPENAT };
	static const uint32_t regs[] = { REG_BUFFERS, 10 /* REGISTER_PROBE */ };
	static const uint32_t files[] = { REG_FILES };
	struct tally t = { 0 };
	uint64_t seed = 0x2545f4914f6cdd1dULL;
	struct iour_policy *p;

	LIVE_REQUIRE(LIVE_RING);
	/* Allow-lists on both sides, some flags. */
	p = ring_policy(rs_make(rw, 3, 0x10 | 0x04, 0, regs, 2), IOUR_POLICY_DEFAULT_DENY);
	check_policy(p, "read-write", &t);
	iour_policy__free(p);
	/* Request opcodes only: the register side is open in the policy. */
	p = ring_policy(rs_make(open_ops, 2, SQE_VALID, 0, NULL, -1), IOUR_POLICY_DEFAULT_ALLOW);
	check_policy(p, "request-only", &t);
	iour_policy__free(p);
	/* Register opcodes only. */
	p = ring_policy(rs_make(NULL, -1, SQE_VALID, 0, files, 1), IOUR_POLICY_DEFAULT_ALLOW);
	check_policy(p, "register-only", &t);
	iour_policy__free(p);
	/* FIXED_FILE required. */
	p = ring_policy(rs_make(rw, 3, 0x10, 0x01, NULL, 0), IOUR_POLICY_DEFAULT_DENY);
	check_policy(p, "fixed-file", &t);
	iour_policy__free(p);
	/* Nothing allowed on either side. */
	p = ring_policy(rs_make(NULL, 0, 0, 0, NULL, 0), IOUR_POLICY_DEFAULT_DENY);
	check_policy(p, "deny-all", &t);
	iour_policy__free(p);
	/* An all-allowing classic part: no restriction step, nothing refused. */
	p = ring_policy(rs_make(NULL, -1, SQE_VALID, 0, NULL, -1), IOUR_POLICY_DEFAULT_ALLOW);
	check_policy(p, "all-allowing", &t);
	iour_policy__free(p);
	cr_assert_eq(t.unrestricted, 1, "only the all-allowing policy plans no restriction");
	for (int i = 0; i < N_RANDOM; i++) {
		uint32_t ops[IOUR_OP__COUNT], rops[IOUR_REGISTER__COUNT];
		int n = 0, nr = 0;
		char what[32];

		for (uint32_t op = 0; op < IOUR_OP__COUNT; op++)
			if (rng_below(&seed, 3) == 0)
				ops[n++] = op;
		for (uint32_t op = 0; op < IOUR_REGISTER__COUNT; op++)
			if (rng_below(&seed, 3) == 0)
				rops[nr++] = op;
		p = ring_policy(rs_make(ops, rng_below(&seed, 4) ? n : -1,
					rng_below(&seed, SQE_VALID + 1) & ~SQE_CQE_SKIP_SUCCESS,
					rng_below(&seed, 4) ? 0 : 0x10, rops,
					rng_below(&seed, 4) ? nr : -1),
				rng_below(&seed, 2) ? IOUR_POLICY_DEFAULT_ALLOW :
						      IOUR_POLICY_DEFAULT_DENY);
		snprintf(what, sizeof(what), "random policy %d", i);
		check_policy(p, what, &t);
		iour_policy__free(p);
	}
	live_log("plan ruleset: %u policies (%u without a restriction step): %u requests "
		 "submitted, %u refused as the getter said; %u register calls, %u refused; "
		 "%u requests not submitted (128-byte, CQE_SKIP_SUCCESS)",
		 t.policies, t.unrestricted, t.reqs, t.reqs_denied, t.regs, t.regs_denied,
		 t.not_gated);
	cr_assert_gt(t.reqs_denied, 0);
	cr_assert_gt(t.reqs - t.reqs_denied, 0);
	cr_assert_gt(t.regs_denied, 0);
	cr_assert_gt(t.regs - t.regs_denied, 0);
}
