/* SPDX-License-Identifier: MIT */
/*
 * /init of every kernel guest (make check-kernels, scripts/guest.sh):
 * mounts proc, sys, dev, /dev/shm (shm_open, which Criterion's workers use)
 * and /tmp, runs every program in /tests (sorted), echoes their lines
 * prefixed with the program's name, adds up their final "N passed, M
 * failed" or "N passed, M failed, K skipped" lines, prints the total as the
 * last line, "N passed, M failed, K skipped", and powers the machine off.
 * A program that crashes, exits non-zero without failed checks, or prints
 * no summary counts as one failed check.  Each program gets
 * GUEST_TEST_TIMEOUT seconds (an alarm that survives its execve), so that
 * a hang is reported as that program's failure.
 *
 * /tests/NAME.cmd runs a command instead (scripts/guest-initramfs.sh,
 * guest_cmd): lines "arg X" (argv, in order), "pass REGEX" and optionally
 * "skip REGEX" (POSIX extended).  The command is one check: skipped, with
 * the matching line as its reason, if a line of its output matches SKIP;
 * passed if it exits 0 and a line matches PASS; failed otherwise.
 */
#include <dirent.h>
#include <regex.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_TESTS 64
#define MAX_ARGS 64
#ifndef GUEST_TEST_TIMEOUT
#define GUEST_TEST_TIMEOUT 120
#endif

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

struct cmd {
	char *argv[MAX_ARGS + 1];
	regex_t pass, skip;
	int has_skip, matched_pass;
	char skip_line[1024];
};

/* Reads /tests/NAME.cmd; 0 if it is well formed. */
static int read_cmd(const char *path, struct cmd *c)
{
	char line[1024];
	int n = 0, has_pass = 0;
	FILE *f = fopen(path, "r");

	memset(c, 0, sizeof(*c));
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		if (!strncmp(line, "arg ", 4) && n < MAX_ARGS)
			c->argv[n++] = strdup(line + 4);
		else if (!strncmp(line, "pass ", 5) && !has_pass)
			has_pass = !regcomp(&c->pass, line + 5, REG_EXTENDED | REG_NOSUB);
		else if (!strncmp(line, "skip ", 5) && !c->has_skip)
			c->has_skip = !regcomp(&c->skip, line + 5, REG_EXTENDED | REG_NOSUB);
	}
	fclose(f);
	return n && has_pass ? 0 : -1;
}

static void run_one(const char *name, int *passed, int *failed, int *skipped)
{
	char path[512], *line = NULL;
	size_t cap = 0;
	int p[2], status, np = -1, nf = -1, ns = 0;
	size_t len = strlen(name);
	int is_cmd = len > 4 && !strcmp(name + len - 4, ".cmd");
	struct cmd c;
	FILE *in;
	pid_t pid;

	snprintf(path, sizeof(path), "/tests/%s", name);
	if (is_cmd && read_cmd(path, &c)) {
		printf("[%s] FAIL malformed command file (needs arg and pass lines)\n", name);
		(*failed)++;
		return;
	}
	if (pipe(p) < 0 || (pid = fork()) < 0) {
		printf("[%s] FAIL cannot start: %s\n", name, strerror(errno));
		(*failed)++;
		return;
	}
	if (pid == 0) {
		char *argv[] = { path, NULL }, *envp[] = { "PATH=/", NULL };

		dup2(p[1], 1);
		dup2(p[1], 2);
		close(p[0]);
		close(p[1]);
		alarm(GUEST_TEST_TIMEOUT);
		if (is_cmd)
			execve(c.argv[0], c.argv, envp);
		else
			execve(path, argv, envp);
		_exit(127);
	}
	close(p[1]);
	in = fdopen(p[0], "r");
	/* whole lines, however long: bench_guest's JSON line is over 1 KB and
	 * must reach the log in one piece (scripts/bench-guest.sh) */
	while (in && getline(&line, &cap, in) >= 0) {
		int a, b, k;
		char extra;

		line[strcspn(line, "\n")] = 0;
		printf("[%s] %s\n", name, line);
		if (is_cmd) {
			if (!regexec(&c.pass, line, 0, NULL, 0))
				c.matched_pass = 1;
			if (c.has_skip && !c.skip_line[0] && !regexec(&c.skip, line, 0, NULL, 0))
				snprintf(c.skip_line, sizeof(c.skip_line), "%s", line);
		} else if (sscanf(line, "%d passed, %d failed, %d skipped%c", &a, &b, &k, &extra) ==
			   3) {
			np = a;
			nf = b;
			ns = k;
		} else if (sscanf(line, "%d passed, %d failed%c", &a, &b, &extra) == 2) {
			np = a;
			nf = b;
			ns = 0;
		}
	}
	free(line);
	if (in)
		fclose(in);
	waitpid(pid, &status, 0);
	if (is_cmd) {
		if (c.skip_line[0]) {
			printf("[%s] skipped: %s\n", name, c.skip_line);
			(*skipped)++;
		} else if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && c.matched_pass) {
			printf("[%s] ok   command passed\n", name);
			(*passed)++;
		} else {
			printf("[%s] FAIL command: status %d, %s\n", name, status,
			       c.matched_pass ? "pass line seen" :
						"no line matched the pass pattern");
			(*failed)++;
		}
		return;
	}
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM) {
		printf("[%s] FAIL timed out after %d s\n", name, GUEST_TEST_TIMEOUT);
		(*failed)++;
		if (np >= 0) {
			*passed += np;
			*failed += nf;
			*skipped += ns;
		}
		return;
	}
	if (np < 0) {
		printf("[%s] FAIL no summary line (status %d)\n", name, status);
		(*failed)++;
		return;
	}
	*passed += np;
	*failed += nf;
	*skipped += ns;
	if (!WIFEXITED(status) || (WEXITSTATUS(status) != 0 && nf == 0)) {
		printf("[%s] FAIL exited abnormally (status %d)\n", name, status);
		(*failed)++;
	}
}

int main(void)
{
	char *names[MAX_TESTS];
	int n = 0, passed = 0, failed = 0, skipped = 0;
	struct utsname u;
	struct dirent *d;
	DIR *dir;

	mkdir("/proc", 0555);
	mkdir("/sys", 0555);
	mkdir("/dev", 0755);
	mkdir("/tmp", 01777);
	mount("proc", "/proc", "proc", 0, NULL);
	mount("sysfs", "/sys", "sysfs", 0, NULL);
	mount("devtmpfs", "/dev", "devtmpfs", 0, NULL);
	mkdir("/dev/shm", 01777);
	mount("tmpfs", "/dev/shm", "tmpfs", 0, NULL);
	mount("tmpfs", "/tmp", "tmpfs", 0, NULL);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (uname(&u) == 0)
		printf("guest kernel: %s %s %s\n", u.sysname, u.release, u.machine);

	dir = opendir("/tests");
	while (dir && (d = readdir(dir)) && n < MAX_TESTS) {
		if (d->d_name[0] == '.')
			continue;
		names[n++] = strdup(d->d_name);
	}
	if (dir)
		closedir(dir);
	qsort(names, (size_t)n, sizeof(names[0]), by_name);
	if (!n) {
		printf("FAIL no test programs in /tests\n");
		failed++;
	}
	for (int i = 0; i < n; i++)
		run_one(names[i], &passed, &failed, &skipped);
	printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
	fflush(stdout);
	sync();
	reboot(RB_POWER_OFF);
	return 0;
}
