/* SPDX-License-Identifier: MIT */
/*
 * The ring broker (documented in include/iouring_restrict/broker.h; the
 * threat model is doc/security.md, "The ring broker").
 *
 * The broker process only takes notifications (SECCOMP_IOCTL_NOTIF_RECV
 * never waits on the program) and forks one worker per io_uring_setup
 * call.  Everything that can wait on the program runs in the worker, with
 * a deadline (doc/security.md 3a, "No client stalls the broker").  In the
 * worker, in order:
 *   1. open /proc/PID (a directory fd pins the process, not the number),
 *      check the notification is still valid (so the directory is the
 *      caller's), open its mem and maps through that directory;
 *   2. read the 120-byte io_uring_params with process_vm_readv (or
 *      through mem and maps where it is refused; this is what can wait
 *      forever: a page of a FUSE file whose READ is never answered), tell
 *      the broker they were read, check validity again;
 *   3. decide the setup flags (the table in broker.h); with a ring quota,
 *      count the rings alive (ring_quota()) and refuse at max_rings;
 *   4. enter the caller's accounting context (lib/serve/broker_account.h);
 *   5. iour_plan__create_ring(): io_uring_setup with R_DISABLED added, the
 *      plan's ring part, IORING_REGISTER_ENABLE_RINGS; with a ring quota,
 *      add the ring to the broker's `alive` epoll set;
 *   6. write the kernel's params output back (flags as the program asked)
 *      into a writable mapping only, as copy_to_user would;
 *   7. SECCOMP_IOCTL_NOTIF_ADDFD, then a response carrying the fd number
 *      (not ADDFD_FLAG_SEND: see hand_over());
 *   8. report the outcome to the broker through its pipe and exit.
 * The broker reaps the worker (its pidfd says when), counts, and calls
 * on_ring.  A worker past its deadline is killed and the call answered by
 * the broker.  Nothing read from the program decides anything but the
 * params of the ring the worker builds itself; the kernel validates those
 * again.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "broker_account.h"
#include "base/uapi.h"
#include "enforce/enforce_internal.h"
#include "base/miniring.h"
#include "enforce/peers.h"
#include "base/sys.h"
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
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif
#ifndef SYS_close_range
#define SYS_close_range 436
#endif

#define PARAMS_SZ ((uint32_t)sizeof(struct kio_params))

/* Flags served as asked, passed to the kernel (which validates them). */
#define PASS_FLAGS                                                                             \
	(KIO_SETUP_IOPOLL | KIO_SETUP_SQ_AFF | KIO_SETUP_CQSIZE | KIO_SETUP_CLAMP |            \
	 KIO_SETUP_SUBMIT_ALL | KIO_SETUP_COOP_TASKRUN | KIO_SETUP_TASKRUN_FLAG |              \
	 KIO_SETUP_SQE128 | KIO_SETUP_CQE32 | KIO_SETUP_NO_SQARRAY | KIO_SETUP_HYBRID_IOPOLL | \
	 KIO_SETUP_CQE_MIXED | KIO_SETUP_SQE_MIXED | KIO_SETUP_SQ_REWIND)
/* Flags served without them (the broker would be the single issuer). */
#define STRIP_FLAGS (KIO_SETUP_SINGLE_ISSUER | KIO_SETUP_DEFER_TASKRUN)

/* The limits' defaults and bounds (broker.h, iour_broker_opts). */
#define DEADLINE_MS_DEFAULT 2000U
#define DEADLINE_MS_MAX 3600000U
#define MAX_WORKERS_DEFAULT 4U
#define MAX_WORKERS_MAX 1024U
#define PROCESS_WORKERS_DEFAULT 64U
#define PROCESS_WORKERS_MAX 65536U
/* iour_broker__free(): how long it waits for killed workers to exit. */
#define FREE_WAIT_MS 100

/* epoll data of the broker's own fds (a worker's is its pointer). */
#define EV_LISTENER 1U
#define EV_TIMER 2U

/* Which counter a worker's outcome bumps. */
enum outcome {
	OUT_SERVED,
	OUT_GONE,
	OUT_FLAGS,
	OUT_KERNEL,
	OUT_MEMORY,
	OUT_ACCOUNTING,
	OUT_QUOTA,
};

/* What a worker writes to its pipe: REC_READ once the params are read,
 * REC_DONE after the answer.  Smaller than PIPE_BUF: each write is
 * atomic. */
enum { REC_READ = 1, REC_DONE = 2 };
struct rec {
	uint32_t kind;
	uint32_t flags; /* the setup flags read */
	int32_t rc;     /* the answer: fd number or -errno */
	uint32_t outcome;
	char what[320];
};

/* One call being served by a worker process. */
struct worker {
	pid_t pid;
	int pidfd;   /* watched; -1 if the kernel has none (the pipe is watched) */
	int rfd;     /* the result pipe's read end */
	int cfd;     /* the call pipe's write end, until the call is sent */
	uint64_t id; /* the notification */
	int cpid;    /* the caller */
	uint32_t entries;
	uint32_t flags; /* the setup flags, once read */
	uint64_t deadline_ns;
	bool read_done; /* REC_READ seen */
	bool done;      /* REC_DONE seen */
	bool killed;    /* past its deadline: killed, the call answered here */
	struct rec last;
	struct worker *next;
};

struct iour_broker {
	const struct iour_plan *plan;
	int fd;        /* the listener */
	int epfd;      /* iour_broker__fd(): the listener, the workers, the timer */
	int tfd;       /* timerfd of the earliest deadline */
	int alive;     /* max_rings: the epoll set of the rings alive; else -1 */
	bool nonblock; /* IOUR_BROKER_NONBLOCK: serve never waits */
	bool watching; /* the listener is in epfd */
	bool hup;      /* every confined process has exited */
	iour_broker_on_ring_fn on_ring;
	void *arg;
	uint32_t deadline_ms, max_workers, process_workers, max_rings;
	struct worker *workers;
	uint32_t nworkers;    /* in the list, killed ones included */
	struct worker *spare; /* forked ahead, waiting for the next call */
	size_t notif_sz, resp_sz;
	void *notif; /* struct seccomp_notif, notif_sz bytes */
	void *resp;  /* struct seccomp_notif_resp, resp_sz bytes */
	struct iour_broker_counters c;
};

/* Workers of every broker of the process that still work (killed ones are
 * not counted here: they count against their broker's max_workers until
 * they exit). */
static unsigned int live_workers;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

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
	/* The peer guard (lib/enforce/peers.h), prepared before anything irreversible;
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
	struct epoll_event ev = { .events = EPOLLIN };
	struct iour_broker *b;
	uint32_t deadline, maxw, procw;
	int rc = IOUR_OPTS_VALID(opts, iour_broker_opts);

	if (rc)
		return rc;
	if (!plan || !out || listener_fd < 0)
		return -EINVAL;
	if (IOUR_OPTS_GET(opts, flags, 0U) &
	    ~(IOUR_BROKER_ALL_THREADS | IOUR_BROKER_NONBLOCK | IOUR_BROKER_ALLOW_PTRACE))
		return -EINVAL;
	deadline = IOUR_OPTS_GET(opts, deadline_ms, 0U);
	maxw = IOUR_OPTS_GET(opts, max_workers, 0U);
	procw = IOUR_OPTS_GET(opts, process_workers, 0U);
	if (deadline > DEADLINE_MS_MAX || maxw > MAX_WORKERS_MAX || procw > PROCESS_WORKERS_MAX)
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
	b->epfd = b->tfd = b->alive = -1;
	b->notif_sz = sizes.seccomp_notif > sizeof(struct seccomp_notif) ?
			      sizes.seccomp_notif :
			      sizeof(struct seccomp_notif);
	b->resp_sz = sizes.seccomp_notif_resp > sizeof(struct seccomp_notif_resp) ?
			     sizes.seccomp_notif_resp :
			     sizeof(struct seccomp_notif_resp);
	b->notif = iour__calloc(1, b->notif_sz);
	b->resp = iour__calloc(1, b->resp_sz);
	if (!b->notif || !b->resp) {
		rc = -ENOMEM;
		goto fail;
	}
	b->epfd = epoll_create1(EPOLL_CLOEXEC);
	b->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (b->epfd < 0 || b->tfd < 0) {
		rc = errno == EMFILE || errno == ENFILE ? -errno : -ENOMEM;
		goto fail;
	}
	/* The ring quota's set (ring_quota()); none without a quota. */
	b->max_rings = IOUR_OPTS_GET(opts, max_rings, 0U);
	if (b->max_rings) {
		b->alive = epoll_create1(EPOLL_CLOEXEC);
		if (b->alive < 0) {
			rc = errno == EMFILE || errno == ENFILE ? -errno : -ENOMEM;
			goto fail;
		}
	}
	ev.data.u64 = EV_TIMER;
	if (epoll_ctl(b->epfd, EPOLL_CTL_ADD, b->tfd, &ev)) {
		rc = -ENOMEM;
		goto fail;
	}
	ev.data.u64 = EV_LISTENER;
	if (epoll_ctl(b->epfd, EPOLL_CTL_ADD, listener_fd, &ev)) {
		rc = errno == ENOMEM || errno == ENOSPC ? -ENOMEM : -EINVAL;
		goto fail;
	}
	b->watching = true;
	b->plan = plan;
	b->fd = listener_fd;
	b->nonblock = !!(IOUR_OPTS_GET(opts, flags, 0U) & IOUR_BROKER_NONBLOCK);
	b->on_ring = IOUR_OPTS_GET(opts, on_ring, NULL);
	b->arg = IOUR_OPTS_GET(opts, arg, NULL);
	b->deadline_ms = deadline ? deadline : DEADLINE_MS_DEFAULT;
	b->max_workers = maxw ? maxw : MAX_WORKERS_DEFAULT;
	b->process_workers = procw ? procw : PROCESS_WORKERS_DEFAULT;
	b->c.sz = sizeof(b->c);
	*out = b;
	return 0;
fail:
	if (b->epfd >= 0)
		close(b->epfd);
	if (b->tfd >= 0)
		close(b->tfd);
	if (b->alive >= 0)
		close(b->alive);
	iour__free(b->notif);
	iour__free(b->resp);
	iour__free(b);
	return rc;
}

/* Documented in include/iouring_restrict/broker.h */
int iour_broker__fd(const struct iour_broker *b)
{
	return b ? b->epfd : -EINVAL;
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

static void worker_signal(struct worker *w)
{
	if (w->pidfd < 0 || syscall(SYS_pidfd_send_signal, w->pidfd, SIGKILL, NULL, 0) < 0)
		kill(w->pid, SIGKILL); /* not reaped yet: the pid is still the worker's */
}

/*
 * Is [addr, addr+len) in mappings of the process that allow `perm` ('r' or
 * 'w')?  /proc/PID/mem ignores protections (it writes through read-only
 * mappings), io_uring_setup's copy_to_user does not: the answer must be
 * the one the kernel would give.  `maps` is the caller's /proc/PID/maps,
 * opened before the worker gave up its privileges; read from its start.
 * 1 yes, 0 no, -errno unreadable.
 */
/* PROCMAP_QUERY (Linux 6.11+): the mapping that covers one address, from
 * the maps fd, without reading the text (which grows with every mapping
 * the caller has: a program holding hundreds of rings made the read the
 * worker's largest cost).  The layout and numbers of the kernel's uapi. */
struct procmap_q {
	uint64_t size, query_flags, query_addr, vma_start, vma_end, vma_flags, vma_page_size,
		vma_offset, inode;
	uint32_t dev_major, dev_minor, vma_name_size, build_id_size;
	uint64_t vma_name_addr, build_id_addr;
};
#define PROCMAP_Q_IOCTL 0xC0686611UL /* _IOWR('f', 17, 104 bytes) */
#define PROCMAP_Q_READABLE 0x01ULL
#define PROCMAP_Q_WRITABLE 0x02ULL

/* mapped() by PROCMAP_QUERY: 1 yes, 0 no, -ENOTTY where the kernel lacks
 * the query (the caller then reads the text), another -errno otherwise. */
static int mapped_query(int maps, uint64_t addr, uint64_t end, char perm)
{
	uint64_t want = addr, need = perm == 'r' ? PROCMAP_Q_READABLE : PROCMAP_Q_WRITABLE;

	while (want < end) {
		struct procmap_q q;

		memset(&q, 0, sizeof(q));
		q.size = sizeof(q);
		q.query_addr = want;
		if (ioctl(maps, PROCMAP_Q_IOCTL, &q)) {
			if (errno == ENOENT)
				return 0; /* no mapping covers `want` */
			return errno == ENOTTY || errno == EINVAL ? -ENOTTY : -errno;
		}
		if (q.vma_start > want || q.vma_end <= want || !(q.vma_flags & need))
			return 0;
		want = q.vma_end;
	}
	return 1;
}

static int mapped(int maps, uint64_t addr, uint64_t len, char perm)
{
	char buf[8192];
	size_t have = 0;
	uint64_t want = addr, end = addr + len;
	bool stop = false;
	int q;

	if (end < addr)
		return 0; /* wraps: no mapping holds it */
	q = mapped_query(maps, addr, end, perm);
	if (q != -ENOTTY)
		return q;
	if (lseek(maps, 0, SEEK_SET) < 0)
		return -EIO;
	while (want < end && !stop) {
		ssize_t n = read(maps, buf + have, sizeof(buf) - 1 - have);
		char *line = buf, *nl;

		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		have += (size_t)n;
		buf[have] = '\0';
		while (want < end && !stop && (nl = strchr(line, '\n'))) {
			unsigned long long lo, hi;
			char *e, *e2;

			*nl = '\0';
			/* "LO-HI PERMS ..." in hex */
			lo = strtoull(line, &e, 16);
			line = nl + 1;
			if (*e != '-')
				continue;
			hi = strtoull(e + 1, &e2, 16);
			if (*e2 != ' ' || strlen(e2) < 5)
				continue;
			if (lo > want || (hi > want && e2[1 + (perm == 'r' ? 0 : 1)] != perm))
				stop = true; /* a hole (the maps are sorted), or not allowed */
			else if (hi > want)
				want = hi;
		}
		have -= (size_t)(line - buf);
		memmove(buf, line, have);
		if (have >= sizeof(buf) - 1)
			have = 0; /* a line longer than any: dropped, fails closed */
	}
	return want >= end;
}

struct call {
	uint64_t id;
	int pid;
	uint32_t entries;
	uint64_t ptr;
	struct kio_params p; /* as the program gave them */
	enum outcome outcome;
	char what[320];
};

/* Refuse: -err (a documented io_uring_setup errno) with a reason. */
static int refuse(struct iour_broker *b, struct call *c, enum outcome o, int err, const char *why)
{
	int rc = respond_err(b, c->id, err);

	if (rc == -ENOENT) {
		c->outcome = OUT_GONE;
		snprintf(c->what, sizeof(c->what), "caller gone before the answer (%s)", why);
		return -ENOENT;
	}
	c->outcome = o;
	snprintf(c->what, sizeof(c->what), "refused: %s", why);
	return -err;
}

static int gone(struct call *c)
{
	c->outcome = OUT_GONE;
	snprintf(c->what, sizeof(c->what), "caller gone before the answer");
	return -ENOENT;
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
	if (f & (KIO_SETUP_NO_MMAP | KIO_SETUP_REGISTERED_FD_ONLY)) {
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
 * Neither ioctl needs a privilege: a worker that took the caller's
 * credentials still answers.
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

/* "accounting: ..." for the served line: what the worker entered. */
static void acct_text(const struct iour__acct *a, char *buf, size_t len)
{
	static const struct {
		unsigned int bit;
		const char *text;
	} parts[] = {
		{ IOUR__ACCT_SAME_CGROUP, "in the caller's memory cgroup" },
		{ IOUR__ACCT_CGROUP_V2, "charged to the caller's cgroup" },
		{ IOUR__ACCT_CGROUP_V1, "charged to the caller's v1 memory cgroup" },
		{ IOUR__ACCT_MEMLOCK, "the caller's RLIMIT_MEMLOCK" },
		{ IOUR__ACCT_CREDS, "the caller's credentials" },
		{ IOUR__ACCT_NOCAPS, "no capabilities" },
	};
	size_t n = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]) && n < len; i++)
		if (a->done & parts[i].bit)
			n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? ", " : "",
					      parts[i].text);
	if (!a->done && n < len)
		n += (size_t)snprintf(buf + n, len - n, "charged to the broker");
	if (a->why[0] && n < len)
		snprintf(buf + n, len - n, " (not done: %s)", a->why);
}

/* In the worker: tell the broker (a failed write leaves the broker to
 * answer at the deadline or when the worker is reaped). */
static void report(int wfd, uint32_t kind, const struct call *c, int rc)
{
	struct rec r;

	memset(&r, 0, sizeof(r));
	r.kind = kind;
	r.flags = c->p.flags;
	r.rc = rc;
	r.outcome = (uint32_t)c->outcome;
	snprintf(r.what, sizeof(r.what), "%s", c->what);
	if (write(wfd, &r, sizeof(r)) != (ssize_t)sizeof(r)) {
		/* the broker is gone or killed us meanwhile */
	}
}

/*
 * The ring quota (iour_broker_opts::max_rings).  The broker's `alive`
 * epoll set holds one item per ring its workers handed over (alive_add()):
 * epoll keeps no reference on a file, and the kernel removes the item when
 * the ring's file is released, that is when the program's last fd of it
 * is closed and its last mapping gone.  The items are the set's "tfd:"
 * lines in /proc/self/fdinfo (the worker shares the broker's set).
 * The number of rings alive, or -errno.
 */
static long alive_count(const struct iour_broker *b)
{
	char path[64], line[256];
	bool start = true;
	long n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", b->alive);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (start && !strncmp(line, "tfd:", 4))
			n++;
		start = strchr(line, '\n') != NULL; /* a longer line goes on */
	}
	if (ferror(f))
		n = -EIO;
	fclose(f);
	return n;
}

/* In the worker, before the ring is built: 0 under the quota (or without
 * one), or the refusal.  Workers counting at once all see the count before
 * any of theirs is added: up to max_workers - 1 rings past max_rings
 * (broker.h). */
static int ring_quota(struct iour_broker *b, struct call *c)
{
	char why[160];
	long n;

	if (!b->max_rings)
		return 0;
	n = alive_count(b);
	if (n >= 0 && (unsigned long)n < b->max_rings)
		return 0;
	if (n < 0)
		snprintf(why, sizeof(why),
			 "ring quota: the rings alive cannot be counted: %s (ENOMEM)",
			 strerrorname_np((int)-n) ? strerrorname_np((int)-n) : "error");
	else
		snprintf(why, sizeof(why), "ring quota: %ld rings alive (max_rings %u) (ENOMEM)", n,
			 b->max_rings);
	return refuse(b, c, OUT_QUOTA, ENOMEM, why);
}

/* In the worker, after the ring is built: count it in the quota's set
 * (fails closed: a ring that cannot be counted is not handed over). */
static int alive_add(struct iour_broker *b, struct call *c, int ring)
{
	struct epoll_event ev = { .events = 0 };

	if (!b->max_rings || !epoll_ctl(b->alive, EPOLL_CTL_ADD, ring, &ev))
		return 0;
	return refuse(b, c, OUT_QUOTA, ENOMEM,
		      errno == ENOSPC ? "ring quota: the ring cannot be counted: no room for "
					"epoll watches (ENOMEM)" :
					"ring quota: the ring cannot be counted (ENOMEM)");
}

/* In the worker: the whole call.  The answer (fd or -errno); c->outcome
 * and c->what say what happened. */
static int serve_setup(struct iour_broker *b, struct call *c, int wfd)
{
	struct kio_params kp;
	struct iour__acct acct;
	char path[32], acct_s[224];
	const char *why = NULL;
	uint32_t asked;
	int piddir = -1, mem = -1, maps = -1, ring = -1, rc, err;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d", c->pid);
	piddir = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (piddir >= 0 && !notif_valid(b, c->id)) {
		rc = gone(c);
		goto out;
	}
	if (piddir >= 0) {
		mem = openat(piddir, "mem", O_RDWR | O_CLOEXEC);
		if (mem >= 0)
			maps = openat(piddir, "maps", O_RDONLY | O_CLOEXEC);
	}
	if (mem < 0 || maps < 0) {
		err = errno;
		if (!notif_valid(b, c->id)) {
			rc = gone(c);
			goto out;
		}
		rc = refuse(b, c, OUT_MEMORY, EPERM,
			    err == EACCES || err == EPERM ?
				    "the broker may not open the caller's memory (EPERM)" :
				    "the caller's memory cannot be opened (EPERM)");
		goto out;
	}
	/* 2. the params, as copy_from_user would read them: what can wait
	 * forever, hence the worker */
	{
		/* process_vm_readv honours the protections as copy_from_user
		 * does (no maps to read); where it is refused, the maps and
		 * /proc/PID/mem.  A recycled pid is caught by the validity
		 * check below, and what was read then decides nothing. */
		struct iovec l = { .iov_base = &c->p, .iov_len = PARAMS_SZ };
		struct iovec r = { .iov_base = (void *)(uintptr_t)c->ptr, .iov_len = PARAMS_SZ };

		n = process_vm_readv(c->pid, &l, 1, &r, 1, 0);
		if (n < 0 && errno != EFAULT) {
			rc = mapped(maps, c->ptr, PARAMS_SZ, 'r');
			n = rc == 1 ? pread(mem, &c->p, PARAMS_SZ, (off_t)c->ptr) : -1;
		}
	}
	if (n != (ssize_t)PARAMS_SZ)
		memset(&c->p, 0, sizeof(c->p));
	report(wfd, REC_READ, c, 0);
	if (!notif_valid(b, c->id)) {
		rc = gone(c);
		goto out;
	}
	if (n != (ssize_t)PARAMS_SZ) {
		rc = refuse(b, c, OUT_MEMORY, EFAULT, "the params cannot be read (EFAULT)");
		goto out;
	}
	/* 3. the flags */
	asked = c->p.flags;
	rc = flags_answer(asked, &why);
	if (rc) {
		rc = refuse(b, c, OUT_FLAGS, -rc, why);
		goto out;
	}
	/* the quota, while this process has the broker's credentials */
	rc = ring_quota(b, c);
	if (rc)
		goto out;
	/* 4. the caller pays for its ring: from here on this process may
	 * have the caller's credentials (mem and maps stay open) */
	memset(&acct, 0, sizeof(acct));
	rc = iour__broker_account_enter(piddir, &acct);
	(void)prctl(PR_SET_DUMPABLE, 0, 0, 0, 0); /* a change of credentials resets it */
	if (rc) {
		char msg[224];

		snprintf(msg, sizeof(msg),
			 "the ring could not be charged to the caller: %s (EPERM)",
			 acct.why[0] ? acct.why : "unknown");
		rc = refuse(b, c, OUT_ACCOUNTING, EPERM, msg);
		goto out;
	}
	acct_text(&acct, acct_s, sizeof(acct_s));
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
				b, c, OUT_KERNEL, EINVAL,
				"SINGLE_ISSUER/DEFER_TASKRUN: the kernel does not know them (EINVAL)");
			goto out;
		}
	}
	/* 5. the ring, restricted and enabled */
	kp = c->p;
	kp.flags = asked & ~STRIP_FLAGS;
	rc = iour_plan__create_ring(b->plan, c->entries, &kp, NULL, &ring, NULL);
	if (rc) {
		char msg[224], e[96];

		if (iour_strerror(rc, e, sizeof(e)) < 0)
			snprintf(e, sizeof(e), "error %d", rc);
		/* Cut where it must: the line is for people, the errno is the answer. */
		if (snprintf(msg, sizeof(msg), "the ring could not be built: %s (errno %d; %s)", e,
			     setup_errno(rc), acct_s) >= (int)sizeof(msg))
			msg[sizeof(msg) - 2] = '+';
		rc = refuse(b, c, OUT_KERNEL, setup_errno(rc), msg);
		goto out;
	}
	rc = alive_add(b, c, ring);
	if (rc)
		goto out;
	/* 6. the params output, flags as the program asked */
	kp.flags = asked;
	rc = mapped(maps, c->ptr, PARAMS_SZ, 'w');
	n = rc == 1 ? pwrite(mem, &kp, PARAMS_SZ, (off_t)c->ptr) : -1;
	if (n != (ssize_t)PARAMS_SZ) {
		rc = refuse(b, c, OUT_MEMORY, EFAULT, "the params cannot be written back (EFAULT)");
		goto out;
	}
	/* 7. the fd */
	rc = hand_over(b, c->id, ring);
	if (rc == -ENOENT) {
		rc = gone(c);
		goto out;
	}
	if (rc < 0) {
		err = -rc;
		rc = refuse(b, c, OUT_KERNEL, err == EMFILE ? EMFILE : ENFILE,
			    err == EMFILE ? "no free fd in the caller (EMFILE)" :
					    "the fd could not be installed (ENFILE)");
		goto out;
	}
	c->outcome = OUT_SERVED;
	if (snprintf(c->what, sizeof(c->what),
		     "ring fd %d: %u entries, setup flags %#x%s, the policy's ring restrictions "
		     "registered; accounting: %s",
		     rc, kp.sq_entries, asked,
		     (asked & STRIP_FLAGS) ? " (served without SINGLE_ISSUER/DEFER_TASKRUN)" : "",
		     acct_s) >= (int)sizeof(c->what))
		c->what[sizeof(c->what) - 2] = '+'; /* cut: the accounting list is long */
out:
	if (ring >= 0)
		iour__close(ring);
	if (maps >= 0)
		close(maps);
	if (mem >= 0)
		close(mem);
	if (piddir >= 0)
		close(piddir);
	return rc;
}

/* In the worker: close every fd but `keep` (the listener, the two pipes
 * and the quota's set, or the listener again without one).  In the OCI
 * agent it inherits every container's listener, the runtimes' sockets and
 * the other workers' pipes and pidfds.  Standard input, output and error
 * stay. */
static void close_others(const int keep[4])
{
	unsigned int k[4], from = 3;
	struct rlimit rl;
	bool ok = true;

	for (int i = 0; i < 4; i++)
		k[i] = (unsigned int)keep[i];
	for (int i = 0; i < 4; i++) /* sort (a repeated fd is kept once) */
		for (int j = i + 1; j < 4; j++)
			if (k[j] < k[i]) {
				unsigned int t = k[i];

				k[i] = k[j];
				k[j] = t;
			}
	/* close_range (5.9+) on the ranges around them */
	for (int i = 0; i < 4 && ok; i++) {
		if (k[i] > from)
			ok = syscall(SYS_close_range, from, k[i] - 1, 0U) == 0;
		if (k[i] + 1 > from)
			from = k[i] + 1;
	}
	if (ok && syscall(SYS_close_range, from, ~0U, 0U) == 0)
		return;
	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur > 65536)
		rl.rlim_cur = 65536;
	for (int fd = 3; fd < (int)rl.rlim_cur; fd++)
		if (fd != keep[0] && fd != keep[1] && fd != keep[2] && fd != keep[3])
			close(fd);
}

/* What the broker sends a worker: the call. */
struct call_msg {
	uint64_t id;
	int32_t pid;
	uint32_t entries;
	uint64_t ptr;
};

/*
 * A spare waits for its call; what every call costs a fresh process the
 * first time (faulting in the stack and the pages written after the fork,
 * binding the library calls the broker itself never made) it pays here,
 * off the caller's path.  Nothing here changes the process.
 */
static __attribute__((noinline)) void worker_warm(void)
{
	volatile char stack[32768];
	struct rlimit rl;
	uid_t u[3];
	gid_t g[3];
	char self[64];
	struct iovec l = { .iov_base = self, .iov_len = sizeof(self) };
	struct iovec r = { .iov_base = self, .iov_len = sizeof(self) };

	for (size_t i = 0; i < sizeof(stack); i += 4096)
		stack[i] = 0;
	(void)getresuid(&u[0], &u[1], &u[2]);
	(void)getresgid(&g[0], &g[1], &g[2]);
	/* glibc's fortified getgroups() warns on a discarded result. */
	if (getgroups(0, NULL) < 0)
		stack[0] = 0;
	(void)prlimit(0, RLIMIT_MEMLOCK, NULL, &rl);
	(void)process_vm_readv(getpid(), &l, 1, &r, 1, 0);
	iour__broker_account_warm();
}

/* The worker process: forked ahead of its call, waits for it on `cfd`;
 * never returns. */
static void worker_main(struct iour_broker *b, int cfd, int wfd)
{
	const int keep[4] = { b->fd, cfd, wfd, b->alive >= 0 ? b->alive : b->fd };
	struct call_msg m;
	struct call c;
	int rc;

	/* Neither the program (which may share its uid) nor anyone else may
	 * attach to it, read its memory or take its fds. */
	(void)prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	close_others(keep);
	worker_warm();
	if (read(cfd, &m, sizeof(m)) != (ssize_t)sizeof(m))
		_exit(0); /* a spare the broker no longer needs */
	close(cfd);
	memset(&c, 0, sizeof(c));
	c.id = m.id;
	c.pid = m.pid;
	c.entries = m.entries;
	c.ptr = m.ptr;
	rc = serve_setup(b, &c, wfd);
	report(wfd, REC_DONE, &c, rc);
	_exit(0);
}

static void emit(struct iour_broker *b, int pid, uint32_t entries, uint32_t flags, int rc,
		 const char *what)
{
	struct iour_broker_event ev;

	if (!b->on_ring)
		return;
	memset(&ev, 0, sizeof(ev));
	ev.sz = sizeof(ev);
	ev.pid = pid;
	ev.entries = entries;
	ev.setup_flags = flags;
	ev.result = rc;
	ev.what = what;
	b->on_ring(b->arg, &ev);
}

/* Count an outcome. */
static void count(struct iour_broker *b, enum outcome o)
{
	switch (o) {
	case OUT_SERVED:
		b->c.served++;
		return;
	case OUT_GONE:
		b->c.gone++;
		return;
	case OUT_FLAGS:
		b->c.refused_flags++;
		break;
	case OUT_KERNEL:
		b->c.refused_kernel++;
		break;
	case OUT_MEMORY:
		b->c.refused_memory++;
		break;
	case OUT_ACCOUNTING:
		b->c.refused_accounting++;
		break;
	case OUT_QUOTA:
		b->c.refused_quota++;
		break;
	}
	b->c.refused++;
}

/* Answer a call here, in the broker (no worker): count and report. */
static void answer_here(struct iour_broker *b, const struct call *c, uint64_t *counter, int err,
			const char *why)
{
	char what[320];
	int rc = respond_err(b, c->id, err);

	if (rc == -ENOENT) {
		b->c.gone++;
		snprintf(what, sizeof(what), "caller gone before the answer (%s)", why);
	} else {
		b->c.refused++;
		(*counter)++;
		snprintf(what, sizeof(what), "refused: %s", why);
		rc = -err;
	}
	emit(b, c->pid, c->entries, c->p.flags, rc, what);
}

/* The timer at the earliest deadline of a working worker (or off). */
static void arm(struct iour_broker *b)
{
	struct itimerspec its;
	uint64_t first = 0;

	for (struct worker *w = b->workers; w; w = w->next)
		if (!w->killed && !w->done && (!first || w->deadline_ns < first))
			first = w->deadline_ns;
	memset(&its, 0, sizeof(its));
	if (first) {
		its.it_value.tv_sec = (time_t)(first / 1000000000ULL);
		its.it_value.tv_nsec = (long)(first % 1000000000ULL);
	}
	(void)timerfd_settime(b->tfd, TFD_TIMER_ABSTIME, &its, NULL);
}

/* Take the listener in or out of the epoll set (max_workers). */
static void watch_listener(struct iour_broker *b, bool on)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = EV_LISTENER };

	if (on == b->watching || (on && b->hup))
		return;
	if (!epoll_ctl(b->epfd, on ? EPOLL_CTL_ADD : EPOLL_CTL_DEL, b->fd, &ev))
		b->watching = on;
}

/* Fork a worker that waits for its call: NULL with *err set on failure. */
static struct worker *fork_worker(struct iour_broker *b, int *err)
{
	struct worker *w = iour__calloc(1, sizeof(*w));
	sigset_t all, old;
	int p[2], q[2];
	long pid;

	if (!w) {
		*err = -ENOMEM;
		return NULL;
	}
	if (pipe2(p, O_CLOEXEC | O_NONBLOCK)) {
		*err = -errno;
		iour__free(w);
		return NULL;
	}
	if (pipe2(q, O_CLOEXEC)) {
		*err = -errno;
		close(p[0]);
		close(p[1]);
		iour__free(w);
		return NULL;
	}
	/* The worker starts with every signal blocked: no handler of the
	 * process runs in it (SIGKILL and SIGSTOP still do their work). */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pid = iour__fork();
	if (pid == 0) {
		close(p[0]);
		close(q[1]);
		worker_main(b, q[0], p[1]);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	close(p[1]);
	close(q[0]);
	if (pid < 0) {
		close(p[0]);
		close(q[1]);
		iour__free(w);
		*err = (int)pid;
		return NULL;
	}
	w->pid = (pid_t)pid;
	w->rfd = p[0];
	w->cfd = q[1];
	w->pidfd = (int)syscall(SYS_pidfd_open, (pid_t)pid, 0);
	return w;
}

/* Kill and reap a worker that has no call (a spare, or one whose call
 * could not be sent): it waits on its call pipe, which SIGKILL ends. */
static void discard(struct worker *w)
{
	kill(w->pid, SIGKILL);
	(void)waitpid(w->pid, NULL, 0);
	if (w->pidfd >= 0)
		close(w->pidfd);
	if (w->cfd >= 0)
		close(w->cfd);
	close(w->rfd);
	iour__free(w);
}

/* Serve `c` by a worker: the spare if there is one, else a new one; then
 * fork the next spare, off the callers' path.  0, or -errno (nothing
 * started, the call not answered). */
static int spawn(struct iour_broker *b, const struct call *c)
{
	struct epoll_event ev = { .events = EPOLLIN };
	struct call_msg m = { .id = c->id, .pid = c->pid, .entries = c->entries, .ptr = c->ptr };
	struct worker *w = b->spare;
	int err = 0;

	b->spare = NULL;
	if (!w)
		w = fork_worker(b, &err);
	if (!w)
		return err;
	ev.data.ptr = w;
	if (write(w->cfd, &m, sizeof(m)) != (ssize_t)sizeof(m) ||
	    epoll_ctl(b->epfd, EPOLL_CTL_ADD, w->pidfd >= 0 ? w->pidfd : w->rfd, &ev)) {
		/* a spare that died (someone killed it), or no room in epoll */
		err = errno == ENOMEM || errno == ENOSPC ? -ENOMEM : -EPIPE;
		discard(w);
		return err;
	}
	close(w->cfd);
	w->cfd = -1;
	w->id = c->id;
	w->cpid = c->pid;
	w->entries = c->entries;
	w->deadline_ns = now_ns() + (uint64_t)b->deadline_ms * 1000000ULL;
	w->next = b->workers;
	b->workers = w;
	b->nworkers++;
	__atomic_fetch_add(&live_workers, 1, __ATOMIC_RELAXED);
	arm(b);
	b->spare = fork_worker(b, &err); /* none: the next call forks its own */
	return 0;
}

/* What the worker wrote so far. */
static void drain(struct worker *w)
{
	struct rec r;

	while (read(w->rfd, &r, sizeof(r)) == (ssize_t)sizeof(r)) {
		w->flags = r.flags;
		if (r.kind == REC_READ)
			w->read_done = true;
		if (r.kind == REC_DONE) {
			w->read_done = true;
			w->done = true;
			w->last = r;
		}
	}
}

/* The broker answers for a worker that did not: killed at its deadline,
 * or dead without an answer. */
static void answer_for(struct iour_broker *b, struct worker *w, const char *how)
{
	struct call c;
	char why[224];

	memset(&c, 0, sizeof(c));
	c.id = w->id;
	c.pid = w->cpid;
	c.entries = w->entries;
	c.p.flags = w->flags;
	if (w->read_done)
		snprintf(why, sizeof(why), "the ring could not be built %s (ENOMEM)", how);
	else
		snprintf(why, sizeof(why), "the params could not be read %s (EFAULT)", how);
	answer_here(b, &c, &b->c.refused_deadline, w->read_done ? ENOMEM : EFAULT, why);
}

/* The workers past their deadline: killed, their calls answered. */
static void deadlines(struct iour_broker *b)
{
	uint64_t t = now_ns();
	uint64_t buf;
	char how[64];

	if (read(b->tfd, &buf, sizeof(buf)) < 0) {
		/* not expired yet, or already read */
	}
	snprintf(how, sizeof(how), "in time (%u ms)", b->deadline_ms);
	for (struct worker *w = b->workers; w; w = w->next) {
		if (w->killed || w->deadline_ns > t)
			continue;
		drain(w);
		if (w->done)
			continue; /* answered: its exit is on the way */
		worker_signal(w);
		w->killed = true;
		__atomic_fetch_sub(&live_workers, 1, __ATOMIC_RELAXED);
		answer_for(b, w, how);
	}
	arm(b);
}

/* A worker exited (its pidfd, or its pipe's end): reap, count, report. */
static void reap(struct iour_broker *b, struct worker *w)
{
	struct worker **pp;

	drain(w);
	if (w->pidfd >= 0) {
		if (waitpid(w->pid, NULL, WNOHANG) == 0)
			return; /* not yet: the pidfd stays readable */
	} else {
		struct pollfd pfd = { .fd = w->rfd, .events = POLLIN };

		/* without pidfds: the pipe's end, then the exit follows */
		if (poll(&pfd, 1, 0) != 1 || !(pfd.revents & POLLHUP))
			return;
		(void)waitpid(w->pid, NULL, 0);
	}
	(void)epoll_ctl(b->epfd, EPOLL_CTL_DEL, w->pidfd >= 0 ? w->pidfd : w->rfd, NULL);
	for (pp = &b->workers; *pp; pp = &(*pp)->next) {
		if (*pp == w) {
			*pp = w->next;
			break;
		}
	}
	b->nworkers--;
	if (!w->killed) {
		__atomic_fetch_sub(&live_workers, 1, __ATOMIC_RELAXED);
		if (w->done) {
			count(b, (enum outcome)w->last.outcome);
			w->last.what[sizeof(w->last.what) - 1] = '\0';
			emit(b, w->cpid, w->entries, w->flags, w->last.rc, w->last.what);
		} else {
			answer_for(b, w, "(the worker died)");
		}
	}
	if (w->pidfd >= 0)
		close(w->pidfd);
	close(w->rfd);
	iour__free(w);
	if (b->nworkers < b->max_workers)
		watch_listener(b, true);
	arm(b);
}

/* One notification: taken here (RECV does not wait on the program),
 * served by a worker.  0, or -errno of RECV. */
static int take(struct iour_broker *b)
{
	struct seccomp_notif *req = b->notif;
	struct call c;
	unsigned int live;
	int rc;

	memset(req, 0, b->notif_sz);
	if (ioctl(b->fd, SECCOMP_IOCTL_NOTIF_RECV, req) < 0) {
		rc = -errno;
		if (rc != -ENOENT)
			return rc;
		b->c.gone++; /* the caller was gone before we took it */
		return 0;
	}
	b->c.notifications++;
	memset(&c, 0, sizeof(c));
	c.id = req->id;
	c.pid = (int)req->pid;
	c.entries = (uint32_t)req->data.args[0];
	c.ptr = req->data.args[1];
	if (req->data.nr != KIO_NR_SETUP) {
		answer_here(b, &c, &b->c.refused_flags, ENOSYS, "not io_uring_setup (ENOSYS)");
		return 0;
	}
	if (c.pid <= 0) {
		answer_here(b, &c, &b->c.refused_memory, EPERM,
			    "the caller is outside the broker's pid namespace (EPERM)");
		return 0;
	}
	live = __atomic_load_n(&live_workers, __ATOMIC_RELAXED);
	if (live >= b->process_workers) {
		char why[160];

		snprintf(why, sizeof(why),
			 "%u broker workers busy in the process, the most it runs (ENOMEM)", live);
		answer_here(b, &c, &b->c.refused_busy, ENOMEM, why);
		return 0;
	}
	rc = spawn(b, &c);
	if (rc) {
		char why[160];

		snprintf(why, sizeof(why), "no worker could be started: %s (ENOMEM)",
			 strerrorname_np(-rc) ? strerrorname_np(-rc) : "error");
		answer_here(b, &c, &b->c.refused_busy, ENOMEM, why);
		return 0;
	}
	if (b->nworkers >= b->max_workers) {
		/* backpressure: this listener's next callers wait until a
		 * worker exits; no other broker does */
		watch_listener(b, false);
		b->c.deferred++;
	}
	return 0;
}

/* Documented in include/iouring_restrict/broker.h */
int iour_broker__serve(struct iour_broker *b)
{
	struct epoll_event evs[16];
	int n;

	if (!b)
		return -EINVAL;
	if (b->hup && !b->workers)
		return -ENOENT;
	n = epoll_wait(b->epfd, evs, 16, b->nonblock ? 0 : -1);
	if (n < 0)
		return -errno;
	if (n == 0)
		return -EAGAIN; /* IOUR_BROKER_NONBLOCK, nothing pending */
	/* Finished workers first (they free slots), then deadlines, then
	 * new calls. */
	for (int i = 0; i < n; i++)
		if (evs[i].data.u64 != EV_LISTENER && evs[i].data.u64 != EV_TIMER)
			reap(b, evs[i].data.ptr);
	for (int i = 0; i < n; i++)
		if (evs[i].data.u64 == EV_TIMER)
			deadlines(b);
	for (int i = 0; i < n; i++) {
		if (evs[i].data.u64 != EV_LISTENER || !b->watching)
			continue;
		if (evs[i].events & EPOLLIN) {
			int rc = take(b);

			if (rc < 0)
				return rc;
		} else if (evs[i].events & (EPOLLHUP | EPOLLERR)) {
			/* every confined process has exited */
			watch_listener(b, false);
			b->hup = true;
			if (b->spare) {
				discard(b->spare);
				b->spare = NULL;
			}
		}
	}
	if (b->hup && !b->workers)
		return -ENOENT;
	return 0;
}

/* Documented in include/iouring_restrict/broker.h */
void iour_broker__free(struct iour_broker *b)
{
	struct worker *w;
	uint64_t until;

	if (!b)
		return;
	/* Calls in flight get the answer every later call gets: ENOSYS. */
	for (w = b->workers; w; w = w->next) {
		if (!w->killed) {
			w->killed = true;
			__atomic_fetch_sub(&live_workers, 1, __ATOMIC_RELAXED);
			worker_signal(w);
			if (!w->done)
				(void)respond_err(b, w->id, ENOSYS);
		}
	}
	/* Reap what exits soon; a worker the kernel keeps waiting (a FUSE
	 * read that is never answered ignores SIGKILL until the file system
	 * answers or goes away) is left to exit on its own, unreaped. */
	until = now_ns() + (uint64_t)FREE_WAIT_MS * 1000000ULL;
	while (b->workers) {
		uint64_t t = now_ns();
		struct pollfd pfd;

		w = b->workers;
		pfd.fd = w->pidfd >= 0 ? w->pidfd : w->rfd;
		pfd.events = POLLIN;
		pfd.revents = 0;
		if (t < until && poll(&pfd, 1, (int)((until - t) / 1000000ULL) + 1) == 1)
			(void)waitpid(w->pid, NULL, WNOHANG);
		b->workers = w->next;
		if (w->pidfd >= 0)
			close(w->pidfd);
		close(w->rfd);
		iour__free(w);
	}
	if (b->spare)
		discard(b->spare);
	if (b->fd >= 0)
		close(b->fd);
	close(b->epfd);
	close(b->tfd);
	if (b->alive >= 0)
		close(b->alive);
	iour__free(b->notif);
	iour__free(b->resp);
	iour__free(b);
}
