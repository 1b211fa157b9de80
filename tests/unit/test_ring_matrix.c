/* SPDX-License-Identifier: MIT */
/*
 * Restricted rings on the real kernel: the allow/deny matrix for request
 * opcodes, SQE flags allowed/required, and register opcodes.  Every case
 * uses a fresh ring; an allowed request must complete with its normal
 * result, a forbidden one must fail with -EACCES and have no effect.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "iouring_restrict/iouring_restrict.h"
#include "ring_util.h"
#include "uring_avail.h"

/* ---- request opcodes ---------------------------------------------------- */

/* Everything one request needs, fresh per case. */
struct env {
	int rp[2];      /* pipe holding "abcd" to read */
	int wp[2];      /* empty pipe to write into */
	int spare;      /* an fd for CLOSE */
	int file;       /* a memfd for FSYNC */
	char buf[16];
	struct iovec iov;
	struct statx stx;
};

static void env_open(struct env *e)
{
	memset(e, 0, sizeof(*e));
	cr_assert_eq(pipe2(e->rp, O_CLOEXEC | O_NONBLOCK), 0);
	cr_assert_eq(pipe2(e->wp, O_CLOEXEC | O_NONBLOCK), 0);
	cr_assert_eq(write(e->rp[1], "abcd", 4), 4);
	e->spare = open("/dev/null", O_RDONLY | O_CLOEXEC);
	e->file = memfd_create("iour-test", MFD_CLOEXEC);
	cr_assert(e->spare >= 0 && e->file >= 0);
}

static void env_close(struct env *e)
{
	close(e->rp[0]);
	close(e->rp[1]);
	close(e->wp[0]);
	close(e->wp[1]);
	if (e->spare >= 0)
		close(e->spare);
	close(e->file);
}

struct op_case {
	const char *name;
	uint32_t op;
	void (*prep)(struct io_uring_sqe *sqe, struct env *e);
	/* Checks an allowed result and its effect; returns 0 if right. */
	int (*allowed_ok)(int res, struct env *e);
	/* Checks that a denied request had no effect; returns 0 if right. */
	int (*no_effect)(struct env *e);
};

static void p_nop(struct io_uring_sqe *s, struct env *e) { (void)e; io_uring_prep_nop(s); }
static void p_read(struct io_uring_sqe *s, struct env *e) { io_uring_prep_read(s, e->rp[0], e->buf, 4, 0); }
static void p_write(struct io_uring_sqe *s, struct env *e) { io_uring_prep_write(s, e->wp[1], "wxyz", 4, 0); }
static void p_readv(struct io_uring_sqe *s, struct env *e)
{
	e->iov.iov_base = e->buf;
	e->iov.iov_len = 4;
	io_uring_prep_readv(s, e->rp[0], &e->iov, 1, 0);
}
static void p_writev(struct io_uring_sqe *s, struct env *e)
{
	e->iov.iov_base = (void *)"wxyz";
	e->iov.iov_len = 4;
	io_uring_prep_writev(s, e->wp[1], &e->iov, 1, 0);
}
static void p_openat(struct io_uring_sqe *s, struct env *e)
{
	(void)e;
	io_uring_prep_openat(s, AT_FDCWD, "/dev/null", O_RDONLY | O_CLOEXEC, 0);
}
static void p_close(struct io_uring_sqe *s, struct env *e) { io_uring_prep_close(s, e->spare); }
static void p_fsync(struct io_uring_sqe *s, struct env *e) { io_uring_prep_fsync(s, e->file, 0); }
static void p_statx(struct io_uring_sqe *s, struct env *e)
{
	io_uring_prep_statx(s, AT_FDCWD, "/", 0, STATX_BASIC_STATS, &e->stx);
}
static void p_socket(struct io_uring_sqe *s, struct env *e)
{
	(void)e;
	io_uring_prep_socket(s, AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, 0);
}

static int ok_zero(int res, struct env *e) { (void)e; return res != 0; }
static int ok_read(int res, struct env *e) { return res != 4 || memcmp(e->buf, "abcd", 4); }
static int ok_write(int res, struct env *e)
{
	char b[8];

	return res != 4 || read(e->wp[0], b, sizeof(b)) != 4 || memcmp(b, "wxyz", 4);
}
static int ok_newfd(int res, struct env *e)
{
	(void)e;
	if (res < 0)
		return 1;
	close(res);
	return 0;
}
static int ok_close(int res, struct env *e)
{
	int gone = fcntl(e->spare, F_GETFD) < 0 && errno == EBADF;

	if (!res)
		e->spare = -1;
	return res != 0 || !gone;
}
static int ok_statx(int res, struct env *e) { return res != 0 || !(e->stx.stx_mode & 0040000); }

static int none(struct env *e) { (void)e; return 0; }
static int unread(struct env *e)
{
	char b[8];

	return read(e->rp[0], b, sizeof(b)) != 4; /* still all there */
}
static int unwritten(struct env *e)
{
	char b[8];

	return !(read(e->wp[0], b, sizeof(b)) < 0 && errno == EAGAIN);
}
static int still_open(struct env *e) { return fcntl(e->spare, F_GETFD) < 0; }
static int no_statx(struct env *e) { return e->stx.stx_mask != 0; }

static const struct op_case op_cases[] = {
	{ "NOP", IORING_OP_NOP, p_nop, ok_zero, none },
	{ "READ", IORING_OP_READ, p_read, ok_read, unread },
	{ "WRITE", IORING_OP_WRITE, p_write, ok_write, unwritten },
	{ "READV", IORING_OP_READV, p_readv, ok_read, unread },
	{ "WRITEV", IORING_OP_WRITEV, p_writev, ok_write, unwritten },
	{ "OPENAT", IORING_OP_OPENAT, p_openat, ok_newfd, none },
	{ "CLOSE", IORING_OP_CLOSE, p_close, ok_close, still_open },
	{ "FSYNC", IORING_OP_FSYNC, p_fsync, ok_zero, none },
	{ "STATX", IORING_OP_STATX, p_statx, ok_statx, no_statx },
	{ "SOCKET", IORING_OP_SOCKET, p_socket, ok_newfd, none },
};
#define N_OPS (sizeof(op_cases) / sizeof(op_cases[0]))

/* Run op_cases[i] on a fresh ring restricted by rs; expect allowed or
 * -EACCES. */
static void run_case(const struct iour_ruleset *rs, size_t i, bool allowed, const char *what)
{
	const struct op_case *c = &op_cases[i];
	struct io_uring ring;
	struct env e;
	int res = 0, r;

	env_open(&e);
	cr_assert_eq(ring_init_disabled(&ring, 0), 0);
	r = iour_ring_apply(ring.ring_fd, rs, NULL);
	cr_assert_eq(r, 0, "%s: apply: %s", what, iour_errname(r));
	struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
	c->prep(sqe, &e);
	r = ring_submit_wait(&ring, sqe, &res);
	cr_assert_eq(r, 1, "%s: %s: submit %d", what, c->name, r);
	if (allowed) {
		cr_assert_eq(c->allowed_ok(res, &e), 0, "%s: %s allowed, got res %d", what, c->name, res);
	} else {
		cr_assert_eq(res, -EACCES, "%s: %s must be denied, got res %d", what, c->name, res);
		cr_assert_eq(c->no_effect(&e), 0, "%s: denied %s had an effect", what, c->name);
	}
	io_uring_queue_exit(&ring);
	env_close(&e);
}

Test(ring_matrix, sqe_opcodes_only_one_allowed)
{
	UNIT_REQUIRE_URING();
	int n = 0;

	for (size_t a = 0; a < N_OPS; a++) {
		uint32_t op = op_cases[a].op;
		struct iour_ruleset *rs = rs_make(&op, 1, 0, 0, NULL, -1);
		char what[64];

		snprintf(what, sizeof(what), "only %s allowed", op_cases[a].name);
		for (size_t i = 0; i < N_OPS; i++, n++)
			run_case(rs, i, i == a, what);
		iour_ruleset__free(rs);
	}
	cr_log_info("%d real-kernel cases: one opcode allowed, each of %zu submitted on a fresh ring",
		    n, N_OPS);
}

Test(ring_matrix, sqe_opcodes_all_but_one_allowed)
{
	UNIT_REQUIRE_URING();
	int n = 0;

	for (size_t d = 0; d < N_OPS; d++) {
		uint32_t ops[N_OPS];
		int k = 0;

		for (size_t i = 0; i < N_OPS; i++)
			if (i != d)
				ops[k++] = op_cases[i].op;
		struct iour_ruleset *rs = rs_make(ops, k, 0, 0, NULL, -1);
		char what[64];

		snprintf(what, sizeof(what), "all but %s allowed", op_cases[d].name);
		for (size_t i = 0; i < N_OPS; i++, n++)
			run_case(rs, i, i != d, what);
		iour_ruleset__free(rs);
	}
	cr_log_info("%d real-kernel cases: all but one opcode allowed", n);
}

Test(ring_matrix, unrestricted_sqe_side_allows_everything)
{
	UNIT_REQUIRE_URING();
	/* Register side restricted only: every request opcode still works,
	 * with any flag (on 6.18 the library lists the SQE side in full). */
	uint32_t reg = IORING_REGISTER_PROBE;
	struct iour_ruleset *rs = rs_make(NULL, -1, 0x7f, 0, &reg, 1);
	struct io_uring ring;
	int res, n = 0;

	for (size_t i = 0; i < N_OPS; i++, n++)
		run_case(rs, i, true, "register side only");
	cr_assert_eq(ring_init_disabled(&ring, 0), 0);
	cr_assert_eq(iour_ring_apply(ring.ring_fd, rs, NULL), 0);
	struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
	io_uring_prep_nop(sqe);
	sqe->flags = IOSQE_ASYNC | IOSQE_IO_DRAIN;
	cr_assert_eq(ring_submit_wait(&ring, sqe, &res), 1);
	cr_assert_eq(res, 0, "flagged NOP on an unrestricted SQE side: %d", res);
	io_uring_queue_exit(&ring);
	iour_ruleset__free(rs);
	cr_log_info("%d real-kernel cases with an unrestricted SQE side", n + 1);
}

/* ---- SQE flags ----------------------------------------------------------- */

/* One NOP with `flags` on a fresh ring restricted to NOP with the given
 * flag decision. */
static int nop_with_flags(uint32_t allowed, uint32_t required, uint8_t flags)
{
	uint32_t op = IORING_OP_NOP;
	struct iour_ruleset *rs = rs_make(&op, 1, allowed, required, NULL, -1);
	struct io_uring ring;
	int res = 0;

	cr_assert_eq(ring_init_disabled(&ring, 0), 0);
	cr_assert_eq(iour_ring_apply(ring.ring_fd, rs, NULL), 0);
	struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
	io_uring_prep_nop(sqe);
	sqe->flags = flags;
	cr_assert_eq(ring_submit_wait(&ring, sqe, &res), 1);
	io_uring_queue_exit(&ring);
	iour_ruleset__free(rs);
	return res;
}

Test(ring_matrix, sqe_flags_allowed_and_required_exhaustive_on_nop)
{
	UNIT_REQUIRE_URING();
	/* Flags that a lone NOP accepts (no FIXED_FILE: a NOP has no file;
	 * no BUFFER_SELECT: -EOPNOTSUPP before the gate). */
	static const uint8_t usable[] = { IOSQE_IO_DRAIN, IOSQE_IO_LINK, IOSQE_IO_HARDLINK,
					  IOSQE_ASYNC, IOSQE_CQE_SKIP_SUCCESS };
	static const struct { uint32_t allowed, required; } decisions[] = {
		{ 0, 0 }, { IOSQE_ASYNC, 0 }, { IOSQE_IO_LINK | IOSQE_ASYNC, 0 },
		{ 0, IOSQE_ASYNC }, { IOSQE_IO_DRAIN, IOSQE_ASYNC }, { 0x7f, 0 },
		{ IOSQE_IO_HARDLINK, IOSQE_IO_LINK },
	};
	int n = 0;

	for (size_t d = 0; d < sizeof(decisions) / sizeof(decisions[0]); d++) {
		uint32_t al = decisions[d].allowed, rq = decisions[d].required;

		for (unsigned m = 0; m < 32; m++) {
			uint8_t flags = 0;

			for (unsigned b = 0; b < 5; b++)
				if (m & (1u << b))
					flags |= usable[b];
			/* CQE_SKIP_SUCCESS hides a successful completion. */
			if (flags & IOSQE_CQE_SKIP_SUCCESS)
				continue;
			/* A link flag on the last SQE is fine for a lone NOP. */
			bool pass = (flags & rq) == rq && !(flags & ~(al | rq));
			int res = nop_with_flags(al, rq, flags);

			cr_assert_eq(res, pass ? 0 : -EACCES,
				     "allowed %#x required %#x: NOP flags %#x gave %d", al, rq, flags, res);
			n++;
		}
	}
	cr_log_info("%d real-kernel SQE-flag cases on NOP", n);
}

/* Ring-level reference behaviours (doc/kernel.md 8.1). */

Test(ring_matrix, liburing_sqe_op)
{
	UNIT_REQUIRE_URING();
	uint32_t ops[] = { IORING_OP_WRITEV, IORING_OP_WRITE };
	struct iour_ruleset *rs = rs_make(ops, 2, 0, 0, NULL, -1);
	struct io_uring ring;
	struct io_uring_cqe *cqe;
	struct iovec wv = { (void *)"12345678", 8 };
	char rb[8];
	struct iovec rv = { rb, 8 };
	int p[2], i;

	cr_assert_eq(pipe(p), 0);
	cr_assert_eq(ring_init_disabled(&ring, 0), 0);
	cr_assert_eq(iour_ring_apply(ring.ring_fd, rs, NULL), 0);
	struct io_uring_sqe *s1 = io_uring_get_sqe(&ring);
	io_uring_prep_writev(s1, p[1], &wv, 1, 0);
	io_uring_sqe_set_data64(s1, 1);
	struct io_uring_sqe *s2 = io_uring_get_sqe(&ring);
	io_uring_prep_readv(s2, p[0], &rv, 1, 0);
	io_uring_sqe_set_data64(s2, 2);
	cr_assert_eq(io_uring_submit(&ring), 2);
	for (i = 0; i < 2; i++) {
		cr_assert_eq(io_uring_wait_cqe(&ring, &cqe), 0);
		if (cqe->user_data == 1)
			cr_assert_eq(cqe->res, 8);
		else
			cr_assert_eq(cqe->res, -EACCES);
		io_uring_cqe_seen(&ring, cqe);
	}
	io_uring_queue_exit(&ring);
	close(p[0]);
	close(p[1]);
	iour_ruleset__free(rs);
}

Test(ring_matrix, liburing_register_op)
{
	UNIT_REQUIRE_URING();
	uint32_t reg = IORING_REGISTER_BUFFERS;
	struct iour_ruleset *rs = rs_make(NULL, -1, 0x7f, 0, &reg, 1);
	struct io_uring ring;
	char buf[4096];
	struct iovec v = { buf, sizeof(buf) };
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);

	cr_assert_eq(ring_init_disabled(&ring, 0), 0);
	cr_assert_eq(iour_ring_apply(ring.ring_fd, rs, NULL), 0);
	cr_assert_eq(io_uring_register_buffers(&ring, &v, 1), 0);
	cr_assert_eq(io_uring_register_files(&ring, &fd, 1), -EACCES);
	io_uring_queue_exit(&ring);
	close(fd);
	iour_ruleset__free(rs);
}

Test(ring_matrix, liburing_fixed_file)
{
	UNIT_REQUIRE_URING();
	uint32_t ops[] = { IORING_OP_WRITEV, IORING_OP_READV };
	uint32_t reg = IORING_REGISTER_FILES;
	struct iour_ruleset *rs = rs_make(ops, 2, 0, IOSQE_FIXED_FILE, &reg, 1);
	struct io_uring ring;
	struct iovec wv = { (void *)"12345678", 8 };
	char rb[8];
	struct iovec rv = { rb, 8 };
	int p[2], res;

	cr_assert_eq(pipe(p), 0);
	cr_assert_eq(ring_init_disabled(&ring, 0), 0);
	cr_assert_eq(iour_ring_apply(ring.ring_fd, rs, NULL), 0);
	cr_assert_eq(io_uring_register_files(&ring, p, 2), 0);

	struct io_uring_sqe *s = io_uring_get_sqe(&ring);
	io_uring_prep_writev(s, 1, &wv, 1, 0);
	s->flags |= IOSQE_FIXED_FILE;
	cr_assert_eq(ring_submit_wait(&ring, s, &res), 1);
	cr_assert_eq(res, 8);
	s = io_uring_get_sqe(&ring);
	io_uring_prep_readv(s, 0, &rv, 1, 0);
	s->flags |= IOSQE_FIXED_FILE;
	cr_assert_eq(ring_submit_wait(&ring, s, &res), 1);
	cr_assert_eq(res, 8);
	cr_assert_eq(memcmp(rb, "12345678", 8), 0);
	s = io_uring_get_sqe(&ring);
	io_uring_prep_writev(s, p[1], &wv, 1, 0);
	cr_assert_eq(ring_submit_wait(&ring, s, &res), 1);
	cr_assert_eq(res, -EACCES);
	io_uring_queue_exit(&ring);
	close(p[0]);
	close(p[1]);
	iour_ruleset__free(rs);
}

Test(ring_matrix, liburing_flags_files_registered_while_disabled)
{
	UNIT_REQUIRE_URING();
	uint32_t op = IORING_OP_WRITEV;
	struct iour_ruleset *rs = rs_make(&op, 1, IOSQE_ASYNC | IOSQE_IO_LINK, IOSQE_FIXED_FILE,
					  NULL, 0);
	IOUR_OPTS(iour_ring_apply_opts, o, .flags = IOUR_RING_APPLY_NO_ENABLE);
	static const struct { uint8_t flags; bool pass; } cases[] = {
		{ IOSQE_FIXED_FILE, true },
		{ IOSQE_FIXED_FILE | IOSQE_ASYNC, true },
		{ IOSQE_FIXED_FILE | IOSQE_IO_LINK, true },
		{ IOSQE_FIXED_FILE | IOSQE_IO_DRAIN, false },
		{ IOSQE_IO_DRAIN, false },
		{ IOSQE_ASYNC, false },
		{ 0, false },
	};
	struct iovec wv = { (void *)"12345678", 8 };
	int p[2], res;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct io_uring ring;

		cr_assert_eq(pipe(p), 0);
		cr_assert_eq(ring_init_disabled(&ring, 0), 0);
		cr_assert_eq(iour_ring_apply(ring.ring_fd, rs, &o), 0);
		/* Register ops are not gated while the ring is disabled: the
		 * register side denies everything, yet this works. */
		cr_assert_eq(io_uring_register_files(&ring, p, 2), 0);
		cr_assert_eq(iour_ring_enable(ring.ring_fd), 0);
		cr_assert_eq(io_uring_register_files_update(&ring, 0, p, 1), -EACCES);

		struct io_uring_sqe *s = io_uring_get_sqe(&ring);
		io_uring_prep_writev(s, (cases[i].flags & IOSQE_FIXED_FILE) ? 1 : p[1], &wv, 1, 0);
		s->flags = cases[i].flags;
		cr_assert_eq(ring_submit_wait(&ring, s, &res), 1);
		cr_assert_eq(res, cases[i].pass ? 8 : -EACCES, "flags %#x: res %d", cases[i].flags, res);
		io_uring_queue_exit(&ring);
		close(p[0]);
		close(p[1]);
	}
	iour_ruleset__free(rs);
}

Test(ring_matrix, liburing_empty_set_denies_everything)
{
	UNIT_REQUIRE_URING();
	struct iour_ruleset *rs = rs_make(NULL, 0, 0, 0, NULL, 0);
	struct io_uring ring;
	struct iovec wv = { (void *)"12345678", 8 };
	char buf[64];
	struct iovec v = { buf, sizeof(buf) };
	int p[2], res;

	cr_assert_eq(pipe(p), 0);
	cr_assert_eq(ring_init_disabled(&ring, 0), 0);
	cr_assert_eq(iour_ring_apply(ring.ring_fd, rs, NULL), 0);
	cr_assert_eq(io_uring_register_buffers(&ring, &v, 1), -EACCES);
	cr_assert_eq(io_uring_register_files(&ring, p, 2), -EACCES);
	struct io_uring_sqe *s = io_uring_get_sqe(&ring);
	io_uring_prep_writev(s, p[1], &wv, 1, 0);
	cr_assert_eq(ring_submit_wait(&ring, s, &res), 1);
	cr_assert_eq(res, -EACCES);
	s = io_uring_get_sqe(&ring);
	io_uring_prep_nop(s);
	cr_assert_eq(ring_submit_wait(&ring, s, &res), 1);
	cr_assert_eq(res, -EACCES);
	io_uring_queue_exit(&ring);
	close(p[0]);
	close(p[1]);
	iour_ruleset__free(rs);
}

Test(ring_matrix, disabled_ring_refuses_submission)
{
	UNIT_REQUIRE_URING();
	uint32_t op = IORING_OP_NOP;
	struct iour_ruleset *rs = rs_make(&op, 1, 0, 0, NULL, -1);
	IOUR_OPTS(iour_ring_apply_opts, o, .flags = IOUR_RING_APPLY_NO_ENABLE);
	struct io_uring ring;

	cr_assert_eq(ring_init_disabled(&ring, 0), 0);
	cr_assert_eq(iour_ring_apply(ring.ring_fd, rs, &o), 0);
	io_uring_prep_nop(io_uring_get_sqe(&ring));
	cr_assert_eq(io_uring_submit(&ring), -EBADFD);
	io_uring_queue_exit(&ring); /* never reused: the SQE stays queued */
	iour_ruleset__free(rs);
}

/* ---- register opcodes ----------------------------------------------------- */

struct reg_env {
	struct io_uring *ring;
	int fd, efd;
	char buf[4096];
};

static int r_probe(struct reg_env *e)
{
	struct io_uring_probe *p = calloc(1, sizeof(*p) + 256 * sizeof(p->ops[0]));
	int r = io_uring_register_probe(e->ring, p, 256);

	free(p);
	return r;
}
static int r_files(struct reg_env *e) { return io_uring_register_files(e->ring, &e->fd, 1); }
static int r_buffers(struct reg_env *e)
{
	struct iovec v = { e->buf, sizeof(e->buf) };

	return io_uring_register_buffers(e->ring, &v, 1);
}
static int r_eventfd(struct reg_env *e) { return io_uring_register_eventfd(e->ring, e->efd); }
static int r_personality(struct reg_env *e)
{
	int r = io_uring_register_personality(e->ring);

	return r >= 0 ? 0 : r;
}
static int r_iowq(struct reg_env *e)
{
	unsigned int v[2] = { 0, 0 };

	return io_uring_register_iowq_max_workers(e->ring, v);
}

static const struct {
	const char *name;
	uint32_t op;
	int (*call)(struct reg_env *e);
} reg_cases[] = {
	{ "PROBE", IORING_REGISTER_PROBE, r_probe },
	{ "FILES", IORING_REGISTER_FILES, r_files },
	{ "BUFFERS", IORING_REGISTER_BUFFERS, r_buffers },
	{ "EVENTFD", IORING_REGISTER_EVENTFD, r_eventfd },
	{ "PERSONALITY", IORING_REGISTER_PERSONALITY, r_personality },
	{ "IOWQ_MAX_WORKERS", IORING_REGISTER_IOWQ_MAX_WORKERS, r_iowq },
};
#define N_REGS (sizeof(reg_cases) / sizeof(reg_cases[0]))

static void reg_case(const struct iour_ruleset *rs, size_t i, bool allowed, const char *what)
{
	struct io_uring ring;
	struct reg_env e = { .ring = &ring };
	int r;

	e.fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	e.efd = eventfd(0, EFD_CLOEXEC);
	cr_assert_eq(ring_init_disabled(&ring, 0), 0);
	cr_assert_eq(iour_ring_apply(ring.ring_fd, rs, NULL), 0);
	r = reg_cases[i].call(&e);
	if (allowed)
		cr_assert_eq(r, 0, "%s: REGISTER_%s allowed, got %d", what, reg_cases[i].name, r);
	else
		cr_assert_eq(r, -EACCES, "%s: REGISTER_%s must be denied, got %d", what,
			     reg_cases[i].name, r);
	io_uring_queue_exit(&ring);
	close(e.fd);
	close(e.efd);
}

Test(ring_matrix, register_opcodes_only_one_allowed)
{
	UNIT_REQUIRE_URING();
	int n = 0;

	for (size_t a = 0; a < N_REGS; a++) {
		struct iour_ruleset *rs = rs_make(NULL, -1, 0x7f, 0, &reg_cases[a].op, 1);
		char what[64];

		snprintf(what, sizeof(what), "only REGISTER_%s allowed", reg_cases[a].name);
		for (size_t i = 0; i < N_REGS; i++, n++)
			reg_case(rs, i, i == a, what);
		iour_ruleset__free(rs);
	}
	cr_log_info("%d real-kernel register-opcode cases", n);
}

Test(ring_matrix, register_side_unrestricted_with_restricted_sqe_side)
{
	UNIT_REQUIRE_URING();
	/* Before 7.0 any registered set closes unlisted register ops; the
	 * library lists them all, so an SQE-only set leaves them open. */
	uint32_t op = IORING_OP_NOP;
	struct iour_ruleset *rs = rs_make(&op, 1, 0, 0, NULL, -1);
	int n = 0;

	for (size_t i = 0; i < N_REGS; i++, n++)
		reg_case(rs, i, true, "SQE side only");
	iour_ruleset__free(rs);

	/* ... and an explicit empty register allow-list closes them. */
	rs = rs_make(&op, 1, 0, 0, NULL, 0);
	for (size_t i = 0; i < N_REGS; i++, n++)
		reg_case(rs, i, false, "register side empty");
	iour_ruleset__free(rs);
	cr_log_info("%d real-kernel cases for the register side's two states", n);
}
