/* SPDX-License-Identifier: MIT */
/*
 * The cBPF validator: the acceptance rules of the kernel's generic classic
 * checker (bpf_check_classic in net/core/filter.c, used by SO_ATTACH_FILTER,
 * seccomp and io_uring alike) followed by io_uring's own instruction list
 * (io_uring_check_cbpf_filter).  Written from the documented rules; see
 * include/iouring_restrict/cbpf.h for the reason codes and their order.
 */
#include "cbpf_internal.h"

/* Codes the generic checker knows (its table of allowed codes). */
static bool generic_code_ok(uint16_t code)
{
	switch (code) {
	case KBPF_ALU | KBPF_ADD | KBPF_K:
	case KBPF_ALU | KBPF_ADD | KBPF_X:
	case KBPF_ALU | KBPF_SUB | KBPF_K:
	case KBPF_ALU | KBPF_SUB | KBPF_X:
	case KBPF_ALU | KBPF_MUL | KBPF_K:
	case KBPF_ALU | KBPF_MUL | KBPF_X:
	case KBPF_ALU | KBPF_DIV | KBPF_K:
	case KBPF_ALU | KBPF_DIV | KBPF_X:
	case KBPF_ALU | KBPF_MOD | KBPF_K:
	case KBPF_ALU | KBPF_MOD | KBPF_X:
	case KBPF_ALU | KBPF_AND | KBPF_K:
	case KBPF_ALU | KBPF_AND | KBPF_X:
	case KBPF_ALU | KBPF_OR | KBPF_K:
	case KBPF_ALU | KBPF_OR | KBPF_X:
	case KBPF_ALU | KBPF_XOR | KBPF_K:
	case KBPF_ALU | KBPF_XOR | KBPF_X:
	case KBPF_ALU | KBPF_LSH | KBPF_K:
	case KBPF_ALU | KBPF_LSH | KBPF_X:
	case KBPF_ALU | KBPF_RSH | KBPF_K:
	case KBPF_ALU | KBPF_RSH | KBPF_X:
	case KBPF_ALU | KBPF_NEG:
	case KBPF_LD | KBPF_W | KBPF_ABS:
	case KBPF_LD | KBPF_H | KBPF_ABS:
	case KBPF_LD | KBPF_B | KBPF_ABS:
	case KBPF_LD | KBPF_W | KBPF_LEN:
	case KBPF_LD | KBPF_W | KBPF_IND:
	case KBPF_LD | KBPF_H | KBPF_IND:
	case KBPF_LD | KBPF_B | KBPF_IND:
	case KBPF_LD | KBPF_IMM:
	case KBPF_LD | KBPF_MEM:
	case KBPF_LDX | KBPF_W | KBPF_LEN:
	case KBPF_LDX | KBPF_B | KBPF_MSH:
	case KBPF_LDX | KBPF_IMM:
	case KBPF_LDX | KBPF_MEM:
	case KBPF_ST:
	case KBPF_STX:
	case KBPF_MISC | KBPF_TAX:
	case KBPF_MISC | KBPF_TXA:
	case KBPF_RET | KBPF_K:
	case KBPF_RET | KBPF_A:
	case KBPF_JMP | KBPF_JA:
	case KBPF_JMP | KBPF_JEQ | KBPF_K:
	case KBPF_JMP | KBPF_JEQ | KBPF_X:
	case KBPF_JMP | KBPF_JGE | KBPF_K:
	case KBPF_JMP | KBPF_JGE | KBPF_X:
	case KBPF_JMP | KBPF_JGT | KBPF_K:
	case KBPF_JMP | KBPF_JGT | KBPF_X:
	case KBPF_JMP | KBPF_JSET | KBPF_K:
	case KBPF_JMP | KBPF_JSET | KBPF_X:
		return true;
	default:
		return false;
	}
}

/* Codes io_uring's checker lets through (LD W ABS is checked apart). */
static bool iouring_code_ok(uint16_t code)
{
	switch (code) {
	case KBPF_LD | KBPF_W | KBPF_LEN:
	case KBPF_LDX | KBPF_W | KBPF_LEN:
	case KBPF_RET | KBPF_K:
	case KBPF_RET | KBPF_A:
	case KBPF_ALU | KBPF_ADD | KBPF_K:
	case KBPF_ALU | KBPF_ADD | KBPF_X:
	case KBPF_ALU | KBPF_SUB | KBPF_K:
	case KBPF_ALU | KBPF_SUB | KBPF_X:
	case KBPF_ALU | KBPF_MUL | KBPF_K:
	case KBPF_ALU | KBPF_MUL | KBPF_X:
	case KBPF_ALU | KBPF_DIV | KBPF_K:
	case KBPF_ALU | KBPF_DIV | KBPF_X:
	case KBPF_ALU | KBPF_AND | KBPF_K:
	case KBPF_ALU | KBPF_AND | KBPF_X:
	case KBPF_ALU | KBPF_OR | KBPF_K:
	case KBPF_ALU | KBPF_OR | KBPF_X:
	case KBPF_ALU | KBPF_XOR | KBPF_K:
	case KBPF_ALU | KBPF_XOR | KBPF_X:
	case KBPF_ALU | KBPF_LSH | KBPF_K:
	case KBPF_ALU | KBPF_LSH | KBPF_X:
	case KBPF_ALU | KBPF_RSH | KBPF_K:
	case KBPF_ALU | KBPF_RSH | KBPF_X:
	case KBPF_ALU | KBPF_NEG:
	case KBPF_LD | KBPF_IMM:
	case KBPF_LDX | KBPF_IMM:
	case KBPF_MISC | KBPF_TAX:
	case KBPF_MISC | KBPF_TXA:
	case KBPF_LD | KBPF_MEM:
	case KBPF_LDX | KBPF_MEM:
	case KBPF_ST:
	case KBPF_STX:
	case KBPF_JMP | KBPF_JA:
	case KBPF_JMP | KBPF_JEQ | KBPF_K:
	case KBPF_JMP | KBPF_JEQ | KBPF_X:
	case KBPF_JMP | KBPF_JGE | KBPF_K:
	case KBPF_JMP | KBPF_JGE | KBPF_X:
	case KBPF_JMP | KBPF_JGT | KBPF_K:
	case KBPF_JMP | KBPF_JGT | KBPF_X:
	case KBPF_JMP | KBPF_JSET | KBPF_K:
	case KBPF_JMP | KBPF_JSET | KBPF_X:
		return true;
	default:
		return false;
	}
}

static bool is_cond_jump(uint16_t code)
{
	return KBPF_CLASS(code) == KBPF_JMP && KBPF_OP(code) != KBPF_JA;
}

/*
 * One instruction against the generic checker's per-instruction rules.
 * `code` is already known to be in the generic set.  Returns a reason.
 */
static uint32_t generic_insn(const struct iour_insn *in, size_t pc, size_t cnt)
{
	switch (in->code) {
	case KBPF_ALU | KBPF_DIV | KBPF_K:
	case KBPF_ALU | KBPF_MOD | KBPF_K:
		return in->k == 0 ? IOUR_REJECT_DIV_ZERO : IOUR_REJECT_OK;
	case KBPF_ALU | KBPF_LSH | KBPF_K:
	case KBPF_ALU | KBPF_RSH | KBPF_K:
		return in->k >= 32 ? IOUR_REJECT_SHIFT : IOUR_REJECT_OK;
	case KBPF_LD | KBPF_MEM:
	case KBPF_LDX | KBPF_MEM:
	case KBPF_ST:
	case KBPF_STX:
		return in->k >= KBPF_MEMWORDS ? IOUR_REJECT_MEM_INDEX : IOUR_REJECT_OK;
	case KBPF_JMP | KBPF_JA:
		/* The target pc + 1 + k must be an instruction. */
		return (uint64_t)in->k >= (uint64_t)(cnt - pc - 1) ? IOUR_REJECT_JUMP :
								     IOUR_REJECT_OK;
	case KBPF_LD | KBPF_W | KBPF_ABS:
	case KBPF_LD | KBPF_H | KBPF_ABS:
	case KBPF_LD | KBPF_B | KBPF_ABS:
		/* Offsets from SKF_AD_OFF up are ancillary loads; only the
		 * kernel's known ones (SKF_AD_PROTOCOL .. SKF_AD_VLAN_TPID, every
		 * 4 bytes) pass. */
		if (in->k >= KBPF_SKF_AD_OFF) {
			uint32_t anc = in->k - KBPF_SKF_AD_OFF;

			if (anc >= KBPF_SKF_AD_MAX || (anc & 3))
				return IOUR_REJECT_LOAD_OFFSET;
		}
		return IOUR_REJECT_OK;
	default:
		if (is_cond_jump(in->code) && (pc + in->jt + 1 >= cnt || pc + in->jf + 1 >= cnt))
			return IOUR_REJECT_JUMP;
		return IOUR_REJECT_OK;
	}
}

/*
 * The scratch-memory data flow, as the kernel computes it: one forward pass
 * in which `valid` holds the words written on every path to pc.  A jump
 * narrows the set recorded for its targets and resets `valid` to "all",
 * since the next instruction is reached only through other jumps; a RET
 * does not reset it (the kernel treats the instruction after a RET as a
 * fall-through successor; that is conservative, never permissive).
 * Returns the index of the first read of an unwritten word, or cnt.
 */
static size_t first_uninit_read(const struct iour_insn *insns, size_t cnt)
{
	uint16_t masks[IOUR_MAX_INSNS];
	uint16_t valid = 0;
	size_t pc;

	for (pc = 0; pc < cnt; pc++)
		masks[pc] = 0xffff;
	for (pc = 0; pc < cnt; pc++) {
		const struct iour_insn *in = &insns[pc];

		valid &= masks[pc];
		switch (in->code) {
		case KBPF_ST:
		case KBPF_STX:
			valid |= (uint16_t)(1U << in->k);
			break;
		case KBPF_LD | KBPF_MEM:
		case KBPF_LDX | KBPF_MEM:
			if (!(valid & (1U << in->k)))
				return pc;
			break;
		case KBPF_JMP | KBPF_JA:
			masks[pc + 1 + in->k] &= valid;
			valid = 0xffff;
			break;
		default:
			if (is_cond_jump(in->code)) {
				masks[pc + 1 + in->jt] &= valid;
				masks[pc + 1 + in->jf] &= valid;
				valid = 0xffff;
			}
			break;
		}
	}
	return cnt;
}

static int reject(struct iour_validate_info *info, size_t insn, uint32_t reason)
{
	if (info) {
		info->insn = (uint32_t)insn;
		info->reason = reason;
	}
	return -IOUR_ERRNO__INVALID_PROG;
}

/* Documented in include/iouring_restrict/cbpf.h */
int iour_cbpf_validate(const struct iour_insn *insns, size_t cnt, uint32_t flags,
		       struct iour_validate_info *info)
{
	size_t pc, bad;
	uint32_t why;

	if (!insns && cnt > 0)
		return -EINVAL;
	if (flags & ~IOUR_VALIDATE_GENERIC_ONLY)
		return -EINVAL;
	if (info && info->sz < IOUR_OPTS_END(iour_validate_info, reason))
		return -EINVAL;

	/* Length: the registration call checks it before anything else. */
	if (cnt == 0)
		return reject(info, 0, IOUR_REJECT_LENGTH);
	if (cnt > IOUR_MAX_INSNS)
		return reject(info, IOUR_MAX_INSNS, IOUR_REJECT_LENGTH);

	/* Generic checker, instruction by instruction. */
	for (pc = 0; pc < cnt; pc++) {
		if (!generic_code_ok(insns[pc].code))
			return reject(info, pc, IOUR_REJECT_CODE);
		why = generic_insn(&insns[pc], pc, cnt);
		if (why != IOUR_REJECT_OK)
			return reject(info, pc, why);
	}
	/* Then the last instruction, then the scratch-memory data flow. */
	if (KBPF_CLASS(insns[cnt - 1].code) != KBPF_RET)
		return reject(info, cnt - 1, IOUR_REJECT_NO_RET);
	bad = first_uninit_read(insns, cnt);
	if (bad < cnt)
		return reject(info, bad, IOUR_REJECT_MEM_UNINIT);

	if (!(flags & IOUR_VALIDATE_GENERIC_ONLY)) {
		/* io_uring's checker runs only on what the generic one accepted. */
		for (pc = 0; pc < cnt; pc++) {
			const struct iour_insn *in = &insns[pc];

			if (in->code == (KBPF_LD | KBPF_W | KBPF_ABS)) {
				if (in->k >= IOUR_CTX_SIZE || (in->k & 3))
					return reject(info, pc, IOUR_REJECT_LOAD_OFFSET);
			} else if (!iouring_code_ok(in->code)) {
				return reject(info, pc, IOUR_REJECT_NOT_ALLOWED);
			}
		}
	}
	if (info) {
		info->insn = 0;
		info->reason = IOUR_REJECT_OK;
	}
	return 0;
}

static const char *const reject_strs[IOUR_REJECT__MAX] = {
	[IOUR_REJECT_OK] = "valid",
	[IOUR_REJECT_LENGTH] = "program has 0 or more than 4096 instructions",
	[IOUR_REJECT_CODE] = "opcode unknown to the classic BPF checker",
	[IOUR_REJECT_NOT_ALLOWED] = "instruction not allowed in io_uring filters",
	[IOUR_REJECT_LOAD_OFFSET] =
		"load offset outside the context, unaligned, or unknown ancillary",
	[IOUR_REJECT_DIV_ZERO] = "division or modulo by constant zero",
	[IOUR_REJECT_SHIFT] = "constant shift by 32 or more",
	[IOUR_REJECT_MEM_INDEX] = "scratch memory index 16 or more",
	[IOUR_REJECT_JUMP] = "jump target outside the program",
	[IOUR_REJECT_NO_RET] = "last instruction is not a return",
	[IOUR_REJECT_MEM_UNINIT] = "scratch memory read before written on some path",
};

/* Documented in include/iouring_restrict/cbpf.h */
const char *iour_cbpf_reject_str(uint32_t reason)
{
	if (reason >= IOUR_REJECT__MAX)
		return "unknown reason";
	return reject_strs[reason];
}
