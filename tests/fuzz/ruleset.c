/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: restriction-set builder calls decoded from bytes, then
 * the export, checked against what the kernel would make of the entries.
 * fuzz-requires: iour_ruleset__new iour_ruleset__export iour_opcode_from_name
 *
 * The input is a sequence of commands (one byte each, then their operands).
 * The harness keeps its own model of the set (which side is an allow-list,
 * which opcodes are allowed, the SQE flag decision) and checks after every
 * call:
 *  - the return value is the one the documentation promises (including
 *    -EINVAL, -ERANGE, -ENOENT, -ENOMSG, -E2BIG), and a failed call leaves
 *    the set unchanged;
 *  - the queries agree with the model; a duplicate is equal and independent;
 *  - an export, for any target kernel (version, opcode limits, coupled or
 *    split gates) and any options-struct size, follows two-call sizing and
 *    yields entries that the kernel accepts (known kinds, opcodes below the
 *    target's limits, at most IORING_MAX_RESTRICTIONS, never zero) and that
 *    the kernel enforces exactly as the set means it: every request opcode
 *    with every SQE flag combination, and every register opcode, is allowed
 *    by the kernel's gates (doc/kernel.md 1.5 and 2.1-2.4, implemented here
 *    independently) if and only if the model allows it.  The only tolerated
 *    difference is the documented harmless sentinel (REGISTER_ENABLE_RINGS
 *    on split gates).  The clamp report lists exactly what the target lacks.
 */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"
#include "kernel_facts_oracle.h"
#include "iouring_restrict/names.h"
#include "iouring_restrict/ruleset.h"

#define ENABLE_RINGS 12 /* IORING_REGISTER_ENABLE_RINGS */

struct model {
	bool sqe_restricted, reg_restricted, flags_decided;
	bool sqe[256], reg[256];
	uint8_t allowed, required; /* as passed to set_sqe_flags */
};

static unsigned long n_calls, n_exports, n_export_ok, n_semantic_checks;

static void print_stats(void)
{
	fprintf(stderr,
		"fuzz-stats: %lu builder calls, %lu exports (%lu produced entries), "
		"%lu gate decisions compared with the kernel's semantics\n",
		n_calls, n_exports, n_export_ok, n_semantic_checks);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	atexit(print_stats);
	return 0;
}

/* ---- names: a known name in one of its spellings, or a mangled one */
static void pick_name(struct fz *in, bool reg, char *out, size_t cap)
{
	uint8_t v = fz_u8(in), how = fz_u8(in) % 6;
	const char *base = reg ? iour_register_op_name(v % 42) : iour_opcode_name(v % 70);
	size_t i, n;

	if (!base || how == 5) { /* raw bytes */
		n = fz_u8(in) % (cap - 1);
		for (i = 0; i < n; i++)
			out[i] = (char)fz_u8(in);
		out[n] = '\0';
		return;
	}
	switch (how) {
	case 1:
		snprintf(out, cap, "%s%s", reg ? "IORING_" : "IORING_OP_", base);
		break;
	case 2: /* register ops also answer to their name without REGISTER_ */
		snprintf(out, cap, "%s", reg && !strncmp(base, "REGISTER_", 9) ? base + 9 : base);
		break;
	default:
		snprintf(out, cap, "%s", base);
		break;
	}
	if (how == 3)
		for (i = 0; out[i]; i++)
			out[i] = (char)tolower((unsigned char)out[i]);
	if (how == 4 && out[0])
		out[fz_u8(in) % strlen(out)] ^= (char)(fz_u8(in) | 1);
}

/* ---- queries against the model */
static void check_queries(const struct iour_ruleset *rs, const struct model *m)
{
	uint32_t a = 0xdead, r = 0xbeef, op;
	int rc;

	FUZZ_CHECK(iour_ruleset__sqe_restricted(rs) == m->sqe_restricted, "sqe_restricted");
	FUZZ_CHECK(iour_ruleset__register_restricted(rs) == m->reg_restricted, "reg_restricted");
	rc = iour_ruleset__sqe_flags(rs, &a, &r);
	FUZZ_CHECK(rc == m->flags_decided, "sqe_flags returned %d", rc);
	if (m->flags_decided)
		FUZZ_CHECK(a == (uint32_t)(m->allowed | m->required) && r == m->required,
			   "flags %#x/%#x, model %#x/%#x", a, r, m->allowed, m->required);
	else
		FUZZ_CHECK(a == IOUR_SQE__VALID && r == 0, "undecided flags read %#x/%#x", a, r);
	for (op = 0; op < IOUR_OP__COUNT + 2; op++) {
		rc = iour_ruleset__sqe_op_allowed(rs, op);
		if (op >= IOUR_OP__COUNT)
			FUZZ_CHECK(rc == -ERANGE, "sqe_op_allowed(%u) = %d", op, rc);
		else
			FUZZ_CHECK(rc == (!m->sqe_restricted || m->sqe[op]),
				   "sqe_op_allowed(%u) = %d", op, rc);
	}
	for (op = 0; op < IOUR_REGISTER__COUNT + 2; op++) {
		rc = iour_ruleset__register_op_allowed(rs, op);
		if (op >= IOUR_REGISTER__COUNT)
			FUZZ_CHECK(rc == -ERANGE, "register_op_allowed(%u) = %d", op, rc);
		else
			FUZZ_CHECK(rc == (!m->reg_restricted || m->reg[op]),
				   "register_op_allowed(%u) = %d", op, rc);
	}
}

/* ---- the kernel's reading of restriction entries (independent model) */
struct kview {
	bool sqe_bits[256], reg_bits[256];
	uint8_t allowed, required;
	bool op_registered, reg_registered;
};

static void kernel_parse(const struct iour_restriction *e, int n, uint32_t op_last,
			 uint32_t reg_last, bool split, struct kview *k)
{
	int i;

	memset(k, 0, sizeof(*k));
	FUZZ_CHECK(n >= 1, "zero entries would deny everything");
	FUZZ_CHECK((uint32_t)n <= 4 + op_last + reg_last, "%d entries exceed the kernel's maximum",
		   n);
	for (i = 0; i < n; i++) {
		FUZZ_CHECK(e[i].resv == 0 && !e[i].resv2[0] && !e[i].resv2[1] && !e[i].resv2[2],
			   "entry %d has reserved bytes set", i);
		switch (e[i].opcode) {
		case IOUR_RESTRICTION_REGISTER_OP:
			FUZZ_CHECK(e[i].arg < reg_last, "register op %u >= %u: kernel says EINVAL",
				   e[i].arg, reg_last);
			k->reg_bits[e[i].arg] = true;
			k->reg_registered = true;
			break;
		case IOUR_RESTRICTION_SQE_OP:
			FUZZ_CHECK(e[i].arg < op_last, "sqe op %u >= %u: kernel says EINVAL",
				   e[i].arg, op_last);
			k->sqe_bits[e[i].arg] = true;
			k->op_registered = true;
			break;
		case IOUR_RESTRICTION_SQE_FLAGS_ALLOWED:
			k->allowed = e[i].arg;
			k->op_registered = true;
			break;
		case IOUR_RESTRICTION_SQE_FLAGS_REQUIRED:
			k->required = e[i].arg;
			k->op_registered = true;
			break;
		default:
			FUZZ_CHECK(0, "entry %d has unknown kind %u", i, e[i].opcode);
		}
	}
	if (!split) /* before 7.0 any registered set gates both sides */
		k->op_registered = k->reg_registered = true;
}

static bool kernel_sqe_ok(const struct kview *k, uint32_t op, uint8_t flags)
{
	if (!k->op_registered)
		return true;
	return k->sqe_bits[op] && (flags & k->required) == k->required &&
	       (flags & ~(k->allowed | k->required)) == 0;
}

static bool model_sqe_ok(const struct model *m, uint32_t op, uint8_t flags)
{
	if (m->sqe_restricted && !m->sqe[op])
		return false;
	if (!m->flags_decided)
		return true;
	return (flags & m->required) == m->required && (flags & ~(m->allowed | m->required)) == 0;
}

static bool any_sqe_allowed(const struct model *m)
{
	int i;

	for (i = 0; i < 256; i++)
		if (m->sqe[i])
			return true;
	return false;
}

/* ---- export with fuzzed options, then the checks */
static void check_export(const struct iour_ruleset *rs, const struct model *m, struct fz *in)
{
	uint8_t optbuf[64] __attribute__((aligned(8)));
	uint8_t repbuf[128] __attribute__((aligned(8)));
	struct iour_export_opts o;
	struct iour_clamp_report *rep = (struct iour_clamp_report *)repbuf;
	uint8_t sel = fz_u8(in);
	static const uint32_t kvers[] = { 0,
					  IOUR_KVER(5, 4),
					  IOUR_KVER(5, 10),
					  IOUR_KVER(5, 15),
					  IOUR_KVER(6, 1),
					  IOUR_KVER(6, 13),
					  IOUR_KVER(6, 18),
					  IOUR_KVER(6, 19),
					  IOUR_KVER(7, 0),
					  IOUR_KVER(7, 2),
					  IOUR_KVER(9, 9) };
	static const size_t rep_sizes[] = { 8, 16, 48, 80, 96 };
	size_t osz, rsz = 0, len, len2, i;
	uint32_t op_last, reg_last, op, f;
	bool split, use_rep, nonzero_tail, opts_null = (sel & 0x03) == 0;
	int want, rc, n;
	uint8_t *buf;
	struct kview k;

	n_exports++;
	memset(&o, 0, sizeof(o));
	o.kver = kvers[fz_u8(in) % (sizeof(kvers) / sizeof(kvers[0]))];
	o.op_last = (sel & 0x04) ? fz_u16(in) % 260 : 0;
	o.reg_last = (sel & 0x08) ? fz_u16(in) % 260 : 0;
	o.flags = (sel & 0x10) ? fz_u8(in) % 5 : 0;
	use_rep = sel & 0x20;
	if (use_rep) {
		rsz = rep_sizes[fz_u8(in) % (sizeof(rep_sizes) / sizeof(rep_sizes[0]))];
		memset(repbuf, 0xa5, sizeof(repbuf));
		rep->sz = rsz;
		o.clamp = rep;
	}
	/* Options size: too small, each field boundary, exact, larger. */
	switch ((sel >> 6) & 3) {
	case 0:
		osz = sizeof(o);
		break;
	case 1:
		osz = sizeof(size_t) + 4 * (fz_u8(in) % 6) - (fz_u8(in) & 1 ? 0 : 4);
		break;
	default:
		osz = sizeof(o) + 8 * (1 + fz_u8(in) % 3);
		break;
	}
	if (osz > sizeof(o) && osz < sizeof(o) + 8) /* keep sz on a field boundary */
		osz = sizeof(o);
	nonzero_tail = !opts_null && osz > sizeof(o) && (fz_u8(in) & 1);
	memset(optbuf, 0, sizeof(optbuf));
	o.sz = osz;
	memcpy(optbuf, &o, sizeof(o));
	if (osz < sizeof(o)) /* the fields beyond sz are not the caller's */
		memset(optbuf + (osz > sizeof(size_t) ? osz : sizeof(size_t)), 0x5a,
		       sizeof(o) - (osz > sizeof(size_t) ? osz : sizeof(size_t)));
	if (nonzero_tail)
		optbuf[osz - 1] = 1;

		/* What the documentation says the result is. */
#define HAS(field) \
	(opts_null ? 0 : osz >= offsetof(struct iour_export_opts, field) + sizeof(o.field))
	{
		uint32_t kver = HAS(kver) ? o.kver : 0, flags = HAS(flags) ? o.flags : 0;

		op_last = kver ? (uint32_t)iour_opcode_last(kver) : IOUR_OP__COUNT;
		reg_last = kver ? (uint32_t)iour_register_op_last(kver) : IOUR_REGISTER__COUNT;
		split = kver ? kver >= ORACLE_KVER_SPLIT_GATES : true;
		if (HAS(op_last) && o.op_last)
			op_last = o.op_last;
		if (HAS(reg_last) && o.reg_last)
			reg_last = o.reg_last;
		if (flags == IOUR_EXPORT_COUPLED)
			split = false;
		if (flags == IOUR_EXPORT_SPLIT)
			split = true;
		use_rep = use_rep && HAS(clamp);
		if (!opts_null && osz < sizeof(size_t))
			want = -EINVAL;
		else if (nonzero_tail)
			want = -E2BIG;
		else if (use_rep && rsz < 16)
			want = -EINVAL;
		else if (flags > (IOUR_EXPORT_COUPLED | IOUR_EXPORT_SPLIT) ||
			 flags == (IOUR_EXPORT_COUPLED | IOUR_EXPORT_SPLIT))
			want = -EINVAL;
		else if (op_last < 1 || op_last > 256 || reg_last <= ENABLE_RINGS || reg_last > 256)
			want = -EINVAL;
		else if (m->sqe_restricted && !m->flags_decided && any_sqe_allowed(m))
			want = -ENOMSG;
		else
			want = 1; /* some count */
	}
#undef HAS

	/* Call 1: size only. */
	len = 12345;
	rc = iour_ruleset__export(rs, opts_null ? NULL : (void *)optbuf, NULL, &len);
	if (want < 0) {
		FUZZ_CHECK(rc == want, "export (size) returned %d, documented %d", rc, want);
		FUZZ_CHECK(iour_ruleset__export(NULL, NULL, NULL, &len) == -EINVAL, "NULL set");
		return;
	}
	FUZZ_CHECK(rc >= 1 && len == (size_t)rc * sizeof(struct iour_restriction),
		   "export (size) returned %d, len %zu", rc, len);
	n = rc;
	/* Call 2: one byte short. */
	buf = malloc(len);
	FUZZ_CHECK(buf != NULL, "out of memory");
	len2 = len - 1;
	rc = iour_ruleset__export(rs, opts_null ? NULL : (void *)optbuf, buf, &len2);
	FUZZ_CHECK(rc == -ERANGE && len2 == len, "short buffer: %d, len %zu", rc, len2);
	/* Call 3: exact size (ASan sees any overrun of the heap buffer). */
	if (use_rep)
		memset(repbuf + sizeof(size_t), 0xa5, sizeof(repbuf) - sizeof(size_t));
	len2 = len;
	rc = iour_ruleset__export(rs, opts_null ? NULL : (void *)optbuf, buf, &len2);
	FUZZ_CHECK(rc == n && len2 == len, "export returned %d (%zu bytes), expected %d", rc, len2,
		   n);
	n_export_ok++;

	kernel_parse((const struct iour_restriction *)buf, n, op_last, reg_last, split, &k);
	/* Both sides decide "opcode allowed AND flags allowed", so every
	 * opcode is compared under a set of flag values that tells the flag
	 * rules apart, and every flag combination under the opcodes the set
	 * allows (or opcode 0). */
	{
		uint8_t fl[12] = { 0,
				   1,
				   2,
				   4,
				   8,
				   16,
				   32,
				   64,
				   0x7f,
				   m->required,
				   (uint8_t)(m->allowed | m->required),
				   fz_u8(in) & 0x7f };
		uint32_t probe_ops = 0;

		for (op = 0; op < op_last; op++) {
			bool all_flags =
				op == 0 || (model_sqe_ok(m, op, m->required) && probe_ops++ < 4);
			uint32_t nf = all_flags ? IOUR_SQE__VALID + 1 : sizeof(fl);

			for (f = 0; f < nf; f++) {
				uint8_t flags = all_flags ? (uint8_t)f : fl[f];
				bool mk = model_sqe_ok(m, op, flags);

				FUZZ_CHECK(
					kernel_sqe_ok(&k, op, flags) == mk,
					"opcode %u flags %#x: kernel %s, set %s (op_last %u, %s)",
					op, flags, mk ? "denies" : "allows",
					mk ? "allows" : "denies", op_last,
					split ? "split" : "coupled");
				n_semantic_checks++;
			}
		}
	}
	for (op = 0; op < reg_last; op++) {
		bool mk = !m->reg_restricted || m->reg[op];
		bool kk = !k.reg_registered || k.reg_bits[op];

		if (kk && !mk && op == ENABLE_RINGS && split)
			continue; /* the documented sentinel: harmless on an enabled ring */
		FUZZ_CHECK(kk == mk, "register op %u: kernel %s, set %s (reg_last %u, %s)", op,
			   kk ? "allows" : "denies", mk ? "allows" : "denies", reg_last,
			   split ? "split" : "coupled");
		n_semantic_checks++;
	}
	if (use_rep) {
		uint32_t ns = 0, nr = 0;
		uint64_t sb[4] = { 0 }, rb[4] = { 0 };

		for (i = 0; i < 256; i++) {
			if (m->sqe_restricted && m->sqe[i] && i >= op_last) {
				ns++;
				sb[i / 64] |= 1ULL << (i % 64);
			}
			if (m->reg_restricted && m->reg[i] && i >= reg_last) {
				nr++;
				rb[i / 64] |= 1ULL << (i % 64);
			}
		}
		FUZZ_CHECK(rep->sz == rsz, "clamp report sz changed");
		FUZZ_CHECK(rep->n_sqe_ops == ns && rep->n_register_ops == nr,
			   "clamped %u/%u, expected %u/%u", rep->n_sqe_ops, rep->n_register_ops, ns,
			   nr);
		if (rsz >= offsetof(struct iour_clamp_report, sqe_ops) + sizeof(sb))
			FUZZ_CHECK(!memcmp(rep->sqe_ops, sb, sizeof(sb)), "clamped sqe bitmap");
		if (rsz >= offsetof(struct iour_clamp_report, register_ops) + sizeof(rb))
			FUZZ_CHECK(!memcmp(rep->register_ops, rb, sizeof(rb)),
				   "clamped register bitmap");
		for (i = sizeof(struct iour_clamp_report); i < rsz; i++)
			FUZZ_CHECK(repbuf[i] == 0, "byte %zu of the report (sz %zu) not zeroed", i,
				   rsz);
		for (i = rsz; i < sizeof(repbuf); i++)
			FUZZ_CHECK(repbuf[i] == 0xa5, "byte %zu beyond the report's sz written", i);
	}
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz in = { data, size };
	struct iour_ruleset *rs = NULL, *dup;
	struct model m;
	char name[40];
	int rc, want, steps = 0;

	memset(&m, 0, sizeof(m));
	FUZZ_CHECK(iour_ruleset__new(NULL, &rs) == 0 && rs, "iour_ruleset__new");
	check_queries(rs, &m);

	while (!fz_empty(&in) && steps++ < 64) {
		uint8_t cmd = fz_u8(&in);
		uint32_t v;

		n_calls++;
		switch (cmd % 11) {
		case 0:
			v = fz_u8(&in) % 80;
			rc = iour_ruleset__allow_sqe_op(rs, v);
			want = v < IOUR_OP__COUNT ? 0 : -ERANGE;
			FUZZ_CHECK(rc == want, "allow_sqe_op(%u) = %d, want %d", v, rc, want);
			if (!rc)
				m.sqe_restricted = m.sqe[v] = true;
			break;
		case 1:
			pick_name(&in, false, name, sizeof(name));
			want = iour_opcode_from_name(name);
			rc = iour_ruleset__allow_sqe_op_name(rs, name);
			FUZZ_CHECK(want >= 0 ? rc == 0 : rc == -ENOENT,
				   "allow_sqe_op_name(\"%s\") = %d, name lookup %d", name, rc,
				   want);
			if (!rc)
				m.sqe_restricted = m.sqe[want] = true;
			break;
		case 2:
			v = fz_u8(&in) % 50;
			rc = iour_ruleset__allow_register_op(rs, v);
			want = v < IOUR_REGISTER__COUNT ? 0 : -ERANGE;
			FUZZ_CHECK(rc == want, "allow_register_op(%u) = %d, want %d", v, rc, want);
			if (!rc)
				m.reg_restricted = m.reg[v] = true;
			break;
		case 3:
			pick_name(&in, true, name, sizeof(name));
			want = iour_register_op_from_name(name);
			rc = iour_ruleset__allow_register_op_name(rs, name);
			FUZZ_CHECK(want >= 0 ? rc == 0 : rc == -ENOENT,
				   "allow_register_op_name(\"%s\") = %d, name lookup %d", name, rc,
				   want);
			if (!rc)
				m.reg_restricted = m.reg[want] = true;
			break;
		case 4:
			FUZZ_CHECK(iour_ruleset__deny_all_sqe_ops(rs) == 0, "deny_all_sqe_ops");
			m.sqe_restricted = true;
			memset(m.sqe, 0, sizeof(m.sqe));
			break;
		case 5:
			FUZZ_CHECK(iour_ruleset__deny_all_register_ops(rs) == 0,
				   "deny_all_reg_ops");
			m.reg_restricted = true;
			memset(m.reg, 0, sizeof(m.reg));
			break;
		case 6:
		case 7: {
			uint32_t a = fz_u8(&in), r = fz_u8(&in);

			if (cmd & 0x80)
				a |= 1U << (fz_u8(&in) % 32);
			rc = iour_ruleset__set_sqe_flags(rs, a, r);
			want = ((a | r) & ~(uint32_t)IOUR_SQE__VALID) ? -EINVAL : 0;
			FUZZ_CHECK(rc == want, "set_sqe_flags(%#x, %#x) = %d", a, r, rc);
			if (!rc) {
				m.flags_decided = true;
				m.allowed = (uint8_t)a;
				m.required = (uint8_t)r;
			}
			break;
		}
		case 8:
			FUZZ_CHECK(iour_ruleset__dup(rs, &dup) == 0 && dup, "dup");
			check_queries(dup, &m);
			if (fz_u8(&in) & 1) { /* continue with the copy */
				iour_ruleset__free(rs);
				rs = dup;
			} else { /* modifying the copy must not touch the original */
				FUZZ_CHECK(iour_ruleset__deny_all_sqe_ops(dup) == 0, "deny copy");
				FUZZ_CHECK(iour_ruleset__allow_register_op(dup, 0) == 0,
					   "allow copy");
				iour_ruleset__free(dup);
			}
			break;
		case 9:
			check_export(rs, &m, &in);
			break;
		default:
			/* NULL handles and NULL names */
			FUZZ_CHECK(iour_ruleset__allow_sqe_op(NULL, 0) == -EINVAL, "NULL set");
			FUZZ_CHECK(iour_ruleset__allow_sqe_op_name(rs, NULL) == -EINVAL,
				   "NULL name");
			FUZZ_CHECK(iour_ruleset__allow_register_op_name(rs, NULL) == -EINVAL,
				   "NULL name");
			FUZZ_CHECK(iour_ruleset__set_sqe_flags(NULL, 0, 0) == -EINVAL, "NULL set");
			FUZZ_CHECK(iour_ruleset__sqe_op_allowed(NULL, 0) == -EINVAL, "NULL set");
			FUZZ_CHECK(iour_ruleset__dup(rs, NULL) == -EINVAL, "NULL out");
			break;
		}
		check_queries(rs, &m);
	}
	check_export(rs, &m, &in); /* the remaining bytes read as zeros: NULL opts */
	iour_ruleset__free(rs);
	return 0;
}
