/* SPDX-License-Identifier: MIT */
/*
 * The enforcement check, serving side (verify.c has the calling side and
 * how the two meet): the forked child, or the helper program it executes,
 * checks the channel, creates or adopts the ring, runs each request and
 * writes its result.  iour__verify_serve() allocates no memory and takes
 * no lock: it runs after fork() in a caller that may have other threads.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
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

/* ---- the serving side (forked child or helper program) ---- */

/* The channel came from our own caller, but a helper reads it from an fd:
 * check every offset before use. */
static int chan_check(const struct vchan_hdr *h, size_t size)
{
	const struct vchan_req *q;
	uint32_t i;

	if (size < sizeof(*h) || h->magic != VCHAN_MAGIC || h->version != VCHAN_VERSION ||
	    h->size != size || h->nr == 0 || h->nr > IOUR_VERIFY_MAX_REQS)
		return -EINVAL;
	if (h->reqs_off < sizeof(*h) || (h->reqs_off & 7) || (h->results_off & 7) ||
	    (size_t)h->reqs_off + (size_t)h->nr * sizeof(*q) > h->results_off ||
	    (size_t)h->results_off + (size_t)h->nr * sizeof(struct iour_verify_result) > size)
		return -EINVAL;
	q = (const struct vchan_req *)((const uint8_t *)h + h->reqs_off);
	for (i = 0; i < h->nr; i++, q++) {
		if (!opcode_supported(q->opcode) || q->sqe_flags & ~SQE_FLAGS_OK)
			return -EINVAL;
		if (q->path_off && ((size_t)q->path_off + q->path_len + 1 > size ||
				    ((const char *)h)[q->path_off + q->path_len] != '\0'))
			return -EINVAL;
		if ((q->opcode == IOUR_OP_OPENAT || q->opcode == IOUR_OP_OPENAT2) && !q->path_off)
			return -EINVAL;
		if (q->addrlen > IOUR_VERIFY_MAX_ADDR ||
		    (q->addrlen && (!q->addr_off || (size_t)q->addr_off + q->addrlen > size)))
			return -EINVAL;
	}
	return 0;
}

/*
 * Prepare, submit and clean up one request.  Returns 0 when the request
 * has its outcome in *out (including a FAILED preparation), or the
 * negative errno of a ring-level failure that ends the check.
 */
static int run_one(struct iour__ring *ring, const struct vchan_hdr *h, const struct vchan_req *q,
		   uint32_t idx, struct iour_verify_result *out)
{
	const char *path = q->path_off ? (const char *)h + q->path_off : NULL;
	const uint8_t *addr = q->addr_off ? (const uint8_t *)h + q->addr_off : NULL;
	bool reading = q->opcode == IOUR_OP_READ || q->opcode == IOUR_OP_READV;
	int p[2] = { -1, -1 }, sock = -1, target = -1, rc = 0;
	struct open_how how;
	struct kio_sqe sqe;
	struct kio_cqe cqe;
	struct iovec iov;
	char byte = 'v', buf[1];

	memset(&sqe, 0, sizeof(sqe));
	sqe.opcode = (uint8_t)q->opcode;
	sqe.flags = (uint8_t)q->sqe_flags;
	sqe.user_data = idx;
	switch (q->opcode) {
	case IOUR_OP_NOP:
		sqe.fd = -1;
		break;
	case IOUR_OP_READ:
	case IOUR_OP_READV:
	case IOUR_OP_WRITE:
	case IOUR_OP_WRITEV:
		if (pipe2(p, O_CLOEXEC) < 0) {
			rc = -errno;
			goto failed;
		}
		if (reading && write(p[1], &byte, 1) != 1) {
			rc = -EIO;
			goto failed;
		}
		iov.iov_base = reading ? (void *)buf : (void *)&byte;
		iov.iov_len = 1;
		sqe.fd = reading ? p[0] : p[1];
		sqe.addr = (q->opcode == IOUR_OP_READV || q->opcode == IOUR_OP_WRITEV) ?
				   (uintptr_t)&iov :
				   (uintptr_t)iov.iov_base;
		sqe.len = 1;
		sqe.off = (uint64_t)-1;
		break;
	case IOUR_OP_SOCKET:
		sqe.fd = q->family;
		sqe.off = (uint32_t)q->type;
		sqe.len = (uint32_t)q->protocol;
		break;
	case IOUR_OP_OPENAT:
		sqe.fd = AT_FDCWD;
		sqe.addr = (uintptr_t)path;
		sqe.len = (uint32_t)q->open_mode;
		sqe.op_flags = (uint32_t)q->open_flags;
		break;
	case IOUR_OP_OPENAT2:
		how.flags = q->open_flags;
		how.mode = q->open_mode;
		how.resolve = q->open_resolve;
		sqe.fd = AT_FDCWD;
		sqe.addr = (uintptr_t)path;
		sqe.len = sizeof(how);
		sqe.off = (uintptr_t)&how;
		break;
	case IOUR_OP_CONNECT: {
		int family = q->family;
		sa_family_t fam;

		if (!family && addr && q->addrlen >= sizeof(fam)) {
			memcpy(&fam, addr, sizeof(fam));
			family = fam;
		}
		sock = socket(family, (q->type ? q->type : SOCK_STREAM) | SOCK_CLOEXEC,
			      q->protocol);
		if (sock < 0) {
			rc = -errno;
			goto failed;
		}
		sqe.fd = sock;
		sqe.addr = (uintptr_t)addr;
		sqe.off = q->addrlen;
		break;
	}
	case IOUR_OP_MSG_RING: {
		/* A ring of our own to message: the caller's other rings are
		 * never touched.  It is never mapped, only closed. */
		struct kio_params tp;
		long t;

		memset(&tp, 0, sizeof(tp));
		t = iour__setup(2, &tp);
		if (t < 0) {
			rc = (int)t;
			goto failed;
		}
		target = (int)t;
		sqe.fd = target;
		sqe.addr = MSG_DATA;
		break;
	}
	default:
		rc = -EOPNOTSUPP;
		goto failed;
	}

	rc = iour__ring_submit_one(ring, &sqe, &cqe);
	if (rc) {
		out->status = IOUR_VERIFY_FAILED;
		out->res = rc;
		goto out;
	}
	if (cqe.res >= 0 && (q->opcode == IOUR_OP_SOCKET || q->opcode == IOUR_OP_OPENAT ||
			     q->opcode == IOUR_OP_OPENAT2))
		close(cqe.res);
	out->res = cqe.res;
	out->observed = cqe.res == -EACCES ? IOUR_EXPECT_DENY : IOUR_EXPECT_ALLOW;
	out->status = out->observed == q->expect ? IOUR_VERIFY_MATCH : IOUR_VERIFY_MISMATCH;
	goto out;

failed:
	out->status = IOUR_VERIFY_FAILED;
	out->res = rc;
	rc = 0; /* this request only */
out:
	if (p[0] >= 0)
		close(p[0]);
	if (p[1] >= 0)
		close(p[1]);
	if (sock >= 0)
		close(sock);
	if (target >= 0)
		iour__close(target);
	return rc;
}

/* Run the check described by a mapped channel; results go into it. */
/* Documented in verify_channel.h */
int iour__verify_serve(struct vchan_hdr *h, size_t size)
{
	struct iour_verify_result *res;
	const struct vchan_req *reqs;
	struct iour__ring ring;
	struct kio_params p;
	uint32_t i = 0;
	int rc;

	rc = chan_check(h, size);
	if (rc)
		return rc;
	set_phase(h, PHASE_STARTED);
	reqs = (const struct vchan_req *)((uint8_t *)h + h->reqs_off);
	res = (struct iour_verify_result *)((uint8_t *)h + h->results_off);

	memset(&ring, 0, sizeof(ring));
	ring.fd = -1;
	set_phase(h, PHASE_RING);
	if (h->flags & IOUR_VERIFY_RING_FD) {
		rc = iour__ring_learn(h->ring_fd, h->ring_flags, &p);
		if (!rc)
			rc = iour__ring_from_fd(&ring, h->ring_fd, &p);
	} else {
		rc = iour__ring_init(&ring, CHILD_RING_ENTRIES, h->ring_flags);
	}
	if (!rc) {
		set_phase(h, PHASE_RUN);
		for (i = 0; i < h->nr; i++) {
			rc = run_one(&ring, h, &reqs[i], i, &res[i]);
			if (rc) {
				i++;
				break;
			}
		}
	}
	if (rc) {
		h->ring_err = rc;
		for (; i < h->nr; i++) {
			res[i].status = IOUR_VERIFY_NOT_RUN;
			res[i].res = rc;
		}
	}
	iour__ring_exit(&ring);
	set_phase(h, PHASE_DONE);
	__atomic_store_n(&h->done, VCHAN_DONE, __ATOMIC_RELEASE);
	return 0;
}

/* Documented in include/iouring_restrict/verify.h */
int iour_verify_serve(void)
{
	const char *s = getenv(IOUR_VERIFY_ENV);
	struct stat st;
	char *end;
	long fd, mrc;
	void *m = NULL;
	int rc;

	if (!s)
		return -ENOENT;
	errno = 0;
	fd = strtol(s, &end, 10);
	if (errno || end == s || *end || fd < 0 || fd > 0x7fffffff)
		return -EINVAL;
	if (fstat((int)fd, &st) < 0)
		return errno == EBADF ? -EBADF : -EINVAL;
	if (!S_ISREG(st.st_mode) || st.st_size < (off_t)sizeof(struct vchan_hdr) ||
	    st.st_size > (off_t)VCHAN_MAX_SIZE)
		return -EINVAL;
	mrc = iour__mmap(&m, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, (int)fd, 0);
	if (mrc < 0)
		return mrc == -ENOMEM ? -ENOMEM : -EINVAL;
	rc = iour__verify_serve(m, (size_t)st.st_size);
	iour__munmap(m, (size_t)st.st_size);
	if (rc == 0) {
		/* Only a real channel is ours to close: a stale variable may
		 * name somebody else's descriptor. */
		close((int)fd);
		unsetenv(IOUR_VERIFY_ENV);
	}
	return rc;
}
