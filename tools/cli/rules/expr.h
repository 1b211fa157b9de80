/* SPDX-License-Identifier: MIT */
/*
 * The rule language of `iour-restrict filter`, `sim`, `prove`, `check` and
 * `lint`: the library parses it (iouring_restrict/rules.h; doc/design.md,
 * "The rule front end"); this layer keeps the tool's error record, prints
 * errors with a caret under their place, and writes the help texts that
 * list what the request schema holds (help.c).
 *
 * The grammar is in cli_help_rules() (help.c) and doc/cli.md.
 */
#ifndef IOUR_CLI_EXPR_H
#define IOUR_CLI_EXPR_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <iouring_restrict/iouring_restrict.h>

/* Where and why a parse failed.  @pos is a 0-based byte offset into the
 * text. */
struct expr_error {
	size_t pos;
	char msg[IOUR_RULE_ERROR_MSG];
};

/* One parsed rule: its comparisons (owned by @r). */
struct expr_rule {
	struct iour_rule *r;
	const struct iour_cmp *cmps;
	size_t n;
	const char *warning; /* a static hint about a likely mistake, or NULL */
};

/*
 * expr_parse_rule() parses one comparison list for request @opcode with
 * iour_rule_parse().  Returns 0, or -1 with @err filled (the rule is then
 * empty and needs no expr_rule_free()); or a negative errno (-ENOMEM)
 * with @err filled.
 */
int expr_parse_rule(const char *text, uint32_t opcode, struct expr_rule *rule,
		    struct expr_error *err);

/* Releases a parsed rule; an empty one is fine. */
void expr_rule_free(struct expr_rule *rule);

/*
 * expr_build_ctx() fills a filter context for request @opcode from a list
 * of assignments (iour_rule_ctx()).  Returns 0, or -1 with @err filled.
 */
int expr_build_ctx(const char *text, uint32_t opcode, uint8_t ctx[IOUR_CTX_SIZE],
		   struct expr_error *err);

/*
 * expr_report() prints a parse error: the message, the text and a caret
 * under the failing position.  @what names the option ("--allow").
 */
void expr_report(const char *what, const char *text, const struct expr_error *err);

/*
 * expr_help_part() writes a part of a help text that lists what the request
 * schema holds ("filter-op": the --op line of filter and sim; "check-ctx":
 * check's paragraph on FIELD=VALUE).  cli_help() calls it for each line
 * "@{NAME}" of a help text.  Returns 0, or -1 for an unknown NAME (help.c).
 */
int expr_help_part(const char *name, size_t len, FILE *out);

#endif /* IOUR_CLI_EXPR_H */
