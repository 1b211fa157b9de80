/* SPDX-License-Identifier: MIT */
#include "internal.h"
#include "iouring_restrict/version.h"

#define IOUR_STR2(x) #x
#define IOUR_STR(x) IOUR_STR2(x)

/* Documented in include/iouring_restrict/version.h */
unsigned int iour_version_major(void)
{
	return IOUR_VERSION_MAJOR;
}

/* Documented in include/iouring_restrict/version.h */
unsigned int iour_version_minor(void)
{
	return IOUR_VERSION_MINOR;
}

/* Documented in include/iouring_restrict/version.h */
unsigned int iour_version_patch(void)
{
	return IOUR_VERSION_PATCH;
}

/* Documented in include/iouring_restrict/version.h */
const char *iour_version_string(void)
{
	return IOUR_STR(IOUR_VERSION_MAJOR) "." IOUR_STR(IOUR_VERSION_MINOR) "." IOUR_STR(
		IOUR_VERSION_PATCH);
}
