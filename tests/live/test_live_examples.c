/* SPDX-License-Identifier: MIT */
/*
 * Live, the examples: the demo, iour-plan --verify and sandbox_launcher run
 * on the real kernel (no shell needed, so they also run inside the
 * new-kernel guest), and each must be confirmed by the kernel: on Linux
 * 7.0+ through task restrictions and ring filters, on older kernels
 * through the ring fallback and the seccomp companion.
 */
#include <stdlib.h>
#include <string.h>

#include "live.h"

static char out[65536];

#define EXAMPLE(...)                                                                   \
	({                                                                             \
		char *const argv_[] = { __VA_ARGS__, NULL };                            \
		int rc_ = live_run_example(argv_, out, sizeof(out));                    \
		cr_assert_neq(rc_, -ENOENT, "the examples were not found");             \
		rc_;                                                                   \
	})

static bool has_task(void)
{
	return live_missing(LIVE_TASK | LIVE_TASK_BPF) == NULL;
}

Test(live_examples, demo)
{
	LIVE_REQUIRE(LIVE_RING);
	cr_assert_eq(EXAMPLE("demo"), 0, "%s", out);
	cr_expect(strstr(out, "the enforcement check confirmed the report"), "%s", out);
	cr_expect(strstr(out, "For the calling task instead, the plan would be fully enforced") ||
			  !has_task(), "%s", out);
	live_log("demo: every claim confirmed, the policy section included");
}

Test(live_examples, iour_plan_verify)
{
	LIVE_REQUIRE(LIVE_RING);
	/* A ring: on 7.0+ with a real SOCKET filter, else closed. */
	cr_assert_eq(EXAMPLE("iour-plan", "-r", "--verify", "NOP", "READ", "SOCKET:inet"), 0, "%s",
		     out);
	cr_expect(strstr(out, "The kernel confirmed the report."), "%s", out);
	if (live_missing(LIVE_RING_BPF) == NULL)
		cr_expect(strstr(out, "SOCKET AF_INET   expected allowed") &&
				  strstr(out, "SOCKET AF_INET6  expected denied"),
			  "a real filter: %s", out);
	/* The task, in a child. */
	cr_assert_eq(EXAMPLE("iour-plan", "-c", "--verify", "NOP", "READ", "SOCKET:inet"), 0, "%s",
		     out);
	cr_expect(strstr(out, "The kernel confirmed the report."), "%s", out);
	if (has_task())
		cr_expect(strstr(out, "after execve of iour-verify-helper") &&
				  strstr(out, "a fresh ring of the restricted task"),
			  "%s", out);
	else
		cr_expect(strstr(out, "a fresh ring after the companion: -ENOSYS"), "%s", out);
	live_log("iour-plan --verify: ring and task plans confirmed by the kernel (%s)",
		 has_task() ? "task restrictions and filters" : "ring fallback and companion");
}

Test(live_examples, sandbox_launcher)
{
	const char *helper = live_helper();
	int rc;

	LIVE_REQUIRE(LIVE_RING);
	cr_assert_not_null(helper);
	/* The command is the helper's own demonstration: a NOP through a
	 * fresh ring, on the allow-list. */
	rc = EXAMPLE("sandbox_launcher", "--", (char *)helper);
	cr_expect(strstr(out, "sandbox_launcher: exec"), "the command was started: %s", out);
	if (has_task()) {
		cr_expect_eq(rc, 0, "NOP is allowed to the command: %s", out);
		cr_expect(strstr(out, "answered as the report says"), "%s", out);
		cr_expect(strstr(out, "status: fully enforced"), "%s", out);
	} else {
		cr_expect_eq(rc, 1, "io_uring is blocked for the command: %s", out);
		cr_expect(strstr(out, "io_uring_setup fails as claimed"), "%s", out);
	}
	live_log("sandbox_launcher: report confirmed after execve, command started");
}
