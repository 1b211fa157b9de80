/* SPDX-License-Identifier: MIT */
/*
 * More live attacks on promises of companion.h, doc/security.md and
 * doc/design.md:
 *
 * - a ring cannot be handed to another process over a socket: the kernel
 *   refuses io_uring fds in SCM_RIGHTS messages and refuses to reopen them
 *   through /proc (companion.h, security.md §3 "Rings that exist
 *   already");
 * - a task plan that fails midway for real (the kernel refuses every
 *   filter registration with -ENOMEM) returns -IOUR_ERRNO__PARTIAL with a
 *   report that names exactly the opcodes left loose, and every other
 *   opcode behaves as the plan says (design.md, "The executor validates
 *   before the first irreversible call");
 * - io_uring's own classic-BPF checker accepts exactly the programs the
 *   library's validator accepts with its io_uring rules (security.md §4).
 *
 * The first runs on every kernel with per-ring restrictions; the other two
 * need Linux 7.0+ (task restrictions, ring filters) and skip elsewhere,
 * saying why.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cbpf_gen.h"
#include "base/internal.h"
#include "live.h"
#include "scm.h"
#include "ring_util.h"

#ifndef __NR_io_uring_register
#define __NR_io_uring_register 427
#endif
#ifndef __NR_io_uring_enter
#define __NR_io_uring_enter 426
#endif

#define AF_INET_ 2
#define AF_INET6_ 10
#define STREAM 1
#define O_CREAT_ 0100
#define REG_PROBE 8
#define REG_BPF_FILTER 37

static long reg(int fd, unsigned op, void *arg, unsigned nr)
{
	return syscall(__NR_io_uring_register, fd, op, arg, nr) ? -errno : 0;
}

/* ---- rings over sockets and through /proc ---- */



/*
 * companion.h: a program that holds no ring "cannot receive one": the
 * kernel refuses an io_uring fd in SCM_RIGHTS with EINVAL (stream,
 * datagram and seqpacket sockets; the ring alone or next to a pipe fd;
 * a plain ring, one restricted by the library, an SQPOLL ring) and
 * nothing reaches the receiver, while a pipe fd goes through the same
 * sockets.  Reopening the ring through /proc/self/fd gives ENXIO; an
 * O_PATH reopen gives an fd that is not a ring (io_uring_enter,
 * io_uring_register and mmap answer EBADF).
 */
Test(live_ring, ring_fd_refused_over_sockets_and_proc)
{
	static const int types[] = { SOCK_STREAM, SOCK_DGRAM, SOCK_SEQPACKET };
	static const char *const tname[] = { "stream", "dgram", "seqpacket" };
	static const char *const rname[] = { "plain", "restricted", "SQPOLL" };
	static const uint32_t nop[] = { OP_NOP };
	struct io_uring_params params;
	struct io_uring plain, sqpoll;
	struct iour_ruleset *rs;
	int rings[3], pfd[2], t, k, fd, refused = 0;
	char path[64];
	void *m;

	LIVE_REQUIRE(LIVE_RING);
	cr_assert_eq(io_uring_queue_init(4, &plain, 0), 0);
	memset(&params, 0, sizeof(params));
	params.flags = IORING_SETUP_SQPOLL;
	params.sq_thread_idle = 1000;
	cr_assert_eq(io_uring_queue_init_params(4, &sqpoll, &params), 0);
	rs = rs_make(nop, 1, 0, 0, NULL, 0);
	rings[0] = plain.ring_fd;
	rings[1] = -1;
	cr_assert_eq(iour_ring_create(4, NULL, rs, NULL, &rings[1]), 0);
	iour_ruleset__free(rs);
	rings[2] = sqpoll.ring_fd;
	cr_assert_eq(pipe(pfd), 0);

	for (t = 0; t < 3; t++) {
		int sv[2];

		cr_assert_eq(socketpair(AF_UNIX, types[t], 0, sv), 0);
		cr_assert_eq(send_fds(sv[0], pfd, 1), 0, "%s: a pipe fd is passed", tname[t]);
		cr_assert_eq(recv_fds(sv[1]), 1, "%s: the pipe fd arrives", tname[t]);
		for (k = 0; k < 3; k++) {
			int two[2] = { pfd[0], rings[k] }, rc;

			rc = send_fds(sv[0], &rings[k], 1);
			cr_expect_eq(rc, -EINVAL, "%s: sendmsg of a %s ring fd: %s", tname[t],
				     rname[k], iour_errname(rc));
			rc = send_fds(sv[0], two, 2);
			cr_expect_eq(rc, -EINVAL, "%s: a pipe fd and a %s ring fd: %s", tname[t],
				     rname[k], iour_errname(rc));
			rc = recv_fds(sv[1]);
			cr_expect_eq(rc, -EAGAIN, "%s: after the %s ring, the receiver got %d",
				     tname[t], rname[k], rc);
			refused += 2;
		}
		close(sv[0]);
		close(sv[1]);
	}

	snprintf(path, sizeof(path), "/proc/self/fd/%d", rings[1]);
	fd = open(path, O_RDWR);
	cr_expect_eq(fd < 0 ? -errno : fd, -ENXIO, "reopen O_RDWR: %d", fd);
	fd = open(path, O_RDONLY);
	cr_expect_eq(fd < 0 ? -errno : fd, -ENXIO, "reopen O_RDONLY: %d", fd);
	fd = open(path, O_PATH);
	cr_assert_geq(fd, 0, "O_PATH reopen");
	cr_expect_eq(syscall(__NR_io_uring_enter, fd, 0, 0, 0, NULL, 0) ? -errno : 0, -EBADF,
		     "io_uring_enter on the O_PATH fd");
	cr_expect_eq(reg(fd, REG_PROBE, NULL, 0), -EBADF, "io_uring_register on the O_PATH fd");
	m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, IORING_OFF_SQ_RING);
	cr_expect_eq(m == MAP_FAILED ? -errno : 0, -EBADF, "mmap of the O_PATH fd");
	close(fd);

	close(rings[1]);
	io_uring_queue_exit(&plain);
	io_uring_queue_exit(&sqpoll);
	close(pfd[0]);
	close(pfd[1]);
	live_log("%d SCM_RIGHTS messages carrying a ring fd refused with EINVAL (stream, dgram, "
		 "seqpacket; plain, restricted, SQPOLL), nothing delivered; /proc reopen ENXIO, "
		 "O_PATH reopen is no ring (EBADF)", refused);
}

/* ---- a real mid-plan failure (Linux 7.0+) ---- */

static int add_cmp(struct iour_filter *f, uint32_t opcode, uint32_t verdict, uint32_t field,
		   uint32_t op, uint64_t value)
{
	struct iour_cmp c;

	memset(&c, 0, sizeof(c));
	c.sz = sizeof(c);
	c.field = field;
	c.op = op;
	c.value = value;
	return iour_filter__add_rule(f, opcode, verdict, &c, 1);
}

struct partial_case {
	char dir[4096];
	char created[4200]; /* OPENAT with O_CREAT: the filter would deny it */
};

/*
 * A task plan {NOP, READ, SOCKET, OPENAT} with a SOCKET filter (AF_INET
 * only) and an OPENAT filter (no O_CREAT), applied in a child whose seccomp
 * filter makes every io_uring_register(..., BPF_FILTER, ...) fail with
 * ENOMEM, as a kernel out of memory would.  The classic set takes effect,
 * the first filter step fails: -IOUR_ERRNO__PARTIAL, and the report must
 * name exactly SOCKET and OPENAT as left open (a DROPPED decision each:
 * "its argument filter is not registered").  Then every request is
 * checked on the kernel: what the report does not name behaves as the plan
 * says (NOP, READ allowed; WRITE, READV, OPENAT2 denied), and the loosened
 * opcodes are indeed loose (SOCKET AF_INET6 and OPENAT O_CREAT succeed),
 * so the report says neither more nor less than the kernel does.
 */
static int partial_child(void *arg, struct child_msg *m)
{
	static const uint32_t ops[] = { OP_NOP, OP_READ, OP_SOCKET, OP_OPENAT };
	const struct fake_rule nomem = { __NR_io_uring_register, 1, REG_BPF_FILTER, ENOMEM, 0 };
	struct partial_case *c = arg;
	struct iour_report *rep = NULL;
	struct iour_filter *f = NULL;
	struct iour_policy *p = NULL;
	struct iour_plan *pl = NULL;
	struct iour_ruleset *rs;
	uint32_t done = 0, total = 0, first_filter = UINT32_MAX, loose = 0, i;
	struct iour_verify_req creat;
	int32_t err = 0;
	int rc, n, flags;
	char why[1024];

	rs = rs_make(ops, 4, 0, 0, NULL, 0);
	CHK(m, iour_filter__new(NULL, &f) == 0);
	CHK(m, add_cmp(f, OP_SOCKET, IOUR_ALLOW, IOUR_FIELD_SOCKET_FAMILY, IOUR_CMP_EQ, AF_INET_) ==
		       0);
	CHK(m, iour_filter__set_default(f, OP_SOCKET, IOUR_DENY) == 0);
	CHK(m, add_cmp(f, OP_OPENAT, IOUR_DENY, IOUR_FIELD_OPEN_FLAGS, IOUR_CMP_ANY_BITS,
		       O_CREAT_) == 0);
	CHK(m, iour_filter__set_default(f, OP_OPENAT, IOUR_ALLOW) == 0);
	rc = live_policy(&p, IOUR_POLICY_TARGET_TASK, rs, f, IOUR_POLICY_DEFAULT_DENY);
	iour_ruleset__free(rs);
	iour_filter__free(f);
	CHKF(m, rc == 0, "policy: %s", iour_errname(rc));
	rc = iour_policy__plan(p, NULL, &pl);
	CHKF(m, rc == 0, "plan: %s", iour_errname(rc));
	n = iour_plan__step_cnt(pl);
	for (i = 0; i < (uint32_t)n; i++) {
		struct iour_plan_step s = { .sz = sizeof(s) };

		CHK(m, iour_plan__step(pl, i, &s) == 0);
		if (s.op == IOUR_STEP_BPF_FILTER && first_filter == UINT32_MAX)
			first_filter = i;
	}
	CHKF(m, first_filter != UINT32_MAX && first_filter > 0,
	     "the plan has a classic step before its filters (first filter step %u of %d)",
	     first_filter, n);

	/* no_new_privs and the seccomp filter: the kernel now answers every
	 * filter registration with -ENOMEM. */
	rc = fake_kernel_install(&nomem, 1);
	CHKF(m, rc == 0, "seccomp: %d", rc);
	rc = iour_plan__apply_task(pl, NULL, &rep);
	CHKF(m, rc == -IOUR_ERRNO__PARTIAL, "apply_task: %s", iour_errname(rc));
	CHK(m, rep != NULL);
	CHKF(m, iour_report__status(rep) == IOUR_STATUS_PARTIALLY, "status %d",
	     iour_report__status(rep));
	flags = iour_report__flags(rep);
	CHKF(m, (flags & IOUR_REPORT_LOOSENED) && (flags & IOUR_REPORT_STOPPED), "flags %#x",
	     (unsigned)flags);
	CHK(m, iour_report__steps(rep, &done, &total) == 0 && iour_report__error(rep, &err) == 0);
	CHKF(m, done == first_filter && err == -ENOMEM, "%u of %u steps done, error %s", done,
	     total, iour_errname(err));
	n = iour_report__decision_cnt(rep);
	for (i = 0; i < (uint32_t)n; i++) {
		struct iour_decision d = { .sz = sizeof(d) };

		CHK(m, iour_report__decision(rep, i, &d) == 0);
		/* What a report leaves open: a dropped (here: a filter step
		 * that did not run) or loosened decision for the opcode. */
		if (d.kind != IOUR_DECISION_LOOSENED && d.kind != IOUR_DECISION_DROPPED)
			continue;
		CHKF(m, d.opcode == OP_SOCKET || d.opcode == OP_OPENAT,
		     "opcode %u left open is not one of the filtered ones: %s", d.opcode, d.text);
		CHKF(m, d.reason == IOUR_REASON_STEP_FAILED && d.value == -ENOMEM, "%s", d.text);
		loose |= d.opcode == OP_SOCKET ? 1U : 2U;
	}
	live_print_report("partial apply, BPF_FILTER failing with ENOMEM", rep);
	CHKF(m, loose == 3, "the report names SOCKET and OPENAT as left open (mask %u)", loose);
	iour_report__free(rep);
	iour_plan__free(pl);
	iour_policy__free(p);

	creat = live_open(OP_OPENAT, c->created, O_CREAT_ | O_WRONLY, 0, IOUR_EXPECT_ALLOW);
	creat.open_mode = 0600;
	{
		const struct iour_verify_req reqs[] = {
			/* as the plan says */
			live_req(OP_NOP, IOUR_EXPECT_ALLOW),
			live_req(OP_READ, IOUR_EXPECT_ALLOW),
			live_req(OP_WRITE, IOUR_EXPECT_DENY),
			live_req(OP_READV, IOUR_EXPECT_DENY),
			live_open(OP_OPENAT2, "/dev/null", O_RDONLY, 0, IOUR_EXPECT_DENY),
			live_socket(AF_INET_, STREAM, IOUR_EXPECT_ALLOW),
			live_open(OP_OPENAT, "/dev/null", O_RDONLY, 0, IOUR_EXPECT_ALLOW),
			/* loosened, as the report says */
			live_socket(AF_INET6_, STREAM, IOUR_EXPECT_ALLOW),
			creat,
		};

		rc = live_verify(reqs, IOUR_ARRAY_SIZE(reqs), LV_PLAIN, -1, why, sizeof(why));
		CHKF(m, rc == 0, "after the partial apply: %.800s", why);
	}
	CHKF(m, access(c->created, F_OK) == 0, "%s", "the loosened OPENAT created its file");
	return 0;
}

Test(live_task_bpf, partial_apply_report_matches_kernel)
{
	struct partial_case c;

	LIVE_REQUIRE(LIVE_TASK | LIVE_TASK_BPF);
	cr_assert_eq(test_tmp_template(c.dir, sizeof(c.dir), "iour-partial-", NULL), 0);
	cr_assert_not_null(mkdtemp(c.dir));
	snprintf(c.created, sizeof(c.created), "%s/created", c.dir);
	LIVE_CHILD(partial_child, &c);
	unlink(c.created);
	rmdir(c.dir);
	live_log("task {NOP, READ, SOCKET, OPENAT} + 2 filters, BPF_FILTER failing with ENOMEM: "
		 "-IOUR_ERRNO__PARTIAL, left open exactly SOCKET and OPENAT; NOP/READ allowed, "
		 "WRITE/READV/OPENAT2 denied, SOCKET(AF_INET6) and OPENAT(O_CREAT) loose");
}

/* ---- io_uring's checker against the validator (Linux 7.0+) ---- */

/* Register `prog` as a ring filter for NOP: 0 (accepted) or -errno. */
static int kernel_accepts(int ring_fd, const struct iour_insn *prog, size_t n)
{
	struct {
		uint16_t cmd_type, cmd_flags;
		uint32_t resv;
		uint32_t opcode, flags, filter_len;
		uint8_t pdu_size, resv1[3];
		uint64_t filter_ptr, resv2[5];
	} bpf;

	_Static_assert(sizeof(bpf) == 72, "struct io_uring_bpf");
	memset(&bpf, 0, sizeof(bpf));
	bpf.cmd_type = 1; /* IO_URING_BPF_CMD_FILTER */
	bpf.opcode = OP_NOP;
	bpf.filter_len = (uint32_t)n;
	bpf.filter_ptr = (uint64_t)(uintptr_t)prog;
	return (int)reg(ring_fd, REG_BPF_FILTER, &bpf, 1);
}

static void print_prog(const char *what, const struct iour_insn *prog, size_t n)
{
	size_t i;

	fprintf(stderr, "live: %s (%zu instructions):\n", what, n);
	for (i = 0; i < n && i < 64; i++)
		fprintf(stderr, "  { %#06x, %u, %u, %#x },\n", prog[i].code, prog[i].jt, prog[i].jf,
			prog[i].k);
	if (n > 64)
		fprintf(stderr, "  ... %zu more\n", n - 64);
}

/*
 * security.md §4: the validator's io_uring rules accept exactly what the
 * kernel accepts for IORING_REGISTER_BPF_FILTER.  About 1,000 programs
 * near the acceptance boundary (tests/common/cbpf_gen: mutated valid
 * programs and programs built around every limit) are registered as ring
 * filters on throw-away disabled rings; the kernel's answer (0 or -EINVAL)
 * must equal iour_cbpf_validate(..., 0).  Any other kernel answer fails the
 * test.  IOUR_TEST_SEED changes the programs.
 */
Test(live_ring_bpf, validator_matches_io_uring_checker, .timeout = 900)
{
	static struct iour_insn prog[IOUR_MAX_INSNS + 1], base[64];
	struct gen_rng r;
	uint64_t seed = gen_test_seed(0x10a7c4ec4e5ULL);
	size_t total = gen_test_long() ? 20000 : 1000, i, n;
	size_t yes = 0, no = 0, disagree = 0, on_ring = 0;
	struct io_uring ring;

	LIVE_REQUIRE(LIVE_RING_BPF);
	gen_seed(&r, seed);
	cr_assert_eq(ring_init_disabled(&ring, 0), 0);
	for (i = 0; i < total; i++) {
		int mine, kern;

		if (gen_chance(&r, 40)) {
			do
				n = gen_runnable(&r, base, 64);
			while (iour_cbpf_validate(base, n, 0, NULL) != 0);
			memcpy(prog, base, n * sizeof(prog[0]));
			if (gen_chance(&r, 75))
				gen_mutate(&r, prog, n);
		} else {
			n = gen_near_valid(&r, prog, gen_chance(&r, 2) ? IOUR_MAX_INSNS + 1 : 200);
		}
		mine = iour_cbpf_validate(prog, n, 0, NULL);
		cr_assert(mine == 0 || mine == -IOUR_ERRNO__INVALID_PROG);
		kern = kernel_accepts(ring.ring_fd, prog, n);
		cr_assert(kern == 0 || kern == -EINVAL,
			  "program %zu (seed %#llx): the kernel answered %s", i,
			  (unsigned long long)seed, iour_errname(kern));
		if ((mine == 0) != (kern == 0)) {
			char what[160];

			snprintf(what, sizeof(what),
				 "DISAGREEMENT program %zu (seed %#llx): validator %s, kernel %s", i,
				 (unsigned long long)seed, mine ? "rejects" : "accepts",
				 kern ? "rejects" : "accepts");
			print_prog(what, prog, n);
			disagree++;
		}
		yes += kern == 0;
		no += kern != 0;
		/* Accepted filters stay on the ring: start a fresh one now and
		 * then. */
		if (kern == 0 && ++on_ring == 100) {
			io_uring_queue_exit(&ring);
			cr_assert_eq(ring_init_disabled(&ring, 0), 0);
			on_ring = 0;
		}
	}
	io_uring_queue_exit(&ring);
	cr_expect_eq(disagree, 0, "%zu of %zu programs decided differently (seed %#llx)", disagree,
		     total, (unsigned long long)seed);
	cr_expect(yes > total / 5 && no > total / 5, "a mix: %zu accepted, %zu rejected", yes, no);
	live_log("%zu programs (seed %#llx) registered as ring filters: the kernel accepted %zu, "
		 "rejected %zu; the validator disagreed on %zu",
		 total, (unsigned long long)seed, yes, no, disagree);
}
