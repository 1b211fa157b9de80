/* SPDX-License-Identifier: MIT */
/**
 * @file plan.h
 * @brief Plans and the executor: a policy compiled for one kernel, and
 *        the registrations that make it take effect.
 *
 * iour_policy__plan() compiles a policy (policy.h) into a plan; the
 * executor functions perform the plan's steps and hand back a report
 * (report.h) of what took effect.
 *
 * **Rings that exist already** are never affected by task restrictions
 * (the kernel copies the task's set into a ring when the ring is created).
 *
 * Thread safety: plans are immutable once returned.
 */
#ifndef IOURING_RESTRICT_PLAN_H
#define IOURING_RESTRICT_PLAN_H

#include "common.h"
#include "cbpf.h"

#ifdef __cplusplus
extern "C" {
#endif

struct iour_features;
struct iour_policy;
struct iour_report;
struct iour_ruleset;

/** @brief A policy compiled for one kernel (opaque, immutable). */
struct iour_plan;

/** @name Planning
 *  @{ */

/** @brief Plan for the feature level in iour_plan_opts::level instead of
 *         probing the running kernel. */
#define IOUR_PLAN_FORCE_LEVEL (1U << 0)
/**
 * @brief Plan a task policy for the ring broker (broker.h): every ring the
 *        task and its descendants create is created by a broker and
 *        restricted by the plan's ring part, and the task itself is not
 *        restricted.
 *
 * The policy is planned for each ring as a ring target would be (ring
 * restrictions, and ring filters where the kernel has them), with no
 * seccomp companion and no task steps; the report describes those rings,
 * and its effect notes what ring restrictions cannot close: ring-less
 * register calls (io_uring_register on fd -1, Linux 6.13+) stay open, and
 * the register opcodes among them that the policy does not allow make the
 * report LOOSENED (doc/security.md 2.1, "The ring broker's view").  This
 * is the plan `iour-restrict run` serves before Linux 7.0 and the OCI
 * agent serves on every kernel.  Only with a task target (-EINVAL
 * otherwise).
 * @since 1.1
 */
#define IOUR_PLAN_BROKERED (1U << 1)

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
	 *  cover at least `pdu_connect`; when it also covers
	 *  iour_features::pdu_size, the payload sizes of opcodes without a
	 *  named field are read from that array.  Only read during the call. */
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
 *         unknown flags, #IOUR_PLAN_BROKERED with a ring target, a level
 *         above 5, a level without
 *         #IOUR_PLAN_FORCE_LEVEL, features together with
 *         #IOUR_PLAN_FORCE_LEVEL, features whose `sz` is too small,
 *         whose opcode limits no kernel has (above 256, or a register
 *         limit of 1 to 13) or with a field outside the values
 *         iour_probe() gives (a level above #IOUR_LEVEL_MAX, an enum
 *         iour_avail or enum iour_limits_source value outside the enum,
 *         unknown flags, split_gates above 1, a payload size above 255,
 *         no_new_privs, seccomp_mode or sysctl_disabled out of range; when
 *         `sz` covers iour_features::pdu_size, a size there for an opcode
 *         without a payload in the request schema), or
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
 * iour_errdetail() gives the words of a refusal (the value and the limit).
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

/** @brief The side a step acts on (iour_plan_step::side). */
enum iour_step_side {
	IOUR_STEP_TASK = 0, /**< the calling task (register fd -1, prctl, seccomp) */
	IOUR_STEP_RING = 1  /**< the ring given to the executor */
};

/** @brief One step of a plan (iour_plan__step()). */
struct iour_plan_step {
	size_t sz;     /**< set by the caller: sizeof(struct iour_plan_step) */
	uint32_t side; /**< enum iour_step_side */
	uint32_t op;   /**< enum iour_step_op */
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
 * @brief **iour_plan__get_ruleset()** decodes what a plan's restriction
 *        entries make the kernel enforce on one side: the request opcodes,
 *        register opcodes and SQE flags they allow, as a restriction set
 *        (ruleset.h).
 *
 * A plan has at most one #IOUR_STEP_RESTRICTIONS step per side.  Its
 * 16-byte entries are read as the kernel the plan was compiled for reads
 * them (doc/kernel.md 1.5, 2.3 and 2.4; iour_plan_info::split_gates):
 * - a side whose gate the entries turn on is an allow-list of exactly the
 *   opcodes they name.  On kernels before 7.0 ("coupled" gates) every set
 *   turns both gates on, and the library lists a side the policy leaves
 *   open in full: that side comes back as an allow-list of every opcode
 *   below the kernel's limit (iour_plan_info::op_last, reg_last).  From
 *   7.0 a side is gated only if it has entries, and a register allow-list
 *   that would be empty holds the sentinel `IORING_REGISTER_ENABLE_RINGS`
 *   (doc/kernel.md 2.5), which comes back as allowed;
 * - when the SQE gate is on, the SQE flags are decided
 *   (iour_ruleset__sqe_flags() returns 1) with the entries' masks: the
 *   allowed mask includes the required one, and 0 if the entries have no
 *   `SQE_FLAGS_ALLOWED` entry (the kernel then refuses every flag); when
 *   it is off, the SQE side is unrestricted and the flags undecided;
 * - zero entries turn both gates on with nothing allowed.
 *
 * This is what the step enforces, not what the policy says
 * (iour_policy__get_ruleset()): opcodes the kernel lacks were clamped
 * away, and a policy whose classic part restricts nothing plans no
 * restriction step at all.  Opcodes beyond the library's tables
 * (#IOUR_OP__COUNT, #IOUR_REGISTER__COUNT), which only a plan for a newer
 * kernel described through iour_plan_opts::features can name, are left
 * out of the set; its queries refuse them with -ERANGE.
 *
 * The set describes the classic gates only.  The plan's filter steps
 * (#IOUR_STEP_BPF_FILTER) and, for the task, the companion
 * (#IOUR_STEP_COMPANION) may refuse requests the set allows; see
 * iour_plan__step() and the plan's report.
 *
 * @param plan the plan.
 * @param side enum iour_step_side: #IOUR_STEP_RING for the ring part (the
 *        set a ring created with iour_plan__create_ring() gets),
 *        #IOUR_STEP_TASK for the task's own set (Linux 7.0+).
 * @param out receives the decoded set (free it with iour_ruleset__free()),
 *        or NULL if the plan has no restriction step on @p side: the plan
 *        turns no classic gate on there, so the classic gates let every
 *        request opcode, register opcode and SQE flag through (on a ring,
 *        unless it inherits a set from its creator's task restrictions,
 *        Linux 7.0+).  A plan refused by the compatibility level has no
 *        steps at all.
 * @return 0 on success; -EINVAL if @p plan or @p out is NULL or @p side is
 *         not an enum iour_step_side value; -ENOMEM (*@p out is then NULL).
 * @since 1.1
 */
IOUR_API int iour_plan__get_ruleset(const struct iour_plan *plan, uint32_t side,
				    struct iour_ruleset **out);

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

/** @brief iour_apply_opts::flags, iour_plan__apply_task() only: do not
 *  apply the peer guard (for debugging the confined program with a
 *  debugger outside it; doc/security.md, section 3a, "Ring
 *  acquisition").  @since 1.1 */
#define IOUR_APPLY_ALLOW_PTRACE (1ULL << 0)

/** @brief Options of the executor functions. */
struct iour_apply_opts {
	size_t sz;      /**< sizeof(struct iour_apply_opts) */
	uint64_t flags; /**< #IOUR_APPLY_ALLOW_PTRACE (iour_plan__apply_task()); else 0 */
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
 * When a step restricts io_uring (task restrictions or the companion),
 * the peer guard follows, unless #IOUR_APPLY_ALLOW_PTRACE: the task can
 * no longer use another process's rings or make it create one (`ptrace`
 * attach, `pidfd_getfd` and `process_vm_readv`/`writev` fail with EPERM;
 * with Landlock ABI 2+, a Landlock domain that scopes ptrace access,
 * `/proc/PID/mem` included; CAP_SYS_PTRACE dropped from every capability
 * set, the bounding set when CAP_SETPCAP allows).  It is prepared with
 * the other validations and applied after the last step; the report has
 * one note saying what it closed and what is open (doc/security.md,
 * section 3a, "Ring acquisition").  Since 1.1.
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
 * iour_errdetail() gives the words of a refusal (the value and the limit).
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
 * iour_errdetail() gives the words of a refusal (the value and the limit).
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
 * @param params a `struct io_uring_params`, or NULL for default
 *        parameters.  `IORING_SETUP_R_DISABLED` is added for the
 *        `io_uring_setup()` call only: the `flags` field is given back as
 *        the caller set it, and the kernel fills in the rest as usual.
 *        Only setup flags whose result is a
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
 *         -E2BIG (unknown non-zero bytes in @p opts); -EMFILE, -ENFILE,
 *         -EAGAIN or -ENOMEM if the probe for that check ran short of a
 *         resource (see iour_probe());
 *         the error of `io_uring_setup` (-EPERM, -ENOSYS, -EINVAL, -EFAULT,
 *         -ENOMEM, -EMFILE, -ENFILE, -ENXIO) or of any step, as for
 *         iour_plan__apply_ring() (-EBADFD, -EBUSY, -EBADF, -EOPNOTSUPP,
 *         -EACCES, -EEXIST, -EINVAL, -EFAULT, -EOVERFLOW, -EMSGSIZE,
 *         -ENOMEM): the step's own error, never a partial result, as the
 *         ring is closed again (no fd is left behind).
 * iour_errdetail() gives the words of a refusal (the value and the limit).
 * @since 1.0
 */
IOUR_API int iour_plan__create_ring(const struct iour_plan *plan, uint32_t entries, void *params,
				    const struct iour_apply_opts *opts, int *ring_fd,
				    struct iour_report **report);
/** @} */

#ifdef __cplusplus
}
#endif

#endif /* IOURING_RESTRICT_PLAN_H */
