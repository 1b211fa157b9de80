/* SPDX-License-Identifier: MIT */
/*
 * The library's task policy and rings that liburing makes, with liburing's
 * own helpers for the same kernel features, in every kernel guest
 * (scripts/guest-payloads/50-liburing.sh builds it against Debian sid's
 * liburing, which has io_uring_register_restrictions() and, from 2.14 on,
 * io_uring_register_bpf_filter() and io_uring_register_bpf_filter_task();
 * liburing.a is linked in, nothing is installed).
 *
 * Each case runs in a forked child, since a task policy cannot be undone.
 * On every kernel (5.10+, R_DISABLED):
 *   ring:     a ring liburing creates disabled, restricted with
 *             io_uring_register_restrictions() to NOP, then
 *             enabled: NOP runs, READ gets -EACCES.
 * On Linux 7.0+ (feature level 4 and up; doc/kernel.md 3.5):
 *   inherit:  under the library's task policy (NOP and READ only), a ring
 *             made by io_uring_queue_init() is restricted: NOP and READ
 *             run, WRITE gets -EACCES; a ring-level set registered with
 *             liburing on a disabled ring gets -EBUSY (task and ring
 *             classic sets do not combine) and that ring keeps the task's.
 *   both:     under the library's filter-only task policy (SOCKET AF_UNIX
 *             denied), liburing's ring-level set (NOP, SOCKET) on a
 *             disabled ring: both apply: READ -EACCES (the ring's set),
 *             AF_UNIX -EACCES (the task's filter), AF_INET a socket.
 *   stack:    the library's task filter (AF_UNIX denied), then liburing's
 *             task filter (io_uring_register_bpf_filter_task: SOCK_DGRAM
 *             denied), then a ring and liburing's ring filter
 *             (io_uring_register_bpf_filter: AF_INET6 denied): each of the
 *             three refuses its request with -EACCES, AF_INET SOCK_STREAM
 *             still gets a socket.
 * Before 7.0:
 *   fallback: the library's task policy falls back to the seccomp companion:
 *             partially enforced, io_uring_queue_init() -> -ENOSYS;
 *             liburing's io_uring_register_bpf_filter_task() is refused by
 *             the kernel (no task filters).
 * Last line: "N passed, M failed".
 */
#include <errno.h>
#include <liburing.h>
#include <linux/filter.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <iouring_restrict/iouring_restrict.h>

#if !defined(IO_URING_VERSION_MAJOR) || (IO_URING_VERSION_MAJOR == 2 && IO_URING_VERSION_MINOR < 14)
#error "needs liburing 2.14 or newer (io_uring_register_bpf_filter_task)"
#endif

static int *counts; /* [0] passed, [1] failed; shared with the children */

static void check(int cond, const char *what, int got)
{
	counts[cond ? 0 : 1]++;
	printf("liburing_coexist: %s %s (got %s)\n", cond ? "ok  " : "FAIL", what,
	       got >= 0 ? "a result >= 0" : iour_errname(got));
}

/* One request on @ring: the completion's result (an fd is closed). */
static int one(struct io_uring *ring, int close_fd)
{
	struct io_uring_cqe *cqe;
	int res;

	if (io_uring_submit(ring) != 1 || io_uring_wait_cqe(ring, &cqe))
		return -EPROTO;
	res = cqe->res;
	io_uring_cqe_seen(ring, cqe);
	if (close_fd && res >= 0)
		close(res);
	return res;
}

static int req_nop(struct io_uring *r)
{
	io_uring_prep_nop(io_uring_get_sqe(r));
	return one(r, 0);
}

static int req_read(struct io_uring *r)
{
	static char buf[1];
	int p[2], res;

	if (pipe(p) || write(p[1], "x", 1) != 1)
		return -EPROTO;
	io_uring_prep_read(io_uring_get_sqe(r), p[0], buf, 1, 0);
	res = one(r, 0);
	close(p[0]);
	close(p[1]);
	return res;
}

static int req_write(struct io_uring *r)
{
	int p[2], res;

	if (pipe(p))
		return -EPROTO;
	io_uring_prep_write(io_uring_get_sqe(r), p[1], "x", 1, 0);
	res = one(r, 0);
	close(p[0]);
	close(p[1]);
	return res;
}

static int req_socket(struct io_uring *r, int family, int type)
{
	io_uring_prep_socket(io_uring_get_sqe(r), family, type, 0, 0);
	return one(r, 1);
}

/* The library's task policy from policy-file text; the report's status. */
static int task_policy(const char *json, int *mech)
{
	struct iour_policy *pol = NULL;
	struct iour_plan *plan = NULL;
	struct iour_report *rep = NULL;
	int r, status = -1;

	r = iour_policy__load_json(json, strlen(json), NULL, &pol, NULL);
	if (!r)
		r = iour_policy__plan(pol, NULL, &plan);
	if (!r)
		r = iour_plan__apply_task(plan, NULL, &rep);
	if (!r) {
		status = iour_report__status(rep);
		*mech = iour_report__mechanism(rep);
	}
	check(r == 0, "the library's task policy applied", r);
	iour_report__free(rep);
	iour_plan__free(plan);
	iour_policy__free(pol);
	return status;
}

/* A disabled ring restricted by liburing to NOP (and SOCKET if @sock, an
 * opcode 5.10 does not know), then enabled. */
static int liburing_ring_set(struct io_uring *ring, int sock)
{
	struct io_uring_restriction res[2];
	int r;

	memset(res, 0, sizeof(res));
	res[0].opcode = IORING_RESTRICTION_SQE_OP;
	res[0].sqe_op = IORING_OP_NOP;
	res[1].opcode = IORING_RESTRICTION_SQE_OP;
	res[1].sqe_op = IORING_OP_SOCKET;
	r = io_uring_queue_init(8, ring, IORING_SETUP_R_DISABLED);
	if (r)
		return r;
	r = io_uring_register_restrictions(ring, res, sock ? 2 : 1);
	if (r)
		return r;
	return io_uring_enable_rings(ring);
}

/* A cBPF filter for SOCKET: deny when the 32-bit word at @off equals @val. */
static int liburing_filter(struct io_uring *ring, unsigned int off, unsigned int val)
{
	struct sock_filter prog[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, off),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, val, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, 1), /* allow */
		BPF_STMT(BPF_RET | BPF_K, 0), /* deny */
	};
	struct io_uring_bpf b;

	memset(&b, 0, sizeof(b));
	b.cmd_type = IO_URING_BPF_CMD_FILTER;
	b.filter.opcode = IORING_OP_SOCKET;
	b.filter.filter_len = sizeof(prog) / sizeof(prog[0]);
	b.filter.filter_ptr = (unsigned long)prog;
	return ring ? io_uring_register_bpf_filter(ring, &b) :
		      io_uring_register_bpf_filter_task(&b);
}

#define SOCK_FAMILY_OFF offsetof(struct io_uring_bpf_ctx, socket.family)
#define SOCK_TYPE_OFF offsetof(struct io_uring_bpf_ctx, socket.type)

static void case_ring(void)
{
	struct io_uring ring;
	int r = liburing_ring_set(&ring, 0);

	check(r == 0, "ring: liburing registers NOP alone on a disabled ring", r);
	if (r)
		return;
	r = req_nop(&ring);
	check(r == 0, "ring: NOP runs", r);
	r = req_read(&ring);
	check(r == -EACCES, "ring: READ refused by liburing's ring set", r);
	io_uring_queue_exit(&ring);
}

/* registerOps lists REGISTER_RESTRICTIONS: under defaultAction deny a file
 * without registerOps denies every register opcode (doc/policy-files.md),
 * and the -EBUSY check below is about the kernel's one-set rule, not the
 * task's register gate (case_inherit checks that gate too). */
static const char nop_read[] = "{ \"defaultAction\": \"deny\", \"registerOps\": "
			       "[\"register_restrictions\", \"register_enable_rings\"], "
			       "\"sqeFlags\": {}, \"entries\": [ "
			       "{ \"names\": [\"nop\", \"read\"], \"action\": \"allow\" } ] }";
static const char nop_read_noreg[] = "{ \"defaultAction\": \"deny\", \"entries\": [ "
				     "{ \"names\": [\"nop\", \"read\"], \"action\": "
				     "\"allow\" } ] }";
static const char no_unix[] =
	"{ \"defaultAction\": \"allow\", \"entries\": [ { \"names\": [\"socket\"], "
	"\"action\": \"deny\", \"args\": [ { \"field\": \"socket.family\", \"op\": \"==\", "
	"\"value\": \"AF_UNIX\" } ] } ] }";

static void case_inherit(void)
{
	struct io_uring ring, dis;
	struct io_uring_restriction res = { .opcode = IORING_RESTRICTION_SQE_OP,
					    .sqe_op = IORING_OP_WRITE };
	int mech = 0, st = task_policy(nop_read, &mech), r;

	check(st == IOUR_STATUS_FULLY && (mech & IOUR_MECH_TASK),
	      "inherit: fully enforced by task restrictions", st);
	r = io_uring_queue_init(8, &ring, 0);
	check(r == 0, "inherit: io_uring_queue_init under the task policy", r);
	if (r)
		return;
	check(req_nop(&ring) == 0, "inherit: NOP runs on liburing's ring", 0);
	r = req_read(&ring);
	check(r == 1, "inherit: READ runs on liburing's ring", r);
	r = req_write(&ring);
	check(r == -EACCES, "inherit: WRITE refused on liburing's ring (inherited)", r);
	io_uring_queue_exit(&ring);
	r = io_uring_queue_init(8, &dis, IORING_SETUP_R_DISABLED);
	check(r == 0, "inherit: a disabled ring under the task policy", r);
	if (r)
		return;
	r = io_uring_register_restrictions(&dis, &res, 1);
	check(r == -EBUSY, "inherit: liburing's ring set on top of the task's gets -EBUSY", r);
	r = io_uring_enable_rings(&dis);
	check(r == 0, "inherit: the ring enabled", r);
	r = req_write(&dis);
	check(r == -EACCES, "inherit: that ring still refuses WRITE (the task's set)", r);
	io_uring_queue_exit(&dis);
}

/* defaultAction deny without registerOps: the task's set denies every
 * register opcode, so liburing's io_uring_register_restrictions() on a
 * disabled ring is refused by the task's register gate (-EACCES), and a
 * buffer registration too (before 1.1.0 both were allowed). */
static void case_inherit_noreg(void)
{
	struct io_uring dis;
	struct io_uring_restriction res = { .opcode = IORING_RESTRICTION_SQE_OP,
					    .sqe_op = IORING_OP_WRITE };
	static char buf[4096];
	struct iovec iov = { buf, sizeof(buf) };
	int mech = 0, st = task_policy(nop_read_noreg, &mech), r;

	check(st == IOUR_STATUS_FULLY && (mech & IOUR_MECH_TASK),
	      "noreg: fully enforced by task restrictions", st);
	r = io_uring_queue_init(8, &dis, IORING_SETUP_R_DISABLED);
	check(r == 0, "noreg: a disabled ring under the task policy", r);
	if (r)
		return;
	r = io_uring_register_restrictions(&dis, &res, 1);
	check(r == -EACCES, "noreg: REGISTER_RESTRICTIONS denied by the task's register gate", r);
	r = io_uring_register_buffers(&dis, &iov, 1);
	check(r == -EACCES, "noreg: REGISTER_BUFFERS denied by the task's register gate", r);
	io_uring_queue_exit(&dis);
}

static void case_both(void)
{
	struct io_uring ring;
	int mech = 0, st = task_policy(no_unix, &mech), r;

	check(st == IOUR_STATUS_FULLY && (mech & IOUR_MECH_TASK),
	      "both: filter-only task policy fully enforced", st);
	r = liburing_ring_set(&ring, 1);
	check(r == 0, "both: liburing's ring set (NOP, SOCKET) under the task filter", r);
	if (r)
		return;
	check(req_nop(&ring) == 0, "both: NOP runs", 0);
	r = req_read(&ring);
	check(r == -EACCES, "both: READ refused (liburing's ring set)", r);
	r = req_socket(&ring, AF_UNIX, SOCK_STREAM);
	check(r == -EACCES, "both: SOCKET AF_UNIX refused (the library's task filter)", r);
	r = req_socket(&ring, AF_INET, SOCK_STREAM);
	check(r >= 0, "both: SOCKET AF_INET allowed by both", r);
	io_uring_queue_exit(&ring);
}

static void case_stack(void)
{
	struct io_uring ring;
	int mech = 0, st = task_policy(no_unix, &mech), r;

	check(st == IOUR_STATUS_FULLY, "stack: the library's task filter", st);
	r = liburing_filter(NULL, SOCK_TYPE_OFF, SOCK_DGRAM);
	check(r == 0, "stack: liburing's task filter (SOCK_DGRAM denied) added", r);
	r = io_uring_queue_init(8, &ring, 0);
	check(r == 0, "stack: io_uring_queue_init", r);
	if (r)
		return;
	r = liburing_filter(&ring, SOCK_FAMILY_OFF, AF_INET6);
	check(r == 0, "stack: liburing's ring filter (AF_INET6 denied) added", r);
	r = req_socket(&ring, AF_UNIX, SOCK_STREAM);
	check(r == -EACCES, "stack: AF_UNIX refused (the library's task filter)", r);
	r = req_socket(&ring, AF_INET, SOCK_DGRAM);
	check(r == -EACCES, "stack: SOCK_DGRAM refused (liburing's task filter)", r);
	r = req_socket(&ring, AF_INET6, SOCK_STREAM);
	check(r == -EACCES, "stack: AF_INET6 refused (liburing's ring filter)", r);
	r = req_socket(&ring, AF_INET, SOCK_STREAM);
	check(r >= 0, "stack: AF_INET SOCK_STREAM allowed by all three", r);
	io_uring_queue_exit(&ring);
}

static void case_fallback(void)
{
	struct io_uring ring;
	int mech = 0, st = task_policy(nop_read, &mech), r;

	check(st == IOUR_STATUS_PARTIALLY && mech == (int)IOUR_MECH_COMPANION,
	      "fallback: partially enforced by the seccomp companion alone", st);
	r = io_uring_queue_init(8, &ring, 0);
	check(r == -ENOSYS, "fallback: io_uring_queue_init gets -ENOSYS (companion)", r);
	if (!r)
		io_uring_queue_exit(&ring);
}

static void case_no_task_filter(void)
{
	int r = liburing_filter(NULL, SOCK_TYPE_OFF, SOCK_DGRAM);

	check(r < 0, "before 7.0: liburing's io_uring_register_bpf_filter_task refused", r);
}

static void in_child(void (*fn)(void), const char *name)
{
	int st;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		fn();
		fflush(stdout);
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st)) {
		counts[1]++;
		printf("liburing_coexist: FAIL case %s did not finish (status %d)\n", name, st);
	}
}

int main(void)
{
	int level;

	setvbuf(stdout, NULL, _IOLBF, 0);
	counts = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (counts == MAP_FAILED)
		return 2;
	level = iour_feature_level();
	printf("liburing_coexist: liburing %d.%d, feature level %d\n", IO_URING_VERSION_MAJOR,
	       IO_URING_VERSION_MINOR, level);
	in_child(case_ring, "ring");
	if (level >= IOUR_LEVEL_TASK_BPF) {
		in_child(case_inherit, "inherit");
		in_child(case_inherit_noreg, "inherit_noreg");
		in_child(case_both, "both");
		in_child(case_stack, "stack");
	} else {
		in_child(case_fallback, "fallback");
		in_child(case_no_task_filter, "no_task_filter");
	}
	printf("%d passed, %d failed\n", counts[0], counts[1]);
	return counts[1] ? 1 : 0;
}
