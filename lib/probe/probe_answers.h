/* SPDX-License-Identifier: MIT */
/*
 * The kernel probe's internals, shared between its two halves (probe.c
 * asks and caches, probe_interpret.c decides), with other modules (limits
 * for clamping) and with the tests (raw answers and their interpretation).
 * Not installed.
 */
#ifndef IOUR_LIB_PROBE_ANSWERS_H
#define IOUR_LIB_PROBE_ANSWERS_H

#include "base/internal.h"
#include "policy/ruleset_internal.h"
#include "base/schema.h"
#include "iouring_restrict/names.h"
#include "iouring_restrict/probe.h"

/* Bits of iour__probe_raw::done: the steps the probe child completed. */
#define IOUR__RAW_SETUP (1U << 0)       /* setup(1, NULL) */
#define IOUR__RAW_RDIS (1U << 1)        /* disabled ring: create, RESTRICTIONS(NULL) */
#define IOUR__RAW_PROBE (1U << 2)       /* PROBE (disabled ring, else the enabled one) */
#define IOUR__RAW_BPF_RING (1U << 3)    /* BPF_FILTER(NULL) and payload sizes */
#define IOUR__RAW_PLAIN (1U << 4)       /* enabled ring: create, ENABLE_RINGS */
#define IOUR__RAW_QUERY (1U << 5)       /* QUERY on fd -1 */
#define IOUR__RAW_TASK (1U << 6)        /* RESTRICTIONS(NULL) on fd -1 */
#define IOUR__RAW_BPF_TASK (1U << 7)    /* BPF_FILTER(NULL) on fd -1 */
#define IOUR__RAW_RANGE (1U << 8)       /* register-opcode range test */
#define IOUR__RAW_END (1U << 9)         /* the child reached its end */
#define IOUR__RAW_SOCK_FLAGS (1U << 10) /* SOCKET type flags seen by a filter */
#define IOUR__RAW_TASK_GATE (1U << 11)  /* task set {ENABLE_RINGS}, then BPF_FILTER(NULL) */

/* Payload-size probes: one per payload row of the request schema, in its
 * order (lib/base/schema.def). */
#define IOUR__PDU_N IOUR__SCHEMA_NPAYLOADS

/*
 * The kernel's raw answers, exactly as the probe child saw them (each a
 * syscall result: 0 / fd-made-0 / -errno), plus the parent's diagnostics.
 * The child only records; iour__probe_interpret() decides what they mean,
 * so the interpretation can be tested with answers of any kernel
 * generation.
 */
struct iour__probe_raw {
	uint32_t done;         /* IOUR__RAW_* */
	int32_t child_signal;  /* set by the parent */
	int32_t setup;         /* setup(1, NULL) */
	int32_t rdis;          /* setup(1, {R_DISABLED}): 0 or -errno */
	int32_t ring_reg_null; /* register(rdis, RESTRICTIONS, NULL, 1) */
	int32_t probe;         /* register(ring, PROBE, buf, 256) */
	uint32_t probe_last_op;
	uint32_t probe_ops_len;
	struct iour__bitmap probe_ops;
	int32_t bpf_ring; /* register(rdis, BPF_FILTER, NULL, 1) */
	int32_t pdu_err[IOUR__PDU_N];
	uint32_t pdu[IOUR__PDU_N]; /* written-back pdu_size */
	int32_t sock_flags;        /* SOCKET(bad family, DGRAM|NONBLOCK) under a filter
			     * denying SOCK_NONBLOCK in the type: -EACCES if
			     * the payload carries the flag */
	int32_t plain;             /* setup(1, {0}): 0 or -errno */
	int32_t enable;            /* register(plain, ENABLE_RINGS, NULL, 0) */
	int32_t query;             /* register(-1, QUERY, &hdr, 0) */
	int32_t query_result;      /* hdr.result */
	uint32_t query_size;       /* hdr.size after the call */
	struct kio_query_opcode q;
	int32_t task;      /* register(-1, RESTRICTIONS, NULL, 1) */
	int32_t bpf_task;  /* register(-1, BPF_FILTER, NULL, 1) */
	int32_t task_gate; /* the same after a task set {REGISTER_OP ENABLE_RINGS}:
			    * -EACCES if the set gates the blind path */
	int32_t range;     /* 0, or the unexpected -errno that stopped it */
	uint32_t range_reg_last;
	/* Filled by the parent. */
	int32_t sysctl_disabled;
	int32_t sysctl_group;
	int32_t seccomp_mode;
	int32_t no_new_privs;
	int32_t force; /* IOUR_FEATURE_LEVEL: -1 unset, -2 invalid, else 0..255 */
};

/* Run the probe child (fork, wait) and fill *raw: the child's answers and
 * the parent-side diagnostics, read while the child runs; `force` is read
 * by the caller first (iour__probe_read_force()).  0; -ENOMEM / -EAGAIN / -ENFILE
 * (shared page or fork); -ECHILD (no child for another reason); or the
 * resource errno one of the child's calls got (iour__probe_resource_err()),
 * in which case *raw must not be interpreted as a kernel answer. */
IOUR_INTERNAL int iour__probe_run(struct iour__probe_raw *raw);

/* The probing steps themselves, as the child runs them (exposed so that
 * tests can run them in a child of their own with a faked kernel). */
IOUR_INTERNAL void iour__probe_steps(struct iour__probe_raw *raw);

/* The first resource errno (-EMFILE, -ENFILE, -ENOMEM, -EAGAIN) among the
 * answers of the steps the child completed, or 0.  Such an answer is the
 * caller's shortage, not a fact about the kernel. */
IOUR_INTERNAL int iour__probe_resource_err(const struct iour__probe_raw *raw);

/* Read IOUR_FEATURE_LEVEL into raw->force (the child's steps read it). */
IOUR_INTERNAL void iour__probe_read_force(struct iour__probe_raw *raw);

/*
 * Interpret raw answers (probe_interpret.c): fill the full-size *f (f->sz
 * is set to sizeof(*f)) and the real kernel limits *lim (which ignore the
 * forced level; zero when unknown).
 */
IOUR_INTERNAL void iour__probe_interpret(const struct iour__probe_raw *raw, struct iour_features *f,
					 struct iour__kernel_limits *lim);

/*
 * The limits of the running kernel, for translating restriction sets (from
 * the cached probe).  0, -IOUR_ERRNO__UNSUPPORTED when the effective level
 * is below IOUR_LEVEL_RING or the limits are unknown, or the probe's
 * -ENOMEM / -EMFILE / -ENFILE / -EAGAIN / -ECHILD.
 */
IOUR_INTERNAL int iour__probe_limits(struct iour__kernel_limits *lim);

/* The effective feature level and limits from the cache (probing once). */
IOUR_INTERNAL int iour__probe_cached(struct iour_features *f, struct iour__kernel_limits *lim);

/* Number of probe children run by this process (for the caching tests). */
IOUR_INTERNAL unsigned long iour__probe_runs(void);

/* The field of struct iour_features that spelled an opcode's payload size
 * in 1.0 (pdu_socket ...), or NULL for an opcode without one.  Inline: a
 * ring's setup asks it for every opcode (lib/probe/kernel.c). */
static inline const uint32_t *iour__features_pdu_named(const struct iour_features *f,
						       uint32_t opcode)
{
	/* The 1.0 ABI's fields (include/iouring_restrict/probe.h); every
	 * payload added since is in pdu_size[] only. */
	switch (opcode) {
	case IOUR_OP_SOCKET:
		return &f->pdu_socket;
	case IOUR_OP_OPENAT:
		return &f->pdu_openat;
	case IOUR_OP_OPENAT2:
		return &f->pdu_openat2;
	case IOUR_OP_CONNECT:
		return &f->pdu_connect;
	default:
		return NULL;
	}
}

/* Record an opcode's payload size in *f: its pdu_size[] entry and, where
 * it has one, its 1.0 field. */
IOUR_INTERNAL void iour__features_set_pdu(struct iour_features *f, uint32_t opcode, uint8_t size);

/* Copy *src to the caller's *out up to out->sz, as iour_probe() does:
 * whole fields only, zeros past the struct this library knows. */
IOUR_INTERNAL void iour__features_copy_out(const struct iour_features *src,
					   struct iour_features *out);

/* Does the feature exist, usable or not by this caller (IOUR_AVAIL_YES,
 * _NO_PRIV or _RESTRICTED)? */
IOUR_INTERNAL bool iour__avail_present(uint32_t avail);

#endif /* IOUR_LIB_PROBE_ANSWERS_H */
