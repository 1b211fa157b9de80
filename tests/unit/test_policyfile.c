/* SPDX-License-Identifier: MIT */
/*
 * Policy files (policyfile.h): the groups table, every error class of the
 * loader with its exact message and position, round trips (load, save,
 * load, save: byte-identical), and iour_policy__decide() checked against
 * the simulator running independently compiled programs.
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "iouring_restrict/iouring_restrict.h"
#include "base/schema.h"

#define OP_NOP 0
#define OP_READ 22
#define OP_CONNECT 16
#define OP_SOCKET 45
#define OP_UNLINKAT 36

/* ---- groups -------------------------------------------------------------- */

Test(policyfile, groups_table)
{
	static const char *const need[] = { "@file-read", "@file-write", "@file-meta",
					    "@net-client", "@net-server", "@timers", "@sync",
					    "@poll", "@buffers", "@probe", "@libuv", "@fio" };
	int n = iour_group_count(), i, k, cnt;
	uint32_t ops[256];

	cr_assert_geq(n, 12);
	for (i = 0; i < 12; i++)
		cr_assert_geq(iour_group_find(need[i]), 0, "%s", need[i]);
	for (i = 0; i < n; i++) {
		struct iour_group_info gi = { .sz = sizeof(gi) };

		cr_assert_eq(iour_group_get((size_t)i, &gi), 0);
		cr_assert_eq(gi.name[0], '@');
		cr_assert_gt(strlen(gi.help), 10);
		cr_assert_gt(strlen(gi.source), 10);
		cr_assert_eq(iour_group_find(gi.name), i);
		cnt = iour_group_opcodes((size_t)i, 0, ops, 256);
		cr_assert_eq(cnt, (int)gi.nops);
		for (k = 0; k < cnt; k++) {
			cr_assert_geq(iour_opcode_since(ops[k]), 0, "%s: unknown op", gi.name);
			if (k)
				cr_assert_lt(ops[k - 1], ops[k], "%s not ascending", gi.name);
		}
		cnt = iour_group_register_ops((size_t)i, 0, ops, 256);
		cr_assert_eq(cnt, (int)gi.nregister_ops);
		for (k = 1; k < cnt; k++)
			cr_assert_lt(ops[k - 1], ops[k], "%s registers not ascending", gi.name);
	}
	/* "as of" a kernel: READ_MULTISHOT (6.7) is in @file-read for 6.7,
	 * not for 6.6; the count is the same on every machine. */
	i = iour_group_find("FILE-READ");
	cr_assert_eq(iour_group_opcodes((size_t)i, IOUR_KVER(6, 7), NULL, 0) -
			     iour_group_opcodes((size_t)i, IOUR_KVER(6, 6), NULL, 0),
		     1);
	cr_assert_eq(iour_group_opcodes((size_t)i, IOUR_KVER(5, 1), NULL, 0), 2);
	cr_assert_eq(iour_group_find("file-read"), i);
	cr_assert_eq(iour_group_find("@nothing"), -ENOENT);
	cr_assert_eq(iour_group_find(NULL), -EINVAL);
	cr_assert_eq(iour_group_opcodes((size_t)n, 0, NULL, 0), -ENOENT);
	cr_assert_eq(iour_group_opcodes((size_t)i, 0, NULL, 3), -EINVAL);
	cr_assert_eq(iour_group_opcodes((size_t)i, 0, ops, 1), -ERANGE);
	{
		struct iour_group_info gi = { .sz = 8 };

		cr_assert_eq(iour_group_get(0, NULL), -EINVAL);
		cr_assert_eq(iour_group_get(0, &gi), -EINVAL);
		gi.sz = sizeof(gi);
		cr_assert_eq(iour_group_get((size_t)n, &gi), -ENOENT);
	}
}

/* ---- loading errors ------------------------------------------------------ */

struct bad {
	const char *text;
	int rc;
	uint32_t line, col;
	const char *path;
	const char *msg;
};

static const struct bad bad_cases[] = {
	{ "{\"entries\": [", -EBADMSG, 1, 13, "",
	  "invalid JSON at line 1, column 13: unexpected end of input" },
	{ "{\"a\": 1, \"a\": 2}", -EBADMSG, 1, 12, "",
	  "invalid JSON at line 1, column 12: a duplicate key" },
	{ "{\"entries\": [{\"names\": [\"opnat\"], \"action\": \"allow\"}]}", -EBADMSG, 1,
	  25, "entries[0].names[0]", "unknown request opcode \"opnat\" (did you mean \"OPENAT\"?)" },
	{ "{\"registerOps\": [\"register_bufers\"]}", -EBADMSG, 1, 18, "registerOps[0]",
	  "unknown register opcode \"register_bufers\" (did you mean \"REGISTER_BUFFERS\"?)" },
	{ "{\"sqeFlags\": {\"allowed\": [\"fixed_fil\"]}}", -EBADMSG, 1, 27, "sqeFlags.allowed[0]",
	  "unknown SQE flag \"fixed_fil\" (did you mean \"FIXED_FILE\"?)" },
	/* a reversed range: the CLI's reason, at the range */
	{ "{\"entries\": [{\"names\": [\"connect\"], \"action\": \"allow\", \"args\": [{\"field\": "
	  "\"connect.port\", \"op\": \"in\", \"range\": [65535, 1024]}]}]}", -EBADMSG, 1, 112,
	  "entries[0].args[0].range", "the range's low end is above its high end" },
	/* jansson quotes the text ("near 'root'"): the message must not */
	{ "root:$y$j9T$secret:19000:0:99999:7:::\n", -EBADMSG, 1, 4, "",
	  "invalid JSON at line 1, column 4: not valid JSON syntax" },
	{ "{\"entries\": [{\"names\": [], \"action\": \"allow\"}]}", -EBADMSG, 1, 24,
	  "entries[0].names", "an entry must name at least one opcode (\"names\" is empty)" },
	{ "[]", -EBADMSG, 1, 1, "", "expected a policy (a JSON object), found an array" },
	{ "{\n  \"defaultAction\": \"deny\",\n  \"entires\": []\n}", -EBADMSG, 3, 3, "entires",
	  "unknown key 'entires' in a policy (expected one of: comment, version, defaultAction, "
	  "target, compat, noNewPrivs, threads, companion, noFilterFallback, addr4Literal, "
	  "groupsAsOf, requestOps, registerOps, sqeFlags, entries, programs)" },
	{ "{\"entries\":[{\"nmes\":[\"read\"]}]}", -EBADMSG, 1, 14, "entries[0].nmes",
	  "unknown key 'nmes' in an entry (expected one of: comment, names, action, args, "
	  "minKernel)" },
	{ "{\"entries\":[{\"names\":[\"read\", \"readd\"],\"action\":\"allow\"}]}", -EBADMSG, 1, 31,
	  "entries[0].names[1]", "unknown request opcode \"readd\" (did you mean \"READ\"?)" },
	{ "{\"entries\":[{\"names\":[300],\"action\":\"allow\"}]}", -EBADMSG, 1, 23,
	  "entries[0].names[0]", "request opcode 300 is out of range (0 to 255)" },
	{ "{\"entries\":[{\"names\":[\"@nope\"],\"action\":\"allow\"}]}", -EBADMSG, 1, 23,
	  "entries[0].names[0]", "unknown group \"@nope\" (iour-restrict groups lists them)" },
	{ "{\"entries\":[{\"names\":[\"@probe\"],\"action\":\"allow\"}]}", -EBADMSG, 1, 23,
	  "entries[0].names[0]", "group \"@probe\" has no request opcodes (use it in registerOps)" },
	{ "{\"defaultAction\": \"maybe\"}", -EBADMSG, 1, 19, "defaultAction",
	  "unknown defaultAction \"maybe\" (expected one of: \"deny\", \"allow\")" },
	{ "{\"compat\": 2}", -EBADMSG, 1, 12, "compat",
	  "expected compat (a string), found an integer" },
	{ "{\"entries\":[{\"names\":[\"socket\"],\"action\":\"allow\",\"args\":[{\"field\":"
	  "\"socket.family\",\"op\":\"==\",\"value\":\"O_RDONLY\"}]}]}",
	  -EBADMSG, 1, 101, "entries[0].args[0].value",
	  "O_RDONLY belongs to another field: socket.family takes AF_* constants or numbers" },
	{ "{\"entries\":[{\"names\":[\"socket\"],\"action\":\"allow\",\"args\":[{\"field\":"
	  "\"socket.family\",\"op\":\"==\",\"value\":\"AF_NOPE\"}]}]}",
	  -EBADMSG, 1, 101, "entries[0].args[0].value",
	  "unknown constant \"AF_NOPE\" (socket.family takes AF_* constants or numbers)" },
	{ "{\"entries\":[{\"names\":[\"openat\"],\"action\":\"allow\",\"args\":[{\"field\":"
	  "\"socket.family\",\"op\":\"==\",\"value\":2}]}]}",
	  -EBADMSG, 1, 67, "entries[0].args[0].field",
	  "field socket.family does not exist for opcode OPENAT" },
	{ "{\"entries\":[{\"names\":[\"connect\"],\"action\":\"allow\",\"args\":[{\"field\":"
	  "\"connect.port\",\"op\":\"==\",\"value\":70000}]}]}",
	  -EBADMSG, 1, 101, "entries[0].args[0].value",
	  "value out of range for connect.port (at most 0xffff)" },
	{ "{\"entries\":[{\"names\":[\"connect\"],\"action\":\"allow\",\"args\":[{\"field\":"
	  "\"connect.port\",\"op\":\"~\",\"value\":1}]}]}",
	  -EBADMSG, 1, 88, "entries[0].args[0].op",
	  "unknown operator \"~\" (expected ==, !=, <, <=, >, >=, &=, &==, all-bits, none-bits, "
	  "in, not in)" },
	{ "{\"entries\":[{\"names\":[\"connect\"],\"action\":\"allow\",\"args\":[{\"field\":"
	  "\"connect.addr4\",\"op\":\"in\",\"value\":\"10.0.0.0/33\"}]}]}",
	  -EBADMSG, 1, 102, "entries[0].args[0].value", "prefix length \"33\" out of range (0 to 32)" },
	{ "{\"entries\":[{\"names\":[\"read\"],\"action\":\"allow\",\"minKernel\":\"six\"}]}",
	  -EBADMSG, 1, 60, "entries[0].minKernel",
	  "expected a kernel version \"X.Y\" (such as \"6.1\"), found \"six\"" },
	{ "{\"sqeFlags\":{\"allowed\":[\"fixed_file\",\"bogus\"]}}", -EBADMSG, 1, 38,
	  "sqeFlags.allowed[1]", "unknown SQE flag \"bogus\"" },
	{ "{\"registerOps\":[\"register_nothing\"]}", -EBADMSG, 1, 17, "registerOps[0]",
	  "unknown register opcode \"register_nothing\"" },
	{ "{\"version\": 2}", -EBADMSG, 1, 13, "version",
	  "unsupported version (this library reads version 1)" },
	{ "{\"programs\":[{\"name\":\"socket\",\"insns\":[[6,0,0,1],[9,9,9]]}]}", -EBADMSG, 1, 50,
	  "programs[0].insns[1]", "expected an instruction [code, jt, jf, k]" },
};

Test(policyfile, load_errors)
{
	IOUR_OPTS(iour_policy_load_opts, o, .kernel = IOUR_KVER(7, 2));
	size_t i;

	for (i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
		const struct bad *b = &bad_cases[i];
		struct iour_load_error e = { .sz = sizeof(e) };
		struct iour_policy *p = (struct iour_policy *)0x1;
		int rc = iour_policy__load_json(b->text, strlen(b->text), &o, &p, &e);

		cr_expect_eq(rc, b->rc, "case %zu: rc %d", i, rc);
		cr_expect_eq(p, (struct iour_policy *)0x1, "case %zu: out touched", i);
		cr_expect_str_eq(e.message, b->msg, "case %zu", i);
		cr_expect_str_eq(e.path, b->path, "case %zu", i);
		cr_expect_eq(e.line, b->line, "case %zu: line %u", i, e.line);
		cr_expect_eq(e.column, b->col, "case %zu: column %u", i, e.column);
	}
}

/* The unknown-field message lists every field of the request schema, in
 * its order, whole: the list written here from the public view
 * (iouring_restrict/schema.h), not from the loader's own table. */
Test(policyfile, unknown_field_lists_the_schema)
{
	static const char text[] = "{\"entries\":[{\"names\":[\"socket\"],\"action\":\"allow\","
				   "\"args\":[{\"field\":\"bogus\",\"op\":\"==\",\"value\":1}]}]}";
	char want[IOUR_LOAD_ERROR_MSG * 2] = "unknown field \"bogus\" (fields: ";
	struct iour_load_error e = { .sz = sizeof(e) };
	struct iour_policy *p = NULL;
	size_t i;

	for (i = 0; i < (size_t)iour_field_count(); i++) {
		struct iour_field_info fi = { .sz = sizeof(fi) };

		cr_assert_eq(iour_field_get(i, &fi), 0);
		strcat(want, i ? ", " : "");
		strcat(want, fi.name);
	}
	strcat(want, ")");
	cr_assert_lt(strlen(want), sizeof(e.message), "the list outgrew the message");
	cr_assert_eq(iour_policy__load_json(text, strlen(text), NULL, &p, &e), -EBADMSG);
	cr_assert_null(p);
	cr_assert_str_eq(e.message, want);
	cr_assert_str_eq(e.path, "entries[0].args[0].field");
	/* the pinned text of this version's table */
	cr_assert_str_eq(e.message,
			 "unknown field \"bogus\" (fields: user_data, sqe_flags, socket.family, "
			 "socket.type, socket.type_flags, socket.type_raw, socket.protocol, "
			 "open.flags, open.accmode, open.mode, open.resolve, connect.family, "
			 "connect.port, connect.addr4, connect.addr6)");
}

/* A path, or the address of a request other than CONNECT, is no field of
 * the kernel's: the message says so and points to iouring-restrict(7),
 * "WHAT IT CANNOT RESTRICT" (instead of the list, which would not help). */
Test(policyfile, unexposed_field_points_to_what_it_cannot_restrict)
{
	static const struct {
		const char *field, *msg;
	} cases[] = {
		{ "open.path", "unknown field \"open.path\": the kernel's filters see no paths: "
			       "use Landlock, iouring-restrict(7) WHAT IT CANNOT RESTRICT" },
		{ "bind.port", "unknown field \"bind.port\": the kernel's filters see CONNECT's "
			       "address only: iouring-restrict(7) WHAT IT CANNOT RESTRICT" },
	};
	char text[256];
	size_t i;

	for (i = 0; i < IOUR_ARRAY_SIZE(cases); i++) {
		struct iour_load_error e = { .sz = sizeof(e) };
		struct iour_policy *p = NULL;

		snprintf(text, sizeof(text),
			 "{\"entries\":[{\"names\":[\"openat\"],\"action\":\"allow\","
			 "\"args\":[{\"field\":\"%s\",\"op\":\"==\",\"value\":1}]}]}",
			 cases[i].field);
		cr_expect_eq(iour_policy__load_json(text, strlen(text), NULL, &p, &e), -EBADMSG);
		cr_expect_null(p);
		cr_expect_str_eq(e.message, cases[i].msg);
		cr_expect_str_eq(e.path, "entries[0].args[0].field");
	}
}

/* The list the message is written from: whole in a buffer of the size the
 * table gives, cut (NUL-terminated, its true length returned) in a
 * smaller one. */
Test(policyfile, schema_field_names_sized_from_the_table)
{
	char full[IOUR__SCHEMA_FIELD_NAMES_SIZE], small[16];
	size_t n = iour__schema_field_names(full, sizeof(full), false);

	cr_assert_eq(strlen(full), n);
	cr_assert_lt(n, sizeof(full));
	cr_assert(!strncmp(full, "user_data, sqe_flags, ", 22), "%s", full);
	memset(small, 'x', sizeof(small));
	cr_assert_eq(iour__schema_field_names(small, sizeof(small), false), n);
	cr_assert_str_eq(small, "user_data, sqe_");
	cr_assert_eq(iour__schema_field_names(NULL, 0, false), n);
	n = iour__schema_field_names(full, sizeof(full), true);
	cr_assert_eq(strlen(full), n);
	cr_assert(!strncmp(full, "user_data, sqe_flags, socket.*, open.*, connect.*", 50), "%s",
		  full);
}

/* A message too long for the error record's IOUR_LOAD_ERROR_MSG bytes
 * (the name it quotes is long) names the fields by group rather than
 * being cut: it still ends with the list's ')'. */
Test(policyfile, unknown_field_message_is_never_cut)
{
	char name[160], text[512];
	struct iour_load_error e = { .sz = sizeof(e) };
	struct iour_policy *p = NULL;
	size_t n;

	memset(name, 'z', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	snprintf(text, sizeof(text),
		 "{\"entries\":[{\"names\":[\"socket\"],\"action\":\"allow\","
		 "\"args\":[{\"field\":\"%s\",\"op\":\"==\",\"value\":1}]}]}",
		 name);
	cr_assert_eq(iour_policy__load_json(text, strlen(text), NULL, &p, &e), -EBADMSG);
	n = strlen(e.message);
	cr_assert_lt(n, sizeof(e.message) - 1, "cut: %s", e.message);
	cr_assert_eq(e.message[n - 1], ')', "%s", e.message);
	cr_assert(strstr(e.message, "(fields: user_data, sqe_flags, socket.*, open.*, connect.*"),
		  "%s", e.message);
}

Test(policyfile, load_api_errors)
{
	struct iour_policy *p = NULL;
	struct iour_load_error e = { .sz = sizeof(e) };
	IOUR_OPTS(iour_policy_load_opts, o, .flags = 1);

	cr_assert_eq(iour_policy__load_json(NULL, 0, NULL, &p, NULL), -EINVAL);
	cr_assert_eq(iour_policy__load_json("{}", 2, NULL, NULL, NULL), -EINVAL);
	cr_assert_eq(iour_policy__load_json("{}", 2, &o, &p, NULL), -EINVAL);
	e.sz = 4;
	cr_assert_eq(iour_policy__load_json("{}", 2, NULL, &p, &e), -EINVAL);
	e.sz = sizeof(e);
	cr_assert_eq(iour_policy__load_file("/nonexistent/policy.json", NULL, &p, &e), -ENOENT);
	cr_assert_eq(e.line, 0);
	cr_assert_str_eq(e.message,
			 "cannot open /nonexistent/policy.json: No such file or directory");
	cr_assert_eq(iour_policy__load_file("/", NULL, &p, &e), -EISDIR);
	cr_assert_eq(iour_policy__load_json("{}", 2, NULL, &p, NULL), 0);
	iour_policy__free(p);
}

/* A FIFO with no writer: open(2) without O_NONBLOCK waits forever (the
 * test would hang; criterion's --timeout in mk/tests.mk, or the alarm
 * here, turns that into a failure).  Devices and sockets are refused the
 * same way. */
Test(policyfile, load_file_refuses_non_regular, .timeout = 20)
{
	char dir[] = "/tmp/iour-pf-XXXXXX", fifo[64];
	struct iour_load_error e = { .sz = sizeof(e) };
	struct iour_policy *p = NULL;

	cr_assert_not_null(mkdtemp(dir));
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	cr_assert_eq(mkfifo(fifo, 0600), 0);
	cr_assert_eq(iour_policy__load_file(fifo, NULL, &p, &e), -EINVAL);
	cr_assert_not_null(strstr(e.message, "not a regular file (a FIFO)"), "%s", e.message);
	cr_assert_null(p);
	cr_assert_eq(iour_policy__load_file("/dev/null", NULL, &p, &e), -EINVAL);
	cr_assert_not_null(strstr(e.message, "a character device"), "%s", e.message);
	unlink(fifo);
	rmdir(dir);
}

/* A symlink to a file that is not JSON: the error gives the position, not
 * the file's first word. */
Test(policyfile, load_file_error_quotes_nothing)
{
	char path[] = "/tmp/iour-pf-XXXXXX";
	struct iour_load_error e = { .sz = sizeof(e) };
	struct iour_policy *p = NULL;
	int fd = mkstemp(path);

	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, "topsecret:x:0:0\n", 16), 16);
	close(fd);
	cr_assert_eq(iour_policy__load_file(path, NULL, &p, &e), -EBADMSG);
	cr_assert_null(strstr(e.message, "topsecret"), "%s", e.message);
	cr_assert_str_eq(e.message, "invalid JSON at line 1, column 9: not valid JSON syntax");
	unlink(path);
}

/* ---- round trips --------------------------------------------------------- */

static char *save(const struct iour_policy *p)
{
	int n = iour_policy__save_json(p, 0, NULL, 0);
	char *b;

	cr_assert_gt(n, 0);
	b = malloc((size_t)n + 1);
	cr_assert_eq(iour_policy__save_json(p, 0, b, (size_t)n + 1), n);
	cr_assert_eq(strlen(b), (size_t)n);
	return b;
}

static void round_trip(const struct iour_policy *p)
{
	IOUR_OPTS(iour_policy_load_opts, o, .kernel = IOUR_KVER(7, 2));
	struct iour_load_error e = { .sz = sizeof(e) };
	struct iour_policy *q = NULL;
	char *a = save(p), *b;

	cr_assert_eq(iour_policy__load_json(a, strlen(a), &o, &q, &e), 0, "%u:%u %s\n%s", e.line,
		     e.column, e.message, a);
	b = save(q);
	cr_assert_str_eq(a, b);
	iour_policy__free(q);
	free(a);
	free(b);
}

Test(policyfile, round_trip_api_policy)
{
	static const struct iour_insn prog[] = {
		{ 0x20, 0, 0, 16 }, { 0x15, 0, 1, 2 }, { 0x06, 0, 0, 1 }, { 0x06, 0, 0, 0 },
	};
	static const uint64_t ports[] = { 443, 80 };
	struct iour_cmp c[3] = {
		{ .sz = sizeof(c[0]), .field = IOUR_FIELD_CONNECT_PORT, .op = IOUR_CMP_IN_SET,
		  .set = ports, .set_len = 2 },
		{ .sz = sizeof(c[0]), .field = IOUR_FIELD_CONNECT_ADDR6, .op = IOUR_CMP_IN_PREFIX,
		  .arg = 10, .addr6 = { 0xfe, 0x80 } },
		{ .sz = sizeof(c[0]), .field = IOUR_FIELD_OPEN_FLAGS, .op = IOUR_CMP_MASKED_EQ,
		  .arg = 0x41, .value = 0x40 },
	};
	struct iour_ruleset *rs;
	struct iour_filter *f;
	struct iour_policy *p;

	cr_assert_eq(iour_policy__new(NULL, &p), 0);
	round_trip(p);
	cr_assert_eq(iour_ruleset__new(NULL, &rs), 0);
	round_trip(p);
	cr_assert_eq(iour_ruleset__allow_sqe_op(rs, OP_READ), 0);
	cr_assert_eq(iour_ruleset__allow_sqe_op(rs, OP_SOCKET), 0);
	cr_assert_eq(iour_ruleset__allow_register_op(rs, 8), 0);
	cr_assert_eq(iour_ruleset__set_sqe_flags(rs, 0x11, 0x01), 0);
	cr_assert_eq(iour_policy__set_ruleset(p, rs), 0);
	iour_ruleset__free(rs);
	cr_assert_eq(iour_filter__new(NULL, &f), 0);
	cr_assert_eq(iour_filter__add_rule(f, OP_CONNECT, IOUR_ALLOW, c, 1), 0);
	cr_assert_eq(iour_filter__add_rule(f, OP_CONNECT, IOUR_DENY, &c[1], 1), 0);
	cr_assert_eq(iour_filter__set_default(f, OP_CONNECT, IOUR_ALLOW), 0);
	cr_assert_eq(iour_filter__add_rule(f, 18, IOUR_ALLOW, &c[2], 1), 0);
	cr_assert_eq(iour_filter__set_default(f, OP_UNLINKAT, IOUR_DENY), 0);
	cr_assert_eq(iour_policy__set_filter(p, f), 0);
	iour_filter__free(f);
	cr_assert_eq(iour_policy__set_prog(p, OP_SOCKET, prog, 4, 12), 0);
	cr_assert_eq(iour_policy__set_attr(p, IOUR_POLICY_ATTR_COMPAT, IOUR_POLICY_COMPAT_HARD), 0);
	cr_assert_eq(iour_policy__set_attr(p, IOUR_POLICY_ATTR_DEFAULT, IOUR_POLICY_DEFAULT_ALLOW),
		     0);
	round_trip(p);
	{
		/* Two-call sizing and truncation. */
		int n = iour_policy__save_json(p, 0, NULL, 0);
		char small[8];

		cr_assert_eq(iour_policy__save_json(p, 0, small, sizeof(small)), n);
		cr_assert_str_eq(small, "{\n  \"ve");
		cr_assert_eq(iour_policy__save_json(NULL, 0, NULL, 0), -EINVAL);
		cr_assert_eq(iour_policy__save_json(p, 1, NULL, 0), -EINVAL);
		cr_assert_eq(iour_policy__save_json(p, 0, NULL, 4), -EINVAL);
	}
	iour_policy__free(p);
}

/* ---- decide -------------------------------------------------------------- */

static const char tcp_client[] =
	"{ \"defaultAction\": \"deny\", \"entries\": [\n"
	"  { \"names\": [\"@file-read\"], \"action\": \"allow\" },\n"
	"  { \"names\": [\"socket\"], \"action\": \"allow\", \"args\": [\n"
	"      { \"field\": \"socket.family\", \"op\": \"in\", \"values\": [\"AF_INET\", "
	"\"AF_INET6\"] } ] },\n"
	"  { \"names\": [\"connect\"], \"action\": \"deny\", \"args\": [\n"
	"      { \"field\": \"connect.addr4\", \"op\": \"in\", \"value\": \"10.0.0.0/8\" } ] },\n"
	"  { \"names\": [\"connect\"], \"action\": \"deny\", \"args\": [\n"
	"      { \"field\": \"connect.addr4\", \"op\": \"==\", \"value\": \"169.254.169.254\" } ] "
	"},\n"
	"  { \"names\": [\"connect\"], \"action\": \"allow\", \"minKernel\": \"7.2\" }\n"
	"] }\n";

/* The same rules built with the filter API, compiled and run: an oracle
 * independent of the loader and of decide. */
static uint32_t oracle(uint32_t op, const uint8_t *ctx, bool with_min)
{
	static const uint64_t fams[] = { AF_INET, AF_INET6 };
	struct iour_cmp s = { .sz = sizeof(s), .field = IOUR_FIELD_SOCKET_FAMILY,
			      .op = IOUR_CMP_IN_SET, .set = fams, .set_len = 2 };
	struct iour_cmp c1 = { .sz = sizeof(s), .field = IOUR_FIELD_CONNECT_ADDR4,
			       .op = IOUR_CMP_IN_PREFIX, .value = IOUR_IPV4(10, 0, 0, 0), .arg = 8 };
	struct iour_cmp c2 = { .sz = sizeof(s), .field = IOUR_FIELD_CONNECT_ADDR4,
			       .op = IOUR_CMP_EQ, .value = IOUR_IPV4(169, 254, 169, 254) };
	struct iour_sim_result r = { .sz = sizeof(r) };
	struct iour_filter *f;
	struct iour_prog *pr;

	cr_assert_eq(iour_filter__new(NULL, &f), 0);
	cr_assert_eq(iour_filter__add_rule(f, OP_SOCKET, IOUR_ALLOW, &s, 1), 0);
	cr_assert_eq(iour_filter__add_rule(f, OP_CONNECT, IOUR_DENY, &c1, 1), 0);
	cr_assert_eq(iour_filter__add_rule(f, OP_CONNECT, IOUR_DENY, &c2, 1), 0);
	if (with_min)
		cr_assert_eq(iour_filter__add_rule(f, OP_CONNECT, IOUR_ALLOW, NULL, 0), 0);
	cr_assert_eq(iour_filter__compile(f, op, NULL, &pr), 0);
	cr_assert_eq(iour_cbpf_run(iour_prog__insns(pr), iour_prog__insn_cnt(pr), ctx,
				   IOUR_CTX_SIZE, &r),
		     0);
	iour_prog__free(pr);
	iour_filter__free(f);
	return r.allowed;
}

static void connect_ctx(uint8_t *ctx, const char *ip)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(443) };

	inet_pton(AF_INET, ip, &sa.sin_addr);
	cr_assert_eq(iour_ctx_generic(ctx, IOUR_CTX_SIZE, OP_CONNECT, 0, 7), 0);
	cr_assert_eq(iour_ctx_connect(ctx, IOUR_CTX_SIZE, &sa, sizeof(sa)), 0);
}

static struct iour_request_verdict decide(const struct iour_policy *p, const uint8_t *ctx)
{
	struct iour_request_verdict v = { .sz = sizeof(v) };

	cr_assert_eq(iour_policy__decide(p, ctx, IOUR_CTX_SIZE, &v), 0);
	return v;
}

Test(policyfile, decide_against_simulator)
{
	static const struct {
		const char *ip;
		uint32_t verdict, reason, rule;
	} conn[] = {
		{ "10.1.2.3", IOUR_DENY, IOUR_DECIDE_RULE, 0 },
		{ "169.254.169.254", IOUR_DENY, IOUR_DECIDE_RULE, 1 },
		{ "8.8.8.8", IOUR_ALLOW, IOUR_DECIDE_RULE, 2 },
		{ "11.0.0.1", IOUR_ALLOW, IOUR_DECIDE_RULE, 2 },
	};
	IOUR_OPTS(iour_policy_load_opts, o72, .kernel = IOUR_KVER(7, 2));
	IOUR_OPTS(iour_policy_load_opts, o61, .kernel = IOUR_KVER(6, 1));
	struct iour_load_error e = { .sz = sizeof(e) };
	struct iour_policy *p, *old;
	struct iour_request_verdict v;
	uint8_t ctx[IOUR_CTX_SIZE];
	size_t i;

	cr_assert_eq(iour_policy__load_json(tcp_client, strlen(tcp_client), &o72, &p, &e), 0,
		     "%s", e.message);
	cr_assert_eq(iour_policy__load_json(tcp_client, strlen(tcp_client), &o61, &old, &e), 0);
	for (i = 0; i < sizeof(conn) / sizeof(conn[0]); i++) {
		connect_ctx(ctx, conn[i].ip);
		v = decide(p, ctx);
		cr_expect_eq(v.verdict, conn[i].verdict, "%s", conn[i].ip);
		cr_expect_eq(v.verdict, oracle(OP_CONNECT, ctx, true), "%s", conn[i].ip);
		cr_expect_eq(v.reason, conn[i].reason, "%s", conn[i].ip);
		cr_expect_eq(v.rule, conn[i].rule, "%s", conn[i].ip);
		cr_expect_eq(v.opcode, OP_CONNECT);
		/* Before 7.2 the unconditional allow is not there: the opcode's
		 * default (deny) decides what no rule holds for. */
		v = decide(old, ctx);
		cr_expect_eq(v.verdict, oracle(OP_CONNECT, ctx, false), "6.1 %s", conn[i].ip);
		if (conn[i].rule == 2) {
			cr_expect_eq(v.reason, IOUR_DECIDE_OPCODE_DEFAULT);
			cr_expect_eq(v.rule, IOUR_VERDICT_NO_RULE);
		}
	}
	cr_assert_eq(iour_ctx_generic(ctx, IOUR_CTX_SIZE, OP_SOCKET, 0, 0), 0);
	cr_assert_eq(iour_ctx_socket(ctx, IOUR_CTX_SIZE, AF_INET6, SOCK_STREAM, 0), 0);
	v = decide(p, ctx);
	cr_expect_eq(v.verdict, IOUR_ALLOW);
	cr_expect_eq(v.verdict, oracle(OP_SOCKET, ctx, true));
	cr_expect_eq(v.reason, IOUR_DECIDE_RULE);
	cr_expect_eq(v.rule, 0);
	cr_assert_eq(iour_ctx_socket(ctx, IOUR_CTX_SIZE, AF_UNIX, SOCK_STREAM, 0), 0);
	v = decide(p, ctx);
	cr_expect_eq(v.verdict, IOUR_DENY);
	cr_expect_eq(v.verdict, oracle(OP_SOCKET, ctx, true));
	cr_expect_eq(v.reason, IOUR_DECIDE_OPCODE_DEFAULT);
	cr_assert_eq(iour_ctx_generic(ctx, IOUR_CTX_SIZE, OP_READ, 0, 0), 0);
	v = decide(p, ctx);
	cr_expect_eq(v.verdict, IOUR_ALLOW);
	cr_expect_eq(v.reason, IOUR_DECIDE_RULE);
	cr_assert_eq(iour_ctx_generic(ctx, IOUR_CTX_SIZE, OP_UNLINKAT, 0, 0), 0);
	v = decide(p, ctx);
	cr_expect_eq(v.verdict, IOUR_DENY);
	cr_expect_eq(v.reason, IOUR_DECIDE_POLICY_DEFAULT);
	cr_expect_eq(iour_policy__decide(p, ctx, 39, &v), -EINVAL);
	cr_expect_eq(iour_policy__decide(NULL, ctx, IOUR_CTX_SIZE, &v), -EINVAL);
	v.sz = 8;
	cr_expect_eq(iour_policy__decide(p, ctx, IOUR_CTX_SIZE, &v), -EINVAL);
	iour_policy__free(p);
	iour_policy__free(old);
}

Test(policyfile, decide_classic_gate_and_flags)
{
	static const char text[] = "{\"defaultAction\":\"allow\",\"requestOps\":[\"read\",\"socket\"],"
				   "\"sqeFlags\":{\"allowed\":[\"async\"],\"required\":[]},"
				   "\"programs\":[{\"name\":\"socket\",\"pduSize\":12,\"insns\":"
				   "[[32,0,0,16],[21,0,1,2],[6,0,0,1],[6,0,0,0]]}]}";
	struct iour_policy *p;
	struct iour_request_verdict v;
	uint8_t ctx[IOUR_CTX_SIZE];

	cr_assert_eq(iour_policy__load_json(text, strlen(text), NULL, &p, NULL), 0);
	cr_assert_eq(iour_ctx_generic(ctx, IOUR_CTX_SIZE, OP_UNLINKAT, 0, 0), 0);
	v = decide(p, ctx);
	cr_expect_eq(v.verdict, IOUR_DENY);
	cr_expect_eq(v.reason, IOUR_DECIDE_CLASSIC_GATE);
	cr_assert_eq(iour_ctx_generic(ctx, IOUR_CTX_SIZE, OP_READ, 0x01, 0), 0);
	v = decide(p, ctx);
	cr_expect_eq(v.reason, IOUR_DECIDE_SQE_FLAGS);
	cr_expect_eq(v.verdict, IOUR_DENY);
	cr_assert_eq(iour_ctx_generic(ctx, IOUR_CTX_SIZE, OP_READ, 0x10, 0), 0);
	v = decide(p, ctx);
	cr_expect_eq(v.reason, IOUR_DECIDE_CLASSIC_ALLOW);
	cr_expect_eq(v.verdict, IOUR_ALLOW);
	cr_assert_eq(iour_ctx_generic(ctx, IOUR_CTX_SIZE, OP_SOCKET, 0, 0), 0);
	cr_assert_eq(iour_ctx_socket(ctx, IOUR_CTX_SIZE, AF_INET, SOCK_DGRAM, 0), 0);
	v = decide(p, ctx);
	cr_expect_eq(v.reason, IOUR_DECIDE_PROGRAM);
	cr_expect_eq(v.verdict, IOUR_ALLOW);
	cr_assert_eq(iour_ctx_socket(ctx, IOUR_CTX_SIZE, AF_UNIX, SOCK_DGRAM, 0), 0);
	v = decide(p, ctx);
	cr_expect_eq(v.verdict, IOUR_DENY);
	round_trip(p);
	iour_policy__free(p);
}

/* ---- the example policies (examples/policies/) ---------------------------- */

static struct iour_policy *load_example(const char *name)
{
	IOUR_OPTS(iour_policy_load_opts, o, .kernel = IOUR_KVER(7, 2));
	struct iour_load_error e = { .sz = sizeof(e) };
	const char *dir = getenv("IOUR_POLICIES_DIR");
	struct iour_policy *p = NULL;
	char path[512];
	int lvl;

	snprintf(path, sizeof(path), "%s/%s", dir ? dir : "examples/policies", name);
	cr_assert_eq(iour_policy__load_file(path, &o, &p, &e), 0, "%s:%u:%u: %s", path, e.line,
		     e.column, e.message);
	/* Compiles for a kernel with filters (7.2) and one without (6.18). */
	for (lvl = 3; lvl <= 5; lvl += 2) {
		IOUR_OPTS(iour_plan_opts, po, .flags = IOUR_PLAN_FORCE_LEVEL, .level = (uint32_t)lvl);
		struct iour_plan *pl = NULL;

		cr_assert_eq(iour_policy__plan(p, &po, &pl), 0, "%s level %d", name, lvl);
		cr_assert_gt(iour_plan__step_cnt(pl), 0);
		iour_plan__free(pl);
	}
	round_trip(p);
	return p;
}

static void expect(const struct iour_policy *p, const uint8_t *ctx, uint32_t verdict,
		   uint32_t reason, uint32_t rule, const char *what)
{
	struct iour_request_verdict v = decide(p, ctx);

	cr_expect_eq(v.verdict, verdict, "%s: verdict", what);
	cr_expect_eq(v.reason, reason, "%s: reason %u", what, v.reason);
	if (rule != IOUR_VERDICT_NO_RULE || reason != IOUR_DECIDE_RULE)
		cr_expect_eq(v.rule, rule, "%s: rule %u", what, v.rule);
}

static void open_ctx(uint8_t *ctx, uint32_t op, uint64_t flags, uint64_t resolve)
{
	cr_assert_eq(iour_ctx_generic(ctx, IOUR_CTX_SIZE, op, 0, 0), 0);
	cr_assert_eq(iour_ctx_open(ctx, IOUR_CTX_SIZE, flags, 0, resolve), 0);
}

Test(policy_examples, tcp_client)
{
	struct iour_policy *p = load_example("tcp-client.json");
	uint8_t ctx[IOUR_CTX_SIZE];

	connect_ctx(ctx, "10.9.8.7");
	expect(p, ctx, IOUR_DENY, IOUR_DECIDE_RULE, 0, "connect 10/8");
	connect_ctx(ctx, "169.254.169.254");
	expect(p, ctx, IOUR_DENY, IOUR_DECIDE_RULE, 1, "connect metadata");
	connect_ctx(ctx, "93.184.216.34");
	expect(p, ctx, IOUR_ALLOW, IOUR_DECIDE_RULE, 2, "connect public");
	cr_assert_eq(iour_ctx_generic(ctx, IOUR_CTX_SIZE, 45, 0, 0), 0);
	cr_assert_eq(iour_ctx_socket(ctx, IOUR_CTX_SIZE, AF_UNIX, SOCK_STREAM, 0), 0);
	expect(p, ctx, IOUR_DENY, IOUR_DECIDE_OPCODE_DEFAULT, IOUR_VERDICT_NO_RULE, "AF_UNIX");
	cr_assert_eq(iour_ctx_socket(ctx, IOUR_CTX_SIZE, AF_INET, SOCK_DGRAM, 0), 0);
	expect(p, ctx, IOUR_DENY, IOUR_DECIDE_OPCODE_DEFAULT, IOUR_VERDICT_NO_RULE, "UDP");
	/* The other destination paths (doc/security.md 2.1): no payload, so
	 * the example denies them whole; WRITE carries the traffic. */
	{
		static const char *const paths[] = { "SENDMSG", "SEND", "SEND_ZC", "SENDMSG_ZC" };

		for (size_t k = 0; k < 4; k++) {
			cr_assert_eq(iour_ctx_generic(ctx, IOUR_CTX_SIZE,
						      (uint32_t)iour_opcode_from_name(paths[k]), 0, 0),
				     0);
			expect(p, ctx, IOUR_DENY, IOUR_DECIDE_RULE, 0, paths[k]);
		}
	}
	cr_assert_eq(iour_ctx_generic(ctx, IOUR_CTX_SIZE, 23, 0, 0), 0);
	expect(p, ctx, IOUR_ALLOW, IOUR_DECIDE_RULE, 0, "write");
	iour_policy__free(p);
}

Test(policy_examples, file_server)
{
	struct iour_policy *p = load_example("file-server.json");
	uint8_t ctx[IOUR_CTX_SIZE];

	open_ctx(ctx, 28, O_RDONLY, RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS);
	expect(p, ctx, IOUR_ALLOW, IOUR_DECIDE_RULE, 0, "openat2 beneath");
	open_ctx(ctx, 28, O_RDONLY, RESOLVE_NO_MAGICLINKS);
	expect(p, ctx, IOUR_DENY, IOUR_DECIDE_OPCODE_DEFAULT, IOUR_VERDICT_NO_RULE,
	       "openat2 not beneath");
	open_ctx(ctx, 28, O_PATH, RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS);
	expect(p, ctx, IOUR_DENY, IOUR_DECIDE_OPCODE_DEFAULT, IOUR_VERDICT_NO_RULE, "O_PATH");
	open_ctx(ctx, 18, O_RDONLY, 0);
	expect(p, ctx, IOUR_DENY, IOUR_DECIDE_POLICY_DEFAULT, IOUR_VERDICT_NO_RULE, "openat");
	cr_assert_eq(iour_ctx_generic(ctx, IOUR_CTX_SIZE, 45, 0, 0), 0);
	expect(p, ctx, IOUR_DENY, IOUR_DECIDE_POLICY_DEFAULT, IOUR_VERDICT_NO_RULE, "socket");
	cr_assert_eq(iour_ctx_generic(ctx, IOUR_CTX_SIZE, 23, 0, 0), 0);
	expect(p, ctx, IOUR_ALLOW, IOUR_DECIDE_RULE, 0, "write");
	iour_policy__free(p);
}

Test(policy_examples, static_web_server)
{
	struct iour_policy *p = load_example("static-web-server.json");
	uint8_t ctx[IOUR_CTX_SIZE];

	open_ctx(ctx, 18, O_RDONLY | O_CLOEXEC, 0);
	expect(p, ctx, IOUR_ALLOW, IOUR_DECIDE_RULE, 0, "openat read-only");
	open_ctx(ctx, 18, O_WRONLY, 0);
	expect(p, ctx, IOUR_DENY, IOUR_DECIDE_OPCODE_DEFAULT, IOUR_VERDICT_NO_RULE, "write open");
	open_ctx(ctx, 28, O_RDONLY | O_CREAT, 0);
	expect(p, ctx, IOUR_DENY, IOUR_DECIDE_OPCODE_DEFAULT, IOUR_VERDICT_NO_RULE, "O_CREAT");
	cr_assert_eq(iour_ctx_generic(ctx, IOUR_CTX_SIZE, 23, 0, 0), 0);
	expect(p, ctx, IOUR_DENY, IOUR_DECIDE_POLICY_DEFAULT, IOUR_VERDICT_NO_RULE, "write");
	cr_assert_eq(iour_ctx_generic(ctx, IOUR_CTX_SIZE, 22, 0x02, 0), 0);
	expect(p, ctx, IOUR_DENY, IOUR_DECIDE_SQE_FLAGS, IOUR_VERDICT_NO_RULE, "IO_DRAIN");
	cr_assert_eq(iour_ctx_generic(ctx, IOUR_CTX_SIZE, 22, 0x01, 0), 0);
	expect(p, ctx, IOUR_ALLOW, IOUR_DECIDE_RULE, 0, "read fixed file");
	iour_policy__free(p);
}

Test(policy_examples, fio_and_libuv)
{
	struct iour_policy *p = load_example("fio.json");
	uint8_t ctx[IOUR_CTX_SIZE];

	cr_assert_eq(iour_ctx_generic(ctx, IOUR_CTX_SIZE, 1, 0x10, 0), 0);
	expect(p, ctx, IOUR_ALLOW, IOUR_DECIDE_RULE, 0, "fio readv async");
	cr_assert_eq(iour_ctx_generic(ctx, IOUR_CTX_SIZE, 18, 0, 0), 0);
	expect(p, ctx, IOUR_DENY, IOUR_DECIDE_POLICY_DEFAULT, IOUR_VERDICT_NO_RULE, "fio openat");
	iour_policy__free(p);
	p = load_example("libuv.json");
	open_ctx(ctx, 18, O_PATH, 0);
	expect(p, ctx, IOUR_DENY, IOUR_DECIDE_RULE, 0, "libuv O_PATH");
	open_ctx(ctx, 18, O_RDONLY | O_CLOEXEC, 0);
	expect(p, ctx, IOUR_ALLOW, IOUR_DECIDE_RULE, 1, "libuv openat");
	cr_assert_eq(iour_ctx_generic(ctx, IOUR_CTX_SIZE, 29, 0, 0), 0);
	expect(p, ctx, IOUR_ALLOW, IOUR_DECIDE_RULE, 0, "libuv epoll_ctl");
	cr_assert_eq(iour_ctx_generic(ctx, IOUR_CTX_SIZE, 45, 0, 0), 0);
	expect(p, ctx, IOUR_DENY, IOUR_DECIDE_POLICY_DEFAULT, IOUR_VERDICT_NO_RULE, "libuv socket");
	iour_policy__free(p);
}

/* Every test policy loads (tests/policies/good) or is refused with a
 * position (tests/policies/bad); the schema check of the same files is
 * scripts/check-policies.py (make check-policies). */
Test(policy_examples, test_policies)
{
	static const char *const dirs[] = { "tests/policies/good", "tests/policies/bad" };
	int d, seen = 0;

	for (d = 0; d < 2; d++) {
		DIR *dir = opendir(dirs[d]);
		struct dirent *de;

		cr_assert_not_null(dir, "%s", dirs[d]);
		while ((de = readdir(dir))) {
			struct iour_load_error e = { .sz = sizeof(e) };
			struct iour_policy *p = NULL;
			char path[512];
			int rc;

			if (!strstr(de->d_name, ".json"))
				continue;
			snprintf(path, sizeof(path), "%s/%s", dirs[d], de->d_name);
			rc = iour_policy__load_file(path, NULL, &p, &e);
			if (d == 0) {
				cr_expect_eq(rc, 0, "%s:%u:%u: %s", path, e.line, e.column,
					     e.message);
				if (!rc)
					round_trip(p);
			} else {
				cr_expect_eq(rc, -EBADMSG, "%s: %d", path, rc);
				cr_expect_geq(e.line, 1, "%s", path);
			}
			iour_policy__free(p);
			seen++;
		}
		closedir(dir);
	}
	cr_assert_geq(seen, 3);
}

/* ---- defaultAction "deny" and what a file leaves out (issue 18) ------- */

static struct iour_policy *load_text(const char *text)
{
	IOUR_OPTS(iour_policy_load_opts, o, .kernel = IOUR_KVER(7, 2));
	struct iour_load_error e = { .sz = sizeof(e) };
	struct iour_policy *p = NULL;

	cr_assert_eq(iour_policy__load_json(text, strlen(text), &o, &p, &e), 0, "%s", e.message);
	return p;
}

static uint32_t decide_flags(const struct iour_policy *p, uint32_t flags, uint32_t *reason)
{
	struct iour_request_verdict v = { .sz = sizeof(v) };
	uint8_t ctx[IOUR_CTX_SIZE];

	cr_assert_eq(iour_ctx_generic(ctx, IOUR_CTX_SIZE, OP_NOP, flags, 0), 0);
	cr_assert_eq(iour_policy__decide(p, ctx, IOUR_CTX_SIZE, &v), 0);
	*reason = v.reason;
	return v.verdict;
}

/* Before 1.1.0 a "deny" file without registerOps/sqeFlags had no classic
 * part: every register opcode and every SQE flag was allowed. */
Test(policyfile, default_deny_denies_register_ops_and_flags)
{
	static const char *const deny[] = {
		"{\"entries\":[{\"names\":[\"nop\"],\"action\":\"allow\"}]}",
		"{\"defaultAction\":\"deny\",\"entries\":[{\"names\":[\"nop\"],\"action\":\"allow\"}]}",
	};
	size_t i;

	for (i = 0; i < 2; i++) {
		struct iour_policy *p = load_text(deny[i]);
		char *s = save(p);
		uint32_t why;

		cr_expect_not_null(strstr(s, "\"registerOps\": []"), "%s", s);
		cr_expect_not_null(strstr(s, "\"allowed\": []"), "%s", s);
		cr_expect_eq(decide_flags(p, 0, &why), IOUR_ALLOW);
		cr_expect_eq(decide_flags(p, IOUR_SQE_ASYNC, &why), IOUR_DENY, "case %zu", i);
		cr_expect_eq(why, IOUR_DECIDE_SQE_FLAGS);
		cr_expect_eq(decide_flags(p, IOUR_SQE_FIXED_FILE, &why), IOUR_DENY);
		round_trip(p);
		free(s);
		iour_policy__free(p);
	}
	/* "allow" leaves them unrestricted, as before */
	{
		struct iour_policy *p = load_text("{\"defaultAction\":\"allow\"}");
		char *s = save(p);
		uint32_t why;

		cr_expect_null(strstr(s, "registerOps"), "%s", s);
		cr_expect_eq(decide_flags(p, IOUR_SQE_ASYNC, &why), IOUR_ALLOW);
		free(s);
		iour_policy__free(p);
	}
	/* listed ones stay allowed */
	{
		struct iour_policy *p = load_text("{\"registerOps\":[\"@probe\"],\"sqeFlags\":{"
						  "\"allowed\":[\"async\"]},\"entries\":[{\"names\":"
						  "[\"nop\"],\"action\":\"allow\"}]}");
		uint32_t why;

		cr_expect_eq(decide_flags(p, IOUR_SQE_ASYNC, &why), IOUR_ALLOW);
		cr_expect_eq(decide_flags(p, IOUR_SQE_IO_LINK, &why), IOUR_DENY);
		iour_policy__free(p);
	}
}

/* An API policy that leaves register opcodes and flags unrestricted saves
 * under "deny" as a file that lists them all, so it loads to the same. */
Test(policyfile, default_deny_save_keeps_unrestricted_parts)
{
	struct iour_policy *p = NULL, *q;
	char *s;
	uint32_t why;

	cr_assert_eq(iour_policy__new(NULL, &p), 0);
	s = save(p);
	cr_expect_not_null(strstr(s, "REGISTER_PROBE") ? s : strstr(s, "register_probe"), "%s", s);
	q = load_text(s);
	cr_expect_eq(decide_flags(q, IOUR_SQE_ASYNC | IOUR_SQE_FIXED_FILE, &why), IOUR_DENY);
	cr_expect_eq(why, IOUR_DECIDE_POLICY_DEFAULT); /* no entry: NOP by the default */
	round_trip(p);
	free(s);
	iour_policy__free(q);
	iour_policy__free(p);
}

/* decide (and so `check`) on a CONNECT whose sockaddr_in6 is 24 bytes
 * (SIN6_LEN_RFC2133): 7.2.13 and 7.3.4 fill the address from it and deny
 * by the addr6 rule; the model said "allow" before (doc/kernel.md 4.3). */
Test(policyfile, decide_connect_addr6_short_sockaddr)
{
	static const char text[] =
		"{\"requestOps\":[\"connect\"],\"entries\":["
		"{\"names\":[\"connect\"],\"action\":\"deny\",\"args\":[{\"field\":\"connect.addr6\","
		"\"op\":\"in\",\"value\":\"::1/128\"}]},"
		"{\"names\":[\"connect\"],\"action\":\"allow\"}]}";
	struct iour_policy *p = load_text(text);
	struct sockaddr_in6 s6 = { .sin6_family = AF_INET6, .sin6_port = htons(1) };
	struct iour_request_verdict v = { .sz = sizeof(v) };
	uint8_t ctx[IOUR_CTX_SIZE];
	uint32_t len;

	s6.sin6_addr.s6_addr[15] = 1;
	for (len = 22; len <= sizeof(s6); len++) {
		cr_assert_eq(iour_ctx_generic(ctx, IOUR_CTX_SIZE, OP_CONNECT, 0, 0), 0);
		cr_assert_eq(iour_ctx_connect(ctx, IOUR_CTX_SIZE, &s6, len), 0);
		cr_assert_eq(iour_policy__decide(p, ctx, IOUR_CTX_SIZE, &v), 0);
		cr_expect_eq(v.verdict, len >= 24 ? IOUR_DENY : IOUR_ALLOW, "addr_len %u", len);
	}
	iour_policy__free(p);
}

/* ---- one schema for the CLI and policy files (issue 20) ------------------ */

/* Constants the CLI's rule language always accepted and policy files once
 * refused load, are saved under their name, and round-trip. */
Test(policyfile, schema_constants_shared_with_cli)
{
	static const struct {
		const char *field, *name;
	} c[] = {
		{ "socket.protocol", "IPPROTO_TCP" }, /* loaded before, too */
#ifdef IPPROTO_MPTCP
		{ "socket.protocol", "IPPROTO_MPTCP" },
#endif
#ifdef AF_XDP
		{ "socket.family", "AF_XDP" },
#endif
#ifdef AF_MCTP
		{ "socket.family", "AF_MCTP" },
#endif
	};
	size_t i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		IOUR_OPTS(iour_policy_load_opts, o, .kernel = IOUR_KVER(7, 2));
		struct iour_load_error e = { .sz = sizeof(e) };
		struct iour_policy *p = NULL;
		char text[512], *saved;

		snprintf(text, sizeof(text),
			 "{\"defaultAction\":\"deny\",\"entries\":[{\"names\":[\"socket\"],"
			 "\"action\":\"allow\",\"args\":[{\"field\":\"%s\",\"op\":\"==\","
			 "\"value\":\"%s\"}]}]}",
			 c[i].field, c[i].name);
		cr_assert_eq(iour_policy__load_json(text, strlen(text), &o, &p, &e), 0,
			     "%s: %u:%u %s", c[i].name, e.line, e.column, e.message);
		saved = save(p);
		cr_assert(strstr(saved, c[i].name), "%s not saved by name:\n%s", c[i].name, saved);
		free(saved);
		round_trip(p);
		iour_policy__free(p);
	}
}

/* ---- bounds and meaning kept across save and load ------------------------ */

/* A program's pduSize is 0 to 24 (doc/policy-files.md): every value from
 * below to above the range loads exactly when it is inside it. */
Test(policyfile, program_pdu_size_bounds)
{
	IOUR_OPTS(iour_policy_load_opts, o, .kernel = IOUR_KVER(7, 2));
	char text[160];
	int v;

	for (v = -2; v <= 30; v++) {
		struct iour_load_error e = { .sz = sizeof(e) };
		struct iour_policy *p = NULL;
		int rc;

		snprintf(
			text, sizeof(text),
			"{\"programs\":[{\"name\":\"openat\",\"pduSize\":%d,\"insns\":[[6,0,0,1]]}]}",
			v);
		rc = iour_policy__load_json(text, strlen(text), &o, &p, &e);
		if (v >= 0 && v <= 24) {
			cr_expect_eq(rc, 0, "pduSize %d: %s", v, e.message);
		} else {
			cr_expect_eq(rc, -EBADMSG, "pduSize %d: rc %d", v, rc);
			cr_expect_str_eq(e.path, "programs[0].pduSize", "pduSize %d", v);
			cr_expect_str_eq(e.message, "expected a payload size 0 to 24", "pduSize %d",
					 v);
		}
		iour_policy__free(p);
	}
}

static uint32_t decide_connect(const struct iour_policy *p, const uint8_t *addr, bool v6)
{
	struct sockaddr_in6 s6 = { .sin6_family = AF_INET6, .sin6_port = htons(443) };
	struct sockaddr_in s4 = { .sin_family = AF_INET, .sin_port = htons(443) };
	struct iour_request_verdict v = { .sz = sizeof(v) };
	uint8_t ctx[IOUR_CTX_SIZE];

	cr_assert_eq(iour_ctx_generic(ctx, IOUR_CTX_SIZE, OP_CONNECT, 0, 0), 0);
	if (v6) {
		memcpy(&s6.sin6_addr, addr, 16);
		cr_assert_eq(iour_ctx_connect(ctx, IOUR_CTX_SIZE, &s6, sizeof(s6)), 0);
	} else {
		memcpy(&s4.sin_addr, addr, 4);
		cr_assert_eq(iour_ctx_connect(ctx, IOUR_CTX_SIZE, &s4, sizeof(s4)), 0);
	}
	cr_assert_eq(iour_policy__decide(p, ctx, IOUR_CTX_SIZE, &v), 0);
	return v.verdict;
}

/* Saving and loading again keeps what a prefix rule decides: for every
 * prefix length, the prefix's own address, the last address inside it and
 * the first one outside it (its bit plen flipped) get the same verdict
 * from the loaded policy as from the one saved, and the prefix itself
 * decides as a prefix (inside denied, outside allowed). */
Test(policyfile, save_load_keeps_address_prefixes)
{
	static const uint8_t base6[16] = { 0x20, 0x01, 0x0d, 0xb8, 0xa5, 0x5a, 0x12, 0x34,
					   0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0, 0x0f, 0xf0 };
	static const uint8_t base4[4] = { 10, 171, 205, 96 };
	uint32_t plen, cases = 0;
	int v6;

	for (v6 = 0; v6 <= 1; v6++) {
		uint32_t bits = v6 ? 128 : 32;

		for (plen = 0; plen <= bits; plen++) {
			struct iour_cmp c = { .sz = sizeof(c),
					      .op = IOUR_CMP_IN_PREFIX,
					      .arg = plen };
			uint8_t probe[3][16];
			struct iour_policy *p = NULL, *q;
			struct iour_filter *f;
			uint32_t i;
			char *s;

			if (v6) {
				c.field = IOUR_FIELD_CONNECT_ADDR6;
				memcpy(c.addr6, base6, 16);
			} else {
				c.field = IOUR_FIELD_CONNECT_ADDR4;
				c.value = ((uint32_t)base4[0] << 24) | ((uint32_t)base4[1] << 16) |
					  ((uint32_t)base4[2] << 8) | base4[3];
			}
			/* the operand's bits past the prefix are cleared */
			memcpy(probe[0], v6 ? base6 : base4, bits / 8);
			for (i = plen; i < bits; i++)
				probe[0][i / 8] &= (uint8_t) ~(0x80U >> (i % 8));
			if (!v6)
				c.value &= plen ? ~0U << (32 - plen) : 0;
			else
				memcpy(c.addr6, probe[0], 16);
			memcpy(probe[1], probe[0], 16);
			for (i = plen; i < bits; i++)
				probe[1][i / 8] |= (uint8_t)(0x80U >> (i % 8));
			memcpy(probe[2], probe[0], 16);
			if (plen > 0)
				probe[2][(plen - 1) / 8] ^= (uint8_t)(0x80U >> ((plen - 1) % 8));

			cr_assert_eq(iour_filter__new(NULL, &f), 0);
			cr_assert_eq(iour_filter__add_rule(f, OP_CONNECT, IOUR_DENY, &c, 1), 0,
				     "v6 %d plen %u", v6, plen);
			cr_assert_eq(iour_filter__set_default(f, OP_CONNECT, IOUR_ALLOW), 0);
			cr_assert_eq(iour_policy__new(NULL, &p), 0);
			cr_assert_eq(iour_policy__set_filter(p, f), 0);
			iour_filter__free(f);
			s = save(p);
			q = load_text(s);
			for (i = 0; i < 3; i++) {
				uint32_t want = i < 2 || plen == 0 ? IOUR_DENY : IOUR_ALLOW;

				cr_expect_eq(decide_connect(p, probe[i], v6), want,
					     "v6 %d plen %u probe %u: saved policy", v6, plen, i);
				cr_expect_eq(decide_connect(q, probe[i], v6), want,
					     "v6 %d plen %u probe %u: loaded again from\n%s", v6,
					     plen, i, s);
				cases++;
			}
			free(s);
			iour_policy__free(q);
			iour_policy__free(p);
		}
	}
	fprintf(stderr, "prefix save/load: %u verdicts compared\n", cases);
}
