/* SPDX-License-Identifier: MIT */
/*
 * sandbox_launcher: run a command whose io_uring use is restricted for good,
 * confirmed before the command starts.
 *
 *   sandbox_launcher [-a OP,OP,...] [-e] [-n] [-H HELPER] -- COMMAND [ARG...]
 *
 *   -a  the request opcodes the command may use (default
 *       NOP,READ,WRITE,READV,WRITEV); every SQE flag is allowed
 *   -e  on kernels without task restrictions, make io_uring_setup fail
 *       with EPERM instead of ENOSYS
 *   -n  skip the enforcement check (not recommended)
 *   -H  the helper the enforcement check executes (default:
 *       iour-verify-helper next to this program)
 *
 * Steps: a task policy (no_new_privs set if needed, best effort, the
 * seccomp companion on kernels without task restrictions); its report; the
 * enforcement check after an execve of the helper, which inherits exactly
 * what the command will inherit; then execvp(COMMAND).  On Linux 7.0+ the
 * command and everything it starts can only create rings restricted to the
 * allow-list.  On older kernels io_uring_setup fails with ENOSYS (libuv,
 * Tokio and others then fall back to epoll), and the report says the policy
 * is only partially enforced.  The launcher never creates a ring itself:
 * a task that did, and then executes a program, would lose its task
 * restrictions on Linux 7.0/7.1.
 *
 * Exit status: the command's (it replaces the launcher), or 1 if the
 * policy could not be applied or the kernel did not confirm the report, or
 * 2 for a usage error.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <iouring_restrict/iouring_restrict.h>

#define ME "sandbox_launcher"
#define ALL_SQE_FLAGS 0x7fU
#define OP_SOCKET 45

static int usage(void)
{
	fprintf(stderr, "usage: " ME " [-a OP,OP,...] [-e] [-n] [-H HELPER] -- COMMAND [ARG...]\n");
	return 2;
}

static int fail(const char *what, int rc)
{
	fprintf(stderr, ME ": %s: %s\n", what, iour_errname(rc));
	return 1;
}

static void print_report(const struct iour_report *r)
{
	size_t len = 0;
	char *t, *line;

	if (iour_report__describe(r, NULL, &len) || !(t = malloc(len)))
		return;
	if (!iour_report__describe(r, t, &len))
		for (line = strtok(t, "\n"); line; line = strtok(NULL, "\n"))
			fprintf(stderr, ME ": | %s\n", line);
	free(t);
}

static const char *default_helper(const char *argv0)
{
	static char path[4096];
	const char *slash = strrchr(argv0, '/');

	if (!slash)
		return NULL;
	snprintf(path, sizeof(path), "%.*s/iour-verify-helper", (int)(slash - argv0), argv0);
	return path;
}

/*
 * What the report claims, checked after an execve of the helper:
 * task restrictions allow the listed opcodes and deny others; the
 * companion makes io_uring_setup fail with its errno.
 */
static int confirm(const struct iour_report *rep, const bool *allowed, uint32_t first_allowed,
		   int companion_err, const char *helper)
{
	IOUR_OPTS(iour_verify_opts, o, .exec_path = helper);
	struct iour_verify_req req[3];
	struct iour_verify_result res[3];
	int mech = iour_report__mechanism(rep), rc;
	size_t n = 0;

	memset(req, 0, sizeof(req));
	req[n].sz = sizeof(req[0]);
	req[n].opcode = first_allowed;
	req[n++].expect = IOUR_EXPECT_ALLOW;
	if (mech & IOUR_MECH_TASK) {
		/* Two opcodes the command may not use, if it may not. */
		if (!allowed[18]) {
			req[n].sz = sizeof(req[0]);
			req[n].opcode = 18; /* OPENAT */
			req[n].path = "/dev/null";
			req[n++].expect = IOUR_EXPECT_DENY;
		}
		if (!allowed[OP_SOCKET]) {
			req[n].sz = sizeof(req[0]);
			req[n].opcode = OP_SOCKET;
			req[n].family = AF_INET;
			req[n].type = SOCK_STREAM;
			req[n++].expect = IOUR_EXPECT_DENY;
		}
	}
	memset(res, 0, sizeof(res));
	rc = iour_verify(req, n, res, &o);
	if (mech & IOUR_MECH_TASK) {
		fprintf(stderr, ME ": enforcement check after execve of %s: %zu requests %s\n",
			helper, n, rc == 0 ? "answered as the report says" : iour_errname(rc));
		return rc == 0 ? 0 : 1;
	}
	if (mech & IOUR_MECH_COMPANION) {
		fprintf(stderr, ME ": enforcement check after execve of %s: io_uring_setup %s "
			"(the report says it fails with %s)\n", helper,
			rc == -companion_err ? "fails as claimed" : iour_errname(rc),
			companion_err == EPERM ? "EPERM" : "ENOSYS");
		return rc == -companion_err ? 0 : 1;
	}
	fprintf(stderr, ME ": nothing restricts the command's io_uring use (the report says "
		"%s)\n", iour_status_str(iour_report__status(rep)));
	return 1;
}

int main(int argc, char **argv)
{
	const char *ops = "NOP,READ,WRITE,READV,WRITEV", *helper = NULL;
	uint32_t companion = IOUR_POLICY_COMPANION_ENOSYS, first_allowed = UINT32_MAX;
	struct iour_ruleset *rs = NULL;
	struct iour_policy *p = NULL;
	struct iour_plan *pl = NULL;
	struct iour_report *rep = NULL;
	bool allowed[256] = { false }, check = true;
	char *list, *tok;
	int c, rc;

	while ((c = getopt(argc, argv, "+a:enH:")) != -1) {
		switch (c) {
		case 'a': ops = optarg; break;
		case 'e': companion = IOUR_POLICY_COMPANION_EPERM; break;
		case 'n': check = false; break;
		case 'H': helper = optarg; break;
		default: return usage();
		}
	}
	if (optind >= argc)
		return usage();
	if (!helper)
		helper = default_helper(argv[0]);
	if (check && (!helper || access(helper, X_OK) != 0)) {
		fprintf(stderr, ME ": no enforcement-check helper (-H), or -n to skip the check\n");
		return 2;
	}

	/* 1. The policy: the allow-list, for the task and all it starts. */
	if ((rc = iour_ruleset__new(NULL, &rs)) || (rc = iour_ruleset__deny_all_sqe_ops(rs)) ||
	    (rc = iour_ruleset__set_sqe_flags(rs, ALL_SQE_FLAGS, 0)))
		return fail("ruleset", rc);
	if (!(list = strdup(ops)))
		return fail("allocation", -ENOMEM);
	for (tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
		int op = iour_opcode_from_name(tok);

		if (op < 0 || (rc = iour_ruleset__allow_sqe_op(rs, (uint32_t)op)))
			return fail(tok, op < 0 ? op : rc);
		allowed[op & 0xff] = true;
		if (first_allowed == UINT32_MAX || (uint32_t)op == 0)
			first_allowed = (uint32_t)op;
	}
	free(list);
	if (first_allowed == UINT32_MAX)
		return usage();
	if ((rc = iour_policy__new(NULL, &p)) || (rc = iour_policy__set_ruleset(p, rs)) ||
	    (rc = iour_policy__set_attr(p, IOUR_POLICY_ATTR_TARGET, IOUR_POLICY_TARGET_TASK)) ||
	    (rc = iour_policy__set_attr(p, IOUR_POLICY_ATTR_NNP, IOUR_POLICY_NNP_SET)) ||
	    (rc = iour_policy__set_attr(p, IOUR_POLICY_ATTR_COMPANION, companion)) ||
	    (rc = iour_policy__set_attr(p, IOUR_POLICY_ATTR_COMPAT, IOUR_POLICY_COMPAT_BEST_EFFORT)))
		return fail("policy", rc);
	iour_ruleset__free(rs);
	fprintf(stderr, ME ": io_uring for %s and everything it starts: only %s\n", argv[optind],
		ops);

	/* 2. Plan for this kernel (probed in a forked child) and apply. */
	rc = iour_policy__plan(p, NULL, &pl);
	if (rc)
		return fail("plan", rc);
	rc = iour_plan__apply_task(pl, NULL, &rep);
	if (rep)
		print_report(rep);
	if (rc)
		return fail("apply", rc);

	/* 3. The kernel confirms the report, after an execve like the
	 * command's, or the command is not started. */
	if (check && confirm(rep, allowed, first_allowed,
			     companion == IOUR_POLICY_COMPANION_EPERM ? EPERM : ENOSYS, helper)) {
		fprintf(stderr, ME ": the kernel did not confirm the report; not starting %s\n",
			argv[optind]);
		return 1;
	}
	iour_report__free(rep);
	iour_plan__free(pl);
	iour_policy__free(p);

	/* 4. The command. */
	fprintf(stderr, ME ": exec %s\n", argv[optind]);
	fflush(NULL);
	execvp(argv[optind], argv + optind);
	return fail(argv[optind], -errno);
}
