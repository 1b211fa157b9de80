/* SPDX-License-Identifier: MIT */
/*
 * Fault injection against the emulated kernels: every system call of each
 * plan fails, in turn, with every errno the kernel can return there.  The
 * executor must stop, return the first step's error (nothing applied) or
 * -IOUR_ERRNO__PARTIAL, and its report must match exactly what took
 * effect: the steps done, the emulated kernel's state, and no request the
 * policy forbids may succeed unless the report names its opcode as
 * loosened.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emukernel.h"
#include "iouring_restrict/iouring_restrict.h"
#include "plan/planner.h"
#include "base/sys.h"

#define OP_NOP 0
#define OP_OPENAT 18
#define OP_READ 22
#define OP_SOCKET 45

static const struct iour_insn inet_only[] = {
	{ 0x20, 0, 0, 16 }, { 0x15, 0, 1, 2 }, { 0x06, 0, 0, 1 }, { 0x06, 0, 0, 0 },
};
static const struct iour_insn no_creat[] = {
	{ 0x20, 0, 0, 16 }, { 0x45, 1, 0, 0x40 }, { 0x06, 0, 0, 1 }, { 0x06, 0, 0, 0 },
};

static struct iour_policy *policy(uint32_t target, uint32_t companion)
{
	static const uint32_t ops[] = { OP_NOP, OP_OPENAT, OP_READ, OP_SOCKET };
	struct iour_ruleset *rs;
	struct iour_policy *p;
	size_t i;

	cr_assert_eq(iour_ruleset__new(NULL, &rs), 0);
	for (i = 0; i < 4; i++)
		cr_assert_eq(iour_ruleset__allow_sqe_op(rs, ops[i]), 0);
	cr_assert_eq(iour_ruleset__set_sqe_flags(rs, 0x04, 0), 0);
	cr_assert_eq(iour_policy__new(NULL, &p), 0);
	cr_assert_eq(iour_policy__set_ruleset(p, rs), 0);
	iour_ruleset__free(rs);
	cr_assert_eq(iour_policy__set_prog(p, OP_SOCKET, inet_only, 4, 12), 0);
	cr_assert_eq(iour_policy__set_prog(p, OP_OPENAT, no_creat, 4, 24), 0);
	cr_assert_eq(iour_policy__set_attr(p, IOUR_POLICY_ATTR_TARGET, target), 0);
	cr_assert_eq(iour_policy__set_attr(p, IOUR_POLICY_ATTR_COMPANION, companion), 0);
	return p;
}

enum mode { M_TASK, M_RING, M_CREATE };

struct scenario {
	const char *name;
	enum emu_gen gen;
	uint32_t level;     /* forced plan level */
	uint32_t target;
	uint32_t companion;
	enum mode mode;
};

/* The errnos the kernel can return from the call of one plan step. */
static size_t errnos_for(const struct emu_call *c, int *out)
{
	static const int nnp[] = { EINVAL };
	static const int task_set[] = { EPERM, EACCES, EINVAL, EFAULT, ENOMEM, EOVERFLOW };
	static const int task_bpf[] = { EACCES, EINVAL, EFAULT, ENOMEM, EBUSY, EMSGSIZE };
	static const int ring_set[] = { EBADFD, EBUSY, EINVAL, EFAULT, EOVERFLOW, EACCES, EEXIST,
					ENOMEM };
	static const int ring_bpf[] = { EACCES, EINVAL, EFAULT, ENOMEM, EBUSY, EMSGSIZE, EEXIST };
	static const int enable[] = { EBADFD, EINVAL, EACCES, EEXIST };
	static const int setup[] = { EPERM, ENOSYS, EINVAL, EFAULT, ENOMEM, EMFILE, ENFILE };
	static const int secc[] = { EACCES, EINVAL, EFAULT, ENOMEM };
	const int *l = NULL;
	size_t n = 0;

#define PICK(a) (l = (a), n = IOUR_ARRAY_SIZE(a))
	switch (c->kind) {
	case EMU_CALL_PRCTL: PICK(nnp); break;
	case EMU_CALL_SECCOMP: PICK(secc); break;
	case EMU_CALL_SETUP: PICK(setup); break;
	case EMU_CALL_REGISTER:
		if (c->opcode == 11)
			c->fd == -1 ? PICK(task_set) : PICK(ring_set);
		else if (c->opcode == 37)
			c->fd == -1 ? PICK(task_bpf) : PICK(ring_bpf);
		else if (c->opcode == 12)
			PICK(enable);
		break;
	default:
		break;
	}
#undef PICK
	memcpy(out, l, n * sizeof(*l));
	return n;
}

/* Is this logged call the side-effect-free privilege check? */
static bool is_precheck(const struct emu_call *c)
{
	return c->kind == EMU_CALL_REGISTER && c->fd == -1 && c->opcode == 11 && !c->arg;
}

struct run {
	int rc;
	int fd;
	struct iour_report *rep;
};

static struct run apply(const struct scenario *s, const struct iour_plan *pl, struct emu *e,
			int ring_fd)
{
	struct run r = { .fd = -1 };

	(void)e;
	switch (s->mode) {
	case M_TASK:
		r.rc = iour_plan__apply_task(pl, NULL, &r.rep);
		break;
	case M_RING:
		r.fd = ring_fd;
		r.rc = iour_plan__apply_ring(pl, ring_fd, NULL, &r.rep);
		break;
	case M_CREATE:
		r.rc = iour_plan__create_ring(pl, 8, NULL, NULL, &r.fd, &r.rep);
		break;
	}
	return r;
}

static int disabled_ring(void)
{
	struct kio_params params;
	long fd;

	memset(&params, 0, sizeof(params));
	params.flags = KIO_SETUP_R_DISABLED;
	fd = iour__setup(8, &params);
	cr_assert_geq(fd, 0);
	return (int)fd;
}

/* Every forbidden request that succeeds must have its opcode reported. */
static void check_never_looser(struct emu *e, const struct iour_policy *p,
			       const struct iour_report *rep, int fd, const char *what)
{
	bool declared[256] = { false };
	uint8_t ctx[40];
	int i, status = iour_report__status(rep);
	uint32_t op;

	if (status == IOUR_STATUS_NOT_ENFORCED)
		return;
	for (i = 0; i < iour_report__decision_cnt(rep); i++) {
		struct iour_decision d = { .sz = sizeof(d) };

		cr_assert_eq(iour_report__decision(rep, (size_t)i, &d), 0);
		if ((d.kind == IOUR_DECISION_DROPPED || d.kind == IOUR_DECISION_LOOSENED) &&
		    d.opcode < 256)
			declared[d.opcode] = true;
	}
	if (fd < 0) {
		struct kio_params params;
		long f;

		memset(&params, 0, sizeof(params));
		f = iour__setup(8, &params);
		if (f < 0)
			return; /* e.g. the companion blocks setup: nothing to submit */
		fd = (int)f;
	}
	for (op = 0; op < emu_op_last(e); op++) {
		const struct iour_prog *pp = p->progs[op];
		bool listed = iour__bm_test(&p->rs->sqe_ops, op);
		int got;

		/* A request of the opcode the policy forbids: not listed, a
		 * forbidden flag, or a payload its filter denies. */
		emu_ctx(ctx, op, 0x10 /* ASYNC: never allowed */, 1);
		got = emu_submit(e, fd, ctx);
		cr_expect(got != 0 || declared[op], "%s: opcode %u with ASYNC allowed", what, op);
		if (!listed) {
			emu_ctx(ctx, op, 0, 1);
			got = emu_submit(e, fd, ctx);
			cr_expect(got != 0 || declared[op], "%s: unlisted opcode %u allowed", what,
				  op);
		}
		if (pp && op == OP_SOCKET) {
			emu_ctx_socket(ctx, 10, 1, 0);
			got = emu_submit(e, fd, ctx);
			cr_expect(got != 0 || declared[op], "%s: SOCKET AF_INET6 allowed", what);
		}
		if (pp && op == OP_OPENAT) {
			emu_ctx_open(ctx, OP_OPENAT, 0x8040, 0644, 0);
			got = emu_submit(e, fd, ctx);
			cr_expect(got != 0 || declared[op], "%s: OPENAT O_CREAT allowed", what);
		}
	}
}

static size_t run_scenario(const struct scenario *s)
{
	struct emu_config cfg = { .gen = s->gen };
	struct iour_policy *p = policy(s->target, s->companion);
	struct iour_plan *pl = NULL;
	IOUR_OPTS(iour_plan_opts, o, .flags = IOUR_PLAN_FORCE_LEVEL, .level = s->level);
	struct emu *e;
	struct run clean;
	struct emu_call calls[128];
	size_t ncalls = 0, i, cases = 0;
	int ring_fd = -1, errs[16];

	cr_assert_eq(iour_policy__plan(p, &o, &pl), 0);
	/* A clean run: which seam call carries which step. */
	cr_assert_eq(emu_new(&cfg, &e), 0);
	emu_install(e);
	if (s->mode == M_RING)
		ring_fd = disabled_ring();
	clean = apply(s, pl, e, ring_fd);
	cr_assert_eq(clean.rc, 0, "%s: clean run: %s", s->name, iour_errname(clean.rc));
	for (i = 0; i < emu_log_len(e); i++) {
		const struct emu_call *c = emu_log_at(e, i);

		if (is_precheck(c) || c->kind == EMU_CALL_CLOSE || c->kind == EMU_CALL_ENTER)
			continue;
		if (c->kind == EMU_CALL_PRCTL && c->opcode != 38)
			continue;
		if (s->mode == M_RING && c->kind == EMU_CALL_SETUP)
			continue; /* the test's own ring */
		cr_assert_lt(ncalls, IOUR_ARRAY_SIZE(calls));
		calls[ncalls] = *c;
		calls[ncalls].arg = calls[ncalls].prog = NULL;
		ncalls++;
	}
	iour_report__free(clean.rep);
	emu_uninstall();
	emu_free(e);
	{
		struct iour_plan_info info = { .sz = sizeof(info) };

		cr_assert_eq(iour_plan__info(pl, &info), 0);
		cr_assert_eq(ncalls, s->mode == M_TASK ? info.task_steps :
				     info.ring_steps + (s->mode == M_CREATE),
			     "%s: %zu calls", s->name, ncalls);
	}

	for (i = 0; i < ncalls; i++) {
		size_t nerr = errnos_for(&calls[i], errs), j;

		cr_assert_gt(nerr, 0, "%s: call kind %u", s->name, calls[i].kind);
		for (j = 0; j < nerr; j++) {
			struct emu_fault f = { 0 };
			struct emu_state st;
			struct run r;
			uint32_t done, total;
			int32_t err;
			bool setup_failed = s->mode == M_CREATE && i == 0;
			size_t k = s->mode == M_CREATE ? (i ? i - 1 : 0) : i;
			char what[96];

			snprintf(what, sizeof(what), "emulated %s: call %zu fails with %s",
				 s->name, i, iour_errname(-errs[j]));
			cr_assert_eq(emu_new(&cfg, &e), 0);
			emu_install(e);
			if (s->mode == M_RING)
				ring_fd = disabled_ring();
			f.seq = calls[i].seq;
			f.err = errs[j];
			cr_assert_eq(emu_fault_add(e, &f), 0);
			r = apply(s, pl, e, ring_fd);
			cr_expect_eq(emu_faults_pending(e), 0, "%s: fault not hit", what);
			cr_assert_not_null(r.rep, "%s", what);
			cr_assert_eq(iour_report__steps(r.rep, &done, &total), 0);
			cr_assert_eq(iour_report__error(r.rep, &err), 0);
			cr_expect_eq(err, -errs[j], "%s: report error %d", what, err);
			cr_expect(iour_report__flags(r.rep) & IOUR_REPORT_STOPPED ||
					  setup_failed, "%s", what);
			if (s->mode == M_CREATE) {
				cr_expect_eq(r.rc, -errs[j], "%s: rc %s", what, iour_errname(r.rc));
				cr_expect_eq(done, setup_failed ? 0 : k, "%s: %u done", what, done);
				cr_expect_eq(r.fd, -1, "%s: no fd returned", what);
				cr_expect_eq(iour_report__status(r.rep), IOUR_STATUS_NOT_ENFORCED,
					     "%s", what);
				/* Every ring the call created is closed again. */
				for (size_t q = 0; q < emu_log_len(e); q++) {
					const struct emu_call *lc = emu_log_at(e, q);

					if (lc->kind == EMU_CALL_SETUP && lc->result >= 0)
						cr_expect_eq(emu_ring_state(e, (int)lc->result, &st),
							     -EBADF, "%s: ring left open", what);
				}
			} else {
				/* The emulated kernel's state matches the steps done. */
				size_t q, first = s->mode == M_RING ?
					(size_t)iour_plan__step_cnt(pl) - total : 0;
				bool nnp = false, set = false, companion = false;
				uint32_t filters = 0;

				cr_expect_eq(done, k, "%s: %u steps done", what, done);
				cr_expect_eq(r.rc, k == 0 ? -errs[j] : -IOUR_ERRNO__PARTIAL,
					     "%s: rc %s", what, iour_errname(r.rc));
				for (q = 0; q < done; q++) {
					struct iour_plan_step ps = { .sz = sizeof(ps) };

					cr_assert_eq(iour_plan__step(pl, first + q, &ps), 0);
					nnp |= ps.op == IOUR_STEP_SET_NNP;
					set |= ps.op == IOUR_STEP_RESTRICTIONS;
					companion |= ps.op == IOUR_STEP_COMPANION;
					filters += ps.op == IOUR_STEP_BPF_FILTER;
				}
				if (s->mode == M_TASK) {
					emu_task_state(e, &st);
					cr_expect_eq(emu_nnp(e), nnp, "%s: nnp", what);
					cr_expect_eq(st.registered, set, "%s: task set", what);
					cr_expect_eq(st.total_filters, filters, "%s: filters", what);
					cr_expect_eq(emu_seccomp_count(e), companion ? 1u : 0u,
						     "%s: companion", what);
				} else {
					cr_assert_eq(emu_ring_state(e, ring_fd, &st), 0);
					cr_expect_eq(st.registered, set, "%s: ring set", what);
					cr_expect_eq(st.total_filters, filters, "%s: filters", what);
					cr_expect(st.disabled, "%s: ring still disabled", what);
				}
				if (!set && !filters && !companion)
					cr_expect_eq(iour_report__status(r.rep),
						     IOUR_STATUS_NOT_ENFORCED, "%s", what);
				else
					cr_expect_eq(iour_report__status(r.rep),
						     IOUR_STATUS_PARTIALLY, "%s", what);
				if (s->mode == M_TASK && s->gen >= EMU_GEN_7_0)
					check_never_looser(e, p, r.rep, -1, what);
			}
			iour_report__free(r.rep);
			emu_uninstall();
			emu_free(e);
			cases++;
		}
	}
	iour_plan__free(pl);
	iour_policy__free(p);
	return cases;
}

Test(policy_faults, emulated_every_step_every_errno)
{
	static const struct scenario sc[] = {
		{ "7.0 task", EMU_GEN_7_0, 4, IOUR_POLICY_TARGET_TASK, 0, M_TASK },
		{ "7.0 ring", EMU_GEN_7_0, 4, IOUR_POLICY_TARGET_RING, 0, M_RING },
		{ "7.0 create_ring", EMU_GEN_7_0, 4, IOUR_POLICY_TARGET_RING, 0, M_CREATE },
		{ "7.2 task", EMU_GEN_7_2, 5, IOUR_POLICY_TARGET_TASK, 0, M_TASK },
		{ "6.18 task+companion", EMU_GEN_6_18, 3, IOUR_POLICY_TARGET_TASK,
		  IOUR_POLICY_COMPANION_ENOSYS, M_TASK },
		{ "6.18 ring", EMU_GEN_6_18, 3, IOUR_POLICY_TARGET_RING, 0, M_RING },
		{ "6.1 create_ring", EMU_GEN_6_1, 2, IOUR_POLICY_TARGET_RING, 0, M_CREATE },
	};
	size_t i, total = 0;

	for (i = 0; i < IOUR_ARRAY_SIZE(sc); i++) {
		size_t n = run_scenario(&sc[i]);

		fprintf(stderr, "emulated fault injection, %s: %zu failing calls checked\n",
			sc[i].name, n);
		total += n;
	}
	fprintf(stderr, "emulated fault injection: %zu cases in all\n", total);
}

/*
 * Plans whose report carries TIGHTENED from planning (a closed fallback:
 * an opcode the kernel cannot filter is denied; a task policy the kernel
 * can only hold with the companion), each call of each failing in turn:
 * until an enforcing step (a restriction set, a filter, the companion)
 * has taken effect, nothing is tightened, so the report must say NOT
 * ENFORCED and LOOSENED, with no mechanism and without TIGHTENED
 * (doc/design.md, "Policies, plans, the executor and reports").
 */
struct tight_case {
	const char *name;
	enum emu_gen gen;
	uint32_t level;
	enum mode mode;
	const char *json;
};

#define TIGHT_SOCKET(target)                                                                \
	"{ \"version\": 1, \"target\": \"" target "\", \"noFilterFallback\": \"closed\", "  \
	"\"defaultAction\": \"deny\", \"entries\": [ { \"names\": [\"read\"], \"action\": " \
	"\"allow\" }, { \"names\": [\"socket\"], \"action\": \"allow\", \"args\": [ { "     \
	"\"field\": \"socket.family\", \"op\": \"==\", \"value\": \"AF_INET\" } ] } ] }"
#define TIGHT_CONNECT(target)                                                                 \
	"{ \"version\": 1, \"target\": \"" target "\", \"noFilterFallback\": \"closed\", "    \
	"\"defaultAction\": \"deny\", \"entries\": [ { \"names\": [\"socket\"], \"action\": " \
	"\"allow\", \"args\": [ { \"field\": \"socket.family\", \"op\": \"==\", \"value\": "  \
	"\"AF_INET\" } ] }, { \"names\": [\"connect\"], \"action\": \"allow\", \"args\": [ "  \
	"{ \"field\": \"connect.port\", \"op\": \"==\", \"value\": 443 } ] } ] }"

static bool step_enforces(uint32_t op)
{
	return op == IOUR_STEP_RESTRICTIONS || op == IOUR_STEP_BPF_FILTER ||
	       op == IOUR_STEP_COMPANION;
}

static size_t run_tight_case(const struct tight_case *c)
{
	struct emu_config cfg = { .gen = c->gen };
	struct iour_load_error lerr = { .sz = sizeof(lerr) };
	IOUR_OPTS(iour_plan_opts, o, .flags = IOUR_PLAN_FORCE_LEVEL, .level = c->level);
	struct scenario s = { .name = c->name, .gen = c->gen, .level = c->level, .mode = c->mode };
	struct iour_policy *p = NULL;
	struct iour_plan *pl = NULL;
	struct emu *e;
	struct run clean;
	uint64_t seqs[64];
	size_t nseq = 0, i, cases = 0;
	int ring_fd = -1;

	cr_assert_eq(iour_policy__load_json(c->json, strlen(c->json), NULL, &p, &lerr), 0, "%s: %s",
		     c->name, lerr.message);
	cr_assert_eq(iour_policy__plan(p, &o, &pl), 0, "%s", c->name);
	cr_assert(iour_report__flags(iour_plan__report(pl)) & IOUR_REPORT_TIGHTENED,
		  "%s: the plan is not tightened", c->name);

	cr_assert_eq(emu_new(&cfg, &e), 0);
	emu_install(e);
	if (c->mode == M_RING)
		ring_fd = disabled_ring();
	clean = apply(&s, pl, e, ring_fd);
	cr_assert_eq(clean.rc, 0, "%s: clean run: %s", c->name, iour_errname(clean.rc));
	for (i = 0; i < emu_log_len(e); i++) {
		const struct emu_call *lc = emu_log_at(e, i);

		if (is_precheck(lc) || lc->kind == EMU_CALL_CLOSE || lc->kind == EMU_CALL_ENTER)
			continue;
		if (lc->kind == EMU_CALL_PRCTL && lc->opcode != 38)
			continue;
		if (c->mode == M_RING && lc->kind == EMU_CALL_SETUP)
			continue;
		cr_assert_lt(nseq, IOUR_ARRAY_SIZE(seqs));
		seqs[nseq++] = lc->seq;
	}
	iour_report__free(clean.rep);
	emu_uninstall();
	emu_free(e);
	cr_assert_gt(nseq, 0, "%s: no call", c->name);

	for (i = 0; i < nseq; i++) {
		struct emu_fault f = { .seq = seqs[i], .err = EINVAL };
		uint32_t done, total, flags, q, first;
		bool enforcing = false;
		struct run r;

		cr_assert_eq(emu_new(&cfg, &e), 0);
		emu_install(e);
		if (c->mode == M_RING)
			ring_fd = disabled_ring();
		cr_assert_eq(emu_fault_add(e, &f), 0);
		r = apply(&s, pl, e, ring_fd);
		cr_expect_eq(emu_faults_pending(e), 0, "%s: call %zu: fault not hit", c->name, i);
		cr_assert_not_null(r.rep, "%s: call %zu", c->name, i);
		cr_assert_neq(r.rc, 0, "%s: call %zu failed, apply succeeded", c->name, i);
		cr_assert_eq(iour_report__steps(r.rep, &done, &total), 0);
		first = c->mode == M_TASK ? 0 : (uint32_t)iour_plan__step_cnt(pl) - total;
		for (q = 0; q < done && c->mode != M_CREATE; q++) {
			struct iour_plan_step ps = { .sz = sizeof(ps) };

			cr_assert_eq(iour_plan__step(pl, first + q, &ps), 0);
			enforcing |= step_enforces(ps.op);
		}
		flags = (uint32_t)iour_report__flags(r.rep);
		if (!enforcing) {
			cr_expect_eq(iour_report__status(r.rep), IOUR_STATUS_NOT_ENFORCED,
				     "%s: call %zu: status %d", c->name, i,
				     iour_report__status(r.rep));
			cr_expect(flags & IOUR_REPORT_LOOSENED, "%s: call %zu: flags %#x", c->name,
				  i, flags);
			cr_expect(!(flags & IOUR_REPORT_TIGHTENED),
				  "%s: call %zu: nothing enforcing took effect, flags %#x", c->name,
				  i, flags);
			cr_expect_eq(iour_report__mechanism(r.rep), IOUR_MECH_NONE, "%s: call %zu",
				     c->name, i);
		} else {
			cr_expect_eq(iour_report__status(r.rep), IOUR_STATUS_PARTIALLY,
				     "%s: call %zu: status %d", c->name, i,
				     iour_report__status(r.rep));
		}
		iour_report__free(r.rep);
		if (r.fd >= 0 && c->mode == M_CREATE)
			iour__close(r.fd);
		emu_uninstall();
		emu_free(e);
		cases++;
	}
	iour_plan__free(pl);
	iour_policy__free(p);
	return cases;
}

static void run_tight_cases(const struct tight_case *tc, size_t n)
{
	size_t i, total = 0;

	for (i = 0; i < n; i++)
		total += run_tight_case(&tc[i]);
	fprintf(stderr, "tightened plans: %zu failing calls checked\n", total);
}

Test(policy_faults, tightened_ring_plan_not_tightened_before_enforcement)
{
	static const struct tight_case tc[] = {
		{ "6.18 ring, no filters", EMU_GEN_6_18, 3, M_RING, TIGHT_SOCKET("ring") },
		{ "6.1 ring, no filters", EMU_GEN_6_1, 2, M_RING, TIGHT_CONNECT("ring") },
		{ "7.0 ring, no CONNECT payload", EMU_GEN_7_0, 4, M_RING, TIGHT_CONNECT("ring") },
		{ "7.0 create_ring, no CONNECT payload", EMU_GEN_7_0, 4, M_CREATE,
		  TIGHT_CONNECT("ring") },
	};

	run_tight_cases(tc, IOUR_ARRAY_SIZE(tc));
}

/* Task plans install a seccomp program (the companion, the ringless
 * guard), which the emulated kernel checks with the real seccomp checker
 * (not under valgrind: mk/valgrind.mk). */
Test(policy_faults, tightened_task_plan_not_tightened_before_enforcement)
{
	static const struct tight_case tc[] = {
		{ "6.18 task, companion", EMU_GEN_6_18, 3, M_TASK, TIGHT_SOCKET("task") },
		{ "7.0 task, no CONNECT payload", EMU_GEN_7_0, 4, M_TASK, TIGHT_CONNECT("task") },
	};

	run_tight_cases(tc, IOUR_ARRAY_SIZE(tc));
}
