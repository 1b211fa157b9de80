/* SPDX-License-Identifier: MIT */
/*
 * iour-restrict learn: run a command, or attach to a process or a cgroup,
 * and write the least-privilege policy file its io_uring use needs
 * (doc/cli.md, "learn").  This file is the command line and the recording
 * loop; learn.h lists the other parts.
 *
 * Started commands: learn is a child subreaper (PR_SET_CHILD_SUBREAPER),
 * so a task that leaves its parent (a daemon forking into the background,
 * setsid, a double fork) becomes learn's child instead of init's, and
 * learn waits until the last task descending from the command has exited
 * (or --timeout).  The tracepoints follow them through sched_process_fork
 * in any case (learn_parse.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/cli.h"
#include "learn/learn.h"

const char cli_help_learn[] =
	"Usage: iour-restrict learn -o FILE [OPTIONS] -- COMMAND [ARG]...\n"
	"       iour-restrict learn -o FILE [OPTIONS] --pid PID [--duration S]\n"
	"       iour-restrict learn -o FILE [OPTIONS] --cgroup DIR [--duration S]\n"
	"\n"
	"Write the least-privilege policy file that a program's io_uring use needs:\n"
	"the request opcodes, SQE flags and register opcodes it used, from the\n"
	"kernel's io_uring tracepoints, recorded in a tracefs instance of its own\n"
	"that is removed afterwards.  With COMMAND: COMMAND, its threads and every\n"
	"task descending from it, daemons included, until the last one exits.\n"
	"With --pid: the process PID and its descendants, present and future.\n"
	"With --cgroup: every task in the cgroup v2 directory DIR or below it (a\n"
	"systemd unit's: /sys/fs/cgroup/system.slice/NAME.service).  SQPOLL\n"
	"threads of their rings count too.  Attached, learn records until\n"
	"--duration ends, the tasks are gone (--pid), or SIGINT/SIGTERM (Ctrl-C),\n"
	"which writes what was learned.  Opcodes are grouped where a whole group\n"
	"was seen; comments say what was seen and how often.  A summary goes to\n"
	"stderr.  A run that recorded no io_uring request writes no policy.\n"
	"Warnings (SQPOLL rings that run or the agent refuse, writes without a\n"
	"sync opcode) and suggestions (the usual companions of what was seen,\n"
	"never seen: SHUTDOWN with SOCKET, ...) go to stderr and into the policy's\n"
	"comment; nothing is added to the allow-list.\n"
	"\n"
	"Needs root (tracefs); tracefs is mounted on /sys/kernel/tracing if it is\n"
	"not mounted (and unmounted afterwards).\n"
	"\n"
	"Options:\n"
	"  -o, --output FILE   write the policy to FILE (required; '-' for stdout).\n"
	"                      FILE is replaced only once the policy is complete; an\n"
	"                      existing FILE that is not a regular file is refused\n"
	"  --pid PID           attach to PID and its descendants\n"
	"  --cgroup DIR        attach to the tasks of cgroup v2 directory DIR\n"
	"  --duration S        attached: record for S seconds (default: until\n"
	"                      interrupted)\n"
	"  --timeout S         COMMAND: stop recording after S seconds, even if\n"
	"                      tasks still run (they are named and keep running);\n"
	"                      a normal end (exit 0)\n"
	"  --stop-at-exit      COMMAND: stop when COMMAND exits, naming the tasks it\n"
	"                      left running, instead of waiting for them\n"
	"  --per-task          say in the policy's comment which task (pid, comm)\n"
	"                      used what\n"
	"  --buffer-kb N       trace buffer per CPU in KiB (default 8192); events\n"
	"                      lost to a full buffer are reported\n"
	"  -q, --quiet         no summary on stderr\n"
	"  -h, --help          show this help\n"
	"\n"
	"Example: iour-restrict learn -o fio.json -- fio job.fio   (ioengine=io_uring)\n"
	"\n"
	"Exit status: 0 the policy was written and the recording ended normally:\n"
	"COMMAND exited with 0, or stopped on SIGINT or SIGTERM (died of it, or\n"
	"exited with 128+N after learn passed it on), or --timeout or --duration\n"
	"ended it; 1 tracing failed or the policy could not be written; 2 usage\n"
	"error; 4 not root, tracefs or the io_uring tracepoints are unavailable, or\n"
	"learn runs in a PID namespace (nothing was run), or nothing of COMMAND\n"
	"could be traced; 5 COMMAND failed otherwise: another exit status or\n"
	"signal (the policy was written: it shows what that run used); 6 no\n"
	"io_uring request was recorded (no policy was written); 126 COMMAND could\n"
	"not be executed, 127 COMMAND was not found; 128+N learn died of signal N.\n";

struct opts {
	const char *output, *cgroup;
	unsigned buffer_kb;
	bool quiet, per_task, stop_at_exit;
	pid_t pid;
	double duration, timeout; /* 0: none */
	char **cmd;
};

static int parse_seconds(const char *opt, const char *s, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(s, &end);
	if (errno || end == s || *end || !(*out > 0) || *out > 1e9)
		return cli_usage("%s: '%s' is not a number of seconds above 0", opt, s);
	return 0;
}

static int parse_opts(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "buffer-kb", required_argument, NULL, 'b' },
		{ "pid", required_argument, NULL, 'p' },
		{ "cgroup", required_argument, NULL, 'g' },
		{ "duration", required_argument, NULL, 'd' },
		{ "timeout", required_argument, NULL, 't' },
		{ "stop-at-exit", no_argument, NULL, 's' },
		{ "per-task", no_argument, NULL, 'T' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t v;
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:ho:q", lo, NULL)) != -1) {
		switch (c) {
		case 'o':
			o->output = optarg;
			break;
		case 'b':
			if (cli_parse_u64(optarg, &v) || v < 64 || v > 1048576)
				return cli_usage("--buffer-kb: '%s' is not a number from 64 to "
						 "1048576",
						 optarg);
			o->buffer_kb = (unsigned)v;
			break;
		case 'p':
			if (cli_parse_u64(optarg, &v) || v < 1 || v > INT32_MAX)
				return cli_usage("--pid: '%s' is not a process id", optarg);
			o->pid = (pid_t)v;
			break;
		case 'g':
			o->cgroup = optarg;
			break;
		case 'd':
			if (parse_seconds("--duration", optarg, &o->duration))
				return CLI_USAGE;
			break;
		case 't':
			if (parse_seconds("--timeout", optarg, &o->timeout))
				return CLI_USAGE;
			break;
		case 's':
			o->stop_at_exit = true;
			break;
		case 'T':
			o->per_task = true;
			break;
		case 'q':
			o->quiet = true;
			break;
		case 'h':
			cli_help(cli_help_learn);
			return -1;
		default:
			return cli_getopt_error(c, argv);
		}
	}
	o->cmd = optind < argc ? argv + optind : NULL;
	if (!!o->cmd + (o->pid > 0) + !!o->cgroup != 1)
		return cli_usage("give one of -- COMMAND [ARG]..., --pid PID or --cgroup DIR");
	if (o->cmd && o->duration)
		return cli_usage("--duration is for --pid and --cgroup (use --timeout with a "
				 "COMMAND)");
	if (!o->cmd && (o->timeout || o->stop_at_exit))
		return cli_usage("--timeout and --stop-at-exit are for a COMMAND (use "
				 "--duration with --pid and --cgroup)");
	if (!o->output)
		return cli_usage("-o FILE is required ('-o -' writes the policy to stdout)");
	return 0;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The recording in progress. */
struct rec {
	struct tracer t;
	int fd; /* trace_pipe */
	char *buf;
	size_t held;
};
#define RECBUF (1 << 18)

/*
 * Reads the trace, then sleeps @ms (a signal ends the sleep); 0 or an exit
 * code.  A sleep rather than poll(): trace_pipe wakes a poller at nearly
 * every event, and at tens of thousands of requests a second those wakeups
 * cost the recorded program more than reading the events in batches
 * (bench/learn_fio.sh, doc/cli.md "learn").
 */
static int pump(struct rec *r, int ms)
{
	ssize_t n = tracer_drain(&r->t, r->fd, r->buf, RECBUF, &r->held);

	if (n < 0)
		return cli_fail((int)n, "reading the trace");
	if (ms > 0 && !learn_stop_signal) {
		struct timespec ts = { 0, (long)ms * 1000000L };

		nanosleep(&ts, NULL);
	}
	return 0;
}

/* Names the tasks still running that descend from learn (the command's). */
static int report_live(const char *what)
{
	char list[2048];
	int n = learn_live_descendants(getpid(), list, sizeof(list));

	if (n)
		cli_msg("%s; %d task%s of the command still run%s, not recorded from now on: "
			"%s",
			what, n, n == 1 ? "" : "s", n == 1 ? "s" : "", list);
	return n;
}

/* How a started command's run ended. */
struct ended {
	int status;     /* the command's wait status */
	bool exited;    /* the command itself exited */
	bool timed_out; /* --timeout stopped the recording */
	int exec_err;   /* errno of a failed exec, or 0 */
	int stop_sig;   /* the stop signal passed on to the command (or that
			 * the terminal sent it), or 0 */
};

/* Forks the command, held until the instance records; its pid or -1. */
static pid_t start_command(const struct opts *o, int go[2], int ex[2])
{
	pid_t child;

	if (pipe2(go, O_CLOEXEC) || pipe2(ex, O_CLOEXEC)) {
		cli_fail(-errno, "pipe");
		return -1;
	}
	child = fork();
	if (child < 0) {
		cli_fail(-errno, "fork");
		return -1;
	}
	if (child == 0) {
		char ch;
		int err;

		learn_signals_restore();
		close(go[1]);
		close(ex[0]);
		/* wait until the instance records */
		if (read(go[0], &ch, 1) != 1)
			_exit(126);
		execvp(o->cmd[0], o->cmd);
		err = errno;
		if (write(ex[1], &err, sizeof(err)) < 0)
			_exit(126);
		_exit(err == ENOENT ? 127 : 126);
	}
	close(go[0]);
	close(ex[1]);
	go[0] = ex[1] = -1;
	return child;
}

/* Records until the last task descending from the command has exited
 * (learn is their subreaper), --timeout, or a stop signal; 0 or an exit
 * code. */
static int record_command(const struct opts *o, struct rec *r, struct ended *e)
{
	double end = o->timeout ? now() + o->timeout : INFINITY;
	bool forwarded = false, announced = false;
	int go[2] = { -1, -1 }, ex[2] = { -1, -1 }, rc = CLI_FAIL, st;
	pid_t child, p;

	if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0))
		cli_msg("cannot become the tasks' subreaper (%s): daemons are followed only "
			"while the command runs",
			strerror(errno));
	/* tracing first: the command's own fork is the sign that pids match */
	if ((rc = learn_inst_write("tracing_on", "1"))) {
		cli_fail(rc, "starting the trace");
		return CLI_FAIL;
	}
	rc = CLI_FAIL;
	child = start_command(o, go, ex);
	if (child < 0)
		goto out;
	r->t.child = learn_child = child;
	if (tracer_follow(&r->t, (uint64_t)child, NULL)) {
		cli_fail(-ENOMEM, "allocating");
		goto out;
	}
	if (write(go[1], "g", 1) != 1) {
		cli_fail(-errno, "starting the command");
		goto out;
	}
	for (;;) {
		if ((rc = pump(r, 50)))
			goto out;
		if (learn_stop_signal && !forwarded && !e->exited) {
			/* the terminal sent it to the command already */
			if (!learn_stop_from_tty)
				kill(child, learn_stop_signal);
			e->stop_sig = learn_stop_signal;
			forwarded = true;
			learn_stop_signal = 0;
		}
		while ((p = waitpid(-1, &st, WNOHANG)) > 0) {
			if (p == child) {
				e->exited = true;
				e->status = st;
			}
		}
		if (p < 0 && errno == ECHILD)
			break; /* the last one has exited */
		if (e->exited && !announced) {
			announced = true;
			if (o->stop_at_exit || forwarded) {
				report_live("the command exited, stopping (--stop-at-exit or a "
					    "signal)");
				break;
			}
			if (!o->quiet)
				cli_msg("the command exited, but tasks it started still run: "
					"recording until the last one exits%s",
					o->timeout ? " or --timeout" : " (Ctrl-C stops)");
		}
		if (e->exited && learn_stop_signal) {
			report_live("stopped by a signal");
			break;
		}
		if (now() >= end) {
			e->timed_out = true;
			report_live("--timeout reached");
			break;
		}
	}
	learn_child = 0;
	if (read(ex[0], &e->exec_err, sizeof(e->exec_err)) != (ssize_t)sizeof(e->exec_err))
		e->exec_err = 0;
	rc = 0;
out:
	for (int i = 0; i < 2; i++) {
		if (go[i] >= 0)
			close(go[i]); /* a command still held at go exits with 126 */
		if (ex[i] >= 0)
			close(ex[i]);
	}
	return rc;
}

/* Records the attached tasks until --duration, a stop signal, or (--pid)
 * the tasks are gone; 0 or an exit code. */
static int record_attached(const struct opts *o, struct rec *r, char *rel, size_t rlen)
{
	double start = now(), end = o->duration ? start + o->duration : INFINITY, scan = 0;
	int rc, n;

	if ((rc = learn_inst_write("tracing_on", "1")))
		return cli_fail(rc, "starting the trace");
	/* after tracing is on: a fork from now on is recorded and followed */
	if (o->pid > 0) {
		n = learn_follow_tree(&r->t, o->pid);
		if (n <= 0) {
			cli_msg("--pid %d: %s", (int)o->pid,
				n == 0 ? "no such process" : strerror(-n));
			return n == 0 ? CLI_USAGE : CLI_FAIL;
		}
	} else {
		if ((rc = learn_cgroup_rel(o->cgroup, rel, rlen)) ||
		    (n = learn_follow_cgroup(&r->t, o->cgroup)) < 0) {
			cli_msg("--cgroup '%s': %s", o->cgroup,
				rc == -ENOTDIR ? "not under a cgroup2 mount" :
						 strerror(rc ? -rc : -n));
			return CLI_USAGE;
		}
		r->t.cgroup_rel = rel;
	}
	if (!o->quiet)
		cli_msg("recording %zu task%s%s; Ctrl-C or SIGTERM writes the policy", r->t.ntask,
			r->t.ntask == 1 ? "" : "s", o->duration ? " for --duration" : "");
	while (!learn_stop_signal && now() < end) {
		if ((rc = pump(r, 50)))
			return rc;
		if (now() - scan < 0.2)
			continue;
		scan = now();
		if (o->cgroup) {
			/* tasks moved into the cgroup since the last scan */
			learn_follow_cgroup(&r->t, o->cgroup);
			r->t.strange.n = 0;
		} else {
			bool alive = false;

			for (size_t i = 0; i < r->t.ntask && !alive; i++)
				alive = !r->t.task[i].gone && !kill((pid_t)r->t.task[i].pid, 0);
			if (!alive) {
				if (!o->quiet)
					cli_msg("--pid %d and its descendants have exited",
						(int)o->pid);
				break;
			}
		}
	}
	return 0;
}

/* The checks before anything changes; 0 or an exit code. */
static int preflight(void)
{
	if (geteuid() != 0) {
		cli_msg("learn needs root: it records the kernel's io_uring tracepoints through "
			"tracefs");
		return LEARN_NO_TRACING;
	}
	if (learn_in_pid_ns()) {
		cli_msg("learn runs in a PID namespace: the tracepoints report the pids of the "
			"initial namespace, which learn cannot match to its tasks; run it outside "
			"(nothing was run)");
		return LEARN_NO_TRACING;
	}
	return 0;
}

/* After the recording: what was seen decides whether a policy is written;
 * 0 (write it) or an exit code. */
static int judge(const struct opts *o, const struct rec *r, const struct ended *e)
{
	const struct learned *L = r->t.l;

	if (e->exec_err) {
		cli_fail(-e->exec_err, "cannot execute '%s'", o->cmd[0]);
		return e->exec_err == ENOENT ? 127 : 126;
	}
	if (o->cmd && !r->t.saw_start && !L->lost) {
		cli_msg("nothing of the command was recorded, not even its start: the "
			"tracepoints' pids do not match learn's (a PID namespace, or a tracefs "
			"that records nothing); no policy written");
		return LEARN_NO_TRACING;
	}
	if (!L->nreq) {
		cli_msg("no io_uring request was recorded (%" PRIu64 " register call%s, %zu "
			"task%s followed%s): not writing a policy that denies every request; "
			"check that the program uses io_uring and that this run reached that "
			"code",
			L->nreg, L->nreg == 1 ? "" : "s", L->ntasks, L->ntasks == 1 ? "" : "s",
			L->lost ? ", EVENTS WERE LOST" : "");
		return LEARN_NOTHING;
	}
	return 0;
}

/* Opens the instance's trace_pipe into @r; 0, or CLI_FAIL (printed). */
static int open_pipe(struct rec *r)
{
	char p[PATH_MAX + 16];

	snprintf(p, sizeof(p), "%s/trace_pipe", learn_inst);
	r->fd = open(p, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (r->fd < 0)
		return cli_fail(-errno, "opening %s", p);
	learn_pipe_fd = r->fd;
	return 0;
}

/* A stop signal an operator sends to end a service: SIGINT or SIGTERM. */
static bool normal_stop_sig(int sig)
{
	return sig == SIGINT || sig == SIGTERM;
}

/*
 * How the recording ended, for the policy's comment, in @how; true for a
 * normal end (doc/cli.md, "learn", exit status): the command exited with
 * 0; it died of SIGINT or SIGTERM (sent by learn, the terminal or anyone:
 * a service's normal stop), or exited with 128 + the SIGINT or SIGTERM
 * that learn passed on (a shell's way); --timeout stopped the recording;
 * or an attached recording ended.
 */
static bool outcome(const struct opts *o, const struct ended *e, char *how, size_t len)
{
	int st = e->status;

	if (!o->cmd) {
		snprintf(how, len, "recorded to the end");
		return true;
	}
	if (e->timed_out && !e->exited) {
		snprintf(how, len, "recorded until --timeout; tasks of the command still ran");
		return true;
	}
	if (WIFEXITED(st) && !WEXITSTATUS(st)) {
		snprintf(how, len, "it exited with 0");
		return true;
	}
	if (WIFSIGNALED(st) && normal_stop_sig(WTERMSIG(st))) {
		snprintf(how, len, "it stopped on %s, a normal stop",
			 WTERMSIG(st) == SIGINT ? "SIGINT" : "SIGTERM");
		return true;
	}
	if (WIFEXITED(st) && normal_stop_sig(e->stop_sig) && WEXITSTATUS(st) == 128 + e->stop_sig) {
		snprintf(how, len, "it exited with %d on %s, a normal stop", WEXITSTATUS(st),
			 e->stop_sig == SIGINT ? "SIGINT" : "SIGTERM");
		return true;
	}
	snprintf(how, len, "it FAILED: this run may not show all it needs");
	return false;
}

/* Writes the policy of a judged recording and commits the output file; 0,
 * or an exit code (LEARN_CMD_FAILED: written, but the command failed). */
static int write_result(const struct opts *o, const struct rec *r, const struct ended *e,
			struct learn_out *out, const char *rel)
{
	char what[PATH_MAX + 64], how[128];
	bool ok = outcome(o, e, how, sizeof(how));
	int rc;

	if (o->pid > 0)
		snprintf(what, sizeof(what), "process %d and its descendants", (int)o->pid);
	else if (o->cgroup)
		snprintf(what, sizeof(what), "the tasks of cgroup %s", rel);
	else
		what[0] = '\0';
	rc = learn_write_policy(out->f, &r->t, o->cmd, what, how, o->per_task);
	if (rc || (rc = learn_out_commit(out, o->output)))
		return rc;
	if (ok)
		return 0;
	if (WIFEXITED(e->status))
		cli_msg("the command exited with %d; the policy shows what this run used",
			WEXITSTATUS(e->status));
	else
		cli_msg("the command was killed by signal %d; the policy shows what this run used",
			WTERMSIG(e->status));
	return LEARN_CMD_FAILED;
}

int cmd_learn(int argc, char **argv)
{
	struct opts o = { .buffer_kb = 8192 };
	struct learn_out out = { .dirfd = -1 };
	struct ended e = { 0 };
	struct rec r = { .fd = -1 };
	char rel[PATH_MAX];
	int rc;

	rc = parse_opts(argc, argv, &o);
	if (rc)
		return rc < 0 ? CLI_OK : rc;
	if ((rc = preflight()))
		return rc;
	/* From here on, every exit and every catchable signal removes the
	 * instance and the unfinished output (learn_trace.c). */
	learn_signals_install();
	if ((rc = learn_out_open(&out, o.output)))
		goto out;
	rc = CLI_FAIL;
	r.t.l = calloc(1, sizeof(*r.t.l));
	r.buf = malloc(RECBUF);
	if (!r.t.l || !r.buf) {
		cli_fail(-ENOMEM, "allocating");
		goto out;
	}
	r.t.self = getpid();
	tracer_mark_forced_async(&r.t);
	if ((rc = learn_setup_instance(o.buffer_kb)))
		goto out;
	learn_clean_stale();
	rc = CLI_FAIL;
	if (open_pipe(&r))
		goto out;
	rc = o.cmd ? record_command(&o, &r, &e) : record_attached(&o, &r, rel, sizeof(rel));
	if (rc)
		goto out;
	learn_inst_write("tracing_on", "0");
	if ((rc = pump(&r, 0)))
		goto out;
	r.t.l->lost = learn_lost_events();
	if (!o.quiet)
		learn_summary(r.t.l);
	if (r.t.l->lost)
		cli_msg("%" PRIu64 " trace events were lost: the policy may miss what they "
			"recorded (raise --buffer-kb)",
			r.t.l->lost);
	if (r.t.l->unreadable)
		cli_msg("%" PRIu64 " request%s of the followed tasks could not be read from the "
			"trace (an opcode or flags learn does not understand): the policy may "
			"lack %s",
			r.t.l->unreadable, r.t.l->unreadable == 1 ? "" : "s",
			r.t.l->unreadable == 1 ? "its opcode" : "their opcodes");
	if ((rc = judge(&o, &r, &e)))
		goto out;
	rc = write_result(&o, &r, &e, &out, rel);
	if (rc == 0 || rc == LEARN_CMD_FAILED)
		learn_advise(r.t.l);
out:
	if (r.fd >= 0) {
		learn_pipe_fd = -1;
		close(r.fd);
	}
	learn_remove_instance();
	learn_out_current = NULL;
	learn_out_abort(&out);
	if (out.f && !out.std)
		fclose(out.f);
	if (out.dirfd >= 0)
		close(out.dirfd);
	free(r.t.task);
	free(r.t.rings.v);
	free(r.t.strange.v);
	free(r.buf);
	free(r.t.l);
	learn_signals_restore();
	return rc;
}
