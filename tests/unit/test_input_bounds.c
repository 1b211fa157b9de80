/* SPDX-License-Identifier: MIT */
/*
 * Bounds on what callers hand in: an options struct claiming a huge `sz`
 * is refused (-E2BIG) before the library reads past the caller's memory,
 * and a described kernel (struct iour_features given to planning) with
 * out-of-range fields is refused (-EINVAL), never clamped into another
 * kernel.
 *
 * Each struct sits at the very end of a readable page followed by an
 * inaccessible one, so a read past it kills the process even without a
 * sanitizer.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "child.h"
#include "iouring_restrict/iouring_restrict.h"

#define HUGE_SZ ((size_t)1 << 30)

static void *guard_base;
static size_t page;

/* A zeroed struct of `size` bytes ending at a guard page, sz = HUGE_SZ. */
static void *huge(size_t size)
{
	char *p;

	if (!guard_base) {
		page = (size_t)sysconf(_SC_PAGESIZE);
		guard_base = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		cr_assert_neq(guard_base, MAP_FAILED);
		cr_assert_eq(mprotect((char *)guard_base + page, page, PROT_NONE), 0);
	}
	memset(guard_base, 0, page);
	p = (char *)guard_base + page - size;
	*(size_t *)(void *)p = HUGE_SZ;
	return p;
}

Test(input_bounds, huge_opts_sz_is_e2big_without_reading)
{
	struct iour_features f = { .sz = sizeof(f) };
	struct iour_ruleset *rs = NULL;
	struct iour_policy *p = NULL;
	struct iour_filter *flt = NULL;
	struct iour_plan *pl = NULL;
	struct iour_prog *prog = NULL;
	struct iour_insn insns[16];
	size_t len = 0;

	cr_assert_eq(iour_probe(huge(sizeof(struct iour_probe_opts)), &f), -E2BIG);
	cr_assert_eq(iour_ruleset__new(huge(sizeof(struct iour_ruleset_opts)), &rs), -E2BIG);
	cr_assert_null(rs);
	cr_assert_eq(iour_ruleset__new(NULL, &rs), 0);
	cr_assert_eq(iour_ruleset__export(rs, huge(sizeof(struct iour_export_opts)), NULL, &len),
		     -E2BIG);
	cr_assert_eq(iour_policy__new(huge(sizeof(struct iour_policy_opts)), &p), -E2BIG);
	cr_assert_null(p);
	cr_assert_eq(iour_policy__new(NULL, &p), 0);
	cr_assert_eq(iour_policy__plan(p, huge(sizeof(struct iour_plan_opts)), &pl), -E2BIG);
	cr_assert_null(pl);
	cr_assert_eq(iour_filter__new(huge(sizeof(struct iour_filter_opts)), &flt), -E2BIG);
	cr_assert_null(flt);
	cr_assert_eq(iour_filter__new(NULL, &flt), 0);
	cr_assert_eq(iour_filter__add_rule(flt, 0, IOUR_ALLOW, huge(sizeof(struct iour_cmp)), 1),
		     -E2BIG);
	cr_assert_eq(iour_filter__set_default(flt, 0, IOUR_ALLOW), 0);
	cr_assert_eq(iour_filter__compile(flt, 0, huge(sizeof(struct iour_compile_opts)), &prog),
		     -E2BIG);
	cr_assert_null(prog);
	cr_assert_eq(iour_companion_program(huge(sizeof(struct iour_companion_opts)), insns, 16),
		     -E2BIG);
	iour_filter__free(flt);
	iour_policy__free(p);
	iour_ruleset__free(rs);
}

/* Calls that change the task or make rings: in a child, so that a broken
 * check cannot touch the test process. */
static int huge_apply_child(void *arg, struct child_msg *m)
{
	struct iour_policy *p = NULL;
	struct iour_plan *pl = NULL;
	struct iour_ruleset *rs = NULL;
	struct iour_report *rep = NULL;
	struct iour_verify_req req = { .sz = sizeof(req), .opcode = 0, .expect = IOUR_EXPECT_ALLOW };
	struct iour_verify_result res;
	int fd = -1;

	(void)arg;
	memset(&res, 0, sizeof(res));
	CHK(m, iour_policy__new(NULL, &p) == 0);
	CHK(m, iour_policy__plan(p, NULL, &pl) == 0);
	CHK(m, iour_plan__apply_task(pl, huge(sizeof(struct iour_apply_opts)), &rep) == -E2BIG);
	iour_report__free(rep);
	rep = NULL;
	CHK(m, iour_plan__create_ring(pl, 4, NULL, huge(sizeof(struct iour_apply_opts)), &fd,
				      &rep) == -E2BIG);
	CHK(m, fd < 0);
	iour_report__free(rep);
	CHK(m, iour_ruleset__new(NULL, &rs) == 0);
	CHK(m, iour_ring_create(4, NULL, rs, huge(sizeof(struct iour_ring_create_opts)), &fd) ==
		       -E2BIG);
	CHK(m, fd < 0);
	CHK(m, iour_ring_apply(0, rs, huge(sizeof(struct iour_ring_apply_opts))) == -E2BIG);
	CHK(m, iour_companion_install(huge(sizeof(struct iour_companion_opts))) == -E2BIG);
	CHK(m, iour_verify(&req, 1, &res, huge(sizeof(struct iour_verify_opts))) == -E2BIG);
	iour_ruleset__free(rs);
	iour_plan__free(pl);
	iour_policy__free(p);
	return 0;
}

Test(input_bounds, huge_apply_opts_sz_is_e2big_without_reading)
{
	struct child_msg m;

	cr_assert_eq(child_run(huge_apply_child, NULL, &m), 0, "%s", m.text);
}

/* The largest accepted size still works: IOUR_OPTS_MAX_SZ with zero tail. */
Test(input_bounds, opts_sz_at_the_cap_is_accepted)
{
	static uint64_t buf[IOUR_OPTS_MAX_SZ / 8 + 1];
	struct iour_features f = { .sz = sizeof(f) };
	struct iour_probe_opts *o = (struct iour_probe_opts *)(void *)buf;

	o->sz = IOUR_OPTS_MAX_SZ;
	cr_assert_eq(iour_probe(o, &f), 0);
	o->sz = IOUR_OPTS_MAX_SZ + 1;
	cr_assert_eq(iour_probe(o, &f), -E2BIG);
}

/* ---- described kernels ---------------------------------------------- */

static struct iour_policy *ring_policy(void)
{
	struct iour_ruleset *rs;
	struct iour_policy *p;

	cr_assert_eq(iour_ruleset__new(NULL, &rs), 0);
	cr_assert_eq(iour_ruleset__allow_sqe_op(rs, 0), 0);
	cr_assert_eq(iour_ruleset__set_sqe_flags(rs, 0, 0), 0);
	cr_assert_eq(iour_policy__new(NULL, &p), 0);
	cr_assert_eq(iour_policy__set_ruleset(p, rs), 0);
	iour_ruleset__free(rs);
	return p;
}

/* A valid 6.18-class kernel, as iour_probe() describes it. */
static struct iour_features kernel_6_18(void)
{
	struct iour_features f;

	memset(&f, 0, sizeof(f));
	f.sz = sizeof(f);
	f.level = f.kernel_level = IOUR_LEVEL_QUERY;
	f.io_uring = f.ring_restrictions = f.query = f.probe = f.blind_register = IOUR_AVAIL_YES;
	f.op_last = 63;
	f.reg_last = 36;
	f.limits_source = IOUR_LIMITS_QUERY;
	f.sysctl_disabled = 0;
	f.sysctl_group = -1;
	f.seccomp_mode = 0;
	f.no_new_privs = 0;
	return f;
}

static int plan_for(const struct iour_policy *p, const struct iour_features *f)
{
	IOUR_OPTS(iour_plan_opts, o, .features = f);
	struct iour_plan *pl = NULL;
	int rc = iour_policy__plan(p, &o, &pl);

	if (rc)
		cr_assert_null(pl);
	iour_plan__free(pl);
	return rc;
}

Test(input_bounds, out_of_range_features_are_refused)
{
	struct iour_policy *p = ring_policy();
	struct iour_features f = kernel_6_18();
	struct {
		const char *what;
		size_t off, size;
		int64_t bad;
	} cases[] = {
#define C(FIELD, BAD) \
	{ #FIELD "=" #BAD, offsetof(struct iour_features, FIELD), sizeof(f.FIELD), BAD }
		C(level, 99),
		C(level, IOUR_LEVEL_MAX + 1),
		C(kernel_level, 6),
		C(flags, 1 << 6),
		C(io_uring, 5),
		C(ring_restrictions, 77),
		C(query, 5),
		C(probe, 5),
		C(blind_register, 5),
		C(task_restrictions, 5),
		C(bpf_ring, 5),
		C(bpf_task, 5),
		C(limits_source, 4),
		C(split_gates, 2),
		C(pdu_socket, 256 + 12),
		C(pdu_openat, 256 + 24),
		C(pdu_openat2, 256),
		C(pdu_connect, 256 + 24),
		C(no_new_privs, 2),
		C(no_new_privs, -2),
		C(seccomp_mode, 3),
		C(sysctl_disabled, 3),
#undef C
	};
	size_t i;

	cr_assert_eq(plan_for(p, &f), 0, "the valid description plans");
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct iour_features b = f;

		memcpy((char *)&b + cases[i].off, &cases[i].bad, cases[i].size);
		cr_expect_eq(plan_for(p, &b), -EINVAL, "%s was accepted", cases[i].what);
	}
	iour_policy__free(p);
}

Test(input_bounds, huge_features_sz_is_e2big_without_reading)
{
	struct iour_policy *p = ring_policy();
	struct iour_features f = kernel_6_18();
	struct iour_features *g = huge(sizeof(*g));

	memcpy((char *)g + sizeof(size_t), (char *)&f + sizeof(size_t), sizeof(f) - sizeof(size_t));
	cr_assert_eq(plan_for(p, g), -E2BIG);
	g->sz = IOUR_OPTS_MAX_SZ + 1;
	cr_assert_eq(plan_for(p, g), -E2BIG);
	g->sz = sizeof(*g);
	cr_assert_eq(plan_for(p, g), 0);
	iour_policy__free(p);
}
