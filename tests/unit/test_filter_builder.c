/* SPDX-License-Identifier: MIT */
/*
 * The filter builder's contract: every documented error code of every
 * call, atomicity on failure, introspection, duplication, raw programs.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "iouring_restrict/iouring_restrict.h"

#define NOP 0
#define CONNECT 16
#define OPENAT 18
#define OPENAT2 28
#define SOCKET 45

static struct iour_cmp cmp(uint32_t field, uint32_t op, uint64_t value, uint64_t arg)
{
	struct iour_cmp c;

	memset(&c, 0, sizeof(c));
	c.sz = sizeof(c);
	c.field = field;
	c.op = op;
	c.value = value;
	c.arg = arg;
	return c;
}

static struct iour_filter *mk(void)
{
	struct iour_filter *f = NULL;

	cr_assert_eq(iour_filter__new(NULL, &f), 0);
	cr_assert_not_null(f);
	return f;
}

/* add_rule with one comparison */
static int add1(struct iour_filter *f, uint32_t opcode, struct iour_cmp c)
{
	return iour_filter__add_rule(f, opcode, IOUR_ALLOW, &c, 1);
}

static uint32_t nrules(struct iour_filter *f, uint32_t opcode)
{
	struct iour_filter_opinfo oi = { .sz = sizeof(oi) };
	int rc = iour_filter__opcode_info(f, opcode, &oi);

	return rc == -ENOENT ? UINT32_MAX : oi.nrules;
}

Test(filter_builder, new_and_free)
{
	struct iour_filter *f = NULL;
	struct iour_filter_opts o = { .sz = sizeof(o) };
	struct {
		struct iour_filter_opts o;
		uint64_t extra;
	} big = { .o = { .sz = sizeof(big) } };
	struct iour_filter_opinfo oi = { .sz = sizeof(oi) };

	cr_assert_eq(iour_filter__new(NULL, NULL), -EINVAL);
	o.sz = 4;
	cr_assert_eq(iour_filter__new(&o, &f), -EINVAL);
	o.sz = sizeof(o);
	o.default_verdict = 2;
	cr_assert_eq(iour_filter__new(&o, &f), -EINVAL);
	o.default_verdict = IOUR_ALLOW;
	o.flags = 2;
	cr_assert_eq(iour_filter__new(&o, &f), -EINVAL);
	o.flags = IOUR_FILTER_ADDR4_LITERAL | (1U << 31);
	cr_assert_eq(iour_filter__new(&o, &f), -EINVAL);
	o.flags = IOUR_FILTER_ADDR4_LITERAL;
	cr_assert_eq(iour_filter__new(&o, &f), 0);
	iour_filter__free(f);
	f = NULL;
	o.flags = 0;
	big.extra = 1;
	cr_assert_eq(iour_filter__new(&big.o, &f), -E2BIG);
	cr_assert_null(f);
	big.extra = 0;
	cr_assert_eq(iour_filter__new(&big.o, &f), 0);
	iour_filter__free(f);
	/* the filter-wide default applies to opcodes without their own */
	cr_assert_eq(iour_filter__new(&o, &f), 0);
	cr_assert_eq(add1(f, SOCKET, cmp(IOUR_FIELD_SOCKET_FAMILY, IOUR_CMP_EQ, AF_INET, 0)), 0);
	cr_assert_eq(iour_filter__opcode_info(f, SOCKET, &oi), 0);
	cr_assert_eq(oi.default_verdict, IOUR_ALLOW);
	cr_assert_eq(oi.flags & IOUR_OPINFO_HAS_DEFAULT, 0);
	iour_filter__free(f);
	iour_filter__free(NULL);
}

Test(filter_builder, add_rule_argument_errors)
{
	struct iour_filter *f = mk();
	struct iour_cmp c = cmp(IOUR_FIELD_USER_DATA, IOUR_CMP_EQ, 1, 0);
	struct iour_cmp many[IOUR_FILTER_MAX_CMPS + 1];

	cr_assert_eq(iour_filter__add_rule(NULL, NOP, IOUR_ALLOW, &c, 1), -EINVAL);
	cr_assert_eq(iour_filter__add_rule(f, NOP, IOUR_ALLOW, NULL, 1), -EINVAL);
	cr_assert_eq(iour_filter__add_rule(f, 256, IOUR_ALLOW, &c, 1), -EINVAL);
	cr_assert_eq(iour_filter__add_rule(f, NOP, 2, &c, 1), -EINVAL);
	for (size_t i = 0; i < sizeof(many) / sizeof(many[0]); i++)
		many[i] = c;
	cr_assert_eq(iour_filter__add_rule(f, NOP, IOUR_ALLOW, many, IOUR_FILTER_MAX_CMPS + 1),
		     -E2BIG);
	cr_assert_eq(iour_filter__add_rule(f, NOP, IOUR_ALLOW, many, IOUR_FILTER_MAX_CMPS), 0);
	/* an empty rule always holds */
	cr_assert_eq(iour_filter__add_rule(f, NOP, IOUR_DENY, NULL, 0), 0);
	cr_assert_eq(nrules(f, NOP), 2);
	iour_filter__free(f);
}

Test(filter_builder, cmp_struct_size_rules)
{
	struct iour_filter *f = mk();
	struct wide {
		struct iour_cmp c;
		uint64_t future;
	} w[2];
	struct iour_cmp two[2];

	/* sz must be the same in every element */
	two[0] = cmp(IOUR_FIELD_USER_DATA, IOUR_CMP_EQ, 1, 0);
	two[1] = two[0];
	two[1].sz = sizeof(struct iour_cmp) - 8;
	cr_assert_eq(iour_filter__add_rule(f, NOP, IOUR_ALLOW, two, 2), -EINVAL);
	/* too small to hold anything */
	two[0].sz = 4;
	cr_assert_eq(iour_filter__add_rule(f, NOP, IOUR_ALLOW, two, 1), -EINVAL);
	/* a newer, larger struct: stepped by its sz, unknown bytes zero */
	memset(w, 0, sizeof(w));
	w[0].c = cmp(IOUR_FIELD_USER_DATA, IOUR_CMP_EQ, 1, 0);
	w[1].c = cmp(IOUR_FIELD_SQE_FLAGS, IOUR_CMP_EQ, 2, 0);
	w[0].c.sz = w[1].c.sz = sizeof(struct wide);
	cr_assert_eq(iour_filter__add_rule(f, NOP, IOUR_ALLOW, &w[0].c, 2), 0);
	w[1].future = 7;
	cr_assert_eq(iour_filter__add_rule(f, NOP, IOUR_ALLOW, &w[0].c, 2), -E2BIG);
	/* an older, shorter struct: missing members read as zero */
	two[0] = cmp(IOUR_FIELD_USER_DATA, IOUR_CMP_EQ, 5, 0);
	two[0].sz = offsetof(struct iour_cmp, arg);
	cr_assert_eq(iour_filter__add_rule(f, NOP, IOUR_ALLOW, two, 1), 0);
	cr_assert_eq(nrules(f, NOP), 2);
	iour_filter__free(f);
}

Test(filter_builder, unknown_field_or_operator)
{
	struct iour_filter *f = mk();

	cr_assert_eq(add1(f, NOP, cmp(0, IOUR_CMP_EQ, 1, 0)), -EINVAL);
	cr_assert_eq(add1(f, NOP, cmp(3, IOUR_CMP_EQ, 1, 0)), -EINVAL);
	cr_assert_eq(add1(f, NOP, cmp(999, IOUR_CMP_EQ, 1, 0)), -EINVAL);
	cr_assert_eq(add1(f, NOP, cmp(IOUR_FIELD_USER_DATA, 0, 1, 0)), -EINVAL);
	cr_assert_eq(add1(f, NOP, cmp(IOUR_FIELD_USER_DATA, 17, 1, 0)), -EINVAL);
	cr_assert_eq(nrules(f, NOP), UINT32_MAX, "a failed first rule leaves the opcode unfiltered");
	iour_filter__free(f);
}

Test(filter_builder, field_not_for_opcode_is_edom)
{
	struct iour_filter *f = mk();

	cr_assert_eq(add1(f, NOP, cmp(IOUR_FIELD_SOCKET_FAMILY, IOUR_CMP_EQ, 2, 0)), -EDOM);
	cr_assert_eq(add1(f, SOCKET, cmp(IOUR_FIELD_OPEN_FLAGS, IOUR_CMP_EQ, 2, 0)), -EDOM);
	cr_assert_eq(add1(f, OPENAT, cmp(IOUR_FIELD_CONNECT_PORT, IOUR_CMP_EQ, 2, 0)), -EDOM);
	cr_assert_eq(add1(f, CONNECT, cmp(IOUR_FIELD_SOCKET_TYPE, IOUR_CMP_EQ, 2, 0)), -EDOM);
	cr_assert_eq(add1(f, 1, cmp(IOUR_FIELD_OPEN_ACCMODE, IOUR_CMP_EQ, 0, 0)), -EDOM);
	/* user_data and sqe_flags exist for every opcode */
	cr_assert_eq(add1(f, 200, cmp(IOUR_FIELD_USER_DATA, IOUR_CMP_EQ, 2, 0)), 0);
	cr_assert_eq(add1(f, OPENAT2, cmp(IOUR_FIELD_SQE_FLAGS, IOUR_CMP_EQ, 2, 0)), 0);
	cr_assert_eq(add1(f, OPENAT2, cmp(IOUR_FIELD_OPEN_RESOLVE, IOUR_CMP_ANY_BITS, 0x10, 0)), 0);
	iour_filter__free(f);
}

Test(filter_builder, operator_not_for_field_is_eopnotsupp)
{
	struct iour_filter *f = mk();
	uint64_t set[1] = { 1 };
	struct iour_cmp c;

	for (uint32_t op = IOUR_CMP_LT; op <= IOUR_CMP_NOT_IN_RANGE; op++) {
		c = cmp(IOUR_FIELD_CONNECT_ADDR6, op, 0, 0);
		cr_assert_eq(add1(f, CONNECT, c), -EOPNOTSUPP, "op %u on addr6", op);
	}
	c = cmp(IOUR_FIELD_CONNECT_ADDR6, IOUR_CMP_IN_SET, 0, 0);
	c.set = set;
	c.set_len = 1;
	cr_assert_eq(add1(f, CONNECT, c), -EOPNOTSUPP);
	cr_assert_eq(add1(f, CONNECT, cmp(IOUR_FIELD_CONNECT_PORT, IOUR_CMP_IN_PREFIX, 0, 8)),
		     -EOPNOTSUPP);
	cr_assert_eq(add1(f, NOP, cmp(IOUR_FIELD_USER_DATA, IOUR_CMP_NOT_IN_PREFIX, 0, 8)),
		     -EOPNOTSUPP);
	iour_filter__free(f);
}

Test(filter_builder, values_outside_the_field_are_erange)
{
	struct iour_filter *f = mk();
	uint64_t set[3] = { 80, 443, 65536 };
	struct iour_cmp c;

	cr_assert_eq(add1(f, CONNECT, cmp(IOUR_FIELD_CONNECT_PORT, IOUR_CMP_EQ, 65536, 0)), -ERANGE);
	cr_assert_eq(add1(f, CONNECT, cmp(IOUR_FIELD_CONNECT_PORT, IOUR_CMP_EQ, 65535, 0)), 0);
	cr_assert_eq(add1(f, CONNECT, cmp(IOUR_FIELD_CONNECT_FAMILY, IOUR_CMP_EQ, 0x10000, 0)),
		     -ERANGE);
	cr_assert_eq(add1(f, SOCKET, cmp(IOUR_FIELD_SOCKET_FAMILY, IOUR_CMP_EQ, 1ULL << 32, 0)),
		     -ERANGE);
	cr_assert_eq(add1(f, SOCKET, cmp(IOUR_FIELD_SOCKET_PROTOCOL, IOUR_CMP_LT, 1ULL << 32, 0)),
		     -ERANGE);
	cr_assert_eq(add1(f, SOCKET, cmp(IOUR_FIELD_SOCKET_TYPE, IOUR_CMP_EQ, 16, 0)), -ERANGE);
	cr_assert_eq(add1(f, SOCKET, cmp(IOUR_FIELD_SOCKET_TYPE_FLAGS, IOUR_CMP_ANY_BITS, 1, 0)),
		     -ERANGE);
	cr_assert_eq(add1(f, SOCKET, cmp(IOUR_FIELD_SOCKET_TYPE_FLAGS, IOUR_CMP_ANY_BITS,
					 SOCK_CLOEXEC, 0)), 0);
	cr_assert_eq(add1(f, NOP, cmp(IOUR_FIELD_SQE_FLAGS, IOUR_CMP_ANY_BITS, 0x80, 0)), -ERANGE);
	cr_assert_eq(add1(f, NOP, cmp(IOUR_FIELD_SQE_FLAGS, IOUR_CMP_LE, 0x7f, 0)), 0);
	cr_assert_eq(add1(f, OPENAT, cmp(IOUR_FIELD_OPEN_ACCMODE, IOUR_CMP_EQ, 4, 0)), -ERANGE);
	cr_assert_eq(add1(f, CONNECT, cmp(IOUR_FIELD_CONNECT_ADDR4, IOUR_CMP_EQ, 1ULL << 32, 0)),
		     -ERANGE);
	cr_assert_eq(add1(f, CONNECT, cmp(IOUR_FIELD_CONNECT_ADDR4, IOUR_CMP_IN_PREFIX,
					  IOUR_IPV4(10, 0, 0, 0), 33)), -ERANGE);
	cr_assert_eq(add1(f, CONNECT, cmp(IOUR_FIELD_CONNECT_ADDR4, IOUR_CMP_IN_PREFIX,
					  IOUR_IPV4(10, 0, 0, 0), 32)), 0);
	cr_assert_eq(add1(f, CONNECT, cmp(IOUR_FIELD_CONNECT_ADDR6, IOUR_CMP_IN_PREFIX, 0, 129)),
		     -ERANGE);
	cr_assert_eq(add1(f, CONNECT, cmp(IOUR_FIELD_CONNECT_ADDR6, IOUR_CMP_NOT_IN_PREFIX, 0, 128)),
		     0);
	/* ranges, masks and sets are checked element by element */
	cr_assert_eq(add1(f, CONNECT, cmp(IOUR_FIELD_CONNECT_PORT, IOUR_CMP_IN_RANGE, 1, 70000)),
		     -ERANGE);
	cr_assert_eq(add1(f, CONNECT, cmp(IOUR_FIELD_CONNECT_PORT, IOUR_CMP_MASKED_EQ, 0, 0x10000)),
		     -ERANGE);
	cr_assert_eq(add1(f, CONNECT, cmp(IOUR_FIELD_CONNECT_PORT, IOUR_CMP_ALL_BITS, 0x1ffff, 0)),
		     -ERANGE);
	c = cmp(IOUR_FIELD_CONNECT_PORT, IOUR_CMP_IN_SET, 0, 0);
	c.set = set;
	c.set_len = 3;
	cr_assert_eq(add1(f, CONNECT, c), -ERANGE);
	c.set_len = 2;
	cr_assert_eq(add1(f, CONNECT, c), 0);
	iour_filter__free(f);
}

Test(filter_builder, malformed_operands_are_einval)
{
	struct iour_filter *f = mk();
	uint64_t set[2] = { 1, 2 };
	struct iour_cmp c;

	/* sets */
	c = cmp(IOUR_FIELD_USER_DATA, IOUR_CMP_IN_SET, 0, 0);
	cr_assert_eq(add1(f, NOP, c), -EINVAL, "NULL set");
	c.set = set;
	cr_assert_eq(add1(f, NOP, c), -EINVAL, "empty set");
	c.set = NULL;
	c.set_len = 2;
	cr_assert_eq(add1(f, NOP, c), -EINVAL, "NULL set with a length");
	c.set = set;
	c.set_len = IOUR_FILTER_MAX_SET + 1;
	cr_assert_eq(add1(f, NOP, c), -E2BIG);
	/* ranges */
	cr_assert_eq(add1(f, NOP, cmp(IOUR_FIELD_USER_DATA, IOUR_CMP_IN_RANGE, 5, 4)), -EINVAL);
	cr_assert_eq(add1(f, NOP, cmp(IOUR_FIELD_USER_DATA, IOUR_CMP_NOT_IN_RANGE, 5, 4)), -EINVAL);
	cr_assert_eq(add1(f, NOP, cmp(IOUR_FIELD_USER_DATA, IOUR_CMP_IN_RANGE, 5, 5)), 0);
	/* masks and bits */
	cr_assert_eq(add1(f, NOP, cmp(IOUR_FIELD_USER_DATA, IOUR_CMP_MASKED_EQ, 0, 0)), -EINVAL);
	cr_assert_eq(add1(f, NOP, cmp(IOUR_FIELD_USER_DATA, IOUR_CMP_MASKED_EQ, 0x10, 0x0f)),
		     -EINVAL, "a value outside its mask never matches");
	cr_assert_eq(add1(f, NOP, cmp(IOUR_FIELD_USER_DATA, IOUR_CMP_ANY_BITS, 0, 0)), -EINVAL);
	cr_assert_eq(add1(f, NOP, cmp(IOUR_FIELD_USER_DATA, IOUR_CMP_ALL_BITS, 0, 0)), -EINVAL);
	cr_assert_eq(add1(f, NOP, cmp(IOUR_FIELD_USER_DATA, IOUR_CMP_NONE_BITS, 0, 0)), -EINVAL);
	/* operands the operator does not use must be zero */
	cr_assert_eq(add1(f, NOP, cmp(IOUR_FIELD_USER_DATA, IOUR_CMP_EQ, 1, 1)), -EINVAL);
	c = cmp(IOUR_FIELD_USER_DATA, IOUR_CMP_EQ, 1, 0);
	c.set = set;
	c.set_len = 1;
	cr_assert_eq(add1(f, NOP, c), -EINVAL);
	c = cmp(IOUR_FIELD_USER_DATA, IOUR_CMP_EQ, 1, 0);
	c.addr6[3] = 1;
	cr_assert_eq(add1(f, NOP, c), -EINVAL);
	c = cmp(IOUR_FIELD_USER_DATA, IOUR_CMP_IN_SET, 1, 0);
	c.set = set;
	c.set_len = 2;
	cr_assert_eq(add1(f, NOP, c), -EINVAL, "value with a set");
	cr_assert_eq(add1(f, CONNECT, cmp(IOUR_FIELD_CONNECT_ADDR6, IOUR_CMP_EQ, 1, 0)), -EINVAL);
	cr_assert_eq(add1(f, CONNECT, cmp(IOUR_FIELD_CONNECT_ADDR6, IOUR_CMP_IN_PREFIX, 1, 8)),
		     -EINVAL);
	cr_assert_eq(nrules(f, NOP), 1);
	iour_filter__free(f);
}

Test(filter_builder, failed_rule_changes_nothing)
{
	struct iour_filter *f = mk();
	struct iour_cmp two[2] = { cmp(IOUR_FIELD_SOCKET_FAMILY, IOUR_CMP_EQ, 2, 0),
				   cmp(IOUR_FIELD_SOCKET_TYPE, IOUR_CMP_EQ, 99, 0) };
	struct iour_prog *p1, *p2;

	cr_assert_eq(iour_filter__add_rule(f, SOCKET, IOUR_ALLOW, two, 1), 0);
	cr_assert_eq(iour_filter__compile(f, SOCKET, NULL, &p1), 0);
	/* the second comparison is bad: the first must not be kept either */
	cr_assert_eq(iour_filter__add_rule(f, SOCKET, IOUR_DENY, two, 2), -ERANGE);
	cr_assert_eq(nrules(f, SOCKET), 1);
	cr_assert_eq(iour_filter__compile(f, SOCKET, NULL, &p2), 0);
	cr_assert_eq(iour_prog__insn_cnt(p1), iour_prog__insn_cnt(p2));
	cr_assert(!memcmp(iour_prog__insns(p1), iour_prog__insns(p2),
			  iour_prog__insn_cnt(p1) * sizeof(struct iour_insn)));
	iour_prog__free(p1);
	iour_prog__free(p2);
	iour_filter__free(f);
}

Test(filter_builder, set_default_errors_and_effect)
{
	struct iour_filter *f = mk();
	struct iour_filter_opinfo oi = { .sz = sizeof(oi) };
	struct iour_insn ret1 = { 0x06, 0, 0, 1 };

	cr_assert_eq(iour_filter__set_default(NULL, NOP, IOUR_ALLOW), -EINVAL);
	cr_assert_eq(iour_filter__set_default(f, 256, IOUR_ALLOW), -EINVAL);
	cr_assert_eq(iour_filter__set_default(f, NOP, 7), -EINVAL);
	cr_assert_eq(iour_filter__set_default(f, NOP, IOUR_ALLOW), 0);
	cr_assert_eq(iour_filter__opcode_info(f, NOP, &oi), 0);
	cr_assert_eq(oi.nrules, 0);
	cr_assert_eq(oi.flags, IOUR_OPINFO_HAS_DEFAULT);
	cr_assert_eq(oi.default_verdict, IOUR_ALLOW);
	cr_assert_eq(iour_filter__set_default(f, NOP, IOUR_DENY), 0);
	cr_assert_eq(iour_filter__opcode_info(f, NOP, &oi), 0);
	cr_assert_eq(oi.default_verdict, IOUR_DENY);
	cr_assert_eq(iour_filter__set_raw(f, 7, &ret1, 1), 0);
	cr_assert_eq(iour_filter__set_default(f, 7, IOUR_DENY), -EEXIST);
	iour_filter__free(f);
}

Test(filter_builder, set_raw_contract)
{
	struct iour_filter *f = mk();
	const struct iour_insn good[] = { { 0x20, 0, 0, 16 }, { 0x15, 0, 1, 2 },
					  { 0x06, 0, 0, 1 },  { 0x06, 0, 0, 0 } };
	const struct iour_insn bad_off[] = { { 0x20, 0, 0, 40 }, { 0x06, 0, 0, 0 } };
	const struct iour_insn no_ret[] = { { 0x20, 0, 0, 0 } };
	const struct iour_insn deny[] = { { 0x06, 0, 0, 0 } };
	static struct iour_insn huge[4097];
	struct iour_filter_opinfo oi = { .sz = sizeof(oi) };
	struct iour_prog *p;

	cr_assert_eq(iour_filter__set_raw(NULL, SOCKET, good, 4), -EINVAL);
	cr_assert_eq(iour_filter__set_raw(f, SOCKET, NULL, 4), -EINVAL);
	cr_assert_eq(iour_filter__set_raw(f, 300, good, 4), -EINVAL);
	cr_assert_eq(iour_filter__set_raw(f, SOCKET, good, 0), -IOUR_ERRNO__INVALID_PROG);
	cr_assert_eq(iour_filter__set_raw(f, SOCKET, bad_off, 2), -IOUR_ERRNO__INVALID_PROG);
	cr_assert_eq(iour_filter__set_raw(f, SOCKET, no_ret, 1), -IOUR_ERRNO__INVALID_PROG);
	for (size_t i = 0; i < 4097; i++)
		huge[i] = deny[0];
	cr_assert_eq(iour_filter__set_raw(f, SOCKET, huge, 4097), -IOUR_ERRNO__INVALID_PROG);
	cr_assert_eq(iour_filter__opcodes(f, NULL, 0), 0, "failed calls filter nothing");

	cr_assert_eq(iour_filter__set_raw(f, SOCKET, good, 4), 0);
	cr_assert_eq(iour_filter__opcode_info(f, SOCKET, &oi), 0);
	cr_assert_eq(oi.flags, IOUR_OPINFO_RAW);
	cr_assert_eq(oi.raw_cnt, 4);
	cr_assert_eq(iour_filter__compile(f, SOCKET, NULL, &p), 0);
	cr_assert_eq(iour_prog__insn_cnt(p), 4);
	cr_assert(!memcmp(iour_prog__insns(p), good, sizeof(good)));
	cr_assert_eq(iour_prog__kind(p), IOUR_PROG_FILTER);
	cr_assert_eq(iour_prog__pdu_size(p), 12, "a raw program reading the payload");
	iour_prog__free(p);
	/* rules and a raw program exclude each other */
	cr_assert_eq(add1(f, SOCKET, cmp(IOUR_FIELD_SOCKET_FAMILY, IOUR_CMP_EQ, 2, 0)), -EEXIST);
	cr_assert_eq(add1(f, NOP, cmp(IOUR_FIELD_USER_DATA, IOUR_CMP_EQ, 2, 0)), 0);
	cr_assert_eq(iour_filter__set_raw(f, NOP, deny, 1), -EEXIST);
	cr_assert_eq(iour_filter__set_default(f, OPENAT, IOUR_DENY), 0);
	cr_assert_eq(iour_filter__set_raw(f, OPENAT, deny, 1), -EEXIST);
	/* a raw program replaces the previous one; a lone RET is constant */
	cr_assert_eq(iour_filter__set_raw(f, SOCKET, deny, 1), 0);
	cr_assert_eq(iour_filter__compile(f, SOCKET, NULL, &p), 0);
	cr_assert_eq(iour_prog__kind(p), IOUR_PROG_ALWAYS_DENY);
	cr_assert_eq(iour_prog__pdu_size(p), 0);
	iour_prog__free(p);
	iour_filter__free(f);
}

Test(filter_builder, opcodes_two_call_sizing)
{
	struct iour_filter *f = mk();
	uint32_t buf[4];

	cr_assert_eq(iour_filter__opcodes(NULL, NULL, 0), -EINVAL);
	cr_assert_eq(iour_filter__opcodes(f, NULL, 3), -EINVAL);
	cr_assert_eq(iour_filter__opcodes(f, NULL, 0), 0);
	cr_assert_eq(iour_filter__set_default(f, SOCKET, IOUR_DENY), 0);
	cr_assert_eq(add1(f, CONNECT, cmp(IOUR_FIELD_CONNECT_PORT, IOUR_CMP_EQ, 22, 0)), 0);
	cr_assert_eq(iour_filter__set_default(f, 255, IOUR_ALLOW), 0);
	cr_assert_eq(iour_filter__opcodes(f, NULL, 0), 3);
	buf[0] = 77;
	cr_assert_eq(iour_filter__opcodes(f, buf, 2), -ERANGE);
	cr_assert_eq(buf[0], 77, "nothing written on -ERANGE");
	cr_assert_eq(iour_filter__opcodes(f, buf, 4), 3);
	cr_assert_eq(buf[0], CONNECT);
	cr_assert_eq(buf[1], SOCKET);
	cr_assert_eq(buf[2], 255);
	iour_filter__free(f);
}

Test(filter_builder, opcode_info_contract)
{
	struct iour_filter *f = mk();
	struct iour_filter_opinfo oi = { .sz = sizeof(oi) };
	struct {
		size_t sz;
		uint32_t nrules;
	} small = { .sz = sizeof(small) };

	cr_assert_eq(iour_filter__opcode_info(NULL, NOP, &oi), -EINVAL);
	cr_assert_eq(iour_filter__opcode_info(f, NOP, NULL), -EINVAL);
	cr_assert_eq(iour_filter__opcode_info(f, 256, &oi), -EINVAL);
	oi.sz = sizeof(size_t);
	cr_assert_eq(iour_filter__opcode_info(f, NOP, &oi), -EINVAL);
	oi.sz = sizeof(oi);
	cr_assert_eq(iour_filter__opcode_info(f, NOP, &oi), -ENOENT);
	cr_assert_eq(add1(f, NOP, cmp(IOUR_FIELD_USER_DATA, IOUR_CMP_EQ, 2, 0)), 0);
	cr_assert_eq(add1(f, NOP, cmp(IOUR_FIELD_USER_DATA, IOUR_CMP_EQ, 3, 0)), 0);
	cr_assert_eq(iour_filter__opcode_info(f, NOP, (struct iour_filter_opinfo *)&small), 0);
	cr_assert_eq(small.nrules, 2, "a shorter struct is filled up to its sz");
	cr_assert_eq(iour_filter__opcode_info(f, NOP, &oi), 0);
	cr_assert_eq(oi.nrules, 2);
	cr_assert_eq(oi.flags, 0);
	cr_assert_eq(oi.default_verdict, IOUR_DENY);
	cr_assert_eq(oi.raw_cnt, 0);
	iour_filter__free(f);
}

Test(filter_builder, dup_is_deep_and_independent)
{
	struct iour_filter *f = mk(), *g = NULL;
	uint64_t set[3] = { 22, 80, 443 };
	struct iour_cmp c = cmp(IOUR_FIELD_CONNECT_PORT, IOUR_CMP_IN_SET, 0, 0);
	const struct iour_insn deny[] = { { 0x06, 0, 0, 0 } };
	struct iour_prog *a, *b;

	c.set = set;
	c.set_len = 3;
	cr_assert_eq(iour_filter__dup(NULL, &g), -EINVAL);
	cr_assert_eq(iour_filter__dup(f, NULL), -EINVAL);
	cr_assert_eq(add1(f, CONNECT, c), 0);
	cr_assert_eq(iour_filter__set_raw(f, NOP, deny, 1), 0);
	cr_assert_eq(iour_filter__dup(f, &g), 0);
	set[0] = 99; /* the caller's array was copied */
	cr_assert_eq(iour_filter__compile(f, CONNECT, NULL, &a), 0);
	cr_assert_eq(iour_filter__compile(g, CONNECT, NULL, &b), 0);
	cr_assert_eq(iour_prog__insn_cnt(a), iour_prog__insn_cnt(b));
	cr_assert(!memcmp(iour_prog__insns(a), iour_prog__insns(b),
			  iour_prog__insn_cnt(a) * sizeof(struct iour_insn)));
	iour_prog__free(a);
	iour_prog__free(b);
	/* changing one leaves the other alone */
	cr_assert_eq(add1(f, CONNECT, cmp(IOUR_FIELD_CONNECT_PORT, IOUR_CMP_EQ, 1, 0)), 0);
	cr_assert_eq(nrules(f, CONNECT), 2);
	cr_assert_eq(nrules(g, CONNECT), 1);
	iour_filter__free(f);
	cr_assert_eq(iour_filter__compile(g, NOP, NULL, &a), 0);
	cr_assert_eq(iour_prog__kind(a), IOUR_PROG_ALWAYS_DENY);
	iour_prog__free(a);
	iour_filter__free(g);
}

/* Compiles f's opcode; the program's instructions in a malloc'd copy. */
static struct iour_insn *compiled(const struct iour_filter *f, uint32_t opcode, size_t *cnt)
{
	struct iour_prog *p = NULL;
	struct iour_insn *copy;

	cr_assert_eq(iour_filter__compile(f, opcode, NULL, &p), 0, "opcode %u", opcode);
	*cnt = iour_prog__insn_cnt(p);
	copy = malloc(*cnt * sizeof(*copy));
	cr_assert_not_null(copy);
	memcpy(copy, iour_prog__insns(p), *cnt * sizeof(*copy));
	iour_prog__free(p);
	return copy;
}

static void expect_same_prog(const struct iour_filter *f, uint32_t opcode,
			     const struct iour_insn *want, size_t want_cnt)
{
	size_t cnt;
	struct iour_insn *got = compiled(f, opcode, &cnt);

	cr_assert_eq(cnt, want_cnt, "opcode %u: %zu instructions, not %zu", opcode, cnt, want_cnt);
	cr_assert(!memcmp(got, want, cnt * sizeof(*got)), "opcode %u: another program", opcode);
	free(got);
}

/* The filter keeps opcodes in pages of 64 allocated on first use
 * (lib/filter/filter_internal.h): opcodes at both ends of several pages, one page
 * left out, go through opcodes(), opcode_info(), dup() and compile. */
Test(filter_builder, opcodes_in_several_pages_round_trip)
{
	static const uint32_t ops[] = { 0, 63, 64, 255 };
	const struct iour_insn allow[] = { { 0x06, 0, 0, 1 } };
	struct iour_filter *f = mk(), *g = NULL;
	struct iour_filter_opinfo oi = { .sz = sizeof(oi) };
	struct iour_insn *want[4];
	size_t want_cnt[4];
	uint32_t buf[8];
	struct iour_prog *p = NULL;

	cr_assert_eq(add1(f, 0, cmp(IOUR_FIELD_USER_DATA, IOUR_CMP_EQ, 1, 0)), 0);
	cr_assert_eq(iour_filter__set_default(f, 63, IOUR_ALLOW), 0);
	cr_assert_eq(add1(f, 64, cmp(IOUR_FIELD_SQE_FLAGS, IOUR_CMP_NONE_BITS, 1, 0)), 0);
	cr_assert_eq(iour_filter__set_default(f, 64, IOUR_ALLOW), 0);
	cr_assert_eq(iour_filter__set_raw(f, 255, allow, 1), 0);
	cr_assert_eq(iour_filter__opcodes(f, NULL, 0), 4);
	cr_assert_eq(iour_filter__opcodes(f, buf, 8), 4);
	for (size_t i = 0; i < 4; i++) {
		cr_assert_eq(buf[i], ops[i], "opcodes()[%zu] = %u", i, buf[i]);
		want[i] = compiled(f, ops[i], &want_cnt[i]);
	}
	/* absent: a slot of an allocated page, and a page never allocated */
	for (uint32_t op = 1; op < 256; op++) {
		if (op == 63 || op == 64 || op == 255)
			continue;
		cr_assert_eq(iour_filter__opcode_info(f, op, &oi), -ENOENT, "opcode %u", op);
		cr_assert_eq(iour_filter__compile(f, op, NULL, &p), -ENOENT, "opcode %u", op);
	}
	cr_assert_eq(iour_filter__opcode_info(f, 0, &oi), 0);
	cr_assert_eq(oi.nrules, 1);
	cr_assert_eq(oi.flags, 0);
	cr_assert_eq(iour_filter__opcode_info(f, 63, &oi), 0);
	cr_assert_eq(oi.nrules, 0);
	cr_assert_eq(oi.flags, IOUR_OPINFO_HAS_DEFAULT);
	cr_assert_eq(oi.default_verdict, IOUR_ALLOW);
	cr_assert_eq(iour_filter__opcode_info(f, 64, &oi), 0);
	cr_assert_eq(oi.nrules, 1);
	cr_assert_eq(oi.flags, IOUR_OPINFO_HAS_DEFAULT);
	cr_assert_eq(iour_filter__opcode_info(f, 255, &oi), 0);
	cr_assert_eq(oi.flags, IOUR_OPINFO_RAW);
	cr_assert_eq(oi.raw_cnt, 1);

	cr_assert_eq(iour_filter__dup(f, &g), 0);
	iour_filter__free(f); /* the copy shares nothing with it */
	memset(buf, 0, sizeof(buf));
	cr_assert_eq(iour_filter__opcodes(g, buf, 8), 4);
	for (size_t i = 0; i < 4; i++) {
		cr_assert_eq(buf[i], ops[i], "dup: opcodes()[%zu] = %u", i, buf[i]);
		expect_same_prog(g, ops[i], want[i], want_cnt[i]);
		free(want[i]);
	}
	cr_assert_eq(iour_filter__opcode_info(g, 128, &oi), -ENOENT);
	/* a page the copy did not have is allocated on its first use there */
	cr_assert_eq(iour_filter__set_default(g, 130, IOUR_DENY), 0);
	cr_assert_eq(iour_filter__opcodes(g, buf, 8), 5);
	cr_assert_eq(buf[3], 130);
	cr_assert_eq(buf[4], 255);
	iour_filter__free(g);
}

/* Rule i of the list below, as the test's own reference: its verdict when
 * user_data and sqe_flags match it, else UINT32_MAX. */
static uint32_t ref_rule(size_t i, uint64_t ud, uint32_t flags)
{
	uint64_t b = 100 * (uint64_t)i;
	uint32_t v = i % 2 ? IOUR_DENY : IOUR_ALLOW;

	switch (i % 3) {
	case 0:
		return ud == b ? v : UINT32_MAX;
	case 1:
		return ud == b + 1 || ud == b + 3 || ud == b + 5 ? v : UINT32_MAX;
	default:
		return ud >= b && ud <= b + 50 && !(flags & 1) && ud != b + 7 ? v : UINT32_MAX;
	}
}

/* Adds rules [from, to) of the list: one-comparison rules (an equality,
 * a set) and three-comparison ones, by turns. */
static void add_mixed_rules(struct iour_filter *f, size_t from, size_t to)
{
	for (size_t i = from; i < to; i++) {
		uint64_t b = 100 * (uint64_t)i;
		uint64_t set[4] = { b + 5, b + 1, b + 3, b + 1 }; /* sorted and deduplicated */
		uint32_t v = i % 2 ? IOUR_DENY : IOUR_ALLOW;
		struct iour_cmp c[3];

		switch (i % 3) {
		case 0:
			c[0] = cmp(IOUR_FIELD_USER_DATA, IOUR_CMP_EQ, b, 0);
			cr_assert_eq(iour_filter__add_rule(f, NOP, v, c, 1), 0, "rule %zu", i);
			break;
		case 1:
			c[0] = cmp(IOUR_FIELD_USER_DATA, IOUR_CMP_IN_SET, 0, 0);
			c[0].set = set;
			c[0].set_len = 4;
			cr_assert_eq(iour_filter__add_rule(f, NOP, v, c, 1), 0, "rule %zu", i);
			break;
		default:
			c[0] = cmp(IOUR_FIELD_USER_DATA, IOUR_CMP_IN_RANGE, b, b + 50);
			c[1] = cmp(IOUR_FIELD_SQE_FLAGS, IOUR_CMP_NONE_BITS, 1, 0);
			c[2] = cmp(IOUR_FIELD_USER_DATA, IOUR_CMP_NE, b + 7, 0);
			cr_assert_eq(iour_filter__add_rule(f, NOP, v, c, 3), 0, "rule %zu", i);
			break;
		}
		memset(set, 0, sizeof(set)); /* the builder kept its own copy */
	}
	cr_assert_eq(nrules(f, NOP), to);
}

/* Runs f's NOP program on requests around every rule of [0, n) and checks
 * the verdict of the first matching rule (default deny). */
static void expect_mixed_verdicts(const struct iour_filter *f, size_t n)
{
	static const uint64_t offs[] = { 0, 1, 2, 3, 5, 7, 10, 50, 51, 99 };
	size_t cnt;
	struct iour_insn *insns = compiled(f, NOP, &cnt);

	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < sizeof(offs) / sizeof(offs[0]); k++)
			for (uint32_t flags = 0; flags < 2; flags++) {
				uint64_t ud = 100 * (uint64_t)i + offs[k];
				uint32_t want = IOUR_DENY;
				struct iour_sim_result res = { .sz = sizeof(res) };
				uint8_t ctx[IOUR_CTX_SIZE];

				for (size_t j = 0; j < n; j++) {
					uint32_t v = ref_rule(j, ud, flags);

					if (v != UINT32_MAX) {
						want = v;
						break;
					}
				}
				cr_assert_eq(iour_ctx_generic(ctx, sizeof(ctx), NOP, flags, ud), 0);
				cr_assert_eq(iour_cbpf_run(insns, cnt, ctx, sizeof(ctx), &res), 0);
				cr_assert_eq(res.allowed, want == IOUR_ALLOW,
					     "user_data %llu, flags %u: %s", (unsigned long long)ud,
					     flags, res.allowed ? "allowed" : "denied");
			}
	free(insns);
}

/* A rule's single comparison is kept inside the rule (lib/filter/filter_internal.h,
 * struct iour__rule): it must follow the rule as the rules array grows
 * (4, 8, 16, 32), into a copy, and as the copy grows in turn. */
Test(filter_builder, many_mixed_rules_grow_dup_and_compile)
{
	struct iour_filter *f = mk(), *g = NULL, *h = mk();
	struct iour_insn *want;
	size_t want_cnt;

	add_mixed_rules(f, 0, 21);
	expect_mixed_verdicts(f, 21);
	want = compiled(f, NOP, &want_cnt);
	cr_assert_eq(iour_filter__dup(f, &g), 0);
	iour_filter__free(f);
	expect_same_prog(g, NOP, want, want_cnt);
	free(want);
	/* the copy's array is exactly full: the next rule grows it */
	add_mixed_rules(g, 21, 40);
	expect_mixed_verdicts(g, 40);
	add_mixed_rules(h, 0, 40);
	want = compiled(h, NOP, &want_cnt);
	expect_same_prog(g, NOP, want, want_cnt);
	free(want);
	iour_filter__free(g);
	iour_filter__free(h);
}

Test(filter_builder, compile_errors)
{
	struct iour_filter *f = mk();
	struct iour_compile_opts o = { .sz = sizeof(o) };
	struct {
		struct iour_compile_opts o;
		uint32_t future;
		uint32_t pad;
	} big = { .o = { .sz = sizeof(big) }, .future = 1 };
	struct iour_prog *p = NULL;
	uint64_t *set = malloc(5000 * sizeof(*set));
	struct iour_cmp c = cmp(IOUR_FIELD_SOCKET_PROTOCOL, IOUR_CMP_IN_SET, 0, 0);

	cr_assert_eq(iour_filter__compile(NULL, NOP, NULL, &p), -EINVAL);
	cr_assert_eq(iour_filter__compile(f, NOP, NULL, NULL), -EINVAL);
	cr_assert_eq(iour_filter__compile(f, 256, NULL, &p), -EINVAL);
	cr_assert_eq(iour_filter__compile(f, NOP, NULL, &p), -ENOENT, "not filtered");
	cr_assert_eq(add1(f, NOP, cmp(IOUR_FIELD_USER_DATA, IOUR_CMP_EQ, 2, 0)), 0);
	o.flags = 1;
	cr_assert_eq(iour_filter__compile(f, NOP, &o, &p), -EINVAL);
	o.flags = 0;
	o.max_insns = 4097;
	cr_assert_eq(iour_filter__compile(f, NOP, &o, &p), -EINVAL);
	cr_assert_eq(iour_filter__compile(f, NOP, &big.o, &p), -E2BIG);
	o.max_insns = 3; /* the program needs 6 */
	cr_assert_eq(iour_filter__compile(f, NOP, &o, &p), -IOUR_ERRNO__PROG_TOO_LARGE);
	o.max_insns = 6;
	cr_assert_eq(iour_filter__compile(f, NOP, &o, &p), 0);
	cr_assert_eq(iour_prog__insn_cnt(p), 6);
	iour_prog__free(p);
	/* more distinct, scattered values than 4096 instructions can test */
	for (size_t i = 0; i < 5000; i++)
		set[i] = 7 * i;
	c.set = set;
	c.set_len = 5000;
	cr_assert_eq(add1(f, SOCKET, c), 0);
	cr_assert_eq(iour_filter__compile(f, SOCKET, NULL, &p), -IOUR_ERRNO__PROG_TOO_LARGE);
	free(set);
	iour_filter__free(f);
}

Test(filter_builder, prog_getters_accept_null)
{
	cr_assert_null(iour_prog__insns(NULL));
	cr_assert_eq(iour_prog__insn_cnt(NULL), 0);
	cr_assert_eq(iour_prog__opcode(NULL), UINT32_MAX);
	cr_assert_eq(iour_prog__kind(NULL), IOUR_PROG_FILTER);
	cr_assert_eq(iour_prog__pdu_size(NULL), 0);
	iour_prog__free(NULL);
}

Test(filter_builder, documented_codes_have_names)
{
	const int codes[] = { EINVAL, E2BIG, EDOM, EOPNOTSUPP, ERANGE, EEXIST, ENOMEM, ENOENT,
			      IOUR_ERRNO__INVALID_PROG, IOUR_ERRNO__PROG_TOO_LARGE };

	for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++)
		cr_assert_str_neq(iour_errname(-codes[i]), "UNKNOWN", "code %d", codes[i]);
}
