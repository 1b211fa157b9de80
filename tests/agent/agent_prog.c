/* SPDX-License-Identifier: MIT */
/*
 * agent_prog: the program tests/agent/run.sh runs inside runc and crun
 * containers whose io_uring_setup() is served by `iour-restrict agent`.
 * Raw system calls only (no liburing), linked statically so that a
 * rootfs of this one file is a complete container.
 *
 * It prints one "key=value" line per probe, which the script compares:
 *   setup=FD|-ERRNO   io_uring_setup(8) as the program calls it
 *   read=RES data=ok|bad   a READ of /etc/agent-data on that ring
 *   nop=RES           a NOP on that ring
 *   restrict=RES      IORING_REGISTER_RESTRICTIONS on that ring (the
 *                     program tries to restrict it itself)
 *   enable=RES        IORING_REGISTER_ENABLE_RINGS on that ring
 *   rdis_setup=FD|-ERRNO, rdis_restrict=RES   a ring asked with
 *                     IORING_SETUP_R_DISABLED, and an attempt to give it
 *                     the program's own (allow-everything) restriction set
 * With "wait FILE" it then waits (up to 30 s) until FILE exists, and
 * prints setup2= (a second io_uring_setup) and read2= (a READ on the
 * first ring, which must keep working).
 * With "pin MIB" it registers a buffer of MIB MiB on its ring
 * (IORING_REGISTER_BUFFERS) and prints pin=RES: whose locked-memory limit
 * counts it depends on who created the ring.
 * With "rings MAX" it only creates rings of 4 entries, keeping them, until
 * one fails or it holds MAX, and prints rings=COUNT last=RES (the failing
 * call's -ERRNO, or 0); then closes them all and does it again: rings2=,
 * last2= (a ring quota counts the rings alive, not the calls).
 * With "peer" it only tries the calls through which a process takes
 * another's rings, on itself, and prints ptrace=, pidfd_getfd=,
 * vm_readv=, vm_writev= (the result, or -ERRNO): a profile that denies
 * them gives EPERM or ENOSYS; ptrace(PTRACE_PEEKDATA) of itself, not
 * traced, gives -ESRCH when allowed.
 * With "batch" it submits READ, NOP, READ in one io_uring_enter() on a
 * ring of its own and prints batch=SUBMITTED cqes=RES,RES,...; then the
 * same on a ring with IORING_SETUP_SUBMIT_ALL: batch_all=, cqes_all=
 * (a denied request ends the kernel's submit batch unless SUBMIT_ALL).
 * With "storm" it forks four children, prints "storming", and all five
 * create and close rings until they are killed (a container killed while
 * its calls wait for the agent).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/io_uring.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define DATA "iouring-restrict agent test data\n"

struct ring {
	int fd;
	unsigned *sq_tail, *sq_mask, *sq_array, *cq_head, *cq_tail, *cq_mask;
	struct io_uring_sqe *sqes;
	struct io_uring_cqe *cqes;
};

static int sys_setup(unsigned entries, struct io_uring_params *p)
{
	long r = syscall(__NR_io_uring_setup, entries, p);
	return r < 0 ? -errno : (int)r;
}

static int sys_register(int fd, unsigned op, void *arg, unsigned n)
{
	long r = syscall(__NR_io_uring_register, fd, op, arg, n);
	return r < 0 ? -errno : (int)r;
}

static int ring_map(struct ring *r, int fd, const struct io_uring_params *p)
{
	size_t sq_sz = p->sq_off.array + p->sq_entries * sizeof(unsigned);
	size_t cq_sz = p->cq_off.cqes + p->cq_entries * sizeof(struct io_uring_cqe);
	char *sq, *cq;

	sq = mmap(NULL, sq_sz, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd,
		  IORING_OFF_SQ_RING);
	if (sq == MAP_FAILED)
		return -errno;
	cq = mmap(NULL, cq_sz, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd,
		  IORING_OFF_CQ_RING);
	if (cq == MAP_FAILED)
		return -errno;
	r->sqes = mmap(NULL, p->sq_entries * sizeof(struct io_uring_sqe), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_POPULATE, fd, IORING_OFF_SQES);
	if (r->sqes == MAP_FAILED)
		return -errno;
	r->fd = fd;
	r->sq_tail = (unsigned *)(sq + p->sq_off.tail);
	r->sq_mask = (unsigned *)(sq + p->sq_off.ring_mask);
	r->sq_array = (unsigned *)(sq + p->sq_off.array);
	r->cq_head = (unsigned *)(cq + p->cq_off.head);
	r->cq_tail = (unsigned *)(cq + p->cq_off.tail);
	r->cq_mask = (unsigned *)(cq + p->cq_off.ring_mask);
	r->cqes = (struct io_uring_cqe *)(cq + p->cq_off.cqes);
	return 0;
}

/* Submits one request and waits for its completion; returns cqe->res, or
 * "-1000 - errno" if io_uring_enter itself failed. */
static int ring_one(struct ring *r, unsigned char op, int fd, void *buf, unsigned len)
{
	unsigned tail = *r->sq_tail, idx = tail & *r->sq_mask, head;
	struct io_uring_sqe *sqe = &r->sqes[idx];
	int res;

	memset(sqe, 0, sizeof(*sqe));
	sqe->opcode = op;
	sqe->fd = fd;
	sqe->addr = (uint64_t)(uintptr_t)buf;
	sqe->len = len;
	sqe->user_data = 42;
	r->sq_array[idx] = idx;
	__atomic_store_n(r->sq_tail, tail + 1, __ATOMIC_RELEASE);
	if (syscall(__NR_io_uring_enter, r->fd, 1, 1, IORING_ENTER_GETEVENTS, NULL, 0) < 0)
		return -1000 - errno;
	head = *r->cq_head;
	if (head == __atomic_load_n(r->cq_tail, __ATOMIC_ACQUIRE))
		return -2000;
	res = r->cqes[head & *r->cq_mask].res;
	__atomic_store_n(r->cq_head, head + 1, __ATOMIC_RELEASE);
	return res;
}

static long peer_call(long nr, long a, long b, long c, long d, long e)
{
	long r = syscall(nr, a, b, c, d, e, 0L);
	return r < 0 ? -errno : r;
}

static int peer(void)
{
	char src[8] = "abcdefg", dst[8];
	struct iovec l = { dst, sizeof(dst) }, rv = { src, sizeof(src) };
	int pidfd = (int)syscall(SYS_pidfd_open, getpid(), 0);

	printf("ptrace=%ld\n", peer_call(SYS_ptrace, PTRACE_PEEKDATA, getpid(), (long)src, 0, 0));
	printf("pidfd_getfd=%ld\n",
	       pidfd < 0 ? -1000L : peer_call(SYS_pidfd_getfd, pidfd, 1, 0, 0, 0));
	printf("vm_readv=%ld\n",
	       peer_call(SYS_process_vm_readv, getpid(), (long)&l, 1, (long)&rv, 1));
	printf("vm_writev=%ld\n",
	       peer_call(SYS_process_vm_writev, getpid(), (long)&rv, 1, (long)&l, 1));
	return 0;
}

/* READ, NOP, READ in one submit; prints what was submitted and the CQEs. */
static void batch(unsigned flags, const char *key)
{
	struct io_uring_params p;
	struct ring r;
	char buf[3][64];
	int fd, dfd = open("/etc/agent-data", O_RDONLY);
	unsigned tail, head;
	long n;

	memset(&p, 0, sizeof(p));
	p.flags = flags;
	fd = sys_setup(8, &p);
	if (fd < 0 || ring_map(&r, fd, &p)) {
		printf("%s=setup%d\n", key, fd);
		return;
	}
	tail = *r.sq_tail;
	for (unsigned i = 0; i < 3; i++) {
		unsigned idx = (tail + i) & *r.sq_mask;
		struct io_uring_sqe *sqe = &r.sqes[idx];

		memset(sqe, 0, sizeof(*sqe));
		sqe->opcode = i == 1 ? IORING_OP_NOP : IORING_OP_READ;
		sqe->fd = i == 1 ? -1 : dfd;
		sqe->addr = (uint64_t)(uintptr_t)buf[i];
		sqe->len = i == 1 ? 0 : sizeof(buf[i]);
		sqe->user_data = i;
		r.sq_array[idx] = idx;
	}
	__atomic_store_n(r.sq_tail, tail + 3, __ATOMIC_RELEASE);
	n = syscall(__NR_io_uring_enter, fd, 3, 0, 0, NULL, 0);
	printf("%s=%ld\n", key, n < 0 ? -errno : n);
	/* the completions so far (all three are inline: the file is local) */
	syscall(__NR_io_uring_enter, fd, 0, n > 0 ? (unsigned)n : 0, IORING_ENTER_GETEVENTS, NULL,
		0);
	printf("cqes%s=", key + 5);
	head = *r.cq_head;
	for (unsigned k = 0; head != __atomic_load_n(r.cq_tail, __ATOMIC_ACQUIRE); head++, k++)
		printf("%s%llu:%d", k ? "," : "",
		       (unsigned long long)r.cqes[head & *r.cq_mask].user_data,
		       r.cqes[head & *r.cq_mask].res);
	printf("\n");
	close(fd);
	close(dfd);
}

static void probe_read(struct ring *r, const char *key)
{
	char buf[128];
	int fd = open("/etc/agent-data", O_RDONLY), res;

	memset(buf, 0, sizeof(buf));
	res = ring_one(r, IORING_OP_READ, fd, buf, sizeof(buf) - 1);
	printf("%s=%d\n", key, res);
	if (res >= 0)
		printf("%s_data=%s\n", key, strcmp(buf, DATA) ? "bad" : "ok");
	close(fd);
}

int main(int argc, char **argv)
{
	struct io_uring_params p, p2;
	struct io_uring_restriction res[2];
	struct ring r;
	int fd, fd2, rc;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 2 && !strcmp(argv[1], "peer"))
		return peer();
	if (argc == 2 && !strcmp(argv[1], "batch")) {
		batch(0, "batch");
		batch(IORING_SETUP_SUBMIT_ALL, "batch_all");
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "rings")) {
		int max = atoi(argv[2]), fds[256];

		for (int round = 1; round <= 2; round++) {
			int n = 0, last = 0;

			while (n < max && n < 256) {
				memset(&p, 0, sizeof(p));
				last = sys_setup(4, &p);
				if (last < 0)
					break;
				fds[n++] = last;
				last = 0;
			}
			printf("rings%s=%d\nlast%s=%d\n", round == 1 ? "" : "2", n,
			       round == 1 ? "" : "2", last);
			while (n > 0)
				close(fds[--n]);
		}
		return 0;
	}
	if (argc == 2 && !strcmp(argv[1], "storm")) {
		for (int i = 0; i < 4; i++)
			if (fork() == 0)
				break;
		printf("storming\n");
		for (;;) {
			memset(&p, 0, sizeof(p));
			fd = sys_setup(8, &p);
			if (fd >= 0)
				close(fd);
		}
	}
	memset(&p, 0, sizeof(p));
	fd = sys_setup(8, &p);
	printf("setup=%d\n", fd < 0 ? fd : 0);
	if (fd < 0)
		return 0;
	rc = ring_map(&r, fd, &p);
	if (rc) {
		printf("map=%d\n", rc);
		return 1;
	}
	if (argc == 3 && !strcmp(argv[1], "pin")) {
		size_t len = (size_t)atoi(argv[2]) << 20;
		struct iovec iov;

		iov.iov_base = mmap(NULL, len, PROT_READ | PROT_WRITE,
				    MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
		iov.iov_len = len;
		if (iov.iov_base == MAP_FAILED)
			return 1;
		printf("pin=%d\n", sys_register(fd, IORING_REGISTER_BUFFERS, &iov, 1));
		return 0;
	}
	probe_read(&r, "read");
	printf("nop=%d\n", ring_one(&r, IORING_OP_NOP, -1, NULL, 0));

	/* The program's own restriction set: allow every request it uses. */
	memset(res, 0, sizeof(res));
	res[0].opcode = IORING_RESTRICTION_SQE_OP;
	res[0].sqe_op = IORING_OP_NOP;
	res[1].opcode = IORING_RESTRICTION_SQE_OP;
	res[1].sqe_op = IORING_OP_READ;
	printf("restrict=%d\n", sys_register(fd, IORING_REGISTER_RESTRICTIONS, res, 2));
	printf("enable=%d\n", sys_register(fd, IORING_REGISTER_ENABLE_RINGS, NULL, 0));

	memset(&p2, 0, sizeof(p2));
	p2.flags = IORING_SETUP_R_DISABLED;
	fd2 = sys_setup(4, &p2);
	printf("rdis_setup=%d\n", fd2 < 0 ? fd2 : 0);
	if (fd2 >= 0) {
		printf("rdis_restrict=%d\n",
		       sys_register(fd2, IORING_REGISTER_RESTRICTIONS, res, 2));
		close(fd2);
	}

	if (argc == 3 && !strcmp(argv[1], "wait")) {
		struct timespec ts = { 0, 20 * 1000 * 1000 };

		printf("waiting\n");
		for (int i = 0; i < 1500 && access(argv[2], F_OK); i++)
			nanosleep(&ts, NULL);
		memset(&p2, 0, sizeof(p2));
		fd2 = sys_setup(8, &p2);
		printf("setup2=%d\n", fd2 < 0 ? fd2 : 0);
		if (fd2 >= 0)
			close(fd2);
		probe_read(&r, "read2");
	}
	printf("done\n");
	return 0;
}
