/* SPDX-License-Identifier: MIT */
/* Reference model of argument filters; see refeval.h. */
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "refeval.h"

static uint64_t field_value(uint32_t field, const struct ref_req *r)
{
	switch (field) {
	case IOUR_FIELD_USER_DATA:
		return r->user_data;
	case IOUR_FIELD_SQE_FLAGS:
		return r->sqe_flags;
	case IOUR_FIELD_SOCKET_FAMILY:
		return r->family;
	case IOUR_FIELD_SOCKET_TYPE:
		return r->type % 16;
	case IOUR_FIELD_SOCKET_TYPE_FLAGS:
		return r->type & (SOCK_NONBLOCK | SOCK_CLOEXEC);
	case IOUR_FIELD_SOCKET_TYPE_RAW:
		return r->type;
	case IOUR_FIELD_SOCKET_PROTOCOL:
		return r->protocol;
	case IOUR_FIELD_OPEN_FLAGS:
		return r->oflags;
	case IOUR_FIELD_OPEN_ACCMODE:
		return r->oflags % 4;
	case IOUR_FIELD_OPEN_MODE:
		return r->omode;
	case IOUR_FIELD_OPEN_RESOLVE:
		return r->oresolve;
	case IOUR_FIELD_CONNECT_FAMILY:
		return r->cfamily;
	case IOUR_FIELD_CONNECT_PORT:
		return r->port;
	case IOUR_FIELD_CONNECT_ADDR4:
		return r->addr4;
	}
	return 0;
}

/* Is bit i (0 = most significant) of a 16-byte address set? */
static int bit6(const uint8_t a[16], unsigned i)
{
	return (a[i / 8] >> (7 - i % 8)) & 1;
}

bool ref_cmp_holds(const struct ref_cmp *c, const struct ref_req *r)
{
	uint64_t v;

	if (c->field == IOUR_FIELD_CONNECT_ADDR4 && r->cfamily != AF_INET)
		return false;
	if (c->field == IOUR_FIELD_CONNECT_ADDR6) {
		unsigned bits = c->op == IOUR_CMP_EQ || c->op == IOUR_CMP_NE ? 128 : (unsigned)c->arg;
		bool same = true;

		if (r->cfamily != AF_INET6)
			return false;
		for (unsigned i = 0; i < bits; i++)
			if (bit6(r->addr6, i) != bit6(c->addr6, i))
				same = false;
		return (c->op == IOUR_CMP_EQ || c->op == IOUR_CMP_IN_PREFIX) ? same : !same;
	}
	v = field_value(c->field, r);
	switch (c->op) {
	case IOUR_CMP_EQ:
		return v == c->value;
	case IOUR_CMP_NE:
		return v != c->value;
	case IOUR_CMP_LT:
		return v < c->value;
	case IOUR_CMP_LE:
		return v <= c->value;
	case IOUR_CMP_GT:
		return v > c->value;
	case IOUR_CMP_GE:
		return v >= c->value;
	case IOUR_CMP_MASKED_EQ:
		return (v & c->arg) == c->value;
	case IOUR_CMP_ANY_BITS:
		return (v & c->value) != 0;
	case IOUR_CMP_ALL_BITS:
		return (v & c->value) == c->value;
	case IOUR_CMP_NONE_BITS:
		return (v & c->value) == 0;
	case IOUR_CMP_IN_SET:
	case IOUR_CMP_NOT_IN_SET: {
		bool found = false;

		for (size_t i = 0; i < c->set_len; i++)
			if (c->set[i] == v)
				found = true;
		return c->op == IOUR_CMP_IN_SET ? found : !found;
	}
	case IOUR_CMP_IN_RANGE:
		return c->value <= v && v <= c->arg;
	case IOUR_CMP_NOT_IN_RANGE:
		return v < c->value || v > c->arg;
	case IOUR_CMP_IN_PREFIX:
	case IOUR_CMP_NOT_IN_PREFIX: {
		/* IPv4: compare the top `arg` bits, one at a time */
		bool same = true;

		for (unsigned i = 0; i < c->arg; i++)
			if (((v >> (31 - i)) & 1) != ((c->value >> (31 - i)) & 1))
				same = false;
		return c->op == IOUR_CMP_IN_PREFIX ? same : !same;
	}
	}
	return false;
}

static bool rule_holds(const struct ref_rule *ru, const struct ref_req *r)
{
	for (size_t j = 0; j < ru->ncmps; j++)
		if (!ref_cmp_holds(&ru->cmps[j], r))
			return false;
	return true;
}

/* Is the request an AF_INET6 connect to ::ffff:a.b.c.d?  If so, *v4 is the
 * AF_INET connect the kernel turns it into. */
static bool ipv4_mapped(const struct ref_req *r, struct ref_req *v4)
{
	static const uint8_t prefix[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	if (r->opcode != REF_OP_CONNECT || r->cfamily != AF_INET6 ||
	    memcmp(r->addr6, prefix, sizeof(prefix)))
		return false;
	*v4 = *r;
	v4->cfamily = AF_INET;
	v4->addr4 = (uint32_t)r->addr6[12] << 24 | (uint32_t)r->addr6[13] << 16 |
		    (uint32_t)r->addr6[14] << 8 | r->addr6[15];
	memset(v4->addr6, 0, sizeof(v4->addr6));
	return true;
}

uint32_t ref_eval(const struct ref_policy *p, const struct ref_req *r)
{
	struct ref_req v4;
	bool mapped = !p->addr4_literal && ipv4_mapped(r, &v4);

	for (size_t i = 0; i < p->nrules; i++) {
		const struct ref_rule *ru = &p->rules[i];

		/* a mapped request: allowed only as the IPv4 connect it is,
		 * denied as that or as the request as given */
		if (mapped ? rule_holds(ru, &v4) || (ru->verdict == IOUR_DENY && rule_holds(ru, r))
			   : rule_holds(ru, r))
			return ru->verdict;
	}
	return p->has_default ? p->dflt : p->filter_dflt;
}

static void put(uint8_t *ctx, unsigned off, uint64_t v, unsigned bytes, bool be)
{
	for (unsigned i = 0; i < bytes; i++) {
		unsigned shift = be ? 8 * (bytes - 1 - i) : 8 * i;

		ctx[off + i] = (uint8_t)(v >> shift);
	}
}

void ref_encode(const struct ref_req *r, bool be, uint8_t ctx[40])
{
	memset(ctx, 0, 40);
	put(ctx, 0, r->user_data, 8, be);
	ctx[8] = (uint8_t)r->opcode;
	ctx[9] = r->sqe_flags;
	switch (r->opcode) {
	case REF_OP_SOCKET:
		ctx[10] = 12;
		put(ctx, 16, r->family, 4, be);
		put(ctx, 20, r->type, 4, be);
		put(ctx, 24, r->protocol, 4, be);
		break;
	case REF_OP_OPENAT:
	case REF_OP_OPENAT2:
		ctx[10] = 24;
		put(ctx, 16, r->oflags, 8, be);
		put(ctx, 24, r->omode, 8, be);
		put(ctx, 32, r->oresolve, 8, be);
		break;
	case REF_OP_CONNECT:
		ctx[10] = 24;
		put(ctx, 16, r->cfamily, 4, be);
		/* network order whatever the host */
		put(ctx, 20, r->port, 2, true);
		if (r->cfamily == AF_INET)
			put(ctx, 24, r->addr4, 4, true);
		else if (r->cfamily == AF_INET6)
			memcpy(ctx + 24, r->addr6, 16);
		break;
	}
}

void ref_swap_words(uint8_t ctx[40])
{
	for (unsigned w = 0; w < 40; w += 4) {
		uint8_t t0 = ctx[w], t1 = ctx[w + 1];

		ctx[w] = ctx[w + 3];
		ctx[w + 1] = ctx[w + 2];
		ctx[w + 2] = t1;
		ctx[w + 3] = t0;
	}
}

void ref_to_cmp(const struct ref_cmp *rc, struct iour_cmp *c)
{
	memset(c, 0, sizeof(*c));
	c->sz = sizeof(*c);
	c->field = rc->field;
	c->op = rc->op;
	c->value = rc->value;
	c->arg = rc->arg;
	if (rc->op == IOUR_CMP_IN_SET || rc->op == IOUR_CMP_NOT_IN_SET) {
		c->set = rc->set;
		c->set_len = rc->set_len;
	}
	memcpy(c->addr6, rc->addr6, 16);
}

int ref_build(const struct ref_policy *p, struct iour_filter **out)
{
	struct iour_filter_opts o = { .sz = sizeof(o),
				      .default_verdict = p->filter_dflt,
				      .flags = p->addr4_literal ? IOUR_FILTER_ADDR4_LITERAL : 0 };
	struct iour_filter *f;
	int rc = iour_filter__new(&o, &f);

	if (rc)
		return rc;
	for (size_t i = 0; i < p->nrules && !rc; i++) {
		struct iour_cmp c[REF_MAX_CMPS];

		for (size_t j = 0; j < p->rules[i].ncmps; j++)
			ref_to_cmp(&p->rules[i].cmps[j], &c[j]);
		rc = iour_filter__add_rule(f, p->opcode, p->rules[i].verdict,
					   p->rules[i].ncmps ? c : NULL, p->rules[i].ncmps);
	}
	if (!rc && (p->has_default || !p->nrules))
		rc = iour_filter__set_default(f, p->opcode, p->has_default ? p->dflt
									   : p->filter_dflt);
	if (rc) {
		iour_filter__free(f);
		return rc;
	}
	*out = f;
	return 0;
}

#define APPEND(...)                                                      \
	do {                                                             \
		int n_ = snprintf(buf + used, used < len ? len - used : 0, __VA_ARGS__); \
		if (n_ > 0)                                              \
			used += (size_t)n_;                              \
	} while (0)

void ref_policy_str(const struct ref_policy *p, char *buf, size_t len)
{
	size_t used = 0;

	if (len)
		buf[0] = 0;
	APPEND("opcode %u, default %s%s%s\n", p->opcode,
	       (p->has_default ? p->dflt : p->filter_dflt) ? "allow" : "deny",
	       p->has_default ? "" : " (filter-wide)", p->addr4_literal ? ", addr4 literal" : "");
	for (size_t i = 0; i < p->nrules; i++) {
		APPEND("  rule %zu -> %s:", i, p->rules[i].verdict ? "allow" : "deny");
		for (size_t j = 0; j < p->rules[i].ncmps; j++) {
			const struct ref_cmp *c = &p->rules[i].cmps[j];

			APPEND(" [f%u op%u v=%#llx a=%#llx", c->field, c->op,
			       (unsigned long long)c->value, (unsigned long long)c->arg);
			for (size_t k = 0; k < c->set_len && k < 8; k++)
				APPEND("%s%#llx", k ? "," : " set=", (unsigned long long)c->set[k]);
			if (c->set_len > 8)
				APPEND(",...(%zu)", c->set_len);
			if (c->field == IOUR_FIELD_CONNECT_ADDR6) {
				APPEND(" a6=");
				for (int k = 0; k < 16; k++)
					APPEND("%02x", c->addr6[k]);
			}
			APPEND("]");
		}
		APPEND("\n");
	}
}

void ref_req_str(const struct ref_req *r, char *buf, size_t len)
{
	size_t used = 0;

	if (len)
		buf[0] = 0;
	APPEND("op %u sqe_flags %#x user_data %#llx", r->opcode, r->sqe_flags,
	       (unsigned long long)r->user_data);
	if (r->opcode == REF_OP_SOCKET)
		APPEND(" family %u type %#x protocol %u", r->family, r->type, r->protocol);
	if (r->opcode == REF_OP_OPENAT || r->opcode == REF_OP_OPENAT2)
		APPEND(" flags %#llx mode %#llx resolve %#llx", (unsigned long long)r->oflags,
		       (unsigned long long)r->omode, (unsigned long long)r->oresolve);
	if (r->opcode == REF_OP_CONNECT) {
		APPEND(" family %u port %u addr4 %#x addr6 ", r->cfamily, r->port, r->addr4);
		for (int k = 0; k < 16; k++)
			APPEND("%02x", r->addr6[k]);
	}
}
