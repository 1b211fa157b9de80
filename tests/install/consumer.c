/* SPDX-License-Identifier: MIT */
/*
 * A minimal program built against an installed libiouring-restrict, the way a
 * user builds one:  cc consumer.c $(pkg-config --cflags --libs iouring-restrict)
 * It checks that the headers, the library and the .pc agree on the version
 * (EXPECT_VERSION comes from `pkg-config --modversion`).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <iouring_restrict/iouring_restrict.h>

#ifndef EXPECT_VERSION
#error "build with -DEXPECT_VERSION=\"$(pkg-config --modversion iouring-restrict)\""
#endif

int main(void)
{
	char hdr[32], msg[128];

	snprintf(hdr, sizeof(hdr), "%d.%d.%d", IOUR_VERSION_MAJOR, IOUR_VERSION_MINOR,
		 IOUR_VERSION_PATCH);
	if (strcmp(hdr, EXPECT_VERSION) != 0 ||
	    strcmp(iour_version_string(), EXPECT_VERSION) != 0) {
		fprintf(stderr, "consumer: version mismatch: header %s, library %s, .pc %s\n", hdr,
			iour_version_string(), EXPECT_VERSION);
		return 1;
	}
	if (iour_strerror(-EINVAL, msg, sizeof(msg)) != 0 ||
	    strcmp(iour_errname(-EINVAL), "-EINVAL") != 0) {
		fprintf(stderr, "consumer: error helpers failed\n");
		return 1;
	}
	printf("consumer: libiouring-restrict %s linked and running\n", iour_version_string());
	return 0;
}
