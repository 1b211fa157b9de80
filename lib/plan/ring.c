/* SPDX-License-Identifier: MIT */
/*
 * The simple entry points of ring.h, over the planner and the executor: a
 * ring policy holding the set, planned for the running kernel, applied
 * with iour_plan__apply_ring() / iour_plan__create_ring(); their report
 * is translated into struct iour_ring_report.  One executor, one
 * behaviour (doc/design.md).
 */
#include <errno.h>
#include <string.h>

#include "iouring_restrict/names.h"
#include "iouring_restrict/ring.h"
#include "probe/kernel.h"
#include "base/miniring.h"
#include "planner.h"
#include "base/sys.h"

#define REND(m) (offsetof(struct iour_ring_report, m) + sizeof(((struct iour_ring_report *)0)->m))
#define REPORT_MAX_SZ 4096
_Static_assert(REND(clamped_register_ops) == sizeof(struct iour_ring_report),
	       "iour_ring_report has trailing padding");
_Static_assert(sizeof(struct iour_ring_report) == 104, "iour_ring_report layout changed");
_Static_assert(sizeof(struct iour_ring_apply_opts) == 24, "iour_ring_apply_opts layout");
_Static_assert(sizeof(struct iour_ring_create_opts) == 24, "iour_ring_create_opts layout");

static int report_valid(const struct iour_ring_report *rep)
{
	if (rep && (rep->sz < REND(registered) || rep->sz > REPORT_MAX_SZ))
		return -EINVAL;
	return 0;
}

/*
 * The plan for `rs` on the running kernel: a ring policy that holds the
 * set and nothing else, planned for the running kernel's cached probe.
 * Errors in the set (undecided flags) are found first, without a kernel
 * (iour__ruleset_check(): the errors building its entries for any kernel
 * would give), so that they do not depend on the kernel.
 * The plan's report is never shown (report_fill() reads its CLAMPED
 * decisions): its effect notes are left out, a ring's setup does not pay
 * for formatting them.
 */
static int plan_for(const struct iour_ruleset *rs, struct iour_plan **out)
{
	struct iour_policy *p = NULL;
	struct iour__kernel k;
	int r;

	r = iour__ruleset_check(rs);
	if (r)
		return r;
	r = iour__kernel_probe(&k);
	if (r)
		return r;
	if (!k.ring_restrict)
		return -IOUR_ERRNO__UNSUPPORTED;
	/* ring.h's contract is a classic set alone: where new rings inherit
	 * the task's set, the kernel refuses it (-EBUSY, as documented)
	 * rather than the planner substituting ring filters (the policy API
	 * offers that, with a report that can say what it loosened). */
	k.ring_busy = false;
	r = iour_policy__new(NULL, &p);
	if (!r)
		r = iour_policy__set_ruleset(p, rs);
	if (!r)
		r = iour_policy__set_attr(p, IOUR_POLICY_ATTR_TARGET, IOUR_POLICY_TARGET_RING);
	if (!r)
		r = iour_policy__set_attr(p, IOUR_POLICY_ATTR_DEFAULT, IOUR_POLICY_DEFAULT_ALLOW);
	if (!r)
		r = iour__plan_build_flags(p, &k, IOUR__PLAN_NO_EFFECT_NOTES, out);
	if (!r)
		(*out)->for_running = true;
	iour_policy__free(p);
	return r;
}

/* Index of the plan's first step of kind `op`, or nsteps. */
static size_t step_index(const struct iour_plan *pl, uint32_t op)
{
	size_t i;

	for (i = pl->n_task; i < pl->nsteps; i++)
		if (pl->steps[i].op == op)
			break;
	return i;
}

/* The executor's report, as the ring report (the fields that fit). */
static void report_fill(struct iour_ring_report *rep, const struct iour_plan *pl,
			const struct iour_report *r)
{
	struct iour_ring_report full;
	size_t n = 0, i, set = step_index(pl, IOUR_STEP_RESTRICTIONS);
	size_t enable = step_index(pl, IOUR_STEP_ENABLE_RINGS);
	size_t done = pl->n_task + (r ? r->steps_done : 0);
	static const uint16_t ends[] = {
		REND(registered),        REND(enabled),
		REND(nr_entries),        REND(op_last),
		REND(reg_last),          REND(split_gates),
		REND(n_clamped_sqe_ops), REND(n_clamped_register_ops),
		REND(clamped_sqe_ops),   REND(clamped_register_ops),
	};

	if (!rep)
		return;
	memset(&full, 0, sizeof(full));
	full.registered = set < pl->nsteps && set < done;
	full.enabled = enable < pl->nsteps && enable < done;
	full.nr_entries = set < pl->nsteps ? pl->steps[set].entries : 0;
	full.op_last = pl->kernel.op_last;
	full.reg_last = pl->kernel.reg_last;
	full.split_gates = pl->kernel.split;
	for (i = 0; i < pl->rep.nd; i++) {
		const struct iour__decision *d = &pl->rep.d[i];

		if (d->kind != IOUR_DECISION_CLAMPED)
			continue;
		if (d->opcode != IOUR_DECISION_NO_OPCODE && d->opcode < 256) {
			full.n_clamped_sqe_ops++;
			full.clamped_sqe_ops[d->opcode / 64] |= 1ULL << (d->opcode % 64);
		} else if (d->value >= 0 && d->value < 256) {
			full.n_clamped_register_ops++;
			full.clamped_register_ops[d->value / 64] |= 1ULL << (d->value % 64);
		}
	}
	for (i = 0; i < IOUR_ARRAY_SIZE(ends); i++)
		if (ends[i] <= rep->sz)
			n = ends[i];
	memcpy((char *)rep + sizeof(size_t), (char *)&full + sizeof(size_t), n - sizeof(size_t));
	if (rep->sz > sizeof(full))
		memset((char *)rep + sizeof(full), 0, rep->sz - sizeof(full));
}

/*
 * The kernel's answers, mapped to the documented set.  The register-op
 * gate (-EACCES) and the single-issuer check (-EEXIST) run before the
 * handler, but only ever fire on an enabled ring: the ring is not in the
 * state the call needs.  -EINVAL from RESTRICTIONS with entries built for
 * the kernel's own limits means the probe and the kernel disagree.
 */
static int map_register_err(long r, bool restrictions)
{
	if (r == -EACCES || r == -EEXIST)
		return -EBADFD;
	if (restrictions && r == -EINVAL)
		return -IOUR_ERRNO__KERNEL_MISMATCH;
	return (int)r;
}

/* The executor's result as the wrappers' error: the kernel's error of the
 * step that failed, mapped. */
static int map_exec_err(int rc, const struct iour_plan *pl, const struct iour_report *r)
{
	size_t failed;

	if (rc == 0 || !r || !(r->flags & IOUR_REPORT_STOPPED))
		return rc;
	failed = pl->n_task + r->steps_done;
	return map_register_err(r->error, failed < pl->nsteps &&
						  pl->steps[failed].op == IOUR_STEP_RESTRICTIONS);
}

/* Documented in include/iouring_restrict/ring.h */
int iour_ring_apply(int ring_fd, const struct iour_ruleset *rs,
		    const struct iour_ring_apply_opts *opts)
{
	struct iour_ring_report *rep;
	struct iour_report *r = NULL;
	struct iour_plan *pl = NULL;
	uint64_t flags;
	int rc;

	rc = IOUR_OPTS_VALID(opts, iour_ring_apply_opts);
	if (rc)
		return rc;
	flags = IOUR_OPTS_GET(opts, flags, 0);
	rep = IOUR_OPTS_GET(opts, report, NULL);
	if (!rs || (flags & ~IOUR_RING_APPLY_NO_ENABLE) || report_valid(rep))
		return -EINVAL;
	/* Never -1: on Linux 7.0+ that is the task path, which would
	 * restrict the calling task for good. */
	if (ring_fd < 0)
		return -EBADF;
	rc = plan_for(rs, &pl);
	if (rc)
		return iour__err_public(rc, IOUR__ERRSET_RING_APPLY);
	if (flags & IOUR_RING_APPLY_NO_ENABLE)
		iour__plan_drop_enable(pl);
	rc = iour_plan__apply_ring(pl, ring_fd, NULL, &r);
	report_fill(rep, pl, r);
	rc = map_exec_err(rc, pl, r);
	iour_report__free(r);
	iour_plan__free(pl);
	return iour__err_public(rc, IOUR__ERRSET_RING_APPLY);
}

/* Documented in include/iouring_restrict/ring.h */
int iour_ring_enable(int ring_fd)
{
	if (ring_fd < 0)
		return -EBADF;
	return iour__err_public(
		map_register_err(iour__register(ring_fd, KIO_REGISTER_ENABLE_RINGS, NULL, 0),
				 false),
		IOUR__ERRSET_RING_ENABLE);
}

/* Documented in include/iouring_restrict/ring.h */
int iour_ring_create(uint32_t entries, void *params, const struct iour_ruleset *rs,
		     const struct iour_ring_create_opts *opts, int *ring_fd)
{
	const struct kio_params *prm = params;
	struct iour_ring_report *rep;
	struct iour_report *r = NULL;
	struct iour_plan *pl = NULL;
	int rc, fd = -1;

	if (ring_fd)
		*ring_fd = -1;
	rc = IOUR_OPTS_VALID(opts, iour_ring_create_opts);
	if (rc)
		return rc;
	rep = IOUR_OPTS_GET(opts, report, NULL);
	if (!rs || !ring_fd || !entries || IOUR_OPTS_GET(opts, flags, 0) || report_valid(rep))
		return -EINVAL;
	/* Only flags whose result is a descriptor: the library restricts,
	 * enables or closes what io_uring_setup() returns. */
	if (prm && (prm->flags & ~IOUR__SETUP_FD_RESULT))
		return -EINVAL;
	rc = plan_for(rs, &pl);
	if (rc)
		return iour__err_public(rc, IOUR__ERRSET_RING_CREATE);
	rc = iour_plan__create_ring(pl, entries, params, NULL, &fd, &r);
	report_fill(rep, pl, r);
	if (rc && r && (r->flags & IOUR_REPORT_STOPPED)) {
		/* A step failed on the brand-new ring (closed again): it cannot
		 * have been enabled or gated, so the kernel disagrees. */
		rc = map_exec_err(rc, pl, r);
		if (rc == -EBADFD || rc == -EBADF || rc == -EOPNOTSUPP)
			rc = -IOUR_ERRNO__KERNEL_MISMATCH;
	}
	iour_report__free(r);
	iour_plan__free(pl);
	if (rc)
		return iour__err_public(rc, IOUR__ERRSET_RING_CREATE);
	*ring_fd = fd;
	return 0;
}
