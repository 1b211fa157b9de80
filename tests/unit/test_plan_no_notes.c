/* SPDX-License-Identifier: MIT */
/*
 * A plan built without effect notes (IOUR__PLAN_NO_EFFECT_NOTES, what the
 * ring.h wrappers plan with: doc/design.md, "Ring apply") is the plan with
 * notes minus those notes: the same steps byte for byte, the same status,
 * flags and mechanism, the same other decisions.  The rows cover sets
 * whose effect notes loosen the plan (a plain-descriptor path open under a
 * FIXED_FILE set), at every compatibility level, where a loosened plan
 * applies nothing (soft, hard): a verdict lost with the notes would show
 * here as a different status or step list.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "iouring_restrict/iouring_restrict.h"
#include "probe/kernel.h"
#include "plan/planner.h"

enum set { NOP_ONLY, FIXED_SPLICE, FIXED_READ, OPEN_CONNECT, NSETS };

static struct iour_ruleset *make_set(enum set s)
{
	static const char *const ops[NSETS][3] = {
		[NOP_ONLY] = { "NOP" },
		[FIXED_SPLICE] = { "READ", "SPLICE" },
		[FIXED_READ] = { "READ" },
		[OPEN_CONNECT] = { "OPENAT", "CONNECT", "MSG_RING" },
	};
	struct iour_ruleset *rs = NULL;
	uint32_t req = s == FIXED_SPLICE || s == FIXED_READ ? IOUR_SQE_FIXED_FILE : 0;

	cr_assert_eq(iour_ruleset__new(NULL, &rs), 0);
	for (size_t i = 0; i < 3 && ops[s][i]; i++)
		cr_assert_eq(iour_ruleset__allow_sqe_op_name(rs, ops[s][i]), 0);
	cr_assert_eq(iour_ruleset__set_sqe_flags(rs, req, req), 0);
	if (s == OPEN_CONNECT)
		cr_assert_eq(iour_ruleset__deny_all_register_ops(rs), 0);
	return rs;
}

static bool effect_note(const struct iour_decision *d)
{
	return d->reason == IOUR_REASON_EFFECT_OPEN || d->reason == IOUR_REASON_EFFECT_FILTERED ||
	       d->reason == IOUR_REASON_EFFECT_CLOSED ||
	       (d->kind == IOUR_DECISION_LOOSENED && d->reason == IOUR_REASON_FIXED_FILES);
}

/* Decision `*i` onwards of `r` that is not an effect note, or false. */
static bool next_kept(const struct iour_report *r, int *i, struct iour_decision *d)
{
	for (; *i < iour_report__decision_cnt(r); (*i)++) {
		d->sz = sizeof(*d);
		cr_assert_eq(iour_report__decision(r, (size_t)*i, d), 0);
		if (!effect_note(d))
			return true;
	}
	return false;
}

static void same_steps(const struct iour_plan *a, const struct iour_plan *b, const char *what)
{
	cr_assert_eq(a->nsteps, b->nsteps, "%s: %zu steps, %zu without notes", what, a->nsteps,
		     b->nsteps);
	cr_assert_eq(a->n_task, b->n_task, "%s", what);
	for (size_t i = 0; i < a->nsteps; i++) {
		const struct iour__step *x = &a->steps[i], *y = &b->steps[i];

		cr_assert(x->side == y->side && x->op == y->op && x->call_op == y->call_op &&
				  x->nr_args == y->nr_args && x->opcode == y->opcode &&
				  x->entries == y->entries && x->arg_len == y->arg_len &&
				  x->insn_cnt == y->insn_cnt,
			  "%s: step %zu differs", what, i);
		cr_assert(!x->arg_len || memcmp(x->arg, y->arg, x->arg_len) == 0,
			  "%s: step %zu's argument differs", what, i);
		cr_assert(!x->insn_cnt ||
				  memcmp(x->insns, y->insns, x->insn_cnt * sizeof(*x->insns)) == 0,
			  "%s: step %zu's program differs", what, i);
	}
}

/* Plan one row both ways and compare; the number of effect notes the plan
 * with notes has (the plan without must have none). */
static int check(enum set s, uint32_t target, uint32_t compat, uint32_t level, int *loosened)
{
	struct iour_ruleset *rs = make_set(s);
	struct iour_plan *with = NULL, *without = NULL;
	const struct iour_report *rw, *ro;
	struct iour_policy *p = NULL;
	struct iour__kernel k;
	struct iour_decision dw, dn;
	char what[96];
	int i = 0, j = 0, notes = 0;

	snprintf(what, sizeof(what), "set %d, target %u, compat %u, level %u", s, target, compat,
		 level);
	cr_assert_eq(iour__kernel_for_level(level, &k), 0);
	cr_assert_eq(iour_policy__new(NULL, &p), 0);
	cr_assert_eq(iour_policy__set_ruleset(p, rs), 0);
	cr_assert_eq(iour_policy__set_attr(p, IOUR_POLICY_ATTR_TARGET, target), 0);
	cr_assert_eq(iour_policy__set_attr(p, IOUR_POLICY_ATTR_DEFAULT, IOUR_POLICY_DEFAULT_ALLOW),
		     0);
	cr_assert_eq(iour_policy__set_attr(p, IOUR_POLICY_ATTR_COMPAT, compat), 0);
	cr_assert_eq(iour__plan_build(p, &k, &with), 0, "%s", what);
	cr_assert_eq(iour__plan_build_flags(p, &k, IOUR__PLAN_NO_EFFECT_NOTES, &without), 0, "%s",
		     what);
	rw = iour_plan__report(with);
	ro = iour_plan__report(without);
	cr_expect_eq(iour_report__status(rw), iour_report__status(ro), "%s: status", what);
	cr_expect_eq(iour_report__flags(rw), iour_report__flags(ro), "%s: flags", what);
	cr_expect_eq(iour_report__mechanism(rw), iour_report__mechanism(ro), "%s: mechanism", what);
	if (iour_report__flags(rw) & IOUR_REPORT_LOOSENED)
		(*loosened)++;
	same_steps(with, without, what);
	for (int n = 0; n < iour_report__decision_cnt(rw); n++) {
		dw.sz = sizeof(dw);
		cr_assert_eq(iour_report__decision(rw, (size_t)n, &dw), 0);
		notes += effect_note(&dw);
	}
	for (;; i++, j++) {
		bool a = next_kept(rw, &i, &dw), b = next_kept(ro, &j, &dn);

		cr_assert_eq(a, b, "%s: decision counts differ", what);
		if (!a)
			break;
		cr_expect(dw.kind == dn.kind && dw.reason == dn.reason && dw.opcode == dn.opcode &&
				  dw.step == dn.step && dw.value == dn.value &&
				  strcmp(dw.text, dn.text) == 0,
			  "%s: decision %d differs (%s / %s)", what, i, dw.text, dn.text);
	}
	for (int n = 0; n < iour_report__decision_cnt(ro); n++) {
		dn.sz = sizeof(dn);
		cr_assert_eq(iour_report__decision(ro, (size_t)n, &dn), 0);
		cr_expect(!effect_note(&dn), "%s: an effect note without notes: %s", what, dn.text);
	}
	iour_plan__free(with);
	iour_plan__free(without);
	iour_policy__free(p);
	iour_ruleset__free(rs);
	return notes;
}

Test(plan_no_notes, same_plan_without_the_notes)
{
	static const uint32_t targets[] = { IOUR_POLICY_TARGET_RING, IOUR_POLICY_TARGET_TASK };
	static const uint32_t compats[] = { IOUR_POLICY_COMPAT_BEST_EFFORT, IOUR_POLICY_COMPAT_SOFT,
					    IOUR_POLICY_COMPAT_HARD };
	int notes = 0, loosened = 0, fixed_loosened = 0, read_loosened = 0;

	for (int s = 0; s < NSETS; s++)
		for (size_t t = 0; t < IOUR_ARRAY_SIZE(targets); t++)
			for (size_t c = 0; c < IOUR_ARRAY_SIZE(compats); c++)
				for (uint32_t level = IOUR_LEVEL_RING; level <= IOUR_LEVEL_MAX;
				     level++) {
					int before = loosened;

					notes += check((enum set)s, targets[t], compats[c], level,
						       &loosened);
					if (targets[t] != IOUR_POLICY_TARGET_RING ||
					    loosened == before)
						continue;
					fixed_loosened += s == FIXED_SPLICE;
					read_loosened += s == FIXED_READ;
				}
	/* The comparison is not empty: the plans with notes had effect notes,
	 * and the effects loosened the ring plans of the FIXED_FILE set that
	 * allows SPLICE (a plain descriptor in fd_in) at every level and
	 * compatibility level, not those of the one that allows READ alone. */
	cr_expect_gt(notes, 0);
	cr_expect_eq(fixed_loosened, (IOUR_LEVEL_MAX - IOUR_LEVEL_RING + 1) * 3,
		     "FIXED_FILE + SPLICE loosened %d ring plans", fixed_loosened);
	cr_expect_eq(read_loosened, 0, "FIXED_FILE + READ loosened %d ring plans", read_loosened);
}
