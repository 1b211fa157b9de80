/* SPDX-License-Identifier: MIT */
/*
 * The examples, run as users run them (linked against the shared library):
 * each must exit 0, which it does only if the kernel confirmed every claim
 * it prints.  `make test-run` sets IOUR_EXAMPLES_DIR; elsewhere these skip.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "iouring_restrict/iouring_restrict.h"
#include "uring_avail.h"

static int run(const char *prog, const char *env, char *out, size_t cap)
{
	const char *dir = getenv("IOUR_EXAMPLES_DIR");
	char cmd[1024];
	size_t n = 0, k;
	FILE *f;
	int st;

	if (!dir)
		cr_skip_test("IOUR_EXAMPLES_DIR is not set (run through make test-run)");
	snprintf(cmd, sizeof(cmd), "%s %s/%s 2>&1", env ? env : "", dir, prog);
	f = popen(cmd, "r");
	cr_assert_not_null(f);
	while (n + 1 < cap && (k = fread(out + n, 1, cap - 1 - n, f)) > 0)
		n += k;
	out[n] = '\0';
	st = pclose(f);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1000;
}

Test(examples, demo_confirms_every_claim)
{
	UNIT_REQUIRE_URING();
	static char out[16384];

	cr_assert_eq(run("demo", NULL, out, sizeof(out)), 0, "%s", out);
	cr_assert(strstr(out, "Every claim was confirmed"), "%s", out);
	cr_assert(strstr(out, "-EACCES"));
	cr_assert_null(strstr(out, "[FAIL]"));
	/* Section 5: the policy, its plan and report, the enforcement check. */
	cr_assert(strstr(out, "5. The same allow-list as a policy"), "%s", out);
	cr_assert(strstr(out, "IORING_REGISTER_ENABLE_RINGS"), "the plan is shown");
	cr_assert(strstr(out, "steps: 2 of 2 done"), "the executor's report is shown");
	cr_assert(strstr(out, "the enforcement check confirmed the report"), "%s", out);
	cr_assert_null(strstr(out, "NOT as claimed"));
}

/* Lowered to level 2 (the path of Linux 5.10-6.17), the policy is planned
 * for that level with the kernel's real limits, so the ring is still
 * created through the plan and the check still confirms the report. */
Test(examples, demo_policy_section_on_a_lowered_level)
{
	UNIT_REQUIRE_URING();
	static char out[16384];

	cr_assert_eq(run("demo", "IOUR_FEATURE_LEVEL=2", out, sizeof(out)), 0, "%s", out);
	cr_assert(strstr(out, "forced by IOUR_FEATURE_LEVEL"), "%s", out);
	cr_assert(strstr(out, "plan for the ring, on the running kernel (level 2, lowered"), "%s",
		  out);
	cr_assert(strstr(out, "the enforcement check confirmed the report"), "%s", out);
}

Test(examples, demo_refuses_without_ring_restrictions)
{
	UNIT_REQUIRE_URING();
	static char out[16384];

	cr_assert_eq(run("demo", "IOUR_FEATURE_LEVEL=1", out, sizeof(out)), 1, "%s", out);
	cr_assert(strstr(out, "forced by IOUR_FEATURE_LEVEL"), "%s", out);
	cr_assert(strstr(out, "nothing to demonstrate"), "%s", out);
}

Test(examples, liburing_ring)
{
	UNIT_REQUIRE_URING();
	static char out[4096];

	cr_assert_eq(run("liburing_ring", NULL, out, sizeof(out)), 0, "%s", out);
	cr_assert(strstr(out, "the kernel enforced the set"), "%s", out);
}

/* iour-plan --verify: the plan applied and the report confirmed by the
 * kernel; a plan for another kernel refused, and the exit code says so. */
Test(examples, iour_plan_verify)
{
	UNIT_REQUIRE_URING();
	static char out[16384];
	struct iour_features f = { .sz = sizeof(f) };

	cr_assert_eq(iour_probe(NULL, &f), 0);
	if (f.level < IOUR_LEVEL_RING)
		cr_skip_test("kernel without ring restrictions");
	cr_assert_eq(run("iour-plan -r --verify NOP READ SOCKET:inet", NULL, out, sizeof(out)), 0,
		     "%s", out);
	cr_expect(strstr(out, "enforcement check, the ring made through the plan"), "%s", out);
	cr_expect(strstr(out, "=> confirmed"), "%s", out);
	cr_expect(strstr(out, "The kernel confirmed the report."), "%s", out);
	cr_expect_null(strstr(out, "NOT as claimed"), "%s", out);
	/* The task target, in a child, with the companion on old kernels. */
	cr_assert_eq(run("iour-plan -c -v NOP READ", NULL, out, sizeof(out)), 0, "%s", out);
	if (f.level < IOUR_LEVEL_TASK_BPF)
		cr_expect(strstr(out, "a fresh ring after the companion: -ENOSYS"), "%s", out);
	else
		cr_expect(strstr(out, "a fresh ring of the restricted task"), "%s", out);
	cr_expect(strstr(out, "The kernel confirmed the report."), "%s", out);
	/* Linux 6.1 limits on a kernel that is not 6.1: refused, exit 1. */
	if (f.op_last != 49) {
		cr_assert_eq(run("iour-plan -l 2 -r --verify NOP", NULL, out, sizeof(out)), 1, "%s",
			     out);
		cr_expect(strstr(out, "KERNEL_MISMATCH"), "%s", out);
		cr_expect(strstr(out, "The kernel did NOT confirm the report."), "%s", out);
	}
}

/* The sandbox launcher: policy applied, report printed, confirmed after an
 * execve, then the command runs with no_new_privs and (on kernels without
 * task restrictions) the seccomp companion inherited. */
Test(examples, sandbox_launcher)
{
	UNIT_REQUIRE_URING();
	static char out[16384];
	struct iour_features f = { .sz = sizeof(f) };
	const char *dir = getenv("IOUR_EXAMPLES_DIR");
	char cmd[1200];
	int rc;

	cr_assert_eq(iour_probe(NULL, &f), 0);
	if (f.level < IOUR_LEVEL_RING)
		cr_skip_test("kernel without ring restrictions");
	rc = run("sandbox_launcher -- /bin/sh -c 'echo launched; grep -E \"NoNewPrivs|Seccomp:\" "
		 "/proc/self/status'", NULL, out, sizeof(out));
	cr_assert_eq(rc, 0, "%s", out);
	cr_expect(strstr(out, "sandbox_launcher: | status: "), "the report is printed: %s", out);
	cr_expect(strstr(out, "launched"), "%s", out);
	cr_expect(strstr(out, "NoNewPrivs:\t1"), "%s", out);
	if (f.level < IOUR_LEVEL_TASK_BPF) {
		cr_expect(strstr(out, "io_uring_setup fails as claimed (the report says it fails "
				      "with ENOSYS)"), "%s", out);
		cr_expect(strstr(out, "Seccomp:\t2"), "the companion is inherited: %s", out);
		cr_expect(strstr(out, "status: partially enforced"), "%s", out);
	} else {
		cr_expect(strstr(out, "answered as the report says"), "%s", out);
		cr_expect(strstr(out, "status: fully enforced"), "%s", out);
	}
	/* The command itself tries io_uring: the helper's own demonstration
	 * (a NOP through a fresh ring) fails under the companion. */
	snprintf(cmd, sizeof(cmd), "sandbox_launcher -e -- %s/iour-verify-helper", dir ? dir : ".");
	rc = run(cmd, NULL, out, sizeof(out));
	if (f.level < IOUR_LEVEL_TASK_BPF) {
		cr_expect_eq(rc, 1, "%s", out);
		cr_expect(strstr(out, "fails with EPERM"), "%s", out);
		cr_expect(strstr(out, "NOP expected allowed: Operation not permitted"), "%s", out);
	} else {
		cr_expect_eq(rc, 0, "NOP is on the allow-list: %s", out);
	}
	/* Bad input: nothing applied, nothing started. */
	cr_expect_eq(run("sandbox_launcher -a NOP,NOSUCHOP -- /bin/echo started", NULL, out,
			 sizeof(out)), 1, "%s", out);
	cr_expect_null(strstr(out, "started"), "%s", out);
	cr_expect_eq(run("sandbox_launcher", NULL, out, sizeof(out)), 2, "%s", out);
	cr_expect_eq(run("sandbox_launcher -H /nonexistent -- /bin/echo started", NULL, out,
			 sizeof(out)), 2, "%s", out);
}
