/* SPDX-License-Identifier: MIT */
/*
 * iour-restrict filter: compile an argument filter from rules given on
 * the command line and print the program;
 * iour-restrict sim: compile it and run it on filter contexts with the
 * library's simulator.
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/cli.h"
#include "rules/expr.h"

#define FILTER_OPTIONS_HELP \
"Filter (see 'iour-restrict help rules' for the expression language):\n" \
"@{filter-op}\n" \
"  --allow RULE           allow requests for which RULE holds; repeatable\n" \
"  --deny RULE            deny requests for which RULE holds; repeatable.\n" \
"                         Rules are tried in the order given; the first that\n" \
"                         holds decides\n" \
"  --default allow|deny   the verdict when no rule holds (default deny)\n" \
"  --max-insns N          refuse programs longer than N instructions (1 to\n" \
"                         4096; default 4096)\n" \
"  --addr4-literal        CONNECT: IPv4 rules and 'family' see only what the\n" \
"                         request gives (IOUR_FILTER_ADDR4_LITERAL); by\n" \
"                         default a connect to ::ffff:a.b.c.d is judged as\n" \
"                         the IPv4 connect to a.b.c.d it becomes\n"

const char cli_help_filter[] =
"Usage: iour-restrict filter --op OPCODE [--allow RULE | --deny RULE]...\n"
"                            [--default allow|deny] [--format text|c|raw]\n"
"\n"
"Compile the rules into the classic-BPF program the kernel runs for each\n"
"request of OPCODE (IORING_REGISTER_BPF_FILTER, Linux 7.0+) and print it.\n"
"\n"
FILTER_OPTIONS_HELP
"\n"
"Output:\n"
"  --format text          '#' lines describing the program, then the listing\n"
"                         of iour_cbpf_disasm() (default)\n"
"  --format c             a struct sock_filter C initialiser\n"
"  --format raw           the instructions' raw bytes (8 per instruction)\n"
"  -h, --help             show this help\n"
"\n"
"Example:\n"
"  iour-restrict filter --op SOCKET --allow 'family==AF_INET,type==SOCK_STREAM' \\\n"
"      --allow 'family==AF_UNIX' --default deny\n"
"\n"
"Exit status: 0 on success; 1 if compiling failed (a program too large);\n"
"2 on a usage error, including every error in a rule.\n";

const char cli_help_sim[] =
"Usage: iour-restrict sim --op OPCODE [--allow RULE | --deny RULE]...\n"
"                         [--default allow|deny] --ctx FIELDS... [--expect V]\n"
"\n"
"Compile the rules as 'filter' does, then run the program with the library's\n"
"simulator (iour_cbpf_run, the kernel's semantics) on filter contexts built\n"
"like the kernel builds them (iour_ctx_*), and print the verdict, the return\n"
"value and the number of instructions executed.\n"
"\n"
FILTER_OPTIONS_HELP
"\n"
"Simulation:\n"
"  --ctx FIELDS           a request's context, e.g. 'family=AF_INET,type=1';\n"
"                         repeatable, each run separately (see 'iour-restrict\n"
"                         help rules')\n"
"  --expect allow|deny    exit 1 unless every context gets this verdict\n"
"  --show-ctx             also print each context's 40 bytes\n"
"  -h, --help             show this help\n"
"\n"
"Example:\n"
"  iour-restrict sim --op SOCKET --allow 'family==AF_UNIX' \\\n"
"      --ctx 'family=AF_UNIX,type=SOCK_STREAM' --ctx 'family=AF_INET'\n"
"\n"
"Exit status: 0 on success; 1 if a verdict differs from --expect or the\n"
"program could not be compiled or run; 2 on a usage error.\n";

struct rule_arg {
	uint32_t verdict;
	const char *text;
};

struct fargs {
	bool have_op;
	uint32_t op;
	struct rule_arg *rules;
	size_t nrules;
	int default_verdict; /* -1: not given */
	uint32_t max_insns;
	const char *format;
	const char **ctxs;
	size_t nctxs;
	int expect; /* -1: not given */
	bool show_ctx;
	bool addr4_literal;
};

enum { O_OP = 256, O_ALLOW, O_DENY, O_DEFAULT, O_MAX_INSNS, O_FORMAT, O_CTX, O_EXPECT,
       O_SHOW_CTX, O_ADDR4_LITERAL };

static int parse_verdict(const char *s, const char *what, int *out)
{
	if (!strcasecmp(s, "allow"))
		*out = IOUR_ALLOW;
	else if (!strcasecmp(s, "deny"))
		*out = IOUR_DENY;
	else
		return cli_usage("%s: '%s' is not allow or deny", what, s);
	return 0;
}

static void free_args(struct fargs *a)
{
	free(a->rules);
	free(a->ctxs);
}

/* Reads the options of filter (@sim false) or sim (@sim true).  Returns
 * 0, or an exit code. */
static int parse_args(int argc, char **argv, bool sim, struct fargs *a)
{
	static const struct option lo[] = {
		{ "op", required_argument, NULL, O_OP },
		{ "allow", required_argument, NULL, O_ALLOW },
		{ "deny", required_argument, NULL, O_DENY },
		{ "default", required_argument, NULL, O_DEFAULT },
		{ "max-insns", required_argument, NULL, O_MAX_INSNS },
		{ "format", required_argument, NULL, O_FORMAT },
		{ "ctx", required_argument, NULL, O_CTX },
		{ "expect", required_argument, NULL, O_EXPECT },
		{ "show-ctx", no_argument, NULL, O_SHOW_CTX },
		{ "addr4-literal", no_argument, NULL, O_ADDR4_LITERAL },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct rule_arg *rg;
	const char **cg;
	uint64_t v;
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", lo, NULL)) != -1) {
		if ((c == O_FORMAT && sim) ||
		    ((c == O_CTX || c == O_EXPECT || c == O_SHOW_CTX) && !sim))
			return cli_usage("unknown option '%s'", argv[optind - 1]);
		switch (c) {
		case 'h':
			cli_help(sim ? cli_help_sim : cli_help_filter);
			return -1;
		case O_OP:
			if (a->have_op)
				return cli_usage("--op given twice (one opcode per run)");
			if (cli_parse_opcode(optarg, &a->op))
				return cli_usage("--op: unknown request opcode '%s'%s (see '%s "
						 "names ops')", optarg,
						 cli_near(IOUR_NAME_OPCODE, optarg), CLI_PROG);
			a->have_op = true;
			break;
		case O_ALLOW:
		case O_DENY:
			rg = realloc(a->rules, (a->nrules + 1) * sizeof(*rg));
			if (!rg)
				return cli_fail(-ENOMEM, "reading the rules");
			a->rules = rg;
			rg[a->nrules].verdict = c == O_ALLOW ? IOUR_ALLOW : IOUR_DENY;
			rg[a->nrules].text = optarg;
			a->nrules++;
			break;
		case O_DEFAULT:
			if (parse_verdict(optarg, "--default", &a->default_verdict))
				return CLI_USAGE;
			break;
		case O_MAX_INSNS:
			if (cli_parse_u64(optarg, &v) || v < 1 || v > IOUR_MAX_INSNS)
				return cli_usage("--max-insns: '%s' is not 1 to %d", optarg,
						 IOUR_MAX_INSNS);
			a->max_insns = (uint32_t)v;
			break;
		case O_FORMAT:
			if (strcmp(optarg, "text") && strcmp(optarg, "c") && strcmp(optarg, "raw"))
				return cli_usage("--format: '%s' is not text, c or raw", optarg);
			a->format = optarg;
			break;
		case O_CTX:
			cg = realloc(a->ctxs, (a->nctxs + 1) * sizeof(*cg));
			if (!cg)
				return cli_fail(-ENOMEM, "reading the contexts");
			a->ctxs = cg;
			cg[a->nctxs++] = optarg;
			break;
		case O_EXPECT:
			if (parse_verdict(optarg, "--expect", &a->expect))
				return CLI_USAGE;
			break;
		case O_SHOW_CTX:
			a->show_ctx = true;
			break;
		case O_ADDR4_LITERAL:
			a->addr4_literal = true;
			break;
		default:
			return cli_getopt_error(c, argv);
		}
	}
	if (optind < argc)
		return cli_usage("unexpected argument '%s'", argv[optind]);
	if (!a->have_op)
		return cli_usage("--op OPCODE is required");
	if (!a->nrules && a->default_verdict < 0)
		return cli_usage("nothing to compile: give --allow, --deny or --default");
	if (sim && !a->nctxs)
		return cli_usage("give at least one --ctx to simulate");
	return 0;
}

/* Builds the filter and compiles the opcode's program.  Returns 0, or an
 * exit code. */
static int build(const struct fargs *a, struct iour_prog **prog)
{
	IOUR_OPTS(iour_compile_opts, co, .max_insns = a->max_insns);
	IOUR_OPTS(iour_filter_opts, fo,
		  .flags = a->addr4_literal ? IOUR_FILTER_ADDR4_LITERAL : 0);
	struct iour_filter *f = NULL;
	struct expr_rule *rule;
	struct expr_error err;
	int r, rc = CLI_OK;

	rule = malloc(sizeof(*rule));
	if (!rule)
		return cli_fail(-ENOMEM, "parsing the rules");
	r = iour_filter__new(&fo, &f);
	if (r) {
		rc = cli_fail(r, "iour_filter__new");
		goto out;
	}
	for (size_t i = 0; i < a->nrules; i++) {
		const char *what = a->rules[i].verdict == IOUR_ALLOW ? "--allow" : "--deny";

		if (expr_parse_rule(a->rules[i].text, a->op, rule, &err)) {
			expr_report(what, a->rules[i].text, &err);
			fprintf(stderr, "Try '%s help rules' for the rule language.\n", CLI_PROG);
			rc = CLI_USAGE;
			goto out;
		}
		if (rule->warning)
			cli_msg("warning: %s '%s': %s", what, a->rules[i].text, rule->warning);
		r = iour_filter__add_rule(f, a->op, a->rules[i].verdict, rule->cmps, rule->n);
		expr_rule_free(rule);
		if (r) {
			rc = cli_fail(r, "%s '%s'", what, a->rules[i].text);
			goto out;
		}
	}
	if (a->default_verdict >= 0) {
		r = iour_filter__set_default(f, a->op, (uint32_t)a->default_verdict);
		if (r) {
			rc = cli_fail(r, "--default");
			goto out;
		}
	}
	r = iour_filter__compile(f, a->op, &co, prog);
	if (r)
		rc = cli_fail(r, "iour_filter__compile");
out:
	iour_filter__free(f);
	free(rule);
	return rc;
}

static const char *kind_str(uint32_t kind)
{
	switch (kind) {
	case IOUR_PROG_ALWAYS_ALLOW:
		return "always allows: no filter is needed for it";
	case IOUR_PROG_ALWAYS_DENY:
		return "always denies: leaving the opcode out of an allow-list does the same";
	default:
		return "a filter";
	}
}

int cmd_filter(int argc, char **argv)
{
	struct fargs a = { .default_verdict = -1, .expect = -1, .format = "text" };
	struct iour_prog *p = NULL;
	uint32_t fmt;
	char *buf = NULL;
	size_t len = 0;
	int rc, r;

	rc = parse_args(argc, argv, false, &a);
	if (rc) {
		free_args(&a);
		return rc < 0 ? CLI_OK : rc;
	}
	rc = build(&a, &p);
	if (rc)
		goto out;

	fmt = !strcmp(a.format, "c") ? IOUR_DISASM_C_ARRAY
	      : !strcmp(a.format, "raw") ? IOUR_DISASM_RAW : IOUR_DISASM_TEXT;
	r = iour_cbpf_disasm(iour_prog__insns(p), iour_prog__insn_cnt(p), a.op, fmt, NULL, &len);
	if (!r) {
		buf = malloc(len);
		r = buf ? iour_cbpf_disasm(iour_prog__insns(p), iour_prog__insn_cnt(p), a.op, fmt,
					   buf, &len)
			: -ENOMEM;
	}
	if (r) {
		rc = cli_fail(r, "iour_cbpf_disasm");
		goto out;
	}
	if (fmt == IOUR_DISASM_TEXT) {
		printf("# %s (%u): %s, %zu instruction%s, pdu_size %u\n", iour_opcode_name(a.op),
		       a.op, kind_str(iour_prog__kind(p)), iour_prog__insn_cnt(p),
		       iour_prog__insn_cnt(p) == 1 ? "" : "s", iour_prog__pdu_size(p));
		for (size_t i = 0; i < a.nrules; i++) {
			printf("# %s ", a.rules[i].verdict == IOUR_ALLOW ? "allow" : "deny ");
			cli_put_escaped(stdout, a.rules[i].text);
			putchar('\n');
		}
		printf("# default %s\n", a.default_verdict == IOUR_ALLOW ? "allow" : "deny");
		if (a.op == IOUR_OP_CONNECT)
			printf("# %s\n",
			       a.addr4_literal ?
				       "--addr4-literal: IPv4 rules see only AF_INET requests" :
				       "a connect to ::ffff:a.b.c.d is judged as the IPv4 connect "
				       "to a.b.c.d (allow rules: only so)");
		fputs(buf, stdout);
	} else if (fmt == IOUR_DISASM_C_ARRAY) {
		fputs(buf, stdout);
	} else {
		fwrite(buf, 1, len, stdout);
	}
	if (fflush(stdout))
		rc = CLI_FAIL;
out:
	free(buf);
	iour_prog__free(p);
	free_args(&a);
	return rc;
}

int cmd_sim(int argc, char **argv)
{
	struct fargs a = { .default_verdict = -1, .expect = -1 };
	struct iour_sim_result res = { .sz = sizeof(res) };
	struct iour_prog *p = NULL;
	uint8_t ctx[IOUR_CTX_SIZE];
	struct expr_error err;
	size_t wrong = 0;
	int rc, r;

	rc = parse_args(argc, argv, true, &a);
	if (rc) {
		free_args(&a);
		return rc < 0 ? CLI_OK : rc;
	}
	/* Every context is checked before anything runs. */
	for (size_t i = 0; i < a.nctxs; i++) {
		if (expr_build_ctx(a.ctxs[i], a.op, ctx, &err)) {
			expr_report("--ctx", a.ctxs[i], &err);
			fprintf(stderr, "Try '%s help rules' for the context fields.\n", CLI_PROG);
			rc = CLI_USAGE;
			goto out;
		}
	}
	rc = build(&a, &p);
	if (rc)
		goto out;
	printf("# %s (%u): %s, %zu instruction%s\n", iour_opcode_name(a.op), a.op,
	       kind_str(iour_prog__kind(p)), iour_prog__insn_cnt(p),
	       iour_prog__insn_cnt(p) == 1 ? "" : "s");
	for (size_t i = 0; i < a.nctxs; i++) {
		(void)expr_build_ctx(a.ctxs[i], a.op, ctx, &err);
		r = iour_cbpf_run(iour_prog__insns(p), iour_prog__insn_cnt(p), ctx, sizeof(ctx),
				  &res);
		if (r) {
			rc = cli_fail(r, "iour_cbpf_run");
			goto out;
		}
		printf("%s: %s (return value %u, %u instruction%s executed)\n", a.ctxs[i],
		       res.allowed ? "allow" : "deny", res.retval, res.executed,
		       res.executed == 1 ? "" : "s");
		if (a.show_ctx) {
			printf("  ctx:");
			for (size_t k = 0; k < sizeof(ctx); k++)
				printf("%s%02x", k % 8 ? " " : "  ", ctx[k]);
			putchar('\n');
		}
		if (a.expect >= 0 && (int)res.allowed != a.expect)
			wrong++;
	}
	if (wrong) {
		cli_msg("%zu of %zu context(s) did not get the expected verdict '%s'", wrong,
			a.nctxs, a.expect == IOUR_ALLOW ? "allow" : "deny");
		rc = CLI_FAIL;
	}
	if (fflush(stdout))
		rc = CLI_FAIL;
out:
	iour_prog__free(p);
	free_args(&a);
	return rc;
}
