/* SPDX-License-Identifier: MIT */
/*
 * A minimal io_uring ring for the library's own use (enforcement checks,
 * later the ring helpers), without liburing.  It creates or adopts a ring,
 * maps it, submits one SQE at a time and waits for that SQE's completion.
 * Not installed; not part of the public API.
 *
 * One request at a time is all the library needs, and it makes the two
 * kernel behaviours that matter for restrictions easy to handle exactly:
 * - io_uring_enter() on a ring still created IORING_SETUP_R_DISABLED fails
 *   with -EBADFD before it consumes anything: the SQ tail is rolled back so
 *   the SQE is not submitted later by somebody else's enter
 *   (doc/kernel.md 1.3 and 1.7);
 * - an SQE denied by the restriction gate is consumed: enter counts it and
 *   it completes with a CQE whose res is -EACCES (doc/kernel.md 1.7).
 *
 * The ring is driven strictly from the kernel's shared indexes (no private
 * shadow of the SQ tail), so a ring adopted from an fd that another process
 * also maps stays consistent as long as nobody else uses it meanwhile.
 */
#ifndef IOUR_LIB_MINIRING_H
#define IOUR_LIB_MINIRING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "internal.h"
#include "iouring_restrict/names.h"

/* Every io_uring_setup flag the library knows (lib/base/kernel_facts.def:
 * bits 0 to 20, SQ_REWIND; doc/kernel.md 6.4). */
/* NOLINTBEGIN(bugprone-macro-parentheses): each row adds a bit */
enum {
	IOUR__SETUP_ALL_BITS = 0
#define IOUR_KF_SETUP(name, bit, maj, min) | 1 << (bit)
#include "kernel_facts.def"
};
/* NOLINTEND(bugprone-macro-parentheses) */
#define IOUR__SETUP_KNOWN ((uint32_t)IOUR__SETUP_ALL_BITS)

/*
 * Flags the ring creators (iour_ring_create(), iour_plan__create_ring())
 * accept: every known flag whose io_uring_setup() result is a file
 * descriptor.  REGISTERED_FD_ONLY returns an index into the task's
 * registered-ring table instead, which must never be used as a descriptor;
 * unknown bits may mean the same.
 */
#define IOUR__SETUP_FD_RESULT (IOUR__SETUP_KNOWN & ~KIO_SETUP_REGISTERED_FD_ONLY)

/*
 * Flags a ring created by iour__ring_init() may carry: the ring stays
 * interrupt-driven, mapped by the kernel, and every CQE has one size.
 */
#define IOUR__RING_INIT_FLAGS                                                                     \
	(KIO_SETUP_CLAMP | KIO_SETUP_R_DISABLED | KIO_SETUP_SUBMIT_ALL | KIO_SETUP_COOP_TASKRUN | \
	 KIO_SETUP_TASKRUN_FLAG | KIO_SETUP_SQE128 | KIO_SETUP_CQE32 | KIO_SETUP_SINGLE_ISSUER |  \
	 KIO_SETUP_DEFER_TASKRUN | KIO_SETUP_NO_SQARRAY)
/*
 * Flags an adopted ring may have been created with (iour__ring_from_fd):
 * the above plus those that only influence sizes or the io-wq.
 */
#define IOUR__RING_ADOPT_FLAGS (IOUR__RING_INIT_FLAGS | KIO_SETUP_CQSIZE | KIO_SETUP_ATTACH_WQ)
/* Flags that change where things are in the mappings. */
#define IOUR__RING_LAYOUT_FLAGS (KIO_SETUP_SQE128 | KIO_SETUP_CQE32 | KIO_SETUP_NO_SQARRAY)

struct iour__ring {
	int fd;
	bool owns_fd;      /* iour__ring_exit() closes fd */
	uint32_t flags;    /* IORING_SETUP_* of the ring */
	uint32_t features; /* IORING_FEAT_* reported at setup (0 if adopted) */
	uint32_t sq_entries;
	uint32_t cq_entries;
	uint32_t sq_mask;
	uint32_t cq_mask;
	unsigned int sqe_shift; /* 1 with SQE128 */
	unsigned int cqe_shift; /* 1 with CQE32 */

	void *sq_map; /* SQ ring (and CQ ring with a single mmap) */
	size_t sq_map_sz;
	void *cq_map; /* == sq_map with a single mmap */
	size_t cq_map_sz;
	void *sqes_map;
	size_t sqes_map_sz;

	uint32_t *sq_head;
	uint32_t *sq_tail;
	uint32_t *sq_array; /* NULL with IORING_SETUP_NO_SQARRAY */
	uint32_t *cq_head;
	uint32_t *cq_tail;
	uint8_t *cqes;

	uint64_t seq; /* makes each submission's user_data unique */
};

/*
 * Create a ring with io_uring_setup(entries, flags) as an application
 * would, and map it.  `flags` must be within IOUR__RING_INIT_FLAGS
 * (-EOPNOTSUPP otherwise: the mini ring cannot drive SQPOLL, IOPOLL,
 * NO_MMAP, mixed-size or registered-fd-only rings; -EINVAL for unknown
 * bits).  entries: 1..32768 (-EINVAL).  Other failures are io_uring_setup's
 * or mmap's negative errno, or -IOUR_ERRNO__KERNEL_MISMATCH when the mapped
 * ring contradicts the geometry setup reported.  On failure *r is left
 * closed (fd -1).
 */
IOUR_INTERNAL int iour__ring_init(struct iour__ring *r, uint32_t entries, uint32_t flags);

/*
 * Map an existing ring `fd` whose geometry is in `p` (as returned by
 * io_uring_setup for it, or by iour__ring_learn()).  The fd stays owned by
 * the caller.  -EINVAL on NULL arguments, a negative fd or a geometry that
 * does not hang together; -EOPNOTSUPP when p->flags names something the mini
 * ring cannot drive; mmap's -errno.  The mapped header is checked against
 * p (entries and masks): -EOPNOTSUPP when it does not match.
 */
IOUR_INTERNAL int iour__ring_from_fd(struct iour__ring *r, int fd, const struct kio_params *p);

/*
 * Learn the geometry of an existing ring `fd` created with the IORING_SETUP
 * flags `flags` (only IOUR__RING_LAYOUT_FLAGS matter), for
 * iour__ring_from_fd():
 * - the sizes come from /proc/self/fdinfo/<fd> (SqMask, CqMask);
 * - the offsets come from a twin ring created with the same sizes and
 *   layout flags (disabled, closed at once), which is exact on every
 *   kernel; when io_uring_setup is not permitted (for example a seccomp
 *   companion is active), from the layout of the Linux 6.x io_rings
 *   structure, which iour__ring_from_fd() then checks against the mapping.
 * Returns 0; -EBADF (fd not open); -ENOTTY (not an io_uring fd);
 * -EOPNOTSUPP (/proc unavailable, or flags cannot be driven); -EINVAL.
 * The twin ring is created in the calling process: callers run this in a
 * throwaway child (doc/kernel.md 3.4).
 */
IOUR_INTERNAL int iour__ring_learn(int fd, uint32_t flags, struct kio_params *p);

/*
 * Submit one SQE (copied; its user_data is replaced by the ring's own) and
 * wait for its completion, which is copied to *cqe_out (user_data restored
 * to the caller's value).  A request denied by restrictions is a success of
 * this call with cqe_out->res == -EACCES.
 * Returns 0, or a negative errno when no completion could be obtained:
 * - -EBADFD: the ring is still disabled (nothing was left queued);
 * - -EBUSY: the ring is not idle (SQEs or CQEs of somebody else pending, or
 *   a foreign CQE arrived first: it is left in place);
 * - -EINVAL: NULL argument or ring not initialised;
 * - any other io_uring_enter() error (-EEXIST on a single-issuer ring
 *   submitted from another task, -ENOSYS/-EPERM when a seccomp policy
 *   denies io_uring_enter, ...).  The SQ tail is rolled back whenever the
 *   kernel did not consume the SQE.
 */
IOUR_INTERNAL int iour__ring_submit_one(struct iour__ring *r, const struct kio_sqe *sqe,
					struct kio_cqe *cqe_out);

/* Unmap, and close the fd if the ring owns it.  Safe on a zeroed ring, on
 * a failed init, and twice. */
IOUR_INTERNAL void iour__ring_exit(struct iour__ring *r);

#endif /* IOUR_LIB_MINIRING_H */
