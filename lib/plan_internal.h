/* SPDX-License-Identifier: MIT */
/*
 * Internal contract of the policy, the planner, the executor and the
 * report.  Not installed.
 *
 * The planner never looks at the running kernel itself: its input is a
 * TARGET description (struct iour__target) that can come from the probe,
 * from a forced feature level, or be written by hand for an emulated
 * kernel.  So a plan can be compiled for any kernel the library knows.
 */
#ifndef IOUR_LIB_PLAN_INTERNAL_H
#define IOUR_LIB_PLAN_INTERNAL_H

#include "internal.h"
#include "ruleset_internal.h"
#include "iouring_restrict/cbpf.h"
#include "iouring_restrict/plan.h"
#include "iouring_restrict/policy.h"
#include "iouring_restrict/report.h"

#define IOUR__NOPS 256

/* Kinds of a per-opcode program (the values of enum iour_prog_kind). */
enum {
	IOUR__PK_FILTER = 0,
	IOUR__PK_ALLOW = 1,
	IOUR__PK_DENY = 2,
};

/* One opcode's argument filter as the planner sees it. */
struct iour__pprog {
	uint32_t kind;     /* IOUR__PK_* */
	uint32_t pdu_size; /* payload bytes the program reads (U) */
	size_t cnt;
	struct iour_insn *insns; /* owned; NULL unless kind == FILTER */
};

struct iour_policy {
	struct iour_ruleset *rs;               /* classic part, NULL = none */
	struct iour__pprog *progs[IOUR__NOPS]; /* argument filters, NULL = none */
	uint32_t attr[IOUR_POLICY_ATTR__MAX];
};

/* Where a target description came from (iour__target.origin). */
#define IOUR__TGT_PROBED 0
#define IOUR__TGT_FORCED 1
#define IOUR__TGT_EMULATED 2

/* Privilege for the task path: no_new_privs or CAP_SYS_ADMIN. */
#define IOUR__PRIV_NO 0
#define IOUR__PRIV_YES 1
#define IOUR__PRIV_UNKNOWN 2

/*
 * What the planner knows about the kernel and the task it plans for.
 */
struct iour__target {
	uint32_t origin;         /* IOUR__TGT_* */
	uint32_t level;          /* feature level 0..5 (probe.h's ladder) */
	uint32_t op_last;        /* IORING_OP_LAST, 0 if unknown */
	uint32_t reg_last;       /* IORING_REGISTER_LAST, 0 if unknown */
	bool io_uring;           /* the caller can create rings */
	bool split;              /* 7.0 gate semantics (per-side) */
	bool ring_restrict;      /* R_DISABLED + RESTRICTIONS (5.10+) */
	bool ring_busy;          /* new rings inherit a classic set: -EBUSY */
	bool task_restrict;      /* classic task sets on fd -1 (7.0+) */
	bool task_restricted;    /* the task has restrictions already: -EPERM */
	bool ring_bpf;           /* BPF_FILTER on a ring (7.0+) */
	bool task_bpf;           /* BPF_FILTER on fd -1 (7.0+) */
	bool nnp;                /* no_new_privs already set */
	uint32_t priv;           /* IOUR__PRIV_*: may the task path be used */
	uint8_t pdu[IOUR__NOPS]; /* payload size K per request opcode */
	char name[96];           /* "Linux 7.0 (forced level 4)" and the like */
};

/* The representative target of a feature level (0..5), as forced. */
IOUR_INTERNAL int iour__target_for_level(uint32_t level, struct iour__target *t);

/* A target from probe results (iour_probe() or an emulated kernel's). */
struct iour_features;
IOUR_INTERNAL int iour__target_from_features(const struct iour_features *f, struct iour__target *t);

/* The running kernel's target (cached probe; live no_new_privs). */
IOUR_INTERNAL int iour__target_probe(struct iour__target *t);

/* ---- plans ---- */

/* Executor hints of a filter step when the kernel answers -EMSGSIZE with a
 * payload smaller than the program needs: replace it by `ret #0` (closed)
 * or `ret #1` (open). */
struct iour__step {
	uint32_t target; /* IOUR_STEP_TASK / IOUR_STEP_RING */
	uint32_t op;     /* enum iour_step_op */
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

struct iour__decision {
	uint32_t kind, reason, opcode, step;
	int32_t value;
	char *text; /* owned */
};

struct iour_report {
	uint32_t status;
	uint32_t mechanism;
	uint32_t flags;
	int32_t error;
	uint32_t steps_done;
	uint32_t steps_total;
	int32_t threads;
	struct iour__decision *d;
	size_t nd, capd;
	bool oom; /* a decision could not be recorded */
};

struct iour_plan {
	uint32_t target_kind; /* IOUR_POLICY_TARGET_* */
	struct iour__target tgt;
	uint32_t attr[IOUR_POLICY_ATTR__MAX];
	struct iour__step *steps;
	size_t nsteps, n_task;        /* steps[0 .. n_task-1] are task steps */
	bool refused;                 /* COMPAT_HARD said no */
	bool has_ring_part;           /* apply_ring / create_ring are meaningful */
	uint8_t intent[IOUR__NOPS];   /* IOUR__V_* per opcode, as the policy says */
	uint8_t achieved[IOUR__NOPS]; /* IOUR__V_* per opcode, as planned */
	struct iour_report rep;       /* expected report */
	/* A task plan without task restrictions: status, mechanism and flags
	 * of a report on its ring part (rep describes the task). */
	bool ring_rep;
	uint32_t ring_status, ring_mech, ring_flags;
};

/* Compile `p` for target `t` (the planner proper: no system call). */
IOUR_INTERNAL int iour__plan_build(const struct iour_policy *p, const struct iour__target *t,
				   struct iour_plan **out);

/* ---- reports ---- */

IOUR_INTERNAL void iour__report_init(struct iour_report *r);
IOUR_INTERNAL void iour__report_fini(struct iour_report *r);
IOUR_INTERNAL int iour__report_copy(struct iour_report *dst, const struct iour_report *src);
/* Record a decision (printf-style text).  Allocation failures set r->oom. */
IOUR_INTERNAL void iour__report_add(struct iour_report *r, uint32_t kind, uint32_t reason,
				    uint32_t opcode, uint32_t step, int32_t value, const char *fmt,
				    ...) __attribute__((format(printf, 7, 8)));

/* Text helpers shared by the describers: a growing buffer. */
struct iour__sb {
	char *buf;
	size_t len, cap;
	bool oom;
};
IOUR_INTERNAL void iour__sb_printf(struct iour__sb *sb, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
IOUR_INTERNAL void iour__sb_report(struct iour__sb *sb, const struct iour_report *r,
				   const char *indent);
/* Finish two-call sizing from a built buffer (frees it). */
IOUR_INTERNAL int iour__sb_out(struct iour__sb *sb, char *buf, size_t *len);

/* Name of a request opcode for messages ("SOCKET", or "opcode 70"). */
IOUR_INTERNAL const char *iour__op_label(uint32_t op, char *tmp, size_t tmplen);

/* Do steps [first, end) of `pl` mean on kernel `k` what the plan says?
 * 0, or -IOUR_ERRNO__KERNEL_MISMATCH with the reason in `why` (the rules
 * are in plan_exec.c and policy.h, "Compatible kernels"). */
IOUR_INTERNAL int iour__plan_compat(const struct iour_plan *pl, size_t first, size_t end,
				    const struct iour__target *k, char *why, size_t len);

/* Count the threads of the calling process (>= 1, or -errno). */
IOUR_INTERNAL int iour__plan_threads(void);

/* The companion's seccomp program for errno `err`; returns the count or
 * -errno.  `out` holds IOUR__PLAN_COMPANION_MAX instructions. */
#define IOUR__PLAN_COMPANION_MAX 16
IOUR_INTERNAL int iour__plan_companion_prog(uint32_t err, struct iour_insn *out);

#endif /* IOUR_LIB_PLAN_INTERNAL_H */
