/* SPDX-License-Identifier: MIT */
/*
 * The planner: policy + kernel description -> ordered kernel registrations
 * + the report they are expected to earn.  No system call happens here;
 * the kernel description (lib/kernel.h) says everything the planner may
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
 * lib/plan_access.c reads a finished plan.
 */
#include <stdio.h>
#include <stdlib.h>

#include "effects.h"
#include "enforce_internal.h"
#include "internal.h"
#include "plan_internal.h"
#include "iouring_restrict/names.h"
#include "iouring_restrict/ruleset.h"

const char *iour__op_label(uint32_t op, char *tmp, size_t tmplen)
{
	const char *n = iour_opcode_name(op);

	if (n)
		return n;
	snprintf(tmp, tmplen, "opcode %u", op);
	return tmp;
}

/* ---- plan construction ---- */

struct builder {
	const struct iour_policy *p;
	const struct iour__kernel *kern;
	struct iour_plan *plan;
	uint32_t cap;
	int err;
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
	struct kio_restriction *ents;
	struct iour__step *s;
	size_t hdr = side == IOUR_STEP_TASK ? sizeof(struct kio_task_restriction) : 0;
	uint8_t *arg;
	int n;

	if (b->err)
		return;
	ents = iour__calloc(IOUR__MAX_ENTRIES, sizeof(*ents));
	if (!ents) {
		b->err = -ENOMEM;
		return;
	}
	n = iour__ruleset_entries(eff, lim, ents, clamp);
	if (n < 0) {
		b->err = n == -ENOMEM ? n : -EINVAL;
		iour__free(ents);
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
	iour__free(ents);
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

/* Pass 1: the policy's meaning per request opcode.  `mentioned` marks the
 * opcodes the policy names (classic list or filter). */
static void compute_intent(const struct iour_policy *p, uint8_t *intent, bool *mentioned)
{
	const struct iour_ruleset *rs = p->rs;
	bool listed_only = rs && rs->sqe_restricted;
	uint32_t op;

	for (op = 0; op < IOUR__NOPCODES; op++) {
		const struct iour_prog *pp = p->progs[op];

		mentioned[op] = pp || (listed_only && iour__bm_test(&rs->sqe_ops, op));
		if (listed_only && !iour__bm_test(&rs->sqe_ops, op))
			intent[op] = IOUR__V_DENY;
		else if (pp)
			intent[op] = pp->kind == IOUR_PROG_FILTER       ? IOUR__V_FILTER :
				     pp->kind == IOUR_PROG_ALWAYS_ALLOW ? IOUR__V_ALLOW :
									  IOUR__V_DENY;
		else if (listed_only)
			intent[op] = IOUR__V_ALLOW;
		else
			intent[op] =
				p->attr[IOUR_POLICY_ATTR_DEFAULT] == IOUR_POLICY_DEFAULT_ALLOW ?
					IOUR__V_ALLOW :
					IOUR__V_DENY;
	}
}

static void note(struct iour_report *r, uint32_t kind, uint32_t reason, uint32_t op,
		 const char *fmt, const char *arg)
{
	iour__report_add(r, kind, reason, op, UINT32_MAX, 0, fmt, arg);
}

/*
 * Does a SOCKET program's verdict depend on bits of the payload's type word
 * above the socket type (SOCK_NONBLOCK, SOCK_CLOEXEC)?  Forward dataflow on
 * A (cBPF jumps only forward): the type word loaded at offset 20 is "raw"
 * until an AND with a mask within 0xf; any other use of a raw A (compare,
 * arithmetic, TAX, ST, RET A) counts as reading the flags.  Conservative:
 * true when unsure.
 */
static bool reads_socket_flags(const struct iour_insn *in, size_t cnt)
{
	uint8_t raw[KBPF_MAXINSNS + 1];
	size_t i;

	if (cnt > KBPF_MAXINSNS)
		return true;
	memset(raw, 0, cnt + 1);
	for (i = 0; i < cnt; i++) {
		uint16_t c = in[i].code;
		bool a = raw[i] != 0, na = a;

		switch (KBPF_CLASS(c)) {
		case KBPF_LD:
			na = KBPF_MODE(c) == KBPF_ABS && in[i].k == IOUR_CTX_OFF_SOCKET_TYPE;
			break;
		case KBPF_ALU:
			if (a && !(KBPF_OP(c) == KBPF_AND && KBPF_SRC(c) == KBPF_K &&
				   (in[i].k & ~0xfU) == 0))
				return true;
			na = false;
			break;
		case KBPF_MISC:
			if (a && KBPF_MISCOP(c) == KBPF_TAX)
				return true;
			if (KBPF_MISCOP(c) == KBPF_TXA)
				na = false;
			break;
		case KBPF_ST:
		case KBPF_RET:
			if (a && (KBPF_CLASS(c) == KBPF_ST || KBPF_RVAL(c) == KBPF_A))
				return true;
			break;
		case KBPF_JMP:
			if (KBPF_OP(c) == KBPF_JA) {
				if (i + 1 + in[i].k <= cnt)
					raw[i + 1 + in[i].k] |= a;
				continue;
			}
			if (a)
				return true;
			raw[i + 1 + in[i].jt <= cnt ? i + 1 + in[i].jt : cnt] |= a;
			raw[i + 1 + in[i].jf <= cnt ? i + 1 + in[i].jf : cnt] |= a;
			continue;
		default: /* LDX, STX: A unchanged */
			break;
		}
		if (KBPF_CLASS(c) != KBPF_RET)
			raw[i + 1] |= na;
	}
	return false;
}

/* Pass 3 for one filtered opcode: can the path run its program? */
static uint8_t degrade(struct builder *b, uint32_t op, bool filters, uint32_t *pdu_out,
		       uint32_t *flags_out)
{
	const struct iour_prog *pp = b->p->progs[op];
	const struct iour__kernel *kern = b->kern;
	struct iour_report *r = &b->plan->rep;
	bool open = b->p->attr[IOUR_POLICY_ATTR_NO_FILTER_FALLBACK] == IOUR_POLICY_FALLBACK_OPEN;
	char tmp[24];
	const char *name = iour__op_label(op, tmp, sizeof(tmp));
	uint32_t k = kern->pdu[op];
	uint32_t need = 0, nprogs = 0;

	if (!filters) {
		if (open)
			note(r, IOUR_DECISION_LOOSENED, IOUR_REASON_NO_FILTERS, op,
			     "%s: argument rules dropped, opcode allowed unconditionally "
			     "(no argument filters on this kernel path; fallback open)",
			     name);
		else
			note(r, IOUR_DECISION_TIGHTENED, IOUR_REASON_NO_FILTERS, op,
			     "%s: argument rules cannot be enforced, opcode denied "
			     "(no argument filters on this kernel path; fallback closed)",
			     name);
		return open ? IOUR__V_ALLOW : IOUR__V_DENY;
	}
	for (const struct iour_prog *q = pp; q; q = q->next) {
		need = q->pdu_size > need ? q->pdu_size : need;
		nprogs++;
	}
	if (nprogs > 1)
		iour__report_add(r, IOUR_DECISION_NOTE, IOUR_REASON_NONE, op, UINT32_MAX,
				 (int32_t)nprogs,
				 "%s: the deny-list is split across %u stacked filters (all must "
				 "allow)",
				 name, nprogs);
	if (need > k) {
		iour__report_add(r, open ? IOUR_DECISION_LOOSENED : IOUR_DECISION_TIGHTENED,
				 IOUR_REASON_NO_PAYLOAD, op, UINT32_MAX, (int32_t)k,
				 "%s: the program reads %u payload bytes but the kernel fills %u; "
				 "opcode %s (fallback %s)",
				 name, need, k, open ? "allowed unconditionally" : "denied",
				 open ? "open" : "closed");
		return open ? IOUR__V_ALLOW : IOUR__V_DENY;
	}
	if (op == KIO_OP_SOCKET && kern->sock_flags_hidden) {
		bool reads = false;

		for (const struct iour_prog *q = pp; q; q = q->next)
			reads = reads || reads_socket_flags(q->insns, q->cnt);
		if (reads) {
			iour__report_add(
				r, open ? IOUR_DECISION_LOOSENED : IOUR_DECISION_TIGHTENED,
				IOUR_REASON_NO_PAYLOAD, op, UINT32_MAX, (int32_t)k,
				"%s: the program decides on SOCK_NONBLOCK or SOCK_CLOEXEC, "
				"which this kernel leaves out of the payload's type; opcode %s "
				"(fallback %s)",
				name, open ? "allowed unconditionally" : "denied",
				open ? "open" : "closed");
			return open ? IOUR__V_ALLOW : IOUR__V_DENY;
		}
	}
	*pdu_out = need;
	if (need == k) {
		*flags_out = KIO_BPF_FILTER_SZ_STRICT;
	} else {
		*flags_out = 0;
		iour__report_add(r, IOUR_DECISION_NEGOTIATED, IOUR_REASON_NONE, op, UINT32_MAX,
				 (int32_t)k,
				 "%s: the program reads the first %u of the kernel's %u payload "
				 "bytes; registered without SZ_STRICT",
				 name, need, k);
	}
	return IOUR__V_FILTER;
}

/* Mechanism choices of pass 2. */
struct mech {
	bool task;      /* task restrictions / task filters */
	bool ring;      /* ring part: classic set on a disabled ring (+ filters) */
	bool companion; /* seccomp companion */
	bool filters;   /* argument filters available on the chosen path */
};

static void choose(struct builder *b, struct mech *m, bool restricts)
{
	const struct iour__kernel *kern = b->kern;
	const struct iour_policy *p = b->p;
	struct iour_report *r = &b->plan->rep;

	memset(m, 0, sizeof(*m));
	if (p->attr[IOUR_POLICY_ATTR_TARGET] == IOUR_POLICY_TARGET_RING) {
		if (!kern->io_uring) {
			note(r, IOUR_DECISION_DROPPED, IOUR_REASON_NO_IO_URING,
			     IOUR_DECISION_NO_OPCODE,
			     "%s: io_uring is not available to this caller", kern->name);
			return;
		}
		if (!kern->ring_restrict) {
			note(r, IOUR_DECISION_DROPPED, IOUR_REASON_NO_RING_RESTRICTIONS,
			     IOUR_DECISION_NO_OPCODE,
			     "%s: the kernel cannot restrict rings (Linux 5.10+ needed)",
			     kern->name);
			return;
		}
		m->ring = true;
		m->filters = kern->ring_bpf;
		return;
	}
	if (kern->task_restrict) {
		m->task = true;
		m->filters = kern->task_bpf;
		return;
	}
	if (kern->ring_restrict) {
		m->ring = true;
		note(r, IOUR_DECISION_NOTE, IOUR_REASON_NO_TASK_RESTRICTIONS,
		     IOUR_DECISION_NO_OPCODE,
		     "%s: no task restrictions (Linux 7.0+ needed); only rings created "
		     "through this library are restricted",
		     kern->name);
	} else {
		iour__report_add(r, IOUR_DECISION_DROPPED,
				 kern->io_uring ? IOUR_REASON_NO_RING_RESTRICTIONS :
						  IOUR_REASON_NO_IO_URING,
				 IOUR_DECISION_NO_OPCODE, UINT32_MAX, 0, "%s: %s", kern->name,
				 kern->io_uring ? "the kernel cannot restrict io_uring "
						  "(Linux 5.10+ needed)" :
						  "io_uring is not available to this caller");
	}
	/* Degrade closed (the default): a policy that restricts something,
	 * for a task the kernel cannot restrict, blocks io_uring_setup. */
	if (p->attr[IOUR_POLICY_ATTR_COMPANION] != IOUR_POLICY_COMPANION_NONE && restricts)
		m->companion = true;
}

static bool flags_open(const struct iour_ruleset *rs)
{
	return rs->flags_allowed == KIO_SQE_VALID_FLAGS && rs->flags_required == 0;
}

/* The classic set the kernel should hold for the achieved verdicts. */
static void effective_ruleset(const struct iour_policy *p, const uint8_t *achieved,
			      uint32_t op_last, struct iour_ruleset *eff)
{
	uint32_t op;

	memset(eff, 0, sizeof(*eff));
	eff->flags_decided = true;
	eff->flags_allowed = KIO_SQE_VALID_FLAGS;
	if (p->rs) {
		eff->reg_ops = p->rs->reg_ops;
		eff->reg_restricted = p->rs->reg_restricted;
		eff->flags_allowed = p->rs->flags_allowed | p->rs->flags_required;
		eff->flags_required = p->rs->flags_required;
	}
	for (op = 0; op < op_last && op < IOUR__NOPCODES; op++) {
		if (achieved[op] == IOUR__V_DENY)
			eff->sqe_restricted = true;
		else
			iour__bm_set(&eff->sqe_ops, op);
	}
}

/*
 * Lint: what the set does not seal (doc/security.md, section 2).  A ring
 * that requires IOSQE_FIXED_FILE still gets new files through MSG_RING
 * (IORING_MSG_SEND_FD) on any ring that can name its descriptor, and a set
 * that allows MSG_RING lets its requests do that to other rings.
 */
static void fixed_file_notes(struct iour_report *r, const struct iour_ruleset *eff,
			     const uint8_t *achieved, uint32_t op_last)
{
	if (eff->flags_required & IOUR_SQE_FIXED_FILE)
		note(r, IOUR_DECISION_NOTE, IOUR_REASON_FIXED_FILES, IOUR_DECISION_NO_OPCODE, "%s",
		     "requiring IOSQE_FIXED_FILE does not seal the fixed-file table: MSG_RING "
		     "(IORING_MSG_SEND_FD) on any ring that can name the ring's descriptor "
		     "installs new files; deny MSG_RING on those rings, or never hand the "
		     "descriptor out");
	if (eff->sqe_restricted && IOUR_OP_MSG_RING < op_last &&
	    achieved[IOUR_OP_MSG_RING] != IOUR__V_DENY)
		note(r, IOUR_DECISION_NOTE, IOUR_REASON_FIXED_FILES, IOUR_OP_MSG_RING, "%s",
		     "MSG_RING is allowed: requests can install their ring's registered files "
		     "into the fixed-file table of any ring whose descriptor they can name, so "
		     "no such ring's file set is sealed");
}

static bool ruleset_gates(const struct iour_ruleset *eff)
{
	return eff->sqe_restricted || eff->reg_restricted || !flags_open(eff);
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

/* Does the policy restrict anything at all? */
static bool policy_restricts(const struct iour_policy *p, const uint8_t *intent, uint32_t op_last)
{
	uint32_t op;

	if (p->rs && (p->rs->reg_restricted || !flags_open(p->rs)))
		return true;
	for (op = 0; op < op_last; op++)
		if (intent[op] != IOUR__V_ALLOW)
			return true;
	return false;
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
		note(r, IOUR_DECISION_NOTE, IOUR_REASON_ALREADY_RESTRICTED, IOUR_DECISION_NO_OPCODE,
		     "%s",
		     side == IOUR_STEP_TASK ?
			     "the task already has io_uring restrictions: denied opcodes are "
			     "closed by filters that stack on them" :
			     "new rings inherit the task's classic set: denied opcodes are "
			     "closed by ring filters that stack on it");
		if (e->eff->reg_restricted || !flags_open(e->eff)) {
			e->loosened = true;
			note(r, IOUR_DECISION_DROPPED, IOUR_REASON_NOT_EXPRESSIBLE,
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

int iour__plan_build(const struct iour_policy *p, const struct iour__kernel *kern,
		     struct iour_plan **out)
{
	struct builder b = { .p = p, .kern = kern };
	struct iour_plan *pl;
	struct iour_report *r;
	struct iour_ruleset eff;
	struct iour__clamp clamp;
	bool mentioned[IOUR__NOPCODES];
	uint32_t pdu[IOUR__NOPCODES] = { 0 }, fflags[IOUR__NOPCODES] = { 0 };
	struct mech m;
	struct emit em = { 0 };
	bool loosened = false, tightened = false, restricts, any_filter = false, deny_rest;
	bool enforcing_step = false, nnp_needed = false;
	uint64_t blind = 0;
	int last_filter = -1;
	uint32_t op, op_last;

	if (!p || !kern || !out)
		return -EINVAL;
	op_last = kern->op_last < IOUR__NOPCODES ? kern->op_last : IOUR__NOPCODES;
	pl = iour__calloc(1, sizeof(*pl));
	if (!pl)
		return -ENOMEM;
	b.plan = pl;
	r = &pl->rep;
	iour__report_init(r);
	r->flags |= IOUR_REPORT_PLANNED;
	pl->kernel = *kern;
	memcpy(pl->attr, p->attr, sizeof(pl->attr));
	pl->target = p->attr[IOUR_POLICY_ATTR_TARGET];
	memset(&clamp, 0, sizeof(clamp));

	/* 1. intent */
	compute_intent(p, pl->intent, mentioned);
	restricts = policy_restricts(p, pl->intent, op_last ? op_last : IOUR__NOPCODES);

	for (op = 0; op < IOUR__NOPCODES; op++) {
		char tmp[24];

		if (p->progs[op] && p->rs && p->rs->sqe_restricted &&
		    !iour__bm_test(&p->rs->sqe_ops, op))
			note(r, IOUR_DECISION_NOTE, IOUR_REASON_SHADOWED, op,
			     "%s: the classic allow-list does not list this opcode, so it is "
			     "denied and its argument rules are never used",
			     iour__op_label(op, tmp, sizeof(tmp)));
	}

	/* 2. mechanism */
	choose(&b, &m, restricts);

	/* 3. achieved verdicts on the chosen path */
	for (op = 0; op < IOUR__NOPCODES; op++) {
		uint8_t v = pl->intent[op];

		if (op >= op_last) {
			pl->achieved[op] = IOUR__V_DENY; /* the kernel cannot run it */
			continue;
		}
		if (v == IOUR__V_FILTER && (m.task || m.ring))
			v = degrade(&b, op, m.filters, &pdu[op], &fflags[op]);
		pl->achieved[op] = v;
		if (v == IOUR__V_FILTER) {
			any_filter = true;
			last_filter = (int)op;
		}
		if (!(m.task || m.ring))
			continue;
		if (pl->intent[op] == IOUR__V_FILTER && v == IOUR__V_ALLOW)
			loosened = true;
		if (pl->intent[op] != IOUR__V_DENY && v == IOUR__V_DENY)
			tightened = true;
	}
	effective_ruleset(p, pl->achieved, op_last, &eff);
	if (m.task || m.ring)
		fixed_file_notes(r, &eff, pl->achieved, op_last);
	/* DENY_REST on the last filter when every other opcode is denied: a
	 * second, independent closing of every opcode without a filter. */
	deny_rest = any_filter;
	for (op = 0; op < op_last && deny_rest; op++)
		if (pl->achieved[op] == IOUR__V_ALLOW)
			deny_rest = false;

	/* 4. steps */
	em.eff = &eff;
	em.pdu = pdu;
	em.fflags = fflags;
	em.last_filter = last_filter;
	em.deny_rest = deny_rest;
	em.clamp = &clamp;
	if (m.task) {
		bool classic = ruleset_gates(&eff);

		nnp_needed = (classic || any_filter) && kern->priv != IOUR__PRIV_YES && !kern->nnp;
		if (nnp_needed) {
			if (p->attr[IOUR_POLICY_ATTR_NNP] == IOUR_POLICY_NNP_SET) {
				add_nnp(&b);
				r->flags |= IOUR_REPORT_NNP_SET;
				note(r, IOUR_DECISION_NOTE, IOUR_REASON_NNP,
				     IOUR_DECISION_NO_OPCODE, "%s",
				     "no_new_privs is set first (the task path needs it or "
				     "CAP_SYS_ADMIN); it is inherited and survives execve");
			} else if (kern->priv == IOUR__PRIV_NO) {
				iour_plan__free(pl);
				return -EACCES;
			}
		}
		em.via_filters = classic && kern->task_restricted;
		if (em.via_filters && !kern->task_bpf) {
			/* A classic task set can be registered only once. */
			iour_plan__free(pl);
			return -EPERM;
		}
		if (any_filter && !em.via_filters && kern->task_gates_filters)
			allow_task_filters(r, &eff, kern);
		emit_rules(&b, IOUR_STEP_TASK, &em);
		/* Last, so that the plan's own fd -1 registrations go through.
		 * BPF_FILTER stays allowed where the plan registers filters:
		 * 7.3.4's set lists it then (allow_task_filters()), and a
		 * filter can only add denials. */
		if (!kern->task_gates_filters) {
			blind = iour__effects_blind_unlisted(&eff, kern->reg_last);
			if (any_filter && !em.via_filters)
				blind &= ~(1ULL << KIO_REGISTER_BPF_FILTER);
		}
		if (blind) {
			add_guard(&b, 0, blind);
			blind_note(r, blind);
		}
		enforcing_step = em.enforcing;
		loosened |= em.loosened;
		pl->n_task = pl->nsteps;
		r->mechanism = enforcing_step ? IOUR_MECH_TASK : IOUR_MECH_NONE;
		note(r, IOUR_DECISION_NOTE, IOUR_REASON_EXISTING_RINGS, IOUR_DECISION_NO_OPCODE,
		     "%s",
		     "rings that exist already, and rings of other existing threads, are "
		     "not affected");
	} else {
		if (m.companion) {
			uint32_t e =
				p->attr[IOUR_POLICY_ATTR_COMPANION] == IOUR_POLICY_COMPANION_EPERM ?
					EPERM :
					ENOSYS;

			nnp_needed = kern->priv != IOUR__PRIV_YES && !kern->nnp;
			if (nnp_needed) {
				if (p->attr[IOUR_POLICY_ATTR_NNP] == IOUR_POLICY_NNP_SET) {
					add_nnp(&b);
					r->flags |= IOUR_REPORT_NNP_SET;
				} else if (kern->priv == IOUR__PRIV_NO) {
					iour_plan__free(pl);
					return -EACCES;
				}
			}
			blind = iour__effects_blind_unlisted(&eff, kern->reg_last);
			if (blind) {
				add_guard(&b, e, blind);
				blind_note(r, blind);
			} else {
				add_companion(&b, e);
			}
			r->mechanism |= IOUR_MECH_COMPANION;
			enforcing_step = true;
			tightened = true;
			iour__report_add(r, IOUR_DECISION_TIGHTENED, IOUR_REASON_COMPANION,
					 IOUR_DECISION_NO_OPCODE, UINT32_MAX, (int32_t)e,
					 "io_uring_setup fails with %s for the task and its "
					 "descendants (seccomp companion); rings created before "
					 "keep working",
					 e == EPERM ? "EPERM" : "ENOSYS");
		}
		pl->n_task = pl->nsteps;
		if (m.ring) {
			em.via_filters = kern->ring_busy && ruleset_gates(&eff);
			if (em.via_filters && !kern->ring_bpf) {
				/* The inherited set makes RESTRICTIONS fail (EBUSY). */
				em.via_filters = false;
				iour_plan__free(pl);
				return -EBUSY;
			}
			emit_rules(&b, IOUR_STEP_RING, &em);
			add_step(&b, IOUR_STEP_RING, IOUR_STEP_ENABLE_RINGS,
				 KIO_REGISTER_ENABLE_RINGS, 0);
			pl->has_ring_part = true;
			loosened |= em.loosened;
			if (em.enforcing) {
				enforcing_step = true;
				if (!em.via_filters && ruleset_gates(&eff))
					r->mechanism |= IOUR_MECH_RING_DISABLED;
				if (any_filter || em.via_filters)
					r->mechanism |= IOUR_MECH_RING;
			}
			if (pl->target == IOUR_POLICY_TARGET_TASK) {
				r->flags |= IOUR_REPORT_RING_ONLY;
				if (!m.companion)
					loosened = true;
			}
		}
	}
	if (m.task || m.ring || m.companion) {
		struct iour__effect_in ein = {
			.achieved = pl->achieved,
			.eff = &eff,
			.op_last = op_last,
			.reg_last = kern->reg_last,
			.rings = m.task || m.ring,
			.no_new_rings = m.companion,
			.blind_gated = m.task && kern->task_gates_filters,
			.blind_denied = blind,
			.blind_reached = pl->target == IOUR_POLICY_TARGET_TASK,
		};

		if (iour__effects_report(r, &ein) && (m.task || m.ring) && !m.companion)
			loosened = true;
	}
	if (b.err) {
		iour_plan__free(pl);
		return b.err;
	}
	if (m.task || m.ring)
		report_clamp(&b, mentioned, &clamp);

	/* Status. */
	if (!restricts && (m.task || m.ring)) {
		r->status = IOUR_STATUS_FULLY;
		loosened = tightened = false;
		r->flags &= ~IOUR_REPORT_RING_ONLY;
	} else if (!enforcing_step) {
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
	if (pl->target == IOUR_POLICY_TARGET_TASK && !m.task && restricts)
		task_without_task_path(pl, m.companion);

	/* Compatibility level. */
	if (r->status != IOUR_STATUS_FULLY &&
	    p->attr[IOUR_POLICY_ATTR_COMPAT] != IOUR_POLICY_COMPAT_BEST_EFFORT) {
		bool hard = p->attr[IOUR_POLICY_ATTR_COMPAT] == IOUR_POLICY_COMPAT_HARD;

		bool ring_part = pl->has_ring_part && !hard;

		plan_free_steps(pl);
		pl->has_ring_part = false;
		pl->refused = hard;
		if (ring_part) {
			/* A ring created disabled must still be enabled. */
			b.cap = 0;
			add_step(&b, IOUR_STEP_RING, IOUR_STEP_ENABLE_RINGS,
				 KIO_REGISTER_ENABLE_RINGS, 0);
			pl->has_ring_part = true;
		}
		r->status = IOUR_STATUS_NOT_ENFORCED;
		r->mechanism = IOUR_MECH_NONE;
		r->flags = IOUR_REPORT_PLANNED | (restricts ? IOUR_REPORT_LOOSENED : 0);
		pl->ring_rep = false;
		note(r, IOUR_DECISION_DROPPED,
		     hard ? IOUR_REASON_COMPAT_HARD : IOUR_REASON_COMPAT_SOFT,
		     IOUR_DECISION_NO_OPCODE, "%s",
		     hard ? "the kernel cannot enforce the policy exactly and the policy "
			    "requires it: nothing will be applied (hard requirement)" :
			    "the kernel cannot enforce the policy exactly: nothing is applied "
			    "(soft requirement, all or nothing)");
	}
	if (b.err) {
		iour_plan__free(pl);
		return b.err;
	}
	r->steps_total = (uint32_t)pl->nsteps;
	if (r->oom) {
		iour_plan__free(pl);
		return -ENOMEM;
	}
	*out = pl;
	return 0;
}

/* ---- public planning entry ---- */

/* Documented in include/iouring_restrict/plan.h */
int iour_policy__plan(const struct iour_policy *p, const struct iour_plan_opts *opts,
		      struct iour_plan **out)
{
	const struct iour_features *feat;
	struct iour__kernel t;
	uint32_t flags;
	int rc;

	if (!p || !out)
		return -EINVAL;
	rc = IOUR_OPTS_VALID(opts, iour_plan_opts);
	if (rc)
		return rc;
	flags = IOUR_OPTS_GET(opts, flags, 0);
	feat = IOUR_OPTS_GET(opts, features, NULL);
	if (flags & ~IOUR_PLAN_FORCE_LEVEL)
		return -EINVAL;
	if ((flags & IOUR_PLAN_FORCE_LEVEL) && feat)
		return -EINVAL;
	if (flags & IOUR_PLAN_FORCE_LEVEL)
		rc = iour__kernel_for_level(IOUR_OPTS_GET(opts, level, 0), &t);
	else if (IOUR_OPTS_GET(opts, level, 0) != 0)
		rc = -EINVAL;
	else if (feat) {
		rc = iour__kernel_from_features(feat, &t);
		t.origin = IOUR__KERNEL_DESCRIBED; /* said so by the dry run */
	} else
		rc = iour__kernel_probe(&t);
	if (rc)
		return iour__err_public(rc, IOUR__ERRSET_POLICY_PLAN);
	return iour__err_public(iour__plan_build(p, &t, out), IOUR__ERRSET_POLICY_PLAN);
}
