/* SPDX-License-Identifier: MIT */
/* Name tables: round trips, name forms, errors, per-kernel counts, and the
 * running kernel's own counts through IORING_REGISTER_QUERY. */
#include <criterion/criterion.h>
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "iouring_restrict/iouring_restrict.h"
#include "base/uapi.h"
#include "kernel_facts_oracle.h"
#include "uring_avail.h"

static void lower(char *dst, const char *src, size_t n)
{
	size_t i;

	for (i = 0; src[i] && i + 1 < n; i++)
		dst[i] = (char)tolower((unsigned char)src[i]);
	dst[i] = 0;
}

/* Alternate case: "ReAdV". */
static void mixed(char *dst, const char *src, size_t n)
{
	size_t i;

	for (i = 0; src[i] && i + 1 < n; i++)
		dst[i] = (char)((i & 1) ? tolower((unsigned char)src[i]) : src[i]);
	dst[i] = 0;
}

Test(names, opcode_round_trip_every_entry)
{
	char buf[96], low[96];
	int forms = 0;

	for (uint32_t op = 0; op < IOUR_OP__COUNT; op++) {
		const char *n = iour_opcode_name(op);

		cr_assert_not_null(n, "op %u has no name", op);
		cr_assert_eq(iour_opcode_from_name(n), (int)op, "%s", n);
		snprintf(buf, sizeof(buf), "IORING_OP_%s", n);
		cr_assert_eq(iour_opcode_from_name(buf), (int)op, "%s", buf);
		lower(low, buf, sizeof(low));
		cr_assert_eq(iour_opcode_from_name(low), (int)op, "%s", low);
		lower(low, n, sizeof(low));
		cr_assert_eq(iour_opcode_from_name(low), (int)op, "%s", low);
		mixed(low, buf, sizeof(low));
		cr_assert_eq(iour_opcode_from_name(low), (int)op, "%s", low);
		cr_assert_gt(iour_opcode_since(op), 0);
		forms += 5;
	}
	cr_log_info("names: %d opcode name forms round-tripped", forms);
}

Test(names, opcode_known_values)
{
	/* Spot values from the kernel's enum, independent of the table. */
	cr_assert_eq(iour_opcode_from_name("NOP"), 0);
	cr_assert_eq(iour_opcode_from_name("IORING_OP_CONNECT"), 16);
	cr_assert_eq(iour_opcode_from_name("openat2"), 28);
	cr_assert_eq(iour_opcode_from_name("Socket"), 45);
	cr_assert_eq(iour_opcode_from_name("WAITID"), 50);
	cr_assert_eq(iour_opcode_from_name("pipe"), 62);
	cr_assert_eq(iour_opcode_from_name("URING_CMD128"), 64);
	cr_assert_str_eq(iour_opcode_name(IOUR_OP_READ_MULTISHOT), "READ_MULTISHOT");
	cr_assert_eq(iour_opcode_since(IOUR_OP_WAITID), IOUR_KVER(6, 7));
	cr_assert_eq(iour_opcode_since(IOUR_OP_NOP128), IOUR_KVER(6, 19));
	cr_assert_eq(iour_opcode_since(IOUR_OP_SENDMSG_ZC), IOUR_KVER(6, 1));
}

Test(names, opcode_errors)
{
	cr_assert_eq(iour_opcode_from_name(NULL), -EINVAL);
	cr_assert_eq(iour_opcode_from_name(""), -ENOENT);
	cr_assert_eq(iour_opcode_from_name("IORING_OP_"), -ENOENT);
	cr_assert_eq(iour_opcode_from_name("BPF"), -ENOENT);
	cr_assert_eq(iour_opcode_from_name("OP_NOP"), -ENOENT);
	cr_assert_eq(iour_opcode_from_name("IORING_OP_LAST"), -ENOENT);
	cr_assert_eq(iour_opcode_from_name("NOP "), -ENOENT);
	cr_assert_eq(iour_opcode_from_name("IORING_REGISTER_PROBE"), -ENOENT);
	cr_assert_null(iour_opcode_name(IOUR_OP__COUNT));
	cr_assert_null(iour_opcode_name(255));
	cr_assert_null(iour_opcode_name(UINT32_MAX));
	cr_assert_eq(iour_opcode_since(IOUR_OP__COUNT), -ENOENT);
	cr_assert_eq(iour_opcode_since(UINT32_MAX), -ENOENT);
}

Test(names, forces_async_matches_oracle)
{
	static const char *const forced[] = ORACLE_FORCED_ASYNC_OPS;
	bool want[IOUR_OP__COUNT] = { false };
	int n = 0;

	for (size_t i = 0; i < sizeof(forced) / sizeof(forced[0]); i++) {
		int op = iour_opcode_from_name(forced[i]);

		cr_assert_geq(op, 0, "%s", forced[i]);
		want[op] = true;
	}
	for (uint32_t op = 0; op < IOUR_OP__COUNT; op++) {
		int r = iour_opcode_forces_async(op);

		cr_assert_eq(r, want[op] ? 1 : 0, "%s: %d", iour_opcode_name(op), r);
		n += r;
	}
	cr_assert_eq(n, (int)(sizeof(forced) / sizeof(forced[0])));
	/* the documented error: an opcode the library does not know */
	cr_assert_eq(iour_opcode_forces_async(IOUR_OP__COUNT), -ENOENT);
	cr_assert_eq(iour_opcode_forces_async(255), -ENOENT);
	cr_assert_eq(iour_opcode_forces_async(UINT32_MAX), -ENOENT);
}

Test(names, register_round_trip_every_entry)
{
	char buf[96], low[96];
	int forms = 0;

	for (uint32_t op = 0; op < IOUR_REGISTER__COUNT; op++) {
		const char *n = iour_register_op_name(op);

		cr_assert_not_null(n, "register op %u has no name", op);
		cr_assert(strncmp(n, "REGISTER_", 9) == 0 || strncmp(n, "UNREGISTER_", 11) == 0,
			  "%s", n);
		cr_assert_eq(iour_register_op_from_name(n), (int)op, "%s", n);
		snprintf(buf, sizeof(buf), "IORING_%s", n);
		cr_assert_eq(iour_register_op_from_name(buf), (int)op, "%s", buf);
		lower(low, buf, sizeof(low));
		cr_assert_eq(iour_register_op_from_name(low), (int)op, "%s", low);
		forms += 3;
		if (strncmp(n, "REGISTER_", 9) == 0) {
			cr_assert_eq(iour_register_op_from_name(n + 9), (int)op, "%s", n + 9);
			lower(low, n + 9, sizeof(low));
			cr_assert_eq(iour_register_op_from_name(low), (int)op, "%s", low);
			/* "IORING_" + short form is not a kernel name */
			snprintf(buf, sizeof(buf), "IORING_%s", n + 9);
			cr_assert_eq(iour_register_op_from_name(buf), -ENOENT, "%s", buf);
			forms += 3;
		}
		cr_assert_gt(iour_register_op_since(op), 0);
	}
	cr_log_info("names: %d register-op name forms checked", forms);
}

Test(names, register_known_values_and_errors)
{
	cr_assert_eq(iour_register_op_from_name("IORING_REGISTER_BUFFERS"), 0);
	cr_assert_eq(iour_register_op_from_name("REGISTER_BUFFERS"), 0);
	cr_assert_eq(iour_register_op_from_name("buffers"), 0);
	cr_assert_eq(iour_register_op_from_name("IORING_UNREGISTER_BUFFERS"), 1);
	cr_assert_eq(iour_register_op_from_name("unregister_buffers"), 1);
	cr_assert_eq(iour_register_op_from_name("probe"), 8);
	cr_assert_eq(iour_register_op_from_name("RESTRICTIONS"), 11);
	cr_assert_eq(iour_register_op_from_name("enable_rings"), 12);
	cr_assert_eq(iour_register_op_from_name("IORING_REGISTER_QUERY"), 35);
	cr_assert_eq(iour_register_op_from_name("bpf_filter"), 37);
	cr_assert_eq(iour_register_op_since(IOUR_REGISTER_QUERY), IOUR_KVER(6, 18));
	cr_assert_eq(iour_register_op_since(IOUR_REGISTER_ZCRX_CTRL), IOUR_KVER(6, 19));
	cr_assert_eq(iour_register_op_since(IOUR_REGISTER_RESIZE_RINGS), IOUR_KVER(6, 13));
	cr_assert_eq(iour_register_op_since(IOUR_REGISTER_BPF_FILTER), IOUR_KVER(7, 0));

	cr_assert_eq(iour_register_op_from_name(NULL), -EINVAL);
	cr_assert_eq(iour_register_op_from_name(""), -ENOENT);
	cr_assert_eq(iour_register_op_from_name("IORING_BUFFERS"), -ENOENT);
	cr_assert_eq(iour_register_op_from_name("UNBUFFERS"), -ENOENT);
	cr_assert_eq(iour_register_op_from_name("IORING_REGISTER_LAST"), -ENOENT);
	cr_assert_eq(iour_register_op_from_name("IORING_REGISTER_"), -ENOENT);
	cr_assert_eq(iour_register_op_from_name("NOP"), -ENOENT);
	cr_assert_null(iour_register_op_name(IOUR_REGISTER__COUNT));
	cr_assert_null(iour_register_op_name(UINT32_MAX));
	cr_assert_eq(iour_register_op_since(IOUR_REGISTER__COUNT), -ENOENT);
}

Test(names, sqe_flags)
{
	static const struct { const char *name; int value; } want[] = {
		{ "FIXED_FILE", 0x01 }, { "IO_DRAIN", 0x02 }, { "IO_LINK", 0x04 },
		{ "IO_HARDLINK", 0x08 }, { "ASYNC", 0x10 }, { "BUFFER_SELECT", 0x20 },
		{ "CQE_SKIP_SUCCESS", 0x40 },
	};
	char buf[64], low[64];
	int all = 0;

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		cr_assert_eq(iour_sqe_flag_from_name(want[i].name), want[i].value);
		snprintf(buf, sizeof(buf), "IOSQE_%s", want[i].name);
		cr_assert_eq(iour_sqe_flag_from_name(buf), want[i].value);
		lower(low, buf, sizeof(low));
		cr_assert_eq(iour_sqe_flag_from_name(low), want[i].value);
		cr_assert_str_eq(iour_sqe_flag_name((uint32_t)want[i].value), want[i].name);
		cr_assert_gt(iour_sqe_flag_since((uint32_t)want[i].value), 0);
		all |= want[i].value;
	}
	cr_assert_eq(all, IOUR_SQE__VALID);
	cr_assert_eq(IOUR_SQE_ASYNC, 0x10);
	cr_assert_eq(iour_sqe_flag_since(IOUR_SQE_CQE_SKIP_SUCCESS), IOUR_KVER(5, 17));

	cr_assert_eq(iour_sqe_flag_from_name(NULL), -EINVAL);
	cr_assert_eq(iour_sqe_flag_from_name("IOSQE_"), -ENOENT);
	cr_assert_eq(iour_sqe_flag_from_name("LINK"), -ENOENT);
	cr_assert_null(iour_sqe_flag_name(0));
	cr_assert_null(iour_sqe_flag_name(0x03));
	cr_assert_null(iour_sqe_flag_name(0x80));
	cr_assert_null(iour_sqe_flag_name(1U << 31));
	cr_assert_eq(iour_sqe_flag_since(0), -ENOENT);
	cr_assert_eq(iour_sqe_flag_since(0x80), -ENOENT);
	cr_assert_eq(iour_sqe_flag_since(0x11), -ENOENT);

	cr_assert_eq(iour_sqe_flags_up_to(IOUR_KVER(5, 0)), 0);
	cr_assert_eq(iour_sqe_flags_up_to(IOUR_KVER(5, 6)), 0x1f);
	cr_assert_eq(iour_sqe_flags_up_to(IOUR_KVER(5, 16)), 0x3f);
	cr_assert_eq(iour_sqe_flags_up_to(IOUR_KVER(5, 17)), 0x7f);
	cr_assert_eq(iour_sqe_flags_up_to(IOUR_KVER(9, 0)), 0x7f);
}

/* doc/kernel.md 6.1, "IORING_OP_LAST by kernel": every row, every
 * kernel in the row's range. */
Test(names, opcode_last_matches_reference_table)
{
	static const struct { int maj, from, to, last; } rows[] = {
		{ 5, 1, 1, 8 },    { 5, 2, 2, 9 },    { 5, 3, 3, 11 },   { 5, 4, 4, 12 },
		{ 5, 5, 5, 17 },   { 5, 6, 6, 30 },   { 5, 7, 7, 33 },   { 5, 8, 10, 34 },
		{ 5, 11, 14, 37 }, { 5, 15, 17, 40 }, { 5, 18, 18, 41 }, { 5, 19, 19, 47 },
		{ 6, 0, 0, 48 },   { 6, 1, 6, 49 },   { 6, 7, 7, 54 },   { 6, 8, 8, 55 },
		{ 6, 9, 10, 56 },  { 6, 11, 14, 58 }, { 6, 15, 15, 62 }, { 6, 16, 18, 63 },
		{ 6, 19, 19, 65 }, { 7, 0, 2, 65 },
	};
	uint32_t ops[IOUR_OP__COUNT];
	int checked = 0;

	for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
		for (int min = rows[r].from; min <= rows[r].to; min++) {
			uint32_t kv = IOUR_KVER(rows[r].maj, min);
			int n;

			cr_assert_eq(iour_opcode_last(kv), rows[r].last, "%d.%d", rows[r].maj, min);
			/* patch level ignored */
			cr_assert_eq(iour_opcode_last(kv | 0x2c), rows[r].last);
			/* no gaps: the listing is 0 .. last-1 */
			n = iour_opcodes_up_to(kv, ops, IOUR_OP__COUNT);
			cr_assert_eq(n, rows[r].last);
			for (int i = 0; i < n; i++)
				cr_assert_eq(ops[i], (uint32_t)i);
			checked++;
		}
	}
	cr_assert_eq(iour_opcode_last(IOUR_KVER(5, 0)), 0);
	cr_assert_eq(iour_opcode_last(0), 0);
	cr_assert_eq(iour_opcode_last(IOUR_KVER(8, 0)), IOUR_OP__COUNT);
	cr_assert_eq(iour_opcode_last(UINT32_MAX), IOUR_OP__COUNT);
	/* "since" never decreases with the number */
	for (uint32_t op = 1; op < IOUR_OP__COUNT; op++)
		cr_assert_geq(iour_opcode_since(op), iour_opcode_since(op - 1), "op %u", op);
	cr_log_info("names: IORING_OP_LAST checked for %d kernel versions", checked);
}

Test(names, register_last_per_kernel)
{
	uint32_t ops[IOUR_REGISTER__COUNT];
	int n;

	cr_assert_eq(iour_register_op_last(IOUR_KVER(5, 0)), 0);
	cr_assert_eq(iour_register_op_last(IOUR_KVER(5, 1)), 4);
	cr_assert_eq(iour_register_op_last(IOUR_KVER(5, 9)), 11);
	cr_assert_eq(iour_register_op_last(IOUR_KVER(5, 10)), 13);
	cr_assert_eq(iour_register_op_last(IOUR_KVER(6, 1)), 26);
	cr_assert_eq(iour_register_op_last(IOUR_KVER(6, 12)), 31);
	/* 32 reserved on 6.13/6.14: the kernel's LAST counts it */
	cr_assert_eq(iour_register_op_last(IOUR_KVER(6, 13)), 35);
	cr_assert_eq(iour_register_op_last(IOUR_KVER(6, 17)), 35);
	cr_assert_eq(iour_register_op_last(IOUR_KVER(6, 18)), 36);
	cr_assert_eq(iour_register_op_last(IOUR_KVER(6, 19)), 37);
	cr_assert_eq(iour_register_op_last(IOUR_KVER(7, 0)), 38);
	cr_assert_eq(iour_register_op_last(IOUR_KVER(7, 2)), 38);
	cr_assert_eq(iour_register_op_last(UINT32_MAX), IOUR_REGISTER__COUNT);

	/* 6.13 lists 34 ops: 0..31, 33, 34 */
	n = iour_register_ops_up_to(IOUR_KVER(6, 13), ops, IOUR_REGISTER__COUNT);
	cr_assert_eq(n, 34);
	cr_assert_eq(ops[31], 31);
	cr_assert_eq(ops[32], 33);
	cr_assert_eq(ops[33], 34);
	/* every other kernel: no gap, the listing is 0 .. last-1 */
	for (int maj = 5; maj <= 7; maj++) {
		for (int min = 0; min < 20; min++) {
			uint32_t kv = IOUR_KVER(maj, min);

			if (kv == IOUR_KVER(6, 13) || kv == IOUR_KVER(6, 14))
				continue;
			n = iour_register_ops_up_to(kv, ops, IOUR_REGISTER__COUNT);
			cr_assert_eq(n, iour_register_op_last(kv), "%d.%d", maj, min);
			for (int i = 0; i < n; i++)
				cr_assert_eq(ops[i], (uint32_t)i);
		}
	}
}

Test(names, up_to_two_call_sizing)
{
	uint32_t ops[IOUR_OP__COUNT + 1];
	int n;

	n = iour_opcodes_up_to(IOUR_KVER(6, 1), NULL, 0);
	cr_assert_eq(n, 49);
	cr_assert_eq(iour_opcodes_up_to(IOUR_KVER(6, 1), NULL, 5), -EINVAL);
	ops[0] = 0xdead;
	cr_assert_eq(iour_opcodes_up_to(IOUR_KVER(6, 1), ops, 48), -ERANGE);
	cr_assert_eq(ops[0], 0xdead, "nothing written on -ERANGE");
	ops[49] = 0xbeef;
	cr_assert_eq(iour_opcodes_up_to(IOUR_KVER(6, 1), ops, 49), 49);
	cr_assert_eq(ops[48], IOUR_OP_SENDMSG_ZC);
	cr_assert_eq(ops[49], 0xbeef, "no write past the count");
	cr_assert_eq(iour_opcodes_up_to(IOUR_KVER(5, 0), NULL, 0), 0);
	cr_assert_eq(iour_opcodes_up_to(IOUR_KVER(5, 0), ops, 0), 0);

	cr_assert_eq(iour_register_ops_up_to(IOUR_KVER(7, 0), NULL, 0), 38);
	cr_assert_eq(iour_register_ops_up_to(IOUR_KVER(7, 0), NULL, 1), -EINVAL);
	cr_assert_eq(iour_register_ops_up_to(IOUR_KVER(7, 0), ops, 37), -ERANGE);
	cr_assert_eq(iour_register_ops_up_to(IOUR_KVER(7, 0), ops, 38), 38);
	cr_assert_eq(ops[37], IOUR_REGISTER_BPF_FILTER);
}

/* The running kernel's version from uname, or 0. */
static uint32_t running_kver(void)
{
	struct utsname u;
	unsigned int maj, min;

	if (uname(&u) || sscanf(u.release, "%u.%u", &maj, &min) != 2)
		return 0;
	return IOUR_KVER(maj, min);
}

/* The table's counts for the running kernel equal what the kernel itself
 * reports through IORING_REGISTER_QUERY (6.18+). */
Test(names, real_kernel_query_matches_table)
{
	UNIT_REQUIRE_URING();
	struct kio_query_opcode q;
	struct kio_query_hdr h;
	uint32_t kv = running_kver();
	long rc;

	memset(&q, 0, sizeof(q));
	memset(&h, 0, sizeof(h));
	h.query_data = (uint64_t)(uintptr_t)&q;
	h.query_op = KIO_QUERY_OPCODES;
	h.size = sizeof(q);
	rc = syscall(KIO_NR_REGISTER, -1, KIO_REGISTER_QUERY, &h, 0);
	if (rc < 0 && (errno == EINVAL || errno == ENOSYS || errno == EPERM))
		cr_skip_test("IORING_REGISTER_QUERY unavailable (errno %d): kernel < 6.18", errno);
	cr_assert_eq(rc, 0, "QUERY: errno %d", errno);
	cr_assert_eq(h.result, 0);
	cr_assert_neq(kv, 0);
	cr_log_info("names: kernel %u.%u QUERY: %u request ops, %u register ops, sqe flags %#llx",
		    kv >> 16, (kv >> 8) & 0xff, q.nr_request_opcodes, q.nr_register_opcodes,
		    (unsigned long long)q.sqe_flags);
	cr_assert_eq((int)q.nr_request_opcodes, iour_opcode_last(kv));
	cr_assert_eq((int)q.nr_register_opcodes, iour_register_op_last(kv));
	cr_assert_eq((int)q.sqe_flags, iour_sqe_flags_up_to(kv));
	if (kv == IOUR_KVER(6, 18)) {
		cr_assert_eq(q.nr_request_opcodes, 63);
		cr_assert_eq(q.nr_register_opcodes, 36);
	}
}

/* iour_name_suggest(): the nearest valid name for a typo, none for a name
 * far from every entry or exactly valid (issue 18). */
Test(names, suggest_nearest)
{
	cr_assert_str_eq(iour_name_suggest(IOUR_NAME_OPCODE, "opnat"), "OPENAT");
	cr_assert_str_eq(iour_name_suggest(IOUR_NAME_OPCODE, "IORING_OP_CONECT"), "CONNECT");
	cr_assert_str_eq(iour_name_suggest(IOUR_NAME_OPCODE, "readd"), "READ");
	cr_assert_str_eq(iour_name_suggest(IOUR_NAME_REGISTER_OP, "register_bufers"),
			 "REGISTER_BUFFERS");
	cr_assert_str_eq(iour_name_suggest(IOUR_NAME_REGISTER_OP, "IORING_REGISTER_PROBES"),
			 "REGISTER_PROBE");
	cr_assert_str_eq(iour_name_suggest(IOUR_NAME_REGISTER_OP, "prob"), "REGISTER_PROBE");
	cr_assert_str_eq(iour_name_suggest(IOUR_NAME_SQE_FLAG, "IOSQE_ASYN"), "ASYNC");
	cr_assert_str_eq(iour_name_suggest(IOUR_NAME_SQE_FLAG, "fixed_fil"), "FIXED_FILE");
	cr_assert_null(iour_name_suggest(IOUR_NAME_OPCODE, "READ"));	/* valid: nothing */
	cr_assert_null(iour_name_suggest(IOUR_NAME_OPCODE, "xyzzy"));
	cr_assert_null(iour_name_suggest(IOUR_NAME_OPCODE, "frobnicate"));
	cr_assert_null(iour_name_suggest(IOUR_NAME_OPCODE, ""));
	cr_assert_null(iour_name_suggest(IOUR_NAME_OPCODE, NULL));
	cr_assert_null(iour_name_suggest(3, "opnat"));
	cr_assert_null(iour_name_suggest(IOUR_NAME_SQE_FLAG,
					 "an_sqe_flag_name_much_longer_than_any_table_entry_ever_is_"
					 "more_than_sixty_four"));
}
