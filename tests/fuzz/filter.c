/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: filter-builder calls decoded from bytes, compiled, and
 * every compiled program checked against a reference evaluation of the rules.
 * fuzz-requires: iour_filter__new iour_filter__add_rule iour_filter__compile
 *
 * The input is a sequence of commands (one byte each, then operands): add a
 * rule (mostly well-formed comparisons built from the field's domain, or a
 * well-formed rule with exactly one defect), set a default, install a raw
 * program, duplicate the filter, compile and check.  The harness keeps its
 * own copy of every rule it added and checks:
 *  - a well-formed rule is accepted; a rule with one defect is refused with
 *    the documented code for that defect (-EINVAL, -E2BIG, -EDOM,
 *    -EOPNOTSUPP, -ERANGE, -EEXIST) and the filter is unchanged;
 *  - iour_filter__opcodes() and iour_filter__opcode_info() agree with the
 *    model;
 *  - every compiled program passes the validator, is deterministic, is the
 *    same for a duplicate, respects max_insns (or fails with
 *    -IOUR_ERRNO__PROG_TOO_LARGE), declares the payload size exactly when
 *    it reads the payload, and is a single RET when its kind says the
 *    verdict is constant;
 *  - on contexts shaped as the kernel fills them (field values drawn from
 *    the rules' operands and their neighbours, and at random), the
 *    simulated verdict equals the first-matching-rule evaluation of the
 *    rules, which does not use cBPF at all; and the kernel's own cBPF
 *    engine (socket-filter oracle) gives the same verdict.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "fuzz_util.h"
#include "iouring_restrict/cbpf.h"
#include "iouring_restrict/errors.h"
#include "iouring_restrict/filter.h"
#include "kernel_oracle.h"

#define MAX_RULES 48 /* per input, all opcodes together */
#define MAX_SET 8
#define NCTX 24
#define OP_CONNECT 16
#define OP_OPENAT 18
#define OP_OPENAT2 28
#define OP_SOCKET 45

/* ---- the model */
struct mcmp {
	struct iour_cmp c;
	uint64_t set[MAX_SET];
};

struct mrule {
	uint32_t opcode, verdict;
	size_t n;
	struct mcmp cmps[4];
};

struct model {
	uint32_t fdefault;     /* the filter-wide default verdict */
	bool addr4_literal;    /* IOUR_FILTER_ADDR4_LITERAL */
	int8_t opdefault[256]; /* -1 none, else the verdict */
	bool raw[256];         /* a raw program is installed */
	struct iour_insn *raw_insns[256];
	size_t raw_cnt[256];
	struct mrule rules[MAX_RULES];
	size_t nrules;
};

static struct kernel_oracle oracle;
static uint64_t input_seed, compile_seq; /* per input: replays are exact */
static int have_oracle;
static unsigned long n_rules_ok, n_rules_refused, n_compiled, n_ctx, n_kernel, n_too_large;

static void print_stats(void)
{
	fprintf(stderr,
		"fuzz-stats: %lu rules added, %lu refused as documented, %lu programs compiled "
		"(%lu over max_insns), %lu contexts compared with the reference, %lu by the "
		"kernel\n",
		n_rules_ok, n_rules_refused, n_compiled, n_too_large, n_ctx, n_kernel);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	have_oracle = oracle_open(&oracle) == 0;
	atexit(print_stats);
	return 0;
}

/* ---- fields: which opcodes have them, and the bits a value may have */
static const uint32_t all_fields[] = {
	IOUR_FIELD_USER_DATA,       IOUR_FIELD_SQE_FLAGS,         IOUR_FIELD_SOCKET_FAMILY,
	IOUR_FIELD_SOCKET_TYPE,     IOUR_FIELD_SOCKET_TYPE_FLAGS, IOUR_FIELD_SOCKET_TYPE_RAW,
	IOUR_FIELD_SOCKET_PROTOCOL, IOUR_FIELD_OPEN_FLAGS,        IOUR_FIELD_OPEN_ACCMODE,
	IOUR_FIELD_OPEN_MODE,       IOUR_FIELD_OPEN_RESOLVE,      IOUR_FIELD_CONNECT_FAMILY,
	IOUR_FIELD_CONNECT_PORT,    IOUR_FIELD_CONNECT_ADDR4,     IOUR_FIELD_CONNECT_ADDR6,
};
#define NFIELDS (sizeof(all_fields) / sizeof(all_fields[0]))

static bool field_for_opcode(uint32_t field, uint32_t op)
{
	switch (field) {
	case IOUR_FIELD_USER_DATA:
	case IOUR_FIELD_SQE_FLAGS:
		return true;
	case IOUR_FIELD_SOCKET_FAMILY:
	case IOUR_FIELD_SOCKET_TYPE:
	case IOUR_FIELD_SOCKET_TYPE_FLAGS:
	case IOUR_FIELD_SOCKET_TYPE_RAW:
	case IOUR_FIELD_SOCKET_PROTOCOL:
		return op == OP_SOCKET;
	case IOUR_FIELD_OPEN_FLAGS:
	case IOUR_FIELD_OPEN_ACCMODE:
	case IOUR_FIELD_OPEN_MODE:
	case IOUR_FIELD_OPEN_RESOLVE:
		return op == OP_OPENAT || op == OP_OPENAT2;
	default:
		return op == OP_CONNECT;
	}
}

/* Bits a value of the field can have: operands outside them are -ERANGE. */
static uint64_t field_mask(uint32_t field)
{
	switch (field) {
	case IOUR_FIELD_SQE_FLAGS:
		return 0x7f;
	case IOUR_FIELD_SOCKET_TYPE:
		return 0xf;
	case IOUR_FIELD_SOCKET_TYPE_FLAGS:
		return SOCK_NONBLOCK | SOCK_CLOEXEC;
	case IOUR_FIELD_OPEN_ACCMODE:
		return 3;
	case IOUR_FIELD_CONNECT_FAMILY:
	case IOUR_FIELD_CONNECT_PORT:
		return 0xffff;
	case IOUR_FIELD_SOCKET_FAMILY:
	case IOUR_FIELD_SOCKET_TYPE_RAW:
	case IOUR_FIELD_SOCKET_PROTOCOL:
	case IOUR_FIELD_CONNECT_ADDR4:
		return 0xffffffffULL;
	default:
		return UINT64_MAX;
	}
}

static bool is_addr(uint32_t field)
{
	return field == IOUR_FIELD_CONNECT_ADDR4 || field == IOUR_FIELD_CONNECT_ADDR6;
}

/* ---- operands: "interesting" numbers around a mask */
static uint64_t pick_value(struct fz *in, uint64_t mask)
{
	uint8_t how = fz_u8(in) % 6;

	switch (how) {
	case 0:
		return 0;
	case 1:
		return mask;
	case 2:
		return fz_u8(in) & mask;
	case 3:
		return (1ULL << (fz_u8(in) % 64)) & mask;
	default:
		return fz_u64(in) & mask;
	}
}

static uint64_t nonzero(uint64_t v, uint64_t mask)
{
	return v ? v : (mask & (~mask + 1)); /* the lowest bit of the mask */
}

/* A well-formed comparison for `op` on a field of `opcode`. */
static void make_cmp(struct fz *in, uint32_t opcode, struct mcmp *m)
{
	struct iour_cmp *c = &m->c;
	uint32_t field;
	uint64_t mask, a, b;
	size_t i;

	memset(m, 0, sizeof(*m));
	c->sz = sizeof(*c);
	do
		field = all_fields[fz_u8(in) % NFIELDS];
	while (!field_for_opcode(field, opcode) && !fz_empty(in));
	if (!field_for_opcode(field, opcode))
		field = IOUR_FIELD_USER_DATA;
	c->field = field;
	mask = field_mask(field);
	if (field == IOUR_FIELD_CONNECT_ADDR6) {
		static const uint32_t ops6[] = { IOUR_CMP_EQ, IOUR_CMP_NE, IOUR_CMP_IN_PREFIX,
						 IOUR_CMP_NOT_IN_PREFIX };

		c->op = ops6[fz_u8(in) % 4];
		fz_bytes(in, c->addr6, 16);
		if (c->op >= IOUR_CMP_IN_PREFIX)
			c->arg = fz_u8(in) % 129;
		return;
	}
	c->op = 1 + fz_u8(in) % (is_addr(field) ? 16 : 14);
	switch (c->op) {
	case IOUR_CMP_MASKED_EQ:
		c->arg = nonzero(pick_value(in, mask), mask);
		c->value = pick_value(in, mask) & c->arg;
		break;
	case IOUR_CMP_ANY_BITS:
	case IOUR_CMP_ALL_BITS:
	case IOUR_CMP_NONE_BITS:
		c->value = nonzero(pick_value(in, mask), mask);
		break;
	case IOUR_CMP_IN_SET:
	case IOUR_CMP_NOT_IN_SET:
		c->set_len = 1 + fz_u8(in) % MAX_SET;
		for (i = 0; i < c->set_len; i++)
			m->set[i] = pick_value(in, mask);
		c->set = m->set;
		break;
	case IOUR_CMP_IN_RANGE:
	case IOUR_CMP_NOT_IN_RANGE:
		a = pick_value(in, mask);
		b = pick_value(in, mask);
		c->value = a < b ? a : b;
		c->arg = a < b ? b : a;
		break;
	case IOUR_CMP_IN_PREFIX:
	case IOUR_CMP_NOT_IN_PREFIX:
		c->value = pick_value(in, mask);
		c->arg = fz_u8(in) % 33;
		break;
	default: /* EQ NE LT LE GT GE */
		c->value = pick_value(in, mask);
		break;
	}
}

/* Give a well-formed rule exactly one defect; returns the documented error. */
static int add_defect(struct fz *in, uint32_t opcode, struct mcmp *m)
{
	struct iour_cmp *c = &m->c;
	uint64_t mask = field_mask(c->field);
	uint32_t f;
	size_t i;

	switch (fz_u8(in) % 9) {
	case 0: /* a field the opcode does not have */
		for (i = 0; i < NFIELDS; i++) {
			f = all_fields[(fz_u8(in) + i) % NFIELDS];
			if (!field_for_opcode(f, opcode)) {
				make_cmp(in,
					 f == IOUR_FIELD_SOCKET_FAMILY  ? OP_SOCKET :
					 f >= IOUR_FIELD_CONNECT_FAMILY ? OP_CONNECT :
					 f >= IOUR_FIELD_OPEN_FLAGS     ? OP_OPENAT :
									  OP_SOCKET,
					 m);
				if (!field_for_opcode(c->field, opcode))
					return -EDOM;
			}
		}
		break;
	case 1: /* an unknown operator */
		c->op = fz_u8(in) & 1 ? 0 : 17 + fz_u8(in);
		return -EINVAL;
	case 2: /* an operand bit the field cannot have */
		if (mask == UINT64_MAX || c->field == IOUR_FIELD_CONNECT_ADDR6)
			break;
		if (c->op == IOUR_CMP_IN_PREFIX || c->op == IOUR_CMP_NOT_IN_PREFIX ||
		    c->op == IOUR_CMP_NE || c->op == IOUR_CMP_EQ) {
			c->value |= ~mask & (1ULL << (63 - fz_u8(in) % 16));
			return -ERANGE;
		}
		break;
	case 3: /* a member the operator does not use is not zero */
		if (c->op <= IOUR_CMP_GE && c->field != IOUR_FIELD_CONNECT_ADDR6) {
			c->arg = 1 + fz_u8(in);
			return -EINVAL;
		}
		break;
	case 4: /* a malformed operand */
		if (c->op == IOUR_CMP_IN_SET || c->op == IOUR_CMP_NOT_IN_SET) {
			c->set_len = 0;
			return -EINVAL;
		}
		if (c->op == IOUR_CMP_MASKED_EQ) {
			c->arg = 0;
			c->value = 0;
			return -EINVAL;
		}
		if ((c->op == IOUR_CMP_IN_RANGE || c->op == IOUR_CMP_NOT_IN_RANGE) &&
		    c->value < c->arg) {
			uint64_t t = c->value;

			c->value = c->arg;
			c->arg = t;
			return -EINVAL;
		}
		if (c->op >= IOUR_CMP_ANY_BITS && c->op <= IOUR_CMP_NONE_BITS) {
			c->value = 0;
			return -EINVAL;
		}
		break;
	case 5: /* a prefix longer than the address */
		if (c->op == IOUR_CMP_IN_PREFIX || c->op == IOUR_CMP_NOT_IN_PREFIX) {
			c->arg = (c->field == IOUR_FIELD_CONNECT_ADDR6 ? 129 : 33) + fz_u8(in) % 8;
			return -ERANGE;
		}
		break;
	case 6: /* an operator that does not apply to the field */
		if (c->field == IOUR_FIELD_CONNECT_ADDR6) {
			memset(c->addr6, 0, sizeof(c->addr6));
			c->arg = 0;
			c->op = IOUR_CMP_LT + fz_u8(in) % 3;
			c->value = 1;
			return -EOPNOTSUPP;
		}
		if (!is_addr(c->field)) {
			c->op = IOUR_CMP_IN_PREFIX + (fz_u8(in) & 1);
			c->value = 0;
			c->arg = 8;
			c->set = NULL;
			c->set_len = 0;
			return -EOPNOTSUPP;
		}
		break;
	case 7: /* a set larger than the library takes (it must not read it) */
		if (c->op == IOUR_CMP_IN_SET || c->op == IOUR_CMP_NOT_IN_SET) {
			c->set_len = IOUR_FILTER_MAX_SET + 1 + fz_u8(in);
			return -E2BIG;
		}
		break;
	default: /* a set pointer without a set operator */
		if (c->op <= IOUR_CMP_GE && c->field != IOUR_FIELD_CONNECT_ADDR6) {
			c->set = m->set;
			c->set_len = 1;
			return -EINVAL;
		}
		break;
	}
	return 0;
}

/* ---- the reference: evaluate the rules on a context, without cBPF */
static uint64_t rd(const uint8_t *ctx, size_t off, size_t len)
{
	uint64_t v = 0;
	uint32_t w = 0;

	if (len == 8)
		memcpy(&v, ctx + off, 8);
	else {
		memcpy(&w, ctx + off, 4);
		v = w;
	}
	return v;
}

static uint64_t field_value(const uint8_t *ctx, uint32_t field)
{
	uint16_t be16;
	uint32_t be32;

	switch (field) {
	case IOUR_FIELD_USER_DATA:
		return rd(ctx, 0, 8);
	case IOUR_FIELD_SQE_FLAGS:
		return ctx[9];
	case IOUR_FIELD_SOCKET_FAMILY:
		return rd(ctx, 16, 4);
	case IOUR_FIELD_SOCKET_TYPE:
		return rd(ctx, 20, 4) & 0xf;
	case IOUR_FIELD_SOCKET_TYPE_FLAGS:
		return rd(ctx, 20, 4) & (SOCK_NONBLOCK | SOCK_CLOEXEC);
	case IOUR_FIELD_SOCKET_TYPE_RAW:
		return rd(ctx, 20, 4);
	case IOUR_FIELD_SOCKET_PROTOCOL:
		return rd(ctx, 24, 4);
	case IOUR_FIELD_OPEN_FLAGS:
		return rd(ctx, 16, 8);
	case IOUR_FIELD_OPEN_ACCMODE:
		return rd(ctx, 16, 8) & 3;
	case IOUR_FIELD_OPEN_MODE:
		return rd(ctx, 24, 8);
	case IOUR_FIELD_OPEN_RESOLVE:
		return rd(ctx, 32, 8);
	case IOUR_FIELD_CONNECT_FAMILY:
		return rd(ctx, 16, 4);
	case IOUR_FIELD_CONNECT_PORT:
		memcpy(&be16, ctx + 20, 2);
		return ntohs(be16);
	default: /* ADDR4 */
		memcpy(&be32, ctx + 24, 4);
		return ntohl(be32);
	}
}

static bool prefix_match(const uint8_t *a, const uint8_t *b, unsigned int bits)
{
	unsigned int i;

	for (i = 0; i < bits; i++)
		if (((a[i / 8] ^ b[i / 8]) >> (7 - i % 8)) & 1)
			return false;
	return true;
}

static bool cmp_holds(const struct iour_cmp *c, const uint8_t *ctx)
{
	uint64_t v, k = c->value;
	size_t i;
	bool r;

	if (c->field == IOUR_FIELD_CONNECT_ADDR6) {
		if (rd(ctx, 16, 4) != AF_INET6)
			return false;
		switch (c->op) {
		case IOUR_CMP_EQ:
			return !memcmp(ctx + 24, c->addr6, 16);
		case IOUR_CMP_NE:
			return memcmp(ctx + 24, c->addr6, 16) != 0;
		case IOUR_CMP_IN_PREFIX:
			return prefix_match(ctx + 24, c->addr6, (unsigned int)c->arg);
		default:
			return !prefix_match(ctx + 24, c->addr6, (unsigned int)c->arg);
		}
	}
	if (c->field == IOUR_FIELD_CONNECT_ADDR4 && rd(ctx, 16, 4) != AF_INET)
		return false;
	v = field_value(ctx, c->field);
	switch (c->op) {
	case IOUR_CMP_EQ:
		return v == k;
	case IOUR_CMP_NE:
		return v != k;
	case IOUR_CMP_LT:
		return v < k;
	case IOUR_CMP_LE:
		return v <= k;
	case IOUR_CMP_GT:
		return v > k;
	case IOUR_CMP_GE:
		return v >= k;
	case IOUR_CMP_MASKED_EQ:
		return (v & c->arg) == k;
	case IOUR_CMP_ANY_BITS:
		return (v & k) != 0;
	case IOUR_CMP_ALL_BITS:
		return (v & k) == k;
	case IOUR_CMP_NONE_BITS:
		return (v & k) == 0;
	case IOUR_CMP_IN_SET:
	case IOUR_CMP_NOT_IN_SET:
		r = false;
		for (i = 0; i < c->set_len; i++)
			r |= v == c->set[i];
		return c->op == IOUR_CMP_IN_SET ? r : !r;
	case IOUR_CMP_IN_RANGE:
		return v >= k && v <= c->arg;
	case IOUR_CMP_NOT_IN_RANGE:
		return v < k || v > c->arg;
	default: { /* IPv4 prefix */
		uint8_t a[4], b[4];
		uint32_t x = htonl((uint32_t)v), y = htonl((uint32_t)k);

		memcpy(a, &x, 4);
		memcpy(b, &y, 4);
		r = prefix_match(a, b, (unsigned int)c->arg);
		return c->op == IOUR_CMP_IN_PREFIX ? r : !r;
	}
	}
}

static bool rule_holds(const struct mrule *r, const uint8_t *ctx)
{
	bool all = true;

	for (size_t j = 0; j < r->n && all; j++)
		all = cmp_holds(&r->cmps[j].c, ctx);
	return all;
}

/* An AF_INET6 CONNECT to ::ffff:a.b.c.d: *v4 is the AF_INET connect to
 * a.b.c.d the kernel makes of it (filter.h, IOUR_FILTER_ADDR4_LITERAL). */
static bool ipv4_mapped(uint32_t opcode, const uint8_t *ctx, uint8_t *v4)
{
	static const uint8_t prefix[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	uint32_t fam = AF_INET;

	if (opcode != OP_CONNECT || rd(ctx, 16, 4) != AF_INET6 || memcmp(ctx + 24, prefix, 12))
		return false;
	memcpy(v4, ctx, IOUR_CTX_SIZE);
	memcpy(v4 + 16, &fam, 4);
	memcpy(v4 + 24, ctx + 36, 4);
	memset(v4 + 28, 0, 12);
	return true;
}

static uint32_t reference(const struct model *m, uint32_t opcode, const uint8_t *ctx)
{
	uint8_t v4[IOUR_CTX_SIZE];
	bool mapped = !m->addr4_literal && ipv4_mapped(opcode, ctx, v4);
	size_t i;

	for (i = 0; i < m->nrules; i++) {
		const struct mrule *r = &m->rules[i];

		if (r->opcode != opcode)
			continue;
		/* mapped: allowed only as the IPv4 connect, denied as either */
		if (mapped ? rule_holds(r, v4) || (r->verdict == IOUR_DENY && rule_holds(r, ctx))
			   : rule_holds(r, ctx))
			return r->verdict;
	}
	return m->opdefault[opcode] >= 0 ? (uint32_t)m->opdefault[opcode] : m->fdefault;
}

/* ---- contexts as the kernel fills them
 * Drawn from a generator seeded by the input (not from the input bytes,
 * which a long command sequence exhausts), so each input still replays
 * exactly. */
struct rng {
	uint64_t s;
};

static uint64_t rnd64(struct rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint8_t rnd8(struct rng *r)
{
	return (uint8_t)rnd64(r);
}

static uint32_t pdu_size(uint32_t op)
{
	return op == OP_SOCKET                                           ? 12 :
	       (op == OP_OPENAT || op == OP_OPENAT2 || op == OP_CONNECT) ? 24 :
									   0;
}

/* A value for `field`: one of the rules' operands or a neighbour, or random. */
static uint64_t ctx_value(struct rng *in, const struct model *m, uint32_t opcode, uint32_t field)
{
	uint64_t pool[64];
	size_t n = 0, i, j;
	uint8_t how = rnd8(in);

	for (i = 0; i < m->nrules && n + 8 <= 64; i++) {
		const struct mrule *r = &m->rules[i];

		for (j = 0; j < r->n && n + 8 <= 64; j++) {
			const struct iour_cmp *c = &r->cmps[j].c;

			if (r->opcode != opcode || c->field != field)
				continue;
			pool[n++] = c->value;
			pool[n++] = c->value + 1;
			pool[n++] = c->value - 1;
			pool[n++] = c->arg;
			pool[n++] = c->arg + 1;
			if (c->set_len)
				pool[n++] = c->set[rnd8(in) % c->set_len];
			if (c->op == IOUR_CMP_IN_PREFIX || c->op == IOUR_CMP_NOT_IN_PREFIX)
				pool[n++] = c->value ^
					    (c->arg && c->arg <= 32 ? 1ULL << (32 - c->arg) : 1);
		}
	}
	if (n && how % 4 != 0)
		return pool[rnd8(in) % n];
	return how % 8 == 0 ? rnd64(in) : rnd8(in);
}

static void make_ctx(struct rng *in, const struct model *m, uint32_t opcode, uint8_t *ctx)
{
	uint64_t v;
	uint32_t w;
	uint16_t h;

	memset(ctx, 0, IOUR_CTX_SIZE);
	v = ctx_value(in, m, opcode, IOUR_FIELD_USER_DATA);
	memcpy(ctx, &v, 8);
	ctx[8] = (uint8_t)opcode;
	ctx[9] = (uint8_t)(ctx_value(in, m, opcode, IOUR_FIELD_SQE_FLAGS) & 0x7f);
	ctx[10] = (uint8_t)pdu_size(opcode);
	switch (opcode) {
	case OP_SOCKET:
		w = (uint32_t)ctx_value(in, m, opcode, IOUR_FIELD_SOCKET_FAMILY);
		memcpy(ctx + 16, &w, 4);
		switch (rnd8(in) % 3) {
		case 0:
			w = (uint32_t)ctx_value(in, m, opcode, IOUR_FIELD_SOCKET_TYPE_RAW);
			break;
		default:
			w = (uint32_t)(ctx_value(in, m, opcode, IOUR_FIELD_SOCKET_TYPE) & 0xf) |
			    (uint32_t)(ctx_value(in, m, opcode, IOUR_FIELD_SOCKET_TYPE_FLAGS) &
				       (SOCK_NONBLOCK | SOCK_CLOEXEC));
			break;
		}
		memcpy(ctx + 20, &w, 4);
		w = (uint32_t)ctx_value(in, m, opcode, IOUR_FIELD_SOCKET_PROTOCOL);
		memcpy(ctx + 24, &w, 4);
		break;
	case OP_OPENAT:
	case OP_OPENAT2:
		v = ctx_value(in, m, opcode, IOUR_FIELD_OPEN_FLAGS);
		if (rnd8(in) & 1)
			v = (v & ~3ULL) | (ctx_value(in, m, opcode, IOUR_FIELD_OPEN_ACCMODE) & 3);
		memcpy(ctx + 16, &v, 8);
		v = ctx_value(in, m, opcode, IOUR_FIELD_OPEN_MODE);
		memcpy(ctx + 24, &v, 8);
		v = ctx_value(in, m, opcode, IOUR_FIELD_OPEN_RESOLVE);
		memcpy(ctx + 32, &v, 8);
		break;
	case OP_CONNECT:
		/* family: a u16 zero-extended; port and address only for the
		 * inet families (the kernel fills nothing else). */
		switch (rnd8(in) % 4) {
		case 0:
			w = AF_INET;
			break;
		case 1:
			w = AF_INET6;
			break;
		default:
			w = (uint32_t)ctx_value(in, m, opcode, IOUR_FIELD_CONNECT_FAMILY) & 0xffff;
			break;
		}
		memcpy(ctx + 16, &w, 4);
		if (w == AF_INET || w == AF_INET6) {
			h = htons((uint16_t)ctx_value(in, m, opcode, IOUR_FIELD_CONNECT_PORT));
			memcpy(ctx + 20, &h, 2);
		}
		if (w == AF_INET) {
			w = htonl((uint32_t)ctx_value(in, m, opcode, IOUR_FIELD_CONNECT_ADDR4));
			memcpy(ctx + 24, &w, 4);
		} else if (w == AF_INET6) {
			size_t i, j;

			v = rnd64(in);
			memcpy(ctx + 24, &v, 8);
			v = rnd64(in);
			memcpy(ctx + 32, &v, 8);
			/* an IPv4 address in the mapped form, or a look-alike
			 * (translated ::ffff:0:a.b.c.d, compatible ::a.b.c.d) */
			if (rnd8(in) % 3 == 0) {
				static const uint8_t pre[3][12] = {
					{ 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff },
					{ 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0 },
					{ 0 },
				};
				uint8_t k = rnd8(in);

				memcpy(ctx + 24, pre[k % 4 == 3 ? 1 : k % 4 == 2 ? 2 : 0], 12);
				w = htonl((uint32_t)ctx_value(in, m, opcode,
								IOUR_FIELD_CONNECT_ADDR4));
				memcpy(ctx + 36, &w, 4);
				break;
			}
			/* often an operand of the rules, or one bit away */
			for (i = 0; i < m->nrules; i++)
				for (j = 0; j < m->rules[i].n; j++) {
					const struct iour_cmp *c = &m->rules[i].cmps[j].c;

					if (m->rules[i].opcode == opcode &&
					    c->field == IOUR_FIELD_CONNECT_ADDR6 &&
					    (rnd8(in) & 1)) {
						memcpy(ctx + 24, c->addr6, 16);
						if (c->arg && c->arg <= 128 && (rnd8(in) & 1))
							ctx[24 + (c->arg - 1) / 8] ^=
								(uint8_t)(0x80 >>
									  ((c->arg - 1) % 8));
					}
				}
		}
		break;
	default:
		break;
	}
}

/* ---- checks */
static bool filtered(const struct model *m, uint32_t op)
{
	size_t i;

	if (m->raw[op] || m->opdefault[op] >= 0)
		return true;
	for (i = 0; i < m->nrules; i++)
		if (m->rules[i].opcode == op)
			return true;
	return false;
}

static void check_listing(const struct iour_filter *f, const struct model *m)
{
	uint32_t ops[256];
	int n, k = 0;
	uint32_t op;

	n = iour_filter__opcodes(f, NULL, 0);
	FUZZ_CHECK(n >= 0 && n <= 256, "opcodes count %d", n);
	FUZZ_CHECK(iour_filter__opcodes(f, ops, 256) == n, "opcodes list");
	if (n > 0)
		FUZZ_CHECK(iour_filter__opcodes(f, ops, (size_t)n - 1) == -ERANGE, "short list");
	for (op = 0; op < 256; op++) {
		struct iour_filter_opinfo info = { .sz = sizeof(info) };
		int rc = iour_filter__opcode_info(f, op, &info);
		uint32_t nr = 0;
		size_t i;

		if (!filtered(m, op)) {
			FUZZ_CHECK(rc == -ENOENT, "opcode %u not filtered, info %d", op, rc);
			continue;
		}
		FUZZ_CHECK(k < n && ops[k] == op, "opcode %u missing from the list", op);
		k++;
		for (i = 0; i < m->nrules; i++)
			nr += m->rules[i].opcode == op;
		FUZZ_CHECK(rc == 0 && info.nrules == nr, "opcode %u: info %d, %u rules, model %u",
			   op, rc, info.nrules, nr);
		FUZZ_CHECK(!!(info.flags & IOUR_OPINFO_RAW) == m->raw[op] &&
				   !!(info.flags & IOUR_OPINFO_HAS_DEFAULT) ==
					   (m->opdefault[op] >= 0),
			   "opcode %u: flags %#x", op, info.flags);
		if (m->raw[op])
			FUZZ_CHECK(info.raw_cnt == m->raw_cnt[op], "raw count");
		else
			FUZZ_CHECK(info.default_verdict == (m->opdefault[op] >= 0 ?
								    (uint32_t)m->opdefault[op] :
								    m->fdefault),
				   "opcode %u default verdict %u", op, info.default_verdict);
	}
	FUZZ_CHECK(k == n, "%d opcodes listed, model has %d", n, k);
}

static void check_compile(struct fz *in, const struct iour_filter *f, const struct model *m,
			  uint32_t op)
{
	struct iour_compile_opts o = { .sz = sizeof(o) };
	struct iour_prog *p = NULL, *p2 = NULL;
	struct iour_filter *d = NULL;
	const struct iour_insn *insns;
	size_t cnt, i;
	bool reads_pdu = false;
	int rc, k;

	struct rng rng = { input_seed ^ ((uint64_t)op << 32) ^ compile_seq++ };

	o.max_insns = (fz_u8(in) % 8 == 7) ? 1 + fz_u8(in) % 24 : 0; /* 0: the kernel limit */
	rc = iour_filter__compile(f, op, &o, &p);
	if (!filtered(m, op)) {
		FUZZ_CHECK(rc == -ENOENT, "compile of an unfiltered opcode %u: %d", op, rc);
		return;
	}
	if (rc == -IOUR_ERRNO__PROG_TOO_LARGE && o.max_insns) {
		n_too_large++;
		return;
	}
	FUZZ_CHECK(rc == 0 && p, "compile(opcode %u, max %u) = %d", op, o.max_insns, rc);
	n_compiled++;
	insns = iour_prog__insns(p);
	cnt = iour_prog__insn_cnt(p);
	FUZZ_CHECK(cnt >= 1 && cnt <= (o.max_insns ? o.max_insns : IOUR_MAX_INSNS),
		   "%zu instructions (max %u)", cnt, o.max_insns);
	FUZZ_CHECK(iour_prog__opcode(p) == op, "program opcode");
	FUZZ_CHECK(iour_cbpf_validate(insns, cnt, 0, NULL) == 0,
		   "a compiled program fails the validator (opcode %u)", op);
	for (i = 0; i < cnt; i++)
		if (insns[i].code == 0x20 && insns[i].k >= IOUR_CTX_OFF_PDU)
			reads_pdu = true;
	FUZZ_CHECK(iour_prog__pdu_size(p) == (reads_pdu ? pdu_size(op) : 0),
		   "pdu_size %u, reads the payload: %d", iour_prog__pdu_size(p), reads_pdu);
	if (m->raw[op])
		FUZZ_CHECK(cnt == m->raw_cnt[op] && !memcmp(insns, m->raw_insns[op], cnt * 8),
			   "a raw program was not kept as given");
	if (iour_prog__kind(p) != IOUR_PROG_FILTER)
		FUZZ_CHECK(cnt == 1 && insns[0].code == 0x06 &&
				   (insns[0].k != 0) ==
					   (iour_prog__kind(p) == IOUR_PROG_ALWAYS_ALLOW),
			   "kind %u but %zu instructions", iour_prog__kind(p), cnt);

	/* Deterministic, and the same for a copy of the filter. */
	FUZZ_CHECK(iour_filter__dup(f, &d) == 0, "dup");
	rc = iour_filter__compile(d, op, &o, &p2);
	FUZZ_CHECK(rc == 0 && iour_prog__insn_cnt(p2) == cnt &&
			   !memcmp(iour_prog__insns(p2), insns, cnt * sizeof(*insns)),
		   "compiling a copy gave another program");
	iour_prog__free(p2);
	iour_filter__free(d);

	if (have_oracle)
		FUZZ_CHECK(oracle_attach(&oracle, insns, cnt) == 0, "kernel rejects the program");
	for (k = 0; k < NCTX; k++) {
		struct iour_sim_result res = { .sz = sizeof(res) };
		uint8_t ctx[IOUR_CTX_SIZE];
		uint32_t want;

		make_ctx(&rng, m, op, ctx);
		want = reference(m, op, ctx);
		if (m->raw[op]) /* the reference of a raw program is the program */
			break;
		FUZZ_CHECK(iour_cbpf_run(insns, cnt, ctx, sizeof(ctx), &res) == 0, "simulate");
		n_ctx++;
		if (iour_prog__kind(p) == IOUR_PROG_ALWAYS_ALLOW)
			FUZZ_CHECK(want == IOUR_ALLOW, "always-allow, but the rules deny");
		if (iour_prog__kind(p) == IOUR_PROG_ALWAYS_DENY)
			FUZZ_CHECK(want == IOUR_DENY, "always-deny, but the rules allow");
		if (res.allowed != want) {
			char listing[8192];
			size_t len = sizeof(listing);

			if (iour_cbpf_disasm(insns, cnt, op, IOUR_DISASM_TEXT, listing, &len))
				strcpy(listing, "(listing too long)\n");
			fprintf(stderr, "context:");
			for (i = 0; i < sizeof(ctx); i++)
				fprintf(stderr, " %02x", ctx[i]);
			fprintf(stderr, "\nprogram:\n%s", listing);
			FUZZ_CHECK(0, "opcode %u: the program %s, the rules %s", op,
				   res.allowed ? "allows" : "denies", want ? "allow" : "deny");
		}
		if (have_oracle && k < 4) {
			int kv = oracle_run(&oracle, ctx, NULL);

			FUZZ_CHECK(kv >= 0 && (uint32_t)kv == res.allowed,
				   "kernel verdict %d, simulator %u", kv, res.allowed);
			n_kernel++;
		}
	}
	iour_prog__free(p);
}

static uint32_t pick_opcode(struct fz *in)
{
	static const uint32_t ops[] = { OP_SOCKET, OP_OPENAT, OP_OPENAT2, OP_CONNECT, 0 };
	uint8_t b = fz_u8(in);

	if (b % 8 < 5)
		return ops[b % 8];
	return b % 8 == 5 ? fz_u8(in) % 65 : fz_u8(in);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
/* Bad arguments: each call must fail with its documented code and leave the
 * filter unchanged. */
static void check_misuse(struct fz *in, struct iour_filter *f, const struct model *m)
{
	struct iour_cmp many[IOUR_FILTER_MAX_CMPS + 1];
	uint8_t buf[2 * (sizeof(struct iour_cmp) + 8)] __attribute__((aligned(8)));
	struct iour_cmp *c0 = (struct iour_cmp *)buf;
	struct iour_cmp *c1 = (struct iour_cmp *)(buf + sizeof(struct iour_cmp) + 8);
	struct mcmp mc;
	uint32_t op = pick_opcode(in);
	int before = iour_filter__opcodes(f, NULL, 0), rc;
	size_t i;

	FUZZ_CHECK(iour_filter__add_rule(NULL, 0, IOUR_ALLOW, NULL, 0) == -EINVAL, "NULL filter");
	FUZZ_CHECK(iour_filter__add_rule(f, op, IOUR_ALLOW, NULL, 1) == -EINVAL, "NULL cmps");
	FUZZ_CHECK(iour_filter__add_rule(f, 256 + fz_u8(in), IOUR_ALLOW, NULL, 0) == -EINVAL,
		   "opcode above 255");
	FUZZ_CHECK(iour_filter__add_rule(f, op, 2 + fz_u8(in), NULL, 0) == -EINVAL,
		   "unknown verdict");
	FUZZ_CHECK(iour_filter__set_default(f, op, 2) == -EINVAL, "unknown default verdict");
	FUZZ_CHECK(iour_filter__compile(f, 256, NULL, NULL) == -EINVAL, "compile NULL out");
	memset(many, 0, sizeof(many));
	for (i = 0; i <= IOUR_FILTER_MAX_CMPS; i++) {
		many[i].sz = sizeof(many[i]);
		many[i].field = IOUR_FIELD_USER_DATA;
		many[i].op = IOUR_CMP_EQ;
	}
	FUZZ_CHECK(iour_filter__add_rule(f, op, IOUR_ALLOW, many, IOUR_FILTER_MAX_CMPS + 1) ==
			   -E2BIG,
		   "more than %d comparisons", IOUR_FILTER_MAX_CMPS);

	/* Elements larger than the library knows: a non-zero unknown byte,
	 * then elements whose sizes differ, then a size too small. */
	make_cmp(in, op, &mc);
	memset(buf, 0, sizeof(buf));
	memcpy(c0, &mc.c, sizeof(mc.c));
	memcpy(c1, &mc.c, sizeof(mc.c));
	if (mc.c.set) {
		c0->set = mc.set;
		c1->set = mc.set;
	}
	c0->sz = c1->sz = sizeof(struct iour_cmp) + 8;
	buf[sizeof(struct iour_cmp) + 1 + fz_u8(in) % 7] = 1;
	rc = iour_filter__add_rule(f, op, IOUR_ALLOW, c0, 2);
	FUZZ_CHECK(rc == -E2BIG || (m->raw[op] && rc == -EEXIST),
		   "a non-zero byte past the known members: %d", rc);
	memset(buf + sizeof(struct iour_cmp), 0, 8);
	c1->sz = sizeof(struct iour_cmp);
	FUZZ_CHECK(iour_filter__add_rule(f, op, IOUR_ALLOW, c0, 2) != 0, "elements of two sizes");
	c0->sz = 8 + fz_u8(in) % 8;
	rc = iour_filter__add_rule(f, op, IOUR_ALLOW, c0, 1);
	FUZZ_CHECK(rc == -EINVAL || (m->raw[op] && rc == -EEXIST), "sz too small: %d", rc);
	FUZZ_CHECK(iour_filter__opcodes(f, NULL, 0) == before, "a refused call changed the filter");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz in = { data, size };
	struct iour_filter_opts fo = { .sz = sizeof(fo) };
	struct iour_filter *f = NULL;
	struct model *m = calloc(1, sizeof(*m));
	int steps = 0, rc;
	uint32_t op;

	if (!m)
		return 0;
	compile_seq = 0;
	input_seed = 0xcbf29ce484222325ULL; /* FNV-1a of the input */
	for (size_t i = 0; i < size; i++)
		input_seed = (input_seed ^ data[i]) * 0x100000001b3ULL;
	memset(m->opdefault, -1, sizeof(m->opdefault));
	{
		uint8_t b = fz_u8(&in);

		m->fdefault = b & 1 ? IOUR_ALLOW : IOUR_DENY;
		m->addr4_literal = b & 2;
	}
	fo.default_verdict = m->fdefault;
	fo.flags = m->addr4_literal ? IOUR_FILTER_ADDR4_LITERAL : 0;
	FUZZ_CHECK(iour_filter__new(&fo, &f) == 0, "iour_filter__new");

	while (!fz_empty(&in) && steps++ < 32) {
		uint8_t cmd = fz_u8(&in);

		switch (cmd % 8) {
		case 0:
		case 1:
		case 2: { /* add a rule: well-formed, or with one defect */
			struct mrule r;
			int want = 0;
			size_t i, before;

			if (m->nrules == MAX_RULES)
				break;
			memset(&r, 0, sizeof(r));
			r.opcode = pick_opcode(&in);
			r.verdict = fz_u8(&in) & 1;
			r.n = fz_u8(&in) % 5;
			for (i = 0; i < r.n; i++)
				make_cmp(&in, r.opcode, &r.cmps[i]);
			if (cmd & 0x80 && r.n)
				want = add_defect(&in, r.opcode, &r.cmps[fz_u8(&in) % r.n]);
			if (!want && m->raw[r.opcode])
				want = -EEXIST;
			{
				struct iour_cmp cs[4];

				for (i = 0; i < r.n; i++) {
					cs[i] = r.cmps[i].c;
					if (cs[i].set)
						cs[i].set = r.cmps[i].set;
				}
				before = (size_t)iour_filter__opcodes(f, NULL, 0);
				rc = iour_filter__add_rule(f, r.opcode, r.verdict, r.n ? cs : NULL,
							   r.n);
			}
			/* The order of the checks is not documented: a defective
			 * rule for a raw opcode may be refused for either reason. */
			FUZZ_CHECK(rc == want || (want && m->raw[r.opcode] && rc == -EEXIST),
				   "add_rule(opcode %u, %zu cmps) = %d (%s), expected %d (%s)",
				   r.opcode, r.n, rc, iour_errname(rc), want, iour_errname(want));
			if (rc == 0) {
				for (i = 0; i < r.n; i++)
					if (r.cmps[i].c.set)
						r.cmps[i].c.set = NULL; /* rebound below */
				m->rules[m->nrules] = r;
				for (i = 0; i < r.n; i++)
					if (r.cmps[i].c.set_len)
						m->rules[m->nrules].cmps[i].c.set =
							m->rules[m->nrules].cmps[i].set;
				m->nrules++;
				n_rules_ok++;
			} else {
				n_rules_refused++;
				FUZZ_CHECK((size_t)iour_filter__opcodes(f, NULL, 0) == before,
					   "a refused rule changed the filter");
			}
			break;
		}
		case 3: { /* default */
			uint32_t v;

			op = pick_opcode(&in);
			v = fz_u8(&in) & 1;
			rc = iour_filter__set_default(f, op, v);
			if (m->raw[op]) {
				FUZZ_CHECK(rc == -EEXIST, "default on a raw opcode: %d", rc);
			} else {
				FUZZ_CHECK(rc == 0, "set_default(%u) = %d", op, rc);
				m->opdefault[op] = (int8_t)v;
			}
			break;
		}
		case 4: { /* raw program: whatever bytes follow */
			size_t cnt = fz_u8(&in) % 8 + 1, i;
			struct iour_insn *p = calloc(cnt, sizeof(*p));
			int valid;

			op = pick_opcode(&in);
			FUZZ_CHECK(p != NULL, "out of memory");
			fz_bytes(&in, p, cnt * sizeof(*p));
			if (fz_u8(&in) & 1) { /* usually a valid one */
				for (i = 0; i < cnt; i++)
					p[i] = (struct iour_insn){ .code = 0x00, .k = p[i].k };
				p[cnt - 1] = (struct iour_insn){ .code = 0x16 };
			}
			valid = iour_cbpf_validate(p, cnt, 0, NULL) == 0;
			rc = iour_filter__set_raw(f, op, p, cnt);
			if (filtered(m, op) && !m->raw[op])
				FUZZ_CHECK(rc == -EEXIST ||
						   (!valid && rc == -IOUR_ERRNO__INVALID_PROG),
					   "raw program over rules: %d", rc);
			else if (!valid)
				FUZZ_CHECK(rc == -IOUR_ERRNO__INVALID_PROG, "invalid raw: %d", rc);
			else
				FUZZ_CHECK(rc == 0, "set_raw = %d", rc);
			if (rc == 0) {
				free(m->raw_insns[op]);
				m->raw[op] = true;
				m->raw_insns[op] = p;
				m->raw_cnt[op] = cnt;
			} else {
				free(p);
			}
			break;
		}
		case 5: { /* continue with a copy, or misuse the API */
			struct iour_filter *d = NULL;

			if (cmd & 0x40) {
				check_misuse(&in, f, m);
				break;
			}
			FUZZ_CHECK(iour_filter__dup(f, &d) == 0, "dup");
			iour_filter__free(f);
			f = d;
			break;
		}
		default: /* compile one opcode and check it */
			check_compile(&in, f, m, pick_opcode(&in));
			break;
		}
	}
	check_listing(f, m);
	for (op = 0; op < 256; op++)
		if (filtered(m, op))
			check_compile(&in, f, m, op);
	iour_filter__free(f);
	for (op = 0; op < 256; op++)
		free(m->raw_insns[op]);
	free(m);
	return 0;
}
