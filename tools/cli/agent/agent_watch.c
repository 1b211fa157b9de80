/* SPDX-License-Identifier: MIT */
/*
 * iour-restrict agent: audit mode and the denial log (doc/agent.md,
 * "Audit mode and the denial log").
 *
 * One tracefs instance (learn_trace.c sets it up) for the agent, made when
 * the first container in audit mode arrives or at the start with
 * --log-denials, removed when neither is needed.  It is read from the
 * agent's loop (agent_watch_tick(): every 200 ms at most), not a thread,
 * so that the containers and the log are the loop's alone.
 *
 * Attribution is by ring: the io_uring tracepoints carry the ring's ctx.
 * A ring's first event is attributed to a container by its task: a task
 * the container's io_uring_setup came from (the broker's event), or else a
 * task in the container's PID namespace (/proc/PID/ns/pid, while the task
 * lives); from then on every event of that ctx is the container's.
 * Events of a ring the agent's workers created (io_uring_create from a
 * task named as the agent) that cannot be attributed within two seconds
 * are logged as such ("unattributed"); the rings of other processes of the
 * host are not the agent's business and are ignored.
 *
 * What each container's events mean follows run's watch (run_watch.c,
 * watch.h): in audit mode, the requests and register calls the policy's
 * restriction entries would deny; in enforce mode with --log-denials, the
 * requests failed with EACCES at submission (io_uring_req_failed) and the
 * register calls failed with EACCES (io_uring_register).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent.h"
#include "core/cli.h"
#include "learn/learn.h"
#include "learn/watch.h"

#define AW_BUF (1 << 18)
#define AW_KEYS 512          /* lines kept per container */
#define AW_PENDING 1024      /* events of rings not attributed yet */
#define AW_PENDING_MS 2000   /* how long they wait for their container */
#define AW_MADE 16384        /* rings made by the agent's workers, remembered */
#define AW_TICK_MS 200       /* between two reads of the trace */
#define AW_NEW_PER_REPORT 50 /* first-seen lines per container between reports */

enum { AW_SUBMIT, AW_FAILED, AW_REG, AW_CREATE };
enum { K_REQ, K_REG };

struct aw_key {
	uint64_t task;
	char comm[16];
	uint8_t kind, verdict; /* verdict: 1 would be denied, 2 unknown */
	uint16_t op;
	int32_t flags; /* -1: not reported by the kernel */
	int32_t err;   /* enforce: the errno */
	uint64_t count, reported;
};

/* A container's part (struct container's watched). */
struct agent_watched {
	struct watch_plan plan; /* audit: the policy's entries */
	struct aw_key *keys;
	size_t nkeys;
	uint64_t dropped;
	unsigned newlines;
};

struct aw_ev {
	uint8_t type;
	uint64_t ctx, pid;
	char comm[16];
	uint16_t op;
	int64_t flags; /* -1: unknown */
	int64_t err;   /* error of req_failed, ret of register */
	long long ms;  /* when it was read */
};

struct aw_ring {
	uint64_t ctx;
	struct container *c;
	uint64_t creator;
};

/* The ring @ctx the agent's worker @pid created, or NULL. */
static struct aw_ring *made_find(struct aw_ring *v, size_t n, uint64_t ctx)
{
	for (size_t i = n; i-- > 0;)
		if (v[i].ctx == ctx)
			return &v[i];
	return NULL;
}

static int ring_push(struct aw_ring **v, size_t *n, size_t *cap, struct aw_ring r)
{
	if (*n == *cap) {
		size_t nc = *cap ? *cap * 2 : 64;
		struct aw_ring *nv = realloc(*v, nc * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		*v = nv;
		*cap = nc;
	}
	(*v)[(*n)++] = r;
	return 0;
}

struct agent_watch {
	int fd;
	char *buf;
	size_t held;
	bool fields, flags_known;
	bool have_failed;
	bool submit_on; /* the submit tracepoint is read (an audit container) */
	struct aw_ring *rings;
	size_t nrings, caprings;
	/* the rings the agent's workers created, and the worker of each:
	 * its own register calls (restrictions, enable) are not the
	 * container's */
	struct aw_ring *made;
	size_t nmade, capmade;
	struct set foreign; /* rings of the host's other processes */
	struct aw_ev *pending;
	size_t npending;
	uint64_t unattributed, lost;
	long long last_tick, last_report;
	bool async_forced[256];
	char comm[16]; /* the agent's (and its workers') */
};

static bool needed(const struct agent *a)
{
	if (a->log_denials)
		return true;
	for (const struct container *c = a->containers; c; c = c->next)
		if (c->audit && c->watched)
			return true;
	return false;
}

static int ev_write(const char *ev, const char *what, const char *val)
{
	char p[128];

	snprintf(p, sizeof(p), "events/%s/%s", ev, what);
	return learn_inst_write(p, val);
}

/* Which events are read and which the kernel keeps: the submit tracepoint
 * when a container audits; else failures only. */
static void aw_filters(struct agent *a)
{
	struct agent_watch *w = a->watch;
	bool audit = false;

	for (const struct container *c = a->containers; c; c = c->next)
		if (c->audit && c->watched)
			audit = true;
	if (audit != w->submit_on) {
		ev_write(watch_submit_event(), "enable", audit ? "1" : "0");
		ev_write("io_uring/io_uring_register", "filter", audit ? "0" : "ret == -13");
		w->submit_on = audit;
	}
}

static void ev_ctx(const char *ev, const char *key, uint64_t *out)
{
	const char *p = strstr(ev, key);

	*out = p ? strtoull(p + strlen(key), NULL, learn_keys.ptr_base) : 0;
}

static int parse_ev(struct agent_watch *w, const char *l, struct aw_ev *e)
{
	const struct learn_keys *K = &learn_keys;
	const char *ev;
	int64_t a, b, c;

	memset(e, 0, sizeof(*e));
	e->flags = -1;
	if (l[0] == '#' || watch_line_pid(l, &e->pid, e->comm))
		return -1;
	if ((ev = strstr(l, " io_uring_req_failed: "))) {
		if ((w->fields ? watch_val(ev, "opcode=", &a) : watch_op_name(ev, "opcode ", &a)) ||
		    watch_val(ev, w->fields ? "flags=" : "flags ", &b) ||
		    watch_val(ev, "error=", &c))
			return -1;
		e->type = AW_FAILED;
		e->op = (uint16_t)(a & 0xff);
		e->flags = b & 0x7f;
		e->err = c;
		ev_ctx(ev, K->ctx, &e->ctx);
		return 0;
	}
	if ((ev = strstr(l, K->submit))) {
		if (K->op_name ? watch_op_name(ev, K->op, &a) : watch_val(ev, K->op, &a))
			return -1;
		e->type = AW_SUBMIT;
		e->op = (uint16_t)(a & 0xff);
		if (K->flags && !watch_val(ev, K->flags, &b))
			e->flags = b;
		ev_ctx(ev, K->ctx, &e->ctx);
		return 0;
	}
	if ((ev = strstr(l, " io_uring_register: "))) {
		if (watch_val(ev, K->rop, &a) || watch_val(ev, K->ret, &b))
			return -1;
		e->type = AW_REG;
		e->op = (uint16_t)a;
		e->err = b;
		ev_ctx(ev, K->ctx, &e->ctx);
		return 0;
	}
	if ((ev = strstr(l, " io_uring_create: "))) {
		e->type = AW_CREATE;
		ev_ctx(ev, K->cctx, &e->ctx);
		return 0;
	}
	return -1;
}

static ino_t pidns_of(uint64_t pid)
{
	char p[64];
	struct stat st;

	snprintf(p, sizeof(p), "/proc/%llu/ns/pid", (unsigned long long)pid);
	return stat(p, &st) ? 0 : st.st_ino;
}

static struct container *ring_find(struct agent_watch *w, uint64_t ctx)
{
	for (size_t i = 0; i < w->nrings; i++)
		if (w->rings[i].ctx == ctx)
			return w->rings[i].c;
	return NULL;
}

static void ring_add(struct agent_watch *w, uint64_t ctx, struct container *c)
{
	(void)ring_push(&w->rings, &w->nrings, &w->caprings, (struct aw_ring){ ctx, c, 0 });
}

/* The container of event @e, or NULL. */
static struct container *attribute(struct agent *a, const struct aw_ev *e)
{
	struct agent_watch *w = a->watch;
	struct container *c = ring_find(w, e->ctx);
	uint64_t task = e->pid;
	ino_t ns = 0;

	if (c)
		return c;
	/* an SQPOLL thread submits for its process */
	if (!strncmp(e->comm, "iou-sqp-", 8))
		task = strtoull(e->comm + 8, NULL, 10);
	/* every container, watched or not: an unwatched one's rings are
	 * its own, not unattributed */
	for (c = a->containers; c; c = c->next)
		if (set_has(&c->tasks, task))
			break;
	if (!c && (ns = pidns_of(task)))
		for (c = a->containers; c; c = c->next)
			if (c->pidns == ns)
				break;
	if (c)
		ring_add(w, e->ctx, c);
	return c;
}

static const char *errno_str(int err)
{
	const char *n = err > 0 ? strerrorname_np(err) : NULL;

	return n ? n : "unknown";
}

static void key_line(struct agent *a, struct container *c, const struct aw_key *k, const char *when)
{
	struct agent_line l = agent_line_container(a, c->audit ? "audit" : "denial", c);
	char nb[32], fb[96];
	const char *name =
		k->kind == K_REQ ? iour_opcode_name(k->op) : iour_register_op_name(k->op);

	if (!name) {
		snprintf(nb, sizeof(nb), "%u", k->op);
		name = nb;
	}
	agent_line_u64(&l, "task", k->task);
	agent_line_str(&l, "comm", k->comm);
	agent_line_raw(&l, k->kind == K_REQ ? "request" : "register", name);
	agent_line_raw(&l, "flags",
		       k->kind == K_REQ ? watch_flags_str(k->flags, fb, sizeof(fb)) : "none");
	if (c->audit)
		agent_line_raw(&l, "verdict", k->verdict == 1 ? "would_deny" : "unknown");
	else
		agent_line_raw(&l, "error", errno_str(k->err));
	agent_line_u64(&l, "count", k->count);
	agent_line_raw(&l, "when", when);
	if (c->audit)
		agent_line_raw(&l, "enforced", "no");
	agent_line_end(&l);
}

static void add_key(struct agent *a, struct container *c, const struct aw_key *k)
{
	struct agent_watched *cw = c->watched;
	struct aw_key *e = NULL;

	if (!c->audit)
		c->denials++;
	for (size_t i = cw->nkeys; i-- > 0;) {
		struct aw_key *x = &cw->keys[i];

		if (x->task == k->task && x->kind == k->kind && x->op == k->op &&
		    x->flags == k->flags && x->err == k->err && !strcmp(x->comm, k->comm)) {
			e = x;
			break;
		}
	}
	if (!e) {
		if (cw->nkeys == AW_KEYS) {
			cw->dropped++;
			return;
		}
		e = &cw->keys[cw->nkeys++];
		*e = *k;
		e->count = 0;
	}
	e->count++;
	/* the first of each at once, within the rate limit */
	if (e->count == 1 && cw->newlines < AW_NEW_PER_REPORT) {
		cw->newlines++;
		e->reported = 1;
		key_line(a, c, e, "first");
	}
}

/* Event @e of container @c: what its mode reports. */
static void account(struct agent *a, struct container *c, const struct aw_ev *e)
{
	struct agent_watched *cw = c->watched;
	struct aw_key k = { .task = e->pid, .flags = -1 };
	int v;

	if (!cw)
		return;
	memcpy(k.comm, e->comm, sizeof(k.comm));
	switch (e->type) {
	case AW_SUBMIT:
		if (!c->audit)
			return;
		k.kind = K_REQ;
		k.op = e->op;
		if (e->flags >= 0)
			k.flags = (int32_t)watch_sqe_flags(&cw->plan, a->watch->async_forced, e->op,
							   e->flags);
		v = watch_plan_denies(&cw->plan, k.op, k.flags);
		if (!v)
			return;
		k.verdict = (uint8_t)v;
		break;
	case AW_FAILED:
		if (c->audit || e->err != -EACCES)
			return;
		k.kind = K_REQ;
		k.op = e->op;
		k.flags = (int32_t)e->flags;
		k.err = EACCES;
		break;
	case AW_REG:
		k.kind = K_REG;
		k.op = e->op;
		if (c->audit) {
			if (!watch_plan_reg_denies(&cw->plan, e->op))
				return;
			k.verdict = 1;
		} else {
			if (e->err != -EACCES)
				return;
			k.err = EACCES;
		}
		break;
	default:
		return;
	}
	add_key(a, c, &k);
}

static void pend(struct agent_watch *w, const struct aw_ev *e)
{
	if (w->npending == AW_PENDING) {
		w->unattributed++;
		return;
	}
	w->pending[w->npending++] = *e;
}

static void handle(struct agent *a, struct aw_ev *e)
{
	struct agent_watch *w = a->watch;
	struct aw_ring *m = made_find(w->made, w->nmade, e->ctx);
	struct container *c;

	if (e->type == AW_CREATE) {
		/* the broker's workers carry the agent's name; a ring freed
		 * and another made at its address: the new one counts */
		if (strcmp(e->comm, w->comm))
			return;
		if (m) {
			m->creator = e->pid;
			return;
		}
		if (w->nmade == AW_MADE) {
			/* the oldest half goes: their events wait no more */
			memmove(w->made, w->made + AW_MADE / 2,
				(AW_MADE - AW_MADE / 2) * sizeof(*w->made));
			w->nmade -= AW_MADE / 2;
		}
		(void)ring_push(&w->made, &w->nmade, &w->capmade,
				(struct aw_ring){ e->ctx, NULL, e->pid });
		return;
	}
	/* the worker building the ring: its own calls */
	if (m && m->creator == e->pid)
		return;
	if (!m && set_has(&w->foreign, e->ctx))
		return;
	c = attribute(a, e);
	if (c) {
		account(a, c, e);
		return;
	}
	if (m) {
		pend(w, e);
		return;
	}
	/* not the agent's ring nor a container's task: looked up once */
	if (w->foreign.n >= AW_MADE)
		w->foreign.n = 0;
	set_add(&w->foreign, e->ctx);
}

/* The pending events: attributed now, or past their time (counted). */
static void pending_retry(struct agent *a, long long now)
{
	struct agent_watch *w = a->watch;
	size_t j = 0;

	for (size_t i = 0; i < w->npending; i++) {
		struct aw_ev *e = &w->pending[i];
		struct container *c = attribute(a, e);

		if (c)
			account(a, c, e);
		else if (now - e->ms > AW_PENDING_MS)
			w->unattributed++;
		else
			w->pending[j++] = *e;
	}
	w->npending = j;
}

static void drain(struct agent *a)
{
	struct agent_watch *w = a->watch;
	long long now = agent_now_ms();

	for (;;) {
		ssize_t n = read(w->fd, w->buf + w->held, AW_BUF - 1 - w->held);
		char *l, *nl;

		if (n <= 0)
			break;
		w->held += (size_t)n;
		w->buf[w->held] = '\0';
		for (l = w->buf; (nl = strchr(l, '\n')); l = nl + 1) {
			struct aw_ev e;

			*nl = '\0';
			if (parse_ev(w, l, &e))
				continue;
			e.ms = now;
			handle(a, &e);
		}
		w->held = strlen(l);
		memmove(w->buf, l, w->held + 1);
		if (w->held == AW_BUF - 1)
			w->held = 0;
	}
	pending_retry(a, now);
}

/* Lines of container @c with events since its last report (@all: all). */
static void report_container(struct agent *a, struct container *c, bool all)
{
	struct agent_watched *cw = c->watched;

	for (size_t i = 0; i < cw->nkeys; i++) {
		struct aw_key *k = &cw->keys[i];

		if (k->count == k->reported && !all)
			continue;
		key_line(a, c, k, all ? "total" : "so_far");
		k->reported = k->count;
	}
	cw->newlines = 0;
	if (cw->dropped) {
		struct agent_line l = agent_line_container(a, c->audit ? "audit" : "denial", c);

		agent_line_u64(&l, "lines_not_kept", cw->dropped);
		agent_line_end(&l);
	}
}

static void report_watch(struct agent *a)
{
	struct agent_watch *w = a->watch;
	uint64_t lost = learn_lost_events();

	if (lost != w->lost || w->unattributed) {
		struct agent_line l = agent_line_begin(a, "watch", NULL, 0);

		agent_line_u64(&l, "events_lost", lost);
		agent_line_u64(&l, "unattributed", w->unattributed);
		agent_line_end(&l);
		w->lost = lost;
		w->unattributed = 0;
	}
}

static void watch_close(struct agent *a)
{
	struct agent_watch *w = a->watch;

	if (!w)
		return;
	if (w->fd >= 0)
		close(w->fd);
	learn_remove_instance();
	free(w->buf);
	free(w->rings);
	free(w->pending);
	free(w->made);
	free(w->foreign.v);
	free(w);
	a->watch = NULL;
}

static int watch_open(struct agent *a)
{
	struct agent_watch *w = calloc(1, sizeof(*w));
	char p[PATH_MAX + 32];
	int r;

	if (!w || !(w->buf = malloc(AW_BUF)) ||
	    !(w->pending = calloc(AW_PENDING, sizeof(*w->pending)))) {
		if (w)
			free(w->buf);
		free(w);
		return -ENOMEM;
	}
	w->fd = -1;
	a->watch = w;
	{
		struct learned L;
		struct tracer t = { .l = &L };

		tracer_mark_forced_async(&t);
		memcpy(w->async_forced, t.async_forced, sizeof(w->async_forced));
	}
	snprintf(p, sizeof(p), "/proc/self/comm");
	{
		FILE *f = fopen(p, "re");

		if (f) {
			if (fgets(w->comm, sizeof(w->comm), f))
				w->comm[strcspn(w->comm, "\n")] = '\0';
			fclose(f);
		}
	}
	learn_clean_stale();
	if (learn_setup_instance(4096)) {
		watch_close(a);
		return -EPERM;
	}
	w->fields = learn_keys.ptr_base == 0;
	w->flags_known = learn_keys.flags != NULL;
	/* the agent follows rings, not tasks */
	ev_write("sched/sched_process_fork", "enable", "0");
	ev_write("sched/sched_process_exit", "enable", "0");
	w->have_failed = ev_write("io_uring/io_uring_req_failed", "enable", "1") == 0;
	if (w->have_failed)
		ev_write("io_uring/io_uring_req_failed", "filter", "error == -13");
	ev_write(watch_submit_event(), "enable", "0");
	ev_write("io_uring/io_uring_register", "filter", "ret == -13");
	snprintf(p, sizeof(p), "%s/trace_pipe", learn_inst);
	w->fd = open(p, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (w->fd < 0 || (r = learn_inst_write("tracing_on", "1"))) {
		watch_close(a);
		return -EIO;
	}
	w->last_tick = w->last_report = agent_now_ms();
	return 0;
}

int agent_watch_start(struct agent *a)
{
	if (a->watch)
		return 0;
	if (a->watch_failed)
		return -EPERM;
	if (watch_open(a)) {
		a->watch_failed = true;
		agent_log_msg(a, "the io_uring tracepoints cannot be read (tracefs needs root): "
				 "audit mode and the denial log report nothing");
		return -EPERM;
	}
	return 0;
}

const char *agent_watch_note(const struct agent *a, const struct container *c)
{
	if (!c->watched)
		return c->audit ? "NOT enforced; NOT watched: the io_uring tracepoints cannot be "
				  "read (tracefs needs root)" :
				  "denials NOT logged: the io_uring tracepoints cannot be read "
				  "(tracefs needs root)";
	if (c->audit)
		return a->watch->flags_known ?
			       "NOT enforced; what the policy would deny is logged" :
			       "NOT enforced; what the policy would deny is logged (SQE flags "
			       "unknown: this kernel's submit tracepoint lacks them)";
	return a->watch->have_failed ?
		       "denials logged (requests: io_uring_req_failed; register calls on a "
		       "ring: io_uring_register; ring-less register calls: no signal)" :
		       "denials NOT logged: this kernel has no io_uring_req_failed tracepoint "
		       "(register calls on a ring: io_uring_register)";
}

int agent_watch_add(struct agent *a, struct container *c, const struct iour_plan *plan)
{
	struct agent_watched *cw;
	int r;

	c->pidns = c->pid > 0 ? pidns_of((uint64_t)c->pid) : 0;
	/* a container in the host's PID namespace: its tasks cannot be told
	 * from the host's by namespace, only by the rings it asked for */
	if (c->pidns && c->pidns == pidns_of((uint64_t)getpid()))
		c->pidns = 0;
	if (!c->audit && !a->log_denials)
		return 0;
	if (agent_watch_start(a))
		return -EPERM;
	cw = calloc(1, sizeof(*cw));
	if (!cw || !(cw->keys = calloc(AW_KEYS, sizeof(*cw->keys)))) {
		free(cw);
		return -ENOMEM;
	}
	if (c->audit && plan && (r = watch_plan_read(&cw->plan, plan))) {
		free(cw->keys);
		free(cw);
		return r;
	}
	c->watched = cw;
	c->denials_counted = !c->audit;
	aw_filters(a);
	return 0;
}

void agent_watch_ring(struct container *c, int task)
{
	if (task <= 0 || set_has(&c->tasks, (uint64_t)task))
		return;
	if (c->tasks.n >= 4096) /* a set of pids, not a history */
		c->tasks.n = 0;
	set_add(&c->tasks, (uint64_t)task);
}

void agent_watch_gone(struct agent *a, struct container *c)
{
	struct agent_watched *cw = c->watched;
	struct agent_watch *w = a->watch;

	if (w) {
		/* what the trace holds now may be its (its tasks are still
		 * known here) */
		drain(a);
		if (cw)
			report_container(a, c, true);
		/* its rings are no longer its */
		for (size_t i = 0; i < w->nrings;) {
			struct aw_ring *m;

			if (w->rings[i].c != c) {
				i++;
				continue;
			}
			m = made_find(w->made, w->nmade, w->rings[i].ctx);
			if (m)
				*m = w->made[--w->nmade];
			w->rings[i] = w->rings[--w->nrings];
		}
	}
	free(c->tasks.v);
	c->tasks = (struct set){ 0 };
	if (!cw)
		return;
	free(cw->keys);
	free(cw);
	c->watched = NULL;
	if (w && !needed(a)) {
		report_watch(a);
		watch_close(a);
	} else if (w) {
		aw_filters(a);
	}
}

int agent_watch_tick(struct agent *a)
{
	struct agent_watch *w = a->watch;
	long long now;

	if (!w)
		return -1;
	now = agent_now_ms();
	if (now - w->last_tick >= AW_TICK_MS) {
		drain(a);
		w->last_tick = now;
	}
	if (now - w->last_report >= (long long)a->report_interval * 1000) {
		for (struct container *c = a->containers; c; c = c->next)
			if (c->watched)
				report_container(a, c, false);
		report_watch(a);
		w->last_report = now;
	}
	return (int)(AW_TICK_MS - (now - w->last_tick) > 0 ? AW_TICK_MS - (now - w->last_tick) : 1);
}

void agent_watch_close(struct agent *a)
{
	watch_close(a);
}
