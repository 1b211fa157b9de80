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
#include <sys/utsname.h>
#include <unistd.h>

#include "core/cli.h"

const char cli_help_exec[] =
"Usage: iour-restrict exec [--companion-errno ERRNO] [--no-new-privs]\n"
"                          [--deny-existing] [--existing-rings close|refuse|keep]\n"
"                          [--quiet] -- COMMAND [ARG]...\n"
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
"Before executing COMMAND, one line on stderr says what is enforced, by\n"
"which mechanism, on which kernel.\n"
"\n"
"Options:\n"
"  --companion-errno E    the error io_uring_setup() returns: ENOSYS (default),\n"
"                         EPERM, EACCES, or a number from 1 to 4095\n"
"  --no-new-privs         set no_new_privs first (irreversible)\n"
"  --deny-existing        also make io_uring_enter() and io_uring_register()\n"
"                         fail, and close every io_uring fd this process holds\n"
"                         (see --existing-rings), so that COMMAND can reach no\n"
"                         ring that exists\n"
"  --existing-rings M     io_uring fds this process holds (inherited from its\n"
"                         parent): close them (the default with\n"
"                         --deny-existing), refuse to run COMMAND if there is\n"
"                         any, or keep them (the default otherwise; not allowed\n"
"                         with --deny-existing: an SQPOLL ring needs no system\n"
"                         call to be fed)\n"
"  -q, --quiet            do not print the line saying what is enforced\n"
"  -h, --help             show this help\n"
"\n"
"Example: iour-restrict exec --no-new-privs --deny-existing -- node server.js\n"
"\n"
"Exit status: COMMAND's; 1 if the companion could not be installed, the\n"
"io_uring fds could not be listed (no procfs) or, with --existing-rings\n"
"refuse, there were some; 2 on a usage error; 126 if COMMAND could not be\n"
"executed, 127 if it was not found.\n";

/* What to do with the io_uring fds this process holds. */
enum existing_rings { RINGS_DEFAULT, RINGS_KEEP, RINGS_CLOSE, RINGS_REFUSE };

/* What exec sets up before executing the command. */
struct exec_setup {
	bool companion;                       /* install the seccomp companion */
	struct iour_companion_opts companion_opts;
	enum existing_rings rings;            /* never RINGS_DEFAULT when applied */
	bool quiet;                           /* no report line */
};

/* What exec_apply() did, for the report line. */
struct exec_done {
	int rings;  /* io_uring fds closed (RINGS_CLOSE) or kept (RINGS_KEEP) */
	bool rings_known; /* `rings` is known (procfs was readable) */
};

static const char *errno_name(uint32_t e)
{
	switch (e) {
	case 0:
	case ENOSYS:
		return "ENOSYS";
	case EPERM:
		return "EPERM";
	case EACCES:
		return "EACCES";
	default:
		return NULL;
	}
}

/* One line on stderr: what is enforced, by which mechanism, on which
 * kernel.  Every clause is true once exec_apply() returned 0. */
static void exec_report(const struct exec_setup *s, const struct exec_done *d)
{
	const struct iour_companion_opts *o = &s->companion_opts;
	const char *en = errno_name(o->errno_value);
	struct utsname u;
	char err[24];

	if (s->quiet)
		return;
	if (uname(&u))
		snprintf(u.release, sizeof(u.release), "an unknown kernel");
	if (en)
		snprintf(err, sizeof(err), "%s", en);
	else
		snprintf(err, sizeof(err), "errno %u", o->errno_value);
	fprintf(stderr, CLI_PROG ": on Linux %s: io_uring_setup fails with %s for the command and all it starts (seccomp companion)",
		u.release, err);
	if (o->flags & IOUR_COMPANION_ENTER)
		fprintf(stderr, "; io_uring_enter and io_uring_register fail too");
	if (s->rings == RINGS_CLOSE)
		fprintf(stderr, "; %d io_uring fd%s closed", d->rings, d->rings == 1 ? "" : "s");
	else if (s->rings == RINGS_REFUSE)
		fprintf(stderr, "; no io_uring fd held");
	else if (d->rings_known && d->rings > 0)
		fprintf(stderr, "; %d inherited io_uring fd%s kept usable", d->rings,
			d->rings == 1 ? "" : "s");
	else if (!d->rings_known)
		fprintf(stderr, "; inherited rings, if any, keep working");
	if (o->flags & IOUR_COMPANION_SET_NNP)
		fprintf(stderr, "; no_new_privs set");
	fputc('\n', stderr);
}

/* Applies @s to this process; returns 0 or an exit code. */
static int exec_apply(const struct exec_setup *s, struct exec_done *d)
{
	int r;

	memset(d, 0, sizeof(*d));
	/*
	 * The io_uring fds first: refusing, or failing to find them, must
	 * happen before the irreversible companion.  The command then holds
	 * none (doc/security.md: what stays reachable).
	 */
	if (s->rings == RINGS_CLOSE || s->rings == RINGS_REFUSE) {
		r = iour_ring_fds_close(s->rings == RINGS_REFUSE ? IOUR_RING_FDS_REFUSE : 0);
		if (r == -EBUSY && s->rings == RINGS_REFUSE) {
			cli_msg("this process holds io_uring fds (inherited); refusing to run "
				"the command (--existing-rings refuse)");
			return CLI_FAIL;
		}
		if (r < 0)
			return cli_fail(r, "finding the io_uring fds to close");
		d->rings = r;
		d->rings_known = true;
	} else {
		r = iour_ring_fds(NULL, 0);
		d->rings = r > 0 ? r : 0;
		d->rings_known = r >= 0;
	}
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
	enum { O_ERRNO = 256, O_NNP, O_DENY_EXISTING, O_RINGS };
	static const struct option lo[] = {
		{ "companion-errno", required_argument, NULL, O_ERRNO },
		{ "no-new-privs", no_argument, NULL, O_NNP },
		{ "deny-existing", no_argument, NULL, O_DENY_EXISTING },
		{ "existing-rings", required_argument, NULL, O_RINGS },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct exec_setup s = {
		.companion = true,
		.companion_opts = { .sz = sizeof(s.companion_opts) },
		.rings = RINGS_DEFAULT,
	};
	struct exec_done done;
	bool deny_existing = false;
	int c, rc, err;

	opterr = 0;
	/* '+': options end at the command, whose own options are its own. */
	while ((c = getopt_long(argc, argv, "+:hq", lo, NULL)) != -1) {
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
			deny_existing = true;
			break;
		case O_RINGS:
			if (!strcmp(optarg, "close"))
				s.rings = RINGS_CLOSE;
			else if (!strcmp(optarg, "refuse"))
				s.rings = RINGS_REFUSE;
			else if (!strcmp(optarg, "keep"))
				s.rings = RINGS_KEEP;
			else
				return cli_usage("--existing-rings: '%s' is not close, refuse or "
						 "keep", optarg);
			break;
		case 'q':
			s.quiet = true;
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

	if (s.rings == RINGS_DEFAULT)
		s.rings = deny_existing ? RINGS_CLOSE : RINGS_KEEP;
	else if (s.rings == RINGS_KEEP && deny_existing)
		return cli_usage("--deny-existing with --existing-rings keep would leave "
				 "inherited SQPOLL rings usable without any system call");

	rc = exec_apply(&s, &done);
	if (rc)
		return rc;
	exec_report(&s, &done);
	execvp(argv[optind], argv + optind);
	err = errno;
	cli_fail(-err, "cannot execute '%s'", argv[optind]);
	return err == ENOENT ? 127 : 126;
}
