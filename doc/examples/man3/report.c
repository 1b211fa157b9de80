/* A task policy applied to this process, and its report read field by
 * field.  Before Linux 7.0 the seccomp companion makes io_uring_setup()
 * fail for this process instead ("partially enforced"). */
#include <stdio.h>
#include <stdlib.h>
#include <iouring_restrict/iouring_restrict.h>

int main(void)
{
	IOUR_OPTS(iour_decision, d);
	struct iour_report *rep = NULL;
	struct iour_policy *pol;
	struct iour_ruleset *rs;
	struct iour_plan *plan;
	uint32_t done, total;
	int32_t err;
	size_t len = 0;
	char *text;
	int i, rc;

	if (iour_ruleset__new(NULL, &rs) ||
	    iour_policy__new(NULL, &pol))
		return 1;
	iour_ruleset__allow_sqe_op_name(rs, "READ");
	iour_ruleset__allow_sqe_op_name(rs, "WRITE");
	iour_ruleset__set_sqe_flags(rs, 0, 0);
	iour_policy__set_ruleset(pol, rs);
	if (iour_policy__plan(pol, NULL, &plan))
		return 1;
	rc = iour_plan__apply_task(plan, NULL, &rep);
	if (!rep) {
		fprintf(stderr, "iour_plan__apply_task: %s\n",
			iour_strerror_desc(rc));
		return 1;
	}
	iour_report__steps(rep, &done, &total);
	iour_report__error(rep, &err);
	printf("%s; mechanism 0x%x, flags 0x%x, %u of %u steps, error %d, %d threads\n",
	       iour_status_str(iour_report__status(rep)),
	       iour_report__mechanism(rep), iour_report__flags(rep),
	       done, total, err, iour_report__threads(rep));
	for (i = 0; i < iour_report__decision_cnt(rep); i++)
		if (iour_report__decision(rep, (size_t)i, &d) == 0)
			printf("decision %d: %s, %s: %s\n", i,
			       iour_decision_kind_str(d.kind),
			       iour_reason_str(d.reason), d.text);
	if (iour_report__describe(rep, NULL, &len) == 0 &&
	    (text = malloc(len))) {
		if (iour_report__describe(rep, text, &len) == 0)
			fputs(text, stdout);
		free(text);
	}
	iour_report__free(rep);
	iour_plan__free(plan);
	iour_policy__free(pol);
	iour_ruleset__free(rs);
	return rc ? 1 : 0;
}
