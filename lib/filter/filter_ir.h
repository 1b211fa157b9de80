/* SPDX-License-Identifier: MIT */
/*
 * The argument-filter compiler's private contract: its intermediate form
 * (word expressions, the hash-consed decision graph, the compiler state)
 * and the entry points of its three stages.  Not installed; included only
 * by the compiler's own files:
 *   filter_ir.c       the decision graph itself (hash-consing)
 *   filter_compile.c  the driver: the entry points that run the stages
 *   filter_stack.c    stacked programs: a large deny-list split in parts
 *   filter_lower.c    stage 1, one opcode's rules -> a decision graph
 *   filter_spec.c     stage 2, path specialisation of that graph
 *   filter_emit.c     stage 3, layout, encoding and jump fixing
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
 *    - CONNECT without IOUR_FILTER_ADDR4_LITERAL: requests to
 *      ::ffff:0:0/96 take a graph of their own (filter_lower.c,
 *      compile_mapped()), left out when the plain graph restricted to
 *      such requests is that very graph (hash-consed), and compiled a
 *      second way, the ::ffff: test at its leaves, when the graph is
 *      small: the driver keeps whichever program runs shorter.
 *    - Stacked programs of IPv4 points (filter_stack.c) get a range
 *      pre-check on the loaded address word (range_precheck()).
 * 2. Path specialisation.  The graph is re-walked with what each path
 *    already knows about each word expression (bounds, excluded values,
 *    known-zero and known-set bits); a test whose outcome is known is
 *    bypassed.  This removes the re-tests a rule list naturally has (the
 *    address-family guard of two address rules, a later rule re-testing a
 *    field an earlier one decided).  A budget bounds the work; hitting it
 *    keeps the unspecialised graph, which is correct, only longer.  A
 *    graph that is one interval map with leaf targets is not walked: no
 *    path of it knows an outcome (filter_compile.c, spec_emit()).
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
#ifndef IOUR_LIB_FILTER_IR_H
#define IOUR_LIB_FILTER_IR_H

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
static inline uint32_t wx_xform_len(uint64_t wx)
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
static inline uint32_t wx_max(uint64_t wx)
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

static inline uint32_t bswap32(uint32_t v)
{
	return (v >> 24) | ((v >> 8) & 0xff00) | ((v << 8) & 0xff0000) | (v << 24);
}

/* The native load of 4 bytes in the target's byte order. */
static inline uint32_t load32(const uint8_t b[4], bool be)
{
	if (be)
		return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
	return (uint32_t)b[3] << 24 | (uint32_t)b[2] << 16 | (uint32_t)b[1] << 8 | b[0];
}

/* Value of an expression for a known raw word. */
static inline uint32_t wx_eval(uint64_t wx, uint32_t w)
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

/* The compiler's state for one compile, shared by all stages. */
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
	/* CONNECT: another root of the same semantics (0: none), the driver
	 * keeps whichever program runs shorter (filter_lower.c,
	 * compile_mapped()): the one with the mapped-address check when
	 * stage 1 left it out as provably useless, or the one testing the
	 * ::ffff: prefix after the address */
	uint32_t mapped_alt;
	bool alt_wins_ties; /* keep mapped_alt when it runs as short */
	uint32_t chain;     /* longest JEQ chain in an interval map; 0: 3 */
	/* A stacked program's range pre-check is at the root: the emitter
	 * lays its tests out first (filter_emit.c, hoist_precheck()) */
	bool precheck;
	/* The last interval map the lowering built over one field whose
	 * targets are all leaves (0: none).  When it is the whole graph,
	 * path specialisation has nothing to bypass and is skipped
	 * (doc/design.md, "Where a small filter's compile time goes"). */
	uint32_t leaf_map;
};

/* A 64-bit finaliser for the graph's and the memo's hash tables. */
static inline uint64_t mix64(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 33;
	return h;
}

static inline uint32_t cc_leaf(uint32_t verdict)
{
	return verdict == IOUR_ALLOW ? LEAF_ALLOW : LEAF_DENY;
}

static inline bool is_leaf(const struct cc *c, uint32_t n)
{
	return c->nodes[n].jop == J_LEAF;
}

/* The hash-consed TEST node; t == f collapses.  On allocation failure
 * c->err is set and a leaf is returned (the caller checks c->err). */
/* Set up the compiler state `c` for a context of the given byte order;
 * 0 or -ENOMEM.  iour__fc_fini() releases it (also after a failed init). */
IOUR_INTERNAL int iour__fc_init(struct cc *c, bool be);
IOUR_INTERNAL void iour__fc_fini(struct cc *c);

IOUR_INTERNAL uint32_t iour__fc_mk_test(struct cc *c, uint64_t wx, uint8_t jop, uint32_t k,
					uint32_t t, uint32_t f);

/* Stage 1: the decision graph for one opcode's rules; returns its root
 * (c->err set on failure).  cfg may ask for a stacked program's range
 * pre-check (filter_internal.h). */
IOUR_INTERNAL uint32_t iour__fc_lower(struct cc *c, const struct iour_filter *f, uint32_t opcode,
				      const struct iour__opfilter *of,
				      const struct iour__compile_cfg *cfg);

/* Stage 2: the graph under root re-walked with path knowledge, within
 * budget steps (0: the default); returns the new root, or root itself when
 * the budget ran out (c->aborted) or memory did (c->err). */
IOUR_INTERNAL uint32_t iour__fc_specialise(struct cc *c, uint32_t root, uint32_t budget);

/* Stage 3: lay out and encode the graph under root into a program. */
IOUR_INTERNAL int iour__fc_emit(struct cc *c, uint32_t root, uint32_t opcode, uint32_t max_insns,
				struct iour_prog **out);

#endif /* IOUR_LIB_FILTER_IR_H */
