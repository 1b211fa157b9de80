/* SPDX-License-Identifier: MIT */
/**
 * @file layout.h
 * @brief The layout of every public struct, as the library was built:
 *        for bindings (Python ctypes, Rust FFI) that declare the structs
 *        themselves and check their copy against the library at load time.
 */
#ifndef IOURING_RESTRICT_LAYOUT_H
#define IOURING_RESTRICT_LAYOUT_H

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @brief One row of the layout table: either a struct (@c field is the
 *        empty string) or one member of it.
 *
 * The table lists every struct with a body in the public headers, each as
 * one struct row followed by one row per member in declaration order.
 */
struct iour_layout_field {
	/** The struct's tag without `struct`, e.g. "iour_ring_report". */
	const char *type;
	/** The member's name; "" on the struct's own row (never NULL). */
	const char *field;
	/** offsetof() of the member; 0 on the struct's own row. */
	uint32_t offset;
	/** sizeof() of the member (of the whole array for an array member);
	    sizeof() of the struct on the struct's own row. */
	uint32_t size;
	/** _Alignof() of the struct on the struct's own row; 0 on member
	    rows. */
	uint32_t align;
	/** Reserved; always 0. */
	uint32_t resv;
};

/**
 * @brief **iour_abi_layout()** returns the table of the public structs'
 *        layouts (sizes, alignments, member offsets and sizes) as compiled
 *        into the library.  The table is static: never freed, never
 *        changed; thread-safe.
 * @param cnt if not NULL, receives the number of rows (the terminating
 *        row not counted).
 * @return the first row; the table ends with a row whose @c type is NULL.
 *         Never NULL.  No error is possible.
 * @since 1.1
 */
IOUR_API const struct iour_layout_field *iour_abi_layout(size_t *cnt);

#ifdef __cplusplus
}
#endif

#endif /* IOURING_RESTRICT_LAYOUT_H */
