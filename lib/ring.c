/* SPDX-License-Identifier: MIT */
/*
 * Applying a restriction set to a ring: R_DISABLED -> RESTRICTIONS ->
 * ENABLE_RINGS, with everything that can be checked checked before the
 * first system call on the ring.
 */
#include <errno.h>
#include <string.h>

#include "iouring_restrict/names.h"
#include "iouring_restrict/ring.h"
#include "miniring.h"
#include "probe_internal.h"
#include "ruleset_internal.h"
#include "sys.h"

#define REND(m) (offsetof(struct iour_ring_report, m) + sizeof(((struct iour_ring_report *)0)->m))
#define REPORT_MAX_SZ 4096
_Static_assert(REND(clamped_register_ops) == sizeof(struct iour_ring_report),
	       "iour_ring_report has trailing padding");
_Static_assert(sizeof(struct iour_ring_report) == 104, "iour_ring_report layout changed");
_Static_assert(sizeof(struct iour_ring_apply_opts) == 24, "iour_ring_apply_opts layout");
_Static_assert(sizeof(struct iour_ring_create_opts) == 24, "iour_ring_create_opts layout");

/* The kernel entries for the running kernel, computed before any ring
 * system call. */
struct prepared {
	struct kio_restriction ent[IOUR__MAX_ENTRIES];
	int n;
	struct iour__kernel_limits lim;
	struct iour__clamp clamp;
};

static int report_valid(const struct iour_ring_report *rep)
{
	if (rep && (rep->sz < REND(registered) || rep->sz > REPORT_MAX_SZ))
		return -EINVAL;
	return 0;
}

static int prepare(const struct iour_ruleset *rs, struct prepared *p)
{
	/* First with the newest kernel the library knows, so that an error
	 * in the set (undecided flags) does not depend on the kernel. */
	const struct iour__kernel_limits newest = {
		.op_last = IOUR_OP__COUNT,
		.reg_last = IOUR_REGISTER__COUNT,
		.split = true,
	};
	int r;

	r = iour__ruleset_entries(rs, &newest, p->ent, NULL);
	if (r < 0)
		return r;
	r = iour__probe_limits(&p->lim);
	if (r)
		return r;
	r = iour__ruleset_entries(rs, &p->lim, p->ent, &p->clamp);
	if (r < 0)
		return r;
	p->n = r;
	return 0;
}

static void report_fill(struct iour_ring_report *rep, const struct prepared *p, bool registered,
			bool enabled)
{
	struct iour_ring_report full;
	size_t n = 0, i;
	static const uint16_t ends[] = {
		REND(registered),        REND(enabled),
		REND(nr_entries),        REND(op_last),
		REND(reg_last),          REND(split_gates),
		REND(n_clamped_sqe_ops), REND(n_clamped_register_ops),
		REND(clamped_sqe_ops),   REND(clamped_register_ops),
	};

	if (!rep)
		return;
	memset(&full, 0, sizeof(full));
	full.registered = registered;
	full.enabled = enabled;
	full.nr_entries = (uint32_t)p->n;
	full.op_last = p->lim.op_last;
	full.reg_last = p->lim.reg_last;
	full.split_gates = p->lim.split;
	full.n_clamped_sqe_ops = p->clamp.n_sqe;
	full.n_clamped_register_ops = p->clamp.n_reg;
	memcpy(full.clamped_sqe_ops, p->clamp.sqe_ops.w, sizeof(full.clamped_sqe_ops));
	memcpy(full.clamped_register_ops, p->clamp.reg_ops.w, sizeof(full.clamped_register_ops));
	for (i = 0; i < IOUR_ARRAY_SIZE(ends); i++)
		if (ends[i] <= rep->sz)
			n = ends[i];
	memcpy((char *)rep + sizeof(size_t), (char *)&full + sizeof(size_t), n - sizeof(size_t));
	if (rep->sz > sizeof(full))
		memset((char *)rep + sizeof(full), 0, rep->sz - sizeof(full));
}

/*
 * The kernel's answers, mapped to the documented set.  The register-op
 * gate (-EACCES) and the single-issuer check (-EEXIST) run before the
 * handler, but only ever fire on an enabled ring: the ring is not in the
 * state the call needs.  -EINVAL from RESTRICTIONS with entries built for
 * the kernel's own limits means the probe and the kernel disagree.
 */
static int map_register_err(long r, bool restrictions)
{
	if (r == -EACCES || r == -EEXIST)
		return -EBADFD;
	if (restrictions && r == -EINVAL)
		return -IOUR_ERRNO__KERNEL_MISMATCH;
	return (int)r;
}

/* Register and (optionally) enable; fills the report. */
static int apply_prepared(int fd, const struct prepared *p, bool enable,
			  struct iour_ring_report *rep)
{
	long r;

	r = iour__register(fd, KIO_REGISTER_RESTRICTIONS, (void *)p->ent, (uint32_t)p->n);
	if (r < 0) {
		report_fill(rep, p, false, false);
		return map_register_err(r, true);
	}
	if (enable) {
		r = iour__register(fd, KIO_REGISTER_ENABLE_RINGS, NULL, 0);
		if (r < 0) {
			report_fill(rep, p, true, false);
			return map_register_err(r, false);
		}
	}
	report_fill(rep, p, true, enable);
	return 0;
}

/* Documented in include/iouring_restrict/ring.h */
int iour_ring_apply(int ring_fd, const struct iour_ruleset *rs,
		    const struct iour_ring_apply_opts *opts)
{
	static const int errs[] = { EINVAL,
				    E2BIG,
				    ENOMSG,
				    EBADF,
				    EOPNOTSUPP,
				    EBADFD,
				    EBUSY,
				    ENOMEM,
				    ECHILD,
				    EMFILE,
				    ENFILE,
				    EAGAIN,
				    IOUR_ERRNO__UNSUPPORTED,
				    IOUR_ERRNO__KERNEL_MISMATCH,
				    0 };
	struct iour_ring_report *rep;
	struct prepared p;
	uint64_t flags;
	int r;

	r = IOUR_OPTS_VALID(opts, iour_ring_apply_opts);
	if (r)
		return r;
	flags = IOUR_OPTS_GET(opts, flags, 0);
	rep = IOUR_OPTS_GET(opts, report, NULL);
	if (!rs || (flags & ~IOUR_RING_APPLY_NO_ENABLE) || report_valid(rep))
		return -EINVAL;
	/* Never -1: on Linux 7.0+ that is the task path, which would
	 * restrict the calling task for good. */
	if (ring_fd < 0)
		return -EBADF;
	memset(&p, 0, sizeof(p));
	r = prepare(rs, &p);
	if (r)
		return iour__err_public(r, errs);
	r = apply_prepared(ring_fd, &p, !(flags & IOUR_RING_APPLY_NO_ENABLE), rep);
	return iour__err_public(r, errs);
}

/* Documented in include/iouring_restrict/ring.h */
int iour_ring_enable(int ring_fd)
{
	static const int errs[] = { EBADF, EOPNOTSUPP, EBADFD, 0 };

	if (ring_fd < 0)
		return -EBADF;
	return iour__err_public(
		map_register_err(iour__register(ring_fd, KIO_REGISTER_ENABLE_RINGS, NULL, 0),
				 false),
		errs);
}

/* Documented in include/iouring_restrict/ring.h */
int iour_ring_create(uint32_t entries, void *params, const struct iour_ruleset *rs,
		     const struct iour_ring_create_opts *opts, int *ring_fd)
{
	static const int errs[] = { EINVAL,
				    E2BIG,
				    ENOMSG,
				    EPERM,
				    ENOSYS,
				    ENOMEM,
				    EMFILE,
				    ENFILE,
				    EBUSY,
				    ECHILD,
				    EAGAIN,
				    IOUR_ERRNO__UNSUPPORTED,
				    IOUR_ERRNO__KERNEL_MISMATCH,
				    0 };
	struct kio_params local = { 0 }, *prm = params ? params : &local;
	struct iour_ring_report *rep;
	struct prepared p;
	uint32_t caller_flags;
	long fd;
	int r;

	if (ring_fd)
		*ring_fd = -1;
	r = IOUR_OPTS_VALID(opts, iour_ring_create_opts);
	if (r)
		return r;
	rep = IOUR_OPTS_GET(opts, report, NULL);
	if (!rs || !ring_fd || !entries || IOUR_OPTS_GET(opts, flags, 0) || report_valid(rep))
		return -EINVAL;
	/* Only flags whose result is a descriptor: the library restricts,
	 * enables or closes what io_uring_setup() returns. */
	if (prm->flags & ~IOUR__SETUP_FD_RESULT)
		return -EINVAL;
	memset(&p, 0, sizeof(p));
	r = prepare(rs, &p);
	if (r)
		return iour__err_public(r, errs);

	if (!params)
		memset(&local, 0, sizeof(local));
	caller_flags = prm->flags;
	prm->flags |= KIO_SETUP_R_DISABLED;
	fd = iour__setup(entries, prm);
	prm->flags = caller_flags;
	if (fd < 0) {
		report_fill(rep, &p, false, false);
		/* Enabled-ring errors cannot happen to a ring that does not
		 * exist; everything else is the kernel's verdict on the
		 * arguments or its resources. */
		return iour__err_public((int)fd, errs);
	}
	r = apply_prepared((int)fd, &p, true, rep);
	if (r) {
		iour__close((int)fd);
		/* A brand-new disabled ring cannot be enabled or gated. */
		if (r == -EBADFD || r == -EBADF || r == -EOPNOTSUPP)
			r = -IOUR_ERRNO__KERNEL_MISMATCH;
		return iour__err_public(r, errs);
	}
	*ring_fd = (int)fd;
	return 0;
}
