/* SPDX-License-Identifier: MIT */
/*
 * iour-restrict check: the verdict of a policy file for one request, and
 * what decided it (iour_policy__decide(): the classic gate, the SQE flags,
 * then the opcode's argument rules, as a kernel that enforces the whole
 * policy decides).
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "expr.h"

const char cli_help_check[] =
"Usage: iour-restrict check POLICY --op OPCODE [FIELD=VALUE]...\n"
"                           [--kernel X.Y] [--expect allow|deny]\n"
"\n"
"Print the verdict of the policy file POLICY for one request, and what\n"
"decided it: the request allow-list (requestOps), the SQE flags (sqeFlags),\n"
"one of the opcode's argument rules (counted from 1 in file order), the\n"
"opcode's default when no rule held, or the policy's defaultAction.  The\n"
"verdict is the one a kernel that enforces the whole policy gives (Linux\n"
"7.2+); 'compile' shows what a given kernel enforces.\n"
"\n"
"The request is described by FIELD=VALUE assignments, as the contexts of\n"
"'sim' ('iour-restrict help rules'): user_data and sqe_flags for every\n"
"opcode; SOCKET family, type, protocol; OPENAT/OPENAT2 flags, mode, resolve;\n"
"CONNECT family, port, addr4, addr6, addrlen.  Fields not given are 0.\n"
"\n"
"Options:\n"
"  --op OPCODE            the request opcode (name or number)\n"
"  --kernel X.Y           read the policy's minKernel conditions for Linux\n"
"                         X.Y (default: the running kernel)\n"
"  --expect V             exit 1 unless the verdict is V (allow or deny)\n"
"  -h, --help             show this help\n"
"\n"
"Output: 'verdict: allow|deny', 'reason: NAME', 'rule: N' (the deciding\n"
"rule, or '-'), and a sentence ('because: ...').\n"
"\n"
"Example: iour-restrict check client.json --op CONNECT addr4=10.1.2.3 port=443\n"
"\n"
"Exit status: 0 on success; 1 if the verdict is not the one --expect names,\n"
"or the library failed; 2 on a usage error; 3 if POLICY cannot be read or is\n"
"not valid.\n";

static const char *reason_key(uint32_t reason)
{
	switch (reason) {
	case IOUR_DECIDE_CLASSIC_GATE:
		return "request-allow-list";
	case IOUR_DECIDE_SQE_FLAGS:
		return "sqe-flags";
	case IOUR_DECIDE_RULE:
		return "rule";
	case IOUR_DECIDE_OPCODE_DEFAULT:
		return "opcode-default";
	case IOUR_DECIDE_PROGRAM:
		return "program";
	case IOUR_DECIDE_CLASSIC_ALLOW:
		return "request-allow-list";
	case IOUR_DECIDE_POLICY_DEFAULT:
		return "default-action";
	default:
		return "unknown";
	}
}

static void because(const struct iour_request_verdict *d, const char *op)
{
	switch (d->reason) {
	case IOUR_DECIDE_CLASSIC_GATE:
		printf("the request allow-list (requestOps) does not list %s\n", op);
		break;
	case IOUR_DECIDE_SQE_FLAGS:
		printf("the request's SQE flags are not allowed, or lack a required one "
		       "(sqeFlags)\n");
		break;
	case IOUR_DECIDE_RULE:
		printf("rule %u of %s's argument rules held (rules counted from 1 in file "
		       "order)\n", d->rule + 1, op);
		break;
	case IOUR_DECIDE_OPCODE_DEFAULT:
		printf("%s has argument rules and none held: the default verdict\n", op);
		break;
	case IOUR_DECIDE_PROGRAM:
		printf("%s's program (programs) decided\n", op);
		break;
	case IOUR_DECIDE_CLASSIC_ALLOW:
		printf("the request allow-list (requestOps) lists %s and no argument rule "
		       "applies\n", op);
		break;
	case IOUR_DECIDE_POLICY_DEFAULT:
		printf("nothing in the policy mentions %s: defaultAction\n", op);
		break;
	default:
		printf("reason %u\n", d->reason);
		break;
	}
}

int cmd_check(int argc, char **argv)
{
	enum { O_OP = 256, O_KERNEL, O_EXPECT };
	static const struct option lo[] = {
		{ "op", required_argument, NULL, O_OP },
		{ "kernel", required_argument, NULL, O_KERNEL },
		{ "expect", required_argument, NULL, O_EXPECT },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct iour_request_verdict d = { .sz = sizeof(d) };
	struct iour_policy *pol = NULL;
	uint8_t ctx[IOUR_CTX_SIZE];
	struct expr_error e;
	const char *path = NULL, *opname;
	char *fields = NULL, numbuf[16];
	uint32_t op = UINT32_MAX, kver = 0;
	int expect = -1, c, rc;
	size_t flen = 0;
	bool have_op = false;

	opterr = 0;
	/* GNU order: options may follow POLICY and the assignments. */
	while ((c = getopt_long(argc, argv, ":h", lo, NULL)) != -1) {
		switch (c) {
		case O_OP:
			if (cli_parse_opcode(optarg, &op))
				return cli_usage("--op: unknown request opcode '%s' (see '%s names "
						 "ops')", optarg, CLI_PROG);
			have_op = true;
			break;
		case O_KERNEL:
			if (cli_parse_kver(optarg, &kver))
				return cli_usage("--kernel: '%s' is not a kernel version X.Y", optarg);
			break;
		case O_EXPECT:
			if (!strcmp(optarg, "allow"))
				expect = IOUR_ALLOW;
			else if (!strcmp(optarg, "deny"))
				expect = IOUR_DENY;
			else
				return cli_usage("--expect: '%s' is not allow or deny", optarg);
			break;
		case 'h':
			return cli_help(cli_help_check);
		default:
			return cli_getopt_error(c, argv);
		}
	}
	if (optind >= argc)
		return cli_usage("no policy file given");
	if (!have_op)
		return cli_usage("--op OPCODE is required");
	path = argv[optind++];
	for (int i = optind; i < argc; i++) {
		if (!strchr(argv[i], '='))
			return cli_usage("'%s' is not a FIELD=VALUE assignment", argv[i]);
		flen += strlen(argv[i]) + 1;
	}
	fields = calloc(1, flen + 1);
	if (!fields)
		return cli_fail(-ENOMEM, "check");
	for (int i = optind, used = 0; i < argc; i++)
		used += snprintf(fields + used, flen + 1 - (size_t)used, "%s%s", i > optind ? "," : "",
				 argv[i]);
	memset(&e, 0, sizeof(e));
	if (expr_build_ctx(fields, op, ctx, &e)) {
		expr_report("request", fields, &e);
		free(fields);
		return CLI_USAGE;
	}
	free(fields);

	rc = cli_policy_load(path, kver, &pol);
	if (rc)
		return rc;
	rc = iour_policy__decide(pol, ctx, sizeof(ctx), &d);
	iour_policy__free(pol);
	if (rc)
		return cli_fail(rc, "iour_policy__decide");
	opname = iour_opcode_name(op);
	if (!opname) {
		snprintf(numbuf, sizeof(numbuf), "opcode %u", op);
		opname = numbuf;
	}
	printf("verdict: %s\n", d.verdict == IOUR_DENY ? "deny" : "allow");
	printf("reason: %s\n", reason_key(d.reason));
	if (d.rule != IOUR_VERDICT_NO_RULE)
		printf("rule: %u\n", d.rule + 1);
	else
		printf("rule: -\n");
	printf("because: ");
	because(&d, opname);
	if (expect >= 0 && (uint32_t)expect != (d.verdict == IOUR_DENY ? IOUR_DENY : IOUR_ALLOW)) {
		cli_msg("the verdict is %s, not %s", d.verdict == IOUR_DENY ? "deny" : "allow",
			expect == IOUR_DENY ? "deny" : "allow");
		return CLI_FAIL;
	}
	return CLI_OK;
}
