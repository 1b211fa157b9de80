/* SPDX-License-Identifier: MIT */
/*
 * The request watch of `iour-restrict run --audit` and `--log-denials`
 * (doc/cli.md, "run": audit mode and the denial log): the kernel's
 * io_uring tracepoints, read from a tracefs instance (learn_trace.c sets
 * it up), for the tasks the watching process forks and all they start.
 *
 * Audit: every request, register call and ring setup that the plan would
 * deny on the running kernel (its restriction entries, as the kernel
 * checks them), while nothing is enforced.  Denials: every request the
 * kernel failed with EACCES at submission (io_uring_req_failed) and every
 * register call it failed with EACCES (io_uring_register).  One line per
 * (pid, comm, opcode or register op, SQE flags), with counts, periodically
 * and at the end.
 */
#ifndef IOUR_CLI_WATCH_H
#define IOUR_CLI_WATCH_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include <stdint.h>

struct iour_plan;
struct watch;

/* A plan's restriction entries, as the kernel checks them (audit). */
struct watch_plan {
	bool classic, companion;
	bool op_ok[256], reg_ok[256], filtered[256];
	uint32_t fl_allowed, fl_required;
};

/* Reads @plan's entries into @w (zeroed first by the caller); 0 or -errno. */
int watch_plan_read(struct watch_plan *w, const struct iour_plan *plan);
/* Whether @w denies request @op with SQE flags @fl (-1: unknown): 1 deny,
 * 0 allow, 2 unknown (an argument filter decides). */
int watch_plan_denies(const struct watch_plan *w, unsigned op, int32_t fl);
/* Whether @w denies register opcode @op. */
bool watch_plan_reg_denies(const struct watch_plan *w, uint64_t op);
/* The SQE flags of a submit event's flags @fl, less an ASYNC bit the
 * opcode's preparation sets itself (@async_forced, tracer_mark_forced_async). */
uint32_t watch_sqe_flags(const struct watch_plan *w, const bool *async_forced, unsigned op,
			 int64_t fl);
/* Reading event text: the value after @key ("key=0x1f (31)", "key 22,"),
 * an opcode printed as its name after @key, the pid and comm of an event
 * line; 0 or -1. */
int watch_val(const char *s, const char *key, int64_t *out);
int watch_op_name(const char *s, const char *key, int64_t *out);
int watch_line_pid(const char *l, uint64_t *pid, char *comm);
/* "none", "unknown" (@fl < 0) or the flags' names joined by '|'. */
const char *watch_flags_str(int32_t fl, char *buf, size_t len);
/* The submit tracepoint's event name ("io_uring/io_uring_submit_req"). */
const char *watch_submit_event(void);

struct watch_opts {
	bool audit;                   /* report what @plan would deny */
	bool denials;                 /* report what the kernel denied */
	const struct iour_plan *plan; /* audit: the plan run would apply */
	bool broker;                  /* audit: the broker refuses SQPOLL, R_DISABLED */
	const char *log_path;         /* NULL: stderr */
	const char *label;            /* e.g. "container ID", or NULL */
	unsigned interval;            /* seconds between reports (0: 10) */
};

/* Sets the instance up and starts reading it in a thread; tasks forked by
 * this process from now on are followed.  0, or an exit code (printed). */
int watch_start(const struct watch_opts *o, struct watch **out);
/* Follows task @pid (and what it forks) too. */
void watch_follow(struct watch *w, pid_t pid);
/* What the running kernel lets the watch see, for the report line. */
const char *watch_note(const struct watch *w);
/* Reads the rest, prints the final report, removes the instance. */
void watch_stop(struct watch *w);
/* Writes the policy delta (--audit-out): a policy file that `merge`
 * accepts with @policy_path and that allows what the audit reported.
 * 0, or CLI_FAIL (printed). */
int watch_write_delta(struct watch *w, const char *policy_path, const char *out_path);
void watch_free(struct watch *w);

#endif /* IOUR_CLI_WATCH_H */
