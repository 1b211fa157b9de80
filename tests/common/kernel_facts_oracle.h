/* SPDX-License-Identifier: MIT */
/*
 * Kernel facts restated on purpose: the test oracles of the library's one
 * table of kernel facts (lib/base/kernel_facts.def) and of its kernel
 * generations (include/iouring_restrict/probe.h).
 *
 * Why these are copies.  A test that compared the library with numbers
 * taken from the library would pass whatever the table says; a typo in a
 * row (a wrong version, a wrong number) would then be "confirmed".  So the
 * values a test checks the library against are written here a second
 * time, by hand, from the kernel's UAPI headers and history and the
 * measurements of doc/kernel.md (sections 2.3, 6.1 to 6.5), and never
 * derived from lib/.  Only tests include this header; a test that merely
 * needs a kernel number to work with (an input, not an expectation) takes
 * the library's (base/uapi.h, names.h, iour_kernel_generation()).
 *
 * Every restated fact lives here, once, so that a kernel release that
 * changes one is a change of this file and of the table, and of nothing
 * else.  Tables of per-release counts that the name tests walk
 * (IORING_OP_LAST and IORING_REGISTER_LAST by kernel) stay with those
 * tests (tests/unit/test_names.c), as the tables of doc/kernel.md 6.1 and
 * 6.2 written out.
 */
#ifndef IOUR_TEST_KERNEL_FACTS_ORACLE_H
#define IOUR_TEST_KERNEL_FACTS_ORACLE_H

#include "iouring_restrict/names.h"

/* System call numbers of io_uring (the same in every ABI the library
 * knows: doc/kernel.md 1.1). */
#define ORACLE_NR_IO_URING_SETUP 425
#define ORACLE_NR_IO_URING_ENTER 426
#define ORACLE_NR_IO_URING_REGISTER 427

/* Kernel generations (doc/kernel.md 2.3, 3, 6.5). */
#define ORACLE_KVER_NEWEST IOUR_KVER(7, 2)            /* the newest release known */
#define ORACLE_KVER_RING_RESTRICTIONS IOUR_KVER(5, 10) /* R_DISABLED, RESTRICTIONS */
#define ORACLE_KVER_BLIND_REGISTER IOUR_KVER(6, 13)    /* register on fd -1 */
#define ORACLE_KVER_SPLIT_GATES IOUR_KVER(7, 0)        /* split gates, task sets */

/* The representative kernel of each feature level (doc/kernel.md 6.5;
 * 0: no io_uring), indexed by enum iour_feature_level. */
#define ORACLE_LEVEL_KERNELS                                                           \
	{                                                                              \
		0, IOUR_KVER(5, 4), IOUR_KVER(6, 1), IOUR_KVER(6, 18), IOUR_KVER(7, 0), \
			IOUR_KVER(7, 2)                                                \
	}

/* Request opcodes whose preparation may set the request's force-async
 * flag, which shows as IOSQE_ASYNC in the submit tracepoint and the filter
 * context (doc/kernel.md 4.3 and 6.1): the kernel's prep functions of
 * these opcodes, by name. */
#define ORACLE_FORCED_ASYNC_OPS                                                         \
	{                                                                               \
		"FSYNC", "SYNC_FILE_RANGE", "FALLOCATE", "FADVISE", "MADVISE", "OPENAT", \
			"OPENAT2", "STATX", "RENAMEAT", "UNLINKAT", "MKDIRAT", "SYMLINKAT", \
			"LINKAT", "FSETXATTR", "SETXATTR", "FGETXATTR", "GETXATTR",      \
			"FTRUNCATE"                                                      \
	}

#endif /* IOUR_TEST_KERNEL_FACTS_ORACLE_H */
