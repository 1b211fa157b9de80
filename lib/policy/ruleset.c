/* SPDX-License-Identifier: MIT */
/*
 * Restriction sets: builder, queries, and translation into the kernel's
 * restriction entries for a given kernel (limits and gate semantics).
 *
 * This file never calls the kernel; the limits come from the caller (the
 * export options, or the probe module through ring apply).
 */
#include <stdlib.h>

#include "base/internal.h"
#include "ruleset_internal.h"
#include "iouring_restrict/names.h"
#include "iouring_restrict/probe.h"
#include "iouring_restrict/ruleset.h"

_Static_assert(sizeof(struct iour_restriction) == sizeof(struct kio_restriction),
	       "iour_restriction size");
_Static_assert(_Alignof(struct iour_restriction) == _Alignof(struct kio_restriction),
	       "iour_restriction align");
_Static_assert(offsetof(struct iour_restriction, opcode) ==
		       offsetof(struct kio_restriction, opcode),
	       "iour_restriction.opcode");
_Static_assert(offsetof(struct iour_restriction, arg) == offsetof(struct kio_restriction, sqe_op),
	       "iour_restriction.arg");
_Static_assert(offsetof(struct iour_restriction, resv) == offsetof(struct kio_restriction, resv),
	       "iour_restriction.resv");
_Static_assert(offsetof(struct iour_restriction, resv2) == offsetof(struct kio_restriction, resv2),
	       "iour_restriction.resv2");
_Static_assert(IOUR_RESTRICTION_REGISTER_OP == KIO_RESTRICTION_REGISTER_OP &&
		       IOUR_RESTRICTION_SQE_OP == KIO_RESTRICTION_SQE_OP &&
		       IOUR_RESTRICTION_SQE_FLAGS_ALLOWED == KIO_RESTRICTION_SQE_FLAGS_ALLOWED &&
		       IOUR_RESTRICTION_SQE_FLAGS_REQUIRED == KIO_RESTRICTION_SQE_FLAGS_REQUIRED,
	       "restriction kinds");
_Static_assert(sizeof(((struct iour_clamp_report *)0)->sqe_ops) ==
		       sizeof(((struct iour__clamp *)0)->sqe_ops),
	       "clamp bitmap size");

/* ---- lifetime ---- */

/* Documented in include/iouring_restrict/ruleset.h */
int iour_ruleset__new(const struct iour_ruleset_opts *opts, struct iour_ruleset **out)
{
	struct iour_ruleset *rs;
	int rc;

	if (!out)
		return -EINVAL;
	rc = IOUR_OPTS_VALID(opts, iour_ruleset_opts);
	if (rc)
		return rc;
	if (IOUR_OPTS_GET(opts, flags, 0) != 0)
		return -EINVAL;
	rs = iour__calloc(1, sizeof(*rs));
	if (!rs)
		return -ENOMEM;
	rs->flags_allowed = IOUR_SQE__VALID;
	*out = rs;
	return 0;
}

/* Documented in include/iouring_restrict/ruleset.h */
void iour_ruleset__free(struct iour_ruleset *rs)
{
	iour__free(rs);
}

/* Documented in include/iouring_restrict/ruleset.h */
int iour_ruleset__dup(const struct iour_ruleset *rs, struct iour_ruleset **out)
{
	struct iour_ruleset *copy;

	if (!rs || !out)
		return -EINVAL;
	copy = iour__malloc(sizeof(*copy));
	if (!copy)
		return -ENOMEM;
	*copy = *rs;
	*out = copy;
	return 0;
}

/* ---- building ---- */

/* Documented in include/iouring_restrict/ruleset.h */
int iour_ruleset__allow_sqe_op(struct iour_ruleset *rs, uint32_t op)
{
	iour__detail_reset(__func__);
	if (!rs)
		return -EINVAL;
	/*
	 * A security library must not pass on numbers it cannot name: the
	 * set is translated for each kernel with the library's opcode tables
	 * (the opcodes a kernel lacks are dropped and reported, ring.h), and
	 * an opcode beyond them has no row there.  Policy files take raw
	 * numbers up to 255 only in argument-filter entries, whose programs
	 * compare the number as is (doc/policy-files.md).
	 */
	if (op >= IOUR_OP__COUNT)
		return iour__detail(__func__, -ERANGE,
				    "opcode %u: the library's request-opcode table ends at %u (%s)",
				    op, IOUR_OP__COUNT - 1, iour_opcode_name(IOUR_OP__COUNT - 1));
	iour__bm_set(&rs->sqe_ops, op);
	rs->sqe_restricted = true;
	return 0;
}

/* Documented in include/iouring_restrict/ruleset.h */
int iour_ruleset__allow_sqe_op_name(struct iour_ruleset *rs, const char *name)
{
	int op;

	if (!rs || !name)
		return -EINVAL;
	op = iour_opcode_from_name(name);
	if (op < 0)
		return op;
	return iour_ruleset__allow_sqe_op(rs, (uint32_t)op);
}

/* Documented in include/iouring_restrict/ruleset.h */
int iour_ruleset__allow_register_op(struct iour_ruleset *rs, uint32_t op)
{
	iour__detail_reset(__func__);
	if (!rs)
		return -EINVAL;
	if (op >= IOUR_REGISTER__COUNT)
		return iour__detail(
			__func__, -ERANGE,
			"register opcode %u: the library's register-opcode table ends at %u (%s)",
			op, IOUR_REGISTER__COUNT - 1,
			iour_register_op_name(IOUR_REGISTER__COUNT - 1));
	iour__bm_set(&rs->reg_ops, op);
	rs->reg_restricted = true;
	return 0;
}

/* Documented in include/iouring_restrict/ruleset.h */
int iour_ruleset__allow_register_op_name(struct iour_ruleset *rs, const char *name)
{
	int op;

	if (!rs || !name)
		return -EINVAL;
	op = iour_register_op_from_name(name);
	if (op < 0)
		return op;
	return iour_ruleset__allow_register_op(rs, (uint32_t)op);
}

/* Documented in include/iouring_restrict/ruleset.h */
int iour_ruleset__deny_all_sqe_ops(struct iour_ruleset *rs)
{
	if (!rs)
		return -EINVAL;
	memset(&rs->sqe_ops, 0, sizeof(rs->sqe_ops));
	rs->sqe_restricted = true;
	return 0;
}

/* Documented in include/iouring_restrict/ruleset.h */
int iour_ruleset__deny_all_register_ops(struct iour_ruleset *rs)
{
	if (!rs)
		return -EINVAL;
	memset(&rs->reg_ops, 0, sizeof(rs->reg_ops));
	rs->reg_restricted = true;
	return 0;
}

/* Documented in include/iouring_restrict/ruleset.h */
int iour_ruleset__set_sqe_flags(struct iour_ruleset *rs, uint32_t allowed, uint32_t required)
{
	if (!rs)
		return -EINVAL;
	if ((allowed | required) & ~(uint32_t)IOUR_SQE__VALID)
		return -EINVAL;
	rs->flags_allowed = (uint8_t)(allowed | required);
	rs->flags_required = (uint8_t)required;
	rs->flags_decided = true;
	return 0;
}

/* ---- queries ---- */

/* Documented in include/iouring_restrict/ruleset.h */
int iour_ruleset__sqe_op_allowed(const struct iour_ruleset *rs, uint32_t op)
{
	if (!rs)
		return -EINVAL;
	if (op >= IOUR_OP__COUNT)
		return -ERANGE;
	return !rs->sqe_restricted || iour__bm_test(&rs->sqe_ops, op);
}

/* Documented in include/iouring_restrict/ruleset.h */
int iour_ruleset__register_op_allowed(const struct iour_ruleset *rs, uint32_t op)
{
	if (!rs)
		return -EINVAL;
	if (op >= IOUR_REGISTER__COUNT)
		return -ERANGE;
	return !rs->reg_restricted || iour__bm_test(&rs->reg_ops, op);
}

/* Documented in include/iouring_restrict/ruleset.h */
int iour_ruleset__sqe_restricted(const struct iour_ruleset *rs)
{
	return rs ? rs->sqe_restricted : -EINVAL;
}

/* Documented in include/iouring_restrict/ruleset.h */
int iour_ruleset__register_restricted(const struct iour_ruleset *rs)
{
	return rs ? rs->reg_restricted : -EINVAL;
}

/* Documented in include/iouring_restrict/ruleset.h */
int iour_ruleset__sqe_flags(const struct iour_ruleset *rs, uint32_t *allowed, uint32_t *required)
{
	if (!rs)
		return -EINVAL;
	if (allowed)
		*allowed = rs->flags_decided ? rs->flags_allowed : IOUR_SQE__VALID;
	if (required)
		*required = rs->flags_decided ? rs->flags_required : 0;
	return rs->flags_decided;
}

/* ---- translation ---- */

static bool bm_empty(const struct iour__bitmap *b)
{
	return !(b->w[0] | b->w[1] | b->w[2] | b->w[3]);
}

static void put(struct kio_restriction *out, int *n, uint16_t kind, uint8_t arg)
{
	struct kio_restriction *r = &out[(*n)++];

	memset(r, 0, sizeof(*r));
	r->opcode = kind;
	r->sqe_op = arg;
}

/*
 * Emit one side's opcode entries: the allow-list (restricted) or every
 * number below `last` (unrestricted); allow-list members >= last go to the
 * clamp record instead.  Returns the number of entries emitted.
 */
static int put_ops(struct kio_restriction *out, int *n, uint16_t kind, bool restricted,
		   const struct iour__bitmap *allow, uint32_t last, struct iour__bitmap *dropped,
		   uint32_t *n_dropped)
{
	int before = *n;
	unsigned int i, w;

	if (!restricted) {
		for (i = 0; i < last && i < 256; i++)
			put(out, n, kind, (uint8_t)i);
		return *n - before;
	}
	/* The allow-list's members in ascending order, a word at a time. */
	for (w = 0; w < IOUR_ARRAY_SIZE(allow->w); w++) {
		for (uint64_t bits = allow->w[w]; bits; bits &= bits - 1) {
			i = w * 64 + (unsigned int)__builtin_ctzll(bits);
			if (i >= last) {
				iour__bm_set(dropped, i);
				(*n_dropped)++;
				continue;
			}
			put(out, n, kind, (uint8_t)i);
		}
	}
	return *n - before;
}

int iour__ruleset_check(const struct iour_ruleset *rs)
{
	if (!rs)
		return -EINVAL;
	/* Undecided flags only pass when no opcode is allowed, where the
	 * mask cannot matter. */
	if (!rs->flags_decided && rs->sqe_restricted && !bm_empty(&rs->sqe_ops))
		return -ENOMSG;
	return 0;
}

int iour__ruleset_entries(const struct iour_ruleset *rs, const struct iour__kernel_limits *lim,
			  struct kio_restriction *out, struct iour__clamp *clamp)
{
	struct iour__clamp cl;
	uint8_t allowed, required;
	bool sqe_gated, emit_sqe, emit_reg;
	int n = 0;

	if (!rs || !lim || !out)
		return -EINVAL;
	/* Every kernel with restrictions (5.10+) knows ENABLE_RINGS, which the
	 * split-gate sentinel needs; opcodes are 8-bit in an entry. */
	if (lim->op_last < 1 || lim->op_last > 256 || lim->reg_last <= KIO_REGISTER_ENABLE_RINGS ||
	    lim->reg_last > 256)
		return -EINVAL;

	n = iour__ruleset_check(rs);
	if (n)
		return n;
	if (rs->flags_decided) {
		allowed = rs->flags_allowed;
		required = rs->flags_required;
	} else if (rs->sqe_restricted) {
		/* No opcode allowed (iour__ruleset_check()): the mask cannot
		 * matter, 0 is the tighter choice. */
		allowed = 0;
		required = 0;
	} else {
		allowed = IOUR_SQE__VALID;
		required = 0;
	}
	sqe_gated = rs->sqe_restricted || allowed != IOUR_SQE__VALID || required != 0;

	if (lim->split) {
		emit_sqe = sqe_gated;
		/* Nothing restricted: the full register list gates nothing but
		 * keeps the set non-empty (nr == 0 would deny everything). */
		emit_reg = rs->reg_restricted || !sqe_gated;
	} else {
		emit_sqe = emit_reg = true;
	}

	memset(&cl, 0, sizeof(cl));
	if (emit_sqe) {
		put_ops(out, &n, KIO_RESTRICTION_SQE_OP, rs->sqe_restricted, &rs->sqe_ops,
			lim->op_last, &cl.sqe_ops, &cl.n_sqe);
		put(out, &n, KIO_RESTRICTION_SQE_FLAGS_ALLOWED, allowed);
		if (required)
			put(out, &n, KIO_RESTRICTION_SQE_FLAGS_REQUIRED, required);
	}
	if (emit_reg) {
		int k = put_ops(out, &n, KIO_RESTRICTION_REGISTER_OP, rs->reg_restricted,
				&rs->reg_ops, lim->reg_last, &cl.reg_ops, &cl.n_reg);

		if (lim->split && rs->reg_restricted && k == 0)
			put(out, &n, KIO_RESTRICTION_REGISTER_OP, KIO_REGISTER_ENABLE_RINGS);
	}
	if (clamp)
		*clamp = cl;
	return n;
}

/* Resolve the export options into kernel limits. */
static int export_limits(const struct iour_export_opts *opts, struct iour__kernel_limits *lim)
{
	uint32_t kver = IOUR_OPTS_GET(opts, kver, 0);
	uint32_t flags = IOUR_OPTS_GET(opts, flags, 0);
	uint32_t op_last = IOUR_OPTS_GET(opts, op_last, 0);
	uint32_t reg_last = IOUR_OPTS_GET(opts, reg_last, 0);

	if (flags & ~(IOUR_EXPORT_COUPLED | IOUR_EXPORT_SPLIT))
		return -EINVAL;
	if ((flags & IOUR_EXPORT_COUPLED) && (flags & IOUR_EXPORT_SPLIT))
		return -EINVAL;
	if (kver) {
		lim->op_last = (uint32_t)iour_opcode_last(kver);
		lim->reg_last = (uint32_t)iour_register_op_last(kver);
		lim->split = iour_kernel_split_gates(kver);
	} else {
		lim->op_last = IOUR_OP__COUNT;
		lim->reg_last = IOUR_REGISTER__COUNT;
		lim->split = true;
	}
	if (op_last)
		lim->op_last = op_last;
	if (reg_last)
		lim->reg_last = reg_last;
	if (flags & IOUR_EXPORT_COUPLED)
		lim->split = false;
	if (flags & IOUR_EXPORT_SPLIT)
		lim->split = true;
	return 0;
}

static void fill_clamp(struct iour_clamp_report *rep, const struct iour__clamp *cl)
{
	/* Zero everything after sz that the caller says it has, then fill
	 * the fields that fit. */
	memset((char *)rep + sizeof(rep->sz), 0, rep->sz - sizeof(rep->sz));
	rep->n_sqe_ops = cl->n_sqe;
	rep->n_register_ops = cl->n_reg;
	if (IOUR_OUT_HAS(rep, sqe_ops))
		memcpy(rep->sqe_ops, cl->sqe_ops.w, sizeof(rep->sqe_ops));
	if (IOUR_OUT_HAS(rep, register_ops))
		memcpy(rep->register_ops, cl->reg_ops.w, sizeof(rep->register_ops));
}

static int do_export(const struct iour_ruleset *rs, const struct iour_export_opts *opts, void *buf,
		     size_t *len)
{
	struct kio_restriction ents[IOUR__MAX_ENTRIES];
	struct iour__kernel_limits lim;
	struct iour_clamp_report *rep;
	struct iour__clamp cl;
	size_t need;
	int rc, n;

	if (!rs || !len)
		return -EINVAL;
	rc = IOUR_OPTS_VALID(opts, iour_export_opts);
	if (rc)
		return rc;
	rep = IOUR_OPTS_GET(opts, clamp, NULL);
	if (rep && rep->sz < IOUR_OPTS_END(iour_clamp_report, n_register_ops))
		return -EINVAL;
	rc = export_limits(opts, &lim);
	if (rc)
		return rc;
	n = iour__ruleset_entries(rs, &lim, ents, &cl);
	if (n < 0)
		return n;
	need = (size_t)n * sizeof(struct iour_restriction);
	if (buf && *len < need) {
		*len = need;
		return -ERANGE;
	}
	*len = need;
	if (buf)
		memcpy(buf, ents, need);
	if (rep)
		fill_clamp(rep, &cl);
	return n;
}

/* Documented in include/iouring_restrict/ruleset.h */
int iour_ruleset__export(const struct iour_ruleset *rs, const struct iour_export_opts *opts,
			 void *buf, size_t *len)
{
	return iour__err_public(do_export(rs, opts, buf, len), IOUR__ERRSET_RULESET_EXPORT);
}
