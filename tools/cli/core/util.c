/* SPDX-License-Identifier: MIT */
/*
 * Error reporting and small parsers shared by the subcommands of
 * iour-restrict.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli.h"

const char *cli_cmd;

/* A byte a terminal could take for a command: the C0 controls and DEL. */
static bool is_control(unsigned char c)
{
	return c < 0x20 || c == 0x7f;
}

size_t cli_escaped_len(const char *s, size_t n)
{
	size_t len = 0;

	for (size_t i = 0; i < n && s[i]; i++)
		len += is_control((unsigned char)s[i]) ? 4 : 1;
	return len;
}

void cli_put_escaped(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (is_control((unsigned char)*s))
			fprintf(f, "\\x%02x", (unsigned char)*s);
		else
			fputc(*s, f);
	}
}

/* The message, with control bytes (from the user's arguments) escaped. */
static void vmsg(const char *fmt, va_list ap)
{
	char small[512], *buf = small;
	va_list aq;
	int n;

	if (cli_cmd)
		fprintf(stderr, "%s %s: ", CLI_PROG, cli_cmd);
	else
		fprintf(stderr, "%s: ", CLI_PROG);
	va_copy(aq, ap);
	n = vsnprintf(small, sizeof(small), fmt, aq);
	va_end(aq);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(small)) {
		buf = malloc((size_t)n + 1);
		if (!buf) {
			buf = small; /* print the truncated message */
		} else {
			va_copy(aq, ap);
			vsnprintf(buf, (size_t)n + 1, fmt, aq);
			va_end(aq);
		}
	}
	cli_put_escaped(stderr, buf);
	if (buf != small)
		free(buf);
}

void cli_msg(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int cli_usage(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	if (cli_cmd)
		fprintf(stderr, "Try '%s %s --help' for more information.\n", CLI_PROG, cli_cmd);
	else
		fprintf(stderr, "Try '%s --help' for more information.\n", CLI_PROG);
	return CLI_USAGE;
}

const char *cli_strerror(int err)
{
	static char buf[256];

	/* A truncated or generic message is still a message. */
	(void)iour_strerror(err, buf, sizeof(buf));
	return buf;
}

int cli_fail(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(fmt, ap);
	va_end(ap);
	fprintf(stderr, ": %s (%s)\n", cli_strerror(err), iour_errname(err));
	return CLI_FAIL;
}

int cli_policy_operand(int argc, char **argv, const char **path)
{
	if (optind >= argc)
		return cli_usage("no policy file given");
	if (optind + 1 < argc)
		return cli_usage("one policy file only ('%s' is extra)", argv[optind + 1]);
	*path = argv[optind];
	return CLI_OK;
}

int cli_getopt_error(int c, char **argv)
{
	const char *arg = argv[optind - 1];

	if (c == ':')
		return cli_usage("option '%s' needs an argument", arg);
	if (optopt)
		return cli_usage("unknown option '-%c'", optopt);
	return cli_usage("unknown option '%s'", arg);
}

int cli_parse_u64(const char *s, uint64_t *out)
{
	unsigned long long v;
	char *end;

	/* strtoull() accepts leading blanks and a sign; a number does not. */
	if (!s || !isdigit((unsigned char)s[0]))
		return -1;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end)
		return -1;
	*out = v;
	return 0;
}

/* Documented in cli.h */
void cli_json_str(FILE *f, const char *s, bool ascii)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", f);
		else if (c < 0x20 || c == 0x7f || (ascii && c > 0x7f))
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

int cli_parse_kver(const char *s, uint32_t *out)
{
	unsigned long part[3] = { 0, 0, 0 };
	const char *p = s;
	int n = 0;
	char *end;

	if (!s)
		return -1;
	for (;;) {
		if (!isdigit((unsigned char)*p))
			return -1;
		errno = 0;
		part[n] = strtoul(p, &end, 10);
		if (errno || part[n] > 255)
			return -1;
		n++;
		p = end;
		if (*p == '\0')
			break;
		if (*p != '.' || n == 3)
			return -1;
		p++;
	}
	if (n < 2)
		return -1;
	*out = IOUR_KVER(part[0], part[1]);
	return 0;
}

void cli_kver_str(uint32_t kver, char *buf, size_t len)
{
	snprintf(buf, len, "%u.%u", (kver >> 16) & 0xff, (kver >> 8) & 0xff);
}

int cli_each_item(const char *list, const char *what,
		  int (*fn)(const char *item, void *arg), void *arg)
{
	char *copy, *item, *save = NULL, *end;
	int rc = 0;
	size_t n;

	n = strlen(list);
	if (n == 0 || list[0] == ',' || list[n - 1] == ',' || strstr(list, ",,"))
		return cli_usage("%s: empty item in '%s'", what, list);
	copy = strdup(list);
	if (!copy)
		return cli_fail(-ENOMEM, "%s", what);
	for (item = strtok_r(copy, ",", &save); item && !rc; item = strtok_r(NULL, ",", &save)) {
		while (isspace((unsigned char)*item))
			item++;
		end = item + strlen(item);
		while (end > item && isspace((unsigned char)end[-1]))
			*--end = '\0';
		if (!*item)
			rc = cli_usage("%s: empty item in '%s'", what, list);
		else
			rc = fn(item, arg);
	}
	free(copy);
	return rc;
}

const char *cli_near(uint32_t kind, const char *name)
{
	static char buf[96];
	const char *n = iour_name_suggest(kind, name);

	if (!n)
		return "";
	snprintf(buf, sizeof(buf), " (did you mean '%s'?)", n);
	return buf;
}

int cli_parse_opcode(const char *s, uint32_t *op)
{
	uint64_t v;
	int r;

	if (isdigit((unsigned char)s[0])) {
		if (cli_parse_u64(s, &v) || v >= IOUR_OP__COUNT)
			return -1;
		*op = (uint32_t)v;
		return 0;
	}
	r = iour_opcode_from_name(s);
	if (r < 0)
		return -1;
	*op = (uint32_t)r;
	return 0;
}

int cli_parse_sqe_flags(const char *s, const char *what, uint32_t *mask)
{
	const char *p = s;
	uint32_t m = 0;
	char word[64];
	uint64_t v;
	size_t n;
	int r;

	for (;;) {
		while (*p == ' ')
			p++;
		n = strcspn(p, ",| ");
		if (n == 0 || n >= sizeof(word))
			return cli_usage("%s: expected a flag name in '%s'", what, s);
		memcpy(word, p, n);
		word[n] = '\0';
		if (!strcasecmp(word, "none")) {
			/* nothing */
		} else if (!strcasecmp(word, "all")) {
			m |= IOUR_SQE__VALID;
		} else if (isdigit((unsigned char)word[0])) {
			if (cli_parse_u64(word, &v) || (v & ~(uint64_t)IOUR_SQE__VALID))
				return cli_usage("%s: '%s' is not a mask of SQE flags (0 to 0x7f)",
						 what, word);
			m |= (uint32_t)v;
		} else {
			r = iour_sqe_flag_from_name(word);
			if (r < 0)
				return cli_usage("%s: unknown SQE flag '%s'%s (see '%s names flags')",
						 what, word, cli_near(IOUR_NAME_SQE_FLAG, word),
						 CLI_PROG);
			m |= (uint32_t)r;
		}
		p += n;
		while (*p == ' ')
			p++;
		if (!*p)
			break;
		p++; /* ',' or '|' */
	}
	*mask = m;
	return 0;
}
