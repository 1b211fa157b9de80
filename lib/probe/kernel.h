/* SPDX-License-Identifier: MIT */
/*
 * The kernel description: what the planner may know about a kernel and
 * the task it plans for, and its three sources.  Not installed.
 *
 * The planner never looks at the running kernel itself: it plans for a
 * struct iour__kernel, which comes from a feature level (the level's
 * representative kernel, with limits derived from the name tables in
 * names.c), from probe results (iour_probe()'s or an emulated kernel's),
 * or from the running kernel's cached probe.  So a plan can be compiled
 * for any kernel the library knows, and the executor compares the plan's
 * kernel with the one it is about to call (doc/design.md).
 */
#ifndef IOUR_LIB_KERNEL_H
#define IOUR_LIB_KERNEL_H

#include "base/internal.h"
#include "iouring_restrict/probe.h"

/* Where a kernel description came from (iour__kernel.origin). */
#define IOUR__KERNEL_PROBED 0
#define IOUR__KERNEL_FORCED 1
#define IOUR__KERNEL_EMULATED 2  /* tests: the emulated kernel behind the seam */
#define IOUR__KERNEL_DESCRIBED 3 /* iour_plan_opts.features, not probed */

/* Privilege for the task path: no_new_privs or CAP_SYS_ADMIN. */
#define IOUR__PRIV_NO 0
#define IOUR__PRIV_YES 1
#define IOUR__PRIV_UNKNOWN 2

/*
 * What the planner knows about the kernel and the task it plans for.
 */
struct iour__kernel {
	uint32_t origin;             /* IOUR__KERNEL_* */
	uint32_t level;              /* feature level 0..5 (probe.h's ladder) */
	uint32_t op_last;            /* IORING_OP_LAST, 0 if unknown */
	uint32_t reg_last;           /* IORING_REGISTER_LAST, 0 if unknown */
	bool io_uring;               /* the caller can create rings */
	bool split;                  /* 7.0 gate semantics (per-side) */
	bool ring_restrict;          /* R_DISABLED + RESTRICTIONS (5.10+) */
	bool ring_busy;              /* new rings inherit a classic set: -EBUSY */
	bool task_restrict;          /* classic task sets on fd -1 (7.0+) */
	bool task_restricted;        /* the task has restrictions already: -EPERM */
	bool ring_bpf;               /* BPF_FILTER on a ring (7.0+) */
	bool task_bpf;               /* BPF_FILTER on fd -1 (7.0+) */
	bool nnp;                    /* no_new_privs already set */
	uint32_t priv;               /* IOUR__PRIV_*: may the task path be used */
	uint8_t pdu[IOUR__NOPCODES]; /* payload size K per request opcode */
	bool sock_flags_hidden;      /* SOCKET type word without SOCK_* flags (7.3.4) */
	bool task_gates_filters;     /* a task set's register list gates fd -1 (7.3.4) */
	char name[96];               /* "Linux 7.0 (forced level 4)" and the like */
};

/* The representative kernel of a feature level (0..5), as forced. */
IOUR_INTERNAL int iour__kernel_for_level(uint32_t level, struct iour__kernel *k);

/* A kernel from probe results (iour_probe() or an emulated kernel's):
 * 0, -EINVAL (a field iour_probe() cannot give), -E2BIG (size). */
IOUR_INTERNAL int iour__kernel_from_features(const struct iour_features *f, struct iour__kernel *k);

/* The running kernel (cached probe; live no_new_privs). */
IOUR_INTERNAL int iour__kernel_probe(struct iour__kernel *k);

/* The kernel behind the installed syscall table: the running kernel, or,
 * when the tests installed an emulated one, that one probed afresh (in a
 * forked child, through the table, without touching the cache). */
IOUR_INTERNAL int iour__kernel_current(struct iour__kernel *k);

#endif /* IOUR_LIB_KERNEL_H */
