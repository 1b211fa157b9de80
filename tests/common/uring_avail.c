/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <linux/io_uring.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "iouring_restrict/iouring_restrict.h"
#include "uring_avail.h"

/* IORING_UNREGISTER_BUFFERS: on a ring with no buffers every kernel since
 * 5.1 answers ENXIO; EPERM or ENOSYS can only come from a filter. */
#define PROBE_UNREGISTER_BUFFERS 1

/* "NAME=VALUE" of a sysctl, or "NAME absent" when the kernel has none
 * (kernel.io_uring_group's own default is -1: no group). */
static const char *sysctl_text(const char *name, char *buf, size_t len)
{
	char path[96];
	FILE *f;
	int v;

	snprintf(path, sizeof(path), "/proc/sys/kernel/%s", name);
	f = fopen(path, "re");
	if (!f) {
		snprintf(buf, len, "kernel.%s absent", name);
		return buf;
	}
	if (fscanf(f, "%d", &v) == 1)
		snprintf(buf, len, "kernel.%s=%d", name, v);
	else
		snprintf(buf, len, "kernel.%s unreadable", name);
	fclose(f);
	return buf;
}

const char *uring_unusable(void)
{
	static char why[320];
	static int probed;
	struct io_uring_params params;
	char dis[64], grp[64];
	const char *call = NULL;
	int err = 0;
	long fd;

	if (probed)
		return why[0] ? why : NULL;
	probed = 1;
	memset(&params, 0, sizeof(params));
	fd = syscall(__NR_io_uring_setup, 1, &params);
	if (fd < 0) {
		call = "io_uring_setup";
		err = errno;
	} else {
		if (syscall(__NR_io_uring_register, (int)fd, PROBE_UNREGISTER_BUFFERS, NULL, 0) <
			    0 &&
		    (errno == EPERM || errno == ENOSYS)) {
			call = "io_uring_register";
			err = errno;
		}
		close((int)fd);
	}
	if (call)
		snprintf(why, sizeof(why),
			 "io_uring is not usable by this process: %s answers %s (%s, %s)", call,
			 iour_errname(-err), sysctl_text("io_uring_disabled", dis, sizeof(dis)),
			 sysctl_text("io_uring_group", grp, sizeof(grp)));
	return why[0] ? why : NULL;
}
