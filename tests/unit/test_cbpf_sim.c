/* SPDX-License-Identifier: MIT */
/*
 * The cBPF simulator: hand-written semantics cases, the argument contract,
 * and a differential test against the running kernel's BPF engine (the
 * AF_UNIX socket-filter oracle), comparing verdicts and delivered lengths.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cbpf_gen.h"
#include "cbpf/cbpf_internal.h"
#include "iouring_restrict/iouring_restrict.h"
#include "kernel_oracle.h"

#define STMT(c, kk) ((struct iour_insn){ .code = (uint16_t)(c), .k = (kk) })
#define JUMP(c, kk, t, f) \
	((struct iour_insn){ .code = (uint16_t)(c), .jt = (t), .jf = (f), .k = (kk) })
#define LDW(k) STMT(KBPF_LD | KBPF_W | KBPF_ABS, k)
#define RETK(k) STMT(KBPF_RET | KBPF_K, k)
#define RETA STMT(KBPF_RET | KBPF_A, 0)
#define ALU(op, k) STMT(KBPF_ALU | (op) | KBPF_K, k)
#define ALUX(op) STMT(KBPF_ALU | (op) | KBPF_X, 0)
#define LDI(k) STMT(KBPF_LD | KBPF_IMM, k)
#define LDXI(k) STMT(KBPF_LDX | KBPF_IMM, k)

static struct iour_sim_result run(const struct iour_insn *p, size_t n, const uint8_t *ctx)
{
	struct iour_sim_result res = { .sz = sizeof(res), .pad = 99 };
	uint32_t exec2 = 0, rv2;

	cr_assert_eq(iour_cbpf_run(p, n, ctx, 40, &res), 0);
	cr_assert_eq(res.allowed, res.retval != 0);
	cr_assert_eq(res.pad, 0);
	rv2 = iour__cbpf_run_unchecked(p, ctx, &exec2);
	cr_assert_eq(rv2, res.retval);
	cr_assert_eq(exec2, res.executed);
	return res;
}

static uint32_t run_ret(const struct iour_insn *p, size_t n, const uint8_t *ctx)
{
	return run(p, n, ctx).retval;
}

Test(cbpf_sim, initial_registers_and_len)
{
	uint8_t ctx[40];
	struct iour_insn reta[] = { RETA };
	struct iour_insn txa[] = { STMT(KBPF_MISC | KBPF_TXA, 0), RETA };
	struct iour_insn len[] = { STMT(KBPF_LD | KBPF_W | KBPF_LEN, 0), RETA };
	struct iour_insn lenx[] = { STMT(KBPF_LDX | KBPF_W | KBPF_LEN, 0),
				    STMT(KBPF_MISC | KBPF_TXA, 0), RETA };

	memset(ctx, 0xff, sizeof(ctx));
	cr_assert_eq(run_ret(reta, 1, ctx), 0);
	cr_assert_eq(run_ret(txa, 2, ctx), 0);
	cr_assert_eq(run_ret(len, 2, ctx), 40);
	cr_assert_eq(run_ret(lenx, 3, ctx), 40);
	cr_assert_eq(run(lenx, 3, ctx).executed, 3);
}

Test(cbpf_sim, native_word_loads)
{
	uint8_t ctx[40];
	uint32_t w;
	int k;

	for (k = 0; k < 40; k++)
		ctx[k] = (uint8_t)(k * 7 + 1);
	for (k = 0; k < 40; k += 4) {
		struct iour_insn p[] = { LDW((uint32_t)k), RETA };

		memcpy(&w, ctx + k, 4);
		cr_assert_eq(run_ret(p, 2, ctx), w);
	}
	iour_ctx_generic(ctx, 40, 45, 0x11, 0x1122334455667788ULL);
	iour_ctx_socket(ctx, 40, 2, 1 | 0x80000, 6);
	{
		struct iour_insn fam[] = { LDW(16), RETA };
		struct iour_insn ty[] = { LDW(20), ALU(KBPF_AND, 0xf), RETA };
		struct iour_insn op[] = { LDW(8), RETA };
		struct iour_insn ud[] = { LDW(0), RETA };

		cr_assert_eq(run_ret(fam, 2, ctx), 2);
		cr_assert_eq(run_ret(ty, 3, ctx), 1);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
		cr_assert_eq(run_ret(op, 2, ctx), 45 | 0x11 << 8 | 12 << 16);
		cr_assert_eq(run_ret(ud, 2, ctx), 0x55667788);
#else
		cr_assert_eq(run_ret(op, 2, ctx), 45u << 24 | 0x11 << 16 | 12 << 8);
		cr_assert_eq(run_ret(ud, 2, ctx), 0x11223344);
#endif
	}
}

Test(cbpf_sim, alu_semantics)
{
	uint8_t ctx[40] = { 0 };
	struct {
		uint32_t a;
		struct iour_insn op;
		uint32_t want;
	} c[] = {
		{ 0xffffffff, ALU(KBPF_ADD, 2), 1 },
		{ 1, ALU(KBPF_SUB, 2), 0xffffffff },
		{ 0x10000, ALU(KBPF_MUL, 0x10000), 0 },
		{ 0x80000001, ALU(KBPF_MUL, 3), 0x80000003 },
		{ 100, ALU(KBPF_DIV, 7), 14 },
		{ 0xffffffff, ALU(KBPF_DIV, 0x80000000), 1 },
		{ 0xf0, ALU(KBPF_OR, 0x0f), 0xff },
		{ 0xf0, ALU(KBPF_AND, 0x3c), 0x30 },
		{ 0xf0, ALU(KBPF_XOR, 0xff), 0x0f },
		{ 1, ALU(KBPF_LSH, 31), 0x80000000 },
		{ 0x80000000, ALU(KBPF_RSH, 31), 1 },
		{ 5, STMT(KBPF_ALU | KBPF_NEG, 0), 0xfffffffb },
		{ 0, STMT(KBPF_ALU | KBPF_NEG, 0), 0 },
	};
	size_t i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct iour_insn p[] = { LDI(c[i].a), c[i].op, RETA };

		cr_assert_eq(run_ret(p, 3, ctx), c[i].want, "case %zu", i);
	}
}

Test(cbpf_sim, x_operands_div_by_zero_and_shift_masking)
{
	uint8_t ctx[40] = { 0 };
	/* 1 << 33 with a shift by X: the count is masked to 1. */
	struct iour_insn lsh[] = { LDXI(33), LDI(1), ALUX(KBPF_LSH), RETA };
	struct iour_insn rsh[] = { LDXI(36), LDI(0x100), ALUX(KBPF_RSH), RETA };
	struct iour_insn lsh32[] = { LDXI(32), LDI(7), ALUX(KBPF_LSH), RETA };
	/* DIV by X = 0 ends the program with 0, even before a RET K 1. */
	struct iour_insn div0[] = { LDI(10), ALUX(KBPF_DIV), RETK(1) };
	struct iour_insn divx[] = { LDXI(3), LDI(10), ALUX(KBPF_DIV), RETA };
	struct iour_insn subx[] = { LDXI(3), LDI(1), ALUX(KBPF_SUB), RETA };
	struct iour_sim_result res;

	cr_assert_eq(run_ret(lsh, 4, ctx), 2);
	cr_assert_eq(run_ret(rsh, 4, ctx), 0x10);
	cr_assert_eq(run_ret(lsh32, 4, ctx), 7);
	res = run(div0, 3, ctx);
	cr_assert_eq(res.retval, 0);
	cr_assert_eq(res.allowed, 0);
	cr_assert_eq(res.executed, 2);
	cr_assert_eq(run_ret(divx, 4, ctx), 3);
	cr_assert_eq(run_ret(subx, 4, ctx), 0xfffffffe);
}

Test(cbpf_sim, jumps_and_scratch)
{
	uint8_t ctx[40] = { 0 };
	/* Unsigned comparisons: 0xffffffff > 1. */
	struct iour_insn jgt[] = { LDI(0xffffffff), JUMP(KBPF_JMP | KBPF_JGT | KBPF_K, 1, 0, 1),
				   RETK(7), RETK(0) };
	struct iour_insn jge[] = { LDI(5), LDXI(5), JUMP(KBPF_JMP | KBPF_JGE | KBPF_X, 0, 1, 0),
				   RETK(0), RETK(9) };
	struct iour_insn jset[] = { LDI(0x10), JUMP(KBPF_JMP | KBPF_JSET | KBPF_K, 0x11, 0, 1),
				    RETK(3), RETK(4) };
	struct iour_insn jeq[] = { LDI(1), JUMP(KBPF_JMP | KBPF_JEQ | KBPF_K, 2, 0, 1),
				   RETK(3), RETK(4) };
	struct iour_insn ja[] = { STMT(KBPF_JMP | KBPF_JA, 1), RETK(0), RETK(5) };
	struct iour_insn mem[] = { LDI(11), STMT(KBPF_ST, 0), LDXI(22), STMT(KBPF_STX, 15),
				   LDI(0), STMT(KBPF_LDX | KBPF_MEM, 0), STMT(KBPF_LD | KBPF_MEM, 15),
				   ALUX(KBPF_ADD), RETA };
	struct iour_sim_result res;

	cr_assert_eq(run_ret(jgt, 4, ctx), 7);
	cr_assert_eq(run_ret(jge, 5, ctx), 9);
	cr_assert_eq(run_ret(jset, 4, ctx), 3);
	cr_assert_eq(run_ret(jeq, 4, ctx), 4);
	res = run(ja, 3, ctx);
	cr_assert_eq(res.retval, 5);
	cr_assert_eq(res.executed, 2);
	cr_assert_eq(run_ret(mem, 9, ctx), 33);
	cr_assert_eq(run(mem, 9, ctx).executed, 9);
}

Test(cbpf_sim, bad_arguments)
{
	struct iour_insn ok[] = { RETK(1) };
	struct iour_insn bad[] = { LDW(40), RETA };
	uint8_t ctx[41] = { 0 };
	struct iour_sim_result res = { .sz = sizeof(res) };
	struct {
		struct iour_sim_result r;
		uint64_t extra;
	} big = { .r = { .sz = sizeof(big) } };

	cr_assert_eq(iour_cbpf_run(NULL, 1, ctx, 40, &res), -EINVAL);
	cr_assert_eq(iour_cbpf_run(ok, 1, NULL, 40, &res), -EINVAL);
	cr_assert_eq(iour_cbpf_run(ok, 1, ctx, 39, &res), -EINVAL);
	cr_assert_eq(iour_cbpf_run(ok, 1, ctx, 41, &res), -EINVAL);
	cr_assert_eq(iour_cbpf_run(ok, 1, ctx, 40, NULL), -EINVAL);
	res.sz = offsetof(struct iour_sim_result, allowed);
	cr_assert_eq(iour_cbpf_run(ok, 1, ctx, 40, &res), -EINVAL);
	res.sz = sizeof(res);
	cr_assert_eq(iour_cbpf_run(NULL, 0, ctx, 40, &res), -IOUR_ERRNO__INVALID_PROG);
	cr_assert_eq(iour_cbpf_run(bad, 2, ctx, 40, &res), -IOUR_ERRNO__INVALID_PROG);
	cr_assert_eq(iour_cbpf_run(ok, 1, ctx, 40, &big.r), 0);
	cr_assert_eq(big.r.retval, 1);
	/* Without the pad field the struct still works. */
	res.sz = offsetof(struct iour_sim_result, pad);
	res.pad = 42;
	cr_assert_eq(iour_cbpf_run(ok, 1, ctx, 40, &res), 0);
	cr_assert_eq(res.pad, 42);
}

/*
 * Random valid programs x random and edge contexts: the simulator's verdict
 * and return value against the kernel's engine.  The socket oracle delivers
 * min(retval, 40) bytes for an allowed context, so the full 32-bit return
 * value is compared through that length (and exactly for the programs'
 * small RET A values).
 */
Test(cbpf_sim, differential_vs_kernel, .timeout = 600)
{
	struct iour_insn prog[64];
	struct kernel_oracle o;
	struct gen_rng r;
	uint64_t seed = gen_test_seed(0x5eed5157ULL);
	size_t want = gen_test_count(200000, 2000000);
	size_t per_prog = 100, runs = 0, progs = 0, tried = 0, mism = 0;
	size_t allowed = 0, div0 = 0, ret_a = 0;
	uint8_t ctx[40];

	gen_seed(&r, seed);
	cr_assert_eq(oracle_open(&o), 0);
	while (runs < want) {
		size_t n = gen_runnable(&r, prog, 64), j;
		bool has_divx = false;

		tried++;
		if (iour_cbpf_validate(prog, n, 0, NULL) != 0)
			continue;
		cr_assert_eq(oracle_attach(&o, prog, n), 0);
		progs++;
		for (j = 0; j < n; j++)
			has_divx |= prog[j].code == (KBPF_ALU | KBPF_DIV | KBPF_X);
		for (j = 0; j < per_prog; j++) {
			struct iour_sim_result res = { .sz = sizeof(res) };
			size_t got = 0, exp;
			int kv;

			gen_ctx(&r, ctx);
			cr_assert_eq(iour_cbpf_run(prog, n, ctx, 40, &res), 0);
			kv = oracle_run(&o, ctx, &got);
			cr_assert(kv == 0 || kv == 1, "oracle_run: %d", kv);
			exp = res.allowed ? (res.retval < 40 ? res.retval : 40) : 0;
			runs++;
			allowed += res.allowed;
			div0 += has_divx && !res.allowed;
			ret_a += prog[n - 1].code == (KBPF_RET | KBPF_A);
			if (kv != (int)res.allowed || got != exp) {
				if (mism++ < 10)
					fprintf(stderr,
						"sim mismatch (seed %#llx, program %zu): sim %u (ret %#x) kernel %d (%zu bytes)\n",
						(unsigned long long)seed, progs, res.allowed,
						res.retval, kv, got);
			}
		}
	}
	oracle_close(&o);
	fprintf(stderr,
		"simulator: %zu comparisons over %zu programs (%zu generated), %zu allowed, "
		"%zu mismatches (seed %#llx)\n",
		runs, progs, tried, allowed, mism, (unsigned long long)seed);
	cr_assert_eq(mism, 0);
	cr_assert_gt(allowed, runs / 10);
	cr_assert_gt(runs - allowed, runs / 10);
	cr_assert_gt(div0, 0);
	cr_assert_gt(ret_a, 0);
}
