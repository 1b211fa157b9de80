/* SPDX-License-Identifier: MIT */
/*
 * Allocation failure injection.  Every allocation of the library goes
 * through its allocation seam (lib/base/alloc.c); for each operation below, the
 * run is repeated with allocation 1, 2, ... N failing, until a run makes no
 * more than N - 1 allocations and completes.  Each failing run must return
 * -ENOMEM and leave no block allocated (the seam counts them; under
 * `make test-asan` LeakSanitizer checks as well); the final run must
 * succeed with nothing left over either.
 *
 * Each operation creates everything it uses and frees it before returning,
 * so "nothing outstanding" is exact.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "denylist.h"
#include "filter/filter_internal.h"
#include "base/internal.h"
#include "iouring_restrict/iouring_restrict.h"

#define OP_NOP 0
#define OP_CONNECT 16
#define OP_OPENAT 18
#define OP_READ 22
#define OP_OPENAT2 28
#define OP_SOCKET 45

/* Stop at the first error, keeping it. */
#define TRY(rc, call)                   \
	do {                            \
		if (!(rc))              \
			(rc) = (call);  \
	} while (0)

/* A count on success is success. */
static int nonneg(int rc)
{
	return rc > 0 ? 0 : rc;
}

typedef int (*op_fn)(const void *arg);

/* Run fn with each allocation failing in turn; returns the number of
 * allocations of a complete run. */
static unsigned long drive(const char *name, op_fn fn, const void *arg)
{
	unsigned long n, calls = 0;
	long live = 0;
	int rc;

	for (n = 1;; n++) {
		iour__alloc_arm(n);
		rc = fn(arg);
		iour__alloc_disarm(&calls, &live);
		cr_assert_eq(live, 0, "%s, allocation %lu failing: %ld block(s) leaked", name, n,
			     live);
		if (calls < n) {
			cr_assert_eq(rc, 0, "%s without failures: %s", name, iour_errname(rc));
			break;
		}
		cr_assert_eq(rc, -ENOMEM, "%s, allocation %lu of %lu failing: %s", name, n, calls,
			     iour_errname(rc));
		cr_assert_lt(n, 200000, "%s does not converge", name);
	}
	cr_assert_gt(n, 1, "%s allocates nothing: the test would prove nothing", name);
	cr_log_info("%s: each of %lu allocations failed in turn: -ENOMEM, nothing leaked", name,
		    n - 1);
	return n - 1;
}

/* ---- ruleset: build, dup, export --------------------------------------- */

static int op_ruleset(const void *arg)
{
	struct iour_ruleset *rs = NULL, *dup = NULL;
	struct iour_clamp_report clamp = { .sz = sizeof(clamp) };
	IOUR_OPTS(iour_export_opts, o, .op_last = 63, .reg_last = 36, .clamp = &clamp);
	unsigned char buf[16 * 512];
	size_t len = 0;
	int rc = 0;

	(void)arg;
	TRY(rc, iour_ruleset__new(NULL, &rs));
	TRY(rc, iour_ruleset__allow_sqe_op(rs, OP_NOP));
	TRY(rc, iour_ruleset__allow_sqe_op_name(rs, "openat"));
	TRY(rc, iour_ruleset__allow_sqe_op(rs, 64)); /* clamped on this target */
	TRY(rc, iour_ruleset__allow_register_op_name(rs, "register_probe"));
	TRY(rc, iour_ruleset__set_sqe_flags(rs, 0x1, 0));
	TRY(rc, iour_ruleset__dup(rs, &dup));
	TRY(rc, nonneg(iour_ruleset__export(dup, &o, NULL, &len)));
	if (!rc && len > sizeof(buf))
		rc = -ERANGE;
	TRY(rc, nonneg(iour_ruleset__export(dup, &o, buf, &len)));
	iour_ruleset__free(dup);
	iour_ruleset__free(rs);
	return rc;
}

Test(alloc_faults, ruleset_build_dup_export)
{
	drive("ruleset build, dup, export", op_ruleset, NULL);
}

/* ---- filters: every field kind, compiled ------------------------------- */

static const uint64_t families[] = { AF_INET, AF_INET6, AF_UNIX };
/* 40 separate values: 81 segments, more than a segment vector holds
 * inline (32, lib/filter/filter_map.h) and more than its first allocation (64),
 * so mapping a 32-bit field moves a vector to allocated memory and then
 * grows it. */
static const uint64_t ports[] = { 22, 25, 53, 80, 110, 143, 443, 465, 587, 993,
				  995, 8080, 7, 9, 11, 13, 17, 69, 88, 113,
				  119, 123, 137, 139, 161, 179, 194, 389, 427, 500,
				  514, 636, 873, 989, 1080, 1194, 1433, 1521, 2049, 3306 };
static const uint64_t protos[] = { 1, 3, 6, 9, 17, 33, 41, 47, 50, 58, 132, 136 };
static const uint64_t oflags[] = { 0x1, 0x2, 0x41, 0x42, 0x241, 0x242, 0x80000, 0x80001,
				   0x80002, 0x400000, 0x1000000000ULL, 0x2000000001ULL };
static const uint64_t addrs[] = { 0x0a000001, 0x0a000003, 0x0a000005, 0x0a000101, 0x7f000001,
				  0xc0a80001, 0xc0a80101, 0xc0a80201, 0x08080808, 0x08080404,
				  0x01010101, 0xe0000001 };
static const uint64_t types[] = { SOCK_STREAM, SOCK_DGRAM };

static int add(struct iour_filter *f, uint32_t opcode, uint32_t verdict, const struct iour_cmp *c,
	       size_t n)
{
	return iour_filter__add_rule(f, opcode, verdict, c, n);
}

#define CMP(...) ((struct iour_cmp){ .sz = sizeof(struct iour_cmp), __VA_ARGS__ })

/* A filter with rules on every field and every operator kind (sets, ranges,
 * masks, bit tests, IPv4 and IPv6 prefixes), plus a raw program. */
static int build_filter(struct iour_filter **out)
{
	static const struct iour_insn raw[] = { { 0x06, 0, 0, 1 } };
	struct iour_filter *f = NULL;
	struct iour_cmp c[3];
	int rc = 0;

	TRY(rc, iour_filter__new(NULL, &f));
	/* SOCKET */
	c[0] = CMP(.field = IOUR_FIELD_SOCKET_FAMILY, .op = IOUR_CMP_IN_SET, .set = families,
		   .set_len = 3);
	c[1] = CMP(.field = IOUR_FIELD_SOCKET_TYPE, .op = IOUR_CMP_IN_SET, .set = types,
		   .set_len = 2);
	c[2] = CMP(.field = IOUR_FIELD_SOCKET_TYPE_FLAGS, .op = IOUR_CMP_NONE_BITS,
		   .value = SOCK_NONBLOCK);
	TRY(rc, add(f, OP_SOCKET, IOUR_ALLOW, c, 3));
	c[0] = CMP(.field = IOUR_FIELD_SOCKET_PROTOCOL, .op = IOUR_CMP_IN_RANGE, .value = 1,
		   .arg = 17);
	TRY(rc, add(f, OP_SOCKET, IOUR_DENY, c, 1));
	c[0] = CMP(.field = IOUR_FIELD_SOCKET_PROTOCOL, .op = IOUR_CMP_IN_SET, .set = protos,
		   .set_len = 12);
	c[1] = CMP(.field = IOUR_FIELD_SOCKET_TYPE_RAW, .op = IOUR_CMP_MASKED_EQ, .value = 2,
		   .arg = 0xf);
	TRY(rc, add(f, OP_SOCKET, IOUR_ALLOW, c, 2));
	/* OPENAT / OPENAT2 */
	c[0] = CMP(.field = IOUR_FIELD_OPEN_FLAGS, .op = IOUR_CMP_ANY_BITS, .value = 0x40);
	TRY(rc, add(f, OP_OPENAT, IOUR_DENY, c, 1));
	c[0] = CMP(.field = IOUR_FIELD_OPEN_ACCMODE, .op = IOUR_CMP_LE, .value = 1);
	c[1] = CMP(.field = IOUR_FIELD_OPEN_MODE, .op = IOUR_CMP_NOT_IN_RANGE, .value = 0100,
		   .arg = 0777);
	TRY(rc, add(f, OP_OPENAT, IOUR_ALLOW, c, 2));
	c[0] = CMP(.field = IOUR_FIELD_OPEN_RESOLVE, .op = IOUR_CMP_ALL_BITS, .value = 0x8);
	c[1] = CMP(.field = IOUR_FIELD_OPEN_FLAGS, .op = IOUR_CMP_NOT_IN_SET, .set = ports,
		   .set_len = IOUR_ARRAY_SIZE(ports));
	TRY(rc, add(f, OP_OPENAT2, IOUR_ALLOW, c, 2));
	/* CONNECT: ports as a set and ranges, IPv4 and IPv6 prefixes */
	c[0] = CMP(.field = IOUR_FIELD_CONNECT_PORT, .op = IOUR_CMP_IN_SET, .set = ports,
		   .set_len = IOUR_ARRAY_SIZE(ports));
	c[1] = CMP(.field = IOUR_FIELD_CONNECT_ADDR4, .op = IOUR_CMP_IN_PREFIX,
		   .value = IOUR_IPV4(10, 1, 0, 0), .arg = 16);
	TRY(rc, add(f, OP_CONNECT, IOUR_ALLOW, c, 2));
	c[0] = CMP(.field = IOUR_FIELD_CONNECT_ADDR6, .op = IOUR_CMP_IN_PREFIX, .arg = 32,
		   .addr6 = { 0x20, 0x01, 0x0d, 0xb8 });
	c[1] = CMP(.field = IOUR_FIELD_CONNECT_PORT, .op = IOUR_CMP_NOT_IN_RANGE, .value = 1000,
		   .arg = 2000);
	TRY(rc, add(f, OP_CONNECT, IOUR_ALLOW, c, 2));
	c[0] = CMP(.field = IOUR_FIELD_CONNECT_ADDR4, .op = IOUR_CMP_NOT_IN_PREFIX,
		   .value = IOUR_IPV4(192, 168, 0, 0), .arg = 24);
	c[1] = CMP(.field = IOUR_FIELD_CONNECT_FAMILY, .op = IOUR_CMP_NE, .value = AF_UNIX);
	TRY(rc, add(f, OP_CONNECT, IOUR_ALLOW, c, 2));
	c[0] = CMP(.field = IOUR_FIELD_CONNECT_ADDR6, .op = IOUR_CMP_NE,
		   .addr6 = { [15] = 1 });
	TRY(rc, add(f, OP_CONNECT, IOUR_ALLOW, c, 1));
	/* large sets on a 64-bit field and on a network-order 32-bit one */
	c[0] = CMP(.field = IOUR_FIELD_OPEN_FLAGS, .op = IOUR_CMP_IN_SET, .set = oflags,
		   .set_len = 12);
	TRY(rc, add(f, OP_OPENAT2, IOUR_DENY, c, 1));
	c[0] = CMP(.field = IOUR_FIELD_CONNECT_ADDR4, .op = IOUR_CMP_IN_SET, .set = addrs,
		   .set_len = 12);
	TRY(rc, add(f, OP_CONNECT, IOUR_DENY, c, 1));
	/* a run of one-field rules too large for the stack buffer of
	 * lib/filter/filter_lower.c's compile_run() */
	c[0] = CMP(.field = IOUR_FIELD_CONNECT_PORT, .op = IOUR_CMP_IN_SET, .set = ports,
		   .set_len = IOUR_ARRAY_SIZE(ports));
	TRY(rc, add(f, OP_CONNECT, IOUR_DENY, c, 1));
	c[0] = CMP(.field = IOUR_FIELD_CONNECT_PORT, .op = IOUR_CMP_IN_SET, .set = protos,
		   .set_len = 12);
	TRY(rc, add(f, OP_CONNECT, IOUR_DENY, c, 1));
	/* fields of every opcode */
	c[0] = CMP(.field = IOUR_FIELD_USER_DATA, .op = IOUR_CMP_GT, .value = 1000);
	c[1] = CMP(.field = IOUR_FIELD_SQE_FLAGS, .op = IOUR_CMP_NONE_BITS, .value = 0x1);
	TRY(rc, add(f, OP_NOP, IOUR_ALLOW, c, 2));
	TRY(rc, iour_filter__set_default(f, OP_NOP, IOUR_DENY));
	TRY(rc, iour_filter__set_raw(f, OP_READ, raw, 1));
	if (rc) {
		iour_filter__free(f);
		return rc;
	}
	*out = f;
	return 0;
}

static int op_filter(const void *arg)
{
	static const uint32_t ops[] = { OP_NOP, OP_SOCKET, OP_OPENAT, OP_OPENAT2, OP_CONNECT,
					OP_READ };
	struct iour_filter *f = NULL, *dup = NULL;
	struct iour_filter_opinfo info = { .sz = sizeof(info) };
	uint32_t list[64];
	size_t i;
	int rc;

	(void)arg;
	rc = build_filter(&f);
	TRY(rc, iour_filter__dup(f, &dup));
	if (!rc && iour_filter__opcodes(dup, list, 64) < 0)
		rc = -EINVAL;
	for (i = 0; i < sizeof(ops) / sizeof(ops[0]) && !rc; i++) {
		struct iour_prog *p = NULL;

		TRY(rc, iour_filter__opcode_info(dup, ops[i], &info));
		TRY(rc, iour_filter__compile(dup, ops[i], NULL, &p));
		if (!rc && (!iour_prog__insns(p) || !iour_prog__insn_cnt(p)))
			rc = -EINVAL;
		iour_prog__free(p);
	}
	iour_filter__free(dup);
	iour_filter__free(f);
	return rc;
}

Test(alloc_faults, filter_build_dup_compile_every_field_kind)
{
	drive("filter build, dup, compile (every field and operator kind)", op_filter, NULL);
}

/* ---- filters: opcodes over several pages, rules that grow --------------- */

/* Opcodes in three of the four pages of 64 (lib/filter/filter_internal.h), each
 * page allocated on its first use, and more one-comparison rules than the
 * rules array first holds; then a copy, its opcodes, its programs. */
static int op_filter_pages(const void *arg)
{
	static const uint32_t ops[] = { 0, 63, 64, 130, 255 };
	static const struct iour_insn raw[] = { { 0x06, 0, 0, 1 } };
	struct iour_filter *f = NULL, *dup = NULL;
	struct iour_cmp c[3];
	uint32_t list[8];
	int rc = 0;

	(void)arg;
	TRY(rc, iour_filter__new(NULL, &f));
	c[0] = CMP(.field = IOUR_FIELD_USER_DATA, .op = IOUR_CMP_EQ, .value = 1);
	TRY(rc, add(f, 0, IOUR_ALLOW, c, 1));
	c[0] = CMP(.field = IOUR_FIELD_USER_DATA, .op = IOUR_CMP_IN_SET, .set = ports,
		   .set_len = 12);
	c[1] = CMP(.field = IOUR_FIELD_SQE_FLAGS, .op = IOUR_CMP_NONE_BITS, .value = 0x1);
	c[2] = CMP(.field = IOUR_FIELD_USER_DATA, .op = IOUR_CMP_NE, .value = 80);
	TRY(rc, add(f, 63, IOUR_DENY, c, 3));
	TRY(rc, iour_filter__set_default(f, 64, IOUR_ALLOW));
	TRY(rc, iour_filter__set_raw(f, 130, raw, 1));
	for (uint64_t i = 0; i < 9; i++) {
		c[0] = CMP(.field = IOUR_FIELD_USER_DATA, .op = IOUR_CMP_IN_SET,
			   .set = &ports[i], .set_len = 3);
		TRY(rc, add(f, 255, i % 2 ? IOUR_DENY : IOUR_ALLOW, c, 1));
	}
	TRY(rc, iour_filter__dup(f, &dup));
	if (!rc && iour_filter__opcodes(dup, list, 8) != 5)
		rc = -EINVAL;
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]) && !rc; i++) {
		struct iour_prog *p = NULL;

		TRY(rc, iour_filter__compile(dup, ops[i], NULL, &p));
		if (!rc && list[i] != ops[i])
			rc = -EINVAL;
		iour_prog__free(p);
	}
	iour_filter__free(dup);
	iour_filter__free(f);
	return rc;
}

Test(alloc_faults, filter_pages_and_growing_rules)
{
	drive("filter over several opcode pages, growing rules, dup, compile", op_filter_pages,
	      NULL);
}

/* One mutating call on a filter holding opcodes 0, 64 and 65 (pages 0
 * and 1). */
enum mutation { ADD_ONE, ADD_THREE, SET_DEFAULT, SET_RAW, MUTATIONS };

static int mutate(struct iour_filter *f, enum mutation m, uint32_t opcode)
{
	static const struct iour_insn raw[] = { { 0x06, 0, 0, 1 } };
	struct iour_cmp c[3];

	c[0] = CMP(.field = IOUR_FIELD_USER_DATA, .op = IOUR_CMP_IN_SET, .set = ports,
		   .set_len = 12);
	c[1] = CMP(.field = IOUR_FIELD_SQE_FLAGS, .op = IOUR_CMP_NONE_BITS, .value = 0x1);
	c[2] = CMP(.field = IOUR_FIELD_USER_DATA, .op = IOUR_CMP_NE, .value = 80);
	switch (m) {
	case ADD_ONE:
		return add(f, opcode, IOUR_DENY, c, 1);
	case ADD_THREE:
		return add(f, opcode, IOUR_DENY, c, 3);
	case SET_DEFAULT:
		return iour_filter__set_default(f, opcode, IOUR_ALLOW);
	default:
		return iour_filter__set_raw(f, opcode, raw, 1);
	}
}

/* A call that fails for want of memory leaves the filter as it was: no
 * opcode, page or rule added, nothing of its own left allocated.  Swept
 * over every allocation of the call, for an opcode in a page the filter
 * has not used yet (191: the page is allocated first), a fresh slot of a
 * page in use (1), and an opcode in use (0, whose rules array is full; 65
 * for set_raw, which replaces a raw program but refuses rules). */
Test(alloc_faults, failed_call_leaves_filter_unchanged)
{
	for (int m = 0; m < MUTATIONS; m++) {
		const uint32_t targets[] = { 191, 1, m == SET_RAW ? 65 : 0 };

		for (size_t t = 0; t < sizeof(targets) / sizeof(targets[0]); t++) {
			uint32_t op = targets[t];
			unsigned long n, calls = 0;

			for (n = 1;; n++) {
				struct iour_filter *f = NULL;
				struct iour_filter_opinfo before = { .sz = sizeof(before) };
				struct iour_filter_opinfo after = { .sz = sizeof(after) };
				struct iour_cmp c = CMP(.field = IOUR_FIELD_USER_DATA,
							.op = IOUR_CMP_EQ, .value = 7);
				int had, rc;
				long live = 0;

				cr_assert_eq(iour_filter__new(NULL, &f), 0);
				for (int i = 0; i < 4; i++) /* rules array exactly full */
					cr_assert_eq(add(f, 0, IOUR_ALLOW, &c, 1), 0);
				cr_assert_eq(iour_filter__set_default(f, 64, IOUR_DENY), 0);
				cr_assert_eq(mutate(f, SET_RAW, 65), 0);
				had = iour_filter__opcode_info(f, op, &before);
				iour__alloc_arm(n);
				rc = mutate(f, (enum mutation)m, op);
				iour__alloc_disarm(&calls, &live);
				if (calls < n) {
					cr_assert_eq(rc, 0, "mutation %d on %u: %s", m, op,
						     iour_errname(rc));
					iour_filter__free(f);
					break;
				}
				cr_assert_eq(rc, -ENOMEM, "mutation %d on %u, allocation %lu: %s",
					     m, op, n, iour_errname(rc));
				cr_assert_eq(live, 0, "mutation %d on %u, allocation %lu: %ld left",
					     m, op, n, live);
				cr_assert_eq(iour_filter__opcodes(f, NULL, 0), 3,
					     "mutation %d on %u, allocation %lu: opcodes", m, op,
					     n);
				cr_assert_eq(iour_filter__opcode_info(f, op, &after), had);
				cr_assert(!memcmp(&before, &after, sizeof(before)),
					  "mutation %d on %u, allocation %lu: opcode changed", m,
					  op, n);
				iour_filter__free(f);
			}
			/* only set_default on an opcode in use allocates nothing */
			if (m != SET_DEFAULT || op == 191 || op == 1)
				cr_assert_gt(n, 1, "mutation %d on %u allocates nothing", m, op);
		}
	}
}

/* ---- stacked programs: a deny-list split under a small limit ------------ */
static int op_stack(const void *arg)
{
	static uint64_t set[60];
	struct iour__compile_cfg cfg = { .big_endian = __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__,
					 .max_insns = 64 };
	struct iour__stack_stats st;
	struct iour_filter *f = NULL;
	struct iour_prog *p = NULL;
	int rc;

	(void)arg;
	for (size_t i = 0; i < 60; i++)
		set[i] = 0x0a000000U + (uint32_t)i * 5;
	rc = denylist4_new(NULL, set, 60, 22, &f);
	TRY(rc, iour__filter_compile_stack(f, OP_CONNECT, &cfg, &st, &p, NULL, 0));
	if (!rc && st.progs < 2)
		rc = -EINVAL; /* the split path must be taken */
	iour_prog__free(p);
	iour_filter__free(f);
	return rc;
}

Test(alloc_faults, filter_stack_split)
{
	drive("deny-list split across stacked programs", op_stack, NULL);
}

/* IPv4 points only: the parts get the range pre-check, which the emitter
 * lays out first (filter_emit.c), and 300 values take the radix sorts
 * (filter_map.c, iour__fm_sort_u64()). */
static int op_stack_points(const void *arg)
{
	static uint64_t set[300];
	struct iour__compile_cfg cfg = { .big_endian = __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__,
					 .max_insns = 256 };
	struct iour__stack_stats st;
	struct iour_filter *f = NULL;
	struct iour_prog *p = NULL;
	int rc;

	(void)arg;
	for (size_t i = 0; i < 300; i++)
		set[i] = 0x0a000000U + (uint32_t)i * 7919;
	rc = denylist4_new(NULL, set, 300, 0, &f);
	TRY(rc, iour__filter_compile_stack(f, OP_CONNECT, &cfg, &st, &p, NULL, 0));
	if (!rc && st.progs < 2)
		rc = -EINVAL; /* the split path must be taken */
	iour_prog__free(p);
	iour_filter__free(f);
	return rc;
}

Test(alloc_faults, filter_stack_points_precheck)
{
	drive("IPv4-point deny-list split with range pre-checks", op_stack_points, NULL);
}

/* ---- policy: plan, describe, report text ------------------------------- */

static struct iour_features kernel(uint32_t level)
{
	struct iour_features f;

	memset(&f, 0, sizeof(f));
	f.sz = sizeof(f);
	f.level = f.kernel_level = level;
	f.io_uring = f.ring_restrictions = f.query = f.probe = f.blind_register = IOUR_AVAIL_YES;
	f.op_last = 63;
	f.reg_last = 36;
	f.limits_source = IOUR_LIMITS_QUERY;
	f.sysctl_group = -1;
	if (level >= IOUR_LEVEL_TASK_BPF) {
		f.op_last = 65;
		f.reg_last = 38;
		f.split_gates = 1;
		f.no_new_privs = 1;
		f.task_restrictions = f.bpf_ring = f.bpf_task = IOUR_AVAIL_YES;
		f.pdu_socket = 12;
		f.pdu_openat = f.pdu_openat2 = 24;
		f.pdu_connect = level >= IOUR_LEVEL_CONNECT ? 24 : 0;
	}
	return f;
}

struct plan_case {
	uint32_t target;
	const struct iour_features *f; /* NULL: the running kernel (cached probe) */
};

static int use_plan(const struct iour_plan *pl)
{
	const struct iour_report *r = iour_plan__report(pl);
	struct iour_plan_info info = { .sz = sizeof(info) };
	struct iour_decision d = { .sz = sizeof(d) };
	char text[1 << 16];
	size_t len, i;
	int rc = 0, n;

	TRY(rc, iour_plan__info(pl, &info));
	n = iour_plan__step_cnt(pl);
	for (i = 0; !rc && n > 0 && i < (size_t)n; i++) {
		struct iour_plan_step s = { .sz = sizeof(s) };

		TRY(rc, iour_plan__step(pl, i, &s));
	}
	len = 0;
	TRY(rc, iour_plan__describe(pl, NULL, &len));
	len = sizeof(text);
	TRY(rc, iour_plan__describe(pl, text, &len));
	len = 0;
	TRY(rc, iour_report__describe(r, NULL, &len));
	len = sizeof(text);
	TRY(rc, iour_report__describe(r, text, &len));
	n = iour_report__decision_cnt(r);
	for (i = 0; !rc && n > 0 && i < (size_t)n; i++)
		TRY(rc, iour_report__decision(r, i, &d));
	return rc;
}

static int op_policy(const void *arg)
{
	const struct plan_case *pc = arg;
	IOUR_OPTS(iour_plan_opts, o, .features = pc->f);
	static const struct iour_insn prog[] = { { 0x06, 0, 0, 1 } };
	struct iour_ruleset *rs = NULL;
	struct iour_filter *f = NULL;
	struct iour_policy *p = NULL, *dup = NULL;
	struct iour_plan *pl = NULL;
	int rc = 0;

	TRY(rc, iour_ruleset__new(NULL, &rs));
	TRY(rc, iour_ruleset__allow_sqe_op(rs, OP_NOP));
	TRY(rc, iour_ruleset__allow_sqe_op(rs, OP_SOCKET));
	TRY(rc, iour_ruleset__allow_sqe_op(rs, OP_CONNECT));
	TRY(rc, iour_ruleset__allow_sqe_op(rs, OP_OPENAT));
	TRY(rc, iour_ruleset__set_sqe_flags(rs, 0, 0));
	TRY(rc, build_filter(&f));
	TRY(rc, iour_policy__new(NULL, &p));
	TRY(rc, iour_policy__set_ruleset(p, rs));
	TRY(rc, iour_policy__set_filter(p, f));
	TRY(rc, iour_policy__set_prog(p, OP_OPENAT2, prog, 1, 24));
	TRY(rc, iour_policy__set_attr(p, IOUR_POLICY_ATTR_TARGET, pc->target));
	TRY(rc, iour_policy__dup(p, &dup));
	TRY(rc, iour_policy__plan(dup, pc->f ? &o : NULL, &pl));
	TRY(rc, use_plan(pl));
	for (uint32_t side = IOUR_STEP_TASK; !rc && side <= IOUR_STEP_RING; side++) {
		struct iour_ruleset *got = NULL;

		TRY(rc, iour_plan__get_ruleset(pl, side, &got));
		iour_ruleset__free(got);
	}
	iour_plan__free(pl);
	iour_policy__free(dup);
	iour_policy__free(p);
	iour_filter__free(f);
	iour_ruleset__free(rs);
	return rc;
}

/* ---- policy files: load, save, decide ------------------------------------ */

static int op_policyfile(const void *arg)
{
	static const char text[] =
		"{\"defaultAction\":\"deny\",\"requestOps\":[\"socket\",\"connect\",\"read\"],"
		"\"registerOps\":[\"@probe\"],\"sqeFlags\":{\"allowed\":[\"async\"]},"
		"\"entries\":[{\"names\":[\"read\"],\"action\":\"allow\"},"
		"{\"names\":[\"socket\"],\"action\":\"allow\",\"args\":[{\"field\":"
		"\"socket.family\",\"op\":\"in\",\"values\":[\"AF_INET\",\"AF_INET6\"]}]},"
		"{\"names\":[\"connect\"],\"action\":\"deny\",\"args\":[{\"field\":"
		"\"connect.addr4\",\"op\":\"in\",\"value\":\"10.0.0.0/8\"}]},"
		"{\"names\":[\"connect\"],\"action\":\"allow\"}],"
		"\"programs\":[{\"name\":\"openat2\",\"insns\":[[6,0,0,1]]}]}";
	IOUR_OPTS(iour_policy_load_opts, o, .kernel = IOUR_KVER(7, 2));
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr = { htonl(0x0a000001) } };
	struct iour_request_verdict v = { .sz = sizeof(v) };
	struct iour_policy *p = NULL, *q = NULL;
	uint8_t ctx[IOUR_CTX_SIZE];
	char buf[8192];
	int rc = 0;

	(void)arg;
	TRY(rc, iour_policy__load_json(text, sizeof(text) - 1, &o, &p, NULL));
	TRY(rc, nonneg(iour_policy__save_json(p, 0, NULL, 0)));
	TRY(rc, nonneg(iour_policy__save_json(p, 0, buf, sizeof(buf))));
	TRY(rc, iour_policy__load_json(buf, strlen(buf), &o, &q, NULL));
	TRY(rc, iour_ctx_generic(ctx, sizeof(ctx), OP_CONNECT, 0, 0));
	TRY(rc, iour_ctx_connect(ctx, sizeof(ctx), &sa, sizeof(sa)));
	TRY(rc, iour_policy__decide(q, ctx, sizeof(ctx), &v));
	if (!rc && (v.verdict != IOUR_DENY || v.reason != IOUR_DECIDE_RULE || v.rule != 0))
		rc = -EPROTO;
	iour_policy__free(q);
	iour_policy__free(p);
	return rc;
}

Test(alloc_faults, policyfile_load_save_decide)
{
	drive("policy file load + save + load + decide", op_policyfile, NULL);
}

Test(alloc_faults, policy_plan_describe_report)
{
	const struct iour_features k618 = kernel(IOUR_LEVEL_QUERY), k72 = kernel(IOUR_LEVEL_CONNECT);
	const struct {
		const char *name;
		struct plan_case c;
	} cases[] = {
		{ "policy plan + describe + report, task, described 6.18",
		  { IOUR_POLICY_TARGET_TASK, &k618 } },
		{ "policy plan + describe + report, ring, described 6.18",
		  { IOUR_POLICY_TARGET_RING, &k618 } },
		{ "policy plan + describe + report, task, described 7.2",
		  { IOUR_POLICY_TARGET_TASK, &k72 } },
		{ "policy plan + describe + report, ring, described 7.2",
		  { IOUR_POLICY_TARGET_RING, &k72 } },
		{ "policy plan + describe + report, task, running kernel",
		  { IOUR_POLICY_TARGET_TASK, NULL } },
	};
	size_t i;

	/* The probe's cache entry lives as long as the process: take it
	 * before counting. */
	cr_assert_geq(iour_feature_level(), 0);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		drive(cases[i].name, op_policy, &cases[i].c);
}

/* The seam itself: off by default, counts only while armed. */
Test(alloc_faults, seam_counts_only_while_armed)
{
	unsigned long calls;
	long live;
	void *p, *q;

	p = iour__malloc(8);
	cr_assert_not_null(p);
	iour__alloc_arm(2);
	q = iour__strdup("x");
	cr_assert_not_null(q);
	cr_assert_null(iour__calloc(1, 8), "the second attempt fails");
	q = iour__realloc(q, 64); /* moves or grows: not a new block */
	cr_assert_not_null(q);
	iour__alloc_disarm(&calls, &live);
	cr_assert_eq(calls, 3);
	cr_assert_eq(live, 1);
	iour__free(q);
	iour__free(p);
}
