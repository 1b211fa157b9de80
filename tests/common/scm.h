/* SPDX-License-Identifier: MIT */
/*
 * Passing descriptors over a UNIX socket (SCM_RIGHTS), for the tests that
 * try to hand an io_uring ring to a process that holds none.  Header-only:
 * the live tier and the single-file guest programs (tests/oldkernel) both
 * include it.
 */
#ifndef IOUR_TESTS_SCM_H
#define IOUR_TESTS_SCM_H

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

/* sendmsg of `n` fds with one data byte: 0 or -errno. */
static inline int send_fds(int sock, const int *fds, int n)
{
	union {
		char buf[CMSG_SPACE(2 * sizeof(int))];
		struct cmsghdr align;
	} cb;
	char c = 'x';
	struct iovec iov = { &c, 1 };
	struct msghdr mh;
	struct cmsghdr *cm;

	memset(&cb, 0, sizeof(cb));
	memset(&mh, 0, sizeof(mh));
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = cb.buf;
	mh.msg_controllen = CMSG_SPACE((size_t)n * sizeof(int));
	cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN((size_t)n * sizeof(int));
	memcpy(CMSG_DATA(cm), fds, (size_t)n * sizeof(int));
	return sendmsg(sock, &mh, MSG_NOSIGNAL) < 0 ? -errno : 0;
}

/* Receive what is queued without blocking: the number of fds that came
 * (closed again), or -errno (-EAGAIN: nothing was queued). */
static inline int recv_fds(int sock)
{
	union {
		char buf[CMSG_SPACE(4 * sizeof(int))];
		struct cmsghdr align;
	} cb;
	char c;
	struct iovec iov = { &c, 1 };
	struct msghdr mh;
	struct cmsghdr *cm;
	int got = 0;

	memset(&mh, 0, sizeof(mh));
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = cb.buf;
	mh.msg_controllen = sizeof(cb.buf);
	if (recvmsg(sock, &mh, MSG_DONTWAIT) < 0)
		return -errno;
	for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
		if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS) {
			int fds[4];
			size_t k, n = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);

			memcpy(fds, CMSG_DATA(cm), n * sizeof(int));
			for (k = 0; k < n; k++)
				close(fds[k]);
			got += (int)n;
		}
	}
	return got;
}

/* Wait for one fd (sent with send_fds(sock, &fd, 1)) and keep it,
 * close-on-exec: the fd, or -1. */
static inline int recv_one_fd(int sock)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} cb;
	char c;
	struct iovec iov = { &c, 1 };
	struct msghdr mh;
	struct cmsghdr *cm;
	int fd;

	memset(&mh, 0, sizeof(mh));
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = cb.buf;
	mh.msg_controllen = sizeof(cb.buf);
	if (recvmsg(sock, &mh, MSG_CMSG_CLOEXEC) != 1)
		return -1;
	cm = CMSG_FIRSTHDR(&mh);
	if (!cm || cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
		return -1;
	memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	return fd;
}

#endif /* IOUR_TESTS_SCM_H */
