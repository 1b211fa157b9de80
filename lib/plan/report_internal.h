/* SPDX-License-Identifier: MIT */
/*
 * Internal contract of reports (report.c): the decisions a report holds,
 * recording them, and the text helpers the describers share.  Not
 * installed.
 */
#ifndef IOUR_LIB_REPORT_INTERNAL_H
#define IOUR_LIB_REPORT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/internal.h"
#include "iouring_restrict/report.h"

struct iour__decision {
	uint32_t kind, reason, opcode, step;
	int32_t value;
	char *text; /* owned */
};

struct iour_report {
	uint32_t status;
	uint32_t mechanism;
	uint32_t flags;
	int32_t error;
	uint32_t steps_done;
	uint32_t steps_total;
	int32_t threads;
	struct iour__decision *d;
	size_t nd, capd;
	bool oom; /* a decision could not be recorded */
};

IOUR_INTERNAL void iour__report_init(struct iour_report *r);
IOUR_INTERNAL void iour__report_fini(struct iour_report *r);
IOUR_INTERNAL int iour__report_copy(struct iour_report *dst, const struct iour_report *src);
/* Record a decision (printf-style text).  Allocation failures set r->oom. */
IOUR_INTERNAL void iour__report_add(struct iour_report *r, uint32_t kind, uint32_t reason,
				    uint32_t opcode, uint32_t step, int32_t value, const char *fmt,
				    ...) __attribute__((format(printf, 7, 8)));

/* Text helpers shared by the describers: a growing buffer. */
struct iour__sb {
	char *buf;
	size_t len, cap;
	bool oom;
};
IOUR_INTERNAL void iour__sb_printf(struct iour__sb *sb, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
IOUR_INTERNAL void iour__sb_report(struct iour__sb *sb, const struct iour_report *r,
				   const char *indent);
/* Finish two-call sizing from a built buffer (frees it). */
IOUR_INTERNAL int iour__sb_out(struct iour__sb *sb, char *buf, size_t *len);

#endif /* IOUR_LIB_REPORT_INTERNAL_H */
