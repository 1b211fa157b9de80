/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the policy-file parser (iour_policy__load_json()).
 * fuzz-requires: iour_policy__load_json iour_policy__save_json iour_policy__decide
 * fuzz-max-time: 15
 *
 * Input: the text of a policy file.  Invariants:
 *  - loading returns 0 or one of its documented errors; a refused text
 *    (-EBADMSG) always comes with a message and a position inside the
 *    text (line >= 1, offset <= length);
 *  - a loaded policy saves, the saved text loads again, and saving that
 *    gives the same bytes (the canonical form is a fixed point);
 *  - iour_policy__decide() answers for a context made from the input's
 *    first bytes, and the saved-and-loaded copy answers the same.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"
#include "iouring_restrict/iouring_restrict.h"

static char *save(const struct iour_policy *p)
{
	int n = iour_policy__save_json(p, 0, NULL, 0);
	char *b;

	FUZZ_CHECK(n > 0, "save sizing returned %d", n);
	b = malloc((size_t)n + 1);
	if (!b)
		abort();
	FUZZ_CHECK(iour_policy__save_json(p, 0, b, (size_t)n + 1) == n, "save changed length");
	return b;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	IOUR_OPTS(iour_policy_load_opts, o, .kernel = IOUR_KVER(7, 2));
	struct iour_load_error e = { .sz = sizeof(e) };
	struct iour_request_verdict v1 = { .sz = sizeof(v1) }, v2 = { .sz = sizeof(v2) };
	struct iour_policy *p = NULL, *q = NULL;
	uint8_t ctx[IOUR_CTX_SIZE] = { 0 };
	char *a, *b;
	int rc;

	rc = iour_policy__load_json((const char *)data, size, &o, &p, &e);
	if (rc) {
		FUZZ_CHECK(rc == -EBADMSG || rc == -IOUR_ERRNO__PROG_TOO_LARGE,
			   "load returned %d", rc);
		FUZZ_CHECK(memchr(e.message, '\0', sizeof(e.message)) && e.message[0],
			   "no message for %d", rc);
		FUZZ_CHECK(e.line >= 1 && e.offset <= size, "position %u/%llu outside the text",
			   e.line, (unsigned long long)e.offset);
		return 0;
	}
	a = save(p);
	rc = iour_policy__load_json(a, strlen(a), &o, &q, &e);
	FUZZ_CHECK(rc == 0, "saved text does not load (%d: %s):\n%s", rc, e.message, a);
	b = save(q);
	FUZZ_CHECK(!strcmp(a, b), "save(load(save(p))) differs:\n%s\n---\n%s", a, b);
	memcpy(ctx, data, size < sizeof(ctx) ? size : sizeof(ctx));
	FUZZ_CHECK(iour_policy__decide(p, ctx, sizeof(ctx), &v1) == 0, "decide failed");
	FUZZ_CHECK(iour_policy__decide(q, ctx, sizeof(ctx), &v2) == 0, "decide failed");
	FUZZ_CHECK(v1.verdict == v2.verdict, "the saved copy decides otherwise");
	free(a);
	free(b);
	iour_policy__free(p);
	iour_policy__free(q);
	return 0;
}
