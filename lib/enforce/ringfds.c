/* SPDX-License-Identifier: MIT */
/*
 * The io_uring file descriptors the calling thread holds, found through
 * procfs, and closing them before an execve (documented in
 * include/iouring_restrict/companion.h; the limits are in doc/security.md).
 *
 * A ring whose fd survives execve can be mapped again by the new program;
 * with an SQPOLL thread kept awake by its owner, requests then reach the
 * kernel through shared memory alone, which no seccomp filter sees.  Only
 * closing the fd stops that.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "enforce_internal.h"
#include "base/sys.h"
#include "iouring_restrict/companion.h"

#define PROC_SUPER_MAGIC_ 0x9fa0
#define RING_LINK "anon_inode:[io_uring]"

/* The fd number named by a /proc/.../fd entry, or -1. */
static int fd_of(const char *name)
{
	long v = 0;

	if (!*name)
		return -1;
	for (; *name; name++) {
		if (*name < '0' || *name > '9' || v > 0x7fffffffL / 10)
			return -1;
		v = v * 10 + (*name - '0');
	}
	return v <= 0x7fffffffL ? (int)v : -1;
}

static bool is_ring(int dirfd, const char *name)
{
	char link[sizeof(RING_LINK) + 1];
	ssize_t n = readlinkat(dirfd, name, link, sizeof(link));

	return n == (ssize_t)sizeof(RING_LINK) - 1 && !memcmp(link, RING_LINK, (size_t)n);
}

/*
 * Walk the calling thread's fd table (/proc/thread-self/fd: the table an
 * execve by this thread keeps).  For every io_uring fd: record it in
 * fds[0..cnt) and, if `close_them`, close it.  Returns the number found or
 * a negative errno.  No stdio, no malloc.
 */
static int walk(int *fds, size_t cnt, bool close_them)
{
	char buf[4096] __attribute__((aligned(8)));
	struct statfs sfs;
	int dirfd, n = 0, err = 0;
	ssize_t len;

	dirfd = open("/proc/thread-self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0) {
		if (errno == EMFILE || errno == ENFILE)
			return -EMFILE;
		if (errno == ENOMEM)
			return -ENOMEM;
		return -ENOENT;
	}
	/* Something other than procfs mounted on /proc answers nothing true. */
	if (fstatfs(dirfd, &sfs) || sfs.f_type != PROC_SUPER_MAGIC_) {
		close(dirfd);
		return -ENOENT;
	}
	while ((len = getdents64(dirfd, buf, sizeof(buf))) > 0) {
		ssize_t off = 0;

		while (off < len) {
			const struct dirent64 *de = (const struct dirent64 *)(buf + off);
			int fd = fd_of(de->d_name);

			off += de->d_reclen;
			if (fd < 0 || fd == dirfd || !is_ring(dirfd, de->d_name))
				continue;
			if (fds && (size_t)n < cnt)
				fds[n] = fd;
			n++;
			if (close_them)
				(void)iour__close(fd);
		}
	}
	if (len < 0)
		err = errno == ENOMEM ? -ENOMEM : -ENOENT;
	close(dirfd);
	return err ? err : n;
}

/* Documented in include/iouring_restrict/companion.h */
int iour_ring_fds(int *fds, size_t cnt)
{
	int n = walk(fds, cnt, false);

	if (n > 0 && fds && (size_t)n > cnt)
		return -ERANGE;
	return n;
}

/* Documented in include/iouring_restrict/companion.h */
int iour_ring_fds_close(uint32_t flags)
{
	int n, again;

	if (flags & ~IOUR_RING_FDS_REFUSE)
		return -EINVAL;
	n = walk(NULL, 0, false);
	if (n <= 0)
		return n;
	if (flags & IOUR_RING_FDS_REFUSE)
		return -EBUSY;
	n = walk(NULL, 0, true);
	if (n < 0)
		return n;
	/* Closing cannot fail to drop a descriptor; check nonetheless. */
	again = walk(NULL, 0, false);
	if (again < 0)
		return again;
	return again ? -EBUSY : n;
}
