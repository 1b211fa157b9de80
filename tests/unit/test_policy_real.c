/* SPDX-License-Identifier: MIT */
/*
 * Policies on the real kernel of the machine (6.18 here): plan, dry run,
 * application to a ring created disabled (by liburing and by the library),
 * the report, and proof by submissions through liburing.  Also the
 * fallback paths a kernel without task restrictions and without argument
 * filters takes, for each compatibility level.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <liburing.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "iouring_restrict/iouring_restrict.h"
#include "plan/planner.h"
#include "uring_avail.h"

#define OP_NOP 0
#define OP_READ 22
#define OP_WRITE 23
#define OP_SOCKET 45

static struct iour_plan *plan_or_die(const struct iour_policy *p)
{
	struct iour_plan *pl = NULL;

	cr_assert_eq(iour_policy__plan(p, NULL, &pl), 0);
	cr_assert_not_null(pl);
	return pl;
}

static char *describe(const struct iour_plan *pl)
{
	size_t len = 0;
	char *b;

	cr_assert_eq(iour_plan__describe(pl, NULL, &len), 0);
	b = malloc(len);
	cr_assert_not_null(b);
	cr_assert_eq(iour_plan__describe(pl, b, &len), 0);
	cr_assert_eq(strlen(b) + 1, len);
	return b;
}

/* The running kernel's level, as the planner sees it. */
static uint32_t kernel_level(void)
{
	struct iour__kernel t;

	cr_assert_eq(iour__kernel_probe(&t), 0);
	return t.level;
}

/* NOP, READ and SOCKET-only-AF_INET; everything else denied. */
static struct iour_policy *sample_policy(uint32_t target)
{
	static const struct iour_insn inet_only[] = {
		{ 0x20, 0, 0, 16 }, /* ld socket.family */
		{ 0x15, 0, 1, 2 },  /* jeq AF_INET */
		{ 0x06, 0, 0, 1 },
		{ 0x06, 0, 0, 0 },
	};
	struct iour_policy *p;
	struct iour_ruleset *rs;

	cr_assert_eq(iour_ruleset__new(NULL, &rs), 0);
	cr_assert_eq(iour_ruleset__allow_sqe_op(rs, OP_NOP), 0);
	cr_assert_eq(iour_ruleset__allow_sqe_op(rs, OP_READ), 0);
	cr_assert_eq(iour_ruleset__allow_sqe_op(rs, OP_SOCKET), 0);
	cr_assert_eq(iour_ruleset__set_sqe_flags(rs, 0, 0), 0);
	cr_assert_eq(iour_policy__new(NULL, &p), 0);
	cr_assert_eq(iour_policy__set_ruleset(p, rs), 0);
	iour_ruleset__free(rs);
	cr_assert_eq(iour_policy__set_prog(p, OP_SOCKET, inet_only, 4, 12), 0);
	cr_assert_eq(iour_policy__set_attr(p, IOUR_POLICY_ATTR_TARGET, target), 0);
	return p;
}

/* Map a ring the library created.  liburing 2.3's io_uring_queue_mmap()
 * leaves the SQ index array to the caller (io_uring_queue_init_params()
 * fills it), so fill it here. */
static void map_ring(int fd, struct io_uring_params *params, struct io_uring *ring)
{
	unsigned i;

	cr_assert_eq(io_uring_queue_mmap(fd, params, ring), 0);
	for (i = 0; i < *ring->sq.kring_entries; i++)
		ring->sq.array[i] = i;
}

/* Submit one SQE and return its CQE result. */
static int submit1(struct io_uring *ring, uint8_t opcode, int fd, void *buf, unsigned len)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
	struct io_uring_cqe *cqe;
	int res;

	cr_assert_not_null(sqe);
	io_uring_prep_rw(opcode, sqe, fd, buf, len, 0);
	sqe->user_data = 0x1234;
	cr_assert_eq(io_uring_submit(ring), 1);
	cr_assert_eq(io_uring_wait_cqe(ring, &cqe), 0);
	cr_assert_eq(cqe->user_data, 0x1234);
	res = cqe->res;
	io_uring_cqe_seen(ring, cqe);
	return res;
}

/* NOP and READ work, WRITE and SOCKET are denied, register ops too. */
static void check_enforced(struct io_uring *ring)
{
	int pfd[2];
	char buf[8] = "abc";

	cr_assert_eq(pipe(pfd), 0);
	cr_assert_eq(write(pfd[1], "xyz", 3), 3);
	cr_expect_eq(submit1(ring, OP_NOP, -1, NULL, 0), 0, "NOP allowed");
	{ int r_ = submit1(ring, OP_READ, pfd[0], buf, 3); cr_expect_eq(r_, 3, "READ allowed: %d", r_); }
	cr_expect_eq(submit1(ring, OP_WRITE, pfd[1], buf, 3), -EACCES, "WRITE denied");
	cr_expect_eq(submit1(ring, OP_SOCKET, 2, NULL, 0), -EACCES, "SOCKET denied (closed)");
	/* The coupled gate of this kernel closes register ops not listed:
	 * the classic part restricted nothing there, so all are listed. */
	cr_expect_neq(io_uring_register_files(ring, &pfd[0], 1), -EACCES);
	close(pfd[0]);
	close(pfd[1]);
}

Test(policy_real, ring_plan_apply_liburing_disabled_ring)
{
	UNIT_REQUIRE_URING();
	struct iour_policy *p = sample_policy(IOUR_POLICY_TARGET_RING);
	struct iour_plan *pl = plan_or_die(p);
	const struct iour_report *exp = iour_plan__report(pl);
	struct iour_report *rep = NULL;
	struct io_uring_params params;
	struct io_uring ring;
	char *text = describe(pl);
	uint32_t done, total;

	if (kernel_level() >= 4)
		cr_skip_test("kernel has argument filters; this test covers older kernels");
	fprintf(stderr, "dry run on the real kernel:\n%s", text);
	cr_expect(strstr(text, "IORING_REGISTER_RESTRICTIONS") != NULL);
	cr_expect(strstr(text, "SOCKET: argument rules cannot be enforced") != NULL);
	free(text);
	cr_expect_eq(iour_report__status(exp), IOUR_STATUS_PARTIALLY);
	cr_expect_eq(iour_report__mechanism(exp), IOUR_MECH_RING_DISABLED);
	cr_expect_eq(iour_report__flags(exp), IOUR_REPORT_TIGHTENED | IOUR_REPORT_PLANNED);
	cr_expect_eq(iour_plan__step_cnt(pl), 2);

	memset(&params, 0, sizeof(params));
	params.flags = IORING_SETUP_R_DISABLED;
	cr_assert_eq(io_uring_queue_init_params(8, &ring, &params), 0);
	cr_assert_eq(iour_plan__apply_ring(pl, ring.ring_fd, NULL, &rep), 0);
	cr_assert_not_null(rep);
	cr_expect_eq(iour_report__status(rep), IOUR_STATUS_PARTIALLY);
	cr_expect_eq(iour_report__mechanism(rep), IOUR_MECH_RING_DISABLED);
	cr_expect_eq(iour_report__flags(rep), IOUR_REPORT_TIGHTENED);
	cr_assert_eq(iour_report__steps(rep, &done, &total), 0);
	cr_expect_eq(done, 2);
	cr_expect_eq(total, 2);
	check_enforced(&ring);
	/* Applying again: the ring is enabled now -> nothing applied. */
	iour_report__free(rep);
	cr_expect_eq(iour_plan__apply_ring(pl, ring.ring_fd, NULL, &rep), -EBADFD);
	cr_expect_eq(iour_report__status(rep), IOUR_STATUS_NOT_ENFORCED);
	cr_assert_eq(iour_report__steps(rep, &done, &total), 0);
	cr_expect_eq(done, 0);
	iour_report__free(rep);
	io_uring_queue_exit(&ring);
	iour_plan__free(pl);
	iour_policy__free(p);
}

Test(policy_real, ring_plan_create_ring)
{
	UNIT_REQUIRE_URING();
	struct iour_policy *p = sample_policy(IOUR_POLICY_TARGET_RING);
	struct iour_plan *pl = plan_or_die(p);
	struct iour_report *rep = NULL;
	struct io_uring_params params;
	struct io_uring ring;
	int fd = -1;

	if (kernel_level() >= 4)
		cr_skip_test("kernel has argument filters; this test covers older kernels");
	memset(&params, 0, sizeof(params));
	cr_assert_eq(iour_plan__create_ring(pl, 8, &params, NULL, &fd, &rep), 0);
	cr_assert_geq(fd, 0);
	cr_expect_eq(params.flags, 0U); /* the caller's flags, given back */
	cr_expect_eq(iour_report__status(rep), IOUR_STATUS_PARTIALLY);
	map_ring(fd, &params, &ring);
	check_enforced(&ring);
	io_uring_queue_exit(&ring);
	iour_report__free(rep);
	iour_plan__free(pl);
	iour_policy__free(p);
}

/* A classic-only policy is fully enforced on a ring by any 5.10+ kernel. */
Test(policy_real, ring_classic_only_fully)
{
	UNIT_REQUIRE_URING();
	struct iour_policy *p = sample_policy(IOUR_POLICY_TARGET_RING);
	struct iour_plan *pl;
	struct iour_report *rep = NULL;
	struct io_uring_params params;
	struct io_uring ring;
	int fd = -1;

	struct iour_ruleset *rs;

	/* Drop SOCKET entirely: NOP and READ only. */
	cr_assert_eq(iour_policy__set_prog(p, OP_SOCKET, NULL, 0, 0), 0);
	cr_assert_eq(iour_ruleset__new(NULL, &rs), 0);
	cr_assert_eq(iour_ruleset__allow_sqe_op(rs, OP_NOP), 0);
	cr_assert_eq(iour_ruleset__allow_sqe_op(rs, OP_READ), 0);
	cr_assert_eq(iour_ruleset__set_sqe_flags(rs, 0, 0), 0);
	cr_assert_eq(iour_policy__set_ruleset(p, rs), 0);
	iour_ruleset__free(rs);
	pl = plan_or_die(p);
	cr_expect_eq(iour_report__status(iour_plan__report(pl)), IOUR_STATUS_FULLY);
	/* Nothing but the effect notes (doc/security.md 2.1). */
	for (int i = 0; i < iour_report__decision_cnt(iour_plan__report(pl)); i++) {
		struct iour_decision d = { .sz = sizeof(d) };

		cr_assert_eq(iour_report__decision(iour_plan__report(pl), (size_t)i, &d), 0);
		cr_expect(d.kind == IOUR_DECISION_NOTE && d.reason >= IOUR_REASON_EFFECT_CLOSED &&
				  d.reason <= IOUR_REASON_EFFECT_OPEN,
			  "decision %d: %s", i, d.text);
	}
	memset(&params, 0, sizeof(params));
	cr_assert_eq(iour_plan__create_ring(pl, 8, &params, NULL, &fd, &rep), 0);
	cr_expect_eq(iour_report__status(rep), IOUR_STATUS_FULLY);
	cr_expect_eq(iour_report__mechanism(rep), IOUR_MECH_RING_DISABLED);
	map_ring(fd, &params, &ring);
	check_enforced(&ring);
	io_uring_queue_exit(&ring);
	iour_report__free(rep);
	iour_plan__free(pl);
	iour_policy__free(p);
}

/* Task target without task restrictions and without the companion:
 * nothing restricts the task ("not enforced"), the ring part restricts the
 * library's rings. */
Test(policy_real, task_fallback_best_effort)
{
	UNIT_REQUIRE_URING();
	struct iour_policy *p = sample_policy(IOUR_POLICY_TARGET_TASK);
	uint32_t done = 9, total = 9;
	struct iour_plan *pl;
	const struct iour_report *exp;
	struct iour_report *rep = NULL;
	struct iour_plan_info info = { .sz = sizeof(info) };
	struct io_uring_params params;
	struct io_uring ring;
	int fd = -1;

	if (kernel_level() >= 4)
		cr_skip_test("kernel has task restrictions");
	/* Even without argument rules, ring-only is not fully enforced.  A
	 * `ret #0` program is "deny the opcode", through the classic list. */
	static const struct iour_insn deny[] = { { 0x06, 0, 0, 0 } };

	cr_assert_eq(iour_policy__set_prog(p, OP_SOCKET, deny, 1, 0), 0);
	cr_assert_eq(iour_policy__set_attr(p, IOUR_POLICY_ATTR_COMPANION,
					   IOUR_POLICY_COMPANION_NONE),
		     0);
	pl = plan_or_die(p);
	exp = iour_plan__report(pl);
	cr_assert_eq(iour_plan__info(pl, &info), 0);
	cr_expect_eq(info.task_steps, 0);
	cr_expect_eq(info.ring_steps, 2);
	cr_expect_eq(iour_report__status(exp), IOUR_STATUS_NOT_ENFORCED);
	cr_expect_eq(iour_report__mechanism(exp), IOUR_MECH_NONE);
	cr_expect_eq(iour_report__flags(exp),
		     IOUR_REPORT_LOOSENED | IOUR_REPORT_RING_ONLY | IOUR_REPORT_PLANNED);
	cr_assert_eq(iour_plan__apply_task(pl, NULL, &rep), 0);
	cr_expect_eq(iour_report__status(rep), IOUR_STATUS_NOT_ENFORCED);
	cr_expect_eq(iour_report__mechanism(rep), IOUR_MECH_NONE);
	cr_expect(iour_report__flags(rep) & IOUR_REPORT_RING_ONLY);
	cr_expect(iour_report__flags(rep) & IOUR_REPORT_LOOSENED);
	cr_assert_eq(iour_report__steps(rep, &done, &total), 0);
	cr_expect(done == 0 && total == 0);
	cr_expect_geq(iour_report__threads(rep), 1);
	iour_report__free(rep);
	/* The library's rings are restricted ... */
	memset(&params, 0, sizeof(params));
	cr_assert_eq(iour_plan__create_ring(pl, 8, &params, NULL, &fd, &rep), 0);
	cr_expect_eq(iour_report__status(rep), IOUR_STATUS_PARTIALLY);
	cr_expect_eq(iour_report__mechanism(rep), IOUR_MECH_RING_DISABLED);
	map_ring(fd, &params, &ring);
	check_enforced(&ring);
	io_uring_queue_exit(&ring);
	iour_report__free(rep);
	/* ... others are not: that is why the status is only partial. */
	cr_assert_eq(io_uring_queue_init(8, &ring, 0), 0);
	cr_expect_eq(submit1(&ring, OP_NOP, -1, NULL, 0), 0);
	io_uring_queue_exit(&ring);
	iour_plan__free(pl);
	iour_policy__free(p);
}

/* Soft requirement: nothing applied, "not enforced", a usable ring. */
Test(policy_real, fallback_soft_applies_nothing)
{
	UNIT_REQUIRE_URING();
	struct iour_policy *p = sample_policy(IOUR_POLICY_TARGET_RING);
	struct iour_plan *pl;
	struct iour_report *rep = NULL;
	struct io_uring_params params;
	struct io_uring ring;
	int fd = -1;

	if (kernel_level() >= 4)
		cr_skip_test("kernel has argument filters");
	cr_assert_eq(iour_policy__set_attr(p, IOUR_POLICY_ATTR_COMPAT, IOUR_POLICY_COMPAT_SOFT), 0);
	pl = plan_or_die(p);
	cr_expect_eq(iour_report__status(iour_plan__report(pl)), IOUR_STATUS_NOT_ENFORCED);
	cr_expect_eq(iour_plan__step_cnt(pl), 1); /* just ENABLE_RINGS */
	memset(&params, 0, sizeof(params));
	cr_assert_eq(iour_plan__create_ring(pl, 8, &params, NULL, &fd, &rep), 0);
	cr_expect_eq(iour_report__status(rep), IOUR_STATUS_NOT_ENFORCED);
	cr_expect_eq(iour_report__mechanism(rep), IOUR_MECH_NONE);
	map_ring(fd, &params, &ring);
	cr_expect_eq(submit1(&ring, OP_WRITE, -1, NULL, 0), -EBADF, "WRITE not restricted");
	io_uring_queue_exit(&ring);
	iour_report__free(rep);
	/* The task target too. */
	cr_assert_eq(iour_policy__set_attr(p, IOUR_POLICY_ATTR_TARGET, IOUR_POLICY_TARGET_TASK), 0);
	iour_plan__free(pl);
	pl = plan_or_die(p);
	cr_assert_eq(iour_plan__apply_task(pl, NULL, &rep), 0);
	cr_expect_eq(iour_report__status(rep), IOUR_STATUS_NOT_ENFORCED);
	iour_report__free(rep);
	iour_plan__free(pl);
	iour_policy__free(p);
}

/* Hard requirement: -IOUR_ERRNO__UNSUPPORTED, nothing applied. */
Test(policy_real, fallback_hard_fails)
{
	UNIT_REQUIRE_URING();
	struct iour_policy *p = sample_policy(IOUR_POLICY_TARGET_RING);
	struct iour_plan *pl;
	struct iour_report *rep = NULL;
	struct io_uring_params params;
	struct iour_plan_info info = { .sz = sizeof(info) };
	int fd = -1;
	uint32_t done;

	if (kernel_level() >= 4)
		cr_skip_test("kernel has argument filters");
	cr_assert_eq(iour_policy__set_attr(p, IOUR_POLICY_ATTR_COMPAT, IOUR_POLICY_COMPAT_HARD), 0);
	pl = plan_or_die(p);
	cr_assert_eq(iour_plan__info(pl, &info), 0);
	cr_expect(info.flags & IOUR_PLAN_INFO_REFUSED);
	cr_expect_eq(iour_plan__step_cnt(pl), 0);
	memset(&params, 0, sizeof(params));
	params.flags = IORING_SETUP_R_DISABLED;
	fd = io_uring_setup(4, &params);
	cr_assert_geq(fd, 0);
	cr_expect_eq(iour_plan__apply_ring(pl, fd, NULL, &rep), -IOUR_ERRNO__UNSUPPORTED);
	cr_expect_eq(iour_report__status(rep), IOUR_STATUS_NOT_ENFORCED);
	cr_assert_eq(iour_report__steps(rep, &done, NULL), 0);
	cr_expect_eq(done, 0);
	iour_report__free(rep);
	/* Still disabled: nothing was registered, so it can be restricted. */
	cr_expect_eq(io_uring_register(fd, IORING_REGISTER_ENABLE_RINGS, NULL, 0), 0);
	close(fd);
	fd = -1;
	cr_expect_eq(iour_plan__create_ring(pl, 8, NULL, NULL, &fd, &rep),
		     -IOUR_ERRNO__UNSUPPORTED);
	cr_expect_eq(fd, -1);
	iour_report__free(rep);
	cr_assert_eq(iour_policy__set_attr(p, IOUR_POLICY_ATTR_TARGET, IOUR_POLICY_TARGET_TASK), 0);
	iour_plan__free(pl);
	pl = plan_or_die(p);
	cr_expect_eq(iour_plan__apply_task(pl, NULL, &rep), -IOUR_ERRNO__UNSUPPORTED);
	cr_expect_eq(iour_report__status(rep), IOUR_STATUS_NOT_ENFORCED);
	iour_report__free(rep);
	iour_plan__free(pl);
	iour_policy__free(p);
}

/* Open fallback: the conditional opcode is allowed, reported loosened. */
Test(policy_real, fallback_open_loosens)
{
	UNIT_REQUIRE_URING();
	struct iour_policy *p = sample_policy(IOUR_POLICY_TARGET_RING);
	struct iour_plan *pl;
	struct iour_report *rep = NULL;
	struct io_uring_params params;
	struct io_uring ring;
	struct iour_decision d = { .sz = sizeof(d) };
	int fd = -1, i, n, found = 0;

	if (kernel_level() >= 4)
		cr_skip_test("kernel has argument filters");
	cr_assert_eq(iour_policy__set_attr(p, IOUR_POLICY_ATTR_NO_FILTER_FALLBACK,
					   IOUR_POLICY_FALLBACK_OPEN), 0);
	pl = plan_or_die(p);
	n = iour_report__decision_cnt(iour_plan__report(pl));
	for (i = 0; i < n; i++) {
		cr_assert_eq(iour_report__decision(iour_plan__report(pl), (size_t)i, &d), 0);
		if (d.kind == IOUR_DECISION_LOOSENED && d.opcode == OP_SOCKET &&
		    d.reason == IOUR_REASON_NO_FILTERS)
			found++;
	}
	cr_expect_eq(found, 1);
	cr_expect_eq(iour_report__flags(iour_plan__report(pl)),
		     IOUR_REPORT_LOOSENED | IOUR_REPORT_PLANNED);
	memset(&params, 0, sizeof(params));
	cr_assert_eq(iour_plan__create_ring(pl, 8, &params, NULL, &fd, &rep), 0);
	map_ring(fd, &params, &ring);
	/* SOCKET(AF_UNIX) passes the gate: not -EACCES. */
	{
		struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
		struct io_uring_cqe *cqe;

		io_uring_prep_rw(OP_SOCKET, sqe, 1 /* AF_UNIX */, NULL, 0, 1 /* SOCK_STREAM */);
		cr_assert_eq(io_uring_submit(&ring), 1);
		cr_assert_eq(io_uring_wait_cqe(&ring, &cqe), 0);
		cr_expect_geq(cqe->res, 0, "SOCKET allowed unconditionally: %d", cqe->res);
		if (cqe->res >= 0)
			close(cqe->res);
		io_uring_cqe_seen(&ring, cqe);
	}
	cr_expect_eq(submit1(&ring, OP_WRITE, -1, NULL, 0), -EACCES);
	io_uring_queue_exit(&ring);
	iour_report__free(rep);
	iour_plan__free(pl);
	iour_policy__free(p);
}

/* ---- the seccomp companion, really installed (in a child) ---- */

#include <pthread.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "child.h"

static long raw_setup(void)
{
	struct io_uring_params prm;

	memset(&prm, 0, sizeof(prm));
	return syscall(__NR_io_uring_setup, 2, &prm) < 0 ? -errno : 0;
}

struct comp_arg {
	uint32_t mode;
	int err;
};

static int companion_child(void *varg, struct child_msg *m)
{
	struct comp_arg *a = varg;
	struct iour_policy *p = sample_policy(IOUR_POLICY_TARGET_TASK);
	struct iour_report *rep = NULL;
	struct iour_plan *pl = NULL;
	struct io_uring_params params;
	struct io_uring before;
	int fd = -1, rc, st;
	long s;
	pid_t pid;

	CHK(m, iour_policy__set_attr(p, IOUR_POLICY_ATTR_COMPANION, a->mode) == 0);
	CHK(m, iour_policy__plan(p, NULL, &pl) == 0);
	/* A restricted ring made before the companion keeps working. */
	memset(&params, 0, sizeof(params));
	CHK(m, iour_plan__create_ring(pl, 8, &params, NULL, &fd, NULL) == 0);
	map_ring(fd, &params, &before);
	rc = iour_plan__apply_task(pl, NULL, &rep);
	CHKF(m, rc == 0, "apply_task: %s", iour_errname(rc));
	CHKF(m, iour_report__status(rep) == IOUR_STATUS_PARTIALLY, "status %d",
	     iour_report__status(rep));
	/* The report describes the task: the companion, nothing else. */
	CHKF(m, iour_report__mechanism(rep) == IOUR_MECH_COMPANION, "mechanism %#x",
	     iour_report__mechanism(rep));
	CHK(m, iour_report__flags(rep) & IOUR_REPORT_TIGHTENED);
	CHK(m, !(iour_report__flags(rep) & (IOUR_REPORT_LOOSENED | IOUR_REPORT_RING_ONLY)));
	iour_report__free(rep);
	s = raw_setup();
	CHKF(m, s == -a->err, "io_uring_setup after the companion: %ld", s);
	fd = -1;
	rc = iour_plan__create_ring(pl, 8, NULL, NULL, &fd, NULL);
	CHKF(m, rc == -a->err && fd == -1, "create_ring: %s", iour_errname(rc));
	CHK(m, submit1(&before, OP_NOP, -1, NULL, 0) == 0);
	CHK(m, submit1(&before, OP_WRITE, -1, NULL, 0) == -EACCES);
	/* Descendants inherit it. */
	pid = fork();
	if (pid == 0)
		_exit(raw_setup() == -a->err ? 0 : 1);
	CHK(m, pid > 0 && waitpid(pid, &st, 0) == pid);
	CHK(m, WIFEXITED(st) && WEXITSTATUS(st) == 0);
	io_uring_queue_exit(&before);
	iour_plan__free(pl);
	iour_policy__free(p);
	return 0;
}

Test(policy_real, task_fallback_companion_blocks_setup)
{
	UNIT_REQUIRE_URING();
	struct comp_arg a[] = { { IOUR_POLICY_COMPANION_ENOSYS, ENOSYS },
				{ IOUR_POLICY_COMPANION_EPERM, EPERM } };
	struct child_msg m;
	size_t i;

	if (kernel_level() >= 4)
		cr_skip_test("kernel has task restrictions: no companion is planned");
	for (i = 0; i < 2; i++) {
		memset(&m, 0, sizeof(m));
		cr_expect_eq(child_run(companion_child, &a[i], &m), 0, "%s", m.text);
	}
	/* The parent is untouched. */
	cr_expect_eq(raw_setup(), 0);
}

/* The enforcement check confirms a ring the plan restricted. */
Test(policy_real, ring_plan_enforcement_check)
{
	UNIT_REQUIRE_URING();
	struct iour_policy *p = sample_policy(IOUR_POLICY_TARGET_RING);
	struct iour_plan *pl = plan_or_die(p);
	struct iour_verify_req req[3];
	struct iour_verify_result res[3];
	IOUR_OPTS(iour_verify_opts, vo, .flags = IOUR_VERIFY_RING_FD);
	int fd = -1, rc;

	memset(req, 0, sizeof(req));
	req[0] = (struct iour_verify_req){ .sz = sizeof(req[0]), .opcode = OP_NOP,
					   .expect = IOUR_EXPECT_ALLOW };
	req[1] = (struct iour_verify_req){ .sz = sizeof(req[0]), .opcode = OP_WRITE,
					   .expect = IOUR_EXPECT_DENY };
	req[2] = (struct iour_verify_req){ .sz = sizeof(req[0]), .opcode = OP_SOCKET,
					   .expect = IOUR_EXPECT_DENY, .family = 2, .type = 1 };
	if (kernel_level() >= 4)
		req[2].family = 10; /* with filters, AF_INET would be allowed */
	cr_assert_eq(iour_plan__create_ring(pl, 8, NULL, NULL, &fd, NULL), 0);
	vo.ring_fd = fd;
	vo.ring_flags = IORING_SETUP_R_DISABLED;
	rc = iour_verify(req, 3, res, &vo);
	cr_expect_eq(rc, 0, "enforcement check: %s (%d %d %d)", iour_errname(rc), res[0].status,
		     res[1].status, res[2].status);
	close(fd);
	iour_plan__free(pl);
	iour_policy__free(p);
}

static void *sleeper(void *arg)
{
	int *pfd = arg;
	char c;

	(void)!read(pfd[0], &c, 1);
	return NULL;
}

/* Other threads are reported, or refused (in a child: the test runner may
 * have threads of its own). */
static int threads_child(void *varg, struct child_msg *m)
{
	struct iour_policy *p = sample_policy(IOUR_POLICY_TARGET_TASK);
	struct iour_plan *pl = NULL;
	struct iour_report *rep = NULL;
	pthread_t th;
	int pfd[2], rc;

	(void)varg;
	CHK(m, pipe(pfd) == 0);
	CHK(m, iour_policy__plan(p, NULL, &pl) == 0);
	rc = iour_plan__apply_task(pl, NULL, &rep);
	CHKF(m, rc == 0 && iour_report__threads(rep) == 1, "alone: %d, %d threads", rc,
	     iour_report__threads(rep));
	CHK(m, !(iour_report__flags(rep) & IOUR_REPORT_OTHER_THREADS));
	iour_report__free(rep);
	CHK(m, pthread_create(&th, NULL, sleeper, pfd) == 0);
	rc = iour_plan__apply_task(pl, NULL, &rep);
	CHKF(m, rc == 0 && iour_report__threads(rep) == 2, "with a thread: %d, %d threads", rc,
	     iour_report__threads(rep));
	CHK(m, iour_report__flags(rep) & IOUR_REPORT_OTHER_THREADS);
	iour_report__free(rep);
	iour_plan__free(pl);
	CHK(m, iour_policy__set_attr(p, IOUR_POLICY_ATTR_THREADS, IOUR_POLICY_THREADS_REFUSE) == 0);
	CHK(m, iour_policy__plan(p, NULL, &pl) == 0);
	rc = iour_plan__apply_task(pl, NULL, &rep);
	CHKF(m, rc == -EBUSY, "refuse: %s", iour_errname(rc));
	CHK(m, iour_report__status(rep) == IOUR_STATUS_NOT_ENFORCED);
	iour_report__free(rep);
	CHK(m, write(pfd[1], "x", 1) == 1);
	CHK(m, pthread_join(th, NULL) == 0);
	rc = iour_plan__apply_task(pl, NULL, &rep);
	CHKF(m, rc == 0, "alone again: %s", iour_errname(rc));
	iour_report__free(rep);
	iour_plan__free(pl);
	iour_policy__free(p);
	return 0;
}

Test(policy_real, task_threads_report_or_refuse)
{
	struct child_msg m;

	if (kernel_level() >= 4)
		cr_skip_test("kernel has task restrictions: the test would restrict itself");
	memset(&m, 0, sizeof(m));
	cr_expect_eq(child_run(threads_child, NULL, &m), 0, "%s", m.text);
}

/* IOUR_FEATURE_LEVEL lowers what the planner uses, never the limits. */
Test(policy_real, feature_level_env_lowers_the_plan)
{
	UNIT_REQUIRE_URING();
	struct iour_policy *p = sample_policy(IOUR_POLICY_TARGET_RING);
	IOUR_OPTS(iour_probe_opts, po, .flags = IOUR_PROBE_REFRESH);
	struct iour_features f = { .sz = sizeof(f) };
	struct iour_plan_info info = { .sz = sizeof(info) };
	struct iour_plan *pl;
	char *text;

	if (kernel_level() < 2)
		cr_skip_test("kernel without ring restrictions");
	cr_assert_eq(setenv("IOUR_FEATURE_LEVEL", "1", 1), 0);
	cr_assert_eq(iour_probe(&po, &f), 0);
	pl = plan_or_die(p);
	cr_assert_eq(iour_plan__info(pl, &info), 0);
	cr_expect_eq(info.level, 1);
	cr_expect_eq(iour_plan__step_cnt(pl), 0);
	cr_expect_eq(iour_report__status(iour_plan__report(pl)), IOUR_STATUS_NOT_ENFORCED);
	text = describe(pl);
	cr_expect(strstr(text, "lowered by IOUR_FEATURE_LEVEL") != NULL, "%s", text);
	free(text);
	iour_plan__free(pl);
	unsetenv("IOUR_FEATURE_LEVEL");
	cr_assert_eq(iour_probe(&po, &f), 0);
	pl = plan_or_die(p);
	cr_assert_eq(iour_plan__info(pl, &info), 0);
	cr_expect_geq(info.level, 2);
	iour_plan__free(pl);
	iour_policy__free(p);
}
