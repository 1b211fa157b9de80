/* SPDX-License-Identifier: MIT */
/*
 * iour-plan: the dry run of a policy.  Prints the plan (every registration
 * with its bytes decoded and its programs disassembled) and the report it
 * expects, for the running kernel or a forced feature level.  Nothing is
 * applied.
 *
 *   iour-plan [-l LEVEL] [-r] [-s] [-o] OPCODE...
 *
 *   OPCODE   request opcodes to allow, by name (NOP, READ, ...);
 *            "SOCKET:inet" allows SOCKET for AF_INET only (an argument rule)
 *   -l       plan for feature level 0..5 instead of the running kernel
 *   -r       restrict a ring instead of the calling task
 *   -s / -h  soft / hard compatibility requirement (default: best effort)
 *   -o       conditional rules fail open on kernels without filters
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <iouring_restrict/iouring_restrict.h>

static int fail(const char *what, int rc)
{
	fprintf(stderr, "iour-plan: %s: %s\n", what, iour_errname(rc));
	return 1;
}

int main(int argc, char **argv)
{
	struct iour_ruleset *rs = NULL;
	struct iour_filter *flt = NULL;
	struct iour_policy *p = NULL;
	struct iour_plan *pl = NULL;
	IOUR_OPTS(iour_plan_opts, o);
	size_t len = 0;
	char *text;
	int c, rc, i;

	if (iour_ruleset__new(NULL, &rs) || iour_filter__new(NULL, &flt) ||
	    iour_policy__new(NULL, &p))
		return fail("allocation", -ENOMEM);
	while ((c = getopt(argc, argv, "l:rsho")) != -1) {
		switch (c) {
		case 'l':
			o.flags = IOUR_PLAN_FORCE_LEVEL;
			o.level = (uint32_t)atoi(optarg);
			break;
		case 'r':
			iour_policy__set_attr(p, IOUR_POLICY_ATTR_TARGET, IOUR_POLICY_TARGET_RING);
			break;
		case 's':
			iour_policy__set_attr(p, IOUR_POLICY_ATTR_COMPAT, IOUR_POLICY_COMPAT_SOFT);
			break;
		case 'h':
			iour_policy__set_attr(p, IOUR_POLICY_ATTR_COMPAT, IOUR_POLICY_COMPAT_HARD);
			break;
		case 'o':
			iour_policy__set_attr(p, IOUR_POLICY_ATTR_NO_FILTER_FALLBACK,
					      IOUR_POLICY_FALLBACK_OPEN);
			break;
		default:
			fprintf(stderr, "usage: %s [-l LEVEL] [-r] [-s|-h] [-o] OPCODE...\n", argv[0]);
			return 2;
		}
	}
	iour_ruleset__deny_all_sqe_ops(rs);
	iour_ruleset__set_sqe_flags(rs, 0, 0);
	for (i = optind; i < argc; i++) {
		if (strcmp(argv[i], "SOCKET:inet") == 0) {
			struct iour_cmp cmp = { .sz = sizeof(cmp), .field = IOUR_FIELD_SOCKET_FAMILY,
						.op = IOUR_CMP_EQ, .value = AF_INET };

			rc = iour_filter__add_rule(flt, 45, IOUR_ALLOW, &cmp, 1);
			if (!rc)
				rc = iour_ruleset__allow_sqe_op(rs, 45);
		} else {
			rc = iour_ruleset__allow_sqe_op_name(rs, argv[i]);
		}
		if (rc)
			return fail(argv[i], rc);
	}
	if ((rc = iour_policy__set_ruleset(p, rs)) || (rc = iour_policy__set_filter(p, flt)))
		return fail("policy", rc);
	rc = iour_policy__plan(p, &o, &pl);
	if (rc)
		return fail("plan", rc);
	if ((rc = iour_plan__describe(pl, NULL, &len)) || !(text = malloc(len)) ||
	    (rc = iour_plan__describe(pl, text, &len)))
		return fail("describe", rc ? rc : -ENOMEM);
	fputs(text, stdout);
	free(text);
	iour_plan__free(pl);
	iour_policy__free(p);
	iour_filter__free(flt);
	iour_ruleset__free(rs);
	return 0;
}
