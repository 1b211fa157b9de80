/* A ring policy planned for the running kernel: its steps with their
 * bytes, what its restriction step enforces, the dry run, the expected
 * report, and a ring restricted by it. */
#include <errno.h>
#include <linux/io_uring.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <iouring_restrict/iouring_restrict.h>

int main(void)
{
	IOUR_OPTS(iour_plan_info, info);
	IOUR_OPTS(iour_plan_step, st);
	struct iour_report *rep = NULL;
	struct io_uring_params p;
	struct iour_policy *pol;
	struct iour_ruleset *rs, *enforced;
	struct iour_plan *plan;
	size_t len = 0, cnt = 0;
	char *text;
	int i, n, fd, rc;

	if (iour_ruleset__new(NULL, &rs) ||
	    iour_policy__new(NULL, &pol))
		return 1;
	iour_ruleset__allow_sqe_op_name(rs, "READ");
	iour_ruleset__set_sqe_flags(rs, 0, 0);
	iour_policy__set_ruleset(pol, rs);
	iour_policy__set_attr(pol, IOUR_POLICY_ATTR_TARGET,
			      IOUR_POLICY_TARGET_RING);
	rc = iour_policy__plan(pol, NULL, &plan);
	if (rc) {
		fprintf(stderr, "iour_policy__plan: %s\n",
			iour_strerror_desc(rc));
		return 1;
	}
	iour_plan__info(plan, &info);
	n = iour_plan__step_cnt(plan);
	printf("level %u, %d steps\n", info.level, n);
	for (i = 0; i < n; i++) {
		iour_plan__step(plan, (size_t)i, &st);
		len = 0;
		iour_plan__step_arg(plan, (size_t)i, NULL, &len);
		cnt = 0;
		iour_plan__step_insns(plan, (size_t)i, NULL, &cnt);
		printf("step %d: op %u, %zu argument bytes, %zu instructions\n",
		       i, st.op, len, cnt);
	}
	/* what the ring's classic gates will allow (NULL: nothing gated) */
	if (iour_plan__get_ruleset(plan, IOUR_STEP_RING, &enforced) == 0) {
		printf("ring: READ %s, NOP %s\n",
		       !enforced || iour_ruleset__sqe_op_allowed(enforced, 22) ?
			       "allowed" : "refused",
		       !enforced || iour_ruleset__sqe_op_allowed(enforced, 0) ?
			       "allowed" : "refused");
		iour_ruleset__free(enforced);
	}
	len = 0;
	if (iour_plan__describe(plan, NULL, &len) == 0 &&
	    (text = malloc(len))) {
		if (iour_plan__describe(plan, text, &len) == 0)
			fputs(text, stdout);
		free(text);
	}
	printf("expected: %s\n", iour_status_str(iour_report__status(
					 iour_plan__report(plan))));

	/* a ring the library creates by the plan ... */
	rc = iour_plan__create_ring(plan, 8, NULL, NULL, &fd, &rep);
	if (rc == 0)
		close(fd);
	iour_report__free(rep);
	rep = NULL;
	/* ... and one the program created disabled */
	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_R_DISABLED;
	fd = (int)syscall(__NR_io_uring_setup, 8, &p);
	if (fd >= 0) {
		rc = iour_plan__apply_ring(plan, fd, NULL, &rep);
		printf("apply_ring: %s, %s\n", iour_errname(rc),
		       rep ? iour_status_str(iour_report__status(rep)) :
			     "no report");
		iour_report__free(rep);
		close(fd);
	}
	iour_plan__free(plan);
	iour_policy__free(pol);
	iour_ruleset__free(rs);
	return 0;
}
