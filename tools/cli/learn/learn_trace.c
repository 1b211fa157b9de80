/* SPDX-License-Identifier: MIT */
/*
 * iour-restrict learn: the tracefs instance (doc/cli.md, "learn").
 *
 * A tracefs instance of our own, instances/iour-learn-PID-N, records the
 * kernel's tracepoints io_uring:io_uring_submit_req (io_uring_submit_sqe
 * before Linux 6.2, without the request's flags on early 5.10),
 * io_uring:io_uring_register, io_uring:io_uring_create,
 * sched:sched_process_fork and sched:sched_process_exit for every task on
 * the machine; learn_parse.c keeps the events of the followed tasks.
 *
 * The events are read as text from the instance's trace_pipe with the
 * "fields" option, which prints every field of the event's format as
 * name=value; the fields we need are checked against
 * events/<system>/<event>/format first, so a kernel whose tracepoints
 * differ gets a clear error instead of a wrong policy.  A kernel without
 * the "fields" option (Debian's 5.10 and 6.1) prints each event through
 * its own print format ("ring %p, op %d, ..."): then the labels we read
 * are checked against the format's "print fmt" line instead, and the ring
 * pointers (hashed, but the same for one ring in every event) are read as
 * hex.
 *
 * Signals: every catchable signal restores tracefs.  SIGINT, SIGTERM,
 * SIGHUP and SIGQUIT stop the recording (cmd_learn.c decides what that
 * means); any other signal whose default action ends the process ends
 * learn at once: the handler closes trace_pipe, removes the instance,
 * unmounts tracefs if learn mounted it and removes the unfinished output
 * file, all with async-signal-safe calls, then dies of the signal.  Only
 * SIGKILL leaves the instance: the next learn removes the instances whose
 * learner (the PID in the name) no longer runs.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/cli.h"
#include "learn.h"

static char tracefs[64]; /* the tracefs mount */
char learn_inst[PATH_MAX];
static char inst_on[PATH_MAX + 16]; /* learn_inst/tracing_on, for the handler */
static volatile sig_atomic_t mounted_by_us;
volatile int learn_pipe_fd = -1;
volatile pid_t learn_child;
volatile sig_atomic_t learn_stop_signal, learn_stop_from_tty;
struct learn_keys learn_keys;
#define inst learn_inst
#define keys learn_keys

static int find_tracefs(void)
{
	static const char *const where[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
	char p[PATH_MAX];

	for (size_t i = 0; i < sizeof(where) / sizeof(where[0]); i++) {
		snprintf(p, sizeof(p), "%s/instances", where[i]);
		if (!access(p, F_OK)) {
			snprintf(tracefs, sizeof(tracefs), "%s", where[i]);
			return 0;
		}
	}
	if (mount("nodev", where[0], "tracefs", 0, NULL))
		return -errno;
	mounted_by_us = 1;
	snprintf(tracefs, sizeof(tracefs), "%s", where[0]);
	return 0;
}

/* Writes @val to @rel under the instance; 0 or -errno. */
int learn_inst_write(const char *rel, const char *val)
{
	char p[PATH_MAX * 2];
	size_t len = strlen(val);
	int fd, err = 0;

	snprintf(p, sizeof(p), "%s/%s", inst, rel);
	fd = open(p, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, val, len) != (ssize_t)len)
		err = -errno;
	close(fd);
	return err;
}

/* Reads a tracefs file (relative to the mount) into @buf; 0 or -errno. */
static int tracefs_read(const char *rel, char *buf, size_t size)
{
	char p[PATH_MAX];
	ssize_t n = 0, got = 0;
	int fd;

	buf[0] = '\0';
	snprintf(p, sizeof(p), "%s/%s", tracefs, rel);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno ? -errno : -EIO;
	while ((size_t)got < size - 1 && (n = read(fd, buf + got, size - 1 - (size_t)got)) > 0)
		got += n;
	buf[got] = '\0';
	close(fd);
	return n < 0 ? -errno : 0;
}

/*
 * Checks that event @ev (system/name) exists and that its format has
 * every field of the NULL-terminated list @fields.  0, -ENOENT (no event)
 * or -EPROTO (a field is missing, named on stderr).
 */
static int check_format(const char *ev, const char *const *fields)
{
	char rel[128], fmt[8192], want[96];

	snprintf(rel, sizeof(rel), "events/%s/format", ev);
	if (tracefs_read(rel, fmt, sizeof(fmt)))
		return -ENOENT;
	for (; *fields; fields++) {
		bool found = false;

		/* "field:TYPE NAME;" : the name ends the declaration */
		snprintf(want, sizeof(want), " %s;", *fields);
		for (char *l = strstr(fmt, "field:"); l; l = strstr(l + 1, "field:")) {
			char *semi = strchr(l, ';');
			size_t wl = strlen(want);

			if (semi && (size_t)(semi - l) >= wl - 1 &&
			    !strncmp(semi + 1 - wl, want, wl)) {
				found = true;
				break;
			}
		}
		if (!found) {
			cli_msg("tracepoint %s has no field '%s' (this kernel's tracepoints differ "
				"from what learn reads)",
				ev, *fields);
			return -EPROTO;
		}
	}
	return 0;
}

void learn_remove_instance(void)
{
	if (inst[0]) {
		/* tracing off first: rmdir fails while a reader holds trace_pipe */
		learn_inst_write("tracing_on", "0");
		if (rmdir(inst))
			cli_msg("could not remove the tracefs instance %s: %s", inst,
				strerror(errno));
		inst[0] = '\0';
	}
	if (mounted_by_us) {
		umount(tracefs);
		mounted_by_us = 0;
	}
}

/* events[0] is the submit tracepoint this kernel has (setup_instance) */
static const char *events[] = {
	"io_uring/io_uring_submit_req", "io_uring/io_uring_register", "io_uring/io_uring_create",
	"sched/sched_process_fork",     "sched/sched_process_exit",
};
#define NEVENTS (sizeof(events) / sizeof(events[0]))

/*
 * What parse_line looks for: the keys (with their separator) of the values
 * it reads, as the "fields" option prints them or, without that option,
 * as the 5.10 print formats do.  A NULL flags key: the submit tracepoint
 * does not report the request's flags.
 */
static const struct learn_keys fields_keys = {
	.submit = " io_uring_submit_req: ",
	.ctx = "ctx=",
	.op = "opcode=",
	.flags = "flags=",
	.sqt = "sq_thread=",
	.rop = "opcode=",
	.ret = "ret=",
	.cctx = "ctx=",
	.cflags = "flags=",
	.ppid = "parent_pid=",
	.cpid = "child_pid=",
	.ccomm = "child_comm=",
	.epid = "pid=",
	.ptr_base = 0,
};

/* print fmt of 5.10: "ring %p, op %d, data 0x%llx, non block %d,
 * sq_thread %d" (later 5.10 releases: "ring %p, req %p, op %d, data
 * 0x%llx, flags %u, ..."); of 6.1: "ring %p, req %p, user_data 0x%llx, opcode %s,
 * flags 0x%x, non block %d, sq_thread %d" (the op and flags keys are set
 * from the format, setup_instance); both "ring %p, opcode %d, ...,
 * ret %ld", "ring %p, fd %d ..., flags %d" (6.1: "flags 0x%x"),
 * "comm=%s pid=%d child_comm=%s child_pid=%d" and "comm=%s pid=%d prio=%d" */
static const struct learn_keys text_keys = {
	.submit = " io_uring_submit_sqe: ",
	.ctx = "ring ",
	.op = "op ",
	.flags = NULL,
	.sqt = "sq_thread ",
	.rop = "opcode ",
	.ret = "ret ",
	.cctx = "ring ",
	.cflags = "flags ",
	.ppid = "pid=",
	.cpid = "child_pid=",
	.ccomm = "child_comm=",
	.epid = "pid=",
	.ptr_base = 16,
};

/* The text each print format must hold for text_keys to read it. */
static const char *const p_submit[] = { "\"ring %p,", "sq_thread %d", NULL };
static const char *const p_register[] = { "\"ring %p, opcode %d,", "ret %ld", NULL };
static const char *const p_create[] = { "\"ring %p,", " flags ", NULL };
static const char *const p_fork[] = { " pid=%d", "child_pid=%d", NULL };
static const char *const p_exit[] = { "comm=%s pid=%d", NULL };

/* The "print fmt:" line of @ev's format, in @fmt (8192 bytes); NULL if the
 * format cannot be read or has none. */
static const char *printfmt(const char *ev, char *fmt)
{
	char rel[128];

	snprintf(rel, sizeof(rel), "events/%s/format", ev);
	if (tracefs_read(rel, fmt, 8192))
		return NULL;
	return strstr(fmt, "print fmt:");
}

/* Checks that the print format of @ev has every text of @texts; 0, -ENOENT
 * or -EPROTO (named on stderr). */
static int check_printfmt(const char *ev, const char *const *texts)
{
	char rel[128], fmt[8192];
	const char *pf;

	snprintf(rel, sizeof(rel), "events/%s/format", ev);
	if (tracefs_read(rel, fmt, sizeof(fmt)))
		return -ENOENT;
	pf = strstr(fmt, "print fmt:");
	for (; *texts; texts++) {
		if (!pf || !strstr(pf, *texts)) {
			cli_msg("tracepoint %s prints no '%s' (this kernel's tracepoints differ "
				"from what learn reads)",
				ev, *texts);
			return -EPROTO;
		}
	}
	return 0;
}

/* Creates and configures the instance; 0, or an exit code (message printed). */
int learn_setup_instance(unsigned buffer_kb)
{
	static const char *const f_submit[] = { "ctx", "opcode", "sq_thread", NULL };
	static const char *const f_register[] = { "ctx", "opcode", "ret", NULL };
	static const char *const f_create[] = { "ctx", "flags", NULL };
	static const char *const f_fork[] = { "parent_pid", "child_pid", NULL };
	static const char *const f_exit[] = { "pid", NULL };
	static const char *const *const fields[] = { f_submit, f_register, f_create, f_fork,
						     f_exit };
	static const char *const *const prints[] = { p_submit, p_register, p_create, p_fork,
						     p_exit };
	static const char *const f_flags[] = { "flags", NULL };
	static unsigned seq;
	char p[PATH_MAX], val[32], fmt[64];
	struct timespec ts;
	bool text;
	int r;

	r = find_tracefs();
	if (r) {
		cli_msg("tracefs is not mounted and mounting it failed: %s%s", strerror(-r),
			r == -EPERM ? " (learn needs root)" : "");
		return LEARN_NO_TRACING;
	}
	/* the submit tracepoint: io_uring_submit_req from 6.2, io_uring_submit_sqe
	 * before (doc/cli.md, "learn") */
	events[0] = "io_uring/io_uring_submit_req";
	snprintf(fmt, sizeof(fmt), "events/%s/format", events[0]);
	if (tracefs_read(fmt, val, sizeof(val))) {
		events[0] = "io_uring/io_uring_submit_sqe";
		snprintf(fmt, sizeof(fmt), "events/%s/format", events[0]);
		if (tracefs_read(fmt, val, sizeof(val))) {
			cli_msg("the kernel has neither tracepoint io_uring/io_uring_submit_req nor "
				"io_uring/io_uring_submit_sqe (needs CONFIG_IO_URING and "
				"tracepoints) or %s/events cannot be read",
				tracefs);
			return LEARN_NO_TRACING;
		}
	}
	snprintf(p, sizeof(p), "%s/options/fields", tracefs);
	text = access(p, F_OK) != 0;
	keys = text ? text_keys : fields_keys;
	keys.submit = strstr(events[0], "submit_req") ? " io_uring_submit_req: " :
							" io_uring_submit_sqe: ";
	for (size_t i = 0; i < NEVENTS; i++) {
		r = text ? check_printfmt(events[i], prints[i]) :
			   check_format(events[i], fields[i]);
		if (r == -ENOENT) {
			cli_msg("the kernel has no tracepoint %s (needs CONFIG_IO_URING and "
				"tracepoints) or %s/events cannot be read",
				events[i], tracefs);
			return LEARN_NO_TRACING;
		}
		if (r)
			return LEARN_NO_TRACING;
	}
	/* 6.1's io_uring_submit_sqe has the request's flags, 5.10's has not */
	keys.flags = NULL;
	if (!text) {
		if (!check_format(events[0], f_flags))
			keys.flags = "flags=";
	} else {
		char pfbuf[8192];
		const char *pf = printfmt(events[0], pfbuf);

		if (pf && strstr(pf, " op %d,")) {
			keys.op = "op ";
		} else if (pf && strstr(pf, " opcode %d,")) {
			keys.op = "opcode ";
		} else if (pf && strstr(pf, " opcode %s,")) {
			keys.op = "opcode ";
			keys.op_name = true;
		} else {
			cli_msg("tracepoint %s prints no opcode learn can read ('op %%d', "
				"'opcode %%d' or 'opcode %%s')",
				events[0]);
			return LEARN_NO_TRACING;
		}
		if (pf && (strstr(pf, " flags 0x%x,") || strstr(pf, " flags 0x%llx,") ||
			   strstr(pf, " flags %u,") || strstr(pf, " flags %d,")))
			keys.flags = "flags ";
	}
	clock_gettime(CLOCK_MONOTONIC, &ts);
	/* the learner's pid is the second part: learn_clean_stale() reads it */
	snprintf(inst, sizeof(inst), "%s/instances/iour-learn-%d-%lx%u", tracefs, (int)getpid(),
		 (unsigned long)ts.tv_nsec, seq++);
	snprintf(inst_on, sizeof(inst_on), "%s/tracing_on", inst);
	if (mkdir(inst, 0700)) {
		r = errno;
		inst[0] = '\0';
		cli_msg("cannot create a tracefs instance under %s/instances: %s", tracefs,
			strerror(r));
		return LEARN_NO_TRACING;
	}
	snprintf(val, sizeof(val), "%u", buffer_kb);
	if ((r = learn_inst_write("tracing_on", "0")) ||
	    (r = learn_inst_write("buffer_size_kb", val)) ||
	    (!text && (r = learn_inst_write("options/fields", "1"))) ||
	    (r = learn_inst_write("options/overwrite", "0")))
		goto fail;
	for (size_t i = 0; i < NEVENTS; i++) {
		snprintf(p, sizeof(p), "events/%s/enable", events[i]);
		r = learn_inst_write(p, "1");
		if (r)
			goto fail;
	}
	return 0;
fail:
	cli_msg("configuring the tracefs instance %s failed: %s", inst, strerror(-r));
	return CLI_FAIL;
}

/* Sums "overrun" and "dropped events" of every CPU's stats. */
uint64_t learn_lost_events(void)
{
	char rel[PATH_MAX * 2], buf[2048];
	uint64_t lost = 0;
	const char *base = inst + strlen(tracefs) + 1;

	for (int cpu = 0; cpu < 4096; cpu++) {
		snprintf(rel, sizeof(rel), "%s/per_cpu/cpu%d/stats", base, cpu);
		if (tracefs_read(rel, buf, sizeof(buf)))
			break;
		for (char *l = buf; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
			if (!strncmp(l, "overrun:", 8))
				lost += strtoull(l + 8, NULL, 10);
			else if (!strncmp(l, "dropped events:", 15))
				lost += strtoull(l + 15, NULL, 10);
		}
	}
	return lost;
}

/* 1 if @pid runs this program (a learner), 0 if not or it does not run. */
static int is_learner(long pid)
{
	char p[64], exe[PATH_MAX], self[PATH_MAX];
	ssize_t n, m;

	if (kill((pid_t)pid, 0) && errno == ESRCH)
		return 0;
	snprintf(p, sizeof(p), "/proc/%ld/exe", pid);
	n = readlink(p, exe, sizeof(exe) - 1);
	m = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n < 0 || m < 0)
		return 1; /* it runs and we cannot tell: leave its instance */
	exe[n] = self[m] = '\0';
	return !strcmp(exe, self) || strstr(exe, "iour-restrict") != NULL;
}

int learn_clean_stale(void)
{
	char dir[PATH_MAX], p[PATH_MAX * 2];
	struct dirent *e;
	int removed = 0;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/instances", tracefs);
	d = opendir(dir);
	if (!d)
		return 0;
	while ((e = readdir(d))) {
		char *end;
		long pid;

		if (strncmp(e->d_name, "iour-learn-", 11) != 0)
			continue;
		pid = strtol(e->d_name + 11, &end, 10);
		if (end == e->d_name + 11 || *end != '-' || pid <= 0 || pid == (long)getpid() ||
		    is_learner(pid))
			continue;
		snprintf(p, sizeof(p), "%s/%s/tracing_on", dir, e->d_name);
		int fd = open(p, O_WRONLY | O_TRUNC | O_CLOEXEC);

		if (fd >= 0) {
			if (write(fd, "0", 1) < 0) { /* rmdir below says what failed */
			}
			close(fd);
		}
		snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
		if (rmdir(p)) {
			cli_msg("could not remove %s, left by learner %ld which no longer runs: %s",
				p, pid, strerror(errno));
		} else {
			cli_msg("removed %s, left by learner %ld which no longer runs", p, pid);
			removed++;
		}
	}
	closedir(d);
	return removed;
}

/* ---- signals -------------------------------------------------------- */

/* Signals that stop the recording; every other catchable one whose
 * default action ends the process is fatal (fatal_sigs). */
static const int stop_sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
static const int fatal_sigs[] = { SIGPIPE, SIGUSR1, SIGUSR2, SIGALRM, SIGVTALRM, SIGPROF,
				  SIGXCPU, SIGXFSZ, SIGPOLL, SIGSYS,  SIGTRAP,   SIGABRT,
				  SIGBUS,  SIGFPE,  SIGILL,  SIGSEGV, SIGSTKFLT, SIGPWR };
#define NSTOP (sizeof(stop_sigs) / sizeof(stop_sigs[0]))
#define NFATAL (sizeof(fatal_sigs) / sizeof(fatal_sigs[0]))
/* the real-time signals, SIGRTMIN..SIGRTMAX, are fatal too */
#define NRT 32
static struct sigaction old_stop[NSTOP], old_fatal[NFATAL], old_rt[NRT];

/* A signal the terminal sent (SI_KERNEL: ^C, ^\, hangup) reached the
 * command's process group already; one sent to learn alone (kill) is
 * passed on. */
static void on_stop(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	learn_stop_signal = sig;
	learn_stop_from_tty = si && si->si_code == SI_KERNEL;
}

/* Async-signal-safe: open, write, close, rmdir, umount, unlinkat, kill. */
static void on_fatal(int sig)
{
	int saved = errno;

	if (learn_child > 0 && sig != SIGSEGV && sig != SIGBUS && sig != SIGILL && sig != SIGFPE &&
	    sig != SIGABRT && sig != SIGTRAP && sig != SIGSYS)
		kill(learn_child, sig); /* as if learn were not there */
	if (learn_pipe_fd >= 0)
		close(learn_pipe_fd);
	if (inst[0]) {
		int fd = open(inst_on, O_WRONLY | O_TRUNC | O_CLOEXEC);

		if (fd >= 0) {
			if (write(fd, "0", 1) < 0) { /* nothing more to do */
			}
			close(fd);
		}
		rmdir(inst);
	}
	if (mounted_by_us)
		umount(tracefs);
	if (learn_out_current)
		learn_out_abort(learn_out_current);
	signal(sig, SIG_DFL);
	errno = saved;
	raise(sig);
}

void learn_signals_install(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_sigaction = on_stop;
	sa.sa_flags = SA_SIGINFO;
	for (size_t i = 0; i < NSTOP; i++)
		sigaction(stop_sigs[i], &sa, &old_stop[i]);
	memset(&sa, 0, sizeof(sa));
	sigfillset(&sa.sa_mask); /* one cleanup at a time */
	sa.sa_handler = on_fatal;
	for (size_t i = 0; i < NFATAL; i++)
		sigaction(fatal_sigs[i], &sa, &old_fatal[i]);
	for (int i = 0; i < NRT && SIGRTMIN + i <= SIGRTMAX; i++)
		sigaction(SIGRTMIN + i, &sa, &old_rt[i]);
}

void learn_signals_restore(void)
{
	for (size_t i = 0; i < NSTOP; i++)
		sigaction(stop_sigs[i], &old_stop[i], NULL);
	for (size_t i = 0; i < NFATAL; i++)
		sigaction(fatal_sigs[i], &old_fatal[i], NULL);
	for (int i = 0; i < NRT && SIGRTMIN + i <= SIGRTMAX; i++)
		sigaction(SIGRTMIN + i, &old_rt[i], NULL);
}
