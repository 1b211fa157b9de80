/* SPDX-License-Identifier: MIT */
/*
 * Restricting a ring that liburing created: io_uring_queue_init_params()
 * with IORING_SETUP_R_DISABLED, iour_ring_apply() on its fd without
 * enabling, then liburing's io_uring_enable_rings().  Exits 0 only if the
 * kernel enforces the set.
 *
 * liburing declares io_uring_enable_rings() since 2.0, but its shared
 * library exports it only from 2.4 on (the 2.3 map lacks it); on older
 * liburing the example falls back to iour_ring_enable(), which makes the
 * same system call.
 */
#include <errno.h>
#include <liburing.h>
#include <stdio.h>
#include <string.h>

#include <iouring_restrict/iouring_restrict.h>

#pragma weak io_uring_enable_rings

static int submit_one(struct io_uring *ring, struct io_uring_sqe *sqe, uint64_t tag)
{
	struct io_uring_cqe *cqe;
	int res;

	io_uring_sqe_set_data64(sqe, tag);
	if (io_uring_submit(ring) != 1 || io_uring_wait_cqe(ring, &cqe))
		return -EPROTO;
	res = cqe->user_data == tag ? cqe->res : -EPROTO;
	io_uring_cqe_seen(ring, cqe);
	return res;
}

int main(void)
{
	struct iour_ring_report rep = { .sz = sizeof(rep) };
	IOUR_OPTS(iour_ring_apply_opts, opts, .flags = IOUR_RING_APPLY_NO_ENABLE, .report = &rep);
	struct iour_ruleset *rs = NULL;
	struct io_uring_params p;
	struct io_uring ring;
	struct io_uring_sqe *sqe;
	const char *how;
	int r, nop, write_res, ok;

	if ((r = iour_ruleset__new(NULL, &rs)) || (r = iour_ruleset__allow_sqe_op_name(rs, "NOP")) ||
	    (r = iour_ruleset__set_sqe_flags(rs, 0, 0))) {
		fprintf(stderr, "liburing_ring: ruleset: %s\n", iour_errname(r));
		return 1;
	}

	/* 1. liburing creates the ring, disabled. */
	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_R_DISABLED;
	r = io_uring_queue_init_params(8, &ring, &p);
	if (r) {
		fprintf(stderr, "liburing_ring: io_uring_queue_init_params: %s\n", iour_errname(r));
		return 1;
	}

	/* 2. The library registers the restrictions (not enabling). */
	r = iour_ring_apply(ring.ring_fd, rs, &opts);
	if (r) {
		fprintf(stderr, "liburing_ring: iour_ring_apply: %s\n", iour_errname(r));
		return 1;
	}
	printf("restricted ring %d: %u entries for %u request / %u register opcodes\n",
	       ring.ring_fd, rep.nr_entries, rep.op_last, rep.reg_last);

	/* 3. liburing enables it (this thread becomes the submitter of a
	 * SINGLE_ISSUER ring). */
	if (io_uring_enable_rings) {
		how = "io_uring_enable_rings()";
		r = io_uring_enable_rings(&ring);
	} else {
		how = "iour_ring_enable() (this liburing does not export io_uring_enable_rings)";
		r = iour_ring_enable(ring.ring_fd);
	}
	printf("enabled with %s: %s\n", how, r ? iour_errname(r) : "ok");
	if (r)
		return 1;

	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_nop(sqe);
	nop = submit_one(&ring, sqe, 1);
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_write(sqe, 1, "never printed\n", 14, 0);
	write_res = submit_one(&ring, sqe, 2);
	printf("NOP   -> %d (allowed)\n", nop);
	printf("WRITE -> %d %s (not in the set)\n", write_res, iour_errname(write_res));

	ok = nop == 0 && write_res == -EACCES;
	io_uring_queue_exit(&ring);
	iour_ruleset__free(rs);
	printf("%s\n", ok ? "the kernel enforced the set" : "UNEXPECTED RESULT");
	return ok ? 0 : 1;
}
