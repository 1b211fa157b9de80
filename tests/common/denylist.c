/* SPDX-License-Identifier: MIT */
#include "denylist.h"

#define OP_CONNECT 16

int denylist4_new(const struct iour_filter_opts *fo, const uint64_t *set, size_t n, uint32_t port,
		  struct iour_filter **out)
{
	struct iour_filter *f = NULL;
	int rc = iour_filter__new(fo, &f);

	for (size_t at = 0; !rc && at < n; at += IOUR_FILTER_MAX_SET) {
		struct iour_cmp c = { .sz = sizeof(c),
				      .field = IOUR_FIELD_CONNECT_ADDR4,
				      .op = IOUR_CMP_IN_SET,
				      .set = set + at,
				      .set_len = n - at < IOUR_FILTER_MAX_SET ? n - at :
										IOUR_FILTER_MAX_SET };

		rc = iour_filter__add_rule(f, OP_CONNECT, IOUR_DENY, &c, 1);
	}
	if (!rc && port) {
		struct iour_cmp c = { .sz = sizeof(c),
				      .field = IOUR_FIELD_CONNECT_PORT,
				      .op = IOUR_CMP_EQ,
				      .value = port };

		rc = iour_filter__add_rule(f, OP_CONNECT, IOUR_DENY, &c, 1);
	}
	if (!rc)
		rc = iour_filter__set_default(f, OP_CONNECT, IOUR_ALLOW);
	if (rc) {
		iour_filter__free(f);
		f = NULL;
	}
	*out = f;
	return rc;
}
