/* SPDX-License-Identifier: MIT */
/*
 * Property: every field name a user can write (policy files, the CLI rule
 * language, the bindings' field lists) reaches the field the request
 * schema (lib/base/schema.def, doc/kernel.md 4.3) says, and a rule on it
 * compiles to loads of exactly that field's context words (the
 * IOUR_CTX_OFF_* offsets of cbpf.h) and decides on that field's bytes.
 *
 * The expected table below is written out by hand from the public
 * headers, independently of lib/base/schema.def: a name mapped to the wrong
 * field id (open.mode read as open.resolve, issue 24) makes the schema
 * lookup, the loads and the verdicts disagree with it.
 */
#include <criterion/criterion.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "iouring_restrict/iouring_restrict.h"
#include "filter/filter_internal.h"
#include "policy/policy_internal.h"
#include "base/schema.h"

#define OP_READ 22
#define OP_CONNECT 16
#define OP_OPENAT 18
#define OP_SOCKET 45

struct want {
	const char *name;  /* dotted, as policy files write it */
	const char *bare;  /* the CLI's short name */
	uint32_t id;       /* the public IOUR_FIELD_* */
	uint32_t opcode;   /* a request opcode that has the field */
	const char *value; /* a JSON value for "==" (or "in" for addresses) */
	const char *cli;   /* the CLI's right-hand side */
	/* the context words (offsets) a comparison must load, 0-terminated
	 * list with the first always set (offset 0 written as 0x100) */
	uint32_t loads[5];
	/* context words it may also load (the IPv4-mapped IPv6 form of an
	 * IPv4 address, doc/security.md), and the address family the
	 * address fields are guarded by (0: none) */
	uint32_t may[4];
	uint32_t family;
	/* where the value sits in the context, and its bytes */
	uint32_t at;
	uint8_t bytes[16];
	size_t nbytes;
};

#define W(o) ((o) == 0 ? 0x100U : (uint32_t)(o))

/* Little-endian hosts only (the CI's); the offsets are cbpf.h's. */
static const struct want wants[] = {
	{ "user_data",
	  "user_data",
	  IOUR_FIELD_USER_DATA,
	  OP_READ,
	  "7",
	  "7",
	  { W(IOUR_CTX_OFF_USER_DATA), 4 },
	  { 0 },
	  0,
	  0,
	  { 7 },
	  1 },
	{ "sqe_flags",
	  "sqe_flags",
	  IOUR_FIELD_SQE_FLAGS,
	  OP_READ,
	  "\"IOSQE_IO_LINK\"",
	  "IOSQE_IO_LINK",
	  { 8 },
	  { 0 },
	  0,
	  IOUR_CTX_OFF_SQE_FLAGS,
	  { 4 },
	  1 },
	{ "socket.family",
	  "family",
	  IOUR_FIELD_SOCKET_FAMILY,
	  OP_SOCKET,
	  "7",
	  "7",
	  { IOUR_CTX_OFF_SOCKET_FAMILY },
	  { 0 },
	  0,
	  IOUR_CTX_OFF_SOCKET_FAMILY,
	  { 7 },
	  1 },
	{ "socket.type",
	  "type",
	  IOUR_FIELD_SOCKET_TYPE,
	  OP_SOCKET,
	  "3",
	  "3",
	  { IOUR_CTX_OFF_SOCKET_TYPE },
	  { 0 },
	  0,
	  IOUR_CTX_OFF_SOCKET_TYPE,
	  { 3 },
	  1 },
	{ "socket.type_flags",
	  "type_flags",
	  IOUR_FIELD_SOCKET_TYPE_FLAGS,
	  OP_SOCKET,
	  "\"SOCK_NONBLOCK\"",
	  "SOCK_NONBLOCK",
	  { IOUR_CTX_OFF_SOCKET_TYPE },
	  { 0 },
	  0,
	  IOUR_CTX_OFF_SOCKET_TYPE + 1,
	  { 0x08 },
	  1 /* 04000 */ },
	{ "socket.type_raw",
	  "type_raw",
	  IOUR_FIELD_SOCKET_TYPE_RAW,
	  OP_SOCKET,
	  "5",
	  "5",
	  { IOUR_CTX_OFF_SOCKET_TYPE },
	  { 0 },
	  0,
	  IOUR_CTX_OFF_SOCKET_TYPE,
	  { 5 },
	  1 },
	{ "socket.protocol",
	  "protocol",
	  IOUR_FIELD_SOCKET_PROTOCOL,
	  OP_SOCKET,
	  "9",
	  "9",
	  { IOUR_CTX_OFF_SOCKET_PROTOCOL },
	  { 0 },
	  0,
	  IOUR_CTX_OFF_SOCKET_PROTOCOL,
	  { 9 },
	  1 },
	{ "open.flags",
	  "flags",
	  IOUR_FIELD_OPEN_FLAGS,
	  OP_OPENAT,
	  "4",
	  "4",
	  { IOUR_CTX_OFF_OPEN_FLAGS, IOUR_CTX_OFF_OPEN_FLAGS + 4 },
	  { 0 },
	  0,
	  IOUR_CTX_OFF_OPEN_FLAGS,
	  { 4 },
	  1 },
	{ "open.accmode",
	  "accmode",
	  IOUR_FIELD_OPEN_ACCMODE,
	  OP_OPENAT,
	  "2",
	  "2",
	  { IOUR_CTX_OFF_OPEN_FLAGS },
	  { 0 },
	  0,
	  IOUR_CTX_OFF_OPEN_FLAGS,
	  { 2 },
	  1 },
	{ "open.mode",
	  "mode",
	  IOUR_FIELD_OPEN_MODE,
	  OP_OPENAT,
	  "6",
	  "6",
	  { IOUR_CTX_OFF_OPEN_MODE, IOUR_CTX_OFF_OPEN_MODE + 4 },
	  { 0 },
	  0,
	  IOUR_CTX_OFF_OPEN_MODE,
	  { 6 },
	  1 },
	{ "open.resolve",
	  "resolve",
	  IOUR_FIELD_OPEN_RESOLVE,
	  OP_OPENAT,
	  "3",
	  "3",
	  { IOUR_CTX_OFF_OPEN_RESOLVE, IOUR_CTX_OFF_OPEN_RESOLVE + 4 },
	  { 0 },
	  0,
	  IOUR_CTX_OFF_OPEN_RESOLVE,
	  { 3 },
	  1 },
	{ "connect.family",
	  "family",
	  IOUR_FIELD_CONNECT_FAMILY,
	  OP_CONNECT,
	  "11",
	  "11",
	  { IOUR_CTX_OFF_CONNECT_FAMILY },
	  { 0 },
	  0,
	  IOUR_CTX_OFF_CONNECT_FAMILY,
	  { 11 },
	  1 },
	{ "connect.port",
	  "port",
	  IOUR_FIELD_CONNECT_PORT,
	  OP_CONNECT,
	  "258",
	  "258",
	  { IOUR_CTX_OFF_CONNECT_PORT },
	  { 0 },
	  0,
	  IOUR_CTX_OFF_CONNECT_PORT,
	  { 1, 2 },
	  2 },
	{ "connect.addr4",
	  "addr4",
	  IOUR_FIELD_CONNECT_ADDR4,
	  OP_CONNECT,
	  "\"10.1.2.3/32\"",
	  "10.1.2.3/32",
	  { IOUR_CTX_OFF_CONNECT_FAMILY, IOUR_CTX_OFF_CONNECT_ADDR },
	  { IOUR_CTX_OFF_CONNECT_ADDR + 4, IOUR_CTX_OFF_CONNECT_ADDR + 8,
	    IOUR_CTX_OFF_CONNECT_ADDR + 12 },
	  AF_INET,
	  IOUR_CTX_OFF_CONNECT_ADDR,
	  { 10, 1, 2, 3 },
	  4 },
	{ "connect.addr6",
	  "addr6",
	  IOUR_FIELD_CONNECT_ADDR6,
	  OP_CONNECT,
	  "\"fd00::1/128\"",
	  "fd00::1/128",
	  { IOUR_CTX_OFF_CONNECT_FAMILY, IOUR_CTX_OFF_CONNECT_ADDR, IOUR_CTX_OFF_CONNECT_ADDR + 4,
	    IOUR_CTX_OFF_CONNECT_ADDR + 8, IOUR_CTX_OFF_CONNECT_ADDR + 12 },
	  { 0 },
	  AF_INET6,
	  IOUR_CTX_OFF_CONNECT_ADDR,
	  { 0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1 },
	  16 },
};

#define N_WANTS (sizeof(wants) / sizeof(wants[0]))

static const struct want *want_named(const char *name)
{
	for (size_t i = 0; i < N_WANTS; i++)
		if (!strcmp(wants[i].name, name))
			return &wants[i];
	return NULL;
}

/* The program's absolute word loads must be exactly w->loads. */
static void check_loads(const struct want *w, const struct iour_insn *in, size_t n, const char *how)
{
	bool seen[5] = { false };

	cr_assert_gt(n, 0, "%s: empty program", how);
	for (size_t i = 0; i < n; i++) {
		bool expected = false;

		if (in[i].code != 0x20 /* ld [k], a word at k */)
			continue;
		for (size_t j = 0; j < 5 && w->loads[j]; j++)
			if ((w->loads[j] & 0xffU) == in[i].k)
				seen[j] = expected = true;
		for (size_t j = 0; j < 4 && w->may[j]; j++)
			if (w->may[j] == in[i].k)
				expected = true;
		cr_expect(expected, "%s: %s loads context word %u, not one of the field's", how,
			  w->name, in[i].k);
	}
	for (size_t j = 0; j < 5 && w->loads[j]; j++)
		cr_expect(seen[j], "%s: %s never loads context word %u", how, w->name,
			  w->loads[j] & 0xffU);
}

static void ctx_of(const struct want *w, uint8_t ctx[IOUR_CTX_SIZE], bool with_value)
{
	cr_assert_eq(iour_ctx_generic(ctx, IOUR_CTX_SIZE, w->opcode, 0, 0), 0);
	if (w->family)
		memcpy(ctx + IOUR_CTX_OFF_CONNECT_FAMILY, &w->family, sizeof(w->family));
	if (with_value)
		memcpy(ctx + w->at, w->bytes, w->nbytes);
}

/* The schema's own table: every name there is one of ours, with our id. */
Test(prop_fields, schema_names_are_the_public_fields)
{
	size_t n = 0;
	const struct iour__schema_field *f;

	for (size_t i = 0; (f = iour__schema_field_at(i)); i++, n++) {
		const struct want *w = want_named(f->name);

		cr_assert_not_null(w, "schema field %s is not in the test's table", f->name);
		cr_expect_eq(f->id, w->id, "schema: %s has id %u, the header says %u", f->name,
			     f->id, w->id);
		cr_expect_eq(iour__schema_field_named(w->name), f);
		cr_expect_eq(iour__schema_field_of(w->id), f, "schema: id %u finds another row",
			     w->id);
	}
	cr_expect_eq(n, N_WANTS, "schema has %zu fields, the test knows %zu", n, N_WANTS);
}

/* A policy file's deny rule on each field: its condition holds the field
 * id, the program loads the field's words only, and the verdict follows
 * the field's bytes (and not those of zero). */
Test(prop_fields, policy_file_names_load_their_field)
{
	for (size_t i = 0; i < N_WANTS; i++) {
		const struct want *w = &wants[i];
		bool addr = w->id == IOUR_FIELD_CONNECT_ADDR4 || w->id == IOUR_FIELD_CONNECT_ADDR6;
		struct iour_load_error err;
		struct iour_policy *p = NULL;
		struct iour_request_verdict v;
		uint8_t ctx[IOUR_CTX_SIZE];
		char text[512];
		const struct iour_prog *prog;
		const struct iour__opfilter *of;
		size_t nc = 0;
		int rc;

		snprintf(text, sizeof(text),
			 "{ \"version\": 1, \"defaultAction\": \"allow\", \"entries\": [ "
			 "{ \"names\": [%u], \"action\": \"deny\", \"args\": [ "
			 "{ \"field\": \"%s\", \"op\": \"%s\", \"value\": %s } ] } ] }",
			 w->opcode, w->name, addr ? "in" : "==", w->value);
		memset(&err, 0, sizeof(err));
		err.sz = sizeof(err);
		rc = iour_policy__load_json(text, strlen(text), NULL, &p, &err);
		cr_assert_eq(rc, 0, "%s: %d %s", w->name, rc, err.message);
		cr_assert_not_null(p->src);
		of = iour__filter_op(p->src, w->opcode);
		cr_assert_not_null(of, "%s: no rules for opcode %u", w->name, w->opcode);
		for (size_t r = 0; r < of->nrules; r++)
			for (size_t c = 0; c < of->rules[r].ncmps; c++, nc++)
				cr_expect_eq(of->rules[r].cmps[c].field, w->id,
					     "policy file: %s loads as field %u, not %u", w->name,
					     of->rules[r].cmps[c].field, w->id);
		cr_expect_eq(nc, 1, "%s: %zu conditions", w->name, nc);
		prog = p->progs[w->opcode];
		cr_assert_not_null(prog, "%s: no program", w->name);
		check_loads(w, iour_prog__insns(prog), iour_prog__insn_cnt(prog), "policy file");

		memset(&v, 0, sizeof(v));
		v.sz = sizeof(v);
		ctx_of(w, ctx, true);
		cr_assert_eq(iour_policy__decide(p, ctx, sizeof(ctx), &v), 0);
		cr_expect_eq(v.verdict, IOUR_DENY, "%s: its value does not match", w->name);
		ctx_of(w, ctx, false);
		cr_assert_eq(iour_policy__decide(p, ctx, sizeof(ctx), &v), 0);
		cr_expect_eq(v.verdict, IOUR_ALLOW, "%s: zero matches", w->name);
		iour_policy__free(p);
	}
}

/* The filter builder with the public id compiles to the same loads (the
 * path the bindings take: they pass the id). */
Test(prop_fields, filter_ids_load_their_field)
{
	for (size_t i = 0; i < N_WANTS; i++) {
		const struct want *w = &wants[i];
		struct iour_filter *f = NULL;
		struct iour_prog *prog = NULL;
		struct iour_cmp c;
		uint8_t ctx[IOUR_CTX_SIZE];
		struct iour_sim_result res = { .sz = sizeof(res) };
		int rc;

		memset(&c, 0, sizeof(c));
		c.sz = sizeof(c);
		c.field = w->id;
		/* addresses take prefixes: covered through the policy file and
		 * the CLI, which build them */
		if (w->id == IOUR_FIELD_CONNECT_ADDR6 || w->id == IOUR_FIELD_CONNECT_ADDR4)
			continue;
		c.op = IOUR_CMP_EQ;
		ctx_of(w, ctx, true);
		/* the value: the field's bytes read back as the kernel's number */
		if (w->id == IOUR_FIELD_CONNECT_PORT)
			c.value = 258;
		else if (w->id == IOUR_FIELD_SOCKET_TYPE_FLAGS)
			c.value = 04000;
		else if (w->id == IOUR_FIELD_SQE_FLAGS)
			c.value = 4;
		else
			c.value = w->bytes[0];
		cr_assert_eq(iour_filter__new(NULL, &f), 0);
		cr_assert_eq(iour_filter__set_default(f, w->opcode, IOUR_ALLOW), 0);
		rc = iour_filter__add_rule(f, w->opcode, IOUR_DENY, &c, 1);
		cr_assert_eq(rc, 0, "%s: add_rule %d", w->name, rc);
		cr_assert_eq(iour_filter__compile(f, w->opcode, NULL, &prog), 0);
		check_loads(w, iour_prog__insns(prog), iour_prog__insn_cnt(prog), "filter");
		cr_assert_eq(iour_cbpf_run(iour_prog__insns(prog), iour_prog__insn_cnt(prog), ctx,
					   sizeof(ctx), &res),
			     0);
		cr_expect_eq(res.allowed, 0, "%s: its value is not denied", w->name);
		iour_prog__free(prog);
		iour_filter__free(f);
	}
}

/* ---- the command-line tool's rule language */

static const char *tool_path(void)
{
	static char path[4096];
	const char *dir = getenv("IOUR_TOOLS_DIR");

	if (!dir)
		cr_skip_test("IOUR_TOOLS_DIR is not set (run through make test-run)");
	snprintf(path, sizeof(path), "%s/iour-restrict", dir);
	if (access(path, X_OK))
		cr_skip_test("%s is not built", path);
	return path;
}

/* Runs `iour-restrict filter --format raw` and returns the program. */
static size_t cli_prog(const char *tool, uint32_t opcode, const char *rule, struct iour_insn *out,
		       size_t cap)
{
	char op[16], tmpl[] = "/tmp/prop_fields_XXXXXX";
	int fd = mkstemp(tmpl), status;
	pid_t pid;
	ssize_t got;

	cr_assert_geq(fd, 0);
	unlink(tmpl);
	snprintf(op, sizeof(op), "%u", opcode);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		/* stderr: warnings (open.flags ==, doc/cli.md) are not checked */
		dup2(fd, 1);
		if (null >= 0)
			dup2(null, 2);
		execl(tool, tool, "filter", "--op", op, "--deny", rule, "--default", "allow",
		      "--format", "raw", (char *)NULL);
		_exit(127);
	}
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "filter --deny '%s' failed", rule);
	got = pread(fd, out, cap * sizeof(*out), 0);
	close(fd);
	cr_assert_gt(got, 0);
	cr_assert_eq((size_t)got % sizeof(*out), 0);
	return (size_t)got / sizeof(*out);
}

Test(prop_fields, cli_names_load_their_field)
{
	const char *tool = tool_path();
	struct iour_insn prog[256];

	for (size_t i = 0; i < N_WANTS; i++) {
		const struct want *w = &wants[i];
		const char *names[2] = { w->name, w->bare };
		bool addr = w->id == IOUR_FIELD_CONNECT_ADDR4 || w->id == IOUR_FIELD_CONNECT_ADDR6;

		for (size_t k = 0; k < 2; k++) {
			char rule[128];
			size_t n;
			uint8_t ctx[IOUR_CTX_SIZE];
			struct iour_sim_result res = { .sz = sizeof(res) };

			snprintf(rule, sizeof(rule), "%s %s %s", names[k],
				 addr ? "in" : "==", w->cli);
			n = cli_prog(tool, w->opcode, rule, prog, 256);
			check_loads(w, prog, n, rule);
			ctx_of(w, ctx, true);
			cr_assert_eq(iour_cbpf_run(prog, n, ctx, sizeof(ctx), &res), 0);
			cr_expect_eq(res.allowed, 0, "cli '%s': its value is not denied", rule);
			ctx_of(w, ctx, false);
			cr_assert_eq(iour_cbpf_run(prog, n, ctx, sizeof(ctx), &res), 0);
			cr_expect_eq(res.allowed, 1, "cli '%s': zero is denied", rule);
		}
	}
}

/* ---- the bindings' field lists (source files of the tree) */

static char *slurp_file(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	if (!f)
		return NULL;
	cr_assert_eq(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	cr_assert_geq(n, 0);
	rewind(f);
	buf = malloc((size_t)n + 1);
	cr_assert_not_null(buf);
	cr_assert_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* OPEN_MODE or OpenMode -> "open.mode" (the payload prefixes of the
 * policy-file names; user_data and sqe_flags have none). */
static void binding_to_dotted(const char *in, size_t len, char *out, size_t cap)
{
	size_t o = 0;
	bool camel = len && islower((unsigned char)in[1]);

	for (size_t i = 0; i < len && o + 2 < cap; i++) {
		char ch = in[i];

		if (camel && isupper((unsigned char)ch) && i > 0)
			out[o++] = '_';
		out[o++] = (char)tolower((unsigned char)ch);
	}
	out[o] = '\0';
	for (const char *const *pfx = (const char *const[]){ "socket_", "open_", "connect_", NULL };
	     *pfx; pfx++)
		if (!strncmp(out, *pfx, strlen(*pfx))) {
			out[strlen(*pfx) - 1] = '.';
			break;
		}
}

static const char *src_path(const char *rel)
{
	static char path[4096];
	const char *top = getenv("IOUR_SRC_DIR");

	snprintf(path, sizeof(path), "%s/%s", top ? top : ".", rel);
	return path;
}

/* bindings/python: class Field(IntEnum) lines "    OPEN_MODE = 34". */
Test(prop_fields, python_field_list_matches)
{
	char *text = slurp_file(src_path("bindings/python/iouring_restrict/enums.py"));
	const char *p;
	size_t n = 0;

	if (!text)
		cr_skip_test("bindings/python is not in the working directory");
	p = strstr(text, "class Field(");
	cr_assert_not_null(p);
	p = strchr(p, '\n');
	while (p && *p) {
		char name[64], dotted[64];
		unsigned int v;
		const struct want *w;

		p++;
		if (sscanf(p, " %63[A-Z0-9_] = %u", name, &v) == 2) {
			binding_to_dotted(name, strlen(name), dotted, sizeof(dotted));
			w = want_named(dotted);
			cr_expect_not_null(w, "python Field.%s: no field %s", name, dotted);
			if (w)
				cr_expect_eq(v, w->id, "python Field.%s = %u, the header says %u",
					     name, v, w->id);
			n++;
		} else if (strncmp(p, "    ", 4) && *p != '\n' && *p != '\0') {
			break; /* the class ended */
		}
		p = strchr(p, '\n');
	}
	cr_expect_eq(n, N_WANTS, "python Field has %zu members, expected %zu", n, N_WANTS);
	free(text);
}

/* bindings/rust: `Field::OpenMode => sys::IOUR_FIELD_OPEN_MODE,` and the
 * sys crate's `pub const IOUR_FIELD_OPEN_MODE: u32 = 34;`. */
Test(prop_fields, rust_field_list_matches)
{
	char *map = slurp_file(src_path("bindings/rust/iouring-restrict/src/filter.rs"));
	char *sys = slurp_file(src_path("bindings/rust/iouring-restrict-sys/src/lib.rs"));
	const char *p;
	size_t n = 0;

	if (!map || !sys) {
		free(map);
		free(sys);
		cr_skip_test("bindings/rust is not in the working directory");
	}
	for (p = strstr(map, "Field::"); p; p = strstr(p + 1, "Field::")) {
		char variant[64], cname[64], dotted[64], want_c[96], key[128];
		const struct want *w;
		const char *def;
		unsigned int v;

		if (sscanf(p, "Field::%63[A-Za-z0-9] => sys::%63[A-Z0-9_]", variant, cname) != 2)
			continue;
		binding_to_dotted(variant, strlen(variant), dotted, sizeof(dotted));
		w = want_named(dotted);
		cr_expect_not_null(w, "rust Field::%s: no field %s", variant, dotted);
		if (!w)
			continue;
		n++;
		/* the constant's name is the field's, upper case */
		snprintf(want_c, sizeof(want_c), "IOUR_FIELD_");
		for (const char *s = w->name; *s; s++) {
			size_t l = strlen(want_c);

			want_c[l] = *s == '.' ? '_' : (char)toupper((unsigned char)*s);
			want_c[l + 1] = '\0';
		}
		cr_expect_str_eq(cname, want_c, "rust Field::%s maps to %s", variant, cname);
		snprintf(key, sizeof(key), "pub const %s: u32 = ", cname);
		def = strstr(sys, key);
		cr_assert_not_null(def, "%s is not in the sys crate", cname);
		cr_assert_eq(sscanf(def + strlen(key), "%u", &v), 1);
		cr_expect_eq(v, w->id, "rust sys %s = %u, the header says %u", cname, v, w->id);
	}
	cr_expect_eq(n, N_WANTS, "rust Field maps %zu variants, expected %zu", n, N_WANTS);
	free(map);
	free(sys);
}

/* ---- connect.family where an IPv4-mapped IPv6 destination is judged as
 * the IPv4 one (doc/security.md): a rule comparing the family with any
 * operator and value, next to an IPv4 prefix, must give a connect to
 * ::ffff:a.b.c.d the verdict of the connect to a.b.c.d. */

static void ctx_v4(uint8_t ctx[IOUR_CTX_SIZE], uint32_t a)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(80) };

	sin.sin_addr.s_addr = htonl(a);
	cr_assert_eq(iour_ctx_generic(ctx, IOUR_CTX_SIZE, OP_CONNECT, 0, 0), 0);
	cr_assert_eq(iour_ctx_connect(ctx, IOUR_CTX_SIZE, &sin, sizeof(sin)), 0);
}

static void ctx_mapped(uint8_t ctx[IOUR_CTX_SIZE], uint32_t a)
{
	struct sockaddr_in6 sin6 = { .sin6_family = AF_INET6, .sin6_port = htons(80) };
	uint32_t be = htonl(a);

	sin6.sin6_addr.s6_addr[10] = 0xff;
	sin6.sin6_addr.s6_addr[11] = 0xff;
	memcpy(&sin6.sin6_addr.s6_addr[12], &be, 4);
	cr_assert_eq(iour_ctx_generic(ctx, IOUR_CTX_SIZE, OP_CONNECT, 0, 0), 0);
	cr_assert_eq(iour_ctx_connect(ctx, IOUR_CTX_SIZE, &sin6, sizeof(sin6)), 0);
}

static uint32_t run_prog(const struct iour_prog *p, const uint8_t ctx[IOUR_CTX_SIZE])
{
	struct iour_sim_result res = { .sz = sizeof(res) };

	cr_assert_eq(iour_cbpf_run(iour_prog__insns(p), iour_prog__insn_cnt(p), ctx, IOUR_CTX_SIZE,
				   &res),
		     0);
	return res.allowed;
}

Test(prop_fields, connect_family_in_the_mapped_view)
{
	static const uint32_t ops[] = { IOUR_CMP_EQ,       IOUR_CMP_NE,       IOUR_CMP_LT,
					IOUR_CMP_LE,       IOUR_CMP_GT,       IOUR_CMP_GE,
					IOUR_CMP_ANY_BITS, IOUR_CMP_ALL_BITS, IOUR_CMP_NONE_BITS,
					IOUR_CMP_MASKED_EQ };
	static const uint64_t vals[] = { 0, 1, 2, 3, 8, 9, 10, 11, 0xff };
	static const uint32_t addrs[] = { 0x0a010203, 0x0b000001, 0x0a000000, 0xc0a80001 };
	size_t checked = 0;

	for (size_t o = 0; o < sizeof(ops) / sizeof(ops[0]); o++)
		for (size_t v = 0; v < sizeof(vals) / sizeof(vals[0]); v++)
			for (uint32_t verdict = 0; verdict < 2; verdict++) {
				struct iour_cmp c[2];
				struct iour_filter *f = NULL;
				struct iour_prog *p = NULL;

				memset(c, 0, sizeof(c));
				c[0].sz = c[1].sz = sizeof(c[0]);
				c[0].field = IOUR_FIELD_CONNECT_FAMILY;
				c[0].op = ops[o];
				c[0].value = vals[v];
				if (ops[o] == IOUR_CMP_MASKED_EQ)
					c[0].arg = 0xa; /* AF_INET's bit and more */
				c[1].field = IOUR_FIELD_CONNECT_ADDR4;
				c[1].op = IOUR_CMP_IN_PREFIX;
				c[1].value = 0x0a000000;
				c[1].arg = 8;
				cr_assert_eq(iour_filter__new(NULL, &f), 0);
				cr_assert_eq(iour_filter__set_default(f, OP_CONNECT, !verdict), 0);
				if (iour_filter__add_rule(f, OP_CONNECT, verdict, c, 2)) {
					iour_filter__free(f); /* a value the field refuses */
					continue;
				}
				cr_assert_eq(iour_filter__compile(f, OP_CONNECT, NULL, &p), 0);
				for (size_t a = 0; a < sizeof(addrs) / sizeof(addrs[0]); a++) {
					uint8_t c4[IOUR_CTX_SIZE], c6[IOUR_CTX_SIZE];

					ctx_v4(c4, addrs[a]);
					ctx_mapped(c6, addrs[a]);
					cr_expect_eq(run_prog(p, c6), run_prog(p, c4),
						     "family op %u value %llu (%s rule), %#x: the "
						     "mapped connect is judged otherwise",
						     ops[o], (unsigned long long)vals[v],
						     verdict ? "allow" : "deny", addrs[a]);
					checked++;
				}
				iour_prog__free(p);
				iour_filter__free(f);
			}
	cr_assert_gt(checked, 100);
}

/* The OPENAT context keeps every mode bit the kernel keeps (07777, set-ID
 * and sticky bits included: a deny rule on S_ISUID reads them) when the
 * request creates, and none when it does not (cbpf.h, iour_ctx_open()). */
Test(prop_fields, openat_mode_keeps_every_mode_bit)
{
	for (unsigned int b = 0; b < 16; b++) {
		uint64_t mode = 1ULL << b, got;
		uint8_t ctx[IOUR_CTX_SIZE];

		cr_assert_eq(iour_ctx_generic(ctx, IOUR_CTX_SIZE, OP_OPENAT, 0, 0), 0);
		cr_assert_eq(iour_ctx_open(ctx, IOUR_CTX_SIZE, O_CREAT | O_WRONLY, mode, 0), 0);
		memcpy(&got, ctx + IOUR_CTX_OFF_OPEN_MODE, sizeof(got));
		cr_expect_eq(got, mode & 07777, "mode %#llo with O_CREAT reads as %#llo",
			     (unsigned long long)mode, (unsigned long long)got);
		cr_assert_eq(iour_ctx_generic(ctx, IOUR_CTX_SIZE, OP_OPENAT, 0, 0), 0);
		cr_assert_eq(iour_ctx_open(ctx, IOUR_CTX_SIZE, O_RDONLY, mode, 0), 0);
		memcpy(&got, ctx + IOUR_CTX_OFF_OPEN_MODE, sizeof(got));
		cr_expect_eq(got, 0, "mode %#llo without O_CREAT reads as %#llo",
			     (unsigned long long)mode, (unsigned long long)got);
	}
}
