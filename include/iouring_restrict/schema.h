/* SPDX-License-Identifier: MIT */
/**
 * @file schema.h
 * @brief The request schema, read-only: which request opcodes the kernel
 *        filters and with what payload, the fields a filter rule can
 *        test, and the named constants a rule may use for them.
 *
 * The library keeps one table of these (doc/design.md, "Adding a
 * filterable opcode or field"); its compiler, policy files, disassembler
 * and context builders read it, and so can programs that want to list
 * fields or accept field names and constants from their users (the
 * iour-restrict tool's rule language does).  Rows are listed in a fixed
 * order; an index is stable within a library version only: look rows up
 * by opcode, id or name.  Every string is static storage.  The functions
 * are thread-safe and never allocate.
 */
#ifndef IOURING_RESTRICT_SCHEMA_H
#define IOURING_RESTRICT_SCHEMA_H

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

/** @name Payloads
 *  An opcode the kernel filters has a payload: the bytes after the
 *  context's header that hold its arguments (doc/kernel.md 4.3).
 *  @{ */

/** @brief What iour_payload_get() tells about a filtered opcode. */
struct iour_payload_info {
	size_t sz;         /**< sizeof(struct iour_payload_info), set by the caller */
	const char *group; /**< its fields' dotted prefix: "socket" for socket.family */
	uint32_t opcode;   /**< IOUR_OP_* */
	uint32_t pdu_size; /**< the payload's size in bytes, as the kernel gives it */
	uint32_t level;    /**< the first IOUR_LEVEL_* whose kernels filter it */
	uint32_t since;    /**< that level's kernel, as IOUR_KVER(maj, min) */
};

/**
 * @brief **iour_payload_count()** returns the number of opcodes the kernel
 *        filters with a payload.
 * @return the count (> 0).
 * @since 1.1
 */
IOUR_API int iour_payload_count(void);

/**
 * @brief **iour_payload_get()** describes one filtered opcode.
 * @param idx 0 .. iour_payload_count() - 1.
 * @param info filled up to its `sz`.
 * @return 0 on success; -EINVAL if @p info is NULL or `info->sz` is smaller
 *         than the struct up to `group` or larger than 4096; -ENOENT if
 *         @p idx is out of range.
 * @since 1.1
 */
IOUR_API int iour_payload_get(size_t idx, struct iour_payload_info *info);

/**
 * @brief **iour_payload_find()** finds the row of an opcode.
 * @param opcode the request opcode.
 * @return its index for iour_payload_get(); -ENOENT if the kernel does not
 *         filter @p opcode with a payload (its filters see the header
 *         fields only: user_data and sqe_flags).
 * @since 1.1
 */
IOUR_API int iour_payload_find(uint32_t opcode);
/** @} */

/** @name Fields
 *  What a comparison (struct iour_cmp) reads: a field of every opcode
 *  (user_data, sqe_flags) or of one payload group.
 *  @{ */

/** @brief How a field's value is written (struct iour_field_info). */
enum iour_field_kind {
	IOUR_FIELD_KIND_NUM = 0,   /**< a number; one value at a time */
	IOUR_FIELD_KIND_BITS = 1,  /**< bit flags: values may be joined with '|' */
	IOUR_FIELD_KIND_ADDR4 = 2, /**< an IPv4 address, a number in host order */
	IOUR_FIELD_KIND_ADDR6 = 3, /**< an IPv6 address: iour_cmp's 16-byte form */
};

/** @brief The byte order of a field's slot in the filter context. */
enum iour_field_order {
	IOUR_FIELD_ORDER_HOST = 0, /**< the CPU's */
	IOUR_FIELD_ORDER_NET = 1,  /**< network order: stored as in memory */
};

/** @brief What iour_field_get() tells about a field. */
struct iour_field_info {
	size_t sz;          /**< sizeof(struct iour_field_info), set by the caller */
	const char *name;   /**< dotted, as rules write it: "socket.family", "user_data" */
	const char *group;  /**< the payload group holding it; "" for every opcode */
	const char *prefix; /**< its constants' namespace ("AF_"); NULL: numbers only */
	uint64_t mask;      /**< the slot's bits that are the field; 0: all of them */
	uint64_t valid;     /**< the bits a value may have; 0: not a number (addr6) */
	uint32_t id;        /**< IOUR_FIELD_* */
	uint32_t kind;      /**< enum iour_field_kind */
	uint32_t offset;    /**< byte offset of its slot in the filter context */
	uint32_t size;      /**< bytes of the slot: 1, 2, 4, 8 or 16 */
	uint32_t order;     /**< enum iour_field_order */
};

/**
 * @brief **iour_field_count()** returns the number of fields.
 * @return the count (> 0).
 * @since 1.1
 */
IOUR_API int iour_field_count(void);

/**
 * @brief **iour_field_get()** describes one field.
 * @param idx 0 .. iour_field_count() - 1.
 * @param info filled up to its `sz`.
 * @return 0 on success; -EINVAL if @p info is NULL or `info->sz` is smaller
 *         than the struct up to `name` or larger than 4096; -ENOENT if
 *         @p idx is out of range.
 * @since 1.1
 */
IOUR_API int iour_field_get(size_t idx, struct iour_field_info *info);

/**
 * @brief **iour_field_find()** finds a field by its dotted name.
 * @param name "socket.family", "user_data"; exact, case-sensitive.
 * @return its index for iour_field_get(); -EINVAL if @p name is NULL;
 *         -ENOENT if no field has that name.
 * @since 1.1
 */
IOUR_API int iour_field_find(const char *name);

/**
 * @brief **iour_field_index()** finds a field by its id.
 * @param id IOUR_FIELD_*.
 * @return its index for iour_field_get(); -ENOENT if the library does not
 *         know @p id.
 * @since 1.1
 */
IOUR_API int iour_field_index(uint32_t id);

/**
 * @brief **iour_field_applies()** tells whether a rule on an opcode may
 *        test a field.
 * @param id IOUR_FIELD_*.
 * @param opcode the request opcode.
 * @return 1 if the opcode's filter context holds the field (a field of
 *         every opcode, or one of the opcode's payload group), 0 if not;
 *         -ENOENT if the library does not know @p id.
 * @since 1.1
 */
IOUR_API int iour_field_applies(uint32_t id, uint32_t opcode);
/** @} */

/** @name Named constants
 *  The names a rule may write for a field's value.  A field takes the
 *  constants whose name starts with its prefix (its namespace): family
 *  takes AF_INET, not SOCK_STREAM.  Several names may share a value
 *  (AF_UNIX, AF_LOCAL); the first is the one the library writes.
 *  @{ */

/** @brief What iour_const_get() tells about a named constant. */
struct iour_const_info {
	size_t sz;        /**< sizeof(struct iour_const_info), set by the caller */
	const char *name; /**< "AF_INET" */
	const char *ns;   /**< its namespace, the prefix of the fields that take it ("AF_") */
	uint64_t value;   /**< as the kernel reads it on this architecture */
	uint32_t since;   /**< the kernel that added it, IOUR_KVER(maj, min);
			       0: older than io_uring, so every kernel has it */
};

/**
 * @brief **iour_const_count()** returns the number of named constants.
 * @return the count (> 0).
 * @since 1.1
 */
IOUR_API int iour_const_count(void);

/**
 * @brief **iour_const_get()** describes one named constant.
 * @param idx 0 .. iour_const_count() - 1.
 * @param info filled up to its `sz`.
 * @return 0 on success; -EINVAL if @p info is NULL or `info->sz` is smaller
 *         than the struct up to `name` or larger than 4096; -ENOENT if
 *         @p idx is out of range.
 * @since 1.1
 */
IOUR_API int iour_const_get(size_t idx, struct iour_const_info *info);

/**
 * @brief **iour_const_find()** finds a named constant.
 * @param name "AF_INET"; ASCII case is ignored ("af_inet"), as in policy
 *        files and the tool's rules.
 * @return its index for iour_const_get(); -EINVAL if @p name is NULL;
 *         -ENOENT if the library knows no constant of that name.
 * @since 1.1
 */
IOUR_API int iour_const_find(const char *name);
/** @} */

#ifdef __cplusplus
}
#endif

#endif /* IOURING_RESTRICT_SCHEMA_H */
