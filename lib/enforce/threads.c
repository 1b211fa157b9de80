/* SPDX-License-Identifier: MIT */
/*
 * How many threads the process has: task-level io_uring restrictions and
 * the seccomp companion cover only the calling thread and what it creates
 * later (doc/security.md, section 3), so other existing threads must be
 * detected and reported.  io_uring's own kernel threads (SQPOLL threads,
 * io-wq workers) belong to the process too but run no user code: they are
 * left out.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "enforce_internal.h"
#include "iouring_restrict/companion.h"

/* The kernel's PF_IO_WORKER task flag (include/linux/sched.h). */
#define PF_IO_WORKER_ 0x10UL

/*
 * Is thread `tid` of this process one of io_uring's own kernel threads
 * (an SQPOLL thread "iou-sqp-*" or an io-wq worker "iou-wrk-*")?  They run
 * only io_uring work for the rings of this process, never user code, so
 * they are not threads a policy needs to cover.  The flags field (the 9th
 * of /proc/self/task/TID/stat) is read rather than the name, which user
 * code can set with prctl(PR_SET_NAME).  A thread that cannot be read is
 * counted (it may be an application thread), except one that is gone.
 * Returns 1 (io_uring worker), 0 (count it) or -1 (the thread has ended).
 */
static int io_worker(const char *tid)
{
	char path[64] = "/proc/self/task/", buf[512];
	const char *p, *close_paren = NULL;
	unsigned long flags = 0;
	size_t i, n = strlen(path);
	ssize_t len;
	int fd, field;

	for (i = 0; tid[i] && n + 6 < sizeof(path); i++)
		path[n++] = tid[i];
	memcpy(path + n, "/stat", 6);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT || errno == ESRCH ? -1 : 0;
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len <= 0)
		return len < 0 && errno == ESRCH ? -1 : 0;
	buf[len] = '\0';
	/* "pid (comm) state ppid pgrp session tty_nr tpgid flags ...": the
	 * name may contain anything, so start after its last ')'. */
	for (p = buf; *p; p++)
		if (*p == ')')
			close_paren = p;
	if (!close_paren)
		return 0;
	p = close_paren + 1;
	for (field = 3; field <= 9; field++) {
		while (*p == ' ')
			p++;
		if (!*p)
			return 0;
		if (field == 9)
			break;
		while (*p && *p != ' ')
			p++;
	}
	if (*p < '0' || *p > '9')
		return 0;
	while (*p >= '0' && *p <= '9')
		flags = flags * 10 + (unsigned long)(*p++ - '0');
	return (flags & PF_IO_WORKER_) ? 1 : 0;
}

/* A directory read without stdio or malloc (safe after fork in a threaded
 * process, and it cannot fail for lack of user-space memory).  io_uring's
 * own threads are not counted (io_worker()). */
int iour__count_threads(void)
{
	char buf[4096] __attribute__((aligned(8)));
	int fd, n = 0;
	ssize_t len;

	fd = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		if (errno == EMFILE || errno == ENFILE)
			return -EMFILE;
		if (errno == ENOMEM)
			return -ENOMEM;
		return -ENOENT;
	}
	while ((len = getdents64(fd, buf, sizeof(buf))) > 0) {
		ssize_t off = 0;

		while (off < len) {
			const struct dirent64 *de = (const struct dirent64 *)(buf + off);

			if (de->d_name[0] != '.' && io_worker(de->d_name) == 0)
				n++;
			off += de->d_reclen;
		}
	}
	if (len < 0)
		n = errno == ENOMEM ? -ENOMEM : -ENOENT;
	close(fd);
	if (n == 0)
		return -ENOENT;
	return n;
}

/* Documented in include/iouring_restrict/companion.h */
int iour_task_thread_count(void)
{
	return iour__count_threads();
}
