/* SPDX-License-Identifier: MIT */
/*
 * Internal contract of the policy object (policy.c): what the planner,
 * the policy-file loader and writer and the tests read of it.  Not
 * installed.
 */
#ifndef IOUR_LIB_POLICY_INTERNAL_H
#define IOUR_LIB_POLICY_INTERNAL_H

#include "base/internal.h"
#include "filter/filter_internal.h"
#include "ruleset_internal.h"
#include "iouring_restrict/cbpf.h"
#include "iouring_restrict/policy.h"

struct iour_policy {
	struct iour_ruleset *rs;                 /* classic part, NULL = none */
	struct iour_prog *progs[IOUR__NOPCODES]; /* argument filters, NULL = none */
	uint32_t attr[IOUR_POLICY_ATTR__MAX];
	/* The filter set of the last iour_policy__set_filter() (a copy; NULL
	 * = none), kept so that a policy can be saved as a policy file and
	 * iour_policy__decide() can name the deciding rule (policyfile.c). */
	struct iour_filter *src;
	/* raw[op]: progs[op] came from iour_policy__set_prog(), not from src. */
	bool raw[IOUR__NOPCODES];
};

/* iour_policy__set_filter(), and when an opcode's rules are too large and
 * cannot be split (-IOUR_ERRNO__PROG_TOO_LARGE), the reason naming the
 * opcode in why (why may be NULL; an empty string when there is none):
 * the policy-file loader puts it in its error message. */
IOUR_INTERNAL int iour__policy_set_filter(struct iour_policy *p, const struct iour_filter *f,
					  char *why, size_t whylen);

#endif /* IOUR_LIB_POLICY_INTERNAL_H */
