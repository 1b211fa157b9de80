/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ring_util.h"

int ring_init_disabled(struct io_uring *ring, unsigned extra_flags)
{
	struct io_uring_params p;

	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_R_DISABLED | extra_flags;
	return io_uring_queue_init_params(8, ring, &p);
}

int ring_mmap(int fd, struct io_uring_params *p, struct io_uring *ring)
{
	int r = io_uring_queue_mmap(fd, p, ring);

	if (r)
		return r;
	for (unsigned i = 0; i < ring->sq.ring_entries; i++)
		ring->sq.array[i] = i;
	return 0;
}

int ring_submit_wait(struct io_uring *ring, struct io_uring_sqe *sqe, int *res)
{
	static uint64_t seq = 1000;
	struct io_uring_cqe *cqe;
	uint64_t ud = ++seq;
	int r;

	io_uring_sqe_set_data64(sqe, ud);
	r = io_uring_submit(ring);
	if (r < 0)
		return r;
	if (r != 1)
		return -EPROTO;
	r = io_uring_wait_cqe(ring, &cqe);
	if (r < 0)
		return r;
	if (cqe->user_data != ud) {
		io_uring_cqe_seen(ring, cqe);
		return -EPROTO;
	}
	*res = cqe->res;
	io_uring_cqe_seen(ring, cqe);
	return 1;
}

struct iour_ruleset *rs_make(const uint32_t *ops, int n, uint32_t allowed, uint32_t required,
			     const uint32_t *regs, int nreg)
{
	struct iour_ruleset *rs = NULL;
	int i, r;

	r = iour_ruleset__new(NULL, &rs);
	if (r)
		goto fail;
	if (n >= 0) {
		r = iour_ruleset__deny_all_sqe_ops(rs);
		for (i = 0; !r && i < n; i++)
			r = iour_ruleset__allow_sqe_op(rs, ops[i]);
		if (!r)
			r = iour_ruleset__set_sqe_flags(rs, allowed, required);
	} else if (allowed != 0x7f || required) {
		r = iour_ruleset__set_sqe_flags(rs, allowed, required);
	}
	if (r)
		goto fail;
	if (nreg >= 0) {
		r = iour_ruleset__deny_all_register_ops(rs);
		for (i = 0; !r && i < nreg; i++)
			r = iour_ruleset__allow_register_op(rs, regs[i]);
		if (r)
			goto fail;
	}
	return rs;
fail:
	fprintf(stderr, "rs_make: %s\n", iour_errname(r));
	abort();
}
