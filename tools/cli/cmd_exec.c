/* SPDX-License-Identifier: MIT */
/*
 * iour-restrict exec: a launcher.  It confines this process (which the
 * command then replaces) and executes the command, which inherits the
 * confinement across execve() together with everything it starts.
 *
 * The work is split into reading the command line into a struct
 * exec_setup, and applying that setup step by step (exec_apply()) just
 * before execvp(), so that further confinement steps slot in as more
 * fields and more steps.
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "cli.h"

const char cli_help_exec[] =
"Usage: iour-restrict exec [--companion-errno ERRNO] [--no-new-privs]\n"
"                          [--deny-existing] -- COMMAND [ARG]...\n"
"\n"
"Run COMMAND so that neither it nor anything it starts can create io_uring\n"
"rings: the seccomp companion (iour_companion_install) makes io_uring_setup()\n"
"fail with ENOSYS, which event loops read as \"no io_uring\" and fall back\n"
"to epoll.  This is the way to confine io_uring on kernels without task-level\n"
"restrictions (before Linux 7.0).  The filter cannot be removed and survives\n"
"execve().\n"
"\n"
"The kernel installs a seccomp filter only for a process that has\n"
"no_new_privs set or holds CAP_SYS_ADMIN.  Without either, pass\n"
"--no-new-privs (which also stops set-user-ID programs from gaining\n"
"privileges in COMMAND).\n"
"\n"
"Options:\n"
"  --companion-errno E    the error io_uring_setup() returns: ENOSYS (default),\n"
"                         EPERM, EACCES, or a number from 1 to 4095\n"
"  --no-new-privs         set no_new_privs first (irreversible)\n"
"  --deny-existing        also make io_uring_enter() and io_uring_register()\n"
"                         fail, so rings inherited or received are unusable too\n"
"  -h, --help             show this help\n"
"\n"
"Example: iour-restrict exec --no-new-privs -- node server.js\n"
"\n"
"Exit status: COMMAND's; 1 if the companion could not be installed; 2 on a\n"
"usage error; 126 if COMMAND could not be executed, 127 if it was not found.\n";

/* What exec sets up before executing the command. */
struct exec_setup {
	bool companion;                       /* install the seccomp companion */
	struct iour_companion_opts companion_opts;
};

/* Applies @s to this process; returns 0 or an exit code. */
static int exec_apply(const struct exec_setup *s)
{
	int r;

	if (s->companion) {
		r = iour_companion_install(&s->companion_opts);
		if (r == -EACCES) {
			cli_fail(r, "installing the seccomp companion");
			cli_msg("this process has neither no_new_privs nor CAP_SYS_ADMIN: "
				"add --no-new-privs");
			return CLI_FAIL;
		}
		if (r)
			return cli_fail(r, "installing the seccomp companion");
	}
	return 0;
}

static int parse_errno(const char *s, uint32_t *out)
{
	static const struct {
		const char *name;
		uint32_t value;
	} names[] = { { "ENOSYS", ENOSYS }, { "EPERM", EPERM }, { "EACCES", EACCES } };
	uint64_t v;

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!strcasecmp(s, names[i].name)) {
			*out = names[i].value;
			return 0;
		}
	}
	if (cli_parse_u64(s, &v) || v < 1 || v > IOUR_COMPANION_MAX_ERRNO)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

int cmd_exec(int argc, char **argv)
{
	enum { O_ERRNO = 256, O_NNP, O_DENY_EXISTING };
	static const struct option lo[] = {
		{ "companion-errno", required_argument, NULL, O_ERRNO },
		{ "no-new-privs", no_argument, NULL, O_NNP },
		{ "deny-existing", no_argument, NULL, O_DENY_EXISTING },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct exec_setup s = {
		.companion = true,
		.companion_opts = { .sz = sizeof(s.companion_opts) },
	};
	int c, rc, err;

	opterr = 0;
	/* '+': options end at the command, whose own options are its own. */
	while ((c = getopt_long(argc, argv, "+:h", lo, NULL)) != -1) {
		switch (c) {
		case O_ERRNO:
			if (parse_errno(optarg, &s.companion_opts.errno_value))
				return cli_usage("--companion-errno: '%s' is not ENOSYS, EPERM, "
						 "EACCES or 1 to %d", optarg,
						 IOUR_COMPANION_MAX_ERRNO);
			break;
		case O_NNP:
			s.companion_opts.flags |= IOUR_COMPANION_SET_NNP;
			break;
		case O_DENY_EXISTING:
			s.companion_opts.flags |= IOUR_COMPANION_ENTER | IOUR_COMPANION_REGISTER;
			break;
		case 'h':
			return cli_help(cli_help_exec);
		default:
			return cli_getopt_error(c, argv);
		}
	}
	if (optind >= argc)
		return cli_usage("no command given (iour-restrict exec [options] -- COMMAND "
				 "[ARG]...)");

	rc = exec_apply(&s);
	if (rc)
		return rc;
	execvp(argv[optind], argv + optind);
	err = errno;
	cli_fail(-err, "cannot execute '%s'", argv[optind]);
	return err == ENOENT ? 127 : 126;
}
