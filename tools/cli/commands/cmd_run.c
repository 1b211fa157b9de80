/* SPDX-License-Identifier: MIT */
/*
 * iour-restrict run: applies a policy file to this process and executes a
 * command under it.  The policy is planned for the running kernel and
 * applied with iour_plan__apply_task(); the command inherits what took
 * effect across execve(), and so does everything it starts.  One line on
 * stderr says what took effect, read from the executor's report.
 *
 * On kernels without task restrictions (before 7.0) run is a ring broker
 * by default (include/iouring_restrict/broker.h): it forks, the child
 * installs the broker's seccomp filter, hands the listener to the parent
 * and executes the command; the parent serves every io_uring_setup of the
 * command and all it starts with a ring restricted by the policy, and
 * exits with the command's status.  --broker=off keeps the companion.
 * Under systemd (NOTIFY_SOCKET set) the broker first names the command's
 * process the unit's main PID, so that a Type=notify service's READY=1
 * is accepted with the default NotifyAccess=main (doc/systemd.md).
 *
 * io_uring fds this process inherited are closed before the command runs
 * (as `exec --deny-existing` does), unless --existing-rings says otherwise.
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <signal.h>
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/cli.h"
#include "learn/watch.h"

const char cli_help_run[] =
"Usage: iour-restrict run POLICY [--best-effort | --soft | --hard]\n"
"                         [--broker=auto|off] [--companion=enosys|eperm|off]\n"
"                         [--existing-rings=close|refuse|keep] [--allow-ptrace]\n"
"                         [--audit[=FILE] [--audit-out DELTA] |\n"
"                          --log-denials[=FILE]] [--report-interval SEC]\n"
"                         [-q|--quiet]\n"
"                         -- COMMAND [ARG]...\n"
"\n"
"Apply the policy file POLICY to COMMAND, which inherits the restriction\n"
"together with everything it starts.  The policy is planned for the running\n"
"kernel: on Linux 7.0 and later as task restrictions and argument filters,\n"
"applied to this process, which then executes COMMAND.  Before 7.0, where a\n"
"task cannot be restricted, run is a ring broker: COMMAND runs in a child\n"
"whose io_uring_setup() calls this process answers with rings it creates\n"
"and restricts by the policy itself, so every ring COMMAND and its children\n"
"create is restricted (SQPOLL and R_DISABLED rings are refused with EPERM);\n"
"run exits with COMMAND's status, after which io_uring_setup() fails with\n"
"ENOSYS for what COMMAND left running.  With --broker=off the seccomp\n"
"companion makes io_uring_setup() fail instead, so that COMMAND falls back\n"
"to other interfaces.\n"
"\n"
"io_uring fds this process inherited are closed before COMMAND runs: they\n"
"are rings no policy restricts.  COMMAND cannot take rings from other\n"
"processes either: ptrace attach, pidfd_getfd and process_vm_readv/writev\n"
"fail with EPERM, a Landlock domain (where the kernel has Landlock ABI 2)\n"
"keeps it out of other processes' /proc/PID/mem, and CAP_SYS_PTRACE is\n"
"dropped; the broker is not dumpable.\n"
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
"  --broker=MODE          before Linux 7.0: auto (the default) serves\n"
"                         restricted rings; off uses the companion instead\n"
"  --companion=MODE       with --broker=off before Linux 7.0:\n"
"                         io_uring_setup() fails with ENOSYS (enosys), EPERM\n"
"                         (eperm), or no seccomp companion is installed (off)\n"
"  --existing-rings=M     io_uring fds this process holds: close them (the\n"
"                         default), refuse to run COMMAND if there is any, or\n"
"                         keep them (the report line then says they are not\n"
"                         restricted)\n"
"  --allow-ptrace         let COMMAND ptrace other processes of its uid, for\n"
"                         debugging: it can then take unrestricted rings from\n"
"                         them (the report line says so)\n"
"  --audit[=FILE]         audit mode: NOTHING is enforced; COMMAND runs with\n"
"                         unrestricted io_uring and every request, register\n"
"                         call and ring setup the policy would deny on this\n"
"                         kernel is reported (to FILE, or stderr), with\n"
"                         counts, periodically and at exit (needs root and\n"
"                         tracefs)\n"
"  --audit-out DELTA      with --audit: write a policy file of what would be\n"
"                         denied, which `merge` accepts with POLICY\n"
"  --log-denials[=FILE]   log the requests and register calls the kernel\n"
"                         denies (EACCES) to FILE, or stderr, as far as its\n"
"                         tracepoints show them (the report line says)\n"
"  --report-interval SEC  seconds between reports of --audit or\n"
"                         --log-denials (default 10)\n"
"  -q, --quiet            do not print the report line\n"
"  -h, --help             show this help\n"
"\n"
"Example: iour-restrict run /etc/iour/web.json -- nginx -g 'daemon off;'\n"
"\n"
"Exit status: COMMAND's (killed by a signal: the same signal); 1 if the\n"
"policy could not be applied (or --hard refused it, or --existing-rings\n"
"refuse found a ring, or --audit or --log-denials cannot read the\n"
"tracepoints); 2 on a usage error; 3 if POLICY cannot be read or is\n"
"not valid; 126 if COMMAND could not be executed, 127 if it was not found.\n";

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
 * The report line: status, mechanism, kernel, what the broker or the
 * companion does, and by name what is not enforced as written (the
 * opcodes denied although allowed or allowed beyond their rules, the
 * ring-less register calls left open: the plan's decisions, which
 * `explain` and `compile` show for the same mechanism).  The status and
 * mechanism come from the executor's report of what took effect.
 */
/* What run does besides the report's steps, for the report line. */
enum run_rings { RUN_RINGS_CLOSE, RUN_RINGS_REFUSE, RUN_RINGS_KEEP };
struct run_extra {
	bool broker;         /* the ring broker serves the command's rings */
	enum run_rings mode; /* inherited io_uring fds */
	int rings;           /* how many were closed / kept (-1: unknown) */
	bool soft;           /* --soft (or the policy's compat soft) */
	bool broker_view;    /* planned for the broker */
	enum cli_mech view;  /* the mechanism planned for (mechanism.c) */
	/* The plan's report before the compatibility level dropped it (what
	 * cannot be enforced), or NULL: the report's own decisions. */
	const struct iour_report *plan_rep;
	bool allow_ptrace;   /* --allow-ptrace: no peer guard */
	const char *note;    /* the denial log's reach (watch_note()), or NULL */
};

/*
 * The peer guard's clause (doc/security.md, section 3a, "Ring
 * acquisition"): the library applies it with the broker's filter or after
 * the task steps.  What it closes depends on the kernel's Landlock ABI
 * (2+: /proc/PID/mem of other processes) and Yama (ptrace_scope 1+ closes
 * it too).  After iour_plan__apply_task() the report's note says what it
 * closed; with the broker, whose guard the child applies, the same text
 * is derived here from the same inputs.
 */
static void run_peers_clause(const struct iour_report *r, const struct run_extra *x)
{
	struct iour_decision d = { .sz = sizeof(d) };
	struct cli_peers p;
	int i, nd = iour_report__decision_cnt(r);

	for (i = 0; !x->broker && i < nd; i++) {
		if (!iour_report__decision(r, (size_t)i, &d) && d.kind == IOUR_DECISION_NOTE &&
		    d.text && !strncmp(d.text, "peer guard: ", 12)) {
			fprintf(stderr, "; %s", d.text + 12);
			return;
		}
	}
	if (x->allow_ptrace) {
		fprintf(stderr, "; other processes' rings are NOT closed (--allow-ptrace): "
				"ptrace, pidfd_getfd, process_vm_writev and /proc/PID/mem are open");
		return;
	}
	if (!x->broker) {
		fprintf(stderr, "; other processes' rings are NOT closed (no peer guard)");
		return;
	}
	cli_peers_probe(&p);
	if (cli_peers_mem_closed(&p))
		fprintf(stderr, "; other processes' rings are closed (ptrace, pidfd_getfd, "
				"process_vm_*, /proc/PID/mem: %s)",
			p.landlock_abi >= 2 ? "seccomp and Landlock" : "seccomp and Yama");
	else
		fprintf(stderr, "; /proc/PID/mem of other processes of the same uid is open "
				"(no Landlock ABI 2, no Yama); ptrace, pidfd_getfd and "
				"process_vm_* are closed");
}

static void run_report(const struct iour_report *r, uint32_t companion, const struct run_extra *x)
{
	int status = iour_report__status(r);
	unsigned int mech = (unsigned int)iour_report__mechanism(r);
	unsigned int flags = (unsigned int)iour_report__flags(r);
	char mbuf[128];
	struct utsname u;

	if (uname(&u))
		snprintf(u.release, sizeof(u.release), "an unknown kernel");
	if (status == IOUR_STATUS_NOT_ENFORCED && !mech && !x->broker) {
		/* Nothing applied (--soft, or nothing the kernel can do): no
		 * ring of the command is restricted. */
		fprintf(stderr, CLI_PROG ": on Linux %s: policy not enforced: the command runs with "
				"unrestricted io_uring", u.release);
		if (x->soft)
			fprintf(stderr, " (--soft: the kernel cannot enforce the policy exactly");
		if (x->soft && cli_report_diffs(stderr, x->plan_rep ? x->plan_rep : r, "; ") == 0)
			fprintf(stderr, "; '" CLI_PROG " explain --mechanism %s' says what",
				cli_mech_name(x->view));
		if (x->soft)
			fputc(')', stderr);
		goto tail;
	}
	fprintf(stderr, CLI_PROG ": on Linux %s: policy %s (%s%s)", u.release,
		iour_status_str(status), x->broker ? "ring broker: " : "",
		mechanism_str(mech, mbuf, sizeof(mbuf)));
	if (x->broker)
		fprintf(stderr, "; every io_uring ring the command and all it starts create is "
				"restricted; SQPOLL and R_DISABLED rings are refused (EPERM)");
	if (mech & IOUR_MECH_COMPANION)
		fprintf(stderr, "; io_uring_setup fails with %s for the command and all it starts",
			companion == IOUR_POLICY_COMPANION_EPERM ? "EPERM" : "ENOSYS");
	if (x->broker || status != IOUR_STATUS_NOT_ENFORCED)
		run_peers_clause(r, x);
	/* What is not enforced as written, by name; what the views say
	 * (`explain` and `compile` default to run's mechanism). */
	if (!(mech & IOUR_MECH_COMPANION) &&
	    cli_report_diffs(stderr, x->plan_rep ? x->plan_rep : r, "; ") == 0) {
		if (flags & IOUR_REPORT_LOOSENED)
			fprintf(stderr, "; some requests the policy denies may succeed ('" CLI_PROG
					" explain' says which)");
		if (flags & IOUR_REPORT_TIGHTENED)
			fprintf(stderr, "; some requests the policy allows are denied ('" CLI_PROG
					" compile' says which)");
	}
	if (flags & IOUR_REPORT_OTHER_THREADS)
		fprintf(stderr, "; other threads are not restricted");
	if ((flags & IOUR_REPORT_NNP_SET) || x->broker)
		fprintf(stderr, "; no_new_privs set");
tail:
	if (x->mode == RUN_RINGS_KEEP && x->rings != 0)
		fprintf(stderr, "; %s inherited io_uring fds kept (--existing-rings=keep): they are "
				"NOT restricted", x->rings < 0 ? "any" : "the");
	else if (x->mode == RUN_RINGS_CLOSE && x->rings > 0)
		fprintf(stderr, "; %d inherited io_uring fd%s closed", x->rings,
			x->rings == 1 ? "" : "s");
	if (x->note)
		fprintf(stderr, "; %s", x->note);
	fputc('\n', stderr);
}

/* Inherited io_uring fds (doc/security.md: rings that exist already are
 * restricted by nothing).  0, or CLI_FAIL with the message printed. */
static int existing_rings(enum run_rings mode, int *n)
{
	int r;

	if (mode == RUN_RINGS_KEEP) {
		r = iour_ring_fds(NULL, 0);
		*n = r < 0 ? -1 : r;
		return 0;
	}
	r = iour_ring_fds_close(mode == RUN_RINGS_REFUSE ? IOUR_RING_FDS_REFUSE : 0);
	if (r == -EBUSY && mode == RUN_RINGS_REFUSE) {
		cli_msg("this process holds io_uring fds; not running the command "
			"(--existing-rings=refuse)");
		return CLI_FAIL;
	}
	if (r < 0)
		return cli_fail(r, "closing the inherited io_uring fds (--existing-rings=keep "
				   "keeps them)");
	*n = r;
	return 0;
}

static int send_fd(int sock, int fd)
{
	char c = 'L', cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { .iov_base = &c, .iov_len = 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			    .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm;

	memset(cbuf, 0, sizeof(cbuf));
	cm = CMSG_FIRSTHDR(&m);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	return sendmsg(sock, &m, MSG_NOSIGNAL) == 1 ? 0 : -1;
}

static int recv_fd(int sock)
{
	char c, cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { .iov_base = &c, .iov_len = 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			    .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm;
	int fd;

	if (recvmsg(sock, &m, MSG_CMSG_CLOEXEC) != 1)
		return -1;
	cm = CMSG_FIRSTHDR(&m);
	if (!cm || cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS ||
	    cm->cmsg_len != CMSG_LEN(sizeof(int)))
		return -1;
	memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	return fd;
}

static volatile sig_atomic_t run_child;
/* The request watch of --log-denials (watch.h), ended when the command is. */
static struct watch *run_watch;

static void run_watch_end(void)
{
	watch_stop(run_watch);
	watch_free(run_watch);
	run_watch = NULL;
}

/* The broker passes signals on to the command, which it no longer is.  A
 * terminal's SIGINT/SIGQUIT (si_code SI_KERNEL) reached the command's
 * process group already. */
static void run_forward(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	if ((sig == SIGINT || sig == SIGQUIT) && si && si->si_code == SI_KERNEL)
		return;
	if (run_child > 0)
		kill(run_child, sig);
}

/*
 * systemd started this process as the unit's main PID; the command runs in
 * the child.  MAINPID= (sent by the main PID, which systemd accepts) makes
 * the child the main PID before it runs, so its sd_notify() messages count
 * and systemd follows the service's own exit.  Best effort: a failure is
 * said and the command runs (doc/systemd.md).
 */
static void run_notify_mainpid(pid_t pid, bool quiet)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char msg[32];
	size_t plen;
	int s, n, err = 0;

	if (!path || (path[0] != '/' && path[0] != '@'))
		return;
	plen = strlen(path);
	if (plen >= sizeof(sa.sun_path)) {
		err = ENAMETOOLONG;
		goto out;
	}
	memcpy(sa.sun_path, path, plen);
	if (sa.sun_path[0] == '@')
		sa.sun_path[0] = '\0';
	n = snprintf(msg, sizeof(msg), "MAINPID=%d", (int)pid);
	s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0) {
		err = errno;
		goto out;
	}
	if (sendto(s, msg, (size_t)n, MSG_NOSIGNAL, (struct sockaddr *)&sa,
		   (socklen_t)(offsetof(struct sockaddr_un, sun_path) + plen)) != n)
		err = errno;
	close(s);
out:
	if (err && !quiet)
		cli_msg("could not tell systemd the command's pid (MAINPID=%d to NOTIFY_SOCKET): %s",
			(int)pid, strerror(err));
}

/* The command's exit status from wait status @st; killed by a signal,
 * this process dies of the same signal. */
static int run_status(int st)
{
	if (WIFSIGNALED(st)) {
		int sig = WTERMSIG(st);

		signal(sig, SIG_DFL);
		raise(sig);
		return 128 + sig;
	}
	return WIFEXITED(st) ? WEXITSTATUS(st) : CLI_FAIL;
}

/*
 * The ring broker: the child installs the broker's filter, passes the
 * listener up and, once told, executes the command; this process serves
 * it until the command exits.  Returns the command's exit status.
 */
static int run_broker(const struct iour_plan *plan, char **cmd, bool quiet, uint32_t comp,
		      const struct run_extra *x)
{
	static const int sigs[] = { SIGTERM, SIGINT, SIGQUIT, SIGHUP, SIGUSR1, SIGUSR2 };
	struct iour_report *rep = NULL;
	struct iour_broker *b = NULL;
	struct sigaction sa;
	int sv[2], lfd, pidfd, st = 0, probe = -1, err;
	pid_t pid;
	char c = 'g';

	/* What every ring of the command gets: build one now, for the report. */
	err = iour_plan__create_ring(plan, 1, NULL, NULL, &probe, &rep);
	if (err) {
		cli_fail(err, "building a restricted ring (the broker could not serve the "
			      "command; --broker=off uses the companion)");
		iour_report__free(rep);
		return CLI_FAIL;
	}
	close(probe);
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) {
		iour_report__free(rep);
		return cli_fail(-errno, "socketpair");
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		err = -errno;
		iour_report__free(rep);
		close(sv[0]);
		close(sv[1]);
		return cli_fail(err, "fork");
	}
	if (pid == 0) {
		struct iour_broker_opts bo = {
			.sz = sizeof(bo), .flags = x->allow_ptrace ? IOUR_BROKER_ALLOW_PTRACE : 0
		};

		close(sv[0]);
		err = iour_broker__install(&bo, &lfd);
		if (err) {
			cli_fail(err, "installing the broker's seccomp filter");
			_exit(CLI_FAIL);
		}
		if (send_fd(sv[1], lfd))
			_exit(CLI_FAIL);
		close(lfd);
		/* The report line comes first; a dead broker means no command. */
		if (read(sv[1], &c, 1) != 1)
			_exit(CLI_FAIL);
		close(sv[1]);
		execvp(cmd[0], cmd);
		err = errno;
		cli_fail(-err, "cannot execute '%s'", cmd[0]);
		_exit(err == ENOENT ? 127 : 126);
	}
	close(sv[1]);
	run_child = pid;
	/* The command may not ptrace, read or write the broker, nor take its
	 * fds (doc/security.md, section 3a, "Ring acquisition"); the broker
	 * still reads the command's memory (that direction is unaffected).
	 * --allow-ptrace leaves everything as the kernel has it. */
	if (!x->allow_ptrace && prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)) {
		err = -errno;
		close(sv[0]);
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
		iour_report__free(rep);
		return cli_fail(err, "prctl(PR_SET_DUMPABLE, 0)");
	}
	lfd = recv_fd(sv[0]);
	if (lfd >= 0) {
		err = iour_broker__new(plan, lfd, NULL, &b);
		if (err) {
			close(lfd);
			cli_fail(err, "creating the ring broker");
		}
	}
	if (!b) {
		close(sv[0]);
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
		iour_report__free(rep);
		return WIFEXITED(st) && WEXITSTATUS(st) ? WEXITSTATUS(st) : CLI_FAIL;
	}
	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (!quiet)
		run_report(rep, comp, x);
	iour_report__free(rep);
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = run_forward;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
	run_notify_mainpid(pid, quiet);
	fflush(NULL);
	if (write(sv[0], &c, 1) != 1)
		cli_msg("the command's process is gone");
	close(sv[0]);
	for (;;) {
		struct pollfd pfd[2] = { { .fd = iour_broker__fd(b), .events = POLLIN },
					 { .fd = pidfd, .events = POLLIN } };
		int n = poll(pfd, 2, pidfd < 0 ? 100 : -1);

		if (n < 0 && errno != EINTR)
			break;
		if (n > 0 && (pfd[0].revents & POLLIN))
			(void)iour_broker__serve(b);
		if (pidfd >= 0 ? (n > 0 && (pfd[1].revents & POLLIN)) :
				 waitpid(pid, &st, WNOHANG) == pid)
			break;
	}
	if (pidfd >= 0) {
		while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
		close(pidfd);
	}
	run_child = 0;
	run_watch_end();
	iour_broker__free(b); /* from now on io_uring_setup fails with ENOSYS */
	return run_status(st);
}

/* Waits for the command's process @pid, passing signals on (run_forward);
 * its wait status. */
static int run_wait(pid_t pid)
{
	static const int sigs[] = { SIGTERM, SIGINT, SIGQUIT, SIGHUP, SIGUSR1, SIGUSR2 };
	struct sigaction sa;
	int st = 0;

	run_child = pid;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = run_forward;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	run_child = 0;
	return st;
}

/* Executes the command in this (forked) process; never returns. */
static void run_exec_child(char **cmd)
{
	int err;

	execvp(cmd[0], cmd);
	err = errno;
	cli_fail(-err, "cannot execute '%s'", cmd[0]);
	_exit(err == ENOENT ? 127 : 126);
}

enum { O_BEST = 256, O_SOFT, O_HARD, O_COMPANION, O_BROKER, O_RINGS, O_PTRACE, O_AUDIT,
       O_AUDIT_OUT, O_LOG_DENIALS, O_INTERVAL };

/* run's command line: POLICY and the policy file's settings it overrides. */
struct run_args {
	const char *path;
	int compat, companion; /* -1: as the policy file says */
	bool quiet, broker, allow_ptrace;
	enum run_rings mode;
	bool audit, log_denials;
	const char *audit_out, *denial_path;
	unsigned interval; /* seconds between the watch's reports */
};

/* Handles one option; returns 0, -1 after --help, or an exit code. */
static int run_option(struct run_args *ra, int c, const char *arg, char **argv)
{
	switch (c) {
	case O_BEST:
	case O_SOFT:
	case O_HARD:
		if (ra->compat >= 0)
			return cli_usage("--best-effort, --soft and --hard exclude each other");
		ra->compat = c == O_BEST ? IOUR_POLICY_COMPAT_BEST_EFFORT :
			     c == O_SOFT ? IOUR_POLICY_COMPAT_SOFT : IOUR_POLICY_COMPAT_HARD;
		return 0;
	case O_COMPANION:
		if (!strcmp(arg, "enosys"))
			ra->companion = IOUR_POLICY_COMPANION_ENOSYS;
		else if (!strcmp(arg, "eperm"))
			ra->companion = IOUR_POLICY_COMPANION_EPERM;
		else if (!strcmp(arg, "off"))
			ra->companion = IOUR_POLICY_COMPANION_NONE;
		else
			return cli_usage("--companion: '%s' is not enosys, eperm or off", arg);
		return 0;
	case O_BROKER:
		if (!strcmp(arg, "auto") || !strcmp(arg, "on"))
			ra->broker = true;
		else if (!strcmp(arg, "off"))
			ra->broker = false;
		else
			return cli_usage("--broker: '%s' is not auto or off", arg);
		return 0;
	case O_RINGS:
		if (!strcmp(arg, "close"))
			ra->mode = RUN_RINGS_CLOSE;
		else if (!strcmp(arg, "refuse"))
			ra->mode = RUN_RINGS_REFUSE;
		else if (!strcmp(arg, "keep"))
			ra->mode = RUN_RINGS_KEEP;
		else
			return cli_usage("--existing-rings: '%s' is not close, refuse or keep", arg);
		return 0;
	case O_PTRACE:
		ra->allow_ptrace = true;
		return 0;
	case O_AUDIT:
		ra->audit = true;
		ra->denial_path = arg;
		return 0;
	case O_AUDIT_OUT:
		ra->audit_out = arg;
		return 0;
	case O_LOG_DENIALS:
		ra->log_denials = true;
		ra->denial_path = arg;
		return 0;
	case O_INTERVAL: {
		uint64_t v;

		if (cli_parse_u64(arg, &v) || v < 1 || v > 86400)
			return cli_usage("--report-interval: '%s' is not a number of seconds "
					 "from 1 to 86400",
					 arg);
		ra->interval = (unsigned)v;
		return 0;
	}
	case 'q':
		ra->quiet = true;
		return 0;
	case 'h':
		cli_help(cli_help_run);
		return -1;
	default:
		return cli_getopt_error(c, argv);
	}
}

/* Reads POLICY, the options, then "--" and the command (at argv[optind]).
 * Returns 0, -1 after --help, or an exit code. */
static int run_parse(int argc, char **argv, struct run_args *ra)
{
	static const struct option lo[] = {
		{ "best-effort", no_argument, NULL, O_BEST },
		{ "soft", no_argument, NULL, O_SOFT },
		{ "hard", no_argument, NULL, O_HARD },
		{ "companion", required_argument, NULL, O_COMPANION },
		{ "broker", required_argument, NULL, O_BROKER },
		{ "existing-rings", required_argument, NULL, O_RINGS },
		{ "allow-ptrace", no_argument, NULL, O_PTRACE },
		{ "audit", optional_argument, NULL, O_AUDIT },
		{ "audit-out", required_argument, NULL, O_AUDIT_OUT },
		{ "log-denials", optional_argument, NULL, O_LOG_DENIALS },
		{ "report-interval", required_argument, NULL, O_INTERVAL },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, rc;

	opterr = 0;
	/* '+': options end at the first operand after POLICY, or at "--". */
	while (optind < argc) {
		c = getopt_long(argc, argv, "+:hq", lo, NULL);
		if (c == -1) {
			/* POLICY, then more options; the command only after "--". */
			if (ra->path || !strcmp(argv[optind - 1], "--"))
				break;
			ra->path = argv[optind++];
			continue;
		}
		rc = run_option(ra, c, optarg, argv);
		if (rc)
			return rc;
	}
	if (!ra->path)
		return cli_usage("no policy file given (iour-restrict run POLICY [options] -- "
				 "COMMAND [ARG]...)");
	if (ra->audit && ra->log_denials)
		return cli_usage("--audit and --log-denials exclude each other (in audit mode "
				 "nothing is denied)");
	if (ra->audit_out && !ra->audit)
		return cli_usage("--audit-out needs --audit");
	if (ra->audit_out && ra->path && !strcmp(ra->path, "-"))
		return cli_usage("--audit-out needs POLICY as a file (the delta copies its "
				 "attributes), not '-'");
	if (ra->interval && !ra->audit && !ra->log_denials)
		return cli_usage("--report-interval needs --audit or --log-denials");
	if (optind >= argc || strcmp(argv[optind - 1], "--") != 0)
		return cli_usage("no command given: put it after '--' (iour-restrict run POLICY "
				 "[options] -- COMMAND [ARG]...)");
	return 0;
}

/* Overrides the policy's compatibility level and companion as the options
 * say, reads the companion back, and refuses a ring policy.  Returns 0,
 * or an exit code. */
static int run_policy_attrs(const struct run_args *ra, struct iour_policy *pol,
			    uint32_t *comp_val)
{
	uint32_t target = IOUR_POLICY_TARGET_TASK;
	int err;

	if (ra->compat >= 0 && (err = iour_policy__set_attr(pol, IOUR_POLICY_ATTR_COMPAT,
							      (uint32_t)ra->compat)))
		return cli_fail(err, "setting the compatibility level");
	if (ra->companion >= 0 && (err = iour_policy__set_attr(pol, IOUR_POLICY_ATTR_COMPANION,
								 (uint32_t)ra->companion)))
		return cli_fail(err, "setting the companion");
	(void)iour_policy__get_attr(pol, IOUR_POLICY_ATTR_COMPANION, comp_val);
	(void)iour_policy__get_attr(pol, IOUR_POLICY_ATTR_TARGET, &target);
	if (target != IOUR_POLICY_TARGET_TASK) {
		cli_msg("%s: the policy restricts one ring (target ring); run applies "
			"task policies only", ra->path);
		return CLI_POLICY;
	}
	return 0;
}

/* Before task restrictions (feature level below 4) a plan of ring steps
 * is served by the ring broker (broker.h), unless --broker=off: the plan
 * is then planned for the broker (IOUR_PLAN_BROKERED, mechanism.c).  A
 * brokered plan the compatibility level left without restrictions (--soft)
 * is not served: the command runs with unrestricted io_uring, as the
 * report line says. */
static bool run_wants_broker(const struct iour_plan *plan, bool brokered)
{
	struct iour_plan_info info = { .sz = sizeof(info) };
	const struct iour_report *r = iour_plan__report(plan);

	return iour_plan__info(plan, &info) == 0 && brokered && info.ring_steps &&
	       !(info.flags & IOUR_PLAN_INFO_REFUSED) &&
	       (iour_report__status(r) != IOUR_STATUS_NOT_ENFORCED || iour_report__mechanism(r));
}

/* Plans the policy for the mechanism run uses on the running kernel
 * (mechanism.c: the views' default), or without the broker for
 * --broker=off.  Returns 0, or an exit code. */
static int run_plan(const struct run_args *ra, struct iour_policy *pol, struct iour_plan **plan,
		    struct run_extra *x)
{
	struct iour_plan_opts po = { .sz = sizeof(po) };
	enum cli_mech used = CLI_MECH_AUTO;
	uint32_t compat = 0;
	int err;

	if (ra->broker)
		err = cli_plan_mech(pol, &po, CLI_MECH_AUTO, &used, plan);
	else
		err = iour_policy__plan(pol, &po, plan);
	if (err)
		return err > 0 ? err : cli_fail(err, "planning the policy for the running kernel");
	(void)iour_policy__get_attr(pol, IOUR_POLICY_ATTR_COMPAT, &compat);
	x->soft = compat == IOUR_POLICY_COMPAT_SOFT;
	if (!ra->broker) {
		struct iour_plan_info info = { .sz = sizeof(info) };

		(void)iour_plan__info(*plan, &info);
		used = info.level >= 4 ? CLI_MECH_TASK : CLI_MECH_COMPANION;
	}
	x->broker_view = used == CLI_MECH_BROKER;
	x->view = used;
	x->plan_rep = iour_plan__report(*plan);
	return 0;
}

/* Applies the plan to this process (iour_plan__apply_task()) and prints
 * the report line.  Returns 0, or an exit code; @cmd is the command. */
static int run_apply_task(const struct iour_plan *plan, const char *cmd, bool quiet,
			  uint32_t comp, const struct run_extra *x)
{
	struct iour_apply_opts ao = { .sz = sizeof(ao),
				      .flags = x->allow_ptrace ? IOUR_APPLY_ALLOW_PTRACE : 0 };
	struct iour_report *rep = NULL;
	int err;

	err = iour_plan__apply_task(plan, &ao, &rep);
	if (err == -IOUR_ERRNO__UNSUPPORTED) {
		fprintf(stderr, CLI_PROG " run: the running kernel cannot enforce the policy "
				"exactly (mechanism %s)", cli_mech_name(x->view));
		if (!cli_report_diffs(stderr, iour_plan__report(plan), "; "))
			fprintf(stderr, "; '" CLI_PROG " explain --mechanism %s' says what",
				cli_mech_name(x->view));
		fprintf(stderr, "; its compatibility level is hard; not running '%s'\n", cmd);
	} else if (err) {
		cli_fail(err, "applying the policy");
		if (rep && err == -IOUR_ERRNO__PARTIAL)
			cli_msg("part of the policy took effect; not running '%s'", cmd);
	} else if (!quiet) {
		run_report(rep, comp, x);
	}
	iour_report__free(rep);
	return err ? CLI_FAIL : 0;
}

/*
 * Audit mode (doc/cli.md, "run"): the command runs with unrestricted
 * io_uring (no broker, no task restrictions, no companion) while the
 * watch reports what @plan, the plan run would apply, would deny.
 * Returns the command's status.
 */
static int run_audit(const struct run_args *ra, const struct iour_plan *plan, char **cmd,
		     struct run_extra *x)
{
	struct watch_opts wo = { .audit = true, .plan = plan,
				 .broker = run_wants_broker(plan, x->broker_view),
				 .log_path = ra->denial_path, .interval = ra->interval };
	struct utsname u;
	pid_t pid;
	int rc, st;

	rc = watch_start(&wo, &run_watch);
	if (rc)
		return rc;
	if (uname(&u))
		snprintf(u.release, sizeof(u.release), "an unknown kernel");
	if (!ra->quiet)
		fprintf(stderr,
			CLI_PROG ": on Linux %s: %s: the command runs with unrestricted io_uring; "
				 "what the policy would deny (mechanism %s) is reported %s%s every "
				 "%u s and at exit%s\n",
			u.release, watch_note(run_watch), cli_mech_name(x->view),
			ra->denial_path ? "to " : "on stderr", ra->denial_path ? ra->denial_path : "",
			ra->interval ? ra->interval : 10,
			x->rings > 0 ? "; inherited io_uring fds closed" : "");
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		rc = cli_fail(-errno, "fork");
		run_watch_end();
		return rc;
	}
	if (pid == 0)
		run_exec_child(cmd);
	st = run_wait(pid);
	watch_stop(run_watch);
	if (ra->audit_out && watch_write_delta(run_watch, ra->path, ra->audit_out) == 0 &&
	    !ra->quiet)
		cli_msg("the policy delta is in %s ('" CLI_PROG " merge -o OUT %s %s' adds it)",
			ra->audit_out, ra->path, ra->audit_out);
	run_watch_end();
	return run_status(st);
}

int cmd_run(int argc, char **argv)
{
	struct run_args ra = { .compat = -1, .companion = -1, .broker = true,
			       .mode = RUN_RINGS_CLOSE };
	struct iour_policy *pol = NULL;
	struct iour_plan *plan = NULL;
	uint32_t comp_val = IOUR_POLICY_COMPANION_ENOSYS;
	struct run_extra x = { .broker = false, .mode = RUN_RINGS_CLOSE, .rings = 0 };
	int rc, err;

	rc = run_parse(argc, argv, &ra);
	if (rc)
		return rc < 0 ? CLI_OK : rc;
	x.mode = ra.mode;
	x.allow_ptrace = ra.allow_ptrace;
	rc = cli_policy_load(ra.path, 0, &pol);
	if (rc)
		return rc;
	rc = run_policy_attrs(&ra, pol, &comp_val);
	if (rc)
		goto out;
	rc = run_plan(&ra, pol, &plan, &x);
	if (rc)
		goto out;
	if (ra.audit) {
		rc = existing_rings(x.mode, &x.rings);
		if (!rc)
			rc = run_audit(&ra, plan, argv + optind, &x);
		goto out;
	}
	if (ra.log_denials) {
		struct watch_opts wo = { .denials = true, .log_path = ra.denial_path,
					 .interval = ra.interval };

		rc = watch_start(&wo, &run_watch);
		if (rc)
			goto out;
		x.note = watch_note(run_watch);
	}
	if (run_wants_broker(plan, x.broker_view)) {
		/* Before task restrictions: the ring broker. */
		x.broker = true;
		if (ra.companion >= 0)
			cli_msg("--companion applies with --broker=off only; the broker serves "
				"restricted rings");
		rc = existing_rings(x.mode, &x.rings);
		if (!rc)
			rc = run_broker(plan, argv + optind, ra.quiet, comp_val, &x);
		goto out;
	}
	rc = existing_rings(x.mode, &x.rings);
	if (rc)
		goto out;
	if (run_watch) {
		/* the denial log needs a process that outlives the command's
		 * exec: the command runs in a child */
		pid_t pid;

		fflush(NULL);
		pid = fork();
		if (pid < 0) {
			rc = cli_fail(-errno, "fork");
			goto out;
		}
		if (pid == 0) {
			if (run_apply_task(plan, argv[optind], ra.quiet, comp_val, &x))
				_exit(CLI_FAIL);
			run_exec_child(argv + optind);
		}
		/* as the broker: the command may not read or write this
		 * unrestricted process (doc/security.md 3a) */
		if (!x.allow_ptrace)
			(void)prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
		rc = run_wait(pid);
		run_watch_end();
		rc = run_status(rc);
		goto out;
	}
	rc = run_apply_task(plan, argv[optind], ra.quiet, comp_val, &x);
	if (rc)
		goto out;
	iour_plan__free(plan);
	iour_policy__free(pol);
	execvp(argv[optind], argv + optind);
	err = errno;
	cli_fail(-err, "cannot execute '%s'", argv[optind]);
	return err == ENOENT ? 127 : 126;
out:
	run_watch_end();
	iour_plan__free(plan);
	iour_policy__free(pol);
	return rc;
}
