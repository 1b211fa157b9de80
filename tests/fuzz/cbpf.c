/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the cBPF validator, simulator and disassembler on
 * arbitrary programs, differential against the running kernel.
 * fuzz-requires: iour_cbpf_validate iour_cbpf_run iour_cbpf_reject_str iour_cbpf_disasm
 *
 * Input: byte 0 selects the mode, bytes 1..40 are a filter context, the rest
 * are raw 8-byte instructions.  Each input checks two programs: the raw
 * instructions, and (mode bit 0) a "repaired" copy whose opcodes, offsets
 * and jumps are mapped (mostly, or with mode bit 5 strictly) into the valid
 * range, so that deep simulator paths are reached and not only the
 * validator's early rejections.
 *
 * Invariants (any violation aborts, which libFuzzer reports as a crash):
 *  1. validate returns 0 or -IOUR_ERRNO__INVALID_PROG; a rejection names a
 *     reason in range and an instruction inside the program (4096 for an
 *     over-long one); accepted by the io_uring rules implies accepted by the
 *     generic rules;
 *  2. the generic rules accept exactly what the running kernel's socket
 *     checker (SO_ATTACH_FILTER) accepts, and, on a sample of programs run
 *     through seccomp's checker in a child (one in 64, and every input whose
 *     mode has its high four bits set; seccomp allows the same
 *     instructions as io_uring, with loads up to offset 60), the io_uring
 *     rules accept exactly what seccomp accepts with every load below 40;
 *  3. the simulator refuses every program the validator rejects, with
 *     -IOUR_ERRNO__INVALID_PROG;
 *  4. an accepted program simulates without error on the context, runs at
 *     most one instruction per program slot (jumps go forward only), reports
 *     allowed == (retval != 0), and does the same on a second run;
 *  5. the kernel's classic-BPF engine (an AF_UNIX socket filter with the
 *     context's words byte-swapped, tests/common/kernel_oracle.h) computes
 *     the same verdict and, up to the 40 bytes it can deliver, the same
 *     return value; variants of the program that return 5 bits of A at a
 *     time (check_return_bits) compare every bit of a returned A;
 *  6. the disassembler (mode bit 1) follows two-call sizing for each format,
 *     never writes past the size it asked for or into a too-small buffer,
 *     gives one text line per instruction and the raw bytes unchanged.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"
#include "iouring_restrict/cbpf.h"
#include "iouring_restrict/errors.h"
#include "kernel_oracle.h"

#define INVALID (-IOUR_ERRNO__INVALID_PROG)

/* Opcodes for the repaired programs: every instruction io_uring's checker
 * allows, plus a few that only the generic checker allows (so both checkers'
 * rejections keep being exercised). */
static const uint16_t codes[] = {
	0x20, 0x80, 0x81, 0x06, 0x16,                         /* LD W ABS, LEN, LDX LEN, RET */
	0x04, 0x0c, 0x14, 0x1c, 0x24, 0x2c, 0x34, 0x3c,       /* ADD SUB MUL DIV */
	0x44, 0x4c, 0x54, 0x5c, 0x64, 0x6c, 0x74, 0x7c,       /* OR AND LSH RSH */
	0x84, 0xa4, 0xac,                                     /* NEG XOR */
	0x00, 0x01, 0x07, 0x87, 0x60, 0x61, 0x02, 0x03,       /* IMM TAX TXA MEM ST STX */
	0x05, 0x15, 0x1d, 0x25, 0x2d, 0x35, 0x3d, 0x45, 0x4d, /* JA JEQ JGT JGE JSET */
	0x94, 0x9c, 0x28, 0x30, 0x40, 0xb1,                   /* MOD, H/B loads, IND, MSH */
};
#define N_VALID_CODES 41 /* codes[] before the first one io_uring refuses */

static struct kernel_oracle oracle;
static int have_oracle, have_seccomp = 1;
static unsigned long n_inputs, n_accepted, n_generic_only, n_kernel_checks, n_kernel_runs,
	n_allowed, n_seccomp, n_disasm, n_generic_valid;

static void print_stats(void)
{
	fprintf(stderr,
		"fuzz-stats: %lu programs (%lu valid, %lu valid only for the generic checker), "
		"%lu kernel checker verdicts, %lu seccomp checker verdicts, %lu kernel runs "
		"(%lu allowed), %lu disassemblies\n",
		n_inputs, n_accepted, n_generic_only, n_kernel_checks, n_seccomp, n_kernel_runs,
		n_allowed, n_disasm);
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

static void check_disasm(const struct iour_insn *insns, size_t cnt, uint32_t opcode)
{
	uint32_t fmt;

	for (fmt = 0; fmt <= 3; fmt++) {
		size_t need = 0, len, i, lines = 0;
		char *buf, probe[8];
		int rc;

		rc = iour_cbpf_disasm(insns, cnt, opcode, fmt, NULL, &need);
		if (fmt > IOUR_DISASM_RAW || cnt > IOUR_MAX_INSNS ||
		    (opcode != IOUR_OPCODE_ANY && opcode >= 65)) {
			FUZZ_CHECK(rc == -EINVAL, "disasm(format %u, cnt %zu, opcode %u) = %d", fmt,
				   cnt, opcode, rc);
			continue;
		}
		FUZZ_CHECK(rc == 0, "disasm size query (format %u) = %d", fmt, rc);
		n_disasm++;
		if (fmt == IOUR_DISASM_RAW)
			FUZZ_CHECK(need == cnt * 8, "raw size %zu for %zu instructions", need, cnt);
		else
			FUZZ_CHECK(need >= 1, "text size 0");
		/* Too small: -ERANGE, the size again, nothing written. */
		if (need > 0) {
			memset(probe, 0x7e, sizeof(probe));
			len = need - 1 < sizeof(probe) ? need - 1 : sizeof(probe);
			rc = iour_cbpf_disasm(insns, cnt, opcode, fmt, probe, &len);
			FUZZ_CHECK(rc == -ERANGE && len == need, "short buffer: %d, len %zu", rc,
				   len);
			for (i = 0; i < sizeof(probe); i++)
				FUZZ_CHECK(probe[i] == 0x7e, "a too-small buffer was written");
		}
		/* Exactly the size asked for (ASan sees any overrun). */
		buf = malloc(need ? need : 1);
		FUZZ_CHECK(buf != NULL, "out of memory");
		len = need;
		rc = iour_cbpf_disasm(insns, cnt, opcode, fmt, buf, &len);
		FUZZ_CHECK(rc == 0 && len == need, "disasm = %d, len %zu of %zu", rc, len, need);
		if (fmt == IOUR_DISASM_RAW) {
			FUZZ_CHECK(!cnt || !memcmp(buf, insns, need), "raw bytes differ");
		} else {
			FUZZ_CHECK(buf[need - 1] == '\0' && strlen(buf) == need - 1,
				   "text not NUL-terminated at its size");
			for (i = 0; i < need - 1; i++)
				lines += buf[i] == '\n';
			if (fmt == IOUR_DISASM_TEXT)
				FUZZ_CHECK(lines == cnt, "%zu lines for %zu instructions", lines,
					   cnt);
		}
		free(buf);
	}
}

/*
 * The kernel oracle shows a return value only as the number of bytes it
 * delivers, min(retval, 40).  To compare every bit of A at a RET A, each
 * RET A becomes a jump to an appended tail that returns ((A >> s) & 31) + 1
 * (always 1..32), for s = 0, 5, ..., 30; the variant is a valid program
 * again, and simulator and kernel must agree on it exactly.
 */
static void check_return_bits(const struct iour_insn *insns, size_t cnt, const uint8_t ctx[40])
{
	struct iour_sim_result res = { .sz = sizeof(res) };
	struct iour_insn *v;
	size_t i, delivered = 0;
	uint32_t s;
	bool has_ret_a = false;
	int rc, kv;

	for (i = 0; i < cnt; i++)
		has_ret_a |= insns[i].code == 0x16;
	if (!has_ret_a || cnt + 4 > IOUR_MAX_INSNS)
		return;
	v = malloc((cnt + 4) * sizeof(*v));
	FUZZ_CHECK(v != NULL, "out of memory");
	memcpy(v, insns, cnt * sizeof(*v));
	for (i = 0; i < cnt; i++)
		if (v[i].code == 0x16) /* RET A -> JA tail */
			v[i] = (struct iour_insn){ .code = 0x05, .k = (uint32_t)(cnt - i - 1) };
	for (s = 0; s < 32; s += 5) {
		v[cnt] = (struct iour_insn){ .code = 0x74, .k = s };      /* rsh #s */
		v[cnt + 1] = (struct iour_insn){ .code = 0x54, .k = 31 }; /* and #31 */
		v[cnt + 2] = (struct iour_insn){ .code = 0x04, .k = 1 };  /* add #1 */
		v[cnt + 3] = (struct iour_insn){ .code = 0x16 };          /* ret a */
		rc = iour_cbpf_validate(v, cnt + 4, 0, NULL);
		FUZZ_CHECK(rc == 0, "the return-bits variant (shift %u) is invalid: %d", s, rc);
		rc = iour_cbpf_run(v, cnt + 4, ctx, IOUR_CTX_SIZE, &res);
		FUZZ_CHECK(rc == 0, "simulating the return-bits variant failed: %d", rc);
		FUZZ_CHECK(oracle_attach(&oracle, v, cnt + 4) == 0, "kernel rejects a variant");
		kv = oracle_run(&oracle, ctx, &delivered);
		FUZZ_CHECK(kv >= 0, "kernel oracle run failed: %d", kv);
		n_kernel_runs++;
		FUZZ_CHECK((uint32_t)kv == res.allowed &&
				   (!kv || delivered == (res.retval < 40 ? res.retval : 40)),
			   "bits %u..%u of the return value: kernel delivers %zu (verdict %d), "
			   "simulator returns %u",
			   s, s + 4 > 31 ? 31 : s + 4, delivered, kv, res.retval);
	}
	free(v);
}

/*
 * seccomp's checker allows the same instructions as io_uring's, with word
 * loads up to offset 60 instead of below 40: the io_uring rules must accept
 * exactly what seccomp accepts with every load below 40.
 */
static void check_seccomp(const struct iour_insn *insns, size_t cnt, int rc,
			  const struct iour_validate_info *info)
{
	bool loads_ok = true;
	size_t i;
	int sc;

	if (!have_seccomp)
		return;
	sc = oracle_seccomp_accepts(insns, cnt);
	if (sc == -ENOSYS) { /* valgrind does not implement seccomp(2) */
		fprintf(stderr, "fuzz: seccomp unavailable, its checker is not compared\n");
		have_seccomp = 0;
		return;
	}
	for (i = 0; i < cnt; i++)
		if (insns[i].code == 0x20 && insns[i].k >= IOUR_CTX_SIZE)
			loads_ok = false;
	FUZZ_CHECK(sc == 0 || sc == -EINVAL, "seccomp check failed to run: %d", sc);
	FUZZ_CHECK((rc == 0) == (sc == 0 && loads_ok),
		   "io_uring validator %s, seccomp's checker %s (loads below 40: %d; "
		   "reason %u at %u)",
		   rc ? "rejects" : "accepts", sc ? "rejects" : "accepts", loads_ok, info->reason,
		   info->insn);
	n_seccomp++;
}

static void check_program(const struct iour_insn *insns, size_t cnt, const uint8_t ctx[40],
			  uint8_t mode)
{
	struct iour_validate_info info = { .sz = sizeof(info) };
	struct iour_validate_info ginfo = { .sz = sizeof(ginfo) };
	struct iour_sim_result res = { .sz = sizeof(res) };
	struct iour_sim_result res2 = { .sz = sizeof(res2) };
	int rc, grc, src, krc = 1;

	n_inputs++;
	rc = iour_cbpf_validate(insns, cnt, 0, &info);
	grc = iour_cbpf_validate(insns, cnt, IOUR_VALIDATE_GENERIC_ONLY, &ginfo);
	FUZZ_CHECK((rc == 0 || rc == INVALID) && (grc == 0 || grc == INVALID),
		   "validate returned %d / %d", rc, grc);
	if (rc < 0) {
		const char *why = iour_cbpf_reject_str(info.reason);

		FUZZ_CHECK(info.reason > IOUR_REJECT_OK && info.reason < IOUR_REJECT__MAX,
			   "reject reason %u out of range", info.reason);
		FUZZ_CHECK(why && *why, "no text for reject reason %u", info.reason);
		FUZZ_CHECK(info.insn < cnt || (info.reason == IOUR_REJECT_LENGTH &&
					       info.insn == (cnt ? IOUR_MAX_INSNS : 0)),
			   "rejected (reason %u) at insn %u of %zu", info.reason, info.insn, cnt);
	} else {
		FUZZ_CHECK(info.reason == IOUR_REJECT_OK && info.insn == 0,
			   "valid, but info says "
			   "reason %u at %u",
			   info.reason, info.insn);
		FUZZ_CHECK(grc == 0,
			   "accepted by io_uring's rules but rejected by the generic "
			   "ones (reason %u at %u)",
			   ginfo.reason, ginfo.insn);
	}
	if (rc < 0 && grc == 0)
		n_generic_only++;

	/* The generic rules against the kernel's socket checker: exactly. */
	if (have_oracle && cnt <= 0xffff) {
		krc = oracle_attach(&oracle, insns, cnt);
		FUZZ_CHECK(krc == 0 || krc == -EINVAL, "SO_ATTACH_FILTER failed: %d", krc);
		FUZZ_CHECK((krc == 0) == (grc == 0),
			   "the kernel's checker %s, the generic validator %s (reason %u at %u)",
			   krc ? "rejects" : "accepts", grc ? "rejects" : "accepts", ginfo.reason,
			   ginfo.insn);
		n_kernel_checks++;
	}
	/* The io_uring rules against seccomp's checker, on a sample (a fork
	 * each). */
	if (grc == 0 && cnt <= IOUR_MAX_INSNS &&
	    (n_generic_valid++ % 64 == 0 || (mode & 0xf0) == 0xf0))
		check_seccomp(insns, cnt, rc, &info);

	if (mode & 0x02)
		check_disasm(insns, cnt,
			     ctx[8] < 65 ? ctx[8] : (ctx[8] == 0xff ? IOUR_OPCODE_ANY : ctx[8]));

	src = iour_cbpf_run(insns, cnt, ctx, IOUR_CTX_SIZE, &res);
	if (rc < 0) {
		FUZZ_CHECK(src == INVALID,
			   "the simulator ran a program the validator rejects "
			   "(reason %u at insn %u): %d",
			   info.reason, info.insn, src);
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
	FUZZ_CHECK(iour_cbpf_run(insns, cnt, ctx, IOUR_CTX_SIZE - 1, &res2) == -EINVAL,
		   "a 39-byte context was accepted");

	if (have_oracle) {
		size_t delivered = 0;
		int kv;

		FUZZ_CHECK(krc == 0, "the kernel's checker rejects a valid program: %d", krc);
		kv = oracle_run(&oracle, ctx, &delivered);
		FUZZ_CHECK(kv >= 0, "kernel oracle run failed: %d", kv);
		n_kernel_runs++;
		n_allowed += res.allowed;
		FUZZ_CHECK((uint32_t)kv == res.allowed,
			   "kernel verdict %d, simulator %u (retval %u)", kv, res.allowed,
			   res.retval);
		if (kv)
			FUZZ_CHECK(delivered == (res.retval < 40 ? res.retval : 40),
				   "kernel return value delivers %zu bytes, simulator retval %u",
				   delivered, res.retval);
		check_return_bits(insns, cnt, ctx);
	}
}

/*
 * Map each instruction into (mostly) the valid range.  Loose repair (mode
 * bit 5 clear) keeps some invalid codes, offsets one past the end and jumps
 * one past the program, so both checkers' rejections stay exercised.  Strict
 * repair (mode bit 5 set) uses only io_uring's instructions, in-range
 * operands, no constant division by zero, and reads only scratch words that
 * an earlier instruction wrote, so most results are valid programs and the
 * simulator and the kernel are compared on them.
 */
static void repair(struct iour_insn *p, size_t cnt, uint8_t mode)
{
	const bool strict = mode & 0x20;
	const size_t ncodes = strict ? N_VALID_CODES : sizeof(codes) / sizeof(codes[0]);
	uint16_t written = 0; /* scratch words stored so far (straight-line) */
	size_t i;

	for (i = 0; i < cnt; i++) {
		uint32_t left = (uint32_t)(cnt - i - 1); /* instructions after this one */
		uint32_t span = strict ? left : left + 1;
		uint16_t c = codes[p[i].code % ncodes];

		p[i].code = c;
		switch (c & 0x07) {
		case 0x00: /* LD */
		case 0x01: /* LDX */
			if ((c & 0xe0) == 0x20) {
				p[i].k = (p[i].k % (strict ? 10 : 11)) * 4; /* 40: past the end */
			} else if ((c & 0xe0) == 0x60) {
				p[i].k %= strict ? 16 : 17; /* 16: past M[] */
				if (strict && !(written & (1U << p[i].k))) {
					if (!written)
						p[i].code = c & 0x07; /* LD/LDX IMM instead */
					else
						while (!(written & (1U << p[i].k)))
							p[i].k = (p[i].k + 1) % 16;
				}
			}
			break;
		case 0x02: /* ST */
		case 0x03: /* STX */
			p[i].k %= strict ? 16 : 17;
			if (p[i].k < 16)
				written |= (uint16_t)(1U << p[i].k);
			break;
		case 0x04: /* ALU */
			if ((c & 0xf0) == 0x60 || (c & 0xf0) == 0x70)
				p[i].k %= strict ? 32 : 33;
			else if ((c & 0xf0) == 0x30 || (c & 0xf0) == 0x90)
				p[i].k = strict ? p[i].k % 7 + 1 : p[i].k % 7;
			break;
		case 0x05: /* JMP: one past the end is invalid */
			if (strict && left == 0) {
				p[i].code = 0x06; /* no room to jump: RET */
				break;
			}
			if ((c & 0xf0) == 0x00)
				p[i].k %= span;
			p[i].jt = (uint8_t)(p[i].jt % (span < 256 ? span : 256));
			p[i].jf = (uint8_t)(p[i].jf % (span < 256 ? span : 256));
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

	check_program(prog, cnt, ctx, mode);
	if (mode & 0x01) {
		repair(prog, cnt, mode);
		check_program(prog, cnt, ctx, mode);
	}
	free(prog);
	return 0;
}
