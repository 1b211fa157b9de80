/* SPDX-License-Identifier: MIT */
/*
 * Attacks on promises that need no io_uring restriction of the running
 * kernel (the live tier, tests/live/test_live_attacks.c, holds the rest):
 *
 * - design.md: `IOUR_FEATURE_LEVEL` is read with secure_getenv(), so a
 *   set-user-ID program cannot be made to drop features.  A set-user-ID
 *   root copy of this binary, run by an unprivileged user with the
 *   variable set, must report the kernel's real level; the same copy
 *   without the set-user-ID bit must honour the variable (so the variable
 *   does reach the program).  Root only (it chowns and runs as nobody).
 * - design.md: a classic allow-list that denies an opcode with argument
 *   rules shadows them, and the plan says so, at every level a plan can
 *   be compiled for.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "child.h"
#include "iouring_restrict/iouring_restrict.h"
#include "ring_util.h"
#include "uring_avail.h"

#define HELPER_ENV "IOUR_TEST_PRINT_FEATURE_LEVEL"

/* Helper mode: a copy of this binary run with HELPER_ENV prints the
 * effective feature level and exits before Criterion starts. */
__attribute__((constructor)) static void print_level_helper(void)
{
	if (!getenv(HELPER_ENV))
		return;
	printf("level %d\n", iour_feature_level());
	fflush(stdout);
	_exit(0);
}

/* Copy /proc/self/exe to `dst` (mode 0755, owned by root). */
static void copy_self(const char *dst)
{
	char buf[65536];
	ssize_t n;
	int in = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	int out = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);

	cr_assert(in >= 0 && out >= 0, "copy: errno %d", errno);
	while ((n = read(in, buf, sizeof(buf))) > 0)
		cr_assert_eq(write(out, buf, (size_t)n), n);
	cr_assert_eq(n, 0);
	close(in);
	close(out);
}

/* Run `path` as nobody (uid/gid 65534) with IOUR_FEATURE_LEVEL=1; the
 * level it printed, or -1. */
static int level_as_nobody(const char *path)
{
	char out[128] = { 0 };
	int pfd[2], st = 0, level = -1;
	size_t got = 0;
	ssize_t k;
	pid_t pid;

	cr_assert_eq(pipe(pfd), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		char *argv[] = { (char *)path, NULL };
		char *envp[] = { "IOUR_FEATURE_LEVEL=1", HELPER_ENV "=1", NULL };

		dup2(pfd[1], 1);
		if (setgroups(0, NULL) || setresgid(65534, 65534, 65534) ||
		    setresuid(65534, 65534, 65534))
			_exit(90);
		execve(path, argv, envp);
		_exit(91);
	}
	close(pfd[1]);
	while (got + 1 < sizeof(out) && (k = read(pfd[0], out + got, sizeof(out) - 1 - got)) > 0)
		got += (size_t)k;
	close(pfd[0]);
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "helper status %#x, output '%s'", st,
		  out);
	if (sscanf(out, "level %d", &level) != 1)
		level = -1;
	return level;
}

Test(attacks, feature_level_env_ignored_when_setuid)
{
	UNIT_REQUIRE_URING();
	char dir[4096], path[4200];
	const char *why;
	int real, plain, suid;

	if (geteuid() != 0)
		cr_skip_test("skipped: needs root (chown to root, set-user-ID, run as nobody)");
	why = test_dir_exec_problem(test_tmpdir(), 1);
	if (why)
		cr_skip_test("skipped: the test runs a set-user-ID copy of itself from %s, and %s",
			     test_tmpdir(), why);
	cr_assert_eq(test_tmp_template(dir, sizeof(dir), "iour-setuid-", NULL), 0);
	real = iour_feature_level();
	cr_assert_gt(real, 1, "the test needs a kernel level above the forced 1: %d", real);
	cr_assert_not_null(mkdtemp(dir));
	cr_assert_eq(chmod(dir, 0755), 0);
	snprintf(path, sizeof(path), "%s/helper", dir);
	copy_self(path);
	cr_assert_eq(chown(path, 0, 0), 0);
	/* Control: without set-user-ID the variable lowers the level. */
	plain = level_as_nobody(path);
	cr_expect_eq(plain, 1, "plain copy as nobody with IOUR_FEATURE_LEVEL=1: level %d", plain);
	/* Set-user-ID root: secure mode, the variable is ignored. */
	cr_assert_eq(chmod(path, 04755), 0);
	suid = level_as_nobody(path);
	cr_expect_eq(suid, real, "set-user-ID copy as nobody with IOUR_FEATURE_LEVEL=1: level %d, "
		     "the kernel's is %d", suid, real);
	unlink(path);
	rmdir(dir);
	fprintf(stderr, "attacks: IOUR_FEATURE_LEVEL=1 lowers a plain program to %d; a set-user-ID "
		"one keeps level %d\n", plain, suid);
}

/* Classic {NOP} + an allow rule for SOCKET AF_INET, target `target`,
 * planned at forced `level`: the number of SHADOWED notes for SOCKET. */
static int shadow_notes(uint32_t target, uint32_t level)
{
	static const uint32_t nop[] = { 0 };
	struct iour_ruleset *rs = rs_make(nop, 1, 0, 0, NULL, -1);
	struct iour_filter *f = NULL;
	struct iour_policy *p = NULL;
	struct iour_plan *pl = NULL;
	struct iour_cmp c = { .sz = sizeof(c), .field = IOUR_FIELD_SOCKET_FAMILY,
			      .op = IOUR_CMP_EQ, .value = 2 };
	struct iour_decision d = { .sz = sizeof(d) };
	IOUR_OPTS(iour_plan_opts, o, .flags = IOUR_PLAN_FORCE_LEVEL, .level = level);
	int i, n, found = 0;

	cr_assert_eq(iour_filter__new(NULL, &f), 0);
	cr_assert_eq(iour_filter__add_rule(f, 45 /* SOCKET */, IOUR_ALLOW, &c, 1), 0);
	cr_assert_eq(iour_policy__new(NULL, &p), 0);
	cr_assert_eq(iour_policy__set_ruleset(p, rs), 0);
	cr_assert_eq(iour_policy__set_filter(p, f), 0);
	cr_assert_eq(iour_policy__set_attr(p, IOUR_POLICY_ATTR_TARGET, target), 0);
	cr_assert_eq(iour_policy__plan(p, &o, &pl), 0, "level %u", level);
	n = iour_report__decision_cnt(iour_plan__report(pl));
	for (i = 0; i < n; i++)
		if (!iour_report__decision(iour_plan__report(pl), (size_t)i, &d) &&
		    d.kind == IOUR_DECISION_NOTE && d.reason == IOUR_REASON_SHADOWED &&
		    d.opcode == 45)
			found++;
	iour_plan__free(pl);
	iour_policy__free(p);
	iour_filter__free(f);
	iour_ruleset__free(rs);
	return found;
}

Test(attacks, shadowed_filter_noted_at_every_forced_level)
{
	uint32_t level;

	for (level = IOUR_LEVEL_RING; level <= IOUR_LEVEL_MAX; level++) {
		cr_expect_eq(shadow_notes(IOUR_POLICY_TARGET_RING, level), 1, "ring, level %u",
			     level);
		cr_expect_eq(shadow_notes(IOUR_POLICY_TARGET_TASK, level), 1, "task, level %u",
			     level);
	}
}
