/* SPDX-License-Identifier: MIT */
/* Thread count of the calling process, on the real kernel. */
#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "enforce_internal.h"
#include "iouring_restrict/companion.h"

static int in_child(int (*fn)(void))
{
	int st;
	pid_t pid = fork();

	cr_assert_geq(pid, 0);
	if (pid == 0)
		_exit(fn());
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void *waiter(void *arg)
{
	char b;

	return read(*(int *)arg, &b, 1) == 1 ? NULL : arg;
}

/* The count goes to 1 once a joined thread is fully gone from /proc. */
static int settles_at(int want)
{
	int i, n = -1;

	for (i = 0; i < 1000; i++) {
		n = iour_task_thread_count();
		if (n == want)
			break;
		usleep(1000);
	}
	return n;
}

static int child_counts(void)
{
	pthread_t th[3];
	int p[2], i;

	if (iour_task_thread_count() != 1 || iour__count_threads() != 1 || pipe(p))
		return 1;
	for (i = 0; i < 3; i++) {
		if (pthread_create(&th[i], NULL, waiter, &p[0]))
			return 2;
		if (iour_task_thread_count() != i + 2)
			return 3;
	}
	if (write(p[1], "xxx", 3) != 3)
		return 4;
	for (i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
	return settles_at(1) == 1 ? 0 : 5;
}

Test(threads, counts_spawned_pthreads)
{
	cr_assert_eq(in_child(child_counts), 0);
}

static int child_no_proc(void)
{
	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	    mount("none", "/proc", "tmpfs", 0, NULL))
		return 77;
	return iour_task_thread_count() == -ENOENT ? 0 : 1;
}

static int child_no_fd(void)
{
	struct rlimit rl = { 0, 0 };

	if (setrlimit(RLIMIT_NOFILE, &rl))
		return 77;
	return iour_task_thread_count() == -EMFILE ? 0 : 1;
}

Test(threads, error_codes)
{
	int rc = in_child(child_no_proc);

	if (rc == 77)
		cr_skip_test("cannot hide /proc here (needs root for a mount namespace)");
	cr_assert_eq(rc, 0, "-ENOENT without procfs");
	cr_assert_eq(in_child(child_no_fd), 0, "-EMFILE without a free fd");
}
