/* SPDX-License-Identifier: MIT */
/*
 * The cBPF disassembler and exporters: a listing that names the context
 * fields of an opcode's payload, a C initialiser, and the raw bytes.
 * Every output is produced twice with the same code: once to count the
 * bytes, once to write them, so a too-small buffer is never touched.
 */
#include <stdarg.h>
#include <stdio.h>

#include "cbpf_internal.h"
#include "iouring_restrict/filter.h"
#include "base/schema.h"

/* struct seccomp_data and the SECCOMP_RET_* actions (linux/seccomp.h),
 * spelt here so that the listing does not depend on the build's headers. */
#define SECCOMP_DATA_SIZE 64
#define SECCOMP_ACTION_MASK 0xffff0000U
#define SECCOMP_DATA_MASK 0x0000ffffU
#define SECCOMP_ACT_KILL_PROCESS 0x80000000U
#define SECCOMP_ACT_KILL_THREAD 0x00000000U
#define SECCOMP_ACT_TRAP 0x00030000U
#define SECCOMP_ACT_ERRNO 0x00050000U
#define SECCOMP_ACT_USER_NOTIF 0x7fc00000U
#define SECCOMP_ACT_TRACE 0x7ff00000U
#define SECCOMP_ACT_LOG 0x7ffc0000U
#define SECCOMP_ACT_ALLOW 0x7fff0000U

struct out {
	char *buf; /* NULL while counting */
	size_t n;
};

__attribute__((format(printf, 2, 3))) static void outf(struct out *o, const char *fmt, ...)
{
	char tmp[256];
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (r <= 0)
		return;
	if ((size_t)r >= sizeof(tmp))
		r = sizeof(tmp) - 1; /* never happens: every piece is short */
	if (o->buf)
		memcpy(o->buf + o->n, tmp, (size_t)r);
	o->n += (size_t)r;
}

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define LO_FIRST 1
#else
#define LO_FIRST 0
#endif

/* "lo" for the word at the lower address of a native u64 on this host. */
static const char *half(uint32_t k, uint32_t base)
{
	return (k == base) == LO_FIRST ? "lo" : "hi";
}

/* The name of the context word at byte k (k < 40, k % 4 == 0): the label
 * of the first field of every opcode or of the opcode's payload
 * (lib/base/schema.def) whose slot the word overlaps, else the header's. */
static void field_name(char *dst, size_t len, uint32_t opcode, uint32_t k)
{
	const struct iour__schema_payload *pl = iour__schema_payload_of(opcode);
	const struct iour__schema_field *f;
	size_t i;

	for (i = 0; (f = iour__schema_field_at(i)); i++) {
		if (!f->label || k + 4 <= f->off || k >= f->off + f->bytes)
			continue;
		if (f->group != IOUR__SG_ANY && (!pl || pl->group != f->group))
			continue;
		if (f->bytes == 8)
			snprintf(dst, len, "%s.%s", f->label, half(k, f->off));
		else if (f->bytes == 16)
			snprintf(dst, len, "%s[%u]", f->label, (k - f->off) / 4);
		else
			snprintf(dst, len, "%s", f->label);
		return;
	}
	if (k == 8) {
		snprintf(dst, len, "opcode|sqe_flags|pdu_size");
		return;
	}
	if (k == 12) {
		snprintf(dst, len, "pad");
		return;
	}
	snprintf(dst, len, "pdu+%u", k - IOUR_CTX_OFF_PDU);
}

/* The name of the seccomp_data word at byte k (k < 64, k % 4 == 0). */
static void seccomp_field_name(char *dst, size_t len, uint32_t k)
{
	if (k == 0)
		snprintf(dst, len, "nr");
	else if (k == 4)
		snprintf(dst, len, "arch");
	else if (k < 16)
		snprintf(dst, len, "instruction_pointer.%s", half(k, 8));
	else
		snprintf(dst, len, "args[%u].%s", (k - 16) / 8, half(k, 16 + (k - 16) / 8 * 8));
}

/* A seccomp return value: SECCOMP_RET_<action>, with its data where the
 * action has some. */
static void seccomp_ret(char *dst, size_t len, uint32_t k)
{
	uint32_t data = k & SECCOMP_DATA_MASK;

	switch (k & SECCOMP_ACTION_MASK) {
	case SECCOMP_ACT_KILL_PROCESS:
		snprintf(dst, len, "SECCOMP_RET_KILL_PROCESS");
		break;
	case SECCOMP_ACT_KILL_THREAD:
		snprintf(dst, len, "SECCOMP_RET_KILL_THREAD");
		break;
	case SECCOMP_ACT_TRAP:
		snprintf(dst, len, "SECCOMP_RET_TRAP(%u)", data);
		break;
	case SECCOMP_ACT_ERRNO:
		snprintf(dst, len, "SECCOMP_RET_ERRNO(%u)", data);
		break;
	case SECCOMP_ACT_USER_NOTIF:
		snprintf(dst, len, "SECCOMP_RET_USER_NOTIF");
		break;
	case SECCOMP_ACT_TRACE:
		snprintf(dst, len, "SECCOMP_RET_TRACE(%u)", data);
		break;
	case SECCOMP_ACT_LOG:
		snprintf(dst, len, "SECCOMP_RET_LOG");
		break;
	case SECCOMP_ACT_ALLOW:
		snprintf(dst, len, "SECCOMP_RET_ALLOW");
		break;
	default:
		snprintf(dst, len, "unknown action: kills the process");
		break;
	}
}

static const char *alu_name(uint16_t op)
{
	switch (op) {
	case KBPF_ADD:
		return "add";
	case KBPF_SUB:
		return "sub";
	case KBPF_MUL:
		return "mul";
	case KBPF_DIV:
		return "div";
	case KBPF_OR:
		return "or";
	case KBPF_AND:
		return "and";
	case KBPF_LSH:
		return "lsh";
	case KBPF_RSH:
		return "rsh";
	case KBPF_NEG:
		return "neg";
	case KBPF_MOD:
		return "mod";
	case KBPF_XOR:
		return "xor";
	default:
		return NULL;
	}
}

static const char *jmp_name(uint16_t op)
{
	switch (op) {
	case KBPF_JA:
		return "ja";
	case KBPF_JEQ:
		return "jeq";
	case KBPF_JGT:
		return "jgt";
	case KBPF_JGE:
		return "jge";
	case KBPF_JSET:
		return "jset";
	default:
		return NULL;
	}
}

/* "#0" or "#0x..". */
static void imm(char *dst, size_t len, uint32_t k)
{
	if (k == 0)
		snprintf(dst, len, "#0");
	else
		snprintf(dst, len, "#0x%x", k);
}

/* One instruction as text: mnemonic in `txt`, optional remark in `rem`.
 * `seccomp`: the program is a seccomp filter (struct seccomp_data,
 * SECCOMP_RET_* returns), else an io_uring filter of `opcode`. */
static void insn_text(const struct iour_insn *in, size_t pc, uint32_t opcode, bool seccomp,
		      char *txt, size_t tlen, char *rem, size_t rlen)
{
	uint16_t c = in->code;
	uint32_t k = in->k;
	char a[48];
	const char *name;

	rem[0] = '\0';
	switch (c) {
	case KBPF_LD | KBPF_W | KBPF_ABS:
		if (seccomp && k < SECCOMP_DATA_SIZE && !(k & 3)) {
			seccomp_field_name(a, sizeof(a), k);
			snprintf(txt, tlen, "ld %s", a);
			snprintf(rem, rlen, "[%u]", k);
		} else if (!seccomp && k < IOUR_CTX_SIZE && !(k & 3)) {
			field_name(a, sizeof(a), opcode, k);
			snprintf(txt, tlen, "ld %s", a);
			snprintf(rem, rlen, "[%u]", k);
		} else {
			snprintf(txt, tlen, "ld [%u]", k);
			snprintf(rem, rlen, "outside %s",
				 seccomp ? "seccomp_data" : "the io_uring context");
		}
		return;
	case KBPF_LD | KBPF_H | KBPF_ABS:
	case KBPF_LD | KBPF_B | KBPF_ABS:
		snprintf(txt, tlen, "ld%s [%u]", KBPF_SIZE(c) == KBPF_H ? "h" : "b", k);
		return;
	case KBPF_LD | KBPF_W | KBPF_IND:
	case KBPF_LD | KBPF_H | KBPF_IND:
	case KBPF_LD | KBPF_B | KBPF_IND:
		snprintf(txt, tlen, "ld%s [x+%u]",
			 KBPF_SIZE(c) == KBPF_W ? "" :
			 KBPF_SIZE(c) == KBPF_H ? "h" :
						  "b",
			 k);
		return;
	case KBPF_LDX | KBPF_B | KBPF_MSH:
		snprintf(txt, tlen, "ldxb 4*([%u]&0xf)", k);
		return;
	case KBPF_LD | KBPF_W | KBPF_LEN:
	case KBPF_LDX | KBPF_W | KBPF_LEN:
		snprintf(txt, tlen, "%s len", KBPF_CLASS(c) == KBPF_LD ? "ld" : "ldx");
		snprintf(rem, rlen, "= %d", seccomp ? SECCOMP_DATA_SIZE : IOUR_CTX_SIZE);
		return;
	case KBPF_LD | KBPF_IMM:
	case KBPF_LDX | KBPF_IMM:
		imm(a, sizeof(a), k);
		snprintf(txt, tlen, "%s %s", KBPF_CLASS(c) == KBPF_LD ? "ld" : "ldx", a);
		return;
	case KBPF_LD | KBPF_MEM:
	case KBPF_LDX | KBPF_MEM:
		snprintf(txt, tlen, "%s M[%u]", KBPF_CLASS(c) == KBPF_LD ? "ld" : "ldx", k);
		return;
	case KBPF_ST:
	case KBPF_STX:
		snprintf(txt, tlen, "%s M[%u]", c == KBPF_ST ? "st" : "stx", k);
		return;
	case KBPF_MISC | KBPF_TAX:
		snprintf(txt, tlen, "tax");
		return;
	case KBPF_MISC | KBPF_TXA:
		snprintf(txt, tlen, "txa");
		return;
	case KBPF_RET | KBPF_K:
		imm(a, sizeof(a), k);
		snprintf(txt, tlen, "ret %s", a);
		if (seccomp)
			seccomp_ret(rem, rlen, k);
		else
			snprintf(rem, rlen, "%s", k ? "allow" : "deny");
		return;
	case KBPF_RET | KBPF_A:
		snprintf(txt, tlen, "ret a");
		snprintf(rem, rlen, "%s", seccomp ? "the action in A" : "allow if A != 0");
		return;
	case KBPF_ALU | KBPF_NEG:
		snprintf(txt, tlen, "neg");
		return;
	case KBPF_JMP | KBPF_JA:
		snprintf(txt, tlen, "ja L%llu", (unsigned long long)pc + 1 + k);
		return;
	default:
		break;
	}
	if (KBPF_CLASS(c) == KBPF_ALU && !(c & ~0xfcU) && (name = alu_name(KBPF_OP(c))) &&
	    KBPF_OP(c) != KBPF_NEG) {
		if (KBPF_SRC(c) == KBPF_X)
			snprintf(txt, tlen, "%s x", name);
		else {
			imm(a, sizeof(a), k);
			snprintf(txt, tlen, "%s %s", name, a);
		}
		return;
	}
	if (KBPF_CLASS(c) == KBPF_JMP && !(c & ~0xfdU) && (name = jmp_name(KBPF_OP(c))) &&
	    KBPF_OP(c) != KBPF_JA) {
		if (KBPF_SRC(c) == KBPF_X)
			snprintf(a, sizeof(a), "x");
		else
			imm(a, sizeof(a), k);
		snprintf(txt, tlen, "%s %s, L%u, L%u", name, a, (unsigned)(pc + 1 + in->jt),
			 (unsigned)(pc + 1 + in->jf));
		return;
	}
	snprintf(txt, tlen, ".insn 0x%04x, %u, %u, 0x%x", c, in->jt, in->jf, k);
	snprintf(rem, rlen, "unknown instruction");
}

static void emit_text(struct out *o, const struct iour_insn *insns, size_t cnt, uint32_t opcode,
		      bool seccomp)
{
	char txt[128], rem[64], lab[24];
	size_t pc, width = 2, m;

	for (m = cnt > 0 ? cnt - 1 : 0; m >= 10; m /= 10)
		width++;
	width += 2; /* "L" + digits + ":" + one space */
	for (pc = 0; pc < cnt; pc++) {
		insn_text(&insns[pc], pc, opcode, seccomp, txt, sizeof(txt), rem, sizeof(rem));
		snprintf(lab, sizeof(lab), "L%u:", (unsigned)pc);
		if (rem[0])
			outf(o, "%-*s%-30s ; %s\n", (int)width, lab, txt, rem);
		else
			outf(o, "%-*s%s\n", (int)width, lab, txt);
	}
}

/* An operation name in capitals ("jeq" -> "JEQ"); up has room for 8. */
static const char *upper(char *up, const char *name)
{
	size_t i;

	for (i = 0; i < 7 && name[i]; i++)
		up[i] = (char)(name[i] - 'a' + 'A');
	up[i] = '\0';
	return up;
}

/* The symbolic spelling of a code the generic checker knows (*known set),
 * else the number in hex (*known cleared). */
static void code_name(char *dst, size_t len, uint16_t c, bool *known)
{
	static const char *const cls[] = { "BPF_LD",  "BPF_LDX", "BPF_ST",  "BPF_STX",
					   "BPF_ALU", "BPF_JMP", "BPF_RET", "BPF_MISC" };
	const char *name;
	char up[8];

	*known = true;
	switch (c) {
	case KBPF_LD | KBPF_W | KBPF_ABS:
	case KBPF_LD | KBPF_H | KBPF_ABS:
	case KBPF_LD | KBPF_B | KBPF_ABS:
	case KBPF_LD | KBPF_W | KBPF_IND:
	case KBPF_LD | KBPF_H | KBPF_IND:
	case KBPF_LD | KBPF_B | KBPF_IND:
	case KBPF_LD | KBPF_W | KBPF_LEN:
	case KBPF_LDX | KBPF_W | KBPF_LEN:
	case KBPF_LDX | KBPF_B | KBPF_MSH:
		snprintf(dst, len, "%s | %s | %s", cls[KBPF_CLASS(c)],
			 KBPF_SIZE(c) == KBPF_W ? "BPF_W" :
			 KBPF_SIZE(c) == KBPF_H ? "BPF_H" :
						  "BPF_B",
			 KBPF_MODE(c) == KBPF_ABS ? "BPF_ABS" :
			 KBPF_MODE(c) == KBPF_IND ? "BPF_IND" :
			 KBPF_MODE(c) == KBPF_LEN ? "BPF_LEN" :
						    "BPF_MSH");
		return;
	case KBPF_LD | KBPF_IMM:
	case KBPF_LDX | KBPF_IMM:
		snprintf(dst, len, "%s | BPF_IMM", cls[KBPF_CLASS(c)]);
		return;
	case KBPF_LD | KBPF_MEM:
	case KBPF_LDX | KBPF_MEM:
		snprintf(dst, len, "%s | BPF_MEM", cls[KBPF_CLASS(c)]);
		return;
	case KBPF_ST:
	case KBPF_STX:
		snprintf(dst, len, "%s", cls[c]);
		return;
	case KBPF_MISC | KBPF_TAX:
		snprintf(dst, len, "BPF_MISC | BPF_TAX");
		return;
	case KBPF_MISC | KBPF_TXA:
		snprintf(dst, len, "BPF_MISC | BPF_TXA");
		return;
	case KBPF_RET | KBPF_K:
		snprintf(dst, len, "BPF_RET | BPF_K");
		return;
	case KBPF_RET | KBPF_A:
		snprintf(dst, len, "BPF_RET | BPF_A");
		return;
	case KBPF_ALU | KBPF_NEG:
		snprintf(dst, len, "BPF_ALU | BPF_NEG");
		return;
	case KBPF_JMP | KBPF_JA:
		snprintf(dst, len, "BPF_JMP | BPF_JA");
		return;
	default:
		break;
	}
	if (KBPF_CLASS(c) == KBPF_ALU && !(c & ~0xfcU) && (name = alu_name(KBPF_OP(c))) &&
	    KBPF_OP(c) != KBPF_NEG) {
		snprintf(dst, len, "BPF_ALU | BPF_%s | %s", upper(up, name),
			 KBPF_SRC(c) == KBPF_X ? "BPF_X" : "BPF_K");
		return;
	}
	if (KBPF_CLASS(c) == KBPF_JMP && !(c & ~0xfdU) && (name = jmp_name(KBPF_OP(c))) &&
	    KBPF_OP(c) != KBPF_JA) {
		snprintf(dst, len, "BPF_JMP | BPF_%s | %s", upper(up, name),
			 KBPF_SRC(c) == KBPF_X ? "BPF_X" : "BPF_K");
		return;
	}
	*known = false;
	snprintf(dst, len, "0x%04x", c);
}

/* k in the C initialiser: offsets and scratch indexes in decimal, other
 * values from 10 up in hexadecimal. */
static void c_k(char *dst, size_t len, uint16_t code, uint32_t k)
{
	bool offset = code == KBPF_ST || code == KBPF_STX ||
		      ((KBPF_CLASS(code) == KBPF_LD || KBPF_CLASS(code) == KBPF_LDX) &&
		       KBPF_MODE(code) != KBPF_IMM && k < 0x10000);

	if (k < 10 || offset)
		snprintf(dst, len, "%u", k);
	else
		snprintf(dst, len, "0x%x", k);
}

static void emit_c(struct out *o, const struct iour_insn *insns, size_t cnt, uint32_t opcode,
		   bool seccomp)
{
	char txt[128], rem[64], code[48], kb[16];
	size_t pc;

	outf(o, "struct sock_filter filter[] = {\n");
	for (pc = 0; pc < cnt; pc++) {
		const struct iour_insn *in = &insns[pc];
		bool known, cond;

		insn_text(in, pc, opcode, seccomp, txt, sizeof(txt), rem, sizeof(rem));
		code_name(code, sizeof(code), in->code, &known);
		c_k(kb, sizeof(kb), in->code, in->k);
		cond = known && KBPF_CLASS(in->code) == KBPF_JMP && KBPF_OP(in->code) != KBPF_JA;
		if (cond)
			outf(o, "\tBPF_JUMP(%s, %s, %u, %u),", code, kb, in->jt, in->jf);
		else if (known && in->jt == 0 && in->jf == 0)
			outf(o, "\tBPF_STMT(%s, %s),", code, kb);
		else
			outf(o, "\t{ %s, %u, %u, %s },", code, in->jt, in->jf, kb);
		if (rem[0] && rem[0] != '[') /* the offset is in the code already */
			outf(o, " /* L%u: %s (%s) */\n", (unsigned)pc, txt, rem);
		else
			outf(o, " /* L%u: %s */\n", (unsigned)pc, txt);
	}
	outf(o, "};\n");
}

static void emit(struct out *o, const struct iour_insn *insns, size_t cnt, uint32_t opcode,
		 uint32_t format)
{
	bool seccomp = format & IOUR_DISASM_SECCOMP;

	if ((format & ~IOUR_DISASM_SECCOMP) == IOUR_DISASM_TEXT)
		emit_text(o, insns, cnt, opcode, seccomp);
	else
		emit_c(o, insns, cnt, opcode, seccomp);
}

/* Documented in include/iouring_restrict/cbpf.h */
int iour_cbpf_disasm(const struct iour_insn *insns, size_t cnt, uint32_t opcode, uint32_t format,
		     char *buf, size_t *len)
{
	struct out o = { NULL, 0 };
	uint32_t base = format & ~IOUR_DISASM_SECCOMP;
	size_t need;

	if (!len || (!insns && cnt > 0) || cnt > IOUR_MAX_INSNS)
		return -EINVAL;
	if (opcode != IOUR_OPCODE_ANY && opcode >= KIO_OP_LAST_NEWEST)
		return -EINVAL;
	if (base != IOUR_DISASM_TEXT && base != IOUR_DISASM_C_ARRAY && base != IOUR_DISASM_RAW)
		return -EINVAL;
	/* a seccomp program has no io_uring opcode */
	if ((format & IOUR_DISASM_SECCOMP) && opcode != IOUR_OPCODE_ANY)
		return -EINVAL;
	format = base == IOUR_DISASM_RAW ? base : format;

	if (format == IOUR_DISASM_RAW) {
		need = cnt * sizeof(*insns);
	} else {
		emit(&o, insns, cnt, opcode, format);
		need = o.n + 1;
	}
	if (!buf) {
		*len = need;
		return 0;
	}
	if (*len < need) {
		*len = need;
		return -ERANGE;
	}
	if (format == IOUR_DISASM_RAW) {
		if (need)
			memcpy(buf, insns, need);
	} else {
		o.buf = buf;
		o.n = 0;
		emit(&o, insns, cnt, opcode, format);
		buf[o.n] = '\0';
	}
	*len = need;
	return 0;
}
