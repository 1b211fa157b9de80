/* SPDX-License-Identifier: MIT */
/*
 * libiouring-restrict in one screen: what the running kernel supports, a
 * restriction set, a restricted ring, and proof that the kernel enforces
 * it; then the same allow-list as a policy: its plan (the dry run), the
 * ring made through the plan, the report, and the enforcement check
 * confirming the report.  Exits 0 only if every claim was confirmed by
 * the kernel.
 *
 *   make demo
 */
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
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

static void print_text(int (*fn)(const void *, char *, size_t *), const void *obj)
{
	size_t len = 0;
	char *text;

	if (fn(obj, NULL, &len) || !(text = malloc(len)) || fn(obj, text, &len)) {
		printf("   (cannot describe it)\n");
		return;
	}
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"))
		printf("   | %s\n", line);
	free(text);
}

static int plan_text(const void *pl, char *buf, size_t *len)
{
	return iour_plan__describe(pl, buf, len);
}

static int report_text(const void *r, char *buf, size_t *len)
{
	return iour_report__describe(r, buf, len);
}

/*
 * 5. The allow-list of section 2 as a policy for a ring: plan it, create the
 * ring through the plan, and let the enforcement check (a forked child
 * submitting on that ring) confirm what the report claims.
 */
static void policy_section(const struct iour_ruleset *rs)
{
	static const struct {
		uint32_t opcode;
		uint32_t expect;
		uint32_t flags;
		const char *what;
	} reqs[] = {
		{ IORING_OP_NOP, IOUR_EXPECT_ALLOW, 0, "NOP" },
		{ IORING_OP_READ, IOUR_EXPECT_ALLOW, 0, "READ from a pipe" },
		{ IORING_OP_WRITE, IOUR_EXPECT_DENY, 0, "WRITE to a pipe" },
		{ IORING_OP_NOP, IOUR_EXPECT_DENY, IOSQE_ASYNC, "NOP + IOSQE_ASYNC" },
		{ IORING_OP_OPENAT, IOUR_EXPECT_DENY, 0, "OPENAT /dev/null" },
		{ IORING_OP_SOCKET, IOUR_EXPECT_DENY, 0, "SOCKET AF_INET stream" },
	};
	enum { N = sizeof(reqs) / sizeof(reqs[0]) };
	struct iour_verify_req vr[N];
	struct iour_verify_result res[N];
	IOUR_OPTS(iour_verify_opts, vo, .flags = IOUR_VERIFY_RING_FD,
		  .ring_flags = IORING_SETUP_R_DISABLED);
	struct iour_policy *pol = NULL;
	struct iour_plan *pl = NULL;
	struct iour_report *rep = NULL;
	struct io_uring_params p;
	int r, fd = -1, st;
	size_t i;

	printf("\n5. The same allow-list as a policy (iour_policy -> iour_plan -> ring)\n");
	if ((r = iour_policy__new(NULL, &pol)) || (r = iour_policy__set_ruleset(pol, rs)) ||
	    (r = iour_policy__set_attr(pol, IOUR_POLICY_ATTR_TARGET, IOUR_POLICY_TARGET_RING)) ||
	    (r = iour_policy__plan(pol, NULL, &pl))) {
		printf("   cannot plan the policy: %s\n", iour_errname(r));
		failures++;
		iour_policy__free(pol);
		return;
	}
	printf("   The plan for this kernel, before anything is applied (iour_plan__describe):\n");
	print_text(plan_text, pl);
	memset(&p, 0, sizeof(p));
	r = iour_plan__create_ring(pl, 8, &p, NULL, &fd, &rep);
	if (r == 0)
		printf("   iour_plan__create_ring -> ring fd %d (created disabled, restricted, "
		       "enabled);\n   the executor's report (iour_report__describe):\n", fd);
	else
		printf("   iour_plan__create_ring -> %s\n", iour_errname(r));
	if (rep)
		print_text(report_text, rep);
	st = rep ? iour_report__status(rep) : -1;
	verdict(r == 0 && st == IOUR_STATUS_FULLY,
		"the report claims the policy is fully enforced on this ring "
		"(a classic allow-list needs no argument filters)");
	if (r) {
		iour_report__free(rep);
		iour_plan__free(pl);
		iour_policy__free(pol);
		return;
	}

	printf("   The enforcement check (iour_verify, ring-fd mode): a forked child submits "
	       "on this ring\n   and compares each answer with the claim:\n");
	memset(vr, 0, sizeof(vr));
	for (i = 0; i < N; i++) {
		vr[i].sz = sizeof(vr[i]);
		vr[i].opcode = reqs[i].opcode;
		vr[i].expect = reqs[i].expect;
		vr[i].sqe_flags = reqs[i].flags;
		if (reqs[i].opcode == IORING_OP_OPENAT)
			vr[i].path = "/dev/null";
		if (reqs[i].opcode == IORING_OP_SOCKET) {
			vr[i].family = AF_INET;
			vr[i].type = SOCK_STREAM;
		}
	}
	vo.ring_fd = fd;
	r = iour_verify(vr, N, res, &vo);
	for (i = 0; i < N; i++)
		printf("   %-22s expected %-7s -> res %-4d (%s) %s\n", reqs[i].what,
		       reqs[i].expect == IOUR_EXPECT_ALLOW ? "allowed" : "denied", res[i].res,
		       res[i].res < 0 ? iour_errname(res[i].res) : "ok",
		       res[i].status == IOUR_VERIFY_MATCH ? "confirmed" : "NOT as claimed");
	verdict(r == 0, r == 0 ? "the enforcement check confirmed the report: the kernel "
				 "allows and denies exactly as claimed"
			       : "the enforcement check did not confirm the report");
	if (r)
		printf("   iour_verify: %s\n", iour_errname(r));
	close(fd);
	iour_report__free(rep);
	iour_plan__free(pl);

	/* What the same policy would be for the whole task on this kernel. */
	if (!iour_policy__set_attr(pol, IOUR_POLICY_ATTR_TARGET, IOUR_POLICY_TARGET_TASK) &&
	    !iour_policy__plan(pol, NULL, &pl)) {
		const struct iour_report *er = iour_plan__report(pl);

		int mech = iour_report__mechanism(er);

		printf("   For the calling task instead, the plan would be %s (%s).\n",
		       iour_status_str(iour_report__status(er)),
		       (mech & IOUR_MECH_TASK) ? "mechanism task restrictions"
		       : (mech & IOUR_MECH_COMPANION)
			       ? "mechanism seccomp companion: io_uring_setup would fail for the "
				 "task and its children"
			       : "nothing restricts the task; only rings made through the "
				 "library would be restricted");
		iour_plan__free(pl);
	}
	iour_policy__free(pol);
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

	policy_section(rs);
	iour_ruleset__free(rs);

	printf("\n%s\n", failures ? "Some claims were NOT confirmed by the kernel."
				  : "Every claim was confirmed by the running kernel.");
	printf("Note: ring restrictions bind this ring only; code that can create rings can\n"
	       "create an unrestricted one (task-level restrictions need Linux 7.0).\n");
	return failures ? 1 : 0;
}
