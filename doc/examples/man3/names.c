/* The name tables: opcodes, register opcodes and SQE flags by name and
 * number, the kernel version that added each, and what a kernel has. */
#include <stdio.h>
#include <iouring_restrict/iouring_restrict.h>

static void kver(const char *what, int v)
{
	printf("%s since %d.%d\n", what, (v >> 16) & 0xff,
	       (v >> 8) & 0xff);
}

int main(void)
{
	uint32_t ops[256];
	int op, reg, flag, n;

	op = iour_opcode_from_name("OPENAT");
	reg = iour_register_op_from_name("REGISTER_FILES");
	flag = iour_sqe_flag_from_name("FIXED_FILE");
	if (op < 0 || reg < 0 || flag < 0)
		return 1;
	kver(iour_opcode_name(op), iour_opcode_since(op));
	kver(iour_register_op_name(reg), iour_register_op_since(reg));
	kver(iour_sqe_flag_name(flag), iour_sqe_flag_since(flag));

	/* what Linux 5.10 knows */
	printf("5.10: opcodes 0..%d, register opcodes 0..%d, SQE flags 0x%x\n",
	       iour_opcode_last(IOUR_KVER(5, 10)),
	       iour_register_op_last(IOUR_KVER(5, 10)),
	       iour_sqe_flags_up_to(IOUR_KVER(5, 10)));
	n = iour_opcodes_up_to(IOUR_KVER(5, 10), ops, 256);
	printf("%d opcodes, the last %s\n", n,
	       iour_opcode_name(ops[n - 1]));
	n = iour_register_ops_up_to(IOUR_KVER(5, 10), ops, 256);
	printf("%d register opcodes\n", n);

	/* a misspelt name */
	printf("OPENATT: did you mean %s?\n",
	       iour_name_suggest(IOUR_NAME_OPCODE, "OPENATT"));

	/* a tracepoint's ASYNC bit on OPENAT may be the kernel's own */
	printf("OPENAT may force async: %s\n",
	       iour_opcode_forces_async((uint32_t)op) == 1 ? "yes" : "no");
	return 0;
}
