/* SPDX-License-Identifier: MIT */
/*
 * Stage 1 of the argument-filter compiler (filter_ir.h): one opcode's
 * rules -> a decision graph: each comparison kind, runs of rules on one
 * field, and CONNECT's IPv4-mapped reading.  Field layouts and the
 * interval maps over a field's value domain live in lib/filter/filter_map.c
 * (filter_map.h).
 */
#include <stdlib.h>
#include <sys/socket.h>

#include "filter_map.h"

/* ---- comparisons ---------------------------------------------------------- */
static bool op_is_interval(uint32_t op)
{
	switch (op) {
	case IOUR_CMP_EQ:
	case IOUR_CMP_NE:
	case IOUR_CMP_LT:
	case IOUR_CMP_LE:
	case IOUR_CMP_GT:
	case IOUR_CMP_GE:
	case IOUR_CMP_IN_SET:
	case IOUR_CMP_NOT_IN_SET:
	case IOUR_CMP_IN_RANGE:
	case IOUR_CMP_NOT_IN_RANGE:
		return true;
	default:
		return false;
	}
}

/*
 * Paint the segments of [0, maxv] where an interval comparison holds with
 * `t` on top of `sv` (which already covers [0, maxv]).  Used for single
 * comparisons (sv = all F) and for runs of rules (painted last to first).
 */
struct ivl {
	uint64_t lo, hi;
};

/* A comparison's intervals up to this many live on the stack. */
#define IVL_STACK 16

/* Room cmp_intervals() needs for a comparison: a set's runs, or one
 * interval, plus one for the gaps of a negation. */
static size_t cmp_ivl_cap(const struct iour__cmp *cmp)
{
	bool set = cmp->op == IOUR_CMP_IN_SET || cmp->op == IOUR_CMP_NOT_IN_SET;

	return (set ? cmp->set_len : 1) + 1;
}

/* Intervals (sorted, disjoint) where the comparison holds, within [0, maxv],
 * written to v (cmp_ivl_cap() entries).  Returns the count or -EINVAL.  No
 * allocation: a small filter's comparisons live on the stack or in one
 * block per run (doc/design.md, "Where a small filter's compile time
 * goes"). */
static int cmp_intervals(const struct iour__cmp *cmp, uint64_t maxv, struct ivl *v)
{
	size_t n = 0, i;
	bool negate = false;
	uint64_t a = cmp->value, b = cmp->arg;

	switch (cmp->op) {
	case IOUR_CMP_NE:
		negate = true;
		/* fall through */
	case IOUR_CMP_EQ:
		b = a;
		break;
	case IOUR_CMP_LT:
		if (!a)
			return 0;
		b = a - 1;
		a = 0;
		break;
	case IOUR_CMP_LE:
		b = a;
		a = 0;
		break;
	case IOUR_CMP_GT:
		if (a >= maxv)
			return 0;
		a = a + 1;
		b = maxv;
		break;
	case IOUR_CMP_GE:
		b = maxv;
		break;
	case IOUR_CMP_NOT_IN_RANGE:
		negate = true;
		break;
	case IOUR_CMP_IN_RANGE:
		break;
	case IOUR_CMP_NOT_IN_SET:
		negate = true;
		/* fall through */
	case IOUR_CMP_IN_SET:
		break;
	case IOUR_CMP_NOT_IN_PREFIX:
		negate = true;
		/* fall through */
	case IOUR_CMP_IN_PREFIX:
		/* IPv4 only (rule_mergeable()); the builder cleared the host
		 * bits of value (filter.c) */
		b = a | (cmp->arg ? ~(UINT32_MAX << (32 - cmp->arg)) & UINT32_MAX : UINT32_MAX);
		break;
	default:
		return -EINVAL;
	}
	if (cmp->op == IOUR_CMP_IN_SET || cmp->op == IOUR_CMP_NOT_IN_SET) {
		for (i = 0; i < cmp->set_len; i++) {
			uint64_t x = cmp->set[i];

			if (n && v[n - 1].hi + 1 == x)
				v[n - 1].hi = x;
			else
				v[n].lo = v[n].hi = x, n++;
		}
	} else {
		v[0].lo = a;
		v[0].hi = b;
		n = 1;
	}
	if (negate) {
		/* the gaps, in place: gap m is written after interval m is
		 * read, and m never passes the interval being read */
		size_t m = 0, cnt = n;
		uint64_t next = 0;
		bool done = false;

		for (i = 0; i < cnt; i++) {
			uint64_t lo = v[i].lo, hi = v[i].hi;

			if (lo > next)
				v[m].lo = next, v[m].hi = lo - 1, m++;
			if (hi >= maxv) {
				done = true;
				break;
			}
			next = hi + 1;
		}
		if (!done)
			v[m].lo = next, v[m].hi = maxv, m++;
		n = m;
	}
	return (int)n;
}

/* Build v-domain segments over [0, maxv]: `ivs` -> t, the rest -> f. */
static int segs_from_intervals(const struct ivl *ivs, size_t n, uint64_t maxv, uint32_t t,
			       uint32_t f, struct segv *out)
{
	uint64_t next = 0;

	for (size_t i = 0; i < n; i++) {
		if (ivs[i].lo > next && iour__fm_segv_push(out, next, ivs[i].lo - 1, f))
			return -ENOMEM;
		if (iour__fm_segv_push(out, ivs[i].lo, ivs[i].hi, t))
			return -ENOMEM;
		if (ivs[i].hi == maxv)
			return 0;
		next = ivs[i].hi + 1;
	}
	return iour__fm_segv_push(out, next, maxv, f);
}

/* (word & mask) == val on one 32-bit word, as a node. */
static uint32_t word_meq(struct cc *c, uint32_t off, uint32_t mask, uint32_t val, uint32_t t,
			 uint32_t f)
{
	if (!mask)
		return t;
	if (mask == UINT32_MAX)
		return iour__fc_mk_test(c, WX(off, WX_RAW, 0), J_EQ, val, t, f);
	return iour__fc_mk_test(c, WX(off, WX_AND, mask), J_EQ, val, t, f);
}

/* A bit test on one word with word-domain mask m (and value a). */
static uint32_t word_bits(struct cc *c, uint32_t op, uint32_t off, uint32_t m, uint32_t a,
			  uint32_t t, uint32_t f)
{
	uint64_t rwx = WX(off, WX_RAW, 0);

	switch (op) {
	case IOUR_CMP_ANY_BITS:
		return m ? iour__fc_mk_test(c, rwx, J_SET, m, t, f) : f;
	case IOUR_CMP_NONE_BITS:
		return m ? iour__fc_mk_test(c, rwx, J_SET, m, f, t) : t;
	case IOUR_CMP_ALL_BITS:
		if (!m)
			return t;
		if (!(m & (m - 1)))
			return iour__fc_mk_test(c, rwx, J_SET, m, t, f);
		return word_meq(c, off, m, m, t, f);
	default: /* MASKED_EQ */
		return word_meq(c, off, m, a, t, f);
	}
}

/* Does a scalar comparison hold for the value v?  (For fields whose value
 * a view fixes.) */
static bool value_holds(const struct iour__cmp *cmp, uint64_t v)
{
	size_t i;

	switch (cmp->op) {
	case IOUR_CMP_EQ:
		return v == cmp->value;
	case IOUR_CMP_NE:
		return v != cmp->value;
	case IOUR_CMP_LT:
		return v < cmp->value;
	case IOUR_CMP_LE:
		return v <= cmp->value;
	case IOUR_CMP_GT:
		return v > cmp->value;
	case IOUR_CMP_GE:
		return v >= cmp->value;
	case IOUR_CMP_MASKED_EQ:
		return (v & cmp->arg) == cmp->value;
	case IOUR_CMP_ANY_BITS:
		return (v & cmp->value) != 0;
	case IOUR_CMP_ALL_BITS:
		return (v & cmp->value) == cmp->value;
	case IOUR_CMP_NONE_BITS:
		return (v & cmp->value) == 0;
	case IOUR_CMP_IN_SET:
	case IOUR_CMP_NOT_IN_SET:
		for (i = 0; i < cmp->set_len && cmp->set[i] != v; i++)
			;
		return (i < cmp->set_len) == (cmp->op == IOUR_CMP_IN_SET);
	case IOUR_CMP_IN_RANGE:
		return cmp->value <= v && v <= cmp->arg;
	case IOUR_CMP_NOT_IN_RANGE:
		return v < cmp->value || v > cmp->arg;
	default:
		return false;
	}
}

/* Adjusts an address field's layout to the current mapped view; false
 * when the view has no such address (every comparison on it is false). */
static bool view_layout(const struct cc *c, struct layout *L)
{
	if (L->guard == AF_INET) {
		if (c->view != VIEW_M4)
			return false;
		L->off = IOUR_CTX_OFF_CONNECT_ADDR + 12; /* ::ffff:a.b.c.d */
		L->guard = 0;
	} else if (L->guard == AF_INET6) {
		if (c->view != VIEW_M6)
			return false;
		L->guard = 0; /* the mapped test checked the family */
	}
	return true;
}

/* Compile one comparison: a node that goes to t when it holds, else f. */
static uint32_t compile_cmp(struct cc *c, const struct iour__cmp *cmp, uint32_t t, uint32_t f)
{
	struct layout L;
	uint32_t node = f;

	iour__fm_field_layout(cmp->field, c->be, &L);
	if (c->view != VIEW_PLAIN) {
		if (cmp->field == IOUR_FIELD_CONNECT_FAMILY)
			return value_holds(cmp, c->view == VIEW_M4 ? AF_INET : AF_INET6) ? t : f;
		if (!view_layout(c, &L))
			return f;
	}

	if (L.width == 128) {
		/* IPv6 prefix: whole words by equality, the partial word masked */
		bool in = cmp->op == IOUR_CMP_IN_PREFIX;
		uint32_t yes = in ? t : f, no = in ? f : t;

		node = yes;
		for (int w = 3; w >= 0; w--) {
			uint32_t bits = cmp->arg > 32ULL * (uint32_t)w ?
						(uint32_t)(cmp->arg - 32ULL * (uint32_t)w) :
						0;
			uint8_t mb[4];

			if (bits > 32)
				bits = 32;
			for (int i = 0; i < 4; i++) {
				uint32_t bb = bits > 8U * (uint32_t)i ? bits - 8U * (uint32_t)i : 0;

				mb[i] = bb >= 8 ? 0xff : (uint8_t)(0xff00 >> bb);
			}
			node = word_meq(c, L.off + 4 * (uint32_t)w, load32(mb, c->be),
					load32(&cmp->addr6[4 * (size_t)w], c->be), node, no);
		}
	} else if (cmp->op == IOUR_CMP_IN_PREFIX || cmp->op == IOUR_CMP_NOT_IN_PREFIX) {
		/* IPv4 prefix: masked equality on the raw word */
		bool in = cmp->op == IOUR_CMP_IN_PREFIX;
		uint32_t hmask = cmp->arg ? (uint32_t)(UINT32_MAX << (32 - cmp->arg)) : 0;

		node = word_meq(c, L.off, iour__fm_raw_of(&L, hmask, c->be),
				iour__fm_raw_of(&L, cmp->value, c->be), in ? t : f, in ? f : t);
	} else if (op_is_interval(cmp->op)) {
		struct segv vs;
		struct ivl small[IVL_STACK], *ivs = small;
		size_t cap = cmp_ivl_cap(cmp);
		int n;

		if (cap > IVL_STACK) {
			ivs = iour__malloc(cap * sizeof(*ivs));
			if (!ivs) {
				c->err = -ENOMEM;
				return f;
			}
		}
		iour__fm_segv_init(&vs);
		n = cmp_intervals(cmp, L.maxv, ivs);
		if (n < 0)
			c->err = n;
		else if (iour__fm_segv_reserve(&vs, 2 * (size_t)n + 1) ||
			 segs_from_intervals(ivs, (size_t)n, L.maxv, t, f, &vs))
			c->err = -ENOMEM;
		else
			node = iour__fm_map_field(c, &L, &vs);
		if (!c->err && !L.guard && t < 2 && f < 2)
			c->leaf_map = node;
		if (ivs != small)
			iour__free(ivs);
		iour__fm_segv_free(&vs);
		if (c->err)
			return f;
	} else {
		/* bit tests and masked equality */
		uint64_t m = cmp->op == IOUR_CMP_MASKED_EQ ? cmp->arg : cmp->value;
		uint64_t a = cmp->op == IOUR_CMP_MASKED_EQ ? cmp->value : 0;

		if (L.width == 64) {
			uint32_t lo = L.off + (c->be ? 4 : 0), hi = L.off + (c->be ? 0 : 4);
			uint32_t mh = (uint32_t)(m >> 32), ml = (uint32_t)m;
			uint32_t ah = (uint32_t)(a >> 32), al = (uint32_t)a;

			/* The high word is tested only if the mask has high bits:
			 * with mh == 0 the operand proves it irrelevant. */
			if (cmp->op == IOUR_CMP_ANY_BITS) {
				node = word_bits(c, cmp->op, lo, ml, 0, t, f);
				if (mh)
					node = iour__fc_mk_test(c, WX(hi, WX_RAW, 0), J_SET, mh, t,
								node);
			} else if (cmp->op == IOUR_CMP_NONE_BITS) {
				node = word_bits(c, cmp->op, lo, ml, 0, t, f);
				if (mh)
					node = iour__fc_mk_test(c, WX(hi, WX_RAW, 0), J_SET, mh, f,
								node);
			} else {
				node = word_bits(c, cmp->op, lo, ml, al, t, f);
				if (mh)
					node = word_bits(c, cmp->op, hi, mh, ah, node, f);
			}
		} else {
			uint32_t wm, wa;

			if (L.network) {
				wm = iour__fm_raw_of(&L, m, c->be);
				wa = iour__fm_raw_of(&L, a, c->be);
			} else {
				wm = (uint32_t)(m << L.shift);
				wa = (uint32_t)(a << L.shift);
			}
			node = word_bits(c, cmp->op, L.off, wm, wa, t, f);
		}
	}
	if (L.guard)
		node = iour__fc_mk_test(c, WX(IOUR_CTX_OFF_CONNECT_FAMILY, WX_RAW, 0), J_EQ,
					L.guard, node, f);
	return node;
}

/* An IPv4 prefix is an interval of host-order addresses too: runs of
 * address rules mixing single addresses, ranges and prefixes are merged
 * into one map (compile_run()). */
static bool cmp_is_prefix4(const struct iour__cmp *cmp)
{
	return cmp->field == IOUR_FIELD_CONNECT_ADDR4 &&
	       (cmp->op == IOUR_CMP_IN_PREFIX || cmp->op == IOUR_CMP_NOT_IN_PREFIX);
}

static bool rule_mergeable(const struct cc *c, const struct iour__rule *r)
{
	return r->ncmps == 1 && r->cmps[0].field != IOUR_FIELD_CONNECT_ADDR6 &&
	       (op_is_interval(r->cmps[0].op) || cmp_is_prefix4(&r->cmps[0])) &&
	       (c->view == VIEW_PLAIN || r->cmps[0].field != IOUR_FIELD_CONNECT_FAMILY);
}

/*
 * A run of one-comparison interval rules on one field: paint the value
 * domain (first rule wins) and build one map; values no rule takes go to
 * `rest`.
 */
static uint32_t compile_run(struct cc *c, const struct iour__rule *rules, size_t n, uint32_t rest)
{
	struct layout L;
	uint64_t stackbuf[256], *bnd;
	uint32_t *tgt;
	struct ivl *ivs;
	size_t *at, nb = 0, cap = 0, bytes, i, j;
	void *blk = stackbuf;
	struct segv vs;
	uint32_t node = rest;

	iour__fm_field_layout(rules[0].cmps[0].field, c->be, &L);
	if (c->view != VIEW_PLAIN && !view_layout(c, &L))
		return rest;
	for (i = 0; i < n; i++)
		cap += cmp_ivl_cap(&rules[i].cmps[0]);
	/* one block: the intervals, where each rule's start (at[]), the
	 * elementary boundaries and their targets (doc/design.md, "Where a
	 * small filter's compile time goes") */
	bytes = cap * sizeof(*ivs) + (n + 1) * sizeof(*at) + (2 * cap + 1) * sizeof(*bnd) +
		(2 * cap + 1) * sizeof(*tgt);
	if (bytes > sizeof(stackbuf)) {
		blk = iour__malloc(bytes);
		if (!blk) {
			c->err = -ENOMEM;
			return rest;
		}
	}
	ivs = blk;
	bnd = (uint64_t *)(ivs + cap);
	at = (size_t *)(bnd + 2 * cap + 1);
	tgt = (uint32_t *)(at + n + 1);
	iour__fm_segv_init(&vs);
	at[0] = 0;
	for (i = 0; i < n; i++) {
		int m = cmp_intervals(&rules[i].cmps[0], L.maxv, ivs + at[i]);

		if (m < 0) {
			c->err = m;
			goto out;
		}
		at[i + 1] = at[i] + (size_t)m;
	}
	/* elementary boundaries: 0 and every interval's start and end + 1 */
	bnd[nb++] = 0;
	for (j = 0; j < at[n]; j++) {
		bnd[nb++] = ivs[j].lo;
		if (ivs[j].hi < L.maxv)
			bnd[nb++] = ivs[j].hi + 1;
	}
	if (iour__fm_sort_u64(bnd, nb))
		goto nomem;
	j = 0;
	for (i = 0; i < nb; i++)
		if (!j || bnd[j - 1] != bnd[i])
			bnd[j++] = bnd[i];
	nb = j;
	for (i = 0; i < nb; i++)
		tgt[i] = rest;
	/* paint last rule first so that earlier rules win */
	for (i = n; i-- > 0;) {
		uint32_t leaf = cc_leaf(rules[i].verdict);

		for (j = at[i]; j < at[i + 1]; j++) {
			size_t lo = 0, hi = nb; /* first boundary >= ivs.lo */

			while (lo < hi) {
				size_t mid = (lo + hi) / 2;

				if (bnd[mid] < ivs[j].lo)
					lo = mid + 1;
				else
					hi = mid;
			}
			for (size_t k = lo; k < nb && bnd[k] <= ivs[j].hi; k++)
				tgt[k] = leaf;
		}
	}
	if (iour__fm_segv_reserve(&vs, nb))
		goto nomem;
	for (i = 0; i < nb; i++) {
		uint64_t hi = i + 1 < nb ? bnd[i + 1] - 1 : L.maxv;

		if (iour__fm_segv_push(&vs, bnd[i], hi, tgt[i]))
			goto nomem;
	}
	node = iour__fm_map_field(c, &L, &vs);
	if (!L.guard && rest < 2)
		c->leaf_map = node; /* every target is a rule's leaf or rest */
	if (L.guard)
		node = iour__fc_mk_test(c, WX(IOUR_CTX_OFF_CONNECT_FAMILY, WX_RAW, 0), J_EQ,
					L.guard, node, rest);
	goto out;
nomem:
	c->err = -ENOMEM;
out:
	if (blk != stackbuf)
		iour__free(blk);
	iour__fm_segv_free(&vs);
	return c->err ? rest : node;
}

/* A rule's conjunction in the current view: to t when it holds, else f. */
static uint32_t compile_conj(struct cc *c, const struct iour__rule *r, uint32_t t, uint32_t f)
{
	for (uint32_t k = r->ncmps; k-- > 0 && !c->err;)
		t = compile_cmp(c, &r->cmps[k], t, f);
	return t;
}

/* Does the rule compare a field that the IPv4 view of a mapped request
 * reads differently from the request as given? */
static bool rule_reads_ipv4(const struct iour__rule *r)
{
	for (uint32_t k = 0; k < r->ncmps; k++)
		if (r->cmps[k].field == IOUR_FIELD_CONNECT_FAMILY ||
		    r->cmps[k].field == IOUR_FIELD_CONNECT_ADDR4)
			return true;
	return false;
}

/*
 * The whole rule list of an opcode as a graph.  In the PLAIN view, every
 * rule reads the context as it is.  Otherwise the request is an AF_INET6
 * connect to an IPv4-mapped address (filter.h, IOUR_FILTER_ADDR4_LITERAL):
 * an allow rule holds when it holds in the M4 reading (it admits the IPv4
 * connect the request becomes), a deny rule when it holds in either
 * reading (the M6 one first, falling back to the M4 one, then to the rules
 * after it).
 */
static uint32_t compile_rules(struct cc *c, const struct iour__opfilter *of, uint32_t dflt)
{
	uint32_t node = cc_leaf(dflt);
	size_t i = of->nrules;
	bool mapped = c->view != VIEW_PLAIN;

	while (i > 0 && !c->err) {
		const struct iour__rule *r = &of->rules[i - 1];
		size_t j = i - 1;

		if (rule_mergeable(c, r)) {
			while (j > 0 && rule_mergeable(c, &of->rules[j - 1]) &&
			       of->rules[j - 1].cmps[0].field == r->cmps[0].field)
				j--;
			if (i - j >= 2) {
				/* one field, read the same in both views except
				 * addr4, which only the M4 view has */
				if (mapped)
					c->view = r->cmps[0].field == IOUR_FIELD_CONNECT_ADDR4 ?
							  VIEW_M4 :
							  VIEW_M6;
				node = compile_run(c, &of->rules[j], i - j, node);
				i = j;
				continue;
			}
		}
		{
			uint32_t leaf = cc_leaf(r->verdict), alt = node;

			if (mapped && (r->verdict == IOUR_ALLOW || rule_reads_ipv4(r))) {
				c->view = VIEW_M4;
				alt = compile_conj(c, r, leaf, node);
				if (r->verdict == IOUR_ALLOW) {
					node = alt;
					i--;
					continue;
				}
			}
			if (mapped)
				c->view = VIEW_M6;
			node = compile_conj(c, r, leaf, alt);
		}
		i--;
	}
	return node;
}

/* Can an addr6 comparison hold for some IPv4-mapped address? */
static bool addr6_may_hold_mapped(const struct iour__cmp *cmp)
{
	static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	uint64_t bits = cmp->arg < 96 ? cmp->arg : 96;

	if (cmp->op != IOUR_CMP_IN_PREFIX)
		return true;
	/* the prefix's bits beyond its length are zero (filter.c) */
	for (uint64_t b = 0; b < bits; b++)
		if (((cmp->addr6[b / 8] ^ mapped[b / 8]) >> (7 - b % 8)) & 1)
			return false;
	return true;
}

/* Does any rule read the family or an IPv4 address, or allow on an IPv6
 * address that may be mapped?  (An allow rule on addr6 does not hold for
 * a mapped request, see compile_rules().) */
static bool rules_read_ipv4(const struct iour__opfilter *of)
{
	for (uint32_t i = 0; i < of->nrules; i++) {
		const struct iour__rule *r = &of->rules[i];

		if (rule_reads_ipv4(r))
			return true;
		for (uint32_t k = 0; k < r->ncmps; k++)
			if (r->cmps[k].field == IOUR_FIELD_CONNECT_ADDR6 &&
			    r->verdict == IOUR_ALLOW && addr6_may_hold_mapped(&r->cmps[k]))
				return true;
	}
	return false;
}

/* Outcome of a test on a known value. */
static bool test_holds(uint8_t jop, uint32_t x, uint32_t k)
{
	switch (jop) {
	case J_EQ:
		return x == k;
	case J_GT:
		return x > k;
	case J_GE:
		return x >= k;
	default:
		return (x & k) != 0;
	}
}

/*
 * The plain graph under `plain` as it reads a request known to be an
 * AF_INET6 connect (to ::ffff:0:0/96 when `mapped`): every test of the
 * family word (and of the first three address words) is decided, the
 * rest kept.  Hash-consing makes the result the same node as any
 * structurally equal graph.  A child is always created before its parent
 * (filter_ir.c), so one pass in index order visits children first; no recursion.  Returns UINT32_MAX
 * with c->err set when out of memory.
 */
static uint32_t restrict_known(struct cc *c, uint32_t plain, bool mapped)
{
	static const uint8_t ffff[4] = { 0, 0, 0xff, 0xff };
	uint32_t *memo = iour__malloc(((size_t)plain + 1) * sizeof(*memo));
	uint32_t known[4] = { AF_INET6, 0, 0, load32(ffff, c->be) };
	uint32_t res;

	if (!memo) {
		c->err = -ENOMEM;
		return UINT32_MAX;
	}
	for (uint32_t i = 0; i <= plain && !c->err; i++) {
		const struct node n = c->nodes[i];
		uint32_t off = WX_OFF(n.wx), w;

		if (n.jop == J_LEAF) {
			memo[i] = i;
			continue;
		}
		if (off == IOUR_CTX_OFF_CONNECT_FAMILY)
			w = known[0];
		else if (mapped && off >= IOUR_CTX_OFF_CONNECT_ADDR &&
			 off < IOUR_CTX_OFF_CONNECT_ADDR + 12)
			w = known[1 + (off - IOUR_CTX_OFF_CONNECT_ADDR) / 4];
		else {
			memo[i] = iour__fc_mk_test(c, n.wx, n.jop, n.k, memo[n.t], memo[n.f]);
			continue;
		}
		memo[i] = test_holds(n.jop, wx_eval(n.wx, w), n.k) ? memo[n.t] : memo[n.f];
	}
	res = c->err ? UINT32_MAX : memo[plain];
	iour__free(memo);
	return res;
}

/*
 * The mapped graph `m` with the ::ffff: test moved to its leaves: a leaf
 * L becomes "w24 == 0 && w28 == 0 && w32 == ::ffff ? L : p6", p6 the
 * plain graph of an AF_INET6 request.  Equivalent to testing the prefix
 * first (the graph's tests only read), and shorter where the address word
 * decides before the prefix does.  Children precede parents (filter_ir.c):
 * one pass in index order.  0 with c->err set when out of memory.
 */
static uint32_t prefix_at_leaves(struct cc *c, uint32_t m, uint32_t p6)
{
	static const uint8_t ffff[4] = { 0, 0, 0xff, 0xff };
	uint32_t *memo = iour__malloc(((size_t)m + 1) * sizeof(*memo)), res;

	if (!memo) {
		c->err = -ENOMEM;
		return 0;
	}
	for (uint32_t i = 0; i <= m && !c->err; i++) {
		const struct node n = c->nodes[i];
		uint32_t x;

		if (n.jop != J_LEAF) {
			memo[i] = iour__fc_mk_test(c, n.wx, n.jop, n.k, memo[n.t], memo[n.f]);
			continue;
		}
		x = iour__fc_mk_test(c, WX(IOUR_CTX_OFF_CONNECT_ADDR + 8, WX_RAW, 0), J_EQ,
				     load32(ffff, c->be), i, p6);
		x = iour__fc_mk_test(c, WX(IOUR_CTX_OFF_CONNECT_ADDR + 4, WX_RAW, 0), J_EQ, 0, x,
				     p6);
		memo[i] = iour__fc_mk_test(c, WX(IOUR_CTX_OFF_CONNECT_ADDR, WX_RAW, 0), J_EQ, 0, x,
					   p6);
	}
	res = c->err ? 0 : memo[m];
	iour__free(memo);
	return res;
}

/* Graphs up to this size also get the prefix-at-leaves form compiled, the
 * shorter program kept (the driver, filter_compile.c). */
#define MAPPED_ALT_NODES 1024

/*
 * CONNECT without IOUR_FILTER_ADDR4_LITERAL: requests to an IPv4-mapped
 * address (family AF_INET6, address ::ffff:0:0/96) take a graph of their
 * own, compiled in the mapped views; all other requests take the plain
 * graph.  Needed only when some rule reads the family or an address:
 * otherwise both views read a mapped request exactly as the plain graph
 * does.
 */
static uint32_t compile_mapped(struct cc *c, const struct iour__opfilter *of, uint32_t dflt,
			       uint32_t plain)
{
	static const uint8_t ffff[4] = { 0, 0, 0xff, 0xff };
	uint32_t node, mnode, useless;

	c->view = VIEW_M6;
	node = compile_rules(c, of, dflt);
	c->view = VIEW_PLAIN;
	if (c->err)
		return plain;
	/* A provably useless check is left out: when the plain graph already
	 * decides every mapped request as the mapped graph does (a rule such
	 * as family == AF_UNIX, which no reading of a mapped request can
	 * satisfy), the mapped graph is the plain one restricted to mapped
	 * requests, the same hash-consed node. */
	useless = restrict_known(c, plain, true) == node;

	if (c->err)
		return plain;
	mnode = node;
	node = iour__fc_mk_test(c, WX(IOUR_CTX_OFF_CONNECT_ADDR + 8, WX_RAW, 0), J_EQ,
				load32(ffff, c->be), node, plain);
	node = iour__fc_mk_test(c, WX(IOUR_CTX_OFF_CONNECT_ADDR + 4, WX_RAW, 0), J_EQ, 0, node,
				plain);
	node = iour__fc_mk_test(c, WX(IOUR_CTX_OFF_CONNECT_ADDR, WX_RAW, 0), J_EQ, 0, node, plain);
	node = iour__fc_mk_test(c, WX(IOUR_CTX_OFF_CONNECT_FAMILY, WX_RAW, 0), J_EQ, AF_INET6, node,
				plain);
	if (!useless) {
		if (c->nnodes <= MAPPED_ALT_NODES) {
			uint32_t p6 = restrict_known(c, plain, false), alt = 0;

			if (!c->err)
				alt = prefix_at_leaves(c, mnode, p6);
			if (c->err)
				return node;
			if (alt) {
				c->mapped_alt = iour__fc_mk_test(
					c, WX(IOUR_CTX_OFF_CONNECT_FAMILY, WX_RAW, 0), J_EQ,
					AF_INET6, alt, plain);
				c->alt_wins_ties = true;
			}
		}
		return node;
	}
	/* The driver still compiles the checked graph and keeps it when
	 * path specialisation makes it the shorter program (its family test
	 * first can decide later tests that the plain graph cannot). */
	c->mapped_alt = node;
	return plain;
}

/* One opcode's rules, with the mapped-address graph where needed. */
static uint32_t lower_rules(struct cc *c, const struct iour_filter *f, uint32_t opcode,
			    const struct iour__opfilter *of)
{
	uint32_t dflt = of->has_default ? of->default_verdict : f->default_verdict;
	uint32_t root = compile_rules(c, of, dflt);

	if (!c->err && opcode == IOUR_OP_CONNECT && !(f->flags & IOUR_FILTER_ADDR4_LITERAL) &&
	    rules_read_ipv4(of))
		root = compile_mapped(c, of, dflt, root);
	return root;
}

/* Is every rule of D = rules[lo, hi) "IPv4 address in a set of points"
 * (one comparison, IN_SET or EQ) with every loaded word in [rlo, rhi]? */
static bool range_d_ok(const struct cc *c, const struct iour__opfilter *of,
		       const struct iour__compile_cfg *cfg)
{
	struct layout L;

	iour__fm_field_layout(IOUR_FIELD_CONNECT_ADDR4, c->be, &L);
	if (cfg->range_d_hi > of->nrules || cfg->range_d_lo >= cfg->range_d_hi ||
	    cfg->range_lo > cfg->range_hi)
		return false;
	for (uint32_t i = cfg->range_d_lo; i < cfg->range_d_hi; i++) {
		const struct iour__rule *r = &of->rules[i];
		const struct iour__cmp *cmp = &r->cmps[0];

		if (r->verdict != IOUR_DENY || r->ncmps != 1 ||
		    cmp->field != IOUR_FIELD_CONNECT_ADDR4 ||
		    (cmp->op != IOUR_CMP_IN_SET && cmp->op != IOUR_CMP_EQ))
			return false;
		for (size_t k = 0; k < (cmp->op == IOUR_CMP_EQ ? 1 : cmp->set_len); k++) {
			uint64_t v = cmp->op == IOUR_CMP_EQ ? cmp->value : cmp->set[k];
			uint32_t w = iour__fm_raw_of(&L, v, c->be);

			if (w < cfg->range_lo || w > cfg->range_hi)
				return false;
		}
	}
	return true;
}

/* "w in [lo, hi] ? in : out", the bound of the cheaper side tested first:
 * hi first, a value above the range leaves after one test and one below
 * after two; lo first, the other way round. */
static uint32_t range_test(struct cc *c, uint64_t w, uint32_t lo, uint32_t hi, bool hi_first,
			   uint32_t in, uint32_t out)
{
	if (hi_first)
		return iour__fc_mk_test(c, w, J_GT, hi, out,
					iour__fc_mk_test(c, w, J_GE, lo, in, out));
	return iour__fc_mk_test(c, w, J_GE, lo, iour__fc_mk_test(c, w, J_GT, hi, out, in), out);
}

/*
 * A stacked program's range pre-check (filter_internal.h, struct
 * iour__compile_cfg; doc/design.md, "Stacked filters").  D can deny only
 * an AF_INET request whose address word (24) is one of its points, or,
 * without IOUR_FILTER_ADDR4_LITERAL, a request read as the IPv4 connect
 * to ::ffff:a.b.c.d, whose word 24 is 0 and whose word 36 is one of its
 * points.  So a request with word 24 outside [lo, hi] and not 0, or with
 * word 24 == 0 (not a point of D when lo > 0) and word 36 outside
 * [lo, hi], is decided by P, S alone, whatever its family:
 *
 *   w24 == 0 ? (w36 in [lo, hi] ? all : PS) : (w24 in [lo, hi] ? all : PS)
 *
 * The test of 0 comes first, so that an IPv4 request outside the range
 * runs 4 or 5 instructions (ld, jeq, one or two bounds, ret) and a mapped
 * one 5 or 6 (ld, jeq, ld, one or two bounds, ret): 20 over the four, the
 * least any program that tells these requests apart can run
 * (doc/design.md).  Which side of the range is the cheap one alternates
 * with cfg->range_mirror, between the kinds too (an even program: IPv4
 * above and mapped below cheap; a mirrored one the opposite), so that
 * over a stack no request kind and no side pays the longer path in every
 * program.  With IOUR_FILTER_ADDR4_LITERAL, D sees AF_INET requests only:
 * "w24 in [lo, hi] ? all : PS" (3 or 4 instructions).  With lo == 0 (0
 * may be a point): w24 > hi ? PS : all.
 */
static uint32_t range_precheck(struct cc *c, const struct iour_filter *f, uint32_t opcode,
			       const struct iour__opfilter *of, const struct iour__compile_cfg *cfg,
			       uint32_t all)
{
	struct iour__opfilter ps = *of;
	uint32_t nd = cfg->range_d_hi - cfg->range_d_lo, lo = cfg->range_lo, hi = cfg->range_hi;
	uint64_t w24 = WX(IOUR_CTX_OFF_CONNECT_ADDR, WX_RAW, 0);
	uint64_t w36 = WX(IOUR_CTX_OFF_CONNECT_ADDR + 12, WX_RAW, 0);
	bool mirror = cfg->range_mirror != 0;
	uint32_t g0, in24;

	if (!range_d_ok(c, of, cfg))
		return all;
	ps.rules = iour__malloc(((size_t)of->nrules - nd + 1) * sizeof(*ps.rules));
	if (!ps.rules) {
		c->err = -ENOMEM;
		return all;
	}
	memcpy(ps.rules, of->rules, cfg->range_d_lo * sizeof(*ps.rules));
	memcpy(ps.rules + cfg->range_d_lo, of->rules + cfg->range_d_hi,
	       (of->nrules - cfg->range_d_hi) * sizeof(*ps.rules));
	ps.nrules = of->nrules - nd;
	g0 = lower_rules(c, f, opcode, &ps);
	iour__free(ps.rules);
	/* the alternative root of compile_mapped() has no pre-check */
	c->mapped_alt = 0;
	c->alt_wins_ties = false;
	c->precheck = true;
	if (!lo)
		return iour__fc_mk_test(c, w24, J_GT, hi, g0, all);
	in24 = range_test(c, w24, lo, hi, !mirror, all, g0);
	if (f->flags & IOUR_FILTER_ADDR4_LITERAL)
		return in24;
	return iour__fc_mk_test(c, w24, J_EQ, 0, range_test(c, w36, lo, hi, mirror, all, g0), in24);
}

/* Documented in filter_ir.h */
uint32_t iour__fc_lower(struct cc *c, const struct iour_filter *f, uint32_t opcode,
			const struct iour__opfilter *of, const struct iour__compile_cfg *cfg)
{
	uint32_t root = lower_rules(c, f, opcode, of);

	if (!c->err && cfg && cfg->range_d_hi && opcode == IOUR_OP_CONNECT)
		root = range_precheck(c, f, opcode, of, cfg, root);
	return root;
}
