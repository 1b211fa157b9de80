/* SPDX-License-Identifier: MIT */
/*
 * iour-restrict agent: its log, one line per event, in logfmt (the
 * default) or as JSON lines (--log-format json): cmd_agent.c, doc/agent.md.
 * A line is built field by field (agent_line_*), so that both formats
 * carry the same fields.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent.h"
#include "core/cli.h"

long long agent_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Writes @s, quoted if it has a space, a quote or '=' (logfmt), with
 * control bytes and backslashes escaped: container ids and paths come
 * from the runtime's message. */
void agent_log_str(FILE *f, const char *s)
{
	bool quote = !*s || strpbrk(s, " \"=") != NULL;

	if (quote)
		fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c < 0x20 || c == 0x7f)
			fprintf(f, "\\x%02x", c);
		else if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else
			fputc(c, f);
	}
	if (quote)
		fputc('"', f);
}

static void timestamp(char *buf, size_t n)
{
	struct timespec now;
	struct tm tm;
	size_t l;

	clock_gettime(CLOCK_REALTIME, &now);
	gmtime_r(&now.tv_sec, &tm);
	l = strftime(buf, n, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf + l, n - l, ".%03ldZ", now.tv_nsec / 1000000);
}

struct agent_line agent_line_begin(struct agent *a, const char *event, const char *id, int pid)
{
	struct agent_line l = { .f = a->log ? a->log : stderr, .json = a->json };
	char ts[40];

	if (l.json) {
		timestamp(ts, sizeof(ts));
		fprintf(l.f, "{\"time\":\"%s\",\"event\":", ts);
		cli_json_str(l.f, event ? event : "error", true);
		if (id) {
			fputs(",\"container\":", l.f);
			cli_json_str(l.f, id, true);
			fprintf(l.f, ",\"pid\":%d", pid);
		}
		return l;
	}
	if (a->log) {
		timestamp(ts, sizeof(ts));
		fprintf(l.f, "%s ", ts);
	}
	fputs(CLI_PROG " agent:", l.f);
	if (id) {
		fputs(" container=", l.f);
		agent_log_str(l.f, id);
		fprintf(l.f, " pid=%d", pid);
	}
	if (event)
		fprintf(l.f, " %s", event);
	return l;
}

static void key(struct agent_line *l, const char *k)
{
	if (l->json)
		fprintf(l->f, ",\"%s\":", k);
	else
		fprintf(l->f, " %s=", k);
}

void agent_line_str(struct agent_line *l, const char *k, const char *v)
{
	key(l, k);
	if (l->json)
		cli_json_str(l->f, v, true);
	else
		agent_log_str(l->f, v);
}

void agent_line_raw(struct agent_line *l, const char *k, const char *v)
{
	key(l, k);
	if (l->json)
		cli_json_str(l->f, v, true);
	else
		fputs(v, l->f);
}

void agent_line_fmt(struct agent_line *l, const char *k, const char *fmt, ...)
{
	char buf[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	agent_line_raw(l, k, buf);
}

void agent_line_u64(struct agent_line *l, const char *k, unsigned long long v)
{
	key(l, k);
	fprintf(l->f, "%llu", v);
}

void agent_line_int(struct agent_line *l, const char *k, long long v)
{
	key(l, k);
	fprintf(l->f, "%lld", v);
}

void agent_line_null(struct agent_line *l, const char *k)
{
	if (l->json) {
		key(l, k);
		fputs("null", l->f);
	}
}

void agent_line_end(struct agent_line *l)
{
	if (l->json)
		fputc('}', l->f);
	fputc('\n', l->f);
	fflush(l->f);
}

/* A free-text line: the text itself in logfmt, {"event":"message",
 * "message":...} in JSON. */
void agent_log_msg(struct agent *a, const char *fmt, ...)
{
	struct agent_line l;
	char *msg = NULL;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&msg, fmt, ap);
	va_end(ap);
	if (n < 0)
		msg = NULL;
	if (a->json) {
		l = agent_line_begin(a, "message", NULL, 0);
		agent_line_str(&l, "message", msg ? msg : fmt);
	} else {
		l = agent_line_begin(a, NULL, NULL, 0);
		fprintf(l.f, " %s", msg ? msg : fmt);
	}
	agent_line_end(&l);
	free(msg);
}

struct agent_line agent_line_container(struct agent *a, const char *event,
				       const struct container *c)
{
	return agent_line_begin(a, event, c->id, c->pid);
}
