/* SPDX-License-Identifier: MIT */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "iouring_restrict/iouring_restrict.h"
#include "base/internal.h"

Test(version, runtime_matches_headers)
{
	char want[32];

	cr_assert_eq(iour_version_major(), IOUR_VERSION_MAJOR);
	cr_assert_eq(iour_version_minor(), IOUR_VERSION_MINOR);
	cr_assert_eq(iour_version_patch(), IOUR_VERSION_PATCH);
	snprintf(want, sizeof(want), "%d.%d.%d", IOUR_VERSION_MAJOR, IOUR_VERSION_MINOR,
		 IOUR_VERSION_PATCH);
	cr_assert_str_eq(iour_version_string(), want);
	cr_assert(IOUR_VERSION_AT_LEAST(IOUR_VERSION_MAJOR, IOUR_VERSION_MINOR));
	cr_assert(!IOUR_VERSION_AT_LEAST(IOUR_VERSION_MAJOR, IOUR_VERSION_MINOR + 1));
	cr_assert(!IOUR_VERSION_AT_LEAST(IOUR_VERSION_MAJOR + 1, 0));
}

Test(errors, names_for_system_and_library_codes)
{
	cr_assert_str_eq(iour_errname(-EINVAL), "-EINVAL");
	cr_assert_str_eq(iour_errname(EINVAL), "-EINVAL");
	cr_assert_str_eq(iour_errname(-EBADFD), "-EBADFD");
	/* Kernel answers the tests and the CLI print: a cancelled link
	 * member, a ring reopened through /proc, an allowed CONNECT. */
	cr_assert_str_eq(iour_errname(-ECANCELED), "-ECANCELED");
	cr_assert_str_eq(iour_errname(-ENXIO), "-ENXIO");
	cr_assert_str_eq(iour_errname(-ECONNREFUSED), "-ECONNREFUSED");
	cr_assert_str_eq(iour_errname(-IOUR_ERRNO__PROG_TOO_LARGE), "-IOUR_ERRNO__PROG_TOO_LARGE");
	cr_assert_str_eq(iour_errname(0), "0");
	cr_assert_str_eq(iour_errname(-3999), "UNKNOWN");
	for (int e = IOUR_ERRNO__START + 1; e < IOUR_ERRNO__END; e++)
		cr_assert_str_neq(iour_errname(-e), "UNKNOWN", "library code %d has no name", e);
}

Test(errors, strerror_contract)
{
	char buf[128];

	cr_assert_eq(iour_strerror(-EACCES, buf, sizeof(buf)), 0);
	cr_assert(strstr(buf, "Permission denied") != NULL);
	cr_assert_eq(iour_strerror(-IOUR_ERRNO__INVALID_PROG, buf, sizeof(buf)), 0);
	cr_assert(strstr(buf, "validator") != NULL);
	/* unknown: generic message, -ENOENT */
	cr_assert_eq(iour_strerror(-3999, buf, sizeof(buf)), -ENOENT);
	cr_assert(strstr(buf, "3999") != NULL);
	/* truncation: -ERANGE, NUL-terminated prefix */
	cr_assert_eq(iour_strerror(-EACCES, buf, 5), -ERANGE);
	cr_assert_eq(strlen(buf), 4);
	cr_assert_eq(iour_strerror(-EACCES, NULL, 0), -ERANGE);
	cr_assert_eq(iour_strerror(-EACCES, NULL, 10), -EINVAL);
	for (int e = IOUR_ERRNO__START + 1; e < IOUR_ERRNO__END; e++)
		cr_assert_eq(iour_strerror(-e, buf, sizeof(buf)), 0);
}

Test(errors, strerror_desc_is_the_buffer_message_as_a_static_string)
{
	char buf[256];

	cr_assert_str_eq(iour_strerror_desc(0), "Success");
	cr_assert_str_eq(iour_strerror_desc(-3999), "Unknown error");
	cr_assert_str_eq(iour_strerror_desc(-EACCES), iour_strerror_desc(EACCES));
	/* every code the buffer form knows gives the same text here */
	for (int e = 1; e < IOUR_ERRNO__END; e++) {
		if (iour_strerror(-e, buf, sizeof(buf)) != 0)
			continue;
		cr_assert_str_eq(iour_strerror_desc(-e), buf, "code %d", e);
	}
	/* the library's own range is all known */
	for (int e = IOUR_ERRNO__START + 1; e < IOUR_ERRNO__END; e++)
		cr_assert_str_neq(iour_strerror_desc(-e), "Unknown error");
}

/* Every code of every public function's error set (lib/base/errsets.def) has a
 * name and a message, passes the boundary filter of its own set and no
 * other code does. */
Test(errors, every_errset_code_is_named_and_passes_its_filter)
{
	int id;

	for (id = 0; id < IOUR__ERRSET_COUNT; id++) {
		const int *p = iour__errset((enum iour__errset)id);
		const char *fn = iour__errset_function((enum iour__errset)id);

		cr_assert_not_null(p);
		cr_assert_not_null(fn);
		cr_assert(*p, "%s: empty error set", fn);
		for (; *p; p++) {
			cr_assert_gt(*p, 0, "%s: %d", fn, *p);
			cr_assert_str_neq(iour_errname(-*p), "UNKNOWN", "%s: code %d has no name",
					  fn, *p);
			cr_assert_eq(iour__err_public(-*p, (enum iour__errset)id), -*p, "%s: %s",
				     fn, iour_errname(-*p));
		}
		cr_assert_eq(iour__err_public(-ESPIPE, (enum iour__errset)id),
			     -IOUR_ERRNO__INTERNAL, "%s", fn);
		cr_assert_eq(iour__err_public(7, (enum iour__errset)id), 7, "%s", fn);
	}
	cr_assert_null(iour__errset(IOUR__ERRSET_COUNT));
	cr_assert_null(iour__errset_function(IOUR__ERRSET_COUNT));
	cr_assert_eq(iour__err_public(-EINVAL, IOUR__ERRSET_COUNT), -IOUR_ERRNO__INTERNAL);
}
