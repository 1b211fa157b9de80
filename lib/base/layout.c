/* SPDX-License-Identifier: MIT */
/* The layout table of the public structs (include/iouring_restrict/layout.h). */
#include <stdalign.h>
#include <stddef.h>

#include "iouring_restrict/iouring_restrict.h"
#include "layout_list.h"

#define LAYOUT_STRUCT(T)                        \
	{ .type = #T,                           \
	  .field = "",                          \
	  .offset = 0,                          \
	  .size = (uint32_t)sizeof(struct T),   \
	  .align = (uint32_t)alignof(struct T), \
	  .resv = 0 },
#define LAYOUT_FIELD(T, M)                              \
	{ .type = #T,                                   \
	  .field = #M,                                  \
	  .offset = (uint32_t)offsetof(struct T, M),    \
	  .size = (uint32_t)sizeof(((struct T *)0)->M), \
	  .align = 0,                                   \
	  .resv = 0 },

/* The size of a pointer member (struct iour_ring_report *report, ...) is
 * the pointer's size on purpose: that is the member's layout. */
/* NOLINTBEGIN(bugprone-sizeof-expression) */
static const struct iour_layout_field layout_table[] = {
	IOUR_LAYOUT_LIST(LAYOUT_STRUCT, LAYOUT_FIELD) /* the end */
	{ .type = NULL, .field = NULL },
};
/* NOLINTEND(bugprone-sizeof-expression) */

/* Documented in include/iouring_restrict/layout.h */
const struct iour_layout_field *iour_abi_layout(size_t *cnt)
{
	if (cnt)
		*cnt = sizeof(layout_table) / sizeof(layout_table[0]) - 1;
	return layout_table;
}
