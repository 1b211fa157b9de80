/* SPDX-License-Identifier: MIT */
/*
 * The argument-filter builder: a per-opcode database of rules.
 *
 * Every comparison is checked here, once, against its field's width and
 * meaning, and stored normalised (sets sorted and deduplicated, IPv6
 * equality turned into a /128 prefix, bits beyond a prefix cleared), so
 * that the compiler never has to second-guess its input.  Every mutating
 * call checks all of its input before it changes anything.
 */
#include <stdlib.h>
#include <sys/socket.h>

#include "filter_internal.h"
#include "base/schema.h"

/* Request opcodes with a payload, and their fields: lib/base/schema.def
 * (doc/kernel.md 4.3). */
uint32_t iour__opcode_pdu_size(uint32_t opcode)
{
	const struct iour__schema_payload *pl = iour__schema_payload_of(opcode);

	return pl ? pl->pdu_size : 0;
}

/* Is the schema's field f defined for `opcode`? */
static bool field_applies(const struct iour__schema_field *f, uint32_t opcode)
{
	const struct iour__schema_payload *pl;

	if (f->group == IOUR__SG_ANY)
		return true;
	pl = iour__schema_payload_of(opcode);
	return pl && pl->group == f->group;
}

bool iour__field_for_opcode(uint32_t field, uint32_t opcode)
{
	const struct iour__schema_field *f = iour__schema_field_of(field);

	return f && field_applies(f, opcode);
}

/* The bits a value of the field may have; 0 for an unknown field and
 * for connect.addr6, which is not a number: lib/base/schema.def. */
uint64_t iour__field_valid_bits(uint32_t field)
{
	const struct iour__schema_field *f = iour__schema_field_of(field);

	return f ? f->valid : 0;
}

static bool in_valid(uint64_t v, uint64_t valid)
{
	return (v & ~valid) == 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static bool addr6_zero(const uint8_t a[16])
{
	uint64_t w[2];

	memcpy(w, a, sizeof(w));
	return !(w[0] | w[1]);
}

static void cmp_release(struct iour__cmp *c)
{
	if (c->set) {
		iour__free(c->set);
		c->set = NULL;
	}
}

/* A builder's rule: cmps is its own `one` or an allocated array. */
static void rule_release(struct iour__rule *r)
{
	for (uint32_t i = 0; i < r->ncmps; i++)
		cmp_release(&r->cmps[i]);
	if (r->cmps != &r->one)
		iour__free(r->cmps);
	r->cmps = NULL;
	r->ncmps = 0;
}

/* Points each one-comparison rule of rules[0, n) at its own `one` again,
 * after the rules were copied or moved. */
static void rules_repoint(struct iour__rule *rules, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (rules[i].ncmps == 1)
			rules[i].cmps = &rules[i].one;
}

static void opfilter_free(struct iour__opfilter *of)
{
	if (!of)
		return;
	for (uint32_t i = 0; i < of->nrules; i++)
		rule_release(&of->rules[i]);
	iour__free(of->rules);
	iour__free(of->raw);
	iour__free(of);
}

/*
 * How many bytes of a caller's struct iour_cmp of size `sz` to read: the
 * members that lie entirely within `sz` (a shorter struct from an older
 * caller); a member cut by `sz` reads as zero, never as a partial value.
 */
static size_t cmp_whole_members(size_t sz)
{
	static const size_t ends[] = {
		IOUR_OPTS_END(iour_cmp, addr6), IOUR_OPTS_END(iour_cmp, set_len),
		IOUR_OPTS_END(iour_cmp, set),   IOUR_OPTS_END(iour_cmp, arg),
		IOUR_OPTS_END(iour_cmp, value), IOUR_OPTS_END(iour_cmp, op),
		IOUR_OPTS_END(iour_cmp, field), IOUR_OPTS_END(iour_cmp, sz),
	};
	size_t i;

	for (i = 0; i < IOUR_ARRAY_SIZE(ends); i++)
		if (ends[i] <= sz)
			return ends[i];
	return 0;
}

/*
 * The operand members an operator uses (filter.h, enum iour_cmp_op):
 * -EOPNOTSUPP for an operator the field does not take, -EINVAL when a
 * member the operator does not use is not zero.
 */
static int cmp_operands_check(const struct iour_cmp *in, bool is4, bool is6)
{
	bool uses_arg = false, uses_value = false, uses_set = false, uses_addr6 = false;

	switch (in->op) {
	case IOUR_CMP_EQ:
	case IOUR_CMP_NE:
		if (is6)
			uses_addr6 = true;
		else
			uses_value = true;
		break;
	case IOUR_CMP_LT:
	case IOUR_CMP_LE:
	case IOUR_CMP_GT:
	case IOUR_CMP_GE:
	case IOUR_CMP_ANY_BITS:
	case IOUR_CMP_ALL_BITS:
	case IOUR_CMP_NONE_BITS:
		if (is6)
			return -EOPNOTSUPP;
		uses_value = true;
		break;
	case IOUR_CMP_MASKED_EQ:
	case IOUR_CMP_IN_RANGE:
	case IOUR_CMP_NOT_IN_RANGE:
		if (is6)
			return -EOPNOTSUPP;
		uses_value = uses_arg = true;
		break;
	case IOUR_CMP_IN_SET:
	case IOUR_CMP_NOT_IN_SET:
		if (is6)
			return -EOPNOTSUPP;
		uses_set = true;
		break;
	case IOUR_CMP_IN_PREFIX:
	case IOUR_CMP_NOT_IN_PREFIX:
		if (!is4 && !is6)
			return -EOPNOTSUPP;
		uses_arg = true;
		if (is6)
			uses_addr6 = true;
		else
			uses_value = true;
		break;
	}
	/* Operand members the operator does not use must be zero. */
	if ((!uses_value && in->value) || (!uses_arg && in->arg) ||
	    (!uses_set && (in->set || in->set_len)) || (!uses_addr6 && !addr6_zero(in->addr6)))
		return -EINVAL;
	return 0;
}

/* A numeric operator (not a set, not a prefix, not IPv6): its value and
 * arg within the field's bits, and the operator's own constraints. */
static int cmp_import_scalar(const struct iour_cmp *in, uint64_t valid, struct iour__cmp *out)
{
	switch (in->op) {
	case IOUR_CMP_ANY_BITS:
	case IOUR_CMP_ALL_BITS:
	case IOUR_CMP_NONE_BITS:
		if (!in->value)
			return -EINVAL;
		/* fall through */
	case IOUR_CMP_EQ:
	case IOUR_CMP_NE:
	case IOUR_CMP_LT:
	case IOUR_CMP_LE:
	case IOUR_CMP_GT:
	case IOUR_CMP_GE:
		if (!in_valid(in->value, valid))
			return -ERANGE;
		out->value = in->value;
		return 0;
	case IOUR_CMP_MASKED_EQ:
		if (!in->arg)
			return -EINVAL;
		if (!in_valid(in->arg, valid) || !in_valid(in->value, valid))
			return -ERANGE;
		if (in->value & ~in->arg)
			return -EINVAL; /* could never match */
		break;
	case IOUR_CMP_IN_RANGE:
	case IOUR_CMP_NOT_IN_RANGE:
		if (!in_valid(in->value, valid) || !in_valid(in->arg, valid))
			return -ERANGE;
		if (in->value > in->arg)
			return -EINVAL;
		break;
	default:
		return -EINVAL;
	}
	out->value = in->value;
	out->arg = in->arg;
	return 0;
}

/* A set operator: every value within the field's bits, stored sorted and
 * deduplicated (this file's header). */
static int cmp_import_set(const struct iour_cmp *in, uint64_t valid, struct iour__cmp *out)
{
	size_t n = 0;

	if (!in->set || !in->set_len)
		return -EINVAL;
	if (in->set_len > IOUR_FILTER_MAX_SET)
		return -E2BIG;
	for (uint64_t i = 0; i < in->set_len; i++)
		if (!in_valid(in->set[i], valid))
			return -ERANGE;
	out->set = iour__malloc((size_t)in->set_len * sizeof(uint64_t));
	if (!out->set)
		return -ENOMEM;
	memcpy(out->set, in->set, (size_t)in->set_len * sizeof(uint64_t));
	qsort(out->set, (size_t)in->set_len, sizeof(uint64_t), cmp_u64);
	for (size_t i = 0; i < in->set_len; i++)
		if (!n || out->set[n - 1] != out->set[i])
			out->set[n++] = out->set[i];
	out->set_len = n;
	return 0;
}

/* An IPv4 prefix: at most /32, the address's bits beyond it cleared. */
static int cmp_import_prefix4(const struct iour_cmp *in, struct iour__cmp *out)
{
	uint64_t mask;

	if (in->value > UINT32_MAX || in->arg > 32)
		return -ERANGE;
	mask = in->arg ? (UINT32_MAX << (32 - in->arg)) & UINT32_MAX : 0;
	out->value = in->value & mask;
	out->arg = in->arg;
	return 0;
}

/* An IPv6 prefix: at most /128, the address's bits beyond it cleared. */
static int cmp_import_prefix6(const struct iour_cmp *in, struct iour__cmp *out)
{
	if (in->arg > 128)
		return -ERANGE;
	out->arg = in->arg;
	for (unsigned int i = 0; i < 16; i++) {
		unsigned int bits = in->arg > 8ULL * i ? (unsigned int)(in->arg - 8ULL * i) : 0;
		uint8_t m = bits >= 8 ? 0xff : (uint8_t)(0xff00 >> bits);

		out->addr6[i] = in->addr6[i] & m;
	}
	return 0;
}

/*
 * Check one caller comparison (already copied into a full-size struct)
 * and normalise it into *out.  Allocates out->set for set operators.
 */
static int cmp_import(const struct iour_cmp *in, uint32_t opcode, struct iour__cmp *out)
{
	bool is6 = in->field == IOUR_FIELD_CONNECT_ADDR6;
	bool is4 = in->field == IOUR_FIELD_CONNECT_ADDR4;
	/* looked up once for the three checks below (lib/base/schema.def) */
	const struct iour__schema_field *sf = iour__schema_field_of(in->field);
	uint64_t valid;
	int rc;

	memset(out, 0, sizeof(*out));
	if (!sf)
		return -EINVAL;
	if (in->op < IOUR_CMP_EQ || in->op > IOUR_CMP_NOT_IN_PREFIX)
		return -EINVAL;
	if (!field_applies(sf, opcode))
		return -EDOM;
	valid = sf->valid;
	rc = cmp_operands_check(in, is4, is6);
	if (rc)
		return rc;

	out->field = in->field;
	out->op = in->op;
	switch (in->op) {
	case IOUR_CMP_EQ:
	case IOUR_CMP_NE:
		if (is6) {
			/* An IPv6 equality is a /128 prefix. */
			out->op =
				in->op == IOUR_CMP_EQ ? IOUR_CMP_IN_PREFIX : IOUR_CMP_NOT_IN_PREFIX;
			out->arg = 128;
			memcpy(out->addr6, in->addr6, 16);
			return 0;
		}
		return cmp_import_scalar(in, valid, out);
	case IOUR_CMP_IN_SET:
	case IOUR_CMP_NOT_IN_SET:
		return cmp_import_set(in, valid, out);
	case IOUR_CMP_IN_PREFIX:
	case IOUR_CMP_NOT_IN_PREFIX:
		return is4 ? cmp_import_prefix4(in, out) : cmp_import_prefix6(in, out);
	default: /* the numeric operators */
		return cmp_import_scalar(in, valid, out);
	}
}

static bool verdict_ok(uint32_t v)
{
	return v == IOUR_ALLOW || v == IOUR_DENY;
}

/* Frees the page of `opcode` if none of its opcodes is filtered any more
 * (after a failed first use). */
static void page_drop_if_empty(struct iour_filter *f, uint32_t opcode)
{
	struct iour__opfilter **pg = f->page[opcode / IOUR__OP_PAGE];

	if (!pg)
		return;
	for (unsigned int i = 0; i < IOUR__OP_PAGE; i++)
		if (pg[i])
			return;
	iour__free(pg);
	f->page[opcode / IOUR__OP_PAGE] = NULL;
}

/* The opfilter of `opcode`, created (with its page) on first use; NULL
 * when out of memory, the filter then as it was. */
static struct iour__opfilter *opfilter_get(struct iour_filter *f, uint32_t opcode)
{
	struct iour__opfilter ***pg = &f->page[opcode / IOUR__OP_PAGE];
	struct iour__opfilter **slot;

	if (!*pg) {
		*pg = iour__calloc(IOUR__OP_PAGE, sizeof(struct iour__opfilter *));
		if (!*pg)
			return NULL;
	}
	slot = &(*pg)[opcode % IOUR__OP_PAGE];
	if (!*slot) {
		*slot = iour__calloc(1, sizeof(struct iour__opfilter));
		if (!*slot) {
			page_drop_if_empty(f, opcode); /* may free the slot's page */
			return NULL;
		}
	}
	return *slot;
}

/* Frees an opfilter that holds nothing (after a failed first use), and
 * its page if that is left empty. */
static void opfilter_drop_if_empty(struct iour_filter *f, uint32_t opcode)
{
	struct iour__opfilter *of = iour__filter_op(f, opcode);

	if (of && !of->nrules && !of->has_default && !of->raw) {
		opfilter_free(of);
		f->page[opcode / IOUR__OP_PAGE][opcode % IOUR__OP_PAGE] = NULL;
		page_drop_if_empty(f, opcode);
	}
}

/* Documented in include/iouring_restrict/filter.h */
int iour_filter__new(const struct iour_filter_opts *opts, struct iour_filter **out)
{
	struct iour_filter *f;
	uint32_t dv, flags;
	int rc;

	if (!out)
		return -EINVAL;
	rc = IOUR_OPTS_VALID(opts, iour_filter_opts);
	if (rc)
		return iour__err_public(rc, IOUR__ERRSET_FILTER_NEW);
	dv = IOUR_OPTS_GET(opts, default_verdict, (uint32_t)IOUR_DENY);
	flags = IOUR_OPTS_GET(opts, flags, 0U);
	if (!verdict_ok(dv) || (flags & ~(uint32_t)IOUR_FILTER_ADDR4_LITERAL))
		return -EINVAL;
	f = iour__calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	f->default_verdict = dv;
	f->flags = flags;
	*out = f;
	return 0;
}

/* Documented in include/iouring_restrict/filter.h */
void iour_filter__free(struct iour_filter *f)
{
	if (!f)
		return;
	for (unsigned int p = 0; p < IOUR__OP_PAGES; p++) {
		if (!f->page[p])
			continue;
		for (unsigned int i = 0; i < IOUR__OP_PAGE; i++)
			opfilter_free(f->page[p][i]);
		iour__free(f->page[p]);
	}
	iour__free(f);
}

static int cmp_copy(const struct iour__cmp *src, struct iour__cmp *dst)
{
	*dst = *src;
	dst->set = NULL;
	if (src->set_len) {
		dst->set = iour__malloc(src->set_len * sizeof(uint64_t));
		if (!dst->set)
			return -ENOMEM;
		memcpy(dst->set, src->set, src->set_len * sizeof(uint64_t));
	}
	return 0;
}

static struct iour__opfilter *opfilter_copy(const struct iour__opfilter *src)
{
	struct iour__opfilter *of = iour__calloc(1, sizeof(*of));

	if (!of)
		return NULL;
	of->has_default = src->has_default;
	of->default_verdict = src->default_verdict;
	if (src->raw) {
		of->raw = iour__malloc(src->raw_cnt * sizeof(struct iour_insn));
		if (!of->raw)
			goto fail;
		memcpy(of->raw, src->raw, src->raw_cnt * sizeof(struct iour_insn));
		of->raw_cnt = src->raw_cnt;
	}
	if (src->nrules) {
		of->rules = iour__calloc(src->nrules, sizeof(struct iour__rule));
		if (!of->rules)
			goto fail;
		of->cap = src->nrules;
		for (uint32_t i = 0; i < src->nrules; i++) {
			const struct iour__rule *sr = &src->rules[i];
			struct iour__rule *dr = &of->rules[i];

			dr->verdict = sr->verdict;
			if (sr->ncmps == 1) {
				dr->cmps = &dr->one;
			} else if (sr->ncmps) {
				dr->cmps = iour__calloc(sr->ncmps, sizeof(struct iour__cmp));
				if (!dr->cmps)
					goto fail;
			}
			of->nrules = i + 1;
			for (uint32_t j = 0; j < sr->ncmps; j++) {
				if (cmp_copy(&sr->cmps[j], &dr->cmps[j]))
					goto fail;
				dr->ncmps = j + 1;
			}
		}
	}
	return of;
fail:
	opfilter_free(of);
	return NULL;
}

/* Documented in include/iouring_restrict/filter.h */
int iour_filter__dup(const struct iour_filter *f, struct iour_filter **out)
{
	struct iour_filter *c;

	if (!f || !out)
		return -EINVAL;
	c = iour__calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->default_verdict = f->default_verdict;
	c->flags = f->flags;
	for (unsigned int p = 0; p < IOUR__OP_PAGES; p++) {
		if (!f->page[p])
			continue;
		c->page[p] = iour__calloc(IOUR__OP_PAGE, sizeof(struct iour__opfilter *));
		if (!c->page[p])
			goto fail;
		for (unsigned int i = 0; i < IOUR__OP_PAGE; i++) {
			if (!f->page[p][i])
				continue;
			c->page[p][i] = opfilter_copy(f->page[p][i]);
			if (!c->page[p][i])
				goto fail;
		}
	}
	*out = c;
	return 0;
fail:
	iour_filter__free(c);
	return -ENOMEM;
}

/* Documented in include/iouring_restrict/filter.h */
int iour_filter__add_rule(struct iour_filter *f, uint32_t opcode, uint32_t verdict,
			  const struct iour_cmp *cmps, size_t ncmps)
{
	struct iour__opfilter *of;
	struct iour__rule rule = { .verdict = verdict };
	size_t stride = 0;
	int rc = 0;

	if (!f || (!cmps && ncmps) || opcode >= IOUR__NOPCODES || !verdict_ok(verdict))
		return -EINVAL;
	if (ncmps > IOUR_FILTER_MAX_CMPS)
		return -E2BIG;
	of = iour__filter_op(f, opcode);
	if (of && of->raw)
		return -EEXIST;
	if (ncmps == 1) {
		stride = cmps[0].sz;
		rule.cmps = &rule.one;
	} else if (ncmps) {
		stride = cmps[0].sz;
		rule.cmps = iour__calloc(ncmps, sizeof(struct iour__cmp));
		if (!rule.cmps)
			return -ENOMEM;
	}
	for (size_t i = 0; i < ncmps; i++) {
		const struct iour_cmp *in =
			(const struct iour_cmp *)((const unsigned char *)cmps + i * stride);
		struct iour_cmp c;

		if (in->sz != stride) {
			rc = -EINVAL;
			break;
		}
		rc = iour__opts_check(in, in->sz, sizeof(struct iour_cmp));
		if (rc)
			break;
		memset(&c, 0, sizeof(c));
		memcpy(&c, in, cmp_whole_members(in->sz));
		rc = cmp_import(&c, opcode, &rule.cmps[i]);
		if (rc)
			break;
		rule.ncmps = (uint32_t)i + 1;
	}
	if (rc) {
		rule_release(&rule);
		return rc;
	}
	of = opfilter_get(f, opcode);
	if (!of) {
		rule_release(&rule);
		return -ENOMEM;
	}
	if (of->nrules == of->cap) {
		uint32_t ncap = of->cap ? 2 * of->cap : 4;
		struct iour__rule *nr = iour__realloc(of->rules, ncap * sizeof(*nr));

		if (!nr) {
			rule_release(&rule);
			opfilter_drop_if_empty(f, opcode);
			return -ENOMEM;
		}
		rules_repoint(nr, of->nrules);
		of->rules = nr;
		of->cap = ncap;
	}
	of->rules[of->nrules] = rule;
	rules_repoint(&of->rules[of->nrules], 1);
	of->nrules++;
	return 0;
}

/* Documented in include/iouring_restrict/filter.h */
int iour_filter__set_default(struct iour_filter *f, uint32_t opcode, uint32_t verdict)
{
	struct iour__opfilter *of;

	if (!f || opcode >= IOUR__NOPCODES || !verdict_ok(verdict))
		return -EINVAL;
	of = iour__filter_op(f, opcode);
	if (of && of->raw)
		return -EEXIST;
	of = opfilter_get(f, opcode);
	if (!of)
		return -ENOMEM;
	of->has_default = true;
	of->default_verdict = verdict;
	return 0;
}

/* Documented in include/iouring_restrict/filter.h */
int iour_filter__set_raw(struct iour_filter *f, uint32_t opcode, const struct iour_insn *insns,
			 size_t cnt)
{
	struct iour__opfilter *of;
	struct iour_insn *copy;
	struct iour_validate_info info = { .sz = sizeof(info) };
	int rc;

	if (!f || !insns || opcode >= IOUR__NOPCODES)
		return -EINVAL;
	rc = iour_cbpf_validate(insns, cnt, 0, &info);
	if (rc == -ENOMEM)
		return rc;
	if (rc)
		return -IOUR_ERRNO__INVALID_PROG;
	of = iour__filter_op(f, opcode);
	if (of && (of->nrules || of->has_default))
		return -EEXIST;
	copy = iour__malloc(cnt * sizeof(*copy));
	if (!copy)
		return -ENOMEM;
	memcpy(copy, insns, cnt * sizeof(*copy));
	of = opfilter_get(f, opcode);
	if (!of) {
		iour__free(copy);
		return -ENOMEM;
	}
	iour__free(of->raw);
	of->raw = copy;
	of->raw_cnt = cnt;
	return 0;
}

/* Documented in include/iouring_restrict/filter.h */
int iour_filter__opcodes(const struct iour_filter *f, uint32_t *buf, size_t cap)
{
	size_t n = 0;

	if (!f || (!buf && cap))
		return -EINVAL;
	for (unsigned int p = 0; p < IOUR__OP_PAGES; p++)
		for (unsigned int i = 0; f->page[p] && i < IOUR__OP_PAGE; i++)
			n += f->page[p][i] != NULL;
	if (!buf)
		return (int)n;
	if (cap < n)
		return -ERANGE;
	n = 0;
	for (unsigned int p = 0; p < IOUR__OP_PAGES; p++)
		for (unsigned int i = 0; f->page[p] && i < IOUR__OP_PAGE; i++)
			if (f->page[p][i])
				buf[n++] = p * IOUR__OP_PAGE + i;
	return (int)n;
}

/* Documented in include/iouring_restrict/filter.h */
int iour_filter__opcode_info(const struct iour_filter *f, uint32_t opcode,
			     struct iour_filter_opinfo *info)
{
	const struct iour__opfilter *of;
	struct iour_filter_opinfo tmp;

	if (!f || !info || opcode >= IOUR__NOPCODES ||
	    info->sz < offsetof(struct iour_filter_opinfo, nrules) + sizeof(uint32_t))
		return -EINVAL;
	of = iour__filter_op(f, opcode);
	if (!of)
		return -ENOENT;
	memset(&tmp, 0, sizeof(tmp));
	tmp.sz = info->sz;
	tmp.nrules = of->nrules;
	tmp.flags =
		(of->has_default ? IOUR_OPINFO_HAS_DEFAULT : 0) | (of->raw ? IOUR_OPINFO_RAW : 0);
	tmp.default_verdict = of->has_default ? of->default_verdict : f->default_verdict;
	tmp.raw_cnt = (uint32_t)of->raw_cnt;
	memcpy(info, &tmp, info->sz < sizeof(tmp) ? info->sz : sizeof(tmp));
	return 0;
}

/* Documented in include/iouring_restrict/filter.h */
const struct iour_insn *iour_prog__insns(const struct iour_prog *p)
{
	return p ? p->insns : NULL;
}

/* Documented in include/iouring_restrict/filter.h */
size_t iour_prog__insn_cnt(const struct iour_prog *p)
{
	return p ? p->cnt : 0;
}

/* Documented in include/iouring_restrict/filter.h */
uint32_t iour_prog__opcode(const struct iour_prog *p)
{
	return p ? p->opcode : UINT32_MAX;
}

/* Documented in include/iouring_restrict/filter.h */
uint32_t iour_prog__kind(const struct iour_prog *p)
{
	return p ? p->kind : IOUR_PROG_FILTER;
}

/* Documented in include/iouring_restrict/filter.h */
uint32_t iour_prog__pdu_size(const struct iour_prog *p)
{
	return p ? p->pdu_size : 0;
}

/* Documented in include/iouring_restrict/filter.h */
void iour_prog__free(struct iour_prog *p)
{
	while (p) {
		struct iour_prog *next = p->next;

		iour__free(p);
		p = next;
	}
}
