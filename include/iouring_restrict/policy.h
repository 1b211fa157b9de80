/* SPDX-License-Identifier: MIT */
/**
 * @file policy.h
 * @brief Policies: "from here on, this task (or this ring) may only use
 *        io_uring like this", and how they become plans and reports.
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
 * Thread safety: a policy may be read from several threads at once
 * (planning included); modifying it needs exclusive access.
 *
 * Plans and the executor are in plan.h, reports in report.h.
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

/** @brief A policy (opaque). */
struct iour_policy;

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
 * @brief **iour_policy__get_ruleset()** copies the classic part out of a
 *        policy, as iour_policy__set_ruleset() last set it (or as a policy
 *        file's requestOps, registerOps and sqeFlags made it).  The copy is
 *        the caller's: later changes to it do not affect the policy.
 * @param p the policy.
 * @param out receives the copy (free it with iour_ruleset__free()), or
 *        NULL if the policy has no classic part.
 * @return 0 on success; -EINVAL if @p p or @p out is NULL; -ENOMEM
 *         (*@p out is then NULL).
 * @since 1.1
 */
IOUR_API int iour_policy__get_ruleset(const struct iour_policy *p, struct iour_ruleset **out);

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
 * **Large deny-lists (1.1).**  An opcode whose rules need more than 4096
 * instructions is split across several programs stacked for that opcode
 * when its rules hold deny rules: the kernel runs every filter of an
 * opcode and the request runs only if all allow, so programs that each
 * hold the rules before the heaviest run of deny rules, a part of that
 * run, and the rules after it decide together exactly as the whole list
 * (doc/design.md, "Stacked filters").  Values, ranges and IPv4 prefixes
 * of one field are merged into ranges first, so a blocklist of many
 * adjacent addresses may still fit one program.
 * iour_policy__prog_cnt() tells how many programs an opcode got; a plan
 * registers each of them.  An allow-list (rules without a deny rule), a
 * raw program, or rules around the deny run that alone exceed the limit
 * cannot be split and fail with -IOUR_ERRNO__PROG_TOO_LARGE, as do more
 * than 1024 programs for one opcode.
 *
 * @param p the policy.
 * @param f the filter set, or NULL to remove every argument filter.
 * @return 0 on success; -EINVAL if @p p is NULL;
 *         -IOUR_ERRNO__PROG_TOO_LARGE if an opcode's rules need more than
 *         4096 instructions and cannot be split (above); -ENOMEM.  On
 *         error the policy is unchanged.
 * @since 1.0
 */
IOUR_API int iour_policy__set_filter(struct iour_policy *p, const struct iour_filter *f);

/**
 * @brief **iour_policy__prog_cnt()** tells how many argument-filter
 *        programs the policy holds for a request opcode.
 *
 * 0: the opcode has no argument filter; 1: one program; more: a deny-list
 * split across stacked programs by iour_policy__set_filter(), each of
 * which a plan registers (the request runs only if all allow).
 *
 * @param p the policy.
 * @param opcode the request opcode, 0 to 255.
 * @return the count (0 or more); -EINVAL if @p p is NULL or @p opcode is
 *         above 255.
 * @since 1.1
 */
IOUR_API int iour_policy__prog_cnt(const struct iour_policy *p, uint32_t opcode);

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
 * iour_errdetail() gives the words of a refusal (the value and the limit).
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
 * iour_errdetail() gives the words of a refusal (the value and the limit).
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
 * iour_errdetail() gives the words of a refusal (the value and the limit).
 * @since 1.0
 */
IOUR_API int iour_policy_attr_bounds(uint32_t attr, uint32_t *min, uint32_t *max, uint32_t *def);
/** @} */

#ifdef __cplusplus
}
#endif

#endif /* IOURING_RESTRICT_POLICY_H */
