/* SPDX-License-Identifier: MIT */
/* Small helpers shared by the benchmark programs. */
#ifndef IOUR_BENCH_UTIL_H
#define IOUR_BENCH_UTIL_H

#include <stdint.h>
#include <stdlib.h>
#include <time.h>

static inline uint64_t bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static inline int bench_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Median of n samples (sorts in place). */
static inline double bench_median(uint64_t *v, size_t n)
{
	qsort(v, n, sizeof(*v), bench_cmp_u64);
	return n % 2 ? (double)v[n / 2] : ((double)v[n / 2 - 1] + (double)v[n / 2]) / 2.0;
}

#endif
