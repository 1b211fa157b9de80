/* SPDX-License-Identifier: MIT */
/* The rule parser of the tool before the library took it over
 * (rules_oracle.c): the oracle of test_rules.c's differential test. */
#ifndef IOUR_TEST_RULES_ORACLE_H
#define IOUR_TEST_RULES_ORACLE_H

#include <stddef.h>
#include <stdint.h>

#include <iouring_restrict/iouring_restrict.h>

struct old_expr_error {
	size_t pos;
	char msg[256];
};

struct old_expr_rule {
	struct iour_cmp cmps[IOUR_FILTER_MAX_CMPS];
	size_t n;
	uint64_t *sets[IOUR_FILTER_MAX_CMPS];
	const char *warning;
};

/* 0, or -1 with @err filled. */
int old_expr_parse_rule(const char *text, uint32_t opcode, struct old_expr_rule *rule,
			struct old_expr_error *err);
void old_expr_rule_free(struct old_expr_rule *rule);

#endif
