/* SPDX-License-Identifier: MIT */
/*
 * Live, `iour-restrict run` on a kernel with task restrictions and
 * argument filters (Linux 7.0+; the 7.x guest runs this tier): the tool
 * applies a policy file to itself and executes uring-try
 * (tests/progs/uring_try.c), whose io_uring requests the kernel must then
 * allow or deny as the policy says, and the report line must say "fully
 * enforced" by task restrictions.  On older kernels
 * tests/unit/test_cli_policy.c covers `run` (the companion).
 *
 * The tool and uring-try are found next to the examples' directory:
 * ../tools/iour-restrict, and ../tests/uring-try in the build tree or
 * ../progs/uring-try in the guest's initramfs (scripts/guest-payloads/30-cli.sh; its
 * /init runs every program of /tests as a test).  The policy goes through
 * standard input, so the guest needs no writable file system.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "live.h"

/* iour-restrict run - OPT -- uring-try REQ..., the policy on stdin. */
static int run_policy(const char *policy, const char *opt, const char *const *reqs, char **out,
		      char **err)
{
	char tool[4096], try[4096];
	char *argv[24];
	int in = memfd_create("pol", 0), o = memfd_create("out", 0), e = memfd_create("err", 0);
	int n = 0, st;
	pid_t pid;

	live_prog_path(tool, sizeof(tool), "tools/iour-restrict");
	live_prog_path(try, sizeof(try), "tests/uring-try");
	cr_assert(in >= 0 && o >= 0 && e >= 0);
	cr_assert_eq(write(in, policy, strlen(policy)), (ssize_t)strlen(policy));
	lseek(in, 0, SEEK_SET);
	argv[n++] = tool;
	argv[n++] = "run";
	argv[n++] = "-";
	if (opt)
		argv[n++] = (char *)opt;
	argv[n++] = "--";
	argv[n++] = try;
	for (; *reqs; reqs++)
		argv[n++] = (char *)*reqs;
	argv[n] = NULL;
	fflush(NULL);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		dup2(in, 0);
		dup2(o, 1);
		dup2(e, 2);
		execv(tool, argv);
		_exit(125);
	}
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	*out = live_slurp(o);
	*err = live_slurp(e);
	close(in);
	close(o);
	close(e);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static const char nop_read[] =
	"{ \"defaultAction\": \"deny\",\n"
	"  \"entries\": [ { \"names\": [\"nop\", \"read\"], \"action\": \"allow\" } ] }\n";

Test(live_cli, run_task_restrictions_allow_and_deny)
{
	static const char *const reqs[] = { "nop", "read", "openat-r", "socket-unix", NULL };
	char *out, *err;
	int rc;

	LIVE_REQUIRE(LIVE_TASK);
	rc = run_policy(nop_read, NULL, reqs, &out, &err);
	cr_assert_eq(rc, 0, "%s", err);
	cr_assert_str_eq(out, "setup: ok\nnop: ok\nread: ok\nopenat-r: EACCES\nsocket-unix: EACCES\n",
			 "%s", err);
	cr_assert(strstr(err, "policy fully enforced (task restrictions and filters)"), "%s", err);
	cr_assert(!strstr(err, "io_uring_setup fails"), "%s", err);
	live_log("run: NOP and READ allowed, OPENAT and SOCKET denied by the task's restrictions; "
		 "%.*s", (int)strcspn(err, "\n"), err);
	free(out);
	free(err);
}

static const char args_policy[] =
	"{ \"defaultAction\": \"deny\",\n"
	"  \"entries\": [\n"
	"    { \"names\": [\"nop\"], \"action\": \"allow\" },\n"
	"    { \"names\": [\"socket\"], \"action\": \"allow\",\n"
	"      \"args\": [ { \"field\": \"socket.family\", \"op\": \"==\", \"value\": \"AF_UNIX\" } ] },\n"
	"    { \"names\": [\"openat\"], \"action\": \"deny\",\n"
	"      \"args\": [ { \"field\": \"open.flags\", \"op\": \"&=\",\n"
	"                  \"value\": \"O_WRONLY|O_RDWR|O_CREAT|O_TRUNC\" } ] },\n"
	"    { \"names\": [\"openat\"], \"action\": \"allow\" }\n"
	"  ] }\n";

Test(live_cli, run_task_filters_decide_by_arguments)
{
	static const char *const reqs[] = { "nop", "socket-unix", "socket-inet", "openat-r",
					    "openat-wc:/iour-live-cli-created", NULL };
	char *out, *err;
	int rc;

	LIVE_REQUIRE(LIVE_TASK | LIVE_TASK_BPF);
	rc = run_policy(args_policy, NULL, reqs, &out, &err);
	cr_assert_eq(rc, 0, "%s", err);
	cr_assert_str_eq(out,
			 "setup: ok\nnop: ok\nsocket-unix: ok\nsocket-inet: EACCES\nopenat-r: ok\n"
			 "openat-wc:/iour-live-cli-created: EACCES\n",
			 "%s", err);
	cr_assert(strstr(err, "policy fully enforced (task restrictions and filters)"), "%s", err);
	cr_assert_neq(access("/iour-live-cli-created", F_OK), 0, "the denied open created the file");
	live_log("run: SOCKET and OPENAT decided by their arguments (task filters)");
	free(out);
	free(err);
}

Test(live_cli, run_hard_runs_when_exact)
{
	static const char *const reqs[] = { "nop", "openat-r", NULL };
	char *out, *err;
	int rc;

	LIVE_REQUIRE(LIVE_TASK);
	/* On 7.x the kernel enforces the policy exactly: --hard runs it. */
	rc = run_policy(nop_read, "--hard", reqs, &out, &err);
	cr_assert_eq(rc, 0, "%s", err);
	cr_assert_str_eq(out, "setup: ok\nnop: ok\nopenat-r: EACCES\n", "%s", err);
	live_log("run --hard: exact on this kernel, the command ran restricted");
	free(out);
	free(err);
}

/*
 * `iour-restrict probe --json` shows the probe's flags as the library
 * answers them on this kernel, including the two measured on Debian's
 * 7.3.4 (set there, clear elsewhere): every generation the guests boot.
 */
Test(live_cli, probe_json_shows_the_probe_flags)
{
	static const struct {
		const char *key;
		uint64_t flag;
	} flags[] = {
		{ "\"socket_flags_hidden\": ", IOUR_FEATURES_SOCKET_FLAGS_HIDDEN },
		{ "\"task_set_gates_filters\": ", IOUR_FEATURES_TASK_SET_GATES_FILTERS },
	};
	const struct iour_features *f = live_features();
	char tool[4096], want[96];
	char *argv[] = { tool, "probe", "--json", "--no-cache", NULL };
	int o = memfd_create("out", 0), st;
	char *out;
	pid_t pid;

	live_prog_path(tool, sizeof(tool), "tools/iour-restrict");
	cr_assert_geq(o, 0);
	fflush(NULL);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		dup2(o, 1);
		execv(tool, argv);
		_exit(125);
	}
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "probe --json: status %d", st);
	out = live_slurp(o);
	close(o);
	for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
		snprintf(want, sizeof(want), "%s%s", flags[i].key,
			 (f->flags & flags[i].flag) ? "true" : "false");
		cr_assert(strstr(out, want), "no '%s' in\n%s", want, out);
		fprintf(stderr, "live_cli: probe --json: %s\n", want);
	}
	free(out);
}
