/* SPDX-License-Identifier: MIT */
/*
 * Live: three claims about rings, attacked on the running kernel through
 * the policy API (doc/security.md, sections 2 and 3).
 *
 * - A ring that requires IOSQE_FIXED_FILE is not sealed: MSG_RING with
 *   IORING_MSG_SEND_FD on another restricted ring plants a file it then
 *   reads; with MSG_RING denied on the sender it cannot.  The plan says so.
 * - Ring creation refuses IORING_SETUP_REGISTERED_FD_ONLY before any
 *   system call, leaving the caller's fd 0 (another disabled ring) alone.
 * - io_uring's own threads (SQPOLL, io-wq) are not counted as application
 *   threads: THREADS_REFUSE applies in a single-threaded process that
 *   holds an SQPOLL ring.
 */
#include <dirent.h>
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "live.h"
#include "ring_util.h"

#define OP_MSG_RING 40
#define MSG_SEND_FD 1U
#define NOTICE 0x5e5eULL

/* A ring plan for `rs` (freed here) applied to a disabled liburing ring
 * whose files `files` are registered first.  0 or a negative code. */
static int plan_ring(struct io_uring *ring, struct iour_ruleset *rs, const int *files, int nfiles,
		     int *notes)
{
	struct iour_policy *p = NULL;
	struct iour_plan *pl = NULL;
	const struct iour_report *exp;
	int rc, n;

	*notes = 0;
	rc = live_policy(&p, IOUR_POLICY_TARGET_RING, rs, NULL, IOUR_POLICY_DEFAULT_DENY);
	iour_ruleset__free(rs);
	if (!rc)
		rc = iour_policy__plan(p, NULL, &pl);
	if (!rc) {
		exp = iour_plan__report(pl);
		n = iour_report__decision_cnt(exp);
		for (int i = 0; i < n; i++) {
			struct iour_decision d = { .sz = sizeof(d) };

			if (iour_report__decision(exp, (size_t)i, &d) == 0 &&
			    d.reason == IOUR_REASON_FIXED_FILES)
				(*notes)++;
		}
		rc = ring_init_disabled(ring, 0);
	}
	if (!rc && nfiles)
		rc = io_uring_register_files(ring, files, (unsigned)nfiles);
	if (!rc)
		rc = iour_plan__apply_ring(pl, ring->ring_fd, NULL, NULL);
	iour_plan__free(pl);
	iour_policy__free(p);
	return rc;
}

static struct iour_ruleset *only(uint32_t op, uint32_t flags)
{
	struct iour_ruleset *rs = NULL;

	if (iour_ruleset__new(NULL, &rs) || iour_ruleset__deny_all_sqe_ops(rs) ||
	    iour_ruleset__allow_sqe_op(rs, op) || iour_ruleset__set_sqe_flags(rs, flags, flags) ||
	    iour_ruleset__deny_all_register_ops(rs)) {
		iour_ruleset__free(rs);
		return NULL;
	}
	return rs;
}

static int fixed_read(struct io_uring *ring, unsigned slot, char *c)
{
	struct io_uring_sqe *s = io_uring_get_sqe(ring);

	if (!s)
		return LIVE_NO_CQE;
	io_uring_prep_read(s, (int)slot, c, 1, 0);
	s->flags |= IOSQE_FIXED_FILE;
	return live_submit(ring, s);
}

static int send_fd(struct io_uring *b, int target, unsigned src, unsigned dst)
{
	struct io_uring_sqe *s = io_uring_get_sqe(b);

	if (!s)
		return LIVE_NO_CQE;
	memset(s, 0, sizeof(*s));
	s->opcode = OP_MSG_RING;
	s->fd = target;
	s->addr = MSG_SEND_FD;
	s->addr3 = src;
	s->file_index = dst + 1;
	s->off = NOTICE;
	return live_submit(b, s);
}

static int sealed_child(void *arg, struct child_msg *m)
{
	struct io_uring a, b, c;
	struct io_uring_cqe *cqe;
	int allowed[2], secret[2], a_files[2], notes, res;
	char ch = 0;

	(void)arg;
	CHK(m, pipe(allowed) == 0 && pipe(secret) == 0);
	CHK(m, write(allowed[1], "aa", 2) == 2 && write(secret[1], "SS", 2) == 2);
	a_files[0] = allowed[0];
	a_files[1] = -1;
	res = plan_ring(&a, only(OP_READ, IOSQE_FIXED_FILE), a_files, 2, &notes);
	CHKF(m, res == 0, "sealed ring: %s", iour_errname(res));
	CHKF(m, notes == 1, "the plan notes the open table: %d notes", notes);
	res = plan_ring(&b, only(OP_MSG_RING, 0), &secret[0], 1, &notes);
	CHKF(m, res == 0, "sender ring: %s", iour_errname(res));
	CHKF(m, notes == 1, "the plan notes MSG_RING: %d notes", notes);
	res = plan_ring(&c, only(OP_NOP, 0), &secret[0], 1, &notes);
	CHKF(m, res == 0 && notes == 0, "closed sender: %s, %d notes", iour_errname(res), notes);

	CHK(m, fixed_read(&a, 0, &ch) == 1 && ch == 'a');
	res = fixed_read(&a, 1, &ch);
	CHKF(m, res == -EBADF || res == -ENXIO, "empty slot: %d", res);
	res = send_fd(&c, a.ring_fd, 0, 1);
	CHKF(m, res == -EACCES, "MSG_RING denied on the sender: %d", res);
	res = fixed_read(&a, 1, &ch);
	CHKF(m, res == -EBADF || res == -ENXIO, "still empty: %d", res);

	res = send_fd(&b, a.ring_fd, 0, 1);
	CHKF(m, res == 0, "MSG_RING SEND_FD from a MSG_RING-only ring: %d", res);
	CHK(m, io_uring_wait_cqe(&a, &cqe) == 0 && cqe->user_data == NOTICE);
	io_uring_cqe_seen(&a, cqe);
	ch = 0;
	res = fixed_read(&a, 1, &ch);
	CHKF(m, res == 1 && ch == 'S', "the sealed ring reads the planted file: %d '%c'", res, ch);
	io_uring_queue_exit(&a);
	io_uring_queue_exit(&b);
	io_uring_queue_exit(&c);
	return 0;
}

Test(live_sealed, fixed_file_ring_gets_a_file_through_msg_ring)
{
	LIVE_REQUIRE(LIVE_RING);
	if (live_features()->op_last <= OP_MSG_RING) {
		fprintf(stderr, "live: skipped: the kernel lacks MSG_RING (opcode 40, 5.18)\n");
		cr_skip_test("skipped: the kernel lacks MSG_RING (opcode 40, 5.18)");
	}
	LIVE_CHILD(sealed_child, NULL);
	live_log("a ring requiring FIXED_FILE read a file planted by MSG_RING from a "
		 "MSG_RING-only ring; refused when the sender denies MSG_RING; the plans say so");
}

static int fd_only_child(void *arg, struct child_msg *m)
{
	struct io_uring_restriction nop = { .opcode = IORING_RESTRICTION_SQE_OP, .sqe_op = OP_NOP };
	struct io_uring_params dp, p;
	struct iour_ruleset *rs = only(OP_NOP, 0);
	struct iour_policy *pol = NULL;
	struct iour_plan *pl = NULL;
	void *sq, *cq;
	long d, r;
	int fds0, fd, rc;

	(void)arg;
	CHK(m, rs != NULL);
	CHK(m, live_policy(&pol, IOUR_POLICY_TARGET_RING, rs, NULL, IOUR_POLICY_DEFAULT_DENY) == 0);
	CHK(m, iour_policy__plan(pol, NULL, &pl) == 0);
	sq = mmap(NULL, 65536, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	cq = mmap(NULL, 65536, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHK(m, sq != MAP_FAILED && cq != MAP_FAILED);
	memset(&dp, 0, sizeof(dp));
	dp.flags = IORING_SETUP_R_DISABLED;
	d = syscall(__NR_io_uring_setup, 4, &dp);
	CHK(m, d >= 0 && dup2((int)d, 0) == 0);
	close((int)d);
	fds0 = count_fds();
	for (int via = 0; via < 2; via++) {
		memset(&p, 0, sizeof(p));
		p.flags = (1U << 15) | (1U << 14);        /* REGISTERED_FD_ONLY | NO_MMAP */
		p.sq_off.resv2 = (uint64_t)(uintptr_t)sq; /* user_addr */
		p.cq_off.resv2 = (uint64_t)(uintptr_t)cq;
		fd = 7;
		rc = via ? iour_plan__create_ring(pl, 8, &p, NULL, &fd, NULL) :
			   iour_ring_create(8, &p, rs, NULL, &fd);
		CHKF(m, rc == -EINVAL, "%s: %s", via ? "plan" : "ring", iour_errname(rc));
		CHK(m, count_fds() == fds0);
	}
	r = syscall(__NR_io_uring_enter, 0, 0, 0, 0, NULL, 0);
	CHKF(m, r < 0 && errno == EBADFD, "fd 0 still disabled: %ld", r);
	r = syscall(__NR_io_uring_register, 0, IORING_REGISTER_RESTRICTIONS, &nop, 1);
	CHKF(m, r == 0, "fd 0 still unrestricted: %ld errno %d", r, errno);
	iour_plan__free(pl);
	iour_policy__free(pol);
	iour_ruleset__free(rs);
	return 0;
}

Test(live_sealed, registered_fd_only_is_refused_before_any_syscall)
{
	LIVE_REQUIRE(LIVE_RING);
	LIVE_CHILD(fd_only_child, NULL);
	live_log("REGISTERED_FD_ONLY refused (-EINVAL) by both creators; fd 0, another disabled "
		 "ring, untouched");
}

static int workers_child(void *arg, struct child_msg *m)
{
	struct io_uring_params prm;
	struct io_uring ring;
	struct io_uring_sqe *sqe;
	struct iour_ruleset *rs = only(OP_NOP, 0);
	struct iour_policy *pol = NULL;
	struct iour_plan *pl = NULL;
	struct iour_report *rep = NULL;
	int p[2], tasks = 0, rc;
	char b;

	(void)arg;
	CHK(m, rs && pipe(p) == 0);
	CHK(m, live_policy(&pol, IOUR_POLICY_TARGET_TASK, rs, NULL, IOUR_POLICY_DEFAULT_DENY) == 0);
	CHK(m,
	    iour_policy__set_attr(pol, IOUR_POLICY_ATTR_THREADS, IOUR_POLICY_THREADS_REFUSE) == 0);
	CHK(m, iour_policy__plan(pol, NULL, &pl) == 0);
	memset(&prm, 0, sizeof(prm));
	prm.flags = IORING_SETUP_SQPOLL;
	prm.sq_thread_idle = 10000;
	CHK(m, io_uring_queue_init_params(4, &ring, &prm) == 0);
	sqe = io_uring_get_sqe(&ring);
	CHK(m, sqe != NULL);
	io_uring_prep_read(sqe, p[0], &b, 1, 0);
	sqe->flags |= IOSQE_ASYNC;
	CHK(m, io_uring_submit(&ring) == 1);
	for (int i = 0; i < 2000 && tasks < 3; i++) {
		DIR *d = opendir("/proc/self/task");
		struct dirent *e;

		tasks = 0;
		while (d && (e = readdir(d)))
			tasks += e->d_name[0] != '.';
		if (d)
			closedir(d);
		if (tasks < 3)
			usleep(1000);
	}
	CHKF(m, tasks >= 3, "SQPOLL thread and io-wq worker: %d tasks", tasks);
	CHKF(m, iour_task_thread_count() == 1, "%d threads", iour_task_thread_count());
	rc = iour_plan__apply_task(pl, NULL, &rep);
	CHKF(m, rc != -EBUSY && iour_report__threads(rep) == 1, "%s, %d threads", iour_errname(rc),
	     iour_report__threads(rep));
	iour_report__free(rep);
	CHK(m, write(p[1], "x", 1) == 1);
	io_uring_queue_exit(&ring);
	iour_plan__free(pl);
	iour_policy__free(pol);
	iour_ruleset__free(rs);
	return 0;
}

Test(live_sealed, io_uring_threads_are_not_application_threads)
{
	LIVE_REQUIRE(LIVE_RING);
	LIVE_CHILD(workers_child, NULL);
	live_log("with an SQPOLL thread and an io-wq worker: 1 thread counted, THREADS_REFUSE "
		 "applied");
}
