/* SPDX-License-Identifier: MIT */
/*
 * Report status and downgrade decisions as a table (issue 24): for each
 * kernel generation (the representative kernels of feature levels 0 to 5,
 * emulated: the planner reads a described kernel, no system call), each
 * policy shape, target and compatibility level, the status, flags,
 * mechanism and reasons the plan's report must give (doc/design.md,
 * report.h).  Every status transition has at least two independent rows
 * (other policy, target or generation).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "iouring_restrict/iouring_restrict.h"
#include "probe/kernel.h"
#include "plan/planner.h"

/* Policy shapes: %s = target, %s = compat, %s = noFilterFallback. */
#define HEAD                                                                               \
	"{ \"version\": 1, \"target\": \"%s\", \"compat\": \"%s\", \"noFilterFallback\": " \
	"\"%s\", "
enum shape { CLASSIC, SOCKET_FILTER, CONNECT_FILTER, NOTHING };
static const char *const shapes[] = {
	[CLASSIC] = HEAD "\"defaultAction\": \"deny\", \"entries\": [ { \"names\": [\"read\"], "
			 "\"action\": \"allow\" } ] }",
	[SOCKET_FILTER] = HEAD
	"\"defaultAction\": \"deny\", \"entries\": [ { \"names\": [\"socket\"], \"action\": "
	"\"allow\", \"args\": [ { \"field\": \"socket.family\", \"op\": \"==\", \"value\": "
	"\"AF_INET\" } ] } ] }",
	[CONNECT_FILTER] = HEAD
	"\"defaultAction\": \"deny\", \"entries\": [ { \"names\": [\"connect\"], \"action\": "
	"\"allow\", \"args\": [ { \"field\": \"connect.port\", \"op\": \"==\", \"value\": 443 } "
	"] } ] }",
	[NOTHING] = HEAD "\"defaultAction\": \"allow\", \"entries\": [] }",
};

#define L IOUR_REPORT_LOOSENED
#define T IOUR_REPORT_TIGHTENED
#define N IOUR_REPORT_NNP_SET

struct row {
	enum shape shape;
	const char *target, *compat, *fallback;
	uint32_t level;
	int status;
	uint32_t flags; /* exactly, IOUR_REPORT_PLANNED aside */
	uint32_t mech;
	/* reasons that must appear (0-terminated), and one that must not */
	uint32_t reasons[4];
	uint32_t absent;
};

#define R(...)              \
	{                   \
		__VA_ARGS__ \
	}
#define NONE 0

static void check_row(const struct row *w, size_t idx)
{
	char text[1024];
	struct iour_policy *p = NULL;
	struct iour_load_error err = { .sz = sizeof(err) };
	struct iour__kernel k;
	struct iour_plan *pl = NULL;
	const struct iour_report *r;
	bool seen[4] = { false }, bad = false;
	int n;

	snprintf(text, sizeof(text), shapes[w->shape], w->target, w->compat, w->fallback);
	cr_assert_eq(iour_policy__load_json(text, strlen(text), NULL, &p, &err), 0, "row %zu: %s",
		     idx, err.message);
	cr_assert_eq(iour__kernel_for_level(w->level, &k), 0);
	cr_assert_eq(iour__plan_build(p, &k, &pl), 0, "row %zu", idx);
	r = iour_plan__report(pl);
	cr_expect_eq(iour_report__status(r), w->status, "row %zu (level %u): status %d, want %d",
		     idx, w->level, iour_report__status(r), w->status);
	cr_expect_eq((uint32_t)iour_report__flags(r) & ~IOUR_REPORT_PLANNED, w->flags,
		     "row %zu (level %u): flags %#x, want %#x", idx, w->level,
		     (uint32_t)iour_report__flags(r) & ~IOUR_REPORT_PLANNED, w->flags);
	cr_expect_eq((uint32_t)iour_report__mechanism(r), w->mech,
		     "row %zu (level %u): mechanism %#x, want %#x", idx, w->level,
		     iour_report__mechanism(r), w->mech);
	n = iour_report__decision_cnt(r);
	cr_assert_geq(n, 0);
	for (int i = 0; i < n; i++) {
		struct iour_decision d = { .sz = sizeof(d) };

		cr_assert_eq(iour_report__decision(r, (size_t)i, &d), 0);
		for (size_t j = 0; j < 4 && w->reasons[j]; j++)
			if (d.reason == w->reasons[j])
				seen[j] = true;
		if (w->absent && d.reason == w->absent)
			bad = true;
	}
	for (size_t j = 0; j < 4 && w->reasons[j]; j++)
		cr_expect(seen[j], "row %zu (level %u): no decision with reason %u", idx, w->level,
			  w->reasons[j]);
	cr_expect(!bad, "row %zu (level %u): a decision with reason %u", idx, w->level, w->absent);
	iour_plan__free(pl);
	iour_policy__free(p);
}

static void check_rows(const struct row *rows, size_t n)
{
	for (size_t i = 0; i < n; i++)
		check_row(&rows[i], i);
}

#define ROWS(t) check_rows(t, sizeof(t) / sizeof(t[0]))

/* FULLY: the kernel holds the whole policy. */
Test(report_table, fully_enforced)
{
	static const struct row rows[] = {
		{ CLASSIC, "ring", "best-effort", "closed", 2, IOUR_STATUS_FULLY, 0,
		  IOUR_MECH_RING_DISABLED, R(0), IOUR_REASON_NO_RING_RESTRICTIONS },
		{ CLASSIC, "task", "best-effort", "closed", 4, IOUR_STATUS_FULLY, N, IOUR_MECH_TASK,
		  R(IOUR_REASON_NNP), IOUR_REASON_NO_TASK_RESTRICTIONS },
		{ SOCKET_FILTER, "ring", "hard", "closed", 4, IOUR_STATUS_FULLY, 0,
		  IOUR_MECH_RING | IOUR_MECH_RING_DISABLED, R(0), IOUR_REASON_NO_FILTERS },
		{ CONNECT_FILTER, "task", "soft", "closed", 5, IOUR_STATUS_FULLY, N, IOUR_MECH_TASK,
		  R(0), IOUR_REASON_NO_PAYLOAD },
		{ NOTHING, "task", "best-effort", "closed", 3, IOUR_STATUS_FULLY, 0, IOUR_MECH_NONE,
		  R(0), IOUR_REASON_COMPANION },
		{ NOTHING, "ring", "hard", "closed", 5, IOUR_STATUS_FULLY, 0, IOUR_MECH_NONE, R(0),
		  IOUR_REASON_COMPAT_HARD },
	};
	ROWS(rows);
}

/* PARTIALLY, tightened: the companion stands in for task restrictions
 * (levels 0-3), a filter the kernel cannot run denies its opcode. */
Test(report_table, partially_tightened)
{
	static const struct row rows[] = {
		{ CLASSIC, "task", "best-effort", "closed", 0, IOUR_STATUS_PARTIALLY, T | N,
		  IOUR_MECH_COMPANION, R(IOUR_REASON_NO_IO_URING, IOUR_REASON_COMPANION), NONE },
		{ SOCKET_FILTER, "task", "best-effort", "closed", 3, IOUR_STATUS_PARTIALLY, T | N,
		  IOUR_MECH_COMPANION,
		  R(IOUR_REASON_NO_TASK_RESTRICTIONS, IOUR_REASON_NO_FILTERS,
		    IOUR_REASON_COMPANION),
		  NONE },
		{ SOCKET_FILTER, "ring", "best-effort", "closed", 2, IOUR_STATUS_PARTIALLY, T,
		  IOUR_MECH_RING_DISABLED, R(IOUR_REASON_NO_FILTERS), NONE },
		{ CONNECT_FILTER, "ring", "best-effort", "closed", 3, IOUR_STATUS_PARTIALLY, T,
		  IOUR_MECH_RING_DISABLED, R(IOUR_REASON_NO_FILTERS), NONE },
		/* 7.0: filters but no CONNECT payload; fallback closed */
		{ CONNECT_FILTER, "ring", "best-effort", "closed", 4, IOUR_STATUS_PARTIALLY, T,
		  IOUR_MECH_RING_DISABLED, R(IOUR_REASON_NO_PAYLOAD), NONE },
		{ CONNECT_FILTER, "task", "best-effort", "closed", 4, IOUR_STATUS_PARTIALLY, T | N,
		  IOUR_MECH_TASK, R(IOUR_REASON_NO_PAYLOAD), IOUR_REASON_NO_FILTERS },
	};
	ROWS(rows);
}

/* NOT_ENFORCED: no io_uring restriction at all on the kernel (levels 0-1
 * for a ring), or a compatibility level that refuses a partial plan. */
Test(report_table, not_enforced)
{
	static const struct row rows[] = {
		{ CLASSIC, "ring", "best-effort", "closed", 0, IOUR_STATUS_NOT_ENFORCED, L,
		  IOUR_MECH_NONE, R(IOUR_REASON_NO_IO_URING), NONE },
		{ SOCKET_FILTER, "ring", "best-effort", "closed", 1, IOUR_STATUS_NOT_ENFORCED, L,
		  IOUR_MECH_NONE, R(IOUR_REASON_NO_RING_RESTRICTIONS), NONE },
		{ CLASSIC, "task", "soft", "closed", 3, IOUR_STATUS_NOT_ENFORCED, L, IOUR_MECH_NONE,
		  R(IOUR_REASON_COMPAT_SOFT), IOUR_REASON_COMPAT_HARD },
		{ SOCKET_FILTER, "ring", "soft", "closed", 2, IOUR_STATUS_NOT_ENFORCED, L,
		  IOUR_MECH_NONE, R(IOUR_REASON_NO_FILTERS, IOUR_REASON_COMPAT_SOFT), NONE },
		{ CLASSIC, "ring", "hard", "closed", 1, IOUR_STATUS_NOT_ENFORCED, L, IOUR_MECH_NONE,
		  R(IOUR_REASON_COMPAT_HARD), IOUR_REASON_COMPAT_SOFT },
		{ CONNECT_FILTER, "task", "hard", "closed", 4, IOUR_STATUS_NOT_ENFORCED, L,
		  IOUR_MECH_NONE, R(IOUR_REASON_NO_PAYLOAD, IOUR_REASON_COMPAT_HARD), NONE },
		/* nothing to restrict, nothing to enforce it with */
		{ NOTHING, "task", "best-effort", "closed", 1, IOUR_STATUS_NOT_ENFORCED, 0,
		  IOUR_MECH_NONE, R(IOUR_REASON_NO_RING_RESTRICTIONS), NONE },
		{ NOTHING, "ring", "best-effort", "closed", 0, IOUR_STATUS_NOT_ENFORCED, 0,
		  IOUR_MECH_NONE, R(IOUR_REASON_NO_IO_URING), NONE },
	};
	ROWS(rows);
}

/* The open fallback: a filter the kernel cannot run allows its opcode
 * unchecked, which loosens the policy. */
Test(report_table, partially_loosened_by_open_fallback)
{
	static const struct row rows[] = {
		{ SOCKET_FILTER, "ring", "best-effort", "open", 2, IOUR_STATUS_PARTIALLY, L,
		  IOUR_MECH_RING_DISABLED, R(IOUR_REASON_NO_FILTERS), NONE },
		{ CONNECT_FILTER, "ring", "best-effort", "open", 4, IOUR_STATUS_PARTIALLY, L,
		  IOUR_MECH_RING_DISABLED, R(IOUR_REASON_NO_PAYLOAD), NONE },
		{ CONNECT_FILTER, "task", "best-effort", "open", 4, IOUR_STATUS_PARTIALLY, L | N,
		  IOUR_MECH_TASK, R(IOUR_REASON_NO_PAYLOAD), NONE },
	};
	ROWS(rows);
}
