/* SPDX-License-Identifier: MIT */
/* Property: for random rulesets (required SQE flags included) and every
 * kernel generation the library knows, the exported restriction entries,
 * read the way the kernel reads them (doc/kernel.md 2.1 to 2.4), allow
 * exactly what the ruleset's own queries allow, for every request opcode
 * and SQE flag combination and every register opcode the target knows.
 * Opcodes beyond the target's limits must be reported as clamped. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "iouring_restrict/iouring_restrict.h"
#include "kernel_facts_oracle.h"

#define N_RULESETS 300

/* A small deterministic generator (xorshift64*): the same rulesets on
 * every run, so a failure names a reproducible seed. */
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

/* The kernel's view of a registered set (doc/kernel.md 2.1 to 2.4). */
struct kview {
	uint64_t sqe[4], reg[4];
	unsigned int allowed, required;
	bool has_sqe, has_reg, has_allowed;
	int n_reg_entries;
};

static bool bit(const uint64_t *bm, unsigned int n)
{
	return (bm[n / 64] >> (n % 64)) & 1;
}

static void decode(const struct iour_restriction *e, int n, struct kview *kv)
{
	memset(kv, 0, sizeof(*kv));
	for (int i = 0; i < n; i++) {
		cr_assert_eq(e[i].resv, 0);
		for (size_t j = 0; j < sizeof(e[i].resv2) / sizeof(e[i].resv2[0]); j++)
			cr_assert_eq(e[i].resv2[j], 0);
		switch (e[i].opcode) {
		case IOUR_RESTRICTION_REGISTER_OP:
			kv->reg[e[i].arg / 64] |= 1ULL << (e[i].arg % 64);
			kv->has_reg = true;
			kv->n_reg_entries++;
			break;
		case IOUR_RESTRICTION_SQE_OP:
			kv->sqe[e[i].arg / 64] |= 1ULL << (e[i].arg % 64);
			kv->has_sqe = true;
			break;
		case IOUR_RESTRICTION_SQE_FLAGS_ALLOWED:
			kv->allowed = e[i].arg;
			kv->has_sqe = kv->has_allowed = true;
			break;
		case IOUR_RESTRICTION_SQE_FLAGS_REQUIRED:
			kv->required = e[i].arg;
			kv->has_sqe = true;
			break;
		default:
			cr_assert_fail("unknown restriction kind %u", e[i].opcode);
		}
	}
	if (n == 0)
		kv->has_sqe = kv->has_reg = true;
}

struct target {
	uint32_t kver, flags;
	int op_last, reg_last;
	bool split;
};

/* The kernel's verdict on one SQE (opcode, flags). */
static bool k_sqe(const struct kview *kv, const struct target *t, unsigned int op, unsigned int fl)
{
	bool gated = t->split ? kv->has_sqe : true;

	if (!gated)
		return true;
	return bit(kv->sqe, op) && (fl & kv->required) == kv->required &&
	       (fl & ~(kv->allowed | kv->required)) == 0;
}

static bool k_reg(const struct kview *kv, const struct target *t, unsigned int op)
{
	bool gated = t->split ? kv->has_reg : true;

	return !gated || bit(kv->reg, op);
}

/* The ruleset's own answer for one SQE. */
static bool r_sqe(const struct iour_ruleset *rs, unsigned int op, unsigned int fl)
{
	uint32_t allowed = 0, required = 0;
	int a = iour_ruleset__sqe_op_allowed(rs, op);

	cr_assert_geq(a, 0);
	cr_assert_geq(iour_ruleset__sqe_flags(rs, &allowed, &required), 0);
	return a && (fl & required) == required && (fl & ~allowed) == 0;
}

static struct iour_ruleset *random_ruleset(uint64_t *s, char *desc, size_t dlen)
{
	struct iour_ruleset *rs = NULL;
	unsigned int sqe_mode = rng_below(s, 10), reg_mode = rng_below(s, 10);
	unsigned int fl_mode = rng_below(s, 10);
	int pos = 0;

	cr_assert_eq(iour_ruleset__new(NULL, &rs), 0);
	/* SQE side: 0-2 open, 3 deny all, else a random allow-list (dense or
	 * sparse, often including opcodes newer than old targets know). */
	if (sqe_mode == 3) {
		cr_assert_eq(iour_ruleset__deny_all_sqe_ops(rs), 0);
	} else if (sqe_mode > 3) {
		unsigned int density = 1 + rng_below(s, 8);

		for (unsigned int op = 0; op < IOUR_OP__COUNT; op++)
			if (rng_below(s, 8) < density)
				cr_assert_eq(iour_ruleset__allow_sqe_op(rs, op), 0);
	}
	if (reg_mode == 3) {
		cr_assert_eq(iour_ruleset__deny_all_register_ops(rs), 0);
	} else if (reg_mode > 3) {
		unsigned int density = rng_below(s, 8);

		for (unsigned int op = 0; op < IOUR_REGISTER__COUNT; op++)
			if (rng_below(s, 8) < density)
				cr_assert_eq(iour_ruleset__allow_register_op(rs, op), 0);
	}
	/* Flags: 0 undecided; 1-3 every flag allowed and some required (the
	 * case that must still gate the SQE side on split kernels); 4 open
	 * (0x7f, none required); else random masks. */
	if (fl_mode >= 1 && fl_mode <= 3) {
		unsigned int req = 1U << rng_below(s, 7);

		if (fl_mode == 3)
			req |= rng_next(s) & IOUR_SQE__VALID;
		cr_assert_eq(iour_ruleset__set_sqe_flags(rs, IOUR_SQE__VALID, req), 0);
	} else if (fl_mode == 4) {
		cr_assert_eq(iour_ruleset__set_sqe_flags(rs, IOUR_SQE__VALID, 0), 0);
	} else if (fl_mode > 4) {
		unsigned int al = (unsigned int)rng_next(s) & IOUR_SQE__VALID;
		unsigned int req = (unsigned int)rng_next(s) & al & (unsigned int)rng_next(s);

		cr_assert_eq(iour_ruleset__set_sqe_flags(rs, al, req), 0);
	}
	pos = snprintf(desc, dlen, "sqe_mode %u reg_mode %u fl_mode %u", sqe_mode, reg_mode,
		       fl_mode);
	cr_assert_lt((size_t)pos, dlen);
	return rs;
}

/* Every kernel generation the name tables know (5.10 onwards), each with
 * its default gate semantics, plus the newest with each forced. */
static int targets(struct target *t, int cap)
{
	int n = 0;

	for (uint32_t maj = 5; maj <= 9; maj++) {
		for (uint32_t min = 0; min <= 30; min++) {
			uint32_t kv = IOUR_KVER(maj, min);
			int ol, rl;

			if (kv < ORACLE_KVER_RING_RESTRICTIONS)
				continue;
			ol = iour_opcode_last(kv);
			rl = iour_register_op_last(kv);
			if (ol <= 0 || rl <= 0)
				continue;
			/* Keep one version per (limits, semantics) change. */
			if (n > 0 && t[n - 1].op_last == ol && t[n - 1].reg_last == rl &&
			    t[n - 1].split == (kv >= ORACLE_KVER_SPLIT_GATES))
				continue;
			cr_assert_lt(n, cap);
			t[n++] = (struct target){ kv, 0, ol, rl, kv >= ORACLE_KVER_SPLIT_GATES };
		}
	}
	cr_assert_geq(n, 6, "too few kernel generations: %d", n);
	cr_assert(t[n - 1].split, "the newest generation must have split gates");
	cr_assert(!t[0].split);
	cr_assert_lt(n + 2, cap);
	t[n] = t[n - 1];
	t[n].flags = IOUR_EXPORT_COUPLED;
	t[n++].split = false;
	t[n] = t[0];
	t[n].flags = IOUR_EXPORT_SPLIT;
	t[n++].split = true;
	return n;
}

static void check_one(const struct iour_ruleset *rs, const struct target *t, const char *desc)
{
	struct iour_restriction ents[600];
	struct iour_clamp_report clamp = { .sz = sizeof(clamp) };
	IOUR_OPTS(iour_export_opts, o, .kver = t->kver, .flags = t->flags, .clamp = &clamp);
	size_t len = sizeof(ents);
	uint32_t allowed = 0, required = 0;
	unsigned int n_drop_sqe = 0, n_drop_reg = 0;
	struct kview kv;
	int n;

	n = iour_ruleset__export(rs, &o, ents, &len);
	if (iour_ruleset__sqe_flags(rs, &allowed, &required) == 0 &&
	    iour_ruleset__sqe_restricted(rs) == 1) {
		bool any = false;

		for (unsigned int op = 0; op < IOUR_OP__COUNT; op++)
			any |= iour_ruleset__sqe_op_allowed(rs, op) == 1;
		if (any) {
			cr_assert_eq(n, -ENOMSG, "%s kver %#x: undecided flags: %d", desc, t->kver,
				     n);
			return;
		}
	}
	cr_assert_gt(n, 0, "%s kver %#x: export %d", desc, t->kver, n);
	cr_assert_eq(len, (size_t)n * sizeof(ents[0]));
	decode(ents, n, &kv);
	if (n > 0 && (iour_ruleset__sqe_restricted(rs) == 1 || !t->split))
		cr_assert(kv.has_allowed, "%s kver %#x: SQE side without a flags entry", desc,
			  t->kver);

	for (unsigned int op = 0; op < 256; op++) {
		if (op >= (unsigned int)t->op_last) {
			cr_assert(!bit(kv.sqe, op), "%s: opcode %u beyond op_last %d", desc, op,
				  t->op_last);
			if (op < IOUR_OP__COUNT && iour_ruleset__sqe_restricted(rs) == 1 &&
			    iour_ruleset__sqe_op_allowed(rs, op) == 1)
				n_drop_sqe++;
			continue;
		}
		for (unsigned int fl = 0; fl <= IOUR_SQE__VALID; fl++)
			cr_assert_eq(k_sqe(&kv, t, op, fl), r_sqe(rs, op, fl),
				     "%s kver %#x flags %#x (%s): op %u sqe flags %#x: kernel %d "
				     "ruleset %d",
				     desc, t->kver, t->flags, t->split ? "split" : "coupled", op,
				     fl, k_sqe(&kv, t, op, fl), r_sqe(rs, op, fl));
	}
	for (unsigned int op = 0; op < 256; op++) {
		int want;

		if (op >= (unsigned int)t->reg_last) {
			cr_assert(!bit(kv.reg, op), "%s: register op %u beyond reg_last", desc, op);
			if (op < IOUR_REGISTER__COUNT &&
			    iour_ruleset__register_restricted(rs) == 1 &&
			    iour_ruleset__register_op_allowed(rs, op) == 1)
				n_drop_reg++;
			continue;
		}
		want = iour_ruleset__register_op_allowed(rs, op);
		/* The sentinel (doc/kernel.md 2.5): on split gates a register
		 * allow-list with nothing the kernel knows is ENABLE_RINGS
		 * alone, which an enabled ring can only fail. */
		if (t->split && op == IOUR_REGISTER_ENABLE_RINGS && want == 0 &&
		    kv.n_reg_entries == 1 && k_reg(&kv, t, op))
			continue;
		cr_assert_eq(k_reg(&kv, t, op), want == 1,
			     "%s kver %#x (%s): register op %u: kernel %d ruleset %d", desc,
			     t->kver, t->split ? "split" : "coupled", op, k_reg(&kv, t, op), want);
	}
	cr_assert_eq(clamp.n_sqe_ops, n_drop_sqe, "%s kver %#x: clamped SQE ops", desc, t->kver);
	cr_assert_eq(clamp.n_register_ops, n_drop_reg, "%s kver %#x: clamped register ops", desc,
		     t->kver);
}

Test(prop_ruleset, export_means_the_ruleset_on_every_kernel)
{
	struct target t[64];
	int nt = targets(t, 64);
	uint64_t seed = 0x9e3779b97f4a7c15ULL;
	int required_only = 0;

	for (int i = 0; i < N_RULESETS; i++) {
		char desc[96];
		uint64_t s0 = seed;
		struct iour_ruleset *rs = random_ruleset(&seed, desc, sizeof(desc));
		uint32_t al = 0, req = 0;
		char full[160];

		snprintf(full, sizeof(full), "ruleset %d (seed %#llx, %s)", i,
			 (unsigned long long)s0, desc);
		if (iour_ruleset__sqe_flags(rs, &al, &req) == 1 && al == IOUR_SQE__VALID &&
		    req != 0 && iour_ruleset__sqe_restricted(rs) == 0)
			required_only++;
		for (int k = 0; k < nt; k++)
			check_one(rs, &t[k], full);
		iour_ruleset__free(rs);
	}
	/* The generator must keep producing the case where only a required
	 * flag gates the SQE side. */
	cr_assert_geq(required_only, 10, "only %d required-only rulesets", required_only);
}

/* The same property for the edge rulesets a random walk may miss. */
Test(prop_ruleset, edge_rulesets_on_every_kernel)
{
	struct target t[64];
	int nt = targets(t, 64);

	for (int c = 0; c < 8; c++) {
		struct iour_ruleset *rs = NULL;
		char desc[32];

		cr_assert_eq(iour_ruleset__new(NULL, &rs), 0);
		switch (c) {
		case 1:
			cr_assert_eq(iour_ruleset__set_sqe_flags(rs, IOUR_SQE__VALID,
								 IOUR_SQE_FIXED_FILE),
				     0);
			break;
		case 2:
			cr_assert_eq(iour_ruleset__deny_all_sqe_ops(rs), 0);
			cr_assert_eq(iour_ruleset__deny_all_register_ops(rs), 0);
			break;
		case 3:
			cr_assert_eq(iour_ruleset__deny_all_register_ops(rs), 0);
			break;
		case 4:
			cr_assert_eq(iour_ruleset__allow_register_op(rs, IOUR_REGISTER__COUNT - 1),
				     0);
			break;
		case 5:
			cr_assert_eq(iour_ruleset__allow_sqe_op(rs, IOUR_OP__COUNT - 1), 0);
			cr_assert_eq(iour_ruleset__set_sqe_flags(rs, 0, 0), 0);
			break;
		case 6:
			cr_assert_eq(iour_ruleset__set_sqe_flags(rs, 0, 0), 0);
			break;
		case 7:
			cr_assert_eq(iour_ruleset__allow_sqe_op(rs, 0), 0);
			cr_assert_eq(
				iour_ruleset__set_sqe_flags(rs, IOUR_SQE__VALID, IOUR_SQE__VALID),
				0);
			break;
		default:
			break;
		}
		snprintf(desc, sizeof(desc), "edge case %d", c);
		for (int k = 0; k < nt; k++)
			check_one(rs, &t[k], desc);
		iour_ruleset__free(rs);
	}
}

/* Property (ruleset.h): the allowed mask a ruleset reports includes its
 * required flags (a required flag is implicitly allowed), for every pair
 * of masks. */
Test(prop_ruleset, required_flags_are_allowed)
{
	for (uint32_t a = 0; a <= IOUR_SQE__VALID; a++)
		for (uint32_t r = 0; r <= IOUR_SQE__VALID; r += 1 + (a & 7)) {
			struct iour_ruleset *rs = NULL;
			uint32_t ga = 0, gr = 0;

			if ((a | r) & ~(uint32_t)IOUR_SQE__VALID)
				continue;
			cr_assert_eq(iour_ruleset__new(NULL, &rs), 0);
			cr_assert_eq(iour_ruleset__set_sqe_flags(rs, a, r), 0);
			cr_assert_eq(iour_ruleset__sqe_flags(rs, &ga, &gr), 1);
			cr_expect_eq(ga, a | r, "allowed %#x required %#x: reported allowed %#x", a,
				     r, ga);
			cr_expect_eq(gr, r);
			iour_ruleset__free(rs);
		}
}
