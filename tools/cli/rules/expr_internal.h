/* SPDX-License-Identifier: MIT */
/*
 * What the rule parser (expr.c) and the simulator's contexts (expr_ctx.c)
 * share: the parser's state and value readers, and the field list they
 * both take from the library's request schema (iouring_restrict/schema.h;
 * doc/design.md, "Adding a filterable opcode or field").
 */
#ifndef IOUR_CLI_EXPR_INTERNAL_H
#define IOUR_CLI_EXPR_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "expr.h"

/* How a value is written. */
enum expr_vkind { EXPR_V_NUM, EXPR_V_ADDR4, EXPR_V_ADDR6 };

/*
 * A field of a rule or a key of a context, as values are parsed for it.
 * Each takes the constants of its own namespace only (@ns, the names'
 * prefix; NULL: numbers only), so that "family == SOCK_STREAM" is an
 * error rather than family 1.  Only bit-flag fields (@bits) take values
 * joined with '|'; on a value field "AF_INET | AF_INET6" would be one
 * number that matches neither.
 */
struct expr_field {
	const char *name; /* as messages name it: the bare name, "family" */
	uint32_t id;      /* IOUR_FIELD_*; 0 for a context key of no field */
	enum expr_vkind kind;
	const char *ns;
	bool bits;
};

/* The parser's state over one text. */
struct expr_ps {
	const char *s;
	size_t i;
	size_t opnd;       /* where the last comparison's first operand starts */
	uint32_t op;
	const char *group; /* the opcode's payload group ("socket"), or NULL */
	struct expr_error *err;
};

/* Fills p->err (at byte @pos) and returns -1. */
int expr_fail(struct expr_ps *p, size_t pos, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void expr_skip_ws(struct expr_ps *p);
/* Consumes @tok after blanks if it is next. */
bool expr_eat(struct expr_ps *p, const char *tok);
/* A word (letters, digits, '_', '.', ':') into @buf; *start: its offset. */
int expr_read_word(struct expr_ps *p, char *buf, size_t cap, size_t *start,
		   const char *expected);
/* A value for @f: terms joined by '|' where @f is a set of bits. */
int expr_parse_scalar(struct expr_ps *p, const struct expr_field *f, uint64_t *v);
int expr_parse_addr6(struct expr_ps *p, uint8_t out[16]);

/* The payload group of an opcode ("socket"), or NULL if the kernel
 * filters it without a payload. */
const char *expr_group_of(uint32_t opcode);
/* A field's name without its group ("family" for "socket.family"). */
const char *expr_bare(const struct iour_field_info *fi);
/* The parsing view of a schema field. */
void expr_field_from(const struct iour_field_info *fi, struct expr_field *f);
/* Whether a field is the first of its group at its byte slot (same offset
 * and size): the others (socket.type_flags, open.accmode) are views of
 * the same bytes. */
bool expr_owns_slot(size_t idx);
/* The opcodes of a payload group as help names them: "OPENAT, OPENAT2",
 * with " (7.2+)" if @since and the kernels that filter them are newer than
 * those of the first payloads. */
void expr_group_label(const char *group, bool since, char *buf, size_t cap);
/* Writes "  " and @label in a @margin-column margin (or, without a label,
 * nothing) and @text wrapped beside and under it, as the help texts are
 * laid out. */
void expr_put_wrapped(FILE *out, size_t margin, const char *label, const char *text);
/* "a", "a and b", "a, b and c": the bare names of the fields of every
 * opcode, for help. */
void expr_any_fields(char *buf, size_t cap);
/* Appends to a string buffer, never past @cap. */
void expr_cat(char *buf, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* The context part of `help rules`, and the paragraph of `check --help`
 * on its FIELD=VALUE assignments (expr_ctx.c). */
void expr_ctx_help(FILE *out);
void expr_ctx_help_check(FILE *out);

#endif /* IOUR_CLI_EXPR_INTERNAL_H */
