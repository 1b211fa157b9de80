/* SPDX-License-Identifier: MIT */
/*
 * Fault injection on the seam's process and memory calls (lib/base/sys.h): mmap,
 * munmap, fork, memfd_create and execve.  Each failure must come back as
 * the errno the public header documents, and leave no mapping, descriptor
 * or allocation behind.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "iouring_restrict/iouring_restrict.h"
#include "base/internal.h"
#include "base/miniring.h"
#include "base/sys.h"
#include "uring_avail.h"

enum kind { K_NONE, K_MMAP, K_MUNMAP, K_FORK, K_MEMFD, K_EXECVE };

/* The armed fault: the nth call of `kind` fails with -err, without effect. */
static struct {
	enum kind kind;
	unsigned int nth, seen;
	int err;
	long maps;          /* successful mmaps minus munmaps */
	void *kept[4];      /* maps a failed munmap left (released at the end) */
	size_t kept_len[4];
	unsigned int n_kept;
} flt;

static struct iour_sys_ops ops;

static bool hit(enum kind k)
{
	return flt.kind == k && ++flt.seen == flt.nth;
}

static long f_mmap(void *ctx, void **out, size_t len, int prot, int flags, int fd, off_t off)
{
	long rc;

	if (hit(K_MMAP))
		return -flt.err;
	rc = iour__sys_real()->mmap(ctx, out, len, prot, flags, fd, off);
	if (rc == 0)
		flt.maps++;
	return rc;
}

static long f_munmap(void *ctx, void *addr, size_t len)
{
	if (hit(K_MUNMAP)) {
		if (flt.n_kept < 4) {
			flt.kept[flt.n_kept] = addr;
			flt.kept_len[flt.n_kept++] = len;
		}
		return -flt.err;
	}
	flt.maps--;
	return iour__sys_real()->munmap(ctx, addr, len);
}

static long f_fork(void *ctx)
{
	return hit(K_FORK) ? -flt.err : iour__sys_real()->fork(ctx);
}

static long f_memfd(void *ctx, const char *name, unsigned int flags)
{
	return hit(K_MEMFD) ? -flt.err : iour__sys_real()->memfd_create(ctx, name, flags);
}

/* Runs in the check's child, which inherits the armed fault. */
static long f_execve(void *ctx, const char *path, char *const argv[], char *const envp[])
{
	return hit(K_EXECVE) ? -flt.err : iour__sys_real()->execve(ctx, path, argv, envp);
}

static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	cr_assert_not_null(d);
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

static int fds_before;

/* Warm the probe cache first, so only the call under test is counted. */
static void arm(enum kind k, unsigned int nth, int err)
{
	cr_assert_geq(iour_feature_level(), IOUR_LEVEL_RING);
	memset(&flt, 0, sizeof(flt));
	flt.kind = k;
	flt.nth = nth;
	flt.err = err;
	ops = *iour__sys_real();
	ops.mmap = f_mmap;
	ops.munmap = f_munmap;
	ops.fork = f_fork;
	ops.memfd_create = f_memfd;
	ops.execve = f_execve;
	fds_before = open_fds();
	iour__sys_set(&ops);
	iour__alloc_arm(0);
}

/* The fault fired, and nothing is left behind. */
static void disarm_no_leak(const char *what)
{
	unsigned long calls;
	long live;
	unsigned int i;

	iour__alloc_disarm(&calls, &live);
	iour__sys_set(NULL);
	cr_expect_eq(flt.seen >= flt.nth, true, "%s: the fault was reached", what);
	cr_expect_eq(flt.maps, 0, "%s: every mapping released", what);
	cr_expect_eq(live, 0, "%s: every allocation released", what);
	cr_expect_eq(open_fds(), fds_before, "%s: no descriptor left open", what);
	for (i = 0; i < flt.n_kept; i++)
		munmap(flt.kept[i], flt.kept_len[i]);
}

static struct iour_verify_req nop_req(void)
{
	struct iour_verify_req r;

	memset(&r, 0, sizeof(r));
	r.sz = sizeof(r);
	r.opcode = 0; /* IORING_OP_NOP */
	r.expect = IOUR_EXPECT_ALLOW;
	return r;
}

/* mmap: each of the mini ring's maps fails in turn; its errno comes back
 * and the ring fd and earlier maps are released. */
Test(sys_faults, mmap_miniring_each_map)
{
	UNIT_REQUIRE_URING();
	unsigned int nth;

	for (nth = 1; nth <= 3; nth++) {
		struct iour__ring r;
		int rc;

		arm(K_MMAP, nth, ENOMEM);
		rc = iour__ring_init(&r, 8, 0);
		if (flt.seen < nth) { /* a single-mmap kernel has two maps */
			cr_assert_eq(rc, 0);
			iour__ring_exit(&r);
			flt.nth = flt.seen;
			disarm_no_leak("mini ring, no such map");
			continue;
		}
		cr_expect_eq(rc, -ENOMEM, "map %u: %d", nth, rc);
		disarm_no_leak("mini ring");
	}
}

/* mmap: the probe's shared page; resource errnos are kept, others become
 * -ENOMEM (probe.h). */
Test(sys_faults, mmap_probe_shared_page)
{
	UNIT_REQUIRE_URING();
	static const struct {
		int err, want;
	} c[] = { { ENOMEM, -ENOMEM }, { EAGAIN, -EAGAIN }, { EINVAL, -ENOMEM } };
	IOUR_OPTS(iour_probe_opts, o, .flags = IOUR_PROBE_NO_CACHE);
	struct iour_features f = { .sz = sizeof(f) };
	size_t i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		arm(K_MMAP, 1, c[i].err);
		cr_expect_eq(iour_probe(&o, &f), c[i].want, "mmap errno %d", c[i].err);
		disarm_no_leak("probe");
	}
}

/* mmap: the enforcement check's channel (-ENOMEM, verify.h); the memfd is
 * closed. */
Test(sys_faults, mmap_verify_channel)
{
	UNIT_REQUIRE_URING();
	struct iour_verify_req r = nop_req();

	arm(K_MMAP, 1, ENOMEM);
	cr_expect_eq(iour_verify(&r, 1, NULL, NULL), -ENOMEM);
	disarm_no_leak("verify channel");
}

/* munmap: a failing unmap does not stop the rest of the clean-up. */
Test(sys_faults, munmap_failure_still_closes_ring)
{
	UNIT_REQUIRE_URING();
	struct iour__ring r;

	arm(K_NONE, 0, 0);
	cr_assert_eq(iour__ring_init(&r, 8, 0), 0);
	flt.kind = K_MUNMAP;
	flt.nth = 1;
	flt.err = EINVAL;
	flt.maps--; /* the map the fault keeps is released at the end */
	iour__ring_exit(&r);
	cr_expect_eq(r.fd, -1);
	disarm_no_leak("ring exit");
}

/* fork: the probe child (EAGAIN as itself, anything else -ECHILD) and the
 * check's child (EAGAIN, or ENOMEM as itself); the shared memory and the
 * channel are released. */
Test(sys_faults, fork_probe_and_verify)
{
	UNIT_REQUIRE_URING();
	IOUR_OPTS(iour_probe_opts, o, .flags = IOUR_PROBE_NO_CACHE);
	struct iour_features f = { .sz = sizeof(f) };
	struct iour_verify_req r = nop_req();

	arm(K_FORK, 1, EAGAIN);
	cr_expect_eq(iour_probe(&o, &f), -EAGAIN);
	disarm_no_leak("probe fork EAGAIN");
	arm(K_FORK, 1, ENOSYS);
	cr_expect_eq(iour_probe(&o, &f), -ECHILD);
	disarm_no_leak("probe fork ENOSYS");
	arm(K_FORK, 1, EAGAIN);
	cr_expect_eq(iour_verify(&r, 1, NULL, NULL), -EAGAIN);
	disarm_no_leak("verify fork EAGAIN");
	arm(K_FORK, 1, ENOMEM);
	cr_expect_eq(iour_verify(&r, 1, NULL, NULL), -ENOMEM);
	disarm_no_leak("verify fork ENOMEM");
}

/* memfd_create: the check's channel (-EMFILE for a descriptor shortage,
 * -ENOMEM, otherwise -ECHILD; verify.h). */
Test(sys_faults, memfd_verify_channel)
{
	UNIT_REQUIRE_URING();
	static const struct {
		int err, want;
	} c[] = { { EMFILE, -EMFILE }, { ENFILE, -EMFILE }, { ENOMEM, -ENOMEM }, { EPERM, -ECHILD } };
	struct iour_verify_req r = nop_req();
	size_t i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		arm(K_MEMFD, 1, c[i].err);
		cr_expect_eq(iour_verify(&r, 1, NULL, NULL), c[i].want, "memfd errno %d", c[i].err);
		disarm_no_leak("verify memfd");
	}
}

/* execve: the helper cannot be executed: -ECHILD, and NOT_RUN results
 * carrying execve's -errno (verify.h). */
Test(sys_faults, execve_verify_helper)
{
	UNIT_REQUIRE_URING();
	struct iour_verify_req r = nop_req();
	struct iour_verify_result res;
	IOUR_OPTS(iour_verify_opts, o, .exec_path = "/bin/true");

	memset(&res, 0xff, sizeof(res));
	arm(K_EXECVE, 1, ENOEXEC);
	cr_expect_eq(iour_verify(&r, 1, &res, &o), -ECHILD);
	cr_expect_eq(res.status, IOUR_VERIFY_NOT_RUN);
	cr_expect_eq(res.res, -ENOEXEC);
	/* the fault fired in the child, so this process counted nothing */
	flt.seen = flt.nth;
	disarm_no_leak("verify execve");
}
