/* SPDX-License-Identifier: MIT */
/*
 * Three-way differential test of the filter compiler.
 *
 * Random policies (tests/common/refgen.c) x requests aimed at their edges,
 * each verdict computed three ways:
 *   1. the reference model (tests/common/refeval.c), straight from the
 *      test's own description of the policy;
 *   2. the library's simulator, iour_cbpf_run(), on the compiled program;
 *   3. the running kernel's classic-BPF engine on the same program
 *      (tests/common/kernel_oracle.c).
 * Programs are compiled for this host's byte order and, through the
 * internal entry point, for the other one: a big-endian program runs on
 * big-endian context bytes, which the socket-filter oracle loads exactly
 * as a big-endian kernel would.  Every program must pass the validator
 * and SO_ATTACH_FILTER.  IOUR_TEST_SEED reproduces a run; IOUR_TEST_LONG
 * scales it up ten times.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cbpf_gen.h"
#include "filter/filter_internal.h"
#include "iouring_restrict/iouring_restrict.h"
#include "kernel_oracle.h"
#include "progcheck.h"
#include "refeval.h"
#include "refgen.h"

#define CTX_PER_POLICY 50

struct diff_counts {
	uint64_t policies, cases, cases_be, cases_unspec, mismatches, always, filters;
	uint64_t unspec_aborted; /* compiles that really fell back */
	uint64_t long_jumps;     /* programs that needed trampolines */
	uint64_t insns_max;
	uint64_t both_verdicts; /* policies whose requests met both verdicts */
};

static void dump_failure(const struct ref_policy *pol, const struct ref_req *q,
			 const struct iour_prog *p, const char *what, int want, int got)
{
	char buf[8192];
	size_t len = sizeof(buf);

	ref_policy_str(pol, buf, sizeof(buf));
	fprintf(stderr, "MISMATCH (%s): reference %d, got %d\n%s", what, want, got, buf);
	ref_req_str(q, buf, sizeof(buf));
	fprintf(stderr, "request: %s\n", buf);
	if (iour_cbpf_disasm(iour_prog__insns(p), iour_prog__insn_cnt(p), pol->opcode,
			     IOUR_DISASM_TEXT, buf, &len) == 0)
		fprintf(stderr, "%s\n", buf);
}

/* Compile, check acceptance, run every request three ways. */
static void run_policy(struct kernel_oracle *o, const struct ref_policy *pol,
		       const struct ref_req *reqs, size_t nreq, bool be, bool unspec,
		       struct diff_counts *dc)
{
	struct iour_filter *f = NULL;
	struct iour_prog *p = NULL, *p2 = NULL;
	struct iour_validate_info vi = { .sz = sizeof(vi) };
	struct iour__compile_cfg cfg = {
		.big_endian = be,
		.max_insns = IOUR_MAX_INSNS,
		.spec_budget = unspec ? 1 : 0,
	};
	struct iour__compile_stats st;
	int rc;

	rc = ref_build(pol, &f);
	cr_assert_eq(rc, 0, "building a generated policy failed: %d", rc);
	rc = iour__filter_compile_cfg(f, pol->opcode, &cfg, &st, &p);
	cr_assert_eq(rc, 0, "compile failed: %d", rc);
	dc->long_jumps += st.trampolines > 0;
	if (unspec)
		dc->unspec_aborted += st.spec_aborted;
	/* deterministic output */
	rc = iour__filter_compile_cfg(f, pol->opcode, &cfg, NULL, &p2);
	cr_assert_eq(rc, 0);
	cr_assert_eq(iour_prog__insn_cnt(p), iour_prog__insn_cnt(p2));
	cr_assert(!memcmp(iour_prog__insns(p), iour_prog__insns(p2),
			  iour_prog__insn_cnt(p) * sizeof(struct iour_insn)),
		  "two compiles of one filter differ");
	iour_prog__free(p2);

	rc = iour_cbpf_validate(iour_prog__insns(p), iour_prog__insn_cnt(p), 0, &vi);
	cr_assert_eq(rc, 0, "validator rejects compiled program at %u: %s", vi.insn,
		     iour_cbpf_reject_str(vi.reason));
	cr_assert_eq(prog_redundant_loads(iour_prog__insns(p), iour_prog__insn_cnt(p)), 0,
		     "a jump lands on a load of the word A already holds");
	rc = oracle_attach(o, iour_prog__insns(p), iour_prog__insn_cnt(p));
	if (rc == -ENOMEM) {
		/* Replaced filters are freed after an RCU grace period and stay
		 * charged to the socket until then: start a fresh socket pair. */
		oracle_close(o);
		cr_assert_eq(oracle_open(o), 0);
		rc = oracle_attach(o, iour_prog__insns(p), iour_prog__insn_cnt(p));
	}
	cr_assert_eq(rc, 0, "SO_ATTACH_FILTER rejects compiled program: %d", rc);
	if (iour_prog__insn_cnt(p) > dc->insns_max)
		dc->insns_max = iour_prog__insn_cnt(p);
	if (iour_prog__kind(p) == IOUR_PROG_FILTER)
		dc->filters++;
	else
		dc->always++;

	unsigned seen = 0;

	for (size_t i = 0; i < nreq; i++) {
		uint8_t ctx[40];
		struct iour_sim_result sr = { .sz = sizeof(sr) };
		int want = (int)ref_eval(pol, &reqs[i]), ker;

		ref_encode(&reqs[i], be, ctx);
		if (be)
			ref_swap_words(ctx);
		rc = iour_cbpf_run(iour_prog__insns(p), iour_prog__insn_cnt(p), ctx, 40, &sr);
		cr_assert_eq(rc, 0);
		ker = oracle_run(o, ctx, NULL);
		cr_assert_geq(ker, 0, "oracle failed: %d", ker);
		if ((int)sr.allowed != want) {
			dc->mismatches++;
			dump_failure(pol, &reqs[i], p, be ? "simulator, big-endian" : "simulator",
				     want, (int)sr.allowed);
		}
		if (ker != want) {
			dc->mismatches++;
			dump_failure(pol, &reqs[i], p, be ? "kernel, big-endian" : "kernel", want, ker);
		}
		/* a constant program must agree with its kind */
		if (iour_prog__kind(p) == IOUR_PROG_ALWAYS_ALLOW)
			cr_assert_eq(want, 1);
		if (iour_prog__kind(p) == IOUR_PROG_ALWAYS_DENY)
			cr_assert_eq(want, 0);
		seen |= 1U << want;
		if (unspec)
			dc->cases_unspec++;
		else if (be)
			dc->cases_be++;
		else
			dc->cases++;
		cr_assert_eq(dc->mismatches, 0, "stopping at the first mismatch");
	}
	if (seen == 3 && !be && !unspec)
		dc->both_verdicts++;
	iour_prog__free(p);
	iour_filter__free(f);
}

Test(filter_diff, three_way_random_policies, .timeout = 600)
{
	struct kernel_oracle o;
	struct gen_rng r;
	struct diff_counts dc = { 0 };
	uint64_t seed = gen_test_seed(0x5eed0f11e7ULL);
	uint64_t npol = gen_test_count(2200, 22000);
	struct ref_req reqs[CTX_PER_POLICY];

	cr_assert_eq(oracle_open(&o), 0);
	gen_seed(&r, seed);
	for (uint64_t i = 0; i < npol; i++) {
		struct ref_policy pol;

		refgen_policy(&r, &pol);
		for (size_t j = 0; j < CTX_PER_POLICY; j++)
			refgen_req(&r, &pol, &reqs[j]);
		run_policy(&o, &pol, reqs, CTX_PER_POLICY, false, false, &dc);
		run_policy(&o, &pol, reqs, CTX_PER_POLICY, true, false, &dc);
		/* every fourth policy also without path specialisation (the
		 * graph the compiler falls back to when the budget runs out) */
		if (i % 4 == 0)
			run_policy(&o, &pol, reqs, CTX_PER_POLICY, false, true, &dc);
		dc.policies++;
	}
	oracle_close(&o);
	fprintf(stderr,
		"filter_diff: seed %#llx: %llu policies (%llu filters, %llu constant), "
		"%llu cases native + %llu cases big-endian + %llu cases unspecialised "
		"(%llu fallbacks), "
		"each reference vs simulator vs "
		"kernel: %llu mismatches; %llu policies met both verdicts; largest program "
		"%llu insns; %llu programs with long jumps\n",
		(unsigned long long)seed, (unsigned long long)dc.policies,
		(unsigned long long)dc.filters, (unsigned long long)dc.always,
		(unsigned long long)dc.cases, (unsigned long long)dc.cases_be,
		(unsigned long long)dc.cases_unspec, (unsigned long long)dc.unspec_aborted,
		(unsigned long long)dc.mismatches, (unsigned long long)dc.both_verdicts,
		(unsigned long long)dc.insns_max, (unsigned long long)dc.long_jumps);
	cr_assert_eq(dc.mismatches, 0);
	cr_assert_gt(dc.unspec_aborted, dc.policies / 8, "the fallback path was hardly exercised");
	cr_assert_geq(dc.cases, gen_test_count(100000, 1000000));
}
