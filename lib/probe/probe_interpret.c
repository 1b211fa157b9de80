/* SPDX-License-Identifier: MIT */
/*
 * The kernel probe's deciding half: the raw answers the probe child
 * recorded (lib/probe/probe.c) become struct iour_features and the real kernel
 * limits, by the errno-by-generation table (doc/kernel.md 5.4 and 5.5).
 * Pure: no system call, so the tests feed it the answers of every kernel
 * generation.
 *
 * One function per step, run in the order iour__probe_interpret() calls
 * them: later steps cross-check against earlier ones (doc/design.md,
 * "Kernel probe").
 */
#include <errno.h>
#include <string.h>

#include "probe_answers.h"

/* What the steps share while one answer is interpreted. */
struct interp {
	const struct iour__probe_raw *raw;
	struct iour_features *f;
	uint32_t absent; /* what a step not reached means */
	bool usable;     /* io_uring usable by this caller */
	bool ring;       /* per-ring restrictions present */
	bool has37;      /* QUERY reports IORING_REGISTER_BPF_FILTER (7.0+) */
	bool mismatch;   /* answers contradict each other */
};

/* Documented in probe_answers.h */
void iour__features_set_pdu(struct iour_features *f, uint32_t opcode, uint8_t size)
{
	/* f is the caller's own, writable struct. */
	uint32_t *named = (uint32_t *)(uintptr_t)iour__features_pdu_named(f, opcode);

	if (opcode < IOUR_ARRAY_SIZE(f->pdu_size))
		f->pdu_size[opcode] = size;
	if (named)
		*named = size;
}

bool iour__avail_present(uint32_t a)
{
	return a == IOUR_AVAIL_YES || a == IOUR_AVAIL_NO_PRIV || a == IOUR_AVAIL_RESTRICTED;
}

static unsigned popcount_bm(const struct iour__bitmap *b)
{
	unsigned n = 0;
	int i;

	for (i = 0; i < 4; i++)
		n += (unsigned)__builtin_popcountll(b->w[i]);
	return n;
}

/* Start: an empty answer with the parent's diagnostics (doc/kernel.md 5.1). */
static void interp_diag(struct interp *c, struct iour__kernel_limits *lim)
{
	const struct iour__probe_raw *raw = c->raw;
	struct iour_features *f = c->f;

	memset(f, 0, sizeof(*f));
	memset(lim, 0, sizeof(*lim));
	f->sz = sizeof(*f);
	if (!(raw->done & IOUR__RAW_END))
		f->flags |= IOUR_FEATURES_CHILD_DIED;
	f->child_signal = raw->child_signal;
	f->sysctl_disabled = raw->sysctl_disabled;
	f->sysctl_group = raw->sysctl_group;
	f->seccomp_mode = raw->seccomp_mode;
	f->no_new_privs = raw->no_new_privs;
}

/* Step (a), usable at all: -EFAULT, or 0 if a kernel ever accepted NULL
 * params (doc/kernel.md 5.1). */
static void interp_usable(struct interp *c)
{
	const struct iour__probe_raw *raw = c->raw;
	struct iour_features *f = c->f;
	/* What a step the child never reached means: unknown if it died. */
	const uint32_t unreached = (raw->done & IOUR__RAW_END) ? IOUR_AVAIL_NO : IOUR_AVAIL_UNKNOWN;

	if (!(raw->done & IOUR__RAW_SETUP)) {
		f->io_uring = IOUR_AVAIL_UNKNOWN;
	} else {
		f->setup_err = raw->setup;
		f->io_uring =
			(raw->setup == -EFAULT || raw->setup == 0) ? IOUR_AVAIL_YES : IOUR_AVAIL_NO;
	}
	c->usable = f->io_uring == IOUR_AVAIL_YES;
	c->absent = c->usable ? unreached :
				(f->io_uring == IOUR_AVAIL_UNKNOWN ? IOUR_AVAIL_UNKNOWN :
								     IOUR_AVAIL_NO);
}

/* Step (b), per-ring restrictions on the disabled ring (doc/kernel.md 5.4, 5.5). */
static void interp_ring(struct interp *c)
{
	const struct iour__probe_raw *raw = c->raw;
	struct iour_features *f = c->f;

	f->ring_restrictions = c->absent;
	if (!c->usable || !(raw->done & IOUR__RAW_RDIS))
		return;
	f->r_disabled_err = raw->rdis;
	if (raw->rdis == -EINVAL) {
		f->ring_restrictions = IOUR_AVAIL_NO;
	} else if (raw->rdis < 0) {
		f->ring_restrictions = IOUR_AVAIL_UNKNOWN; /* unexplained */
	} else {
		f->ring_register_err = raw->ring_reg_null;
		if (raw->ring_reg_null == -EINVAL) {
			f->ring_restrictions = IOUR_AVAIL_YES;
		} else if (raw->ring_reg_null == -EBUSY) {
			f->ring_restrictions = IOUR_AVAIL_RESTRICTED;
		} else {
			f->ring_restrictions = IOUR_AVAIL_UNKNOWN;
			c->mismatch = true;
		}
	}
}

/* Step (b) cross-check: ENABLE_RINGS on an enabled ring must agree with the
 * disabled ring (doc/kernel.md 5.4, 5.5). */
static void interp_ring_enable(struct interp *c)
{
	const struct iour__probe_raw *raw = c->raw;
	struct iour_features *f = c->f;

	if (!c->usable || !(raw->done & IOUR__RAW_PLAIN) || raw->plain != 0)
		return;
	f->enable_rings_err = raw->enable;
	if (raw->enable == -EBADFD || raw->enable == -EACCES) {
		/* 5.10+: must agree with the disabled ring. */
		if (f->ring_restrictions == IOUR_AVAIL_NO) {
			f->ring_restrictions = IOUR_AVAIL_UNKNOWN;
			c->mismatch = true;
		}
	} else if (raw->enable == -EINVAL) {
		if (iour__avail_present(f->ring_restrictions)) {
			f->ring_restrictions = IOUR_AVAIL_UNKNOWN;
			c->mismatch = true;
		}
	} else if (iour__avail_present(f->ring_restrictions)) {
		f->ring_restrictions = IOUR_AVAIL_UNKNOWN;
		c->mismatch = true;
	}
}

/* PROBE: the supported request opcodes (doc/kernel.md 5.2). */
static void interp_probe(struct interp *c)
{
	const struct iour__probe_raw *raw = c->raw;
	struct iour_features *f = c->f;

	f->probe = c->absent;
	if (!c->usable || !(raw->done & IOUR__RAW_PROBE))
		return;
	f->probe_err = raw->probe;
	if (raw->probe == 0 && raw->probe_last_op < 255) {
		f->probe = IOUR_AVAIL_YES;
		f->probe_last_op = raw->probe_last_op;
		memcpy(f->supported_ops, raw->probe_ops.w, sizeof(f->supported_ops));
		f->nr_supported_ops = popcount_bm(&raw->probe_ops);
	} else if (raw->probe == -EINVAL) {
		f->probe = IOUR_AVAIL_NO; /* before 5.6 */
	} else if (raw->probe == -EACCES) {
		f->probe = IOUR_AVAIL_RESTRICTED;
	} else {
		f->probe = IOUR_AVAIL_UNKNOWN;
	}
}

/* QUERY OPCODES on fd -1: -EINVAL before 6.18, -EBADF on 5.10-5.17 (fd
 * looked up before the opcode range check) (doc/kernel.md 5.3, 5.5). */
static void interp_query(struct interp *c)
{
	const struct iour__probe_raw *raw = c->raw;
	struct iour_features *f = c->f;

	f->query = c->absent;
	if (!c->usable || !(raw->done & IOUR__RAW_QUERY))
		return;
	f->query_err = raw->query ? raw->query : raw->query_result;
	if (raw->query == 0 && raw->query_result == 0 && raw->query_size >= 8 &&
	    raw->q.nr_request_opcodes > 0 && raw->q.nr_request_opcodes <= 256 &&
	    raw->q.nr_register_opcodes > KIO_REGISTER_QUERY && raw->q.nr_register_opcodes <= 256) {
		f->query = IOUR_AVAIL_YES;
		f->nr_query_opcodes = raw->q.nr_query_opcodes;
		f->feature_flags = raw->q.feature_flags;
		f->setup_flags = raw->q.ring_setup_flags;
		f->enter_flags = raw->q.enter_flags;
		f->sqe_flags = raw->q.sqe_flags;
	} else if (raw->query == -EINVAL || raw->query == -EBADF) {
		f->query = IOUR_AVAIL_NO;
	} else {
		f->query = IOUR_AVAIL_UNKNOWN;
		if (raw->query == 0)
			c->mismatch = true;
	}
}

/* Step (d), the answer of RESTRICTIONS(NULL) on fd -1: task restrictions
 * and the blind path (doc/kernel.md 5.4, 5.5). */
static void interp_task_answer(struct interp *c, int32_t t)
{
	struct iour_features *f = c->f;

	f->task_restrictions_err = t;
	if (t == -EFAULT || t == -EPERM || t == -EACCES) {
		if (c->has37) {
			f->task_restrictions = t == -EFAULT ? IOUR_AVAIL_YES :
					       t == -EPERM  ? IOUR_AVAIL_RESTRICTED :
							      IOUR_AVAIL_NO_PRIV;
			f->blind_register = IOUR_AVAIL_YES;
		} else {
			f->task_restrictions = IOUR_AVAIL_UNKNOWN;
			f->blind_register = IOUR_AVAIL_UNKNOWN;
			c->mismatch = true;
		}
	} else if (t == -EINVAL) {
		f->task_restrictions = IOUR_AVAIL_NO;
		if (c->has37) {
			f->task_restrictions = IOUR_AVAIL_UNKNOWN;
			c->mismatch = true;
		}
		/* 6.13-6.19: blind path without task restrictions;
		 * before 5.10: opcode 11 out of range. */
		f->blind_register = c->ring ? IOUR_AVAIL_YES : IOUR_AVAIL_NO;
	} else if (t == -EBADF) {
		/* 5.10-6.12: fd -1 looked up, no blind path. */
		f->task_restrictions = IOUR_AVAIL_NO;
		f->blind_register = IOUR_AVAIL_NO;
		if (f->query == IOUR_AVAIL_YES) {
			f->blind_register = IOUR_AVAIL_UNKNOWN;
			c->mismatch = true;
		}
	} else {
		f->task_restrictions = IOUR_AVAIL_UNKNOWN;
		f->blind_register = IOUR_AVAIL_UNKNOWN;
	}
}

/* Step (d), task restrictions and the blind path, whether reached or not
 * (doc/kernel.md 5.4, 5.5). */
static void interp_task(struct interp *c)
{
	struct iour_features *f = c->f;

	f->task_restrictions = c->absent;
	f->blind_register = c->absent;
	if (c->usable && (c->raw->done & IOUR__RAW_TASK))
		interp_task_answer(c, c->raw->task);
	if (f->query == IOUR_AVAIL_YES && f->blind_register != IOUR_AVAIL_UNKNOWN)
		f->blind_register = IOUR_AVAIL_YES; /* QUERY itself used fd -1 */
}

/* Step (c), ring-path filters, on the disabled ring (never gated)
 * (doc/kernel.md 5.4, 4.7). */
static void interp_bpf_ring(struct interp *c)
{
	const struct iour__probe_raw *raw = c->raw;
	struct iour_features *f = c->f;
	int32_t b;

	f->bpf_ring = c->absent;
	if (c->usable && raw->rdis != 0 && (raw->done & IOUR__RAW_RDIS))
		f->bpf_ring = raw->rdis == -EINVAL ? IOUR_AVAIL_NO : IOUR_AVAIL_UNKNOWN;
	if (!c->usable || raw->rdis != 0 || !(raw->done & IOUR__RAW_BPF_RING))
		return;
	b = raw->bpf_ring;
	f->bpf_ring_err = b;
	if (b == -EFAULT) {
		f->bpf_ring = c->has37 ? IOUR_AVAIL_YES : IOUR_AVAIL_UNKNOWN;
		c->mismatch |= !c->has37;
	} else if (b == -EACCES) {
		f->bpf_ring = c->has37 ? IOUR_AVAIL_RESTRICTED : IOUR_AVAIL_UNKNOWN;
		c->mismatch |= !c->has37;
	} else if (b == -EINVAL) {
		/* before 7.0, or CONFIG_IO_URING_BPF off */
		f->bpf_ring = IOUR_AVAIL_NO;
	} else {
		f->bpf_ring = IOUR_AVAIL_UNKNOWN;
	}
}

/* Step (c'), task-path filters.  The task path checks no_new_privs before
 * the config stub, so -EACCES alone does not prove support: the ring path
 * decides (doc/kernel.md 5.4, 5.5). */
static void interp_bpf_task(struct interp *c)
{
	const struct iour__probe_raw *raw = c->raw;
	struct iour_features *f = c->f;
	int32_t b;

	f->bpf_task = c->absent;
	if (!c->usable || !(raw->done & IOUR__RAW_BPF_TASK))
		return;
	b = raw->bpf_task;
	f->bpf_task_err = b;
	if (b == -EFAULT) {
		if (c->has37 && iour__avail_present(f->bpf_ring)) {
			f->bpf_task = IOUR_AVAIL_YES;
		} else {
			f->bpf_task = IOUR_AVAIL_UNKNOWN;
			c->mismatch = true;
		}
	} else if (b == -EACCES) {
		if (c->has37 && iour__avail_present(f->bpf_ring)) {
			f->bpf_task = IOUR_AVAIL_NO_PRIV;
		} else if (c->has37 && f->bpf_ring == IOUR_AVAIL_NO) {
			f->bpf_task = IOUR_AVAIL_NO; /* config off */
		} else {
			f->bpf_task = IOUR_AVAIL_UNKNOWN;
			c->mismatch |= !c->has37;
		}
	} else if (b == -EINVAL || b == -EBADF) {
		f->bpf_task = IOUR_AVAIL_NO;
	} else {
		f->bpf_task = IOUR_AVAIL_UNKNOWN;
	}
}

/* Step (e), payload sizes when the ring path works, and the filter-context
 * facts: SOCKET type flags (doc/kernel.md 4.2, 4.3, 5.4) and the task set's
 * gate over the blind path (doc/kernel.md 3.3). */
static void interp_payloads(struct interp *c)
{
	const struct iour__probe_raw *raw = c->raw;
	struct iour_features *f = c->f;
	const struct iour__schema_payload *pl;
	size_t i;

	if (f->bpf_ring == IOUR_AVAIL_YES) {
		for (i = 0; i < IOUR__PDU_N && (pl = iour__schema_payload_at(i)); i++)
			if ((raw->pdu_err[i] == -EMSGSIZE || raw->pdu_err[i] == 0) &&
			    raw->pdu[i] <= UINT8_MAX)
				iour__features_set_pdu(f, pl->opcode, (uint8_t)raw->pdu[i]);
		if ((raw->done & IOUR__RAW_SOCK_FLAGS) && raw->sock_flags != -EACCES)
			f->flags |= IOUR_FEATURES_SOCKET_FLAGS_HIDDEN;
	}
	if ((raw->done & IOUR__RAW_TASK_GATE) && raw->task_gate == -EACCES) {
		f->flags |= IOUR_FEATURES_TASK_SET_GATES_FILTERS;
	}
}

/* Does *f have every payload of the request schema that kernels of @level
 * fill, at least as large as the schema's (lib/base/schema.def)? */
static bool payloads_of_level(const struct iour_features *f, uint32_t level)
{
	const struct iour__schema_payload *pl;
	size_t i;

	for (i = 0; (pl = iour__schema_payload_at(i)); i++)
		if (pl->level <= level && f->pdu_size[pl->opcode] < pl->pdu_size)
			return false;
	return true;
}

/* The level the kernel offers (doc/kernel.md 6.5). */
static uint32_t offered_level(const struct interp *c)
{
	const struct iour_features *f = c->f;
	uint32_t level;

	if (!c->usable)
		return IOUR_LEVEL_NONE;
	if (!c->ring)
		return IOUR_LEVEL_IO_URING;
	if (f->query != IOUR_AVAIL_YES)
		return IOUR_LEVEL_RING;
	if (!(iour__avail_present(f->task_restrictions) && iour__avail_present(f->bpf_ring) &&
	      iour__avail_present(f->bpf_task) && payloads_of_level(f, IOUR_LEVEL_TASK_BPF)))
		return IOUR_LEVEL_QUERY;
	/* Above 7.0, a level is the payloads its kernels added. */
	for (level = IOUR_LEVEL_TASK_BPF; level < IOUR_LEVEL_MAX; level++)
		if (!payloads_of_level(f, level + 1))
			break;
	return level;
}

/* IOUR_FEATURE_LEVEL: only ever lower (doc/kernel.md 6.5). */
static void apply_forced(struct interp *c, uint32_t level)
{
	const int32_t force = c->raw->force;
	struct iour_features *f = c->f;

	f->kernel_level = f->level = level;
	if (force == -2 || (force >= 0 && (uint32_t)force > level))
		f->flags |= IOUR_FEATURES_FORCE_IGNORED;
	else if (force >= 0 && (uint32_t)force < level)
		f->level = (uint32_t)force;
}

/* Limits: QUERY, unless the level is forced below it; else PROBE plus the
 * register range test; else PROBE plus the table (doc/kernel.md 5.4, 6.2). */
static void interp_limits(struct interp *c, struct iour__kernel_limits *lim)
{
	const struct iour__probe_raw *raw = c->raw;
	struct iour_features *f = c->f;
	uint32_t op_last = 0, reg_last = 0, src = IOUR_LIMITS_NONE;

	if (f->query == IOUR_AVAIL_YES && f->level >= IOUR_LEVEL_QUERY) {
		op_last = raw->q.nr_request_opcodes;
		reg_last = raw->q.nr_register_opcodes;
		src = IOUR_LIMITS_QUERY;
		if (f->probe == IOUR_AVAIL_YES && f->probe_last_op + 1 != op_last) {
			c->mismatch = true;
			if (f->probe_last_op + 1 < op_last)
				op_last = f->probe_last_op + 1;
		}
	} else if (f->probe == IOUR_AVAIL_YES) {
		op_last = f->probe_last_op + 1;
		if ((raw->done & IOUR__RAW_RANGE) && raw->range == 0 &&
		    raw->range_reg_last > KIO_REGISTER_ENABLE_RINGS) {
			reg_last = raw->range_reg_last;
			src = IOUR_LIMITS_PROBE;
		} else {
			reg_last = iour__reg_last_for_op_last(op_last);
			src = reg_last ? IOUR_LIMITS_TABLE : IOUR_LIMITS_NONE;
		}
	}
	if (c->ring && reg_last) {
		f->op_last = op_last;
		f->reg_last = reg_last;
		f->limits_source = src;
		f->split_gates = reg_last > KIO_REGISTER_BPF_FILTER;
		lim->op_last = op_last;
		lim->reg_last = reg_last;
		lim->split = f->split_gates;
	}
}

/* A forced level: drop everything above `level` (doc/kernel.md 6.5). */
static void force_level(struct iour_features *f, uint32_t level)
{
	const struct iour__schema_payload *pl;
	size_t i;

	/* Payloads newer than the level (lib/base/schema.def). */
	for (i = 0; (pl = iour__schema_payload_at(i)); i++)
		if (pl->level > level)
			iour__features_set_pdu(f, pl->opcode, 0);
	if (level < IOUR_LEVEL_TASK_BPF) {
		f->task_restrictions = IOUR_AVAIL_NO;
		f->task_restrictions_err = 0;
		f->bpf_ring = IOUR_AVAIL_NO;
		f->bpf_ring_err = 0;
		f->bpf_task = IOUR_AVAIL_NO;
		f->bpf_task_err = 0;
	}
	if (level < IOUR_LEVEL_QUERY) {
		f->query = IOUR_AVAIL_NO;
		f->query_err = 0;
		f->nr_query_opcodes = 0;
		f->feature_flags = f->setup_flags = f->enter_flags = f->sqe_flags = 0;
	}
	if (level < IOUR_LEVEL_RING) {
		f->ring_restrictions = IOUR_AVAIL_NO;
		f->r_disabled_err = f->ring_register_err = f->enable_rings_err = 0;
		f->blind_register = IOUR_AVAIL_NO;
		f->op_last = f->reg_last = 0;
		f->limits_source = IOUR_LIMITS_NONE;
		f->split_gates = 0;
	}
	if (level < IOUR_LEVEL_IO_URING) {
		f->io_uring = IOUR_AVAIL_NO;
		f->setup_err = 0;
		f->probe = IOUR_AVAIL_NO;
		f->probe_err = 0;
		f->probe_last_op = f->nr_supported_ops = 0;
		memset(f->supported_ops, 0, sizeof(f->supported_ops));
	}
}

void iour__probe_interpret(const struct iour__probe_raw *raw, struct iour_features *f,
			   struct iour__kernel_limits *lim)
{
	struct interp c = { .raw = raw, .f = f };
	uint32_t level;

	interp_diag(&c, lim);
	interp_usable(&c);
	interp_ring(&c);
	interp_ring_enable(&c);
	c.ring = iour__avail_present(f->ring_restrictions);
	interp_probe(&c);
	interp_query(&c);
	/* Linux 7.0 added IORING_REGISTER_BPF_FILTER (37), and with it task
	 * restrictions and the split gates: only QUERY can tell 7.0's -EINVAL
	 * answers from older ones. */
	c.has37 =
		f->query == IOUR_AVAIL_YES && raw->q.nr_register_opcodes > KIO_REGISTER_BPF_FILTER;
	interp_task(&c);
	interp_bpf_ring(&c);
	interp_bpf_task(&c);
	interp_payloads(&c);
	level = offered_level(&c);
	apply_forced(&c, level);
	interp_limits(&c, lim);
	if (f->level < level) {
		f->flags |= IOUR_FEATURES_FORCED;
		force_level(f, f->level);
	}
	if (c.mismatch)
		f->flags |= IOUR_FEATURES_MISMATCH;
}
