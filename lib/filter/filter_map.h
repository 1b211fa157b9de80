/* SPDX-License-Identifier: MIT */
/*
 * Field layouts and interval maps for stage 1 of the argument-filter
 * compiler (filter_ir.h): where each field sits in the context, and the
 * balanced decision trees that map a field's value segments to targets.
 * lib/filter/filter_map.c implements them; lib/filter/filter_lower.c lowers
 * comparisons and rules through them.
 */
#ifndef IOUR_LIB_FILTER_MAP_H
#define IOUR_LIB_FILTER_MAP_H

#include "filter_ir.h"

/* ---- field layout --------------------------------------------------------- */
struct layout {
	uint32_t width;    /* 32, 64 or 128 */
	uint32_t off;      /* 32-bit: the word; 64: the u64; 128: first word */
	uint32_t wmask;    /* 32-bit: bits of the word that hold value << shift */
	uint32_t shift;    /* 32-bit: value = (word & wmask) >> shift */
	uint32_t swap;     /* 0, or 16 / 32: network-order field, little-endian */
	bool need_and;     /* other bits of the word may be set */
	bool network;      /* network-order field (port, IPv4) */
	uint32_t netbytes; /* its size in bytes: 2 or 4 */
	uint64_t maxv;     /* largest value the field takes */
	uint32_t guard;    /* 0, or the family the field exists for */
};

/* A segment [lo, hi] of a value domain mapped to a target node. */
struct seg {
	uint64_t lo, hi;
	uint32_t t;
	uint32_t pad;
};

/* A vector of segments.  The first SEGV_INLINE live in the vector itself,
 * so a small map allocates nothing (doc/design.md, "Where a small filter's
 * compile time goes"); a vector must therefore not be copied by value
 * once used.  iour__fm_segv_init() it before the first push (it leaves the
 * inline array uninitialised, which a designated { 0 } would clear). */
#define SEGV_INLINE 32
struct segv {
	struct seg *v;
	size_t n, cap;
	struct seg inl[SEGV_INLINE];
};

/* Fill *L with field's layout in a context of the given byte order. */
IOUR_INTERNAL void iour__fm_field_layout(uint32_t field, bool be, struct layout *L);
/* The raw word a network-order field's value v appears as. */
IOUR_INTERNAL uint32_t iour__fm_raw_of(const struct layout *L, uint64_t v, bool be);
/* Double the room of a full vector; 0 or -ENOMEM. */
IOUR_INTERNAL int iour__fm_segv_grow(struct segv *s);
/* Append [lo, hi] -> t, merging with an adjacent segment of the same
 * target; 0 or -ENOMEM.  Inline: a map pushes every segment two or three
 * times (doc/design.md, "Where a small filter's compile time goes"). */
static inline int iour__fm_segv_push(struct segv *s, uint64_t lo, uint64_t hi, uint32_t t)
{
	struct seg *g;

	if (s->n && s->v[s->n - 1].t == t && s->v[s->n - 1].hi + 1 == lo) {
		s->v[s->n - 1].hi = hi;
		return 0;
	}
	if (s->n == s->cap && iour__fm_segv_grow(s))
		return -ENOMEM;
	g = &s->v[s->n++];
	g->lo = lo;
	g->hi = hi;
	g->t = t;
	g->pad = 0;
	return 0;
}

static inline void iour__fm_segv_init(struct segv *s)
{
	s->v = NULL;
	s->n = s->cap = 0;
}
/* Make room for `want` segments in all; 0 or -ENOMEM. */
IOUR_INTERNAL int iour__fm_segv_reserve(struct segv *s, size_t want);
IOUR_INTERNAL void iour__fm_segv_free(struct segv *s);
/* qsort comparator for uint64_t. */
IOUR_INTERNAL int iour__fm_cmp_u64(const void *a, const void *b);
/* Sort n values ascending: a radix sort, linear in n (a comparison sort
 * when n is small).  0 or -ENOMEM (v unchanged). */
IOUR_INTERNAL int iour__fm_sort_u64(uint64_t *v, size_t n);
/* Map over any scalar field given v-domain segments covering [0, maxv];
 * sets c->err on failure. */
IOUR_INTERNAL uint32_t iour__fm_map_field(struct cc *c, const struct layout *L,
					  const struct segv *vs);

#endif /* IOUR_LIB_FILTER_MAP_H */
