/* SPDX-License-Identifier: MIT */
/* The CONNECT deny-list the stacking tests build again and again. */
#ifndef IOUR_TEST_DENYLIST_H
#define IOUR_TEST_DENYLIST_H

#include <stddef.h>
#include <stdint.h>

#include "iouring_restrict/filter.h"

/*
 * A filter whose CONNECT rules deny an IPv4 address in set[0, n) (one
 * IN_SET rule per IOUR_FILTER_MAX_SET values), then, when port is not 0,
 * a connect to that port; CONNECT's default is allow.  fo: the filter's
 * options, or NULL.  Returns 0 or the first error, with *out NULL and
 * nothing leaked (the allocation-failure tests call it under every
 * failing allocation).
 */
int denylist4_new(const struct iour_filter_opts *fo, const uint64_t *set, size_t n, uint32_t port,
		  struct iour_filter **out);

#endif
