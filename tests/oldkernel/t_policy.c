/* SPDX-License-Identifier: MIT */
/*
 * Policies on a real Linux 6.1 kernel: the plan for the running kernel
 * (per-ring level, coupled gates, 49/26 opcodes), the task target's
 * fallback to the ring mechanism (never "fully"), the compatibility
 * levels, and a planned ring really enforcing an allowed and a forbidden
 * request.
 */
#include <string.h>

#include "guest.h"
#include "mini_ring.h"
#include "iouring_restrict/iouring_restrict.h"

static const struct iour_insn inet_only[] = {
	{ 0x20, 0, 0, 16 }, { 0x15, 0, 1, 2 }, { 0x06, 0, 0, 1 }, { 0x06, 0, 0, 0 },
};

static struct iour_policy *policy(uint32_t target, uint32_t compat)
{
	struct iour_ruleset *rs = NULL;
	struct iour_policy *p = NULL;

	iour_ruleset__new(NULL, &rs);
	iour_ruleset__allow_sqe_op(rs, 0);  /* NOP */
	iour_ruleset__allow_sqe_op(rs, 45); /* SOCKET, conditional */
	iour_ruleset__set_sqe_flags(rs, 0, 0);
	iour_policy__new(NULL, &p);
	iour_policy__set_ruleset(p, rs);
	iour_ruleset__free(rs);
	iour_policy__set_prog(p, 45, inet_only, 4, 12);
	iour_policy__set_attr(p, IOUR_POLICY_ATTR_TARGET, target);
	iour_policy__set_attr(p, IOUR_POLICY_ATTR_COMPAT, compat);
	return p;
}

static void check_plan(void)
{
	struct iour_policy *p = policy(IOUR_POLICY_TARGET_TASK, IOUR_POLICY_COMPAT_BEST_EFFORT);
	struct iour_plan *pl = NULL;
	struct iour_plan_info info = { .sz = sizeof(info) };
	struct iour_report *rep = NULL;
	const struct iour_report *r;

	CHECK_EQ("policy: plan for 6.1", iour_policy__plan(p, NULL, &pl), 0);
	if (!pl)
		return;
	CHECK_EQ("policy: plan info", iour_plan__info(pl, &info), 0);
	CHECK_EQ("policy: level", info.level, IOUR_LEVEL_RING);
	CHECK_EQ("policy: op_last", info.op_last, 49);
	CHECK_EQ("policy: reg_last", info.reg_last, 26);
	CHECK_EQ("policy: coupled gates", info.split_gates, 0);
	CHECK_EQ("policy: no task steps", info.task_steps, 0);
	CHECK_EQ("policy: ring part (RESTRICTIONS, ENABLE)", info.ring_steps, 2);
	r = iour_plan__report(pl);
	CHECK_EQ("policy: task fallback is partial", iour_report__status(r), IOUR_STATUS_PARTIALLY);
	CHECK_EQ("policy: mechanism", iour_report__mechanism(r), IOUR_MECH_RING_DISABLED);
	CHECK("policy: ring-only, loosened",
	      (iour_report__flags(r) & (IOUR_REPORT_RING_ONLY | IOUR_REPORT_LOOSENED)) ==
		      (IOUR_REPORT_RING_ONLY | IOUR_REPORT_LOOSENED));
	CHECK_EQ("policy: apply_task (no task steps)", iour_plan__apply_task(pl, NULL, &rep), 0);
	CHECK_EQ("policy: apply_task status", iour_report__status(rep), IOUR_STATUS_PARTIALLY);
	iour_report__free(rep);
	iour_plan__free(pl);
	iour_policy__free(p);
}

static void check_ring(void)
{
	struct iour_policy *p = policy(IOUR_POLICY_TARGET_RING, IOUR_POLICY_COMPAT_BEST_EFFORT);
	struct iour_plan *pl = NULL;
	struct iour_report *rep = NULL;
	struct mini_ring r;
	struct kio_sqe sqe;
	int32_t res = 1;

	CHECK_EQ("policy ring: plan", iour_policy__plan(p, NULL, &pl), 0);
	CHECK_EQ("policy ring: disabled ring", mini_ring_init(&r, 4, KIO_SETUP_R_DISABLED), 0);
	CHECK_EQ("policy ring: apply", iour_plan__apply_ring(pl, r.fd, NULL, &rep), 0);
	CHECK_EQ("policy ring: status (SOCKET closed)", iour_report__status(rep),
		 IOUR_STATUS_PARTIALLY);
	memset(&sqe, 0, sizeof(sqe));
	sqe.opcode = 0;
	CHECK_EQ("policy ring: NOP submitted", mini_ring_run(&r, &sqe, &res), 1);
	CHECK_EQ("policy ring: NOP allowed", res, 0);
	sqe.opcode = 45;
	sqe.fd = 2;
	sqe.off = 1;
	CHECK_EQ("policy ring: SOCKET submitted", mini_ring_run(&r, &sqe, &res), 1);
	CHECK_EQ("policy ring: SOCKET denied (no filters on 6.1: closed)", res, -EACCES);
	mini_ring_exit(&r);
	iour_report__free(rep);
	iour_plan__free(pl);
	iour_policy__free(p);
	/* Hard requirement: refused, nothing applied. */
	p = policy(IOUR_POLICY_TARGET_RING, IOUR_POLICY_COMPAT_HARD);
	pl = NULL;
	CHECK_EQ("policy hard: plan", iour_policy__plan(p, NULL, &pl), 0);
	CHECK_EQ("policy hard: disabled ring", mini_ring_init(&r, 4, KIO_SETUP_R_DISABLED), 0);
	CHECK_EQ("policy hard: refused", iour_plan__apply_ring(pl, r.fd, NULL, NULL),
		 -IOUR_ERRNO__UNSUPPORTED);
	CHECK_EQ("policy hard: ring untouched (enable works)",
		 raw_register(r.fd, KIO_REGISTER_ENABLE_RINGS, NULL, 0), 0);
	mini_ring_exit(&r);
	iour_plan__free(pl);
	iour_policy__free(p);
}

int main(void)
{
	check_plan();
	check_ring();
	return guest_summary();
}
