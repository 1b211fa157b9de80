/* SPDX-License-Identifier: MIT */
/*
 * iour_kernel_describe(): a kernel version described from the library's
 * tables (doc/kernel.md's ladder, lib/schema.def's payloads), checked
 * against the ladder itself, against the probe of the emulated kernel of
 * tests/common/emukernel (an independent implementation of doc/kernel.md:
 * those tests say "emulated"), and for bad input and output sizes.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "emukernel.h"
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
