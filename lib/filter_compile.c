/* SPDX-License-Identifier: MIT */
/*
 * The argument-filter compiler: one opcode's rules -> a classic-BPF program.
 *
 * Pipeline
 * --------
 * 1. Decision graph.  Every comparison becomes a small graph of TEST nodes
 *    over *word expressions* (a 32-bit context word, optionally masked or
 *    byte-swapped) with JEQ/JGT/JGE/JSET tests.  Nodes are hash-consed, so
 *    identical sub-graphs (and in particular identical tails) exist once.
 *    The rule list is built from the end: the default verdict, then each
 *    rule as "all comparisons hold ? verdict : rest".
 *    - Ordered comparisons, sets and ranges are *interval maps*: the value
 *      domain is cut into segments, each with a target node, and a
 *      balanced binary search over the segment starts is emitted (worst
 *      path O(log n)).  A run of consecutive one-comparison rules on the
 *      same field is painted into one map (first rule wins), so a long
 *      rule list on one field is a tree, not a chain.
 *    - 64-bit fields are maps over the high word whose targets are maps
 *      over the low word.  The high word is skipped only when the operand
 *      proves it irrelevant: a bit test or masked equality whose mask has
 *      no high bit.  An equality with a small value still tests the high
 *      word against 0.
 *    - Network-order fields (port, IPv4 address) are compared on the raw
 *      loaded word with byte-swapped constants when only equality matters
 *      (sets of points, bit tests, prefixes); ordered comparisons swap the
 *      loaded value at run time instead, whichever is cheaper.
 * 2. Path specialisation.  The graph is re-walked with what each path
 *    already knows about each word expression (bounds, excluded values,
 *    known-zero and known-set bits); a test whose outcome is known is
 *    bypassed.  This removes the re-tests a rule list naturally has (the
 *    address-family guard of two address rules, a later rule re-testing a
 *    field an earlier one decided).  A budget bounds the work; hitting it
 *    keeps the unspecialised graph, which is correct, only longer.
 * 3. Emission.  Nodes are laid out in reverse post-order (all jumps go
 *    forward; the false branch tends to follow its test).  Each node's
 *    block is [load][transform][test]; a predecessor that already leaves
 *    the right value in A jumps past the load, so nothing is reloaded.
 *    Jumps are symbolic; after layout, a conditional jump that would skip
 *    more than 255 instructions goes through a trampoline (a JA, or a copy
 *    of the RET it aims at) inserted right after it, shared when possible.
 *
 * Everything is deterministic: no addresses, clocks or random numbers
 * influence the output.
 */
#include <stdlib.h>
#include <sys/socket.h>

#include "filter_internal.h"

/* ---- classic BPF encoding ------------------------------------------------ */
#define C_LD_ABS (KBPF_LD | KBPF_W | KBPF_ABS)
#define C_AND_K (KBPF_ALU | KBPF_AND | KBPF_K)
#define C_MUL_K (KBPF_ALU | KBPF_MUL | KBPF_K)
#define C_LSH_K (KBPF_ALU | KBPF_LSH | KBPF_K)
#define C_RSH_K (KBPF_ALU | KBPF_RSH | KBPF_K)
#define C_OR_X (KBPF_ALU | KBPF_OR | KBPF_X)
#define C_TAX (KBPF_MISC | KBPF_TAX)
#define C_JA (KBPF_JMP | KBPF_JA)
#define C_JEQ_K (KBPF_JMP | KBPF_JEQ | KBPF_K)
#define C_JGT_K (KBPF_JMP | KBPF_JGT | KBPF_K)
#define C_JGE_K (KBPF_JMP | KBPF_JGE | KBPF_K)
#define C_JSET_K (KBPF_JMP | KBPF_JSET | KBPF_K)
#define C_RET_K (KBPF_RET | KBPF_K)

enum { J_EQ = 0, J_GT = 1, J_GE = 2, J_SET = 3, J_LEAF = 0xff };
static const uint16_t jop_code[4] = { C_JEQ_K, C_JGT_K, C_JGE_K, C_JSET_K };

/* ---- word expressions ---------------------------------------------------- */
/* What A must hold for a test: a context word, raw or transformed. */
enum { WX_RAW = 0, WX_AND = 1, WX_BSWAP16 = 2, WX_BSWAP32 = 3 };
#define WX(off, kind, k) ((uint64_t)(off) | (uint64_t)(kind) << 8 | (uint64_t)(k) << 32)
#define WX_OFF(w) ((uint32_t)((w)&0xff))
#define WX_KIND(w) ((uint32_t)(((w) >> 8) & 0xff))
#define WX_K(w) ((uint32_t)((w) >> 32))
#define WX_NONE UINT64_MAX

/* Instructions needed to compute the expression when A already holds the
 * raw word (the full cost is one more, the load). */
static uint32_t wx_xform_len(uint64_t wx)
{
	switch (WX_KIND(wx)) {
	case WX_AND:
		return 1;
	case WX_BSWAP16:
		return 3;
	case WX_BSWAP32:
		return 15;
	default:
		return 0;
	}
}

/* Largest value an expression can take (used as the initial knowledge). */
static uint32_t wx_max(uint64_t wx)
{
	switch (WX_KIND(wx)) {
	case WX_AND:
		return WX_K(wx);
	case WX_BSWAP16:
		return 0xffff;
	default:
		return UINT32_MAX;
	}
}

static uint32_t bswap32(uint32_t v)
{
	return (v >> 24) | ((v >> 8) & 0xff00) | ((v << 8) & 0xff0000) | (v << 24);
}

/* The native load of 4 bytes in the target's byte order. */
static uint32_t load32(const uint8_t b[4], bool be)
{
	if (be)
		return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
	return (uint32_t)b[3] << 24 | (uint32_t)b[2] << 16 | (uint32_t)b[1] << 8 | b[0];
}

/* Value of an expression for a known raw word. */
static uint32_t wx_eval(uint64_t wx, uint32_t w)
{
	switch (WX_KIND(wx)) {
	case WX_AND:
		return w & WX_K(wx);
	case WX_BSWAP16:
		return ((w & 0xff) << 8) | ((w >> 8) & 0xff);
	case WX_BSWAP32:
		return bswap32(w);
	default:
		return w;
	}
}

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

static void field_layout(uint32_t field, bool be, struct layout *L)
{
	memset(L, 0, sizeof(*L));
	L->width = 32;
	L->wmask = UINT32_MAX;
	L->maxv = UINT32_MAX;
	switch (field) {
	case IOUR_FIELD_USER_DATA:
		L->width = 64;
		L->maxv = UINT64_MAX;
		L->off = IOUR_CTX_OFF_USER_DATA;
		break;
	case IOUR_FIELD_OPEN_FLAGS:
		L->width = 64;
		L->maxv = UINT64_MAX;
		L->off = IOUR_CTX_OFF_OPEN_FLAGS;
		break;
	case IOUR_FIELD_OPEN_MODE:
		L->width = 64;
		L->maxv = UINT64_MAX;
		L->off = IOUR_CTX_OFF_OPEN_MODE;
		break;
	case IOUR_FIELD_OPEN_RESOLVE:
		L->width = 64;
		L->maxv = UINT64_MAX;
		L->off = IOUR_CTX_OFF_OPEN_RESOLVE;
		break;
	case IOUR_FIELD_SQE_FLAGS:
		/* byte 9: bits 8..15 of the word at 8 (LE), bits 16..23 (BE) */
		L->off = 8;
		L->shift = be ? 16 : 8;
		L->wmask = 0xffU << L->shift;
		L->need_and = true;
		L->maxv = 0xff;
		break;
	case IOUR_FIELD_SOCKET_FAMILY:
		L->off = IOUR_CTX_OFF_SOCKET_FAMILY;
		break;
	case IOUR_FIELD_SOCKET_TYPE:
		L->off = IOUR_CTX_OFF_SOCKET_TYPE;
		L->wmask = 0xf;
		L->need_and = true;
		L->maxv = 0xf;
		break;
	case IOUR_FIELD_SOCKET_TYPE_FLAGS:
		L->off = IOUR_CTX_OFF_SOCKET_TYPE;
		L->wmask = SOCK_NONBLOCK | SOCK_CLOEXEC;
		L->need_and = true;
		L->maxv = L->wmask;
		break;
	case IOUR_FIELD_SOCKET_TYPE_RAW:
		L->off = IOUR_CTX_OFF_SOCKET_TYPE;
		break;
	case IOUR_FIELD_SOCKET_PROTOCOL:
		L->off = IOUR_CTX_OFF_SOCKET_PROTOCOL;
		break;
	case IOUR_FIELD_OPEN_ACCMODE:
		/* the low word of open.flags */
		L->off = IOUR_CTX_OFF_OPEN_FLAGS + (be ? 4 : 0);
		L->wmask = 3;
		L->need_and = true;
		L->maxv = 3;
		break;
	case IOUR_FIELD_CONNECT_FAMILY:
		L->off = IOUR_CTX_OFF_CONNECT_FAMILY;
		L->maxv = 0xffff; /* sa_family_t, zero-extended */
		break;
	case IOUR_FIELD_CONNECT_PORT:
		/* be16 followed by two zero pad bytes */
		L->off = IOUR_CTX_OFF_CONNECT_PORT;
		L->network = true;
		L->netbytes = 2;
		L->maxv = 0xffff;
		if (be) {
			L->shift = 16;
			L->wmask = 0xffff0000U;
		} else {
			L->swap = 16;
			L->wmask = 0xffff;
		}
		break;
	case IOUR_FIELD_CONNECT_ADDR4:
		L->off = IOUR_CTX_OFF_CONNECT_ADDR;
		L->network = true;
		L->netbytes = 4;
		L->swap = be ? 0 : 32;
		L->guard = AF_INET;
		break;
	case IOUR_FIELD_CONNECT_ADDR6:
		L->width = 128;
		L->off = IOUR_CTX_OFF_CONNECT_ADDR;
		L->guard = AF_INET6;
		break;
	}
}

/* The raw word a network-order field's value v appears as. */
static uint32_t raw_of(const struct layout *L, uint64_t v, bool be)
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

/* ---- the decision graph --------------------------------------------------- */
struct node {
	uint64_t wx;
	uint32_t k;
	uint32_t t, f;    /* children; for a leaf, t is the verdict */
	uint16_t offmask; /* context words tested in this sub-graph */
	uint8_t jop;
	uint8_t pad;
};

#define LEAF_DENY 0
#define LEAF_ALLOW 1

/* Knowledge about one word expression on a path. */
struct kn {
	uint64_t wx;
	uint32_t lo, hi;   /* bounds */
	uint32_t kz;       /* bits known to be zero */
	uint32_t nnz, nex; /* counts in nz[] / ex[] */
	uint32_t nz[2];    /* masks known to have a set bit */
	uint32_t ex[4];    /* values known not to be taken (sorted) */
	uint32_t pad;
};
#define KN_MAX 6 /* records kept per path */

struct memo_ent {
	uint32_t node;
	uint32_t result;
	uint32_t nkn;
	uint32_t next; /* chain, index + 1 */
	size_t kn_at;  /* index into the memo's record arena */
};

/* How compile_cmp() reads CONNECT's family and addresses (see
 * compile_mapped()).  PLAIN: the context as it is.  M6 and M4: the request
 * is known to be AF_INET6 to an IPv4-mapped address; M6 reads it as given
 * (family AF_INET6, no IPv4 address), M4 as the IPv4 connect it becomes
 * (family AF_INET, the IPv4 address in the last address word, no IPv6
 * address). */
enum { VIEW_PLAIN = 0, VIEW_M6 = 1, VIEW_M4 = 2 };

struct cc {
	bool be;
	uint8_t view;
	int err;
	struct node *nodes;
	uint32_t nnodes, capnodes;
	uint32_t *htab; /* hash-cons table: node index + 1, 0 = empty */
	uint32_t hcap;
	/* specialisation */
	struct kn *kstack;
	size_t ksp, kcap;
	struct memo_ent *memo;
	uint32_t nmemo, capmemo;
	uint32_t *mtab;
	uint32_t mcap;
	struct kn *marena;
	size_t mar_n, mar_cap;
	uint32_t budget;
	uint32_t depth;
	bool aborted;
	uint32_t ntramp;
	uint8_t *shared; /* original nodes with more than one parent */
	uint32_t norig;
};

static uint64_t mix64(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 33;
	return h;
}

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

static uint32_t cc_leaf(uint32_t verdict)
{
	return verdict == IOUR_ALLOW ? LEAF_ALLOW : LEAF_DENY;
}

static bool is_leaf(const struct cc *c, uint32_t n)
{
	return c->nodes[n].jop == J_LEAF;
}

/* The hash-consed TEST node; t == f collapses.  On allocation failure
 * c->err is set and a leaf is returned (the caller checks c->err). */
static uint32_t mk_test(struct cc *c, uint64_t wx, uint8_t jop, uint32_t k, uint32_t t, uint32_t f)
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

/* ---- segments and interval maps ------------------------------------------ */
/* A segment [lo, hi] of a value domain mapped to a target node. */
struct seg {
	uint64_t lo, hi;
	uint32_t t;
	uint32_t pad;
};

struct segv {
	struct seg *v;
	size_t n, cap;
};

static int segv_push(struct segv *s, uint64_t lo, uint64_t hi, uint32_t t)
{
	if (s->n && s->v[s->n - 1].t == t && s->v[s->n - 1].hi + 1 == lo) {
		s->v[s->n - 1].hi = hi;
		return 0;
	}
	if (s->n == s->cap) {
		size_t ncap = s->cap ? s->cap * 2 : 16;
		struct seg *nv = iour__realloc(s->v, ncap * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		s->v = nv;
		s->cap = ncap;
	}
	s->v[s->n].lo = lo;
	s->v[s->n].hi = hi;
	s->v[s->n].t = t;
	s->v[s->n].pad = 0;
	s->n++;
	return 0;
}

static void segv_free(struct segv *s)
{
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

	if (n == 1)
		return s[i].t;
	/* Up to three points on a common background: a chain of JEQs has
	 * the worst path of the tree and a shorter average one. */
	if (n <= 7) {
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
			if (ok && npts <= 3) {
				node = bg;
				for (k = j + 1; k-- > i;)
					if (s[k].t != bg)
						node = mk_test(c, wx, J_EQ, (uint32_t)s[k].lo,
							       s[k].t, node);
				return node;
			}
		}
	}
	if (n == 2) {
		if (s[i].lo == s[i].hi)
			return mk_test(c, wx, J_EQ, (uint32_t)s[i].lo, s[i].t, s[j].t);
		if (s[j].lo == s[j].hi)
			return mk_test(c, wx, J_EQ, (uint32_t)s[j].lo, s[j].t, s[i].t);
		return mk_test(c, wx, J_GE, (uint32_t)s[j].lo, s[j].t, s[i].t);
	}
	k = i + n / 2;
	{
		uint32_t right = map_tree(c, wx, s, k, j);
		uint32_t left = map_tree(c, wx, s, i, k - 1);

		return mk_test(c, wx, J_GE, (uint32_t)s[k].lo, right, left);
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

	for (size_t i = 0; i < in->n; i++) {
		uint64_t lo = in->v[i].lo << shift;
		uint64_t hi = (in->v[i].hi << shift) | low;

		if (i + 1 == in->n)
			hi = UINT32_MAX;
		if (segv_push(out, lo, hi, in->v[i].t))
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
	struct segv hi = { 0 }, lo = { 0 };
	uint32_t cur_h = 0, node = LEAF_DENY;
	size_t i;

	/* close the low map of high value cur_h and add it to `hi` */
#define FLUSH_HIGH()                                   \
	do {                                           \
		uint32_t tgt;                          \
		if (lo.n == 1)                         \
			tgt = lo.v[0].t;               \
		else                                   \
			tgt = map32(c, lwx, &lo);      \
		if (segv_push(&hi, cur_h, cur_h, tgt)) \
			c->err = -ENOMEM;              \
		lo.n = 0;                              \
	} while (0)

	for (i = 0; i < sv->n && !c->err; i++) {
		uint64_t a = sv->v[i].lo, b = sv->v[i].hi;
		uint32_t ha = (uint32_t)(a >> 32), hb = (uint32_t)(b >> 32);
		uint32_t t = sv->v[i].t;

		if (ha == hb) {
			if (segv_push(&lo, (uint32_t)a, (uint32_t)b, t))
				c->err = -ENOMEM;
			if ((uint32_t)b == UINT32_MAX) {
				FLUSH_HIGH();
				cur_h = ha + 1;
			}
			continue;
		}
		/* the tail of ha */
		if (segv_push(&lo, (uint32_t)a, UINT32_MAX, t))
			c->err = -ENOMEM;
		FLUSH_HIGH();
		/* whole high values ha+1 .. hb-1 (and hb if b ends it) */
		if ((uint32_t)b == UINT32_MAX) {
			if (segv_push(&hi, (uint64_t)ha + 1, hb, t))
				c->err = -ENOMEM;
			cur_h = hb + 1;
		} else {
			if (hb > ha + 1 && segv_push(&hi, (uint64_t)ha + 1, hb - 1, t))
				c->err = -ENOMEM;
			cur_h = hb;
			if (segv_push(&lo, 0, (uint32_t)b, t))
				c->err = -ENOMEM;
		}
	}
#undef FLUSH_HIGH
	/* the segments must have covered every high value */
	if (!c->err && (!sv->n || sv->v[sv->n - 1].hi != UINT64_MAX || lo.n))
		c->err = -IOUR_ERRNO__INTERNAL;
	if (!c->err)
		node = map32(c, hwx, &hi);
	segv_free(&hi);
	segv_free(&lo);
	return node;
}

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

/* Intervals (sorted, disjoint) where the comparison holds, within [0, maxv].
 * Returns the count; *out is allocated (NULL when the count is 0). */
static int cmp_intervals(const struct iour__cmp *cmp, uint64_t maxv, struct ivl **out)
{
	struct ivl *v = NULL;
	size_t n = 0, i;
	bool negate = false;
	uint64_t a = cmp->value, b = cmp->arg;

	*out = NULL;
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
	default:
		return -EINVAL;
	}
	if (cmp->op == IOUR_CMP_IN_SET || cmp->op == IOUR_CMP_NOT_IN_SET) {
		v = iour__malloc((cmp->set_len + 1) * sizeof(*v));
		if (!v)
			return -ENOMEM;
		for (i = 0; i < cmp->set_len; i++) {
			uint64_t x = cmp->set[i];

			if (n && v[n - 1].hi + 1 == x)
				v[n - 1].hi = x;
			else
				v[n].lo = v[n].hi = x, n++;
		}
	} else {
		v = iour__malloc(2 * sizeof(*v));
		if (!v)
			return -ENOMEM;
		v[0].lo = a;
		v[0].hi = b;
		n = 1;
	}
	if (negate) {
		struct ivl *w = iour__malloc((n + 1) * sizeof(*w));
		size_t m = 0;
		uint64_t next = 0;
		bool done = false;

		if (!w) {
			iour__free(v);
			return -ENOMEM;
		}
		for (i = 0; i < n; i++) {
			if (v[i].lo > next)
				w[m].lo = next, w[m].hi = v[i].lo - 1, m++;
			if (v[i].hi >= maxv) {
				done = true;
				break;
			}
			next = v[i].hi + 1;
		}
		if (!done)
			w[m].lo = next, w[m].hi = maxv, m++;
		iour__free(v);
		v = w;
		n = m;
	}
	if (!n) {
		iour__free(v);
		return 0;
	}
	*out = v;
	return (int)n;
}

/* Build v-domain segments over [0, maxv]: `ivs` -> t, the rest -> f. */
static int segs_from_intervals(const struct ivl *ivs, size_t n, uint64_t maxv, uint32_t t,
			       uint32_t f, struct segv *out)
{
	uint64_t next = 0;

	for (size_t i = 0; i < n; i++) {
		if (ivs[i].lo > next && segv_push(out, next, ivs[i].lo - 1, f))
			return -ENOMEM;
		if (segv_push(out, ivs[i].lo, ivs[i].hi, t))
			return -ENOMEM;
		if (ivs[i].hi == maxv)
			return 0;
		next = ivs[i].hi + 1;
	}
	return segv_push(out, next, maxv, f);
}

#define RAW_ENUM_MAX 1024

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

struct rawpt {
	uint32_t r;
	uint32_t t;
};

static int rawpt_cmp(const void *a, const void *b)
{
	const struct rawpt *x = a, *y = b;

	return x->r < y->r ? -1 : x->r > y->r;
}

/*
 * Map over a 32-bit field given v-domain segments covering [0, maxv].
 * For a network-order field, chooses between comparing the raw word with
 * swapped constants (only when the non-background values can be listed)
 * and swapping the value at run time.
 */
static uint32_t map_field32(struct cc *c, const struct layout *L, const struct segv *vs)
{
	struct segv host = { 0 }, raw = { 0 };
	uint64_t hwx, rwx = WX(L->off, WX_RAW, 0);
	uint32_t node = LEAF_DENY;
	size_t i;

	if (vs->n == 1)
		return vs->v[0].t;
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
		uint64_t best = 0, pts = 0, tot[8];
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
			if (vs->v[i].t != bg)
				pts += vs->v[i].hi - vs->v[i].lo + 1;
		if (pts <= RAW_ENUM_MAX) {
			struct rawpt *rp = iour__malloc((pts ? pts : 1) * sizeof(*rp));
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
					rp[m].r = raw_of(L, v, c->be);
					rp[m].t = vs->v[i].t;
					m++;
				}
			}
			qsort(rp, m, sizeof(*rp), rawpt_cmp);
			for (i = 0; i < m && !rc; i++) {
				if (rp[i].r > next)
					rc = segv_push(&raw, next, (uint64_t)rp[i].r - 1, bg);
				if (!rc)
					rc = segv_push(&raw, rp[i].r, rp[i].r, rp[i].t);
				next = (uint64_t)rp[i].r + 1;
			}
			if (!rc && next <= UINT32_MAX)
				rc = segv_push(&raw, next, UINT32_MAX, bg);
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
	segv_free(&host);
	segv_free(&raw);
	return node;
}

/* Map over any scalar field given v-domain segments covering [0, maxv]. */
static uint32_t map_field(struct cc *c, const struct layout *L, const struct segv *vs)
{
	if (L->width == 64) {
		uint32_t lo = L->off + (c->be ? 4 : 0), hi = L->off + (c->be ? 0 : 4);

		if (vs->n == 1)
			return vs->v[0].t;
		return map64(c, WX(hi, WX_RAW, 0), WX(lo, WX_RAW, 0), vs);
	}
	return map_field32(c, L, vs);
}

/* (word & mask) == val on one 32-bit word, as a node. */
static uint32_t word_meq(struct cc *c, uint32_t off, uint32_t mask, uint32_t val, uint32_t t,
			 uint32_t f)
{
	if (!mask)
		return t;
	if (mask == UINT32_MAX)
		return mk_test(c, WX(off, WX_RAW, 0), J_EQ, val, t, f);
	return mk_test(c, WX(off, WX_AND, mask), J_EQ, val, t, f);
}

/* A bit test on one word with word-domain mask m (and value a). */
static uint32_t word_bits(struct cc *c, uint32_t op, uint32_t off, uint32_t m, uint32_t a,
			  uint32_t t, uint32_t f)
{
	uint64_t rwx = WX(off, WX_RAW, 0);

	switch (op) {
	case IOUR_CMP_ANY_BITS:
		return m ? mk_test(c, rwx, J_SET, m, t, f) : f;
	case IOUR_CMP_NONE_BITS:
		return m ? mk_test(c, rwx, J_SET, m, f, t) : t;
	case IOUR_CMP_ALL_BITS:
		if (!m)
			return t;
		if (!(m & (m - 1)))
			return mk_test(c, rwx, J_SET, m, t, f);
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

	field_layout(cmp->field, c->be, &L);
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

		node = word_meq(c, L.off, raw_of(&L, hmask, c->be), raw_of(&L, cmp->value, c->be),
				in ? t : f, in ? f : t);
	} else if (op_is_interval(cmp->op)) {
		struct segv vs = { 0 };
		struct ivl *ivs;
		int n = cmp_intervals(cmp, L.maxv, &ivs);

		if (n < 0) {
			c->err = n;
			return f;
		}
		if (segs_from_intervals(ivs, (size_t)n, L.maxv, t, f, &vs))
			c->err = -ENOMEM;
		else
			node = map_field(c, &L, &vs);
		iour__free(ivs);
		segv_free(&vs);
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
					node = mk_test(c, WX(hi, WX_RAW, 0), J_SET, mh, t, node);
			} else if (cmp->op == IOUR_CMP_NONE_BITS) {
				node = word_bits(c, cmp->op, lo, ml, 0, t, f);
				if (mh)
					node = mk_test(c, WX(hi, WX_RAW, 0), J_SET, mh, f, node);
			} else {
				node = word_bits(c, cmp->op, lo, ml, al, t, f);
				if (mh)
					node = word_bits(c, cmp->op, hi, mh, ah, node, f);
			}
		} else {
			uint32_t wm, wa;

			if (L.network) {
				wm = raw_of(&L, m, c->be);
				wa = raw_of(&L, a, c->be);
			} else {
				wm = (uint32_t)(m << L.shift);
				wa = (uint32_t)(a << L.shift);
			}
			node = word_bits(c, cmp->op, L.off, wm, wa, t, f);
		}
	}
	if (L.guard)
		node = mk_test(c, WX(IOUR_CTX_OFF_CONNECT_FAMILY, WX_RAW, 0), J_EQ, L.guard, node,
			       f);
	return node;
}

static bool rule_mergeable(const struct cc *c, const struct iour__rule *r)
{
	return r->ncmps == 1 && r->cmps[0].field != IOUR_FIELD_CONNECT_ADDR6 &&
	       op_is_interval(r->cmps[0].op) &&
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
	uint64_t *bnd = NULL;
	uint32_t *tgt = NULL;
	struct ivl **ivs = NULL;
	int *nivs = NULL;
	size_t nb = 0, total = 0, i, j;
	struct segv vs = { 0 };
	uint32_t node = rest;

	field_layout(rules[0].cmps[0].field, c->be, &L);
	if (c->view != VIEW_PLAIN && !view_layout(c, &L))
		return rest;
	ivs = iour__calloc(n, sizeof(struct ivl *));
	nivs = iour__calloc(n, sizeof(*nivs));
	if (!ivs || !nivs)
		goto nomem;
	for (i = 0; i < n; i++) {
		nivs[i] = cmp_intervals(&rules[i].cmps[0], L.maxv, &ivs[i]);
		if (nivs[i] < 0) {
			c->err = nivs[i];
			nivs[i] = 0;
			goto out;
		}
		total += (size_t)nivs[i];
	}
	/* elementary boundaries: 0 and every interval's start and end + 1 */
	bnd = iour__malloc((2 * total + 1) * sizeof(*bnd));
	if (!bnd)
		goto nomem;
	bnd[nb++] = 0;
	for (i = 0; i < n; i++)
		for (j = 0; j < (size_t)nivs[i]; j++) {
			bnd[nb++] = ivs[i][j].lo;
			if (ivs[i][j].hi < L.maxv)
				bnd[nb++] = ivs[i][j].hi + 1;
		}
	qsort(bnd, nb, sizeof(*bnd), cmp_u64);
	j = 0;
	for (i = 0; i < nb; i++)
		if (!j || bnd[j - 1] != bnd[i])
			bnd[j++] = bnd[i];
	nb = j;
	tgt = iour__malloc(nb * sizeof(*tgt));
	if (!tgt)
		goto nomem;
	for (i = 0; i < nb; i++)
		tgt[i] = rest;
	/* paint last rule first so that earlier rules win */
	for (i = n; i-- > 0;) {
		uint32_t leaf = cc_leaf(rules[i].verdict);

		for (j = 0; j < (size_t)nivs[i]; j++) {
			size_t lo = 0, hi = nb; /* first boundary >= ivs.lo */

			while (lo < hi) {
				size_t mid = (lo + hi) / 2;

				if (bnd[mid] < ivs[i][j].lo)
					lo = mid + 1;
				else
					hi = mid;
			}
			for (size_t k = lo; k < nb && bnd[k] <= ivs[i][j].hi; k++)
				tgt[k] = leaf;
		}
	}
	for (i = 0; i < nb; i++) {
		uint64_t hi = i + 1 < nb ? bnd[i + 1] - 1 : L.maxv;

		if (segv_push(&vs, bnd[i], hi, tgt[i]))
			goto nomem;
	}
	node = map_field(c, &L, &vs);
	if (L.guard)
		node = mk_test(c, WX(IOUR_CTX_OFF_CONNECT_FAMILY, WX_RAW, 0), J_EQ, L.guard, node,
			       rest);
	goto out;
nomem:
	c->err = -ENOMEM;
out:
	if (ivs)
		for (i = 0; i < n; i++)
			iour__free(ivs[i]);
	iour__free(ivs);
	iour__free(nivs);
	iour__free(bnd);
	iour__free(tgt);
	segv_free(&vs);
	return node;
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
	uint32_t node;

	c->view = VIEW_M6;
	node = compile_rules(c, of, dflt);
	c->view = VIEW_PLAIN;
	node = mk_test(c, WX(IOUR_CTX_OFF_CONNECT_ADDR + 8, WX_RAW, 0), J_EQ, load32(ffff, c->be),
		       node, plain);
	node = mk_test(c, WX(IOUR_CTX_OFF_CONNECT_ADDR + 4, WX_RAW, 0), J_EQ, 0, node, plain);
	node = mk_test(c, WX(IOUR_CTX_OFF_CONNECT_ADDR, WX_RAW, 0), J_EQ, 0, node, plain);
	return mk_test(c, WX(IOUR_CTX_OFF_CONNECT_FAMILY, WX_RAW, 0), J_EQ, AF_INET6, node, plain);
}

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
		size_t ncap = c->kcap ? c->kcap * 2 : 256;
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
		uint32_t ncap = c->capmemo ? c->capmemo * 2 : 1024;
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
		size_t ncap = c->mar_cap ? c->mar_cap * 2 : 1024;
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
		res = mk_test(c, nd.wx, nd.jop, nd.k, t2, f2);
	}
	c->depth--;
	if (!c->err && !c->aborted && c->shared[n] && memo_add(c, n, fb, fn, res))
		c->err = -ENOMEM;
	c->ksp = save;
	return res;
}

uint32_t iour__spec_budget_override;

static uint32_t specialise(struct cc *c, uint32_t root)
{
	uint32_t r;

	c->budget = iour__spec_budget_override ? iour__spec_budget_override : SPEC_BUDGET;
	c->ksp = 0;
	c->norig = c->nnodes;
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

/* ---- emission ------------------------------------------------------------- */
struct sinsn {
	uint16_t code;
	uint8_t is_jmp; /* 1: conditional (jt/jf are labels); 2: JA (jt) */
	uint8_t tramp;  /* inserted trampoline */
	uint32_t k;
	uint32_t jt, jf; /* label ids */
	uint32_t uid;
};

struct emitter {
	struct sinsn *v;
	size_t n, cap;
	uint32_t *lab_uid; /* label id -> uid of the insn it marks */
	size_t nlab, caplab;
	uint32_t next_uid;
	uint32_t ntramp;
};

static int em_push(struct emitter *e, uint16_t code, uint32_t k, uint8_t is_jmp, uint32_t jt,
		   uint32_t jf)
{
	struct sinsn *s;

	if (e->n == e->cap) {
		size_t ncap = e->cap ? e->cap * 2 : 64;
		struct sinsn *nv = iour__realloc(e->v, ncap * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		e->v = nv;
		e->cap = ncap;
	}
	s = &e->v[e->n++];
	memset(s, 0, sizeof(*s));
	s->code = code;
	s->k = k;
	s->is_jmp = is_jmp;
	s->jt = jt;
	s->jf = jf;
	s->uid = e->next_uid++;
	return 0;
}

static int em_newlabel(struct emitter *e, uint32_t uid, uint32_t *id)
{
	if (e->nlab == e->caplab) {
		size_t ncap = e->caplab ? e->caplab * 2 : 64;
		uint32_t *nl = iour__realloc(e->lab_uid, ncap * sizeof(*nl));

		if (!nl)
			return -ENOMEM;
		e->lab_uid = nl;
		e->caplab = ncap;
	}
	e->lab_uid[e->nlab] = uid;
	*id = (uint32_t)e->nlab++;
	return 0;
}

/* Emit the instructions computing wx (full: from scratch; else from the
 * raw word already in A). */
static int em_xform(struct emitter *e, uint64_t wx, bool full)
{
	uint32_t off = WX_OFF(wx);
	int rc = 0;

	if (full)
		rc |= em_push(e, C_LD_ABS, off, 0, 0, 0);
	switch (WX_KIND(wx)) {
	case WX_AND:
		rc |= em_push(e, C_AND_K, WX_K(wx), 0, 0, 0);
		break;
	case WX_BSWAP16:
		/* w < 2^16: (w * 0x10001) >> 8 holds both bytes swapped */
		rc |= em_push(e, C_MUL_K, 0x10001, 0, 0, 0);
		rc |= em_push(e, C_RSH_K, 8, 0, 0, 0);
		rc |= em_push(e, C_AND_K, 0xffff, 0, 0, 0);
		break;
	case WX_BSWAP32:
		rc |= em_push(e, C_LSH_K, 24, 0, 0, 0);
		rc |= em_push(e, C_TAX, 0, 0, 0, 0);
		rc |= em_push(e, C_LD_ABS, off, 0, 0, 0);
		rc |= em_push(e, C_AND_K, 0xff00, 0, 0, 0);
		rc |= em_push(e, C_LSH_K, 8, 0, 0, 0);
		rc |= em_push(e, C_OR_X, 0, 0, 0, 0);
		rc |= em_push(e, C_TAX, 0, 0, 0, 0);
		rc |= em_push(e, C_LD_ABS, off, 0, 0, 0);
		rc |= em_push(e, C_RSH_K, 8, 0, 0, 0);
		rc |= em_push(e, C_AND_K, 0xff00, 0, 0, 0);
		rc |= em_push(e, C_OR_X, 0, 0, 0, 0);
		rc |= em_push(e, C_TAX, 0, 0, 0, 0);
		rc |= em_push(e, C_LD_ABS, off, 0, 0, 0);
		rc |= em_push(e, C_RSH_K, 24, 0, 0, 0);
		rc |= em_push(e, C_OR_X, 0, 0, 0, 0);
		break;
	}
	return rc ? -ENOMEM : 0;
}

/* Reverse post-order of the nodes reachable from root. */
static int rpo_order(struct cc *c, uint32_t root, uint32_t **order, uint32_t *count,
		     uint32_t *index)
{
	uint32_t *stack = iour__malloc((2 * (size_t)c->nnodes + 2) * sizeof(uint32_t));
	uint8_t *state = iour__calloc(c->nnodes, 1);
	uint32_t *post = iour__malloc((size_t)c->nnodes * sizeof(uint32_t));
	uint32_t sp = 0, np = 0;

	if (!stack || !state || !post) {
		iour__free(stack);
		iour__free(state);
		iour__free(post);
		return -ENOMEM;
	}
	stack[sp++] = root;
	while (sp) {
		uint32_t n = stack[sp - 1];

		if (state[n] == 0) {
			state[n] = 1;
			if (!is_leaf(c, n)) {
				/* visit t first, then f: f ends up right after n */
				if (!state[c->nodes[n].f])
					stack[sp++] = c->nodes[n].f;
				if (!state[c->nodes[n].t])
					stack[sp++] = c->nodes[n].t;
			}
		} else {
			sp--;
			if (state[n] == 1) {
				state[n] = 2;
				post[np++] = n;
			}
		}
	}
	for (uint32_t i = 0; i < np; i++)
		stack[i] = post[np - 1 - i];
	for (uint32_t i = 0; i < np; i++)
		index[stack[i]] = i;
	iour__free(state);
	iour__free(post);
	*order = stack;
	*count = np;
	return 0;
}

/* Label of the entry point of `to` for a jump from a block that leaves
 * the value of `from_wx` in A. */
static uint32_t edge_label(const struct cc *c, const uint32_t *index, uint64_t from_wx, uint32_t to)
{
	const struct node *n = &c->nodes[to];
	uint32_t base = 3 * index[to];

	if (n->jop == J_LEAF || from_wx == n->wx)
		return base + 2;
	if (WX_KIND(n->wx) != WX_RAW && from_wx == WX(WX_OFF(n->wx), WX_RAW, 0))
		return base + 1;
	return base;
}

/* Position of every uid in the current instruction vector. */
static int em_positions(const struct emitter *e, uint32_t **pos)
{
	uint32_t *p = iour__malloc((e->next_uid ? e->next_uid : 1) * sizeof(*p));

	if (!p)
		return -ENOMEM;
	for (size_t i = 0; i < e->n; i++)
		p[e->v[i].uid] = (uint32_t)i;
	*pos = p;
	return 0;
}

/*
 * Make every conditional jump reach: a jump skipping more than 255
 * instructions is redirected to a RET with the same value within reach,
 * or to a JA (or RET copy) inserted right after it.  Repeats until
 * stable; fails when the program outgrows max_insns.
 */
static int em_fix_jumps(struct emitter *e, uint32_t max_insns)
{
	for (int round = 0; round < 64; round++) {
		uint32_t *pos;
		size_t *after = NULL, nafter = 0;
		struct sinsn *extra = NULL;
		bool changed = false;
		uint32_t *nret = NULL; /* nearest RET #0 / RET #1 at or after i */
		int rc = em_positions(e, &pos);

		if (rc)
			return rc;
		nret = iour__malloc(2 * (e->n + 1) * sizeof(*nret));
		if (!nret) {
			iour__free(pos);
			return -ENOMEM;
		}
		nret[2 * e->n] = nret[2 * e->n + 1] = UINT32_MAX;
		for (size_t i = e->n; i-- > 0;) {
			const struct sinsn *q = &e->v[i];

			nret[2 * i] =
				q->code == C_RET_K && q->k == 0 ? (uint32_t)i : nret[2 * i + 2];
			nret[2 * i + 1] =
				q->code == C_RET_K && q->k == 1 ? (uint32_t)i : nret[2 * i + 3];
		}
		for (size_t i = e->n; i-- > 0;) {
			struct sinsn *s = &e->v[i];

			if (s->is_jmp != 1)
				continue;
			for (int which = 0; which < 2; which++) {
				uint32_t *lab = which ? &s->jf : &s->jt;
				uint32_t tpos = pos[e->lab_uid[*lab]];
				const struct sinsn *tgt = &e->v[tpos];
				size_t lim = i + 256 < e->n ? i + 256 : e->n - 1;
				size_t j;
				uint32_t nl;

				if (tpos - i - 1 <= 255)
					continue;
				changed = true;
				/* an equivalent instruction within reach? */
				if (tgt->code == C_RET_K && tgt->k <= 1) {
					j = nret[2 * (i + 1) + tgt->k];
					if (j == UINT32_MAX)
						j = lim + 1;
				} else {
					for (j = i + 1; j <= lim; j++) {
						const struct sinsn *q = &e->v[j];

						if (tgt->code == C_RET_K && q->code == C_RET_K &&
						    q->k == tgt->k)
							break;
						if (q->tramp && q->is_jmp == 2 &&
						    pos[e->lab_uid[q->jt]] == tpos)
							break;
					}
				}
				if (j <= lim) {
					if (em_newlabel(e, e->v[j].uid, &nl))
						goto nomem;
					s = &e->v[i];
					lab = which ? &s->jf : &s->jt;
					*lab = nl;
					continue;
				}
				/* or one planned in this round a little further on
				 * (the margin absorbs the insertions in between;
				 * the next round re-checks every distance) */
				for (j = nafter; j-- > 0;) {
					const struct sinsn *q = &extra[j];

					if (after[j] - i + (nafter - j) > 200)
						break;
					if ((tgt->code == C_RET_K && q->code == C_RET_K &&
					     q->k == tgt->k) ||
					    (q->is_jmp == 2 && pos[e->lab_uid[q->jt]] == tpos))
						break;
				}
				if (j != (size_t)-1 && nafter &&
				    after[j] - i + (nafter - j) <= 200) {
					if (em_newlabel(e, extra[j].uid, &nl))
						goto nomem;
					s = &e->v[i];
					lab = which ? &s->jf : &s->jt;
					*lab = nl;
					continue;
				}
				/* insert a trampoline after i */
				{
					size_t *na =
						iour__realloc(after, (nafter + 1) * sizeof(*na));
					struct sinsn *ne =
						iour__realloc(extra, (nafter + 1) * sizeof(*ne));
					struct sinsn *t;

					if (na)
						after = na;
					if (ne)
						extra = ne;
					if (!na || !ne)
						goto nomem;
					t = &extra[nafter];
					memset(t, 0, sizeof(*t));
					t->tramp = 1;
					t->uid = e->next_uid++;
					if (tgt->code == C_RET_K) {
						t->code = C_RET_K;
						t->k = tgt->k;
					} else {
						t->code = C_JA;
						t->is_jmp = 2;
						/* never chain trampolines */
						t->jt = tgt->is_jmp == 2 ? tgt->jt : *lab;
					}
					after[nafter++] = i;
					if (em_newlabel(e, t->uid, &nl))
						goto nomem;
					s = &e->v[i];
					lab = which ? &s->jf : &s->jt;
					*lab = nl;
					e->ntramp++;
				}
			}
		}
		iour__free(pos);
		iour__free(nret);
		if (nafter) {
			/* `after` is in descending order of i; rebuild the vector */
			size_t nn = e->n + nafter, w = nn, a = 0;
			struct sinsn *nv;

			if (nn > max_insns) {
				iour__free(after);
				iour__free(extra);
				return -IOUR_ERRNO__PROG_TOO_LARGE;
			}
			nv = iour__malloc(nn * sizeof(*nv));
			if (!nv) {
				iour__free(after);
				iour__free(extra);
				return -ENOMEM;
			}
			for (size_t i = e->n; i-- > 0;) {
				/* trampolines planned after i, in plan order */
				size_t first = a;

				while (a < nafter && after[a] == i)
					a++;
				for (size_t q = a; q-- > first;)
					nv[--w] = extra[q];
				nv[--w] = e->v[i];
			}
			iour__free(e->v);
			e->v = nv;
			e->n = e->cap = nn;
		}
		iour__free(after);
		iour__free(extra);
		if (!changed)
			return 0;
		continue;
nomem:
		iour__free(pos);
		iour__free(nret);
		iour__free(after);
		iour__free(extra);
		return -ENOMEM;
	}
	return -IOUR_ERRNO__INTERNAL;
}

/* Lay out and encode the graph under root into a program. */
static int emit(struct cc *c, uint32_t root, uint32_t opcode, uint32_t max_insns,
		struct iour_prog **out)
{
	struct emitter e = { 0 };
	uint32_t *order = NULL, *index = NULL, *pos = NULL, count = 0;
	uint8_t *need = NULL; /* bit 0: full load, bit 1: transform from raw */
	struct iour_prog *p = NULL;
	bool payload = false;
	int rc;

	index = iour__malloc(c->nnodes * sizeof(*index));
	if (!index)
		return -ENOMEM;
	rc = rpo_order(c, root, &order, &count, index);
	if (rc)
		goto out;
	need = iour__calloc(count + 1, 1); /* + 1: never a 0-byte allocation */
	if (!need) {
		rc = -ENOMEM;
		goto out;
	}
	need[0] |= 1; /* A holds nothing useful at the start */
	for (uint32_t i = 0; i < count; i++) {
		const struct node *n = &c->nodes[order[i]];

		if (n->jop == J_LEAF)
			continue;
		for (int w = 0; w < 2; w++) {
			uint32_t ch = w ? n->f : n->t;
			uint32_t l = edge_label(c, index, n->wx, ch) % 3;

			if (l == 0)
				need[index[ch]] |= 1;
			else if (l == 1)
				need[index[ch]] |= 2;
		}
	}
	/* three labels per node: full load, transform, test */
	for (uint32_t i = 0; i < 3 * count; i++) {
		uint32_t id;

		if (em_newlabel(&e, 0, &id)) {
			rc = -ENOMEM;
			goto out;
		}
	}
	for (size_t i = 0; i < count && !rc; i++) {
		const struct node *n = &c->nodes[order[i]];

		e.lab_uid[3 * i] = e.next_uid;
		if (n->jop == J_LEAF) {
			e.lab_uid[3 * i + 1] = e.lab_uid[3 * i + 2] = e.next_uid;
			rc = em_push(&e, C_RET_K, n->t == IOUR_ALLOW ? 1 : 0, 0, 0, 0);
			continue;
		}
		if (WX_OFF(n->wx) >= IOUR_CTX_OFF_PDU)
			payload = true;
		if (need[i] & 1)
			rc = em_push(&e, C_LD_ABS, WX_OFF(n->wx), 0, 0, 0);
		e.lab_uid[3 * i + 1] = e.next_uid;
		if (!rc && (need[i] & 3) && WX_KIND(n->wx) != WX_RAW)
			rc = em_xform(&e, n->wx, false);
		e.lab_uid[3 * i + 2] = e.next_uid;
		if (!rc)
			rc = em_push(&e, jop_code[n->jop], n->k, 1,
				     edge_label(c, index, n->wx, n->t),
				     edge_label(c, index, n->wx, n->f));
	}
	if (rc)
		goto out;
	if (e.n > max_insns) {
		rc = -IOUR_ERRNO__PROG_TOO_LARGE;
		goto out;
	}
	rc = em_fix_jumps(&e, max_insns);
	if (rc)
		goto out;
	rc = em_positions(&e, &pos);
	if (rc)
		goto out;
	p = iour__malloc(sizeof(*p) + e.n * sizeof(struct iour_insn));
	if (!p) {
		rc = -ENOMEM;
		goto out;
	}
	memset(p, 0, sizeof(*p));
	p->opcode = opcode;
	p->cnt = e.n;
	p->kind = IOUR_PROG_FILTER;
	if (count == 1 && is_leaf(c, root))
		p->kind = c->nodes[root].t == IOUR_ALLOW ? IOUR_PROG_ALWAYS_ALLOW :
							   IOUR_PROG_ALWAYS_DENY;
	p->pdu_size = payload ? iour__opcode_pdu_size(opcode) : 0;
	for (size_t i = 0; i < e.n; i++) {
		const struct sinsn *s = &e.v[i];
		struct iour_insn *o = &p->insns[i];

		o->code = s->code;
		o->k = s->k;
		o->jt = o->jf = 0;
		if (s->is_jmp == 1) {
			o->jt = (uint8_t)(pos[e.lab_uid[s->jt]] - i - 1);
			o->jf = (uint8_t)(pos[e.lab_uid[s->jf]] - i - 1);
		} else if (s->is_jmp == 2) {
			o->k = pos[e.lab_uid[s->jt]] - (uint32_t)i - 1;
		}
	}
	*out = p;
	rc = 0;
out:
	iour__free(pos);
	iour__free(order);
	iour__free(index);
	iour__free(need);
	iour__free(e.v);
	iour__free(e.lab_uid);
	if (!rc)
		c->ntramp = e.ntramp;
	return rc;
}

/* ---- entry points --------------------------------------------------------- */
static _Thread_local struct iour__compile_stats last_stats;

void iour__compile_last_stats(struct iour__compile_stats *st)
{
	*st = last_stats;
}

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

int iour__filter_compile_order(const struct iour_filter *f, uint32_t opcode, bool big_endian,
			       uint32_t max_insns, struct iour_prog **out)
{
	const struct iour__opfilter *of;
	struct cc c;
	uint32_t root, sroot, dflt;
	int rc;

	memset(&last_stats, 0, sizeof(last_stats));
	if (opcode >= IOUR__NOPCODES)
		return -EINVAL;
	of = f->ops[opcode];
	if (!of)
		return -ENOENT;
	if (of->raw) /* max_insns holds for a raw program too */
		return of->raw_cnt > max_insns ? -IOUR_ERRNO__PROG_TOO_LARGE :
						 prog_from_raw(of, opcode, out);
	rc = cc_init(&c, big_endian);
	if (rc) {
		cc_fini(&c);
		return rc;
	}
	dflt = of->has_default ? of->default_verdict : f->default_verdict;
	root = compile_rules(&c, of, dflt);
	if (!c.err && opcode == KIO_OP_CONNECT && !(f->flags & IOUR_FILTER_ADDR4_LITERAL) &&
	    rules_read_ipv4(of))
		root = compile_mapped(&c, of, dflt, root);
	if (c.err) {
		rc = c.err;
		goto out;
	}
	last_stats.ir_nodes = c.nnodes - 2;
	sroot = specialise(&c, root);
	if (c.err) {
		rc = c.err;
		goto out;
	}
	last_stats.spec_aborted = c.aborted;
	last_stats.spec_nodes = c.nnodes - 2;
	rc = emit(&c, sroot, opcode, max_insns, out);
	if (rc == -IOUR_ERRNO__PROG_TOO_LARGE && sroot != root)
		rc = emit(&c, root, opcode, max_insns, out);
	if (!rc)
		last_stats.trampolines = c.ntramp;
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
	rc = iour__filter_compile_order(f, opcode, __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__,
					max_insns, out);
	return iour__err_public(rc, allowed);
}
