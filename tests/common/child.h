/* SPDX-License-Identifier: MIT */
/*
 * Test helpers: run a check in a forked child (so that seccomp filters,
 * no_new_privs or a faked kernel stay contained), and build seccomp filters
 * that make chosen io_uring calls fail the way other kernels would.
 */
#ifndef IOUR_TEST_CHILD_H
#define IOUR_TEST_CHILD_H

#include <stdint.h>
#include <stdio.h>
#include <sys/resource.h>

/* What a child reports back (lives in a shared page). */
struct child_msg {
	char text[1024];
};

/* Record a failed check and return 1 from the child function. */
#define CHK(m, cond)                                                                      \
	do {                                                                              \
		if (!(cond)) {                                                            \
			snprintf((m)->text, sizeof((m)->text), "%s:%d: check failed: %s", \
				 __FILE__, __LINE__, #cond);                              \
			return 1;                                                         \
		}                                                                         \
	} while (0)

/* Like CHK, with a formatted explanation. */
#define CHKF(m, cond, ...)                                                                \
	do {                                                                              \
		if (!(cond)) {                                                            \
			int n_ = snprintf((m)->text, sizeof((m)->text), "%s:%d: %s: ",    \
					  __FILE__, __LINE__, #cond);                     \
			if (n_ > 0 && (size_t)n_ < sizeof((m)->text))                     \
				snprintf((m)->text + n_, sizeof((m)->text) - (size_t)n_,  \
					 __VA_ARGS__);                                    \
			return 1;                                                         \
		}                                                                         \
	} while (0)

/*
 * Run fn(arg, msg) in a forked child and wait for it.  Returns the child's
 * exit status (0 = all checks passed), or 1000 + signal if it was killed.
 * `out` (optional) receives the child's message.
 */
int child_run(int (*fn)(void *arg, struct child_msg *m), void *arg, struct child_msg *out);

/* One seccomp rule: syscall `nr`, optionally only when the low 32 bits of
 * argument `arg` (0-5; -1 for any) equal `val`; the action is
 * SECCOMP_RET_ERRNO | errno_val, or SECCOMP_RET_KILL_PROCESS if kill. */
struct fake_rule {
	int nr;
	int arg;
	uint32_t val;
	int errno_val;
	int kill;
};

/* Set no_new_privs and install a filter made of `rules` (everything else
 * allowed).  0 or -errno. */
int fake_kernel_install(const struct fake_rule *rules, int n);

/* Number of open file descriptors of this process. */
int count_fds(void);

/* The value of a "Key:" line of /proc/self/status, or -1. */
long status_value(const char *key);

/* A full file-descriptor table, the real shortage that makes
 * io_uring_setup() fail with EMFILE: fd_table_fill() lowers RLIMIT_NOFILE to
 * 64 and duplicates descriptors until the table is full (0, or -errno if
 * the limit cannot be set or the table did not fill with EMFILE);
 * fd_table_release() closes them and restores the limit (0 or -errno). */
struct fd_table_fill {
	struct rlimit old;
	int first, last;
};
int fd_table_fill(struct fd_table_fill *s);
int fd_table_release(struct fd_table_fill *s);

/* Temporary files honour TMPDIR, as the shell's mktemp does: the test
 * directory is $TMPDIR when it is an absolute path, else /tmp.
 * test_tmp_template() writes "<dir>/<prefix>XXXXXX<suffix>" for
 * mkstemp()/mkstemps()/mkdtemp() (0, or -1 when it does not fit). */
const char *test_tmpdir(void);
int test_tmp_template(char *buf, size_t len, const char *prefix, const char *suffix);

/* NULL when a program copied into directory `dir` can be run there (and,
 * with `setuid`, its set-user-ID bit is honoured); else why not, naming
 * the mount option: a read-only, noexec or nosuid mount. */
const char *test_dir_exec_problem(const char *dir, int setuid);

#endif
