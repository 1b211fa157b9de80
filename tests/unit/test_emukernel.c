/* SPDX-License-Identifier: MIT */
/*
 * The emulated Linux 6.1 / 6.18 / 7.0 / 7.2 io_uring kernel (tests/common/
 * emukernel.c), checked rule by rule against doc/kernel.md through the
 * library's syscall seam, with raw calls and hand-built kernel structures.
 * Every cBPF program registered here runs in the real kernel's BPF engine.
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <liburing.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "emukernel.h"
#include "base/sys.h"
#include "uring_avail.h"

/* ------------------------------------------------------------------ */
/* helpers                                                              */

static struct emu *E;
static int nchecks;

#define EQ(a, b)                                                                  \
	do {                                                                      \
		long a_ = (long)(a), b_ = (long)(b);                              \
		cr_assert_eq(a_, b_, "emulated: %s = %ld, want %ld (line %d)", #a, a_, \
			     b_, __LINE__);                                       \
		nchecks++;                                                        \
	} while (0)

#define DONE(name) fprintf(stderr, "emulated %s: %d checks passed\n", name, nchecks)

/* Every emulated task a test creates, freed by fini(). */
static struct emu *all[64];
static int nall;

static struct emu *track(struct emu *e)
{
	cr_assert(e != NULL && nall < 64);
	all[nall++] = e;
	return e;
}

static struct emu *FORK(struct emu *p)
{
	return track(emu_fork(p));
}

static void KILL(struct emu *e)
{
	for (int i = 0; i < nall; i++)
		if (all[i] == e)
			all[i] = NULL;
	emu_free(e);
}

static struct emu *boot_cfg(const struct emu_config *c)
{
	struct emu *e;

	cr_assert_eq(emu_new(c, &e), 0);
	track(e);
	emu_install(e);
	E = e;
	return e;
}

static struct emu *boot(enum emu_gen g, bool nnp)
{
	struct emu_config c = { .gen = g, .no_new_privs = nnp };

	return boot_cfg(&c);
}

/* Run the following calls as task t. */
static void become(struct emu *t)
{
	E = t;
	emu_install(t);
}

static void fini(void)
{
	emu_uninstall();
	for (int i = 0; i < nall; i++)
		emu_free(all[i]);
	nall = 0;
}

/* A real open file that is not an io_uring. */
static int real_fd(void)
{
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);

	cr_assert(fd >= 0);
	return fd;
}

static int ring(uint32_t flags)
{
	struct kio_params p;

	memset(&p, 0, sizeof(p));
	p.flags = flags;
	return (int)iour__setup(8, &p);
}

static long reg(int fd, uint32_t op, void *arg, uint32_t nr)
{
	return iour__register(fd, op, arg, nr);
}

static struct kio_restriction R(uint16_t opcode, uint8_t v)
{
	struct kio_restriction r;

	memset(&r, 0, sizeof(r));
	r.opcode = opcode;
	r.sqe_op = v;
	return r;
}

#define SQE(op) R(KIO_RESTRICTION_SQE_OP, op)
#define REGOP(op) R(KIO_RESTRICTION_REGISTER_OP, op)
#define FLAGS_OK(f) R(KIO_RESTRICTION_SQE_FLAGS_ALLOWED, f)
#define FLAGS_REQ(f) R(KIO_RESTRICTION_SQE_FLAGS_REQUIRED, f)

static long ring_restrict(int fd, const struct kio_restriction *r, uint32_t n)
{
	return reg(fd, KIO_REGISTER_RESTRICTIONS, (void *)r, n);
}

/* Blind task restrictions with a hand-built header. */
static long task_restrict_hdr(uint16_t flags, uint32_t resv0, const struct kio_restriction *r,
			      uint16_t n, uint32_t nr_args)
{
	size_t sz = sizeof(struct kio_task_restriction) + n * sizeof(*r);
	struct kio_task_restriction *h = calloc(1, sz);
	long rc;

	cr_assert(h);
	h->flags = flags;
	h->nr_res = n;
	h->resv[0] = resv0;
	if (n)
		memcpy(h->restrictions, r, n * sizeof(*r));
	rc = reg(-1, KIO_REGISTER_RESTRICTIONS, h, nr_args);
	free(h);
	return rc;
}

static long task_restrict(const struct kio_restriction *r, uint16_t n)
{
	return task_restrict_hdr(0, 0, r, n, 1);
}

static void bpf_init(struct kio_bpf *b, uint32_t op, uint32_t flags, uint8_t pdu,
		     const struct sock_filter *p, size_t n)
{
	memset(b, 0, sizeof(*b));
	b->cmd_type = KIO_BPF_CMD_FILTER;
	b->filter.opcode = op;
	b->filter.flags = flags;
	b->filter.filter_len = (uint32_t)n;
	b->filter.pdu_size = pdu;
	b->filter.filter_ptr = (uintptr_t)p;
}

/* Register a filter on fd (-1: task); *wb gets the written-back pdu_size. */
static long bpf(int fd, uint32_t op, uint32_t flags, uint8_t pdu, const struct sock_filter *p,
		size_t n, uint8_t *wb)
{
	struct kio_bpf b;
	long rc;

	bpf_init(&b, op, flags, pdu, p, n);
	rc = reg(fd, KIO_REGISTER_BPF_FILTER, &b, 1);
	if (wb)
		*wb = b.filter.pdu_size;
	return rc;
}

#define BPF(fd, op, flags, prog) bpf(fd, op, flags, emu_pdu_size(E, op), prog, \
				     sizeof(prog) / sizeof(prog[0]), NULL)

static int sub(int fd, uint8_t op, uint8_t flags)
{
	uint8_t c[40];

	emu_ctx(c, op, flags, 0x1234);
	return emu_submit(E, fd, c);
}

static int sub_socket(int fd, uint32_t fam, uint32_t type, struct emu_verdict *v)
{
	uint8_t c[40];

	emu_ctx_socket(c, fam, type, 0);
	return emu_submit_ex(E, fd, c, v);
}

static int sub_open(int fd, uint32_t op, uint64_t flags, uint64_t resolve)
{
	uint8_t c[40];

	emu_ctx_open(c, op, flags, 0644, resolve);
	return emu_submit(E, fd, c);
}

static int sub_v4(int fd, const char *ip, uint16_t port, uint32_t len)
{
	struct sockaddr_in s;
	uint8_t c[40];

	memset(&s, 0, sizeof(s));
	s.sin_family = AF_INET;
	s.sin_port = htons(port);
	inet_pton(AF_INET, ip, &s.sin_addr);
	emu_ctx_connect(c, &s, len);
	return emu_submit(E, fd, c);
}

static int sub_v6(int fd, const char *ip, uint16_t port)
{
	struct sockaddr_in6 s;
	uint8_t c[40];

	memset(&s, 0, sizeof(s));
	s.sin6_family = AF_INET6;
	s.sin6_port = htons(port);
	inet_pton(AF_INET6, ip, &s.sin6_addr);
	emu_ctx_connect(c, &s, sizeof(s));
	return emu_submit(E, fd, c);
}

/* Opcodes used below. */
enum { OP_NOP = 0, OP_READV = 1, OP_WRITEV = 2, OP_CONNECT = 16, OP_OPENAT = 18,
       OP_READ = 22, OP_WRITE = 23, OP_OPENAT2 = 28, OP_SOCKET = 45 };
enum { REG_BUFFERS = 0, REG_FILES = 2, REG_PROBE = 8 };
/* IOSQE_* come from <liburing.h> (values fixed since 5.x). */

/* ------------------------------------------------------------------ */
/* cBPF programs (as the liburing tests write them, little-endian offsets) */

static const struct sock_filter P_ALLOW[] = { BPF_STMT(BPF_RET | BPF_K, 1) };
static const struct sock_filter P_DENY[] = { BPF_STMT(BPF_RET | BPF_K, 0) };
static const struct sock_filter P_INET[] = {
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 16),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_INET, 0, 1),
	BPF_STMT(BPF_RET | BPF_K, 1),
	BPF_STMT(BPF_RET | BPF_K, 0),
};
static const struct sock_filter P_TCP[] = {
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 20),
	BPF_STMT(BPF_ALU | BPF_AND | BPF_K, 0xf),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SOCK_STREAM, 0, 1),
	BPF_STMT(BPF_RET | BPF_K, 1),
	BPF_STMT(BPF_RET | BPF_K, 0),
};
static const struct sock_filter P_NO_CREAT[] = {
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 16),
	BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, O_CREAT, 0, 1),
	BPF_STMT(BPF_RET | BPF_K, 0),
	BPF_STMT(BPF_RET | BPF_K, 1),
};
static const struct sock_filter P_NO_IN_ROOT[] = {
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 32),
	BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, 0x10 /* RESOLVE_IN_ROOT */, 0, 1),
	BPF_STMT(BPF_RET | BPF_K, 0),
	BPF_STMT(BPF_RET | BPF_K, 1),
};

/* ------------------------------------------------------------------ */
/* section 1: dispatch order, per generation                            */

Test(emulated, emulated_register_dispatch_by_generation, .fini = fini)
{
	static const struct { enum emu_gen g; long blind_probe, blind_restr, blind_bpf, query; }
	want[] = {
		{ EMU_GEN_6_1, -EBADF, -EBADF, -EINVAL, -EINVAL },
		{ EMU_GEN_6_18, -EINVAL, -EINVAL, -EINVAL, 0 },
		{ EMU_GEN_7_0, -EINVAL, -EFAULT, -EFAULT, 0 },
		{ EMU_GEN_7_2, -EINVAL, -EFAULT, -EFAULT, 0 },
	};

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		struct emu *e = boot(want[i].g, true);
		struct emu_state st;
		int fd;

		/* opcode >= LAST first, whatever the fd */
		EQ(reg(-1, emu_reg_last(e), NULL, 0), -EINVAL);
		EQ(reg(0, emu_reg_last(e), NULL, 0), -EINVAL);
		EQ(reg(-1, 255, NULL, 0), -EINVAL);
		EQ(reg(-1, KIO_REGISTER_PROBE, NULL, 0), want[i].blind_probe);
		EQ(reg(-1, KIO_REGISTER_ENABLE_RINGS, NULL, 0), want[i].blind_probe);
		EQ(reg(-1, KIO_REGISTER_RESTRICTIONS, NULL, 1), want[i].blind_restr);
		EQ(reg(-1, KIO_REGISTER_BPF_FILTER, NULL, 1), want[i].blind_bpf);
		EQ(reg(-1, KIO_REGISTER_QUERY, NULL, 0), want[i].query);
		/* probe (c')/(d) answers created no state */
		emu_task_state(e, &st);
		EQ(st.exists, 0);
		/* fd lookup: closed fd, a real non-ring fd */
		EQ(reg(-2, KIO_REGISTER_PROBE, NULL, 0), -EBADF);
		EQ(reg(EMU_FD_BASE + 77, KIO_REGISTER_PROBE, NULL, 0), -EBADF);
		{
			int nf = real_fd();

			EQ(reg(nf, KIO_REGISTER_PROBE, NULL, 0), -EOPNOTSUPP);
			close(nf);
		}
		/* registered-ring bit: blind path first where it exists */
		EQ(reg(-1, KIO_REGISTER_QUERY | KIO_REGISTER_USE_REGISTERED_RING, NULL, 0),
		   want[i].query);
		EQ(reg(-1, KIO_REGISTER_PROBE | KIO_REGISTER_USE_REGISTERED_RING, NULL, 0),
		   -EINVAL);
		fd = ring(0);
		EQ(fd >= EMU_FD_BASE, 1);
		EQ(reg(3, KIO_REGISTER_PROBE | KIO_REGISTER_USE_REGISTERED_RING, NULL, 0), -EBADF);
		EQ(reg(16, KIO_REGISTER_PROBE | KIO_REGISTER_USE_REGISTERED_RING, NULL, 0), -EINVAL);
		/* BPF_FILTER on a ring: range check before anything on old kernels */
		EQ(reg(fd, KIO_REGISTER_BPF_FILTER, NULL, 1),
		   want[i].g >= EMU_GEN_7_0 ? -EFAULT : -EINVAL);
		EQ(iour__close(fd), 0);
		EQ(iour__close(fd), -EBADF);
		fprintf(stderr, "emulated %s kernel: op_last %u reg_last %u\n",
			emu_gen_name(want[i].g), emu_op_last(e), emu_reg_last(e));
		KILL(e);
	}
	DONE("register dispatch");
}

Test(emulated, emulated_probe_and_query, .fini = fini)
{
	static const uint32_t ops[] = { 49, 63, 65, 65 }, regs[] = { 26, 36, 38, 38 };

	for (int g = EMU_GEN_6_1; g <= EMU_GEN_7_2; g++) {
		struct emu *e = boot((enum emu_gen)g, false);
		size_t psz = sizeof(struct kio_probe) + 256 * sizeof(struct kio_probe_op);
		struct kio_probe *p = calloc(1, psz);
		int fd = ring(KIO_SETUP_R_DISABLED);

		EQ(emu_op_last(e), ops[g]);
		EQ(emu_reg_last(e), regs[g]);
		EQ(reg(fd, KIO_REGISTER_PROBE, p, 256), 0);
		EQ(p->last_op, ops[g] - 1);
		EQ(p->ops_len, ops[g]);
		EQ(p->ops[ops[g] - 1].op, ops[g] - 1);
		EQ(p->ops[ops[g] - 1].flags, KIO_OP_SUPPORTED);
		EQ(p->ops[ops[g]].flags, 0);
		EQ(reg(fd, KIO_REGISTER_PROBE, p, 256), -EINVAL); /* input not zero */
		memset(p, 0, psz);
		EQ(reg(fd, KIO_REGISTER_PROBE, p, 0), 0);
		EQ(p->last_op, ops[g] - 1);
		EQ(p->ops_len, 0);
		memset(p, 0, psz);
		EQ(reg(fd, KIO_REGISTER_PROBE, p, 257), -EINVAL);
		EQ(reg(fd, KIO_REGISTER_PROBE, NULL, 1), -EINVAL);
		EQ(reg(fd, KIO_REGISTER_PROBE, (void *)8, 1), -EFAULT);
		free(p);

		if (g >= EMU_GEN_6_18) {
			struct kio_query_opcode q[3];
			uint8_t big[64];
			struct kio_query_hdr h[3];

			memset(h, 0, sizeof(h));
			memset(q, 0xee, sizeof(q));
			for (int i = 0; i < 3; i++) {
				h[i].query_data = (uintptr_t)&q[i];
				h[i].size = sizeof(q[i]);
				h[i].next_entry = i < 2 ? (uintptr_t)&h[i + 1] : 0;
			}
			h[1].size = 8;
			h[2].query_op = 77;
			EQ(reg(-1, KIO_REGISTER_QUERY, h, 0), 0);
			EQ(h[0].result, 0);
			EQ(h[0].size, 48);
			EQ(q[0].nr_request_opcodes, ops[g]);
			EQ(q[0].nr_register_opcodes, regs[g]);
			EQ(q[0].sqe_flags, 0x7f);
			EQ(q[0].nr_query_opcodes, g == EMU_GEN_6_18 ? 1 : g == EMU_GEN_7_0 ? 3 : 4);
			EQ(h[1].size, 8);
			EQ(q[1].nr_register_opcodes, regs[g]);
			EQ(q[1].feature_flags, 0xeeeeeeeeeeeeeeeeULL); /* beyond 8: untouched */
			EQ(h[2].result, -EOPNOTSUPP);
			EQ(h[2].size, 0);
			EQ(q[2].nr_request_opcodes, 0); /* zeroed after an error */
			/* result must be 0 on input; resv zero; size non-zero */
			h[0].next_entry = 0;
			h[0].result = 1;
			EQ(reg(-1, KIO_REGISTER_QUERY, h, 0), 0);
			EQ(h[0].result, -EINVAL);
			h[0].result = 0;
			h[0].size = 0;
			EQ(reg(-1, KIO_REGISTER_QUERY, h, 0), 0);
			EQ(h[0].result, -EINVAL);
			/* larger caller struct */
			memset(big, 0xaa, sizeof(big));
			h[0].result = 0;
			h[0].size = sizeof(big);
			h[0].query_data = (uintptr_t)big;
			EQ(reg(-1, KIO_REGISTER_QUERY, h, 0), 0);
			EQ(h[0].result, 0);
			EQ(h[0].size, 48);
			EQ(big[63], 0);
			EQ(reg(-1, KIO_REGISTER_QUERY, h, 1), -EINVAL);
			/* the ring form works too */
			h[0].result = 0;
			EQ(reg(fd, KIO_REGISTER_QUERY, h, 0), 0);
			EQ(h[0].result, 0);
			/* bad data pointer, bad header chain, loops */
			h[0].query_data = 0xdeadbeef;
			EQ(reg(-1, KIO_REGISTER_QUERY, h, 0), -EFAULT);
			h[0].query_data = (uintptr_t)big;
			h[0].next_entry = 0xdeadbeef;
			EQ(reg(-1, KIO_REGISTER_QUERY, h, 0), -EFAULT);
			h[0].next_entry = (uintptr_t)&h[0];
			EQ(reg(-1, KIO_REGISTER_QUERY, h, 0), -ERANGE);
		}
		KILL(e);
	}
	DONE("probe and query");
}

/* ------------------------------------------------------------------ */
/* section 2: per-ring restrictions                                     */

Test(emulated, emulated_ring_registration_errnos, .fini = fini)
{
	for (int g = EMU_GEN_6_1; g <= EMU_GEN_7_2; g++) {
		struct emu *e = boot((enum emu_gen)g, false);
		uint32_t max = 4 + emu_reg_last(e) + emu_op_last(e);
		struct kio_restriction *many = calloc(max + 1, sizeof(*many));
		struct kio_restriction bad;
		int on = ring(0), fd = ring(KIO_SETUP_R_DISABLED);

		for (uint32_t i = 0; i <= max; i++)
			many[i] = FLAGS_OK(0);
		EQ(ring_restrict(on, many, 1), -EBADFD);
		EQ(reg(on, KIO_REGISTER_ENABLE_RINGS, NULL, 0), -EBADFD);
		EQ(ring_restrict(fd, NULL, 0), -EINVAL);
		EQ(ring_restrict(fd, NULL, 1), -EINVAL);
		EQ(ring_restrict(fd, many, max + 1), -EINVAL);
		EQ(ring_restrict(fd, (void *)16, 2), -EFAULT);
		bad = R(4, 0);
		EQ(ring_restrict(fd, &bad, 1), -EINVAL);
		bad = SQE(emu_op_last(e));
		EQ(ring_restrict(fd, &bad, 1), -EINVAL);
		bad = REGOP(emu_reg_last(e));
		EQ(ring_restrict(fd, &bad, 1), -EINVAL);
		/* resv fields are not checked */
		bad = SQE(emu_op_last(e) - 1);
		bad.resv = 1;
		bad.resv2[2] = 7;
		EQ(ring_restrict(fd, &bad, 1), 0);
		EQ(ring_restrict(fd, &bad, 1), -EBUSY);
		/* the largest set is accepted on a fresh ring */
		EQ(iour__close(fd), 0);
		fd = ring(KIO_SETUP_R_DISABLED);
		EQ(ring_restrict(fd, many, max), 0);
		EQ(reg(fd, KIO_REGISTER_ENABLE_RINGS, (void *)1, 0), -EINVAL);
		EQ(reg(fd, KIO_REGISTER_ENABLE_RINGS, NULL, 1), -EINVAL);
		EQ(reg(fd, KIO_REGISTER_ENABLE_RINGS, NULL, 0), 0);
		fprintf(stderr, "emulated %s kernel: max restrictions %u\n",
			emu_gen_name((enum emu_gen)g), max);
		free(many);
		KILL(e);
	}
	DONE("ring registration errnos");
}

/* liburing test/register-restrictions.c, on every generation. */
Test(emulated, emulated_ring_restriction_matrix_liburing, .fini = fini)
{
	for (int g = EMU_GEN_6_1; g <= EMU_GEN_7_2; g++) {
		struct emu *e = boot((enum emu_gen)g, false);
		struct kio_restriction r[8];
		int fd;

		/* sqe_op */
		fd = ring(KIO_SETUP_R_DISABLED);
		r[0] = SQE(OP_WRITEV);
		r[1] = SQE(OP_WRITE);
		EQ(ring_restrict(fd, r, 2), 0);
		EQ(sub(fd, OP_WRITEV, 0), -EBADFD); /* rings_disabled */
		EQ(reg(fd, KIO_REGISTER_ENABLE_RINGS, NULL, 0), 0);
		EQ(sub(fd, OP_WRITEV, 0), 0);
		EQ(sub(fd, OP_READV, 0), -EACCES);
		EQ(sub(fd, OP_WRITEV, IOSQE_ASYNC), -EACCES); /* no FLAGS_ALLOWED entry */
		EQ(sub(fd, emu_op_last(e), 0), -EINVAL);
		EQ(sub(fd, OP_WRITEV, 0x80), -EINVAL);
		/* register_op */
		fd = ring(KIO_SETUP_R_DISABLED);
		r[0] = REGOP(REG_BUFFERS);
		EQ(ring_restrict(fd, r, 1), 0);
		EQ(reg(fd, KIO_REGISTER_ENABLE_RINGS, NULL, 0), 0);
		EQ(reg(fd, REG_BUFFERS, NULL, 0), 0);
		EQ(reg(fd, REG_FILES, NULL, 0), -EACCES);
		EQ(reg(fd, KIO_REGISTER_ENABLE_RINGS, NULL, 0), -EACCES);
		EQ(ring_restrict(fd, r, 1), -EACCES);
		/* flags: files registered while disabled (no gate yet) */
		fd = ring(KIO_SETUP_R_DISABLED);
		r[0] = SQE(OP_WRITEV);
		r[1] = FLAGS_OK(IOSQE_ASYNC | IOSQE_IO_LINK);
		r[2] = FLAGS_REQ(IOSQE_FIXED_FILE);
		EQ(ring_restrict(fd, r, 3), 0);
		EQ(reg(fd, REG_FILES, NULL, 0), 0);
		EQ(reg(fd, KIO_REGISTER_ENABLE_RINGS, NULL, 0), 0);
		EQ(sub(fd, OP_WRITEV, IOSQE_FIXED_FILE), 0);
		EQ(sub(fd, OP_WRITEV, IOSQE_FIXED_FILE | IOSQE_ASYNC), 0);
		EQ(sub(fd, OP_WRITEV, IOSQE_FIXED_FILE | IOSQE_IO_LINK), 0);
		EQ(sub(fd, OP_WRITEV, IOSQE_FIXED_FILE | IOSQE_IO_DRAIN), -EACCES);
		EQ(sub(fd, OP_WRITEV, IOSQE_IO_DRAIN), -EACCES);
		EQ(sub(fd, OP_WRITEV, IOSQE_ASYNC), -EACCES);
		EQ(sub(fd, OP_WRITEV, 0), -EACCES);
		/* the last FLAGS entry wins */
		fd = ring(KIO_SETUP_R_DISABLED);
		r[0] = SQE(OP_NOP);
		r[1] = FLAGS_OK(IOSQE_ASYNC);
		r[2] = FLAGS_OK(IOSQE_IO_LINK);
		EQ(ring_restrict(fd, r, 3), 0);
		EQ(reg(fd, KIO_REGISTER_ENABLE_RINGS, NULL, 0), 0);
		EQ(sub(fd, OP_NOP, IOSQE_IO_LINK), 0);
		EQ(sub(fd, OP_NOP, IOSQE_ASYNC), -EACCES);
		/* empty: deny everything */
		fd = ring(KIO_SETUP_R_DISABLED);
		EQ(ring_restrict(fd, r, 0), 0);
		EQ(reg(fd, KIO_REGISTER_ENABLE_RINGS, NULL, 0), 0);
		EQ(reg(fd, REG_BUFFERS, NULL, 0), -EACCES);
		EQ(reg(fd, REG_FILES, NULL, 0), -EACCES);
		EQ(reg(fd, KIO_REGISTER_PROBE, NULL, 0), -EACCES);
		EQ(sub(fd, OP_WRITEV, 0), -EACCES);
		EQ(sub(fd, OP_NOP, 0), -EACCES);
		/* an unrestricted ring allows everything */
		fd = ring(0);
		EQ(sub(fd, OP_READV, IOSQE_ASYNC), 0);
		KILL(e);
	}
	DONE("ring matrix (liburing register-restrictions)");
}

/* 2.5: coupled gates before 7.0, split gates from 7.0 on. */
Test(emulated, emulated_coupled_versus_split_gates, .fini = fini)
{
	for (int g = EMU_GEN_6_1; g <= EMU_GEN_7_2; g++) {
		bool split = g >= EMU_GEN_7_0;
		struct emu *e = boot((enum emu_gen)g, false);
		struct kio_restriction r[3];
		struct emu_state st;
		int fd;

		/* SQE entries only */
		fd = ring(KIO_SETUP_R_DISABLED);
		r[0] = SQE(OP_NOP);
		r[1] = FLAGS_OK(0);
		EQ(ring_restrict(fd, r, 2), 0);
		EQ(emu_ring_state(e, fd, &st), 0);
		EQ(st.sqe_gate, split);      /* 7.0 sets the gate at registration */
		EQ(st.reg_gate, 0);           /* never while disabled */
		EQ(reg(fd, KIO_REGISTER_ENABLE_RINGS, NULL, 0), 0);
		EQ(reg(fd, KIO_REGISTER_PROBE, NULL, 0), split ? -EINVAL : -EACCES);
		EQ(reg(fd, REG_FILES, NULL, 0), split ? 0 : -EACCES);
		EQ(sub(fd, OP_NOP, 0), 0);
		EQ(sub(fd, OP_READ, 0), -EACCES);
		/* register entries only */
		fd = ring(KIO_SETUP_R_DISABLED);
		r[0] = REGOP(KIO_REGISTER_PROBE);
		EQ(ring_restrict(fd, r, 1), 0);
		EQ(reg(fd, KIO_REGISTER_ENABLE_RINGS, NULL, 0), 0);
		EQ(sub(fd, OP_READ, 0), split ? 0 : -EACCES);
		EQ(reg(fd, REG_FILES, NULL, 0), -EACCES);
		/* 7.0: the ENABLE_RINGS sentinel closes the register side */
		fd = ring(KIO_SETUP_R_DISABLED);
		r[0] = SQE(OP_NOP);
		r[1] = FLAGS_OK(0);
		r[2] = REGOP(KIO_REGISTER_ENABLE_RINGS);
		EQ(ring_restrict(fd, r, 3), 0);
		EQ(reg(fd, KIO_REGISTER_ENABLE_RINGS, NULL, 0), 0);
		EQ(reg(fd, KIO_REGISTER_ENABLE_RINGS, NULL, 0), -EBADFD);
		EQ(reg(fd, REG_FILES, NULL, 0), -EACCES);
		KILL(e);
	}
	DONE("coupled (6.x) versus split (7.x) gates");
}

/* ------------------------------------------------------------------ */
/* section 3: task restrictions                                         */

Test(emulated, emulated_task_path_checks_in_order, .fini = fini)
{
	struct kio_restriction r[2] = { SQE(OP_NOP), FLAGS_OK(0) };
	struct emu_config c = { .gen = EMU_GEN_7_0 };
	struct emu *e = boot_cfg(&c);
	struct emu_state st;

	/* no NNP, no CAP */
	EQ(task_restrict(r, 2), -EACCES);
	EQ(bpf(-1, OP_NOP, 0, 0, P_ALLOW, 1, NULL), -EACCES);
	/* prctl through the seam */
	EQ(iour__prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0), 0);
	EQ(iour__prctl(PR_SET_NO_NEW_PRIVS, 2, 0, 0, 0), -EINVAL);
	EQ(iour__prctl(PR_SET_NO_NEW_PRIVS, 1, 1, 0, 0), -EINVAL);
	EQ(iour__prctl(PR_GET_NO_NEW_PRIVS, 1, 0, 0, 0), -EINVAL);
	EQ(iour__prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), 0);
	EQ(iour__prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0), 1);
	/* nr_args, header, entries */
	EQ(task_restrict_hdr(0, 0, r, 2, 2), -EINVAL);
	EQ(task_restrict_hdr(0, 0, r, 2, 0), -EINVAL);
	EQ(task_restrict_hdr(1, 0, r, 2, 1), -EINVAL);
	EQ(task_restrict_hdr(0, 1, r, 2, 1), -EINVAL);
	EQ(reg(-1, KIO_REGISTER_RESTRICTIONS, (void *)24, 1), -EFAULT);
	{
		struct kio_restriction b = SQE(65);

		EQ(task_restrict(&b, 1), -EINVAL);
		b = REGOP(38);
		EQ(task_restrict(&b, 1), -EINVAL);
		b = R(4, 0);
		EQ(task_restrict(&b, 1), -EINVAL);
	}
	{
		struct kio_restriction *many = calloc(108, sizeof(*many));

		for (int i = 0; i < 108; i++)
			many[i] = FLAGS_OK(0);
		EQ(task_restrict(many, 108), -EINVAL);
		free(many);
	}
	emu_task_state(e, &st);
	EQ(st.exists, 0); /* failures left nothing */
	/* CAP_SYS_ADMIN alone is enough */
	emu_set_nnp(e, false);
	emu_set_cap(e, true);
	EQ(task_restrict(r, 2), 0);
	emu_task_state(e, &st);
	EQ(st.exists, 1);
	EQ(st.registered, 1);
	EQ(st.op_registered, 1);
	EQ(st.reg_registered, 0);
	/* already restricted: -EPERM comes before the privilege check */
	emu_set_cap(e, false);
	EQ(task_restrict(r, 2), -EPERM);
	EQ(reg(-1, KIO_REGISTER_RESTRICTIONS, NULL, 1), -EPERM);
	EQ(task_restrict_hdr(1, 1, r, 2, 7), -EPERM);
	DONE("task path order");
}

/* liburing test/task-restrict.c */
Test(emulated, emulated_task_restrict_liburing, .fini = fini)
{
	struct kio_restriction r[3];
	struct emu *parent = boot(EMU_GEN_7_0, true), *child, *grandchild;
	int fd;

	/* 1: allow only NOP */
	child = FORK(parent);
	become(child);
	r[0] = SQE(OP_NOP);
	EQ(task_restrict(r, 1), 0);
	fd = ring(0);
	EQ(sub(fd, OP_NOP, 0), 0);
	EQ(sub(fd, OP_READ, 0), -EACCES);
	/* 3: a second registration */
	EQ(task_restrict(r, 1), -EPERM);
	KILL(child);

	/* 2: {NOP, WRITE}, then a grandchild's new ring */
	child = FORK(parent);
	become(child);
	r[0] = SQE(OP_NOP);
	r[1] = SQE(OP_WRITE);
	EQ(task_restrict(r, 2), 0);
	grandchild = FORK(child);
	become(grandchild);
	fd = ring(0);
	EQ(sub(fd, OP_NOP, 0), 0);
	EQ(sub(fd, OP_WRITE, 0), 0);
	EQ(sub(fd, OP_READ, 0), -EACCES);
	EQ(task_restrict(r, 1), -EPERM); /* inherited: classic path closed */
	KILL(grandchild);
	KILL(child);

	/* 4: allow only REGISTER_FILES */
	child = FORK(parent);
	become(child);
	r[0] = REGOP(REG_FILES);
	EQ(task_restrict(r, 1), 0);
	fd = ring(0);
	EQ(reg(fd, REG_FILES, NULL, 0), 0);
	EQ(reg(fd, REG_BUFFERS, NULL, 0), -EACCES);
	EQ(reg(fd, KIO_REGISTER_PROBE, NULL, 0), -EACCES);
	EQ(sub(fd, OP_READ, 0), 0); /* split: SQE side unrestricted */
	KILL(child);

	/* the parent itself was never restricted */
	become(parent);
	fd = ring(0);
	EQ(sub(fd, OP_READ, 0), 0);
	DONE("task-restrict (liburing)");
}

/* 3.5: rings pick up the task set at creation; -EBUSY on top; BPF-only sets. */
Test(emulated, emulated_task_set_and_rings, .fini = fini)
{
	struct kio_restriction r[3];
	struct emu *e = boot(EMU_GEN_7_0, true);
	struct emu_state st;
	int before = ring(0), dis, fd;

	r[0] = SQE(OP_NOP);
	r[1] = REGOP(KIO_REGISTER_PROBE);
	EQ(task_restrict(r, 2), 0);
	EQ(sub(before, OP_READ, 0), 0); /* existing rings unaffected */
	dis = ring(KIO_SETUP_R_DISABLED);
	EQ(emu_ring_state(e, dis, &st), 0);
	EQ(st.registered, 1);
	EQ(st.reg_gate, 0);
	r[2] = SQE(OP_READ);
	EQ(ring_restrict(dis, &r[2], 1), -EBUSY);
	/* register ops are not gated while the inherited ring is disabled */
	EQ(reg(dis, REG_FILES, NULL, 0), 0);
	EQ(reg(dis, KIO_REGISTER_ENABLE_RINGS, NULL, 0), 0);
	EQ(reg(dis, REG_FILES, NULL, 0), -EACCES);
	EQ(reg(dis, KIO_REGISTER_PROBE, NULL, 0), -EINVAL);
	EQ(sub(dis, OP_READ, 0), -EACCES);
	fd = ring(0);
	EQ(sub(fd, OP_NOP, IOSQE_ASYNC), -EACCES); /* flags mask 0 inherited */
	KILL(e);

	/* deny-all task set (nr_res 0) */
	e = boot(EMU_GEN_7_2, true);
	EQ(task_restrict(r, 0), 0);
	fd = ring(0);
	EQ(sub(fd, OP_NOP, 0), -EACCES);
	EQ(reg(fd, KIO_REGISTER_PROBE, NULL, 0), -EACCES);
	EQ(reg(fd, KIO_REGISTER_BPF_FILTER, NULL, 1), -EACCES);
	dis = ring(KIO_SETUP_R_DISABLED);
	EQ(ring_restrict(dis, r, 1), -EBUSY);
	KILL(e);

	/* a BPF-only task set: ring-level classic restrictions are allowed, but
	 * the classic task path is closed */
	e = boot(EMU_GEN_7_0, true);
	EQ(BPF(-1, OP_READ, 0, P_ALLOW), 0);
	EQ(task_restrict(r, 1), -EPERM);
	dis = ring(KIO_SETUP_R_DISABLED);
	EQ(emu_ring_state(e, dis, &st), 0);
	EQ(st.registered, 0);
	EQ(st.nr_filters[OP_READ], 1);
	r[0] = SQE(OP_READ);
	r[1] = FLAGS_OK(0);
	EQ(ring_restrict(dis, r, 2), 0);
	EQ(reg(dis, KIO_REGISTER_ENABLE_RINGS, NULL, 0), 0);
	EQ(sub(dis, OP_READ, 0), 0);
	EQ(sub(dis, OP_NOP, 0), -EACCES);
	DONE("task set and rings");
}

/* ------------------------------------------------------------------ */
/* section 4: BPF filter registration                                   */

Test(emulated, emulated_bpf_registration_checks_in_order, .fini = fini)
{
	static const struct sock_filter no_ret[] = { BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 0) };
	static const struct sock_filter bad[][2] = {
		{ BPF_STMT(BPF_LD | BPF_H | BPF_ABS, 8), BPF_STMT(BPF_RET | BPF_A, 0) },
		{ BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 8), BPF_STMT(BPF_RET | BPF_A, 0) },
		{ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 40), BPF_STMT(BPF_RET | BPF_A, 0) },
		{ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 2), BPF_STMT(BPF_RET | BPF_A, 0) },
		{ BPF_STMT(BPF_LD | BPF_W | BPF_IND, 0), BPF_STMT(BPF_RET | BPF_A, 0) },
		{ BPF_STMT(BPF_ALU | BPF_MOD | BPF_K, 3), BPF_STMT(BPF_RET | BPF_A, 0) },
		{ BPF_STMT(BPF_LDX | BPF_B | BPF_MSH, 0), BPF_STMT(BPF_RET | BPF_A, 0) },
		{ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, (uint32_t)SKF_AD_OFF + SKF_AD_PROTOCOL),
		  BPF_STMT(BPF_RET | BPF_A, 0) },
		/* generic checker: */
		{ BPF_STMT(BPF_ALU | BPF_DIV | BPF_K, 0), BPF_STMT(BPF_RET | BPF_A, 0) },
		{ BPF_STMT(BPF_LD | BPF_MEM, 0), BPF_STMT(BPF_RET | BPF_A, 0) },
		{ BPF_STMT(BPF_JMP | BPF_JA, 1), BPF_STMT(BPF_RET | BPF_A, 0) },
		{ BPF_STMT(BPF_ALU | BPF_LSH | BPF_K, 32), BPF_STMT(BPF_RET | BPF_A, 0) },
	};
	static const struct sock_filter good[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_LEN, 0),
		BPF_STMT(BPF_ST, 3),
		BPF_STMT(BPF_LDX | BPF_MEM, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 36),
		BPF_STMT(BPF_ALU | BPF_NEG, 0),
		BPF_STMT(BPF_MISC | BPF_TXA, 0),
		BPF_JUMP(BPF_JMP | BPF_JSET | BPF_X, 0, 0, 0),
		BPF_STMT(BPF_RET | BPF_A, 0),
	};
	struct emu *e = boot(EMU_GEN_7_0, true);
	struct emu_state st;
	struct kio_bpf b;
	uint8_t wb;

	/* 1: copy */
	EQ(reg(-1, KIO_REGISTER_BPF_FILTER, (void *)40, 1), -EFAULT);
	/* 2: cmd_type, cmd_flags, resv */
	bpf_init(&b, OP_NOP, 0, 0, P_ALLOW, 1);
	b.cmd_type = 2;
	EQ(reg(-1, KIO_REGISTER_BPF_FILTER, &b, 1), -EINVAL);
	bpf_init(&b, OP_NOP, 0, 0, P_ALLOW, 1);
	b.cmd_flags = 1;
	EQ(reg(-1, KIO_REGISTER_BPF_FILTER, &b, 1), -EINVAL);
	bpf_init(&b, OP_NOP, 0, 0, P_ALLOW, 1);
	b.resv = 1;
	EQ(reg(-1, KIO_REGISTER_BPF_FILTER, &b, 1), -EINVAL);
	/* nr_args */
	bpf_init(&b, OP_NOP, 0, 0, P_ALLOW, 1);
	EQ(reg(-1, KIO_REGISTER_BPF_FILTER, &b, 0), -EINVAL);
	EQ(reg(-1, KIO_REGISTER_BPF_FILTER, &b, 2), -EINVAL);
	/* 3: opcode range */
	EQ(bpf(-1, 65, 0, 0, P_ALLOW, 1, NULL), -EINVAL);
	EQ(bpf(-1, 64, 0, 0, P_ALLOW, 1, NULL), 0);
	/* 4: flags, resv, resv2 */
	EQ(bpf(-1, OP_NOP, 4, 0, P_ALLOW, 1, NULL), -EINVAL);
	bpf_init(&b, OP_NOP, 0, 0, P_ALLOW, 1);
	b.filter.resv[2] = 1;
	EQ(reg(-1, KIO_REGISTER_BPF_FILTER, &b, 1), -EINVAL);
	bpf_init(&b, OP_NOP, 0, 0, P_ALLOW, 1);
	b.filter.resv2[4] = 1;
	EQ(reg(-1, KIO_REGISTER_BPF_FILTER, &b, 1), -EINVAL);
	/* 5: filter_len */
	EQ(bpf(-1, OP_NOP, 0, 0, P_ALLOW, 0, NULL), -EINVAL);
	EQ(bpf(-1, OP_NOP, 0, 0, P_ALLOW, 4097, NULL), -EINVAL);
	/* 6-7: pdu negotiation and write-back (K = 12 for SOCKET) */
	wb = 0xff;
	EQ(bpf(-1, OP_SOCKET, KIO_BPF_FILTER_SZ_STRICT, 0xff, P_ALLOW, 1, &wb), -EMSGSIZE);
	EQ(wb, 12);
	EQ(bpf(-1, OP_SOCKET, 0, 24, P_ALLOW, 1, &wb), -EMSGSIZE);
	EQ(wb, 12);
	EQ(bpf(-1, OP_SOCKET, KIO_BPF_FILTER_SZ_STRICT, 8, P_ALLOW, 1, &wb), -EMSGSIZE);
	EQ(wb, 12);
	EQ(bpf(-1, OP_NOP, KIO_BPF_FILTER_SZ_STRICT, 1, P_ALLOW, 1, &wb), -EMSGSIZE);
	EQ(wb, 0);
	EQ(bpf(-1, OP_OPENAT2, KIO_BPF_FILTER_SZ_STRICT, 0xff, P_ALLOW, 1, &wb), -EMSGSIZE);
	EQ(wb, 24);
	EQ(bpf(-1, OP_CONNECT, KIO_BPF_FILTER_SZ_STRICT, 24, P_ALLOW, 1, &wb), -EMSGSIZE);
	EQ(wb, 0); /* no CONNECT payload before 7.2 */
	/* the write-back happens even when the program is then rejected */
	EQ(bpf(-1, OP_SOCKET, 0, 8, no_ret, 1, &wb), -EINVAL);
	EQ(wb, 12);
	/* 8: program */
	EQ(bpf(-1, OP_NOP, 0, 0, NULL, 1, NULL), -EINVAL);
	EQ(bpf(-1, OP_NOP, 0, 0, (void *)64, 1, NULL), -EFAULT);
	EQ(bpf(-1, OP_NOP, 0, 0, no_ret, 1, NULL), -EINVAL);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		EQ(bpf(-1, OP_NOP, 0, 0, bad[i], 2, NULL), -EINVAL);
	emu_task_state(e, &st);
	EQ(st.total_filters, 1); /* only the opcode-64 filter took effect */
	/* 9: accepted; U < K without SZ_STRICT is fine */
	EQ(bpf(-1, OP_NOP, 0, 0, good, sizeof(good) / sizeof(good[0]), NULL), 0);
	EQ(bpf(-1, OP_SOCKET, 0, 8, P_ALLOW, 1, &wb), 0);
	EQ(wb, 12);
	emu_task_state(e, &st);
	EQ(st.total_filters, 3);
	EQ(st.nr_filters[OP_SOCKET], 1);
	DONE("bpf registration order");
}

Test(emulated, emulated_bpf_task_gate_and_config, .fini = fini)
{
	struct emu_config c = { .gen = EMU_GEN_7_0, .no_bpf_config = true };
	struct emu *e = boot_cfg(&c);
	struct emu_state st;
	struct kio_restriction r = SQE(OP_NOP);
	int fd;

	EQ(BPF(-1, OP_NOP, 0, P_ALLOW), -EACCES); /* NNP first */
	emu_set_nnp(e, true);
	EQ(BPF(-1, OP_NOP, 0, P_ALLOW), -EINVAL); /* CONFIG_IO_URING_BPF=n */
	fd = ring(0);
	EQ(BPF(fd, OP_NOP, 0, P_ALLOW), -EINVAL);
	emu_task_state(e, &st);
	EQ(st.exists, 0);
	KILL(e);

	/* with the config: a failed first task filter leaves no state, so the
	 * classic set is still possible; a successful one closes it */
	e = boot(EMU_GEN_7_0, true);
	EQ(bpf(-1, OP_SOCKET, KIO_BPF_FILTER_SZ_STRICT, 1, P_ALLOW, 1, NULL), -EMSGSIZE);
	emu_task_state(e, &st);
	EQ(st.exists, 0);
	EQ(task_restrict(&r, 1), 0);
	EQ(BPF(-1, OP_READ, 0, P_ALLOW), 0); /* filters after the set: fine */
	emu_task_state(e, &st);
	EQ(st.registered, 1);
	EQ(st.nr_filters[OP_READ], 1);
	KILL(e);
	e = boot(EMU_GEN_7_0, true);
	EQ(BPF(-1, OP_READ, 0, P_ALLOW), 0);
	EQ(task_restrict(&r, 1), -EPERM); /* classic set only before filters */
	DONE("bpf task gate and config");
}

/* liburing test/cbpf_filter.c, task level and ring level. */
Test(emulated, emulated_cbpf_filter_liburing_task_and_ring, .fini = fini)
{
	struct emu *parent = boot(EMU_GEN_7_0, true), *t;
	uint64_t before = emu_programs_run();
	uint8_t wb;
	int fd, old;

	for (int level = 0; level < 2; level++) {
		bool task = level == 0;
		/* each case in a fresh child; ring level uses ordinary rings */
#define CASE_BEGIN()                                                     \
	t = FORK(parent);                                            \
	become(t);                                                       \
	fd = task ? -1 : ring(0)
#define TARGET() (task ? -1 : fd)
#define NEWRING() (task ? (fd = ring(0)) : fd)

		/* deny NOP */
		CASE_BEGIN();
		EQ(BPF(TARGET(), OP_NOP, 0, P_DENY), 0);
		NEWRING();
		EQ(sub(fd, OP_NOP, 0), -EACCES);
		EQ(sub(fd, OP_READ, 0), 0);
		KILL(t);
		/* AF_INET only */
		CASE_BEGIN();
		EQ(BPF(TARGET(), OP_SOCKET, 0, P_INET), 0);
		NEWRING();
		EQ(sub_socket(fd, AF_INET, SOCK_STREAM, NULL), 0);
		EQ(sub_socket(fd, AF_INET6, SOCK_STREAM, NULL), -EACCES);
		EQ(sub_socket(fd, AF_UNIX, SOCK_STREAM, NULL), -EACCES);
		KILL(t);
		/* TCP only, SOCK_NONBLOCK masked off */
		CASE_BEGIN();
		EQ(BPF(TARGET(), OP_SOCKET, 0, P_TCP), 0);
		NEWRING();
		EQ(sub_socket(fd, AF_INET, SOCK_STREAM | SOCK_NONBLOCK, NULL), 0);
		EQ(sub_socket(fd, AF_INET6, SOCK_STREAM, NULL), 0);
		EQ(sub_socket(fd, AF_INET, SOCK_DGRAM, NULL), -EACCES);
		KILL(t);
		/* allow NOP with DENY_REST */
		CASE_BEGIN();
		EQ(BPF(TARGET(), OP_NOP, KIO_BPF_FILTER_DENY_REST, P_ALLOW), 0);
		NEWRING();
		EQ(sub(fd, OP_NOP, 0), 0);
		EQ(sub_socket(fd, AF_INET, SOCK_STREAM, NULL), -EACCES);
		EQ(sub(fd, 64, 0), -EACCES);
		KILL(t);
		/* OPENAT deny O_CREAT (k = 16); a ring made before is untouched */
		CASE_BEGIN();
		old = ring(0);
		EQ(sub_open(old, OP_OPENAT, O_CREAT | O_WRONLY, 0), 0);
		EQ(BPF(TARGET(), OP_OPENAT, 0, P_NO_CREAT), 0);
		NEWRING();
		EQ(sub_open(fd, OP_OPENAT, O_CREAT | O_WRONLY | 0100000 /* O_LARGEFILE */, 0),
		   -EACCES);
		EQ(sub_open(fd, OP_OPENAT, O_RDONLY, 0), 0);
		EQ(sub_open(old, OP_OPENAT, O_CREAT | O_WRONLY, 0), 0);
		KILL(t);
		/* OPENAT2 deny RESOLVE_IN_ROOT (k = 32) */
		CASE_BEGIN();
		EQ(BPF(TARGET(), OP_OPENAT2, 0, P_NO_IN_ROOT), 0);
		NEWRING();
		EQ(sub_open(fd, OP_OPENAT2, O_RDONLY, 0x10), -EACCES);
		EQ(sub_open(fd, OP_OPENAT2, O_RDONLY, 0), 0);
		/* OPENAT is a different slot */
		EQ(sub_open(fd, OP_OPENAT, O_RDONLY, 0x10), 0);
		KILL(t);
	}
	/* pdu_size_ring */
	t = FORK(parent);
	become(t);
	fd = ring(0);
	EQ(bpf(fd, OP_SOCKET, 0, 24, P_ALLOW, 1, &wb), -EMSGSIZE);
	EQ(wb, 12);
	EQ(bpf(fd, OP_SOCKET, 0, 8, P_ALLOW, 1, &wb), 0);
	EQ(wb, 12);
	fd = ring(0);
	EQ(bpf(fd, OP_SOCKET, KIO_BPF_FILTER_SZ_STRICT, 8, P_ALLOW, 1, &wb), -EMSGSIZE);
	EQ(wb, 12);
	KILL(t);
	fprintf(stderr, "emulated cbpf_filter cases: %llu programs run in the kernel's engine\n",
		(unsigned long long)(emu_programs_run() - before));
	EQ(emu_programs_run() - before > 20, 1);
	DONE("cbpf_filter (liburing) task and ring level");
}

/* Inheritance, stacking order, cannot loosen, multi-level, DENY_REST. */
Test(emulated, emulated_filter_inheritance_and_stacking, .fini = fini)
{
	struct emu *p = boot(EMU_GEN_7_0, true), *c, *g;
	struct emu_verdict v;
	struct emu_state st;
	int fd;

	/* inherit: a parent's NOP deny applies to a grandchild's ring */
	c = FORK(p);
	become(c);
	EQ(BPF(-1, OP_NOP, 0, P_DENY), 0);
	g = FORK(c);
	become(g);
	fd = ring(0);
	EQ(sub(fd, OP_NOP, 0), -EACCES);
	KILL(g);
	KILL(c);

	/* stack: parent AF_INET only, child TCP only; child's runs first */
	c = FORK(p);
	become(c);
	EQ(BPF(-1, OP_SOCKET, 0, P_INET), 0);
	g = FORK(c);
	become(g);
	EQ(BPF(-1, OP_SOCKET, 0, P_TCP), 0);
	fd = ring(0);
	EQ(sub_socket(fd, AF_INET, SOCK_STREAM, &v), 0);
	EQ(v.filters_run, 2);
	EQ(sub_socket(fd, AF_INET, SOCK_DGRAM, &v), -EACCES);
	EQ(v.stage, EMU_STAGE_FILTER);
	EQ(v.deny_index, 0); /* the child's TCP filter */
	EQ(v.filters_run, 1);
	EQ(sub_socket(fd, AF_INET6, SOCK_STREAM, &v), -EACCES);
	EQ(v.deny_index, 1); /* the parent's AF_INET filter */
	EQ(v.filters_run, 2);
	/* the parent's own new ring has only its filter */
	become(c);
	fd = ring(0);
	EQ(sub_socket(fd, AF_INET, SOCK_DGRAM, NULL), 0);
	KILL(g);
	KILL(c);

	/* cannot loosen */
	c = FORK(p);
	become(c);
	EQ(BPF(-1, OP_NOP, 0, P_DENY), 0);
	g = FORK(c);
	become(g);
	EQ(BPF(-1, OP_NOP, 0, P_ALLOW), 0);
	fd = ring(0);
	EQ(emu_submit_ex(g, fd, (uint8_t[40]){ 0 }, &v), -EACCES);
	EQ(v.deny_index, 1);
	KILL(g);
	KILL(c);

	/* multi-level: L1 inet, L2 tcp, L3 allow NOP + DENY_REST */
	c = FORK(p);
	become(c);
	EQ(BPF(-1, OP_SOCKET, 0, P_INET), 0);
	g = FORK(c);
	become(g);
	EQ(BPF(-1, OP_SOCKET, 0, P_TCP), 0);
	{
		struct emu *l3 = FORK(g);

		become(l3);
		EQ(BPF(-1, OP_NOP, KIO_BPF_FILTER_DENY_REST, P_ALLOW), 0);
		emu_task_state(l3, &st);
		EQ(st.dummy[OP_SOCKET], 0); /* already filtered: not dummied */
		EQ(st.nr_filters[OP_SOCKET], 2);
		EQ(st.dummy[OP_READ], 1);
		EQ(st.dummy[64], 1);
		EQ(st.dummy[65], 0); /* beyond OP_LAST */
		fd = ring(0);
		EQ(sub(fd, OP_NOP, 0), 0);
		EQ(sub_socket(fd, AF_INET, SOCK_STREAM, NULL), 0);
		EQ(sub_socket(fd, AF_INET, SOCK_DGRAM, NULL), -EACCES);
		EQ(sub_socket(fd, AF_INET6, SOCK_STREAM, NULL), -EACCES);
		EQ(sub(fd, OP_READ, 0), -EACCES);
		/* DENY_REST closed READ for good: a later allow runs, then the dummy */
		EQ(BPF(-1, OP_READ, 0, P_ALLOW), 0);
		fd = ring(0);
		{
			uint8_t cx[40];

			emu_ctx(cx, OP_READ, 0, 0);
			EQ(emu_submit_ex(l3, fd, cx, &v), -EACCES);
			EQ(v.stage, EMU_STAGE_DUMMY);
			EQ(v.filters_run, 1);
		}
		KILL(l3);
	}
	KILL(g);
	KILL(c);
	DONE("filter inheritance and stacking");
}

/* Copy-on-write: existing rings and children are unaffected by later task
 * filters; ring-level filters never reach the task or siblings. */
Test(emulated, emulated_filter_copy_on_write, .fini = fini)
{
	for (int leak = 0; leak < 2; leak++) {
		struct emu_config cfg = { .gen = EMU_GEN_7_0, .no_new_privs = true,
					  .cow_source_unmarked = leak };
		struct emu *p = boot_cfg(&cfg), *c;
		int early, sib, fd;

		EQ(BPF(-1, OP_READ, 0, P_ALLOW), 0); /* the task has a table */
		early = ring(0);
		c = FORK(p);
		EQ(BPF(-1, OP_NOP, 0, P_DENY), 0);
		fd = ring(0);
		EQ(sub(fd, OP_NOP, 0), -EACCES);
		/* the fixed kernel: unaffected; the first merge: leaks */
		EQ(sub(early, OP_NOP, 0), leak ? -EACCES : 0);
		become(c);
		fd = ring(0);
		EQ(sub(fd, OP_NOP, 0), leak ? -EACCES : 0);
		/* ring-level filters COW the inherited table */
		become(p);
		fd = ring(0);
		sib = ring(0);
		EQ(BPF(fd, OP_WRITE, 0, P_DENY), 0);
		EQ(sub(fd, OP_WRITE, 0), -EACCES);
		EQ(sub(sib, OP_WRITE, 0), 0);
		fd = ring(0);
		EQ(sub(fd, OP_WRITE, 0), 0);
		KILL(c);
		KILL(p);
	}
	DONE("copy-on-write");
}

/* Ring-level filters on any ring state, gated once enabled. */
Test(emulated, emulated_ring_filters_any_state, .fini = fini)
{
	struct emu *e = boot(EMU_GEN_7_0, false);
	struct kio_restriction r[3];
	int fd;

	/* no privilege needed on the ring path */
	fd = ring(KIO_SETUP_R_DISABLED);
	EQ(BPF(fd, OP_NOP, 0, P_DENY), 0);
	EQ(reg(fd, KIO_REGISTER_ENABLE_RINGS, NULL, 0), 0);
	EQ(sub(fd, OP_NOP, 0), -EACCES);
	EQ(BPF(fd, OP_READ, 0, P_DENY), 0);
	EQ(sub(fd, OP_READ, 0), -EACCES);
	/* register side restricted without BPF_FILTER: gated after enable */
	fd = ring(KIO_SETUP_R_DISABLED);
	r[0] = SQE(OP_NOP);
	r[1] = FLAGS_OK(0);
	r[2] = REGOP(KIO_REGISTER_PROBE);
	EQ(ring_restrict(fd, r, 3), 0);
	EQ(BPF(fd, OP_NOP, 0, P_ALLOW), 0); /* disabled: not gated */
	EQ(reg(fd, KIO_REGISTER_ENABLE_RINGS, NULL, 0), 0);
	EQ(BPF(fd, OP_NOP, 0, P_ALLOW), -EACCES);
	/* classic gate runs before the filters */
	{
		struct emu_verdict v;
		uint8_t cx[40];

		emu_ctx(cx, OP_READ, 0, 0);
		EQ(emu_submit_ex(e, fd, cx, &v), -EACCES);
		EQ(v.stage, EMU_STAGE_CLASSIC);
		EQ(v.filters_run, 0);
	}
	/* a failed ring RESTRICTIONS keeps the ring's filters (7.0-rc7) */
	fd = ring(KIO_SETUP_R_DISABLED);
	EQ(BPF(fd, OP_NOP, 0, P_DENY), 0);
	r[0] = SQE(200);
	EQ(ring_restrict(fd, r, 1), -EINVAL);
	r[0] = SQE(OP_NOP);
	EQ(ring_restrict(fd, r, 2), 0);
	EQ(reg(fd, KIO_REGISTER_ENABLE_RINGS, NULL, 0), 0);
	EQ(sub(fd, OP_NOP, 0), -EACCES);
	DONE("ring filters on any state");
}

/* 7.2: the CONNECT payload and its filling rules. */
Test(emulated, emulated_connect_payload_7_2, .fini = fini)
{
	static const struct sock_filter deny_unix[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 16),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_UNIX, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, 0),
		BPF_STMT(BPF_RET | BPF_K, 1),
	};
	struct sock_filter deny_port22[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 20),
		BPF_STMT(BPF_ALU | BPF_AND | BPF_K, 0xffff),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, htons(22), 0, 1),
		BPF_STMT(BPF_RET | BPF_K, 0),
		BPF_STMT(BPF_RET | BPF_K, 1),
	};
	struct sock_filter only_lo[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 24),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, 1),
		BPF_STMT(BPF_RET | BPF_K, 0),
	};
	struct sock_filter deny_dead[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 36),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, 0),
		BPF_STMT(BPF_RET | BPF_K, 1),
	};
	struct in_addr lo;
	struct in6_addr dead;
	uint32_t w;
	struct emu *p, *t;
	uint8_t wb;
	int fd;

	inet_pton(AF_INET, "127.0.0.1", &lo);
	only_lo[1].k = lo.s_addr;
	inet_pton(AF_INET6, "2001:db8::dead", &dead);
	memcpy(&w, &dead.s6_addr[12], 4);
	deny_dead[1].k = w;

	p = boot(EMU_GEN_7_0, true);
	EQ(bpf(-1, OP_CONNECT, 0, 24, P_INET, 4, &wb), -EMSGSIZE); /* group skipped on 7.0 */
	EQ(wb, 0);
	KILL(p);

	p = boot(EMU_GEN_7_2, true);
	EQ(emu_pdu_size(p, OP_CONNECT), 24);
	t = FORK(p);
	become(t);
	EQ(BPF(-1, OP_CONNECT, 0, P_INET), 0);
	fd = ring(0);
	EQ(sub_v4(fd, "127.0.0.1", 80, sizeof(struct sockaddr_in)), 0);
	EQ(sub_v6(fd, "::1", 80), -EACCES);
	/* addr_len 1: the family is not filled (reads 0), so an allow-list of
	 * AF_INET denies it */
	EQ(sub_v4(fd, "127.0.0.1", 80, 1), -EACCES);
	KILL(t);

	t = FORK(p);
	become(t);
	EQ(BPF(-1, OP_CONNECT, 0, deny_unix), 0);
	EQ(BPF(-1, OP_CONNECT, 0, deny_port22), 0);
	EQ(BPF(-1, OP_CONNECT, 0, deny_dead), 0);
	fd = ring(0);
	EQ(sub_v4(fd, "10.0.0.1", 80, sizeof(struct sockaddr_in)), 0);
	EQ(sub_v4(fd, "10.0.0.1", 22, sizeof(struct sockaddr_in)), -EACCES);
	EQ(sub_v6(fd, "::1", 22), -EACCES);
	EQ(sub_v6(fd, "2001:db8::dead", 80), -EACCES);
	EQ(sub_v6(fd, "2001:db8::beef", 80), 0);
	{
		struct sockaddr_un_min { sa_family_t f; char p[8]; } u = { AF_UNIX, "x" };
		uint8_t cx[40];

		emu_ctx_connect(cx, &u, sizeof(u));
		EQ(emu_submit(t, fd, cx), -EACCES);
		/* stale addr_len: an AF_INET address cut short sees only the family,
		 * port 0, and passes the port filter */
		EQ(sub_v4(fd, "10.0.0.1", 22, 2), 0);
	}
	KILL(t);

	t = FORK(p);
	become(t);
	EQ(BPF(-1, OP_CONNECT, 0, only_lo), 0);
	fd = ring(0);
	EQ(sub_v4(fd, "127.0.0.1", 80, sizeof(struct sockaddr_in)), 0);
	EQ(sub_v4(fd, "127.0.0.127", 80, sizeof(struct sockaddr_in)), -EACCES);
	KILL(t);
	DONE("connect payload (7.2)");
}

/* Every program really runs in the kernel: a random differential run of a
 * stacked SOCKET policy against the predicate it encodes. */
Test(emulated, emulated_filters_differential, .fini = fini)
{
	int n = getenv("IOUR_TEST_LONG") ? 20000 : 2000, mism = 0;
	uint64_t before = emu_programs_run();
	unsigned seed = 12345;
	int fd;

	boot(EMU_GEN_7_0, true);
	EQ(BPF(-1, OP_SOCKET, 0, P_INET), 0);
	EQ(BPF(-1, OP_SOCKET, 0, P_TCP), 0);
	fd = ring(0);
	for (int i = 0; i < n; i++) {
		uint32_t fam = (uint32_t)rand_r(&seed) % 12;
		uint32_t type = (uint32_t)rand_r(&seed) % 6 | ((rand_r(&seed) & 1) ? SOCK_CLOEXEC : 0);
		bool want = fam == AF_INET && (type & 0xf) == SOCK_STREAM;

		mism += (sub_socket(fd, fam, type, NULL) == 0) != want;
	}
	fprintf(stderr, "emulated differential: %d socket requests, %llu kernel runs, %d mismatches\n",
		n, (unsigned long long)(emu_programs_run() - before), mism);
	EQ(mism, 0);
	DONE("differential");
}

/* ------------------------------------------------------------------ */
/* fault injection and the call log                                     */

static int hook_fail_prctl(void *arg, const struct emu_call *c)
{
	int *n = arg;

	if (c->kind != EMU_CALL_PRCTL)
		return 0;
	(*n)++;
	return -EPERM;
}

Test(emulated, emulated_fault_injection_and_log, .fini = fini)
{
	struct kio_restriction r[2] = { SQE(OP_NOP), FLAGS_OK(IOSQE_ASYNC) };
	struct emu *e = boot(EMU_GEN_7_0, true);
	struct emu_fault f;
	const struct emu_call *c;
	struct emu_state st;
	struct kio_bpf b;
	int hooked = 0;
	int fd;

	/* the 2nd seam call fails, without effect */
	memset(&f, 0, sizeof(f));
	f.seq = 2;
	f.err = ENOMEM;
	EQ(emu_fault_add(e, &f), 0);
	fd = ring(0);
	EQ(fd >= EMU_FD_BASE, 1);
	EQ(task_restrict(r, 2), -ENOMEM);
	emu_task_state(e, &st);
	EQ(st.exists, 0);
	EQ(emu_faults_pending(e), 0);
	c = emu_log_at(e, 1);
	EQ(c->injected, 1);
	EQ(c->result, -ENOMEM);
	/* the log holds the exact bytes passed */
	EQ(c->kind, EMU_CALL_REGISTER);
	EQ(c->fd, -1);
	EQ(c->opcode, KIO_REGISTER_RESTRICTIONS);
	EQ(c->nr_args, 1);
	EQ(c->arg_len, 16 + 2 * 16);
	{
		uint8_t want[48] = { 0 };

		want[2] = 2; /* nr_res */
		memcpy(want + 16, r, sizeof(r));
		EQ(memcmp(c->arg, want, sizeof(want)), 0);
	}
	EQ(task_restrict(r, 2), 0);

	/* the 2nd blind BPF_FILTER fails with EFAULT */
	memset(&f, 0, sizeof(f));
	f.kind = EMU_CALL_REGISTER;
	f.match_opcode = true;
	f.opcode = KIO_REGISTER_BPF_FILTER;
	f.fd_class = EMU_FD_BLIND;
	f.nth = 2;
	f.err = EFAULT;
	EQ(emu_fault_add(e, &f), 0);
	EQ(BPF(fd, OP_NOP, 0, P_ALLOW), 0); /* ring fd: no match */
	EQ(BPF(-1, OP_NOP, 0, P_ALLOW), 0);
	EQ(BPF(-1, OP_NOP, 0, P_ALLOW), -EFAULT);
	EQ(BPF(-1, OP_NOP, 0, P_ALLOW), 0);
	emu_task_state(e, &st);
	EQ(st.nr_filters[OP_NOP], 2);
	c = emu_log_at(e, emu_log_len(e) - 1);
	bpf_init(&b, OP_NOP, 0, 0, P_ALLOW, 1);
	EQ(c->arg_len, sizeof(b));
	EQ(memcmp(c->arg, &b, sizeof(b)), 0);
	EQ(c->prog_len, sizeof(P_ALLOW));
	EQ(memcmp(c->prog, P_ALLOW, sizeof(P_ALLOW)), 0);

	/* a hook */
	emu_set_hook(e, hook_fail_prctl, &hooked);
	EQ(iour__prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), -EPERM);
	EQ(hooked, 1);
	emu_set_hook(e, NULL, NULL);
	EQ(iour__prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), 0);

	/* setup and close faults */
	memset(&f, 0, sizeof(f));
	f.kind = EMU_CALL_SETUP;
	f.err = EMFILE;
	EQ(emu_fault_add(e, &f), 0);
	EQ(ring(0), -EMFILE);
	fd = ring(0);
	EQ(fd >= EMU_FD_BASE, 1);
	EQ(emu_log_at(e, emu_log_len(e) - 1)->arg_len, sizeof(struct kio_params));
	EQ(emu_calls(e), emu_log_len(e));
	emu_log_reset(e);
	EQ(emu_log_len(e), 0);
	EQ(iour__close(fd), 0);
	EQ(emu_log_len(e), 1);
	EQ(emu_log_at(e, 0)->seq, emu_calls(e));
	emu_fault_clear(e);
	EQ(emu_fault_add(e, &(struct emu_fault){ .err = 0 }), -EINVAL);
	DONE("fault injection and log");
}

/* ------------------------------------------------------------------ */
/* setup, SINGLE_ISSUER, exec, seccomp                                  */

Test(emulated, emulated_setup_and_single_issuer, .fini = fini)
{
	struct emu_config cfg = { .gen = EMU_GEN_6_18, .setup_errno = EPERM };
	struct emu *e = boot_cfg(&cfg), *c;
	struct kio_params p;
	int fd, fd2;

	EQ(ring(0), -EPERM); /* io_uring_disabled */
	KILL(e);
	e = boot(EMU_GEN_6_18, false);
	EQ(iour__setup(1, NULL), -EFAULT);
	EQ(ring(1U << 30), -EINVAL);
	EQ(ring(1U << 19), -EINVAL); /* SQE_MIXED is 6.19 */
	EQ(iour__setup(0, &(struct kio_params){ 0 }), -EINVAL);
	memset(&p, 0, sizeof(p));
	p.resv[1] = 1;
	EQ(iour__setup(8, &p), -EINVAL);
	memset(&p, 0, sizeof(p));
	EQ(iour__setup(5, &p) >= EMU_FD_BASE, 1);
	EQ(p.sq_entries, 8);
	EQ(p.cq_entries, 16);
	EQ(p.features, 0x3ffff);
	EQ(iour__setup(40000, &p), -EINVAL);
	p.flags = KIO_SETUP_CLAMP;
	EQ(iour__setup(40000, &p) >= EMU_FD_BASE, 1);
	EQ(p.sq_entries, 32768);
	/* enter */
	fd = ring(KIO_SETUP_R_DISABLED);
	EQ(iour__enter(fd, 1, 0, 0, NULL, 0), -EBADFD);
	EQ(iour__enter(fd, 1, 0, 1U << 8, NULL, 0), -EINVAL);
	{
		int nf = real_fd();

		EQ(iour__enter(nf, 1, 0, 0, NULL, 0), -EOPNOTSUPP);
		close(nf);
	}
	/* SINGLE_ISSUER: the creator (or the enabler) is the submitter */
	fd = ring(KIO_SETUP_SINGLE_ISSUER);
	fd2 = ring(KIO_SETUP_SINGLE_ISSUER | KIO_SETUP_R_DISABLED);
	c = FORK(e);
	become(c);
	EQ(reg(fd, KIO_REGISTER_PROBE, NULL, 0), -EEXIST);
	EQ(sub(fd, OP_NOP, 0), -EEXIST);
	EQ(reg(fd2, KIO_REGISTER_ENABLE_RINGS, NULL, 0), 0); /* a shared ring */
	EQ(sub(fd2, OP_NOP, 0), 0);
	become(e);
	EQ(sub(fd2, OP_NOP, 0), -EEXIST);
	EQ(reg(fd2, KIO_REGISTER_PROBE, NULL, 0), -EEXIST);
	EQ(sub(fd, OP_NOP, 0), 0);
	DONE("setup and SINGLE_ISSUER");
}

Test(emulated, emulated_exec_hazard, .fini = fini)
{
	struct kio_restriction r = SQE(OP_NOP);
	struct emu_config keep = { .gen = EMU_GEN_7_2, .no_new_privs = true,
				   .exec_keeps_restrictions = true };
	struct emu *e = boot(EMU_GEN_7_0, true);
	struct emu_state st;
	int fd;

	EQ(task_restrict(&r, 1), 0);
	EQ(emu_has_tctx(e), 0);
	EQ(emu_exec(e), 0); /* no ring used: kept */
	emu_task_state(e, &st);
	EQ(st.exists, 1);
	fd = ring(0);
	EQ(emu_exec(e), 1); /* a task context: dropped (the 7.0 hazard) */
	EQ(iour__close(fd), -EBADF); /* O_CLOEXEC */
	emu_task_state(e, &st);
	EQ(st.exists, 0);
	fd = ring(0);
	EQ(sub(fd, OP_READ, 0), 0);
	KILL(e);
	e = boot_cfg(&keep);
	EQ(task_restrict(&r, 1), 0);
	(void)ring(0);
	EQ(emu_exec(e), 0);
	emu_task_state(e, &st);
	EQ(st.exists, 1);
	DONE("exec hazard");
}

Test(emulated, emulated_seccomp_companion, .fini = fini)
{
	struct sock_filter enosys[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, KIO_NR_SETUP, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_filter eperm_big[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
		BPF_JUMP(BPF_JMP | BPF_JGT | BPF_K, 64, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_filter bad[] = { BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 0) };
	struct sock_fprog fp = { .len = 4, .filter = enosys };
	struct emu *e = boot(EMU_GEN_6_1, false), *c;
	struct kio_params p;

	EQ(iour__seccomp(SECCOMP_SET_MODE_FILTER, 0, &fp), -EACCES);
	EQ(iour__prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), 0);
	fp.len = 1;
	fp.filter = bad;
	EQ(iour__seccomp(SECCOMP_SET_MODE_FILTER, 0, &fp), -EINVAL);
	fp.len = 4;
	fp.filter = eperm_big;
	EQ(iour__seccomp(SECCOMP_SET_MODE_FILTER, 0, &fp), 0);
	memset(&p, 0, sizeof(p));
	EQ(iour__setup(8, &p) >= EMU_FD_BASE, 1);
	EQ(iour__setup(128, &p), -EPERM);
	fp.filter = enosys;
	EQ(iour__seccomp(SECCOMP_SET_MODE_FILTER, 0, &fp), 0);
	EQ(emu_seccomp_count(e), 2);
	EQ(iour__prctl(PR_GET_SECCOMP, 0, 0, 0, 0), 2);
	/* the most recent filter's ERRNO wins over an older one's */
	EQ(iour__setup(8, &p), -ENOSYS);
	EQ(iour__setup(128, &p), -ENOSYS);
	c = FORK(e);
	become(c);
	EQ(iour__setup(8, &p), -ENOSYS);
	KILL(c);
	DONE("seccomp companion (run by the real kernel in a child)");
}

/* ------------------------------------------------------------------ */
/* the emulator against the real kernel, where the real kernel can answer */

static long real_reg(int fd, uint32_t op, void *arg, uint32_t nr)
{
	const struct iour_sys_ops *o = iour__sys_real();

	return o->io_uring_register(o->ctx, fd, op, arg, nr);
}

static long emu_reg(struct emu *e, int fd, uint32_t op, void *arg, uint32_t nr)
{
	const struct iour_sys_ops *o = emu_ops(e);

	return o->io_uring_register(o->ctx, fd, op, arg, nr);
}

/* One SQE on a real ring: the CQE result. */
static int real_submit(struct io_uring *r, uint8_t op, uint8_t flags)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(r);
	struct io_uring_cqe *cqe;
	int res;

	cr_assert(sqe);
	io_uring_prep_nop(sqe);
	sqe->opcode = op;
	sqe->fd = -1;
	sqe->flags = flags;
	cr_assert_eq(io_uring_submit(r), 1);
	cr_assert_eq(io_uring_wait_cqe(r, &cqe), 0);
	res = cqe->res;
	io_uring_cqe_seen(r, cqe);
	return res;
}

/*
 * Random restriction sets registered on a real R_DISABLED ring and on an
 * emulated one of the running kernel's generation; the registration errno,
 * the register gate after enable and the SQE gate must agree.  Register
 * handlers and request preps are not modelled by the emulator, so past the
 * gates only "denied (-EACCES) or not" is compared.
 */
Test(emulated, emulated_vs_real_kernel_ring_differential, .fini = fini)
{
	UNIT_REQUIRE_URING();
	static const uint8_t sqe_ops[] = { 0, 1, 2, 3, 19, 22, 23 };
	static const uint8_t flag_sets[] = { 0, 0x01, 0x02, 0x10, 0x11, 0x13 };
	struct kio_query_opcode qo;
	struct kio_query_hdr h;
	struct emu_config cfg = { .gen = EMU_GEN_6_18 };
	int sets = getenv("IOUR_TEST_LONG") ? 2000 : 300, cmp = 0, mism = 0;
	unsigned seed = 4242;
	struct emu *e;

	memset(&h, 0, sizeof(h));
	h.query_data = (uintptr_t)&qo;
	h.size = sizeof(qo);
	if (real_reg(-1, KIO_REGISTER_QUERY, &h, 0) != 0 || h.result != 0)
		cr_skip_test("emulated differential needs IORING_REGISTER_QUERY (6.18+)");
	if (qo.nr_register_opcodes > KIO_REGISTER_BPF_FILTER)
		cfg.gen = EMU_GEN_7_0;
	cfg.op_last = qo.nr_request_opcodes;
	cfg.reg_last = qo.nr_register_opcodes;
	e = boot_cfg(&cfg);
	emu_uninstall(); /* both sides are called explicitly below */

	/* the blind path, every opcode, NULL argument */
	for (uint32_t op = 0; op < 64; op++) {
		for (uint32_t nr = 0; nr < 2; nr++) {
			long a = real_reg(-1, op, NULL, nr), b = emu_reg(e, -1, op, NULL, nr);

			cmp++;
			if (a != b) {
				mism++;
				fprintf(stderr, "emulated mismatch: blind op %u nr %u real %ld emu %ld\n",
					op, nr, a, b);
			}
		}
	}
	for (int s = 0; s < sets; s++) {
		struct kio_restriction r[8];
		struct io_uring ring;
		struct io_uring_params p;
		int n = rand_r(&seed) % 7, efd, rfd;
		long a, b;

		memset(r, 0, sizeof(r));
		for (int i = 0; i < n; i++) {
			r[i].opcode = (uint16_t)(rand_r(&seed) % 9 == 0 ? 4 : rand_r(&seed) % 4);
			switch (r[i].opcode) {
			case KIO_RESTRICTION_REGISTER_OP:
				r[i].register_op = (uint8_t)(rand_r(&seed) % (qo.nr_register_opcodes + 3));
				break;
			case KIO_RESTRICTION_SQE_OP:
				r[i].sqe_op = rand_r(&seed) % 4 ? sqe_ops[rand_r(&seed) % 7]
								 : (uint8_t)(rand_r(&seed) % 70);
				break;
			default:
				r[i].sqe_flags = (uint8_t)rand_r(&seed);
			}
		}
		memset(&p, 0, sizeof(p));
		p.flags = KIO_SETUP_R_DISABLED;
		cr_assert_eq(io_uring_queue_init_params(4, &ring, &p), 0);
		rfd = ring.ring_fd;
		efd = (int)emu_ops(e)->io_uring_setup(e, 4, &(struct kio_params){ .flags =
								      KIO_SETUP_R_DISABLED });
		a = real_reg(rfd, KIO_REGISTER_RESTRICTIONS, r, (uint32_t)n);
		b = emu_reg(e, efd, KIO_REGISTER_RESTRICTIONS, r, (uint32_t)n);
		cmp++;
		if (a != b) {
			mism++;
			fprintf(stderr, "emulated mismatch: set %d register real %ld emu %ld\n", s, a, b);
		}
		if (a == 0 && b == 0) {
			cr_assert_eq(real_reg(rfd, KIO_REGISTER_ENABLE_RINGS, NULL, 0), 0);
			cr_assert_eq(emu_reg(e, efd, KIO_REGISTER_ENABLE_RINGS, NULL, 0), 0);
			for (uint32_t op = 0; op < qo.nr_register_opcodes; op++) {
				if (op == 9 /* PERSONALITY: would succeed and allocate */)
					continue;
				a = real_reg(rfd, op, NULL, 0) == -EACCES;
				b = emu_reg(e, efd, op, NULL, 0) == -EACCES;
				cmp++;
				if (a != b) {
					mism++;
					fprintf(stderr, "emulated mismatch: set %d reg op %u\n", s, op);
				}
			}
			for (size_t i = 0; i < sizeof(sqe_ops); i++) {
				for (size_t f = 0; f < sizeof(flag_sets); f++) {
					uint8_t cx[40];

					emu_ctx(cx, sqe_ops[i], flag_sets[f], 0);
					a = real_submit(&ring, sqe_ops[i], flag_sets[f]) == -EACCES;
					b = emu_submit(e, efd, cx) == -EACCES;
					cmp++;
					if (a != b) {
						mism++;
						fprintf(stderr,
							"emulated mismatch: set %d op %u flags %#x\n",
							s, sqe_ops[i], flag_sets[f]);
					}
				}
			}
		}
		io_uring_queue_exit(&ring);
		cr_assert_eq(emu_ops(e)->close(e, efd), 0);
	}
	fprintf(stderr, "emulated %s vs real kernel: %d restriction sets, %d answers compared, "
		"%d mismatches\n", emu_gen_name(cfg.gen), sets, cmp, mism);
	EQ(mism, 0);
	DONE("emulated vs real kernel");
}

/*
 * The emulator accepts a filter when the real kernel's generic checker
 * (SO_ATTACH_FILTER) and its own io_uring instruction list agree; the
 * library's validator implements both from the document.  Random programs
 * must get the same verdict from both.
 */
Test(emulated, emulated_filter_acceptance_matches_validator, .fini = fini)
{
	static const uint16_t codes[] = {
		BPF_LD | BPF_W | BPF_ABS, BPF_LD | BPF_H | BPF_ABS, BPF_LD | BPF_B | BPF_ABS,
		BPF_LD | BPF_W | BPF_IND, BPF_LD | BPF_W | BPF_LEN, BPF_LDX | BPF_W | BPF_LEN,
		BPF_LD | BPF_IMM, BPF_LDX | BPF_IMM, BPF_LD | BPF_MEM, BPF_LDX | BPF_MEM,
		BPF_ST, BPF_STX, BPF_LDX | BPF_B | BPF_MSH, BPF_MISC | BPF_TAX, BPF_MISC | BPF_TXA,
		BPF_ALU | BPF_ADD | BPF_K, BPF_ALU | BPF_SUB | BPF_X, BPF_ALU | BPF_DIV | BPF_K,
		BPF_ALU | BPF_MOD | BPF_K, BPF_ALU | BPF_LSH | BPF_K, BPF_ALU | BPF_RSH | BPF_X,
		BPF_ALU | BPF_AND | BPF_K, BPF_ALU | BPF_XOR | BPF_X, BPF_ALU | BPF_NEG,
		BPF_JMP | BPF_JA, BPF_JMP | BPF_JEQ | BPF_K, BPF_JMP | BPF_JGT | BPF_X,
		BPF_JMP | BPF_JSET | BPF_K, BPF_RET | BPF_K, BPF_RET | BPF_A, BPF_RET | BPF_X,
		0xffff,
	};
	static const uint32_t ks[] = { 0, 1, 2, 3, 4, 8, 15, 16, 31, 32, 36, 38, 40, 60, 64,
				       (uint32_t)SKF_AD_OFF + SKF_AD_PROTOCOL, 0xffffffff };
	int n = getenv("IOUR_TEST_LONG") ? 20000 : 2000, acc = 0, mism = 0;
	unsigned seed = 777;
	int fd;

	boot(EMU_GEN_7_0, false);
	fd = ring(0);
	for (int i = 0; i < n; i++) {
		struct sock_filter p[6];
		int len = 1 + rand_r(&seed) % 6;
		long got;
		int want;

		for (int j = 0; j < len; j++) {
			p[j].code = codes[rand_r(&seed) % (sizeof(codes) / sizeof(codes[0]))];
			p[j].jt = (uint8_t)(rand_r(&seed) % 3);
			p[j].jf = (uint8_t)(rand_r(&seed) % 3);
			p[j].k = ks[rand_r(&seed) % (sizeof(ks) / sizeof(ks[0]))];
		}
		if (rand_r(&seed) % 8)
			p[len - 1] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, 1);
		want = iour_cbpf_validate((const struct iour_insn *)p, (size_t)len, 0, NULL) == 0;
		got = bpf(fd, OP_NOP, 0, 0, p, (size_t)len, NULL);
		cr_assert(got == 0 || got == -EINVAL, "emulated: unexpected %ld", got);
		acc += got == 0;
		if ((got == 0) != want) {
			mism++;
			fprintf(stderr, "emulated acceptance mismatch (emulator %ld, validator %d):",
				got, want);
			for (int j = 0; j < len; j++)
				fprintf(stderr, " {%#x,%u,%u,%#x}", p[j].code, p[j].jt, p[j].jf, p[j].k);
			fprintf(stderr, "\n");
		}
	}
	fprintf(stderr, "emulated filter acceptance: %d random programs, %d accepted, "
		"%d disagreements with iour_cbpf_validate\n", n, acc, mism);
	EQ(mism, 0);
	DONE("filter acceptance vs validator");
}
