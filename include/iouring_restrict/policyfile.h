/* SPDX-License-Identifier: MIT */
/**
 * @file policyfile.h
 * @brief Policy files: a policy as JSON text (load, save), the verdict of
 *        one request under a policy (decide), and the named opcode groups
 *        ("@file-read", "@net-client", ...) policy files may use.
 *
 * The format is described in doc/policy-files.md and checked by the JSON
 * Schema doc/policy.schema.json.  In short (OCI/Docker seccomp profiles
 * look alike):
 * @code
 * {
 *   "comment": "a TCP client",
 *   "defaultAction": "deny",
 *   "entries": [
 *     { "names": ["@file-read", "close"], "action": "allow" },
 *     { "names": ["socket"], "action": "allow",
 *       "args": [ { "field": "socket.family", "op": "in",
 *                   "values": ["AF_INET", "AF_INET6"] } ] },
 *     { "names": ["connect"], "action": "deny", "minKernel": "7.2",
 *       "args": [ { "field": "connect.addr4", "op": "in",
 *                   "value": "10.0.0.0/8" } ] }
 *   ]
 * }
 * @endcode
 *
 * **Mapping to a policy.**  defaultAction becomes #IOUR_POLICY_ATTR_DEFAULT
 * and the default verdict of the argument filters; every entry adds, for
 * each opcode it names (groups expanded), one filter rule in file order
 * (an entry without `args` is a rule that always holds).  `requestOps`,
 * `registerOps` and `sqeFlags` make the classic part (struct
 * iour_ruleset); the other attributes map one to one.  Loading then calls
 * iour_policy__set_filter() (and iour_policy__set_prog() for `programs`),
 * so a loaded policy behaves exactly like the same policy built with the
 * C API.
 *
 * **Saving** writes a canonical form: the same policy always gives the
 * same bytes, and loading what was saved gives a policy that saves to the
 * same bytes again.  Groups and `minKernel` conditions are resolved at
 * load time and appear expanded in the saved form.
 *
 * Loading and saving need no system call (except reading the file, and
 * uname(2) when iour_policy_load_opts::kernel is 0 and the file has
 * `minKernel` conditions).  Thread-safe: no shared state.
 */
#ifndef IOURING_RESTRICT_POLICYFILE_H
#define IOURING_RESTRICT_POLICYFILE_H

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

struct iour_policy;

/** @name Loading and saving policy files
 *  @{ */

/** @brief Options of iour_policy__load_json() and iour_policy__load_file(). */
struct iour_policy_load_opts {
	size_t sz;          /**< sizeof(struct iour_policy_load_opts) */
	uint64_t flags;     /**< reserved, must be 0 */
	const char *origin; /**< a name for the text in messages (a file
				 name); NULL: none.  iour_policy__load_file()
				 uses its path when this is NULL. */
	/** The kernel version (IOUR_KVER()) against which `minKernel`
	 *  conditions are evaluated; 0 means the running kernel (uname(2)). */
	uint32_t kernel;
	/** Must be 0.  It fills what would otherwise be tail padding, which a
	 *  designated initializer (IOUR_OPTS()) need not zero: the library
	 *  refuses non-zero bytes past the fields it knows (-E2BIG), so
	 *  padding left with stack garbage made loads fail at random. */
	uint32_t reserved;
};
/** @brief The last field of struct iour_policy_load_opts, up to which the
 *         library reads it (the options discipline of common.h). */
#define iour_policy_load_opts__last_field reserved

/** @brief Size of iour_load_error::message. */
#define IOUR_LOAD_ERROR_MSG 256
/** @brief Size of iour_load_error::path. */
#define IOUR_LOAD_ERROR_PATH 128

/**
 * @brief Where and why loading a policy file failed.
 *
 * The caller sets `sz`; the library fills the members that fit.  Syntax
 * errors are placed where the JSON parser stopped.  Semantic errors (an
 * unknown key, an unknown name, a value out of range or of the wrong
 * constant namespace) are placed at the start of the offending key or
 * value: the library remembers the JSON path of the value (for example
 * `entries[2].args[0].value`) and finds it again in the text, which the
 * parser has already accepted (see doc/policy-files.md, "Error
 * positions").
 */
struct iour_load_error {
	size_t sz;       /**< sizeof(struct iour_load_error), set by the caller */
	uint32_t line;   /**< 1-based line; 0 if the error has no position
			      (a file that cannot be read, an allocation failure) */
	uint32_t column; /**< 1-based column in bytes; 0 without a position */
	uint64_t offset; /**< 0-based byte offset in the text */
	/** JSON path of the offending value ("entries[0].names[1]"), "" for
	 *  syntax errors and errors of the whole document. */
	char path[IOUR_LOAD_ERROR_PATH];
	/** What was wrong and what was expected, one line, no position
	 *  prefix: "unknown key 'nmes' in an entry (expected one of: ...)". */
	char message[IOUR_LOAD_ERROR_MSG];
};

/**
 * @brief **iour_policy__load_json()** builds a policy from the JSON text of
 *        a policy file.
 *
 * Every error is reported, none is ignored: malformed JSON, a key the
 * format does not define, an unknown opcode, group, field, operator or
 * constant, a constant of another field's namespace (`AF_INET` for
 * `open.flags`), a number out of the field's range, a field that the
 * opcode does not have.
 * @param text the text; need not be NUL-terminated.
 * @param len its length in bytes.
 * @param opts options, or NULL for the defaults.
 * @param out receives the policy; free it with iour_policy__free().
 * @param err filled on failure (may be NULL).
 * @return 0 on success; -EINVAL if @p text or @p out is NULL or @p opts
 *         is malformed (flags other than 0); -E2BIG if @p opts has unknown
 *         non-zero bytes; -EBADMSG if the text is not a valid
 *         policy file (@p err says where and why);
 *         -IOUR_ERRNO__PROG_TOO_LARGE if an opcode's rules need more than
 *         4096 instructions (@p err names the opcode); -ENOMEM.
 *         On failure *@p out is untouched.
 * @since 1.1
 */
IOUR_API int iour_policy__load_json(const char *text, size_t len,
				    const struct iour_policy_load_opts *opts,
				    struct iour_policy **out, struct iour_load_error *err);

/**
 * @brief **iour_policy__load_file()** reads a policy file and loads it as
 *        iour_policy__load_json() does.
 * @param path the file; at most 16 MiB.
 * @param opts options, or NULL (the origin in messages is then @p path).
 * @param out receives the policy.
 * @param err filled on failure (may be NULL).
 * The file is opened with O_NONBLOCK and O_NOCTTY (a FIFO never blocks
 * the call) and only a regular file is read.
 * @return as iour_policy__load_json(); also -EINVAL if @p path is NULL
 *         or names something other than a regular file or directory (a
 *         FIFO, a device, a socket), -EISDIR for a directory,
 *         -EFBIG if the file is larger than 16 MiB, and the negative errno
 *         of open(2) or read(2) (-ENOENT, -EACCES, ...).
 * @since 1.1
 */
IOUR_API int iour_policy__load_file(const char *path, const struct iour_policy_load_opts *opts,
				    struct iour_policy **out, struct iour_load_error *err);

/**
 * @brief **iour_policy__save_json()** writes a policy as a policy file
 *        (snprintf-style sizing).
 *
 * The output is canonical (see the file comment) and ends with a newline.
 * Argument filters are written as the rules they were built from (the
 * policy keeps a copy of the filter set given to
 * iour_policy__set_filter()); programs set with iour_policy__set_prog()
 * are written as instructions (`programs`).
 * @param p the policy.
 * @param flags reserved, must be 0.
 * @param buf destination, or NULL with @p size 0 to ask for the length.
 * @param size bytes available in @p buf.  The text is NUL-terminated
 *        whenever @p size > 0, truncated if it does not fit.
 * @return the length of the whole text (without the NUL), like
 *         snprintf(); -EINVAL if @p p is NULL, @p buf is NULL with
 *         @p size > 0, or @p flags is not 0; -EOVERFLOW if the text would
 *         exceed INT_MAX bytes; -ENOMEM.
 * @since 1.1
 */
IOUR_API int iour_policy__save_json(const struct iour_policy *p, uint64_t flags, char *buf,
				    size_t size);
/** @} */

/** @name Deciding one request
 *  @{ */

/** @brief What decided a verdict (iour_request_verdict::reason).  Values are never
 *         renumbered. */
enum iour_decide_reason {
	/** The classic part's request allow-list does not list the opcode
	 *  (checked first, as the kernel does). */
	IOUR_DECIDE_CLASSIC_GATE = 1,
	/** The request's SQE flags are not allowed, or lack a required one
	 *  (the classic part's SQE flags). */
	IOUR_DECIDE_SQE_FLAGS = 2,
	/** Rule iour_request_verdict::rule of the opcode's argument filter held. */
	IOUR_DECIDE_RULE = 3,
	/** The opcode has argument rules but none held: the opcode's default
	 *  verdict. */
	IOUR_DECIDE_OPCODE_DEFAULT = 4,
	/** The opcode has a raw program (iour_policy__set_prog()), whose
	 *  verdict it is. */
	IOUR_DECIDE_PROGRAM = 5,
	/** The classic part lists the opcode and nothing filters it. */
	IOUR_DECIDE_CLASSIC_ALLOW = 6,
	/** Nothing mentions the opcode: the policy's default
	 *  (#IOUR_POLICY_ATTR_DEFAULT). */
	IOUR_DECIDE_POLICY_DEFAULT = 7
};

/** @brief iour_request_verdict::rule when no single rule decided. */
#define IOUR_VERDICT_NO_RULE UINT32_MAX

/** @brief The verdict of one request (iour_policy__decide()). */
struct iour_request_verdict {
	size_t sz;        /**< sizeof(struct iour_request_verdict), set by the caller */
	uint32_t verdict; /**< #IOUR_ALLOW or #IOUR_DENY */
	uint32_t reason;  /**< enum iour_decide_reason */
	uint32_t opcode;  /**< the request opcode (byte 8 of the context) */
	/** 0-based index of the deciding rule among the opcode's rules (in
	 *  the order of the file or of iour_filter__add_rule()) for
	 *  #IOUR_DECIDE_RULE; #IOUR_VERDICT_NO_RULE otherwise. */
	uint32_t rule;
};

/**
 * @brief **iour_policy__decide()** gives the verdict of a policy for one
 *        request, and what decided it, as the kernel would on a kernel that
 *        enforces the whole policy (7.2+, task restrictions and argument
 *        filters).
 *
 * The request is a filter context (build it with iour_ctx_generic() and
 * the payload builders of cbpf.h).  The order is the kernel's: the
 * classic gate, the SQE flags, then the opcode's filter.  The filter's
 * verdict comes from running the policy's compiled program in the
 * simulator (iour_cbpf_run()); the deciding rule is found by compiling
 * each rule alone, so both agree with what the kernel runs.
 * @param p the policy.
 * @param ctx the 40-byte context.
 * @param ctx_len must be #IOUR_CTX_SIZE.
 * @param out filled up to its `sz` (which the caller sets).
 * @return 0 on success; -EINVAL if @p p, @p ctx or @p out is NULL,
 *         @p ctx_len is not 40 or `out->sz` is smaller than the struct up
 *         to `rule`; -ENOMEM; -IOUR_ERRNO__INTERNAL if the simulator
 *         refuses a compiled program (a bug).
 * @since 1.1
 */
IOUR_API int iour_policy__decide(const struct iour_policy *p, const uint8_t *ctx, size_t ctx_len,
				 struct iour_request_verdict *out);
/** @} */

/** @name Opcode groups
 *  One table in the library (lib/base/groups.c): each group has a name
 *  ("@file-read"), a one-line help text, where its list comes from, and
 *  request opcodes and register opcodes.  Every member carries the kernel
 *  version that added it (the names tables, iour_opcode_since()), so
 *  asking for a group "as of" a kernel version gives the same set on
 *  every kernel.  Groups are listed in a fixed order; the index of a
 *  group is stable within a library version only: look groups up by
 *  name.
 *  @{ */

/** @brief What iour_group_get() tells about a group. */
struct iour_group_info {
	size_t sz;              /**< sizeof(struct iour_group_info), set by the caller */
	const char *name;       /**< "@file-read"; static storage */
	const char *help;       /**< one line; static storage */
	const char *source;     /**< where the list comes from; static storage */
	uint32_t nops;          /**< number of request opcodes (all versions) */
	uint32_t nregister_ops; /**< number of register opcodes */
};

/**
 * @brief **iour_group_count()** returns the number of groups.
 * @return the count (> 0).
 * @since 1.1
 */
IOUR_API int iour_group_count(void);

/**
 * @brief **iour_group_get()** describes a group.
 * @param idx 0 .. iour_group_count() - 1.
 * @param info filled up to its `sz`.
 * @return 0 on success; -EINVAL if @p info is NULL or `info->sz` is smaller
 *         than the struct up to `name`; -ENOENT if @p idx is out of range.
 * @since 1.1
 */
IOUR_API int iour_group_get(size_t idx, struct iour_group_info *info);

/**
 * @brief **iour_group_find()** looks a group up by name.
 * @param name "@file-read" or "file-read"; case-insensitive.
 * @return the index (>= 0); -EINVAL if @p name is NULL; -ENOENT if no
 *         group has that name.
 * @since 1.1
 */
IOUR_API int iour_group_find(const char *name);

/**
 * @brief **iour_group_opcodes()** lists a group's request opcodes added up
 *        to a kernel version, ascending (two-call sizing).
 * @param idx the group.
 * @param kver IOUR_KVER() of the newest kernel to include; 0 for all.
 * @param ops destination, or NULL to ask for the count.
 * @param cap entries @p ops holds.
 * @return the number of opcodes; -ENOENT if @p idx is out of range;
 *         -EINVAL if @p ops is NULL with @p cap > 0; -ERANGE if @p ops is
 *         not NULL and @p cap is smaller than the count (nothing written).
 * @since 1.1
 */
IOUR_API int iour_group_opcodes(size_t idx, uint32_t kver, uint32_t *ops, size_t cap);

/**
 * @brief **iour_group_register_ops()** lists a group's register opcodes
 *        added up to a kernel version, ascending (two-call sizing).
 * @param idx the group.
 * @param kver IOUR_KVER() of the newest kernel to include; 0 for all.
 * @param ops destination, or NULL to ask for the count.
 * @param cap entries @p ops holds.
 * @return as iour_group_opcodes().
 * @since 1.1
 */
IOUR_API int iour_group_register_ops(size_t idx, uint32_t kver, uint32_t *ops, size_t cap);
/** @} */

#ifdef __cplusplus
}
#endif

#endif /* IOURING_RESTRICT_POLICYFILE_H */
