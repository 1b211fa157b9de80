/* SPDX-License-Identifier: MIT */
/*
 * The executor: runs a plan's steps through the syscall seam and reports
 * exactly what took effect.  It decides nothing the planner did not,
 * except how to react to the kernel's answers: the payload-size write-back
 * and failures midway.
 */
#include <stdio.h>
#include <stdlib.h>

#include "base/internal.h"
#include "planner.h"
#include "base/sys.h"
#include "enforce/enforce_internal.h"
#include "base/miniring.h"
#include "enforce/peers.h"

#define PR_SET_NO_NEW_PRIVS_ 38

/* ---- is the plan meant for this kernel? ---- */

static const char *gates(bool split)
{
	return split ? "split (7.0+)" : "coupled";
}

/*
 * Would steps [first, end) of `pl` mean on kernel `k` what the plan and
 * its report say?  They do when every mechanism they use exists on `k`
 * (task restrictions, task filters, ring restrictions, ring filters: after
 * IOUR_FEATURE_LEVEL, which the probe applies), and, where the plan's
 * bytes depend on them, `k` has the plan's opcode limits (IORING_OP_LAST
 * for any restriction or filter step: entries, DENY_REST and the clamping
 * decisions are made against it; IORING_REGISTER_LAST for a classic set)
 * and its gate semantics (a ring's classic set: coupled kernels close
 * every unlisted register opcode, split ones only a listed side).  Payload
 * sizes may differ: the executor negotiates them and reports the outcome.
 * No io_uring at all on `k` is left to the kernel's own errors (the first
 * io_uring call fails), which say more.  Returns 0 or
 * -IOUR_ERRNO__KERNEL_MISMATCH with the reason in `why`.
 */
int iour__plan_compat(const struct iour_plan *pl, size_t first, size_t end,
		      const struct iour__kernel *k, char *why, size_t len)
{
	const struct iour__kernel *t = &pl->kernel;
	const char *missing = NULL;
	bool set = false, filter = false, ring_set = false, uses_uring = false, task_set = false;
	size_t i;

	for (i = first; i < end && i < pl->nsteps; i++) {
		const struct iour__step *s = &pl->steps[i];
		bool task = s->side == IOUR_STEP_TASK;

		switch (s->op) {
		case IOUR_STEP_RESTRICTIONS:
			set = true;
			ring_set |= !task;
			task_set |= task;
			uses_uring = true;
			if (task ? !k->task_restrict : !k->ring_restrict)
				missing = task ? "task-level restrictions" : "ring restrictions";
			break;
		case IOUR_STEP_BPF_FILTER:
			filter = true;
			uses_uring = true;
			if (task ? !k->task_bpf : !k->ring_bpf)
				missing =
					task ? "task-level BPF filters" : "ring-level BPF filters";
			break;
		case IOUR_STEP_ENABLE_RINGS:
			uses_uring = true;
			if (!k->ring_restrict)
				missing = "ring restrictions";
			break;
		default:
			break; /* no_new_privs and seccomp are not io_uring features */
		}
		if (missing)
			break;
	}
	if (!uses_uring || !k->io_uring)
		return 0;
	if (missing) {
		snprintf(why, len,
			 "the plan was compiled for %s, which has %s; %s does not: "
			 "nothing applied",
			 t->name, missing, k->name);
		return -IOUR_ERRNO__KERNEL_MISMATCH;
	}
	if ((set || filter) && (t->op_last != k->op_last || (set && t->reg_last != k->reg_last))) {
		snprintf(why, len,
			 "the plan was compiled for %s (IORING_OP_LAST %u, "
			 "IORING_REGISTER_LAST %u); %s has %u and %u, so its %s would mean "
			 "something else there: nothing applied",
			 t->name, t->op_last, t->reg_last, k->name, k->op_last, k->reg_last,
			 set ? "restriction entries" : "filters");
		return -IOUR_ERRNO__KERNEL_MISMATCH;
	}
	if (ring_set && t->split != k->split) {
		snprintf(why, len,
			 "the plan was compiled for %s, with %s gate semantics; %s "
			 "has %s gates, so the ring's classic set would gate other register "
			 "opcodes: nothing applied",
			 t->name, gates(t->split), k->name, gates(k->split));
		return -IOUR_ERRNO__KERNEL_MISMATCH;
	}
	/* A task plan made where the task set gates ring-less register calls
	 * has no seccomp guard for them (doc/security.md 2.1). */
	if (task_set && t->task_gates_filters && !k->task_gates_filters) {
		snprintf(why, len,
			 "the plan was compiled for %s, whose task set gates ring-less "
			 "register calls; %s does not, and the plan has no guard for them: "
			 "nothing applied",
			 t->name, k->name);
		return -IOUR_ERRNO__KERNEL_MISMATCH;
	}
	return 0;
}

/* Refuse, before the first system call, a plan that means something else
 * on the running kernel; the report says why. */
static int check_kernel(const struct iour_plan *pl, size_t first, size_t end, struct iour_report *r)
{
	struct iour__kernel k;
	char why[512];
	int rc;

	if (first >= end || pl->for_running)
		return 0;
	rc = iour__kernel_current(&k);
	if (rc == 0)
		rc = iour__plan_compat(pl, first, end, &k, why, sizeof(why));
	else
		snprintf(why, sizeof(why),
			 "the running kernel could not be probed (%s): "
			 "nothing applied",
			 iour_errname(rc));
	if (rc == 0)
		return 0;
	r->status = IOUR_STATUS_NOT_ENFORCED;
	r->mechanism = IOUR_MECH_NONE;
	r->flags &= ~(IOUR_REPORT_TIGHTENED | IOUR_REPORT_NNP_SET | IOUR_REPORT_RING_ONLY);
	r->flags |= IOUR_REPORT_LOOSENED;
	r->error = rc;
	iour__report_add(r, IOUR_DECISION_FAILED,
			 rc == -IOUR_ERRNO__KERNEL_MISMATCH ? IOUR_REASON_KERNEL_MISMATCH :
							      IOUR_REASON_STEP_FAILED,
			 IOUR_DECISION_NO_OPCODE, UINT32_MAX, rc, "%s", why);
	return rc;
}

/* ---- execution ---- */

struct exec {
	const struct iour_plan *pl;
	struct iour_report *r;
	int ring_fd;
	size_t first, end; /* steps to run */
	size_t done;       /* steps that took effect */
	bool effect;       /* an irreversible step took effect */
	bool enforcing;    /* a restriction took effect */
	uint8_t achieved[IOUR__NOPCODES];
};

static const struct iour_insn ret_deny[1] = { { KBPF_RET | KBPF_K, 0, 0, 0 } };
static const struct iour_insn ret_allow[1] = { { KBPF_RET | KBPF_K, 0, 0, 1 } };

static long do_filter(struct exec *x, size_t i, int fd)
{
	const struct iour__step *s = &x->pl->steps[i];
	struct kio_bpf bpf;
	uint32_t want, k;
	const char *name;
	char tmp[24];
	long rc;

	memcpy(&bpf, s->arg, sizeof(bpf));
	want = bpf.filter.pdu_size;
	bpf.filter.filter_ptr = (uint64_t)(uintptr_t)s->insns;
	rc = iour__register(fd, KIO_REGISTER_BPF_FILTER, &bpf, 1);
	if (rc != -EMSGSIZE)
		return rc;
	/* The kernel wrote its payload size K back (doc/kernel.md 4.2). */
	k = bpf.filter.pdu_size;
	name = iour__op_label(s->opcode, tmp, sizeof(tmp));
	if (k == want)
		return rc; /* not a size problem the library can settle */
	if (k > want) {
		iour__report_add(x->r, IOUR_DECISION_NEGOTIATED, IOUR_REASON_NONE, s->opcode,
				 (uint32_t)i, (int32_t)k,
				 "%s: the kernel's payload is %u bytes, the program reads %u; "
				 "registered again without SZ_STRICT",
				 name, k, want);
		memcpy(&bpf, s->arg, sizeof(bpf));
		bpf.filter.flags &= ~KIO_BPF_FILTER_SZ_STRICT;
		bpf.filter.filter_ptr = (uint64_t)(uintptr_t)s->insns;
		return iour__register(fd, KIO_REGISTER_BPF_FILTER, &bpf, 1);
	}
	/* K < U: the kernel cannot fill what the program reads. */
	memcpy(&bpf, s->arg, sizeof(bpf));
	bpf.filter.flags &= ~KIO_BPF_FILTER_SZ_STRICT;
	bpf.filter.pdu_size = 0;
	bpf.filter.filter_len = 1;
	bpf.filter.filter_ptr =
		(uint64_t)(uintptr_t)(s->fallback == IOUR_POLICY_FALLBACK_OPEN ? ret_allow :
										 ret_deny);
	rc = iour__register(fd, KIO_REGISTER_BPF_FILTER, &bpf, 1);
	if (rc == 0) {
		bool open = s->fallback == IOUR_POLICY_FALLBACK_OPEN;

		x->achieved[s->opcode] = open ? IOUR__V_ALLOW : IOUR__V_DENY;
		iour__report_add(x->r, open ? IOUR_DECISION_LOOSENED : IOUR_DECISION_TIGHTENED,
				 IOUR_REASON_NO_PAYLOAD, s->opcode, (uint32_t)i, (int32_t)k,
				 "%s: the kernel fills %u payload bytes, the program reads %u; "
				 "registered `ret #%d` instead: opcode %s (fallback %s)",
				 name, k, want, open, open ? "allowed unconditionally" : "denied",
				 open ? "open" : "closed");
		x->r->flags |= open ? IOUR_REPORT_LOOSENED : IOUR_REPORT_TIGHTENED;
		if (x->r->status == IOUR_STATUS_FULLY)
			x->r->status = IOUR_STATUS_PARTIALLY;
	}
	return rc;
}

static long run_step(struct exec *x, size_t i)
{
	const struct iour__step *s = &x->pl->steps[i];
	int fd = s->side == IOUR_STEP_TASK ? -1 : x->ring_fd;

	switch (s->op) {
	case IOUR_STEP_SET_NNP:
		return iour__prctl(PR_SET_NO_NEW_PRIVS_, 1, 0, 0, 0);
	case IOUR_STEP_RESTRICTIONS:
		return iour__register(fd, KIO_REGISTER_RESTRICTIONS, s->arg, s->nr_args);
	case IOUR_STEP_BPF_FILTER:
		return do_filter(x, i, fd);
	case IOUR_STEP_ENABLE_RINGS:
		return iour__register(fd, KIO_REGISTER_ENABLE_RINGS, NULL, 0);
	case IOUR_STEP_COMPANION: {
		struct {
			uint16_t len;
			uint16_t pad[3];
			uint64_t filter;
		} fprog = { (uint16_t)s->insn_cnt, { 0, 0, 0 }, (uint64_t)(uintptr_t)s->insns };

		return iour__seccomp(s->call_op, s->nr_args, &fprog);
	}
	default:
		return -IOUR_ERRNO__INTERNAL;
	}
}

static const char *step_name(uint32_t op)
{
	switch (op) {
	case IOUR_STEP_SET_NNP:
		return "PR_SET_NO_NEW_PRIVS";
	case IOUR_STEP_RESTRICTIONS:
		return "IORING_REGISTER_RESTRICTIONS";
	case IOUR_STEP_BPF_FILTER:
		return "IORING_REGISTER_BPF_FILTER";
	case IOUR_STEP_ENABLE_RINGS:
		return "IORING_REGISTER_ENABLE_RINGS";
	case IOUR_STEP_COMPANION:
		return "seccomp companion";
	default:
		return "?";
	}
}

/*
 * After step `i` failed: say what the missing steps leave open.  The steps
 * before it took effect; none after it ran.
 */
static void account_failure(struct exec *x, size_t i, long rc)
{
	const struct iour_plan *pl = x->pl;
	struct iour_report *r = x->r;
	const struct iour__step *s = &pl->steps[i];
	bool loosened = false;
	char tmp[24];
	size_t j;

	r->error = (int32_t)rc;
	r->flags |= IOUR_REPORT_STOPPED;
	iour__report_add(r, IOUR_DECISION_FAILED, IOUR_REASON_STEP_FAILED, s->opcode, (uint32_t)i,
			 (int32_t)rc,
			 "step %zu (%s%s%s) failed with %s; %zu of %zu steps took effect", i + 1,
			 step_name(s->op), s->opcode != UINT32_MAX ? " for " : "",
			 s->opcode != UINT32_MAX ? iour__op_label(s->opcode, tmp, sizeof(tmp)) : "",
			 iour_errname((int)rc), x->done, x->end - x->first);
	for (j = i; j < x->end; j++) {
		const struct iour__step *m = &pl->steps[j];

		switch (m->op) {
		case IOUR_STEP_BPF_FILTER:
			if (!x->enforcing)
				break;
			loosened = true;
			iour__report_add(
				r, IOUR_DECISION_DROPPED, IOUR_REASON_STEP_FAILED, m->opcode,
				(uint32_t)j, (int32_t)rc,
				m->intent == IOUR__V_DENY ?
					"%s: its deny filter is not registered; the "
					"opcode stays as the existing restrictions leave it" :
					"%s: its argument filter is not registered; the "
					"opcode is allowed without argument checks",
				iour__op_label(m->opcode, tmp, sizeof(tmp)));
			break;
		case IOUR_STEP_ENABLE_RINGS:
			if (x->enforcing) {
				r->flags |= IOUR_REPORT_TIGHTENED;
				iour__report_add(r, IOUR_DECISION_NOTE,
						 IOUR_REASON_RING_LEFT_DISABLED,
						 IOUR_DECISION_NO_OPCODE, (uint32_t)j, 0, "%s",
						 "the ring is left disabled: it cannot submit "
						 "(close it)");
			}
			break;
		case IOUR_STEP_COMPANION:
			r->mechanism &= ~IOUR_MECH_COMPANION;
			loosened = true;
			break;
		default:
			break;
		}
	}
	if (!x->enforcing) {
		r->status = IOUR_STATUS_NOT_ENFORCED;
		r->mechanism = IOUR_MECH_NONE;
		r->flags |= IOUR_REPORT_LOOSENED;
		r->flags &= ~IOUR_REPORT_TIGHTENED;
	} else {
		r->status = IOUR_STATUS_PARTIALLY;
		if (loosened)
			r->flags |= IOUR_REPORT_LOOSENED;
	}
}

static bool is_enforcing(uint32_t op)
{
	return op == IOUR_STEP_RESTRICTIONS || op == IOUR_STEP_BPF_FILTER ||
	       op == IOUR_STEP_COMPANION;
}

/* Run steps [first, end); returns 0, the first step's error (nothing took
 * effect) or -IOUR_ERRNO__PARTIAL. */
static int run(struct exec *x)
{
	size_t i;
	long rc;

	x->r->steps_total = (uint32_t)(x->end - x->first);
	for (i = x->first; i < x->end; i++) {
		rc = run_step(x, i);
		if (rc < 0) {
			account_failure(x, i, rc);
			return x->effect ? -IOUR_ERRNO__PARTIAL : (int)rc;
		}
		x->done++;
		x->r->steps_done = (uint32_t)x->done;
		x->effect = true;
		if (is_enforcing(x->pl->steps[i].op))
			x->enforcing = true;
	}
	return 0;
}

static int new_report(const struct iour_plan *pl, struct iour_report **out)
{
	struct iour_report *r = iour__calloc(1, sizeof(*r));

	if (!r)
		return -ENOMEM;
	if (iour__report_copy(r, &pl->rep)) {
		iour__free(r);
		return -ENOMEM;
	}
	r->flags &= ~IOUR_REPORT_PLANNED;
	r->steps_done = 0;
	*out = r;
	return 0;
}

static int finish(struct iour_report *r, int rc, struct iour_report **report)
{
	if (r && r->oom && rc == 0)
		rc = -ENOMEM;
	if (report)
		*report = r;
	else
		iour_report__free(r);
	return rc;
}

static bool plan_needs_priv(const struct iour_plan *pl, bool *sets_nnp)
{
	bool need = false;
	size_t i;

	*sets_nnp = false;
	for (i = 0; i < pl->n_task; i++) {
		if (pl->steps[i].op == IOUR_STEP_SET_NNP)
			*sets_nnp = true;
		if (pl->steps[i].op == IOUR_STEP_RESTRICTIONS ||
		    pl->steps[i].op == IOUR_STEP_BPF_FILTER)
			need = true;
	}
	return need;
}

/* Does the task part restrict io_uring (so that the peer guard has
 * something to protect)? */
static bool plan_restricts(const struct iour_plan *pl)
{
	size_t i;

	for (i = 0; i < pl->n_task; i++)
		if (is_enforcing(pl->steps[i].op))
			return true;
	return false;
}

/* Documented in include/iouring_restrict/plan.h */
int iour_plan__apply_task(const struct iour_plan *plan, const struct iour_apply_opts *opts,
			  struct iour_report **report)
{
	struct exec x;
	struct iour_report *r = NULL;
	struct iour__peers guard;
	bool sets_nnp, classic = false, guarded;
	int rc, threads;
	size_t i;

	iour__detail_reset(__func__);
	if (report)
		*report = NULL;
	if (!plan)
		return -EINVAL;
	rc = IOUR_OPTS_VALID(opts, iour_apply_opts);
	if (rc)
		return rc;
	if (IOUR_OPTS_GET(opts, flags, 0) & ~IOUR_APPLY_ALLOW_PTRACE)
		return iour__detail(__func__, -EINVAL,
				    "flags: only IOUR_APPLY_ALLOW_PTRACE is known");
	if (plan->target != IOUR_POLICY_TARGET_TASK)
		return iour__detail(
			__func__, -EINVAL,
			"apply_task: this plan targets a ring (use iour_plan__create_ring() "
			"or iour_plan__apply_ring())");
	rc = new_report(plan, &r);
	if (rc)
		return rc;
	if (plan->refused)
		return finish(r, -IOUR_ERRNO__UNSUPPORTED, report);
	rc = check_kernel(plan, 0, plan->n_task, r);
	if (rc)
		return finish(r, iour__err_public(rc, IOUR__ERRSET_PLAN_APPLY_TASK), report);

	/* Other threads are not covered by task restrictions. */
	threads = iour__count_threads();
	r->threads = threads > 0 ? threads : 0;
	if (threads > 1) {
		r->flags |= IOUR_REPORT_OTHER_THREADS;
		iour__report_add(r, IOUR_DECISION_NOTE, IOUR_REASON_THREADS,
				 IOUR_DECISION_NO_OPCODE, UINT32_MAX, threads,
				 "%d other thread(s) exist; they and the rings they create are "
				 "not restricted",
				 threads - 1);
		if (plan->attr[IOUR_POLICY_ATTR_THREADS] == IOUR_POLICY_THREADS_REFUSE) {
			r->status = IOUR_STATUS_NOT_ENFORCED;
			r->mechanism = IOUR_MECH_NONE;
			return finish(r, -EBUSY, report);
		}
	}

	/*
	 * The kernel answers the privilege and "already restricted" questions
	 * without side effects: a NULL task set gives -EPERM (restricted
	 * already), -EACCES (neither no_new_privs nor CAP_SYS_ADMIN) or
	 * -EFAULT (go ahead) on Linux 7.0+.
	 */
	for (i = 0; i < plan->n_task; i++)
		if (plan->steps[i].op == IOUR_STEP_RESTRICTIONS)
			classic = true;
	if (plan_needs_priv(plan, &sets_nnp)) {
		long pre = iour__register(-1, KIO_REGISTER_RESTRICTIONS, NULL, 1);

		if ((pre == -EPERM && classic) || (pre == -EACCES && !sets_nnp)) {
			r->status = IOUR_STATUS_NOT_ENFORCED;
			r->mechanism = IOUR_MECH_NONE;
			r->flags &= ~(IOUR_REPORT_TIGHTENED | IOUR_REPORT_NNP_SET);
			r->flags |= IOUR_REPORT_LOOSENED;
			r->error = (int32_t)pre;
			iour__report_add(
				r, IOUR_DECISION_FAILED,
				pre == -EPERM ? IOUR_REASON_ALREADY_RESTRICTED : IOUR_REASON_NNP,
				IOUR_DECISION_NO_OPCODE, UINT32_MAX, (int32_t)pre, "%s",
				pre == -EPERM ? "the task already has io_uring restrictions; a "
						"classic task set cannot be registered again" :
						"the task has neither no_new_privs nor "
						"CAP_SYS_ADMIN and the policy does not set "
						"no_new_privs: nothing applied");
			return finish(r, (int)pre, report);
		}
	}

	/* The peer guard (lib/enforce/peers.h): prepared now, applied after the steps
	 * (which set no_new_privs where the task needs it). */
	guarded = !(IOUR_OPTS_GET(opts, flags, 0) & IOUR_APPLY_ALLOW_PTRACE) &&
		  plan_restricts(plan) && iour__sys() == iour__sys_real();
	if (guarded) {
		rc = iour__peers_prepare(&guard);
		if (rc) {
			r->status = IOUR_STATUS_NOT_ENFORCED;
			r->mechanism = IOUR_MECH_NONE;
			r->error = rc;
			iour__report_add(
				r, IOUR_DECISION_FAILED, IOUR_REASON_STEP_FAILED,
				IOUR_DECISION_NO_OPCODE, UINT32_MAX, rc,
				"the peer guard could not be prepared (%s): nothing applied",
				iour_errname(rc));
			return finish(r, iour__err_public(rc, IOUR__ERRSET_PLAN_APPLY_TASK),
				      report);
		}
	}

	memset(&x, 0, sizeof(x));
	x.pl = plan;
	x.r = r;
	x.ring_fd = -1;
	x.first = 0;
	x.end = plan->n_task;
	memcpy(x.achieved, plan->achieved, sizeof(x.achieved));
	rc = run(&x);
	if (guarded && (rc || !x.enforcing)) {
		iour__peers_release(&guard);
	} else if (guarded) {
		char text[256];

		rc = iour__peers_apply(&guard, false);
		if (rc) {
			r->error = rc;
			r->flags |= IOUR_REPORT_STOPPED;
			iour__report_add(r, IOUR_DECISION_FAILED, IOUR_REASON_STEP_FAILED,
					 IOUR_DECISION_NO_OPCODE, UINT32_MAX, rc,
					 "the peer guard failed with %s: %s", iour_errname(rc),
					 iour__peers_describe(0, text, sizeof(text)));
			rc = -IOUR_ERRNO__PARTIAL;
		} else {
			iour__report_add(r, IOUR_DECISION_NOTE, IOUR_REASON_NONE,
					 IOUR_DECISION_NO_OPCODE, UINT32_MAX, (int32_t)guard.closes,
					 "peer guard: %s",
					 iour__peers_describe(guard.closes, text, sizeof(text)));
		}
	}
	return finish(r, iour__err_public(rc, IOUR__ERRSET_PLAN_APPLY_TASK), report);
}

static int ring_common(const char *function, const struct iour_plan *plan,
		       const struct iour_apply_opts *opts, struct iour_report **r)
{
	int rc;

	if (!plan)
		return -EINVAL;
	rc = IOUR_OPTS_VALID(opts, iour_apply_opts);
	if (rc)
		return rc;
	if (IOUR_OPTS_GET(opts, flags, 0) != 0)
		return iour__detail(function, -EINVAL, "flags: must be 0 for a ring");
	if (!plan->refused && !plan->has_ring_part)
		return iour__detail(function, -EINVAL,
				    "%s: this plan has no ring part (it targets the task: use "
				    "iour_plan__apply_task())",
				    function + strlen("iour_plan__"));
	return new_report(plan, r);
}

static void ring_exec_init(struct exec *x, const struct iour_plan *plan, struct iour_report *r,
			   int fd)
{
	memset(x, 0, sizeof(*x));
	x->pl = plan;
	x->r = r;
	x->ring_fd = fd;
	x->first = plan->n_task;
	x->end = plan->nsteps;
	memcpy(x->achieved, plan->achieved, sizeof(x->achieved));
	/* A task plan's ring part restricts only this ring. */
	r->mechanism &= ~(IOUR_MECH_COMPANION | IOUR_MECH_TASK);
	if (plan->ring_rep) {
		r->status = plan->ring_status;
		r->mechanism = plan->ring_mech;
		r->flags = plan->ring_flags & ~IOUR_REPORT_PLANNED;
	}
}

/* Documented in include/iouring_restrict/plan.h */
int iour_plan__apply_ring(const struct iour_plan *plan, int ring_fd,
			  const struct iour_apply_opts *opts, struct iour_report **report)
{
	struct iour_report *r = NULL;
	struct exec x;
	int rc;

	iour__detail_reset(__func__);
	if (report)
		*report = NULL;
	if (ring_fd < 0)
		return iour__detail(__func__, -EINVAL, "ring_fd %d: not a descriptor", ring_fd);
	rc = ring_common(__func__, plan, opts, &r);
	if (rc)
		return rc;
	if (plan->refused)
		return finish(r, -IOUR_ERRNO__UNSUPPORTED, report);
	rc = check_kernel(plan, plan->n_task, plan->nsteps, r);
	if (rc)
		return finish(r, iour__err_public(rc, IOUR__ERRSET_PLAN_APPLY_RING), report);
	ring_exec_init(&x, plan, r, ring_fd);
	rc = run(&x);
	return finish(r, iour__err_public(rc, IOUR__ERRSET_PLAN_APPLY_RING), report);
}

/* Documented in include/iouring_restrict/plan.h */
int iour_plan__create_ring(const struct iour_plan *plan, uint32_t entries, void *params,
			   const struct iour_apply_opts *opts, int *ring_fd,
			   struct iour_report **report)
{
	struct iour_report *r = NULL;
	struct kio_params local = { 0 };
	struct kio_params *pp = params ? params : &local;
	uint32_t caller_flags;
	struct exec x;
	long fd;
	int rc;

	iour__detail_reset(__func__);
	if (report)
		*report = NULL;
	if (!ring_fd)
		return -EINVAL;
	if (entries == 0)
		return iour__detail(__func__, -EINVAL, "entries 0: a ring needs at least 1");
	/* Only flags whose result is a descriptor: the executor restricts,
	 * enables or closes what io_uring_setup() returns. */
	if (pp->flags & ~IOUR__SETUP_FD_RESULT)
		return iour__detail(__func__, -EINVAL,
				    "setup flags 0x%x: 0x%x are unknown or give no descriptor",
				    pp->flags, pp->flags & ~IOUR__SETUP_FD_RESULT);
	rc = ring_common(__func__, plan, opts, &r);
	if (rc)
		return rc;
	if (plan->refused)
		return finish(r, -IOUR_ERRNO__UNSUPPORTED, report);
	rc = check_kernel(plan, plan->n_task, plan->nsteps, r);
	if (rc)
		return finish(r, iour__err_public(rc, IOUR__ERRSET_PLAN_CREATE_RING), report);
	/* The caller's flags are given back as they were: R_DISABLED is the
	 * executor's business, not a change to the caller's parameters. */
	caller_flags = pp->flags;
	pp->flags |= KIO_SETUP_R_DISABLED;
	fd = iour__setup(entries, pp);
	pp->flags = caller_flags;
	if (fd < 0) {
		r->status = IOUR_STATUS_NOT_ENFORCED;
		r->mechanism = IOUR_MECH_NONE;
		r->flags &= ~IOUR_REPORT_TIGHTENED;
		r->flags |= IOUR_REPORT_LOOSENED;
		r->error = (int32_t)fd;
		iour__report_add(r, IOUR_DECISION_FAILED, IOUR_REASON_STEP_FAILED,
				 IOUR_DECISION_NO_OPCODE, UINT32_MAX, (int32_t)fd,
				 "io_uring_setup failed with %s; no ring", iour_errname((int)fd));
		return finish(r, iour__err_public((int)fd, IOUR__ERRSET_PLAN_CREATE_RING), report);
	}
	ring_exec_init(&x, plan, r, (int)fd);
	rc = run(&x);
	if (rc) {
		/* Closing the ring undoes everything: nothing is left behind. */
		iour__close((int)fd);
		r->status = IOUR_STATUS_NOT_ENFORCED;
		r->mechanism = IOUR_MECH_NONE;
		r->flags &= ~IOUR_REPORT_TIGHTENED;
		r->flags |= IOUR_REPORT_LOOSENED;
		iour__report_add(r, IOUR_DECISION_NOTE, IOUR_REASON_STEP_FAILED,
				 IOUR_DECISION_NO_OPCODE, UINT32_MAX, r->error, "%s",
				 "the ring was closed again");
		return finish(r, iour__err_public(r->error, IOUR__ERRSET_PLAN_CREATE_RING), report);
	}
	*ring_fd = (int)fd;
	return finish(r, 0, report);
}
