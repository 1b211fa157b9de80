/* SPDX-License-Identifier: MIT */
/*
 * The argument-filter compiler's driver: the entry points that run the
 * three stages over the decision graph (filter_ir.c).  The pipeline is
 * described in filter_ir.h.
 */
#include <stdio.h>
#include <stdlib.h>

#include "filter_ir.h"
#include "plan_internal.h"

/* ---- entry points --------------------------------------------------------- */
static int prog_from_raw(const struct iour__opfilter *of, uint32_t opcode, struct iour_prog **out)
{
	struct iour_prog *p = iour__malloc(sizeof(*p) + of->raw_cnt * sizeof(struct iour_insn));
	bool payload = false;

	if (!p)
		return -ENOMEM;
	memset(p, 0, sizeof(*p));
	p->opcode = opcode;
	p->cnt = of->raw_cnt;
	memcpy(p->insns, of->raw, of->raw_cnt * sizeof(struct iour_insn));
	for (size_t i = 0; i < of->raw_cnt; i++)
		if (of->raw[i].code == C_LD_ABS && of->raw[i].k >= IOUR_CTX_OFF_PDU)
			payload = true;
	p->pdu_size = payload ? iour__opcode_pdu_size(opcode) : 0;
	p->kind = IOUR_PROG_FILTER;
	if (of->raw_cnt == 1 && of->raw[0].code == C_RET_K)
		p->kind = of->raw[0].k ? IOUR_PROG_ALWAYS_ALLOW : IOUR_PROG_ALWAYS_DENY;
	*out = p;
	return 0;
}

/* Documented in filter_internal.h */
int iour__filter_compile_cfg(const struct iour_filter *f, uint32_t opcode,
			     const struct iour__compile_cfg *cfg, struct iour__compile_stats *stats,
			     struct iour_prog **out)
{
	const struct iour__opfilter *of;
	struct iour__compile_stats local = { 0 };
	struct iour__compile_stats *st = stats ? stats : &local;
	uint32_t max_insns = cfg->max_insns;
	struct cc c;
	uint32_t root, sroot;
	int rc;

	memset(st, 0, sizeof(*st));
	if (opcode >= IOUR__NOPCODES)
		return -EINVAL;
	of = f->ops[opcode];
	if (!of)
		return -ENOENT;
	if (of->raw) /* max_insns holds for a raw program too */
		return of->raw_cnt > max_insns ? -IOUR_ERRNO__PROG_TOO_LARGE :
						 prog_from_raw(of, opcode, out);
	rc = iour__fc_init(&c, cfg->big_endian);
	if (rc) {
		iour__fc_fini(&c);
		return rc;
	}
	root = iour__fc_lower(&c, f, opcode, of);
	if (c.err) {
		rc = c.err;
		goto out;
	}
	st->ir_nodes = c.nnodes - 2;
	sroot = iour__fc_specialise(&c, root, cfg->spec_budget);
	if (c.err) {
		rc = c.err;
		goto out;
	}
	st->spec_aborted = c.aborted;
	st->spec_nodes = c.nnodes - 2;
	rc = iour__fc_emit(&c, sroot, opcode, max_insns, out);
	if (rc == -IOUR_ERRNO__PROG_TOO_LARGE && sroot != root)
		rc = iour__fc_emit(&c, root, opcode, max_insns, out);
	if (!rc)
		st->trampolines = c.ntramp;
out:
	iour__fc_fini(&c);
	return rc;
}

/* Documented in include/iouring_restrict/filter.h */
int iour_filter__compile(const struct iour_filter *f, uint32_t opcode,
			 const struct iour_compile_opts *opts, struct iour_prog **out)
{
	static const int allowed[] = {
		EINVAL, E2BIG, ENOENT, IOUR_ERRNO__PROG_TOO_LARGE, ENOMEM, 0
	};
	struct iour__compile_cfg cfg = { .big_endian = __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__ };
	uint32_t max_insns;
	int rc;

	if (!f || !out || opcode >= IOUR__NOPCODES)
		return -EINVAL;
	rc = IOUR_OPTS_VALID(opts, iour_compile_opts);
	if (rc)
		return iour__err_public(rc, allowed);
	if (IOUR_OPTS_GET(opts, flags, 0U))
		return -EINVAL;
	max_insns = IOUR_OPTS_GET(opts, max_insns, 0U);
	if (max_insns > IOUR_MAX_INSNS)
		return -EINVAL;
	if (!max_insns)
		max_insns = IOUR_MAX_INSNS;
	cfg.max_insns = max_insns;
	rc = iour__filter_compile_cfg(f, opcode, &cfg, NULL, out);
	return iour__err_public(rc, allowed);
}

/* ---- stacked programs (filter_internal.h, iour__filter_compile_stack()) --- */
/* One entry of the deny run: a whole rule, or a slice [a, b) of the set of
 * a one-comparison IN_SET rule. */
struct unit {
	uint32_t rule;   /* index in the opcode's rules */
	uint32_t sorted; /* 0: one comparison, ordered by (field, key); 1: kept in place */
	uint32_t field;
	uint32_t pad;
	uint64_t key;
	size_t a, b; /* set slice; a == b: the whole rule */
};

static int unit_cmp(const void *x, const void *y)
{
	const struct unit *u = x, *v = y;

	if (u->sorted != v->sorted)
		return u->sorted < v->sorted ? -1 : 1;
	if (!u->sorted && u->field != v->field)
		return u->field < v->field ? -1 : 1;
	if (!u->sorted && u->key != v->key)
		return u->key < v->key ? -1 : 1;
	if (u->rule != v->rule)
		return u->rule < v->rule ? -1 : 1;
	return u->a < v->a ? -1 : u->a > v->a;
}

struct stacker {
	const struct iour_filter *f;
	const struct iour__opfilter *of;
	uint32_t opcode;
	struct iour__compile_cfg cfg;
	size_t p_end, s_begin; /* P = rules[0, p_end), S = rules[s_begin, nrules) */
	struct unit *units;
	size_t nunits;
	struct iour__rule *rules; /* scratch: P, a part of D, S */
	struct iour__cmp *cmps;   /* scratch: set slices */
	struct iour_filter *tf;   /* scratch: f with the opcode's rules replaced */
	struct iour__opfilter tof;
	struct iour_prog *head, **tail;
	uint32_t nprogs;
};

/* Compile P, units[a, b), S as one program. */
static int stack_compile(struct stacker *st, size_t a, size_t b, uint32_t max_insns,
			 struct iour_prog **out)
{
	const struct iour__opfilter *of = st->of;
	struct iour__compile_cfg cfg = st->cfg;
	size_t n = 0, nc = 0, i;
	struct iour__rule *prev = NULL;
	size_t prev_rule = SIZE_MAX, prev_b = 0;

	for (i = 0; i < st->p_end; i++)
		st->rules[n++] = of->rules[i];
	for (i = a; i < b; i++) {
		const struct unit *u = &st->units[i];
		const struct iour__rule *r = &of->rules[u->rule];

		if (u->a == u->b) {
			st->rules[n++] = *r;
			prev = NULL;
			continue;
		}
		if (prev && prev_rule == u->rule && prev_b == u->a) {
			prev->cmps[0].set_len += u->b - u->a; /* adjacent slices join */
			prev_b = u->b;
			continue;
		}
		st->cmps[nc] = r->cmps[0];
		st->cmps[nc].set = r->cmps[0].set + u->a;
		st->cmps[nc].set_len = u->b - u->a;
		prev = &st->rules[n++];
		prev->verdict = IOUR_DENY;
		prev->ncmps = 1;
		prev->cmps = &st->cmps[nc++];
		prev_rule = u->rule;
		prev_b = u->b;
	}
	for (i = st->s_begin; i < of->nrules; i++)
		st->rules[n++] = of->rules[i];
	st->tof.nrules = (uint32_t)n;
	cfg.max_insns = max_insns;
	return iour__filter_compile_cfg(st->tf, st->opcode, &cfg, NULL, out);
}

static void stack_append(struct stacker *st, struct iour_prog *p)
{
	*st->tail = p;
	st->tail = &p->next;
	st->nprogs++;
}

/* Place units[a, b) into programs: one if it fits, else halves. */
static int stack_place(struct stacker *st, size_t a, size_t b)
{
	struct iour_prog *p = NULL;
	int rc = stack_compile(st, a, b, st->cfg.max_insns, &p);

	if (!rc) {
		if (st->nprogs >= IOUR__STACK_MAX) {
			iour_prog__free(p);
			return -E2BIG;
		}
		stack_append(st, p);
		return 0;
	}
	if (rc != -IOUR_ERRNO__PROG_TOO_LARGE || b - a < 2)
		return rc;
	rc = stack_place(st, a, a + (b - a) / 2);
	return rc ? rc : stack_place(st, a + (b - a) / 2, b);
}

/* The heaviest run of consecutive deny rules: [*lo, *hi); false if none. */
static bool deny_run(const struct iour__opfilter *of, size_t *lo, size_t *hi, size_t *weight)
{
	size_t best = 0, i = 0;

	while (i < of->nrules) {
		size_t j = i, w = 0;

		while (j < of->nrules && of->rules[j].verdict == IOUR_DENY) {
			const struct iour__rule *r = &of->rules[j];

			w += r->ncmps == 1 && r->cmps[0].op == IOUR_CMP_IN_SET ?
				     r->cmps[0].set_len :
				     1;
			j++;
		}
		if (j > i && w > best) {
			best = w;
			*lo = i;
			*hi = j;
		}
		i = j > i ? j : i + 1;
	}
	*weight = best;
	return best > 0;
}

static void stack_units(struct stacker *st, size_t lo, size_t hi)
{
	const struct iour__opfilter *of = st->of;
	size_t n = 0;

	for (size_t i = lo; i < hi; i++) {
		const struct iour__rule *r = &of->rules[i];
		struct unit u = { .rule = (uint32_t)i, .sorted = 1 };

		if (r->ncmps == 1 && r->cmps[0].field != IOUR_FIELD_CONNECT_ADDR6) {
			u.sorted = 0;
			u.field = r->cmps[0].field;
			u.key = r->cmps[0].value;
		}
		if (r->ncmps == 1 && r->cmps[0].op == IOUR_CMP_IN_SET) {
			for (size_t k = 0; k < r->cmps[0].set_len; k++) {
				u.key = r->cmps[0].set[k];
				u.a = k;
				u.b = k + 1;
				st->units[n++] = u;
			}
			continue;
		}
		st->units[n++] = u;
	}
	st->nunits = n;
	qsort(st->units, n, sizeof(*st->units), unit_cmp);
}

#define STACK_MEASURE (1U << 24)

/* Documented in filter_internal.h */
int iour__filter_compile_stack(const struct iour_filter *f, uint32_t opcode,
			       const struct iour__compile_cfg *cfg, struct iour__stack_stats *stats,
			       struct iour_prog **out, char *why, size_t whylen)
{
	struct iour__stack_stats local = { 0 };
	struct iour__stack_stats *ss = stats ? stats : &local;
	struct stacker st = { .f = f, .opcode = opcode, .cfg = *cfg };
	struct iour_prog *one = NULL;
	char tmp[24];
	const char *name;
	size_t lo = 0, hi = 0, weight = 0, k, i;
	int rc;

	memset(ss, 0, sizeof(*ss));
	if (why && whylen)
		why[0] = '\0';
	rc = iour__filter_compile_cfg(f, opcode, cfg, NULL, &one);
	if (rc != -IOUR_ERRNO__PROG_TOO_LARGE) {
		if (!rc) {
			ss->progs = 1;
			ss->insns = one->cnt;
			*out = one;
		}
		return rc;
	}
	name = iour__op_label(opcode, tmp, sizeof(tmp));
	st.of = f->ops[opcode];
	if (st.of->raw) {
		if (why)
			snprintf(why, whylen,
				 "%s: a raw program of %zu instructions is above %u and cannot be "
				 "split",
				 name, st.of->raw_cnt, cfg->max_insns);
		return rc;
	}
	if (!deny_run(st.of, &lo, &hi, &weight)) {
		if (why)
			snprintf(why, whylen,
				 "%s: %u rules need more than %u instructions and none denies: "
				 "an allow-list cannot be split across stacked filters (every "
				 "stacked filter must allow, so each part would deny what the "
				 "others allow)",
				 name, st.of->nrules, cfg->max_insns);
		return rc;
	}
	st.p_end = lo;
	st.s_begin = hi;
	st.units = iour__malloc(weight * sizeof(*st.units));
	st.cmps = iour__malloc(weight * sizeof(*st.cmps));
	st.rules = iour__malloc((st.of->nrules + weight) * sizeof(*st.rules));
	st.tf = iour__malloc(sizeof(*st.tf));
	if (!st.units || !st.cmps || !st.rules || !st.tf) {
		rc = -ENOMEM;
		goto out;
	}
	*st.tf = *f;
	st.tof = *st.of;
	st.tof.rules = st.rules;
	st.tf->ops[opcode] = &st.tof;
	st.tail = &st.head;
	stack_units(&st, lo, hi);
	/* One program again once the entries are ordered?  Else its size
	 * says how many parts to start from. */
	rc = stack_compile(&st, 0, st.nunits, STACK_MEASURE, &one);
	if (rc && rc != -IOUR_ERRNO__PROG_TOO_LARGE)
		goto out;
	if (!rc && one->cnt <= cfg->max_insns) {
		stack_append(&st, one);
		goto done;
	}
	k = rc ? st.nunits : (one->cnt + cfg->max_insns * 3 / 4 - 1) / (cfg->max_insns * 3 / 4);
	iour_prog__free(one);
	if (k > st.nunits)
		k = st.nunits;
	if (k < 2)
		k = 2;
	rc = 0;
	for (i = 0; i < k && !rc; i++)
		rc = stack_place(&st, st.nunits * i / k, st.nunits * (i + 1) / k);
	if (rc == -IOUR_ERRNO__PROG_TOO_LARGE) {
		if (why)
			snprintf(why, whylen,
				 "%s: the rules around the deny entries (%zu before, %zu after) "
				 "need more than %u instructions with a single entry, so they "
				 "cannot be split",
				 name, st.p_end, (size_t)st.of->nrules - st.s_begin,
				 cfg->max_insns);
		goto out;
	}
	if (rc == -E2BIG) {
		rc = -IOUR_ERRNO__PROG_TOO_LARGE;
		if (why)
			snprintf(why, whylen,
				 "%s: the deny-list needs more than %u stacked filters", name,
				 IOUR__STACK_MAX);
		goto out;
	}
	if (rc)
		goto out;
done:
	ss->split = st.nprogs > 1;
	ss->deny_units = (uint32_t)st.nunits;
	ss->progs = st.nprogs;
	for (struct iour_prog *p = st.head; p; p = p->next)
		ss->insns += p->cnt;
	*out = st.head;
	st.head = NULL;
	rc = 0;
out:
	iour_prog__free(st.head);
	iour__free(st.units);
	iour__free(st.cmps);
	iour__free(st.rules);
	iour__free(st.tf);
	return rc;
}
