/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the rule front end (include/iouring_restrict/rules.h)
 * on arbitrary text, for the CLI's comparison lists and context
 * assignments and, through the same code, policy files' conditions.
 * fuzz-requires: iour_rule_parse iour_rule_cmps iour_rule_free iour_rule_ctx iour_rule_value
 *
 * Input: one byte picks the opcode (SOCKET, CONNECT, OPENAT, OPENAT2, or
 * the next byte as it is), one byte the entry point (comparison list,
 * context assignments, a single value of one field), the
 * rest is the text (cut at its first NUL).  Checked:
 *  - the only results are the documented ones: 0, -EBADMSG (the text),
 *    -EINVAL (only for an opcode the call documents as refused),
 *    -ENOMEM never (nothing here fails to allocate);
 *  - on -EBADMSG the position is within the text and the message is a
 *    non-empty NUL-terminated string; on any error the outputs are
 *    untouched (the rule pointer, the context, the comparison);
 *  - a parsed list is deterministic (a second parse gives the same
 *    comparisons, sets compared by content), has at most IOUR_FILTER_MAX_CMPS
 *    comparisons, and is accepted as it is by iour_filter__add_rule() for
 *    the opcode (the parser promises the filter will not refuse it), and
 *    the filter then compiles;
 *  - context assignments write only the first IOUR_CTX_SIZE bytes of a
 *    larger buffer.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "fuzz_util.h"
#include "iouring_restrict/errors.h"
#include "iouring_restrict/filter.h"
#include "iouring_restrict/rules.h"

#define MAX_TEXT 512

static const uint32_t opcodes[] = { 45 /* SOCKET */, 16 /* CONNECT */, 18 /* OPENAT */,
				    28 /* OPENAT2 */ };

static void check_error(int rc, const struct iour_rule_error *e, size_t len)
{
	FUZZ_CHECK(rc == -EBADMSG || rc == -EINVAL, "unexpected result %d", rc);
	if (rc != -EBADMSG)
		return;
	FUZZ_CHECK(e->pos <= len, "error position %zu past the text (%zu)", e->pos, len);
	FUZZ_CHECK(memchr(e->message, '\0', sizeof(e->message)), "message not terminated");
	FUZZ_CHECK(e->message[0], "empty message");
}

/* Two comparisons say the same (their sets compared by content). */
static bool same_cmp(const struct iour_cmp *a, const struct iour_cmp *b)
{
	return a->sz == b->sz && a->field == b->field && a->op == b->op && a->value == b->value &&
	       a->arg == b->arg && a->set_len == b->set_len &&
	       !memcmp(a->addr6, b->addr6, sizeof(a->addr6)) &&
	       (!a->set_len || (a->set && b->set &&
				!memcmp(a->set, b->set, (size_t)a->set_len * sizeof(*a->set))));
}

static void fuzz_parse(const char *text, size_t len, uint32_t opcode)
{
	struct iour_rule_error e = { .sz = sizeof(e) };
	struct iour_rule *r = (struct iour_rule *)&e, *r2 = NULL;
	const struct iour_cmp *c = NULL, *c2 = NULL;
	struct iour_filter *f = NULL;
	struct iour_prog *prog = NULL;
	int rc, n, n2;

	rc = iour_rule_parse(text, opcode, &r, &e);
	if (rc) {
		FUZZ_CHECK(r == (struct iour_rule *)&e, "rule pointer written on error %d", rc);
		FUZZ_CHECK(rc != -EINVAL || opcode > 255, "-EINVAL for opcode %u", opcode);
		check_error(rc, &e, len);
		return;
	}
	n = iour_rule_cmps(r, &c);
	FUZZ_CHECK(n >= 0 && n <= IOUR_FILTER_MAX_CMPS, "%d comparisons", n);
	FUZZ_CHECK(!iour_rule_parse(text, opcode, &r2, &e), "second parse failed");
	n2 = iour_rule_cmps(r2, &c2);
	FUZZ_CHECK(n2 == n, "two parses differ: %d and %d comparisons", n, n2);
	for (int i = 0; i < n; i++)
		FUZZ_CHECK(same_cmp(&c[i], &c2[i]), "two parses differ at comparison %d", i);
	FUZZ_CHECK(!iour_filter__new(NULL, &f), "no filter");
	rc = iour_filter__add_rule(f, opcode, IOUR_ALLOW, c, (size_t)n);
	FUZZ_CHECK(!rc, "the filter refuses a parsed rule: %d", rc);
	rc = iour_filter__compile(f, opcode, NULL, &prog);
	FUZZ_CHECK(!rc || rc == -IOUR_ERRNO__PROG_TOO_LARGE, "compile: %d", rc);
	iour_prog__free(prog);
	iour_filter__free(f);
	iour_rule_free(r2);
	iour_rule_free(r);
}

static void fuzz_ctx(const char *text, size_t len, uint32_t opcode)
{
	struct iour_rule_error e = { .sz = sizeof(e) };
	uint8_t ctx[IOUR_CTX_SIZE + 16], before[sizeof(ctx)];
	int rc;

	memset(ctx, 0xa5, sizeof(ctx));
	memcpy(before, ctx, sizeof(ctx));
	rc = iour_rule_ctx(text, opcode, ctx, IOUR_CTX_SIZE, &e);
	FUZZ_CHECK(!memcmp(ctx + IOUR_CTX_SIZE, before + IOUR_CTX_SIZE, 16),
		   "wrote past IOUR_CTX_SIZE");
	if (rc) {
		FUZZ_CHECK(!memcmp(ctx, before, sizeof(ctx)), "context written on error %d", rc);
		FUZZ_CHECK(rc != -EINVAL || opcode >= 65, "-EINVAL for opcode %u", opcode);
		check_error(rc, &e, len);
	}
}

static const char *const fields[] = {
	"socket.family", "socket.type",   "socket.type_flags", "socket.protocol", "open.flags",
	"open.accmode",  "open.mode",     "open.resolve",      "connect.family",  "connect.port",
	"connect.addr4", "connect.addr6", "sqe_flags",         "user_data",
};

static void fuzz_value(const char *text, size_t len, uint8_t pick)
{
	struct iour_rule_error e = { .sz = sizeof(e) };
	struct iour_cmp c, before;
	uint32_t field;
	int rc;

	rc = iour_rule_field(fields[pick % (sizeof(fields) / sizeof(fields[0]))],
			     IOUR_RULE_NO_OPCODE, &field, &e);
	FUZZ_CHECK(!rc, "field %s: %d", fields[pick % (sizeof(fields) / sizeof(fields[0]))], rc);
	memset(&c, 0x5a, sizeof(c));
	before = c;
	rc = iour_rule_value(text, field, &c, &e);
	if (rc) {
		FUZZ_CHECK(!memcmp(&c, &before, sizeof(c)), "comparison written on error %d", rc);
		FUZZ_CHECK(rc == -EBADMSG, "value: %d", rc);
		check_error(rc, &e, len);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz in = { data, size };
	char text[MAX_TEXT + 1];
	uint8_t pick = fz_u8(&in), mode = fz_u8(&in);
	uint32_t opcode = pick < 4 * 60 ? opcodes[pick % 4] : fz_u8(&in);
	size_t len = in.n < MAX_TEXT ? in.n : MAX_TEXT;

	memcpy(text, in.p, len);
	text[len] = '\0';
	len = strlen(text);
	switch (mode % 3) {
	case 0:
		fuzz_parse(text, len, opcode);
		break;
	case 1:
		fuzz_ctx(text, len, opcode);
		break;
	default:
		fuzz_value(text, len, pick);
		break;
	}
	return 0;
}
