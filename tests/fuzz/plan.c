/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: policies decoded from bytes, planned for every feature
 * level, and every plan checked against what the kernel accepts.
 * fuzz-requires: iour_policy__new iour_policy__plan iour_plan__step_arg iour_plan__describe
 *
 * A policy gets a classic part (restriction-set calls), argument filters
 * (a few rules on the fields of SOCKET, OPENAT, CONNECT and every opcode),
 * ready programs and attributes, all from the input; it is then planned
 * with a forced feature level (no system call is made).  Checks:
 *  - every call returns a documented code; planning twice gives the same
 *    plan text;
 *  - the plan's steps: task steps before ring steps, counts as in
 *    iour_plan__info(); nothing a kernel of that level lacks (no task
 *    restrictions or filters below level 4);
 *  - RESTRICTIONS arguments: a zero task header with the right count, and
 *    entries the kernel accepts (known kinds, opcodes below the plan's
 *    limits, at most IORING_MAX_RESTRICTIONS);
 *  - BPF_FILTER arguments: the 72-byte header as the kernel requires it
 *    (command, opcode, length, a payload size the opcode has, reserved
 *    bytes zero), a program the io_uring validator accepts, and
 *    DENY_REST at most once per target, on its last filter;
 *  - the companion: a program seccomp's checker rules accept;
 *  - two-call sizing of every getter, iour_plan__describe() and the
 *    report's describe, and the report's decisions readable.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"
#include "iouring_restrict/cbpf.h"
#include "iouring_restrict/errors.h"
#include "iouring_restrict/filter.h"
#include "iouring_restrict/plan.h"
#include "iouring_restrict/policy.h"
#include "iouring_restrict/report.h"
#include "iouring_restrict/ruleset.h"

static unsigned long n_policies, n_plans, n_steps, n_progs;

static void print_stats(void)
{
	fprintf(stderr, "fuzz-stats: %lu policies, %lu plans, %lu steps, %lu programs checked\n",
		n_policies, n_plans, n_steps, n_progs);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	atexit(print_stats);
	return 0;
}

static uint32_t rd32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static uint16_t rd16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, 2);
	return v;
}

/* ---- building the policy */
static struct iour_ruleset *make_ruleset(struct fz *in)
{
	struct iour_ruleset *rs;
	int n = fz_u8(in) % 12, i;

	FUZZ_CHECK(iour_ruleset__new(NULL, &rs) == 0, "ruleset");
	for (i = 0; i < n; i++) {
		uint8_t c = fz_u8(in);

		switch (c % 5) {
		case 0:
			(void)iour_ruleset__allow_sqe_op(rs, fz_u8(in) % 70);
			break;
		case 1:
			(void)iour_ruleset__allow_register_op(rs, fz_u8(in) % 40);
			break;
		case 2:
			(void)iour_ruleset__set_sqe_flags(rs, fz_u8(in) & 0x7f, fz_u8(in) & 0x7f);
			break;
		case 3:
			(void)iour_ruleset__deny_all_register_ops(rs);
			break;
		default:
			(void)iour_ruleset__deny_all_sqe_ops(rs);
			break;
		}
	}
	return rs;
}

static struct iour_filter *make_filter(struct fz *in)
{
	static const struct {
		uint32_t opcode, field;
	} fields[] = {
		{ 45, IOUR_FIELD_SOCKET_FAMILY }, { 45, IOUR_FIELD_SOCKET_TYPE },
		{ 18, IOUR_FIELD_OPEN_FLAGS },    { 28, IOUR_FIELD_OPEN_RESOLVE },
		{ 16, IOUR_FIELD_CONNECT_PORT },  { 0, IOUR_FIELD_USER_DATA },
		{ 22, IOUR_FIELD_SQE_FLAGS },     { 200, IOUR_FIELD_USER_DATA },
	};
	struct iour_filter_opts fo = { .sz = sizeof(fo) };
	struct iour_filter *f;
	int n = fz_u8(in) % 6, i;

	fo.default_verdict = fz_u8(in) & 1;
	FUZZ_CHECK(iour_filter__new(&fo, &f) == 0, "filter");
	for (i = 0; i < n; i++) {
		struct iour_cmp c = { .sz = sizeof(c) };
		uint8_t k = fz_u8(in) % (sizeof(fields) / sizeof(fields[0]));
		uint8_t how = fz_u8(in);

		c.field = fields[k].field;
		c.value = fz_u8(in);
		switch (how % 4) {
		case 0:
			c.op = IOUR_CMP_EQ;
			break;
		case 1:
			c.op = IOUR_CMP_NE;
			break;
		case 2:
			c.op = IOUR_CMP_ANY_BITS;
			c.value |= 1;
			break;
		default:
			c.op = IOUR_CMP_IN_RANGE;
			c.arg = c.value + fz_u8(in);
			break;
		}
		if (c.field == IOUR_FIELD_SOCKET_TYPE)
			c.value &= 0xf, c.arg &= 0xf;
		if (c.field == IOUR_FIELD_SQE_FLAGS)
			c.value &= 0x7f, c.arg &= 0x7f;
		if (c.op == IOUR_CMP_IN_RANGE && c.arg < c.value)
			c.arg = c.value;
		if ((c.op == IOUR_CMP_ANY_BITS) && !c.value)
			c.value = 1;
		(void)iour_filter__add_rule(f, fields[k].opcode, how >> 7, &c, 1);
		if (how & 0x40)
			(void)iour_filter__set_default(f, fields[k].opcode, (how >> 5) & 1);
	}
	return f;
}

static void set_progs(struct fz *in, struct iour_policy *p)
{
	int n = fz_u8(in) % 3, i, rc;

	for (i = 0; i < n; i++) {
		uint32_t op = fz_u8(in);
		uint32_t k = (fz_u8(in) % 10) * 4;
		struct iour_insn prog[4] = {
			{ .code = 0x20, .k = k },                           /* ld [k] */
			{ .code = 0x15, .jt = 0, .jf = 1, .k = fz_u8(in) }, /* jeq #v */
			{ .code = 0x06, .k = 0 },                           /* ret #0 */
			{ .code = 0x06, .k = 1 },                           /* ret #1 */
		};
		uint32_t pdu = k >= 16 ? (op == 45 ? 12 : 24) : 0;
		size_t cnt = fz_u8(in) & 1 ? 4 : 1;

		if (cnt == 1)
			prog[0] = (struct iour_insn){ .code = 0x06, .k = fz_u8(in) & 1 };
		rc = iour_policy__set_prog(p, op, cnt == 1 ? prog : prog, cnt, cnt == 1 ? 0 : pdu);
		FUZZ_CHECK(rc == 0 || rc == -EINVAL, "set_prog = %d", rc);
	}
}

/* ---- checking a plan */
static void check_two_call_text(int (*fn)(const void *, char *, size_t *), const void *obj,
				const char *what)
{
	size_t need = 0, len;
	char *buf;
	int rc = fn(obj, NULL, &need);

	FUZZ_CHECK(rc == 0 && need >= 1, "%s size: %d", what, rc);
	buf = malloc(need);
	FUZZ_CHECK(buf != NULL, "out of memory");
	len = need - 1;
	if (len) {
		rc = fn(obj, buf, &len);
		FUZZ_CHECK(rc == -ERANGE && len == need, "%s short: %d", what, rc);
	}
	len = need;
	rc = fn(obj, buf, &len);
	FUZZ_CHECK(rc == 0 && len == need && buf[need - 1] == '\0' && strlen(buf) == need - 1,
		   "%s: %d", what, rc);
	free(buf);
}

static int plan_describe(const void *o, char *b, size_t *l)
{
	return iour_plan__describe(o, b, l);
}

static int report_describe(const void *o, char *b, size_t *l)
{
	return iour_report__describe(o, b, l);
}

static void check_restrictions(const struct iour_plan_info *info, const struct iour_plan_step *st,
			       const uint8_t *arg)
{
	const uint8_t *e = arg;
	uint32_t n = st->entries, i;

	if (st->side == IOUR_STEP_TASK) {
		FUZZ_CHECK(st->arg_len == 16 + 16 * n && st->nr_args == 1,
			   "task restrictions size");
		FUZZ_CHECK(rd16(arg) == 0 && rd16(arg + 2) == n && !rd32(arg + 4) &&
				   !rd32(arg + 8) && !rd32(arg + 12),
			   "task restriction header");
		e = arg + 16;
	} else {
		FUZZ_CHECK(st->arg_len == 16 * n && st->nr_args == n, "ring restrictions size");
	}
	FUZZ_CHECK(n <= 4 + info->op_last + info->reg_last, "%u entries over the kernel's maximum",
		   n);
	for (i = 0; i < n; i++, e += 16) {
		uint16_t kind = rd16(e);

		FUZZ_CHECK(kind < 4, "entry %u of kind %u", i, kind);
		if (kind == 0)
			FUZZ_CHECK(e[2] < info->reg_last, "register op %u >= %u", e[2],
				   info->reg_last);
		if (kind == 1)
			FUZZ_CHECK(e[2] < info->op_last, "sqe op %u >= %u", e[2], info->op_last);
		if (kind >= 2)
			FUZZ_CHECK(!(e[2] & 0x80), "flags %#x", e[2]);
	}
}

static void check_plan(const struct iour_plan *pl, uint32_t level)
{
	struct iour_plan_info info = { .sz = sizeof(info) };
	const struct iour_report *rep;
	int n, i, last_filter[2] = { -1, -1 }, deny_rest[2] = { -1, -1 }, st_status;
	bool seen_ring = false;

	FUZZ_CHECK(iour_plan__info(pl, &info) == 0, "info");
	FUZZ_CHECK(info.level == level && (info.flags & IOUR_PLAN_INFO_FORCED), "info level");
	n = iour_plan__step_cnt(pl);
	FUZZ_CHECK(n >= 0 && (uint32_t)n == info.task_steps + info.ring_steps, "%d steps", n);
	for (i = 0; i < n; i++) {
		struct iour_plan_step st = { .sz = sizeof(st) };
		size_t len = 0, cnt = 0, k;
		uint8_t *arg;
		struct iour_insn *insns = NULL;

		n_steps++;
		FUZZ_CHECK(iour_plan__step(pl, (size_t)i, &st) == 0, "step %d", i);
		FUZZ_CHECK(st.side == IOUR_STEP_TASK || st.side == IOUR_STEP_RING, "side");
		if (st.side == IOUR_STEP_RING)
			seen_ring = true;
		else
			FUZZ_CHECK(!seen_ring, "a task step after a ring step");
		FUZZ_CHECK(iour_plan__step_arg(pl, (size_t)i, NULL, &len) == 0 && len == st.arg_len,
			   "step %d arg size %zu, step says %u", i, len, st.arg_len);
		arg = malloc(len ? len : 1);
		FUZZ_CHECK(arg != NULL, "out of memory");
		if (len) {
			size_t short_len = len - 1;

			FUZZ_CHECK(iour_plan__step_arg(pl, (size_t)i, arg, &short_len) == -ERANGE,
				   "short arg");
		}
		FUZZ_CHECK(iour_plan__step_arg(pl, (size_t)i, arg, &len) == 0, "arg");
		FUZZ_CHECK(iour_plan__step_insns(pl, (size_t)i, NULL, &cnt) == 0 &&
				   cnt == st.insn_cnt,
			   "step %d: %zu instructions, step says %u", i, cnt, st.insn_cnt);
		if (cnt) {
			insns = malloc(cnt * sizeof(*insns));
			FUZZ_CHECK(insns != NULL, "out of memory");
			FUZZ_CHECK(iour_plan__step_insns(pl, (size_t)i, insns, &cnt) == 0, "insns");
		}
		switch (st.op) {
		case IOUR_STEP_SET_NNP:
			FUZZ_CHECK(st.side == IOUR_STEP_TASK && st.call_op == 38, "nnp step");
			break;
		case IOUR_STEP_RESTRICTIONS:
			FUZZ_CHECK(level >= (st.side == IOUR_STEP_TASK ? 4U : 2U),
				   "restrictions at level %u", level);
			check_restrictions(&info, &st, arg);
			break;
		case IOUR_STEP_BPF_FILTER: {
			uint32_t pdu = arg[20], flags = rd32(arg + 12);

			FUZZ_CHECK(level >= 4, "a filter at level %u", level);
			FUZZ_CHECK(len == 72 && rd16(arg) == 1 && !rd16(arg + 2) && !rd32(arg + 4),
				   "filter header");
			FUZZ_CHECK(rd32(arg + 8) == st.opcode && st.opcode < info.op_last,
				   "filter opcode %u (op_last %u)", st.opcode, info.op_last);
			FUZZ_CHECK(rd32(arg + 16) == cnt && cnt >= 1 && cnt <= IOUR_MAX_INSNS,
				   "filter_len");
			FUZZ_CHECK(!(flags & ~3U), "filter flags %#x", flags);
			FUZZ_CHECK(pdu == 0 || (st.opcode == 45 && pdu == 12) ||
					   ((st.opcode == 18 || st.opcode == 28) && pdu == 24) ||
					   (st.opcode == 16 && pdu == 24 && level >= 5),
				   "pdu_size %u for opcode %u at level %u", pdu, st.opcode, level);
			for (k = 21; k < 72; k++)
				if (k < 24 || k >= 32)
					FUZZ_CHECK(arg[k] == 0, "filter byte %zu not zero", k);
			FUZZ_CHECK(iour_cbpf_validate(insns, cnt, 0, NULL) == 0,
				   "a planned filter fails the validator");
			n_progs++;
			last_filter[st.side] = i;
			if (flags & 1) {
				FUZZ_CHECK(deny_rest[st.side] == -1, "two DENY_REST filters");
				deny_rest[st.side] = i;
			}
			break;
		}
		case IOUR_STEP_ENABLE_RINGS:
			FUZZ_CHECK(st.side == IOUR_STEP_RING && len == 0, "enable step");
			break;
		case IOUR_STEP_COMPANION:
			FUZZ_CHECK(st.side == IOUR_STEP_TASK && len == 16 && cnt >= 1,
				   "companion");
			FUZZ_CHECK(iour_cbpf_validate(insns, cnt, IOUR_VALIDATE_GENERIC_ONLY,
						      NULL) == 0,
				   "the companion fails the generic checker");
			for (k = 0; k < cnt; k++)
				if (insns[k].code == 0x20)
					FUZZ_CHECK(insns[k].k < 64 && !(insns[k].k & 3),
						   "companion load at %u", insns[k].k);
			n_progs++;
			break;
		default:
			FUZZ_CHECK(0, "unknown step op %u", st.op);
		}
		free(insns);
		free(arg);
	}
	for (i = 0; i < 2; i++)
		FUZZ_CHECK(deny_rest[i] == -1 || deny_rest[i] == last_filter[i],
			   "DENY_REST on step %d, but the last filter is step %d", deny_rest[i],
			   last_filter[i]);
	FUZZ_CHECK(iour_plan__step(pl, (size_t)n, &(struct iour_plan_step){ .sz = 64 }) == -ERANGE,
		   "step past the end");

	check_two_call_text(plan_describe, pl, "plan describe");
	rep = iour_plan__report(pl);
	FUZZ_CHECK(rep != NULL, "no report");
	st_status = iour_report__status(rep);
	FUZZ_CHECK(st_status >= 0 && iour_status_str(st_status) != NULL, "status %d", st_status);
	FUZZ_CHECK(iour_report__flags(rep) >= 0, "report flags");
	n = iour_report__decision_cnt(rep);
	FUZZ_CHECK(n >= 0, "decisions %d", n);
	for (i = 0; i < n; i++) {
		struct iour_decision d = { .sz = sizeof(d) };

		FUZZ_CHECK(iour_report__decision(rep, (size_t)i, &d) == 0 && d.text &&
				   d.kind >= 1 && d.kind <= IOUR_DECISION_FAILED,
			   "decision %d", i);
	}
	check_two_call_text(report_describe, rep, "report describe");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const int plan_errs[] = { 0, -EINVAL, -EACCES, -EPERM, -EBUSY, -ENOMEM };
	struct fz in = { data, size };
	struct iour_plan_opts po = { .sz = sizeof(po), .flags = IOUR_PLAN_FORCE_LEVEL };
	struct iour_policy *p;
	struct iour_plan *pl = NULL, *pl2 = NULL;
	uint8_t parts = fz_u8(&in);
	uint32_t attr, level;
	size_t i;
	int rc;

	n_policies++;
	FUZZ_CHECK(iour_policy__new(NULL, &p) == 0, "policy");
	if (parts & 1) {
		struct iour_ruleset *rs = make_ruleset(&in);

		FUZZ_CHECK(iour_policy__set_ruleset(p, rs) == 0, "set_ruleset");
		iour_ruleset__free(rs);
	}
	if (parts & 2) {
		struct iour_filter *f = make_filter(&in);

		rc = iour_policy__set_filter(p, f);
		FUZZ_CHECK(rc == 0, "set_filter = %d", rc);
		iour_filter__free(f);
	}
	if (parts & 4)
		set_progs(&in, p);
	for (attr = IOUR_POLICY_ATTR__MIN + 1; attr < IOUR_POLICY_ATTR__MAX; attr++) {
		uint32_t lo, hi, def, v, got;

		FUZZ_CHECK(iour_policy_attr_bounds(attr, &lo, &hi, &def) == 0 && lo <= def &&
				   def <= hi,
			   "attr %u bounds", attr);
		if (!(fz_u8(&in) & 1))
			continue;
		v = lo + fz_u8(&in) % (hi - lo + 2); /* one past the range too */
		rc = iour_policy__set_attr(p, attr, v);
		FUZZ_CHECK(v <= hi ? rc == 0 : rc < 0, "set_attr(%u, %u) = %d", attr, v, rc);
		FUZZ_CHECK(iour_policy__get_attr(p, attr, &got) == 0 && (rc || got == v),
			   "get_attr");
	}

	level = fz_u8(&in) % 7; /* 6 is no level */
	po.level = level;
	rc = iour_policy__plan(p, &po, &pl);
	if (level > 5) {
		FUZZ_CHECK(rc == -EINVAL, "level %u planned: %d", level, rc);
	} else {
		bool documented = false;

		for (i = 0; i < sizeof(plan_errs) / sizeof(plan_errs[0]); i++)
			documented |= rc == plan_errs[i];
		FUZZ_CHECK(documented, "plan at level %u = %d (%s)", level, rc, iour_errname(rc));
	}
	if (rc == 0) {
		char *a, *b;
		size_t la = 0, lb = 0;

		n_plans++;
		check_plan(pl, level);
		/* Planning is deterministic. */
		FUZZ_CHECK(iour_policy__plan(p, &po, &pl2) == 0, "second plan");
		FUZZ_CHECK(iour_plan__describe(pl, NULL, &la) == 0 &&
				   iour_plan__describe(pl2, NULL, &lb) == 0 && la == lb,
			   "two plans of one policy differ in size");
		a = malloc(la);
		b = malloc(lb);
		FUZZ_CHECK(a && b, "out of memory");
		FUZZ_CHECK(iour_plan__describe(pl, a, &la) == 0 &&
				   iour_plan__describe(pl2, b, &lb) == 0 && !memcmp(a, b, la),
			   "two plans of one policy differ");
		free(a);
		free(b);
		iour_plan__free(pl2);
	}
	iour_plan__free(pl);
	iour_policy__free(p);
	return 0;
}
