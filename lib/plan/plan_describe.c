/* SPDX-License-Identifier: MIT */
/*
 * The dry run: a plan as text, each step with its decoded argument bytes
 * and its program's disassembly, followed by the expected report.
 */
#include <stdio.h>
#include <stdlib.h>

#include "base/internal.h"
#include "planner.h"
#include "iouring_restrict/names.h"

static const char *restriction_kind(uint16_t k)
{
	switch (k) {
	case KIO_RESTRICTION_REGISTER_OP:
		return "REGISTER_OP";
	case KIO_RESTRICTION_SQE_OP:
		return "SQE_OP";
	case KIO_RESTRICTION_SQE_FLAGS_ALLOWED:
		return "SQE_FLAGS_ALLOWED";
	case KIO_RESTRICTION_SQE_FLAGS_REQUIRED:
		return "SQE_FLAGS_REQUIRED";
	default:
		return "?";
	}
}

static void flags_text(struct iour__sb *sb, uint8_t f)
{
	unsigned bit;
	bool first = true;

	iour__sb_printf(sb, "0x%02x", f);
	if (!f)
		return;
	iour__sb_printf(sb, " (");
	for (bit = 1; bit <= 0x40; bit <<= 1) {
		const char *n;

		if (!(f & bit))
			continue;
		n = iour_sqe_flag_name(bit);
		iour__sb_printf(sb, "%s%s", first ? "" : "|", n ? n : "?");
		first = false;
	}
	iour__sb_printf(sb, ")");
}

static void describe_entries(struct iour__sb *sb, const struct kio_restriction *e, size_t n)
{
	size_t i;
	char tmp[24];

	for (i = 0; i < n; i++) {
		iour__sb_printf(sb, "        [%3zu] %-18s ", i, restriction_kind(e[i].opcode));
		switch (e[i].opcode) {
		case KIO_RESTRICTION_REGISTER_OP: {
			const char *nm = iour_register_op_name(e[i].register_op);

			iour__sb_printf(sb, "%u %s\n", e[i].register_op, nm ? nm : "?");
			break;
		}
		case KIO_RESTRICTION_SQE_OP:
			iour__sb_printf(sb, "%u %s\n", e[i].sqe_op,
					iour__op_label(e[i].sqe_op, tmp, sizeof(tmp)));
			break;
		default:
			flags_text(sb, e[i].sqe_flags);
			iour__sb_printf(sb, "\n");
		}
	}
}

/* `seccomp`: the companion's program, else an io_uring filter of `opcode`. */
static void describe_prog(struct iour__sb *sb, const struct iour_insn *insns, size_t cnt,
			  uint32_t opcode, bool seccomp)
{
	uint32_t fmt = IOUR_DISASM_TEXT | (seccomp ? IOUR_DISASM_SECCOMP : 0);
	size_t len = 0;
	char *text, *line, *save = NULL;

	if (iour_cbpf_disasm(insns, cnt, opcode, fmt, NULL, &len)) {
		iour__sb_printf(sb, "        (program of %zu instructions)\n", cnt);
		return;
	}
	text = iour__malloc(len);
	if (!text) {
		sb->oom = true;
		return;
	}
	if (iour_cbpf_disasm(insns, cnt, opcode, fmt, text, &len) == 0) {
		for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
			iour__sb_printf(sb, "        %s\n", line);
	}
	iour__free(text);
}

static void describe_step(struct iour__sb *sb, const struct iour_plan *pl, size_t i)
{
	const struct iour__step *s = &pl->steps[i];
	const char *fd = s->side == IOUR_STEP_TASK ? "-1" : "ring";
	char tmp[24];

	iour__sb_printf(sb, "  %zu. [%s] ", i + 1, s->side == IOUR_STEP_TASK ? "task" : "ring");
	switch (s->op) {
	case IOUR_STEP_SET_NNP:
		iour__sb_printf(sb, "prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)\n");
		break;
	case IOUR_STEP_RESTRICTIONS: {
		const uint8_t *ents = s->arg;

		iour__sb_printf(sb,
				"io_uring_register(%s, IORING_REGISTER_RESTRICTIONS, arg, %u): "
				"%u entries, %zu bytes\n",
				fd, s->nr_args, s->entries, s->arg_len);
		if (s->side == IOUR_STEP_TASK) {
			struct kio_task_restriction h;

			memcpy(&h, s->arg, sizeof(h));
			iour__sb_printf(sb, "      header: flags %u, nr_res %u, resv 0\n", h.flags,
					h.nr_res);
			ents += sizeof(h);
		}
		{
			struct kio_restriction *e = iour__malloc(s->entries * sizeof(*e) + 1);

			if (!e) {
				sb->oom = true;
				return;
			}
			memcpy(e, ents, s->entries * sizeof(*e));
			describe_entries(sb, e, s->entries);
			iour__free(e);
		}
		break;
	}
	case IOUR_STEP_BPF_FILTER: {
		struct kio_bpf bpf;

		memcpy(&bpf, s->arg, sizeof(bpf));
		iour__sb_printf(sb, "io_uring_register(%s, IORING_REGISTER_BPF_FILTER, arg, 1)\n",
				fd);
		iour__sb_printf(sb,
				"      cmd_type %u, opcode %u (%s), flags %s%s%s, pdu_size %u, "
				"filter_len %u\n",
				bpf.cmd_type, bpf.filter.opcode,
				iour__op_label(bpf.filter.opcode, tmp, sizeof(tmp)),
				bpf.filter.flags ? "" : "0",
				(bpf.filter.flags & KIO_BPF_FILTER_SZ_STRICT) ? "SZ_STRICT" : "",
				(bpf.filter.flags & KIO_BPF_FILTER_DENY_REST) ?
					((bpf.filter.flags & KIO_BPF_FILTER_SZ_STRICT) ?
						 "|DENY_REST" :
						 "DENY_REST") :
					"",
				bpf.filter.pdu_size, bpf.filter.filter_len);
		describe_prog(sb, s->insns, s->insn_cnt, s->opcode, false);
		break;
	}
	case IOUR_STEP_ENABLE_RINGS:
		iour__sb_printf(sb,
				"io_uring_register(ring, IORING_REGISTER_ENABLE_RINGS, NULL, 0)\n");
		break;
	case IOUR_STEP_COMPANION:
		iour__sb_printf(sb,
				"seccomp(SECCOMP_SET_MODE_FILTER, %u, prog): %zu instructions\n",
				s->nr_args, s->insn_cnt);
		describe_prog(sb, s->insns, s->insn_cnt, IOUR_OPCODE_ANY, true);
		break;
	default:
		iour__sb_printf(sb, "?\n");
	}
}

static const char *kernel_origin(uint32_t o)
{
	switch (o) {
	case IOUR__KERNEL_FORCED:
		return "forced";
	case IOUR__KERNEL_EMULATED:
		return "emulated";
	case IOUR__KERNEL_DESCRIBED:
		return "described";
	default:
		return "probed";
	}
}

/* Documented in include/iouring_restrict/plan.h */
int iour_plan__describe(const struct iour_plan *plan, char *buf, size_t *len)
{
	struct iour__sb sb = { 0 };
	const struct iour__kernel *t;
	size_t i;

	if (!plan || !len)
		return -EINVAL;
	t = &plan->kernel;
	iour__sb_printf(&sb, "plan for %s, on %s\n",
			plan->brokered ? "every ring the task creates (ring broker)" :
			plan->target == IOUR_POLICY_TARGET_TASK ? "the calling task" :
								  "the ring",
			t->name);
	iour__sb_printf(
		&sb,
		"kernel (%s): feature level %u, IORING_OP_LAST %u, IORING_REGISTER_LAST %u, "
		"%s gates\n",
		kernel_origin(t->origin), t->level, t->op_last, t->reg_last,
		t->split ? "split (7.0+)" : "coupled (before 7.0)");
	if (plan->refused)
		iour__sb_printf(&sb, "refused: applying this plan fails (hard requirement)\n");
	iour__sb_printf(&sb, "steps: %zu (%zu task, %zu ring)\n", plan->nsteps, plan->n_task,
			plan->nsteps - plan->n_task);
	for (i = 0; i < plan->nsteps; i++)
		describe_step(&sb, plan, i);
	iour__sb_printf(&sb, "expected report:\n");
	iour__sb_report(&sb, &plan->rep, "  ");
	return iour__sb_out(&sb, buf, len);
}
