/* SPDX-License-Identifier: MIT */
/**
 * @file names.h
 * @brief Name tables of the kernel's io_uring interface: request opcodes
 *        (`IORING_OP_*`), register opcodes (`IORING_REGISTER_*`) and SQE
 *        flags (`IOSQE_*`), each with the kernel version that added it.
 *
 * The tables cover every value up to the newest kernel the library knows
 * (Linux 7.2: 65 request opcodes, 38 register opcodes, 7 SQE flags).  They
 * are data about kernel releases, derived from the kernel's UAPI history;
 * the kernel the program actually runs on may differ (backports, config
 * options), so always take the run-time limits from the probe module.
 *
 * Names.  Every lookup by name is case-insensitive and accepts the kernel's
 * full name or the short form without its prefix:
 * - request opcodes: "IORING_OP_READV" or "READV";
 * - register opcodes: "IORING_REGISTER_BUFFERS", "REGISTER_BUFFERS" or
 *   "BUFFERS"; "IORING_UNREGISTER_BUFFERS" or "UNREGISTER_BUFFERS"
 *   (the prefix dropped in the shortest form is "REGISTER_", so names that
 *   begin with "UNREGISTER_" keep it);
 * - SQE flags: "IOSQE_ASYNC" or "ASYNC".
 *
 * The functions that return a name return the short form ("READV",
 * "REGISTER_BUFFERS", "ASYNC"): a static string, valid for the life of the
 * program.  All functions in this header are thread-safe and never call
 * the kernel.
 */
#ifndef IOURING_RESTRICT_NAMES_H
#define IOURING_RESTRICT_NAMES_H

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @brief Encodes a kernel version for the functions of this header:
 *        `(maj << 16) | (min << 8)`, the layout of the kernel's
 *        `KERNEL_VERSION(maj, min, 0)`.  Example: `IOUR_KVER(6, 18)`.
 * @param maj major kernel version (e.g. 6)
 * @param min minor kernel version (e.g. 18)
 */
#define IOUR_KVER(maj, min) ((((uint32_t)(maj)) << 16) | (((uint32_t)(min)) << 8))

/**
 * @brief io_uring request opcodes (`enum io_uring_op`), with the kernel's
 *        numbers.  The comment gives the kernel version that added each.
 */
enum iour_op {
	IOUR_OP_NOP = 0,               /**< 5.1 */
	IOUR_OP_READV = 1,             /**< 5.1 */
	IOUR_OP_WRITEV = 2,            /**< 5.1 */
	IOUR_OP_FSYNC = 3,             /**< 5.1 */
	IOUR_OP_READ_FIXED = 4,        /**< 5.1 */
	IOUR_OP_WRITE_FIXED = 5,       /**< 5.1 */
	IOUR_OP_POLL_ADD = 6,          /**< 5.1 */
	IOUR_OP_POLL_REMOVE = 7,       /**< 5.1 */
	IOUR_OP_SYNC_FILE_RANGE = 8,   /**< 5.2 */
	IOUR_OP_SENDMSG = 9,           /**< 5.3 */
	IOUR_OP_RECVMSG = 10,          /**< 5.3 */
	IOUR_OP_TIMEOUT = 11,          /**< 5.4 */
	IOUR_OP_TIMEOUT_REMOVE = 12,   /**< 5.5 */
	IOUR_OP_ACCEPT = 13,           /**< 5.5 */
	IOUR_OP_ASYNC_CANCEL = 14,     /**< 5.5 */
	IOUR_OP_LINK_TIMEOUT = 15,     /**< 5.5 */
	IOUR_OP_CONNECT = 16,          /**< 5.5 */
	IOUR_OP_FALLOCATE = 17,        /**< 5.6 */
	IOUR_OP_OPENAT = 18,           /**< 5.6 */
	IOUR_OP_CLOSE = 19,            /**< 5.6 */
	IOUR_OP_FILES_UPDATE = 20,     /**< 5.6 */
	IOUR_OP_STATX = 21,            /**< 5.6 */
	IOUR_OP_READ = 22,             /**< 5.6 */
	IOUR_OP_WRITE = 23,            /**< 5.6 */
	IOUR_OP_FADVISE = 24,          /**< 5.6 */
	IOUR_OP_MADVISE = 25,          /**< 5.6 */
	IOUR_OP_SEND = 26,             /**< 5.6 */
	IOUR_OP_RECV = 27,             /**< 5.6 */
	IOUR_OP_OPENAT2 = 28,          /**< 5.6 */
	IOUR_OP_EPOLL_CTL = 29,        /**< 5.6 */
	IOUR_OP_SPLICE = 30,           /**< 5.7 */
	IOUR_OP_PROVIDE_BUFFERS = 31,  /**< 5.7 */
	IOUR_OP_REMOVE_BUFFERS = 32,   /**< 5.7 */
	IOUR_OP_TEE = 33,              /**< 5.8 */
	IOUR_OP_SHUTDOWN = 34,         /**< 5.11 */
	IOUR_OP_RENAMEAT = 35,         /**< 5.11 */
	IOUR_OP_UNLINKAT = 36,         /**< 5.11 */
	IOUR_OP_MKDIRAT = 37,          /**< 5.15 */
	IOUR_OP_SYMLINKAT = 38,        /**< 5.15 */
	IOUR_OP_LINKAT = 39,           /**< 5.15 */
	IOUR_OP_MSG_RING = 40,         /**< 5.18 */
	IOUR_OP_FSETXATTR = 41,        /**< 5.19 */
	IOUR_OP_SETXATTR = 42,         /**< 5.19 */
	IOUR_OP_FGETXATTR = 43,        /**< 5.19 */
	IOUR_OP_GETXATTR = 44,         /**< 5.19 */
	IOUR_OP_SOCKET = 45,           /**< 5.19 */
	IOUR_OP_URING_CMD = 46,        /**< 5.19 */
	IOUR_OP_SEND_ZC = 47,          /**< 6.0 */
	IOUR_OP_SENDMSG_ZC = 48,       /**< 6.1 */
	IOUR_OP_READ_MULTISHOT = 49,   /**< 6.7 */
	IOUR_OP_WAITID = 50,           /**< 6.7 */
	IOUR_OP_FUTEX_WAIT = 51,       /**< 6.7 */
	IOUR_OP_FUTEX_WAKE = 52,       /**< 6.7 */
	IOUR_OP_FUTEX_WAITV = 53,      /**< 6.7 */
	IOUR_OP_FIXED_FD_INSTALL = 54, /**< 6.8 */
	IOUR_OP_FTRUNCATE = 55,        /**< 6.9 */
	IOUR_OP_BIND = 56,             /**< 6.11 */
	IOUR_OP_LISTEN = 57,           /**< 6.11 */
	IOUR_OP_RECV_ZC = 58,          /**< 6.15 */
	IOUR_OP_EPOLL_WAIT = 59,       /**< 6.15 */
	IOUR_OP_READV_FIXED = 60,      /**< 6.15 */
	IOUR_OP_WRITEV_FIXED = 61,     /**< 6.15 */
	IOUR_OP_PIPE = 62,             /**< 6.16 */
	IOUR_OP_NOP128 = 63,           /**< 6.19 */
	IOUR_OP_URING_CMD128 = 64,     /**< 6.19 */
	/** Number of request opcodes the library knows (`IORING_OP_LAST` of
	 *  Linux 6.19 to 7.2); not an opcode. */
	IOUR_OP__COUNT = 65
};

/**
 * @brief io_uring register opcodes (`enum io_uring_register_op`), with the
 *        kernel's numbers.  The comment gives the kernel version that
 *        added each.
 */
enum iour_register_op {
	IOUR_REGISTER_BUFFERS = 0,           /**< 5.1 */
	IOUR_UNREGISTER_BUFFERS = 1,         /**< 5.1 */
	IOUR_REGISTER_FILES = 2,             /**< 5.1 */
	IOUR_UNREGISTER_FILES = 3,           /**< 5.1 */
	IOUR_REGISTER_EVENTFD = 4,           /**< 5.2 */
	IOUR_UNREGISTER_EVENTFD = 5,         /**< 5.2 */
	IOUR_REGISTER_FILES_UPDATE = 6,      /**< 5.5 */
	IOUR_REGISTER_EVENTFD_ASYNC = 7,     /**< 5.6 */
	IOUR_REGISTER_PROBE = 8,             /**< 5.6 */
	IOUR_REGISTER_PERSONALITY = 9,       /**< 5.6 */
	IOUR_UNREGISTER_PERSONALITY = 10,    /**< 5.6 */
	IOUR_REGISTER_RESTRICTIONS = 11,     /**< 5.10 (ring); 7.0 (task, fd -1) */
	IOUR_REGISTER_ENABLE_RINGS = 12,     /**< 5.10 */
	IOUR_REGISTER_FILES2 = 13,           /**< 5.13 */
	IOUR_REGISTER_FILES_UPDATE2 = 14,    /**< 5.13 */
	IOUR_REGISTER_BUFFERS2 = 15,         /**< 5.13 */
	IOUR_REGISTER_BUFFERS_UPDATE = 16,   /**< 5.13 */
	IOUR_REGISTER_IOWQ_AFF = 17,         /**< 5.14 */
	IOUR_UNREGISTER_IOWQ_AFF = 18,       /**< 5.14 */
	IOUR_REGISTER_IOWQ_MAX_WORKERS = 19, /**< 5.15 */
	IOUR_REGISTER_RING_FDS = 20,         /**< 5.18 */
	IOUR_UNREGISTER_RING_FDS = 21,       /**< 5.18 */
	IOUR_REGISTER_PBUF_RING = 22,        /**< 5.19 */
	IOUR_UNREGISTER_PBUF_RING = 23,      /**< 5.19 */
	IOUR_REGISTER_SYNC_CANCEL = 24,      /**< 6.0 */
	IOUR_REGISTER_FILE_ALLOC_RANGE = 25, /**< 6.0 */
	IOUR_REGISTER_PBUF_STATUS = 26,      /**< 6.8 */
	IOUR_REGISTER_NAPI = 27,             /**< 6.9 */
	IOUR_UNREGISTER_NAPI = 28,           /**< 6.9 */
	IOUR_REGISTER_CLOCK = 29,            /**< 6.12 */
	IOUR_REGISTER_CLONE_BUFFERS = 30,    /**< 6.12 */
	IOUR_REGISTER_SEND_MSG_RING = 31,    /**< 6.13 */
	IOUR_REGISTER_ZCRX_IFQ = 32,         /**< 6.15 (number reserved from 6.13) */
	IOUR_REGISTER_RESIZE_RINGS = 33,     /**< 6.13 */
	IOUR_REGISTER_MEM_REGION = 34,       /**< 6.13 */
	IOUR_REGISTER_QUERY = 35,            /**< 6.18 */
	IOUR_REGISTER_ZCRX_CTRL = 36,        /**< 6.19 */
	IOUR_REGISTER_BPF_FILTER = 37,       /**< 7.0 */
	/** Number of register opcodes the library knows
	 *  (`IORING_REGISTER_LAST` of Linux 7.0 to 7.2); not an opcode. */
	IOUR_REGISTER__COUNT = 38
};

/** @brief SQE flags (`IOSQE_*`, the `flags` byte of a submission entry). */
enum iour_sqe_flag {
	IOUR_SQE_FIXED_FILE = 0x01,       /**< 5.1 */
	IOUR_SQE_IO_DRAIN = 0x02,         /**< 5.2 */
	IOUR_SQE_IO_LINK = 0x04,          /**< 5.3 */
	IOUR_SQE_IO_HARDLINK = 0x08,      /**< 5.5 */
	IOUR_SQE_ASYNC = 0x10,            /**< 5.6 */
	IOUR_SQE_BUFFER_SELECT = 0x20,    /**< 5.7 */
	IOUR_SQE_CQE_SKIP_SUCCESS = 0x40, /**< 5.17 */
	/** Every flag the library knows (the kernel's `SQE_VALID_FLAGS` of
	 *  5.17 and later); not a flag. */
	IOUR_SQE__VALID = 0x7f
};

/** @name Request opcodes
 *  @{ */

/**
 * @brief **iour_opcode_from_name()** looks a request opcode up by name.
 * @param name "IORING_OP_READV" or "READV", in any case.
 * @return the opcode (0 .. IOUR_OP__COUNT - 1); -EINVAL if @p name is
 *         NULL; -ENOENT if no opcode has that name.
 * @since 1.0
 */
IOUR_API int iour_opcode_from_name(const char *name);

/**
 * @brief **iour_opcode_name()** gives the short name of a request opcode.
 * @param op the opcode (enum iour_op).
 * @return a static string such as "READV"; NULL if the library does not
 *         know @p op (it is IOUR_OP__COUNT or larger).
 * @since 1.0
 */
IOUR_API const char *iour_opcode_name(uint32_t op);

/**
 * @brief **iour_opcode_since()** gives the kernel version that added a
 *        request opcode.
 * @param op the opcode (enum iour_op).
 * @return the version as IOUR_KVER(maj, min); -ENOENT if the library does
 *         not know @p op.
 * @since 1.0
 */
IOUR_API int iour_opcode_since(uint32_t op);

/**
 * @brief **iour_opcode_last()** gives `IORING_OP_LAST` of a kernel
 *        version: the number of request opcodes that version knows, all
 *        numbered below it.
 *
 * Derived from the table of this header (the version that added each
 * opcode); the kernel the program runs on reports its real value through
 * the probe module, which is what restriction sets must be clamped to.
 * @param kver kernel version, IOUR_KVER(maj, min); the low byte (patch
 *        level) is ignored.
 * @return the count, >= 0 (0 for versions before 5.1; IOUR_OP__COUNT for
 *         any version newer than the newest the library knows).  Never
 *         fails.
 * @since 1.0
 */
IOUR_API int iour_opcode_last(uint32_t kver);

/**
 * @brief **iour_opcodes_up_to()** lists the request opcodes a kernel
 *        version knows, in increasing order.
 *
 * Two-call sizing: call with @p ops NULL and @p cap 0 to learn the count.
 * @param kver kernel version, IOUR_KVER(maj, min).
 * @param ops destination array, or NULL to only count.
 * @param cap number of elements @p ops holds.
 * @return the number of opcodes (written to @p ops when it is not NULL);
 *         -EINVAL if @p ops is NULL and @p cap is not 0; -ERANGE if
 *         @p cap is smaller than the count (nothing is written).
 * @since 1.0
 */
IOUR_API int iour_opcodes_up_to(uint32_t kver, uint32_t *ops, size_t cap);

/**
 * @brief **iour_opcode_forces_async()** tells whether the kernel's
 *        preparation of a request opcode may mark the request to run in
 *        the io-wq (its internal force-async flag).
 *
 * That flag has bit 4, the bit of `IOSQE_ASYNC`, in the request flags the
 * `io_uring_submit_req` tracepoint prints and in the `sqe_flags` of a
 * filter's context (doc/kernel.md 4.3): there a request of such an opcode
 * may show `ASYNC` although its SQE did not carry it, so neither tells
 * whether the program asked for `ASYNC`.  The SQE gate of a restriction
 * set sees the flags as submitted.  Opcodes whose preparation always
 * blocks (FSYNC, STATX, the path and xattr operations, ...) set it every
 * time; OPENAT and OPENAT2 with `O_CREAT`, `O_TRUNC` or `O_TMPFILE`, and
 * FADVISE with most advice values, only then.
 * @param op the opcode (enum iour_op).
 * @return 1 if it may, 0 if not; -ENOENT if the library does not know
 *         @p op.
 * @since 1.1
 */
IOUR_API int iour_opcode_forces_async(uint32_t op);

/** @} */

/** @name Register opcodes
 *  @{ */

/**
 * @brief **iour_register_op_from_name()** looks a register opcode up by
 *        name.
 * @param name "IORING_REGISTER_BUFFERS", "REGISTER_BUFFERS" or "BUFFERS";
 *        "IORING_UNREGISTER_FILES" or "UNREGISTER_FILES"; any case.
 * @return the opcode (0 .. IOUR_REGISTER__COUNT - 1); -EINVAL if @p name
 *         is NULL; -ENOENT if no register opcode has that name.
 * @since 1.0
 */
IOUR_API int iour_register_op_from_name(const char *name);

/**
 * @brief **iour_register_op_name()** gives the name of a register opcode
 *        without the "IORING_" prefix.
 * @param op the register opcode (enum iour_register_op).
 * @return a static string such as "REGISTER_BUFFERS" or
 *         "UNREGISTER_FILES"; NULL if the library does not know @p op.
 * @since 1.0
 */
IOUR_API const char *iour_register_op_name(uint32_t op);

/**
 * @brief **iour_register_op_since()** gives the kernel version that added
 *        a register opcode.
 * @param op the register opcode (enum iour_register_op).
 * @return the version as IOUR_KVER(maj, min); -ENOENT if the library does
 *         not know @p op.
 * @since 1.0
 */
IOUR_API int iour_register_op_since(uint32_t op);

/**
 * @brief **iour_register_op_last()** gives `IORING_REGISTER_LAST` of a
 *        kernel version.
 *
 * Derived from the table of this header: one more than the highest
 * register opcode the version has.  Register numbers were not always
 * assigned in order: 32 (ZCRX_IFQ, 6.15) was reserved while 33 and 34
 * came in 6.13, so for 6.13 and 6.14 the result (35) counts a number that
 * the kernel reserved but did not implement; the kernel accepts such a
 * number in a restriction set, because it only checks it against its
 * `IORING_REGISTER_LAST`.  The real value of the running kernel comes from
 * the probe module.
 * @param kver kernel version, IOUR_KVER(maj, min); the patch byte is
 *        ignored.
 * @return the value, >= 0 (0 for versions before 5.1; IOUR_REGISTER__COUNT
 *         for versions newer than the newest the library knows).  Never
 *         fails.
 * @since 1.0
 */
IOUR_API int iour_register_op_last(uint32_t kver);

/**
 * @brief **iour_register_ops_up_to()** lists the register opcodes a kernel
 *        version has, in increasing order (reserved numbers are left out).
 *
 * Two-call sizing: call with @p ops NULL and @p cap 0 to learn the count.
 * @param kver kernel version, IOUR_KVER(maj, min).
 * @param ops destination array, or NULL to only count.
 * @param cap number of elements @p ops holds.
 * @return the number of register opcodes; -EINVAL if @p ops is NULL and
 *         @p cap is not 0; -ERANGE if @p cap is smaller than the count
 *         (nothing is written).
 * @since 1.0
 */
IOUR_API int iour_register_ops_up_to(uint32_t kver, uint32_t *ops, size_t cap);

/** @} */

/** @name SQE flags
 *  @{ */

/**
 * @brief **iour_sqe_flag_from_name()** looks an SQE flag up by name.
 * @param name "IOSQE_ASYNC" or "ASYNC", in any case.
 * @return the flag's bit value (e.g. 0x10 for ASYNC); -EINVAL if @p name
 *         is NULL; -ENOENT if no flag has that name.
 * @since 1.0
 */
IOUR_API int iour_sqe_flag_from_name(const char *name);

/**
 * @brief **iour_sqe_flag_name()** gives the short name of one SQE flag.
 * @param flag the flag's bit value (exactly one bit of enum iour_sqe_flag).
 * @return a static string such as "ASYNC"; NULL if @p flag is not exactly
 *         one bit of IOUR_SQE__VALID.
 * @since 1.0
 */
IOUR_API const char *iour_sqe_flag_name(uint32_t flag);

/**
 * @brief **iour_sqe_flag_since()** gives the kernel version that added an
 *        SQE flag.
 * @param flag the flag's bit value (exactly one bit of enum iour_sqe_flag).
 * @return the version as IOUR_KVER(maj, min); -ENOENT if @p flag is not
 *         exactly one bit of IOUR_SQE__VALID.
 * @since 1.0
 */
IOUR_API int iour_sqe_flag_since(uint32_t flag);

/**
 * @brief **iour_sqe_flags_up_to()** gives the mask of SQE flags a kernel
 *        version accepts (its `SQE_VALID_FLAGS`).
 * @param kver kernel version, IOUR_KVER(maj, min).
 * @return the mask (0 for versions before 5.1, IOUR_SQE__VALID from 5.17
 *         on).  Never fails.
 * @since 1.0
 */
IOUR_API int iour_sqe_flags_up_to(uint32_t kver);

/** @} */

/** @name Suggestions
 *  @{ */

/** @brief The name tables iour_name_suggest() searches. */
enum iour_name_kind {
	IOUR_NAME_OPCODE = 0,      /**< request opcodes (IORING_OP_*) */
	IOUR_NAME_REGISTER_OP = 1, /**< register opcodes (IORING_REGISTER_*) */
	IOUR_NAME_SQE_FLAG = 2,    /**< SQE flags (IOSQE_*) */
};

/**
 * @brief **iour_name_suggest()** the valid name nearest to a name that
 *        was not found, for an error message ("did you mean OPENAT?").
 *
 * Case and the usual prefix (`IORING_OP_`, `IORING_`, `IOSQE_`) do not
 * count; a register opcode also matches without its `REGISTER_`.  A name
 * is suggested only when it is a few edits away (at most a third of the
 * name's length, at most 3), so a name far from every entry gets none.
 * @param kind which table (enum iour_name_kind).
 * @param name the name that was not found.
 * @return the suggested name as iour_opcode_name(),
 *         iour_register_op_name() or iour_sqe_flag_name() spell it
 *         (static storage, without prefix); NULL if @p name is NULL or
 *         exactly a valid name, @p kind is unknown, or nothing is near.
 * @since 1.1
 */
IOUR_API const char *iour_name_suggest(uint32_t kind, const char *name);

/** @} */

#ifdef __cplusplus
}
#endif

#endif /* IOURING_RESTRICT_NAMES_H */
