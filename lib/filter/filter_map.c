/* SPDX-License-Identifier: MIT */
/*
 * Field layouts and interval maps (filter_map.h), split out of
 * lib/filter/filter_lower.c: each field's place in the context, and balanced
 * decision trees over a field's value segments, on the raw or the
 * byte-swapped word, whichever is shorter.
 */
#include <stdlib.h>
#include <sys/socket.h>

#include "filter_map.h"
#include "radix.h"
#include "base/schema.h"

/* ---- field layout --------------------------------------------------------- */
/*
 * Where a field sits comes from its row of the request schema
 * (lib/base/schema.def); the loads follow doc/kernel.md 4.4: 32-bit words in
 * native byte order, network-order fields in memory order.
 */
void iour__fm_field_layout(uint32_t field, bool be, struct layout *L)
{
	const struct iour__schema_field *f = iour__schema_field_of(field);

	memset(L, 0, sizeof(*L));
	L->width = 32;
	L->wmask = UINT32_MAX;
	L->maxv = UINT32_MAX;
	if (!f)
		return;
	L->off = f->off;
	if (f->bytes == 16) {
		L->width = 128;
	} else if (f->bytes == 8 && f->mask && f->mask <= UINT32_MAX) {
		/* bits of the low word of a u64 (open.accmode of open.flags) */
		L->off = f->off + (be ? 4 : 0);
		L->wmask = (uint32_t)f->mask;
		L->need_and = true;
		L->maxv = f->mask;
	} else if (f->bytes == 8) {
		L->width = 64;
		L->maxv = f->valid;
	} else {
		/* 1, 2 or 4 bytes within one word: value = (word & wmask) >> shift */
		uint32_t pos = (f->off & 3) * 8, nbits = f->bytes * 8;
		uint32_t be_shift = 32 - pos - nbits;
		uint64_t ones = ((uint64_t)1 << nbits) - 1;

		L->off = f->off & ~3U;
		if (f->order == IOUR__SO_NET) {
			L->network = true;
			L->netbytes = f->bytes;
			if (!be && nbits > 8)
				L->swap = nbits; /* swapped at run time, in place */
			else
				L->shift = be_shift;
		} else {
			L->shift = be ? be_shift : pos;
		}
		L->wmask = (uint32_t)((f->mask ? f->mask : ones) << L->shift);
		L->need_and = f->mask != 0;
		L->maxv = f->mask ? f->mask : f->valid;
	}
	if (f->kind == IOUR__SK_ADDR4)
		L->guard = AF_INET;
	else if (f->kind == IOUR__SK_ADDR6)
		L->guard = AF_INET6;
}

/* The raw word a network-order field's value v appears as. */
uint32_t iour__fm_raw_of(const struct layout *L, uint64_t v, bool be)
{
	uint8_t b[4] = { 0 };

	if (L->netbytes == 2) {
		b[0] = (uint8_t)(v >> 8);
		b[1] = (uint8_t)v;
	} else {
		b[0] = (uint8_t)(v >> 24);
		b[1] = (uint8_t)(v >> 16);
		b[2] = (uint8_t)(v >> 8);
		b[3] = (uint8_t)v;
	}
	return load32(b, be);
}

/* ---- segments and interval maps ------------------------------------------ */

int iour__fm_segv_reserve(struct segv *s, size_t want)
{
	struct seg *nv;

	if (!s->v) {
		s->v = s->inl;
		s->cap = SEGV_INLINE;
	}
	if (want <= s->cap)
		return 0;
	if (s->v == s->inl) {
		nv = iour__malloc(want * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		memcpy(nv, s->inl, s->n * sizeof(*nv));
	} else {
		nv = iour__realloc(s->v, want * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
	}
	s->v = nv;
	s->cap = want;
	return 0;
}

/* Documented in filter_map.h: the slow path of iour__fm_segv_push(). */
int iour__fm_segv_grow(struct segv *s)
{
	return iour__fm_segv_reserve(s, s->cap ? 2 * s->cap : SEGV_INLINE);
}

void iour__fm_segv_free(struct segv *s)
{
	if (s->v != s->inl)
		iour__free(s->v);
	s->v = NULL;
	s->n = s->cap = 0;
}

static uint32_t ceil_log2(uint64_t n)
{
	uint32_t r = 0;

	while (r < 64 && ((uint64_t)1 << r) < n)
		r++;
	return r;
}

/*
 * Balanced decision tree over segments segs[i..j] of a 32-bit expression.
 * The segments are contiguous and adjacent ones have different targets.
 */
static uint32_t map_tree(struct cc *c, uint64_t wx, const struct seg *s, size_t i, size_t j)
{
	size_t n = j - i + 1, k, npts = 0, bgi = SIZE_MAX;
	uint32_t bg, node;

	uint32_t chain = c->chain ? c->chain : 3;

	if (n == 1)
		return s[i].t;
	/* Up to three points on a common background: a chain of JEQs has
	 * the worst path of the tree and a shorter average one.  Stacked
	 * programs allow longer chains (c->chain): fewer instructions per
	 * point, a few more on the path. */
	if (n <= 2 * (size_t)chain + 1) {
		for (k = i; k <= j; k++)
			if (s[k].lo != s[k].hi) {
				bgi = k;
				break;
			}
		if (bgi != SIZE_MAX) {
			bool ok = true;

			bg = s[bgi].t;
			for (k = i; k <= j && ok; k++) {
				if (s[k].t == bg)
					continue;
				if (s[k].lo != s[k].hi)
					ok = false;
				npts++;
			}
			if (ok && npts <= chain) {
				node = bg;
				for (k = j + 1; k-- > i;)
					if (s[k].t != bg)
						node = iour__fc_mk_test(c, wx, J_EQ,
									(uint32_t)s[k].lo, s[k].t,
									node);
				return node;
			}
		}
	}
	if (n == 2) {
		if (s[i].lo == s[i].hi)
			return iour__fc_mk_test(c, wx, J_EQ, (uint32_t)s[i].lo, s[i].t, s[j].t);
		if (s[j].lo == s[j].hi)
			return iour__fc_mk_test(c, wx, J_EQ, (uint32_t)s[j].lo, s[j].t, s[i].t);
		return iour__fc_mk_test(c, wx, J_GE, (uint32_t)s[j].lo, s[j].t, s[i].t);
	}
	k = i + n / 2;
	if (c->chain) {
		/* split after a multiple of `chain` single points, so that
		 * the leaves are full chains */
		size_t pts = 0, want, seen = 0;

		for (size_t q = i; q <= j; q++)
			pts += s[q].lo == s[q].hi;
		want = (pts + chain) / (2 * (size_t)chain) * chain;
		if (want && want < pts)
			for (size_t q = i; q <= j; q++) {
				seen += s[q].lo == s[q].hi;
				if (seen == want) {
					if (q + 1 <= j && q + 1 > i)
						k = q + 1;
					break;
				}
			}
	}
	{
		uint32_t right = map_tree(c, wx, s, k, j);
		uint32_t left = map_tree(c, wx, s, i, k - 1);

		return iour__fc_mk_test(c, wx, J_GE, (uint32_t)s[k].lo, right, left);
	}
}

/* Map over a 32-bit expression; segs cover [0, UINT32_MAX]. */
static uint32_t map32(struct cc *c, uint64_t wx, const struct segv *sv)
{
	if (!sv->n)
		return LEAF_DENY; /* unreachable: callers always cover the domain */
	return map_tree(c, wx, sv->v, 0, sv->n - 1);
}

/*
 * v-domain segments (covering [0, maxv]) of a 32-bit field to word-domain
 * segments of the expression value << shift, covering [0, UINT32_MAX]:
 * values the field cannot take are "don't care" and join the last segment.
 */
static int scale_segs(const struct segv *in, uint32_t shift, struct segv *out)
{
	uint64_t low = shift ? ((uint64_t)1 << shift) - 1 : 0;

	if (iour__fm_segv_reserve(out, in->n))
		return -ENOMEM;
	for (size_t i = 0; i < in->n; i++) {
		uint64_t lo = in->v[i].lo << shift;
		uint64_t hi = (in->v[i].hi << shift) | low;

		if (i + 1 == in->n)
			hi = UINT32_MAX;
		if (iour__fm_segv_push(out, lo, hi, in->v[i].t))
			return -ENOMEM;
	}
	return 0;
}

/*
 * 64-bit map: segs cover [0, UINT64_MAX].  A map over the high word whose
 * targets are maps over the low word (or the target itself when a high
 * value maps entirely to one target).
 */
static uint32_t map64(struct cc *c, uint64_t hwx, uint64_t lwx, const struct segv *sv)
{
	struct segv hi, lo;
	uint32_t cur_h = 0, node = LEAF_DENY;
	size_t i;

	iour__fm_segv_init(&hi);
	iour__fm_segv_init(&lo);

	/* close the low map of high value cur_h and add it to `hi` */
#define FLUSH_HIGH()                                            \
	do {                                                    \
		uint32_t tgt;                                   \
		if (lo.n == 1)                                  \
			tgt = lo.v[0].t;                        \
		else                                            \
			tgt = map32(c, lwx, &lo);               \
		if (iour__fm_segv_push(&hi, cur_h, cur_h, tgt)) \
			c->err = -ENOMEM;                       \
		lo.n = 0;                                       \
	} while (0)

	for (i = 0; i < sv->n && !c->err; i++) {
		uint64_t a = sv->v[i].lo, b = sv->v[i].hi;
		uint32_t ha = (uint32_t)(a >> 32), hb = (uint32_t)(b >> 32);
		uint32_t t = sv->v[i].t;

		if (ha == hb) {
			if (iour__fm_segv_push(&lo, (uint32_t)a, (uint32_t)b, t))
				c->err = -ENOMEM;
			if ((uint32_t)b == UINT32_MAX) {
				FLUSH_HIGH();
				cur_h = ha + 1;
			}
			continue;
		}
		/* the tail of ha */
		if (iour__fm_segv_push(&lo, (uint32_t)a, UINT32_MAX, t))
			c->err = -ENOMEM;
		FLUSH_HIGH();
		/* whole high values ha+1 .. hb-1 (and hb if b ends it) */
		if ((uint32_t)b == UINT32_MAX) {
			if (iour__fm_segv_push(&hi, (uint64_t)ha + 1, hb, t))
				c->err = -ENOMEM;
			cur_h = hb + 1;
		} else {
			if (hb > ha + 1 && iour__fm_segv_push(&hi, (uint64_t)ha + 1, hb - 1, t))
				c->err = -ENOMEM;
			cur_h = hb;
			if (iour__fm_segv_push(&lo, 0, (uint32_t)b, t))
				c->err = -ENOMEM;
		}
	}
#undef FLUSH_HIGH
	/* the segments must have covered every high value */
	if (!c->err && (!sv->n || sv->v[sv->n - 1].hi != UINT64_MAX || lo.n))
		c->err = -IOUR_ERRNO__INTERNAL;
	if (!c->err)
		node = map32(c, hwx, &hi);
	iour__fm_segv_free(&hi);
	iour__fm_segv_free(&lo);
	return node;
}

/* ---- maps over one field ------------------------------------------------- */
/* Up to this many non-background values are listed as raw words. */
#define RAW_ENUM_MAX 1024
/* More single points than that are enumerated too (they do not multiply
 * the segments): large IPv4 sets then need no run-time byte swap. */
#define RAW_POINTS_MAX 131072

int iour__fm_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static unsigned u64_digit(const void *e, unsigned d)
{
	return (unsigned)(*(const uint64_t *)e >> (8 * d)) & 0xff;
}

/* Documented in filter_map.h */
int iour__fm_sort_u64(uint64_t *v, size_t n)
{
	if (n <= 32) {
		/* a small filter's handful of bounds: insertion (doc/design.md,
		 * "Where a small filter's compile time goes") */
		for (size_t i = 1; i < n; i++) {
			uint64_t x = v[i];
			size_t j = i;

			for (; j > 0 && v[j - 1] > x; j--)
				v[j] = v[j - 1];
			v[j] = x;
		}
		return 0;
	}
	if (n < 256) {
		qsort(v, n, sizeof(*v), iour__fm_cmp_u64);
		return 0;
	}
	return iour__radix_sort(v, n, sizeof(*v), 8, u64_digit);
}

/*
 * Map over a 32-bit field given v-domain segments covering [0, maxv].
 * For a network-order field, chooses between comparing the raw word with
 * swapped constants (only when the non-background values can be listed)
 * and swapping the value at run time.
 */
static uint32_t map_field32(struct cc *c, const struct layout *L, const struct segv *vs)
{
	struct segv host, raw;
	uint64_t hwx, rwx = WX(L->off, WX_RAW, 0);
	uint32_t node = LEAF_DENY;
	size_t i;

	if (vs->n == 1)
		return vs->v[0].t;
	iour__fm_segv_init(&host);
	iour__fm_segv_init(&raw);
	if (L->swap)
		hwx = WX(L->off, L->swap == 16 ? WX_BSWAP16 : WX_BSWAP32, 0);
	else if (L->need_and)
		hwx = WX(L->off, WX_AND, L->wmask);
	else
		hwx = rwx;
	if (scale_segs(vs, L->swap ? 0 : L->shift, &host)) {
		c->err = -ENOMEM;
		goto out; /* host may hold the segments pushed before the failure */
	}
	if (L->swap) {
		/* background: the target covering the most values (maps have
		 * a handful of distinct targets) */
		uint64_t best = 0, pts = 0, nsegs = 0, tot[8];
		uint32_t bg = vs->v[0].t, tg[8], ntg = 0;

		for (i = 0; i < vs->n; i++) {
			uint32_t j;

			for (j = 0; j < ntg && tg[j] != vs->v[i].t; j++)
				;
			if (j == ntg) {
				if (ntg == 8)
					continue;
				tg[ntg] = vs->v[i].t;
				tot[ntg++] = 0;
			}
			tot[j] += vs->v[i].hi - vs->v[i].lo + 1;
		}
		for (uint32_t j = 0; j < ntg; j++)
			if (tot[j] > best) {
				best = tot[j];
				bg = tg[j];
			}
		for (i = 0; i < vs->n; i++)
			if (vs->v[i].t != bg) {
				pts += vs->v[i].hi - vs->v[i].lo + 1;
				nsegs++;
			}
		if (pts <= RAW_ENUM_MAX || (pts == nsegs && pts <= RAW_POINTS_MAX)) {
			/* raw word << 32 | target: the raw words are distinct */
			uint64_t *rp = iour__malloc((pts ? pts : 1) * sizeof(*rp));
			size_t m = 0;
			uint64_t next = 0;
			int rc = 0;

			if (!rp) {
				c->err = -ENOMEM;
				goto out;
			}
			for (i = 0; i < vs->n; i++) {
				if (vs->v[i].t == bg)
					continue;
				for (uint64_t v = vs->v[i].lo; v <= vs->v[i].hi; v++) {
					rp[m++] = (uint64_t)iour__fm_raw_of(L, v, c->be) << 32 |
						  vs->v[i].t;
				}
			}
			rc = iour__fm_sort_u64(rp, m);
			for (i = 0; i < m && !rc; i++) {
				uint64_t r = rp[i] >> 32;

				if (r > next)
					rc = iour__fm_segv_push(&raw, next, r - 1, bg);
				if (!rc)
					rc = iour__fm_segv_push(&raw, r, r, (uint32_t)rp[i]);
				next = r + 1;
			}
			if (!rc && next <= UINT32_MAX)
				rc = iour__fm_segv_push(&raw, next, UINT32_MAX, bg);
			iour__free(rp);
			if (rc) {
				c->err = -ENOMEM;
				goto out;
			}
		}
	}
	if (raw.n && ceil_log2(raw.n) <= ceil_log2(host.n) + wx_xform_len(hwx))
		node = map32(c, rwx, &raw);
	else
		node = map32(c, hwx, &host);
out:
	iour__fm_segv_free(&host);
	iour__fm_segv_free(&raw);
	return node;
}

/* Map over any scalar field given v-domain segments covering [0, maxv]. */
uint32_t iour__fm_map_field(struct cc *c, const struct layout *L, const struct segv *vs)
{
	if (L->width == 64) {
		uint32_t lo = L->off + (c->be ? 4 : 0), hi = L->off + (c->be ? 0 : 4);

		if (vs->n == 1)
			return vs->v[0].t;
		return map64(c, WX(hi, WX_RAW, 0), WX(lo, WX_RAW, 0), vs);
	}
	return map_field32(c, L, vs);
}
