/* SPDX-License-Identifier: MIT */
/*
 * The argument-filter compiler's driver: the decision graph (the
 * intermediate form every stage works on, hash-consed here) and the entry
 * points that run the three stages.  The pipeline is described in
 * filter_compile.h.
 */
#include <stdlib.h>

#include "filter_compile.h"

/* ---- the decision graph --------------------------------------------------- */
static uint64_t node_hash(uint64_t wx, uint8_t jop, uint32_t k, uint32_t t, uint32_t f)
{
	uint64_t h = mix64(wx ^ 0x9e3779b97f4a7c15ULL);

	h = mix64(h ^ ((uint64_t)jop << 32 | k));
	h = mix64(h ^ ((uint64_t)t << 32 | f));
	return h;
}

static int cc_grow_hash(struct cc *c)
{
	uint32_t ncap = c->hcap ? c->hcap * 2 : 1024;
	uint32_t *nt = iour__calloc(ncap, sizeof(uint32_t));

	if (!nt)
		return -ENOMEM;
	for (uint32_t i = 2; i < c->nnodes; i++) {
		const struct node *n = &c->nodes[i];
		uint64_t h = node_hash(n->wx, n->jop, n->k, n->t, n->f);
		uint32_t s = (uint32_t)h & (ncap - 1);

		while (nt[s])
			s = (s + 1) & (ncap - 1);
		nt[s] = i + 1;
	}
	iour__free(c->htab);
	c->htab = nt;
	c->hcap = ncap;
	return 0;
}

/* Documented in filter_compile.h */
uint32_t iour__fc_mk_test(struct cc *c, uint64_t wx, uint8_t jop, uint32_t k, uint32_t t,
			  uint32_t f)
{
	uint64_t h;
	uint32_t s;
	struct node *n;

	if (t == f || c->err)
		return t;
	if ((c->nnodes + 1) * 2 > c->hcap && cc_grow_hash(c)) {
		c->err = -ENOMEM;
		return t;
	}
	h = node_hash(wx, jop, k, t, f);
	s = (uint32_t)h & (c->hcap - 1);
	while (c->htab[s]) {
		n = &c->nodes[c->htab[s] - 1];
		if (n->wx == wx && n->jop == jop && n->k == k && n->t == t && n->f == f)
			return c->htab[s] - 1;
		s = (s + 1) & (c->hcap - 1);
	}
	if (c->nnodes == c->capnodes) {
		uint32_t ncap = c->capnodes * 2;
		struct node *nn = iour__realloc(c->nodes, ncap * sizeof(*nn));

		if (!nn) {
			c->err = -ENOMEM;
			return t;
		}
		c->nodes = nn;
		c->capnodes = ncap;
	}
	n = &c->nodes[c->nnodes];
	memset(n, 0, sizeof(*n));
	n->wx = wx;
	n->jop = jop;
	n->k = k;
	n->t = t;
	n->f = f;
	n->offmask = (uint16_t)(1U << (WX_OFF(wx) / 4) | c->nodes[t].offmask | c->nodes[f].offmask);
	c->htab[s] = c->nnodes + 1;
	return c->nnodes++;
}

static int cc_init(struct cc *c, bool be)
{
	memset(c, 0, sizeof(*c));
	c->be = be;
	c->capnodes = 256;
	c->nodes = iour__calloc(c->capnodes, sizeof(struct node));
	if (!c->nodes)
		return -ENOMEM;
	c->nodes[LEAF_DENY].jop = J_LEAF;
	c->nodes[LEAF_DENY].t = IOUR_DENY;
	c->nodes[LEAF_ALLOW].jop = J_LEAF;
	c->nodes[LEAF_ALLOW].t = IOUR_ALLOW;
	c->nnodes = 2;
	return cc_grow_hash(c);
}

static void cc_fini(struct cc *c)
{
	iour__free(c->nodes);
	iour__free(c->htab);
	iour__free(c->kstack);
	iour__free(c->memo);
	iour__free(c->mtab);
	iour__free(c->marena);
	iour__free(c->shared);
}

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
	rc = cc_init(&c, cfg->big_endian);
	if (rc) {
		cc_fini(&c);
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
	cc_fini(&c);
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
