/* SPDX-License-Identifier: MIT */
/*
 * The probe and ring apply against the emulated kernel of
 * tests/common/emukernel (an independent implementation of the same
 * doc/kernel.md rules): for each emulated generation and task state,
 * the probe must find exactly the generation's features and level, and
 * ring apply must register the entries that give the set one meaning under
 * that generation's gate semantics.  All "emulated".
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "emukernel.h"
#include "iouring_restrict/iouring_restrict.h"
#include "probe/probe_answers.h"
#include "ring_util.h"

static struct iour_features probe_refresh(void)
{
	IOUR_OPTS(iour_probe_opts, o, .flags = IOUR_PROBE_REFRESH);
	struct iour_features f = { .sz = sizeof(f) };
	int r = iour_probe(&o, &f);

	cr_assert_eq(r, 0, "iour_probe: %s", iour_errname(r));
	return f;
}

struct gen_case {
	const char *name;
	struct emu_config cfg;
	uint32_t level, task, bpf_ring, bpf_task;
	uint32_t pdu_socket, pdu_connect;
};

Test(probe_emulated, emulated_generations_end_to_end)
{
	enum { Y = IOUR_AVAIL_YES, N = IOUR_AVAIL_NO, P = IOUR_AVAIL_NO_PRIV };
	const struct gen_case cases[] = {
		{ "6.1", { .gen = EMU_GEN_6_1 }, 2, N, N, N, 0, 0 },
		{ "6.18", { .gen = EMU_GEN_6_18 }, 3, N, N, N, 0, 0 },
		{ "7.0 with no_new_privs", { .gen = EMU_GEN_7_0, .no_new_privs = true }, 4, Y, Y, Y, 12, 0 },
		{ "7.0 without privileges", { .gen = EMU_GEN_7_0 }, 4, P, Y, P, 12, 0 },
		{ "7.0 with CAP_SYS_ADMIN", { .gen = EMU_GEN_7_0, .cap_sys_admin = true }, 4, Y, Y, Y, 12, 0 },
		{ "7.0 CONFIG_IO_URING_BPF=n", { .gen = EMU_GEN_7_0, .no_new_privs = true, .no_bpf_config = true },
		  3, Y, N, N, 0, 0 },
		{ "7.0 CONFIG_NET=n", { .gen = EMU_GEN_7_0, .no_new_privs = true, .no_net = true },
		  3, Y, Y, Y, 0, 0 },
		{ "7.2 with no_new_privs", { .gen = EMU_GEN_7_2, .no_new_privs = true }, 5, Y, Y, Y, 12, 24 },
		{ "7.2 io_uring_disabled=2", { .gen = EMU_GEN_7_2, .setup_errno = EPERM }, 0, N, N, N, 0, 0 },
	};
	int n = 0;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++, n++) {
		const struct gen_case *c = &cases[i];
		struct emu *e = NULL;
		struct iour_features f;

		cr_assert_eq(emu_new(&c->cfg, &e), 0);
		emu_install(e);
		f = probe_refresh();
		emu_uninstall();

		cr_expect_eq(f.level, c->level, "emulated %s: level %u", c->name, f.level);
		cr_expect_eq(f.kernel_level, c->level, "emulated %s", c->name);
		cr_expect_eq(f.task_restrictions, c->task, "emulated %s: task %u", c->name,
			     f.task_restrictions);
		cr_expect_eq(f.bpf_ring, c->bpf_ring, "emulated %s: bpf_ring %u", c->name, f.bpf_ring);
		cr_expect_eq(f.bpf_task, c->bpf_task, "emulated %s: bpf_task %u", c->name, f.bpf_task);
		cr_expect_eq(f.pdu_socket, c->pdu_socket, "emulated %s: pdu_socket %u", c->name,
			     f.pdu_socket);
		cr_expect_eq(f.pdu_connect, c->pdu_connect, "emulated %s", c->name);
		/* Every opcode's payload (doc/kernel.md 4.3), the same sizes. */
		for (uint32_t op = 0; op < 256; op++) {
			uint32_t want = op == IOUR_OP_SOCKET ? c->pdu_socket
					: op == IOUR_OP_CONNECT ? c->pdu_connect
					: op == IOUR_OP_OPENAT || op == IOUR_OP_OPENAT2
						? (c->bpf_ring == Y ? 24 : 0)
						: 0;

			cr_expect_eq(f.pdu_size[op], want, "emulated %s: pdu_size[%u] %u", c->name,
				     op, f.pdu_size[op]);
		}
		cr_expect_eq(f.flags & (IOUR_FEATURES_MISMATCH | IOUR_FEATURES_CHILD_DIED), 0,
			     "emulated %s: flags %#llx", c->name, (unsigned long long)f.flags);
		if (c->level >= IOUR_LEVEL_RING) {
			cr_expect_eq(f.op_last, emu_op_last(e), "emulated %s: op_last %u", c->name,
				     f.op_last);
			cr_expect_eq(f.reg_last, emu_reg_last(e), "emulated %s: reg_last %u (source %u)",
				     c->name, f.reg_last, f.limits_source);
			cr_expect_eq(f.limits_source,
				     c->level >= IOUR_LEVEL_QUERY ? IOUR_LIMITS_QUERY : IOUR_LIMITS_PROBE,
				     "emulated %s", c->name);
			cr_expect_eq(f.split_gates, c->cfg.gen >= EMU_GEN_7_0, "emulated %s", c->name);
			cr_expect_eq(f.blind_register, c->cfg.gen == EMU_GEN_6_1 ? N : Y, "emulated %s",
				     c->name);
			cr_expect_eq(f.nr_supported_ops, emu_op_last(e), "emulated %s", c->name);
		} else {
			cr_expect_eq(f.setup_err, -EPERM, "emulated %s", c->name);
		}
		if (c->level >= IOUR_LEVEL_TASK_BPF) {
			cr_expect_eq(f.pdu_openat, 24, "emulated %s", c->name);
			cr_expect_eq(f.pdu_openat2, 24, "emulated %s", c->name);
		}
		emu_free(e);
	}
	cr_log_info("%d emulated kernels probed end to end", n);
}

Test(probe_emulated, emulated_task_already_restricted)
{
	struct emu_config cfg = { .gen = EMU_GEN_7_0, .no_new_privs = true };
	/* header plus two entries, without a struct holding a flexible array */
	uint32_t buf[(sizeof(struct kio_task_restriction) + 2 * sizeof(struct kio_restriction)) / 4];
	struct kio_task_restriction *h = (struct kio_task_restriction *)buf;
	struct kio_restriction *r = (struct kio_restriction *)(h + 1);
	struct emu *e = NULL;
	struct iour_features f;
	int fd = 5;

	cr_assert_eq(emu_new(&cfg, &e), 0);
	emu_install(e);
	/* The task registers classic restrictions (NOP, REGISTER_FILES). */
	memset(buf, 0, sizeof(buf));
	h->nr_res = 2;
	r[0].opcode = KIO_RESTRICTION_SQE_OP;
	r[0].sqe_op = IOUR_OP_NOP;
	r[1].opcode = KIO_RESTRICTION_REGISTER_OP;
	r[1].register_op = 2;
	cr_assert_eq(iour__register(-1, KIO_REGISTER_RESTRICTIONS, buf, 1), 0);

	f = probe_refresh();
	cr_assert_eq(f.task_restrictions, IOUR_AVAIL_RESTRICTED);
	cr_assert_eq(f.task_restrictions_err, -EPERM);
	cr_assert_eq(f.ring_restrictions, IOUR_AVAIL_RESTRICTED, "new rings inherit the task set");
	cr_assert_eq(f.ring_register_err, -EBUSY);
	cr_assert_eq(f.enable_rings_err, -EACCES, "inherited register gate");
	cr_assert_eq(f.level, IOUR_LEVEL_TASK_BPF);
	cr_assert_eq(f.flags & IOUR_FEATURES_MISMATCH, 0);

	/* A ring-level set cannot be combined with it: -EBUSY, ring closed. */
	uint32_t op = IORING_OP_NOP;
	struct iour_ruleset *rs = rs_make(&op, 1, 0, 0, NULL, -1);
	cr_assert_eq(iour_ring_create(8, NULL, rs, NULL, &fd), -EBUSY);
	cr_assert_eq(fd, -1);
	emu_uninstall();
	iour_ruleset__free(rs);
	emu_free(e);
}

/* Apply a set on an emulated kernel and return the ring's state. */
static struct emu_state apply_on(enum emu_gen gen, const struct iour_ruleset *rs,
				 struct iour_ring_report *rep)
{
	struct emu_config cfg = { .gen = gen, .no_new_privs = true };
	IOUR_OPTS(iour_ring_create_opts, o, .report = rep);
	struct emu *e = NULL;
	struct emu_state st;
	int fd = -1, r;

	cr_assert_eq(emu_new(&cfg, &e), 0);
	emu_install(e);
	probe_refresh();
	r = iour_ring_create(8, NULL, rs, &o, &fd);
	cr_assert_eq(r, 0, "emulated %s: %s", emu_gen_name(gen), iour_errname(r));
	cr_assert_eq(emu_ring_state(e, fd, &st), 0);
	emu_uninstall();
	emu_free(e);
	return st;
}

static unsigned bits(const uint64_t w[4])
{
	return (unsigned)(__builtin_popcountll(w[0]) + __builtin_popcountll(w[1]) +
			  __builtin_popcountll(w[2]) + __builtin_popcountll(w[3]));
}

Test(probe_emulated, emulated_ring_apply_uses_the_generations_gates)
{
	uint32_t op = IORING_OP_NOP, reg = 2;
	struct iour_ring_report rep = { .sz = sizeof(rep) };
	struct iour_ruleset *rs;
	struct emu_state st;

	/* SQE side only.  Coupled (6.x): the register side is listed in full;
	 * split (7.x): it is left out, so register ops stay ungated. */
	rs = rs_make(&op, 1, 0, 0, NULL, -1);
	st = apply_on(EMU_GEN_6_1, rs, &rep);
	cr_assert(!st.disabled && st.sqe_gate && st.reg_gate);
	cr_assert_eq(bits(st.reg_ops), 26);
	cr_assert_eq(rep.split_gates, 0);
	st = apply_on(EMU_GEN_6_18, rs, &rep);
	cr_assert(st.sqe_gate && st.reg_gate);
	cr_assert_eq(bits(st.reg_ops), 36);
	st = apply_on(EMU_GEN_7_0, rs, &rep);
	cr_assert(st.sqe_gate && !st.reg_gate, "7.0: register ops must stay open");
	cr_assert_eq(rep.split_gates, 1);
	cr_assert_eq(rep.reg_last, 38);
	cr_assert_eq(bits(st.sqe_ops), 1);
	iour_ruleset__free(rs);

	/* Register side an empty allow-list, SQE side open.  Split: only the
	 * ENABLE_RINGS sentinel, so the register gate is on; SQE side open. */
	rs = rs_make(NULL, -1, 0x7f, 0, NULL, 0);
	st = apply_on(EMU_GEN_7_2, rs, &rep);
	cr_assert(!st.sqe_gate && st.reg_gate);
	cr_assert_eq(bits(st.reg_ops), 1);
	cr_assert(st.reg_ops[0] & (1ULL << KIO_REGISTER_ENABLE_RINGS));
	st = apply_on(EMU_GEN_6_1, rs, &rep);
	cr_assert(st.sqe_gate && st.reg_gate);
	cr_assert_eq(bits(st.sqe_ops), 49, "6.1: the SQE side listed in full");
	cr_assert_eq(st.flags_allowed, 0x7f);
	cr_assert_eq(bits(st.reg_ops), 0);
	iour_ruleset__free(rs);

	/* Clamping per generation: register op 37 (BPF_FILTER) exists on 7.x
	 * only; opcode 64 from 6.19. */
	uint32_t ops[] = { IORING_OP_NOP, 64 }, regs[] = { reg, 37 };
	rs = rs_make(ops, 2, 0, 0, regs, 2);
	st = apply_on(EMU_GEN_6_18, rs, &rep);
	cr_assert_eq(rep.n_clamped_sqe_ops, 1);
	cr_assert_eq(rep.n_clamped_register_ops, 1);
	cr_assert_eq(bits(st.sqe_ops), 1);
	cr_assert_eq(bits(st.reg_ops), 1);
	st = apply_on(EMU_GEN_7_0, rs, &rep);
	cr_assert_eq(rep.n_clamped_sqe_ops + rep.n_clamped_register_ops, 0);
	cr_assert_eq(bits(st.sqe_ops), 2);
	cr_assert_eq(bits(st.reg_ops), 2);
	st = apply_on(EMU_GEN_6_1, rs, &rep);
	cr_assert_eq(rep.n_clamped_sqe_ops, 1);
	cr_assert_eq(rep.n_clamped_register_ops, 1);
	iour_ruleset__free(rs);
	cr_log_info("ring apply checked on emulated 6.1, 6.18, 7.0 and 7.2 kernels");
}
