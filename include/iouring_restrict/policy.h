/* SPDX-License-Identifier: MIT */
/**
 * @file policy.h
 * @brief Policies, plans, the executor and its report: "from here on, this
 *        task (or this ring) may only use io_uring like this".
 *
 * The flow has three stages, each with its own object:
 *
 * 1. A **policy** (struct iour_policy) says what is allowed, independently
 *    of any kernel: a classic part (a restriction set: allow-lists of
 *    request opcodes and register opcodes, SQE flags), argument filters
 *    per request opcode, a default for request opcodes it does not
 *    mention, and attributes (target, compatibility level, no_new_privs,
 *    fallbacks).  Building a policy makes no system call.
 * 2. iour_policy__plan() compiles the policy for a kernel (the running
 *    one, probed in a forked child, or a forced feature level) into a
 *    **plan** (struct iour_plan): the ordered kernel registrations with
 *    their exact argument bytes and cBPF programs, and the **report** the
 *    plan expects to earn, listing every rule that had to be dropped,
 *    tightened, loosened or clamped on that kernel and why.  A plan is
 *    plain data: iour_plan__describe() prints it (the dry run), the
 *    getters expose every byte.
 * 3. The **executor** (iour_plan__apply_task(), iour_plan__apply_ring(),
 *    iour_plan__create_ring()) performs the registrations and hands back a
 *    report (struct iour_report) of what actually took effect.
 *
 * **Meaning of a policy.**  For each request opcode:
 * - if the classic part's request side is an allow-list and the opcode is
 *   not in it, the opcode is denied (the classic gate comes first in the
 *   kernel too);
 * - otherwise, if the argument filters have rules for the opcode, those
 *   rules decide for each request;
 * - otherwise, if the classic part lists the opcode, it is allowed;
 * - otherwise the policy's default (#IOUR_POLICY_ATTR_DEFAULT) applies:
 *   deny unless the caller chose allow.
 *
 * Register opcodes and SQE flags follow the classic part alone; without a
 * classic part they are not restricted.  If the classic part never decided
 * its SQE flags, every flag is allowed.
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
 * **Rings that exist already** are never affected by task restrictions
 * (the kernel copies the task's set into a ring when the ring is created).
 *
 * Thread safety: a policy may be read from several threads at once
 * (planning included); modifying it needs exclusive access.  Plans and
 * reports are immutable once returned.
 */
#ifndef IOURING_RESTRICT_POLICY_H
#define IOURING_RESTRICT_POLICY_H

#include "common.h"
#include "cbpf.h"

#ifdef __cplusplus
extern "C" {
#endif

struct iour_ruleset;
struct iour_filter;
struct iour_features;

/** @brief A policy (opaque). */
struct iour_policy;
/** @brief A policy compiled for one kernel (opaque, immutable). */
struct iour_plan;
/** @brief What a plan expects, or what an application did (opaque). */
struct iour_report;

/** @name Policies
 *  @{ */

/** @brief Options of iour_policy__new(). */
struct iour_policy_opts {
	size_t sz;      /**< sizeof(struct iour_policy_opts) */
	uint64_t flags; /**< reserved, must be 0 */
};
/** @brief The last field of struct iour_policy_opts, up to which the library reads
 *         it (the options discipline of common.h). */
#define iour_policy_opts__last_field flags

/**
 * @brief **iour_policy__new()** creates an empty policy: no classic part,
 *        no argument filters, every attribute at its default (see
 *        enum iour_policy_attr).  An empty policy with the default
 *        #IOUR_POLICY_DEFAULT_DENY denies every request opcode.
 * @param opts options, or NULL for the defaults.
 * @param out receives the policy; free it with iour_policy__free().
 * @return 0 on success; -EINVAL if @p out is NULL, @p opts has a size
 *         smaller than its first field or flags other than 0; -E2BIG if
 *         @p opts is larger than the library knows and the unknown bytes
 *         are not zero; -ENOMEM.
 * @since 1.0
 */
IOUR_API int iour_policy__new(const struct iour_policy_opts *opts, struct iour_policy **out);

/**
 * @brief **iour_policy__free()** releases a policy.
 * @param p the policy; NULL is accepted and ignored.
 * @since 1.0
 */
IOUR_API void iour_policy__free(struct iour_policy *p);

/**
 * @brief **iour_policy__dup()** copies a policy (classic part, filters and
 *        attributes).
 * @param p the policy to copy.
 * @param out receives the copy; free it with iour_policy__free().
 * @return 0 on success; -EINVAL if @p p or @p out is NULL; -ENOMEM.
 * @since 1.0
 */
IOUR_API int iour_policy__dup(const struct iour_policy *p, struct iour_policy **out);

/**
 * @brief **iour_policy__set_ruleset()** sets the classic part: the
 *        allow-lists of request opcodes and register opcodes and the SQE
 *        flags.  The set is copied; later changes to @p rs do not affect
 *        the policy.
 * @param p the policy.
 * @param rs the restriction set, or NULL to remove the classic part.
 * @return 0 on success; -EINVAL if @p p is NULL; -ENOMEM (the policy is
 *         then unchanged).
 * @since 1.0
 */
IOUR_API int iour_policy__set_ruleset(struct iour_policy *p, const struct iour_ruleset *rs);

/**
 * @brief **iour_policy__set_filter()** sets the argument filters from a
 *        filter set: every opcode the set filters is compiled (see
 *        iour_filter__compile()) and becomes the policy's filter for that
 *        opcode; filters the policy held before are all replaced.
 *
 * Compiling happens here, once: the programs do not depend on the kernel
 * (a plan decides per kernel whether and how to register them).  Opcodes
 * whose rules compile to "always allow" or "always deny" go through the
 * classic allow-list, not through a registered program.  Later changes to
 * @p f do not affect the policy.
 *
 * @param p the policy.
 * @param f the filter set, or NULL to remove every argument filter.
 * @return 0 on success; -EINVAL if @p p is NULL;
 *         -IOUR_ERRNO__PROG_TOO_LARGE if an opcode's rules need more than
 *         4096 instructions; -ENOMEM.  On error the policy is unchanged.
 * @since 1.0
 */
IOUR_API int iour_policy__set_filter(struct iour_policy *p, const struct iour_filter *f);

/**
 * @brief **iour_policy__set_prog()** sets the argument filter of one
 *        request opcode as a ready classic-BPF program, replacing what the
 *        policy held for that opcode.
 *
 * The program is copied.  It must pass iour_cbpf_validate() with the
 * io_uring rules.  A program of a single `ret #0` is treated as "deny the
 * opcode", a single `ret #k` with k != 0 as "allow it": such opcodes go
 * through the classic allow-list, not through a registered program.
 *
 * @param p the policy.
 * @param opcode the request opcode, 0 to 255.
 * @param insns the program; NULL with @p cnt 0 removes the opcode's
 *        filter.
 * @param cnt number of instructions, 0 to 4096.
 * @param pdu_size the payload size the program expects: 0 if it reads no
 *        payload field, otherwise the opcode's payload size (12 for
 *        SOCKET, 24 for OPENAT, OPENAT2 and CONNECT); at most 24.
 * @return 0 on success; -EINVAL if @p p is NULL, @p opcode is above 255,
 *         @p insns is NULL with @p cnt > 0 (or not NULL with @p cnt 0),
 *         @p cnt is above 4096 or @p pdu_size above 24;
 *         -IOUR_ERRNO__INVALID_PROG if the program breaks a rule of the
 *         kernel's checkers; -ENOMEM.
 * @since 1.0
 */
IOUR_API int iour_policy__set_prog(struct iour_policy *p, uint32_t opcode,
				   const struct iour_insn *insns, size_t cnt, uint32_t pdu_size);

/** @brief The policy's attributes (iour_policy__set_attr()). Values are
 *         never renumbered. */
enum iour_policy_attr {
	/** Lower bound, not an attribute. */
	IOUR_POLICY_ATTR__MIN = 0,
	/** What the policy restricts: enum iour_policy_target.  Default
	 *  #IOUR_POLICY_TARGET_TASK. */
	IOUR_POLICY_ATTR_TARGET = 1,
	/** What to do when the kernel cannot enforce the policy exactly:
	 *  enum iour_policy_compat.  Default #IOUR_POLICY_COMPAT_BEST_EFFORT. */
	IOUR_POLICY_ATTR_COMPAT = 2,
	/** Whether the executor may set no_new_privs when the task path needs
	 *  it (the task has neither no_new_privs nor CAP_SYS_ADMIN):
	 *  enum iour_policy_nnp.  Default #IOUR_POLICY_NNP_SET. */
	IOUR_POLICY_ATTR_NNP = 3,
	/** What an opcode with argument rules becomes where the kernel cannot
	 *  filter its arguments: enum iour_policy_fallback.  Default
	 *  #IOUR_POLICY_FALLBACK_CLOSED. */
	IOUR_POLICY_ATTR_NO_FILTER_FALLBACK = 4,
	/** Other threads of the process when restricting the task:
	 *  enum iour_policy_threads.  Default #IOUR_POLICY_THREADS_REPORT. */
	IOUR_POLICY_ATTR_THREADS = 5,
	/** The seccomp companion installed by a task plan on kernels without
	 *  task restrictions: enum iour_policy_companion.  Default
	 *  #IOUR_POLICY_COMPANION_ENOSYS (degrade closed). */
	IOUR_POLICY_ATTR_COMPANION = 6,
	/** The verdict of request opcodes the policy does not mention:
	 *  enum iour_policy_default.  Default #IOUR_POLICY_DEFAULT_DENY. */
	IOUR_POLICY_ATTR_DEFAULT = 7,
	/** Upper bound (one past the last attribute), not an attribute. */
	IOUR_POLICY_ATTR__MAX = 8
};

/** @brief Values of #IOUR_POLICY_ATTR_TARGET. */
enum iour_policy_target {
	/** The calling thread and every task and ring it creates later
	 *  (iour_plan__apply_task()). */
	IOUR_POLICY_TARGET_TASK = 0,
	/** One ring (iour_plan__apply_ring(), iour_plan__create_ring()). */
	IOUR_POLICY_TARGET_RING = 1
};

/** @brief Values of #IOUR_POLICY_ATTR_COMPAT (after Landlock's
 *         compatibility levels). */
enum iour_policy_compat {
	/** Apply what the kernel can enforce; the report says what is
	 *  missing. */
	IOUR_POLICY_COMPAT_BEST_EFFORT = 0,
	/** All or nothing: if the kernel cannot enforce the policy exactly,
	 *  apply nothing and report #IOUR_STATUS_NOT_ENFORCED (success). */
	IOUR_POLICY_COMPAT_SOFT = 1,
	/** Error: if the kernel cannot enforce the policy exactly, apply
	 *  nothing and fail with -IOUR_ERRNO__UNSUPPORTED. */
	IOUR_POLICY_COMPAT_HARD = 2
};

/** @brief Values of #IOUR_POLICY_ATTR_NNP. */
enum iour_policy_nnp {
	/** Never set no_new_privs: applying a task plan without it (and
	 *  without CAP_SYS_ADMIN) fails with -EACCES before anything is
	 *  applied. */
	IOUR_POLICY_NNP_KEEP = 0,
	/** Set no_new_privs (`prctl(PR_SET_NO_NEW_PRIVS)`) as the first step
	 *  when the task path or the seccomp companion needs it. */
	IOUR_POLICY_NNP_SET = 1
};

/** @brief Values of #IOUR_POLICY_ATTR_NO_FILTER_FALLBACK. */
enum iour_policy_fallback {
	/** Deny the whole opcode (fail closed). */
	IOUR_POLICY_FALLBACK_CLOSED = 0,
	/** Allow the whole opcode without argument checks (fail open). */
	IOUR_POLICY_FALLBACK_OPEN = 1
};

/** @brief Values of #IOUR_POLICY_ATTR_THREADS. */
enum iour_policy_threads {
	/** Apply, and report other existing threads (they stay
	 *  unrestricted, as do rings they create). */
	IOUR_POLICY_THREADS_REPORT = 0,
	/** Refuse to apply a task plan (-EBUSY) while other threads exist. */
	IOUR_POLICY_THREADS_REFUSE = 1
};

/** @brief Values of #IOUR_POLICY_ATTR_COMPANION. */
enum iour_policy_companion {
	/** No seccomp companion: on kernels without task restrictions nothing
	 *  restricts the task, and its reports say #IOUR_STATUS_NOT_ENFORCED
	 *  (best effort: only rings created through the plan are restricted). */
	IOUR_POLICY_COMPANION_NONE = 0,
	/** The default.  On kernels without task restrictions, when the policy
	 *  restricts anything, install a seccomp filter that makes
	 *  `io_uring_setup` fail with ENOSYS for the task and its descendants
	 *  (libuv, Tokio and others then fall back to epoll); rings that exist
	 *  already keep working, and so does a ring the plan created before
	 *  iour_plan__apply_task().  The companion needs no_new_privs or
	 *  CAP_SYS_ADMIN, like task restrictions (#IOUR_POLICY_ATTR_NNP). */
	IOUR_POLICY_COMPANION_ENOSYS = 1,
	/** The same with EPERM. */
	IOUR_POLICY_COMPANION_EPERM = 2
};

/** @brief Values of #IOUR_POLICY_ATTR_DEFAULT. */
enum iour_policy_default {
	/** Request opcodes the policy does not mention are denied. */
	IOUR_POLICY_DEFAULT_DENY = 0,
	/** Request opcodes the policy does not mention are allowed. */
	IOUR_POLICY_DEFAULT_ALLOW = 1
};

/**
 * @brief **iour_policy__set_attr()** sets one attribute.
 * @param p the policy.
 * @param attr an enum iour_policy_attr value.
 * @param value the attribute's new value (see iour_policy_attr_bounds()).
 * @return 0 on success; -EINVAL if @p p is NULL or @p attr is unknown;
 *         -ERANGE if @p value is outside the attribute's bounds.
 * @since 1.0
 */
IOUR_API int iour_policy__set_attr(struct iour_policy *p, uint32_t attr, uint32_t value);

/**
 * @brief **iour_policy__get_attr()** reads one attribute.
 * @param p the policy.
 * @param attr an enum iour_policy_attr value.
 * @param value receives the value.
 * @return 0 on success; -EINVAL if @p p or @p value is NULL or @p attr is
 *         unknown.
 * @since 1.0
 */
IOUR_API int iour_policy__get_attr(const struct iour_policy *p, uint32_t attr, uint32_t *value);

/**
 * @brief **iour_policy_attr_bounds()** gives the valid range and the
 *        default of an attribute.
 * @param attr an enum iour_policy_attr value.
 * @param min receives the smallest valid value (may be NULL).
 * @param max receives the largest valid value (may be NULL).
 * @param def receives the default (may be NULL).
 * @return 0 on success; -EINVAL if @p attr is unknown.
 * @since 1.0
 */
IOUR_API int iour_policy_attr_bounds(uint32_t attr, uint32_t *min, uint32_t *max, uint32_t *def);
/** @} */

/** @name Planning
 *  @{ */

/** @brief Plan for the feature level in iour_plan_opts::level instead of
 *         probing the running kernel. */
#define IOUR_PLAN_FORCE_LEVEL (1U << 0)

/**
 * @brief Options of iour_policy__plan().
 *
 * Without #IOUR_PLAN_FORCE_LEVEL the running kernel is probed (in a
 * forked child; the answer is cached).  With it, the plan is compiled for
 * a representative kernel of the level, whatever the running kernel is:
 * 0 no io_uring, 1 io_uring without restrictions (Linux 5.4), 2 per-ring
 * restrictions (Linux 6.1 limits: 49 request and 26 register opcodes),
 * 3 the same plus QUERY (Linux 6.18: 63 and 36), 4 task restrictions and
 * argument filters (Linux 7.0: 65 and 38, payloads for SOCKET 12 bytes,
 * OPENAT/OPENAT2 24), 5 the CONNECT payload too (Linux 7.2).  A forced
 * plan does not know the task's privileges (it sets no_new_privs first when
 * #IOUR_POLICY_ATTR_NNP allows it) and assumes the task has no io_uring
 * restrictions yet.  Such plans are meant for dry runs and tests.
 *
 * **Compatible kernels.**  A plan's bytes and its report are exact only
 * for the kernel it was compiled for, so the executor compares that kernel
 * with the running one (probed in a forked child, cached, after
 * `IOUR_FEATURE_LEVEL`) before its first system call, for the steps it is
 * about to run, and refuses with -IOUR_ERRNO__KERNEL_MISMATCH (nothing
 * applied, the report says why) unless:
 * - every mechanism the steps use exists on the running kernel at its
 *   effective level: task-level restrictions, task-level filters, ring
 *   restrictions, ring-level filters (setting no_new_privs and the seccomp
 *   companion need none);
 * - for a step that registers restriction entries or a filter, the
 *   running kernel has the plan's `IORING_OP_LAST` (entries, DENY_REST and
 *   the clamping decisions depend on it), and for restriction entries also
 *   its `IORING_REGISTER_LAST`;
 * - for a classic set on a ring, the running kernel has the plan's gate
 *   semantics (iour_plan_info::split_gates).
 *
 * Payload sizes may differ: the executor negotiates them with the kernel
 * and reports the outcome.  If io_uring is unavailable altogether, the
 * kernel's own error is returned instead.  So a plan probed for the
 * running kernel, also one lowered by `IOUR_FEATURE_LEVEL` (the probe keeps
 * the real limits and gate semantics), always passes, as does a forced
 * level whose representative kernel has the running kernel's limits (level
 * 3 on Linux 6.18); a forced level 2 plan (Linux 6.1 limits) is refused on
 * Linux 6.18, where its entries would deny register opcodes 26 to 35
 * without saying so, and a level 4 plan is refused on any kernel without
 * task restrictions.
 */
struct iour_plan_opts {
	size_t sz;      /**< sizeof(struct iour_plan_opts) */
	uint32_t flags; /**< IOUR_PLAN_* flags */
	uint32_t level; /**< forced feature level 0..5 (#IOUR_PLAN_FORCE_LEVEL) */
	/** If not NULL, plan for the kernel these probe results describe (as
	 *  filled by iour_probe(), possibly on another machine) instead of
	 *  probing; not together with #IOUR_PLAN_FORCE_LEVEL.  Its `sz` must
	 *  cover at least `pdu_connect`.  Only read during the call. */
	const struct iour_features *features;
};
/** @brief The last field of struct iour_plan_opts, up to which the library reads
 *         it (the options discipline of common.h). */
#define iour_plan_opts__last_field features

/**
 * @brief **iour_policy__plan()** compiles a policy for a kernel.
 *
 * Planning makes no change to the task: the probe (when needed) runs in a
 * forked child, so no ring is ever created in the calling task.  The
 * result is independent of later changes to @p p.
 *
 * With #IOUR_POLICY_COMPAT_SOFT or #IOUR_POLICY_COMPAT_HARD and a kernel
 * that cannot enforce the policy exactly, the plan has no steps and its
 * report says why; applying a HARD plan of that kind fails with
 * -IOUR_ERRNO__UNSUPPORTED.
 *
 * @param p the policy.
 * @param opts options, or NULL (probe the running kernel).
 * @param out receives the plan; free it with iour_plan__free().
 * @return 0 on success; -EINVAL if @p p or @p out is NULL, @p opts has
 *         unknown flags, a level above 5, a level without
 *         #IOUR_PLAN_FORCE_LEVEL, features together with
 *         #IOUR_PLAN_FORCE_LEVEL, features whose `sz` is too small,
 *         whose opcode limits no kernel has (above 256, or a register
 *         limit of 1 to 13) or with a field outside the values
 *         iour_probe() gives (a level above #IOUR_LEVEL_MAX, an enum
 *         iour_avail or enum iour_limits_source value outside the enum,
 *         unknown flags, split_gates above 1, a payload size above 255,
 *         no_new_privs, seccomp_mode or sysctl_disabled out of range), or
 *         the policy allows request
 *         opcodes while its classic part left SQE flags undecided in a
 *         way the kernel cannot express; -E2BIG (unknown non-zero bytes
 *         in @p opts, or a `sz` of @p opts or of the features above
 *         #IOUR_OPTS_MAX_SZ); -EACCES if the policy needs no_new_privs or
 *         CAP_SYS_ADMIN on the task path, the task has neither and
 *         #IOUR_POLICY_ATTR_NNP is #IOUR_POLICY_NNP_KEEP; -EPERM if the
 *         task already has io_uring restrictions, the policy needs a
 *         classic set and the kernel has no task filters to express it
 *         with; -EBUSY likewise for a ring target whose new rings inherit
 *         a classic set from the task and no ring filters;
 *         -ECHILD if the probe child could not run; -ENOMEM; -EMFILE,
 *         -ENFILE or -EAGAIN if the probe of the running kernel ran short
 *         of file descriptors or processes (nothing is cached: plan again
 *         once the resource is back, see iour_probe()).
 * @since 1.0
 */
IOUR_API int iour_policy__plan(const struct iour_policy *p, const struct iour_plan_opts *opts,
			       struct iour_plan **out);

/**
 * @brief **iour_plan__free()** releases a plan.
 * @param plan the plan; NULL is accepted and ignored.
 * @since 1.0
 */
IOUR_API void iour_plan__free(struct iour_plan *plan);

/** @brief Plan flag: compiled for a forced feature level. */
#define IOUR_PLAN_INFO_FORCED (1U << 0)
/** @brief Plan flag: the compatibility level refused the plan (no steps). */
#define IOUR_PLAN_INFO_REFUSED (1U << 1)

/** @brief The kernel a plan was compiled for (iour_plan__info()). */
struct iour_plan_info {
	size_t sz;            /**< set by the caller: sizeof(struct iour_plan_info) */
	uint32_t target;      /**< enum iour_policy_target */
	uint32_t level;       /**< feature level 0..5 */
	uint32_t op_last;     /**< the kernel's IORING_OP_LAST (0 if unknown) */
	uint32_t reg_last;    /**< the kernel's IORING_REGISTER_LAST (0 if unknown) */
	uint32_t split_gates; /**< 1 for Linux 7.0+ restriction semantics */
	uint32_t flags;       /**< IOUR_PLAN_INFO_* */
	uint32_t task_steps;  /**< steps applied by iour_plan__apply_task() */
	uint32_t ring_steps;  /**< steps applied by iour_plan__apply_ring() */
};

/**
 * @brief **iour_plan__info()** describes the kernel a plan was compiled
 *        for and how its steps divide between task and ring.
 * @param plan the plan.
 * @param info receives the description; set its `sz` first.  Fields
 *        beyond the caller's `sz` are not written.
 * @return 0 on success; -EINVAL if @p plan or @p info is NULL or
 *         `info->sz` is smaller than its first field.
 * @since 1.0
 */
IOUR_API int iour_plan__info(const struct iour_plan *plan, struct iour_plan_info *info);

/** @brief What a step does (iour_plan_step::op). */
enum iour_step_op {
	/** `prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)`. */
	IOUR_STEP_SET_NNP = 1,
	/** `io_uring_register(fd, IORING_REGISTER_RESTRICTIONS, arg, nr)`:
	 *  on fd -1 the argument is the 16-byte task header followed by the
	 *  entries and nr is 1; on a ring it is the entries and nr their
	 *  count. */
	IOUR_STEP_RESTRICTIONS = 2,
	/** `io_uring_register(fd, IORING_REGISTER_BPF_FILTER, arg, 1)` with a
	 *  72-byte `struct io_uring_bpf`; `filter_ptr` in the argument bytes
	 *  is 0 and points at the step's program when executed. */
	IOUR_STEP_BPF_FILTER = 3,
	/** `io_uring_register(ring, IORING_REGISTER_ENABLE_RINGS, NULL, 0)`. */
	IOUR_STEP_ENABLE_RINGS = 4,
	/** `seccomp(SECCOMP_SET_MODE_FILTER, flags, &prog)`: the companion;
	 *  the argument is a 16-byte `struct sock_fprog` whose pointer is 0
	 *  and points at the step's program when executed. */
	IOUR_STEP_COMPANION = 5
};

/** @brief Who a step applies to (iour_plan_step::target). */
enum iour_step_target {
	IOUR_STEP_TASK = 0, /**< the calling task (register fd -1, prctl, seccomp) */
	IOUR_STEP_RING = 1  /**< the ring given to the executor */
};

/** @brief One step of a plan (iour_plan__step()). */
struct iour_plan_step {
	size_t sz;       /**< set by the caller: sizeof(struct iour_plan_step) */
	uint32_t target; /**< enum iour_step_target */
	uint32_t op;     /**< enum iour_step_op */
	/** The system call's operation: the register opcode (11, 37, 12),
	 *  the prctl option (38) or the seccomp operation (1). */
	uint32_t call_op;
	/** io_uring_register's nr_args; seccomp's flags; prctl's 2nd arg. */
	uint32_t nr_args;
	/** The request opcode a filter step registers for; UINT32_MAX for
	 *  other steps. */
	uint32_t opcode;
	uint32_t arg_len;  /**< bytes of the argument (iour_plan__step_arg()) */
	uint32_t insn_cnt; /**< instructions of the step's program, or 0 */
	uint32_t entries;  /**< restriction entries of a RESTRICTIONS step */
};

/**
 * @brief **iour_plan__step_cnt()** gives the number of steps.
 * @param plan the plan.
 * @return the number of steps (task steps first, then ring steps);
 *         -EINVAL if @p plan is NULL.
 * @since 1.0
 */
IOUR_API int iour_plan__step_cnt(const struct iour_plan *plan);

/**
 * @brief **iour_plan__step()** describes one step.
 * @param plan the plan.
 * @param i the step's index.
 * @param out receives the description; set its `sz` first.
 * @return 0 on success; -EINVAL if @p plan or @p out is NULL or `out->sz`
 *         is smaller than its first field; -ERANGE if @p i is not a step.
 * @since 1.0
 */
IOUR_API int iour_plan__step(const struct iour_plan *plan, size_t i, struct iour_plan_step *out);

/**
 * @brief **iour_plan__step_arg()** copies the exact argument bytes of one
 *        step (pointers inside them are 0).  Two-call sizing.
 * @param plan the plan.
 * @param i the step's index.
 * @param buf destination, or NULL to ask for the size.
 * @param len in: size of @p buf; out: bytes needed or written.
 * @return 0 on success; -EINVAL if @p plan or @p len is NULL; -ERANGE if
 *         @p i is not a step or @p buf is too small (*len then holds the
 *         size needed).
 * @since 1.0
 */
IOUR_API int iour_plan__step_arg(const struct iour_plan *plan, size_t i, void *buf, size_t *len);

/**
 * @brief **iour_plan__step_insns()** copies the cBPF program of a step
 *        (filter or companion).  Two-call sizing in instructions.
 * @param plan the plan.
 * @param i the step's index.
 * @param buf destination, or NULL to ask for the count.
 * @param cnt in: capacity of @p buf in instructions; out: instructions
 *        needed or written (0 for steps without a program).
 * @return 0 on success; -EINVAL if @p plan or @p cnt is NULL; -ERANGE if
 *         @p i is not a step or @p buf is too small.
 * @since 1.0
 */
IOUR_API int iour_plan__step_insns(const struct iour_plan *plan, size_t i, struct iour_insn *buf,
				   size_t *cnt);

/**
 * @brief **iour_plan__describe()** writes the dry run: the kernel the plan
 *        is for, each step with its decoded argument (restriction entries,
 *        filter header fields, the program's disassembly), and the
 *        expected report.  Two-call sizing; the text ends with a NUL.
 * @param plan the plan.
 * @param buf destination, or NULL to ask for the size.
 * @param len in: size of @p buf; out: bytes needed (with the NUL) or
 *        written.
 * @return 0 on success; -EINVAL if @p plan or @p len is NULL; -ERANGE if
 *         @p buf is too small (*len then holds the size needed); -ENOMEM.
 * @since 1.0
 */
IOUR_API int iour_plan__describe(const struct iour_plan *plan, char *buf, size_t *len);

/**
 * @brief **iour_plan__report()** gives the report the plan expects if every
 *        step succeeds (flag #IOUR_REPORT_PLANNED set).
 * @param plan the plan.
 * @return the report, owned by the plan and valid until iour_plan__free();
 *         NULL if @p plan is NULL.
 * @since 1.0
 */
IOUR_API const struct iour_report *iour_plan__report(const struct iour_plan *plan);
/** @} */

/** @name Executing
 *  @{ */

/** @brief Options of the executor functions. */
struct iour_apply_opts {
	size_t sz;      /**< sizeof(struct iour_apply_opts) */
	uint64_t flags; /**< reserved, must be 0 */
};
/** @brief The last field of struct iour_apply_opts, up to which the library reads
 *         it (the options discipline of common.h). */
#define iour_apply_opts__last_field flags

/**
 * @brief **iour_plan__apply_task()** applies a task plan to the calling
 *        thread.  Irreversible.
 *
 * Everything is validated before the first irreversible call: the plan's
 * target, its compatibility verdict, other threads
 * (#IOUR_POLICY_ATTR_THREADS), and the no_new_privs / CAP_SYS_ADMIN
 * requirement when the plan does not set no_new_privs itself.  Then the
 * steps run in order: no_new_privs, the classic task set, the filters
 * (the last allow filter may carry DENY_REST), or on kernels without task
 * restrictions the seccomp companion.  Payload sizes are negotiated: a
 * filter refused with -EMSGSIZE is retried according to the size the
 * kernel wrote back, or replaced by the fallback
 * (#IOUR_POLICY_ATTR_NO_FILTER_FALLBACK) when the kernel has no payload
 * the program can read.
 *
 * The steps are ordered so that a failure midway leaves the task at least
 * as restricted as the report says: the report lists exactly the steps
 * that took effect and what the missing ones leave open.
 *
 * @param plan a plan with target #IOUR_POLICY_TARGET_TASK.
 * @param opts options, or NULL.
 * @param report if not NULL, receives the report (also on failure after
 *        validation); free it with iour_report__free().
 * @return 0 on success (the report may still say partially or not
 *         enforced); -EINVAL if @p plan is NULL, its target is a ring or
 *         @p opts is invalid; -E2BIG (unknown non-zero bytes in @p opts);
 *         -IOUR_ERRNO__UNSUPPORTED if the plan was refused by
 *         #IOUR_POLICY_COMPAT_HARD; -EBUSY if other threads exist and the
 *         policy refuses them; -EACCES if the task path needs
 *         no_new_privs or CAP_SYS_ADMIN and the task has neither (nothing
 *         applied); -EPERM if the task already has restrictions the plan
 *         did not expect (nothing applied);
 *         -IOUR_ERRNO__KERNEL_MISMATCH if the plan was compiled for a
 *         kernel that differs from the running one where its task steps
 *         depend on it (see iour_plan_opts; nothing applied); -ECHILD if
 *         the running kernel could not be probed for that comparison, or
 *         -EMFILE, -ENFILE, -EAGAIN, -ENOMEM if that probe ran short of a
 *         resource (see iour_probe()); the
 *         kernel's error when the
 *         first step fails (nothing applied): -EINVAL, -EPERM, -EACCES,
 *         -EFAULT, -ENOMEM, -EOVERFLOW, -EBUSY, -EMSGSIZE, or from the
 *         companion -ENOSYS; -IOUR_ERRNO__PARTIAL if a step failed after
 *         earlier ones took effect (the report has the kernel's error and
 *         the steps that took effect); -ENOMEM.
 * @since 1.0
 */
IOUR_API int iour_plan__apply_task(const struct iour_plan *plan, const struct iour_apply_opts *opts,
				   struct iour_report **report);

/**
 * @brief **iour_plan__apply_ring()** applies a plan's ring part to a ring
 *        created with `IORING_SETUP_R_DISABLED` and enables it.
 *
 * Order: the classic set, the ring-level filters (Linux 7.0+), then
 * `IORING_REGISTER_ENABLE_RINGS`.  With `IORING_SETUP_SINGLE_ISSUER`,
 * call this from the thread that will submit.
 *
 * @param plan a ring plan, or a task plan compiled for a kernel without
 *        task restrictions (its ring part restricts the rings created
 *        through the library).
 * @param ring_fd the ring, still disabled.
 * @param opts options, or NULL.
 * @param report if not NULL, receives the report (also on failure after
 *        validation); free it with iour_report__free().
 * @return 0 on success; -EINVAL if @p plan is NULL, has no ring part,
 *         @p ring_fd is negative or @p opts is invalid; -E2BIG;
 *         -IOUR_ERRNO__UNSUPPORTED if the plan was refused by
 *         #IOUR_POLICY_COMPAT_HARD; -IOUR_ERRNO__KERNEL_MISMATCH if the
 *         plan was compiled for a kernel that differs from the running one
 *         where its ring steps depend on it (see iour_plan_opts; nothing
 *         applied); -ECHILD if the running kernel could not be probed for
 *         that comparison, or -EMFILE, -ENFILE, -EAGAIN, -ENOMEM if that
 *         probe ran short of a resource (see iour_probe()); the kernel's
 *         error when the first step
 *         fails, nothing applied: -EBADFD (the ring is not disabled),
 *         -EBUSY (it already has a classic set), -EBADF or -EOPNOTSUPP
 *         (not a ring), -EACCES (its register operations are gated),
 *         -EEXIST (another task is its single issuer), -EINVAL, -EFAULT,
 *         -EOVERFLOW, -EMSGSIZE, -ENOMEM; -IOUR_ERRNO__PARTIAL if a later
 *         step failed (the ring may be left disabled: close it); -ENOMEM.
 * @since 1.0
 */
IOUR_API int iour_plan__apply_ring(const struct iour_plan *plan, int ring_fd,
				   const struct iour_apply_opts *opts, struct iour_report **report);

/**
 * @brief **iour_plan__create_ring()** creates a ring with
 *        `IORING_SETUP_R_DISABLED`, applies the plan's ring part and
 *        enables it.
 * @param plan as for iour_plan__apply_ring().
 * @param entries the ring's submission-queue size.
 * @param params a `struct io_uring_params` (its flags gain
 *        `IORING_SETUP_R_DISABLED`; the kernel fills it in as usual), or
 *        NULL for default parameters.  Only setup flags whose result is a
 *        file descriptor are accepted: not
 *        `IORING_SETUP_REGISTERED_FD_ONLY`, nor bits this library does not
 *        know.
 * @param opts options, or NULL.
 * @param ring_fd receives the ring's fd on success (untouched on failure).
 * @param report if not NULL, receives the report (also on failure after
 *        validation); free it with iour_report__free().
 * @return 0 on success; -EINVAL as for iour_plan__apply_ring() or if
 *         @p ring_fd is NULL, @p entries is 0, or @p params has
 *         `IORING_SETUP_REGISTERED_FD_ONLY` or an unknown flag (refused
 *         before any system call); -IOUR_ERRNO__UNSUPPORTED;
 *         -IOUR_ERRNO__KERNEL_MISMATCH or -ECHILD as for
 *         iour_plan__apply_ring() (checked before the ring is created);
 *         the error of `io_uring_setup` (-EPERM, -ENOSYS, -EINVAL, -EFAULT,
 *         -ENOMEM, -EMFILE, -ENFILE, -ENXIO) or of any step, as for
 *         iour_plan__apply_ring() (the ring is closed again: no fd is
 *         left behind).
 * @since 1.0
 */
IOUR_API int iour_plan__create_ring(const struct iour_plan *plan, uint32_t entries, void *params,
				    const struct iour_apply_opts *opts, int *ring_fd,
				    struct iour_report **report);
/** @} */

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
	IOUR_REASON_FIXED_FILES = 19
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
/** @} */

#ifdef __cplusplus
}
#endif

#endif /* IOURING_RESTRICT_POLICY_H */
