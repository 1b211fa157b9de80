/* SPDX-License-Identifier: MIT */
/*
 * sandbox_attack: what a confined program tries, one line per attempt, for
 * sandbox_layers (doc/sandbox.md):
 *
 *   sandbox_attack INSIDE OUTSIDE
 *
 *   openat(2) inside|outside: opens INSIDE / OUTSIDE read-only
 *   IORING_OP_OPENAT inside|outside: the same through io_uring
 *   socket(2): an AF_INET stream socket
 *   IORING_OP_SOCKET: the same through io_uring (Linux 5.19+)
 *
 * Each line ends with "0" (it worked) or the negative errno's name
 * ("-EACCES").  Unconfined, every attempt works; under sandbox_layers -r
 * DIR-OF-INSIDE, Landlock refuses both opens of OUTSIDE, seccomp refuses
 * socket(2) and the io_uring layer refuses IORING_OP_SOCKET.  Exit status
 * 0 unless the attempts could not be made (no io_uring: 1).
 */
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static void say(const char *what, int res)
{
	if (res >= 0)
		printf("%s: 0\n", what);
	else
		printf("%s: -%s\n", what, strerrorname_np(-res) ? strerrorname_np(-res) : "?");
	fflush(stdout);
}

/* One request through the ring; its result, or -errno of the submission. */
static int one(struct io_uring *ring, void (*prep)(struct io_uring_sqe *, const char *),
	       const char *arg)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
	struct io_uring_cqe *cqe;
	int rc;

	if (!sqe)
		return -EBUSY;
	prep(sqe, arg);
	rc = io_uring_submit(ring);
	if (rc < 0)
		return rc;
	rc = io_uring_wait_cqe(ring, &cqe);
	if (rc < 0)
		return rc;
	rc = cqe->res;
	io_uring_cqe_seen(ring, cqe);
	if (rc >= 0 && prep != NULL)
		close(rc);
	return rc;
}

static void prep_open(struct io_uring_sqe *sqe, const char *path)
{
	io_uring_prep_openat(sqe, AT_FDCWD, path, O_RDONLY, 0);
}

static void prep_socket(struct io_uring_sqe *sqe, const char *unused)
{
	(void)unused;
	io_uring_prep_rw(IORING_OP_SOCKET, sqe, AF_INET, NULL, 0, 0);
	sqe->off = SOCK_STREAM;
}

static int plain_open(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	struct io_uring ring;
	int fd, rc;

	if (argc != 3) {
		fprintf(stderr, "usage: sandbox_attack INSIDE OUTSIDE\n");
		return 2;
	}
	say("openat(2) inside", plain_open(argv[1]));
	say("openat(2) outside", plain_open(argv[2]));
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	say("socket(2)", fd < 0 ? -errno : 0);
	if (fd >= 0)
		close(fd);
	rc = io_uring_queue_init(4, &ring, 0);
	if (rc < 0) {
		say("io_uring_setup", rc);
		return 1;
	}
	say("IORING_OP_OPENAT inside", one(&ring, prep_open, argv[1]));
	say("IORING_OP_OPENAT outside", one(&ring, prep_open, argv[2]));
	say("IORING_OP_SOCKET", one(&ring, prep_socket, NULL));
	io_uring_queue_exit(&ring);
	return 0;
}
