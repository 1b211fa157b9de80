/* SPDX-License-Identifier: MIT */
/* Test helpers for rings: liburing rings created disabled, one-request
 * submission, and restriction sets built in one call. */
#ifndef IOUR_TEST_RING_UTIL_H
#define IOUR_TEST_RING_UTIL_H

#include <liburing.h>
#include <stdint.h>

#include "iouring_restrict/iouring_restrict.h"

/* io_uring_queue_init_params() with IORING_SETUP_R_DISABLED | extra. */
int ring_init_disabled(struct io_uring *ring, unsigned extra_flags);

/* io_uring_queue_mmap() plus the identity SQ index array, which liburing
 * 2.3 fills only in io_uring_queue_init_params(). */
int ring_mmap(int fd, struct io_uring_params *p, struct io_uring *ring);

/* Submit the one prepared SQE (sqe->user_data is set here), wait for its
 * completion; returns the submit count (1) or a -errno, and the CQE res in
 * *res. */
int ring_submit_wait(struct io_uring *ring, struct io_uring_sqe *sqe, int *res);

/* A ruleset allowing the `n` request opcodes (with SQE flags decided as
 * allowed/required), the `nreg` register opcodes (nreg < 0: register side
 * unrestricted).  n < 0: SQE side unrestricted.  Aborts on error. */
struct iour_ruleset *rs_make(const uint32_t *ops, int n, uint32_t allowed, uint32_t required,
			     const uint32_t *regs, int nreg);

#endif
