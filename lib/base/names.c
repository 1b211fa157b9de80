/* SPDX-License-Identifier: MIT */
/*
 * Name tables of io_uring request opcodes, register opcodes and SQE flags.
 *
 * Each table is indexed by the kernel's number and records the kernel
 * version that added the entry.  The tables are generated from the kernel
 * facts, lib/base/kernel_facts.def, which gives the sources of the versions
 * and the notes on the corrected ones.
 */
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdint.h>
#include <strings.h>

#include "internal.h"
#include "iouring_restrict/names.h"

struct name_ent {
	const char *name; /* without the "IORING_OP_" / "IORING_" / "IOSQE_" prefix */
	uint32_t since;   /* IOUR_KVER() */
};

#define K(maj, min) IOUR_KVER(maj, min)

/* Generated from the kernel facts (lib/base/kernel_facts.def). */
static const struct name_ent op_tab[IOUR_OP__COUNT] = {
#define IOUR_KF_OP(name, value, maj, min, async) [value] = { #name, K(maj, min) },
#include "kernel_facts.def"
};

static const struct name_ent reg_tab[IOUR_REGISTER__COUNT] = {
#define IOUR_KF_REG(name, value, maj, min) [value] = { #name, K(maj, min) },
#include "kernel_facts.def"
};

/* Indexed by bit number. */
static const struct name_ent flag_tab[] = {
#define IOUR_KF_SQE(name, bit, maj, min) [bit] = { #name, K(maj, min) },
#include "kernel_facts.def"
};

/* Whether an opcode's preparation may set the force-async bit. */
static const bool op_async[IOUR_OP__COUNT] = {
#define IOUR_KF_OP(name, value, maj, min, async) [value] = (async),
#include "kernel_facts.def"
};

/*
 * Every row names the public enum member of its value, and the rows are
 * as many as the enums count: the hand-written enums of
 * include/iouring_restrict/names.h agree with the table (a row missing or
 * a number wrong fails here).
 */
#define IOUR_KF_OP(name, value, maj, min, async) \
	_Static_assert(IOUR_OP_##name == (value), "IOUR_OP_" #name);
#define IOUR_KF_REG(name, value, maj, min) _Static_assert(IOUR_##name == (value), "IOUR_" #name);
#define IOUR_KF_SQE(name, bit, maj, min) \
	_Static_assert(IOUR_SQE_##name == 1 << (bit), "IOUR_SQE_" #name);
#include "kernel_facts.def"

/* NOLINTBEGIN(bugprone-macro-parentheses): each row adds a term */
enum {
	KF_NOPS = 0
#define IOUR_KF_OP(name, value, maj, min, async) +1
#include "kernel_facts.def"
	,
	KF_NREGS = 0
#define IOUR_KF_REG(name, value, maj, min) +1
#include "kernel_facts.def"
	,
	KF_SQE_MASK = 0
#define IOUR_KF_SQE(name, bit, maj, min) | 1 << (bit)
#include "kernel_facts.def"
};
/* NOLINTEND(bugprone-macro-parentheses) */

_Static_assert((int)KF_NOPS == (int)IOUR_OP__COUNT, "one row per request opcode");
_Static_assert((int)KF_NREGS == (int)IOUR_REGISTER__COUNT, "one row per register opcode");
_Static_assert((int)KF_SQE_MASK == (int)IOUR_SQE__VALID, "one row per SQE flag");
_Static_assert(IOUR_ARRAY_SIZE(flag_tab) == 7, "SQE flags are bits 0 to 6");

/* Versions compare without the patch byte. */
static uint32_t kver_norm(uint32_t kver)
{
	return kver & ~0xffU;
}

/* Case-insensitive prefix strip: returns the rest of `s` after `prefix`,
 * or NULL if `s` does not start with it. */
static const char *strip(const char *s, const char *prefix)
{
	size_t n = strlen(prefix);

	return strncasecmp(s, prefix, n) == 0 ? s + n : NULL;
}

static int find(const struct name_ent *tab, size_t n, const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcasecmp(tab[i].name, name) == 0)
			return (int)i;
	return -ENOENT;
}

/* Count of entries with since <= kver, and one past the highest such. */
static void scan(const struct name_ent *tab, size_t n, uint32_t kver, size_t *count, size_t *last)
{
	size_t i;

	*count = 0;
	*last = 0;
	kver = kver_norm(kver);
	for (i = 0; i < n; i++) {
		if (tab[i].since <= kver) {
			(*count)++;
			*last = i + 1;
		}
	}
}

static int list_up_to(const struct name_ent *tab, size_t n, uint32_t kver, uint32_t *out,
		      size_t cap)
{
	size_t count, last, i, k = 0;

	if (!out && cap)
		return -EINVAL;
	scan(tab, n, kver, &count, &last);
	if (!out)
		return (int)count;
	if (cap < count)
		return -ERANGE;
	kver = kver_norm(kver);
	for (i = 0; i < n; i++)
		if (tab[i].since <= kver)
			out[k++] = (uint32_t)i;
	return (int)count;
}

/* ---- request opcodes ---- */

/* Documented in include/iouring_restrict/names.h */
int iour_opcode_from_name(const char *name)
{
	const char *s;

	if (!name)
		return -EINVAL;
	s = strip(name, "IORING_OP_");
	return find(op_tab, IOUR_ARRAY_SIZE(op_tab), s ? s : name);
}

/* Documented in include/iouring_restrict/names.h */
const char *iour_opcode_name(uint32_t op)
{
	return op < IOUR_OP__COUNT ? op_tab[op].name : NULL;
}

/* Documented in include/iouring_restrict/names.h */
int iour_opcode_since(uint32_t op)
{
	return op < IOUR_OP__COUNT ? (int)op_tab[op].since : -ENOENT;
}

/* Documented in include/iouring_restrict/names.h */
int iour_opcode_last(uint32_t kver)
{
	size_t count, last;

	/* Request opcodes were always added in numeric order, so the count
	 * and one-past-the-highest agree (the tests check it). */
	scan(op_tab, IOUR_ARRAY_SIZE(op_tab), kver, &count, &last);
	return (int)last;
}

/* Documented in include/iouring_restrict/names.h */
int iour_opcodes_up_to(uint32_t kver, uint32_t *ops, size_t cap)
{
	return list_up_to(op_tab, IOUR_ARRAY_SIZE(op_tab), kver, ops, cap);
}

/* Documented in include/iouring_restrict/names.h */
int iour_opcode_forces_async(uint32_t op)
{
	return op < IOUR_OP__COUNT ? (int)op_async[op] :
				     iour__err_public(-ENOENT, IOUR__ERRSET_OPCODE_FORCES_ASYNC);
}

/* ---- register opcodes ---- */

/* Documented in include/iouring_restrict/names.h */
int iour_register_op_from_name(const char *name)
{
	const size_t n = IOUR_ARRAY_SIZE(reg_tab);
	const char *s;
	size_t i;

	if (!name)
		return -EINVAL;
	/* "IORING_X": X must be a table name exactly. */
	s = strip(name, "IORING_");
	if (s)
		return find(reg_tab, n, s);
	/* "X": a table name, or a table name without its "REGISTER_". */
	for (i = 0; i < n; i++) {
		const char *t = reg_tab[i].name;
		const char *shortname = strip(t, "REGISTER_");

		if (strcasecmp(t, name) == 0 || (shortname && strcasecmp(shortname, name) == 0))
			return (int)i;
	}
	return -ENOENT;
}

/* Documented in include/iouring_restrict/names.h */
const char *iour_register_op_name(uint32_t op)
{
	return op < IOUR_REGISTER__COUNT ? reg_tab[op].name : NULL;
}

/* Documented in include/iouring_restrict/names.h */
int iour_register_op_since(uint32_t op)
{
	return op < IOUR_REGISTER__COUNT ? (int)reg_tab[op].since : -ENOENT;
}

/* Documented in include/iouring_restrict/names.h */
int iour_register_op_last(uint32_t kver)
{
	size_t count, last;

	scan(reg_tab, IOUR_ARRAY_SIZE(reg_tab), kver, &count, &last);
	return (int)last;
}

/* Documented in include/iouring_restrict/names.h */
int iour_register_ops_up_to(uint32_t kver, uint32_t *ops, size_t cap)
{
	return list_up_to(reg_tab, IOUR_ARRAY_SIZE(reg_tab), kver, ops, cap);
}

/* ---- kernel limits from the tables ---- */

uint32_t iour__reg_last_for_op_last(uint32_t op_last)
{
	/* The kernels to choose from are 5.10 (the first with per-ring
	 * restrictions) and every later version that added a request opcode:
	 * the newest of them whose IORING_OP_LAST is still <= op_last is the
	 * oldest kernel with that limit, so its IORING_REGISTER_LAST is the
	 * smallest (doc/kernel.md 6.1 and 6.2). */
	const uint32_t first = K(5, 10);
	uint32_t best = 0, v;
	size_t i;

	if ((uint32_t)iour_opcode_last(first) > op_last)
		return 0;
	best = first;
	for (i = 0; i < IOUR_ARRAY_SIZE(op_tab); i++) {
		v = op_tab[i].since;
		if (v > best && (uint32_t)iour_opcode_last(v) <= op_last)
			best = v;
	}
	return (uint32_t)iour_register_op_last(best);
}

/* ---- SQE flags ---- */

static int flag_bit(uint32_t flag)
{
	if (!flag || (flag & (flag - 1)) || (flag & ~(uint32_t)IOUR_SQE__VALID))
		return -1;
	return __builtin_ctz(flag);
}

/* Documented in include/iouring_restrict/names.h */
int iour_sqe_flag_from_name(const char *name)
{
	const char *s;
	int bit;

	if (!name)
		return -EINVAL;
	s = strip(name, "IOSQE_");
	bit = find(flag_tab, IOUR_ARRAY_SIZE(flag_tab), s ? s : name);
	return bit < 0 ? bit : 1 << bit;
}

/* Documented in include/iouring_restrict/names.h */
const char *iour_sqe_flag_name(uint32_t flag)
{
	int bit = flag_bit(flag);

	return bit < 0 ? NULL : flag_tab[bit].name;
}

/* Documented in include/iouring_restrict/names.h */
int iour_sqe_flag_since(uint32_t flag)
{
	int bit = flag_bit(flag);

	return bit < 0 ? -ENOENT : (int)flag_tab[bit].since;
}

/* Documented in include/iouring_restrict/names.h */
int iour_sqe_flags_up_to(uint32_t kver)
{
	int mask = 0;
	size_t i;

	kver = kver_norm(kver);
	for (i = 0; i < IOUR_ARRAY_SIZE(flag_tab); i++)
		if (flag_tab[i].since <= kver)
			mask |= 1 << i;
	return mask;
}

/* ---- suggestions ----------------------------------------------------------- */

/* Levenshtein distance, case-insensitive, of two short names; names longer
 * than 63 bytes count as far from everything. */
static size_t distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i, j;
	size_t row[64];

	if (la >= 64 || lb >= 64)
		return SIZE_MAX;
	for (j = 0; j <= lb; j++)
		row[j] = j;
	for (i = 1; i <= la; i++) {
		size_t diag = row[0];

		row[0] = i;
		for (j = 1; j <= lb; j++) {
			size_t up = row[j];
			size_t cost = tolower((unsigned char)a[i - 1]) ==
						      tolower((unsigned char)b[j - 1]) ?
					      0 :
					      1;
			size_t best = diag + cost;

			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			if (up + 1 < best)
				best = up + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

/* The rest of `name` after the longest of `prefixes` it starts with. */
static const char *bare(const char *name, const char *const *prefixes)
{
	const char *best = name, *s;

	for (; *prefixes; prefixes++)
		if ((s = strip(name, *prefixes)) && s > best)
			best = s;
	return best;
}

/* Documented in include/iouring_restrict/names.h */
const char *iour_name_suggest(uint32_t kind, const char *name)
{
	static const char *const op_pfx[] = { "IORING_OP_", NULL };
	static const char *const reg_pfx[] = { "IORING_", NULL };
	static const char *const flag_pfx[] = { "IOSQE_", NULL };
	const struct name_ent *tab;
	const char *b, *best = NULL;
	size_t n, i, d, best_d = SIZE_MAX, len;

	if (!name)
		return NULL;
	switch (kind) {
	case IOUR_NAME_OPCODE:
		tab = op_tab;
		n = IOUR_ARRAY_SIZE(op_tab);
		b = bare(name, op_pfx);
		break;
	case IOUR_NAME_REGISTER_OP:
		tab = reg_tab;
		n = IOUR_ARRAY_SIZE(reg_tab);
		b = bare(name, reg_pfx);
		break;
	case IOUR_NAME_SQE_FLAG:
		tab = flag_tab;
		n = IOUR_ARRAY_SIZE(flag_tab);
		b = bare(name, flag_pfx);
		break;
	default:
		return NULL;
	}
	len = strlen(b);
	if (!len)
		return NULL;
	for (i = 0; i < n; i++) {
		const char *t = tab[i].name, *shortname;

		if (!t)
			continue;
		d = distance(b, t);
		/* register opcodes are also written without "REGISTER_" */
		if (kind == IOUR_NAME_REGISTER_OP && (shortname = strip(t, "REGISTER_")) &&
		    distance(b, shortname) < d)
			d = distance(b, shortname);
		/* ties: a name the input starts with ("readd": READ, not READV) */
		if (d < best_d || (d == best_d && best && strncasecmp(b, t, strlen(t)) == 0 &&
				   strncasecmp(b, best, strlen(best)) != 0)) {
			best_d = d;
			best = t;
		}
	}
	/* Near enough to be a typo: at most a third of the name, at least 1
	 * and at most 3 edits; an exact match is no suggestion. */
	if (!best || best_d == 0 || best_d > (len / 3 > 3 ? 3 : len / 3 ? len / 3 : 1))
		return NULL;
	return best;
}

const char *iour__op_label(uint32_t op, char *tmp, size_t tmplen)
{
	const char *n = iour_opcode_name(op);

	if (n)
		return n;
	snprintf(tmp, tmplen, "opcode %u", op);
	return tmp;
}
