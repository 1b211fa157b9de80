/* SPDX-License-Identifier: MIT */
/*
 * Internal contract between the filter builder (filter.c) and the cBPF
 * compiler (filter_compile.c and its stages, see filter_ir.h).  Not
 * installed.
 *
 * The builder stores rules in a normalised form: each comparison is
 * checked against its field's width and meaning, sets are sorted and
 * deduplicated, and unused operands are zero.  The compiler may therefore
 * trust every value it finds here.
 */
#ifndef IOUR_LIB_FILTER_INTERNAL_H
#define IOUR_LIB_FILTER_INTERNAL_H

#include "base/internal.h"
#include "iouring_restrict/cbpf.h"
#include "iouring_restrict/filter.h"

/* A normalised comparison. */
struct iour__cmp {
	uint32_t field; /* enum iour_field */
	uint32_t op;    /* enum iour_cmp_op */
	uint64_t value;
	uint64_t arg;
	uint64_t *set; /* sorted ascending, no duplicates, owned */
	size_t set_len;
	uint8_t addr6[16]; /* network order; bits beyond a prefix cleared */
};

/* A rule of the builder (filter.c) keeps a single comparison in `one`,
 * cmps pointing at it, and allocates cmps only for two or more.  A copy
 * made elsewhere (the stacker's scratch rules, filter_stack.c) may point
 * cmps at any array that outlives it. */
struct iour__rule {
	uint32_t verdict;
	uint32_t ncmps;
	struct iour__cmp *cmps;
	struct iour__cmp one;
};

/* What one opcode holds.  Absent (NULL) = not filtered. */
struct iour__opfilter {
	struct iour__rule *rules;
	uint32_t nrules;
	uint32_t cap;
	bool has_default;
	uint32_t default_verdict;
	struct iour_insn *raw; /* raw program, mutually exclusive with rules */
	size_t raw_cnt;
};

/* The opcodes are kept in pages of IOUR__OP_PAGE slots, a page allocated
 * on the first use of one of its opcodes: a filter of a few opcodes (the
 * usual case) costs one small page, not a slot for every opcode. */
#define IOUR__OP_PAGE 64U
#define IOUR__OP_PAGES (IOUR__NOPCODES / IOUR__OP_PAGE)
_Static_assert(IOUR__NOPCODES % IOUR__OP_PAGE == 0, "opcode pages must tile the opcodes");

struct iour_filter {
	uint32_t default_verdict;
	uint32_t flags; /* IOUR_FILTER_* of struct iour_filter_opts */
	/* page[op / IOUR__OP_PAGE][op % IOUR__OP_PAGE]; NULL: no opcode of
	 * the page is filtered.  Read through iour__filter_op(). */
	struct iour__opfilter **page[IOUR__OP_PAGES];
};

/* What the filter holds for an opcode (< IOUR__NOPCODES, which the caller
 * checks); NULL when the opcode is not filtered. */
static inline struct iour__opfilter *iour__filter_op(const struct iour_filter *f, uint32_t opcode)
{
	struct iour__opfilter *const *pg = f->page[opcode / IOUR__OP_PAGE];

	return pg ? pg[opcode % IOUR__OP_PAGE] : NULL;
}

struct iour_prog {
	uint32_t opcode;
	uint32_t kind;
	uint32_t pdu_size;
	uint32_t pad;
	/* The next program stacked for the same opcode (a policy's split
	 * deny-list, iour__filter_compile_stack()); NULL for a program the
	 * public compile returns.  iour_prog__free() releases the chain. */
	struct iour_prog *next;
	size_t cnt;
	struct iour_insn insns[];
};

/* Description of a typed field as the compiler sees it. */
struct iour__field_info {
	uint32_t field;
	uint8_t width;   /* 32 or 64 bits (128 for the IPv6 address) */
	uint64_t valid;  /* bits a value may have */
	bool bit_valued; /* values are bit sets (checked as subsets) */
};

/* Payload size (K) the kernel uses for an opcode; 0 for none. */
IOUR_INTERNAL uint32_t iour__opcode_pdu_size(uint32_t opcode);

/* Is `field` defined for `opcode`?  (user_data/sqe_flags: always.) */
IOUR_INTERNAL bool iour__field_for_opcode(uint32_t field, uint32_t opcode);

/* Largest value a field may hold (IPv6: 0; use the prefix rules). */
IOUR_INTERNAL uint64_t iour__field_valid_bits(uint32_t field);

/* How to compile.  The public iour_filter__compile() uses the host's byte
 * order and the default budget; tests also use the other byte order
 * (running big-endian programs in the kernel's engine on big-endian
 * contexts) and a budget of 1. */
struct iour__compile_cfg {
	bool big_endian;    /* byte order of the target */
	uint32_t max_insns; /* 1..4096 */
	/* Path-specialisation budget: 0 = the default; 1 makes every compile
	 * fall back to the unspecialised graph. */
	uint32_t spec_budget;
	/* Stacked programs only (filter_stack.c): the opcode's rules are
	 * P, D, S where D = rules[range_d_lo, range_d_hi) are one-comparison
	 * CONNECT IPv4-address rules on points whose loaded words all lie in
	 * [range_lo, range_hi]; the program first sends requests that no
	 * rule of D can match to the graph of P, S alone
	 * (filter_lower.c, range_precheck()).  Off when range_d_hi == 0. */
	uint32_t range_d_lo, range_d_hi;
	uint32_t range_lo, range_hi;
	/* Nonzero: the pre-check's cheap sides mirrored (range_precheck());
	 * the stacker sets it on every other program. */
	uint32_t range_mirror;
	/* Longest chain of equality tests on one value in an interval map
	 * (0: the default, 3); stacked programs use longer ones. */
	uint32_t chain;
	/* Tests: specialise a graph that is one interval map with leaf
	 * targets too, which the compiler otherwise skips as pointless
	 * (filter_compile.c, spec_emit()). */
	bool spec_always;
};

/* What one compile did (tests and benchmarks). */
struct iour__compile_stats {
	uint32_t ir_nodes;     /* decision nodes before path specialisation */
	uint32_t spec_nodes;   /* decision nodes after it */
	uint32_t spec_aborted; /* 1 if specialisation hit its budget */
	uint32_t trampolines;  /* JA / RET copies inserted for long jumps */
	uint32_t spec_skipped; /* 1 if the graph was one interval map with leaf
				  targets, emitted without specialisation */
};

/*
 * Compile one opcode's program as cfg says.  stats may be NULL; otherwise
 * it is zeroed, then filled as far as the compile got.  Returns 0 or
 * -EINVAL, -ENOENT, -IOUR_ERRNO__PROG_TOO_LARGE, -ENOMEM.
 */
IOUR_INTERNAL int iour__filter_compile_cfg(const struct iour_filter *f, uint32_t opcode,
					   const struct iour__compile_cfg *cfg,
					   struct iour__compile_stats *stats,
					   struct iour_prog **out);

/* What a stacked compile did (tests and benchmarks). */
struct iour__stack_stats {
	uint32_t progs;      /* programs in the chain */
	uint32_t compiles;   /* program compiles it took, the whole list's included */
	uint64_t insns;      /* instructions over all of them */
	uint32_t split;      /* 1 if the rules were split */
	uint32_t deny_units; /* entries of the deny run that was split */
};

/*
 * Compile one opcode into one program, or, when that needs more than
 * cfg->max_insns instructions and the rules hold a run of deny rules, into
 * a chain of programs (linked by ->next) whose conjunction of "allow"
 * verdicts is the rule list's verdict: the kernel runs every filter of an
 * opcode and the request runs only if all allow (doc/kernel.md, 4.6).
 *
 * The rules are P, D, S: D the heaviest run of consecutive deny rules, P
 * the rules before it and S those after.  Every program is P, a part of
 * D, then S, with the opcode's default.  A request that P decides gets
 * P's verdict from every program; one that matches a deny rule of D is
 * denied by the program holding it; otherwise every program goes on to S
 * and the default, as the original does.  A one-comparison IN_SET deny
 * rule is cut into slices of its (sorted) set; the deny rules of D are
 * ordered by field and value first, which changes nothing (any of them
 * denies) and keeps each part's values adjacent, so that runs merge into
 * ranges (filter_lower.c, compile_run()).
 *
 * Not splittable, -IOUR_ERRNO__PROG_TOO_LARGE with the reason in `why`
 * (may be NULL): a raw program, rules without deny rules (an allow-list:
 * stacked filters can only narrow, so its parts would each deny what the
 * others allow), or P and S with a single deny entry already too large.
 * At most IOUR__STACK_MAX programs.  Other errors as
 * iour__filter_compile_cfg().
 */
#define IOUR__STACK_MAX 1024U
IOUR_INTERNAL int iour__filter_compile_stack(const struct iour_filter *f, uint32_t opcode,
					     const struct iour__compile_cfg *cfg,
					     struct iour__stack_stats *stats,
					     struct iour_prog **out, char *why, size_t whylen);

#endif /* IOUR_LIB_FILTER_INTERNAL_H */
