/* SPDX-License-Identifier: MIT */
/*
 * iour-restrict learn: what /proc and cgroup v2 say about tasks (doc/cli.md,
 * "learn"): the descendants of a process (--pid, and the tasks still
 * running when the command exits), the threads of a cgroup (--cgroup), and
 * whether learn runs in a PID namespace (the tracepoints report the pids
 * of the initial one).
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/cli.h"
#include "learn.h"

int learn_in_pid_ns(void)
{
	char line[256];
	int nested = 0;
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "NSpid:", 6) != 0)
			continue;
		/* one pid per namespace level: more than one, we are nested */
		nested = strchr(line + 6 + strspn(line + 6, " \t"), '\t') != NULL;
		break;
	}
	fclose(f);
	return nested;
}

struct proc {
	pid_t pid, ppid;
	char comm[16];
};

/* Every process of /proc: pid, parent, comm; the count, or -errno. */
static int proc_table(struct proc **out)
{
	struct proc *v = NULL;
	size_t n = 0, cap = 0;
	struct dirent *e;
	DIR *d = opendir("/proc");

	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		char p[300], buf[512];
		const char *rp;
		int fd;
		ssize_t r;

		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		snprintf(p, sizeof(p), "/proc/%s/stat", e->d_name);
		fd = open(p, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		r = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (r <= 0)
			continue;
		buf[r] = '\0';
		/* "PID (COMM) S PPID ...": COMM may hold ')' itself */
		rp = strrchr(buf, ')');
		if (!rp || !strchr(buf, '('))
			continue;
		if (n == cap) {
			struct proc *nv = realloc(v, (cap = cap ? cap * 2 : 512) * sizeof(*v));

			if (!nv) {
				free(v);
				closedir(d);
				return -ENOMEM;
			}
			v = nv;
		}
		v[n].pid = (pid_t)strtol(buf, NULL, 10);
		v[n].ppid = (pid_t)strtol(rp + 4, NULL, 10);
		snprintf(v[n].comm, sizeof(v[n].comm), "%.*s", (int)(rp - strchr(buf, '(') - 1),
			 strchr(buf, '(') + 1);
		n++;
	}
	closedir(d);
	*out = v;
	return (int)n;
}

/* Marks in @in the descendants of @root (and @root); their number. */
static int mark_tree(const struct proc *v, int n, pid_t root, char *in)
{
	int count = 0;
	bool more = true;

	if (!v || !in)
		return 0;
	for (int i = 0; i < n; i++) {
		in[i] = v[i].pid == root;
		count += in[i];
	}
	while (more) {
		more = false;
		for (int i = 0; i < n; i++) {
			if (in[i])
				continue;
			for (int j = 0; j < n; j++) {
				if (in[j] && v[j].pid == v[i].ppid) {
					in[i] = 1;
					count++;
					more = true;
					break;
				}
			}
		}
	}
	return count;
}

/* Follows every thread of process @pid. */
static int follow_threads(struct tracer *t, pid_t pid, const char *comm)
{
	char p[64];
	struct dirent *e;
	DIR *d;
	int r = 0;

	snprintf(p, sizeof(p), "/proc/%d/task", (int)pid);
	d = opendir(p);
	if (!d)
		return tracer_follow(t, (uint64_t)pid, comm);
	while (!r && (e = readdir(d)))
		if (isdigit((unsigned char)e->d_name[0]))
			r = tracer_follow(t, strtoull(e->d_name, NULL, 10), comm);
	closedir(d);
	return r;
}

int learn_follow_tree(struct tracer *t, pid_t pid)
{
	struct proc *v = NULL;
	int n = proc_table(&v), count, r = 0;
	char *in;

	if (n <= 0) {
		free(v);
		return n;
	}
	in = calloc((size_t)n + 1, 1);
	if (!in) {
		free(v);
		return -ENOMEM;
	}
	count = mark_tree(v, n, pid, in);
	for (int i = 0; i < n && !r; i++)
		if (in[i])
			r = follow_threads(t, v[i].pid, v[i].comm);
	free(in);
	free(v);
	return r ? r : count;
}

int learn_live_descendants(pid_t pid, char *buf, size_t len)
{
	struct proc *v = NULL;
	int n = proc_table(&v), count = 0;
	size_t off = 0;
	char *in;

	buf[0] = '\0';
	if (n <= 0) {
		free(v);
		return 0;
	}
	in = calloc((size_t)n + 1, 1);
	if (!in) {
		free(v);
		return 0;
	}
	mark_tree(v, n, pid, in);
	for (int i = 0; i < n; i++) {
		if (!in[i] || v[i].pid == pid)
			continue;
		count++;
		if (off < len)
			off += (size_t)snprintf(buf + off, len - off, "%s%d (%s)", off ? ", " : "",
						(int)v[i].pid, v[i].comm);
	}
	free(in);
	free(v);
	return count;
}

/* Follows the threads listed in DIR/cgroup.threads, and in every cgroup
 * below DIR; the number of threads, or -errno. */
int learn_follow_cgroup(struct tracer *t, const char *dir)
{
	char p[PATH_MAX + 32], line[32];
	struct dirent *e;
	int count = 0, r;
	FILE *f;
	DIR *d;

	snprintf(p, sizeof(p), "%s/cgroup.threads", dir);
	f = fopen(p, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if ((r = tracer_follow(t, strtoull(line, NULL, 10), NULL))) {
			fclose(f);
			return r;
		}
		count++;
	}
	fclose(f);
	d = opendir(dir);
	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		if (e->d_type != DT_DIR || e->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
		r = learn_follow_cgroup(t, p);
		if (r < 0 && r != -ENOENT) { /* a cgroup removed meanwhile is fine */
			closedir(d);
			return r;
		}
		count += r > 0 ? r : 0;
	}
	closedir(d);
	return count;
}

int learn_cgroup_rel(const char *dir, char *rel, size_t len)
{
	char real[PATH_MAX], line[PATH_MAX + 128], mnt[PATH_MAX] = "";
	FILE *f;

	if (!realpath(dir, real))
		return -errno;
	f = fopen("/proc/self/mounts", "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char dev[64], where[PATH_MAX], type[32];

		if (sscanf(line, "%63s %4095s %31s", dev, where, type) != 3 ||
		    strcmp(type, "cgroup2") != 0)
			continue;
		size_t wl = strlen(where);

		if (!strncmp(real, where, wl) && (real[wl] == '/' || !real[wl]) && wl > strlen(mnt))
			snprintf(mnt, sizeof(mnt), "%s", where);
	}
	fclose(f);
	if (!mnt[0])
		return -ENOTDIR;
	snprintf(rel, len, "%s", real[strlen(mnt)] ? real + strlen(mnt) : "/");
	return 0;
}

