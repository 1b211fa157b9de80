/* SPDX-License-Identifier: MIT */
/*
 * What the policy-file loader (policyfile.c) and writer (policyfile_save.c)
 * share: one table of the attribute keys and their values, so that a file
 * written is always read back the same (doc/policy-files.md).
 */
#ifndef IOUR_LIB_POLICYFILE_INTERNAL_H
#define IOUR_LIB_POLICYFILE_INTERNAL_H

#include <stdint.h>

#include "base/internal.h"
#include "iouring_restrict/policy.h"

/* The JSON key of each policy attribute (enum iour_policy_attr). */
extern const char *const iour__policy_attr_key[IOUR_POLICY_ATTR__MAX];
/* The JSON names of each attribute's values, indexed by the value. */
#define IOUR__POLICY_ATTR_VALS 4
extern const char *const iour__policy_attr_val[IOUR_POLICY_ATTR__MAX][IOUR__POLICY_ATTR_VALS];

/* policyfile.c: the constant saving writes for a value of a non-bit field
 * with a namespace (AF_INET for socket.family 2), or NULL. */
IOUR_INTERNAL const char *iour__pf_const_name(uint32_t field, uint64_t v);

#endif /* IOUR_LIB_POLICYFILE_INTERNAL_H */
