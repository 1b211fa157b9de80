/* SPDX-License-Identifier: MIT */
/*
 * The library's one allocation seam (see internal.h).
 *
 * Every allocation and release in lib/ goes through these wrappers.  In
 * normal use they cost one relaxed load each.  The library's tests arm a
 * counter that makes exactly the Nth allocation fail and tracks how many
 * allocations are outstanding, so that every failure path of a public
 * operation can be driven and checked for -ENOMEM and for leaks.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static struct {
	int armed;
	unsigned long fail_at; /* 1-based; 0: count only */
	unsigned long calls;
	long live;
} seam;

/* Counts one allocation attempt; true when it must fail. */
static bool attempt_fails(void)
{
	unsigned long n;

	if (iour_likely(!__atomic_load_n(&seam.armed, __ATOMIC_RELAXED)))
		return false;
	n = __atomic_add_fetch(&seam.calls, 1, __ATOMIC_RELAXED);
	return n == __atomic_load_n(&seam.fail_at, __ATOMIC_RELAXED);
}

static void *counted(void *p)
{
	if (p && __atomic_load_n(&seam.armed, __ATOMIC_RELAXED))
		__atomic_add_fetch(&seam.live, 1, __ATOMIC_RELAXED);
	return p;
}

void *iour__malloc(size_t n)
{
	return attempt_fails() ? NULL : counted(malloc(n));
}

void *iour__calloc(size_t n, size_t size)
{
	return attempt_fails() ? NULL : counted(calloc(n, size));
}

void *iour__realloc(void *p, size_t n)
{
	void *q;

	if (attempt_fails())
		return NULL;
	q = realloc(p, n);
	/* Only a fresh block (p == NULL) adds to the outstanding count. */
	return p ? q : counted(q);
}

char *iour__strdup(const char *s)
{
	return attempt_fails() ? NULL : counted(strdup(s));
}

void iour__free(void *p)
{
	if (p && __atomic_load_n(&seam.armed, __ATOMIC_RELAXED))
		__atomic_sub_fetch(&seam.live, 1, __ATOMIC_RELAXED);
	free(p);
}

void iour__alloc_arm(unsigned long fail_at)
{
	__atomic_store_n(&seam.fail_at, fail_at, __ATOMIC_RELAXED);
	__atomic_store_n(&seam.calls, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&seam.live, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&seam.armed, 1, __ATOMIC_RELEASE);
}

void iour__alloc_disarm(unsigned long *calls, long *live)
{
	__atomic_store_n(&seam.armed, 0, __ATOMIC_RELEASE);
	if (calls)
		*calls = __atomic_load_n(&seam.calls, __ATOMIC_RELAXED);
	if (live)
		*live = __atomic_load_n(&seam.live, __ATOMIC_RELAXED);
}
