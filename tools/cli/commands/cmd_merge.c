/* SPDX-License-Identifier: MIT */
/*
 * iour-restrict merge: the union of policy files (doc/cli.md, "merge"),
 * e.g. of what several `learn` runs recorded.
 *
 * The union allows a request when any input allows it, so it is only
 * written when that can be said exactly: every input loads (the library's
 * loader), all have defaultAction "deny", the same attributes (target,
 * compat, ...: a difference is refused, naming the key), and either all
 * or none have a classic part.  requestOps and registerOps are the union
 * of the lists (absent in one input: absent, as that input allows all);
 * sqeFlags.allowed the union and sqeFlags.required the intersection.
 * Entries are merged per opcode: an opcode one input allows outright is
 * allowed outright; an opcode with argument rules (args, minKernel, or
 * several entries) keeps them when every input that names it has the same
 * rules, and is refused otherwise (first-match rule lists have no general
 * union).  Groups in entries are expanded (up to groupsAsOf, if set).
 * Raw programs are refused unless identical.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "core/cli.h"
#include "learn/learn.h"

const char cli_help_merge[] =
	"Usage: iour-restrict merge -o OUT POLICY POLICY...\n"
	"\n"
	"Write the union of the policy files: what any of them allows, e.g. the\n"
	"policies of several `learn` runs.  requestOps, registerOps and\n"
	"sqeFlags.allowed are united (sqeFlags.required intersected); entries are\n"
	"united per opcode: an opcode any input allows outright is allowed; an\n"
	"opcode with argument rules keeps them when all inputs that name it have\n"
	"the same rules.  Refused, saying why: differing argument rules for one\n"
	"opcode, differing attributes (target, compat, ...), a defaultAction other\n"
	"than deny, a classic part in some inputs only, differing raw programs.\n"
	"The result is loaded back before it is written.\n"
	"\n"
	"Options:\n"
	"  -o, --output OUT  write the union to OUT (required; '-' for stdout);\n"
	"                    written as learn writes (a new file renamed over OUT)\n"
	"  -h, --help        show this help\n"
	"\n"
	"The union's comment keeps each input's comment (learn's counts, command\n"
	"and kernel), numbered, and so does its sqeFlags comment.  Options may\n"
	"follow the operands: merge a.json b.json -o out.json.\n"
	"\n"
	"Exit status: 0 written; 1 the inputs cannot be merged (why is on stderr)\n"
	"or OUT cannot be written; 2 usage error; 3 an input is not a valid policy.\n";

static const char *const attr_keys[] = { "defaultAction",    "target",       "compat",
					 "noNewPrivs",       "threads",      "companion",
					 "noFilterFallback", "addr4Literal", "groupsAsOf" };
#define NATTR (sizeof(attr_keys) / sizeof(attr_keys[0]))

struct input {
	const char *path;
	json_t *doc;
	bool classic;
	/* per opcode: 0 not named, 1 allowed outright, 2 rules */
	unsigned char kind[256];
	json_t *rules[256]; /* the entries naming it (names removed), kind 2 */
};

/* The opcodes of an entry's names; -1 (printed) on an unknown name. */
static int entry_ops(const struct input *in, json_t *names, uint32_t kver, bool *ops)
{
	size_t i;
	json_t *n;

	json_array_foreach(names, i, n)
	{
		const char *s = json_string_value(n);
		uint32_t g[256];
		int r;

		if (json_is_integer(n) && json_integer_value(n) >= 0 &&
		    json_integer_value(n) < 256) {
			ops[json_integer_value(n)] = true;
			continue;
		}
		if (s && s[0] == '@' && (r = iour_group_find(s)) >= 0) {
			int c = iour_group_opcodes((size_t)r, kver, g, 256);

			for (int k = 0; k < c; k++)
				ops[g[k] & 0xff] = true;
			continue;
		}
		if (s && (r = iour_opcode_from_name(s)) >= 0) {
			ops[r] = true;
			continue;
		}
		if (s && cli_parse_u64(s, &(uint64_t){ 0 }) == 0 && strtoul(s, NULL, 0) < 256) {
			ops[strtoul(s, NULL, 0)] = true;
			continue;
		}
		cli_msg("%s: entry name '%s' is not an opcode or group merge knows", in->path,
			s ? s : "?");
		return -1;
	}
	return 0;
}

/* Sorts the entries of @in per opcode; 0 or CLI_FAIL. */
static int index_entries(struct input *in, uint32_t kver)
{
	json_t *entries = json_object_get(in->doc, "entries"), *e;
	size_t i;

	json_array_foreach(entries, i, e)
	{
		bool ops[256] = { false };
		json_t *rule = json_deep_copy(e);

		json_object_del(rule, "names");
		json_object_del(rule, "comment");
		if (entry_ops(in, json_object_get(e, "names"), kver, ops)) {
			json_decref(rule);
			return CLI_FAIL;
		}
		for (int op = 0; op < 256; op++) {
			if (!ops[op])
				continue;
			if (!in->rules[op])
				in->rules[op] = json_array();
			json_array_append(in->rules[op], rule);
		}
		json_decref(rule);
	}
	for (int op = 0; op < 256; op++) {
		json_t *r = in->rules[op], *first;
		const char *act;

		if (!r)
			continue;
		first = json_array_get(r, 0);
		act = json_string_value(json_object_get(first, "action"));
		/* one unconditional entry: allowed or denied outright */
		if (json_array_size(r) == 1 && json_object_size(first) == 1 && act) {
			in->kind[op] = !strcmp(act, "allow") ? 1 : 0;
			if (!in->kind[op]) { /* deny outright = not named, under deny */
				json_decref(r);
				in->rules[op] = NULL;
			}
		} else {
			in->kind[op] = 2;
		}
	}
	return 0;
}

/* Appends the items of array @from not in @to (compared as text, case and
 * IORING_OP_/IOSQE_ prefixes aside: the loader's spelling rules). */
static const char *bare(const char *s)
{
	if (!strncasecmp(s, "IORING_OP_", 10))
		return s + 10;
	if (!strncasecmp(s, "IORING_REGISTER_", 16))
		return s + 16;
	if (!strncasecmp(s, "IOSQE_", 6))
		return s + 6;
	return s;
}

static bool has_item(json_t *a, json_t *x)
{
	size_t i;
	json_t *v;

	json_array_foreach(a, i, v)
	{
		if (json_equal(v, x))
			return true;
		if (json_is_string(v) && json_is_string(x) &&
		    !strcasecmp(bare(json_string_value(v)), bare(json_string_value(x))))
			return true;
	}
	return false;
}

static void unite(json_t *to, json_t *from)
{
	size_t i;
	json_t *v;

	json_array_foreach(from, i, v) if (!has_item(to, v)) json_array_append(to, v);
}

/* The classic part of the union into @out; 0 or CLI_FAIL. */
static int merge_classic(struct input *in, int n, json_t *out)
{
	static const char *const lists[] = { "requestOps", "registerOps" };
	json_t *req = NULL;
	bool allowed_all = false;

	for (int i = 1; i < n; i++) {
		if (in[i].classic != in[0].classic) {
			cli_msg("%s has a classic part (requestOps, registerOps or sqeFlags) and %s "
				"has none: their union cannot be written exactly; merge them by hand",
				in[in[i].classic ? i : 0].path, in[in[i].classic ? 0 : i].path);
			return CLI_FAIL;
		}
	}
	if (!in[0].classic)
		return 0;
	for (size_t l = 0; l < 2; l++) {
		json_t *u = json_array();
		bool all = true;

		for (int i = 0; i < n && all; i++) {
			json_t *a = json_object_get(in[i].doc, lists[l]);

			if (!a)
				all = false; /* that input allows every opcode of the kind */
			else
				unite(u, a);
		}
		if (all)
			json_object_set(out, lists[l], u);
		json_decref(u);
	}
	for (int i = 0; i < n; i++) {
		json_t *s = json_object_get(in[i].doc, "sqeFlags");
		json_t *al, *rq;

		if (!s) {
			json_decref(req);
			return 0; /* every flag allowed, none required */
		}
		al = json_object_get(s, "allowed");
		rq = json_object_get(s, "required");
		if (!req) {
			req = json_object();
			json_object_set_new(req, "allowed", json_array());
			json_object_set_new(req, "required",
					    rq ? json_deep_copy(rq) : json_array());
		} else {
			json_t *keep = json_array(), *cur = json_object_get(req, "required"), *v;
			size_t k;

			json_array_foreach(cur, k, v) if (rq && has_item(rq, v))
				json_array_append(keep, v);
			json_object_set_new(req, "required", keep);
		}
		if (al)
			unite(json_object_get(req, "allowed"), al);
		else
			allowed_all = true;
	}
	if (allowed_all) /* an input allows every flag */
		json_object_del(req, "allowed");
	json_object_set_new(out, "sqeFlags", req);
	return 0;
}

/* The entries of the union into @out; 0 or CLI_FAIL. */
static int merge_entries(struct input *in, int n, json_t *out)
{
	json_t *entries = json_array(), *allow = json_array();
	char nb[16];

	for (int op = 0; op < 256; op++) {
		int with_rules = -1;
		bool outright = false;
		const char *name = iour_opcode_name((uint32_t)op);

		if (!name) {
			snprintf(nb, sizeof(nb), "%d", op);
			name = nb;
		}
		for (int i = 0; i < n; i++) {
			if (in[i].kind[op] == 1)
				outright = true;
			if (in[i].kind[op] != 2)
				continue;
			if (with_rules >= 0 &&
			    !json_equal(in[with_rules].rules[op], in[i].rules[op])) {
				cli_msg("conflicting argument rules for %s: %s and %s have different "
					"entries for it (their union is not a rule list); merge them "
					"by hand",
					name, in[with_rules].path, in[i].path);
				json_decref(entries);
				json_decref(allow);
				return CLI_FAIL;
			}
			with_rules = i;
		}
		if (outright) {
			json_array_append_new(allow, json_string(name));
		} else if (with_rules >= 0) {
			size_t k;
			json_t *r;

			json_array_foreach(in[with_rules].rules[op], k, r)
			{
				json_t *e = json_deep_copy(r);

				json_object_set_new(e, "names", json_pack("[s]", name));
				json_array_append_new(entries, e);
			}
		}
	}
	if (json_array_size(allow))
		json_array_insert_new(entries, 0,
				      json_pack("{s:o,s:s}", "names", allow, "action", "allow"));
	else
		json_decref(allow);
	if (json_array_size(entries))
		json_object_set_new(out, "entries", entries);
	else
		json_decref(entries);
	return 0;
}

/* Attributes and programs must agree; 0 or CLI_FAIL. */
static int merge_attrs(struct input *in, int n, json_t *out, uint32_t *kver)
{
	for (size_t a = 0; a < NATTR + 1; a++) {
		const char *key = a < NATTR ? attr_keys[a] : "programs";
		json_t *v0 = json_object_get(in[0].doc, key);

		for (int i = 1; i < n; i++) {
			json_t *v = json_object_get(in[i].doc, key);

			if (!(v == v0 || (v && v0 && json_equal(v, v0)))) {
				cli_msg("'%s' differs: %s and %s%s", key, in[0].path, in[i].path,
					a < NATTR ? " (absent counts as the default)" : "");
				return CLI_FAIL;
			}
		}
		if (!v0)
			continue;
		if (!strcmp(key, "defaultAction") &&
		    strcmp(json_string_value(v0) ? json_string_value(v0) : "", "deny") != 0) {
			cli_msg("defaultAction is not \"deny\": merge writes unions of deny-default "
				"policies only");
			return CLI_FAIL;
		}
		if (!strcmp(key, "groupsAsOf") &&
		    cli_parse_kver(json_string_value(v0) ? json_string_value(v0) : "", kver))
			return CLI_FAIL;
		json_object_set(out, key, v0);
	}
	return 0;
}

/*
 * "HEAD [1] a.json: its comment [2] b.json: ..." of the inputs' comments
 * at @key (of the top level, or of the object @sub when not NULL), so
 * that what each input recorded (learn's counts, command and kernel)
 * stays in the union; NULL if no input has one.
 */
static json_t *joined_comments(const struct input *in, int n, const char *sub, const char *head)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	bool any = false;
	json_t *r = NULL;

	if (!m)
		return NULL;
	fputs(head, m);
	for (int i = 0; i < n; i++) {
		json_t *o = sub ? json_object_get(in[i].doc, sub) : in[i].doc;
		const char *c = json_string_value(json_object_get(o, "comment"));

		if (!c)
			continue;
		fprintf(m, " [%d] %s: %s", i + 1, in[i].path, c);
		any = true;
	}
	if (!fclose(m) && any)
		r = json_string(buf);
	free(buf);
	return r;
}

static int merge(struct input *in, int n, FILE *f)
{
	json_t *out = json_object(), *c;
	char *text = NULL;
	uint32_t kver = 0;
	int rc;

	c = joined_comments(in, n, NULL,
			    "union by iour-restrict merge of the inputs, whose comments follow:");
	json_object_set_new(out, "comment", c ? c : json_string("union by iour-restrict merge"));
	json_object_set_new(out, "version", json_integer(1));
	if ((rc = merge_attrs(in, n, out, &kver)))
		goto out;
	if (!json_object_get(out, "defaultAction"))
		json_object_set_new(out, "defaultAction", json_string("deny"));
	for (int i = 0; i < n && !rc; i++)
		rc = index_entries(&in[i], kver);
	if (rc || (rc = merge_classic(in, n, out)) || (rc = merge_entries(in, n, out)))
		goto out;
	if (json_object_get(out, "sqeFlags") &&
	    (c = joined_comments(in, n, "sqeFlags", "union of the inputs' SQE flags:")))
		json_object_set_new(json_object_get(out, "sqeFlags"), "comment", c);
	text = json_dumps(out, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	{
		struct iour_load_error le = { .sz = sizeof(le) };
		struct iour_policy *p = NULL;

		if (!text || iour_policy__load_json(text, strlen(text), NULL, &p, &le)) {
			cli_msg("the union does not load back (a bug): %s", text ? le.message : "");
			rc = CLI_FAIL;
			goto out;
		}
		iour_policy__free(p);
	}
	rc = fprintf(f, "%s\n", text) < 0 ? CLI_FAIL : 0;
out:
	free(text);
	json_decref(out);
	return rc;
}

int cmd_merge(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct learn_out out = { .dirfd = -1 };
	const char *output = NULL;
	struct input *in;
	int c, n, rc = 0;

	opterr = 0;
	/* options may follow the operands (merge has no COMMAND operand) */
	while ((c = getopt_long(argc, argv, ":ho:", lo, NULL)) != -1) {
		if (c == 'o')
			output = optarg;
		else if (c == 'h')
			return cli_help(cli_help_merge);
		else
			return cli_getopt_error(c, argv);
	}
	n = argc - optind;
	if (n < 2)
		return cli_usage("give two policy files or more");
	if (!output)
		return cli_usage("-o OUT is required ('-o -' writes to stdout)");
	in = calloc((size_t)n, sizeof(*in));
	if (!in)
		return cli_fail(-ENOMEM, "allocating");
	for (int i = 0; i < n && !rc; i++) {
		struct iour_policy *p = NULL;
		json_error_t je;

		in[i].path = argv[optind + i];
		if ((rc = cli_policy_load(in[i].path, 0, &p)))
			break;
		iour_policy__free(p);
		in[i].doc = json_load_file(in[i].path, JSON_REJECT_DUPLICATES, &je);
		if (!in[i].doc) {
			rc = CLI_POLICY;
			break;
		}
		in[i].classic = json_object_get(in[i].doc, "requestOps") ||
				json_object_get(in[i].doc, "registerOps") ||
				json_object_get(in[i].doc, "sqeFlags");
	}
	if (!rc && !(rc = learn_out_open(&out, output)) && !(rc = merge(in, n, out.f)))
		rc = learn_out_commit(&out, output);
	learn_out_current = NULL;
	learn_out_abort(&out);
	if (out.f && !out.std)
		fclose(out.f);
	if (out.dirfd >= 0)
		close(out.dirfd);
	for (int i = 0; i < n; i++) {
		json_decref(in[i].doc);
		for (int op = 0; op < 256; op++)
			json_decref(in[i].rules[op]);
	}
	free(in);
	return rc;
}
