/* SPDX-License-Identifier: MIT */
/*
 * The tool's side of the rule language: the library parses rules and
 * contexts (iouring_restrict/rules.h; doc/design.md, "The rule front
 * end"); this file keeps the tool's error record and prints an error with
 * a caret under its place.  The help texts are in help.c.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core/cli.h"
#include "expr.h"

static void copy_error(struct expr_error *err, const struct iour_rule_error *e)
{
	err->pos = e->pos;
	snprintf(err->msg, sizeof(err->msg), "%s", e->message);
}

void expr_rule_free(struct expr_rule *rule)
{
	iour_rule_free(rule->r);
	memset(rule, 0, sizeof(*rule));
}

int expr_parse_rule(const char *text, uint32_t opcode, struct expr_rule *rule,
		    struct expr_error *err)
{
	struct iour_rule_error e = { .sz = sizeof(e) };
	int r;

	memset(rule, 0, sizeof(*rule));
	memset(err, 0, sizeof(*err));
	r = iour_rule_parse(text, opcode, &rule->r, &e);
	if (r) {
		copy_error(err, &e);
		if (r == -EBADMSG)
			return -1;
		if (!err->msg[0])
			snprintf(err->msg, sizeof(err->msg), "%s", cli_strerror(r));
		return r;
	}
	r = iour_rule_cmps(rule->r, &rule->cmps);
	rule->n = r > 0 ? (size_t)r : 0;
	rule->warning = iour_rule_warning(rule->r);
	return 0;
}

int expr_build_ctx(const char *text, uint32_t opcode, uint8_t ctx[IOUR_CTX_SIZE],
		   struct expr_error *err)
{
	struct iour_rule_error e = { .sz = sizeof(e) };
	int r;

	memset(err, 0, sizeof(*err));
	r = iour_rule_ctx(text, opcode, ctx, IOUR_CTX_SIZE, &e);
	if (r) {
		copy_error(err, &e);
		if (!err->msg[0])
			snprintf(err->msg, sizeof(err->msg), "%s", cli_strerror(r));
		return -1;
	}
	return 0;
}

void expr_report(const char *what, const char *text, const struct expr_error *err)
{
	size_t col = err->pos, i;

	cli_msg("%s: %s (column %zu)", what, err->msg, col + 1);
	fputs("  ", stderr);
	cli_put_escaped(stderr, text); /* control bytes as \xNN */
	fputs("\n  ", stderr);
	for (i = cli_escaped_len(text, col); i > 0; i--)
		fputc(' ', stderr);
	fputs("^\n", stderr);
}
