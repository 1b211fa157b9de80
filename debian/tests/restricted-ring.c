/* SPDX-License-Identifier: MIT */
/*
 * autopkgtest (debian/tests/c-library): a program built against the
 * installed -dev package with `pkg-config --cflags --libs iouring-restrict`
 * restricts a ring to NOP and READ (no SQE flag, no register opcode) with
 * iour_ring_create() and checks the library's report and the kernel's
 * answers.  First, the positive control: on an unrestricted ring the same
 * WRITE and REGISTER_FILES succeed, so the -EACCES later is the
 * restriction's doing.
 * Exit 0: all held; 1: one failed; 77: io_uring is unusable here.
 */
#include <errno.h>
#include <liburing.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <iouring_restrict/iouring_restrict.h>

static int failed;

static void expect(int ok, const char *what)
{
	printf("%s: %s\n", ok ? "ok" : "FAILED", what);
	if (!ok)
		failed = 1;
}

static int run_one(struct io_uring *ring, struct io_uring_sqe *sqe, unsigned int flags)
{
	struct io_uring_cqe *cqe;
	int res;

	io_uring_sqe_set_flags(sqe, flags);
	if (io_uring_submit(ring) != 1 || io_uring_wait_cqe(ring, &cqe))
		return -10000;
	res = cqe->res;
	io_uring_cqe_seen(ring, cqe);
	return res;
}

int main(void)
{
	struct iour_ring_report rep = { .sz = sizeof(rep) };
	IOUR_OPTS(iour_ring_create_opts, copts, .report = &rep);
	struct io_uring_params p;
	struct iour_ruleset *rs;
	struct io_uring ring;
	struct io_uring_sqe *sqe;
	int pipefd[2], fd, r;
	char buf[8];

	printf("libiouring-restrict %s (built against %s)\n", iour_version_string(), EXPECT_VERSION);
	expect(!strcmp(iour_version_string(), EXPECT_VERSION),
	       "the loaded library is the version pkg-config reports");
	if (pipe(pipefd))
		return 1;

	/* The control: no restriction, WRITE goes through. */
	r = io_uring_queue_init(8, &ring, 0);
	if (r == -EPERM || r == -ENOSYS || r == -EACCES) {
		printf("skipped: io_uring_setup fails here (%s)\n", strerror(-r));
		return 77;
	}
	if (r) {
		printf("FAILED: io_uring_queue_init: %s\n", strerror(-r));
		return 1;
	}
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_write(sqe, pipefd[1], "x", 1, 0);
	expect(run_one(&ring, sqe, 0) == 1, "control: WRITE on an unrestricted ring succeeds");
	expect(io_uring_register(ring.ring_fd, IORING_REGISTER_FILES, &pipefd[0], 1) == 0,
	       "control: REGISTER_FILES on an unrestricted ring succeeds");
	io_uring_queue_exit(&ring);
	if (read(pipefd[0], buf, 1) != 1)
		return 1;

	if (iour_ruleset__new(NULL, &rs) || iour_ruleset__allow_sqe_op_name(rs, "NOP") ||
	    iour_ruleset__allow_sqe_op_name(rs, "READ") || iour_ruleset__set_sqe_flags(rs, 0, 0) ||
	    iour_ruleset__deny_all_register_ops(rs)) {
		printf("FAILED: building the ruleset\n");
		return 1;
	}
	memset(&p, 0, sizeof(p));
	r = iour_ring_create(8, &p, rs, &copts, &fd);
	iour_ruleset__free(rs);
	if (r == -IOUR_ERRNO__UNSUPPORTED) {
		printf("skipped: the kernel has no per-ring restrictions (%s)\n", iour_errname(r));
		return 77;
	}
	if (r) {
		printf("FAILED: iour_ring_create: %s: %s\n", iour_errname(r), iour_strerror_desc(r));
		return 1;
	}
	printf("report: registered %u, enabled %u, %u entries for op_last %u, clamped %u\n",
	       rep.registered, rep.enabled, rep.nr_entries, rep.op_last, rep.n_clamped_sqe_ops);
	expect(rep.registered == 1 && rep.enabled == 1, "the report says registered and enabled");
	expect(rep.nr_entries >= 3 && rep.op_last > IORING_OP_WRITE,
	       "the report counts the entries for this kernel's opcodes");
	expect(rep.n_clamped_sqe_ops == 0, "nothing clamped (NOP and READ are old opcodes)");

	if (io_uring_queue_mmap(fd, &p, &ring)) {
		printf("FAILED: io_uring_queue_mmap\n");
		return 1;
	}
	/* liburing 2.3 fills the SQ index array only in io_uring_queue_init_params(). */
	for (unsigned int i = 0; i < ring.sq.ring_entries; i++)
		ring.sq.array[i] = i;

	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_nop(sqe);
	expect(run_one(&ring, sqe, 0) == 0, "NOP (allowed) completes");
	if (write(pipefd[1], "hi", 2) != 2)
		return 1;
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_read(sqe, pipefd[0], buf, sizeof(buf), 0);
	r = run_one(&ring, sqe, 0);
	expect(r == 2 && !memcmp(buf, "hi", 2), "READ (allowed) returns the data");
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_write(sqe, pipefd[1], "x", 1, 0);
	r = run_one(&ring, sqe, 0);
	printf("WRITE -> %d\n", r);
	expect(r == -EACCES, "WRITE (not allowed) fails with EACCES");
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_nop(sqe);
	r = run_one(&ring, sqe, IOSQE_ASYNC);
	printf("NOP+ASYNC -> %d\n", r);
	expect(r == -EACCES, "NOP with IOSQE_ASYNC (no flag allowed) fails with EACCES");
	r = io_uring_register(fd, IORING_REGISTER_FILES, &pipefd[0], 1);
	printf("REGISTER_FILES -> %d\n", r);
	expect(r == -EACCES, "REGISTER_FILES (no register opcode allowed) fails with EACCES");
	io_uring_queue_exit(&ring);
	return failed;
}
