/* SPDX-License-Identifier: MIT */
/*
 * A kernel described from the library's tables, for commands that plan a
 * policy for a kernel other than the running one (compile --kernel).
 */
#include <errno.h>
#include <string.h>

#include "cli.h"

void cli_kernel_features(uint32_t kver, struct iour_features *f)
{
	memset(f, 0, sizeof(*f));
	f->sz = sizeof(*f);
	f->sysctl_group = -1;
	f->sysctl_disabled = -1;
	/* What a fresh process (no seccomp, no no_new_privs) would find. */
	if (kver < IOUR_KVER(5, 1)) {
		f->level = f->kernel_level = IOUR_LEVEL_NONE;
		f->setup_err = -38; /* ENOSYS: the kernel has no io_uring */
		return;
	}
	f->io_uring = IOUR_AVAIL_YES;
	f->setup_err = -14; /* EFAULT: io_uring_setup exists */
	f->level = IOUR_LEVEL_IO_URING;
	if (kver < IOUR_KVER(5, 10)) {
		/* No ring restrictions: iour_probe() reports no limits there
		 * (IOUR_LIMITS_NONE), and the planner, not knowing which
		 * opcodes exist, treats every one as present. */
		f->r_disabled_err = -22;
		f->enable_rings_err = -22;
		f->kernel_level = f->level;
		return;
	}
	f->op_last = (uint32_t)iour_opcode_last(kver);
	f->reg_last = (uint32_t)iour_register_op_last(kver);
	f->limits_source = IOUR_LIMITS_TABLE;
	f->level = IOUR_LEVEL_RING;
	f->ring_restrictions = IOUR_AVAIL_YES;
	f->ring_register_err = -22;
	f->enable_rings_err = -77; /* EBADFD */
	f->probe = IOUR_AVAIL_YES;
	if (kver >= IOUR_KVER(6, 13))
		f->blind_register = IOUR_AVAIL_YES;
	if (kver >= IOUR_KVER(6, 18)) {
		f->level = IOUR_LEVEL_QUERY;
		f->query = IOUR_AVAIL_YES;
		f->limits_source = IOUR_LIMITS_QUERY;
	}
	if (kver >= IOUR_KVER(7, 0)) {
		f->level = IOUR_LEVEL_TASK_BPF;
		f->split_gates = 1;
		f->task_restrictions = f->bpf_task = IOUR_AVAIL_NO_PRIV;
		f->bpf_ring = IOUR_AVAIL_YES;
		f->task_restrictions_err = -13; /* EACCES: no_new_privs missing */
		f->bpf_task_err = -13;
		f->bpf_ring_err = -14;
		f->pdu_socket = 12;
		f->pdu_openat = f->pdu_openat2 = 24;
	}
	if (kver >= IOUR_KVER(7, 2)) {
		f->level = IOUR_LEVEL_CONNECT;
		f->pdu_connect = 24;
	}
	f->kernel_level = f->level;
}

/*
 * Why iour_policy__plan() failed, in the policy's and the kernel's terms
 * (the errors of include/iouring_restrict/plan.h).  -EINVAL has two
 * causes: the kernel description or the policy; planning an empty policy
 * for the same kernel tells them apart.
 */
static const char *plan_why(int err, const struct iour_plan_opts *opts)
{
	struct iour_policy *empty = NULL;
	struct iour_plan *plan = NULL;
	int rc;

	switch (-err) {
	case EINVAL:
		rc = iour_policy__new(NULL, &empty);
		if (!rc)
			rc = iour_policy__plan(empty, opts, &plan);
		iour_plan__free(plan);
		iour_policy__free(empty);
		if (rc == -EINVAL)
			return "the planner refuses the kernel description itself (opcode limits "
			       "no kernel has, or a feature value iour_probe() never reports)";
		if (rc)
			return NULL;
		return "the policy allows request opcodes while its classic part leaves "
		       "SQE flags undecided in a way the kernel cannot express (decide them "
		       "in \"sqeFlags\")";
	case EACCES:
		return "the policy needs no_new_privs or CAP_SYS_ADMIN on the task path, the "
		       "task has neither, and the policy's \"noNewPrivs\" is \"keep\"";
	case EPERM:
		return "the task already has io_uring task restrictions, a classic set is "
		       "registered only once, and this kernel has no task filters to express "
		       "the policy's classic set with";
	case EBUSY:
		return "new rings inherit a classic set from the task's restrictions, and this "
		       "kernel has no ring filters to add the policy's rules with";
	case ECHILD:
	case EMFILE:
	case ENFILE:
	case EAGAIN:
		return "the probe of the running kernel (in a forked child) could not run; "
		       "nothing was cached: try again once processes or file descriptors are "
		       "available";
	default:
		return NULL;
	}
}

int cli_plan_fail(int err, const struct iour_plan_opts *opts, const char *target)
{
	const char *why = plan_why(err, opts);

	cli_fail(err, "planning the policy for %s", target);
	if (why)
		cli_msg("why: %s", why);
	return CLI_FAIL;
}
