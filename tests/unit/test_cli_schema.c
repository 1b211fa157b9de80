/* SPDX-License-Identifier: MIT */
/*
 * The tool's rule language against the request schema it reads
 * (iouring_restrict/schema.h; doc/design.md, "Adding a filterable opcode or
 * field"): `help rules` names every field, namespace and filtered opcode
 * of the table; every field resolves by its dotted, bare and upper-case
 * name on the opcodes whose payload holds it, and on no other; every named
 * constant resolves to its value (the program compiled from the name is
 * the program compiled from the number); the field lists of messages are
 * in table order; and the keys of `sim --ctx` are exactly the fields that
 * own their byte slot.  Expectations are computed here from the public
 * view, not from the tool's code.  Runs the built tool (IOUR_TOOLS_DIR, set
 * by make test-run); skips elsewhere.
 */
#include <criterion/criterion.h>
#include <ctype.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <unistd.h>

#include "iouring_restrict/iouring_restrict.h"

struct out {
	int status; /* exit status; 128 + signal */
	char *text; /* stdout and stderr, in order */
	size_t len;
};

static const char *tool(void)
{
	static char path[4096];
	const char *dir = getenv("IOUR_TOOLS_DIR");

	if (!dir)
		cr_skip_test("IOUR_TOOLS_DIR is not set (run through make test-run)");
	snprintf(path, sizeof(path), "%s/iour-restrict", dir);
	cr_assert_eq(access(path, X_OK), 0, "%s is not built", path);
	return path;
}

/* Runs the tool with @argv (NULL-terminated, argv[0] ignored); its stderr
 * is kept (after stdout, in order) unless @quiet. */
static struct out run_q(const char *const *argv, bool quiet)
{
	struct out o = { 0 };
	size_t cap = 0;
	int fd[2], st;
	ssize_t n;
	pid_t pid;

	cr_assert_eq(pipe(fd), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		dup2(fd[1], 1);
		dup2(quiet ? open("/dev/null", O_WRONLY) : fd[1], 2);
		close(fd[0]);
		close(fd[1]);
		execv(tool(), (char *const *)argv);
		_exit(127);
	}
	close(fd[1]);
	for (;;) {
		if (o.len + 4096 + 1 > cap) {
			cap = cap ? 2 * cap : 8192;
			o.text = realloc(o.text, cap);
			cr_assert_not_null(o.text);
		}
		n = read(fd[0], o.text + o.len, cap - o.len - 1);
		if (n <= 0)
			break;
		o.len += (size_t)n;
	}
	o.text[o.len] = '\0';
	close(fd[0]);
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	o.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	return o;
}

static struct out run(const char *const *argv)
{
	return run_q(argv, false);
}

/* `filter --op OP --allow RULE [--format FMT]`; with a format, stdout
 * only (the program, not the warnings that quote the rule). */
static struct out filter(uint32_t op, const char *rule, const char *fmt)
{
	char opnum[16];
	const char *argv[] = { "iour-restrict", "filter", "--op", opnum, "--allow", rule,
			       "--format", fmt ? fmt : "text", NULL };

	snprintf(opnum, sizeof(opnum), "%u", op);
	return run_q(argv, fmt != NULL);
}

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

static const char *bare(const struct iour_field_info *fi)
{
	return fi->group[0] ? fi->name + strlen(fi->group) + 1 : fi->name;
}

/* An opcode whose payload is @group (NOP for ""), and one whose payload
 * is not (UINT32_MAX if every filtered opcode's is). */
static uint32_t opcode_of(const char *group, bool other)
{
	struct iour_payload_info pi;
	size_t i;

	if (!group[0])
		return other ? UINT32_MAX : IOUR_OP_NOP;
	for (i = 0; payload_at(i, &pi); i++)
		if (!strcmp(pi.group, group) != other)
			return pi.opcode;
	return other ? IOUR_OP_NOP : UINT32_MAX;
}

/* Whether @word occurs in @text as a whole word ('_' and alphanumerics
 * around it count as the same word). */
static bool has_word(const char *text, const char *word)
{
	size_t n = strlen(word);
	const char *s;

	for (s = text; (s = strstr(s, word)); s++) {
		bool before = s > text && (isalnum((unsigned char)s[-1]) || s[-1] == '_');
		bool after = isalnum((unsigned char)s[n]) || s[n] == '_';

		if (!before && !after)
			return true;
	}
	return false;
}

static bool owns_slot(size_t idx, const struct iour_field_info *fi);

/* A value a rule may compare the field with. */
static const char *some_value(const struct iour_field_info *fi)
{
	switch (fi->kind) {
	case IOUR_FIELD_KIND_ADDR4:
		return "10.0.0.1";
	case IOUR_FIELD_KIND_ADDR6:
		return "::1";
	default:
		return "0";
	}
}

/* The part of @text from @from up to @to (exclusive), in a new string. */
static char *part(const char *text, const char *from, const char *to)
{
	const char *a = strstr(text, from), *b;

	cr_assert_not_null(a, "no '%s' in: %s", from, text);
	b = strstr(a, to);
	cr_assert_not_null(b, "no '%s' after '%s' in: %s", to, from, text);
	return strndup(a, (size_t)(b - a));
}

/* help rules lists the fields and opcodes in its "Fields" section, the
 * namespaces in its "Each field takes" paragraph and the context keys in
 * its "Contexts" section. */
Test(cli_schema, help_rules_names_the_schema)
{
	const char *argv[] = { "iour-restrict", "help", "rules", NULL };
	char ns[64], *fields, *spaces, *ctx;
	struct iour_payload_info pi;
	struct iour_field_info fi;
	struct out o;
	size_t i;

	tool();
	o = run(argv);
	cr_assert_eq(o.status, 0, "%s", o.text);
	fields = part(o.text, "\nFields (", "\n\n");
	spaces = part(o.text, "\nEach field takes", "\n\n");
	ctx = part(o.text, "\nContexts of", "Fields not given");
	for (i = 0; field_at(i, &fi); i++) {
		cr_expect(has_word(fields, bare(&fi)), "Fields does not name %s", fi.name);
		if (fi.prefix) {
			snprintf(ns, sizeof(ns), "%s*", fi.prefix);
			cr_expect(strstr(spaces, ns), "help rules does not name %s", ns);
		}
		if (owns_slot(i, &fi))
			cr_expect(has_word(ctx, bare(&fi)), "Contexts does not name %s", fi.name);
	}
	for (i = 0; payload_at(i, &pi); i++) {
		cr_expect(has_word(fields, iour_opcode_name(pi.opcode)),
			  "Fields does not name opcode %s", iour_opcode_name(pi.opcode));
		cr_expect(has_word(ctx, iour_opcode_name(pi.opcode)),
			  "Contexts does not name opcode %s", iour_opcode_name(pi.opcode));
	}
	free(fields);
	free(spaces);
	free(ctx);
	free(o.text);
}

/* The other help texts that list what the schema holds: the opcodes of
 * filter's and sim's --op, and check's context fields. */
Test(cli_schema, command_help_names_the_schema)
{
	const char *cmds[] = { "filter", "sim", "check" };
	struct iour_payload_info pi;
	struct iour_field_info fi;
	struct out o;
	size_t c, i;

	tool();
	for (c = 0; c < 3; c++) {
		const char *argv[] = { "iour-restrict", cmds[c], "--help", NULL };

		char *from, *to;

		o = run(argv);
		cr_assert_eq(o.status, 0, "%s", o.text);
		/* the part that lists them, not the whole text */
		from = strstr(o.text, c == 2 ? "The request is described" : "--op OPCODE");
		cr_assert_not_null(from, "%s", o.text);
		to = strstr(from, c == 2 ? "Fields not given" : "required");
		cr_assert_not_null(to, "%s", o.text);
		*to = '\0';
		memmove(o.text, from, strlen(from) + 1);
		for (i = 0; payload_at(i, &pi); i++)
			cr_expect(has_word(o.text, iour_opcode_name(pi.opcode)),
				  "%s --help does not name %s", cmds[c],
				  iour_opcode_name(pi.opcode));
		for (i = 0; field_at(i, &fi); i++)
			cr_expect(fi.group[0] || has_word(o.text, fi.name),
				  "%s --help does not name %s", cmds[c], fi.name);
		for (i = 0; c == 2 && field_at(i, &fi); i++)
			cr_expect(!owns_slot(i, &fi) || has_word(o.text, bare(&fi)),
				  "check --help does not name %s", fi.name);
		free(o.text);
	}
}

Test(cli_schema, dotted_bare_and_uppercase_names_resolve)
{
	struct iour_field_info fi;
	char rule[128], upper[64];
	uint32_t op, other;
	struct out o;
	size_t i, k;

	tool();
	for (i = 0; field_at(i, &fi); i++) {
		const char *forms[3] = { fi.name, bare(&fi), upper };

		for (k = 0; fi.name[k] && k + 1 < sizeof(upper); k++)
			upper[k] = (char)toupper((unsigned char)fi.name[k]);
		upper[k] = '\0';
		op = opcode_of(fi.group, false);
		other = opcode_of(fi.group, true);
		cr_assert_neq(op, UINT32_MAX, "%s: no opcode holds its group", fi.name);
		for (k = 0; k < 3; k++) {
			snprintf(rule, sizeof(rule), "%s == %s", forms[k], some_value(&fi));
			o = filter(op, rule, NULL);
			cr_expect_eq(o.status, 0, "%s on %s: %s", rule, iour_opcode_name(op), o.text);
			free(o.text);
			/* a bare name may be a field of the other payload too */
			if (other == UINT32_MAX || k == 1)
				continue;
			o = filter(other, rule, NULL);
			cr_expect_eq(o.status, 2, "%s on %s: %s", rule, iour_opcode_name(other),
				     o.text);
			cr_expect(strstr(o.text, "does not exist for opcode"), "%s on %s: %s", rule,
				  iour_opcode_name(other), o.text);
			free(o.text);
		}
	}
}

/* A path, or an address of a request other than CONNECT, is no field of
 * the kernel's: the message points to iouring-restrict(7)'s "WHAT IT
 * CANNOT RESTRICT"; CONNECT's own address fields compile, and a field that
 * is neither gets no such pointer. */
Test(cli_schema, unexposed_fields_point_to_what_it_cannot_restrict)
{
	static const struct {
		const char *op, *rule, *says;
	} bad[] = {
		{ "OPENAT", "path == 1", "see no paths" },
		{ "OPENAT2", "open.filename == 1", "see no paths" },
		{ "BIND", "port == 80", "CONNECT's address only" },
		{ "BIND", "addr4 == 10.0.0.1", "CONNECT's address only" },
		{ "ACCEPT", "addr == 1", "CONNECT's address only" },
	};
	struct out o;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		o = filter((uint32_t)iour_opcode_from_name(bad[i].op), bad[i].rule, NULL);
		cr_expect_eq(o.status, 2, "%s %s: %s", bad[i].op, bad[i].rule, o.text);
		cr_expect(strstr(o.text, bad[i].says), "%s %s: %s", bad[i].op, bad[i].rule, o.text);
		cr_expect(strstr(o.text, "iouring-restrict(7) WHAT IT CANNOT RESTRICT"), "%s", o.text);
		free(o.text);
	}
	o = filter((uint32_t)iour_opcode_from_name("CONNECT"), "port == 443", NULL);
	cr_expect_eq(o.status, 0, "%s", o.text);
	free(o.text);
	o = filter((uint32_t)iour_opcode_from_name("SOCKET"), "bogus == 1", NULL);
	cr_expect_eq(o.status, 2, "%s", o.text);
	cr_expect(strstr(o.text, "unknown field 'bogus'") && !strstr(o.text, "CANNOT RESTRICT"), "%s",
		  o.text);
	free(o.text);
}

/* Every named constant compiles to the program of its value, in upper and
 * lower case, on a field of its namespace that takes the value. */
Test(cli_schema, constants_resolve_to_their_values)
{
	struct iour_const_info ci;
	struct iour_field_info fi;
	struct out byname, bynum, lower;
	char rule[160], lname[64];
	size_t i, k, j, ok;

	tool();
	for (i = 0; i < (size_t)iour_const_count(); i++) {
		memset(&ci, 0, sizeof(ci));
		ci.sz = sizeof(ci);
		cr_assert_eq(iour_const_get(i, &ci), 0);
		for (j = 0; ci.name[j] && j + 1 < sizeof(lname); j++)
			lname[j] = (char)tolower((unsigned char)ci.name[j]);
		lname[j] = '\0';
		ok = 0;
		for (k = 0; !ok && field_at(k, &fi); k++) {
			uint32_t op = opcode_of(fi.group, false);

			if (!fi.prefix || !ci.ns || strcmp(fi.prefix, ci.ns) ||
			    (ci.value & ~fi.valid) || op == UINT32_MAX)
				continue;
			snprintf(rule, sizeof(rule), "%s == %s", fi.name, ci.name);
			byname = filter(op, rule, "raw");
			snprintf(rule, sizeof(rule), "%s == %s", fi.name, lname);
			lower = filter(op, rule, "raw");
			snprintf(rule, sizeof(rule), "%s == %llu", fi.name,
				 (unsigned long long)ci.value);
			bynum = filter(op, rule, "raw");
			cr_expect_eq(byname.status, 0, "%s: %s", ci.name, byname.text);
			cr_expect_eq(bynum.status, 0, "%s: %s", rule, bynum.text);
			cr_expect(byname.len == bynum.len &&
					  !memcmp(byname.text, bynum.text, bynum.len),
				  "%s on %s is not %llu", ci.name, fi.name,
				  (unsigned long long)ci.value);
			cr_expect(lower.len == bynum.len && !memcmp(lower.text, bynum.text, bynum.len),
				  "%s does not resolve", lname);
			free(byname.text);
			free(bynum.text);
			free(lower.text);
			ok = 1;
		}
		cr_expect(ok, "%s (namespace %s): no field takes it", ci.name, ci.ns ? ci.ns : "-");
	}
}

/* The fields of a payload, then those of every opcode, in table order:
 * what the unknown-field message lists. */
static void fields_of(const char *group, char *buf, size_t cap)
{
	struct iour_field_info fi;
	int pass;
	size_t i;

	buf[0] = '\0';
	for (pass = 0; pass < 2; pass++)
		for (i = 0; field_at(i, &fi); i++)
			if (pass ? !fi.group[0] : !strcmp(fi.group, group) && group[0])
				snprintf(buf + strlen(buf), cap - strlen(buf), "%s%s",
					 buf[0] ? ", " : "", bare(&fi));
}

Test(cli_schema, field_lists_follow_the_table)
{
	struct iour_payload_info pi;
	char list[512], want[640];
	struct out o;
	size_t i;

	tool();
	for (i = 0; payload_at(i, &pi); i++) {
		fields_of(pi.group, list, sizeof(list));
		snprintf(want, sizeof(want), "(fields of %s: %s)", iour_opcode_name(pi.opcode),
			 list);
		o = filter(pi.opcode, "nosuchfield == 1", NULL);
		cr_expect_eq(o.status, 2);
		cr_expect(strstr(o.text, want), "want %s in: %s", want, o.text);
		free(o.text);
	}
	fields_of("", list, sizeof(list));
	snprintf(want, sizeof(want), "(fields of NOP: %s)", list);
	o = filter(IOUR_OP_NOP, "nosuchfield == 1", NULL);
	cr_expect(strstr(o.text, want), "want %s in: %s", want, o.text);
	free(o.text);
}

/* Whether field @idx is the first of its group at its byte slot. */
static bool owns_slot(size_t idx, const struct iour_field_info *fi)
{
	struct iour_field_info o;
	size_t i;

	for (i = 0; i < idx && field_at(i, &o); i++)
		if (!strcmp(o.group, fi->group) && o.offset == fi->offset && o.size == fi->size)
			return false;
	return true;
}

/* The keys `sim --ctx` takes on an opcode of @group: the group's
 * slot-owning fields, CONNECT's addrlen (the sockaddr's length, which is
 * no field), then the slot-owning fields of every opcode. */
static void keys_of(const char *group, uint32_t op, char *buf, size_t cap)
{
	struct iour_field_info fi;
	int pass;
	size_t i;

	buf[0] = '\0';
	for (pass = 0; pass < 2; pass++) {
		for (i = 0; field_at(i, &fi); i++)
			if ((pass ? !fi.group[0] : group[0] && !strcmp(fi.group, group)) &&
			    owns_slot(i, &fi))
				snprintf(buf + strlen(buf), cap - strlen(buf), "%s%s",
					 buf[0] ? ", " : "", bare(&fi));
		if (!pass && op == IOUR_OP_CONNECT)
			snprintf(buf + strlen(buf), cap - strlen(buf), ", addrlen");
	}
}

Test(cli_schema, ctx_keys_are_the_slot_owning_fields)
{
	struct iour_payload_info pi;
	struct iour_field_info fi;
	char list[512], want[640], opnum[16], ctx[128];
	const char *argv[] = { "iour-restrict", "sim", "--op", opnum, "--allow", "true",
			       "--ctx", ctx, NULL };
	struct out o;
	size_t i, k;

	tool();
	for (i = 0; payload_at(i, &pi); i++) {
		snprintf(opnum, sizeof(opnum), "%u", pi.opcode);
		keys_of(pi.group, pi.opcode, list, sizeof(list));
		snprintf(want, sizeof(want), "(context fields of %s: %s)",
			 iour_opcode_name(pi.opcode), list);
		snprintf(ctx, sizeof(ctx), "nosuchfield=1");
		o = run(argv);
		cr_expect_eq(o.status, 2);
		cr_expect(strstr(o.text, want), "want %s in: %s", want, o.text);
		free(o.text);
		/* each key is taken; each other field of the payload is not */
		for (k = 0; field_at(k, &fi); k++) {
			if (fi.group[0] && strcmp(fi.group, pi.group))
				continue;
			snprintf(ctx, sizeof(ctx), "%s=%s", bare(&fi),
				 fi.kind == IOUR_FIELD_KIND_ADDR6	? "::1"
				 : fi.kind == IOUR_FIELD_KIND_ADDR4 ? "10.0.0.1"
								    : "0");
			o = run(argv);
			if (owns_slot(k, &fi))
				cr_expect_eq(o.status, 0, "%s on %s: %s", ctx,
					     iour_opcode_name(pi.opcode), o.text);
			else
				cr_expect(o.status == 2 && strstr(o.text, "context field"),
					  "%s on %s is a key: %s", ctx,
					  iour_opcode_name(pi.opcode), o.text);
			free(o.text);
		}
	}
	keys_of("", IOUR_OP_NOP, list, sizeof(list));
	snprintf(want, sizeof(want), "(context fields of NOP: %s)", list);
	snprintf(opnum, sizeof(opnum), "%u", IOUR_OP_NOP);
	snprintf(ctx, sizeof(ctx), "nosuchfield=1");
	o = run(argv);
	cr_expect(strstr(o.text, want), "want %s in: %s", want, o.text);
	free(o.text);
}
