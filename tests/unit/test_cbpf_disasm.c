/* SPDX-License-Identifier: MIT */
/* The disassembler: golden listings, the C and raw exports, sizing. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cbpf_gen.h"
#include "cbpf/cbpf_internal.h"
#include "iouring_restrict/iouring_restrict.h"

#define STMT(c, kk) { .code = (uint16_t)(c), .k = (kk) }
#define JUMP(c, kk, t, f) { .code = (uint16_t)(c), .jt = (t), .jf = (f), .k = (kk) }

static char *dis(const struct iour_insn *p, size_t n, uint32_t op, uint32_t fmt)
{
	size_t len = 0, len2;
	char *b;

	cr_assert_eq(iour_cbpf_disasm(p, n, op, fmt, NULL, &len), 0);
	b = malloc(len);
	cr_assert_not_null(b);
	len2 = len;
	cr_assert_eq(iour_cbpf_disasm(p, n, op, fmt, b, &len2), 0);
	cr_assert_eq(len2, len);
	if (fmt != IOUR_DISASM_RAW)
		cr_assert_eq(strlen(b) + 1, len);
	return b;
}

static void golden(const struct iour_insn *p, size_t n, uint32_t op, uint32_t fmt,
		   const char *want)
{
	char *got = dis(p, n, op, fmt);

	cr_assert_str_eq(got, want, "got:\n%s\nwant:\n%s", got, want);
	free(got);
}

/* liburing's "allow only AF_INET sockets" filter. */
static const struct iour_insn socket_inet[] = {
	STMT(KBPF_LD | KBPF_W | KBPF_ABS, 16),
	JUMP(KBPF_JMP | KBPF_JEQ | KBPF_K, 2, 0, 1),
	STMT(KBPF_RET | KBPF_K, 1),
	STMT(KBPF_RET | KBPF_K, 0),
};

Test(cbpf_disasm, golden_socket)
{
	golden(socket_inet, 4, 45, IOUR_DISASM_TEXT,
	       "L0: ld socket.family               ; [16]\n"
	       "L1: jeq #0x2, L2, L3\n"
	       "L2: ret #0x1                       ; allow\n"
	       "L3: ret #0                         ; deny\n");
	golden(socket_inet, 4, 45, IOUR_DISASM_C_ARRAY,
	       "struct sock_filter filter[] = {\n"
	       "\tBPF_STMT(BPF_LD | BPF_W | BPF_ABS, 16), /* L0: ld socket.family */\n"
	       "\tBPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 2, 0, 1), /* L1: jeq #0x2, L2, L3 */\n"
	       "\tBPF_STMT(BPF_RET | BPF_K, 1), /* L2: ret #0x1 (allow) */\n"
	       "\tBPF_STMT(BPF_RET | BPF_K, 0), /* L3: ret #0 (deny) */\n"
	       "};\n");
	/* The same words named for an opcode without a payload. */
	golden(socket_inet, 1, IOUR_OPCODE_ANY, IOUR_DISASM_TEXT,
	       "L0: ld pdu+0                       ; [16]\n");
	golden(socket_inet, 1, 0, IOUR_DISASM_TEXT, "L0: ld pdu+0                       ; [16]\n");
}

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
Test(cbpf_disasm, golden_open_and_generic_fields)
{
	/* Deny O_CREAT (liburing's OPENAT test), then check user_data. */
	static const struct iour_insn p[] = {
		STMT(KBPF_LD | KBPF_W | KBPF_ABS, 16),
		JUMP(KBPF_JMP | KBPF_JSET | KBPF_K, 0x40, 9, 0),
		STMT(KBPF_LD | KBPF_W | KBPF_ABS, 20),
		STMT(KBPF_LD | KBPF_W | KBPF_ABS, 24),
		STMT(KBPF_LD | KBPF_W | KBPF_ABS, 28),
		STMT(KBPF_LD | KBPF_W | KBPF_ABS, 36),
		STMT(KBPF_LD | KBPF_W | KBPF_ABS, 0),
		STMT(KBPF_LD | KBPF_W | KBPF_ABS, 4),
		STMT(KBPF_LD | KBPF_W | KBPF_ABS, 8),
		STMT(KBPF_LD | KBPF_W | KBPF_ABS, 12),
		STMT(KBPF_RET | KBPF_A, 0),
		STMT(KBPF_RET | KBPF_K, 0),
	};

	golden(p, 12, 18, IOUR_DISASM_TEXT,
	       "L0:  ld open.flags.lo               ; [16]\n"
	       "L1:  jset #0x40, L11, L2\n"
	       "L2:  ld open.flags.hi               ; [20]\n"
	       "L3:  ld open.mode.lo                ; [24]\n"
	       "L4:  ld open.mode.hi                ; [28]\n"
	       "L5:  ld open.resolve.hi             ; [36]\n"
	       "L6:  ld user_data.lo                ; [0]\n"
	       "L7:  ld user_data.hi                ; [4]\n"
	       "L8:  ld opcode|sqe_flags|pdu_size   ; [8]\n"
	       "L9:  ld pad                         ; [12]\n"
	       "L10: ret a                          ; allow if A != 0\n"
	       "L11: ret #0                         ; deny\n");
}
#endif

Test(cbpf_disasm, golden_connect)
{
	static const struct iour_insn p[] = {
		STMT(KBPF_LD | KBPF_W | KBPF_ABS, 16),
		JUMP(KBPF_JMP | KBPF_JEQ | KBPF_K, 10, 0, 6),
		STMT(KBPF_LD | KBPF_W | KBPF_ABS, 20),
		STMT(KBPF_ALU | KBPF_AND | KBPF_K, 0xffff),
		JUMP(KBPF_JMP | KBPF_JEQ | KBPF_K, 0x1600, 3, 0),
		STMT(KBPF_LD | KBPF_W | KBPF_ABS, 24),
		STMT(KBPF_LD | KBPF_W | KBPF_ABS, 36),
		STMT(KBPF_RET | KBPF_K, 0xffffffff),
		STMT(KBPF_RET | KBPF_K, 0),
	};

	golden(p, 9, 16, IOUR_DISASM_TEXT,
	       "L0: ld connect.family              ; [16]\n"
	       "L1: jeq #0xa, L2, L8\n"
	       "L2: ld connect.port                ; [20]\n"
	       "L3: and #0xffff\n"
	       "L4: jeq #0x1600, L8, L5\n"
	       "L5: ld connect.addr[0]             ; [24]\n"
	       "L6: ld connect.addr[3]             ; [36]\n"
	       "L7: ret #0xffffffff                ; allow\n"
	       "L8: ret #0                         ; deny\n");
}

Test(cbpf_disasm, golden_every_instruction_kind)
{
	static const struct iour_insn p[] = {
		STMT(KBPF_LD | KBPF_IMM, 0),
		STMT(KBPF_LDX | KBPF_IMM, 40),
		STMT(KBPF_LD | KBPF_W | KBPF_LEN, 0),
		STMT(KBPF_LDX | KBPF_W | KBPF_LEN, 0),
		STMT(KBPF_ST, 0),
		STMT(KBPF_STX, 15),
		STMT(KBPF_LD | KBPF_MEM, 0),
		STMT(KBPF_LDX | KBPF_MEM, 15),
		STMT(KBPF_ALU | KBPF_ADD | KBPF_K, 1),
		STMT(KBPF_ALU | KBPF_SUB | KBPF_X, 0),
		STMT(KBPF_ALU | KBPF_MUL | KBPF_K, 3),
		STMT(KBPF_ALU | KBPF_DIV | KBPF_X, 0),
		STMT(KBPF_ALU | KBPF_OR | KBPF_K, 0x100),
		STMT(KBPF_ALU | KBPF_AND | KBPF_X, 0),
		STMT(KBPF_ALU | KBPF_LSH | KBPF_K, 31),
		STMT(KBPF_ALU | KBPF_RSH | KBPF_X, 0),
		STMT(KBPF_ALU | KBPF_XOR | KBPF_K, 0xffffffff),
		STMT(KBPF_ALU | KBPF_NEG, 0),
		STMT(KBPF_ALU | KBPF_MOD | KBPF_K, 7),
		STMT(KBPF_MISC | KBPF_TAX, 0),
		STMT(KBPF_MISC | KBPF_TXA, 0),
		STMT(KBPF_JMP | KBPF_JA, 2),
		JUMP(KBPF_JMP | KBPF_JGT | KBPF_X, 0, 1, 0),
		JUMP(KBPF_JMP | KBPF_JGE | KBPF_K, 5, 0, 0),
		STMT(KBPF_LD | KBPF_W | KBPF_ABS, 40),
		STMT(KBPF_LD | KBPF_H | KBPF_ABS, 2),
		STMT(KBPF_LD | KBPF_B | KBPF_IND, 1),
		STMT(KBPF_LD | KBPF_W | KBPF_IND, 0),
		STMT(KBPF_LDX | KBPF_B | KBPF_MSH, 14),
		{ .code = 0x00ff, .jt = 1, .jf = 2, .k = 3 },
		STMT(KBPF_RET | KBPF_A, 0),
	};

	golden(p, sizeof(p) / sizeof(p[0]), IOUR_OPCODE_ANY, IOUR_DISASM_TEXT,
	       "L0:  ld #0\n"
	       "L1:  ldx #0x28\n"
	       "L2:  ld len                         ; = 40\n"
	       "L3:  ldx len                        ; = 40\n"
	       "L4:  st M[0]\n"
	       "L5:  stx M[15]\n"
	       "L6:  ld M[0]\n"
	       "L7:  ldx M[15]\n"
	       "L8:  add #0x1\n"
	       "L9:  sub x\n"
	       "L10: mul #0x3\n"
	       "L11: div x\n"
	       "L12: or #0x100\n"
	       "L13: and x\n"
	       "L14: lsh #0x1f\n"
	       "L15: rsh x\n"
	       "L16: xor #0xffffffff\n"
	       "L17: neg\n"
	       "L18: mod #0x7\n"
	       "L19: tax\n"
	       "L20: txa\n"
	       "L21: ja L24\n"
	       "L22: jgt x, L24, L23\n"
	       "L23: jge #0x5, L24, L24\n"
	       "L24: ld [40]                        ; outside the io_uring context\n"
	       "L25: ldh [2]\n"
	       "L26: ldb [x+1]\n"
	       "L27: ld [x+0]\n"
	       "L28: ldxb 4*([14]&0xf)\n"
	       "L29: .insn 0x00ff, 1, 2, 0x3        ; unknown instruction\n"
	       "L30: ret a                          ; allow if A != 0\n");
}

Test(cbpf_disasm, golden_c_array_raw_initialisers)
{
	static const struct iour_insn p[] = {
		{ .code = KBPF_LD | KBPF_IMM, .jt = 1, .k = 5 }, /* jt on a non-jump */
		{ .code = 0x00ff, .k = 0x1234 },
		STMT(KBPF_ST, 12),
		STMT(KBPF_RET | KBPF_K, 0x7fff0000),
	};

	golden(p, 4, IOUR_OPCODE_ANY, IOUR_DISASM_C_ARRAY,
	       "struct sock_filter filter[] = {\n"
	       "\t{ BPF_LD | BPF_IMM, 1, 0, 5 }, /* L0: ld #0x5 */\n"
	       "\t{ 0x00ff, 0, 0, 0x1234 }, /* L1: .insn 0x00ff, 0, 0, 0x1234 (unknown instruction) */\n"
	       "\tBPF_STMT(BPF_ST, 12), /* L2: st M[12] */\n"
	       "\tBPF_STMT(BPF_RET | BPF_K, 0x7fff0000), /* L3: ret #0x7fff0000 (allow) */\n"
	       "};\n");
	golden(p, 0, IOUR_OPCODE_ANY, IOUR_DISASM_C_ARRAY, "struct sock_filter filter[] = {\n};\n");
	golden(p, 0, IOUR_OPCODE_ANY, IOUR_DISASM_TEXT, "");
}

Test(cbpf_disasm, raw_bytes)
{
	char buf[64];
	size_t len = 0;

	cr_assert_eq(iour_cbpf_disasm(socket_inet, 4, 45, IOUR_DISASM_RAW, NULL, &len), 0);
	cr_assert_eq(len, 32);
	memset(buf, 0x5a, sizeof(buf));
	len = sizeof(buf);
	cr_assert_eq(iour_cbpf_disasm(socket_inet, 4, 45, IOUR_DISASM_RAW, buf, &len), 0);
	cr_assert_eq(len, 32);
	cr_assert_eq(memcmp(buf, socket_inet, 32), 0);
	cr_assert_eq((unsigned char)buf[32], 0x5a, "no NUL after raw output");
	len = 0;
	cr_assert_eq(iour_cbpf_disasm(NULL, 0, 45, IOUR_DISASM_RAW, NULL, &len), 0);
	cr_assert_eq(len, 0);
}

Test(cbpf_disasm, sizing_and_bad_arguments)
{
	char buf[512];
	size_t need = 0, len;
	unsigned fmt;

	for (fmt = 0; fmt <= 2; fmt++) {
		cr_assert_eq(iour_cbpf_disasm(socket_inet, 4, 45, fmt, NULL, &need), 0);
		cr_assert_lt(need, sizeof(buf));
		memset(buf, 0x5a, sizeof(buf));
		len = need - 1;
		cr_assert_eq(iour_cbpf_disasm(socket_inet, 4, 45, fmt, buf, &len), -ERANGE);
		cr_assert_eq(len, need);
		cr_assert_eq((unsigned char)buf[0], 0x5a, "buffer touched on -ERANGE");
		len = 0;
		cr_assert_eq(iour_cbpf_disasm(socket_inet, 4, 45, fmt, buf, &len), -ERANGE);
		cr_assert_eq(len, need);
		len = need;
		cr_assert_eq(iour_cbpf_disasm(socket_inet, 4, 45, fmt, buf, &len), 0);
		cr_assert_eq(len, need);
	}
	len = sizeof(buf);
	cr_assert_eq(iour_cbpf_disasm(socket_inet, 4, 45, 0, buf, NULL), -EINVAL);
	cr_assert_eq(iour_cbpf_disasm(socket_inet, 4, 45, 0, NULL, NULL), -EINVAL);
	cr_assert_eq(iour_cbpf_disasm(NULL, 1, 45, 0, buf, &len), -EINVAL);
	cr_assert_eq(iour_cbpf_disasm(socket_inet, IOUR_MAX_INSNS + 1, 45, 0, buf, &len), -EINVAL);
	cr_assert_eq(iour_cbpf_disasm(socket_inet, 4, 65, 0, buf, &len), -EINVAL);
	cr_assert_eq(iour_cbpf_disasm(socket_inet, 4, UINT32_MAX - 1, 0, buf, &len), -EINVAL);
	cr_assert_eq(iour_cbpf_disasm(socket_inet, 4, 45, 3, buf, &len), -EINVAL);
	cr_assert_eq(iour_cbpf_disasm(socket_inet, 4, 45, UINT32_MAX, buf, &len), -EINVAL);
}

/* Any program, valid or not, renders deterministically with exact sizes. */
Test(cbpf_disasm, random_programs)
{
	static struct iour_insn prog[IOUR_MAX_INSNS + 1];
	struct gen_rng r;
	size_t i, n;

	gen_seed(&r, gen_test_seed(0xd15a5ULL));
	for (i = 0; i < gen_test_count(2000, 20000); i++) {
		static const uint32_t ops[] = { 45, 18, 28, 16, 0, IOUR_OPCODE_ANY };
		uint32_t op = ops[gen_below(&r, 6)], fmt = gen_below(&r, 3);
		char *a, *b;
		size_t la = 0;

		n = gen_near_valid(&r, prog, IOUR_MAX_INSNS);
		a = dis(prog, n, op, fmt);
		b = dis(prog, n, op, fmt);
		cr_assert_eq(iour_cbpf_disasm(prog, n, op, fmt, NULL, &la), 0);
		cr_assert_eq(memcmp(a, b, la), 0);
		if (fmt == IOUR_DISASM_TEXT) {
			/* one line per instruction */
			size_t lines = 0, j;

			for (j = 0; a[j]; j++)
				lines += a[j] == '\n';
			cr_assert_eq(lines, n);
		}
		free(a);
		free(b);
	}
}

/* A seccomp program is listed as one: seccomp_data fields and SECCOMP_RET_*
 * actions.  (Listed as an io_uring filter, ERRNO and KILL_PROCESS read
 * "allow" and the nr/arch loads "user_data.lo/hi".) */
Test(cbpf_disasm, seccomp_program)
{
	static const struct iour_insn p[] = {
		STMT(KBPF_LD | KBPF_W | KBPF_ABS, 4),
		JUMP(KBPF_JMP | KBPF_JEQ | KBPF_K, 0xc000003e, 0, 6),
		STMT(KBPF_LD | KBPF_W | KBPF_ABS, 0),
		JUMP(KBPF_JMP | KBPF_JEQ | KBPF_K, 425, 3, 0),
		STMT(KBPF_LD | KBPF_W | KBPF_ABS, 16),
		STMT(KBPF_LD | KBPF_W | KBPF_ABS, 60),
		STMT(KBPF_RET | KBPF_K, 0x7fff0000),
		STMT(KBPF_RET | KBPF_K, 0x50026),
		STMT(KBPF_RET | KBPF_K, 0x80000000),
		STMT(KBPF_RET | KBPF_K, 0),
		STMT(KBPF_RET | KBPF_K, 0x30007),
		STMT(KBPF_RET | KBPF_K, 0x7ffc0000),
		STMT(KBPF_RET | KBPF_K, 0x12340000),
		STMT(KBPF_LD | KBPF_W | KBPF_ABS, 64),
		STMT(KBPF_LD | KBPF_W | KBPF_LEN, 0),
		STMT(KBPF_RET | KBPF_A, 0),
	};
	char *t = dis(p, IOUR_ARRAY_SIZE(p), IOUR_OPCODE_ANY, IOUR_DISASM_TEXT | IOUR_DISASM_SECCOMP);

	cr_assert_str_eq(t,
			 "L0:  ld arch                        ; [4]\n"
			 "L1:  jeq #0xc000003e, L2, L8\n"
			 "L2:  ld nr                          ; [0]\n"
			 "L3:  jeq #0x1a9, L7, L4\n"
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
			 "L4:  ld args[0].lo                  ; [16]\n"
			 "L5:  ld args[5].hi                  ; [60]\n"
#else
			 "L4:  ld args[0].hi                  ; [16]\n"
			 "L5:  ld args[5].lo                  ; [60]\n"
#endif
			 "L6:  ret #0x7fff0000                ; SECCOMP_RET_ALLOW\n"
			 "L7:  ret #0x50026                   ; SECCOMP_RET_ERRNO(38)\n"
			 "L8:  ret #0x80000000                ; SECCOMP_RET_KILL_PROCESS\n"
			 "L9:  ret #0                         ; SECCOMP_RET_KILL_THREAD\n"
			 "L10: ret #0x30007                   ; SECCOMP_RET_TRAP(7)\n"
			 "L11: ret #0x7ffc0000                ; SECCOMP_RET_LOG\n"
			 "L12: ret #0x12340000                ; unknown action: kills the process\n"
			 "L13: ld [64]                        ; outside seccomp_data\n"
			 "L14: ld len                         ; = 64\n"
			 "L15: ret a                          ; the action in A\n",
			 "got:\n%s", t);
	free(t);
	t = dis(p, 9, IOUR_OPCODE_ANY, IOUR_DISASM_C_ARRAY | IOUR_DISASM_SECCOMP);
	cr_assert(strstr(t, "BPF_STMT(BPF_RET | BPF_K, 0x50026), /* L7: ret #0x50026 "
			    "(SECCOMP_RET_ERRNO(38)) */\n"), "%s", t);
	cr_assert(strstr(t, "/* L0: ld arch */"), "%s", t);
	free(t);
	/* the raw bytes do not depend on the kind */
	{
		size_t a = 0, b = 0;

		cr_assert_eq(iour_cbpf_disasm(p, 3, IOUR_OPCODE_ANY,
					      IOUR_DISASM_RAW | IOUR_DISASM_SECCOMP, NULL, &a), 0);
		cr_assert_eq(iour_cbpf_disasm(p, 3, IOUR_OPCODE_ANY, IOUR_DISASM_RAW, NULL, &b), 0);
		cr_assert_eq(a, b);
	}
	/* a seccomp program has no io_uring opcode; unknown flag bits */
	{
		size_t len = 0;

		cr_assert_eq(iour_cbpf_disasm(p, 3, 16, IOUR_DISASM_TEXT | IOUR_DISASM_SECCOMP, NULL,
					      &len), -EINVAL);
		cr_assert_eq(iour_cbpf_disasm(p, 3, IOUR_OPCODE_ANY, IOUR_DISASM_TEXT | (1U << 9),
					      NULL, &len), -EINVAL);
	}
}

/* The dry run lists the companion's program as a seccomp program. */
Test(cbpf_disasm, plan_describe_lists_the_companion_as_seccomp)
{
	IOUR_OPTS(iour_plan_opts, o, .flags = IOUR_PLAN_FORCE_LEVEL, .level = 3);
	struct iour_ruleset *rs;
	struct iour_policy *p;
	struct iour_plan *pl;
	size_t len = 0;
	char *text;

	cr_assert_eq(iour_ruleset__new(NULL, &rs), 0);
	cr_assert_eq(iour_ruleset__allow_sqe_op(rs, 0), 0);
	cr_assert_eq(iour_policy__new(NULL, &p), 0);
	cr_assert_eq(iour_policy__set_ruleset(p, rs), 0);
	iour_ruleset__free(rs);
	cr_assert_eq(iour_policy__set_attr(p, IOUR_POLICY_ATTR_TARGET, IOUR_POLICY_TARGET_TASK), 0);
	cr_assert_eq(iour_policy__set_attr(p, IOUR_POLICY_ATTR_COMPANION,
					   IOUR_POLICY_COMPANION_ENOSYS), 0);
	cr_assert_eq(iour_policy__plan(p, &o, &pl), 0);
	cr_assert_eq(iour_plan__describe(pl, NULL, &len), 0);
	text = malloc(len);
	cr_assert_not_null(text);
	cr_assert_eq(iour_plan__describe(pl, text, &len), 0);
	cr_assert(strstr(text, "seccomp(SECCOMP_SET_MODE_FILTER"), "%s", text);
	cr_assert(strstr(text, "; SECCOMP_RET_ERRNO(38)"), "%s", text);
	cr_assert(strstr(text, "; SECCOMP_RET_ALLOW"), "%s", text);
	cr_assert(strstr(text, "ld arch"), "%s", text);
	cr_assert(strstr(text, "ld nr"), "%s", text);
	cr_assert_null(strstr(text, "user_data"), "%s", text);
	cr_assert_null(strstr(text, "pdu+"), "%s", text);
	free(text);
	iour_plan__free(pl);
	iour_policy__free(p);
}
