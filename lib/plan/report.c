/* SPDX-License-Identifier: MIT */
/*
 * Reports: the status, mechanism and decisions of a plan or of an
 * application, and their text form.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/internal.h"
#include "report_internal.h"

void iour__report_init(struct iour_report *r)
{
	memset(r, 0, sizeof(*r));
}

void iour__report_fini(struct iour_report *r)
{
	size_t i;

	for (i = 0; i < r->nd; i++)
		iour__free(r->d[i].text);
	iour__free(r->d);
	r->d = NULL;
	r->nd = r->capd = 0;
}

int iour__report_copy(struct iour_report *dst, const struct iour_report *src)
{
	size_t i;

	*dst = *src;
	dst->d = NULL;
	dst->nd = dst->capd = 0;
	if (!src->nd)
		return 0;
	dst->d = iour__calloc(src->nd, sizeof(*dst->d));
	if (!dst->d)
		return -ENOMEM;
	dst->capd = src->nd;
	for (i = 0; i < src->nd; i++) {
		dst->d[i] = src->d[i];
		dst->d[i].text = iour__strdup(src->d[i].text);
		if (!dst->d[i].text) {
			iour__report_fini(dst);
			return -ENOMEM;
		}
		dst->nd++;
	}
	return 0;
}

void iour__report_add(struct iour_report *r, uint32_t kind, uint32_t reason, uint32_t opcode,
		      uint32_t step, int32_t value, const char *fmt, ...)
{
	struct iour__decision *d;
	va_list ap;
	char *text;
	int n;

	if (r->nd == r->capd) {
		size_t ncap = r->capd ? r->capd * 2 : 8;
		struct iour__decision *nd = iour__realloc(r->d, ncap * sizeof(*nd));

		if (!nd) {
			r->oom = true;
			return;
		}
		r->d = nd;
		r->capd = ncap;
	}
	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || !(text = iour__malloc((size_t)n + 1))) {
		r->oom = true;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(text, (size_t)n + 1, fmt, ap);
	va_end(ap);
	d = &r->d[r->nd++];
	d->kind = kind;
	d->reason = reason;
	d->opcode = opcode;
	d->step = step;
	d->value = value;
	d->text = text;
}

/* ---- text ---- */

void iour__sb_printf(struct iour__sb *sb, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (sb->oom)
		return;
	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0) {
		sb->oom = true;
		return;
	}
	if (sb->len + (size_t)n + 1 > sb->cap) {
		size_t ncap = sb->cap ? sb->cap : 256;
		char *nb;

		while (ncap < sb->len + (size_t)n + 1)
			ncap *= 2;
		nb = iour__realloc(sb->buf, ncap);
		if (!nb) {
			sb->oom = true;
			return;
		}
		sb->buf = nb;
		sb->cap = ncap;
	}
	va_start(ap, fmt);
	vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	sb->len += (size_t)n;
}

int iour__sb_out(struct iour__sb *sb, char *buf, size_t *len)
{
	size_t need = sb->len + 1;
	int rc = 0;

	if (sb->oom) {
		rc = -ENOMEM;
	} else if (!buf) {
		*len = need;
	} else if (*len < need) {
		*len = need;
		rc = -ERANGE;
	} else {
		if (sb->len)
			memcpy(buf, sb->buf, sb->len);
		buf[sb->len] = '\0';
		*len = need;
	}
	iour__free(sb->buf);
	sb->buf = NULL;
	sb->len = sb->cap = 0;
	return rc;
}

static void mech_str(struct iour__sb *sb, uint32_t m)
{
	static const struct {
		uint32_t bit;
		const char *name;
	} tab[] = {
		{ IOUR_MECH_TASK, "task" },
		{ IOUR_MECH_RING_DISABLED, "R_DISABLED ring" },
		{ IOUR_MECH_RING, "ring filters" },
		{ IOUR_MECH_COMPANION, "seccomp companion" },
	};
	bool first = true;
	size_t i;

	if (!m) {
		iour__sb_printf(sb, "none");
		return;
	}
	for (i = 0; i < IOUR_ARRAY_SIZE(tab); i++) {
		if (!(m & tab[i].bit))
			continue;
		iour__sb_printf(sb, "%s%s", first ? "" : " + ", tab[i].name);
		first = false;
	}
}

void iour__sb_report(struct iour__sb *sb, const struct iour_report *r, const char *ind)
{
	static const struct {
		uint32_t bit;
		const char *name;
	} ftab[] = {
		{ IOUR_REPORT_LOOSENED, "loosened" },
		{ IOUR_REPORT_TIGHTENED, "tightened" },
		{ IOUR_REPORT_NNP_SET, "no_new_privs" },
		{ IOUR_REPORT_OTHER_THREADS, "other-threads" },
		{ IOUR_REPORT_STOPPED, "stopped" },
		{ IOUR_REPORT_RING_ONLY, "ring-only" },
		{ IOUR_REPORT_PLANNED, "planned" },
	};
	size_t i;

	iour__sb_printf(sb, "%sstatus: %s\n%smechanism: ", ind, iour_status_str((int)r->status),
			ind);
	mech_str(sb, r->mechanism);
	iour__sb_printf(sb, "\n%sflags:", ind);
	if (!r->flags)
		iour__sb_printf(sb, " none");
	for (i = 0; i < IOUR_ARRAY_SIZE(ftab); i++)
		if (r->flags & ftab[i].bit)
			iour__sb_printf(sb, " %s", ftab[i].name);
	iour__sb_printf(sb, "\n%ssteps: %u of %u%s\n", ind, r->steps_done, r->steps_total,
			(r->flags & IOUR_REPORT_PLANNED) ? " done (nothing applied yet)" : " done");
	if (r->error)
		iour__sb_printf(sb, "%serror: %s (%d)\n", ind, iour_errname(r->error), r->error);
	if (r->threads > 0)
		iour__sb_printf(sb, "%sthreads: %d\n", ind, r->threads);
	iour__sb_printf(sb, "%sdecisions: %zu\n", ind, r->nd);
	for (i = 0; i < r->nd; i++)
		iour__sb_printf(sb, "%s  - %s: %s\n", ind, iour_decision_kind_str(r->d[i].kind),
				r->d[i].text);
}

/* ---- public ---- */

/* Documented in include/iouring_restrict/report.h */
void iour_report__free(struct iour_report *r)
{
	if (!r)
		return;
	iour__report_fini(r);
	iour__free(r);
}

/* Documented in include/iouring_restrict/report.h */
int iour_report__status(const struct iour_report *r)
{
	return r ? (int)r->status : -EINVAL;
}

/* Documented in include/iouring_restrict/report.h */
int iour_report__mechanism(const struct iour_report *r)
{
	return r ? (int)r->mechanism : -EINVAL;
}

/* Documented in include/iouring_restrict/report.h */
int iour_report__flags(const struct iour_report *r)
{
	return r ? (int)r->flags : -EINVAL;
}

/* Documented in include/iouring_restrict/report.h */
int iour_report__steps(const struct iour_report *r, uint32_t *done, uint32_t *total)
{
	if (!r)
		return -EINVAL;
	if (done)
		*done = r->steps_done;
	if (total)
		*total = r->steps_total;
	return 0;
}

/* Documented in include/iouring_restrict/report.h */
int iour_report__error(const struct iour_report *r, int32_t *err)
{
	if (!r || !err)
		return -EINVAL;
	*err = r->error;
	return 0;
}

/* Documented in include/iouring_restrict/report.h */
int iour_report__threads(const struct iour_report *r)
{
	if (!r)
		return -EINVAL;
	return r->threads > 0 ? r->threads : 0;
}

/* Documented in include/iouring_restrict/report.h */
int iour_report__decision_cnt(const struct iour_report *r)
{
	return r ? (int)r->nd : -EINVAL;
}

/* Documented in include/iouring_restrict/report.h */
int iour_report__decision(const struct iour_report *r, size_t i, struct iour_decision *out)
{
	struct iour_decision v;
	size_t n;

	if (!r || !out || out->sz < offsetof(struct iour_decision, kind) + 4)
		return -EINVAL;
	if (i >= r->nd)
		return -ERANGE;
	memset(&v, 0, sizeof(v));
	v.sz = out->sz;
	v.kind = r->d[i].kind;
	v.reason = r->d[i].reason;
	v.opcode = r->d[i].opcode;
	v.step = r->d[i].step;
	v.value = r->d[i].value;
	v.text = r->d[i].text;
	n = out->sz < sizeof(v) ? out->sz : sizeof(v);
	memcpy(out, &v, n);
	return 0;
}

/* Documented in include/iouring_restrict/report.h */
int iour_report__describe(const struct iour_report *r, char *buf, size_t *len)
{
	struct iour__sb sb = { 0 };

	if (!r || !len)
		return -EINVAL;
	iour__sb_report(&sb, r, "");
	return iour__sb_out(&sb, buf, len);
}

/* Documented in include/iouring_restrict/report.h */
const char *iour_status_str(int status)
{
	switch (status) {
	case IOUR_STATUS_FULLY:
		return "fully enforced";
	case IOUR_STATUS_PARTIALLY:
		return "partially enforced";
	case IOUR_STATUS_NOT_ENFORCED:
		return "not enforced";
	default:
		return "unknown";
	}
}

/* Documented in include/iouring_restrict/report.h */
const char *iour_decision_kind_str(uint32_t kind)
{
	switch (kind) {
	case IOUR_DECISION_DROPPED:
		return "dropped";
	case IOUR_DECISION_TIGHTENED:
		return "tightened";
	case IOUR_DECISION_LOOSENED:
		return "loosened";
	case IOUR_DECISION_CLAMPED:
		return "clamped";
	case IOUR_DECISION_NEGOTIATED:
		return "negotiated";
	case IOUR_DECISION_NOTE:
		return "note";
	case IOUR_DECISION_FAILED:
		return "failed";
	default:
		return "invalid";
	}
}

/* Documented in include/iouring_restrict/report.h */
const char *iour_reason_str(uint32_t reason)
{
	static const char *const names[] = {
		[IOUR_REASON_NONE] = "none",
		[IOUR_REASON_NO_IO_URING] = "no_io_uring",
		[IOUR_REASON_NO_RING_RESTRICTIONS] = "no_ring_restrictions",
		[IOUR_REASON_NO_TASK_RESTRICTIONS] = "no_task_restrictions",
		[IOUR_REASON_NO_FILTERS] = "no_filters",
		[IOUR_REASON_NO_PAYLOAD] = "no_payload",
		[IOUR_REASON_UNKNOWN_OPCODE] = "unknown_opcode",
		[IOUR_REASON_COMPANION] = "companion",
		[IOUR_REASON_COMPAT_SOFT] = "compat_soft",
		[IOUR_REASON_COMPAT_HARD] = "compat_hard",
		[IOUR_REASON_THREADS] = "threads",
		[IOUR_REASON_STEP_FAILED] = "step_failed",
		[IOUR_REASON_ALREADY_RESTRICTED] = "already_restricted",
		[IOUR_REASON_EXISTING_RINGS] = "existing_rings",
		[IOUR_REASON_NOT_EXPRESSIBLE] = "not_expressible",
		[IOUR_REASON_NNP] = "nnp",
		[IOUR_REASON_RING_LEFT_DISABLED] = "ring_left_disabled",
		[IOUR_REASON_SHADOWED] = "shadowed",
		[IOUR_REASON_KERNEL_MISMATCH] = "kernel_mismatch",
		[IOUR_REASON_FIXED_FILES] = "fixed_files",
		[IOUR_REASON_EFFECT_CLOSED] = "effect_closed",
		[IOUR_REASON_EFFECT_FILTERED] = "effect_filtered",
		[IOUR_REASON_EFFECT_OPEN] = "effect_open",
	};

	if (reason >= IOUR_ARRAY_SIZE(names) || !names[reason])
		return "invalid";
	return names[reason];
}
