/* SPDX-License-Identifier: MIT */
/*
 * One stable radix sort for the filter compiler's large sorts: the values
 * of a map (filter_map.c, iour__fm_sort_u64()) and a deny-list's units
 * (filter_stack.c, sort_units()).  Linear in the elements where a
 * comparison sort is not, which keeps a 100,000-entry compile within a
 * constant factor per entry of a 1,000-entry one (doc/design.md,
 * "Stacked filters").  Not installed.
 */
#ifndef IOUR_LIB_RADIX_H
#define IOUR_LIB_RADIX_H

#include "base/internal.h"

#define IOUR__RADIX_MAX_DIGITS 16

/*
 * Sort the n elements of `size` bytes at v by their `ndigits` byte digits,
 * digit(e, 0) the least significant: a least-significant-digit-first radix
 * sort, stable (equal elements keep their order), that counts every digit
 * in one pass and skips a digit all elements share.  It is inline so that
 * each caller's digit function is inlined into its loops.  0 or -ENOMEM
 * (v unchanged).
 */
static inline __attribute__((always_inline)) int
iour__radix_sort(void *v, size_t n, size_t size, unsigned ndigits,
		 unsigned (*digit)(const void *e, unsigned d))
{
	size_t cnt[IOUR__RADIX_MAX_DIGITS][256];
	unsigned char *tmp, *from = v, *to;

	if (ndigits > IOUR__RADIX_MAX_DIGITS)
		return -IOUR_ERRNO__INTERNAL;
	tmp = iour__malloc((n ? n : 1) * size);
	if (!tmp)
		return -ENOMEM;
	to = tmp;
	memset(cnt, 0, ndigits * sizeof(cnt[0]));
	for (size_t i = 0; i < n; i++)
		for (unsigned d = 0; d < ndigits; d++)
			cnt[d][digit(from + i * size, d)]++;
	for (unsigned d = 0; d < ndigits; d++) {
		size_t sum = 0;
		bool one = false;

		for (unsigned k = 0; k < 256; k++) {
			size_t c = cnt[d][k];

			one |= c == n;
			cnt[d][k] = sum;
			sum += c;
		}
		if (one)
			continue; /* every element has this digit: nothing moves */
		for (size_t i = 0; i < n; i++)
			memcpy(to + size * cnt[d][digit(from + i * size, d)]++, from + i * size,
			       size);
		to = from;
		from = from == (unsigned char *)v ? tmp : v;
	}
	if (from != (unsigned char *)v)
		memcpy(v, from, n * size);
	iour__free(tmp);
	return 0;
}

#endif /* IOUR_LIB_RADIX_H */
