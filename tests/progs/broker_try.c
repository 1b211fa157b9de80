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
#include <stddef.h>
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
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

/* Submit one SQE and wait for its completion: the CQE's res. */
static int submit(const struct io_uring_sqe *in)
{
	unsigned tail = *cur.sq_tail, idx = tail & *cur.sq_mask, head;
	struct io_uring_cqe *cqe;
	int r, res;

	memset(cur.sqes + idx * cur.sqe_sz, 0, cur.sqe_sz);
	memcpy(cur.sqes + idx * cur.sqe_sz, in, sizeof(*in));
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
	head = *cur.cq_head;
	if (head == __atomic_load_n(cur.cq_tail, __ATOMIC_ACQUIRE))
		return -200000;
	cqe = (struct io_uring_cqe *)(cur.cqes + (head & *cur.cq_mask) * cur.cqe_sz);
	res = cqe->res;
	__atomic_store_n(cur.cq_head, head + 1, __ATOMIC_RELEASE);
	return res;
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

static void do_fds(void)
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
			n += !strcmp(link, "anon_inode:[io_uring]");
		}
	}
	closedir(d);
	say("rings", "%d", n);
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
		} else if (!strncmp(s, "setup:", 6)) {
			do_setup(s + 6);
		} else if (!strcmp(s, "nop") || !strcmp(s, "read") || !strcmp(s, "openat")) {
			do_request(s);
		} else if (!strcmp(s, "register-restrictions") || !strcmp(s, "enable") ||
			   !strcmp(s, "register-files")) {
			do_register(s);
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
			do_fds();
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
