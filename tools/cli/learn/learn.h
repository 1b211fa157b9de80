/* SPDX-License-Identifier: MIT */
/*
 * The parts of `iour-restrict learn` (doc/cli.md, "learn"):
 *   learn_trace.c   the tracefs instance: setup, removal, stale instances,
 *                   and the cleanup a fatal signal does;
 *   learn_parse.c   the followed tasks and the parsing of trace events;
 *   learn_policy.c  the policy text, the summary, and the safe output file;
 *   learn_procs.c   /proc and cgroup v2: descendants, cgroup members;
 *   cmd_learn.c     the command line and the recording loop.
 */
#ifndef IOUR_CLI_LEARN_H
#define IOUR_CLI_LEARN_H

#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "iouring_restrict/names.h"

/* Exit codes of learn, beyond CLI_OK, CLI_FAIL and CLI_USAGE. */
/* 3 is the CLI's "policy file not valid", which learn never reads. */
#define LEARN_NO_TRACING 4 /* not root, no tracefs or tracepoints, PID namespace */
#define LEARN_CMD_FAILED 5 /* the command failed; the policy was written */
#define LEARN_NOTHING 6    /* nothing was recorded; no policy was written */

#define NOPS 256       /* request opcodes are one byte */
#define NREG 256       /* register opcodes we count one by one */
#define NFLAGS 7       /* IOSQE_* bits 0..6 */
#define SQPOLL_FLAG 2u /* IORING_SETUP_SQPOLL (not in the public API) */
#define ASYNC_BIT 4u   /* IOSQE_ASYNC_BIT */
_Static_assert((1u << NFLAGS) - 1 == IOUR_SQE__VALID, "NFLAGS: the SQE flags");
_Static_assert(1u << ASYNC_BIT == IOUR_SQE_ASYNC, "ASYNC_BIT: IOSQE_ASYNC");

struct learned {
	uint64_t op[NOPS];
	uint64_t op_sqpoll[NOPS];   /* of op[], by SQPOLL threads */
	uint32_t op_flags[NOPS];    /* SQE flags seen, per opcode */
	uint64_t flag[NFLAGS];      /* requests carrying each flag */
	bool async_ambiguous[NOPS]; /* bit 4 seen, not recorded */
	uint64_t reg_ok[NREG], reg_fail[NREG];
	uint64_t reg_other; /* register opcodes >= NREG */
	uint64_t nreq, nreg, rings, sqpoll_rings;
	uint64_t lost;       /* events overwritten or dropped */
	uint64_t unreadable; /* followed tasks' submit events whose opcode or
			      * flags learn could not read */
	bool flags_unknown;  /* the submit tracepoint has no flags (5.10) */
	size_t ntasks;
};

/* A growable set of numbers (ring addresses, pids); small, linear. */
struct set {
	uint64_t *v;
	size_t n, cap;
};

bool set_has(const struct set *s, uint64_t x);
int set_add(struct set *s, uint64_t x);
void set_del(struct set *s, uint64_t x);

/* One followed task (a thread id), and what it used (--per-task). */
struct task {
	uint64_t pid;
	bool gone; /* it exited: its pid may be reused by another task */
	char comm[16];
	uint64_t nreq, nreg;
	uint64_t ops[NOPS / 64], regs[NREG / 64];
};

struct tracer {
	struct task *task;
	size_t ntask, cap;
	size_t last;        /* index of the last task found (a cache) */
	struct set rings;   /* ctx of the rings followed tasks created */
	struct set strange; /* pids checked and found outside the cgroup */
	struct learned *l;
	bool async_forced[NOPS]; /* opcodes whose prep sets IOSQE_ASYNC's bit */
	pid_t self, child;       /* learn's pid; the command's (0 when attached) */
	bool saw_start;          /* the fork of the command was recorded */
	const char *cgroup_rel;  /* --cgroup: its path under the cgroup2 mount */
};

/* Adds (or revives) a followed task; 0 or -ENOMEM. */
int tracer_follow(struct tracer *t, uint64_t pid, const char *comm);
/* The live followed task @pid, or NULL. */
struct task *tracer_find(struct tracer *t, uint64_t pid);
/* Opcodes whose preparation sets the request's ASYNC bit itself. */
void tracer_mark_forced_async(struct tracer *t);
/* Reads what trace_pipe @fd has now; bytes read, or -errno. */
ssize_t tracer_drain(struct tracer *t, int fd, char *buf, size_t size, size_t *held);

/* ---- learn_trace.c */
extern char learn_inst[PATH_MAX];  /* our instance; "" when there is none */
extern volatile int learn_pipe_fd; /* its trace_pipe, closed on a fatal signal */
extern volatile pid_t learn_child; /* the command, told of a fatal signal */
/* The keys parse_line reads; set by learn_setup_instance(). */
struct learn_keys {
	const char *submit;                 /* " io_uring_submit_req: " */
	const char *ctx, *op, *flags, *sqt; /* submit */
	const char *rop, *ret;              /* register */
	const char *cctx, *cflags;          /* create */
	const char *ppid, *cpid, *ccomm;    /* sched_process_fork */
	const char *epid;                   /* sched_process_exit */
	int ptr_base;                       /* ring pointers: 0 (0x...) or 16 */
	bool op_name;                       /* the opcode is printed as its name */
};
extern struct learn_keys learn_keys;

/* Creates and configures the instance; 0, or an exit code (message printed). */
int learn_setup_instance(unsigned buffer_kb);
/* Writes @val to @rel under the instance; 0 or -errno. */
int learn_inst_write(const char *rel, const char *val);
/* Removes the instance and unmounts tracefs if learn mounted it. */
void learn_remove_instance(void);
/* Events overwritten or dropped in the instance. */
uint64_t learn_lost_events(void);
/* Removes the instances of learners that no longer run; how many. */
int learn_clean_stale(void);
/* Installs the signal handlers (doc/cli.md, "learn": signals); the
 * stopping ones set learn_stop_signal. */
void learn_signals_install(void);
void learn_signals_restore(void);
extern volatile sig_atomic_t learn_stop_signal, learn_stop_from_tty;

/* ---- learn_policy.c: the output file */
struct learn_out {
	bool std;       /* "-o -": standard output */
	int dirfd;      /* the target's directory */
	char base[256]; /* the target's name in it */
	char tmp[256];  /* the new file's name in it */
	FILE *f;
};
/* Checks the target and creates the new file; 0 or CLI_FAIL (printed). */
int learn_out_open(struct learn_out *o, const char *path);
/* Renames the new file over the target; 0 or CLI_FAIL (printed). */
int learn_out_commit(struct learn_out *o, const char *path);
/* Removes the new file (async-signal-safe when @o is the registered one). */
void learn_out_abort(struct learn_out *o);
extern struct learn_out *volatile learn_out_current;

/* @how: how the recording ended ("it exited with 0"), for the comment. */
int learn_write_policy(FILE *out, const struct tracer *t, char **cmd, const char *what,
		       const char *how, bool per_task);
void learn_summary(const struct learned *L);
/* learn's warnings and suggestions on stderr (advice.h). */
void learn_advise(const struct learned *L);

/* ---- learn_procs.c */
/* 1 if learn runs in a PID namespace other than the initial one, as far
 * as /proc shows; 0 otherwise. */
int learn_in_pid_ns(void);
/* Follows every thread of @pid and of every descendant of it; the number
 * of processes, or -errno. */
int learn_follow_tree(struct tracer *t, pid_t pid);
/* Follows every thread of cgroup @dir and its descendants; the number of
 * threads, or -errno. */
int learn_follow_cgroup(struct tracer *t, const char *dir);
/* The path of cgroup directory @dir under the cgroup2 mount, in @rel;
 * 0 or -errno. */
int learn_cgroup_rel(const char *dir, char *rel, size_t len);
/* Prints "PID (COMM)" of the live descendants of @pid, comma-separated, in
 * @buf; their number. */
int learn_live_descendants(pid_t pid, char *buf, size_t len);

#endif /* IOUR_CLI_LEARN_H */
