/* SPDX-License-Identifier: MIT */
/*
 * A program with known io_uring use, for `iour-restrict learn` (make
 * check-learn, tests/learn/run.sh).  What it submits, all of which must be
 * recorded and nothing else:
 *
 *   main thread, plain ring: 3 NOP (the first with IOSQE_IO_LINK), 2 READ,
 *     1 WRITE (IOSQE_ASYNC); register ops REGISTER_FILES, UNREGISTER_FILES,
 *     REGISTER_PROBE
 *   a second thread, own ring:   1 SYNC_FILE_RANGE
 *   a child process, own ring:   1 FSYNC
 *   an SQPOLL ring (main thread): 1 FADVISE, submitted by the kernel's
 *     SQPOLL thread
 *
 * "sqpoll-unavailable" on stderr and exit 77 if an SQPOLL ring cannot be
 * created (the caller skips that part).
 */
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int tmpfd;

static void die(const char *what, int err)
{
	fprintf(stderr, "learn_prog: %s: %s\n", what, strerror(err < 0 ? -err : err));
	exit(1);
}

/* Waits for @n completions; every result must be >= 0. */
static void reap(struct io_uring *r, unsigned n, const char *what)
{
	struct io_uring_cqe *cqe;

	while (n--) {
		int ret = io_uring_wait_cqe(r, &cqe);

		if (ret)
			die(what, ret);
		if (cqe->res < 0)
			die(what, cqe->res);
		io_uring_cqe_seen(r, cqe);
	}
}

static void *thread_main(void *arg)
{
	struct io_uring r;
	struct io_uring_sqe *sqe;
	int ret = io_uring_queue_init(4, &r, 0);

	(void)arg;
	if (ret)
		die("thread ring", ret);
	sqe = io_uring_get_sqe(&r);
	io_uring_prep_sync_file_range(sqe, tmpfd, 0, 0, 0);
	io_uring_submit(&r);
	reap(&r, 1, "thread SYNC_FILE_RANGE");
	io_uring_queue_exit(&r);
	return NULL;
}

int main(void)
{
	struct io_uring r, sq;
	struct io_uring_params p;
	struct io_uring_sqe *sqe;
	struct io_uring_probe *probe;
	char buf[64] = "hello";
	char tmpl[] = "/tmp/learn_prog.XXXXXX";
	pthread_t th;
	pid_t pid;
	int st, ret;

	tmpfd = mkstemp(tmpl);
	if (tmpfd < 0)
		die("mkstemp", errno);
	unlink(tmpl);
	if (write(tmpfd, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
		die("write", errno);

	ret = io_uring_queue_init(8, &r, 0);
	if (ret)
		die("ring", ret);
	/* 3 NOP, the first linked to the second */
	for (int i = 0; i < 3; i++) {
		sqe = io_uring_get_sqe(&r);
		io_uring_prep_nop(sqe);
		if (i == 0)
			sqe->flags |= IOSQE_IO_LINK;
	}
	io_uring_submit(&r);
	reap(&r, 3, "NOP");
	/* 2 READ, 1 WRITE with IOSQE_ASYNC */
	for (int i = 0; i < 2; i++) {
		sqe = io_uring_get_sqe(&r);
		io_uring_prep_read(sqe, tmpfd, buf, 8, 0);
	}
	sqe = io_uring_get_sqe(&r);
	io_uring_prep_write(sqe, tmpfd, buf, 8, 8);
	sqe->flags |= IOSQE_ASYNC;
	io_uring_submit(&r);
	reap(&r, 3, "READ/WRITE");
	/* register ops */
	ret = io_uring_register_files(&r, &tmpfd, 1);
	if (ret)
		die("REGISTER_FILES", ret);
	ret = io_uring_unregister_files(&r);
	if (ret)
		die("UNREGISTER_FILES", ret);
	probe = io_uring_get_probe_ring(&r);
	if (!probe)
		die("REGISTER_PROBE", EINVAL);
	io_uring_free_probe(probe);

	/* a thread */
	if (pthread_create(&th, NULL, thread_main, NULL))
		die("pthread_create", EAGAIN);
	pthread_join(th, NULL);

	/* a child process */
	pid = fork();
	if (pid < 0)
		die("fork", errno);
	if (pid == 0) {
		struct io_uring c;

		ret = io_uring_queue_init(4, &c, 0);
		if (ret)
			die("child ring", ret);
		sqe = io_uring_get_sqe(&c);
		io_uring_prep_fsync(sqe, tmpfd, 0);
		io_uring_submit(&c);
		reap(&c, 1, "child FSYNC");
		io_uring_queue_exit(&c);
		_exit(0);
	}
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
		die("child", EIO);

	/* SQPOLL: the kernel's SQPOLL thread submits */
	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_SQPOLL;
	p.sq_thread_idle = 1000;
	ret = io_uring_queue_init_params(4, &sq, &p);
	if (ret) {
		fprintf(stderr, "sqpoll-unavailable: %s\n", strerror(-ret));
		return 77;
	}
	sqe = io_uring_get_sqe(&sq);
	io_uring_prep_fadvise(sqe, tmpfd, 0, 64, POSIX_FADV_NORMAL);
	io_uring_submit(&sq);
	reap(&sq, 1, "SQPOLL FADVISE");
	io_uring_queue_exit(&sq);
	io_uring_queue_exit(&r);
	close(tmpfd);
	return 0;
}
