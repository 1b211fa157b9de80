/* SPDX-License-Identifier: MIT */
/**
 * @file verify.h
 * @brief The enforcement check: ask the kernel, in a throwaway child
 *        process, whether requests that should be denied are denied and
 *        requests that should be allowed are allowed.
 *
 * A report that says "enforced" is a claim about the kernel.  This check
 * tests the claim the only way that cannot be fooled by the library's own
 * bookkeeping: a forked child creates a ring the way an application would
 * (a plain `io_uring_setup`, no `IORING_SETUP_R_DISABLED`), or uses a ring
 * the caller names, submits each described request, and compares the
 * completion with the expectation:
 * - **denied** means the completion's result is `-EACCES` (what io_uring's
 *   restriction gate and its filters return);
 * - **allowed** means any other result: a request the kernel lets through
 *   may still fail for ordinary reasons (`-ECONNREFUSED`, `-ENOENT`, ...).
 *
 * Because `-EACCES` is also an ordinary failure of some requests (opening
 * a file without permission, connecting to a socket file one may not
 * write, a socket family forbidden by an LSM), choose request arguments
 * that succeed or fail for other reasons when they are allowed:
 * `/dev/null`, loopback addresses, nonexistent paths.
 *
 * The check never changes the calling process: the child does all the
 * work and ends with `_exit()`, the results come back through shared
 * memory, and every descriptor and mapping the call opened is closed
 * before it returns.  Optionally the child first executes a helper program
 * (#iour_verify_opts::exec_path), which proves that restrictions survive
 * `execve` (on Linux 7.0/7.1 a task that created any ring loses its
 * task-level restrictions on exec, doc/kernel.md 3.4).  The helper
 * must call **iour_verify_serve()**; `examples/iour-verify-helper.c` is
 * such a program.
 *
 * Supported request opcodes (the library prepares each one itself):
 * | opcode | value | what is submitted | fields used |
 * | --- | --- | --- | --- |
 * | NOP | 0 | a no-op | |
 * | READV | 1 | read 1 byte from a fresh pipe holding 1 byte | |
 * | WRITEV | 2 | write 1 byte to a fresh pipe | |
 * | CONNECT | 16 | connect a fresh socket to @c addr | family, type, protocol, addr, addrlen |
 * | OPENAT | 18 | `openat(AT_FDCWD, path, open_flags, open_mode)`; an opened fd is closed | path, open_flags, open_mode |
 * | READ | 22 | as READV | |
 * | WRITE | 23 | as WRITEV | |
 * | OPENAT2 | 28 | `openat2(AT_FDCWD, path, {open_flags, open_mode, open_resolve})`; closed | path, open_flags, open_mode, open_resolve |
 * | MSG_RING | 40 | a data message (`IORING_MSG_DATA`, no file) to a ring the check creates for it and closes (status #IOUR_VERIFY_FAILED where the child cannot create rings) | |
 * | SOCKET | 45 | `socket(family, type, protocol)`; a created socket is closed | family, type, protocol |
 *
 * Every other request opcode is never submitted.  A check given the
 * restriction set it tests (#iour_verify_opts::ruleset) says which of the
 * opcodes the set allows were tried and which were not, and why
 * (struct iour_verify_coverage): a clean result is a statement about the
 * requests submitted, not about the opcodes that were never tried, nor
 * about register opcodes, which this check never calls.
 *
 * Fields an opcode does not use must be zero.  The caller's arguments are
 * honoured as given: `O_CREAT` creates files, `CONNECT` connects where it
 * is told.  A CONNECT that blocks (an unreachable remote address) is ended
 * by the timeout.
 */
#ifndef IOURING_RESTRICT_VERIFY_H
#define IOURING_RESTRICT_VERIFY_H

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

struct iour_ruleset;

/** @name Expectations (iour_verify_req::expect, iour_verify_result::observed)
 *  @{ */
/** @brief The request must get through (its result is not `-EACCES`). */
#define IOUR_EXPECT_ALLOW 1
/** @brief The request must be denied (its result is `-EACCES`). */
#define IOUR_EXPECT_DENY 2
/** @} */

/** @brief Most requests one check accepts. */
#define IOUR_VERIFY_MAX_REQS 256
/** @brief Longest path (bytes, without the terminating NUL). */
#define IOUR_VERIFY_MAX_PATH 4095
/** @brief Longest CONNECT address (`sizeof(struct sockaddr_storage)`). */
#define IOUR_VERIFY_MAX_ADDR 128

/**
 * @brief One request to submit and what the kernel is expected to answer.
 *
 * Requests are passed as an array.  Every element carries the same @c sz,
 * which is also the array's stride, so a caller built against an older or
 * newer version of this struct still works.  Set @c sz and zero every
 * field the opcode does not use.
 */
struct iour_verify_req {
	size_t sz;             /**< sizeof(struct iour_verify_req) */
	uint32_t opcode;       /**< IORING_OP_* value, from the table above */
	uint32_t expect;       /**< #IOUR_EXPECT_ALLOW or #IOUR_EXPECT_DENY */
	uint32_t sqe_flags;    /**< IOSQE_* flags to set on the SQE: FIXED_FILE,
				    IO_DRAIN, IO_LINK, IO_HARDLINK, ASYNC (the
				    library cannot provide buffers for
				    BUFFER_SELECT, and CQE_SKIP_SUCCESS would
				    hide the answer) */
	int32_t family;        /**< SOCKET, CONNECT: address family (CONNECT:
				    0 takes it from @c addr) */
	int32_t type;          /**< SOCKET, CONNECT: socket type (CONNECT: 0
				    means SOCK_STREAM) */
	int32_t protocol;      /**< SOCKET, CONNECT: protocol */
	uint64_t open_flags;   /**< OPENAT (32 bits), OPENAT2: open flags */
	uint64_t open_mode;    /**< OPENAT (32 bits), OPENAT2: creation mode */
	uint64_t open_resolve; /**< OPENAT2: RESOLVE_* flags */
	const char *path;      /**< OPENAT, OPENAT2: NUL-terminated path; read
				    during the call only */
	const void *addr;      /**< CONNECT: socket address; read during the
				    call only; NULL only if @c addrlen is 0 */
	uint32_t addrlen;      /**< CONNECT: bytes at @c addr (0 to 128; it is
				    passed to the kernel as given) */
	uint32_t resv;         /**< reserved, must be 0 */
};
/** @brief The last field of struct iour_verify_req, up to which the library reads
 *         it (the options discipline of common.h). */
#define iour_verify_req__last_field resv
/** @brief The last field of struct iour_verify_req (for size checks). */
#define iour_verify_req__last_field resv

/** @name Outcome of one request (iour_verify_result::status)
 *  @{ */
/** @brief Not submitted: the check stopped before this request. */
#define IOUR_VERIFY_NOT_RUN 0
/** @brief The kernel answered as expected. */
#define IOUR_VERIFY_MATCH 1
/** @brief The kernel answered the opposite of the expectation. */
#define IOUR_VERIFY_MISMATCH 2
/** @brief The library could not prepare or submit this request. */
#define IOUR_VERIFY_FAILED 3
/** @} */

/**
 * @brief What the kernel answered to one request (fixed layout, 16 bytes;
 *        one element per request).
 */
struct iour_verify_result {
	int32_t res;       /**< MATCH, MISMATCH: the completion's result.
			        FAILED: -errno of what failed.  NOT_RUN: -errno
			        of what stopped the check before this request
			        (for example io_uring_setup's or execve's
			        error), or 0 if unknown */
	uint32_t status;   /**< IOUR_VERIFY_* outcome */
	uint32_t observed; /**< #IOUR_EXPECT_ALLOW or #IOUR_EXPECT_DENY as the
			        kernel answered (-EACCES is a denial; so is
			        -EINVAL for an opcode at or above the running
			        kernel's IORING_OP_LAST, which the kernel
			        refuses unrun: since 1.1); 0 when not answered */
	uint32_t resv;     /**< reserved, set to 0 */
};

/** @brief iour_verify_opts::flags: check the ring iour_verify_opts::ring_fd
 *  instead of creating one. */
#define IOUR_VERIFY_RING_FD (1U << 0)

/** @brief The environment variable that passes the check to a helper
 *  program (see **iour_verify_serve()**). */
#define IOUR_VERIFY_ENV "IOUR_VERIFY_FD"

/** @name What a check covered (iour_verify_coverage::flags)
 *  @{ */
/** @brief The set allows MSG_RING: requests on the ring can install its
 *  registered files into the fixed-file table of any ring whose descriptor
 *  they can name, so no such ring's fixed-file set is sealed by its own
 *  restrictions (doc/security.md, section 2). */
#define IOUR_VERIFY_COV_MSG_RING (1U << 0)
/** @brief The set requires `IOSQE_FIXED_FILE`: requests on the ring can
 *  use only files in its fixed-file table, but the table is not sealed: a
 *  MSG_RING request (`IORING_MSG_SEND_FD`) on any other ring that can name
 *  this ring's descriptor installs or replaces files in it.  The check
 *  does not look at other rings. */
#define IOUR_VERIFY_COV_FIXED_FILE_REQUIRED (1U << 1)
/** @brief The set requires SQE flags the check cannot set
 *  (`IOSQE_BUFFER_SELECT`, `IOSQE_CQE_SKIP_SUCCESS`): no request it allows
 *  could be submitted. */
#define IOUR_VERIFY_COV_FLAGS_UNSETTABLE (1U << 2)
/** @brief The set restricts register opcodes; the check submits requests
 *  only, so the register side was not tried. */
#define IOUR_VERIFY_COV_REGISTER_NOT_TRIED (1U << 3)
/** @brief The running kernel's opcode count is unknown (the probe did not
 *  give it): every opcode the library knows was counted. */
#define IOUR_VERIFY_COV_KERNEL_UNKNOWN (1U << 4)
/** @} */

/**
 * @brief Which request opcodes a check tried, measured against the
 *        restriction set it was given (#iour_verify_opts::ruleset).  An
 *        output struct: the caller sets @c sz; written whenever the
 *        results are.  Bit n of a bitmap is bit (n % 64) of word n / 64.
 *
 * An allowed opcode counts as **tried** when the kernel answered at least
 * one request with it that was expected to be allowed (status
 * #IOUR_VERIFY_MATCH or #IOUR_VERIFY_MISMATCH, expectation
 * #IOUR_EXPECT_ALLOW): a request expected to be denied, for example for
 * lack of a required flag, does not show that the opcode is allowed.
 * Opcodes the running kernel does not know are left out (the kernel
 * denies them).
 */
struct iour_verify_coverage {
	size_t sz;                /**< set by the caller:
				       sizeof(struct iour_verify_coverage) */
	uint32_t flags;           /**< IOUR_VERIFY_COV_* */
	uint32_t op_last;         /**< the opcode count used (the running
				       kernel's IORING_OP_LAST) */
	uint32_t n_allowed;       /**< request opcodes the set allows */
	uint32_t n_tried;         /**< of those, opcodes that were tried */
	uint32_t n_untried;       /**< of those, opcodes that were not */
	uint32_t n_unpreparable;  /**< of the untried, opcodes the check cannot
				       prepare at all (not in the table above) */
	uint64_t allowed[4];      /**< the opcodes the set allows */
	uint64_t tried[4];        /**< allowed opcodes that were tried */
	uint64_t untried[4];      /**< allowed opcodes that were not tried:
				       not requested, not preparable, or their
				       requests got no answer */
	uint64_t unpreparable[4]; /**< untried opcodes the check cannot
				       prepare */
	uint64_t denied_tried[4]; /**< opcodes the set denies that were
				       tried */
};

/**
 * @brief Options of **iour_verify()**.  Set @c sz and zero every field you
 *        do not use; NULL means all defaults (a fresh ring, no exec, a
 *        30-second timeout).
 */
struct iour_verify_opts {
	size_t sz;                             /**< sizeof(struct iour_verify_opts) */
	uint32_t flags;                        /**< #IOUR_VERIFY_RING_FD or 0 */
	int32_t ring_fd;                       /**< with #IOUR_VERIFY_RING_FD: the ring to check,
				   an open io_uring descriptor of the caller
				   (otherwise must be 0) */
	uint32_t ring_flags;                   /**< IORING_SETUP_* flags.  Without
				   #IOUR_VERIFY_RING_FD: the flags the child
				   creates its ring with (CLAMP, SUBMIT_ALL,
				   COOP_TASKRUN, TASKRUN_FLAG, SQE128, CQE32,
				   SINGLE_ISSUER, DEFER_TASKRUN, NO_SQARRAY).
				   With it: the flags @c ring_fd was created
				   with (only SQE128, CQE32 and NO_SQARRAY
				   change how it is driven; the above plus
				   CQSIZE, ATTACH_WQ and R_DISABLED are
				   accepted, SINGLE_ISSUER is not) */
	uint32_t timeout_ms;                   /**< how long the child may take, in ms; 0 means
				   30000.  The child is killed after that */
	const char *exec_path;                 /**< NULL, or a program the child executes
				    first; it must call **iour_verify_serve()** */
	char *const *exec_argv;                /**< argument vector for @c exec_path
				     (NULL-terminated), or NULL for
				     `{ exec_path, NULL }` */
	char *const *exec_envp;                /**< environment for @c exec_path
				     (NULL-terminated), or NULL for the
				     caller's; #IOUR_VERIFY_ENV is added */
	const struct iour_ruleset *ruleset;    /**< NULL, or the restriction set
						    the requests test; read
						    during the call only.
						    Needs @c coverage */
	struct iour_verify_coverage *coverage; /**< NULL, or receives which
						    opcodes the set allows were
						    tried; needs @c ruleset */
};
/** @brief The last field of struct iour_verify_opts, up to which the library reads
 *         it (the options discipline of common.h). */
#define iour_verify_opts__last_field coverage
/** @brief The last field of struct iour_verify_opts (for size checks). */
#define iour_verify_opts__last_field coverage

/**
 * @brief **iour_verify()** checks, in a forked child, that the kernel
 *        denies and allows the described requests as expected.
 *
 * Every request is submitted, one at a time and in order, even after a
 * mismatch, so @p results describes them all.
 *
 * With #IOUR_VERIFY_RING_FD the child submits on the caller's ring: that
 * is the only way to observe what the kernel enforces on it.  The ring
 * must be idle (no SQE waiting, no completion unread) and enabled; it must
 * not be used by anyone during the check.  Afterwards its SQ and CQ
 * indexes have advanced by the number of requests and every completion of
 * the check has been consumed.  Code that maps the ring itself must start
 * from the kernel's current indexes: the library's own rings do;
 * liburing's `io_uring_queue_mmap()` assumes a fresh ring, so check a ring
 * before liburing maps it only if the liburing user resynchronises, or
 * check a ring made for the purpose.  A single-issuer ring cannot be
 * checked from another process (-EOPNOTSUPP).
 *
 * @param reqs the requests (array of @p nr elements of @c reqs[0].sz bytes
 *        each); read during the call only.
 * @param nr number of requests, 1 to #IOUR_VERIFY_MAX_REQS.
 * @param results NULL, or an array of @p nr results, filled whenever the
 *        call gets past input validation (left untouched on -EINVAL,
 *        -E2BIG, -EOPNOTSUPP from validation, -EBADF).  The coverage
 *        (#iour_verify_opts::coverage) is written in the same cases.
 * @param opts options, or NULL.
 * @return 0 if every request was answered as expected; or a negative
 *         error code:
 *  - -IOUR_ERRNO__NOT_ENFORCED: at least one request was answered against
 *    its expectation (status #IOUR_VERIFY_MISMATCH); this takes precedence
 *    over every error below except the input errors;
 *  - -EINVAL: bad input: @p reqs NULL, @p nr 0 or too large, a request
 *    with a bad @c sz (too small, or different from @c reqs[0].sz), an
 *    unknown @c expect, unsupported SQE flags, a NULL or too long path, a
 *    bad address, a non-zero field the opcode does not use or a non-zero
 *    reserved field; options with unknown flags, a negative @c ring_fd,
 *    @c ring_fd without #IOUR_VERIFY_RING_FD, unknown @c ring_flags bits,
 *    `IORING_SETUP_R_DISABLED` for a fresh ring, an empty @c exec_path,
 *    @c exec_argv / @c exec_envp without @c exec_path, @c ruleset without
 *    @c coverage or the reverse, or a @c coverage whose @c sz is smaller
 *    than this version's struct or larger than 4096;
 *  - -E2BIG: a request or the options have non-zero bytes beyond the
 *    fields this library knows;
 *  - -EOPNOTSUPP: an opcode the check cannot prepare; @c ring_flags the
 *    check cannot drive (SQPOLL, IOPOLL, NO_MMAP, mixed-size CQEs or SQEs,
 *    registered-fd-only rings, a single-issuer @c ring_fd) or that the
 *    kernel rejects;
 *  - -EBADF: @c ring_fd is not an open descriptor;
 *  - -ENOTTY: @c ring_fd is not an io_uring ring;
 *  - -EBADFD: @c ring_fd is still disabled (`IORING_SETUP_R_DISABLED`, not
 *    yet enabled); nothing was left queued on it;
 *  - -EBUSY: @c ring_fd is not idle, or somebody else's completion
 *    arrived during the check (it was left in place);
 *  - -ENOSYS: io_uring is not available in the child: `io_uring_setup`
 *    (or, for @c ring_fd, `io_uring_enter`) failed with ENOSYS (io_uring
 *    compiled out, or a seccomp policy such as the companion);
 *  - -EPERM: io_uring is forbidden in the child: the call failed with
 *    EPERM or EACCES (`kernel.io_uring_disabled`, an LSM, a seccomp
 *    policy), or a seccomp policy killed the child inside io_uring;
 *  - -ENOMEM: out of memory, in the calling process or for the child's
 *    ring (io_uring_setup's ENOMEM, such as a locked-memory limit);
 *  - -EMFILE: no file descriptor was available for the check's channel;
 *  - -EAGAIN: the child could not be created (fork failed);
 *  - -ETIMEDOUT: the child did not finish within @c timeout_ms and was
 *    killed; the results say how far it got;
 *  - -ECHILD: the check did not complete for another reason: the child or
 *    helper died or exited without reporting (an @c exec_path that could
 *    not be executed gives NOT_RUN results whose @c res is execve's
 *    -errno), a request could not be prepared (status
 *    #IOUR_VERIFY_FAILED, for example a socket family the kernel does not
 *    know), or io_uring failed with an errno not listed here (in the
 *    results' @c res).
 * @since 1.0
 */
IOUR_API int iour_verify(const struct iour_verify_req *reqs, size_t nr,
			 struct iour_verify_result *results, const struct iour_verify_opts *opts);

/**
 * @brief **iour_verify_serve()** runs the check that **iour_verify()**
 *        passed to this process through #IOUR_VERIFY_ENV, in this process,
 *        and hands the results back to the waiting caller.  For helper
 *        programs executed with iour_verify_opts::exec_path.
 *
 * It creates a ring in the calling process (or uses the inherited
 * @c ring_fd), so call it only in a process made for the check; a process
 * that holds task-level restrictions and executes another program after
 * creating a ring loses them on Linux 7.0/7.1.  The variable is removed
 * from the environment and the channel descriptor is closed.  The outcome
 * of the check is reported to the caller of **iour_verify()**, not here.
 *
 * @return 0 if the check ran and its results were handed back (whatever
 *         they are); or a negative error code:
 *  - -ENOENT: #IOUR_VERIFY_ENV is not set (the program was not started by
 *    **iour_verify()**);
 *  - -EINVAL: the variable or the channel it names is malformed;
 *  - -EBADF: the descriptor it names is not open;
 *  - -ENOMEM: the channel could not be mapped.
 * @since 1.0
 */
IOUR_API int iour_verify_serve(void);

#ifdef __cplusplus
}
#endif

#endif /* IOURING_RESTRICT_VERIFY_H */
