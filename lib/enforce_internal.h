/* SPDX-License-Identifier: MIT */
/*
 * Internal helpers of the enforcement building blocks (seccomp companion,
 * enforcement check, thread count) for the planner and executor.  Not
 * installed.
 */
#ifndef IOUR_LIB_ENFORCE_INTERNAL_H
#define IOUR_LIB_ENFORCE_INTERNAL_H

#include "internal.h"
#include "iouring_restrict/cbpf.h"

/*
 * Number of threads of the calling process (entries of /proc/self/task,
 * without io_uring's own PF_IO_WORKER threads), >= 1; or -ENOENT (procfs
 * unreadable), -EMFILE (no fd), -ENOMEM.
 */
IOUR_INTERNAL int iour__count_threads(void);

/* Longest companion program any option combination produces. */
#define IOUR__COMPANION_MAX_INSNS 16

/*
 * Build the companion program for `flags` (IOUR_COMPANION_ENTER/REGISTER
 * matter) and a resolved errno (1..4095) into `out` (room for
 * IOUR__COMPANION_MAX_INSNS).  Returns the count, or -EOPNOTSUPP when the
 * build architecture's system-call ABI is unknown.  No validation of its
 * arguments beyond that: the public functions validate first.
 */
IOUR_INTERNAL int iour__companion_build(uint32_t flags, uint32_t err, struct iour_insn *out);

/* The broker's seccomp filter (lib/companion.c): io_uring_setup of the
 * native ABI -> SECCOMP_RET_USER_NOTIF.  `out` has room for
 * IOUR__COMPANION_MAX_INSNS.  Returns the count or -EOPNOTSUPP. */
IOUR_INTERNAL int iour__broker_filter_build(struct iour_insn *out);

#endif /* IOUR_LIB_ENFORCE_INTERNAL_H */
