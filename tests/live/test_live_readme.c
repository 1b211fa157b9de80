/* SPDX-License-Identifier: MIT */
/*
 * Live: the README's task example, applied for real in forked children,
 * and the report it returns compared with what the kernel then does: a
 * fresh ring created afterwards (after an execve of the enforcement
 * check's helper too, when it is built) and a request the allow-list does
 * not name (NOP).
 *
 * - Linux 7.0+: "fully enforced" by task restrictions; a new ring works,
 *   READ and WRITE pass the gate, NOP is denied (-EACCES).
 * - Kernels without task restrictions, the default (degrade closed):
 *   "partially enforced" by the seccomp companion alone; io_uring_setup
 *   fails with ENOSYS.
 * - The same with IOUR_POLICY_COMPANION_NONE: "not enforced" with zero
 *   steps, and a new ring runs NOP: nothing restricts the task.
 */
#include <errno.h>
#include <string.h>

#include "live.h"

/* The README's code, verbatim but for error checks and the companion. */
static int readme_policy(uint32_t companion, bool set_companion, struct iour_policy **pol,
			 struct iour_plan **plan, struct iour_report **rep)
{
	struct iour_ruleset *rs;
	int rc;

	if ((rc = iour_ruleset__new(NULL, &rs)))
		return rc;
	if ((rc = iour_ruleset__allow_sqe_op_name(rs, "READ")) ||
	    (rc = iour_ruleset__allow_sqe_op_name(rs, "WRITE")) ||
	    (rc = iour_ruleset__set_sqe_flags(rs, 0, 0)) || (rc = iour_policy__new(NULL, pol)) ||
	    (rc = iour_policy__set_ruleset(*pol, rs))) {
		iour_ruleset__free(rs);
		return rc;
	}
	iour_ruleset__free(rs);
	if (set_companion &&
	    (rc = iour_policy__set_attr(*pol, IOUR_POLICY_ATTR_COMPANION, companion)))
		return rc;
	if ((rc = iour_policy__plan(*pol, NULL, plan)))
		return rc;
	return iour_plan__apply_task(*plan, NULL, rep);
}

static int readme_child(void *arg, struct child_msg *m)
{
	const bool none = *(const bool *)arg;
	const struct iour_verify_req enforced[] = { live_req(OP_READ, IOUR_EXPECT_ALLOW),
						    live_req(OP_WRITE, IOUR_EXPECT_ALLOW),
						    live_req(OP_NOP, IOUR_EXPECT_DENY) };
	const struct iour_verify_req open_nop[] = { live_req(OP_NOP, IOUR_EXPECT_ALLOW) };
	struct iour_policy *pol = NULL;
	struct iour_plan *plan = NULL;
	struct iour_report *rep = NULL;
	uint32_t done = 99, total = 99;
	char why[512];
	int rc, st, mech;

	rc = readme_policy(IOUR_POLICY_COMPANION_NONE, none, &pol, &plan, &rep);
	CHKF(m, rc == 0, "README example: %s", iour_errname(rc));
	live_print_report(none ? "README task example, companion none" : "README task example",
			  rep);
	st = iour_report__status(rep);
	mech = iour_report__mechanism(rep);
	CHK(m, iour_report__steps(rep, &done, &total) == 0);
	/* The status must agree with the plan's expectation too. */
	CHK(m, iour_report__status(iour_plan__report(plan)) == st);

	if (live_missing(LIVE_TASK) == NULL) {
		CHKF(m, st == IOUR_STATUS_FULLY && mech == IOUR_MECH_TASK, "status %d mech %#x", st,
		     mech);
		CHK(m, total > 0 && done == total);
		rc = live_verify(enforced, 3, LV_PLAIN, -1, why, sizeof(why));
		CHKF(m, rc == 0, "fresh ring: %s", why);
		rc = live_verify(enforced, 3, LV_EXEC, -1, why, sizeof(why));
		CHKF(m, rc == 0 || rc == -ENOENT, "after execve: %s", why);
	} else if (!none) {
		CHKF(m, st == IOUR_STATUS_PARTIALLY && mech == IOUR_MECH_COMPANION,
		     "status %d mech %#x", st, mech);
		CHK(m, iour_report__flags(rep) & IOUR_REPORT_TIGHTENED);
		CHK(m, !(iour_report__flags(rep) & IOUR_REPORT_LOOSENED));
		CHK(m, total > 0 && done == total);
		/* "io_uring_setup fails with ENOSYS": no ring, so NOP cannot run */
		rc = live_verify(open_nop, 1, LV_PLAIN, -1, why, sizeof(why));
		CHKF(m, rc == -ENOSYS, "fresh ring after the companion: %d %s", rc, why);
		rc = live_verify(open_nop, 1, LV_EXEC, -1, why, sizeof(why));
		CHKF(m, rc == -ENOSYS || rc == -ENOENT, "after execve: %d %s", rc, why);
	} else {
		/* Zero steps apply to the task: it is not enforced, and indeed a
		 * new ring runs what the allow-list does not name. */
		CHKF(m, st == IOUR_STATUS_NOT_ENFORCED && mech == IOUR_MECH_NONE,
		     "status %d mech %#x", st, mech);
		CHK(m, iour_report__flags(rep) & IOUR_REPORT_LOOSENED);
		CHKF(m, done == 0 && total == 0, "%u of %u", done, total);
		rc = live_verify(open_nop, 1, LV_PLAIN, -1, why, sizeof(why));
		CHKF(m, rc == 0, "NOP on a fresh ring: %s", why);
		rc = live_verify(open_nop, 1, LV_EXEC, -1, why, sizeof(why));
		CHKF(m, rc == 0 || rc == -ENOENT, "NOP after execve: %s", why);
	}
	iour_report__free(rep);
	iour_plan__free(plan);
	iour_policy__free(pol);
	return 0;
}

Test(live_readme, task_example_report_matches_kernel)
{
	bool none = false;

	LIVE_REQUIRE(LIVE_RING);
	LIVE_CHILD(readme_child, &none);
	none = true;
	LIVE_CHILD(readme_child, &none);
	live_log("README task example (%s): each report agreed with what the kernel did",
		 live_missing(LIVE_TASK) ? "no task restrictions: companion, then none" :
					   "task restrictions");
}
