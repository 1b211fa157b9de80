/* SPDX-License-Identifier: MIT */
/*
 * iour_kernel_describe(): a kernel version described from the library's
 * tables (doc/kernel.md's ladder, lib/base/schema.def's payloads), checked
 * against the ladder itself, against the probe of the emulated kernel of
 * tests/common/emukernel (an independent implementation of doc/kernel.md:
 * those tests say "emulated"), and for bad input and output sizes.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "emukernel.h"
#include "kernel_facts_oracle.h"
#include "iouring_restrict/iouring_restrict.h"

static struct iour_features describe(uint32_t kver)
{
	struct iour_features f;

	memset(&f, 0xa5, sizeof(f));
	f.sz = sizeof(f);
	cr_assert_eq(iour_kernel_describe(kver, &f), 0);
	return f;
}

Test(kernel_describe, ladder_levels_and_payloads)
{
	const struct {
		uint32_t kver, level, pdu_socket, pdu_open, pdu_connect;
	} cases[] = {
		{ IOUR_KVER(4, 19), IOUR_LEVEL_NONE, 0, 0, 0 },
		{ IOUR_KVER(5, 1), IOUR_LEVEL_IO_URING, 0, 0, 0 },
		{ IOUR_KVER(5, 9), IOUR_LEVEL_IO_URING, 0, 0, 0 },
		{ IOUR_KVER(5, 10), IOUR_LEVEL_RING, 0, 0, 0 },
		{ IOUR_KVER(6, 17), IOUR_LEVEL_RING, 0, 0, 0 },
		{ IOUR_KVER(6, 18), IOUR_LEVEL_QUERY, 0, 0, 0 },
		{ IOUR_KVER(7, 0), IOUR_LEVEL_TASK_BPF, 12, 24, 0 },
		{ IOUR_KVER(7, 1), IOUR_LEVEL_TASK_BPF, 12, 24, 0 },
		{ IOUR_KVER(7, 2), IOUR_LEVEL_CONNECT, 12, 24, 24 },
		{ IOUR_KVER(7, 2) | 5, IOUR_LEVEL_CONNECT, 12, 24, 24 },
		{ IOUR_KVER(9, 0), IOUR_LEVEL_CONNECT, 12, 24, 24 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct iour_features f = describe(cases[i].kver);
		bool ring = cases[i].level >= IOUR_LEVEL_RING;

		cr_expect_eq(f.sz, sizeof(f), "case %zu: sz untouched", i);
		cr_expect_eq(f.level, cases[i].level, "case %zu: level %u", i, f.level);
		cr_expect_eq(f.kernel_level, cases[i].level, "case %zu", i);
		cr_expect_eq(f.flags, 0, "case %zu: never forced", i);
		cr_expect_eq(f.io_uring, cases[i].level ? IOUR_AVAIL_YES : IOUR_AVAIL_NO,
			     "case %zu", i);
		cr_expect_eq(f.setup_err, cases[i].level ? -EFAULT : -ENOSYS, "case %zu", i);
		cr_expect_eq(f.ring_restrictions, ring ? IOUR_AVAIL_YES : IOUR_AVAIL_NO, "case %zu",
			     i);
		cr_expect_eq(f.op_last, ring ? (uint32_t)iour_opcode_last(cases[i].kver) : 0,
			     "case %zu: op_last %u", i, f.op_last);
		cr_expect_eq(f.reg_last, ring ? (uint32_t)iour_register_op_last(cases[i].kver) : 0,
			     "case %zu: reg_last %u", i, f.reg_last);
		cr_expect_eq(f.split_gates, cases[i].level >= IOUR_LEVEL_TASK_BPF, "case %zu", i);
		cr_expect_eq(f.pdu_socket, cases[i].pdu_socket, "case %zu", i);
		cr_expect_eq(f.pdu_openat, cases[i].pdu_open, "case %zu", i);
		cr_expect_eq(f.pdu_openat2, cases[i].pdu_open, "case %zu", i);
		cr_expect_eq(f.pdu_connect, cases[i].pdu_connect, "case %zu", i);
		cr_expect_eq(f.sysctl_disabled, -1, "case %zu", i);
		cr_expect_eq(f.child_signal, 0, "case %zu", i);
		cr_expect_eq(f.pad, 0, "case %zu: every field written", i);
	}
}

/* The description of a version plans like a probe result: the planner
 * accepts it for every level. */
Test(kernel_describe, planner_accepts_every_description)
{
	const uint32_t kvers[] = { IOUR_KVER(5, 4),  IOUR_KVER(5, 10), IOUR_KVER(6, 1),
				   IOUR_KVER(6, 18), IOUR_KVER(7, 0),  IOUR_KVER(7, 2) };
	struct iour_policy *p = NULL;

	cr_assert_eq(iour_policy__new(NULL, &p), 0);
	for (size_t i = 0; i < sizeof(kvers) / sizeof(kvers[0]); i++) {
		struct iour_features f = describe(kvers[i]);
		IOUR_OPTS(iour_plan_opts, o, .features = &f);
		struct iour_plan *plan = NULL;

		cr_expect_eq(iour_policy__plan(p, &o, &plan), 0, "kver %#x", kvers[i]);
		iour_plan__free(plan);
	}
	iour_policy__free(p);
}

static struct iour_features probe_emulated(const struct emu_config *cfg)
{
	IOUR_OPTS(iour_probe_opts, o, .flags = IOUR_PROBE_NO_CACHE);
	struct iour_features f = { .sz = sizeof(f) };
	struct emu *e = NULL;
	int r;

	cr_assert_eq(emu_new(cfg, &e), 0);
	emu_install(e);
	r = iour_probe(&o, &f);
	emu_uninstall();
	emu_free(e);
	cr_assert_eq(r, 0, "iour_probe: %s", iour_errname(r));
	return f;
}

/* The description agrees with what the probe finds on the emulated
 * generation of the same version, for a fresh unprivileged process, in
 * every field both determine (the limits: the emulated kernel's own
 * op_last/reg_last, which the name tables must give too). */
Test(kernel_describe, agrees_with_emulated_probe)
{
	const struct {
		uint32_t kver;
		enum emu_gen gen;
	} cases[] = {
		{ IOUR_KVER(6, 1), EMU_GEN_6_1 },
		{ IOUR_KVER(6, 18), EMU_GEN_6_18 },
		{ IOUR_KVER(7, 0), EMU_GEN_7_0 },
		{ IOUR_KVER(7, 2), EMU_GEN_7_2 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct emu_config cfg = { .gen = cases[i].gen };
		struct iour_features d = describe(cases[i].kver);
		struct iour_features p = probe_emulated(&cfg);

#define SAME(m)                                                                                   \
	cr_expect_eq(d.m, p.m, "emulated %#x: " #m " described %lld, probed %lld", cases[i].kver, \
		     (long long)d.m, (long long)p.m)
		SAME(level);
		SAME(kernel_level);
		SAME(io_uring);
		SAME(setup_err);
		SAME(ring_restrictions);
		SAME(ring_register_err);
		SAME(enable_rings_err);
		SAME(op_last);
		SAME(reg_last);
		SAME(split_gates);
		SAME(query);
		SAME(probe);
		SAME(blind_register);
		SAME(task_restrictions);
		SAME(task_restrictions_err);
		SAME(bpf_ring);
		SAME(bpf_ring_err);
		SAME(bpf_task);
		SAME(bpf_task_err);
		SAME(pdu_socket);
		SAME(pdu_openat);
		SAME(pdu_openat2);
		SAME(pdu_connect);
#undef SAME
		for (uint32_t op = 0; op < 256; op++)
			cr_expect_eq(d.pdu_size[op], p.pdu_size[op],
				     "emulated %#x: pdu_size[%u] described %u, probed %u",
				     cases[i].kver, op, d.pdu_size[op], p.pdu_size[op]);
	}
}

Test(kernel_describe, bad_input)
{
	struct iour_features f;

	cr_expect_eq(iour_kernel_describe(IOUR_KVER(7, 2), NULL), -EINVAL);
	memset(&f, 0, sizeof(f));
	f.sz = offsetof(struct iour_features, kernel_level) - 1;
	cr_expect_eq(iour_kernel_describe(IOUR_KVER(7, 2), &f), -EINVAL);
	cr_expect_eq(f.level, 0, "nothing written");
	f.sz = 4097;
	cr_expect_eq(iour_kernel_describe(IOUR_KVER(7, 2), &f), -EINVAL);
	cr_expect_eq(f.level, 0, "nothing written");
}

/* An older caller's smaller struct gets the whole fields that fit, never
 * part of one; a newer caller's larger struct gets zeros past ours. */
Test(kernel_describe, output_sizes)
{
	const struct iour_features full = describe(IOUR_KVER(7, 2));
	unsigned char buf[sizeof(struct iour_features) + 64];
	struct iour_features *f = (struct iour_features *)(void *)buf;
	const size_t flags_at = offsetof(struct iour_features, flags);
	const size_t io_uring_end = offsetof(struct iour_features, io_uring) + sizeof(uint32_t);

	/* Ends inside flags: flags is left alone. */
	memset(buf, 0xa5, sizeof(buf));
	f->sz = flags_at + 4;
	cr_assert_eq(iour_kernel_describe(IOUR_KVER(7, 2), f), 0);
	cr_expect_eq(f->level, full.level);
	cr_expect_eq(f->kernel_level, full.kernel_level);
	cr_expect_eq(buf[flags_at], 0xa5, "no part of flags written");
	/* Up to io_uring, plus two bytes of the next field: not written. */
	memset(buf, 0xa5, sizeof(buf));
	f->sz = io_uring_end + 2;
	cr_assert_eq(iour_kernel_describe(IOUR_KVER(7, 2), f), 0);
	cr_expect_eq(f->flags, 0);
	cr_expect_eq(f->io_uring, IOUR_AVAIL_YES);
	cr_expect_eq(buf[io_uring_end], 0xa5, "no part of setup_err written");
	/* Larger than ours: the tail is zeroed. */
	memset(buf, 0xa5, sizeof(buf));
	f->sz = sizeof(buf);
	cr_assert_eq(iour_kernel_describe(IOUR_KVER(7, 2), f), 0);
	cr_expect_eq(memcmp((char *)f + sizeof(size_t), (const char *)&full + sizeof(size_t),
			    sizeof(full) - sizeof(size_t)),
		     0);
	for (size_t i = sizeof(full); i < sizeof(buf); i++)
		cr_expect_eq(buf[i], 0, "byte %zu past the struct", i);
}

/* The payload of every opcode (iour_features::pdu_size), against
 * doc/kernel.md 4.3's sizes for each level: SOCKET 12, OPENAT and
 * OPENAT2 24 from 7.0, CONNECT 24 from 7.2; every other opcode none.  The
 * array agrees with the 1.0 fields and with the schema's payload rows. */
Test(kernel_describe, payload_array_per_level)
{
	const struct {
		uint32_t kver, socket, open, connect;
	} cases[] = {
		{ IOUR_KVER(5, 10), 0, 0, 0 },  { IOUR_KVER(6, 18), 0, 0, 0 },
		{ IOUR_KVER(7, 0), 12, 24, 0 }, { IOUR_KVER(7, 1), 12, 24, 0 },
		{ IOUR_KVER(7, 2), 12, 24, 24 }, { IOUR_KVER(8, 0), 12, 24, 24 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct iour_features f = describe(cases[i].kver);
		int filled = 0;

		for (uint32_t op = 0; op < 256; op++) {
			uint32_t want = op == IOUR_OP_SOCKET			     ? cases[i].socket
					: op == IOUR_OP_OPENAT || op == IOUR_OP_OPENAT2 ? cases[i].open
					: op == IOUR_OP_CONNECT			     ? cases[i].connect
											     : 0;

			cr_expect_eq(f.pdu_size[op], want, "case %zu: opcode %u has %u", i, op,
				     f.pdu_size[op]);
			filled += f.pdu_size[op] != 0;
		}
		cr_expect_eq(f.pdu_size[IOUR_OP_SOCKET], f.pdu_socket, "case %zu", i);
		cr_expect_eq(f.pdu_size[IOUR_OP_OPENAT], f.pdu_openat, "case %zu", i);
		cr_expect_eq(f.pdu_size[IOUR_OP_OPENAT2], f.pdu_openat2, "case %zu", i);
		cr_expect_eq(f.pdu_size[IOUR_OP_CONNECT], f.pdu_connect, "case %zu", i);
		/* Each schema row whose level the kernel has, at its size. */
		for (int r = 0; r < iour_payload_count(); r++) {
			struct iour_payload_info pl = { .sz = sizeof(pl) };

			cr_assert_eq(iour_payload_get((size_t)r, &pl), 0);
			cr_expect_eq(f.pdu_size[pl.opcode],
				     cases[i].kver >= pl.since ? pl.pdu_size : 0, "case %zu row %d",
				     i, r);
			filled -= cases[i].kver >= pl.since;
		}
		cr_expect_eq(filled, 0, "case %zu: entries beyond the schema's rows", i);
	}
}

/* A caller built against 1.0 passes the 1.0 size: the array is neither
 * written nor read, whatever its bytes hold. */
Test(kernel_describe, payload_array_old_size_callers)
{
	const size_t old_sz = offsetof(struct iour_features, pdu_size);
	const struct iour_features full = describe(IOUR_KVER(7, 2));
	struct iour_features f;
	struct iour_policy *p = NULL;
	IOUR_OPTS(iour_plan_opts, o, .features = &f);
	struct iour_plan *plan = NULL;

	cr_assert_eq(old_sz, 224, "the 1.0 struct's size");
	memset(&f, 0xa5, sizeof(f));
	f.sz = old_sz;
	cr_assert_eq(iour_kernel_describe(IOUR_KVER(7, 2), &f), 0);
	cr_expect_eq(f.pdu_connect, 24);
	cr_expect_eq(memcmp((char *)&f + sizeof(size_t), (const char *)&full + sizeof(size_t),
			    old_sz - sizeof(size_t)),
		     0, "the 1.0 fields as for a full struct");
	for (size_t i = 0; i < sizeof(f.pdu_size); i++)
		cr_expect_eq(f.pdu_size[i], 0xa5, "pdu_size[%zu] written past sz", i);
	/* Ending inside the array: no part of it written. */
	f.sz = old_sz + 100;
	cr_assert_eq(iour_kernel_describe(IOUR_KVER(7, 2), &f), 0);
	cr_expect_eq(f.pdu_size[IOUR_OP_SOCKET], 0xa5, "part of the array written");
	/* Planning reads the named fields; the junk past sz is not looked at. */
	f.sz = old_sz;
	cr_assert_eq(iour_policy__new(NULL, &p), 0);
	cr_expect_eq(iour_policy__plan(p, &o, &plan), 0);
	iour_plan__free(plan);
	iour_policy__free(p);
}

/* How many CONNECT decisions of a plan say the kernel's payload is too
 * short; -errno if planning fails. */
static int connect_no_payload(const struct iour_features *f)
{
	/* Reads the first word of the address: 28 bytes of the context. */
	static const struct iour_insn allow[] = { { 0x20 /* LD|W|ABS */, 0, 0, 24 },
						  { 0x06 /* RET|K */, 0, 0, 1 } };
	IOUR_OPTS(iour_plan_opts, o, .features = f);
	struct iour_policy *p = NULL;
	struct iour_plan *plan = NULL;
	const struct iour_report *r;
	struct iour_decision d = { .sz = sizeof(d) };
	struct iour_ruleset *rs = NULL;
	int rc, n = 0;

	cr_assert_eq(iour_ruleset__new(NULL, &rs), 0);
	cr_assert_eq(iour_ruleset__deny_all_sqe_ops(rs), 0);
	cr_assert_eq(iour_ruleset__allow_sqe_op(rs, IOUR_OP_CONNECT), 0);
	cr_assert_eq(iour_policy__new(NULL, &p), 0);
	cr_assert_eq(iour_policy__set_ruleset(p, rs), 0);
	iour_ruleset__free(rs);
	cr_assert_eq(iour_policy__set_attr(p, IOUR_POLICY_ATTR_TARGET, IOUR_POLICY_TARGET_RING), 0);
	cr_assert_eq(iour_policy__set_prog(p, IOUR_OP_CONNECT, allow, 2, 24), 0);
	rc = iour_policy__plan(p, &o, &plan);
	if (rc == 0) {
		r = iour_plan__report(plan);
		for (int i = 0; i < iour_report__decision_cnt(r); i++) {
			cr_assert_eq(iour_report__decision(r, (size_t)i, &d), 0);
			n += d.opcode == IOUR_OP_CONNECT && d.reason == IOUR_REASON_NO_PAYLOAD;
		}
	}
	iour_plan__free(plan);
	iour_policy__free(p);
	return rc ? rc : n;
}

/* What planning makes of the two spellings of a size: the 1.0 field
 * always decides for its opcode (code written against 1.0 edits only it),
 * and a size for an opcode the schema gives no payload is refused with
 * -EINVAL (include/iouring_restrict/probe.h, pdu_size). */
Test(kernel_describe, payload_array_read_by_planning)
{
	const struct iour_features full = describe(IOUR_KVER(7, 2));
	struct iour_features f;

	cr_expect_eq(connect_no_payload(&full), 0, "7.2 fills CONNECT's 24 bytes");
	f = describe(IOUR_KVER(7, 0));
	cr_expect_eq(connect_no_payload(&f), 1, "7.0 has no CONNECT payload");
	/* Built by hand, 1.0 style: named field only (array 0, named 24). */
	f = full;
	f.pdu_size[IOUR_OP_CONNECT] = 0;
	cr_expect_eq(connect_no_payload(&f), 0, "the named field read");
	f.pdu_connect = 0;
	cr_expect_eq(connect_no_payload(&f), 1, "both 0: no payload");
	/* The same with a 1.0-sized struct. */
	f = full;
	f.sz = offsetof(struct iour_features, pdu_size);
	f.pdu_connect = 0;
	cr_expect_eq(connect_no_payload(&f), 1, "old size: the named field decides");
	/* Disagreements: the named field decides, as it did in 1.0. */
	f = full;
	f.pdu_connect = 0;
	cr_expect_eq(connect_no_payload(&f), 1, "array 24, named 0: no payload");
	f = full;
	f.pdu_socket = 300;
	cr_expect_eq(connect_no_payload(&f), -EINVAL, "a named size above 255");
	/* Sizes for opcodes without a payload row. */
	for (uint32_t op = 0; op < 256; op++) {
		if (iour_payload_find(op) >= 0)
			continue;
		f = full;
		f.pdu_size[op] = 8;
		cr_expect_eq(connect_no_payload(&f), -EINVAL, "a payload for opcode %u", op);
		/* Not read when the struct is a 1.0 one. */
		f.sz = offsetof(struct iour_features, pdu_size);
		cr_expect_eq(connect_no_payload(&f), 0, "old size, opcode %u", op);
	}
}

/* The kernel generations (probe.h) against the oracle, against each other
 * and against iour_kernel_describe(); every documented error. */
Test(kernel_describe, generations_and_level_kernels)
{
	static const uint32_t reps[] = ORACLE_LEVEL_KERNELS;
	const struct {
		uint32_t gen, kver;
	} gens[] = {
		{ IOUR_KGEN_NEWEST, ORACLE_KVER_NEWEST },
		{ IOUR_KGEN_RING_RESTRICTIONS, ORACLE_KVER_RING_RESTRICTIONS },
		{ IOUR_KGEN_BLIND_REGISTER, ORACLE_KVER_BLIND_REGISTER },
		{ IOUR_KGEN_SPLIT_GATES, ORACLE_KVER_SPLIT_GATES },
	};
	const uint32_t newest = ORACLE_KVER_NEWEST;
	struct iour_features f;
	uint32_t l, kv;

	for (size_t i = 0; i < sizeof(gens) / sizeof(gens[0]); i++)
		cr_assert_eq(iour_kernel_generation(gens[i].gen), (int)gens[i].kver, "gen %u",
			     gens[i].gen);
	cr_assert_eq(iour_kernel_generation(IOUR_KGEN_SPLIT_GATES + 1), -EINVAL);
	cr_assert_eq(iour_kernel_generation(UINT32_MAX), -EINVAL);

	cr_assert_eq(sizeof(reps) / sizeof(reps[0]), IOUR_LEVEL_MAX + 1);
	for (l = 0; l <= IOUR_LEVEL_MAX; l++) {
		cr_assert_eq(iour_level_kernel(l), (int)reps[l], "level %u", l);
		/* the representative kernel is of its level */
		if (l > IOUR_LEVEL_NONE)
			cr_assert_eq(describe(reps[l]).level, l, "level %u", l);
	}
	cr_assert_eq(iour_level_kernel(IOUR_LEVEL_MAX + 1), -EINVAL);
	cr_assert_eq(iour_level_kernel(UINT32_MAX), -EINVAL);

	/* the newest kernel: every opcode the library knows, the top level */
	cr_assert_eq(iour_opcode_last(newest), IOUR_OP__COUNT);
	cr_assert_eq(iour_register_op_last(newest), IOUR_REGISTER__COUNT);
	cr_assert_eq(describe(newest).level, IOUR_LEVEL_MAX);

	/* split gates: from 7.0 on, the patch byte ignored, as described */
	cr_assert_eq(iour_kernel_split_gates(0), 0);
	cr_assert_eq(iour_kernel_split_gates(IOUR_KVER(6, 19) | 0xff), 0);
	cr_assert_eq(iour_kernel_split_gates(ORACLE_KVER_SPLIT_GATES), 1);
	cr_assert_eq(iour_kernel_split_gates(ORACLE_KVER_SPLIT_GATES | 3), 1);
	cr_assert_eq(iour_kernel_split_gates(UINT32_MAX), 1);
	for (kv = IOUR_KVER(5, 0); kv <= IOUR_KVER(7, 4); kv += IOUR_KVER(0, 1)) {
		if ((kv >> 8 & 0xff) > 19) {
			kv = IOUR_KVER((kv >> 16) + 1, 0) - IOUR_KVER(0, 1);
			continue;
		}
		f = describe(kv);
		cr_assert_eq((uint32_t)iour_kernel_split_gates(kv), f.split_gates, "%u.%u",
			     kv >> 16, kv >> 8 & 0xff);
	}
}
