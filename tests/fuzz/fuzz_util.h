/* SPDX-License-Identifier: MIT */
/*
 * Helpers shared by the libFuzzer targets in tests/fuzz/.
 *
 * A harness decodes its input with the fz_* readers (a short input reads as
 * zeros, so every byte string is a valid input) and states its invariants
 * with FUZZ_CHECK: a violated invariant prints what failed and aborts, which
 * libFuzzer reports as a crash and saves the input under
 * build/fuzz/artifacts/NAME/.
 */
#ifndef IOUR_FUZZ_UTIL_H
#define IOUR_FUZZ_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FUZZ_CHECK(cond, ...)                                                                     \
	do {                                                                                      \
		if (!(cond)) {                                                                    \
			fprintf(stderr, "FUZZ CHECK FAILED at %s:%d: %s\n  ", __FILE__, __LINE__, \
				#cond);                                                           \
			fprintf(stderr, __VA_ARGS__);                                             \
			fputc('\n', stderr);                                                      \
			abort();                                                                  \
		}                                                                                 \
	} while (0)

struct fz {
	const uint8_t *p;
	size_t n;
};

static inline bool fz_empty(const struct fz *in)
{
	return in->n == 0;
}

static inline uint8_t fz_u8(struct fz *in)
{
	if (!in->n)
		return 0;
	in->n--;
	return *in->p++;
}

static inline uint16_t fz_u16(struct fz *in)
{
	uint16_t v = fz_u8(in);

	return (uint16_t)(v | (uint16_t)fz_u8(in) << 8);
}

static inline uint32_t fz_u32(struct fz *in)
{
	uint32_t v = fz_u16(in);

	return v | (uint32_t)fz_u16(in) << 16;
}

static inline uint64_t fz_u64(struct fz *in)
{
	uint64_t v = fz_u32(in);

	return v | (uint64_t)fz_u32(in) << 32;
}

/* Copy up to len bytes; the rest of dst is zero-filled. */
static inline void fz_bytes(struct fz *in, void *dst, size_t len)
{
	size_t k = len < in->n ? len : in->n;

	memcpy(dst, in->p, k);
	memset((uint8_t *)dst + k, 0, len - k);
	in->p += k;
	in->n -= k;
}

/* A value in [0, n) (n > 0). */
static inline uint32_t fz_below(struct fz *in, uint32_t n)
{
	return n ? fz_u8(in) % n : 0;
}

#endif
