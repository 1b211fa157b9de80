/* SPDX-License-Identifier: MIT */
/*
 * The rule language of `iour-restrict filter` and `sim`: one comparison
 * list per rule ("family==AF_INET,type==SOCK_STREAM"), parsed into the
 * struct iour_cmp array of iour_filter__add_rule(); and the context
 * assignments of `sim --ctx` ("family=AF_INET,type=SOCK_STREAM"), turned
 * into a 40-byte filter context with the iour_ctx_*() builders.
 *
 * The grammar is in cli_help_rules() (expr.c) and doc/cli.md.
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
	char msg[256];
};

/* One parsed rule: the comparisons and the memory their sets use. */
struct expr_rule {
	struct iour_cmp cmps[IOUR_FILTER_MAX_CMPS];
	size_t n;
	uint64_t *sets[IOUR_FILTER_MAX_CMPS]; /* owned; NULL if unused */
	const char *warning; /* a static hint about a likely mistake, or NULL */
};

/*
 * expr_parse_rule() parses one comparison list for request @opcode.  Every
 * comparison is also checked by the library (iour_filter__add_rule() on a
 * scratch filter), so that a value it refuses is reported at the right
 * place.  Returns 0, or -1 with @err filled (the rule is then empty and
 * needs no expr_rule_free()); or a negative errno (-ENOMEM) with @err
 * filled.
 */
int expr_parse_rule(const char *text, uint32_t opcode, struct expr_rule *rule,
		    struct expr_error *err);

/* Releases the sets of a parsed rule. */
void expr_rule_free(struct expr_rule *rule);

/*
 * expr_build_ctx() fills a filter context for request @opcode from a list
 * of assignments.  Returns 0, or -1 with @err filled.
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
 * "@{NAME}" of a help text.  Returns 0, or -1 for an unknown NAME.
 */
int expr_help_part(const char *name, size_t len, FILE *out);

#endif /* IOUR_CLI_EXPR_H */
