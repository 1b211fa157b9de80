/* SPDX-License-Identifier: MIT */
/*
 * iour_plan__get_ruleset(): what a plan's restriction step enforces, as
 * the library decodes it, against the step's raw 16-byte entries decoded
 * here on their own, the way the kernel reads them (doc/kernel.md 1.5, 2.3
 * and 2.4: coupled gates are both on once a set is registered, split gates
 * only for a side with an entry, zero entries gate both, a later flags
 * entry replaces an earlier one).  Random policies (classic parts, an
 * argument filter, both targets) on every kernel generation the library
 * describes; the all-allowing classic part, which plans no restriction
 * step; the argument errors.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iouring_restrict/iouring_restrict.h"

#define N_POLICIES 250
#define OP_SOCKET 45
#define SQE_VALID 0x7fU

/* xorshift64*: the same policies on every run, a failure names its seed. */
static uint64_t rng_next(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ULL;
}

static unsigned int rng_below(uint64_t *s, unsigned int n)
{
	return (unsigned int)(rng_next(s) % n);
}

/* SOCKET: AF_INET only (family at payload offset 16). */
static const struct iour_insn inet_only[] = {
	{ 0x20, 0, 0, 16 }, { 0x15, 0, 1, 2 }, { 0x06, 0, 0, 1 }, { 0x06, 0, 0, 0 },
};

/* The test's own reading of a restriction step's entries. */
struct oracle {
	bool sqe_gate, reg_gate;
	bool sqe[256], reg[256];
	unsigned int allowed, required;
};

static void oracle_decode(const uint8_t *ents, size_t n, bool split, struct oracle *o)
{
	memset(o, 0, sizeof(*o));
	o->sqe_gate = o->reg_gate = !split || n == 0;
	for (size_t i = 0; i < n; i++) {
		const uint8_t *e = ents + 16 * i;
		unsigned int kind = (unsigned int)e[0] | (unsigned int)e[1] << 8;

		cr_assert_eq(e[3], 0, "resv of entry %zu", i);
		switch (kind) {
		case 0: /* IORING_RESTRICTION_REGISTER_OP */
			o->reg[e[2]] = o->reg_gate = true;
			break;
		case 1: /* IORING_RESTRICTION_SQE_OP */
			o->sqe[e[2]] = o->sqe_gate = true;
			break;
		case 2: /* IORING_RESTRICTION_SQE_FLAGS_ALLOWED */
			o->allowed = e[2];
			o->sqe_gate = true;
			break;
		case 3: /* IORING_RESTRICTION_SQE_FLAGS_REQUIRED */
			o->required = e[2];
			o->sqe_gate = true;
			break;
		default:
			cr_assert_fail("entry %zu has kind %u", i, kind);
		}
	}
}

/* The restriction step of @pl on @side: its entries in a malloc'ed copy
 * (*ents), their count; -1 if the plan has none on that side. */
static int step_entries(const struct iour_plan *pl, uint32_t side, uint8_t **ents)
{
	struct iour_plan_step st = { .sz = sizeof(st) };
	int n = iour_plan__step_cnt(pl);

	*ents = NULL;
	for (int i = 0; i < n; i++) {
		uint8_t *arg;
		size_t len = 0, hdr = side == IOUR_STEP_TASK ? 16 : 0;

		cr_assert_eq(iour_plan__step(pl, (size_t)i, &st), 0);
		if (st.side != side || st.op != IOUR_STEP_RESTRICTIONS)
			continue;
		cr_assert_eq(iour_plan__step_arg(pl, (size_t)i, NULL, &len), 0);
		cr_assert_eq(len, hdr + 16 * (size_t)st.entries);
		arg = malloc(len);
		cr_assert_not_null(arg);
		cr_assert_eq(iour_plan__step_arg(pl, (size_t)i, arg, &len), 0);
		if (hdr) /* the task header's nr_res */
			cr_assert_eq((unsigned int)arg[2] | (unsigned int)arg[3] << 8, st.entries);
		*ents = malloc(16 * (size_t)st.entries + 1);
		cr_assert_not_null(*ents);
		memcpy(*ents, arg + hdr, 16 * (size_t)st.entries);
		free(arg);
		return (int)st.entries;
	}
	return -1;
}

/* The getter against the oracle on one side of @pl; returns whether the
 * plan had a restriction step there. */
static bool compare_side(const struct iour_plan *pl, uint32_t side, const char *what)
{
	struct iour_plan_info info = { .sz = sizeof(info) };
	struct iour_ruleset *rs = (struct iour_ruleset *)&info; /* must be overwritten */
	uint32_t allowed = 0, required = 0;
	struct oracle o;
	uint8_t *ents;
	int n, decided;

	cr_assert_eq(iour_plan__info(pl, &info), 0);
	cr_assert_eq(iour_plan__get_ruleset(pl, side, &rs), 0, "%s", what);
	n = step_entries(pl, side, &ents);
	if (n < 0) {
		cr_assert_null(rs, "%s side %u: no restriction step, yet a set", what, side);
		return false;
	}
	cr_assert_not_null(rs, "%s side %u: a restriction step, yet no set", what, side);
	oracle_decode(ents, (size_t)n, info.split_gates, &o);
	cr_assert_eq(iour_ruleset__sqe_restricted(rs), o.sqe_gate, "%s side %u", what, side);
	cr_assert_eq(iour_ruleset__register_restricted(rs), o.reg_gate, "%s side %u", what, side);
	for (uint32_t op = 0; op < IOUR_OP__COUNT; op++)
		cr_assert_eq(iour_ruleset__sqe_op_allowed(rs, op), !o.sqe_gate || o.sqe[op],
			     "%s side %u: request opcode %u", what, side, op);
	for (uint32_t op = 0; op < IOUR_REGISTER__COUNT; op++)
		cr_assert_eq(iour_ruleset__register_op_allowed(rs, op), !o.reg_gate || o.reg[op],
			     "%s side %u: register opcode %u", what, side, op);
	cr_assert_eq(iour_ruleset__sqe_op_allowed(rs, IOUR_OP__COUNT), -ERANGE);
	decided = iour_ruleset__sqe_flags(rs, &allowed, &required);
	cr_assert_eq(decided, o.sqe_gate, "%s side %u", what, side);
	if (o.sqe_gate) {
		cr_assert_eq(allowed, o.allowed | o.required, "%s side %u", what, side);
		cr_assert_eq(required, o.required, "%s side %u", what, side);
	} else {
		cr_assert_eq(allowed, SQE_VALID);
		cr_assert_eq(required, 0);
	}
	/* Every SQE flag combination: the kernel's flag test, both ways. */
	for (unsigned int fl = 0; fl <= SQE_VALID && o.sqe_gate; fl++) {
		bool kernel = (fl & o.required) == o.required && !(fl & ~(o.allowed | o.required));
		bool lib = (fl & required) == required && !(fl & ~allowed);

		cr_assert_eq(lib, kernel, "%s side %u: SQE flags %#x", what, side, fl);
	}
	/* Exported again for the plan's kernel, the set gives the same bytes. */
	{
		struct iour_export_opts eo = { .sz = sizeof(eo),
					       .op_last = info.op_last,
					       .reg_last = info.reg_last,
					       .flags = info.split_gates ? IOUR_EXPORT_SPLIT :
									   IOUR_EXPORT_COUPLED };
		uint8_t buf[16 * 600];
		size_t len = sizeof(buf);

		cr_assert_eq(iour_ruleset__export(rs, &eo, buf, &len), n, "%s side %u", what,
			     side);
		cr_assert_eq(len, 16 * (size_t)n);
		cr_assert(!memcmp(buf, ents, len), "%s side %u: export differs", what, side);
	}
	free(ents);
	iour_ruleset__free(rs);
	return true;
}

static struct iour_ruleset *random_ruleset(uint64_t *s)
{
	struct iour_ruleset *rs;
	bool sqe_list = rng_below(s, 4) != 0, ops = false;

	cr_assert_eq(iour_ruleset__new(NULL, &rs), 0);
	if (sqe_list) {
		cr_assert_eq(iour_ruleset__deny_all_sqe_ops(rs), 0);
		for (uint32_t op = 0; op < IOUR_OP__COUNT; op++)
			if (rng_below(s, 3) == 0) {
				cr_assert_eq(iour_ruleset__allow_sqe_op(rs, op), 0);
				ops = true;
			}
	}
	if (rng_below(s, 4) != 0) {
		cr_assert_eq(iour_ruleset__deny_all_register_ops(rs), 0);
		for (uint32_t op = 0; op < IOUR_REGISTER__COUNT; op++)
			if (rng_below(s, 3) == 0)
				cr_assert_eq(iour_ruleset__allow_register_op(rs, op), 0);
	}
	if (ops || rng_below(s, 2)) {
		uint32_t required = rng_below(s, 4) == 0 ? rng_below(s, SQE_VALID + 1) : 0;
		uint32_t allowed = rng_below(s, 3) == 0 ? SQE_VALID : rng_below(s, SQE_VALID + 1);

		cr_assert_eq(iour_ruleset__set_sqe_flags(rs, allowed, required), 0);
	}
	return rs;
}

/* Kernel descriptions from the library's tables, and forced levels. */
static const uint32_t kvers[] = { IOUR_KVER(5, 10), IOUR_KVER(5, 15), IOUR_KVER(6, 1),
				  IOUR_KVER(6, 12), IOUR_KVER(6, 18), IOUR_KVER(7, 0),
				  IOUR_KVER(7, 2) };

static int plan_for(const struct iour_policy *p, size_t k, uint32_t flags, struct iour_plan **pl)
{
	struct iour_plan_opts po = { .sz = sizeof(po), .flags = flags };
	struct iour_features f = { .sz = sizeof(f) };
	size_t nk = sizeof(kvers) / sizeof(kvers[0]);

	if (k < nk) {
		cr_assert_eq(iour_kernel_describe(kvers[k], &f), 0);
		po.features = &f;
	} else {
		po.flags |= IOUR_PLAN_FORCE_LEVEL;
		po.level = (uint32_t)(k - nk) + 2; /* levels 2 to 5 */
	}
	return iour_policy__plan(p, &po, pl);
}

#define N_KERNELS (sizeof(kvers) / sizeof(kvers[0]) + 4)

Test(plan_ruleset, random_policies_match_the_raw_entries)
{
	uint64_t seed = 0x9e3779b97f4a7c15ULL;
	unsigned int planned = 0, steps = 0, none = 0, refused = 0;

	for (int i = 0; i < N_POLICIES; i++) {
		struct iour_ruleset *rs = random_ruleset(&seed);
		struct iour_policy *p;
		uint32_t target = rng_below(&seed, 2) ? IOUR_POLICY_TARGET_RING :
							IOUR_POLICY_TARGET_TASK;
		bool brokered = target == IOUR_POLICY_TARGET_TASK && rng_below(&seed, 3) == 0;

		cr_assert_eq(iour_policy__new(NULL, &p), 0);
		cr_assert_eq(iour_policy__set_ruleset(p, rs), 0);
		iour_ruleset__free(rs);
		cr_assert_eq(iour_policy__set_attr(p, IOUR_POLICY_ATTR_TARGET, target), 0);
		if (rng_below(&seed, 3) == 0)
			cr_assert_eq(iour_policy__set_prog(p, OP_SOCKET, inet_only, 4, 12), 0);
		cr_assert_eq(iour_policy__set_attr(p, IOUR_POLICY_ATTR_DEFAULT,
						   rng_below(&seed, 2) ? IOUR_POLICY_DEFAULT_ALLOW :
									 IOUR_POLICY_DEFAULT_DENY),
			     0);
		cr_assert_eq(iour_policy__set_attr(p, IOUR_POLICY_ATTR_NO_FILTER_FALLBACK,
						   rng_below(&seed, 2) ?
							   IOUR_POLICY_FALLBACK_OPEN :
							   IOUR_POLICY_FALLBACK_CLOSED),
			     0);
		for (size_t k = 0; k < N_KERNELS; k++) {
			struct iour_plan *pl = NULL;
			char what[96];
			int r = plan_for(p, k, brokered ? IOUR_PLAN_BROKERED : 0, &pl);

			snprintf(what, sizeof(what), "policy %d (target %u%s), kernel #%zu", i,
				 target, brokered ? ", brokered" : "", k);
			if (r) {
				/* The classic part may not be expressible on a path. */
				cr_assert(r == -EPERM || r == -EBUSY || r == -EACCES, "%s: %d", what,
					  r);
				refused++;
				continue;
			}
			planned++;
			for (uint32_t side = 0; side < 2; side++) {
				if (compare_side(pl, side, what))
					steps++;
				else
					none++;
			}
			iour_plan__free(pl);
		}
		iour_policy__free(p);
	}
	fprintf(stderr, "plan_ruleset: %u plans, %u restriction steps decoded, %u sides without "
		"one, %u refused by the planner\n", planned, steps, none, refused);
	cr_assert_geq(planned, N_POLICIES * N_KERNELS * 9 / 10);
	cr_assert_geq(steps, planned / 2);
}

/* A classic part that allows everything plans no restriction step: the
 * ring and the task get NULL, though the policy's own part is a set. */
Test(plan_ruleset, all_allowing_classic_part_restricts_nothing)
{
	for (int variant = 0; variant < 3; variant++) {
		struct iour_ruleset *rs = NULL, *got;
		struct iour_policy *p;
		uint8_t *ents;

		cr_assert_eq(iour_policy__new(NULL, &p), 0);
		cr_assert_eq(iour_policy__set_attr(p, IOUR_POLICY_ATTR_DEFAULT,
						   IOUR_POLICY_DEFAULT_ALLOW),
			     0);
		if (variant > 0) {
			cr_assert_eq(iour_ruleset__new(NULL, &rs), 0);
			if (variant == 2)
				cr_assert_eq(iour_ruleset__set_sqe_flags(rs, SQE_VALID, 0), 0);
			cr_assert_eq(iour_policy__set_ruleset(p, rs), 0);
			iour_ruleset__free(rs);
			cr_assert_eq(iour_policy__get_ruleset(p, &got), 0);
			cr_assert_not_null(got, "the policy has a classic part");
			iour_ruleset__free(got);
		}
		for (uint32_t target = 0; target < 2; target++) {
			cr_assert_eq(iour_policy__set_attr(p, IOUR_POLICY_ATTR_TARGET,
							   target ? IOUR_POLICY_TARGET_RING :
								    IOUR_POLICY_TARGET_TASK),
				     0);
			for (size_t k = 0; k < N_KERNELS; k++) {
				struct iour_plan *pl = NULL;

				cr_assert_eq(plan_for(p, k, 0, &pl), 0);
				for (uint32_t side = 0; side < 2; side++) {
					got = (struct iour_ruleset *)pl;
					cr_assert_eq(iour_plan__get_ruleset(pl, side, &got), 0);
					cr_assert_null(got, "variant %d target %u kernel #%zu side "
						       "%u", variant, target, k, side);
					cr_assert_eq(step_entries(pl, side, &ents), -1);
				}
				iour_plan__free(pl);
			}
		}
		iour_policy__free(p);
	}
}

/* Only the register side restricted, on Linux 6.18 (coupled) and 7.2
 * (split): the same policy, two different enforcements. */
Test(plan_ruleset, open_side_on_coupled_and_split_kernels)
{
	struct iour_ruleset *rs, *got;
	struct iour_policy *p;
	struct iour_plan *pl;
	uint32_t allowed, required;

	cr_assert_eq(iour_ruleset__new(NULL, &rs), 0);
	cr_assert_eq(iour_ruleset__allow_register_op(rs, 0 /* REGISTER_BUFFERS */), 0);
	cr_assert_eq(iour_policy__new(NULL, &p), 0);
	cr_assert_eq(iour_policy__set_ruleset(p, rs), 0);
	iour_ruleset__free(rs);
	cr_assert_eq(iour_policy__set_attr(p, IOUR_POLICY_ATTR_TARGET, IOUR_POLICY_TARGET_RING), 0);
	cr_assert_eq(iour_policy__set_attr(p, IOUR_POLICY_ATTR_DEFAULT, IOUR_POLICY_DEFAULT_ALLOW), 0);

	/* 6.18: the SQE gate is on too, every opcode below 63 listed, 0x7f. */
	cr_assert_eq(plan_for(p, 4, 0, &pl), 0);
	cr_assert_eq(iour_plan__get_ruleset(pl, IOUR_STEP_RING, &got), 0);
	cr_assert_not_null(got);
	cr_assert_eq(iour_ruleset__sqe_restricted(got), 1);
	for (uint32_t op = 0; op < IOUR_OP__COUNT; op++)
		cr_assert_eq(iour_ruleset__sqe_op_allowed(got, op), op < 63, "opcode %u", op);
	cr_assert_eq(iour_ruleset__sqe_flags(got, &allowed, &required), 1);
	cr_assert_eq(allowed, SQE_VALID);
	cr_assert_eq(required, 0);
	cr_assert_eq(iour_ruleset__register_op_allowed(got, 0), 1);
	cr_assert_eq(iour_ruleset__register_op_allowed(got, 2), 0);
	iour_ruleset__free(got);
	cr_assert_eq(iour_plan__get_ruleset(pl, IOUR_STEP_TASK, &got), 0);
	cr_assert_null(got);
	iour_plan__free(pl);

	/* 7.2: only the register gate. */
	cr_assert_eq(plan_for(p, 6, 0, &pl), 0);
	cr_assert_eq(iour_plan__get_ruleset(pl, IOUR_STEP_RING, &got), 0);
	cr_assert_not_null(got);
	cr_assert_eq(iour_ruleset__sqe_restricted(got), 0);
	cr_assert_eq(iour_ruleset__sqe_flags(got, NULL, NULL), 0);
	cr_assert_eq(iour_ruleset__register_restricted(got), 1);
	cr_assert_eq(iour_ruleset__register_op_allowed(got, 0), 1);
	cr_assert_eq(iour_ruleset__register_op_allowed(got, 2), 0);
	iour_ruleset__free(got);
	iour_plan__free(pl);
	iour_policy__free(p);
}

/* A plan the compatibility level refused has no steps: NULL, not an
 * error. */
Test(plan_ruleset, refused_plan_has_no_set)
{
	struct iour_plan_info info = { .sz = sizeof(info) };
	struct iour_ruleset *rs, *got;
	struct iour_policy *p;
	struct iour_plan *pl;

	cr_assert_eq(iour_ruleset__new(NULL, &rs), 0);
	cr_assert_eq(iour_ruleset__allow_sqe_op(rs, OP_SOCKET), 0);
	cr_assert_eq(iour_ruleset__set_sqe_flags(rs, 0, 0), 0);
	cr_assert_eq(iour_policy__new(NULL, &p), 0);
	cr_assert_eq(iour_policy__set_ruleset(p, rs), 0);
	iour_ruleset__free(rs);
	/* A filter the level 2 kernel cannot register: not exact there. */
	cr_assert_eq(iour_policy__set_prog(p, OP_SOCKET, inet_only, 4, 12), 0);
	cr_assert_eq(iour_policy__set_attr(p, IOUR_POLICY_ATTR_TARGET, IOUR_POLICY_TARGET_RING), 0);
	cr_assert_eq(iour_policy__set_attr(p, IOUR_POLICY_ATTR_COMPAT, IOUR_POLICY_COMPAT_HARD), 0);
	cr_assert_eq(plan_for(p, N_KERNELS - 4, 0, &pl), 0);
	cr_assert_eq(iour_plan__info(pl, &info), 0);
	cr_assert(info.flags & IOUR_PLAN_INFO_REFUSED);
	for (uint32_t side = 0; side < 2; side++) {
		got = (struct iour_ruleset *)pl;
		cr_assert_eq(iour_plan__get_ruleset(pl, side, &got), 0);
		cr_assert_null(got);
	}
	iour_plan__free(pl);
	iour_policy__free(p);
}

Test(plan_ruleset, argument_errors)
{
	struct iour_ruleset *got = (struct iour_ruleset *)&got;
	struct iour_policy *p;
	struct iour_plan *pl;

	cr_assert_eq(iour_policy__new(NULL, &p), 0);
	cr_assert_eq(plan_for(p, 6, 0, &pl), 0);
	cr_assert_eq(iour_plan__get_ruleset(NULL, IOUR_STEP_RING, &got), -EINVAL);
	cr_assert_eq(got, (struct iour_ruleset *)&got, "untouched on -EINVAL");
	cr_assert_eq(iour_plan__get_ruleset(pl, IOUR_STEP_RING, NULL), -EINVAL);
	cr_assert_eq(iour_plan__get_ruleset(pl, 2, &got), -EINVAL);
	cr_assert_eq(iour_plan__get_ruleset(pl, UINT32_MAX, &got), -EINVAL);
	cr_assert_eq(got, (struct iour_ruleset *)&got);
	iour_plan__free(pl);
	iour_policy__free(p);
}
