/* SPDX-License-Identifier: MIT */
/*
 * Internal contract between the restriction-set builder (ruleset.c) and its
 * users (ring apply, probe-driven planner).  Not installed.
 */
#ifndef IOUR_LIB_RULESET_INTERNAL_H
#define IOUR_LIB_RULESET_INTERNAL_H

#include "base/internal.h"

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
 * omission, see doc/kernel.md 2.4).  Only opcodes below
 * IOUR_OP__COUNT / IOUR_REGISTER__COUNT are ever set in the bitmaps.
 */
struct iour_ruleset {
	struct iour__bitmap sqe_ops; /* allowed request opcodes */
	struct iour__bitmap reg_ops; /* allowed register opcodes */
	bool sqe_restricted;         /* SQE opcodes are an allow-list */
	bool reg_restricted;         /* register opcodes are an allow-list */
	bool flags_decided;          /* set_sqe_flags() was called */
	uint8_t flags_allowed;       /* IOSQE_* allowed, including the required */
	uint8_t flags_required;      /* IOSQE_* required on every SQE */
};

/* What the running (or targeted) kernel accepts and how it enforces. */
struct iour__kernel_limits {
	uint32_t op_last;  /* IORING_OP_LAST of the kernel, 1..256 */
	uint32_t reg_last; /* IORING_REGISTER_LAST of the kernel, 13..256 */
	bool split;        /* 7.0+ semantics: SQE and register gates separate */
};

/* What was clamped away because the kernel does not know it. */
struct iour__clamp {
	struct iour__bitmap sqe_ops; /* allowed ops >= op_last, dropped */
	struct iour__bitmap reg_ops; /* allowed register ops >= reg_last, dropped */
	uint32_t n_sqe, n_reg;
};

/* Upper bound of entries iour__ruleset_entries() can produce (it produces
 * at most 256 + 2 + 256). */
#define IOUR__MAX_ENTRIES (4 + 256 + 256)

/*
 * Translate a ruleset into the kernel's restriction entries for `lim`, such
 * that the kernel enforces exactly the ruleset's meaning.  The SQE side is
 * "gated" when its opcodes are an allow-list or its flags are anything but
 * (allowed 0x7f, required 0); the register side when it is an allow-list.
 * - entries naming ops the kernel does not know (>= op_last / reg_last) are
 *   dropped, and recorded in *clamp when it is not NULL;
 * - pre-7.0 (coupled gates: registering anything gates both sides): both
 *   sides are always emitted; an unrestricted side is listed in full up to
 *   the kernel's limit, with SQE_FLAGS_ALLOWED 0x7f for an unrestricted
 *   SQE side;
 * - 7.0+ (split gates: a side is gated iff it has an entry): only gated
 *   sides are emitted; a register allow-list that is empty (as built, or
 *   after clamping) becomes the sentinel REGISTER_OP ENABLE_RINGS (on an
 *   enabled ring that op fails with -EBADFD anyway); an SQE allow-list
 *   that is empty is gated by its SQE_FLAGS_ALLOWED entry alone;
 * - an SQE_FLAGS_ALLOWED entry is present whenever the SQE side is
 *   emitted; SQE_FLAGS_REQUIRED only when a flag is required;
 * - the result is never empty (nr == 0 would deny everything): with split
 *   gates, a ruleset that restricts nothing is emitted as the full
 *   register-op list, which gates nothing the kernel has.
 * Order: SQE_OP ascending, SQE_FLAGS_ALLOWED, [SQE_FLAGS_REQUIRED],
 * REGISTER_OP ascending.  resv/resv2 are zero.
 * `out` must hold IOUR__MAX_ENTRIES entries.  Returns the number of entries
 * (>= 1) or -errno: -EINVAL on a NULL argument or a limit out of range,
 * -ENOMSG when a request opcode is allowed but the SQE flags were never
 * decided.  `*clamp` is written only on success.
 */
/*
 * The errors of iour__ruleset_entries() that do not depend on the kernel:
 * -EINVAL for a NULL set, -ENOMSG when a request opcode is allowed but the
 * SQE flags were never decided; else 0.  No entry is built.
 */
IOUR_INTERNAL int iour__ruleset_check(const struct iour_ruleset *rs);

IOUR_INTERNAL int iour__ruleset_entries(const struct iour_ruleset *rs,
					const struct iour__kernel_limits *lim,
					struct kio_restriction *out, struct iour__clamp *clamp);

#endif /* IOUR_LIB_RULESET_INTERNAL_H */
