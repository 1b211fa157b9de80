/* SPDX-License-Identifier: MIT */
/*
 * Benchmark of large CONNECT deny-lists (doc/design.md, "Stacked filters"):
 * time for iour_policy__set_filter() to merge, compile and, where needed,
 * split a deny-list of N entries across stacked programs, for N = 1,000,
 * 10,000 and 100,000, in two shapes:
 *
 *  random  N random IPv4 addresses (one IN_SET rule per 65,536 values),
 *          almost none adjacent: the worst case for merging;
 *  mix     N deny rules, a third single addresses, a third ranges of 2 to
 *          64 addresses, a third prefixes /24 to /30, scattered over
 *          10.0.0.0/8 (they overlap and touch, so they merge).
 *
 * For each: stack.<shape>.nN.ms (CPU time of the process, median of
 * several runs; one run at 100,000), .progs (stacked programs), .insns (instructions over all of
 * them), and stack.<shape>.us_per_entry_n100000_vs_n1000, the time per
 * entry at 100,000 divided by that at 1,000 (1 = linear).
 *
 * stack.random.n100000.worst_path_total: the most instructions one CONNECT
 * runs through all the stacked programs (simulator count), over the
 * listed addresses (every 37th), as many unlisted ones, each also as the
 * IPv4-mapped IPv6 address, and ::1 and an AF_UNIX request;
 * .worst_nonmatching_per_prog: the most one program that does not deny
 * such a request runs for it (each program first sends an address outside
 * its range to the rest of the rules: filter_lower.c, range_precheck());
 * .worst_matching: the most the denying program runs;
 * .worst_path_bound: issue 21's bound beside the value, 3 instructions for
 * each program but one plus the most one program runs (a listed address
 * is denied by one program; an unlisted one inside a program's range runs
 * that program's whole search without being denied).  Nothing is
 * asserted: the numbers go to the JSON file named by the argument.
 *
 * Usage: bench_stack OUTPUT.json
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "bench_util.h"
#include "filter_internal.h"
#include "iouring_restrict/iouring_restrict.h"

#define OP_CONNECT 16

static uint64_t rng = 0x243f6a8885a308d3ULL;

/* CPU time of this process: the machine is shared, wall time would
 * measure the neighbours. */
static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void die(const char *what, int rc)
{
	fprintf(stderr, "bench_stack: %s: %s\n", what, iour_errname(rc));
	exit(1);
}

static struct iour_filter *make_random(size_t n, uint64_t *set)
{
	struct iour_filter *f = NULL;
	int rc = iour_filter__new(NULL, &f);

	if (rc)
		die("filter", rc);
	for (size_t i = 0; i < n; i++)
		set[i] = (uint32_t)rnd();
	for (size_t at = 0; at < n; at += IOUR_FILTER_MAX_SET) {
		struct iour_cmp c = { .sz = sizeof(c),
				      .field = IOUR_FIELD_CONNECT_ADDR4,
				      .op = IOUR_CMP_IN_SET,
				      .set = set + at,
				      .set_len = n - at < IOUR_FILTER_MAX_SET ? n - at :
										IOUR_FILTER_MAX_SET };

		rc = iour_filter__add_rule(f, OP_CONNECT, IOUR_DENY, &c, 1);
		if (rc)
			die("rule", rc);
	}
	rc = iour_filter__set_default(f, OP_CONNECT, IOUR_ALLOW);
	if (rc)
		die("default", rc);
	return f;
}

static struct iour_filter *make_mix(size_t n)
{
	struct iour_filter *f = NULL;
	int rc = iour_filter__new(NULL, &f);

	if (rc)
		die("filter", rc);
	for (size_t i = 0; i < n; i++) {
		uint32_t a = 0x0a000000U | ((uint32_t)rnd() & 0x00ffffffU);
		struct iour_cmp c = { .sz = sizeof(c), .field = IOUR_FIELD_CONNECT_ADDR4 };

		switch (i % 3) {
		case 0:
			c.op = IOUR_CMP_EQ;
			c.value = a;
			break;
		case 1:
			c.op = IOUR_CMP_IN_RANGE;
			c.value = a;
			c.arg = a + 1 + rnd() % 63;
			if (c.arg > 0x0affffffU)
				c.arg = 0x0affffffU;
			break;
		default:
			c.op = IOUR_CMP_IN_PREFIX;
			c.arg = 24 + rnd() % 7;
			c.value = a & (uint32_t)(UINT32_MAX << (32 - c.arg));
			break;
		}
		rc = iour_filter__add_rule(f, OP_CONNECT, IOUR_DENY, &c, 1);
		if (rc)
			die("rule", rc);
	}
	rc = iour_filter__set_default(f, OP_CONNECT, IOUR_ALLOW);
	if (rc)
		die("default", rc);
	return f;
}

struct result {
	double ms;
	int progs;
	size_t insns;
};

struct paths {
	uint32_t total, nonmatching_per_prog, matching;
};

/* Every stacked program on one context: instructions run, deny count; the
 * largest non-denying and denying program's counts through *nm and *m. */
static uint32_t run_stack(const struct iour_prog *head, const uint8_t ctx[40], uint32_t *nm,
			  uint32_t *m)
{
	uint32_t total = 0;

	for (const struct iour_prog *p = head; p; p = p->next) {
		struct iour_sim_result r = { .sz = sizeof(r) };
		int rc = iour_cbpf_run(iour_prog__insns(p), iour_prog__insn_cnt(p), ctx, 40, &r);

		if (rc)
			die("iour_cbpf_run", rc);
		total += r.executed;
		if (r.allowed && r.executed > *nm)
			*nm = r.executed;
		if (!r.allowed && r.executed > *m)
			*m = r.executed;
	}
	return total;
}

static void ctx4(uint8_t ctx[40], uint32_t addr, bool mapped)
{
	iour_ctx_generic(ctx, 40, OP_CONNECT, 0, 1);
	if (mapped) {
		struct sockaddr_in6 sa = { .sin6_family = AF_INET6, .sin6_port = htons(80) };

		sa.sin6_addr.s6_addr[10] = sa.sin6_addr.s6_addr[11] = 0xff;
		addr = htonl(addr);
		memcpy(&sa.sin6_addr.s6_addr[12], &addr, 4);
		iour_ctx_connect(ctx, 40, &sa, sizeof(sa));
	} else {
		struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(80),
					  .sin_addr = { htonl(addr) } };

		iour_ctx_connect(ctx, 40, &sa, sizeof(sa));
	}
}

/* The worst paths of the stack compiled from `f` (see the top comment). */
static struct paths worst_paths(const struct iour_filter *f, const uint64_t *set, size_t n)
{
	struct iour__compile_cfg cfg = { .big_endian = __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__,
					 .max_insns = IOUR_MAX_INSNS };
	struct iour_prog *head = NULL;
	struct paths w = { 0 };
	uint8_t ctx[40];
	char why[256];
	int rc = iour__filter_compile_stack(f, OP_CONNECT, &cfg, NULL, &head, why, sizeof(why));

	if (rc)
		die(why, rc);
	for (size_t i = 0; i < n; i += 37)
		for (int k = 0; k < 4; k++) {
			uint32_t t, a = (uint32_t)set[i] * (k < 2 ? 1U : 2654435761U);

			ctx4(ctx, a, k & 1);
			t = run_stack(head, ctx, &w.nonmatching_per_prog, &w.matching);
			w.total = t > w.total ? t : w.total;
		}
	{
		struct sockaddr_in6 sa6 = { .sin6_family = AF_INET6, .sin6_port = htons(80) };
		struct sockaddr su = { .sa_family = AF_UNIX };
		uint32_t t;

		sa6.sin6_addr.s6_addr[15] = 1;
		iour_ctx_generic(ctx, 40, OP_CONNECT, 0, 1);
		iour_ctx_connect(ctx, 40, &sa6, sizeof(sa6));
		t = run_stack(head, ctx, &w.nonmatching_per_prog, &w.matching);
		w.total = t > w.total ? t : w.total;
		iour_ctx_generic(ctx, 40, OP_CONNECT, 0, 1);
		iour_ctx_connect(ctx, 40, &su, sizeof(su));
		t = run_stack(head, ctx, &w.nonmatching_per_prog, &w.matching);
		w.total = t > w.total ? t : w.total;
	}
	iour_prog__free(head);
	return w;
}

/* The policy's compile of `f`: time (median of `runs`), programs and
 * instructions (counted through a plan for a kernel with task filters). */
static struct result measure(const struct iour_filter *f, int runs)
{
	uint64_t t[7];
	struct result r = { 0 };
	struct iour_policy *p = NULL;
	struct iour_plan *pl = NULL;
	IOUR_OPTS(iour_plan_opts, o, .flags = IOUR_PLAN_FORCE_LEVEL, .level = IOUR_LEVEL_CONNECT);
	int rc;

	for (int i = 0; i < runs; i++) {
		uint64_t t0;

		iour_policy__free(p);
		p = NULL;
		rc = iour_policy__new(NULL, &p);
		if (rc)
			die("policy", rc);
		t0 = cpu_ns();
		rc = iour_policy__set_filter(p, f);
		t[i] = cpu_ns() - t0;
		if (rc)
			die("set_filter", rc);
	}
	r.ms = bench_median(t, (size_t)runs) / 1e6;
	r.progs = iour_policy__prog_cnt(p, OP_CONNECT);
	rc = iour_policy__plan(p, &o, &pl);
	if (rc)
		die("plan", rc);
	for (int i = 0; i < iour_plan__step_cnt(pl); i++) {
		struct iour_plan_step s = { .sz = sizeof(s) };

		if (iour_plan__step(pl, (size_t)i, &s) == 0 && s.op == IOUR_STEP_BPF_FILTER &&
		    s.opcode == OP_CONNECT)
			r.insns += s.insn_cnt;
	}
	iour_plan__free(pl);
	iour_policy__free(p);
	return r;
}

/* 3 per program that only rejects the address as out of its range, plus
 * the one program that runs its search. */
static unsigned worst_path_bound(const struct paths *wp, int progs)
{
	unsigned own =
		wp->matching > wp->nonmatching_per_prog ? wp->matching : wp->nonmatching_per_prog;

	return progs > 0 ? 3U * (unsigned)(progs - 1) + own : 0;
}

int main(int argc, char **argv)
{
	static const size_t ns[3] = { 1000, 10000, 100000 };
	static const char *const shapes[2] = { "random", "mix" };
	struct result res[2][3];
	struct paths wp = { 0 };
	uint64_t *set = malloc(100000 * sizeof(*set));
	FILE *out;

	if (argc != 2) {
		fprintf(stderr, "usage: %s OUTPUT.json\n", argv[0]);
		return 2;
	}
	if (!set)
		die("malloc", -ENOMEM);
	for (int s = 0; s < 2; s++)
		for (int i = 0; i < 3; i++) {
			struct iour_filter *f = s ? make_mix(ns[i]) : make_random(ns[i], set);

			res[s][i] = measure(f, ns[i] >= 100000 ? 3 : 5);
			printf("stack %-6s n=%-6zu %9.2f ms  %4d programs  %7zu instructions\n",
			       shapes[s], ns[i], res[s][i].ms, res[s][i].progs, res[s][i].insns);
			if (!s && ns[i] == 100000) {
				wp = worst_paths(f, set, ns[i]);
				printf("stack random n=100000: worst path through all programs %u "
				       "instructions (a non-denying program at most %u, the "
				       "denying one at most %u)\n",
				       wp.total, wp.nonmatching_per_prog, wp.matching);
			}
			iour_filter__free(f);
		}
	free(set);
	out = fopen(argv[1], "w");
	if (!out)
		die("fopen", -errno);
	fprintf(out, "{\"stack\": {");
	for (int s = 0; s < 2; s++) {
		fprintf(out, "%s\"%s\": {", s ? ", " : "", shapes[s]);
		for (int i = 0; i < 3; i++) {
			fprintf(out, "\"n%zu\": {\"ms\": %.3f, \"progs\": %d, \"insns\": %zu", ns[i],
				res[s][i].ms, res[s][i].progs, res[s][i].insns);
			if (!s && ns[i] == 100000)
				fprintf(out,
					", \"worst_path_total\": %u, \"worst_path_bound\": %u, "
					"\"worst_nonmatching_per_prog\": %u, \"worst_matching\": %u",
					wp.total, worst_path_bound(&wp, res[s][i].progs),
					wp.nonmatching_per_prog, wp.matching);
			fprintf(out, "}, ");
		}
		fprintf(out, "\"us_per_entry_n100000_vs_n1000\": %.4f}",
			(res[s][2].ms / 100000.0) / (res[s][0].ms / 1000.0));
	}
	fprintf(out, "}}\n");
	fclose(out);
	return 0;
}
