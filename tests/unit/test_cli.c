/* SPDX-License-Identifier: MIT */
/*
 * The iour-restrict command-line tool, run as a user runs it (the binary
 * `make` builds, linked against the shared library; under test-asan the
 * sanitized build).  Every output is checked against the library computing
 * the same thing through its API, or against the running kernel.
 * `make test-run` and `make test-asan` set IOUR_TOOLS_DIR; elsewhere these
 * tests skip.
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "child.h"
#include "sqpoll_attack.h"
#include "iouring_restrict/iouring_restrict.h"
#include "uring_avail.h"

#define MAX_ARGS 64

struct run {
	int status; /* exit status, or 128 + signal */
	char *out;  /* stdout, NUL-terminated (may hold NULs before) */
	size_t out_len;
	char *err;  /* stderr, NUL-terminated */
};

static const char *tool_path(void)
{
	static char path[4096];
	const char *dir = getenv("IOUR_TOOLS_DIR");

	if (!dir)
		cr_skip_test("IOUR_TOOLS_DIR is not set (run through make test-run)");
	snprintf(path, sizeof(path), "%s/iour-restrict", dir);
	cr_assert_eq(access(path, X_OK), 0, "%s is not built", path);
	return path;
}

static char *slurp(int fd, size_t *len)
{
	off_t n = lseek(fd, 0, SEEK_END);
	char *buf;

	cr_assert_geq(n, 0);
	buf = malloc((size_t)n + 1);
	cr_assert_not_null(buf);
	cr_assert_eq(pread(fd, buf, (size_t)n, 0), n);
	buf[n] = '\0';
	if (len)
		*len = (size_t)n;
	return buf;
}

/* Runs @prog with @argv (argv[0] included) and an optional extra
 * environment variable "NAME=VALUE". */
static void run_prog(struct run *r, const char *prog, char *const argv[], const char *env)
{
	int out = memfd_create("cli-out", 0), err = memfd_create("cli-err", 0), st;
	pid_t pid;

	cr_assert(out >= 0 && err >= 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		dup2(out, 1);
		dup2(err, 2);
		if (env)
			putenv((char *)env);
		execvp(prog, argv);
		_exit(125);
	}
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	r->out = slurp(out, &r->out_len);
	r->err = slurp(err, NULL);
	close(out);
	close(err);
}

/* Runs the tool with the NULL-terminated arguments that follow. */
static void run_env(struct run *r, const char *env, ...)
{
	char *argv[MAX_ARGS];
	const char *a;
	va_list ap;
	int n = 0;

	argv[n++] = (char *)tool_path();
	va_start(ap, env);
	while ((a = va_arg(ap, const char *)) != NULL) {
		cr_assert_lt(n, MAX_ARGS - 1);
		argv[n++] = (char *)a;
	}
	va_end(ap);
	argv[n] = NULL;
	run_prog(r, argv[0], argv, env);
}

#define run(r, ...) run_env(r, NULL, __VA_ARGS__, (const char *)NULL)

static void run_free(struct run *r)
{
	free(r->out);
	free(r->err);
}

/* Value of "key": N in the tool's JSON (one key per line). */
static long long json_int(const char *json, const char *key)
{
	char pat[64];
	const char *p;

	snprintf(pat, sizeof(pat), "\"%s\": ", key);
	p = strstr(json, pat);
	cr_assert_not_null(p, "no %s in %s", key, json);
	return strtoll(p + strlen(pat), NULL, 10);
}

static int json_true(const char *json, const char *key)
{
	char pat[64];

	snprintf(pat, sizeof(pat), "\"%s\": true", key);
	return strstr(json, pat) != NULL;
}

/* python3 -m json.tool accepts the text. */
static void assert_valid_json(const char *text)
{
	char path[4096];
	char *argv[] = { "python3", "-m", "json.tool", path, NULL };
	struct run r;
	int fd;

	cr_assert_eq(test_tmp_template(path, sizeof(path), "iour-cli-json-", NULL), 0);
	fd = mkstemp(path);

	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	run_prog(&r, "python3", argv, NULL);
	unlink(path);
	cr_assert_eq(r.status, 0, "python3 -m json.tool refused it: %s\n%s", r.err, text);
	run_free(&r);
}

/* ---- probe */

Test(cli, probe_json_is_valid_and_matches_the_library)
{
	UNIT_REQUIRE_URING();
	struct iour_features f = { .sz = sizeof(f) };
	IOUR_OPTS(iour_probe_opts, po, .flags = IOUR_PROBE_NO_CACHE);
	struct run r;
	int level = iour_feature_level();

	cr_assert_geq(level, 0);
	cr_assert_eq(iour_probe(&po, &f), 0);
	run(&r, "probe", "--json", "--no-cache");
	cr_assert_eq(r.status, 0, "%s", r.err);
	assert_valid_json(r.out);
	cr_assert_eq(json_int(r.out, "level"), level);
	cr_assert_eq(json_int(r.out, "kernel_level"), f.kernel_level);
	cr_assert_eq(json_int(r.out, "op_last"), f.op_last);
	cr_assert_eq(json_int(r.out, "reg_last"), f.reg_last);
	cr_assert_eq(json_int(r.out, "setup_err"), f.setup_err);
	cr_assert_eq(json_int(r.out, "nr_supported_ops"), f.nr_supported_ops);
	cr_assert_eq(json_true(r.out, "split_gates"), !!f.split_gates);
	cr_assert_eq(json_true(r.out, "forced"), 0);
	/* the 7.3.4 measurements, as the library's probe answered them */
	cr_assert_eq(json_true(r.out, "socket_flags_hidden"),
		     !!(f.flags & IOUR_FEATURES_SOCKET_FLAGS_HIDDEN), "%s", r.out);
	cr_assert_eq(json_true(r.out, "task_set_gates_filters"),
		     !!(f.flags & IOUR_FEATURES_TASK_SET_GATES_FILTERS), "%s", r.out);
	cr_assert(strstr(r.out, "\"socket_flags_hidden\": "), "%s", r.out);
	cr_assert(strstr(r.out, "\"task_set_gates_filters\": "), "%s", r.out);
	cr_assert(strstr(r.out, iour_feature_level_str(level)), "%s", r.out);
	/* This machine (Linux 6.18) has QUERY but no task restrictions. */
	cr_assert_eq(level, IOUR_LEVEL_QUERY, "this kernel is expected at level 3");
	cr_assert(strstr(r.out, "\"query\": \"yes\""));
	cr_assert(strstr(r.out, "\"task_restrictions\": \"no\""));
	fprintf(stderr, "cli: probe --json: level %d, %u/%u opcodes, valid JSON\n", level,
		f.op_last, f.reg_last);
	run_free(&r);
}

Test(cli, probe_text_and_min_level)
{
	struct iour_features f = { .sz = sizeof(f) };
	int level = iour_feature_level();
	char line[128], arg[16];
	struct run r;

	run(&r, "probe");
	cr_assert_eq(r.status, 0, "%s", r.err);
	snprintf(line, sizeof(line), "feature level     %d: %s\n", level,
		 iour_feature_level_str(level));
	cr_assert(strstr(r.out, line), "no '%s' in\n%s", line, r.out);
	snprintf(line, sizeof(line), "=> %d  %s\n", level, iour_feature_level_str(level));
	cr_assert(strstr(r.out, line), "the ladder marks the level:\n%s", r.out);
	cr_assert_eq(iour_probe(NULL, &f), 0);
	cr_assert(strstr(r.out, (f.flags & IOUR_FEATURES_SOCKET_FLAGS_HIDDEN)
					? "socket flags      hidden: "
					: "socket flags      visible "),
		  "%s", r.out);
	cr_assert(strstr(r.out, (f.flags & IOUR_FEATURES_TASK_SET_GATES_FILTERS)
					? "task set gates    filters too: "
					: "task set gates    no "),
		  "%s", r.out);
	run_free(&r);

	snprintf(arg, sizeof(arg), "%d", level);
	run(&r, "probe", "--min-level", arg);
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_free(&r);
	if (level < IOUR_LEVEL_MAX) {
		snprintf(arg, sizeof(arg), "%d", level + 1);
		run(&r, "probe", "--min-level", arg);
		cr_assert_eq(r.status, 1);
		cr_assert(strstr(r.err, "below the required"), "%s", r.err);
		run_free(&r);
	}
}

Test(cli, probe_forced_level)
{
	UNIT_REQUIRE_URING();
	struct run r;

	run_env(&r, "IOUR_FEATURE_LEVEL=1", "probe", "--json", (const char *)NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	assert_valid_json(r.out);
	cr_assert_eq(json_int(r.out, "level"), 1);
	cr_assert_eq(json_int(r.out, "kernel_level"), iour_feature_level());
	cr_assert(json_true(r.out, "forced"));
	cr_assert(strstr(r.out, "\"ring_restrictions\": \"no\""), "%s", r.out);
	run_free(&r);
}

/* ---- names */

/* Counts the table rows "NUM NAME SINCE" and checks each against the API. */
static int check_rows(const char *out, int which)
{
	const char *line = out;
	int rows = 0;

	while (*line) {
		const char *nl = strchr(line, '\n');
		char name[64], since[16], want[16];
		unsigned num, maj, min;
		int s;

		if (line[0] != '#' && sscanf(line, " %i %63s %15s", &num, name, since) == 3) {
			const char *api = which == 0   ? iour_opcode_name(num)
					  : which == 1 ? iour_register_op_name(num)
						       : iour_sqe_flag_name(num);
			s = which == 0	 ? iour_opcode_since(num)
			    : which == 1 ? iour_register_op_since(num)
					 : iour_sqe_flag_since(num);
			cr_assert_not_null(api, "row %u", num);
			cr_assert_str_eq(name, api);
			maj = ((unsigned)s >> 16) & 0xff;
			min = ((unsigned)s >> 8) & 0xff;
			snprintf(want, sizeof(want), "%u.%u", maj, min);
			cr_assert_str_eq(since, want, "row %s", name);
			rows++;
		}
		if (!nl)
			break;
		line = nl + 1;
	}
	return rows;
}

Test(cli, names_tables_match_the_library)
{
	static const char *kernels[] = { "5.10", "6.1", "6.18", "7.0", "7.2" };
	struct run r;
	int total = 0;

	run(&r, "names", "ops", "--kernel", "6.1");
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_eq(check_rows(r.out, 0), 49, "Linux 6.1 has 49 request opcodes:\n%s", r.out);
	run_free(&r);

	for (size_t i = 0; i < sizeof(kernels) / sizeof(kernels[0]); i++) {
		uint32_t kv = 0;
		unsigned maj, min;

		cr_assert_eq(sscanf(kernels[i], "%u.%u", &maj, &min), 2);
		kv = IOUR_KVER(maj, min);
		run(&r, "names", "ops", "--kernel", kernels[i]);
		cr_assert_eq(check_rows(r.out, 0), iour_opcodes_up_to(kv, NULL, 0), "%s", kernels[i]);
		total += iour_opcodes_up_to(kv, NULL, 0);
		run_free(&r);
		run(&r, "names", "register", "--kernel", kernels[i]);
		cr_assert_eq(check_rows(r.out, 1), iour_register_ops_up_to(kv, NULL, 0));
		total += iour_register_ops_up_to(kv, NULL, 0);
		run_free(&r);
		run(&r, "names", "flags", "--kernel", kernels[i]);
		cr_assert_eq(check_rows(r.out, 2), __builtin_popcount(iour_sqe_flags_up_to(kv)));
		total += __builtin_popcount(iour_sqe_flags_up_to(kv));
		run_free(&r);
	}
	/* Without a table name: all three, complete. */
	run(&r, "names");
	cr_assert_eq(r.status, 0);
	cr_assert(strstr(r.out, "# request opcodes (IORING_OP_*): 65"), "%s", r.out);
	cr_assert(strstr(r.out, "# register opcodes (IORING_REGISTER_*): 38"));
	cr_assert(strstr(r.out, "# SQE flags (IOSQE_*): 7"));
	run_free(&r);
	fprintf(stderr, "cli: names: %d table rows checked against the API\n", total);
}

/* ---- ruleset */

/* Parses --format hex output into bytes; returns the byte count. */
static size_t parse_hex(const char *out, uint8_t *buf, size_t cap)
{
	size_t n = 0;
	unsigned v;

	for (const char *p = out; *p;) {
		if (*p == '\n') {
			p++;
			continue;
		}
		cr_assert(isxdigit((unsigned char)p[0]) && isxdigit((unsigned char)p[1]),
			  "not hex: %s", out);
		cr_assert_eq(sscanf(p, "%2x", &v), 1);
		cr_assert_lt(n, cap);
		buf[n++] = (uint8_t)v;
		p += 2;
	}
	return n;
}

static void check_hex(const struct iour_ruleset *rs, const struct iour_export_opts *eo,
		      const struct run *r, int line)
{
	uint8_t want[4096], got[4096];
	size_t len = sizeof(want), n;
	int cnt;

	cr_assert_eq(r->status, 0, "line %d: %s", line, r->err);
	cnt = iour_ruleset__export(rs, eo, want, &len);
	cr_assert_gt(cnt, 0);
	n = parse_hex(r->out, got, sizeof(got));
	cr_assert_eq(n, len, "line %d: %zu bytes, the API exports %zu", line, n, len);
	cr_assert_eq(memcmp(got, want, len), 0, "line %d: entries differ", line);
	/* one line of 32 hex digits per entry */
	for (int i = 0; i < cnt; i++)
		cr_assert_eq(r->out[i * 33 + 32], '\n');
}

Test(cli, ruleset_hex_matches_export)
{
	UNIT_REQUIRE_URING();
	struct iour_clamp_report cr = { .sz = sizeof(cr) };
	IOUR_OPTS(iour_export_opts, eo);
	struct iour_features f = { .sz = sizeof(f) };
	struct iour_ruleset *rs;
	struct run r;
	int cases = 0;

	/* NOP on 6.18 */
	cr_assert_eq(iour_ruleset__new(NULL, &rs), 0);
	cr_assert_eq(iour_ruleset__allow_sqe_op(rs, IOUR_OP_NOP), 0);
	cr_assert_eq(iour_ruleset__set_sqe_flags(rs, 0, 0), 0);
	eo.kver = IOUR_KVER(6, 18);
	run(&r, "ruleset", "--allow-op", "NOP", "--kernel", "6.18", "--format", "hex");
	check_hex(rs, &eo, &r, __LINE__);
	cases++;
	run_free(&r);

	/* the same for the running kernel (the default target) */
	cr_assert_eq(iour_probe(NULL, &f), 0);
	eo.kver = 0;
	eo.op_last = f.op_last;
	eo.reg_last = f.reg_last;
	eo.flags = f.split_gates ? IOUR_EXPORT_SPLIT : IOUR_EXPORT_COUPLED;
	run(&r, "ruleset", "--allow-op", "IORING_OP_NOP", "--format", "hex");
	check_hex(rs, &eo, &r, __LINE__);
	cases++;
	run_free(&r);
	iour_ruleset__free(rs);

	/* two sides and flags, split gates of 7.0 */
	cr_assert_eq(iour_ruleset__new(NULL, &rs), 0);
	cr_assert_eq(iour_ruleset__allow_sqe_op(rs, IOUR_OP_READ), 0);
	cr_assert_eq(iour_ruleset__allow_sqe_op(rs, IOUR_OP_WRITE), 0);
	cr_assert_eq(iour_ruleset__allow_register_op(rs, IOUR_REGISTER_BUFFERS), 0);
	cr_assert_eq(iour_ruleset__allow_register_op(rs, IOUR_UNREGISTER_BUFFERS), 0);
	cr_assert_eq(iour_ruleset__set_sqe_flags(rs, IOUR_SQE_IO_LINK,
						 IOUR_SQE_ASYNC), 0);
	memset(&eo, 0, sizeof(eo));
	eo.sz = sizeof(eo);
	eo.kver = IOUR_KVER(7, 0);
	run(&r, "ruleset", "--allow-op", "read, write", "--allow-register", "BUFFERS",
	    "--allow-register", "1", "--flags-allowed", "IO_LINK", "--flags-required",
	    "IOSQE_ASYNC", "--kernel", "7.0", "--format", "hex");
	check_hex(rs, &eo, &r, __LINE__);
	cases++;
	run_free(&r);
	/* overrides of the limits and gates */
	eo.kver = 0;
	eo.op_last = 40;
	eo.reg_last = 20;
	eo.flags = IOUR_EXPORT_COUPLED;
	run(&r, "ruleset", "--allow-op", "read,write", "--allow-register", "BUFFERS,1",
	    "--flags-allowed", "IO_LINK", "--flags-required", "ASYNC", "--op-last", "40",
	    "--reg-last", "20", "--coupled", "--format", "hex");
	check_hex(rs, &eo, &r, __LINE__);
	cases++;
	run_free(&r);
	iour_ruleset__free(rs);

	/* clamping: URING_CMD128 (6.19) on 6.1, an empty register list */
	cr_assert_eq(iour_ruleset__new(NULL, &rs), 0);
	cr_assert_eq(iour_ruleset__allow_sqe_op(rs, IOUR_OP_NOP), 0);
	cr_assert_eq(iour_ruleset__allow_sqe_op(rs, IOUR_OP_URING_CMD128), 0);
	cr_assert_eq(iour_ruleset__set_sqe_flags(rs, 0, 0), 0);
	cr_assert_eq(iour_ruleset__deny_all_register_ops(rs), 0);
	memset(&eo, 0, sizeof(eo));
	eo.sz = sizeof(eo);
	eo.kver = IOUR_KVER(6, 1);
	eo.clamp = &cr;
	run(&r, "ruleset", "--allow-op", "NOP,URING_CMD128", "--deny-register", "--kernel", "6.1",
	    "--format", "hex");
	check_hex(rs, &eo, &r, __LINE__);
	cr_assert_eq(cr.n_sqe_ops, 1);
	cr_assert(strstr(r.err, "clamped: 1 request opcode(s)") && strstr(r.err, "URING_CMD128"),
		  "the clamp report goes to stderr: %s", r.err);
	cases++;
	run_free(&r);
	iour_ruleset__free(rs);

	/* a set that restricts nothing, on the first kernel with restrictions */
	cr_assert_eq(iour_ruleset__new(NULL, &rs), 0);
	memset(&eo, 0, sizeof(eo));
	eo.sz = sizeof(eo);
	eo.kver = IOUR_KVER(5, 10);
	run(&r, "ruleset", "--kernel", "5.10", "--format", "hex");
	check_hex(rs, &eo, &r, __LINE__);
	cases++;
	run_free(&r);
	iour_ruleset__free(rs);
	fprintf(stderr, "cli: ruleset --format hex: %d sets byte-identical to the export\n", cases);
}

Test(cli, ruleset_text_and_c)
{
	char want[128];
	struct run r;

	run(&r, "ruleset", "--allow-op", "NOP,URING_CMD128", "--kernel", "6.1", "--format", "c");
	cr_assert_eq(r.status, 0, "%s", r.err);
	/* 6.1 coupled: NOP, flags, then every register opcode of 6.1 (26) */
	snprintf(want, sizeof(want), "struct io_uring_restriction restrictions[%d] = {",
		 2 + iour_register_op_last(IOUR_KVER(6, 1)));
	cr_assert(strstr(r.out, want), "%s", r.out);
	cr_assert(strstr(r.out, ".sqe_op = 0 }, /* IORING_OP_NOP */"));
	cr_assert(strstr(r.out, "/*   request:  URING_CMD128 */"), "%s", r.out);
	run_free(&r);

	run(&r, "ruleset", "--allow-op", "NOP,READ", "--allow-register", "PROBE", "--kernel",
	    "7.0");
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, "split gates"), "%s", r.out);
	cr_assert(strstr(r.out, "# request opcodes:  NOP,READ\n"), "%s", r.out);
	cr_assert(strstr(r.out, "# register opcodes: REGISTER_PROBE\n"), "%s", r.out);
	cr_assert(strstr(r.out, "# 4 entries (64 bytes)"), "%s", r.out);
	cr_assert(strstr(r.out, "allow request READ"));
	cr_assert(strstr(r.out, "allowed SQE flags: none"));
	cr_assert(strstr(r.out, "clamped: nothing"));
	run_free(&r);
}

/* The C outputs compile against the system's kernel headers, with the
 * expected size. */
static void assert_compiles(const char *header, const char *code, const char *use)
{
	char path[4096];
	char *argv[] = { "cc", "-std=c11", "-Wall", "-Wextra", "-Werror", "-fsyntax-only", path,
			 NULL };
	struct run r;
	FILE *f;
	int fd;

	cr_assert_eq(test_tmp_template(path, sizeof(path), "iour-cli-c-", ".c"), 0);
	fd = mkstemps(path, 2);

	cr_assert_geq(fd, 0);
	f = fdopen(fd, "w");
	cr_assert_not_null(f);
	fprintf(f, "#include <%s>\n%s\n_Static_assert(%s, \"size\");\n", header, code, use);
	fclose(f);
	run_prog(&r, "cc", argv, NULL);
	unlink(path);
	cr_assert_eq(r.status, 0, "cc refused:\n%s\n%s", code, r.err);
	run_free(&r);
}

Test(cli, c_formats_compile)
{
	struct run r;

	run(&r, "ruleset", "--allow-op", "READ,WRITE,URING_CMD128", "--allow-register", "BUFFERS",
	    "--flags-required", "ASYNC", "--kernel", "6.1", "--format", "c");
	cr_assert_eq(r.status, 0, "%s", r.err);
	assert_compiles("linux/io_uring.h", r.out, "sizeof(restrictions) == 5 * 16");
	run_free(&r);
	run(&r, "filter", "--op", "CONNECT", "--allow", "addr4 in 10.0.0.0/8", "--format", "c");
	cr_assert_eq(r.status, 0, "%s", r.err);
	assert_compiles("linux/filter.h", r.out, "sizeof(filter) > 8");
	run_free(&r);
}

/* ---- filter and sim */

static struct iour_cmp cmp(uint32_t field, uint32_t op, uint64_t value, uint64_t arg)
{
	struct iour_cmp c;

	memset(&c, 0, sizeof(c));
	c.sz = sizeof(c);
	c.field = field;
	c.op = op;
	c.value = value;
	c.arg = arg;
	return c;
}

static struct iour_prog *compile(struct iour_filter *f, uint32_t op)
{
	struct iour_prog *p = NULL;

	cr_assert_eq(iour_filter__compile(f, op, NULL, &p), 0);
	return p;
}

static char *disasm(const struct iour_prog *p, uint32_t op, uint32_t fmt, size_t *len)
{
	char *buf;

	*len = 0;
	cr_assert_eq(iour_cbpf_disasm(iour_prog__insns(p), iour_prog__insn_cnt(p), op, fmt, NULL,
				      len), 0);
	buf = malloc(*len);
	cr_assert_not_null(buf);
	cr_assert_eq(iour_cbpf_disasm(iour_prog__insns(p), iour_prog__insn_cnt(p), op, fmt, buf,
				      len), 0);
	return buf;
}

/* The text output without its '#' description lines. */
static const char *listing_of(const char *out)
{
	while (*out == '#') {
		const char *nl = strchr(out, '\n');

		cr_assert_not_null(nl);
		out = nl + 1;
	}
	return out;
}

/* The tool's listing equals the API's for the same rules. */
static void check_listing(struct iour_filter *f, uint32_t op, const struct run *r, int line)
{
	struct iour_prog *p = compile(f, op);
	size_t len;
	char *want = disasm(p, op, IOUR_DISASM_TEXT, &len);

	cr_assert_eq(r->status, 0, "line %d: %s", line, r->err);
	cr_assert_str_eq(listing_of(r->out), want, "line %d", line);
	free(want);
	iour_prog__free(p);
}

Test(cli, filter_listing_equals_api_disasm)
{
	struct iour_filter *f;
	struct iour_cmp c[4];
	uint64_t set[3] = { AF_INET, AF_INET6, 17 }, modes[2] = { 2, 6 };
	struct run r;
	int cases = 0;

	/* The example of the manual. */
	cr_assert_eq(iour_filter__new(NULL, &f), 0);
	c[0] = cmp(IOUR_FIELD_SOCKET_FAMILY, IOUR_CMP_EQ, AF_INET, 0);
	c[1] = cmp(IOUR_FIELD_SOCKET_TYPE, IOUR_CMP_EQ, SOCK_STREAM, 0);
	cr_assert_eq(iour_filter__add_rule(f, IOUR_OP_SOCKET, IOUR_ALLOW, c, 2), 0);
	c[0] = cmp(IOUR_FIELD_SOCKET_FAMILY, IOUR_CMP_EQ, AF_UNIX, 0);
	cr_assert_eq(iour_filter__add_rule(f, IOUR_OP_SOCKET, IOUR_ALLOW, c, 1), 0);
	cr_assert_eq(iour_filter__set_default(f, IOUR_OP_SOCKET, IOUR_DENY), 0);
	run(&r, "filter", "--op", "SOCKET", "--allow", "family==AF_INET,type==SOCK_STREAM",
	    "--allow", "family==AF_UNIX", "--default", "deny");
	check_listing(f, IOUR_OP_SOCKET, &r, __LINE__);
	cr_assert(strstr(r.out, "# SOCKET (45): a filter,"), "%s", r.out);
	cr_assert(strstr(r.out, "pdu_size 12"));
	cases++;
	run_free(&r);

	/* --format c and raw are the disassembler's outputs byte for byte */
	{
		struct iour_prog *p = compile(f, IOUR_OP_SOCKET);
		size_t len;
		char *want = disasm(p, IOUR_OP_SOCKET, IOUR_DISASM_C_ARRAY, &len);

		run(&r, "filter", "--op", "45", "--allow", "family == AF_INET, type == SOCK_STREAM",
		    "--allow", "family==1", "--format", "c");
		cr_assert_eq(r.status, 0, "%s", r.err);
		cr_assert_str_eq(r.out, want);
		free(want);
		run_free(&r);
		want = disasm(p, IOUR_OP_SOCKET, IOUR_DISASM_RAW, &len);
		run(&r, "filter", "--op", "socket", "--allow", "family==2,type==1", "--allow",
		    "family==AF_LOCAL", "--format", "raw");
		cr_assert_eq(r.status, 0, "%s", r.err);
		cr_assert_eq(r.out_len, 8 * iour_prog__insn_cnt(p));
		cr_assert_eq(memcmp(r.out, want, len), 0);
		free(want);
		run_free(&r);
		iour_prog__free(p);
		cases += 2;
	}
	iour_filter__free(f);

	/* sets, ranges, masks, type flags, deny first; default allow */
	cr_assert_eq(iour_filter__new(NULL, &f), 0);
	c[0] = cmp(IOUR_FIELD_SOCKET_TYPE_FLAGS, IOUR_CMP_ANY_BITS, SOCK_NONBLOCK, 0);
	cr_assert_eq(iour_filter__add_rule(f, IOUR_OP_SOCKET, IOUR_DENY, c, 1), 0);
	c[0] = cmp(IOUR_FIELD_SOCKET_FAMILY, IOUR_CMP_IN_SET, 0, 0);
	c[0].set = set;
	c[0].set_len = 3;
	c[1] = cmp(IOUR_FIELD_SOCKET_PROTOCOL, IOUR_CMP_IN_RANGE, 0, 17);
	c[2] = cmp(IOUR_FIELD_SOCKET_TYPE_RAW, IOUR_CMP_MASKED_EQ, 0x2, 0xf);
	cr_assert_eq(iour_filter__add_rule(f, IOUR_OP_SOCKET, IOUR_ALLOW, c, 3), 0);
	c[0] = cmp(IOUR_FIELD_USER_DATA, IOUR_CMP_GT, 0x100000000ULL, 0);
	c[1] = cmp(IOUR_FIELD_SOCKET_PROTOCOL, IOUR_CMP_NOT_IN_RANGE, 5, 9);
	cr_assert_eq(iour_filter__add_rule(f, IOUR_OP_SOCKET, IOUR_DENY, c, 2), 0);
	cr_assert_eq(iour_filter__set_default(f, IOUR_OP_SOCKET, IOUR_ALLOW), 0);
	run(&r, "filter", "--op", "IORING_OP_SOCKET", "--deny", "type_flags &= SOCK_NONBLOCK",
	    "--allow", "family in {AF_INET, AF_INET6, 17}, protocol in [0, IPPROTO_UDP], "
	    "type_raw & 0xf == SOCK_DGRAM",
	    "--deny", "user_data > 0x100000000, protocol not in [5, 9]", "--default", "allow");
	check_listing(f, IOUR_OP_SOCKET, &r, __LINE__);
	cases++;
	run_free(&r);
	iour_filter__free(f);

	/* OPENAT2: access mode, bit tests, resolve, octal mode, NOT_IN_SET */
	cr_assert_eq(iour_filter__new(NULL, &f), 0);
	c[0] = cmp(IOUR_FIELD_OPEN_ACCMODE, IOUR_CMP_EQ, O_RDONLY, 0);
	c[1] = cmp(IOUR_FIELD_OPEN_FLAGS, IOUR_CMP_MASKED_EQ, 0, O_CREAT | O_TRUNC);
	c[2] = cmp(IOUR_FIELD_OPEN_RESOLVE, IOUR_CMP_ANY_BITS, 0x08 | 0x10, 0);
	cr_assert_eq(iour_filter__add_rule(f, IOUR_OP_OPENAT2, IOUR_ALLOW, c, 3), 0);
	c[0] = cmp(IOUR_FIELD_OPEN_MODE, IOUR_CMP_NOT_IN_SET, 0, 0);
	c[0].set = modes;
	c[0].set_len = 2;
	c[1] = cmp(IOUR_FIELD_OPEN_FLAGS, IOUR_CMP_ANY_BITS, O_CREAT, 0);
	c[2] = cmp(IOUR_FIELD_OPEN_MODE, IOUR_CMP_LE, 0644, 0);
	cr_assert_eq(iour_filter__add_rule(f, IOUR_OP_OPENAT2, IOUR_ALLOW, c, 3), 0);
	run(&r, "filter", "--op", "openat2", "--allow",
	    "accmode==O_RDONLY, flags & O_CREAT|O_TRUNC == 0, resolve &= RESOLVE_BENEATH|RESOLVE_IN_ROOT",
	    "--allow", "mode !in {2, 6}, flags & O_CREAT != 0, mode <= 0644");
	check_listing(f, IOUR_OP_OPENAT2, &r, __LINE__);
	cr_assert(strstr(r.out, "# default deny"));
	cases++;
	run_free(&r);
	iour_filter__free(f);

	/* CONNECT: prefixes, IPv6, port range */
	cr_assert_eq(iour_filter__new(NULL, &f), 0);
	c[0] = cmp(IOUR_FIELD_CONNECT_ADDR4, IOUR_CMP_IN_PREFIX, IOUR_IPV4(10, 0, 0, 0), 8);
	c[1] = cmp(IOUR_FIELD_CONNECT_PORT, IOUR_CMP_IN_RANGE, 1024, 65535);
	cr_assert_eq(iour_filter__add_rule(f, IOUR_OP_CONNECT, IOUR_ALLOW, c, 2), 0);
	c[0] = cmp(IOUR_FIELD_CONNECT_ADDR6, IOUR_CMP_EQ, 0, 0);
	c[0].addr6[15] = 1;
	cr_assert_eq(iour_filter__add_rule(f, IOUR_OP_CONNECT, IOUR_ALLOW, c, 1), 0);
	c[0] = cmp(IOUR_FIELD_CONNECT_ADDR6, IOUR_CMP_NOT_IN_PREFIX, 0, 10);
	c[0].addr6[0] = 0xfe;
	c[0].addr6[1] = 0x80;
	c[1] = cmp(IOUR_FIELD_CONNECT_FAMILY, IOUR_CMP_NE, AF_UNIX, 0);
	c[2] = cmp(IOUR_FIELD_CONNECT_ADDR4, IOUR_CMP_NE, IOUR_IPV4(127, 0, 0, 1), 0);
	cr_assert_eq(iour_filter__add_rule(f, IOUR_OP_CONNECT, IOUR_DENY, c, 1), 0);
	cr_assert_eq(iour_filter__add_rule(f, IOUR_OP_CONNECT, IOUR_ALLOW, c + 1, 2), 0);
	run(&r, "filter", "--op", "CONNECT", "--allow", "addr4 in 10.0.0.0/8, port in [1024,65535]",
	    "--allow", "addr6 == ::1", "--deny", "connect.addr6 not in fe80::/10", "--allow",
	    "family != AF_UNIX, addr4 != 127.0.0.1");
	check_listing(f, IOUR_OP_CONNECT, &r, __LINE__);
	cases++;
	run_free(&r);
	iour_filter__free(f);

	/* an opcode without payload; a constant verdict */
	cr_assert_eq(iour_filter__new(NULL, &f), 0);
	c[0] = cmp(IOUR_FIELD_SQE_FLAGS, IOUR_CMP_ANY_BITS, IOUR_SQE_ASYNC, 0);
	cr_assert_eq(iour_filter__add_rule(f, IOUR_OP_READ, IOUR_DENY, c, 1), 0);
	cr_assert_eq(iour_filter__add_rule(f, IOUR_OP_READ, IOUR_ALLOW, NULL, 0), 0);
	cr_assert_eq(iour_filter__set_default(f, IOUR_OP_NOP, IOUR_ALLOW), 0);
	run(&r, "filter", "--op", "READ", "--deny", "sqe_flags &= IOSQE_ASYNC", "--allow", "true");
	check_listing(f, IOUR_OP_READ, &r, __LINE__);
	cases++;
	run_free(&r);
	run(&r, "filter", "--op", "NOP", "--default", "allow");
	check_listing(f, IOUR_OP_NOP, &r, __LINE__);
	cr_assert(strstr(r.out, "always allows"), "%s", r.out);
	cases++;
	run_free(&r);
	iour_filter__free(f);
	fprintf(stderr, "cli: filter: %d listings identical to the API's\n", cases);
}

Test(cli, filter_warns_about_open_flags_equality)
{
	struct run r;

	run(&r, "filter", "--op", "OPENAT", "--allow", "flags==O_RDONLY");
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.err, "warning") && strstr(r.err, "O_LARGEFILE"), "%s", r.err);
	run_free(&r);
	run(&r, "filter", "--op", "OPENAT", "--allow", "accmode==O_RDONLY");
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_str_eq(r.err, "");
	run_free(&r);
}

/* Runs the API's program on the API's context and compares with one sim
 * output line "CTX: VERDICT (return value R, N instructions executed)". */
static void check_sim_line(const struct iour_prog *p, const uint8_t *ctx, const char *out,
			   const char *ctxtext)
{
	struct iour_sim_result res = { .sz = sizeof(res) };
	char want[512];

	cr_assert_eq(iour_cbpf_run(iour_prog__insns(p), iour_prog__insn_cnt(p), ctx,
				   IOUR_CTX_SIZE, &res), 0);
	snprintf(want, sizeof(want), "%s: %s (return value %u, %u instruction%s executed)\n",
		 ctxtext, res.allowed ? "allow" : "deny", res.retval, res.executed,
		 res.executed == 1 ? "" : "s");
	cr_assert(strstr(out, want), "want '%s' in\n%s", want, out);
}

Test(cli, sim_verdicts_match_the_simulator)
{
	struct iour_filter *f;
	struct iour_prog *p;
	struct iour_cmp c[2];
	uint8_t ctx[IOUR_CTX_SIZE];
	struct run r;

	cr_assert_eq(iour_filter__new(NULL, &f), 0);
	c[0] = cmp(IOUR_FIELD_SOCKET_FAMILY, IOUR_CMP_EQ, AF_INET, 0);
	c[1] = cmp(IOUR_FIELD_SOCKET_TYPE, IOUR_CMP_EQ, SOCK_STREAM, 0);
	cr_assert_eq(iour_filter__add_rule(f, IOUR_OP_SOCKET, IOUR_ALLOW, c, 2), 0);
	c[0] = cmp(IOUR_FIELD_SOCKET_FAMILY, IOUR_CMP_EQ, AF_UNIX, 0);
	cr_assert_eq(iour_filter__add_rule(f, IOUR_OP_SOCKET, IOUR_ALLOW, c, 1), 0);
	p = compile(f, IOUR_OP_SOCKET);

	run(&r, "sim", "--op", "SOCKET", "--allow", "family==AF_INET,type==SOCK_STREAM", "--allow",
	    "family==AF_UNIX", "--default", "deny", "--ctx", "family=2,type=1", "--ctx",
	    "family=AF_INET6,type=SOCK_STREAM", "--ctx", "family=AF_UNIX,type=SOCK_DGRAM|SOCK_CLOEXEC",
	    "--ctx", "family=AF_INET,type=SOCK_STREAM|SOCK_NONBLOCK,protocol=6,user_data=7");
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, "family=2,type=1: allow"), "%s", r.out);
	cr_assert(strstr(r.out, "family=AF_INET6,type=SOCK_STREAM: deny (return value 0"));
	cr_assert(strstr(r.out, "family=AF_UNIX,type=SOCK_DGRAM|SOCK_CLOEXEC: allow"));

	cr_assert_eq(iour_ctx_generic(ctx, sizeof(ctx), IOUR_OP_SOCKET, 0, 0), 0);
	cr_assert_eq(iour_ctx_socket(ctx, sizeof(ctx), AF_INET, SOCK_STREAM, 0), 0);
	check_sim_line(p, ctx, r.out, "family=2,type=1");
	cr_assert_eq(iour_ctx_socket(ctx, sizeof(ctx), AF_INET6, SOCK_STREAM, 0), 0);
	check_sim_line(p, ctx, r.out, "family=AF_INET6,type=SOCK_STREAM");
	cr_assert_eq(iour_ctx_socket(ctx, sizeof(ctx), AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0), 0);
	check_sim_line(p, ctx, r.out, "family=AF_UNIX,type=SOCK_DGRAM|SOCK_CLOEXEC");
	cr_assert_eq(iour_ctx_generic(ctx, sizeof(ctx), IOUR_OP_SOCKET, 0, 7), 0);
	cr_assert_eq(iour_ctx_socket(ctx, sizeof(ctx), AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 6), 0);
	check_sim_line(p, ctx, r.out, "family=AF_INET,type=SOCK_STREAM|SOCK_NONBLOCK,protocol=6,user_data=7");
	run_free(&r);

	/* --expect turns a verdict into the exit status */
	run(&r, "sim", "--op", "SOCKET", "--allow", "family==AF_UNIX", "--ctx", "family=AF_UNIX",
	    "--expect", "allow");
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_free(&r);
	run(&r, "sim", "--op", "SOCKET", "--allow", "family==AF_UNIX", "--ctx", "family=AF_UNIX",
	    "--ctx", "family=AF_INET", "--expect", "allow");
	cr_assert_eq(r.status, 1);
	cr_assert(strstr(r.err, "1 of 2 context(s)"), "%s", r.err);
	run_free(&r);
	iour_prog__free(p);
	iour_filter__free(f);

	/* OPENAT: the kernel's O_LARGEFILE makes flags==O_RDONLY fail */
	run(&r, "sim", "--op", "OPENAT", "--allow", "flags==O_RDONLY", "--ctx", "flags=O_RDONLY",
	    "--expect", "deny");
	cr_assert_eq(r.status, 0, "%s%s", r.out, r.err);
	run_free(&r);

	/* CONNECT contexts against the API's */
	cr_assert_eq(iour_filter__new(NULL, &f), 0);
	c[0] = cmp(IOUR_FIELD_CONNECT_ADDR4, IOUR_CMP_IN_PREFIX, IOUR_IPV4(10, 0, 0, 0), 8);
	c[1] = cmp(IOUR_FIELD_CONNECT_PORT, IOUR_CMP_GE, 1024, 0);
	cr_assert_eq(iour_filter__add_rule(f, IOUR_OP_CONNECT, IOUR_ALLOW, c, 2), 0);
	p = compile(f, IOUR_OP_CONNECT);
	run(&r, "sim", "--op", "CONNECT", "--allow", "addr4 in 10.0.0.0/8, port >= 1024", "--ctx",
	    "addr4=10.1.2.3,port=8080", "--ctx", "addr4=10.1.2.3,port=80", "--ctx",
	    "addr4=11.0.0.1,port=8080");
	cr_assert_eq(r.status, 0, "%s", r.err);
	{
		struct sockaddr_in in = { .sin_family = AF_INET };
		static const struct {
			uint32_t addr;
			uint16_t port;
			const char *text;
		} k[] = { { IOUR_IPV4(10, 1, 2, 3), 8080, "addr4=10.1.2.3,port=8080" },
			  { IOUR_IPV4(10, 1, 2, 3), 80, "addr4=10.1.2.3,port=80" },
			  { IOUR_IPV4(11, 0, 0, 1), 8080, "addr4=11.0.0.1,port=8080" } };

		for (size_t i = 0; i < 3; i++) {
			in.sin_addr.s_addr = htonl(k[i].addr);
			in.sin_port = htons(k[i].port);
			cr_assert_eq(iour_ctx_generic(ctx, sizeof(ctx), IOUR_OP_CONNECT, 0, 0), 0);
			cr_assert_eq(iour_ctx_connect(ctx, sizeof(ctx), &in, sizeof(in)), 0);
			check_sim_line(p, ctx, r.out, k[i].text);
		}
	}
	cr_assert(strstr(r.out, "addr4=10.1.2.3,port=8080: allow"));
	cr_assert(strstr(r.out, "addr4=10.1.2.3,port=80: deny"));
	cr_assert(strstr(r.out, "addr4=11.0.0.1,port=8080: deny"));
	run_free(&r);
	iour_prog__free(p);
	iour_filter__free(f);
}

/* ---- verify */

Test(cli, verify_restricted_ring_is_enforced)
{
	UNIT_REQUIRE_URING();
	struct run r;

	run(&r, "verify", "--allow-op", "NOP,READ,SOCKET");
	cr_assert_eq(r.status, 0, "%s%s", r.out, r.err);
	cr_assert(strstr(r.out, "enforced: the kernel answered all 11 requests as the set says, "
			       "and every request opcode the set allows was tried"),
		  "%s", r.out);
	cr_assert(strstr(r.out, "  MSG_RING         deny     deny     -EACCES"), "%s", r.out);
	cr_assert(strstr(r.out, "allowed request opcodes tried as allowed: 3 of 3"), "%s", r.out);
	cr_assert(strstr(r.out, "  NOP              allow    allow    0"), "%s", r.out);
	cr_assert(strstr(r.out, "  WRITE            deny     deny     -EACCES"), "%s", r.out);
	cr_assert(strstr(r.out, "  NOP+ASYNC        deny     deny     -EACCES"), "%s", r.out);
	cr_assert_null(strstr(r.out, "NOT ENFORCED"));
	run_free(&r);

	/* allowed flags and a closed register side change the expectations */
	run(&r, "verify", "--allow-op", "NOP,WRITE", "--flags-allowed", "ASYNC",
	    "--deny-register");
	cr_assert_eq(r.status, 0, "%s%s", r.out, r.err);
	cr_assert(strstr(r.out, "  NOP+ASYNC        allow    allow    0"), "%s", r.out);
	cr_assert(strstr(r.out, "  WRITE            allow    allow"), "%s", r.out);
	run_free(&r);

	/* a required flag denies every plain request */
	run(&r, "verify", "--allow-op", "NOP", "--flags-required", "ASYNC");
	cr_assert_eq(r.status, 0, "%s%s", r.out, r.err);
	cr_assert(strstr(r.out, "  NOP              deny     deny     -EACCES"), "%s", r.out);
	cr_assert(strstr(r.out, "  NOP+ASYNC        allow    allow    0"), "%s", r.out);
	run_free(&r);
}

/* Allowed opcodes the check cannot submit are named, and the verdict never
 * says "all" about them. */
Test(cli, verify_names_allowed_opcodes_it_could_not_try)
{
	UNIT_REQUIRE_URING();
	struct run r;

	run(&r, "verify", "--allow-op", "NOP,READ,CLOSE,STATX");
	cr_assert_eq(r.status, 0, "%s%s", r.out, r.err);
	cr_assert(strstr(r.out, "allowed request opcodes tried as allowed: 2 of 4"), "%s", r.out);
	cr_assert(strstr(r.out, "  tried: NOP READ\n"), "%s", r.out);
	cr_assert(strstr(r.out, "  not tried (the check cannot prepare them): CLOSE STATX\n"), "%s",
		  r.out);
	cr_assert(strstr(r.out, "enforced as far as tried: the kernel answered the 11 requests as "
				"the set says; 2 of the 4 request opcodes the set allows were not "
				"tried as allowed"),
		  "%s", r.out);
	cr_assert_null(strstr(r.out, "answered all"), "%s", r.out);
	run_free(&r);

	/* A required flag: the allowed opcodes are only tried as denials. */
	run(&r, "verify", "--allow-op", "READ", "--flags-required", "FIXED_FILE");
	cr_assert_eq(r.status, 0, "%s%s", r.out, r.err);
	cr_assert(strstr(r.out, "tried as allowed: 0 of 1"), "%s", r.out);
	cr_assert(strstr(r.out, "not tried as allowed (a required SQE flag denies the plain "
				"requests): READ\n"),
		  "%s", r.out);
	cr_assert(strstr(r.out, "fixed-file table is not sealed"), "%s", r.out);
	cr_assert_null(strstr(r.out, "answered all"), "%s", r.out);
	run_free(&r);
}

/* Lint: a set that requires FIXED_FILE or allows MSG_RING is warned about
 * (the fixed-file table is not sealed, doc/security.md). */
Test(cli, ruleset_warns_that_fixed_files_are_not_sealed)
{
	UNIT_REQUIRE_URING();
	struct run r;

	run(&r, "ruleset", "--allow-op", "READ", "--flags-required", "FIXED_FILE",
	    "--deny-register");
	cr_assert_eq(r.status, 0, "%s%s", r.out, r.err);
	cr_assert(strstr(r.err, "warning: requiring FIXED_FILE does not seal the ring's "
				"fixed-file table: MSG_RING"),
		  "%s", r.err);
	cr_assert_null(strstr(r.err, "warning: MSG_RING is allowed"), "%s", r.err);
	run_free(&r);

	run(&r, "ruleset", "--allow-op", "READ,MSG_RING", "--flags-allowed", "none");
	cr_assert_eq(r.status, 0, "%s%s", r.out, r.err);
	cr_assert(strstr(r.err, "warning: MSG_RING is allowed"), "%s", r.err);
	cr_assert_null(strstr(r.err, "FIXED_FILE"), "%s", r.err);
	run_free(&r);

	run(&r, "ruleset", "--allow-op", "READ,WRITE", "--flags-allowed", "none");
	cr_assert_eq(r.status, 0, "%s%s", r.out, r.err);
	cr_assert_null(strstr(r.err, "warning"), "%s", r.err);
	run_free(&r);
}

/* ---- exec */

Test(cli, exec_companion_blocks_rings_in_the_command_only)
{
	UNIT_REQUIRE_URING();
	struct iour_features f = { .sz = sizeof(f) };
	IOUR_OPTS(iour_probe_opts, po, .flags = IOUR_PROBE_NO_CACHE);
	char script[4200];
	struct run r;

	run(&r, "exec", "--no-new-privs", "--", tool_path(), "probe", "--json", "--no-cache");
	cr_assert_eq(r.status, 0, "%s", r.err);
	assert_valid_json(r.out);
	cr_assert_eq(json_int(r.out, "level"), 0, "io_uring is unusable under the companion");
	cr_assert_eq(json_int(r.out, "setup_err"), -ENOSYS);
	cr_assert(strstr(r.out, "\"io_uring\": \"no\""));
	cr_assert_eq(json_int(r.out, "seccomp_mode"), 2);
	cr_assert_eq(json_int(r.out, "no_new_privs"), 1);
	run_free(&r);

	/* the parent is unaffected */
	cr_assert_eq(iour_probe(&po, &f), 0);
	cr_assert_eq(f.io_uring, IOUR_AVAIL_YES);
	cr_assert_eq(f.seccomp_mode, 0);
	run(&r, "probe", "--json", "--no-cache");
	cr_assert_eq(json_int(r.out, "level"), iour_feature_level());
	run_free(&r);

	/* EPERM, through a shell: the children of the command inherit it */
	snprintf(script, sizeof(script),
		 "'%s' probe --json --no-cache && '%s' verify --allow-op NOP; echo \"verify=$?\"",
		 tool_path(), tool_path());
	run(&r, "exec", "--companion-errno", "EPERM", "--no-new-privs", "--", "sh", "-c", script);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_eq(json_int(r.out, "setup_err"), -EPERM);
	cr_assert(strstr(r.out, "verify=1\n"), "verify cannot create a ring: %s", r.out);
	cr_assert(strstr(r.err, "iour_ring_create"), "%s", r.err);
	run_free(&r);

	/* the command's exit status is passed on */
	run(&r, "exec", "--no-new-privs", "--", "sh", "-c", "exit 7");
	cr_assert_eq(r.status, 7);
	run_free(&r);
	run(&r, "exec", "--no-new-privs", "--", "/nonexistent/iour-restrict-test");
	cr_assert_eq(r.status, 127);
	cr_assert(strstr(r.err, "cannot execute"), "%s", r.err);
	run_free(&r);
}

/*
 * An SQPOLL ring leaked into the launcher (its fd without close-on-exec)
 * and kept awake by its owner: the command maps it again and submits an
 * FTRUNCATE of the owner's file through shared memory, with no system call
 * the companion could deny.  --deny-existing closes the fd before execve.
 */
Test(cli, exec_deny_existing_closes_inherited_sqpoll_ring)
{
	UNIT_REQUIRE_URING();
	struct sqpoll_owner o;
	struct run r;
	int rc = sqpoll_owner_init(&o);

	tool_path();
	if (rc == -EPERM || rc == -EINVAL)
		cr_skip_test("SQPOLL rings are not available here (%d)", rc);
	cr_assert_eq(rc, 0, "owner setup: %d", rc);

	/* the attack, under --deny-existing: no ring left to map */
	run_env(&r, o.env, "exec", "--no-new-privs", "--deny-existing", "--", o.self, NULL);
	cr_expect_eq(r.status, SQPOLL_NO_RING, "status %d, stdout %s, stderr %s", r.status, r.out,
		     r.err);
	cr_expect_eq(sqpoll_owner_file_size(&o), 4096, "the owner's file was truncated");
	cr_expect(strstr(r.err, "; 1 io_uring fd closed"), "%s", r.err);
	run_free(&r);

	/* refuse instead: the command does not run at all */
	run_env(&r, o.env, "exec", "--no-new-privs", "--deny-existing", "--existing-rings", "refuse",
		"--", o.self, NULL);
	cr_expect_eq(r.status, 1, "%s", r.err);
	cr_expect_eq(r.out_len, 0, "%s", r.out);
	cr_expect(strstr(r.err, "holds io_uring fds"), "%s", r.err);
	cr_expect_eq(sqpoll_owner_file_size(&o), 4096);
	run_free(&r);

	/* keeping them is not allowed with --deny-existing */
	run_env(&r, o.env, "exec", "--deny-existing", "--existing-rings", "keep", "--", o.self,
		NULL);
	cr_expect_eq(r.status, 2, "%s", r.err);
	cr_expect_eq(sqpoll_owner_file_size(&o), 4096);
	run_free(&r);

	/* without --deny-existing the ring is kept, as the line says, and the
	 * attack works: the check above is not vacuous */
	run_env(&r, o.env, "exec", "--no-new-privs", "--", o.self, NULL);
	cr_expect_eq(r.status, SQPOLL_DONE, "status %d: %s", r.status, r.err);
	cr_expect(strstr(r.out, "ftruncate res=0"), "%s", r.out);
	cr_expect(strstr(r.err, "; 1 inherited io_uring fd kept usable"), "%s", r.err);
	cr_expect_eq(sqpoll_owner_file_size(&o), 0, "the attack did not truncate the file");
	run_free(&r);
	sqpoll_owner_fini(&o);
}

/* The line on stderr: what is enforced, by which mechanism, on which
 * kernel; --quiet silences it. */
Test(cli, exec_reports_one_line)
{
	struct utsname u;
	char want[512];
	struct run r;

	cr_assert_eq(uname(&u), 0);
	run(&r, "exec", "--no-new-privs", "--", "true");
	cr_assert_eq(r.status, 0, "%s", r.err);
	snprintf(want, sizeof(want),
		 "iour-restrict: on Linux %s: io_uring_setup fails with ENOSYS for the command "
		 "and all it starts (seccomp companion); no_new_privs set\n",
		 u.release);
	cr_expect_str_eq(r.err, want);
	run_free(&r);

	run(&r, "exec", "--companion-errno", "EPERM", "--deny-existing", "--", "true");
	cr_assert_eq(r.status, 0, "%s", r.err);
	snprintf(want, sizeof(want),
		 "iour-restrict: on Linux %s: io_uring_setup fails with EPERM for the command "
		 "and all it starts (seccomp companion); io_uring_enter and io_uring_register "
		 "fail too; 0 io_uring fds closed\n",
		 u.release);
	cr_expect_str_eq(r.err, want);
	run_free(&r);

	run(&r, "exec", "--quiet", "--companion-errno", "7", "--", "true");
	cr_assert_eq(r.status, 0);
	cr_expect_str_eq(r.err, "");
	run_free(&r);
	run(&r, "exec", "-q", "--", "sh", "-c", "echo hi >&2");
	cr_expect_str_eq(r.err, "hi\n");
	run_free(&r);
	run(&r, "exec", "--companion-errno", "7", "--", "true");
	cr_expect(strstr(r.err, "fails with errno 7 for"), "%s", r.err);
	run_free(&r);
}

/* ---- help and usage errors */

Test(cli, help_for_every_command)
{
	static const char *cmds[] = { "probe", "names", "ruleset", "filter", "sim", "verify",
				      "exec" };
	char want[64];
	struct run r;

	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		snprintf(want, sizeof(want), "Usage: iour-restrict %s", cmds[i]);
		run(&r, cmds[i], "--help");
		cr_assert_eq(r.status, 0, "%s --help", cmds[i]);
		cr_assert(strstr(r.out, want) == r.out, "%s", r.out);
		cr_assert(strstr(r.out, "Exit status"), "%s", r.out);
		run_free(&r);
		run(&r, "help", cmds[i]);
		cr_assert_eq(r.status, 0);
		cr_assert(strstr(r.out, want) == r.out);
		run_free(&r);
	}
	run(&r, "help", "rules");
	cr_assert_eq(r.status, 0);
	cr_assert(strstr(r.out, "rule     := 'true' | cmp { ',' cmp }"), "%s", r.out);
	run_free(&r);
	run(&r, "--help");
	cr_assert_eq(r.status, 0);
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		cr_assert(strstr(r.out, cmds[i]));
	run_free(&r);
	run(&r, "--version");
	cr_assert_eq(r.status, 0);
	snprintf(want, sizeof(want), "iour-restrict %s\n", iour_version_string());
	cr_assert_str_eq(r.out, want);
	run_free(&r);
}

/* Each of these command lines is wrong: exit 2, a message, no output. */
static const char *const bad[][12] = {
	{ NULL },
	{ "frobnicate" },
	{ "--frobnicate" },
	{ "help", "frobnicate" },
	{ "probe", "--frobnicate" },
	{ "probe", "extra" },
	{ "probe", "--min-level", "6" },
	{ "probe", "--min-level" },
	{ "names", "opcodes2" },
	{ "names", "--kernel", "6" },
	{ "names", "--kernel", "6.x" },
	{ "names", "--kernel", "256.1" },
	{ "ruleset", "--allow-op", "NOPE" },
	{ "ruleset", "--allow-op", "NOP,,READ" },
	{ "ruleset", "--allow-op", "65" },
	{ "ruleset", "--allow-register", "NOPE" },
	{ "ruleset", "--allow-op", "NOP", "--flags-allowed", "ASYNCH" },
	{ "ruleset", "--allow-op", "NOP", "--flags-required", "0x80" },
	{ "ruleset", "--kernel", "5.4" },
	{ "ruleset", "--kernel", "6.1", "--running" },
	{ "ruleset", "--coupled", "--split" },
	{ "ruleset", "--op-last", "0" },
	{ "ruleset", "--reg-last", "12" },
	{ "ruleset", "--format", "json" },
	{ "ruleset", "--allow-op", "NOP", "--deny-ops" },
	{ "verify" },
	{ "verify", "--allow-op", "NOP", "--timeout", "0" },
	{ "filter" },
	{ "filter", "--op", "SOCKET" },
	{ "filter", "--op", "NOPE", "--default", "allow" },
	{ "filter", "--op", "SOCKET", "--op", "CONNECT", "--default", "deny" },
	{ "filter", "--op", "SOCKET", "--default", "maybe" },
	{ "filter", "--op", "SOCKET", "--default", "deny", "--format", "dot" },
	{ "filter", "--op", "SOCKET", "--default", "deny", "--max-insns", "5000" },
	{ "filter", "--op", "SOCKET", "--default", "deny", "--ctx", "family=1" },
	{ "filter", "--op", "SOCKET", "--allow", "family==AF_INETT" },
	{ "filter", "--op", "SOCKET", "--allow", "port==80" },
	{ "filter", "--op", "SOCKET", "--allow", "family=2" },
	{ "filter", "--op", "SOCKET", "--allow", "family in {1,2" },
	{ "filter", "--op", "SOCKET", "--allow", "family in [3,2]" },
	{ "filter", "--op", "SOCKET", "--allow", "type==16" },
	{ "filter", "--op", "SOCKET", "--allow", "" },
	{ "filter", "--op", "SOCKET", "--allow", "family & 3 != 1" },
	{ "filter", "--op", "CONNECT", "--allow", "addr6 < ::1" },
	{ "filter", "--op", "CONNECT", "--allow", "addr4 in 10.0.0.0/33" },
	{ "filter", "--op", "CONNECT", "--allow", "port == 65536" },
	{ "filter", "--op", "OPENAT", "--allow", "flags ==" },
	{ "sim", "--op", "SOCKET", "--default", "allow" },
	{ "sim", "--op", "SOCKET", "--default", "allow", "--ctx", "famly=1" },
	{ "sim", "--op", "SOCKET", "--default", "allow", "--ctx", "family=1,family=2" },
	{ "sim", "--op", "CONNECT", "--default", "allow", "--ctx", "port=70000" },
	{ "sim", "--op", "OPENAT", "--default", "allow", "--ctx", "resolve=1" },
	{ "sim", "--op", "SOCKET", "--default", "allow", "--ctx", "family=1", "--expect", "x" },
	{ "sim", "--op", "SOCKET", "--default", "allow", "--ctx", "family=1", "--format", "c" },
	{ "exec" },
	{ "exec", "--companion-errno", "EFOO", "--", "true" },
	{ "exec", "--companion-errno", "5000", "--", "true" },
	{ "exec", "--frobnicate", "--", "true" },
	{ "exec", "--existing-rings", "drop", "--", "true" },
	{ "exec", "--deny-existing", "--existing-rings", "keep", "--", "true" },
};

Test(cli, usage_errors_exit_2_with_a_message)
{
	size_t n = sizeof(bad) / sizeof(bad[0]), parse_errors = 0;
	char *argv[16];
	struct run r;

	for (size_t i = 0; i < n; i++) {
		int k = 0;

		argv[k++] = (char *)tool_path();
		for (int j = 0; bad[i][j]; j++)
			argv[k++] = (char *)bad[i][j];
		argv[k] = NULL;
		run_prog(&r, argv[0], argv, NULL);
		cr_assert_eq(r.status, 2, "case %zu (%s %s ...): exit %d\n%s", i,
			     bad[i][0] ? bad[i][0] : "", bad[i][0] && bad[i][1] ? bad[i][1] : "",
			     r.status, r.err);
		cr_assert_str_eq(r.out, "", "case %zu prints nothing on stdout", i);
		cr_assert(strncmp(r.err, "iour-restrict", 13) == 0 || strncmp(r.err, "Usage:", 6) == 0,
			  "case %zu: %s", i, r.err);
		if (strstr(r.err, "(column "))
			parse_errors++;
		run_free(&r);
	}
	cr_assert_geq(parse_errors, 15, "rule and context errors say where");
	fprintf(stderr, "cli: %zu usage errors exit 2 (%zu with a column)\n", n, parse_errors);
}

Test(cli, parse_error_points_at_the_column)
{
	struct run r;

	run(&r, "filter", "--op", "SOCKET", "--allow", "family==AF_INET,type==SOCK_STRAEM");
	cr_assert_eq(r.status, 2);
	/* "family==AF_INET,type==" is 22 characters */
	cr_assert(strstr(r.err, "unknown constant 'SOCK_STRAEM' (column 23)"), "%s", r.err);
	cr_assert(strstr(r.err, "\n  family==AF_INET,type==SOCK_STRAEM\n"
				"                        ^\n"), "%s", r.err);
	run_free(&r);
}

/* Random rule and context text never crashes the parsers: every run ends
 * in exit 0 or 2.  The text is a well-formed list with random mutations,
 * so that both outcomes are common. */
static uint64_t rnd(uint64_t *seed, uint64_t n)
{
	*seed = *seed * 6364136223846793005ULL + 1442695040888963407ULL;
	return (*seed >> 33) % n;
}

#define PICK(seed, arr) ((arr)[rnd(seed, sizeof(arr) / sizeof((arr)[0]))])

static void random_text(uint64_t *seed, int op, bool ctx, char *buf, size_t cap)
{
	/* fields (rule) and context fields per opcode kind */
	static const char *fields[5][6] = {
		{ "family", "type", "protocol", "type_flags", "user_data", "sqe_flags" },
		{ "flags", "accmode", "mode", "resolve", "user_data", "sqe_flags" },
		{ "family", "port", "addr4", "addr6", "user_data", "addrlen" },
		{ "user_data", "sqe_flags", "user_data", "sqe_flags", "family", "port" },
		{ "flags", "mode", "accmode", "flags", "mode", "resolve" },
	};
	static const char *ops[] = { "==", "!=", "<", "<=", ">", ">=", "&=", " in ", " not in ",
				     " !in ", "&" };
	static const char *vals[] = { "0", "1", "2", "0x10", "0777", "AF_INET", "AF_UNIX",
				      "SOCK_STREAM", "O_CREAT|O_TRUNC", "10.0.0.1", "::1",
				      "{1,2,3}", "[1,9]", "10.0.0.0/8", "fe80::/10", "IOSQE_ASYNC",
				      "65535", "18446744073709551615", "3", "1|2" };
	static const char *junk[] = { "{", "}", "[", "]", ",", "/", "|", "=", "-", " ", "\t",
				      "==", "in", "not", "18446744073709551616", "::", "1.2.3",
				      "x", "" };
	size_t len = 0, n = 1 + rnd(seed, 3);

	buf[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		/* one draw per statement: argument order is unspecified */
		const char *f = fields[op][rnd(seed, 6)];
		const char *o = ctx ? "=" : PICK(seed, ops);
		const char *v = PICK(seed, vals);

		len += (size_t)snprintf(buf + len, cap - len, "%s%s%s%s", i ? "," : "", f, o, v);
	}
	/* up to three mutations: insert, replace or cut at a random place */
	for (uint64_t m = rnd(seed, 5) / 2; m > 0 && len > 0; m--) {
		size_t at = (size_t)rnd(seed, len + 1);
		const char *j = PICK(seed, junk);
		uint64_t how = rnd(seed, 3);
		char tail[256];

		switch (how) {
		case 0:
			snprintf(tail, sizeof(tail), "%s", buf + at);
			snprintf(buf + at, cap - at, "%s%s", j, tail);
			break;
		case 1:
			if (at < len)
				buf[at] = j[0] ? j[0] : ' ';
			break;
		default:
			buf[at] = '\0';
			break;
		}
		len = strlen(buf);
	}
}

Test(cli, random_rules_never_crash)
{
	static const char *ops[] = { "SOCKET", "OPENAT2", "CONNECT", "NOP", "OPENAT" };
	int n = getenv("IOUR_TEST_LONG") ? 2000 : 80, ok = 0, usage = 0;
	uint64_t seed = 0x9e3779b97f4a7c15ULL;
	char text[256];
	struct run r;

	for (int i = 0; i < n; i++) {
		const char *op = ops[i % 5];

		random_text(&seed, i % 5, i % 2, text, sizeof(text));
		if (i % 2)
			run(&r, "sim", "--op", op, "--allow", "true", "--ctx", text);
		else
			run(&r, "filter", "--op", op, "--allow", text);
		cr_assert(r.status == 0 || r.status == 2, "%s '%s': exit %d\n%s",
			  i % 2 ? "--ctx" : "--allow", text, r.status, r.err);
		ok += r.status == 0;
		usage += r.status == 2;
		run_free(&r);
	}
	cr_assert_gt(ok, 0);
	cr_assert_gt(usage, 0);
	fprintf(stderr, "cli: %d random rules and contexts: %d accepted, %d refused with exit 2\n",
		n, ok, usage);
}

/* Each field takes its own constants only: a constant of another
 * namespace used to compile to its number (family == SOCK_STREAM was
 * family 1, AF_UNIX). */
Test(cli, constants_belong_to_their_field)
{
	static const struct {
		const char *op, *rule, *want;
	} bad[] = {
		{ "SOCKET", "family == SOCK_STREAM", "'SOCK_STREAM' is not a constant of family" },
		{ "SOCKET", "type == AF_INET", "'AF_INET' is not a constant of type" },
		{ "SOCKET", "protocol == O_CREAT", "'O_CREAT' is not a constant of protocol" },
		{ "CONNECT", "port == S_IRWXU", "'S_IRWXU': port takes numbers, not constants" },
		{ "CONNECT", "family == IPPROTO_TCP", "not a constant of family" },
		{ "CONNECT", "addr4 == AF_INET", "addr4 takes numbers and IPv4 addresses" },
		{ "OPENAT", "flags &= S_IRWXU", "'S_IRWXU' is not a constant of flags" },
		{ "OPENAT", "mode &= O_CREAT", "'O_CREAT' is not a constant of mode" },
		{ "OPENAT2", "resolve &= O_PATH", "'O_PATH' is not a constant of resolve" },
		{ "NOP", "user_data == AF_INET", "user_data takes numbers, not constants" },
		{ "NOP", "sqe_flags &= O_CREAT", "'O_CREAT' is not a constant of sqe_flags" },
	};
	struct run r;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		run(&r, "filter", "--op", bad[i].op, "--allow", bad[i].rule);
		cr_assert_eq(r.status, 2, "'%s': exit %d\n%s", bad[i].rule, r.status, r.out);
		cr_assert(strstr(r.err, bad[i].want), "'%s': %s", bad[i].rule, r.err);
		run_free(&r);
	}
	run(&r, "sim", "--op", "SOCKET", "--allow", "true", "--ctx", "family=SOCK_STREAM");
	cr_assert_eq(r.status, 2);
	cr_assert(strstr(r.err, "'SOCK_STREAM' is not a constant of family"), "%s", r.err);
	run_free(&r);
	/* each field's own constants still work */
	run(&r, "filter", "--op", "SOCKET", "--allow",
	    "family == AF_INET6, type == SOCK_DGRAM, protocol == IPPROTO_UDP, "
	    "type_flags &= SOCK_CLOEXEC, sqe_flags &= IOSQE_ASYNC");
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_free(&r);
}

/* '|' joins bit flags only: on a value field it used to OR the values
 * ("family == AF_INET | AF_INET6" was family 10). */
Test(cli, bar_only_on_bit_flag_fields)
{
	static const struct {
		const char *op, *rule;
	} bad[] = {
		{ "CONNECT", "family == AF_INET | AF_INET6" },
		{ "SOCKET", "family == AF_INET|AF_INET6" },
		{ "SOCKET", "type == SOCK_STREAM|SOCK_DGRAM" },
		{ "SOCKET", "protocol == IPPROTO_TCP|IPPROTO_UDP" },
		{ "CONNECT", "port == 80|443" },
		{ "OPENAT", "accmode == O_WRONLY|O_RDWR" },
		{ "NOP", "user_data == 1|2" },
		{ "CONNECT", "family in {AF_INET|AF_INET6}" },
	};
	static const char *good[][2] = {
		{ "OPENAT", "flags & O_CREAT|O_TRUNC == 0" },
		{ "OPENAT2", "resolve &= RESOLVE_BENEATH|RESOLVE_IN_ROOT" },
		{ "OPENAT", "mode &= S_IWGRP|S_IWOTH" },
		{ "SOCKET", "type_raw == SOCK_STREAM|SOCK_CLOEXEC" },
		{ "SOCKET", "type_flags &= SOCK_NONBLOCK|SOCK_CLOEXEC" },
		{ "NOP", "sqe_flags &= IOSQE_ASYNC|IOSQE_IO_DRAIN" },
		{ "CONNECT", "family in {AF_INET, AF_INET6}" },
	};
	struct run r;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		run(&r, "filter", "--op", bad[i].op, "--allow", bad[i].rule);
		cr_assert_eq(r.status, 2, "'%s': exit %d\n%s", bad[i].rule, r.status, r.out);
		cr_assert(strstr(r.err, "'|' joins bit flags"), "'%s': %s", bad[i].rule, r.err);
		cr_assert(strstr(r.err, " in {A, B}'"), "'%s': %s", bad[i].rule, r.err);
		run_free(&r);
	}
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		run(&r, "filter", "--op", good[i][0], "--allow", good[i][1]);
		cr_assert_eq(r.status, 0, "'%s': exit %d\n%s", good[i][1], r.status, r.err);
		run_free(&r);
	}
	run(&r, "sim", "--op", "CONNECT", "--allow", "true", "--ctx", "family=AF_INET|AF_INET6");
	cr_assert_eq(r.status, 2);
	cr_assert(strstr(r.err, "'|' joins bit flags"), "%s", r.err);
	run_free(&r);
}

/* Control bytes of a rule reach the terminal only escaped. */
Test(cli, control_bytes_are_escaped)
{
	static const char *rules[] = {
		"port == 1\x1b[2J",       /* a parse error at the escape */
		"\x1b]0;title\x07port == 1 x", /* ... after it */
		"port == S_IRWXU\x9b",
	};
	struct run r;

	for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++) {
		run(&r, "filter", "--op", "CONNECT", "--allow", rules[i]);
		cr_assert_eq(r.status, 2, "exit %d", r.status);
		for (const char *c = r.err; *c; c++)
			cr_assert(*c == '\n' || !((unsigned char)*c < 0x20 || *c == 0x7f),
				  "case %zu: control byte %#x on stderr", i, (unsigned char)*c);
		run_free(&r);
	}
	run(&r, "filter", "--op", "CONNECT", "--allow", "port == 1\x1b[2J");
	cr_assert(strstr(r.err, "found '\\x1b' (column 10)"), "%s", r.err);
	cr_assert(strstr(r.err, "\n  port == 1\\x1b[2J\n           ^\n"), "%s", r.err);
	run_free(&r);
	/* the caret counts the escapes before it */
	run(&r, "filter", "--op", "CONNECT", "--allow", "\tport == 1 x");
	cr_assert(strstr(r.err, "\n  \\x09port == 1 x\n                ^\n"), "%s", r.err);
	run_free(&r);
	/* a rule that parses (whitespace includes \r and \v) is listed escaped */
	run(&r, "filter", "--op", "CONNECT", "--allow", "port ==\r\v1");
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, "# allow port ==\\x0d\\x0b1\n"), "%s", r.out);
	for (const char *c = r.out; *c; c++)
		cr_assert(*c == '\n' || !((unsigned char)*c < 0x20 || *c == 0x7f), "stdout");
	run_free(&r);
}

/* --addr4-literal: the literal reading of IPv4 rules, on request. */
Test(cli, addr4_literal_option)
{
	struct run r;

	run(&r, "sim", "--op", "CONNECT", "--deny", "addr4 in 10.0.0.0/8", "--default", "allow",
	    "--ctx", "addr6=::ffff:10.0.0.1", "--ctx", "addr4=10.0.0.1", "--ctx",
	    "addr6=::ffff:0:10.0.0.1");
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, "addr6=::ffff:10.0.0.1: deny"), "%s", r.out);
	cr_assert(strstr(r.out, "addr4=10.0.0.1: deny"), "%s", r.out);
	cr_assert(strstr(r.out, "addr6=::ffff:0:10.0.0.1: allow"), "%s", r.out);
	run_free(&r);
	run(&r, "sim", "--addr4-literal", "--op", "CONNECT", "--deny", "addr4 in 10.0.0.0/8",
	    "--default", "allow", "--ctx", "addr6=::ffff:10.0.0.1", "--ctx", "addr4=10.0.0.1");
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, "addr6=::ffff:10.0.0.1: allow"), "%s", r.out);
	cr_assert(strstr(r.out, "addr4=10.0.0.1: deny"), "%s", r.out);
	run_free(&r);
	run(&r, "filter", "--op", "CONNECT", "--deny", "addr4 in 10.0.0.0/8");
	cr_assert(strstr(r.out, "# a connect to ::ffff:a.b.c.d is judged as the IPv4 connect"),
		  "%s", r.out);
	run_free(&r);
}
