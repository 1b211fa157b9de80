/* SPDX-License-Identifier: MIT */
/*
 * The policy-file commands of iour-restrict (run, compile, check, lint,
 * groups), run as a user runs them.  `run` is tested end to end on this
 * kernel with tests/progs/uring_try.c making real io_uring requests under
 * the policies of tests/cli/policies/; on kernels without task
 * restrictions (before 7.0) that is the seccomp companion, or nothing, and
 * the report line must say which.  The 7.x behaviour (task restrictions
 * and filters) is tested in tests/live/test_live_cli.c.  `compile` is
 * compared with golden files (tests/cli/golden/, `make cli-golden`),
 * `check` with the library's simulator running the compiled filters, `lint`
 * with the findings each test policy must and must not produce.
 * `make test-run` sets IOUR_TOOLS_DIR; elsewhere these tests skip.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "child.h"
#include "iouring_restrict/iouring_restrict.h"
#include "uring_avail.h"

#define MAX_ARGS 32
#define POL "tests/cli/policies/"

struct run {
	int status; /* exit status, or 128 + signal */
	char *out;
	char *err;
};

static const char *tools_dir(void)
{
	const char *dir = getenv("IOUR_TOOLS_DIR");

	if (!dir)
		cr_skip_test("IOUR_TOOLS_DIR is not set (run through make test-run)");
	return dir;
}

static const char *tool(void)
{
	static char path[4096];

	snprintf(path, sizeof(path), "%s/iour-restrict", tools_dir());
	cr_assert_eq(access(path, X_OK), 0, "%s is not built", path);
	return path;
}

/* tests/progs/uring_try.c, built next to the tools (mk/cli.mk). */
static const char *uring_try(void)
{
	static char path[4096];

	snprintf(path, sizeof(path), "%s/../tests/uring-try", tools_dir());
	cr_assert_eq(access(path, X_OK), 0, "%s is not built", path);
	return path;
}

static char *slurp_fd(int fd)
{
	off_t n = lseek(fd, 0, SEEK_END);
	char *buf;

	cr_assert_geq(n, 0);
	buf = malloc((size_t)n + 1);
	cr_assert_not_null(buf);
	cr_assert_eq(pread(fd, buf, (size_t)n, 0), n);
	buf[n] = '\0';
	return buf;
}

static char *slurp_file(const char *path)
{
	int fd = open(path, O_RDONLY);
	char *s;

	cr_assert_geq(fd, 0, "cannot open %s", path);
	s = slurp_fd(fd);
	close(fd);
	return s;
}

static void run_argv(struct run *r, char *const argv[], const char *in)
{
	int out = memfd_create("o", 0), err = memfd_create("e", 0), st;
	int inp = memfd_create("i", 0);
	pid_t pid;

	cr_assert(out >= 0 && err >= 0 && inp >= 0);
	if (in)
		cr_assert_eq(write(inp, in, strlen(in)), (ssize_t)strlen(in));
	lseek(inp, 0, SEEK_SET);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		dup2(inp, 0);
		dup2(out, 1);
		dup2(err, 2);
		execv(argv[0], argv);
		_exit(125);
	}
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	r->out = slurp_fd(out);
	r->err = slurp_fd(err);
	close(out);
	close(err);
	close(inp);
}

/* Runs the tool with the NULL-terminated arguments that follow. */
static void run_tool(struct run *r, const char *in, ...)
{
	char *argv[MAX_ARGS];
	const char *a;
	va_list ap;
	int n = 0;

	argv[n++] = (char *)tool();
	va_start(ap, in);
	while ((a = va_arg(ap, const char *)) != NULL) {
		cr_assert_lt(n, MAX_ARGS - 1);
		argv[n++] = (char *)a;
	}
	va_end(ap);
	argv[n] = NULL;
	run_argv(r, argv, in);
}

#define tool_run(r, ...) run_tool(r, NULL, __VA_ARGS__, (const char *)NULL)

static void run_free(struct run *r)
{
	free(r->out);
	free(r->err);
}

static bool has(const char *hay, const char *needle)
{
	return strstr(hay, needle) != NULL;
}

/* Kernels before 7.0 cannot restrict a task: the companion stands in. */
static bool task_restrictions(void)
{
	struct iour_features f = { .sz = sizeof(f) };

	cr_assert_eq(iour_probe(NULL, &f), 0);
	return f.task_restrictions == IOUR_AVAIL_YES || f.task_restrictions == IOUR_AVAIL_NO_PRIV;
}

static void need_pre_7_0(void)
{
	if (task_restrictions())
		cr_skip_test("this kernel has task restrictions: tests/live/test_live_cli.c "
			     "covers it");
	if (iour_feature_level() < IOUR_LEVEL_IO_URING) {
		/* the cause, when the process is refused (tests/common/uring_avail.h) */
		const char *why = uring_unusable();

		cr_skip_test("%s", why ? why : "io_uring is not usable here");
	}
}

/* ---- help and the command list ------------------------------------------ */

Test(cli_policy, every_command_has_help_with_exit_status)
{
	static const char *const cmds[] = { "run", "compile", "check", "lint", "groups" };
	struct run r;

	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		tool_run(&r, cmds[i], "--help");
		cr_assert_eq(r.status, 0, "%s --help: %s", cmds[i], r.err);
		cr_assert(has(r.out, "Usage: iour-restrict "), "%s", r.out);
		cr_assert(has(r.out, "Exit status:"), "%s --help says no exit status", cmds[i]);
		run_free(&r);
		tool_run(&r, "help", cmds[i]);
		cr_assert_eq(r.status, 0);
		run_free(&r);
	}
	tool_run(&r, "--help");
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		char line[32];

		snprintf(line, sizeof(line), "\n  %s ", cmds[i]);
		cr_assert(has(r.out, line), "the usage does not list %s", cmds[i]);
	}
	cr_assert(has(r.out, "3 the policy file"), "%s", r.out);
	run_free(&r);
}

/* ---- run, end to end on this kernel ------------------------------------- */

/* run POLICY [extra options] -- uring-try REQUESTS... */
static void run_policy(struct run *r, const char *policy, const char *opt1, const char *opt2,
		       const char *const *reqs)
{
	char *argv[MAX_ARGS];
	int n = 0;

	argv[n++] = (char *)tool();
	argv[n++] = "run";
	argv[n++] = (char *)policy;
	if (opt1)
		argv[n++] = (char *)opt1;
	if (opt2)
		argv[n++] = (char *)opt2;
	argv[n++] = "--";
	argv[n++] = (char *)uring_try();
	for (; *reqs; reqs++)
		argv[n++] = (char *)*reqs;
	argv[n] = NULL;
	run_argv(r, argv, NULL);
}

static const char *release(void)
{
	static struct utsname u;

	cr_assert_eq(uname(&u), 0);
	return u.release;
}

Test(cli_policy, run_without_policy_io_uring_works)
{
	char *argv[] = { (char *)uring_try(), "nop", "read", "openat-r", NULL };
	struct run r;

	/* The baseline the other run tests compare with: unconfined, all pass. */
	if (iour_feature_level() < IOUR_LEVEL_IO_URING) {
		/* the cause, when the process is refused (tests/common/uring_avail.h) */
		const char *why = uring_unusable();

		cr_skip_test("%s", why ? why : "io_uring is not usable here");
	}
	run_argv(&r, argv, NULL);
	cr_assert_eq(r.status, 0);
	cr_assert_str_eq(r.out, "setup: ok\nnop: ok\nread: ok\nopenat-r: ok\n");
	run_free(&r);
}

Test(cli_policy, run_companion_denies_setup_and_says_so)
{
	UNIT_REQUIRE_URING();
	static const char *const reqs[] = { "nop", NULL };
	char want[512];
	struct run r;

	need_pre_7_0();
	/* --broker=off: the companion of 1.0 (the broker is tested in
	 * tests/live/test_live_broker.c). */
	run_policy(&r, POL "nop-only.json", "--broker=off", NULL, reqs);
	cr_assert_eq(r.status, 0, "%s", r.err);
	/* The command ran, and could not create a ring at all. */
	cr_assert_str_eq(r.out, "setup: ENOSYS\n");
	/* Between the companion's clause and no_new_privs: the peer guard's,
	 * which depends on the kernel's Landlock and Yama (live_escape). */
	snprintf(want, sizeof(want), "iour-restrict: on Linux %s: policy partially enforced "
		 "(seccomp companion); io_uring_setup fails with ENOSYS for the command and all "
		 "it starts; ", release());
	cr_assert(has(r.err, want), "report line: %s", r.err);
	cr_assert(has(r.err, "process_vm_*"), "report line: %s", r.err);
	cr_assert(has(r.err, "; no_new_privs set\n"), "report line: %s", r.err);
	cr_assert_eq(strchr(r.err, '\n') - r.err + 1, (long)strlen(r.err), "one line: %s", r.err);
	cr_assert(!has(r.err, "denies may succeed"), "%s", r.err);
	run_free(&r);

	/* No ring at all: the companion's clause says it; no opcode list. */
	run_policy(&r, POL "client.json", "--broker=off", NULL, reqs);
	cr_assert_eq(r.status, 0);
	cr_assert(!has(r.err, "denied although"), "%s", r.err);
	run_free(&r);
	/* The broker (the default): the opcodes whose rules cannot be
	 * enforced before 7.0, by name. */
	run_policy(&r, POL "client.json", NULL, NULL, reqs);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(has(r.err, "; denied although the policy allows them: "), "%s", r.err);
	cr_assert(has(r.err, "argument rules need filters, Linux 7.0+; fallback closed)"), "%s",
		  r.err);
	cr_assert(!has(r.err, "says how"), "%s", r.err);
	run_free(&r);

	run_policy(&r, POL "nop-only.json", "--companion=eperm", "--broker=off", reqs);
	cr_assert_eq(r.status, 0);
	cr_assert_str_eq(r.out, "setup: EPERM\n");
	cr_assert(has(r.err, "io_uring_setup fails with EPERM"), "%s", r.err);
	run_free(&r);
}

Test(cli_policy, run_companion_off_enforces_nothing_and_says_so)
{
	static const char *const reqs[] = { "nop", "read", "openat-r", "socket-unix", NULL };
	struct run r;

	need_pre_7_0();
	/* nop-only denies OPENAT and SOCKET; without a companion on this
	 * kernel nothing stops them, and the line must not claim otherwise. */
	run_policy(&r, POL "nop-only.json", "--companion=off", "--broker=off", reqs);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_str_eq(r.out, "setup: ok\nnop: ok\nread: ok\nopenat-r: ok\nsocket-unix: ok\n");
	cr_assert(has(r.err, "policy not enforced: the command runs with unrestricted io_uring"),
		  "%s", r.err);
	cr_assert(!has(r.err, "io_uring_setup fails"), "%s", r.err);
	cr_assert(!has(r.err, "is restricted"), "%s", r.err);
	run_free(&r);
}

Test(cli_policy, run_compat_levels)
{
	static const char *const reqs[] = { "nop", NULL };
	struct run r;

	need_pre_7_0();
	/* run picks the broker only where rings can be made: with io_uring
	 * unusable (check-uring-off) it is the companion's, without a list */
	UNIT_REQUIRE_URING();
	/* --hard: the kernel cannot enforce it exactly (client.json's
	 * argument rules need 7.0's filters); the command never runs, and
	 * the refusal says what cannot be enforced. */
	run_policy(&r, POL "client.json", "--hard", NULL, reqs);
	cr_assert_eq(r.status, 1, "%s", r.err);
	cr_assert_str_eq(r.out, "");
	cr_assert(has(r.err, "cannot enforce the policy exactly (mechanism broker); denied "
			     "although the policy allows them: "),
		  "%s", r.err);
	run_free(&r);
	/* --soft: nothing applied, the command runs unconfined, said so. */
	run_policy(&r, POL "client.json", "--soft", NULL, reqs);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_str_eq(r.out, "setup: ok\nnop: ok\n");
	cr_assert(has(r.err, "policy not enforced: the command runs with unrestricted io_uring "
			     "(--soft: "),
		  "%s", r.err);
	/* Nothing was applied: the line must not claim a restricted ring. */
	cr_assert(!has(r.err, "is restricted"), "%s", r.err);
	cr_assert(!has(r.err, "(ring broker:"), "%s", r.err);
	run_free(&r);
}

Test(cli_policy, run_exit_status_quiet_and_usage)
{
	struct run r;

	need_pre_7_0();
	tool_run(&r, "run", POL "nop-only.json", "--", "/bin/sh", "-c", "exit 7");
	cr_assert_eq(r.status, 7);
	run_free(&r);
	tool_run(&r, "run", POL "nop-only.json", "-q", "--", "/bin/sh", "-c", "exit 0");
	cr_assert_eq(r.status, 0);
	cr_assert_str_eq(r.err, "", "--quiet printed: %s", r.err);
	run_free(&r);
	tool_run(&r, "run", POL "nop-only.json", "--", "/nonexistent/cmd");
	cr_assert_eq(r.status, 127, "%s", r.err);
	run_free(&r);
	/* Usage errors: nothing is applied, nothing is run. */
	tool_run(&r, "run", POL "nop-only.json", "/bin/true");
	cr_assert_eq(r.status, 2);
	cr_assert(has(r.err, "after '--'"), "%s", r.err);
	run_free(&r);
	tool_run(&r, "run", "--", "/bin/true");
	cr_assert_eq(r.status, 2);
	run_free(&r);
	tool_run(&r, "run", POL "nop-only.json", "--companion=maybe", "--", "/bin/true");
	cr_assert_eq(r.status, 2);
	run_free(&r);
	tool_run(&r, "run", POL "nop-only.json", "--soft", "--hard", "--", "/bin/true");
	cr_assert_eq(r.status, 2);
	run_free(&r);
	/* A ring policy is not for run: refused before anything is applied. */
	tool_run(&r, "run", POL "ring.json", "--", "/bin/echo", "ran");
	cr_assert_eq(r.status, 3);
	cr_assert_str_eq(r.out, "");
	cr_assert(has(r.err, "target ring"), "%s", r.err);
	run_free(&r);
}

/* ---- bad policies: message, position, exit status 3 --------------------- */

static const struct {
	const char *file;
	const char *pos;  /* "LINE:COLUMN" */
	const char *text; /* part of the message */
} bad[] = {
	{ "syntax.json", "3:55", "invalid JSON" },
	{ "unknown-key.json", "3:3", "unknown key 'entires'" },
	{ "unknown-opcode.json", "3:35", "unknown request opcode \"frobnicate\"" },
	{ "unknown-group.json", "3:28", "unknown group \"@no-such-group\"" },
	{ "unknown-constant.json", "5:66", "unknown constant \"AF_INETT\"" },
	{ "wrong-namespace.json", "5:63", "AF_INET belongs to another field" },
	{ "out-of-range.json", "5:65", "out of range for connect.port" },
	{ "bad-action.json", "2:20", "unknown defaultAction \"maybe\"" },
};

Test(cli_policy, bad_policies_give_position_message_and_status_3)
{
	char path[256], prefix[300];
	struct run r;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(path, sizeof(path), "tests/cli/bad/%s", bad[i].file);
		snprintf(prefix, sizeof(prefix), "%s:%s: ", path, bad[i].pos);
		/* Every command that reads a policy refuses it the same way. */
		tool_run(&r, "compile", path);
		cr_assert_eq(r.status, 3, "%s: status %d", path, r.status);
		cr_assert_str_eq(r.out, "");
		cr_assert_eq(strncmp(r.err, prefix, strlen(prefix)), 0, "%s: %s", prefix, r.err);
		cr_assert(has(r.err, bad[i].text), "%s: %s", bad[i].text, r.err);
		run_free(&r);
		tool_run(&r, "check", path, "--op", "NOP");
		cr_assert_eq(r.status, 3);
		cr_assert(has(r.err, prefix), "%s", r.err);
		run_free(&r);
		tool_run(&r, "lint", path);
		cr_assert_eq(r.status, 3);
		cr_assert(has(r.err, prefix), "%s", r.err);
		run_free(&r);
		tool_run(&r, "run", path, "--", "/bin/echo", "ran");
		cr_assert_eq(r.status, 3);
		cr_assert_str_eq(r.out, "", "the command ran under a bad policy");
		cr_assert(has(r.err, prefix), "%s", r.err);
		run_free(&r);
	}
	tool_run(&r, "compile", "tests/cli/bad/no-such-file.json");
	cr_assert_eq(r.status, 3);
	cr_assert(has(r.err, "no-such-file.json"), "%s", r.err);
	run_free(&r);
	/* Standard input, named as such. */
	run_tool(&r, "{\n  \"defaultAction\": \"deny\",\n  \"bogus\": 1\n}\n", "compile", "-",
		 (const char *)NULL);
	cr_assert_eq(r.status, 3);
	cr_assert(has(r.err, "<stdin>:3:3: unknown key 'bogus'"), "%s", r.err);
	run_free(&r);
}

/* ---- compile ------------------------------------------------------------- */

static const char *const golden[] = {
	"client:6.18:text", "client:7.2:text",  "client:7.2:json",   "client:7.2:c",
	"nop-only:6.18:text", "nop-only:7.0:text", "nop-only:6.18:json", "nop-only:6.18:c",
	"sealed:6.1:text", "sealed:7.2:text",  "risky:6.18:text",   "risky:7.2:text",
};

Test(cli_policy, compile_matches_golden_outputs)
{
	char pol[64], k[16], f[16], path[128], gold[128];
	struct run r;
	char *want;

	for (size_t i = 0; i < sizeof(golden) / sizeof(golden[0]); i++) {
		cr_assert_eq(sscanf(golden[i], "%63[^:]:%15[^:]:%15s", pol, k, f), 3);
		snprintf(path, sizeof(path), POL "%s.json", pol);
		snprintf(gold, sizeof(gold), "tests/cli/golden/%s.%s.%s", pol, k, f);
		tool_run(&r, "compile", path, "--kernel", k, "--format", f);
		cr_assert_eq(r.status, 0, "%s: %s", gold, r.err);
		want = slurp_file(gold);
		cr_assert_str_eq(r.out, want, "compile %s --kernel %s --format %s differs from %s "
			"(after a deliberate change: make cli-golden, review the diff)", path, k, f,
			gold);
		free(want);
		run_free(&r);
	}
}

Test(cli_policy, compile_text_is_the_library_dry_run)
{
	struct iour_plan_opts po = { .sz = sizeof(po), .flags = IOUR_PLAN_FORCE_LEVEL, .level = 4 };
	struct iour_policy *p;
	struct iour_plan *plan;
	struct run r;
	size_t len = 0;
	char *text;

	cr_assert_eq(iour_policy__load_file(POL "client.json", NULL, &p, NULL), 0);
	cr_assert_eq(iour_policy__plan(p, &po, &plan), 0);
	cr_assert_eq(iour_plan__describe(plan, NULL, &len), 0);
	text = malloc(len);
	cr_assert_eq(iour_plan__describe(plan, text, &len), 0);
	tool_run(&r, "compile", POL "client.json", "--level", "4");
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_eq(strncmp(r.out,
			     "# iour-restrict compile, planned for feature level 4, mechanism task\n",
			     69),
		     0, "%s", r.out);
	cr_assert_str_eq(strchr(r.out, '\n') + 1, text);
	run_free(&r);
	free(text);
	iour_plan__free(plan);
	iour_policy__free(p);
}

/* python3 -m json.tool accepts the text. */
static void assert_valid_json(const char *text)
{
	char path[4096];
	char *argv[] = { "/usr/bin/python3", "-m", "json.tool", path, NULL };
	struct run r;
	int fd;

	cr_assert_eq(test_tmp_template(path, sizeof(path), "iour-cli-json-", NULL), 0);
	fd = mkstemp(path);

	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	run_argv(&r, argv, NULL);
	unlink(path);
	cr_assert_eq(r.status, 0, "not JSON: %s\n%s", r.err, text);
	run_free(&r);
}

Test(cli_policy, compile_json_and_c_are_well_formed_and_exact)
{
	struct iour_plan_opts po = { .sz = sizeof(po), .flags = IOUR_PLAN_FORCE_LEVEL, .level = 5 };
	struct iour_plan_step st = { .sz = sizeof(st) };
	char src[4096], hex[3 * 1024], *h;
	char *cc[] = { "/usr/bin/cc", "-std=c11", "-Wall", "-Wextra", "-Werror", "-fsyntax-only",
		       src, NULL };
	struct iour_policy *p;
	struct iour_plan *plan;
	uint8_t arg[1024];
	struct run r, c;
	size_t len;
	int fd, n;

	tool_run(&r, "compile", POL "client.json", "--level", "5", "--format", "json");
	cr_assert_eq(r.status, 0, "%s", r.err);
	assert_valid_json(r.out);
	/* Every step's bytes are the plan's, in order. */
	cr_assert_eq(iour_policy__load_file(POL "client.json", NULL, &p, NULL), 0);
	cr_assert_eq(iour_policy__plan(p, &po, &plan), 0);
	n = iour_plan__step_cnt(plan);
	cr_assert_gt(n, 2);
	h = r.out;
	for (int i = 0; i < n; i++) {
		char want[3 * 1024 + 16];

		len = sizeof(arg);
		cr_assert_eq(iour_plan__step(plan, (size_t)i, &st), 0);
		cr_assert_eq(iour_plan__step_arg(plan, (size_t)i, arg, &len), 0);
		for (size_t b = 0; b < len; b++)
			snprintf(hex + 2 * b, 3, "%02x", arg[b]);
		hex[2 * len] = '\0';
		snprintf(want, sizeof(want), "\"arg\": \"%s\"", hex);
		h = strstr(h, want);
		cr_assert_not_null(h, "step %d's argument is not in the JSON (in order)", i + 1);
	}
	cr_assert(has(r.out, "\"status\": \"fully enforced\""), "%s", r.out);
	run_free(&r);
	iour_plan__free(plan);
	iour_policy__free(p);

	/* The C output compiles. */
	tool_run(&r, "compile", POL "client.json", "--kernel", "7.2", "--format", "c");
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_eq(test_tmp_template(src, sizeof(src), "iour-cli-c-", ".c"), 0);
	fd = mkstemps(src, 2);
	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, r.out, strlen(r.out)), (ssize_t)strlen(r.out));
	close(fd);
	run_argv(&c, cc, NULL);
	unlink(src);
	cr_assert_eq(c.status, 0, "the C output does not compile: %s", c.err);
	cr_assert(has(r.out, "const struct sock_filter iour_step3_prog[]"), "%s", r.out);
	run_free(&c);
	run_free(&r);
}

Test(cli_policy, compile_usage_errors)
{
	struct run r;

	tool_run(&r, "compile", POL "client.json", "--kernel", "7.0", "--level", "4");
	cr_assert_eq(r.status, 2);
	run_free(&r);
	tool_run(&r, "compile", POL "client.json", "--format", "yaml");
	cr_assert_eq(r.status, 2);
	run_free(&r);
	tool_run(&r, "compile", POL "client.json", "--level", "6");
	cr_assert_eq(r.status, 2);
	run_free(&r);
	tool_run(&r, "compile", POL "client.json", "--kernel", "seven");
	cr_assert_eq(r.status, 2);
	run_free(&r);
	tool_run(&r, "compile");
	cr_assert_eq(r.status, 2);
	run_free(&r);
}

/* Every release from 5.1 plans: before 5.10 nothing can be restricted per
 * ring, the plan and its report say so, and the companion makes
 * io_uring_setup fail (doc/kernel.md).  5.10 plans ring restrictions. */
Test(cli_policy, compile_plans_every_kernel_from_5_1)
{
	char k[16], line[160];
	struct run r;

	for (unsigned int minor = 1; minor <= 10; minor++) {
		uint32_t kver = IOUR_KVER(5, minor);

		snprintf(k, sizeof(k), "5.%u", minor);
		tool_run(&r, "compile", POL "client.json", "--kernel", k);
		cr_assert_eq(r.status, 0, "--kernel %s: %s", k, r.err);
		cr_assert_str_eq(r.err, "", "--kernel %s", k);
		/* run's mechanism there: the broker from 5.10 (ring
		 * restrictions), the companion before */
		snprintf(line, sizeof(line),
			 "# iour-restrict compile, planned for Linux %s (from "
			 "the library's tables), mechanism %s\n",
			 k, minor >= 10 ? "broker" : "companion");
		cr_assert_eq(strncmp(r.out, line, strlen(line)), 0, "%s", r.out);
		/* the library's opcode limits for that release label the plan
		 * from 5.10; before, as iour_probe() there, none (0: unknown) */
		snprintf(line, sizeof(line), "IORING_OP_LAST %d, IORING_REGISTER_LAST %d",
			 minor < 10 ? 0 : iour_opcode_last(kver),
			 minor < 10 ? 0 : iour_register_op_last(kver));
		cr_assert(has(r.out, line), "--kernel %s: no '%s' in\n%s", k, line, r.out);
		if (minor < 10) {
			cr_assert(has(r.out, "steps: 2 (2 task, 0 ring)"), "%s", r.out);
			cr_assert(has(r.out, "the kernel cannot restrict io_uring (Linux 5.10+ "
					     "needed)"),
				  "%s", r.out);
			cr_assert(has(r.out, "mechanism: seccomp companion"), "%s", r.out);
			cr_assert(has(r.out,
				      "io_uring_setup fails with ENOSYS for the task and its "
				      "descendants (seccomp companion)"),
				  "%s", r.out);
			cr_assert(has(r.out, "SECCOMP_RET_ERRNO(38)"), "%s", r.out);
			cr_assert(has(r.out, "status: partially enforced"), "%s", r.out);
		} else {
			cr_assert(!has(r.out, "Linux 5.10+ needed"), "%s", r.out);
			cr_assert(has(r.out, "[ring]"), "%s", r.out);
		}
		run_free(&r);
	}
	/* JSON too, for 5.4 */
	tool_run(&r, "compile", POL "client.json", "--kernel", "5.4", "--format", "json");
	cr_assert_eq(r.status, 0, "%s", r.err);
	assert_valid_json(r.out);
	run_free(&r);
}

Test(cli_policy, compile_bad_kernel_versions_are_usage_errors)
{
	static const char *const bad[] = { "seven", "5", "5.256", "256.0", "0.0", "5.4.x", "" };
	struct run r;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		tool_run(&r, "compile", POL "client.json", "--kernel", bad[i]);
		cr_assert_eq(r.status, 2, "--kernel '%s': status %d", bad[i], r.status);
		cr_assert(has(r.err, "is not a kernel version X.Y"), "'%s': %s", bad[i], r.err);
		cr_assert_str_eq(r.out, "", "'%s'", bad[i]);
		run_free(&r);
	}
}

/* A planning error says which kernel it planned for and why. */
Test(cli_policy, compile_planning_error_says_why)
{
	static const char keep[] =
		"{ \"defaultAction\": \"deny\", \"noNewPrivs\": \"keep\", "
		"\"entries\": [ { \"names\": [\"nop\"], \"action\": \"allow\" } ] }\n";
	struct run r;

	run_tool(&r, keep, "compile", "-", "--kernel", "7.0", (const char *)NULL);
	cr_assert_eq(r.status, 1, "%s", r.err);
	cr_assert_str_eq(r.out, "");
	cr_assert(has(r.err, "planning the policy for Linux 7.0 (from the library's tables): "),
		  "%s", r.err);
	cr_assert(has(r.err, "(-EACCES)\n"), "%s", r.err);
	cr_assert(has(r.err, "why: the policy needs no_new_privs or CAP_SYS_ADMIN on the task "
			     "path, the task has neither, and the policy's \"noNewPrivs\" is "
			     "\"keep\"\n"),
		  "%s", r.err);
	run_free(&r);
}

/* ---- check, against the simulator ---------------------------------------- */

struct req {
	const char *op;
	const char *a1, *a2, *a3; /* FIELD=VALUE for the CLI */
	/* The same request for the library's context builders. */
	uint32_t family, type;
	uint64_t flags;
	const char *ip;
	uint16_t port;
	const char *want; /* expected verdict and deciding rule: "deny rule 1" */
};

static const struct req client_reqs[] = {
	{ "SOCKET", "family=AF_INET", "type=SOCK_STREAM", NULL, AF_INET, SOCK_STREAM, 0, NULL, 0,
	  "allow rule 1" },
	{ "SOCKET", "family=AF_INET6", "type=SOCK_STREAM", NULL, AF_INET6, SOCK_STREAM, 0, NULL,
	  0, "allow rule 1" },
	{ "SOCKET", "family=AF_INET", "type=SOCK_DGRAM", NULL, AF_INET, SOCK_DGRAM, 0, NULL, 0,
	  "deny -" },
	{ "SOCKET", "family=AF_UNIX", "type=SOCK_DGRAM", NULL, AF_UNIX, SOCK_DGRAM, 0, NULL, 0,
	  "allow rule 2" },
	{ "SOCKET", "family=AF_PACKET", "type=SOCK_RAW", NULL, AF_PACKET, SOCK_RAW, 0, NULL, 0,
	  "deny -" },
	{ "OPENAT", "flags=O_RDONLY", NULL, NULL, 0, 0, O_RDONLY, NULL, 0, "allow rule 2" },
	{ "OPENAT", "flags=O_WRONLY", NULL, NULL, 0, 0, O_WRONLY, NULL, 0, "deny rule 1" },
	{ "OPENAT", "flags=O_RDONLY|O_CREAT", NULL, NULL, 0, 0, O_RDONLY | O_CREAT, NULL, 0,
	  "deny rule 1" },
	{ "CONNECT", "addr4=10.1.2.3", "port=443", NULL, 0, 0, 0, "10.1.2.3", 443, "deny rule 1" },
	{ "CONNECT", "addr4=192.0.2.1", "port=80", NULL, 0, 0, 0, "192.0.2.1", 80, "allow rule 2" },
	{ "CONNECT", "addr4=11.0.0.1", "port=80", NULL, 0, 0, 0, "11.0.0.1", 80, "allow rule 2" },
	{ "NOP", NULL, NULL, NULL, 0, 0, 0, NULL, 0, "allow rule 1" },
	{ "RENAMEAT", NULL, NULL, NULL, 0, 0, 0, NULL, 0, "deny -" },
};

static void build_ctx(const struct req *q, uint8_t *ctx)
{
	uint32_t op = (uint32_t)iour_opcode_from_name(q->op);

	cr_assert_eq(iour_ctx_generic(ctx, IOUR_CTX_SIZE, op, 0, 0), 0);
	if (!strcmp(q->op, "SOCKET")) {
		cr_assert_eq(iour_ctx_socket(ctx, IOUR_CTX_SIZE, q->family, q->type, 0), 0);
	} else if (!strcmp(q->op, "OPENAT")) {
		cr_assert_eq(iour_ctx_open(ctx, IOUR_CTX_SIZE, q->flags, 0, 0), 0);
	} else if (!strcmp(q->op, "CONNECT")) {
		struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(q->port) };

		cr_assert_eq(inet_pton(AF_INET, q->ip, &sin.sin_addr), 1);
		cr_assert_eq(iour_ctx_connect(ctx, IOUR_CTX_SIZE, &sin, sizeof(sin)), 0);
	}
}

/*
 * The verdict of the plan for Linux 7.2 on one context, as the kernel would
 * reach it: the classic allow-list entries of the task set, then the
 * opcode's filter program run by the simulator.
 */
static bool simulated(const struct iour_plan *plan, const uint8_t *ctx, uint32_t op)
{
	int n = iour_plan__step_cnt(plan);
	bool listed = false, restricted = false;

	for (int i = 0; i < n; i++) {
		struct iour_plan_step st = { .sz = sizeof(st) };
		uint8_t arg[4096];
		size_t len = sizeof(arg);

		cr_assert_eq(iour_plan__step(plan, (size_t)i, &st), 0);
		if (st.op != IOUR_STEP_RESTRICTIONS)
			continue;
		cr_assert_eq(iour_plan__step_arg(plan, (size_t)i, arg, &len), 0);
		for (size_t off = len - st.entries * 16; off < len; off += 16) {
			struct iour_restriction e;

			memcpy(&e, arg + off, sizeof(e));
			if (e.opcode == IOUR_RESTRICTION_SQE_OP) {
				restricted = true;
				listed |= e.arg == op;
			}
		}
	}
	if (restricted && !listed)
		return false;
	for (int i = 0; i < n; i++) {
		struct iour_plan_step st = { .sz = sizeof(st) };
		struct iour_insn insns[4096];
		size_t cnt = 4096;
		struct iour_sim_result res = { .sz = sizeof(res) };
		int r;

		cr_assert_eq(iour_plan__step(plan, (size_t)i, &st), 0);
		if (st.op != IOUR_STEP_BPF_FILTER || st.opcode != op)
			continue;
		cr_assert_eq(iour_plan__step_insns(plan, (size_t)i, insns, &cnt), 0);
		r = iour_cbpf_run(insns, cnt, ctx, IOUR_CTX_SIZE, &res);
		cr_assert_eq(r, 0, "the simulator refused the program of opcode %u", op);
		return res.allowed != 0;
	}
	return listed;
}

Test(cli_policy, check_agrees_with_the_simulator)
{
	struct iour_plan_opts po = { .sz = sizeof(po), .flags = IOUR_PLAN_FORCE_LEVEL, .level = 5 };
	struct iour_policy *p;
	struct iour_plan *plan;

	cr_assert_eq(iour_policy__load_file(POL "client.json", NULL, &p, NULL), 0);
	cr_assert_eq(iour_policy__plan(p, &po, &plan), 0);
	for (size_t i = 0; i < sizeof(client_reqs) / sizeof(client_reqs[0]); i++) {
		const struct req *q = &client_reqs[i];
		uint8_t ctx[IOUR_CTX_SIZE];
		char want[64], verdict[8], rule[8];
		const char *v;
		struct run r;
		bool sim;

		run_tool(&r, NULL, "check", POL "client.json", "--op", q->op, q->a1 ? q->a1 : NULL,
			 q->a1 && q->a2 ? q->a2 : NULL, q->a2 && q->a3 ? q->a3 : NULL, (const char *)NULL);
		cr_assert_eq(r.status, 0, "%s: %s", q->op, r.err);
		v = strstr(r.out, "verdict: ");
		cr_assert_not_null(v);
		cr_assert_eq(sscanf(v, "verdict: %7s", verdict), 1);
		v = strstr(r.out, "rule: ");
		cr_assert_not_null(v);
		cr_assert_eq(sscanf(v, "rule: %7s", rule), 1);
		snprintf(want, sizeof(want), "%s %s%s", verdict, strcmp(rule, "-") ? "rule " : "",
			 rule);
		cr_assert_str_eq(want, q->want, "%s %s %s: check says '%s'", q->op,
				 q->a1 ? q->a1 : "", q->a2 ? q->a2 : "", want);
		build_ctx(q, ctx);
		sim = simulated(plan, ctx, (uint32_t)iour_opcode_from_name(q->op));
		cr_assert_eq(sim, !strcmp(verdict, "allow"),
			     "%s %s: check says %s, the compiled filters in the simulator %s", q->op,
			     q->a1 ? q->a1 : "", verdict, sim ? "allow" : "deny");
		run_free(&r);
	}
	iour_plan__free(plan);
	iour_policy__free(p);
}

/* check --register-op and --sqe-flags (issue 18): register opcodes and
 * SQE flags by name; a deny policy without registerOps allows none. */
Test(cli_policy, check_register_ops_and_sqe_flags)
{
	struct run r;

	tool_run(&r, "check", POL "client.json", "--register-op", "REGISTER_FILES");
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(has(r.out, "verdict: deny\nreason: register-allow-list\n"), "%s", r.out);
	run_free(&r);
	tool_run(&r, "check", POL "client.json", "--register-op", "probe", "--expect", "deny");
	cr_assert_eq(r.status, 0, "%s%s", r.out, r.err);
	run_free(&r);
	tool_run(&r, "check", POL "sealed.json", "--register-op", "REGISTER_BUFFERS");
	cr_assert(has(r.out, "verdict: allow\n"), "%s", r.out);
	run_free(&r);
	tool_run(&r, "check", POL "risky.json", "--register-op", "REGISTER_BUFFERS");
	cr_assert(has(r.out, "verdict: allow\nreason: no-classic-part\n"), "%s", r.out);
	run_free(&r);
	tool_run(&r, "check", POL "client.json", "--register-op", "REGISTER_FROB");
	cr_assert_eq(r.status, 2);
	run_free(&r);
	{
		/* defaultAction allow with requestOps only: the plan gates the
		 * SQE side alone, and a ring on Linux 7.2 (split gates) leaves
		 * register opcodes open (doc/kernel.md 2.3). */
		static const char text[] = "{\"defaultAction\":\"allow\","
					   "\"requestOps\":[\"nop\",\"read\"]}";
		char path[] = "/tmp/iour-cli-reqonly-XXXXXX";
		int fd = mkstemp(path);

		cr_assert_geq(fd, 0);
		cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
		close(fd);
		tool_run(&r, "check", path, "--register-op", "REGISTER_FILES", "--expect",
			 "allow");
		unlink(path);
		cr_assert_eq(r.status, 0, "%s%s", r.out, r.err);
		cr_assert(has(r.out, "verdict: allow\nreason: no-register-allow-list\n"), "%s",
			  r.out);
		run_free(&r);
	}
	tool_run(&r, "check", POL "client.json", "--register-op", "probe", "--op", "NOP");
	cr_assert_eq(r.status, 2);
	run_free(&r);
	/* --sqe-flags: names, as sqe_flags= */
	tool_run(&r, "check", POL "client.json", "--op", "NOP", "--sqe-flags", "ASYNC");
	cr_assert(has(r.out, "verdict: deny\nreason: sqe-flags\n"), "%s", r.out);
	run_free(&r);
	tool_run(&r, "check", POL "sealed.json", "--op", "READ", "--sqe-flags", "fixed_file");
	cr_assert(has(r.out, "verdict: allow\n"), "%s", r.out);
	run_free(&r);
	tool_run(&r, "check", POL "client.json", "--op", "NOP", "--sqe-flags", "NOT_A_FLAG");
	cr_assert_eq(r.status, 2);
	run_free(&r);
	/* an unknown name is named, with the nearest valid one */
	tool_run(&r, "check", POL "client.json", "--op", "opnat");
	cr_assert_eq(r.status, 2);
	cr_assert(has(r.err, "unknown request opcode 'opnat' (did you mean 'OPENAT'?)"), "%s",
		  r.err);
	run_free(&r);
	tool_run(&r, "check", POL "client.json", "--register-op", "register_bufers");
	cr_assert(has(r.err, "(did you mean 'REGISTER_BUFFERS'?)"), "%s", r.err);
	run_free(&r);
	tool_run(&r, "check", POL "client.json", "--op", "NOP", "--sqe-flags", "asyn");
	cr_assert(has(r.err, "unknown SQE flag 'asyn' (did you mean 'ASYNC'?)"), "%s", r.err);
	run_free(&r);
}

Test(cli_policy, check_reasons_expect_and_errors)
{
	struct run r;

	tool_run(&r, "check", POL "sealed.json", "--op", "READ");
	cr_assert_eq(r.status, 0);
	cr_assert(has(r.out, "verdict: deny\nreason: sqe-flags\n"), "%s", r.out);
	run_free(&r);
	tool_run(&r, "check", POL "sealed.json", "--op", "READ", "sqe_flags=IOSQE_FIXED_FILE");
	cr_assert_eq(r.status, 0);
	cr_assert(has(r.out, "verdict: allow\n"), "%s", r.out);
	run_free(&r);
	tool_run(&r, "check", POL "sealed.json", "--op", "OPENAT", "sqe_flags=IOSQE_FIXED_FILE");
	cr_assert(has(r.out, "verdict: deny\nreason: request-allow-list\n"), "%s", r.out);
	run_free(&r);
	tool_run(&r, "check", POL "client.json", "--op", "RENAMEAT");
	cr_assert(has(r.out, "reason: default-action\n"), "%s", r.out);
	run_free(&r);
	tool_run(&r, "check", POL "client.json", "--op", "SOCKET", "family=AF_PACKET");
	cr_assert(has(r.out, "reason: opcode-default\n"), "%s", r.out);
	run_free(&r);
	/* --expect */
	tool_run(&r, "check", POL "client.json", "--op", "OPENAT", "flags=O_WRONLY", "--expect",
		 "deny");
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_free(&r);
	tool_run(&r, "check", POL "client.json", "--op", "OPENAT", "flags=O_WRONLY", "--expect",
		 "allow");
	cr_assert_eq(r.status, 1);
	cr_assert(has(r.err, "the verdict is deny, not allow"), "%s", r.err);
	run_free(&r);
	/* usage */
	tool_run(&r, "check", POL "client.json");
	cr_assert_eq(r.status, 2);
	run_free(&r);
	tool_run(&r, "check", POL "client.json", "--op", "NOSUCHOP");
	cr_assert_eq(r.status, 2);
	run_free(&r);
	tool_run(&r, "check", POL "client.json", "--op", "SOCKET", "bogus=1");
	cr_assert_eq(r.status, 2);
	cr_assert(has(r.err, "unknown context field 'bogus'"), "%s", r.err);
	run_free(&r);
	tool_run(&r, "check", POL "client.json", "--op", "SOCKET", "family");
	cr_assert_eq(r.status, 2);
	run_free(&r);
}

/* ---- lint ------------------------------------------------------------------ */

static int count_id(const char *out, const char *id)
{
	char pat[64];
	int n = 0;

	snprintf(pat, sizeof(pat), ": %s: ", id);
	for (const char *s = out; (s = strstr(s, pat)); s++)
		n++;
	return n;
}

/* lint dead-entry (issue 18): rules for an opcode requestOps does not list
 * never run; the finding names the opcodes. */
Test(cli_policy, lint_dead_entries)
{
	static const char text[] =
		"{\"requestOps\":[\"nop\",\"read\"],\"entries\":["
		"{\"names\":[\"nop\",\"openat\"],\"action\":\"allow\"},"
		"{\"names\":[\"socket\"],\"action\":\"deny\",\"args\":[{\"field\":"
		"\"socket.family\",\"op\":\"==\",\"value\":\"AF_PACKET\"}]}]}";
	char path[] = "/tmp/iour-cli-dead-XXXXXX";
	struct run r;
	int fd = mkstemp(path);

	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	tool_run(&r, "lint", path);
	unlink(path);
	cr_assert_eq(r.status, 1, "%s%s", r.out, r.err);
	cr_assert_eq(count_id(r.out, "dead-entry"), 1, "%s", r.out);
	cr_assert(has(r.out, "entries name OPENAT, SOCKET, which requestOps does not list"), "%s",
		  r.out);
	run_free(&r);
	/* every opcode with rules listed: no finding */
	tool_run(&r, "lint", POL "sealed.json");
	cr_assert_eq(count_id(r.out, "dead-entry"), 0, "%s", r.out);
	run_free(&r);
}

Test(cli_policy, lint_findings_and_exit_status)
{
	static const char *const risky_ids[] = { "uring-cmd", "msg-ring", "socket-unfiltered",
						 "default-allow", "fallback-open", "companion-off",
						 "compat-soft", "group-grew" };
	struct run r;

	tool_run(&r, "lint", POL "risky.json");
	cr_assert_eq(r.status, 1);
	for (size_t i = 0; i < sizeof(risky_ids) / sizeof(risky_ids[0]); i++)
		cr_assert_eq(count_id(r.out, risky_ids[i]), 1, "%s:\n%s", risky_ids[i], r.out);
	cr_assert_eq(count_id(r.out, "openat-unfiltered"), 2, "OPENAT and OPENAT2: %s", r.out);
	cr_assert_eq(count_id(r.out, "register-files"), 0);
	cr_assert(has(r.out, "@file-read grew after Linux 6.1 (up to 6.15: READ_MULTISHOT, "
			  "READV_FIXED)"), "%s", r.out);
	cr_assert(has(r.err, "iour-restrict lint: 10 findings"), "%s", r.err);
	run_free(&r);

	tool_run(&r, "lint", POL "risky.json", "--ignore", "group-grew,uring-cmd");
	cr_assert_eq(r.status, 1);
	cr_assert_eq(count_id(r.out, "group-grew"), 0);
	cr_assert_eq(count_id(r.out, "uring-cmd"), 0);
	cr_assert_eq(count_id(r.out, "msg-ring"), 1);
	run_free(&r);

	tool_run(&r, "lint", POL "sealed.json");
	cr_assert_eq(r.status, 1);
	cr_assert_eq(count_id(r.out, "register-files"), 1, "%s", r.out);
	cr_assert(has(r.out, "REGISTER_FILES_UPDATE"), "%s", r.out);
	cr_assert(!has(r.out, "REGISTER_BUFFERS"), "buffers do not change the file table: %s",
		  r.out);
	run_free(&r);

	/* Argument rules that stop the risky requests: no finding. */
	tool_run(&r, "lint", POL "client.json");
	cr_assert_eq(r.status, 0, "%s", r.out);
	cr_assert_str_eq(r.out, "");
	run_free(&r);
	tool_run(&r, "lint", POL "nop-only.json");
	cr_assert_eq(r.status, 0, "%s", r.out);
	run_free(&r);

	/* group-grew counts from --since: @file-read gained nothing after 6.15. */
	tool_run(&r, "lint", POL "risky.json", "--since", "6.15");
	cr_assert_eq(count_id(r.out, "group-grew"), 0, "%s", r.out);
	run_free(&r);
	tool_run(&r, "lint", POL "risky.json", "--since", "6.7");
	cr_assert(has(r.out, "(up to 6.15: READV_FIXED)"), "%s", r.out);
	run_free(&r);

	tool_run(&r, "lint", POL "client.json", "--ignore", "no-such-id");
	cr_assert_eq(r.status, 2);
	run_free(&r);
}

/* lint's advice (tools/cli/core/advice.c): writes without a sync where they reach
 * files, SQPOLL rings a learned policy's comment reports, open.flags == that
 * never holds, the usual companions as suggestions on stderr, and the count
 * also when it is 0. */
Test(cli_policy, lint_advice)
{
	static const char *const examples[] = { "file-server", "fio", "libuv", "static-web-server",
						 "tcp-client" };
	struct run r;

	tool_run(&r, "lint", POL "writes-nosync.json");
	cr_assert_eq(r.status, 1, "%s%s", r.out, r.err);
	cr_assert_eq(count_id(r.out, "no-sync"), 1, "%s", r.out);
	cr_assert(has(r.out, "writes are allowed (WRITE) but no sync opcode"), "%s", r.out);
	run_free(&r);
	/* the same with FSYNC allowed: no finding */
	tool_run(&r, "lint", POL "flags-eq.json");
	cr_assert_eq(count_id(r.out, "no-sync"), 0, "%s", r.out);
	cr_assert_eq(count_id(r.out, "flags-eq"), 1, "%s", r.out);
	cr_assert(has(r.out, "'open.flags == O_RDONLY': 64-bit kernels add O_LARGEFILE"), "%s",
		  r.out);
	run_free(&r);
	/* WRITE to sockets only (files opened read-only): no no-sync */
	tool_run(&r, "lint", POL "client.json");
	cr_assert_eq(count_id(r.out, "no-sync"), 0, "%s", r.out);
	cr_assert(has(r.err, "iour-restrict lint: 0 findings, 1 suggestion\n"), "%s", r.err);
	cr_assert(has(r.err, "companion-missing: SHUTDOWN is usual with SOCKET"), "%s", r.err);
	run_free(&r);
	tool_run(&r, "lint", POL "client.json", "--ignore", "companion-missing");
	cr_assert(has(r.err, "iour-restrict lint: 0 findings\n"), "%s", r.err);
	run_free(&r);
	/* a learned policy's comment: SQPOLL, and NO SYNC without file opens */
	tool_run(&r, "lint", POL "learned-sqpoll.json", "--kernel", "6.18");
	cr_assert_eq(r.status, 1);
	cr_assert_eq(count_id(r.out, "sqpoll-refused"), 1, "%s", r.out);
	cr_assert(has(r.out, "on Linux 6.18 `run` (its ring broker) and the agent refuse SQPOLL "
			  "rings (EPERM)"), "%s", r.out);
	cr_assert(has(r.out, "or use `run` on Linux 7.0 or later"), "%s", r.out);
	cr_assert_eq(count_id(r.out, "no-sync"), 1, "%s", r.out);
	run_free(&r);
	tool_run(&r, "lint", POL "learned-sqpoll.json", "--kernel", "7.0");
	cr_assert(has(r.out, "on Linux 7.0 `run` lets the program create SQPOLL rings"), "%s",
		  r.out);
	run_free(&r);
	/* every shipped example says in its comment how many findings lint
	 * reports, each explained */
	for (size_t i = 0; i < sizeof(examples) / sizeof(examples[0]); i++) {
		char path[128], want[64];
		const char *c;
		int n = 0;

		snprintf(path, sizeof(path), "examples/policies/%s.json", examples[i]);
		tool_run(&r, "lint", path);
		for (c = r.out; (c = strchr(c, '\n')); c++)
			n++;
		snprintf(want, sizeof(want), "lint: %d finding%s", n, n == 1 ? "" : "s");
		cr_assert(has(r.err, want), "%s: %s", path, r.err);
		if (n) {
			char *text = NULL;
			size_t len = 0;
			FILE *f = fopen(path, "r");

			cr_assert_not_null(f);
			cr_assert_eq(getdelim(&text, &len, '\0', f) > 0, true);
			fclose(f);
			snprintf(want, sizeof(want), "`iour-restrict lint` reports %d finding%s", n,
				 n == 1 ? "" : "s");
			cr_assert(strstr(text, want), "%s does not explain its %d findings", path, n);
			free(text);
		}
		run_free(&r);
	}
}

/* ---- groups ---------------------------------------------------------------- */

Test(cli_policy, groups_lists_the_library_table)
{
	int cnt = iour_group_count();
	struct run r;

	cr_assert_gt(cnt, 0);
	tool_run(&r, "groups");
	cr_assert_eq(r.status, 0, "%s", r.err);
	for (int g = 0; g < cnt; g++) {
		struct iour_group_info gi = { .sz = sizeof(gi) };
		uint32_t ops[256];
		char head[160], line[96], since[16];
		const char *sec, *end;
		int n;

		cr_assert_eq(iour_group_get((size_t)g, &gi), 0);
		snprintf(head, sizeof(head), "%s\n    # %s\n", gi.name, gi.help);
		sec = strstr(r.out, head);
		cr_assert_not_null(sec, "no section for %s", gi.name);
		end = strstr(sec, "\n\n");
		n = iour_group_opcodes((size_t)g, 0, ops, 256);
		cr_assert_geq(n, 0);
		for (int i = 0; i < n; i++) {
			int kv = iour_opcode_since(ops[i]);
			const char *at;

			snprintf(since, sizeof(since), "%d.%d", (kv >> 16) & 0xff, (kv >> 8) & 0xff);
			snprintf(line, sizeof(line), "    %-24s %3u  Linux %s\n", iour_opcode_name(ops[i]),
				 ops[i], since);
			at = strstr(sec, line);
			cr_assert(at && (!end || at < end), "%s: no line '%s'", gi.name, line);
		}
	}
	run_free(&r);

	/* One group by name, with or without '@'. */
	tool_run(&r, "groups", "timers");
	cr_assert_eq(r.status, 0);
	cr_assert_eq(strncmp(r.out, "@timers\n", 8), 0, "%s", r.out);
	cr_assert(!has(r.out, "\n@"), "more than one group: %s", r.out);
	cr_assert(has(r.out, "TIMEOUT "), "%s", r.out);
	run_free(&r);
	/* --kernel leaves out what a kernel does not have. */
	tool_run(&r, "groups", "@file-read", "--kernel", "5.6");
	cr_assert_eq(r.status, 0);
	cr_assert(has(r.out, "OPENAT "), "%s", r.out);
	cr_assert(!has(r.out, "READ_MULTISHOT"), "6.7's opcode listed for 5.6: %s", r.out);
	run_free(&r);
	tool_run(&r, "groups", "@no-such-group");
	cr_assert_eq(r.status, 2);
	cr_assert_str_eq(r.out, "");
	run_free(&r);
}

/* ---- large deny-lists: stacked programs ---------------------------------- */

/* A policy whose CONNECT rule holds n scattered (never adjacent) IPv4
 * addresses 10.x.y.(2k), with the given action; allows the rest over IPv4. */
static char *scattered_policy(const char *action, unsigned n)
{
	size_t cap = (size_t)n * 20 + 1024, len = 0;
	char *t = malloc(cap);

	cr_assert_not_null(t);
	len += (size_t)snprintf(t, cap,
				"{\"defaultAction\": \"deny\", \"entries\": [\n"
				" {\"names\": [\"connect\"], \"action\": \"%s\", \"args\": [{\"field\": "
				"\"connect.addr4\", \"op\": \"in\", \"values\": [",
				action);
	for (unsigned i = 0; i < n; i++)
		len += (size_t)snprintf(t + len, cap - len, "%s\"10.%u.%u.%u\"", i ? ", " : "",
					i >> 14, (i >> 6) & 0xff, (i & 0x3f) * 2);
	len += (size_t)snprintf(t + len, cap - len, "]}]}%s\n]}\n",
				strcmp(action, "deny") ?
					"" :
					",\n {\"names\": [\"connect\"], \"action\": \"allow\", "
					"\"args\": [{\"field\": \"connect.family\", \"op\": \"==\", "
					"\"value\": \"AF_INET\"}]}");
	cr_assert_lt(len, cap);
	return t;
}

static int count_str(const char *hay, const char *needle)
{
	int n = 0;

	for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
		n++;
	return n;
}

Test(cli_policy, compile_and_check_show_every_stacked_program)
{
	static const char *const fmts[] = { "text", "json", "c" };
	static const char *const marks[] = { "opcode 16 (CONNECT)", "\"op\": \"bpf_filter\"",
					     "opcode 16 (CONNECT)" };
	struct iour_policy *p = NULL;
	char *text = scattered_policy("deny", 12000);
	struct run r;
	int cnt;

	cr_assert_eq(iour_policy__load_json(text, strlen(text), NULL, &p, NULL), 0);
	cnt = iour_policy__prog_cnt(p, 16);
	iour_policy__free(p);
	cr_assert_gt(cnt, 1);
	for (size_t i = 0; i < 3; i++) {
		run_tool(&r, text, "compile", "-", "--kernel", "7.2", "--format", fmts[i],
			 (const char *)NULL);
		cr_assert_eq(r.status, 0, "%s: %s", fmts[i], r.err);
		cr_assert_eq(count_str(r.out, marks[i]), cnt, "%s: %d programs shown, %d held",
			     fmts[i], count_str(r.out, marks[i]), cnt);
		if (i == 0)
			cr_assert(has(r.out, "split across"), "%s", r.out);
		if (i == 1)
			assert_valid_json(r.out);
		run_free(&r);
	}
	/* i = 11999: 10.0.187.62, denied by a late program; .63 is not listed */
	run_tool(&r, text, "check", "-", "--op", "connect", "family=AF_INET", "addr4=10.0.187.62",
		 (const char *)NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(has(r.out, "verdict: deny") && has(r.out, "rule: 1"), "%s", r.out);
	run_free(&r);
	run_tool(&r, text, "check", "-", "--op", "connect", "family=AF_INET", "addr4=10.0.187.63",
		 (const char *)NULL);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(has(r.out, "verdict: allow") && has(r.out, "rule: 2"), "%s", r.out);
	run_free(&r);
	free(text);
}

Test(cli_policy, unsplittable_allow_list_names_the_opcode_and_why)
{
	static const char *const cmds[] = { "compile", "check", "run" };
	char *text = scattered_policy("allow", 12000);
	struct run r;

	for (size_t i = 0; i < 3; i++) {
		if (i == 1)
			run_tool(&r, text, "check", "-", "--op", "connect", (const char *)NULL);
		else if (i == 2)
			run_tool(&r, text, "run", "-", "--", "/bin/echo", "ran", (const char *)NULL);
		else
			run_tool(&r, text, "compile", "-", (const char *)NULL);
		cr_assert_eq(r.status, 3, "%s: status %d", cmds[i], r.status);
		cr_assert_str_eq(r.out, "", "%s", cmds[i]);
		cr_assert(has(r.err, "<stdin>:") && has(r.err, "CONNECT") &&
				  has(r.err, "an allow-list cannot be split across stacked filters"),
			  "%s: %s", cmds[i], r.err);
		run_free(&r);
	}
	free(text);
}

/* ---- effects: explain and the lint findings on them ------------------------ */

Test(cli_policy, explain_and_lint_name_the_open_paths_of_an_effect)
{
	struct run r;

	/* A CONNECT destination rule with SENDMSG allowed; FIXED_FILE
	 * required with SPLICE allowed (doc/security.md 2.1). */
	tool_run(&r, "lint", POL "bypass.json");
	cr_assert_eq(r.status, 1);
	cr_assert_eq(count_id(r.out, "effect-bypass"), 1, "%s", r.out);
	cr_assert(has(r.out, "on Linux 7.2, net-dest is filtered on one path and open on "
			  "another: open: SENDMSG"), "%s", r.out);
	cr_assert(has(r.out, "filtered: CONNECT"), "%s", r.out);
	cr_assert(has(r.out, "fixed-file-bypass: on Linux 7.2: SPLICE"), "%s", r.out);
	run_free(&r);
	tool_run(&r, "lint", POL "bypass.json", "--ignore", "effect-bypass,fixed-file-bypass");
	cr_assert_eq(count_id(r.out, "effect-bypass") + count_id(r.out, "fixed-file-bypass"), 0);
	run_free(&r);
	/* Before 7.2 CONNECT has no payload: its rule denies it whole, so
	 * nothing is filtered and nothing bypassed. */
	tool_run(&r, "lint", POL "bypass.json", "--kernel", "7.0");
	cr_assert_eq(count_id(r.out, "effect-bypass"), 0, "%s", r.out);
	run_free(&r);
	/* The shipped client denies the other destination paths. */
	tool_run(&r, "lint", "examples/policies/tcp-client.json");
	cr_assert_eq(count_id(r.out, "effect-bypass"), 0, "%s", r.out);
	run_free(&r);

	tool_run(&r, "explain", POL "bypass.json", "--kernel", "7.2");
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(has(r.out, "(from the library's tables), mechanism task: partially enforced\n"),
		  "%s", r.out);
	cr_assert(has(r.out, "\nnet-dest           open      open: SENDMSG"), "%s", r.out);
	cr_assert(has(r.out, "\nplain-fd           open      open: SPLICE"), "%s", r.out);
	cr_assert(has(r.out, "\nringless-register  closed"), "%s", r.out);
	run_free(&r);
	tool_run(&r, "explain", "examples/policies/tcp-client.json", "--kernel", "7.2");
	cr_assert(has(r.out, "\nnet-dest           filtered  filtered: CONNECT"), "%s", r.out);
	run_free(&r);
	/* 6.18: run is a ring broker there, and explain says so by default:
	 * OPENAT, RECVMSG and the ring-less register calls stay open on the
	 * brokered rings (doc/security.md 2.1, "The ring broker's view"). */
	tool_run(&r, "explain", "examples/policies/tcp-client.json", "--kernel", "6.18");
	cr_assert(has(r.out, "(from the library's tables), mechanism broker: partially "
			     "enforced\n"),
		  "%s", r.out);
	cr_assert(has(r.out, "\nnet-dest           closed"), "%s", r.out);
	cr_assert(has(r.out, "\nfile-open          open      open: OPENAT ("), "%s", r.out);
	cr_assert(has(r.out, "\ncross-ring         open      open: fd -1 REGISTER_SEND_MSG_RING ("),
		  "%s", r.out);
	cr_assert(has(r.out, "RECVMSG (SCM_RIGHTS received"), "%s", r.out);
	cr_assert(has(r.out, "\nringless-register  open      open: fd -1 REGISTER_SEND_MSG_RING"),
		  "%s", r.out);
	run_free(&r);
	/* The companion's view: no ring, every effect closed. */
	tool_run(&r, "explain", "examples/policies/tcp-client.json", "--kernel", "6.18",
		 "--mechanism", "companion");
	cr_assert(has(r.out, "mechanism companion: "), "%s", r.out);
	cr_assert(has(r.out, "\nfile-open          closed"), "%s", r.out);
	cr_assert(has(r.out, "\nringless-register  closed"), "%s", r.out);
	run_free(&r);
	/* 6.1: no ring-less register calls yet. */
	tool_run(&r, "explain", "examples/policies/tcp-client.json", "--kernel", "6.1");
	cr_assert(has(r.out, "mechanism broker: "), "%s", r.out);
	cr_assert(!has(r.out, "ringless-register"), "%s", r.out);
	run_free(&r);
	/* Mechanisms that do not fit the kernel or the policy. */
	tool_run(&r, "explain", "examples/policies/tcp-client.json", "--kernel", "6.18",
		 "--mechanism", "task");
	cr_assert_eq(r.status, 1, "%s", r.err);
	cr_assert(has(r.err, "no task restrictions"), "%s", r.err);
	run_free(&r);
	tool_run(&r, "explain", "examples/policies/tcp-client.json", "--kernel", "7.2",
		 "--mechanism", "companion");
	cr_assert_eq(r.status, 1, "%s", r.err);
	run_free(&r);
	tool_run(&r, "explain", "examples/policies/tcp-client.json", "--kernel", "5.4",
		 "--mechanism", "broker");
	cr_assert_eq(r.status, 1, "%s", r.err);
	run_free(&r);
	tool_run(&r, "explain", "examples/policies/tcp-client.json", "--mechanism", "bogus");
	cr_assert_eq(r.status, 2, "%s", r.err);
	run_free(&r);
	tool_run(&r, "explain", POL "ring.json", "--mechanism", "broker");
	cr_assert_eq(r.status, 2, "%s", r.err);
	cr_assert(has(r.err, "target ring"), "%s", r.err);
	run_free(&r);
	tool_run(&r, "explain", "examples/policies/tcp-client.json", "--kernel", "6.18",
		 "--mechanism", "ring");
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(has(r.out, "mechanism ring: "), "%s", r.out);
	run_free(&r);
	/* check --mechanism: what the mechanism enforces for one request. */
	tool_run(&r, "check", "examples/policies/tcp-client.json", "--op", "SOCKET",
		 "family=AF_INET", "type=SOCK_STREAM", "--kernel", "6.18", "--mechanism", "auto",
		 "--expect", "deny");
	cr_assert_eq(r.status, 0, "%s%s", r.out, r.err);
	cr_assert(has(r.out, "verdict: allow\n"), "%s", r.out);
	cr_assert(has(r.out, "enforced: deny (mechanism broker: its argument rules cannot be "
			     "enforced there (fallback closed))\n"),
		  "%s", r.out);
	run_free(&r);
	tool_run(&r, "check", "examples/policies/tcp-client.json", "--op", "SOCKET",
		 "family=AF_INET", "type=SOCK_STREAM", "--kernel", "7.2", "--mechanism", "auto");
	cr_assert(has(r.out, "enforced: allow (mechanism task: as the policy says)\n"), "%s",
		  r.out);
	run_free(&r);
	tool_run(&r, "check", "examples/policies/tcp-client.json", "--op", "READ", "--kernel",
		 "6.18", "--mechanism", "companion", "--expect", "allow");
	cr_assert_eq(r.status, 1, "%s", r.out);
	cr_assert(has(r.out, "enforced: deny (mechanism companion: io_uring_setup fails"), "%s",
		  r.out);
	run_free(&r);
	tool_run(&r, "explain");
	cr_assert_eq(r.status, 2);
	run_free(&r);
	tool_run(&r, "explain", POL "bypass.json", "--kernel", "x");
	cr_assert_eq(r.status, 2);
	run_free(&r);
}

/* The paths' versions (doc/kernel.md 6.7): SCM_RIGHTS through SENDMSG and
 * RECVMSG existed at 5.3 and again from 5.12 (5.10.162+ stable), so the
 * report must not give a later version; descriptors received and a ring
 * resize onto user pages are paths to their effects. */
Test(cli_policy, explain_gives_the_earliest_version_of_each_path)
{
	struct run r;

	tool_run(&r, "explain", POL "bypass.json", "--kernel", "7.2");
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(has(r.out, "SENDMSG (SCM_RIGHTS descriptors; -EINVAL 5.5-5.11 before "
			     "5.10.162; 5.3+)"),
		  "%s", r.out);
	cr_assert(!has(r.out, "5.12+"), "%s", r.out);
	run_free(&r);
	tool_run(&r, "explain", POL "recv-fds.json", "--kernel", "7.2");
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(has(r.out, "\ncross-ring         open      open: RECVMSG (SCM_RIGHTS received"),
		  "%s", r.out);
	cr_assert(has(r.out, "\nmem-reg            open      open: REGISTER_RESIZE_RINGS ("), "%s",
		  r.out);
	cr_assert(has(r.out, "; 6.13+)"), "%s", r.out);
	run_free(&r);
}
