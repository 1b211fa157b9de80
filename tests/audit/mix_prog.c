/* SPDX-License-Identifier: MIT */
/*
 * A program that submits the io_uring requests its arguments name, for
 * `iour-restrict run --audit` and `--log-denials` (tests/audit/run.sh,
 * tests/guest/audit_guest.sh): each argument is OP or OP:ASYNC (OP one of
 * NOP, READ, WRITE, FSYNC, FADVISE, SOCKET), reg:PROBE or reg:FILES (a
 * register call), or SLEEP (1.5 s).  Each request is submitted alone on
 * one ring; its result is printed as "OP res N", after a first line
 * "pid PID".  The process names itself "auditmix".  Exit 0 unless the ring
 * cannot be created (1) or an argument is unknown (2).
 */
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	char path[] = "/tmp/auditmix.XXXXXX", buf[64] = "auditmix";
	struct io_uring ring;
	int fd, ret;

	prctl(PR_SET_NAME, "auditmix", 0, 0, 0);
	printf("pid %d\n", (int)getpid());
	fd = mkstemp(path);
	if (fd < 0 || write(fd, buf, sizeof(buf)) != sizeof(buf))
		return 1;
	unlink(path);
	ret = io_uring_queue_init(8, &ring, 0);
	if (ret) {
		fprintf(stderr, "mix_prog: io_uring_queue_init: %s\n", strerror(-ret));
		return 1;
	}
	for (int i = 1; i < argc; i++) {
		struct io_uring_sqe *sqe;
		struct io_uring_cqe *cqe;
		char op[32];
		const char *colon = strchr(argv[i], ':');
		bool async = colon && !strcmp(colon + 1, "ASYNC");

		snprintf(op, sizeof(op), "%.*s",
			 (int)(colon ? (size_t)(colon - argv[i]) : strlen(argv[i])), argv[i]);
		if (!strcmp(op, "SLEEP")) {
			usleep(1500 * 1000);
			continue;
		}
		if (!strcmp(op, "reg")) {
			if (!strcmp(colon + 1, "PROBE")) {
				struct io_uring_probe *p = io_uring_get_probe_ring(&ring);

				ret = p ? 0 : -errno;
				io_uring_free_probe(p);
			} else if (!strcmp(colon + 1, "FILES")) {
				ret = io_uring_register_files(&ring, &fd, 1);
				if (!ret)
					io_uring_unregister_files(&ring);
			} else {
				return 2;
			}
			printf("%s res %d\n", argv[i], ret);
			continue;
		}
		sqe = io_uring_get_sqe(&ring);
		if (!strcmp(op, "NOP"))
			io_uring_prep_nop(sqe);
		else if (!strcmp(op, "READ"))
			io_uring_prep_read(sqe, fd, buf, sizeof(buf), 0);
		else if (!strcmp(op, "WRITE"))
			io_uring_prep_write(sqe, fd, buf, sizeof(buf), 0);
		else if (!strcmp(op, "FSYNC"))
			io_uring_prep_fsync(sqe, fd, 0);
		else if (!strcmp(op, "FADVISE"))
			io_uring_prep_fadvise(sqe, fd, 0, sizeof(buf), POSIX_FADV_NORMAL);
		else if (!strcmp(op, "SOCKET"))
			io_uring_prep_socket(sqe, AF_UNIX, SOCK_STREAM, 0, 0);
		else
			return 2;
		if (async)
			sqe->flags |= IOSQE_ASYNC;
		ret = io_uring_submit_and_wait(&ring, 1);
		if (ret < 0 || io_uring_wait_cqe(&ring, &cqe)) {
			printf("%s res submit %d\n", argv[i], ret);
			continue;
		}
		printf("%s res %d\n", argv[i], cqe->res);
		if (!strcmp(op, "SOCKET") && cqe->res >= 0)
			close(cqe->res);
		io_uring_cqe_seen(&ring, cqe);
	}
	io_uring_queue_exit(&ring);
	return 0;
}
