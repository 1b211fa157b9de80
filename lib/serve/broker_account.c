/* SPDX-License-Identifier: MIT */
/*
 * Who pays for a brokered ring (doc/security.md 3a, "Who pays").
 *
 * The kernel charges a ring to the task that creates it: its memory to that
 * task's memory cgroup, its locked memory to that task's user, and nothing
 * at all when that task holds CAP_IPC_LOCK.  A broker worker (a process of
 * its own, forked for one call, which exits after it) therefore takes the
 * caller's accounting context before it creates the caller's ring:
 *
 *   1. the caller's memory cgroup, v2 and every v1 hierarchy with the
 *      memory controller: the worker writes itself into the caller's
 *      cgroup.procs where its own path differs (nothing is written when it
 *      is already there, the usual case under `iour-restrict run`);
 *   2. the caller's RLIMIT_MEMLOCK (the ring's own memory counts against
 *      the creator's limit when it lacks CAP_IPC_LOCK: measured on 6.18);
 *   3. the caller's uids, gids and supplementary groups, where they differ;
 *   4. no capability at all, so no CAP_IPC_LOCK, which would turn locked-
 *      memory accounting off (kept only where the caller holds it itself:
 *      keep_ipc_lock()), and not dumpable.
 *
 * Everything is read through the caller's /proc/PID directory fd (which
 * pins the process, not the number) and the worker's own /proc/self; no
 * stdio and no allocation, since the worker is forked from a broker that
 * may run threads.
 *
 * Paths in /proc/PID/cgroup and the roots in /proc/self/mountinfo are both
 * relative to the reader's (the worker's, so the broker's) cgroup
 * namespace.  A caller whose cgroup lies outside that namespace (its path
 * starts with "/..") cannot be joined: the call fails with -EXDEV.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <linux/capability.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "broker_account.h"
#include "base/internal.h"
#include "base/sys.h"

#define ACCT_GROUPS 1024 /* supplementary groups of a caller, at most */

/* Add a sentence to a->why ("; " between two). */
__attribute__((format(printf, 2, 3))) static void note(struct iour__acct *a, const char *fmt, ...)
{
	size_t n = strlen(a->why);
	va_list ap;

	if (n && n + 2 < sizeof(a->why)) {
		memcpy(a->why + n, "; ", 3);
		n += 2;
	}
	va_start(ap, fmt);
	vsnprintf(a->why + n, sizeof(a->why) - n, fmt, ap);
	va_end(ap);
}

/* ---- reading /proc files line by line, without stdio ---------------------- */

/* fn(ctx, line) for every line of fd (no '\n'): 0 goes on, 1 stops, <0
 * is an error returned as is.  A line longer than the buffer: -E2BIG. */
static int each_line(int fd, int (*fn)(void *ctx, char *line), void *ctx)
{
	char buf[16384];
	size_t have = 0;

	for (;;) {
		ssize_t n = read(fd, buf + have, sizeof(buf) - 1 - have);
		char *s = buf, *nl;
		int rc;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0) {
			buf[have] = '\0';
			rc = have ? fn(ctx, buf) : 0;
			return rc < 0 ? rc : 0;
		}
		have += (size_t)n;
		while ((nl = memchr(s, '\n', (size_t)(buf + have - s)))) {
			*nl = '\0';
			rc = fn(ctx, s);
			if (rc)
				return rc < 0 ? rc : 0;
			s = nl + 1;
		}
		have -= (size_t)(s - buf);
		memmove(buf, s, have);
		if (have == sizeof(buf) - 1)
			return -E2BIG;
	}
}

/* fn(ctx, line) for every line of the text s (changed in place). */
static int each_line_of(char *s, int (*fn)(void *ctx, char *line), void *ctx)
{
	char *nl;
	int rc;

	for (; *s; s = nl + 1) {
		nl = strchr(s, '\n');
		if (!nl)
			return (rc = fn(ctx, s)) < 0 ? rc : 0;
		*nl = '\0';
		rc = fn(ctx, s);
		if (rc)
			return rc < 0 ? rc : 0;
	}
	return 0;
}

/*
 * What a worker reads of itself, read once while it waits for its call
 * (iour__broker_account_warm()): its own cgroups and user namespace do not
 * change in between (only a privileged process could move it).
 */
static struct {
	int ready;
	char cgroup[4096];  /* /proc/self/cgroup */
	struct stat userns; /* /proc/self/ns/user */
} self_seen;

/* Documented in lib/serve/broker_account.h */
IOUR_INTERNAL void iour__broker_account_warm(void)
{
	int fd = open("/proc/self/cgroup", O_RDONLY | O_CLOEXEC);
	size_t have = 0;
	ssize_t n = 1;

	self_seen.ready = 0;
	if (fd < 0)
		return;
	while (n > 0 && have < sizeof(self_seen.cgroup) - 1) {
		n = read(fd, self_seen.cgroup + have, sizeof(self_seen.cgroup) - 1 - have);
		if (n > 0)
			have += (size_t)n;
	}
	close(fd);
	/* Complete, and a user namespace to compare with: or read it all later. */
	if (n != 0 || stat("/proc/self/ns/user", &self_seen.userns))
		return;
	self_seen.cgroup[have] = '\0';
	self_seen.ready = 1;
}

static int scan(int dirfd, const char *path, int (*fn)(void *ctx, char *line), void *ctx)
{
	int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC);
	int rc;

	if (fd < 0)
		return -errno;
	rc = each_line(fd, fn, ctx);
	close(fd);
	return rc;
}

/* Is `tok` one of the `sep`-separated words of s? */
static int has_word(const char *s, char sep, const char *tok)
{
	size_t n = strlen(tok);

	while (s && *s) {
		const char *e = strchr(s, sep);
		size_t len = e ? (size_t)(e - s) : strlen(s);

		if (len == n && !memcmp(s, tok, n))
			return 1;
		s = e ? e + 1 : NULL;
	}
	return 0;
}

/* ---- the caller's credentials and RLIMIT_MEMLOCK --------------------------- */

struct creds {
	unsigned long uid[3], gid[3]; /* real, effective, saved */
	gid_t groups[ACCT_GROUPS];
	int ngroups;
	unsigned seen; /* 1 Uid, 2 Gid, 4 Groups, 8 CapEff */
	int ipc_lock;  /* CAP_IPC_LOCK in the caller's effective set */
	long tgid;     /* its number, in the worker's pid namespace */
};

static int ids(const char *s, unsigned long *v, int n)
{
	for (int i = 0; i < n; i++) {
		char *e;

		errno = 0;
		v[i] = strtoul(s, &e, 10);
		if (e == s || errno)
			return -EINVAL;
		s = e;
	}
	return 0;
}

static int status_line(void *ctx, char *line)
{
	struct creds *c = ctx;

	if (!strncmp(line, "Tgid:", 5)) {
		c->tgid = strtol(line + 5, NULL, 10);
		return 0;
	}
	if (!strncmp(line, "Uid:", 4)) {
		c->seen |= 1;
		return ids(line + 4, c->uid, 3);
	}
	if (!strncmp(line, "Gid:", 4)) {
		c->seen |= 2;
		return ids(line + 4, c->gid, 3);
	}
	if (!strncmp(line, "Groups:", 7)) {
		char *s = line + 7, *e;

		c->seen |= 4;
		for (;;) {
			unsigned long g;

			while (*s == ' ' || *s == '\t')
				s++;
			if (!*s)
				break;
			if (c->ngroups == ACCT_GROUPS)
				return -E2BIG;
			g = strtoul(s, &e, 10);
			if (e == s)
				return -EINVAL;
			c->groups[c->ngroups++] = (gid_t)g;
			s = e;
		}
		return 0;
	}
	if (!strncmp(line, "CapEff:", 7)) {
		char *e;
		unsigned long long caps = strtoull(line + 7, &e, 16);

		if (e == line + 7)
			return -EINVAL;
		c->ipc_lock = !!(caps & (1ULL << CAP_IPC_LOCK));
		c->seen |= 8;
		return 1; /* the last line wanted */
	}
	return 0;
}

static int limit_value(const char *s, const char **end, rlim_t *v)
{
	char *e;

	while (*s == ' ')
		s++;
	if (!strncmp(s, "unlimited", 9)) {
		*v = RLIM_INFINITY;
		*end = s + 9;
		return 0;
	}
	errno = 0;
	*v = strtoull(s, &e, 10);
	if (e == s || errno)
		return -EINVAL;
	*end = e;
	return 0;
}

/* /proc/PID/limits: "Max locked memory   SOFT   HARD   bytes" */
static int limits_line(void *ctx, char *line)
{
	static const char key[] = "Max locked memory";
	struct rlimit *r = ctx;
	const char *s = line + sizeof(key) - 1;
	int rc;

	if (strncmp(line, key, sizeof(key) - 1) != 0)
		return 0;
	rc = limit_value(s, &s, &r->rlim_cur);
	if (!rc)
		rc = limit_value(s, &s, &r->rlim_max);
	return rc ? rc : 1;
}

/* ---- cgroups ---------------------------------------------------------------- */

struct cgpaths {
	char v2[PATH_MAX];  /* the "0::" line */
	char mem[PATH_MAX]; /* the v1 hierarchy with the memory controller */
	unsigned has;       /* 1 v2, 2 v1 memory */
	unsigned same;      /* the same bits: the worker's path is the same */
	int self;           /* reading the worker's own file */
};

/* "ID:CONTROLLERS:PATH" */
static int cgroup_line(void *ctx, char *line)
{
	struct cgpaths *p = ctx;
	char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
	char *dst;
	unsigned bit;
	size_t len;

	if (!c2)
		return 0;
	*c2 = '\0';
	if (c1 - line == 1 && line[0] == '0' && c2 == c1 + 1) {
		dst = p->v2;
		bit = 1;
	} else if (has_word(c1 + 1, ',', "memory")) {
		dst = p->mem;
		bit = 2;
	} else {
		return 0;
	}
	if (p->self) {
		if ((p->has & bit) && !strcmp(dst, c2 + 1))
			p->same |= bit;
		return 0;
	}
	p->has |= bit;
	len = strlen(c2 + 1);
	if (len >= PATH_MAX)
		return -ENAMETOOLONG;
	memcpy(dst, c2 + 1, len + 1);
	return 0;
}

/* mountinfo escapes ' ', '\t', '\n' and '\\' as \ooo; undo it in place. */
static void unescape(char *s)
{
	char *d = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*d++ = (char)((s[1] - '0') << 6 | (s[2] - '0') << 3 | (s[3] - '0'));
			s += 3;
		} else {
			*d++ = *s;
		}
	}
	*d = '\0';
}

struct mount_find {
	const char *fstype; /* "cgroup2", or "cgroup" with the memory option */
	const char *path;   /* the cgroup, as /proc/PID/cgroup names it */
	char dir[PATH_MAX]; /* out: where it is mounted */
};

/* "ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [OPTIONAL...] - FSTYPE SOURCE SUPEROPTS" */
static int mount_line(void *ctx, char *line)
{
	struct mount_find *m = ctx;
	char *f[12] = { 0 }, *s = line, *save;
	int n = 0, dash = -1;
	size_t rl;
	const char *rel;

	for (char *t = strtok_r(s, " ", &save); t && n < 12; t = strtok_r(NULL, " ", &save)) {
		if (dash < 0 && n >= 6 && !strcmp(t, "-"))
			dash = n;
		f[n++] = t;
	}
	if (dash < 0 || dash + 3 >= n || strcmp(f[dash + 1], m->fstype) != 0)
		return 0;
	if (!strcmp(m->fstype, "cgroup") && !has_word(f[dash + 3], ',', "memory"))
		return 0;
	unescape(f[3]);
	unescape(f[4]);
	/* The mount shows the subtree under ROOT: the cgroup must be in it. */
	rl = strcmp(f[3], "/") != 0 ? strlen(f[3]) : 0;
	if (strncmp(m->path, f[3], rl) != 0 || (m->path[rl] != '/' && m->path[rl] != '\0'))
		return 0;
	rel = m->path + rl;
	if ((size_t)snprintf(m->dir, sizeof(m->dir), "%s%s", f[4],
			     strcmp(rel, "/") != 0 ? rel : "") >= sizeof(m->dir))
		return -ENAMETOOLONG;
	return 1;
}

/* Does the path climb out of the reader's cgroup namespace ("/.." parts)? */
static int outside(const char *path)
{
	for (const char *s = strstr(path, "/.."); s; s = strstr(s + 1, "/.."))
		if (s[3] == '/' || s[3] == '\0')
			return 1;
	return 0;
}

static int join(struct iour__acct *a, const char *fstype, const char *path)
{
	struct mount_find m = { .fstype = fstype, .path = path };
	char procs[PATH_MAX + 16];
	int fd, rc;
	const char *what = strcmp(fstype, "cgroup2") != 0 ? "v1 memory cgroup" : "cgroup v2";

	if (outside(path)) {
		note(a, "the caller's %s is outside the broker's cgroup namespace", what);
		return -EXDEV;
	}
	m.dir[0] = '\0';
	rc = scan(AT_FDCWD, "/proc/self/mountinfo", mount_line, &m);
	if (!rc && !m.dir[0])
		rc = -ENOENT;
	if (rc) {
		note(a, "the caller's %s is not mounted here: %s", what, strerror(-rc));
		return rc;
	}
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", m.dir);
	errno = 0;
	fd = open(procs, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0 || write(fd, "0", 1) != 1) {
		rc = errno ? -errno : -EIO;
		note(a, "joining the caller's %s: %s", what, strerror(-rc));
	}
	if (fd >= 0)
		close(fd);
	return rc;
}

static int cgroups(int piddir, struct iour__acct *a)
{
	struct cgpaths caller;
	int rc;

	caller.has = caller.same = 0;
	caller.self = 0;
	rc = scan(piddir, "cgroup", cgroup_line, &caller);
	caller.self = 1;
	if (!rc && self_seen.ready) {
		char text[sizeof(self_seen.cgroup)];

		memcpy(text, self_seen.cgroup, sizeof(text));
		rc = each_line_of(text, cgroup_line, &caller);
	} else if (!rc) {
		rc = scan(AT_FDCWD, "/proc/self/cgroup", cgroup_line, &caller);
	}
	if (rc) {
		note(a, "reading cgroups: %s", strerror(-rc));
		return rc;
	}
	if (!caller.has) {
		note(a, "no memory cgroup on this system");
		return 0;
	}
	if ((caller.has & 2) && !(caller.same & 2)) {
		rc = join(a, "cgroup", caller.mem);
		if (rc)
			return rc;
		a->done |= IOUR__ACCT_CGROUP_V1;
	}
	if ((caller.has & 1) && !(caller.same & 1)) {
		rc = join(a, "cgroup2", caller.v2);
		/* With the memory controller on v1 (hybrid), v2 charges no memory. */
		if (rc && !(caller.has & 2))
			return rc;
		if (!rc)
			a->done |= IOUR__ACCT_CGROUP_V2;
	}
	if (!(a->done & (IOUR__ACCT_CGROUP_V1 | IOUR__ACCT_CGROUP_V2)))
		a->done |= IOUR__ACCT_SAME_CGROUP;
	return 0;
}

/* ---- RLIMIT_MEMLOCK ----------------------------------------------------------- */

static int memlock(int piddir, pid_t tgid, struct iour__acct *a)
{
	struct rlimit want = { 0 }, own;
	int found = 0, rc = 0;

	/* prlimit() where allowed (same ids, or CAP_SYS_RESOURCE): a system
	 * call, where /proc/PID/limits costs a file.  The number could name
	 * another process only once the caller is dead and reaped, and a dead
	 * caller's ring is never handed over (doc/security.md 3a). */
	if (tgid > 0 && !prlimit(tgid, RLIMIT_MEMLOCK, NULL, &want))
		found = 1;
	else
		rc = scan(piddir, "limits", limits_line, &want);
	if (!found)
		found = !rc && (want.rlim_cur || want.rlim_max);
	if (!rc && getrlimit(RLIMIT_MEMLOCK, &own))
		rc = -errno;
	if (rc || !found) {
		note(a, "reading the caller's RLIMIT_MEMLOCK: %s", strerror(rc ? -rc : ENOENT));
		return rc ? rc : -ENOENT;
	}
	if (want.rlim_cur != own.rlim_cur || want.rlim_max != own.rlim_max) {
		if (setrlimit(RLIMIT_MEMLOCK, &want)) {
			/* Raising needs CAP_SYS_RESOURCE; lowering always works.
			 * The broker's limit, when lower, is the stricter one. */
			if (want.rlim_max > own.rlim_max)
				want.rlim_max = own.rlim_max;
			if (want.rlim_cur > want.rlim_max)
				want.rlim_cur = want.rlim_max;
			if (setrlimit(RLIMIT_MEMLOCK, &want)) {
				rc = -errno;
				note(a, "setting RLIMIT_MEMLOCK: %s", strerror(errno));
				return rc;
			}
			note(a, "RLIMIT_MEMLOCK: the caller's is above the broker's hard limit "
				"(no CAP_SYS_RESOURCE); the broker's is kept");
			return 0;
		}
	}
	a->done |= IOUR__ACCT_MEMLOCK;
	return 0;
}

/* ---- credentials and capabilities --------------------------------------------- */

static int same_creds(const struct creds *c)
{
	uid_t u[3];
	gid_t g[3], groups[ACCT_GROUPS];
	int n;

	if (getresuid(&u[0], &u[1], &u[2]) || getresgid(&g[0], &g[1], &g[2]))
		return 0;
	for (int i = 0; i < 3; i++)
		if (u[i] != c->uid[i] || g[i] != c->gid[i])
			return 0;
	n = getgroups(ACCT_GROUPS, groups);
	return n == c->ngroups && !memcmp(groups, c->groups, (size_t)n * sizeof(gid_t));
}

static int take_creds(const struct creds *c, int *keep, struct iour__acct *a)
{
	const char *step = NULL;

	if (same_creds(c)) {
		a->done |= IOUR__ACCT_CREDS;
		return 0;
	}
	/* Leaving uid 0 empties the permitted set unless told to keep it;
	 * drop_caps() then keeps CAP_IPC_LOCK alone and resets this. */
	if (*keep && iour__prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0)
		*keep = 0;
	/* The worker is single-threaded: these change the whole process. */
	if (setgroups((size_t)c->ngroups, c->groups))
		step = "setgroups";
	else if (setresgid((gid_t)c->gid[0], (gid_t)c->gid[1], (gid_t)c->gid[2]))
		step = "setresgid";
	else if (setresuid((uid_t)c->uid[0], (uid_t)c->uid[1], (uid_t)c->uid[2]))
		step = "setresuid";
	if (step) {
		int err = errno;

		note(a, "taking the caller's credentials: %s: %s", step, strerror(err));
		return -err;
	}
	a->done |= IOUR__ACCT_CREDS;
	return 0;
}

/*
 * May the worker keep CAP_IPC_LOCK?  Only where it would not be borrowed:
 * the caller has it in its effective set, in the worker's own user
 * namespace (the kernel asks for it in the initial one, so the answer is
 * then the same for both), and the worker has it to keep.  A root program
 * that ran its own rings without locked-memory accounting keeps doing so.
 */
static int keep_ipc_lock(int piddir, const struct creds *c)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };
	struct __user_cap_data_struct d[2];
	struct stat theirs, ours;

	if (self_seen.ready)
		ours = self_seen.userns;
	if (!c->ipc_lock || fstatat(piddir, "ns/user", &theirs, 0) ||
	    (!self_seen.ready && stat("/proc/self/ns/user", &ours)) ||
	    theirs.st_ino != ours.st_ino || theirs.st_dev != ours.st_dev)
		return 0;
	memset(d, 0, sizeof(d));
	if (syscall(SYS_capget, &h, d))
		return 0;
	return !!(d[0].permitted & (1U << CAP_IPC_LOCK));
}

static int drop_caps(int keep, struct iour__acct *a)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };
	struct __user_cap_data_struct d[2];
	long rc;

	memset(d, 0, sizeof(d));
	if (keep)
		d[0].permitted = d[0].effective = 1U << CAP_IPC_LOCK;
	/* Ambient capabilities (4.3+) go with the permitted set anyway. */
	(void)iour__prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	if (syscall(SYS_capset, &h, d)) {
		int err = errno;

		note(a, "dropping capabilities: %s", strerror(err));
		return -err;
	}
	if (keep) {
		(void)iour__prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0);
		note(a, "CAP_IPC_LOCK kept: the caller holds it (no locked-memory accounting, "
			"as for the caller's own rings)");
	} else {
		a->done |= IOUR__ACCT_NOCAPS;
	}
	/* A change of credentials made the process dumpable again. */
	rc = iour__prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	if (rc < 0) {
		note(a, "PR_SET_DUMPABLE: %s", strerror((int)-rc));
		return (int)rc;
	}
	return 0;
}

/* Documented in lib/serve/broker_account.h */
IOUR_INTERNAL int iour__broker_account_enter(int piddir, struct iour__acct *a)
{
	struct creds c;
	int rc, keep;

	a->done = 0;
	a->why[0] = '\0';
	c.ngroups = 0;
	c.seen = 0;
	c.ipc_lock = 0;
	c.tgid = 0;
	rc = scan(piddir, "status", status_line, &c);
	if (!rc && c.seen != 15)
		rc = -ENOENT;
	if (rc) {
		note(a, "reading the caller's status: %s", strerror(-rc));
		return rc;
	}
	/* In this order: joining a cgroup and raising a limit need the
	 * broker's privileges, which the last two steps give up. */
	rc = cgroups(piddir, a);
	if (!rc)
		rc = memlock(piddir, (pid_t)c.tgid, a);
	keep = keep_ipc_lock(piddir, &c);
	if (!rc)
		rc = take_creds(&c, &keep, a);
	if (!rc)
		rc = drop_caps(keep, a);
	return rc;
}
