/* SPDX-License-Identifier: MIT */
/*
 * Live, the examples: the demo, iour-plan --verify, sandbox_launcher and
 * sandbox_layers run on the real kernel (no shell needed, so they also run inside the
 * new-kernel guest), and each must be confirmed by the kernel: on Linux
 * 7.0+ through task restrictions and ring filters, on older kernels
 * through the ring fallback and the seccomp companion.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

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

/* sandbox_layers (doc/sandbox.md): each layer attacked by sandbox_attack.
 * Landlock refuses a file outside the allowed trees through openat(2) and
 * through IORING_OP_OPENAT (which goes through the same VFS checks),
 * seccomp refuses socket(2), the io_uring layer (task restrictions on
 * 7.0+, the ring broker before) refuses IORING_OP_SOCKET.  Controls: every
 * attempt works unconfined; a rule covering the outside tree lets both
 * opens through; SOCKET added with -a gets through io_uring while
 * socket(2) stays refused. */
static bool line(const char *text, const char *want)
{
	const char *p = strstr(text, want);

	return p && (p == text || p[-1] == '\n') && p[strlen(want)] == '\n';
}

Test(live_examples, sandbox_layers)
{
	char top[] = "/tmp/iour-layers-XXXXXX", in[64], out_dir[64], in_f[80], out_f[80];
	char attack[4200], exdir[4096], build[4200];
	const char *sys_dirs[] = { "/usr", "/lib", "/lib64", "/etc" };
	char *argv[40];
	size_t i, n = 0;
	int abi, fd, rc;

	LIVE_REQUIRE(LIVE_RING);
	abi = (int)syscall(SYS_landlock_create_ruleset, NULL, 0, 1U /* VERSION */);
	if (abi < 1) {
		fprintf(stderr, "live: skipped: Landlock is not available (%s)\n", strerror(errno));
		cr_skip_test("skipped: Landlock is not available (%s)", strerror(errno));
	}
	cr_assert_not_null(live_examples_dir());
	cr_assert_not_null(realpath(live_examples_dir(), exdir));
	snprintf(attack, sizeof(attack), "%s/sandbox_attack", exdir);
	/* the library the examples load ($ORIGIN/..: the build tree, or / in
	 * the guests), as a file: its directory may hold the outside tree */
	snprintf(build, sizeof(build), "%s/../libiouring-restrict.so.1", exdir);
	cr_assert_not_null(mkdtemp(top));
	snprintf(in, sizeof(in), "%s/in", top);
	snprintf(out_dir, sizeof(out_dir), "%s/out", top);
	snprintf(in_f, sizeof(in_f), "%s/f", in);
	snprintf(out_f, sizeof(out_f), "%s/f", out_dir);
	cr_assert_eq(mkdir(in, 0755), 0);
	cr_assert_eq(mkdir(out_dir, 0755), 0);
	cr_assert((fd = open(in_f, O_CREAT | O_WRONLY, 0644)) >= 0);
	close(fd);
	cr_assert((fd = open(out_f, O_CREAT | O_WRONLY, 0644)) >= 0);
	close(fd);

	/* unconfined, every attempt works */
	rc = EXAMPLE("sandbox_attack", in_f, out_f);
	cr_assert_eq(rc, 0, "%s", out);
	cr_assert(line(out, "openat(2) outside: 0") && line(out, "socket(2): 0") &&
			  line(out, "IORING_OP_OPENAT outside: 0") && line(out, "IORING_OP_SOCKET: 0"),
		  "the attacks work unconfined: %s", out);

	argv[n++] = "sandbox_layers";
	for (i = 0; i < sizeof(sys_dirs) / sizeof(sys_dirs[0]); i++)
		if (access(sys_dirs[i], F_OK) == 0) {
			argv[n++] = "-r";
			argv[n++] = (char *)sys_dirs[i];
		}
	argv[n++] = "-r";
	argv[n++] = exdir;
	argv[n++] = "-r";
	argv[n++] = build;
	argv[n++] = "-r";
	argv[n++] = in;
	argv[n++] = "--";
	argv[n++] = attack;
	argv[n++] = in_f;
	argv[n++] = out_f;
	argv[n] = NULL;
	rc = live_run_example(argv, out, sizeof(out));
	cr_assert_eq(rc, 0, "%s", out);
	cr_expect(line(out, "openat(2) inside: 0"), "%s", out);
	cr_expect(line(out, "openat(2) outside: -EACCES"), "Landlock, openat(2): %s", out);
	cr_expect(line(out, "IORING_OP_OPENAT inside: 0"), "%s", out);
	cr_expect(line(out, "IORING_OP_OPENAT outside: -EACCES"), "Landlock, io_uring: %s", out);
	cr_expect(line(out, "socket(2): -EPERM"), "seccomp: %s", out);
	cr_expect(line(out, "IORING_OP_SOCKET: -EACCES"), "the io_uring layer: %s", out);

	/* controls: the outside tree allowed too; SOCKET allowed to io_uring */
	cr_assert_eq(argv[n - 5], in);
	argv[n - 5] = top;
	memmove(argv + 3, argv + 1, (n - 1) * sizeof(*argv));
	argv[n + 2] = NULL;
	argv[1] = "-a";
	argv[2] = "NOP,OPENAT,CLOSE,SOCKET";
	rc = live_run_example(argv, out, sizeof(out));
	cr_assert_eq(rc, 0, "%s", out);
	cr_expect(line(out, "openat(2) outside: 0") && line(out, "IORING_OP_OPENAT outside: 0"),
		  "a rule covering the file lets it open: %s", out);
	cr_expect(line(out, "IORING_OP_SOCKET: 0") && line(out, "socket(2): -EPERM"),
		  "SOCKET allowed to io_uring only: %s", out);
	unlink(in_f);
	unlink(out_f);
	rmdir(in);
	rmdir(out_dir);
	rmdir(top);
	live_log("sandbox_layers: Landlock refused openat(2) and IORING_OP_OPENAT outside its "
		 "trees (ABI %d), seccomp socket(2), io_uring SOCKET (%s)",
		 abi, has_task() ? "task restrictions" : "ring broker");
}
