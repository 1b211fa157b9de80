/* SPDX-License-Identifier: MIT */
/**
 * @file errors.h
 * @brief Error codes and their messages.
 *
 * Functions return negative values: either a negative system errno
 * (-EINVAL, -ENOMEM, ...) or a negative library-specific code from
 * enum iour_errno.  Library codes start at 4000 so they never collide with
 * system errno values; their numbers are frozen once released.  The codes
 * are contiguous (4001 up to #IOUR_ERRNO__END - 1); a code the library stops
 * returning after a release keeps its number, as a gap, and is never reused.
 */
#ifndef IOURING_RESTRICT_ERRORS_H
#define IOURING_RESTRICT_ERRORS_H

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @brief Library-specific error codes, returned negated (e.g.
 *        `-IOUR_ERRNO__PROG_TOO_LARGE`).
 */
enum iour_errno {
	/** First value of the library's range; never returned. */
	IOUR_ERRNO__START = 4000,
	/** An internal invariant failed; please report it as a bug. */
	IOUR_ERRNO__INTERNAL = 4001,
	/** A compiled program would exceed the kernel's 4096 instructions. */
	IOUR_ERRNO__PROG_TOO_LARGE = 4002,
	/** A cBPF program breaks a rule of the kernel's checkers. */
	IOUR_ERRNO__INVALID_PROG = 4003,
	/** The running kernel lacks a feature the request hard-requires. */
	IOUR_ERRNO__UNSUPPORTED = 4004,
	/** Application stopped midway; the report says what took effect. */
	IOUR_ERRNO__PARTIAL = 4005,
	/** The kernel's answer contradicts the documented interface. */
	IOUR_ERRNO__KERNEL_MISMATCH = 4006,
	/** The enforcement check saw a request the policy forbids succeed. */
	IOUR_ERRNO__NOT_ENFORCED = 4007,
	/** One past the last value; never returned. */
	IOUR_ERRNO__END
};

/**
 * @brief **iour_strerror()** writes a human-readable message for an error
 *        code into a caller's buffer.  Thread-safe.
 * @param err an error code as returned by the library (negative) or its
 *        absolute value; system errno values are described too.
 * @param buf destination buffer; may be NULL only if @p len is 0.
 * @param len size of @p buf in bytes.
 * @return 0 on success; -ERANGE if the message was truncated (@p buf still
 *         holds a NUL-terminated prefix when @p len > 0); -ENOENT if the
 *         code is unknown (a generic message is still written);
 *         -EINVAL if @p buf is NULL and @p len is not 0.
 * @since 1.0
 */
IOUR_API int iour_strerror(int err, char *buf, size_t len);

/**
 * @brief **iour_strerror_desc()** returns the message for an error code
 *        as a static string: the form for callers without a buffer
 *        (bindings, log lines).  Thread-safe.
 * @param err an error code as returned by the library (negative) or its
 *        absolute value; 0 gives "Success"; system errno values are
 *        described too.
 * @return a static, NUL-terminated string that is never freed or
 *         changed; "Unknown error" for a code the library does not know
 *         (iour_strerror() also gives its number).  Never NULL.
 * @since 1.1
 */
IOUR_API const char *iour_strerror_desc(int err);

/**
 * @brief **iour_errdetail()** returns what the calling thread's last
 *        failed call of a function said about the value it refused and
 *        the limit it broke.  Thread-safe (each thread has its own record).
 *
 * The errno says what kind of refusal it was; the detail says which value
 * and why, such as "level 9: levels are 0..5" for -EINVAL from
 * iour_policy__plan(), or "opcode 255: the library's request-opcode table
 * ends at 64 (URING_CMD128)" for -ERANGE from iour_ruleset__allow_sqe_op().
 *
 * The functions that record a detail are those whose pages say so
 * (iour_ruleset__allow_sqe_op(), iour_ruleset__allow_register_op(),
 * iour_policy__set_attr(), iour_policy__get_attr(),
 * iour_policy_attr_bounds(), iour_policy__plan(), iour_plan__apply_task(),
 * iour_plan__apply_ring(), iour_plan__create_ring()); each clears its
 * own record when called, so a detail is never from an older call of
 * the same function.  The return codes are unchanged: the detail only
 * adds words to them.
 * @param function the function's name ("iour_policy__plan"), or NULL for
 *        whichever function recorded the thread's latest detail.
 * @param err the code that call returned (negative, or its absolute
 *        value).
 * @return the message, NUL-terminated, in storage of the calling thread
 *         that stays valid until the thread's next call of a function
 *         that records details; NULL if there is none for @p function
 *         and @p err (the call recorded none, or returned another code,
 *         or @p err is 0).
 * @since 1.1
 */
IOUR_API const char *iour_errdetail(const char *function, int err);

/**
 * @brief **iour_errname()** returns the symbolic name of an error code,
 *        such as "-EINVAL" or "-IOUR_ERRNO__PROG_TOO_LARGE".
 * @param err an error code (negative, or its absolute value).
 * @return a static string; "UNKNOWN" if the code is not known.  Never NULL.
 * @since 1.0
 */
IOUR_API const char *iour_errname(int err);

#ifdef __cplusplus
}
#endif

#endif /* IOURING_RESTRICT_ERRORS_H */
