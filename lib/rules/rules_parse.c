/* SPDX-License-Identifier: MIT */
/*
 * Comparison lists (iour_rule_parse(), include/iouring_restrict/rules.h):
 * a recursive-descent parser over the text, producing the struct iour_cmp
 * array of iour_filter__add_rule().  Positions are byte offsets so that
 * errors can point at the offending character.  The grammar is in
 * doc/cli.md, "Rule expressions"; the words come from rules.c.
 */
#include <ctype.h>
#include <errno.h>
#include <string.h>
#include <strings.h>

#include "rules_internal.h"
#include "iouring_restrict/errors.h"
#include "iouring_restrict/names.h"

/* A parsed rule: the comparisons and the memory their sets use. */
struct iour_rule {
	struct iour_cmp cmps[IOUR_FILTER_MAX_CMPS];
	size_t n;
	uint64_t *sets[IOUR_FILTER_MAX_CMPS]; /* owned; NULL if unused */
	const char *warning;
};

/* An operand for @f: an IPv6 address for addr6, else a scalar. */
static int parse_operand(struct iour__rps *p, const struct iour__rfield *f, struct iour_cmp *c)
{
	if (f->kind == IOUR_FIELD_KIND_ADDR6)
		return iour__rps_addr6(p, c->addr6);
	return iour__rps_scalar(p, f, &c->value);
}

/* '{' value, ... '}' */
static int parse_set(struct iour__rps *p, const struct iour__rfield *f, struct iour_cmp *c,
		     uint64_t **store)
{
	uint64_t *set = NULL, *grown, v;
	size_t n = 0, cap = 0, start = p->i - 1;
	int r;

	if (f->kind == IOUR_FIELD_KIND_ADDR6)
		return iour__rps_fail(p, start,
				      "sets of IPv6 addresses are not supported: "
				      "write one rule per address");
	for (;;) {
		r = iour__rps_scalar(p, f, &v);
		if (r)
			goto err;
		if (n == cap) {
			cap = cap ? 2 * cap : 8;
			grown = iour__realloc(set, cap * sizeof(*set));
			if (!grown) {
				r = -ENOMEM;
				iour__rps_fail(p, start, "out of memory");
				goto err;
			}
			set = grown;
		}
		set[n++] = v;
		if (iour__rps_eat(p, "}"))
			break;
		if (!iour__rps_eat(p, ",")) {
			iour__rps_skip_ws(p);
			r = iour__rps_fail(p, p->i, "expected ',' or '}' in the set");
			goto err;
		}
	}
	c->set = set;
	c->set_len = n;
	*store = set;
	return 0;
err:
	iour__free(set);
	return r;
}

/* After "in": a set, a range or an address prefix (the address alone: its
 * full length, as in policy files). */
static int parse_in(struct iour__rps *p, const struct iour__rfield *f, struct iour_cmp *c,
		    bool negated, uint64_t **store)
{
	uint64_t len;
	size_t start;
	char w[16];
	int r;

	iour__rps_skip_ws(p);
	p->opnd = p->i;
	if (iour__rps_eat(p, "{")) {
		c->op = negated ? IOUR_CMP_NOT_IN_SET : IOUR_CMP_IN_SET;
		return parse_set(p, f, c, store);
	}
	if (iour__rps_eat(p, "[")) {
		if (f->kind == IOUR_FIELD_KIND_ADDR6)
			return iour__rps_fail(p, p->i - 1, "ranges do not apply to %s", f->name);
		c->op = negated ? IOUR_CMP_NOT_IN_RANGE : IOUR_CMP_IN_RANGE;
		if ((r = iour__rps_scalar(p, f, &c->value)))
			return r;
		if (!iour__rps_eat(p, ",")) {
			iour__rps_skip_ws(p);
			return iour__rps_fail(p, p->i,
					      "expected ',' between the bounds of the range");
		}
		if ((r = iour__rps_scalar(p, f, &c->arg)))
			return r;
		if (!iour__rps_eat(p, "]")) {
			iour__rps_skip_ws(p);
			return iour__rps_fail(p, p->i, "expected ']' after the range");
		}
		return 0;
	}
	iour__rps_skip_ws(p);
	if (f->kind != IOUR_FIELD_KIND_ADDR4 && f->kind != IOUR_FIELD_KIND_ADDR6)
		return iour__rps_fail(p, p->i, "expected '{' (a set) or '[' (a range) after 'in'");
	c->op = negated ? IOUR_CMP_NOT_IN_PREFIX : IOUR_CMP_IN_PREFIX;
	if ((r = parse_operand(p, f, c)))
		return r;
	if (!iour__rps_eat(p, "/")) {
		c->arg = f->kind == IOUR_FIELD_KIND_ADDR4 ? 32 : 128;
		return 0;
	}
	if ((r = iour__rps_word(p, w, sizeof(w), &start, "a prefix length")))
		return r;
	if (iour__rule_number(w, &len))
		return iour__rps_fail(p, start, "'%s' is not a prefix length", w);
	c->arg = len;
	return 0;
}

/* Explains why the filter refused one comparison, as precisely as the
 * comparison allows. */
static const char *refusal(int r, const struct iour_cmp *c)
{
	switch (r) {
	case -ERANGE:
		return "value outside the field's valid values";
	case -EOPNOTSUPP:
		return "operator does not apply to this field";
	case -EDOM:
		return "field does not exist for this opcode";
	case -E2BIG:
		return "too many values";
	case -EINVAL:
		return iour__rule_einval_reason(c) ? iour__rule_einval_reason(c) :
						     "malformed operand";
	default:
		return "refused";
	}
}

/* Checks one comparison with the filter; a refused one is reported at
 * its operand (@opnd) for a bad value, else at its start. */
static int check_cmp(struct iour__rps *p, const struct iour_cmp *c, size_t start, size_t opnd)
{
	struct iour_filter *scratch;
	char msg[128];
	int r;

	r = iour_filter__new(NULL, &scratch);
	if (r) {
		iour_strerror(r, msg, sizeof(msg));
		iour__rps_fail(p, start, "iour_filter__new: %s", msg);
		return r == -ENOMEM ? r : -EBADMSG;
	}
	r = iour_filter__add_rule(scratch, p->op, IOUR_ALLOW, c, 1);
	iour_filter__free(scratch);
	if (r == -ENOMEM)
		return r;
	if (r)
		return iour__rps_fail(p, r == -ERANGE ? opnd : start,
				      "%s (iour_filter__add_rule: %s)", refusal(r, c),
				      iour_errname(r));
	return 0;
}

/* FIELD & MASK == VALUE, FIELD & MASK != 0 (the '&' is consumed). */
static int parse_masked(struct iour__rps *p, const struct iour__rfield *f, struct iour_cmp *c)
{
	uint64_t mask, v;
	size_t start, opstart;
	int r;

	iour__rps_skip_ws(p);
	p->opnd = p->i;
	if ((r = iour__rps_scalar(p, f, &mask)))
		return r;
	iour__rps_skip_ws(p);
	opstart = p->i;
	if (iour__rps_eat(p, "==")) {
		if ((r = iour__rps_scalar(p, f, &v)))
			return r;
		c->op = IOUR_CMP_MASKED_EQ;
		c->value = v;
		c->arg = mask;
	} else if (iour__rps_eat(p, "!=")) {
		iour__rps_skip_ws(p);
		start = p->i;
		if ((r = iour__rps_scalar(p, f, &v)))
			return r;
		if (v != 0)
			return iour__rps_fail(p, start,
					      "'FIELD & MASK != VALUE' is supported only "
					      "with VALUE 0");
		c->op = IOUR_CMP_ANY_BITS;
		c->value = mask;
	} else {
		return iour__rps_fail(p, opstart, "expected '==' or '!=' after 'FIELD & MASK'");
	}
	return 0;
}

/* The operator at the cursor, from the one table (rules.c): its entry,
 * or NULL.  Words ("in", "all-bits") end where a word does; "not in" may
 * have any blanks between its words.  The cursor moves past it. */
static const struct iour__ropname *match_op(struct iour__rps *p)
{
	const struct iour__ropname *best = NULL;
	const char *s = p->s + p->i, *name;
	size_t i, n, len = 0, q, k;

	for (i = 0; i < iour__rule_nops; i++) {
		name = iour__rule_ops[i].name;
		n = strlen(name);
		if (!strcmp(name, "not in")) {
			/* "not", blanks, "in" */
			if (strncasecmp(s, "not", 3) != 0 || iour__rps_word_char(s[3]))
				continue;
			for (q = 3; isspace((unsigned char)s[q]); q++)
				;
			if (q == 3 || strncasecmp(s + q, "in", 2) != 0 ||
			    iour__rps_word_char(s[q + 2]))
				continue;
			k = q + 2;
		} else {
			if (strncasecmp(s, name, n) != 0)
				continue;
			if (isalpha((unsigned char)name[0]) && iour__rps_word_char(s[n]))
				continue;
			k = n;
		}
		if (k > len) {
			best = &iour__rule_ops[i];
			len = k;
		}
	}
	p->i += len;
	return best;
}

static int parse_cmp(struct iour__rps *p, struct iour_cmp *c, uint64_t **store)
{
	const struct iour__ropname *o;
	struct iour__rfield fd, *f = &fd;
	size_t start, opstart;
	char w[64];
	bool known;
	int r;

	memset(c, 0, sizeof(*c));
	c->sz = sizeof(*c);
	if ((r = iour__rps_word(p, w, sizeof(w), &start, "a field name")))
		return r;
	if (iour__rule_find_field(w, p->op, &known, f))
		return iour__rule_field_error(p, w, start, known);
	c->field = f->id;
	iour__rps_skip_ws(p);
	opstart = p->i;
	p->opnd = opstart;
	if (f->kind == IOUR_FIELD_KIND_ADDR6 && strncmp(p->s + p->i, "==", 2) != 0 &&
	    strncmp(p->s + p->i, "!=", 2) != 0 && strncasecmp(p->s + p->i, "in", 2) != 0 &&
	    strncasecmp(p->s + p->i, "not", 3) != 0 && strncmp(p->s + p->i, "!in", 3) != 0)
		return iour__rps_fail(p, opstart, "only ==, != and 'in PREFIX' apply to %s",
				      f->name);
	if (p->s[p->i] == '&' && p->s[p->i + 1] != '=') {
		p->i++;
		return parse_masked(p, f, c);
	}
	o = match_op(p);
	if (!o) {
		if (p->s[p->i] == '=')
			return iour__rps_fail(p, opstart,
					      "'=' is not an operator here: compare with '=='");
		if (!strncasecmp(p->s + p->i, "not", 3) && !iour__rps_word_char(p->s[p->i + 3])) {
			p->i += 3;
			iour__rps_skip_ws(p);
			return iour__rps_fail(p, p->i, "expected 'in' after 'not'");
		}
		if (p->s[p->i] == '\0')
			return iour__rps_fail(p, opstart,
					      "expected an operator after '%s' at the end", w);
		return iour__rps_fail(p, opstart,
				      "expected an operator (==, !=, <, <=, >, >=, &=, "
				      "& MASK ==, in, not in)");
	}
	c->op = o->op;
	switch (o->op) {
	case IOUR_CMP_MASKED_EQ:
		return iour__rps_fail(p, opstart,
				      "'&==' takes its mask from the text: write "
				      "'FIELD & MASK == VALUE'");
	case IOUR_CMP_IN_SET:
	case IOUR_CMP_NOT_IN_SET:
		return parse_in(p, f, c, o->op == IOUR_CMP_NOT_IN_SET, store);
	case IOUR_CMP_ANY_BITS:
	case IOUR_CMP_ALL_BITS:
	case IOUR_CMP_NONE_BITS:
		iour__rps_skip_ws(p);
		p->opnd = p->i;
		return iour__rps_scalar(p, f, &c->value);
	default:
		break;
	}
	iour__rps_skip_ws(p);
	p->opnd = p->i;
	return parse_operand(p, f, c);
}

/* Notes comparisons that are valid but cannot mean what they say. */
static void warn_cmp(struct iour_rule *rule, const struct iour_cmp *c)
{
	uint64_t largefile, path;

	/* The schema knows the kernel's O_LARGEFILE where it knows the
	 * architecture (doc/kernel.md 4.3); elsewhere there is no warning. */
	if (c->field != IOUR_FIELD_OPEN_FLAGS || (c->op != IOUR_CMP_EQ && c->op != IOUR_CMP_NE) ||
	    iour__rule_constant("O_LARGEFILE", &largefile) || iour__rule_constant("O_PATH", &path))
		return;
	if (!(c->value & (largefile | path)))
		rule->warning = "64-bit kernels add O_LARGEFILE to the open flags of every request "
				"without O_PATH, so 'flags==' never holds and 'flags!=' always "
				"does: test bits with '&=' or 'flags & MASK == VALUE', and the "
				"access mode with accmode";
}

/* Documented in include/iouring_restrict/rules.h */
void iour_rule_free(struct iour_rule *rule)
{
	size_t i;

	if (!rule)
		return;
	for (i = 0; i < rule->n; i++)
		iour__free(rule->sets[i]);
	iour__free(rule);
}

/* The comparisons of @text into @rule. */
static int parse_list(struct iour__rps *p, struct iour_rule *rule)
{
	const char *text = p->s;
	size_t start, n;
	int r;

	/* "true": a rule without comparisons, which always holds. */
	iour__rps_skip_ws(p);
	n = strlen(text + p->i);
	while (n && isspace((unsigned char)text[p->i + n - 1]))
		n--;
	if (n == 4 && !strncasecmp(text + p->i, "true", 4))
		return 0;
	if (n == 0)
		return iour__rps_fail(p, p->i,
				      "empty rule (write 'true' for a rule that always holds)");
	for (;;) {
		iour__rps_skip_ws(p);
		start = p->i;
		if (rule->n == IOUR_FILTER_MAX_CMPS)
			return iour__rps_fail(p, start, "more than %d comparisons in one rule",
					      IOUR_FILTER_MAX_CMPS);
		rule->sets[rule->n] = NULL;
		r = parse_cmp(p, &rule->cmps[rule->n], &rule->sets[rule->n]);
		if (!r)
			r = check_cmp(p, &rule->cmps[rule->n], start, p->opnd);
		/* the set belongs to the rule from here: freed with it */
		rule->n++;
		if (r)
			return r;
		warn_cmp(rule, &rule->cmps[rule->n - 1]);
		iour__rps_skip_ws(p);
		if (p->s[p->i] == '\0')
			return 0;
		if (p->s[p->i] != ',')
			return iour__rps_fail(p, p->i,
					      "expected ',' or the end of the rule, found '%c'",
					      p->s[p->i]);
		p->i++;
	}
}

static int rule_parse(const char *text, uint32_t opcode, struct iour_rule **out,
		      struct iour_rule_error *err)
{
	struct iour__rps p = { .s = text, .op = opcode, .err = err };
	struct iour_rule *rule;
	int r;

	if (iour__rule_err_init(err) || !text || !out || opcode > 255)
		return -EINVAL;
	p.group = iour__rule_group_of(opcode);
	rule = iour__calloc(1, sizeof(*rule));
	if (!rule)
		return -ENOMEM;
	r = parse_list(&p, rule);
	if (r) {
		iour_rule_free(rule);
		return r;
	}
	*out = rule;
	return 0;
}

static int rule_cmps(const struct iour_rule *rule, const struct iour_cmp **cmps)
{
	if (!rule || !cmps)
		return -EINVAL;
	*cmps = rule->n ? rule->cmps : NULL;
	return (int)rule->n;
}

/* Documented in include/iouring_restrict/rules.h */
const char *iour_rule_warning(const struct iour_rule *rule)
{
	return rule ? rule->warning : NULL;
}

/* Documented in include/iouring_restrict/rules.h */
int iour_rule_parse(const char *text, uint32_t opcode, struct iour_rule **out,
		    struct iour_rule_error *err)
{
	return iour__err_public(rule_parse(text, opcode, out, err), IOUR__ERRSET_RULE_PARSE);
}

/* Documented in include/iouring_restrict/rules.h */
int iour_rule_cmps(const struct iour_rule *rule, const struct iour_cmp **cmps)
{
	return iour__err_public(rule_cmps(rule, cmps), IOUR__ERRSET_RULE_CMPS);
}
