/* SPDX-License-Identifier: MIT */
/*
 * The argument-filter compiler's intermediate form: the hash-consed
 * decision graph that every stage works on (filter_ir.h describes it and
 * the pipeline).
 */
#include <stdlib.h>

#include "filter_ir.h"

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
	uint32_t ncap = c->hcap ? c->hcap * 2 : 64;
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

/* Documented in filter_ir.h */
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

/* Documented in filter_ir.h */
int iour__fc_init(struct cc *c, bool be)
{
	memset(c, 0, sizeof(*c));
	c->be = be;
	c->capnodes = 32;
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

/* Documented in filter_ir.h */
void iour__fc_fini(struct cc *c)
{
	iour__free(c->nodes);
	iour__free(c->htab);
	iour__free(c->kstack);
	iour__free(c->memo);
	iour__free(c->mtab);
	iour__free(c->marena);
	iour__free(c->shared);
}
