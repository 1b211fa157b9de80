/* SPDX-License-Identifier: MIT */
/*
 * Stage 2 of the argument-filter compiler (filter_ir.h): path
 * specialisation.  The decision graph is re-walked with what each path
 * knows about each word expression, and tests whose outcome is known are
 * bypassed, within a budget.
 */
#include <stdlib.h>

#include "filter_ir.h"

/* ---- path specialisation -------------------------------------------------- */
#define SPEC_MAX_DEPTH 1000
#define SPEC_BUDGET 200000
#define SPEC_MAX_NODES (1U << 20)

static void kn_init(struct kn *k, uint64_t wx)
{
	memset(k, 0, sizeof(*k));
	k->wx = wx;
	k->hi = wx_max(wx);
	if (WX_KIND(wx) == WX_AND)
		k->kz = ~WX_K(wx);
	else if (WX_KIND(wx) == WX_BSWAP16)
		k->kz = 0xffff0000U;
}

static bool kn_is_default(const struct kn *k)
{
	struct kn d;

	kn_init(&d, k->wx);
	return !memcmp(&d, k, sizeof(d));
}

static bool kn_excluded(const struct kn *k, uint32_t v)
{
	for (uint32_t i = 0; i < k->nex; i++)
		if (k->ex[i] == v)
			return true;
	return false;
}

/* 1 / 0 if the test's outcome follows from k, -1 if unknown. */
static int kn_eval(const struct kn *k, uint8_t jop, uint32_t v)
{
	bool exact = k->lo == k->hi;

	switch (jop) {
	case J_EQ:
		if (exact)
			return k->lo == v;
		if (v < k->lo || v > k->hi || (v & k->kz) || kn_excluded(k, v))
			return 0;
		return -1;
	case J_GT:
		if (k->lo > v)
			return 1;
		if (k->hi <= v)
			return 0;
		return -1;
	case J_GE:
		if (k->lo >= v)
			return 1;
		if (k->hi < v)
			return 0;
		return -1;
	case J_SET:
		if (!(v & ~k->kz))
			return 0;
		if (exact)
			return (k->lo & v) != 0;
		for (uint32_t i = 0; i < k->nnz; i++)
			if (!(k->nz[i] & ~k->kz & ~v))
				return 1;
		if (k->hi < (v & -v))
			return 0;
		if ((v | k->kz) == UINT32_MAX && (k->lo > 0 || kn_excluded(k, 0)))
			return 1;
		return -1;
	}
	return -1;
}

static void kn_normalise(struct kn *k)
{
	uint32_t n = 0;
	bool moved = true;

	if (k->lo == k->hi) {
		uint32_t v = k->lo;

		kn_init(k, k->wx);
		k->lo = k->hi = v;
		return;
	}
	while (moved) {
		moved = false;
		for (uint32_t i = 0; i < k->nex; i++) {
			if (k->ex[i] == k->lo && k->lo < k->hi) {
				k->lo++;
				moved = true;
			} else if (k->ex[i] == k->hi && k->hi > k->lo) {
				k->hi--;
				moved = true;
			}
		}
	}
	for (uint32_t i = 0; i < k->nex; i++)
		if (k->ex[i] > k->lo && k->ex[i] < k->hi)
			k->ex[n++] = k->ex[i];
	for (uint32_t i = n; i < 4; i++)
		k->ex[i] = 0;
	k->nex = n;
	if (k->lo == k->hi)
		kn_normalise(k);
}

static void sorted_insert(uint32_t *arr, uint32_t *n, uint32_t cap, uint32_t v)
{
	uint32_t i;

	for (i = 0; i < *n; i++) {
		if (arr[i] == v)
			return;
		if (arr[i] > v)
			break;
	}
	if (*n == cap) {
		if (i == cap)
			return; /* dropping knowledge is always safe */
		(*n)--;
	}
	memmove(&arr[i + 1], &arr[i], (*n - i) * sizeof(*arr));
	arr[i] = v;
	(*n)++;
}

static void kn_learn(struct kn *k, uint8_t jop, uint32_t v, bool outcome)
{
	switch (jop) {
	case J_EQ:
		if (outcome)
			k->lo = k->hi = v;
		else
			sorted_insert(k->ex, &k->nex, 4, v);
		break;
	case J_GT:
		if (outcome) {
			if (v + 1 > k->lo)
				k->lo = v + 1;
		} else if (v < k->hi) {
			k->hi = v;
		}
		break;
	case J_GE:
		if (outcome) {
			if (v > k->lo)
				k->lo = v;
		} else if (v - 1 < k->hi) {
			k->hi = v - 1;
		}
		break;
	case J_SET:
		if (outcome)
			sorted_insert(k->nz, &k->nnz, 2, v);
		else
			k->kz |= v;
		break;
	}
	kn_normalise(k);
}

static int kstack_reserve(struct cc *c, size_t n)
{
	if (c->ksp + n <= c->kcap)
		return 0;
	{
		size_t ncap = c->kcap ? c->kcap * 2 : 32;
		struct kn *nk;

		while (ncap < c->ksp + n)
			ncap *= 2;
		nk = iour__realloc(c->kstack, ncap * sizeof(*nk));
		if (!nk)
			return -ENOMEM;
		c->kstack = nk;
		c->kcap = ncap;
	}
	return 0;
}

/* Outcome of node n's test from the records at kstack[b .. b+nk). */
static int spec_implied(const struct cc *c, const struct node *nd, size_t b, uint32_t nk)
{
	const struct kn *ks = &c->kstack[b];
	struct kn d;

	for (uint32_t i = 0; i < nk; i++)
		if (ks[i].wx == nd->wx)
			return kn_eval(&ks[i], nd->jop, nd->k);
	if (WX_KIND(nd->wx) != WX_RAW) {
		uint64_t raw = WX(WX_OFF(nd->wx), WX_RAW, 0);

		for (uint32_t i = 0; i < nk; i++)
			if (ks[i].wx == raw && ks[i].lo == ks[i].hi) {
				struct kn e;

				kn_init(&e, nd->wx);
				e.lo = e.hi = wx_eval(nd->wx, ks[i].lo);
				return kn_eval(&e, nd->jop, nd->k);
			}
	}
	kn_init(&d, nd->wx);
	return kn_eval(&d, nd->jop, nd->k);
}

/* Push a copy of frame [b, b+nk) keeping only records relevant to offmask,
 * plus (optionally) what a test's outcome teaches.  Records stay sorted by
 * expression so that equal knowledge has one representation. */
static int spec_push(struct cc *c, size_t b, uint32_t nk, uint16_t offmask,
		     const struct node *learn, bool outcome, uint32_t *out_n)
{
	uint32_t n = 0, i;
	size_t at;
	struct kn *fr;

	if (kstack_reserve(c, nk + 1))
		return -ENOMEM;
	at = c->ksp;
	fr = &c->kstack[at];
	for (i = 0; i < nk; i++)
		if (offmask & (1U << (WX_OFF(c->kstack[b + i].wx) / 4)))
			fr[n++] = c->kstack[b + i];
	if (learn && (offmask & (1U << (WX_OFF(learn->wx) / 4)))) {
		for (i = 0; i < n && fr[i].wx < learn->wx; i++)
			;
		if (i < n && fr[i].wx == learn->wx) {
			kn_learn(&fr[i], learn->jop, learn->k, outcome);
			if (kn_is_default(&fr[i])) {
				memmove(&fr[i], &fr[i + 1], (n - i - 1) * sizeof(*fr));
				n--;
			}
		} else if (n < KN_MAX) {
			struct kn nkn;

			kn_init(&nkn, learn->wx);
			kn_learn(&nkn, learn->jop, learn->k, outcome);
			if (!kn_is_default(&nkn)) {
				memmove(&fr[i + 1], &fr[i], (n - i) * sizeof(*fr));
				fr[i] = nkn;
				n++;
			}
		}
	}
	c->ksp = at + n;
	*out_n = n;
	return 0;
}

static uint64_t memo_hash(uint32_t node, const struct kn *ks, uint32_t n)
{
	uint64_t h = 0xcbf29ce484222325ULL ^ node, w;
	const unsigned char *b = (const unsigned char *)ks;

	for (size_t i = 0; i < n * sizeof(struct kn); i += 8) {
		memcpy(&w, b + i, 8);
		h = (h ^ w) * 0x100000001b3ULL;
		h ^= h >> 29;
	}
	return mix64(h);
}

static int memo_find(struct cc *c, uint32_t node, size_t b, uint32_t n, uint32_t *res)
{
	uint64_t h;
	uint32_t e;

	if (!c->mcap)
		return 0;
	h = memo_hash(node, &c->kstack[b], n);
	for (e = c->mtab[h & (c->mcap - 1)]; e; e = c->memo[e - 1].next) {
		const struct memo_ent *m = &c->memo[e - 1];

		if (m->node == node && m->nkn == n &&
		    (!n || !memcmp(&c->marena[m->kn_at], &c->kstack[b], n * sizeof(struct kn)))) {
			*res = m->result;
			return 1;
		}
	}
	return 0;
}

static int memo_add(struct cc *c, uint32_t node, size_t b, uint32_t n, uint32_t res)
{
	struct memo_ent *m;
	uint64_t h;

	if (c->nmemo == c->capmemo) {
		uint32_t ncap = c->capmemo ? c->capmemo * 2 : 64;
		struct memo_ent *nm = iour__realloc(c->memo, ncap * sizeof(*nm));
		uint32_t *nt;

		if (!nm)
			return -ENOMEM;
		c->memo = nm;
		c->capmemo = ncap;
		nt = iour__calloc(ncap, sizeof(*nt));
		if (!nt)
			return -ENOMEM;
		iour__free(c->mtab);
		c->mtab = nt;
		c->mcap = ncap;
		for (uint32_t i = 0; i < c->nmemo; i++) {
			struct memo_ent *o = &c->memo[i];
			uint64_t oh =
				memo_hash(o->node, o->nkn ? &c->marena[o->kn_at] : NULL, o->nkn);

			o->next = c->mtab[oh & (ncap - 1)];
			c->mtab[oh & (ncap - 1)] = i + 1;
		}
	}
	if (c->mar_n + n > c->mar_cap) {
		size_t ncap = c->mar_cap ? c->mar_cap * 2 : 64;
		struct kn *na;

		while (ncap < c->mar_n + n)
			ncap *= 2;
		na = iour__realloc(c->marena, ncap * sizeof(*na));
		if (!na)
			return -ENOMEM;
		c->marena = na;
		c->mar_cap = ncap;
	}
	if (n)
		memcpy(&c->marena[c->mar_n], &c->kstack[b], n * sizeof(struct kn));
	h = memo_hash(node, &c->kstack[b], n);
	m = &c->memo[c->nmemo];
	m->node = node;
	m->result = res;
	m->nkn = n;
	m->kn_at = c->mar_n;
	m->next = c->mtab[h & (c->mcap - 1)];
	c->mtab[h & (c->mcap - 1)] = ++c->nmemo;
	c->mar_n += n;
	return 0;
}

/* Rebuild the graph below n for a path that knows kstack[b .. b+nk). */
static uint32_t spec(struct cc *c, uint32_t n, size_t b, uint32_t nk)
{
	struct node nd = c->nodes[n];
	size_t fb, save = c->ksp;
	uint32_t fn, res, tn, t2, f2;
	int r;

	if (nd.jop == J_LEAF || c->err || c->aborted)
		return n;
	if (spec_push(c, b, nk, nd.offmask, NULL, false, &fn)) {
		c->err = -ENOMEM;
		return n;
	}
	fb = c->ksp - fn;
	/* a node with one parent is reached once: nothing to remember */
	if (c->shared[n] && memo_find(c, n, fb, fn, &res)) {
		c->ksp = save;
		return res;
	}
	if (!c->budget || c->depth >= SPEC_MAX_DEPTH || c->nnodes >= SPEC_MAX_NODES) {
		c->aborted = true;
		c->ksp = save;
		return n;
	}
	c->budget--;
	c->depth++;
	r = spec_implied(c, &nd, fb, fn);
	if (r >= 0) {
		res = spec(c, r ? nd.t : nd.f, fb, fn);
	} else {
		size_t mark = c->ksp;

		if (spec_push(c, fb, fn, c->nodes[nd.t].offmask, &nd, true, &tn)) {
			c->err = -ENOMEM;
			tn = 0;
		}
		t2 = spec(c, nd.t, c->ksp - tn, tn);
		c->ksp = mark;
		if (spec_push(c, fb, fn, c->nodes[nd.f].offmask, &nd, false, &tn)) {
			c->err = -ENOMEM;
			tn = 0;
		}
		f2 = spec(c, nd.f, c->ksp - tn, tn);
		c->ksp = mark;
		res = iour__fc_mk_test(c, nd.wx, nd.jop, nd.k, t2, f2);
	}
	c->depth--;
	if (!c->err && !c->aborted && c->shared[n] && memo_add(c, n, fb, fn, res))
		c->err = -ENOMEM;
	c->ksp = save;
	return res;
}

/* Documented in filter_ir.h */
uint32_t iour__fc_specialise(struct cc *c, uint32_t root, uint32_t budget)
{
	uint32_t r;

	c->budget = budget ? budget : SPEC_BUDGET;
	c->ksp = 0;
	c->norig = c->nnodes;
	c->aborted = false;
	iour__free(c->shared); /* a second call (the driver's mapped_alt) */
	c->shared = iour__calloc(c->nnodes, 1);
	if (!c->shared) {
		c->err = -ENOMEM;
		return root;
	}
	/* parents counted over the whole graph (an upper bound of the
	 * reachable ones, which is all that matters here) */
	for (uint32_t i = 2; i < c->nnodes; i++) {
		const struct node *nd = &c->nodes[i];

		if (c->shared[nd->t] < 2)
			c->shared[nd->t]++;
		if (c->shared[nd->f] < 2)
			c->shared[nd->f]++;
	}
	for (uint32_t i = 0; i < c->nnodes; i++)
		c->shared[i] = c->shared[i] > 1;
	r = spec(c, root, 0, 0);
	if (c->aborted || c->err)
		return root;
	return r;
}
