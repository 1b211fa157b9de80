/* SPDX-License-Identifier: MIT */
/*
 * Policy files: JSON text <-> struct iour_policy (doc/policy-files.md),
 * and iour_policy__decide().  The JSON is parsed and written by jansson;
 * this file only maps values to the policy API.  Semantic errors carry the
 * JSON path of the offending value; locate() finds that path again in the
 * text, which jansson has already accepted, to give a line and column.
 * This file: the field tables, the loader's state and errors, value
 * parsers, conditions and entries; lib/policyfile/policyfile_load.c: the classic part,
 * programs, the document and the public load functions.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <linux/openat2.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "base/internal.h"
#include "filter/filter_internal.h"
#include "policyfile_internal.h"
#include "policyfile_load.h"
#include "rules/rules_internal.h"
#include "base/schema.h"
#include "iouring_restrict/filter.h"
#include "iouring_restrict/names.h"
#include "iouring_restrict/policy.h"
#include "iouring_restrict/policyfile.h"
#include "iouring_restrict/ruleset.h"

/* ---- fields and their constants ------------------------------------------ */

enum vkind { V_NUM, V_BITS, V_ADDR4, V_ADDR6 };

struct fdef {
	const char *name;
	uint32_t field;
	enum vkind kind;
	const char *ns; /* constant prefix, NULL: numbers only */
};

/* The fields, for both loading and saving: lib/base/schema.def. */
static const struct fdef fields[] = {
#define IOUR_SCHEMA_FIELD(name, id, group, kind, prefix, off, bytes, order, mask, valid, label) \
	{ (name), (id), V_##kind, (prefix) },
#include "base/schema.def"
};

struct cdef {
	const char *name;
	uint64_t value;
};

/* Constants by namespace prefix: lib/base/schema.def (the CLI reads the same).
 * The first name of a value is the one saving writes. */
static const struct cdef constants[] = {
#define IOUR_SCHEMA_CONST(name, value, since) { (name), (uint64_t)(value) },
#include "base/schema.def"
};

const char *const iour__policy_attr_key[IOUR_POLICY_ATTR__MAX] = {
	[IOUR_POLICY_ATTR_TARGET] = "target",
	[IOUR_POLICY_ATTR_COMPAT] = "compat",
	[IOUR_POLICY_ATTR_NNP] = "noNewPrivs",
	[IOUR_POLICY_ATTR_NO_FILTER_FALLBACK] = "noFilterFallback",
	[IOUR_POLICY_ATTR_THREADS] = "threads",
	[IOUR_POLICY_ATTR_COMPANION] = "companion",
	[IOUR_POLICY_ATTR_DEFAULT] = "defaultAction",
};

/* Values of each attribute, indexed by the attribute's value. */
const char *const iour__policy_attr_val[IOUR_POLICY_ATTR__MAX][IOUR__POLICY_ATTR_VALS] = {
	[IOUR_POLICY_ATTR_TARGET] = { "task", "ring" },
	[IOUR_POLICY_ATTR_COMPAT] = { "best-effort", "soft", "hard" },
	[IOUR_POLICY_ATTR_NNP] = { "keep", "set" },
	[IOUR_POLICY_ATTR_NO_FILTER_FALLBACK] = { "closed", "open" },
	[IOUR_POLICY_ATTR_THREADS] = { "report", "refuse" },
	[IOUR_POLICY_ATTR_COMPANION] = { "off", "enosys", "eperm" },
	[IOUR_POLICY_ATTR_DEFAULT] = { "deny", "allow" },
};

/* ---- the loader's state and errors (lib/policyfile/policyfile_load.h) ----------------- */

void iour__pf_push_key(struct ld *l, const char *key)
{
	if (l->depth < MAX_DEPTH)
		l->path[l->depth] = (struct step){ key, 0 };
	l->depth++;
}

void iour__pf_push_idx(struct ld *l, size_t i)
{
	if (l->depth < MAX_DEPTH)
		l->path[l->depth] = (struct step){ NULL, i };
	l->depth++;
}

void iour__pf_pop(struct ld *l)
{
	l->depth--;
}

static size_t skip_ws(const char *s, size_t n, size_t i)
{
	while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r'))
		i++;
	return i;
}

static size_t skip_string(const char *s, size_t n, size_t i)
{
	for (i++; i < n && s[i] != '"'; i++)
		if (s[i] == '\\')
			i++;
	return i + 1;
}

static size_t skip_value(const char *s, size_t n, size_t i)
{
	int nest = 0;

	do {
		if (i >= n)
			return n;
		if (s[i] == '"') {
			i = skip_string(s, n, i);
			continue;
		}
		if (s[i] == '{' || s[i] == '[')
			nest++;
		else if (s[i] == '}' || s[i] == ']')
			nest--;
		else if (nest == 0) {
			while (i < n && !strchr(",}] \t\r\n", s[i]))
				i++;
			return i;
		}
		i++;
	} while (nest > 0);
	return i;
}

/*
 * Finds the value (or, with at_key, the key) at a path in a text jansson
 * accepted.  Keys are compared byte for byte; a key written with escapes
 * does not match and the error is then placed at its enclosing object.
 */
static size_t locate(const char *s, size_t n, const struct step *path, int depth, bool at_key)
{
	size_t i = skip_ws(s, n, 0), best = i;
	int d;

	for (d = 0; d < depth && d < MAX_DEPTH; d++) {
		bool found = false;
		size_t idx = 0;

		if (i >= n || (s[i] != '{' && s[i] != '['))
			return best;
		best = i;
		i = skip_ws(s, n, i + 1);
		while (i < n && s[i] != '}' && s[i] != ']') {
			size_t k = i, v;

			if (s[best] == '{') {
				size_t e = skip_string(s, n, i);
				bool match = path[d].key && e - k - 2 == strlen(path[d].key) &&
					     !memcmp(s + k + 1, path[d].key, e - k - 2);

				i = skip_ws(s, n, e);
				i = skip_ws(s, n, i + 1); /* ':' */
				v = i;
				if (match) {
					if (at_key && d == depth - 1)
						return k;
					i = v;
					found = true;
					break;
				}
			} else {
				v = i;
				if (!path[d].key && idx == path[d].index) {
					found = true;
					break;
				}
				idx++;
			}
			i = skip_ws(s, n, skip_value(s, n, v));
			if (i < n && s[i] == ',')
				i = skip_ws(s, n, i + 1);
		}
		if (!found)
			return best;
		best = i;
	}
	return best;
}

static void fill_pos(struct iour_load_error *e, const char *s, size_t n, size_t off)
{
	uint32_t line = 1, col = 1;
	size_t i;

	for (i = 0; i < off && i < n; i++) {
		if (s[i] == '\n') {
			line++;
			col = 1;
		} else {
			col++;
		}
	}
	e->line = line;
	e->column = col;
	e->offset = off;
}

bool iour__pf_err_ok(const struct iour_load_error *e)
{
	return e && e->sz <= IOUR_OPTS_MAX_SZ && IOUR_OUT_HAS(e, message);
}

static void path_str(const struct ld *l, char *buf, size_t cap)
{
	size_t n = 0;
	int d;

	buf[0] = '\0';
	for (d = 0; d < l->depth && d < MAX_DEPTH && n < cap; d++) {
		int w;

		if (l->path[d].key)
			w = snprintf(buf + n, cap - n, "%s%s", d ? "." : "", l->path[d].key);
		else
			w = snprintf(buf + n, cap - n, "[%zu]", l->path[d].index);
		if (w < 0)
			break;
		n += (size_t)w;
	}
}

/* Records a semantic error at the current path; returns -EBADMSG. */
int iour__pf_fail(struct ld *l, const char *fmt, ...)
{
	va_list ap;

	if (!iour__pf_err_ok(l->err))
		return -EBADMSG;
	fill_pos(l->err, l->text, l->len, locate(l->text, l->len, l->path, l->depth, l->at_key));
	path_str(l, l->err->path, sizeof(l->err->path));
	va_start(ap, fmt);
	vsnprintf(l->err->message, sizeof(l->err->message), fmt, ap);
	va_end(ap);
	return -EBADMSG;
}

/* ---- small value parsers --------------------------------------------------- */

const char *iour__pf_type_name(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return "an object";
	case JSON_ARRAY:
		return "an array";
	case JSON_STRING:
		return "a string";
	case JSON_INTEGER:
		return "an integer";
	case JSON_REAL:
		return "a real number";
	case JSON_TRUE:
	case JSON_FALSE:
		return "a boolean";
	default:
		return "null";
	}
}

/* Checks that every key of object o is in keys (NULL-terminated). */
int iour__pf_check_keys(struct ld *l, json_t *o, const char *what, const char *const *keys)
{
	const char *k;
	json_t *v;
	char list[200];
	size_t i, n = 0;

	json_object_foreach(o, k, v)
	{
		for (i = 0; keys[i]; i++)
			if (!strcmp(k, keys[i]))
				break;
		if (keys[i])
			continue;
		list[0] = '\0';
		for (i = 0; keys[i]; i++) {
			int w = snprintf(list + n, sizeof(list) - n, "%s%s", i ? ", " : "",
					 keys[i]);

			if (w < 0 || (size_t)w >= sizeof(list) - n)
				break;
			n += (size_t)w;
		}
		iour__pf_push_key(l, k);
		l->at_key = true;
		return iour__pf_fail(l, "unknown key '%s' in %s (expected one of: %s)", k, what,
				     list);
	}
	return 0;
}

static int want_string(struct ld *l, json_t *v, const char *what, const char **out)
{
	if (!json_is_string(v))
		return iour__pf_fail(l, "expected %s (a string), found %s", what,
				     iour__pf_type_name(v));
	*out = json_string_value(v);
	return 0;
}

int iour__pf_want_array(struct ld *l, json_t *v, const char *what)
{
	if (!json_is_array(v))
		return iour__pf_fail(l, "expected %s (an array), found %s", what,
				     iour__pf_type_name(v));
	return 0;
}

/* A decimal number at *s of at most max; *s moves past it.  -1 if there
 * is none or it is too large. */
static long dec(const char **s, unsigned long max)
{
	unsigned long v = 0;
	const char *p = *s;

	if (*p < '0' || *p > '9')
		return -1;
	while (*p >= '0' && *p <= '9') {
		v = v * 10 + (unsigned long)(*p++ - '0');
		if (v > max)
			return -1;
	}
	*s = p;
	return (long)v;
}

/* "6.1" -> IOUR_KVER(6, 1). */
int iour__pf_parse_kver(struct ld *l, json_t *v, uint32_t *out)
{
	const char *s = "", *q;
	long maj, min = -1;

	if (want_string(l, v, "a kernel version \"X.Y\"", &s))
		return -EBADMSG;
	q = s;
	maj = dec(&q, 255);
	if (maj >= 0 && *q == '.') {
		q++;
		min = dec(&q, 255);
	}
	if (maj < 0 || min < 0 || *q)
		return iour__pf_fail(
			l, "expected a kernel version \"X.Y\" (such as \"6.1\"), found \"%s\"", s);
	*out = IOUR_KVER((uint32_t)maj, (uint32_t)min);
	return 0;
}

int iour__pf_parse_enum(struct ld *l, json_t *v, const char *what, const char *const *names,
			size_t n, uint32_t *out)
{
	const char *s = "";
	char list[120];
	size_t i, w = 0;

	if (want_string(l, v, what, &s))
		return -EBADMSG;
	for (i = 0; i < n && names[i]; i++)
		if (!strcmp(s, names[i])) {
			*out = (uint32_t)i;
			return 0;
		}
	list[0] = '\0';
	for (i = 0; i < n && names[i]; i++)
		w += (size_t)snprintf(list + w, sizeof(list) - w, "%s\"%s\"", i ? ", " : "",
				      names[i]);
	return iour__pf_fail(l, "unknown %s \"%s\" (expected one of: %s)", what, s, list);
}

/* ---- names of opcodes ------------------------------------------------------- */

/* Adds a request opcode name, number or @group to ops[]. */
int iour__pf_add_op_name(struct ld *l, json_t *v, bool *ops, bool reg)
{
	const char *s;
	uint32_t buf[IOUR__NOPCODES];
	int r, i, n;

	if (json_is_integer(v)) {
		json_int_t x = json_integer_value(v);

		if (x < 0 || x > (reg ? 255 : 255))
			return iour__pf_fail(l, "%s opcode %lld is out of range (0 to 255)",
					     reg ? "register" : "request", (long long)x);
		ops[x] = true;
		return 0;
	}
	if (!json_is_string(v))
		return iour__pf_fail(l, "expected an opcode name, number or @group, found %s",
				     iour__pf_type_name(v));
	s = json_string_value(v);
	if (s[0] == '@') {
		r = iour_group_find(s);
		if (r < 0)
			return iour__pf_fail(
				l, "unknown group \"%s\" (iour-restrict groups lists them)", s);
		n = reg ? iour_group_register_ops((size_t)r, l->asof, buf, IOUR__NOPCODES) :
			  iour_group_opcodes((size_t)r, l->asof, buf, IOUR__NOPCODES);
		if (n < 0)
			return iour__pf_fail(l, "group \"%s\": %s", s, iour_strerror_desc(n));
		if (n == 0 && (reg ? iour_group_opcodes((size_t)r, 0, NULL, 0) :
				     iour_group_register_ops((size_t)r, 0, NULL, 0)) > 0)
			return iour__pf_fail(l, "group \"%s\" has no %s opcodes (use it in %s)", s,
					     reg ? "register" : "request",
					     reg ? "entries" : "registerOps");
		for (i = 0; i < n; i++)
			ops[buf[i]] = true;
		return 0;
	}
	r = reg ? iour_register_op_from_name(s) : iour_opcode_from_name(s);
	if (r < 0) {
		const char *near =
			iour_name_suggest(reg ? IOUR_NAME_REGISTER_OP : IOUR_NAME_OPCODE, s);

		return iour__pf_fail(
			l, "unknown %s opcode \"%s\"%s%s%s", reg ? "register" : "request", s,
			near ? " (did you mean \"" : "", near ? near : "", near ? "\"?)" : "");
	}
	ops[r] = true;
	return 0;
}

int iour__pf_op_list(struct ld *l, json_t *arr, const char *what, bool *ops, bool reg)
{
	size_t i;
	json_t *v;
	int rc;

	if (iour__pf_want_array(l, arr, what))
		return -EBADMSG;
	json_array_foreach(arr, i, v)
	{
		iour__pf_push_idx(l, i);
		rc = iour__pf_add_op_name(l, v, ops, reg);
		if (rc)
			return rc;
		iour__pf_pop(l);
	}
	return 0;
}

/* ---- values of fields -------------------------------------------------------- */

static bool in_ns(const char *name, const char *ns)
{
	return !strncasecmp(name, ns, strlen(ns));
}

/* One word: a number or a constant of the field's namespace, read by the
 * rule front end (lib/rules/rules.c) and worded as policy files word it. */
static int word_value(struct ld *l, const struct iour__rfield *f, const char *w, uint64_t *out)
{
	enum iour__rterm rt = iour__rule_term(w, f, out);

	if (rt == IOUR__RT_OK)
		return 0;
	if (isdigit((unsigned char)w[0]))
		return iour__pf_fail(l, "\"%s\" is not a number", w);
	if (!f->ns)
		return iour__pf_fail(l, "%s takes numbers only, found \"%s\"", f->full, w);
	if (rt == IOUR__RT_OTHER_NS)
		return iour__pf_fail(l,
				     "%s belongs to another field: %s takes %s* constants or "
				     "numbers",
				     w, f->full, f->ns);
	return iour__pf_fail(l, "unknown constant \"%s\" (%s takes %s* constants or numbers)", w,
			     f->full, f->ns);
}

/* Cuts the blanks around a word in place. */
static char *trim(char *w)
{
	char *e;

	while (isspace((unsigned char)*w))
		w++;
	for (e = w + strlen(w); e > w && isspace((unsigned char)e[-1]);)
		*--e = '\0';
	return w;
}

/* A scalar value: a JSON integer, a number in a string, a constant, an
 * IPv4 address for an addr4 field, or for bit fields "A|B". */
static int scalar(struct ld *l, const struct iour__rfield *f, json_t *v, uint64_t *out)
{
	char buf[256], *p, *tok, *save = NULL;
	int rc;

	if (json_is_integer(v)) {
		if (json_integer_value(v) < 0)
			return iour__pf_fail(l, "%lld is negative: values are unsigned",
					     (long long)json_integer_value(v));
		*out = (uint64_t)json_integer_value(v);
		return 0;
	}
	if (!json_is_string(v))
		return iour__pf_fail(l, "expected a number or a constant for %s, found %s", f->full,
				     iour__pf_type_name(v));
	if (json_string_length(v) >= sizeof(buf))
		return iour__pf_fail(l, "value too long");
	memcpy(buf, json_string_value(v), json_string_length(v) + 1);
	if (f->kind == IOUR_FIELD_KIND_ADDR4) {
		if (iour__rule_term(trim(buf), f, out) != IOUR__RT_OK)
			return iour__pf_fail(l, "expected an IPv4 address a.b.c.d, found \"%s\"",
					     json_string_value(v));
		return 0;
	}
	if (!f->bits && strchr(buf, '|'))
		return iour__pf_fail(
			l, "'|' joins bit flags only; %s is not a bit field (use \"in\")", f->full);
	*out = 0;
	for (p = buf; (tok = strtok_r(p, "|", &save)); p = NULL) {
		uint64_t x = 0;

		rc = word_value(l, f, trim(tok), &x);
		if (rc)
			return rc;
		*out |= x;
	}
	return 0;
}

/* "a.b.c.d/n" or "x::y/n" (prefix); without "/n", a full-length prefix
 * (lib/rules/rules.c). */
static int prefix_value(struct ld *l, const struct iour__rfield *f, json_t *v, struct iour_cmp *c)
{
	bool v4 = f->kind == IOUR_FIELD_KIND_ADDR4;
	const char *s, *len;

	if (!json_is_string(v))
		return iour__pf_fail(l, "expected an address prefix such as \"%s\"",
				     v4 ? "10.0.0.0/8" : "fe80::/10");
	s = json_string_value(v);
	switch (iour__rule_prefix(s, f, c, &len)) {
	case IOUR__RP_OK:
		return 0;
	case IOUR__RP_BAD_LENGTH:
		return iour__pf_fail(l, "prefix length \"%s\" out of range (0 to %u)", len,
				     v4 ? 32 : 128);
	case IOUR__RP_BAD_ADDRESS:
		return iour__pf_fail(l,
				     v4 ? "expected an IPv4 address a.b.c.d, found \"%.*s\"" :
					  "expected an IPv6 address, found \"%.*s\"",
				     (int)(len ? (size_t)(len - 1 - s) : strlen(s)), s);
	default:
		return iour__pf_fail(l, "expected an address prefix such as \"%s\"",
				     v4 ? "10.0.0.0/8" : "fe80::/10");
	}
}

/* ---- one condition ----------------------------------------------------------- */

static const char *const cond_keys[] = { "comment", "field", "op",   "value",
					 "values",  "range", "mask", NULL };

/* Parses args[i] into c (set memory in *set, owned by the caller). */
static int parse_cond(struct ld *l, json_t *o, struct iour_cmp *c, uint64_t **set)
{
	struct iour__rfield fd, *f = &fd;
	const char *fname = "", *opname = "";
	bool known;
	json_t *v, *vals, *range, *mask;
	size_t i;
	int rc;

	memset(c, 0, sizeof(*c));
	c->sz = sizeof(*c);
	if (!json_is_object(o))
		return iour__pf_fail(l, "expected a condition (an object), found %s",
				     iour__pf_type_name(o));
	rc = iour__pf_check_keys(l, o, "a condition", cond_keys);
	if (rc)
		return rc;
	iour__pf_push_key(l, "field");
	if (!json_object_get(o, "field"))
		return iour__pf_pop(l), iour__pf_fail(l, "a condition needs \"field\"");
	if (want_string(l, json_object_get(o, "field"), "a field name", &fname))
		return -EBADMSG;
	if (iour__rule_find_field(fname, IOUR_RULE_NO_OPCODE, &known, f)) {
		char names[IOUR__SCHEMA_FIELD_NAMES_SIZE];
		const char *hint = iour__rule_unexposed_hint(fname, IOUR_RULE_NO_OPCODE);
		size_t n;

		if (hint)
			return iour__pf_fail(l, "unknown field \"%s\": %s", fname, hint);
		n = iour__schema_field_names(names, sizeof(names), false);
		/* every name if the message holds them, else the groups */
		if (strlen(fname) + n + sizeof("unknown field \"\" (fields: )") >
		    IOUR_LOAD_ERROR_MSG)
			iour__schema_field_names(names, sizeof(names), true);
		return iour__pf_fail(l, "unknown field \"%s\" (fields: %s)", fname, names);
	}
	iour__pf_pop(l);
	c->field = f->id;
	if (!json_object_get(o, "op"))
		return iour__pf_fail(l, "a condition needs \"op\"");
	iour__pf_push_key(l, "op");
	if (want_string(l, json_object_get(o, "op"), "an operator", &opname))
		return -EBADMSG;
	if (iour_rule_op(opname, &c->op))
		return iour__pf_fail(
			l,
			"unknown operator \"%s\" (expected ==, !=, <, <=, >, >=, &=, &==, "
			"all-bits, none-bits, in, not in)",
			opname);
	iour__pf_pop(l);
	v = json_object_get(o, "value");
	vals = json_object_get(o, "values");
	range = json_object_get(o, "range");
	mask = json_object_get(o, "mask");
	if (c->op == IOUR_CMP_IN_SET || c->op == IOUR_CMP_NOT_IN_SET) {
		bool neg = c->op == IOUR_CMP_NOT_IN_SET;

		if (!!v + !!vals + !!range != 1 || mask)
			return iour__pf_fail(
				l,
				"\"%s\" takes exactly one of \"values\" (a set), \"range\" "
				"([low, high]) or \"value\" (an address prefix)",
				opname);
		if (v) {
			if (f->kind != IOUR_FIELD_KIND_ADDR4 && f->kind != IOUR_FIELD_KIND_ADDR6)
				return iour__pf_push_key(l, "value"),
				       iour__pf_fail(
					       l,
					       "\"value\" with \"%s\" is an address prefix; %s is "
					       "not an address (use \"values\" or \"range\")",
					       opname, f->full);
			c->op = neg ? IOUR_CMP_NOT_IN_PREFIX : IOUR_CMP_IN_PREFIX;
			iour__pf_push_key(l, "value");
			rc = prefix_value(l, f, v, c);
			if (rc)
				return rc;
			iour__pf_pop(l);
		} else if (range) {
			iour__pf_push_key(l, "range");
			if (!json_is_array(range) || json_array_size(range) != 2)
				return iour__pf_fail(l, "expected a range [low, high]");
			c->op = neg ? IOUR_CMP_NOT_IN_RANGE : IOUR_CMP_IN_RANGE;
			iour__pf_push_idx(l, 0);
			if ((rc = scalar(l, f, json_array_get(range, 0), &c->value)))
				return rc;
			iour__pf_pop(l);
			iour__pf_push_idx(l, 1);
			if ((rc = scalar(l, f, json_array_get(range, 1), &c->arg)))
				return rc;
			iour__pf_pop(l);
			iour__pf_pop(l);
		} else {
			json_t *e;

			iour__pf_push_key(l, "values");
			if (iour__pf_want_array(l, vals, "a set of values"))
				return -EBADMSG;
			if (json_array_size(vals) == 0)
				return iour__pf_fail(l, "a set needs at least one value");
			*set = iour__calloc(json_array_size(vals), sizeof(uint64_t));
			if (!*set)
				return -ENOMEM;
			json_array_foreach(vals, i, e)
			{
				iour__pf_push_idx(l, i);
				if ((rc = scalar(l, f, e, &(*set)[i])))
					return rc;
				iour__pf_pop(l);
			}
			c->set = *set;
			c->set_len = json_array_size(vals);
			iour__pf_pop(l);
		}
		return 0;
	}
	if (vals || range)
		return iour__pf_fail(l,
				     "\"values\" and \"range\" go with \"in\" and \"not in\" only");
	if (!v)
		return iour__pf_fail(l, "operator \"%s\" needs \"value\"", opname);
	if ((mask != NULL) != (c->op == IOUR_CMP_MASKED_EQ))
		return iour__pf_fail(l, mask ? "\"mask\" goes with \"&==\" only" :
					       "\"&==\" needs \"mask\" (FIELD & mask == value)");
	if (mask) {
		iour__pf_push_key(l, "mask");
		if ((rc = scalar(l, f, mask, &c->arg)))
			return rc;
		iour__pf_pop(l);
	}
	iour__pf_push_key(l, "value");
	if (f->kind == IOUR_FIELD_KIND_ADDR6) {
		if (!json_is_string(v) || inet_pton(AF_INET6, json_string_value(v), c->addr6) != 1)
			return iour__pf_fail(l, "expected an IPv6 address");
	} else if ((rc = scalar(l, f, v, &c->value))) {
		return rc;
	}
	iour__pf_pop(l);
	return 0;
}

static const char *field_of(uint32_t field)
{
	size_t i;

	for (i = 0; i < IOUR_ARRAY_SIZE(fields); i++)
		if (fields[i].field == field)
			return fields[i].name;
	return "?";
}

/* The symbolic name saving writes for a value of a field that is not a
 * bit set (policyfile_save.c), or NULL. */
const char *iour__pf_const_name(uint32_t field, uint64_t v)
{
	const struct fdef *f = NULL;
	size_t i;

	for (i = 0; i < IOUR_ARRAY_SIZE(fields); i++)
		if (fields[i].field == field)
			f = &fields[i];
	if (!f || f->kind != V_NUM || !f->ns)
		return NULL;
	for (i = 0; i < IOUR_ARRAY_SIZE(constants); i++)
		if (constants[i].value == v && in_ns(constants[i].name, f->ns) &&
		    (field != IOUR_FIELD_OPEN_ACCMODE || v <= 3) &&
		    strcmp(constants[i].name, "O_NDELAY") != 0 &&
		    strcmp(constants[i].name, "AF_LOCAL") != 0)
			return constants[i].name;
	return NULL;
}

/* The message of an error iour_filter__add_rule() returned. */
static int rule_error(struct ld *l, int rc, uint32_t op)
{
	switch (rc) {
	case -EDOM:
		return iour__pf_fail(l, "a field of this condition does not exist for opcode %s",
				     iour_opcode_name(op) ? iour_opcode_name(op) : "(unknown)");
	case -ERANGE:
		return iour__pf_fail(l, "a value is out of the field's range");
	case -EOPNOTSUPP:
		return iour__pf_fail(l, "the operator does not apply to the field");
	case -E2BIG:
		return iour__pf_fail(l,
				     "too many conditions or set values (at most %d conditions, %d "
				     "values)",
				     IOUR_FILTER_MAX_CMPS, IOUR_FILTER_MAX_SET);
	case -ENOMEM:
		return -ENOMEM;
	default:
		return iour__pf_fail(l, "invalid condition (%s)", iour_strerror_desc(rc));
	}
}

/* Why the filter refused a condition with -EINVAL, in the rule front
 * end's words (lib/rules/rules.c), and the key it is about; NULL when the
 * condition shows no such reason. */
static const char *einval_reason(const struct iour_cmp *c, const char **key)
{
	const char *why = iour__rule_einval_reason(c);

	*key = "value";
	if (why && (c->op == IOUR_CMP_IN_RANGE || c->op == IOUR_CMP_NOT_IN_RANGE))
		*key = "range";
	else if (why && c->op == IOUR_CMP_MASKED_EQ && !c->arg)
		*key = "mask";
	return why;
}

/* Checks one condition against every opcode of its entry, so that an
 * error names the condition (and, for a range error, its value). */
static int check_cond(struct ld *l, const bool *ops, const struct iour_cmp *c)
{
	struct iour_filter *f;
	const char *key;
	uint32_t op;
	int rc = 0;

	if (iour_filter__new(NULL, &f))
		return -ENOMEM;
	for (op = 0; op < IOUR__NOPCODES && !rc; op++) {
		if (!ops[op])
			continue;
		rc = iour_filter__add_rule(f, op, IOUR_ALLOW, c, 1);
		if (rc == -ERANGE) {
			iour__pf_push_key(
				l, c->op == IOUR_CMP_IN_SET || c->op == IOUR_CMP_NOT_IN_SET ?
					   "values" :
				   c->op == IOUR_CMP_IN_RANGE || c->op == IOUR_CMP_NOT_IN_RANGE ?
					   "range" :
					   "value");
			rc = iour__pf_fail(l, "value out of range for %s (at most 0x%llx)",
					   field_of(c->field),
					   (unsigned long long)iour__field_valid_bits(c->field));
		} else if (rc == -EINVAL && einval_reason(c, &key)) {
			iour__pf_push_key(l, key);
			rc = iour__pf_fail(l, "%s", einval_reason(c, &key));
		} else if (rc == -EDOM) {
			iour__pf_push_key(l, "field");
			rc = iour__pf_fail(
				l, "field %s does not exist for opcode %s", field_of(c->field),
				iour_opcode_name(op) ? iour_opcode_name(op) : "(unknown)");
		} else if (rc) {
			rc = rule_error(l, rc, op);
		}
	}
	iour_filter__free(f);
	return rc;
}

/* ---- entries ----------------------------------------------------------------- */

static const char *const entry_keys[] = { "comment", "names", "action", "args", "minKernel", NULL };

static int kernel_now(uint32_t *out)
{
	struct utsname u;
	const char *q;
	long maj, min = -1;

	if (uname(&u))
		return -EINVAL;
	q = u.release;
	maj = dec(&q, 255);
	if (maj >= 0 && *q == '.') {
		q++;
		min = dec(&q, 255);
	}
	if (maj < 0 || min < 0)
		return -EINVAL;
	*out = IOUR_KVER((uint32_t)maj, (uint32_t)min);
	return 0;
}

int iour__pf_parse_entry(struct ld *l, json_t *o, struct iour_filter *f)
{
	static const char *const verdicts[] = { "deny", "allow" };
	struct iour_cmp cmps[IOUR_FILTER_MAX_CMPS];
	uint64_t *sets[IOUR_FILTER_MAX_CMPS] = { 0 };
	bool ops[IOUR__NOPCODES] = { 0 };
	uint32_t verdict = 0, op, mink = 0;
	size_t n = 0, i;
	json_t *v, *args;
	int rc;

	if (!json_is_object(o))
		return iour__pf_fail(l, "expected an entry (an object), found %s",
				     iour__pf_type_name(o));
	rc = iour__pf_check_keys(l, o, "an entry", entry_keys);
	if (rc)
		return rc;
	if ((v = json_object_get(o, "minKernel"))) {
		iour__pf_push_key(l, "minKernel");
		if ((rc = iour__pf_parse_kver(l, v, &mink)))
			return rc;
		iour__pf_pop(l);
		if (!l->kernel && kernel_now(&l->kernel))
			return iour__pf_fail(
				l, "cannot read the running kernel's version for minKernel");
		if (l->kernel < mink)
			return 0;
	}
	if (!(v = json_object_get(o, "names")))
		return iour__pf_fail(l, "an entry needs \"names\"");
	iour__pf_push_key(l, "names");
	if ((rc = iour__pf_op_list(l, v, "a list of opcode names", ops, false)))
		return rc;
	/* An entry that names nothing does nothing: most likely a mistake
	 * (a list emptied by an edit), so refuse it rather than ignore it. */
	if (json_array_size(v) == 0)
		return iour__pf_fail(l,
				     "an entry must name at least one opcode (\"names\" is empty)");
	iour__pf_pop(l);
	if (!(v = json_object_get(o, "action")))
		return iour__pf_fail(l, "an entry needs \"action\"");
	iour__pf_push_key(l, "action");
	if ((rc = iour__pf_parse_enum(l, v, "action", verdicts, 2, &verdict)))
		return rc;
	iour__pf_pop(l);
	args = json_object_get(o, "args");
	if (args) {
		iour__pf_push_key(l, "args");
		if (iour__pf_want_array(l, args, "a list of conditions"))
			return -EBADMSG;
		if (json_array_size(args) > IOUR_FILTER_MAX_CMPS)
			return iour__pf_fail(l, "at most %d conditions per entry",
					     IOUR_FILTER_MAX_CMPS);
		json_array_foreach(args, i, v)
		{
			iour__pf_push_idx(l, i);
			rc = parse_cond(l, v, &cmps[i], &sets[i]);
			n = i + 1;
			if (!rc)
				rc = check_cond(l, ops, &cmps[i]);
			if (rc)
				goto out;
			iour__pf_pop(l);
		}
		iour__pf_pop(l);
	}
	for (op = 0; op < IOUR__NOPCODES; op++) {
		if (!ops[op])
			continue;
		rc = iour_filter__add_rule(f, op, verdict, cmps, n);
		if (rc) {
			if (args)
				iour__pf_push_key(l, "args");
			rc = rule_error(l, rc, op);
			goto out;
		}
	}
	rc = 0;
out:
	for (i = 0; i < n; i++)
		iour__free(sets[i]);
	return rc;
}
