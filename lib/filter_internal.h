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

#include "internal.h"
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

struct iour__rule {
	uint32_t verdict;
	uint32_t ncmps;
	struct iour__cmp *cmps;
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

struct iour_filter {
	uint32_t default_verdict;
	uint32_t flags; /* IOUR_FILTER_* of struct iour_filter_opts */
	struct iour__opfilter *ops[IOUR__NOPCODES];
};

struct iour_prog {
	uint32_t opcode;
	uint32_t kind;
	uint32_t pdu_size;
	uint32_t pad;
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
};

/* What one compile did (tests and benchmarks). */
struct iour__compile_stats {
	uint32_t ir_nodes;     /* decision nodes before path specialisation */
	uint32_t spec_nodes;   /* decision nodes after it */
	uint32_t spec_aborted; /* 1 if specialisation hit its budget */
	uint32_t trampolines;  /* JA / RET copies inserted for long jumps */
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

#endif /* IOUR_LIB_FILTER_INTERNAL_H */
