/* SPDX-License-Identifier: MIT */
/*
 * Ring broker benchmark (include/iouring_restrict/broker.h): what a ring
 * served by the broker costs compared with one the program creates itself.
 *
 * broker.setup_ratio  median time of io_uring_queue_init() in a confined
 *                     child (the broker, a thread of this process, builds
 *                     and restricts the ring) divided by the median time of
 *                     the same call made directly by this unconfined
 *                     process; the two interleaved, one call each in turn;
 * broker.nop_ratio    NOP throughput of a brokered ring divided by that of
 *                     an unrestricted ring of the same size, both created
 *                     and driven by the child (the unrestricted one just
 *                     before it installed the broker's filter), interleaved
 *                     rounds;
 * broker.read_ratio   the same for 4 KiB READs of a page-cached file.
 *
 * Usage: bench_broker OUTPUT.json
 */
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_util.h"
#include "iouring_restrict/iouring_restrict.h"
#include "scm.h"

#define ENTRIES 64
#define SETUP_ITERS 400
#define BATCH 32
#define BATCHES 1000
#define ROUNDS 15

static void die(const char *what, int r)
{
	fprintf(stderr, "bench_broker: %s: %s\n", what, iour_errname(r));
	exit(1);
}

static uint64_t time_setup(void)
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

/* Requests per second: BATCHES batches of BATCH NOPs or 4 KiB READs. */
static double rate(struct io_uring *ring, int file, char *buf)
{
	struct io_uring_cqe *cqes[BATCH];
	uint64_t t0, t1;
	unsigned got, k;

	t0 = bench_now_ns();
	for (int b = 0; b < BATCHES; b++) {
		for (int i = 0; i < BATCH; i++) {
			struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

			if (file >= 0)
				io_uring_prep_read(sqe, file, buf + (size_t)i * 4096, 4096, 0);
			else
				io_uring_prep_nop(sqe);
		}
		if (io_uring_submit_and_wait(ring, BATCH) != BATCH)
			die("io_uring_submit_and_wait", -EPROTO);
		for (got = 0; got < BATCH;) {
			k = io_uring_peek_batch_cqe(ring, cqes, BATCH);
			for (unsigned j = 0; j < k; j++)
				if (cqes[j]->res < 0)
					die("completion", cqes[j]->res);
			io_uring_cq_advance(ring, k);
			got += k;
		}
	}
	t1 = bench_now_ns();
	return (double)BATCHES * BATCH * 1e9 / (double)(t1 - t0);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Median over interleaved rounds of rate(brokered) / rate(plain). */
static double ratio(struct io_uring *brokered, struct io_uring *plain, int file, char *buf)
{
	double r[ROUNDS];

	rate(brokered, file, buf);
	rate(plain, file, buf);
	for (int i = 0; i < ROUNDS; i++) {
		double a, b;

		if (i & 1) {
			a = rate(brokered, file, buf);
			b = rate(plain, file, buf);
		} else {
			b = rate(plain, file, buf);
			a = rate(brokered, file, buf);
		}
		r[i] = a / b;
	}
	qsort(r, ROUNDS, sizeof(r[0]), cmp_double);
	return r[ROUNDS / 2];
}

static void *serve(void *arg)
{
	struct iour_broker *b = arg;

	while (iour_broker__serve(b) == 0)
		;
	return NULL;
}

/* The confined child: one brokered setup per byte on `go`, its time back
 * on `sv`; then the throughput ratios. */
static void child(int sv, int go, int file)
{
	static char buf[BATCH * 4096] __attribute__((aligned(4096)));
	struct io_uring brokered, plain;
	double res[2];
	uint64_t t;
	char c;
	int lfd = -1, r;

	if ((r = io_uring_queue_init(ENTRIES, &plain, 0)))
		die("io_uring_queue_init", r);
	if ((r = iour_broker__install(NULL, &lfd)) || send_fds(sv, &lfd, 1))
		die("iour_broker__install", r);
	close(lfd);
	while (read(go, &c, 1) == 1 && c == 's') {
		t = time_setup();
		if (write(sv, &t, sizeof(t)) != sizeof(t))
			_exit(1);
	}
	if ((r = io_uring_queue_init(ENTRIES, &brokered, 0)))
		die("brokered io_uring_queue_init", r);
	res[0] = ratio(&brokered, &plain, -1, buf);
	res[1] = ratio(&brokered, &plain, file, buf);
	if (write(sv, res, sizeof(res)) != sizeof(res))
		_exit(1);
	_exit(0);
}

int main(int argc, char **argv)
{
	static uint64_t direct[SETUP_ITERS], brokered[SETUP_ITERS];
	struct iour_ruleset *rs = NULL;
	struct iour_policy *pol = NULL;
	struct iour_plan *plan = NULL;
	struct iour_broker *b = NULL;
	struct iour_broker_counters cnt = { .sz = sizeof(cnt) };
	pthread_t th;
	double res[2], setup_ratio;
	char page[4096];
	int sv[2], go[2], file, lfd, st, r;
	pid_t pid;
	FILE *out;

	if (argc != 2) {
		fprintf(stderr, "usage: %s OUTPUT.json\n", argv[0]);
		return 2;
	}
	if (iour_feature_level() < IOUR_LEVEL_RING) {
		fprintf(stderr, "bench_broker: the kernel cannot restrict rings\n");
		return 1;
	}
	/* The ring set: NOP and READ. */
	if ((r = iour_ruleset__new(NULL, &rs)) || (r = iour_ruleset__allow_sqe_op_name(rs, "NOP")) ||
	    (r = iour_ruleset__allow_sqe_op_name(rs, "READ")) ||
	    (r = iour_ruleset__set_sqe_flags(rs, 0, 0)) || (r = iour_policy__new(NULL, &pol)) ||
	    (r = iour_policy__set_ruleset(pol, rs)) ||
	    (r = iour_policy__set_attr(pol, IOUR_POLICY_ATTR_TARGET, IOUR_POLICY_TARGET_RING)) ||
	    (r = iour_policy__plan(pol, NULL, &plan)))
		die("the plan", r);

	/* A page-cached file for the READs. */
	file = memfd_create("bench-broker", MFD_CLOEXEC);
	memset(page, 'x', sizeof(page));
	for (int i = 0; i < BATCH; i++)
		if (file < 0 || write(file, page, sizeof(page)) != sizeof(page))
			die("memfd", -errno);
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) || pipe(go))
		die("socketpair", -errno);
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		die("fork", -errno);
	if (pid == 0) {
		close(sv[0]);
		close(go[1]);
		child(sv[1], go[0], file);
	}
	close(sv[1]);
	close(go[0]);
	lfd = recv_one_fd(sv[0]);
	if (lfd < 0 || (r = iour_broker__new(plan, lfd, NULL, &b)))
		die("iour_broker__new", lfd < 0 ? -EPROTO : r);
	if (pthread_create(&th, NULL, serve, b))
		die("pthread_create", -EAGAIN);

	/* setup: direct here, brokered in the child, one each in turn */
	for (int i = -20; i < SETUP_ITERS; i++) {
		uint64_t d = 0, t = 0;

		if (i & 1)
			d = time_setup();
		if (write(go[1], "s", 1) != 1 || read(sv[0], &t, sizeof(t)) != sizeof(t))
			die("the confined child", -EPIPE);
		if (!(i & 1))
			d = time_setup();
		if (i >= 0) {
			direct[i] = d;
			brokered[i] = t;
		}
	}
	setup_ratio = bench_median(brokered, SETUP_ITERS) / bench_median(direct, SETUP_ITERS);
	printf("broker setup (%d entries, %d interleaved pairs): brokered %.1f us, direct %.1f us, "
	       "ratio %.2f (aim < 20)\n",
	       ENTRIES, SETUP_ITERS, bench_median(brokered, SETUP_ITERS) / 1e3,
	       bench_median(direct, SETUP_ITERS) / 1e3, setup_ratio);
	if (write(go[1], "t", 1) != 1 || read(sv[0], res, sizeof(res)) != sizeof(res))
		die("the confined child", -EPIPE);
	waitpid(pid, &st, 0);
	pthread_join(th, NULL);
	iour_broker__counters(b, &cnt);
	printf("broker NOP  (batches of %d, %d rounds): median ratio %.4f (goal >= 0.98)\n", BATCH,
	       ROUNDS, res[0]);
	printf("broker READ (4 KiB, batches of %d, %d rounds): median ratio %.4f (goal >= 0.98)\n",
	       BATCH, ROUNDS, res[1]);
	printf("broker served %llu rings, refused %llu\n", (unsigned long long)cnt.served,
	       (unsigned long long)cnt.refused);
	if (!WIFEXITED(st) || WEXITSTATUS(st) || cnt.refused)
		die("the confined child failed", -EPROTO);

	out = fopen(argv[1], "w");
	if (!out) {
		perror(argv[1]);
		return 1;
	}
	fprintf(out,
		"{\"broker\": {\"setup_ratio\": %.4f, \"nop_ratio\": %.4f, \"read_ratio\": %.4f}}\n",
		setup_ratio, res[0], res[1]);
	fclose(out);
	iour_broker__free(b);
	iour_plan__free(plan);
	iour_policy__free(pol);
	iour_ruleset__free(rs);
	return 0;
}
