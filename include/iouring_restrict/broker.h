/* SPDX-License-Identifier: MIT */
/**
 * @file broker.h
 * @brief The ring broker: every ring an unmodified program creates is a
 *        restricted one, on every kernel with per-ring restrictions
 *        (Linux 5.10+).
 *
 * Before Linux 7.0 io_uring can be restricted only per ring, and the
 * companion (companion.h) can only make `io_uring_setup(2)` fail.  The
 * broker serves `io_uring_setup` instead: a seccomp filter on the confined
 * program turns the call into a user notification
 * (`SECCOMP_RET_USER_NOTIF`), and a supervising process holding the
 * filter's listener answers it.  For each call the broker
 * - reads the program's `struct io_uring_params` (`process_vm_readv`, or
 *   `/proc/PID/mem` where that is refused)
 *   and checks again that the notification is still valid;
 * - creates the ring itself with `IORING_SETUP_R_DISABLED` added, applies
 *   the plan's ring part (its restriction set, and the ring-level filters on
 *   Linux 7.0+: iour_plan__apply_ring()) and enables it;
 * - writes the kernel's params output back and installs the ring's fd in the
 *   program with `SECCOMP_IOCTL_NOTIF_ADDFD`, then answers the call with
 *   that fd number (on every kernel: `SECCOMP_ADDFD_FLAG_SEND` was seen
 *   to return 0 instead of the fd now and then on Linux 6.18).
 *
 * The program sees either a working ring, restricted, or an errno
 * `io_uring_setup` itself can return.  Setup flags get these answers:
 * - `IORING_SETUP_SQPOLL`: -EPERM (what an unprivileged SQPOLL ring got
 *   before Linux 5.11).  The SQ thread is created from the task that
 *   creates the ring, the broker: it would run with the broker's
 *   credentials, namespaces, cgroup, root and working directory, and it
 *   resolves plain fds in the broker's fd table, which no other process
 *   can share.  So it is refused always, not only when they differ.
 * - `IORING_SETUP_R_DISABLED` asked by the program: -EPERM (it must never
 *   hold a ring it could restrict or enable itself).
 * - `IORING_SETUP_ATTACH_WQ`: -EINVAL (the answer of a kernel that finds
 *   no ring at `wq_fd`).
 * - `IORING_SETUP_NO_MMAP` and `IORING_SETUP_REGISTERED_FD_ONLY` (rings in
 *   the program's memory, an fd only in its registered-ring table):
 *   -EINVAL, as a kernel before 6.5 answers.
 * - `IORING_SETUP_SINGLE_ISSUER` and `IORING_SETUP_DEFER_TASKRUN`: served
 *   without them (enabling the ring in the broker would make the broker
 *   its single issuer, and the program's submissions would get -EEXIST);
 *   the flags the program sees in its params are the ones it asked for.
 *   These two only restrict or delay the kernel's own work, so the ring
 *   works as the program expects.  A kernel that does not know them
 *   (before 6.0 / 6.1) gets them, and answers -EINVAL as it would.
 * - flags the library does not know: -EINVAL, as the kernel answers;
 *   every other flag is passed to the kernel, which validates it.
 *
 * No caller stalls the broker.  The broker process only takes
 * notifications; each `io_uring_setup` call is served by a worker process
 * of its own, forked for it, which does everything that can wait on the
 * program (reading its memory can wait forever: params in a page of a FUSE
 * file whose READ is never answered) and exits.  Workers are non-dumpable,
 * start with every signal blocked and keep no fd of the process but the
 * listener, the pipes to the broker and standard input, output and error.
 * After its first call a broker keeps one spare worker forked ahead (an
 * idle process), so that the fork is not on the next caller's path.
 * Bounds (iour_broker_opts):
 * - a worker past its deadline (`deadline_ms`, default 2000) is killed and
 *   the broker answers the call: -EFAULT if the params had not been read
 *   yet ("could not be read in time"), -ENOMEM otherwise; counted in
 *   `refused_deadline`.  A worker that dies without answering gets the same
 *   answers.  A killed worker the kernel keeps waiting (a FUSE read
 *   through `/proc/PID/mem`, the fallback where `process_vm_readv` is
 *   refused, ignores SIGKILL until the file system answers or goes away)
 *   is reaped when it exits;
 * - at most `max_workers` (default 4) workers per broker, killed ones that
 *   have not exited included: at the limit the broker stops taking this
 *   listener's notifications until a worker exits (its callers wait; no
 *   other broker's do; counted in `deferred`);
 * - at most `process_workers` (default 64) working workers in the whole
 *   process, all brokers together: beyond it a call is answered -ENOMEM at
 *   once (`refused_busy`), as when no worker can be forked.
 * The program pays also in number: with `max_rings` (0, the default: no
 * limit) a broker hands out at most that many rings ALIVE at once.  A
 * ring counts from the moment it is handed over until the program has
 * let go of it everywhere (every fd of it closed, in every process it was
 * passed to, and its mappings gone); the broker holds no reference to it.
 * At the limit a call is answered -ENOMEM (`refused_quota`; the event's
 * `what` says "ring quota: N rings alive (max_rings M)").  The count is
 * taken before a ring is built: calls served by several workers at once
 * may pass the limit by at most `max_workers` - 1 rings.  The count is an
 * epoll set of the broker with one item per ring (no reference on it),
 * read from /proc/self/fdinfo: without /proc every call is refused.
 * A worker first enters the caller's accounting context (the caller's
 * memory cgroup, locked-memory limit and credentials, doc/security.md 3a
 * "Who pays"), so the ring is charged to the caller; if it cannot, the call
 * is answered -EPERM (`refused_accounting`).  The event's `what` line says
 * which accounting was done.
 *
 * Fail closed: a notification whose listener is closed (the broker died)
 * fails with -ENOSYS in the program, and the filter cannot be removed.
 * Threads, children and programs started by `execve` inherit the filter
 * and are served by the same broker.  doc/security.md gives the threat
 * model.
 *
 * Thread safety: a broker may be used by one thread at a time.  The
 * workers are forked from the thread that calls iour_broker__serve(): in a
 * multi-threaded process the worker runs only that thread (the library uses
 * malloc and stdio in it, which glibc makes safe after fork).  A process
 * that reaps every child (`waitpid(-1, ...)`) or ignores SIGCHLD takes the
 * workers' exit status away; the broker still sees them exit (pidfd).
 */
#ifndef IOURING_RESTRICT_BROKER_H
#define IOURING_RESTRICT_BROKER_H

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

struct iour_plan;

/** @brief A ring broker: serves one seccomp listener with one plan
 *         (opaque). */
struct iour_broker;

/** @name Flags for iour_broker_opts::flags
 *  @{ */
/** @brief iour_broker__install(): install the filter on every thread of
 *  the process (seccomp's `SECCOMP_FILTER_FLAG_TSYNC`). */
#define IOUR_BROKER_ALL_THREADS (1U << 0)
/** @brief iour_broker__new(): iour_broker__serve() never waits: with no
 *  work pending it returns -EAGAIN.  For event loops that serve many
 *  brokers (the OCI agent): a waiting serve would stall every other broker
 *  of the loop until this broker's next event. */
#define IOUR_BROKER_NONBLOCK (1U << 1)
/** @brief iour_broker__install(): do not apply the peer guard (for
 *  debugging the confined program with a debugger outside it).  The
 *  program can then ptrace, `pidfd_getfd` and `process_vm_writev` any
 *  process of its uid, the broker included, and take rings no policy
 *  restricts (doc/security.md, section 3a, "Ring acquisition"). */
#define IOUR_BROKER_ALLOW_PTRACE (1U << 2)
/** @} */

/** @brief One `io_uring_setup` the broker answered (the on_ring
 *         callback). */
struct iour_broker_event {
	size_t sz;            /**< sizeof(struct iour_broker_event) as the library knows it */
	int pid;              /**< the calling thread's id in the broker's pid namespace */
	uint32_t entries;     /**< the entries argument */
	uint32_t setup_flags; /**< the flags the program asked for (0 if unreadable) */
	int result;           /**< the fd number given, or the negative errno answered */
	const char *what;     /**< one line: what was registered, or why it was refused;
				   valid during the callback only */
};

/** @brief The type of iour_broker_opts::on_ring: called with
 *         iour_broker_opts::arg and the event. */
typedef void (*iour_broker_on_ring_fn)(void *arg, const struct iour_broker_event *ev);

/** @brief Options of the broker.  Set @c sz and zero what you do not use;
 *         NULL means all defaults. */
struct iour_broker_opts {
	size_t sz;      /**< sizeof(struct iour_broker_opts) */
	uint32_t flags; /**< IOUR_BROKER_* flags */
	/** Called once per notification answered (served or refused), from
	 *  iour_broker__serve(); may be NULL. */
	iour_broker_on_ring_fn on_ring;
	void *arg; /**< passed to @c on_ring */
	/** iour_broker__new(): how long a worker may take to answer one call,
	 *  in ms (0: 2000; at most 3600000).  Past it the worker is killed
	 *  and the call answered -EFAULT or -ENOMEM ("Bounds" in the
	 *  introduction of broker.h: NOTES, in the manual pages). */
	uint32_t deadline_ms;
	/** iour_broker__new(): workers of this broker at once (0: 4; at most
	 *  1024); at the limit its callers wait. */
	uint32_t max_workers;
	/** iour_broker__new(): working workers of the whole process (every
	 *  broker's) beyond which this broker answers -ENOMEM at once (0: 64;
	 *  at most 65536). */
	uint32_t process_workers;
	/** iour_broker__new(): rings this broker's program may hold alive at
	 *  once (0: no limit, and no cost); past it a call is answered
	 *  -ENOMEM (it may be passed by max_workers - 1; "Bounds" in the
	 *  introduction of broker.h: NOTES, in the manual pages). */
	uint32_t max_rings;
};
/** @brief The last field of struct iour_broker_opts, up to which the library
 *         reads it (the options discipline of common.h). */
#define iour_broker_opts__last_field max_rings

/** @brief Counters of a broker (iour_broker__counters()).  A call served
 *         by a worker is counted when iour_broker__serve() reaps the
 *         worker, which can be after the caller saw its answer. */
struct iour_broker_counters {
	size_t sz;                 /**< set by the caller: sizeof(struct iour_broker_counters) */
	uint64_t notifications;    /**< notifications received */
	uint64_t served;           /**< restricted rings installed in the program */
	uint64_t refused;          /**< calls answered with an errno (all reasons below) */
	uint64_t refused_flags;    /**< ... because of a setup flag the broker refuses */
	uint64_t refused_kernel;   /**< ... because the kernel refused the ring or a step */
	uint64_t refused_memory;   /**< ... because the params could not be read or written */
	uint64_t gone;             /**< notifications whose caller went away before the answer */
	uint64_t refused_deadline; /**< ... refused: the worker did not answer in time (or died) */
	uint64_t refused_busy;     /**< ... refused: no worker could be started (process limit) */
	uint64_t
		refused_accounting; /**< ... refused: the ring could not be charged to the caller */
	uint64_t deferred;      /**< times the broker stopped taking notifications at max_workers */
	uint64_t refused_quota; /**< ... refused: max_rings rings alive (or not countable) */
};

/**
 * @brief **iour_broker__install()** installs, on the calling thread, the
 *        seccomp filter that sends every `io_uring_setup` to a broker, and
 *        gives back the filter's listener.  Irreversible.
 *
 * Call it in the process to be confined (typically a child between `fork`
 * and `execve`), then pass the listener to the supervising process, which
 * gives it to iour_broker__new().  `no_new_privs` is set first (it stays
 * set if the installation then fails).  The filter answers
 * `io_uring_setup` from any other system-call ABI (ia32, x32) with ENOSYS
 * as the companion does, and kills a process calling from an ABI it does
 * not know.  Until a broker serves the listener, the program's
 * `io_uring_setup` blocks; once the listener is closed everywhere, it
 * fails with ENOSYS.
 *
 * Unless #IOUR_BROKER_ALLOW_PTRACE is set, the peer guard comes first, so
 * that the program cannot take a ring from another process (the broker
 * is one): `ptrace` `PTRACE_ATTACH`/`PTRACE_SEIZE`, `pidfd_getfd`,
 * `process_vm_readv` and `process_vm_writev` fail with EPERM in every
 * system-call ABI; where Landlock has ABI 2 or later, a Landlock domain
 * whose only effect is that the program cannot ptrace-access processes
 * outside it (`/proc/PID/mem` included); and CAP_SYS_PTRACE is dropped
 * from the bounding (with CAP_SETPCAP), effective, permitted, inheritable
 * and ambient sets.  Without Landlock ABI 2 (and without Yama's
 * ptrace_scope 1 or more), `/proc/PID/mem` of other dumpable processes of
 * the same uid stays open: doc/security.md, section 3a, says what each
 * kernel closes.  The seccomp part follows #IOUR_BROKER_ALL_THREADS; the
 * Landlock domain and the capabilities are the calling thread's.  The
 * supervising process should make itself non-dumpable
 * (`prctl(PR_SET_DUMPABLE, 0)`).
 *
 * @param opts options (#IOUR_BROKER_ALL_THREADS and
 *        #IOUR_BROKER_ALLOW_PTRACE are read), or NULL.
 * @param listener_fd receives the listener (close-on-exec).
 * @return 0 on success; or a negative error code:
 *  - -EINVAL: @p listener_fd is NULL, unknown flags, @c sz too small;
 *  - -E2BIG: unknown non-zero bytes in @p opts;
 *  - -EOPNOTSUPP: the kernel has no seccomp user notification (before
 *    Linux 5.0) or the library does not know this architecture's ABI;
 *  - -EBUSY: with #IOUR_BROKER_ALL_THREADS, another thread could not be
 *    synchronised;
 *  - -ENOMEM, -EMFILE: from the kernel (also while preparing the peer
 *    guard, before anything was applied).
 * @since 1.1
 */
IOUR_API int iour_broker__install(const struct iour_broker_opts *opts, int *listener_fd);

/**
 * @brief **iour_broker__new()** creates a broker that answers the
 *        notifications of @p listener_fd with rings restricted by @p plan.
 *
 * @param plan a plan with a ring part (a ring plan, or a task plan compiled
 *        for a kernel without task restrictions); the broker keeps a
 *        reference to it: free the plan only after the broker.
 * @param listener_fd a seccomp listener (iour_broker__install()); the
 *        broker owns it on success and closes it in iour_broker__free().
 * @param opts options, or NULL.
 * @param out receives the broker.
 * @return 0 on success; -EINVAL if @p plan or @p out is NULL, the plan has
 *         no ring part, @p listener_fd is negative or not pollable, or
 *         @p opts is invalid (a limit above its maximum);
 *         -E2BIG; -IOUR_ERRNO__UNSUPPORTED if the plan was refused by
 *         #IOUR_POLICY_COMPAT_HARD; -ENOMEM, -EMFILE, -ENFILE (the broker's
 *         epoll fds and timerfd).
 * @since 1.1
 */
IOUR_API int iour_broker__new(const struct iour_plan *plan, int listener_fd,
			      const struct iour_broker_opts *opts, struct iour_broker **out);

/**
 * @brief **iour_broker__fd()** gives the fd to wait on with `poll(2)` or
 *        `epoll`: readable (POLLIN) when iour_broker__serve() has work
 *        (a notification, a worker that finished, a deadline passed, or
 *        every confined process gone).  It is the broker's own epoll fd,
 *        not the listener; it never reports POLLHUP: serve() says -ENOENT.
 * @param b the broker.
 * @return the fd; -EINVAL if @p b is NULL.
 * @since 1.1
 */
IOUR_API int iour_broker__fd(const struct iour_broker *b);

/**
 * @brief **iour_broker__serve()** does the broker's pending work: reaps
 *        the workers that finished (counting them and calling on_ring for
 *        their calls), answers the calls of workers past their deadline,
 *        and takes new notifications, forking a worker for each.  It never
 *        waits on a caller.  Without #IOUR_BROKER_NONBLOCK it waits until
 *        there is work (one event); with it, it never waits.
 *
 * A notification that is not `io_uring_setup` (it cannot come from the
 * library's filter) is answered with -ENOSYS.  Errors of one call (a
 * refused flag, a kernel refusal, a deadline, a caller that went away) are
 * answers to the program, counted and reported to the callback; they are
 * not errors of this function.  The callback is called from this function,
 * in the calling process, never from a worker.
 *
 * @param b the broker.
 * @return 0 after some work was done; or a negative error code:
 *  - -EINVAL: @p b is NULL;
 *  - -ENOENT: every process the filter confined has exited and every
 *    worker has been reaped: stop serving;
 *  - -EINTR: a signal interrupted the wait;
 *  - -EAGAIN: with #IOUR_BROKER_NONBLOCK, nothing was pending;
 *  - -ENOMEM or another negative errno from the kernel's
 *    `SECCOMP_IOCTL_NOTIF_RECV`.
 * @since 1.1
 */
IOUR_API int iour_broker__serve(struct iour_broker *b);

/**
 * @brief **iour_broker__counters()** reads the broker's counters.
 * @param b the broker.
 * @param out receives the counters; set its `sz` first.  Fields beyond
 *        the caller's `sz` are not written.
 * @return 0 on success; -EINVAL if @p b or @p out is NULL or `out->sz`
 *         is smaller than its first field or above #IOUR_OPTS_MAX_SZ.
 * @since 1.1
 */
IOUR_API int iour_broker__counters(const struct iour_broker *b, struct iour_broker_counters *out);

/**
 * @brief **iour_broker__free()** kills the broker's workers, answers
 *        their calls -ENOSYS, reaps the workers that exit within 100 ms,
 *        closes the listener and releases the broker.  Programs confined by
 *        the listener's filter get -ENOSYS from `io_uring_setup` from then
 *        on (unless another process holds a copy of the listener; a killed
 *        worker the kernel still keeps waiting holds one until it exits).
 *        Rings already handed out keep working.
 * @param b the broker; NULL is accepted and ignored.
 * @since 1.1
 */
IOUR_API void iour_broker__free(struct iour_broker *b);

#ifdef __cplusplus
}
#endif

#endif /* IOURING_RESTRICT_BROKER_H */
