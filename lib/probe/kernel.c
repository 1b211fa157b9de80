/* SPDX-License-Identifier: MIT */
/*
 * The kernel description (lib/probe/kernel.h): the one place that says what a
 * feature level, a probe result or the running kernel offers the planner
 * and the executor.
 */
#include <stdio.h>

#include "kernel.h"
#include "probe_answers.h"
#include "base/schema.h"
#include "base/sys.h"
#include "iouring_restrict/names.h"

#define PR_GET_NO_NEW_PRIVS_ 39

int iour__kernel_for_level(uint32_t level, struct iour__kernel *k)
{
	const struct iour__schema_payload *pl;
	uint32_t kver;
	size_t i;

	if (!k || level > IOUR_LEVEL_MAX)
		return -EINVAL;
	kver = iour__kernel_level_kver(level);
	memset(k, 0, sizeof(*k));
	k->origin = IOUR__KERNEL_FORCED;
	k->level = level;
	k->priv = IOUR__PRIV_UNKNOWN;
	snprintf(k->name, sizeof(k->name), "%s (forced level %u)", iour__kernel_level_name(level),
		 level);
	if (level < IOUR_LEVEL_IO_URING)
		return 0;
	k->io_uring = true;
	k->op_last = (uint32_t)iour_opcode_last(kver);
	k->reg_last = (uint32_t)iour_register_op_last(kver);
	k->ring_restrict = level >= IOUR_LEVEL_RING;
	if (level < IOUR_LEVEL_TASK_BPF)
		return 0;
	k->split = k->task_restrict = k->ring_bpf = k->task_bpf = true;
	/* Which payloads a level's kernels filter: lib/base/schema.def. */
	for (i = 0; (pl = iour__schema_payload_at(i)); i++)
		if (level >= pl->level)
			k->pdu[pl->opcode] = (uint8_t)pl->pdu_size;
	return 0;
}

/* Every field the planner reads holds a value iour_probe() can give: a
 * described kernel is refused, never clamped into another one. */
static bool features_in_range(const struct iour_features *f)
{
	const uint32_t avails[] = { f->io_uring, f->ring_restrictions, f->query,
				    f->probe,    f->blind_register,    f->task_restrictions,
				    f->bpf_ring, f->bpf_task };
	const uint64_t known = IOUR_FEATURES_FORCED | IOUR_FEATURES_FORCE_IGNORED |
			       IOUR_FEATURES_MISMATCH | IOUR_FEATURES_CHILD_DIED |
			       IOUR_FEATURES_SOCKET_FLAGS_HIDDEN |
			       IOUR_FEATURES_TASK_SET_GATES_FILTERS;
	size_t i;

	if (f->level > IOUR_LEVEL_MAX || f->kernel_level > IOUR_LEVEL_MAX || (f->flags & ~known) ||
	    f->limits_source > IOUR_LIMITS_TABLE || f->split_gates > 1 || f->no_new_privs < -1 ||
	    f->no_new_privs > 1 || f->seccomp_mode < -1 || f->seccomp_mode > 2 ||
	    f->sysctl_disabled < -1 || f->sysctl_disabled > 2)
		return false;
	for (i = 0; i < IOUR_ARRAY_SIZE(avails); i++)
		if (avails[i] > IOUR_AVAIL_UNKNOWN)
			return false;
	return true;
}

/* Does the caller's struct reach pdu_size[] (a 1.1 caller)? */
static bool features_have_pdu_array(const struct iour_features *f)
{
	return f->sz >= offsetof(struct iour_features, pdu_size) + sizeof(f->pdu_size);
}

/*
 * The payload sizes of a description, per opcode (probe.h, pdu_size): the
 * four opcodes with a 1.0 field take theirs and their pdu_size[] entries
 * are not read, so code written against 1.0 that edits a named field of a
 * probed description keeps meaning what it meant; every other opcode
 * takes its pdu_size[] entry when the caller's struct has the array.
 * Every size is one iour_probe() can give: at most 255, and none for an
 * opcode without a payload row in the request schema (lib/base/schema.def).
 * false if not.
 */
static bool features_pdus(const struct iour_features *f, uint8_t pdu[IOUR__NOPCODES])
{
	const bool array = features_have_pdu_array(f);
	uint32_t op;

	for (op = 0; op < IOUR__NOPCODES; op++) {
		const uint32_t *n = iour__features_pdu_named(f, op);
		bool row;

		/* Most opcodes: no 1.0 field and no size, so 0 whatever the
		 * schema says (a ring's setup plans through here). */
		if (!n && (!array || !f->pdu_size[op])) {
			pdu[op] = 0;
			continue;
		}
		row = iour__schema_payload_of(op) != NULL;
		if (n && *n > UINT8_MAX)
			return false;
		if (!array) {
			pdu[op] = n && row ? (uint8_t)*n : 0;
			continue;
		}
		if (!row && f->pdu_size[op])
			return false;
		pdu[op] = n ? (uint8_t)*n : f->pdu_size[op];
	}
	return true;
}

int iour__kernel_from_features(const struct iour_features *f, struct iour__kernel *k)
{
	if (!f || !k ||
	    f->sz < offsetof(struct iour_features, pdu_connect) + sizeof(f->pdu_connect))
		return -EINVAL;
	if (f->sz > IOUR_OPTS_MAX_SZ)
		return -E2BIG;
	/* Limits the restriction entries cannot be built for. */
	if (f->op_last > 256 || f->reg_last > 256 ||
	    (f->reg_last && f->reg_last <= KIO_REGISTER_ENABLE_RINGS))
		return -EINVAL;
	if (!features_in_range(f))
		return -EINVAL;
	memset(k, 0, sizeof(*k));
	if (!features_pdus(f, k->pdu))
		return -EINVAL;
	k->origin = IOUR__KERNEL_PROBED;
	k->level = f->level;
	k->io_uring = f->io_uring == IOUR_AVAIL_YES;
	k->ring_restrict = k->io_uring && iour__avail_present(f->ring_restrictions) && f->op_last &&
			   f->reg_last;
	k->ring_busy = f->ring_restrictions == IOUR_AVAIL_RESTRICTED;
	k->op_last = k->ring_restrict ? f->op_last : 0;
	k->reg_last = k->ring_restrict ? f->reg_last : 0;
	k->split = f->split_gates != 0;
	k->task_restrict = k->ring_restrict && iour__avail_present(f->task_restrictions);
	k->task_restricted = f->task_restrictions == IOUR_AVAIL_RESTRICTED;
	k->task_bpf = k->task_restrict && iour__avail_present(f->bpf_task);
	k->ring_bpf = k->ring_restrict && iour__avail_present(f->bpf_ring);
	k->nnp = f->no_new_privs == 1;
	k->priv = k->nnp || f->task_restrictions == IOUR_AVAIL_YES ? IOUR__PRIV_YES :
		  f->task_restrictions == IOUR_AVAIL_NO_PRIV       ? IOUR__PRIV_NO :
								     IOUR__PRIV_UNKNOWN;
	k->sock_flags_hidden = (f->flags & IOUR_FEATURES_SOCKET_FLAGS_HIDDEN) != 0;
	k->task_gates_filters = (f->flags & IOUR_FEATURES_TASK_SET_GATES_FILTERS) != 0;
	snprintf(k->name, sizeof(k->name), "the described kernel (level %u%s)", k->level,
		 (f->flags & IOUR_FEATURES_FORCED) ? ", lowered" : "");
	return 0;
}

/*
 * The running kernel: the cached probe (run in a forked child, so no ring
 * is ever created in this task), plus the live no_new_privs bit, which may
 * have been set since the probe ran.
 */
int iour__kernel_probe(struct iour__kernel *k)
{
	struct iour_features f;
	struct iour__kernel_limits lim;
	int rc;

	rc = iour__probe_cached(&f, &lim);
	if (rc)
		return rc;
	rc = iour__kernel_from_features(&f, k);
	if (rc)
		return rc;
	snprintf(k->name, sizeof(k->name), "the running kernel (level %u%s)", k->level,
		 (f.flags & IOUR_FEATURES_FORCED) ? ", lowered by IOUR_FEATURE_LEVEL" : "");
	if (iour__prctl(PR_GET_NO_NEW_PRIVS_, 0, 0, 0, 0) == 1) {
		k->nnp = true;
		k->priv = IOUR__PRIV_YES;
	}
	return 0;
}

/*
 * The kernel the executor is about to call: the cached probe, as for
 * planning.  When another syscall table is installed (an emulated kernel
 * in the library's tests), the cache describes the real kernel, not the
 * one behind the table: probe that one afresh, in a forked child, through
 * the table, without touching the cache.
 */
int iour__kernel_current(struct iour__kernel *k)
{
	struct iour__probe_raw raw;
	struct iour__kernel_limits lim;
	struct iour_features f;
	int rc;

	if (iour__sys() == iour__sys_real())
		return iour__kernel_probe(k);
	memset(&raw, 0, sizeof(raw));
	iour__probe_read_force(&raw);
	rc = iour__probe_run(&raw);
	if (rc)
		return rc;
	iour__probe_interpret(&raw, &f, &lim);
	return iour__kernel_from_features(&f, k);
}

/* The level of Linux @kver (probe.h's ladder: the first version of each
 * level), as a fresh process would find it. */
static uint32_t level_of_kver(uint32_t kver)
{
	uint32_t level = IOUR_LEVEL_NONE;
	uint32_t l;

	for (l = IOUR_LEVEL_IO_URING; l <= IOUR_LEVEL_MAX; l++)
		if (kver >= iour__kernel_level_first(l))
			level = l;
	return level;
}

/* Payload sizes of the request schema (lib/base/schema.def) for a level. */
static void describe_pdus(uint32_t level, struct iour_features *f)
{
	const struct iour__schema_payload *pl;
	size_t i;

	for (i = 0; (pl = iour__schema_payload_at(i)); i++)
		if (level >= pl->level)
			iour__features_set_pdu(f, pl->opcode, (uint8_t)pl->pdu_size);
}

/*
 * What iour_probe() finds on Linux @kver for a fresh process (no seccomp,
 * no no_new_privs), from the tables: doc/kernel.md gives the errnos of
 * each probing call per version.
 */
static void describe(uint32_t kver, struct iour_features *f)
{
	uint32_t level = level_of_kver(kver);

	memset(f, 0, sizeof(*f));
	f->sz = sizeof(*f);
	f->sysctl_group = -1;
	f->sysctl_disabled = -1;
	if (level == IOUR_LEVEL_NONE) {
		f->setup_err = -ENOSYS; /* the kernel has no io_uring */
		return;
	}
	f->io_uring = IOUR_AVAIL_YES;
	f->setup_err = -EFAULT; /* io_uring_setup exists */
	f->level = f->kernel_level = level;
	/* Before 7.0: no task restrictions (fd -1 is -EBADF from 5.10 to
	 * 6.12, which have no ring-less register path), no BPF_FILTER. */
	f->task_restrictions_err =
		kver >= (uint32_t)iour_kernel_generation(IOUR_KGEN_RING_RESTRICTIONS) &&
				kver < (uint32_t)iour_kernel_generation(IOUR_KGEN_BLIND_REGISTER) ?
			-EBADF :
			-EINVAL;
	f->bpf_ring_err = f->bpf_task_err = -EINVAL;
	if (level == IOUR_LEVEL_IO_URING) {
		/* No ring restrictions: iour_probe() reports no limits there
		 * (IOUR_LIMITS_NONE), and the planner, not knowing which
		 * opcodes exist, treats every one as present. */
		f->r_disabled_err = -EINVAL;
		f->enable_rings_err = -EINVAL;
		return;
	}
	f->op_last = (uint32_t)iour_opcode_last(kver);
	f->reg_last = (uint32_t)iour_register_op_last(kver);
	f->limits_source = level >= IOUR_LEVEL_QUERY ? IOUR_LIMITS_QUERY : IOUR_LIMITS_TABLE;
	f->ring_restrictions = IOUR_AVAIL_YES;
	f->ring_register_err = -EINVAL;
	f->enable_rings_err = -EBADFD;
	f->probe = IOUR_AVAIL_YES;
	if (kver >= (uint32_t)iour_kernel_generation(IOUR_KGEN_BLIND_REGISTER))
		f->blind_register = IOUR_AVAIL_YES;
	if (level >= IOUR_LEVEL_QUERY)
		f->query = IOUR_AVAIL_YES;
	if (level >= IOUR_LEVEL_TASK_BPF) {
		f->split_gates = 1;
		f->task_restrictions = f->bpf_task = IOUR_AVAIL_NO_PRIV;
		f->bpf_ring = IOUR_AVAIL_YES;
		f->task_restrictions_err = -EACCES; /* no_new_privs missing */
		f->bpf_task_err = -EACCES;
		f->bpf_ring_err = -EFAULT;
	}
	describe_pdus(level, f);
}

/* Documented in include/iouring_restrict/probe.h */
int iour_kernel_describe(uint32_t kver, struct iour_features *out)
{
	struct iour_features f;

	if (!out || out->sz < offsetof(struct iour_features, kernel_level) ||
	    out->sz > IOUR_OPTS_MAX_SZ)
		return -EINVAL;
	describe(kver, &f);
	/* The fields that fit in sz, whole, as iour_probe() copies them. */
	iour__features_copy_out(&f, out);
	return 0;
}
