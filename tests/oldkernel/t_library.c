/* SPDX-License-Identifier: MIT */
/*
 * The library itself, statically linked, on a real Linux 6.1 kernel.
 *
 * Each group below is one function; add a group (and call it from main),
 * or a new tests/oldkernel/t_NAME.c program, when a library module gains
 * behaviour that depends on the kernel generation.  The probe's answers
 * are checked in t_probe.c, the ring fallback (create, apply, clamping) in
 * t_ring.c, the enforcement check and the seccomp companion in
 * t_enforce.c, restriction-set export in t_ruleset.c.
 */
#include <string.h>

#include "guest.h"
#include "sys.h"

/* The syscall seam reports the kernel's answers as -errno. */
static void check_seam(void)
{
	struct kio_query_hdr q;

	CHECK("library version string", strlen(iour_version_string()) > 0);
	CHECK_EQ("seam: io_uring_setup(1, NULL)", iour__setup(1, NULL), -EFAULT);
	CHECK_EQ("seam: blind PROBE", iour__register(-1, KIO_REGISTER_PROBE, NULL, 0), -EBADF);
	memset(&q, 0, sizeof(q));
	CHECK_EQ("seam: blind QUERY", iour__register(-1, KIO_REGISTER_QUERY, &q, 0), -EINVAL);
	CHECK_EQ("seam: blind BPF_FILTER", iour__register(-1, KIO_REGISTER_BPF_FILTER, NULL, 1),
		 -EINVAL);
	CHECK_EQ("seam: close(-1)", iour__close(-1), -EBADF);
	CHECK_EQ("seam: PR_GET_NO_NEW_PRIVS", iour__prctl(39 /* PR_GET_NO_NEW_PRIVS */, 0, 0, 0, 0),
		 0);
	CHECK("errname(-EBADF)", strcmp(iour_errname(-EBADF), "-EBADF") == 0);
}

int main(void)
{
	check_seam();
	return guest_summary();
}
