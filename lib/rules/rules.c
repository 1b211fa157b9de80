/* SPDX-License-Identifier: MIT */
/*
 * The rule front end's lexical core (doc/design.md, "The rule front
 * end"): fields by name, the operator table, terms (numbers, constants,
 * addresses), address prefixes, the hint for fields the kernel's filters
 * do not see; the cursor the text parsers move (rules_parse.c,
 * rules_ctx.c); and the public functions that parse one item
 * (include/iouring_restrict/rules.h).  Fields, payloads and constants
 * come from the request schema, so a field added there needs no edit
 * here (doc/design.md, "Adding a filterable opcode or field").
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "rules_internal.h"
#include "iouring_restrict/names.h"

/* ---- the request schema */

static bool field_at(size_t i, struct iour_field_info *fi)
{
	memset(fi, 0, sizeof(*fi));
	fi->sz = sizeof(*fi);
	return iour_field_get(i, fi) == 0;
}

const char *iour__rule_group_of(uint32_t opcode)
{
	struct iour_payload_info pi = { .sz = sizeof(pi) };
	int r = iour_payload_find(opcode);

	return r >= 0 && !iour_payload_get((size_t)r, &pi) ? pi.group : NULL;
}

const char *iour__rule_bare(const struct iour_field_info *fi)
{
	size_t n = strlen(fi->group);

	return n && !strncmp(fi->name, fi->group, n) && fi->name[n] == '.' ? fi->name + n + 1 :
									     fi->name;
}

void iour__rule_field_from(const struct iour_field_info *fi, struct iour__rfield *f)
{
	f->name = iour__rule_bare(fi);
	f->full = fi->name;
	f->id = fi->id;
	f->kind = fi->kind;
	f->ns = fi->prefix;
	f->bits = fi->kind == IOUR_FIELD_KIND_BITS;
}

int iour__rule_field_of(uint32_t id, struct iour__rfield *f)
{
	struct iour_field_info fi;
	int r = iour_field_index(id);

	if (r < 0 || !field_at((size_t)r, &fi))
		return -ENOENT;
	iour__rule_field_from(&fi, f);
	return 0;
}

bool iour__rule_owns_slot(size_t idx)
{
	struct iour_field_info fi, o;
	size_t i;

	if (!field_at(idx, &fi))
		return true;
	for (i = 0; i < idx && field_at(i, &o); i++)
		if (!strcmp(o.group, fi.group) && o.offset == fi.offset && o.size == fi.size)
			return false;
	return true;
}

int iour__rule_find_field(const char *name, uint32_t opcode, bool *known, struct iour__rfield *f)
{
	const char *group = opcode == IOUR_RULE_NO_OPCODE ? NULL : iour__rule_group_of(opcode);
	struct iour_field_info fi;
	const char *bare;
	size_t i, n;

	*known = false;
	for (i = 0; field_at(i, &fi); i++) {
		if (opcode == IOUR_RULE_NO_OPCODE) {
			/* dotted names only: the rule's opcodes are not known */
			if (strcasecmp(name, fi.name) != 0)
				continue;
			iour__rule_field_from(&fi, f);
			return 0;
		}
		bare = name;
		if (fi.group[0]) {
			n = strlen(fi.group);
			if (!strncasecmp(name, fi.group, n) && name[n] == '.')
				bare = name + n + 1;
			else if (strchr(name, '.'))
				continue;
		}
		if (strcasecmp(bare, iour__rule_bare(&fi)) != 0)
			continue;
		if (!fi.group[0] || (group && !strcmp(fi.group, group))) {
			iour__rule_field_from(&fi, f);
			return 0;
		}
		*known = true;
	}
	return -ENOENT;
}

const char *iour__rule_unexposed_hint(const char *name, uint32_t opcode)
{
	static const char *const paths[] = { "path",    "pathname", "filename", "file", "dir",
					     "oldpath", "newpath",  "name",     NULL };
	static const char *const addrs[] = { "addr", "addr4",    "addr6", "address",
					     "port", "sockaddr", NULL };
	const char *last = strrchr(name, '.');
	bool connect = opcode == IOUR_RULE_NO_OPCODE ?
			       !strncasecmp(name, "connect.", 8) :
			       (int)opcode == iour_opcode_from_name("CONNECT");
	size_t i;

	last = last ? last + 1 : name;
	for (i = 0; paths[i]; i++)
		if (!strcasecmp(last, paths[i]))
			return "the kernel's filters see no paths: use Landlock, "
			       "iouring-restrict(7) WHAT IT CANNOT RESTRICT";
	for (i = 0; addrs[i]; i++)
		if (!strcasecmp(last, addrs[i]) && !connect)
			return "the kernel's filters see CONNECT's address only: "
			       "iouring-restrict(7) WHAT IT CANNOT RESTRICT";
	return NULL;
}

/* ---- operators */

/* Every spelling of both front ends: the symbols of the tool's rules and
 * the names policy files also give the bit tests (doc/policy-files.md). */
const struct iour__ropname iour__rule_ops[] = {
	{ "==", IOUR_CMP_EQ },
	{ "!=", IOUR_CMP_NE },
	{ "<=", IOUR_CMP_LE },
	{ ">=", IOUR_CMP_GE },
	{ "<", IOUR_CMP_LT },
	{ ">", IOUR_CMP_GT },
	{ "&==", IOUR_CMP_MASKED_EQ },
	{ "&=", IOUR_CMP_ANY_BITS },
	{ "any-bits", IOUR_CMP_ANY_BITS },
	{ "all-bits", IOUR_CMP_ALL_BITS },
	{ "none-bits", IOUR_CMP_NONE_BITS },
	{ "in", IOUR_CMP_IN_SET },
	{ "not in", IOUR_CMP_NOT_IN_SET },
	{ "!in", IOUR_CMP_NOT_IN_SET },
};
const size_t iour__rule_nops = IOUR_ARRAY_SIZE(iour__rule_ops);

/* ---- terms */

int iour__rule_number(const char *s, uint64_t *v)
{
	unsigned long long x;
	char *end;

	/* strtoull() accepts leading blanks and a sign; a number does not. */
	if (!isdigit((unsigned char)s[0]))
		return -1;
	errno = 0;
	x = strtoull(s, &end, 0);
	if (errno || *end)
		return -1;
	*v = x;
	return 0;
}

int iour__rule_constant(const char *name, uint64_t *v)
{
	struct iour_const_info ci = { .sz = sizeof(ci) };
	int r = iour_const_find(name);

	if (r >= 0 && !iour_const_get((size_t)r, &ci)) {
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

enum iour__rterm iour__rule_term(const char *w, const struct iour__rfield *f, uint64_t *v)
{
	struct in_addr a;

	if (strchr(w, ':'))
		return IOUR__RT_IPV6_ELSEWHERE;
	if (strchr(w, '.') && isdigit((unsigned char)w[0])) {
		/* inet_pton() accepts exactly four dotted decimal bytes. */
		if (inet_pton(AF_INET, w, &a) != 1)
			return IOUR__RT_NOT_IPV4;
		if (f->kind != IOUR_FIELD_KIND_ADDR4)
			return IOUR__RT_IPV4_ELSEWHERE;
		*v = ntohl(a.s_addr);
		return IOUR__RT_OK;
	}
	if (isdigit((unsigned char)w[0]))
		return iour__rule_number(w, v) ? IOUR__RT_NOT_NUMBER : IOUR__RT_OK;
	if (iour__rule_constant(w, v))
		return IOUR__RT_UNKNOWN;
	if (!f->ns)
		return IOUR__RT_NUMBERS_ONLY;
	if (strncasecmp(w, f->ns, strlen(f->ns)) != 0)
		return IOUR__RT_OTHER_NS;
	return IOUR__RT_OK;
}

/* ---- prefixes */

enum iour__rprefix iour__rule_prefix(const char *s, const struct iour__rfield *f,
				     struct iour_cmp *c, const char **len_text)
{
	char buf[INET6_ADDRSTRLEN + 8], *slash;
	unsigned max = f->kind == IOUR_FIELD_KIND_ADDR4 ? 32 : 128;
	uint64_t len = max, v;

	*len_text = NULL;
	if (f->kind != IOUR_FIELD_KIND_ADDR4 && f->kind != IOUR_FIELD_KIND_ADDR6)
		return IOUR__RP_NOT_ADDR;
	if (strlen(s) >= sizeof(buf))
		return IOUR__RP_TOO_LONG;
	memcpy(buf, s, strlen(s) + 1);
	slash = strchr(buf, '/');
	if (slash) {
		*slash = '\0';
		*len_text = s + (slash - buf) + 1;
		if (iour__rule_number(slash + 1, &len) || len > max)
			return IOUR__RP_BAD_LENGTH;
	}
	if (f->kind == IOUR_FIELD_KIND_ADDR4) {
		if (iour__rule_term(buf, f, &v) != IOUR__RT_OK || v > UINT32_MAX)
			return IOUR__RP_BAD_ADDRESS;
		c->value = v;
	} else if (inet_pton(AF_INET6, buf, c->addr6) != 1) {
		return IOUR__RP_BAD_ADDRESS;
	}
	c->arg = len;
	return IOUR__RP_OK;
}

/* ---- refusals */

const char *iour__rule_einval_reason(const struct iour_cmp *c)
{
	if ((c->op == IOUR_CMP_IN_RANGE || c->op == IOUR_CMP_NOT_IN_RANGE) && c->value > c->arg)
		return "the range's low end is above its high end";
	if (c->op == IOUR_CMP_MASKED_EQ && !c->arg)
		return "the mask is 0";
	if (c->op == IOUR_CMP_MASKED_EQ && (c->value & ~c->arg))
		return "the value has bits outside the mask, so it can never match";
	if (c->op == IOUR_CMP_ANY_BITS && !c->value)
		return "'&= 0' tests no bit";
	return NULL;
}

/* ---- the cursor of the text parsers */

int iour__rps_fail(struct iour__rps *p, size_t pos, const char *fmt, ...)
{
	va_list ap;

	p->err->pos = pos;
	va_start(ap, fmt);
	vsnprintf(p->err->message, sizeof(p->err->message), fmt, ap);
	va_end(ap);
	return -EBADMSG;
}

void iour__rps_skip_ws(struct iour__rps *p)
{
	while (isspace((unsigned char)p->s[p->i]))
		p->i++;
}

bool iour__rps_eat(struct iour__rps *p, const char *tok)
{
	size_t n = strlen(tok);

	iour__rps_skip_ws(p);
	if (strncmp(p->s + p->i, tok, n) != 0)
		return false;
	p->i += n;
	return true;
}

bool iour__rps_word_char(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '.' || c == ':';
}

int iour__rps_word(struct iour__rps *p, char *buf, size_t cap, size_t *start, const char *expected)
{
	size_t n = 0;

	iour__rps_skip_ws(p);
	*start = p->i;
	while (iour__rps_word_char(p->s[p->i])) {
		if (n + 1 >= cap)
			return iour__rps_fail(p, *start, "'%.*s...' is too long", 20,
					      p->s + *start);
		buf[n++] = p->s[p->i++];
	}
	buf[n] = '\0';
	if (n == 0) {
		if (p->s[p->i] == '\0')
			return iour__rps_fail(p, p->i, "expected %s at the end", expected);
		return iour__rps_fail(p, p->i, "expected %s, found '%c'", expected, p->s[p->i]);
	}
	return 0;
}

/* The bare names of the fields of @kind (IOUR_FIELD_KIND_ADDR4 or _ADDR6),
 * joined with " or ", from the request schema. */
static const char *kind_fields(uint32_t kind, char *buf, size_t cap)
{
	struct iour_field_info fi;
	size_t n = 0;

	buf[0] = '\0';
	for (size_t i = 0; field_at(i, &fi); i++)
		if (fi.kind == kind && n < cap)
			n += (size_t)snprintf(buf + n, cap - n, "%s%s", buf[0] ? " or " : "",
					      iour__rule_bare(&fi));
	return buf;
}

/* One term of a value, in the words of the tool's rule language. */
static int rps_term(struct iour__rps *p, const struct iour__rfield *f, uint64_t *v)
{
	char w[128], names[128];
	size_t start;
	int r = iour__rps_word(p, w, sizeof(w), &start, "a value");

	if (r)
		return r;
	switch (iour__rule_term(w, f, v)) {
	case IOUR__RT_OK:
		return 0;
	case IOUR__RT_IPV6_ELSEWHERE:
		return iour__rps_fail(p, start, "'%s': an IPv6 address is a value of %s only", w,
				      kind_fields(IOUR_FIELD_KIND_ADDR6, names, sizeof(names)));
	case IOUR__RT_NOT_IPV4:
		return iour__rps_fail(p, start, "'%s' is not an IPv4 address", w);
	case IOUR__RT_IPV4_ELSEWHERE:
		return iour__rps_fail(p, start, "'%s': an IPv4 address is a value of %s only", w,
				      kind_fields(IOUR_FIELD_KIND_ADDR4, names, sizeof(names)));
	case IOUR__RT_NOT_NUMBER:
		return iour__rps_fail(p, start,
				      "'%s' is not a number (decimal, 0x hex or 0 octal, "
				      "below 2^64)",
				      w);
	case IOUR__RT_UNKNOWN:
		return iour__rps_fail(p, start, "unknown constant '%s'", w);
	case IOUR__RT_NUMBERS_ONLY:
		return iour__rps_fail(
			p, start, "'%s': %s takes numbers%s, not constants", w, f->name,
			f->kind == IOUR_FIELD_KIND_ADDR4 ? " and IPv4 addresses" : "");
	default:
		return iour__rps_fail(p, start,
				      "'%s' is not a constant of %s, which takes %s* constants", w,
				      f->name, f->ns);
	}
}

int iour__rps_scalar(struct iour__rps *p, const struct iour__rfield *f, uint64_t *v)
{
	uint64_t t;
	int r = rps_term(p, f, v);

	if (r)
		return r;
	for (;;) {
		iour__rps_skip_ws(p);
		if (p->s[p->i] != '|')
			return 0;
		if (!f->bits)
			return iour__rps_fail(p, p->i,
					      "'|' joins bit flags, and %s is not a set of flags: "
					      "to accept several values, write '%s in {A, B}'",
					      f->name, f->name);
		p->i++;
		r = rps_term(p, f, &t);
		if (r)
			return r;
		*v |= t;
	}
}

int iour__rps_addr6(struct iour__rps *p, uint8_t out[16])
{
	char w[128];
	size_t start;
	int r = iour__rps_word(p, w, sizeof(w), &start, "an IPv6 address");

	if (r)
		return r;
	if (inet_pton(AF_INET6, w, out) != 1)
		return iour__rps_fail(p, start, "'%s' is not an IPv6 address", w);
	return 0;
}

int iour__rule_err_init(struct iour_rule_error *err)
{
	if (!err || !IOUR_OUT_HAS(err, message))
		return -EINVAL;
	err->pos = 0;
	err->message[0] = '\0';
	return 0;
}

/* ---- one item (include/iouring_restrict/rules.h) */

/* An opcode's name for messages, or its number where the name table
 * has none (65 .. 255). */
static const char *op_name(uint32_t op, char *buf, size_t cap)
{
	const char *n = iour_opcode_name(op);

	if (n)
		return n;
	snprintf(buf, cap, "%u", op);
	return buf;
}

/* The fields a rule on @group may test, for messages: the group's, then
 * those of every opcode. */
static void fields_of(const char *group, char *buf, size_t cap)
{
	struct iour_field_info fi;
	size_t i, n = 0;
	int pass;

	buf[0] = '\0';
	for (pass = 0; pass < 2; pass++)
		for (i = 0; field_at(i, &fi); i++)
			if ((pass ? !fi.group[0] : group && !strcmp(fi.group, group)) && n < cap)
				n += (size_t)snprintf(buf + n, cap - n, "%s%s", buf[0] ? ", " : "",
						      iour__rule_bare(&fi));
}

int iour__rule_field_error(struct iour__rps *p, const char *w, size_t start, bool known)
{
	const char *hint = iour__rule_unexposed_hint(w, p->op);
	char list[192], num[16];

	fields_of(p->group, list, sizeof(list));
	if (known)
		return iour__rps_fail(p, start,
				      "field '%s' does not exist for opcode %s "
				      "(its fields: %s)%s%s",
				      w, op_name(p->op, num, sizeof(num)), list, hint ? "; " : "",
				      hint ? hint : "");
	return iour__rps_fail(p, start, "unknown field '%s' (fields of %s: %s)%s%s", w,
			      p->op == IOUR_RULE_NO_OPCODE ? "every opcode" :
							     op_name(p->op, num, sizeof(num)),
			      list, hint ? "; " : "", hint ? hint : "");
}

static int rule_field(const char *name, uint32_t opcode, uint32_t *id, struct iour_rule_error *err)
{
	struct iour__rps p = { .s = name, .op = opcode, .err = err };
	struct iour__rfield f;
	bool known;

	if (iour__rule_err_init(err) || !name || !id ||
	    (opcode > 255 && opcode != IOUR_RULE_NO_OPCODE))
		return -EINVAL;
	p.group = opcode == IOUR_RULE_NO_OPCODE ? NULL : iour__rule_group_of(opcode);
	if (!iour__rule_find_field(name, opcode, &known, &f)) {
		*id = f.id;
		return 0;
	}
	iour__rule_field_error(&p, name, 0, known);
	return known ? -EDOM : -ENOENT;
}

static int rule_op(const char *name, uint32_t *op)
{
	size_t i;

	if (!name || !op)
		return -EINVAL;
	for (i = 0; i < iour__rule_nops; i++)
		if (!strcasecmp(name, iour__rule_ops[i].name)) {
			*op = iour__rule_ops[i].op;
			return 0;
		}
	return -ENOENT;
}

static int rule_value(const char *text, uint32_t field, struct iour_cmp *c,
		      struct iour_rule_error *err)
{
	struct iour__rps p = { .s = text, .op = IOUR_RULE_NO_OPCODE, .err = err };
	struct iour__rfield f;
	uint64_t v = 0;
	uint8_t a6[16];
	int r;

	if (iour__rule_err_init(err) || !text || !c)
		return -EINVAL;
	if (iour__rule_field_of(field, &f))
		return -ENOENT;
	r = f.kind == IOUR_FIELD_KIND_ADDR6 ? iour__rps_addr6(&p, a6) :
					      iour__rps_scalar(&p, &f, &v);
	if (r)
		return r;
	iour__rps_skip_ws(&p);
	if (p.s[p.i])
		return iour__rps_fail(&p, p.i, "expected the end of the value, found '%c'",
				      p.s[p.i]);
	if (f.kind == IOUR_FIELD_KIND_ADDR6)
		memcpy(c->addr6, a6, sizeof(a6));
	else
		c->value = v;
	return 0;
}

static int rule_prefix(const char *text, uint32_t field, struct iour_cmp *c,
		       struct iour_rule_error *err)
{
	struct iour__rps p = { .s = text, .op = IOUR_RULE_NO_OPCODE, .err = err };
	struct iour_cmp tmp = { .sz = sizeof(tmp) };
	struct iour__rfield f;
	const char *len;

	if (iour__rule_err_init(err) || !text || !c)
		return -EINVAL;
	if (iour__rule_field_of(field, &f))
		return -ENOENT;
	switch (iour__rule_prefix(text, &f, &tmp, &len)) {
	case IOUR__RP_OK:
		break;
	case IOUR__RP_NOT_ADDR:
		return iour__rps_fail(&p, 0, "%s is not an address: it has no prefixes", f.name);
	case IOUR__RP_TOO_LONG:
		return iour__rps_fail(&p, 0, "the prefix is too long");
	case IOUR__RP_BAD_LENGTH:
		return iour__rps_fail(&p, (size_t)(len - text),
				      "prefix length '%s' out of range (0 to %u)", len,
				      f.kind == IOUR_FIELD_KIND_ADDR4 ? 32 : 128);
	default:
		return iour__rps_fail(&p, 0, "'%.*s' is not an %s address",
				      (int)(len ? (size_t)(len - 1 - text) : strlen(text)), text,
				      f.kind == IOUR_FIELD_KIND_ADDR4 ? "IPv4" : "IPv6");
	}
	if (f.kind == IOUR_FIELD_KIND_ADDR4)
		c->value = tmp.value;
	else
		memcpy(c->addr6, tmp.addr6, sizeof(c->addr6));
	c->arg = tmp.arg;
	return 0;
}

/* Documented in include/iouring_restrict/rules.h */
int iour_rule_field(const char *name, uint32_t opcode, uint32_t *id, struct iour_rule_error *err)
{
	return iour__err_public(rule_field(name, opcode, id, err), IOUR__ERRSET_RULE_FIELD);
}

/* Documented in include/iouring_restrict/rules.h */
int iour_rule_op(const char *name, uint32_t *op)
{
	return iour__err_public(rule_op(name, op), IOUR__ERRSET_RULE_OP);
}

/* Documented in include/iouring_restrict/rules.h */
int iour_rule_value(const char *text, uint32_t field, struct iour_cmp *c,
		    struct iour_rule_error *err)
{
	return iour__err_public(rule_value(text, field, c, err), IOUR__ERRSET_RULE_VALUE);
}

/* Documented in include/iouring_restrict/rules.h */
int iour_rule_prefix(const char *text, uint32_t field, struct iour_cmp *c,
		     struct iour_rule_error *err)
{
	return iour__err_public(rule_prefix(text, field, c, err), IOUR__ERRSET_RULE_PREFIX);
}
