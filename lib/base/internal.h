/* SPDX-License-Identifier: MIT */
/*
 * Private helpers shared by the library's modules.  Not installed.
 */
#ifndef IOUR_LIB_INTERNAL_H
#define IOUR_LIB_INTERNAL_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "iouring_restrict/common.h"
#include "iouring_restrict/errors.h"
#include "uapi.h"

#define IOUR_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Request opcodes the library's per-opcode tables cover (a u8 in the SQE). */
#define IOUR__NOPCODES 256
#define iour_likely(x) __builtin_expect(!!(x), 1)
#define iour_unlikely(x) __builtin_expect(!!(x), 0)

/* Marks a function that is visible to the library's own tests (which link
 * the static archive) but never exported from the shared object. */
#define IOUR_INTERNAL __attribute__((visibility("hidden")))

/*
 * Options structs.  The caller passes `sz` = sizeof(struct) as it knows it.
 * - sz smaller than the first field after `sz`: -EINVAL;
 * - sz larger than IOUR_OPTS_MAX_SZ: -E2BIG, before any byte is read;
 * - sz larger than what the library knows: accepted only if every unknown
 *   trailing byte is zero (-E2BIG otherwise), so a newer caller that does not
 *   use a newer field still works;
 * - a field is read only if it lies entirely within the caller's sz.
 */
IOUR_INTERNAL int iour__opts_check(const void *opts, size_t user_sz, size_t known_sz);

/* Field sizes are taken as sizeof(__typeof__(...)): a plain sizeof of a
 * pointer field reads as a sizeof(pointer) mistake to clang-tidy. */
#define IOUR_OPTS_END(TYPE, LAST) \
	(offsetof(struct TYPE, LAST) + sizeof(__typeof__(((struct TYPE *)0)->LAST)))

/* 0 if valid (or NULL), -EINVAL / -E2BIG otherwise.  The library knows
 * the struct up to TYPE##__last_field, defined beside the struct in its
 * public header (common.h's discipline; checked by IOUR_OPTS_LAST_OK). */
#define IOUR_OPTS_VALID(opts, TYPE) \
	((opts) ? iour__opts_check((opts), (opts)->sz, IOUR_OPTS_END(TYPE, TYPE##__last_field)) : 0)

/* True at compile time if TYPE##__last_field ends the struct: nothing but
 * tail padding follows it.  lib/base/errors.c asserts it for every options
 * struct, so a field added after the old last one fails the build unless
 * __last_field moves with it. */
#define IOUR_OPTS_LAST_OK(TYPE)                                                  \
	((IOUR_OPTS_END(TYPE, TYPE##__last_field) + _Alignof(struct TYPE) - 1) / \
		 _Alignof(struct TYPE) * _Alignof(struct TYPE) ==                \
	 sizeof(struct TYPE))

/* Is FIELD present in the caller's struct? */
#define IOUR_OPTS_HAS(opts, FIELD) ((opts) && IOUR_OUT_HAS(opts, FIELD))

/* The caller's value of FIELD, or DEF when absent or opts is NULL. */
#define IOUR_OPTS_GET(opts, FIELD, DEF) (IOUR_OPTS_HAS(opts, FIELD) ? (opts)->FIELD : (DEF))

/* Same rule for output structs the library fills (sz first).  `out` must
 * not be NULL: the library only looks at an output struct it writes to
 * (a NULL test here would make the static analysers doubt every write that
 * follows). */
#define IOUR_OUT_HAS(out, FIELD) \
	((out)->sz >= offsetof(__typeof__(*(out)), FIELD) + sizeof(__typeof__((out)->FIELD)))

/*
 * The allocation seam (lib/base/alloc.c): every allocation and release in lib/
 * goes through these, never through malloc/calloc/realloc/strdup/free
 * directly (`make lint` checks this).  Memory from them is released with
 * iour__free().  They are inline so that the static analysers still see
 * the C library's allocation functions; unarmed, they add one load.
 */
IOUR_INTERNAL extern int iour__alloc_armed;
/* Armed only: counts one attempt; true when this one must fail. */
IOUR_INTERNAL bool iour__alloc_fail_now(void);
/* Armed only: one block more (+1) or fewer (-1) outstanding. */
IOUR_INTERNAL void iour__alloc_live(long delta);

static inline bool iour__alloc_fails(void)
{
	return iour_unlikely(__atomic_load_n(&iour__alloc_armed, __ATOMIC_RELAXED)) &&
	       iour__alloc_fail_now();
}

static inline void *iour__alloc_got(void *p)
{
	if (p && iour_unlikely(__atomic_load_n(&iour__alloc_armed, __ATOMIC_RELAXED)))
		iour__alloc_live(1);
	return p;
}

static inline void *iour__malloc(size_t n)
{
	return iour__alloc_fails() ? NULL : iour__alloc_got(malloc(n));
}

static inline void *iour__calloc(size_t n, size_t size)
{
	return iour__alloc_fails() ? NULL : iour__alloc_got(calloc(n, size));
}

/* Only a fresh block (p == NULL) adds to the outstanding count. */
static inline void *iour__realloc(void *p, size_t n)
{
	void *q;

	if (iour__alloc_fails())
		return NULL;
	q = realloc(p, n);
	return p ? q : iour__alloc_got(q);
}

static inline char *iour__strdup(const char *s)
{
	return iour__alloc_fails() ? NULL : (char *)iour__alloc_got(strdup(s));
}

static inline void iour__free(void *p)
{
	if (p && iour_unlikely(__atomic_load_n(&iour__alloc_armed, __ATOMIC_RELAXED)))
		iour__alloc_live(-1);
	free(p);
}

/* For the library's tests: from now on count allocation attempts, make
 * attempt number `fail_at` (1-based; 0 for none) return NULL, and count the
 * blocks allocated and not yet released.  Not for concurrent use. */
IOUR_INTERNAL void iour__alloc_arm(unsigned long fail_at);
/* Stop; report the attempts made and the blocks still outstanding. */
IOUR_INTERNAL void iour__alloc_disarm(unsigned long *calls, long *live);

/* The error sets of the public functions, one per function: lib/base/errsets.def. */
enum iour__errset {
#define IOUR_ERRSET(id, function, ...) IOUR__ERRSET_##id,
#include "errsets.def"
	IOUR__ERRSET_COUNT
};

/* The set's codes (positive, 0-terminated) and the public function it
 * belongs to; NULL for an id out of range. */
IOUR_INTERNAL const int *iour__errset(enum iour__errset id);
IOUR_INTERNAL const char *iour__errset_function(enum iour__errset id);

/*
 * The boundary filter for error codes: a public function passes its result
 * through this with its error set (lib/base/errsets.def), the closed set of
 * codes it documents; anything else becomes -IOUR_ERRNO__INTERNAL so that
 * new internal codes never leak.
 */
IOUR_INTERNAL int iour__err_public(int rc, enum iour__errset set);

/*
 * The error detail of the calling thread (iour_errdetail(), errors.h): a
 * public function that can say which value it refused and what the limit
 * is records it here as it fails, under its own name.  Such a function
 * calls iour__detail_reset() on entry, so that a detail read after its
 * return is always from that very call.  iour__detail() records and is
 * @err (a macro, so that the analyzers see the code returned).
 */
IOUR_INTERNAL void iour__detail_reset(const char *function);
IOUR_INTERNAL void iour__detail_set(const char *function, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
#define iour__detail(function, err, ...) (iour__detail_set((function), (err), __VA_ARGS__), (err))

/* The smallest IORING_REGISTER_LAST of any kernel with per-ring
 * restrictions and this IORING_OP_LAST, from the name tables (names.c);
 * 0 below 5.10's 34. */
IOUR_INTERNAL uint32_t iour__reg_last_for_op_last(uint32_t op_last);

/* Read a small decimal integer file (a sysctl): 0, or -1 when it is
 * absent, empty or not a number. */
int iour__read_int_file(const char *path, int32_t *val);

/* Name of a request opcode for messages ("SOCKET", or "opcode 70"). */
IOUR_INTERNAL const char *iour__op_label(uint32_t op, char *tmp, size_t tmplen);

/* The representative kernel of a feature level (lib/base/kernels.c):
 * IOUR_KVER(), 0 for none; its name ("Linux 6.1"). */
IOUR_INTERNAL uint32_t iour__kernel_level_kver(uint32_t level);
IOUR_INTERNAL const char *iour__kernel_level_name(uint32_t level);
/* The first release of a feature level (lib/base/kernels.c, from the
 * kernel facts): IOUR_KVER(), 0 for none. */
IOUR_INTERNAL uint32_t iour__kernel_level_first(uint32_t level);

#endif /* IOUR_LIB_INTERNAL_H */
