/* SPDX-License-Identifier: MIT */
/*
 * The every-opcode test of `iour-restrict learn` (make check-learn, and
 * the kernel guests: scripts/guest-payloads/40-fio.sh).
 *
 *   learn_allops [IOUR_RESTRICT [DIR]]   (defaults /tools/iour-restrict, /tmp)
 *   learn_allops --submit
 *
 * --submit: one process (comm "iour-allops-sub") creates a ring, registers
 * a file table and a buffer, submits one request of every opcode below the
 * running kernel's IORING_OP_LAST (from the probe), each with arguments
 * the kernel's preparation accepts where that is easy (the request may
 * still fail when it runs), then calls every register opcode below
 * IORING_REGISTER_LAST on the ring (most fail: the kernel traces them all).
 *
 * Without --submit: the check.  A tracefs instance of this program's own,
 * in the kernel's default text format (not learn's), records
 * io_uring_submit_req (io_uring_submit_sqe before 6.2) and
 * io_uring_register while `IOUR_RESTRICT learn -o DIR/allops.json --
 * learn_allops --submit` runs.  The request and register opcodes that the
 * trace shows for comm "iour-allops-sub" must equal, exactly, the sets the
 * learned policy allows (its groups expanded with the library's table).
 * Requests the kernel refuses before the tracepoint (a preparation error)
 * are in neither set, and are listed.  Last line "N passed, M failed" (",
 * 1 skipped" when it cannot run: not root, no tracefs, learn cannot
 * trace); exit 0 unless a check failed.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <liburing.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "iouring_restrict/names.h"
#include "iouring_restrict/policyfile.h"
#include "iouring_restrict/probe.h"

#define COMM "iour-allops-sub"
#define NOPS 256

static int passed, failed;

static void ok(const char *what)
{
	passed++;
	printf("learn_allops: ok   %s\n", what);
}

static void bad(const char *what)
{
	failed++;
	printf("learn_allops: FAIL %s\n", what);
}

/* ---- --submit ------------------------------------------------------ */

struct futex_wv { /* struct futex_waitv */
	uint64_t val, uaddr;
	uint32_t flags, reserved;
};

static int submit_all(void)
{
	static char buf[4096] __attribute__((aligned(4096)));
	static char rbuf[4096], rbuf2[64], path[] = "iour-learn-x", path2[] = "iour-learn-y";
	static const char xname[] = "user.iour-learn", nopath[] = "/nonexistent-iour-learn";
	static uint32_t futex_word = 1;
	static struct futex_wv fwv;
	static struct __kernel_timespec ts = { 0, 1000000 };
	static struct epoll_event epev = { .events = EPOLLIN }, epout[1];
	static struct sockaddr_in sin;
	static struct msghdr msg, rmsg;
	static struct iovec iov, riov, fiov;
	static int fdarr[1] = { -1 }, pipefds[2];
	static uint64_t how[3]; /* struct open_how: flags, mode, resolve */
	struct iour_features ft = { .sz = sizeof(ft) };
	struct io_uring ring;
	struct io_uring_cqe *cqe;
	struct io_uring_params p;
	char tmpl[] = "/tmp/learn_allops.XXXXXX";
	int f, sv[2], pp[2], pp2[2], epfd, s3, s4, dupfd, files[2];
	unsigned op_last, reg_last;

	prctl(PR_SET_NAME, COMM);
	if (iour_probe(NULL, &ft) || !ft.op_last) {
		fprintf(stderr, "learn_allops: the probe gives no IORING_OP_LAST\n");
		return 2;
	}
	op_last = ft.op_last;
	reg_last = ft.reg_last;
	if (!reg_last) { /* the library's table for the running version */
		struct utsname u;
		unsigned maj = 0, min = 0;

		if (!uname(&u))
			sscanf(u.release, "%u.%u", &maj, &min);
		reg_last = (unsigned)iour_register_op_last(IOUR_KVER(maj, min));
	}
	f = mkstemp(tmpl);
	if (f < 0 || unlink(tmpl) || write(f, buf, 128) != 128 ||
	    socketpair(AF_UNIX, SOCK_STREAM, 0, sv) || pipe(pp) || pipe(pp2) ||
	    (epfd = epoll_create1(0)) < 0 || (s3 = socket(AF_INET, SOCK_STREAM, 0)) < 0 ||
	    (s4 = socket(AF_INET, SOCK_STREAM, 0)) < 0 || (dupfd = dup(f)) < 0) {
		perror("learn_allops: setup");
		return 2;
	}
	memset(&p, 0, sizeof(p));
	if (io_uring_queue_init_params(8, &ring, &p)) {
		fprintf(stderr, "learn_allops: cannot create a ring\n");
		return 2;
	}
	files[0] = f;
	files[1] = -1;
	iov = (struct iovec){ buf, 8 };
	riov = (struct iovec){ rbuf2, 8 };
	fiov = (struct iovec){ rbuf, 8 };
	if (io_uring_register_files(&ring, files, 2) ||
	    io_uring_register_buffers(&ring, &(struct iovec){ rbuf, sizeof(rbuf) }, 1)) {
		fprintf(stderr, "learn_allops: cannot register the file table or the buffer\n");
		return 2;
	}
	memcpy(buf, "hello", 5);
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	rmsg.msg_iov = &riov;
	rmsg.msg_iovlen = 1;
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fwv = (struct futex_wv){ .val = 0, .uaddr = (uintptr_t)&futex_word, .flags = 2 };

	for (unsigned op = 0; op < op_last && op < NOPS; op++) {
		struct io_uring_sqe *sqe;

		if (op == IOUR_OP_LINK_TIMEOUT) {
			/* only valid linked to a request: a NOP */
			sqe = io_uring_get_sqe(&ring);
			io_uring_prep_nop(sqe);
			sqe->flags |= IOSQE_IO_LINK;
		}
		sqe = io_uring_get_sqe(&ring);
		memset(sqe, 0, sizeof(*sqe));
		sqe->opcode = (uint8_t)op;
		sqe->user_data = op + 1;
		sqe->fd = f;
		switch (op) {
		case IOUR_OP_NOP:
		case IOUR_OP_POLL_REMOVE:
		case IOUR_OP_TIMEOUT_REMOVE:
		case IOUR_OP_ASYNC_CANCEL:
			sqe->fd = op == IOUR_OP_NOP ? 0 : -1;
			sqe->addr = 0xdead;
			if (op == IOUR_OP_NOP)
				sqe->addr = 0;
			break;
		case IOUR_OP_READV:
		case IOUR_OP_WRITEV:
			sqe->addr = (uintptr_t)&iov;
			sqe->len = 1;
			break;
		case IOUR_OP_READ_FIXED:
		case IOUR_OP_WRITE_FIXED:
			sqe->addr = (uintptr_t)rbuf;
			sqe->len = 8;
			break;
		case IOUR_OP_READV_FIXED:
		case IOUR_OP_WRITEV_FIXED:
			sqe->addr = (uintptr_t)&fiov;
			sqe->len = 1;
			break;
		case IOUR_OP_POLL_ADD:
			sqe->poll32_events = POLLIN;
			break;
		case IOUR_OP_SENDMSG:
		case IOUR_OP_SENDMSG_ZC:
			sqe->fd = sv[0];
			sqe->addr = (uintptr_t)&msg;
			sqe->len = 1;
			break;
		case IOUR_OP_RECVMSG:
			sqe->fd = sv[1];
			sqe->addr = (uintptr_t)&rmsg;
			sqe->len = 1;
			break;
		case IOUR_OP_TIMEOUT:
			sqe->fd = -1;
			sqe->addr = (uintptr_t)&ts;
			sqe->len = 1;
			break;
		case IOUR_OP_LINK_TIMEOUT:
			sqe->fd = -1;
			sqe->addr = (uintptr_t)&ts;
			sqe->len = 1;
			break;
		case IOUR_OP_CONNECT:
			sqe->addr = (uintptr_t)&sin;
			sqe->off = sizeof(sin);
			break;
		case IOUR_OP_FALLOCATE:
			sqe->addr = 4096;
			break;
		case IOUR_OP_OPENAT:
		case IOUR_OP_UNLINKAT:
		case IOUR_OP_MKDIRAT:
			sqe->addr = (uintptr_t)path;
			break;
		case IOUR_OP_CLOSE:
			sqe->fd = dupfd;
			break;
		case IOUR_OP_FILES_UPDATE:
			sqe->fd = -1;
			sqe->addr = (uintptr_t)fdarr;
			sqe->len = 1;
			sqe->off = 1;
			break;
		case IOUR_OP_STATX:
			sqe->addr = (uintptr_t)path;
			sqe->off = (uintptr_t)rbuf2; /* addr2: the statx buffer */
			sqe->len = 0x7ff;
			break;
		case IOUR_OP_READ:
		case IOUR_OP_WRITE:
			sqe->addr = (uintptr_t)buf;
			sqe->len = 8;
			break;
		case IOUR_OP_MADVISE:
			sqe->fd = -1;
			sqe->addr = (uintptr_t)buf;
			sqe->len = sizeof(buf);
			break;
		case IOUR_OP_SEND:
		case IOUR_OP_SEND_ZC:
			sqe->fd = sv[0];
			sqe->addr = (uintptr_t)buf;
			sqe->len = 5;
			break;
		case IOUR_OP_RECV:
			sqe->fd = sv[1];
			sqe->addr = (uintptr_t)rbuf2;
			sqe->len = 5;
			break;
		case IOUR_OP_OPENAT2:
			sqe->addr = (uintptr_t)path;
			sqe->off = (uintptr_t)how;
			sqe->len = sizeof(how);
			break;
		case IOUR_OP_EPOLL_CTL:
			sqe->fd = epfd;
			sqe->off = (uint64_t)pp[0];
			sqe->len = EPOLL_CTL_ADD;
			sqe->addr = (uintptr_t)&epev;
			break;
		case IOUR_OP_SPLICE:
		case IOUR_OP_TEE:
			sqe->splice_fd_in = pp[0];
			sqe->fd = op == IOUR_OP_TEE ? pp2[1] : f;
			sqe->addr = op == IOUR_OP_TEE ? 0 : (uint64_t)-1; /* splice_off_in */
			sqe->len = 0;
			break;
		case IOUR_OP_PROVIDE_BUFFERS:
			sqe->fd = 1;
			sqe->addr = (uintptr_t)rbuf2;
			sqe->len = 64;
			sqe->buf_group = 7;
			break;
		case IOUR_OP_REMOVE_BUFFERS:
			sqe->fd = 1;
			sqe->buf_group = 7;
			break;
		case IOUR_OP_SHUTDOWN:
			sqe->fd = s3;
			sqe->len = SHUT_RDWR;
			break;
		case IOUR_OP_RENAMEAT:
		case IOUR_OP_LINKAT:
			sqe->addr = (uintptr_t)path;
			sqe->len = (uint32_t)f;
			sqe->off = (uintptr_t)path2;
			break;
		case IOUR_OP_SYMLINKAT:
			sqe->addr = (uintptr_t)path;
			sqe->off = (uintptr_t)path2;
			break;
		case IOUR_OP_MSG_RING:
			sqe->fd = ring.ring_fd;
			sqe->off = 999;
			break;
		case IOUR_OP_FSETXATTR:
		case IOUR_OP_FGETXATTR:
		case IOUR_OP_SETXATTR:
		case IOUR_OP_GETXATTR:
			sqe->addr = (uintptr_t)xname;
			sqe->off = (uintptr_t)rbuf2;
			sqe->len = op == IOUR_OP_FSETXATTR || op == IOUR_OP_SETXATTR ? 1 : 64;
			if (op == IOUR_OP_SETXATTR || op == IOUR_OP_GETXATTR)
				sqe->addr3 = (uintptr_t)nopath;
			break;
		case IOUR_OP_SOCKET:
			sqe->fd = AF_INET;
			sqe->off = SOCK_STREAM;
			break;
		case IOUR_OP_READ_MULTISHOT:
			sqe->fd = pp[0];
			sqe->flags = IOSQE_BUFFER_SELECT;
			sqe->buf_group = 7;
			break;
		case IOUR_OP_WAITID:
			sqe->len = 1;        /* P_PID */
			sqe->fd = 1;         /* not our child: ECHILD */
			sqe->file_index = 4; /* WEXITED */
			break;
		case IOUR_OP_FUTEX_WAIT:
		case IOUR_OP_FUTEX_WAKE:
			sqe->fd = 2; /* FUTEX2_SIZE_U32 */
			sqe->addr = (uintptr_t)&futex_word;
			sqe->off = op == IOUR_OP_FUTEX_WAIT ? 0 : 1;
			sqe->addr3 = 0xffffffffu;
			break;
		case IOUR_OP_FUTEX_WAITV:
			sqe->fd = 0;
			sqe->addr = (uintptr_t)&fwv;
			sqe->len = 1;
			break;
		case IOUR_OP_FIXED_FD_INSTALL:
			sqe->fd = 0;
			sqe->flags = IOSQE_FIXED_FILE;
			break;
		case IOUR_OP_FTRUNCATE:
			sqe->off = 64;
			break;
		case IOUR_OP_BIND:
			sqe->fd = s4;
			sqe->addr = (uintptr_t)&sin;
			sqe->off = sizeof(sin);
			break;
		case IOUR_OP_LISTEN:
			sqe->fd = s4;
			sqe->len = 1;
			break;
		case IOUR_OP_EPOLL_WAIT:
			sqe->fd = epfd;
			sqe->addr = (uintptr_t)epout;
			sqe->len = 1;
			break;
		case IOUR_OP_PIPE:
			sqe->fd = 0;
			sqe->addr = (uintptr_t)pipefds;
			break;
		default: /* FSYNC, SYNC_FILE_RANGE, ACCEPT, FADVISE, URING_CMD, ...: f */
			break;
		}
		io_uring_submit(&ring);
		/* what completes at once; the rest is cancelled at exit */
		while (!io_uring_peek_cqe(&ring, &cqe))
			io_uring_cqe_seen(&ring, cqe);
	}
	for (int i = 0; i < 20; i++) {
		struct __kernel_timespec t = { 0, 5000000 };

		if (io_uring_wait_cqe_timeout(&ring, &cqe, &t))
			break;
		io_uring_cqe_seen(&ring, cqe);
	}
	/* every register opcode on the ring: the kernel traces each call,
	 * failed ones too (most fail here: no arguments) */
	for (unsigned r = 0; r < reg_last; r++)
		syscall(__NR_io_uring_register, ring.ring_fd, r, NULL, 0);
	printf("learn_allops: submitted opcodes 0..%u, register opcodes 0..%u\n", op_last - 1,
	       reg_last - 1);
	return 0;
}

/* ---- the check ------------------------------------------------------ */

static char tracefs[64], inst[256];

static int wr(const char *rel, const char *val)
{
	char p[512];
	int fd, r = 0;

	snprintf(p, sizeof(p), "%s/%s", inst, rel);
	fd = open(p, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, val, strlen(val)) != (ssize_t)strlen(val))
		r = -errno;
	close(fd);
	return r;
}

/* The opcode after " op " or " opcode " in @ev: a number (5.10) or a
 * name (6.1+), whose number the library's table gives; -1 if none. */
static int event_op(const char *ev, bool reg)
{
	const char *k = strstr(ev, " opcode ");
	char name[48];
	size_t n;

	if (k)
		k += 8;
	else if ((k = strstr(ev, " op ")))
		k += 4;
	else
		return -1;
	if (*k >= '0' && *k <= '9')
		return atoi(k);
	n = strcspn(k, ", ");
	if (reg || !n || n >= sizeof(name))
		return -1;
	memcpy(name, k, n);
	name[n] = '\0';
	/* the kernel names EPOLL_CTL "EPOLL" in its trace */
	return strcmp(name, "EPOLL") ? iour_opcode_from_name(name) : IOUR_OP_EPOLL_CTL;
}

/* Reads the instance's trace into the two sets; the number of events of
 * COMM that could not be read (printed), or -1. */
static int read_trace(bool *ops, bool *regs)
{
	char p[512], line[1024];
	int unread = 0;
	FILE *f;

	snprintf(p, sizeof(p), "%s/trace", inst);
	f = fopen(p, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		const char *c = line, *ev;
		bool reg;
		int op;

		while (*c == ' ')
			c++;
		if (strncmp(c, COMM "-", sizeof(COMM)))
			continue;
		if ((ev = strstr(c, " io_uring_register: ")))
			reg = true;
		else if ((ev = strstr(c, " io_uring_submit_req: ")) ||
			 (ev = strstr(c, " io_uring_submit_sqe: ")))
			reg = false;
		else
			continue;
		op = event_op(ev, reg);
		if (op < 0 || op >= NOPS) {
			unread++;
			printf("learn_allops: cannot read the opcode of: %s", line);
			continue;
		}
		(reg ? regs : ops)[op] = true;
	}
	fclose(f);
	return unread;
}

/* The opcodes a JSON array "KEY": [...] of learn's policy names (learn
 * writes each array on one line); 0 or -1. */
static int policy_set(const char *text, const char *key, bool reg, bool *set)
{
	const char *s = strstr(text, key), *end;

	if (!s || !(s = strchr(s, '[')) || !(end = strchr(s, ']')))
		return -1;
	while ((s = strchr(s, '"')) && s < end) {
		const char *q = strchr(s + 1, '"');
		char name[64];
		int n;

		if (!q || q - s - 1 >= (long)sizeof(name))
			return -1;
		snprintf(name, sizeof(name), "%.*s", (int)(q - s - 1), s + 1);
		s = q + 1;
		if (name[0] == '@') {
			uint32_t g[NOPS];
			int idx = iour_group_find(name);

			n = idx < 0 ? -1 :
			    reg     ? iour_group_register_ops((size_t)idx, 0, g, NOPS) :
				      iour_group_opcodes((size_t)idx, 0, g, NOPS);
			if (n < 0)
				return -1;
			for (int i = 0; i < n; i++)
				set[g[i] % NOPS] = true;
			continue;
		}
		n = reg ? iour_register_op_from_name(name) : iour_opcode_from_name(name);
		if (n < 0 && name[0] >= '0' && name[0] <= '9')
			n = atoi(name);
		if (n < 0 || n >= NOPS)
			return -1;
		set[n] = true;
	}
	return 0;
}

/* "READ, WRITE" of the opcodes in @a and not in @b, in @out. */
static int diff(const bool *a, const bool *b, bool reg, char *out, size_t len)
{
	size_t off = 0;
	int n = 0;

	out[0] = '\0';
	for (unsigned op = 0; op < NOPS; op++) {
		const char *nm;

		if (!a[op] || (b && b[op]))
			continue;
		nm = reg ? iour_register_op_name(op) : iour_opcode_name(op);
		if (off < len)
			off += (size_t)snprintf(out + off, len - off, "%s%s%s", n ? ", " : "",
						nm ? nm : "", nm ? "" : "?");
		if (!nm && off < len)
			off += (size_t)snprintf(out + off, len - off, "%u", op);
		n++;
	}
	return n;
}

static int skip(const char *why)
{
	printf("learn_allops: SKIP: %s\n", why);
	printf("%d passed, %d failed, 1 skipped\n", passed, failed);
	return 0;
}

static int check(const char *tool, const char *dir)
{
	static bool tops[NOPS], tregs[NOPS], pops[NOPS], pregs[NOPS];
	static const char *const where[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
	struct iour_features ft = { .sz = sizeof(ft) };
	char self[512], out[512], err[512], msg[8192], ev[160], *text;
	bool mounted = false;
	int st, unread, n;
	long len;
	pid_t pid;
	FILE *f;

	if (geteuid())
		return skip("not root (learn and this check read tracefs)");
	if (iour_probe(NULL, &ft) || !ft.op_last)
		return skip("the probe gives no IORING_OP_LAST (no io_uring?)");
	n = (int)readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return skip("cannot read /proc/self/exe");
	self[n] = '\0';
	for (size_t i = 0; i < 2 && !tracefs[0]; i++) {
		snprintf(msg, sizeof(msg), "%s/instances", where[i]);
		if (!access(msg, F_OK))
			snprintf(tracefs, sizeof(tracefs), "%s", where[i]);
	}
	if (!tracefs[0]) {
		if (mount("nodev", where[0], "tracefs", 0, NULL))
			return skip("tracefs is not mounted and cannot be mounted");
		mounted = true;
		snprintf(tracefs, sizeof(tracefs), "%s", where[0]);
	}
	snprintf(ev, sizeof(ev), "%s/events/io_uring/io_uring_submit_req", tracefs);
	if (access(ev, F_OK))
		snprintf(ev, sizeof(ev), "io_uring_submit_sqe");
	else
		snprintf(ev, sizeof(ev), "io_uring_submit_req");
	snprintf(inst, sizeof(inst), "%s/instances/iour-allops-%d", tracefs, (int)getpid());
	if (mkdir(inst, 0700)) {
		snprintf(msg, sizeof(msg), "cannot create %s: %s", inst, strerror(errno));
		inst[0] = '\0';
		if (mounted)
			umount(tracefs);
		return skip(msg);
	}
	snprintf(msg, sizeof(msg), "events/io_uring/%s/enable", ev);
	if (wr("tracing_on", "0") || wr("buffer_size_kb", "4096") || wr(msg, "1") ||
	    wr("events/io_uring/io_uring_register/enable", "1") || wr("tracing_on", "1")) {
		bad("configuring the check's own tracefs instance");
		goto out;
	}
	snprintf(out, sizeof(out), "%s/allops.json", dir);
	snprintf(err, sizeof(err), "%s/allops.err", dir);
	pid = fork();
	if (pid == 0) {
		int fd = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		if (fd >= 0)
			dup2(fd, 2);
		execl(tool, tool, "learn", "-q", "-o", out, "--", self, "--submit", (char *)NULL);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid) {
		bad("running learn");
		goto out;
	}
	wr("tracing_on", "0");
	if (WIFEXITED(st) && WEXITSTATUS(st) == 4) {
		f = fopen(err, "re");
		msg[0] = '\0';
		if (f) {
			if (!fgets(msg, sizeof(msg), f))
				msg[0] = '\0';
			fclose(f);
		}
		msg[strcspn(msg, "\n")] = '\0';
		wr("events/io_uring/io_uring_register/enable", "0");
		rmdir(inst);
		if (mounted)
			umount(tracefs);
		return skip(msg[0] ? msg : "learn cannot trace here (exit 4)");
	}
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		snprintf(msg, sizeof(msg), "learn -- learn_allops --submit: exit %d (%s)",
			 WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st), err);
		bad(msg);
		goto out;
	}
	ok("learn -- learn_allops --submit: exit 0");
	unread = read_trace(tops, tregs);
	if (unread)
		bad("the check's own trace has events it cannot read");
	f = fopen(out, "re");
	text = NULL;
	if (f && !fseek(f, 0, SEEK_END) && (len = ftell(f)) > 0 && !fseek(f, 0, SEEK_SET) &&
	    (text = calloc(1, (size_t)len + 1)) && fread(text, 1, (size_t)len, f) == (size_t)len &&
	    !policy_set(text, "\"requestOps\"", false, pops) &&
	    !policy_set(text, "\"registerOps\"", true, pregs)) {
		char a[2048], b[2048];
		int na, nb;

		ok("the learned policy's requestOps and registerOps read");
		n = diff(tops, NULL, false, msg, sizeof(msg));
		printf("learn_allops: the kernel traced %d request opcodes of %u: %s\n", n,
		       ft.op_last, msg);
		na = diff(pops, tops, false, a, sizeof(a));
		nb = diff(tops, pops, false, b, sizeof(b));
		snprintf(msg, sizeof(msg),
			 "request opcodes: learned = traced (%d traced; learned but not traced: "
			 "%s; traced but not learned: %s)",
			 n, na ? a : "none", nb ? b : "none");
		(n && !na && !nb ? ok : bad)(msg);
		n = diff(tregs, NULL, true, msg, sizeof(msg));
		na = diff(pregs, tregs, true, a, sizeof(a));
		nb = diff(tregs, pregs, true, b, sizeof(b));
		snprintf(msg, sizeof(msg),
			 "register opcodes: learned = traced (%d traced; learned but not traced: "
			 "%s; traced but not learned: %s)",
			 n, na ? a : "none", nb ? b : "none");
		(n && !na && !nb ? ok : bad)(msg);
		/* the program reached the opcodes above SPLICE that learn once
		 * dropped (printed by tracefs as characters) */
		if (ft.op_last > IOUR_OP_SOCKET) {
			snprintf(msg, sizeof(msg), "SOCKET (45) traced and learned");
			(tops[IOUR_OP_SOCKET] && pops[IOUR_OP_SOCKET] ? ok : bad)(msg);
		}
		{
			bool sent[NOPS] = { false };

			for (unsigned op = 0; op < ft.op_last && op < NOPS; op++)
				sent[op] = true;
			if (diff(sent, tops, false, msg, sizeof(msg)))
				printf("learn_allops: refused before the tracepoint (preparation "
				       "failed), in neither set: %s\n",
				       msg);
		}
	} else {
		bad("reading the learned policy's requestOps and registerOps");
	}
	free(text);
	if (f)
		fclose(f);
out:
	if (inst[0]) {
		wr("tracing_on", "0");
		if (rmdir(inst))
			bad("removing the check's tracefs instance");
	}
	if (mounted)
		umount(tracefs);
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--submit"))
		return submit_all();
	setvbuf(stdout, NULL, _IOLBF, 0);
	return check(argc > 1 ? argv[1] : "/tools/iour-restrict", argc > 2 ? argv[2] : "/tmp");
}
