/* SPDX-License-Identifier: MIT */
/**
 * @file ring.h
 * @brief Apply a restriction set to an io_uring ring (Linux 5.10+).
 *
 * The kernel accepts ring restrictions only between creation and first
 * use: the ring is created with `IORING_SETUP_R_DISABLED`, the set is
 * registered with `IORING_REGISTER_RESTRICTIONS` (once), and the ring is
 * enabled with `IORING_REGISTER_ENABLE_RINGS`.  Until it is enabled, the
 * ring refuses submissions (-EBADFD), so a ring is never usable in a
 * half-restricted state.
 *
 * The set is translated for the running kernel (from iour_probe()): opcodes
 * the kernel does not know are dropped and reported, and the entries are
 * chosen so that the set means the same on kernels before 7.0 (where any
 * registered set also closes every unlisted register opcode) and from 7.0
 * (where each side is restricted only if it has entries).
 *
 * **SINGLE_ISSUER rings.** With `IORING_SETUP_SINGLE_ISSUER`, the thread
 * that enables the ring becomes its only submitter.  Call iour_ring_apply()
 * or iour_ring_create() from the thread that will submit, or pass
 * #IOUR_RING_APPLY_NO_ENABLE and enable the ring from that thread with
 * iour_ring_enable() (or liburing's `io_uring_enable_rings()`).
 *
 * **liburing 2.3 (Debian 12)** has no `io_uring_enable_rings()`.  With it,
 * let iour_ring_apply() enable the ring, or call iour_ring_enable() with
 * the ring's fd (`ring.ring_fd`), which makes the same
 * `IORING_REGISTER_ENABLE_RINGS` call (or make that call yourself:
 * `io_uring_register(fd, IORING_REGISTER_ENABLE_RINGS, NULL, 0)`).
 *
 * **Scope.** Ring restrictions bind that ring only: a process that may
 * create rings can still create an unrestricted one.  They confine what is
 * submitted through rings handed to less trusted code.
 *
 * **One executor.** These are the simple entry points of the policy API
 * (policy.h): each call makes a ring policy (#IOUR_POLICY_TARGET_RING,
 * default allow) holding the set alone, plans it for the running kernel
 * and applies it with iour_plan__apply_ring() or iour_plan__create_ring(),
 * whose report is translated into struct iour_ring_report.  They differ
 * from those only where documented here: the set is registered as a
 * classic set or not at all (no filter substitute where new rings inherit
 * the task's set: -EBUSY), and the errors are mapped to the set below.
 * A set that restricts nothing registers no entries (the ring is only
 * enabled).
 */
#ifndef IOURING_RESTRICT_RING_H
#define IOURING_RESTRICT_RING_H

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

struct iour_ruleset;

/**
 * @brief What iour_ring_apply() or iour_ring_create() did.  An output
 *        struct: the caller sets #sz to `sizeof(struct iour_ring_report)`;
 *        the library fills the fields that fit (and zeroes bytes beyond the
 *        ones it knows).  Written whenever the call got past input
 *        validation, on success and on failure.  Bit n of a bitmap is bit
 *        (n % 64) of word n / 64.
 */
struct iour_ring_report {
	/** Set by the caller: sizeof(struct iour_ring_report). */
	size_t sz;
	/** 1 if the restriction entries were registered (0 also when the set
	 *  restricts nothing: no entries are needed). */
	uint32_t registered;
	/** 1 if this call enabled the ring. */
	uint32_t enabled;
	/** Number of 16-byte restriction entries registered (or that would
	 *  have been). */
	uint32_t nr_entries;
	/** The kernel's `IORING_OP_LAST` the entries were built for. */
	uint32_t op_last;
	/** The kernel's `IORING_REGISTER_LAST` the entries were built for. */
	uint32_t reg_last;
	/** 1 if the entries were built for split gates (Linux 7.0+). */
	uint32_t split_gates;
	/** Allowed request opcodes dropped because the kernel lacks them. */
	uint32_t n_clamped_sqe_ops;
	/** Allowed register opcodes dropped because the kernel lacks them. */
	uint32_t n_clamped_register_ops;
	/** Bitmap of the dropped request opcodes. */
	uint64_t clamped_sqe_ops[4];
	/** Bitmap of the dropped register opcodes. */
	uint64_t clamped_register_ops[4];
};

/** @brief iour_ring_apply_opts::flags: register the restrictions but leave
 *         the ring disabled; enable it later with iour_ring_enable(). */
#define IOUR_RING_APPLY_NO_ENABLE (1ULL << 0)

/** @brief Options of iour_ring_apply().  FFI callers set `sz` and zero
 *         every other byte. */
struct iour_ring_apply_opts {
	/** sizeof(struct iour_ring_apply_opts). */
	size_t sz;
	/** IOUR_RING_APPLY_* flags. */
	uint64_t flags;
	/** If not NULL, receives what was done (struct iour_ring_report). */
	struct iour_ring_report *report;
};
/** @brief The last field of struct iour_ring_apply_opts, up to which the library reads
 *         it (the options discipline of common.h). */
#define iour_ring_apply_opts__last_field report

/** @brief Options of iour_ring_create().  FFI callers set `sz` and zero
 *         every other byte. */
struct iour_ring_create_opts {
	/** sizeof(struct iour_ring_create_opts). */
	size_t sz;
	/** Reserved; must be 0. */
	uint64_t flags;
	/** If not NULL, receives what was done (struct iour_ring_report). */
	struct iour_ring_report *report;
};
/** @brief The last field of struct iour_ring_create_opts, up to which the library reads
 *         it (the options discipline of common.h). */
#define iour_ring_create_opts__last_field report

/**
 * @brief **iour_ring_apply()** restricts a ring the caller created with
 *        `IORING_SETUP_R_DISABLED`, then enables it.
 *
 * Every argument is checked and the kernel's entries are computed (for the
 * running kernel's limits, from the cached probe) before the first system
 * call on the ring.  Then `IORING_REGISTER_RESTRICTIONS`, then, unless
 * #IOUR_RING_APPLY_NO_ENABLE, `IORING_REGISTER_ENABLE_RINGS`.  If the
 * registration fails, the ring stays disabled and unrestricted (the kernel
 * resets its state), so the call may be retried; if enabling fails, the
 * ring stays disabled and restricted.  For `IORING_SETUP_SINGLE_ISSUER`
 * rings, see "SINGLE_ISSUER rings" in the introduction of ring.h (NOTES,
 * in the manual page).
 *
 * Thread-safe for different rings.
 * @param ring_fd the ring's file descriptor (a registered-ring index is
 *        not accepted).
 * @param rs the restriction set; only read, and not retained.
 * @param opts options, or NULL for the defaults.
 * @return 0 on success;
 *         -EINVAL if @p rs is NULL, an options or report size is too small,
 *         or unknown flags are set;
 *         -E2BIG if @p opts has non-zero bytes the library does not know;
 *         -ENOMSG if the set allows request opcodes but its SQE flags were
 *         never decided (iour_ruleset__set_sqe_flags());
 *         -EBADF if @p ring_fd is negative or not open;
 *         -EOPNOTSUPP if @p ring_fd is not an io_uring;
 *         -EBADFD if the ring was not created with `IORING_SETUP_R_DISABLED`
 *         or is already enabled (the kernel's EACCES / EEXIST for an
 *         enabled, gated or single-issuer ring are reported as this too);
 *         -EBUSY if the ring already has restrictions (registered earlier,
 *         or inherited from the task's restrictions on Linux 7.0+);
 *         -ENOMEM if the kernel or the probe ran out of memory;
 *         -EMFILE, -ENFILE or -EAGAIN if the probe ran short of file
 *         descriptors or processes (not cached; see iour_probe());
 *         -ECHILD if the probe could not run;
 *         -IOUR_ERRNO__UNSUPPORTED if the kernel (or the level forced with
 *         `IOUR_FEATURE_LEVEL`) lacks per-ring restrictions;
 *         -IOUR_ERRNO__KERNEL_MISMATCH if the kernel rejected entries built
 *         for the limits it reported.
 * @since 1.0
 */
IOUR_API int iour_ring_apply(int ring_fd, const struct iour_ruleset *rs,
			     const struct iour_ring_apply_opts *opts);

/**
 * @brief **iour_ring_enable()** enables a ring created with
 *        `IORING_SETUP_R_DISABLED` (`IORING_REGISTER_ENABLE_RINGS`), for
 *        example after iour_ring_apply() with #IOUR_RING_APPLY_NO_ENABLE.
 *        With `IORING_SETUP_SINGLE_ISSUER`, the calling thread becomes the
 *        ring's submitter.
 * @param ring_fd the ring's file descriptor.
 * @return 0 on success;
 *         -EBADF if @p ring_fd is negative or not open;
 *         -EOPNOTSUPP if @p ring_fd is not an io_uring;
 *         -EBADFD if the ring is not disabled (the kernel's EACCES for a
 *         gated, enabled ring is reported as this too).
 * @since 1.0
 */
IOUR_API int iour_ring_enable(int ring_fd);

/**
 * @brief **iour_ring_create()** creates a ring that is restricted by @p rs
 *        and enabled, ready for use.
 *
 * Equivalent to `io_uring_setup()` with `IORING_SETUP_R_DISABLED` added to
 * the caller's flags, iour_ring_apply(), and enabling, with every argument
 * checked and the entries computed before the ring exists.  On any failure
 * after the ring exists it is closed: a half-restricted ring is never
 * handed out.  The calling thread enables the ring, so with
 * `IORING_SETUP_SINGLE_ISSUER` it becomes the submitter.
 *
 * @param entries the SQ size, as for `io_uring_setup()` (not 0).
 * @param params NULL, or a `struct io_uring_params` (120 bytes, writable)
 *        as for `io_uring_setup()`: the caller's flags and fields are used,
 *        and on success the kernel's answers (sizes, features, ring
 *        offsets) are in it, so that the caller can map the rings (e.g.
 *        with liburing's `io_uring_queue_mmap()`).  Its `flags` field is
 *        left as the caller set it.  Only setup flags whose result is a
 *        file descriptor are accepted: not
 *        `IORING_SETUP_REGISTERED_FD_ONLY` (its result is a
 *        registered-ring index), nor bits this library does not know.
 * @param rs the restriction set; only read, and not retained.
 * @param opts options, or NULL for the defaults.
 * @param ring_fd receives the new ring's file descriptor (close-on-exec,
 *        as io_uring always makes it); set to -1 on failure.
 * @return 0 on success;
 *         -EINVAL if @p rs or @p ring_fd is NULL, @p entries is 0, an
 *         options or report size is too small, flags are set, @p params
 *         has `IORING_SETUP_REGISTERED_FD_ONLY` or an unknown flag (both
 *         refused before any system call), or the kernel refused
 *         @p entries or @p params;
 *         -E2BIG if @p opts has non-zero bytes the library does not know;
 *         -ENOMSG if the set allows request opcodes but its SQE flags were
 *         never decided;
 *         -EPERM, -ENOSYS if the kernel refused to create a ring (io_uring
 *         disabled, not built in, or denied by a security policy);
 *         -ENOMEM, -EMFILE, -ENFILE, -EAGAIN if resources ran out (also
 *         in the probe; see iour_probe());
 *         -EBUSY if new rings inherit the task's restrictions (Linux 7.0+),
 *         which cannot be combined with ring restrictions;
 *         -ECHILD if the probe could not run;
 *         -IOUR_ERRNO__UNSUPPORTED if the kernel (or the forced level) lacks
 *         per-ring restrictions;
 *         -IOUR_ERRNO__KERNEL_MISMATCH if the kernel rejected entries built
 *         for the limits it reported, or refused to enable the new ring.
 * @since 1.0
 */
IOUR_API int iour_ring_create(uint32_t entries, void *params, const struct iour_ruleset *rs,
			      const struct iour_ring_create_opts *opts, int *ring_fd);

#ifdef __cplusplus
}
#endif

#endif /* IOURING_RESTRICT_RING_H */
