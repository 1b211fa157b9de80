/* SPDX-License-Identifier: MIT */
/*
 * Internal helpers of the enforcement building blocks (seccomp companion,
 * enforcement check, thread count) for the planner and executor.  Not
 * installed.
 */
#ifndef IOUR_LIB_ENFORCE_INTERNAL_H
#define IOUR_LIB_ENFORCE_INTERNAL_H

#include "base/internal.h"
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

/* Longest ring-less guard program (iour__companion_build_guard()). */
#define IOUR__GUARD_MAX_INSNS 32

/*
 * Build a seccomp program that denies, with `blind_err`, io_uring_register
 * on fd -1 (the ring-less path, doc/kernel.md 2) for the register opcodes
 * whose bits are set in `blind` (opcodes below 64), and, when `setup_err`
 * is not 0, io_uring_setup with `setup_err` as the companion does.  Into
 * `out` (room for IOUR__GUARD_MAX_INSNS); the count or -EOPNOTSUPP.
 */
IOUR_INTERNAL int iour__companion_build_guard(uint32_t setup_err, uint64_t blind,
					      uint32_t blind_err, struct iour_insn *out);

/* The broker's seccomp filter (lib/enforce/companion.c): io_uring_setup of the
 * native ABI -> SECCOMP_RET_USER_NOTIF.  `out` has room for
 * IOUR__COMPANION_MAX_INSNS.  Returns the count or -EOPNOTSUPP. */
IOUR_INTERNAL int iour__broker_filter_build(struct iour_insn *out);

#endif /* IOUR_LIB_ENFORCE_INTERNAL_H */
