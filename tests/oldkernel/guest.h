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
#include <sys/utsname.h>
#include <unistd.h>

#include "iouring_restrict/iouring_restrict.h"
#include "base/uapi.h"

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

/*
 * What the running kernel's generation should answer, from its release
 * string (uname) and the tables of doc/kernel.md 5.5, 6.1 and 6.2.  The
 * library never reads the version string; the checks do, so that the
 * probe's conclusions are compared with an independent source.  Kernels
 * newer than the tables know get the newest row's lower bounds.
 */
struct guest_gen {
	int ver;                 /* major * 100 + minor: 510, 601, 612, 702 ... */
	unsigned op_last;        /* IORING_OP_LAST */
	unsigned reg_last;       /* IORING_REGISTER_LAST */
	unsigned level;          /* the probe's kernel level */
	long blind_restrictions; /* register(-1, RESTRICTIONS, NULL, 1) */
	int query;               /* QUERY answers (6.18+) */
	int exact;               /* the release is in the tables (not newer) */
};

__attribute__((unused)) static const struct guest_gen *guest_gen(void)
{
	static struct guest_gen g;
	struct utsname u;
	int maj = 0, min = 0;

	if (g.ver)
		return &g;
	if (uname(&u) == 0)
		sscanf(u.release, "%d.%d", &maj, &min);
	g.ver = maj * 100 + min;
	g.exact = 1;
	if (g.ver < 510) {
		g.op_last = 0; /* not a generation the guest suite boots */
		g.exact = 0;
	} else if (g.ver <= 510) {
		/* measured on Debian's 5.10.262: its io_uring is a backport
		 * (doc/kernel.md 6.1 gives 34 and 13 for the 5.10 release) */
		g.op_last = 37, g.reg_last = 20;
	} else if (g.ver <= 514) {
		g.op_last = 37, g.reg_last = g.ver == 513 ? 17 : g.ver == 514 ? 19 : 13;
	} else if (g.ver <= 517) {
		g.op_last = 40, g.reg_last = 20;
	} else if (g.ver <= 518) {
		g.op_last = 41, g.reg_last = 22;
	} else if (g.ver <= 519) {
		g.op_last = 47, g.reg_last = 24;
	} else if (g.ver <= 600) {
		g.op_last = 48, g.reg_last = 26;
	} else if (g.ver <= 606) {
		g.op_last = 49, g.reg_last = 26;
	} else if (g.ver <= 607) {
		g.op_last = 54, g.reg_last = 26;
	} else if (g.ver <= 608) {
		g.op_last = 55, g.reg_last = 27;
	} else if (g.ver <= 610) {
		g.op_last = 56, g.reg_last = 29;
	} else if (g.ver <= 611) {
		g.op_last = 58, g.reg_last = 29;
	} else if (g.ver <= 612) {
		g.op_last = 58, g.reg_last = 31;
	} else if (g.ver <= 614) {
		g.op_last = 58, g.reg_last = 35;
	} else if (g.ver <= 615) {
		g.op_last = 62, g.reg_last = 35;
	} else if (g.ver <= 617) {
		g.op_last = 63, g.reg_last = 35;
	} else if (g.ver <= 618) {
		g.op_last = 63, g.reg_last = 36;
	} else if (g.ver <= 619) {
		g.op_last = 65, g.reg_last = 37;
	} else {
		g.op_last = 65, g.reg_last = 38;
		g.exact = g.ver <= 702;
	}
	g.level = g.ver >= 702 ? IOUR_LEVEL_CONNECT :
		  g.ver >= 700 ? IOUR_LEVEL_TASK_BPF :
		  g.ver >= 618 ? IOUR_LEVEL_QUERY :
				 IOUR_LEVEL_RING;
	g.blind_restrictions = g.ver <= 612 ? -EBADF : g.ver < 700 ? -EINVAL : -EFAULT;
	g.query = g.ver >= 618;
	return &g;
}

/* Skips a check the running generation cannot show, saying why. */
static int guest_skipped;
#define GUEST_SKIP(name, why)                                \
	do {                                                 \
		guest_skipped++;                             \
		printf("skip %s: skipped: %s\n", name, why); \
		fflush(stdout);                              \
	} while (0)

static int guest_summary(void)
{
	printf("%d passed, %d failed, %d skipped\n", guest_passed, guest_failed, guest_skipped);
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
