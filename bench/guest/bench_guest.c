/* SPDX-License-Identifier: MIT */
/*
 * The cost of io_uring restrictions and argument filters on a real kernel
 * (doc/design.md, "The cost of a filter in the 7.x guest"), side by side in
 * one run.  Five configurations, each in its own forked child, because
 * task restrictions and filters cannot be removed once set:
 *
 *  none     no restriction (the baseline);
 *  allow    the task allow-list NOP and READ (a classic task set);
 *  filter   a 4-instruction task filter on NOP and on READ (denies one
 *           user_data value);
 *  set1000  a task filter "user_data in a set of 1,000 values -> deny",
 *           compiled by the library, the requests taking its longest path;
 *  stack4   4 stacked 4-instruction task filters on NOP and on READ (the
 *           library's plan registers the first, the same step's bytes
 *           register the other three);
 *  denylist a CONNECT deny-list of 100,000 random IPv4 addresses in
 *           127.0.0.0/8 (4,000 in the quick mode), compiled by the library
 *           into stacked programs (Linux 7.2+, level 5).  Its timed
 *           requests are CONNECTs to a closed port of 127.0.0.1, which is
 *           not listed: every stacked program runs and lets it through,
 *           and each completes with -ECONNREFUSED; the baseline (none)
 *           times the same CONNECTs.  The listed addresses are loopback
 *           ones, so a deny-list not in force would connect nowhere
 *           outside the guest either.
 *
 * Each child applies its restriction, then checks that it is in force: its
 * denied requests complete with -EACCES, its allowed ones succeed.  The
 * instructions the filters execute per timed request are counted with the
 * library's simulator (iour_cbpf_run) on the request's context, summed
 * over the opcode's stacked programs, and checked against what the
 * programs imply (3 per 4-instruction filter, the set's longest path).
 *
 * Default (quick) mode: the checks and a few requests per configuration,
 * for the guests of make check-kernels and for make check on the host;
 * before Linux 7.0 the restricted configurations skip, saying why, and
 * only the simulator counts and the baseline run.  Last line "N passed,
 * M failed, K skipped".
 *
 * --bench: also the timing: REPS rounds (default 11), each asking every child in turn
 * for a batch of NOPs then a batch of READs (4 KiB of a cached tmpfs
 * file), so drift spreads over all configurations; medians.  It prints one
 * line "BENCH_GUEST_JSON {...}" with guest.<config>.{nop,read}_kops
 * (thousand requests per second), guest.<config>_{nop,read}_ratio
 * (throughput over the baseline's: 1 = free, 0.5 = half),
 * guest.<config>.cbpf_insns_{nop,read} and a label: under qemu's TCG these
 * are emulated timings, only the ratios mean anything.  Needs level 4
 * (fails otherwise).  Nothing is asserted on time.
 *
 * Usage: bench_guest [--bench [REPS]]
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mini_ring.h"

#define OP_NOP 0
#define OP_READ 22
#define OP_WRITE 23
#define OP_CONNECT 16
#define NDENY_BENCH 100000
#define NDENY_QUICK 4000
#define DENY_UD 0xdea0U /* user_data the 4-instruction filters deny (+k for stack k) */
#define OK_UD 1U        /* user_data of the timed requests (allowed) */
#define NSET 1000
#define BATCH 32
#define READ_SZ 4096
#define NCFG 6

enum cfg { C_NONE, C_ALLOW, C_FILTER, C_SET, C_STACK, C_DENY };
static const char *const cfg_name[NCFG] = { "none",	"allowlist", "filter",
					    "set1000", "stack4",	 "denylist" };

static uint64_t set_vals[NSET];
static uint64_t worst_ud; /* user_data on the set filter's longest allowed path */
static int read_fd = -1;
static char read_buf[BATCH][READ_SZ];
static uint64_t *deny_vals; /* the deny-list, IPv4 addresses in host order */
static size_t ndeny;
static struct sockaddr_in conn_addr; /* 127.0.0.1, a closed port */
static int conn_fds[BATCH] = { -1 };
static int conn_ok;	     /* loopback is up and conn_addr refuses */

/* "ld user_data (low word); jeq #ud, deny; allow": 4 instructions, 3 run. */
static void prog4(struct iour_insn *p, uint32_t ud)
{
	p[0] = (struct iour_insn){ 0x20, 0, 0, 0 };
	p[1] = (struct iour_insn){ 0x15, 0, 1, ud };
	p[2] = (struct iour_insn){ 0x06, 0, 0, 0 };
	p[3] = (struct iour_insn){ 0x06, 0, 0, 1 };
}

static uint64_t rng = 0x9e3779b97f4a7c15ULL;
static uint32_t rnd32(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)rng;
}

/* ---- the policies ---- */

static int policy_new(struct iour_policy **p, uint32_t dflt)
{
	int rc = iour_policy__new(NULL, p);

	if (!rc)
		rc = iour_policy__set_attr(*p, IOUR_POLICY_ATTR_TARGET, IOUR_POLICY_TARGET_TASK);
	if (!rc)
		rc = iour_policy__set_attr(*p, IOUR_POLICY_ATTR_DEFAULT, dflt);
	return rc;
}

/* The set filter: user_data in set_vals -> deny, otherwise allow. */
static int set_filter(struct iour_filter **f)
{
	struct iour_cmp c = { .sz = sizeof(c),
			      .field = IOUR_FIELD_USER_DATA,
			      .op = IOUR_CMP_IN_SET,
			      .set = set_vals,
			      .set_len = NSET };
	int rc = iour_filter__new(NULL, f);

	for (uint32_t op = OP_NOP; !rc && op <= OP_READ; op += OP_READ) {
		rc = iour_filter__add_rule(*f, op, IOUR_DENY, &c, 1);
		if (!rc)
			rc = iour_filter__set_default(*f, op, IOUR_ALLOW);
	}
	return rc;
}

/* The deny-list filter: CONNECT to a listed IPv4 address -> deny, one
 * IN_SET rule per IOUR_FILTER_MAX_SET values; the library stacks it. */
static int deny_filter(struct iour_filter **f)
{
	int rc = iour_filter__new(NULL, f);

	for (size_t at = 0; !rc && at < ndeny; at += IOUR_FILTER_MAX_SET) {
		struct iour_cmp c = { .sz = sizeof(c),
				      .field = IOUR_FIELD_CONNECT_ADDR4,
				      .op = IOUR_CMP_IN_SET,
				      .set = deny_vals + at,
				      .set_len = ndeny - at < IOUR_FILTER_MAX_SET ?
							 ndeny - at :
							 IOUR_FILTER_MAX_SET };

		rc = iour_filter__add_rule(*f, OP_CONNECT, IOUR_DENY, &c, 1);
	}
	if (!rc)
		rc = iour_filter__set_default(*f, OP_CONNECT, IOUR_ALLOW);
	return rc;
}

/* The policy of a configuration (NULL for none). */
static int cfg_policy(enum cfg c, struct iour_policy **out)
{
	struct iour_policy *p = NULL;
	struct iour_ruleset *rs = NULL;
	struct iour_filter *f = NULL;
	struct iour_insn prog[4];
	int rc;

	*out = NULL;
	if (c == C_NONE)
		return 0;
	rc = policy_new(&p, c == C_ALLOW ? IOUR_POLICY_DEFAULT_DENY : IOUR_POLICY_DEFAULT_ALLOW);
	if (!rc && c == C_ALLOW) {
		rc = iour_ruleset__new(NULL, &rs);
		if (!rc)
			rc = iour_ruleset__allow_sqe_op(rs, OP_NOP);
		if (!rc)
			rc = iour_ruleset__allow_sqe_op(rs, OP_READ);
		if (!rc)
			rc = iour_policy__set_ruleset(p, rs);
		iour_ruleset__free(rs);
	} else if (!rc && (c == C_FILTER || c == C_STACK)) {
		prog4(prog, DENY_UD);
		rc = iour_policy__set_prog(p, OP_NOP, prog, 4, 0);
		if (!rc)
			rc = iour_policy__set_prog(p, OP_READ, prog, 4, 0);
	} else if (!rc && (c == C_SET || c == C_DENY)) {
		rc = c == C_SET ? set_filter(&f) : deny_filter(&f);
		if (!rc)
			rc = iour_policy__set_filter(p, f);
		iour_filter__free(f);
	}
	if (rc) {
		iour_policy__free(p);
		return rc;
	}
	*out = p;
	return 0;
}

/* ---- instructions per request, from the simulator ---- */

/* Instructions the plan's filters for `op` execute on a request with
 * user_data `ud` (stack4: the plan's one program, four times); -1 if a
 * program denies it, -2 on a simulator error. */
static long sim_count(const struct iour_plan *pl, enum cfg c, uint32_t op, uint64_t ud)
{
	uint8_t ctx[IOUR_CTX_SIZE];
	int n = iour_plan__step_cnt(pl);
	long total = 0;

	if (iour_ctx_generic(ctx, sizeof(ctx), op, 0, ud))
		return -2;
	for (int i = 0; i < n; i++) {
		struct iour_plan_step s = { .sz = sizeof(s) };
		struct iour_insn insns[4096];
		size_t cnt = 4096;
		struct iour_sim_result r = { .sz = sizeof(r) };

		if (iour_plan__step(pl, (size_t)i, &s) || s.op != IOUR_STEP_BPF_FILTER ||
		    s.opcode != op)
			continue;
		if (iour_plan__step_insns(pl, (size_t)i, insns, &cnt) ||
		    iour_cbpf_run(insns, cnt, ctx, sizeof(ctx), &r))
			return -2;
		for (int k = 0; k < (c == C_STACK ? 4 : 1); k++) {
			struct iour_insn p4[4];
			struct iour_sim_result rk = { .sz = sizeof(rk) };

			if (k == 0) {
				rk = r;
			} else {
				prog4(p4, DENY_UD + (uint32_t)k);
				if (iour_cbpf_run(p4, 4, ctx, sizeof(ctx), &rk))
					return -2;
			}
			if (!rk.allowed)
				return -1;
			total += rk.executed;
		}
	}
	return total;
}

/* Instructions all of the plan's CONNECT programs execute on a CONNECT
 * to `sa`; -1 if one denies it, -2 on a simulator error. */
static long sim_connect(const struct iour_plan *pl, const void *sa, uint32_t sa_len)
{
	uint8_t ctx[IOUR_CTX_SIZE];
	int n = iour_plan__step_cnt(pl);
	long total = 0;
	int denied = 0;

	if (iour_ctx_generic(ctx, sizeof(ctx), OP_CONNECT, 0, 0) ||
	    iour_ctx_connect(ctx, sizeof(ctx), sa, sa_len))
		return -2;
	for (int i = 0; i < n; i++) {
		struct iour_plan_step s = { .sz = sizeof(s) };
		static struct iour_insn insns[4096];
		size_t cnt = 4096;
		struct iour_sim_result r = { .sz = sizeof(r) };

		if (iour_plan__step(pl, (size_t)i, &s) || s.op != IOUR_STEP_BPF_FILTER ||
		    s.opcode != OP_CONNECT)
			continue;
		if (iour_plan__step_insns(pl, (size_t)i, insns, &cnt) ||
		    iour_cbpf_run(insns, cnt, ctx, sizeof(ctx), &r))
			return -2;
		total += r.executed;
		denied |= !r.allowed;
	}
	return denied ? -1 : total;
}

static struct sockaddr_in v4(uint32_t host_order, uint16_t port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };

	a.sin_addr.s_addr = htonl(host_order);
	return a;
}

/* The IPv4-mapped IPv6 form of a host-order IPv4 address. */
static struct sockaddr_in6 mapped(uint32_t host_order, uint16_t port)
{
	struct sockaddr_in6 a = { .sin6_family = AF_INET6, .sin6_port = htons(port) };
	uint32_t be = htonl(host_order);

	a.sin6_addr.s6_addr[10] = 0xff;
	a.sin6_addr.s6_addr[11] = 0xff;
	memcpy(&a.sin6_addr.s6_addr[12], &be, 4);
	return a;
}

/* The plan's BPF_FILTER steps for `op`. */
static int filter_steps(const struct iour_plan *pl, uint32_t op)
{
	int n = iour_plan__step_cnt(pl), cnt = 0;

	for (int i = 0; i < n; i++) {
		struct iour_plan_step s = { .sz = sizeof(s) };

		if (!iour_plan__step(pl, (size_t)i, &s) && s.op == IOUR_STEP_BPF_FILTER &&
		    s.opcode == op)
			cnt++;
	}
	return cnt;
}

/* The set filter's longest allowed path: every value next to a listed one
 * (each gap's ends) and 0 tried; worst_ud gets the longest. */
static long find_worst(const struct iour_plan *pl)
{
	long best = -1;

	for (int i = 0; i < NSET; i++) {
		for (int d = -1; d <= 1; d += 2) {
			uint64_t ud = set_vals[i] + (uint64_t)(int64_t)d;
			long e = sim_count(pl, C_SET, OP_NOP, ud);

			if (e > best) {
				best = e;
				worst_ud = ud;
			}
		}
	}
	return best;
}

/* ---- the ring ---- */

/* Run `n` requests (batches of BATCH) of `op` with user_data `ud`; the
 * first unexpected result, or 0.  *ns gets the time. */
static int run_batch(struct mini_ring *r, uint32_t op, uint64_t ud, long n, uint64_t *ns)
{
	struct timespec t0, t1;
	int bad = 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (long done = 0; done < n; done += BATCH) {
		uint32_t tail = *r->sq_tail, head;
		long rc;

		for (uint32_t i = 0; i < BATCH; i++) {
			uint32_t idx = (tail + i) & *r->sq_mask;
			struct kio_sqe *s = &r->sqes[idx];

			memset(s, 0, sizeof(*s));
			s->opcode = (uint8_t)op;
			s->user_data = ud;
			if (op == OP_READ || op == OP_WRITE) {
				s->fd = op == OP_READ ? read_fd : 1;
				s->addr = (uintptr_t)read_buf[i];
				s->len = op == OP_READ ? READ_SZ : 1;
			} else if (op == OP_CONNECT) {
				s->fd = conn_fds[i];
				s->addr = (uintptr_t)&conn_addr;
				s->off = sizeof(conn_addr);
			}
			r->sq_array[idx] = idx;
		}
		__atomic_store_n(r->sq_tail, tail + BATCH, __ATOMIC_RELEASE);
		rc = raw_enter(r->fd, BATCH, BATCH, KIO_ENTER_GETEVENTS);
		if (rc != BATCH)
			return rc < 0 ? (int)rc : MINI_RING_NO_CQE;
		head = *r->cq_head;
		for (uint32_t i = 0; i < BATCH; i++, head++) {
			int32_t res;

			if (head == __atomic_load_n(r->cq_tail, __ATOMIC_ACQUIRE))
				return MINI_RING_NO_CQE;
			res = r->cqes[head & *r->cq_mask].res;
			if (!bad && res != (op == OP_READ      ? READ_SZ :
					    op == OP_CONNECT ? -ECONNREFUSED :
							       0))
				bad = res ? res : MINI_RING_NO_CQE;
		}
		__atomic_store_n(r->cq_head, head, __ATOMIC_RELEASE);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	*ns = (uint64_t)(t1.tv_sec - t0.tv_sec) * 1000000000ULL + (uint64_t)t1.tv_nsec -
	      (uint64_t)t0.tv_nsec;
	return bad;
}

/* One CONNECT of conn_fds[0] to `sa`; its completion's result. */
static int32_t one_connect(struct mini_ring *r, const void *sa, uint32_t sa_len)
{
	struct kio_sqe s;
	int32_t res = MINI_RING_NO_CQE;

	memset(&s, 0, sizeof(s));
	s.opcode = OP_CONNECT;
	s.fd = conn_fds[0];
	s.addr = (uintptr_t)sa;
	s.off = sa_len;
	if (mini_ring_run(r, &s, &res) != 1)
		return MINI_RING_NO_CQE;
	return res;
}

/* One request; its completion's result (or MINI_RING_NO_CQE). */
static int32_t one(struct mini_ring *r, uint32_t op, uint64_t ud)
{
	struct kio_sqe s;
	int32_t res = MINI_RING_NO_CQE;

	memset(&s, 0, sizeof(s));
	s.opcode = (uint8_t)op;
	s.user_data = ud;
	if (op == OP_READ) {
		s.fd = read_fd;
		s.addr = (uintptr_t)read_buf[0];
		s.len = READ_SZ;
	} else if (op == OP_WRITE) {
		s.fd = 1;
		s.addr = (uintptr_t) "";
		s.len = 0;
	}
	if (mini_ring_run(r, &s, &res) != 1)
		return MINI_RING_NO_CQE;
	return res;
}

/* ---- a configuration's child ---- */

struct reply {
	int passed, failed;
	double ns; /* time of the batch asked for */
	int bad;   /* its first unexpected result */
};

/* Apply the configuration; stack4 registers three more filters per opcode
 * with the bytes of the plan's own BPF_FILTER steps. */
static int apply(enum cfg c, const struct iour_plan *pl)
{
	struct iour_report *rep = NULL;
	int rc, n;

	if (c == C_NONE)
		return 0;
	rc = iour_plan__apply_task(pl, NULL, &rep);
	iour_report__free(rep);
	if (rc || c != C_STACK)
		return rc;
	n = iour_plan__step_cnt(pl);
	for (int i = 0; i < n; i++) {
		struct iour_plan_step s = { .sz = sizeof(s) };
		struct kio_bpf arg;
		size_t len = sizeof(arg);

		if (iour_plan__step(pl, (size_t)i, &s) || s.op != IOUR_STEP_BPF_FILTER)
			continue;
		if (iour_plan__step_arg(pl, (size_t)i, &arg, &len) || len != sizeof(arg))
			return -EINVAL;
		for (uint32_t k = 1; k < 4; k++) {
			struct iour_insn p4[4];
			long r;

			prog4(p4, DENY_UD + k);
			arg.filter.filter_ptr = (uintptr_t)p4;
			arg.filter.filter_len = 4;
			r = raw_register(-1, s.call_op, &arg, s.nr_args);
			if (r < 0)
				return (int)r;
		}
	}
	return 0;
}

static void child_checks(enum cfg c, struct mini_ring *r)
{
	char name[96];
	const int32_t deny = -EACCES;

#define CHK_RES(what, op, ud, want)                                        \
	do {                                                               \
		snprintf(name, sizeof(name), "%s: %s", cfg_name[c], what); \
		CHECK_EQ(name, one(r, op, ud), want);                      \
	} while (0)
	CHK_RES("NOP allowed", OP_NOP, OK_UD, 0);
	CHK_RES("READ allowed", OP_READ, OK_UD, READ_SZ);
	switch (c) {
	case C_NONE:
		CHK_RES("NOP with the filters' denied user_data allowed", OP_NOP, DENY_UD, 0);
		CHK_RES("WRITE allowed", OP_WRITE, OK_UD, 0);
		if (conn_ok) {
			struct sockaddr_in a = v4((uint32_t)deny_vals[0], ntohs(conn_addr.sin_port));

			snprintf(name, sizeof(name), "%s: CONNECT to 127.0.0.1 reaches the closed port",
				 cfg_name[c]);
			CHECK_EQ(name, one_connect(r, &conn_addr, sizeof(conn_addr)), -ECONNREFUSED);
			snprintf(name, sizeof(name),
				 "%s: CONNECT to a deny-listed address (no filter) reaches it",
				 cfg_name[c]);
			CHECK_EQ(name, one_connect(r, &a, sizeof(a)), -ECONNREFUSED);
		}
		break;
	case C_ALLOW:
		CHK_RES("WRITE denied", OP_WRITE, OK_UD, deny);
		break;
	case C_FILTER:
		CHK_RES("NOP denied user_data", OP_NOP, DENY_UD, deny);
		CHK_RES("READ denied user_data", OP_READ, DENY_UD, deny);
		CHK_RES("WRITE unfiltered", OP_WRITE, DENY_UD, 0);
		break;
	case C_SET:
		CHK_RES("NOP first listed user_data", OP_NOP, set_vals[0], deny);
		CHK_RES("NOP middle listed user_data", OP_NOP, set_vals[NSET / 2], deny);
		CHK_RES("NOP last listed user_data", OP_NOP, set_vals[NSET - 1], deny);
		CHK_RES("READ listed user_data", OP_READ, set_vals[7], deny);
		CHK_RES("NOP longest-path user_data", OP_NOP, worst_ud, 0);
		break;
	case C_DENY: {
		const size_t at[3] = { 0, ndeny / 2, ndeny - 1 };

		for (int i = 0; i < 3; i++) {
			struct sockaddr_in a = v4((uint32_t)deny_vals[at[i]], ntohs(conn_addr.sin_port));

			snprintf(name, sizeof(name), "%s: CONNECT to listed address %d of 3 denied",
				 cfg_name[c], i + 1);
			CHECK_EQ(name, one_connect(r, &a, sizeof(a)), deny);
		}
		{
			struct sockaddr_in6 m = mapped((uint32_t)deny_vals[1],
						       ntohs(conn_addr.sin_port));

			CHK_RES("NOP unfiltered", OP_NOP, DENY_UD, 0);
			snprintf(name, sizeof(name),
				 "%s: CONNECT to a listed address, IPv4-mapped, denied",
				 cfg_name[c]);
			CHECK_EQ(name, one_connect(r, &m, sizeof(m)), deny);
		}
		if (conn_ok) {
			snprintf(name, sizeof(name),
				 "%s: CONNECT to 127.0.0.1 (not listed) reaches the closed port",
				 cfg_name[c]);
			CHECK_EQ(name, one_connect(r, &conn_addr, sizeof(conn_addr)),
				 -ECONNREFUSED);
		}
		break;
	}
	case C_STACK:
		for (uint32_t k = 0; k < 4; k++) {
			snprintf(name, sizeof(name), "%s: NOP user_data denied by filter %u",
				 cfg_name[c], k + 1);
			CHECK_EQ(name, one(r, OP_NOP, DENY_UD + k), deny);
		}
		CHK_RES("READ user_data denied by filter 4", OP_READ, DENY_UD + 3, deny);
		break;
	}
#undef CHK_RES
}

/* The child: apply, check, then answer "batch" requests until EOF. */
static void child(enum cfg c, const struct iour_plan *pl, int in, int out)
{
	struct mini_ring r;
	struct reply rep = { 0 };
	int rc;
	struct {
		uint32_t op;
		long n;
	} req;

	rc = apply(c, pl);
	snprintf((char *)read_buf[0], 64, "%s: restriction applied", cfg_name[c]);
	CHECK_EQ((char *)read_buf[0], rc, 0);
	if (!rc) {
		rc = mini_ring_init(&r, 64, 0);
		snprintf((char *)read_buf[0], 64, "%s: ring created", cfg_name[c]);
		CHECK_EQ((char *)read_buf[0], rc, 0);
	}
	if (!rc)
		child_checks(c, &r);
	rep.passed = guest_passed;
	rep.failed = guest_failed;
	if (write(out, &rep, sizeof(rep)) != sizeof(rep) || rc)
		_exit(1);
	while (read(in, &req, sizeof(req)) == sizeof(req)) {
		uint64_t ns = 0;

		rep.bad = run_batch(&r, req.op, req.op == OP_NOP && c == C_SET ? worst_ud : OK_UD,
				    req.n, &ns);
		rep.ns = (double)ns;
		if (write(out, &rep, sizeof(rep)) != sizeof(rep))
			_exit(1);
	}
	_exit(0);
}

/* ---- the parent ---- */

struct kid {
	pid_t pid;
	int to, from;
	int live;
};

static struct kid kids[NCFG];

static int start(struct kid *k, enum cfg c, const struct iour_plan *pl)
{
	int a[2], b[2];
	struct reply rep;

	if (pipe(a) || pipe(b))
		return -errno;
	fflush(stdout);
	k->pid = fork();
	if (k->pid < 0)
		return -errno;
	if (k->pid == 0) {
		close(a[1]);
		close(b[0]);
		/* the earlier children's pipes: each child sees EOF from the
		 * parent alone */
		for (struct kid *e = kids; e < k; e++) {
			if (e->pid > 0) {
				close(e->to);
				close(e->from);
			}
		}
		guest_passed = guest_failed = 0;
		child(c, pl, a[0], b[1]);
	}
	close(a[0]);
	close(b[1]);
	k->to = a[1];
	k->from = b[0];
	if (read(k->from, &rep, sizeof(rep)) != sizeof(rep)) {
		guest_failed++;
		printf("FAIL %s: the child ended before its checks were done\n", cfg_name[c]);
		return -ECHILD;
	}
	guest_passed += rep.passed;
	guest_failed += rep.failed;
	k->live = rep.failed == 0;
	return 0;
}

static int ask(struct kid *k, uint32_t op, long n, struct reply *rep)
{
	struct {
		uint32_t op;
		long n;
	} req = { op, n };

	if (write(k->to, &req, sizeof(req)) != sizeof(req) ||
	    read(k->from, rep, sizeof(*rep)) != sizeof(*rep))
		return -EPIPE;
	return 0;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Loopback up (a guest's /init leaves it down), a closed port of
 * 127.0.0.1 in conn_addr, BATCH TCP sockets to connect with; conn_ok if a
 * connect there is refused.  Otherwise a skip, with the reason. */
static void connect_setup(void)
{
	struct ifreq ifr;
	socklen_t len = sizeof(conn_addr);
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	const char *why = NULL;

	conn_addr = v4(0x7f000001U, 9);
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
	if (s >= 0 && ioctl(s, SIOCGIFFLAGS, &ifr) == 0 && !(ifr.ifr_flags & IFF_UP)) {
		ifr.ifr_flags |= IFF_UP;
		if (ioctl(s, SIOCSIFFLAGS, &ifr))
			why = "loopback is down and cannot be brought up";
	}
	if (s >= 0)
		close(s);
	/* a port bound then closed without listen: connects are refused */
	s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	conn_addr.sin_port = 0;
	if (!why && (s < 0 || bind(s, (struct sockaddr *)&conn_addr, sizeof(conn_addr)) ||
		     getsockname(s, (struct sockaddr *)&conn_addr, &len)))
		why = "no TCP socket on 127.0.0.1";
	if (s >= 0)
		close(s);
	if (!why) {
		s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (s < 0 || connect(s, (struct sockaddr *)&conn_addr, sizeof(conn_addr)) == 0 ||
		    errno != ECONNREFUSED)
			why = "a connect to a closed port of 127.0.0.1 was not refused";
		if (s >= 0)
			close(s);
	}
	for (int i = 0; !why && i < BATCH; i++) {
		conn_fds[i] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (conn_fds[i] < 0)
			why = "no TCP socket for the CONNECT requests";
	}
	if (why) {
		if (!conn_addr.sin_port)
			conn_addr.sin_port = htons(9);
		GUEST_SKIP("denylist: CONNECT timing and reachability checks", why);
		return;
	}
	conn_ok = 1;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_d);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv)
{
	int bench = argc > 1 && !strcmp(argv[1], "--bench");
	int reps = bench && argc > 2 ? atoi(argv[2]) : 11;
	struct iour_features f = { .sz = sizeof(f) };
	struct iour_plan *plans[NCFG] = { 0 };
	long insns[NCFG][2];
	int level, rc;
	char path[] = "/tmp/bench_guest.XXXXXX";
	static char data[READ_SZ];
	long n_nop = bench ? 131072 : 64, n_read = bench ? 16384 : 64, n_conn = bench ? 8192 : 32;
	long deny_progs = 0, deny_insns = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (reps < 1 || reps > 101)
		reps = 11;
	/* 1,000 distinct values with gaps between them */
	for (int i = 0; i < NSET; i++)
		set_vals[i] = 0x100000U + (uint64_t)i * 4096U + (rnd32() % 2048U) * 2U;
	/* the deny-list: random addresses in 127.0.0.0/8 other than 127.0.0.1 */
	ndeny = bench ? NDENY_BENCH : NDENY_QUICK;
	deny_vals = calloc(ndeny, sizeof(*deny_vals));
	CHECK("the deny-list allocated", deny_vals != NULL);
	if (!deny_vals)
		return guest_summary();
	for (size_t i = 0; i < ndeny; i++) {
		deny_vals[i] = 0x7f000000U | (rnd32() & 0xffffffU);
		if (deny_vals[i] == 0x7f000001U)
			deny_vals[i]++;
	}

	rc = iour_probe(NULL, &f);
	level = rc ? -1 : (int)f.level;
	/* scripts/guest.sh reads the level from a "guest level:" line */
	printf("%s %d (%s mode)\n", bench ? "guest level:" : "bench_guest: level", level,
	       bench ? "bench" : "quick");

	/* a cached tmpfs file (the guest's / is its initramfs; /tmp on the host) */
	mkdir("/tmp", 01777);
	read_fd = mkstemp(path);
	CHECK("the READ file", read_fd >= 0);
	if (read_fd < 0)
		return guest_summary();
	unlink(path);
	memset(data, 'x', sizeof(data));
	CHECK_EQ("the READ file written", pwrite(read_fd, data, sizeof(data), 0), READ_SZ);

	connect_setup();

	/* the plans for this kernel, or for level 4 (the deny-list: 5) where
	 * it has no task (CONNECT) filters: then only their simulator counts
	 * are checked */
	for (int c = C_ALLOW; c < NCFG; c++) {
		struct iour_policy *p = NULL;
		int need = c == C_DENY ? IOUR_LEVEL_CONNECT : IOUR_LEVEL_TASK_BPF;
		IOUR_OPTS(iour_plan_opts, o, .flags = IOUR_PLAN_FORCE_LEVEL);
		char name[80];

		o.level = (uint32_t)need;
		rc = cfg_policy((enum cfg)c, &p);
		if (!rc)
			rc = iour_policy__plan(p, level >= need ? NULL : &o, &plans[c]);
		iour_policy__free(p);
		snprintf(name, sizeof(name), "%s: policy planned", cfg_name[c]);
		CHECK_EQ(name, rc, 0);
		if (rc)
			return guest_summary();
	}

	/* instructions per timed request, and what the programs imply */
	memset(insns, 0, sizeof(insns));
	for (int c = C_FILTER; c < NCFG; c++) {
		for (int o = 0; o < 2; o++) {
			uint32_t op = o ? OP_READ : OP_NOP;

			if (c == C_SET && !o)
				find_worst(plans[c]);
			insns[c][o] =
				sim_count(plans[c], (enum cfg)c, op, c == C_SET ? worst_ud : OK_UD);
		}
	}
	CHECK_NUM("filter: instructions per NOP (ld, jeq, ret)", insns[C_FILTER][0], 3);
	CHECK_NUM("filter: instructions per READ", insns[C_FILTER][1], 3);
	CHECK_NUM("stack4: instructions per NOP (4 x 3)", insns[C_STACK][0], 12);
	CHECK_NUM("stack4: instructions per READ", insns[C_STACK][1], 12);
	CHECK_NUM("set1000: one program for NOP", filter_steps(plans[C_SET], OP_NOP), 1);
	CHECK_NUM("stack4: the plan's one program for NOP (3 more registered directly)",
		  filter_steps(plans[C_STACK], OP_NOP), 1);
	{
		/* a search over 1,001 gaps: at least ceil(log2 1001) = 10 compares
		 * and a load, at most twice that (bench_filters' goal) */
		long w = insns[C_SET][0];

		printf("set1000: longest allowed path %ld instructions (user_data %#llx)\n", w,
		       (unsigned long long)worst_ud);
		CHECK("set1000: longest path between 11 and 22 instructions", w >= 11 && w <= 22);
		CHECK_NUM("set1000: READ takes the same path", insns[C_SET][1], w);
		CHECK_NUM("set1000: a listed value is denied by the simulator",
			  sim_count(plans[C_SET], C_SET, OP_NOP, set_vals[3]), -1);
	}

	{
		/* the deny-list: stacked programs; 127.0.0.1 runs through all */
		struct sockaddr_in a = v4((uint32_t)deny_vals[ndeny / 3], 80);
		struct sockaddr_in6 m = mapped((uint32_t)deny_vals[ndeny / 3], 80);

		deny_progs = filter_steps(plans[C_DENY], OP_CONNECT);
		deny_insns = sim_connect(plans[C_DENY], &conn_addr, sizeof(conn_addr));
		printf("denylist: %zu addresses in %ld stacked programs; a CONNECT to 127.0.0.1 "
		       "runs %ld instructions through them\n",
		       ndeny, deny_progs, deny_insns);
		CHECK("denylist: at least one program", deny_progs >= 1);
		CHECK("denylist: 127.0.0.1 passes every program, at least 2 instructions each",
		      deny_insns >= 2 * deny_progs);
		CHECK_NUM("denylist: a listed address is denied by the simulator",
			  sim_connect(plans[C_DENY], &a, sizeof(a)), -1);
		CHECK_NUM("denylist: its IPv4-mapped form is denied by the simulator",
			  sim_connect(plans[C_DENY], &m, sizeof(m)), -1);
	}

	/* the children */
	for (int c = 0; c < NCFG; c++) {
		if (c == C_DENY && level < IOUR_LEVEL_CONNECT) {
			char why[160];

			snprintf(why, sizeof(why), "CONNECT filters need Linux 7.2 (level 5); level %d",
				 level);
			GUEST_SKIP(cfg_name[c], why);
			continue;
		}
		if (c != C_NONE && level < IOUR_LEVEL_TASK_BPF) {
			char why[160];

			snprintf(why, sizeof(why),
				 "task restrictions and filters need Linux 7.0 (level 4); level %d",
				 level);
			GUEST_SKIP(cfg_name[c], why);
			continue;
		}
		if (start(&kids[c], (enum cfg)c, plans[c]))
			kids[c].live = 0;
	}
	if (bench && level < IOUR_LEVEL_TASK_BPF) {
		guest_failed++;
		printf("FAIL --bench needs task filters (level 4), this kernel has level %d\n",
		       level);
	}

	/* timing: rounds over every configuration, NOP then READ */
	{
		static double t[NCFG][3][101];
		static const uint32_t ops[3] = { OP_NOP, OP_READ, OP_CONNECT };
		static const char *const op_name[3] = { "NOP", "READ", "CONNECT" };
		const long n_op[3] = { n_nop, n_read, n_conn };
		int nt = bench ? reps : 1;

		for (int i = 0; i < nt; i++) {
			/* each round starts one configuration later */
			for (int j = 0; j < NCFG; j++) {
				int c = (i + j) % NCFG;

				for (int o = 0; o < 3 && kids[c].live; o++) {
					struct reply rep;
					char name[80];

					/* the deny-list times CONNECT alone, against
					 * the baseline's */
					if ((c == C_DENY && o < 2) ||
					    (o == 2 && (!conn_ok || (c != C_NONE && c != C_DENY))))
						continue;
					rc = ask(&kids[c], ops[o], n_op[o], &rep);
					t[c][o][i] = rep.ns;
					if (rc || rep.bad) {
						snprintf(name, sizeof(name),
							 "%s: timed %s requests", cfg_name[c],
							 op_name[o]);
						CHECK_EQ(name, rc ? rc : rep.bad, 0);
						kids[c].live = 0;
					}
				}
			}
		}
		if (bench && !guest_failed) {
			double kops[NCFG][3] = { { 0 } };

			for (int c = 0; c < NCFG; c++)
				for (int o = 0; o < 3; o++)
					if (t[c][o][0] > 0)
						kops[c][o] = (double)n_op[o] /
							     (median(t[c][o], nt) / 1e9) / 1e3;
			printf("BENCH_GUEST_JSON {\"guest\": {\"timing\": \"emulated (qemu TCG); only the ratios are meaningful\", \"reps\": %d, \"nop_per_rep\": %ld, \"read_per_rep\": %ld",
			       nt, n_nop, n_read);
			for (int c = C_ALLOW; c < C_DENY; c++)
				printf(", \"%s_nop_ratio\": %.4f, \"%s_read_ratio\": %.4f",
				       cfg_name[c], kops[c][0] / kops[0][0], cfg_name[c],
				       kops[c][1] / kops[0][1]);
			if (kops[C_DENY][2] > 0 && kops[C_NONE][2] > 0)
				printf(", \"denylist_connect_ratio\": %.4f, \"denylist\": {\"entries\": %zu, \"programs\": %ld, \"cbpf_insns_connect\": %ld, \"connect_kops_emulated\": %.2f, \"none_connect_kops_emulated\": %.2f, \"connects_per_rep\": %ld}",
				       kops[C_DENY][2] / kops[C_NONE][2], ndeny, deny_progs,
				       deny_insns, kops[C_DENY][2], kops[C_NONE][2], n_conn);
			for (int c = 0; c < C_DENY; c++)
				printf(", \"%s\": {\"nop_kops_emulated\": %.2f, \"read_kops_emulated\": %.2f, \"cbpf_insns_nop\": %ld, \"cbpf_insns_read\": %ld}",
				       cfg_name[c], kops[c][0], kops[c][1], insns[c][0],
				       insns[c][1]);
			printf("}}\n");
		}
	}

	for (int c = 0; c < NCFG; c++) {
		if (kids[c].pid > 0) {
			close(kids[c].to);
			close(kids[c].from);
		}
	}
	for (int c = 0; c < NCFG; c++) {
		int st;

		if (kids[c].pid > 0)
			waitpid(kids[c].pid, &st, 0);
		iour_plan__free(plans[c]);
	}
	close(read_fd);
	for (int i = 0; i < BATCH; i++)
		if (conn_fds[i] > 0)
			close(conn_fds[i]);
	free(deny_vals);
	return guest_summary();
}
