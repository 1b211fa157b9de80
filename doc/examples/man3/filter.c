/* Argument rules for SOCKET (TCP over IPv4 only), compiled to the cBPF
 * program the kernel would run for each SOCKET request (Linux 7.0+). */
#include <stdio.h>
#include <sys/socket.h>
#include <iouring_restrict/iouring_restrict.h>

int main(void)
{
	struct iour_cmp tcp4[2] = {
		{ .sz = sizeof(struct iour_cmp),
		  .field = IOUR_FIELD_SOCKET_FAMILY,
		  .op = IOUR_CMP_EQ,
		  .value = AF_INET },
		{ .sz = sizeof(struct iour_cmp),
		  .field = IOUR_FIELD_SOCKET_TYPE,
		  .op = IOUR_CMP_EQ,
		  .value = SOCK_STREAM },
	};
	struct iour_insn deny_all[1] = { { 0x06, 0, 0,
					   0 } }; /* BPF_RET|BPF_K 0 */
	IOUR_OPTS(iour_filter_opinfo, info);
	struct iour_filter *f, *copy;
	struct iour_prog *prog;
	uint32_t ops[8];
	int n, rc;

	if (iour_filter__new(NULL, &f))
		return 1;
	rc = iour_filter__add_rule(f, IOUR_OP_SOCKET, IOUR_ALLOW, tcp4,
				   2);
	rc = rc ? rc :
		  iour_filter__set_default(f, IOUR_OP_SOCKET,
					   IOUR_DENY);
	rc = rc ? rc :
		  iour_filter__set_raw(f, IOUR_OP_OPENAT, deny_all, 1);
	rc = rc ? rc : iour_filter__dup(f, &copy);
	if (rc) {
		fprintf(stderr, "%s\n", iour_strerror_desc(rc));
		return 1;
	}
	n = iour_filter__opcodes(copy, ops, 8);
	iour_filter__opcode_info(copy, IOUR_OP_SOCKET, &info);
	printf("%d filtered opcodes; SOCKET: %u rules, default %u\n", n,
	       info.nrules, info.default_verdict);

	rc = iour_filter__compile(copy, IOUR_OP_SOCKET, NULL, &prog);
	if (rc)
		return 1;
	printf("%s: %zu instructions (kind %u, payload %u bytes), first code 0x%x\n",
	       iour_opcode_name(iour_prog__opcode(prog)),
	       iour_prog__insn_cnt(prog), iour_prog__kind(prog),
	       iour_prog__pdu_size(prog),
	       iour_prog__insns(prog)[0].code);
	iour_prog__free(prog);
	iour_filter__free(copy);
	iour_filter__free(f);
	return 0;
}
