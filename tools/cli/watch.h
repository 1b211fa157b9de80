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

struct iour_plan;
struct watch;

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
