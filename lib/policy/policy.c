/* SPDX-License-Identifier: MIT */
/*
 * The policy object: a classic part, per-opcode argument filters and
 * attributes.  Pure data; nothing here calls the kernel.
 */
#include <stdlib.h>

#include "base/internal.h"
#include "policy_internal.h"
#include "base/schema.h"
#include "iouring_restrict/filter.h"
#include "iouring_restrict/ruleset.h"

/* Bounds and defaults of each attribute, indexed by enum iour_policy_attr. */
static const struct {
	uint32_t min, max, def;
} attr_tab[IOUR_POLICY_ATTR__MAX] = {
	[IOUR_POLICY_ATTR_TARGET] = { 0, IOUR_POLICY_TARGET_RING, IOUR_POLICY_TARGET_TASK },
	[IOUR_POLICY_ATTR_COMPAT] = { 0, IOUR_POLICY_COMPAT_HARD, IOUR_POLICY_COMPAT_BEST_EFFORT },
	[IOUR_POLICY_ATTR_NNP] = { 0, IOUR_POLICY_NNP_SET, IOUR_POLICY_NNP_SET },
	[IOUR_POLICY_ATTR_NO_FILTER_FALLBACK] = { 0, IOUR_POLICY_FALLBACK_OPEN,
						  IOUR_POLICY_FALLBACK_CLOSED },
	[IOUR_POLICY_ATTR_THREADS] = { 0, IOUR_POLICY_THREADS_REFUSE, IOUR_POLICY_THREADS_REPORT },
	[IOUR_POLICY_ATTR_COMPANION] = { 0, IOUR_POLICY_COMPANION_EPERM,
					 IOUR_POLICY_COMPANION_ENOSYS },
	[IOUR_POLICY_ATTR_DEFAULT] = { 0, IOUR_POLICY_DEFAULT_ALLOW, IOUR_POLICY_DEFAULT_DENY },
};

static bool attr_known(uint32_t attr)
{
	return attr > IOUR_POLICY_ATTR__MIN && attr < IOUR_POLICY_ATTR__MAX;
}

/* Names of the attributes for error details, as in policy.h. */
static const char *const attr_name[IOUR_POLICY_ATTR__MAX] = {
	[IOUR_POLICY_ATTR_TARGET] = "IOUR_POLICY_ATTR_TARGET",
	[IOUR_POLICY_ATTR_COMPAT] = "IOUR_POLICY_ATTR_COMPAT",
	[IOUR_POLICY_ATTR_NNP] = "IOUR_POLICY_ATTR_NNP",
	[IOUR_POLICY_ATTR_NO_FILTER_FALLBACK] = "IOUR_POLICY_ATTR_NO_FILTER_FALLBACK",
	[IOUR_POLICY_ATTR_THREADS] = "IOUR_POLICY_ATTR_THREADS",
	[IOUR_POLICY_ATTR_COMPANION] = "IOUR_POLICY_ATTR_COMPANION",
	[IOUR_POLICY_ATTR_DEFAULT] = "IOUR_POLICY_ATTR_DEFAULT",
};

/* -EINVAL for an unknown attribute, with the detail naming it. */
static int attr_unknown(const char *function, uint32_t attr)
{
	return iour__detail(function, -EINVAL, "attribute %u: attributes are %d..%d (%s .. %s)",
			    attr, IOUR_POLICY_ATTR__MIN + 1, IOUR_POLICY_ATTR__MAX - 1,
			    attr_name[IOUR_POLICY_ATTR__MIN + 1],
			    attr_name[IOUR_POLICY_ATTR__MAX - 1]);
}

/* A program of the policy: the filter API's own type (filter_internal.h),
 * released with iour_prog__free(). */
static struct iour_prog *prog_new(uint32_t opcode, uint32_t kind, uint32_t pdu_size,
				  const struct iour_insn *insns, size_t cnt)
{
	struct iour_prog *pr = iour__malloc(sizeof(*pr) + cnt * sizeof(*insns));

	if (!pr)
		return NULL;
	pr->opcode = opcode;
	pr->kind = kind;
	pr->pdu_size = pdu_size;
	pr->pad = 0;
	pr->next = NULL;
	pr->cnt = cnt;
	if (cnt)
		memcpy(pr->insns, insns, cnt * sizeof(*insns));
	return pr;
}

/* A copy of a chain of stacked programs (iour__filter_compile_stack()). */
static struct iour_prog *prog_dup(const struct iour_prog *src)
{
	struct iour_prog *head = NULL, **tail = &head;

	for (; src; src = src->next) {
		*tail = prog_new(src->opcode, src->kind, src->pdu_size, src->insns, src->cnt);
		if (!*tail) {
			iour_prog__free(head);
			return NULL;
		}
		tail = &(*tail)->next;
	}
	return head;
}

/* Documented in include/iouring_restrict/policy.h */
int iour_policy__new(const struct iour_policy_opts *opts, struct iour_policy **out)
{
	struct iour_policy *p;
	uint32_t a;
	int rc;

	if (!out)
		return -EINVAL;
	rc = IOUR_OPTS_VALID(opts, iour_policy_opts);
	if (rc)
		return rc;
	if (IOUR_OPTS_GET(opts, flags, 0) != 0)
		return -EINVAL;
	p = iour__calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	for (a = IOUR_POLICY_ATTR__MIN + 1; a < IOUR_POLICY_ATTR__MAX; a++)
		p->attr[a] = attr_tab[a].def;
	*out = p;
	return 0;
}

/* Documented in include/iouring_restrict/policy.h */
void iour_policy__free(struct iour_policy *p)
{
	size_t i;

	if (!p)
		return;
	iour_ruleset__free(p->rs);
	iour_filter__free(p->src);
	for (i = 0; i < IOUR__NOPCODES; i++)
		if (p->progs[i])
			iour_prog__free(p->progs[i]);
	iour__free(p);
}

/* Documented in include/iouring_restrict/policy.h */
int iour_policy__dup(const struct iour_policy *p, struct iour_policy **out)
{
	struct iour_policy *c;
	size_t i;

	if (!p || !out)
		return -EINVAL;
	c = iour__calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	memcpy(c->attr, p->attr, sizeof(c->attr));
	memcpy(c->raw, p->raw, sizeof(c->raw));
	if (p->rs && iour_ruleset__dup(p->rs, &c->rs))
		goto oom;
	if (p->src && iour_filter__dup(p->src, &c->src))
		goto oom;
	for (i = 0; i < IOUR__NOPCODES; i++) {
		if (p->progs[i] && !(c->progs[i] = prog_dup(p->progs[i])))
			goto oom;
	}
	*out = c;
	return 0;
oom:
	iour_policy__free(c);
	return -ENOMEM;
}

/* Documented in include/iouring_restrict/policy.h */
int iour_policy__set_ruleset(struct iour_policy *p, const struct iour_ruleset *rs)
{
	struct iour_ruleset *copy = NULL;

	if (!p)
		return -EINVAL;
	if (rs && iour_ruleset__dup(rs, &copy))
		return -ENOMEM;
	iour_ruleset__free(p->rs);
	p->rs = copy;
	return 0;
}

/* Documented in include/iouring_restrict/policy.h */
int iour_policy__get_ruleset(const struct iour_policy *p, struct iour_ruleset **out)
{
	if (!p || !out)
		return -EINVAL;
	*out = NULL;
	if (p->rs && iour_ruleset__dup(p->rs, out))
		return -ENOMEM;
	return 0;
}

/*
 * A one-instruction `ret #k` program says "always allow" (k != 0) or
 * "always deny"; anything else is a real filter.
 */
static uint32_t classify(const struct iour_insn *insns, size_t cnt)
{
	if (cnt == 1 && insns[0].code == (KBPF_RET | KBPF_K))
		return insns[0].k ? IOUR_PROG_ALWAYS_ALLOW : IOUR_PROG_ALWAYS_DENY;
	return IOUR_PROG_FILTER;
}

/* Documented in include/iouring_restrict/policy.h */
int iour_policy__set_prog(struct iour_policy *p, uint32_t opcode, const struct iour_insn *insns,
			  size_t cnt, uint32_t pdu_size)
{
	struct iour_prog *pp;
	uint32_t kind;
	int rc;

	if (!p || opcode >= IOUR__NOPCODES || cnt > IOUR_MAX_INSNS ||
	    pdu_size > iour__schema_max_pdu())
		return -EINVAL;
	if (!insns != !cnt)
		return -EINVAL;
	if (!insns) {
		iour_prog__free(p->progs[opcode]);
		p->progs[opcode] = NULL;
		p->raw[opcode] = false;
		return 0;
	}
	rc = iour_cbpf_validate(insns, cnt, 0, NULL);
	if (rc)
		return rc == -IOUR_ERRNO__INVALID_PROG ? rc : -EINVAL;
	kind = classify(insns, cnt);
	pp = kind == IOUR_PROG_FILTER ? prog_new(opcode, kind, pdu_size, insns, cnt) :
					prog_new(opcode, kind, 0, NULL, 0);
	if (!pp)
		return -ENOMEM;
	iour_prog__free(p->progs[opcode]);
	p->progs[opcode] = pp;
	p->raw[opcode] = true;
	return 0;
}

/* One compiled opcode of a filter set, kept as compiled: one program, or
 * a deny-list split across stacked programs (filter_internal.h). */
static int compile_one(const struct iour_filter *f, uint32_t op, struct iour_prog **out, char *why,
		       size_t whylen)
{
	struct iour__compile_cfg cfg = { .big_endian = __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__,
					 .max_insns = IOUR_MAX_INSNS };
	int rc = iour__filter_compile_stack(f, op, &cfg, NULL, out, why, whylen);

	if (rc)
		return rc == -ENOMEM || rc == -IOUR_ERRNO__PROG_TOO_LARGE ? rc :
									    -IOUR_ERRNO__INTERNAL;
	return 0;
}

/* Documented in include/iouring_restrict/policy.h */
int iour_policy__set_filter(struct iour_policy *p, const struct iour_filter *f)
{
	return iour__policy_set_filter(p, f, NULL, 0);
}

/* Documented in lib/plan/planner.h */
int iour__policy_set_filter(struct iour_policy *p, const struct iour_filter *f, char *why,
			    size_t whylen)
{
	struct iour_prog **next;
	struct iour_filter *copy = NULL;
	uint32_t ops[IOUR__NOPCODES];
	int n = 0, i, rc = 0;

	if (!p)
		return -EINVAL;
	if (f && iour_filter__dup(f, &copy))
		return -ENOMEM;
	next = iour__calloc(IOUR__NOPCODES, sizeof(struct iour_prog *));
	if (!next) {
		iour_filter__free(copy);
		return -ENOMEM;
	}
	if (f) {
		n = iour_filter__opcodes(f, ops, IOUR__NOPCODES);
		if (n < 0)
			rc = n == -ENOMEM ? n : -IOUR_ERRNO__INTERNAL;
	}
	for (i = 0; i < n && !rc; i++)
		if (ops[i] < IOUR__NOPCODES)
			rc = compile_one(f, ops[i], &next[ops[i]], why, whylen);
	if (rc) {
		for (i = 0; i < IOUR__NOPCODES; i++)
			iour_prog__free(next[i]);
		iour__free(next);
		iour_filter__free(copy);
		return rc;
	}
	for (i = 0; i < IOUR__NOPCODES; i++) {
		iour_prog__free(p->progs[i]);
		p->progs[i] = next[i];
		p->raw[i] = false;
	}
	iour__free(next);
	iour_filter__free(p->src);
	p->src = copy;
	return 0;
}

/* Documented in include/iouring_restrict/policy.h */
int iour_policy__prog_cnt(const struct iour_policy *p, uint32_t opcode)
{
	int n = 0;

	if (!p || opcode >= IOUR__NOPCODES)
		return -EINVAL;
	for (const struct iour_prog *pp = p->progs[opcode]; pp; pp = pp->next)
		n++;
	return n;
}

/* Documented in include/iouring_restrict/policy.h */
int iour_policy__set_attr(struct iour_policy *p, uint32_t attr, uint32_t value)
{
	iour__detail_reset(__func__);
	if (!p)
		return -EINVAL;
	if (!attr_known(attr))
		return attr_unknown(__func__, attr);
	if (value < attr_tab[attr].min || value > attr_tab[attr].max)
		return iour__detail(__func__, -ERANGE, "%s value %u: values are %u..%u",
				    attr_name[attr], value, attr_tab[attr].min, attr_tab[attr].max);
	p->attr[attr] = value;
	return 0;
}

/* Documented in include/iouring_restrict/policy.h */
int iour_policy__get_attr(const struct iour_policy *p, uint32_t attr, uint32_t *value)
{
	iour__detail_reset(__func__);
	if (!p || !value)
		return -EINVAL;
	if (!attr_known(attr))
		return attr_unknown(__func__, attr);
	*value = p->attr[attr];
	return 0;
}

/* Documented in include/iouring_restrict/policy.h */
int iour_policy_attr_bounds(uint32_t attr, uint32_t *min, uint32_t *max, uint32_t *def)
{
	iour__detail_reset(__func__);
	if (!attr_known(attr))
		return attr_unknown(__func__, attr);
	if (min)
		*min = attr_tab[attr].min;
	if (max)
		*max = attr_tab[attr].max;
	if (def)
		*def = attr_tab[attr].def;
	return 0;
}
