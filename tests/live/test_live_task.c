/* SPDX-License-Identifier: MIT */
/*
 * Live, task level (Linux 7.0+): the reference
 * behaviours of doc/kernel.md 8.2, produced through
 * the library's policy API (plan + iour_plan__apply_task) in forked
 * children of the real kernel, answered by normal rings the children
 * create afterwards, and confirmed by the enforcement check (iour_verify:
 * a fresh ring in a grandchild, and after execve of iour-verify-helper).
 *
 * On kernels without task restrictions every test here is skipped with
 * the reason.  Nothing is emulated: the restrictions are real and stay
 * with the child that registered them (and its descendants).
 */
#include <errno.h>
#include <grp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/internal.h"
#include "live.h"
#include "ring_util.h"

#ifndef __NR_io_uring_register
#define __NR_io_uring_register 427
#endif

/* Plan `rs` for the calling task (NNP set when needed), apply it and check
 * both reports say `status` with mechanism TASK. */
static int apply_task_set(struct iour_ruleset *rs, uint32_t dflt, int status, struct child_msg *m)
{
	struct iour_report *rep = NULL;
	struct iour_policy *p;
	struct iour_plan *pl;
	char why[512];
	int rc;

	rc = live_policy(&p, IOUR_POLICY_TARGET_TASK, rs, NULL, dflt);
	iour_ruleset__free(rs);
	CHKF(m, rc == 0, "policy: %s", iour_errname(rc));
	rc = iour_policy__plan(p, NULL, &pl);
	CHKF(m, rc == 0, "plan: %s", iour_errname(rc));
	CHKF(m, live_report_is(iour_plan__report(pl), status, IOUR_MECH_TASK, why, sizeof(why)),
	     "planned: %s", why);
	rc = iour_plan__apply_task(pl, NULL, &rep);
	CHKF(m, rc == 0, "apply_task: %s", iour_errname(rc));
	CHKF(m, live_report_is(rep, status, IOUR_MECH_TASK, why, sizeof(why)), "applied: %s", why);
	{
		uint32_t done = 0, total = 1;

		CHK(m, iour_report__steps(rep, &done, &total) == 0 && done == total && total > 0);
	}
	iour_report__free(rep);
	iour_plan__free(pl);
	iour_policy__free(p);
	return 0;
}

/* NOP and READ on one submission of a normal ring: returns 0 if NOP
 * completes with 0 and READ with -EACCES, and io_uring_submit said 2. */
static int nop_ok_read_denied(struct child_msg *m)
{
	struct io_uring ring;
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	char buf[4];
	int pfd[2], i, rc, nop = 1, rd = 1;

	CHK(m, pipe(pfd) == 0 && write(pfd[1], "abc", 3) == 3);
	rc = io_uring_queue_init(8, &ring, 0);
	CHKF(m, rc == 0, "a normal ring: %d", rc);
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_nop(sqe);
	sqe->user_data = 1;
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_read(sqe, pfd[0], buf, sizeof(buf), 0);
	sqe->user_data = 2;
	rc = io_uring_submit(&ring);
	CHKF(m, rc == 2, "submit: %d", rc);
	for (i = 0; i < 2; i++) {
		CHK(m, io_uring_wait_cqe(&ring, &cqe) == 0);
		if (cqe->user_data == 1)
			nop = cqe->res;
		else
			rd = cqe->res;
		io_uring_cqe_seen(&ring, cqe);
	}
	CHKF(m, nop == 0, "NOP on a new ring: %d", nop);
	CHKF(m, rd == -EACCES, "READ on a new ring: %d", rd);
	io_uring_queue_exit(&ring);
	close(pfd[0]);
	close(pfd[1]);
	return 0;
}

/* task-restrict.c 1: NOP only, then a normal ring. */
static int nop_only_child(void *arg, struct child_msg *m)
{
	static const uint32_t ops[] = { OP_NOP };
	const struct iour_verify_req reqs[] = { live_req(OP_NOP, IOUR_EXPECT_ALLOW),
						live_req(OP_READ, IOUR_EXPECT_DENY),
						live_req(OP_WRITE, IOUR_EXPECT_DENY),
						live_socket(2, 1, IOUR_EXPECT_DENY) };
	char why[512];
	int rc, pfd[2];

	(void)arg;
	if (apply_task_set(rs_make(ops, 1, 0, 0, NULL, -1), IOUR_POLICY_DEFAULT_DENY,
			   IOUR_STATUS_FULLY, m))
		return 1;
	/* The enforcement check after execve first: this task has not created
	 * a ring (doc/kernel.md 3.4), and the helper must still be
	 * restricted. */
	rc = live_verify(reqs, 4, LV_EXEC, -1, why, sizeof(why));
	CHKF(m, rc == 0 || rc == -ENOENT, "after execve: %s", why);
	rc = live_verify(reqs, 4, LV_PLAIN, -1, why, sizeof(why));
	CHKF(m, rc == 0, "fresh ring: %s", why);
	if (nop_ok_read_denied(m))
		return 1;
	/* The set has SQE entries only: register operations stay open. */
	{
		struct io_uring ring;

		CHK(m, io_uring_queue_init(8, &ring, 0) == 0 && pipe(pfd) == 0);
		rc = io_uring_register_files(&ring, pfd, 1);
		CHKF(m, rc == 0, "REGISTER_FILES on a new ring: %d", rc);
		io_uring_queue_exit(&ring);
	}
	return 0;
}

Test(live_task, nop_only_then_normal_ring)
{
	LIVE_REQUIRE(LIVE_TASK);
	LIVE_CHILD(nop_only_child, NULL);
	live_log("task NOP-only: NOP 0, READ -EACCES on a new ring; confirmed by the "
		 "enforcement check%s", live_helper() ? " (fresh ring and after execve)" : "");
}

/* task-restrict.c 2: inheritance into a forked grandchild. */
static int grandchild(void *arg, struct child_msg *m)
{
	struct io_uring ring;
	struct io_uring_sqe *sqe;
	int pfd[2], res;

	(void)arg;
	if (nop_ok_read_denied(m))
		return 1;
	CHK(m, pipe(pfd) == 0 && io_uring_queue_init(8, &ring, 0) == 0);
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_write(sqe, pfd[1], "x", 1, 0);
	res = live_submit(&ring, sqe);
	CHKF(m, res == 1, "WRITE in the grandchild: %d", res);
	io_uring_queue_exit(&ring);
	return 0;
}

static int inherit_child(void *arg, struct child_msg *m)
{
	static const uint32_t ops[] = { OP_NOP, OP_WRITE };
	struct child_msg gm;
	int rc;

	(void)arg;
	if (apply_task_set(rs_make(ops, 2, 0, 0, NULL, -1), IOUR_POLICY_DEFAULT_DENY,
			   IOUR_STATUS_FULLY, m))
		return 1;
	memset(&gm, 0, sizeof(gm));
	rc = child_run(grandchild, NULL, &gm);
	CHKF(m, rc == 0, "grandchild: %.900s", gm.text);
	return 0;
}

Test(live_task, inherited_by_grandchild)
{
	LIVE_REQUIRE(LIVE_TASK);
	LIVE_CHILD(inherit_child, NULL);
	live_log("task {NOP, WRITE}: a forked grandchild's new ring allows NOP and WRITE, denies "
		 "READ");
}

/* task-restrict.c 3: a second classic set is -EPERM; the library then
 * stacks through filters and never loosens. */
static int twice_child(void *arg, struct child_msg *m)
{
	static const uint32_t ops[] = { OP_NOP };
	static const uint32_t ops2[] = { OP_NOP, OP_WRITE };
	struct {
		uint16_t flags, nr_res;
		uint32_t resv[3];
	} hdr = { 0, 0, { 0, 0, 0 } };
	const struct iour_verify_req reqs[] = { live_req(OP_NOP, IOUR_EXPECT_ALLOW),
						live_req(OP_WRITE, IOUR_EXPECT_DENY),
						live_req(OP_READ, IOUR_EXPECT_DENY) };
	struct iour_ruleset *rs = rs_make(ops, 1, 0, 0, NULL, -1);
	struct iour_report *rep = NULL;
	struct iour_features f;
	struct iour_policy *p, *p2;
	struct iour_plan *pl, *pl2;
	struct iour_decision d = { .sz = sizeof(d) };
	char why[512];
	long raw;
	int rc, i, n, already = 0;

	(void)arg;
	CHK(m, live_policy(&p, IOUR_POLICY_TARGET_TASK, rs, NULL, IOUR_POLICY_DEFAULT_DENY) == 0);
	iour_ruleset__free(rs);
	CHK(m, iour_policy__plan(p, NULL, &pl) == 0);
	rc = iour_plan__apply_task(pl, NULL, &rep);
	CHKF(m, rc == 0, "first: %s", iour_errname(rc));
	iour_report__free(rep);
	/* The same plan again: refused before anything is applied. */
	rc = iour_plan__apply_task(pl, NULL, &rep);
	CHKF(m, rc == -EPERM, "second: %s", iour_errname(rc));
	CHK(m, iour_report__status(rep) == IOUR_STATUS_NOT_ENFORCED);
	n = iour_report__decision_cnt(rep);
	for (i = 0; i < n; i++)
		if (!iour_report__decision(rep, (size_t)i, &d) &&
		    d.reason == IOUR_REASON_ALREADY_RESTRICTED)
			already++;
	CHK(m, already == 1);
	iour_report__free(rep);
	/* The kernel itself, asked directly (doc/kernel.md 8.2). */
	raw = syscall(__NR_io_uring_register, -1, 11 /* RESTRICTIONS */, &hdr, 1);
	CHKF(m, raw == -1 && errno == EPERM, "raw second registration: %ld errno %d", raw, errno);
	/* A new plan sees the restricted task and stacks filters instead. */
	CHK(m, live_refresh(&f) == 0);
	CHKF(m, f.task_restrictions == IOUR_AVAIL_RESTRICTED, "probe: %u", f.task_restrictions);
	rs = rs_make(ops2, 2, 0, 0, NULL, -1);
	CHK(m, live_policy(&p2, IOUR_POLICY_TARGET_TASK, rs, NULL, IOUR_POLICY_DEFAULT_DENY) == 0);
	iour_ruleset__free(rs);
	rc = iour_policy__plan(p2, NULL, &pl2);
	CHKF(m, rc == 0, "plan on a restricted task: %s", iour_errname(rc));
	n = iour_plan__step_cnt(pl2);
	for (i = 0; i < n; i++) {
		struct iour_plan_step s = { .sz = sizeof(s) };

		CHK(m, iour_plan__step(pl2, (size_t)i, &s) == 0);
		CHKF(m, s.op == IOUR_STEP_BPF_FILTER || s.op == IOUR_STEP_SET_NNP,
		     "step %d is %u: only filters stack on a restricted task", i, s.op);
	}
	rc = iour_plan__apply_task(pl2, NULL, &rep);
	CHKF(m, rc == 0, "stacked: %s", iour_errname(rc));
	iour_report__free(rep);
	/* WRITE stays denied: the first set still gates, nothing loosens. */
	rc = live_verify(reqs, 3, LV_PLAIN, -1, why, sizeof(why));
	CHKF(m, rc == 0, "%s", why);
	iour_plan__free(pl2);
	iour_policy__free(p2);
	iour_plan__free(pl);
	iour_policy__free(p);
	return 0;
}

Test(live_task, second_registration_eperm)
{
	LIVE_REQUIRE(LIVE_TASK | LIVE_TASK_BPF);
	LIVE_CHILD(twice_child, NULL);
	live_log("task: a second classic set is -EPERM (executor and raw kernel); a later policy "
		 "stacks as filters and cannot loosen");
}

/* task-restrict.c 4: only REGISTER_FILES among register opcodes. */
static int regop_child(void *arg, struct child_msg *m)
{
	static const uint32_t regs[] = { REG_FILES };
	struct io_uring ring;
	char mem[64];
	struct iovec iov = { .iov_base = mem, .iov_len = sizeof(mem) };
	const struct iour_verify_req reqs[] = { live_req(OP_NOP, IOUR_EXPECT_ALLOW),
						live_req(OP_READ, IOUR_EXPECT_ALLOW) };
	char why[512];
	int pfd[2], rc;

	(void)arg;
	if (apply_task_set(rs_make(NULL, -1, 0x7f, 0, regs, 1), IOUR_POLICY_DEFAULT_ALLOW,
			   IOUR_STATUS_FULLY, m))
		return 1;
	CHK(m, pipe(pfd) == 0);
	rc = io_uring_queue_init(8, &ring, 0);
	CHKF(m, rc == 0, "ring: %d", rc);
	rc = io_uring_register_files(&ring, pfd, 1);
	CHKF(m, rc == 0, "REGISTER_FILES: %d", rc);
	rc = io_uring_register_buffers(&ring, &iov, 1);
	CHKF(m, rc == -EACCES, "REGISTER_BUFFERS: %d", rc);
	io_uring_queue_exit(&ring);
	/* The request side is not gated (Linux 7.0 split semantics). */
	rc = live_verify(reqs, 2, LV_PLAIN, -1, why, sizeof(why));
	CHKF(m, rc == 0, "%s", why);
	return 0;
}

Test(live_task, register_op_allow_list)
{
	LIVE_REQUIRE(LIVE_TASK);
	LIVE_CHILD(regop_child, NULL);
	live_log("task REGISTER_FILES only: files register, buffers -EACCES on a new ring");
}

/* cbpf_filter.c no_new_privs_required, through the library: an
 * unprivileged task without no_new_privs cannot register; the policy's
 * NNP attribute decides whether the library sets it. */
static int nnp_child(void *arg, struct child_msg *m)
{
	static const uint32_t ops[] = { OP_NOP };
	struct iour_ruleset *rs = rs_make(ops, 1, 0, 0, NULL, -1);
	const struct iour_verify_req reqs[] = { live_req(OP_NOP, IOUR_EXPECT_ALLOW),
						live_req(OP_READ, IOUR_EXPECT_DENY) };
	struct iour_report *rep = NULL;
	struct iour_features f;
	struct iour_policy *p;
	struct iour_plan *pl = NULL;
	struct iour_plan_step s = { .sz = sizeof(s) };
	char why[512];
	long raw;
	int rc;

	(void)arg;
	if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 1)
		return 77; /* cannot be undone: nothing to test */
	if (geteuid() == 0)
		CHKF(m, setgroups(0, NULL) == 0 && setresgid(65534, 65534, 65534) == 0 &&
				setresuid(65534, 65534, 65534) == 0,
		     "dropping root: errno %d", errno);
	raw = syscall(__NR_io_uring_register, -1, 11, NULL, 1);
	CHKF(m, raw == -1 && errno == EACCES, "raw, without no_new_privs: %ld errno %d", raw,
	     errno);
	CHK(m, live_refresh(&f) == 0);
	CHKF(m, f.task_restrictions == IOUR_AVAIL_NO_PRIV, "probe: %u", f.task_restrictions);
	CHK(m, live_policy(&p, IOUR_POLICY_TARGET_TASK, rs, NULL, IOUR_POLICY_DEFAULT_DENY) == 0);
	iour_ruleset__free(rs);
	CHK(m, iour_policy__set_attr(p, IOUR_POLICY_ATTR_NNP, IOUR_POLICY_NNP_KEEP) == 0);
	rc = iour_policy__plan(p, NULL, &pl);
	CHKF(m, rc == -EACCES, "NNP_KEEP plan: %s", iour_errname(rc));
	CHK(m, iour_policy__set_attr(p, IOUR_POLICY_ATTR_NNP, IOUR_POLICY_NNP_SET) == 0);
	rc = iour_policy__plan(p, NULL, &pl);
	CHKF(m, rc == 0, "NNP_SET plan: %s", iour_errname(rc));
	CHK(m, iour_plan__step(pl, 0, &s) == 0 && s.op == IOUR_STEP_SET_NNP);
	rc = iour_plan__apply_task(pl, NULL, &rep);
	CHKF(m, rc == 0, "apply: %s", iour_errname(rc));
	CHK(m, iour_report__flags(rep) & IOUR_REPORT_NNP_SET);
	CHK(m, prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 1);
	rc = live_verify(reqs, 2, LV_PLAIN, -1, why, sizeof(why));
	CHKF(m, rc == 0, "%s", why);
	iour_report__free(rep);
	iour_plan__free(pl);
	iour_policy__free(p);
	return 0;
}

Test(live_task, no_new_privs_required)
{
	struct child_msg m;
	int rc;

	LIVE_REQUIRE(LIVE_TASK);
	memset(&m, 0, sizeof(m));
	rc = child_run(nnp_child, NULL, &m);
	if (rc == 77) {
		live_log("no_new_privs_required: skipped: the test process has no_new_privs set");
		cr_skip_test("skipped: the test process has no_new_privs set already");
	}
	cr_assert_eq(rc, 0, "%s", m.text);
	live_log("task: without no_new_privs (unprivileged) the kernel says -EACCES; NNP_KEEP "
		 "plans fail, NNP_SET plans set it first and apply");
}
