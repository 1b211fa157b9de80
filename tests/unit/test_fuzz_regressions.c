/* SPDX-License-Identifier: MIT */
/*
 * Regression tests for inputs that the fuzz targets in tests/fuzz/ found to
 * break an invariant.  Each test names the target and keeps the input small
 * and readable; the raw input is also kept in tests/fuzz/corpus/NAME/.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <string.h>

#include "iouring_restrict/cbpf.h"
#include "iouring_restrict/errors.h"
#include "iouring_restrict/filter.h"

/* tests/fuzz/errors.c: iour_strerror(INT_MIN) negated INT_MIN (undefined
 * behaviour, reported by UBSan) when looking the code up. */
Test(fuzz_regress, strerror_int_min)
{
	char buf[64];

	cr_assert_eq(iour_strerror(INT_MIN, buf, sizeof(buf)), -ENOENT);
	cr_assert_str_eq(buf, "Unknown error 2147483648");
	cr_assert_str_eq(iour_errname(INT_MIN), "UNKNOWN");
	cr_assert_eq(iour_strerror(INT_MAX, buf, sizeof(buf)), -ENOENT);
	cr_assert_str_eq(buf, "Unknown error 2147483647");
}

/* tests/fuzz/filter.c: a struct iour_cmp whose sz cuts a member in two was
 * read with the member's leading bytes (sz 13 gave the low byte of `op`,
 * sz 20 the low half of `value`).  A member cut by sz now reads as zero,
 * like every member beyond sz. */
Test(fuzz_regress, filter_cmp_sz_cuts_a_member)
{
	struct iour_sim_result res = { .sz = sizeof(res) };
	struct iour_filter *f;
	struct iour_prog *p;
	struct iour_cmp c;
	uint8_t ctx[IOUR_CTX_SIZE];

	cr_assert_eq(iour_filter__new(NULL, &f), 0);
	memset(&c, 0, sizeof(c));
	c.field = IOUR_FIELD_USER_DATA;
	c.op = IOUR_CMP_EQ;
	c.value = 0x100000005ULL;
	c.sz = offsetof(struct iour_cmp, op) + 1; /* half of op: unknown operator */
	cr_assert_eq(iour_filter__add_rule(f, 0, IOUR_ALLOW, &c, 1), -EINVAL);
	c.sz = offsetof(struct iour_cmp, value) + 4; /* half of value: value 0 */
	cr_assert_eq(iour_filter__add_rule(f, 0, IOUR_ALLOW, &c, 1), 0);
	cr_assert_eq(iour_filter__compile(f, 0, NULL, &p), 0);
	cr_assert_eq(iour_ctx_generic(ctx, sizeof(ctx), 0, 0, 5), 0);
	cr_assert_eq(
		iour_cbpf_run(iour_prog__insns(p), iour_prog__insn_cnt(p), ctx, sizeof(ctx), &res),
		0);
	cr_assert_eq(res.allowed, 0, "user_data 5 matched a rule whose value was cut off");
	cr_assert_eq(iour_ctx_generic(ctx, sizeof(ctx), 0, 0, 0), 0);
	cr_assert_eq(
		iour_cbpf_run(iour_prog__insns(p), iour_prog__insn_cnt(p), ctx, sizeof(ctx), &res),
		0);
	cr_assert_eq(res.allowed, 1);
	iour_prog__free(p);
	iour_filter__free(f);
}

/* tests/fuzz/filter.c: iour_filter__compile() returned a raw program longer
 * than the caller's max_insns; it now fails with PROG_TOO_LARGE as it does
 * for rules. */
Test(fuzz_regress, filter_raw_program_respects_max_insns)
{
	static const struct iour_insn two[] = { { .code = 0x00, .k = 1 }, { .code = 0x16 } };
	struct iour_compile_opts o = { .sz = sizeof(o), .max_insns = 1 };
	struct iour_filter *f;
	struct iour_prog *p = NULL;

	cr_assert_eq(iour_filter__new(NULL, &f), 0);
	cr_assert_eq(iour_filter__set_raw(f, 0, two, 2), 0);
	cr_assert_eq(iour_filter__compile(f, 0, &o, &p), -IOUR_ERRNO__PROG_TOO_LARGE);
	o.max_insns = 2;
	cr_assert_eq(iour_filter__compile(f, 0, &o, &p), 0);
	cr_assert_eq(iour_prog__insn_cnt(p), 2);
	iour_prog__free(p);
	iour_filter__free(f);
}
