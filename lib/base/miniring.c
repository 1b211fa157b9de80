/* SPDX-License-Identifier: MIT */
/* The library's minimal ring (see miniring.h for the contract). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "miniring.h"
#include "sys.h"

#define MAX_SQ_ENTRIES 32768U
#define MAX_CQ_ENTRIES (2U * MAX_SQ_ENTRIES)
#define PAGE_GUESS 4096U

/* High bits of every user_data the mini ring submits, so a CQE that is not
 * ours is never mistaken for ours. */
#define UD_MAGIC 0x10ca1c4e00000000ULL

static void ring_reset(struct iour__ring *r)
{
	memset(r, 0, sizeof(*r));
	r->fd = -1;
}

static bool pow2(uint32_t v)
{
	return v && !(v & (v - 1));
}

/* Unsupported-but-known flags give -EOPNOTSUPP, unknown bits -EINVAL. */
static int check_flags(uint32_t flags, uint32_t allowed)
{
	if (flags & ~IOUR__SETUP_KNOWN)
		return -EINVAL;
	if (flags & ~allowed)
		return -EOPNOTSUPP;
	return 0;
}

static void *off_ptr(void *base, uint32_t off)
{
	return (uint8_t *)base + off;
}

/*
 * Map the three regions and set the pointers.  With IORING_FEAT_SINGLE_MMAP
 * (5.4+) the SQ and CQ rings share one mapping, sized for the larger.
 */
static int ring_map(struct iour__ring *r, int fd, const struct kio_params *p)
{
	size_t cqe_sz = sizeof(struct kio_cqe) << r->cqe_shift;
	size_t sq_sz, cq_sz;
	long rc;

	if (p->flags & KIO_SETUP_NO_SQARRAY)
		sq_sz = p->cq_off.cqes; /* the header; the CQEs follow */
	else
		sq_sz = (size_t)p->sq_off.array + (size_t)p->sq_entries * sizeof(uint32_t);
	cq_sz = (size_t)p->cq_off.cqes + (size_t)p->cq_entries * cqe_sz;
	if (p->features & KIO_FEAT_SINGLE_MMAP) {
		if (cq_sz > sq_sz)
			sq_sz = cq_sz;
		cq_sz = sq_sz;
	}

	rc = iour__mmap(&r->sq_map, sq_sz, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd,
			(off_t)KIO_OFF_SQ_RING);
	if (rc < 0) {
		r->sq_map = NULL;
		return (int)rc;
	}
	r->sq_map_sz = sq_sz;
	if (p->features & KIO_FEAT_SINGLE_MMAP) {
		r->cq_map = r->sq_map;
		r->cq_map_sz = sq_sz;
	} else {
		rc = iour__mmap(&r->cq_map, cq_sz, PROT_READ | PROT_WRITE,
				MAP_SHARED | MAP_POPULATE, fd, (off_t)KIO_OFF_CQ_RING);
		if (rc < 0) {
			r->cq_map = NULL;
			return (int)rc;
		}
		r->cq_map_sz = cq_sz;
	}
	r->sqes_map_sz = ((size_t)p->sq_entries * sizeof(struct kio_sqe)) << r->sqe_shift;
	rc = iour__mmap(&r->sqes_map, r->sqes_map_sz, PROT_READ | PROT_WRITE,
			MAP_SHARED | MAP_POPULATE, fd, (off_t)KIO_OFF_SQES);
	if (rc < 0) {
		r->sqes_map = NULL;
		r->sqes_map_sz = 0;
		return (int)rc;
	}

	r->sq_head = off_ptr(r->sq_map, p->sq_off.head);
	r->sq_tail = off_ptr(r->sq_map, p->sq_off.tail);
	r->sq_array =
		(p->flags & KIO_SETUP_NO_SQARRAY) ? NULL : off_ptr(r->sq_map, p->sq_off.array);
	r->cq_head = off_ptr(r->cq_map, p->cq_off.head);
	r->cq_tail = off_ptr(r->cq_map, p->cq_off.tail);
	r->cqes = off_ptr(r->cq_map, p->cq_off.cqes);

	/* The kernel's own view of the geometry must match ours. */
	if (*(uint32_t *)off_ptr(r->sq_map, p->sq_off.ring_entries) != p->sq_entries ||
	    *(uint32_t *)off_ptr(r->sq_map, p->sq_off.ring_mask) != p->sq_entries - 1 ||
	    *(uint32_t *)off_ptr(r->cq_map, p->cq_off.ring_entries) != p->cq_entries ||
	    *(uint32_t *)off_ptr(r->cq_map, p->cq_off.ring_mask) != p->cq_entries - 1)
		return -EOPNOTSUPP;
	r->sq_mask = p->sq_entries - 1;
	r->cq_mask = p->cq_entries - 1;
	r->sq_entries = p->sq_entries;
	r->cq_entries = p->cq_entries;
	return 0;
}

static void ring_unmap(struct iour__ring *r)
{
	if (r->sqes_map)
		iour__munmap(r->sqes_map, r->sqes_map_sz);
	if (r->cq_map && r->cq_map != r->sq_map)
		iour__munmap(r->cq_map, r->cq_map_sz);
	if (r->sq_map)
		iour__munmap(r->sq_map, r->sq_map_sz);
	r->sqes_map = r->cq_map = r->sq_map = NULL;
}

static int geometry_ok(const struct kio_params *p)
{
	uint32_t hdr_max = PAGE_GUESS;

	if (!pow2(p->sq_entries) || p->sq_entries > MAX_SQ_ENTRIES || !pow2(p->cq_entries) ||
	    p->cq_entries > MAX_CQ_ENTRIES)
		return 0;
	/* Every header field lies within the first page. */
	if (p->sq_off.head >= hdr_max || p->sq_off.tail >= hdr_max ||
	    p->sq_off.ring_mask >= hdr_max || p->sq_off.ring_entries >= hdr_max ||
	    p->cq_off.head >= hdr_max || p->cq_off.tail >= hdr_max ||
	    p->cq_off.ring_mask >= hdr_max || p->cq_off.ring_entries >= hdr_max ||
	    p->cq_off.cqes >= hdr_max || (p->cq_off.cqes & 7) || (p->sq_off.array & 3) ||
	    ((p->sq_off.head | p->sq_off.tail | p->cq_off.head | p->cq_off.tail) & 3))
		return 0;
	if (!(p->flags & KIO_SETUP_NO_SQARRAY) && !p->sq_off.array)
		return 0;
	return 1;
}

static void set_shifts(struct iour__ring *r, uint32_t flags)
{
	r->sqe_shift = (flags & KIO_SETUP_SQE128) ? 1 : 0;
	r->cqe_shift = (flags & KIO_SETUP_CQE32) ? 1 : 0;
}

int iour__ring_init(struct iour__ring *r, uint32_t entries, uint32_t flags)
{
	struct kio_params p;
	long fd;
	int rc;

	if (!r)
		return -EINVAL;
	ring_reset(r);
	if (!entries || entries > MAX_SQ_ENTRIES)
		return -EINVAL;
	rc = check_flags(flags, IOUR__RING_INIT_FLAGS);
	if (rc)
		return rc;
	if ((flags & KIO_SETUP_DEFER_TASKRUN) && !(flags & KIO_SETUP_SINGLE_ISSUER))
		return -EINVAL; /* the kernel's own rule, checked before the syscall */

	memset(&p, 0, sizeof(p));
	p.flags = flags;
	fd = iour__setup(entries, &p);
	if (fd < 0)
		return (int)fd;
	r->fd = (int)fd;
	r->owns_fd = true;
	r->flags = flags;
	r->features = p.features;
	set_shifts(r, flags);
	rc = ring_map(r, r->fd, &p);
	if (rc) {
		iour__ring_exit(r);
		return rc == -EOPNOTSUPP ? -IOUR_ERRNO__KERNEL_MISMATCH : rc;
	}
	return 0;
}

int iour__ring_from_fd(struct iour__ring *r, int fd, const struct kio_params *p)
{
	int rc;

	if (!r)
		return -EINVAL;
	ring_reset(r);
	if (!p || fd < 0)
		return -EINVAL;
	rc = check_flags(p->flags, IOUR__RING_ADOPT_FLAGS);
	if (rc)
		return rc;
	if (!geometry_ok(p))
		return -EINVAL;
	r->fd = fd;
	r->owns_fd = false;
	r->flags = p->flags;
	r->features = p->features;
	set_shifts(r, p->flags);
	rc = ring_map(r, fd, p);
	if (rc) {
		iour__ring_exit(r);
		return rc;
	}
	return 0;
}

void iour__ring_exit(struct iour__ring *r)
{
	if (!r)
		return;
	ring_unmap(r);
	if (r->owns_fd && r->fd >= 0)
		iour__close(r->fd);
	ring_reset(r);
}

/*
 * The io_rings layouts, used only when a twin ring cannot be created (a
 * seccomp companion refusing io_uring_setup, for example); doc/kernel.md
 * "Ring header layouts".  line 0: the compact layout (measured on 6.12 and
 * 6.18: sq head 0, tail 4, cq head 8, tail 12, masks 16/20, entries 24/28,
 * dropped 32, sq flags 36, cq flags 40, overflow 44, cqes 64).  line L > 0:
 * the older layout where each head and tail sits on its own L-byte cache
 * line (measured on 5.10 and 6.1 with L = 64): heads and tails at 0, L, 2L,
 * 3L, the same eight words from 4L, cqes at 5L.  The SQ array follows the
 * CQEs, aligned to the line (64 for the compact layout).  ring_map() and
 * iour__ring_learn() check the mapped header against the layout chosen.
 */
static void known_layout(struct kio_params *p, uint32_t flags, uint32_t line)
{
	uint32_t l = line ? line : 4, w = line ? 4 * line : 16, al = line ? line : 64;
	size_t cqes_end;

	memset(&p->sq_off, 0, sizeof(p->sq_off));
	memset(&p->cq_off, 0, sizeof(p->cq_off));
	p->sq_off.head = 0;
	p->sq_off.tail = l;
	p->cq_off.head = 2 * l;
	p->cq_off.tail = 3 * l;
	p->sq_off.ring_mask = w;
	p->cq_off.ring_mask = w + 4;
	p->sq_off.ring_entries = w + 8;
	p->cq_off.ring_entries = w + 12;
	p->sq_off.dropped = w + 16;
	p->sq_off.flags = w + 20;
	p->cq_off.flags = w + 24;
	p->cq_off.overflow = w + 28;
	p->cq_off.cqes = line ? 5 * line : 64;
	cqes_end =
		p->cq_off.cqes + (size_t)p->cq_entries * (sizeof(struct kio_cqe)
							  << ((flags & KIO_SETUP_CQE32) ? 1 : 0));
	if (!(flags & KIO_SETUP_NO_SQARRAY))
		p->sq_off.array = (uint32_t)((cqes_end + al - 1) & ~(size_t)(al - 1));
	p->features = KIO_FEAT_SINGLE_MMAP;
}

/* The layouts tried, compact first; cache lines of 64, 128 and 256 bytes. */
static const uint32_t known_lines[] = { 0, 64, 128, 256 };

/* Whether the header mapped at m reads as a consistent ring in layout p:
 * power-of-two entries, masks one less, at least as many CQEs as SQEs. */
static int header_consistent(void *m, const struct kio_params *p, uint32_t *sq, uint32_t *cq)
{
	uint32_t s, c, sm, cm;

	s = *(uint32_t *)off_ptr(m, p->sq_off.ring_entries);
	sm = *(uint32_t *)off_ptr(m, p->sq_off.ring_mask);
	c = *(uint32_t *)off_ptr(m, p->cq_off.ring_entries);
	cm = *(uint32_t *)off_ptr(m, p->cq_off.ring_mask);
	if (!pow2(s) || s > MAX_SQ_ENTRIES || sm != s - 1 || !pow2(c) || c > MAX_CQ_ENTRIES ||
	    cm != c - 1 || c < s)
		return 0;
	*sq = s;
	*cq = c;
	return 1;
}

/* A disabled twin ring with the given sizes and layout flags: the kernel
 * reports the offsets it uses for such a ring.  0 or the setup -errno. */
static int twin_params(uint32_t sq, uint32_t cq, uint32_t flags, struct kio_params *out)
{
	struct kio_params p;
	long fd;

	memset(&p, 0, sizeof(p));
	p.flags = (flags & IOUR__RING_LAYOUT_FLAGS) | KIO_SETUP_R_DISABLED;
	if (cq) {
		p.flags |= KIO_SETUP_CQSIZE;
		p.cq_entries = cq;
	}
	fd = iour__setup(sq, &p);
	if (fd < 0)
		return (int)fd;
	iour__close((int)fd);
	*out = p;
	return 0;
}

int iour__ring_learn(int fd, uint32_t flags, struct kio_params *p)
{
	char path[64], link[64];
	struct kio_params hdr;
	uint32_t sq = 0, cq = 0, line = 0;
	int ok = 0, twin, rc;
	ssize_t n;
	size_t i;
	void *m = NULL;
	long mrc;

	if (!p || fd < 0)
		return -EINVAL;
	rc = check_flags(flags, IOUR__RING_ADOPT_FLAGS);
	if (rc)
		return rc;
	if (fcntl(fd, F_GETFD) < 0)
		return -EBADF;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, link, sizeof(link) - 1);
	if (n >= 0) {
		link[n] = '\0';
		if (strcmp(link, "anon_inode:[io_uring]") != 0)
			return -ENOTTY;
	}

	/* Where the header fields are: from a one-entry twin, else the first
	 * known layout the mapped header is consistent with. */
	memset(&hdr, 0, sizeof(hdr));
	twin = twin_params(1, 0, flags, &hdr) == 0;
	mrc = iour__mmap(&m, PAGE_GUESS, PROT_READ, MAP_SHARED, fd, (off_t)KIO_OFF_SQ_RING);
	if (mrc < 0)
		return mrc == -ENODEV || mrc == -EACCES ? -ENOTTY : (int)mrc;
	if (twin) {
		ok = header_consistent(m, &hdr, &sq, &cq);
	} else {
		for (i = 0; !ok && i < sizeof(known_lines) / sizeof(known_lines[0]); i++) {
			line = known_lines[i];
			hdr.sq_entries = 1;
			hdr.cq_entries = 2;
			known_layout(&hdr, flags, line);
			ok = header_consistent(m, &hdr, &sq, &cq);
		}
	}
	iour__munmap(m, PAGE_GUESS);
	if (!ok)
		return -ENOTTY;

	memset(p, 0, sizeof(*p));
	if (!twin || twin_params(sq, cq, flags, p) != 0) {
		memset(p, 0, sizeof(*p));
		p->sq_entries = sq;
		p->cq_entries = cq;
		known_layout(p, flags, line);
	}
	p->flags = flags;
	if (p->sq_entries != sq || p->cq_entries != cq)
		return -IOUR_ERRNO__KERNEL_MISMATCH;
	return 0;
}

static uint32_t load_acq(const uint32_t *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static void store_rel(uint32_t *p, uint32_t v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

int iour__ring_submit_one(struct iour__ring *r, const struct kio_sqe *sqe, struct kio_cqe *cqe_out)
{
	uint32_t head, tail, slot, chead;
	struct kio_sqe *dst;
	uint64_t ud;
	long ret;

	if (!r || !sqe || !cqe_out || !r->sq_map || r->fd < 0)
		return -EINVAL;

	head = load_acq(r->sq_head);
	tail = load_acq(r->sq_tail);
	if (head != tail)
		return -EBUSY;
	if (load_acq(r->cq_tail) != load_acq(r->cq_head))
		return -EBUSY;

	/*
	 * With an SQ array the kernel reads the slot the array names, so slot 0
	 * is always used: it sits at offset 0 whatever the SQE size.  Without
	 * the array the slot is the tail position.
	 */
	if (r->sq_array) {
		slot = 0;
		r->sq_array[tail & r->sq_mask] = 0;
	} else {
		slot = tail & r->sq_mask;
	}
	dst = (struct kio_sqe *)((uint8_t *)r->sqes_map +
				 ((size_t)slot * sizeof(*dst) << r->sqe_shift));
	memset(dst, 0, sizeof(*dst) << r->sqe_shift);
	memcpy(dst, sqe, sizeof(*dst));
	ud = UD_MAGIC | (++r->seq & 0xffffffffULL);
	dst->user_data = ud;
	store_rel(r->sq_tail, tail + 1);

	for (;;) {
		ret = iour__enter(r->fd, 1, 1, KIO_ENTER_GETEVENTS, NULL, 0);
		if (ret == -EINTR && load_acq(r->sq_head) == head)
			continue; /* interrupted before anything was consumed */
		break;
	}
	if (load_acq(r->sq_head) == head) {
		/* Not consumed (disabled ring, enter denied, ...): take it back so
		 * nobody's later enter submits it. */
		store_rel(r->sq_tail, tail);
		return ret < 0 ? (int)ret : -EAGAIN;
	}

	for (;;) {
		chead = load_acq(r->cq_head);
		if (load_acq(r->cq_tail) != chead) {
			const struct kio_cqe *c =
				(const struct kio_cqe *)(r->cqes + (((size_t)(chead & r->cq_mask) *
								     sizeof(*c))
								    << r->cqe_shift));

			if (c->user_data != ud)
				return -EBUSY;
			*cqe_out = *c;
			cqe_out->user_data = sqe->user_data;
			store_rel(r->cq_head, chead + 1);
			return 0;
		}
		ret = iour__enter(r->fd, 0, 1, KIO_ENTER_GETEVENTS, NULL, 0);
		if (ret < 0 && ret != -EINTR)
			return (int)ret;
	}
}
