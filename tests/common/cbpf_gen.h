/* SPDX-License-Identifier: MIT */
/*
 * Random classic-BPF programs and filter contexts for the differential
 * tests of the validator and the simulator.
 */
#ifndef IOUR_TEST_CBPF_GEN_H
#define IOUR_TEST_CBPF_GEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "iouring_restrict/cbpf.h"

/* xorshift64* generator; never seeded with 0. */
struct gen_rng {
	uint64_t s;
};

void gen_seed(struct gen_rng *r, uint64_t seed);
uint64_t gen_u64(struct gen_rng *r);
uint32_t gen_u32(struct gen_rng *r);
/* Uniform in [0, n); n > 0. */
uint32_t gen_below(struct gen_rng *r, uint32_t n);
/* True with probability pct / 100. */
bool gen_chance(struct gen_rng *r, unsigned pct);

/* Seed from IOUR_TEST_SEED (decimal or 0x...), else `def`. */
uint64_t gen_test_seed(uint64_t def);
/* 1 if IOUR_TEST_LONG is set to a non-empty value other than "0". */
int gen_test_long(void);
/*
 * How many random cases a differential or robustness test runs: `dflt`
 * normally, `lng` under IOUR_TEST_LONG, and dflt / 10 (at least 1) under
 * IOUR_TEST_QUICK.  The quick count is for valgrind (mk/valgrind.mk), where
 * a case costs some thirty times more: valgrind looks for memory errors on
 * the same paths, while the full counts run natively and under ASan+UBSan
 * in the same make check.
 */
uint64_t gen_test_count(uint64_t dflt, uint64_t lng);

/*
 * A program "near" the acceptance boundary of the kernel's checkers: codes
 * mostly from io_uring's list, some generic-only or unknown codes, operands
 * around every boundary (load offsets around 40/64/SKF_AD_OFF, scratch
 * indexes around 16, shift counts around 32, jump offsets around the end of
 * the program), usually ending in RET.  Writes 1..max instructions and
 * returns the count; with max > 4096, sometimes more than the kernel's
 * limit.
 */
size_t gen_near_valid(struct gen_rng *r, struct iour_insn *out, size_t max);

/* Changes one field of one instruction of prog (code, jt, jf or k) to a
 * nearby or random value. */
void gen_mutate(struct gen_rng *r, struct iour_insn *prog, size_t cnt);

/*
 * A program meant to be valid for io_uring, exercising every instruction
 * the io_uring checker allows: context loads, LEN, immediates, every ALU
 * operation with K and X (DIV by X included), scratch memory, TAX/TXA,
 * every jump kind, RET K and RET A.  It may still fail validation (e.g. a
 * scratch read a jump made unsafe); callers keep the valid ones.  Returns
 * the count (1..max).
 */
size_t gen_runnable(struct gen_rng *r, struct iour_insn *out, size_t max);

/* A 40-byte context: random words mixed with edge values (0, 1, 40,
 * 0x7fffffff, 0x80000000, 0xffffffff, small numbers) and, half the time,
 * a realistic SOCKET/OPENAT/CONNECT context from the builders. */
void gen_ctx(struct gen_rng *r, uint8_t ctx[40]);

#endif
