/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the cBPF validator and simulator on arbitrary programs.
 * fuzz-requires: iour_cbpf_validate iour_cbpf_run iour_cbpf_reject_str
 *
 * Input: byte 0 selects the mode, bytes 1..40 are a filter context, the rest
 * are raw 8-byte instructions.  Each input checks two programs: the raw
 * instructions, and a "repaired" copy whose opcodes, offsets and jumps are
 * mapped mostly into the valid range, so that deep simulator paths are
 * reached and not only the validator's early rejections.
 *
 * Invariants (any violation aborts, which libFuzzer reports as a crash):
 *  1. validate never crashes; a rejection names a reason in range and an
 *     instruction inside the program; accepted by the io_uring rules implies
 *     accepted by the generic rules;
 *  2. the simulator refuses every program the validator rejects;
 *  3. an accepted program simulates without error on the context, runs at
 *     most one instruction per program slot (jumps go forward only), reports
 *     allowed == (retval != 0), and does the same on a second run;
 *  4. differential against the running kernel's own classic-BPF engine (an
 *     AF_UNIX socket filter, tests/common/kernel_oracle.h): the kernel's
 *     checker accepts every program the validator accepts, and computes the
 *     same verdict and return value as the simulator.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"
#include "iouring_restrict/cbpf.h"
#include "kernel_oracle.h"

/* Opcodes for the repaired programs: every instruction io_uring's checker
 * allows, plus a few that only the generic checker allows (so both checkers'
 * rejections keep being exercised). */
static const uint16_t codes[] = {
	0x20, 0x80, 0x81, 0x06, 0x16,				/* LD W ABS, LEN, LDX LEN, RET */
	0x04, 0x0c, 0x14, 0x1c, 0x24, 0x2c, 0x34, 0x3c,		/* ADD SUB MUL DIV */
	0x44, 0x4c, 0x54, 0x5c, 0x64, 0x6c, 0x74, 0x7c,		/* OR AND LSH RSH */
	0x84, 0xa4, 0xac,					/* NEG XOR */
	0x00, 0x01, 0x07, 0x87, 0x60, 0x61, 0x02, 0x03,		/* IMM TAX TXA MEM ST STX */
	0x05, 0x15, 0x1d, 0x25, 0x2d, 0x35, 0x3d, 0x45, 0x4d,	/* JA JEQ JGT JGE JSET */
	0x94, 0x9c, 0x28, 0x30, 0x40, 0xb1,			/* MOD, H/B loads, IND, MSH */
};

static struct kernel_oracle oracle;
static int have_oracle;
static unsigned long n_inputs, n_accepted, n_generic_only, n_kernel_runs, n_allowed;

static void print_stats(void)
{
	fprintf(stderr,
		"fuzz-stats: %lu programs, %lu valid, %lu valid only for the generic checker, "
		"%lu kernel differential runs (%lu allowed)\n",
		n_inputs, n_accepted, n_generic_only, n_kernel_runs, n_allowed);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	have_oracle = oracle_open(&oracle) == 0;
	if (!have_oracle)
		fprintf(stderr, "fuzz: kernel oracle unavailable, differential checks off\n");
	atexit(print_stats);
	return 0;
}

static void check_program(const struct iour_insn *insns, size_t cnt, const uint8_t ctx[40])
{
	struct iour_validate_info info = { .sz = sizeof(info) };
	struct iour_validate_info ginfo = { .sz = sizeof(ginfo) };
	struct iour_sim_result res = { .sz = sizeof(res) };
	struct iour_sim_result res2 = { .sz = sizeof(res2) };
	int rc, grc, src;

	n_inputs++;
	rc = iour_cbpf_validate(insns, cnt, 0, &info);
	grc = iour_cbpf_validate(insns, cnt, IOUR_VALIDATE_GENERIC_ONLY, &ginfo);
	FUZZ_CHECK(rc <= 0 && grc <= 0, "validate returned %d / %d", rc, grc);
	if (rc < 0) {
		const char *why = iour_cbpf_reject_str(info.reason);

		FUZZ_CHECK(info.reason > IOUR_REJECT_OK && info.reason < IOUR_REJECT__MAX,
			   "reject reason %u out of range", info.reason);
		FUZZ_CHECK(why && *why, "no text for reject reason %u", info.reason);
		FUZZ_CHECK(cnt == 0 || info.insn < cnt || info.reason == IOUR_REJECT_LENGTH,
			   "rejected at insn %u of %zu", info.insn, cnt);
	} else {
		FUZZ_CHECK(grc == 0, "accepted by io_uring's rules but rejected by the generic "
				     "ones (reason %u at %u)", ginfo.reason, ginfo.insn);
	}
	if (rc < 0 && grc == 0)
		n_generic_only++;

	src = iour_cbpf_run(insns, cnt, ctx, IOUR_CTX_SIZE, &res);
	if (rc < 0) {
		FUZZ_CHECK(src < 0, "the simulator ran a program the validator rejects "
				    "(reason %u at insn %u)", info.reason, info.insn);
		return;
	}
	n_accepted++;
	FUZZ_CHECK(src == 0, "a valid program failed to simulate: %d", src);
	FUZZ_CHECK(res.allowed == (res.retval != 0), "allowed %u but retval %u", res.allowed,
		   res.retval);
	FUZZ_CHECK(res.executed >= 1 && res.executed <= cnt, "executed %u of %zu instructions",
		   res.executed, cnt);
	src = iour_cbpf_run(insns, cnt, ctx, IOUR_CTX_SIZE, &res2);
	FUZZ_CHECK(src == 0 && res2.retval == res.retval && res2.executed == res.executed,
		   "second run differs");

	if (have_oracle) {
		size_t delivered = 0;
		int krc = oracle_attach(&oracle, insns, cnt);
		int kv;

		FUZZ_CHECK(krc == 0, "the kernel's checker rejects a valid program: %d", krc);
		kv = oracle_run(&oracle, ctx, &delivered);
		FUZZ_CHECK(kv >= 0, "kernel oracle run failed: %d", kv);
		n_kernel_runs++;
		n_allowed += res.allowed;
		FUZZ_CHECK((uint32_t)kv == res.allowed, "kernel verdict %d, simulator %u (retval %u)",
			   kv, res.allowed, res.retval);
		if (kv)
			FUZZ_CHECK(delivered == (res.retval < 40 ? res.retval : 40),
				   "kernel return value delivers %zu bytes, simulator retval %u",
				   delivered, res.retval);
	}
}

/* Map each instruction mostly into the valid range (see codes[]). */
static void repair(struct iour_insn *p, size_t cnt, uint8_t mode)
{
	size_t i;

	for (i = 0; i < cnt; i++) {
		uint32_t left = (uint32_t)(cnt - i - 1); /* instructions after this one */
		uint16_t c = codes[p[i].code % (sizeof(codes) / sizeof(codes[0]))];

		p[i].code = c;
		switch (c & 0x07) {
		case 0x00: /* LD */
		case 0x01: /* LDX */
			if ((c & 0xe0) == 0x20)
				p[i].k = (p[i].k % 11) * 4; /* 40 is one past the end */
			else if ((c & 0xe0) == 0x60)
				p[i].k %= 17; /* 16 is one past M[] */
			break;
		case 0x02: /* ST */
		case 0x03: /* STX */
			p[i].k %= 17;
			break;
		case 0x04: /* ALU */
			if ((c & 0xf0) == 0x60 || (c & 0xf0) == 0x70)
				p[i].k %= 33;
			else if ((c & 0xf0) == 0x30 || (c & 0xf0) == 0x90)
				p[i].k %= 7;
			break;
		case 0x05: /* JMP: one past the end is invalid */
			if ((c & 0xf0) == 0x00)
				p[i].k %= left + 1;
			p[i].jt = (uint8_t)(p[i].jt % (left < 255 ? left + 1 : 256));
			p[i].jf = (uint8_t)(p[i].jf % (left < 255 ? left + 1 : 256));
			break;
		default:
			break;
		}
	}
	if (cnt && !(mode & 0x04))
		p[cnt - 1].code = (mode & 0x08) ? 0x16 : 0x06;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz in = { data, size };
	uint8_t ctx[IOUR_CTX_SIZE];
	struct iour_insn *prog;
	uint8_t mode = fz_u8(&in);
	size_t cnt, i;

	fz_bytes(&in, ctx, sizeof(ctx));
	cnt = in.n / sizeof(struct iour_insn);
	/* Mode 0xff: the program repeated past the kernel's 4096 limit. */
	if (mode == 0xff && cnt)
		cnt = (IOUR_MAX_INSNS / cnt + 1) * cnt;
	prog = malloc((cnt ? cnt : 1) * sizeof(*prog));
	if (!prog)
		return 0;
	for (i = 0; i < cnt; i++) {
		const uint8_t *b = in.p + (i % (in.n / sizeof(struct iour_insn))) * 8;

		memcpy(&prog[i], b, sizeof(*prog));
	}

	check_program(prog, cnt, ctx);
	if (mode & 0x01) {
		repair(prog, cnt, mode);
		check_program(prog, cnt, ctx);
	}
	free(prog);
	return 0;
}
