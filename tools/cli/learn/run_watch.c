/* SPDX-License-Identifier: MIT */
/*
 * iour-restrict run --audit and --log-denials: the request watch
 * (watch.h; doc/cli.md, "run": audit mode and the denial log).
 *
 * The tracefs instance is learn's (learn_trace.c: it checks the formats
 * of the submit, register, create, fork and exit tracepoints); the watch
 * adds io_uring_req_failed for the denial log, turns off what it does not
 * read, and sets the instance's event filters so that the kernel keeps
 * only the events that matter: in audit mode the submissions the plan
 * would deny (by opcode and SQE flags), in the denial log the failures
 * with EACCES.  Everything else is discarded before it reaches the trace
 * buffer's reader, which keeps the cost low (bench/audit_fio.sh).
 *
 * The followed tasks are those this process forks and, through
 * sched_process_fork, all they start (processes and threads); SQPOLL
 * threads ("iou-sqp-TGID") submit for the process TGID.
 *
 * What the tracepoints cannot tell (doc/cli.md, "run"): requests whose
 * verdict depends on their arguments (argument filters, Linux 7.0+) are
 * reported as "unknown" in audit mode, as the submit tracepoint carries
 * no arguments; register calls without a ring (fd -1) fire no tracepoint;
 * Linux 5.10 has no io_uring_req_failed (no denial log there) and its
 * submit tracepoint no SQE flags (flags "unknown").
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/cli.h"
#include "learn.h"
#include "watch.h"

#define WBUF (1 << 18)
#define MAXKEYS 4096
#define NEWLINES_PER_INTERVAL 50 /* first-seen lines between two reports */

enum wkind { W_REQ, W_REG, W_SETUP };
enum wverdict { W_DENY, W_UNKNOWN };

struct wkey {
	uint64_t pid;
	char comm[16];
	uint8_t kind, verdict;
	uint16_t op;
	int32_t flags; /* SQE flags; -1: not reported by the kernel */
	int32_t err;   /* the denial's errno (positive) */
	uint64_t count, reported;
};

struct watch {
	struct watch_opts o;
	FILE *out;
	bool own_out;
	pthread_t thr;
	bool thr_started;
	atomic_bool stop;
	pthread_mutex_t mu;
	int fd; /* trace_pipe */
	char *buf;
	size_t held;
	pid_t self;
	struct set pids; /* followed tasks */
	struct wkey *keys;
	size_t nkeys;
	uint64_t dropped_keys, lost;
	unsigned newlines;
	bool have_failed; /* io_uring_req_failed exists */
	bool flags_known; /* the submit tracepoint has the SQE flags */
	bool fields;      /* the "fields" output format */
	char note[256 + PATH_MAX];
	struct watch_plan pl; /* the plan's restriction entries (audit) */
	bool async_forced[256];
};

/* ---- the plan, as the kernel checks it */

int watch_plan_read(struct watch_plan *w, const struct iour_plan *plan)
{
	int n = iour_plan__step_cnt(plan);
	bool restricts = false;

	for (int i = 0; i < n; i++) {
		struct iour_plan_step st = { .sz = sizeof(st) };
		uint8_t *arg;
		size_t len = 0;

		if (iour_plan__step(plan, (size_t)i, &st))
			continue;
		if (st.op == IOUR_STEP_COMPANION)
			w->companion = true;
		if (st.op == IOUR_STEP_BPF_FILTER && st.opcode < 256)
			w->filtered[st.opcode] = true;
		if (st.op == IOUR_STEP_BPF_FILTER || st.op == IOUR_STEP_RESTRICTIONS)
			restricts = true;
		if (st.op != IOUR_STEP_RESTRICTIONS)
			continue;
		if (iour_plan__step_arg(plan, (size_t)i, NULL, &len) != 0 && len == 0)
			return -EINVAL;
		arg = malloc(len ? len : 1);
		if (!arg)
			return -ENOMEM;
		if (iour_plan__step_arg(plan, (size_t)i, arg, &len)) {
			free(arg);
			return -EINVAL;
		}
		/* the entries end the argument (after the task header on fd -1) */
		w->classic = true;
		for (size_t off = len - (size_t)st.entries * 16; off + 16 <= len; off += 16) {
			struct iour_restriction e;

			memcpy(&e, arg + off, sizeof(e));
			if (e.opcode == IOUR_RESTRICTION_SQE_OP)
				w->op_ok[e.arg] = true;
			else if (e.opcode == IOUR_RESTRICTION_REGISTER_OP)
				w->reg_ok[e.arg] = true;
			else if (e.opcode == IOUR_RESTRICTION_SQE_FLAGS_ALLOWED)
				w->fl_allowed = e.arg;
			else if (e.opcode == IOUR_RESTRICTION_SQE_FLAGS_REQUIRED)
				w->fl_required = e.arg;
		}
		free(arg);
	}
	/* A task plan's seccomp step beside restrictions or filters only
	 * guards them (ring-less register calls, doc/kernel.md): the
	 * restrictions decide.  Alone, it is the companion: every ring's
	 * setup fails. */
	if (restricts)
		w->companion = false;
	return 0;
}

/* Whether the plan denies request @op with SQE flags @fl (-1: unknown):
 * 1 deny, 0 allow, 2 unknown (an argument filter decides). */
int watch_plan_denies(const struct watch_plan *w, unsigned op, int32_t fl)
{
	if (w->companion)
		return 1;
	if (w->classic) {
		if (!w->op_ok[op & 0xff])
			return 1;
		if (fl >= 0 && (((uint32_t)fl & w->fl_required) != w->fl_required ||
				((uint32_t)fl & ~(w->fl_allowed | w->fl_required))))
			return 1;
	}
	return w->filtered[op & 0xff] ? 2 : 0;
}

bool watch_plan_reg_denies(const struct watch_plan *w, uint64_t op)
{
	return w->companion || (w->classic && (op > 255 || !w->reg_ok[op]));
}

uint32_t watch_sqe_flags(const struct watch_plan *w, const bool *async_forced, unsigned op,
			 int64_t fl)
{
	uint32_t f = (uint32_t)(fl & 0x7f);

	/* ASYNC set by the opcode's own preparation cannot be told from the
	 * SQE's (doc/cli.md, "learn") */
	if (async_forced[op & 0xff] && !(w->fl_allowed & (1u << ASYNC_BIT)))
		f &= ~(1u << ASYNC_BIT);
	return f;
}

/* The submit filter: the opcodes the plan denies or leaves to an argument
 * filter, and the SQE flags it denies; all requests when it requires flags. */
static void submit_filter(const struct watch *w, char *f, size_t len)
{
	size_t used = 0;
	bool any = false;

	if (w->pl.companion || (w->pl.classic && w->pl.fl_required && w->flags_known)) {
		snprintf(f, len, "opcode >= 0");
		return;
	}
	if (!w->pl.classic) {
		f[0] = '\0';
		for (unsigned op = 0; op < 256 && used < len; op++)
			if (w->pl.filtered[op])
				used += (size_t)snprintf(f + used, len - used, "%sopcode == %u",
							 used ? " || " : "", op);
		if (!f[0])
			snprintf(f, len, "opcode > 255"); /* nothing to read */
		return;
	}
	used += (size_t)snprintf(f, len, "!(");
	for (unsigned op = 0; op < 256 && used < len; op++) {
		if (!w->pl.op_ok[op] || w->pl.filtered[op])
			continue;
		used += (size_t)snprintf(f + used, len - used, "%sopcode == %u", any ? " || " : "",
					 op);
		any = true;
	}
	if (!any)
		used += (size_t)snprintf(f + used, len - used, "opcode > 255");
	/* the low 7 bits of the request's flags are the SQE's; an ASYNC bit
	 * the kernel set itself is told apart when read (parse()) */
	if (w->flags_known && used < len)
		snprintf(f + used, len - used, ") || (flags & %u)", 0x7fu & ~w->pl.fl_allowed);
	else if (used < len)
		snprintf(f + used, len - used, ")");
}

const char *watch_submit_event(void)
{
	return strstr(learn_keys.submit, "submit_req") ? "io_uring/io_uring_submit_req" :
							 "io_uring/io_uring_submit_sqe";
}

/* ---- reading the events */

/* The value after @key in event text @s: "key=0x1f (31)", "key=(1)",
 * "key='-'(45)" (a u8 printed as a character), "key=-13", "key 22,".
 * The parenthesised decimal wins when there is one.  0 or -1. */
int watch_val(const char *s, const char *key, int64_t *out)
{
	size_t nl = strlen(key);
	const char *p = s;

	while ((p = strstr(p, key))) {
		if (p == s || p[-1] == ' ') {
			const char *v = p + nl, *sp;
			char *end;

			if (v[0] == '\'' && v[1] && v[2] == '\'')
				v += 3;
			if (*v == '(')
				v++;
			else if ((sp = strchr(v, ' ')) && sp[1] == '(')
				v = sp + 2;
			*out = strtoll(v, &end, 0);
			if (end == v)
				return -1;
			if (*out == INT64_MAX) /* a pointer or a large hex value */
				*out = (int64_t)strtoull(v, NULL, 0);
			return 0;
		}
		p += nl;
	}
	return -1;
}

/* An opcode printed as its name after @key ("opcode READ,"). */
int watch_op_name(const char *s, const char *key, int64_t *out)
{
	const char *p = strstr(s, key);
	char name[32];
	size_t n;
	int op;

	if (!p)
		return -1;
	n = strcspn(p + strlen(key), ", ");
	if (!n || n >= sizeof(name))
		return -1;
	memcpy(name, p + strlen(key), n);
	name[n] = '\0';
	op = iour_opcode_from_name(name);
	if (op < 0)
		return -1;
	*out = op;
	return 0;
}

/* "   COMM-PID   [CPU] ...": the pid and comm of an event line. */
int watch_line_pid(const char *l, uint64_t *pid, char *comm)
{
	for (const char *d = strchr(l, '-'); d; d = strchr(d + 1, '-')) {
		const char *q = d + 1, *c = l;
		char *end;
		unsigned long v;

		if (*q < '0' || *q > '9')
			continue;
		v = strtoul(q, &end, 10);
		for (q = end; *q == ' '; q++)
			;
		if (*q != '[' && *q != '(')
			continue;
		*pid = v;
		while (*c == ' ' && c < d)
			c++;
		snprintf(comm, 16, "%.*s", (int)(d - c), c);
		return 0;
	}
	return -1;
}

/* Whether the event of task @pid (@comm) is the program's. */
static bool wfollowed(struct watch *w, uint64_t pid, const char *comm)
{
	char *end;
	uint64_t owner;

	if (set_has(&w->pids, pid))
		return true;
	/* an SQPOLL thread submits for its process */
	if (strncmp(comm, "iou-sqp-", 8))
		return false;
	owner = strtoull(comm + 8, &end, 10);
	return end != comm + 8 && set_has(&w->pids, owner);
}

const char *watch_flags_str(int32_t fl, char *buf, size_t len)
{
	size_t used = 0;

	if (fl < 0)
		return "unknown";
	if (!fl)
		return "none";
	buf[0] = '\0';
	for (unsigned i = 0; i < 7; i++) {
		const char *n = iour_sqe_flag_name(1u << i);

		if (!(fl & (1 << i)))
			continue;
		if (n)
			used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? "|" : "",
						 n);
		else
			used += (size_t)snprintf(buf + used, len - used, "%s0x%x", used ? "|" : "",
						 1u << i);
		if (used >= len)
			break;
	}
	return buf;
}

static void key_line(struct watch *w, const struct wkey *k, const char *when)
{
	char nb[32], fb[96];
	const char *what = "request", *name;

	if (k->kind == W_REQ) {
		name = iour_opcode_name(k->op);
	} else if (k->kind == W_REG) {
		what = "register";
		name = iour_register_op_name(k->op);
	} else {
		what = "setup";
		name = k->op == 2 ? "SQPOLL" : "R_DISABLED";
	}
	if (!name) {
		snprintf(nb, sizeof(nb), "%u", k->op);
		name = nb;
	}
	fprintf(w->out, CLI_PROG " %s%s%s: pid %llu comm ",
		w->o.audit ? "audit (NOT enforced)" : "denial", w->o.label ? " " : "",
		w->o.label ? w->o.label : "", (unsigned long long)k->pid);
	cli_put_escaped(w->out, k->comm);
	fprintf(w->out, " %s %s flags %s: ", what, name,
		k->kind == W_REQ ? watch_flags_str(k->flags, fb, sizeof(fb)) : "none");
	if (w->o.audit)
		fprintf(w->out, "%s",
			k->verdict == W_DENY ? "would be denied" :
					       "unknown (an argument filter decides; the "
					       "tracepoint carries no arguments)");
	else
		fprintf(w->out, "%s", k->err == EACCES ? "EACCES" : strerror(k->err));
	fprintf(w->out, " (count %llu, %s)\n", (unsigned long long)k->count, when);
}

static void add_key(struct watch *w, const struct wkey *k)
{
	struct wkey *e = NULL;

	for (size_t i = w->nkeys; i-- > 0;) {
		struct wkey *x = &w->keys[i];

		if (x->pid == k->pid && x->kind == k->kind && x->op == k->op &&
		    x->flags == k->flags && x->err == k->err && !strcmp(x->comm, k->comm)) {
			e = x;
			break;
		}
	}
	if (!e) {
		if (w->nkeys == MAXKEYS) {
			w->dropped_keys++;
			return;
		}
		e = &w->keys[w->nkeys++];
		*e = *k;
		e->count = 0;
	}
	e->count++;
	/* the first of each: at once, within the rate limit */
	if (e->count == 1 && w->newlines < NEWLINES_PER_INTERVAL) {
		w->newlines++;
		e->reported = 1;
		key_line(w, e, "first seen");
	}
}

static void parse(struct watch *w, const char *l)
{
	const struct learn_keys *K = &learn_keys;
	struct wkey k = { .flags = -1 };
	uint64_t pid;
	int64_t a, b, c;
	const char *ev;

	if (l[0] == '#' || watch_line_pid(l, &pid, k.comm))
		return;
	if ((ev = strstr(l, " sched_process_fork: "))) {
		if (watch_val(ev, K->ppid, &a) || watch_val(ev, K->cpid, &b))
			return;
		if ((uint64_t)a == (uint64_t)w->self || set_has(&w->pids, (uint64_t)a))
			set_add(&w->pids, (uint64_t)b);
		return;
	}
	if ((ev = strstr(l, " sched_process_exit: "))) {
		if (!watch_val(ev, K->epid, &a))
			set_del(&w->pids, (uint64_t)a);
		return;
	}
	if (!wfollowed(w, pid, k.comm))
		return;
	k.pid = pid;
	if ((ev = strstr(l, " io_uring_req_failed: "))) {
		if ((w->fields ? watch_val(ev, "opcode=", &a) : watch_op_name(ev, "opcode ", &a)) ||
		    watch_val(ev, w->fields ? "flags=" : "flags ", &b) ||
		    watch_val(ev, "error=", &c))
			return;
		k.kind = W_REQ;
		k.op = (uint16_t)(a & 0xff);
		k.flags = (int32_t)(b & 0x7f);
		k.err = (int32_t)-c;
		if (k.err != EACCES)
			return;
		add_key(w, &k);
		return;
	}
	if ((ev = strstr(l, K->submit))) {
		int v;

		if (!w->o.audit ||
		    (K->op_name ? watch_op_name(ev, K->op, &a) : watch_val(ev, K->op, &a)))
			return;
		k.kind = W_REQ;
		k.op = (uint16_t)(a & 0xff);
		if (K->flags && !watch_val(ev, K->flags, &b)) {
			k.flags = (int32_t)watch_sqe_flags(&w->pl, w->async_forced, k.op, b);
		}
		v = watch_plan_denies(&w->pl, k.op, k.flags);
		if (!v)
			return;
		k.verdict = v == 1 ? W_DENY : W_UNKNOWN;
		add_key(w, &k);
		return;
	}
	if ((ev = strstr(l, " io_uring_register: "))) {
		if (watch_val(ev, K->rop, &a) || watch_val(ev, K->ret, &b))
			return;
		k.kind = W_REG;
		k.op = (uint16_t)a;
		if (w->o.audit) {
			if (!watch_plan_reg_denies(&w->pl, (uint64_t)a))
				return;
		} else if (b != -EACCES) {
			return;
		} else {
			k.err = EACCES;
		}
		add_key(w, &k);
		return;
	}
	if ((ev = strstr(l, " io_uring_create: "))) {
		/* the broker refuses SQPOLL and R_DISABLED rings (doc/cli.md) */
		if (!w->o.audit || !w->o.broker || watch_val(ev, K->cflags, &a))
			return;
		k.kind = W_SETUP;
		if (a & 2) {
			k.op = 2;
			add_key(w, &k);
		}
		if (a & 0x40) {
			k.op = 0x40;
			add_key(w, &k);
		}
	}
}

static void drain(struct watch *w)
{
	for (;;) {
		ssize_t n = read(w->fd, w->buf + w->held, WBUF - 1 - w->held);
		char *l, *nl;

		if (n <= 0)
			return;
		w->held += (size_t)n;
		w->buf[w->held] = '\0';
		pthread_mutex_lock(&w->mu);
		for (l = w->buf; (nl = strchr(l, '\n')); l = nl + 1) {
			*nl = '\0';
			parse(w, l);
		}
		pthread_mutex_unlock(&w->mu);
		w->held = strlen(l);
		memmove(w->buf, l, w->held + 1);
		if (w->held == WBUF - 1)
			w->held = 0;
	}
}

/* One line for each key with requests since the last report (@all: every
 * key), and what was lost. */
static void report(struct watch *w, bool all)
{
	uint64_t lost;

	pthread_mutex_lock(&w->mu);
	for (size_t i = 0; i < w->nkeys; i++) {
		struct wkey *k = &w->keys[i];

		if (k->count == k->reported && !all)
			continue;
		key_line(w, k, all ? "total" : "so far");
		k->reported = k->count;
	}
	w->newlines = 0;
	pthread_mutex_unlock(&w->mu);
	lost = learn_lost_events();
	if (lost != w->lost || w->dropped_keys) {
		fprintf(w->out,
			CLI_PROG " %s: %llu trace events lost (the counts are low), %llu "
				 "lines not kept\n",
			w->o.audit ? "audit" : "denial", (unsigned long long)lost,
			(unsigned long long)w->dropped_keys);
		w->lost = lost;
	}
	fflush(w->out);
}

static void *watch_thread(void *arg)
{
	struct watch *w = arg;
	struct timespec last, now;

	clock_gettime(CLOCK_MONOTONIC, &last);
	while (!atomic_load(&w->stop)) {
		/* a sleep rather than poll(): see cmd_learn.c's pump() */
		struct timespec ts = { 0, 200 * 1000000L };

		nanosleep(&ts, NULL);
		drain(w);
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec - last.tv_sec >= (time_t)w->o.interval) {
			report(w, false);
			last = now;
		}
	}
	return NULL;
}

static int enable(const char *ev, const char *on)
{
	char p[128];

	snprintf(p, sizeof(p), "events/%s/enable", ev);
	return learn_inst_write(p, on);
}

static int filter(const char *ev, const char *f)
{
	char p[128];

	snprintf(p, sizeof(p), "events/%s/filter", ev);
	return learn_inst_write(p, f);
}

int watch_start(const struct watch_opts *o, struct watch **out)
{
	struct watch *w = calloc(1, sizeof(*w));
	char f[4096], p[PATH_MAX + 32];
	int rc, r;

	if (!w || !(w->buf = malloc(WBUF)) || !(w->keys = calloc(MAXKEYS, sizeof(*w->keys)))) {
		if (w)
			free(w->buf);
		free(w);
		return cli_fail(-ENOMEM, "starting the watch");
	}
	w->o = *o;
	if (!w->o.interval)
		w->o.interval = 10;
	w->fd = -1;
	w->self = getpid();
	pthread_mutex_init(&w->mu, NULL);
	w->out = stderr;
	if (o->log_path) {
		w->out = fopen(o->log_path, "ae");
		if (!w->out) {
			rc = cli_fail(-errno, "cannot open '%s'", o->log_path);
			w->out = stderr;
			goto fail;
		}
		setvbuf(w->out, NULL, _IOLBF, 0);
		w->own_out = true;
	}
	if (o->audit && o->plan && (r = watch_plan_read(&w->pl, o->plan))) {
		rc = cli_fail(r, "reading the plan's restrictions");
		goto fail;
	}
	{
		/* opcodes whose preparation sets the ASYNC bit (learn_parse.c) */
		struct learned L;
		struct tracer t = { .l = &L };

		tracer_mark_forced_async(&t);
		memcpy(w->async_forced, t.async_forced, sizeof(w->async_forced));
	}
	/* instances of runs and learners killed by SIGKILL */
	learn_clean_stale();
	rc = learn_setup_instance(4096);
	if (rc) {
		cli_msg("%s reads the kernel's io_uring tracepoints: it needs root and tracefs; "
			"not running the command",
			o->audit ? "--audit" : "--log-denials");
		/* run's exit code: the watch could not be set up */
		rc = CLI_FAIL;
		goto fail;
	}
	w->fields = learn_keys.ptr_base == 0;
	w->flags_known = learn_keys.flags != NULL;
	w->have_failed = enable("io_uring/io_uring_req_failed", o->denials ? "1" : "0") == 0;
	if (o->audit) {
		submit_filter(w, f, sizeof(f));
		r = filter(watch_submit_event(), f);
		if (r)
			cli_msg("the tracefs filter of the submit tracepoint was refused (%s): "
				"every request is read",
				strerror(-r));
		if (!o->broker)
			enable("io_uring/io_uring_create", "0");
	} else {
		/* the denial log reads failures only */
		enable(watch_submit_event(), "0");
		enable("io_uring/io_uring_create", "0");
		filter("io_uring/io_uring_register", "ret == -13");
		if (w->have_failed)
			filter("io_uring/io_uring_req_failed", "error == -13");
	}
	snprintf(w->note, sizeof(w->note), "%s",
		 o->audit ?
			 (w->flags_known ? "audit: NOT enforced" :
					   "audit: NOT enforced (SQE flags unknown: this kernel's "
					   "submit tracepoint lacks them)") :
		 w->have_failed ?
			 "denials logged (requests: io_uring_req_failed; register calls on a "
			 "ring: io_uring_register; ring-less register calls: no signal)" :
			 "denials NOT logged: this kernel has no io_uring_req_failed tracepoint "
			 "(register calls on a ring: io_uring_register)");
	if (o->denials && w->have_failed && o->log_path) {
		size_t n = strlen(w->note);

		snprintf(w->note + n, sizeof(w->note) - n, " to %s", o->log_path);
	}
	snprintf(p, sizeof(p), "%s/trace_pipe", learn_inst);
	w->fd = open(p, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (w->fd < 0) {
		rc = cli_fail(-errno, "opening %s", p);
		goto fail;
	}
	if (pthread_create(&w->thr, NULL, watch_thread, w)) {
		rc = cli_fail(-EAGAIN, "starting the watch's thread");
		goto fail;
	}
	w->thr_started = true;
	/* on after the thread exists: its own creation is not followed */
	if ((r = learn_inst_write("tracing_on", "1"))) {
		rc = cli_fail(r, "turning tracing on");
		goto fail;
	}
	*out = w;
	return 0;
fail:
	watch_stop(w);
	watch_free(w);
	return rc ? rc : CLI_FAIL;
}

void watch_follow(struct watch *w, pid_t pid)
{
	pthread_mutex_lock(&w->mu);
	set_add(&w->pids, (uint64_t)pid);
	pthread_mutex_unlock(&w->mu);
}

const char *watch_note(const struct watch *w)
{
	return w->note;
}

void watch_stop(struct watch *w)
{
	if (!w)
		return;
	if (w->thr_started) {
		atomic_store(&w->stop, true);
		pthread_join(w->thr, NULL);
		w->thr_started = false;
		drain(w);
		report(w, true);
	}
	if (w->fd >= 0) {
		close(w->fd);
		w->fd = -1;
	}
	learn_remove_instance();
}

/* ---- the policy delta */

static const char *const delta_attrs[] = { "defaultAction",    "target",       "compat",
					   "noNewPrivs",       "threads",      "companion",
					   "noFilterFallback", "addr4Literal", "groupsAsOf" };

int watch_write_delta(struct watch *w, const char *policy_path, const char *out_path)
{
	json_error_t jerr;
	json_t *orig = json_load_file(policy_path, 0, &jerr), *d, *ops, *regs, *allowed;
	bool op[256] = { false }, reg[256] = { false }, classic, lacks_required = false;
	uint32_t fl = 0;
	char tmp[PATH_MAX];
	int rc = CLI_OK;
	FILE *f;

	if (!orig)
		return cli_fail(-EINVAL, "reading '%s' again: %s", policy_path, jerr.text);
	for (size_t i = 0; i < w->nkeys; i++) {
		const struct wkey *k = &w->keys[i];

		if (k->verdict != W_DENY)
			continue;
		if (k->kind == W_REQ) {
			/* denied for its flags only: the flags are the delta */
			if (!w->pl.classic || !w->pl.op_ok[k->op & 0xff])
				op[k->op & 0xff] = true;
			if (k->flags > 0)
				fl |= (uint32_t)k->flags;
			if (k->flags >= 0 &&
			    ((uint32_t)k->flags & w->pl.fl_required) != w->pl.fl_required)
				lacks_required = true;
		} else if (k->kind == W_REG && k->op < 256) {
			reg[k->op] = true;
		}
	}
	classic = json_object_get(orig, "requestOps") || json_object_get(orig, "registerOps") ||
		  json_object_get(orig, "sqeFlags");
	d = json_object();
	json_object_set_new(
		d, "comment",
		json_string("what `iour-restrict run --audit` saw the program do that "
			    "the policy would deny; review, then merge with the policy"));
	for (size_t i = 0; i < sizeof(delta_attrs) / sizeof(delta_attrs[0]); i++) {
		json_t *v = json_object_get(orig, delta_attrs[i]);

		if (v)
			json_object_set(d, delta_attrs[i], v);
	}
	ops = json_array();
	regs = json_array();
	for (unsigned i = 0; i < 256; i++) {
		if (op[i] && iour_opcode_name(i))
			json_array_append_new(ops, json_string(iour_opcode_name(i)));
		if (reg[i] && iour_register_op_name(i))
			json_array_append_new(regs, json_string(iour_register_op_name(i)));
	}
	if (classic) {
		json_t *sf = json_object(), *osf = json_object_get(orig, "sqeFlags");
		json_t *oreq = osf ? json_object_get(osf, "required") : NULL;

		json_object_set_new(d, "requestOps", ops);
		json_object_set_new(d, "registerOps", regs);
		allowed = json_array();
		for (unsigned i = 0; i < 7; i++)
			if ((fl & (1u << i)) && iour_sqe_flag_name(1u << i))
				json_array_append_new(allowed,
						      json_string(iour_sqe_flag_name(1u << i)));
		json_object_set_new(sf, "allowed", allowed);
		/* merge intersects the required flags: [] when a request
		 * lacked one */
		json_object_set_new(sf, "required",
				    !lacks_required && oreq ? json_deep_copy(oreq) : json_array());
		json_object_set_new(d, "sqeFlags", sf);
	} else {
		/* no classic part: entries that allow the opcodes outright */
		json_t *ents = json_array(), *e = json_object();

		json_object_set_new(e, "names", ops);
		json_object_set_new(e, "action", json_string("allow"));
		if (json_array_size(ops))
			json_array_append_new(ents, e);
		else
			json_decref(e);
		json_object_set_new(d, "entries", ents);
		json_decref(regs);
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp%d", out_path, (int)getpid());
	f = fopen(tmp, "wxe");
	if (!f || json_dumpf(d, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER) || fputc('\n', f) == EOF ||
	    fclose(f)) {
		rc = cli_fail(-errno, "writing '%s'", out_path);
		if (f)
			unlink(tmp);
	} else if (rename(tmp, out_path)) {
		rc = cli_fail(-errno, "renaming '%s' to '%s'", tmp, out_path);
		unlink(tmp);
	}
	json_decref(d);
	json_decref(orig);
	return rc;
}

void watch_free(struct watch *w)
{
	if (!w)
		return;
	if (w->own_out)
		fclose(w->out);
	free(w->pids.v);
	free(w->keys);
	free(w->buf);
	pthread_mutex_destroy(&w->mu);
	free(w);
}
