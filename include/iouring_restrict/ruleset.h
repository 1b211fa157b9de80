/* SPDX-License-Identifier: MIT */
/**
 * @file ruleset.h
 * @brief Restriction sets: the classic io_uring allow-lists of request
 *        opcodes, register opcodes and SQE flags (Linux 5.10+), and their
 *        export as the kernel's 16-byte restriction entries.
 *
 * A restriction set has two sides, each either *unrestricted* (the
 * default) or an *allow-list*:
 * - the SQE side: which request opcodes a ring accepts, and which SQE
 *   flags a request may (and must) carry;
 * - the register side: which `io_uring_register()` opcodes are allowed once
 *   the ring is enabled.
 *
 * The first iour_ruleset__allow_sqe_op() (or iour_ruleset__deny_all_sqe_ops())
 * turns the SQE side into an allow-list; likewise for the register side.
 *
 * The set means the same on every kernel.  The kernel's own entries do not:
 * - a ring with restricted opcodes and no flags entry denies every request
 *   that carries any SQE flag.  The library never lets that happen by
 *   omission: once an SQE opcode is allowed, the flags must be decided with
 *   iour_ruleset__set_sqe_flags() (0, 0 is a valid choice) or the export
 *   fails with -ENOMSG;
 * - before Linux 7.0, registering any set at all restricts *both* sides,
 *   so the export lists an unrestricted side in full; from 7.0, a side is
 *   restricted only if it has entries, so the export adds a harmless
 *   sentinel (`IORING_REGISTER_ENABLE_RINGS`) for a register allow-list
 *   that would otherwise be empty;
 * - naming an opcode the kernel does not know makes the kernel reject the
 *   whole set, so the export drops such entries ("clamping") and reports
 *   them (struct iour_clamp_report);
 * - zero entries mean "deny everything" to the kernel, so the export never
 *   produces zero entries: a set that restricts nothing is exported as a
 *   set that allows every opcode the target kernel has.
 *
 * Thread safety: a set may be read (exported, queried, duplicated) by
 * several threads at once; modifying it needs exclusive access.
 */
#ifndef IOURING_RESTRICT_RULESET_H
#define IOURING_RESTRICT_RULESET_H

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

/** @brief A restriction set (opaque). */
struct iour_ruleset;

/**
 * @brief Options of iour_ruleset__new().  FFI callers set `sz` to
 *        `sizeof(struct iour_ruleset_opts)` and zero every other byte.
 */
struct iour_ruleset_opts {
	size_t sz;      /**< sizeof(struct iour_ruleset_opts) */
	uint64_t flags; /**< reserved, must be 0 */
};
/** @brief The last field of struct iour_ruleset_opts, up to which the library reads
 *         it (the options discipline of common.h). */
#define iour_ruleset_opts__last_field flags

/**
 * @brief **iour_ruleset__new()** creates an empty restriction set: both
 *        sides unrestricted, SQE flags not decided.
 * @param opts options, or NULL for the defaults.
 * @param out receives the new set; free it with iour_ruleset__free().
 *        Untouched on failure.
 * @return 0 on success; -EINVAL if @p out is NULL, @p opts->sz is too small
 *         or @p opts->flags is not 0; -E2BIG if @p opts is larger than the
 *         library knows and an unknown byte is not zero; -ENOMEM.
 * @since 1.0
 */
IOUR_API int iour_ruleset__new(const struct iour_ruleset_opts *opts, struct iour_ruleset **out);

/**
 * @brief **iour_ruleset__free()** releases a restriction set.
 * @param rs the set, or NULL (then nothing happens).
 * @since 1.0
 */
IOUR_API void iour_ruleset__free(struct iour_ruleset *rs);

/**
 * @brief **iour_ruleset__dup()** copies a restriction set.
 * @param rs the set to copy.
 * @param out receives the independent copy; free it with
 *        iour_ruleset__free().  Untouched on failure.
 * @return 0 on success; -EINVAL if @p rs or @p out is NULL; -ENOMEM.
 * @since 1.0
 */
IOUR_API int iour_ruleset__dup(const struct iour_ruleset *rs, struct iour_ruleset **out);

/** @name Building
 *  Every builder call validates all of its input first; on failure the set
 *  is unchanged.
 *  @{ */

/**
 * @brief **iour_ruleset__allow_sqe_op()** allows a request opcode, making
 *        the SQE side an allow-list if it was unrestricted.
 *
 * Only the opcodes of the library's table (0 .. IOUR_OP__COUNT - 1) are
 * taken: the set is translated for each kernel with that table (an
 * opcode the kernel lacks is dropped and reported), and a number beyond
 * it has no row to translate with.  Policy files take raw numbers up to
 * 255 in argument-filter entries only, whose programs compare the number
 * as is; their `requestOps` lists refuse such numbers as this does.
 * @param rs the set.
 * @param op the opcode (enum iour_op).
 * @return 0 on success (also if @p op was already allowed); -EINVAL if
 *         @p rs is NULL; -ERANGE if @p op is not a request opcode the
 *         library knows (@p op >= IOUR_OP__COUNT).
 * iour_errdetail() gives the words of a refusal (the value and the limit).
 * @since 1.0
 */
IOUR_API int iour_ruleset__allow_sqe_op(struct iour_ruleset *rs, uint32_t op);

/**
 * @brief **iour_ruleset__allow_sqe_op_name()** allows a request opcode
 *        given by name, as iour_ruleset__allow_sqe_op() does.
 * @param rs the set.
 * @param name "IORING_OP_READ" or "READ", any case (see names.h).
 * @return 0 on success; -EINVAL if @p rs or @p name is NULL; -ENOENT if
 *         no request opcode has that name.
 * @since 1.0
 */
IOUR_API int iour_ruleset__allow_sqe_op_name(struct iour_ruleset *rs, const char *name);

/**
 * @brief **iour_ruleset__allow_register_op()** allows a register opcode
 *        after the ring is enabled, making the register side an
 *        allow-list if it was unrestricted.
 * @param rs the set.
 * @param op the register opcode (enum iour_register_op).
 * @return 0 on success (also if already allowed); -EINVAL if @p rs is
 *         NULL; -ERANGE if @p op is not a register opcode the library
 *         knows (@p op >= IOUR_REGISTER__COUNT).
 * iour_errdetail() gives the words of a refusal (the value and the limit).
 * @since 1.0
 */
IOUR_API int iour_ruleset__allow_register_op(struct iour_ruleset *rs, uint32_t op);

/**
 * @brief **iour_ruleset__allow_register_op_name()** allows a register
 *        opcode given by name, as iour_ruleset__allow_register_op() does.
 * @param rs the set.
 * @param name "IORING_REGISTER_BUFFERS", "REGISTER_BUFFERS" or "BUFFERS",
 *        any case (see names.h).
 * @return 0 on success; -EINVAL if @p rs or @p name is NULL; -ENOENT if
 *         no register opcode has that name.
 * @since 1.0
 */
IOUR_API int iour_ruleset__allow_register_op_name(struct iour_ruleset *rs, const char *name);

/**
 * @brief **iour_ruleset__deny_all_sqe_ops()** makes the SQE side an empty
 *        allow-list: every request opcode allowed so far is removed, and
 *        a ring with this set accepts no request until opcodes are allowed
 *        again.
 *
 * While no opcode is allowed the SQE flags need not be decided.
 * @param rs the set.
 * @return 0 on success; -EINVAL if @p rs is NULL.
 * @since 1.0
 */
IOUR_API int iour_ruleset__deny_all_sqe_ops(struct iour_ruleset *rs);

/**
 * @brief **iour_ruleset__deny_all_register_ops()** makes the register side
 *        an empty allow-list: every register opcode allowed so far is
 *        removed, and an enabled ring with this set accepts no
 *        `io_uring_register()` call.
 * @param rs the set.
 * @return 0 on success; -EINVAL if @p rs is NULL.
 * @since 1.0
 */
IOUR_API int iour_ruleset__deny_all_register_ops(struct iour_ruleset *rs);

/**
 * @brief **iour_ruleset__set_sqe_flags()** decides which SQE flags a
 *        request may carry and which it must carry.
 *
 * A request passes if it carries every flag of @p required and no flag
 * outside @p allowed | @p required (a required flag is implicitly
 * allowed).  Calling this again replaces the previous choice.  Flags other
 * than "all allowed, none required" restrict the SQE side even when every
 * opcode is allowed.
 * @param rs the set.
 * @param allowed mask of IOUR_SQE_* flags (enum iour_sqe_flag) a request
 *        may carry; 0 allows none (beyond @p required).
 * @param required mask of IOUR_SQE_* flags every request must carry.
 * @return 0 on success; -EINVAL if @p rs is NULL or a mask has a bit
 *         outside IOUR_SQE__VALID (0x7f).
 * @since 1.0
 */
IOUR_API int iour_ruleset__set_sqe_flags(struct iour_ruleset *rs, uint32_t allowed,
					 uint32_t required);

/** @} */

/** @name Queries
 *  @{ */

/**
 * @brief **iour_ruleset__sqe_op_allowed()** tells whether the set allows a
 *        request opcode (ignoring flags).
 * @param rs the set.
 * @param op the opcode (enum iour_op).
 * @return 1 if allowed (always so when the SQE side is unrestricted), 0 if
 *         not; -EINVAL if @p rs is NULL; -ERANGE if @p op >= IOUR_OP__COUNT.
 * @since 1.0
 */
IOUR_API int iour_ruleset__sqe_op_allowed(const struct iour_ruleset *rs, uint32_t op);

/**
 * @brief **iour_ruleset__register_op_allowed()** tells whether the set
 *        allows a register opcode on an enabled ring.
 * @param rs the set.
 * @param op the register opcode (enum iour_register_op).
 * @return 1 if allowed (always so when the register side is
 *         unrestricted), 0 if not; -EINVAL if @p rs is NULL; -ERANGE if
 *         @p op >= IOUR_REGISTER__COUNT.
 * @since 1.0
 */
IOUR_API int iour_ruleset__register_op_allowed(const struct iour_ruleset *rs, uint32_t op);

/**
 * @brief **iour_ruleset__sqe_restricted()** tells whether the SQE side is
 *        an allow-list of opcodes.
 * @param rs the set.
 * @return 1 if it is, 0 if every opcode is allowed; -EINVAL if @p rs is
 *         NULL.
 * @since 1.0
 */
IOUR_API int iour_ruleset__sqe_restricted(const struct iour_ruleset *rs);

/**
 * @brief **iour_ruleset__register_restricted()** tells whether the
 *        register side is an allow-list.
 * @param rs the set.
 * @return 1 if it is, 0 if every register opcode is allowed; -EINVAL if
 *         @p rs is NULL.
 * @since 1.0
 */
IOUR_API int iour_ruleset__register_restricted(const struct iour_ruleset *rs);

/**
 * @brief **iour_ruleset__sqe_flags()** reads the SQE flag decision.
 * @param rs the set.
 * @param allowed receives the allowed mask (including the required
 *        flags); may be NULL.  0x7f if the flags were not decided.
 * @param required receives the required mask; may be NULL.  0 if the
 *        flags were not decided.
 * @return 1 if iour_ruleset__set_sqe_flags() was called, 0 if not;
 *         -EINVAL if @p rs is NULL.
 * @since 1.0
 */
IOUR_API int iour_ruleset__sqe_flags(const struct iour_ruleset *rs, uint32_t *allowed,
				     uint32_t *required);

/** @} */

/** @name Export to the kernel's format
 *  @{ */

/** @brief Kinds of restriction entries (`enum io_uring_register_restriction_op`). */
enum iour_restriction_kind {
	IOUR_RESTRICTION_REGISTER_OP = 0,       /**< allow one register opcode */
	IOUR_RESTRICTION_SQE_OP = 1,            /**< allow one request opcode */
	IOUR_RESTRICTION_SQE_FLAGS_ALLOWED = 2, /**< set the allowed SQE flags */
	IOUR_RESTRICTION_SQE_FLAGS_REQUIRED = 3 /**< set the required SQE flags */
};

/**
 * @brief One restriction entry, layout-identical to the kernel's
 *        `struct io_uring_restriction` (16 bytes): an array of these is the
 *        argument of `IORING_REGISTER_RESTRICTIONS`.
 */
struct iour_restriction {
	uint16_t opcode;   /**< enum iour_restriction_kind */
	uint8_t arg;       /**< register opcode, request opcode or flag mask */
	uint8_t resv;      /**< 0 */
	uint32_t resv2[3]; /**< 0 */
};

/** @brief Export for kernels before 7.0: registering any set gates both sides. */
#define IOUR_EXPORT_COUPLED (1U << 0)
/** @brief Export for Linux 7.0+: a side is gated only if it has entries. */
#define IOUR_EXPORT_SPLIT (1U << 1)

/**
 * @brief What the export dropped because the target kernel does not know
 *        it.  An output struct: the caller sets `sz` to
 *        `sizeof(struct iour_clamp_report)`; the library fills the fields
 *        that fit in `sz` and zeroes the rest.  Bit n of a bitmap is bit
 *        (n % 64) of word n / 64.
 */
struct iour_clamp_report {
	size_t sz;                /**< sizeof(struct iour_clamp_report) */
	uint32_t n_sqe_ops;       /**< allowed request opcodes dropped */
	uint32_t n_register_ops;  /**< allowed register opcodes dropped */
	uint64_t sqe_ops[4];      /**< bitmap of the dropped request opcodes */
	uint64_t register_ops[4]; /**< bitmap of the dropped register opcodes */
};

/**
 * @brief Options of iour_ruleset__export(): the kernel to export for.
 *        FFI callers set `sz` and zero every other byte.
 *
 * The defaults describe the newest kernel the library knows (7.2:
 * IOUR_OP__COUNT request opcodes, IOUR_REGISTER__COUNT register opcodes,
 * split gates).  For a real ring, pass the running kernel's limits from the
 * probe module.
 */
struct iour_export_opts {
	size_t sz; /**< sizeof(struct iour_export_opts) */
	/** Target kernel version, IOUR_KVER(maj, min), from which the limits
	 *  and the gate semantics below default (iour_opcode_last(),
	 *  iour_register_op_last(), split from 7.0); 0 = the newest known. */
	uint32_t kver;
	/** The target's `IORING_OP_LAST`, 1..256; 0 = from @ref kver. */
	uint32_t op_last;
	/** The target's `IORING_REGISTER_LAST`, 13..256; 0 = from @ref kver. */
	uint32_t reg_last;
	/** 0, IOUR_EXPORT_COUPLED or IOUR_EXPORT_SPLIT: overrides the gate
	 *  semantics implied by @ref kver. */
	uint32_t flags;
	/** If not NULL, receives what was clamped away. */
	struct iour_clamp_report *clamp;
};
/** @brief The last field of struct iour_export_opts, up to which the library reads
 *         it (the options discipline of common.h). */
#define iour_export_opts__last_field clamp

/**
 * @brief **iour_ruleset__export()** writes the set as the kernel's
 *        restriction entries for a target kernel.
 *
 * The entries, in this order: the allowed request opcodes (ascending; all
 * opcodes below `op_last` when the SQE side must be listed but is
 * unrestricted), one SQE_FLAGS_ALLOWED entry (allowed | required flags;
 * 0x7f when undecided and unrestricted, 0 for an empty allow-list), an
 * SQE_FLAGS_REQUIRED entry if any flag is required, then the allowed
 * register opcodes (ascending; all below `reg_last` when listed but
 * unrestricted; the sentinel REGISTER_ENABLE_RINGS alone when a register
 * allow-list is empty on split gates).  Sides not restricted are left out
 * on split gates, except that a set restricting nothing lists every
 * register opcode, so that the result is never empty (zero entries would
 * deny everything).  Opcodes at or above the target's limits are dropped
 * and reported through @p opts->clamp.
 *
 * Two-call sizing: with @p buf NULL, *@p len receives the size in bytes
 * and nothing else is written but the clamp report.
 * @param rs the set.
 * @param opts the target kernel, or NULL for the newest known.
 * @param buf destination (any alignment), or NULL to learn the size.
 * @param len in: size of @p buf in bytes; out: bytes needed (also set on
 *        -ERANGE).
 * @return the number of entries (>= 1) on success; -EINVAL if @p rs or
 *         @p len is NULL, @p opts->sz or @p opts->clamp->sz is too small,
 *         @p opts->flags has unknown bits or both semantics, or a limit is
 *         out of range (including a @p kver older than 5.10, which has no
 *         restrictions); -E2BIG if @p opts is larger than the library
 *         knows and an unknown byte is not zero; -ENOMSG if a request
 *         opcode is allowed but the SQE flags were never decided
 *         (iour_ruleset__set_sqe_flags()); -ERANGE if *@p len is too small.
 * @since 1.0
 */
IOUR_API int iour_ruleset__export(const struct iour_ruleset *rs,
				  const struct iour_export_opts *opts, void *buf, size_t *len);

/** @} */

#ifdef __cplusplus
}
#endif

#endif /* IOURING_RESTRICT_RULESET_H */
