/* SPDX-License-Identifier: MIT */
/**
 * @file probe.h
 * @brief What the running kernel supports: one cached, thread-safe probe and
 *        a feature level that summarises it.
 *
 * iour_probe() answers, for the calling process:
 * - whether io_uring can be used at all, and if not why (the errno of
 *   `io_uring_setup(1, NULL)`, the `kernel.io_uring_disabled` and
 *   `kernel.io_uring_group` sysctls, the caller's seccomp mode and
 *   no_new_privs bit);
 * - per-ring restrictions (Linux 5.10+), `IORING_REGISTER_QUERY` (6.18+) and
 *   its counts, the request opcodes `IORING_REGISTER_PROBE` reports as
 *   supported, the ring-less ("blind") register path (6.13+);
 * - task-level restrictions and classic-BPF filters on the ring and task
 *   paths (7.0+), including "supported, but no_new_privs is missing";
 * - the filter payload size the kernel uses for each opcode of the
 *   library's request schema (include/iouring_restrict/schema.h): SOCKET,
 *   OPENAT, OPENAT2, and CONNECT from 7.2.
 *
 * **No side effects on the caller.** Every probe that creates a ring or
 * touches the task path runs in a short-lived child created with fork(2);
 * the child's answers come back through a shared anonymous page.  Creating
 * a ring in a task that later registers task restrictions and then execs
 * would drop those restrictions on Linux 7.0/7.1, so the caller never
 * creates one.  The calling process's seccomp state, no_new_privs bit,
 * open files and io_uring state are unchanged afterwards.  fork(2) runs the
 * process's pthread_atfork() handlers; the child itself only makes system
 * calls and calls _exit(2).
 *
 * Each probe passes deliberately invalid arguments, so nothing is ever
 * installed even on kernels that support the feature.  Answers are never
 * derived from the kernel version string; they follow the errno-by-kernel
 * generation table of the io_uring interface, with cross-checks where one
 * errno alone is ambiguous (for example, BPF filters count as supported only
 * if QUERY also reports more than 37 register opcodes).
 *
 * The first successful probe is cached for the life of the process; later
 * calls copy the cached answer without system calls.  All functions here
 * are thread-safe.
 *
 * **Resource shortage is not a kernel answer.** When the caller runs short
 * of a resource while probing (its file-descriptor table is full, the
 * system's file table is full, memory, or the process limit), the probe
 * fails with that errno (-EMFILE, -ENFILE, -ENOMEM, -EAGAIN) instead of
 * reporting a lower level, and nothing is cached: the next call probes
 * afresh and reports the kernel's real level once the resource is back.
 *
 * **Forcing a lower level.** When the environment variable
 * `IOUR_FEATURE_LEVEL` holds a decimal level (0 to 5) lower than the
 * kernel's, the library behaves as if the kernel only had that level: every
 * feature above it is reported absent (#IOUR_FEATURES_FORCED is set, and
 * iour_features::kernel_level still gives the real level) and no library
 * function uses it.  A value equal to the kernel's level changes nothing;
 * invalid values and values above it are ignored and flagged
 * (#IOUR_FEATURES_FORCE_IGNORED).  The variable is read
 * with secure_getenv(), so it has no effect in set-user-ID or otherwise
 * privileged programs.  It is read when the probe runs, i.e. once per
 * process unless #IOUR_PROBE_NO_CACHE or #IOUR_PROBE_REFRESH is used.
 */
#ifndef IOURING_RESTRICT_PROBE_H
#define IOURING_RESTRICT_PROBE_H

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @brief Feature levels: a ladder that summarises iour_probe().  Each level
 *        includes everything below it.
 */
enum iour_feature_level {
	/** io_uring cannot be used: `io_uring_setup()` fails for this caller
	 *  (kernel without io_uring, `kernel.io_uring_disabled`, a seccomp or
	 *  LSM policy); see iour_features::setup_err. */
	IOUR_LEVEL_NONE = 0,
	/** io_uring works, but rings cannot be restricted (kernels before
	 *  5.10: no `IORING_SETUP_R_DISABLED`). */
	IOUR_LEVEL_IO_URING = 1,
	/** Per-ring allow-lists of request opcodes, register opcodes and SQE
	 *  flags (Linux 5.10+): rings created with `IORING_SETUP_R_DISABLED`,
	 *  `IORING_REGISTER_RESTRICTIONS`, `IORING_REGISTER_ENABLE_RINGS`.  The
	 *  opcode limits come from `IORING_REGISTER_PROBE` and a range test. */
	IOUR_LEVEL_RING = 2,
	/** Level 2 plus `IORING_REGISTER_QUERY` (Linux 6.18+): the kernel
	 *  reports its opcode counts and flag masks without a ring. */
	IOUR_LEVEL_QUERY = 3,
	/** Level 3 plus task-level restrictions (`IORING_REGISTER_RESTRICTIONS`
	 *  on fd -1), classic-BPF filters on the ring and task paths
	 *  (`IORING_REGISTER_BPF_FILTER`), and filter payloads for SOCKET
	 *  (12 bytes) and OPENAT/OPENAT2 (24 bytes) (Linux 7.0+).  The level
	 *  describes the kernel: the caller may still lack the no_new_privs bit
	 *  or CAP_SYS_ADMIN the task path needs (iour_features::task_restrictions
	 *  is then #IOUR_AVAIL_NO_PRIV). */
	IOUR_LEVEL_TASK_BPF = 4,
	/** Level 4 plus the CONNECT filter payload (24 bytes: family, port,
	 *  IPv4/IPv6 address; Linux 7.2+). */
	IOUR_LEVEL_CONNECT = 5,
	/** The highest level this version of the library knows. */
	IOUR_LEVEL_MAX = IOUR_LEVEL_CONNECT
};

/** @brief Availability of one feature (the `uint32_t` fields of
 *         struct iour_features named after features). */
enum iour_avail {
	/** The kernel does not have it (or the level was forced below it). */
	IOUR_AVAIL_NO = 0,
	/** The kernel has it and this caller may use it. */
	IOUR_AVAIL_YES = 1,
	/** The kernel has it, but the caller lacks the no_new_privs bit or
	 *  CAP_SYS_ADMIN in its user namespace (task path only). */
	IOUR_AVAIL_NO_PRIV = 2,
	/** The kernel has it, but the caller is already restricted: it has
	 *  task restrictions or task filters (own or inherited), or new rings
	 *  inherit a register allow-list that gates this call. */
	IOUR_AVAIL_RESTRICTED = 3,
	/** Not determined: the probe got an answer the kernel interface does
	 *  not explain (#IOUR_FEATURES_MISMATCH), or the probe child died
	 *  first (#IOUR_FEATURES_CHILD_DIED).  Treated as absent. */
	IOUR_AVAIL_UNKNOWN = 4
};

/** @name Flags of iour_features::flags
 *  @{ */
/** `IOUR_FEATURE_LEVEL` lowered the level; features above it read absent. */
#define IOUR_FEATURES_FORCED (1ULL << 0)
/** `IOUR_FEATURE_LEVEL` is set but invalid or not lower than the kernel's
 *  level, and was ignored. */
#define IOUR_FEATURES_FORCE_IGNORED (1ULL << 1)
/** Two answers contradicted each other or the documented interface; the
 *  features concerned are reported #IOUR_AVAIL_UNKNOWN. */
#define IOUR_FEATURES_MISMATCH (1ULL << 2)
/** The probe child was killed (iour_features::child_signal) before it
 *  finished, e.g. by a seccomp policy that kills on io_uring calls;
 *  features it did not reach are #IOUR_AVAIL_UNKNOWN. */
#define IOUR_FEATURES_CHILD_DIED (1ULL << 3)
/** The SOCKET filter payload's type word does not carry `SOCK_NONBLOCK`
 *  and `SOCK_CLOEXEC` (measured on Debian's Linux 7.3.4; 7.0 to 7.3-rc7
 *  carry them): rules on #IOUR_FIELD_SOCKET_TYPE_FLAGS or
 *  #IOUR_FIELD_SOCKET_TYPE_RAW cannot be enforced, and plans use the
 *  filter fallback for such SOCKET programs.  Measured when ring filters
 *  work.  @since 1.1 */
#define IOUR_FEATURES_SOCKET_FLAGS_HIDDEN (1ULL << 4)
/** A task-level classic set with register-opcode entries also gates the
 *  task's own registrations on fd -1 (`BPF_FILTER`, `QUERY`) by its
 *  register list (measured on Debian's Linux 7.3.4; 7.0 to 7.3-rc7 do not
 *  gate them): task plans whose set restricts register opcodes and that
 *  register task filters after it list `BPF_FILTER` in the set (and keep
 *  `ENABLE_RINGS` where they list it), so that the filters can be
 *  registered; a filter can only add denials.  Measured in the probe's
 *  child when task restrictions and task filters work.  @since 1.1 */
#define IOUR_FEATURES_TASK_SET_GATES_FILTERS (1ULL << 5)
/** @} */

/** @brief Where iour_features::op_last and iour_features::reg_last come
 *         from. */
enum iour_limits_source {
	/** Unknown (io_uring or ring restrictions unavailable). */
	IOUR_LIMITS_NONE = 0,
	/** `IORING_REGISTER_QUERY`. */
	IOUR_LIMITS_QUERY = 1,
	/** `IORING_REGISTER_PROBE` for request opcodes; the register-opcode
	 *  limit measured by registering single restriction entries on
	 *  throw-away disabled rings (the kernel rejects an entry naming a
	 *  register opcode it does not know). */
	IOUR_LIMITS_PROBE = 2,
	/** `IORING_REGISTER_PROBE` for request opcodes; the register-opcode
	 *  limit is the smallest one any kernel with that many request opcodes
	 *  had (the range test failed). */
	IOUR_LIMITS_TABLE = 3
};

/**
 * @brief Everything iour_probe() found out.  An output struct: the caller
 *        sets #sz to `sizeof(struct iour_features)` and the library fills
 *        the fields that fit in #sz (bytes beyond the fields it knows are
 *        zeroed).
 *
 * Fields named after a feature hold an enum iour_avail value.  Fields
 * ending in `_err` hold the kernel's raw answer to the probing call (a
 * negative errno, or 0 for success or "not probed"), for diagnostics; the
 * interpretation is in the enum iour_avail fields.
 */
struct iour_features {
	/** Set by the caller: sizeof(struct iour_features). */
	size_t sz;
	/** The effective feature level (enum iour_feature_level), after
	 *  `IOUR_FEATURE_LEVEL`. */
	uint32_t level;
	/** The level the kernel supports for this caller, ignoring
	 *  `IOUR_FEATURE_LEVEL`. */
	uint32_t kernel_level;
	/** IOUR_FEATURES_* bits. */
	uint64_t flags;

	/** Can this caller create rings (#IOUR_AVAIL_YES / #IOUR_AVAIL_NO)? */
	uint32_t io_uring;
	/** Raw `io_uring_setup(1, NULL)`: -EFAULT means usable; -EPERM
	 *  (sysctl, LSM or seccomp), -ENOSYS (no io_uring, or seccomp) or any
	 *  other errno means unusable. */
	int32_t setup_err;
	/** `kernel.io_uring_disabled` (0 allowed, 1 only CAP_SYS_ADMIN or
	 *  the group below, 2 disabled), or -1 if the sysctl is absent. */
	int32_t sysctl_disabled;
	/** `kernel.io_uring_group` (-1: no group), or -1 if absent. */
	int32_t sysctl_group;
	/** The caller's seccomp mode from /proc/self/status (0 none, 1
	 *  strict, 2 filter), or -1 if unknown. */
	int32_t seccomp_mode;
	/** The caller's no_new_privs bit from /proc/self/status (0 or 1), or
	 *  -1 if unknown. */
	int32_t no_new_privs;

	/** Per-ring restrictions (Linux 5.10+).  #IOUR_AVAIL_RESTRICTED:
	 *  supported, but new rings inherit task restrictions, so a ring-level
	 *  set cannot be registered (-EBUSY). */
	uint32_t ring_restrictions;
	/** Raw `io_uring_setup(1, R_DISABLED)`: 0 (the ring was created and
	 *  closed) or -EINVAL before 5.10. */
	int32_t r_disabled_err;
	/** Raw `IORING_REGISTER_RESTRICTIONS` with a NULL array on a fresh
	 *  disabled ring: -EINVAL (nothing registered yet) or -EBUSY (the ring
	 *  inherited task restrictions). */
	int32_t ring_register_err;
	/** Raw `IORING_REGISTER_ENABLE_RINGS` on an enabled ring: -EBADFD
	 *  (5.10+), -EACCES (5.10+, register ops gated), -EINVAL before 5.10. */
	int32_t enable_rings_err;

	/** The kernel's `IORING_OP_LAST`: request opcodes are 0 .. op_last-1.
	 *  0 when unknown. */
	uint32_t op_last;
	/** The kernel's `IORING_REGISTER_LAST`: register opcodes are
	 *  0 .. reg_last-1.  0 when unknown. */
	uint32_t reg_last;
	/** enum iour_limits_source of #op_last and #reg_last. */
	uint32_t limits_source;
	/** 1 when the kernel gates request opcodes and register opcodes
	 *  separately (Linux 7.0+: a ring-level set without register entries
	 *  leaves register ops open), 0 for the coupled semantics of 5.10 to
	 *  6.19 (any registered set closes every unlisted register op).  This
	 *  describes the running kernel even when the level is forced, because
	 *  the library must translate restriction sets for the kernel that
	 *  enforces them. */
	uint32_t split_gates;

	/** `IORING_REGISTER_QUERY` (Linux 6.18+). */
	uint32_t query;
	/** Raw QUERY on fd -1: 0, or its -errno (-EINVAL/-EBADF before
	 *  6.18), or the per-entry result when the syscall succeeded. */
	int32_t query_err;
	/** QUERY: number of query opcodes the kernel knows; 0 without QUERY. */
	uint32_t nr_query_opcodes;
	/** `IORING_REGISTER_PROBE` (Linux 5.6+) on a fresh disabled ring. */
	uint32_t probe;
	/** QUERY: `IORING_FEAT_*` mask; 0 without QUERY. */
	uint64_t feature_flags;
	/** QUERY: `IORING_SETUP_*` mask; 0 without QUERY. */
	uint64_t setup_flags;
	/** QUERY: `IORING_ENTER_*` mask; 0 without QUERY. */
	uint64_t enter_flags;
	/** QUERY: valid `IOSQE_*` mask; 0 without QUERY. */
	uint64_t sqe_flags;

	/** Raw `IORING_REGISTER_PROBE` result (0 or -errno). */
	int32_t probe_err;
	/** PROBE: `last_op` as reported (`IORING_OP_LAST - 1`). */
	uint32_t probe_last_op;
	/** PROBE: number of opcodes reported supported. */
	uint32_t nr_supported_ops;
	/** The ring-less register path, fd -1 (Linux 6.13+). */
	uint32_t blind_register;
	/** PROBE: bit (n % 64) of word n / 64 is set when request opcode n is
	 *  supported by the kernel (compiled in). */
	uint64_t supported_ops[4];

	/** Task-level restrictions (Linux 7.0+).  #IOUR_AVAIL_NO_PRIV: set
	 *  no_new_privs first; #IOUR_AVAIL_RESTRICTED: the task already has
	 *  restrictions or task filters (own or inherited), so a classic task
	 *  set can no longer be registered. */
	uint32_t task_restrictions;
	/** Raw `register(-1, IORING_REGISTER_RESTRICTIONS, NULL, 1)`: -EFAULT
	 *  (supported), -EPERM (already restricted), -EACCES (no_new_privs
	 *  missing), -EINVAL (6.13-6.19, or before 5.10), -EBADF (5.10-6.12). */
	int32_t task_restrictions_err;
	/** Classic-BPF filters on a ring (Linux 7.0+ with CONFIG_IO_URING_BPF). */
	uint32_t bpf_ring;
	/** Raw `register(ring, IORING_REGISTER_BPF_FILTER, NULL, 1)` on a
	 *  fresh disabled ring: -EFAULT (supported) or -EINVAL. */
	int32_t bpf_ring_err;
	/** Classic-BPF filters on the task path (#IOUR_AVAIL_NO_PRIV: set
	 *  no_new_privs first). */
	uint32_t bpf_task;
	/** Raw `register(-1, IORING_REGISTER_BPF_FILTER, NULL, 1)`: -EFAULT
	 *  (supported), -EACCES (no_new_privs missing), -EINVAL. */
	int32_t bpf_task_err;
	/** Filter payload size of IORING_OP_SOCKET (12 on 7.0+), 0 if none;
	 *  the 1.0 spelling of `pdu_size[IORING_OP_SOCKET]`. */
	uint32_t pdu_socket;
	/** Filter payload size of IORING_OP_OPENAT (24 on 7.0+), 0 if none;
	 *  the 1.0 spelling of `pdu_size[IORING_OP_OPENAT]`. */
	uint32_t pdu_openat;
	/** Filter payload size of IORING_OP_OPENAT2 (24 on 7.0+), 0 if none;
	 *  the 1.0 spelling of `pdu_size[IORING_OP_OPENAT2]`. */
	uint32_t pdu_openat2;
	/** Filter payload size of IORING_OP_CONNECT (24 on 7.2+), 0 if none;
	 *  the 1.0 spelling of `pdu_size[IORING_OP_CONNECT]`. */
	uint32_t pdu_connect;
	/** The signal that killed the probe child, or 0. */
	int32_t child_signal;
	/** Reserved; always 0. */
	uint32_t pad;
	/** The filter payload size of every request opcode, indexed by the
	 *  opcode: the bytes the kernel fills after the filter context's
	 *  header (doc/kernel.md 4.3), 0 for an opcode it fills none for or
	 *  that the library's request schema has no payload for
	 *  (iour_payload_count() lists those it has).  Filled for every
	 *  payload of the schema, so a payload added in a later version needs
	 *  no new field; the four fields above repeat the sizes of theirs.
	 *
	 *  Read by planning (iour_plan_opts::features) when the caller's `sz`
	 *  covers the array: every entry must then be 0 for an opcode the
	 *  schema has no payload for (-EINVAL otherwise).  The four opcodes
	 *  with a named field above always take their size from that field and
	 *  their entries here are not read, so code written against 1.0 that
	 *  sets or edits only the named fields plans as it did.  A smaller
	 *  `sz` is read through the named fields alone.
	 *  @since 1.1 */
	uint8_t pdu_size[256];
};

/** @name Flags of iour_probe_opts::flags
 *  @{ */
/** Probe the kernel now; neither read nor update the cache. */
#define IOUR_PROBE_NO_CACHE (1ULL << 0)
/** Probe the kernel now and replace the cached answer (also re-reads
 *  `IOUR_FEATURE_LEVEL`).  Each refresh keeps the previous answer's few
 *  hundred bytes allocated, so that concurrent readers stay valid. */
#define IOUR_PROBE_REFRESH (1ULL << 1)
/** @} */

/** @brief Options of iour_probe(). */
struct iour_probe_opts {
	/** sizeof(struct iour_probe_opts). */
	size_t sz;
	/** IOUR_PROBE_* flags; 0 for the cached answer. */
	uint64_t flags;
};
/** @brief The last field of struct iour_probe_opts, up to which the library reads
 *         it (the options discipline of common.h). */
#define iour_probe_opts__last_field flags

/**
 * @brief **iour_probe()** reports what the running kernel supports for the
 *        calling process.
 *
 * The first call (or one with #IOUR_PROBE_NO_CACHE / #IOUR_PROBE_REFRESH)
 * forks a child that makes the probing calls, and waits for it: typically
 * a few hundred microseconds.  Later calls copy the cached answer.
 * Thread-safe; concurrent first calls probe once.
 *
 * @param opts options, or NULL for the cached answer.
 * @param out filled on success; the caller sets `out->sz`.
 * @return 0 on success;
 *         -EINVAL if @p out is NULL, `out->sz` is smaller than
 *         `offsetof(struct iour_features, kernel_level)` or larger than
 *         4096, `opts->sz` is too small, or unknown flags are set;
 *         -E2BIG if @p opts has non-zero bytes the library does not know;
 *         -ENOMEM if the shared page or the cache entry cannot be allocated,
 *         or a probing call ran out of memory; -EMFILE or -ENFILE if a
 *         probing call found the process's or the system's file table full;
 *         -EAGAIN if the probe child cannot be created for lack of
 *         resources (e.g. `RLIMIT_NPROC`); none of these is cached, so a
 *         later call probes again;
 *         -ECHILD if the probe child cannot be created for another reason.
 * @since 1.0
 */
IOUR_API int iour_probe(const struct iour_probe_opts *opts, struct iour_features *out);

/**
 * @brief **iour_feature_level()** returns the effective feature level of the
 *        running kernel for this process (the cached probe, probing first
 *        if needed), after `IOUR_FEATURE_LEVEL`.  Thread-safe.
 * @return an enum iour_feature_level value (0 to #IOUR_LEVEL_MAX) on
 *         success; -ENOMEM, -EMFILE, -ENFILE, -EAGAIN (a resource ran
 *         short: not cached, a later call probes again) or -ECHILD if the
 *         probe could not run (see iour_probe()).
 * @since 1.0
 */
IOUR_API int iour_feature_level(void);

/**
 * @brief **iour_feature_level_str()** describes a feature level in a few
 *        words, e.g. "per-ring restrictions (Linux 5.10+)".
 * @param level an enum iour_feature_level value.
 * @return a static string; "unknown level" for values outside 0 to
 *         #IOUR_LEVEL_MAX.  Never NULL.
 * @since 1.0
 */
IOUR_API const char *iour_feature_level_str(int level);

/**
 * @brief **iour_avail_str()** names an enum iour_avail value: "no", "yes",
 *        "no privilege", "already restricted" or "unknown".
 * @param avail an enum iour_avail value.
 * @return a static string; "invalid" for values outside the enum.  Never
 *         NULL.
 * @since 1.0
 */
IOUR_API const char *iour_avail_str(uint32_t avail);

/**
 * @brief **iour_kernel_describe()** describes a Linux version as
 *        iour_probe() would find it for a fresh process (no seccomp, no
 *        no_new_privs, io_uring sysctls absent, no restrictions yet), from
 *        the library's own tables: the feature level, the opcode limits
 *        (iour_opcode_last(), iour_register_op_last()), the filter payload
 *        sizes of the request schema, and the errnos the probing calls
 *        return on that version.
 *
 * A description, not a measurement: distribution kernels may differ
 * (a configuration without `CONFIG_IO_URING_BPF`, backports, the
 * #IOUR_FEATURES_SOCKET_FLAGS_HIDDEN behaviour), and only iour_probe()
 * tells what the running kernel does.  Pass the result to
 * iour_policy__plan() (iour_plan_opts::features) to plan a policy for that
 * version.  Versions before 5.10 have no ring restrictions: their opcode
 * limits read 0 (unknown), as iour_probe() reports them there.
 * The description never forces a level: #IOUR_FEATURES_FORCED is never set.
 *
 * @param kver kernel version, IOUR_KVER(maj, min); the patch byte is
 *        ignored.
 * @param out filled on success with the fields that fit in `out->sz`, as
 *        iour_probe() fills them; the caller sets `out->sz`.
 * @return 0 on success; -EINVAL if @p out is NULL, or `out->sz` is smaller
 *         than `offsetof(struct iour_features, kernel_level)` or larger
 *         than 4096.  Never probes, allocates or calls the kernel.
 * @since 1.1
 */
IOUR_API int iour_kernel_describe(uint32_t kver, struct iour_features *out);

/** @name Kernel generations
 *  The releases the library plans around, from its own tables: what a
 *  tool names when it plans for a kernel other than the running one.
 *  Like iour_kernel_describe(), descriptions of releases, not
 *  measurements.
 *  @{ */

/** @brief The kernel generations iour_kernel_generation() gives. */
enum iour_kernel_gen {
	/** The newest release whose numbers the library holds (Linux 7.2):
	 *  iour_opcode_last() and iour_register_op_last() of any later
	 *  version are its. */
	IOUR_KGEN_NEWEST = 0,
	/** The first release with per-ring restrictions (Linux 5.10). */
	IOUR_KGEN_RING_RESTRICTIONS = 1,
	/** The first release whose `io_uring_register()` serves some opcodes
	 *  without a ring, on fd -1 (Linux 6.13). */
	IOUR_KGEN_BLIND_REGISTER = 2,
	/** The first release with split gates (Linux 7.0; see
	 *  iour_kernel_split_gates()), task restrictions and filters. */
	IOUR_KGEN_SPLIT_GATES = 3,
};

/**
 * @brief **iour_kernel_generation()** gives the kernel version of a
 *        generation.
 * @param gen an enum iour_kernel_gen value.
 * @return the version as IOUR_KVER(maj, min), > 0; -EINVAL if @p gen is
 *         not an enum iour_kernel_gen value.  Never calls the kernel.
 * @since 1.1
 */
IOUR_API int iour_kernel_generation(uint32_t gen);

/**
 * @brief **iour_level_kernel()** gives the representative kernel of a
 *        feature level: the release whose tables the library uses when a
 *        level is forced (#IOUR_PLAN_FORCE_LEVEL, `IOUR_FEATURE_LEVEL`).
 *
 * #IOUR_LEVEL_IO_URING is Linux 5.4, #IOUR_LEVEL_RING 6.1,
 * #IOUR_LEVEL_QUERY 6.18 (the newest with coupled gates),
 * #IOUR_LEVEL_TASK_BPF 7.0 and #IOUR_LEVEL_CONNECT 7.2.
 * @param level an enum iour_feature_level value.
 * @return the version as IOUR_KVER(maj, min); 0 for #IOUR_LEVEL_NONE (no
 *         io_uring: no release); -EINVAL if @p level is above
 *         #IOUR_LEVEL_MAX.  Never calls the kernel.
 * @since 1.1
 */
IOUR_API int iour_level_kernel(uint32_t level);

/**
 * @brief **iour_kernel_split_gates()** tells whether a kernel version has
 *        split gates (doc/kernel.md 2.3): from Linux 7.0 on, a restriction
 *        set that lists no register opcode leaves register calls open;
 *        before ("coupled" gates), any registered set closes every
 *        register opcode it does not list.
 * @param kver kernel version, IOUR_KVER(maj, min); the patch byte is
 *        ignored.
 * @return 1 if it has split gates, 0 if not (0 for versions before 5.10,
 *         which have no restrictions).  Never fails.
 * @since 1.1
 */
IOUR_API int iour_kernel_split_gates(uint32_t kver);

/** @} */

#ifdef __cplusplus
}
#endif

#endif /* IOURING_RESTRICT_PROBE_H */
