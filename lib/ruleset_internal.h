/* SPDX-License-Identifier: MIT */
/*
 * Internal contract between the restriction-set builder (ruleset.c) and its
 * users (ring apply, probe-driven planner).  Not installed.
 */
#ifndef IOUR_LIB_RULESET_INTERNAL_H
#define IOUR_LIB_RULESET_INTERNAL_H

#include "internal.h"

/* Bitmap over 0..255 (SQE and register opcodes are 8-bit in a restriction). */
struct iour__bitmap {
	uint64_t w[4];
};

static inline void iour__bm_set(struct iour__bitmap *b, unsigned int n)
{
	b->w[(n >> 6) & 3] |= 1ULL << (n & 63);
}
static inline bool iour__bm_test(const struct iour__bitmap *b, unsigned int n)
{
	return n < 256 && (b->w[n >> 6] >> (n & 63)) & 1;
}

/*
 * The builder's state.  Each side (SQE opcodes, register opcodes) is either
 * unrestricted or an allow-list; the SQE flags are either not yet decided
 * or explicitly set (the library never lets "no flag allowed" happen by
 * omission, see kernel-interface.md section 2.4).
 */
struct iour_ruleset {
	struct iour__bitmap sqe_ops; /* allowed request opcodes */
	struct iour__bitmap reg_ops; /* allowed register opcodes */
	bool sqe_restricted;         /* SQE opcodes are an allow-list */
	bool reg_restricted;         /* register opcodes are an allow-list */
	bool flags_decided;          /* set_sqe_flags() was called */
	uint8_t flags_allowed;       /* IOSQE_* allowed (beyond required) */
	uint8_t flags_required;      /* IOSQE_* required on every SQE */
};

/* What the running (or targeted) kernel accepts and how it enforces. */
struct iour__kernel_limits {
	uint32_t op_last;  /* IORING_OP_LAST of the kernel */
	uint32_t reg_last; /* IORING_REGISTER_LAST of the kernel */
	bool split;        /* 7.0+ semantics: SQE and register gates separate */
};

/* What was clamped away because the kernel does not know it. */
struct iour__clamp {
	struct iour__bitmap sqe_ops; /* allowed ops >= op_last, dropped */
	struct iour__bitmap reg_ops; /* allowed register ops >= reg_last, dropped */
	uint32_t n_sqe, n_reg;
};

/* Upper bound of entries iour__ruleset_entries() can produce. */
#define IOUR__MAX_ENTRIES (4 + 256 + 256)

/*
 * Translate a ruleset into the kernel's restriction entries for `lim`, such
 * that the kernel enforces exactly the ruleset's meaning:
 * - entries naming ops the kernel does not know are dropped (and recorded in
 *   *clamp when it is not NULL);
 * - pre-7.0 (coupled gates): an unrestricted side is listed in full up to
 *   the kernel's limit; a restricted SQE side with unrestricted flags...
 * - 7.0+ (split gates): a restricted register side with an empty list gets
 *   the sentinel IORING_REGISTER_ENABLE_RINGS entry;
 * - an SQE_FLAGS_ALLOWED entry is always present when SQE ops are restricted.
 * `out` must hold IOUR__MAX_ENTRIES entries.  Returns the number of entries
 * (>= 0) or -errno: -EINVAL on a NULL argument, -ENOMSG when SQE opcodes are
 * restricted but the SQE flags were never decided.
 */
IOUR_INTERNAL int iour__ruleset_entries(const struct iour_ruleset *rs,
					const struct iour__kernel_limits *lim,
					struct kio_restriction *out, struct iour__clamp *clamp);

#endif /* IOUR_LIB_RULESET_INTERNAL_H */
