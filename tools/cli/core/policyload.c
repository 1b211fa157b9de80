/* SPDX-License-Identifier: MIT */
/*
 * Reading a policy file for the commands that take one (run, compile,
 * check, lint), with the loader's error placed as compilers place theirs:
 * "FILE:LINE:COLUMN: message".
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* Standard input, whole, for the path "-" (at most 16 MiB, as the loader's
 * file limit). */
static int read_stdin(char **text, size_t *len)
{
	size_t cap = 65536, n = 0, got;
	char *buf = malloc(cap), *nb;

	if (!buf)
		return -ENOMEM;
	while ((got = fread(buf + n, 1, cap - n, stdin)) > 0) {
		n += got;
		if (n == cap) {
			if (cap >= (16U << 20)) {
				free(buf);
				return -EFBIG;
			}
			nb = realloc(buf, cap * 2);
			if (!nb) {
				free(buf);
				return -ENOMEM;
			}
			buf = nb;
			cap *= 2;
		}
	}
	if (ferror(stdin)) {
		free(buf);
		return -EIO;
	}
	*text = buf;
	*len = n;
	return 0;
}

int cli_policy_load(const char *path, uint32_t kver, struct iour_policy **out)
{
	struct iour_policy_load_opts lo = { .sz = sizeof(lo), .kernel = kver };
	struct iour_load_error e;
	const char *name = strcmp(path, "-") ? path : "<stdin>";
	char *text = NULL;
	size_t len = 0;
	int r;

	memset(&e, 0, sizeof(e));
	e.sz = sizeof(e);
	lo.origin = name;
	if (!strcmp(path, "-")) {
		r = read_stdin(&text, &len);
		if (!r)
			r = iour_policy__load_json(text, len, &lo, out, &e);
		free(text);
	} else {
		r = iour_policy__load_file(path, &lo, out, &e);
	}
	if (!r)
		return 0;
	if (r == -ENOMEM)
		return cli_fail(r, "loading %s", name);
	if (e.line) {
		/* The compilers' form, which editors jump to. */
		fprintf(stderr, "%s:%u:%u: ", name, e.line, e.column);
		cli_put_escaped(stderr, e.message[0] ? e.message : cli_strerror(r));
		if (e.path[0]) {
			fputs(" (at ", stderr);
			cli_put_escaped(stderr, e.path);
			fputc(')', stderr);
		}
		fputc('\n', stderr);
	} else if (e.message[0]) {
		cli_msg("%s: %s", name, e.message);
	} else {
		cli_msg("%s: %s (%s)", name, cli_strerror(r), iour_errname(r));
	}
	return CLI_POLICY;
}
