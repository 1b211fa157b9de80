/* SPDX-License-Identifier: MIT */
/*
 * The rule front end (include/iouring_restrict/rules.h; doc/design.md,
 * "The rule front end"): each function with good input and with every
 * error it documents, the spellings both front ends now share, and a
 * differential test: for every rule text of the tests (and texts made
 * from them and from the request schema), the library's parse gives the
 * same struct iour_cmp array, or the same error at the same byte, as the
 * tool's parser did before the library took it over (rules_oracle.c).
 */
#include <criterion/criterion.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "base/internal.h"
#include "iouring_restrict/iouring_restrict.h"
#include "rules_oracle.h"

#define ERR(e) struct iour_rule_error e = { .sz = sizeof(e) }

/* ---- iour_rule_field() */

Test(rules, field_names)
{
	ERR(e);
	uint32_t id = 0;

	cr_assert_eq(iour_rule_field("family", IOUR_OP_SOCKET, &id, &e), 0);
	cr_assert_eq(id, IOUR_FIELD_SOCKET_FAMILY);
	cr_assert_eq(iour_rule_field("Socket.FAMILY", IOUR_OP_SOCKET, &id, &e), 0);
	cr_assert_eq(id, IOUR_FIELD_SOCKET_FAMILY);
	cr_assert_eq(iour_rule_field("family", IOUR_OP_CONNECT, &id, &e), 0);
	cr_assert_eq(id, IOUR_FIELD_CONNECT_FAMILY);
	cr_assert_eq(iour_rule_field("user_data", IOUR_OP_NOP, &id, &e), 0);
	cr_assert_eq(id, IOUR_FIELD_USER_DATA);
	/* without an opcode: dotted names only, as policy files write them */
	cr_assert_eq(iour_rule_field("connect.port", IOUR_RULE_NO_OPCODE, &id, &e), 0);
	cr_assert_eq(id, IOUR_FIELD_CONNECT_PORT);
	cr_assert_eq(iour_rule_field("port", IOUR_RULE_NO_OPCODE, &id, &e), -ENOENT);
	cr_assert(strstr(e.message, "unknown field 'port'"), "%s", e.message);
}

Test(rules, field_errors)
{
	struct iour_rule_error small = { .sz = offsetof(struct iour_rule_error, message) };
	ERR(e);
	uint32_t id = 7;

	cr_assert_eq(iour_rule_field(NULL, IOUR_OP_SOCKET, &id, &e), -EINVAL);
	cr_assert_eq(iour_rule_field("family", IOUR_OP_SOCKET, NULL, &e), -EINVAL);
	cr_assert_eq(iour_rule_field("family", IOUR_OP_SOCKET, &id, NULL), -EINVAL);
	cr_assert_eq(iour_rule_field("family", IOUR_OP_SOCKET, &id, &small), -EINVAL);
	cr_assert_eq(iour_rule_field("family", 256, &id, &e), -EINVAL);
	/* an opcode the name table lacks: fields of every opcode only */
	cr_assert_eq(iour_rule_field("family", 200, &id, &e), -EDOM);
	cr_assert_str_eq(e.message, "field 'family' does not exist for opcode 200 (its fields: "
				    "user_data, sqe_flags)");
	cr_assert_eq(iour_rule_field("bogus", 200, &id, &e), -ENOENT);
	cr_assert_str_eq(e.message, "unknown field 'bogus' (fields of 200: user_data, sqe_flags)");
	cr_assert_eq(iour_rule_field("user_data", 255, &id, &e), 0);
	cr_assert_eq(id, IOUR_FIELD_USER_DATA);
	id = 7;
	cr_assert_eq(iour_rule_field("bogus", IOUR_OP_SOCKET, &id, &e), -ENOENT);
	cr_assert_eq(id, 7, "id written on error");
	cr_assert_str_eq(e.message, "unknown field 'bogus' (fields of SOCKET: family, type, "
				    "type_flags, type_raw, protocol, user_data, sqe_flags)");
	cr_assert_eq(e.pos, 0);
	/* a field of other opcodes */
	cr_assert_eq(iour_rule_field("family", IOUR_OP_OPENAT, &id, &e), -EDOM);
	cr_assert(strstr(e.message, "field 'family' does not exist for opcode OPENAT"), "%s",
		  e.message);
	/* a field the kernel does not see: the hint, once for both front ends */
	cr_assert_eq(iour_rule_field("path", IOUR_OP_OPENAT, &id, &e), -ENOENT);
	cr_assert(strstr(e.message, "; the kernel's filters see no paths: use Landlock"), "%s",
		  e.message);
	cr_assert_eq(iour_rule_field("bind.port", IOUR_RULE_NO_OPCODE, &id, &e), -ENOENT);
	cr_assert(strstr(e.message, "see CONNECT's address only"), "%s", e.message);
	cr_assert_eq(iour_rule_field("connect.sockaddr", IOUR_RULE_NO_OPCODE, &id, &e), -ENOENT);
	cr_assert_null(strstr(e.message, "CONNECT's address only"), "%s", e.message);
}

/* ---- iour_rule_op(): one table, both front ends' spellings */

Test(rules, operators)
{
	static const struct {
		const char *name;
		uint32_t op;
	} ok[] = {
		{ "==", IOUR_CMP_EQ },
		{ "!=", IOUR_CMP_NE },
		{ "<", IOUR_CMP_LT },
		{ "<=", IOUR_CMP_LE },
		{ ">", IOUR_CMP_GT },
		{ ">=", IOUR_CMP_GE },
		{ "&=", IOUR_CMP_ANY_BITS },
		{ "any-bits", IOUR_CMP_ANY_BITS },
		{ "ALL-BITS", IOUR_CMP_ALL_BITS },
		{ "none-bits", IOUR_CMP_NONE_BITS },
		{ "&==", IOUR_CMP_MASKED_EQ },
		{ "in", IOUR_CMP_IN_SET },
		{ "not in", IOUR_CMP_NOT_IN_SET },
		{ "Not In", IOUR_CMP_NOT_IN_SET },
		{ "!in", IOUR_CMP_NOT_IN_SET },
	};
	uint32_t op = 99;

	for (size_t i = 0; i < IOUR_ARRAY_SIZE(ok); i++) {
		cr_expect_eq(iour_rule_op(ok[i].name, &op), 0, "%s", ok[i].name);
		cr_expect_eq(op, ok[i].op, "%s: %u", ok[i].name, op);
	}
	op = 99;
	cr_assert_eq(iour_rule_op("~", &op), -ENOENT);
	cr_assert_eq(iour_rule_op("=", &op), -ENOENT);
	cr_assert_eq(iour_rule_op("not  in", &op), -ENOENT);
	cr_assert_eq(op, 99);
	cr_assert_eq(iour_rule_op(NULL, &op), -EINVAL);
	cr_assert_eq(iour_rule_op("==", NULL), -EINVAL);
}

/* ---- iour_rule_value() */

Test(rules, values)
{
	IOUR_OPTS(iour_cmp, c);
	static const uint8_t one[16] = { [15] = 1 };
	ERR(e);

	cr_assert_eq(iour_rule_value("AF_INET", IOUR_FIELD_SOCKET_FAMILY, &c, &e), 0);
	cr_assert_eq(c.value, 2);
	cr_assert_eq(iour_rule_value(" af_unix ", IOUR_FIELD_SOCKET_FAMILY, &c, &e), 0);
	cr_assert_eq(c.value, 1);
	cr_assert_eq(iour_rule_value("0x10", IOUR_FIELD_USER_DATA, &c, &e), 0);
	cr_assert_eq(c.value, 16);
	cr_assert_eq(iour_rule_value("0644", IOUR_FIELD_OPEN_MODE, &c, &e), 0);
	cr_assert_eq(c.value, 0644);
	cr_assert_eq(iour_rule_value("S_IRUSR | S_IWUSR", IOUR_FIELD_OPEN_MODE, &c, &e), 0);
	cr_assert_eq(c.value, 0600);
	cr_assert_eq(iour_rule_value("10.1.2.3", IOUR_FIELD_CONNECT_ADDR4, &c, &e), 0);
	cr_assert_eq(c.value, 0x0a010203);
	cr_assert_eq(iour_rule_value("167772160", IOUR_FIELD_CONNECT_ADDR4, &c, &e), 0);
	cr_assert_eq(c.value, 0x0a000000);
	cr_assert_eq(iour_rule_value("IOSQE_ASYNC", IOUR_FIELD_SQE_FLAGS, &c, &e), 0);
	cr_assert_eq(c.value, IOUR_SQE_ASYNC);
	c.value = 5;
	cr_assert_eq(iour_rule_value("::1", IOUR_FIELD_CONNECT_ADDR6, &c, &e), 0);
	cr_assert_eq(memcmp(c.addr6, one, 16), 0);
	cr_assert_eq(c.value, 5, "an addr6 value touched value");
}

Test(rules, value_errors)
{
	static const struct {
		const char *text;
		uint32_t field;
		size_t pos;
		const char *msg;
	} bad[] = {
		{ "SOCK_STREAM", IOUR_FIELD_SOCKET_FAMILY, 0,
		  "'SOCK_STREAM' is not a constant of family, which takes AF_* constants" },
		{ "AF_NOPE", IOUR_FIELD_SOCKET_FAMILY, 0, "unknown constant 'AF_NOPE'" },
		{ "AF_INET|AF_INET6", IOUR_FIELD_SOCKET_FAMILY, 7,
		  "'|' joins bit flags, and family is not a set of flags: to accept several "
		  "values, write 'family in {A, B}'" },
		{ "O_CREAT|O_BOGUS", IOUR_FIELD_OPEN_FLAGS, 8, "unknown constant 'O_BOGUS'" },
		{ "12x", IOUR_FIELD_USER_DATA, 0,
		  "'12x' is not a number (decimal, 0x hex or 0 octal, below 2^64)" },
		{ "99999999999999999999", IOUR_FIELD_USER_DATA, 0,
		  "'99999999999999999999' is not a number (decimal, 0x hex or 0 octal, below "
		  "2^64)" },
		{ "AF_INET", IOUR_FIELD_CONNECT_PORT, 0,
		  "'AF_INET': port takes numbers, not constants" },
		{ "10.0.0", IOUR_FIELD_CONNECT_ADDR4, 0, "'10.0.0' is not an IPv4 address" },
		{ "10.0.0.1", IOUR_FIELD_CONNECT_PORT, 0,
		  "'10.0.0.1': an IPv4 address is a value of addr4 only" },
		{ "fe80::1", IOUR_FIELD_CONNECT_PORT, 0,
		  "'fe80::1': an IPv6 address is a value of addr6 only" },
		{ "1.2.3.4", IOUR_FIELD_CONNECT_ADDR6, 0, "'1.2.3.4' is not an IPv6 address" },
		{ "", IOUR_FIELD_USER_DATA, 0, "expected a value at the end" },
		{ "1 2", IOUR_FIELD_USER_DATA, 2, "expected the end of the value, found '2'" },
		{ "1,", IOUR_FIELD_USER_DATA, 1, "expected the end of the value, found ','" },
	};
	IOUR_OPTS(iour_cmp, c);
	struct iour_rule_error small = { .sz = sizeof(small) - 1 };
	ERR(e);

	for (size_t i = 0; i < IOUR_ARRAY_SIZE(bad); i++) {
		c.value = 42;
		cr_expect_eq(iour_rule_value(bad[i].text, bad[i].field, &c, &e), -EBADMSG, "%s",
			     bad[i].text);
		cr_expect_str_eq(e.message, bad[i].msg, "'%s'", bad[i].text);
		cr_expect_eq(e.pos, bad[i].pos, "'%s': %zu", bad[i].text, e.pos);
		cr_expect_eq(c.value, 42, "'%s': value written on error", bad[i].text);
	}
	cr_assert_eq(iour_rule_value("1", 0xdead, &c, &e), -ENOENT);
	cr_assert_eq(iour_rule_value(NULL, IOUR_FIELD_USER_DATA, &c, &e), -EINVAL);
	cr_assert_eq(iour_rule_value("1", IOUR_FIELD_USER_DATA, NULL, &e), -EINVAL);
	cr_assert_eq(iour_rule_value("1", IOUR_FIELD_USER_DATA, &c, NULL), -EINVAL);
	cr_assert_eq(iour_rule_value("1", IOUR_FIELD_USER_DATA, &c, &small), -EINVAL);
}

/* ---- iour_rule_prefix() */

Test(rules, prefixes)
{
	IOUR_OPTS(iour_cmp, c);
	static const uint8_t fe80[16] = { 0xfe, 0x80 };
	ERR(e);

	cr_assert_eq(iour_rule_prefix("10.0.0.0/8", IOUR_FIELD_CONNECT_ADDR4, &c, &e), 0);
	cr_assert_eq(c.value, 0x0a000000);
	cr_assert_eq(c.arg, 8);
	cr_assert_eq(iour_rule_prefix("10.0.0.1", IOUR_FIELD_CONNECT_ADDR4, &c, &e), 0);
	cr_assert_eq(c.arg, 32, "an address alone is its full length");
	c.value = 9;
	cr_assert_eq(iour_rule_prefix("fe80::/10", IOUR_FIELD_CONNECT_ADDR6, &c, &e), 0);
	cr_assert_eq(memcmp(c.addr6, fe80, 16), 0);
	cr_assert_eq(c.arg, 10);
	cr_assert_eq(c.value, 9, "an addr6 prefix touched value");
	cr_assert_eq(iour_rule_prefix("::1", IOUR_FIELD_CONNECT_ADDR6, &c, &e), 0);
	cr_assert_eq(c.arg, 128);
}

Test(rules, prefix_errors)
{
	static const struct {
		const char *text;
		uint32_t field;
		size_t pos;
		const char *msg;
	} bad[] = {
		{ "10.0.0.0/33", IOUR_FIELD_CONNECT_ADDR4, 9, "prefix length '33' out of range (0 to 32)" },
		{ "::/129", IOUR_FIELD_CONNECT_ADDR6, 3, "prefix length '129' out of range (0 to 128)" },
		{ "10.0.0.0/", IOUR_FIELD_CONNECT_ADDR4, 9, "prefix length '' out of range (0 to 32)" },
		{ "10.0.0/8", IOUR_FIELD_CONNECT_ADDR4, 0, "'10.0.0' is not an IPv4 address" },
		{ "1.2.3.4/8", IOUR_FIELD_CONNECT_ADDR6, 0, "'1.2.3.4' is not an IPv6 address" },
		{ "1/8", IOUR_FIELD_CONNECT_PORT, 0, "port is not an address: it has no prefixes" },
		{ "0000:0000:0000:0000:0000:0000:0000:0000:0000:0000:0000:0000/8",
		  IOUR_FIELD_CONNECT_ADDR6, 0,
		  "the prefix is too long" },
	};
	IOUR_OPTS(iour_cmp, c);
	ERR(e);

	for (size_t i = 0; i < IOUR_ARRAY_SIZE(bad); i++) {
		c.arg = 77;
		cr_expect_eq(iour_rule_prefix(bad[i].text, bad[i].field, &c, &e), -EBADMSG, "%s",
			     bad[i].text);
		cr_expect_str_eq(e.message, bad[i].msg, "'%s'", bad[i].text);
		cr_expect_eq(e.pos, bad[i].pos, "'%s': %zu", bad[i].text, e.pos);
		cr_expect_eq(c.arg, 77, "'%s': written on error", bad[i].text);
	}
	cr_assert_eq(iour_rule_prefix("1.2.3.4", 0xdead, &c, &e), -ENOENT);
	cr_assert_eq(iour_rule_prefix(NULL, IOUR_FIELD_CONNECT_ADDR4, &c, &e), -EINVAL);
	cr_assert_eq(iour_rule_prefix("1.2.3.4", IOUR_FIELD_CONNECT_ADDR4, NULL, &e), -EINVAL);
	cr_assert_eq(iour_rule_prefix("1.2.3.4", IOUR_FIELD_CONNECT_ADDR4, &c, NULL), -EINVAL);
}

/* ---- iour_rule_parse() and its rule */

Test(rules, parse)
{
	const struct iour_cmp *cmps = (const void *)1;
	struct iour_rule *r = NULL;
	ERR(e);

	cr_assert_eq(iour_rule_parse("family in {AF_INET, AF_INET6}, type == SOCK_STREAM",
				     IOUR_OP_SOCKET, &r, &e),
		     0, "%s", e.message);
	cr_assert_eq(iour_rule_cmps(r, &cmps), 2);
	cr_assert_eq(cmps[0].op, IOUR_CMP_IN_SET);
	cr_assert_eq(cmps[0].set_len, 2);
	cr_assert_eq(cmps[0].set[1], 10);
	cr_assert_eq(cmps[1].field, IOUR_FIELD_SOCKET_TYPE);
	cr_assert_null(iour_rule_warning(r));
	iour_rule_free(r);

	cr_assert_eq(iour_rule_parse("  TRUE ", IOUR_OP_READ, &r, &e), 0);
	cr_assert_eq(iour_rule_cmps(r, &cmps), 0);
	cr_assert_null(cmps);
	iour_rule_free(r);

	/* valid, but not what it says */
	cr_assert_eq(iour_rule_parse("flags == O_RDONLY", IOUR_OP_OPENAT, &r, &e), 0);
	cr_assert(iour_rule_warning(r) && strstr(iour_rule_warning(r), "O_LARGEFILE"));
	iour_rule_free(r);

	/* the spellings policy files had and the tool now shares */
	cr_assert_eq(iour_rule_parse("flags all-bits O_CREAT|O_TRUNC, mode none-bits S_IWOTH, "
				     "resolve any-bits RESOLVE_BENEATH",
				     IOUR_OP_OPENAT2, &r, &e),
		     0, "%s", e.message);
	cr_assert_eq(iour_rule_cmps(r, &cmps), 3);
	cr_assert_eq(cmps[0].op, IOUR_CMP_ALL_BITS);
	cr_assert_eq(cmps[1].op, IOUR_CMP_NONE_BITS);
	cr_assert_eq(cmps[2].op, IOUR_CMP_ANY_BITS);
	iour_rule_free(r);
	cr_assert_eq(iour_rule_parse("addr4 in 10.0.0.1, addr4 not in 167772160/8", IOUR_OP_CONNECT,
				     &r, &e),
		     0, "%s", e.message);
	cr_assert_eq(iour_rule_cmps(r, &cmps), 2);
	cr_assert_eq(cmps[0].op, IOUR_CMP_IN_PREFIX);
	cr_assert_eq(cmps[0].arg, 32);
	cr_assert_eq(cmps[1].op, IOUR_CMP_NOT_IN_PREFIX);
	cr_assert_eq(cmps[1].value, 0x0a000000);
	iour_rule_free(r);

	iour_rule_free(NULL);
	cr_assert_null(iour_rule_warning(NULL));
}

Test(rules, parse_errors)
{
	static const struct {
		uint32_t op;
		const char *text;
		size_t pos;
		const char *msg;
	} bad[] = {
		{ IOUR_OP_SOCKET, "", 0, "empty rule (write 'true' for a rule that always holds)" },
		{ IOUR_OP_SOCKET, "family=2", 6, "'=' is not an operator here: compare with '=='" },
		{ IOUR_OP_SOCKET, "family in {1,2", 14, "expected ',' or '}' in the set" },
		{ IOUR_OP_SOCKET, "family == 1 x", 12,
		  "expected ',' or the end of the rule, found 'x'" },
		{ IOUR_OP_SOCKET, "family in [3,2]", 0,
		  "the range's low end is above its high end (iour_filter__add_rule: -EINVAL)" },
		{ IOUR_OP_CONNECT, "port == 65536", 8,
		  "value outside the field's valid values (iour_filter__add_rule: -ERANGE)" },
		{ IOUR_OP_OPENAT, "flags &== 1", 6,
		  "'&==' takes its mask from the text: write 'FIELD & MASK == VALUE'" },
		{ IOUR_OP_OPENAT, "flags not 1", 10, "expected 'in' after 'not'" },
		{ IOUR_OP_CONNECT, "addr6 any-bits 1", 6, "only ==, != and 'in PREFIX' apply to addr6" },
	};
	struct iour_rule *r = (struct iour_rule *)1;
	const struct iour_cmp *cmps;
	ERR(e);

	for (size_t i = 0; i < IOUR_ARRAY_SIZE(bad); i++) {
		cr_expect_eq(iour_rule_parse(bad[i].text, bad[i].op, &r, &e), -EBADMSG, "%s",
			     bad[i].text);
		cr_expect_str_eq(e.message, bad[i].msg, "'%s'", bad[i].text);
		cr_expect_eq(e.pos, bad[i].pos, "'%s': %zu", bad[i].text, e.pos);
		cr_expect_eq(r, (struct iour_rule *)1, "'%s': out written on error", bad[i].text);
	}
	cr_assert_eq(iour_rule_parse(NULL, IOUR_OP_SOCKET, &r, &e), -EINVAL);
	cr_assert_eq(iour_rule_parse("true", 256, &r, &e), -EINVAL);
	cr_assert_eq(iour_rule_parse("true", IOUR_OP_SOCKET, NULL, &e), -EINVAL);
	cr_assert_eq(iour_rule_parse("true", IOUR_OP_SOCKET, &r, NULL), -EINVAL);
	cr_assert_eq(iour_rule_cmps(NULL, &cmps), -EINVAL);
	cr_assert_eq(iour_rule_parse("true", IOUR_OP_SOCKET, &r, &e), 0);
	cr_assert_eq(iour_rule_cmps(r, NULL), -EINVAL);
	iour_rule_free(r);
}

static int parse_and_free(const char *text)
{
	struct iour_rule *r = NULL;
	ERR(e);
	int rc = iour_rule_parse(text, IOUR_OP_SOCKET, &r, &e);

	iour_rule_free(r);
	return rc;
}

/* Each allocation failing in turn: -ENOMEM, nothing leaked
 * (test_alloc_faults.c drives the library the same way). */
Test(rules, parse_out_of_memory)
{
	static const char text[] = "family in {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, type == 1";
	unsigned long n, calls = 0;
	long live = 0;
	int rc;

	for (n = 1;; n++) {
		iour__alloc_arm(n);
		rc = parse_and_free(text);
		iour__alloc_disarm(&calls, &live);
		cr_assert_eq(live, 0, "allocation %lu failing: %ld block(s) leaked", n, live);
		if (calls < n)
			break;
		cr_assert_eq(rc, -ENOMEM, "allocation %lu of %lu failing: %s", n, calls,
			     iour_errname(rc));
	}
	cr_assert_eq(rc, 0);
	cr_assert_gt(n, 3, "the parse allocates %lu times: the test proves little", n - 1);
}

/* ---- iour_rule_ctx() */

Test(rules, ctx)
{
	uint8_t got[IOUR_CTX_SIZE + 8], want[IOUR_CTX_SIZE];
	ERR(e);

	cr_assert_eq(iour_rule_ctx("family=AF_INET, type=SOCK_STREAM|SOCK_CLOEXEC, user_data=7",
				   IOUR_OP_SOCKET, got, sizeof(got), &e),
		     0, "%s", e.message);
	cr_assert_eq(iour_ctx_generic(want, sizeof(want), IOUR_OP_SOCKET, 0, 7), 0);
	cr_assert_eq(iour_ctx_socket(want, sizeof(want), 2, 1 | 02000000, 0), 0);
	cr_assert_eq(memcmp(got, want, IOUR_CTX_SIZE), 0);
	cr_assert_eq(iour_rule_ctx("", IOUR_OP_NOP, got, IOUR_CTX_SIZE, &e), 0);
}

Test(rules, ctx_errors)
{
	static const struct {
		uint32_t op;
		const char *text;
		size_t pos;
		const char *msg;
	} bad[] = {
		{ 65, "", 0, "opcode 65 has no filter context" },
		{ IOUR_OP_SOCKET, "famly=1", 0,
		  "unknown context field 'famly' (context fields of SOCKET: family, type, "
		  "protocol, user_data, sqe_flags)" },
		{ IOUR_OP_SOCKET, "family=1,family=2", 9, "'family' is assigned twice" },
		{ IOUR_OP_SOCKET, "family 1", 7, "expected '=' after 'family'" },
		{ IOUR_OP_CONNECT, "port=70000", 5, "a port is 16 bits" },
		{ IOUR_OP_OPENAT, "resolve=1", 8, "OPENAT has no resolve flags (use OPENAT2)" },
		{ IOUR_OP_SOCKET, "family=1,", 9, "expected a context field after ','" },
	};
	uint8_t ctx[IOUR_CTX_SIZE];
	ERR(e);

	for (size_t i = 0; i < IOUR_ARRAY_SIZE(bad); i++) {
		cr_expect_eq(iour_rule_ctx(bad[i].text, bad[i].op, ctx, sizeof(ctx), &e), -EBADMSG,
			     "%s", bad[i].text);
		cr_expect_str_eq(e.message, bad[i].msg, "'%s'", bad[i].text);
		cr_expect_eq(e.pos, bad[i].pos, "'%s': %zu", bad[i].text, e.pos);
	}
	cr_assert_eq(iour_rule_ctx("", IOUR_OP_NOP, ctx, IOUR_CTX_SIZE - 1, &e), -EINVAL);
	cr_assert_eq(iour_rule_ctx(NULL, IOUR_OP_NOP, ctx, sizeof(ctx), &e), -EINVAL);
	cr_assert_eq(iour_rule_ctx("", IOUR_OP_NOP, NULL, sizeof(ctx), &e), -EINVAL);
	cr_assert_eq(iour_rule_ctx("", IOUR_OP_NOP, ctx, sizeof(ctx), NULL), -EINVAL);
}

/* ---- policy files take the tool's spellings too */

Test(rules, policy_files_share_the_spellings)
{
	static const char text[] =
		"{\"entries\":[{\"names\":[\"connect\"],\"action\":\"allow\",\"args\":["
		"{\"field\":\"connect.addr4\",\"op\":\"!in\",\"value\":\"10.0.0.1\"},"
		"{\"field\":\"connect.addr4\",\"op\":\"==\",\"value\":\" 167772161 \"}]}]}";
	struct iour_load_error le = { .sz = sizeof(le) };
	struct iour_policy *p = NULL;

	cr_assert_eq(iour_policy__load_json(text, strlen(text), NULL, &p, &le), 0, "%s",
		     le.message);
	iour_policy__free(p);
}

/* ---- the differential test against the tool's old parser */

/* The rule texts of the tests (test_cli*.c, test_prop_fields.c,
 * scripts/hash-outputs.sh), of `help rules` and doc/cli.md. */
static const struct {
	const char *op, *text;
} corpus[] = {
	{ "SOCKET", "family==AF_INET,type==SOCK_STREAM" },
	{ "SOCKET", "family==AF_UNIX" },
	{ "SOCKET", "family == AF_INET, type == SOCK_STREAM" },
	{ "SOCKET", "family==1" },
	{ "SOCKET", "family==2,type==1" },
	{ "SOCKET", "type_flags &= SOCK_NONBLOCK" },
	{ "SOCKET", "family in {AF_INET, AF_INET6, 17}, protocol in [0, IPPROTO_UDP], "
		    "type_raw & 0xf == SOCK_DGRAM" },
	{ "SOCKET", "user_data > 0x100000000, protocol not in [5, 9]" },
	{ "OPENAT2", "accmode==O_RDONLY, flags & O_CREAT|O_TRUNC == 0, resolve &= "
		     "RESOLVE_BENEATH|RESOLVE_IN_ROOT" },
	{ "OPENAT2", "mode !in {2, 6}, flags & O_CREAT != 0, mode <= 0644" },
	{ "CONNECT", "addr4 in 10.0.0.0/8, port in [1024,65535]" },
	{ "CONNECT", "addr6 == ::1" },
	{ "CONNECT", "connect.addr6 not in fe80::/10" },
	{ "CONNECT", "family != AF_UNIX, addr4 != 127.0.0.1" },
	{ "CONNECT", "addr4 in 10.0.0.0/8" },
	{ "CONNECT", "addr4 in 10.0.0.0/9" },
	{ "CONNECT", "addr4 in 10.0.0.0/8, port >= 1024" },
	{ "READ", "sqe_flags &= IOSQE_ASYNC" },
	{ "READ", "true" },
	{ "OPENAT", "flags==O_RDONLY" },
	{ "OPENAT", "accmode==O_RDONLY" },
	{ "SOCKET", "family==AF_INETT" },
	{ "SOCKET", "port==80" },
	{ "SOCKET", "family=2" },
	{ "SOCKET", "family in {1,2" },
	{ "SOCKET", "family in [3,2]" },
	{ "SOCKET", "type==16" },
	{ "SOCKET", "" },
	{ "SOCKET", "family & 3 != 1" },
	{ "CONNECT", "addr6 < ::1" },
	{ "CONNECT", "addr4 in 10.0.0.0/33" },
	{ "CONNECT", "port == 65536" },
	{ "OPENAT", "flags ==" },
	{ "SOCKET", "family==AF_INET,type==SOCK_STRAEM" },
	{ "SOCKET", "family == SOCK_STREAM" },
	{ "SOCKET", "type == AF_INET" },
	{ "SOCKET", "protocol == O_CREAT" },
	{ "CONNECT", "port == S_IRWXU" },
	{ "CONNECT", "family == IPPROTO_TCP" },
	{ "CONNECT", "addr4 == AF_INET" },
	{ "OPENAT", "flags &= S_IRWXU" },
	{ "OPENAT", "mode &= O_CREAT" },
	{ "OPENAT2", "resolve &= O_PATH" },
	{ "NOP", "user_data == AF_INET" },
	{ "NOP", "sqe_flags &= O_CREAT" },
	{ "SOCKET", "family == AF_INET6, type == SOCK_DGRAM, protocol == IPPROTO_UDP, "
		    "type_flags &= SOCK_CLOEXEC, sqe_flags &= IOSQE_ASYNC" },
	{ "CONNECT", "family == AF_INET | AF_INET6" },
	{ "SOCKET", "family == AF_INET|AF_INET6" },
	{ "SOCKET", "type == SOCK_STREAM|SOCK_DGRAM" },
	{ "SOCKET", "protocol == IPPROTO_TCP|IPPROTO_UDP" },
	{ "CONNECT", "port == 80|443" },
	{ "OPENAT", "accmode == O_WRONLY|O_RDWR" },
	{ "NOP", "user_data == 1|2" },
	{ "CONNECT", "family in {AF_INET|AF_INET6}" },
	{ "OPENAT", "flags & O_CREAT|O_TRUNC == 0" },
	{ "OPENAT2", "resolve &= RESOLVE_BENEATH|RESOLVE_IN_ROOT" },
	{ "OPENAT", "mode &= S_IWGRP|S_IWOTH" },
	{ "SOCKET", "type_raw == SOCK_STREAM|SOCK_CLOEXEC" },
	{ "SOCKET", "type_flags &= SOCK_NONBLOCK|SOCK_CLOEXEC" },
	{ "NOP", "sqe_flags &= IOSQE_ASYNC|IOSQE_IO_DRAIN" },
	{ "CONNECT", "family in {AF_INET, AF_INET6}" },
	{ "CONNECT", "port == 1\x1b[2J" },
	{ "CONNECT", "\x1b]0;title\x07port == 1 x" },
	{ "CONNECT", "port == S_IRWXU\x9b" },
	{ "CONNECT", "\tport == 1 x" },
	{ "CONNECT", "port ==\r\v1" },
	{ "SOCKET", "family in {AF_UNIX, AF_INET, AF_INET6}" },
	{ "OPENAT", "accmode==O_RDONLY, flags & O_CREAT|O_TRUNC == 0" },
	{ "CONNECT", "port in [1024, 65535], addr4 in 10.0.0.0/8" },
	{ "OPENAT", "path == 1" },
	{ "SOCKET", "addr == 1" },
	{ "CONNECT", "connect.port == 1, socket.family == 2" },
	{ "SOCKET", "family not in {1}, family NOT IN {2}, family !in {3}, family In {4}" },
	{ "SOCKET", "family notin {1}" },
	{ "SOCKET", "family not {1}" },
	{ "SOCKET", "family in 1" },
	{ "SOCKET", "family >= 1, family > 1, family <= 1, family < 1, family != 1" },
	{ "OPENAT", "flags & 0 == 0" },
	{ "OPENAT", "flags & O_CREAT == O_TRUNC" },
	{ "OPENAT", "flags &= 0" },
	{ "OPENAT", "flags & O_CREAT" },
	{ "OPENAT", "flags & O_CREAT >= 1" },
	{ "CONNECT", "addr6 in [1, 2]" },
	{ "CONNECT", "addr6 in {::1}" },
	{ "CONNECT", "addr4 in 10.0.0.0 / 8" },
	{ "CONNECT", "addr4 in 10.0.0.0/x" },
	{ "CONNECT", "addr4 in 10.0.0.0/0x8" },
	{ "CONNECT", "addr6 in ::/0" },
	{ "CONNECT", "addr4 == 10.0.0.256" },
	{ "CONNECT", "addr4 == 4294967296" },
	{ "NOP", "user_data == 18446744073709551615" },
	{ "NOP", "user_data == 18446744073709551616" },
	{ "NOP", "user_data == 09" },
	{ "NOP", "sqe_flags &= IOSQE_BOGUS" },
	{ "NOP", "sqe_flags &= ASYNC" },
	{ "NOP", "a,b,c,d,e,f,g,h,i" },
	{ "NOP", "user_data == 1, user_data == 2, user_data == 3, user_data == 4, "
		 "user_data == 5, user_data == 6, user_data == 7, user_data == 8, user_data == 9" },
	{ "NOP", "user_data_is_a_name_far_too_long_for_the_buffer_of_the_parser_xxxxxxxxxxx == 1" },
	{ "READ", "TRUE" },
	{ "READ", " true , " },
	{ "READ", "," },
	{ "READ", "user_data ==" },
	{ "READ", "user_data" },
	{ "READ", "user_data ~ 1" },
};

/* The same parse, or the same error at the same byte. */
static bool same(uint32_t op, const char *text, char *why, size_t cap)
{
	struct old_expr_rule o;
	struct old_expr_error oe;
	struct iour_rule *r = NULL;
	const struct iour_cmp *c = NULL;
	ERR(e);
	int ro = old_expr_parse_rule(text, op, &o, &oe), rn = iour_rule_parse(text, op, &r, &e);
	bool ok = true;
	int n;

	if (ro || rn) {
		ok = ro && rn == -EBADMSG && oe.pos == e.pos && !strcmp(oe.msg, e.message);
		snprintf(why, cap, "old %d at %zu '%s', new %d at %zu '%s'", ro, oe.pos,
			 ro ? oe.msg : "", rn, e.pos, rn ? e.message : "");
		if (!ro)
			old_expr_rule_free(&o);
		iour_rule_free(r);
		return ok;
	}
	n = iour_rule_cmps(r, &c);
	snprintf(why, cap, "%zu comparisons, now %d", o.n, n);
	ok = n >= 0 && (size_t)n == o.n;
	for (size_t i = 0; ok && i < o.n; i++) {
		const struct iour_cmp *a = &o.cmps[i], *b = &c[i];

		ok = a->sz == b->sz && a->field == b->field && a->op == b->op &&
		     a->value == b->value && a->arg == b->arg &&
		     !memcmp(a->addr6, b->addr6, sizeof(a->addr6)) && a->set_len == b->set_len &&
		     (!a->set_len || !memcmp(a->set, b->set, a->set_len * sizeof(*a->set)));
		if (!ok)
			snprintf(why, cap, "comparison %zu differs", i);
	}
	if (ok && (!o.warning != !iour_rule_warning(r) ||
		   (o.warning && strcmp(o.warning, iour_rule_warning(r))))) {
		ok = false;
		snprintf(why, cap, "the warnings differ");
	}
	old_expr_rule_free(&o);
	iour_rule_free(r);
	return ok;
}

/* A text on which the two may differ on purpose: the spellings the tool
 * took from policy files (any-bits, all-bits, none-bits, &==, an address
 * alone after 'in'). */
static bool union_spelling(const char *text)
{
	struct old_expr_rule o;
	struct old_expr_error oe;

	if (strcasestr(text, "-bits") || strstr(text, "&=="))
		return true;
	if (old_expr_parse_rule(text, IOUR_OP_CONNECT, &o, &oe) == 0) {
		old_expr_rule_free(&o);
		return false;
	}
	return !strncmp(oe.msg, "expected '/' and a prefix length", 32);
}

static uint64_t next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

Test(rules, same_parse_as_the_tools_old_parser)
{
	static const char *const ops[] = { "NOP", "SOCKET", "OPENAT", "OPENAT2", "CONNECT" };
	static const char *const joins[] = { " ", ",", "|", "{", "}", "[", "]", "/", "==", "!=",
					     "&", "&=", "in", "not", "!in", "<", "0x", "AF_",
					     "O_CREAT", "::", ".", "1", "=", "" };
	uint64_t seed = 0x2545f4914f6cdd1dULL;
	size_t n = 0, differ = 0, allowed = 0, bad = 0;
	char text[300], tail[300], why[600];

	/* the corpus, for its own opcode and for each of the others */
	for (size_t i = 0; i < IOUR_ARRAY_SIZE(corpus); i++)
		for (size_t k = 0; k < IOUR_ARRAY_SIZE(ops); k++) {
			uint32_t op = (uint32_t)iour_opcode_from_name(k ? ops[k] : corpus[i].op);

			n++;
			if (!same(op, corpus[i].text, why, sizeof(why))) {
				cr_expect(false, "%s '%s': %s", iour_opcode_name(op), corpus[i].text,
					  why);
				bad++;
			}
		}
	/* every field, named three ways, with every constant and each form */
	for (int fi = 0; fi < iour_field_count(); fi++) {
		IOUR_OPTS(iour_field_info, f);
		const char *bare;

		cr_assert_eq(iour_field_get((size_t)fi, &f), 0);
		bare = strchr(f.name, '.') ? strchr(f.name, '.') + 1 : f.name;
		for (int ci = -1; ci < iour_const_count(); ci++) {
			IOUR_OPTS(iour_const_info, c);
			const char *v = "1";

			if (ci >= 0) {
				cr_assert_eq(iour_const_get((size_t)ci, &c), 0);
				v = c.name;
			}
			for (size_t k = 0; k < IOUR_ARRAY_SIZE(ops); k++) {
				uint32_t op = (uint32_t)iour_opcode_from_name(ops[k]);

				snprintf(text, sizeof(text),
					 "%s == %s, %s &= %s, %s in {%s, 2}, %s & %s == %s", f.name, v,
					 bare, v, f.name, v, bare, v, v);
				n++;
				if (!same(op, text, why, sizeof(why))) {
					cr_expect(false, "%s '%s': %s", ops[k], text, why);
					bad++;
				}
			}
		}
	}
	/* mutants of the corpus: tokens inserted, bytes replaced, cut short */
	for (int i = 0; i < 4000; i++) {
		size_t len, at, m;

		snprintf(text, sizeof(text), "%s", corpus[next(&seed) % IOUR_ARRAY_SIZE(corpus)].text);
		for (m = next(&seed) % 4 + 1; m > 0; m--) {
			const char *j = joins[next(&seed) % IOUR_ARRAY_SIZE(joins)];

			len = strlen(text);
			at = len ? next(&seed) % (len + 1) : 0;
			switch (next(&seed) % 3) {
			case 0:
				snprintf(tail, sizeof(tail), "%s", text + at);
				snprintf(text + at, sizeof(text) - at, "%s%s", j, tail);
				break;
			case 1:
				if (at < len)
					text[at] = j[0] ? j[0] : ' ';
				break;
			default:
				text[at] = '\0';
				break;
			}
		}
		n++;
		uint32_t op = (uint32_t)iour_opcode_from_name(ops[i % IOUR_ARRAY_SIZE(ops)]);

		if (same(op, text, why, sizeof(why)))
			continue;
		differ++;
		if (union_spelling(text)) {
			allowed++;
			continue;
		}
		cr_expect(false, "%s '%s': %s", ops[i % IOUR_ARRAY_SIZE(ops)], text, why);
		bad++;
	}
	cr_assert_eq(bad, 0);
	fprintf(stderr,
		"rules: %zu texts parsed by both parsers: %zu differ, all %zu by the spellings "
		"taken from policy files\n",
		n, differ, allowed);
}
