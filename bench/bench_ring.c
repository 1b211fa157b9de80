/* SPDX-License-Identifier: MIT */
/*
 * Ring benchmark: what a restricted ring costs compared with a plain one,
 * and what the probe costs.
 *
 * ring.setup_ratio  median time to get a ready restricted ring
 *                   (iour_ring_create + mapping it with liburing) divided by
 *                   the median time of a plain io_uring_queue_init(), same
 *                   entries, the two interleaved;
 * ring.nop_ratio    NOP throughput of a restricted ring (NOP allowed) divided
 *                   by that of an unrestricted ring (batched submissions,
 *                   median over interleaved rounds);
 * probe.first_us    the process's first iour_probe(): a full probe, plus
 *                   what a fresh process pays once (one sample per run;
 *                   compare runs by their median);
 * probe.cold_us     a full probe (forked child and all probing calls; median
 *                   of uncached probes);
 * probe.cached_ns   a cached iour_probe() call;
 * probe.cold_forks, probe.cold_seam_calls
 *                   the processes one uncached probe forks and the kernel
 *                   calls it makes through the library's syscall seam
 *                   (lib/base/sys.h: io_uring_*, prctl, seccomp, close of
 *                   io_uring fds, mmap, munmap, fork, memfd_create,
 *                   execve), the forked children's included (counters in
 *                   shared memory): counts, so that a regression shows
 *                   whatever the machine's load.  The seam does not see
 *                   the library's other calls (doc/design.md, "One syscall
 *                   seam").
 *
 * Usage: bench_ring OUTPUT.json
 */
#include <errno.h>
#include <liburing.h>
#include <sys/mman.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "iouring_restrict/iouring_restrict.h"
#include "base/sys.h"

#define ENTRIES 64
#define SETUP_ITERS 1500
#define NOP_BATCH 32
#define NOP_BATCHES 1500
#define NOP_ROUNDS 25
#define COLD_ITERS 41
#define CACHED_ITERS 2000000

/* ---- counting seam: every call forwarded to the real kernel ---- */
struct seam_counts {
	uint64_t forks, calls;
};
static struct seam_counts *counts; /* MAP_SHARED: children count too */
static const struct iour_sys_ops *real_ops;

#define COUNT() __atomic_add_fetch(&counts->calls, 1, __ATOMIC_RELAXED)

static long c_setup(void *ctx, uint32_t e, void *p)
{
	(void)ctx;
	COUNT();
	return real_ops->io_uring_setup(real_ops->ctx, e, p);
}

static long c_enter(void *ctx, int fd, uint32_t s, uint32_t m, uint32_t f, const void *a,
		    size_t n)
{
	(void)ctx;
	COUNT();
	return real_ops->io_uring_enter(real_ops->ctx, fd, s, m, f, a, n);
}

static long c_register(void *ctx, int fd, uint32_t op, void *arg, uint32_t nr)
{
	(void)ctx;
	COUNT();
	return real_ops->io_uring_register(real_ops->ctx, fd, op, arg, nr);
}

static long c_prctl(void *ctx, int o, unsigned long a2, unsigned long a3, unsigned long a4,
		    unsigned long a5)
{
	(void)ctx;
	COUNT();
	return real_ops->prctl(real_ops->ctx, o, a2, a3, a4, a5);
}

static long c_seccomp(void *ctx, unsigned int op, unsigned int flags, void *args)
{
	(void)ctx;
	COUNT();
	return real_ops->seccomp(real_ops->ctx, op, flags, args);
}

static long c_close(void *ctx, int fd)
{
	(void)ctx;
	COUNT();
	return real_ops->close(real_ops->ctx, fd);
}

static long c_mmap(void *ctx, void **out, size_t len, int prot, int flags, int fd, off_t off)
{
	(void)ctx;
	COUNT();
	return real_ops->mmap(real_ops->ctx, out, len, prot, flags, fd, off);
}

static long c_munmap(void *ctx, void *addr, size_t len)
{
	(void)ctx;
	COUNT();
	return real_ops->munmap(real_ops->ctx, addr, len);
}

static long c_fork(void *ctx)
{
	(void)ctx;
	COUNT();
	__atomic_add_fetch(&counts->forks, 1, __ATOMIC_RELAXED);
	return real_ops->fork(real_ops->ctx);
}

static long c_memfd(void *ctx, const char *name, unsigned int flags)
{
	(void)ctx;
	COUNT();
	return real_ops->memfd_create(real_ops->ctx, name, flags);
}

static long c_execve(void *ctx, const char *path, char *const argv[], char *const envp[])
{
	(void)ctx;
	COUNT();
	return real_ops->execve(real_ops->ctx, path, argv, envp);
}

static const struct iour_sys_ops counting_ops = {
	.io_uring_setup = c_setup,
	.io_uring_enter = c_enter,
	.io_uring_register = c_register,
	.prctl = c_prctl,
	.seccomp = c_seccomp,
	.close = c_close,
	.mmap = c_mmap,
	.munmap = c_munmap,
	.fork = c_fork,
	.memfd_create = c_memfd,
	.execve = c_execve,
};

static void die(const char *what, int r);

/* One uncached probe through the counting seam (the process's first: its
 * time in *ns). */
static struct seam_counts count_probe(uint64_t *ns)
{
	IOUR_OPTS(iour_probe_opts, nocache, .flags = IOUR_PROBE_NO_CACHE);
	struct iour_features f = { .sz = sizeof(f) };
	struct seam_counts r;
	int rc;

	counts = mmap(NULL, sizeof(*counts), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1,
		      0);
	if (counts == MAP_FAILED)
		die("mmap", -errno);
	memset(counts, 0, sizeof(*counts));
	real_ops = iour__sys_real();
	iour__sys_set(&counting_ops);
	*ns = bench_now_ns();
	rc = iour_probe(&nocache, &f);
	*ns = bench_now_ns() - *ns;
	iour__sys_set(NULL);
	if (rc)
		die("iour_probe (counted)", rc);
	r = *counts;
	munmap(counts, sizeof(*counts));
	return r;
}

static void die(const char *what, int r)
{
	fprintf(stderr, "bench_ring: %s: %s\n", what, iour_errname(r));
	exit(1);
}

static uint64_t time_plain_setup(void)
{
	struct io_uring ring;
	uint64_t t0, t1;
	int r;

	t0 = bench_now_ns();
	r = io_uring_queue_init(ENTRIES, &ring, 0);
	t1 = bench_now_ns();
	if (r)
		die("io_uring_queue_init", r);
	io_uring_queue_exit(&ring);
	return t1 - t0;
}

static uint64_t time_restricted_setup(const struct iour_ruleset *rs)
{
	struct io_uring_params p;
	struct io_uring ring;
	uint64_t t0, t1;
	unsigned i;
	int r, fd;

	t0 = bench_now_ns();
	memset(&p, 0, sizeof(p));
	r = iour_ring_create(ENTRIES, &p, rs, NULL, &fd);
	if (!r)
		r = io_uring_queue_mmap(fd, &p, &ring);
	/* liburing 2.3 fills the SQ index array only in queue_init. */
	for (i = 0; !r && i < ring.sq.ring_entries; i++)
		ring.sq.array[i] = i;
	t1 = bench_now_ns();
	if (r)
		die("iour_ring_create", r);
	io_uring_queue_exit(&ring);
	return t1 - t0;
}

/* NOPs per second on `ring`, NOP_BATCHES batches of NOP_BATCH. */
static double nop_rate(struct io_uring *ring)
{
	struct io_uring_cqe *cqes[NOP_BATCH];
	uint64_t t0, t1;
	unsigned got, k;
	int b, i, r;

	t0 = bench_now_ns();
	for (b = 0; b < NOP_BATCHES; b++) {
		for (i = 0; i < NOP_BATCH; i++)
			io_uring_prep_nop(io_uring_get_sqe(ring));
		r = io_uring_submit_and_wait(ring, NOP_BATCH);
		if (r != NOP_BATCH)
			die("io_uring_submit_and_wait", r < 0 ? r : -EPROTO);
		for (got = 0; got < NOP_BATCH;) {
			k = io_uring_peek_batch_cqe(ring, cqes, NOP_BATCH);
			for (unsigned j = 0; j < k; j++)
				if (cqes[j]->res != 0)
					die("NOP completion", cqes[j]->res);
			io_uring_cq_advance(ring, k);
			got += k;
		}
	}
	t1 = bench_now_ns();
	return (double)NOP_BATCHES * NOP_BATCH * 1e9 / (double)(t1 - t0);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	static uint64_t plain[SETUP_ITERS], restricted[SETUP_ITERS], cold[COLD_ITERS];
	double ratios[NOP_ROUNDS], rate_r = 0, rate_p = 0;
	IOUR_OPTS(iour_probe_opts, nocache, .flags = IOUR_PROBE_NO_CACHE);
	struct iour_features f = { .sz = sizeof(f) };
	struct iour_ruleset *rs = NULL;
	struct io_uring_params p;
	struct io_uring ring_r, ring_p;
	double setup_ratio, nop_ratio, cold_us, cached_ns, med_r, med_p;
	struct seam_counts pc;
	uint64_t t0, t1, first;
	FILE *out;
	int i, r, fd;

	if (argc != 2) {
		fprintf(stderr, "usage: %s OUTPUT.json\n", argv[0]);
		return 2;
	}

	/* probe: what one uncached probe does, counted; the full (uncached)
	 * probe timed; then the cached call */
	pc = count_probe(&first);
	for (i = 0; i < COLD_ITERS; i++) {
		t0 = bench_now_ns();
		r = iour_probe(&nocache, &f);
		t1 = bench_now_ns();
		if (r)
			die("iour_probe", r);
		cold[i] = t1 - t0;
	}
	cold_us = bench_median(cold, COLD_ITERS) / 1e3;
	if ((r = iour_probe(NULL, &f)))
		die("iour_probe", r);
	t0 = bench_now_ns();
	for (i = 0; i < CACHED_ITERS; i++)
		r |= iour_probe(NULL, &f);
	t1 = bench_now_ns();
	if (r)
		die("iour_probe (cached)", r);
	cached_ns = (double)(t1 - t0) / CACHED_ITERS;
	if (f.level < IOUR_LEVEL_RING) {
		fprintf(stderr, "bench_ring: the kernel cannot restrict rings (level %u)\n", f.level);
		return 1;
	}

	/* the set: NOP only, no flags, register side left open */
	if ((r = iour_ruleset__new(NULL, &rs)) || (r = iour_ruleset__allow_sqe_op_name(rs, "NOP")) ||
	    (r = iour_ruleset__set_sqe_flags(rs, 0, 0)))
		die("ruleset", r);

	/* setup, interleaved; a few warm-up rounds first */
	for (i = 0; i < 50; i++) {
		time_plain_setup();
		time_restricted_setup(rs);
	}
	for (i = 0; i < SETUP_ITERS; i++) {
		if (i & 1) {
			restricted[i] = time_restricted_setup(rs);
			plain[i] = time_plain_setup();
		} else {
			plain[i] = time_plain_setup();
			restricted[i] = time_restricted_setup(rs);
		}
	}
	med_r = bench_median(restricted, SETUP_ITERS);
	med_p = bench_median(plain, SETUP_ITERS);
	setup_ratio = med_r / med_p;

	/* NOP throughput, interleaved rounds on two long-lived rings */
	memset(&p, 0, sizeof(p));
	if ((r = iour_ring_create(ENTRIES, &p, rs, NULL, &fd)) || (r = io_uring_queue_mmap(fd, &p, &ring_r)))
		die("iour_ring_create", r);
	for (unsigned k = 0; k < ring_r.sq.ring_entries; k++)
		ring_r.sq.array[k] = k;
	if ((r = io_uring_queue_init(ENTRIES, &ring_p, 0)))
		die("io_uring_queue_init", r);
	nop_rate(&ring_r);
	nop_rate(&ring_p);
	for (i = 0; i < NOP_ROUNDS; i++) {
		double a, b;

		if (i & 1) {
			a = nop_rate(&ring_r);
			b = nop_rate(&ring_p);
		} else {
			b = nop_rate(&ring_p);
			a = nop_rate(&ring_r);
		}
		ratios[i] = a / b;
		rate_r += a / NOP_ROUNDS;
		rate_p += b / NOP_ROUNDS;
	}
	qsort(ratios, NOP_ROUNDS, sizeof(ratios[0]), cmp_double);
	nop_ratio = ratios[NOP_ROUNDS / 2];
	io_uring_queue_exit(&ring_r);
	io_uring_queue_exit(&ring_p);
	iour_ruleset__free(rs);

	printf("ring setup  (%d entries, %d interleaved pairs): restricted %.1f us, plain %.1f us, "
	       "ratio %.3f (goal <= 1.5)\n",
	       ENTRIES, SETUP_ITERS, med_r / 1e3, med_p / 1e3, setup_ratio);
	printf("NOP rate    (batches of %d, %d rounds): restricted %.2f M/s, plain %.2f M/s, "
	       "median ratio %.4f (goal >= 0.98)\n",
	       NOP_BATCH, NOP_ROUNDS, rate_r / 1e6, rate_p / 1e6, nop_ratio);
	printf("probe       first %.1f us, cold %.1f us (median of %d uncached probes), cached %.1f ns\n",
	       (double)first / 1e3, cold_us, COLD_ITERS, cached_ns);
	printf("probe       cold: %llu forks, %llu calls through the syscall seam\n",
	       (unsigned long long)pc.forks, (unsigned long long)pc.calls);

	out = fopen(argv[1], "w");
	if (!out) {
		perror(argv[1]);
		return 1;
	}
	fprintf(out,
		"{\"ring\": {\"setup_ratio\": %.4f, \"nop_ratio\": %.4f}, "
		"\"probe\": {\"first_us\": %.1f, \"cold_us\": %.1f, \"cached_ns\": %.2f, "
		"\"cold_forks\": %llu, \"cold_seam_calls\": %llu}}\n",
		setup_ratio, nop_ratio, (double)first / 1e3, cold_us, cached_ns,
		(unsigned long long)pc.forks, (unsigned long long)pc.calls);
	fclose(out);
	return 0;
}
