/* SPDX-License-Identifier: MIT */
/*
 * iour-restrict agent: the objects of the OCI seccomp agent (cmd_agent.c),
 * its configuration file (agent_config.c) and its log (agent_log.c).
 * doc/containers.md and doc/agent.md describe the agent.
 */
#ifndef IOUR_CLI_AGENT_H
#define IOUR_CLI_AGENT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <jansson.h>

#include <iouring_restrict/broker.h>

#include "learn/learn.h" /* struct set */

#define AGENT_ANNOTATION "org.iouring-restrict.policy"
/* "audit" or "enforce" (the default): doc/agent.md, "Audit mode". */
#define AGENT_MODE_ANNOTATION "org.iouring-restrict.mode"
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

/* Where a container's policy came from (doc/agent.md, "Policy
 * selection"), in the order they are tried. */
enum agent_source {
	AGENT_SRC_NONE,
	AGENT_SRC_ANNOTATION, /* the annotation org.iouring-restrict.policy */
	AGENT_SRC_METADATA,   /* the profile's listenerMetadata: a name in --policy-dir */
	AGENT_SRC_CONFIG,     /* a rule of --config: a name in --policy-dir */
	AGENT_SRC_DEFAULT,    /* --default-policy */
};

const char *agent_source_str(enum agent_source s);

/* A rule of the --config file: a container whose annotation @annotation
 * has a value matching @value (fnmatch(3); NULL: any value) gets the
 * policy @policy, a file name in --policy-dir. */
struct agent_rule {
	char *annotation;
	char *value;
	char *policy;
};

struct agent_config {
	struct agent_rule *rules;
	size_t nrules;
};

/* A container's counts, on its gone line and in the status lines (more
 * may be added: each is one field of those lines). */
struct agent_counts {
	uint64_t served;     /* rings installed */
	uint64_t refused;    /* io_uring_setup() calls answered with an errno, */
	uint64_t quota;      /* ... of which for --max-rings */
	uint64_t deadline;   /* ... the worker did not answer in time */
	uint64_t busy;       /* ... no worker could be started */
	uint64_t accounting; /* ... the ring could not be charged to the container */
	uint64_t denials;    /* requests and register calls denied (--log-denials) */
	bool denials_known;  /* denials is counted (else logged as null / left out) */
};

enum ent_kind { ENT_LISTEN, ENT_SIGNAL, ENT_CLIENT, ENT_CONTAINER, ENT_CONTROL };

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
struct agent_watch;
struct agent_watched;
struct iour_plan;

struct container {
	struct ent ent;
	struct agent *agent;
	char *id;
	int pid;
	char *policy;
	enum agent_source source;
	long long start_ms;         /* when the agent took it (agent_now_ms) */
	struct iour_broker *broker; /* NULL: every io_uring_setup gets EPERM */
	struct iour_plan *plan;
	int deny_fd; /* the listener when there is no broker */
	const char *deny_why;
	unsigned long refused;
	double line_tokens;            /* ring lines it may log now */
	long long line_ms;             /* when line_tokens was computed */
	unsigned long suppressed;      /* ring lines not logged since the last */
	bool audit;                    /* mode=audit: rings NOT restricted */
	struct iour_plan *audit_plan;  /* audit: the policy's plan, for the verdicts */
	struct agent_watched *watched; /* audit or --log-denials: its watch (agent_watch.c) */
	uint64_t denials;              /* denials seen (--log-denials) */
	bool denials_counted;          /* ... and counted (tracefs could be read) */
	struct set tasks;              /* the tasks its rings were asked by (agent_watch.c) */
	ino_t pidns;                   /* its init's PID namespace (0: the host's, or unknown) */
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
	const char *ctl_path; /* --control: the status socket, or NULL */
	int cfd;
	dev_t ctl_dev;
	ino_t ctl_ino;
	const char *log_path;
	FILE *log;
	bool json;                  /* --log-format json */
	const char *policy_dir_arg; /* --policy-dir as given (resolved again on SIGHUP) */
	char *policy_dir;           /* realpath of --policy-dir, or NULL */
	const char *default_policy; /* --default-policy, or NULL */
	const char *config_path;    /* --config, or NULL */
	struct agent_config config; /* its rules, as last loaded */
	unsigned long reloads;      /* SIGHUPs that loaded the configuration */
	uint32_t max_rings;         /* --max-rings: each container's ring quota (0: none) */
	struct client *clients;
	int nclients;
	struct container *containers;
	int ncontainers;
	struct ent *grave;         /* dropped clients and containers of this batch */
	bool log_denials;          /* --log-denials */
	unsigned report_interval;  /* --report-interval (seconds) */
	struct agent_watch *watch; /* the tracefs instance, while needed */
	bool watch_failed;         /* it could not be made (no root or tracefs) */
};

/* The monotonic clock in milliseconds. */
long long agent_now_ms(void);
/* Writes @s to @f in logfmt (quoted and escaped as needed). */
void agent_log_str(FILE *f, const char *s);

/* A log line being built: agent_line_begin(), fields, agent_line_end(). */
struct agent_line {
	FILE *f;
	bool json;
};

/* Starts a line of @event (NULL: none, in logfmt), of the container @id
 * with init @pid if @id is not NULL. */
struct agent_line agent_line_begin(struct agent *a, const char *event, const char *id, int pid);
struct agent_line agent_line_container(struct agent *a, const char *event,
				       const struct container *c);
/* A string field (quoted in logfmt when needed). */
void agent_line_str(struct agent_line *l, const char *key, const char *v);
/* A string field written unquoted in logfmt (a value the agent chose). */
void agent_line_raw(struct agent_line *l, const char *key, const char *v);
void agent_line_fmt(struct agent_line *l, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void agent_line_u64(struct agent_line *l, const char *key, unsigned long long v);
void agent_line_int(struct agent_line *l, const char *key, long long v);
/* A field not counted yet: null in JSON, left out in logfmt. */
void agent_line_null(struct agent_line *l, const char *key);
void agent_line_end(struct agent_line *l);
/* Logs one free-text line. */
void agent_log_msg(struct agent *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* agent_config.c: is @name a plain file name (no '/', not starting with
 * '.', no control bytes)? */
bool agent_policy_name_ok(const char *name);
/* Loads the --config file @path into @out (empty on error); 0 or a
 * negative errno with @err (of @errlen bytes) saying why.  Every rule's
 * policy must be a plain name of a file in @policy_dir that loads. */
int agent_config_load(const char *path, const char *policy_dir, struct agent_config *out, char *err,
		      size_t errlen);
void agent_config_free(struct agent_config *c);
/* The first rule matching the annotations @ann (a JSON object), or NULL. */
const struct agent_rule *agent_config_match(const struct agent_config *c, const json_t *ann);

/* agent_watch.c: audit mode and the denial log (doc/agent.md).  The
 * instance is made when first needed; 0 or -errno (logged). */
int agent_watch_start(struct agent *a);
/* Watches container @c if it audits (with @plan, its policy's plan) or
 * --log-denials is on; 0 or -errno (then @c is not watched). */
int agent_watch_add(struct agent *a, struct container *c, const struct iour_plan *plan);
/* What the watch of @c does, for its new line. */
const char *agent_watch_note(const struct agent *a, const struct container *c);
/* Task @task (the agent's PID namespace) asked @c for a ring. */
void agent_watch_ring(struct container *c, int task);
/* Reads what the trace holds, logs @c's totals, stops watching @c. */
void agent_watch_gone(struct agent *a, struct container *c);
/* Reads the trace and logs the periodic lines when due; the ms until
 * the next call is due, or -1 when nothing is watched. */
int agent_watch_tick(struct agent *a);
void agent_watch_close(struct agent *a);

#endif
