/* SPDX-License-Identifier: MIT */
/**
 * @file report.h
 * @brief Reports: what a plan expects (iour_plan__report()) or what the
 *        executor did (plan.h), rule by rule.
 *
 * **Enforcement status.**  Reports say #IOUR_STATUS_FULLY only when the
 * kernel enforces exactly the policy for the whole target: for a task,
 * every ring the task and its descendants create later.  Anything that
 * differs is #IOUR_STATUS_PARTIALLY with #IOUR_REPORT_LOOSENED (some
 * request the policy forbids may succeed) and/or #IOUR_REPORT_TIGHTENED
 * (some request the policy allows is denied).  On a kernel without task
 * restrictions the report of a task plan describes the task: by default
 * (#IOUR_POLICY_ATTR_COMPANION, degrade closed) the seccomp companion makes
 * `io_uring_setup` fail, so the task is #IOUR_STATUS_PARTIALLY enforced
 * with #IOUR_REPORT_TIGHTENED and mechanism #IOUR_MECH_COMPANION alone;
 * without the companion no step applies to the task and it is
 * #IOUR_STATUS_NOT_ENFORCED (#IOUR_REPORT_LOOSENED, #IOUR_REPORT_RING_ONLY):
 * the plan's ring part then restricts only rings created through
 * iour_plan__create_ring() or iour_plan__apply_ring(), whose own reports
 * describe that ring.
 *
 * Thread safety: reports are immutable once returned.
 */
#ifndef IOURING_RESTRICT_REPORT_H
#define IOURING_RESTRICT_REPORT_H

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

/** @brief What a plan expects, or what an application did (opaque). */
struct iour_report;

/** @name Reports
 *  @{ */

/** @brief How completely the kernel enforces the policy. */
enum iour_status {
	/** Nothing is enforced. */
	IOUR_STATUS_NOT_ENFORCED = 0,
	/** Something is enforced, but not exactly the policy, or not for the
	 *  whole target; see #IOUR_REPORT_LOOSENED and #IOUR_REPORT_TIGHTENED. */
	IOUR_STATUS_PARTIALLY = 1,
	/** The kernel enforces exactly the policy for the whole target. */
	IOUR_STATUS_FULLY = 2
};

/** @brief Mechanism: none (bits of iour_report__mechanism()). */
#define IOUR_MECH_NONE 0U
/** @brief Mechanism: task-level restrictions and filters (Linux 7.0+). */
#define IOUR_MECH_TASK (1U << 0)
/** @brief Mechanism: ring-level argument filters (Linux 7.0+). */
#define IOUR_MECH_RING (1U << 1)
/** @brief Mechanism: a classic set on a ring created disabled (5.10+). */
#define IOUR_MECH_RING_DISABLED (1U << 2)
/** @brief Mechanism: the seccomp companion blocks `io_uring_setup`. */
#define IOUR_MECH_COMPANION (1U << 3)

/** @brief Report flag: some request the policy forbids may succeed. */
#define IOUR_REPORT_LOOSENED (1U << 0)
/** @brief Report flag: some request the policy allows is denied. */
#define IOUR_REPORT_TIGHTENED (1U << 1)
/** @brief Report flag: no_new_privs was set (or would be, for a plan). */
#define IOUR_REPORT_NNP_SET (1U << 2)
/** @brief Report flag: other threads existed; they are not restricted. */
#define IOUR_REPORT_OTHER_THREADS (1U << 3)
/** @brief Report flag: a step failed and the later steps did not run. */
#define IOUR_REPORT_STOPPED (1U << 4)
/** @brief Report flag: only rings set up through the library are
 *         restricted; other rings of the task are not. */
#define IOUR_REPORT_RING_ONLY (1U << 5)
/** @brief Report flag: a plan's expected report; nothing was applied. */
#define IOUR_REPORT_PLANNED (1U << 6)

/** @brief Kinds of decisions (iour_decision::kind). */
enum iour_decision_kind {
	/** A rule is not enforced at all. */
	IOUR_DECISION_DROPPED = 1,
	/** A rule is replaced by a stricter one (more is denied). */
	IOUR_DECISION_TIGHTENED = 2,
	/** A rule is replaced by a weaker one (more is allowed). */
	IOUR_DECISION_LOOSENED = 3,
	/** A rule names an opcode the kernel does not have; nothing changes
	 *  for requests the kernel can run. */
	IOUR_DECISION_CLAMPED = 4,
	/** A payload size was negotiated with the kernel. */
	IOUR_DECISION_NEGOTIATED = 5,
	/** Something the caller should know that changes no rule. */
	IOUR_DECISION_NOTE = 6,
	/** A step failed when executed. */
	IOUR_DECISION_FAILED = 7
};

/** @brief Why a decision was taken (iour_decision::reason). */
enum iour_reason {
	IOUR_REASON_NONE = 0,
	/** io_uring cannot be used by this caller at all. */
	IOUR_REASON_NO_IO_URING = 1,
	/** The kernel cannot restrict rings (before Linux 5.10). */
	IOUR_REASON_NO_RING_RESTRICTIONS = 2,
	/** The kernel has no task restrictions (before Linux 7.0). */
	IOUR_REASON_NO_TASK_RESTRICTIONS = 3,
	/** The kernel cannot filter arguments on this path (before 7.0). */
	IOUR_REASON_NO_FILTERS = 4,
	/** The kernel fills no (or a shorter) payload for this opcode. */
	IOUR_REASON_NO_PAYLOAD = 5,
	/** The kernel does not know this opcode. */
	IOUR_REASON_UNKNOWN_OPCODE = 6,
	/** The seccomp companion makes `io_uring_setup` fail. */
	IOUR_REASON_COMPANION = 7,
	/** #IOUR_POLICY_COMPAT_SOFT: not exact, so nothing is applied. */
	IOUR_REASON_COMPAT_SOFT = 8,
	/** #IOUR_POLICY_COMPAT_HARD: not exact, so the plan is refused. */
	IOUR_REASON_COMPAT_HARD = 9,
	/** Other threads exist. */
	IOUR_REASON_THREADS = 10,
	/** A step failed. */
	IOUR_REASON_STEP_FAILED = 11,
	/** The task or ring already has a classic set. */
	IOUR_REASON_ALREADY_RESTRICTED = 12,
	/** Rings that exist already are not affected. */
	IOUR_REASON_EXISTING_RINGS = 13,
	/** Register opcodes and SQE flags cannot be expressed by filters. */
	IOUR_REASON_NOT_EXPRESSIBLE = 14,
	/** no_new_privs is set by the plan. */
	IOUR_REASON_NNP = 15,
	/** The ring is left disabled after a failure. */
	IOUR_REASON_RING_LEFT_DISABLED = 16,
	/** The classic allow-list denies an opcode that has argument rules:
	 *  the rules are never used. */
	IOUR_REASON_SHADOWED = 17,
	/** The plan was compiled for a kernel that differs from the running
	 *  one where its steps depend on it (see iour_plan_opts). */
	IOUR_REASON_KERNEL_MISMATCH = 18,
	/** A fixed-file table is not sealed: the set requires
	 *  `IOSQE_FIXED_FILE` (MSG_RING on another ring can still install
	 *  files in it), or allows MSG_RING (its requests can install files
	 *  in other rings); see doc/security.md. */
	IOUR_REASON_FIXED_FILES = 19,
	/** An effect the policy touches (#IOUR_DECISION_NOTE, value: enum
	 *  iour_effect): every path to it is closed on the target kernel.
	 *  @since 1.1 */
	IOUR_REASON_EFFECT_CLOSED = 20,
	/** An effect: no path is open, and at least one is allowed only
	 *  through argument filters.  @since 1.1 */
	IOUR_REASON_EFFECT_FILTERED = 21,
	/** An effect: at least one path to it is open on the target kernel
	 *  (opcode: the first open request opcode, or
	 *  #IOUR_DECISION_NO_OPCODE); the text names the open and the
	 *  filtered paths.  @since 1.1 */
	IOUR_REASON_EFFECT_OPEN = 22
};

/**
 * @brief Effects: what a program achieves, whichever opcode it uses
 *        (iour_decision::value of the #IOUR_REASON_EFFECT_CLOSED,
 *        #IOUR_REASON_EFFECT_FILTERED and #IOUR_REASON_EFFECT_OPEN notes).
 *
 * The library knows every path to each effect, with the kernel version
 * that added it (doc/security.md, section 2.1, lists them).  A plan's
 * report has one note per effect the policy touches (some path is denied
 * or filtered, or the policy requires `IOSQE_FIXED_FILE`).  @since 1.1
 */
enum iour_effect {
	/** Reaching a network destination: CONNECT; SENDMSG, SENDMSG_ZC, SEND
	 *  and SEND_ZC with a destination address (UDP sendto, TCP
	 *  `MSG_FASTOPEN`). */
	IOUR_EFFECT_NET_DEST = 1,
	/** Opening or creating files: OPENAT and OPENAT2 (also straight into
	 *  the fixed-file table, 5.15), MKDIRAT, SYMLINKAT, LINKAT,
	 *  RENAMEAT. */
	IOUR_EFFECT_FILE_OPEN = 2,
	/** A request naming a plain descriptor although the set requires
	 *  `IOSQE_FIXED_FILE`: SPLICE and TEE inputs, EPOLL_CTL, WAITID
	 *  (`P_PIDFD`), SCM_RIGHTS in SENDMSG, URING_CMD payloads. */
	IOUR_EFFECT_PLAIN_FD = 3,
	/** Descriptor passing and messages to other rings: MSG_RING (data and
	 *  send-fd), ring-less `REGISTER_SEND_MSG_RING`, FIXED_FD_INSTALL,
	 *  SCM_RIGHTS. */
	IOUR_EFFECT_CROSS_RING = 4,
	/** Registering memory with the kernel: the buffer, buffer-ring,
	 *  memory-region and zero-copy receive registrations,
	 *  PROVIDE_BUFFERS. */
	IOUR_EFFECT_MEM_REG = 5,
	/** Register calls on fd -1 that are not restrictions:
	 *  `SEND_MSG_RING` (6.13) and `QUERY` (6.18). */
	IOUR_EFFECT_RINGLESS_REG = 6
};

/** @brief Decision: no request opcode (iour_decision::opcode). */
#define IOUR_DECISION_NO_OPCODE UINT32_MAX

/** @brief One decision of a report (iour_report__decision()). */
struct iour_decision {
	size_t sz;       /**< set by the caller: sizeof(struct iour_decision) */
	uint32_t kind;   /**< enum iour_decision_kind */
	uint32_t reason; /**< enum iour_reason */
	/** The request opcode concerned, or #IOUR_DECISION_NO_OPCODE. */
	uint32_t opcode;
	/** The step concerned (index in the plan), or UINT32_MAX. */
	uint32_t step;
	/** The errno of a failed step (negative), or the payload size the
	 *  kernel reported for #IOUR_DECISION_NEGOTIATED; else 0. */
	int32_t value;
	uint32_t pad; /**< 0 */
	/** One-line explanation; valid as long as the report. */
	const char *text;
};

/**
 * @brief **iour_report__free()** releases a report returned by an
 *        executor function.
 * @param r the report; NULL is accepted and ignored.  Never pass the
 *        report of iour_plan__report(): the plan owns it.
 * @since 1.0
 */
IOUR_API void iour_report__free(struct iour_report *r);

/**
 * @brief **iour_report__status()** gives the enforcement status.
 * @param r the report.
 * @return an enum iour_status value; -EINVAL if @p r is NULL.
 * @since 1.0
 */
IOUR_API int iour_report__status(const struct iour_report *r);

/**
 * @brief **iour_report__mechanism()** gives the mechanisms that enforce the
 *        policy.
 * @param r the report.
 * @return IOUR_MECH_* bits (0: none); -EINVAL if @p r is NULL.
 * @since 1.0
 */
IOUR_API int iour_report__mechanism(const struct iour_report *r);

/**
 * @brief **iour_report__flags()** gives the report's flags.
 * @param r the report.
 * @return IOUR_REPORT_* bits; -EINVAL if @p r is NULL.
 * @since 1.0
 */
IOUR_API int iour_report__flags(const struct iour_report *r);

/**
 * @brief **iour_report__steps()** gives how many steps took effect and how
 *        many there were.
 * @param r the report.
 * @param done receives the steps that took effect (may be NULL).
 * @param total receives the steps the application had (may be NULL).
 * @return 0 on success; -EINVAL if @p r is NULL.
 * @since 1.0
 */
IOUR_API int iour_report__steps(const struct iour_report *r, uint32_t *done, uint32_t *total);

/**
 * @brief **iour_report__error()** gives the error that stopped the
 *        application.
 * @param r the report.
 * @param err receives 0, or the negative errno of the failed step.
 * @return 0 on success; -EINVAL if @p r or @p err is NULL.
 * @since 1.0
 */
IOUR_API int iour_report__error(const struct iour_report *r, int32_t *err);

/**
 * @brief **iour_report__threads()** gives the number of threads the
 *        process had when a task plan was applied.
 * @param r the report.
 * @return the count (>= 1), 0 if not counted (ring application, a plan's
 *         report, or /proc unreadable); -EINVAL if @p r is NULL.
 * @since 1.0
 */
IOUR_API int iour_report__threads(const struct iour_report *r);

/**
 * @brief **iour_report__decision_cnt()** gives the number of decisions.
 * @param r the report.
 * @return the count; -EINVAL if @p r is NULL.
 * @since 1.0
 */
IOUR_API int iour_report__decision_cnt(const struct iour_report *r);

/**
 * @brief **iour_report__decision()** reads one decision.
 * @param r the report.
 * @param i its index.
 * @param out receives it; set its `sz` first.
 * @return 0 on success; -EINVAL if @p r or @p out is NULL or `out->sz` is
 *         smaller than its first field; -ERANGE if @p i is not a decision.
 * @since 1.0
 */
IOUR_API int iour_report__decision(const struct iour_report *r, size_t i,
				   struct iour_decision *out);

/**
 * @brief **iour_report__describe()** writes the report as text: status,
 *        mechanism, flags, steps and one line per decision.  Two-call
 *        sizing; the text ends with a NUL.
 * @param r the report.
 * @param buf destination, or NULL to ask for the size.
 * @param len in: size of @p buf; out: bytes needed (with the NUL) or
 *        written.
 * @return 0 on success; -EINVAL if @p r or @p len is NULL; -ERANGE if
 *         @p buf is too small; -ENOMEM.
 * @since 1.0
 */
IOUR_API int iour_report__describe(const struct iour_report *r, char *buf, size_t *len);

/**
 * @brief **iour_status_str()** names a status.
 * @param status an enum iour_status value.
 * @return "fully enforced", "partially enforced", "not enforced", or
 *         "unknown"; never NULL.
 * @since 1.0
 */
IOUR_API const char *iour_status_str(int status);

/**
 * @brief **iour_decision_kind_str()** names a decision kind
 *        (iour_decision::kind).
 * @param kind an enum iour_decision_kind value.
 * @return "dropped", "tightened", "loosened", "clamped", "negotiated",
 *         "note" or "failed"; "invalid" for any other value; never NULL.
 * @since 1.1
 */
IOUR_API const char *iour_decision_kind_str(uint32_t kind);

/**
 * @brief **iour_reason_str()** names the reason of a decision
 *        (iour_decision::reason).
 * @param reason an enum iour_reason value.
 * @return the enumerator's name without the IOUR_REASON_ prefix, in
 *         lower case ("none", "no_io_uring", ..., "effect_open");
 *         "invalid" for any other value; never NULL.
 * @since 1.1
 */
IOUR_API const char *iour_reason_str(uint32_t reason);
/** @} */

#ifdef __cplusplus
}
#endif

#endif /* IOURING_RESTRICT_REPORT_H */
