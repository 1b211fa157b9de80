/* SPDX-License-Identifier: MIT */
/**
 * @file rules.h
 * @brief The rule language, parsed: field names, operators, values,
 *        comparison lists ("family==AF_INET,type==SOCK_STREAM") and
 *        context assignments ("family=AF_INET,type=SOCK_STREAM").
 *
 * One parser for every front end: the iour-restrict tool's rules and the
 * conditions of policy files (doc/policy-files.md) are read by it, so a
 * field, a constant, an operator or an address is spelled the same way in
 * both (doc/design.md, "The rule front end"; the grammar is in doc/cli.md,
 * "Rule expressions").  Fields and constants come from the request schema
 * (schema.h).  A text that does not parse gets -EBADMSG and a struct
 * iour_rule_error: the byte offset of the failing token and a message, so
 * that a caller can point at it.  The functions are thread-safe; only
 * iour_rule_parse() allocates.
 */
#ifndef IOURING_RESTRICT_RULES_H
#define IOURING_RESTRICT_RULES_H

#include "common.h"
#include "cbpf.h"
#include "filter.h"

#ifdef __cplusplus
extern "C" {
#endif

/** @brief The size of struct iour_rule_error's message, with its NUL. */
#define IOUR_RULE_ERROR_MSG 256

/** @brief An opcode for iour_rule_field() that names none: only dotted
 *         names ("socket.family") are found, as in policy files. */
#define IOUR_RULE_NO_OPCODE 0xffffffffu

/** @brief Where and why a text did not parse. */
struct iour_rule_error {
	size_t sz;                         /**< sizeof(struct iour_rule_error), set by the caller */
	size_t pos;                        /**< the byte offset in the text of what is wrong */
	char message[IOUR_RULE_ERROR_MSG]; /**< what is wrong, NUL-terminated */
};

/** @brief A parsed comparison list (opaque): iour_rule_parse(). */
struct iour_rule;

/**
 * @brief **iour_rule_field()** finds the field a rule on an opcode names.
 * @param name "family" or "socket.family" (the group's prefix is optional
 *        for a field of the opcode's own payload); ASCII case is ignored.
 * @param opcode the request opcode, or #IOUR_RULE_NO_OPCODE: then only a
 *        field's dotted name is found, for rules whose opcodes are not
 *        known yet.
 * @param id set to the field's IOUR_FIELD_* on success.
 * @param err filled on -ENOENT and -EDOM; its message lists the fields of
 *        @p opcode, or says which other mechanism covers a field the
 *        kernel's filters do not see (a path).
 * @return 0 on success; -EINVAL if an argument is NULL, @p opcode is
 *         above 255 (and not #IOUR_RULE_NO_OPCODE) or `err->sz` is
 *         smaller than the whole struct; -ENOENT if no field has that
 *         name; -EDOM if the field exists for other opcodes only.
 * @since 1.1
 */
IOUR_API int iour_rule_field(const char *name, uint32_t opcode, uint32_t *id,
			     struct iour_rule_error *err);

/**
 * @brief **iour_rule_op()** reads an operator's name.
 * @param name one of ==, !=, <, <=, >, >=, &= (also any-bits), all-bits,
 *        none-bits, &==, in, not in (also !in); ASCII case is ignored.
 * @param op set to the IOUR_CMP_* it names: "in" and "not in" give
 *        IOUR_CMP_IN_SET and IOUR_CMP_NOT_IN_SET, which the caller turns
 *        into the range or prefix form its operand calls for; "&==" gives
 *        IOUR_CMP_MASKED_EQ, whose mask the caller supplies.
 * @return 0 on success; -EINVAL if an argument is NULL; -ENOENT if
 *         @p name is no operator.
 * @since 1.1
 */
IOUR_API int iour_rule_op(const char *name, uint32_t *op);

/**
 * @brief **iour_rule_value()** parses a value of a field.
 * @param text a number (decimal, 0x hexadecimal, octal with a leading 0),
 *        a constant of the field's namespace ("AF_INET"), terms joined by
 *        '|' for a bit-flag field ("O_CREAT|O_TRUNC"), an IPv4 address
 *        for an addr4 field, an IPv6 address for an addr6 field; blanks
 *        around it are allowed.
 * @param field IOUR_FIELD_*.
 * @param c its `value` (or, for an addr6 field, `addr6`) is set; nothing
 *        else of it is touched.
 * @param err filled on -EBADMSG.
 * @return 0 on success; -EINVAL if an argument is NULL or `err->sz` is
 *         smaller than the whole struct; -ENOENT if the library knows no
 *         field @p field; -EBADMSG if @p text is no value of the field.
 * @since 1.1
 */
IOUR_API int iour_rule_value(const char *text, uint32_t field, struct iour_cmp *c,
			     struct iour_rule_error *err);

/**
 * @brief **iour_rule_prefix()** parses an address prefix of an address
 *        field: "10.0.0.0/8", "fe80::/10"; without "/LENGTH", the
 *        address's full length (32 or 128).
 * @param text the prefix.
 * @param field IOUR_FIELD_* of an addr4 or addr6 field.
 * @param c its `value` (addr4) or `addr6` and its `arg` (the length) are
 *        set; nothing else of it is touched.
 * @param err filled on -EBADMSG.
 * @return 0 on success; -EINVAL if an argument is NULL or `err->sz` is
 *         smaller than the whole struct; -ENOENT if the library knows no
 *         field @p field; -EBADMSG if the field is no address field, or
 *         @p text no prefix of it, or its length out of range.
 * @since 1.1
 */
IOUR_API int iour_rule_prefix(const char *text, uint32_t field, struct iour_cmp *c,
			      struct iour_rule_error *err);

/**
 * @brief **iour_rule_parse()** parses a comparison list for one opcode.
 *
 * The list holds when every comparison holds; "true" is a list without
 * comparisons.  Each comparison is also checked with
 * iour_filter__add_rule() for @p opcode, so a value the filter would
 * refuse is an error here, at the value.
 * @param text "family==AF_INET, type==SOCK_STREAM" (doc/cli.md, "Rule
 *        expressions").
 * @param opcode the request opcode the rule is for, 0..255.
 * @param out set to the new rule on success (free it with
 *        iour_rule_free()); untouched on error.
 * @param err filled on -EBADMSG.
 * @return 0 on success; -EINVAL if an argument is NULL, @p opcode is
 *         above 255 or `err->sz` is smaller than the whole struct;
 *         -EBADMSG if @p text does not parse (or the filter refuses a
 *         comparison for @p opcode); -ENOMEM.
 * @since 1.1
 */
IOUR_API int iour_rule_parse(const char *text, uint32_t opcode, struct iour_rule **out,
			     struct iour_rule_error *err);

/**
 * @brief **iour_rule_cmps()** gives a parsed rule's comparisons, ready
 *        for iour_filter__add_rule().
 * @param rule a rule of iour_rule_parse().
 * @param cmps set to its array (owned by @p rule, NULL for "true").
 * @return the number of comparisons (0 for "true"); -EINVAL if an
 *         argument is NULL.
 * @since 1.1
 */
IOUR_API int iour_rule_cmps(const struct iour_rule *rule, const struct iour_cmp **cmps);

/**
 * @brief **iour_rule_warning()** tells whether a parsed rule is valid but
 *        cannot mean what it says (an exact test of open flags, which the
 *        kernel extends with O_LARGEFILE).
 * @param rule a rule of iour_rule_parse(), or NULL.
 * @return a static message, or NULL if there is nothing to say.
 * @since 1.1
 */
IOUR_API const char *iour_rule_warning(const struct iour_rule *rule);

/**
 * @brief **iour_rule_free()** frees a rule of iour_rule_parse().
 * @param rule the rule, or NULL.
 * @since 1.1
 */
IOUR_API void iour_rule_free(struct iour_rule *rule);

/**
 * @brief **iour_rule_ctx()** fills a filter context for a request from
 *        assignments FIELD=VALUE, as the kernel would fill it.
 *
 * The fields are those of iour_rule_value() that own their bytes
 * (socket.type, not its view socket.type_flags), and for CONNECT also
 * addrlen; a field not given is 0.  SOCKET, OPENAT, OPENAT2 and CONNECT
 * contexts are made by iour_ctx_socket(), iour_ctx_open() and
 * iour_ctx_connect(), which do what the kernel does.
 * @param text "family=AF_INET, type=SOCK_STREAM"; "" for a context of
 *        zeroes but its header.
 * @param opcode the request opcode (below 65).
 * @param ctx the context to fill.
 * @param len its size: #IOUR_CTX_SIZE or more.
 * @param err filled on -EBADMSG.
 * @return 0 on success; -EINVAL if an argument is NULL, @p len is below
 *         #IOUR_CTX_SIZE or `err->sz` is smaller than the whole struct;
 *         -EBADMSG if @p text does not parse, @p opcode has no filter
 *         context, or a value does not fit its field.
 * @since 1.1
 */
IOUR_API int iour_rule_ctx(const char *text, uint32_t opcode, uint8_t *ctx, size_t len,
			   struct iour_rule_error *err);

#ifdef __cplusplus
}
#endif

#endif /* IOURING_RESTRICT_RULES_H */
