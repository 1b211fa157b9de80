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
 * stack.random.n100000: the paths of one CONNECT through all the stacked
 * programs (simulator counts), over every listed address and, between
 * each two neighbouring listed words (the word the programs load), the
 * unlisted one next to the lower (so every gap between two programs'
 * ranges, and below and above all of them), each as an AF_INET request
 * and as the IPv4-mapped IPv6 request ::ffff:a.b.c.d, and ::1, AF_UNIX
 * and 0.0.0.0:
 *   .worst_path_total_inet / _mapped: the most one request of that kind
 *     runs; .worst_path_total: the most any request runs;
 *   .worst_path_outside_inet / _mapped: the most one request outside
 *     every program's range runs (no program ran more than its
 *     pre-check, PRECHECK_MAX instructions);
 *   .worst_path_compiler_bound_inet / _mapped: what the pre-check costs
 *     doc/design.md gives for each program ("Stacked filters": 4 or 5
 *     for AF_INET, 5 or 6 mapped, the cheap sides alternating) add up
 *     to over the worst placement of the request, plus the longest run
 *     of the one program whose search ran; the measured paths must stay
 *     within it;
 *   .worst_path_min_inet / _mapped / .worst_path_min: the least the worst
 *     request outside every range can run through this many programs
 *     with any pre-check (doc/design.md: ceil(7n/2) and ceil(11n/2));
 *     .min_per_prog_one_kind (4) and .min_per_prog_both_kinds (5, the
 *     four costs of a program averaged) are those per-program minima;
 *   .compiles: the compiles the stacked compile took;
 *   .worst_nonmatching_per_prog: the most one program that does not deny
 *     a request runs for it; .worst_matching: the most the denying
 *     program runs; .worst_path_bound: issue 21's bound beside the value,
 *     3 instructions for each program but one plus the most one program
 *     runs (which doc/design.md shows no stack serving both request
 *     kinds can meet).
 * Nothing is asserted: the numbers go to the JSON file named by the
 * argument (a measured path above the compiler bound is printed).
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
#include "cbpf/cbpf_internal.h"
#include "denylist.h"
#include "filter/filter_internal.h"
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
	int rc;

	for (size_t i = 0; i < n; i++)
		set[i] = (uint32_t)rnd();
	rc = denylist4_new(NULL, set, n, 0, &f);
	if (rc)
		die("deny-list", rc);
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

/* A program that ran at most this many instructions for a request ran its
 * pre-check alone (doc/design.md: at most 6); the search of a part of
 * hundreds of points runs far more. */
#define PRECHECK_MAX 8

enum { INET, MAPPED };

struct paths {
	uint32_t total[2], outside[2], other;
	uint32_t own[2]; /* the most the program whose search ran ran */
	uint32_t nonmatching_per_prog, matching;
	uint32_t progs, compiles;
	uint32_t bound[2], bound_outside[2];
};

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

/* Every stacked program on one context: the instructions run; the longest
 * run of a program whose search ran through *own (0 if none ran it). */
static uint32_t run_stack(struct paths *w, const struct iour_prog *head, const uint8_t ctx[40],
			  uint32_t *own)
{
	uint32_t total = 0;

	*own = 0;
	for (const struct iour_prog *p = head; p; p = p->next) {
		uint32_t n, ret = iour__cbpf_run_unchecked(p->insns, ctx, &n);

		total += n;
		if (ret && n > w->nonmatching_per_prog)
			w->nonmatching_per_prog = n;
		if (!ret && n > w->matching)
			w->matching = n;
		if (n > PRECHECK_MAX && n > *own)
			*own = n;
	}
	return total;
}

static uint32_t max32(uint32_t a, uint32_t b)
{
	return a > b ? a : b;
}

/* The loaded word of an IPv4 address (host order) and back: the address
 * bytes as the kernel stores them, read in the host's order. */
static uint32_t word_of(uint32_t addr)
{
	return __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? __builtin_bswap32(addr) : addr;
}

static int cmp_u32(const void *x, const void *y)
{
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;

	return a < b ? -1 : a > b;
}

/*
 * The pre-check costs doc/design.md states: a program that does not hold
 * the request runs cost[kind][program index & 1][above its range].
 */
static const uint32_t precheck_cost[2][2][2] = {
	[INET] = { { 5, 4 }, { 4, 5 } },
	[MAPPED] = { { 5, 6 }, { 6, 5 } },
};

/* The compiler bounds of the top comment for n programs. */
static void compiler_bounds(struct paths *w, uint32_t n)
{
	for (int k = 0; k < 2; k++) {
		uint32_t out = 0, in = 0;

		/* a request above programs [0, g) and below [g, n) (outside
		 * all), or held by program g, above [0, g), below (g, n) */
		for (uint32_t g = 0; g <= n; g++) {
			uint32_t below = 0, above = 0;

			for (uint32_t j = 0; j < n; j++)
				if (j < g)
					above += precheck_cost[k][j & 1][1];
				else if (j > g)
					below += precheck_cost[k][j & 1][0];
			if (g < n)
				in = max32(in, above + below);
			out = max32(out, above + below + (g < n ? precheck_cost[k][g & 1][0] : 0));
		}
		w->bound_outside[k] = out;
		w->bound[k] = max32(out, in + w->own[k]);
	}
}

/* The worst paths of the stack compiled from `f` (see the top comment). */
static struct paths worst_paths(const struct iour_filter *f, const uint64_t *set, size_t n)
{
	struct iour__compile_cfg cfg = { .big_endian = __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__,
					 .max_insns = IOUR_MAX_INSNS };
	struct iour__stack_stats ss = { 0 };
	struct iour_prog *head = NULL;
	struct paths w = { 0 };
	uint32_t *words = malloc((2 * n + 2) * sizeof(*words)), own;
	size_t m = 0, nw;
	uint8_t ctx[40];
	char why[256];
	int rc = iour__filter_compile_stack(f, OP_CONNECT, &cfg, &ss, &head, why, sizeof(why));

	if (rc)
		die(why, rc);
	if (!words)
		die("malloc", -ENOMEM);
	w.progs = ss.progs;
	w.compiles = ss.compiles;
	for (const struct iour_prog *p = head; p; p = p->next)
		if (iour_cbpf_validate(p->insns, p->cnt, 0, NULL))
			die("validate", -EINVAL);
	for (size_t i = 0; i < n; i++)
		words[m++] = word_of((uint32_t)set[i]);
	qsort(words, m, sizeof(*words), cmp_u32);
	nw = 0;
	for (size_t i = 0; i < m; i++)
		if (!nw || words[nw - 1] != words[i])
			words[nw++] = words[i];
	/* unlisted: next to each listed word, and below them all */
	m = nw;
	for (size_t i = 0; i < nw; i++)
		if (words[i] != UINT32_MAX && (i + 1 == nw || words[i + 1] != words[i] + 1))
			words[m++] = words[i] + 1;
	if (words[0] > 1)
		words[m++] = 1;
	for (size_t i = 0; i < m; i++)
		for (int k = 0; k < 2; k++) {
			uint32_t t;

			ctx4(ctx, word_of(words[i]), k == MAPPED);
			t = run_stack(&w, head, ctx, &own);
			w.total[k] = max32(w.total[k], t);
			w.own[k] = max32(w.own[k], own);
			if (!own)
				w.outside[k] = max32(w.outside[k], t);
		}
	{
		struct sockaddr_in6 sa6 = { .sin6_family = AF_INET6, .sin6_port = htons(80) };
		struct sockaddr su = { .sa_family = AF_UNIX };

		sa6.sin6_addr.s6_addr[15] = 1;
		iour_ctx_generic(ctx, 40, OP_CONNECT, 0, 1);
		iour_ctx_connect(ctx, 40, &sa6, sizeof(sa6));
		w.other = max32(w.other, run_stack(&w, head, ctx, &own));
		iour_ctx_generic(ctx, 40, OP_CONNECT, 0, 1);
		iour_ctx_connect(ctx, 40, &su, sizeof(su));
		w.other = max32(w.other, run_stack(&w, head, ctx, &own));
		ctx4(ctx, 0, false);
		w.other = max32(w.other, run_stack(&w, head, ctx, &own));
	}
	compiler_bounds(&w, w.progs);
	free(words);
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

/* The lower bounds of doc/design.md for n programs: ceil(7n/2) and
 * ceil(11n/2). */
static uint32_t min_inet(uint32_t n)
{
	return (7 * n + 1) / 2;
}

static uint32_t min_mapped(uint32_t n)
{
	return (11 * n + 1) / 2;
}

static uint32_t worst_total(const struct paths *w)
{
	return max32(max32(w->total[INET], w->total[MAPPED]), w->other);
}

static void print_paths(const struct paths *w)
{
	static const char *const kind[2] = { "AF_INET", "mapped " };

	printf("stack random n=100000: %u programs, %u compiles; worst path through all "
	       "programs %u instructions (a non-denying program at most %u, the denying one at "
	       "most %u)\n",
	       w->progs, w->compiles, worst_total(w), w->nonmatching_per_prog, w->matching);
	for (int k = 0; k < 2; k++) {
		printf("  %s worst %u (compiler bound %u), outside every range %u (compiler "
		       "bound %u, least possible %u)\n",
		       kind[k], w->total[k], w->bound[k], w->outside[k], w->bound_outside[k],
		       k == INET ? min_inet(w->progs) : min_mapped(w->progs));
		if (w->total[k] > w->bound[k] || w->outside[k] > w->bound_outside[k])
			printf("  %s: MEASURED PATH ABOVE THE COMPILER BOUND (doc/design.md)\n",
			       kind[k]);
	}
}

static void json_paths(FILE *out, const struct paths *w, int progs)
{
	fprintf(out,
		", \"compiles\": %u, \"worst_path_total\": %u, \"worst_path_total_inet\": %u, "
		"\"worst_path_total_mapped\": %u, \"worst_path_outside_inet\": %u, "
		"\"worst_path_outside_mapped\": %u, \"worst_path_compiler_bound_inet\": %u, "
		"\"worst_path_compiler_bound_mapped\": %u, \"worst_path_min_inet\": %u, "
		"\"worst_path_min_mapped\": %u, \"worst_path_min\": %u, "
		"\"min_per_prog_one_kind\": 4, \"min_per_prog_both_kinds\": 5, "
		"\"worst_path_bound\": %u, \"worst_nonmatching_per_prog\": %u, "
		"\"worst_matching\": %u",
		w->compiles, worst_total(w), w->total[INET], w->total[MAPPED], w->outside[INET],
		w->outside[MAPPED], w->bound[INET], w->bound[MAPPED], min_inet(w->progs),
		min_mapped(w->progs), max32(min_inet(w->progs), min_mapped(w->progs)),
		worst_path_bound(w, progs), w->nonmatching_per_prog, w->matching);
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
				print_paths(&wp);
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
				json_paths(out, &wp, res[s][i].progs);
			fprintf(out, "}, ");
		}
		fprintf(out, "\"us_per_entry_n100000_vs_n1000\": %.4f}",
			(res[s][2].ms / 100000.0) / (res[s][0].ms / 1000.0));
	}
	fprintf(out, "}}\n");
	fclose(out);
	return 0;
}
