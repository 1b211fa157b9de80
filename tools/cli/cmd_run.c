/* SPDX-License-Identifier: MIT */
/*
 * iour-restrict run: applies a policy file to this process and executes a
 * command under it.  The policy is planned for the running kernel and
 * applied with iour_plan__apply_task(); the command inherits what took
 * effect across execve(), and so does everything it starts.  One line on
 * stderr says what took effect, read from the executor's report.
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "cli.h"

const char cli_help_run[] =
"Usage: iour-restrict run POLICY [--best-effort | --soft | --hard]\n"
"                         [--companion=enosys|eperm|off] [-q|--quiet]\n"
"                         -- COMMAND [ARG]...\n"
"\n"
"Apply the policy file POLICY to this process, then execute COMMAND, which\n"
"inherits the restriction together with everything it starts.  The policy\n"
"is planned for the running kernel: on Linux 7.0 and later as task\n"
"restrictions and argument filters; before 7.0, where a task cannot be\n"
"restricted, by the seccomp companion, which makes io_uring_setup() fail so\n"
"that COMMAND falls back to other interfaces.\n"
"\n"
"Before executing COMMAND, one line on stderr says how completely the policy\n"
"is enforced, by which mechanism, on which kernel.\n"
"\n"
"Options (override the policy file's own settings):\n"
"  --best-effort          apply what the kernel can enforce (the report says\n"
"                         what is missing)\n"
"  --soft                 if the kernel cannot enforce the policy exactly,\n"
"                         apply nothing and run COMMAND unrestricted (the\n"
"                         report line says \"not enforced\")\n"
"  --hard                 if the kernel cannot enforce the policy exactly, do\n"
"                         not run COMMAND (exit 1)\n"
"  --companion=MODE       before Linux 7.0: io_uring_setup() fails with\n"
"                         ENOSYS (enosys), EPERM (eperm), or no seccomp\n"
"                         companion is installed (off)\n"
"  -q, --quiet            do not print the report line\n"
"  -h, --help             show this help\n"
"\n"
"Example: iour-restrict run /etc/iour/web.json -- nginx -g 'daemon off;'\n"
"\n"
"Exit status: COMMAND's; 1 if the policy could not be applied (or --hard\n"
"refused it); 2 on a usage error; 3 if POLICY cannot be read or is not\n"
"valid; 126 if COMMAND could not be executed, 127 if it was not found.\n";

static const char *mechanism_str(unsigned int mech, char *buf, size_t len)
{
	static const struct {
		unsigned int bit;
		const char *name;
	} names[] = {
		{ IOUR_MECH_TASK, "task restrictions and filters" },
		{ IOUR_MECH_RING, "ring filters" },
		{ IOUR_MECH_RING_DISABLED, "ring restrictions" },
		{ IOUR_MECH_COMPANION, "seccomp companion" },
	};
	size_t used = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!(mech & names[i].bit))
			continue;
		used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? " + " : "",
					 names[i].name);
		if (used >= len)
			break;
	}
	if (!buf[0])
		snprintf(buf, len, "no mechanism");
	return buf;
}

/*
 * The report line: status, mechanism, kernel, what the companion does,
 * whether more is allowed or denied than the policy says, and how many
 * rules the kernel could not take as written.  Every clause comes from the
 * executor's report of what took effect.
 */
static void run_report(const struct iour_report *r, uint32_t companion)
{
	int status = iour_report__status(r), n = iour_report__decision_cnt(r);
	unsigned int mech = (unsigned int)iour_report__mechanism(r);
	unsigned int flags = (unsigned int)iour_report__flags(r);
	int changed = 0;
	struct iour_decision d = { .sz = sizeof(d) };
	char mbuf[128];
	struct utsname u;

	if (uname(&u))
		snprintf(u.release, sizeof(u.release), "an unknown kernel");
	for (int i = 0; i < n; i++) {
		if (iour_report__decision(r, (size_t)i, &d))
			continue;
		/* Rules of an opcode that the kernel takes differently. */
		if (d.opcode != IOUR_DECISION_NO_OPCODE &&
		    (d.kind == IOUR_DECISION_DROPPED || d.kind == IOUR_DECISION_TIGHTENED ||
		     d.kind == IOUR_DECISION_LOOSENED))
			changed++;
	}
	fprintf(stderr, CLI_PROG ": on Linux %s: policy %s (%s)", u.release, iour_status_str(status),
		mechanism_str(mech, mbuf, sizeof(mbuf)));
	if (mech & IOUR_MECH_COMPANION)
		fprintf(stderr, "; io_uring_setup fails with %s for the command and all it starts",
			companion == IOUR_POLICY_COMPANION_EPERM ? "EPERM" : "ENOSYS");
	if (flags & IOUR_REPORT_LOOSENED)
		fprintf(stderr, "; some requests the policy denies may succeed");
	if (flags & IOUR_REPORT_TIGHTENED)
		fprintf(stderr, "; some requests the policy allows are denied");
	if (flags & IOUR_REPORT_OTHER_THREADS)
		fprintf(stderr, "; other threads are not restricted");
	if (flags & IOUR_REPORT_NNP_SET)
		fprintf(stderr, "; no_new_privs set");
	if (changed)
		fprintf(stderr, "; the rules of %d opcode%s are not enforced as written ('" CLI_PROG
			" compile' says how)", changed, changed == 1 ? "" : "s");
	fputc('\n', stderr);
}

int cmd_run(int argc, char **argv)
{
	enum { O_BEST = 256, O_SOFT, O_HARD, O_COMPANION };
	static const struct option lo[] = {
		{ "best-effort", no_argument, NULL, O_BEST },
		{ "soft", no_argument, NULL, O_SOFT },
		{ "hard", no_argument, NULL, O_HARD },
		{ "companion", required_argument, NULL, O_COMPANION },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct iour_apply_opts ao = { .sz = sizeof(ao) };
	struct iour_policy *pol = NULL;
	struct iour_plan *plan = NULL;
	struct iour_report *rep = NULL;
	int compat = -1, companion = -1, c, rc, err;
	uint32_t comp_val = IOUR_POLICY_COMPANION_ENOSYS;
	const char *path = NULL;
	bool quiet = false;

	opterr = 0;
	/* '+': options end at the first operand after POLICY, or at "--". */
	while (optind < argc) {
		c = getopt_long(argc, argv, "+:hq", lo, NULL);
		if (c == -1) {
			/* POLICY, then more options; the command only after "--". */
			if (path || !strcmp(argv[optind - 1], "--"))
				break;
			path = argv[optind++];
			continue;
		}
		switch (c) {
		case O_BEST:
		case O_SOFT:
		case O_HARD:
			if (compat >= 0)
				return cli_usage("--best-effort, --soft and --hard exclude each other");
			compat = c == O_BEST ? IOUR_POLICY_COMPAT_BEST_EFFORT :
			         c == O_SOFT ? IOUR_POLICY_COMPAT_SOFT : IOUR_POLICY_COMPAT_HARD;
			break;
		case O_COMPANION:
			if (!strcmp(optarg, "enosys"))
				companion = IOUR_POLICY_COMPANION_ENOSYS;
			else if (!strcmp(optarg, "eperm"))
				companion = IOUR_POLICY_COMPANION_EPERM;
			else if (!strcmp(optarg, "off"))
				companion = IOUR_POLICY_COMPANION_NONE;
			else
				return cli_usage("--companion: '%s' is not enosys, eperm or off",
						 optarg);
			break;
		case 'q':
			quiet = true;
			break;
		case 'h':
			return cli_help(cli_help_run);
		default:
			return cli_getopt_error(c, argv);
		}
	}
	if (!path)
		return cli_usage("no policy file given (iour-restrict run POLICY [options] -- "
				 "COMMAND [ARG]...)");
	if (optind >= argc || strcmp(argv[optind - 1], "--") != 0)
		return cli_usage("no command given: put it after '--' (iour-restrict run POLICY "
				 "[options] -- COMMAND [ARG]...)");

	rc = cli_policy_load(path, 0, &pol);
	if (rc)
		return rc;
	rc = CLI_FAIL;
	if (compat >= 0 && (err = iour_policy__set_attr(pol, IOUR_POLICY_ATTR_COMPAT,
							  (uint32_t)compat))) {
		cli_fail(err, "setting the compatibility level");
		goto out;
	}
	if (companion >= 0 && (err = iour_policy__set_attr(pol, IOUR_POLICY_ATTR_COMPANION,
							     (uint32_t)companion))) {
		cli_fail(err, "setting the companion");
		goto out;
	}
	(void)iour_policy__get_attr(pol, IOUR_POLICY_ATTR_COMPANION, &comp_val);
	{
		uint32_t target = IOUR_POLICY_TARGET_TASK;

		(void)iour_policy__get_attr(pol, IOUR_POLICY_ATTR_TARGET, &target);
		if (target != IOUR_POLICY_TARGET_TASK) {
			cli_msg("%s: the policy restricts one ring (target ring); run applies "
				"task policies only", path);
			rc = CLI_POLICY;
			goto out;
		}
	}
	err = iour_policy__plan(pol, NULL, &plan);
	if (err) {
		cli_fail(err, "planning the policy for the running kernel");
		goto out;
	}
	err = iour_plan__apply_task(plan, &ao, &rep);
	if (err == -IOUR_ERRNO__UNSUPPORTED) {
		cli_msg("the running kernel cannot enforce the policy exactly, and its "
			"compatibility level is hard; not running '%s'", argv[optind]);
		goto out;
	}
	if (err) {
		cli_fail(err, "applying the policy");
		if (rep && err == -IOUR_ERRNO__PARTIAL)
			cli_msg("part of the policy took effect; not running '%s'", argv[optind]);
		goto out;
	}
	if (!quiet)
		run_report(rep, comp_val);
	iour_report__free(rep);
	iour_plan__free(plan);
	iour_policy__free(pol);
	execvp(argv[optind], argv + optind);
	err = errno;
	cli_fail(-err, "cannot execute '%s'", argv[optind]);
	return err == ENOENT ? 127 : 126;
out:
	iour_report__free(rep);
	iour_plan__free(plan);
	iour_policy__free(pol);
	return rc;
}
