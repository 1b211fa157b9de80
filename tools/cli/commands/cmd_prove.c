/* SPDX-License-Identifier: MIT */
/*
 * iour-restrict prove: show with an SMT solver that a classic-BPF program
 * means what its rules say, for every 40-byte context the kernel can build,
 * or print a context on which they differ.
 *
 * The solver work is done by tools/prove/iour-prove (Python and Debian's
 * python3-z3), which this command runs with a job list on its standard
 * input: the rules as struct iour_cmp values and the programs.  The
 * library itself never needs the solver.  doc/cli.md describes the command.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/cli.h"
#include "rules/expr.h"

#ifndef IOUR_PROVE_PATH
#define IOUR_PROVE_PATH "/usr/libexec/iouring-restrict/iour-prove"
#endif

/* Exit status when the solver did not decide (or cannot run). */
#define CLI_UNKNOWN 4

const char cli_help_prove[] =
	"Usage: iour-restrict prove --op OPCODE [--allow RULE | --deny RULE]...\n"
	"                           [--default allow|deny] [--addr4-literal]\n"
	"                           [--program FILE] [--timeout MS]\n"
	"       iour-restrict prove [--kernel X.Y] [--timeout MS] POLICY...\n"
	"\n"
	"Prove with an SMT solver (z3) that a classic-BPF filter gives the verdict\n"
	"of its rules for every 40-byte context the kernel can build for the\n"
	"opcode, or find a context on which they differ.  The rules' meaning is\n"
	"stated a second time, apart from the compiler, from filter.h.  Each program\n"
	"is also proved to keep the kernel checker's promises: no read outside the\n"
	"context or of an unwritten scratch word, every run ends at a return.\n"
	"\n"
	"Rules (as 'filter' and 'sim'; see 'iour-restrict help rules'):\n"
	"  --op OPCODE            the request opcode; required with rules\n"
	"  --allow RULE           allow requests for which RULE holds; repeatable\n"
	"  --deny RULE            deny requests for which RULE holds; repeatable\n"
	"  --default allow|deny   the verdict when no rule holds (default deny)\n"
	"  --addr4-literal        CONNECT: IPv4 rules see only AF_INET requests\n"
	"  --program FILE         the program to prove, as 'filter' writes it in raw\n"
	"                         format (8 bytes per instruction); by default the\n"
	"                         program the rules compile to\n"
	"\n"
	"Policy files:\n"
	"  POLICY                 every argument filter of the policy's plan, each\n"
	"                         opcode's stacked programs as their conjunction\n"
	"  --kernel X.Y           plan for Linux X.Y (default 7.2, from the library's\n"
	"                         tables)\n"
	"\n"
	"Solver:\n"
	"  --timeout MS           give up on one question after MS milliseconds\n"
	"                         (default 60000): the answer is then 'unknown'\n"
	"  --mutate N             also change up to N returns, jump targets and\n"
	"                         comparison constants of each proved program and\n"
	"                         count the mutants the prover refutes\n"
	"  -h, --help             show this help\n"
	"\n"
	"Output: one line per program with 'proved', 'counterexample' or\n"
	"'unknown'; a counterexample is printed as 'counterexample: ' and the\n"
	"context's 40 bytes in hex (as 'sim' shows a context), then the\n"
	"verdicts of the rules and of the program.  A summary line ends the output.\n"
	"\n"
	"The prover is tools/prove/iour-prove (environment: IOUR_PROVE to use\n"
	"another); it needs python3 and python3-z3.\n"
	"\n"
	"Exit status: 0 every program proved; 1 a counterexample (or a program the\n"
	"checker refuses); 2 usage error; 3 the policy file cannot be read or is not\n"
	"valid; 4 not decided: the solver reached the time limit, or the prover\n"
	"cannot run.\n";

struct rule_arg {
	uint32_t verdict;
	const char *text;
};

struct pargs {
	bool have_op;
	uint32_t op;
	struct rule_arg *rules;
	size_t nrules;
	int default_verdict; /* -1: not given */
	bool addr4_literal;
	const char *program;
	uint32_t kver;
	uint64_t timeout_ms;
	uint64_t mutate;
	bool quiet;
};

enum {
	O_OP = 256,
	O_ALLOW,
	O_DENY,
	O_DEFAULT,
	O_ADDR4_LITERAL,
	O_PROGRAM,
	O_KERNEL,
	O_TIMEOUT,
	O_MUTATE,
	O_QUIET
};

static bool host_big_endian(void)
{
	const uint16_t one = 1;

	return *(const uint8_t *)&one == 0;
}

static void put_insns(FILE *o, const struct iour_insn *in, size_t n)
{
	fputc('[', o);
	for (size_t i = 0; i < n; i++)
		fprintf(o, "%s[%u,%u,%u,%u]", i ? "," : "", in[i].code, in[i].jt, in[i].jf,
			in[i].k);
	fputc(']', o);
}

static void put_cmp(FILE *o, const struct iour_cmp *c)
{
	fprintf(o, "{\"field\":%u,\"op\":%u,\"value\":%" PRIu64 ",\"arg\":%" PRIu64 ",\"set\":[",
		c->field, c->op, c->value, c->arg);
	for (uint64_t i = 0; c->set && i < c->set_len; i++)
		fprintf(o, "%s%" PRIu64, i ? "," : "", c->set[i]);
	fputs("],\"addr6\":\"", o);
	for (size_t i = 0; i < sizeof(c->addr6); i++)
		fprintf(o, "%02x", c->addr6[i]);
	fputs("\"}", o);
}

/* Writes a JSON string (the saved policy text, a file name). */
static void put_str(FILE *o, const char *s)
{
	fputc('"', o);
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			fprintf(o, "\\%c", ch);
		else if (ch < 0x20 || ch == 0x7f)
			fprintf(o, "\\u%04x", ch);
		else
			fputc(ch, o);
	}
	fputc('"', o);
}

/* Starts the prover with a pipe to its standard input. */
static int start_prover(FILE **to, pid_t *pid)
{
	const char *path = getenv("IOUR_PROVE");
	int fds[2];

	if (!path || !*path)
		path = IOUR_PROVE_PATH;
	if (access(path, X_OK)) {
		cli_msg("the prover %s cannot run: %s (install it, or set IOUR_PROVE)", path,
			strerror(errno));
		return CLI_UNKNOWN;
	}
	if (pipe(fds))
		return cli_fail(-errno, "pipe");
	fflush(stdout);
	*pid = fork();
	if (*pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return cli_fail(-errno, "fork");
	}
	if (*pid == 0) {
		dup2(fds[0], STDIN_FILENO);
		close(fds[0]);
		close(fds[1]);
		execl(path, path, (char *)NULL);
		fprintf(stderr, "%s prove: cannot run %s: %s\n", CLI_PROG, path, strerror(errno));
		_exit(CLI_UNKNOWN);
	}
	close(fds[0]);
	*to = fdopen(fds[1], "w");
	if (!*to) {
		close(fds[1]);
		return cli_fail(-errno, "fdopen");
	}
	return 0;
}

/* Starts the prover, hands it the job list and maps its exit status.
 * The whole list is built first, so that the prover never sees half of
 * one (a policy that fails to load stops everything before it starts). */
static int run_prover(const char *jobs, size_t len)
{
	FILE *to = NULL;
	pid_t pid = -1;
	int st, rc;

	rc = start_prover(&to, &pid);
	if (rc)
		return rc;
	fwrite(jobs, 1, len, to);
	fputs("]}\n", to);
	fclose(to);
	if (waitpid(pid, &st, 0) < 0)
		return cli_fail(-errno, "waitpid");
	if (!WIFEXITED(st)) {
		cli_msg("the prover did not finish (signal %d)",
			WIFSIGNALED(st) ? WTERMSIG(st) : 0);
		return CLI_UNKNOWN;
	}
	switch (WEXITSTATUS(st)) {
	case 0:
		return CLI_OK;
	case 1:
		return CLI_FAIL;
	case 4:
		return CLI_UNKNOWN;
	default:
		cli_msg("the prover failed (status %d)", WEXITSTATUS(st));
		return CLI_FAIL;
	}
}

static void put_header(FILE *o, const struct pargs *a)
{
	fprintf(o,
		"{\"timeout_ms\":%" PRIu64 ",\"big_endian\":%s,\"mutate\":%" PRIu64
		",\"quiet\":%s,\"jobs\":[",
		a->timeout_ms, host_big_endian() ? "true" : "false", a->mutate,
		a->quiet ? "true" : "false");
}

/* Reads a raw program file (8 bytes per instruction, host order). */
static int read_program(const char *path, struct iour_insn **out, size_t *cnt)
{
	struct iour_insn *buf;
	FILE *f = fopen(path, "rb");
	long sz;

	if (!f)
		return cli_usage("--program: cannot open '%s': %s", path, strerror(errno));
	if (fseek(f, 0, SEEK_END) || (sz = ftell(f)) < 0 || fseek(f, 0, SEEK_SET)) {
		fclose(f);
		return cli_usage("--program: cannot read '%s'", path);
	}
	if (sz == 0 || sz % 8 || sz / 8 > IOUR_MAX_INSNS) {
		fclose(f);
		return cli_usage(
			"--program: '%s' is %ld bytes: not 1 to %d instructions of 8 bytes", path,
			sz, IOUR_MAX_INSNS);
	}
	buf = malloc((size_t)sz);
	if (!buf) {
		fclose(f);
		return cli_fail(-ENOMEM, "reading the program");
	}
	if (fread(buf, 1, (size_t)sz, f) != (size_t)sz) {
		free(buf);
		fclose(f);
		return cli_usage("--program: cannot read '%s'", path);
	}
	fclose(f);
	*out = buf;
	*cnt = (size_t)sz / 8;
	return 0;
}

/* A program the checker refuses is not proved: report it. */
static int checker_refuses(const char *what, const struct iour_insn *in, size_t n)
{
	struct iour_validate_info vi = { .sz = sizeof(vi) };

	if (iour_cbpf_validate(in, n, 0, &vi) == 0)
		return 0;
	printf("%s: refused by the kernel's checker: instruction %u: %s\n", what, vi.insn,
	       iour_cbpf_reject_str(vi.reason));
	return CLI_FAIL;
}

/* prove --op ... : one job, the rules and one program. */
static int prove_rules(const struct pargs *a)
{
	IOUR_OPTS(iour_filter_opts, fo, .flags = a->addr4_literal ? IOUR_FILTER_ADDR4_LITERAL : 0);
	struct iour_filter *f = NULL;
	struct iour_prog *p = NULL;
	struct iour_insn *raw = NULL;
	struct expr_rule *rule = NULL;
	struct expr_error err;
	const struct iour_insn *insns;
	size_t cnt = 0, jobs_len = 0;
	char *jobs = NULL;
	FILE *o = NULL;
	int r, rc = CLI_OK;

	rule = calloc(a->nrules ? a->nrules : 1, sizeof(*rule));
	if (!rule)
		return cli_fail(-ENOMEM, "parsing the rules");
	r = iour_filter__new(&fo, &f);
	if (r) {
		rc = cli_fail(r, "iour_filter__new");
		goto out;
	}
	for (size_t i = 0; i < a->nrules; i++) {
		const char *what = a->rules[i].verdict == IOUR_ALLOW ? "--allow" : "--deny";

		if (expr_parse_rule(a->rules[i].text, a->op, &rule[i], &err)) {
			expr_report(what, a->rules[i].text, &err);
			fprintf(stderr, "Try '%s help rules' for the rule language.\n", CLI_PROG);
			rc = CLI_USAGE;
			goto out;
		}
		r = iour_filter__add_rule(f, a->op, a->rules[i].verdict, rule[i].cmps, rule[i].n);
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
	if (a->program) {
		rc = read_program(a->program, &raw, &cnt);
		if (rc)
			goto out;
		insns = raw;
	} else {
		r = iour_filter__compile(f, a->op, NULL, &p);
		if (r) {
			rc = cli_fail(r, "iour_filter__compile");
			goto out;
		}
		insns = iour_prog__insns(p);
		cnt = iour_prog__insn_cnt(p);
	}
	rc = checker_refuses(iour_opcode_name(a->op) ? iour_opcode_name(a->op) : "program", insns,
			     cnt);
	if (rc)
		goto out;
	o = open_memstream(&jobs, &jobs_len);
	if (!o) {
		rc = cli_fail(-ENOMEM, "writing the job list");
		goto out;
	}
	put_header(o, a);
	fputs("{\"name\":", o);
	put_str(o, iour_opcode_name(a->op) ? iour_opcode_name(a->op) : "rules");
	fprintf(o, ",\"opcode\":%u,\"default\":%d,\"addr4_literal\":%s,\"rules\":[", a->op,
		a->default_verdict == IOUR_ALLOW ? 1 : 0, a->addr4_literal ? "true" : "false");
	for (size_t i = 0; i < a->nrules; i++) {
		fprintf(o, "%s{\"verdict\":%u,\"cmps\":[", i ? "," : "", a->rules[i].verdict);
		for (size_t j = 0; j < rule[i].n; j++) {
			if (j)
				fputc(',', o);
			put_cmp(o, &rule[i].cmps[j]);
		}
		fputs("]}", o);
	}
	fputs("],\"programs\":[", o);
	put_insns(o, insns, cnt);
	fputs("]}", o);
	if (fclose(o)) {
		o = NULL;
		rc = cli_fail(-ENOMEM, "writing the job list");
		goto out;
	}
	o = NULL;
	rc = run_prover(jobs, jobs_len);
out:
	if (o)
		fclose(o);
	free(jobs);
	if (rule)
		for (size_t i = 0; i < a->nrules; i++)
			expr_rule_free(&rule[i]);
	free(rule);
	free(raw);
	iour_prog__free(p);
	iour_filter__free(f);
	return rc;
}

/* One policy's job: its saved text (the rules, as the library holds them),
 * the opcode names, and the plan's filter programs per opcode, task side
 * first (a plan registers the same filters on one side only). */
static int put_policy(FILE *o, const char *path, uint32_t kver, bool first)
{
	IOUR_OPTS(iour_plan_opts, po);
	struct iour_features feat;
	struct iour_policy *pol = NULL;
	struct iour_plan *plan = NULL;
	char *text = NULL;
	int n, r, rc, last;
	bool any = false;

	rc = cli_policy_load(path, kver, &pol);
	if (rc)
		return rc;
	feat.sz = sizeof(feat);
	(void)iour_kernel_describe(kver, &feat);
	po.features = &feat;
	r = iour_policy__plan(pol, &po, &plan);
	if (r) {
		rc = cli_fail(r, "%s: planning the policy", path);
		goto out;
	}
	r = iour_policy__save_json(pol, 0, NULL, 0);
	if (r > 0) {
		text = malloc((size_t)r + 1);
		if (!text) {
			rc = cli_fail(-ENOMEM, "saving the policy");
			goto out;
		}
		r = iour_policy__save_json(pol, 0, text, (size_t)r + 1);
	}
	if (r < 0) {
		rc = cli_fail(r, "%s: iour_policy__save_json", path);
		goto out;
	}
	fputs(first ? "" : ",", o);
	fputs("{\"name\":", o);
	put_str(o, path);
	fputs(",\"policy\":", o);
	fputs(text, o);
	fputs(",\"opnames\":{", o);
	last = iour_opcode_last(0);
	for (int op = 0, k = 0; op < 256 && op < (last > 0 ? last : 256); op++) {
		const char *nm = iour_opcode_name((uint32_t)op);
		char low[64];
		size_t i;

		if (!nm)
			continue;
		for (i = 0; nm[i] && i + 1 < sizeof(low); i++)
			low[i] = (char)(nm[i] >= 'A' && nm[i] <= 'Z' ? nm[i] - 'A' + 'a' : nm[i]);
		low[i] = '\0';
		fprintf(o, "%s\"%s\":%d", k++ ? "," : "", low, op);
	}
	fputs("},\"programs\":{", o);
	n = iour_plan__step_cnt(plan);
	for (int side = 0; side < 2 && !any; side++) {
		for (int op = 0; op < 256; op++) {
			bool opened = false;

			for (int i = 0; i < n; i++) {
				struct iour_plan_step st = { .sz = sizeof(st) };
				struct iour_insn *in;
				size_t cnt = 0;

				if (iour_plan__step(plan, (size_t)i, &st) ||
				    st.op != IOUR_STEP_BPF_FILTER || st.side != (uint32_t)side ||
				    st.opcode != (uint32_t)op)
					continue;
				if (iour_plan__step_insns(plan, (size_t)i, NULL, &cnt) || !cnt)
					continue;
				in = malloc(cnt * sizeof(*in));
				if (!in || iour_plan__step_insns(plan, (size_t)i, in, &cnt)) {
					free(in);
					rc = cli_fail(-ENOMEM, "reading the plan");
					goto out;
				}
				fprintf(o, "%s", opened ? "," : any ? ",\"" : "\"");
				if (!opened)
					fprintf(o, "%d\":[", op);
				put_insns(o, in, cnt);
				free(in);
				opened = any = true;
			}
			if (opened)
				fputc(']', o);
		}
	}
	fputs("}}", o);
out:
	free(text);
	iour_plan__free(plan);
	iour_policy__free(pol);
	return rc;
}

static int prove_policies(const struct pargs *a, char **paths, int n)
{
	char *jobs = NULL;
	size_t len = 0;
	FILE *o = open_memstream(&jobs, &len);
	int rc = 0;

	if (!o)
		return cli_fail(-ENOMEM, "writing the job list");
	put_header(o, a);
	for (int i = 0; i < n && !rc; i++)
		rc = put_policy(o, paths[i], a->kver, i == 0);
	if (fclose(o) && !rc)
		rc = cli_fail(-ENOMEM, "writing the job list");
	if (!rc)
		rc = run_prover(jobs, len);
	free(jobs);
	return rc;
}

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

int cmd_prove(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "op", required_argument, NULL, O_OP },
		{ "allow", required_argument, NULL, O_ALLOW },
		{ "deny", required_argument, NULL, O_DENY },
		{ "default", required_argument, NULL, O_DEFAULT },
		{ "addr4-literal", no_argument, NULL, O_ADDR4_LITERAL },
		{ "program", required_argument, NULL, O_PROGRAM },
		{ "kernel", required_argument, NULL, O_KERNEL },
		{ "timeout", required_argument, NULL, O_TIMEOUT },
		{ "mutate", required_argument, NULL, O_MUTATE },
		{ "quiet", no_argument, NULL, O_QUIET },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct pargs a = { .default_verdict = -1,
			   .kver = (uint32_t)iour_kernel_generation(IOUR_KGEN_NEWEST),
			   .timeout_ms = 60000 };
	struct rule_arg *rg;
	bool have_kver = false;
	int c, rc;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", lo, NULL)) != -1) {
		switch (c) {
		case 'h':
			free(a.rules);
			return cli_help(cli_help_prove);
		case O_OP:
			if (a.have_op) {
				free(a.rules);
				return cli_usage("--op given twice (one opcode per run)");
			}
			if (cli_parse_opcode(optarg, &a.op)) {
				free(a.rules);
				return cli_usage("--op: unknown request opcode '%s'", optarg);
			}
			a.have_op = true;
			break;
		case O_ALLOW:
		case O_DENY:
			rg = realloc(a.rules, (a.nrules + 1) * sizeof(*rg));
			if (!rg) {
				free(a.rules);
				return cli_fail(-ENOMEM, "reading the rules");
			}
			a.rules = rg;
			rg[a.nrules].verdict = c == O_ALLOW ? IOUR_ALLOW : IOUR_DENY;
			rg[a.nrules++].text = optarg;
			break;
		case O_DEFAULT:
			if (parse_verdict(optarg, "--default", &a.default_verdict)) {
				free(a.rules);
				return CLI_USAGE;
			}
			break;
		case O_ADDR4_LITERAL:
			a.addr4_literal = true;
			break;
		case O_PROGRAM:
			a.program = optarg;
			break;
		case O_KERNEL:
			if (cli_parse_kver(optarg, &a.kver)) {
				free(a.rules);
				return cli_usage("--kernel: '%s' is not a kernel version X.Y",
						 optarg);
			}
			have_kver = true;
			break;
		case O_TIMEOUT:
			if (cli_parse_u64(optarg, &a.timeout_ms) || a.timeout_ms < 1 ||
			    a.timeout_ms > 86400000) {
				free(a.rules);
				return cli_usage("--timeout: '%s' is not 1 to 86400000 ms", optarg);
			}
			break;
		case O_MUTATE:
			if (cli_parse_u64(optarg, &a.mutate) || a.mutate > 1000) {
				free(a.rules);
				return cli_usage("--mutate: '%s' is not 0 to 1000", optarg);
			}
			break;
		case O_QUIET:
			a.quiet = true;
			break;
		default:
			free(a.rules);
			return cli_getopt_error(c, argv);
		}
	}
	if (optind < argc) {
		if (a.have_op || a.nrules || a.default_verdict >= 0 || a.addr4_literal ||
		    a.program) {
			free(a.rules);
			return cli_usage("give rules (--op ...) or policy files, not both");
		}
		rc = prove_policies(&a, argv + optind, argc - optind);
		free(a.rules);
		return rc;
	}
	if (have_kver) {
		free(a.rules);
		return cli_usage("--kernel applies to policy files only");
	}
	if (!a.have_op) {
		free(a.rules);
		return cli_usage("give --op OPCODE with rules, or a policy file");
	}
	if (!a.nrules && a.default_verdict < 0) {
		free(a.rules);
		return cli_usage("nothing to prove: give --allow, --deny or --default");
	}
	rc = prove_rules(&a);
	free(a.rules);
	return rc;
}
