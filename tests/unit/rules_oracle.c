/* SPDX-License-Identifier: MIT */
/*
 * The test oracle of the rule front end's differential test
 * (test_rules.c): the tool's rule parser as it was before the library
 * took it over (tools/cli/rules/expr.c then), kept unchanged but for its
 * names, so that the library's parse of every rule text of the tests can
 * be compared with it, struct iour_cmp for struct iour_cmp.  It must stay
 * independent of lib/rules/: do not make it call that code.
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

#include "rules_oracle.h"

/* cli_parse_u64() of tools/cli/core/util.c, as it was. */
static int cli_parse_u64(const char *s, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (!s || !isdigit((unsigned char)s[0]))
		return -1;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end)
		return -1;
	*out = v;
	return 0;
}

static const char *cli_strerror(int err)
{
	static char buf[256];

	(void)iour_strerror(err, buf, sizeof(buf));
	return buf;
}

/* How a value is written. */
enum old_expr_vkind { EXPR_V_NUM, EXPR_V_ADDR4, EXPR_V_ADDR6 };

/*
 * A field of a rule or a key of a context, as values are parsed for it.
 * Each takes the constants of its own namespace only (@ns, the names'
 * prefix; NULL: numbers only), so that "family == SOCK_STREAM" is an
 * error rather than family 1.  Only bit-flag fields (@bits) take values
 * joined with '|'; on a value field "AF_INET | AF_INET6" would be one
 * number that matches neither.
 */
struct old_expr_field {
	const char *name; /* as messages name it: the bare name, "family" */
	uint32_t id;      /* IOUR_FIELD_*; 0 for a context key of no field */
	enum old_expr_vkind kind;
	const char *ns;
	bool bits;
};

/* The parser's state over one text. */
struct old_expr_ps {
	const char *s;
	size_t i;
	size_t opnd;       /* where the last comparison's first operand starts */
	uint32_t op;
	const char *group; /* the opcode's payload group ("socket"), or NULL */
	struct old_expr_error *err;
};



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

const char *old_expr_group_of(uint32_t opcode)
{
	struct iour_payload_info pi;
	int r = iour_payload_find(opcode);

	return r >= 0 && payload_at((size_t)r, &pi) ? pi.group : NULL;
}

const char *old_expr_bare(const struct iour_field_info *fi)
{
	size_t n = strlen(fi->group);

	return n && !strncmp(fi->name, fi->group, n) && fi->name[n] == '.' ? fi->name + n + 1
									   : fi->name;
}

static void old_expr_field_from(const struct iour_field_info *fi, struct old_expr_field *f)
{
	f->name = old_expr_bare(fi);
	f->id = fi->id;
	f->kind = fi->kind == IOUR_FIELD_KIND_ADDR4   ? EXPR_V_ADDR4
		  : fi->kind == IOUR_FIELD_KIND_ADDR6 ? EXPR_V_ADDR6
						      : EXPR_V_NUM;
	f->ns = fi->prefix;
	f->bits = fi->kind == IOUR_FIELD_KIND_BITS;
}

static void old_expr_cat(char *buf, size_t cap, const char *fmt, ...)
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
				old_expr_cat(buf, cap, "%s%s", buf[0] ? ", " : "", old_expr_bare(&fi));
}

/* Finds a field by name ("family" or "socket.family", in any case) for
 * @group.  *known is set if the name exists for some other opcode. */
static bool find_field(const char *name, const char *group, bool *known, struct old_expr_field *f)
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
		if (strcasecmp(bare, old_expr_bare(&fi)))
			continue;
		if (!fi.group[0] || (group && !strcmp(fi.group, group))) {
			old_expr_field_from(&fi, f);
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

static int old_expr_fail(struct old_expr_ps *p, size_t pos, const char *fmt, ...)
{
	va_list ap;

	p->err->pos = pos;
	va_start(ap, fmt);
	vsnprintf(p->err->msg, sizeof(p->err->msg), fmt, ap);
	va_end(ap);
	return -1;
}

static void old_expr_skip_ws(struct old_expr_ps *p)
{
	while (isspace((unsigned char)p->s[p->i]))
		p->i++;
}

static bool word_char(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '.' || c == ':';
}

/* Reads a word at the current position into @buf; *start is its offset. */
static int old_expr_read_word(struct old_expr_ps *p, char *buf, size_t cap, size_t *start, const char *expected)
{
	size_t n = 0;

	old_expr_skip_ws(p);
	*start = p->i;
	while (word_char(p->s[p->i])) {
		if (n + 1 >= cap)
			return old_expr_fail(p, *start, "'%.*s...' is too long", 20, p->s + *start);
		buf[n++] = p->s[p->i++];
	}
	buf[n] = '\0';
	if (n == 0) {
		if (p->s[p->i] == '\0')
			return old_expr_fail(p, p->i, "expected %s at the end", expected);
		return old_expr_fail(p, p->i, "expected %s, found '%c'", expected, p->s[p->i]);
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
			old_expr_cat(buf, cap, "%s%s", buf[0] ? " or " : "", old_expr_bare(&fi));
	return buf;
}

/* One term of a value: a number, a constant or (for an IPv4 field) an
 * IPv4 address. */
static int parse_term(struct old_expr_ps *p, const struct old_expr_field *f, uint64_t *v)
{
	char w[128], names[128];
	size_t start;

	if (old_expr_read_word(p, w, sizeof(w), &start, "a value"))
		return -1;
	if (strchr(w, ':'))
		return old_expr_fail(p, start, "'%s': an IPv6 address is a value of %s only", w,
				 kind_fields(IOUR_FIELD_KIND_ADDR6, names, sizeof(names)));
	if (strchr(w, '.') && isdigit((unsigned char)w[0])) {
		if (!parse_ipv4(w, v))
			return old_expr_fail(p, start, "'%s' is not an IPv4 address", w);
		if (f->kind != EXPR_V_ADDR4)
			return old_expr_fail(p, start, "'%s': an IPv4 address is a value of %s only", w,
					 kind_fields(IOUR_FIELD_KIND_ADDR4, names, sizeof(names)));
		return 0;
	}
	if (isdigit((unsigned char)w[0])) {
		if (cli_parse_u64(w, v))
			return old_expr_fail(p, start, "'%s' is not a number (decimal, 0x hex or 0 octal, "
				    "below 2^64)", w);
		return 0;
	}
	if (find_constant(w, v))
		return old_expr_fail(p, start, "unknown constant '%s'", w);
	if (!f->ns)
		return old_expr_fail(p, start, "'%s': %s takes numbers%s, not constants", w, f->name,
			    f->kind == EXPR_V_ADDR4 ? " and IPv4 addresses" : "");
	if (strncasecmp(w, f->ns, strlen(f->ns)))
		return old_expr_fail(p, start, "'%s' is not a constant of %s, which takes %s* constants",
			    w, f->name, f->ns);
	return 0;
}

/* A value: terms joined by '|' (O_CREAT|O_TRUNC) on a bit-flag field. */
static int old_expr_parse_scalar(struct old_expr_ps *p, const struct old_expr_field *f, uint64_t *v)
{
	uint64_t t;

	if (parse_term(p, f, v))
		return -1;
	for (;;) {
		old_expr_skip_ws(p);
		if (p->s[p->i] != '|')
			return 0;
		if (!f->bits)
			return old_expr_fail(p, p->i, "'|' joins bit flags, and %s is not a set of flags: "
				    "to accept several values, write '%s in {A, B}'", f->name,
				    f->name);
		p->i++;
		if (parse_term(p, f, &t))
			return -1;
		*v |= t;
	}
}

static int old_expr_parse_addr6(struct old_expr_ps *p, uint8_t out[16])
{
	char w[128];
	size_t start;

	if (old_expr_read_word(p, w, sizeof(w), &start, "an IPv6 address"))
		return -1;
	if (inet_pton(AF_INET6, w, out) != 1)
		return old_expr_fail(p, start, "'%s' is not an IPv6 address", w);
	return 0;
}

/* An operand for @f: an IPv6 address for addr6, else a scalar. */
static int parse_operand(struct old_expr_ps *p, const struct old_expr_field *f, struct iour_cmp *c)
{
	if (f->kind == EXPR_V_ADDR6)
		return old_expr_parse_addr6(p, c->addr6);
	return old_expr_parse_scalar(p, f, &c->value);
}

static bool old_expr_eat(struct old_expr_ps *p, const char *tok)
{
	size_t n = strlen(tok);

	old_expr_skip_ws(p);
	if (strncmp(p->s + p->i, tok, n))
		return false;
	p->i += n;
	return true;
}

/* '{' value, ... '}' */
static int parse_set(struct old_expr_ps *p, const struct old_expr_field *f, struct iour_cmp *c, uint64_t **store)
{
	uint64_t *set = NULL, *grown, v;
	size_t n = 0, cap = 0, start = p->i - 1;

	if (f->kind == EXPR_V_ADDR6)
		return old_expr_fail(p, start, "sets of IPv6 addresses are not supported: "
			    "write one rule per address");
	for (;;) {
		if (old_expr_parse_scalar(p, f, &v))
			goto err;
		if (n == cap) {
			cap = cap ? 2 * cap : 8;
			grown = realloc(set, cap * sizeof(*set));
			if (!grown) {
				old_expr_fail(p, start, "out of memory");
				goto err;
			}
			set = grown;
		}
		set[n++] = v;
		if (old_expr_eat(p, "}"))
			break;
		if (!old_expr_eat(p, ",")) {
			old_expr_skip_ws(p);
			old_expr_fail(p, p->i, "expected ',' or '}' in the set");
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
static int parse_in(struct old_expr_ps *p, const struct old_expr_field *f, struct iour_cmp *c, bool negated,
		    uint64_t **store)
{
	uint64_t len;
	size_t start;
	char w[16];

	old_expr_skip_ws(p);
	p->opnd = p->i;
	if (old_expr_eat(p, "{")) {
		c->op = negated ? IOUR_CMP_NOT_IN_SET : IOUR_CMP_IN_SET;
		return parse_set(p, f, c, store);
	}
	if (old_expr_eat(p, "[")) {
		if (f->kind == EXPR_V_ADDR6)
			return old_expr_fail(p, p->i - 1, "ranges do not apply to %s", f->name);
		c->op = negated ? IOUR_CMP_NOT_IN_RANGE : IOUR_CMP_IN_RANGE;
		if (old_expr_parse_scalar(p, f, &c->value))
			return -1;
		if (!old_expr_eat(p, ",")) {
			old_expr_skip_ws(p);
			return old_expr_fail(p, p->i, "expected ',' between the bounds of the range");
		}
		if (old_expr_parse_scalar(p, f, &c->arg))
			return -1;
		if (!old_expr_eat(p, "]")) {
			old_expr_skip_ws(p);
			return old_expr_fail(p, p->i, "expected ']' after the range");
		}
		return 0;
	}
	old_expr_skip_ws(p);
	if (f->kind == EXPR_V_NUM)
		return old_expr_fail(p, p->i, "expected '{' (a set) or '[' (a range) after 'in'");
	c->op = negated ? IOUR_CMP_NOT_IN_PREFIX : IOUR_CMP_IN_PREFIX;
	if (parse_operand(p, f, c))
		return -1;
	if (!old_expr_eat(p, "/")) {
		old_expr_skip_ws(p);
		return old_expr_fail(p, p->i, "expected '/' and a prefix length after the address");
	}
	if (old_expr_read_word(p, w, sizeof(w), &start, "a prefix length"))
		return -1;
	if (cli_parse_u64(w, &len))
		return old_expr_fail(p, start, "'%s' is not a prefix length", w);
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
static int check_cmp(struct old_expr_ps *p, const struct iour_cmp *c, size_t start, size_t opnd)
{
	struct iour_filter *scratch;
	int r;

	r = iour_filter__new(NULL, &scratch);
	if (r)
		return old_expr_fail(p, start, "iour_filter__new: %s", cli_strerror(r));
	r = iour_filter__add_rule(scratch, p->op, IOUR_ALLOW, c, 1);
	iour_filter__free(scratch);
	if (r)
		return old_expr_fail(p, r == -ERANGE ? opnd : start, "%s (iour_filter__add_rule: %s)",
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

static int parse_cmp(struct old_expr_ps *p, struct iour_cmp *c, uint64_t **store)
{
	struct old_expr_field fd, *f = &fd;
	size_t start, opstart;
	uint64_t mask, v;
	char w[64], list[192];
	bool known;

	memset(c, 0, sizeof(*c));
	c->sz = sizeof(*c);
	if (old_expr_read_word(p, w, sizeof(w), &start, "a field name"))
		return -1;
	if (!find_field(w, p->group, &known, f)) {
		fields_of(p->group, list, sizeof(list));
		if (known)
			return old_expr_fail(p, start, "field '%s' does not exist for opcode %s "
				    "(its fields: %s)%s", w, iour_opcode_name(p->op), list,
				    unexposed_hint(w, p->op));
		return old_expr_fail(p, start, "unknown field '%s' (fields of %s: %s)%s", w,
			    iour_opcode_name(p->op), list, unexposed_hint(w, p->op));
	}
	c->field = f->id;
	old_expr_skip_ws(p);
	opstart = p->i;
	p->opnd = opstart;
	if (f->kind == EXPR_V_ADDR6 && strncmp(p->s + p->i, "==", 2) && strncmp(p->s + p->i, "!=", 2) &&
	    strncasecmp(p->s + p->i, "in", 2) && strncasecmp(p->s + p->i, "not", 3) &&
	    strncmp(p->s + p->i, "!in", 3))
		return old_expr_fail(p, opstart, "only ==, != and 'in PREFIX' apply to %s", f->name);
	if (p->s[p->i] == '&' && p->s[p->i + 1] != '=') {
		/* FIELD & MASK == VALUE, FIELD & MASK != 0 */
		p->i++;
		old_expr_skip_ws(p);
		p->opnd = p->i;
		if (old_expr_parse_scalar(p, f, &mask))
			return -1;
		old_expr_skip_ws(p);
		opstart = p->i;
		if (old_expr_eat(p, "==")) {
			if (old_expr_parse_scalar(p, f, &v))
				return -1;
			c->op = IOUR_CMP_MASKED_EQ;
			c->value = v;
			c->arg = mask;
		} else if (old_expr_eat(p, "!=")) {
			old_expr_skip_ws(p);
			start = p->i;
			if (old_expr_parse_scalar(p, f, &v))
				return -1;
			if (v != 0)
				return old_expr_fail(p, start, "'FIELD & MASK != VALUE' is supported only "
					    "with VALUE 0");
			c->op = IOUR_CMP_ANY_BITS;
			c->value = mask;
		} else {
			return old_expr_fail(p, opstart, "expected '==' or '!=' after 'FIELD & MASK'");
		}
		return 0;
	}
	if (old_expr_eat(p, "==")) {
		c->op = IOUR_CMP_EQ;
	} else if (old_expr_eat(p, "!=")) {
		c->op = IOUR_CMP_NE;
	} else if (old_expr_eat(p, "<=")) {
		c->op = IOUR_CMP_LE;
	} else if (old_expr_eat(p, ">=")) {
		c->op = IOUR_CMP_GE;
	} else if (old_expr_eat(p, "<")) {
		c->op = IOUR_CMP_LT;
	} else if (old_expr_eat(p, ">")) {
		c->op = IOUR_CMP_GT;
	} else if (old_expr_eat(p, "&=")) {
		c->op = IOUR_CMP_ANY_BITS;
		old_expr_skip_ws(p);
		p->opnd = p->i;
		return old_expr_parse_scalar(p, f, &c->value);
	} else if (p->s[p->i] == '=') {
		return old_expr_fail(p, opstart, "'=' is not an operator here: compare with '=='");
	} else if (old_expr_eat(p, "!in")) {
		return parse_in(p, f, c, true, store);
	} else if (!strncasecmp(p->s + p->i, "in", 2) && !word_char(p->s[p->i + 2])) {
		p->i += 2;
		return parse_in(p, f, c, false, store);
	} else if (!strncasecmp(p->s + p->i, "not", 3) && !word_char(p->s[p->i + 3])) {
		p->i += 3;
		old_expr_skip_ws(p);
		if (strncasecmp(p->s + p->i, "in", 2) || word_char(p->s[p->i + 2]))
			return old_expr_fail(p, p->i, "expected 'in' after 'not'");
		p->i += 2;
		return parse_in(p, f, c, true, store);
	} else if (p->s[p->i] == '\0') {
		return old_expr_fail(p, opstart, "expected an operator after '%s' at the end", w);
	} else {
		return old_expr_fail(p, opstart, "expected an operator (==, !=, <, <=, >, >=, &=, "
			    "& MASK ==, in, not in)");
	}
	old_expr_skip_ws(p);
	p->opnd = p->i;
	return parse_operand(p, f, c);
}

/* Notes comparisons that are valid but cannot mean what they say. */
static void warn_cmp(struct old_expr_rule *rule, const struct iour_cmp *c)
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

void old_expr_rule_free(struct old_expr_rule *rule)
{
	size_t i;

	for (i = 0; i < rule->n; i++) {
		free(rule->sets[i]);
		rule->sets[i] = NULL;
	}
	rule->n = 0;
}

int old_expr_parse_rule(const char *text, uint32_t opcode, struct old_expr_rule *rule,
		    struct old_expr_error *err)
{
	struct old_expr_ps p = { .s = text, .op = opcode, .group = old_expr_group_of(opcode), .err = err };
	size_t start, n;

	memset(rule, 0, sizeof(*rule));
	memset(err, 0, sizeof(*err));
	/* "true": a rule without comparisons, which always holds. */
	old_expr_skip_ws(&p);
	n = strlen(text + p.i);
	while (n && isspace((unsigned char)text[p.i + n - 1]))
		n--;
	if (n == 4 && !strncasecmp(text + p.i, "true", 4))
		return 0;
	if (n == 0)
		return old_expr_fail(&p, p.i, "empty rule (write 'true' for a rule that always holds)");

	for (;;) {
		old_expr_skip_ws(&p);
		start = p.i;
		if (rule->n == IOUR_FILTER_MAX_CMPS) {
			old_expr_fail(&p, start, "more than %d comparisons in one rule", IOUR_FILTER_MAX_CMPS);
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
		old_expr_skip_ws(&p);
		if (p.s[p.i] == '\0')
			return 0;
		if (p.s[p.i] != ',') {
			old_expr_fail(&p, p.i, "expected ',' or the end of the rule, found '%c'", p.s[p.i]);
			goto err;
		}
		p.i++;
	}
err:
	old_expr_rule_free(rule);
	return -1;
}

