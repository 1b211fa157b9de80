/* SPDX-License-Identifier: MIT */
/*
 * The enforcement check's coverage: given the restriction set it tests,
 * iour_verify() says which allowed opcodes were tried and which were not
 * (and why), so that "the kernel answered every request" is never read as
 * "every allowed opcode was checked".  MSG_RING, which the check can now
 * submit, is denied and allowed on real rings of this kernel.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "iouring_restrict/iouring_restrict.h"
#include "uring_avail.h"

#define OP_NOP 0U
#define OP_CLOSE 19U
#define OP_STATX 21U
#define OP_READ 22U
#define OP_WRITE 23U
#define OP_MSG_RING 40U
#define FIXED_FILE 0x01U
#define BUFFER_SELECT 0x20U

static struct iour_verify_req rq(uint32_t op, uint32_t expect)
{
	struct iour_verify_req r;

	memset(&r, 0, sizeof(r));
	r.sz = sizeof(r);
	r.opcode = op;
	r.expect = expect;
	return r;
}

static struct iour_ruleset *set_of(const uint32_t *ops, size_t n, uint32_t allowed,
				   uint32_t required)
{
	struct iour_ruleset *rs = NULL;

	cr_assert_eq(iour_ruleset__new(NULL, &rs), 0);
	cr_assert_eq(iour_ruleset__deny_all_sqe_ops(rs), 0);
	for (size_t i = 0; i < n; i++)
		cr_assert_eq(iour_ruleset__allow_sqe_op(rs, ops[i]), 0);
	cr_assert_eq(iour_ruleset__set_sqe_flags(rs, allowed, required), 0);
	return rs;
}

static bool has(const uint64_t *bm, uint32_t op)
{
	return (bm[op / 64] >> (op % 64)) & 1;
}

static int popcount(const uint64_t *bm)
{
	int n = 0;

	for (int i = 0; i < 4; i++)
		n += __builtin_popcountll(bm[i]);
	return n;
}

Test(verify_coverage, lists_allowed_opcodes_that_were_not_tried)
{
	UNIT_REQUIRE_URING();
	static const uint32_t ops[] = { OP_NOP, OP_READ, OP_CLOSE, OP_STATX, OP_MSG_RING };
	struct iour_ruleset *rs = set_of(ops, 5, 0, 0);
	struct iour_verify_req r[4] = { rq(OP_NOP, IOUR_EXPECT_ALLOW),
					rq(OP_READ, IOUR_EXPECT_ALLOW),
					rq(OP_MSG_RING, IOUR_EXPECT_ALLOW),
					rq(OP_WRITE, IOUR_EXPECT_DENY) };
	struct iour_verify_result res[4];
	struct iour_verify_coverage cov;
	IOUR_OPTS(iour_verify_opts, o, .flags = IOUR_VERIFY_RING_FD, .ruleset = rs,
		  .coverage = &cov);
	int fd = -1, rc;

	if (iour_feature_level() < IOUR_LEVEL_RING)
		cr_skip_test("no ring restrictions");
	cr_assert_eq(iour_ring_create(8, NULL, rs, NULL, &fd), 0);
	memset(&cov, 0xa5, sizeof(cov));
	cov.sz = sizeof(cov);
	o.ring_fd = fd;
	rc = iour_verify(r, 4, res, &o);
	cr_assert_eq(rc, 0, "%s", iour_errname(rc));
	cr_assert_eq(res[2].status, IOUR_VERIFY_MATCH);
	cr_assert_eq(res[2].res, 0, "MSG_RING allowed: %d", res[2].res);

	cr_assert_eq(cov.sz, sizeof(cov));
	cr_assert_eq(cov.n_allowed, 5);
	cr_assert_eq(cov.n_tried, 3);
	cr_assert_eq(cov.n_untried, 2);
	cr_assert_eq(cov.n_unpreparable, 2);
	cr_assert(has(cov.allowed, OP_CLOSE) && has(cov.allowed, OP_NOP));
	cr_assert(has(cov.tried, OP_NOP) && has(cov.tried, OP_READ) && has(cov.tried, OP_MSG_RING));
	cr_assert(has(cov.untried, OP_CLOSE) && has(cov.untried, OP_STATX));
	cr_assert(has(cov.unpreparable, OP_CLOSE) && has(cov.unpreparable, OP_STATX));
	cr_assert_eq(popcount(cov.tried), 3);
	cr_assert_eq(popcount(cov.untried), 2);
	cr_assert(has(cov.denied_tried, OP_WRITE));
	cr_assert_eq(popcount(cov.denied_tried), 1);
	cr_assert(cov.flags & IOUR_VERIFY_COV_MSG_RING, "flags 0x%x", cov.flags);
	cr_assert_eq(cov.flags &
			     (IOUR_VERIFY_COV_FIXED_FILE_REQUIRED | IOUR_VERIFY_COV_KERNEL_UNKNOWN |
			      IOUR_VERIFY_COV_FLAGS_UNSETTABLE),
		     0);
	cr_assert_geq(cov.op_last, OP_MSG_RING + 1);
	close(fd);
	iour_ruleset__free(rs);
}

/* MSG_RING is submitted for real: denied by a ring that does not allow it,
 * and a preparable opcode expected to be denied does not count as tried. */
Test(verify_coverage, msg_ring_denied_and_deny_only_requests_are_not_tries)
{
	UNIT_REQUIRE_URING();
	static const uint32_t ops[] = { OP_NOP, OP_READ };
	struct iour_ruleset *rs = set_of(ops, 2, 0, 0);
	struct iour_verify_req r[3] = { rq(OP_NOP, IOUR_EXPECT_ALLOW),
					rq(OP_MSG_RING, IOUR_EXPECT_DENY),
					rq(OP_READ, IOUR_EXPECT_DENY) };
	struct iour_verify_result res[3];
	struct iour_verify_coverage cov = { .sz = sizeof(cov) };
	IOUR_OPTS(iour_verify_opts, o, .flags = IOUR_VERIFY_RING_FD, .ruleset = rs,
		  .coverage = &cov);
	int fd = -1, rc;

	if (iour_feature_level() < IOUR_LEVEL_RING)
		cr_skip_test("no ring restrictions");
	r[2].sqe_flags = 0x10; /* ASYNC: not allowed by the set */
	cr_assert_eq(iour_ring_create(8, NULL, rs, NULL, &fd), 0);
	o.ring_fd = fd;
	rc = iour_verify(r, 3, res, &o);
	cr_assert_eq(rc, 0, "%s", iour_errname(rc));
	cr_assert_eq(res[1].res, -EACCES, "MSG_RING on a ring that denies it: %d", res[1].res);
	cr_assert_eq(cov.n_allowed, 2);
	cr_assert_eq(cov.n_tried, 1);
	cr_assert(has(cov.untried, OP_READ), "READ was only tried as a denial");
	cr_assert_eq(cov.n_unpreparable, 0);
	cr_assert(has(cov.denied_tried, OP_MSG_RING));
	cr_assert_eq(cov.flags & IOUR_VERIFY_COV_MSG_RING, 0);
	close(fd);
	iour_ruleset__free(rs);
}

/* The caveats a set carries, from the set alone (fresh ring, plain mode). */
Test(verify_coverage, flags_for_fixed_files_unsettable_flags_and_register_rules)
{
	UNIT_REQUIRE_URING();
	static const uint32_t ops[] = { OP_NOP };
	struct iour_verify_req r = rq(OP_NOP, IOUR_EXPECT_ALLOW);
	struct iour_verify_result res;
	struct {
		struct iour_verify_coverage c;
		uint64_t tail[2];
	} big;
	struct iour_ruleset *rs;
	IOUR_OPTS(iour_verify_opts, o, .coverage = &big.c);
	int rc;

	rs = set_of(ops, 1, FIXED_FILE, FIXED_FILE);
	cr_assert_eq(iour_ruleset__deny_all_register_ops(rs), 0);
	memset(&big, 0xa5, sizeof(big));
	big.c.sz = sizeof(big);
	o.ruleset = rs;
	rc = iour_verify(&r, 1, &res, &o); /* an unrestricted ring of the child */
	cr_assert_eq(rc, 0, "%s", iour_errname(rc));
	cr_assert_eq(big.c.sz, sizeof(big));
	cr_assert_eq(big.tail[0], 0, "bytes beyond the struct are zeroed");
	cr_assert_eq(big.tail[1], 0);
	cr_assert(big.c.flags & IOUR_VERIFY_COV_FIXED_FILE_REQUIRED, "0x%x", big.c.flags);
	cr_assert(big.c.flags & IOUR_VERIFY_COV_REGISTER_NOT_TRIED, "0x%x", big.c.flags);
	cr_assert_eq(big.c.flags & IOUR_VERIFY_COV_FLAGS_UNSETTABLE, 0);
	cr_assert_eq(big.c.n_tried, 1);
	iour_ruleset__free(rs);

	rs = set_of(ops, 1, BUFFER_SELECT, BUFFER_SELECT);
	o.ruleset = rs;
	cr_assert_eq(iour_verify(&r, 1, &res, &o), 0);
	cr_assert(big.c.flags & IOUR_VERIFY_COV_FLAGS_UNSETTABLE, "0x%x", big.c.flags);
	cr_assert_eq(big.c.flags & IOUR_VERIFY_COV_REGISTER_NOT_TRIED, 0);
	iour_ruleset__free(rs);
}

Test(verify_coverage, bad_input)
{
	static const uint32_t ops[] = { OP_NOP };
	struct iour_ruleset *rs = set_of(ops, 1, 0, 0);
	struct iour_verify_req r = rq(OP_NOP, IOUR_EXPECT_ALLOW);
	struct iour_verify_coverage cov;
	IOUR_OPTS(iour_verify_opts, o);

	memset(&cov, 0x5a, sizeof(cov));
	cov.sz = sizeof(cov);
	o.ruleset = rs;
	cr_assert_eq(iour_verify(&r, 1, NULL, &o), -EINVAL, "ruleset without coverage");
	o.ruleset = NULL;
	o.coverage = &cov;
	cr_assert_eq(iour_verify(&r, 1, NULL, &o), -EINVAL, "coverage without ruleset");
	o.ruleset = rs;
	cov.sz = sizeof(cov) - 8;
	cr_assert_eq(iour_verify(&r, 1, NULL, &o), -EINVAL, "coverage too small");
	cov.sz = 4097;
	cr_assert_eq(iour_verify(&r, 1, NULL, &o), -EINVAL, "coverage too large");
	cr_assert_eq(cov.n_allowed, 0x5a5a5a5aU, "left untouched on -EINVAL");
	iour_ruleset__free(rs);
}
