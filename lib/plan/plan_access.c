/* SPDX-License-Identifier: MIT */
/*
 * Reading a plan: the public getters of its summary, its steps (each
 * step's argument bytes and program by two-call sizing), the classic set
 * a restriction step enforces, and its expected report.  lib/plan/plan.c builds and frees plans.
 */
#include "base/internal.h"
#include "planner.h"
#include "policy/ruleset_internal.h"
#include "iouring_restrict/ruleset.h"

/* Documented in include/iouring_restrict/plan.h */
int iour_plan__info(const struct iour_plan *plan, struct iour_plan_info *info)
{
	struct iour_plan_info v;
	size_t n;

	if (!plan || !info || info->sz < offsetof(struct iour_plan_info, target) + 4)
		return -EINVAL;
	memset(&v, 0, sizeof(v));
	v.sz = info->sz;
	v.target = plan->target;
	v.level = plan->kernel.level;
	v.op_last = plan->kernel.op_last;
	v.reg_last = plan->kernel.reg_last;
	v.split_gates = plan->kernel.split;
	v.flags = (plan->kernel.origin == IOUR__KERNEL_FORCED ? IOUR_PLAN_INFO_FORCED : 0) |
		  (plan->refused ? IOUR_PLAN_INFO_REFUSED : 0);
	v.task_steps = (uint32_t)plan->n_task;
	v.ring_steps = (uint32_t)(plan->nsteps - plan->n_task);
	n = info->sz < sizeof(v) ? info->sz : sizeof(v);
	memcpy(info, &v, n);
	return 0;
}

/* Documented in include/iouring_restrict/plan.h */
int iour_plan__step_cnt(const struct iour_plan *plan)
{
	if (!plan)
		return -EINVAL;
	return (int)plan->nsteps;
}

/* Documented in include/iouring_restrict/plan.h */
int iour_plan__step(const struct iour_plan *plan, size_t i, struct iour_plan_step *out)
{
	struct iour_plan_step v;
	const struct iour__step *s;
	size_t n;

	if (!plan || !out || out->sz < offsetof(struct iour_plan_step, side) + 4)
		return -EINVAL;
	if (i >= plan->nsteps)
		return -ERANGE;
	s = &plan->steps[i];
	memset(&v, 0, sizeof(v));
	v.sz = out->sz;
	v.side = s->side;
	v.op = s->op;
	v.call_op = s->call_op;
	v.nr_args = s->nr_args;
	v.opcode = s->opcode;
	v.arg_len = (uint32_t)s->arg_len;
	v.insn_cnt = (uint32_t)s->insn_cnt;
	v.entries = s->entries;
	n = out->sz < sizeof(v) ? out->sz : sizeof(v);
	memcpy(out, &v, n);
	return 0;
}

/*
 * Two-call sizing of step `i`'s `n` items of `size` bytes at `src`: with
 * `buf` NULL, `*cnt` receives `n`; else they are copied if `*cnt` is
 * enough (-ERANGE and the needed count otherwise).
 */
static int step_copy(const struct iour_plan *plan, size_t i, const void *src, size_t n, size_t size,
		     void *buf, size_t *cnt)
{
	if (!plan || !cnt)
		return -EINVAL;
	if (i >= plan->nsteps)
		return -ERANGE;
	if (buf && *cnt < n) {
		*cnt = n;
		return -ERANGE;
	}
	if (buf && n)
		memcpy(buf, src, n * size);
	*cnt = n;
	return 0;
}

/* Documented in include/iouring_restrict/plan.h */
int iour_plan__step_arg(const struct iour_plan *plan, size_t i, void *buf, size_t *len)
{
	const struct iour__step *s = plan && i < plan->nsteps ? &plan->steps[i] : NULL;

	return step_copy(plan, i, s ? s->arg : NULL, s ? s->arg_len : 0, 1, buf, len);
}

/* Documented in include/iouring_restrict/plan.h */
int iour_plan__step_insns(const struct iour_plan *plan, size_t i, struct iour_insn *buf,
			  size_t *cnt)
{
	const struct iour__step *s = plan && i < plan->nsteps ? &plan->steps[i] : NULL;

	return step_copy(plan, i, s ? s->insns : NULL, s ? s->insn_cnt : 0, sizeof(*buf), buf, cnt);
}

/* Documented in include/iouring_restrict/plan.h */
const struct iour_report *iour_plan__report(const struct iour_plan *plan)
{
	return plan ? &plan->rep : NULL;
}

/*
 * The `n` entries at `ents` as the plan's kernel reads them (doc/kernel.md
 * 1.5, 2.3, 2.4): coupled gates are both on once a set is registered;
 * split gates only for a side with an entry; zero entries gate both.
 * SQE_FLAGS_* replace a mask, the later entry wins.
 */
static void decode_entries(struct iour_ruleset *rs, const uint8_t *ents, size_t n, bool split)
{
	bool sqe_gate = !split || n == 0, reg_gate = !split || n == 0;
	uint8_t allowed = 0, required = 0;

	for (size_t i = 0; i < n; i++) {
		struct kio_restriction e;

		memcpy(&e, ents + i * sizeof(e), sizeof(e));
		switch (e.opcode) {
		case KIO_RESTRICTION_REGISTER_OP:
			reg_gate = true;
			if (e.register_op < IOUR_REGISTER__COUNT)
				iour__bm_set(&rs->reg_ops, e.register_op);
			break;
		case KIO_RESTRICTION_SQE_OP:
			sqe_gate = true;
			if (e.sqe_op < IOUR_OP__COUNT)
				iour__bm_set(&rs->sqe_ops, e.sqe_op);
			break;
		case KIO_RESTRICTION_SQE_FLAGS_ALLOWED:
			sqe_gate = true;
			allowed = e.sqe_flags;
			break;
		case KIO_RESTRICTION_SQE_FLAGS_REQUIRED:
			sqe_gate = true;
			required = e.sqe_flags;
			break;
		default: /* the planner writes no other kind */
			break;
		}
	}
	rs->sqe_restricted = sqe_gate;
	rs->reg_restricted = reg_gate;
	if (sqe_gate) {
		rs->flags_decided = true;
		rs->flags_allowed = (uint8_t)(allowed | required);
		rs->flags_required = required;
	}
}

static int get_ruleset(const struct iour_plan *plan, uint32_t side, struct iour_ruleset **out)
{
	const struct iour__step *s = NULL;
	struct iour_ruleset *rs = NULL;
	size_t hdr;
	int rc;

	if (!plan || !out || (side != IOUR_STEP_TASK && side != IOUR_STEP_RING))
		return -EINVAL;
	*out = NULL;
	for (size_t i = 0; i < plan->nsteps && !s; i++)
		if (plan->steps[i].side == side && plan->steps[i].op == IOUR_STEP_RESTRICTIONS)
			s = &plan->steps[i];
	if (!s)
		return 0;
	/* On fd -1 the entries follow the 16-byte task header. */
	hdr = side == IOUR_STEP_TASK ? sizeof(struct kio_task_restriction) : 0;
	if (s->arg_len < hdr + (size_t)s->entries * sizeof(struct kio_restriction))
		return -EINVAL; /* not a step the planner writes */
	rc = iour_ruleset__new(NULL, &rs);
	if (rc)
		return rc;
	decode_entries(rs, s->arg + hdr, s->entries, plan->kernel.split);
	*out = rs;
	return 0;
}

/* Documented in include/iouring_restrict/plan.h */
int iour_plan__get_ruleset(const struct iour_plan *plan, uint32_t side, struct iour_ruleset **out)
{
	return iour__err_public(get_ruleset(plan, side, out), IOUR__ERRSET_PLAN_GET_RULESET);
}
