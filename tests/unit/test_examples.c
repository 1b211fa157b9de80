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
	static char out[16384];

	cr_assert_eq(run("demo", NULL, out, sizeof(out)), 0, "%s", out);
	cr_assert(strstr(out, "Every claim was confirmed"), "%s", out);
	cr_assert(strstr(out, "-EACCES"));
	cr_assert_null(strstr(out, "[FAIL]"));
}

Test(examples, demo_refuses_without_ring_restrictions)
{
	static char out[16384];

	cr_assert_eq(run("demo", "IOUR_FEATURE_LEVEL=1", out, sizeof(out)), 1, "%s", out);
	cr_assert(strstr(out, "forced by IOUR_FEATURE_LEVEL"), "%s", out);
	cr_assert(strstr(out, "nothing to demonstrate"), "%s", out);
}

Test(examples, liburing_ring)
{
	static char out[4096];

	cr_assert_eq(run("liburing_ring", NULL, out, sizeof(out)), 0, "%s", out);
	cr_assert(strstr(out, "the kernel enforced the set"), "%s", out);
}
