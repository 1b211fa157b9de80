/* SPDX-License-Identifier: MIT */
/*
 * prove-gen: the random policies of the differential test
 * (tests/unit/test_filter_diff.c, generator tests/common/refgen.c) as a job
 * list for tools/prove/iour-prove (`make prove`, mk/prove.mk).
 *
 * For each policy: its rules (the test's own description, through
 * ref_to_cmp()), its compiled program for this host's byte order and, for
 * every other policy, for the other byte order and without path
 * specialisation; and the test's requests encoded as contexts with the
 * reference model's verdict (ref_eval()).  The prover checks its own
 * statement of the rules against those verdicts on every context, then
 * proves each program against it for all contexts.
 *
 * Usage: prove-gen SEED COUNT > jobs.json
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cbpf_gen.h"
#include "filter/filter_internal.h"
#include "refeval.h"
#include "refgen.h"

#define CTX_PER_POLICY 50

static bool host_be(void)
{
	const uint16_t one = 1;

	return *(const uint8_t *)&one == 0;
}

static void put_job(const struct ref_policy *pol, const struct ref_req *reqs, size_t nreq, bool be,
		    bool unspec, uint64_t idx, bool *first)
{
	struct iour__compile_cfg cfg = {
		.big_endian = be,
		.max_insns = IOUR_MAX_INSNS,
		.spec_budget = unspec ? 1 : 0,
	};
	struct iour_filter *f = NULL;
	struct iour_prog *p = NULL;
	uint32_t dflt = pol->has_default ? pol->dflt : pol->filter_dflt;
	const struct iour_insn *in;
	int rc;

	rc = ref_build(pol, &f);
	if (!rc)
		rc = iour__filter_compile_cfg(f, pol->opcode, &cfg, NULL, &p);
	if (rc) {
		fprintf(stderr, "prove-gen: policy %" PRIu64 ": build or compile failed: %d\n", idx,
			rc);
		exit(1);
	}
	printf("%s{\"name\":\"random %" PRIu64 "%s%s\",\"opcode\":%u,\"default\":%u,"
	       "\"addr4_literal\":%s,\"big_endian\":%s,\"rules\":[",
	       *first ? "" : ",\n", idx, be != host_be() ? " (other byte order)" : "",
	       unspec ? " (unspecialised)" : "", pol->opcode, dflt,
	       pol->addr4_literal ? "true" : "false", be ? "true" : "false");
	*first = false;
	for (size_t i = 0; i < pol->nrules; i++) {
		printf("%s{\"verdict\":%u,\"cmps\":[", i ? "," : "", pol->rules[i].verdict);
		for (size_t j = 0; j < pol->rules[i].ncmps; j++) {
			struct iour_cmp c;

			ref_to_cmp(&pol->rules[i].cmps[j], &c);
			printf("%s{\"field\":%u,\"op\":%u,\"value\":%" PRIu64 ",\"arg\":%" PRIu64
			       ",\"set\":[",
			       j ? "," : "", c.field, c.op, c.value, c.arg);
			for (uint64_t k = 0; c.set && k < c.set_len; k++)
				printf("%s%" PRIu64, k ? "," : "", c.set[k]);
			printf("],\"addr6\":\"");
			for (size_t k = 0; k < 16; k++)
				printf("%02x", c.addr6[k]);
			printf("\"}");
		}
		printf("]}");
	}
	printf("],\"programs\":[[");
	in = iour_prog__insns(p);
	for (size_t i = 0; i < iour_prog__insn_cnt(p); i++)
		printf("%s[%u,%u,%u,%u]", i ? "," : "", in[i].code, in[i].jt, in[i].jf, in[i].k);
	printf("]],\"contexts\":[");
	for (size_t i = 0; i < nreq; i++) {
		uint8_t ctx[40];

		ref_encode(&reqs[i], be, ctx);
		printf("%s[\"", i ? "," : "");
		for (size_t k = 0; k < sizeof(ctx); k++)
			printf("%02x", ctx[k]);
		printf("\",%u]", ref_eval(pol, &reqs[i]));
	}
	printf("]}");
	iour_prog__free(p);
	iour_filter__free(f);
}

/*
 * Programs of the checker tests (tests/common/cbpf_gen.c): half meant to
 * be valid and using every instruction io_uring allows, half near the
 * checker's boundary.  Each goes with the validator's answer and, when
 * accepted, with the simulator's verdicts on generated contexts: the
 * prover must prove every accepted program safe and give the simulator's
 * verdict on each context from its own reading of the program.
 */
static void put_program_check(struct gen_rng *r, uint64_t idx)
{
	static struct iour_insn prog[IOUR_MAX_INSNS];
	struct iour_validate_info vi = { .sz = sizeof(vi) };
	size_t n = idx % 2 ? gen_runnable(r, prog, 64) : gen_near_valid(r, prog, 64);
	bool ok = iour_cbpf_validate(prog, n, 0, &vi) == 0;

	printf(",\n{\"name\":\"program %" PRIu64 "\",\"check_program\":true,\"accepted\":%s,"
	       "\"programs\":[[",
	       idx, ok ? "true" : "false");
	for (size_t i = 0; i < n; i++)
		printf("%s[%u,%u,%u,%u]", i ? "," : "", prog[i].code, prog[i].jt, prog[i].jf,
		       prog[i].k);
	printf("]],\"contexts\":[");
	for (size_t i = 0; ok && i < 20; i++) {
		struct iour_sim_result sr = { .sz = sizeof(sr) };
		uint8_t ctx[40];

		gen_ctx(r, ctx);
		if (iour_cbpf_run(prog, n, ctx, sizeof(ctx), &sr)) {
			fprintf(stderr, "prove-gen: the simulator refused an accepted program\n");
			exit(1);
		}
		printf("%s[\"", i ? "," : "");
		for (size_t k = 0; k < sizeof(ctx); k++)
			printf("%02x", ctx[k]);
		printf("\",%u]", sr.allowed);
	}
	printf("]}");
}

int main(int argc, char **argv)
{
	struct ref_req reqs[CTX_PER_POLICY];
	struct gen_rng r;
	uint64_t seed, n;
	bool first = true;

	if (argc != 3) {
		fprintf(stderr, "usage: %s SEED COUNT\n", argv[0]);
		return 2;
	}
	seed = strtoull(argv[1], NULL, 0);
	n = strtoull(argv[2], NULL, 0);
	gen_seed(&r, seed);
	printf("{\"jobs\":[\n");
	for (uint64_t i = 0; i < n; i++) {
		static struct ref_policy pol;

		refgen_policy(&r, &pol);
		for (size_t j = 0; j < CTX_PER_POLICY; j++)
			refgen_req(&r, &pol, &reqs[j]);
		put_job(&pol, reqs, CTX_PER_POLICY, host_be(), false, i, &first);
		if (i % 2 == 0)
			put_job(&pol, reqs, CTX_PER_POLICY, !host_be(), false, i, &first);
		if (i % 4 == 0)
			put_job(&pol, reqs, CTX_PER_POLICY, host_be(), true, i, &first);
	}
	for (uint64_t i = 0; i < n; i++)
		put_program_check(&r, i);
	printf("\n]}\n");
	return fflush(stdout) ? 1 : 0;
}
