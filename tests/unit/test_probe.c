/* SPDX-License-Identifier: MIT */
/*
 * The kernel probe: answers cross-checked against QUERY and PROBE made here
 * with raw system calls, caching and thread safety, absence of side effects,
 * IOUR_FEATURE_LEVEL, old and disabled kernels faked for real with seccomp
 * in a child, the interpretation of every kernel generation's answers
 * (emulated), and bad input.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "child.h"
#include "iouring_restrict/iouring_restrict.h"
#include "probe/probe_answers.h"
#include "base/sys.h"
#include "uring_avail.h"

static struct iour_features probe_now(uint64_t flags)
{
	struct iour_probe_opts o = { .sz = sizeof(o), .flags = flags };
	struct iour_features f = { .sz = sizeof(f) };
	int r = iour_probe(&o, &f);

	cr_assert_eq(r, 0, "iour_probe: %s", iour_errname(r));
	return f;
}

static long raw_register(int fd, unsigned op, void *arg, unsigned nr)
{
	long r = syscall(__NR_io_uring_register, fd, op, arg, nr);

	return r < 0 ? -errno : r;
}

/* ---- real kernel: cross-check with raw QUERY and PROBE ---------------- */

Test(probe, real_kernel_matches_raw_query_and_probe)
{
	UNIT_REQUIRE_URING();
	struct kio_query_hdr h = { 0 };
	struct kio_query_opcode q = { 0 };
	uint64_t buf[(16 + 8 * 256) / 8] = { 0 };
	struct kio_probe *p = (struct kio_probe *)buf;
	struct kio_probe_op *ops = (struct kio_probe_op *)(p + 1);
	struct kio_params prm = { 0 };
	uint64_t sup[4] = { 0 };
	long qr, tr, br;
	int fd, i, expect_level;

	struct iour_features f = probe_now(0);

	h.query_data = (uintptr_t)&q;
	h.query_op = KIO_QUERY_OPCODES;
	h.size = sizeof(q);
	qr = raw_register(-1, KIO_REGISTER_QUERY, &h, 0);
	prm.flags = KIO_SETUP_R_DISABLED;
	fd = (int)syscall(__NR_io_uring_setup, 1, &prm);
	cr_assert_geq(fd, 0);
	cr_assert_eq(raw_register(fd, KIO_REGISTER_PROBE, buf, 256), 0);
	for (i = 0; i < p->ops_len; i++)
		if (ops[i].flags & KIO_OP_SUPPORTED)
			sup[i / 64] |= 1ULL << (i % 64);
	close(fd);
	tr = raw_register(-1, KIO_REGISTER_RESTRICTIONS, NULL, 1);
	br = raw_register(-1, KIO_REGISTER_BPF_FILTER, NULL, 1);

	cr_log_info("raw: QUERY %ld (%u request ops, %u register ops), PROBE last_op %u ops_len %u, "
		    "blind RESTRICTIONS %ld, blind BPF_FILTER %ld",
		    qr, q.nr_request_opcodes, q.nr_register_opcodes, p->last_op, p->ops_len, tr, br);
	cr_log_info("probe: level %u (%s), op_last %u, reg_last %u, %u ops supported",
		    f.level, iour_feature_level_str((int)f.level), f.op_last, f.reg_last,
		    f.nr_supported_ops);

	cr_assert_eq(f.io_uring, IOUR_AVAIL_YES);
	cr_assert_eq(f.setup_err, -EFAULT);
	cr_assert_eq(f.ring_restrictions, IOUR_AVAIL_YES);
	cr_assert_eq(f.r_disabled_err, 0);
	cr_assert_eq(f.ring_register_err, -EINVAL);
	cr_assert_eq(f.enable_rings_err, -EBADFD);
	cr_assert_eq(f.probe, IOUR_AVAIL_YES);
	cr_assert_eq(f.probe_last_op, p->last_op);
	cr_assert_eq(memcmp(f.supported_ops, sup, sizeof(sup)), 0);
	cr_assert_eq(f.nr_supported_ops, (uint32_t)(__builtin_popcountll(sup[0]) + __builtin_popcountll(sup[1]) +
						     __builtin_popcountll(sup[2]) + __builtin_popcountll(sup[3])));
	cr_assert_eq(f.flags, 0, "flags %#llx", (unsigned long long)f.flags);
	if (qr == 0 && h.result == 0) {
		cr_assert_eq(f.query, IOUR_AVAIL_YES);
		cr_assert_eq(f.op_last, q.nr_request_opcodes);
		cr_assert_eq(f.reg_last, q.nr_register_opcodes);
		cr_assert_eq(f.limits_source, IOUR_LIMITS_QUERY);
		cr_assert_eq(f.feature_flags, q.feature_flags);
		cr_assert_eq(f.setup_flags, q.ring_setup_flags);
		cr_assert_eq(f.enter_flags, q.enter_flags);
		cr_assert_eq(f.sqe_flags, q.sqe_flags);
		cr_assert_eq(f.nr_query_opcodes, q.nr_query_opcodes);
		cr_assert_eq(f.op_last, (uint32_t)p->last_op + 1);
		cr_assert_eq(f.blind_register, IOUR_AVAIL_YES);
		expect_level = IOUR_LEVEL_QUERY;
		if (q.nr_register_opcodes > KIO_REGISTER_BPF_FILTER)
			expect_level = -1; /* a 7.x kernel: checked by the 7.x tests */
	} else {
		cr_assert_eq(f.query, IOUR_AVAIL_NO);
		cr_assert_eq(f.op_last, (uint32_t)p->last_op + 1);
		cr_assert_eq(f.limits_source, IOUR_LIMITS_PROBE);
		expect_level = IOUR_LEVEL_RING;
	}
	if (expect_level >= 0) {
		/* Kernels before 7.0: no task path, no filters. */
		cr_assert_eq(f.level, (uint32_t)expect_level);
		cr_assert_eq(f.kernel_level, (uint32_t)expect_level);
		cr_assert_eq(f.task_restrictions, IOUR_AVAIL_NO);
		cr_assert_eq(f.task_restrictions_err, tr);
		cr_assert_eq(f.bpf_task, IOUR_AVAIL_NO);
		cr_assert_eq(f.bpf_task_err, br);
		cr_assert_eq(f.bpf_ring, IOUR_AVAIL_NO);
		cr_assert_eq(f.bpf_ring_err, -EINVAL);
		cr_assert_eq(f.pdu_socket + f.pdu_openat + f.pdu_openat2 + f.pdu_connect, 0);
		cr_assert_eq(f.split_gates, 0);
	}
	cr_assert_eq(iour_feature_level(), (int)f.level);
}

Test(probe, this_machine_is_6_18_level_3)
{
	UNIT_REQUIRE_URING();
	/* The development kernel (6.18): 63 request opcodes, 36 register
	 * opcodes, all 63 supported, blind path present (-EINVAL), no task
	 * restrictions, no filters. */
	struct iour_features f = probe_now(0);
	struct kio_query_hdr h = { 0 };
	struct kio_query_opcode q = { 0 };

	h.query_data = (uintptr_t)&q;
	h.size = sizeof(q);
	if (raw_register(-1, KIO_REGISTER_QUERY, &h, 0) || h.result ||
	    q.nr_request_opcodes != 63 || q.nr_register_opcodes != 36)
		cr_skip_test("not a 6.18-class kernel (QUERY: %u/%u)", q.nr_request_opcodes,
			     q.nr_register_opcodes);
	cr_assert_eq(f.level, IOUR_LEVEL_QUERY);
	cr_assert_eq(f.op_last, 63);
	cr_assert_eq(f.reg_last, 36);
	cr_assert_eq(f.nr_supported_ops, 63);
	cr_assert_eq(f.probe_last_op, 62);
	cr_assert_eq(f.blind_register, IOUR_AVAIL_YES);
	cr_assert_eq(f.task_restrictions_err, -EINVAL);
	cr_assert_eq(f.task_restrictions, IOUR_AVAIL_NO);
	cr_assert_eq(f.bpf_ring, IOUR_AVAIL_NO);
	cr_assert_eq(f.bpf_task, IOUR_AVAIL_NO);
	cr_assert_eq(f.sqe_flags, 0x7f);
}

/* ---- caching ----------------------------------------------------------- */

Test(probe, cached_answer_is_identical_and_probes_once)
{
	struct iour_features a = { .sz = sizeof(a) }, b = { .sz = sizeof(b) };
	unsigned long runs0 = iour__probe_runs();

	cr_assert_eq(runs0, 0, "a fresh test process has not probed");
	cr_assert_eq(iour_probe(NULL, &a), 0);
	cr_assert_eq(iour__probe_runs(), 1);
	cr_assert_eq(iour_probe(NULL, &b), 0);
	cr_assert_eq(iour_feature_level(), (int)a.level);
	cr_assert_eq(iour__probe_runs(), 1, "cached calls must not probe again");
	cr_assert_eq(memcmp(&a, &b, sizeof(a)), 0);

	/* NO_CACHE probes again and leaves the cache alone; REFRESH replaces
	 * it with an identical answer on an unchanged kernel. */
	b = probe_now(IOUR_PROBE_NO_CACHE);
	cr_assert_eq(iour__probe_runs(), 2);
	cr_assert_eq(memcmp(&a, &b, sizeof(a)), 0);
	b = probe_now(IOUR_PROBE_REFRESH);
	cr_assert_eq(iour__probe_runs(), 3);
	cr_assert_eq(memcmp(&a, &b, sizeof(a)), 0);
	b = probe_now(0);
	cr_assert_eq(iour__probe_runs(), 3);
}

#define NTHREADS 8
static pthread_barrier_t barrier;
static struct iour_features thr_out[NTHREADS];
static int thr_rc[NTHREADS];

static void *thr_main(void *arg)
{
	int i = (int)(intptr_t)arg, k;

	pthread_barrier_wait(&barrier);
	for (k = 0; k < 1000; k++) {
		thr_out[i].sz = sizeof(thr_out[i]);
		thr_rc[i] |= iour_probe(NULL, &thr_out[i]);
		if (k % 100 == 0 && iour_feature_level() != (int)thr_out[i].level)
			thr_rc[i] |= 1;
	}
	return NULL;
}

Test(probe, threads_share_one_probe)
{
	pthread_t t[NTHREADS];
	int i;

	cr_assert_eq(iour__probe_runs(), 0);
	pthread_barrier_init(&barrier, NULL, NTHREADS);
	for (i = 0; i < NTHREADS; i++)
		cr_assert_eq(pthread_create(&t[i], NULL, thr_main, (void *)(intptr_t)i), 0);
	for (i = 0; i < NTHREADS; i++)
		pthread_join(t[i], NULL);
	pthread_barrier_destroy(&barrier);
	cr_log_info("%d threads x 1000 calls, probe children run: %lu", NTHREADS, iour__probe_runs());
	cr_assert_eq(iour__probe_runs(), 1, "concurrent first calls must probe once");
	for (i = 0; i < NTHREADS; i++) {
		cr_assert_eq(thr_rc[i], 0);
		cr_assert_eq(memcmp(&thr_out[i], &thr_out[0], sizeof(thr_out[0])), 0);
	}
}

/* ---- no side effects --------------------------------------------------- */

static int count_maps(void)
{
	char line[512];
	int n = 0;
	FILE *f = fopen("/proc/self/maps", "re");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		n++;
	fclose(f);
	return n;
}

Test(probe, no_side_effects_on_the_caller)
{
	UNIT_REQUIRE_URING();
	long nnp0 = status_value("NoNewPrivs"), sec0 = status_value("Seccomp");
	int fds0 = count_fds(), maps0, st, i;

	probe_now(0); /* first use may map library pages */
	maps0 = count_maps();
	for (i = 0; i < 5; i++)
		probe_now(IOUR_PROBE_NO_CACHE);
	cr_assert_eq(status_value("NoNewPrivs"), nnp0);
	cr_assert_eq(status_value("Seccomp"), sec0);
	cr_assert_eq(count_fds(), fds0, "probe left file descriptors open");
	cr_assert_eq(count_maps(), maps0, "probe left mappings behind");
	cr_assert_leq(waitpid(-1, &st, WNOHANG), 0, "probe left a zombie child");
	/* The caller itself never created a ring: a task restriction probe
	 * here would still find the task unrestricted. */
	cr_assert_neq(raw_register(-1, KIO_REGISTER_RESTRICTIONS, NULL, 1), -EPERM);
}

/* ---- IOUR_FEATURE_LEVEL ----------------------------------------------- */

struct force_case {
	const char *value;
	int forced;   /* expected effective level, -1: not forced */
	int ignored;  /* FORCE_IGNORED expected */
};

static int force_child(void *arg, struct child_msg *m)
{
	const struct force_case *c = arg;
	struct iour_probe_opts o = { .sz = sizeof(o), .flags = IOUR_PROBE_REFRESH };
	struct iour_features f = { .sz = sizeof(f) }, real = { .sz = sizeof(real) };

	CHK(m, iour_probe(&(struct iour_probe_opts){ .sz = sizeof(o), .flags = IOUR_PROBE_NO_CACHE },
			  &real) == 0);
	setenv("IOUR_FEATURE_LEVEL", c->value, 1);
	CHK(m, iour_probe(&o, &f) == 0);
	CHKF(m, f.kernel_level == real.kernel_level, "%u", f.kernel_level);
	CHKF(m, !!(f.flags & IOUR_FEATURES_FORCE_IGNORED) == c->ignored, "flags %#llx",
	     (unsigned long long)f.flags);
	if (c->forced < 0 || c->forced >= (int)real.kernel_level) {
		CHK(m, f.level == real.level);
		CHK(m, !(f.flags & IOUR_FEATURES_FORCED));
		CHK(m, f.op_last == real.op_last && f.reg_last == real.reg_last);
		return 0;
	}
	CHKF(m, f.level == (uint32_t)c->forced, "level %u", f.level);
	CHK(m, f.flags & IOUR_FEATURES_FORCED);
	CHK(m, iour_feature_level() == c->forced);
	if (c->forced < IOUR_LEVEL_QUERY) {
		CHK(m, f.query == IOUR_AVAIL_NO && f.query_err == 0);
		CHK(m, f.sqe_flags == 0 && f.setup_flags == 0 && f.nr_query_opcodes == 0);
	}
	if (c->forced == IOUR_LEVEL_RING) {
		/* The fallback really ran: PROBE plus the range test. */
		CHKF(m, f.limits_source == IOUR_LIMITS_PROBE, "source %u", f.limits_source);
		CHK(m, f.op_last == real.op_last);
		CHKF(m, f.reg_last == real.reg_last, "range test %u vs %u", f.reg_last, real.reg_last);
		CHK(m, f.ring_restrictions == IOUR_AVAIL_YES);
		struct iour__kernel_limits lim;
		CHK(m, iour__probe_limits(&lim) == 0);
		CHK(m, lim.op_last == real.op_last && lim.reg_last == real.reg_last);
	}
	if (c->forced < IOUR_LEVEL_RING) {
		CHK(m, f.ring_restrictions == IOUR_AVAIL_NO && f.op_last == 0 && f.reg_last == 0);
		CHK(m, f.blind_register == IOUR_AVAIL_NO);
		struct iour__kernel_limits lim;
		CHK(m, iour__probe_limits(&lim) == -IOUR_ERRNO__UNSUPPORTED);
	}
	if (c->forced == IOUR_LEVEL_IO_URING)
		CHK(m, f.io_uring == IOUR_AVAIL_YES && f.probe == IOUR_AVAIL_YES);
	if (c->forced == IOUR_LEVEL_NONE) {
		CHK(m, f.io_uring == IOUR_AVAIL_NO && f.setup_err == 0);
		CHK(m, f.probe == IOUR_AVAIL_NO && f.nr_supported_ops == 0);
	}
	return 0;
}

Test(probe, env_forces_lower_levels_only)
{
	static const struct force_case cases[] = {
		{ "0", 0, 0 },  { "1", 1, 0 },   { "2", 2, 0 },    { "3", 3, 0 },
		{ "4", 4, 1 },  { "5", 5, 1 },   { "9", 9, 1 },    { "", -1, 1 },
		{ "x", -1, 1 }, { "2x", -1, 1 }, { "-1", -1, 1 },  { " 2", -1, 1 },
		{ "99999999999", -1, 1 },
	};
	struct child_msg m;
	size_t i;
	int rc, kl = (int)probe_now(0).kernel_level;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct force_case c = cases[i];

		/* "not lower than the kernel's level" is ignored too. */
		if (c.forced > kl)
			c.ignored = 1;
		else if (c.forced >= 0)
			c.ignored = 0;
		rc = child_run(force_child, &c, &m);
		cr_expect_eq(rc, 0, "IOUR_FEATURE_LEVEL=\"%s\": %s", c.value, m.text);
	}
	cr_log_info("%zu IOUR_FEATURE_LEVEL values checked (kernel level %d)",
		    sizeof(cases) / sizeof(cases[0]), kl);
}

/* ---- old and disabled kernels, faked with seccomp in a child ---------- */

struct fake_case {
	const char *name;
	struct fake_rule rules[4];
	int nrules;
};

static int fake_child(void *arg, struct child_msg *m)
{
	const struct fake_case *c = arg;
	struct iour_probe_opts o = { .sz = sizeof(o), .flags = IOUR_PROBE_NO_CACHE };
	struct iour_features real = { .sz = sizeof(real) }, f = { .sz = sizeof(f) };
	struct iour__kernel_limits lim;
	int r;

	CHK(m, iour_probe(&o, &real) == 0);
	r = fake_kernel_install(c->rules, c->nrules);
	CHKF(m, r == 0, "seccomp: %d", r);
	o.flags = IOUR_PROBE_REFRESH;
	CHK(m, iour_probe(&o, &f) == 0);

	if (!strcmp(c->name, "setup_eperm") || !strcmp(c->name, "setup_enosys")) {
		int e = c->rules[0].errno_val;

		CHKF(m, f.setup_err == -e, "setup_err %d", f.setup_err);
		CHK(m, f.io_uring == IOUR_AVAIL_NO);
		CHK(m, f.level == IOUR_LEVEL_NONE && f.kernel_level == IOUR_LEVEL_NONE);
		CHK(m, iour_feature_level() == 0);
		CHK(m, f.ring_restrictions == IOUR_AVAIL_NO && f.query == IOUR_AVAIL_NO);
		CHK(m, f.probe == IOUR_AVAIL_NO && f.nr_supported_ops == 0);
		CHK(m, f.op_last == 0 && f.limits_source == IOUR_LIMITS_NONE);
		CHK(m, f.seccomp_mode == 2 && f.no_new_privs == 1); /* diagnostics */
		CHK(m, f.flags == 0);
		CHK(m, iour__probe_limits(&lim) == -IOUR_ERRNO__UNSUPPORTED);
	} else if (!strcmp(c->name, "setup_kill")) {
		CHKF(m, f.child_signal == SIGSYS, "signal %d", f.child_signal);
		CHK(m, f.flags & IOUR_FEATURES_CHILD_DIED);
		CHK(m, f.io_uring == IOUR_AVAIL_UNKNOWN);
		CHK(m, f.query == IOUR_AVAIL_UNKNOWN && f.task_restrictions == IOUR_AVAIL_UNKNOWN);
		CHK(m, f.level == IOUR_LEVEL_NONE);
	} else if (!strcmp(c->name, "blind_ebadf_6_1_style")) {
		CHKF(m, f.task_restrictions_err == -EBADF, "%d", f.task_restrictions_err);
		CHK(m, f.blind_register == IOUR_AVAIL_NO);
		CHK(m, f.task_restrictions == IOUR_AVAIL_NO && f.bpf_task == IOUR_AVAIL_NO);
		CHKF(m, f.query == IOUR_AVAIL_NO && f.query_err == -EBADF, "query %u %d", f.query,
		     f.query_err);
		CHKF(m, f.level == IOUR_LEVEL_RING, "level %u", f.level);
		CHK(m, f.limits_source == IOUR_LIMITS_PROBE);
		CHK(m, f.op_last == real.op_last && f.reg_last == real.reg_last);
		CHK(m, f.ring_restrictions == IOUR_AVAIL_YES && f.flags == 0);
		CHK(m, iour__probe_limits(&lim) == 0 && lim.reg_last == real.reg_last && !lim.split);
	} else if (!strcmp(c->name, "no_query_einval")) {
		CHKF(m, f.query == IOUR_AVAIL_NO && f.query_err == -EINVAL, "query %u %d", f.query,
		     f.query_err);
		CHK(m, f.blind_register == IOUR_AVAIL_YES); /* 6.13-6.17 */
		CHKF(m, f.level == IOUR_LEVEL_RING, "level %u", f.level);
		CHKF(m, f.limits_source == IOUR_LIMITS_PROBE, "source %u", f.limits_source);
		CHK(m, f.op_last == f.probe_last_op + 1 && f.op_last == real.op_last);
		CHKF(m, f.reg_last == real.reg_last, "range test found %u, QUERY says %u", f.reg_last,
		     real.reg_last);
		CHK(m, f.flags == 0);
	} else if (!strcmp(c->name, "r_disabled_einval")) {
		/* A kernel before 5.10: no R_DISABLED, no ENABLE_RINGS. */
		CHK(m, f.ring_restrictions == IOUR_AVAIL_NO && f.r_disabled_err == -EINVAL);
		CHK(m, f.level == IOUR_LEVEL_IO_URING);
		CHK(m, f.probe == IOUR_AVAIL_YES); /* from the enabled ring */
		CHK(m, f.op_last == 0 && f.limits_source == IOUR_LIMITS_NONE);
		CHK(m, iour__probe_limits(&lim) == -IOUR_ERRNO__UNSUPPORTED);
	} else if (!strcmp(c->name, "prctl_get_seccomp_eperm")) {
		/* prctl() does not tell the seccomp mode here (the control):
		 * the diagnostics come from /proc/self/status instead. */
		errno = 0;
		CHK(m, prctl(PR_GET_SECCOMP, 0, 0, 0, 0) == -1 && errno == EPERM);
		CHKF(m, f.seccomp_mode == 2 && f.seccomp_mode == status_value("Seccomp"),
		     "seccomp_mode %d", f.seccomp_mode);
		CHKF(m, f.no_new_privs == 1 && f.no_new_privs == status_value("NoNewPrivs"),
		     "no_new_privs %d", f.no_new_privs);
		CHK(m, f.io_uring == IOUR_AVAIL_YES && f.level == real.level);
	} else if (!strcmp(c->name, "fork_fails")) {
		return 0; /* checked by the caller */
	} else {
		CHK(m, !"unknown case");
	}
	return 0;
}

Test(probe, seccomp_faked_kernels)
{
	UNIT_REQUIRE_URING();
	static const struct fake_case cases[] = {
		{ "setup_eperm", { { __NR_io_uring_setup, -1, 0, EPERM, 0 } }, 1 },
		{ "setup_enosys", { { __NR_io_uring_setup, -1, 0, ENOSYS, 0 } }, 1 },
		{ "setup_kill", { { __NR_io_uring_setup, -1, 0, 0, 1 } }, 1 },
		{ "blind_ebadf_6_1_style", { { __NR_io_uring_register, 0, 0xffffffffu, EBADF, 0 } }, 1 },
		{ "no_query_einval", { { __NR_io_uring_register, 1, KIO_REGISTER_QUERY, EINVAL, 0 } }, 1 },
		{ "prctl_get_seccomp_eperm", { { __NR_prctl, 0, PR_GET_SECCOMP, EPERM, 0 } }, 1 },
		/* io_uring_setup's params->flags cannot be matched by seccomp;
		 * R_DISABLED is refused through the seam below instead. */
	};
	struct child_msg m;
	size_t i;
	int rc;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		rc = child_run(fake_child, (void *)&cases[i], &m);
		cr_expect_eq(rc, 0, "%s: rc %d: %s", cases[i].name, rc, m.text);
	}
	cr_log_info("%zu seccomp-faked kernels checked", sizeof(cases) / sizeof(cases[0]));
}

/* A kernel before 5.10, through the seam: io_uring_setup refuses
 * IORING_SETUP_R_DISABLED with -EINVAL and register opcode 12 is unknown. */
static long old_setup(void *ctx, uint32_t entries, void *params)
{
	const struct kio_params *p = params;

	(void)ctx;
	if (p && (p->flags & KIO_SETUP_R_DISABLED))
		return -EINVAL;
	return iour__sys_real()->io_uring_setup(NULL, entries, params);
}

static long old_register(void *ctx, int fd, uint32_t op, void *arg, uint32_t nr)
{
	(void)ctx;
	if ((op & 0xffff) >= KIO_REGISTER_RESTRICTIONS)
		return fd == -1 ? -EBADF : -EINVAL;
	return iour__sys_real()->io_uring_register(NULL, fd, op, arg, nr);
}

static int old_kernel_child(void *arg, struct child_msg *m)
{
	struct iour_sys_ops ops = *iour__sys_real();

	ops.io_uring_setup = old_setup;
	ops.io_uring_register = old_register;
	iour__sys_set(&ops);
	return fake_child(arg, m);
}

Test(probe, emulated_kernel_before_5_10)
{
	UNIT_REQUIRE_URING();
	static const struct fake_case c = { "r_disabled_einval", { { 0 } }, 0 };
	struct child_msg m;

	cr_assert_eq(child_run(old_kernel_child, (void *)&c, &m), 0, "%s", m.text);
}

static int fork_fail_child(void *arg, struct child_msg *m)
{
	static const struct fake_rule rules[] = {
		{ __NR_clone, -1, 0, EAGAIN, 0 },
		{ __NR_clone3, -1, 0, ENOSYS, 0 },
#ifdef __NR_fork
		{ __NR_fork, -1, 0, EAGAIN, 0 },
#endif
	};
	struct iour_probe_opts o = { .sz = sizeof(o), .flags = IOUR_PROBE_NO_CACHE };
	struct iour_features f = { .sz = sizeof(f) };

	(void)arg;
	CHK(m, fake_kernel_install(rules, sizeof(rules) / sizeof(rules[0])) == 0);
	/* EAGAIN is a resource shortage (RLIMIT_NPROC): reported as itself. */
	CHK(m, iour_probe(&o, &f) == -EAGAIN);
	CHK(m, iour_probe(NULL, &f) == -EAGAIN);
	CHK(m, iour_feature_level() == -EAGAIN);
	struct iour__kernel_limits lim;
	CHK(m, iour__probe_limits(&lim) == -EAGAIN);
	return 0;
}

static int fork_denied_child(void *arg, struct child_msg *m)
{
	static const struct fake_rule rules[] = {
		{ __NR_clone, -1, 0, EPERM, 0 },
		{ __NR_clone3, -1, 0, ENOSYS, 0 },
#ifdef __NR_fork
		{ __NR_fork, -1, 0, EPERM, 0 },
#endif
	};
	struct iour_features f = { .sz = sizeof(f) };
	struct iour__kernel_limits lim;

	(void)arg;
	CHK(m, fake_kernel_install(rules, sizeof(rules) / sizeof(rules[0])) == 0);
	CHK(m, iour_probe(NULL, &f) == -ECHILD);
	CHK(m, iour_feature_level() == -ECHILD);
	CHK(m, iour__probe_limits(&lim) == -ECHILD);
	return 0;
}

static int mmap_fail_child(void *arg, struct child_msg *m)
{
	static const struct fake_rule rules[] = { { __NR_mmap, -1, 0, ENOMEM, 0 } };
	struct iour_probe_opts o = { .sz = sizeof(o), .flags = IOUR_PROBE_NO_CACHE };
	struct iour_features f = { .sz = sizeof(f) };

	(void)arg;
	CHK(m, fake_kernel_install(rules, 1) == 0);
	CHK(m, iour_probe(&o, &f) == -ENOMEM);
	CHK(m, iour_feature_level() == -ENOMEM);
	return 0;
}

Test(probe, errors_when_the_child_cannot_run)
{
	struct child_msg m;

	cr_assert_eq(child_run(fork_fail_child, NULL, &m), 0, "%s", m.text);
	cr_assert_eq(child_run(fork_denied_child, NULL, &m), 0, "%s", m.text);
	cr_assert_eq(child_run(mmap_fail_child, NULL, &m), 0, "%s", m.text);
}

/* ---- resource shortage is not a kernel fact --------------------------- */

/* The level a fresh probe gives on this kernel, without touching the
 * cache (the children below start with an empty one: each test runs in a
 * process of its own). */
static int real_level(void)
{
	struct iour_features f = probe_now(IOUR_PROBE_NO_CACHE);

	cr_assert_geq(f.level, IOUR_LEVEL_RING, "the resource tests need a 5.10+ kernel");
	return (int)f.level;
}

static struct iour_policy *small_policy(void)
{
	struct iour_ruleset *rs;
	struct iour_policy *p;

	if (iour_ruleset__new(NULL, &rs) || iour_ruleset__allow_sqe_op(rs, 0) ||
	    iour_ruleset__set_sqe_flags(rs, 0, 0) || iour_policy__new(NULL, &p))
		return NULL;
	if (iour_policy__set_ruleset(p, rs)) {
		iour_policy__free(p);
		p = NULL;
	}
	iour_ruleset__free(rs);
	return p;
}

/* Every probing entry point reports `err` itself, and nothing is cached. */
static int expect_resource_err(struct child_msg *m, int err)
{
	struct iour_features f = { .sz = sizeof(f) };
	struct iour__kernel_limits lim;
	struct iour_plan *pl = NULL;
	struct iour_policy *p = small_policy();
	int r;

	CHK(m, p != NULL);
	r = iour_feature_level();
	CHKF(m, r == -err, "iour_feature_level() = %d (%s), want -%d", r,
	     r < 0 ? iour_errname(r) : "a level", err);
	r = iour_probe(NULL, &f);
	CHKF(m, r == -err, "iour_probe() = %d (%s)", r, iour_errname(r));
	r = iour__probe_limits(&lim);
	CHKF(m, r == -err, "limits for ring restrictions: %d (%s)", r, iour_errname(r));
	r = iour_policy__plan(p, NULL, &pl);
	CHKF(m, r == -err, "iour_policy__plan() = %d (%s)", r, iour_errname(r));
	CHK(m, pl == NULL);
	iour_policy__free(p);
	return 0;
}

/* Once the resource is back, the next call probes afresh and gives the
 * kernel's real level, and that answer is the one cached. */
static int expect_real_level(struct child_msg *m, int level)
{
	unsigned long runs = iour__probe_runs();
	struct iour_features f = { .sz = sizeof(f) };
	struct iour__kernel_limits lim;
	int r = iour_feature_level();

	CHKF(m, r == level, "level after the resource came back: %d, want %d", r, level);
	CHK(m, iour__probe_runs() == runs + 1);
	CHK(m, iour_probe(NULL, &f) == 0 && (int)f.level == level);
	CHK(m, iour__probe_limits(&lim) == 0 && lim.op_last == f.op_last);
	CHK(m, iour__probe_runs() == runs + 1);
	return 0;
}

struct level_arg {
	int level;
	int err; /* emulated cases */
	int step;
};

/* The real kernel, a real shortage: the file-descriptor table is full, so
 * io_uring_setup() fails with EMFILE in the probe child. */
static int full_fd_table_child(void *arg, struct child_msg *m)
{
	const struct level_arg *a = arg;
	struct fd_table_fill full;
	int r;

	CHK(m, fd_table_fill(&full) == 0);
	r = expect_resource_err(m, EMFILE);
	if (r)
		return r;
	CHK(m, fd_table_release(&full) == 0);
	return expect_real_level(m, a->level);
}

Test(probe, full_fd_table_is_reported_not_cached)
{
	UNIT_REQUIRE_URING();
	struct level_arg a = { .level = real_level() };
	struct child_msg m;

	cr_assert_eq(child_run(full_fd_table_child, &a, &m), 0, "%s", m.text);
	cr_log_info("EMFILE reported as itself; level %d afterwards", a.level);
}

/* Emulated shortages: one probing call of the real kernel fails with a
 * resource errno through the syscall seam, while `emu_fail` is set. */
enum {
	STEP_SETUP_RDIS,
	STEP_SETUP_PLAIN,
	STEP_RESTRICT_RING,
	STEP_PROBE,
	STEP_QUERY,
	STEP_TASK,
	STEP_N
};
static const char *const step_names[STEP_N] = {
	"setup(R_DISABLED)", "setup(0)",        "RESTRICTIONS(ring, NULL)",
	"PROBE",             "QUERY(fd -1)",    "RESTRICTIONS(-1, NULL)",
};
static int emu_fail, emu_step;

static long short_setup(void *ctx, uint32_t entries, void *params)
{
	const struct kio_params *p = params;

	(void)ctx;
	if (emu_fail && p &&
	    ((emu_step == STEP_SETUP_RDIS && (p->flags & KIO_SETUP_R_DISABLED)) ||
	     (emu_step == STEP_SETUP_PLAIN && !(p->flags & KIO_SETUP_R_DISABLED))))
		return -emu_fail;
	return iour__sys_real()->io_uring_setup(NULL, entries, params);
}

static long short_register(void *ctx, int fd, uint32_t op, void *arg, uint32_t nr)
{
	(void)ctx;
	if (emu_fail &&
	    ((emu_step == STEP_RESTRICT_RING && op == KIO_REGISTER_RESTRICTIONS && fd >= 0) ||
	     (emu_step == STEP_PROBE && op == KIO_REGISTER_PROBE) ||
	     (emu_step == STEP_QUERY && op == KIO_REGISTER_QUERY) ||
	     (emu_step == STEP_TASK && op == KIO_REGISTER_RESTRICTIONS && fd == -1)))
		return -emu_fail;
	return iour__sys_real()->io_uring_register(NULL, fd, op, arg, nr);
}

static int emulated_shortage_child(void *arg, struct child_msg *m)
{
	const struct level_arg *a = arg;
	struct iour_sys_ops ops = *iour__sys_real();
	int r;

	ops.io_uring_setup = short_setup;
	ops.io_uring_register = short_register;
	iour__sys_set(&ops);
	emu_step = a->step;
	emu_fail = a->err;
	r = expect_resource_err(m, a->err);
	if (r)
		return r;
	emu_fail = 0;
	return expect_real_level(m, a->level);
}

Test(probe, emulated_shortages_are_reported_not_cached)
{
	UNIT_REQUIRE_URING();
	static const int errs[] = { ENOMEM, EMFILE, ENFILE, EAGAIN };
	struct level_arg a = { .level = real_level() };
	struct child_msg m;
	size_t i;
	int n = 0;

	for (a.step = 0; a.step < STEP_N; a.step++)
		for (i = 0; i < sizeof(errs) / sizeof(errs[0]); i++, n++) {
			a.err = errs[i];
			cr_expect_eq(child_run(emulated_shortage_child, &a, &m), 0,
				     "emulated errno %d at %s: %s", errs[i],
				     step_names[a.step], m.text);
		}
	cr_log_info("%d emulated shortages reported as themselves, level %d afterwards", n,
		    a.level);
}

/* The interpretation-side helper on raw answers: a resource errno counts
 * only in a step the child completed. */
Test(probe, resource_errors_in_raw_answers)
{
	struct iour__probe_raw r;

	memset(&r, 0, sizeof(r));
	r.done = IOUR__RAW_SETUP | IOUR__RAW_RDIS | IOUR__RAW_END;
	r.setup = -EFAULT;
	r.rdis = -EINVAL; /* before 5.10: a kernel fact */
	cr_assert_eq(iour__probe_resource_err(&r), 0);
	r.rdis = -EMFILE;
	cr_assert_eq(iour__probe_resource_err(&r), -EMFILE);
	r.rdis = 0;
	r.range = -ENOMEM; /* step not completed: ignored */
	cr_assert_eq(iour__probe_resource_err(&r), 0);
	r.done |= IOUR__RAW_RANGE;
	cr_assert_eq(iour__probe_resource_err(&r), -ENOMEM);
	r.range = 0;
	r.done |= IOUR__RAW_BPF_RING;
	r.pdu_err[iour_payload_find(IOUR_OP_CONNECT)] = -EAGAIN;
	cr_assert_eq(iour__probe_resource_err(&r), -EAGAIN);
}

/* ---- emulated 7.x kernels through the seam ---------------------------- */

/* A 7.2-style kernel on top of the real one: QUERY reports 38 register
 * opcodes, the blind path takes task restrictions and filters, the ring
 * path answers filter registrations with the payload sizes of 7.2. */
struct emu7 {
	int32_t task;      /* answer to register(-1, RESTRICTIONS, NULL, 1) */
	int32_t bpf_task;  /* answer to register(-1, BPF_FILTER, NULL, 1) */
	uint8_t connect_k; /* 24 on 7.2, 0 on 7.0/7.1 */
	bool config_off;   /* CONFIG_IO_URING_BPF=n */
};
static struct emu7 emu;

static long emu7_register(void *ctx, int fd, uint32_t op, void *arg, uint32_t nr)
{
	const struct iour_sys_ops *real = iour__sys_real();
	uint32_t o = op & ~KIO_REGISTER_USE_REGISTERED_RING;

	(void)ctx;
	if (o == KIO_REGISTER_QUERY && fd == -1 && arg && nr == 0) {
		struct kio_query_hdr *h = arg;
		long r = real->io_uring_register(NULL, fd, op, arg, nr);

		if (r == 0 && h->result == 0 && h->query_op == KIO_QUERY_OPCODES)
			((struct kio_query_opcode *)(uintptr_t)h->query_data)->nr_register_opcodes =
				KIO_REGISTER_LAST_NEWEST;
		return r;
	}
	if (o == KIO_REGISTER_RESTRICTIONS && fd == -1)
		return emu.task;
	if (o == KIO_REGISTER_BPF_FILTER) {
		struct kio_bpf *b = arg;
		uint8_t k = 0;

		if (fd == -1)
			return emu.bpf_task;
		if (emu.config_off)
			return -EINVAL;
		if (nr != 1)
			return -EINVAL;
		if (!b)
			return -EFAULT;
		switch (b->filter.opcode) {
		case IOUR_OP_SOCKET: k = KIO_PDU_SOCKET; break;
		case IOUR_OP_OPENAT:
		case IOUR_OP_OPENAT2: k = KIO_PDU_OPEN; break;
		case IOUR_OP_CONNECT: k = emu.connect_k; break;
		}
		if (b->filter.pdu_size > k ||
		    (b->filter.pdu_size != k && (b->filter.flags & KIO_BPF_FILTER_SZ_STRICT))) {
			b->filter.pdu_size = k;
			return -EMSGSIZE;
		}
		return -EINVAL; /* the probe never sends a valid filter */
	}
	return real->io_uring_register(NULL, fd, op, arg, nr);
}

struct emu_case {
	const char *name;
	struct emu7 e;
	const char *force;
	uint32_t level, kernel_level, task, bpf_task, bpf_ring, pdu_connect;
};

static int emu_child(void *arg, struct child_msg *m)
{
	const struct emu_case *c = arg;
	struct iour_sys_ops ops = *iour__sys_real();
	struct iour_probe_opts o = { .sz = sizeof(o), .flags = IOUR_PROBE_REFRESH };
	struct iour_features f = { .sz = sizeof(f) };
	struct iour__kernel_limits lim;

	emu = c->e;
	ops.io_uring_register = emu7_register;
	iour__sys_set(&ops);
	if (c->force)
		setenv("IOUR_FEATURE_LEVEL", c->force, 1);
	CHK(m, iour_probe(&o, &f) == 0);
	CHKF(m, f.kernel_level == c->kernel_level, "kernel level %u", f.kernel_level);
	CHKF(m, f.level == c->level, "level %u", f.level);
	CHKF(m, f.task_restrictions == c->task, "task %u", f.task_restrictions);
	CHKF(m, f.bpf_task == c->bpf_task, "bpf_task %u", f.bpf_task);
	CHKF(m, f.bpf_ring == c->bpf_ring, "bpf_ring %u", f.bpf_ring);
	CHKF(m, f.pdu_connect == c->pdu_connect, "pdu_connect %u", f.pdu_connect);
	CHK(m, !(f.flags & IOUR_FEATURES_MISMATCH));
	CHK(m, f.reg_last == KIO_REGISTER_LAST_NEWEST && f.split_gates == 1);
	CHK(m, iour__probe_limits(&lim) == 0 && lim.split && lim.reg_last == KIO_REGISTER_LAST_NEWEST);
	if (f.level >= IOUR_LEVEL_TASK_BPF)
		CHK(m, f.pdu_socket == 12 && f.pdu_openat == 24 && f.pdu_openat2 == 24);
	if (f.level < IOUR_LEVEL_TASK_BPF && f.bpf_ring == IOUR_AVAIL_NO)
		CHK(m, f.pdu_socket == 0 && f.pdu_openat == 0);
	return 0;
}

Test(probe, emulated_7x_kernels_through_the_seam)
{
	UNIT_REQUIRE_URING();
	enum { Y = IOUR_AVAIL_YES, N = IOUR_AVAIL_NO, P = IOUR_AVAIL_NO_PRIV, R = IOUR_AVAIL_RESTRICTED };
	static const struct emu_case cases[] = {
		{ "7.2, no_new_privs set", { -EFAULT, -EFAULT, 24, false }, NULL, 5, 5, Y, Y, Y, 24 },
		{ "7.0, no_new_privs set", { -EFAULT, -EFAULT, 0, false }, NULL, 4, 4, Y, Y, Y, 0 },
		{ "7.2, no_new_privs missing", { -EACCES, -EACCES, 24, false }, NULL, 5, 5, P, P, Y, 24 },
		{ "7.2, task already restricted", { -EPERM, -EFAULT, 24, false }, NULL, 5, 5, R, Y, Y, 24 },
		{ "7.0, CONFIG_IO_URING_BPF off", { -EACCES, -EACCES, 0, true }, NULL, 3, 3, P, N, N, 0 },
		{ "7.2 forced to 4", { -EFAULT, -EFAULT, 24, false }, "4", 4, 5, Y, Y, Y, 0 },
		{ "7.2 forced to 3", { -EFAULT, -EFAULT, 24, false }, "3", 3, 5, N, N, N, 0 },
	};
	struct child_msg m;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		cr_expect_eq(child_run(emu_child, (void *)&cases[i], &m), 0, "emulated %s: %s",
			     cases[i].name, m.text);
	cr_log_info("%zu emulated 7.x kernels probed end to end", sizeof(cases) / sizeof(cases[0]));
}

/* ---- interpretation of every generation's raw answers (emulated) ------ */

static struct iour__probe_raw gen(uint32_t op_last, int32_t rdis, int32_t enable, int32_t query,
				  uint32_t q_reg, int32_t task, int32_t bpf_ring, int32_t bpf_task,
				  uint32_t range_reg)
{
	struct iour__probe_raw r;

	memset(&r, 0, sizeof(r));
	r.done = 0x3ff;
	r.force = -1;
	r.sysctl_disabled = r.sysctl_group = r.seccomp_mode = r.no_new_privs = -1;
	r.setup = -EFAULT;
	r.rdis = rdis;
	r.ring_reg_null = rdis == 0 ? -EINVAL : 0;
	r.probe = op_last ? 0 : -EINVAL;
	r.probe_last_op = op_last ? op_last - 1 : 0;
	r.probe_ops_len = op_last;
	for (uint32_t i = 0; i < op_last; i++)
		iour__bm_set(&r.probe_ops, i);
	r.bpf_ring = rdis == 0 ? bpf_ring : 0;
	r.plain = 0;
	r.enable = enable;
	r.query = query;
	if (query == 0) {
		r.query_size = sizeof(r.q);
		r.q.nr_request_opcodes = op_last;
		r.q.nr_register_opcodes = q_reg;
		r.q.sqe_flags = 0x7f;
		r.q.nr_query_opcodes = 1;
	}
	r.task = task;
	r.bpf_task = bpf_task;
	r.range = range_reg ? 0 : -EBUSY;
	r.range_reg_last = range_reg;
	if (bpf_ring == -EFAULT) {
		/* 7.0's payloads (the schema's rows of its level); the later
		 * ones -EMSGSIZE with K = 0, as 7.0 answers for any opcode. */
		for (int i = 0; i < iour_payload_count(); i++) {
			struct iour_payload_info pl = { .sz = sizeof(pl) };

			cr_assert_eq(iour_payload_get((size_t)i, &pl), 0);
			r.pdu_err[i] = -EMSGSIZE;
			r.pdu[i] = pl.level <= IOUR_LEVEL_TASK_BPF ? pl.pdu_size : 0;
		}
	}
	return r;
}

struct interp_case {
	const char *name;
	struct iour__probe_raw raw;
	uint32_t level, ring, query, blind, task, bpf_ring, bpf_task;
	uint32_t op_last, reg_last, source, split;
	bool mismatch;
};

Test(probe, emulated_generations_interpretation)
{
	enum { Y = IOUR_AVAIL_YES, N = IOUR_AVAIL_NO, P = IOUR_AVAIL_NO_PRIV,
	       R = IOUR_AVAIL_RESTRICTED, U = IOUR_AVAIL_UNKNOWN };
	const int EF = -EFAULT, EI = -EINVAL, EB = -EBADF, EA = -EACCES, EP = -EPERM;
	struct interp_case cases[32];
	int n = 0, i;

#define CASE(nm, rw, lv, rg, qy, bl, tk, br, bt, ol, rl, src, sp, mm) \
	cases[n++] = (struct interp_case){ nm, rw, lv, rg, qy, bl, tk, br, bt, ol, rl, src, sp, mm }
	/* name, raw(op_last, rdis, enable, query, q_reg, task, bpf_ring, bpf_task, range) */
	CASE("5.4: no PROBE, no R_DISABLED", gen(0, EI, EI, EI, 0, EI, 0, EI, 0),
	     1, N, N, N, N, N, N, 0, 0, IOUR_LIMITS_NONE, 0, false);
	CASE("5.8: PROBE, no R_DISABLED", gen(34, EI, EI, EB, 0, EB, 0, EB, 0),
	     1, N, N, N, N, N, N, 0, 0, IOUR_LIMITS_NONE, 0, false);
	CASE("5.10 (doc table: blind EBADF, QUERY EINVAL)", gen(34, 0, -EBADFD, EI, 0, EB, EI, EI, 13),
	     2, Y, N, N, N, N, N, 34, 13, IOUR_LIMITS_PROBE, 0, false);
	CASE("5.15 (fd looked up first: EBADF everywhere)", gen(40, 0, -EBADFD, EB, 0, EB, EI, EB, 20),
	     2, Y, N, N, N, N, N, 40, 20, IOUR_LIMITS_PROBE, 0, false);
	CASE("6.1", gen(49, 0, -EBADFD, EI, 0, EB, EI, EI, 26),
	     2, Y, N, N, N, N, N, 49, 26, IOUR_LIMITS_PROBE, 0, false);
	CASE("6.1, range test failed: table", gen(49, 0, -EBADFD, EI, 0, EB, EI, EI, 0),
	     2, Y, N, N, N, N, N, 49, 26, IOUR_LIMITS_TABLE, 0, false);
	CASE("6.13: blind path, no QUERY", gen(58, 0, -EBADFD, EI, 0, EI, EI, EI, 35),
	     2, Y, N, Y, N, N, N, 58, 35, IOUR_LIMITS_PROBE, 0, false);
	CASE("6.18", gen(63, 0, -EBADFD, 0, 36, EI, EI, EI, 0),
	     3, Y, Y, Y, N, N, N, 63, 36, IOUR_LIMITS_QUERY, 0, false);
	CASE("6.19", gen(65, 0, -EBADFD, 0, 37, EI, EI, EI, 0),
	     3, Y, Y, Y, N, N, N, 65, 37, IOUR_LIMITS_QUERY, 0, false);
	CASE("7.0 with no_new_privs", gen(65, 0, -EBADFD, 0, 38, EF, EF, EF, 0),
	     4, Y, Y, Y, Y, Y, Y, 65, 38, IOUR_LIMITS_QUERY, 1, false);
	CASE("7.0 without no_new_privs", gen(65, 0, -EBADFD, 0, 38, EA, EF, EA, 0),
	     4, Y, Y, Y, P, Y, P, 65, 38, IOUR_LIMITS_QUERY, 1, false);
	CASE("7.0, config off, no_new_privs", gen(65, 0, -EBADFD, 0, 38, EF, EI, EI, 0),
	     3, Y, Y, Y, Y, N, N, 65, 38, IOUR_LIMITS_QUERY, 1, false);
	CASE("7.0, config off, no no_new_privs", gen(65, 0, -EBADFD, 0, 38, EA, EI, EA, 0),
	     3, Y, Y, Y, P, N, N, 65, 38, IOUR_LIMITS_QUERY, 1, false);
	/* ambiguity rules */
	CASE("task path claims support without QUERY", gen(63, 0, -EBADFD, EI, 0, EF, EI, EI, 36),
	     2, Y, N, U, U, N, N, 63, 36, IOUR_LIMITS_PROBE, 0, true);
	CASE("BPF ring path claims support with 36 register ops", gen(63, 0, -EBADFD, 0, 36, EI, EF, EI, 0),
	     3, Y, Y, Y, N, U, N, 63, 36, IOUR_LIMITS_QUERY, 0, true);
	CASE("task -EINVAL on a 7.0 kernel", gen(65, 0, -EBADFD, 0, 38, EI, EF, EF, 0),
	     3, Y, Y, Y, U, Y, Y, 65, 38, IOUR_LIMITS_QUERY, 1, true);
	CASE("R_DISABLED refused but ENABLE_RINGS known", gen(63, EI, -EBADFD, 0, 36, EI, 0, EI, 0),
	     1, U, Y, Y, N, N, N, 0, 0, IOUR_LIMITS_NONE, 0, true);
	CASE("QUERY blind but blind RESTRICTIONS -EBADF", gen(63, 0, -EBADFD, 0, 36, EB, EI, EI, 0),
	     3, Y, Y, U, N, N, N, 63, 36, IOUR_LIMITS_QUERY, 0, true);

	struct iour__probe_raw r;
	/* a task restricted by inherited task restrictions */
	r = gen(65, 0, -EACCES, 0, 38, EP, EF, EF, 0);
	r.ring_reg_null = -EBUSY;
	CASE("7.0, inherited task set", r, 4, R, Y, Y, R, Y, Y, 65, 38, IOUR_LIMITS_QUERY, 1, false);
	/* io_uring disabled */
	r = gen(0, 0, 0, 0, 0, 0, 0, 0, 0);
	r.setup = -EPERM;
	r.done = IOUR__RAW_SETUP | IOUR__RAW_END;
	CASE("io_uring_disabled=2", r, 0, N, N, N, N, N, N, 0, 0, IOUR_LIMITS_NONE, 0, false);
	/* the child was killed after the disabled ring */
	r = gen(63, 0, -EBADFD, 0, 36, EI, EI, EI, 0);
	r.done = IOUR__RAW_SETUP | IOUR__RAW_RDIS | IOUR__RAW_PROBE;
	r.child_signal = SIGSYS;
	CASE("child killed at QUERY", r, 2, Y, U, U, U, U, U, 63, 35, IOUR_LIMITS_TABLE, 0, false);
#undef CASE

	for (i = 0; i < n; i++) {
		const struct interp_case *c = &cases[i];
		struct iour_features f;
		struct iour__kernel_limits lim;

		iour__probe_interpret(&c->raw, &f, &lim);
		cr_expect_eq(f.level, c->level, "%s: level %u", c->name, f.level);
		cr_expect_eq(f.ring_restrictions, c->ring, "%s: ring %u", c->name, f.ring_restrictions);
		cr_expect_eq(f.query, c->query, "%s: query %u", c->name, f.query);
		cr_expect_eq(f.blind_register, c->blind, "%s: blind %u", c->name, f.blind_register);
		cr_expect_eq(f.task_restrictions, c->task, "%s: task %u", c->name, f.task_restrictions);
		cr_expect_eq(f.bpf_ring, c->bpf_ring, "%s: bpf_ring %u", c->name, f.bpf_ring);
		cr_expect_eq(f.bpf_task, c->bpf_task, "%s: bpf_task %u", c->name, f.bpf_task);
		cr_expect_eq(f.op_last, c->op_last, "%s: op_last %u", c->name, f.op_last);
		cr_expect_eq(f.reg_last, c->reg_last, "%s: reg_last %u", c->name, f.reg_last);
		cr_expect_eq(f.limits_source, c->source, "%s: source %u", c->name, f.limits_source);
		cr_expect_eq(f.split_gates, c->split, "%s: split %u", c->name, f.split_gates);
		cr_expect_eq(lim.op_last, c->op_last, "%s: lim.op_last", c->name);
		cr_expect_eq(lim.reg_last, c->reg_last, "%s: lim.reg_last", c->name);
		cr_expect_eq(lim.split, c->split, "%s: lim.split", c->name);
		cr_expect_eq(!!(f.flags & IOUR_FEATURES_MISMATCH), c->mismatch, "%s: flags %#llx",
			     c->name, (unsigned long long)f.flags);
		cr_expect_eq(f.kernel_level, f.level, "%s", c->name);
	}
	cr_log_info("%d emulated kernel generations interpreted", n);
}

Test(probe, emulated_forced_levels_on_7_2_answers)
{
	const int EF = -EFAULT;
	struct iour__probe_raw r = gen(65, 0, -EBADFD, 0, 38, EF, EF, EF, 38);
	struct iour_features f;
	struct iour__kernel_limits lim;
	int lv;

	r.pdu[iour_payload_find(IOUR_OP_CONNECT)] = 24;
	for (lv = -2; lv <= 9; lv++) {
		r.force = lv;
		iour__probe_interpret(&r, &f, &lim);
		cr_assert_eq(f.kernel_level, 5);
		if (lv < 0 || lv >= 5) {
			cr_assert_eq(f.level, 5);
			cr_assert_eq(!!(f.flags & IOUR_FEATURES_FORCE_IGNORED), lv == -2 || lv > 5);
			cr_assert_eq(f.pdu_connect, 24);
			cr_assert_eq(f.pdu_size[IOUR_OP_CONNECT], 24);
			cr_assert_eq(f.pdu_size[IOUR_OP_SOCKET], 12);
			continue;
		}
		/* The array follows the forced level too. */
		cr_assert_eq(f.pdu_size[IOUR_OP_CONNECT], 0);
		cr_assert_eq(f.pdu_size[IOUR_OP_SOCKET], lv >= 4 ? 12 : 0);
		cr_assert_eq(f.pdu_size[IOUR_OP_OPENAT2], lv >= 4 ? 24 : 0);
		cr_assert_eq(f.level, (uint32_t)lv);
		cr_assert(f.flags & IOUR_FEATURES_FORCED);
		cr_assert_eq(f.pdu_connect, 0);
		cr_assert_eq(f.task_restrictions == IOUR_AVAIL_YES, lv >= 4);
		cr_assert_eq(f.bpf_ring == IOUR_AVAIL_YES, lv >= 4);
		cr_assert_eq(f.bpf_task == IOUR_AVAIL_YES, lv >= 4);
		cr_assert_eq(f.pdu_socket == 12, lv >= 4);
		cr_assert_eq(f.query == IOUR_AVAIL_YES, lv >= 3);
		cr_assert_eq(f.sqe_flags != 0, lv >= 3);
		cr_assert_eq(f.ring_restrictions == IOUR_AVAIL_YES, lv >= 2);
		cr_assert_eq(f.limits_source, lv >= 3 ? IOUR_LIMITS_QUERY : lv == 2 ? IOUR_LIMITS_PROBE
									       : IOUR_LIMITS_NONE);
		cr_assert_eq(f.io_uring == IOUR_AVAIL_YES, lv >= 1);
		/* the real limits stay available for translation */
		cr_assert_eq(lim.reg_last, 38);
		cr_assert_eq(lim.split, 1);
	}
}

Test(probe, reg_last_table)
{
	cr_assert_eq(iour__reg_last_for_op_last(0), 0);
	cr_assert_eq(iour__reg_last_for_op_last(33), 0);
	cr_assert_eq(iour__reg_last_for_op_last(34), 13);
	cr_assert_eq(iour__reg_last_for_op_last(49), 26);
	cr_assert_eq(iour__reg_last_for_op_last(50), 26);
	cr_assert_eq(iour__reg_last_for_op_last(63), 35);
	cr_assert_eq(iour__reg_last_for_op_last(65), 37);
	cr_assert_eq(iour__reg_last_for_op_last(200), 37);
}

/* ---- bad input and struct sizes --------------------------------------- */

Test(probe, bad_input)
{
	struct iour_features f = { .sz = sizeof(f) };
	struct {
		struct iour_probe_opts o;
		uint64_t extra;
	} big = { { .sz = sizeof(big) }, 0 };
	struct iour_probe_opts o = { .sz = sizeof(o) };

	cr_assert_eq(iour_probe(NULL, NULL), -EINVAL);
	f.sz = 0;
	cr_assert_eq(iour_probe(NULL, &f), -EINVAL);
	f.sz = offsetof(struct iour_features, level) + 3;
	cr_assert_eq(iour_probe(NULL, &f), -EINVAL);
	f.sz = 4097;
	cr_assert_eq(iour_probe(NULL, &f), -EINVAL);
	f.sz = sizeof(f);
	o.sz = 4;
	cr_assert_eq(iour_probe(&o, &f), -EINVAL);
	o.sz = sizeof(o);
	o.flags = 1ULL << 5;
	cr_assert_eq(iour_probe(&o, &f), -EINVAL);
	o.flags = IOUR_PROBE_NO_CACHE | IOUR_PROBE_REFRESH;
	cr_assert_eq(iour_probe(&o, &f), -EINVAL);
	big.extra = 1;
	cr_assert_eq(iour_probe(&big.o, &f), -E2BIG);
	cr_assert_eq(iour__probe_runs(), 0, "bad input must not probe");
	big.extra = 0;
	cr_assert_eq(iour_probe(&big.o, &f), 0);
	o.sz = sizeof(size_t); /* only sz: all defaults */
	o.flags = 0;
	cr_assert_eq(iour_probe(&o, &f), 0);

	cr_assert_str_eq(iour_feature_level_str(3), "per-ring restrictions and QUERY (Linux 6.18+)");
	cr_assert_str_eq(iour_feature_level_str(-1), "unknown level");
	cr_assert_str_eq(iour_feature_level_str(6), "unknown level");
	for (int l = 0; l <= IOUR_LEVEL_MAX; l++)
		cr_assert_str_neq(iour_feature_level_str(l), "unknown level");
	cr_assert_str_eq(iour_avail_str(IOUR_AVAIL_NO_PRIV), "no privilege");
	cr_assert_str_eq(iour_avail_str(99), "invalid");
}

Test(probe, smaller_and_larger_output_structs)
{
	struct iour_features full = probe_now(0);
	unsigned char buf[sizeof(struct iour_features) + 64];
	struct iour_features *f = (struct iour_features *)buf;
	size_t small = offsetof(struct iour_features, io_uring);

	/* An older caller that knows only level/kernel_level/flags: nothing
	 * beyond its struct is written, not even half a field. */
	memset(buf, 0xa5, sizeof(buf));
	f->sz = small + 2;
	cr_assert_eq(iour_probe(NULL, f), 0);
	cr_assert_eq(f->level, full.level);
	cr_assert_eq(f->flags, full.flags);
	for (size_t i = small; i < sizeof(buf); i++)
		cr_assert_eq(buf[i], 0xa5, "byte %zu written", i);

	/* Every size in between: a prefix of whole fields, never a byte
	 * beyond sz, longer for a larger struct; the 1.0 struct (up to
	 * pdu_size[]) gets all of it.  A byte was written if it is the same
	 * after two calls on buffers filled with different bytes. */
	for (size_t sz = offsetof(struct iour_features, kernel_level), last = 0;
	     sz <= sizeof(full); sz++) {
		unsigned char other[sizeof(buf)];
		size_t n = sizeof(size_t);

		memset(other, 0x5a, sizeof(other));
		((struct iour_features *)(void *)other)->sz = sz;
		cr_assert_eq(iour_probe(NULL, (struct iour_features *)(void *)other), 0);
		memset(buf, 0xa5, sizeof(buf));
		f->sz = sz;
		cr_assert_eq(iour_probe(NULL, f), 0, "sz %zu", sz);
		cr_assert_eq(f->sz, sz);
		while (n < sizeof(buf) && buf[n] == other[n])
			n++;
		for (size_t i = n; i < sizeof(buf); i++)
			cr_assert(buf[i] == 0xa5 && other[i] == 0x5a, "sz %zu: byte %zu of %zu", sz,
				  i, n);
		cr_assert_leq(n, sz, "sz %zu: byte %zu written", sz, n - 1);
		cr_assert_eq(memcmp(buf + sizeof(size_t), (char *)&full + sizeof(size_t),
				    n - sizeof(size_t)),
			     0, "sz %zu", sz);
		cr_assert_geq(n, last, "sz %zu: %zu bytes, %zu for a smaller struct", sz, n, last);
		last = n;
		if (sz == offsetof(struct iour_features, pdu_size) || sz == sizeof(full))
			cr_assert_eq(n, sz, "sz %zu: %zu bytes", sz, n);
	}

	/* A newer caller with a larger struct: the unknown tail is zeroed. */
	memset(buf, 0xa5, sizeof(buf));
	f->sz = sizeof(buf);
	cr_assert_eq(iour_probe(NULL, f), 0);
	cr_assert_eq(memcmp((char *)f + sizeof(size_t), (char *)&full + sizeof(size_t),
			    sizeof(full) - sizeof(size_t)), 0);
	for (size_t i = sizeof(full); i < sizeof(buf); i++)
		cr_assert_eq(buf[i], 0, "tail byte %zu not zeroed", i);
}
