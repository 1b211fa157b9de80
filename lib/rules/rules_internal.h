/* SPDX-License-Identifier: MIT */
/*
 * The rule front end's parts (include/iouring_restrict/rules.h;
 * doc/design.md, "The rule front end"): rules.c holds the lexical core
 * every front end shares (fields, the operator table, terms, prefixes, the
 * hint for fields the kernel does not see) and the cursor the text
 * parsers move; rules_parse.c parses comparison lists, rules_ctx.c
 * context assignments.  Policy files (lib/policyfile/) call the core with
 * their JSON values and word its results in their own messages.
 */
#ifndef IOUR_LIB_RULES_INTERNAL_H
#define IOUR_LIB_RULES_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/internal.h"
#include "iouring_restrict/rules.h"
#include "iouring_restrict/schema.h"

/*
 * A field as values are parsed for it.  It takes the constants of its own
 * namespace only (@ns, the names' prefix; NULL: numbers only), so that
 * "family == SOCK_STREAM" is an error rather than family 1.  Only
 * bit-flag fields (@bits) take values joined with '|'; on a value field
 * "AF_INET | AF_INET6" would be one number that matches neither.
 */
struct iour__rfield {
	const char *name; /* as the tool's messages name it: "family" */
	const char *full; /* dotted, as policy files write it: "socket.family" */
	uint32_t id;      /* IOUR_FIELD_*; 0 for a context key of no field */
	uint32_t kind;    /* enum iour_field_kind */
	const char *ns;
	bool bits;
};

/* Fills *f from a schema row. */
IOUR_INTERNAL void iour__rule_field_from(const struct iour_field_info *fi, struct iour__rfield *f);
/* The field of id @id; -ENOENT if there is none. */
IOUR_INTERNAL int iour__rule_field_of(uint32_t id, struct iour__rfield *f);
/* A field's name without its group ("family" for "socket.family"). */
IOUR_INTERNAL const char *iour__rule_bare(const struct iour_field_info *fi);
/* Finds a field by name for @opcode (IOUR_RULE_NO_OPCODE: dotted names
 * only), ASCII case ignored.  *known is set if the name exists for some
 * other opcode.  Returns 0 or -ENOENT. */
IOUR_INTERNAL int iour__rule_find_field(const char *name, uint32_t opcode, bool *known,
					struct iour__rfield *f);
/* Whether schema row @idx is the first of its group at its byte slot
 * (same offset and size): the others are views of the same bytes. */
IOUR_INTERNAL bool iour__rule_owns_slot(size_t idx);
/* A field the kernel's filters have no field for, and another mechanism
 * covers (doc/iouring-restrict.7.md, "WHAT IT CANNOT RESTRICT"): a path,
 * or an address of a request other than CONNECT (@opcode, or for
 * IOUR_RULE_NO_OPCODE the name's group).  NULL if @name is none. */
IOUR_INTERNAL const char *iour__rule_unexposed_hint(const char *name, uint32_t opcode);

/* An operator's name, its IOUR_CMP_* and whether it is an infix word of
 * the text form ("all-bits") rather than symbols. */
struct iour__ropname {
	const char *name;
	uint32_t op;
};
/* The one table of operator names, longest symbol first where one is
 * the start of another. */
IOUR_INTERNAL extern const struct iour__ropname iour__rule_ops[];
IOUR_INTERNAL extern const size_t iour__rule_nops;

/* How one term of a value was read. */
enum iour__rterm {
	IOUR__RT_OK,
	IOUR__RT_NOT_NUMBER,     /* starts with a digit, is no number */
	IOUR__RT_NOT_IPV4,       /* digits and dots, no IPv4 address */
	IOUR__RT_IPV4_ELSEWHERE, /* an IPv4 address, the field is no addr4 */
	IOUR__RT_IPV6_ELSEWHERE, /* an IPv6 address (':'), the field is no addr6 */
	IOUR__RT_UNKNOWN,        /* no constant of that name */
	IOUR__RT_NUMBERS_ONLY,   /* a constant, the field takes numbers only */
	IOUR__RT_OTHER_NS,       /* a constant of another field's namespace */
};
/* One term: a number, a constant of @f's namespace, or (addr4) an IPv4
 * address. */
IOUR_INTERNAL enum iour__rterm iour__rule_term(const char *w, const struct iour__rfield *f,
					       uint64_t *v);
/* A named constant, in any case; IOSQE_* from the name table (its prefix
 * is required).  Returns 0 or -1. */
IOUR_INTERNAL int iour__rule_constant(const char *name, uint64_t *v);
/* A number as rules write it: decimal, 0x hex or 0 octal, below 2^64,
 * starting with a digit.  Returns 0 or -1. */
IOUR_INTERNAL int iour__rule_number(const char *s, uint64_t *v);

/* An address prefix "a.b.c.d/n", "x::y/n" or an address alone (full
 * length) of @f (addr4 or addr6) into c->value or c->addr6 and c->arg. */
enum iour__rprefix {
	IOUR__RP_OK,
	IOUR__RP_NOT_ADDR, /* the field is no address field */
	IOUR__RP_TOO_LONG,
	IOUR__RP_BAD_LENGTH,  /* after '/': not a number of 0 .. 32 or 128 */
	IOUR__RP_BAD_ADDRESS, /* before '/': no address of the field's family */
};
IOUR_INTERNAL enum iour__rprefix iour__rule_prefix(const char *s, const struct iour__rfield *f,
						   struct iour_cmp *c, const char **len_text);

/* Why iour_filter__add_rule() refuses @c with -EINVAL, as far as @c shows
 * it (a range upside down, a mask of 0, ...), for both front ends'
 * messages; NULL if it shows none. */
IOUR_INTERNAL const char *iour__rule_einval_reason(const struct iour_cmp *c);

/* The cursor of a text parser over one text. */
struct iour__rps {
	const char *s;
	size_t i;
	size_t opnd; /* where the last comparison's first operand starts */
	uint32_t op;
	const char *group; /* the opcode's payload group ("socket"), or NULL */
	struct iour_rule_error *err;
};

/* Fills p->err (at byte @pos) and returns -EBADMSG. */
IOUR_INTERNAL int iour__rps_fail(struct iour__rps *p, size_t pos, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
IOUR_INTERNAL void iour__rps_skip_ws(struct iour__rps *p);
/* Consumes @tok after blanks if it is next. */
IOUR_INTERNAL bool iour__rps_eat(struct iour__rps *p, const char *tok);
/* Whether @c continues a word (letters, digits, '_', '.', ':'). */
IOUR_INTERNAL bool iour__rps_word_char(char c);
/* A word into @buf; *start: its offset. */
IOUR_INTERNAL int iour__rps_word(struct iour__rps *p, char *buf, size_t cap, size_t *start,
				 const char *expected);
/* A value for @f: terms joined by '|' where @f is a set of bits. */
IOUR_INTERNAL int iour__rps_scalar(struct iour__rps *p, const struct iour__rfield *f, uint64_t *v);
IOUR_INTERNAL int iour__rps_addr6(struct iour__rps *p, uint8_t out[16]);
/* The payload group of an opcode ("socket"), or NULL. */
IOUR_INTERNAL const char *iour__rule_group_of(uint32_t opcode);
/* Fails with the message of a field @w (at @start) that is none of
 * p->op's; @known: it is a field of other opcodes. */
IOUR_INTERNAL int iour__rule_field_error(struct iour__rps *p, const char *w, size_t start,
					 bool known);
/* Checks a caller's error record: 0 or -EINVAL; clears it. */
IOUR_INTERNAL int iour__rule_err_init(struct iour_rule_error *err);

#endif /* IOUR_LIB_RULES_INTERNAL_H */
