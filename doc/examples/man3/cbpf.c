/* A compiled SOCKET filter checked by the kernel's acceptance rules, run
 * in the simulator on three requests, and disassembled. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <iouring_restrict/iouring_restrict.h>

int main(void)
{
	struct iour_cmp inet = { .sz = sizeof(inet),
				 .field = IOUR_FIELD_SOCKET_FAMILY,
				 .op = IOUR_CMP_EQ,
				 .value = AF_INET };
	struct sockaddr_in sin = { .sin_family = AF_INET,
				   .sin_port = htons(443) };
	IOUR_OPTS(iour_validate_info, vi);
	IOUR_OPTS(iour_sim_result, res);
	uint8_t ctx[IOUR_CTX_SIZE];
	struct iour_filter *f;
	struct iour_prog *p;
	size_t len = 0;
	char *text;
	int rc;

	if (iour_filter__new(NULL, &f) ||
	    iour_filter__add_rule(f, IOUR_OP_SOCKET, IOUR_ALLOW, &inet,
				  1) ||
	    iour_filter__compile(f, IOUR_OP_SOCKET, NULL, &p))
		return 1;
	rc = iour_cbpf_validate(iour_prog__insns(p),
				iour_prog__insn_cnt(p), 0, &vi);
	printf("validate: %d (%s)\n", rc,
	       iour_cbpf_reject_str(vi.reason));

	iour_ctx_generic(ctx, sizeof(ctx), IOUR_OP_SOCKET, 0, 42);
	iour_ctx_socket(ctx, sizeof(ctx), AF_INET6, SOCK_STREAM, 0);
	iour_cbpf_run(iour_prog__insns(p), iour_prog__insn_cnt(p), ctx,
		      sizeof(ctx), &res);
	printf("AF_INET6 socket: %s\n",
	       res.allowed ? "allowed" : "denied");
	iour_ctx_socket(ctx, sizeof(ctx), AF_INET, SOCK_STREAM, 0);
	iour_cbpf_run(iour_prog__insns(p), iour_prog__insn_cnt(p), ctx,
		      sizeof(ctx), &res);
	printf("AF_INET socket: %s\n",
	       res.allowed ? "allowed" : "denied");
	/* contexts of the other filterable opcodes */
	iour_ctx_open(ctx, sizeof(ctx), 0, 0, 0);
	iour_ctx_connect(ctx, sizeof(ctx), &sin, sizeof(sin));

	iour_cbpf_disasm(iour_prog__insns(p), iour_prog__insn_cnt(p),
			 IOUR_OP_SOCKET, IOUR_DISASM_TEXT, NULL, &len);
	if (!(text = malloc(len)))
		return 1;
	if (!iour_cbpf_disasm(iour_prog__insns(p),
			      iour_prog__insn_cnt(p), IOUR_OP_SOCKET,
			      IOUR_DISASM_TEXT, text, &len))
		fputs(text, stdout);
	free(text);
	iour_prog__free(p);
	iour_filter__free(f);
	return 0;
}
