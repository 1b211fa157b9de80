/* SPDX-License-Identifier: MIT */
/* iour_errdetail(): the words that name the refused value and the limit,
 * next to unchanged error codes. */
#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "iouring_restrict/iouring_restrict.h"

static struct iour_plan *plan_for(uint32_t target, uint32_t level)
{
	struct iour_plan_opts o = { .sz = sizeof(o),
				    .flags = IOUR_PLAN_FORCE_LEVEL,
				    .level = level };
	struct iour_policy *p = NULL;
	struct iour_plan *pl = NULL;

	cr_assert_eq(iour_policy__new(NULL, &p), 0);
	cr_assert_eq(iour_policy__set_attr(p, IOUR_POLICY_ATTR_TARGET, target), 0);
	cr_assert_eq(iour_policy__set_attr(p, IOUR_POLICY_ATTR_DEFAULT, IOUR_POLICY_DEFAULT_ALLOW),
		     0);
	cr_assert_eq(iour_policy__plan(p, &o, &pl), 0);
	iour_policy__free(p);
	return pl;
}

Test(errdetail, opcode_beyond_the_table_names_value_and_last)
{
	struct iour_ruleset *rs = NULL;
	char want[128];

	cr_assert_eq(iour_ruleset__new(NULL, &rs), 0);
	cr_assert_eq(iour_ruleset__allow_sqe_op(rs, 255), -ERANGE);
	snprintf(want, sizeof(want),
		 "opcode 255: the library's request-opcode table ends at %d (%s)",
		 IOUR_OP__COUNT - 1, iour_opcode_name(IOUR_OP__COUNT - 1));
	cr_assert_str_eq(iour_errdetail("iour_ruleset__allow_sqe_op", -ERANGE), want);
	cr_assert_str_eq(iour_errdetail(NULL, ERANGE), want);
	/* Only for its own code and function. */
	cr_assert_null(iour_errdetail("iour_ruleset__allow_sqe_op", -EINVAL));
	cr_assert_null(iour_errdetail("iour_policy__plan", -ERANGE));
	cr_assert_null(iour_errdetail(NULL, 0));
	/* The opcode was not allowed: nothing half-applied. */
	cr_assert_eq(iour_ruleset__sqe_restricted(rs), 0);

	/* The next call of the function clears it, success or not. */
	cr_assert_eq(iour_ruleset__allow_sqe_op(rs, IOUR_OP_NOP), 0);
	cr_assert_null(iour_errdetail("iour_ruleset__allow_sqe_op", -ERANGE));
	cr_assert_eq(iour_ruleset__allow_sqe_op(rs, IOUR_OP__COUNT), -ERANGE);
	cr_assert_eq(iour_ruleset__allow_sqe_op(NULL, 0), -EINVAL);
	cr_assert_null(iour_errdetail("iour_ruleset__allow_sqe_op", -ERANGE));
	cr_assert_null(iour_errdetail("iour_ruleset__allow_sqe_op", -EINVAL));

	cr_assert_eq(iour_ruleset__allow_register_op(rs, 200), -ERANGE);
	snprintf(want, sizeof(want),
		 "register opcode 200: the library's register-opcode table ends at %d (%s)",
		 IOUR_REGISTER__COUNT - 1, iour_register_op_name(IOUR_REGISTER__COUNT - 1));
	cr_assert_str_eq(iour_errdetail("iour_ruleset__allow_register_op", -ERANGE), want);
	iour_ruleset__free(rs);
}

Test(errdetail, plan_level_names_the_range)
{
	struct iour_plan_opts o = { .sz = sizeof(o), .flags = IOUR_PLAN_FORCE_LEVEL, .level = 9 };
	struct iour_policy *p = NULL;
	struct iour_plan *pl = NULL;
	char want[64];

	cr_assert_eq(iour_policy__new(NULL, &p), 0);
	cr_assert_eq(iour_policy__plan(p, &o, &pl), -EINVAL);
	cr_assert_null(pl);
	snprintf(want, sizeof(want), "level 9: levels are 0..%d", IOUR_LEVEL_MAX);
	cr_assert_str_eq(iour_errdetail("iour_policy__plan", -EINVAL), want);
	o.flags = 0;
	o.level = 3;
	cr_assert_eq(iour_policy__plan(p, &o, &pl), -EINVAL);
	cr_assert_str_eq(iour_errdetail("iour_policy__plan", -EINVAL),
			 "level 3 without IOUR_PLAN_FORCE_LEVEL: set the flag to force it");
	o.flags = IOUR_PLAN_FORCE_LEVEL;
	cr_assert_eq(iour_policy__plan(p, &o, &pl), 0);
	cr_assert_null(iour_errdetail("iour_policy__plan", -EINVAL));
	iour_plan__free(pl);
	iour_policy__free(p);
}

Test(errdetail, attributes_name_the_unknown_one_and_the_bounds)
{
	struct iour_policy *p = NULL;
	uint32_t v = 42;
	char want[160];

	cr_assert_eq(iour_policy__new(NULL, &p), 0);
	cr_assert_eq(iour_policy__set_attr(p, 99, 0), -EINVAL);
	snprintf(want, sizeof(want),
		 "attribute 99: attributes are 1..%d (IOUR_POLICY_ATTR_TARGET .. "
		 "IOUR_POLICY_ATTR_DEFAULT)",
		 IOUR_POLICY_ATTR__MAX - 1);
	cr_assert_str_eq(iour_errdetail("iour_policy__set_attr", -EINVAL), want);
	cr_assert_eq(iour_policy__get_attr(p, 99, &v), -EINVAL);
	cr_assert_str_eq(iour_errdetail("iour_policy__get_attr", -EINVAL), want);
	cr_assert_eq(v, 42);
	cr_assert_eq(iour_policy_attr_bounds(0, NULL, NULL, NULL), -EINVAL);
	cr_assert_not_null(iour_errdetail("iour_policy_attr_bounds", -EINVAL));

	cr_assert_eq(iour_policy__set_attr(p, IOUR_POLICY_ATTR_TARGET, 7), -ERANGE);
	cr_assert_str_eq(iour_errdetail("iour_policy__set_attr", -ERANGE),
			 "IOUR_POLICY_ATTR_TARGET value 7: values are 0..1");
	/* Refused: the attribute keeps its value. */
	cr_assert_eq(iour_policy__get_attr(p, IOUR_POLICY_ATTR_TARGET, &v), 0);
	cr_assert_eq(v, IOUR_POLICY_TARGET_TASK);
	iour_policy__free(p);
}

Test(errdetail, apply_task_on_a_ring_plan_says_so)
{
	struct iour_plan *pl = plan_for(IOUR_POLICY_TARGET_RING, IOUR_LEVEL_RING);
	struct iour_report *rep = (struct iour_report *)&rep;
	int fd = -1;

	/* Refused before anything is applied: no report, no restriction. */
	cr_assert_eq(iour_plan__apply_task(pl, NULL, &rep), -EINVAL);
	cr_assert_null(rep);
	cr_assert_str_eq(iour_errdetail("iour_plan__apply_task", -EINVAL),
			 "apply_task: this plan targets a ring (use iour_plan__create_ring() or "
			 "iour_plan__apply_ring())");
	iour_plan__free(pl);

	pl = plan_for(IOUR_POLICY_TARGET_TASK, IOUR_LEVEL_MAX);
	cr_assert_eq(iour_plan__create_ring(pl, 4, NULL, NULL, &fd, NULL), -EINVAL);
	cr_assert_eq(fd, -1);
	cr_assert_str_eq(iour_errdetail("iour_plan__create_ring", -EINVAL),
			 "create_ring: this plan has no ring part (it targets the task: use "
			 "iour_plan__apply_task())");
	cr_assert_eq(iour_plan__apply_ring(pl, -1, NULL, NULL), -EINVAL);
	cr_assert_str_eq(iour_errdetail("iour_plan__apply_ring", -EINVAL),
			 "ring_fd -1: not a descriptor");
	iour_plan__free(pl);
}

static void *other_thread(void *arg)
{
	(void)arg;
	return (void *)iour_errdetail(NULL, -ERANGE);
}

Test(errdetail, each_thread_has_its_own)
{
	struct iour_ruleset *rs = NULL;
	pthread_t t;
	void *seen = (void *)1;

	cr_assert_eq(iour_ruleset__new(NULL, &rs), 0);
	cr_assert_eq(iour_ruleset__allow_sqe_op(rs, 1000), -ERANGE);
	cr_assert_not_null(iour_errdetail(NULL, -ERANGE));
	cr_assert_eq(pthread_create(&t, NULL, other_thread, NULL), 0);
	cr_assert_eq(pthread_join(t, &seen), 0);
	cr_assert_null(seen);
	iour_ruleset__free(rs);
}
