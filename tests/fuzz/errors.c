/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the error-message helpers and the options-struct check.
 * fuzz-requires: iour_strerror iour_errname
 * fuzz-max-time: 10
 *
 * Input: a 32-bit error code, a buffer length (0..255) and the bytes of an
 * options struct.  Invariants:
 *  - iour_strerror() returns one of its documented codes, never writes
 *    outside the caller's buffer (the buffer is allocated at exactly its
 *    length, so ASan sees any overrun) and leaves a NUL-terminated string
 *    whenever the length is not 0;
 *  - iour_errname() never returns NULL and agrees with iour_strerror() on
 *    which codes are known;
 *  - iour__opts_check() accepts a struct exactly when its size covers
 *    `sz` and every byte the library does not know is zero.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"
#include "base/internal.h"
#include "iouring_restrict/errors.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz in = { data, size };
	int err = (int)fz_u32(&in);
	size_t len = fz_u8(&in);
	size_t known = fz_u8(&in) % 64;
	char *buf = len ? malloc(len) : NULL;
	const char *name;
	uint8_t opts[256];
	size_t user_sz, i;
	int rc, want;

	if (len && !buf)
		return 0;
	if (buf)
		memset(buf, 'x', len);
	rc = iour_strerror(err, buf, len);
	FUZZ_CHECK(rc == 0 || rc == -ERANGE || rc == -ENOENT, "iour_strerror(%d, %zu) = %d", err,
		   len, rc);
	if (len)
		FUZZ_CHECK(memchr(buf, '\0', len) != NULL, "no NUL in %zu bytes", len);
	else
		FUZZ_CHECK(rc == -ERANGE, "iour_strerror with len 0 returned %d", rc);
	name = iour_errname(err);
	FUZZ_CHECK(name != NULL && *name, "iour_errname(%d) is empty", err);
	if (rc == -ENOENT)
		FUZZ_CHECK(strcmp(name, "UNKNOWN") == 0, "unknown to strerror, named %s", name);
	free(buf);
	FUZZ_CHECK(iour_strerror(err, NULL, 1) == -EINVAL, "NULL buffer accepted");

	/* Options struct: sz first, then whatever bytes follow. */
	user_sz = in.n < sizeof(opts) ? in.n : sizeof(opts);
	fz_bytes(&in, opts, user_sz);
	if (user_sz < sizeof(size_t)) {
		want = -EINVAL;
	} else {
		want = 0;
		for (i = known; i < user_sz; i++)
			if (opts[i])
				want = -E2BIG;
	}
	rc = iour__opts_check(opts, user_sz, known < sizeof(size_t) ? sizeof(size_t) : known);
	if (known < sizeof(size_t) && want == -E2BIG) {
		want = 0;
		for (i = sizeof(size_t); i < user_sz; i++)
			if (opts[i])
				want = -E2BIG;
	}
	FUZZ_CHECK(rc == want, "iour__opts_check(sz %zu, known %zu) = %d, expected %d", user_sz,
		   known, rc, want);
	return 0;
}
