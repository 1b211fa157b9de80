/* SPDX-License-Identifier: MIT */
/*
 * broker-try: an io_uring program written with raw system calls only (no
 * liburing, no libiouring-restrict), as an unmodified program brought
 * under `iour-restrict run` would be.  The broker tests
 * (tests/live/test_live_broker.c) run it and compare its output.
 *
 *   broker-try STEP...
 *
 * STEP is one of:
 *   setup:FLAGS   io_uring_setup(8, params with FLAGS), FLAGS a '+'-list
 *                 of names (0, sqpoll, r_disabled, attach_wq, no_mmap,
 *                 single_issuer, defer_taskrun, coop_taskrun, taskrun_flag,
 *                 cqsize, clamp, submit_all, sqe128, cqe32, no_sqarray,
 *                 iopoll, unknown); prints "setup: ok" when the fd is a
 *                 ring whose params are what io_uring_setup gives (the
 *                 flags as asked, features and offsets set, the rings map),
 *                 else "setup: ERRNO" or "setup: bad params (...)"
 *   setup-ro, setup-null  io_uring_setup with params in a read-only page /
 *                 at NULL: "setup: ERRNO" (EFAULT from the kernel)
 *   setup-file:PATH  io_uring_setup with params in a private writable
 *                 mapping of PATH's first page (never touched here):
 *                 "params-at: ADDR" first, then "setup: ok" or the errno
 *                 (PATH a FUSE file that never answers READ: a reader of
 *                 the params waits; tests/common/fuse_stall.h)
 *   setup-files:N:PATH  the same from N threads at once (N <= 4), each
 *                 with its own page
 *   cgroup:DIR    move this process into cgroup directory DIR: "cgroup: ok"
 *                 or the errno
 *   rings:N[:MAX] io_uring_setup(N) again and again, keeping every ring,
 *                 until one fails (at most MAX, default 1000): "rings: COUNT
 *                 ERRNO" ("none failed" for ERRNO at MAX)
 *   close-rings   close every io_uring fd this process holds:
 *                 "close-rings: COUNT" (the last setup:'s ring stays
 *                 mapped, so alive)
 *   nop, read, openat     one request on the last ring: "nop: ok" or the
 *                 completion's errno; read checks the data it got
 *   register-restrictions, enable, register-files
 *                 io_uring_register on the last ring: "NAME: ok" or errno
 *   fork, thread  a child process / a thread does "setup:0 nop read",
 *                 its lines prefixed "child " / "thread "
 *   exec          execute this program again with the steps that follow
 *   wait          read one byte from stdin first (tests synchronise)
 *   fds           "rings: N", the io_uring fds this process holds
 *   notify        "pid: PID PPID", then READY=1 to $NOTIFY_SOCKET (a path
 *                 or an abstract '@' name) as sd_notify() would send it:
 *                 "notify: ok" or the errno
 * Attacks on the effects a policy closes (doc/security.md 2.1), each on
 * the last ring:
 *   op:N          request opcode N with an otherwise zeroed SQE (fd -1):
 *                 "op N: " the completion's errno (EACCES: the ring's
 *                 restrictions denied it; anything else: they let it in)
 *   reg:N         io_uring_register(ring, N, NULL, 0): "reg N: " ok or the
 *                 errno (EACCES: the ring's restrictions denied it)
 *   create:PATH   OPENAT with O_WRONLY|O_CREAT|O_TRUNC: "create: ok" once
 *                 PATH exists as an empty file, else the errno
 *   recvmsg-fd    RECVMSG on a unix socket its peer sent a descriptor on
 *                 with SCM_RIGHTS: "recvmsg-fd: ok" when one arrived
 *   sendmsg-fd    SENDMSG of a descriptor with SCM_RIGHTS: "sendmsg-fd: ok"
 *                 when the peer received it
 *   msg-ring      MSG_RING to the ring itself: "msg-ring: ok" when the
 *                 message arrived
 *   blind-msg-ring  io_uring_register(-1, REGISTER_SEND_MSG_RING) posting
 *                 into the ring: "blind-msg-ring: ok" when the CQE arrived
 *   blind-query   io_uring_register(-1, REGISTER_QUERY): "blind-query: ok"
 *                 or the errno
 * Exit status 0 unless the program itself failed (2).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <linux/io_uring.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef IORING_SETUP_NO_SQARRAY
#define IORING_SETUP_NO_SQARRAY (1U << 16)
#endif

struct ring {
	int fd;
	unsigned flags;
	unsigned *sq_tail, *sq_mask, *sq_array, *cq_head, *cq_tail, *cq_mask;
	char *cqes;
	char *sqes;
	size_t sqe_sz, cqe_sz;
};

static __thread struct ring cur = { .fd = -1 };
static const char *prefix = "";

static const char *ename(int e)
{
	static __thread char buf[32];
	const char *n = e ? strerrorname_np(e) : "ok";

	if (n)
		return n;
	snprintf(buf, sizeof(buf), "errno %d", e);
	return buf;
}

static void say(const char *what, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(const char *what, const char *fmt, ...)
{
	char line[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	printf("%s%s: %s\n", prefix, what, line);
	fflush(stdout);
}

static const struct {
	const char *name;
	unsigned bit;
} flag_names[] = {
	{ "iopoll", 1U << 0 },         { "sqpoll", 1U << 1 },       { "cqsize", 1U << 3 },
	{ "clamp", 1U << 4 },          { "attach_wq", 1U << 5 },    { "r_disabled", 1U << 6 },
	{ "submit_all", 1U << 7 },     { "coop_taskrun", 1U << 8 }, { "taskrun_flag", 1U << 9 },
	{ "sqe128", 1U << 10 },        { "cqe32", 1U << 11 },       { "single_issuer", 1U << 12 },
	{ "defer_taskrun", 1U << 13 }, { "no_mmap", 1U << 14 },     { "no_sqarray", 1U << 16 },
	{ "unknown", 1U << 31 },
};

static int parse_flags(const char *s, unsigned *out)
{
	char buf[256], *tok, *save = NULL;

	*out = 0;
	snprintf(buf, sizeof(buf), "%s", s);
	for (tok = strtok_r(buf, "+", &save); tok; tok = strtok_r(NULL, "+", &save)) {
		size_t i;

		if (!strcmp(tok, "0"))
			continue;
		for (i = 0; i < sizeof(flag_names) / sizeof(flag_names[0]); i++)
			if (!strcmp(tok, flag_names[i].name))
				break;
		if (i == sizeof(flag_names) / sizeof(flag_names[0]))
			return -1;
		*out |= flag_names[i].bit;
	}
	return 0;
}

static void do_setup(const char *spec)
{
	struct io_uring_params p;
	unsigned flags;
	size_t sq_len, cq_len;
	char *sq, *cq;
	int fd;

	if (parse_flags(spec, &flags)) {
		fprintf(stderr, "broker-try: unknown flags '%s'\n", spec);
		exit(2);
	}
	if (cur.fd >= 0)
		close(cur.fd);
	cur.fd = -1;
	memset(&p, 0, sizeof(p));
	p.flags = flags;
	if (flags & IORING_SETUP_CQSIZE)
		p.cq_entries = 64;
	if (flags & IORING_SETUP_ATTACH_WQ)
		p.wq_fd = 0;
	fd = (int)syscall(__NR_io_uring_setup, 8, &p);
	if (fd < 0) {
		say("setup", "%s", ename(errno));
		return;
	}
	/* What io_uring_setup gives back: the flags as asked, the sizes and
	 * offsets filled in, a ring behind the fd. */
	if (p.flags != flags || !p.sq_entries || !p.cq_entries || !p.features || !p.sq_off.tail ||
	    !p.cq_off.cqes || ((flags & IORING_SETUP_CQSIZE) && p.cq_entries != 64)) {
		say("setup", "bad params (flags %#x sq %u cq %u features %#x)", p.flags,
		    p.sq_entries, p.cq_entries, p.features);
		close(fd);
		return;
	}
	cur.fd = fd;
	cur.flags = flags;
	cur.sqe_sz = (flags & IORING_SETUP_SQE128) ? 128 : 64;
	cur.cqe_sz = (flags & IORING_SETUP_CQE32) ? 32 : 16;
	sq_len = p.sq_off.array + p.sq_entries * sizeof(unsigned);
	if (flags & IORING_SETUP_NO_SQARRAY)
		sq_len = p.sq_off.flags + sizeof(unsigned) + 64;
	cq_len = p.cq_off.cqes + p.cq_entries * cur.cqe_sz;
	if (p.features & IORING_FEAT_SINGLE_MMAP)
		sq_len = cq_len = sq_len > cq_len ? sq_len : cq_len;
	sq = mmap(NULL, sq_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd,
		  IORING_OFF_SQ_RING);
	cq = (p.features & IORING_FEAT_SINGLE_MMAP) ?
		     sq :
		     mmap(NULL, cq_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd,
			  IORING_OFF_CQ_RING);
	cur.sqes = mmap(NULL, p.sq_entries * cur.sqe_sz, PROT_READ | PROT_WRITE,
			MAP_SHARED | MAP_POPULATE, fd, IORING_OFF_SQES);
	if (sq == MAP_FAILED || cq == MAP_FAILED || cur.sqes == MAP_FAILED) {
		say("setup", "mmap failed: %s", ename(errno));
		close(fd);
		cur.fd = -1;
		return;
	}
	cur.sq_tail = (unsigned *)(sq + p.sq_off.tail);
	cur.sq_mask = (unsigned *)(sq + p.sq_off.ring_mask);
	cur.sq_array = (flags & IORING_SETUP_NO_SQARRAY) ? NULL : (unsigned *)(sq + p.sq_off.array);
	cur.cq_head = (unsigned *)(cq + p.cq_off.head);
	cur.cq_tail = (unsigned *)(cq + p.cq_off.tail);
	cur.cq_mask = (unsigned *)(cq + p.cq_off.ring_mask);
	cur.cqes = cq + p.cq_off.cqes;
	/* The memory behind the fd must be the ring the params describe. */
	if (*cur.sq_mask != p.sq_entries - 1 || *cur.cq_mask != p.cq_entries - 1 ||
	    *cur.sq_tail != 0 || *cur.cq_tail != 0) {
		say("setup",
		    "ring memory does not match the params (sq mask %u tail %u, cq mask %u "
		    "tail %u; params sq %u cq %u)",
		    *cur.sq_mask, *cur.sq_tail, *cur.cq_mask, *cur.cq_tail, p.sq_entries,
		    p.cq_entries);
		close(fd);
		cur.fd = -1;
		return;
	}
	say("setup", "ok");
}

/* Each submission's user_data is its own (a request that completes late
 * must not be taken for a later one's); a MSG_RING message's CQE seen on
 * the way is kept in msg_res. */
static __thread uint64_t next_user_data = 0x1000;
static __thread int msg_res = -200000;

#define TRY_MSG_DATA 0x5eedULL

/* Submit one SQE and wait for its own completion: the CQE's res. */
static int submit(const struct io_uring_sqe *in)
{
	unsigned tail = *cur.sq_tail, idx = tail & *cur.sq_mask, head;
	struct io_uring_sqe *sqe = (struct io_uring_sqe *)(cur.sqes + idx * cur.sqe_sz);
	uint64_t ud = next_user_data++;
	struct io_uring_cqe *cqe;
	int r, res;

	memset(sqe, 0, cur.sqe_sz);
	memcpy(sqe, in, sizeof(*in));
	sqe->user_data = ud;
	if (cur.sq_array)
		cur.sq_array[idx] = idx;
	__atomic_store_n(cur.sq_tail, tail + 1, __ATOMIC_RELEASE);
	/* An SQPOLL thread may sleep (5.10 waits for an explicit wakeup). */
	r = (int)syscall(__NR_io_uring_enter, cur.fd, 1, 1,
			 IORING_ENTER_GETEVENTS |
				 ((cur.flags & IORING_SETUP_SQPOLL) ? IORING_ENTER_SQ_WAKEUP : 0),
			 NULL, 0);
	if (r < 0)
		return -100000 - errno; /* the enter call itself failed */
	for (;;) {
		head = *cur.cq_head;
		if (head == __atomic_load_n(cur.cq_tail, __ATOMIC_ACQUIRE)) {
			/* only others' completions so far: wait for one more */
			r = (int)syscall(__NR_io_uring_enter, cur.fd, 0, 1, IORING_ENTER_GETEVENTS,
					 NULL, 0);
			if (r < 0)
				return -200000;
			continue;
		}
		cqe = (struct io_uring_cqe *)(cur.cqes + (head & *cur.cq_mask) * cur.cqe_sz);
		res = cqe->res;
		__atomic_store_n(cur.cq_head, head + 1, __ATOMIC_RELEASE);
		if (cqe->user_data == TRY_MSG_DATA)
			msg_res = res;
		if (cqe->user_data == ud)
			return res;
	}
}

static void report_res(const char *what, int res, const char *ok_extra)
{
	if (res <= -200000)
		say(what, "no completion");
	else if (res <= -100000)
		say(what, "enter %s", ename(-(res + 100000)));
	else if (res < 0)
		say(what, "%s", ename(-res));
	else
		say(what, "ok%s", ok_extra);
}

static void do_request(const char *what)
{
	struct io_uring_sqe sqe;
	char buf[16] = "";
	int p[2] = { -1, -1 }, res;

	if (cur.fd < 0) {
		say(what, "no ring");
		return;
	}
	memset(&sqe, 0, sizeof(sqe));
	if (!strcmp(what, "nop")) {
		sqe.opcode = IORING_OP_NOP;
	} else if (!strcmp(what, "read")) {
		if (pipe(p) || write(p[1], "brokered", 8) != 8)
			exit(2);
		sqe.opcode = IORING_OP_READ;
		sqe.fd = p[0];
		sqe.addr = (uint64_t)(uintptr_t)buf;
		sqe.len = 8;
	} else {
		sqe.opcode = IORING_OP_OPENAT;
		sqe.fd = AT_FDCWD;
		sqe.addr = (uint64_t)(uintptr_t) "/dev/null";
		sqe.open_flags = O_RDONLY | O_CLOEXEC;
	}
	res = submit(&sqe);
	if (!strcmp(what, "read") && res >= 0)
		report_res(what, res == 8 && !memcmp(buf, "brokered", 8) ? 0 : -EIO, "");
	else
		report_res(what, res, "");
	if (!strcmp(what, "openat") && res >= 0)
		close(res);
	if (p[0] >= 0) {
		close(p[0]);
		close(p[1]);
	}
}

static void do_register(const char *what)
{
	struct io_uring_restriction r[1];
	int fds[1] = { 0 }, rc;

	if (cur.fd < 0) {
		say(what, "no ring");
		return;
	}
	memset(r, 0, sizeof(r));
	r[0].opcode = IORING_RESTRICTION_SQE_OP;
	r[0].sqe_op = IORING_OP_OPENAT;
	if (!strcmp(what, "register-restrictions"))
		rc = (int)syscall(__NR_io_uring_register, cur.fd, IORING_REGISTER_RESTRICTIONS, r,
				  1);
	else if (!strcmp(what, "enable"))
		rc = (int)syscall(__NR_io_uring_register, cur.fd, IORING_REGISTER_ENABLE_RINGS,
				  NULL, 0);
	else
		rc = (int)syscall(__NR_io_uring_register, cur.fd, IORING_REGISTER_FILES, fds, 1);
	say(what, "%s", rc < 0 ? ename(errno) : "ok");
}

/* ---- attacks on effects ---- */

/* The MSG_RING message's CQE, seen by submit() or pending now: its res,
 * or -200000 if there is none. */
static int find_msg_cqe(void)
{
	while (*cur.cq_head != __atomic_load_n(cur.cq_tail, __ATOMIC_ACQUIRE)) {
		unsigned head = *cur.cq_head;
		struct io_uring_cqe *cqe =
			(struct io_uring_cqe *)(cur.cqes + (head & *cur.cq_mask) * cur.cqe_sz);

		if (cqe->user_data == TRY_MSG_DATA)
			msg_res = cqe->res;
		__atomic_store_n(cur.cq_head, head + 1, __ATOMIC_RELEASE);
	}
	return msg_res;
}

static void do_op(const char *num)
{
	struct io_uring_sqe sqe;
	char what[32];

	snprintf(what, sizeof(what), "op %s", num);
	if (cur.fd < 0) {
		say(what, "no ring");
		return;
	}
	memset(&sqe, 0, sizeof(sqe));
	sqe.opcode = (uint8_t)atoi(num);
	sqe.fd = -1;
	report_res(what, submit(&sqe), "");
}

static void do_reg(const char *num)
{
	char what[32];
	int rc;

	snprintf(what, sizeof(what), "reg %s", num);
	if (cur.fd < 0) {
		say(what, "no ring");
		return;
	}
	rc = (int)syscall(__NR_io_uring_register, cur.fd, (unsigned)atoi(num), NULL, 0);
	say(what, "%s", rc < 0 ? ename(errno) : "ok");
}

static void do_create(const char *path)
{
	struct io_uring_sqe sqe;
	struct stat st;
	int res;

	if (cur.fd < 0) {
		say("create", "no ring");
		return;
	}
	memset(&sqe, 0, sizeof(sqe));
	sqe.opcode = IORING_OP_OPENAT;
	sqe.fd = AT_FDCWD;
	sqe.addr = (uint64_t)(uintptr_t)path;
	sqe.open_flags = O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC;
	sqe.len = 0600;
	res = submit(&sqe);
	if (res >= 0) {
		res = fstat(res, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 0 &&
			      stat(path, &st) == 0 ?
			      0 :
			      -EIO;
	}
	report_res("create", res, "");
}

/* One byte with a descriptor of /dev/null, on socket @s (plain sendmsg). */
static int send_one_fd(int s)
{
	char c = 'f', cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { .iov_base = &c, .iov_len = 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			    .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm;
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC), rc;

	memset(cbuf, 0, sizeof(cbuf));
	cm = CMSG_FIRSTHDR(&m);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	rc = sendmsg(s, &m, MSG_NOSIGNAL) == 1 ? 0 : -1;
	close(fd);
	return rc;
}

/* A descriptor received in @m, closed; 1 if there was one. */
static int got_fd(struct msghdr *m)
{
	struct cmsghdr *cm = CMSG_FIRSTHDR(m);
	int fd;

	if (!cm || cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
		return 0;
	memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	close(fd);
	return 1;
}

static void do_fd_passing(const char *what)
{
	char c = 'f', cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { .iov_base = &c, .iov_len = 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			    .msg_controllen = sizeof(cbuf) };
	struct io_uring_sqe sqe;
	int sv[2], res, nfd = open("/dev/null", O_RDONLY | O_CLOEXEC);

	if (cur.fd < 0) {
		say(what, "no ring");
		return;
	}
	if (nfd < 0 || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		exit(2);
	memset(cbuf, 0, sizeof(cbuf));
	memset(&sqe, 0, sizeof(sqe));
	sqe.addr = (uint64_t)(uintptr_t)&m;
	sqe.len = 1;
	if (!strcmp(what, "recvmsg-fd")) {
		if (send_one_fd(sv[1]))
			exit(2);
		sqe.opcode = IORING_OP_RECVMSG;
		sqe.fd = sv[0];
		res = submit(&sqe);
		if (res >= 0)
			res = got_fd(&m) ? 0 : -ENOMSG;
	} else {
		struct cmsghdr *cm = CMSG_FIRSTHDR(&m);

		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &nfd, sizeof(int));
		sqe.opcode = IORING_OP_SENDMSG;
		sqe.fd = sv[0];
		res = submit(&sqe);
		if (res >= 0) {
			memset(cbuf, 0, sizeof(cbuf));
			m.msg_controllen = sizeof(cbuf);
			res = recvmsg(sv[1], &m, MSG_DONTWAIT | MSG_CMSG_CLOEXEC) == 1 && got_fd(&m) ?
				      0 :
				      -ENOMSG;
		}
	}
	report_res(what, res, "");
	close(sv[0]);
	close(sv[1]);
	close(nfd);
}

static void do_msg_ring(const char *what)
{
	struct io_uring_sqe sqe;
	int res;

	if (cur.fd < 0) {
		say(what, "no ring");
		return;
	}
	memset(&sqe, 0, sizeof(sqe));
	sqe.opcode = IORING_OP_MSG_RING;
	sqe.fd = cur.fd;
	sqe.off = TRY_MSG_DATA; /* the target CQE's user_data */
	sqe.len = 7;            /* its res */
	msg_res = -200000;
	if (!strcmp(what, "msg-ring")) {
		res = submit(&sqe);
	} else {
		/* IORING_REGISTER_SEND_MSG_RING (31): no ring, fd -1 */
		res = (int)syscall(__NR_io_uring_register, -1, 31, &sqe, 1);
		res = res < 0 ? -errno : 0;
	}
	if (res >= 0)
		res = find_msg_cqe() == 7 ? 0 : -ENOMSG;
	report_res(what, res, "");
}

static void do_blind_query(void)
{
	/* struct io_uring_query_hdr (6.18): next_entry, query_data,
	 * query_op, size, result, reserved */
	struct {
		uint64_t next, data;
		uint32_t op, size;
		int32_t result;
		uint32_t resv[3];
	} hdr;
	char buf[256];
	int rc;

	memset(&hdr, 0, sizeof(hdr));
	memset(buf, 0, sizeof(buf));
	hdr.data = (uint64_t)(uintptr_t)buf;
	hdr.size = sizeof(buf);
	/* IORING_REGISTER_QUERY (35) */
	rc = (int)syscall(__NR_io_uring_register, -1, 35, &hdr, 0);
	say("blind-query", "%s", rc < 0 ? ename(errno) : "ok");
}

static void child_steps(void)
{
	do_setup("0");
	do_request("nop");
	do_request("read");
}

static void *thread_main(void *arg)
{
	(void)arg;
	cur.fd = -1;
	child_steps();
	return NULL;
}

/* "rings: N", or with `close` "close-rings: N" after closing them. */
static void do_fds(bool close_them)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	char path[300], link[64];
	int n = 0;

	if (!d) {
		say("rings", "no /proc/self/fd");
		return;
	}
	while ((e = readdir(d))) {
		ssize_t k;

		snprintf(path, sizeof(path), "/proc/self/fd/%s", e->d_name);
		k = readlink(path, link, sizeof(link) - 1);
		if (k > 0) {
			link[k] = '\0';
			if (!strcmp(link, "anon_inode:[io_uring]")) {
				n++;
				if (close_them)
					close(atoi(e->d_name));
			}
		}
	}
	closedir(d);
	if (close_them)
		cur.fd = -1;
	say(close_them ? "close-rings" : "rings", "%d", n);
}

/* What a Type=notify service does when it is ready (doc/systemd.md). */
static void do_notify(void)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	socklen_t len;
	int s, err = 0;

	say("pid", "%d %d", (int)getpid(), (int)getppid());
	if (!path || !*path || strlen(path) >= sizeof(sa.sun_path)) {
		say("notify", "%s", "no NOTIFY_SOCKET");
		return;
	}
	memcpy(sa.sun_path, path, strlen(path));
	if (sa.sun_path[0] == '@')
		sa.sun_path[0] = '\0';
	len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(path));
	s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0 || sendto(s, "READY=1", 7, 0, (struct sockaddr *)&sa, len) != 7)
		err = errno;
	if (s >= 0)
		close(s);
	say("notify", "%s", err ? ename(err) : "ok");
}

/* N (1..4) pages of PATH mapped at once, before any call: a mmap after a
 * reader of the params waits would wait too (the reader holds this
 * process's memory map lock). */
static char *map_file(const char *path, int n)
{
	int f = open(path, O_RDONLY | O_CLOEXEC);
	void *m = f >= 0 ? mmap(NULL, (size_t)n * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE, f, 0) :
			   MAP_FAILED;

	if (f >= 0)
		close(f);
	if (m == MAP_FAILED) {
		say("setup", "cannot map %s: %s", path, ename(errno));
		return NULL;
	}
	return m;
}

static void setup_at(void *params)
{
	long fd;

	say("params-at", "%p", params);
	fd = syscall(__NR_io_uring_setup, 8, params);
	say("setup", "%s", fd >= 0 ? "ok" : ename(errno));
	if (fd >= 0)
		close((int)fd);
}

static void *setup_at_thread(void *params)
{
	setup_at(params);
	return NULL;
}

int main(int argc, char **argv)
{
	/* A request that never completes is a failure to see, not a hang. */
	alarm(30);
	for (int i = 1; i < argc; i++) {
		const char *s = argv[i];

		if (!strcmp(s, "setup-ro") || !strcmp(s, "setup-null")) {
			void *pg = NULL;
			long fd;

			if (!strcmp(s, "setup-ro")) {
				pg = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1,
					  0);
				if (pg == MAP_FAILED)
					return 2;
			}
			if (cur.fd >= 0)
				close(cur.fd);
			cur.fd = -1;
			fd = syscall(__NR_io_uring_setup, 8, pg);
			say("setup", "%s", fd >= 0 ? "ok" : ename(errno));
			if (fd >= 0)
				close((int)fd);
		} else if (!strncmp(s, "setup-file:", 11)) {
			char *m = map_file(s + 11, 1);

			if (m)
				setup_at(m);
		} else if (!strncmp(s, "setup-files:", 12)) {
			pthread_t t[4];
			char *path, *m;
			long n = strtol(s + 12, &path, 10);

			if (n < 1 || n > 4 || *path != ':')
				return 2;
			m = map_file(path + 1, (int)n);
			if (!m)
				continue;
			for (long k = 0; k < n; k++)
				if (pthread_create(&t[k], NULL, setup_at_thread, m + k * 4096))
					return 2;
			for (long k = 0; k < n; k++)
				pthread_join(t[k], NULL);
		} else if (!strncmp(s, "cgroup:", 7)) {
			/* Move this process into cgroup directory DIR. */
			char path[4096];
			int f;

			snprintf(path, sizeof(path), "%s/cgroup.procs", s + 7);
			f = open(path, O_WRONLY | O_CLOEXEC);
			if (f < 0 || write(f, "0", 1) != 1)
				say("cgroup", "%s", ename(errno));
			else
				say("cgroup", "ok");
			if (f >= 0)
				close(f);
		} else if (!strncmp(s, "rings:", 6)) {
			/* Rings of N entries, kept, until one fails (at most MAX). */
			char *e;
			unsigned long entries = strtoul(s + 6, &e, 10);
			int k = 0, err = 0, max = *e == ':' ? atoi(e + 1) : 1000;

			for (; k < max; k++) {
				struct io_uring_params p;

				memset(&p, 0, sizeof(p));
				if (syscall(__NR_io_uring_setup, (unsigned)entries, &p) < 0) {
					err = errno;
					break;
				}
			}
			say("rings", "%d %s", k, err ? ename(err) : "none failed");
		} else if (!strncmp(s, "setup:", 6)) {
			do_setup(s + 6);
		} else if (!strcmp(s, "nop") || !strcmp(s, "read") || !strcmp(s, "openat")) {
			do_request(s);
		} else if (!strcmp(s, "register-restrictions") || !strcmp(s, "enable") ||
			   !strcmp(s, "register-files")) {
			do_register(s);
		} else if (!strncmp(s, "op:", 3)) {
			do_op(s + 3);
		} else if (!strncmp(s, "reg:", 4)) {
			do_reg(s + 4);
		} else if (!strncmp(s, "create:", 7)) {
			do_create(s + 7);
		} else if (!strcmp(s, "recvmsg-fd") || !strcmp(s, "sendmsg-fd")) {
			do_fd_passing(s);
		} else if (!strcmp(s, "msg-ring") || !strcmp(s, "blind-msg-ring")) {
			do_msg_ring(s);
		} else if (!strcmp(s, "blind-query")) {
			do_blind_query();
		} else if (!strcmp(s, "fork")) {
			pid_t pid;
			int st = 0;

			fflush(stdout);
			pid = fork();
			if (pid < 0)
				return 2;
			if (pid == 0) {
				prefix = "child ";
				cur.fd = -1;
				child_steps();
				_exit(0);
			}
			if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st)) {
				if (WIFSIGNALED(st))
					fprintf(stderr,
						"broker-try: the forked child died of signal %d\n",
						WTERMSIG(st));
				else
					fprintf(stderr,
						"broker-try: the forked child failed (status %#x)\n",
						st);
				return 2;
			}
		} else if (!strcmp(s, "thread")) {
			pthread_t t;

			prefix = "thread ";
			if (pthread_create(&t, NULL, thread_main, NULL) || pthread_join(t, NULL))
				return 2;
			prefix = "";
		} else if (!strcmp(s, "exec")) {
			argv[i] = argv[0];
			fflush(stdout);
			execv("/proc/self/exe", argv + i);
			return 2;
		} else if (!strcmp(s, "fds")) {
			do_fds(false);
		} else if (!strcmp(s, "close-rings")) {
			do_fds(true);
		} else if (!strcmp(s, "notify")) {
			do_notify();
		} else if (!strcmp(s, "wait")) {
			char c;

			if (read(0, &c, 1) != 1)
				return 2;
		} else {
			fprintf(stderr, "broker-try: unknown step '%s'\n", s);
			return 2;
		}
	}
	return 0;
}
