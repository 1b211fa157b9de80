/* SPDX-License-Identifier: MIT */
/**
 * @file companion.h
 * @brief The seccomp companion: stop the calling task and its children from
 *        creating new io_uring rings, for kernels without task-level
 *        io_uring restrictions; and the thread count that tells whether
 *        per-task measures cover the whole process.
 *
 * On kernels before Linux 7.0 io_uring can only be restricted per ring: the
 * library creates a ring, restricts it and hands it over.  Nothing stops
 * code in the process from calling `io_uring_setup(2)` itself and getting a
 * new, unrestricted ring.  The companion closes that gap with a small
 * seccomp filter on the calling thread (inherited by every task it creates
 * afterwards, kept across `execve`): `io_uring_setup` fails with an errno
 * of the caller's choice.
 *
 * - **ENOSYS** is the default, because it reads as "this kernel has no
 *   io_uring": event loops such as libuv and Tokio then fall back to epoll
 *   instead of failing.  **EPERM** (what `kernel.io_uring_disabled=2`
 *   gives) or any errno from 1 to 4095 can be chosen.
 * - By default only `io_uring_setup` is denied, so rings that exist already
 *   keep working: the restricted ring the library created before installing
 *   the companion remains usable, which is the point of the combination.
 *   `io_uring_enter` and `io_uring_register` can be denied too; then the
 *   task and its children can no longer submit to or wait on any ring
 *   through a system call.  That is not enough on its own: a ring created
 *   with `IORING_SETUP_SQPOLL` is served by a kernel thread that reads the
 *   submission queue from shared memory, so a task that still holds such a
 *   ring's fd (it can map it again) or mapping submits requests with no
 *   system call at all while the ring's owner keeps that thread awake.  See
 *   "Rings that exist already" below.
 * - The filter checks the system-call ABI first, as seccomp filters must:
 *   on x86-64 a 32-bit (ia32) process, or a 64-bit one using `int 0x80`,
 *   reaches io_uring under the i386 numbers, and x32 numbers carry bit 30;
 *   both are denied like the native calls (run on x86-64 kernels).  An
 *   arm64 build checks the 32-bit ARM ABI the same way, but that build
 *   has not been run on an arm64 kernel: its program is neither tested nor
 *   installed by any test.  A system call from any other ABI kills the
 *   process (it cannot occur on a correctly configured system).
 *
 * A seccomp filter cannot be removed, so installing the companion is
 * irreversible for the calling thread and everything it starts.  The kernel
 * installs a seccomp filter only for a task that has `no_new_privs` set or
 * holds CAP_SYS_ADMIN in its user namespace; the companion sets
 * `no_new_privs` only when asked (#IOUR_COMPANION_SET_NNP).
 *
 * **Rings that exist already.**  To make every existing ring unreachable
 * for a program about to be executed, deny `io_uring_enter` and
 * `io_uring_register` (#IOUR_COMPANION_ENTER, #IOUR_COMPANION_REGISTER),
 * close every io_uring fd of the calling thread
 * (**iour_ring_fds_close()**), then `execve`: the new program starts with
 * no io_uring fd and no mapping of any ring (execve drops every mapping,
 * and the kernel drops the thread's registered ring fds), cannot create a
 * ring, and cannot receive one: the kernel refuses io_uring fds in
 * `SCM_RIGHTS` messages (EINVAL) and refuses to reopen them through
 * `/proc/PID/fd` (ENXIO; an `O_PATH` reopen gives an fd that is no ring),
 * as measured on Linux 6.1 (Debian's 6.1.0-57 build), 6.18 and 7.2; a
 * kernel build that still passes ring fds over sockets would let a
 * received ring be mapped and fed through its memory.
 * What remains, and is outside what the companion can stop
 * (doc/security.md lists it too):
 * - without the `execve`, closing the fds does not unmap rings the caller
 *   mapped: a mapped SQPOLL ring stays usable through its memory until it
 *   is unmapped;
 * - a process allowed to ptrace a ring's owner (same user, no Yama
 *   restriction, or CAP_SYS_PTRACE) can copy the owner's ring fd with
 *   `pidfd_getfd(2)`, or write into the owner's mapping of the ring, and
 *   so submit through it; such a process controls the owner anyway;
 * - other processes that hold a ring (a child forked before, the ring's
 *   owner) are not affected at all;
 * - a ring fd with the close-on-exec flag is closed by `execve` in any
 *   case; one without it survives unless closed first.
 *
 * Threads: a seccomp filter, like io_uring's task restrictions, is attached
 * to the calling thread and inherited by threads and processes it creates
 * later.  Threads that already exist are not covered unless
 * #IOUR_COMPANION_ALL_THREADS is given; **iour_task_thread_count()** tells
 * whether there are any.
 */
#ifndef IOURING_RESTRICT_COMPANION_H
#define IOURING_RESTRICT_COMPANION_H

#include "common.h"
#include "cbpf.h"

#ifdef __cplusplus
extern "C" {
#endif

/** @name Flags for iour_companion_opts::flags
 *  @{ */
/** @brief Deny `io_uring_enter` as well: existing rings can no longer be
 *  entered (an SQPOLL ring can still be fed through its memory: close its
 *  fds with iour_ring_fds_close() before `execve`). */
#define IOUR_COMPANION_ENTER (1U << 0)
/** @brief Deny `io_uring_register` as well. */
#define IOUR_COMPANION_REGISTER (1U << 1)
/** @brief Set `no_new_privs` before installing the filter.  It cannot be
 *  cleared again, and it stays set even if the installation then fails. */
#define IOUR_COMPANION_SET_NNP (1U << 2)
/** @brief Install the filter on every thread of the process (seccomp's
 *  `SECCOMP_FILTER_FLAG_TSYNC`), not just the calling one. */
#define IOUR_COMPANION_ALL_THREADS (1U << 3)
/** @} */

/** @brief The errno the companion returns by default (ENOSYS, 38 on Linux). */
#define IOUR_COMPANION_DEFAULT_ERRNO 38
/** @brief The largest errno seccomp can return. */
#define IOUR_COMPANION_MAX_ERRNO 4095

/**
 * @brief Options of the seccomp companion.  Set @c sz to the struct's size
 *        and zero every field you do not use; NULL means all defaults
 *        (deny `io_uring_setup` only, with ENOSYS, on the calling thread,
 *        without touching `no_new_privs`).
 */
struct iour_companion_opts {
	size_t sz;            /**< sizeof(struct iour_companion_opts) */
	uint32_t flags;       /**< IOUR_COMPANION_* flags */
	uint32_t errno_value; /**< errno for denied calls: 0 means ENOSYS;
				   otherwise 1 to 4095 */
};
/** @brief The last field of struct iour_companion_opts, up to which the library reads
 *         it (the options discipline of common.h). */
#define iour_companion_opts__last_field errno_value
/** @brief The last field of struct iour_companion_opts (for size checks). */
#define iour_companion_opts__last_field errno_value

/**
 * @brief **iour_companion_install()** installs the seccomp companion on the
 *        calling thread, so that it and every task it creates later can no
 *        longer create io_uring rings.  Irreversible.
 *
 * Order of operations: the options are validated and seccomp support is
 * checked first (nothing changes on failure); then `no_new_privs` is set
 * if #IOUR_COMPANION_SET_NNP asks for it; then the filter is installed.
 *
 * Without `no_new_privs` and without CAP_SYS_ADMIN the kernel refuses the
 * filter and this returns -EACCES, and nothing changed.  Root (or any
 * holder of CAP_SYS_ADMIN in the current user namespace) may install it
 * without `no_new_privs`.
 *
 * @param opts options, or NULL for the defaults.
 * @return 0 on success; or a negative error code:
 *  - -EINVAL: unknown flags, or @c errno_value above 4095, or @c sz too
 *    small;
 *  - -E2BIG: @p opts has non-zero bytes beyond the fields this library
 *    knows;
 *  - -EACCES: `no_new_privs` is not set and the caller lacks CAP_SYS_ADMIN
 *    (pass #IOUR_COMPANION_SET_NNP); nothing was changed;
 *  - -EOPNOTSUPP: the kernel has no seccomp filter support, or the library
 *    was built for an architecture whose system-call ABI it does not know;
 *  - -EBUSY: with #IOUR_COMPANION_ALL_THREADS, another thread could not be
 *    synchronised (it runs a different seccomp filter); nothing was
 *    installed on any thread;
 *  - -ENOMEM: the kernel could not allocate the filter (or the task's
 *    stacked filters would exceed seccomp's total size limit).
 * @since 1.0
 */
IOUR_API int iour_companion_install(const struct iour_companion_opts *opts);

/**
 * @brief **iour_companion_program()** returns the classic-BPF seccomp
 *        program that **iour_companion_install()** would install with the
 *        same options, for inspection, tests or installation by other
 *        means.  Two-call sizing: call with @p insns NULL to learn the
 *        count.
 *
 * The program reads `struct seccomp_data` (system-call number at offset 0,
 * `AUDIT_ARCH_*` value at offset 4) and returns `SECCOMP_RET_ALLOW`,
 * `SECCOMP_RET_ERRNO | errno` or `SECCOMP_RET_KILL_PROCESS`.
 *
 * @param opts options as for **iour_companion_install()**, or NULL.
 * @param insns destination array, or NULL to query the count.
 * @param cnt number of elements in @p insns (ignored when @p insns is
 *        NULL).
 * @return the number of instructions of the program (> 0), written to
 *         @p insns unless it is NULL; or a negative error code:
 *  - -EINVAL, -E2BIG: bad @p opts, as for **iour_companion_install()**;
 *  - -ERANGE: @p cnt is smaller than the program (nothing written);
 *  - -EOPNOTSUPP: the library was built for an architecture whose
 *    system-call ABI it does not know.
 * @since 1.0
 */
IOUR_API int iour_companion_program(const struct iour_companion_opts *opts, struct iour_insn *insns,
				    size_t cnt);

/**
 * @brief **iour_task_thread_count()** counts the threads of the calling
 *        process, from `/proc/self/task`.
 *
 * Task-level io_uring restrictions (Linux 7.0+) and the seccomp companion
 * attach to the calling thread and are inherited only by tasks it creates
 * afterwards: any other thread that already exists is not covered.  A
 * result above 1 means such threads exist.  The count is a snapshot; the
 * process may create or end threads at any time.
 *
 * io_uring's own kernel threads (an SQPOLL ring's `iou-sqp-*` thread and
 * the `iou-wrk-*` io-wq workers, which the kernel marks `PF_IO_WORKER`)
 * are not counted: they run only io_uring work for the rings of this
 * process, never its code.  They are recognised by that flag in
 * `/proc/self/task/TID/stat`, not by their names, which any thread can
 * take.
 *
 * @return the number of threads (>= 1); or a negative error code:
 *  - -ENOENT: `/proc/self/task` cannot be read (procfs not mounted, or
 *    hidden);
 *  - -EMFILE: no file descriptor is available;
 *  - -ENOMEM: out of memory.
 * @since 1.0
 */
IOUR_API int iour_task_thread_count(void);

/** @name Flags for iour_ring_fds_close()
 *  @{ */
/** @brief Close nothing: fail with -EBUSY if the calling thread holds any
 *  io_uring fd. */
#define IOUR_RING_FDS_REFUSE (1U << 0)
/** @} */

/**
 * @brief **iour_ring_fds()** lists the io_uring file descriptors of the
 *        calling thread's file table.  Two-call sizing: call with @p fds
 *        NULL to learn the count.
 *
 * A descriptor is an io_uring ring when its `/proc/thread-self/fd` link
 * reads `anon_inode:[io_uring]`; the table is the one an `execve` by this
 * thread keeps (shared with the other threads unless one unshared it).
 * Without procfs the answer is an error, never "none": a directory that is
 * not procfs counts as missing procfs.  The list is a snapshot: other
 * threads may open or close descriptors at any time.
 *
 * @param fds destination array in ascending order, or NULL to query the
 *        count.
 * @param cnt number of elements in @p fds (ignored when @p fds is NULL).
 * @return the number of io_uring fds (>= 0), written to @p fds unless it is
 *         NULL; or a negative error code:
 *  - -ERANGE: there are more than @p cnt (the first @p cnt are written);
 *  - -ENOENT: `/proc/thread-self/fd` cannot be read or is not procfs;
 *  - -EMFILE: no file descriptor is available;
 *  - -ENOMEM: the kernel is out of memory.
 * @since 1.0
 */
IOUR_API int iour_ring_fds(int *fds, size_t cnt);

/**
 * @brief **iour_ring_fds_close()** closes every io_uring file descriptor
 *        of the calling thread's file table (see **iour_ring_fds()**), or
 *        with #IOUR_RING_FDS_REFUSE refuses if there is any.
 *
 * Call it just before `execve`, after installing the companion with
 * #IOUR_COMPANION_ENTER and #IOUR_COMPANION_REGISTER, so that the new
 * program can reach no ring that exists: it closes the gap of an SQPOLL
 * ring, whose inherited fd could be mapped again and fed through memory
 * alone.  Closing an fd does not unmap a ring the caller mapped (execve
 * does), and a ring stays alive while any process holds it; the limits are
 * listed at the top of this file.
 *
 * @param flags 0 (close them all) or #IOUR_RING_FDS_REFUSE.
 * @return the number of fds closed (>= 0; 0 with #IOUR_RING_FDS_REFUSE);
 *         or a negative error code, in which case nothing was closed
 *         unless stated:
 *  - -EINVAL: unknown @p flags;
 *  - -EBUSY: with #IOUR_RING_FDS_REFUSE, the thread holds an io_uring fd;
 *    without it, an io_uring fd was still there after closing (another
 *    thread opened one meanwhile; those found first were closed);
 *  - -ENOENT: `/proc/thread-self/fd` cannot be read or is not procfs, so
 *    the fds cannot be found (fail closed: do not execute);
 *  - -EMFILE: no file descriptor is available;
 *  - -ENOMEM: the kernel is out of memory.
 * @since 1.0
 */
IOUR_API int iour_ring_fds_close(uint32_t flags);

#ifdef __cplusplus
}
#endif

#endif /* IOURING_RESTRICT_COMPANION_H */
