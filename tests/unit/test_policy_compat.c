/* SPDX-License-Identifier: MIT */
/*
 * Applying a plan to a kernel it was not compiled for.  The executor
 * compares the plan's kernel with the running one before its first system
 * call and refuses with -IOUR_ERRNO__KERNEL_MISMATCH where the plan would
 * mean something else (limits, gate semantics, mechanisms); plans for the
 * running kernel, also lowered by IOUR_FEATURE_LEVEL, keep working.
 *
 * Both sides are checked: the rule itself on every pair of feature levels
 * (a hand-written table), on the real kernel of this machine, and on
 * emulated Linux 6.1, 6.18, 7.0 and 7.2 kernels behind the syscall seam.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <liburing.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "child.h"
#include "emukernel.h"
#include "iouring_restrict/iouring_restrict.h"
#include "plan/planner.h"
#include "probe/probe_answers.h"
#include "base/sys.h"
#include "uring_avail.h"

#define OP_NOP 0
#define OP_READ 22
#define OP_WRITE 23
#define OP_SOCKET 45

static const struct iour_insn inet_only[] = {
	{ 0x20, 0, 0, 16 }, { 0x15, 0, 1, 2 }, { 0x06, 0, 0, 1 }, { 0x06, 0, 0, 0 },
};

/* NOP, READ, SOCKET(AF_INET only); SQE flags none. */
static struct iour_policy *policy(uint32_t target, uint32_t companion)
{
	static const uint32_t ops[] = { OP_NOP, OP_READ, OP_SOCKET };
	struct iour_ruleset *rs;
	struct iour_policy *p;
	size_t i;

	cr_assert_eq(iour_ruleset__new(NULL, &rs), 0);
	for (i = 0; i < 3; i++)
		cr_assert_eq(iour_ruleset__allow_sqe_op(rs, ops[i]), 0);
	cr_assert_eq(iour_ruleset__set_sqe_flags(rs, 0, 0), 0);
	cr_assert_eq(iour_policy__new(NULL, &p), 0);
	cr_assert_eq(iour_policy__set_ruleset(p, rs), 0);
	iour_ruleset__free(rs);
	cr_assert_eq(iour_policy__set_prog(p, OP_SOCKET, inet_only, 4, 12), 0);
	cr_assert_eq(iour_policy__set_attr(p, IOUR_POLICY_ATTR_TARGET, target), 0);
	cr_assert_eq(iour_policy__set_attr(p, IOUR_POLICY_ATTR_COMPANION, companion), 0);
	return p;
}

static struct iour_plan *forced(const struct iour_policy *p, uint32_t level)
{
	IOUR_OPTS(iour_plan_opts, o, .flags = IOUR_PLAN_FORCE_LEVEL, .level = level);
	struct iour_plan *pl = NULL;

	cr_assert_eq(iour_policy__plan(p, &o, &pl), 0);
	return pl;
}

static struct iour_plan *described(const struct iour_policy *p, const struct iour_features *f)
{
	IOUR_OPTS(iour_plan_opts, o, .features = f);
	struct iour_plan *pl = NULL;
	int rc = iour_policy__plan(p, &o, &pl);

	cr_assert_eq(rc, 0, "plan: %s", iour_errname(rc));
	return pl;
}

/* The report has exactly one KERNEL_MISMATCH decision; returns its text. */
static const char *mismatch_text(const struct iour_report *r)
{
	struct iour_decision d = { .sz = sizeof(d) };
	const char *text = NULL;
	int i, n = iour_report__decision_cnt(r), found = 0;
	int32_t err = 0;

	for (i = 0; i < n; i++) {
		cr_assert_eq(iour_report__decision(r, (size_t)i, &d), 0);
		if (d.reason == IOUR_REASON_KERNEL_MISMATCH) {
			found++;
			text = d.text;
			cr_expect_eq(d.kind, IOUR_DECISION_FAILED);
			cr_expect_eq(d.value, -IOUR_ERRNO__KERNEL_MISMATCH);
		}
	}
	cr_assert_eq(found, 1, "one KERNEL_MISMATCH decision");
	cr_expect_eq(iour_report__status(r), IOUR_STATUS_NOT_ENFORCED);
	cr_expect_eq(iour_report__mechanism(r), IOUR_MECH_NONE);
	cr_expect(iour_report__flags(r) & IOUR_REPORT_LOOSENED);
	cr_assert_eq(iour_report__error(r, &err), 0);
	cr_expect_eq(err, -IOUR_ERRNO__KERNEL_MISMATCH);
	{
		uint32_t done = 1;

		cr_assert_eq(iour_report__steps(r, &done, NULL), 0);
		cr_expect_eq(done, 0, "nothing applied");
	}
	return text;
}

/* ---- the rule, on every pair of representative kernels ---- */

/*
 * 'C' compatible, 'M' mismatch, for plan level (row) on kernel level
 * (column).  Level 0 kernels have no io_uring: the kernel's own error is
 * left to speak.  Levels 4 and 5 share their limits (65/38, split); they
 * differ only in the CONNECT payload, which is negotiated.
 */
static const char ring_part[6][7] = {
	"CCCCCC", /* plan 0: no steps */
	"CCCCCC", /* plan 1: rings cannot be restricted: no steps */
	"CMCMMM", /* plan 2: classic set for 49/26, coupled */
	"CMMCMM", /* plan 3: classic set for 63/36, coupled */
	"CMMMCC", /* plan 4: classic set for 65/38, split, ring filter */
	"CMMMCC", /* plan 5: the same */
};
static const char task_part[6][7] = {
	"CCCCCC", /* no steps */
	"CCCCCC",
	"CCCCCC", /* a task plan without task restrictions has only a ring part */
	"CCCCCC",
	"CMMMCC", /* task set and task filter for 65/38 */
	"CMMMCC",
};

Test(policy_compat, rule_on_every_pair_of_levels)
{
	struct iour_policy *pr = policy(IOUR_POLICY_TARGET_RING, 0);
	struct iour_policy *pt = policy(IOUR_POLICY_TARGET_TASK, 0);
	struct iour_policy *pc = policy(IOUR_POLICY_TARGET_TASK, IOUR_POLICY_COMPANION_ENOSYS);
	uint32_t pl_lv, k_lv;
	size_t n = 0;
	char why[512];

	for (pl_lv = 0; pl_lv <= 5; pl_lv++) {
		struct iour_plan *r = forced(pr, pl_lv), *t = forced(pt, pl_lv), *c = forced(pc, pl_lv);

		for (k_lv = 0; k_lv <= 5; k_lv++) {
			struct iour__kernel k;
			int got;

			cr_assert_eq(iour__kernel_for_level(k_lv, &k), 0);
			why[0] = '\0';
			got = iour__plan_compat(r, r->n_task, r->nsteps, &k, why, sizeof(why));
			cr_expect_eq(got, ring_part[pl_lv][k_lv] == 'C' ? 0 :
								     -IOUR_ERRNO__KERNEL_MISMATCH,
				     "ring plan %u on kernel %u: %s (%s)", pl_lv, k_lv,
				     iour_errname(got), why);
			cr_expect_eq(got != 0, why[0] != '\0', "a mismatch says why");
			got = iour__plan_compat(t, 0, t->n_task, &k, why, sizeof(why));
			cr_expect_eq(got, task_part[pl_lv][k_lv] == 'C' ? 0 :
								     -IOUR_ERRNO__KERNEL_MISMATCH,
				     "task plan %u on kernel %u: %s (%s)", pl_lv, k_lv,
				     iour_errname(got), why);
			/* The task part of a ring-only fallback with the companion
			 * needs no io_uring feature at all. */
			if (pl_lv < 4)
				cr_expect_eq(iour__plan_compat(c, 0, c->n_task, &k, why, sizeof(why)),
					     0, "companion plan %u on kernel %u", pl_lv, k_lv);
			/* Its ring part follows the ring rule. */
			if (c->has_ring_part)
				cr_expect_eq(iour__plan_compat(c, c->n_task, c->nsteps, &k, why,
							       sizeof(why)) == 0,
					     ring_part[pl_lv][k_lv] == 'C',
					     "companion plan %u ring part on kernel %u", pl_lv, k_lv);
			n += 3;
		}
		iour_plan__free(r);
		iour_plan__free(t);
		iour_plan__free(c);
	}
	cr_log_info("%zu plan parts compared with representative kernels", n);
	fprintf(stderr, "compat: %zu plan parts compared with representative kernels\n", n);
	iour_policy__free(pr);
	iour_policy__free(pt);
	iour_policy__free(pc);
}

/* Only the property that differs is named. */
Test(policy_compat, reasons_name_the_difference)
{
	struct iour_policy *pr = policy(IOUR_POLICY_TARGET_RING, 0);
	struct iour_plan *pl = forced(pr, 3);
	struct iour__kernel k;
	char why[512];

	/* Limits. */
	cr_assert_eq(iour__kernel_for_level(3, &k), 0);
	k.reg_last = 37;
	cr_expect_eq(iour__plan_compat(pl, 0, pl->nsteps, &k, why, sizeof(why)),
		     -IOUR_ERRNO__KERNEL_MISMATCH);
	cr_expect(strstr(why, "IORING_REGISTER_LAST 36") && strstr(why, "has 63 and 37"), "%s", why);
	/* Gate semantics alone. */
	cr_assert_eq(iour__kernel_for_level(3, &k), 0);
	k.split = true;
	cr_expect_eq(iour__plan_compat(pl, 0, pl->nsteps, &k, why, sizeof(why)),
		     -IOUR_ERRNO__KERNEL_MISMATCH);
	cr_expect(strstr(why, "coupled gate semantics") && strstr(why, "split (7.0+) gates"), "%s",
		  why);
	/* A mechanism. */
	iour_plan__free(pl);
	pl = forced(pr, 4);
	cr_assert_eq(iour__kernel_for_level(4, &k), 0);
	k.ring_bpf = false;
	cr_expect_eq(iour__plan_compat(pl, 0, pl->nsteps, &k, why, sizeof(why)),
		     -IOUR_ERRNO__KERNEL_MISMATCH);
	cr_expect(strstr(why, "ring-level BPF filters"), "%s", why);
	/* Payload sizes are negotiated, not compared. */
	cr_assert_eq(iour__kernel_for_level(4, &k), 0);
	k.pdu[OP_SOCKET] = 0;
	cr_expect_eq(iour__plan_compat(pl, 0, pl->nsteps, &k, why, sizeof(why)), 0);
	iour_plan__free(pl);
	iour_policy__free(pr);
}

/* ---- the real kernel ---- */

static struct iour__kernel real_kernel(void)
{
	struct iour__kernel t;

	cr_assert_eq(iour__kernel_probe(&t), 0);
	return t;
}

static void expect_ring_works(const struct iour_plan *pl, const char *what)
{
	struct iour_verify_req req[3];
	struct iour_verify_result res[3];
	IOUR_OPTS(iour_verify_opts, vo, .flags = IOUR_VERIFY_RING_FD);
	struct iour_report *rep = NULL;
	int fd = -1, rc;

	rc = iour_plan__create_ring(pl, 8, NULL, NULL, &fd, &rep);
	cr_assert_eq(rc, 0, "%s: create_ring: %s", what, iour_errname(rc));
	memset(req, 0, sizeof(req));
	req[0] = (struct iour_verify_req){ .sz = sizeof(req[0]), .opcode = OP_NOP,
					   .expect = IOUR_EXPECT_ALLOW };
	req[1] = (struct iour_verify_req){ .sz = sizeof(req[0]), .opcode = OP_READ,
					   .expect = IOUR_EXPECT_ALLOW };
	req[2] = (struct iour_verify_req){ .sz = sizeof(req[0]), .opcode = OP_WRITE,
					   .expect = IOUR_EXPECT_DENY };
	vo.ring_fd = fd;
	rc = iour_verify(req, 3, res, &vo);
	cr_expect_eq(rc, 0, "%s: the enforcement check: %s", what, iour_errname(rc));
	close(fd);
	iour_report__free(rep);
}

Test(policy_compat, real_kernel_forced_levels)
{
	UNIT_REQUIRE_URING();
	struct iour__kernel k = real_kernel(), l3;
	struct iour_policy *pr = policy(IOUR_POLICY_TARGET_RING, 0);
	struct iour_report *rep = NULL;
	struct iour_plan *pl;
	struct io_uring ring;
	struct io_uring_params params;
	int fd = -1, rc, fds;
	const char *text;
	char want[64];

	if (k.level < 2 || k.level > 3)
		cr_skip_test("written for a kernel with ring restrictions and no filters "
			     "(level %u here)", k.level);
	/* Linux 6.1 limits on this kernel: refused, nothing created. */
	pl = forced(pr, 2);
	fds = count_fds();
	rc = iour_plan__create_ring(pl, 8, NULL, NULL, &fd, &rep);
	cr_expect_eq(rc, -IOUR_ERRNO__KERNEL_MISMATCH, "level 2 plan: %s", iour_errname(rc));
	cr_expect_eq(fd, -1);
	cr_expect_eq(count_fds(), fds, "no ring left behind");
	text = mismatch_text(rep);
	snprintf(want, sizeof(want), "has %u and %u", k.op_last, k.reg_last);
	cr_expect(strstr(text, "IORING_OP_LAST 49") && strstr(text, want), "%s", text);
	fprintf(stderr, "compat, real kernel: %s\n", text);
	iour_report__free(rep);
	/* ... and on a ring the caller made: the ring is left untouched. */
	memset(&params, 0, sizeof(params));
	params.flags = IORING_SETUP_R_DISABLED;
	cr_assert_eq(io_uring_queue_init_params(4, &ring, &params), 0);
	cr_expect_eq(iour_plan__apply_ring(pl, ring.ring_fd, NULL, &rep),
		     -IOUR_ERRNO__KERNEL_MISMATCH);
	iour_report__free(rep);
	cr_expect_eq(io_uring_register(ring.ring_fd, IORING_REGISTER_RESTRICTIONS, NULL, 0), -EINVAL,
		     "no classic set was registered");
	io_uring_queue_exit(&ring);
	iour_plan__free(pl);
	/* The representative kernel of level 3 is Linux 6.18: on a kernel with
	 * its limits and gates the plan is compatible and works. */
	cr_assert_eq(iour__kernel_for_level(3, &l3), 0);
	pl = forced(pr, 3);
	if (k.op_last == l3.op_last && k.reg_last == l3.reg_last && k.split == l3.split)
		expect_ring_works(pl, "level 3 plan");
	else
		cr_expect_eq(iour_plan__create_ring(pl, 8, NULL, NULL, &fd, NULL),
			     -IOUR_ERRNO__KERNEL_MISMATCH);
	iour_plan__free(pl);
	iour_policy__free(pr);
}

/* A level 4 task plan on a kernel without task restrictions: refused
 * before anything (in a child: a mistake would restrict the runner). */
static int task4_child(void *arg, struct child_msg *m)
{
	struct iour_plan *pl = arg;
	struct iour_report *rep = NULL;
	int rc = iour_plan__apply_task(pl, NULL, &rep);

	CHKF(m, rc == -IOUR_ERRNO__KERNEL_MISMATCH, "apply_task: %s", iour_errname(rc));
	CHK(m, iour_report__status(rep) == IOUR_STATUS_NOT_ENFORCED);
	{
		struct iour_decision d = { .sz = sizeof(d) };
		int i, n = iour_report__decision_cnt(rep), found = 0;

		for (i = 0; i < n; i++)
			if (!iour_report__decision(rep, (size_t)i, &d) &&
			    d.reason == IOUR_REASON_KERNEL_MISMATCH &&
			    strstr(d.text, "task-level restrictions"))
				found++;
		CHKF(m, found == 1, "%d decisions name the missing mechanism", found);
	}
	iour_report__free(rep);
	CHKF(m, status_value("NoNewPrivs") == 0, "no_new_privs was not set");
	return 0;
}

Test(policy_compat, real_kernel_task_plan_without_task_restrictions)
{
	struct iour__kernel k = real_kernel();
	struct iour_policy *pt = policy(IOUR_POLICY_TARGET_TASK, 0);
	struct iour_plan *pl;
	struct child_msg m;

	if (k.task_restrict)
		cr_skip_test("the kernel has task restrictions");
	if (status_value("NoNewPrivs") != 0)
		cr_skip_test("the test runner has no_new_privs already");
	pl = forced(pt, 4);
	memset(&m, 0, sizeof(m));
	cr_expect_eq(child_run(task4_child, pl, &m), 0, "%s", m.text);
	iour_plan__free(pl);
	iour_policy__free(pt);
}

/* Plans for a kernel described by probe results that differ from the
 * running kernel's in the limits or in the gate semantics. */
Test(policy_compat, real_kernel_described_kernels)
{
	UNIT_REQUIRE_URING();
	struct iour_policy *pr = policy(IOUR_POLICY_TARGET_RING, 0);
	struct iour_features f = { .sz = sizeof(f) }, g;
	struct iour_report *rep = NULL;
	struct iour_plan *pl;
	int fd = -1;

	cr_assert_eq(iour_probe(NULL, &f), 0);
	if (f.level < 2)
		cr_skip_test("kernel without ring restrictions");
	/* As probed: works. */
	pl = described(pr, &f);
	expect_ring_works(pl, "described as probed");
	iour_plan__free(pl);
	/* Fewer request opcodes. */
	g = f;
	g.op_last = f.op_last - 3;
	pl = described(pr, &g);
	cr_expect_eq(iour_plan__create_ring(pl, 8, NULL, NULL, &fd, &rep),
		     -IOUR_ERRNO__KERNEL_MISMATCH);
	cr_expect(strstr(mismatch_text(rep), "IORING_OP_LAST"));
	iour_report__free(rep);
	iour_plan__free(pl);
	/* The other gate semantics. */
	g = f;
	g.split_gates = !f.split_gates;
	pl = described(pr, &g);
	cr_expect_eq(iour_plan__create_ring(pl, 8, NULL, NULL, &fd, &rep),
		     -IOUR_ERRNO__KERNEL_MISMATCH);
	cr_expect(strstr(mismatch_text(rep), "gate semantics"));
	iour_report__free(rep);
	iour_plan__free(pl);
	cr_expect_eq(fd, -1);
	iour_policy__free(pr);
}

/* IOUR_FEATURE_LEVEL lowers the plan, never its limits: the fallback
 * really runs.  The task part (companion) runs in a child. */
static int lowered_task_child(void *arg, struct child_msg *m)
{
	struct iour_policy *p = arg;
	struct iour_plan *pl = NULL;
	struct iour_report *rep = NULL;
	int rc;

	CHK(m, iour_policy__plan(p, NULL, &pl) == 0);
	rc = iour_plan__apply_task(pl, NULL, &rep);
	if (rc == 0 && !(iour_report__mechanism(rep) & IOUR_MECH_COMPANION))
		rc = -IOUR_ERRNO__INTERNAL;
	iour_report__free(rep);
	iour_plan__free(pl);
	CHKF(m, rc == 0, "apply_task (companion mechanism expected): %s", iour_errname(rc));
	return 0;
}

Test(policy_compat, real_kernel_feature_level_env)
{
	UNIT_REQUIRE_URING();
	struct iour_policy *pr = policy(IOUR_POLICY_TARGET_RING, 0);
	struct iour_policy *pt = policy(IOUR_POLICY_TARGET_TASK, IOUR_POLICY_COMPANION_ENOSYS);
	IOUR_OPTS(iour_probe_opts, po, .flags = IOUR_PROBE_REFRESH);
	struct iour_features f = { .sz = sizeof(f) };
	struct iour_plan_info info = { .sz = sizeof(info) };
	struct iour_plan *pl;
	struct child_msg m;
	uint32_t lv;

	cr_assert_eq(iour_probe(NULL, &f), 0);
	if (f.kernel_level < 3)
		cr_skip_test("needs a kernel above level 2 to lower it (level %u)", f.kernel_level);
	for (lv = 2; lv < f.kernel_level && lv <= 3; lv++) {
		char v[4];

		snprintf(v, sizeof(v), "%u", lv);
		cr_assert_eq(setenv("IOUR_FEATURE_LEVEL", v, 1), 0);
		cr_assert_eq(iour_probe(&po, &f), 0);
		cr_assert(f.flags & IOUR_FEATURES_FORCED);
		pl = NULL;
		cr_assert_eq(iour_policy__plan(pr, NULL, &pl), 0);
		cr_assert_eq(iour_plan__info(pl, &info), 0);
		cr_expect_eq(info.level, lv);
		expect_ring_works(pl, "lowered ring plan");
		iour_plan__free(pl);
		memset(&m, 0, sizeof(m));
		cr_expect_eq(child_run(lowered_task_child, pt, &m), 0, "level %u: %s", lv, m.text);
		fprintf(stderr, "compat: IOUR_FEATURE_LEVEL=%u: ring and task plans applied\n", lv);
	}
	unsetenv("IOUR_FEATURE_LEVEL");
	iour_policy__free(pr);
	iour_policy__free(pt);
}

/* ---- emulated kernels ---- */

struct emu_case {
	enum emu_gen gen;
	uint32_t level;   /* forced plan level */
	uint32_t target;
	uint32_t companion;
	bool compatible;
};

Test(policy_compat, emulated_forced_levels_on_each_generation)
{
	static const struct emu_case cases[] = {
		{ EMU_GEN_6_1, 2, IOUR_POLICY_TARGET_RING, 0, true },
		{ EMU_GEN_6_1, 3, IOUR_POLICY_TARGET_RING, 0, false },
		{ EMU_GEN_6_18, 2, IOUR_POLICY_TARGET_RING, 0, false },
		{ EMU_GEN_6_18, 3, IOUR_POLICY_TARGET_RING, 0, true },
		{ EMU_GEN_6_18, 4, IOUR_POLICY_TARGET_RING, 0, false },
		{ EMU_GEN_6_18, 4, IOUR_POLICY_TARGET_TASK, 0, false },
		{ EMU_GEN_6_18, 3, IOUR_POLICY_TARGET_TASK, IOUR_POLICY_COMPANION_ENOSYS, true },
		{ EMU_GEN_7_0, 3, IOUR_POLICY_TARGET_RING, 0, false },
		{ EMU_GEN_7_0, 3, IOUR_POLICY_TARGET_TASK, IOUR_POLICY_COMPANION_ENOSYS, true },
		{ EMU_GEN_7_0, 4, IOUR_POLICY_TARGET_TASK, 0, true },
		{ EMU_GEN_7_0, 5, IOUR_POLICY_TARGET_TASK, 0, true },
		{ EMU_GEN_7_0, 4, IOUR_POLICY_TARGET_RING, 0, true },
		{ EMU_GEN_7_2, 4, IOUR_POLICY_TARGET_TASK, 0, true },
		{ EMU_GEN_7_2, 5, IOUR_POLICY_TARGET_RING, 0, true },
	};
	size_t i, good = 0, refused = 0;

	for (i = 0; i < IOUR_ARRAY_SIZE(cases); i++) {
		const struct emu_case *c = &cases[i];
		struct emu_config cfg = { .gen = c->gen, .no_new_privs = true };
		struct iour_policy *p = policy(c->target, c->companion);
		struct iour_plan *pl = forced(p, c->level);
		struct iour_report *rep = NULL;
		struct emu_state st;
		struct emu *e;
		int rc, fd = -1;

		cr_assert_eq(emu_new(&cfg, &e), 0);
		emu_install(e);
		if (c->target == IOUR_POLICY_TARGET_TASK)
			rc = iour_plan__apply_task(pl, NULL, &rep);
		else
			rc = iour_plan__create_ring(pl, 8, NULL, NULL, &fd, &rep);
		if (c->compatible) {
			cr_expect_eq(rc, 0, "emulated %s, level %u plan: %s", emu_gen_name(c->gen),
				     c->level, iour_errname(rc));
			cr_expect_neq(iour_report__status(rep), IOUR_STATUS_NOT_ENFORCED);
			good++;
		} else {
			cr_expect_eq(rc, -IOUR_ERRNO__KERNEL_MISMATCH, "emulated %s, level %u plan: %s",
				     emu_gen_name(c->gen), c->level, iour_errname(rc));
			(void)mismatch_text(rep);
			/* Not one system call reached the emulated kernel (the
			 * comparison's probe ran in a child). */
			cr_expect_eq(emu_log_len(e), 0, "emulated %s: %zu calls", emu_gen_name(c->gen),
				     emu_log_len(e));
			emu_task_state(e, &st);
			cr_expect(!st.exists && !emu_nnp(e) == !cfg.no_new_privs);
			refused++;
		}
		iour_report__free(rep);
		iour_plan__free(pl);
		iour_policy__free(p);
		emu_uninstall();
		emu_free(e);
	}
	fprintf(stderr, "compat, emulated: %zu forced plans applied, %zu refused before any call\n",
		good, refused);
}

/* IOUR_FEATURE_LEVEL on an emulated 7.0 kernel: the task plan falls back
 * to the ring part and the companion, and both really apply. */
Test(policy_compat, emulated_7_0_lowered_to_level_3)
{
	struct emu_config cfg = { .gen = EMU_GEN_7_0, .no_new_privs = true };
	struct iour_policy *p = policy(IOUR_POLICY_TARGET_TASK, IOUR_POLICY_COMPANION_ENOSYS);
	IOUR_OPTS(iour_probe_opts, po, .flags = IOUR_PROBE_NO_CACHE);
	struct iour_features f = { .sz = sizeof(f) };
	struct iour_report *rep = NULL;
	struct iour_plan *pl;
	struct emu_state st;
	struct emu *e;
	uint8_t ctx[40];
	int rc, fd = -1;

	cr_assert_eq(emu_new(&cfg, &e), 0);
	emu_install(e);
	cr_assert_eq(setenv("IOUR_FEATURE_LEVEL", "3", 1), 0);
	cr_assert_eq(iour_probe(&po, &f), 0);
	cr_assert_eq(f.level, 3);
	cr_assert_eq(f.kernel_level, 4);
	cr_expect_eq(f.op_last, 65, "emulated: the real limits are kept");
	cr_expect_eq(f.split_gates, 1);
	pl = described(p, &f);
	rc = iour_plan__create_ring(pl, 8, NULL, NULL, &fd, &rep);
	cr_assert_eq(rc, 0, "emulated: ring part: %s", iour_errname(rc));
	iour_report__free(rep);
	cr_assert_eq(emu_ring_state(e, fd, &st), 0);
	cr_expect(st.registered && !st.disabled);
	emu_ctx(ctx, OP_WRITE, 0, 0);
	cr_expect_eq(emu_submit(e, fd, ctx), -EACCES, "emulated: WRITE denied on the plan's ring");
	emu_ctx(ctx, OP_NOP, 0, 0);
	cr_expect_eq(emu_submit(e, fd, ctx), 0);
	rc = iour_plan__apply_task(pl, NULL, &rep);
	cr_assert_eq(rc, 0, "emulated: task part: %s", iour_errname(rc));
	cr_expect(iour_report__mechanism(rep) & IOUR_MECH_COMPANION);
	cr_expect_eq(emu_seccomp_count(e), 1, "emulated: the companion is installed");
	emu_task_state(e, &st);
	cr_expect(!st.exists, "emulated: no task restrictions at level 3");
	iour_report__free(rep);
	unsetenv("IOUR_FEATURE_LEVEL");
	iour_plan__free(pl);
	iour_policy__free(p);
	emu_uninstall();
	emu_free(e);
}

/* The comparison needs the running kernel's description; when the probe
 * child cannot be created, nothing is applied and the error says so. */
static int no_fork_child(void *arg, struct child_msg *m)
{
	static const struct fake_rule rules[] = {
		/* EPERM: no child for a reason other than a resource
		 * shortage (EAGAIN would be reported as itself). */
		{ __NR_clone, -1, 0, EPERM, 0 },
		{ 435 /* clone3 */, -1, 0, ENOSYS, 0 },
		{ __NR_fork, -1, 0, EPERM, 0 },
	};
	struct iour_plan *pl = arg;
	struct iour_report *rep = NULL;
	struct iour_decision d = { .sz = sizeof(d) };
	int rc, fd = -1;

	CHK(m, fake_kernel_install(rules, 3) == 0);
	rc = iour_plan__create_ring(pl, 8, NULL, NULL, &fd, &rep);
	CHKF(m, rc == -ECHILD, "create_ring without fork: %s", iour_errname(rc));
	CHK(m, fd == -1 && iour_report__status(rep) == IOUR_STATUS_NOT_ENFORCED);
	CHK(m, iour_report__decision(rep, (size_t)iour_report__decision_cnt(rep) - 1, &d) == 0);
	CHKF(m, strstr(d.text, "could not be probed") != NULL, "%s", d.text);
	iour_report__free(rep);
	return 0;
}

Test(policy_compat, probe_failure_applies_nothing)
{
	struct iour_policy *pr = policy(IOUR_POLICY_TARGET_RING, 0);
	struct iour_plan *pl = forced(pr, 3);
	struct child_msg m;

	/* A fresh process: nothing probed (and cached) yet. */
	cr_assert_eq(iour__probe_runs(), 0, "the test process probed already");
	memset(&m, 0, sizeof(m));
	cr_expect_eq(child_run(no_fork_child, pl, &m), 0, "%s", m.text);
	iour_plan__free(pl);
	iour_policy__free(pr);
}

/* A task plan made where the task set gates ring-less register calls has
 * no seccomp guard for them: refused where the set does not gate them
 * (doc/security.md 2.1); the other way round it only denies twice. */
Test(policy_compat, task_plan_without_ringless_guard_refused_where_it_is_needed)
{
	struct iour_policy *pt = policy(IOUR_POLICY_TARGET_TASK, 0);
	struct iour_plan *t;
	struct iour__kernel k;
	char why[512] = "";

	t = forced(pt, 5);
	cr_assert_eq(iour__kernel_for_level(5, &k), 0);
	cr_expect_eq(iour__plan_compat(t, 0, t->n_task, &k, why, sizeof(why)), 0, "%s", why);
	t->kernel.task_gates_filters = true; /* as if planned on 7.3.4 */
	cr_expect_eq(iour__plan_compat(t, 0, t->n_task, &k, why, sizeof(why)),
		     -IOUR_ERRNO__KERNEL_MISMATCH);
	cr_expect(strstr(why, "gates ring-less register calls") != NULL, "%s", why);
	k.task_gates_filters = true;
	why[0] = '\0';
	cr_expect_eq(iour__plan_compat(t, 0, t->n_task, &k, why, sizeof(why)), 0, "%s", why);
	iour_plan__free(t);
	iour_policy__free(pt);
}
