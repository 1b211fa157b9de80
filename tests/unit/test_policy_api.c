/* SPDX-License-Identifier: MIT */
/*
 * The policy, plan and report API: every documented error code of every
 * public function, attributes and their bounds, two-call sizing, copies.
 * No kernel state is changed (plans are compiled for forced levels).
 */
#include <criterion/criterion.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iouring_restrict/iouring_restrict.h"

static const struct iour_insn inet_only[] = {
	{ 0x20, 0, 0, 16 }, { 0x15, 0, 1, 2 }, { 0x06, 0, 0, 1 }, { 0x06, 0, 0, 0 },
};

static struct iour_policy *mk(void)
{
	struct iour_policy *p = NULL;
	struct iour_ruleset *rs;

	cr_assert_eq(iour_policy__new(NULL, &p), 0);
	cr_assert_eq(iour_ruleset__new(NULL, &rs), 0);
	cr_assert_eq(iour_ruleset__allow_sqe_op(rs, 0), 0);
	cr_assert_eq(iour_ruleset__allow_sqe_op(rs, 45), 0);
	cr_assert_eq(iour_ruleset__set_sqe_flags(rs, 0, 0), 0);
	cr_assert_eq(iour_policy__set_ruleset(p, rs), 0);
	iour_ruleset__free(rs);
	cr_assert_eq(iour_policy__set_prog(p, 45, inet_only, 4, 12), 0);
	return p;
}

static struct iour_plan *plan(const struct iour_policy *p, uint32_t level)
{
	IOUR_OPTS(iour_plan_opts, o, .flags = IOUR_PLAN_FORCE_LEVEL, .level = level);
	struct iour_plan *pl = NULL;

	cr_assert_eq(iour_policy__plan(p, &o, &pl), 0);
	cr_assert_not_null(pl);
	return pl;
}

Test(policy_api, new_free_dup_errors)
{
	struct iour_policy *p = NULL, *c = NULL;
	struct {
		struct iour_policy_opts o;
		uint64_t extra;
	} big;

	cr_expect_eq(iour_policy__new(NULL, NULL), -EINVAL);
	{
		IOUR_OPTS(iour_policy_opts, o, .flags = 1);
		cr_expect_eq(iour_policy__new(&o, &p), -EINVAL);
	}
	{
		struct iour_policy_opts o = { .sz = 4 };
		cr_expect_eq(iour_policy__new(&o, &p), -EINVAL);
	}
	memset(&big, 0, sizeof(big));
	big.o.sz = sizeof(big);
	big.extra = 1;
	cr_expect_eq(iour_policy__new(&big.o, &p), -E2BIG);
	big.extra = 0;
	cr_expect_eq(iour_policy__new(&big.o, &p), 0, "unknown zero bytes are accepted");
	iour_policy__free(p);
	p = mk();
	cr_expect_eq(iour_policy__dup(NULL, &c), -EINVAL);
	cr_expect_eq(iour_policy__dup(p, NULL), -EINVAL);
	cr_assert_eq(iour_policy__dup(p, &c), 0);
	/* The copy plans to the same bytes. */
	{
		struct iour_plan *a = plan(p, 4), *b = plan(c, 4);
		size_t la = 0, lb = 0;
		char *ta, *tb;

		cr_assert_eq(iour_plan__describe(a, NULL, &la), 0);
		cr_assert_eq(iour_plan__describe(b, NULL, &lb), 0);
		cr_assert_eq(la, lb);
		ta = malloc(la);
		tb = malloc(lb);
		cr_assert_eq(iour_plan__describe(a, ta, &la), 0);
		cr_assert_eq(iour_plan__describe(b, tb, &lb), 0);
		cr_expect_str_eq(ta, tb);
		free(ta);
		free(tb);
		iour_plan__free(a);
		iour_plan__free(b);
	}
	iour_policy__free(c);
	iour_policy__free(p);
	iour_policy__free(NULL);
	iour_plan__free(NULL);
	iour_report__free(NULL);
}

Test(policy_api, set_ruleset_and_prog_errors)
{
	struct iour_policy *p = mk();
	struct iour_insn bad[] = { { 0x28, 0, 0, 16 }, { 0x06, 0, 0, 0 } }; /* ldh: refused */
	struct iour_insn big[4097];

	cr_expect_eq(iour_policy__set_ruleset(NULL, NULL), -EINVAL);
	cr_expect_eq(iour_policy__set_ruleset(p, NULL), 0, "NULL removes the classic part");
	cr_expect_eq(iour_policy__set_prog(NULL, 45, inet_only, 4, 12), -EINVAL);
	cr_expect_eq(iour_policy__set_prog(p, 256, inet_only, 4, 12), -EINVAL);
	cr_expect_eq(iour_policy__set_prog(p, 45, NULL, 4, 12), -EINVAL);
	cr_expect_eq(iour_policy__set_prog(p, 45, inet_only, 0, 12), -EINVAL);
	cr_expect_eq(iour_policy__set_prog(p, 45, inet_only, 4, 25), -EINVAL);
	memset(big, 0, sizeof(big));
	cr_expect_eq(iour_policy__set_prog(p, 45, big, 4097, 0), -EINVAL);
	cr_expect_eq(iour_policy__set_prog(p, 45, bad, 2, 0), -IOUR_ERRNO__INVALID_PROG);
	cr_expect_eq(iour_policy__set_prog(p, 45, NULL, 0, 0), 0, "removal");
	cr_expect_eq(iour_policy__set_prog(p, 255, inet_only, 4, 12), 0);
	iour_policy__free(p);
}

Test(policy_api, set_filter_errors)
{
	struct iour_policy *p = mk();
	struct iour_filter *f;
	uint64_t *vals = malloc(6000 * sizeof(*vals));
	struct iour_cmp c = { .sz = sizeof(c), .field = IOUR_FIELD_USER_DATA,
			      .op = IOUR_CMP_IN_SET, .set = vals, .set_len = 6000 };
	struct iour_plan *pl;
	size_t i;

	cr_assert_not_null(vals);
	for (i = 0; i < 6000; i++)
		vals[i] = i * 7919 + 13;
	cr_assert_eq(iour_filter__new(NULL, &f), 0);
	cr_expect_eq(iour_policy__set_filter(NULL, f), -EINVAL);
	cr_assert_eq(iour_filter__add_rule(f, 0, IOUR_ALLOW, &c, 1), 0);
	cr_expect_eq(iour_policy__set_filter(p, f), -IOUR_ERRNO__PROG_TOO_LARGE);
	/* Unchanged on error: SOCKET still has its program. */
	pl = plan(p, 4);
	cr_expect_eq(iour_plan__step_cnt(pl), 3);
	iour_plan__free(pl);
	cr_expect_eq(iour_policy__set_filter(p, NULL), 0);
	pl = plan(p, 4);
	cr_expect_eq(iour_plan__step_cnt(pl), 2, "no filter step once removed");
	iour_plan__free(pl);
	iour_filter__free(f);
	free(vals);
	iour_policy__free(p);
}

Test(policy_api, attributes_and_bounds)
{
	struct iour_policy *p = mk();
	uint32_t a, lo, hi, def, v;
	static const uint32_t maxes[] = { 0, 1, 2, 1, 1, 1, 2, 1 };
	/* COMPANION defaults to ENOSYS: a task target degrades closed. */
	static const uint32_t defs[] = { 0, 0, 0, 1, 0, 0, 1, 0 };

	for (a = IOUR_POLICY_ATTR__MIN + 1; a < IOUR_POLICY_ATTR__MAX; a++) {
		cr_assert_eq(iour_policy_attr_bounds(a, &lo, &hi, &def), 0);
		cr_expect_eq(lo, 0);
		cr_expect_eq(hi, maxes[a], "attr %u max", a);
		cr_expect_eq(def, defs[a], "attr %u default", a);
		cr_assert_eq(iour_policy__get_attr(p, a, &v), 0);
		cr_expect_eq(v, def, "a new policy holds the default of attr %u", a);
		cr_expect_eq(iour_policy__set_attr(p, a, hi), 0);
		cr_assert_eq(iour_policy__get_attr(p, a, &v), 0);
		cr_expect_eq(v, hi);
		cr_expect_eq(iour_policy__set_attr(p, a, hi + 1), -ERANGE);
		cr_expect_eq(iour_policy__set_attr(p, a, UINT32_MAX), -ERANGE);
		cr_assert_eq(iour_policy__get_attr(p, a, &v), 0);
		cr_expect_eq(v, hi, "a refused value changes nothing");
		cr_expect_eq(iour_policy_attr_bounds(a, NULL, NULL, NULL), 0);
	}
	cr_expect_eq(iour_policy_attr_bounds(IOUR_POLICY_ATTR__MIN, &lo, &hi, &def), -EINVAL);
	cr_expect_eq(iour_policy_attr_bounds(IOUR_POLICY_ATTR__MAX, &lo, &hi, &def), -EINVAL);
	cr_expect_eq(iour_policy__set_attr(NULL, IOUR_POLICY_ATTR_TARGET, 0), -EINVAL);
	cr_expect_eq(iour_policy__set_attr(p, 0, 0), -EINVAL);
	cr_expect_eq(iour_policy__set_attr(p, 99, 0), -EINVAL);
	cr_expect_eq(iour_policy__get_attr(NULL, 1, &v), -EINVAL);
	cr_expect_eq(iour_policy__get_attr(p, 1, NULL), -EINVAL);
	cr_expect_eq(iour_policy__get_attr(p, 8, &v), -EINVAL);
	iour_policy__free(p);
}

Test(policy_api, plan_errors)
{
	struct iour_policy *p = mk();
	struct iour_plan *pl = NULL;
	struct iour_features f;

	cr_expect_eq(iour_policy__plan(NULL, NULL, &pl), -EINVAL);
	cr_expect_eq(iour_policy__plan(p, NULL, NULL), -EINVAL);
	{
		IOUR_OPTS(iour_plan_opts, o, .flags = IOUR_PLAN_FORCE_LEVEL, .level = 6);
		cr_expect_eq(iour_policy__plan(p, &o, &pl), -EINVAL);
	}
	{
		/* the first unknown flag (IOUR_PLAN_BROKERED is bit 1) */
		IOUR_OPTS(iour_plan_opts, o, .flags = 4);
		cr_expect_eq(iour_policy__plan(p, &o, &pl), -EINVAL);
	}
	{
		IOUR_OPTS(iour_plan_opts, o, .level = 3);
		cr_expect_eq(iour_policy__plan(p, &o, &pl), -EINVAL, "a level needs the flag");
	}
	{
		struct iour_plan_opts o = { .sz = 2 };
		cr_expect_eq(iour_policy__plan(p, &o, &pl), -EINVAL);
	}
	{
		struct {
			struct iour_plan_opts o;
			uint32_t x[2];
		} b;

		memset(&b, 0, sizeof(b));
		b.o.sz = sizeof(b);
		b.x[1] = 7;
		cr_expect_eq(iour_policy__plan(p, &b.o, &pl), -E2BIG);
	}
	memset(&f, 0, sizeof(f));
	f.sz = sizeof(f);
	{
		IOUR_OPTS(iour_plan_opts, o, .flags = IOUR_PLAN_FORCE_LEVEL, .level = 4,
			  .features = &f);
		cr_expect_eq(iour_policy__plan(p, &o, &pl), -EINVAL);
	}
	f.sz = 8;
	{
		IOUR_OPTS(iour_plan_opts, o, .features = &f);
		cr_expect_eq(iour_policy__plan(p, &o, &pl), -EINVAL);
	}
	f.sz = sizeof(f);
	f.op_last = 300;
	{
		IOUR_OPTS(iour_plan_opts, o, .features = &f);
		cr_expect_eq(iour_policy__plan(p, &o, &pl), -EINVAL);
		f.op_last = 49;
		f.reg_last = 5;
		cr_expect_eq(iour_policy__plan(p, &o, &pl), -EINVAL);
		f.op_last = f.reg_last = 0;
	}
	/* A kernel without io_uring (all zero features): a plan that says so;
	 * by default the companion still blocks io_uring_setup (degrade
	 * closed: io_uring may become usable later, e.g. by sysctl). */
	f.sz = sizeof(f);
	{
		IOUR_OPTS(iour_plan_opts, o, .features = &f);
		const struct iour_report *r;

		cr_assert_eq(iour_policy__plan(p, &o, &pl), 0);
		r = iour_plan__report(pl);
		cr_expect_eq(iour_report__status(r), IOUR_STATUS_PARTIALLY);
		cr_expect_eq(iour_report__mechanism(r), IOUR_MECH_COMPANION);
		cr_expect_geq(iour_plan__step_cnt(pl), 1); /* no_new_privs, companion */
		iour_plan__free(pl);
		cr_assert_eq(iour_policy__set_attr(p, IOUR_POLICY_ATTR_COMPANION,
						   IOUR_POLICY_COMPANION_NONE),
			     0);
		cr_assert_eq(iour_policy__plan(p, &o, &pl), 0);
		r = iour_plan__report(pl);
		cr_expect_eq(iour_report__status(r), IOUR_STATUS_NOT_ENFORCED);
		cr_expect_eq(iour_report__mechanism(r), IOUR_MECH_NONE);
		cr_expect_eq(iour_plan__step_cnt(pl), 0);
		iour_plan__free(pl);
		cr_assert_eq(iour_policy__set_attr(p, IOUR_POLICY_ATTR_COMPANION,
						   IOUR_POLICY_COMPANION_ENOSYS),
			     0);
	}
	/* NNP_KEEP with known missing privileges: refused at planning. */
	f.level = 4;
	f.io_uring = f.ring_restrictions = IOUR_AVAIL_YES;
	f.op_last = 65;
	f.reg_last = 38;
	f.split_gates = 1;
	f.task_restrictions = f.bpf_task = IOUR_AVAIL_NO_PRIV;
	f.bpf_ring = IOUR_AVAIL_YES;
	f.pdu_socket = 12;
	cr_assert_eq(iour_policy__set_attr(p, IOUR_POLICY_ATTR_NNP, IOUR_POLICY_NNP_KEEP), 0);
	{
		IOUR_OPTS(iour_plan_opts, o, .features = &f);
		pl = NULL;
		cr_expect_eq(iour_policy__plan(p, &o, &pl), -EACCES);
		cr_expect_null(pl);
		/* Already restricted without task filters: -EPERM. */
		f.task_restrictions = IOUR_AVAIL_RESTRICTED;
		f.bpf_task = IOUR_AVAIL_NO;
		cr_expect_eq(iour_policy__plan(p, &o, &pl), -EPERM);
		/* A ring whose task set would be inherited, no ring filters. */
		cr_assert_eq(iour_policy__set_attr(p, IOUR_POLICY_ATTR_TARGET,
						   IOUR_POLICY_TARGET_RING), 0);
		f.ring_restrictions = IOUR_AVAIL_RESTRICTED;
		f.bpf_ring = IOUR_AVAIL_NO;
		cr_expect_eq(iour_policy__plan(p, &o, &pl), -EBUSY);
	}
	iour_policy__free(p);
}

Test(policy_api, plan_getters_errors_and_sizing)
{
	struct iour_policy *p = mk();
	struct iour_plan *pl = plan(p, 4);
	struct iour_plan_step s = { .sz = sizeof(s) };
	struct iour_plan_info info = { .sz = sizeof(info) };
	struct iour_insn ins[8];
	uint8_t buf[256];
	size_t len, cnt;
	char small[8];
	int n;

	n = iour_plan__step_cnt(pl);
	cr_assert_eq(n, 3);
	cr_expect_eq(iour_plan__step_cnt(NULL), -EINVAL);
	cr_expect_eq(iour_plan__step(NULL, 0, &s), -EINVAL);
	cr_expect_eq(iour_plan__step(pl, 0, NULL), -EINVAL);
	cr_expect_eq(iour_plan__step(pl, (size_t)n, &s), -ERANGE);
	{
		struct iour_plan_step t = { .sz = 4 };
		cr_expect_eq(iour_plan__step(pl, 0, &t), -EINVAL);
	}
	/* A caller that knows only the first fields gets only those. */
	{
		struct {
			struct iour_plan_step s;
			uint32_t guard;
		} g;

		memset(&g, 0xee, sizeof(g));
		g.s.sz = offsetof(struct iour_plan_step, op) + sizeof(uint32_t);
		cr_assert_eq(iour_plan__step(pl, 2, &g.s), 0);
		cr_expect_eq(g.s.op, IOUR_STEP_BPF_FILTER);
		cr_expect_eq(g.s.call_op, 0xeeeeeeeeu, "field beyond sz untouched");
	}
	cr_expect_eq(iour_plan__info(NULL, &info), -EINVAL);
	cr_expect_eq(iour_plan__info(pl, NULL), -EINVAL);
	{
		struct iour_plan_info t = { .sz = 3 };
		cr_expect_eq(iour_plan__info(pl, &t), -EINVAL);
	}
	cr_assert_eq(iour_plan__info(pl, &info), 0);
	cr_expect_eq(info.level, 4);
	/* Argument bytes: two-call sizing. */
	cr_expect_eq(iour_plan__step_arg(NULL, 0, buf, &len), -EINVAL);
	cr_expect_eq(iour_plan__step_arg(pl, 0, buf, NULL), -EINVAL);
	cr_expect_eq(iour_plan__step_arg(pl, 9, NULL, &len), -ERANGE);
	cr_assert_eq(iour_plan__step_arg(pl, 2, NULL, &len), 0);
	cr_expect_eq(len, 72);
	len = 71;
	cr_expect_eq(iour_plan__step_arg(pl, 2, buf, &len), -ERANGE);
	cr_expect_eq(len, 72);
	len = sizeof(buf);
	cr_expect_eq(iour_plan__step_arg(pl, 2, buf, &len), 0);
	cr_expect_eq(len, 72);
	cr_assert_eq(iour_plan__step_arg(pl, 0, NULL, &len), 0);
	cr_expect_eq(len, 0, "the NNP step has no argument");
	/* Programs. */
	cr_expect_eq(iour_plan__step_insns(NULL, 2, ins, &cnt), -EINVAL);
	cr_expect_eq(iour_plan__step_insns(pl, 2, ins, NULL), -EINVAL);
	cr_expect_eq(iour_plan__step_insns(pl, 3, NULL, &cnt), -ERANGE);
	cr_assert_eq(iour_plan__step_insns(pl, 2, NULL, &cnt), 0);
	cr_expect_eq(cnt, 4);
	cnt = 3;
	cr_expect_eq(iour_plan__step_insns(pl, 2, ins, &cnt), -ERANGE);
	cr_expect_eq(cnt, 4);
	cnt = 8;
	cr_assert_eq(iour_plan__step_insns(pl, 2, ins, &cnt), 0);
	cr_expect(memcmp(ins, inet_only, sizeof(inet_only)) == 0);
	cr_assert_eq(iour_plan__step_insns(pl, 1, NULL, &cnt), 0);
	cr_expect_eq(cnt, 0);
	/* The dry run. */
	cr_expect_eq(iour_plan__describe(NULL, NULL, &len), -EINVAL);
	cr_expect_eq(iour_plan__describe(pl, NULL, NULL), -EINVAL);
	cr_assert_eq(iour_plan__describe(pl, NULL, &len), 0);
	cr_expect_gt(len, 100);
	{
		size_t need = len, l2 = sizeof(small);
		char *t = malloc(need);

		memset(small, 'x', sizeof(small));
		cr_expect_eq(iour_plan__describe(pl, small, &l2), -ERANGE);
		cr_expect_eq(l2, need);
		cr_expect_eq(small[0], 'x', "a small buffer is untouched");
		l2 = need;
		cr_assert_eq(iour_plan__describe(pl, t, &l2), 0);
		cr_expect_eq(strlen(t) + 1, need);
		cr_expect(strstr(t, "IORING_REGISTER_BPF_FILTER") && strstr(t, "ld socket.family"));
		cr_expect(strstr(t, "SZ_STRICT") && strstr(t, "forced"));
		free(t);
	}
	cr_expect_null(iour_plan__report(NULL));
	iour_plan__free(pl);
	iour_policy__free(p);
}

Test(policy_api, report_getters_errors)
{
	struct iour_policy *p = mk();
	struct iour_plan *pl = plan(p, 2);
	const struct iour_report *r = iour_plan__report(pl);
	struct iour_decision d = { .sz = sizeof(d) };
	uint32_t done = 9, total = 9;
	int32_t err = 9;
	size_t len;
	int n, i;

	cr_expect_eq(iour_report__status(NULL), -EINVAL);
	cr_expect_eq(iour_report__mechanism(NULL), -EINVAL);
	cr_expect_eq(iour_report__flags(NULL), -EINVAL);
	cr_expect_eq(iour_report__steps(NULL, &done, &total), -EINVAL);
	cr_expect_eq(iour_report__error(NULL, &err), -EINVAL);
	cr_expect_eq(iour_report__error(r, NULL), -EINVAL);
	cr_expect_eq(iour_report__threads(NULL), -EINVAL);
	cr_expect_eq(iour_report__decision_cnt(NULL), -EINVAL);
	cr_expect_eq(iour_report__decision(NULL, 0, &d), -EINVAL);
	cr_expect_eq(iour_report__decision(r, 0, NULL), -EINVAL);
	cr_expect_eq(iour_report__describe(NULL, NULL, &len), -EINVAL);
	cr_expect_eq(iour_report__describe(r, NULL, NULL), -EINVAL);
	{
		struct iour_decision t = { .sz = 2 };
		cr_expect_eq(iour_report__decision(r, 0, &t), -EINVAL);
	}
	n = iour_report__decision_cnt(r);
	cr_assert_gt(n, 0);
	cr_expect_eq(iour_report__decision(r, (size_t)n, &d), -ERANGE);
	for (i = 0; i < n; i++) {
		cr_assert_eq(iour_report__decision(r, (size_t)i, &d), 0);
		cr_expect_not_null(d.text);
		cr_expect(d.kind >= IOUR_DECISION_DROPPED && d.kind <= IOUR_DECISION_FAILED);
	}
	cr_assert_eq(iour_report__steps(r, &done, &total), 0);
	cr_expect_eq(done, 0);
	cr_expect_eq(total, (uint32_t)iour_plan__step_cnt(pl));
	cr_expect_eq(iour_report__steps(r, NULL, NULL), 0);
	cr_assert_eq(iour_report__error(r, &err), 0);
	cr_expect_eq(err, 0);
	cr_expect_eq(iour_report__threads(r), 0);
	cr_expect(iour_report__flags(r) & IOUR_REPORT_PLANNED);
	cr_assert_eq(iour_report__describe(r, NULL, &len), 0);
	{
		char *t = malloc(len), tiny[4];
		size_t l2 = sizeof(tiny);

		cr_expect_eq(iour_report__describe(r, tiny, &l2), -ERANGE);
		cr_expect_eq(l2, len);
		cr_assert_eq(iour_report__describe(r, t, &len), 0);
		cr_expect(strstr(t, "status: partially enforced") != NULL, "%s", t);
		free(t);
	}
	cr_expect_str_eq(iour_status_str(IOUR_STATUS_FULLY), "fully enforced");
	cr_expect_str_eq(iour_status_str(IOUR_STATUS_PARTIALLY), "partially enforced");
	cr_expect_str_eq(iour_status_str(IOUR_STATUS_NOT_ENFORCED), "not enforced");
	cr_expect_str_eq(iour_status_str(-1), "unknown");
	cr_expect_str_eq(iour_status_str(3), "unknown");
	iour_plan__free(pl);
	iour_policy__free(p);
}

/* The classic part comes back as an independent copy equal to what was
 * set; no classic part gives NULL; bad arguments -EINVAL. */
Test(policy_api, get_ruleset)
{
	struct iour_ruleset *rs, *got = (struct iour_ruleset *)1;
	struct iour_policy *p;
	uint32_t a, r;

	cr_assert_eq(iour_policy__new(NULL, &p), 0);
	cr_expect_eq(iour_policy__get_ruleset(NULL, &got), -EINVAL);
	cr_expect_eq(iour_policy__get_ruleset(p, NULL), -EINVAL);
	cr_expect_eq(iour_policy__get_ruleset(p, &got), 0);
	cr_expect_null(got, "a policy without a classic part gave a set");

	cr_assert_eq(iour_ruleset__new(NULL, &rs), 0);
	cr_assert_eq(iour_ruleset__allow_sqe_op(rs, IOUR_OP_READ), 0);
	cr_assert_eq(iour_ruleset__allow_register_op_name(rs, "REGISTER_FILES"), 0);
	cr_assert_eq(iour_ruleset__set_sqe_flags(rs, IOUR_SQE_FIXED_FILE, IOUR_SQE_FIXED_FILE), 0);
	cr_assert_eq(iour_policy__set_ruleset(p, rs), 0);
	cr_assert_eq(iour_ruleset__allow_sqe_op(rs, IOUR_OP_WRITE), 0); /* after: not in p */

	cr_assert_eq(iour_policy__get_ruleset(p, &got), 0);
	cr_assert_not_null(got);
	for (uint32_t op = 0; op < (uint32_t)iour_opcode_last(UINT32_MAX); op++)
		cr_expect_eq(iour_ruleset__sqe_op_allowed(got, op), op == IOUR_OP_READ,
			     "opcode %u", op);
	for (uint32_t op = 0; op < (uint32_t)iour_register_op_last(UINT32_MAX); op++)
		cr_expect_eq(iour_ruleset__register_op_allowed(got, op),
			     (int)op == iour_register_op_from_name("REGISTER_FILES"),
			     "register opcode %u", op);
	cr_expect_eq(iour_ruleset__sqe_flags(got, &a, &r), 1);
	cr_expect_eq(a, IOUR_SQE_FIXED_FILE);
	cr_expect_eq(r, IOUR_SQE_FIXED_FILE);

	/* The copy is the caller's: changing it leaves the policy alone. */
	cr_assert_eq(iour_ruleset__allow_sqe_op(got, IOUR_OP_OPENAT), 0);
	iour_ruleset__free(got);
	cr_assert_eq(iour_policy__get_ruleset(p, &got), 0);
	cr_expect_eq(iour_ruleset__sqe_op_allowed(got, IOUR_OP_OPENAT), 0);
	cr_expect_eq(iour_ruleset__sqe_op_allowed(got, IOUR_OP_WRITE), 0);
	iour_ruleset__free(got);

	cr_assert_eq(iour_policy__set_ruleset(p, NULL), 0);
	cr_expect_eq(iour_policy__get_ruleset(p, &got), 0);
	cr_expect_null(got);
	iour_ruleset__free(rs);
	iour_policy__free(p);
}

/* Every decision kind and reason has its own name; other values are
 * "invalid", never NULL.  The reason names are the enumerators' names in
 * lower case, taken here from the header by the preprocessor. */
Test(policy_api, decision_names)
{
#define R(x) { IOUR_REASON_##x, #x }
	static const struct {
		uint32_t v;
		const char *name;
	} reasons[] = {
		R(NONE),
		R(NO_IO_URING),
		R(NO_RING_RESTRICTIONS),
		R(NO_TASK_RESTRICTIONS),
		R(NO_FILTERS),
		R(NO_PAYLOAD),
		R(UNKNOWN_OPCODE),
		R(COMPANION),
		R(COMPAT_SOFT),
		R(COMPAT_HARD),
		R(THREADS),
		R(STEP_FAILED),
		R(ALREADY_RESTRICTED),
		R(EXISTING_RINGS),
		R(NOT_EXPRESSIBLE),
		R(NNP),
		R(RING_LEFT_DISABLED),
		R(SHADOWED),
		R(KERNEL_MISMATCH),
		R(FIXED_FILES),
		R(EFFECT_CLOSED),
		R(EFFECT_FILTERED),
		R(EFFECT_OPEN),
	};
#undef R
	char want[64];
	size_t i, j;

	cr_expect_str_eq(iour_decision_kind_str(IOUR_DECISION_DROPPED), "dropped");
	cr_expect_str_eq(iour_decision_kind_str(IOUR_DECISION_TIGHTENED), "tightened");
	cr_expect_str_eq(iour_decision_kind_str(IOUR_DECISION_LOOSENED), "loosened");
	cr_expect_str_eq(iour_decision_kind_str(IOUR_DECISION_CLAMPED), "clamped");
	cr_expect_str_eq(iour_decision_kind_str(IOUR_DECISION_NEGOTIATED), "negotiated");
	cr_expect_str_eq(iour_decision_kind_str(IOUR_DECISION_NOTE), "note");
	cr_expect_str_eq(iour_decision_kind_str(IOUR_DECISION_FAILED), "failed");
	cr_expect_str_eq(iour_decision_kind_str(0), "invalid");
	cr_expect_str_eq(iour_decision_kind_str(IOUR_DECISION_FAILED + 1), "invalid");
	cr_expect_str_eq(iour_decision_kind_str(UINT32_MAX), "invalid");

	for (i = 0; i < sizeof(reasons) / sizeof(reasons[0]); i++) {
		for (j = 0; reasons[i].name[j] && j + 1 < sizeof(want); j++)
			want[j] = (char)tolower((unsigned char)reasons[i].name[j]);
		want[j] = 0;
		cr_expect_str_eq(iour_reason_str(reasons[i].v), want);
		cr_expect_eq(reasons[i].v, i, "reason %s is not %zu", reasons[i].name, i);
	}
	cr_expect_str_eq(iour_reason_str(IOUR_REASON_EFFECT_OPEN + 1), "invalid");
	cr_expect_str_eq(iour_reason_str(UINT32_MAX), "invalid");
}

/* Executor input errors: nothing reaches the kernel. */
Test(policy_api, executor_errors)
{
	struct iour_policy *p = mk();
	struct iour_plan *task4 = plan(p, 4), *ring;
	struct iour_report *rep = (struct iour_report *)1;
	int fd = 77;

	cr_assert_eq(iour_policy__set_attr(p, IOUR_POLICY_ATTR_TARGET, IOUR_POLICY_TARGET_RING), 0);
	ring = plan(p, 4);
	cr_expect_eq(iour_plan__apply_task(NULL, NULL, &rep), -EINVAL);
	cr_expect_null(rep, "the report pointer is cleared");
	cr_expect_eq(iour_plan__apply_task(ring, NULL, &rep), -EINVAL, "a ring plan");
	{
		IOUR_OPTS(iour_apply_opts, o, .flags = IOUR_APPLY_ALLOW_PTRACE << 1);
		IOUR_OPTS(iour_apply_opts, allow, .flags = IOUR_APPLY_ALLOW_PTRACE);
		cr_expect_eq(iour_plan__apply_task(task4, &o, &rep), -EINVAL);
		/* ALLOW_PTRACE is apply_task's: the ring executors refuse it */
		cr_expect_eq(iour_plan__apply_ring(ring, 3, &allow, &rep), -EINVAL);
		cr_expect_eq(iour_plan__create_ring(ring, 8, NULL, &allow, &fd, &rep), -EINVAL);
		cr_expect_eq(iour_plan__apply_ring(ring, 3, &o, &rep), -EINVAL);
		cr_expect_eq(iour_plan__create_ring(ring, 8, NULL, &o, &fd, &rep), -EINVAL);
	}
	{
		struct iour_apply_opts o = { .sz = 1 };
		cr_expect_eq(iour_plan__apply_task(task4, &o, &rep), -EINVAL);
	}
	{
		struct {
			struct iour_apply_opts o;
			uint64_t x;
		} b = { { sizeof(b), 0 }, 5 };
		cr_expect_eq(iour_plan__apply_task(task4, &b.o, &rep), -E2BIG);
		cr_expect_eq(iour_plan__apply_ring(ring, 3, &b.o, &rep), -E2BIG);
	}
	cr_expect_null(rep);
	cr_expect_eq(iour_plan__apply_ring(NULL, 3, NULL, &rep), -EINVAL);
	cr_expect_eq(iour_plan__apply_ring(ring, -1, NULL, &rep), -EINVAL);
	cr_expect_eq(iour_plan__apply_ring(task4, 3, NULL, &rep), -EINVAL,
		     "a 7.0 task plan has no ring part");
	cr_expect_eq(iour_plan__create_ring(NULL, 8, NULL, NULL, &fd, &rep), -EINVAL);
	cr_expect_eq(iour_plan__create_ring(ring, 8, NULL, NULL, NULL, &rep), -EINVAL);
	cr_expect_eq(iour_plan__create_ring(ring, 0, NULL, NULL, &fd, &rep), -EINVAL);
	cr_expect_eq(iour_plan__create_ring(task4, 8, NULL, NULL, &fd, &rep), -EINVAL);
	cr_expect_eq(fd, 77, "no fd written on error");
	cr_expect_null(rep);
	iour_plan__free(task4);
	iour_plan__free(ring);
	iour_policy__free(p);
}

/* What each feature level makes of one policy, in all three targets and
 * compatibility levels (dry runs only). */
Test(policy_api, levels_and_compat_matrix)
{
	struct iour_policy *p = mk();
	uint32_t level, target, compat;
	size_t n = 0;

	for (target = 0; target < 2; target++)
		for (compat = 0; compat < 3; compat++)
			for (level = 0; level <= 5; level++) {
				struct iour_plan *pl;
				const struct iour_report *r;
				struct iour_plan_info info = { .sz = sizeof(info) };
				int st;

				cr_assert_eq(iour_policy__set_attr(p, IOUR_POLICY_ATTR_TARGET, target), 0);
				cr_assert_eq(iour_policy__set_attr(p, IOUR_POLICY_ATTR_COMPAT, compat), 0);
				pl = plan(p, level);
				r = iour_plan__report(pl);
				st = iour_report__status(r);
				cr_assert_eq(iour_plan__info(pl, &info), 0);
				/* Exactly enforceable only with filters (level 4+). */
				if (level >= 4) {
					cr_expect_eq(st, IOUR_STATUS_FULLY, "level %u target %u", level,
						     target);
				} else if (compat == IOUR_POLICY_COMPAT_BEST_EFFORT) {
					/* a task: the default companion blocks setup */
					cr_expect_eq(st,
						     level >= 2 || target == IOUR_POLICY_TARGET_TASK ?
							     IOUR_STATUS_PARTIALLY :
							     IOUR_STATUS_NOT_ENFORCED,
						     "level %u target %u", level, target);
				} else {
					cr_expect_eq(st, IOUR_STATUS_NOT_ENFORCED);
					cr_expect_eq(!!(info.flags & IOUR_PLAN_INFO_REFUSED),
						     compat == IOUR_POLICY_COMPAT_HARD);
					cr_expect_eq(iour_plan__step_cnt(pl),
						     compat == IOUR_POLICY_COMPAT_SOFT && level >= 2 ? 1 : 0);
				}
				/* Never "fully" for a task on a kernel without task
				 * restrictions. */
				if (target == IOUR_POLICY_TARGET_TASK && level < 4)
					cr_expect_neq(st, IOUR_STATUS_FULLY);
				n++;
				iour_plan__free(pl);
			}
	cr_log_info("%zu plans compiled", n);
	iour_policy__free(p);
}

/* The dry-run example prints a plan and applies nothing. */
Test(policy_api, example_iour_plan_dry_run)
{
	const char *dir = getenv("IOUR_EXAMPLES_DIR");
	char cmd[512], out[8192];
	size_t n;
	FILE *f;

	if (!dir)
		cr_skip_test("IOUR_EXAMPLES_DIR not set (run through make test-run)");
	snprintf(cmd, sizeof(cmd), "%s/iour-plan -l 5 -r NOP READ SOCKET:inet", dir);
	f = popen(cmd, "r");
	cr_assert_not_null(f);
	n = fread(out, 1, sizeof(out) - 1, f);
	out[n] = '\0';
	cr_expect_eq(pclose(f), 0);
	cr_expect(strstr(out, "plan for the ring, on Linux 7.2 (forced level 5)") != NULL, "%s", out);
	cr_expect(strstr(out, "IORING_REGISTER_ENABLE_RINGS") != NULL);
	cr_expect(strstr(out, "status: fully enforced") != NULL);
	snprintf(cmd, sizeof(cmd), "%s/iour-plan -l 2 NOSUCHOP 2>&1", dir);
	f = popen(cmd, "r");
	cr_assert_not_null(f);
	n = fread(out, 1, sizeof(out) - 1, f);
	out[n] = '\0';
	cr_expect_neq(pclose(f), 0);
	cr_expect(strstr(out, "NOSUCHOP") != NULL, "%s", out);
}
