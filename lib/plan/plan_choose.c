/* SPDX-License-Identifier: MIT */
/*
 * Passes 1 to 3 of the planner (lib/plan/plan.c runs them, then pass 4, the
 * steps): what the policy means per request opcode, which kernel paths
 * carry it for its target, and what each opcode becomes on those paths.
 * Every difference between the policy and the plan is recorded in the
 * plan's report here (doc/design.md, "Policies, plans, the executor and
 * reports": degradation is always reported, never silent).
 */
#include <stdio.h>

#include "base/internal.h"
#include "planner.h"
#include "iouring_restrict/names.h"

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

/* Does the policy restrict anything at all? */
static bool policy_restricts(const struct iour_policy *p, const uint8_t *intent, uint32_t op_last)
{
	uint32_t op;

	if (p->rs && (p->rs->reg_restricted || !iour__flags_open(p->rs)))
		return true;
	for (op = 0; op < op_last; op++)
		if (intent[op] != IOUR__V_ALLOW)
			return true;
	return false;
}

/* Pass 2: the kernel paths for the policy's target (doc/design.md, "Degradation
 * is always reported, never silent": the ring part and the companion). */
static void choose(const struct iour_policy *p, const struct iour__kernel *kern,
		   struct iour_report *r, struct iour__mech *m, bool restricts, bool brokered)
{
	memset(m, 0, sizeof(*m));
	/* A brokered task policy is enforced on each ring, as a ring target
	 * is (doc/security.md 2.1, "The ring broker's view"). */
	if (p->attr[IOUR_POLICY_ATTR_TARGET] == IOUR_POLICY_TARGET_RING || brokered) {
		if (!kern->io_uring) {
			iour__plan_note(r, IOUR_DECISION_DROPPED, IOUR_REASON_NO_IO_URING,
					IOUR_DECISION_NO_OPCODE,
					"%s: io_uring is not available to this caller", kern->name);
			return;
		}
		if (!kern->ring_restrict) {
			iour__plan_note(r, IOUR_DECISION_DROPPED, IOUR_REASON_NO_RING_RESTRICTIONS,
					IOUR_DECISION_NO_OPCODE,
					"%s: the kernel cannot restrict rings (Linux 5.10+ needed)",
					kern->name);
			return;
		}
		m->ring = true;
		m->filters = kern->ring_bpf;
		if (brokered)
			iour__plan_note(r, IOUR_DECISION_NOTE, IOUR_REASON_NONE,
					IOUR_DECISION_NO_OPCODE,
					"%s: ring broker: every ring the task and its descendants "
					"create is created by the broker and restricted by this "
					"plan; the task itself is not restricted",
					kern->name);
		return;
	}
	if (kern->task_restrict) {
		m->task = true;
		m->filters = kern->task_bpf;
		return;
	}
	if (kern->ring_restrict) {
		m->ring = true;
		iour__plan_note(r, IOUR_DECISION_NOTE, IOUR_REASON_NO_TASK_RESTRICTIONS,
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
static uint8_t degrade(const struct iour_policy *p, const struct iour__kernel *kern,
		       struct iour_report *r, uint32_t op, bool filters, uint32_t *pdu_out,
		       uint32_t *flags_out)
{
	const struct iour_prog *pp = p->progs[op];
	bool open = p->attr[IOUR_POLICY_ATTR_NO_FILTER_FALLBACK] == IOUR_POLICY_FALLBACK_OPEN;
	char tmp[24];
	const char *name = iour__op_label(op, tmp, sizeof(tmp));
	uint32_t k = kern->pdu[op];
	uint32_t need = 0, nprogs = 0;

	if (!filters) {
		if (open)
			iour__plan_note(
				r, IOUR_DECISION_LOOSENED, IOUR_REASON_NO_FILTERS, op,
				"%s: argument rules dropped, opcode allowed unconditionally "
				"(no argument filters on this kernel path; fallback open)",
				name);
		else
			iour__plan_note(
				r, IOUR_DECISION_TIGHTENED, IOUR_REASON_NO_FILTERS, op,
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
	if (op == IOUR_OP_SOCKET && kern->sock_flags_hidden) {
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
		iour__plan_note(
			r, IOUR_DECISION_NOTE, IOUR_REASON_FIXED_FILES, IOUR_DECISION_NO_OPCODE,
			"%s",
			"requiring IOSQE_FIXED_FILE does not seal the fixed-file table: MSG_RING "
			"(IORING_MSG_SEND_FD) on any ring that can name the ring's descriptor "
			"installs new files; deny MSG_RING on those rings, or never hand the "
			"descriptor out");
	if (eff->sqe_restricted && IOUR_OP_MSG_RING < op_last &&
	    achieved[IOUR_OP_MSG_RING] != IOUR__V_DENY)
		iour__plan_note(
			r, IOUR_DECISION_NOTE, IOUR_REASON_FIXED_FILES, IOUR_OP_MSG_RING, "%s",
			"MSG_RING is allowed: requests can install their ring's registered files "
			"into the fixed-file table of any ring whose descriptor they can name, so "
			"no such ring's file set is sealed");
}

/* Pass 1 (doc/design.md, "Policies, plans, the executor and reports": the
 * meaning of a policy): the intent per opcode, and the filters that the
 * classic allow-list shadows. */
static void plan_intent(const struct iour_policy *p, struct iour_plan *pl, struct iour__choice *c)
{
	uint32_t op;

	compute_intent(p, pl->intent, c->mentioned);
	c->restricts = policy_restricts(p, pl->intent, c->op_last ? c->op_last : IOUR__NOPCODES);
	for (op = 0; op < IOUR__NOPCODES; op++) {
		char tmp[24];

		if (p->progs[op] && p->rs && p->rs->sqe_restricted &&
		    !iour__bm_test(&p->rs->sqe_ops, op))
			iour__plan_note(&pl->rep, IOUR_DECISION_NOTE, IOUR_REASON_SHADOWED, op,
					"%s: the classic allow-list does not list this opcode, so "
					"it is denied and its argument rules are never used",
					iour__op_label(op, tmp, sizeof(tmp)));
	}
}

/* Pass 3: the verdict each opcode gets on the chosen paths (unknown opcodes
 * denied, filtered ones degraded where the path cannot run them), the
 * classic set those verdicts make, and DENY_REST (doc/design.md, "Policies,
 * plans, the executor and reports": payload sizes, DENY_REST). */
static void achieve(const struct iour_policy *p, const struct iour__kernel *kern,
		    struct iour_plan *pl, struct iour__choice *c)
{
	const struct iour__mech *m = &c->m;
	uint32_t op;

	for (op = 0; op < IOUR__NOPCODES; op++) {
		uint8_t v = pl->intent[op];

		if (op >= c->op_last) {
			pl->achieved[op] = IOUR__V_DENY; /* the kernel cannot run it */
			continue;
		}
		if (v == IOUR__V_FILTER && (m->task || m->ring))
			v = degrade(p, kern, &pl->rep, op, m->filters, &c->pdu[op], &c->fflags[op]);
		pl->achieved[op] = v;
		if (v == IOUR__V_FILTER) {
			c->any_filter = true;
			c->last_filter = (int)op;
		}
		if (!(m->task || m->ring))
			continue;
		if (pl->intent[op] == IOUR__V_FILTER && v == IOUR__V_ALLOW)
			c->loosened = true;
		if (pl->intent[op] != IOUR__V_DENY && v == IOUR__V_DENY)
			c->tightened = true;
	}
	effective_ruleset(p, pl->achieved, c->op_last, &c->eff);
	if (m->task || m->ring)
		fixed_file_notes(&pl->rep, &c->eff, pl->achieved, c->op_last);
	/* DENY_REST on the last filter when every other opcode is denied: a
	 * second, independent closing of every opcode without a filter. */
	c->deny_rest = c->any_filter;
	for (op = 0; op < c->op_last && c->deny_rest; op++)
		if (pl->achieved[op] == IOUR__V_ALLOW)
			c->deny_rest = false;
}

/* Passes 1 to 3 in order, each reading what the one before decided. */
void iour__plan_choose(const struct iour_policy *p, const struct iour__kernel *kern,
		       struct iour_plan *pl, struct iour__choice *c)
{
	memset(c, 0, sizeof(*c));
	c->op_last = kern->op_last < IOUR__NOPCODES ? kern->op_last : IOUR__NOPCODES;
	c->last_filter = -1;
	plan_intent(p, pl, c);
	choose(p, kern, &pl->rep, &c->m, c->restricts, pl->brokered);
	achieve(p, kern, pl, c);
}
