/* SPDX-License-Identifier: MIT */
/*
 * A minimal mmap'd io_uring for the guest checks: one SQE at a time, wait
 * for its CQE.  Uses only the library's own kernel definitions (lib/base/uapi.h),
 * no liburing.
 */
#ifndef IOUR_GUEST_MINI_RING_H
#define IOUR_GUEST_MINI_RING_H

#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "guest.h"

struct mini_ring {
	int fd;
	void *sq, *cq;
	size_t sq_sz, cq_sz, sqes_sz;
	struct kio_sqe *sqes;
	uint32_t *sq_head, *sq_tail, *sq_mask, *sq_array;
	uint32_t *cq_head, *cq_tail, *cq_mask;
	struct kio_cqe *cqes;
};

/* Map the rings of the io_uring fd, created with the params *pp the kernel
 * filled in (by io_uring_setup, or handed back by iour_ring_create()).
 * 0, or -ENOMEM after closing fd. */
static inline int mini_ring_map(struct mini_ring *r, int fd, const struct kio_params *pp)
{
	struct kio_params p = *pp;

	memset(r, 0, sizeof(*r));
	r->fd = fd;
	r->sq_sz = p.sq_off.array + p.sq_entries * sizeof(uint32_t);
	r->cq_sz = p.cq_off.cqes + p.cq_entries * sizeof(struct kio_cqe);
	if (p.features & KIO_FEAT_SINGLE_MMAP) {
		if (r->cq_sz > r->sq_sz)
			r->sq_sz = r->cq_sz;
		r->cq_sz = 0;
	}
	r->sq = mmap(NULL, r->sq_sz, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE,
		     r->fd, KIO_OFF_SQ_RING);
	if (r->sq == MAP_FAILED)
		goto fail;
	if (r->cq_sz) {
		r->cq = mmap(NULL, r->cq_sz, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE,
			     r->fd, KIO_OFF_CQ_RING);
		if (r->cq == MAP_FAILED)
			goto fail;
	} else {
		r->cq = r->sq;
	}
	r->sqes_sz = p.sq_entries * sizeof(struct kio_sqe);
	r->sqes = mmap(NULL, r->sqes_sz, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE,
		       r->fd, KIO_OFF_SQES);
	if (r->sqes == MAP_FAILED)
		goto fail;
	r->sq_head = (uint32_t *)((char *)r->sq + p.sq_off.head);
	r->sq_tail = (uint32_t *)((char *)r->sq + p.sq_off.tail);
	r->sq_mask = (uint32_t *)((char *)r->sq + p.sq_off.ring_mask);
	r->sq_array = (uint32_t *)((char *)r->sq + p.sq_off.array);
	r->cq_head = (uint32_t *)((char *)r->cq + p.cq_off.head);
	r->cq_tail = (uint32_t *)((char *)r->cq + p.cq_off.tail);
	r->cq_mask = (uint32_t *)((char *)r->cq + p.cq_off.ring_mask);
	r->cqes = (struct kio_cqe *)((char *)r->cq + p.cq_off.cqes);
	return 0;
fail:
	close(r->fd);
	return -ENOMEM;
}

/* 0 or -errno. */
static inline int mini_ring_init(struct mini_ring *r, uint32_t entries, uint32_t flags)
{
	struct kio_params p;
	long fd;

	memset(r, 0, sizeof(*r));
	memset(&p, 0, sizeof(p));
	p.flags = flags;
	fd = raw_setup(entries, &p);
	if (fd < 0)
		return (int)fd;
	return mini_ring_map(r, (int)fd, &p);
}

static inline void mini_ring_exit(struct mini_ring *r)
{
	if (r->sqes && r->sqes != MAP_FAILED)
		munmap(r->sqes, r->sqes_sz);
	if (r->cq_sz && r->cq && r->cq != MAP_FAILED)
		munmap(r->cq, r->cq_sz);
	if (r->sq && r->sq != MAP_FAILED)
		munmap(r->sq, r->sq_sz);
	close(r->fd);
}

/* Submit one SQE and wait for its completion.  Returns the io_uring_enter
 * result (the number submitted, or -errno); *res gets the CQE's result. */
static inline long mini_ring_run(struct mini_ring *r, const struct kio_sqe *sqe, int32_t *res)
{
	uint32_t tail = *r->sq_tail, idx = tail & *r->sq_mask, head;
	long rc;

	r->sqes[idx] = *sqe;
	r->sq_array[idx] = idx;
	__atomic_store_n(r->sq_tail, tail + 1, __ATOMIC_RELEASE);
	rc = raw_enter(r->fd, 1, 1, KIO_ENTER_GETEVENTS);
	if (rc < 0)
		return rc;
	head = *r->cq_head;
	if (head == __atomic_load_n(r->cq_tail, __ATOMIC_ACQUIRE))
		return -EAGAIN;
	*res = r->cqes[head & *r->cq_mask].res;
	__atomic_store_n(r->cq_head, head + 1, __ATOMIC_RELEASE);
	return rc;
}

/* Result mini_ring_op() gives when io_uring_enter failed or no completion
 * came (no kernel result has this value). */
#define MINI_RING_NO_CQE (-100000)

/* Submit one request with the given opcode, fd and SQE flags; READ and
 * WRITE (22, 23) get an 8-byte buffer.  Returns the completion's result,
 * or MINI_RING_NO_CQE. */
static inline int32_t mini_ring_op(struct mini_ring *r, uint8_t op, int fd, uint8_t flags)
{
	static char buf[8] = "abcdefgh";
	struct kio_sqe sqe;
	int32_t res = MINI_RING_NO_CQE;

	memset(&sqe, 0, sizeof(sqe));
	sqe.opcode = op;
	sqe.flags = flags;
	sqe.fd = fd;
	if (op == 22 || op == 23) {
		sqe.addr = (uintptr_t)buf;
		sqe.len = sizeof(buf);
	}
	if (mini_ring_run(r, &sqe, &res) != 1)
		return MINI_RING_NO_CQE;
	return res;
}

#endif
