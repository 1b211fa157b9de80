/* SPDX-License-Identifier: MIT */
/*
 * The library itself, statically linked, on every kernel of make
 * check-kernels (expectations per generation: guest.h, guest_gen()).
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
#include "base/sys.h"

/* The syscall seam reports the kernel's answers as -errno. */
static void check_seam(void)
{
	struct kio_query_hdr q;
	long bpf;

	CHECK("library version string", strlen(iour_version_string()) > 0);
	CHECK_EQ("seam: io_uring_setup(1, NULL)", iour__setup(1, NULL), -EFAULT);
	CHECK_EQ("seam: blind PROBE (-EBADF to 6.12, then -EINVAL: doc/kernel.md 1.2)",
		 iour__register(-1, KIO_REGISTER_PROBE, NULL, 0),
		 guest_gen()->ver <= 612 ? -EBADF : -EINVAL);
	memset(&q, 0, sizeof(q));
	CHECK_EQ("seam: blind QUERY (0 from 6.18)", iour__register(-1, KIO_REGISTER_QUERY, &q, 0),
		 guest_gen()->query ? 0 : -EINVAL);
	bpf = iour__register(-1, KIO_REGISTER_BPF_FILTER, NULL, 1);
	if (guest_gen()->ver >= 700)
		CHECK("seam: blind BPF_FILTER (7.0+: -EFAULT, or -EACCES without no_new_privs)",
		      bpf == -EFAULT || bpf == -EACCES);
	else
		CHECK_EQ("seam: blind BPF_FILTER (before 7.0)", bpf, -EINVAL);
	CHECK_EQ("seam: close(-1)", iour__close(-1), -EBADF);
	CHECK_EQ("seam: PR_GET_NO_NEW_PRIVS", iour__prctl(39 /* PR_GET_NO_NEW_PRIVS */, 0, 0, 0, 0),
		 0);
	CHECK("errname(-EBADF)", strcmp(iour_errname(-EBADF), "-EBADF") == 0);
}

/* The line scripts/guest.sh reads the kernel's feature level from. */
static void report_level(void)
{
	struct iour_features f = { .sz = sizeof(f) };
	int rc = iour_probe(NULL, &f);

	CHECK_EQ("probe succeeds", rc, 0);
	if (rc)
		return;
	printf("guest level: %u (kernel level %u)\n", f.level, f.kernel_level);
	if (guest_gen()->exact)
		CHECK_EQ("probe's kernel level is this generation's (doc/kernel.md 5.5)",
			 f.kernel_level, guest_gen()->level);
	else
		CHECK("probe's kernel level at least the newest known generation's",
		      f.kernel_level >= guest_gen()->level);
}

int main(void)
{
	report_level();
	check_seam();
	return guest_summary();
}
