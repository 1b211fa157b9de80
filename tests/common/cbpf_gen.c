/* SPDX-License-Identifier: MIT */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "cbpf_gen.h"
#include "base/uapi.h"

void gen_seed(struct gen_rng *r, uint64_t seed)
{
	r->s = seed ? seed : 0x9e3779b97f4a7c15ULL;
}

uint64_t gen_u64(struct gen_rng *r)
{
	r->s ^= r->s >> 12;
	r->s ^= r->s << 25;
	r->s ^= r->s >> 27;
	return r->s * 0x2545f4914f6cdd1dULL;
}

uint32_t gen_u32(struct gen_rng *r)
{
	return (uint32_t)(gen_u64(r) >> 32);
}

uint32_t gen_below(struct gen_rng *r, uint32_t n)
{
	return (uint32_t)(((gen_u64(r) >> 32) * (uint64_t)n) >> 32);
}

bool gen_chance(struct gen_rng *r, unsigned pct)
{
	return gen_below(r, 100) < pct;
}

uint64_t gen_test_seed(uint64_t def)
{
	const char *s = getenv("IOUR_TEST_SEED");

	if (s && *s)
		return strtoull(s, NULL, 0);
	return def;
}

int gen_test_long(void)
{
	const char *s = getenv("IOUR_TEST_LONG");

	return s && *s && strcmp(s, "0") != 0;
}

uint64_t gen_test_count(uint64_t dflt, uint64_t lng)
{
	const char *q = getenv("IOUR_TEST_QUICK");

	if (gen_test_long())
		return lng;
	if (q && *q && strcmp(q, "0") != 0)
		return dflt / 10 ? dflt / 10 : 1;
	return dflt;
}

#define PICK(r, arr) ((arr)[gen_below((r), (uint32_t)(sizeof(arr) / sizeof((arr)[0])))])

/* Every code io_uring's checker accepts. */
static const uint16_t iouring_codes[] = {
	KBPF_LD | KBPF_W | KBPF_ABS,	 KBPF_LD | KBPF_W | KBPF_LEN,
	KBPF_LDX | KBPF_W | KBPF_LEN,	 KBPF_RET | KBPF_K,
	KBPF_RET | KBPF_A,		 KBPF_ALU | KBPF_ADD | KBPF_K,
	KBPF_ALU | KBPF_ADD | KBPF_X,	 KBPF_ALU | KBPF_SUB | KBPF_K,
	KBPF_ALU | KBPF_SUB | KBPF_X,	 KBPF_ALU | KBPF_MUL | KBPF_K,
	KBPF_ALU | KBPF_MUL | KBPF_X,	 KBPF_ALU | KBPF_DIV | KBPF_K,
	KBPF_ALU | KBPF_DIV | KBPF_X,	 KBPF_ALU | KBPF_AND | KBPF_K,
	KBPF_ALU | KBPF_AND | KBPF_X,	 KBPF_ALU | KBPF_OR | KBPF_K,
	KBPF_ALU | KBPF_OR | KBPF_X,	 KBPF_ALU | KBPF_XOR | KBPF_K,
	KBPF_ALU | KBPF_XOR | KBPF_X,	 KBPF_ALU | KBPF_LSH | KBPF_K,
	KBPF_ALU | KBPF_LSH | KBPF_X,	 KBPF_ALU | KBPF_RSH | KBPF_K,
	KBPF_ALU | KBPF_RSH | KBPF_X,	 KBPF_ALU | KBPF_NEG,
	KBPF_LD | KBPF_IMM,		 KBPF_LDX | KBPF_IMM,
	KBPF_MISC | KBPF_TAX,		 KBPF_MISC | KBPF_TXA,
	KBPF_LD | KBPF_MEM,		 KBPF_LDX | KBPF_MEM,
	KBPF_ST,			 KBPF_STX,
	KBPF_JMP | KBPF_JA,		 KBPF_JMP | KBPF_JEQ | KBPF_K,
	KBPF_JMP | KBPF_JEQ | KBPF_X,	 KBPF_JMP | KBPF_JGE | KBPF_K,
	KBPF_JMP | KBPF_JGE | KBPF_X,	 KBPF_JMP | KBPF_JGT | KBPF_K,
	KBPF_JMP | KBPF_JGT | KBPF_X,	 KBPF_JMP | KBPF_JSET | KBPF_K,
	KBPF_JMP | KBPF_JSET | KBPF_X,
};

/* Codes only the generic checker accepts. */
static const uint16_t generic_only_codes[] = {
	KBPF_ALU | KBPF_MOD | KBPF_K, KBPF_ALU | KBPF_MOD | KBPF_X, KBPF_LD | KBPF_H | KBPF_ABS,
	KBPF_LD | KBPF_B | KBPF_ABS,  KBPF_LD | KBPF_W | KBPF_IND,  KBPF_LD | KBPF_H | KBPF_IND,
	KBPF_LD | KBPF_B | KBPF_IND,  KBPF_LDX | KBPF_B | KBPF_MSH,
};

/* Codes no checker accepts, close to real ones. */
static const uint16_t bad_codes[] = {
	KBPF_RET | KBPF_X,	       KBPF_MISC | 0x40,	    KBPF_ALU | 0xb0,
	KBPF_ALU | 0xc0 | KBPF_X,      KBPF_ALU | KBPF_NEG | KBPF_X, KBPF_JMP | 0x50,
	KBPF_JMP | KBPF_JA | KBPF_X,   KBPF_LD | KBPF_W | KBPF_MSH, KBPF_LDX | KBPF_W | KBPF_ABS,
	KBPF_LD | 0x18 | KBPF_ABS,     KBPF_LDX | KBPF_H | KBPF_MEM, KBPF_ST | KBPF_X,
	KBPF_RET | 0x18,	       0x0100 | KBPF_RET,	    0xffff,
};

static uint16_t random_code(struct gen_rng *r)
{
	unsigned p = gen_below(r, 100);

	if (p < 78)
		return PICK(r, iouring_codes);
	if (p < 90)
		return PICK(r, generic_only_codes);
	if (p < 97)
		return PICK(r, bad_codes);
	return (uint16_t)gen_u32(r);
}

static uint32_t interesting_k(struct gen_rng *r)
{
	static const uint32_t v[] = { 0, 1, 2, 3, 4, 7, 8, 15, 16, 31, 32, 33, 39, 40, 41, 63, 64,
				      0xff, 0x100, 0x7fffffff, 0x80000000, 0xfffffffe, 0xffffffff };

	return gen_chance(r, 70) ? PICK(r, v) : gen_u32(r);
}

static uint32_t load_k(struct gen_rng *r)
{
	unsigned p = gen_below(r, 100);

	if (p < 45)
		return 4 * gen_below(r, 17); /* aligned 0..64 */
	if (p < 60)
		return gen_below(r, 70); /* any small */
	if (p < 85)
		return 0xfffff000U + gen_below(r, 72); /* ancillary area */
	if (p < 90)
		return 0xfff00000U + gen_below(r, 8); /* SKF_NET_OFF */
	if (p < 95)
		return 0xffe00000U + gen_below(r, 8); /* SKF_LL_OFF */
	return gen_u32(r);
}

static uint32_t operand_k(struct gen_rng *r, uint16_t code, size_t pc, size_t cnt)
{
	switch (KBPF_CLASS(code)) {
	case KBPF_LD:
	case KBPF_LDX:
		if (KBPF_MODE(code) == KBPF_MEM)
			return gen_chance(r, 90) ? gen_below(r, 18) : gen_u32(r);
		if (KBPF_MODE(code) == KBPF_ABS || KBPF_MODE(code) == KBPF_IND ||
		    KBPF_MODE(code) == KBPF_MSH)
			return load_k(r);
		return interesting_k(r);
	case KBPF_ST:
	case KBPF_STX:
		return gen_chance(r, 90) ? gen_below(r, 18) : gen_u32(r);
	case KBPF_ALU:
		if (KBPF_OP(code) == KBPF_LSH || KBPF_OP(code) == KBPF_RSH)
			return gen_chance(r, 85) ? gen_below(r, 36) : gen_u32(r);
		if (KBPF_OP(code) == KBPF_DIV || KBPF_OP(code) == KBPF_MOD)
			return gen_chance(r, 30) ? 0 : interesting_k(r);
		return interesting_k(r);
	case KBPF_JMP:
		if (KBPF_OP(code) == KBPF_JA) {
			uint32_t room = (uint32_t)(cnt - pc - 1);

			if (gen_chance(r, 70))
				return gen_below(r, room + 2);
			if (gen_chance(r, 50))
				return room - 1 + gen_below(r, 3) - 1;
			return interesting_k(r);
		}
		return interesting_k(r);
	default:
		return interesting_k(r);
	}
}

static uint8_t cond_off(struct gen_rng *r, size_t pc, size_t cnt)
{
	size_t room = cnt - pc - 1; /* valid offsets: 0 .. room - 1 */

	if (gen_chance(r, 80))
		return (uint8_t)gen_below(r, (uint32_t)(room < 255 ? room + 1 : 256));
	if (gen_chance(r, 50) && room >= 1 && room <= 256)
		return (uint8_t)(room - 1 + gen_below(r, 2));
	return (uint8_t)gen_below(r, 256);
}

static void fill_insn(struct gen_rng *r, struct iour_insn *in, uint16_t code, size_t pc,
		      size_t cnt)
{
	in->code = code;
	in->k = operand_k(r, code, pc, cnt);
	if (KBPF_CLASS(code) == KBPF_JMP && KBPF_OP(code) != KBPF_JA) {
		in->jt = cond_off(r, pc, cnt);
		in->jf = cond_off(r, pc, cnt);
	} else if (gen_chance(r, 10)) {
		/* Ignored by the checkers for non-conditional codes. */
		in->jt = (uint8_t)gen_u32(r);
		in->jf = (uint8_t)gen_u32(r);
	} else {
		in->jt = in->jf = 0;
	}
}

size_t gen_near_valid(struct gen_rng *r, struct iour_insn *out, size_t max)
{
	size_t cnt, pc, nst = 0;
	unsigned p = gen_below(r, 1000);

	if (p < 800)
		cnt = 1 + gen_below(r, 16);
	else if (p < 970)
		cnt = 17 + gen_below(r, 48);
	else if (p < 995)
		cnt = 200 + gen_below(r, 400);
	else
		cnt = IOUR_MAX_INSNS - 1 + gen_below(r, 3); /* around the limit */
	if (cnt > max)
		cnt = max;

	/* Often initialise a few scratch words first, so reads can pass. */
	if (cnt > 2 && gen_chance(r, 50)) {
		nst = 1 + gen_below(r, 3);
		if (nst > cnt - 1)
			nst = cnt - 1;
	}
	for (pc = 0; pc < cnt; pc++) {
		uint16_t code;

		if (pc < nst)
			code = gen_chance(r, 50) ? KBPF_ST : KBPF_STX;
		else if (pc == cnt - 1 && gen_chance(r, 88))
			code = gen_chance(r, 60) ? KBPF_RET | KBPF_K : KBPF_RET | KBPF_A;
		else
			code = random_code(r);
		fill_insn(r, &out[pc], code, pc, cnt);
		if (pc < nst)
			out[pc].k = gen_below(r, 16);
	}
	return cnt;
}

void gen_mutate(struct gen_rng *r, struct iour_insn *prog, size_t cnt)
{
	size_t pc = gen_below(r, (uint32_t)cnt);
	struct iour_insn *in = &prog[pc];

	switch (gen_below(r, 5)) {
	case 0:
		in->code = random_code(r);
		break;
	case 1:
		in->jt = (uint8_t)(in->jt + gen_below(r, 3) - 1);
		break;
	case 2:
		in->jf = (uint8_t)(in->jf + gen_below(r, 3) - 1);
		break;
	case 3:
		in->k += gen_below(r, 9) - 4;
		break;
	default:
		in->k = operand_k(r, in->code, pc, cnt);
		break;
	}
}

static const uint16_t alu_ops[] = { KBPF_ADD, KBPF_SUB, KBPF_MUL, KBPF_DIV, KBPF_OR,
				    KBPF_AND, KBPF_LSH, KBPF_RSH, KBPF_XOR };
static const uint16_t jmp_ops[] = { KBPF_JEQ, KBPF_JGT, KBPF_JGE, KBPF_JSET };

static uint32_t ret_k(struct gen_rng *r)
{
	static const uint32_t v[] = { 0, 0, 1, 5, 39, 40, 41, 0x7fff0000, 0xffffffff };

	return gen_chance(r, 85) ? PICK(r, v) : gen_u32(r);
}

size_t gen_runnable(struct gen_rng *r, struct iour_insn *out, size_t max)
{
	size_t cnt = 2 + gen_below(r, 40), pc;
	uint16_t stored = 0;

	if (cnt > max)
		cnt = max;
	for (pc = 0; pc + 1 < cnt; pc++) {
		struct iour_insn *in = &out[pc];
		size_t room = cnt - pc - 1; /* jump offsets 0 .. room - 1 */
		unsigned p = gen_below(r, 100);

		memset(in, 0, sizeof(*in));
		if (p < 22) {
			in->code = KBPF_LD | KBPF_W | KBPF_ABS;
			in->k = 4 * gen_below(r, 10);
		} else if (p < 25) {
			in->code = gen_chance(r, 50) ? KBPF_LD | KBPF_W | KBPF_LEN
						     : KBPF_LDX | KBPF_W | KBPF_LEN;
		} else if (p < 32) {
			in->code = gen_chance(r, 50) ? KBPF_LD | KBPF_IMM : KBPF_LDX | KBPF_IMM;
			in->k = interesting_k(r);
		} else if (p < 55) {
			uint16_t op = PICK(r, alu_ops);
			bool x = gen_chance(r, 40);

			in->code = (uint16_t)(KBPF_ALU | op | (x ? KBPF_X : KBPF_K));
			if (!x) {
				if (op == KBPF_LSH || op == KBPF_RSH)
					in->k = gen_below(r, 32);
				else if (op == KBPF_DIV)
					in->k = gen_chance(r, 50) ? 1 + gen_below(r, 16)
								  : gen_u32(r) | 1;
				else
					in->k = interesting_k(r);
			}
		} else if (p < 57) {
			in->code = KBPF_ALU | KBPF_NEG;
		} else if (p < 63) {
			in->code = gen_chance(r, 50) ? KBPF_ST : KBPF_STX;
			in->k = gen_below(r, 16);
			stored |= (uint16_t)(1U << in->k);
		} else if (p < 68 && stored) {
			uint32_t i;

			do
				i = gen_below(r, 16);
			while (!(stored & (1U << i)));
			in->code = gen_chance(r, 50) ? KBPF_LD | KBPF_MEM : KBPF_LDX | KBPF_MEM;
			in->k = i;
		} else if (p < 73) {
			in->code = gen_chance(r, 50) ? KBPF_MISC | KBPF_TAX : KBPF_MISC | KBPF_TXA;
		} else if (p < 77 && room > 1) {
			in->code = KBPF_JMP | KBPF_JA;
			in->k = gen_below(r, (uint32_t)(room < 8 ? room : 8));
		} else if (p < 96 && room > 1) {
			uint32_t lim = (uint32_t)(room < 12 ? room : 12);
			uint16_t op = PICK(r, jmp_ops);

			in->code = (uint16_t)(KBPF_JMP | op | (gen_chance(r, 30) ? KBPF_X : KBPF_K));
			in->k = interesting_k(r);
			in->jt = (uint8_t)gen_below(r, lim);
			in->jf = (uint8_t)gen_below(r, lim);
		} else {
			in->code = gen_chance(r, 50) ? KBPF_RET | KBPF_A : KBPF_RET | KBPF_K;
			in->k = ret_k(r);
		}
	}
	memset(&out[cnt - 1], 0, sizeof(out[0]));
	out[cnt - 1].code = gen_chance(r, 50) ? KBPF_RET | KBPF_A : KBPF_RET | KBPF_K;
	out[cnt - 1].k = ret_k(r);
	return cnt;
}

static uint32_t edge_word(struct gen_rng *r)
{
	static const uint32_t v[] = { 0, 0, 0, 1, 2, 3, 10, 40, 0xff, 0x7fffffff, 0x80000000,
				      0xffffffff, 0x0000ffff, 0xffff0000 };

	if (gen_chance(r, 40))
		return PICK(r, v);
	if (gen_chance(r, 50))
		return gen_below(r, 64);
	return gen_u32(r);
}

void gen_ctx(struct gen_rng *r, uint8_t ctx[40])
{
	static const uint32_t ops[] = { IOUR_OP_SOCKET,	IOUR_OP_OPENAT, IOUR_OP_OPENAT2,
					IOUR_OP_CONNECT, IOUR_OP_NOP,    22 };
	uint32_t w[10];
	uint32_t op, flags, a, b, c;
	uint64_t ud;
	int i;

	if (gen_chance(r, 50)) {
		for (i = 0; i < 10; i++)
			w[i] = edge_word(r);
		memcpy(ctx, w, 40);
		return;
	}
	op = gen_chance(r, 85) ? PICK(r, ops) : gen_below(r, 65);
	/* One draw per statement: argument evaluation order is unspecified,
	 * and a seed must give the same contexts with every compiler. */
	flags = gen_u32(r) & 0x7f;
	ud = gen_chance(r, 50) ? gen_u64(r) : gen_below(r, 1000);
	iour_ctx_generic(ctx, 40, op, flags, ud);
	switch (op) {
	case IOUR_OP_SOCKET: {
		static const uint32_t fam[] = { AF_INET, AF_INET6, AF_UNIX, AF_NETLINK, 0, 255 };
		static const uint32_t ty[] = { SOCK_STREAM, SOCK_DGRAM, SOCK_RAW,
					       SOCK_STREAM | SOCK_CLOEXEC,
					       SOCK_DGRAM | SOCK_NONBLOCK, SOCK_SEQPACKET };
		a = PICK(r, fam);
		b = PICK(r, ty);
		c = gen_below(r, 20);
		iour_ctx_socket(ctx, 40, a, b, c);
		break;
	}
	case IOUR_OP_OPENAT:
	case IOUR_OP_OPENAT2: {
		static const uint32_t fl[] = { O_RDONLY, O_WRONLY | O_CREAT, O_RDWR | O_TRUNC,
					       O_PATH,	 O_CREAT | O_EXCL,   O_TMPFILE | O_RDWR,
					       O_DIRECTORY | O_CLOEXEC };
		uint64_t of = PICK(r, fl);

		of |= gen_chance(r, 20) ? gen_u32(r) & 0xfffff : 0;
		a = gen_below(r, 0x10000);
		b = op == IOUR_OP_OPENAT2 ? gen_below(r, 0x40) : 0;
		iour_ctx_open(ctx, 40, of, a, b);
		break;
	}
	case IOUR_OP_CONNECT: {
		struct sockaddr_in6 s6;
		struct sockaddr_in s4;
		uint32_t len;

		if (gen_chance(r, 50)) {
			memset(&s4, 0, sizeof(s4));
			s4.sin_family = AF_INET;
			s4.sin_port = htons((uint16_t)(gen_chance(r, 50) ? 80 : gen_u32(r)));
			s4.sin_addr.s_addr = gen_chance(r, 50) ? htonl(0x7f000001) : gen_u32(r);
			len = gen_chance(r, 80) ? sizeof(s4) : gen_below(r, sizeof(s4));
			iour_ctx_connect(ctx, 40, &s4, len);
		} else {
			memset(&s6, 0, sizeof(s6));
			s6.sin6_family = AF_INET6;
			s6.sin6_port = htons((uint16_t)gen_u32(r));
			for (i = 0; i < 16; i++)
				s6.sin6_addr.s6_addr[i] = (uint8_t)gen_u32(r);
			len = gen_chance(r, 80) ? sizeof(s6) : gen_below(r, sizeof(s6));
			iour_ctx_connect(ctx, 40, &s6, len);
		}
		break;
	}
	default:
		break;
	}
}
