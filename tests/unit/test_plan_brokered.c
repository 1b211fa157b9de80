/* SPDX-License-Identifier: MIT */
/*
 * IOUR_PLAN_BROKERED (include/iouring_restrict/plan.h): a task policy
 * planned for the ring broker.  The plan restricts each ring the task
 * creates (no companion, no task steps), its report describes those rings,
 * and its effect notes say open what ring restrictions cannot close:
 * ring-less register calls on Linux 6.13+ (doc/security.md 2.1, "The ring
 * broker's view").  The live tier attacks each claim under `run`
 * (tests/live/test_live_claims.c).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "iouring_restrict/iouring_restrict.h"

#define OP_NOP 0
#define OP_READ 22
#define OP_OPENAT 18
#define OP_SOCKET 45

static const struct iour_insn inet_only[] = {
	{ 0x20, 0, 0, 16 }, { 0x15, 0, 1, 2 }, { 0x06, 0, 0, 1 }, { 0x06, 0, 0, 0 },
};

/* NOP, READ, OPENAT and SOCKET (AF_INET only); no register opcode (with
 * @regs_open: register opcodes are not restricted). */
static struct iour_policy *policy_regs(uint32_t fallback, bool regs_open)
{
	static const uint32_t ops[] = { OP_NOP, OP_READ, OP_OPENAT, OP_SOCKET };
	struct iour_ruleset *rs;
	struct iour_policy *p;

	cr_assert_eq(iour_ruleset__new(NULL, &rs), 0);
	for (size_t i = 0; i < 4; i++)
		cr_assert_eq(iour_ruleset__allow_sqe_op(rs, ops[i]), 0);
	cr_assert_eq(iour_ruleset__set_sqe_flags(rs, 0, 0), 0);
	if (!regs_open)
		cr_assert_eq(iour_ruleset__deny_all_register_ops(rs), 0);
	cr_assert_eq(iour_policy__new(NULL, &p), 0);
	cr_assert_eq(iour_policy__set_ruleset(p, rs), 0);
	iour_ruleset__free(rs);
	cr_assert_eq(iour_policy__set_prog(p, OP_SOCKET, inet_only, 4, 12), 0);
	cr_assert_eq(iour_policy__set_attr(p, IOUR_POLICY_ATTR_NO_FILTER_FALLBACK, fallback), 0);
	return p;
}

static struct iour_policy *policy(uint32_t fallback)
{
	return policy_regs(fallback, false);
}

static struct iour_plan *plan_at(const struct iour_policy *p, uint32_t level, uint32_t flags)
{
	struct iour_plan_opts o = { .sz = sizeof(o),
				    .flags = IOUR_PLAN_FORCE_LEVEL | flags,
				    .level = level };
	struct iour_plan *pl = NULL;

	cr_assert_eq(iour_policy__plan(p, &o, &pl), 0);
	return pl;
}

/* The state word of effect @key in @pl's report, or "" if absent. */
static const char *effect_state(const struct iour_plan *pl, const char *key, char *buf,
				size_t len)
{
	const struct iour_report *r = iour_plan__report(pl);
	struct iour_decision d = { .sz = sizeof(d) };
	char want[48];

	snprintf(want, sizeof(want), "effect %s (", key);
	buf[0] = '\0';
	for (int i = 0; i < iour_report__decision_cnt(r); i++) {
		if (iour_report__decision(r, (size_t)i, &d) || strncmp(d.text, want, strlen(want)))
			continue;
		snprintf(buf, len, "%.*s", (int)strcspn(strstr(d.text, ": ") + 2, ";"),
			 strstr(d.text, ": ") + 2);
	}
	return buf;
}

static int count(const struct iour_plan *pl, uint32_t kind, uint32_t reason)
{
	const struct iour_report *r = iour_plan__report(pl);
	struct iour_decision d = { .sz = sizeof(d) };
	int n = 0;

	for (int i = 0; i < iour_report__decision_cnt(r); i++)
		if (!iour_report__decision(r, (size_t)i, &d) && d.kind == kind && d.reason == reason)
			n++;
	return n;
}

Test(plan_brokered, level3_restricts_each_ring_and_says_what_stays_open)
{
	struct iour_policy *p = policy(IOUR_POLICY_FALLBACK_CLOSED);
	struct iour_plan *pl = plan_at(p, 3, IOUR_PLAN_BROKERED), *comp = plan_at(p, 3, 0);
	struct iour_plan_info info = { .sz = sizeof(info) };
	const struct iour_report *r = iour_plan__report(pl);
	char st[32];

	cr_assert_eq(iour_plan__info(pl, &info), 0);
	cr_assert_eq(info.target, IOUR_POLICY_TARGET_TASK);
	cr_assert_eq(info.task_steps, 0, "no companion, no task step");
	cr_assert_gt(info.ring_steps, 0);
	cr_assert_eq(iour_report__mechanism(r) & (IOUR_MECH_COMPANION | IOUR_MECH_TASK), 0);
	cr_assert(iour_report__mechanism(r) & IOUR_MECH_RING_DISABLED);
	cr_assert_eq(iour_report__flags(r) & IOUR_REPORT_RING_ONLY, 0);
	/* OPENAT is allowed on every ring: file-open is open, where the
	 * companion's view (no ring at all) calls it closed. */
	cr_assert_str_eq(effect_state(pl, "file-open", st, sizeof(st)), "open");
	cr_assert_str_eq(effect_state(comp, "file-open", st, sizeof(st)), "closed");
	/* Level 3 is Linux 6.18: SEND_MSG_RING and QUERY on fd -1 reach no
	 * ring, the policy allows neither: open, and LOOSENED says which. */
	cr_assert_str_eq(effect_state(pl, "ringless-register", st, sizeof(st)), "open");
	cr_assert_str_eq(effect_state(comp, "ringless-register", st, sizeof(st)), "closed");
	cr_assert_eq(count(pl, IOUR_DECISION_LOOSENED, IOUR_REASON_NOT_EXPRESSIBLE), 2);
	cr_assert(iour_report__flags(r) & IOUR_REPORT_LOOSENED);
	/* SOCKET's argument rule: no filters before 7.0, fallback closed. */
	cr_assert_eq(count(pl, IOUR_DECISION_TIGHTENED, IOUR_REASON_NO_FILTERS), 1);
	cr_assert_eq(iour_report__status(r), IOUR_STATUS_PARTIALLY);
	iour_plan__free(pl);
	iour_plan__free(comp);
	iour_policy__free(p);
}

Test(plan_brokered, level2_has_no_ringless_path)
{
	struct iour_policy *p = policy(IOUR_POLICY_FALLBACK_OPEN);
	struct iour_plan *pl = plan_at(p, 2, IOUR_PLAN_BROKERED);
	char st[32];

	/* Linux 6.1: no fd -1 register calls; the argument rule is dropped
	 * (fallback open), so SOCKET is allowed whole. */
	cr_assert_str_eq(effect_state(pl, "ringless-register", st, sizeof(st)), "");
	cr_assert_eq(count(pl, IOUR_DECISION_LOOSENED, IOUR_REASON_NOT_EXPRESSIBLE), 0);
	cr_assert_eq(count(pl, IOUR_DECISION_LOOSENED, IOUR_REASON_NO_FILTERS), 1);
	iour_plan__free(pl);
	iour_policy__free(p);
}

Test(plan_brokered, level4_filters_on_each_ring)
{
	struct iour_policy *p = policy(IOUR_POLICY_FALLBACK_CLOSED);
	struct iour_plan *pl = plan_at(p, 4, IOUR_PLAN_BROKERED);
	const struct iour_report *r = iour_plan__report(pl);

	/* 7.0+: ring filters carry the SOCKET rule; still ring-less calls. */
	cr_assert(iour_report__mechanism(r) & IOUR_MECH_RING);
	cr_assert_eq(iour_report__mechanism(r) & IOUR_MECH_TASK, 0);
	cr_assert_eq(count(pl, IOUR_DECISION_TIGHTENED, IOUR_REASON_NO_FILTERS), 0);
	/* SEND_MSG_RING, QUERY, and BPF_FILTER (a program's own task
	 * filters, which can only add denials) */
	cr_assert_eq(count(pl, IOUR_DECISION_LOOSENED, IOUR_REASON_NOT_EXPRESSIBLE), 3);
	iour_plan__free(pl);
	iour_policy__free(p);
}

Test(plan_brokered, unrestricted_register_opcodes_leave_ringless_calls_alone)
{
	struct iour_policy *p = policy_regs(IOUR_POLICY_FALLBACK_CLOSED, true);
	struct iour_plan *pl = plan_at(p, 3, IOUR_PLAN_BROKERED);
	char st[32];

	/* The policy does not restrict register opcodes: fd -1 calls are
	 * what it allows, not an effect it touches, and nothing loosened. */
	cr_assert_str_eq(effect_state(pl, "ringless-register", st, sizeof(st)), "");
	cr_assert_eq(count(pl, IOUR_DECISION_LOOSENED, IOUR_REASON_NOT_EXPRESSIBLE), 0);
	iour_plan__free(pl);
	iour_policy__free(p);
}

Test(plan_brokered, ring_target_is_einval)
{
	struct iour_policy *p = policy(IOUR_POLICY_FALLBACK_CLOSED);
	struct iour_plan_opts o = { .sz = sizeof(o),
				    .flags = IOUR_PLAN_FORCE_LEVEL | IOUR_PLAN_BROKERED,
				    .level = 3 };
	struct iour_plan *pl = NULL;

	cr_assert_eq(iour_policy__set_attr(p, IOUR_POLICY_ATTR_TARGET, IOUR_POLICY_TARGET_RING), 0);
	cr_assert_eq(iour_policy__plan(p, &o, &pl), -EINVAL);
	cr_assert_null(pl);
	o.flags = IOUR_PLAN_FORCE_LEVEL | (1U << 2);
	cr_assert_eq(iour_policy__plan(p, &o, &pl), -EINVAL, "unknown flags");
	iour_policy__free(p);
}
