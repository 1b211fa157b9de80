/* SPDX-License-Identifier: MIT */
/*
 * Policies on emulated Linux 7.0 / 7.2 kernels (the Linux 7.x paths cannot
 * run on the development kernel): plans compared byte for byte with the
 * structures and orders of doc/kernel.md, the executor run against
 * the emulated kernel behind the syscall seam (no_new_privs rules, payload
 * size negotiation and write-back, stacking on inherited restrictions),
 * and "submit this request" verdicts, computed by the real kernel's BPF
 * engine inside the emulator, compared with the policy's meaning.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emukernel.h"
#include "iouring_restrict/iouring_restrict.h"
#include "plan/planner.h"
#include "base/sys.h"
#include "uring_avail.h"

#define OP_NOP 0
#define OP_CONNECT 16
#define OP_OPENAT 18
#define OP_READ 22
#define OP_WRITE 23
#define OP_SOCKET 45
#define SQE_IO_LINK 0x04
#define SQE_ASYNC 0x10

/* SOCKET: allow AF_INET (2) only. */
static const struct iour_insn inet_only[] = {
	{ 0x20, 0, 0, 16 }, /* ld socket.family */
	{ 0x15, 0, 1, 2 },  /* jeq #AF_INET */
	{ 0x06, 0, 0, 1 },
	{ 0x06, 0, 0, 0 },
};
/* SOCKET: allow SOCK_STREAM (1) only, whatever the type flags. */
static const struct iour_insn stream_only[] = {
	{ 0x20, 0, 0, 20 }, /* ld socket.type */
	{ 0x54, 0, 0, 0xf },/* and #0xf */
	{ 0x15, 0, 1, 1 },  /* jeq #SOCK_STREAM */
	{ 0x06, 0, 0, 1 },
	{ 0x06, 0, 0, 0 },
};
/* OPENAT: deny O_CREAT (0x40); reads open.flags (low word on LE). */
static const struct iour_insn no_creat[] = {
	{ 0x20, 0, 0, 16 }, /* ld open.flags.lo */
	{ 0x45, 1, 0, 0x40 },/* jset #O_CREAT */
	{ 0x06, 0, 0, 1 },
	{ 0x06, 0, 0, 0 },
};
/* CONNECT: AF_INET only. */
static const struct iour_insn connect_inet[] = {
	{ 0x20, 0, 0, 16 }, /* ld connect.family */
	{ 0x15, 0, 1, 2 },
	{ 0x06, 0, 0, 1 },
	{ 0x06, 0, 0, 0 },
};
/* SOCKET: allow user_data < 100 (reads no payload). */
static const struct iour_insn small_udata[] = {
	{ 0x20, 0, 0, 0 },  /* ld user_data.lo */
	{ 0x35, 1, 0, 100 },/* jge #100 */
	{ 0x06, 0, 0, 1 },
	{ 0x06, 0, 0, 0 },
};

static struct iour_ruleset *rs_of(const uint32_t *ops, size_t n, int reg_op, uint32_t flags)
{
	struct iour_ruleset *rs;
	size_t i;

	cr_assert_eq(iour_ruleset__new(NULL, &rs), 0);
	cr_assert_eq(iour_ruleset__deny_all_sqe_ops(rs), 0);
	for (i = 0; i < n; i++)
		cr_assert_eq(iour_ruleset__allow_sqe_op(rs, ops[i]), 0);
	if (reg_op >= 0)
		cr_assert_eq(iour_ruleset__allow_register_op(rs, (uint32_t)reg_op), 0);
	cr_assert_eq(iour_ruleset__set_sqe_flags(rs, flags, 0), 0);
	return rs;
}

/* P1: NOP, OPENAT (no O_CREAT), READ, SOCKET (AF_INET); REGISTER_FILES;
 * the IO_LINK flag. */
static struct iour_policy *policy_p1(uint32_t target)
{
	static const uint32_t ops[] = { OP_NOP, OP_OPENAT, OP_READ, OP_SOCKET };
	struct iour_ruleset *rs = rs_of(ops, 4, 2, SQE_IO_LINK);
	struct iour_policy *p;

	cr_assert_eq(iour_policy__new(NULL, &p), 0);
	cr_assert_eq(iour_policy__set_ruleset(p, rs), 0);
	iour_ruleset__free(rs);
	cr_assert_eq(iour_policy__set_prog(p, OP_SOCKET, inet_only, 4, 12), 0);
	cr_assert_eq(iour_policy__set_prog(p, OP_OPENAT, no_creat, 4, 24), 0);
	cr_assert_eq(iour_policy__set_attr(p, IOUR_POLICY_ATTR_TARGET, target), 0);
	return p;
}

/* P2: only conditional opcodes (OPENAT, SOCKET): no classic set needed
 * beyond the list, DENY_REST on the last filter. */
static struct iour_policy *policy_p2(uint32_t target)
{
	struct iour_policy *p;

	cr_assert_eq(iour_policy__new(NULL, &p), 0);
	cr_assert_eq(iour_policy__set_prog(p, OP_SOCKET, inet_only, 4, 12), 0);
	cr_assert_eq(iour_policy__set_prog(p, OP_OPENAT, no_creat, 4, 24), 0);
	cr_assert_eq(iour_policy__set_attr(p, IOUR_POLICY_ATTR_TARGET, target), 0);
	return p;
}

static struct iour_plan *plan_level(const struct iour_policy *p, uint32_t level)
{
	IOUR_OPTS(iour_plan_opts, o, .flags = IOUR_PLAN_FORCE_LEVEL, .level = level);
	struct iour_plan *pl = NULL;

	cr_assert_eq(iour_policy__plan(p, &o, &pl), 0);
	return pl;
}

static struct iour_plan *plan_features(const struct iour_policy *p,
				       const struct iour_features *f)
{
	IOUR_OPTS(iour_plan_opts, o, .features = f);
	struct iour_plan *pl = NULL;
	int rc = iour_policy__plan(p, &o, &pl);

	cr_assert_eq(rc, 0, "plan: %s", iour_errname(rc));
	return pl;
}

static struct iour_plan_step step_of(const struct iour_plan *pl, size_t i)
{
	struct iour_plan_step s = { .sz = sizeof(s) };

	cr_assert_eq(iour_plan__step(pl, i, &s), 0);
	return s;
}

static void expect_arg(const struct iour_plan *pl, size_t i, const void *want, size_t len,
		       const char *what)
{
	uint8_t buf[4096];
	size_t n = sizeof(buf);

	cr_assert_eq(iour_plan__step_arg(pl, i, buf, &n), 0);
	cr_expect_eq(n, len, "emulated: %s: %zu bytes, expected %zu", what, n, len);
	cr_expect(n == len && memcmp(buf, want, len) == 0, "emulated: %s: bytes differ", what);
}

/* The bytes of IORING_REGISTER_RESTRICTIONS: optional task header, then
 * the entries (kind, arg) with zero reserved fields. */
static size_t entries_bytes(uint8_t *out, bool task, const uint16_t (*e)[2], size_t n)
{
	struct kio_task_restriction h;
	struct kio_restriction r;
	size_t off = 0, i;

	if (task) {
		memset(&h, 0, sizeof(h));
		h.nr_res = (uint16_t)n;
		memcpy(out, &h, sizeof(h));
		off = sizeof(h);
	}
	for (i = 0; i < n; i++) {
		memset(&r, 0, sizeof(r));
		r.opcode = e[i][0];
		r.sqe_op = (uint8_t)e[i][1];
		memcpy(out + off, &r, sizeof(r));
		off += sizeof(r);
	}
	return off;
}

static void bpf_bytes(struct kio_bpf *b, uint32_t opcode, uint32_t flags, uint32_t len,
		      uint8_t pdu)
{
	memset(b, 0, sizeof(*b));
	b->cmd_type = 1;
	b->filter.opcode = opcode;
	b->filter.flags = flags;
	b->filter.filter_len = len;
	b->filter.pdu_size = pdu;
}

static void expect_filter_step(const struct iour_plan *pl, size_t i, uint32_t side,
			       uint32_t opcode, uint32_t flags, uint8_t pdu,
			       const struct iour_insn *prog, size_t cnt)
{
	struct iour_plan_step s = step_of(pl, i);
	struct iour_insn got[64];
	struct kio_bpf b;
	size_t n = 64;
	char what[64];

	snprintf(what, sizeof(what), "filter step %zu (opcode %u)", i, opcode);
	cr_expect_eq(s.op, IOUR_STEP_BPF_FILTER, "emulated: %s", what);
	cr_expect_eq(s.side, side, "emulated: %s", what);
	cr_expect_eq(s.call_op, 37);
	cr_expect_eq(s.nr_args, 1);
	cr_expect_eq(s.opcode, opcode);
	bpf_bytes(&b, opcode, flags, (uint32_t)cnt, pdu);
	expect_arg(pl, i, &b, sizeof(b), what);
	cr_assert_eq(iour_plan__step_insns(pl, i, got, &n), 0);
	cr_expect_eq(n, cnt);
	cr_expect(memcmp(got, prog, cnt * sizeof(*prog)) == 0, "emulated: %s: program", what);
}

Test(policy_emulated, emulated_7_0_task_plan_bytes)
{
	struct iour_policy *p = policy_p1(IOUR_POLICY_TARGET_TASK);
	struct iour_plan *pl = plan_level(p, 4);
	static const uint16_t ents[][2] = {
		{ 1, OP_NOP }, { 1, OP_OPENAT }, { 1, OP_READ }, { 1, OP_SOCKET },
		{ 2, SQE_IO_LINK }, { 0, 2 },
	};
	uint8_t want[256];
	size_t n = entries_bytes(want, true, ents, 6);
	struct iour_plan_step s;
	struct iour_plan_info info = { .sz = sizeof(info) };

	/* 4 steps, and a fifth: 7.0's task set does not gate ring-less
	 * register calls, so a seccomp guard denies them (doc/kernel.md 3). */
	cr_assert_eq(iour_plan__step_cnt(pl), 5);
	cr_assert_eq(iour_plan__info(pl, &info), 0);
	cr_expect_eq(info.task_steps, 5);
	cr_expect_eq(info.ring_steps, 0);
	cr_expect_eq(info.split_gates, 1);
	cr_expect_eq(info.op_last, 65);
	cr_expect_eq(info.reg_last, 38);
	cr_expect(info.flags & IOUR_PLAN_INFO_FORCED);
	/* 1. no_new_privs first. */
	s = step_of(pl, 0);
	cr_expect_eq(s.op, IOUR_STEP_SET_NNP);
	cr_expect_eq(s.side, IOUR_STEP_TASK);
	cr_expect_eq(s.call_op, 38);
	cr_expect_eq(s.arg_len, 0);
	/* 2. the classic task set: header + entries, nr_args 1. */
	s = step_of(pl, 1);
	cr_expect_eq(s.op, IOUR_STEP_RESTRICTIONS);
	cr_expect_eq(s.side, IOUR_STEP_TASK);
	cr_expect_eq(s.call_op, 11);
	cr_expect_eq(s.nr_args, 1, "emulated: task set nr_args is 1, not the count");
	cr_expect_eq(s.entries, 6);
	expect_arg(pl, 1, want, n, "task restriction header + entries");
	/* 3-4. filters in opcode order; no DENY_REST (NOP and READ are
	 * allowed without a filter, DENY_REST would close them). */
	expect_filter_step(pl, 2, IOUR_STEP_TASK, OP_OPENAT, KIO_BPF_FILTER_SZ_STRICT, 24,
			   no_creat, 4);
	expect_filter_step(pl, 3, IOUR_STEP_TASK, OP_SOCKET, KIO_BPF_FILTER_SZ_STRICT, 12,
			   inet_only, 4);
	/* 5. the ring-less guard, after the plan's own fd -1 registrations. */
	s = step_of(pl, 4);
	cr_expect_eq(s.op, IOUR_STEP_COMPANION);
	cr_expect_eq(s.side, IOUR_STEP_TASK);
	cr_expect_eq(iour_report__status(iour_plan__report(pl)), IOUR_STATUS_FULLY);
	cr_expect_eq(iour_report__mechanism(iour_plan__report(pl)), IOUR_MECH_TASK);
	iour_plan__free(pl);
	iour_policy__free(p);
}

Test(policy_emulated, emulated_7_0_deny_rest_on_last_filter_only)
{
	struct iour_policy *p = policy_p2(IOUR_POLICY_TARGET_TASK);
	struct iour_plan *pl = plan_level(p, 4);
	static const uint16_t ents[][2] = { { 1, OP_OPENAT }, { 1, OP_SOCKET }, { 2, 0x7f } };
	uint8_t want[256];
	size_t n = entries_bytes(want, true, ents, 3);

	cr_assert_eq(iour_plan__step_cnt(pl), 4);
	cr_expect_eq(step_of(pl, 0).op, IOUR_STEP_SET_NNP);
	cr_expect_eq(step_of(pl, 1).op, IOUR_STEP_RESTRICTIONS, "classic before filters");
	expect_arg(pl, 1, want, n, "task set of a filter-only policy");
	expect_filter_step(pl, 2, IOUR_STEP_TASK, OP_OPENAT, KIO_BPF_FILTER_SZ_STRICT, 24,
			   no_creat, 4);
	expect_filter_step(pl, 3, IOUR_STEP_TASK, OP_SOCKET,
			   KIO_BPF_FILTER_SZ_STRICT | KIO_BPF_FILTER_DENY_REST, 12, inet_only, 4);
	iour_plan__free(pl);

	/* The same on a ring: entries without header, nr_args = count,
	 * filters, then ENABLE_RINGS last. */
	cr_assert_eq(iour_policy__set_attr(p, IOUR_POLICY_ATTR_TARGET, IOUR_POLICY_TARGET_RING), 0);
	pl = plan_level(p, 4);
	n = entries_bytes(want, false, ents, 3);
	cr_assert_eq(iour_plan__step_cnt(pl), 4);
	cr_expect_eq(step_of(pl, 0).op, IOUR_STEP_RESTRICTIONS);
	cr_expect_eq(step_of(pl, 0).side, IOUR_STEP_RING);
	cr_expect_eq(step_of(pl, 0).nr_args, 3);
	expect_arg(pl, 0, want, n, "ring entries");
	expect_filter_step(pl, 1, IOUR_STEP_RING, OP_OPENAT, KIO_BPF_FILTER_SZ_STRICT, 24,
			   no_creat, 4);
	expect_filter_step(pl, 2, IOUR_STEP_RING, OP_SOCKET,
			   KIO_BPF_FILTER_SZ_STRICT | KIO_BPF_FILTER_DENY_REST, 12, inet_only, 4);
	cr_expect_eq(step_of(pl, 3).op, IOUR_STEP_ENABLE_RINGS);
	cr_expect_eq(step_of(pl, 3).call_op, 12);
	cr_expect_eq(step_of(pl, 3).arg_len, 0);
	cr_expect_eq(iour_report__mechanism(iour_plan__report(pl)),
		     IOUR_MECH_RING_DISABLED | IOUR_MECH_RING);
	iour_plan__free(pl);
	iour_policy__free(p);
}

/* 7.0 split gates: restricting register ops to nothing needs the sentinel;
 * restricting nothing on the register side emits no register entry. */
Test(policy_emulated, emulated_7_0_sentinel_and_split)
{
	struct iour_policy *p;
	struct iour_ruleset *rs;
	struct iour_plan *pl;
	static const uint16_t sentinel[][2] = { { 1, OP_NOP }, { 2, 0 }, { 0, 12 } };
	uint8_t want[256];
	size_t n;

	cr_assert_eq(iour_ruleset__new(NULL, &rs), 0);
	cr_assert_eq(iour_ruleset__allow_sqe_op(rs, OP_NOP), 0);
	cr_assert_eq(iour_ruleset__set_sqe_flags(rs, 0, 0), 0);
	cr_assert_eq(iour_ruleset__deny_all_register_ops(rs), 0);
	cr_assert_eq(iour_policy__new(NULL, &p), 0);
	cr_assert_eq(iour_policy__set_ruleset(p, rs), 0);
	pl = plan_level(p, 4);
	n = entries_bytes(want, true, sentinel, 3);
	expect_arg(pl, 1, want, n, "sentinel REGISTER_OP ENABLE_RINGS");
	iour_plan__free(pl);
	/* Clamping: an opcode the 6.1 kernel lacks is left out, and said. */
	cr_assert_eq(iour_ruleset__allow_sqe_op(rs, 60), 0);
	cr_assert_eq(iour_policy__set_ruleset(p, rs), 0);
	cr_assert_eq(iour_policy__set_attr(p, IOUR_POLICY_ATTR_TARGET, IOUR_POLICY_TARGET_RING), 0);
	pl = plan_level(p, 2);
	{
		const struct iour_report *r = iour_plan__report(pl);
		struct iour_decision d = { .sz = sizeof(d) };
		int i, clamped = 0;

		for (i = 0; i < iour_report__decision_cnt(r); i++) {
			cr_assert_eq(iour_report__decision(r, (size_t)i, &d), 0);
			if (d.kind == IOUR_DECISION_CLAMPED && d.opcode == 60)
				clamped++;
		}
		cr_expect_eq(clamped, 1);
		cr_expect_eq(iour_report__status(r), IOUR_STATUS_FULLY,
			     "clamping changes nothing the kernel can run");
	}
	iour_plan__free(pl);
	iour_ruleset__free(rs);
	iour_policy__free(p);
}

/* CONNECT filters need Linux 7.2's payload. */
Test(policy_emulated, emulated_7_2_connect_payload)
{
	static const uint32_t ops[] = { OP_NOP, OP_CONNECT };
	struct iour_ruleset *rs = rs_of(ops, 2, -1, 0);
	struct iour_policy *p;
	struct iour_plan *pl;
	struct iour_decision d = { .sz = sizeof(d) };
	const struct iour_report *r;
	int i, found = 0;

	cr_assert_eq(iour_policy__new(NULL, &p), 0);
	cr_assert_eq(iour_policy__set_ruleset(p, rs), 0);
	cr_assert_eq(iour_policy__set_prog(p, OP_CONNECT, connect_inet, 4, 24), 0);
	/* 7.2: a real filter, SZ_STRICT with 24 bytes. */
	pl = plan_level(p, 5);
	cr_assert_eq(iour_plan__step_cnt(pl), 3);
	expect_filter_step(pl, 2, IOUR_STEP_TASK, OP_CONNECT, KIO_BPF_FILTER_SZ_STRICT, 24,
			   connect_inet, 4);
	cr_expect_eq(iour_report__status(iour_plan__report(pl)), IOUR_STATUS_FULLY);
	iour_plan__free(pl);
	/* 7.0: K = 0 for CONNECT: closed by default, reported. */
	pl = plan_level(p, 4);
	r = iour_plan__report(pl);
	cr_assert_eq(iour_plan__step_cnt(pl), 2, "no CONNECT filter step on 7.0");
	for (i = 0; i < iour_report__decision_cnt(r); i++) {
		cr_assert_eq(iour_report__decision(r, (size_t)i, &d), 0);
		if (d.opcode == OP_CONNECT && d.reason == IOUR_REASON_NO_PAYLOAD &&
		    d.kind == IOUR_DECISION_TIGHTENED)
			found++;
	}
	cr_expect_eq(found, 1);
	cr_expect_eq(iour_report__status(r), IOUR_STATUS_PARTIALLY);
	cr_expect_eq(iour_report__flags(r) & (IOUR_REPORT_TIGHTENED | IOUR_REPORT_LOOSENED),
		     IOUR_REPORT_TIGHTENED);
	{
		static const uint16_t ents[][2] = { { 1, OP_NOP }, { 2, 0 } };
		uint8_t want[64];
		size_t n = entries_bytes(want, true, ents, 2);

		expect_arg(pl, 1, want, n, "CONNECT left out of the list (closed)");
	}
	iour_plan__free(pl);
	/* Open on request: CONNECT listed, no filter, loosened. */
	cr_assert_eq(iour_policy__set_attr(p, IOUR_POLICY_ATTR_NO_FILTER_FALLBACK,
					   IOUR_POLICY_FALLBACK_OPEN), 0);
	pl = plan_level(p, 4);
	{
		static const uint16_t ents[][2] = { { 1, OP_NOP }, { 1, OP_CONNECT }, { 2, 0 } };
		uint8_t want[64];
		size_t n = entries_bytes(want, true, ents, 3);

		expect_arg(pl, 1, want, n, "CONNECT listed (open)");
	}
	cr_expect_eq(iour_report__flags(iour_plan__report(pl)) & IOUR_REPORT_LOOSENED,
		     IOUR_REPORT_LOOSENED);
	iour_plan__free(pl);
	iour_ruleset__free(rs);
	iour_policy__free(p);
}

/* ---- the executor against the emulated kernel ---- */

static struct iour_features probe_emu(void)
{
	IOUR_OPTS(iour_probe_opts, o, .flags = IOUR_PROBE_NO_CACHE);
	struct iour_features f = { .sz = sizeof(f) };
	int r = iour_probe(&o, &f);

	cr_assert_eq(r, 0, "emulated probe: %s", iour_errname(r));
	return f;
}

/* The policy's own verdict for a (normalised) context: classic part, then
 * the opcode's program run by the library's simulator. */
static int intended(const struct iour_policy *p, const uint8_t ctx[40])
{
	uint32_t op = ctx[8], flags = ctx[9], allowed = 0x7f, req = 0, v;
	struct iour_sim_result res = { .sz = sizeof(res) };

	if (p->rs) {
		if (p->rs->sqe_restricted && !iour__bm_test(&p->rs->sqe_ops, op))
			return -EACCES;
		allowed = p->rs->flags_allowed;
		req = p->rs->flags_required;
	} else if (!p->progs[op] && p->attr[IOUR_POLICY_ATTR_DEFAULT] == IOUR_POLICY_DEFAULT_DENY) {
		return -EACCES;
	}
	if ((flags & req) != req || (flags & ~(allowed | req)))
		return -EACCES;
	if (!p->progs[op])
		return 0;
	if (p->progs[op]->kind != IOUR_PROG_FILTER)
		return p->progs[op]->kind == IOUR_PROG_ALWAYS_ALLOW ? 0 : -EACCES;
	cr_assert_eq(iour_cbpf_run(p->progs[op]->insns, p->progs[op]->cnt, ctx, 40, &res), 0);
	v = res.retval;
	return v ? 0 : -EACCES;
}

struct ctxset {
	uint8_t c[512][40];
	size_t n;
};

static void add_ctx(struct ctxset *s, const uint8_t *c, uint8_t k)
{
	cr_assert_lt(s->n, 512);
	memcpy(s->c[s->n], c, 40);
	s->c[s->n][10] = k; /* the kernel puts K there */
	memset(s->c[s->n] + 16 + k, 0, 24 - k);
	s->n++;
}

static void build_contexts(struct emu *e, struct ctxset *s)
{
	static const uint32_t fams[] = { 1, 2, 10 };
	static const uint32_t types[] = { 1, 2, 1 | 0x80000, 5 };
	static const uint64_t oflags[] = { 0, 1, 0x40 | 1, 0x200, 0x8000 };
	static const uint8_t sflags[] = { 0, SQE_IO_LINK, SQE_ASYNC, 0x01 };
	uint8_t c[40];
	size_t i, j;
	uint32_t op;

	s->n = 0;
	for (op = 0; op < emu_op_last(e); op++)
		for (j = 0; j < IOUR_ARRAY_SIZE(sflags); j++) {
			emu_ctx(c, op, sflags[j], op * 7 + j);
			add_ctx(s, c, emu_pdu_size(e, op));
		}
	for (i = 0; i < IOUR_ARRAY_SIZE(fams); i++)
		for (j = 0; j < IOUR_ARRAY_SIZE(types); j++) {
			emu_ctx_socket(c, fams[i], types[j], 0);
			add_ctx(s, c, emu_pdu_size(e, OP_SOCKET));
		}
	for (i = 0; i < IOUR_ARRAY_SIZE(oflags); i++) {
		emu_ctx_open(c, OP_OPENAT, oflags[i] | 0x8000 /* O_LARGEFILE */, 0644, 0);
		add_ctx(s, c, emu_pdu_size(e, OP_OPENAT));
	}
}

/* Submit every context on a fresh ring of the emulated task and compare
 * with the policy; returns the number of contexts. */
static size_t verdicts_match(struct emu *e, const struct iour_policy *p, int fd)
{
	static struct ctxset s;
	struct emu_verdict v;
	size_t i, mism = 0;

	build_contexts(e, &s);
	for (i = 0; i < s.n; i++) {
		int want = intended(p, s.c[i]);
		int got = emu_submit_ex(e, fd, s.c[i], &v);

		if (got != want) {
			mism++;
			cr_log_error("emulated: opcode %u flags %#x: kernel %d (stage %u), "
				     "policy %d", s.c[i][8], s.c[i][9], got, v.stage, want);
		}
	}
	cr_expect_eq(mism, 0, "emulated: %zu of %zu verdicts differ", mism, s.n);
	return s.n;
}

static int emu_ring(void)
{
	struct kio_params params;
	long fd;

	memset(&params, 0, sizeof(params));
	fd = iour__setup(8, &params);
	cr_assert_geq(fd, 0, "emulated setup: %ld", fd);
	return (int)fd;
}

Test(policy_emulated, emulated_7_0_apply_task_and_submit)
{
	UNIT_REQUIRE_URING();
	struct emu_config cfg = { .gen = EMU_GEN_7_0 };
	struct iour_policy *p = policy_p1(IOUR_POLICY_TARGET_TASK);
	struct iour_report *rep = NULL;
	struct iour_features f;
	struct iour_plan *pl;
	struct emu_state st;
	struct emu *e;
	size_t n;
	int fd;

	cr_assert_eq(emu_new(&cfg, &e), 0);
	emu_install(e);
	f = probe_emu();
	cr_assert_eq(f.level, IOUR_LEVEL_TASK_BPF);
	cr_assert_eq(f.task_restrictions, IOUR_AVAIL_NO_PRIV);
	pl = plan_features(p, &f);
	cr_expect_eq(step_of(pl, 0).op, IOUR_STEP_SET_NNP, "emulated: NNP needed and allowed");
	emu_log_reset(e);
	cr_assert_eq(iour_plan__apply_task(pl, NULL, &rep), 0);
	cr_expect(emu_nnp(e));
	cr_expect_eq(iour_report__status(rep), IOUR_STATUS_FULLY);
	cr_expect_eq(iour_report__mechanism(rep), IOUR_MECH_TASK);
	cr_expect(iour_report__flags(rep) & IOUR_REPORT_NNP_SET);
	emu_task_state(e, &st);
	cr_expect(st.registered);
	cr_expect_eq(st.nr_filters[OP_SOCKET], 1);
	cr_expect_eq(st.nr_filters[OP_OPENAT], 1);
	cr_expect_eq(st.total_filters, 2);
	cr_expect_eq(st.flags_allowed, SQE_IO_LINK);
	/* Every registered argument equals the plan's bytes (pointers aside). */
	{
		size_t i, k = 0;

		for (i = 0; i < emu_log_len(e); i++) {
			const struct emu_call *c = emu_log_at(e, i);
			struct iour_plan_step s;
			uint8_t buf[1024];
			size_t len = sizeof(buf);

			if (c->kind != EMU_CALL_REGISTER || !c->arg || c->result < 0)
				continue;
			while (k < (size_t)iour_plan__step_cnt(pl) &&
			       step_of(pl, k).op == IOUR_STEP_SET_NNP)
				k++;
			s = step_of(pl, k);
			cr_assert_eq(c->opcode, s.call_op);
			cr_assert_eq(iour_plan__step_arg(pl, k, buf, &len), 0);
			if (s.op == IOUR_STEP_BPF_FILTER) {
				memset(c->arg + 24, 0, 8); /* filter_ptr */
				cr_expect(c->prog_len == 8 * s.insn_cnt);
			}
			cr_expect(c->arg_len == len && !memcmp(c->arg, buf, len),
				  "emulated: call %zu matches plan step %zu", i, k);
			k++;
		}
		cr_expect_eq(k, 4);
	}
	fd = emu_ring();
	n = verdicts_match(e, p, fd);
	cr_log_info("emulated 7.0 task policy: %zu request verdicts match", n);
	fprintf(stderr, "emulated 7.0 task policy: %zu request verdicts match the policy\n", n);
	iour_report__free(rep);
	iour_plan__free(pl);
	emu_uninstall();
	emu_free(e);
	iour_policy__free(p);
}

Test(policy_emulated, emulated_7_0_ring_apply_and_submit)
{
	struct emu_config cfg = { .gen = EMU_GEN_7_0 };
	struct iour_policy *p = policy_p2(IOUR_POLICY_TARGET_RING);
	struct iour_report *rep = NULL;
	struct iour_features f;
	struct iour_plan *pl;
	struct emu_state st;
	struct emu *e;
	size_t n;
	int fd = -1;

	cr_assert_eq(emu_new(&cfg, &e), 0);
	emu_install(e);
	f = probe_emu();
	pl = plan_features(p, &f);
	cr_assert_eq(iour_plan__create_ring(pl, 8, NULL, NULL, &fd, &rep), 0);
	cr_expect_eq(iour_report__status(rep), IOUR_STATUS_FULLY);
	cr_assert_eq(emu_ring_state(e, fd, &st), 0);
	cr_expect(!st.disabled);
	cr_expect_eq(st.nr_filters[OP_SOCKET], 1);
	cr_expect(st.dummy[OP_NOP], "emulated: DENY_REST closed empty slots");
	cr_expect(!emu_nnp(e), "emulated: the ring path needs no no_new_privs");
	n = verdicts_match(e, p, fd);
	fprintf(stderr, "emulated 7.0 ring policy: %zu request verdicts match the policy\n", n);
	iour_report__free(rep);
	iour_plan__free(pl);
	emu_uninstall();
	emu_free(e);
	iour_policy__free(p);
}

Test(policy_emulated, emulated_7_0_nnp_rules)
{
	UNIT_REQUIRE_URING();
	struct emu_config cfg = { .gen = EMU_GEN_7_0 };
	struct iour_policy *p = policy_p1(IOUR_POLICY_TARGET_TASK);
	struct iour_report *rep = NULL;
	struct iour_features f;
	struct iour_plan *pl = NULL;
	struct emu_state st;
	struct emu *e;
	IOUR_OPTS(iour_plan_opts, o);

	cr_assert_eq(iour_policy__set_attr(p, IOUR_POLICY_ATTR_NNP, IOUR_POLICY_NNP_KEEP), 0);
	cr_assert_eq(emu_new(&cfg, &e), 0);
	emu_install(e);
	/* Known: neither NNP nor CAP_SYS_ADMIN -> the plan is refused. */
	f = probe_emu();
	o.features = &f;
	cr_expect_eq(iour_policy__plan(p, &o, &pl), -EACCES);
	cr_expect_null(pl);
	/* Unknown (forced level): the executor finds out before anything. */
	pl = plan_level(p, 4);
	cr_expect_neq(step_of(pl, 0).op, IOUR_STEP_SET_NNP);
	emu_log_reset(e);
	cr_expect_eq(iour_plan__apply_task(pl, NULL, &rep), -EACCES);
	cr_expect_eq(iour_report__status(rep), IOUR_STATUS_NOT_ENFORCED);
	emu_task_state(e, &st);
	cr_expect(!st.exists, "emulated: nothing applied");
	cr_expect(!emu_nnp(e));
	cr_expect_eq(emu_log_len(e), 1, "emulated: only the side-effect-free check ran");
	iour_report__free(rep);
	iour_plan__free(pl);
	/* With CAP_SYS_ADMIN no no_new_privs is needed, nor set. */
	emu_set_cap(e, true);
	f = probe_emu();
	cr_assert_eq(f.task_restrictions, IOUR_AVAIL_YES);
	pl = plan_features(p, &f);
	cr_expect_eq(step_of(pl, 0).op, IOUR_STEP_RESTRICTIONS);
	cr_assert_eq(iour_plan__apply_task(pl, NULL, &rep), 0);
	cr_expect_eq(iour_report__status(rep), IOUR_STATUS_FULLY);
	cr_expect(!emu_nnp(e));
	cr_expect_eq(iour_report__flags(rep) & IOUR_REPORT_NNP_SET, 0);
	iour_report__free(rep);
	/* Applying a classic set again: -EPERM before anything. */
	emu_log_reset(e);
	cr_expect_eq(iour_plan__apply_task(pl, NULL, &rep), -EPERM);
	cr_expect_eq(emu_log_len(e), 1);
	iour_report__free(rep);
	iour_plan__free(pl);
	emu_uninstall();
	emu_free(e);
	iour_policy__free(p);
}

/* A child of a restricted task stacks its own policy through filters. */
Test(policy_emulated, emulated_7_0_stacking_in_child)
{
	struct emu_config cfg = { .gen = EMU_GEN_7_0, .no_new_privs = true };
	static const uint32_t child_ops[] = { OP_NOP, OP_SOCKET };
	struct iour_policy *parent = policy_p1(IOUR_POLICY_TARGET_TASK);
	struct iour_policy *child;
	struct iour_ruleset *rs = rs_of(child_ops, 2, -1, SQE_IO_LINK);
	struct iour_report *rep = NULL;
	struct iour_features f;
	struct iour_plan *pl;
	struct emu *e, *c;
	uint8_t ctx[40];
	int fd, i, n, dropped = 0;

	cr_assert_eq(emu_new(&cfg, &e), 0);
	emu_install(e);
	f = probe_emu();
	pl = plan_features(parent, &f);
	cr_assert_eq(iour_plan__apply_task(pl, NULL, &rep), 0);
	iour_report__free(rep);
	iour_plan__free(pl);

	c = emu_fork(e);
	cr_assert_not_null(c);
	emu_install(c);
	f = probe_emu();
	cr_assert_eq(f.task_restrictions, IOUR_AVAIL_RESTRICTED);
	cr_assert_eq(iour_policy__new(NULL, &child), 0);
	cr_assert_eq(iour_policy__set_ruleset(child, rs), 0);
	cr_assert_eq(iour_policy__set_prog(child, OP_SOCKET, stream_only, 5, 12), 0);
	pl = plan_features(child, &f);
	n = iour_plan__step_cnt(pl);
	/* The probe cannot see the emulated no_new_privs bit (it reads
	 * /proc): the plan sets it again, which is harmless. */
	i = step_of(pl, 0).op == IOUR_STEP_SET_NNP;
	cr_expect_eq(n - i, 65 - 2 + 1, "emulated: 63 deny filters plus SOCKET's");
	for (; i < n; i++)
		cr_expect_eq(step_of(pl, (size_t)i).op, IOUR_STEP_BPF_FILTER,
			     "emulated: only filters on a restricted task");
	for (i = 0; i < iour_report__decision_cnt(iour_plan__report(pl)); i++) {
		struct iour_decision d = { .sz = sizeof(d) };

		cr_assert_eq(iour_report__decision(iour_plan__report(pl), (size_t)i, &d), 0);
		if (d.reason == IOUR_REASON_NOT_EXPRESSIBLE)
			dropped++;
	}
	cr_expect_eq(dropped, 1, "emulated: the SQE-flag rule cannot be stacked");
	cr_assert_eq(iour_plan__apply_task(pl, NULL, &rep), 0);
	cr_expect_eq(iour_report__status(rep), IOUR_STATUS_PARTIALLY);
	cr_expect(iour_report__flags(rep) & IOUR_REPORT_LOOSENED);
	fd = emu_ring();
	emu_ctx_socket(ctx, 2, 1, 0);
	cr_expect_eq(emu_submit(c, fd, ctx), 0, "emulated: AF_INET stream allowed by both");
	emu_ctx_socket(ctx, 2, 2, 0);
	cr_expect_eq(emu_submit(c, fd, ctx), -EACCES, "emulated: datagram denied by the child");
	emu_ctx_socket(ctx, 10, 1, 0);
	cr_expect_eq(emu_submit(c, fd, ctx), -EACCES, "emulated: AF_INET6 denied by the parent");
	emu_ctx(ctx, OP_READ, 0, 0);
	cr_expect_eq(emu_submit(c, fd, ctx), -EACCES, "emulated: READ closed by a deny filter");
	emu_ctx(ctx, OP_NOP, 0, 0);
	cr_expect_eq(emu_submit(c, fd, ctx), 0);
	emu_ctx(ctx, OP_NOP, SQE_ASYNC, 0);
	cr_expect_eq(emu_submit(c, fd, ctx), -EACCES, "emulated: the parent's flag rule holds");
	iour_report__free(rep);
	iour_plan__free(pl);
	emu_uninstall();
	emu_free(c);
	emu_free(e);
	iour_ruleset__free(rs);
	iour_policy__free(child);
	iour_policy__free(parent);
}

/* The kernel's payload size differs from the plan's: write-back. */
Test(policy_emulated, emulated_pdu_negotiation)
{
	struct emu_config cfg = { .gen = EMU_GEN_7_0, .no_new_privs = true };
	static const uint32_t ops[] = { OP_NOP, OP_CONNECT, OP_OPENAT };
	static const struct iour_insn flags_lo[] = {
		{ 0x20, 0, 0, 16 }, { 0x45, 1, 0, 0x40 }, { 0x06, 0, 0, 1 }, { 0x06, 0, 0, 0 },
	};
	struct iour_ruleset *rs = rs_of(ops, 3, -1, 0);
	struct iour_report *rep = NULL;
	struct iour_policy *p;
	struct iour_plan *pl;
	struct iour__kernel t;
	struct emu *e;
	uint8_t ctx[40];
	int fd, i, neg = 0, tight = 0;
	size_t j, bpf_calls = 0;

	cr_assert_eq(iour_policy__new(NULL, &p), 0);
	cr_assert_eq(iour_policy__set_ruleset(p, rs), 0);
	cr_assert_eq(iour_policy__set_prog(p, OP_CONNECT, connect_inet, 4, 24), 0);
	/* OPENAT program declares 12 bytes (it reads only the flags). */
	cr_assert_eq(iour_policy__set_prog(p, OP_OPENAT, flags_lo, 4, 12), 0);
	/* A target that believes CONNECT has 24 bytes (7.2) and OPENAT 12. */
	cr_assert_eq(iour__kernel_for_level(5, &t), 0);
	t.origin = IOUR__KERNEL_EMULATED;
	t.pdu[OP_OPENAT] = 12;
	t.nnp = true;
	t.priv = IOUR__PRIV_YES;
	cr_assert_eq(iour__plan_build(p, &t, &pl), 0);
	cr_assert_eq(iour_plan__step_cnt(pl), 3);
	cr_assert_eq(emu_new(&cfg, &e), 0);
	emu_install(e);
	cr_assert_eq(iour_plan__apply_task(pl, NULL, &rep), 0);
	for (i = 0; i < iour_report__decision_cnt(rep); i++) {
		struct iour_decision d = { .sz = sizeof(d) };

		cr_assert_eq(iour_report__decision(rep, (size_t)i, &d), 0);
		if (d.kind == IOUR_DECISION_NEGOTIATED && d.opcode == OP_OPENAT && d.value == 24)
			neg++;
		if (d.kind == IOUR_DECISION_TIGHTENED && d.opcode == OP_CONNECT && d.value == 0 &&
		    d.reason == IOUR_REASON_NO_PAYLOAD)
			tight++;
	}
	cr_expect_eq(neg, 1, "emulated: OPENAT negotiated to K = 24 without SZ_STRICT");
	cr_expect_eq(tight, 1, "emulated: CONNECT has K = 0 on 7.0: closed");
	cr_expect_eq(iour_report__status(rep), IOUR_STATUS_PARTIALLY);
	for (j = 0; j < emu_log_len(e); j++) {
		const struct emu_call *c = emu_log_at(e, j);
		struct kio_bpf b;

		if (c->kind != EMU_CALL_REGISTER || c->opcode != 37)
			continue;
		memcpy(&b, c->arg, sizeof(b));
		bpf_calls++;
		if (c->result == -EMSGSIZE)
			cr_expect(b.filter.flags & KIO_BPF_FILTER_SZ_STRICT);
		else
			cr_expect_eq(c->result, 0);
	}
	cr_expect_eq(bpf_calls, 4, "emulated: two refused, two retried");
	fd = emu_ring();
	emu_ctx_open(ctx, OP_OPENAT, 0x8000, 0, 0);
	cr_expect_eq(emu_submit(e, fd, ctx), 0);
	emu_ctx_open(ctx, OP_OPENAT, 0x8000 | 0x40, 0644, 0);
	cr_expect_eq(emu_submit(e, fd, ctx), -EACCES);
	{
		struct { uint16_t fam; uint16_t port; uint32_t a; uint8_t z[8]; } sin = { 2, 0, 0, { 0 } };

		emu_ctx_connect(ctx, &sin, 16);
		cr_expect_eq(emu_submit(e, fd, ctx), -EACCES, "emulated: CONNECT closed");
	}
	iour_report__free(rep);
	iour_plan__free(pl);
	emu_uninstall();
	emu_free(e);
	iour_ruleset__free(rs);
	iour_policy__free(p);
}

/* The executor's no-payload fallback as a table (issue 24): on an
 * emulated 7.0 (CONNECT has no payload) a CONNECT program is replaced by
 * `ret #0` (closed: TIGHTENED, the connect fails) or `ret #1` (open:
 * LOOSENED, the connect runs unchecked), and the status is PARTIALLY
 * either way. */
Test(policy_emulated, emulated_no_payload_fallback_table)
{
	static const struct {
		uint32_t fallback, decision, flag, other_flag;
		int submit;
	} rows[] = {
		{ IOUR_POLICY_FALLBACK_CLOSED, IOUR_DECISION_TIGHTENED, IOUR_REPORT_TIGHTENED,
		  IOUR_REPORT_LOOSENED, -EACCES },
		{ IOUR_POLICY_FALLBACK_OPEN, IOUR_DECISION_LOOSENED, IOUR_REPORT_LOOSENED,
		  IOUR_REPORT_TIGHTENED, 0 },
	};
	static const uint32_t ops[] = { OP_NOP, OP_CONNECT };

	for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
		struct emu_config cfg = { .gen = EMU_GEN_7_0, .no_new_privs = true };
		struct iour_ruleset *rs = rs_of(ops, 2, -1, 0);
		struct iour_report *rep = NULL;
		struct iour_policy *p;
		struct iour_plan *pl;
		struct iour__kernel t;
		struct emu *e;
		uint8_t ctx[40];
		int fd, i, seen = 0;
		struct {
			uint16_t fam;
			uint16_t port;
			uint32_t a;
			uint8_t z[8];
		} sin = { 2, 0, 0, { 0 } };

		cr_assert_eq(iour_policy__new(NULL, &p), 0);
		cr_assert_eq(iour_policy__set_ruleset(p, rs), 0);
		cr_assert_eq(iour_policy__set_prog(p, OP_CONNECT, connect_inet, 4, 24), 0);
		cr_assert_eq(iour_policy__set_attr(p, IOUR_POLICY_ATTR_NO_FILTER_FALLBACK,
						   rows[r].fallback),
			     0);
		/* a target that believes CONNECT has 24 bytes (7.2) */
		cr_assert_eq(iour__kernel_for_level(5, &t), 0);
		t.origin = IOUR__KERNEL_EMULATED;
		t.nnp = true;
		t.priv = IOUR__PRIV_YES;
		cr_assert_eq(iour__plan_build(p, &t, &pl), 0);
		cr_assert_eq(emu_new(&cfg, &e), 0);
		emu_install(e);
		cr_assert_eq(iour_plan__apply_task(pl, NULL, &rep), 0);
		for (i = 0; i < iour_report__decision_cnt(rep); i++) {
			struct iour_decision d = { .sz = sizeof(d) };

			cr_assert_eq(iour_report__decision(rep, (size_t)i, &d), 0);
			if (d.kind == rows[r].decision && d.opcode == OP_CONNECT &&
			    d.reason == IOUR_REASON_NO_PAYLOAD)
				seen++;
		}
		cr_expect_eq(seen, 1, "row %zu: no fallback decision", r);
		cr_expect_eq(iour_report__status(rep), IOUR_STATUS_PARTIALLY, "row %zu", r);
		cr_expect(iour_report__flags(rep) & rows[r].flag, "row %zu: flags %#x", r,
			  iour_report__flags(rep));
		cr_expect(!(iour_report__flags(rep) & rows[r].other_flag), "row %zu: flags %#x", r,
			  iour_report__flags(rep));
		fd = emu_ring();
		emu_ctx_connect(ctx, &sin, 16);
		cr_expect_eq(emu_submit(e, fd, ctx), rows[r].submit, "row %zu: emulated CONNECT",
			     r);
		iour_report__free(rep);
		iour_plan__free(pl);
		emu_uninstall();
		emu_free(e);
		iour_ruleset__free(rs);
		iour_policy__free(p);
	}
}

/* A program that reads no payload is registered with pdu_size 0 and
 * without SZ_STRICT: the kernel accepts a smaller size. */
Test(policy_emulated, emulated_program_without_payload)
{
	static const uint32_t ops[] = { OP_SOCKET };
	struct iour_ruleset *rs = rs_of(ops, 1, -1, 0);
	struct iour_policy *p;
	struct iour_plan *pl;

	cr_assert_eq(iour_policy__new(NULL, &p), 0);
	cr_assert_eq(iour_policy__set_ruleset(p, rs), 0);
	cr_assert_eq(iour_policy__set_prog(p, OP_SOCKET, small_udata, 4, 0), 0);
	pl = plan_level(p, 4);
	expect_filter_step(pl, 2, IOUR_STEP_TASK, OP_SOCKET, KIO_BPF_FILTER_DENY_REST, 0,
			   small_udata, 4);
	iour_plan__free(pl);
	iour_ruleset__free(rs);
	iour_policy__free(p);
}

/* Linux 7.2: the CONNECT filter really registers and decides. */
Test(policy_emulated, emulated_7_2_connect_apply_and_submit)
{
	struct emu_config cfg = { .gen = EMU_GEN_7_2 };
	static const uint32_t ops[] = { OP_NOP, OP_CONNECT };
	struct iour_ruleset *rs = rs_of(ops, 2, -1, 0);
	struct iour_report *rep = NULL;
	struct iour_features f;
	struct iour_policy *p;
	struct iour_plan *pl;
	struct emu *e;
	uint8_t ctx[40];
	int fd = -1;
	struct {
		uint16_t fam;
		uint16_t port;
		uint32_t a;
		uint8_t z[8];
	} sin = { 2, 0x5000, 0x0100007f, { 0 } };
	struct {
		uint16_t fam;
		uint16_t port;
		uint32_t flow;
		uint8_t a[16];
		uint32_t scope;
	} sin6 = { 10, 0x5000, 0, { 0 }, 0 };
	struct {
		uint16_t fam;
		char path[14];
	} sun = { 1, "/tmp/x" };

	cr_assert_eq(iour_policy__new(NULL, &p), 0);
	cr_assert_eq(iour_policy__set_ruleset(p, rs), 0);
	cr_assert_eq(iour_policy__set_prog(p, OP_CONNECT, connect_inet, 4, 24), 0);
	cr_assert_eq(iour_policy__set_attr(p, IOUR_POLICY_ATTR_TARGET, IOUR_POLICY_TARGET_RING), 0);
	cr_assert_eq(emu_new(&cfg, &e), 0);
	emu_install(e);
	f = probe_emu();
	cr_assert_eq(f.level, IOUR_LEVEL_CONNECT);
	pl = plan_features(p, &f);
	cr_expect_eq(iour_report__status(iour_plan__report(pl)), IOUR_STATUS_FULLY);
	cr_assert_eq(iour_plan__create_ring(pl, 8, NULL, NULL, &fd, &rep), 0);
	emu_ctx_connect(ctx, &sin, sizeof(sin));
	cr_expect_eq(emu_submit(e, fd, ctx), 0, "emulated 7.2: AF_INET connect allowed");
	emu_ctx_connect(ctx, &sin6, sizeof(sin6));
	cr_expect_eq(emu_submit(e, fd, ctx), -EACCES, "emulated 7.2: AF_INET6 denied");
	emu_ctx_connect(ctx, &sun, sizeof(sun));
	cr_expect_eq(emu_submit(e, fd, ctx), -EACCES, "emulated 7.2: AF_UNIX denied");
	emu_ctx(ctx, OP_WRITE, 0, 0);
	cr_expect_eq(emu_submit(e, fd, ctx), -EACCES);
	iour_report__free(rep);
	iour_plan__free(pl);
	emu_uninstall();
	emu_free(e);
	iour_ruleset__free(rs);
	iour_policy__free(p);
}

/* A policy whose argument filters come from a filter set (rules). */
Test(policy_emulated, emulated_7_0_filter_set_rules)
{
	struct emu_config cfg = { .gen = EMU_GEN_7_0, .no_new_privs = true };
	struct iour_filter *flt;
	struct iour_policy *p;
	struct iour_plan *pl;
	struct iour_report *rep = NULL;
	struct emu *e;
	uint8_t ctx[40], want[128];
	int fd;
	struct iour_cmp inet = { .sz = sizeof(inet), .field = IOUR_FIELD_SOCKET_FAMILY,
				 .op = IOUR_CMP_EQ, .value = 2 };
	struct iour_cmp creat = { .sz = sizeof(creat), .field = IOUR_FIELD_OPEN_FLAGS,
				  .op = IOUR_CMP_ANY_BITS, .value = 0x40 };
	static const uint16_t ents[][2] = { { 1, OP_NOP }, { 1, OP_OPENAT }, { 1, OP_SOCKET },
					    { 2, 0x7f } };
	size_t n;

	cr_assert_eq(iour_filter__new(NULL, &flt), 0);
	cr_assert_eq(iour_filter__add_rule(flt, OP_SOCKET, IOUR_ALLOW, &inet, 1), 0);
	cr_assert_eq(iour_filter__add_rule(flt, OP_OPENAT, IOUR_DENY, &creat, 1), 0);
	cr_assert_eq(iour_filter__set_default(flt, OP_OPENAT, IOUR_ALLOW), 0);
	cr_assert_eq(iour_filter__set_default(flt, OP_NOP, IOUR_ALLOW), 0);
	cr_assert_eq(iour_filter__set_default(flt, OP_WRITE, IOUR_DENY), 0);
	cr_assert_eq(iour_policy__new(NULL, &p), 0);
	cr_assert_eq(iour_policy__set_filter(p, flt), 0);
	iour_filter__free(flt); /* the policy holds its own copy */
	pl = plan_level(p, 4);
	/* NOP (always allow) is listed without a program, WRITE (always
	 * deny) left out, OPENAT and SOCKET listed and filtered. */
	cr_assert_eq(iour_plan__step_cnt(pl), 4);
	n = entries_bytes(want, true, ents, 4);
	expect_arg(pl, 1, want, n, "filter-set policy task set");
	cr_expect_eq(step_of(pl, 2).opcode, OP_OPENAT);
	cr_expect_eq(step_of(pl, 3).opcode, OP_SOCKET);
	iour_plan__free(pl);
	cr_assert_eq(emu_new(&cfg, &e), 0);
	emu_install(e);
	{
		struct iour_features f = probe_emu();

		pl = plan_features(p, &f);
	}
	cr_assert_eq(iour_plan__apply_task(pl, NULL, &rep), 0);
	cr_expect_eq(iour_report__status(rep), IOUR_STATUS_FULLY);
	fd = emu_ring();
	emu_ctx(ctx, OP_NOP, SQE_ASYNC, 0);
	cr_expect_eq(emu_submit(e, fd, ctx), 0);
	emu_ctx(ctx, OP_WRITE, 0, 0);
	cr_expect_eq(emu_submit(e, fd, ctx), -EACCES);
	emu_ctx(ctx, OP_READ, 0, 0);
	cr_expect_eq(emu_submit(e, fd, ctx), -EACCES, "emulated: unmentioned, default deny");
	emu_ctx_socket(ctx, 2, 1, 0);
	cr_expect_eq(emu_submit(e, fd, ctx), 0);
	emu_ctx_socket(ctx, 10, 1, 0);
	cr_expect_eq(emu_submit(e, fd, ctx), -EACCES);
	emu_ctx_open(ctx, OP_OPENAT, 0x8000, 0, 0);
	cr_expect_eq(emu_submit(e, fd, ctx), 0);
	emu_ctx_open(ctx, OP_OPENAT, 0x8041, 0600, 0);
	cr_expect_eq(emu_submit(e, fd, ctx), -EACCES);
	/* Removing the filters: every opcode falls to the default (deny). */
	cr_assert_eq(iour_policy__set_filter(p, NULL), 0);
	{
		struct iour_plan *p2 = plan_level(p, 4);
		static const uint16_t none[][2] = { { 2, 0x7f } };

		n = entries_bytes(want, true, none, 1);
		expect_arg(p2, 1, want, n, "deny everything: flags entry only");
		iour_plan__free(p2);
	}
	iour_report__free(rep);
	iour_plan__free(pl);
	emu_uninstall();
	emu_free(e);
	iour_policy__free(p);
}

/* A SOCKET filter step in the plan? */
static bool socket_filtered(const struct iour_plan *pl)
{
	size_t i, n = iour_plan__step_cnt(pl);

	for (i = 0; i < n; i++) {
		struct iour_plan_step s = step_of(pl, i);

		if (s.op == IOUR_STEP_BPF_FILTER && s.opcode == OP_SOCKET)
			return true;
	}
	return false;
}

static size_t tightened_no_payload(const struct iour_plan *pl)
{
	const struct iour_report *r = iour_plan__report(pl);
	size_t i, n = 0, cnt = (size_t)iour_report__decision_cnt(r);

	for (i = 0; i < cnt; i++) {
		struct iour_decision d = { .sz = sizeof(d) };

		if (!iour_report__decision(r, i, &d) && d.kind == IOUR_DECISION_TIGHTENED &&
		    d.reason == IOUR_REASON_NO_PAYLOAD && d.opcode == OP_SOCKET)
			n++;
	}
	return n;
}

/* Linux 7.3.4 leaves SOCK_NONBLOCK/SOCK_CLOEXEC out of the SOCKET payload
 * (doc/kernel.md 4.3): a program deciding on them falls back (closed); one
 * that masks the type to 0xf, or reads the family, still runs.  Emulated
 * 7.0 kernel, the probe's flag set by hand. */
Test(policy_emulated, emulated_socket_flags_hidden_fallback)
{
	static const struct iour_insn flags_prog[] = {
		{ 0x20, 0, 0, 20 }, { 0x45, 0, 1, 04000 }, { 0x06, 0, 0, 0 }, { 0x06, 0, 0, 1 },
	};
	static const struct iour_insn type_prog[] = {
		{ 0x20, 0, 0, 20 }, { 0x54, 0, 0, 0xf }, { 0x15, 0, 1, 1 },
		{ 0x06, 0, 0, 1 },  { 0x06, 0, 0, 0 },
	};
	static const struct iour_insn raw_prog[] = {
		{ 0x20, 0, 0, 20 }, { 0x15, 0, 1, 1 }, { 0x06, 0, 0, 1 }, { 0x06, 0, 0, 0 },
	};
	struct emu_config cfg = { .gen = EMU_GEN_7_0 };
	const struct {
		const struct iour_insn *prog;
		size_t cnt;
		bool reads_flags;
	} cases[] = { { flags_prog, 4, true }, { type_prog, 5, false }, { raw_prog, 4, true } };
	struct iour_features f;
	struct emu *e;
	size_t i;

	cr_assert_eq(emu_new(&cfg, &e), 0);
	emu_install(e);
	f = probe_emu();
	emu_uninstall();
	emu_free(e);
	cr_assert_eq(f.flags & IOUR_FEATURES_SOCKET_FLAGS_HIDDEN, 0, "the 7.0 emulation shows flags");
	for (i = 0; i < IOUR_ARRAY_SIZE(cases); i++) {
		struct iour_policy *p;
		struct iour_plan *pl;

		cr_assert_eq(iour_policy__new(NULL, &p), 0);
		cr_assert_eq(iour_policy__set_prog(p, OP_SOCKET, cases[i].prog, cases[i].cnt, 12), 0);
		cr_assert_eq(iour_policy__set_attr(p, IOUR_POLICY_ATTR_TARGET,
						   IOUR_POLICY_TARGET_RING),
			     0);
		f.flags &= ~IOUR_FEATURES_SOCKET_FLAGS_HIDDEN;
		pl = plan_features(p, &f);
		cr_expect(socket_filtered(pl), "case %zu: filtered where flags are visible", i);
		cr_expect_eq(tightened_no_payload(pl), 0);
		iour_plan__free(pl);
		f.flags |= IOUR_FEATURES_SOCKET_FLAGS_HIDDEN;
		pl = plan_features(p, &f);
		cr_expect_eq(socket_filtered(pl), !cases[i].reads_flags,
			     "case %zu: a program reading the flags is not registered", i);
		cr_expect_eq(tightened_no_payload(pl), cases[i].reads_flags ? 1 : 0, "case %zu", i);
		iour_plan__free(pl);
		iour_policy__free(p);
	}
}

/* The report's note on a task set listing BPF_FILTER for its filters. */
static bool gate_note(const struct iour_report *r)
{
	size_t i, cnt = (size_t)iour_report__decision_cnt(r);

	for (i = 0; i < cnt; i++) {
		struct iour_decision d = { .sz = sizeof(d) };

		if (!iour_report__decision(r, i, &d) && d.kind == IOUR_DECISION_NOTE &&
		    d.text && strstr(d.text, "lists register opcode BPF_FILTER"))
			return true;
	}
	return false;
}

/* Task {NOP, SOCKET} + an AF_INET SOCKET filter, register side either
 * closed or allowing only REGISTER_FILES, applied on a fresh emulated
 * kernel; returns the status and the task's state. */
static uint32_t gated_apply(bool gates, bool flag, int reg_op, struct emu_state *st,
			    bool *note_seen, long *enable)
{
	static const uint32_t ops[] = { OP_NOP, OP_SOCKET };
	struct emu_config cfg = { .gen = EMU_GEN_7_0, .task_set_gates_blind = gates };
	struct iour_ruleset *rs = rs_of(ops, 2, reg_op, 0);
	struct iour_report *rep = NULL;
	struct kio_params params;
	struct iour_features f;
	struct iour_policy *p;
	struct iour_plan *pl;
	uint32_t status;
	struct emu *e;
	long fd;

	if (reg_op < 0)
		cr_assert_eq(iour_ruleset__deny_all_register_ops(rs), 0);
	cr_assert_eq(iour_policy__new(NULL, &p), 0);
	cr_assert_eq(iour_policy__set_ruleset(p, rs), 0);
	iour_ruleset__free(rs);
	cr_assert_eq(iour_policy__set_prog(p, OP_SOCKET, inet_only, 4, 12), 0);
	cr_assert_eq(iour_policy__set_attr(p, IOUR_POLICY_ATTR_TARGET, IOUR_POLICY_TARGET_TASK),
		     0);
	cr_assert_eq(emu_new(&cfg, &e), 0);
	emu_install(e);
	f = probe_emu();
	cr_expect_eq(!!(f.flags & IOUR_FEATURES_TASK_SET_GATES_FILTERS), gates,
		     "emulated: the probe sees the gate exactly when it is modelled");
	emu_task_state(e, st);
	cr_expect(!st->exists, "emulated: the probe's task set stayed in its child");
	if (!flag)
		f.flags &= ~IOUR_FEATURES_TASK_SET_GATES_FILTERS;
	pl = plan_features(p, &f);
	*note_seen = gate_note(iour_plan__report(pl));
	(void)iour_plan__apply_task(pl, NULL, &rep);
	cr_assert(rep != NULL, "emulated: apply_task gives a report");
	status = iour_report__status(rep);
	emu_task_state(e, st);
	memset(&params, 0, sizeof(params));
	params.flags = KIO_SETUP_R_DISABLED;
	fd = iour__setup(4, &params);
	cr_assert_geq(fd, 0);
	*enable = iour__register((int)fd, KIO_REGISTER_ENABLE_RINGS, NULL, 0);
	iour__close((int)fd);
	iour_report__free(rep);
	iour_plan__free(pl);
	iour_policy__free(p);
	emu_uninstall();
	emu_free(e);
	return status;
}

static bool bm_has(const uint64_t *bm, unsigned n)
{
	return (bm[n >> 6] >> (n & 63)) & 1;
}

/* Debian's 7.3.4 gates a task's fd -1 filter registration by the register
 * list of the task's set (doc/kernel.md 3.3).  Emulated 7.0 kernel with that
 * gate modelled: the probe flags it; the plan's set lists BPF_FILTER, keeps
 * ENABLE_RINGS where it was the only register entry, and the policy is
 * applied in full; without the flag the same kernel leaves the filter out
 * (PARTIAL), and without the gate nothing changes. */
Test(policy_emulated, emulated_task_set_gates_filters)
{
	UNIT_REQUIRE_URING();
	const int regs[] = { -1, 2 /* REGISTER_FILES */ };
	struct emu_state st;
	bool note_seen;
	long enable;
	size_t i;

	for (i = 0; i < IOUR_ARRAY_SIZE(regs); i++) {
		uint32_t s = gated_apply(true, true, regs[i], &st, &note_seen, &enable);

		cr_expect_eq(s, IOUR_STATUS_FULLY, "case %zu: applied in full", i);
		cr_expect(note_seen, "case %zu: the report says why BPF_FILTER is listed", i);
		cr_expect(bm_has(st.reg_ops, KIO_REGISTER_BPF_FILTER), "case %zu", i);
		cr_expect_eq(bm_has(st.reg_ops, KIO_REGISTER_ENABLE_RINGS), regs[i] < 0,
			     "case %zu: ENABLE_RINGS only where it was the sentinel", i);
		cr_expect_eq(bm_has(st.reg_ops, 2), regs[i] == 2, "case %zu", i);
		cr_expect(!bm_has(st.reg_ops, 0) && !bm_has(st.reg_ops, KIO_REGISTER_QUERY),
			  "case %zu: nothing else", i);
		cr_expect_eq(st.nr_filters[OP_SOCKET], 1, "case %zu: the filter is in", i);
		if (regs[i] < 0)
			cr_expect_eq(enable, 0, "case %zu: the owner enables a disabled ring", i);

		s = gated_apply(true, false, regs[i], &st, &note_seen, &enable);
		cr_expect_eq(s, IOUR_STATUS_PARTIALLY, "case %zu: gated, unflagged: partial", i);
		cr_expect(!note_seen);
		cr_expect_eq(st.nr_filters[OP_SOCKET], 0);

		s = gated_apply(false, false, regs[i], &st, &note_seen, &enable);
		cr_expect_eq(s, IOUR_STATUS_FULLY, "case %zu: no gate: full as before", i);
		cr_expect(!note_seen);
		cr_expect(!bm_has(st.reg_ops, KIO_REGISTER_BPF_FILTER), "case %zu: unchanged", i);
		cr_expect_eq(st.nr_filters[OP_SOCKET], 1);
	}
}
