/* SPDX-License-Identifier: MIT */
/*
 * Ring apply and create: every documented error code, clamping on the real
 * kernel, the report, cleanup of the create helper, SINGLE_ISSUER, bad
 * input.  Faults the real kernel cannot be made to produce (-ENOMEM from
 * registration, a failing enable) are injected through the syscall seam;
 * a kernel reporting wrong limits is emulated the same way.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "child.h"
#include "iouring_restrict/iouring_restrict.h"
#include "probe/probe_answers.h"
#include "ring_util.h"
#include "base/sys.h"
#include "uring_avail.h"

/* ---- fault injection through the seam ------------------------------------ */

struct fault {
	int setup;        /* -errno returned by io_uring_setup, 0: real */
	int restrictions; /* -errno returned for REGISTER_RESTRICTIONS, 0: real */
	int enable;       /* -errno returned for REGISTER_ENABLE_RINGS, 0: real */
	int setup_calls, register_calls, close_calls;
	int last_setup_fd, last_closed;
	int query_reg;    /* if set: QUERY reports this many register opcodes */
};
static struct fault flt;

static long f_setup(void *ctx, uint32_t entries, void *params)
{
	long r = flt.setup ? flt.setup : iour__sys_real()->io_uring_setup(ctx, entries, params);

	flt.setup_calls++;
	flt.last_setup_fd = (int)r;
	return r;
}

static long f_register(void *ctx, int fd, uint32_t op, void *arg, uint32_t nr)
{
	long r;

	flt.register_calls++;
	if (op == KIO_REGISTER_RESTRICTIONS && flt.restrictions)
		return flt.restrictions;
	if (op == KIO_REGISTER_ENABLE_RINGS && flt.enable)
		return flt.enable;
	r = iour__sys_real()->io_uring_register(ctx, fd, op, arg, nr);
	if (op == KIO_REGISTER_QUERY && r == 0 && flt.query_reg) {
		struct kio_query_hdr *h = arg;

		((struct kio_query_opcode *)(uintptr_t)h->query_data)->nr_register_opcodes =
			(uint32_t)flt.query_reg;
	}
	return r;
}

static long f_close(void *ctx, int fd)
{
	flt.close_calls++;
	flt.last_closed = fd;
	return iour__sys_real()->close(ctx, fd);
}

static struct iour_sys_ops fault_ops;

/* Probe first (so the probe's own calls are not counted), then count. */
static void fault_install(void)
{
	cr_assert_geq(iour_feature_level(), IOUR_LEVEL_RING);
	fault_ops = *iour__sys_real();
	fault_ops.io_uring_setup = f_setup;
	fault_ops.io_uring_register = f_register;
	fault_ops.close = f_close;
	memset(&flt, 0, sizeof(flt));
	iour__sys_set(&fault_ops);
}

static struct iour_ruleset *nop_only(void)
{
	uint32_t op = IORING_OP_NOP;

	return rs_make(&op, 1, 0, 0, NULL, -1);
}

static int nop_res(struct io_uring *ring)
{
	int res = 1;
	struct io_uring_sqe *s = io_uring_get_sqe(ring);

	io_uring_prep_nop(s);
	cr_assert_eq(ring_submit_wait(ring, s, &res), 1);
	return res;
}

static int write_res(struct io_uring *ring)
{
	static const char msg[] = "x";
	int res = 1, fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	struct io_uring_sqe *s = io_uring_get_sqe(ring);

	io_uring_prep_write(s, fd, msg, 1, 0);
	cr_assert_eq(ring_submit_wait(ring, s, &res), 1);
	close(fd);
	return res;
}

/* ---- the errno contract of iour_ring_apply() ------------------------------ */

Test(ring_api, ebadfd_ring_not_created_disabled)
{
	UNIT_REQUIRE_URING();
	struct iour_ruleset *rs = nop_only();
	struct iour_ring_report rep = { .sz = sizeof(rep) };
	IOUR_OPTS(iour_ring_apply_opts, o, .report = &rep);
	struct io_uring ring;

	cr_assert_eq(io_uring_queue_init(8, &ring, 0), 0);
	cr_assert_eq(iour_ring_apply(ring.ring_fd, rs, &o), -EBADFD);
	cr_assert_eq(rep.registered, 0);
	cr_assert_eq(rep.enabled, 0);
	cr_assert_gt(rep.nr_entries, 0);
	cr_assert_eq(write_res(&ring), 1, "the ring must stay unrestricted");
	io_uring_queue_exit(&ring);
	iour_ruleset__free(rs);
}

Test(ring_api, ebadfd_already_enabled)
{
	UNIT_REQUIRE_URING();
	struct iour_ruleset *rs = nop_only();
	struct io_uring ring;

	/* enabled without restrictions: the kernel's -EBADFD */
	cr_assert_eq(ring_init_disabled(&ring, 0), 0);
	cr_assert_eq(iour_ring_enable(ring.ring_fd), 0);
	cr_assert_eq(iour_ring_apply(ring.ring_fd, rs, NULL), -EBADFD);
	cr_assert_eq(iour_ring_enable(ring.ring_fd), -EBADFD);
	io_uring_queue_exit(&ring);

	/* restricted and enabled, register ops open: the kernel's -EBADFD */
	cr_assert_eq(ring_init_disabled(&ring, 0), 0);
	cr_assert_eq(iour_ring_apply(ring.ring_fd, rs, NULL), 0);
	cr_assert_eq(io_uring_register(ring.ring_fd, IORING_REGISTER_RESTRICTIONS, NULL, 0),
		     -EBADFD);
	cr_assert_eq(iour_ring_apply(ring.ring_fd, rs, NULL), -EBADFD);
	cr_assert_eq(iour_ring_enable(ring.ring_fd), -EBADFD);
	cr_assert_eq(nop_res(&ring), 0);
	cr_assert_eq(write_res(&ring), -EACCES);
	io_uring_queue_exit(&ring);
	iour_ruleset__free(rs);

	/* restricted and enabled, register ops closed: the register gate
	 * answers -EACCES before the handler */
	uint32_t op = IORING_OP_NOP;
	rs = rs_make(&op, 1, 0, 0, NULL, 0);
	cr_assert_eq(ring_init_disabled(&ring, 0), 0);
	cr_assert_eq(iour_ring_apply(ring.ring_fd, rs, NULL), 0);
	cr_assert_eq(io_uring_register(ring.ring_fd, IORING_REGISTER_RESTRICTIONS, NULL, 0),
		     -EACCES);
	cr_assert_eq(io_uring_register(ring.ring_fd, IORING_REGISTER_ENABLE_RINGS, NULL, 0),
		     -EACCES);
	cr_assert_eq(iour_ring_apply(ring.ring_fd, rs, NULL), -EBADFD);
	cr_assert_eq(iour_ring_enable(ring.ring_fd), -EBADFD);
	cr_assert_eq(nop_res(&ring), 0);
	io_uring_queue_exit(&ring);
	iour_ruleset__free(rs);
}

Test(ring_api, ebusy_second_apply)
{
	UNIT_REQUIRE_URING();
	struct iour_ruleset *rs = nop_only();
	IOUR_OPTS(iour_ring_apply_opts, o, .flags = IOUR_RING_APPLY_NO_ENABLE);
	struct io_uring ring;

	cr_assert_eq(ring_init_disabled(&ring, 0), 0);
	cr_assert_eq(iour_ring_apply(ring.ring_fd, rs, &o), 0);
	cr_assert_eq(iour_ring_apply(ring.ring_fd, rs, &o), -EBUSY);
	cr_assert_eq(iour_ring_apply(ring.ring_fd, rs, NULL), -EBUSY);
	cr_assert_eq(iour_ring_enable(ring.ring_fd), 0);
	cr_assert_eq(nop_res(&ring), 0);
	cr_assert_eq(write_res(&ring), -EACCES);
	io_uring_queue_exit(&ring);
	iour_ruleset__free(rs);
}

Test(ring_api, ebadf_and_eopnotsupp)
{
	UNIT_REQUIRE_URING();
	struct iour_ruleset *rs = nop_only();
	int p[2], efd = eventfd(0, EFD_CLOEXEC);

	fault_install();
	/* Negative descriptors never reach the kernel (fd -1 would be the
	 * task path on Linux 7.0). */
	cr_assert_eq(iour_ring_apply(-1, rs, NULL), -EBADF);
	cr_assert_eq(iour_ring_apply(-2, rs, NULL), -EBADF);
	cr_assert_eq(iour_ring_apply(INT32_MIN, rs, NULL), -EBADF);
	cr_assert_eq(iour_ring_enable(-1), -EBADF);
	cr_assert_eq(flt.register_calls, 0, "a negative fd reached the kernel");
	/* A closed descriptor: the kernel's -EBADF. */
	cr_assert_eq(iour_ring_apply(4000, rs, NULL), -EBADF);
	cr_assert_eq(iour_ring_enable(4000), -EBADF);
	/* Not an io_uring. */
	cr_assert_eq(pipe(p), 0);
	cr_assert_eq(iour_ring_apply(p[0], rs, NULL), -EOPNOTSUPP);
	cr_assert_eq(iour_ring_apply(efd, rs, NULL), -EOPNOTSUPP);
	cr_assert_eq(iour_ring_enable(p[1]), -EOPNOTSUPP);
	iour__sys_set(NULL);
	close(p[0]);
	close(p[1]);
	close(efd);
	iour_ruleset__free(rs);
}

Test(ring_api, einval_e2big_enomsg_before_any_syscall)
{
	UNIT_REQUIRE_URING();
	struct iour_ruleset *rs = nop_only(), *undecided = NULL;
	struct iour_ring_report rep = { .sz = 4 };
	struct {
		struct iour_ring_apply_opts o;
		uint64_t extra;
	} big = { { .sz = sizeof(big) }, 7 };
	IOUR_OPTS(iour_ring_apply_opts, o);
	struct io_uring ring;

	cr_assert_eq(iour_ruleset__new(NULL, &undecided), 0);
	cr_assert_eq(iour_ruleset__allow_sqe_op(undecided, IORING_OP_NOP), 0);
	cr_assert_eq(ring_init_disabled(&ring, 0), 0);
	fault_install();

	cr_assert_eq(iour_ring_apply(ring.ring_fd, NULL, NULL), -EINVAL);
	o.sz = 4;
	cr_assert_eq(iour_ring_apply(ring.ring_fd, rs, &o), -EINVAL);
	o.sz = sizeof(o);
	o.flags = 1ULL << 9;
	cr_assert_eq(iour_ring_apply(ring.ring_fd, rs, &o), -EINVAL);
	o.flags = 0;
	o.report = &rep;
	cr_assert_eq(iour_ring_apply(ring.ring_fd, rs, &o), -EINVAL);
	rep.sz = 5000;
	cr_assert_eq(iour_ring_apply(ring.ring_fd, rs, &o), -EINVAL);
	cr_assert_eq(iour_ring_apply(ring.ring_fd, rs, &big.o), -E2BIG);
	cr_assert_eq(iour_ring_apply(ring.ring_fd, undecided, NULL), -ENOMSG);
	cr_assert_eq(flt.register_calls, 0, "bad input reached the kernel");
	cr_assert_eq(flt.setup_calls, 0);

	/* Nothing happened to the ring: a valid apply still works. */
	big.extra = 0;
	cr_assert_eq(iour_ring_apply(ring.ring_fd, rs, &big.o), 0);
	cr_assert_eq(flt.register_calls, 2);
	iour__sys_set(NULL);
	cr_assert_eq(nop_res(&ring), 0);
	io_uring_queue_exit(&ring);
	iour_ruleset__free(rs);
	iour_ruleset__free(undecided);
}

static int forced_level_child(void *arg, struct child_msg *m)
{
	struct iour_ruleset *rs = nop_only();
	struct io_uring ring;
	int fd = 77;

	(void)arg;
	setenv("IOUR_FEATURE_LEVEL", "1", 1);
	CHK(m, ring_init_disabled(&ring, 0) == 0);
	CHK(m, iour_ring_apply(ring.ring_fd, rs, NULL) == -IOUR_ERRNO__UNSUPPORTED);
	CHK(m, iour_ring_create(8, NULL, rs, NULL, &fd) == -IOUR_ERRNO__UNSUPPORTED);
	CHK(m, fd == -1);
	/* the ring was not touched: without the override it applies */
	unsetenv("IOUR_FEATURE_LEVEL");
	IOUR_OPTS(iour_probe_opts, po, .flags = IOUR_PROBE_REFRESH);
	struct iour_features f = { .sz = sizeof(f) };
	CHK(m, iour_probe(&po, &f) == 0 && f.level >= IOUR_LEVEL_RING);
	CHK(m, iour_ring_apply(ring.ring_fd, rs, NULL) == 0);
	CHK(m, nop_res(&ring) == 0);
	CHK(m, write_res(&ring) == -EACCES);
	io_uring_queue_exit(&ring);
	iour_ruleset__free(rs);
	return 0;
}

Test(ring_api, unsupported_when_level_forced_below_ring)
{
	UNIT_REQUIRE_URING();
	struct child_msg m;

	cr_assert_eq(child_run(forced_level_child, NULL, &m), 0, "%s", m.text);
}

/* fork fails with *arg: EPERM means no probe child (-ECHILD); EAGAIN is
 * a resource shortage, reported as itself. */
static int probe_fails_child(void *arg, struct child_msg *m)
{
	const int err = *(const int *)arg;
	const int want = err == EAGAIN ? -EAGAIN : -ECHILD;
	const struct fake_rule rules[] = {
		{ __NR_clone, -1, 0, err, 0 },
		{ __NR_clone3, -1, 0, ENOSYS, 0 },
	};
	struct iour_ruleset *rs = nop_only();
	struct io_uring ring;
	int fd = 5;

	CHK(m, ring_init_disabled(&ring, 0) == 0);
	CHK(m, fake_kernel_install(rules, 2) == 0);
	CHK(m, iour_ring_apply(ring.ring_fd, rs, NULL) == want);
	CHK(m, iour_ring_create(8, NULL, rs, NULL, &fd) == want);
	CHK(m, fd == -1);
	return 0;
}

Test(ring_api, echild_when_the_probe_cannot_run)
{
	UNIT_REQUIRE_URING();
	int err = EPERM;
	struct child_msg m;

	cr_assert_eq(child_run(probe_fails_child, &err, &m), 0, "%s", m.text);
	err = EAGAIN;
	cr_assert_eq(child_run(probe_fails_child, &err, &m), 0, "EAGAIN: %s", m.text);
}

Test(ring_api, injected_enomem_and_unexpected_errors)
{
	UNIT_REQUIRE_URING();
	struct iour_ruleset *rs = nop_only();
	struct iour_ring_report rep = { .sz = sizeof(rep) };
	IOUR_OPTS(iour_ring_apply_opts, o, .report = &rep);
	struct io_uring ring;

	cr_assert_eq(ring_init_disabled(&ring, 0), 0);
	fault_install();
	flt.restrictions = -ENOMEM;
	cr_assert_eq(iour_ring_apply(ring.ring_fd, rs, &o), -ENOMEM);
	cr_assert_eq(rep.registered, 0);
	/* An errno the kernel interface never gives here is not passed on. */
	flt.restrictions = -EIO;
	cr_assert_eq(iour_ring_apply(ring.ring_fd, rs, &o), -IOUR_ERRNO__INTERNAL);
	/* Registration works, enabling fails: registered, not enabled. */
	flt.restrictions = 0;
	flt.enable = -ENOMEM;
	cr_assert_eq(iour_ring_apply(ring.ring_fd, rs, &o), -ENOMEM);
	cr_assert_eq(rep.registered, 1);
	cr_assert_eq(rep.enabled, 0);
	iour__sys_set(NULL);
	/* The ring is restricted and still disabled. */
	cr_assert_eq(iour_ring_apply(ring.ring_fd, rs, NULL), -EBUSY);
	cr_assert_eq(iour_ring_enable(ring.ring_fd), 0);
	cr_assert_eq(write_res(&ring), -EACCES);
	io_uring_queue_exit(&ring);
	iour_ruleset__free(rs);
}

Test(ring_api, emulated_wrong_limits_give_kernel_mismatch)
{
	UNIT_REQUIRE_URING();
	/* A probe that believes the kernel has register opcode 37: the real
	 * kernel rejects the entry, and the library says the kernel and its
	 * reported limits disagree. */
	struct iour_ruleset *rs;
	uint32_t reg = 37;
	struct io_uring ring;
	struct iour_features f = { .sz = sizeof(f) };
	IOUR_OPTS(iour_probe_opts, po, .flags = IOUR_PROBE_REFRESH);
	int fd = 3;

	fault_install();
	flt.query_reg = 38;
	cr_assert_eq(iour_probe(&po, &f), 0);
	if (f.reg_last != 38)
		cr_skip_test("kernel without QUERY");
	rs = rs_make(NULL, -1, 0x7f, 0, &reg, 1);
	cr_assert_eq(ring_init_disabled(&ring, 0), 0);
	cr_assert_eq(iour_ring_apply(ring.ring_fd, rs, NULL), -IOUR_ERRNO__KERNEL_MISMATCH);
	cr_assert_eq(iour_ring_create(8, NULL, rs, NULL, &fd), -IOUR_ERRNO__KERNEL_MISMATCH);
	cr_assert_eq(fd, -1);
	cr_assert_eq(flt.last_closed, flt.last_setup_fd);
	iour__sys_set(NULL);
	io_uring_queue_exit(&ring);
	iour_ruleset__free(rs);
}

/* ---- clamping and the report --------------------------------------------- */

Test(ring_api, clamping_on_the_running_kernel)
{
	UNIT_REQUIRE_URING();
	uint32_t ops[] = { IORING_OP_NOP, 63, 64 };
	uint32_t regs[] = { IORING_REGISTER_PROBE, 36, 37 };
	struct iour_ruleset *rs = rs_make(ops, 3, 0, 0, regs, 3);
	struct iour_ring_report rep = { .sz = sizeof(rep) };
	IOUR_OPTS(iour_ring_apply_opts, o, .report = &rep);
	struct iour_features f = { .sz = sizeof(f) };
	struct io_uring ring;
	uint32_t want_sqe = 0, want_reg = 0;

	cr_assert_eq(iour_probe(NULL, &f), 0);
	for (int i = 1; i < 3; i++) {
		want_sqe += ops[i] >= f.op_last;
		want_reg += regs[i] >= f.reg_last;
	}
	cr_assert_eq(ring_init_disabled(&ring, 0), 0);
	cr_assert_eq(iour_ring_apply(ring.ring_fd, rs, &o), 0);
	cr_log_info("kernel op_last %u reg_last %u: %u request and %u register opcodes clamped, "
		    "%u entries", f.op_last, f.reg_last, rep.n_clamped_sqe_ops,
		    rep.n_clamped_register_ops, rep.nr_entries);
	cr_assert_eq(rep.n_clamped_sqe_ops, want_sqe);
	cr_assert_eq(rep.n_clamped_register_ops, want_reg);
	for (int i = 1; i < 3; i++) {
		cr_assert_eq(!!(rep.clamped_sqe_ops[ops[i] / 64] & (1ULL << (ops[i] % 64))),
			     ops[i] >= f.op_last);
		cr_assert_eq(!!(rep.clamped_register_ops[regs[i] / 64] & (1ULL << (regs[i] % 64))),
			     regs[i] >= f.reg_last);
	}
	cr_assert_eq(rep.clamped_sqe_ops[0] & ~(1ULL << 63), 0);
	cr_assert_eq(rep.clamped_sqe_ops[1] & ~1ULL, 0);
	if (f.op_last == 63 && f.reg_last == 36) { /* this 6.18 machine */
		cr_assert_eq(rep.n_clamped_sqe_ops, 2);
		cr_assert_eq(rep.n_clamped_register_ops, 2);
	}
	cr_assert_eq(rep.registered, 1);
	cr_assert_eq(rep.enabled, 1);
	cr_assert_eq(nop_res(&ring), 0);
	cr_assert_eq(write_res(&ring), -EACCES);
	struct io_uring_probe *p = calloc(1, sizeof(*p) + 256 * sizeof(p->ops[0]));
	cr_assert_eq(io_uring_register_probe(&ring, p, 256), 0);
	free(p);
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	cr_assert_eq(io_uring_register_files(&ring, &fd, 1), -EACCES);
	close(fd);
	io_uring_queue_exit(&ring);
	iour_ruleset__free(rs);
}

Test(ring_api, report_matches_export_for_the_probed_kernel)
{
	UNIT_REQUIRE_URING();
	uint32_t ops[] = { IORING_OP_NOP, IORING_OP_READ, IORING_OP_WRITE };
	struct iour_ruleset *rs = rs_make(ops, 3, IOSQE_ASYNC, IOSQE_IO_LINK, NULL, -1);
	struct iour_features f = { .sz = sizeof(f) };
	unsigned char buf[sizeof(struct iour_ring_report) + 32];
	struct iour_ring_report *rep = (struct iour_ring_report *)buf;
	IOUR_OPTS(iour_ring_apply_opts, o, .flags = IOUR_RING_APPLY_NO_ENABLE, .report = rep);
	struct io_uring ring;
	size_t len = 0;
	int n;

	cr_assert_eq(iour_probe(NULL, &f), 0);
	IOUR_OPTS(iour_export_opts, eo, .op_last = f.op_last, .reg_last = f.reg_last,
		  .flags = f.split_gates ? IOUR_EXPORT_SPLIT : IOUR_EXPORT_COUPLED);
	n = iour_ruleset__export(rs, &eo, NULL, &len);
	cr_assert_gt(n, 0);

	memset(buf, 0xa5, sizeof(buf));
	rep->sz = sizeof(buf);
	cr_assert_eq(ring_init_disabled(&ring, 0), 0);
	cr_assert_eq(iour_ring_apply(ring.ring_fd, rs, &o), 0);
	cr_assert_eq(rep->nr_entries, (uint32_t)n);
	cr_assert_eq(rep->op_last, f.op_last);
	cr_assert_eq(rep->reg_last, f.reg_last);
	cr_assert_eq(rep->split_gates, f.split_gates);
	cr_assert_eq(rep->registered, 1);
	cr_assert_eq(rep->enabled, 0);
	for (size_t i = sizeof(*rep); i < sizeof(buf); i++)
		cr_assert_eq(buf[i], 0, "report tail byte %zu not zeroed", i);
	io_uring_queue_exit(&ring);

	/* An older, smaller report: whole fields only, nothing beyond. */
	memset(buf, 0xa5, sizeof(buf));
	rep->sz = offsetof(struct iour_ring_report, nr_entries) + 2;
	o.flags = 0;
	cr_assert_eq(ring_init_disabled(&ring, 0), 0);
	cr_assert_eq(iour_ring_apply(ring.ring_fd, rs, &o), 0);
	cr_assert_eq(rep->registered, 1);
	cr_assert_eq(rep->enabled, 1);
	for (size_t i = offsetof(struct iour_ring_report, nr_entries); i < sizeof(buf); i++)
		cr_assert_eq(buf[i], 0xa5, "byte %zu written past the caller's report", i);
	/* NOP needs IO_LINK now; ASYNC is allowed on top. */
	struct io_uring_sqe *s = io_uring_get_sqe(&ring);
	int res;
	io_uring_prep_nop(s);
	cr_assert_eq(ring_submit_wait(&ring, s, &res), 1);
	cr_assert_eq(res, -EACCES);
	s = io_uring_get_sqe(&ring);
	io_uring_prep_nop(s);
	s->flags = IOSQE_IO_LINK | IOSQE_ASYNC;
	cr_assert_eq(ring_submit_wait(&ring, s, &res), 1);
	cr_assert_eq(res, 0);
	io_uring_queue_exit(&ring);
	iour_ruleset__free(rs);
}

/* ---- iour_ring_create() -------------------------------------------------- */

Test(ring_api, create_then_map_with_liburing)
{
	UNIT_REQUIRE_URING();
	uint32_t ops[] = { IORING_OP_NOP, IORING_OP_READ };
	struct iour_ruleset *rs = rs_make(ops, 2, 0, 0, NULL, 0);
	struct io_uring_params p;
	struct io_uring ring;
	int fd = -5;

	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_CQSIZE;
	p.cq_entries = 64;
	cr_assert_eq(iour_ring_create(8, &p, rs, NULL, &fd), 0);
	cr_assert_geq(fd, 0);
	cr_assert_eq(p.flags, IORING_SETUP_CQSIZE, "caller's flags must be left as set");
	cr_assert_eq(p.sq_entries, 8);
	cr_assert_eq(p.cq_entries, 64);
	cr_assert_neq(p.features, 0);
	cr_assert(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	cr_assert_eq(ring_mmap(fd, &p, &ring), 0);
	cr_assert_eq(nop_res(&ring), 0);
	cr_assert_eq(write_res(&ring), -EACCES);
	/* the register side is an empty allow-list */
	cr_assert_eq(io_uring_register(fd, IORING_REGISTER_PROBE, NULL, 0), -EACCES);
	io_uring_queue_exit(&ring);
	iour_ruleset__free(rs);
}

Test(ring_api, create_without_params)
{
	UNIT_REQUIRE_URING();
	struct iour_ruleset *rs = nop_only();
	struct iour_ring_report rep = { .sz = sizeof(rep) };
	IOUR_OPTS(iour_ring_create_opts, o, .report = &rep);
	int fd = -5;

	cr_assert_eq(iour_ring_create(4, NULL, rs, &o, &fd), 0);
	cr_assert_geq(fd, 0);
	cr_assert_eq(rep.registered, 1);
	cr_assert_eq(rep.enabled, 1);
	/* enabled and restricted: a second apply is refused */
	cr_assert_eq(iour_ring_apply(fd, rs, NULL), -EBADFD);
	close(fd);
	iour_ruleset__free(rs);
}

Test(ring_api, create_failures_close_the_ring_and_leak_nothing)
{
	UNIT_REQUIRE_URING();
	struct iour_ruleset *rs = nop_only(), *undecided = NULL;
	struct io_uring_params p;
	int fds0, fd, n = 0;

	cr_assert_eq(iour_ruleset__new(NULL, &undecided), 0);
	cr_assert_eq(iour_ruleset__allow_sqe_op(undecided, IORING_OP_NOP), 0);
	fault_install();
	fds0 = count_fds();

	/* Refused before the ring exists. */
	fd = 9;
	cr_assert_eq(iour_ring_create(8, NULL, undecided, NULL, &fd), -ENOMSG);
	cr_assert_eq(fd, -1);
	fd = 9;
	cr_assert_eq(iour_ring_create(0, NULL, rs, NULL, &fd), -EINVAL);
	cr_assert_eq(fd, -1);
	cr_assert_eq(flt.setup_calls, 0);
	n += 2;

	/* Refused by the kernel's io_uring_setup(). */
	fd = 9;
	cr_assert_eq(iour_ring_create(1U << 20, NULL, rs, NULL, &fd), -EINVAL);
	cr_assert_eq(fd, -1);
	memset(&p, 0, sizeof(p));
	p.flags = 1U << 30;
	fd = 9;
	cr_assert_eq(iour_ring_create(8, &p, rs, NULL, &fd), -EINVAL);
	cr_assert_eq(p.flags, 1U << 30);
	cr_assert_eq(fd, -1);
	n += 2;

	/* The ring exists, then registration or enabling fails: it must be
	 * closed, and the caller gets -1. */
	static const struct { int restrictions, enable, want; } inj[] = {
		{ -ENOMEM, 0, -ENOMEM },
		{ -EBUSY, 0, -EBUSY }, /* 7.0: new rings inherit the task's set */
		{ -EINVAL, 0, -IOUR_ERRNO__KERNEL_MISMATCH },
		{ -EACCES, 0, -IOUR_ERRNO__KERNEL_MISMATCH },
		{ -EIO, 0, -IOUR_ERRNO__INTERNAL },
		{ 0, -EBADFD, -IOUR_ERRNO__KERNEL_MISMATCH },
		{ 0, -ENOMEM, -ENOMEM },
	};
	for (size_t i = 0; i < sizeof(inj) / sizeof(inj[0]); i++, n++) {
		int closes = flt.close_calls;

		flt.restrictions = inj[i].restrictions;
		flt.enable = inj[i].enable;
		fd = 9;
		cr_assert_eq(iour_ring_create(8, NULL, rs, NULL, &fd), inj[i].want,
			     "injection %zu", i);
		cr_assert_eq(fd, -1);
		cr_assert_eq(flt.close_calls, closes + 1);
		cr_assert_eq(flt.last_closed, flt.last_setup_fd);
		cr_assert_eq(count_fds(), fds0, "injection %zu leaked an fd", i);
	}
	flt.restrictions = flt.enable = 0;

	/* Resource errors of io_uring_setup() are passed on. */
	static const int setup_errs[] = { -ENFILE, -ENOMEM, -EMFILE, -EPERM, -ENOSYS, -EFAULT };
	for (size_t i = 0; i < sizeof(setup_errs) / sizeof(setup_errs[0]); i++, n++) {
		int want = setup_errs[i] == -EFAULT ? -IOUR_ERRNO__INTERNAL : setup_errs[i];

		flt.setup = setup_errs[i];
		fd = 9;
		cr_assert_eq(iour_ring_create(8, NULL, rs, NULL, &fd), want, "setup %d", setup_errs[i]);
		cr_assert_eq(fd, -1);
	}
	iour__sys_set(NULL);
	cr_assert_eq(count_fds(), fds0);
	cr_log_info("%d create failures, no descriptor leaked", n);
	iour_ruleset__free(rs);
	iour_ruleset__free(undecided);
}

static int create_kernel_refusals_child(void *arg, struct child_msg *m)
{
	static const struct fake_rule eperm[] = { { __NR_io_uring_setup, -1, 0, EPERM, 0 } };
	struct iour_ruleset *rs = nop_only();
	struct rlimit rl;
	int fd = 3, r;

	(void)arg;
	/* the probe is cached while io_uring still works */
	CHK(m, iour_feature_level() >= IOUR_LEVEL_RING);
	getrlimit(RLIMIT_NOFILE, &rl);
	rl.rlim_cur = 0; /* no new descriptor at all */
	CHK(m, setrlimit(RLIMIT_NOFILE, &rl) == 0);
	r = iour_ring_create(8, NULL, rs, NULL, &fd);
	CHKF(m, r == -EMFILE, "%s", iour_errname(r));
	CHK(m, fd == -1);
	rl.rlim_cur = rl.rlim_max;
	setrlimit(RLIMIT_NOFILE, &rl);
	CHK(m, fake_kernel_install(eperm, 1) == 0);
	r = iour_ring_create(8, NULL, rs, NULL, &fd);
	CHKF(m, r == -EPERM, "%s", iour_errname(r));
	CHK(m, fd == -1);
	return 0;
}

static int create_enosys_child(void *arg, struct child_msg *m)
{
	static const struct fake_rule enosys[] = { { __NR_io_uring_setup, -1, 0, ENOSYS, 0 } };
	struct iour_ruleset *rs = nop_only();
	int fd = 3, r;

	(void)arg;
	CHK(m, iour_feature_level() >= IOUR_LEVEL_RING);
	CHK(m, fake_kernel_install(enosys, 1) == 0);
	r = iour_ring_create(8, NULL, rs, NULL, &fd);
	CHKF(m, r == -ENOSYS, "%s", iour_errname(r));
	CHK(m, fd == -1);
	/* A fresh probe now sees io_uring unusable: the level says so. */
	IOUR_OPTS(iour_probe_opts, po, .flags = IOUR_PROBE_REFRESH);
	struct iour_features f = { .sz = sizeof(f) };
	CHK(m, iour_probe(&po, &f) == 0 && f.level == IOUR_LEVEL_NONE);
	r = iour_ring_create(8, NULL, rs, NULL, &fd);
	CHKF(m, r == -IOUR_ERRNO__UNSUPPORTED, "%s", iour_errname(r));
	return 0;
}

Test(ring_api, create_reports_kernel_refusals)
{
	UNIT_REQUIRE_URING();
	struct child_msg m;

	cr_assert_eq(child_run(create_kernel_refusals_child, NULL, &m), 0, "%s", m.text);
	cr_assert_eq(child_run(create_enosys_child, NULL, &m), 0, "%s", m.text);
}

Test(ring_api, create_bad_input)
{
	UNIT_REQUIRE_URING();
	struct iour_ruleset *rs = nop_only();
	struct iour_ring_report rep = { .sz = 3 };
	struct {
		struct iour_ring_create_opts o;
		uint64_t extra;
	} big = { { .sz = sizeof(big) }, 1 };
	IOUR_OPTS(iour_ring_create_opts, o);
	int fd;

	fault_install();
	fd = 9;
	cr_assert_eq(iour_ring_create(8, NULL, NULL, NULL, &fd), -EINVAL);
	cr_assert_eq(fd, -1);
	cr_assert_eq(iour_ring_create(8, NULL, rs, NULL, NULL), -EINVAL);
	o.sz = 2;
	cr_assert_eq(iour_ring_create(8, NULL, rs, &o, &fd), -EINVAL);
	o.sz = sizeof(o);
	o.flags = 1;
	cr_assert_eq(iour_ring_create(8, NULL, rs, &o, &fd), -EINVAL);
	o.flags = 0;
	o.report = &rep;
	cr_assert_eq(iour_ring_create(8, NULL, rs, &o, &fd), -EINVAL);
	fd = 9;
	cr_assert_eq(iour_ring_create(8, NULL, rs, &big.o, &fd), -E2BIG);
	cr_assert_eq(fd, -1);
	cr_assert_eq(flt.setup_calls + flt.register_calls, 0, "bad input reached the kernel");
	iour__sys_set(NULL);
	iour_ruleset__free(rs);
}

/* ---- SINGLE_ISSUER: the enabling thread becomes the submitter ------------- */

struct si_arg {
	struct io_uring *ring;
	int enable_rc, nop;
};

static void *si_thread(void *p)
{
	struct si_arg *a = p;
	int res = 1;

	a->enable_rc = iour_ring_enable(a->ring->ring_fd);
	struct io_uring_sqe *s = io_uring_get_sqe(a->ring);
	io_uring_prep_nop(s);
	if (ring_submit_wait(a->ring, s, &res) == 1)
		a->nop = res;
	else
		a->nop = -9999;
	return NULL;
}

Test(ring_api, single_issuer_enable_from_the_submitting_thread)
{
	UNIT_REQUIRE_URING();
	struct iour_ruleset *rs = nop_only();
	IOUR_OPTS(iour_ring_apply_opts, o, .flags = IOUR_RING_APPLY_NO_ENABLE);
	struct io_uring ring;
	struct si_arg a = { .ring = &ring };
	pthread_t t;
	int fd;

	if (ring_init_disabled(&ring, IORING_SETUP_SINGLE_ISSUER))
		cr_skip_test("no IORING_SETUP_SINGLE_ISSUER (before 6.0)");
	cr_assert_eq(iour_ring_apply(ring.ring_fd, rs, &o), 0);
	cr_assert_eq(pthread_create(&t, NULL, si_thread, &a), 0);
	pthread_join(t, NULL);
	cr_assert_eq(a.enable_rc, 0);
	cr_assert_eq(a.nop, 0, "the enabling thread submits");
	/* Any other thread, the creator included, is refused. */
	io_uring_prep_nop(io_uring_get_sqe(&ring));
	cr_assert_eq(io_uring_submit(&ring), -EEXIST);
	io_uring_queue_exit(&ring);

	/* iour_ring_create() enables from the calling thread. */
	struct io_uring_params p;
	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_SINGLE_ISSUER;
	cr_assert_eq(iour_ring_create(8, &p, rs, NULL, &fd), 0);
	cr_assert_eq(ring_mmap(fd, &p, &ring), 0);
	cr_assert_eq(nop_res(&ring), 0);
	io_uring_queue_exit(&ring);
	iour_ruleset__free(rs);
}
