/* SPDX-License-Identifier: MIT */
/*
 * Large deny-lists through policy files: a JSON policy whose CONNECT
 * deny-list holds 100,000 addresses (a prefix, a range of 60,000 and
 * 40,000 scattered addresses) loads, is split across stacked filters
 * (doc/design.md, "Stacked filters"), and iour_policy__decide() agrees
 * with the simulator running every stacked program and with the rules
 * themselves; its JSON save round-trips.  An allow-list too large for one
 * program is refused with a message naming the opcode and why.
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "filter/filter_internal.h"
#include "iouring_restrict/iouring_restrict.h"
#include "plan/planner.h"

#define OP_CONNECT 16
#define NSCATTER 40000U
#define RANGE_LO 0xAC100000U /* 172.16.0.0 */
#define RANGE_N 60000U       /* to 172.16.234.95 */

static uint32_t scatter[NSCATTER];

static uint32_t rnd(uint64_t *s)
{
	*s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
	return (uint32_t)(*s >> 32);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* 40,000 distinct odd addresses in 192.0.0.0 - 222.255.255.255 (none
 * adjacent: they stay separate entries after merging). */
static void make_scatter(void)
{
	uint64_t s = 12345;
	uint32_t n = 0;

	while (n < NSCATTER) {
		uint32_t a = (0xC0000000U + rnd(&s) % 0x1F000000U) | 1U;

		scatter[n++] = a;
		if (n == NSCATTER) {
			uint32_t i, k = 1;

			qsort(scatter, n, sizeof(*scatter), cmp_u32);
			for (i = 1; i < n; i++)
				if (scatter[i] != scatter[k - 1])
					scatter[k++] = scatter[i];
			n = k;
		}
	}
}

static char *big_policy(const char *action, bool with_allow_tail)
{
	size_t cap = (size_t)NSCATTER * 20 + 4096, len = 0;
	char *t = malloc(cap);
	uint32_t i;

	cr_assert_not_null(t);
	len += (size_t)snprintf(
		t + len, cap - len,
		"{\"defaultAction\": \"deny\", \"entries\": [\n"
		" {\"names\": [\"nop\"], \"action\": \"allow\"},\n"
		" {\"names\": [\"connect\"], \"action\": \"%s\", \"args\": [{\"field\": "
		"\"connect.addr4\", \"op\": \"in\", \"value\": \"10.0.0.0/8\"}]},\n"
		" {\"names\": [\"connect\"], \"action\": \"%s\", \"args\": [{\"field\": "
		"\"connect.addr4\", \"op\": \"in\", \"range\": [\"172.16.0.0\", \"172.16.234.95\"]}]},\n"
		" {\"names\": [\"connect\"], \"action\": \"%s\", \"args\": [{\"field\": "
		"\"connect.addr4\", \"op\": \"in\", \"values\": [",
		action, action, action);
	for (i = 0; i < NSCATTER; i++)
		len += (size_t)snprintf(t + len, cap - len, "%s\"%u.%u.%u.%u\"", i ? ", " : "",
					scatter[i] >> 24, (scatter[i] >> 16) & 0xff,
					(scatter[i] >> 8) & 0xff, scatter[i] & 0xff);
	len += (size_t)snprintf(
		t + len, cap - len, "]}]}%s\n]}\n",
		with_allow_tail ? ",\n {\"names\": [\"connect\"], \"action\": \"allow\", \"args\": "
				  "[{\"field\": \"connect.family\", \"op\": \"==\", "
				  "\"value\": \"AF_INET\"}]}" :
				  "");
	cr_assert_lt(len, cap);
	return t;
}

static void connect_ctx(uint8_t *ctx, uint32_t addr)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(443) };

	sin.sin_addr.s_addr = htonl(addr);
	cr_assert_eq(iour_ctx_generic(ctx, IOUR_CTX_SIZE, OP_CONNECT, 0, 0), 0);
	cr_assert_eq(iour_ctx_connect(ctx, IOUR_CTX_SIZE, &sin, sizeof(sin)), 0);
}

/* What the rules say, written out independently of the library. */
static bool rules_deny(uint32_t a)
{
	return (a >> 24) == 10 || (a >= RANGE_LO && a < RANGE_LO + RANGE_N) ||
	       bsearch(&a, scatter, NSCATTER, sizeof(*scatter), cmp_u32) != NULL;
}

/* The conjunction of every stacked program, run by the simulator. */
static bool sim_allows(const struct iour_policy *p, const uint8_t *ctx, uint32_t *nprogs)
{
	bool allow = true;

	*nprogs = 0;
	for (const struct iour_prog *q = p->progs[OP_CONNECT]; q; q = q->next) {
		struct iour_sim_result r = { .sz = sizeof(r) };

		cr_assert_eq(q->kind, IOUR_PROG_FILTER);
		cr_assert_eq(iour_cbpf_run(q->insns, q->cnt, ctx, IOUR_CTX_SIZE, &r), 0);
		allow = allow && r.allowed;
		(*nprogs)++;
	}
	return allow;
}

Test(policyfile_stack, json_100k_deny_list_is_stacked_and_decides_like_the_rules, .timeout = 600)
{
	struct iour_load_error err = { .sz = sizeof(err) };
	struct iour_policy *p = NULL, *q = NULL;
	char *text, *saved, *saved2;
	uint64_t s = 99;
	uint32_t i, n, decided = 0, simulated = 0;
	int cnt, len;

	make_scatter();
	text = big_policy("deny", true);
	cr_assert_eq(iour_policy__load_json(text, strlen(text), NULL, &p, &err), 0, "%u:%u %s",
		     err.line, err.column, err.message);
	cnt = iour_policy__prog_cnt(p, OP_CONNECT);
	cr_assert_gt(cnt, 1, "100,000 addresses must need stacked programs, got %d", cnt);
	cr_assert_eq(iour_policy__prog_cnt(p, 22), 0); /* READ: not named */
	cr_assert_eq(iour_policy__prog_cnt(p, 256), -EINVAL);

	/* Every program is registered by a level-5 (7.2) plan: one step per program. */
	{
		IOUR_OPTS(iour_plan_opts, po, .flags = IOUR_PLAN_FORCE_LEVEL, .level = 5);
		struct iour_plan *pl = NULL;
		int steps = 0, k;

		cr_assert_eq(iour_policy__plan(p, &po, &pl), 0);
		for (k = 0; k < iour_plan__step_cnt(pl); k++) {
			struct iour_plan_step st = { .sz = sizeof(st) };

			cr_assert_eq(iour_plan__step(pl, (size_t)k, &st), 0);
			steps += st.op == IOUR_STEP_BPF_FILTER && st.opcode == OP_CONNECT;
		}
		cr_assert_eq(steps, cnt, "%d filter steps for %d programs", steps, cnt);
		iour_plan__free(pl);
	}

	/* The simulator over every program agrees with the rules: each
	 * scattered address, its neighbours, the edges of the range and the
	 * prefix, and random addresses. */
	for (i = 0; i < NSCATTER + 1000; i++) {
		uint32_t a, m;
		uint8_t ctx[IOUR_CTX_SIZE];

		if (i < NSCATTER && i % 16 > 2)
			continue; /* a sample: 3 of every 16 */
		if (i < NSCATTER)
			a = scatter[i] + (i % 16) - 1; /* the address or a neighbour */
		else if (i < NSCATTER + 8)
			a = (uint32_t[]){ RANGE_LO - 1,       RANGE_LO,    RANGE_LO + RANGE_N - 1,
					  RANGE_LO + RANGE_N, 0x09FFFFFFU, 0x0A000000U,
					  0x0AFFFFFFU,        0x0B000000U }[i - NSCATTER];
		else
			a = rnd(&s);
		connect_ctx(ctx, a);
		cr_assert_eq(sim_allows(p, ctx, &m), !rules_deny(a), "address %08x", a);
		cr_assert_eq(m, (uint32_t)cnt);
		simulated++;
		/* iour_policy__decide() on a sample (it compiles the rule that
		 * held, so it is slower than the simulator alone). */
		if (i % 12000 == 0 || (i >= NSCATTER && i < NSCATTER + 8)) {
			struct iour_request_verdict v = { .sz = sizeof(v) };

			cr_assert_eq(iour_policy__decide(p, ctx, sizeof(ctx), &v), 0);
			cr_assert_eq(v.verdict == IOUR_ALLOW, !rules_deny(a), "address %08x", a);
			cr_assert_eq(v.reason, IOUR_DECIDE_RULE, "address %08x", a);
			cr_assert_eq(v.rule,
				     rules_deny(a) ?
					     (a >> 24 == 10                           ? 0U :
					      a >= RANGE_LO && a < RANGE_LO + RANGE_N ? 1U :
											2U) :
					     3U,
				     "address %08x: rule %u", a, v.rule);
			decided++;
		}
	}
	cr_assert_geq(decided, 12);
	cr_log_info("policyfile_stack: %d stacked CONNECT programs; %u contexts simulated, %u "
		    "decided",
		    cnt, simulated, decided);

	/* The JSON save round-trips: same text again, same programs. */
	len = iour_policy__save_json(p, 0, NULL, 0);
	cr_assert_gt(len, 0);
	saved = malloc((size_t)len + 1);
	cr_assert_eq(iour_policy__save_json(p, 0, saved, (size_t)len + 1), len);
	cr_assert_eq(iour_policy__load_json(saved, strlen(saved), NULL, &q, &err), 0, "%s",
		     err.message);
	cr_assert_eq(iour_policy__prog_cnt(q, OP_CONNECT), cnt);
	for (const struct iour_prog *x = p->progs[OP_CONNECT], *y = q->progs[OP_CONNECT]; x || y;
	     x = x->next, y = y->next) {
		cr_assert(x && y);
		cr_assert_eq(x->cnt, y->cnt);
		cr_assert_eq(memcmp(x->insns, y->insns, x->cnt * sizeof(*x->insns)), 0);
	}
	saved2 = malloc((size_t)len + 1);
	cr_assert_eq(iour_policy__save_json(q, 0, saved2, (size_t)len + 1), len);
	cr_assert_str_eq(saved, saved2);
	(void)n;
	free(saved);
	free(saved2);
	free(text);
	iour_policy__free(q);
	iour_policy__free(p);
}

Test(policyfile_stack, json_100k_allow_list_is_refused_naming_the_opcode_and_why)
{
	struct iour_load_error err = { .sz = sizeof(err) };
	struct iour_policy *p = NULL;
	char *text;

	make_scatter();
	text = big_policy("allow", false);
	cr_assert_eq(iour_policy__load_json(text, strlen(text), NULL, &p, &err),
		     -IOUR_ERRNO__PROG_TOO_LARGE);
	cr_assert_null(p);
	cr_assert_not_null(strstr(err.message, "CONNECT"), "%s", err.message);
	cr_assert_not_null(strstr(err.message, "allow-list cannot be split"), "%s", err.message);
	cr_assert_str_eq(err.path, "entries");
	cr_assert_gt(err.line, 0);
	free(text);
}
