/* SPDX-License-Identifier: MIT */
/*
 * Rings received from another process on a real Linux 6.1 kernel
 * (companion.h, doc/security.md §3 "Rings that exist already"): the kernel
 * refuses an io_uring fd in an SCM_RIGHTS message (EINVAL) on every
 * AF_UNIX socket type, alone or next to another fd, whether the ring is
 * plain, restricted through the library or SQPOLL; nothing is delivered.
 * A pipe fd goes through the same sockets (so the messages are well
 * formed).  Reopening a ring through /proc/self/fd gives ENXIO; an O_PATH
 * reopen gives an fd that is not a ring (io_uring_enter, io_uring_register
 * and mmap: EBADF).
 */
#include <fcntl.h>
#include <sys/socket.h>

#include "mini_ring.h"
#include "../common/scm.h"



/* A ring restricted to {NOP} through the library, or -errno. */
static int restricted_ring(void)
{
	struct iour_ruleset *rs = NULL;
	int fd = -1, rc;

	rc = iour_ruleset__new(NULL, &rs);
	if (rc)
		return rc;
	iour_ruleset__allow_sqe_op(rs, 0);
	iour_ruleset__set_sqe_flags(rs, 0, 0);
	rc = iour_ring_create(4, NULL, rs, NULL, &fd);
	iour_ruleset__free(rs);
	return rc ? rc : fd;
}

int main(void)
{
	static const int types[] = { SOCK_STREAM, SOCK_DGRAM, SOCK_SEQPACKET };
	static const char *const tname[] = { "stream", "dgram", "seqpacket" };
	struct kio_params p;
	int rings[3], pfd[2], t, k;
	const char *rname[] = { "plain", "restricted", "SQPOLL" };
	char name[160], path[64];
	void *m;
	long fd;

	memset(&p, 0, sizeof(p));
	fd = raw_setup(4, &p);
	CHECK("scm: a plain ring", fd >= 0);
	rings[0] = (int)fd;
	rings[1] = restricted_ring();
	CHECK("scm: a ring restricted by iour_ring_create", rings[1] >= 0);
	memset(&p, 0, sizeof(p));
	p.flags = KIO_SETUP_SQPOLL;
	p.sq_thread_idle = 1000;
	fd = raw_setup(4, &p);
	CHECK("scm: an SQPOLL ring", fd >= 0);
	rings[2] = (int)fd;
	CHECK("scm: a pipe", pipe(pfd) == 0);

	for (t = 0; t < 3; t++) {
		int sv[2];

		if (socketpair(AF_UNIX, types[t], 0, sv)) {
			CHECK("scm: socketpair", 0);
			continue;
		}
		snprintf(name, sizeof(name), "scm %s: a pipe fd is passed", tname[t]);
		CHECK_EQ(name, send_fds(sv[0], pfd, 1), 0);
		snprintf(name, sizeof(name), "scm %s: the pipe fd arrives", tname[t]);
		CHECK_NUM(name, recv_fds(sv[1]), 1);
		for (k = 0; k < 3; k++) {
			int two[2] = { pfd[0], rings[k] };

			if (rings[k] < 0)
				continue;
			snprintf(name, sizeof(name), "scm %s: sendmsg of a %s ring fd", tname[t],
				 rname[k]);
			CHECK_EQ(name, send_fds(sv[0], &rings[k], 1), -EINVAL);
			snprintf(name, sizeof(name), "scm %s: a pipe fd and a %s ring fd", tname[t],
				 rname[k]);
			CHECK_EQ(name, send_fds(sv[0], two, 2), -EINVAL);
			snprintf(name, sizeof(name), "scm %s: nothing delivered after the %s ring",
				 tname[t], rname[k]);
			CHECK_EQ(name, recv_fds(sv[1]), -EAGAIN);
		}
		close(sv[0]);
		close(sv[1]);
	}

	if (rings[0] >= 0) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", rings[0]);
		fd = open(path, O_RDWR);
		CHECK_EQ("scm: reopen of a ring through /proc/self/fd (O_RDWR)",
			 fd < 0 ? -errno : fd, -ENXIO);
		fd = open(path, O_RDONLY);
		CHECK_EQ("scm: reopen of a ring through /proc/self/fd (O_RDONLY)",
			 fd < 0 ? -errno : fd, -ENXIO);
		fd = open(path, O_PATH);
		CHECK("scm: O_PATH reopen of a ring", fd >= 0);
		if (fd >= 0) {
			CHECK_EQ("scm: io_uring_enter on the O_PATH fd", raw_enter((int)fd, 0, 0, 0),
				 -EBADF);
			CHECK_EQ("scm: io_uring_register(PROBE) on the O_PATH fd",
				 raw_register((int)fd, KIO_REGISTER_PROBE, NULL, 0), -EBADF);
			m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, (int)fd,
				 KIO_OFF_SQ_RING);
			CHECK_EQ("scm: mmap of the O_PATH fd", m == MAP_FAILED ? -errno : 0, -EBADF);
			close((int)fd);
		}
	}
	for (k = 0; k < 3; k++)
		if (rings[k] >= 0)
			close(rings[k]);
	close(pfd[0]);
	close(pfd[1]);
	return guest_summary();
}
