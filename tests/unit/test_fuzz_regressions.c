/* SPDX-License-Identifier: MIT */
/*
 * Regression tests for inputs that the fuzz targets in tests/fuzz/ found to
 * break an invariant.  Each test names the target and keeps the input small
 * and readable; the raw input is also kept in tests/fuzz/corpus/NAME/.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <limits.h>
#include <string.h>

#include "iouring_restrict/errors.h"

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
