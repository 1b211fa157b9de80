/* SPDX-License-Identifier: MIT */
/*
 * The live tier (make check-live): the library's policies applied to the
 * REAL running kernel, each in a forked child, and confirmed by the
 * kernel's answers to real submissions and by the enforcement check
 * (iour_verify).  Nothing here is emulated.
 *
 * Every test states what it needs from the kernel; where the kernel (or
 * the level IOUR_FEATURE_LEVEL lowered it to) lacks it, the test is skipped
 * with the reason printed, e.g.
 *
 *   live: skipped: kernel lacks task-level restrictions (feature level 3, needs 4)
 *
 * Child functions report failures with CHK/CHKF (tests/common/child.h),
 * never with Criterion's assertions, which must not run in a forked child.
 */
#ifndef IOUR_TEST_LIVE_H
#define IOUR_TEST_LIVE_H

#include <criterion/criterion.h>
#include <liburing.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "child.h"
#include "iouring_restrict/iouring_restrict.h"

#define OP_NOP 0
#define OP_READV 1
#define OP_WRITEV 2
#define OP_CONNECT 16
#define OP_OPENAT 18
#define OP_READ 22
#define OP_WRITE 23
#define OP_OPENAT2 28
#define OP_SOCKET 45

#define REG_BUFFERS 0
#define REG_FILES 2

/* What a test needs from the running kernel (bits). */
enum live_need {
	LIVE_RING = 1 << 0,     /* per-ring restrictions (level 2) */
	LIVE_TASK = 1 << 1,     /* task-level restrictions, usable here (level 4) */
	LIVE_TASK_BPF = 1 << 2, /* task-level cBPF filters (level 4) */
	LIVE_RING_BPF = 1 << 3, /* ring-level cBPF filters (level 4) */
	LIVE_CONNECT = 1 << 4,  /* the CONNECT payload (level 5) */
};

/* The running kernel as the library sees it (cached probe). */
const struct iour_features *live_features(void);

/* NULL if the kernel offers everything in `need`, else the reason (a
 * static buffer). */
const char *live_missing(unsigned need);

/* Skip the calling test, saying why, unless the kernel offers `need`. */
#define LIVE_REQUIRE(need)                                                        \
	do {                                                                      \
		const char *why_ = live_missing(need);                            \
		if (why_) {                                                       \
			fprintf(stderr, "live: skipped: %s\n", why_); \
			cr_skip_test("skipped: %s", why_);                        \
		}                                                                 \
	} while (0)

/* Print one line of what a test checked (stderr, prefixed "live: "). */
void live_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Run fn in a forked child; on failure, fail the test with its message. */
#define LIVE_CHILD(fn, arg)                                                         \
	do {                                                                        \
		struct child_msg m_;                                                \
		int rc_;                                                            \
		memset(&m_, 0, sizeof(m_));                                         \
		rc_ = child_run((fn), (arg), &m_);                                  \
		cr_assert_eq(rc_, 0, "child %s: status %d: %s", #fn, rc_, m_.text); \
	} while (0)

/* ---- policies (for children: errors are returned, never asserted) ---- */

/* A policy with classic part `rs` (may be NULL), filters `flt` (may be
 * NULL), target and default verdict.  0 or -errno. */
int live_policy(struct iour_policy **out, uint32_t target, const struct iour_ruleset *rs,
		const struct iour_filter *flt, uint32_t dflt);

/* A filter set: one rule `verdict` for `opcode` with one comparison, and
 * the opcode's default `dflt`.  Adds to *f (created when NULL). */
int live_rule(struct iour_filter **f, uint32_t opcode, uint32_t verdict, uint32_t field,
	      uint32_t op, uint64_t value, uint64_t arg, uint32_t dflt);

/* The plan's expected report and the executor's report must say `status`
 * and contain the `mech` bits; text for CHKF on mismatch. */
int live_report_is(const struct iour_report *r, int status, int mech, char *why, size_t len);

/* The filter flags (DENY_REST 1, SZ_STRICT 2) and pdu_size (<< 8) of the
 * plan's BPF_FILTER step for `opcode`, or -1 if it has none. */
int live_filter_flags(const struct iour_plan *pl, uint32_t opcode);

/* Print a plan (iour_plan__describe) to stderr, indented. */
void live_print_plan(const struct iour_plan *pl);
/* Print a report (iour_report__describe) to stderr. */
void live_print_report(const char *title, const struct iour_report *r);

/* ---- enforcement check ---- */

/* One request of a check (zeroes the rest). */
struct iour_verify_req live_req(uint32_t opcode, uint32_t expect);
struct iour_verify_req live_socket(int family, int type, uint32_t expect);
struct iour_verify_req live_open(uint32_t opcode, const char *path, uint64_t flags,
				 uint64_t resolve, uint32_t expect);

enum live_verify_mode { LV_PLAIN, LV_EXEC, LV_RING };

/*
 * iour_verify() in `mode` (LV_RING: on ring_fd).  Returns its result; on a
 * mismatch or failure writes a one-line description of every request the
 * kernel answered differently into why.  LV_EXEC needs the helper
 * iour-verify-helper in the examples' directory: with no such directory
 * (the binary run on its own) the call returns -ENOENT, which callers may
 * accept; with the directory but no helper (a broken build tree or guest
 * image) it returns -ENOEXEC, which no caller accepts.
 */
int live_verify(const struct iour_verify_req *reqs, size_t n, enum live_verify_mode mode,
		int ring_fd, char *why, size_t len);

/* The examples' directory: IOUR_EXAMPLES_DIR, else ../examples next to
 * this binary (the build tree's layout); NULL if neither exists. */
const char *live_examples_dir(void);

/* A test program or tool by its build-tree path REL ("tools/iour-restrict",
 * "tests/broker-try") next to the examples' directory, else the guests'
 * progs/BASENAME (scripts/guest-payloads/30-cli.sh); fails the test if it
 * is missing or not executable. */
void live_prog_path(char *buf, size_t len, const char *rel);

/* The whole content of fd (from its start), NUL-terminated; free() it. */
char *live_slurp(int fd);

/* Runs argv with `in` (or nothing) on stdin; stdout and stderr into *out
 * and *err (free() them); the exit status, 128 + signal if killed. */
int live_run_argv(char *const argv[], const char *in, char **out, char **err);

/* The exec helper (iour-verify-helper in the examples' directory), or
 * NULL. */
const char *live_helper(void);

/* Run an example (argv[0] is its name in the examples' directory) without
 * a shell, stdout and stderr into out; its exit status, 1000 + signal if
 * killed, or -errno if it could not be started. */
int live_run_example(char *const argv[], char *out, size_t cap);

/* What live_submit() returns when the SQE could not be submitted or no
 * matching completion arrived (never a CQE result). */
#define LIVE_NO_CQE (-100000)

/* Submit one prepared SQE on a liburing ring and return its CQE's res. */
int live_submit(struct io_uring *ring, struct io_uring_sqe *sqe);

/* Refresh the probe (a task that just restricted itself must plan with
 * the kernel's new answers). */
int live_refresh(struct iour_features *f);

#endif /* IOUR_TEST_LIVE_H */
