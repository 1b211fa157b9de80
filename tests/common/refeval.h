/* SPDX-License-Identifier: MIT */
/*
 * A reference model of argument filters for the differential tests.
 *
 * A policy is described here in the tests' own terms (plain arrays, no
 * library object), evaluated directly on the *logical* request (family,
 * port, flags ... as numbers), and turned into builder calls only to be
 * compiled.  Nothing here uses lib/filter/filter.c or the compiler
 * (lib/filter/filter_compile.c and its stages): the verdicts come from the
 * semantics documented in filter.h, computed with ordinary C arithmetic.
 * ref_encode() writes the 40-byte context the way the kernel lays it out,
 * for either byte order, again without the library.
 */
#ifndef IOUR_TEST_REFEVAL_H
#define IOUR_TEST_REFEVAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "iouring_restrict/filter.h"

#define REF_OP_NOP 0
#define REF_OP_CONNECT 16
#define REF_OP_OPENAT 18
#define REF_OP_OPENAT2 28
#define REF_OP_SOCKET 45

#define REF_MAX_SET 300
#define REF_MAX_CMPS 4
#define REF_MAX_RULES 12

struct ref_cmp {
	uint32_t field;
	uint32_t op;
	uint64_t value;
	uint64_t arg;
	uint64_t set[REF_MAX_SET];
	size_t set_len;
	uint8_t addr6[16];
};

struct ref_rule {
	uint32_t verdict;
	size_t ncmps;
	struct ref_cmp cmps[REF_MAX_CMPS];
};

struct ref_policy {
	uint32_t opcode;
	size_t nrules;
	struct ref_rule rules[REF_MAX_RULES];
	bool has_default;
	uint32_t dflt;          /* used when has_default */
	uint32_t filter_dflt;   /* the filter-wide default (opts) */
	bool addr4_literal;     /* IOUR_FILTER_ADDR4_LITERAL */
};

/* What a filter sees of a request, as numbers in host order. */
struct ref_req {
	uint32_t opcode;
	uint8_t sqe_flags;      /* 0..0x7f */
	uint64_t user_data;
	/* SOCKET */
	uint32_t family, type, protocol;
	/* OPENAT / OPENAT2 */
	uint64_t oflags, omode, oresolve;
	/* CONNECT: what the kernel filled in (zeros where it did not) */
	uint32_t cfamily;       /* 0..65535 */
	uint32_t port;          /* 0..65535 */
	uint32_t addr4;         /* only when cfamily == AF_INET */
	uint8_t addr6[16];      /* only when cfamily == AF_INET6 */
};

/* Does a comparison hold for the request? */
bool ref_cmp_holds(const struct ref_cmp *c, const struct ref_req *r);
/* The policy's verdict (IOUR_ALLOW / IOUR_DENY) for the request.  Unless
 * the policy is addr4_literal, a CONNECT to ::ffff:a.b.c.d is looked at as
 * the IPv4 connect to a.b.c.d it becomes: an allow rule holds when it holds
 * for that IPv4 connect, a deny rule when it holds for it or for the
 * request as given. */
uint32_t ref_eval(const struct ref_policy *p, const struct ref_req *r);

/* The context the kernel builds for the request, in the given byte order
 * (big_endian false: little-endian layout). */
void ref_encode(const struct ref_req *r, bool big_endian, uint8_t ctx[40]);
/* Reverse the bytes of each 32-bit word in place: turns a big-endian
 * context into the bytes whose little-endian word loads give the
 * big-endian loads (for running big-endian programs on this host). */
void ref_swap_words(uint8_t ctx[40]);

/* The comparison as the builder takes it. */
void ref_to_cmp(const struct ref_cmp *rc, struct iour_cmp *out);
/* Build a library filter holding the policy; 0 or the failing call's
 * error.  *out is set on success. */
int ref_build(const struct ref_policy *p, struct iour_filter **out);

/* Text form of a policy and of a request, for failure messages. */
void ref_policy_str(const struct ref_policy *p, char *buf, size_t len);
void ref_req_str(const struct ref_req *r, char *buf, size_t len);

#endif
