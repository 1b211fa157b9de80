/* SPDX-License-Identifier: MIT */
/*
 * Policy files: JSON text <-> struct iour_policy (doc/policy-files.md),
 * and iour_policy__decide().  The JSON is parsed and written by jansson;
 * this file only maps values to the policy API.  Semantic errors carry the
 * JSON path of the offending value; locate() finds that path again in the
 * text, which jansson has already accepted, to give a line and column.
 */
#include <arpa/inet.h>
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

#include "internal.h"
#include "plan_internal.h"
#include "policyfile_internal.h"
#include "schema.h"
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

/* The fields, for both loading and saving: lib/schema.def. */
static const struct fdef fields[] = {
#define IOUR_SCHEMA_FIELD(name, id, group, kind, prefix) { (name), (id), V_##kind, (prefix) },
#include "schema.def"
};

struct cdef {
	const char *name;
	uint64_t value;
};

/* Constants by namespace prefix: lib/schema.def (the CLI reads the same).
 * The first name of a value is the one saving writes. */
static const struct cdef constants[] = {
#define IOUR_SCHEMA_CONST(name, value) { (name), (uint64_t)(value) },
#include "schema.def"
};

struct opdef {
	const char *name;
	uint32_t op;
};

/* Operators as the rule language (doc/cli.md) writes them, plus names for
 * the bit tests it spells with '&'. */
static const struct opdef opnames[] = {
	{ "==", IOUR_CMP_EQ },
	{ "!=", IOUR_CMP_NE },
	{ "<", IOUR_CMP_LT },
	{ "<=", IOUR_CMP_LE },
	{ ">", IOUR_CMP_GT },
	{ ">=", IOUR_CMP_GE },
	{ "&==", IOUR_CMP_MASKED_EQ },
	{ "&=", IOUR_CMP_ANY_BITS },
	{ "all-bits", IOUR_CMP_ALL_BITS },
	{ "none-bits", IOUR_CMP_NONE_BITS },
	{ "in", IOUR_CMP_IN_SET },
	{ "not in", IOUR_CMP_NOT_IN_SET },
	{ "any-bits", IOUR_CMP_ANY_BITS },
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

/* ---- the loader's state and errors ---------------------------------------- */

#define MAX_DEPTH 8

struct step {
	const char *key; /* NULL: an array index */
	size_t index;
};

struct ld {
	const char *text;
	size_t len;
	uint32_t kernel; /* for minKernel; 0 until needed */
	uint32_t asof;   /* groupsAsOf, 0 = every member */
	uint32_t dflt;   /* defaultAction */
	struct step path[MAX_DEPTH];
	int depth;
	bool at_key; /* the error is about the last key, not its value */
	struct iour_load_error *err;
	const char *origin;
};

static void push_key(struct ld *l, const char *key)
{
	if (l->depth < MAX_DEPTH)
		l->path[l->depth] = (struct step){ key, 0 };
	l->depth++;
}

static void push_idx(struct ld *l, size_t i)
{
	if (l->depth < MAX_DEPTH)
		l->path[l->depth] = (struct step){ NULL, i };
	l->depth++;
}

static void pop(struct ld *l)
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

static bool err_ok(const struct iour_load_error *e)
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
static int fail(struct ld *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(struct ld *l, const char *fmt, ...)
{
	va_list ap;

	if (!err_ok(l->err))
		return -EBADMSG;
	fill_pos(l->err, l->text, l->len, locate(l->text, l->len, l->path, l->depth, l->at_key));
	path_str(l, l->err->path, sizeof(l->err->path));
	va_start(ap, fmt);
	vsnprintf(l->err->message, sizeof(l->err->message), fmt, ap);
	va_end(ap);
	return -EBADMSG;
}

/* ---- small value parsers --------------------------------------------------- */

static const char *type_name(const json_t *v)
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
static int check_keys(struct ld *l, json_t *o, const char *what, const char *const *keys)
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
		push_key(l, k);
		l->at_key = true;
		return fail(l, "unknown key '%s' in %s (expected one of: %s)", k, what, list);
	}
	return 0;
}

static int want_string(struct ld *l, json_t *v, const char *what, const char **out)
{
	if (!json_is_string(v))
		return fail(l, "expected %s (a string), found %s", what, type_name(v));
	*out = json_string_value(v);
	return 0;
}

static int want_array(struct ld *l, json_t *v, const char *what)
{
	if (!json_is_array(v))
		return fail(l, "expected %s (an array), found %s", what, type_name(v));
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
static int parse_kver(struct ld *l, json_t *v, uint32_t *out)
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
		return fail(l, "expected a kernel version \"X.Y\" (such as \"6.1\"), found \"%s\"",
			    s);
	*out = IOUR_KVER((uint32_t)maj, (uint32_t)min);
	return 0;
}

static int parse_enum(struct ld *l, json_t *v, const char *what, const char *const *names, size_t n,
		      uint32_t *out)
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
	return fail(l, "unknown %s \"%s\" (expected one of: %s)", what, s, list);
}

/* ---- names of opcodes ------------------------------------------------------- */

/* Adds a request opcode name, number or @group to ops[]. */
static int add_op_name(struct ld *l, json_t *v, bool *ops, bool reg)
{
	const char *s;
	uint32_t buf[IOUR__NOPCODES];
	int r, i, n;

	if (json_is_integer(v)) {
		json_int_t x = json_integer_value(v);

		if (x < 0 || x > (reg ? 255 : 255))
			return fail(l, "%s opcode %lld is out of range (0 to 255)",
				    reg ? "register" : "request", (long long)x);
		ops[x] = true;
		return 0;
	}
	if (!json_is_string(v))
		return fail(l, "expected an opcode name, number or @group, found %s", type_name(v));
	s = json_string_value(v);
	if (s[0] == '@') {
		r = iour_group_find(s);
		if (r < 0)
			return fail(l, "unknown group \"%s\" (iour-restrict groups lists them)", s);
		n = reg ? iour_group_register_ops((size_t)r, l->asof, buf, IOUR__NOPCODES) :
			  iour_group_opcodes((size_t)r, l->asof, buf, IOUR__NOPCODES);
		if (n < 0)
			return fail(l, "group \"%s\": %s", s, iour_strerror_desc(n));
		if (n == 0 && (reg ? iour_group_opcodes((size_t)r, 0, NULL, 0) :
				     iour_group_register_ops((size_t)r, 0, NULL, 0)) > 0)
			return fail(l, "group \"%s\" has no %s opcodes (use it in %s)", s,
				    reg ? "register" : "request", reg ? "entries" : "registerOps");
		for (i = 0; i < n; i++)
			ops[buf[i]] = true;
		return 0;
	}
	r = reg ? iour_register_op_from_name(s) : iour_opcode_from_name(s);
	if (r < 0) {
		const char *near =
			iour_name_suggest(reg ? IOUR_NAME_REGISTER_OP : IOUR_NAME_OPCODE, s);

		return fail(l, "unknown %s opcode \"%s\"%s%s%s", reg ? "register" : "request", s,
			    near ? " (did you mean \"" : "", near ? near : "", near ? "\"?)" : "");
	}
	ops[r] = true;
	return 0;
}

static int op_list(struct ld *l, json_t *arr, const char *what, bool *ops, bool reg)
{
	size_t i;
	json_t *v;
	int rc;

	if (want_array(l, arr, what))
		return -EBADMSG;
	json_array_foreach(arr, i, v)
	{
		push_idx(l, i);
		rc = add_op_name(l, v, ops, reg);
		if (rc)
			return rc;
		pop(l);
	}
	return 0;
}

/* ---- values of fields -------------------------------------------------------- */

static const struct fdef *find_field(const char *name)
{
	size_t i;

	for (i = 0; i < IOUR_ARRAY_SIZE(fields); i++)
		if (!strcasecmp(name, fields[i].name))
			return &fields[i];
	return NULL;
}

static bool in_ns(const char *name, const char *ns)
{
	return !strncasecmp(name, ns, strlen(ns));
}

/* One word: a number or a constant of the field's namespace. */
static int word_value(struct ld *l, const struct fdef *f, const char *w, uint64_t *out)
{
	char *end;
	size_t i;
	int r;

	if (w[0] >= '0' && w[0] <= '9') {
		errno = 0;
		*out = strtoull(w, &end, 0);
		if (errno || *end)
			return fail(l, "\"%s\" is not a number", w);
		return 0;
	}
	if (!f->ns)
		return fail(l, "%s takes numbers only, found \"%s\"", f->name, w);
	if (!strcmp(f->ns, "IOSQE_")) {
		r = in_ns(w, "IOSQE_") ? iour_sqe_flag_from_name(w) : -EINVAL;
		if (r > 0) {
			*out = (uint64_t)r;
			return 0;
		}
	} else if (in_ns(w, f->ns)) {
		for (i = 0; i < IOUR_ARRAY_SIZE(constants); i++)
			if (!strcasecmp(w, constants[i].name)) {
				*out = constants[i].value;
				return 0;
			}
	}
	for (i = 0; i < IOUR_ARRAY_SIZE(constants); i++)
		if (!strcasecmp(w, constants[i].name))
			return fail(l,
				    "%s belongs to another field: %s takes %s* constants or "
				    "numbers",
				    w, f->name, f->ns);
	return fail(l, "unknown constant \"%s\" (%s takes %s* constants or numbers)", w, f->name,
		    f->ns);
}

/* A scalar value: a JSON integer, a number in a string, a constant, or
 * for bit fields "A|B". */
static int scalar(struct ld *l, const struct fdef *f, json_t *v, uint64_t *out)
{
	char buf[256], *p, *tok, *save = NULL;
	int rc;

	if (json_is_integer(v)) {
		if (json_integer_value(v) < 0)
			return fail(l, "%lld is negative: values are unsigned",
				    (long long)json_integer_value(v));
		*out = (uint64_t)json_integer_value(v);
		return 0;
	}
	if (!json_is_string(v))
		return fail(l, "expected a number or a constant for %s, found %s", f->name,
			    type_name(v));
	if (f->kind == V_ADDR4) {
		struct in_addr a;

		if (inet_pton(AF_INET, json_string_value(v), &a) != 1)
			return fail(l, "expected an IPv4 address a.b.c.d, found \"%s\"",
				    json_string_value(v));
		*out = ntohl(a.s_addr);
		return 0;
	}
	if (json_string_length(v) >= sizeof(buf))
		return fail(l, "value too long");
	memcpy(buf, json_string_value(v), json_string_length(v) + 1);
	if (f->kind != V_BITS && strchr(buf, '|'))
		return fail(l, "'|' joins bit flags only; %s is not a bit field (use \"in\")",
			    f->name);
	*out = 0;
	for (p = buf; (tok = strtok_r(p, "|", &save)); p = NULL) {
		uint64_t x = 0;

		while (*tok == ' ')
			tok++;
		for (char *e = tok + strlen(tok); e > tok && e[-1] == ' ';)
			*--e = '\0';
		rc = word_value(l, f, tok, &x);
		if (rc)
			return rc;
		*out |= x;
	}
	return 0;
}

/* "a.b.c.d/n" or "x::y/n" (prefix); without "/n", a full-length prefix. */
static int prefix_value(struct ld *l, const struct fdef *f, json_t *v, struct iour_cmp *c)
{
	char buf[INET6_ADDRSTRLEN + 8], *slash;
	unsigned len, max = f->kind == V_ADDR4 ? 32 : 128;

	if (!json_is_string(v) || json_string_length(v) >= sizeof(buf))
		return fail(l, "expected an address prefix such as \"%s\"",
			    f->kind == V_ADDR4 ? "10.0.0.0/8" : "fe80::/10");
	memcpy(buf, json_string_value(v), json_string_length(v) + 1);
	slash = strchr(buf, '/');
	len = max;
	if (slash) {
		const char *q = slash + 1;
		long x = dec(&q, max);

		*slash = '\0';
		if (x < 0 || *q)
			return fail(l, "prefix length \"%s\" out of range (0 to %u)", slash + 1,
				    max);
		len = (unsigned)x;
	}
	if (f->kind == V_ADDR4) {
		struct in_addr a;

		if (inet_pton(AF_INET, buf, &a) != 1)
			return fail(l, "expected an IPv4 address a.b.c.d, found \"%s\"", buf);
		c->value = ntohl(a.s_addr);
	} else if (inet_pton(AF_INET6, buf, c->addr6) != 1) {
		return fail(l, "expected an IPv6 address, found \"%s\"", buf);
	}
	c->arg = len;
	return 0;
}

/* ---- one condition ----------------------------------------------------------- */

static const char *const cond_keys[] = { "comment", "field", "op",   "value",
					 "values",  "range", "mask", NULL };

/* Parses args[i] into c (set memory in *set, owned by the caller). */
static int parse_cond(struct ld *l, json_t *o, struct iour_cmp *c, uint64_t **set)
{
	const struct fdef *f;
	const char *fname = "", *opname = "";
	json_t *v, *vals, *range, *mask;
	size_t i;
	int rc;

	memset(c, 0, sizeof(*c));
	c->sz = sizeof(*c);
	if (!json_is_object(o))
		return fail(l, "expected a condition (an object), found %s", type_name(o));
	rc = check_keys(l, o, "a condition", cond_keys);
	if (rc)
		return rc;
	push_key(l, "field");
	if (!json_object_get(o, "field"))
		return pop(l), fail(l, "a condition needs \"field\"");
	if (want_string(l, json_object_get(o, "field"), "a field name", &fname))
		return -EBADMSG;
	f = find_field(fname);
	if (!f)
		return fail(l,
			    "unknown field \"%s\" (fields: user_data, sqe_flags, socket.family, "
			    "socket.type, socket.type_flags, socket.type_raw, socket.protocol, "
			    "open.flags, open.accmode, open.mode, open.resolve, connect.family, "
			    "connect.port, connect.addr4, connect.addr6)",
			    fname);
	pop(l);
	c->field = f->field;
	if (!json_object_get(o, "op"))
		return fail(l, "a condition needs \"op\"");
	push_key(l, "op");
	if (want_string(l, json_object_get(o, "op"), "an operator", &opname))
		return -EBADMSG;
	for (i = 0; i < IOUR_ARRAY_SIZE(opnames); i++)
		if (!strcasecmp(opname, opnames[i].name))
			break;
	if (i == IOUR_ARRAY_SIZE(opnames))
		return fail(l,
			    "unknown operator \"%s\" (expected ==, !=, <, <=, >, >=, &=, &==, "
			    "all-bits, none-bits, in, not in)",
			    opname);
	c->op = opnames[i].op;
	pop(l);
	v = json_object_get(o, "value");
	vals = json_object_get(o, "values");
	range = json_object_get(o, "range");
	mask = json_object_get(o, "mask");
	if (c->op == IOUR_CMP_IN_SET || c->op == IOUR_CMP_NOT_IN_SET) {
		bool neg = c->op == IOUR_CMP_NOT_IN_SET;

		if (!!v + !!vals + !!range != 1 || mask)
			return fail(l,
				    "\"%s\" takes exactly one of \"values\" (a set), \"range\" "
				    "([low, high]) or \"value\" (an address prefix)",
				    opname);
		if (v) {
			if (f->kind != V_ADDR4 && f->kind != V_ADDR6)
				return push_key(l, "value"),
				       fail(l,
					    "\"value\" with \"%s\" is an address prefix; %s is "
					    "not an address (use \"values\" or \"range\")",
					    opname, f->name);
			c->op = neg ? IOUR_CMP_NOT_IN_PREFIX : IOUR_CMP_IN_PREFIX;
			push_key(l, "value");
			rc = prefix_value(l, f, v, c);
			if (rc)
				return rc;
			pop(l);
		} else if (range) {
			push_key(l, "range");
			if (!json_is_array(range) || json_array_size(range) != 2)
				return fail(l, "expected a range [low, high]");
			c->op = neg ? IOUR_CMP_NOT_IN_RANGE : IOUR_CMP_IN_RANGE;
			push_idx(l, 0);
			if ((rc = scalar(l, f, json_array_get(range, 0), &c->value)))
				return rc;
			pop(l);
			push_idx(l, 1);
			if ((rc = scalar(l, f, json_array_get(range, 1), &c->arg)))
				return rc;
			pop(l);
			pop(l);
		} else {
			json_t *e;

			push_key(l, "values");
			if (want_array(l, vals, "a set of values"))
				return -EBADMSG;
			if (json_array_size(vals) == 0)
				return fail(l, "a set needs at least one value");
			*set = iour__calloc(json_array_size(vals), sizeof(uint64_t));
			if (!*set)
				return -ENOMEM;
			json_array_foreach(vals, i, e)
			{
				push_idx(l, i);
				if ((rc = scalar(l, f, e, &(*set)[i])))
					return rc;
				pop(l);
			}
			c->set = *set;
			c->set_len = json_array_size(vals);
			pop(l);
		}
		return 0;
	}
	if (vals || range)
		return fail(l, "\"values\" and \"range\" go with \"in\" and \"not in\" only");
	if (!v)
		return fail(l, "operator \"%s\" needs \"value\"", opname);
	if ((mask != NULL) != (c->op == IOUR_CMP_MASKED_EQ))
		return fail(l, mask ? "\"mask\" goes with \"&==\" only" :
				      "\"&==\" needs \"mask\" (FIELD & mask == value)");
	if (mask) {
		push_key(l, "mask");
		if ((rc = scalar(l, f, mask, &c->arg)))
			return rc;
		pop(l);
	}
	push_key(l, "value");
	if (f->kind == V_ADDR6) {
		if (!json_is_string(v) || inet_pton(AF_INET6, json_string_value(v), c->addr6) != 1)
			return fail(l, "expected an IPv6 address");
	} else if ((rc = scalar(l, f, v, &c->value))) {
		return rc;
	}
	pop(l);
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
		return fail(l, "a field of this condition does not exist for opcode %s",
			    iour_opcode_name(op) ? iour_opcode_name(op) : "(unknown)");
	case -ERANGE:
		return fail(l, "a value is out of the field's range");
	case -EOPNOTSUPP:
		return fail(l, "the operator does not apply to the field");
	case -E2BIG:
		return fail(l,
			    "too many conditions or set values (at most %d conditions, %d "
			    "values)",
			    IOUR_FILTER_MAX_CMPS, IOUR_FILTER_MAX_SET);
	case -ENOMEM:
		return -ENOMEM;
	default:
		return fail(l, "invalid condition (%s)", iour_strerror_desc(rc));
	}
}

/* Why the filter refused a condition with -EINVAL, in the words the CLI's
 * rule language uses (tools/cli/expr.c), and the key it is about; NULL
 * when the condition shows no such reason. */
static const char *einval_reason(const struct iour_cmp *c, const char **key)
{
	*key = "value";
	if ((c->op == IOUR_CMP_IN_RANGE || c->op == IOUR_CMP_NOT_IN_RANGE) && c->value > c->arg) {
		*key = "range";
		return "the range's low end is above its high end";
	}
	if (c->op == IOUR_CMP_MASKED_EQ && !c->arg) {
		*key = "mask";
		return "the mask is 0";
	}
	if (c->op == IOUR_CMP_MASKED_EQ && (c->value & ~c->arg))
		return "the value has bits outside the mask, so it can never match";
	if (c->op == IOUR_CMP_ANY_BITS && !c->value)
		return "'&= 0' tests no bit";
	return NULL;
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
			push_key(l, c->op == IOUR_CMP_IN_SET || c->op == IOUR_CMP_NOT_IN_SET ?
					    "values" :
				    c->op == IOUR_CMP_IN_RANGE || c->op == IOUR_CMP_NOT_IN_RANGE ?
					    "range" :
					    "value");
			rc = fail(l, "value out of range for %s (at most 0x%llx)",
				  field_of(c->field),
				  (unsigned long long)iour__field_valid_bits(c->field));
		} else if (rc == -EINVAL && einval_reason(c, &key)) {
			push_key(l, key);
			rc = fail(l, "%s", einval_reason(c, &key));
		} else if (rc == -EDOM) {
			push_key(l, "field");
			rc = fail(l, "field %s does not exist for opcode %s", field_of(c->field),
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

static int parse_entry(struct ld *l, json_t *o, struct iour_filter *f)
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
		return fail(l, "expected an entry (an object), found %s", type_name(o));
	rc = check_keys(l, o, "an entry", entry_keys);
	if (rc)
		return rc;
	if ((v = json_object_get(o, "minKernel"))) {
		push_key(l, "minKernel");
		if ((rc = parse_kver(l, v, &mink)))
			return rc;
		pop(l);
		if (!l->kernel && kernel_now(&l->kernel))
			return fail(l, "cannot read the running kernel's version for minKernel");
		if (l->kernel < mink)
			return 0;
	}
	if (!(v = json_object_get(o, "names")))
		return fail(l, "an entry needs \"names\"");
	push_key(l, "names");
	if ((rc = op_list(l, v, "a list of opcode names", ops, false)))
		return rc;
	/* An entry that names nothing does nothing: most likely a mistake
	 * (a list emptied by an edit), so refuse it rather than ignore it. */
	if (json_array_size(v) == 0)
		return fail(l, "an entry must name at least one opcode (\"names\" is empty)");
	pop(l);
	if (!(v = json_object_get(o, "action")))
		return fail(l, "an entry needs \"action\"");
	push_key(l, "action");
	if ((rc = parse_enum(l, v, "action", verdicts, 2, &verdict)))
		return rc;
	pop(l);
	args = json_object_get(o, "args");
	if (args) {
		push_key(l, "args");
		if (want_array(l, args, "a list of conditions"))
			return -EBADMSG;
		if (json_array_size(args) > IOUR_FILTER_MAX_CMPS)
			return fail(l, "at most %d conditions per entry", IOUR_FILTER_MAX_CMPS);
		json_array_foreach(args, i, v)
		{
			push_idx(l, i);
			rc = parse_cond(l, v, &cmps[i], &sets[i]);
			n = i + 1;
			if (!rc)
				rc = check_cond(l, ops, &cmps[i]);
			if (rc)
				goto out;
			pop(l);
		}
		pop(l);
	}
	for (op = 0; op < IOUR__NOPCODES; op++) {
		if (!ops[op])
			continue;
		rc = iour_filter__add_rule(f, op, verdict, cmps, n);
		if (rc) {
			if (args)
				push_key(l, "args");
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

/* ---- classic part and programs ---------------------------------------------- */

static int sqe_flag_list(struct ld *l, json_t *arr, uint32_t *mask)
{
	size_t i;
	json_t *v;
	int r;

	if (want_array(l, arr, "a list of SQE flag names"))
		return -EBADMSG;
	json_array_foreach(arr, i, v)
	{
		push_idx(l, i);
		if (!json_is_string(v))
			return fail(l, "expected an SQE flag name, found %s", type_name(v));
		r = iour_sqe_flag_from_name(json_string_value(v));
		if (r <= 0) {
			const char *near =
				iour_name_suggest(IOUR_NAME_SQE_FLAG, json_string_value(v));

			return fail(l, "unknown SQE flag \"%s\"%s%s%s", json_string_value(v),
				    near ? " (did you mean \"" : "", near ? near : "",
				    near ? "\"?)" : "");
		}
		*mask |= (uint32_t)r;
		pop(l);
	}
	return 0;
}

static const char *const sqe_keys[] = { "comment", "allowed", "required", NULL };

static int parse_classic(struct ld *l, json_t *root, struct iour_ruleset **out)
{
	json_t *req = json_object_get(root, "requestOps");
	json_t *reg = json_object_get(root, "registerOps");
	json_t *sqe = json_object_get(root, "sqeFlags");
	bool ops[IOUR__NOPCODES];
	struct iour_ruleset *rs;
	uint32_t op;
	int rc;

	*out = NULL;
	/* defaultAction "allow": what is not listed is not restricted.
	 * "deny" (the default) denies what is not listed: no registerOps is
	 * an empty list, no sqeFlags allows no flag (doc/policy-files.md). */
	if (!req && !reg && !sqe && l->dflt == IOUR_POLICY_DEFAULT_ALLOW)
		return 0;
	if (iour_ruleset__new(NULL, &rs))
		return -ENOMEM;
	*out = rs;
	if (l->dflt != IOUR_POLICY_DEFAULT_ALLOW) {
		if (!reg && iour_ruleset__deny_all_register_ops(rs))
			return -ENOMEM;
		if (!sqe && iour_ruleset__set_sqe_flags(rs, 0, 0))
			return -ENOMEM;
	}
	if (req) {
		memset(ops, 0, sizeof(ops));
		push_key(l, "requestOps");
		if ((rc = op_list(l, req, "a list of request opcodes", ops, false)))
			return rc;
		if (iour_ruleset__deny_all_sqe_ops(rs))
			return -ENOMEM;
		for (op = 0; op < IOUR__NOPCODES; op++)
			if (ops[op] && (rc = iour_ruleset__allow_sqe_op(rs, op)))
				return rc == -ENOMEM ? rc :
						       fail(l,
							    "request opcode %u is not known to "
							    "this library's classic part",
							    op);
		pop(l);
	}
	if (reg) {
		memset(ops, 0, sizeof(ops));
		push_key(l, "registerOps");
		if ((rc = op_list(l, reg, "a list of register opcodes", ops, true)))
			return rc;
		if (iour_ruleset__deny_all_register_ops(rs))
			return -ENOMEM;
		for (op = 0; op < IOUR__NOPCODES; op++)
			if (ops[op] && (rc = iour_ruleset__allow_register_op(rs, op)))
				return rc == -ENOMEM ? rc :
						       fail(l,
							    "register opcode %u is not known to "
							    "this library's classic part",
							    op);
		pop(l);
	}
	if (sqe) {
		uint32_t allowed = 0, required = 0;
		json_t *v;

		push_key(l, "sqeFlags");
		if (!json_is_object(sqe))
			return fail(l,
				    "expected an object {\"allowed\": [...], \"required\": "
				    "[...]}, found %s",
				    type_name(sqe));
		if ((rc = check_keys(l, sqe, "sqeFlags", sqe_keys)))
			return rc;
		if ((v = json_object_get(sqe, "allowed"))) {
			push_key(l, "allowed");
			if ((rc = sqe_flag_list(l, v, &allowed)))
				return rc;
			pop(l);
		} else {
			allowed = IOUR_SQE__VALID;
		}
		if ((v = json_object_get(sqe, "required"))) {
			push_key(l, "required");
			if ((rc = sqe_flag_list(l, v, &required)))
				return rc;
			pop(l);
		}
		if (iour_ruleset__set_sqe_flags(rs, allowed, required))
			return fail(l, "invalid SQE flags");
		pop(l);
	}
	return 0;
}

static const char *const prog_keys[] = { "comment", "name", "pduSize", "insns", NULL };

static int parse_programs(struct ld *l, json_t *arr, struct iour_policy *p)
{
	struct iour_insn *insns = NULL;
	bool ops[IOUR__NOPCODES];
	size_t i, j;
	json_t *o, *v;
	int rc = 0;

	push_key(l, "programs");
	if (want_array(l, arr, "a list of programs"))
		return -EBADMSG;
	json_array_foreach(arr, i, o)
	{
		uint32_t op = 0, pdu = 0;
		json_t *in;

		push_idx(l, i);
		if (!json_is_object(o))
			return fail(l, "expected a program (an object), found %s", type_name(o));
		if ((rc = check_keys(l, o, "a program", prog_keys)))
			return rc;
		memset(ops, 0, sizeof(ops));
		if (!(v = json_object_get(o, "name")))
			return fail(l, "a program needs \"name\" (its request opcode)");
		push_key(l, "name");
		if (json_is_string(v) && json_string_value(v)[0] == '@')
			return fail(l, "a program is for one opcode, not a group");
		if ((rc = add_op_name(l, v, ops, false)))
			return rc;
		while (!ops[op])
			op++;
		pop(l);
		if ((v = json_object_get(o, "pduSize"))) {
			push_key(l, "pduSize");
			if (!json_is_integer(v) || json_integer_value(v) < 0 ||
			    json_integer_value(v) > 24)
				return fail(l, "expected a payload size 0 to 24");
			pdu = (uint32_t)json_integer_value(v);
			pop(l);
		}
		if (!(in = json_object_get(o, "insns")))
			return fail(l, "a program needs \"insns\"");
		push_key(l, "insns");
		if (want_array(l, in, "a list of instructions [code, jt, jf, k]"))
			return -EBADMSG;
		if (json_array_size(in) == 0 || json_array_size(in) > IOUR_MAX_INSNS)
			return fail(l, "a program has 1 to %d instructions", IOUR_MAX_INSNS);
		insns = iour__calloc(json_array_size(in), sizeof(*insns));
		if (!insns)
			return -ENOMEM;
		json_array_foreach(in, j, v)
		{
			static const json_int_t lim[4] = { 0xffff, 0xff, 0xff, 0xffffffff };
			json_int_t x[4];
			size_t k;

			push_idx(l, j);
			if (!json_is_array(v) || json_array_size(v) != 4) {
				rc = fail(l, "expected an instruction [code, jt, jf, k]");
				goto out;
			}
			for (k = 0; k < 4; k++) {
				json_t *e = json_array_get(v, k);

				x[k] = json_is_integer(e) ? json_integer_value(e) : -1;
				if (x[k] < 0 || x[k] > lim[k]) {
					push_idx(l, k);
					rc = fail(l, "expected an integer 0 to %lld",
						  (long long)lim[k]);
					goto out;
				}
			}
			insns[j] = (struct iour_insn){ (uint16_t)x[0], (uint8_t)x[1], (uint8_t)x[2],
						       (uint32_t)x[3] };
			pop(l);
		}
		rc = iour_policy__set_prog(p, op, insns, json_array_size(in), pdu);
		if (rc) {
			rc = rc == -ENOMEM ? rc :
					     fail(l,
						  "the kernel's checker would refuse this program "
						  "(%s)",
						  iour_strerror_desc(rc));
			goto out;
		}
		iour__free(insns);
		insns = NULL;
		pop(l);
		pop(l);
	}
	pop(l);
out:
	iour__free(insns);
	return rc;
}

/* ---- the document --------------------------------------------------------- */

static const char *const top_keys[] = {
	"comment",     "version",   "defaultAction",    "target",       "compat",     "noNewPrivs",
	"threads",     "companion", "noFilterFallback", "addr4Literal", "groupsAsOf", "requestOps",
	"registerOps", "sqeFlags",  "entries",          "programs",     NULL
};

static int load_doc(struct ld *l, json_t *root, struct iour_policy *p)
{
	struct iour_filter *f = NULL;
	struct iour_ruleset *rs = NULL;
	uint32_t a, val = 0;
	json_t *v;
	size_t i;
	char why[IOUR_LOAD_ERROR_MSG] = "";
	int rc;

	if (!json_is_object(root))
		return fail(l, "expected a policy (a JSON object), found %s", type_name(root));
	if ((rc = check_keys(l, root, "a policy", top_keys)))
		return rc;
	if ((v = json_object_get(root, "version"))) {
		push_key(l, "version");
		if (!json_is_integer(v) || json_integer_value(v) != 1)
			return fail(l, "unsupported version (this library reads version 1)");
		pop(l);
	}
	for (a = IOUR_POLICY_ATTR__MIN + 1; a < IOUR_POLICY_ATTR__MAX; a++) {
		if (!(v = json_object_get(root, iour__policy_attr_key[a])))
			continue;
		push_key(l, iour__policy_attr_key[a]);
		if ((rc = parse_enum(l, v, iour__policy_attr_key[a], iour__policy_attr_val[a],
				     IOUR__POLICY_ATTR_VALS, &val)))
			return rc;
		iour_policy__set_attr(p, a, val);
		pop(l);
	}
	iour_policy__get_attr(p, IOUR_POLICY_ATTR_DEFAULT, &l->dflt);
	if ((v = json_object_get(root, "groupsAsOf"))) {
		push_key(l, "groupsAsOf");
		if ((rc = parse_kver(l, v, &l->asof)))
			return rc;
		pop(l);
	}
	{
		IOUR_OPTS(iour_filter_opts, fo,
			  .default_verdict =
				  l->dflt == IOUR_POLICY_DEFAULT_ALLOW ? IOUR_ALLOW : IOUR_DENY);
		if ((v = json_object_get(root, "addr4Literal"))) {
			push_key(l, "addr4Literal");
			if (!json_is_boolean(v))
				return fail(l, "expected true or false, found %s", type_name(v));
			fo.flags = json_is_true(v) ? IOUR_FILTER_ADDR4_LITERAL : 0;
			pop(l);
		}
		if (iour_filter__new(&fo, &f))
			return -ENOMEM;
	}
	rc = parse_classic(l, root, &rs);
	if (rc)
		goto out;
	if ((v = json_object_get(root, "entries"))) {
		json_t *e;

		push_key(l, "entries");
		if (want_array(l, v, "a list of entries")) {
			rc = -EBADMSG;
			goto out;
		}
		json_array_foreach(v, i, e)
		{
			push_idx(l, i);
			if ((rc = parse_entry(l, e, f)))
				goto out;
			pop(l);
		}
		pop(l);
	}
	if ((rc = iour_policy__set_ruleset(p, rs)))
		goto out;
	rc = iour__policy_set_filter(p, f, why, sizeof(why));
	if (rc == -IOUR_ERRNO__PROG_TOO_LARGE) {
		l->depth = 0;
		push_key(l, "entries");
		if (why[0])
			fail(l, "%s", why);
		else
			fail(l, "the rules of an opcode need more than %d instructions",
			     IOUR_MAX_INSNS);
		goto out;
	}
	if (rc)
		goto out;
	if ((v = json_object_get(root, "programs")))
		rc = parse_programs(l, v, p);
out:
	iour_filter__free(f);
	iour_ruleset__free(rs);
	return rc;
}

static int init_err(struct iour_load_error *err)
{
	if (!err)
		return 0;
	if (!err_ok(err))
		return -EINVAL;
	err->line = 0;
	err->column = 0;
	if (IOUR_OUT_HAS(err, offset))
		err->offset = 0;
	err->path[0] = '\0';
	err->message[0] = '\0';
	return 0;
}

/* What kind of JSON error jansson found, in words that quote nothing of
 * the text. */
static const char *json_error_kind(const json_error_t *je)
{
	switch (json_error_code(je)) {
	case json_error_invalid_utf8:
		return "invalid UTF-8";
	case json_error_premature_end_of_input:
		return "unexpected end of input";
	case json_error_end_of_input_expected:
		return "text after the end of the JSON value";
	case json_error_null_character:
	case json_error_null_byte_in_key:
		return "a NUL character";
	case json_error_duplicate_key:
		return "a duplicate key";
	case json_error_numeric_overflow:
		return "a number out of range";
	case json_error_stack_overflow:
		return "nested too deeply";
	default:
		return "not valid JSON syntax";
	}
}

/* Documented in include/iouring_restrict/policyfile.h */
int iour_policy__load_json(const char *text, size_t len, const struct iour_policy_load_opts *opts,
			   struct iour_policy **out, struct iour_load_error *err)
{
	struct ld l = { .text = text, .len = len, .err = err };
	struct iour_policy *p = NULL;
	json_error_t je;
	json_t *root;
	int rc;

	if (!text || !out)
		return -EINVAL;
	rc = IOUR_OPTS_VALID(opts, iour_policy_load_opts);
	if (rc)
		return rc;
	if (IOUR_OPTS_GET(opts, flags, 0) != 0 || init_err(err))
		return -EINVAL;
	l.kernel = IOUR_OPTS_GET(opts, kernel, 0);
	l.origin = IOUR_OPTS_GET(opts, origin, NULL);
	root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
	if (!root) {
		if (json_error_code(&je) == json_error_out_of_memory)
			return -ENOMEM;
		if (err_ok(err)) {
			err->line = je.line > 0 ? (uint32_t)je.line : 1;
			err->column = je.column > 0 ? (uint32_t)je.column : 1;
			err->offset = (uint64_t)je.position;
			/* jansson's own text quotes the file ("near 'root'"): for a
			 * path that names a secret file that would put its contents
			 * in the error.  Position and kind only. */
			snprintf(err->message, sizeof(err->message),
				 "invalid JSON at line %d, column %d: %s",
				 je.line > 0 ? je.line : 1, je.column > 0 ? je.column : 1,
				 json_error_kind(&je));
		}
		return -EBADMSG;
	}
	rc = iour_policy__new(NULL, &p);
	if (!rc)
		rc = load_doc(&l, root, p);
	json_decref(root);
	if (rc) {
		if (rc == -ENOMEM && err_ok(err))
			snprintf(err->message, sizeof(err->message), "out of memory");
		iour_policy__free(p);
		return rc;
	}
	*out = p;
	return 0;
}

#define MAX_FILE (16U << 20)

/* Documented in include/iouring_restrict/policyfile.h */
int iour_policy__load_file(const char *path, const struct iour_policy_load_opts *opts,
			   struct iour_policy **out, struct iour_load_error *err)
{
	struct iour_policy_load_opts o = { .sz = sizeof(o) };
	size_t len = 0, cap = 4096;
	char *buf, *nb;
	ssize_t n;
	int fd, rc;

	if (!path || !out)
		return -EINVAL;
	rc = IOUR_OPTS_VALID(opts, iour_policy_load_opts);
	if (rc)
		return rc;
	if (init_err(err))
		return -EINVAL;
	o.flags = IOUR_OPTS_GET(opts, flags, 0);
	o.origin = IOUR_OPTS_GET(opts, origin, NULL);
	o.kernel = IOUR_OPTS_GET(opts, kernel, 0);
	if (!o.origin)
		o.origin = path;
	/* O_NONBLOCK: opening a FIFO must not wait for a writer (nor a device
	 * for its carrier); O_NOCTTY: a terminal never becomes ours.  Then
	 * only a regular file is read. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		rc = -errno;
		if (err_ok(err))
			snprintf(err->message, sizeof(err->message), "cannot open %s: %s", path,
				 strerror(-rc));
		return rc;
	}
	{
		struct stat st;

		if (fstat(fd, &st) < 0) {
			rc = -errno;
			close(fd);
			if (err_ok(err))
				snprintf(err->message, sizeof(err->message), "cannot read %s: %s",
					 path, strerror(-rc));
			return rc;
		}
		if (!S_ISREG(st.st_mode)) {
			rc = S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
			if (err_ok(err))
				snprintf(err->message, sizeof(err->message),
					 "cannot read %s: not a regular file (%s)", path,
					 S_ISDIR(st.st_mode)  ? "a directory" :
					 S_ISFIFO(st.st_mode) ? "a FIFO" :
					 S_ISCHR(st.st_mode)  ? "a character device" :
					 S_ISBLK(st.st_mode)  ? "a block device" :
					 S_ISSOCK(st.st_mode) ? "a socket" :
								"not a file");
			close(fd);
			return rc;
		}
	}
	buf = iour__malloc(cap);
	rc = buf ? 0 : -ENOMEM;
	while (!rc) {
		if (len == cap) {
			if (cap >= MAX_FILE) {
				rc = -EFBIG;
				break;
			}
			nb = iour__realloc(buf, cap * 2);
			if (!nb) {
				rc = -ENOMEM;
				break;
			}
			buf = nb;
			cap *= 2;
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			rc = -errno;
		else if (n == 0)
			break;
		else
			len += (size_t)n;
	}
	close(fd);
	if (!rc)
		rc = iour_policy__load_json(buf, len, &o, out, err);
	else if (err_ok(err))
		snprintf(err->message, sizeof(err->message), "cannot read %s: %s", path,
			 rc == -EFBIG ? "larger than 16 MiB" : strerror(-rc));
	iour__free(buf);
	return rc;
}
