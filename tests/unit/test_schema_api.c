/* SPDX-License-Identifier: MIT */
/*
 * The public view of the request schema (include/iouring_restrict/schema.h):
 * what it says about payloads, fields and constants, checked against the
 * kernel's facts as doc/kernel.md 4.3 and the userspace headers give them,
 * written here independently of lib/base/schema.def; and its argument checks.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

#include "iouring_restrict/iouring_restrict.h"
#include "kernel_facts_oracle.h"

/* doc/kernel.md 4.3: opcode, payload size, the level that filters it. */
static const struct {
	uint32_t op, pdu, level;
	const char *group;
} want_payloads[] = {
	{ IOUR_OP_SOCKET, 12, IOUR_LEVEL_TASK_BPF, "socket" },
	{ IOUR_OP_OPENAT, 24, IOUR_LEVEL_TASK_BPF, "open" },
	{ IOUR_OP_OPENAT2, 24, IOUR_LEVEL_TASK_BPF, "open" },
	{ IOUR_OP_CONNECT, 24, IOUR_LEVEL_CONNECT, "connect" },
};

/* doc/kernel.md 4.3: name, id, slot offset and size, byte order, prefix. */
static const struct {
	const char *name;
	uint32_t id, off, size, order, kind;
	const char *prefix;
} want_fields[] = {
	{ "user_data", IOUR_FIELD_USER_DATA, 0, 8, IOUR_FIELD_ORDER_HOST, IOUR_FIELD_KIND_NUM,
	  NULL },
	{ "sqe_flags", IOUR_FIELD_SQE_FLAGS, 9, 1, IOUR_FIELD_ORDER_HOST, IOUR_FIELD_KIND_BITS,
	  "IOSQE_" },
	{ "socket.family", IOUR_FIELD_SOCKET_FAMILY, 16, 4, IOUR_FIELD_ORDER_HOST,
	  IOUR_FIELD_KIND_NUM, "AF_" },
	{ "socket.protocol", IOUR_FIELD_SOCKET_PROTOCOL, 24, 4, IOUR_FIELD_ORDER_HOST,
	  IOUR_FIELD_KIND_NUM, "IPPROTO_" },
	{ "open.flags", IOUR_FIELD_OPEN_FLAGS, 16, 8, IOUR_FIELD_ORDER_HOST, IOUR_FIELD_KIND_BITS,
	  "O_" },
	{ "open.resolve", IOUR_FIELD_OPEN_RESOLVE, 32, 8, IOUR_FIELD_ORDER_HOST,
	  IOUR_FIELD_KIND_BITS, "RESOLVE_" },
	{ "connect.port", IOUR_FIELD_CONNECT_PORT, 20, 2, IOUR_FIELD_ORDER_NET, IOUR_FIELD_KIND_NUM,
	  NULL },
	{ "connect.addr4", IOUR_FIELD_CONNECT_ADDR4, 24, 4, IOUR_FIELD_ORDER_NET,
	  IOUR_FIELD_KIND_ADDR4, NULL },
	{ "connect.addr6", IOUR_FIELD_CONNECT_ADDR6, 24, 16, IOUR_FIELD_ORDER_NET,
	  IOUR_FIELD_KIND_ADDR6, NULL },
};

Test(schema_api, payloads_are_the_kernels)
{
	static const uint32_t level_kernels[] = ORACLE_LEVEL_KERNELS;
	size_t i, n = sizeof(want_payloads) / sizeof(want_payloads[0]);

	cr_assert_eq(iour_payload_count(), (int)n);
	for (i = 0; i < n; i++) {
		struct iour_payload_info pi = { .sz = sizeof(pi) };
		int idx = iour_payload_find(want_payloads[i].op);

		cr_assert_geq(idx, 0, "%s: no payload row", iour_opcode_name(want_payloads[i].op));
		cr_assert_eq(iour_payload_get((size_t)idx, &pi), 0);
		cr_expect_eq(pi.opcode, want_payloads[i].op);
		cr_expect_eq(pi.pdu_size, want_payloads[i].pdu);
		cr_expect_eq(pi.level, want_payloads[i].level);
		cr_expect_str_eq(pi.group, want_payloads[i].group);
		cr_expect_eq(pi.since, level_kernels[pi.level]);
	}
	cr_expect_eq(iour_payload_find(IOUR_OP_NOP), -ENOENT);
	cr_expect_eq(iour_payload_find(IOUR_OP_READ), -ENOENT);
	cr_expect_eq(iour_payload_find(UINT32_MAX), -ENOENT);
}

Test(schema_api, fields_are_the_kernels)
{
	size_t i, n = sizeof(want_fields) / sizeof(want_fields[0]);

	for (i = 0; i < n; i++) {
		struct iour_field_info fi = { .sz = sizeof(fi) };
		int idx = iour_field_find(want_fields[i].name);

		cr_assert_geq(idx, 0, "%s: not found", want_fields[i].name);
		cr_assert_eq(iour_field_index(want_fields[i].id), idx, "%s", want_fields[i].name);
		cr_assert_eq(iour_field_get((size_t)idx, &fi), 0);
		cr_expect_str_eq(fi.name, want_fields[i].name);
		cr_expect_eq(fi.id, want_fields[i].id, "%s", fi.name);
		cr_expect_eq(fi.offset, want_fields[i].off, "%s", fi.name);
		cr_expect_eq(fi.size, want_fields[i].size, "%s", fi.name);
		cr_expect_eq(fi.order, want_fields[i].order, "%s", fi.name);
		cr_expect_eq(fi.kind, want_fields[i].kind, "%s", fi.name);
		if (want_fields[i].prefix)
			cr_expect(fi.prefix && !strcmp(fi.prefix, want_fields[i].prefix), "%s",
				  fi.name);
		else
			cr_expect_null(fi.prefix, "%s", fi.name);
		/* the group is the name's dotted prefix */
		if (strchr(fi.name, '.'))
			cr_expect(!strncmp(fi.name, fi.group, strlen(fi.group)) &&
					  fi.name[strlen(fi.group)] == '.',
				  "%s in group %s", fi.name, fi.group);
		else
			cr_expect_str_eq(fi.group, "");
	}
	cr_expect_eq(iour_field_find("family"), -ENOENT); /* dotted names only */
	cr_expect_eq(iour_field_find("SOCKET.FAMILY"), -ENOENT);
	cr_expect_eq(iour_field_find(NULL), -EINVAL);
	cr_expect_eq(iour_field_index(UINT32_MAX), -ENOENT);
}

/* Every row: its name and id find it, and which opcodes it applies to is
 * what its group says. */
Test(schema_api, every_field_row_is_consistent)
{
	int n = iour_field_count();

	cr_assert_geq(n, (int)(sizeof(want_fields) / sizeof(want_fields[0])));
	for (int i = 0; i < n; i++) {
		struct iour_field_info fi = { .sz = sizeof(fi) };

		cr_assert_eq(iour_field_get((size_t)i, &fi), 0);
		cr_expect_eq(iour_field_find(fi.name), i);
		cr_expect_eq(iour_field_index(fi.id), i);
		cr_expect_leq(fi.offset + fi.size, IOUR_CTX_SIZE, "%s", fi.name);
		for (uint32_t op = 0; op < IOUR_OP__COUNT; op++) {
			struct iour_payload_info pi = { .sz = sizeof(pi) };
			int p = iour_payload_find(op);
			int want = fi.group[0] == '\0';

			if (p >= 0) {
				cr_assert_eq(iour_payload_get((size_t)p, &pi), 0);
				want = want || !strcmp(pi.group, fi.group);
			}
			cr_expect_eq(iour_field_applies(fi.id, op), want, "%s on %s", fi.name,
				     iour_opcode_name(op));
		}
	}
	cr_expect_eq(iour_field_applies(UINT32_MAX, IOUR_OP_SOCKET), -ENOENT);
	cr_expect_eq(iour_field_applies(IOUR_FIELD_SOCKET_FAMILY, IOUR_OP_CONNECT), 0);
	cr_expect_eq(iour_field_applies(IOUR_FIELD_CONNECT_FAMILY, IOUR_OP_CONNECT), 1);
	cr_expect_eq(iour_field_applies(IOUR_FIELD_USER_DATA, IOUR_OP_NOP), 1);
}

Test(schema_api, constants_are_the_headers)
{
	static const struct {
		const char *name;
		uint64_t value;
		const char *ns;
		uint32_t since;
	} want[] = {
		{ "AF_INET", AF_INET, "AF_", 0 },
		{ "AF_INET6", AF_INET6, "AF_", 0 },
		{ "SOCK_STREAM", SOCK_STREAM, "SOCK_", 0 },
		{ "IPPROTO_TCP", IPPROTO_TCP, "IPPROTO_", 0 },
		{ "O_CREAT", O_CREAT, "O_", 0 },
		{ "RESOLVE_BENEATH", RESOLVE_BENEATH, "RESOLVE_", IOUR_KVER(5, 6) },
		{ "RESOLVE_CACHED", RESOLVE_CACHED, "RESOLVE_", IOUR_KVER(5, 12) },
	};
	int n = iour_const_count();

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		struct iour_const_info ci = { .sz = sizeof(ci) };
		int idx = iour_const_find(want[i].name);

		cr_assert_geq(idx, 0, "%s", want[i].name);
		cr_assert_eq(iour_const_get((size_t)idx, &ci), 0);
		cr_expect_str_eq(ci.name, want[i].name);
		cr_expect_eq(ci.value, want[i].value, "%s", ci.name);
		cr_expect_str_eq(ci.ns, want[i].ns);
		cr_expect_eq(ci.since, want[i].since, "%s", ci.name);
	}
	/* names are case-insensitive, as in rules and policy files */
	cr_expect_eq(iour_const_find("af_inet"), iour_const_find("AF_INET"));
	cr_expect_eq(iour_const_find("AF_NOSUCH"), -ENOENT);
	cr_expect_eq(iour_const_find(NULL), -EINVAL);
	/* every constant has a namespace some field takes */
	cr_assert_gt(n, 0);
	for (int i = 0; i < n; i++) {
		struct iour_const_info ci = { .sz = sizeof(ci) };
		bool taken = false;

		cr_assert_eq(iour_const_get((size_t)i, &ci), 0);
		cr_assert_not_null(ci.ns, "%s has no namespace", ci.name);
		cr_expect_eq(strncmp(ci.name, ci.ns, strlen(ci.ns)), 0, "%s", ci.name);
		for (int f = 0; f < iour_field_count(); f++) {
			struct iour_field_info fi = { .sz = sizeof(fi) };

			cr_assert_eq(iour_field_get((size_t)f, &fi), 0);
			taken = taken || (fi.prefix && !strcmp(fi.prefix, ci.ns));
		}
		cr_expect(taken, "%s: no field takes %s", ci.name, ci.ns);
	}
}

/* The output-struct discipline (common.h): sz first, at least up to the
 * first member, at most IOUR_OPTS_MAX_SZ; nothing past sz written. */
Test(schema_api, output_struct_checks)
{
	struct {
		struct iour_field_info fi;
		unsigned char guard[16];
	} big;
	struct iour_field_info fi = { .sz = sizeof(fi) };
	struct iour_const_info ci = { .sz = sizeof(ci) };
	struct iour_payload_info pi = { .sz = sizeof(pi) };
	size_t upto_name = offsetof(struct iour_field_info, name) + sizeof(fi.name);

	cr_expect_eq(iour_field_get(0, NULL), -EINVAL);
	cr_expect_eq(iour_const_get(0, NULL), -EINVAL);
	cr_expect_eq(iour_payload_get(0, NULL), -EINVAL);
	cr_expect_eq(iour_field_get((size_t)iour_field_count(), &fi), -ENOENT);
	cr_expect_eq(iour_const_get((size_t)iour_const_count(), &ci), -ENOENT);
	cr_expect_eq(iour_payload_get((size_t)iour_payload_count(), &pi), -ENOENT);
	fi.sz = upto_name - 1;
	cr_expect_eq(iour_field_get(0, &fi), -EINVAL);
	ci.sz = sizeof(size_t);
	cr_expect_eq(iour_const_get(0, &ci), -EINVAL);
	pi.sz = 0;
	cr_expect_eq(iour_payload_get(0, &pi), -EINVAL);
	fi.sz = IOUR_OPTS_MAX_SZ + 1;
	cr_expect_eq(iour_field_get(0, &fi), -EINVAL);

	/* an older caller's shorter struct: only up to its sz is written */
	memset(&big, 0xa5, sizeof(big));
	big.fi.sz = upto_name;
	cr_assert_eq(iour_field_get(0, &big.fi), 0);
	cr_expect_not_null(big.fi.name);
	for (size_t i = upto_name; i < sizeof(big); i++)
		cr_expect_eq(((unsigned char *)&big)[i], 0xa5, "byte %zu written", i);
}
