/* SPDX-License-Identifier: MIT */
/*
 * iour-restrict: the command-line tool of libiouring-restrict.  It shows
 * what the running kernel supports, prints the library's name tables,
 * builds restriction sets and argument filters and shows what the kernel
 * would receive, simulates filters, checks that the kernel enforces a set,
 * and launches commands that cannot create io_uring rings.
 *
 * Each subcommand lives in tools/cli/cmd_*.c; doc/cli.md is the manual.
 */
#include <stdio.h>
#include <string.h>

#include "core/cli.h"

struct subcommand {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *help;
	const char *summary;
};

static const struct subcommand cmds[] = {
	{ "probe", cmd_probe, cli_help_probe, "what the running kernel supports" },
	{ "names", cmd_names, cli_help_names, "opcode and flag tables, with kernel versions" },
	{ "ruleset", cmd_ruleset, cli_help_ruleset,
	  "build a restriction set; print the kernel's entries" },
	{ "filter", cmd_filter, cli_help_filter, "compile an argument filter; print the program" },
	{ "sim", cmd_sim, cli_help_sim, "run a compiled filter on request contexts" },
	{ "verify", cmd_verify, cli_help_verify,
	  "check that the running kernel enforces a restricted ring" },
	{ "exec", cmd_exec, cli_help_exec, "run a command that cannot create io_uring rings" },
	{ "run", cmd_run, cli_help_run, "run a command under a policy file" },
	{ "compile", cmd_compile, cli_help_compile,
	  "plan a policy file for a kernel; print the plan and its report" },
	{ "check", cmd_check, cli_help_check, "the verdict of a policy file for one request" },
	{ "lint", cmd_lint, cli_help_lint, "risky choices in a policy file" },
	{ "explain", cmd_explain, cli_help_explain,
	  "effects of a policy file on a kernel: closed, filtered or open" },
	{ "groups", cmd_groups, cli_help_groups, "the opcode groups policy files may name" },
	{ "learn", cmd_learn, cli_help_learn,
	  "run a command; write the policy file its io_uring use needs" },
	{ "merge", cmd_merge, cli_help_merge, "the union of policy files" },
	{ "prove", cmd_prove, cli_help_prove,
	  "prove with an SMT solver that filters mean what their rules say" },
	{ "agent", cmd_agent, cli_help_agent,
	  "OCI seccomp agent: restricted rings for runc and crun containers" },
	{ "seccomp-profile", cmd_seccomp_profile, cli_help_seccomp_profile,
	  "a container engine's seccomp profile made ready for the agent" },
	{ "runc-shim", cmd_runc_shim, cli_help_runc_shim,
	  "runc wrapper for engines that drop listenerPath (Docker 20.10)" },
};
#define NR_CMDS (sizeof(cmds) / sizeof(cmds[0]))

static int usage_main(FILE *out)
{
	int w = 9; /* the column of the summaries: the longest name */

	fprintf(out, "Usage: %s COMMAND [OPTIONS]\n"
		     "       %s help [COMMAND | rules]\n"
		     "       %s --version\n\n"
		     "Restrict what io_uring may do, with libiouring-restrict %s.\n\n"
		     "Commands:\n",
		CLI_PROG, CLI_PROG, CLI_PROG, iour_version_string());
	for (size_t i = 0; i < NR_CMDS; i++)
		if ((int)strlen(cmds[i].name) > w)
			w = (int)strlen(cmds[i].name);
	for (size_t i = 0; i < NR_CMDS; i++)
		fprintf(out, "  %-*s %s\n", w, cmds[i].name, cmds[i].summary);
	fprintf(out, "  %-*s %s\n", w, "help", "this text, a command's help, or the rule language");
	fprintf(out, "\n'%s COMMAND --help' describes each command.\n"
		     "Exit status: 0 success; 1 a check failed, a restriction is not enforced\n"
		     "or 'lint' has findings; 2 usage error; 3 the policy file cannot be read or\n"
		     "is not valid ('exec' and 'run' pass on their command's status).\n",
		CLI_PROG);
	return 0;
}

static const struct subcommand *find(const char *name)
{
	for (size_t i = 0; i < NR_CMDS; i++)
		if (!strcmp(cmds[i].name, name))
			return &cmds[i];
	return NULL;
}

static int help(int argc, char **argv)
{
	const struct subcommand *c;

	if (argc < 2) {
		usage_main(stdout);
		return CLI_OK;
	}
	if (argc > 2)
		return cli_usage("help takes one topic");
	if (!strcmp(argv[1], "rules"))
		return cli_help_rules();
	c = find(argv[1]);
	if (!c)
		return cli_usage("no help for '%s' (a command or 'rules')", argv[1]);
	return cli_help(c->help);
}

int main(int argc, char **argv)
{
	const struct subcommand *c;

	if (argc < 2) {
		usage_main(stderr);
		return CLI_USAGE;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))
		return usage_main(stdout) ? CLI_FAIL : CLI_OK;
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		printf("%s %s\n", CLI_PROG, iour_version_string());
		return CLI_OK;
	}
	if (!strcmp(argv[1], "help"))
		return help(argc - 1, argv + 1);
	c = find(argv[1]);
	if (!c) {
		if (argv[1][0] == '-')
			return cli_usage("unknown option '%s'", argv[1]);
		return cli_usage("unknown command '%s'", argv[1]);
	}
	cli_cmd = c->name;
	return c->run(argc - 1, argv + 1);
}
