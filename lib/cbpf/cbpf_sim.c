/* SPDX-License-Identifier: MIT */
/*
 * The cBPF simulator: runs a validated io_uring filter on a 40-byte context
 * with the semantics the kernel gives a classic program after converting it
 * to eBPF.  Deliberately a plain interpreter, independent of the filter
 * compiler, because it is the compiler's test oracle.
 *
 * Semantics (net/core/filter.c bpf_convert_filter, io_uring/bpf_filter.c):
 * - A and X start at 0; the scratch words M[0..15] are never read before
 *   written (the validator guarantees it);
 * - arithmetic is on 32-bit unsigned values and wraps;
 * - LD W ABS k loads the native-endian 32-bit word at ctx + k; LD/LDX LEN
 *   give 40, the context size;
 * - DIV by an X of 0 ends the program with return value 0;
 * - shifts by X use the low 5 bits of X (32-bit eBPF shifts);
 * - conditional jumps compare unsigned 32-bit values.
 */
#include "cbpf_internal.h"

static inline uint32_t ctx_word(const uint8_t *ctx, uint32_t k)
{
	uint32_t w;

	memcpy(&w, ctx + k, sizeof(w));
	return w;
}

static inline uint32_t alu(uint16_t op, uint32_t a, uint32_t v)
{
	switch (op) {
	case KBPF_ADD:
		return a + v;
	case KBPF_SUB:
		return a - v;
	case KBPF_MUL:
		return a * v;
	case KBPF_DIV:
		return a / v; /* v != 0: checked by the caller */
	case KBPF_OR:
		return a | v;
	case KBPF_AND:
		return a & v;
	case KBPF_LSH:
		return a << (v & 31);
	case KBPF_RSH:
		return a >> (v & 31);
	case KBPF_XOR:
		return a ^ v;
	case KBPF_NEG:
		return 0U - a;
	default:
		return a; /* MOD never passes the io_uring validator */
	}
}

uint32_t iour__cbpf_run_unchecked(const struct iour_insn *insns, const uint8_t *ctx,
				  uint32_t *executed)
{
	uint32_t A = 0, X = 0, M[KBPF_MEMWORDS];
	uint32_t n = 0, ret;
	size_t pc = 0;

	memset(M, 0, sizeof(M));
	for (;;) {
		const struct iour_insn *in = &insns[pc];
		uint16_t code = in->code;
		uint32_t k = in->k;

		n++;
		pc++;
		switch (KBPF_CLASS(code)) {
		case KBPF_LD:
			switch (KBPF_MODE(code)) {
			case KBPF_ABS:
				A = ctx_word(ctx, k);
				break;
			case KBPF_LEN:
				A = IOUR_CTX_SIZE;
				break;
			case KBPF_MEM:
				A = M[k];
				break;
			default: /* IMM */
				A = k;
				break;
			}
			break;
		case KBPF_LDX:
			switch (KBPF_MODE(code)) {
			case KBPF_LEN:
				X = IOUR_CTX_SIZE;
				break;
			case KBPF_MEM:
				X = M[k];
				break;
			default: /* IMM */
				X = k;
				break;
			}
			break;
		case KBPF_ST:
			M[k] = A;
			break;
		case KBPF_STX:
			M[k] = X;
			break;
		case KBPF_ALU: {
			uint32_t v = KBPF_SRC(code) == KBPF_X ? X : k;

			if (KBPF_OP(code) == KBPF_DIV && v == 0) {
				ret = 0;
				goto out;
			}
			A = alu(KBPF_OP(code), A, v);
			break;
		}
		case KBPF_JMP: {
			uint32_t v = KBPF_SRC(code) == KBPF_X ? X : k;
			bool taken;

			switch (KBPF_OP(code)) {
			case KBPF_JA:
				pc += k;
				continue;
			case KBPF_JEQ:
				taken = A == v;
				break;
			case KBPF_JGT:
				taken = A > v;
				break;
			case KBPF_JGE:
				taken = A >= v;
				break;
			default: /* JSET */
				taken = (A & v) != 0;
				break;
			}
			pc += taken ? in->jt : in->jf;
			break;
		}
		case KBPF_RET:
			ret = KBPF_RVAL(code) == KBPF_A ? A : k;
			goto out;
		default: /* MISC */
			if (KBPF_MISCOP(code) == KBPF_TXA)
				A = X;
			else
				X = A;
			break;
		}
	}
out:
	if (executed)
		*executed = n;
	return ret;
}

/* Documented in include/iouring_restrict/cbpf.h */
int iour_cbpf_run(const struct iour_insn *insns, size_t cnt, const uint8_t *ctx, size_t ctx_len,
		  struct iour_sim_result *res)
{
	uint32_t executed, retval;
	int rc;

	if ((!insns && cnt > 0) || !ctx || ctx_len != IOUR_CTX_SIZE || !res ||
	    res->sz < IOUR_OPTS_END(iour_sim_result, allowed))
		return -EINVAL;
	rc = iour_cbpf_validate(insns, cnt, 0, NULL);
	if (rc)
		return rc;
	if (!insns) /* unreachable: the validator refuses 0 instructions */
		return -IOUR_ERRNO__INVALID_PROG;
	retval = iour__cbpf_run_unchecked(insns, ctx, &executed);
	res->retval = retval;
	res->executed = executed;
	res->allowed = retval != 0;
	if (IOUR_OUT_HAS(res, pad))
		res->pad = 0;
	return 0;
}
