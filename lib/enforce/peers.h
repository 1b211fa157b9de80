/* SPDX-License-Identifier: MIT */
/*
 * The peer guard: a confined program cannot reach into other processes to
 * take or use a ring no policy restricts (doc/security.md, section 3a,
 * "Ring acquisition").  Applied by iour_broker__install() and
 * iour_plan__apply_task() unless their ALLOW_PTRACE flag says otherwise.
 *
 * Its parts:
 * - a seccomp filter: ptrace(PTRACE_ATTACH / PTRACE_SEIZE), pidfd_getfd,
 *   process_vm_readv and process_vm_writev fail with EPERM, in every
 *   system-call ABI of the architecture (x86-64 with the x32 numbers
 *   folded, i386; arm64, arm), an unknown ABI is killed;
 * - where Landlock has ABI 2 or later, a Landlock domain whose only effect
 *   is ptrace scoping: it handles REFER and MAKE_BLOCK and allows both
 *   beneath "/", and a process in a domain cannot ptrace-access a process
 *   outside it (ptrace, /proc/PID/mem, pidfd_getfd, process_vm_*); ABI 1
 *   denies every cross-directory rename and link in a domain, so it is not
 *   used;
 * - CAP_SYS_PTRACE dropped from the bounding set (when CAP_SETPCAP allows)
 *   and from the effective, permitted, inheritable and ambient sets.
 *
 * Everything that can fail for a reason other than memory is done in
 * iour__peers_prepare(), which changes nothing; iour__peers_apply() then
 * makes the irreversible calls.
 *
 * The guard makes its system calls directly, not through the syscall seam
 * (lib/base/sys.h): an emulated kernel restricts nothing real, so the callers
 * apply the guard only when the seam is the real kernel.
 */
#ifndef IOUR_LIB_PEERS_H
#define IOUR_LIB_PEERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/internal.h"
#include "iouring_restrict/cbpf.h"

/* Longest guard program. */
#define IOUR__PEERS_MAX_INSNS 32

/* What the guard closes, and what closes the rest (iour__peers::closes). */
#define IOUR__PEERS_SECCOMP (1U << 0)  /* ptrace attach, pidfd_getfd, process_vm_* */
#define IOUR__PEERS_LANDLOCK (1U << 1) /* Landlock ptrace scoping (/proc/PID/mem too) */
#define IOUR__PEERS_YAMA (1U << 2)     /* Yama ptrace_scope >= 1: only descendants */
#define IOUR__PEERS_NOCAP (1U << 3)    /* no CAP_SYS_PTRACE, nor a way to regain it */
/* All of these: no path to another process's memory or descriptors. */
#define IOUR__PEERS_CLOSED(c)                                 \
	(((c) & (IOUR__PEERS_SECCOMP | IOUR__PEERS_NOCAP)) == \
		 (IOUR__PEERS_SECCOMP | IOUR__PEERS_NOCAP) && \
	 ((c) & (IOUR__PEERS_LANDLOCK | IOUR__PEERS_YAMA)))

struct iour__peers {
	struct iour_insn prog[IOUR__PEERS_MAX_INSNS];
	int len;          /* instructions in prog */
	int landlock_abi; /* Landlock's ABI version, or <= 0: none usable */
	int ruleset;      /* the prepared Landlock ruleset, or -1 */
	int yama;         /* Yama's ptrace_scope, -1 without Yama */
	bool drop_bset;   /* CAP_SYS_PTRACE is in the bounding set, CAP_SETPCAP held */
	uint32_t closes;  /* IOUR__PEERS_*: what apply closed (prepare: will close) */
};

/*
 * The guard's seccomp program into `out` (room for IOUR__PEERS_MAX_INSNS):
 * the count, or -EOPNOTSUPP when the build architecture's ABI is unknown.
 */
IOUR_INTERNAL int iour__peers_build(struct iour_insn *out);

/*
 * Prepare the guard: build the program, query Landlock and Yama, create
 * the Landlock ruleset, read the capability sets.  Changes nothing about
 * the process.  0, or -EOPNOTSUPP (unknown ABI), -ENOMEM, -EMFILE, or the
 * kernel's error creating the ruleset.
 */
IOUR_INTERNAL int iour__peers_prepare(struct iour__peers *g);

/*
 * Apply a prepared guard to the calling thread (the seccomp part to every
 * thread when `all_threads`): capabilities, then Landlock, then seccomp.
 * The caller has no_new_privs set or CAP_SYS_ADMIN.  Irreversible; releases
 * the ruleset.  0, or the kernel's error (-ENOMEM, -EBUSY for a thread
 * that could not be synchronised).
 */
IOUR_INTERNAL int iour__peers_apply(struct iour__peers *g, bool all_threads);

/* Release what prepare holds (the ruleset); nothing applied. */
IOUR_INTERNAL void iour__peers_release(struct iour__peers *g);

/*
 * One clause for a report: what `closes` leaves open to a confined
 * program, or that other processes' rings are closed.  Returns `buf`.
 */
IOUR_INTERNAL const char *iour__peers_describe(uint32_t closes, char *buf, size_t len);

#endif /* IOUR_LIB_PEERS_H */
