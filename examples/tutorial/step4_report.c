/* SPDX-License-Identifier: MIT */
/*
 * Tutorial step 4 (doc/tutorial.md): read the report.
 *
 * The policy of step 3 is planned twice and nothing is applied: for the
 * running kernel, and for a Linux 7.2 kernel (feature level 5, forced).
 * For each plan the program prints the report the plan expects (status,
 * mechanism, flags, then every decision with its reason), the way a
 * program decides whether what it gets is enough.  It checks that the 7.2
 * plan is fully enforced by the task mechanism, and that the plan for the
 * running kernel says what this kernel can do.
 */
#include <errno.h>
#include <liburing.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>

#include <iouring_restrict/iouring_restrict.h>

/* Prints a report; returns its status (or a negative errno). */
static int show(const char *title, const struct iour_plan *plan)
{
	const struct iour_report *rep = iour_plan__report(plan);
	int status = iour_report__status(rep);
	int mech = iour_report__mechanism(rep);
	int flags = iour_report__flags(rep);
	int n = iour_report__decision_cnt(rep);
	int i;

	if (status < 0 || mech < 0 || flags < 0 || n < 0)
		return -EINVAL;
	printf("step4: %s: %s; mechanism%s%s%s%s%s\n", title, iour_status_str(status),
	       mech == 0 ? " none" : "", mech & IOUR_MECH_TASK ? " task" : "",
	       mech & IOUR_MECH_RING ? " ring-filters" : "",
	       mech & IOUR_MECH_RING_DISABLED ? " ring-set" : "",
	       mech & IOUR_MECH_COMPANION ? " seccomp-companion" : "");
	printf("step4: %s: flags%s%s%s\n", title, flags & IOUR_REPORT_LOOSENED ? " loosened" : "",
	       flags & IOUR_REPORT_TIGHTENED ? " tightened" : "",
	       flags & IOUR_REPORT_NNP_SET ? " no_new_privs" : "");
	for (i = 0; i < n; i++) {
		struct iour_decision d = { .sz = sizeof(d) };

		if (iour_report__decision(rep, (size_t)i, &d))
			return -EINVAL;
		printf("step4: %s: decision %d: %s: %s\n", title, i, iour_decision_kind_str(d.kind),
		       d.text);
	}
	return status;
}

static int plan_for(const struct iour_policy *pol, int level, struct iour_plan **plan)
{
	IOUR_OPTS(iour_plan_opts, o, .flags = IOUR_PLAN_FORCE_LEVEL, .level = (uint32_t)level);

	return iour_policy__plan(pol, level < 0 ? NULL : &o, plan);
}

int main(void)
{
	struct iour_cmp unix_only = { .sz = sizeof(unix_only),
				      .field = IOUR_FIELD_SOCKET_FAMILY,
				      .op = IOUR_CMP_EQ,
				      .value = AF_UNIX };
	struct iour_ruleset *rs = NULL;
	struct iour_filter *f = NULL;
	struct iour_policy *pol = NULL;
	struct iour_plan *here = NULL, *future = NULL;
	int r, level, s_here, s_future, ok = 1;

	level = iour_feature_level();
	if (level < 0) {
		fprintf(stderr, "step4: probe: %s\n", iour_strerror_desc(level));
		return 1;
	}
	if ((r = iour_ruleset__new(NULL, &rs)) ||
	    (r = iour_ruleset__allow_sqe_op_name(rs, "NOP")) ||
	    (r = iour_ruleset__allow_sqe_op_name(rs, "SOCKET")) ||
	    (r = iour_ruleset__set_sqe_flags(rs, 0, 0)) || (r = iour_filter__new(NULL, &f)) ||
	    (r = iour_filter__add_rule(f, IORING_OP_SOCKET, IOUR_ALLOW, &unix_only, 1)) ||
	    (r = iour_filter__set_default(f, IORING_OP_SOCKET, IOUR_DENY)) ||
	    (r = iour_policy__new(NULL, &pol)) || (r = iour_policy__set_ruleset(pol, rs)) ||
	    (r = iour_policy__set_filter(pol, f)) || (r = plan_for(pol, -1, &here)) ||
	    (r = plan_for(pol, IOUR_LEVEL_CONNECT, &future))) {
		fprintf(stderr, "step4: policy: %s\n", iour_strerror_desc(r));
		return 1;
	}
	printf("step4: this kernel: feature level %d: %s\n", level, iour_feature_level_str(level));
	s_here = show("this kernel", here);
	s_future = show("Linux 7.2", future);

	if (s_future != IOUR_STATUS_FULLY ||
	    !(iour_report__mechanism(iour_plan__report(future)) & IOUR_MECH_TASK)) {
		printf("step4: FAILED: the 7.2 plan should be fully enforced by task restrictions\n");
		ok = 0;
	}
	if (level >= IOUR_LEVEL_TASK_BPF ?
		    s_here != IOUR_STATUS_FULLY :
		    (s_here != IOUR_STATUS_PARTIALLY ||
		     !(iour_report__flags(iour_plan__report(here)) & IOUR_REPORT_TIGHTENED))) {
		printf("step4: FAILED: unexpected status for this kernel\n");
		ok = 0;
	}
	iour_plan__free(here);
	iour_plan__free(future);
	iour_policy__free(pol);
	iour_filter__free(f);
	iour_ruleset__free(rs);
	if (!ok)
		return 1;
	printf("step4: ok\n");
	return 0;
}
