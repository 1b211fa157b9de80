/* SPDX-License-Identifier: MIT */
/* Random policies and edge-seeking requests; see refgen.h. */
#include <string.h>
#include <sys/socket.h>

#include "refgen.h"

static const uint32_t fields_common[] = { IOUR_FIELD_USER_DATA, IOUR_FIELD_SQE_FLAGS };
static const uint32_t fields_socket[] = {
	IOUR_FIELD_SOCKET_FAMILY, IOUR_FIELD_SOCKET_TYPE, IOUR_FIELD_SOCKET_TYPE_FLAGS,
	IOUR_FIELD_SOCKET_TYPE_RAW, IOUR_FIELD_SOCKET_PROTOCOL
};
static const uint32_t fields_open[] = { IOUR_FIELD_OPEN_FLAGS, IOUR_FIELD_OPEN_ACCMODE,
					IOUR_FIELD_OPEN_MODE, IOUR_FIELD_OPEN_RESOLVE };
static const uint32_t fields_connect[] = { IOUR_FIELD_CONNECT_FAMILY, IOUR_FIELD_CONNECT_PORT,
					   IOUR_FIELD_CONNECT_ADDR4, IOUR_FIELD_CONNECT_ADDR6 };

/* The bits a value of the field may have (the tests' own table). */
static uint64_t valid_bits(uint32_t field)
{
	switch (field) {
	case IOUR_FIELD_USER_DATA:
	case IOUR_FIELD_OPEN_FLAGS:
	case IOUR_FIELD_OPEN_MODE:
	case IOUR_FIELD_OPEN_RESOLVE:
		return ~0ULL;
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
	default:
		return 0xffffffffULL;
	}
}

static bool is64(uint32_t field)
{
	return valid_bits(field) == ~0ULL;
}

static uint32_t pick_field(struct gen_rng *r, uint32_t opcode)
{
	const uint32_t *extra = NULL;
	uint32_t n = 0;

	switch (opcode) {
	case REF_OP_SOCKET:
		extra = fields_socket;
		n = 5;
		break;
	case REF_OP_OPENAT:
	case REF_OP_OPENAT2:
		extra = fields_open;
		n = 4;
		break;
	case REF_OP_CONNECT:
		extra = fields_connect;
		n = 4;
		break;
	}
	/* payload fields three times as often as the common ones */
	if (!n || gen_chance(r, 25))
		return fields_common[gen_below(r, 2)];
	return extra[gen_below(r, n)];
}

/* A value for the field, biased to edges. */
static uint64_t edge_value(struct gen_rng *r, uint32_t field)
{
	uint64_t vb = valid_bits(field), v;
	uint32_t k = gen_below(r, 16);

	switch (k) {
	case 0:
		v = 0;
		break;
	case 1:
		v = 1;
		break;
	case 2:
		v = vb;
		break;
	case 3:
		v = vb - 1;
		break;
	case 4:
		v = 0x80000000ULL;
		break;
	case 5:
		v = 0xffffffffULL;
		break;
	case 6:
		v = 0x100000000ULL + gen_below(r, 3);
		break;
	case 7: /* only the high half */
		v = (uint64_t)gen_u32(r) << 32;
		break;
	case 8: /* a small low half under a random high half */
		v = (uint64_t)gen_below(r, 4) << 32 | gen_below(r, 20);
		break;
	case 9:
		v = gen_below(r, 20);
		break;
	case 10:
		v = gen_u32(r);
		break;
	case 11:
		v = 1ULL << gen_below(r, 64);
		break;
	case 12:
		v = vb >> 1;
		break;
	default:
		v = gen_u64(r);
		break;
	}
	v &= vb;
	/* socket families and ports get realistic values too */
	if (field == IOUR_FIELD_SOCKET_FAMILY || field == IOUR_FIELD_CONNECT_FAMILY) {
		static const uint32_t fams[] = { AF_UNIX, AF_INET, AF_INET6, AF_NETLINK, 0 };

		if (gen_chance(r, 50))
			v = fams[gen_below(r, 5)];
	}
	if (field == IOUR_FIELD_CONNECT_PORT && gen_chance(r, 40)) {
		static const uint32_t ports[] = { 22, 80, 443, 1023, 1024, 8080, 65535 };

		v = ports[gen_below(r, 7)];
	}
	return v;
}

static uint64_t nonzero_value(struct gen_rng *r, uint32_t field)
{
	uint64_t v;

	do {
		switch (gen_below(r, 4)) {
		case 0: /* a single bit */
			v = 1ULL << gen_below(r, 64);
			break;
		case 1: /* low half only */
			v = gen_u32(r);
			break;
		case 2: /* high half only */
			v = (uint64_t)gen_u32(r) << 32;
			break;
		default:
			v = edge_value(r, field) | gen_u64(r);
			break;
		}
		v &= valid_bits(field);
	} while (!v);
	return v;
}

static void random_addr6(struct gen_rng *r, uint8_t a[16])
{
	static const uint8_t pats[4][16] = {
		{ 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1 },
		{ 0xfe, 0x80 },
		{ 0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xde, 0xad },
		{ 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 127, 0, 0, 1 },
	};

	if (gen_chance(r, 50)) {
		memcpy(a, pats[gen_below(r, 4)], 16);
		return;
	}
	if (gen_chance(r, 40)) {
		/* an IPv4-mapped address (::ffff:a.b.c.d), or one of the
		 * look-alikes that are not: IPv4-translated ::ffff:0:a.b.c.d,
		 * IPv4-compatible ::a.b.c.d, one bit off the mapped prefix */
		uint32_t v4 = gen_chance(r, 50) ? gen_u32(r) : 0x0a000001 + gen_below(r, 4);

		memset(a, 0, 16);
		switch (gen_below(r, 6)) {
		case 0:
			a[8] = a[9] = 0xff;
			break;
		case 1:
			break;
		case 2: {
			unsigned bit = gen_below(r, 96);

			a[10] = a[11] = 0xff;
			a[bit / 8] ^= (uint8_t)(0x80 >> (bit % 8));
			break;
		}
		default:
			a[10] = a[11] = 0xff;
			break;
		}
		a[12] = (uint8_t)(v4 >> 24);
		a[13] = (uint8_t)(v4 >> 16);
		a[14] = (uint8_t)(v4 >> 8);
		a[15] = (uint8_t)v4;
		return;
	}
	for (int i = 0; i < 16; i++)
		a[i] = (uint8_t)gen_below(r, 4) == 0 ? 0 : (uint8_t)gen_u32(r);
}

static void gen_cmp(struct gen_rng *r, uint32_t field, bool interval_only, struct ref_cmp *c)
{
	static const uint32_t ops_interval[] = {
		IOUR_CMP_EQ, IOUR_CMP_NE, IOUR_CMP_LT, IOUR_CMP_LE, IOUR_CMP_GT, IOUR_CMP_GE,
		IOUR_CMP_IN_SET, IOUR_CMP_NOT_IN_SET, IOUR_CMP_IN_RANGE, IOUR_CMP_NOT_IN_RANGE,
		IOUR_CMP_IN_SET, IOUR_CMP_EQ
	};
	uint64_t vb = valid_bits(field);

	memset(c, 0, sizeof(*c));
	c->field = field;
	if (field == IOUR_FIELD_CONNECT_ADDR6) {
		static const uint32_t ops6[] = { IOUR_CMP_EQ, IOUR_CMP_NE, IOUR_CMP_IN_PREFIX,
						 IOUR_CMP_NOT_IN_PREFIX };
		static const uint32_t plens[] = { 0, 1, 8, 16, 31, 32, 33, 48, 64, 96, 120, 127, 128 };

		c->op = ops6[gen_below(r, 4)];
		random_addr6(r, c->addr6);
		if (c->op == IOUR_CMP_IN_PREFIX || c->op == IOUR_CMP_NOT_IN_PREFIX)
			c->arg = gen_chance(r, 70) ? plens[gen_below(r, 13)] : gen_below(r, 129);
		return;
	}
	if (interval_only)
		c->op = ops_interval[gen_below(r, 12)];
	else if (field == IOUR_FIELD_CONNECT_ADDR4 && gen_chance(r, 35))
		c->op = gen_chance(r, 60) ? IOUR_CMP_IN_PREFIX : IOUR_CMP_NOT_IN_PREFIX;
	else
		c->op = IOUR_CMP_EQ + gen_below(r, IOUR_CMP_NOT_IN_RANGE);
	switch (c->op) {
	case IOUR_CMP_EQ:
	case IOUR_CMP_NE:
	case IOUR_CMP_LT:
	case IOUR_CMP_LE:
	case IOUR_CMP_GT:
	case IOUR_CMP_GE:
		c->value = edge_value(r, field);
		break;
	case IOUR_CMP_MASKED_EQ:
		c->arg = nonzero_value(r, field);
		c->value = (gen_chance(r, 50) ? gen_u64(r) : edge_value(r, field)) & c->arg;
		break;
	case IOUR_CMP_ANY_BITS:
	case IOUR_CMP_ALL_BITS:
	case IOUR_CMP_NONE_BITS:
		c->value = nonzero_value(r, field);
		break;
	case IOUR_CMP_IN_SET:
	case IOUR_CMP_NOT_IN_SET: {
		/* mostly small; sometimes large enough to need long jumps */
		bool big = gen_chance(r, 6);
		size_t n = big ? 100 + gen_below(r, REF_MAX_SET - 99)
			       : 1 + gen_below(r, gen_chance(r, 70) ? 8 : 50);
		uint64_t base = edge_value(r, field);

		for (size_t i = 0; i < n; i++) {
			uint64_t v;

			switch (big ? (gen_chance(r, 80) ? 4 : 0) : gen_below(r, 4)) {
			case 4: /* scattered */
				v = gen_chance(r, 50) ? gen_u64(r) : gen_u32(r);
				break;
			case 0: /* runs merge into ranges */
				v = base + i;
				break;
			case 1: /* duplicates */
				v = i ? c->set[gen_below(r, (uint32_t)i)] : base;
				break;
			default:
				v = edge_value(r, field);
				break;
			}
			c->set[i] = v & vb;
		}
		c->set_len = n;
		break;
	}
	case IOUR_CMP_IN_RANGE:
	case IOUR_CMP_NOT_IN_RANGE: {
		uint64_t a = edge_value(r, field), b;

		b = gen_chance(r, 50) ? ((a + gen_below(r, 10)) & vb) : edge_value(r, field);
		if (a > b) {
			uint64_t t = a;

			a = b;
			b = t;
		}
		c->value = a;
		c->arg = b;
		break;
	}
	case IOUR_CMP_IN_PREFIX:
	case IOUR_CMP_NOT_IN_PREFIX: {
		static const uint32_t plens[] = { 0, 1, 8, 16, 24, 31, 32 };

		c->value = gen_chance(r, 30) ? 0x7f000001 : gen_u32(r);
		c->arg = gen_chance(r, 70) ? plens[gen_below(r, 7)] : gen_below(r, 33);
		break;
	}
	}
}

void refgen_policy(struct gen_rng *r, struct ref_policy *p)
{
	static const uint32_t opcodes[] = { REF_OP_NOP, REF_OP_SOCKET, REF_OP_OPENAT,
					    REF_OP_OPENAT2, REF_OP_CONNECT };
	size_t nrules;

	uint32_t d;

	memset(p, 0, sizeof(*p));
	p->opcode = opcodes[gen_below(r, 5)];
	p->has_default = gen_chance(r, 60);
	p->dflt = gen_below(r, 2);
	p->filter_dflt = gen_below(r, 2);
	p->addr4_literal = gen_chance(r, 25);
	d = p->has_default ? p->dflt : p->filter_dflt;
	nrules = gen_chance(r, 5) ? 0 : 1 + gen_below(r, gen_chance(r, 70) ? 4 : REF_MAX_RULES);
	while (p->nrules < nrules) {
		struct ref_rule *ru = &p->rules[p->nrules];

		if (gen_chance(r, 25) && nrules - p->nrules >= 2) {
			/* a run of one-comparison rules on one field */
			uint32_t field;
			size_t len = 2 + gen_below(r, (uint32_t)(nrules - p->nrules - 1));

			do
				field = pick_field(r, p->opcode);
			while (field == IOUR_FIELD_CONNECT_ADDR6);
			for (size_t i = 0; i < len; i++, ru++) {
				ru->verdict = gen_chance(r, 70) ? !d : d;
				ru->ncmps = 1;
				gen_cmp(r, field, true, &ru->cmps[0]);
			}
			p->nrules += len;
			continue;
		}
		ru->verdict = gen_chance(r, 75) ? !d : d;
		ru->ncmps = gen_chance(r, 5) ? 0 : 1 + gen_below(r, gen_chance(r, 60) ? 2 : REF_MAX_CMPS);
		for (size_t j = 0; j < ru->ncmps; j++)
			gen_cmp(r, pick_field(r, p->opcode), false, &ru->cmps[j]);
		p->nrules++;
	}
}

/* Set a field of the request to v (derived fields change their bits only). */
static void set_field(struct ref_req *q, uint32_t field, uint64_t v, const uint8_t *a6)
{
	uint32_t tf = SOCK_NONBLOCK | SOCK_CLOEXEC;

	switch (field) {
	case IOUR_FIELD_USER_DATA:
		q->user_data = v;
		break;
	case IOUR_FIELD_SQE_FLAGS:
		q->sqe_flags = (uint8_t)(v & 0x7f);
		break;
	case IOUR_FIELD_SOCKET_FAMILY:
		q->family = (uint32_t)v;
		break;
	case IOUR_FIELD_SOCKET_TYPE:
		q->type = (q->type & ~0xfU) | ((uint32_t)v & 0xf);
		break;
	case IOUR_FIELD_SOCKET_TYPE_FLAGS:
		q->type = (q->type & ~tf) | ((uint32_t)v & tf);
		break;
	case IOUR_FIELD_SOCKET_TYPE_RAW:
		q->type = (uint32_t)v;
		break;
	case IOUR_FIELD_SOCKET_PROTOCOL:
		q->protocol = (uint32_t)v;
		break;
	case IOUR_FIELD_OPEN_FLAGS:
		q->oflags = v;
		break;
	case IOUR_FIELD_OPEN_ACCMODE:
		q->oflags = (q->oflags & ~3ULL) | (v & 3);
		break;
	case IOUR_FIELD_OPEN_MODE:
		q->omode = v;
		break;
	case IOUR_FIELD_OPEN_RESOLVE:
		q->oresolve = v;
		break;
	case IOUR_FIELD_CONNECT_FAMILY:
		q->cfamily = (uint32_t)v & 0xffff;
		break;
	case IOUR_FIELD_CONNECT_PORT:
		q->port = (uint32_t)v & 0xffff;
		break;
	case IOUR_FIELD_CONNECT_ADDR4:
		q->cfamily = AF_INET;
		q->addr4 = (uint32_t)v;
		break;
	case IOUR_FIELD_CONNECT_ADDR6:
		q->cfamily = AF_INET6;
		memcpy(q->addr6, a6, 16);
		break;
	}
}

/* A value on or next to the comparison's operands. */
static uint64_t near_value(struct gen_rng *r, const struct ref_cmp *c)
{
	uint64_t vb = valid_bits(c->field), x = c->value;

	switch (c->op) {
	case IOUR_CMP_MASKED_EQ:
		x = c->value | (gen_u64(r) & ~c->arg);
		if (gen_chance(r, 30))
			x ^= c->arg & (1ULL << gen_below(r, 64));
		break;
	case IOUR_CMP_ANY_BITS:
	case IOUR_CMP_ALL_BITS:
	case IOUR_CMP_NONE_BITS:
		switch (gen_below(r, 5)) {
		case 0:
			x = c->value;
			break;
		case 1:
			x = c->value & gen_u64(r);
			break;
		case 2:
			x = ~c->value & gen_u64(r);
			break;
		case 3:
			x = c->value | gen_u64(r);
			break;
		default:
			x = c->value & (1ULL << gen_below(r, 64));
			break;
		}
		break;
	case IOUR_CMP_IN_SET:
	case IOUR_CMP_NOT_IN_SET:
		x = c->set[gen_below(r, (uint32_t)c->set_len)];
		break;
	case IOUR_CMP_IN_RANGE:
	case IOUR_CMP_NOT_IN_RANGE:
		x = gen_chance(r, 50) ? c->value : c->arg;
		if (gen_chance(r, 15))
			x = c->value + (c->arg - c->value) / 2;
		break;
	case IOUR_CMP_IN_PREFIX:
	case IOUR_CMP_NOT_IN_PREFIX: {
		uint64_t host = c->arg ? 0xffffffffULL >> c->arg : 0xffffffffULL;

		x = (c->value & ~host) | (gen_chance(r, 50) ? 0 : gen_chance(r, 50) ? host : (gen_u32(r) & host));
		break;
	}
	}
	/* step off the boundary */
	switch (gen_below(r, 8)) {
	case 0:
		x += 1;
		break;
	case 1:
		x -= 1;
		break;
	case 2: /* change only the high half */
		if (is64(c->field))
			x = (x & 0xffffffffULL) | ((uint64_t)(gen_chance(r, 50) ? gen_u32(r) : gen_below(r, 2)) << 32);
		break;
	case 3: /* change only the low half */
		if (is64(c->field))
			x = (x & ~0xffffffffULL) | (gen_chance(r, 50) ? gen_u32(r) : gen_below(r, 3));
		break;
	case 4:
		x = edge_value(r, c->field);
		break;
	default:
		break;
	}
	return x & vb;
}

static void near_addr6(struct gen_rng *r, const struct ref_cmp *c, uint8_t out[16])
{
	unsigned p = c->op == IOUR_CMP_EQ || c->op == IOUR_CMP_NE ? 128 : (unsigned)c->arg;
	unsigned bit;

	memcpy(out, c->addr6, 16);
	switch (gen_below(r, 5)) {
	case 0: /* flip the last bit inside the prefix */
		if (p) {
			bit = p - 1;
			out[bit / 8] ^= (uint8_t)(0x80 >> (bit % 8));
		}
		break;
	case 1: /* flip the first bit outside it */
		if (p < 128) {
			bit = p;
			out[bit / 8] ^= (uint8_t)(0x80 >> (bit % 8));
		}
		break;
	case 2: /* randomise everything beyond the prefix */
		for (unsigned i = p; i < 128; i++)
			if (gen_chance(r, 50))
				out[i / 8] ^= (uint8_t)(0x80 >> (i % 8));
		break;
	case 3:
		random_addr6(r, out);
		break;
	default:
		break;
	}
}

static void random_req(struct gen_rng *r, uint32_t opcode, struct ref_req *q)
{
	memset(q, 0, sizeof(*q));
	q->opcode = opcode;
	q->user_data = edge_value(r, IOUR_FIELD_USER_DATA);
	q->sqe_flags = (uint8_t)(gen_chance(r, 50) ? 0 : gen_below(r, 0x80));
	q->family = (uint32_t)edge_value(r, IOUR_FIELD_SOCKET_FAMILY);
	q->type = (uint32_t)(gen_chance(r, 70) ? (gen_below(r, 6) | (gen_u32(r) & (SOCK_NONBLOCK | SOCK_CLOEXEC)))
					       : gen_u32(r));
	q->protocol = (uint32_t)(gen_chance(r, 60) ? gen_below(r, 20) : gen_u32(r));
	q->oflags = edge_value(r, IOUR_FIELD_OPEN_FLAGS);
	q->omode = gen_chance(r, 50) ? gen_below(r, 01000) : edge_value(r, IOUR_FIELD_OPEN_MODE);
	q->oresolve = gen_chance(r, 50) ? gen_below(r, 0x40) : edge_value(r, IOUR_FIELD_OPEN_RESOLVE);
	switch (gen_below(r, 6)) {
	case 0:
	case 1:
		q->cfamily = AF_INET;
		break;
	case 2:
	case 3:
		q->cfamily = AF_INET6;
		break;
	case 4:
		q->cfamily = gen_chance(r, 50) ? AF_UNIX : 0;
		break;
	default:
		q->cfamily = gen_u32(r) & 0xffff;
		break;
	}
	q->port = (uint32_t)edge_value(r, IOUR_FIELD_CONNECT_PORT);
	q->addr4 = gen_u32(r);
	random_addr6(r, q->addr6);
}

/* What the kernel leaves unfilled is zero. */
static void normalise(struct gen_rng *r, struct ref_req *q)
{
	if (q->cfamily != AF_INET)
		q->addr4 = 0;
	if (q->cfamily != AF_INET6)
		memset(q->addr6, 0, 16);
	if (q->cfamily != AF_INET && q->cfamily != AF_INET6)
		q->port = 0;
	/* a short address: the family only (the stale addr_len case) */
	if ((q->cfamily == AF_INET || q->cfamily == AF_INET6) && gen_chance(r, 4)) {
		q->port = 0;
		q->addr4 = 0;
		memset(q->addr6, 0, 16);
	}
}

void refgen_req(struct gen_rng *r, const struct ref_policy *p, struct ref_req *q)
{
	random_req(r, p->opcode, q);
	if (p->nrules && gen_chance(r, 80)) {
		const struct ref_rule *ru = &p->rules[gen_below(r, (uint32_t)p->nrules)];

		for (size_t j = 0; j < ru->ncmps; j++) {
			const struct ref_cmp *c = &ru->cmps[j];

			if (c->field == IOUR_FIELD_CONNECT_ADDR6) {
				uint8_t a6[16];

				near_addr6(r, c, a6);
				set_field(q, c->field, 0, a6);
			} else {
				set_field(q, c->field, near_value(r, c), NULL);
			}
			/* sometimes a field of another family after all */
			if ((c->field == IOUR_FIELD_CONNECT_ADDR4 || c->field == IOUR_FIELD_CONNECT_ADDR6) &&
			    gen_chance(r, 10))
				q->cfamily = c->field == IOUR_FIELD_CONNECT_ADDR4 ? AF_INET6 : AF_INET;
			/* an IPv4 operand through an IPv6 socket: ::ffff:a.b.c.d */
			if (c->field == IOUR_FIELD_CONNECT_ADDR4 && q->cfamily == AF_INET &&
			    gen_chance(r, 30)) {
				memset(q->addr6, 0, 16);
				q->addr6[10] = q->addr6[11] = 0xff;
				q->addr6[12] = (uint8_t)(q->addr4 >> 24);
				q->addr6[13] = (uint8_t)(q->addr4 >> 16);
				q->addr6[14] = (uint8_t)(q->addr4 >> 8);
				q->addr6[15] = (uint8_t)q->addr4;
				q->cfamily = AF_INET6;
			}
		}
	}
	normalise(r, q);
}
