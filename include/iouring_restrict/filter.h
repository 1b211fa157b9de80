/* SPDX-License-Identifier: MIT */
/**
 * @file filter.h
 * @brief Argument filters: typed rules over the io_uring filter context,
 *        compiled to minimal classic-BPF programs.
 *
 * An **iour_filter** holds, for each request opcode, an ordered list of
 * rules.  A rule is a conjunction of comparisons on typed fields of the
 * request (the socket family, the open flags, the connect port, ...) plus
 * a verdict, #IOUR_ALLOW or #IOUR_DENY.  For a request of that opcode the
 * rules are tried in the order they were added; the first rule whose
 * comparisons all hold decides.  When none holds, the opcode's default
 * verdict decides (iour_filter__set_default(), or the filter-wide default
 * of struct iour_filter_opts, #IOUR_DENY unless chosen otherwise).
 *
 * An opcode with neither rules, nor a default, nor a raw program is **not
 * filtered**: the filter says nothing about it, iour_filter__compile()
 * answers -ENOENT, and whoever applies the filter leaves that opcode to
 * the other restrictions in force.
 *
 * iour_filter__compile() turns one opcode's rules into a **struct
 * iour_prog**: an immutable classic-BPF program that the kernel's io_uring
 * checker accepts (Linux 7.0+, `IORING_REGISTER_BPF_FILTER`).  When the
 * rules reduce to a constant verdict, the program's kind says so
 * (#IOUR_PROG_ALWAYS_ALLOW, #IOUR_PROG_ALWAYS_DENY), so a caller can use a
 * classic opcode allow-list instead of a filter.
 *
 * Typical use:
 * @code
 * struct iour_filter *f;
 * struct iour_prog *p;
 * struct iour_cmp c = { .sz = sizeof(c), .field = IOUR_FIELD_SOCKET_FAMILY,
 *                       .op = IOUR_CMP_EQ, .value = AF_INET };
 * iour_filter__new(NULL, &f);                       // default verdict: deny
 * iour_filter__add_rule(f, 45, IOUR_ALLOW, &c, 1);  // IORING_OP_SOCKET
 * iour_filter__compile(f, 45, NULL, &p);
 * // register iour_prog__insns(p), iour_prog__insn_cnt(p) with pdu_size
 * // iour_prog__pdu_size(p) for opcode 45, then:
 * iour_prog__free(p);
 * iour_filter__free(f);
 * @endcode
 *
 * **Thread safety.**  A filter may be read (compiled, copied, inspected)
 * from several threads at once; modifying it needs exclusive access.
 * Programs are immutable and may be shared freely.
 *
 * **Byte order.**  Every value is given in host byte order, including
 * ports and IPv4 addresses (127.0.0.1 is 0x7f000001, see IOUR_IPV4()).
 * IPv6 addresses are 16 bytes in the order they are written
 * (`::1` is fifteen zero bytes and a 1).  The compiler converts to the
 * context's layout for the host it runs on.
 */
#ifndef IOURING_RESTRICT_FILTER_H
#define IOURING_RESTRICT_FILTER_H

#include "common.h"
#include "cbpf.h"

#ifdef __cplusplus
extern "C" {
#endif

/** @brief A set of argument filters, one rule list per request opcode. */
struct iour_filter;
/** @brief An immutable compiled classic-BPF program for one opcode. */
struct iour_prog;

/** @brief Verdicts of a rule or a default. */
enum iour_verdict {
	IOUR_DENY = 0, /**< the request fails with -EACCES */
	IOUR_ALLOW = 1 /**< the request proceeds */
};

/**
 * @brief Typed fields of the filter context.
 *
 * #IOUR_FIELD_USER_DATA and #IOUR_FIELD_SQE_FLAGS exist for every opcode.
 * The others exist only for the opcodes named in their description;
 * using one with another opcode fails with -EDOM.  "valid values" is what
 * an operand may be; anything else fails with -ERANGE.
 */
enum iour_field {
	/** `sqe->user_data`, 64 bits.  All opcodes. */
	IOUR_FIELD_USER_DATA = 1,
	/** The request's `IOSQE_*` flags; valid values: bits of 0x7f.  All
	 *  opcodes.  The kernel copies them after preparing the request and
	 *  some preparations set bits on their own (an OPENAT with `O_CREAT`
	 *  shows `IOSQE_ASYNC`), so do not deny on `IOSQE_ASYNC` or
	 *  `IOSQE_IO_DRAIN`. */
	IOUR_FIELD_SQE_FLAGS = 2,

	/** SOCKET (45): the domain (`AF_*`), 32 bits. */
	IOUR_FIELD_SOCKET_FAMILY = 16,
	/** SOCKET: the base type, `type & 0xf` (`SOCK_STREAM`, ...), so that
	 *  "stream" also matches `SOCK_STREAM | SOCK_CLOEXEC`; valid values
	 *  0..15. */
	IOUR_FIELD_SOCKET_TYPE = 17,
	/** SOCKET: the type's `SOCK_NONBLOCK` and `SOCK_CLOEXEC` bits
	 *  (`type & (SOCK_NONBLOCK | SOCK_CLOEXEC)`); valid values: those bits. */
	IOUR_FIELD_SOCKET_TYPE_FLAGS = 18,
	/** SOCKET: the whole type word as the application passed it, 32 bits. */
	IOUR_FIELD_SOCKET_TYPE_RAW = 19,
	/** SOCKET: the protocol, 32 bits. */
	IOUR_FIELD_SOCKET_PROTOCOL = 20,

	/** OPENAT (18) and OPENAT2 (28): the open flags, 64 bits.
	 *  **The kernel adds `O_LARGEFILE`** (on 64-bit kernels, unless
	 *  `O_PATH` is given), so an equality such as "flags == O_RDONLY" never
	 *  matches a real request: test bits with #IOUR_CMP_ANY_BITS,
	 *  #IOUR_CMP_ALL_BITS or #IOUR_CMP_NONE_BITS and test the access mode
	 *  with #IOUR_FIELD_OPEN_ACCMODE. */
	IOUR_FIELD_OPEN_FLAGS = 32,
	/** OPENAT/OPENAT2: the access mode, `flags & O_ACCMODE`
	 *  (`O_RDONLY` 0, `O_WRONLY` 1, `O_RDWR` 2); valid values 0..3. */
	IOUR_FIELD_OPEN_ACCMODE = 33,
	/** OPENAT/OPENAT2: the mode, 64 bits, as the kernel normalised it. */
	IOUR_FIELD_OPEN_MODE = 34,
	/** OPENAT/OPENAT2: the `RESOLVE_*` flags, 64 bits (always 0 for
	 *  OPENAT). */
	IOUR_FIELD_OPEN_RESOLVE = 35,

	/** CONNECT (16, Linux 7.2+): the address family; valid values
	 *  0..65535.  0 when the address is shorter than a family.  A
	 *  connect to an IPv4-mapped IPv6 address is judged as `AF_INET`
	 *  (deny rules: also as `AF_INET6`) unless #IOUR_FILTER_ADDR4_LITERAL
	 *  is set (see "IPv4-mapped destinations" below). */
	IOUR_FIELD_CONNECT_FAMILY = 48,
	/** CONNECT: the destination port in host byte order; valid values
	 *  0..65535.  0 unless the family is `AF_INET` or `AF_INET6` and the
	 *  address is long enough. */
	IOUR_FIELD_CONNECT_PORT = 49,
	/** CONNECT: the IPv4 destination, a 32-bit number in host byte order
	 *  (IOUR_IPV4(127, 0, 0, 1)).  **A comparison on this field holds
	 *  only for IPv4 destinations**, its negated forms included:
	 *  "addr4 != 10.0.0.1" means "an IPv4 destination other than
	 *  10.0.0.1" and is false for an IPv6 or Unix request.  An IPv4
	 *  destination is an `AF_INET` request or, unless
	 *  #IOUR_FILTER_ADDR4_LITERAL is set, an `AF_INET6` request to the
	 *  IPv4-mapped address (<tt>\::ffff:a.b.c.d</tt>), which the kernel connects to
	 *  a.b.c.d over IPv4 (see "IPv4-mapped destinations" below). */
	IOUR_FIELD_CONNECT_ADDR4 = 50,
	/** CONNECT: the IPv6 destination, 16 bytes in struct iour_cmp::addr6.
	 *  Only #IOUR_CMP_EQ, #IOUR_CMP_NE, #IOUR_CMP_IN_PREFIX and
	 *  #IOUR_CMP_NOT_IN_PREFIX apply.  **A comparison on this field holds
	 *  only for `AF_INET6` requests**, its negated forms included.  For
	 *  an IPv4-mapped address it holds only in a deny rule, unless
	 *  #IOUR_FILTER_ADDR4_LITERAL is set (see "IPv4-mapped destinations"
	 *  below). */
	IOUR_FIELD_CONNECT_ADDR6 = 51
};

/**
 * @brief Comparison operators of struct iour_cmp.
 *
 * All comparisons are unsigned.  "v" is the field's value; the operands
 * are the members of struct iour_cmp named below.  Members an operator
 * does not use must be zero.
 */
enum iour_cmp_op {
	IOUR_CMP_EQ = 1,            /**< v == value */
	IOUR_CMP_NE = 2,            /**< v != value */
	IOUR_CMP_LT = 3,            /**< v < value */
	IOUR_CMP_LE = 4,            /**< v <= value */
	IOUR_CMP_GT = 5,            /**< v > value */
	IOUR_CMP_GE = 6,            /**< v >= value */
	IOUR_CMP_MASKED_EQ = 7,     /**< (v & arg) == value; arg != 0, value within arg */
	IOUR_CMP_ANY_BITS = 8,      /**< (v & value) != 0; value != 0 */
	IOUR_CMP_ALL_BITS = 9,      /**< (v & value) == value; value != 0 */
	IOUR_CMP_NONE_BITS = 10,    /**< (v & value) == 0; value != 0 */
	IOUR_CMP_IN_SET = 11,       /**< v is one of set[0 .. set_len-1]; set_len >= 1 */
	IOUR_CMP_NOT_IN_SET = 12,   /**< v is none of set[0 .. set_len-1] */
	IOUR_CMP_IN_RANGE = 13,     /**< value <= v <= arg; value <= arg */
	IOUR_CMP_NOT_IN_RANGE = 14, /**< v < value or v > arg */
	/** The address lies in the network of prefix length `arg`
	 *  (0..32 for IPv4, 0..128 for IPv6) that contains `value` (IPv4) or
	 *  `addr6` (IPv6); bits of the operand beyond the prefix are ignored.
	 *  Address fields only. */
	IOUR_CMP_IN_PREFIX = 15,
	/** The address lies outside that network (still only for requests
	 *  of the field's family).  Address fields only. */
	IOUR_CMP_NOT_IN_PREFIX = 16
};

/** @brief Most values one set may hold (larger sets: -E2BIG). */
#define IOUR_FILTER_MAX_SET 65536
/** @brief Most comparisons one rule may hold (more: -E2BIG). */
#define IOUR_FILTER_MAX_CMPS 64

/**
 * @brief An IPv4 address in host byte order, for struct iour_cmp::value.
 * @param a first (most significant) byte
 * @param b second byte
 * @param c third byte
 * @param d last byte
 */
#define IOUR_IPV4(a, b, c, d)                                                              \
	((uint32_t)(((uint32_t)(a) << 24) | ((uint32_t)(b) << 16) | ((uint32_t)(c) << 8) | \
		    (uint32_t)(d)))

/**
 * @brief One comparison of a rule.
 *
 * Rules take an array of these.  `sz` must be the same in every element
 * of one array; the library steps through the array by `sz` bytes, reads
 * the members it knows and requires any further bytes to be zero
 * (-E2BIG otherwise).  FFI callers: set `sz` = sizeof and zero the rest.
 * The `set` array is copied; the caller keeps ownership.  The layout on
 * 64-bit hosts is 64 bytes without padding.
 */
struct iour_cmp {
	size_t sz;           /**< sizeof(struct iour_cmp) */
	uint32_t field;      /**< enum iour_field */
	uint32_t op;         /**< enum iour_cmp_op */
	uint64_t value;      /**< the operand; the low end of a range; the
				  bits of a bit test; the IPv4 address of a
				  prefix */
	uint64_t arg;        /**< the mask of #IOUR_CMP_MASKED_EQ; the high
				  end of a range; the prefix length */
	const uint64_t *set; /**< values of #IOUR_CMP_IN_SET / _NOT_IN_SET
				  (duplicates allowed, any order) */
	uint64_t set_len;    /**< number of values in `set` */
	uint8_t addr6[16];   /**< IPv6 operand, in written (network) order */
};

/**
 * @brief Flag of struct iour_filter_opts::flags: IPv4 rules of CONNECT see
 *        only `AF_INET` requests ("literal family" semantics).
 *
 * **IPv4-mapped destinations.**  An `AF_INET6` socket that connects to
 * <tt>\::ffff:a.b.c.d</tt> (the IPv4-mapped form, <tt>\::ffff:0:0/96</tt>) reaches the
 * IPv4 host a.b.c.d: the kernel turns the connect into an IPv4 one.  So,
 * by default, CONNECT rules judge such a request as that IPv4 connect
 * (family `AF_INET`, `addr4` a.b.c.d, the same port; `addr6` comparisons
 * do not hold for it), and deny rules also as the request is given
 * (family `AF_INET6`, `addr6` the 16 bytes):
 *  - an #IOUR_ALLOW rule holds for it when it holds for the IPv4 connect;
 *  - an #IOUR_DENY rule holds for it when it holds for the IPv4 connect
 *    or for the request as given.
 *
 * Rules are still tried in order and the first that holds decides.  Hence
 * `addr4 in 10.0.0.0/8` and `family == AF_INET, addr4 in 10.0.0.0/8`
 * hold for <tt>\::ffff:10.0.0.1</tt>, whether they deny (no bypass through an
 * IPv6 socket) or allow (an allow-list of IPv4 hosts admits their mapped
 * form); `family == AF_INET6` or <tt>addr6 in \::/0</tt> in an allow rule does not
 * admit a mapped address (an allow-list of IPv6 destinations does not
 * open IPv4 ones), while <tt>addr6 in \::ffff:0:0/96</tt> in a deny rule still
 * refuses all of them.  Only this form is treated as IPv4: the kernel sends the
 * IPv4-compatible form <tt>\::a.b.c.d</tt> and the IPv4-translated form
 * <tt>\::ffff:0:a.b.c.d</tt> as ordinary IPv6 packets (only a translator on the
 * network, such as NAT64 for `64:ff9b::/96`, turns them into IPv4), so
 * `addr6` rules govern them.
 *
 * With this flag, the program compares the context literally: `addr4`
 * holds only for `AF_INET` requests and `family` is the family the
 * request gives.  A policy that sets it and denies IPv4 destinations
 * must also deny the mapped prefix with an `addr6` rule (or AF_INET6
 * sockets), or
 * IPv6 sockets bypass it.  The flag changes only programs for CONNECT.
 * @since 1.0
 */
#define IOUR_FILTER_ADDR4_LITERAL (1U << 0)

/** @brief Options of iour_filter__new(). */
struct iour_filter_opts {
	size_t sz; /**< sizeof(struct iour_filter_opts) */
	/** Verdict of an opcode that has rules but no
	 *  iour_filter__set_default(): #IOUR_DENY (the zero default, fail
	 *  closed) or #IOUR_ALLOW. */
	uint32_t default_verdict;
	uint32_t flags; /**< 0 or #IOUR_FILTER_ADDR4_LITERAL */
};
/** @brief The last field of struct iour_filter_opts, up to which the library reads
 *         it (the options discipline of common.h). */
#define iour_filter_opts__last_field flags

/**
 * @brief **iour_filter__new()** creates an empty filter set.
 * @param opts options, or NULL for the defaults (default verdict deny).
 * @param out receives the new filter; release it with iour_filter__free().
 * @return 0 on success; -EINVAL if @p out is NULL, @p opts is malformed
 *         (`sz` too small, unknown verdict, unknown flags); -E2BIG if
 *         @p opts has non-zero bytes this version does not know;
 *         -ENOMEM.
 * @since 1.0
 */
IOUR_API int iour_filter__new(const struct iour_filter_opts *opts, struct iour_filter **out);

/**
 * @brief **iour_filter__free()** releases a filter set.
 * @param f the filter; NULL is accepted and ignored.  Programs compiled
 *        from it stay valid.
 * @since 1.0
 */
IOUR_API void iour_filter__free(struct iour_filter *f);

/**
 * @brief **iour_filter__dup()** makes an independent deep copy.
 * @param f the filter to copy.
 * @param out receives the copy; release it with iour_filter__free().
 * @return 0 on success; -EINVAL if @p f or @p out is NULL; -ENOMEM.
 * @since 1.0
 */
IOUR_API int iour_filter__dup(const struct iour_filter *f, struct iour_filter **out);

/**
 * @brief **iour_filter__add_rule()** appends a rule to an opcode's list.
 *
 * The rule holds when every comparison holds (an empty list always
 * holds); rules are tried in the order they were added and the first
 * that holds gives the verdict.  Every comparison is checked before
 * anything changes: on error the filter is unchanged.
 *
 * @param f the filter.
 * @param opcode request opcode (`IORING_OP_*`), 0..255.
 * @param verdict #IOUR_ALLOW or #IOUR_DENY.
 * @param cmps array of @p ncmps comparisons (see struct iour_cmp for the
 *        stepping rule); may be NULL when @p ncmps is 0.  Copied.
 * @param ncmps number of comparisons, 0..#IOUR_FILTER_MAX_CMPS.
 * @return 0 on success, or a negative error code:
 *  - -EINVAL: @p f NULL; @p cmps NULL with @p ncmps > 0; @p opcode > 255;
 *    unknown verdict; a `sz` smaller than the known members or different
 *    from the first element's; an unknown field or operator; a malformed
 *    operand (`set` NULL or `set_len` 0; range low > high; a zero mask or
 *    zero bits; a masked-equality value with bits outside its mask; an
 *    operand member the operator does not use is not zero);
 *  - -E2BIG: unknown non-zero bytes in a larger struct iour_cmp;
 *    @p ncmps > #IOUR_FILTER_MAX_CMPS; `set_len` > #IOUR_FILTER_MAX_SET;
 *  - -EDOM: a field that does not exist for @p opcode;
 *  - -EOPNOTSUPP: an operator that does not apply to the field (ordering
 *    or bit tests or sets on an IPv6 address, a prefix on a non-address
 *    field);
 *  - -ERANGE: an operand outside the field's valid values (a port above
 *    65535, a 32-bit field value of 2^32 or more, `sqe_flags` bits
 *    outside 0x7f, a mask with bits the field cannot have, an IPv4
 *    address of 2^32 or more, a prefix longer than 32 or 128);
 *  - -EEXIST: @p opcode has a raw program (iour_filter__set_raw());
 *  - -ENOMEM.
 * @since 1.0
 */
IOUR_API int iour_filter__add_rule(struct iour_filter *f, uint32_t opcode, uint32_t verdict,
				   const struct iour_cmp *cmps, size_t ncmps);

/**
 * @brief **iour_filter__set_default()** sets the verdict for requests of
 *        an opcode that no rule matches.
 *
 * Calling it on an opcode without rules makes that opcode filtered with a
 * constant verdict.  A later call replaces the earlier one.
 * @param f the filter.
 * @param opcode request opcode, 0..255.
 * @param verdict #IOUR_ALLOW or #IOUR_DENY.
 * @return 0 on success; -EINVAL if @p f is NULL, @p opcode > 255 or the
 *         verdict is unknown; -EEXIST if @p opcode has a raw program;
 *         -ENOMEM.
 * @since 1.0
 */
IOUR_API int iour_filter__set_default(struct iour_filter *f, uint32_t opcode, uint32_t verdict);

/**
 * @brief **iour_filter__set_raw()** installs a caller-written program for
 *        an opcode (the escape hatch).
 *
 * The program is accepted only if iour_cbpf_validate() accepts it with
 * the io_uring rules.  It replaces an earlier raw program of the opcode
 * and cannot be combined with rules or a default for the same opcode.
 * @param f the filter.
 * @param opcode request opcode, 0..255.
 * @param insns the program; copied.
 * @param cnt number of instructions.
 * @return 0 on success; -EINVAL if @p f or @p insns is NULL or
 *         @p opcode > 255; -IOUR_ERRNO__INVALID_PROG if the validator
 *         rejects the program (including @p cnt 0 or above 4096);
 *         -EEXIST if @p opcode has rules or a default; -ENOMEM.
 * @since 1.0
 */
IOUR_API int iour_filter__set_raw(struct iour_filter *f, uint32_t opcode,
				  const struct iour_insn *insns, size_t cnt);

/**
 * @brief **iour_filter__opcodes()** lists the filtered opcodes in
 *        ascending order (two-call sizing).
 * @param f the filter.
 * @param buf destination, or NULL to ask for the count only.
 * @param cap number of entries @p buf holds (0 when @p buf is NULL).
 * @return the number of filtered opcodes (>= 0); -EINVAL if @p f is NULL
 *         or @p buf is NULL with @p cap > 0; -ERANGE if @p buf is not
 *         NULL and @p cap is smaller than the count (nothing written).
 * @since 1.0
 */
IOUR_API int iour_filter__opcodes(const struct iour_filter *f, uint32_t *buf, size_t cap);

/** @brief iour_filter_opinfo::flags: the opcode has an explicit default. */
#define IOUR_OPINFO_HAS_DEFAULT (1U << 0)
/** @brief iour_filter_opinfo::flags: the opcode has a raw program. */
#define IOUR_OPINFO_RAW (1U << 1)

/** @brief What a filter holds for one opcode (iour_filter__opcode_info()). */
struct iour_filter_opinfo {
	size_t sz;       /**< sizeof(struct iour_filter_opinfo), set by the caller */
	uint32_t nrules; /**< number of rules */
	uint32_t flags;  /**< IOUR_OPINFO_* */
	uint32_t
		default_verdict; /**< the verdict when no rule matches (explicit or the filter's) */
	uint32_t raw_cnt;        /**< instructions of the raw program, or 0 */
};

/**
 * @brief **iour_filter__opcode_info()** describes what a filter holds for
 *        one opcode.
 * @param f the filter.
 * @param opcode request opcode, 0..255.
 * @param info filled up to its `sz` (which the caller sets).
 * @return 0 on success; -ENOENT if the opcode is not filtered; -EINVAL if
 *         @p f or @p info is NULL, @p opcode > 255 or `info->sz` is
 *         smaller than the member after `sz`.
 * @since 1.0
 */
IOUR_API int iour_filter__opcode_info(const struct iour_filter *f, uint32_t opcode,
				      struct iour_filter_opinfo *info);

/** @brief Options of iour_filter__compile(). */
struct iour_compile_opts {
	size_t sz;      /**< sizeof(struct iour_compile_opts) */
	uint32_t flags; /**< none defined yet; must be 0 */
	/** Largest acceptable program, 1..4096; 0 means the kernel's limit
	 *  (4096). */
	uint32_t max_insns;
};
/** @brief The last field of struct iour_compile_opts, up to which the library reads
 *         it (the options discipline of common.h). */
#define iour_compile_opts__last_field max_insns

/** @brief Kinds of compiled programs (iour_prog__kind()). */
enum iour_prog_kind {
	/** A real filter: its verdict depends on the request. */
	IOUR_PROG_FILTER = 0,
	/** Every request of the opcode is allowed; no filter is needed (the
	 *  program is a single `ret #1`). */
	IOUR_PROG_ALWAYS_ALLOW = 1,
	/** Every request of the opcode is denied; a classic allow-list that
	 *  omits the opcode does the same (the program is a single
	 *  `ret #0`). */
	IOUR_PROG_ALWAYS_DENY = 2
};

/**
 * @brief **iour_filter__compile()** compiles one opcode's rules (or raw
 *        program) into a classic-BPF program for the running host.
 *
 * The output is deterministic: the same filter gives the same
 * instructions.  Every program passes iour_cbpf_validate() with the
 * io_uring rules.  Programs read the context with native-endian word
 * loads; constants for the network-order port and addresses are
 * converted for the host.  The compiler relies on the kernel zeroing the
 * two padding bytes after the connect port.
 *
 * Values, ranges and IPv4 prefixes of one field in consecutive
 * one-comparison rules are merged into the fewest ranges first.  This
 * function always returns one program: a deny-list above the limit fails
 * here with -IOUR_ERRNO__PROG_TOO_LARGE, while iour_policy__set_filter()
 * splits it across programs stacked for the opcode (the kernel runs them
 * all; a request runs only if every one allows).  Splitting keeps the
 * rules before and after the heaviest run of deny rules in every program
 * and spreads that run's entries over them, so it never applies to an
 * allow-list, which must stay in one program (iour_policy__prog_cnt(),
 * doc/design.md "Stacked filters").
 * @param f the filter.
 * @param opcode request opcode, 0..255.
 * @param opts options, or NULL.
 * @param out receives the program; release it with iour_prog__free().
 * @return 0 on success; -EINVAL if @p f or @p out is NULL, @p opcode >
 *         255 or @p opts is malformed (non-zero flags, max_insns above
 *         4096); -E2BIG if @p opts has unknown non-zero bytes; -ENOENT
 *         if the opcode is not filtered; -IOUR_ERRNO__PROG_TOO_LARGE if
 *         the program would exceed the instruction limit; -ENOMEM.
 * @since 1.0
 */
IOUR_API int iour_filter__compile(const struct iour_filter *f, uint32_t opcode,
				  const struct iour_compile_opts *opts, struct iour_prog **out);

/**
 * @brief **iour_prog__insns()** returns the program's instructions.
 * @param p the program.
 * @return the instructions, valid until iour_prog__free(@p p); NULL if
 *         @p p is NULL.
 * @since 1.0
 */
IOUR_API const struct iour_insn *iour_prog__insns(const struct iour_prog *p);

/**
 * @brief **iour_prog__insn_cnt()** returns the number of instructions.
 * @param p the program.
 * @return 1..4096; 0 if @p p is NULL.
 * @since 1.0
 */
IOUR_API size_t iour_prog__insn_cnt(const struct iour_prog *p);

/**
 * @brief **iour_prog__opcode()** returns the opcode the program filters.
 * @param p the program.
 * @return the opcode; UINT32_MAX if @p p is NULL.
 * @since 1.0
 */
IOUR_API uint32_t iour_prog__opcode(const struct iour_prog *p);

/**
 * @brief **iour_prog__kind()** tells whether the program is a real filter
 *        or a constant verdict.
 * @param p the program.
 * @return an enum iour_prog_kind value; #IOUR_PROG_FILTER if @p p is NULL.
 * @since 1.0
 */
IOUR_API uint32_t iour_prog__kind(const struct iour_prog *p);

/**
 * @brief **iour_prog__pdu_size()** returns the payload size to register the
 *        program with (`io_uring_bpf_filter.pdu_size`).
 * @param p the program.
 * @return 0 if the program reads no payload field, otherwise the opcode's
 *         payload size (12 for SOCKET, 24 for OPENAT, OPENAT2 and
 *         CONNECT); 0 if @p p is NULL.
 * @since 1.0
 */
IOUR_API uint32_t iour_prog__pdu_size(const struct iour_prog *p);

/**
 * @brief **iour_prog__free()** releases a program.
 * @param p the program; NULL is accepted and ignored.
 * @since 1.0
 */
IOUR_API void iour_prog__free(struct iour_prog *p);

#ifdef __cplusplus
}
#endif

#endif /* IOURING_RESTRICT_FILTER_H */
