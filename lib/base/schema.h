/* SPDX-License-Identifier: MIT */
/*
 * Lookups over the request schema (lib/base/schema.def): the one place that
 * says which opcodes carry a payload and which fields each payload holds.
 */
#ifndef IOUR_SCHEMA_H
#define IOUR_SCHEMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "internal.h"

/* KIO_O_LARGEFILE, where lib/base/schema.def knows the architecture. */
#include "schema.def"
#ifndef KIO_O_LARGEFILE
#error "O_LARGEFILE of the kernel unknown for this architecture"
#endif

/* Which fields a payload holds. */
enum iour__schema_group {
#define IOUR_SCHEMA_GROUP(group, name) IOUR__SG_##group,
#include "schema.def"
	IOUR__SG__COUNT
};

/* How a field's value is written. */
enum iour__schema_kind {
	IOUR__SK_NUM,
	IOUR__SK_BITS,
	IOUR__SK_ADDR4,
	IOUR__SK_ADDR6,
};

/* The byte order of a field's slot in the filter context. */
enum iour__schema_order {
	IOUR__SO_HOST,
	IOUR__SO_NET,
};

/* The number of payload rows: each row adds one to a sum. */
/* NOLINTBEGIN(bugprone-macro-parentheses): "+ 1" is a term of that sum. */
enum {
	IOUR__SCHEMA_NPAYLOADS = 0
#define IOUR_SCHEMA_PAYLOAD(op, group, pdu, level) +1
#include "schema.def"
};
/* NOLINTEND(bugprone-macro-parentheses) */

struct iour__schema_payload {
	uint32_t opcode;
	enum iour__schema_group group;
	uint32_t pdu_size;
	uint32_t level; /* the first IOUR_LEVEL_* whose kernels filter it */
};

struct iour__schema_field {
	const char *name;   /* dotted, as policy files and the CLI write it */
	const char *prefix; /* of its named constants; NULL: numbers only */
	/* Its slot in the filter context (lib/base/schema.def, doc/kernel.md 4.3). */
	uint64_t mask;     /* the slot's bits that are the field; 0: all */
	uint64_t valid;    /* the bits a value may have; 0: not a number */
	const char *label; /* the disassembler's name of the slot's words */
	uint32_t id;       /* IOUR_FIELD_* */
	enum iour__schema_group group;
	enum iour__schema_kind kind;
	uint32_t off;   /* byte offset */
	uint32_t bytes; /* 1, 2 or 4 (within one word), 8 or 16 */
	enum iour__schema_order order;
};

/* A named constant (lib/base/schema.def). */
struct iour__schema_const {
	const char *name;
	uint64_t value;
	uint32_t since; /* IOUR_KVER; 0: older than io_uring */
};

/* The table's rows, in table order; NULL past the end. */
IOUR_INTERNAL const struct iour__schema_payload *iour__schema_payload_at(size_t i);
IOUR_INTERNAL const struct iour__schema_field *iour__schema_field_at(size_t i);
IOUR_INTERNAL const struct iour__schema_const *iour__schema_const_at(size_t i);

/* The dotted prefix of a group's fields ("socket"; "" for ANY). */
IOUR_INTERNAL const char *iour__schema_group_name(enum iour__schema_group g);
/* The namespace of a constant: the longest field prefix that starts its
 * name ("AF_"), or NULL if no field takes it. */
IOUR_INTERNAL const char *iour__schema_const_ns(const char *name);

/* The payload row of an opcode, or NULL if the kernel does not filter it. */
IOUR_INTERNAL const struct iour__schema_payload *iour__schema_payload_of(uint32_t opcode);
/* A field's row by id or by dotted name, or NULL. */
IOUR_INTERNAL const struct iour__schema_field *iour__schema_field_of(uint32_t id);
IOUR_INTERNAL const struct iour__schema_field *iour__schema_field_named(const char *name);
/* The room iour__schema_field_names() needs: every dotted name, a ", "
 * after each, and the NUL. */
/* NOLINTBEGIN(bugprone-macro-parentheses): each row adds a term to a sum */
enum {
	IOUR__SCHEMA_FIELD_NAMES_SIZE = 1
#define IOUR_SCHEMA_FIELD(name, id, group, kind, prefix, off, bytes, order, mask, valid, label) \
	+(sizeof(name) + 1)
#include "schema.def"
};
/* NOLINTEND(bugprone-macro-parentheses) */
/* Writes the dotted names of every field, ", "-separated, in table order
 * ("user_data, sqe_flags, socket.family, ...") into @buf, truncated to
 * @cap; returns the length of the whole list.  @grouped: each payload
 * group's fields as one "group.*" ("user_data, sqe_flags, socket.*, ..."),
 * for a message that must be short. */
IOUR_INTERNAL size_t iour__schema_field_names(char *buf, size_t cap, bool grouped);
/* The largest payload any opcode has. */
IOUR_INTERNAL uint32_t iour__schema_max_pdu(void);

#endif
