/* SPDX-License-Identifier: MIT */
/**
 * @file common.h
 * @brief Definitions shared by every public header: the export marker and
 *        the conventions of the options structs.
 *
 * Conventions of the whole API:
 * - every fallible function returns 0 (or a non-negative count) on success
 *   and a negative errno value on failure; errno itself is never relied on;
 * - objects are opaque handles created by `iour_<object>__new()`, which hands
 *   the object back through an out-pointer, and released by
 *   `iour_<object>__free()`, which accepts NULL;
 * - extensible arguments are options structs whose first member, `sz`, holds
 *   `sizeof` the struct as the caller knows it.  Callers from other languages
 *   set `sz` and zero every other byte.  A NULL options pointer means "all
 *   defaults".  A larger struct from a newer caller is accepted only if the
 *   bytes the library does not know are zero (otherwise -E2BIG); a `sz`
 *   above #IOUR_OPTS_MAX_SZ is refused with -E2BIG before any byte past
 *   the known fields is read.  The library knows a struct up to the field
 *   named by the `<struct tag>__last_field` macro defined right after it
 *   (for example iour_probe_opts__last_field); every options struct has
 *   one, and a release that adds a field moves it.
 */
#ifndef IOURING_RESTRICT_COMMON_H
#define IOURING_RESTRICT_COMMON_H

#include <stddef.h>
#include <stdint.h>

#ifndef IOUR_API
/** @brief Marks a symbol exported from the shared library. */
#define IOUR_API __attribute__((visibility("default")))
#endif

/**
 * @brief The largest `sz` an options struct (or another struct the library
 *        reads, such as struct iour_features given to planning) may claim:
 *        larger values get -E2BIG, so a bogus size never makes the library
 *        read past the caller's memory.  Output structs the library fills
 *        have the same upper bound (-EINVAL there).
 */
#define IOUR_OPTS_MAX_SZ 4096

/**
 * @brief Declares and zero-initialises an options struct with its size set.
 *
 * Example: `IOUR_OPTS(iour_probe_opts, o, .flags = 0);`
 * @param TYPE the options struct's tag, without `struct`
 * @param NAME the variable to declare
 */
#define IOUR_OPTS(TYPE, NAME, ...) struct TYPE NAME = { .sz = sizeof(struct TYPE), __VA_ARGS__ }

#endif /* IOURING_RESTRICT_COMMON_H */
