/* SPDX-License-Identifier: MIT */
/*
 * Policies on a real pre-6.18 kernel (written for 6.1; this generation's
 * limits from guest.h): the plan for the running kernel
 * (per-ring level, coupled gates, 49/26 opcodes), the task target's
 * fallback to the ring mechanism (never "fully"), the compatibility
 * levels, a planned ring really enforcing an allowed and a forbidden
 * request, and plans for forced levels: level 2 (Linux 6.1 limits) applies
 * here, level 3 (Linux 6.18 limits) is refused as compiled for another
 * kernel.
 */
#include <string.h>

#include "guest.h"
#include "mini_ring.h"
#include "iouring_restrict/iouring_restrict.h"

static const struct iour_insn inet_only[] = {
	{ 0x20, 0, 0, 16 },
	{ 0x15, 0, 1, 2 },
	{ 0x06, 0, 0, 1 },
	{ 0x06, 0, 0, 0 },
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

	/* The default degrades closed: the companion blocks io_uring_setup. */
	CHECK_EQ("policy: plan for 6.1 (default companion)", iour_policy__plan(p, NULL, &pl), 0);
	if (!pl)
		return;
	r = iour_plan__report(pl);
	CHECK_EQ("policy: companion: partial", iour_report__status(r), IOUR_STATUS_PARTIALLY);
	CHECK_EQ("policy: companion: mechanism", iour_report__mechanism(r), IOUR_MECH_COMPANION);
	CHECK("policy: companion: tightened, not loosened",
	      (iour_report__flags(r) & (IOUR_REPORT_TIGHTENED | IOUR_REPORT_LOOSENED)) ==
		      IOUR_REPORT_TIGHTENED);
	iour_plan__free(pl);
	pl = NULL;
	/* Without it nothing restricts the task: "not enforced". */
	iour_policy__set_attr(p, IOUR_POLICY_ATTR_COMPANION, IOUR_POLICY_COMPANION_NONE);
	CHECK_EQ("policy: plan for 6.1", iour_policy__plan(p, NULL, &pl), 0);
	if (!pl)
		return;
	CHECK_EQ("policy: plan info", iour_plan__info(pl, &info), 0);
	CHECK_EQ("policy: level", info.level, guest_gen()->level);
	CHECK_EQ("policy: op_last", info.op_last, guest_gen()->op_last);
	CHECK_EQ("policy: reg_last", info.reg_last, guest_gen()->reg_last);
	CHECK_EQ("policy: coupled gates", info.split_gates, 0);
	CHECK_EQ("policy: no task steps", info.task_steps, 0);
	CHECK_EQ("policy: ring part (RESTRICTIONS, ENABLE)", info.ring_steps, 2);
	r = iour_plan__report(pl);
	CHECK_EQ("policy: task fallback is not enforced", iour_report__status(r),
		 IOUR_STATUS_NOT_ENFORCED);
	CHECK_EQ("policy: mechanism", iour_report__mechanism(r), IOUR_MECH_NONE);
	CHECK("policy: ring-only, loosened",
	      (iour_report__flags(r) & (IOUR_REPORT_RING_ONLY | IOUR_REPORT_LOOSENED)) ==
		      (IOUR_REPORT_RING_ONLY | IOUR_REPORT_LOOSENED));
	CHECK_EQ("policy: apply_task (no task steps)", iour_plan__apply_task(pl, NULL, &rep), 0);
	CHECK_EQ("policy: apply_task status", iour_report__status(rep), IOUR_STATUS_NOT_ENFORCED);
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

static void check_forced(void)
{
	struct iour_policy *p = policy(IOUR_POLICY_TARGET_RING, IOUR_POLICY_COMPAT_BEST_EFFORT);
	IOUR_OPTS(iour_plan_opts, o, .flags = IOUR_PLAN_FORCE_LEVEL, .level = 2);
	struct iour_plan *pl = NULL;
	struct iour_report *rep = NULL;
	struct mini_ring r;
	int fd = -1;

	CHECK_EQ("forced level 2: plan", iour_policy__plan(p, &o, &pl), 0);
	/* level 2 is compiled for 6.1's limits: another kernel's differ */
	CHECK_EQ("forced level 2: create_ring (0 on 6.1's limits, else refused)",
		 iour_plan__create_ring(pl, 4, NULL, NULL, &fd, NULL),
		 guest_gen()->op_last == 49 && guest_gen()->reg_last == 26 ?
			 0 :
			 -IOUR_ERRNO__KERNEL_MISMATCH);
	if (fd >= 0)
		close(fd);
	iour_plan__free(pl);
	o.level = 3;
	pl = NULL;
	CHECK_EQ("forced level 3: plan", iour_policy__plan(p, &o, &pl), 0);
	CHECK_EQ("forced level 3: disabled ring", mini_ring_init(&r, 4, KIO_SETUP_R_DISABLED), 0);
	CHECK_EQ("forced level 3: refused on 6.1", iour_plan__apply_ring(pl, r.fd, NULL, &rep),
		 -IOUR_ERRNO__KERNEL_MISMATCH);
	CHECK_EQ("forced level 3: not enforced", iour_report__status(rep),
		 IOUR_STATUS_NOT_ENFORCED);
	CHECK_EQ("forced level 3: ring untouched (enable works)",
		 raw_register(r.fd, KIO_REGISTER_ENABLE_RINGS, NULL, 0), 0);
	mini_ring_exit(&r);
	iour_report__free(rep);
	iour_plan__free(pl);
	iour_policy__free(p);
}

int main(void)
{
	if (guest_gen()->query || !guest_gen()->exact) {
		GUEST_SKIP("t_policy", "ring-level plans need a pre-6.18 kernel; the live tier "
				       "checks plans on QUERY kernels");
		return guest_summary();
	}
	if (guest_gen()->op_last <= 45) {
		GUEST_SKIP("t_policy", "the kernel lacks SOCKET (opcode 45, 5.19), which the "
				       "policies checked here filter");
		return guest_summary();
	}
	check_plan();
	check_ring();
	check_forced();
	return guest_summary();
}
