/* SPDX-License-Identifier: MIT */
/*
 * Checks for programs that run inside the old-kernel guest (make
 * check-oldkernel).  No test framework: each check prints one line, and the
 * program ends with exactly "N passed, M failed", which the guest's /init
 * sums up.  Programs are linked statically with the library's archive.
 */
#ifndef IOUR_GUEST_H
#define IOUR_GUEST_H

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "iouring_restrict/iouring_restrict.h"
#include "uapi.h"

static int guest_passed, guest_failed;

static const char *guest_val(long v, char *buf, size_t len)
{
	if (v < 0 && v > -4096)
		snprintf(buf, len, "%s", iour_errname((int)v));
	else
		snprintf(buf, len, "%ld", v);
	return buf;
}

/* One check: `name` is printed with the value seen (negative values as
 * errno names unless `plain`). */
static void guest_check_eq_fmt(const char *name, long got, long want, int plain)
{
	char g[48], w[48];

	if (plain) {
		snprintf(g, sizeof(g), "%ld", got);
		snprintf(w, sizeof(w), "%ld", want);
	} else {
		guest_val(got, g, sizeof(g));
		guest_val(want, w, sizeof(w));
	}
	if (got == want) {
		guest_passed++;
		printf("ok   %s: %s\n", name, g);
	} else {
		guest_failed++;
		printf("FAIL %s: %s, want %s\n", name, g, w);
	}
	fflush(stdout);
}

static void guest_check_eq(const char *name, long got, long want)
{
	guest_check_eq_fmt(name, got, want, 0);
}

#define CHECK_EQ(name, got, want) guest_check_eq(name, (long)(got), (long)(want))
/* The same for values that are plain numbers, never -errno. */
#define CHECK_NUM(name, got, want) guest_check_eq_fmt(name, (long)(got), (long)(want), 1)
#define CHECK(name, cond) guest_check_eq(name, (long)!!(cond), 1L)

static int guest_summary(void)
{
	printf("%d passed, %d failed\n", guest_passed, guest_failed);
	fflush(stdout);
	return guest_failed ? 1 : 0;
}

/* Raw syscalls returning -errno. */
static inline long raw_setup(uint32_t entries, void *p)
{
	long r = syscall(KIO_NR_SETUP, entries, p);
	return r < 0 ? -errno : r;
}

static inline long raw_register(int fd, uint32_t op, void *arg, uint32_t nr)
{
	long r = syscall(KIO_NR_REGISTER, fd, op, arg, nr);
	return r < 0 ? -errno : r;
}

static inline long raw_enter(int fd, uint32_t to_submit, uint32_t min_complete, uint32_t flags)
{
	long r = syscall(KIO_NR_ENTER, fd, to_submit, min_complete, flags, NULL, 0);
	return r < 0 ? -errno : r;
}

#endif
