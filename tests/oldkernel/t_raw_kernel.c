/* SPDX-License-Identifier: MIT */
/*
 * What a real pre-6.18 kernel answers (5.10 to 6.17; written for 6.1, with
 * this generation's limits from guest.h), with raw syscalls
 * (doc/kernel.md 1, 2 and 5):
 * no blind register path, no QUERY, 49 request and 26 register opcodes,
 * 79 restriction entries at most, and the per-ring restriction matrix with
 * the coupled (pre-7.0) gates.
 */
#include "mini_ring.h"

#define OP_NOP 0
#define OP_WRITE 23
#define REG_FILES 2
#define IOSQE_ASYNC 0x10
/* this generation's IORING_OP_LAST and IORING_REGISTER_LAST (guest.h) */
#define OP_LAST_6_1 ((int)guest_gen()->op_last)
#define REG_LAST_6_1 ((int)guest_gen()->reg_last)

static struct kio_restriction res(uint16_t opcode, uint8_t v)
{
	struct kio_restriction r;

	memset(&r, 0, sizeof(r));
	r.opcode = opcode;
	r.sqe_op = v;
	return r;
}

static long restrict_ring(int fd, const struct kio_restriction *r, uint32_t n)
{
	return raw_register(fd, KIO_REGISTER_RESTRICTIONS, (void *)r, n);
}

static long enable(int fd)
{
	return raw_register(fd, KIO_REGISTER_ENABLE_RINGS, NULL, 0);
}

static int disabled_ring(void)
{
	struct kio_params p;

	memset(&p, 0, sizeof(p));
	p.flags = KIO_SETUP_R_DISABLED;
	return (int)raw_setup(4, &p);
}

static void check_blind_path(void)
{
	static const uint32_t ops[] = { 0, KIO_REGISTER_PROBE, KIO_REGISTER_RESTRICTIONS,
					KIO_REGISTER_ENABLE_RINGS };
	/* header and one entry, without a struct holding a flexible array */
	uint64_t task[(sizeof(struct kio_task_restriction) + sizeof(struct kio_restriction)) / 8];
	struct kio_task_restriction *th = (struct kio_task_restriction *)task;
	struct kio_restriction one = res(KIO_RESTRICTION_SQE_OP, OP_NOP);
	struct kio_query_hdr q;
	char name[64];

	CHECK_EQ("io_uring_setup(1, NULL) (usable: EFAULT)", raw_setup(1, NULL), -EFAULT);
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		snprintf(name, sizeof(name), "blind register op %u (no blind path)", ops[i]);
		CHECK_EQ(name, raw_register(-1, ops[i], NULL, 0), -EBADF);
	}
	memset(task, 0, sizeof(task));
	th->nr_res = 1;
	memcpy((char *)task + sizeof(*th), &one, sizeof(one));
	CHECK_EQ("blind task RESTRICTIONS (no task restrictions)",
		 raw_register(-1, KIO_REGISTER_RESTRICTIONS, task, 1), -EBADF);
	CHECK_EQ("blind task RESTRICTIONS probe (d)",
		 raw_register(-1, KIO_REGISTER_RESTRICTIONS, NULL, 1), -EBADF);
	memset(&q, 0, sizeof(q));
	CHECK_EQ("blind QUERY (35 >= REGISTER_LAST)", raw_register(-1, KIO_REGISTER_QUERY, &q, 0),
		 -EINVAL);
	CHECK_EQ("blind QUERY with the registered-ring bit",
		 raw_register(-1, KIO_REGISTER_QUERY | KIO_REGISTER_USE_REGISTERED_RING, NULL, 0),
		 -EINVAL);
	CHECK_EQ("blind SEND_MSG_RING (31 >= REGISTER_LAST)", raw_register(-1, 31, NULL, 0),
		 -EINVAL);
	CHECK_EQ("blind BPF_FILTER probe (c')", raw_register(-1, KIO_REGISTER_BPF_FILTER, NULL, 1),
		 -EINVAL);
	CHECK_EQ("register op REGISTER_LAST on fd -2 (range checked first)",
		 raw_register(-2, (uint32_t)REG_LAST_6_1, NULL, 0), -EINVAL);
	CHECK_EQ("register op REGISTER_LAST - 1 on fd -2",
		 raw_register(-2, (uint32_t)REG_LAST_6_1 - 1, NULL, 0), -EBADF);
}

static void check_limits(void)
{
	size_t psz = sizeof(struct kio_probe) + 256 * sizeof(struct kio_probe_op);
	struct kio_restriction many[160], r;
	static uint8_t pbuf[sizeof(struct kio_probe) + 256 * sizeof(struct kio_probe_op)];
	struct kio_probe *p = (struct kio_probe *)pbuf;
	int fd = disabled_ring(), n;

	CHECK("R_DISABLED ring created", fd >= 0);
	memset(p, 0, psz);
	CHECK_EQ("PROBE on a disabled ring", raw_register(fd, KIO_REGISTER_PROBE, p, 256), 0);
	CHECK_EQ("PROBE last_op", p->last_op, OP_LAST_6_1 - 1);
	CHECK_EQ("PROBE ops_len", p->ops_len, OP_LAST_6_1);
	n = 0;
	for (int i = 0; i < p->ops_len; i++)
		n += !!(p->ops[i].flags & KIO_OP_SUPPORTED);
	CHECK_EQ("PROBE opcodes supported", n, OP_LAST_6_1);
	CHECK_EQ("ring BPF_FILTER (37 >= REGISTER_LAST)",
		 raw_register(fd, KIO_REGISTER_BPF_FILTER, NULL, 1), -EINVAL);
	CHECK_EQ("ring QUERY (35 >= REGISTER_LAST)", raw_register(fd, KIO_REGISTER_QUERY, NULL, 0),
		 -EINVAL);
	CHECK_EQ("ring register op REGISTER_LAST",
		 raw_register(fd, (uint32_t)REG_LAST_6_1, NULL, 0), -EINVAL);
	r = res(KIO_RESTRICTION_SQE_OP, OP_LAST_6_1);
	CHECK_EQ("restriction sqe_op OP_LAST", restrict_ring(fd, &r, 1), -EINVAL);
	r = res(KIO_RESTRICTION_REGISTER_OP, REG_LAST_6_1);
	CHECK_EQ("restriction register_op REGISTER_LAST", restrict_ring(fd, &r, 1), -EINVAL);
	r = res(4, 0);
	CHECK_EQ("restriction opcode 4", restrict_ring(fd, &r, 1), -EINVAL);
	for (size_t i = 0; i < sizeof(many) / sizeof(many[0]); i++)
		many[i] = res(KIO_RESTRICTION_SQE_FLAGS_ALLOWED, 0);
	CHECK_EQ("4 + REGISTER_LAST + OP_LAST + 1 restriction entries",
		 restrict_ring(fd, many, (uint32_t)(5 + REG_LAST_6_1 + OP_LAST_6_1)), -EINVAL);
	many[0] = res(KIO_RESTRICTION_SQE_OP, OP_LAST_6_1 - 1);
	many[1] = res(KIO_RESTRICTION_REGISTER_OP, REG_LAST_6_1 - 1);
	CHECK_EQ("4 + REGISTER_LAST + OP_LAST restriction entries (after failures: retry allowed)",
		 restrict_ring(fd, many, (uint32_t)(4 + REG_LAST_6_1 + OP_LAST_6_1)), 0);
	CHECK_EQ("second RESTRICTIONS", restrict_ring(fd, many, 1), -EBUSY);
	close(fd);
}

static void check_ring_matrix(void)
{
	struct kio_restriction r[3];
	struct mini_ring ring;
	struct kio_sqe sqe;
	int pipefd[2];
	int32_t cqe = 1;
	long rc;

	/* an enabled ring cannot be restricted */
	if (mini_ring_init(&ring, 4, 0) == 0) {
		r[0] = res(KIO_RESTRICTION_SQE_OP, OP_NOP);
		CHECK_EQ("RESTRICTIONS on an enabled ring", restrict_ring(ring.fd, r, 1), -EBADFD);
		CHECK_EQ("ENABLE_RINGS on an enabled ring", enable(ring.fd), -EBADFD);
		mini_ring_exit(&ring);
	} else {
		CHECK("ring created", 0);
	}

	/* the disabled ring rejects io_uring_enter */
	if (mini_ring_init(&ring, 4, KIO_SETUP_R_DISABLED) == 0) {
		CHECK_EQ("io_uring_enter on an R_DISABLED ring", raw_enter(ring.fd, 0, 0, 0),
			 -EBADFD);
		mini_ring_exit(&ring);
	}

	/* allow NOP only (flags allowed: none) */
	if (pipe(pipefd)) {
		CHECK("pipe", 0);
		return;
	}
	if (mini_ring_init(&ring, 4, KIO_SETUP_R_DISABLED) != 0) {
		CHECK("R_DISABLED ring created", 0);
		return;
	}
	r[0] = res(KIO_RESTRICTION_SQE_OP, OP_NOP);
	r[1] = res(KIO_RESTRICTION_SQE_FLAGS_ALLOWED, 0);
	CHECK_EQ("RESTRICTIONS {NOP}", restrict_ring(ring.fd, r, 2), 0);
	CHECK_EQ("REGISTER_FILES on the disabled restricted ring: not gated",
		 raw_register(ring.fd, REG_FILES, &pipefd[0], 1), 0);
	CHECK_EQ("ENABLE_RINGS", enable(ring.fd), 0);
	memset(&sqe, 0, sizeof(sqe));
	sqe.opcode = OP_NOP;
	sqe.user_data = 1;
	rc = mini_ring_run(&ring, &sqe, &cqe);
	CHECK_EQ("allowed NOP submitted", rc, 1);
	CHECK_EQ("allowed NOP completes", cqe, 0);
	memset(&sqe, 0, sizeof(sqe));
	sqe.opcode = OP_WRITE;
	sqe.fd = pipefd[1];
	sqe.addr = (uintptr_t) "12345678";
	sqe.len = 8;
	sqe.user_data = 2;
	rc = mini_ring_run(&ring, &sqe, &cqe);
	CHECK_EQ("forbidden WRITE consumed", rc, 1);
	CHECK_EQ("forbidden WRITE", cqe, -EACCES);
	memset(&sqe, 0, sizeof(sqe));
	sqe.opcode = OP_NOP;
	sqe.flags = IOSQE_ASYNC;
	rc = mini_ring_run(&ring, &sqe, &cqe);
	CHECK_EQ("NOP with a flag not allowed", cqe, -EACCES);
	/* coupled gates: an SQE-only set denies every register op */
	CHECK_EQ("PROBE after enable (coupled gates)",
		 raw_register(ring.fd, KIO_REGISTER_PROBE, NULL, 0), -EACCES);
	CHECK_EQ("REGISTER_FILES after enable", raw_register(ring.fd, REG_FILES, NULL, 0), -EACCES);
	CHECK_EQ("ENABLE_RINGS again (gated first)", enable(ring.fd), -EACCES);
	CHECK_EQ("RESTRICTIONS after enable", restrict_ring(ring.fd, r, 1), -EACCES);
	mini_ring_exit(&ring);

	/* allow WRITE and PROBE; require ASYNC */
	if (mini_ring_init(&ring, 4, KIO_SETUP_R_DISABLED) == 0) {
		static uint8_t pbuf[sizeof(struct kio_probe) + 8 * sizeof(struct kio_probe_op)];

		r[0] = res(KIO_RESTRICTION_SQE_OP, OP_WRITE);
		r[1] = res(KIO_RESTRICTION_SQE_FLAGS_REQUIRED, IOSQE_ASYNC);
		r[2] = res(KIO_RESTRICTION_REGISTER_OP, KIO_REGISTER_PROBE);
		CHECK_EQ("RESTRICTIONS {WRITE, required ASYNC, PROBE}",
			 restrict_ring(ring.fd, r, 3), 0);
		CHECK_EQ("ENABLE_RINGS", enable(ring.fd), 0);
		CHECK_EQ("allowed PROBE", raw_register(ring.fd, KIO_REGISTER_PROBE, pbuf, 8), 0);
		CHECK_EQ("allowed PROBE last_op", ((struct kio_probe *)pbuf)->last_op,
			 OP_LAST_6_1 - 1);
		CHECK_EQ("REGISTER_FILES not allowed", raw_register(ring.fd, REG_FILES, NULL, 0),
			 -EACCES);
		memset(&sqe, 0, sizeof(sqe));
		sqe.opcode = OP_WRITE;
		sqe.fd = pipefd[1];
		sqe.addr = (uintptr_t) "12345678";
		sqe.len = 8;
		mini_ring_run(&ring, &sqe, &cqe);
		CHECK_EQ("WRITE without the required flag", cqe, -EACCES);
		sqe.flags = IOSQE_ASYNC;
		mini_ring_run(&ring, &sqe, &cqe);
		CHECK_EQ("WRITE with ASYNC writes 8 bytes", cqe, 8);
		sqe.opcode = OP_NOP;
		mini_ring_run(&ring, &sqe, &cqe);
		CHECK_EQ("NOP (not listed) with ASYNC", cqe, -EACCES);
		mini_ring_exit(&ring);
	}

	/* nr = 0: deny everything */
	if (mini_ring_init(&ring, 4, KIO_SETUP_R_DISABLED) == 0) {
		CHECK_EQ("RESTRICTIONS with nr 0", restrict_ring(ring.fd, r, 0), 0);
		CHECK_EQ("ENABLE_RINGS", enable(ring.fd), 0);
		memset(&sqe, 0, sizeof(sqe));
		mini_ring_run(&ring, &sqe, &cqe);
		CHECK_EQ("NOP after an empty set", cqe, -EACCES);
		CHECK_EQ("PROBE after an empty set",
			 raw_register(ring.fd, KIO_REGISTER_PROBE, NULL, 0), -EACCES);
		mini_ring_exit(&ring);
	}
	close(pipefd[0]);
	close(pipefd[1]);
}

int main(void)
{
	if (guest_gen()->query || !guest_gen()->exact) {
		GUEST_SKIP("t_raw_kernel",
			   "pre-QUERY answers need a kernel before 6.18; the live tier's "
			   "probe tests check QUERY kernels");
		return guest_summary();
	}
	check_blind_path();
	check_limits();
	check_ring_matrix();
	return guest_summary();
}
