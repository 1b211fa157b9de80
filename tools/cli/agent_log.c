/* SPDX-License-Identifier: MIT */
/*
 * iour-restrict agent: its log, one logfmt line per event (cmd_agent.c,
 * doc/containers.md).
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "agent.h"
#include "cli.h"

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

/* Starts a log line: a timestamp when logging to a file. */
FILE *agent_log_begin(struct agent *a)
{
	FILE *f = a->log ? a->log : stderr;

	if (a->log) {
		char ts[32];
		struct timespec now;
		struct tm tm;

		clock_gettime(CLOCK_REALTIME, &now);
		gmtime_r(&now.tv_sec, &tm);
		strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", &tm);
		fprintf(f, "%s.%03ldZ ", ts, now.tv_nsec / 1000000);
	}
	fputs(CLI_PROG " agent: ", f);
	return f;
}

void agent_log_end(FILE *f)
{
	fputc('\n', f);
	fflush(f);
}

void agent_log_msg(struct agent *a, const char *fmt, ...)
{
	FILE *f = agent_log_begin(a);
	va_list ap;

	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	agent_log_end(f);
}

/* "container=ID pid=N " at the start of a container's lines. */
FILE *agent_log_container(struct agent *a, const struct container *c)
{
	FILE *f = agent_log_begin(a);

	fputs("container=", f);
	agent_log_str(f, c->id);
	fprintf(f, " pid=%d ", c->pid);
	return f;
}

/* ---- containers */
