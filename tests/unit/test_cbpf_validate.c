/* SPDX-License-Identifier: MIT */
/*
 * The cBPF validator: hand-written cases for every reject reason, the
 * argument contract, and a differential test against the running kernel's
 * own checkers (SO_ATTACH_FILTER for the generic checker, seccomp in a
 * child for the io_uring instruction list).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
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

static void expect_reject(const struct iour_insn *p, size_t n, uint32_t flags, uint32_t insn,
			  uint32_t reason)
{
	struct iour_validate_info info = { .sz = sizeof(info) };
	int rc = iour_cbpf_validate(p, n, flags, &info);

	cr_assert_eq(rc, -IOUR_ERRNO__INVALID_PROG, "rc %d, want INVALID_PROG", rc);
	cr_assert_eq(info.reason, reason, "reason %u (%s), want %u (%s)", info.reason,
		     iour_cbpf_reject_str(info.reason), reason, iour_cbpf_reject_str(reason));
	cr_assert_eq(info.insn, insn, "insn %u, want %u", info.insn, insn);
}

static void expect_ok(const struct iour_insn *p, size_t n, uint32_t flags)
{
	struct iour_validate_info info = { .sz = sizeof(info), .insn = 77, .reason = 77 };
	int rc = iour_cbpf_validate(p, n, flags, &info);

	cr_assert_eq(rc, 0, "rc %d reason %s at %u", rc, iour_cbpf_reject_str(info.reason),
		     info.insn);
	cr_assert_eq(info.reason, IOUR_REJECT_OK);
	cr_assert_eq(info.insn, 0);
}

/* The kernel agrees with a hand-written verdict (both checkers). */
static void kernel_agrees(const struct iour_insn *p, size_t n)
{
	int mine = iour_cbpf_validate(p, n, IOUR_VALIDATE_GENERIC_ONLY, NULL);
	int sock = oracle_socket_accepts(p, n);

	cr_assert(sock == 0 || sock == -EINVAL, "socket oracle failed: %d", sock);
	cr_assert_eq(mine == 0, sock == 0, "generic verdict %d, kernel %d", mine, sock);
}

Test(cbpf_validate, minimal_programs)
{
	struct iour_insn p[] = { RETK(1) };
	struct iour_insn q[] = { LDW(36), RETA };

	expect_ok(p, 1, 0);
	expect_ok(q, 2, 0);
	cr_assert_eq(iour_cbpf_validate(p, 1, 0, NULL), 0);
}

Test(cbpf_validate, length)
{
	static struct iour_insn big[IOUR_MAX_INSNS + 1];
	size_t i;

	for (i = 0; i < IOUR_MAX_INSNS + 1; i++)
		big[i] = RETK(0);
	expect_reject(big, 0, 0, 0, IOUR_REJECT_LENGTH);
	expect_reject(NULL, 0, 0, 0, IOUR_REJECT_LENGTH);
	expect_ok(big, IOUR_MAX_INSNS, 0);
	expect_reject(big, IOUR_MAX_INSNS + 1, 0, IOUR_MAX_INSNS, IOUR_REJECT_LENGTH);
	expect_reject(big, IOUR_MAX_INSNS + 1, IOUR_VALIDATE_GENERIC_ONLY, IOUR_MAX_INSNS,
		      IOUR_REJECT_LENGTH);
	kernel_agrees(big, IOUR_MAX_INSNS);
	kernel_agrees(big, IOUR_MAX_INSNS + 1);
}

Test(cbpf_validate, unknown_codes)
{
	struct iour_insn p[] = { STMT(KBPF_LD | KBPF_IMM, 0), STMT(0xffff, 0), RETK(0) };
	struct iour_insn q[] = { STMT(KBPF_RET | KBPF_X, 0) };
	struct iour_insn r[] = { STMT(KBPF_MISC | 0x40, 0), RETK(0) };

	expect_reject(p, 3, 0, 1, IOUR_REJECT_CODE);
	expect_reject(p, 3, IOUR_VALIDATE_GENERIC_ONLY, 1, IOUR_REJECT_CODE);
	expect_reject(q, 1, 0, 0, IOUR_REJECT_CODE);
	expect_reject(r, 2, 0, 0, IOUR_REJECT_CODE);
	kernel_agrees(p, 3);
	kernel_agrees(q, 1);
	kernel_agrees(r, 2);
}

Test(cbpf_validate, io_uring_only_rejections)
{
	static const uint16_t codes[] = {
		KBPF_ALU | KBPF_MOD | KBPF_K, KBPF_ALU | KBPF_MOD | KBPF_X,
		KBPF_LD | KBPF_H | KBPF_ABS,  KBPF_LD | KBPF_B | KBPF_ABS,
		KBPF_LD | KBPF_W | KBPF_IND,  KBPF_LD | KBPF_H | KBPF_IND,
		KBPF_LD | KBPF_B | KBPF_IND,  KBPF_LDX | KBPF_B | KBPF_MSH,
	};
	size_t i;

	for (i = 0; i < sizeof(codes) / sizeof(codes[0]); i++) {
		struct iour_insn p[] = { LDW(0), STMT(codes[i], 3), RETA };

		expect_ok(p, 3, IOUR_VALIDATE_GENERIC_ONLY);
		expect_reject(p, 3, 0, 1, IOUR_REJECT_NOT_ALLOWED);
		kernel_agrees(p, 3);
	}
}

Test(cbpf_validate, load_offsets)
{
	uint32_t k;

	for (k = 0; k < 72; k++) {
		struct iour_insn p[] = { LDW(k), RETA };

		expect_ok(p, 2, IOUR_VALIDATE_GENERIC_ONLY);
		if (k < 40 && k % 4 == 0)
			expect_ok(p, 2, 0);
		else
			expect_reject(p, 2, 0, 0, IOUR_REJECT_LOAD_OFFSET);
	}
	/* Ancillary loads: known ones pass the generic checker only. */
	for (k = 0; k < 80; k++) {
		struct iour_insn p[] = { LDW(0xfffff000U + k), RETA };
		struct iour_insn h[] = { STMT(KBPF_LD | KBPF_H | KBPF_ABS, 0xfffff000U + k), RETA };
		bool known = k < 64 && k % 4 == 0;

		if (known) {
			expect_ok(p, 2, IOUR_VALIDATE_GENERIC_ONLY);
			expect_ok(h, 2, IOUR_VALIDATE_GENERIC_ONLY);
			expect_reject(h, 2, 0, 0, IOUR_REJECT_NOT_ALLOWED);
		} else {
			expect_reject(p, 2, IOUR_VALIDATE_GENERIC_ONLY, 0, IOUR_REJECT_LOAD_OFFSET);
			expect_reject(h, 2, IOUR_VALIDATE_GENERIC_ONLY, 0, IOUR_REJECT_LOAD_OFFSET);
		}
		expect_reject(p, 2, 0, 0, IOUR_REJECT_LOAD_OFFSET);
		kernel_agrees(p, 2);
		kernel_agrees(h, 2);
	}
	/* Below SKF_AD_OFF (e.g. SKF_NET_OFF) the generic checker has no rule. */
	{
		struct iour_insn p[] = { LDW(0xfff00000U), RETA };

		expect_ok(p, 2, IOUR_VALIDATE_GENERIC_ONLY);
		expect_reject(p, 2, 0, 0, IOUR_REJECT_LOAD_OFFSET);
		kernel_agrees(p, 2);
	}
}

Test(cbpf_validate, constant_operands)
{
	struct iour_insn div0[] = { STMT(KBPF_ALU | KBPF_DIV | KBPF_K, 0), RETA };
	struct iour_insn mod0[] = { STMT(KBPF_ALU | KBPF_MOD | KBPF_K, 0), RETA };
	struct iour_insn divx[] = { STMT(KBPF_ALU | KBPF_DIV | KBPF_X, 0), RETA };
	struct iour_insn lsh31[] = { STMT(KBPF_ALU | KBPF_LSH | KBPF_K, 31), RETA };
	struct iour_insn lsh32[] = { STMT(KBPF_ALU | KBPF_LSH | KBPF_K, 32), RETA };
	struct iour_insn rsh32[] = { STMT(KBPF_ALU | KBPF_RSH | KBPF_K, 0xffffffff), RETA };
	struct iour_insn lshx[] = { STMT(KBPF_ALU | KBPF_LSH | KBPF_X, 99), RETA };

	expect_reject(div0, 2, 0, 0, IOUR_REJECT_DIV_ZERO);
	expect_reject(mod0, 2, IOUR_VALIDATE_GENERIC_ONLY, 0, IOUR_REJECT_DIV_ZERO);
	expect_reject(mod0, 2, 0, 0, IOUR_REJECT_DIV_ZERO);
	expect_ok(divx, 2, 0);
	expect_ok(lsh31, 2, 0);
	expect_reject(lsh32, 2, 0, 0, IOUR_REJECT_SHIFT);
	expect_reject(rsh32, 2, 0, 0, IOUR_REJECT_SHIFT);
	expect_ok(lshx, 2, 0);
	kernel_agrees(div0, 2);
	kernel_agrees(mod0, 2);
	kernel_agrees(lsh32, 2);
	kernel_agrees(lsh31, 2);
}

Test(cbpf_validate, scratch_memory)
{
	struct iour_insn st16[] = { STMT(KBPF_ST, 16), RETK(0) };
	struct iour_insn ld16[] = { STMT(KBPF_ST, 15), STMT(KBPF_LDX | KBPF_MEM, 16), RETK(0) };
	struct iour_insn uninit[] = { STMT(KBPF_LD | KBPF_MEM, 0), RETA };
	struct iour_insn ok[] = { STMT(KBPF_ST, 0), STMT(KBPF_STX, 15),
				  STMT(KBPF_LD | KBPF_MEM, 0), STMT(KBPF_LDX | KBPF_MEM, 15),
				  RETA };
	/* Written on one branch only, read after the join. */
	struct iour_insn branch[] = {
		LDW(16), JUMP(KBPF_JMP | KBPF_JEQ | KBPF_K, 2, 0, 1), STMT(KBPF_ST, 3),
		STMT(KBPF_LD | KBPF_MEM, 3), RETA,
	};
	/* The kernel's pass treats the instruction after a RET as a
	 * fall-through successor: the read at 4 is refused even though only
	 * the path through the store at 1 reaches it. */
	struct iour_insn after_ret[] = {
		JUMP(KBPF_JMP | KBPF_JEQ | KBPF_K, 0, 0, 2), STMT(KBPF_ST, 0),
		STMT(KBPF_JMP | KBPF_JA, 1), RETK(0), STMT(KBPF_LD | KBPF_MEM, 0), RETA,
	};
	/* Unreachable code after a jump starts with every word "written". */
	struct iour_insn after_ja[] = {
		STMT(KBPF_JMP | KBPF_JA, 1), STMT(KBPF_LD | KBPF_MEM, 7), RETA,
	};

	expect_reject(st16, 2, 0, 0, IOUR_REJECT_MEM_INDEX);
	expect_reject(ld16, 3, 0, 1, IOUR_REJECT_MEM_INDEX);
	expect_reject(uninit, 2, 0, 0, IOUR_REJECT_MEM_UNINIT);
	expect_reject(uninit, 2, IOUR_VALIDATE_GENERIC_ONLY, 0, IOUR_REJECT_MEM_UNINIT);
	expect_ok(ok, 5, 0);
	expect_reject(branch, 5, 0, 3, IOUR_REJECT_MEM_UNINIT);
	expect_reject(after_ret, 6, 0, 4, IOUR_REJECT_MEM_UNINIT);
	expect_ok(after_ja, 3, 0);
	kernel_agrees(st16, 2);
	kernel_agrees(ld16, 3);
	kernel_agrees(uninit, 2);
	kernel_agrees(ok, 5);
	kernel_agrees(branch, 5);
	kernel_agrees(after_ret, 6);
	kernel_agrees(after_ja, 3);
}

Test(cbpf_validate, jumps)
{
	struct iour_insn ja_ok[] = { STMT(KBPF_JMP | KBPF_JA, 1), RETK(0), RETK(1) };
	struct iour_insn ja_far[] = { STMT(KBPF_JMP | KBPF_JA, 2), RETK(0), RETK(1) };
	struct iour_insn ja_neg[] = { STMT(KBPF_JMP | KBPF_JA, 0xffffffff), RETK(1) };
	struct iour_insn jt_far[] = { JUMP(KBPF_JMP | KBPF_JEQ | KBPF_K, 0, 2, 0), RETK(0), RETK(1) };
	struct iour_insn jf_far[] = { JUMP(KBPF_JMP | KBPF_JSET | KBPF_X, 0, 0, 2), RETK(0), RETK(1) };
	struct iour_insn j_ok[] = { JUMP(KBPF_JMP | KBPF_JGT | KBPF_K, 0, 1, 0), RETK(0), RETK(1) };
	struct iour_insn j_last[] = { RETK(0), JUMP(KBPF_JMP | KBPF_JGE | KBPF_K, 0, 0, 0) };

	expect_ok(ja_ok, 3, 0);
	expect_reject(ja_far, 3, 0, 0, IOUR_REJECT_JUMP);
	expect_reject(ja_neg, 2, 0, 0, IOUR_REJECT_JUMP);
	expect_reject(jt_far, 3, 0, 0, IOUR_REJECT_JUMP);
	expect_reject(jf_far, 3, 0, 0, IOUR_REJECT_JUMP);
	expect_ok(j_ok, 3, 0);
	expect_reject(j_last, 2, 0, 1, IOUR_REJECT_JUMP);
	kernel_agrees(ja_ok, 3);
	kernel_agrees(ja_far, 3);
	kernel_agrees(ja_neg, 2);
	kernel_agrees(jt_far, 3);
	kernel_agrees(jf_far, 3);
	kernel_agrees(j_last, 2);
}

Test(cbpf_validate, last_instruction)
{
	struct iour_insn p[] = { RETK(0), LDW(0) };
	struct iour_insn q[] = { RETK(1), RETK(0), STMT(KBPF_ALU | KBPF_ADD | KBPF_K, 1), RETA };

	expect_reject(p, 2, 0, 1, IOUR_REJECT_NO_RET);
	expect_ok(q, 4, 0); /* unreachable code is fine */
	kernel_agrees(p, 2);
	kernel_agrees(q, 4);
}

Test(cbpf_validate, kernel_order_of_checks)
{
	/* An io_uring-only fault at 0 and a generic fault at 2: the generic
	 * checker runs first over the whole program. */
	struct iour_insn p[] = { STMT(KBPF_LD | KBPF_B | KBPF_ABS, 0), LDW(41),
				 STMT(KBPF_ALU | KBPF_DIV | KBPF_K, 0), RETA };
	/* Per instruction the code comes before the operand. */
	struct iour_insn q[] = { STMT(KBPF_ST, 99), STMT(0x00ff, 0), RETA };
	/* NO_RET beats a scratch fault and an io_uring fault. */
	struct iour_insn r[] = { STMT(KBPF_LD | KBPF_MEM, 1), STMT(KBPF_LD | KBPF_H | KBPF_ABS, 0) };
	/* MEM_UNINIT beats an earlier io_uring fault. */
	struct iour_insn s[] = { LDW(44), STMT(KBPF_LDX | KBPF_MEM, 1), RETA };

	expect_reject(p, 4, 0, 2, IOUR_REJECT_DIV_ZERO);
	expect_reject(q, 3, 0, 0, IOUR_REJECT_MEM_INDEX);
	expect_reject(r, 2, 0, 1, IOUR_REJECT_NO_RET);
	expect_reject(s, 3, 0, 1, IOUR_REJECT_MEM_UNINIT);
	p[2].k = 3;
	expect_reject(p, 4, 0, 0, IOUR_REJECT_NOT_ALLOWED);
	p[0] = LDW(0);
	expect_reject(p, 4, 0, 1, IOUR_REJECT_LOAD_OFFSET);
	expect_ok(p, 4, IOUR_VALIDATE_GENERIC_ONLY);
}

Test(cbpf_validate, bad_arguments)
{
	struct iour_insn p[] = { RETK(0) };
	struct iour_validate_info info = { .sz = sizeof(info) };
	struct {
		struct iour_validate_info i;
		uint64_t extra;
	} big = { .i = { .sz = sizeof(big) } };

	cr_assert_eq(iour_cbpf_validate(NULL, 1, 0, &info), -EINVAL);
	cr_assert_eq(iour_cbpf_validate(p, 1, 2, &info), -EINVAL);
	cr_assert_eq(iour_cbpf_validate(p, 1, 0x80000000U, NULL), -EINVAL);
	info.sz = offsetof(struct iour_validate_info, reason);
	cr_assert_eq(iour_cbpf_validate(p, 1, 0, &info), -EINVAL);
	info.sz = 0;
	cr_assert_eq(iour_cbpf_validate(p, 1, 0, &info), -EINVAL);
	/* A larger struct from a newer caller is fine. */
	cr_assert_eq(iour_cbpf_validate(p, 1, 0, &big.i), 0);
}

Test(cbpf_validate, reject_strings)
{
	uint32_t r;

	for (r = 0; r < IOUR_REJECT__MAX; r++) {
		cr_assert_not_null(iour_cbpf_reject_str(r));
		cr_assert_str_neq(iour_cbpf_reject_str(r), "unknown reason");
	}
	cr_assert_str_eq(iour_cbpf_reject_str(IOUR_REJECT__MAX), "unknown reason");
	cr_assert_str_eq(iour_cbpf_reject_str(UINT32_MAX), "unknown reason");
}

static bool has_abs_40_64(const struct iour_insn *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i].code == (KBPF_LD | KBPF_W | KBPF_ABS) && p[i].k >= 40 && p[i].k < 64)
			return true;
	return false;
}

/*
 * Differential test against the kernel's checkers.
 *
 * - Generic verdict: iour_cbpf_validate(GENERIC_ONLY) must equal
 *   SO_ATTACH_FILTER's, which runs exactly bpf_check_classic.
 * - io_uring verdict: registration runs bpf_check_classic and then
 *   io_uring's checker, whose instruction list is seccomp's and whose load
 *   bound is k < 40 (seccomp's is k < 64, both with k % 4 == 0).  seccomp
 *   also runs bpf_check_classic first, so
 *     io_uring_accepts(P) == socket_accepts(P) && seccomp_accepts(P)
 *                            && no LD|W|ABS in P with 40 <= k < 64.
 *   (socket_accepts is implied by seccomp_accepts; it is kept so that the
 *   identity reads as the documented one.)  This identity is derived from
 *   the kernel sources; no 7.x kernel is available to run it directly.
 */
Test(cbpf_validate, differential_vs_kernel, .timeout = 600)
{
	static struct iour_insn prog[IOUR_MAX_INSNS + 1];
	static struct iour_insn base[64];
	struct gen_rng r;
	uint64_t seed = gen_test_seed(0xc0ffee1234ULL);
	size_t total = gen_test_long() ? 200000 : 12000;
	size_t sec_every = 4, sec_max = gen_test_long() ? 40000 : 3000;
	size_t n, i, sock_agree = 0, sec_agree = 0, sec_runs = 0, disagree = 0;
	size_t gen_ok = 0, full_ok = 0, mutated = 0, why[IOUR_REJECT__MAX] = { 0 };
	struct iour_validate_info info = { .sz = sizeof(info) };

	gen_seed(&r, seed);
	for (i = 0; i < total; i++) {
		int gen, full, sock, sec = 0;
		bool want_full;

		if (gen_chance(&r, 30)) {
			/* A valid program with one or two small changes. */
			do
				n = gen_runnable(&r, base, 64);
			while (iour_cbpf_validate(base, n, 0, NULL) != 0);
			memcpy(prog, base, n * sizeof(prog[0]));
			gen_mutate(&r, prog, n);
			if (gen_chance(&r, 30))
				gen_mutate(&r, prog, n);
			mutated++;
		} else {
			n = gen_near_valid(&r, prog, IOUR_MAX_INSNS + 1);
		}
		gen = iour_cbpf_validate(prog, n, IOUR_VALIDATE_GENERIC_ONLY, NULL);
		full = iour_cbpf_validate(prog, n, 0, &info);
		why[info.reason]++;
		cr_assert(gen == 0 || gen == -IOUR_ERRNO__INVALID_PROG);
		cr_assert(full == 0 || full == -IOUR_ERRNO__INVALID_PROG);
		cr_assert(!(full == 0 && gen != 0), "io_uring accepts what generic refuses");
		gen_ok += gen == 0;
		full_ok += full == 0;

		sock = oracle_socket_accepts(prog, n);
		cr_assert(sock == 0 || sock == -EINVAL, "socket oracle failed: %d", sock);
		if ((gen == 0) == (sock == 0)) {
			sock_agree++;
		} else {
			disagree++;
			fprintf(stderr, "generic disagreement (seed %#llx, program %zu): mine %d kernel %d\n",
				(unsigned long long)seed, i, gen, sock);
		}
		if (i % sec_every == 0 && sec_runs < sec_max) {
			sec = oracle_seccomp_accepts(prog, n);
			cr_assert(sec == 0 || sec == -EINVAL, "seccomp oracle failed: %d", sec);
			sec_runs++;
			want_full = sock == 0 && sec == 0 && !has_abs_40_64(prog, n);
			if ((full == 0) == want_full) {
				sec_agree++;
			} else {
				disagree++;
				fprintf(stderr,
					"io_uring disagreement (seed %#llx, program %zu): mine %d, socket %d seccomp %d\n",
					(unsigned long long)seed, i, full, sock, sec);
			}
		}
	}
	fprintf(stderr,
		"validator: %zu programs (%zu mutated), socket agree %zu, seccomp agree %zu of %zu, "
		"%zu disagreements; accepted generic %zu, io_uring %zu (seed %#llx)\n",
		total, mutated, sock_agree, sec_agree, sec_runs, disagree, gen_ok, full_ok,
		(unsigned long long)seed);
	fprintf(stderr, "validator: io_uring verdicts by reason:");
	for (i = 0; i < IOUR_REJECT__MAX; i++)
		fprintf(stderr, " %zu=%zu", i, why[i]);
	fprintf(stderr, "\n");
	cr_assert_eq(disagree, 0);
	/* Every reason must occur. */
	for (i = 0; i < IOUR_REJECT__MAX; i++)
		cr_assert_gt(why[i], 0, "reason %zu never produced", i);
	/* Both verdicts must be well represented, or the test proves little. */
	cr_assert_gt(full_ok, total / 10);
	cr_assert_gt(total - full_ok, total / 10);
	cr_assert_gt(gen_ok - full_ok, total / 50);
}
