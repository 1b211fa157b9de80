/* SPDX-License-Identifier: MIT */
/*
 * iour-restrict compile: the dry run of a policy file.  The policy is
 * planned for a kernel (the running one, Linux X.Y from the library's
 * tables, or a feature level) and the plan is printed: the kernel, every
 * step with its argument bytes and the disassembly of every program, and
 * the report the plan expects.  Nothing is applied.
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cli.h"

const char cli_help_compile[] =
"Usage: iour-restrict compile POLICY [--kernel X.Y | --level N]\n"
"                             [--mechanism task|broker|companion|ring]\n"
"                             [--format text|json|c]\n"
"\n"
"Plan the policy file POLICY for a kernel and print the plan without\n"
"applying anything: the kernel it is for, every step (system call) with its\n"
"argument (restriction entries, filter headers), the disassembly of every\n"
"program (argument filters, the seccomp companion), and the report the plan\n"
"expects: how completely the policy would be enforced and every rule that\n"
"had to be dropped, tightened, loosened or clamped on that kernel.\n"
"\n"
"Options:\n"
"  --kernel X.Y           plan for Linux X.Y, described from the library's\n"
"                         tables (opcode limits, gate semantics, payloads);\n"
"                         the policy's minKernel conditions are read for X.Y\n"
"  --level N              plan for a representative kernel of feature level\n"
"                         N (0 to 5; see 'iour-restrict probe')\n"
"                         (default: the running kernel, probed)\n"
"  --mechanism M          the mechanism to plan for: task (task restrictions,\n"
"                         Linux 7.0+), broker (the ring broker restricts\n"
"                         every ring the program creates), companion\n"
"                         (io_uring_setup fails) or ring (one ring)\n"
"                         (default: the one run uses on that kernel)\n"
"  --format F             text (default: the dry run as text), json (one\n"
"                         object: kernel, steps with their bytes and\n"
"                         programs, expected report) or c (a C source file:\n"
"                         each step's argument bytes and program as arrays)\n"
"  -h, --help             show this help\n"
"\n"
"Example: iour-restrict compile web.json --kernel 7.0\n"
"\n"
"Exit status: 0 on success; 1 if planning failed; 2 on a usage error;\n"
"3 if POLICY cannot be read or is not valid.\n";

enum format { FMT_TEXT, FMT_JSON, FMT_C };

static const char *side_str(uint32_t side)
{
	return side == IOUR_STEP_RING ? "ring" : "task";
}

static const char *op_str(uint32_t op)
{
	switch (op) {
	case IOUR_STEP_SET_NNP:
		return "set_no_new_privs";
	case IOUR_STEP_RESTRICTIONS:
		return "restrictions";
	case IOUR_STEP_BPF_FILTER:
		return "bpf_filter";
	case IOUR_STEP_ENABLE_RINGS:
		return "enable_rings";
	case IOUR_STEP_COMPANION:
		return "seccomp_companion";
	default:
		return "unknown";
	}
}

/* The step's argument bytes (malloc'd) and program (malloc'd, or NULL). */
static int step_data(const struct iour_plan *pl, size_t i, uint8_t **arg, size_t *arg_len,
		     struct iour_insn **insns, size_t *cnt)
{
	int r;

	*arg = NULL;
	*insns = NULL;
	*arg_len = 0;
	*cnt = 0;
	r = iour_plan__step_arg(pl, i, NULL, arg_len);
	if (r)
		return r;
	*arg = malloc(*arg_len ? *arg_len : 1);
	if (!*arg)
		return -ENOMEM;
	r = iour_plan__step_arg(pl, i, *arg, arg_len);
	if (r)
		return r;
	r = iour_plan__step_insns(pl, i, NULL, cnt);
	if (r || !*cnt)
		return r;
	*insns = calloc(*cnt, sizeof(**insns));
	if (!*insns)
		return -ENOMEM;
	return iour_plan__step_insns(pl, i, *insns, cnt);
}

/* The disassembly of a step's program in @format, malloc'd. */
static char *disasm(const struct iour_plan_step *st, const struct iour_insn *insns, size_t cnt,
		    uint32_t format)
{
	uint32_t op = st->op == IOUR_STEP_COMPANION || st->opcode >= 65 ? IOUR_OPCODE_ANY :
									  st->opcode;
	size_t len = 0;
	char *buf;

	if (st->op == IOUR_STEP_COMPANION)
		format |= IOUR_DISASM_SECCOMP;
	if (iour_cbpf_disasm(insns, cnt, op, format, NULL, &len))
		return NULL;
	buf = malloc(len);
	if (buf && iour_cbpf_disasm(insns, cnt, op, format, buf, &len)) {
		free(buf);
		return NULL;
	}
	return buf;
}

static int print_text(const struct iour_plan *pl, const char *target)
{
	size_t len = 0;
	char *buf;
	int r;

	r = iour_plan__describe(pl, NULL, &len);
	if (r)
		return cli_fail(r, "iour_plan__describe");
	buf = malloc(len);
	if (!buf)
		return cli_fail(-ENOMEM, "iour_plan__describe");
	r = iour_plan__describe(pl, buf, &len);
	if (r) {
		free(buf);
		return cli_fail(r, "iour_plan__describe");
	}
	printf("# %s, planned for %s\n", "iour-restrict compile", target);
	fputs(buf, stdout);
	free(buf);
	return CLI_OK;
}

static void json_report(const struct iour_report *rep)
{
	struct iour_decision d = { .sz = sizeof(d) };
	int n = iour_report__decision_cnt(rep), first = 1;

	printf("  \"report\": {\n    \"status\": ");
	cli_json_str(stdout, iour_status_str(iour_report__status(rep)), false);
	printf(",\n    \"mechanism\": %d,\n    \"flags\": %d,\n    \"decisions\": [",
	       iour_report__mechanism(rep), iour_report__flags(rep));
	for (int i = 0; i < n; i++) {
		if (iour_report__decision(rep, (size_t)i, &d))
			continue;
		printf("%s\n      { \"kind\": \"%s\", \"reason\": %u, ", first ? "" : ",",
		       iour_decision_kind_str(d.kind), d.reason);
		if (d.opcode != IOUR_DECISION_NO_OPCODE) {
			const char *name = iour_opcode_name(d.opcode);

			printf("\"opcode\": ");
			if (name)
				cli_json_str(stdout, name, false);
			else
				printf("%u", d.opcode);
			printf(", ");
		}
		printf("\"text\": ");
		cli_json_str(stdout, d.text ? d.text : "", false);
		printf(" }");
		first = 0;
	}
	printf("%s]\n  }\n", first ? "" : "\n    ");
}

static int print_json(const struct iour_plan *pl, const char *path)
{
	struct iour_plan_info info = { .sz = sizeof(info) };
	int n = iour_plan__step_cnt(pl), r;

	r = iour_plan__info(pl, &info);
	if (r)
		return cli_fail(r, "iour_plan__info");
	printf("{\n  \"policy\": ");
	cli_json_str(stdout, path, false);
	printf(",\n  \"kernel\": { \"level\": %u, \"op_last\": %u, \"reg_last\": %u, "
	       "\"split_gates\": %s, \"forced\": %s },\n",
	       info.level, info.op_last, info.reg_last, info.split_gates ? "true" : "false",
	       info.flags & IOUR_PLAN_INFO_FORCED ? "true" : "false");
	printf("  \"target\": \"%s\",\n  \"refused\": %s,\n  \"steps\": [",
	       info.target == IOUR_POLICY_TARGET_RING ? "ring" : "task",
	       info.flags & IOUR_PLAN_INFO_REFUSED ? "true" : "false");
	for (int i = 0; i < n; i++) {
		struct iour_plan_step st = { .sz = sizeof(st) };
		struct iour_insn *insns;
		uint8_t *arg;
		size_t alen, cnt;
		char *dis;

		r = iour_plan__step(pl, (size_t)i, &st);
		if (!r)
			r = step_data(pl, (size_t)i, &arg, &alen, &insns, &cnt);
		if (r)
			return cli_fail(r, "reading step %d of the plan", i + 1);
		printf("%s\n    { \"side\": \"%s\", \"op\": \"%s\", \"call_op\": %u, "
		       "\"nr_args\": %u", i ? "," : "", side_str(st.side), op_str(st.op),
		       st.call_op, st.nr_args);
		if (st.opcode != UINT32_MAX) {
			const char *name = iour_opcode_name(st.opcode);

			printf(", \"opcode\": ");
			if (name)
				cli_json_str(stdout, name, false);
			else
				printf("%u", st.opcode);
		}
		if (st.op == IOUR_STEP_RESTRICTIONS)
			printf(", \"entries\": %u", st.entries);
		printf(",\n      \"arg\": \"");
		for (size_t b = 0; b < alen; b++)
			printf("%02x", arg[b]);
		printf("\"");
		if (cnt) {
			printf(",\n      \"insns\": [");
			for (size_t k = 0; k < cnt; k++)
				printf("%s[%u, %u, %u, %u]", k ? ", " : "", insns[k].code,
				       insns[k].jt, insns[k].jf, insns[k].k);
			printf("],\n      \"disasm\": ");
			dis = disasm(&st, insns, cnt, IOUR_DISASM_TEXT);
			cli_json_str(stdout, dis ? dis : "", false);
			free(dis);
		}
		printf(" }");
		free(arg);
		free(insns);
	}
	printf("%s],\n", n > 0 ? "\n  " : "");
	json_report(iour_plan__report(pl));
	printf("}\n");
	return CLI_OK;
}

/* The expected report and the plan's text, as a C comment. */
static int print_c_comment(const struct iour_plan *pl)
{
	size_t len = 0;
	char *buf, *p;

	if (iour_plan__describe(pl, NULL, &len) || !(buf = malloc(len)))
		return cli_fail(-ENOMEM, "iour_plan__describe");
	if (iour_plan__describe(pl, buf, &len)) {
		free(buf);
		return cli_fail(-ENOMEM, "iour_plan__describe");
	}
	/* A "*" followed by "/" inside would end the comment early. */
	while ((p = strstr(buf, "*/")))
		p[1] = '|';
	printf("/*\n");
	for (p = strtok(buf, "\n"); p; p = strtok(NULL, "\n"))
		printf(" * %s\n", p);
	printf(" */\n");
	free(buf);
	return CLI_OK;
}

static int print_c(const struct iour_plan *pl, const char *path)
{
	int n = iour_plan__step_cnt(pl), r;

	printf("/* Generated by iour-restrict compile from ");
	for (const char *s = path; *s; s++)
		putchar(*s == '*' && s[1] == '/' ? '|' : (unsigned char)*s < 0x20 ? '?' : *s);
	printf(". */\n");
	r = print_c_comment(pl);
	if (r)
		return r;
	printf("#include <linux/filter.h>\n#include <stdint.h>\n");
	for (int i = 0; i < n; i++) {
		struct iour_plan_step st = { .sz = sizeof(st) };
		struct iour_insn *insns;
		uint8_t *arg;
		size_t alen, cnt;
		char *dis;

		r = iour_plan__step(pl, (size_t)i, &st);
		if (!r)
			r = step_data(pl, (size_t)i, &arg, &alen, &insns, &cnt);
		if (r)
			return cli_fail(r, "reading step %d of the plan", i + 1);
		printf("\n/* step %d: %s, %s", i + 1, side_str(st.side), op_str(st.op));
		if (st.opcode != UINT32_MAX && iour_opcode_name(st.opcode))
			printf(" for %s", iour_opcode_name(st.opcode));
		printf(" (call op %u, nr_args %u) */\n", st.call_op, st.nr_args);
		if (alen) {
			printf("const uint8_t iour_step%d_arg[%zu] = {", i + 1, alen);
			for (size_t b = 0; b < alen; b++)
				printf("%s0x%02x,", b % 12 ? " " : "\n\t", arg[b]);
			printf("\n};\n");
		}
		if (cnt) {
			dis = disasm(&st, insns, cnt, IOUR_DISASM_C_ARRAY);
			if (!dis) {
				free(arg);
				free(insns);
				return cli_fail(-ENOMEM, "disassembling step %d", i + 1);
			}
			/* "struct sock_filter filter[]" named after the step. */
			{
				char *name = strstr(dis, "filter[]");

				if (name && name == strstr(dis, "filter[]")) {
					*name = '\0';
					printf("const %siour_step%d_prog[]%s", dis, i + 1,
					       name + strlen("filter[]"));
				} else {
					fputs(dis, stdout);
				}
			}
			free(dis);
		}
		free(arg);
		free(insns);
	}
	return CLI_OK;
}

int cmd_compile(int argc, char **argv)
{
	enum { O_KERNEL = 256, O_LEVEL, O_FORMAT, O_MECH };
	static const struct option lo[] = {
		{ "mechanism", required_argument, NULL, O_MECH },
		{ "kernel", required_argument, NULL, O_KERNEL },
		{ "level", required_argument, NULL, O_LEVEL },
		{ "format", required_argument, NULL, O_FORMAT },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct iour_plan_opts po = { .sz = sizeof(po) };
	struct iour_features feat;
	struct iour_policy *pol = NULL;
	struct iour_plan *plan = NULL;
	enum format fmt = FMT_TEXT;
	enum cli_mech mech = CLI_MECH_AUTO, used;
	const char *path = NULL;
	uint32_t kver = 0;
	uint64_t level = 0;
	bool have_level = false;
	char target[96], kv[16];
	int c, rc;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", lo, NULL)) != -1) {
		switch (c) {
		case O_KERNEL:
			/* 0.0 would mean "the running kernel" to the loader */
			if (cli_parse_kver(optarg, &kver) || !kver)
				return cli_usage("--kernel: '%s' is not a kernel version X.Y", optarg);
			break;
		case O_LEVEL:
			if (cli_parse_u64(optarg, &level) || level > IOUR_LEVEL_MAX)
				return cli_usage("--level: '%s' is not a feature level 0 to %d", optarg,
						 IOUR_LEVEL_MAX);
			have_level = true;
			break;
		case O_FORMAT:
			if (!strcmp(optarg, "text"))
				fmt = FMT_TEXT;
			else if (!strcmp(optarg, "json"))
				fmt = FMT_JSON;
			else if (!strcmp(optarg, "c"))
				fmt = FMT_C;
			else
				return cli_usage("--format: '%s' is not text, json or c", optarg);
			break;
		case O_MECH:
			if (cli_mech_parse(optarg, &mech))
				return CLI_USAGE;
			break;
		case 'h':
			return cli_help(cli_help_compile);
		default:
			return cli_getopt_error(c, argv);
		}
	}
	if (cli_policy_operand(argc, argv, &path))
		return CLI_USAGE;
	if (kver && have_level)
		return cli_usage("--kernel and --level exclude each other");
	snprintf(target, sizeof(target), "the running kernel");
	if (kver) {
		cli_kver_str(kver, kv, sizeof(kv));
		snprintf(target, sizeof(target), "Linux %s (from the library's tables)", kv);
		feat.sz = sizeof(feat);
		(void)iour_kernel_describe(kver, &feat);
		po.features = &feat;
	} else if (have_level) {
		snprintf(target, sizeof(target), "feature level %u", (unsigned int)level);
		po.flags = IOUR_PLAN_FORCE_LEVEL;
		po.level = (uint32_t)level;
	}

	if (have_level) {
		/* The representative kernel of the level, for minKernel;
		 * level 0 has none (0 would mean the running kernel) and
		 * takes level 1's. */
		int rep = iour_level_kernel((uint32_t)level);

		if (rep <= 0)
			rep = iour_level_kernel(IOUR_LEVEL_IO_URING);
		rc = cli_policy_load(path, (uint32_t)rep, &pol);
	} else {
		rc = cli_policy_load(path, kver, &pol);
	}
	if (rc)
		return rc;
	rc = cli_plan_mech(pol, &po, mech, &used, &plan);
	if (rc) {
		rc = cli_plan_mech_fail(rc, &po, target);
		goto out;
	}
	{
		size_t tl = strlen(target);

		snprintf(target + tl, sizeof(target) - tl, ", mechanism %s", cli_mech_name(used));
	}
	switch (fmt) {
	case FMT_TEXT:
		rc = print_text(plan, target);
		break;
	case FMT_JSON:
		rc = print_json(plan, path);
		break;
	case FMT_C:
		rc = print_c(plan, path);
		break;
	}
	if (!rc && fflush(stdout))
		rc = cli_fail(-errno, "writing the output");
out:
	iour_plan__free(plan);
	iour_policy__free(pol);
	return rc;
}
