/* SPDX-License-Identifier: MIT */
/*
 * The compiler skips path specialisation for a graph that is one interval
 * map over one field with leaf targets (lib/filter/filter_compile.c, spec_emit();
 * doc/design.md, "Where a small filter's compile time goes").  The claim
 * behind the skip is that specialising such a graph changes nothing.  This
 * test checks it: random runs of one-comparison rules on every scalar
 * field (every interval operator, IPv4 prefixes, 1 to 40 rules, both
 * verdicts, both defaults, both byte orders) compiled with the skip and
 * with specialisation forced must give the same program, instruction for
 * instruction, and the skip must really have been taken.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cbpf_gen.h"
#include "filter/filter_internal.h"
#include "iouring_restrict/iouring_restrict.h"

static const uint32_t opcodes[] = { 0, 16, 18, 28, 45 }; /* NOP CONNECT OPENAT OPENAT2 SOCKET */

static const uint32_t interval_ops[] = {
	IOUR_CMP_EQ,	 IOUR_CMP_NE,	      IOUR_CMP_LT,	 IOUR_CMP_LE,
	IOUR_CMP_GT,	 IOUR_CMP_GE,	      IOUR_CMP_IN_SET,	 IOUR_CMP_NOT_IN_SET,
	IOUR_CMP_IN_RANGE, IOUR_CMP_NOT_IN_RANGE, IOUR_CMP_IN_PREFIX, IOUR_CMP_NOT_IN_PREFIX,
};

/* A value of the field, clustered so that the rules' intervals meet,
 * overlap and nest; sometimes the field's extremes. */
static uint64_t pick(struct gen_rng *r, uint64_t valid, uint64_t base)
{
	uint64_t v;

	switch (gen_below(r, 6)) {
	case 0:
		v = 0;
		break;
	case 1:
		v = valid;
		break;
	case 2:
		v = gen_u64(r);
		break;
	default:
		v = base + gen_below(r, 24);
		break;
	}
	return v & valid;
}

/* One random comparison on `field`, added if the builder takes it (it
 * refuses an operator the field does not take); the caller checks that
 * some rule was added. */
static void random_rule(struct gen_rng *r, struct iour_filter *f, uint32_t opcode, uint32_t field,
			uint64_t valid, uint64_t base)
{
	uint64_t set[12], a, b;
	struct iour_cmp c;

	memset(&c, 0, sizeof(c));
	c.sz = sizeof(c);
	c.field = field;
	c.op = interval_ops[gen_below(r, IOUR_ARRAY_SIZE(interval_ops))];
	switch (c.op) {
	case IOUR_CMP_IN_SET:
	case IOUR_CMP_NOT_IN_SET:
		c.set_len = 1 + gen_below(r, IOUR_ARRAY_SIZE(set));
		for (size_t i = 0; i < c.set_len; i++)
			set[i] = pick(r, valid, base);
		c.set = set;
		break;
	case IOUR_CMP_IN_RANGE:
	case IOUR_CMP_NOT_IN_RANGE:
		a = pick(r, valid, base);
		b = pick(r, valid, base);
		c.value = a < b ? a : b;
		c.arg = a < b ? b : a;
		break;
	case IOUR_CMP_IN_PREFIX:
	case IOUR_CMP_NOT_IN_PREFIX:
		if (field != IOUR_FIELD_CONNECT_ADDR4)
			return;
		c.value = pick(r, valid, base);
		c.arg = gen_below(r, 33);
		break;
	default:
		c.value = pick(r, valid, base);
		break;
	}
	(void)iour_filter__add_rule(f, opcode, gen_chance(r, 50) ? IOUR_ALLOW : IOUR_DENY, &c, 1);
}

static struct iour_prog *compile(const struct iour_filter *f, uint32_t opcode, bool be,
				 bool always, struct iour__compile_stats *st)
{
	struct iour__compile_cfg cfg = { .big_endian = be,
					 .max_insns = IOUR_MAX_INSNS,
					 .spec_always = always };
	struct iour_prog *p = NULL;
	int rc = iour__filter_compile_cfg(f, opcode, &cfg, st, &p);

	cr_assert_eq(rc, 0, "compile failed: %d", rc);
	return p;
}

Test(filter_spec_skip, one_field_maps_gain_nothing_from_specialisation, .timeout = 300)
{
	struct gen_rng r;
	uint64_t seed = 0x5eed5bec1a11ULL, skipped = 0, cases = 0, perfield[64] = { 0 };

	if (getenv("IOUR_TEST_SEED"))
		seed = strtoull(getenv("IOUR_TEST_SEED"), NULL, 0);
	gen_seed(&r, seed);
	for (uint32_t field = 1; field < 64; field++) {
		uint64_t valid = iour__field_valid_bits(field);
		uint32_t opcode = UINT32_MAX;

		if (!valid) /* not a field, or connect.addr6 (not a number) */
			continue;
		for (size_t i = 0; i < IOUR_ARRAY_SIZE(opcodes); i++)
			if (iour__field_for_opcode(field, opcodes[i])) {
				opcode = opcodes[i];
				break;
			}
		cr_assert_neq(opcode, UINT32_MAX, "field %u belongs to no tested opcode", field);
		for (int round = 0; round < 150; round++) {
			struct iour_filter_opts o = { .sz = sizeof(o),
						      .default_verdict = gen_chance(&r, 50) ?
									 IOUR_ALLOW :
									 IOUR_DENY };
			uint64_t base = gen_u64(&r) & valid;
			uint32_t nrules = 1 + gen_below(&r, round < 50 ? 3 : 40);
			struct iour_filter *f;

			cr_assert_eq(iour_filter__new(&o, &f), 0);
			for (uint32_t i = 0; i < nrules; i++)
				random_rule(&r, f, opcode, field, valid, base);
			if (iour_filter__opcode_info(f, opcode, &(struct iour_filter_opinfo){
									.sz = sizeof(struct iour_filter_opinfo) })) {
				iour_filter__free(f); /* every rule was rejected */
				continue;
			}
			for (int be = 0; be < 2; be++) {
				struct iour__compile_stats s1, s2;
				struct iour_prog *p1 = compile(f, opcode, be, false, &s1);
				struct iour_prog *p2 = compile(f, opcode, be, true, &s2);

				cases++;
				cr_assert_eq(s2.spec_skipped, 0);
				skipped += s1.spec_skipped;
				perfield[field] += s1.spec_skipped;
				cr_assert_eq(iour_prog__insn_cnt(p1), iour_prog__insn_cnt(p2),
					     "field %u, seed %#llx: %zu instructions skipping, %zu "
					     "specialised",
					     field, (unsigned long long)seed, iour_prog__insn_cnt(p1),
					     iour_prog__insn_cnt(p2));
				cr_assert(!memcmp(iour_prog__insns(p1), iour_prog__insns(p2),
						  iour_prog__insn_cnt(p1) * sizeof(struct iour_insn)),
					  "field %u, seed %#llx: the programs differ", field,
					  (unsigned long long)seed);
				iour_prog__free(p1);
				iour_prog__free(p2);
			}
			iour_filter__free(f);
		}
	}
	printf("spec skip: %llu of %llu compiles skipped specialisation, each the same program\n",
	       (unsigned long long)skipped, (unsigned long long)cases);
	/* not vacuous: every field without a family guard took the skip */
	for (uint32_t field = 1; field < 64; field++) {
		uint64_t valid = iour__field_valid_bits(field);

		if (!valid || field == IOUR_FIELD_CONNECT_ADDR4)
			continue;
		cr_expect_gt(perfield[field], 20, "field %u took the skip %llu times", field,
			     (unsigned long long)perfield[field]);
	}
	cr_assert_gt(skipped, cases / 3);
}
