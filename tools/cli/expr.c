/* SPDX-License-Identifier: MIT */
/*
 * The rule language of iour-restrict: a recursive-descent parser over the
 * command-line text, producing struct iour_cmp arrays for the filter
 * builder and filter contexts for the simulator.  Positions are byte
 * offsets so that errors can point at the offending character.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "cli.h"
#include "expr.h"

/* ---- opcodes with a filter payload */

enum payload { PL_ANY = 0, PL_SOCKET, PL_OPEN, PL_CONNECT, PL_NONE };

static enum payload payload_of(uint32_t op)
{
	switch (op) {
	case IOUR_OP_SOCKET:
		return PL_SOCKET;
	case IOUR_OP_OPENAT:
	case IOUR_OP_OPENAT2:
		return PL_OPEN;
	case IOUR_OP_CONNECT:
		return PL_CONNECT;
	default:
		return PL_NONE;
	}
}

const char *expr_fields_of(uint32_t opcode)
{
	switch (payload_of(opcode)) {
	case PL_SOCKET:
		return "family, type, type_flags, type_raw, protocol, user_data, sqe_flags";
	case PL_OPEN:
		return "flags, accmode, mode, resolve, user_data, sqe_flags";
	case PL_CONNECT:
		return "family, port, addr4, addr6, user_data, sqe_flags";
	default:
		return "user_data, sqe_flags";
	}
}

/* ---- fields */

enum vkind { V_NUM, V_ADDR4, V_ADDR6 };

/*
 * Each field takes the constants of its own namespace only (`ns`, the
 * names' prefix; NULL: numbers only), so that "family == SOCK_STREAM"
 * is an error rather than family 1.  Only bit-flag fields (`bits`) take
 * values joined with '|'; on a value field "AF_INET | AF_INET6" would be
 * one number that matches neither.
 */
struct field_def {
	const char *name;
	enum payload payload; /* PL_ANY: every opcode */
	uint32_t field;       /* enum iour_field */
	enum vkind kind;
	const char *ns;       /* constant prefix ("AF_"), or NULL */
	bool bits;            /* a set of bit flags: '|' allowed */
};

static const struct field_def fields[] = {
	{ "user_data", PL_ANY, IOUR_FIELD_USER_DATA, V_NUM, NULL, false },
	{ "sqe_flags", PL_ANY, IOUR_FIELD_SQE_FLAGS, V_NUM, "IOSQE_", true },
	{ "family", PL_SOCKET, IOUR_FIELD_SOCKET_FAMILY, V_NUM, "AF_", false },
	{ "type", PL_SOCKET, IOUR_FIELD_SOCKET_TYPE, V_NUM, "SOCK_", false },
	{ "type_flags", PL_SOCKET, IOUR_FIELD_SOCKET_TYPE_FLAGS, V_NUM, "SOCK_", true },
	{ "type_raw", PL_SOCKET, IOUR_FIELD_SOCKET_TYPE_RAW, V_NUM, "SOCK_", true },
	{ "protocol", PL_SOCKET, IOUR_FIELD_SOCKET_PROTOCOL, V_NUM, "IPPROTO_", false },
	{ "flags", PL_OPEN, IOUR_FIELD_OPEN_FLAGS, V_NUM, "O_", true },
	{ "accmode", PL_OPEN, IOUR_FIELD_OPEN_ACCMODE, V_NUM, "O_", false },
	{ "mode", PL_OPEN, IOUR_FIELD_OPEN_MODE, V_NUM, "S_", true },
	{ "resolve", PL_OPEN, IOUR_FIELD_OPEN_RESOLVE, V_NUM, "RESOLVE_", true },
	{ "family", PL_CONNECT, IOUR_FIELD_CONNECT_FAMILY, V_NUM, "AF_", false },
	{ "port", PL_CONNECT, IOUR_FIELD_CONNECT_PORT, V_NUM, NULL, false },
	{ "addr4", PL_CONNECT, IOUR_FIELD_CONNECT_ADDR4, V_ADDR4, NULL, false },
	{ "addr6", PL_CONNECT, IOUR_FIELD_CONNECT_ADDR6, V_ADDR6, NULL, false },
};

static const char *payload_prefix[] = { [PL_SOCKET] = "socket.", [PL_OPEN] = "open.",
					[PL_CONNECT] = "connect." };

/* Finds a field by name ("family" or "socket.family") for @pl.  *known is
 * set if the name exists for some other opcode. */
static const struct field_def *find_field(const char *name, enum payload pl, bool *known)
{
	const struct field_def *f;
	const char *bare;
	size_t i, n;

	*known = false;
	for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		f = &fields[i];
		bare = name;
		if (f->payload != PL_ANY) {
			n = strlen(payload_prefix[f->payload]);
			if (!strncasecmp(name, payload_prefix[f->payload], n))
				bare = name + n;
			else if (strchr(name, '.'))
				continue;
		}
		if (strcasecmp(bare, f->name))
			continue;
		if (f->payload == PL_ANY || f->payload == pl)
			return f;
		*known = true;
	}
	return NULL;
}

/* ---- symbolic constants */


struct constant {
	const char *name;
	uint64_t value;
};

/* The constants, shared with policy files: lib/schema.def. */
static const struct constant constants[] = {
#define IOUR_SCHEMA_CONST(name, value, since) { (name), (uint64_t)(value) },
#include "../../lib/schema.def"
};

static int find_constant(const char *name, uint64_t *v)
{
	size_t i;
	int r;

	for (i = 0; i < sizeof(constants) / sizeof(constants[0]); i++) {
		if (!strcasecmp(name, constants[i].name)) {
			*v = constants[i].value;
			return 0;
		}
	}
	/* IOSQE_* from the library's name table (the prefix is required
	 * here, so that "ASYNC" cannot shadow anything). */
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

struct ps {
	const char *s;
	size_t i;
	size_t opnd; /* where the last comparison's first operand starts */
	uint32_t op;
	enum payload pl;
	struct expr_error *err;
};

static int fail(struct ps *p, size_t pos, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(struct ps *p, size_t pos, const char *fmt, ...)
{
	va_list ap;

	p->err->pos = pos;
	va_start(ap, fmt);
	vsnprintf(p->err->msg, sizeof(p->err->msg), fmt, ap);
	va_end(ap);
	return -1;
}

static void skip_ws(struct ps *p)
{
	while (isspace((unsigned char)p->s[p->i]))
		p->i++;
}

static bool word_char(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '.' || c == ':';
}

/* Reads a word at the current position into @buf; *start is its offset. */
static int read_word(struct ps *p, char *buf, size_t cap, size_t *start, const char *expected)
{
	size_t n = 0;

	skip_ws(p);
	*start = p->i;
	while (word_char(p->s[p->i])) {
		if (n + 1 >= cap)
			return fail(p, *start, "'%.*s...' is too long", 20, p->s + *start);
		buf[n++] = p->s[p->i++];
	}
	buf[n] = '\0';
	if (n == 0) {
		if (p->s[p->i] == '\0')
			return fail(p, p->i, "expected %s at the end", expected);
		return fail(p, p->i, "expected %s, found '%c'", expected, p->s[p->i]);
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

/* One term of a value: a number, a constant or (for addr4) an IPv4
 * address. */
static int parse_term(struct ps *p, const struct field_def *f, uint64_t *v)
{
	char w[128];
	size_t start;

	if (read_word(p, w, sizeof(w), &start, "a value"))
		return -1;
	if (strchr(w, ':'))
		return fail(p, start, "'%s': an IPv6 address is a value of addr6 only", w);
	if (strchr(w, '.') && isdigit((unsigned char)w[0])) {
		if (!parse_ipv4(w, v))
			return fail(p, start, "'%s' is not an IPv4 address", w);
		if (f->kind != V_ADDR4)
			return fail(p, start, "'%s': an IPv4 address is a value of addr4 only", w);
		return 0;
	}
	if (isdigit((unsigned char)w[0])) {
		if (cli_parse_u64(w, v))
			return fail(p, start, "'%s' is not a number (decimal, 0x hex or 0 octal, "
				    "below 2^64)", w);
		return 0;
	}
	if (find_constant(w, v))
		return fail(p, start, "unknown constant '%s'", w);
	if (!f->ns)
		return fail(p, start, "'%s': %s takes numbers%s, not constants", w, f->name,
			    f->kind == V_ADDR4 ? " and IPv4 addresses" : "");
	if (strncasecmp(w, f->ns, strlen(f->ns)))
		return fail(p, start, "'%s' is not a constant of %s, which takes %s* constants",
			    w, f->name, f->ns);
	return 0;
}

/* A value: terms joined by '|' (O_CREAT|O_TRUNC) on a bit-flag field. */
static int parse_scalar(struct ps *p, const struct field_def *f, uint64_t *v)
{
	uint64_t t;

	if (parse_term(p, f, v))
		return -1;
	for (;;) {
		skip_ws(p);
		if (p->s[p->i] != '|')
			return 0;
		if (!f->bits)
			return fail(p, p->i, "'|' joins bit flags, and %s is not a set of flags: "
				    "to accept several values, write '%s in {A, B}'", f->name,
				    f->name);
		p->i++;
		if (parse_term(p, f, &t))
			return -1;
		*v |= t;
	}
}

static int parse_addr6(struct ps *p, uint8_t out[16])
{
	char w[128];
	size_t start;

	if (read_word(p, w, sizeof(w), &start, "an IPv6 address"))
		return -1;
	if (inet_pton(AF_INET6, w, out) != 1)
		return fail(p, start, "'%s' is not an IPv6 address", w);
	return 0;
}

/* An operand for @f: an IPv6 address for addr6, else a scalar. */
static int parse_operand(struct ps *p, const struct field_def *f, struct iour_cmp *c)
{
	if (f->kind == V_ADDR6)
		return parse_addr6(p, c->addr6);
	return parse_scalar(p, f, &c->value);
}

static bool eat(struct ps *p, const char *tok)
{
	size_t n = strlen(tok);

	skip_ws(p);
	if (strncmp(p->s + p->i, tok, n))
		return false;
	p->i += n;
	return true;
}

/* '{' value, ... '}' */
static int parse_set(struct ps *p, const struct field_def *f, struct iour_cmp *c, uint64_t **store)
{
	uint64_t *set = NULL, *grown, v;
	size_t n = 0, cap = 0, start = p->i - 1;

	if (f->kind == V_ADDR6)
		return fail(p, start, "sets of IPv6 addresses are not supported: "
			    "write one rule per address");
	for (;;) {
		if (parse_scalar(p, f, &v))
			goto err;
		if (n == cap) {
			cap = cap ? 2 * cap : 8;
			grown = realloc(set, cap * sizeof(*set));
			if (!grown) {
				fail(p, start, "out of memory");
				goto err;
			}
			set = grown;
		}
		set[n++] = v;
		if (eat(p, "}"))
			break;
		if (!eat(p, ",")) {
			skip_ws(p);
			fail(p, p->i, "expected ',' or '}' in the set");
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
static int parse_in(struct ps *p, const struct field_def *f, struct iour_cmp *c, bool negated,
		    uint64_t **store)
{
	uint64_t len;
	size_t start;
	char w[16];

	skip_ws(p);
	p->opnd = p->i;
	if (eat(p, "{")) {
		c->op = negated ? IOUR_CMP_NOT_IN_SET : IOUR_CMP_IN_SET;
		return parse_set(p, f, c, store);
	}
	if (eat(p, "[")) {
		if (f->kind == V_ADDR6)
			return fail(p, p->i - 1, "ranges do not apply to addr6");
		c->op = negated ? IOUR_CMP_NOT_IN_RANGE : IOUR_CMP_IN_RANGE;
		if (parse_scalar(p, f, &c->value))
			return -1;
		if (!eat(p, ",")) {
			skip_ws(p);
			return fail(p, p->i, "expected ',' between the bounds of the range");
		}
		if (parse_scalar(p, f, &c->arg))
			return -1;
		if (!eat(p, "]")) {
			skip_ws(p);
			return fail(p, p->i, "expected ']' after the range");
		}
		return 0;
	}
	skip_ws(p);
	if (f->kind == V_NUM)
		return fail(p, p->i, "expected '{' (a set) or '[' (a range) after 'in'");
	c->op = negated ? IOUR_CMP_NOT_IN_PREFIX : IOUR_CMP_IN_PREFIX;
	if (parse_operand(p, f, c))
		return -1;
	if (!eat(p, "/")) {
		skip_ws(p);
		return fail(p, p->i, "expected '/' and a prefix length after the address");
	}
	if (read_word(p, w, sizeof(w), &start, "a prefix length"))
		return -1;
	if (cli_parse_u64(w, &len))
		return fail(p, start, "'%s' is not a prefix length", w);
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
static int check_cmp(struct ps *p, const struct iour_cmp *c, size_t start, size_t opnd)
{
	struct iour_filter *scratch;
	int r;

	r = iour_filter__new(NULL, &scratch);
	if (r)
		return fail(p, start, "iour_filter__new: %s", cli_strerror(r));
	r = iour_filter__add_rule(scratch, p->op, IOUR_ALLOW, c, 1);
	iour_filter__free(scratch);
	if (r)
		return fail(p, r == -ERANGE ? opnd : start, "%s (iour_filter__add_rule: %s)",
			    refusal(r, c), iour_errname(r));
	return 0;
}

static int parse_cmp(struct ps *p, struct iour_cmp *c, uint64_t **store)
{
	const struct field_def *f;
	size_t start, opstart;
	uint64_t mask, v;
	char w[64];
	bool known;

	memset(c, 0, sizeof(*c));
	c->sz = sizeof(*c);
	if (read_word(p, w, sizeof(w), &start, "a field name"))
		return -1;
	f = find_field(w, p->pl, &known);
	if (!f) {
		if (known)
			return fail(p, start, "field '%s' does not exist for opcode %s "
				    "(its fields: %s)", w, iour_opcode_name(p->op),
				    expr_fields_of(p->op));
		return fail(p, start, "unknown field '%s' (fields of %s: %s)", w,
			    iour_opcode_name(p->op), expr_fields_of(p->op));
	}
	c->field = f->field;
	skip_ws(p);
	opstart = p->i;
	p->opnd = opstart;
	if (f->kind == V_ADDR6 && strncmp(p->s + p->i, "==", 2) && strncmp(p->s + p->i, "!=", 2) &&
	    strncasecmp(p->s + p->i, "in", 2) && strncasecmp(p->s + p->i, "not", 3) &&
	    strncmp(p->s + p->i, "!in", 3))
		return fail(p, opstart, "only ==, != and 'in PREFIX' apply to addr6");
	if (p->s[p->i] == '&' && p->s[p->i + 1] != '=') {
		/* FIELD & MASK == VALUE, FIELD & MASK != 0 */
		p->i++;
		skip_ws(p);
		p->opnd = p->i;
		if (parse_scalar(p, f, &mask))
			return -1;
		skip_ws(p);
		opstart = p->i;
		if (eat(p, "==")) {
			if (parse_scalar(p, f, &v))
				return -1;
			c->op = IOUR_CMP_MASKED_EQ;
			c->value = v;
			c->arg = mask;
		} else if (eat(p, "!=")) {
			skip_ws(p);
			start = p->i;
			if (parse_scalar(p, f, &v))
				return -1;
			if (v != 0)
				return fail(p, start, "'FIELD & MASK != VALUE' is supported only "
					    "with VALUE 0");
			c->op = IOUR_CMP_ANY_BITS;
			c->value = mask;
		} else {
			return fail(p, opstart, "expected '==' or '!=' after 'FIELD & MASK'");
		}
		return 0;
	}
	if (eat(p, "==")) {
		c->op = IOUR_CMP_EQ;
	} else if (eat(p, "!=")) {
		c->op = IOUR_CMP_NE;
	} else if (eat(p, "<=")) {
		c->op = IOUR_CMP_LE;
	} else if (eat(p, ">=")) {
		c->op = IOUR_CMP_GE;
	} else if (eat(p, "<")) {
		c->op = IOUR_CMP_LT;
	} else if (eat(p, ">")) {
		c->op = IOUR_CMP_GT;
	} else if (eat(p, "&=")) {
		c->op = IOUR_CMP_ANY_BITS;
		skip_ws(p);
		p->opnd = p->i;
		return parse_scalar(p, f, &c->value);
	} else if (p->s[p->i] == '=') {
		return fail(p, opstart, "'=' is not an operator here: compare with '=='");
	} else if (eat(p, "!in")) {
		return parse_in(p, f, c, true, store);
	} else if (!strncasecmp(p->s + p->i, "in", 2) && !word_char(p->s[p->i + 2])) {
		p->i += 2;
		return parse_in(p, f, c, false, store);
	} else if (!strncasecmp(p->s + p->i, "not", 3) && !word_char(p->s[p->i + 3])) {
		p->i += 3;
		skip_ws(p);
		if (strncasecmp(p->s + p->i, "in", 2) || word_char(p->s[p->i + 2]))
			return fail(p, p->i, "expected 'in' after 'not'");
		p->i += 2;
		return parse_in(p, f, c, true, store);
	} else if (p->s[p->i] == '\0') {
		return fail(p, opstart, "expected an operator after '%s' at the end", w);
	} else {
		return fail(p, opstart, "expected an operator (==, !=, <, <=, >, >=, &=, "
			    "& MASK ==, in, not in)");
	}
	skip_ws(p);
	p->opnd = p->i;
	return parse_operand(p, f, c);
}

/* Notes comparisons that are valid but cannot mean what they say. */
static void warn_cmp(struct expr_rule *rule, const struct iour_cmp *c)
{
#ifdef KIO_O_LARGEFILE
	if (c->field == IOUR_FIELD_OPEN_FLAGS && (c->op == IOUR_CMP_EQ || c->op == IOUR_CMP_NE) &&
	    !(c->value & (KIO_O_LARGEFILE | O_PATH)))
		rule->warning = "64-bit kernels add O_LARGEFILE to the open flags of every request "
				"without O_PATH, so 'flags==' never holds and 'flags!=' always "
				"does: test bits with '&=' or 'flags & MASK == VALUE', and the "
				"access mode with accmode";
#else
	(void)rule;
	(void)c;
#endif
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
	struct ps p = { .s = text, .op = opcode, .pl = payload_of(opcode), .err = err };
	size_t start, n;

	memset(rule, 0, sizeof(*rule));
	memset(err, 0, sizeof(*err));
	/* "true": a rule without comparisons, which always holds. */
	skip_ws(&p);
	n = strlen(text + p.i);
	while (n && isspace((unsigned char)text[p.i + n - 1]))
		n--;
	if (n == 4 && !strncasecmp(text + p.i, "true", 4))
		return 0;
	if (n == 0)
		return fail(&p, p.i, "empty rule (write 'true' for a rule that always holds)");

	for (;;) {
		skip_ws(&p);
		start = p.i;
		if (rule->n == IOUR_FILTER_MAX_CMPS) {
			fail(&p, start, "more than %d comparisons in one rule", IOUR_FILTER_MAX_CMPS);
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
		skip_ws(&p);
		if (p.s[p.i] == '\0')
			return 0;
		if (p.s[p.i] != ',') {
			fail(&p, p.i, "expected ',' or the end of the rule, found '%c'", p.s[p.i]);
			goto err;
		}
		p.i++;
	}
err:
	expr_rule_free(rule);
	return -1;
}

/* ---- contexts for the simulator */

enum ctx_key {
	K_USER_DATA, K_SQE_FLAGS, K_FAMILY, K_TYPE, K_PROTOCOL, K_FLAGS, K_MODE, K_RESOLVE,
	K_PORT, K_ADDR4, K_ADDR6, K_ADDRLEN, K__COUNT
};

struct ctx_def {
	const char *name;
	enum payload payload;
	enum ctx_key key;
	enum vkind kind;
	const char *ns; /* as in struct field_def */
	bool bits;
};

static const struct ctx_def ctx_keys[] = {
	{ "user_data", PL_ANY, K_USER_DATA, V_NUM, NULL, false },
	{ "sqe_flags", PL_ANY, K_SQE_FLAGS, V_NUM, "IOSQE_", true },
	{ "family", PL_SOCKET, K_FAMILY, V_NUM, "AF_", false },
	{ "type", PL_SOCKET, K_TYPE, V_NUM, "SOCK_", true }, /* the whole word */
	{ "protocol", PL_SOCKET, K_PROTOCOL, V_NUM, "IPPROTO_", false },
	{ "flags", PL_OPEN, K_FLAGS, V_NUM, "O_", true },
	{ "mode", PL_OPEN, K_MODE, V_NUM, "S_", true },
	{ "resolve", PL_OPEN, K_RESOLVE, V_NUM, "RESOLVE_", true },
	{ "family", PL_CONNECT, K_FAMILY, V_NUM, "AF_", false },
	{ "port", PL_CONNECT, K_PORT, V_NUM, NULL, false },
	{ "addr4", PL_CONNECT, K_ADDR4, V_ADDR4, NULL, false },
	{ "addr6", PL_CONNECT, K_ADDR6, V_ADDR6, NULL, false },
	{ "addrlen", PL_CONNECT, K_ADDRLEN, V_NUM, NULL, false },
};

static const char *ctx_keys_of(enum payload pl)
{
	switch (pl) {
	case PL_SOCKET:
		return "family, type, protocol, user_data, sqe_flags";
	case PL_OPEN:
		return "flags, mode, resolve, user_data, sqe_flags";
	case PL_CONNECT:
		return "family, port, addr4, addr6, addrlen, user_data, sqe_flags";
	default:
		return "user_data, sqe_flags";
	}
}

static const struct ctx_def *find_ctx_key(const char *name, enum payload pl, bool *known)
{
	size_t i;

	*known = false;
	for (i = 0; i < sizeof(ctx_keys) / sizeof(ctx_keys[0]); i++) {
		if (strcasecmp(name, ctx_keys[i].name))
			continue;
		if (ctx_keys[i].payload == PL_ANY || ctx_keys[i].payload == pl)
			return &ctx_keys[i];
		*known = true;
	}
	return NULL;
}

int expr_build_ctx(const char *text, uint32_t opcode, uint8_t ctx[IOUR_CTX_SIZE],
		   struct expr_error *err)
{
	struct ps p = { .s = text, .op = opcode, .pl = payload_of(opcode), .err = err };
	uint64_t val[K__COUNT] = { 0 };
	size_t at[K__COUNT] = { 0 };
	bool set[K__COUNT] = { false };
	struct field_def fd = { "value", PL_ANY, 0, V_NUM, NULL, false };
	const struct ctx_def *k;
	struct sockaddr_storage ss;
	uint8_t a6[16] = { 0 };
	uint64_t family;
	uint32_t addrlen = 0;
	size_t start;
	char w[64];
	bool known;
	int r;

	memset(err, 0, sizeof(*err));
	if (opcode >= IOUR_OP__COUNT)
		return fail(&p, 0, "opcode %u has no filter context", opcode);
	skip_ws(&p);
	while (p.s[p.i] != '\0') {
		if (read_word(&p, w, sizeof(w), &start, "a context field"))
			return -1;
		k = find_ctx_key(w, p.pl, &known);
		if (!k)
			return fail(&p, start, "%s context field '%s' (context fields of %s: %s)",
				    known ? "no" : "unknown", w, iour_opcode_name(opcode),
				    ctx_keys_of(p.pl));
		if (set[k->key])
			return fail(&p, start, "'%s' is assigned twice", w);
		if (!eat(&p, "=")) {
			skip_ws(&p);
			return fail(&p, p.i, "expected '=' after '%s'", w);
		}
		skip_ws(&p);
		at[k->key] = p.i;
		fd.name = k->name;
		fd.kind = k->kind;
		fd.ns = k->ns;
		fd.bits = k->bits;
		if (k->kind == V_ADDR6) {
			if (parse_addr6(&p, a6))
				return -1;
		} else if (parse_scalar(&p, &fd, &val[k->key])) {
			return -1;
		}
		set[k->key] = true;
		skip_ws(&p);
		if (p.s[p.i] == '\0')
			break;
		if (p.s[p.i] != ',')
			return fail(&p, p.i, "expected ',' or the end, found '%c'", p.s[p.i]);
		p.i++;
		skip_ws(&p);
		if (p.s[p.i] == '\0')
			return fail(&p, p.i, "expected a context field after ','");
	}

	if (val[K_SQE_FLAGS] & ~(uint64_t)IOUR_SQE__VALID)
		return fail(&p, at[K_SQE_FLAGS], "sqe_flags has bits outside 0x7f");
	r = iour_ctx_generic(ctx, IOUR_CTX_SIZE, opcode, (uint32_t)val[K_SQE_FLAGS],
			     val[K_USER_DATA]);
	if (r)
		return fail(&p, 0, "iour_ctx_generic: %s", cli_strerror(r));

	switch (p.pl) {
	case PL_SOCKET:
		for (int i = K_FAMILY; i <= K_PROTOCOL; i++)
			if (val[i] > UINT32_MAX)
				return fail(&p, at[i], "value does not fit the 32-bit field");
		r = iour_ctx_socket(ctx, IOUR_CTX_SIZE, (uint32_t)val[K_FAMILY],
				    (uint32_t)val[K_TYPE], (uint32_t)val[K_PROTOCOL]);
		if (r)
			return fail(&p, 0, "iour_ctx_socket: %s", cli_strerror(r));
		break;
	case PL_OPEN:
		if (opcode == IOUR_OP_OPENAT) {
			if (val[K_FLAGS] > UINT32_MAX)
				return fail(&p, at[K_FLAGS], "OPENAT's flags are 32 bits");
			if (val[K_MODE] > UINT32_MAX)
				return fail(&p, at[K_MODE], "OPENAT's mode is 32 bits");
			if (val[K_RESOLVE])
				return fail(&p, at[K_RESOLVE], "OPENAT has no resolve flags "
					    "(use OPENAT2)");
		}
		r = iour_ctx_open(ctx, IOUR_CTX_SIZE, val[K_FLAGS], val[K_MODE], val[K_RESOLVE]);
		if (r)
			return fail(&p, 0, "iour_ctx_open: %s", cli_strerror(r));
		break;
	case PL_CONNECT:
		family = val[K_FAMILY];
		if (!set[K_FAMILY])
			family = set[K_ADDR6]			   ? AF_INET6
				 : set[K_ADDR4] || set[K_PORT] ? AF_INET
							       : AF_UNSPEC;
		if (family > 0xffff)
			return fail(&p, at[K_FAMILY], "an address family is 16 bits");
		if (val[K_PORT] > 0xffff)
			return fail(&p, at[K_PORT], "a port is 16 bits");
		if (val[K_ADDR4] > UINT32_MAX)
			return fail(&p, at[K_ADDR4], "an IPv4 address is 32 bits");
		if (set[K_ADDR4] && set[K_ADDR6])
			return fail(&p, at[K_ADDR6], "give addr4 or addr6, not both");
		memset(&ss, 0, sizeof(ss));
		ss.ss_family = (sa_family_t)family;
		if (family == AF_INET) {
			struct sockaddr_in *in = (struct sockaddr_in *)&ss;

			in->sin_port = htons((uint16_t)val[K_PORT]);
			in->sin_addr.s_addr = htonl((uint32_t)val[K_ADDR4]);
			addrlen = sizeof(*in);
		} else if (family == AF_INET6) {
			struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;

			in6->sin6_port = htons((uint16_t)val[K_PORT]);
			memcpy(&in6->sin6_addr, a6, 16);
			addrlen = sizeof(*in6);
		} else if (set[K_FAMILY]) {
			addrlen = sizeof(struct sockaddr);
		}
		if (set[K_ADDRLEN]) {
			if (val[K_ADDRLEN] > sizeof(ss))
				return fail(&p, at[K_ADDRLEN], "addrlen is at most %zu",
					    sizeof(ss));
			addrlen = (uint32_t)val[K_ADDRLEN];
		}
		r = iour_ctx_connect(ctx, IOUR_CTX_SIZE, &ss, addrlen);
		if (r)
			return fail(&p, 0, "iour_ctx_connect: %s", cli_strerror(r));
		break;
	default:
		break;
	}
	return 0;
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

const char cli_help_rules[] =
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
"Fields (the opcode chooses the payload; 'socket.family' etc. also work):\n"
"  every opcode       user_data (64 bits), sqe_flags (IOSQE_* bits)\n"
"  SOCKET             family, type (type & 0xf), type_flags (SOCK_NONBLOCK,\n"
"                     SOCK_CLOEXEC), type_raw (the whole word), protocol\n"
"  OPENAT, OPENAT2    flags, accmode (flags & O_ACCMODE), mode, resolve\n"
"  CONNECT (7.2+)     family, port, addr4, addr6\n"
"\n"
"The kernel adds O_LARGEFILE to open flags, so 'flags==O_RDONLY' never\n"
"matches a real request: test bits with '&=' or 'flags & MASK == VALUE', and\n"
"the access mode with accmode.  addr4 and addr6 comparisons, negated ones\n"
"included, hold only for requests of their own family.  A CONNECT to an\n"
"IPv4-mapped address ::ffff:a.b.c.d goes to a.b.c.d over IPv4, so it is\n"
"judged as that IPv4 connect (family AF_INET, addr4 a.b.c.d); deny rules\n"
"also see it as given (AF_INET6, addr6).  --addr4-literal turns this off.\n"
"\n"
"Each field takes its own constants only (family: AF_*, type: SOCK_*,\n"
"protocol: IPPROTO_*, flags and accmode: O_*, mode: S_*, resolve: RESOLVE_*,\n"
"sqe_flags: IOSQE_*; user_data, port and addr4: numbers).  '|' joins bit\n"
"flags (flags, mode, resolve, sqe_flags, type_flags, type_raw); for several\n"
"values of any other field write 'in {A, B}'.\n"
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
"\n"
"Contexts of 'sim --ctx' are assignments FIELD=value, comma-separated:\n"
"  every opcode       user_data, sqe_flags\n"
"  SOCKET             family, type (the raw word: SOCK_STREAM|SOCK_CLOEXEC),\n"
"                     protocol\n"
"  OPENAT, OPENAT2    flags, mode, resolve (OPENAT2 only); as the kernel\n"
"                     does, OPENAT masks them and O_LARGEFILE is added\n"
"  CONNECT            family (default: from addr4/addr6/port), port, addr4,\n"
"                     addr6, addrlen (default: the size of the address)\n"
"Fields not given are 0.\n";
