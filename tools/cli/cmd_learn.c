/* SPDX-License-Identifier: MIT */
/*
 * iour-restrict learn: run a command and write the least-privilege policy
 * file its io_uring use needs.
 *
 * How (doc/cli.md, "learn"): a tracefs instance of our own
 * (instances/iour-learn-PID-N) records the kernel's tracepoints
 * io_uring:io_uring_submit_req (io_uring:io_uring_submit_sqe before Linux
 * 6.2, without the request's flags on early 5.10), io_uring:io_uring_register,
 * io_uring:io_uring_create and sched:sched_process_fork for every task on
 * the machine; we keep the events of the command's tasks.  The command's
 * tasks are its process and every task a followed task forks (processes
 * and threads both fire sched_process_fork).  SQPOLL threads are kernel
 * threads the kernel starts without sched_process_fork, and the submit
 * tracepoint reports the SQPOLL thread's pid (its sq_thread field is 1),
 * so a submission by an SQPOLL thread is kept when its ring was created by
 * a followed task (the ctx field of io_uring_create).  io-wq workers only
 * execute requests; they submit none.
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
 * The instance is removed on every exit path we control, including
 * SIGINT, SIGTERM, SIGHUP and SIGQUIT (forwarded to the command, whose
 * end we wait for).  Only SIGKILL leaves it behind.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

/* Exit codes of learn, beyond CLI_OK, CLI_FAIL and CLI_USAGE. */
/* 3 is the CLI's "policy file not valid", which learn never reads. */
#define LEARN_NO_TRACING 4 /* not root, or no tracefs or tracepoints */
#define LEARN_CMD_FAILED 5 /* the command failed; the policy was written */

const char cli_help_learn[] =
	"Usage: iour-restrict learn [--output FILE] [--buffer-kb N] [--quiet]\n"
	"                           -- COMMAND [ARG]...\n"
	"\n"
	"Run COMMAND and write the least-privilege policy file its io_uring use\n"
	"needs: the request opcodes, SQE flags and register opcodes that COMMAND,\n"
	"its threads, its child processes and the SQPOLL threads of their rings\n"
	"used, from the kernel's io_uring tracepoints (io_uring_submit_req, or\n"
	"io_uring_submit_sqe before Linux 6.2, and io_uring_register), recorded in a tracefs instance of its own that is\n"
	"removed afterwards.  Opcodes are grouped where a whole group was seen;\n"
	"every entry has a comment saying what was seen and how often.  A summary\n"
	"goes to stderr.\n"
	"\n"
	"Needs root (tracefs); tracefs is mounted on /sys/kernel/tracing if it is\n"
	"not mounted (and unmounted afterwards).\n"
	"\n"
	"Options:\n"
	"  -o, --output FILE   write the policy to FILE (default: stdout)\n"
	"  --buffer-kb N       trace buffer per CPU in KiB (default 8192); events\n"
	"                      lost to a full buffer are reported\n"
	"  -q, --quiet         no summary on stderr\n"
	"  -h, --help          show this help\n"
	"\n"
	"Example: iour-restrict learn -o fio.json -- fio job.fio   (ioengine=io_uring)\n"
	"\n"
	"Exit status: 0 the policy was written and COMMAND exited with 0;\n"
	"1 tracing failed or the policy could not be written; 2 usage error;\n"
	"4 not root, or tracefs or the io_uring tracepoints are unavailable\n"
	"(nothing was run); 5 COMMAND exited non-zero or was killed (the policy\n"
	"was written: it shows what that run used); 126 COMMAND could not be\n"
	"executed, 127 COMMAND was not found.\n";

#define NOPS 256       /* request opcodes are one byte */
#define NREG 256       /* register opcodes we count one by one */
#define NFLAGS 7       /* IOSQE_* bits 0..6 */
#define SQPOLL_FLAG 2u /* IORING_SETUP_SQPOLL */
#define ASYNC_BIT 4u   /* IOSQE_ASYNC_BIT */

struct learned {
	uint64_t op[NOPS];
	uint64_t op_sqpoll[NOPS];   /* of op[], by SQPOLL threads */
	uint32_t op_flags[NOPS];    /* SQE flags seen, per opcode */
	uint64_t flag[NFLAGS];      /* requests carrying each flag */
	bool async_ambiguous[NOPS]; /* bit 4 seen, not recorded */
	uint64_t reg_ok[NREG], reg_fail[NREG];
	uint64_t reg_other; /* register opcodes >= NREG */
	uint64_t nreq, nreg, rings, sqpoll_rings;
	uint64_t lost;      /* events overwritten or dropped */
	bool flags_unknown; /* the submit tracepoint has no flags (5.10) */
	size_t ntasks;
};

/* A growable set of numbers (pids, ring addresses); small, linear. */
struct set {
	uint64_t *v;
	size_t n, cap;
};

static bool set_has(const struct set *s, uint64_t x)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i] == x)
			return true;
	return false;
}

static int set_add(struct set *s, uint64_t x)
{
	if (set_has(s, x))
		return 0;
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 64;
		uint64_t *v = realloc(s->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n++] = x;
	return 0;
}

/* ---- tracefs ------------------------------------------------------- */

static char tracefs[64];    /* the tracefs mount */
static char inst[PATH_MAX]; /* our instance; "" when there is none */
static bool mounted_by_us;
static volatile sig_atomic_t got_signal;
static volatile sig_atomic_t signal_from_tty;

/* A signal the terminal sent (SI_KERNEL: ^C, ^\, hangup) reached the
 * command's process group already; one sent to learn alone (kill) is
 * passed on. */
static void on_signal(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	got_signal = sig;
	signal_from_tty = si && si->si_code == SI_KERNEL;
}

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
	mounted_by_us = true;
	snprintf(tracefs, sizeof(tracefs), "%s", where[0]);
	return 0;
}

/* Writes @val to @rel under the instance; 0 or -errno. */
static int inst_write(const char *rel, const char *val)
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

static void remove_instance(void)
{
	if (inst[0]) {
		/* tracing off first: rmdir fails while a reader holds trace_pipe */
		inst_write("tracing_on", "0");
		if (rmdir(inst))
			cli_msg("could not remove the tracefs instance %s: %s", inst,
				strerror(errno));
		inst[0] = '\0';
	}
	if (mounted_by_us) {
		umount(tracefs);
		mounted_by_us = false;
	}
}

/* events[0] is the submit tracepoint this kernel has (setup_instance) */
static const char *events[] = {
	"io_uring/io_uring_submit_req",
	"io_uring/io_uring_register",
	"io_uring/io_uring_create",
	"sched/sched_process_fork",
};

/*
 * What parse_line looks for: the keys (with their separator) of the values
 * it reads, as the "fields" option prints them or, without that option,
 * as the 5.10 print formats do.  A NULL flags key: the submit tracepoint
 * does not report the request's flags.
 */
struct keys {
	const char *submit;                 /* " io_uring_submit_req: " */
	const char *ctx, *op, *flags, *sqt; /* submit */
	const char *rop, *ret;              /* register */
	const char *cctx, *cflags;          /* create */
	const char *ppid, *cpid;            /* sched_process_fork */
	int ptr_base;                       /* ring pointers: 0 (0x...) or 16 */
	bool op_name;                       /* the opcode is printed as its name */
};

static const struct keys fields_keys = {
	" io_uring_submit_req: ",
	"ctx=",
	"opcode=",
	"flags=",
	"sq_thread=",
	"opcode=",
	"ret=",
	"ctx=",
	"flags=",
	"parent_pid=",
	"child_pid=",
	0,
	false,
};

/* print fmt of 5.10: "ring %p, op %d, data 0x%llx, non block %d,
 * sq_thread %d" (later 5.10 releases: "ring %p, req %p, op %d, data
 * 0x%llx, flags %u, ..."); of 6.1: "ring %p, req %p, user_data 0x%llx, opcode %s,
 * flags 0x%x, non block %d, sq_thread %d" (the op and flags keys are set
 * from the format, setup_instance); both "ring %p, opcode %d, ...,
 * ret %ld", "ring %p, fd %d ..., flags %d" (6.1: "flags 0x%x") and
 * "comm=%s pid=%d child_comm=%s child_pid=%d" */
static const struct keys text_keys = {
	" io_uring_submit_sqe: ",
	"ring ",
	"op ",
	NULL,
	"sq_thread ",
	"opcode ",
	"ret ",
	"ring ",
	"flags ",
	"pid=",
	"child_pid=",
	16,
	false,
};

static struct keys keys;

/* The text each print format must hold for text_keys to read it. */
static const char *const p_submit[] = { "\"ring %p,", "sq_thread %d", NULL };
static const char *const p_register[] = { "\"ring %p, opcode %d,", "ret %ld", NULL };
static const char *const p_create[] = { "\"ring %p,", " flags ", NULL };
static const char *const p_fork[] = { " pid=%d", "child_pid=%d", NULL };

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
static int setup_instance(unsigned buffer_kb)
{
	static const char *const f_submit[] = { "ctx", "opcode", "sq_thread", NULL };
	static const char *const f_register[] = { "ctx", "opcode", "ret", NULL };
	static const char *const f_create[] = { "ctx", "flags", NULL };
	static const char *const f_fork[] = { "parent_pid", "child_pid", NULL };
	static const char *const *const fields[] = { f_submit, f_register, f_create, f_fork };
	static const char *const *const prints[] = { p_submit, p_register, p_create, p_fork };
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
	for (size_t i = 0; i < sizeof(events) / sizeof(events[0]); i++) {
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
		if (pf && (strstr(pf, " flags 0x%x,") || strstr(pf, " flags %u,") ||
			   strstr(pf, " flags %d,")))
			keys.flags = "flags ";
	}
	clock_gettime(CLOCK_MONOTONIC, &ts);
	snprintf(inst, sizeof(inst), "%s/instances/iour-learn-%d-%lx%u", tracefs, (int)getpid(),
		 (unsigned long)ts.tv_nsec, seq++);
	if (mkdir(inst, 0700)) {
		r = errno;
		inst[0] = '\0';
		cli_msg("cannot create a tracefs instance under %s/instances: %s", tracefs,
			strerror(r));
		return LEARN_NO_TRACING;
	}
	snprintf(val, sizeof(val), "%u", buffer_kb);
	if ((r = inst_write("tracing_on", "0")) || (r = inst_write("buffer_size_kb", val)) ||
	    (!text && (r = inst_write("options/fields", "1"))) ||
	    (r = inst_write("options/overwrite", "0")))
		goto fail;
	for (size_t i = 0; i < sizeof(events) / sizeof(events[0]); i++) {
		snprintf(p, sizeof(p), "events/%s/enable", events[i]);
		r = inst_write(p, "1");
		if (r)
			goto fail;
	}
	return 0;
fail:
	cli_msg("configuring the tracefs instance %s failed: %s", inst, strerror(-r));
	return CLI_FAIL;
}

/* Sums "overrun" and "dropped events" of every CPU's stats. */
static uint64_t lost_events(void)
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

/* ---- parsing the events -------------------------------------------- */

/*
 * The value after @key (a name with its separator, "ctx=" or "ring ") in
 * the event text @s, read in @base: "name=0x1f (31)", "name=(1)" or
 * "name=0xffff..." with the fields option, "ring 00000000a1b2c3d4," or
 * "op 22," without it.  The token in parentheses is the decimal value
 * when there is one; pointers are compared as their hex token.  0 or -1
 * if the key is absent.
 */
static int field_base(const char *s, const char *key, int base, uint64_t *out)
{
	size_t nl = strlen(key);
	const char *p = s;

	while ((p = strstr(p, key))) {
		if (p == s || p[-1] == ' ') {
			const char *v = p + nl;
			char *end;

			if (*v == '(')
				v++;
			*out = strtoull(v, &end, base);
			return end == v ? -1 : 0;
		}
		p += nl;
	}
	return -1;
}

static int field(const char *s, const char *key, uint64_t *out)
{
	return field_base(s, key, 0, out);
}

/* The opcode after @key printed as its name ("opcode READ,"): its number
 * from the library's table; -1 if absent or unknown to the table. */
static int op_by_name(const char *s, const char *key, uint64_t *out)
{
	const char *p = s;
	size_t nl = strlen(key);
	char name[32];
	int op;

	while ((p = strstr(p, key))) {
		if (p == s || p[-1] == ' ') {
			size_t n = strcspn(p + nl, ", ");

			if (!n || n >= sizeof(name))
				return -1;
			memcpy(name, p + nl, n);
			name[n] = '\0';
			op = iour_opcode_from_name(name);
			if (op < 0)
				return -1;
			*out = (uint64_t)op;
			return 0;
		}
		p += nl;
	}
	return -1;
}

/* The pid of the task in an event line: "   COMM-PID   [CPU] ..." (COMM
 * may hold spaces and dashes: the first "-DIGITS SPACES [" decides). */
static int line_pid(const char *l, uint64_t *pid)
{
	for (const char *d = strchr(l, '-'); d; d = strchr(d + 1, '-')) {
		const char *q = d + 1;
		char *end;
		unsigned long v;

		if (!isdigit((unsigned char)*q))
			continue;
		v = strtoul(q, &end, 10);
		q = end;
		while (*q == ' ')
			q++;
		if (*q == '[' || *q == '(') {
			*pid = v;
			return 0;
		}
	}
	return -1;
}

struct tracer {
	struct set tasks; /* followed pids (thread ids) */
	struct set rings; /* ctx of the rings they created */
	struct learned *l;
	bool async_forced[NOPS]; /* opcodes whose prep sets IOSQE_ASYNC's bit */
};

static int parse_line(struct tracer *t, const char *l)
{
	struct learned *L = t->l;
	uint64_t pid, a, b, c, d;
	const char *ev;

	if (l[0] == '#' || line_pid(l, &pid))
		return 0;
	if ((ev = strstr(l, " sched_process_fork: "))) {
		if (!field(ev, keys.ppid, &a) && !field(ev, keys.cpid, &b) && set_has(&t->tasks, a))
			return set_add(&t->tasks, b);
		return 0;
	}
	if ((ev = strstr(l, " io_uring_create: "))) {
		if (set_has(&t->tasks, pid) && !field_base(ev, keys.cctx, keys.ptr_base, &a) &&
		    !field(ev, keys.cflags, &b)) {
			L->rings++;
			if (b & SQPOLL_FLAG)
				L->sqpoll_rings++;
			return set_add(&t->rings, a);
		}
		return 0;
	}
	if ((ev = strstr(l, keys.submit))) {
		c = 0;
		if (field_base(ev, keys.ctx, keys.ptr_base, &a) ||
		    (keys.op_name ? op_by_name(ev, keys.op, &b) : field(ev, keys.op, &b)) ||
		    (keys.flags && field(ev, keys.flags, &c)) || field(ev, keys.sqt, &d))
			return 0;
		if (!keys.flags)
			L->flags_unknown = true;
		/* SQPOLL submissions come from the kernel's SQPOLL thread */
		if (!set_has(&t->tasks, pid) && !(d && set_has(&t->rings, a)))
			return 0;
		b &= 0xff;
		/* the low 7 bits of the request's flags are the SQE's flags */
		c &= (1u << NFLAGS) - 1;
		if ((c & (1u << ASYNC_BIT)) && t->async_forced[b]) {
			L->async_ambiguous[b] = true;
			c &= ~(1u << ASYNC_BIT);
		}
		L->op[b]++;
		if (d)
			L->op_sqpoll[b]++;
		L->op_flags[b] |= (uint32_t)c;
		for (unsigned i = 0; i < NFLAGS; i++)
			if (c & (1u << i))
				L->flag[i]++;
		L->nreq++;
		return 0;
	}
	if ((ev = strstr(l, " io_uring_register: "))) {
		if (!set_has(&t->tasks, pid) || field(ev, keys.rop, &a) || field(ev, keys.ret, &b))
			return 0;
		L->nreg++;
		if (a >= NREG)
			L->reg_other++;
		else if ((int64_t)b < 0)
			L->reg_fail[a]++;
		else
			L->reg_ok[a]++;
	}
	return 0;
}

/* Reads what trace_pipe has now; the number of bytes, or -errno. */
static ssize_t drain(struct tracer *t, int fd, char *buf, size_t size, size_t *held)
{
	ssize_t total = 0;

	for (;;) {
		ssize_t n = read(fd, buf + *held, size - 1 - *held);
		char *l, *nl;

		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				return total;
			return -errno;
		}
		if (n == 0)
			return total;
		total += n;
		*held += (size_t)n;
		buf[*held] = '\0';
		for (l = buf; (nl = strchr(l, '\n')); l = nl + 1) {
			*nl = '\0';
			if (parse_line(t, l))
				return -ENOMEM;
		}
		*held = strlen(l);
		memmove(buf, l, *held + 1);
		if (*held == size - 1) /* a line longer than the buffer: drop it */
			*held = 0;
	}
}

/* ---- the policy file ----------------------------------------------- */

/* The JSON string escapes of @s, without the quotes. */
static void json_str_body(FILE *f, const char *s)
{
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			fprintf(f, "\\%c", ch);
		else if (ch < 0x20 || ch == 0x7f)
			fprintf(f, "\\u%04x", ch);
		else
			fputc(ch, f);
	}
}

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	json_str_body(f, s);
	fputc('"', f);
}

static const char *op_name(uint32_t op, char *buf, size_t len)
{
	const char *n = iour_opcode_name(op);

	if (n)
		return n;
	snprintf(buf, len, "%u", op);
	return buf;
}

/* "IO_LINK 3, ASYNC 1" for the flags of @mask, from the counts. */
static void flags_text(char *buf, size_t len, uint32_t mask, const uint64_t *counts)
{
	size_t off = 0;

	buf[0] = '\0';
	for (unsigned i = 0; i < NFLAGS && off < len; i++) {
		if (!(mask & (1u << i)))
			continue;
		const char *n = iour_sqe_flag_name(1u << i);

		off += (size_t)snprintf(buf + off, len - off, "%s%s", off ? ", " : "", n ? n : "?");
		if (counts && off < len)
			off += (size_t)snprintf(buf + off, len - off, " %" PRIu64, counts[i]);
	}
}

/*
 * Lists the seen opcodes of one kind (request or register) in a JSON
 * array: first every group of the library's table all of whose opcodes of
 * that kind (of every kernel version, so that the group adds nothing that
 * was not seen) were seen, then the opcodes no chosen group covers.
 */
static void op_array(FILE *f, const bool *seen, bool reg)
{
	bool covered[NOPS] = { false };
	uint32_t ops[NOPS];
	bool first = true;
	char nb[16];

	for (int g = 0; g < iour_group_count(); g++) {
		struct iour_group_info gi = { .sz = sizeof(gi) };
		int n = reg ? iour_group_register_ops((size_t)g, 0, ops, NOPS) :
			      iour_group_opcodes((size_t)g, 0, ops, NOPS);
		bool fits = n > 0, adds = false;

		for (int i = 0; i < n && fits; i++) {
			fits = ops[i] < NOPS && seen[ops[i]];
			adds |= fits && !covered[ops[i]];
		}
		if (!fits || !adds || iour_group_get((size_t)g, &gi))
			continue;
		for (int i = 0; i < n; i++)
			covered[ops[i]] = true;
		fprintf(f, "%s", first ? "" : ", ");
		json_str(f, gi.name);
		first = false;
	}
	for (unsigned op = 0; op < NOPS; op++) {
		const char *n;

		if (!seen[op] || covered[op])
			continue;
		n = reg ? iour_register_op_name(op) : iour_opcode_name(op);
		if (!n) {
			snprintf(nb, sizeof(nb), "%u", op);
			n = nb;
		}
		fprintf(f, "%s", first ? "" : ", ");
		json_str(f, n);
		first = false;
	}
}

/* Appends to @f (a memory stream) the policy text. */
static void policy_text(FILE *f, const struct learned *L, char **cmd, int status)
{
	bool seen[NOPS], rseen[NOPS];
	char nb[16], fl[256];
	uint32_t allflags = 0;
	uint64_t flagcount[NFLAGS];
	struct utsname u;
	const char *sep = "";

	if (uname(&u))
		snprintf(u.release, sizeof(u.release), "?");
	for (unsigned op = 0; op < NOPS; op++) {
		allflags |= L->op_flags[op];
		seen[op] = L->op[op] > 0;
		rseen[op] = L->reg_ok[op] + L->reg_fail[op] > 0;
	}

	/* the top-level comment: what ran, and what was seen how often */
	fprintf(f, "{\n  \"comment\": \"learned by iour-restrict learn on Linux ");
	json_str_body(f, u.release);
	fprintf(f, " from one run of:");
	for (char **a = cmd; *a; a++) {
		fputc(' ', f);
		json_str_body(f, *a);
	}
	fprintf(f, " (%s; %zu task%s, %" PRIu64 " ring%s of which %" PRIu64 " SQPOLL%s).",
		status == 0 ? "it exited with 0" : "it FAILED: this run may not show all it needs",
		L->ntasks, L->ntasks == 1 ? "" : "s", L->rings, L->rings == 1 ? "" : "s",
		L->sqpoll_rings, L->lost ? "; TRACE EVENTS WERE LOST" : "");
	fprintf(f, " Requests seen (%" PRIu64 "):", L->nreq);
	for (unsigned op = 0; op < NOPS; op++) {
		if (!L->op[op])
			continue;
		fprintf(f, "%s %s %" PRIu64, sep, op_name(op, nb, sizeof(nb)), L->op[op]);
		if (L->op_sqpoll[op])
			fprintf(f, " (%" PRIu64 " by an SQPOLL thread)", L->op_sqpoll[op]);
		sep = ",";
	}
	fprintf(f, "%s. Register calls seen (%" PRIu64 "):", L->nreq ? "" : " none", L->nreg);
	sep = "";
	for (unsigned op = 0; op < NREG; op++) {
		const char *n = iour_register_op_name(op);

		if (!rseen[op])
			continue;
		if (!n) {
			snprintf(nb, sizeof(nb), "%u", op);
			n = nb;
		}
		fprintf(f, "%s %s %" PRIu64, sep, n, L->reg_ok[op] + L->reg_fail[op]);
		if (L->reg_fail[op])
			fprintf(f, " (%" PRIu64 " failed)", L->reg_fail[op]);
		sep = ",";
	}
	fprintf(f, "%s.\",\n  \"defaultAction\": \"deny\",\n  \"requestOps\": [",
		L->nreg ? "" : " none");
	op_array(f, seen, false);
	fprintf(f, "],\n  \"registerOps\": [");
	op_array(f, rseen, true);

	/* SQE flags, with their counts and the ASYNC caveat */
	for (unsigned i = 0; i < NFLAGS; i++)
		flagcount[i] = L->flag[i];
	flags_text(fl, sizeof(fl), allflags, flagcount);
	fprintf(f, "],\n  \"sqeFlags\": {\n    \"comment\": \"");
	if (L->flags_unknown) {
		fprintf(f, "NOT RECORDED: this kernel's submit tracepoint does not report SQE "
			   "flags; add those the program sets");
	} else if (fl[0]) {
		fprintf(f, "requests carrying each flag: ");
		json_str_body(f, fl);
	} else {
		fprintf(f, "no request carried an SQE flag");
	}
	sep = ". ASYNC cannot be told from the kernel's own for";
	for (unsigned op = 0; op < NOPS; op++) {
		if (!L->async_ambiguous[op])
			continue;
		fprintf(f, "%s %s", sep, op_name(op, nb, sizeof(nb)));
		sep = ",";
	}
	fprintf(f, "%s.\",\n    \"allowed\": [", sep[0] == ',' ? ": not recorded for them" : "");
	sep = "";
	for (unsigned i = 0; i < NFLAGS; i++) {
		if (!(allflags & (1u << i)))
			continue;
		fprintf(f, "%s", sep);
		json_str(f, iour_sqe_flag_name(1u << i) ? iour_sqe_flag_name(1u << i) : "?");
		sep = ", ";
	}
	fprintf(f, "],\n    \"required\": []\n  }\n}\n");
}

/*
 * Writes the policy to @out after checking that the library loads it back
 * (doc/cli.md, "learn"); 0 or an exit code.
 */
static int write_policy(FILE *out, const struct learned *L, char **cmd, int status)
{
	struct iour_load_error le = { .sz = sizeof(le) };
	struct iour_policy *p = NULL;
	char *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);
	int r;

	if (!m)
		return cli_fail(-ENOMEM, "writing the policy");
	policy_text(m, L, cmd, status);
	if (fclose(m) || !text) {
		free(text);
		return cli_fail(-ENOMEM, "writing the policy");
	}
	r = iour_policy__load_json(text, len, NULL, &p, &le);
	if (r) {
		cli_fail(r,
			 "the learned policy does not load back (a bug): line %u, column %u: "
			 "%s",
			 le.line, le.column, le.message);
		free(text);
		return CLI_FAIL;
	}
	iour_policy__free(p);
	r = fwrite(text, 1, len, out) == len ? CLI_OK : CLI_FAIL;
	free(text);
	if (r)
		cli_fail(-EIO, "writing the policy");
	return r;
}

static void summary(const struct learned *L)
{
	char fl[256], nb[16];

	cli_msg("%zu task%s followed, %" PRIu64 " ring%s (%" PRIu64 " SQPOLL), %" PRIu64
		" request%s, %" PRIu64 " register call%s, %" PRIu64 " events lost",
		L->ntasks, L->ntasks == 1 ? "" : "s", L->rings, L->rings == 1 ? "" : "s",
		L->sqpoll_rings, L->nreq, L->nreq == 1 ? "" : "s", L->nreg, L->nreg == 1 ? "" : "s",
		L->lost);
	if (L->flags_unknown)
		cli_msg("this kernel's submit tracepoint does not report SQE flags: none were "
			"recorded");
	for (unsigned op = 0; op < NOPS; op++) {
		if (!L->op[op])
			continue;
		flags_text(fl, sizeof(fl), L->op_flags[op], NULL);
		fprintf(stderr, "  op %s %" PRIu64 " sqpoll %" PRIu64 " flags %s%s\n",
			op_name(op, nb, sizeof(nb)), L->op[op], L->op_sqpoll[op],
			fl[0] ? fl : "none", L->async_ambiguous[op] ? " (ASYNC ambiguous)" : "");
	}
	for (unsigned op = 0; op < NREG; op++) {
		const char *n = iour_register_op_name(op);

		if (!L->reg_ok[op] && !L->reg_fail[op])
			continue;
		if (!n) {
			snprintf(nb, sizeof(nb), "%u", op);
			n = nb;
		}
		fprintf(stderr, "  register %s %" PRIu64 " failed %" PRIu64 "\n", n, L->reg_ok[op],
			L->reg_fail[op]);
	}
}

/* ---- running the command ------------------------------------------- */

/* Opcodes whose preparation sets the request's ASYNC bit itself. */
static void mark_forced_async(struct tracer *t)
{
	static const char *const names[] = {
		"FSYNC",   "SYNC_FILE_RANGE", "FALLOCATE", "FADVISE",   "MADVISE",  "OPENAT",
		"OPENAT2", "STATX",           "RENAMEAT",  "UNLINKAT",  "MKDIRAT",  "SYMLINKAT",
		"LINKAT",  "FSETXATTR",       "SETXATTR",  "FGETXATTR", "GETXATTR", "FTRUNCATE",
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		int op = iour_opcode_from_name(names[i]);

		if (op >= 0 && op < NOPS)
			t->async_forced[op] = true;
	}
}

int cmd_learn(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "buffer-kb", required_argument, NULL, 'b' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
	struct sigaction sa, old[4];
	const char *output = NULL;
	unsigned buffer_kb = 8192;
	struct tracer t = { 0 };
	struct learned *L = NULL;
	bool quiet = false, forwarded = false, written = false;
	int c, rc = CLI_FAIL, go[2] = { -1, -1 }, ex[2] = { -1, -1 }, fd = -1, st = 0;
	char *buf = NULL;
	size_t held = 0;
	FILE *out = NULL;
	pid_t child = -1;
	uint64_t v;
	ssize_t n;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:ho:q", lo, NULL)) != -1) {
		switch (c) {
		case 'o':
			output = optarg;
			break;
		case 'b':
			if (cli_parse_u64(optarg, &v) || v < 64 || v > 1048576)
				return cli_usage("--buffer-kb: '%s' is not a number from 64 to "
						 "1048576",
						 optarg);
			buffer_kb = (unsigned)v;
			break;
		case 'q':
			quiet = true;
			break;
		case 'h':
			return cli_help(cli_help_learn);
		default:
			return cli_getopt_error(c, argv);
		}
	}
	if (optind >= argc)
		return cli_usage("no command given (iour-restrict learn [options] -- COMMAND "
				 "[ARG]...)");
	if (geteuid() != 0) {
		cli_msg("learn needs root: it records the kernel's io_uring tracepoints through "
			"tracefs");
		return LEARN_NO_TRACING;
	}
	if (output && strcmp(output, "-") != 0) {
		out = fopen(output, "we"); /* not inherited by the command */
		if (!out)
			return cli_fail(-errno, "cannot write '%s'", output);
	} else {
		out = stdout;
	}

	/* From here on, every exit removes the instance. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_signal;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < 4; i++)
		sigaction(sigs[i], &sa, &old[i]);

	L = calloc(1, sizeof(*L));
	buf = malloc(1 << 16);
	if (!L || !buf) {
		cli_fail(-ENOMEM, "allocating");
		goto out;
	}
	t.l = L;
	mark_forced_async(&t);
	rc = setup_instance(buffer_kb);
	if (rc)
		goto out;
	rc = CLI_FAIL;
	{
		char p[PATH_MAX + 16];

		snprintf(p, sizeof(p), "%s/trace_pipe", inst);
		fd = open(p, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0) {
			cli_fail(-errno, "opening %s", p);
			goto out;
		}
	}
	if (pipe2(go, O_CLOEXEC) || pipe2(ex, O_CLOEXEC)) {
		cli_fail(-errno, "pipe");
		goto out;
	}
	child = fork();
	if (child < 0) {
		cli_fail(-errno, "fork");
		goto out;
	}
	if (child == 0) {
		char ch;
		int err;

		for (size_t i = 0; i < 4; i++)
			sigaction(sigs[i], &old[i], NULL);
		close(go[1]);
		close(ex[0]);
		/* wait until the instance records */
		if (read(go[0], &ch, 1) != 1)
			_exit(126);
		execvp(argv[optind], argv + optind);
		err = errno;
		if (write(ex[1], &err, sizeof(err)) < 0)
			_exit(126);
		_exit(err == ENOENT ? 127 : 126);
	}
	close(go[0]);
	close(ex[1]);
	go[0] = ex[1] = -1;
	if (set_add(&t.tasks, (uint64_t)child)) {
		cli_fail(-ENOMEM, "allocating");
		goto out;
	}
	if (inst_write("tracing_on", "1")) {
		cli_fail(-errno, "starting the trace");
		goto out;
	}
	if (write(go[1], "g", 1) != 1) {
		cli_fail(-errno, "starting the command");
		goto out;
	}
	close(go[1]);
	go[1] = -1;

	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };

		n = drain(&t, fd, buf, 1 << 16, &held);
		if (n < 0) {
			cli_fail((int)n, "reading the trace");
			goto out;
		}
		if (got_signal && !forwarded) {
			if (!signal_from_tty)
				kill(child, got_signal);
			forwarded = true;
		}
		if (waitpid(child, &st, WNOHANG) == child)
			break;
		if (n == 0)
			poll(&pfd, 1, 50);
	}
	child = -1;
	inst_write("tracing_on", "0");
	n = drain(&t, fd, buf, 1 << 16, &held);
	if (n < 0) {
		cli_fail((int)n, "reading the trace");
		goto out;
	}
	L->lost = lost_events();
	L->ntasks = t.tasks.n;
	{
		int err;

		if (read(ex[0], &err, sizeof(err)) == (ssize_t)sizeof(err)) {
			cli_fail(-err, "cannot execute '%s'", argv[optind]);
			rc = err == ENOENT ? 127 : 126;
			goto out;
		}
	}
	if (!quiet)
		summary(L);
	if (L->lost)
		cli_msg("%" PRIu64 " trace events were lost: the policy may miss what they "
			"recorded (raise --buffer-kb)",
			L->lost);
	if (write_policy(out, L, argv + optind, WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1))
		goto out;
	if (fflush(out) || ferror(out)) {
		cli_fail(-EIO, "writing the policy");
		goto out;
	}
	written = true;
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0) {
		rc = CLI_OK;
	} else {
		if (WIFEXITED(st))
			cli_msg("the command exited with %d; the policy shows what this run used",
				WEXITSTATUS(st));
		else
			cli_msg("the command was killed by signal %d; the policy shows what this "
				"run used",
				WTERMSIG(st));
		rc = LEARN_CMD_FAILED;
	}
out:
	if (child > 0) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
	}
	if (fd >= 0)
		close(fd);
	remove_instance();
	for (int i = 0; i < 2; i++) {
		if (go[i] >= 0)
			close(go[i]);
		if (ex[i] >= 0)
			close(ex[i]);
	}
	if (out && out != stdout) {
		fclose(out);
		if (!written)
			unlink(output); /* no half-written or empty policy */
	}
	free(t.tasks.v);
	free(t.rings.v);
	free(buf);
	free(L);
	for (size_t i = 0; i < 4; i++)
		sigaction(sigs[i], &old[i], NULL);
	return rc;
}
