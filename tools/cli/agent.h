/* SPDX-License-Identifier: MIT */
/*
 * iour-restrict agent: the objects of the OCI seccomp agent (cmd_agent.c)
 * and its log (agent_log.c).  doc/containers.md describes the agent.
 */
#ifndef IOUR_CLI_AGENT_H
#define IOUR_CLI_AGENT_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include <iouring_restrict/broker.h>

#define AGENT_ANNOTATION "org.iouring-restrict.policy"
/* A runtime has this long to send its message (then it is dropped). */
#define AGENT_CLIENT_TIMEOUT_MS 5000
/* The largest state message accepted (annotations included). */
#define AGENT_MSG_MAX (1U << 20)
/* Ring lines per container: a burst of this many, then this many per
 * second; the others are counted and the count is logged with the next
 * line (a container creating rings in a loop must not fill the log). */
#define AGENT_RING_LINES_BURST 20
#define AGENT_RING_LINES_PER_S 10
/* Runtimes connected at once, and fds accepted in one message. */
#define AGENT_CLIENTS_MAX 64
#define AGENT_FDS_MAX 16

enum ent_kind { ENT_LISTEN, ENT_SIGNAL, ENT_CLIENT, ENT_CONTAINER };

/* What an epoll event points to; the first member of every object. */
struct ent {
	enum ent_kind kind;
	bool dead; /* dropped: freed after the current batch */
	struct ent *grave_next;
};

struct client {
	struct ent ent;
	int fd;
	char *buf;
	size_t len;
	int fds[AGENT_FDS_MAX];
	int nfds;
	long long deadline_ms;
	struct client *next;
};

struct agent;

struct container {
	struct ent ent;
	struct agent *agent;
	char *id;
	int pid;
	char *policy;
	struct iour_broker *broker; /* NULL: every io_uring_setup gets EPERM */
	struct iour_plan *plan;
	int deny_fd; /* the listener when there is no broker */
	const char *deny_why;
	unsigned long refused;
	double line_tokens;       /* ring lines it may log now */
	long long line_ms;        /* when line_tokens was computed */
	unsigned long suppressed; /* ring lines not logged since the last */
	struct container *next;
};

/* --max-rings' default: each container's ring quota (broker.h, max_rings). */
#define AGENT_MAX_RINGS 1024U

struct agent {
	int epfd;
	int lfd;
	int sigfd;
	const char *sock_path;
	dev_t sock_dev;
	ino_t sock_ino;
	const char *log_path;
	FILE *log;
	char *policy_dir;   /* realpath of --policy-dir, or NULL */
	uint32_t max_rings; /* --max-rings: each container's ring quota (0: none) */
	struct client *clients;
	int nclients;
	struct container *containers;
	int ncontainers;
	struct ent *grave; /* dropped clients and containers of this batch */
};

/* The monotonic clock in milliseconds. */
long long agent_now_ms(void);
/* Writes @s to @f in logfmt (quoted and escaped as needed). */
void agent_log_str(FILE *f, const char *s);
/* Starts a log line (with a timestamp when logging to a file). */
FILE *agent_log_begin(struct agent *a);
/* Ends a log line and flushes it. */
void agent_log_end(FILE *f);
/* Logs one formatted line. */
void agent_log_msg(struct agent *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Starts a container's line: "container=ID pid=N ". */
FILE *agent_log_container(struct agent *a, const struct container *c);

#endif
