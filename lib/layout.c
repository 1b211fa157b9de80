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

static const struct iour_layout_field layout_table[] = {
	IOUR_LAYOUT_LIST(LAYOUT_STRUCT, LAYOUT_FIELD){ .type = NULL, .field = NULL },
};

/* Documented in include/iouring_restrict/layout.h */
const struct iour_layout_field *iour_abi_layout(size_t *cnt)
{
	if (cnt)
		*cnt = sizeof(layout_table) / sizeof(layout_table[0]) - 1;
	return layout_table;
}
