/* SPDX-License-Identifier: MIT */
/*
 * iour-restrict groups: the named opcode groups policy files may use
 * ("@file-read", ...), from the library's table, each with its help text
 * and its opcodes with the kernel version that added each.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cli.h"

const char cli_help_groups[] =
"Usage: iour-restrict groups [--kernel X.Y] [NAME]...\n"
"\n"
"List the opcode groups that policy files may name (\"@file-read\" in an\n"
"entry's names): each group's help text, where its list comes from, and its\n"
"request opcodes and register opcodes, each with the kernel version that\n"
"added it.  A group means the same opcodes on every kernel: those the\n"
"running kernel does not have are simply never requested.  With NAME\n"
"(\"@file-read\" or \"file-read\"), only those groups.\n"
"\n"
"Options:\n"
"  --kernel X.Y           list only the opcodes Linux X.Y has\n"
"  -h, --help             show this help\n"
"\n"
"Example: iour-restrict groups @net-client\n"
"\n"
"Exit status: 0 on success; 2 on a usage error (an unknown group).\n";

static int list(size_t idx, uint32_t kver, int (*get)(size_t, uint32_t, uint32_t *, size_t),
		uint32_t **out)
{
	int n = get(idx, kver, NULL, 0);

	*out = NULL;
	if (n <= 0)
		return n;
	*out = calloc((size_t)n, sizeof(**out));
	if (!*out)
		return -ENOMEM;
	return get(idx, kver, *out, (size_t)n);
}

static int show(size_t idx, uint32_t kver)
{
	struct iour_group_info gi = { .sz = sizeof(gi) };
	uint32_t *ops, *regs;
	char since[16];
	int n, m, r;

	r = iour_group_get(idx, &gi);
	if (r)
		return cli_fail(r, "iour_group_get");
	n = list(idx, kver, iour_group_opcodes, &ops);
	if (n < 0)
		return cli_fail(n, "iour_group_opcodes");
	m = list(idx, kver, iour_group_register_ops, &regs);
	if (m < 0) {
		free(ops);
		return cli_fail(m, "iour_group_register_ops");
	}
	printf("%s\n    # %s\n", gi.name, gi.help);
	if (gi.source && gi.source[0])
		printf("    # source: %s\n", gi.source);
	for (int i = 0; i < n; i++) {
		cli_kver_str((uint32_t)iour_opcode_since(ops[i]), since, sizeof(since));
		printf("    %-24s %3u  Linux %s\n", iour_opcode_name(ops[i]), ops[i], since);
	}
	for (int i = 0; i < m; i++) {
		cli_kver_str((uint32_t)iour_register_op_since(regs[i]), since, sizeof(since));
		printf("    register %-15s %3u  Linux %s\n", iour_register_op_name(regs[i]), regs[i],
		       since);
	}
	free(ops);
	free(regs);
	return CLI_OK;
}

int cmd_groups(int argc, char **argv)
{
	enum { O_KERNEL = 256 };
	static const struct option lo[] = {
		{ "kernel", required_argument, NULL, O_KERNEL },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint32_t kver = 0;
	int c, rc = CLI_OK, idx, cnt;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", lo, NULL)) != -1) {
		switch (c) {
		case O_KERNEL:
			if (cli_parse_kver(optarg, &kver))
				return cli_usage("--kernel: '%s' is not a kernel version X.Y", optarg);
			break;
		case 'h':
			return cli_help(cli_help_groups);
		default:
			return cli_getopt_error(c, argv);
		}
	}
	/* Every name first: an unknown one prints nothing else. */
	for (int i = optind; i < argc; i++)
		if (iour_group_find(argv[i]) < 0)
			return cli_usage("unknown group '%s' ('%s groups' lists them)", argv[i],
					 CLI_PROG);
	if (optind < argc) {
		for (int i = optind; i < argc && !rc; i++) {
			idx = iour_group_find(argv[i]);
			if (i > optind)
				putchar('\n');
			rc = show((size_t)idx, kver);
		}
		return rc;
	}
	cnt = iour_group_count();
	for (int i = 0; i < cnt && !rc; i++) {
		if (i)
			putchar('\n');
		rc = show((size_t)i, kver);
	}
	return rc;
}
