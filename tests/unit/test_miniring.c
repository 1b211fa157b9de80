/* SPDX-License-Identifier: MIT */
/* The library's minimal ring against the real kernel. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/miniring.h"
#include "base/sys.h"
#include "uring_avail.h"

static struct kio_sqe sqe_of(uint8_t op, int fd, uint64_t addr, uint32_t len, uint64_t off,
			     uint64_t ud)
{
	struct kio_sqe s;

	memset(&s, 0, sizeof(s));
	s.opcode = op;
	s.fd = fd;
	s.addr = addr;
	s.len = len;
	s.off = off;
	s.user_data = ud;
	return s;
}

/* NOP, READ and WRITE on a pipe, OPENAT of /dev/null on ring r. */
static void basic_ops(struct iour__ring *r)
{
	struct kio_sqe s;
	struct kio_cqe c;
	char buf[8] = { 0 };
	struct stat st;
	int p[2];

	s = sqe_of(IOUR_OP_NOP, -1, 0, 0, 0, 0x1234);
	cr_assert_eq(iour__ring_submit_one(r, &s, &c), 0);
	cr_assert_eq(c.res, 0);
	cr_assert_eq(c.user_data, 0x1234);

	cr_assert_eq(pipe(p), 0);
	cr_assert_eq(write(p[1], "abc", 3), 3);
	s = sqe_of(IOUR_OP_READ, p[0], (uintptr_t)buf, 3, (uint64_t)-1, 2);
	cr_assert_eq(iour__ring_submit_one(r, &s, &c), 0);
	cr_assert_eq(c.res, 3);
	cr_assert_str_eq(buf, "abc");

	s = sqe_of(IOUR_OP_WRITE, p[1], (uintptr_t)"hello", 5, (uint64_t)-1, 3);
	cr_assert_eq(iour__ring_submit_one(r, &s, &c), 0);
	cr_assert_eq(c.res, 5);
	memset(buf, 0, sizeof(buf));
	cr_assert_eq(read(p[0], buf, sizeof(buf)), 5);
	cr_assert_str_eq(buf, "hello");
	close(p[0]);
	close(p[1]);

	s = sqe_of(IOUR_OP_OPENAT, AT_FDCWD, (uintptr_t)"/dev/null", 0, 0, 4);
	s.op_flags = O_RDONLY | O_CLOEXEC;
	cr_assert_eq(iour__ring_submit_one(r, &s, &c), 0);
	cr_assert_geq(c.res, 0, "openat res %d", c.res);
	cr_assert_eq(fstat(c.res, &st), 0);
	cr_assert(S_ISCHR(st.st_mode));
	close(c.res);

	/* a failing request is still a completion */
	s = sqe_of(IOUR_OP_OPENAT, AT_FDCWD, (uintptr_t)"/nonexistent/x", 0, 0, 5);
	cr_assert_eq(iour__ring_submit_one(r, &s, &c), 0);
	cr_assert_eq(c.res, -ENOENT);
}

Test(miniring, nop_read_write_openat)
{
	UNIT_REQUIRE_URING();
	struct iour__ring r;

	cr_assert_eq(iour__ring_init(&r, 4, 0), 0);
	cr_assert_geq(r.fd, 0);
	cr_assert(r.owns_fd);
	cr_assert(r.features & KIO_FEAT_SINGLE_MMAP);
	basic_ops(&r);
	iour__ring_exit(&r);
	cr_assert_eq(r.fd, -1);
	iour__ring_exit(&r); /* twice is fine */
}

Test(miniring, indexes_wrap_around)
{
	UNIT_REQUIRE_URING();
	struct iour__ring r;
	struct kio_sqe s = sqe_of(IOUR_OP_NOP, -1, 0, 0, 0, 0);
	struct kio_cqe c;
	int i;

	cr_assert_eq(iour__ring_init(&r, 2, 0), 0);
	for (i = 0; i < 100; i++) {
		s.user_data = (uint64_t)i * 77;
		cr_assert_eq(iour__ring_submit_one(&r, &s, &c), 0);
		cr_assert_eq(c.user_data, (uint64_t)i * 77);
	}
	cr_assert_eq(*r.sq_tail, 100);
	cr_assert_eq(*r.cq_head, 100);
	iour__ring_exit(&r);
}

/* Every flag combination the mini ring claims to drive really works. */
Test(miniring, setup_flag_variants)
{
	UNIT_REQUIRE_URING();
	static const uint32_t variants[] = {
		KIO_SETUP_CLAMP,
		KIO_SETUP_SUBMIT_ALL,
		KIO_SETUP_COOP_TASKRUN | KIO_SETUP_TASKRUN_FLAG,
		KIO_SETUP_SQE128,
		KIO_SETUP_CQE32,
		KIO_SETUP_SQE128 | KIO_SETUP_CQE32,
		KIO_SETUP_SINGLE_ISSUER,
		KIO_SETUP_SINGLE_ISSUER | KIO_SETUP_DEFER_TASKRUN,
		KIO_SETUP_NO_SQARRAY,
		KIO_SETUP_NO_SQARRAY | KIO_SETUP_SQE128 | KIO_SETUP_CQE32,
	};
	size_t i;

	for (i = 0; i < IOUR_ARRAY_SIZE(variants); i++) {
		struct iour__ring r;

		cr_assert_eq(iour__ring_init(&r, 4, variants[i]), 0, "flags 0x%x", variants[i]);
		basic_ops(&r);
		basic_ops(&r); /* second round: slots other than 0 */
		iour__ring_exit(&r);
	}
	fprintf(stderr, "miniring: %zu setup-flag variants driven on the real kernel\n", i);
}

Test(miniring, init_bad_input)
{
	struct iour__ring r;

	cr_assert_eq(iour__ring_init(NULL, 4, 0), -EINVAL);
	cr_assert_eq(iour__ring_init(&r, 0, 0), -EINVAL);
	cr_assert_eq(r.fd, -1);
	cr_assert_eq(iour__ring_init(&r, 32769, 0), -EINVAL);
	cr_assert_eq(iour__ring_init(&r, 4, 1U << 30), -EINVAL);
	cr_assert_eq(iour__ring_init(&r, 4, KIO_SETUP_SQPOLL), -EOPNOTSUPP);
	cr_assert_eq(iour__ring_init(&r, 4, KIO_SETUP_IOPOLL), -EOPNOTSUPP);
	cr_assert_eq(iour__ring_init(&r, 4, KIO_SETUP_NO_MMAP), -EOPNOTSUPP);
	cr_assert_eq(iour__ring_init(&r, 4, KIO_SETUP_CQE_MIXED), -EOPNOTSUPP);
	cr_assert_eq(iour__ring_init(&r, 4, KIO_SETUP_CQSIZE), -EOPNOTSUPP);
	cr_assert_eq(iour__ring_init(&r, 4, KIO_SETUP_DEFER_TASKRUN), -EINVAL);
	cr_assert_eq(iour__ring_submit_one(NULL, NULL, NULL), -EINVAL);
	cr_assert_eq(r.fd, -1);
	iour__ring_exit(&r);
	iour__ring_exit(NULL);
}

/* The liburing gotcha (doc/kernel.md 1.7): a submission on a
 * disabled ring must not stay queued and pop out after enable. */
Test(miniring, disabled_ring_rolls_back)
{
	UNIT_REQUIRE_URING();
	struct iour__ring r;
	struct kio_sqe s = sqe_of(IOUR_OP_NOP, -1, 0, 0, 0, 9);
	struct kio_cqe c;

	cr_assert_eq(iour__ring_init(&r, 4, KIO_SETUP_R_DISABLED), 0);
	cr_assert_eq(iour__ring_submit_one(&r, &s, &c), -EBADFD);
	cr_assert_eq(*r.sq_tail, *r.sq_head, "SQ tail not rolled back");
	cr_assert_eq(iour__register(r.fd, KIO_REGISTER_ENABLE_RINGS, NULL, 0), 0);
	s.user_data = 10;
	cr_assert_eq(iour__ring_submit_one(&r, &s, &c), 0);
	cr_assert_eq(c.user_data, 10);
	/* exactly one SQE was ever consumed and one CQE ever posted */
	cr_assert_eq(*r.sq_head, 1);
	cr_assert_eq(*r.cq_tail, 1);
	iour__ring_exit(&r);
}

/* A denied SQE is consumed and completes with -EACCES; the ring keeps
 * working (doc/kernel.md 1.7). */
Test(miniring, denied_sqe_is_consumed)
{
	UNIT_REQUIRE_URING();
	struct kio_restriction res[2];
	struct iour__ring r;
	struct kio_sqe s;
	struct kio_cqe c;
	int p[2];

	cr_assert_eq(pipe(p), 0);
	cr_assert_eq(iour__ring_init(&r, 4, KIO_SETUP_R_DISABLED), 0);
	memset(res, 0, sizeof(res));
	res[0].opcode = KIO_RESTRICTION_SQE_OP;
	res[0].sqe_op = IOUR_OP_NOP;
	res[1].opcode = KIO_RESTRICTION_SQE_FLAGS_ALLOWED;
	res[1].sqe_flags = 0;
	cr_assert_eq(iour__register(r.fd, KIO_REGISTER_RESTRICTIONS, res, 2), 0);
	cr_assert_eq(iour__register(r.fd, KIO_REGISTER_ENABLE_RINGS, NULL, 0), 0);

	s = sqe_of(IOUR_OP_WRITE, p[1], (uintptr_t)"x", 1, (uint64_t)-1, 1);
	cr_assert_eq(iour__ring_submit_one(&r, &s, &c), 0);
	cr_assert_eq(c.res, -EACCES);
	cr_assert_eq(*r.sq_head, 1, "the denied SQE was consumed");
	s = sqe_of(IOUR_OP_NOP, -1, 0, 0, 0, 2);
	cr_assert_eq(iour__ring_submit_one(&r, &s, &c), 0);
	cr_assert_eq(c.res, 0);
	s.flags = 0x10; /* IOSQE_ASYNC: no flag allowed */
	cr_assert_eq(iour__ring_submit_one(&r, &s, &c), 0);
	cr_assert_eq(c.res, -EACCES);
	iour__ring_exit(&r);
	close(p[0]);
	close(p[1]);
}

/* Adopt a ring created elsewhere (raw io_uring_setup: liburing 2.3 does not
 * know NO_SQARRAY and would write its SQ array over the ring header): the
 * learned geometry equals what the kernel reported at setup. */
Test(miniring, learn_and_adopt_foreign_ring)
{
	UNIT_REQUIRE_URING();
	static const uint32_t flags[] = { 0, KIO_SETUP_SQE128, KIO_SETUP_CQE32,
					  KIO_SETUP_NO_SQARRAY, KIO_SETUP_SUBMIT_ALL };
	size_t i;

	for (i = 0; i < IOUR_ARRAY_SIZE(flags); i++) {
		struct kio_params up, kp;
		struct iour__ring r;
		int fd, lrc;

		memset(&up, 0, sizeof(up));
		up.flags = flags[i] | KIO_SETUP_CQSIZE;
		up.cq_entries = 32;
		fd = (int)iour__setup(8, &up);
		cr_assert_geq(fd, 0);
		lrc = iour__ring_learn(fd, flags[i], &kp);
		cr_assert_eq(lrc, 0, "learn flags 0x%x: %d", flags[i], lrc);
		cr_assert_eq(kp.sq_entries, 8);
		cr_assert_eq(kp.cq_entries, 32);
		cr_assert_eq(kp.sq_off.array, up.sq_off.array, "flags 0x%x", flags[i]);
		cr_assert_eq(kp.cq_off.cqes, up.cq_off.cqes);
		cr_assert_eq(kp.sq_off.tail, up.sq_off.tail);
		cr_assert_eq(kp.cq_off.tail, up.cq_off.tail);
		cr_assert_eq(kp.sq_off.ring_entries, up.sq_off.ring_entries);
		cr_assert_eq(kp.cq_off.ring_mask, up.cq_off.ring_mask);
		cr_assert_eq(iour__ring_from_fd(&r, fd, &kp), 0);
		cr_assert(!r.owns_fd);
		basic_ops(&r);
		basic_ops(&r);
		iour__ring_exit(&r);
		cr_assert_geq(fcntl(fd, F_GETFD), 0, "adopted fd was closed");
		close(fd);
	}
}

static long setup_enosys(void *ctx, uint32_t entries, void *params)
{
	(void)ctx;
	(void)entries;
	(void)params;
	return -ENOSYS;
}

/* Without io_uring_setup (a companion filter is active) the offsets come
 * from the known layout the mapped header matches (compact here). */
Test(miniring, learn_without_setup_uses_checked_layout)
{
	UNIT_REQUIRE_URING();
	struct iour_sys_ops ops = *iour__sys_real();
	struct kio_params kp;
	struct io_uring lr;
	struct iour__ring r;

	cr_assert_eq(io_uring_queue_init(16, &lr, 0), 0);
	ops.io_uring_setup = setup_enosys;
	iour__sys_set(&ops);
	cr_assert_eq(iour__ring_learn(lr.ring_fd, 0, &kp), 0);
	cr_assert_eq(kp.sq_entries, 16);
	cr_assert_eq(iour__ring_from_fd(&r, lr.ring_fd, &kp), 0);
	basic_ops(&r);
	iour__ring_exit(&r);
	/* a wrong geometry is refused by the header check */
	kp.sq_entries = 8;
	cr_assert_eq(iour__ring_from_fd(&r, lr.ring_fd, &kp), -EOPNOTSUPP);
	iour__sys_set(NULL);
	io_uring_queue_exit(&lr);
}

/* A ring header in the layout of Linux 5.10 and 6.1 (doc/kernel.md "Ring
 * header layouts": head and tail each on their own 64-byte line, masks from
 * 256, CQEs from 320), served by the mmap seam: emulated, since this host's
 * kernel has the compact layout. */
static uint32_t old_hdr[1024] __attribute__((aligned(4096)));

static long mmap_old_header(void *ctx, void **out, size_t len, int prot, int flags, int fd,
			    off_t off)
{
	(void)ctx;
	(void)prot;
	(void)flags;
	(void)fd;
	if (off != 0 || len > sizeof(old_hdr))
		return -EINVAL;
	*out = old_hdr;
	return 0;
}

static long munmap_old_header(void *ctx, void *addr, size_t len)
{
	(void)ctx;
	(void)len;
	return addr == old_hdr ? 0 : -EINVAL;
}

Test(miniring, learn_without_setup_reads_emulated_cacheline_layout)
{
	UNIT_REQUIRE_URING();
	struct iour_sys_ops ops = *iour__sys_real();
	struct kio_params kp;
	struct io_uring lr;

	memset(old_hdr, 0, sizeof(old_hdr));
	old_hdr[256 / 4] = 15; /* sq mask */
	old_hdr[260 / 4] = 31; /* cq mask */
	old_hdr[264 / 4] = 16; /* sq entries */
	old_hdr[268 / 4] = 32; /* cq entries */
	cr_assert_eq(io_uring_queue_init(16, &lr, 0), 0);
	ops.io_uring_setup = setup_enosys;
	ops.mmap = mmap_old_header;
	ops.munmap = munmap_old_header;
	iour__sys_set(&ops);
	cr_assert_eq(iour__ring_learn(lr.ring_fd, 0, &kp), 0, "the 5.10/6.1 header is recognised");
	iour__sys_set(NULL);
	cr_assert_eq(kp.sq_entries, 16);
	cr_assert_eq(kp.cq_entries, 32);
	cr_assert_eq(kp.sq_off.tail, 64);
	cr_assert_eq(kp.cq_off.head, 128);
	cr_assert_eq(kp.cq_off.tail, 192);
	cr_assert_eq(kp.sq_off.ring_entries, 264);
	cr_assert_eq(kp.cq_off.overflow, 284);
	cr_assert_eq(kp.cq_off.cqes, 320);
	cr_assert_eq(kp.sq_off.array, 320 + 32 * 16, "SQ array after the CQEs, line-aligned");
	/* a header that fits no known layout is refused */
	memset(old_hdr, 0, sizeof(old_hdr));
	iour__sys_set(&ops);
	cr_assert_eq(iour__ring_learn(lr.ring_fd, 0, &kp), -ENOTTY);
	iour__sys_set(NULL);
	io_uring_queue_exit(&lr);
}

Test(miniring, learn_bad_input)
{
	struct kio_params kp;
	int p[2], fd;

	cr_assert_eq(iour__ring_learn(-1, 0, &kp), -EINVAL);
	cr_assert_eq(iour__ring_learn(0, 0, NULL), -EINVAL);
	cr_assert_eq(iour__ring_learn(0, KIO_SETUP_SQPOLL, &kp), -EOPNOTSUPP);
	cr_assert_eq(iour__ring_learn(0, 1U << 29, &kp), -EINVAL);
	cr_assert_eq(iour__ring_learn(9999, 0, &kp), -EBADF);
	cr_assert_eq(pipe(p), 0);
	cr_assert_eq(iour__ring_learn(p[0], 0, &kp), -ENOTTY);
	fd = open("/dev/null", O_RDONLY);
	cr_assert_eq(iour__ring_learn(fd, 0, &kp), -ENOTTY);
	close(fd);
	close(p[0]);
	close(p[1]);
	cr_assert_eq(iour__ring_from_fd(NULL, 0, &kp), -EINVAL);
}

/* A ring somebody else is using is not touched. */
Test(miniring, busy_ring_is_left_alone)
{
	UNIT_REQUIRE_URING();
	struct io_uring lr;
	struct io_uring_sqe *ls;
	struct io_uring_cqe *lc;
	struct kio_params kp;
	struct iour__ring r;
	struct kio_sqe s = sqe_of(IOUR_OP_NOP, -1, 0, 0, 0, 1);
	struct kio_cqe c;

	cr_assert_eq(io_uring_queue_init(8, &lr, 0), 0);
	ls = io_uring_get_sqe(&lr);
	io_uring_prep_nop(ls);
	ls->user_data = 4242;
	cr_assert_eq(io_uring_submit(&lr), 1);
	cr_assert_eq(iour__ring_learn(lr.ring_fd, 0, &kp), 0);
	cr_assert_eq(iour__ring_from_fd(&r, lr.ring_fd, &kp), 0);
	cr_assert_eq(iour__ring_submit_one(&r, &s, &c), -EBUSY);
	iour__ring_exit(&r);
	cr_assert_eq(io_uring_wait_cqe(&lr, &lc), 0);
	cr_assert_eq(lc->user_data, 4242, "the foreign CQE was consumed");
	io_uring_cqe_seen(&lr, lc);
	io_uring_queue_exit(&lr);
}
