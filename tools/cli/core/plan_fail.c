/* SPDX-License-Identifier: MIT */
/*
 * Why planning a policy failed, in the policy's and the kernel's terms, for
 * the commands that plan (compile, explain, lint, prove, check).
 */
#include <errno.h>
#include <string.h>

#include "cli.h"

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
