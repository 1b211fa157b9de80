/* SPDX-License-Identifier: MIT */
/*
 * The policy-file loader's state and the helpers lib/policyfile/policyfile.c and
 * lib/policyfile/policyfile_load.c share (doc/policy-files.md).  Not installed.
 */
#ifndef IOUR_LIB_POLICYFILE_LOAD_H
#define IOUR_LIB_POLICYFILE_LOAD_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/internal.h"
#include "iouring_restrict/filter.h"
#include "iouring_restrict/policyfile.h"

/* How deep a JSON path an error can name. */
#define MAX_DEPTH 8

struct step {
	const char *key; /* NULL: an array index */
	size_t index;
};

struct ld {
	const char *text;
	size_t len;
	uint32_t kernel; /* for minKernel; 0 until needed */
	uint32_t asof;   /* groupsAsOf, 0 = every member */
	uint32_t dflt;   /* defaultAction */
	struct step path[MAX_DEPTH];
	int depth;
	bool at_key; /* the error is about the last key, not its value */
	struct iour_load_error *err;
	const char *origin;
};

/*
 * Path and errors: push_key/push_idx/pop track the JSON path of the value
 * being read; fail() records an error at that path (-EINVAL) and err_ok()
 * says whether the caller's error record may be written.  Value parsers
 * (they fail() on bad input): check_keys (unknown keys), want_array,
 * parse_kver ("7.2"), parse_enum (a name of @names), add_op_name/op_list
 * (opcode names into @ops), parse_entry (one rule entry into @f);
 * type_name names a JSON value's type for messages.
 */
IOUR_INTERNAL int iour__pf_add_op_name(struct ld *l, json_t *v, bool *ops, bool reg);
IOUR_INTERNAL int iour__pf_check_keys(struct ld *l, json_t *o, const char *what,
				      const char *const *keys);
IOUR_INTERNAL bool iour__pf_err_ok(const struct iour_load_error *e);
IOUR_INTERNAL int iour__pf_fail(struct ld *l, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
IOUR_INTERNAL int iour__pf_op_list(struct ld *l, json_t *arr, const char *what, bool *ops,
				   bool reg);
IOUR_INTERNAL int iour__pf_parse_entry(struct ld *l, json_t *o, struct iour_filter *f);
IOUR_INTERNAL int iour__pf_parse_enum(struct ld *l, json_t *v, const char *what,
				      const char *const *names, size_t n, uint32_t *out);
IOUR_INTERNAL int iour__pf_parse_kver(struct ld *l, json_t *v, uint32_t *out);
IOUR_INTERNAL void iour__pf_pop(struct ld *l);
IOUR_INTERNAL void iour__pf_push_idx(struct ld *l, size_t i);
IOUR_INTERNAL void iour__pf_push_key(struct ld *l, const char *key);
IOUR_INTERNAL const char *iour__pf_type_name(const json_t *v);
IOUR_INTERNAL int iour__pf_want_array(struct ld *l, json_t *v, const char *what);

#endif /* IOUR_LIB_POLICYFILE_LOAD_H */
