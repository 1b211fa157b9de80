/* SPDX-License-Identifier: MIT */
/*
 * iour-restrict learn: the followed tasks and the trace events
 * (doc/cli.md, "learn").
 *
 * The followed tasks are the command's process (or, attached, the given
 * process and its descendants, or a cgroup's tasks) and every task a
 * followed task forks (processes and threads both fire
 * sched_process_fork).  A task leaves the set when it exits
 * (sched_process_exit), so a pid the kernel reuses for an unrelated task
 * is not followed.  SQPOLL threads are kernel threads the kernel starts
 * without sched_process_fork, and the submit tracepoint reports the SQPOLL
 * thread's pid (its sq_thread field is 1), so a submission by an SQPOLL
 * thread is kept when its ring was created by a followed task (the ctx
 * field of io_uring_create).  io-wq workers only execute requests; they
 * submit none.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/cli.h"
#include "learn.h"

#define keys learn_keys

bool set_has(const struct set *s, uint64_t x)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i] == x)
			return true;
	return false;
}

int set_add(struct set *s, uint64_t x)
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

void set_del(struct set *s, uint64_t x)
{
	for (size_t i = 0; i < s->n; i++) {
		if (s->v[i] == x) {
			s->v[i] = s->v[--s->n];
			return;
		}
	}
}

struct task *tracer_find(struct tracer *t, uint64_t pid)
{
	if (t->last < t->ntask && t->task[t->last].pid == pid && !t->task[t->last].gone)
		return &t->task[t->last];
	for (size_t i = t->ntask; i-- > 0;) {
		if (t->task[i].pid == pid && !t->task[i].gone) {
			t->last = i;
			return &t->task[i];
		}
	}
	return NULL;
}

int tracer_follow(struct tracer *t, uint64_t pid, const char *comm)
{
	struct task *k = tracer_find(t, pid);

	if (k)
		return 0;
	if (t->ntask == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		struct task *v = realloc(t->task, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		t->task = v;
		t->cap = cap;
	}
	k = &t->task[t->ntask++];
	memset(k, 0, sizeof(*k));
	k->pid = pid;
	snprintf(k->comm, sizeof(k->comm), "%s", comm ? comm : "");
	t->l->ntasks++;
	return 0;
}

/* Whether task @pid is in the cgroup @rel (relative to the cgroup2 mount):
 * 1 yes, 0 no or gone. */
static int task_in_cgroup(uint64_t pid, const char *rel)
{
	char p[64], line[PATH_MAX + 16];
	size_t rl = strlen(rel);
	int in = 0;
	FILE *f;

	snprintf(p, sizeof(p), "/proc/%llu/cgroup", (unsigned long long)pid);
	f = fopen(p, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		char *path;

		if (strncmp(line, "0::", 3) != 0)
			continue;
		path = line + 3;
		path[strcspn(path, "\n")] = '\0';
		in = !strcmp(rel, "/") ||
		     (!strncmp(path, rel, rl) && (path[rl] == '/' || path[rl] == '\0'));
	}
	fclose(f);
	return in;
}

void tracer_mark_forced_async(struct tracer *t)
{
	/* The library's kernel facts know which preparations may set it
	 * (iour_opcode_forces_async(); doc/kernel.md 4.3). */
	for (uint32_t op = 0; op < NOPS; op++)
		t->async_forced[op] = iour_opcode_forces_async(op) == 1;
}

/*
 * The value after @key (a name with its separator, "ctx=" or "ring ") in
 * the event text @s, read in @base: "name=0x1f (31)", "name=(1)" or
 * "name=0xffff..." with the fields option ("name='-'(45)" for a one-byte
 * field whose value is a printable character: opcodes 32 to 126), "ring
 * 00000000a1b2c3d4," or
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

			/* a one-byte field whose value is a printable
			 * character is printed as it: "opcode='-'(45)" */
			if (v[0] == '\'' && v[1] && v[2] == '\'')
				v += 3;
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
			/* the kernel's own name of EPOLL_CTL, the one name
			 * it prints unlike the UAPI (measured on 6.18) */
			if (op < 0 && !strcmp(name, "EPOLL"))
				op = IOUR_OP_EPOLL_CTL;
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
/* The pid of the task in an event line: "   COMM-PID   [CPU] ..." (COMM
 * may hold spaces and dashes: the first "-DIGITS SPACES [" decides); its
 * COMM in @comm (16 bytes). */
static int line_pid(const char *l, uint64_t *pid, char *comm)
{
	for (const char *d = strchr(l, '-'); d; d = strchr(d + 1, '-')) {
		const char *q = d + 1, *c = l;
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
			while (*c == ' ' && c < d)
				c++;
			snprintf(comm, 16, "%.*s", (int)(d - c), c);
			return 0;
		}
	}
	return -1;
}

/* The comm after @key ("child_comm=fio pid=..."), in @comm (16 bytes). */
static void field_comm(const char *s, const char *key, char *comm)
{
	const char *p = strstr(s, key);

	comm[0] = '\0';
	if (p)
		snprintf(comm, 16, "%.*s", (int)strcspn(p + strlen(key), " "), p + strlen(key));
}

/* A task outside the followed set: in --cgroup mode, followed if it is in
 * the cgroup now (it moved in since the last scan). */
static struct task *find_or_join(struct tracer *t, uint64_t pid, const char *comm)
{
	struct task *k = tracer_find(t, pid);

	if (k || !t->cgroup_rel || set_has(&t->strange, pid))
		return k;
	if (task_in_cgroup(pid, t->cgroup_rel) != 1) {
		set_add(&t->strange, pid);
		return NULL;
	}
	if (tracer_follow(t, pid, comm))
		return NULL;
	return tracer_find(t, pid);
}

static void count_request(struct tracer *t, struct task *k, uint64_t b, uint64_t c, uint64_t d)
{
	struct learned *L = t->l;

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
	if (k) {
		k->nreq++;
		k->ops[b / 64] |= 1ull << (b % 64);
	}
}

/* Task @pid's comm from /proc into @comm (16 bytes), if it still runs. */
static void proc_comm(uint64_t pid, char *comm)
{
	char p[64];
	FILE *f;

	snprintf(p, sizeof(p), "/proc/%llu/comm", (unsigned long long)pid);
	f = fopen(p, "re");
	if (!f)
		return;
	if (fgets(comm, 16, f))
		comm[strcspn(comm, "\n")] = '\0';
	fclose(f);
}

/*
 * An SQPOLL thread names its process, "iou-sqp-TGID" (Linux 5.12+): a
 * freed ring's address can be reused by another process's ring, so that
 * process must be followed too.  The "io_uring-sq" kernel threads of
 * older kernels name none: there the ring address alone decides.
 */
static bool sqpoll_ours(struct tracer *t, uint64_t pid, char *comm)
{
	char *end;
	uint64_t owner;

	if (comm[0] == '<')
		proc_comm(pid, comm);
	if (strncmp(comm, "iou-sqp-", 8) != 0)
		return true;
	owner = strtoull(comm + 8, &end, 10);
	if (end == comm + 8)
		return true;
	for (size_t i = 0; i < t->ntask; i++)
		if (t->task[i].pid == owner)
			return true; /* followed, even if it has exited since */
	return find_or_join(t, owner, NULL) != NULL;
}

static int parse_submit(struct tracer *t, const char *ev, uint64_t pid, char *comm)
{
	uint64_t a, b, c = 0, d;
	struct task *k;
	bool unreadable;

	if (field_base(ev, keys.ctx, keys.ptr_base, &a) || field(ev, keys.sqt, &d))
		return 0;
	/* an opcode or flags learn cannot read is counted, not dropped: the
	 * policy would miss it (learn_write_policy says so) */
	unreadable = (keys.op_name ? op_by_name(ev, keys.op, &b) : field(ev, keys.op, &b)) ||
		     (keys.flags && field(ev, keys.flags, &c));
	if (!keys.flags)
		t->l->flags_unknown = true;
	k = find_or_join(t, pid, comm);
	/* SQPOLL submissions come from the kernel's SQPOLL thread */
	if (!k && d && set_has(&t->rings, a) && sqpoll_ours(t, pid, comm)) {
		if (tracer_follow(t, pid, comm))
			return -ENOMEM;
		k = tracer_find(t, pid);
	}
	if (k) {
		/* the name it has now (the fork event gave the parent's);
		 * "<...>" when tracefs did not save it: /proc may know */
		if (comm[0] == '<')
			proc_comm(pid, comm);
		snprintf(k->comm, sizeof(k->comm), "%s", comm);
		if (unreadable)
			t->l->unreadable++;
		else
			count_request(t, k, b, c, d);
	}
	return 0;
}

static int parse_line(struct tracer *t, const char *l)
{
	struct learned *L = t->l;
	uint64_t pid, a, b;
	char comm[16];
	const char *ev;
	struct task *k;

	if (l[0] == '#' || line_pid(l, &pid, comm))
		return 0;
	if ((ev = strstr(l, " sched_process_fork: "))) {
		if (field(ev, keys.ppid, &a) || field(ev, keys.cpid, &b))
			return 0;
		if (t->child > 0 && a == (uint64_t)t->self && b == (uint64_t)t->child)
			t->saw_start = true;
		if (!find_or_join(t, a, comm))
			return 0;
		field_comm(ev, keys.ccomm, comm);
		return tracer_follow(t, b, comm);
	}
	if ((ev = strstr(l, " sched_process_exit: "))) {
		if (field(ev, keys.epid, &a))
			return 0;
		if ((k = tracer_find(t, a)))
			k->gone = true;
		/* the pid may come back as a task in the cgroup */
		set_del(&t->strange, a);
		return 0;
	}
	if ((ev = strstr(l, " io_uring_create: "))) {
		if (field_base(ev, keys.cctx, keys.ptr_base, &a) || field(ev, keys.cflags, &b))
			return 0;
		if (!find_or_join(t, pid, comm)) {
			/* A ring of a task not followed: its address may be
			 * that of a freed ring a followed task created, and
			 * what this ring's SQPOLL thread submits is not the
			 * program's (doc/cli.md, "learn"). */
			set_del(&t->rings, a);
			return 0;
		}
		L->rings++;
		if (b & SQPOLL_FLAG)
			L->sqpoll_rings++;
		return set_add(&t->rings, a);
	}
	if ((ev = strstr(l, keys.submit)))
		return parse_submit(t, ev, pid, comm);
	if ((ev = strstr(l, " io_uring_register: "))) {
		if (!(k = find_or_join(t, pid, comm)) || field(ev, keys.rop, &a) ||
		    field(ev, keys.ret, &b))
			return 0;
		L->nreg++;
		k->nreg++;
		snprintf(k->comm, sizeof(k->comm), "%s", comm);
		if (a >= NREG) {
			L->reg_other++;
			return 0;
		}
		k->regs[a / 64] |= 1ull << (a % 64);
		if ((int64_t)b < 0)
			L->reg_fail[a]++;
		else
			L->reg_ok[a]++;
	}
	return 0;
}

/* Reads what trace_pipe has now; the number of bytes, or -errno. */
ssize_t tracer_drain(struct tracer *t, int fd, char *buf, size_t size, size_t *held)
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
