/* SPDX-License-Identifier: MIT */
/*
 * uring-try: a small program that makes io_uring requests and prints, one
 * line each, what the kernel answered.  The CLI tests run it under
 * `iour-restrict run POLICY -- uring-try ...` to observe what a policy
 * lets through on the running kernel.
 *
 *   uring-try REQUEST...
 *
 * REQUEST is one of: nop, read (a pipe), openat-r (/dev/null read-only),
 * openat-wc:PATH (PATH write-only, created and truncated), socket-unix,
 * socket-inet (a TCP socket).  The first line is "setup: ok" or
 * "setup: ERRNO" (then nothing else); then "REQUEST: ok" or
 * "REQUEST: ERRNO" (the completion's error, by name).  Exit status 0
 * unless the program itself failed (2).
 */
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static const char *ename(int e)
{
	switch (e) {
	case 0:
		return "ok";
	case EACCES:
		return "EACCES";
	case ENOSYS:
		return "ENOSYS";
	case EPERM:
		return "EPERM";
	case EINVAL:
		return "EINVAL";
	case ENOENT:
		return "ENOENT";
	default:
		return strerror(e);
	}
}

int main(int argc, char **argv)
{
	struct io_uring ring;
	struct io_uring_cqe *cqe;
	struct io_uring_sqe *sqe;
	char buf[8];
	int p[2], r;

	setvbuf(stdout, NULL, _IOLBF, 0);
	r = io_uring_queue_init(4, &ring, 0);
	printf("setup: %s\n", ename(-r));
	if (r)
		return 0;
	if (pipe(p))
		return 2;
	if (write(p[1], "x", 1) != 1)
		return 2;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		sqe = io_uring_get_sqe(&ring);
		if (!sqe)
			return 2;
		if (!strcmp(a, "nop"))
			io_uring_prep_nop(sqe);
		else if (!strcmp(a, "read"))
			io_uring_prep_read(sqe, p[0], buf, 1, 0);
		else if (!strcmp(a, "openat-r"))
			io_uring_prep_openat(sqe, AT_FDCWD, "/dev/null", O_RDONLY, 0);
		else if (!strncmp(a, "openat-wc:", 10))
			io_uring_prep_openat(sqe, AT_FDCWD, a + 10, O_WRONLY | O_CREAT | O_TRUNC,
					     0600);
		else if (!strcmp(a, "socket-unix"))
			io_uring_prep_socket(sqe, AF_UNIX, SOCK_STREAM, 0, 0);
		else if (!strcmp(a, "socket-inet"))
			io_uring_prep_socket(sqe, AF_INET, SOCK_STREAM, 0, 0);
		else {
			fprintf(stderr, "uring-try: unknown request '%s'\n", a);
			return 2;
		}
		if (io_uring_submit(&ring) != 1 || io_uring_wait_cqe(&ring, &cqe))
			return 2;
		r = cqe->res;
		io_uring_cqe_seen(&ring, cqe);
		if (r >= 0 && strncmp(a, "openat", 6) == 0)
			close(r);
		if (r >= 0 && strncmp(a, "socket", 6) == 0)
			close(r);
		printf("%s: %s\n", a, ename(r < 0 ? -r : 0));
	}
	io_uring_queue_exit(&ring);
	return 0;
}
