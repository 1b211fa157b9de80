/* SPDX-License-Identifier: MIT */
/*
 * libiouring-restrict in one screen: what the running kernel supports, a
 * restriction set, a restricted ring, and proof that the kernel enforces
 * it.  Exits 0 only if every claim was confirmed by the kernel.
 *
 *   make demo
 */
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <iouring_restrict/iouring_restrict.h>

static int failures;

static void verdict(int ok, const char *what)
{
	printf("   %s %s\n", ok ? "[ok]  " : "[FAIL]", what);
	if (!ok)
		failures++;
}

static void print_features(const struct iour_features *f)
{
	printf("1. What this kernel supports (iour_probe, run in a forked child)\n");
	printf("   feature level        %u: %s\n", f->level, iour_feature_level_str((int)f->level));
	if (f->flags & IOUR_FEATURES_FORCED)
		printf("                        (forced by IOUR_FEATURE_LEVEL; the kernel has %u)\n",
		       f->kernel_level);
	printf("   io_uring usable      %s (io_uring_setup(1, NULL) gave %s)\n",
	       iour_avail_str(f->io_uring), iour_errname(f->setup_err));
	printf("   diagnostics          kernel.io_uring_disabled=%d io_uring_group=%d, "
	       "seccomp mode %d, no_new_privs %d\n",
	       f->sysctl_disabled, f->sysctl_group, f->seccomp_mode, f->no_new_privs);
	printf("   per-ring restrictions %s\n", iour_avail_str(f->ring_restrictions));
	printf("   request opcodes      %u known to the kernel, %u supported (PROBE)\n", f->op_last,
	       f->nr_supported_ops);
	printf("   register opcodes     %u known to the kernel\n", f->reg_last);
	printf("   limits from          %s\n",
	       f->limits_source == IOUR_LIMITS_QUERY   ? "IORING_REGISTER_QUERY"
	       : f->limits_source == IOUR_LIMITS_PROBE ? "PROBE and a register-opcode range test"
	       : f->limits_source == IOUR_LIMITS_TABLE ? "PROBE and the version table"
						       : "-");
	printf("   QUERY                %s\n", iour_avail_str(f->query));
	printf("   blind register path  %s\n", iour_avail_str(f->blind_register));
	printf("   gate semantics       %s\n",
	       f->split_gates ? "split (7.0+): each side gated only if it has entries"
			      : "coupled (5.10-6.19): any set gates both sides");
	printf("   task restrictions    %s\n", iour_avail_str(f->task_restrictions));
	printf("   BPF filters          ring path %s, task path %s\n", iour_avail_str(f->bpf_ring),
	       iour_avail_str(f->bpf_task));
	printf("   filter payloads      SOCKET %u, OPENAT %u, OPENAT2 %u, CONNECT %u bytes\n",
	       f->pdu_socket, f->pdu_openat, f->pdu_openat2, f->pdu_connect);
}

/* Submit one prepared SQE and return its CQE result. */
static int run_one(struct io_uring *ring, struct io_uring_sqe *sqe, uint64_t tag)
{
	struct io_uring_cqe *cqe;
	int res;

	io_uring_sqe_set_data64(sqe, tag);
	if (io_uring_submit(ring) != 1 || io_uring_wait_cqe(ring, &cqe)) {
		fprintf(stderr, "demo: submission failed\n");
		exit(1);
	}
	res = cqe->user_data == tag ? cqe->res : -EPROTO;
	io_uring_cqe_seen(ring, cqe);
	return res;
}

int main(void)
{
	struct iour_features f = { .sz = sizeof(f) };
	struct iour_ring_report rep = { .sz = sizeof(rep) };
	IOUR_OPTS(iour_ring_create_opts, copts, .report = &rep);
	struct iour_ruleset *rs = NULL;
	struct io_uring_params p;
	struct io_uring ring;
	struct io_uring_sqe *sqe;
	char buf[8];
	int r, fd, pipefd[2], res;

	r = iour_probe(NULL, &f);
	if (r) {
		fprintf(stderr, "demo: iour_probe: %s\n", iour_errname(r));
		return 1;
	}
	print_features(&f);
	if (f.level < IOUR_LEVEL_RING) {
		printf("\nThis kernel cannot restrict rings (Linux 5.10+ is needed), "
		       "so there is nothing to demonstrate.\n");
		return 1;
	}

	printf("\n2. A restriction set (iour_ruleset)\n");
	if ((r = iour_ruleset__new(NULL, &rs)) ||
	    (r = iour_ruleset__allow_sqe_op_name(rs, "NOP")) ||
	    (r = iour_ruleset__allow_sqe_op_name(rs, "IORING_OP_READ")) ||
	    (r = iour_ruleset__set_sqe_flags(rs, 0, 0)) ||
	    (r = iour_ruleset__allow_register_op_name(rs, "REGISTER_FILES"))) {
		fprintf(stderr, "demo: building the set: %s\n", iour_errname(r));
		return 1;
	}
	printf("   request opcodes      NOP, READ (nothing else)\n");
	printf("   SQE flags            none allowed, none required (decided explicitly)\n");
	printf("   register opcodes     REGISTER_FILES (nothing else)\n");

	printf("\n3. A ring restricted by it (iour_ring_create: R_DISABLED, register, enable)\n");
	memset(&p, 0, sizeof(p));
	r = iour_ring_create(8, &p, rs, &copts, &fd);
	if (r) {
		fprintf(stderr, "demo: iour_ring_create: %s\n", iour_errname(r));
		return 1;
	}
	printf("   ring fd %d: %u restriction entries registered for a kernel with %u/%u "
	       "opcodes, %u clamped; enabled: %s\n",
	       fd, rep.nr_entries, rep.op_last, rep.reg_last,
	       rep.n_clamped_sqe_ops + rep.n_clamped_register_ops, rep.enabled ? "yes" : "no");
	if (rep.n_clamped_sqe_ops + rep.n_clamped_register_ops)
		printf("   (clamped: allowed opcodes this kernel does not know were dropped)\n");
	/* Map it with liburing.  liburing 2.3 fills the SQ index array only
	 * in io_uring_queue_init_params(), so do it here. */
	if (io_uring_queue_mmap(fd, &p, &ring)) {
		fprintf(stderr, "demo: io_uring_queue_mmap failed\n");
		return 1;
	}
	for (unsigned i = 0; i < ring.sq.ring_entries; i++)
		ring.sq.array[i] = i;

	printf("\n4. The kernel enforces it\n");
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_nop(sqe);
	res = run_one(&ring, sqe, 1);
	printf("   NOP (allowed)                      -> res %d\n", res);
	verdict(res == 0, "an allowed request completes normally");

	if (pipe(pipefd)) {
		perror("pipe");
		return 1;
	}
	if (write(pipefd[1], "hi", 2) != 2)
		return 1;
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_read(sqe, pipefd[0], buf, sizeof(buf), 0);
	res = run_one(&ring, sqe, 2);
	printf("   READ from a pipe (allowed)         -> res %d (read \"%.*s\")\n", res,
	       res > 0 ? res : 0, buf);
	verdict(res == 2 && !memcmp(buf, "hi", 2), "an allowed READ returns the data");

	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_write(sqe, pipefd[1], "forbidden", 9, 0);
	res = run_one(&ring, sqe, 3);
	printf("   WRITE to the pipe (not allowed)    -> res %d (%s)\n", res, iour_errname(res));
	fcntl(pipefd[0], F_SETFL, O_NONBLOCK);
	verdict(res == -EACCES && read(pipefd[0], buf, sizeof(buf)) < 0 && errno == EAGAIN,
		"the kernel refused the WRITE with -EACCES and nothing was written: "
		"the ring only accepts the listed opcodes");

	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_nop(sqe);
	sqe->flags = IOSQE_ASYNC;
	res = run_one(&ring, sqe, 4);
	printf("   NOP + IOSQE_ASYNC (flag not allowed) -> res %d (%s)\n", res, iour_errname(res));
	verdict(res == -EACCES, "SQE flags outside the allowed set are refused too");

	res = io_uring_register(fd, IORING_REGISTER_FILES, &pipefd[0], 1);
	printf("   io_uring_register(REGISTER_FILES)  -> %d\n", res);
	verdict(res == 0, "a listed register opcode works");
	res = io_uring_register(fd, IORING_REGISTER_PROBE, NULL, 0);
	printf("   io_uring_register(REGISTER_PROBE)  -> %d (%s)\n", res, iour_errname(res));
	verdict(res == -EACCES, "an unlisted register opcode is refused with -EACCES");
	res = io_uring_register(fd, IORING_REGISTER_RESTRICTIONS, NULL, 0);
	printf("   io_uring_register(RESTRICTIONS)    -> %d (%s)\n", res, iour_errname(res));
	verdict(res == -EACCES, "the restrictions cannot be replaced or loosened");

	io_uring_queue_exit(&ring);
	close(pipefd[0]);
	close(pipefd[1]);
	iour_ruleset__free(rs);

	printf("\n%s\n", failures ? "Some claims were NOT confirmed by the kernel."
				  : "Every claim was confirmed by the running kernel.");
	printf("Note: ring restrictions bind this ring only; code that can create rings can\n"
	       "create an unrestricted one (task-level restrictions need Linux 7.0).\n");
	return failures ? 1 : 0;
}
