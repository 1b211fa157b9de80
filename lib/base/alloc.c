/* SPDX-License-Identifier: MIT */
/*
 * The state behind the library's allocation seam (the inline wrappers in
 * internal.h).
 *
 * In normal use nothing here runs: the wrappers see `iour__alloc_armed`
 * clear and call the C library directly.  The library's tests arm a
 * counter that makes exactly the Nth allocation fail and tracks how many
 * blocks are outstanding, so that every failure path of a public operation
 * can be driven and checked for -ENOMEM and for leaks.
 */
#include "internal.h"

int iour__alloc_armed;

static struct {
	unsigned long fail_at; /* 1-based; 0: count only */
	unsigned long calls;
	long live;
} seam;

bool iour__alloc_fail_now(void)
{
	unsigned long n = __atomic_add_fetch(&seam.calls, 1, __ATOMIC_RELAXED);

	return n == __atomic_load_n(&seam.fail_at, __ATOMIC_RELAXED);
}

void iour__alloc_live(long delta)
{
	__atomic_add_fetch(&seam.live, delta, __ATOMIC_RELAXED);
}

void iour__alloc_arm(unsigned long fail_at)
{
	__atomic_store_n(&seam.fail_at, fail_at, __ATOMIC_RELAXED);
	__atomic_store_n(&seam.calls, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&seam.live, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&iour__alloc_armed, 1, __ATOMIC_RELEASE);
}

void iour__alloc_disarm(unsigned long *calls, long *live)
{
	__atomic_store_n(&iour__alloc_armed, 0, __ATOMIC_RELEASE);
	if (calls)
		*calls = __atomic_load_n(&seam.calls, __ATOMIC_RELAXED);
	if (live)
		*live = __atomic_load_n(&seam.live, __ATOMIC_RELAXED);
}
