/* SPDX-License-Identifier: MIT */
/*
 * Large filter sets: merging of values, ranges and IPv4 prefixes into
 * ranges, and deny-lists split across stacked programs for one opcode
 * (lib/filter/filter_internal.h, iour__filter_compile_stack(); doc/design.md,
 * "Stacked filters").
 *
 * The verdict of a stack is the conjunction of its programs' verdicts
 * (doc/kernel.md, 4.6: every filter of an opcode runs, all must allow).
 * Each request is decided three ways and compared: this file's own
 * reference evaluation of the rules, the library's simulator
 * (iour_cbpf_run()) over every program of the stack, and the running
 * kernel's classic-BPF engine (tests/common/kernel_oracle.c) over the same
 * programs.  Splitting is forced with small instruction limits so that
 * small random rule lists give many programs.  IOUR_TEST_SEED reproduces
 * a run.
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "denylist.h"
#include "emukernel.h"
#include "filter/filter_internal.h"
#include "iouring_restrict/iouring_restrict.h"
#include "kernel_oracle.h"
#include "plan/planner.h"
#include "base/sys.h"
#include "uring_avail.h"

#define OP_CONNECT 16

/* ---- a tiny rule model: CONNECT rules over family, port and addr4 -------- */
struct trule {
	uint32_t verdict;
	uint32_t field; /* IOUR_FIELD_CONNECT_ADDR4 or _PORT */
	uint32_t op;    /* EQ, IN_SET, IN_RANGE, IN_PREFIX, NOT_IN_PREFIX */
	uint64_t value, arg;
	uint64_t *set;
	size_t set_len;
};

struct tpol {
	struct trule r[64];
	size_t n;
	uint32_t dflt;
};

struct treq {
	bool v4; /* AF_INET, else AF_INET6 to a non-mapped address */
	uint32_t addr;
	uint16_t port;
};

static uint64_t rng_state;

/* The simulator's verdict (return value). */
static uint32_t sim(const struct iour_insn *insns, size_t cnt, const uint8_t ctx[40])
{
	struct iour_sim_result r = { .sz = sizeof(r) };

	cr_assert_eq(iour_cbpf_run(insns, cnt, ctx, 40, &r), 0);
	return r.retval;
}

static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static void seed_rng(void)
{
	const char *s = getenv("IOUR_TEST_SEED");

	rng_state = s ? strtoull(s, NULL, 0) : 0x5eed1234abcdULL;
	if (!rng_state)
		rng_state = 1;
	cr_log_info("filter_stack seed 0x%llx", (unsigned long long)rng_state);
}

static bool rule_holds(const struct trule *r, const struct treq *q)
{
	uint64_t v;

	if (r->field == IOUR_FIELD_CONNECT_ADDR4) {
		if (!q->v4)
			return false; /* filter.h: holds only for IPv4 requests */
		v = q->addr;
	} else {
		v = q->port;
	}
	switch (r->op) {
	case IOUR_CMP_EQ:
		return v == r->value;
	case IOUR_CMP_IN_SET:
		for (size_t i = 0; i < r->set_len; i++)
			if (r->set[i] == v)
				return true;
		return false;
	case IOUR_CMP_IN_RANGE:
		return v >= r->value && v <= r->arg;
	case IOUR_CMP_IN_PREFIX:
	case IOUR_CMP_NOT_IN_PREFIX: {
		uint32_t m = r->arg ? (uint32_t)(UINT32_MAX << (32 - r->arg)) : 0;
		bool in = ((uint32_t)v & m) == ((uint32_t)r->value & m);

		return r->op == IOUR_CMP_IN_PREFIX ? in : !in;
	}
	default:
		cr_assert_fail("op %u", r->op);
	}
	return false;
}

static uint32_t ref_decide(const struct tpol *p, const struct treq *q)
{
	for (size_t i = 0; i < p->n; i++)
		if (rule_holds(&p->r[i], q))
			return p->r[i].verdict;
	return p->dflt;
}

static struct iour_filter *build(const struct tpol *p)
{
	IOUR_OPTS(iour_filter_opts, fo, .default_verdict = p->dflt);
	struct iour_filter *f = NULL;

	cr_assert_eq(iour_filter__new(&fo, &f), 0);
	for (size_t i = 0; i < p->n; i++) {
		const struct trule *r = &p->r[i];
		struct iour_cmp c = { .sz = sizeof(c), .field = r->field, .op = r->op, .value = r->value,
				      .arg = r->arg, .set = r->set, .set_len = r->set_len };
		int rc = iour_filter__add_rule(f, OP_CONNECT, r->verdict, &c, 1);

		cr_assert_eq(rc, 0, "rule %zu: %s", i, iour_errname(rc));
	}
	return f;
}

static void ctx_of(const struct treq *q, uint8_t ctx[40])
{
	cr_assert_eq(iour_ctx_generic(ctx, 40, OP_CONNECT, 0, 0), 0);
	if (q->v4) {
		struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(q->port) };

		a.sin_addr.s_addr = htonl(q->addr);
		cr_assert_eq(iour_ctx_connect(ctx, 40, &a, sizeof(a)), 0);
	} else {
		struct sockaddr_in6 a = { .sin6_family = AF_INET6, .sin6_port = htons(q->port) };

		a.sin6_addr.s6_addr[0] = 0x20;
		a.sin6_addr.s6_addr[1] = 0x01;
		memcpy(&a.sin6_addr.s6_addr[12], &q->addr, 4);
		cr_assert_eq(iour_ctx_connect(ctx, 40, &a, sizeof(a)), 0);
	}
}

/* The stack's verdict: all programs must allow (simulator and kernel). */
static uint32_t stack_decide(struct kernel_oracle *o, const struct iour_prog *head,
			     const uint8_t ctx[40])
{
	uint32_t all = IOUR_ALLOW;

	for (const struct iour_prog *p = head; p; p = p->next) {
		uint32_t v = sim(iour_prog__insns(p), iour_prog__insn_cnt(p), ctx);
		if (o) {
			int ker;

			cr_assert_eq(oracle_attach(o, iour_prog__insns(p), iour_prog__insn_cnt(p)), 0);
			ker = oracle_run(o, ctx, NULL);
			cr_assert_geq(ker, 0, "oracle: %d", ker);
			cr_assert_eq(ker != 0, v != 0, "kernel engine and simulator disagree");
		}
		if (!v)
			all = IOUR_DENY;
	}
	return all;
}

static size_t chain_len(const struct iour_prog *p, size_t *max_cnt)
{
	size_t n = 0;

	*max_cnt = 0;
	for (; p; p = p->next, n++)
		if (p->cnt > *max_cnt)
			*max_cnt = p->cnt;
	return n;
}

/* Random rules over a small address region, so that values touch,
 * overlap and fill prefixes. */
#define REGION 0x0a000000U /* 10.0.0.0 */
#define SPAN 2048U

static void gen_rule(struct trule *r, uint32_t verdict, uint64_t *setbuf, size_t maxset)
{
	uint32_t a = REGION + (uint32_t)(rnd() % SPAN);

	memset(r, 0, sizeof(*r));
	r->verdict = verdict;
	r->field = IOUR_FIELD_CONNECT_ADDR4;
	switch (rnd() % 5) {
	case 0:
		r->op = IOUR_CMP_EQ;
		r->value = a;
		break;
	case 1:
		r->op = IOUR_CMP_IN_SET;
		r->set_len = 1 + rnd() % maxset;
		for (size_t i = 0; i < r->set_len; i++)
			setbuf[i] = REGION + (uint32_t)(rnd() % SPAN);
		r->set = setbuf;
		break;
	case 2:
		r->op = IOUR_CMP_IN_RANGE;
		r->value = a;
		r->arg = a + rnd() % 40;
		break;
	case 3:
		r->op = IOUR_CMP_IN_PREFIX;
		r->arg = 26 + rnd() % 7;
		r->value = a;
		break;
	default:
		/* rarely a wide negated prefix, which takes nearly everything */
		r->op = rnd() % 16 ? IOUR_CMP_IN_PREFIX : IOUR_CMP_NOT_IN_PREFIX;
		r->arg = r->op == IOUR_CMP_IN_PREFIX ? 28 + rnd() % 5 : 16 + rnd() % 17;
		r->value = a;
		break;
	}
}

static struct treq gen_req(const struct tpol *p)
{
	struct treq q = { .v4 = rnd() % 16 != 0, .port = rnd() % 4 ? 443 : 22 };

	q.addr = REGION + (uint32_t)(rnd() % (SPAN + 64)) - 32;
	if (p->n && rnd() % 2) {
		/* an edge of a rule */
		const struct trule *r = &p->r[rnd() % p->n];
		uint64_t e = r->op == IOUR_CMP_IN_SET ? r->set[rnd() % r->set_len] :
			     r->op == IOUR_CMP_IN_RANGE ? (rnd() % 2 ? r->value : r->arg) :
							  r->value;

		q.addr = (uint32_t)e + (uint32_t)(rnd() % 3) - 1;
	}
	return q;
}

Test(filter_stack, split_and_merge_differential)
{
	static uint64_t sets[64][128];
	struct kernel_oracle o;
	uint64_t cases = 0, split = 0, progs = 0, denied = 0, allowed = 0, skipped = 0;
	bool have_oracle = oracle_open(&o) == 0;

	seed_rng();
	for (int it = 0; it < 100; it++) {
		struct tpol p = { .dflt = rnd() % 4 ? IOUR_ALLOW : IOUR_DENY };
		size_t np = rnd() % 3, nd = 16 + rnd() % 40, ns = rnd() % 3;
		struct iour_filter *f;
		struct iour_prog *one = NULL, *stack = NULL;
		struct iour__compile_cfg cfg = { .big_endian = __BYTE_ORDER__ ==
							       __ORDER_BIG_ENDIAN__ };
		struct iour__stack_stats st;
		char why[256];
		size_t maxc;
		int rc;

		/* P: a port rule or an allow rule on addresses; D: deny rules;
		 * S: anything */
		for (size_t i = 0; i < np; i++) {
			struct trule *r = &p.r[p.n];

			if (rnd() % 2) {
				memset(r, 0, sizeof(*r));
				*r = (struct trule){ .verdict = IOUR_ALLOW,
						     .field = IOUR_FIELD_CONNECT_PORT,
						     .op = IOUR_CMP_EQ,
						     .value = 8080 };
			} else {
				gen_rule(r, IOUR_ALLOW, sets[p.n], 3);
			}
			p.n++;
		}
		for (size_t i = 0; i < nd; i++, p.n++)
			gen_rule(&p.r[p.n], IOUR_DENY, sets[p.n], 120);
		for (size_t i = 0; i < ns; i++, p.n++)
			gen_rule(&p.r[p.n], rnd() % 2 ? IOUR_ALLOW : IOUR_DENY, sets[p.n], 3);
		f = build(&p);

		/* one program (the merged compile), when it fits */
		cfg.max_insns = IOUR_MAX_INSNS;
		rc = iour__filter_compile_cfg(f, OP_CONNECT, &cfg, NULL, &one);
		cr_assert_eq(rc, 0, "one program: %s", iour_errname(rc));
		/* a stack under a small limit */
		cfg.max_insns = 320 + (uint32_t)(rnd() % 256);
		rc = iour__filter_compile_stack(f, OP_CONNECT, &cfg, &st, &stack, why, sizeof(why));
		if (rc == -IOUR_ERRNO__PROG_TOO_LARGE) {
			/* only when P and S alone need nearly the limit */
			skipped++;
			cr_log_info("unsplittable at %u: %s", cfg.max_insns, why);
			iour_prog__free(one);
			iour_filter__free(f);
			continue;
		}
		cr_assert_eq(rc, 0, "stack: %s", iour_errname(rc));
		cr_assert_eq(chain_len(stack, &maxc), st.progs);
		cr_assert_leq(maxc, cfg.max_insns, "every stacked program within the limit");
		split += st.split;
		progs += st.progs;
		for (const struct iour_prog *q = stack; q; q = q->next)
			cr_assert_eq(iour_cbpf_validate(q->insns, q->cnt, 0, NULL), 0);
		for (int k = 0; k < 60; k++) {
			struct treq q = gen_req(&p);
			uint8_t ctx[40];
			uint32_t want = ref_decide(&p, &q), v = 0;

			ctx_of(&q, ctx);
			v = sim(one->insns, one->cnt, ctx);
			cr_assert_eq(v != 0, want == IOUR_ALLOW,
				     "merged program vs reference (iteration %d, addr 0x%x)", it,
				     q.addr);
			/* the kernel's engine on the first requests of each list */
			cr_assert_eq(stack_decide(have_oracle && k < 8 ? &o : NULL, stack, ctx), want,
				     "stack of %u vs reference (iteration %d, addr 0x%x)", st.progs,
				     it, q.addr);
			cases++;
			if (want == IOUR_ALLOW)
				allowed++;
			else
				denied++;
		}
		iour_prog__free(one);
		iour_prog__free(stack);
		iour_filter__free(f);
	}
	if (have_oracle)
		oracle_close(&o);
	cr_log_info("filter_stack: %llu cases, %llu split rule lists, %llu programs, %llu "
		    "unsplittable",
		    (unsigned long long)cases, (unsigned long long)split,
		    (unsigned long long)progs, (unsigned long long)skipped);
	cr_expect_lt(skipped, 20, "few rule lists too large to split at these limits");
	cr_expect_gt(split, 40, "most rule lists were split (the test means something)");
	cr_expect_gt(denied, 100);
	cr_expect_gt(allowed, 100);
}

/* 100,000 addresses forming 10 runs become 10 ranges: one program. */
Test(filter_stack, merge_runs_fit_one_program)
{
	static uint64_t set[100000];
	struct iour_cmp c = { .sz = sizeof(c), .field = IOUR_FIELD_CONNECT_ADDR4, .op = IOUR_CMP_IN_SET };
	IOUR_OPTS(iour_filter_opts, fo, .default_verdict = IOUR_ALLOW);
	struct iour_filter *f;
	struct iour_policy *pol;
	struct iour_prog *p = NULL;
	uint8_t ctx[40];
	uint32_t v;

	for (size_t i = 0; i < 100000; i++)
		set[i] = 0xc0a80000U + (uint32_t)(i / 10000) * 0x10000U + (uint32_t)(i % 10000);
	/* two rules: a set holds at most IOUR_FILTER_MAX_SET values */
	cr_assert_eq(iour_filter__new(&fo, &f), 0);
	c.set = set;
	c.set_len = 50000;
	cr_assert_eq(iour_filter__add_rule(f, OP_CONNECT, IOUR_DENY, &c, 1), 0);
	c.set = set + 50000;
	cr_assert_eq(iour_filter__add_rule(f, OP_CONNECT, IOUR_DENY, &c, 1), 0);
	cr_assert_eq(iour_filter__compile(f, OP_CONNECT, NULL, &p), 0);
	cr_expect_lt(iour_prog__insn_cnt(p), 200, "10 ranges, a small program");
	cr_assert_eq(iour_policy__new(NULL, &pol), 0);
	cr_assert_eq(iour_policy__set_filter(pol, f), 0);
	cr_expect_eq(iour_policy__prog_cnt(pol, OP_CONNECT), 1);
	for (uint32_t run = 0; run < 11; run++) {
		struct treq in = { .v4 = true, .addr = 0xc0a80000U + run * 0x10000U + 9999 };
		struct treq out = { .v4 = true, .addr = 0xc0a80000U + run * 0x10000U + 10000 };

		ctx_of(&in, ctx);
		v = sim(p->insns, p->cnt, ctx);
		cr_expect_eq(v != 0, run == 10, "last address of run %u", run);
		ctx_of(&out, ctx);
		v = sim(p->insns, p->cnt, ctx);
		cr_expect_neq(v, 0U, "first address after run %u", run);
	}
	iour_prog__free(p);
	iour_policy__free(pol);
	iour_filter__free(f);
}

/* Prefixes join runs of ranges: 16 adjacent /24 blocks written as
 * alternating prefixes and ranges compile exactly as the same blocks
 * written as ranges only (one merged range). */
static size_t blocks_prog(int style)
{
	IOUR_OPTS(iour_filter_opts, fo, .default_verdict = IOUR_ALLOW);
	struct iour_filter *f;
	struct iour_prog *p = NULL;
	size_t n;

	cr_assert_eq(iour_filter__new(&fo, &f), 0);
	for (uint32_t i = 0; i < 16; i++) {
		struct iour_cmp c[2] = { { .sz = sizeof(c[0]), .field = IOUR_FIELD_CONNECT_ADDR4 },
					 { 0 } };

		if (i % 2 && style != 1) {
			c[0].op = IOUR_CMP_IN_PREFIX;
			c[0].value = 0x0a000000U + i * 256;
			c[0].arg = 24;
		} else {
			c[0].op = IOUR_CMP_IN_RANGE;
			c[0].value = 0x0a000000U + i * 256;
			c[0].arg = c[0].value + 255;
		}
		cr_assert_eq(iour_filter__add_rule(f, OP_CONNECT, IOUR_DENY, c, 1), 0);
	}
	n = (size_t)iour_filter__compile(f, OP_CONNECT, NULL, &p);
	cr_assert_eq(n, 0, "style %d: %s", style, iour_errname((int)n));
	n = iour_prog__insn_cnt(p);
	iour_prog__free(p);
	iour_filter__free(f);
	return n;
}

Test(filter_stack, prefixes_merge_with_ranges)
{
	size_t mixed = blocks_prog(0), ranges = blocks_prog(1);

	cr_expect_eq(mixed, ranges, "prefixes merged like ranges: %zu vs %zu", mixed, ranges);
	cr_expect_leq(mixed, 48, "one range (and the IPv4-mapped branch): %zu", mixed);
}

/* Random addresses: a 12,000-entry deny-list on the policy, split. */
static struct iour_policy *big_denylist(size_t n, uint64_t **setp, struct iour_filter **fp)
{
	uint64_t *set = malloc(n * sizeof(*set));
	struct iour_cmp c = { .sz = sizeof(c), .field = IOUR_FIELD_CONNECT_ADDR4, .op = IOUR_CMP_IN_SET };
	IOUR_OPTS(iour_filter_opts, fo, .default_verdict = IOUR_ALLOW);
	struct iour_filter *f;
	struct iour_policy *pol;
	int rc;

	cr_assert_not_null(set);
	rng_state = 0x1234567;
	for (size_t i = 0; i < n; i++)
		set[i] = 0x0b000000U + (uint32_t)(rnd() % 0x00ffffffU) * 2; /* never adjacent */
	c.set = set;
	c.set_len = n;
	cr_assert_eq(iour_filter__new(&fo, &f), 0);
	cr_assert_eq(iour_filter__add_rule(f, OP_CONNECT, IOUR_DENY, &c, 1), 0);
	cr_assert_eq(iour_policy__new(NULL, &pol), 0);
	rc = iour_policy__set_filter(pol, f);
	cr_assert_eq(rc, 0, "set_filter: %s", iour_errname(rc));
	*setp = set;
	*fp = f;
	return pol;
}

Test(filter_stack, policy_denylist_split_plan_and_emulated_kernel)
{
	UNIT_REQUIRE_URING();
	struct emu_config cfg = { .gen = EMU_GEN_7_2 };
	IOUR_OPTS(iour_probe_opts, po, .flags = IOUR_PROBE_NO_CACHE);
	struct iour_features feat = { .sz = sizeof(feat) };
	struct iour_report *rep = NULL;
	struct iour_policy *pol, *dup = NULL;
	struct iour_filter *f;
	struct iour_plan *pl = NULL;
	struct kio_params params;
	uint64_t *set;
	struct emu *e;
	char *desc;
	size_t len = 0;
	int n, steps = 0, i;
	long fd;
	uint8_t ctx[40];

	pol = big_denylist(12000, &set, &f);
	n = iour_policy__prog_cnt(pol, OP_CONNECT);
	cr_assert_gt(n, 1, "12,000 random addresses need several programs");
	cr_expect_eq(iour_policy__prog_cnt(pol, 0), 0);
	cr_expect_eq(iour_policy__prog_cnt(pol, 256), -EINVAL);
	cr_expect_eq(iour_policy__prog_cnt(NULL, OP_CONNECT), -EINVAL);
	cr_assert_eq(iour_policy__dup(pol, &dup), 0);
	cr_expect_eq(iour_policy__prog_cnt(dup, OP_CONNECT), n, "a copy keeps the stack");
	iour_policy__free(dup);

	cr_assert_eq(emu_new(&cfg, &e), 0);
	emu_install(e);
	cr_assert_eq(iour_probe(&po, &feat), 0);
	{
		IOUR_OPTS(iour_plan_opts, o, .features = &feat);

		cr_assert_eq(iour_policy__plan(pol, &o, &pl), 0);
	}
	for (i = 0; i < iour_plan__step_cnt(pl); i++) {
		struct iour_plan_step s = { .sz = sizeof(s) };

		cr_assert_eq(iour_plan__step(pl, (size_t)i, &s), 0);
		steps += s.op == IOUR_STEP_BPF_FILTER && s.opcode == OP_CONNECT;
	}
	cr_expect_eq(steps, n, "one registration per stacked program");
	cr_assert_eq(iour_plan__describe(pl, NULL, &len), 0);
	desc = malloc(len);
	cr_assert_not_null(desc);
	cr_assert_eq(iour_plan__describe(pl, desc, &len), 0);
	cr_expect_not_null(strstr(desc, "stacked filters"), "the report says so");
	free(desc);
	cr_assert_eq(iour_plan__apply_task(pl, NULL, &rep), 0);
	memset(&params, 0, sizeof(params));
	fd = iour__setup(8, &params);
	cr_assert_geq(fd, 0);
	for (size_t k = 0; k < 12000; k += 599) {
		struct treq in = { .v4 = true, .addr = (uint32_t)set[k], .port = 80 };
		struct treq out = { .v4 = true, .addr = (uint32_t)set[k] + 1, .port = 80 };

		ctx_of(&in, ctx);
		cr_expect_eq(emu_submit(e, (int)fd, ctx), -EACCES, "emulated: listed 0x%x denied",
			     in.addr);
		ctx_of(&out, ctx);
		cr_expect_eq(emu_submit(e, (int)fd, ctx), 0, "emulated: unlisted 0x%x allowed",
			     out.addr);
	}
	iour_report__free(rep);
	iour_plan__free(pl);
	emu_uninstall();
	emu_free(e);
	iour_policy__free(pol);
	iour_filter__free(f);
	free(set);
}

/* An allow-list too large for one program cannot be split: a clear
 * error, and the policy unchanged. */
Test(filter_stack, allow_list_unsplittable)
{
	static uint64_t set[6000];
	struct iour_cmp c = { .sz = sizeof(c), .field = IOUR_FIELD_CONNECT_ADDR4, .op = IOUR_CMP_IN_SET };
	struct iour_filter *f;
	struct iour_policy *pol;
	struct iour_prog *p = NULL;
	struct iour__compile_cfg cfg = { .big_endian = __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__,
					 .max_insns = IOUR_MAX_INSNS };
	char why[512];
	int rc;

	rng_state = 99;
	for (size_t i = 0; i < 6000; i++)
		set[i] = 0x0b000000U + (uint32_t)i * 2;
	c.set = set;
	c.set_len = 6000;
	cr_assert_eq(iour_filter__new(NULL, &f), 0); /* default deny */
	cr_assert_eq(iour_filter__add_rule(f, OP_CONNECT, IOUR_ALLOW, &c, 1), 0);
	cr_assert_eq(iour_policy__new(NULL, &pol), 0);
	rc = iour_policy__set_filter(pol, f);
	cr_expect_eq(rc, -IOUR_ERRNO__PROG_TOO_LARGE, "got %s", iour_errname(rc));
	cr_expect_eq(iour_policy__prog_cnt(pol, OP_CONNECT), 0, "policy unchanged");
	rc = iour__filter_compile_stack(f, OP_CONNECT, &cfg, NULL, &p, why, sizeof(why));
	cr_expect_eq(rc, -IOUR_ERRNO__PROG_TOO_LARGE);
	cr_expect_null(p);
	cr_expect_not_null(strstr(why, "CONNECT"), "%s", why);
	cr_expect_not_null(strstr(why, "allow-list cannot be split"), "%s", why);

	/* the same entries as a deny-list split fine */
	iour_filter__free(f);
	cr_assert_eq(denylist4_new(NULL, set, 6000, 0, &f), 0);
	cr_expect_eq(iour_policy__set_filter(pol, f), 0);
	cr_expect_gt(iour_policy__prog_cnt(pol, OP_CONNECT), 1);
	iour_policy__free(pol);
	iour_filter__free(f);
}

/* A raw program above the limit cannot be split either. */
Test(filter_stack, raw_program_unsplittable)
{
	struct iour__compile_cfg cfg = { .max_insns = 8 };
	struct iour_insn raw[10];
	struct iour_filter *f;
	struct iour_prog *p = NULL;
	char why[256];

	for (int i = 0; i < 9; i++)
		raw[i] = (struct iour_insn){ 0x20, 0, 0, 0 };
	raw[9] = (struct iour_insn){ 0x06, 0, 0, 1 };
	cr_assert_eq(iour_filter__new(NULL, &f), 0);
	cr_assert_eq(iour_filter__set_raw(f, OP_CONNECT, raw, 10), 0);
	cr_expect_eq(iour__filter_compile_stack(f, OP_CONNECT, &cfg, NULL, &p, why, sizeof(why)),
		     -IOUR_ERRNO__PROG_TOO_LARGE);
	cr_expect_not_null(strstr(why, "raw program"), "%s", why);
	iour_filter__free(f);
}

/* More than IOUR__STACK_MAX programs: refused, saying so (six
 * instructions hold one address: family, address, two returns). */
Test(filter_stack, too_many_programs)
{
	static uint64_t set[1500];
	struct iour_cmp c = { .sz = sizeof(c),
			      .field = IOUR_FIELD_CONNECT_ADDR4,
			      .op = IOUR_CMP_IN_SET,
			      .set = set,
			      .set_len = 1500 };
	IOUR_OPTS(iour_filter_opts, fo, .default_verdict = IOUR_ALLOW,
		  .flags = IOUR_FILTER_ADDR4_LITERAL);
	struct iour__compile_cfg cfg = { .big_endian = __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__,
					 .max_insns = 6 };
	struct iour_filter *f;
	struct iour_prog *p = NULL;
	char why[256];
	int rc;

	for (size_t i = 0; i < 1500; i++)
		set[i] = 0x0a000000U + (uint32_t)i * 3;
	cr_assert_eq(iour_filter__new(&fo, &f), 0);
	cr_assert_eq(iour_filter__add_rule(f, OP_CONNECT, IOUR_DENY, &c, 1), 0);
	rc = iour__filter_compile_stack(f, OP_CONNECT, &cfg, NULL, &p, why, sizeof(why));
	cr_expect_eq(rc, -IOUR_ERRNO__PROG_TOO_LARGE, "got %s", iour_errname(rc));
	cr_expect_null(p);
	cr_expect_not_null(strstr(why, "more than 1024 stacked filters"), "%s", why);
	iour_filter__free(f);
}

/* ---- deny-lists of IPv4 points: packed by loaded word, range pre-check ---- */
struct preq {
	uint32_t fam; /* AF_INET, AF_INET6 (mapped when `mapped`), AF_UNIX */
	bool mapped;
	uint32_t addr;
	uint16_t port;
};

/* The reference: filter.h, an IPv4 rule holds for AF_INET and, unless
 * literal, for ::ffff:a.b.c.d; a port rule for AF_INET and AF_INET6. */
static uint32_t pref_decide(const struct tpol *p, const struct preq *q, bool literal)
{
	struct treq t = { .v4 = q->fam == AF_INET || (q->mapped && !literal),
			  .addr = q->addr,
			  .port = q->fam == AF_UNIX ? 0 : q->port };

	return ref_decide(p, &t);
}

/* The context as the kernel fills it; for a big-endian program, the
 * bytes whose little-endian loads give its loads (network-order words
 * reversed; the family, a native word, stays). */
static void pctx_of(const struct preq *q, bool be, uint8_t ctx[40])
{
	cr_assert_eq(iour_ctx_generic(ctx, 40, OP_CONNECT, 0, 0), 0);
	if (q->fam == AF_INET) {
		struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(q->port) };

		a.sin_addr.s_addr = htonl(q->addr);
		cr_assert_eq(iour_ctx_connect(ctx, 40, &a, sizeof(a)), 0);
	} else if (q->fam == AF_INET6) {
		struct sockaddr_in6 a = { .sin6_family = AF_INET6, .sin6_port = htons(q->port) };
		uint32_t na = htonl(q->addr);

		if (q->mapped)
			a.sin6_addr.s6_addr[10] = a.sin6_addr.s6_addr[11] = 0xff;
		else
			a.sin6_addr.s6_addr[rnd() % 2 ? 0 : 11] = 1; /* 1:: or ::1:a.b.c.d */
		memcpy(&a.sin6_addr.s6_addr[12], &na, 4);
		cr_assert_eq(iour_ctx_connect(ctx, 40, &a, sizeof(a)), 0);
	} else {
		struct sockaddr a = { .sa_family = AF_UNIX };

		cr_assert_eq(iour_ctx_connect(ctx, 40, &a, sizeof(a)), 0);
	}
	if (be)
		for (int w = IOUR_CTX_OFF_CONNECT_PORT; w < 40; w += 4) {
			uint8_t t0 = ctx[w], t1 = ctx[w + 1];

			ctx[w] = ctx[w + 3];
			ctx[w + 1] = ctx[w + 2];
			ctx[w + 2] = t1;
			ctx[w + 3] = t0;
		}
}

/*
 * Deny-lists made only of IPv4 points (EQ and IN_SET rules) over the whole
 * address space (0.0.0.0 and 255.255.255.255 included), with allow rules
 * before and rules after, split under small limits: every program of the
 * stack has a range pre-check on the loaded word (filter_lower.c,
 * range_precheck()).  Listed addresses, their neighbours, unlisted ones,
 * each as AF_INET, as ::ffff:a.b.c.d and as a non-mapped AF_INET6
 * address, and AF_UNIX, in both byte orders, with and without
 * IOUR_FILTER_ADDR4_LITERAL: the reference, the simulator over every
 * program and (native order) the kernel's engine agree.  A request no
 * program lists runs at most 4 instructions in each program (7 when
 * mapped) when no rule surrounds the deny-list.
 */
Test(filter_stack, ipv4_points_range_precheck_differential)
{
	static uint64_t sets[64][200];
	struct kernel_oracle o;
	uint64_t cases = 0, progs = 0, denied = 0, allowed = 0;
	bool have_oracle = oracle_open(&o) == 0;

	seed_rng();
	for (int it = 0; it < 120; it++) {
		bool be = it % 2, literal = it % 3 == 0, bare = it % 4 == 0;
		struct tpol p = { .dflt = IOUR_ALLOW };
		size_t np = bare ? 0 : rnd() % 3, nd = 8 + rnd() % 40, ns = bare ? 0 : rnd() % 3;
		IOUR_OPTS(iour_filter_opts, fo, .default_verdict = IOUR_ALLOW,
			  .flags = literal ? IOUR_FILTER_ADDR4_LITERAL : 0);
		struct iour_filter *f = NULL;
		struct iour_prog *stack = NULL;
		struct iour__compile_cfg cfg = { .big_endian = be,
						 .max_insns = 120 + (uint32_t)(rnd() % 400) };
		struct iour__stack_stats st;
		char why[256];
		int rc;

		for (size_t i = 0; i < np; i++, p.n++) {
			struct trule *r = &p.r[p.n];

			memset(r, 0, sizeof(*r));
			r->verdict = IOUR_ALLOW;
			r->field = rnd() % 2 ? IOUR_FIELD_CONNECT_PORT : IOUR_FIELD_CONNECT_ADDR4;
			r->op = IOUR_CMP_EQ;
			r->value = r->field == IOUR_FIELD_CONNECT_PORT ? 8080 : (uint32_t)rnd();
		}
		for (size_t i = 0; i < nd; i++, p.n++) {
			struct trule *r = &p.r[p.n];

			memset(r, 0, sizeof(*r));
			r->verdict = IOUR_DENY;
			r->field = IOUR_FIELD_CONNECT_ADDR4;
			if (rnd() % 4 == 0) {
				r->op = IOUR_CMP_EQ;
				r->value = rnd() % 8 ? (uint32_t)rnd() : rnd() % 2 ? 0 : UINT32_MAX;
			} else {
				r->op = IOUR_CMP_IN_SET;
				r->set_len = 1 + rnd() % 200;
				for (size_t k = 0; k < r->set_len; k++)
					sets[p.n][k] = rnd() % 64 ? (uint32_t)rnd() :
						       rnd() % 2  ? 0 :
								    UINT32_MAX;
				r->set = sets[p.n];
			}
		}
		for (size_t i = 0; i < ns; i++, p.n++) {
			struct trule *r = &p.r[p.n];

			memset(r, 0, sizeof(*r));
			r->verdict = rnd() % 2 ? IOUR_ALLOW : IOUR_DENY;
			r->field = IOUR_FIELD_CONNECT_PORT;
			r->op = IOUR_CMP_IN_RANGE;
			r->value = 20 + rnd() % 10;
			r->arg = r->value + rnd() % 5;
		}
		cr_assert_eq(iour_filter__new(&fo, &f), 0);
		for (size_t i = 0; i < p.n; i++) {
			const struct trule *r = &p.r[i];
			struct iour_cmp c = { .sz = sizeof(c),
					      .field = r->field,
					      .op = r->op,
					      .value = r->value,
					      .arg = r->arg,
					      .set = r->set,
					      .set_len = r->set_len };

			cr_assert_eq(iour_filter__add_rule(f, OP_CONNECT, r->verdict, &c, 1), 0);
		}
		rc = iour__filter_compile_stack(f, OP_CONNECT, &cfg, &st, &stack, why, sizeof(why));
		cr_assert_eq(rc, 0, "stack at %u: %s (%s)", cfg.max_insns, iour_errname(rc), why);
		progs += st.progs;
		for (const struct iour_prog *q = stack; q; q = q->next) {
			cr_assert_leq(q->cnt, cfg.max_insns);
			cr_assert_eq(iour_cbpf_validate(q->insns, q->cnt, 0, NULL), 0);
		}
		for (int k = 0; k < 80; k++) {
			struct preq q = { .port = rnd() % 4 ? 443 : 22 };
			const struct trule *r = &p.r[rnd() % p.n];
			uint8_t ctx[40];
			uint32_t want, got = IOUR_ALLOW, over = 0, bound;
			int fam = (int)(rnd() % 8);

			q.fam = fam < 4 ? AF_INET : fam < 7 ? AF_INET6 : AF_UNIX;
			q.mapped = q.fam == AF_INET6 && fam < 6;
			q.addr = (uint32_t)rnd();
			if (rnd() % 3 && r->field == IOUR_FIELD_CONNECT_ADDR4)
				q.addr = (uint32_t)(r->op == IOUR_CMP_IN_SET ?
							    r->set[rnd() % r->set_len] :
							    r->value) +
					 (uint32_t)(rnd() % 3) - 1;
			want = pref_decide(&p, &q, literal);
			pctx_of(&q, be, ctx);
			/* outside a program's range (filter_lower.c,
			 * range_precheck()): ld [24], jeq 0, one or two bounds,
			 * ret; with word 24 == 0 (mapped, 0.0.0.0, AF_UNIX) word
			 * 36 is checked instead: ld [24], jeq 0, ld [36], one or
			 * two bounds, ret.  Literal: ld [24], one or two bounds,
			 * ret, whatever word 24 holds. */
			bound = literal ? 4 : ctx[24] | ctx[25] | ctx[26] | ctx[27] ? 5 : 6;
			for (const struct iour_prog *pp = stack; pp; pp = pp->next) {
				struct iour_sim_result sr = { .sz = sizeof(sr) };

				cr_assert_eq(iour_cbpf_run(pp->insns, pp->cnt, ctx, 40, &sr), 0);
				if (!sr.allowed)
					got = IOUR_DENY;
				else if (sr.executed > bound)
					over++;
				if (have_oracle && !be && k < 10) {
					int ker;

					cr_assert_eq(oracle_attach(&o, pp->insns, pp->cnt), 0);
					ker = oracle_run(&o, ctx, NULL);
					cr_assert_geq(ker, 0);
					cr_assert_eq(ker != 0, sr.allowed != 0,
						     "kernel engine and simulator disagree");
				}
			}
			cr_assert_eq(got, want,
				     "iteration %d (%s%s): family %u%s addr 0x%x port %u: stack of "
				     "%u says %u, the rules %u",
				     it, be ? "big-endian" : "native", literal ? ", literal" : "",
				     q.fam, q.mapped ? " mapped" : "", q.addr, q.port, st.progs,
				     got, want);
			if (bare && want == IOUR_ALLOW)
				/* the ranges are disjoint: only the program whose
				 * range holds word 24 and the one whose range holds
				 * 0 (word 36 when word 24 is 0) run longer */
				cr_expect_leq(over, 2,
					      "%u of %u programs ran more than %u instructions "
					      "(family %u%s, addr 0x%x)",
					      over, st.progs, bound, q.fam,
					      q.mapped ? " mapped" : "", q.addr);
			cases++;
			if (want == IOUR_ALLOW)
				allowed++;
			else
				denied++;
		}
		iour_prog__free(stack);
		iour_filter__free(f);
	}
	if (have_oracle)
		oracle_close(&o);
	cr_log_info("filter_stack: ipv4 points: %llu cases over %llu programs",
		    (unsigned long long)cases, (unsigned long long)progs);
	cr_expect_gt(progs, 600, "the lists were split into many programs");
	cr_expect_gt(denied, 1000);
	cr_expect_gt(allowed, 1000);
}

/* A CONNECT context for an IPv4 address (host order), as AF_INET or as
 * the IPv4-mapped ::ffff:a.b.c.d. */
static void ctx_v4(uint8_t ctx[40], uint32_t addr, bool mapped)
{
	iour_ctx_generic(ctx, 40, OP_CONNECT, 0, 1);
	if (mapped) {
		struct sockaddr_in6 sa = { .sin6_family = AF_INET6, .sin6_port = htons(80) };
		uint32_t be = htonl(addr);

		sa.sin6_addr.s6_addr[10] = sa.sin6_addr.s6_addr[11] = 0xff;
		memcpy(&sa.sin6_addr.s6_addr[12], &be, 4);
		cr_assert_eq(iour_ctx_connect(ctx, 40, &sa, sizeof(sa)), 0);
	} else {
		struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(80),
					  .sin_addr = { htonl(addr) } };

		cr_assert_eq(iour_ctx_connect(ctx, 40, &sa, sizeof(sa)), 0);
	}
}

/*
 * The pre-check costs doc/design.md ("Stacked filters") states, on
 * programs of the full 4096 instructions, where a branch laid out after
 * the search would need a trampoline: a request below or above every
 * program's range runs, in program i, cost[literal][kind][i & 1][above]
 * instructions: AF_INET 5/4 (even) and 4/5 (odd), mapped 5/6 and 6/5,
 * with IOUR_FILTER_ADDR4_LITERAL 4/3 and 3/4 (a mapped request, word 24
 * 0, is below every range there).  The four costs of a program add up to
 * 20, the least possible.
 */
Test(filter_stack, precheck_costs_as_documented)
{
	static const uint32_t cost[2][2][2][2] = {
		{ { { 5, 4 }, { 4, 5 } }, { { 5, 6 }, { 6, 5 } } },
		{ { { 4, 3 }, { 3, 4 } }, { { 4, 4 }, { 3, 3 } } },
	};
	static uint64_t set[12000];
	/* the lowest and the highest loaded word (doc/design.md) */
	uint32_t below = ntohl(1), above = ntohl(UINT32_MAX);

	rng_state = 0x9e3779b97f4a7c15ULL;
	for (size_t i = 0; i < 12000; i++) {
		do
			set[i] = (uint32_t)rnd();
		while (set[i] == below || set[i] == above || set[i] == 0);
	}
	for (int literal = 0; literal < 2; literal++) {
		IOUR_OPTS(iour_filter_opts, fo, .flags = literal ? IOUR_FILTER_ADDR4_LITERAL : 0);
		struct iour__compile_cfg cfg = { .big_endian = __BYTE_ORDER__ ==
							       __ORDER_BIG_ENDIAN__,
						 .max_insns = IOUR_MAX_INSNS };
		struct iour__stack_stats st;
		struct iour_filter *f = NULL;
		struct iour_prog *stack = NULL;
		char why[256];
		uint32_t progs = 0;

		cr_assert_eq(denylist4_new(&fo, set, 12000, 0, &f), 0);
		cr_assert_eq(iour__filter_compile_stack(f, OP_CONNECT, &cfg, &st, &stack, why,
							sizeof(why)),
			     0, "%s", why);
		cr_assert_geq(st.progs, 4, "12,000 addresses in %u programs", st.progs);
		for (const struct iour_prog *p = stack; p; p = p->next, progs++)
			for (int kind = 0; kind < 2; kind++)
				for (int side = 0; side < 2; side++) {
					struct iour_sim_result r = { .sz = sizeof(r) };
					uint8_t ctx[40];

					ctx_v4(ctx, side ? above : below, kind);
					cr_assert_eq(iour_cbpf_run(p->insns, p->cnt, ctx, 40, &r),
						     0);
					cr_assert(r.allowed);
					cr_assert_eq(r.executed, cost[literal][kind][progs & 1][side],
						     "%sprogram %u of %u, %s request %s every range: "
						     "%u instructions",
						     literal ? "literal, " : "", progs, st.progs,
						     kind ? "mapped" : "AF_INET",
						     side ? "above" : "below", r.executed);
				}
		iour_prog__free(stack);
		iour_filter__free(f);
	}
}

/*
 * A deny-list whose points are too many for one program is split without
 * compiling the whole list first only when their runs of consecutive
 * values (each needs a comparison) are more than twice the limit, counted
 * as numbers and as the words the program loads, the smaller
 * (filter_stack.c, surely_too_large()).  20,000 addresses whose loaded
 * words are consecutive on a little-endian target (a.b.0.5 for every a,
 * b) are one run there although no two are neighbours as numbers: one
 * program, one compile.  On a big-endian target the same addresses are
 * 20,000 runs both ways, and the list is split; addresses consecutive as
 * numbers are one run on either target.
 */
Test(filter_stack, surely_too_large_counts_loaded_words)
{
	static uint64_t set[20000];

	for (int shape = 0; shape < 2; shape++)
		for (int be = 0; be < 2; be++) {
			struct iour__compile_cfg cfg = { .big_endian = be,
							 .max_insns = IOUR_MAX_INSNS };
			struct iour__stack_stats st;
			struct iour_filter *f = NULL;
			struct iour_prog *stack = NULL;
			char why[256];
			bool one = shape == 1 || !be;

			for (uint32_t i = 0; i < 20000; i++)
				/* shape 0: the word 0x05000000 + i read on a
				 * little-endian target; 1: consecutive numbers */
				set[i] = shape ? 0x0a000000U + i : __builtin_bswap32(0x05000000U + i);
			cr_assert_eq(denylist4_new(NULL, set, 20000, 0, &f), 0);
			cr_assert_eq(iour__filter_compile_stack(f, OP_CONNECT, &cfg, &st, &stack,
								why, sizeof(why)),
				     0, "%s", why);
			if (one) {
				cr_assert_eq(st.progs, 1, "shape %d, %s: %u programs", shape,
					     be ? "big-endian" : "little-endian", st.progs);
				cr_assert_eq(st.compiles, 1, "shape %d, %s: %u compiles", shape,
					     be ? "big-endian" : "little-endian", st.compiles);
				cr_assert_lt(stack->cnt, 64, "one run: a few comparisons");
			} else {
				cr_assert_gt(st.progs, 1, "20,000 scattered points: %u programs",
					     st.progs);
			}
			iour_prog__free(stack);
			iour_filter__free(f);
		}
}
