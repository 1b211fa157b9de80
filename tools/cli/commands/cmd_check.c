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

#include "core/cli.h"
#include "rules/expr.h"

const char cli_help_check[] =
"Usage: iour-restrict check POLICY --op OPCODE [FIELD=VALUE]...\n"
"                           [--sqe-flags FLAGS] [--kernel X.Y]\n"
"                           [--expect allow|deny]\n"
"                           [--mechanism auto|task|broker|companion|ring]\n"
"       iour-restrict check POLICY --register-op NAME [--kernel X.Y]\n"
"                           [--expect allow|deny]\n"
"\n"
"Print the verdict of the policy file POLICY for one request, and what\n"
"decided it: the request allow-list (requestOps), the SQE flags (sqeFlags),\n"
"one of the opcode's argument rules (counted from 1 in file order), the\n"
"opcode's default when no rule held, or the policy's defaultAction.  The\n"
"verdict is the one a kernel that enforces the whole policy gives (Linux\n"
"7.2+); 'compile' shows what a given kernel enforces.\n"
"\n"
"@{check-ctx}\n"
"\n"
"With --register-op, the verdict for io_uring_register() opcode NAME\n"
"instead: allowed if the policy's registerOps lists it, if the policy has\n"
"no classic part (defaultAction allow without registerOps, requestOps or\n"
"sqeFlags), or if its classic part has no registerOps under defaultAction\n"
"allow; reasons 'register-allow-list', 'no-classic-part' and\n"
"'no-register-allow-list'.\n"
"\n"
"Options:\n"
"  --op OPCODE            the request opcode (name or number)\n"
"  --sqe-flags FLAGS      the request's SQE flags, by name (FIXED_FILE|ASYNC,\n"
"                         as sqe_flags=, which it replaces)\n"
"  --register-op NAME     a register opcode (name or number) instead of a\n"
"                         request\n"
"  --kernel X.Y           read the policy's minKernel conditions for Linux\n"
"                         X.Y (default: the running kernel)\n"
"  --expect V             exit 1 unless the verdict is V (allow or deny)\n"
"  --mechanism M          also print what mechanism M enforces for the request\n"
"                         on the kernel ('enforced: allow|deny (why)'); auto\n"
"                         is the one run uses there; --expect then reads it\n"
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

static int check_register(const char *path, uint32_t kver, uint32_t reg, int expect);

/*
 * What mechanism @mech enforces for request opcode @op on Linux @kver (0:
 * the running kernel), given the policy's @verdict: the plan's decisions
 * for the opcode (mechanism.c plans as the views do).  Prints the line;
 * *out gets IOUR_ALLOW or IOUR_DENY.  0, or an exit code.
 */
static int check_enforced(struct iour_policy *pol, uint32_t kver, enum cli_mech mech, uint32_t op,
			  uint32_t verdict, uint32_t *out)
{
	struct iour_plan_opts po = { .sz = sizeof(po) };
	struct iour_decision d = { .sz = sizeof(d) };
	struct iour_features f;
	struct iour_plan *plan = NULL;
	const struct iour_report *r;
	enum cli_mech used = CLI_MECH_AUTO;
	const char *why = "as the policy says";
	int rc, n;

	if (kver) {
		f.sz = sizeof(f);
		(void)iour_kernel_describe(kver, &f);
		po.features = &f;
	}
	rc = cli_plan_mech(pol, &po, mech, &used, &plan);
	if (rc)
		return rc > 0 ? rc : cli_fail(rc, "planning the policy");
	r = iour_plan__report(plan);
	*out = verdict;
	n = iour_report__decision_cnt(r);
	for (int i = 0; i < n; i++) {
		if (iour_report__decision(r, (size_t)i, &d) || d.opcode != op)
			continue;
		if (d.kind == IOUR_DECISION_TIGHTENED || d.kind == IOUR_DECISION_CLAMPED) {
			*out = IOUR_DENY;
			why = d.kind == IOUR_DECISION_CLAMPED ? "the kernel does not know the opcode" :
				  "its argument rules cannot be enforced there (fallback closed)";
		} else if (d.kind == IOUR_DECISION_LOOSENED && d.reason != IOUR_REASON_FIXED_FILES) {
			*out = IOUR_ALLOW;
			why = "its argument rules cannot be enforced there (fallback open)";
		}
	}
	if (used == CLI_MECH_COMPANION && (iour_report__mechanism(r) & IOUR_MECH_COMPANION)) {
		*out = IOUR_DENY;
		why = "io_uring_setup fails: no ring exists";
	} else if (iour_report__status(r) == IOUR_STATUS_NOT_ENFORCED &&
		   !iour_report__mechanism(r)) {
		*out = IOUR_ALLOW;
		why = "nothing is enforced";
	}
	printf("enforced: %s (mechanism %s: %s)\n", *out == IOUR_DENY ? "deny" : "allow",
	       cli_mech_name(used), why);
	iour_plan__free(plan);
	return 0;
}

int cmd_check(int argc, char **argv)
{
	enum { O_OP = 256, O_KERNEL, O_EXPECT, O_REG, O_FLAGS, O_MECH };
	static const struct option lo[] = {
		{ "mechanism", required_argument, NULL, O_MECH },
		{ "op", required_argument, NULL, O_OP },
		{ "register-op", required_argument, NULL, O_REG },
		{ "sqe-flags", required_argument, NULL, O_FLAGS },
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
	uint32_t op = UINT32_MAX, kver = 0, reg = 0, sqe_flags = 0;
	int expect = -1, c, rc;
	size_t flen = 0;
	bool have_op = false, have_reg = false, have_flags = false, have_mech = false;
	enum cli_mech mech = CLI_MECH_AUTO;
	uint32_t verdict;

	opterr = 0;
	/* GNU order: options may follow POLICY and the assignments. */
	while ((c = getopt_long(argc, argv, ":h", lo, NULL)) != -1) {
		switch (c) {
		case O_OP:
			if (cli_parse_opcode(optarg, &op))
				return cli_usage("--op: unknown request opcode '%s'%s (see '%s "
						 "names ops')", optarg,
						 cli_near(IOUR_NAME_OPCODE, optarg), CLI_PROG);
			have_op = true;
			break;
		case O_REG: {
			uint64_t v;
			int r = iour_register_op_from_name(optarg);

			if (r >= 0)
				reg = (uint32_t)r;
			else if (!cli_parse_u64(optarg, &v) && v < 256)
				reg = (uint32_t)v;
			else
				return cli_usage("--register-op: unknown register opcode '%s'%s "
						 "(see '%s names register')", optarg,
						 cli_near(IOUR_NAME_REGISTER_OP, optarg), CLI_PROG);
			have_reg = true;
			break;
		}
		case O_FLAGS:
			rc = cli_parse_sqe_flags(optarg, "--sqe-flags", &sqe_flags);
			if (rc)
				return rc;
			have_flags = true;
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
		case O_MECH:
			if (cli_mech_parse(optarg, &mech))
				return CLI_USAGE;
			have_mech = true;
			break;
		case 'h':
			return cli_help(cli_help_check);
		default:
			return cli_getopt_error(c, argv);
		}
	}
	if (optind >= argc)
		return cli_usage("no policy file given");
	if (have_reg) {
		if (have_op || have_flags || have_mech || optind + 1 < argc)
			return cli_usage("--register-op takes no --op, --sqe-flags, --mechanism or "
					 "FIELD=VALUE");
		return check_register(argv[optind], kver, reg, expect);
	}
	if (!have_op)
		return cli_usage("--op OPCODE (or --register-op NAME) is required");
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
	if (have_flags)
		ctx[IOUR_CTX_OFF_SQE_FLAGS] = (uint8_t)sqe_flags;

	rc = cli_policy_load(path, kver, &pol);
	if (rc)
		return rc;
	rc = iour_policy__decide(pol, ctx, sizeof(ctx), &d);
	if (rc) {
		iour_policy__free(pol);
		return cli_fail(rc, "iour_policy__decide");
	}
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
	verdict = d.verdict == IOUR_DENY ? IOUR_DENY : IOUR_ALLOW;
	if (have_mech) {
		rc = check_enforced(pol, kver, mech, op, verdict, &verdict);
		if (rc) {
			iour_policy__free(pol);
			return rc;
		}
	}
	iour_policy__free(pol);
	if (expect >= 0 && (uint32_t)expect != verdict) {
		cli_msg("the %s is %s, not %s", have_mech ? "enforced verdict" : "verdict",
			verdict == IOUR_DENY ? "deny" : "allow", expect == IOUR_DENY ? "deny" : "allow");
		return CLI_FAIL;
	}
	return CLI_OK;
}

/*
 * Whether the policy allows register opcode @reg on a ring on Linux 7.2
 * (split gates): what the ring restriction step of its plan enforces, as
 * lint's check_sealed reads it.  *listed is 1 if allowed, 0 if not;
 * *gate is 0 if the plan has no restriction step (no classic part), 1 if
 * the register side is an allow-list, 2 if only the SQE side is gated
 * (defaultAction allow without registerOps): register opcodes stay open.
 */
static int register_verdict(const struct iour_policy *p, uint32_t reg, int *listed, int *gate)
{
	struct iour_plan_opts po = { .sz = sizeof(po) };
	struct iour_ruleset *rs = NULL;
	struct iour_features f;
	int r;

	*listed = 1;
	*gate = 0;
	f.sz = sizeof(f);
	(void)iour_kernel_describe((uint32_t)iour_kernel_generation(IOUR_KGEN_NEWEST), &f);
	po.features = &f;
	r = cli_ring_ruleset(p, &po, &rs);
	if (!r && rs) {
		*gate = iour_ruleset__register_restricted(rs) == 1 ? 1 : 2;
		/* A number beyond the library's table (-ERANGE) is not allowed. */
		*listed = *gate == 2 || iour_ruleset__register_op_allowed(rs, reg) == 1;
	}
	iour_ruleset__free(rs);
	return r;
}

static int check_register(const char *path, uint32_t kver, uint32_t reg, int expect)
{
	struct iour_policy *pol = NULL;
	const char *name = iour_register_op_name(reg);
	char numbuf[32];
	int listed, gate, rc;

	rc = cli_policy_load(path, kver, &pol);
	if (rc)
		return rc;
	rc = register_verdict(pol, reg, &listed, &gate);
	iour_policy__free(pol);
	if (rc)
		return cli_fail(rc, "planning the policy");
	if (!name) {
		snprintf(numbuf, sizeof(numbuf), "register opcode %u", reg);
		name = numbuf;
	}
	printf("verdict: %s\n", listed ? "allow" : "deny");
	printf("reason: %s\n", gate == 1 ? "register-allow-list" :
				gate == 2 ? "no-register-allow-list" :
					    "no-classic-part");
	printf("rule: -\n");
	if (gate == 1)
		printf("because: the classic part (registerOps) %s %s\n",
		       listed ? "allows" : "does not allow", name);
	else if (gate == 2)
		printf("because: the classic part has no registerOps (defaultAction allow): "
		       "register opcodes are not restricted\n");
	else
		printf("because: the policy has no classic part (defaultAction allow without "
		       "registerOps): register opcodes are not restricted\n");
	if (expect >= 0 && (uint32_t)expect != (listed ? IOUR_ALLOW : IOUR_DENY)) {
		cli_msg("the verdict is %s, not %s", listed ? "allow" : "deny",
			expect == IOUR_DENY ? "deny" : "allow");
		return CLI_FAIL;
	}
	return CLI_OK;
}
