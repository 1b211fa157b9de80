/* SPDX-License-Identifier: MIT */
/*
 * /init of the old-kernel guest: mounts proc, sys and dev, runs every
 * program in /tests (sorted), echoes their lines prefixed with the
 * program's name, adds up their final "N passed, M failed" lines, prints the
 * total as the last line in exactly that form, and powers the machine off.
 * A program that crashes, exits non-zero without failed checks, or prints
 * no summary counts as one failed check.  Each program gets
 * GUEST_TEST_TIMEOUT seconds (an alarm that survives its execve), so that
 * a hang is reported as that program's failure.
 */
#include <dirent.h>
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
#ifndef GUEST_TEST_TIMEOUT
#define GUEST_TEST_TIMEOUT 120
#endif

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void run_one(const char *name, int *passed, int *failed)
{
	char path[512], line[1024];
	int p[2], status, np = -1, nf = -1;
	FILE *in;
	pid_t pid;

	snprintf(path, sizeof(path), "/tests/%s", name);
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
		execve(path, argv, envp);
		_exit(127);
	}
	close(p[1]);
	in = fdopen(p[0], "r");
	while (in && fgets(line, sizeof(line), in)) {
		int a, b;
		char extra;

		line[strcspn(line, "\n")] = 0;
		printf("[%s] %s\n", name, line);
		if (sscanf(line, "%d passed, %d failed%c", &a, &b, &extra) == 2) {
			np = a;
			nf = b;
		}
	}
	if (in)
		fclose(in);
	waitpid(pid, &status, 0);
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM) {
		printf("[%s] FAIL timed out after %d s\n", name, GUEST_TEST_TIMEOUT);
		(*failed)++;
		if (np >= 0) {
			*passed += np;
			*failed += nf;
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
	if (!WIFEXITED(status) || (WEXITSTATUS(status) != 0 && nf == 0)) {
		printf("[%s] FAIL exited abnormally (status %d)\n", name, status);
		(*failed)++;
	}
}

int main(void)
{
	char *names[MAX_TESTS];
	int n = 0, passed = 0, failed = 0;
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
		run_one(names[i], &passed, &failed);
	printf("%d passed, %d failed\n", passed, failed);
	fflush(stdout);
	sync();
	reboot(RB_POWER_OFF);
	return 0;
}
