/* SPDX-License-Identifier: MIT */
/*
 * `iour-restrict verify` against a kernel that does NOT enforce the set
 * (doc/cli.md, "verify": "exits 1 if any answer contradicts the set").
 *
 * The test builds a small LD_PRELOAD shim into the build tree: in the
 * tool's own process it turns io_uring_register(fd, IORING_REGISTER_
 * RESTRICTIONS, ...) on a ring into a successful no-op, so the ring the
 * tool creates and enables is in fact unrestricted (the kernel's probe,
 * which runs in forked children, is left alone).  The tool must then see
 * the contradiction on the real kernel: exit status 1, a "NOT ENFORCED"
 * summary, and a NOT ENFORCED row for every request the set denies, while
 * the allowed ones stay "ok".  Without the shim the same command exits 0.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include "uring_avail.h"

static const char shim_src[] =
	"#define _GNU_SOURCE\n"
	"#include <dlfcn.h>\n"
	"#include <stdarg.h>\n"
	"#include <sys/syscall.h>\n"
	"#include <unistd.h>\n"
	"static pid_t main_pid;\n"
	"__attribute__((constructor)) static void init(void) { main_pid = getpid(); }\n"
	"long syscall(long nr, ...)\n"
	"{\n"
	"	static long (*real)(long, ...);\n"
	"	long a[6];\n"
	"	va_list ap;\n"
	"	int i;\n"
	"	va_start(ap, nr);\n"
	"	for (i = 0; i < 6; i++)\n"
	"		a[i] = va_arg(ap, long);\n"
	"	va_end(ap);\n"
	"	/* IORING_REGISTER_RESTRICTIONS (11) on a ring, in the tool itself */\n"
	"	if (nr == SYS_io_uring_register && (int)a[0] >= 0 && (unsigned)a[1] == 11 &&\n"
	"	    getpid() == main_pid)\n"
	"		return 0;\n"
	"	if (!real)\n"
	"		real = (long (*)(long, ...))dlsym(RTLD_NEXT, \"syscall\");\n"
	"	return real(nr, a[0], a[1], a[2], a[3], a[4], a[5]);\n"
	"}\n";

static const char *tools_dir(void)
{
	const char *dir = getenv("IOUR_TOOLS_DIR");

	if (!dir)
		cr_skip_test("IOUR_TOOLS_DIR is not set (run through make test-run)");
	return dir;
}

/* Build the shim next to the tools (the build tree); its path. */
static const char *build_shim(const char *dir)
{
	static char so[4096];
	char src[4200], cmd[9000];
	const char *cc = getenv("CC");
	FILE *f;

	snprintf(so, sizeof(so), "%s/test-shim-no-restrictions.so", dir);
	snprintf(src, sizeof(src), "%s/test-shim-no-restrictions.c", dir);
	f = fopen(src, "w");
	cr_assert_not_null(f, "writing %s", src);
	cr_assert_eq(fputs(shim_src, f) >= 0 && fclose(f) == 0, 1);
	snprintf(cmd, sizeof(cmd), "%s -shared -fPIC -O2 -o '%s' '%s' -ldl", cc && *cc ? cc : "cc",
		 so, src);
	cr_assert_eq(system(cmd), 0, "building the shim failed: %s", cmd);
	return so;
}

struct out {
	int status;
	char text[16384];
};

/* Run the tool's verify with `preload` (or none); stdout and stderr in
 * o->text. */
static void run_verify(struct out *o, const char *dir, const char *preload, const char *ops)
{
	char tool[4096], env_pre[4200];
	int fd = memfd_create("cli-verify", 0), st;
	ssize_t n;
	pid_t pid;

	snprintf(tool, sizeof(tool), "%s/iour-restrict", dir);
	cr_assert_eq(access(tool, X_OK), 0, "%s is not built", tool);
	cr_assert_geq(fd, 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		char *argv[] = { tool, "verify", "--allow-op", (char *)ops, NULL };

		dup2(fd, 1);
		dup2(fd, 2);
		if (preload) {
			snprintf(env_pre, sizeof(env_pre), "LD_PRELOAD=%s", preload);
			putenv(env_pre);
			/* a sanitizer build of the tool wants its runtime first */
			putenv("ASAN_OPTIONS=verify_asan_link_order=0");
		}
		execv(tool, argv);
		_exit(125);
	}
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	o->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	n = pread(fd, o->text, sizeof(o->text) - 1, 0);
	cr_assert_geq(n, 0);
	o->text[n] = '\0';
	close(fd);
}

/* The row of request `name` (at the start of a line, after two spaces,
 * followed by a space), copied into row; NULL if there is none. */
static const char *row_of(const char *text, const char *name, char *row, size_t len)
{
	size_t nl = strlen(name);
	const char *p = text;

	while ((p = strstr(p, name)) != NULL) {
		if (p - text >= 2 && p[-1] == ' ' && p[-2] == ' ' &&
		    (p - text == 2 || p[-3] == '\n') && p[nl] == ' ') {
			const char *e = strchr(p, '\n');
			size_t k = e ? (size_t)(e - p) : strlen(p);

			if (k >= len)
				k = len - 1;
			memcpy(row, p, k);
			row[k] = '\0';
			return row;
		}
		p += nl;
	}
	return NULL;
}

Test(cli_verify, unrestricted_ring_is_not_enforced_exit_1, .timeout = 120)
{
	UNIT_REQUIRE_URING();
	/* In the set: NOP, READ, SOCKET.  Denied by it: the rest. */
	static const char *const allowed[] = { "NOP", "READ", "SOCKET" };
	static const char *const denied[] = { "READV", "WRITEV",  "CONNECT",  "OPENAT",
					      "WRITE", "OPENAT2", "NOP+ASYNC" };
	const char *dir = tools_dir(), *so;
	struct out o;
	char row[256];
	size_t i;

	/* Control: the real kernel enforces the set. */
	run_verify(&o, dir, NULL, "NOP,READ,SOCKET");
	cr_assert_eq(o.status, 0, "without the shim: %s", o.text);
	cr_assert_null(strstr(o.text, "NOT ENFORCED"), "%s", o.text);

	so = build_shim(dir);
	run_verify(&o, dir, so, "NOP,READ,SOCKET");
	cr_expect_eq(o.status, 1, "exit status %d: %s", o.status, o.text);
	cr_expect_not_null(strstr(o.text, "\nNOT ENFORCED"), "a NOT ENFORCED summary: %s", o.text);
	cr_expect_null(strstr(o.text, "\nenforced:"), "no 'enforced' summary: %s", o.text);
	for (i = 0; i < sizeof(denied) / sizeof(denied[0]); i++) {
		cr_assert_not_null(row_of(o.text, denied[i], row, sizeof(row)), "no %s row: %s",
				   denied[i], o.text);
		cr_expect_not_null(strstr(row, "deny"), "%s expected denied: %s", denied[i], row);
		cr_expect_not_null(strstr(row, "NOT ENFORCED"), "%s: %s", denied[i], row);
	}
	for (i = 0; i < sizeof(allowed) / sizeof(allowed[0]); i++) {
		cr_assert_not_null(row_of(o.text, allowed[i], row, sizeof(row)), "no %s row: %s",
				   allowed[i], o.text);
		cr_expect_null(strstr(row, "NOT ENFORCED"), "%s is allowed: %s", allowed[i], row);
		cr_expect_null(strstr(row, "deny"), "%s: %s", allowed[i], row);
	}
	fprintf(stderr, "cli_verify: with RESTRICTIONS turned into a no-op, verify exits %d:\n%s",
		o.status, o.text);
}
