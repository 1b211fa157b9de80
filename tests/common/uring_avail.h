/* SPDX-License-Identifier: MIT */
/*
 * Whether this process may use io_uring at all, for the unit tests that
 * create real rings.  io_uring can be present in the kernel and still
 * unusable here: kernel.io_uring_disabled=2, or =1 with the process outside
 * kernel.io_uring_group (io_uring_setup answers EPERM), or a seccomp
 * profile (a container runtime's) making io_uring_setup or
 * io_uring_register fail.  Such tests skip there, saying why, in the words
 * of the live tier (tests/live/live.c); the tests that need no ring (the
 * emulated kernel, compiler, simulator, validator, policy files) still run.
 * make check-uring-off runs the unit binary under such a profile
 * (tests/progs/uring_off.c).
 */
#ifndef IOUR_TEST_URING_AVAIL_H
#define IOUR_TEST_URING_AVAIL_H

#include <criterion/criterion.h>
#include <stdio.h>

/* NULL if io_uring_setup and io_uring_register work for this process,
 * else the reason (static text).  Probed once per process. */
const char *uring_unusable(void);

/* Skip the calling test (or its .init), saying why, unless this process
 * can create and register on a real io_uring ring. */
#define UNIT_REQUIRE_URING()                                          \
	do {                                                          \
		const char *why_ = uring_unusable();                  \
		if (why_) {                                           \
			fprintf(stderr, "unit: skipped: %s\n", why_); \
			cr_skip_test("skipped: %s", why_);            \
		}                                                     \
	} while (0)

#endif
