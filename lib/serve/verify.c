/* SPDX-License-Identifier: MIT */
/*
 * The enforcement check (documented in include/iouring_restrict/verify.h).
 *
 * The caller's requests are copied into a "channel": a memfd mapped shared
 * by the caller and the child.  The child, or the helper program it
 * executes (which finds the memfd through IOUR_VERIFY_FD), runs the check
 * from the channel and writes one result per request into it, then a
 * "done" marker.  The caller learns that the child is gone from a pipe
 * whose only writer the child holds (EOF; this also works when the caller
 * ignores SIGCHLD), and bounds the wait with a timeout.
 *
 * The same iour__verify_serve() (verify_serve.c) runs in every mode, so
 * the forked mode and the exec mode cannot drift apart.  Nothing in the
 * child after fork() allocates memory or takes a lock: the caller may have
 * other threads.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/miniring.h"
#include "probe/probe_answers.h"
#include "base/sys.h"
#include "iouring_restrict/names.h"
#include "iouring_restrict/ruleset.h"
#include "iouring_restrict/verify.h"
#include "verify_channel.h"

extern char **environ;

/* ---- the calling side ---- */

struct vopts {
	uint32_t flags;
	int32_t ring_fd;
	uint32_t ring_flags;
	uint32_t timeout_ms;
	const char *exec_path;
	char *const *exec_argv;
	char *const *exec_envp;
	const struct iour_ruleset *ruleset;
	struct iour_verify_coverage *coverage;
};

static int opts_check(const struct iour_verify_opts *opts, struct vopts *o)
{
	int rc = IOUR_OPTS_VALID(opts, iour_verify_opts);

	if (rc)
		return rc;
	o->flags = IOUR_OPTS_GET(opts, flags, 0U);
	o->ring_fd = IOUR_OPTS_GET(opts, ring_fd, 0);
	o->ring_flags = IOUR_OPTS_GET(opts, ring_flags, 0U);
	o->timeout_ms = IOUR_OPTS_GET(opts, timeout_ms, 0U);
	o->exec_path = IOUR_OPTS_GET(opts, exec_path, (const char *)NULL);
	o->exec_argv = IOUR_OPTS_GET(opts, exec_argv, (char *const *)NULL);
	o->exec_envp = IOUR_OPTS_GET(opts, exec_envp, (char *const *)NULL);
	o->ruleset = IOUR_OPTS_GET(opts, ruleset, (const struct iour_ruleset *)NULL);
	o->coverage = IOUR_OPTS_GET(opts, coverage, (struct iour_verify_coverage *)NULL);
	if (!o->ruleset != !o->coverage)
		return -EINVAL;
	if (o->coverage &&
	    (o->coverage->sz < sizeof(*o->coverage) || o->coverage->sz > COVERAGE_MAX_SZ))
		return -EINVAL;
	if (!o->timeout_ms)
		o->timeout_ms = DEFAULT_TIMEOUT_MS;

	if (o->flags & ~IOUR_VERIFY_RING_FD)
		return -EINVAL;
	if (o->ring_flags & ~IOUR__SETUP_KNOWN)
		return -EINVAL;
	if (o->flags & IOUR_VERIFY_RING_FD) {
		if (o->ring_fd < 0)
			return -EINVAL;
		if ((o->ring_flags & ~IOUR__RING_ADOPT_FLAGS) ||
		    (o->ring_flags & KIO_SETUP_SINGLE_ISSUER))
			return -EOPNOTSUPP;
	} else {
		if (o->ring_fd != 0 || (o->ring_flags & KIO_SETUP_R_DISABLED))
			return -EINVAL;
		if (o->ring_flags & ~IOUR__RING_INIT_FLAGS)
			return -EOPNOTSUPP;
		if ((o->ring_flags & KIO_SETUP_DEFER_TASKRUN) &&
		    !(o->ring_flags & KIO_SETUP_SINGLE_ISSUER))
			return -EINVAL;
	}
	if (!o->exec_path && (o->exec_argv || o->exec_envp))
		return -EINVAL;
	if (o->exec_path && !o->exec_path[0])
		return -EINVAL;
	return 0;
}

/*
 * Validate one caller request and translate it; *extra gets the bytes it
 * needs in the channel's data area.  The caller's struct may be older or
 * newer than ours: absent fields read as 0.
 */
static int req_check(const struct iour_verify_req *r, size_t stride, struct vchan_req *c,
		     const char **path, const void **addr, size_t *extra)
{
	size_t plen = 0;
	int rc;

	if (r->sz != stride)
		return -EINVAL;
	rc = IOUR_OPTS_VALID(r, iour_verify_req);
	if (rc)
		return rc;
	memset(c, 0, sizeof(*c));
	c->opcode = IOUR_OPTS_GET(r, opcode, 0U);
	c->expect = IOUR_OPTS_GET(r, expect, 0U);
	c->sqe_flags = IOUR_OPTS_GET(r, sqe_flags, 0U);
	c->family = IOUR_OPTS_GET(r, family, 0);
	c->type = IOUR_OPTS_GET(r, type, 0);
	c->protocol = IOUR_OPTS_GET(r, protocol, 0);
	c->open_flags = IOUR_OPTS_GET(r, open_flags, 0ULL);
	c->open_mode = IOUR_OPTS_GET(r, open_mode, 0ULL);
	c->open_resolve = IOUR_OPTS_GET(r, open_resolve, 0ULL);
	c->addrlen = IOUR_OPTS_GET(r, addrlen, 0U);
	*path = IOUR_OPTS_GET(r, path, (const char *)NULL);
	*addr = IOUR_OPTS_GET(r, addr, (const void *)NULL);
	if (IOUR_OPTS_GET(r, resv, 0U))
		return -EINVAL;

	if (c->expect != IOUR_EXPECT_ALLOW && c->expect != IOUR_EXPECT_DENY)
		return -EINVAL;
	if (c->sqe_flags & ~SQE_FLAGS_OK)
		return -EINVAL;
	if (!opcode_supported(c->opcode))
		return c->opcode < 256 ? -EOPNOTSUPP : -EINVAL;

	/* Fields the opcode does not use must be zero. */
	switch (c->opcode) {
	case IOUR_OP_SOCKET:
	case IOUR_OP_CONNECT:
		if (c->open_flags || c->open_mode || c->open_resolve || *path)
			return -EINVAL;
		if (c->opcode == IOUR_OP_SOCKET && (*addr || c->addrlen))
			return -EINVAL;
		if (c->opcode == IOUR_OP_CONNECT) {
			if (c->addrlen > IOUR_VERIFY_MAX_ADDR || (c->addrlen && !*addr) ||
			    (!c->addrlen && *addr))
				return -EINVAL;
			if (!c->family && c->addrlen < sizeof(sa_family_t))
				return -EINVAL; /* nothing to take the family from */
		}
		break;
	case IOUR_OP_OPENAT:
	case IOUR_OP_OPENAT2:
		if (c->family || c->type || c->protocol || *addr || c->addrlen)
			return -EINVAL;
		if (!*path)
			return -EINVAL;
		plen = strnlen(*path, IOUR_VERIFY_MAX_PATH + 1);
		if (plen > IOUR_VERIFY_MAX_PATH)
			return -EINVAL;
		if (c->opcode == IOUR_OP_OPENAT &&
		    (c->open_flags > UINT32_MAX || c->open_mode > UINT32_MAX || c->open_resolve))
			return -EINVAL;
		break;
	default:
		if (c->family || c->type || c->protocol || c->open_flags || c->open_mode ||
		    c->open_resolve || *path || *addr || c->addrlen)
			return -EINVAL;
		break;
	}
	c->path_len = (uint32_t)plen;
	*extra = (*path ? align8(plen + 1) : 0) + align8(c->addrlen);
	return 0;
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The environment array the child hands to execve().  When execve() fails
 * the child _exits holding its copy of the parent's allocation (the parent
 * frees its own); keeping it referenced from here lets a leak checker that
 * follows the child (valgrind) see it as reachable, as it is.  Freeing it
 * in the child instead would not be async-signal-safe. */
static char *const *volatile child_envp;

/* The child after fork(): async-signal-safe calls only. */
static void child_main(struct vchan_hdr *h, size_t size, int memfd, int exit_w,
		       const struct vopts *o, char *const *argv, char *const *envp)
{
	if (o->exec_path) {
		/* Keep the channel, the exit pipe and the ring across exec. */
		if (fcntl(memfd, F_SETFD, 0) < 0 || fcntl(exit_w, F_SETFD, 0) < 0 ||
		    ((o->flags & IOUR_VERIFY_RING_FD) && fcntl(o->ring_fd, F_SETFD, 0) < 0)) {
			h->exec_err = -errno;
			_exit(126);
		}
		child_envp = envp;
		h->exec_err = (int32_t)iour__execve(o->exec_path, argv, envp);
		_exit(127);
	}
	iour__verify_serve(h, size);
	_exit(0);
}

/* Wait for EOF on the exit pipe (the child is gone) or the deadline. */
static bool wait_exit(int exit_r, uint32_t timeout_ms)
{
	int64_t deadline = now_ms() + timeout_ms;
	struct pollfd pfd = { .fd = exit_r, .events = POLLIN };
	char b;

	for (;;) {
		int64_t left = deadline - now_ms();
		int r;

		if (left <= 0)
			return false;
		r = poll(&pfd, 1, left > 0x7fffffff ? 0x7fffffff : (int)left);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return false; /* cannot happen with a valid fd */
		if (r == 0)
			continue;
		if (read(exit_r, &b, 1) <= 0)
			return true; /* EOF (or an error: treat as gone) */
	}
}

static int map_ring_err(int err)
{
	switch (err) {
	case -ENOSYS:
		return -ENOSYS;
	case -EPERM:
	case -EACCES:
		return -EPERM;
	case -ENOMEM:
		return -ENOMEM;
	case -EBADF:
		return -EBADF;
	case -ENOTTY:
		return -ENOTTY;
	case -EBADFD:
		return -EBADFD;
	case -EBUSY:
		return -EBUSY;
	case -EOPNOTSUPP:
	case -EINVAL: /* the kernel refused the ring flags */
	case -EEXIST: /* a single-issuer ring of another task */
		return -EOPNOTSUPP;
	default:
		return -ECHILD;
	}
}

static void bm_set(uint64_t *bm, uint32_t op)
{
	bm[(op / 64) & 3] |= 1ULL << (op % 64);
}

static bool bm_test(const uint64_t *bm, uint32_t op)
{
	return (bm[(op / 64) & 3] >> (op % 64)) & 1;
}

/*
 * Which opcodes the set allows were tried (struct iour_verify_coverage):
 * `answered_allow` has the opcodes of requests expected to be allowed
 * that the kernel answered, `answered` those of any answered request.
 */
static void coverage_fill(const struct vopts *o, const uint64_t *answered_allow,
			  const uint64_t *answered)
{
	const struct iour_ruleset *rs = o->ruleset;
	struct iour_verify_coverage c;
	struct iour__kernel_limits lim;
	uint32_t op, allowed_flags = 0, required = 0;
	bool restricted = iour_ruleset__sqe_restricted(rs) == 1;

	memset(&c, 0, sizeof(c));
	c.op_last = IOUR_OP__COUNT;
	if (iour__probe_limits(&lim) == 0 && lim.op_last > 0)
		c.op_last = lim.op_last < 256 ? lim.op_last : 256;
	else
		c.flags |= IOUR_VERIFY_COV_KERNEL_UNKNOWN;
	(void)iour_ruleset__sqe_flags(rs, &allowed_flags, &required);
	if (required & ~SQE_FLAGS_OK)
		c.flags |= IOUR_VERIFY_COV_FLAGS_UNSETTABLE;
	if (required & FLAG_FIXED_FILE)
		c.flags |= IOUR_VERIFY_COV_FIXED_FILE_REQUIRED;
	if (iour_ruleset__register_restricted(rs) == 1)
		c.flags |= IOUR_VERIFY_COV_REGISTER_NOT_TRIED;
	for (op = 0; op < c.op_last; op++) {
		/* Opcodes newer than the library: allowed only by an
		 * unrestricted SQE side. */
		bool allowed = op < IOUR_OP__COUNT ? iour_ruleset__sqe_op_allowed(rs, op) == 1 :
						     !restricted;

		if (!allowed) {
			if (bm_test(answered, op))
				bm_set(c.denied_tried, op);
			continue;
		}
		c.n_allowed++;
		bm_set(c.allowed, op);
		if (op == IOUR_OP_MSG_RING)
			c.flags |= IOUR_VERIFY_COV_MSG_RING;
		if (bm_test(answered_allow, op)) {
			c.n_tried++;
			bm_set(c.tried, op);
			continue;
		}
		c.n_untried++;
		bm_set(c.untried, op);
		if (!opcode_supported(op)) {
			c.n_unpreparable++;
			bm_set(c.unpreparable, op);
		}
	}
	c.sz = o->coverage->sz;
	memcpy(o->coverage, &c, sizeof(c));
	if (c.sz > sizeof(c))
		memset((char *)o->coverage + sizeof(c), 0, c.sz - sizeof(c));
}

/*
 * One check on the calling side, from the caller's input to the child's
 * exit.  `creqs` and `cres` are computed before the child runs: a helper
 * program can write the channel's header, so the caller never re-reads the
 * offsets from it.
 */
struct vrun {
	struct vopts o;
	const struct iour_verify_req *reqs;
	size_t nr, stride, data, size;
	int memfd;
	int exit_p[2];
	struct vchan_hdr *h;
	struct vchan_req *creqs;
	struct iour_verify_result *cres;
	char *argv_default[2];
	char env_var[sizeof(IOUR_VERIFY_ENV) + 16];
	char *const *argv;
	char **envp;
	pid_t pid;
	bool gone, have_status;
	int st;
};

/* The caller's request `i`: requests are reqs[0].sz bytes apart. */
static const struct iour_verify_req *vrun_req(const struct vrun *v, size_t i)
{
	return (const void *)((const uint8_t *)v->reqs + i * v->stride);
}

/* Pass 1: validate the options and every request (verify.h's input
 * errors), and size the channel's data area. */
static int vrun_check_input(struct vrun *v, const struct iour_verify_opts *opts)
{
	size_t i;
	int rc;

	rc = opts_check(opts, &v->o);
	if (rc)
		return rc;
	if (!v->reqs || v->nr == 0 || v->nr > IOUR_VERIFY_MAX_REQS)
		return -EINVAL;
	v->stride = v->reqs[0].sz;
	if (v->stride < IOUR_OPTS_END(iour_verify_req, expect) || v->stride > MAX_STRIDE ||
	    v->stride % _Alignof(struct iour_verify_req))
		return -EINVAL;
	v->data = 0;
	for (i = 0; i < v->nr; i++) {
		struct vchan_req c;
		const char *path;
		const void *addr;
		size_t extra;

		rc = req_check(vrun_req(v, i), v->stride, &c, &path, &addr, &extra);
		if (rc)
			return rc;
		v->data += extra;
	}
	if ((v->o.flags & IOUR_VERIFY_RING_FD) && fcntl(v->o.ring_fd, F_GETFD) < 0)
		return -EBADF;
	return 0;
}

/* Create the channel: a memfd (doc/design.md, "One syscall seam"), sized
 * for the header, the requests, the results and the data, mapped shared. */
static int vrun_chan_open(struct vrun *v)
{
	void *map = NULL;
	long src;

	v->size = align8(sizeof(*v->h)) + align8(v->nr * sizeof(*v->creqs)) +
		  align8(v->nr * sizeof(*v->cres)) + v->data;
	src = iour__memfd_create("iour-verify", MFD_CLOEXEC);
	if (src < 0)
		return src == -EMFILE || src == -ENFILE ? -EMFILE :
		       src == -ENOMEM                   ? -ENOMEM :
							  -ECHILD;
	v->memfd = (int)src;
	if (ftruncate(v->memfd, (off_t)v->size) < 0)
		return -ENOMEM;
	if (iour__mmap(&map, v->size, PROT_READ | PROT_WRITE, MAP_SHARED, v->memfd, 0) < 0)
		return -ENOMEM;
	v->h = map;
	return 0;
}

/* Pass 2: fill the channel (zeroed by ftruncate): the header, the
 * translated requests, and their paths and addresses in the data area. */
static void vrun_chan_fill(struct vrun *v)
{
	struct vchan_hdr *h = v->h;
	size_t off = align8(sizeof(*h)), i;

	h->magic = VCHAN_MAGIC;
	h->version = VCHAN_VERSION;
	h->size = (uint32_t)v->size;
	h->nr = (uint32_t)v->nr;
	h->flags = v->o.flags;
	h->ring_fd = v->o.ring_fd;
	h->ring_flags = v->o.ring_flags;
	h->reqs_off = (uint32_t)off;
	h->results_off = (uint32_t)(off + align8(v->nr * sizeof(*v->creqs)));
	v->creqs = (struct vchan_req *)((uint8_t *)h + h->reqs_off);
	v->cres = (struct iour_verify_result *)((uint8_t *)h + h->results_off);
	off = h->results_off + align8(v->nr * sizeof(*v->cres));
	for (i = 0; i < v->nr; i++) {
		struct vchan_req *c = &v->creqs[i];
		const char *path;
		const void *addr;
		size_t extra;

		req_check(vrun_req(v, i), v->stride, c, &path, &addr, &extra);
		if (path) {
			c->path_off = (uint32_t)off;
			memcpy((uint8_t *)h + off, path, c->path_len);
			off += align8(c->path_len + 1);
		}
		if (c->addrlen) {
			c->addr_off = (uint32_t)off;
			memcpy((uint8_t *)h + off, addr, c->addrlen);
			off += align8(c->addrlen);
		}
	}
}

/* Exec mode: the helper's argv and environment, with IOUR_VERIFY_ENV
 * naming the channel's fd (verify.h, iour_verify_serve()). */
static int vrun_exec_env(struct vrun *v)
{
	char *const *src;
	size_t n = 0, j = 0, i;

	if (!v->o.exec_path)
		return 0;
	src = v->o.exec_envp ? v->o.exec_envp : environ;
	while (src && src[n])
		n++;
	v->envp = iour__calloc(n + 2, sizeof(*v->envp));
	if (!v->envp)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		if (strncmp(src[i], IOUR_VERIFY_ENV "=", sizeof(IOUR_VERIFY_ENV)) != 0)
			v->envp[j++] = src[i];
	snprintf(v->env_var, sizeof(v->env_var), "%s=%d", IOUR_VERIFY_ENV, v->memfd);
	v->envp[j++] = v->env_var;
	v->envp[j] = NULL;
	v->argv_default[0] = (char *)v->o.exec_path;
	v->argv = v->o.exec_argv ? v->o.exec_argv : v->argv_default;
	return 0;
}

/* Fork the child with the exit pipe's write end, wait for it to be gone
 * or for the deadline (then kill it), and reap it if SIGCHLD allows. */
static int vrun_child(struct vrun *v)
{
	long src;

	if (pipe2(v->exit_p, O_CLOEXEC) < 0)
		return errno == ENOMEM ? -ENOMEM : -EMFILE;
	src = iour__fork();
	if (src < 0)
		return src == -ENOMEM ? -ENOMEM : -EAGAIN;
	v->pid = (pid_t)src;
	if (v->pid == 0)
		child_main(v->h, v->size, v->memfd, v->exit_p[1], &v->o, v->argv, v->envp);
	close(v->exit_p[1]);
	v->exit_p[1] = -1;

	v->gone = wait_exit(v->exit_p[0], v->o.timeout_ms);
	if (!v->gone)
		kill(v->pid, SIGKILL);
	for (;;) {
		pid_t w = waitpid(v->pid, &v->st, 0);

		if (w == v->pid) {
			v->have_status = true;
			break;
		}
		if (w < 0 && errno == EINTR)
			continue;
		break; /* ECHILD: SIGCHLD ignored, already reaped */
	}
	return 0;
}

/* One result as the caller gets it: garbage cleared, an opcode unknown to
 * the kernel observed as denied, a request that never ran explained. */
static struct iour_verify_result result_fix(const struct vchan_hdr *h, const struct vchan_req *q,
					    struct iour_verify_result r, uint32_t op_last,
					    bool sigsys)
{
	if (r.status > IOUR_VERIFY_FAILED || r.observed > IOUR_EXPECT_DENY) {
		memset(&r, 0, sizeof(r));
	}
	r.resv = 0;
	/* An opcode the kernel does not know is refused with
	 * -EINVAL before any restriction (doc/kernel.md 1.7):
	 * it did not run, so it is observed as denied. */
	if ((r.status == IOUR_VERIFY_MATCH || r.status == IOUR_VERIFY_MISMATCH) && op_last &&
	    q->opcode >= op_last && r.res == -EINVAL) {
		r.observed = IOUR_EXPECT_DENY;
		r.status = q->expect == IOUR_EXPECT_DENY ? IOUR_VERIFY_MATCH : IOUR_VERIFY_MISMATCH;
	}
	if (r.status == IOUR_VERIFY_NOT_RUN && !r.res) {
		if (h->exec_err)
			r.res = h->exec_err;
		else if (sigsys)
			r.res = -EPERM;
	}
	return r;
}

/* The check's return value (verify.h): a mismatch first, then how the
 * child ended, then the ring, then any request that did not complete. */
static int vrun_verdict(const struct vrun *v, unsigned int mismatch, unsigned int incomplete,
			bool done, bool sigsys)
{
	const struct vchan_hdr *h = v->h;

	if (mismatch)
		return -IOUR_ERRNO__NOT_ENFORCED;
	if (!v->gone)
		return -ETIMEDOUT;
	if (h->exec_err)
		return -ECHILD;
	if (!done)
		return sigsys ? -EPERM : -ECHILD;
	if (h->ring_err)
		return map_ring_err(h->ring_err);
	return incomplete ? -ECHILD : 0;
}

/* Collect: fix and hand out every result, count them, record which
 * opcodes were answered for the coverage, and decide the return value. */
static int vrun_collect(struct vrun *v, struct iour_verify_result *results)
{
	bool done = __atomic_load_n(&v->h->done, __ATOMIC_ACQUIRE) == VCHAN_DONE;
	uint32_t phase = __atomic_load_n(&v->h->phase, __ATOMIC_ACQUIRE);
	bool sigsys = v->have_status && WIFSIGNALED(v->st) && WTERMSIG(v->st) == SIGSYS &&
		      (phase == PHASE_RING || phase == PHASE_RUN);
	uint64_t answered_allow[4] = { 0 }, answered[4] = { 0 };
	unsigned int mismatch = 0, incomplete = 0;
	struct iour__kernel_limits lim;
	uint32_t op_last = 0;
	size_t i;
	int rc;

	if (iour__probe_limits(&lim) == 0)
		op_last = lim.op_last;
	for (i = 0; i < v->nr; i++) {
		const struct vchan_req *q = &v->creqs[i];
		struct iour_verify_result r = result_fix(v->h, q, v->cres[i], op_last, sigsys);

		if (r.status == IOUR_VERIFY_MISMATCH)
			mismatch++;
		else if (r.status != IOUR_VERIFY_MATCH)
			incomplete++;
		if (r.status == IOUR_VERIFY_MATCH || r.status == IOUR_VERIFY_MISMATCH) {
			bm_set(answered, q->opcode);
			if (q->expect == IOUR_EXPECT_ALLOW)
				bm_set(answered_allow, q->opcode);
		}
		if (results)
			results[i] = r;
	}
	rc = vrun_verdict(v, mismatch, incomplete, done, sigsys);
	if (v->o.coverage)
		coverage_fill(&v->o, answered_allow, answered);
	return rc;
}

/* Release what the check holds: the exit pipe, the environment copy, the
 * channel's map and its memfd. */
static void vrun_release(struct vrun *v)
{
	if (v->exit_p[0] >= 0)
		close(v->exit_p[0]);
	if (v->exit_p[1] >= 0)
		close(v->exit_p[1]);
	iour__free(v->envp);
	if (v->h)
		iour__munmap(v->h, v->size);
	if (v->memfd >= 0)
		close(v->memfd);
}

/* iour_verify() (verify.h): check the input, fill the channel, run the
 * child, collect its results; every step is one helper above. */
static int verify_impl(const struct iour_verify_req *reqs, size_t nr,
		       struct iour_verify_result *results, const struct iour_verify_opts *opts)
{
	struct vrun v;
	int rc;

	memset(&v, 0, sizeof(v));
	v.reqs = reqs;
	v.nr = nr;
	v.memfd = -1;
	v.exit_p[0] = v.exit_p[1] = -1;
	rc = vrun_check_input(&v, opts);
	if (rc)
		return rc;
	rc = vrun_chan_open(&v);
	if (rc)
		goto out;
	vrun_chan_fill(&v);
	rc = vrun_exec_env(&v);
	if (rc)
		goto out;
	rc = vrun_child(&v);
	if (rc)
		goto out;
	rc = vrun_collect(&v, results);
out:
	vrun_release(&v);
	return rc;
}

/* Documented in include/iouring_restrict/verify.h */
int iour_verify(const struct iour_verify_req *reqs, size_t nr, struct iour_verify_result *results,
		const struct iour_verify_opts *opts)
{
	return iour__err_public(verify_impl(reqs, nr, results, opts), IOUR__ERRSET_VERIFY);
}
