/* SPDX-License-Identifier: MIT */
/*
 * Setup flags whose result is not a file descriptor: with
 * IORING_SETUP_REGISTERED_FD_ONLY, io_uring_setup() returns an index into
 * the task's registered-ring table, which a library that takes it for a
 * descriptor would then restrict, enable or close.  Both ring creators
 * (iour_ring_create(), iour_plan__create_ring()) must refuse such flags,
 * and flags they do not know, before any system call.
 *
 * The attack set-up is the one that fooled the old code: the caller's fd 0
 * is another disabled, unrestricted ring, and registered index 0 is what
 * the kernel hands back.  Everything runs in a forked child (fd 0 is
 * replaced).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <liburing.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "child.h"
#include "iouring_restrict/iouring_restrict.h"
#include "uring_avail.h"

#define SETUP_NO_MMAP (1U << 14)
#define SETUP_REGISTERED_FD_ONLY (1U << 15)
#define ENTER_REGISTERED_RING (1U << 4)
#define REGION_SZ (64U * 1024U)

static long raw_setup(unsigned entries, struct io_uring_params *p)
{
	long r = syscall(__NR_io_uring_setup, entries, p);

	return r < 0 ? -errno : r;
}

static long raw_enter(int fd, unsigned flags)
{
	long r = syscall(__NR_io_uring_enter, fd, 0, 0, flags, NULL, 0);

	return r < 0 ? -errno : r;
}

static long raw_register(int fd, unsigned op, void *arg, unsigned nr)
{
	long r = syscall(__NR_io_uring_register, fd, op, arg, nr);

	return r < 0 ? -errno : r;
}

static struct iour_ruleset *nop_set(void)
{
	struct iour_ruleset *rs = NULL;

	if (iour_ruleset__new(NULL, &rs) || iour_ruleset__allow_sqe_op(rs, IORING_OP_NOP) ||
	    iour_ruleset__set_sqe_flags(rs, 0, 0))
		return NULL;
	return rs;
}

/* Parameters that make the kernel accept REGISTERED_FD_ONLY: it needs
 * NO_MMAP, so the ring memory comes from the caller. */
static int fd_only_params(struct io_uring_params *p, void *sq_mem, void *cq_mem)
{
	memset(p, 0, sizeof(*p));
	p->flags = SETUP_REGISTERED_FD_ONLY | SETUP_NO_MMAP;
	/* user_addr, the last field of each offsets struct (resv2 in the
	 * liburing 2.3 headers the tests build against). */
	p->sq_off.resv2 = (uint64_t)(uintptr_t)sq_mem;
	p->cq_off.resv2 = (uint64_t)(uintptr_t)cq_mem;
	return 0;
}

enum which { VIA_RING_CREATE, VIA_PLAN_CREATE };

static int create(enum which w, const struct iour_ruleset *rs, const struct iour_plan *pl,
		  struct io_uring_params *p, int *fd)
{
	if (w == VIA_RING_CREATE)
		return iour_ring_create(8, p, rs, NULL, fd);
	return iour_plan__create_ring(pl, 8, p, NULL, fd, NULL);
}

static int fd_only_child(void *arg, struct child_msg *m)
{
	enum which w = (enum which)(uintptr_t)arg;
	struct io_uring_restriction nop = { .opcode = IORING_RESTRICTION_SQE_OP,
					    .sqe_op = IORING_OP_NOP };
	struct io_uring_params dp, p;
	struct iour_ruleset *rs = nop_set();
	struct iour_policy *pol = NULL;
	struct iour_plan *pl = NULL;
	void *sq_mem, *cq_mem;
	long d, r;
	int fds0, fd, rc;

	CHK(m, rs != NULL);
	CHK(m, iour_feature_level() >= IOUR_LEVEL_RING); /* probe cached first */
	if (w == VIA_PLAN_CREATE) {
		CHK(m, iour_policy__new(NULL, &pol) == 0);
		CHK(m, iour_policy__set_ruleset(pol, rs) == 0);
		CHK(m, iour_policy__set_attr(pol, IOUR_POLICY_ATTR_TARGET,
					     IOUR_POLICY_TARGET_RING) == 0);
		CHK(m, iour_policy__plan(pol, NULL, &pl) == 0);
	}
	sq_mem = mmap(NULL, REGION_SZ, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	cq_mem = mmap(NULL, REGION_SZ, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHK(m, sq_mem != MAP_FAILED && cq_mem != MAP_FAILED);

	/* fd 0: somebody else's disabled, unrestricted ring. */
	memset(&dp, 0, sizeof(dp));
	dp.flags = IORING_SETUP_R_DISABLED;
	d = raw_setup(4, &dp);
	CHKF(m, d >= 0, "setup: %ld", d);
	CHK(m, dup2((int)d, 0) == 0);
	close((int)d);
	CHK(m, raw_enter(0, 0) == -EBADFD);
	fds0 = count_fds();

	fd_only_params(&p, sq_mem, cq_mem);
	fd = 7;
	rc = create(w, rs, pl, &p, &fd);
	CHKF(m, rc == -EINVAL, "REGISTERED_FD_ONLY: %s", iour_errname(rc));
	/* iour_ring_create() sets -1, the planner leaves it untouched */
	CHK(m, fd == (w == VIA_RING_CREATE ? -1 : 7));
	CHK(m, p.flags == (SETUP_REGISTERED_FD_ONLY | SETUP_NO_MMAP));
	CHKF(m, count_fds() == fds0, "%d descriptors, %d before", count_fds(), fds0);
	/* No ring was created behind the caller's back: registered index 0
	 * names nothing. */
	r = raw_enter(0, ENTER_REGISTERED_RING);
	CHKF(m, r == -EBADF, "registered ring 0: %ld", r);
	/* fd 0 is untouched: still disabled, still without restrictions (a
	 * first registration is accepted). */
	r = raw_enter(0, 0);
	CHKF(m, r == -EBADFD, "fd 0 enter: %ld", r);
	r = raw_register(0, IORING_REGISTER_RESTRICTIONS, &nop, 1);
	CHKF(m, r == 0, "fd 0 was restricted by the library: %ld", r);

	/* Bits the library does not know are refused the same way. */
	static const uint32_t unknown[] = { 1U << 21, 1U << 30, 1U << 31 };
	for (size_t i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++) {
		memset(&p, 0, sizeof(p));
		p.flags = unknown[i];
		fd = 7;
		rc = create(w, rs, pl, &p, &fd);
		CHKF(m, rc == -EINVAL && fd == (w == VIA_RING_CREATE ? -1 : 7), "flags 0x%x: %s",
		     unknown[i], iour_errname(rc));
	}
	CHK(m, count_fds() == fds0);

	/* A flag whose result is a descriptor still works. */
	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_SUBMIT_ALL | IORING_SETUP_CLAMP;
	rc = create(w, rs, pl, &p, &fd);
	CHKF(m, rc == 0 && fd > 0, "SUBMIT_ALL: %s", iour_errname(rc));
	close(fd);
	iour_plan__free(pl);
	iour_policy__free(pol);
	iour_ruleset__free(rs);
	return 0;
}

Test(ring_setup_flags, ring_create_refuses_registered_fd_only_before_any_syscall)
{
	UNIT_REQUIRE_URING();
	struct child_msg m;

	cr_assert_eq(child_run(fd_only_child, (void *)(uintptr_t)VIA_RING_CREATE, &m), 0, "%s",
		     m.text);
}

Test(ring_setup_flags, plan_create_ring_refuses_registered_fd_only_before_any_syscall)
{
	UNIT_REQUIRE_URING();
	struct child_msg m;

	cr_assert_eq(child_run(fd_only_child, (void *)(uintptr_t)VIA_PLAN_CREATE, &m), 0, "%s",
		     m.text);
}
