/* SPDX-License-Identifier: MIT */
/**
 * @file version.h
 * @brief Library version: compile-time macros and run-time getters.
 *
 * The three IOUR_VERSION_* macros below are the single source of truth for
 * the version number: the Makefile, the pkg-config file and the shared
 * object's file name are all derived from them.
 */
#ifndef IOURING_RESTRICT_VERSION_H
#define IOURING_RESTRICT_VERSION_H

#include "common.h"

/** @brief Major version: bumped on an incompatible ABI change (SONAME). */
#define IOUR_VERSION_MAJOR 1
/** @brief Minor version: bumped when symbols are added (new version node). */
#define IOUR_VERSION_MINOR 1
/** @brief Patch version: bug fixes only. */
#define IOUR_VERSION_PATCH 0

/** @brief The version as one comparable number: major * 10000 + minor * 100 + patch. */
#define IOUR_VERSION_NUMBER \
	(IOUR_VERSION_MAJOR * 10000 + IOUR_VERSION_MINOR * 100 + IOUR_VERSION_PATCH)

/**
 * @brief True (1) when the headers are at least version @p maj.@p min.
 * @param maj major version to compare with
 * @param min minor version to compare with
 */
#define IOUR_VERSION_AT_LEAST(maj, min) \
	(IOUR_VERSION_MAJOR > (maj) || (IOUR_VERSION_MAJOR == (maj) && IOUR_VERSION_MINOR >= (min)))

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @brief **iour_version_major()** returns the major version of the library
 *        that is loaded at run time.
 * @return the run-time major version (compare with IOUR_VERSION_MAJOR).
 * @since 1.0
 */
IOUR_API unsigned int iour_version_major(void);

/**
 * @brief **iour_version_minor()** returns the minor version of the library
 *        that is loaded at run time.
 * @return the run-time minor version.
 * @since 1.0
 */
IOUR_API unsigned int iour_version_minor(void);

/**
 * @brief **iour_version_patch()** returns the patch version of the library
 *        that is loaded at run time.
 * @return the run-time patch version.
 * @since 1.0
 */
IOUR_API unsigned int iour_version_patch(void);

/**
 * @brief **iour_version_string()** returns the run-time version as text,
 *        e.g. "1.0.0".
 *
 * The format of the string is for humans and is not part of the ABI; compare
 * numbers with iour_version_major() and iour_version_minor().
 * @return a static, NUL-terminated string; never NULL.
 * @since 1.0
 */
IOUR_API const char *iour_version_string(void);

#ifdef __cplusplus
}
#endif

#endif /* IOURING_RESTRICT_VERSION_H */
