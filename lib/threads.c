/* SPDX-License-Identifier: MIT */
/*
 * How many threads the process has: task-level io_uring restrictions and
 * the seccomp companion cover only the calling thread and what it creates
 * later (kernel-interface.md 3.4), so other existing threads must be
 * detected and reported.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "enforce_internal.h"
#include "iouring_restrict/companion.h"

/* A directory read without stdio or malloc (safe after fork in a threaded
 * process, and it cannot fail for lack of user-space memory). */
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

			if (de->d_name[0] != '.')
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
