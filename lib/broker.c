/* SPDX-License-Identifier: MIT */
/*
 * The ring broker (documented in include/iouring_restrict/broker.h; the
 * threat model is doc/security.md, "The ring broker").
 *
 * One notification, in order:
 *   1. open /proc/PID (a directory fd pins the process, not the number),
 *      check the notification is still valid (so the directory is the
 *      caller's), open its mem through that directory;
 *   2. read the 120-byte io_uring_params, check validity again;
 *   3. decide the setup flags (the table in broker.h);
 *   4. iour_plan__create_ring(): io_uring_setup with R_DISABLED added, the
 *      plan's ring part, IORING_REGISTER_ENABLE_RINGS;
 *   5. write the kernel's params output back (flags as the program asked)
 *      into a writable mapping only, as copy_to_user would;
 *   6. SECCOMP_IOCTL_NOTIF_ADDFD, then a response carrying the fd number
 *      (not ADDFD_FLAG_SEND: see hand_over());
 *   7. close the broker's copy of the ring.
 * Nothing read from the program decides anything but the params of the
 * ring the broker builds itself; the kernel validates those again.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "enforce_internal.h"
#include "miniring.h"
#include "peers.h"
#include "sys.h"
#include "iouring_restrict/broker.h"
#include "iouring_restrict/plan.h"
#include "iouring_restrict/report.h"

#ifndef SECCOMP_FILTER_FLAG_NEW_LISTENER
#define SECCOMP_FILTER_FLAG_NEW_LISTENER (1UL << 3)
#endif
#ifndef SECCOMP_FILTER_FLAG_TSYNC_ESRCH
#define SECCOMP_FILTER_FLAG_TSYNC_ESRCH (1UL << 4)
#endif
#ifndef SECCOMP_GET_NOTIF_SIZES
#define SECCOMP_GET_NOTIF_SIZES 3
#endif

#define NR_IO_URING_SETUP 425
#define PARAMS_SZ ((uint32_t)sizeof(struct kio_params))

/* Flags served as asked, passed to the kernel (which validates them). */
#define PASS_FLAGS                                                                    \
	(KIO_SETUP_IOPOLL | KIO_SETUP_SQ_AFF | KIO_SETUP_CQSIZE | KIO_SETUP_CLAMP |   \
	 KIO_SETUP_SUBMIT_ALL | IOUR__SETUP_COOP_TASKRUN | IOUR__SETUP_TASKRUN_FLAG | \
	 IOUR__SETUP_SQE128 | IOUR__SETUP_CQE32 | KIO_SETUP_NO_SQARRAY |              \
	 IOUR__SETUP_HYBRID_IOPOLL | IOUR__SETUP_CQE_MIXED | IOUR__SETUP_SQE_MIXED |  \
	 IOUR__SETUP_SQ_REWIND)
/* Flags served without them (the broker would be the single issuer). */
#define STRIP_FLAGS (KIO_SETUP_SINGLE_ISSUER | IOUR__SETUP_DEFER_TASKRUN)

struct iour_broker {
	const struct iour_plan *plan;
	int fd;
	int nonblock; /* IOUR_BROKER_NONBLOCK: serve never waits */
	iour_broker_on_ring_fn on_ring;
	void *arg;
	size_t notif_sz, resp_sz;
	void *notif; /* struct seccomp_notif, notif_sz bytes */
	void *resp;  /* struct seccomp_notif_resp, resp_sz bytes */
	struct iour_broker_counters c;
};

/* Documented in include/iouring_restrict/broker.h */
int iour_broker__install(const struct iour_broker_opts *opts, int *listener_fd)
{
	struct iour_insn prog[IOUR__COMPANION_MAX_INSNS];
	struct iour__peers guard;
	struct sock_fprog fp;
	uint32_t flags;
	unsigned int sflags = SECCOMP_FILTER_FLAG_NEW_LISTENER;
	bool guarded;
	long rc;
	int n = IOUR_OPTS_VALID(opts, iour_broker_opts);

	if (n)
		return n;
	if (!listener_fd)
		return -EINVAL;
	flags = IOUR_OPTS_GET(opts, flags, 0U);
	if (flags & ~(IOUR_BROKER_ALL_THREADS | IOUR_BROKER_ALLOW_PTRACE))
		return -EINVAL;
	n = iour__broker_filter_build(prog);
	if (n < 0)
		return n;
	rc = iour__prctl(PR_GET_SECCOMP, 0, 0, 0, 0);
	if (rc < 0)
		return rc == -EINVAL ? -EOPNOTSUPP :
				       iour__err_public((int)rc, IOUR__ERRSET_BROKER_INSTALL);
	/* The peer guard (lib/peers.h), prepared before anything irreversible;
	 * not under an emulated kernel, which confines nothing. */
	guarded = !(flags & IOUR_BROKER_ALLOW_PTRACE) && iour__sys() == iour__sys_real();
	if (guarded) {
		rc = iour__peers_prepare(&guard);
		if (rc < 0)
			return iour__err_public((int)rc, IOUR__ERRSET_BROKER_INSTALL);
	}
	rc = iour__prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
	if (rc < 0) {
		if (guarded)
			iour__peers_release(&guard);
		return iour__err_public((int)rc, IOUR__ERRSET_BROKER_INSTALL);
	}
	/* The guard first: the broker's filter, whose listener is the result,
	 * is the last irreversible call, so a failure leaves no listener. */
	if (guarded) {
		rc = iour__peers_apply(&guard, flags & IOUR_BROKER_ALL_THREADS);
		if (rc < 0)
			return iour__err_public((int)rc, IOUR__ERRSET_BROKER_INSTALL);
	}
	if (flags & IOUR_BROKER_ALL_THREADS)
		sflags |= SECCOMP_FILTER_FLAG_TSYNC | SECCOMP_FILTER_FLAG_TSYNC_ESRCH;
	fp.len = (unsigned short)n;
	fp.filter = (struct sock_filter *)prog;
	rc = iour__seccomp(SECCOMP_SET_MODE_FILTER, sflags, &fp);
	if (rc == -ESRCH)
		return -EBUSY; /* TSYNC_ESRCH: a thread could not follow */
	if (rc == -EINVAL || rc == -ENOSYS)
		return -EOPNOTSUPP; /* no NEW_LISTENER (before 5.0) or no filter mode */
	if (rc < 0)
		return iour__err_public((int)rc, IOUR__ERRSET_BROKER_INSTALL);
	*listener_fd = (int)rc;
	return 0;
}

/* Documented in include/iouring_restrict/broker.h */
int iour_broker__new(const struct iour_plan *plan, int listener_fd,
		     const struct iour_broker_opts *opts, struct iour_broker **out)
{
	struct seccomp_notif_sizes sizes;
	struct iour_plan_info info = { .sz = sizeof(info) };
	struct iour_broker *b;
	int rc = IOUR_OPTS_VALID(opts, iour_broker_opts);

	if (rc)
		return rc;
	if (!plan || !out || listener_fd < 0)
		return -EINVAL;
	if (IOUR_OPTS_GET(opts, flags, 0U) &
	    ~(IOUR_BROKER_ALL_THREADS | IOUR_BROKER_NONBLOCK | IOUR_BROKER_ALLOW_PTRACE))
		return -EINVAL;
	if (iour_plan__info(plan, &info))
		return -EINVAL;
	if (info.flags & IOUR_PLAN_INFO_REFUSED)
		return -IOUR_ERRNO__UNSUPPORTED;
	if (!info.ring_steps)
		return -EINVAL;
	memset(&sizes, 0, sizeof(sizes));
	if (iour__seccomp(SECCOMP_GET_NOTIF_SIZES, 0, &sizes) < 0) {
		/* Kernels of 5.0..: always there with NEW_LISTENER; the
		 * structs' own sizes are the floor. */
		sizes.seccomp_notif = sizeof(struct seccomp_notif);
		sizes.seccomp_notif_resp = sizeof(struct seccomp_notif_resp);
	}
	b = iour__calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	b->notif_sz = sizes.seccomp_notif > sizeof(struct seccomp_notif) ?
			      sizes.seccomp_notif :
			      sizeof(struct seccomp_notif);
	b->resp_sz = sizes.seccomp_notif_resp > sizeof(struct seccomp_notif_resp) ?
			     sizes.seccomp_notif_resp :
			     sizeof(struct seccomp_notif_resp);
	b->notif = iour__calloc(1, b->notif_sz);
	b->resp = iour__calloc(1, b->resp_sz);
	if (!b->notif || !b->resp) {
		iour__free(b->notif);
		iour__free(b->resp);
		iour__free(b);
		return -ENOMEM;
	}
	b->plan = plan;
	b->fd = listener_fd;
	b->nonblock = !!(IOUR_OPTS_GET(opts, flags, 0U) & IOUR_BROKER_NONBLOCK);
	b->on_ring = IOUR_OPTS_GET(opts, on_ring, NULL);
	b->arg = IOUR_OPTS_GET(opts, arg, NULL);
	b->c.sz = sizeof(b->c);
	*out = b;
	return 0;
}

/* Documented in include/iouring_restrict/broker.h */
int iour_broker__fd(const struct iour_broker *b)
{
	return b ? b->fd : -EINVAL;
}

/* Documented in include/iouring_restrict/broker.h */
int iour_broker__counters(const struct iour_broker *b, struct iour_broker_counters *out)
{
	size_t n;

	if (!b || !out ||
	    out->sz < offsetof(struct iour_broker_counters, notifications) + sizeof(uint64_t) ||
	    out->sz > IOUR_OPTS_MAX_SZ)
		return -EINVAL;
	n = out->sz < sizeof(b->c) ? out->sz : sizeof(b->c);
	/* Whole fields only: every field after sz is a uint64_t. */
	n = offsetof(struct iour_broker_counters, notifications) +
	    (n - offsetof(struct iour_broker_counters, notifications)) / sizeof(uint64_t) *
		    sizeof(uint64_t);
	memcpy((char *)out + sizeof(out->sz), (const char *)&b->c + sizeof(b->c.sz),
	       n - sizeof(out->sz));
	return 0;
}

/* Documented in include/iouring_restrict/broker.h */
void iour_broker__free(struct iour_broker *b)
{
	if (!b)
		return;
	if (b->fd >= 0)
		close(b->fd);
	iour__free(b->notif);
	iour__free(b->resp);
	iour__free(b);
}

static int notif_valid(const struct iour_broker *b, uint64_t id)
{
	return ioctl(b->fd, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0;
}

/* Answer `id` with -err (0 < err); 0, or -ENOENT if the caller is gone. */
static int respond_err(struct iour_broker *b, uint64_t id, int err)
{
	struct seccomp_notif_resp *r = b->resp;

	memset(r, 0, b->resp_sz);
	r->id = id;
	r->error = -err;
	if (ioctl(b->fd, SECCOMP_IOCTL_NOTIF_SEND, r) == 0)
		return 0;
	return -errno;
}

/*
 * Is [addr, addr+len) in mappings of the process that allow `perm` ('r' or
 * 'w')?  /proc/PID/mem ignores protections (it writes through read-only
 * mappings), io_uring_setup's copy_to_user does not: the answer must be
 * the one the kernel would give.  1 yes, 0 no, -errno unreadable.
 */
static int mapped(int piddir, uint64_t addr, uint64_t len, char perm)
{
	char line[512];
	FILE *f;
	int fd = openat(piddir, "maps", O_RDONLY | O_CLOEXEC);
	uint64_t want = addr, end = addr + len;
	int ok = 0;

	if (fd < 0)
		return -errno;
	f = fdopen(fd, "r");
	if (!f) {
		close(fd);
		return -ENOMEM;
	}
	while (want < end && fgets(line, sizeof(line), f)) {
		unsigned long long lo, hi;
		char *e, *e2;
		const char *perms;

		/* "LO-HI PERMS ..." in hex */
		lo = strtoull(line, &e, 16);
		if (*e != '-')
			continue;
		hi = strtoull(e + 1, &e2, 16);
		if (*e2 != ' ' || strlen(e2) < 5)
			continue;
		perms = e2 + 1;
		if (lo > want)
			break; /* a hole (the maps are sorted) */
		if (hi <= want)
			continue;
		if (perms[perm == 'r' ? 0 : 1] != perm)
			break;
		want = hi;
	}
	ok = want >= end;
	fclose(f);
	return ok;
}

struct call {
	uint64_t id;
	int pid;
	uint32_t entries;
	uint64_t ptr;
	struct kio_params p; /* as the program gave them */
	char what[224];
};

/* Refuse: -err (a documented io_uring_setup errno) with a reason. */
static int refuse(struct iour_broker *b, struct call *c, uint64_t *counter, int err,
		  const char *why)
{
	int rc = respond_err(b, c->id, err);

	if (rc == -ENOENT) {
		b->c.gone++;
		snprintf(c->what, sizeof(c->what), "caller gone before the answer (%s)", why);
		return -ENOENT;
	}
	b->c.refused++;
	(*counter)++;
	snprintf(c->what, sizeof(c->what), "refused: %s", why);
	return -err;
}

/* The setup flags' answers (broker.h): 0 to build the ring, or -errno. */
static int flags_answer(uint32_t f, const char **why)
{
	if (f & ~IOUR__SETUP_KNOWN) {
		*why = "setup flags unknown to the library (EINVAL)";
		return -EINVAL;
	}
	if (f & KIO_SETUP_R_DISABLED) {
		*why = "IORING_SETUP_R_DISABLED: the program may not restrict or enable a ring "
		       "itself (EPERM)";
		return -EPERM;
	}
	if (f & KIO_SETUP_SQPOLL) {
		*why = "IORING_SETUP_SQPOLL: the SQ thread would run as the broker (EPERM)";
		return -EPERM;
	}
	if (f & KIO_SETUP_ATTACH_WQ) {
		*why = "IORING_SETUP_ATTACH_WQ: not served (EINVAL)";
		return -EINVAL;
	}
	if (f & (IOUR__SETUP_NO_MMAP | IOUR__SETUP_REGISTERED_FD_ONLY)) {
		*why = "IORING_SETUP_NO_MMAP / REGISTERED_FD_ONLY: rings in the program's memory "
		       "are not served (EINVAL)";
		return -EINVAL;
	}
	if (f & ~(PASS_FLAGS | STRIP_FLAGS)) {
		*why = "setup flags the broker does not serve (EINVAL)";
		return -EINVAL;
	}
	return 0;
}

/* The errors of io_uring_setup itself that pass to the program as they
 * are (doc/security.md: the program only sees what io_uring_setup can
 * return).  Anything else, such as a failed registration, is EPERM. */
static int setup_errno(int rc)
{
	switch (-rc) {
	case EINVAL:
	case EFAULT:
	case ENOMEM:
	case EMFILE:
	case ENFILE:
	case ENXIO:
	case EPERM:
	case ENOSYS:
		return -rc;
	default:
		return EPERM;
	}
}

/*
 * Install ring `ring` as the call's result.  The fd number, or -errno.
 *
 * ADDFD, then a response whose value is that fd, on every kernel.
 * ADDFD with SECCOMP_ADDFD_FLAG_SEND (5.14+) does both in one call, but on
 * this machine's 6.18 about one call in ten under fork/threads/exec
 * returned 0 to the program instead of the fd
 * (live_broker::run_fork_threads_exec, repeated); the two-step answer
 * never did in hundreds of runs.  Its cost: a caller interrupted between
 * the two keeps an unused fd of a restricted ring (doc/security.md).
 */
static int hand_over(struct iour_broker *b, uint64_t id, int ring)
{
	struct seccomp_notif_addfd a;
	struct seccomp_notif_resp *r = b->resp;
	int fd;

	memset(&a, 0, sizeof(a));
	a.id = id;
	a.srcfd = (uint32_t)ring;
	a.newfd_flags = O_CLOEXEC; /* io_uring_setup's fds are close-on-exec */
	fd = ioctl(b->fd, SECCOMP_IOCTL_NOTIF_ADDFD, &a);
	if (fd < 0)
		return -errno;
	memset(r, 0, b->resp_sz);
	r->id = id;
	r->val = fd;
	if (ioctl(b->fd, SECCOMP_IOCTL_NOTIF_SEND, r) < 0)
		return -errno; /* the fd went to a caller that is gone */
	return fd;
}

static int serve_setup(struct iour_broker *b, struct call *c)
{
	struct kio_params kp;
	char path[32];
	const char *why = NULL;
	uint32_t asked;
	int piddir = -1, mem = -1, ring = -1, rc, err;
	ssize_t n;

	if (c->pid <= 0) {
		rc = refuse(b, c, &b->c.refused_memory, EPERM,
			    "the caller is outside the broker's pid namespace (EPERM)");
		goto out;
	}
	snprintf(path, sizeof(path), "/proc/%d", c->pid);
	piddir = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (piddir >= 0 && !notif_valid(b, c->id)) {
		b->c.gone++;
		snprintf(c->what, sizeof(c->what), "caller gone before the answer");
		rc = -ENOENT;
		goto out;
	}
	if (piddir >= 0)
		mem = openat(piddir, "mem", O_RDWR | O_CLOEXEC);
	if (mem < 0) {
		err = errno;
		if (!notif_valid(b, c->id)) {
			b->c.gone++;
			snprintf(c->what, sizeof(c->what), "caller gone before the answer");
			rc = -ENOENT;
			goto out;
		}
		rc = refuse(b, c, &b->c.refused_memory, EPERM,
			    err == EACCES || err == EPERM ?
				    "the broker may not open the caller's memory (EPERM)" :
				    "the caller's memory cannot be opened (EPERM)");
		goto out;
	}
	/* 2. the params, as copy_from_user would read them */
	rc = mapped(piddir, c->ptr, PARAMS_SZ, 'r');
	n = rc == 1 ? pread(mem, &c->p, PARAMS_SZ, (off_t)c->ptr) : -1;
	if (!notif_valid(b, c->id)) {
		b->c.gone++;
		snprintf(c->what, sizeof(c->what), "caller gone before the answer");
		rc = -ENOENT;
		goto out;
	}
	if (n != (ssize_t)PARAMS_SZ) {
		rc = refuse(b, c, &b->c.refused_memory, EFAULT,
			    "the params cannot be read (EFAULT)");
		goto out;
	}
	/* 3. the flags */
	asked = c->p.flags;
	rc = flags_answer(asked, &why);
	if (rc) {
		rc = refuse(b, c, &b->c.refused_flags, -rc, why);
		goto out;
	}
	/* SINGLE_ISSUER/DEFER_TASKRUN are served without them, but only where
	 * the kernel knows them: elsewhere its own answer (EINVAL) stands.  A
	 * disabled ring with exactly those flags asks it. */
	if (asked & STRIP_FLAGS) {
		struct kio_params tp;
		long t;

		memset(&tp, 0, sizeof(tp));
		tp.flags = (asked & STRIP_FLAGS) | KIO_SETUP_R_DISABLED;
		t = iour__setup(1, &tp);
		if (t >= 0) {
			iour__close((int)t);
		} else if (t == -EINVAL) {
			rc = refuse(
				b, c, &b->c.refused_kernel, EINVAL,
				"SINGLE_ISSUER/DEFER_TASKRUN: the kernel does not know them (EINVAL)");
			goto out;
		}
	}
	/* 4. the ring, restricted and enabled */
	kp = c->p;
	kp.flags = asked & ~STRIP_FLAGS;
	rc = iour_plan__create_ring(b->plan, c->entries, &kp, NULL, &ring, NULL);
	if (rc) {
		char msg[160], e[96];

		if (iour_strerror(rc, e, sizeof(e)) < 0)
			snprintf(e, sizeof(e), "error %d", rc);
		snprintf(msg, sizeof(msg), "the ring could not be built: %s (errno %d)", e,
			 setup_errno(rc));
		rc = refuse(b, c, &b->c.refused_kernel, setup_errno(rc), msg);
		goto out;
	}
	/* 5. the params output, flags as the program asked */
	kp.flags = asked;
	rc = mapped(piddir, c->ptr, PARAMS_SZ, 'w');
	n = rc == 1 ? pwrite(mem, &kp, PARAMS_SZ, (off_t)c->ptr) : -1;
	if (n != (ssize_t)PARAMS_SZ) {
		rc = refuse(b, c, &b->c.refused_memory, EFAULT,
			    "the params cannot be written back (EFAULT)");
		goto out;
	}
	/* 6. the fd */
	rc = hand_over(b, c->id, ring);
	if (rc == -ENOENT) {
		b->c.gone++;
		snprintf(c->what, sizeof(c->what), "caller gone before the answer");
		goto out;
	}
	if (rc < 0) {
		err = -rc;
		rc = refuse(b, c, &b->c.refused_kernel, err == EMFILE ? EMFILE : ENFILE,
			    err == EMFILE ? "no free fd in the caller (EMFILE)" :
					    "the fd could not be installed (ENFILE)");
		goto out;
	}
	b->c.served++;
	snprintf(c->what, sizeof(c->what),
		 "ring fd %d: %u entries, setup flags %#x%s, the policy's ring restrictions "
		 "registered",
		 rc, kp.sq_entries, asked,
		 (asked & STRIP_FLAGS) ? " (served without SINGLE_ISSUER/DEFER_TASKRUN)" : "");
out:
	if (ring >= 0)
		iour__close(ring);
	if (mem >= 0)
		close(mem);
	if (piddir >= 0)
		close(piddir);
	return rc;
}

/* Documented in include/iouring_restrict/broker.h */
int iour_broker__serve(struct iour_broker *b)
{
	struct seccomp_notif *req;
	struct iour_broker_event ev;
	struct pollfd pfd;
	struct call c;
	int rc;

	if (!b)
		return -EINVAL;
	req = b->notif;
	/* A blocked RECV does not notice that every confined process is gone;
	 * poll does (POLLHUP). */
	pfd.fd = b->fd;
	pfd.events = POLLIN;
	pfd.revents = 0;
	rc = poll(&pfd, 1, b->nonblock ? 0 : -1);
	if (rc < 0)
		return -errno;
	if (rc == 0)
		return -EAGAIN; /* IOUR_BROKER_NONBLOCK, nothing pending */
	if (!(pfd.revents & POLLIN) && (pfd.revents & (POLLHUP | POLLERR)))
		return -ENOENT;
	memset(req, 0, b->notif_sz);
	if (ioctl(b->fd, SECCOMP_IOCTL_NOTIF_RECV, req) < 0) {
		rc = -errno;
		if (rc != -ENOENT)
			return rc;
		/* The caller was gone before we took it; or all of them are. */
		pfd.revents = 0;
		if (poll(&pfd, 1, 0) == 1 && !(pfd.revents & POLLIN) &&
		    (pfd.revents & (POLLHUP | POLLERR)))
			return -ENOENT;
		b->c.gone++;
		return 0;
	}
	b->c.notifications++;
	memset(&c, 0, sizeof(c));
	c.id = req->id;
	c.pid = (int)req->pid;
	c.entries = (uint32_t)req->data.args[0];
	c.ptr = req->data.args[1];
	if (req->data.nr != NR_IO_URING_SETUP)
		rc = refuse(b, &c, &b->c.refused_flags, ENOSYS, "not io_uring_setup (ENOSYS)");
	else
		rc = serve_setup(b, &c);
	if (b->on_ring) {
		memset(&ev, 0, sizeof(ev));
		ev.sz = sizeof(ev);
		ev.pid = c.pid;
		ev.entries = c.entries;
		ev.setup_flags = c.p.flags;
		ev.result = rc;
		ev.what = c.what;
		b->on_ring(b->arg, &ev);
	}
	return 0;
}
