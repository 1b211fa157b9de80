/* SPDX-License-Identifier: MIT */
/*
 * The planner: policy + kernel description -> ordered kernel registrations
 * + the report they are expected to earn.  No system call happens here;
 * the kernel description (lib/probe/kernel.h) says everything the planner may
 * know about the kernel and task.
 *
 * The algorithm, in four passes:
 * 1. intent: what the policy means for each request opcode (deny, allow,
 *    or filter with a program), independently of any kernel;
 * 2. mechanism: which kernel paths the kernel offers for the policy's
 *    target (task restrictions, ring restrictions, filters, companion);
 * 3. achieved: what each opcode becomes on those paths (a conditional rule
 *    without filters or without the payload it reads degrades closed or
 *    open; unknown opcodes are clamped), every difference recorded;
 * 4. steps: the registrations in the order the kernel requires (no_new_privs,
 *    classic set, filters with DENY_REST on the last, enable), then the
 *    status and the compatibility verdict.
 * Passes 1 to 3 are in lib/plan/plan_choose.c, pass 4 and the report's verdicts
 * here; lib/plan/plan_access.c reads a finished plan.
 */
#include <stdio.h>
#include <stdlib.h>

#include "effects.h"
#include "enforce/enforce_internal.h"
#include "base/internal.h"
#include "planner.h"
#include "iouring_restrict/names.h"
#include "iouring_restrict/ruleset.h"

/* ---- plan construction ---- */

struct emit {
	const struct iour_ruleset *eff;
	const uint32_t *pdu, *fflags;
	int last_filter;
	bool deny_rest;
	bool via_filters; /* no classic set possible: deny through programs */
	struct iour__clamp *clamp;
	bool enforcing; /* out: a restricting step was emitted */
	bool loosened;  /* out: something could not be expressed */
};

struct builder {
	const struct iour_policy *p;
	const struct iour__kernel *kern;
	struct iour_plan *plan;
	uint32_t cap;
	int err;
	/* What iour__plan_build()'s steps hand on to each other. */
	struct iour__choice c;    /* passes 1 to 3 */
	struct iour__clamp clamp; /* what the classic sets left out */
	struct emit em;           /* the rules of the side being emitted */
	bool enforcing;           /* a step that restricts is planned */
	bool no_notes;            /* IOUR__PLAN_NO_EFFECT_NOTES */
	uint64_t blind;           /* fd -1 register opcodes the seccomp guard denies */
};

static struct iour__step *add_step(struct builder *b, uint32_t side, uint32_t op, uint32_t call_op,
				   uint32_t nr_args)
{
	struct iour_plan *pl = b->plan;
	struct iour__step *s;

	if (b->err)
		return NULL;
	if (pl->nsteps == b->cap) {
		uint32_t ncap = b->cap ? b->cap * 2 : 8;
		struct iour__step *n = iour__realloc(pl->steps, ncap * sizeof(*n));

		if (!n) {
			b->err = -ENOMEM;
			return NULL;
		}
		pl->steps = n;
		b->cap = ncap;
	}
	s = &pl->steps[pl->nsteps++];
	memset(s, 0, sizeof(*s));
	s->side = side;
	s->op = op;
	s->call_op = call_op;
	s->nr_args = nr_args;
	s->opcode = UINT32_MAX;
	return s;
}

static void *step_alloc_arg(struct builder *b, struct iour__step *s, size_t len)
{
	s->arg = iour__calloc(1, len);
	if (!s->arg) {
		b->err = -ENOMEM;
		return NULL;
	}
	s->arg_len = len;
	return s->arg;
}

static void add_nnp(struct builder *b)
{
	add_step(b, IOUR_STEP_TASK, IOUR_STEP_SET_NNP, 38 /* PR_SET_NO_NEW_PRIVS */, 1);
}

/* A classic set, as entries for `lim`, for the task (header first) or a
 * ring. */
static void add_restrictions(struct builder *b, uint32_t side, const struct iour_ruleset *eff,
			     const struct iour__kernel_limits *lim, struct iour__clamp *clamp)
{
	struct kio_restriction ents[IOUR__MAX_ENTRIES];
	struct iour__step *s;
	size_t hdr = side == IOUR_STEP_TASK ? sizeof(struct kio_task_restriction) : 0;
	uint8_t *arg;
	int n;

	if (b->err)
		return;
	n = iour__ruleset_entries(eff, lim, ents, clamp);
	if (n < 0) {
		b->err = -EINVAL;
		return;
	}
	s = add_step(b, side, IOUR_STEP_RESTRICTIONS, KIO_REGISTER_RESTRICTIONS,
		     side == IOUR_STEP_TASK ? 1 : (uint32_t)n);
	if (s && (arg = step_alloc_arg(b, s, hdr + (size_t)n * sizeof(*ents)))) {
		if (hdr) {
			struct kio_task_restriction h = { .flags = 0, .nr_res = (uint16_t)n };

			memcpy(arg, &h, sizeof(h));
		}
		memcpy(arg + hdr, ents, (size_t)n * sizeof(*ents));
		s->entries = (uint32_t)n;
	}
}

static void add_filter(struct builder *b, uint32_t side, uint32_t opcode,
		       const struct iour_insn *insns, size_t cnt, uint32_t flags, uint32_t pdu)
{
	struct iour__step *s = add_step(b, side, IOUR_STEP_BPF_FILTER, KIO_REGISTER_BPF_FILTER, 1);
	struct kio_bpf bpf;

	if (!s || !step_alloc_arg(b, s, sizeof(bpf)))
		return;
	memset(&bpf, 0, sizeof(bpf));
	bpf.cmd_type = KIO_BPF_CMD_FILTER;
	bpf.filter.opcode = opcode;
	bpf.filter.flags = flags;
	bpf.filter.filter_len = (uint32_t)cnt;
	bpf.filter.pdu_size = (uint8_t)pdu;
	memcpy(s->arg, &bpf, sizeof(bpf));
	s->opcode = opcode;
	s->fallback = b->p->attr[IOUR_POLICY_ATTR_NO_FILTER_FALLBACK];
	s->intent = IOUR__V_FILTER;
	s->insns = iour__malloc(cnt * sizeof(*s->insns));
	if (!s->insns) {
		b->err = -ENOMEM;
		return;
	}
	memcpy(s->insns, insns, cnt * sizeof(*s->insns));
	s->insn_cnt = cnt;
}

static void add_companion(struct builder *b, uint32_t err)
{
	struct iour_insn prog[IOUR__COMPANION_MAX_INSNS];
	struct iour__step *s;
	int n;

	if (b->err)
		return;
	/* io_uring_setup only: rings created before keep working. */
	n = iour__companion_build(0, err, prog);
	if (n < 0) {
		b->err = n;
		return;
	}
	s = add_step(b, IOUR_STEP_TASK, IOUR_STEP_COMPANION, 1 /* SECCOMP_SET_MODE_FILTER */, 0);
	if (!s || !step_alloc_arg(b, s, 16))
		return;
	/* struct sock_fprog: u16 len, padding, pointer (0 until executed). */
	memcpy(s->arg, &(uint16_t){ (uint16_t)n }, sizeof(uint16_t));
	s->insns = iour__malloc((size_t)n * sizeof(*s->insns));
	if (!s->insns) {
		b->err = -ENOMEM;
		return;
	}
	memcpy(s->insns, prog, (size_t)n * sizeof(*prog));
	s->insn_cnt = (size_t)n;
}

/*
 * A seccomp guard: io_uring_register on fd -1 for the register opcodes in
 * `blind` fails with EACCES, as Linux 7.3.4's task set makes it fail for
 * the opcodes its register list does not name (doc/kernel.md, 3); with
 * `setup_err`, io_uring_setup fails too (the companion).
 */
static void add_guard(struct builder *b, uint32_t setup_err, uint64_t blind)
{
	struct iour_insn prog[IOUR__GUARD_MAX_INSNS];
	struct iour__step *s;
	int n;

	if (b->err)
		return;
	n = iour__companion_build_guard(setup_err, blind, EACCES, prog);
	if (n < 0) {
		b->err = n;
		return;
	}
	s = add_step(b, IOUR_STEP_TASK, IOUR_STEP_COMPANION, 1 /* SECCOMP_SET_MODE_FILTER */, 0);
	if (!s || !step_alloc_arg(b, s, 16))
		return;
	memcpy(s->arg, &(uint16_t){ (uint16_t)n }, sizeof(uint16_t));
	s->insns = iour__malloc((size_t)n * sizeof(*s->insns));
	if (!s->insns) {
		b->err = -ENOMEM;
		return;
	}
	memcpy(s->insns, prog, (size_t)n * sizeof(*prog));
	s->insn_cnt = (size_t)n;
}

static void blind_note(struct iour_report *r, uint64_t blind)
{
	char names[160] = "";

	for (uint32_t op = 0; op < 64; op++) {
		size_t used = strlen(names);

		if (blind & (1ULL << op))
			snprintf(names + used, sizeof(names) - used, "%s%s", used ? ", " : "",
				 iour_register_op_name(op));
	}
	iour__report_add(r, IOUR_DECISION_NOTE, IOUR_REASON_COMPANION, IOUR_DECISION_NO_OPCODE,
			 UINT32_MAX, EACCES,
			 "io_uring_register on fd -1 (no ring) fails with EACCES for %s (seccomp "
			 "guard): this kernel's task set does not gate ring-less register calls",
			 names);
}

static bool ruleset_gates(const struct iour_ruleset *eff)
{
	return eff->sqe_restricted || eff->reg_restricted || !iour__flags_open(eff);
}

static void report_clamp(struct builder *b, const bool *mentioned, const struct iour__clamp *c)
{
	struct iour_report *r = &b->plan->rep;
	uint32_t op;
	char tmp[24];

	for (op = b->kern->op_last; op < IOUR__NOPCODES; op++) {
		if (mentioned[op] && b->plan->intent[op] != IOUR__V_DENY)
			iour__report_add(
				r, IOUR_DECISION_CLAMPED, IOUR_REASON_UNKNOWN_OPCODE, op,
				UINT32_MAX, 0,
				"%s: not known to this kernel (IORING_OP_LAST %u); left out",
				iour__op_label(op, tmp, sizeof(tmp)), b->kern->op_last);
	}
	for (op = 0; c && op < IOUR__NOPCODES; op++) {
		if (iour__bm_test(&c->reg_ops, op)) {
			const char *n = iour_register_op_name(op);

			iour__report_add(r, IOUR_DECISION_CLAMPED, IOUR_REASON_UNKNOWN_OPCODE,
					 IOUR_DECISION_NO_OPCODE, UINT32_MAX, (int32_t)op,
					 "register opcode %s (%u): not known to this kernel "
					 "(IORING_REGISTER_LAST %u); left out",
					 n ? n : "?", op, b->kern->reg_last);
		}
	}
}

static void plan_free_steps(struct iour_plan *pl)
{
	size_t i;

	for (i = 0; i < pl->nsteps; i++) {
		iour__free(pl->steps[i].arg);
		iour__free(pl->steps[i].insns);
	}
	iour__free(pl->steps);
	pl->steps = NULL;
	pl->nsteps = pl->n_task = 0;
}

void iour__plan_drop_enable(struct iour_plan *pl)
{
	if (pl->has_ring_part && pl->nsteps > pl->n_task &&
	    pl->steps[pl->nsteps - 1].op == IOUR_STEP_ENABLE_RINGS) {
		pl->nsteps--;
		pl->rep.steps_total = (uint32_t)pl->nsteps;
	}
}

/* Documented in include/iouring_restrict/plan.h */
void iour_plan__free(struct iour_plan *plan)
{
	if (!plan)
		return;
	plan_free_steps(plan);
	iour__report_fini(&plan->rep);
	iour__free(plan);
}

static const struct iour_insn deny_insn[1] = { { KBPF_RET | KBPF_K, 0, 0, 0 } };

/*
 * The rules for one side (task: fd -1, or a ring): the classic set, then
 * the filters.  When the side already holds a classic set (a task that
 * registered or inherited one; a ring that inherited its task's), a second
 * classic set is refused by the kernel, so denied opcodes are closed by
 * `ret #0` programs instead; filters stack with what is there, so the
 * result is at least as strict as the policy.  DENY_REST is not used then:
 * it skips opcodes that already have (inherited) filters.
 */
static void emit_rules(struct builder *b, uint32_t side, struct emit *e)
{
	const struct iour__kernel *kern = b->kern;
	struct iour__kernel_limits lim = { kern->op_last, kern->reg_last,
					   side == IOUR_STEP_TASK ? true : kern->split };
	uint32_t op, op_last = kern->op_last < IOUR__NOPCODES ? kern->op_last : IOUR__NOPCODES;
	struct iour_report *r = &b->plan->rep;

	if (!e->via_filters) {
		if (ruleset_gates(e->eff)) {
			add_restrictions(b, side, e->eff, &lim, e->clamp);
			e->enforcing = true;
		}
	} else {
		iour__plan_note(
			r, IOUR_DECISION_NOTE, IOUR_REASON_ALREADY_RESTRICTED,
			IOUR_DECISION_NO_OPCODE, "%s",
			side == IOUR_STEP_TASK ?
				"the task already has io_uring restrictions: denied opcodes are "
				"closed by filters that stack on them" :
				"new rings inherit the task's classic set: denied opcodes are "
				"closed by ring filters that stack on it");
		if (e->eff->reg_restricted || !iour__flags_open(e->eff)) {
			e->loosened = true;
			iour__plan_note(
				r, IOUR_DECISION_DROPPED, IOUR_REASON_NOT_EXPRESSIBLE,
				IOUR_DECISION_NO_OPCODE, "%s",
				"register-opcode and SQE-flag rules need a classic set, which "
				"cannot be registered again; only the restrictions already in "
				"place apply to them");
		}
	}
	for (op = 0; op < op_last; op++) {
		uint8_t v = b->plan->achieved[op];

		if (v == IOUR__V_FILTER) {
			/* every program of a split deny-list; DENY_REST on the
			 * very last registration only */
			for (const struct iour_prog *q = b->p->progs[op]; q; q = q->next)
				add_filter(b, side, op, q->insns, q->cnt,
					   e->fflags[op] |
						   (e->deny_rest && !e->via_filters &&
								    (int)op == e->last_filter &&
								    !q->next ?
							    KIO_BPF_FILTER_DENY_REST :
							    0),
					   e->pdu[op]);
			e->enforcing = true;
		} else if (v == IOUR__V_DENY && e->via_filters) {
			add_filter(b, side, op, deny_insn, 1, 0, 0);
			b->plan->steps[b->plan->nsteps - 1].intent = IOUR__V_DENY;
			e->enforcing = true;
		}
	}
}

/*
 * A task target on a kernel without task restrictions: the report
 * describes the task, and what the ring part does for rings created
 * through the library is kept aside for iour_plan__apply_ring() and
 * iour_plan__create_ring().  With the companion, the task can create no
 * ring (partially enforced, tightened); without it nothing restricts the
 * task (not enforced: zero steps apply to it).
 */
static void task_without_task_path(struct iour_plan *pl, bool companion)
{
	struct iour_report *r = &pl->rep;

	pl->ring_rep = true;
	pl->ring_status = r->status;
	pl->ring_mech = r->mechanism & ~(IOUR_MECH_COMPANION | IOUR_MECH_TASK);
	pl->ring_flags = r->flags;
	r->mechanism &= IOUR_MECH_COMPANION | IOUR_MECH_TASK;
	if (companion) {
		r->status = IOUR_STATUS_PARTIALLY;
		r->flags &= ~(IOUR_REPORT_LOOSENED | IOUR_REPORT_RING_ONLY);
		r->flags |= IOUR_REPORT_TIGHTENED;
		return;
	}
	r->status = IOUR_STATUS_NOT_ENFORCED;
	r->flags &= ~IOUR_REPORT_TIGHTENED;
	r->flags |= IOUR_REPORT_LOOSENED;
	iour__report_add(r, IOUR_DECISION_DROPPED, IOUR_REASON_NO_TASK_RESTRICTIONS,
			 IOUR_DECISION_NO_OPCODE, UINT32_MAX, 0, "%s",
			 "nothing restricts the task: it and its descendants can create "
			 "unrestricted rings (IOUR_POLICY_ATTR_COMPANION would make "
			 "io_uring_setup fail instead)");
}

/*
 * The task's filters are registered after its classic set, and where the
 * probe saw IOUR_FEATURES_TASK_SET_GATES_FILTERS (Debian's 7.3.4) a set
 * with register entries gates those fd -1 registrations by its register
 * list (doc/kernel.md 3.3).  The set then also lists BPF_FILTER; a set
 * whose only register entry would have been the ENABLE_RINGS sentinel
 * keeps it, so disabled rings are still enabled by their owner and every
 * other register opcode stays gated.  A filter can only add denials
 * (doc/security.md 3).
 */
static void allow_task_filters(struct iour_report *r, struct iour_ruleset *eff,
			       const struct iour__kernel *kern)
{
	bool none = true;
	uint32_t op;

	if (!eff->reg_restricted || kern->reg_last <= KIO_REGISTER_BPF_FILTER ||
	    iour__bm_test(&eff->reg_ops, KIO_REGISTER_BPF_FILTER))
		return;
	for (op = 0; op < kern->reg_last && none; op++)
		none = !iour__bm_test(&eff->reg_ops, op);
	iour__bm_set(&eff->reg_ops, KIO_REGISTER_BPF_FILTER);
	if (none)
		iour__bm_set(&eff->reg_ops, KIO_REGISTER_ENABLE_RINGS);
	iour__report_add(r, IOUR_DECISION_NOTE, IOUR_REASON_NONE, IOUR_DECISION_NO_OPCODE,
			 UINT32_MAX, 0, "%s%s%s", "the task's set lists register opcode BPF_FILTER",
			 none ? " (and ENABLE_RINGS, which a set allowing no register opcode "
				"lists anyway)" :
				"",
			 ": this kernel gates the task's own filter registrations by the set's "
			 "register list, and the filters come after the set; a filter can only "
			 "add denials (the task and its rings may register more of them)");
}

/* A new plan for `p` on `kern`: the kernel, the attributes, an empty report. */
static struct iour_plan *plan_new(const struct iour_policy *p, const struct iour__kernel *kern)
{
	struct iour_plan *pl = iour__calloc(1, sizeof(*pl));

	if (!pl)
		return NULL;
	iour__report_init(&pl->rep);
	pl->rep.flags |= IOUR_REPORT_PLANNED;
	pl->kernel = *kern;
	memcpy(pl->attr, p->attr, sizeof(pl->attr));
	pl->target = p->attr[IOUR_POLICY_ATTR_TARGET];
	return pl;
}

/*
 * no_new_privs first, when the steps `need` it and the task has neither it
 * nor surely CAP_SYS_ADMIN; `noted` says so in the report.  -EACCES when
 * the policy does not let the plan set it and the task lacks the
 * capability (doc/design.md, "Policies, plans, the executor and reports":
 * ordering).
 */
static int plan_nnp(struct builder *b, bool need, bool noted)
{
	const struct iour__kernel *kern = b->kern;
	struct iour_report *r = &b->plan->rep;

	if (!need || kern->priv == IOUR__PRIV_YES || kern->nnp)
		return 0;
	if (b->p->attr[IOUR_POLICY_ATTR_NNP] == IOUR_POLICY_NNP_SET) {
		add_nnp(b);
		r->flags |= IOUR_REPORT_NNP_SET;
		if (noted)
			iour__plan_note(r, IOUR_DECISION_NOTE, IOUR_REASON_NNP,
					IOUR_DECISION_NO_OPCODE, "%s",
					"no_new_privs is set first (the task path needs it or "
					"CAP_SYS_ADMIN); it is inherited and survives execve");
	} else if (kern->priv == IOUR__PRIV_NO) {
		return -EACCES;
	}
	return 0;
}

/* Pass 4 on the task path: no_new_privs, the task's classic set, its
 * filters, the seccomp guard last (doc/design.md, "Policies, plans, the
 * executor and reports": ordering). */
static int plan_task(struct builder *b)
{
	const struct iour__kernel *kern = b->kern;
	struct iour__choice *c = &b->c;
	struct iour_report *r = &b->plan->rep;
	bool classic = ruleset_gates(&c->eff);
	int rc;

	rc = plan_nnp(b, classic || c->any_filter, true);
	if (rc)
		return rc;
	b->em.via_filters = classic && kern->task_restricted;
	if (b->em.via_filters && !kern->task_bpf)
		return -EPERM; /* A classic task set can be registered only once. */
	if (c->any_filter && !b->em.via_filters && kern->task_gates_filters)
		allow_task_filters(r, &c->eff, kern);
	emit_rules(b, IOUR_STEP_TASK, &b->em);
	/* Last, so that the plan's own fd -1 registrations go through.
	 * BPF_FILTER stays allowed where the plan registers filters:
	 * 7.3.4's set lists it then (allow_task_filters()), and a
	 * filter can only add denials. */
	if (!kern->task_gates_filters) {
		b->blind = iour__effects_blind_unlisted(&c->eff, kern->reg_last);
		if (c->any_filter && !b->em.via_filters)
			b->blind &= ~(1ULL << KIO_REGISTER_BPF_FILTER);
	}
	if (b->blind) {
		add_guard(b, 0, b->blind);
		blind_note(r, b->blind);
	}
	b->enforcing = b->em.enforcing;
	c->loosened |= b->em.loosened;
	b->plan->n_task = b->plan->nsteps;
	r->mechanism = b->enforcing ? IOUR_MECH_TASK : IOUR_MECH_NONE;
	iour__plan_note(r, IOUR_DECISION_NOTE, IOUR_REASON_EXISTING_RINGS, IOUR_DECISION_NO_OPCODE,
			"%s",
			"rings that exist already, and rings of other existing threads, are "
			"not affected");
	return 0;
}

/* Pass 4 for a task the kernel cannot restrict: the seccomp companion makes
 * io_uring_setup fail, as a guard when fd -1 register calls need closing
 * too (doc/design.md, "Policies, plans, the executor and reports":
 * degradation is always reported). */
static int plan_companion(struct builder *b)
{
	const struct iour__kernel *kern = b->kern;
	struct iour__choice *c = &b->c;
	struct iour_report *r = &b->plan->rep;
	uint32_t e = b->p->attr[IOUR_POLICY_ATTR_COMPANION] == IOUR_POLICY_COMPANION_EPERM ? EPERM :
											     ENOSYS;
	int rc;

	rc = plan_nnp(b, true, false);
	if (rc)
		return rc;
	b->blind = iour__effects_blind_unlisted(&c->eff, kern->reg_last);
	if (b->blind) {
		add_guard(b, e, b->blind);
		blind_note(r, b->blind);
	} else {
		add_companion(b, e);
	}
	r->mechanism |= IOUR_MECH_COMPANION;
	b->enforcing = true;
	c->tightened = true;
	iour__report_add(r, IOUR_DECISION_TIGHTENED, IOUR_REASON_COMPANION, IOUR_DECISION_NO_OPCODE,
			 UINT32_MAX, (int32_t)e,
			 "io_uring_setup fails with %s for the task and its "
			 "descendants (seccomp companion); rings created before "
			 "keep working",
			 e == EPERM ? "EPERM" : "ENOSYS");
	return 0;
}

/* Pass 4 on the ring path: the classic set on the disabled ring, the ring
 * filters, ENABLE_RINGS last (doc/design.md, "Policies, plans, the
 * executor and reports": ordering). */
static int plan_ring(struct builder *b)
{
	const struct iour__kernel *kern = b->kern;
	struct iour__choice *c = &b->c;
	struct iour_plan *pl = b->plan;
	struct iour_report *r = &pl->rep;

	b->em.via_filters = kern->ring_busy && ruleset_gates(&c->eff);
	if (b->em.via_filters && !kern->ring_bpf) {
		/* The inherited set makes RESTRICTIONS fail (EBUSY). */
		b->em.via_filters = false;
		return -EBUSY;
	}
	emit_rules(b, IOUR_STEP_RING, &b->em);
	add_step(b, IOUR_STEP_RING, IOUR_STEP_ENABLE_RINGS, KIO_REGISTER_ENABLE_RINGS, 0);
	pl->has_ring_part = true;
	c->loosened |= b->em.loosened;
	if (b->em.enforcing) {
		b->enforcing = true;
		if (!b->em.via_filters && ruleset_gates(&c->eff))
			r->mechanism |= IOUR_MECH_RING_DISABLED;
		if (c->any_filter || b->em.via_filters)
			r->mechanism |= IOUR_MECH_RING;
	}
	if (pl->target == IOUR_POLICY_TARGET_TASK && !pl->brokered) {
		r->flags |= IOUR_REPORT_RING_ONLY;
		if (!c->m.companion)
			c->loosened = true;
	}
	return 0;
}

/* Pass 4: the steps of the chosen paths, task steps before ring steps;
 * -EACCES, -EPERM or -EBUSY when a path cannot take them. */
static int plan_steps(struct builder *b)
{
	struct iour__choice *c = &b->c;
	int rc;

	b->em.eff = &c->eff;
	b->em.pdu = c->pdu;
	b->em.fflags = c->fflags;
	b->em.last_filter = c->last_filter;
	b->em.deny_rest = c->deny_rest;
	b->em.clamp = &b->clamp;
	if (c->m.task)
		return plan_task(b);
	if (c->m.companion) {
		rc = plan_companion(b);
		if (rc)
			return rc;
	}
	b->plan->n_task = b->plan->nsteps;
	return c->m.ring ? plan_ring(b) : 0;
}

/*
 * A brokered task policy: the broker restricts rings, and io_uring_register
 * on fd -1 reaches no ring, so the register opcodes the policy does not
 * allow stay open there (doc/security.md 2.1, "The ring broker's view").
 */
static void brokered_blind(struct builder *b)
{
	uint64_t open = iour__effects_blind_unlisted(&b->c.eff, b->kern->reg_last);

	for (uint32_t op = 0; op < 64; op++) {
		if (!(open & (1ULL << op)))
			continue;
		b->c.loosened = true;
		iour__report_add(&b->plan->rep, IOUR_DECISION_LOOSENED, IOUR_REASON_NOT_EXPRESSIBLE,
				 IOUR_DECISION_NO_OPCODE, UINT32_MAX, (int32_t)op,
				 "io_uring_register on fd -1 (no ring) works for %s although the "
				 "policy does not allow it: the ring broker restricts rings, and a "
				 "ring-less register call reaches none",
				 iour_register_op_name(op));
	}
}

/* The effect notes: what the planned steps leave reachable (lib/plan/effects.c;
 * doc/security.md, 2.1). */
static void plan_effects(struct builder *b)
{
	const struct iour__mech *m = &b->c.m;
	struct iour_plan *pl = b->plan;

	if (m->task || m->ring || m->companion) {
		struct iour__effect_in ein = {
			.achieved = pl->achieved,
			.eff = &b->c.eff,
			.op_last = b->c.op_last,
			.reg_last = b->kern->reg_last,
			.rings = m->task || m->ring,
			.no_new_rings = m->companion,
			.blind_gated = m->task && b->kern->task_gates_filters,
			.blind_denied = b->blind,
			.blind_reached = pl->target == IOUR_POLICY_TARGET_TASK,
		};

		if (iour__effects_report(b->no_notes ? NULL : &pl->rep, &ein) &&
		    (m->task || m->ring) && !m->companion)
			b->c.loosened = true;
	}
	if (pl->brokered && m->ring)
		brokered_blind(b);
}

/* The report's status and its LOOSENED and TIGHTENED flags (doc/design.md,
 * "Policies, plans, the executor and reports": degradation). */
static void plan_status(struct builder *b)
{
	const struct iour__mech *m = &b->c.m;
	struct iour_plan *pl = b->plan;
	struct iour_report *r = &pl->rep;
	bool restricts = b->c.restricts, loosened = b->c.loosened, tightened = b->c.tightened;

	if (!restricts && (m->task || m->ring)) {
		r->status = IOUR_STATUS_FULLY;
		loosened = tightened = false;
		r->flags &= ~IOUR_REPORT_RING_ONLY;
	} else if (!b->enforcing) {
		r->status = IOUR_STATUS_NOT_ENFORCED;
		loosened = restricts;
	} else if (loosened || tightened || (r->flags & IOUR_REPORT_RING_ONLY)) {
		r->status = IOUR_STATUS_PARTIALLY;
	} else {
		r->status = IOUR_STATUS_FULLY;
	}
	if (loosened)
		r->flags |= IOUR_REPORT_LOOSENED;
	if (tightened)
		r->flags |= IOUR_REPORT_TIGHTENED;
	if (pl->target == IOUR_POLICY_TARGET_TASK && !m->task && restricts && !pl->brokered)
		task_without_task_path(pl, m->companion);
}

/* The compatibility level: SOFT and HARD turn a plan that is not fully
 * enforced into one that applies nothing (a ring part still enables its
 * ring; doc/design.md, "Policies, plans, the executor and reports"). */
static void plan_compat(struct builder *b)
{
	struct iour_plan *pl = b->plan;
	struct iour_report *r = &pl->rep;
	bool restricts = b->c.restricts, hard, ring_part;

	if (r->status == IOUR_STATUS_FULLY ||
	    b->p->attr[IOUR_POLICY_ATTR_COMPAT] == IOUR_POLICY_COMPAT_BEST_EFFORT)
		return;
	hard = b->p->attr[IOUR_POLICY_ATTR_COMPAT] == IOUR_POLICY_COMPAT_HARD;
	ring_part = pl->has_ring_part && !hard;
	plan_free_steps(pl);
	pl->has_ring_part = false;
	pl->refused = hard;
	if (ring_part) {
		/* A ring created disabled must still be enabled. */
		b->cap = 0;
		add_step(b, IOUR_STEP_RING, IOUR_STEP_ENABLE_RINGS, KIO_REGISTER_ENABLE_RINGS, 0);
		pl->has_ring_part = true;
	}
	r->status = IOUR_STATUS_NOT_ENFORCED;
	r->mechanism = IOUR_MECH_NONE;
	r->flags = IOUR_REPORT_PLANNED | (restricts ? IOUR_REPORT_LOOSENED : 0);
	pl->ring_rep = false;
	iour__plan_note(r, IOUR_DECISION_DROPPED,
			hard ? IOUR_REASON_COMPAT_HARD : IOUR_REASON_COMPAT_SOFT,
			IOUR_DECISION_NO_OPCODE, "%s",
			hard ? "the kernel cannot enforce the policy exactly and the policy "
			       "requires it: nothing will be applied (hard requirement)" :
			       "the kernel cannot enforce the policy exactly: nothing is applied "
			       "(soft requirement, all or nothing)");
}

/* The planner: passes 1 to 3 (plan_choose.c), pass 4 (the steps), then
 * the report's notes, status and compatibility verdict. */
int iour__plan_build(const struct iour_policy *p, const struct iour__kernel *kern,
		     struct iour_plan **out)
{
	return iour__plan_build_flags(p, kern, 0, out);
}

int iour__plan_build_flags(const struct iour_policy *p, const struct iour__kernel *kern,
			   uint32_t flags, struct iour_plan **out)
{
	struct builder b = { .p = p, .kern = kern };
	int rc;

	if (!p || !kern || !out)
		return -EINVAL;
	if ((flags & IOUR_PLAN_BROKERED) &&
	    p->attr[IOUR_POLICY_ATTR_TARGET] != IOUR_POLICY_TARGET_TASK)
		return -EINVAL;
	b.plan = plan_new(p, kern);
	if (!b.plan)
		return -ENOMEM;
	b.plan->brokered = (flags & IOUR_PLAN_BROKERED) != 0;
	b.no_notes = (flags & IOUR__PLAN_NO_EFFECT_NOTES) != 0;
	iour__plan_choose(p, kern, b.plan, &b.c);
	rc = plan_steps(&b);
	if (rc)
		goto fail;
	plan_effects(&b);
	rc = b.err;
	if (rc)
		goto fail;
	if (b.c.m.task || b.c.m.ring)
		report_clamp(&b, b.c.mentioned, &b.clamp);
	plan_status(&b);
	plan_compat(&b);
	rc = b.err;
	if (rc)
		goto fail;
	b.plan->rep.steps_total = (uint32_t)b.plan->nsteps;
	if (b.plan->rep.oom) {
		rc = -ENOMEM;
		goto fail;
	}
	*out = b.plan;
	return 0;
fail:
	iour_plan__free(b.plan);
	return rc;
}

/* ---- public planning entry ---- */

/* Documented in include/iouring_restrict/plan.h */
int iour_policy__plan(const struct iour_policy *p, const struct iour_plan_opts *opts,
		      struct iour_plan **out)
{
	const struct iour_features *feat;
	struct iour__kernel t;
	uint32_t flags, level;
	int rc;

	iour__detail_reset(__func__);
	if (!p || !out)
		return -EINVAL;
	rc = IOUR_OPTS_VALID(opts, iour_plan_opts);
	if (rc)
		return rc;
	flags = IOUR_OPTS_GET(opts, flags, 0);
	feat = IOUR_OPTS_GET(opts, features, NULL);
	level = IOUR_OPTS_GET(opts, level, 0);
	if (flags & ~(IOUR_PLAN_FORCE_LEVEL | IOUR_PLAN_BROKERED))
		return iour__detail(__func__, -EINVAL, "flags 0x%x: unknown bits 0x%x", flags,
				    flags & ~(IOUR_PLAN_FORCE_LEVEL | IOUR_PLAN_BROKERED));
	if ((flags & IOUR_PLAN_FORCE_LEVEL) && feat)
		return iour__detail(__func__, -EINVAL,
				    "IOUR_PLAN_FORCE_LEVEL and features: give one or the other");
	if ((flags & IOUR_PLAN_FORCE_LEVEL) && level > IOUR_LEVEL_MAX)
		return iour__detail(__func__, -EINVAL, "level %u: levels are 0..%d", level,
				    IOUR_LEVEL_MAX);
	if (flags & IOUR_PLAN_FORCE_LEVEL)
		rc = iour__kernel_for_level(level, &t);
	else if (level != 0)
		rc = iour__detail(
			__func__, -EINVAL,
			"level %u without IOUR_PLAN_FORCE_LEVEL: set the flag to force it", level);
	else if (feat) {
		rc = iour__kernel_from_features(feat, &t);
		t.origin = IOUR__KERNEL_DESCRIBED; /* said so by the dry run */
	} else
		rc = iour__kernel_probe(&t);
	if (rc)
		return iour__err_public(rc, IOUR__ERRSET_POLICY_PLAN);
	return iour__err_public(iour__plan_build_flags(p, &t, flags, out),
				IOUR__ERRSET_POLICY_PLAN);
}
