/* SPDX-License-Identifier: MIT */
/*
 * iour-restrict explain: the effects table of a policy on a kernel.  The
 * library's plan report carries one note per effect the policy touches
 * (IOUR_REASON_EFFECT_*, doc/security.md 2.1); this command prints them as
 * a table, with the paths that stay open, are filtered or are closed.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "core/cli.h"

const char cli_help_explain[] =
"Usage: iour-restrict explain POLICY [--kernel X.Y]\n"
"                             [--mechanism task|broker|companion|ring]\n"
"\n"
"Plan the policy file POLICY for the running kernel (or for Linux X.Y,\n"
"from the library's tables) and print, per effect the policy touches,\n"
"whether it is closed, filtered or open, and by which paths:\n"
"  net-dest           network destination (CONNECT, SENDMSG, SEND, ...)\n"
"  file-open          file open, creation and install (OPENAT, MKDIRAT, ...)\n"
"  plain-fd           plain descriptors although FIXED_FILE is required\n"
"                     (SPLICE and TEE inputs, EPOLL_CTL, WAITID, ...)\n"
"  cross-ring         descriptor passing and messages to other rings\n"
"  mem-reg            memory registration\n"
"  ringless-register  register calls on fd -1 (SEND_MSG_RING, QUERY)\n"
"  ring-acquire       every other way to hold a ring: inherited, passed,\n"
"                     taken from another process (always shown)\n"
"\n"
"The effects are those of the mechanism `run` uses on that kernel, unless\n"
"--mechanism names another: task (task restrictions, Linux 7.0+), broker\n"
"(every ring the program creates is restricted by the ring broker: run\n"
"before 7.0, and the OCI agent), companion (io_uring_setup fails: run\n"
"without its broker, before 7.0) or ring (the policy restricts one ring).\n"
"\n"
"Options:\n"
"  --kernel X.Y    plan for Linux X.Y instead of the running kernel\n"
"  --mechanism M   task, broker, companion or ring (default: as run)\n"
"  -h, --help      show this help\n"
"\n"
"Exit status: 0 on success (whatever the effects' states; `lint` fails on\n"
"an effect filtered on one path and open on another); 1 if the library\n"
"failed; 2 on a usage error; 3 if POLICY cannot be read or is not valid.\n";

static void explain_row(void *arg, const char *key, const char *state, size_t sl,
			const char *rest)
{
	int *shown = arg;

	if (!(*shown)++)
		printf("%-18s %-9s %s\n", "EFFECT", "STATE", "PATHS");
	printf("%-18s %-9.*s %s\n", key, (int)sl, state, rest);
}

int cmd_explain(int argc, char **argv)
{
	enum { O_KERNEL = 256, O_MECH };
	static const struct option lo[] = {
		{ "kernel", required_argument, NULL, O_KERNEL },
		{ "mechanism", required_argument, NULL, O_MECH },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct iour_plan_opts po = { .sz = sizeof(po) };
	struct iour_features feat;
	enum cli_mech mech = CLI_MECH_AUTO, used;
	struct iour_policy *pol = NULL;
	struct iour_plan *plan = NULL;
	const struct iour_report *rep;
	const char *path;
	uint32_t kver = 0;
	char kv[16];
	int c, rc, shown = 0;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", lo, NULL)) != -1) {
		switch (c) {
		case O_KERNEL:
			if (cli_parse_kver(optarg, &kver))
				return cli_usage("--kernel: '%s' is not a kernel version X.Y", optarg);
			break;
		case O_MECH:
			if (cli_mech_parse(optarg, &mech))
				return CLI_USAGE;
			break;
		case 'h':
			return cli_help(cli_help_explain);
		default:
			return cli_getopt_error(c, argv);
		}
	}
	if (cli_policy_operand(argc, argv, &path))
		return CLI_USAGE;
	if (kver) {
		feat.sz = sizeof(feat);
		(void)iour_kernel_describe(kver, &feat);
		po.features = &feat;
	}
	rc = cli_policy_load(path, kver, &pol);
	if (rc)
		return rc;
	rc = cli_plan_mech(pol, &po, mech, &used, &plan);
	if (rc) {
		rc = rc > 0 ? rc : cli_fail(rc, "planning the policy");
		goto out;
	}
	rep = iour_plan__report(plan);
	cli_put_escaped(stdout, path);
	if (kver) {
		cli_kver_str(kver, kv, sizeof(kv));
		printf(" on Linux %s (from the library's tables), mechanism %s: %s\n", kv,
		       cli_mech_name(used), iour_status_str(iour_report__status(rep)));
	} else {
		printf(" on the running kernel, mechanism %s: %s\n", cli_mech_name(used),
		       iour_status_str(iour_report__status(rep)));
	}
	cli_effects_each(rep, explain_row, &shown);
	/* Every policy touches this one: how else the program could hold a
	 * ring (doc/security.md 3a, "Ring acquisition"). */
	{
		struct cli_peers peers;
		char paths[768];
		bool closed;

		if (!kver)
			cli_peers_probe(&peers);
		closed = cli_ring_acquire(used, kver ? NULL : &peers, paths, sizeof(paths));
		explain_row(&shown, "ring-acquire", closed ? "closed" : "open",
			    strlen(closed ? "closed" : "open"), paths);
	}
	rc = CLI_OK;
	if (fflush(stdout))
		rc = cli_fail(-errno, "writing the output");
out:
	iour_plan__free(plan);
	iour_policy__free(pol);
	return rc;
}
