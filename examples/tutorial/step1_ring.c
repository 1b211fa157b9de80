/* SPDX-License-Identifier: MIT */
/*
 * Tutorial step 1 (doc/tutorial.md): restrict one ring.
 *
 * liburing creates the ring disabled (IORING_SETUP_R_DISABLED); the library
 * registers an allow-list (NOP and READ only) and enables the ring.  An
 * allowed request completes; a forbidden one (WRITE) completes with
 * -EACCES.  Works on Linux 5.10 and later.  Exit status 0 only if the
 * kernel answered as the set says.
 */
#include <errno.h>
#include <liburing.h>
#include <stdio.h>
#include <string.h>

#include <iouring_restrict/iouring_restrict.h>

static int run(struct io_uring *ring)
{
	struct io_uring_cqe *cqe;
	int res;

	if (io_uring_submit(ring) != 1 || io_uring_wait_cqe(ring, &cqe))
		return -EPROTO;
	res = cqe->res;
	io_uring_cqe_seen(ring, cqe);
	return res;
}

int main(void)
{
	struct iour_ring_report rep = { .sz = sizeof(rep) };
	IOUR_OPTS(iour_ring_apply_opts, opts, .report = &rep);
	struct io_uring_params p;
	struct iour_ruleset *rs;
	struct io_uring ring;
	struct io_uring_sqe *sqe;
	int r, nop, wr;

	/* 1. The allow-list: NOP and READ, no SQE flag. */
	if ((r = iour_ruleset__new(NULL, &rs)) ||
	    (r = iour_ruleset__allow_sqe_op_name(rs, "NOP")) ||
	    (r = iour_ruleset__allow_sqe_op_name(rs, "READ")) ||
	    (r = iour_ruleset__set_sqe_flags(rs, 0, 0))) {
		fprintf(stderr, "step1: ruleset: %s\n", iour_strerror_desc(r));
		return 1;
	}

	/* 2. liburing creates the ring, disabled. */
	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_R_DISABLED;
	r = io_uring_queue_init_params(8, &ring, &p);
	if (r) {
		fprintf(stderr, "step1: io_uring_queue_init_params: %s\n", iour_strerror_desc(r));
		return 1;
	}

	/* 3. The library registers the set and enables the ring (no need for
	 * liburing's io_uring_enable_rings(), which Debian 12's liburing 2.3
	 * lacks). */
	r = iour_ring_apply(ring.ring_fd, rs, &opts);
	iour_ruleset__free(rs);
	if (r) {
		fprintf(stderr, "step1: iour_ring_apply: %s (%s)\n", iour_errname(r),
			iour_strerror_desc(r));
		return 1;
	}
	printf("step1: ring restricted: %u entries registered, enabled=%u\n", rep.nr_entries,
	       rep.enabled);

	/* 4. Use it. */
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_nop(sqe);
	nop = run(&ring);
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_write(sqe, 1, "not printed\n", 12, 0);
	wr = run(&ring);
	printf("step1: NOP -> %d (allowed)\n", nop);
	printf("step1: WRITE -> %s (not in the set)\n", wr < 0 ? iour_errname(wr) : "completed");
	io_uring_queue_exit(&ring);
	if (nop != 0 || wr != -EACCES) {
		printf("step1: FAILED: expected NOP 0 and WRITE -EACCES\n");
		return 1;
	}
	printf("step1: ok\n");
	return 0;
}
