/* SPDX-License-Identifier: MIT */
/*
 * The rule language of iour-restrict: a recursive-descent parser over the
 * command-line text, producing struct iour_cmp arrays for the filter
 * builder, and the text of `help rules`.  Positions are byte offsets so
 * that errors can point at the offending character.  Fields, payloads and
 * constants come from the library's request schema
 * (iouring_restrict/schema.h), so a payload added there needs no edit
 * here (doc/design.md, "Adding a filterable opcode or field"); the
 * simulator's contexts are in expr_ctx.c.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "core/cli.h"
#include "expr.h"
#include "expr_internal.h"

/* The width of the help texts' lines. */
#define HELP_WIDTH 76
/* The margin of a labelled help line ("  SOCKET             family, ..."). */
#define HELP_MARGIN 21

/* ---- the request schema */

static bool field_at(size_t i, struct iour_field_info *fi)
{
	memset(fi, 0, sizeof(*fi));
	fi->sz = sizeof(*fi);
	return iour_field_get(i, fi) == 0;
}

static bool payload_at(size_t i, struct iour_payload_info *pi)
{
	memset(pi, 0, sizeof(*pi));
	pi->sz = sizeof(*pi);
	return iour_payload_get(i, pi) == 0;
}

static bool const_at(size_t i, struct iour_const_info *ci)
{
	memset(ci, 0, sizeof(*ci));
	ci->sz = sizeof(*ci);
	return iour_const_get(i, ci) == 0;
}

const char *expr_group_of(uint32_t opcode)
{
	struct iour_payload_info pi;
	int r = iour_payload_find(opcode);

	return r >= 0 && payload_at((size_t)r, &pi) ? pi.group : NULL;
}

const char *expr_bare(const struct iour_field_info *fi)
{
	size_t n = strlen(fi->group);

	return n && !strncmp(fi->name, fi->group, n) && fi->name[n] == '.' ? fi->name + n + 1
									   : fi->name;
}

void expr_field_from(const struct iour_field_info *fi, struct expr_field *f)
{
	f->name = expr_bare(fi);
	f->id = fi->id;
	f->kind = fi->kind == IOUR_FIELD_KIND_ADDR4   ? EXPR_V_ADDR4
		  : fi->kind == IOUR_FIELD_KIND_ADDR6 ? EXPR_V_ADDR6
						      : EXPR_V_NUM;
	f->ns = fi->prefix;
	f->bits = fi->kind == IOUR_FIELD_KIND_BITS;
}

/* The index of the first field of @idx's group at its byte slot. */
static size_t slot_owner(size_t idx)
{
	struct iour_field_info fi, o;
	size_t i;

	if (!field_at(idx, &fi))
		return idx;
	for (i = 0; i < idx && field_at(i, &o); i++)
		if (!strcmp(o.group, fi.group) && o.offset == fi.offset && o.size == fi.size)
			return i;
	return idx;
}

bool expr_owns_slot(size_t idx)
{
	return slot_owner(idx) == idx;
}

void expr_cat(char *buf, size_t cap, const char *fmt, ...)
{
	size_t n = strlen(buf);
	va_list ap;

	if (n + 1 >= cap)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + n, cap - n, fmt, ap);
	va_end(ap);
}

/* The fields a rule on @group may test, for messages: the group's, then
 * those of every opcode. */
static void fields_of(const char *group, char *buf, size_t cap)
{
	struct iour_field_info fi;
	int pass;
	size_t i;

	buf[0] = '\0';
	for (pass = 0; pass < 2; pass++)
		for (i = 0; field_at(i, &fi); i++)
			if (pass ? !fi.group[0] : group && !strcmp(fi.group, group))
				expr_cat(buf, cap, "%s%s", buf[0] ? ", " : "", expr_bare(&fi));
}

/* Finds a field by name ("family" or "socket.family", in any case) for
 * @group.  *known is set if the name exists for some other opcode. */
static bool find_field(const char *name, const char *group, bool *known, struct expr_field *f)
{
	struct iour_field_info fi;
	const char *bare;
	size_t i, n;

	*known = false;
	for (i = 0; field_at(i, &fi); i++) {
		bare = name;
		if (fi.group[0]) {
			n = strlen(fi.group);
			if (!strncasecmp(name, fi.group, n) && name[n] == '.')
				bare = name + n + 1;
			else if (strchr(name, '.'))
				continue;
		}
		if (strcasecmp(bare, expr_bare(&fi)))
			continue;
		if (!fi.group[0] || (group && !strcmp(fi.group, group))) {
			expr_field_from(&fi, f);
			return true;
		}
		*known = true;
	}
	return false;
}

/* ---- symbolic constants */

/* A named constant of the schema, in any case; IOSQE_* from the library's
 * name table (the prefix is required here, so that "ASYNC" cannot shadow
 * anything). */
static int find_constant(const char *name, uint64_t *v)
{
	struct iour_const_info ci;
	int r = iour_const_find(name);

	if (r >= 0 && const_at((size_t)r, &ci)) {
		*v = ci.value;
		return 0;
	}
	if (!strncasecmp(name, "IOSQE_", 6)) {
		r = iour_sqe_flag_from_name(name);
		if (r > 0) {
			*v = (uint64_t)r;
			return 0;
		}
	}
	return -1;
}

/* ---- the parser */

int expr_fail(struct expr_ps *p, size_t pos, const char *fmt, ...)
{
	va_list ap;

	p->err->pos = pos;
	va_start(ap, fmt);
	vsnprintf(p->err->msg, sizeof(p->err->msg), fmt, ap);
	va_end(ap);
	return -1;
}

void expr_skip_ws(struct expr_ps *p)
{
	while (isspace((unsigned char)p->s[p->i]))
		p->i++;
}

static bool word_char(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '.' || c == ':';
}

/* Reads a word at the current position into @buf; *start is its offset. */
int expr_read_word(struct expr_ps *p, char *buf, size_t cap, size_t *start, const char *expected)
{
	size_t n = 0;

	expr_skip_ws(p);
	*start = p->i;
	while (word_char(p->s[p->i])) {
		if (n + 1 >= cap)
			return expr_fail(p, *start, "'%.*s...' is too long", 20, p->s + *start);
		buf[n++] = p->s[p->i++];
	}
	buf[n] = '\0';
	if (n == 0) {
		if (p->s[p->i] == '\0')
			return expr_fail(p, p->i, "expected %s at the end", expected);
		return expr_fail(p, p->i, "expected %s, found '%c'", expected, p->s[p->i]);
	}
	return 0;
}

static bool parse_ipv4(const char *w, uint64_t *v)
{
	struct in_addr a;

	/* inet_pton() accepts exactly four dotted decimal bytes. */
	if (inet_pton(AF_INET, w, &a) != 1)
		return false;
	*v = ntohl(a.s_addr);
	return true;
}

/* The bare names of the fields of @kind (IOUR_FIELD_KIND_ADDR4 or _ADDR6),
 * joined with " or ", from the request schema. */
static const char *kind_fields(uint32_t kind, char *buf, size_t cap)
{
	struct iour_field_info fi;

	buf[0] = '\0';
	for (size_t i = 0; field_at(i, &fi); i++)
		if (fi.kind == kind)
			expr_cat(buf, cap, "%s%s", buf[0] ? " or " : "", expr_bare(&fi));
	return buf;
}

/* One term of a value: a number, a constant or (for an IPv4 field) an
 * IPv4 address. */
static int parse_term(struct expr_ps *p, const struct expr_field *f, uint64_t *v)
{
	char w[128], names[128];
	size_t start;

	if (expr_read_word(p, w, sizeof(w), &start, "a value"))
		return -1;
	if (strchr(w, ':'))
		return expr_fail(p, start, "'%s': an IPv6 address is a value of %s only", w,
				 kind_fields(IOUR_FIELD_KIND_ADDR6, names, sizeof(names)));
	if (strchr(w, '.') && isdigit((unsigned char)w[0])) {
		if (!parse_ipv4(w, v))
			return expr_fail(p, start, "'%s' is not an IPv4 address", w);
		if (f->kind != EXPR_V_ADDR4)
			return expr_fail(p, start, "'%s': an IPv4 address is a value of %s only", w,
					 kind_fields(IOUR_FIELD_KIND_ADDR4, names, sizeof(names)));
		return 0;
	}
	if (isdigit((unsigned char)w[0])) {
		if (cli_parse_u64(w, v))
			return expr_fail(p, start, "'%s' is not a number (decimal, 0x hex or 0 octal, "
				    "below 2^64)", w);
		return 0;
	}
	if (find_constant(w, v))
		return expr_fail(p, start, "unknown constant '%s'", w);
	if (!f->ns)
		return expr_fail(p, start, "'%s': %s takes numbers%s, not constants", w, f->name,
			    f->kind == EXPR_V_ADDR4 ? " and IPv4 addresses" : "");
	if (strncasecmp(w, f->ns, strlen(f->ns)))
		return expr_fail(p, start, "'%s' is not a constant of %s, which takes %s* constants",
			    w, f->name, f->ns);
	return 0;
}

/* A value: terms joined by '|' (O_CREAT|O_TRUNC) on a bit-flag field. */
int expr_parse_scalar(struct expr_ps *p, const struct expr_field *f, uint64_t *v)
{
	uint64_t t;

	if (parse_term(p, f, v))
		return -1;
	for (;;) {
		expr_skip_ws(p);
		if (p->s[p->i] != '|')
			return 0;
		if (!f->bits)
			return expr_fail(p, p->i, "'|' joins bit flags, and %s is not a set of flags: "
				    "to accept several values, write '%s in {A, B}'", f->name,
				    f->name);
		p->i++;
		if (parse_term(p, f, &t))
			return -1;
		*v |= t;
	}
}

int expr_parse_addr6(struct expr_ps *p, uint8_t out[16])
{
	char w[128];
	size_t start;

	if (expr_read_word(p, w, sizeof(w), &start, "an IPv6 address"))
		return -1;
	if (inet_pton(AF_INET6, w, out) != 1)
		return expr_fail(p, start, "'%s' is not an IPv6 address", w);
	return 0;
}

/* An operand for @f: an IPv6 address for addr6, else a scalar. */
static int parse_operand(struct expr_ps *p, const struct expr_field *f, struct iour_cmp *c)
{
	if (f->kind == EXPR_V_ADDR6)
		return expr_parse_addr6(p, c->addr6);
	return expr_parse_scalar(p, f, &c->value);
}

bool expr_eat(struct expr_ps *p, const char *tok)
{
	size_t n = strlen(tok);

	expr_skip_ws(p);
	if (strncmp(p->s + p->i, tok, n))
		return false;
	p->i += n;
	return true;
}

/* '{' value, ... '}' */
static int parse_set(struct expr_ps *p, const struct expr_field *f, struct iour_cmp *c, uint64_t **store)
{
	uint64_t *set = NULL, *grown, v;
	size_t n = 0, cap = 0, start = p->i - 1;

	if (f->kind == EXPR_V_ADDR6)
		return expr_fail(p, start, "sets of IPv6 addresses are not supported: "
			    "write one rule per address");
	for (;;) {
		if (expr_parse_scalar(p, f, &v))
			goto err;
		if (n == cap) {
			cap = cap ? 2 * cap : 8;
			grown = realloc(set, cap * sizeof(*set));
			if (!grown) {
				expr_fail(p, start, "out of memory");
				goto err;
			}
			set = grown;
		}
		set[n++] = v;
		if (expr_eat(p, "}"))
			break;
		if (!expr_eat(p, ",")) {
			expr_skip_ws(p);
			expr_fail(p, p->i, "expected ',' or '}' in the set");
			goto err;
		}
	}
	c->set = set;
	c->set_len = n;
	*store = set;
	return 0;
err:
	free(set);
	return -1;
}

/* After "in": a set, a range or an address prefix. */
static int parse_in(struct expr_ps *p, const struct expr_field *f, struct iour_cmp *c, bool negated,
		    uint64_t **store)
{
	uint64_t len;
	size_t start;
	char w[16];

	expr_skip_ws(p);
	p->opnd = p->i;
	if (expr_eat(p, "{")) {
		c->op = negated ? IOUR_CMP_NOT_IN_SET : IOUR_CMP_IN_SET;
		return parse_set(p, f, c, store);
	}
	if (expr_eat(p, "[")) {
		if (f->kind == EXPR_V_ADDR6)
			return expr_fail(p, p->i - 1, "ranges do not apply to %s", f->name);
		c->op = negated ? IOUR_CMP_NOT_IN_RANGE : IOUR_CMP_IN_RANGE;
		if (expr_parse_scalar(p, f, &c->value))
			return -1;
		if (!expr_eat(p, ",")) {
			expr_skip_ws(p);
			return expr_fail(p, p->i, "expected ',' between the bounds of the range");
		}
		if (expr_parse_scalar(p, f, &c->arg))
			return -1;
		if (!expr_eat(p, "]")) {
			expr_skip_ws(p);
			return expr_fail(p, p->i, "expected ']' after the range");
		}
		return 0;
	}
	expr_skip_ws(p);
	if (f->kind == EXPR_V_NUM)
		return expr_fail(p, p->i, "expected '{' (a set) or '[' (a range) after 'in'");
	c->op = negated ? IOUR_CMP_NOT_IN_PREFIX : IOUR_CMP_IN_PREFIX;
	if (parse_operand(p, f, c))
		return -1;
	if (!expr_eat(p, "/")) {
		expr_skip_ws(p);
		return expr_fail(p, p->i, "expected '/' and a prefix length after the address");
	}
	if (expr_read_word(p, w, sizeof(w), &start, "a prefix length"))
		return -1;
	if (cli_parse_u64(w, &len))
		return expr_fail(p, start, "'%s' is not a prefix length", w);
	c->arg = len;
	return 0;
}

/* Explains why the library refused one comparison, as precisely as the
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
		if ((c->op == IOUR_CMP_IN_RANGE || c->op == IOUR_CMP_NOT_IN_RANGE) &&
		    c->value > c->arg)
			return "the range's low end is above its high end";
		if (c->op == IOUR_CMP_MASKED_EQ && !c->arg)
			return "the mask is 0";
		if (c->op == IOUR_CMP_MASKED_EQ && (c->value & ~c->arg))
			return "the value has bits outside the mask, so it can never match";
		if (c->op == IOUR_CMP_ANY_BITS && !c->value)
			return "'&= 0' tests no bit";
		return "malformed operand";
	default:
		return "refused";
	}
}

/* Checks one comparison with the library; a refused one is reported at
 * its operand (@opnd) for a bad value, else at its start. */
static int check_cmp(struct expr_ps *p, const struct iour_cmp *c, size_t start, size_t opnd)
{
	struct iour_filter *scratch;
	int r;

	r = iour_filter__new(NULL, &scratch);
	if (r)
		return expr_fail(p, start, "iour_filter__new: %s", cli_strerror(r));
	r = iour_filter__add_rule(scratch, p->op, IOUR_ALLOW, c, 1);
	iour_filter__free(scratch);
	if (r)
		return expr_fail(p, r == -ERANGE ? opnd : start, "%s (iour_filter__add_rule: %s)",
			    refusal(r, c), iour_errname(r));
	return 0;
}

/* A field the kernel's filters have no field for, and another mechanism
 * covers: a path (Landlock), or an address of a request other than CONNECT
 * (doc/iouring-restrict.7.md, "WHAT IT CANNOT RESTRICT"); "" otherwise. */
static const char *unexposed_hint(const char *name, uint32_t op)
{
	static const char *const paths[] = { "path", "pathname", "filename", "file", "dir",
					     "oldpath", "newpath", "name", NULL };
	static const char *const addrs[] = { "addr", "addr4", "addr6", "address", "port",
					     "sockaddr", NULL };
	const char *last = strrchr(name, '.');
	size_t i;

	last = last ? last + 1 : name;
	for (i = 0; paths[i]; i++)
		if (!strcasecmp(last, paths[i]))
			return "; the kernel's filters see no paths: use Landlock, "
			       "iouring-restrict(7) WHAT IT CANNOT RESTRICT";
	for (i = 0; addrs[i]; i++)
		if (!strcasecmp(last, addrs[i]) && (int)op != iour_opcode_from_name("CONNECT"))
			return "; the kernel's filters see CONNECT's address only: "
			       "iouring-restrict(7) WHAT IT CANNOT RESTRICT";
	return "";
}

static int parse_cmp(struct expr_ps *p, struct iour_cmp *c, uint64_t **store)
{
	struct expr_field fd, *f = &fd;
	size_t start, opstart;
	uint64_t mask, v;
	char w[64], list[192];
	bool known;

	memset(c, 0, sizeof(*c));
	c->sz = sizeof(*c);
	if (expr_read_word(p, w, sizeof(w), &start, "a field name"))
		return -1;
	if (!find_field(w, p->group, &known, f)) {
		fields_of(p->group, list, sizeof(list));
		if (known)
			return expr_fail(p, start, "field '%s' does not exist for opcode %s "
				    "(its fields: %s)%s", w, iour_opcode_name(p->op), list,
				    unexposed_hint(w, p->op));
		return expr_fail(p, start, "unknown field '%s' (fields of %s: %s)%s", w,
			    iour_opcode_name(p->op), list, unexposed_hint(w, p->op));
	}
	c->field = f->id;
	expr_skip_ws(p);
	opstart = p->i;
	p->opnd = opstart;
	if (f->kind == EXPR_V_ADDR6 && strncmp(p->s + p->i, "==", 2) && strncmp(p->s + p->i, "!=", 2) &&
	    strncasecmp(p->s + p->i, "in", 2) && strncasecmp(p->s + p->i, "not", 3) &&
	    strncmp(p->s + p->i, "!in", 3))
		return expr_fail(p, opstart, "only ==, != and 'in PREFIX' apply to %s", f->name);
	if (p->s[p->i] == '&' && p->s[p->i + 1] != '=') {
		/* FIELD & MASK == VALUE, FIELD & MASK != 0 */
		p->i++;
		expr_skip_ws(p);
		p->opnd = p->i;
		if (expr_parse_scalar(p, f, &mask))
			return -1;
		expr_skip_ws(p);
		opstart = p->i;
		if (expr_eat(p, "==")) {
			if (expr_parse_scalar(p, f, &v))
				return -1;
			c->op = IOUR_CMP_MASKED_EQ;
			c->value = v;
			c->arg = mask;
		} else if (expr_eat(p, "!=")) {
			expr_skip_ws(p);
			start = p->i;
			if (expr_parse_scalar(p, f, &v))
				return -1;
			if (v != 0)
				return expr_fail(p, start, "'FIELD & MASK != VALUE' is supported only "
					    "with VALUE 0");
			c->op = IOUR_CMP_ANY_BITS;
			c->value = mask;
		} else {
			return expr_fail(p, opstart, "expected '==' or '!=' after 'FIELD & MASK'");
		}
		return 0;
	}
	if (expr_eat(p, "==")) {
		c->op = IOUR_CMP_EQ;
	} else if (expr_eat(p, "!=")) {
		c->op = IOUR_CMP_NE;
	} else if (expr_eat(p, "<=")) {
		c->op = IOUR_CMP_LE;
	} else if (expr_eat(p, ">=")) {
		c->op = IOUR_CMP_GE;
	} else if (expr_eat(p, "<")) {
		c->op = IOUR_CMP_LT;
	} else if (expr_eat(p, ">")) {
		c->op = IOUR_CMP_GT;
	} else if (expr_eat(p, "&=")) {
		c->op = IOUR_CMP_ANY_BITS;
		expr_skip_ws(p);
		p->opnd = p->i;
		return expr_parse_scalar(p, f, &c->value);
	} else if (p->s[p->i] == '=') {
		return expr_fail(p, opstart, "'=' is not an operator here: compare with '=='");
	} else if (expr_eat(p, "!in")) {
		return parse_in(p, f, c, true, store);
	} else if (!strncasecmp(p->s + p->i, "in", 2) && !word_char(p->s[p->i + 2])) {
		p->i += 2;
		return parse_in(p, f, c, false, store);
	} else if (!strncasecmp(p->s + p->i, "not", 3) && !word_char(p->s[p->i + 3])) {
		p->i += 3;
		expr_skip_ws(p);
		if (strncasecmp(p->s + p->i, "in", 2) || word_char(p->s[p->i + 2]))
			return expr_fail(p, p->i, "expected 'in' after 'not'");
		p->i += 2;
		return parse_in(p, f, c, true, store);
	} else if (p->s[p->i] == '\0') {
		return expr_fail(p, opstart, "expected an operator after '%s' at the end", w);
	} else {
		return expr_fail(p, opstart, "expected an operator (==, !=, <, <=, >, >=, &=, "
			    "& MASK ==, in, not in)");
	}
	expr_skip_ws(p);
	p->opnd = p->i;
	return parse_operand(p, f, c);
}

/* Notes comparisons that are valid but cannot mean what they say. */
static void warn_cmp(struct expr_rule *rule, const struct iour_cmp *c)
{
	uint64_t largefile, path;

	/* The schema knows the kernel's O_LARGEFILE where it knows the
	 * architecture (doc/kernel.md 4.3); elsewhere there is no warning. */
	if (c->field != IOUR_FIELD_OPEN_FLAGS || (c->op != IOUR_CMP_EQ && c->op != IOUR_CMP_NE) ||
	    find_constant("O_LARGEFILE", &largefile) ||
	    find_constant("O_PATH", &path))
		return;
	if (!(c->value & (largefile | path)))
		rule->warning = "64-bit kernels add O_LARGEFILE to the open flags of every request "
				"without O_PATH, so 'flags==' never holds and 'flags!=' always "
				"does: test bits with '&=' or 'flags & MASK == VALUE', and the "
				"access mode with accmode";
}

void expr_rule_free(struct expr_rule *rule)
{
	size_t i;

	for (i = 0; i < rule->n; i++) {
		free(rule->sets[i]);
		rule->sets[i] = NULL;
	}
	rule->n = 0;
}

int expr_parse_rule(const char *text, uint32_t opcode, struct expr_rule *rule,
		    struct expr_error *err)
{
	struct expr_ps p = { .s = text, .op = opcode, .group = expr_group_of(opcode), .err = err };
	size_t start, n;

	memset(rule, 0, sizeof(*rule));
	memset(err, 0, sizeof(*err));
	/* "true": a rule without comparisons, which always holds. */
	expr_skip_ws(&p);
	n = strlen(text + p.i);
	while (n && isspace((unsigned char)text[p.i + n - 1]))
		n--;
	if (n == 4 && !strncasecmp(text + p.i, "true", 4))
		return 0;
	if (n == 0)
		return expr_fail(&p, p.i, "empty rule (write 'true' for a rule that always holds)");

	for (;;) {
		expr_skip_ws(&p);
		start = p.i;
		if (rule->n == IOUR_FILTER_MAX_CMPS) {
			expr_fail(&p, start, "more than %d comparisons in one rule", IOUR_FILTER_MAX_CMPS);
			goto err;
		}
		rule->sets[rule->n] = NULL;
		if (parse_cmp(&p, &rule->cmps[rule->n], &rule->sets[rule->n]) ||
		    check_cmp(&p, &rule->cmps[rule->n], start, p.opnd)) {
			free(rule->sets[rule->n]);
			rule->sets[rule->n] = NULL;
			goto err;
		}
		warn_cmp(rule, &rule->cmps[rule->n]);
		rule->n++;
		expr_skip_ws(&p);
		if (p.s[p.i] == '\0')
			return 0;
		if (p.s[p.i] != ',') {
			expr_fail(&p, p.i, "expected ',' or the end of the rule, found '%c'", p.s[p.i]);
			goto err;
		}
		p.i++;
	}
err:
	expr_rule_free(rule);
	return -1;
}

void expr_report(const char *what, const char *text, const struct expr_error *err)
{
	size_t col = err->pos, i;

	cli_msg("%s: %s (column %zu)", what, err->msg, col + 1);
	fputs("  ", stderr);
	cli_put_escaped(stderr, text); /* control bytes as \xNN */
	fputs("\n  ", stderr);
	for (i = cli_escaped_len(text, col); i > 0; i--)
		fputc(' ', stderr);
	fputs("^\n", stderr);
}

/* ---- help */

void expr_put_wrapped(FILE *out, size_t margin, const char *label, const char *text)
{
	size_t indent = label ? margin : 0, avail = HELP_WIDTH - indent, j;
	const char *s = text;

	if (label && strlen(label) + 3 > margin)
		fprintf(out, "  %s\n%*s", label, (int)indent, "");
	else if (label)
		fprintf(out, "  %-*s", (int)(margin - 2), label);
	while (strlen(s) > avail) {
		/* the last end of a word that fits; a longer word stands alone */
		for (j = avail; j > 0 && !(s[j] == ' ' && s[j - 1] != ' '); j--)
			;
		if (!j)
			j = strcspn(s, " ");
		fprintf(out, "%.*s\n", (int)j, s);
		s += j;
		while (*s == ' ')
			s++;
		if (!*s)
			return;
		fprintf(out, "%*s", (int)indent, "");
	}
	fprintf(out, "%s\n", s);
}

void expr_group_label(const char *group, bool since, char *buf, size_t cap)
{
	struct iour_payload_info pi;
	uint32_t first = UINT32_MAX, kver = 0;
	char v[16];
	size_t i;

	buf[0] = '\0';
	for (i = 0; payload_at(i, &pi); i++) {
		if (pi.since < first)
			first = pi.since;
		if (strcmp(pi.group, group))
			continue;
		expr_cat(buf, cap, "%s%s", buf[0] ? ", " : "", iour_opcode_name(pi.opcode));
		kver = pi.since;
	}
	if (since && kver > first) {
		cli_kver_str(kver, v, sizeof(v));
		expr_cat(buf, cap, " (%s+)", v);
	}
}

/* Whether payload row @i is the first of its group. */
static bool first_of_group(size_t i, struct iour_payload_info *pi)
{
	struct iour_payload_info o;
	size_t k;

	if (!payload_at(i, pi))
		return false;
	for (k = 0; k < i && payload_at(k, &o); k++)
		if (!strcmp(o.group, pi->group))
			return false;
	return true;
}

/* What `help rules` says of a field beside its name: the width or the
 * constants of a field of every opcode, and how a field that is part of
 * its slot's bits, or a view of another field's slot, is read. */
static void field_note(size_t idx, const struct iour_field_info *fi, char *buf, size_t cap)
{
	struct iour_field_info owner;
	struct iour_const_info ci;
	bool listed = false;
	size_t i;

	buf[0] = '\0';
	if (!fi->group[0]) {
		if (fi->kind == IOUR_FIELD_KIND_BITS && fi->prefix)
			expr_cat(buf, cap, " (%s* bits)", fi->prefix);
		else if (fi->kind == IOUR_FIELD_KIND_NUM && !fi->prefix)
			expr_cat(buf, cap, " (%u bits)", fi->size * 8);
		return;
	}
	if (!fi->mask) {
		if (!expr_owns_slot(idx))
			expr_cat(buf, cap, " (the whole word)");
		return;
	}
	if (fi->kind == IOUR_FIELD_KIND_BITS) {
		/* the named bits it holds */
		for (i = 0; fi->prefix && const_at(i, &ci); i++) {
			if (!ci.ns || strcmp(ci.ns, fi->prefix) || !ci.value || (ci.value & ~fi->mask))
				continue;
			expr_cat(buf, cap, "%s%s", listed ? ", " : " (", ci.name);
			listed = true;
		}
		if (listed)
			expr_cat(buf, cap, ")");
		return;
	}
	/* a number: the slot's first field, masked */
	if (!field_at(slot_owner(idx), &owner))
		return;
	expr_cat(buf, cap, " (%s & ", expr_bare(&owner));
	for (i = 0; fi->prefix && const_at(i, &ci); i++)
		if (ci.ns && !strcmp(ci.ns, fi->prefix) && ci.value == fi->mask)
			break;
	if (fi->prefix && const_at(i, &ci))
		expr_cat(buf, cap, "%s)", ci.name);
	else
		expr_cat(buf, cap, "0x%llx)", (unsigned long long)fi->mask);
}

/* One line of fields for the fields of @group ("": every opcode). */
static void help_fields(FILE *out, const char *label, const char *group)
{
	struct iour_field_info fi;
	char text[1024] = "", note[256];
	size_t i;

	for (i = 0; field_at(i, &fi); i++) {
		if (strcmp(fi.group, group))
			continue;
		field_note(i, &fi, note, sizeof(note));
		expr_cat(text, sizeof(text), "%s%s%s", text[0] ? ", " : "", expr_bare(&fi), note);
	}
	expr_put_wrapped(out, HELP_MARGIN, label, text);
}

/* A list of names (static strings of the schema), each once. */
struct names {
	const char *v[64];
	size_t n;
};

static void names_add(struct names *l, const char *name)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (!strcmp(l->v[i], name))
			return;
	if (l->n < sizeof(l->v) / sizeof(l->v[0]))
		l->v[l->n++] = name;
}

/* "a", "a and b", "a, b and c" */
static void cat_joined(char *buf, size_t cap, const struct names *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		expr_cat(buf, cap, "%s%s", !i ? "" : i + 1 == l->n ? " and " : ", ", l->v[i]);
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* A bit-flag view of an earlier field's slot (socket.type_flags): its
 * slot's field already names the namespace. */
static bool bit_view(size_t idx, const struct iour_field_info *fi)
{
	return fi->kind == IOUR_FIELD_KIND_BITS && !expr_owns_slot(idx);
}

/* Which constants each field takes: namespaces in table order, the fields
 * of every opcode last, each naming its fields; then the fields that take
 * numbers only, in table order; and the bit-flag fields, by name. */
static void help_namespaces(FILE *out)
{
	char text[2048] = "Each field takes its own constants only (";
	struct names prefixes = { .n = 0 }, names, bits = { .n = 0 };
	struct iour_field_info fi;
	size_t i, k;
	int pass;

	for (pass = 0; pass < 2; pass++)
		for (i = 0; field_at(i, &fi); i++)
			if (fi.prefix && (fi.group[0] == 0) == (pass == 1) && !bit_view(i, &fi))
				names_add(&prefixes, fi.prefix);
	for (k = 0; k < prefixes.n; k++) {
		names.n = 0;
		for (pass = 0; pass < 2; pass++)
			for (i = 0; field_at(i, &fi); i++)
				if (fi.prefix && (fi.group[0] == 0) == (pass == 1) && !bit_view(i, &fi) &&
				    !strcmp(fi.prefix, prefixes.v[k]))
					names_add(&names, expr_bare(&fi));
		expr_cat(text, sizeof(text), "%s", k ? ", " : "");
		cat_joined(text, sizeof(text), &names);
		expr_cat(text, sizeof(text), ": %s*", prefixes.v[k]);
	}
	names.n = 0;
	for (i = 0; field_at(i, &fi); i++) {
		if (!fi.prefix && fi.kind != IOUR_FIELD_KIND_ADDR6)
			names_add(&names, expr_bare(&fi));
		if (fi.kind == IOUR_FIELD_KIND_BITS)
			names_add(&bits, expr_bare(&fi));
	}
	expr_cat(text, sizeof(text), "; ");
	cat_joined(text, sizeof(text), &names);
	expr_cat(text, sizeof(text), ": numbers).  '|' joins bit flags (");
	qsort(bits.v, bits.n, sizeof(bits.v[0]), cmp_name);
	for (i = 0; i < bits.n; i++)
		expr_cat(text, sizeof(text), "%s%s", i ? ", " : "", bits.v[i]);
	expr_cat(text, sizeof(text), "); for several values of any other field write 'in {A, B}'.");
	expr_put_wrapped(out, 0, NULL, text);
}

void expr_any_fields(char *buf, size_t cap)
{
	struct iour_field_info fi;
	struct names any = { .n = 0 };
	size_t i;

	for (i = 0; field_at(i, &fi); i++)
		if (!fi.group[0])
			names_add(&any, expr_bare(&fi));
	buf[0] = '\0';
	cat_joined(buf, cap, &any);
}

/* The --op line of `filter --help` and `sim --help`: the opcodes with a
 * payload, in table order. */
static void help_filter_op(FILE *out)
{
	struct iour_payload_info pi;
	char text[512] = "the request opcode to filter (", any[128];
	size_t i;

	for (i = 0; payload_at(i, &pi); i++)
		expr_cat(text, sizeof(text), "%s, ", iour_opcode_name(pi.opcode));
	expr_any_fields(any, sizeof(any));
	expr_cat(text, sizeof(text), "or any other for %s only); required", any);
	expr_put_wrapped(out, 25, "--op OPCODE", text);
}

int expr_help_part(const char *name, size_t len, FILE *out)
{
	if (len == 9 && !strncmp(name, "filter-op", len))
		help_filter_op(out);
	else if (len == 9 && !strncmp(name, "check-ctx", len))
		expr_ctx_help_check(out);
	else
		return -1;
	return 0;
}

static const char help_head[] =
"Rule expressions of 'iour-restrict filter' and 'sim'\n"
"\n"
"A rule is a comma-separated list of comparisons; it holds when all of them\n"
"hold.  The word 'true' is a rule that always holds.  Rules are tried in the\n"
"order given; the first that holds decides (--allow or --deny), and the\n"
"opcode's default decides when none holds.\n"
"\n"
"  rule     := 'true' | cmp { ',' cmp }\n"
"  cmp      := FIELD ( '==' | '!=' | '<' | '<=' | '>' | '>=' ) value\n"
"            | FIELD '&=' value                 any bit of value is set\n"
"            | FIELD '&' value '==' value       (FIELD & mask) == value\n"
"            | FIELD '&' value '!=' '0'         any bit of mask is set\n"
"            | FIELD [ 'not' ] 'in' '{' value { ',' value } '}'\n"
"            | FIELD [ 'not' ] 'in' '[' value ',' value ']'   inclusive range\n"
"            | ADDR  [ 'not' ] 'in' address '/' length        network prefix\n"
"  value    := term { '|' term }            '|': bit-flag fields only\n"
"  term     := number | CONSTANT | IPv4 address (addr4) | IPv6 address (addr6)\n"
"\n"
"Numbers are unsigned: decimal, 0x hexadecimal, or octal with a leading 0\n"
"(mode==0644).  '!in' is the same as 'not in'.  Spaces are allowed between\n"
"tokens.  All comparisons are unsigned.\n"
"\n"
"Fields (the opcode chooses the payload; 'socket.family' etc. also work):\n";

static const char help_middle[] =
"\n"
"The kernel adds O_LARGEFILE to open flags, so 'flags==O_RDONLY' never\n"
"matches a real request: test bits with '&=' or 'flags & MASK == VALUE', and\n"
"the access mode with accmode.  addr4 and addr6 comparisons, negated ones\n"
"included, hold only for requests of their own family.  A CONNECT to an\n"
"IPv4-mapped address ::ffff:a.b.c.d goes to a.b.c.d over IPv4, so it is\n"
"judged as that IPv4 connect (family AF_INET, addr4 a.b.c.d); deny rules\n"
"also see it as given (AF_INET6, addr6).  --addr4-literal turns this off.\n"
"\n";

/* Examples of constants, not their list: `names` and the schema have it. */
static const char help_tail[] =
"\n"
"Constants: AF_UNIX AF_LOCAL AF_INET AF_INET6 AF_NETLINK AF_PACKET AF_VSOCK ...;\n"
"SOCK_STREAM SOCK_DGRAM SOCK_RAW SOCK_SEQPACKET SOCK_NONBLOCK SOCK_CLOEXEC;\n"
"IPPROTO_TCP IPPROTO_UDP ...; O_RDONLY O_WRONLY O_RDWR O_CREAT O_EXCL O_TRUNC\n"
"O_APPEND O_DIRECTORY O_NOFOLLOW O_CLOEXEC O_PATH O_TMPFILE O_LARGEFILE ...;\n"
"RESOLVE_NO_XDEV RESOLVE_NO_MAGICLINKS RESOLVE_NO_SYMLINKS RESOLVE_BENEATH\n"
"RESOLVE_IN_ROOT RESOLVE_CACHED; S_IRWXU ... S_ISVTX; IOSQE_ASYNC and the\n"
"other IOSQE_* flags.  Names are case-insensitive.\n"
"\n"
"Examples:\n"
"  family==AF_INET,type==SOCK_STREAM\n"
"  family in {AF_UNIX, AF_INET, AF_INET6}\n"
"  accmode==O_RDONLY, flags & O_CREAT|O_TRUNC == 0\n"
"  resolve &= RESOLVE_BENEATH|RESOLVE_IN_ROOT\n"
"  port in [1024, 65535], addr4 in 10.0.0.0/8\n"
"  addr6 == ::1\n"
"\n";

/* `iour-restrict help rules`: the grammar, then the fields, namespaces and
 * contexts as the schema has them. */
int cli_help_rules(void)
{
	struct iour_payload_info pi;
	char label[128];
	size_t i;

	fputs(help_head, stdout);
	help_fields(stdout, "every opcode", "");
	for (i = 0; payload_at(i, &pi); i++) {
		if (!first_of_group(i, &pi))
			continue;
		expr_group_label(pi.group, true, label, sizeof(label));
		help_fields(stdout, label, pi.group);
	}
	fputs(help_middle, stdout);
	help_namespaces(stdout);
	fputs(help_tail, stdout);
	expr_ctx_help(stdout);
	return CLI_OK;
}
