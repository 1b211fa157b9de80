/* SPDX-License-Identifier: MIT */
/*
 * Internal contract of the planner and the executor: steps, plans and the
 * planner's entry points.  Not installed.  The policy it plans from is in
 * policy_internal.h, the report a plan expects in report_internal.h.
 *
 * The planner never looks at the running kernel itself: it plans for a
 * kernel description (struct iour__kernel, lib/probe/kernel.h).
 */
#ifndef IOUR_LIB_PLANNER_H
#define IOUR_LIB_PLANNER_H

#include "base/internal.h"
#include "probe/kernel.h"
#include "policy/policy_internal.h"
#include "report_internal.h"
#include "iouring_restrict/plan.h"

/* ---- plans ---- */

/* Executor hints of a filter step when the kernel answers -EMSGSIZE with a
 * payload smaller than the program needs: replace it by `ret #0` (closed)
 * or `ret #1` (open). */
struct iour__step {
	uint32_t side; /* IOUR_STEP_TASK / IOUR_STEP_RING */
	uint32_t op;   /* enum iour_step_op */
	uint32_t call_op;
	uint32_t nr_args;
	uint32_t opcode;  /* request opcode of a filter, else UINT32_MAX */
	uint32_t entries; /* restriction entries */
	uint8_t *arg;     /* owned */
	size_t arg_len;
	struct iour_insn *insns; /* owned */
	size_t insn_cnt;
	uint32_t fallback; /* IOUR_POLICY_FALLBACK_* for a filter step */
	uint32_t intent;   /* what the opcode should be: IOUR__V_* */
};

/* Per-opcode verdicts (intended by the policy and achieved by the plan). */
enum {
	IOUR__V_DENY = 0,
	IOUR__V_ALLOW = 1,
	IOUR__V_FILTER = 2,
};

struct iour_plan {
	uint32_t target;            /* IOUR_POLICY_TARGET_*: what the policy restricts */
	struct iour__kernel kernel; /* the kernel it was planned for */
	uint32_t attr[IOUR_POLICY_ATTR__MAX];
	struct iour__step *steps;
	size_t nsteps, n_task;            /* steps[0 .. n_task-1] are task steps */
	bool refused;                     /* COMPAT_HARD said no */
	bool brokered;                    /* IOUR_PLAN_BROKERED: a task policy whose
					   * every ring a broker creates and restricts */
	bool has_ring_part;               /* apply_ring / create_ring are meaningful */
	uint8_t intent[IOUR__NOPCODES];   /* IOUR__V_* per opcode, as the policy says */
	uint8_t achieved[IOUR__NOPCODES]; /* IOUR__V_* per opcode, as planned */
	struct iour_report rep;           /* expected report */
	/* A task plan without task restrictions: status, mechanism and flags
	 * of a report on its ring part (rep describes the task). */
	bool ring_rep;
	uint32_t ring_status, ring_mech, ring_flags;
	/* Planned a moment ago for the running kernel's cached probe (the
	 * ring.h wrappers): the executor does not compare kernels again (on
	 * the real syscall table it would read the same cached probe). */
	bool for_running;
};

/* Internal planning flag, beside plan.h's public ones (which
 * iour_policy__plan() checks, so it never comes from a caller): the
 * plan's report is never shown (the ring.h wrappers read its steps and
 * CLAMPED decisions only), so the effect notes are not written.  The
 * effects still decide the LOOSENED verdict, so the steps, the status and
 * the compatibility verdict are those of a plan with notes. */
#define IOUR__PLAN_NO_EFFECT_NOTES (1U << 31)

/* Compile `p` for kernel `k` (the planner proper: no system call). */
IOUR_INTERNAL int iour__plan_build(const struct iour_policy *p, const struct iour__kernel *k,
				   struct iour_plan **out);

/* The same with IOUR_PLAN_BROKERED and IOUR__PLAN_NO_EFFECT_NOTES in
 * `flags` (the only flags read). */
IOUR_INTERNAL int iour__plan_build_flags(const struct iour_policy *p, const struct iour__kernel *k,
					 uint32_t flags, struct iour_plan **out);

/* The planner's kernel paths (pass 2). */
struct iour__mech {
	bool task;      /* task restrictions / task filters */
	bool ring;      /* ring part: classic set on a disabled ring (+ filters) */
	bool companion; /* seccomp companion */
	bool filters;   /* argument filters available on the chosen path */
};

/* What passes 1 to 3 decided (plan_choose.c), for pass 4 (plan.c). */
struct iour__choice {
	uint32_t op_last;               /* the kernel's IORING_OP_LAST, at most IOUR__NOPCODES */
	bool mentioned[IOUR__NOPCODES]; /* opcodes the policy names (classic list or filter) */
	bool restricts;                 /* the policy restricts anything at all */
	struct iour__mech m;
	uint32_t pdu[IOUR__NOPCODES];    /* payload bytes a filtered opcode's programs read */
	uint32_t fflags[IOUR__NOPCODES]; /* KIO_BPF_FILTER_* flags of its registrations */
	struct iour_ruleset eff;         /* the classic set for the achieved verdicts */
	bool any_filter;
	int last_filter; /* the last filtered opcode, -1 = none */
	bool deny_rest;  /* DENY_REST goes on the last filter */
	bool loosened, tightened;
};

/* Passes 1 to 3 for `pl` (kernel, attributes and report set up): intent,
 * mechanism and achieved verdicts, every difference recorded in pl->rep. */
IOUR_INTERNAL void iour__plan_choose(const struct iour_policy *p, const struct iour__kernel *k,
				     struct iour_plan *pl, struct iour__choice *c);

/* Does a classic set leave the SQE flags as the kernel does without one? */
static inline bool iour__flags_open(const struct iour_ruleset *rs)
{
	return rs->flags_allowed == KIO_SQE_VALID_FLAGS && rs->flags_required == 0;
}

/* Leave out the ring part's final ENABLE_RINGS step (for ring.h's
 * IOUR_RING_APPLY_NO_ENABLE: the caller enables the ring later). */
IOUR_INTERNAL void iour__plan_drop_enable(struct iour_plan *pl);

/* Record a decision that names no step and has no value; `fmt` takes one
 * string, `arg`. */
static inline void iour__plan_note(struct iour_report *r, uint32_t kind, uint32_t reason,
				   uint32_t op, const char *fmt, const char *arg)
{
	iour__report_add(r, kind, reason, op, UINT32_MAX, 0, fmt, arg);
}

/* Do steps [first, end) of `pl` mean on kernel `k` what the plan says?
 * 0, or -IOUR_ERRNO__KERNEL_MISMATCH with the reason in `why` (the rules
 * are in plan_exec.c and policy.h, "Compatible kernels"). */
IOUR_INTERNAL int iour__plan_compat(const struct iour_plan *pl, size_t first, size_t end,
				    const struct iour__kernel *k, char *why, size_t len);

#endif /* IOUR_LIB_PLANNER_H */
