/* SPDX-License-Identifier: MIT */
/*
 * Prints the library's name and schema tables, one row a line, for
 * scripts/gen-bindings.py (make generate): request opcodes, register
 * opcodes and SQE flags (lib/base/names.c), fields (lib/base/schema.def).  Built
 * against the static library of the build tree, with the same flags, so
 * that a test build's extra schema rows show here too (doc/design.md).
 *
 *   op ID NAME | reg ID NAME | sqe BIT NAME | field ID DOTTED.NAME
 */
#include <stdio.h>

#include "base/schema.h"
#include "iouring_restrict/iouring_restrict.h"

int main(void)
{
	const struct iour__schema_field *fl;
	int i, n;

	n = iour_opcode_last(UINT32_MAX);
	for (i = 0; i < n; i++)
		printf("op %d %s\n", i, iour_opcode_name((uint32_t)i));
	n = iour_register_op_last(UINT32_MAX);
	for (i = 0; i < n; i++)
		printf("reg %d %s\n", i, iour_register_op_name((uint32_t)i));
	for (i = 0; i < 32; i++)
		if (iour_sqe_flag_name(1U << i))
			printf("sqe %u %s\n", 1U << i, iour_sqe_flag_name(1U << i));
	for (i = 0; (fl = iour__schema_field_at((size_t)i)); i++)
		printf("field %u %s\n", fl->id, fl->name);
	return 0;
}
