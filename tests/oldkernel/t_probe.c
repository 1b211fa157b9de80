/* SPDX-License-Identifier: MIT */
/*
 * iour_probe() on a real Linux 6.1 kernel: what the library concludes from
 * the kernel's answers, and the raw answers it kept (doc/kernel.md
 * 5.4 and 5.5).  6.1 has per-ring restrictions with the coupled gates, no
 * ring-less ("blind") register path (fd -1 is looked up: -EBADF), no QUERY,
 * no task restrictions and no BPF filters; its limits come from PROBE (49
 * request opcodes) and the range test (26 register opcodes).  Then the
 * IOUR_FEATURE_LEVEL override, and what it does to the ring functions.
 */
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "mini_ring.h"
#include "probe/probe_answers.h"

/* this generation's IORING_OP_LAST and IORING_REGISTER_LAST (guest.h) */
#define OP_LAST_6_1 ((int)guest_gen()->op_last)
#define REG_LAST_6_1 ((int)guest_gen()->reg_last)

static struct iour_features feat(uint64_t flags, int *rc)
{
	struct iour_probe_opts o;
	struct iour_features f;

	memset(&o, 0, sizeof(o));
	o.sz = sizeof(o);
	o.flags = flags;
	memset(&f, 0, sizeof(f));
	f.sz = sizeof(f);
	*rc = iour_probe(flags ? &o : NULL, &f);
	return f;
}

/* Opcodes PROBE reports supported, asked here without the library. */
static int raw_supported_ops(void)
{
	static uint8_t pbuf[sizeof(struct kio_probe) + 256 * sizeof(struct kio_probe_op)];
	struct kio_probe *p = (struct kio_probe *)pbuf;
	struct mini_ring r;
	int n = 0;

	if (mini_ring_init(&r, 1, 0))
		return -1;
	memset(pbuf, 0, sizeof(pbuf));
	if (raw_register(r.fd, KIO_REGISTER_PROBE, p, 256) == 0)
		for (int i = 0; i < p->ops_len; i++)
			n += !!(p->ops[i].flags & KIO_OP_SUPPORTED);
	mini_ring_exit(&r);
	return n;
}

static void check_answers(void)
{
	unsigned long runs0 = iour__probe_runs();
	struct iour_features f, g;
	int rc, bits = 0;

	f = feat(0, &rc);
	CHECK_EQ("iour_probe", rc, 0);
	CHECK_EQ("one probe child for the first call", iour__probe_runs() - runs0, 1);
	CHECK_EQ("feature level 2 (per-ring restrictions)", f.level, IOUR_LEVEL_RING);
	CHECK_EQ("kernel level 2", f.kernel_level, IOUR_LEVEL_RING);
	printf("     level: %s\n", iour_feature_level_str((int)f.level));
	CHECK_EQ("flags (no mismatch, not forced, child not killed)", f.flags, 0);
	CHECK_EQ("child_signal", f.child_signal, 0);

	/* io_uring usable */
	CHECK_EQ("io_uring usable", f.io_uring, IOUR_AVAIL_YES);
	CHECK_EQ("raw io_uring_setup(1, NULL)", f.setup_err, -EFAULT);
	CHECK_NUM("sysctl kernel.io_uring_disabled as the file says (-1: absent)",
		  f.sysctl_disabled, access("/proc/sys/kernel/io_uring_disabled", F_OK) ? -1 : 0);
	CHECK_EQ("seccomp mode of /init's child", f.seccomp_mode, 0);
	CHECK_EQ("no_new_privs of /init's child", f.no_new_privs, 0);

	/* per-ring restrictions, coupled gates */
	CHECK_EQ("per-ring restrictions", f.ring_restrictions, IOUR_AVAIL_YES);
	CHECK_EQ("raw R_DISABLED setup", f.r_disabled_err, 0);
	CHECK_EQ("raw RESTRICTIONS(NULL) on a fresh disabled ring", f.ring_register_err, -EINVAL);
	CHECK_EQ("raw ENABLE_RINGS on an enabled ring", f.enable_rings_err, -EBADFD);
	CHECK_EQ("coupled gates (split_gates 0)", f.split_gates, 0);

	/* limits: PROBE and the register range test */
	CHECK_EQ("op_last from PROBE", f.op_last, OP_LAST_6_1);
	CHECK_EQ("reg_last from the range test", f.reg_last, REG_LAST_6_1);
	CHECK_EQ("limits source PROBE + range test", f.limits_source, IOUR_LIMITS_PROBE);
	CHECK_EQ("PROBE usable", f.probe, IOUR_AVAIL_YES);
	CHECK_EQ("raw PROBE", f.probe_err, 0);
	CHECK_EQ("PROBE last_op", f.probe_last_op, OP_LAST_6_1 - 1);
	for (int w = 0; w < 4; w++)
		bits += __builtin_popcountll(f.supported_ops[w]);
	CHECK_EQ("supported-op bitmap agrees with its count", bits, f.nr_supported_ops);
	CHECK_EQ("supported ops agree with a raw PROBE", f.nr_supported_ops, raw_supported_ops());
	CHECK_EQ("no supported op at or above 49",
		 (f.supported_ops[0] >> OP_LAST_6_1) | f.supported_ops[1] | f.supported_ops[2] |
			 f.supported_ops[3],
		 0);

	/* no blind path, no QUERY */
	CHECK_EQ("blind register path absent", f.blind_register, IOUR_AVAIL_NO);
	CHECK_EQ("raw blind RESTRICTIONS (fd -1 looked up)", f.task_restrictions_err, -EBADF);
	CHECK_EQ("QUERY absent", f.query, IOUR_AVAIL_NO);
	CHECK_EQ("raw blind QUERY (35 >= REGISTER_LAST)", f.query_err, -EINVAL);
	CHECK_EQ("no QUERY opcodes", f.nr_query_opcodes, 0);
	CHECK_EQ("no QUERY masks", f.feature_flags | f.setup_flags | f.enter_flags | f.sqe_flags,
		 0);

	/* no task restrictions, no BPF */
	CHECK_EQ("task restrictions absent", f.task_restrictions, IOUR_AVAIL_NO);
	CHECK_EQ("ring BPF filters absent", f.bpf_ring, IOUR_AVAIL_NO);
	CHECK_EQ("raw ring BPF_FILTER (37 >= REGISTER_LAST)", f.bpf_ring_err, -EINVAL);
	CHECK_EQ("task BPF filters absent", f.bpf_task, IOUR_AVAIL_NO);
	CHECK_EQ("raw blind BPF_FILTER", f.bpf_task_err, -EINVAL);
	CHECK_EQ("no filter payload sizes",
		 f.pdu_socket | f.pdu_openat | f.pdu_openat2 | f.pdu_connect, 0);

	/* the cache */
	g = feat(0, &rc);
	CHECK_EQ("cached iour_probe", rc, 0);
	CHECK_EQ("cached answer: no new probe child", iour__probe_runs() - runs0, 1);
	CHECK("cached answer identical", memcmp(&f, &g, sizeof(f)) == 0);
	CHECK_EQ("iour_feature_level()", iour_feature_level(), IOUR_LEVEL_RING);
	g = feat(IOUR_PROBE_NO_CACHE, &rc);
	CHECK_EQ("uncached iour_probe runs a child", iour__probe_runs() - runs0, 2);
	CHECK("uncached answer identical", rc == 0 && memcmp(&f, &g, sizeof(f)) == 0);
}

static int create_nop_ring(void)
{
	struct iour_ruleset *rs = NULL;
	int fd = -1, rc;

	if (iour_ruleset__new(NULL, &rs))
		return -ENOMEM;
	iour_ruleset__allow_sqe_op(rs, 0);
	iour_ruleset__set_sqe_flags(rs, 0, 0);
	rc = iour_ring_create(4, NULL, rs, NULL, &fd);
	iour_ruleset__free(rs);
	if (rc == 0)
		close(fd);
	return rc;
}

static void check_forced(void)
{
	struct iour_features f;
	int rc;

	setenv("IOUR_FEATURE_LEVEL", "1", 1);
	f = feat(IOUR_PROBE_REFRESH, &rc);
	CHECK_EQ("IOUR_FEATURE_LEVEL=1: probe", rc, 0);
	CHECK_EQ("IOUR_FEATURE_LEVEL=1: level", f.level, IOUR_LEVEL_IO_URING);
	CHECK_EQ("IOUR_FEATURE_LEVEL=1: kernel level still 2", f.kernel_level, IOUR_LEVEL_RING);
	CHECK_EQ("IOUR_FEATURE_LEVEL=1: FORCED flag", f.flags, IOUR_FEATURES_FORCED);
	CHECK_EQ("IOUR_FEATURE_LEVEL=1: io_uring still usable", f.io_uring, IOUR_AVAIL_YES);
	CHECK_EQ("IOUR_FEATURE_LEVEL=1: ring restrictions read absent", f.ring_restrictions,
		 IOUR_AVAIL_NO);
	CHECK_EQ("IOUR_FEATURE_LEVEL=1: no limits", f.op_last | f.reg_last | f.limits_source, 0);
	CHECK_EQ("IOUR_FEATURE_LEVEL=1: iour_feature_level()", iour_feature_level(),
		 IOUR_LEVEL_IO_URING);
	CHECK_EQ("IOUR_FEATURE_LEVEL=1: iour_ring_create refuses", create_nop_ring(),
		 -IOUR_ERRNO__UNSUPPORTED);

	setenv("IOUR_FEATURE_LEVEL", "4", 1);
	f = feat(IOUR_PROBE_REFRESH, &rc);
	CHECK_EQ("IOUR_FEATURE_LEVEL=4 (above the kernel): level stays 2", f.level,
		 IOUR_LEVEL_RING);
	CHECK_EQ("IOUR_FEATURE_LEVEL=4: FORCE_IGNORED flag", f.flags, IOUR_FEATURES_FORCE_IGNORED);
	CHECK_EQ("IOUR_FEATURE_LEVEL=4: task restrictions still absent", f.task_restrictions,
		 IOUR_AVAIL_NO);

	setenv("IOUR_FEATURE_LEVEL", "one", 1);
	f = feat(IOUR_PROBE_REFRESH, &rc);
	CHECK_EQ("IOUR_FEATURE_LEVEL=one (invalid): level 2", f.level, IOUR_LEVEL_RING);
	CHECK_EQ("IOUR_FEATURE_LEVEL=one: FORCE_IGNORED flag", f.flags,
		 IOUR_FEATURES_FORCE_IGNORED);

	unsetenv("IOUR_FEATURE_LEVEL");
	f = feat(IOUR_PROBE_REFRESH, &rc);
	CHECK_EQ("unset again: level 2", f.level, IOUR_LEVEL_RING);
	CHECK_EQ("unset again: flags", f.flags, 0);
	CHECK_EQ("unset again: iour_ring_create works", create_nop_ring(), 0);
}

/*
 * A full file-descriptor table makes io_uring_setup() fail with EMFILE:
 * the probe reports that errno instead of "before 5.10" and caches
 * nothing, so the level is right once descriptors are free again.  In a
 * child, before this process has probed: its exit status is the first
 * failed step (0: all held).
 */
static int shortage_child(void)
{
	struct rlimit old, low;
	struct iour_features f;
	int first = -1, last = -1, fd;

	if (getrlimit(RLIMIT_NOFILE, &old))
		return 10;
	low = old;
	low.rlim_cur = 32;
	if (setrlimit(RLIMIT_NOFILE, &low))
		return 11;
	while ((fd = dup(0)) >= 0) {
		if (first < 0)
			first = fd;
		last = fd;
	}
	if (iour_feature_level() != -EMFILE)
		return 1;
	memset(&f, 0, sizeof(f));
	f.sz = sizeof(f);
	if (iour_probe(NULL, &f) != -EMFILE)
		return 2;
	for (fd = first; first >= 0 && fd <= last; fd++)
		close(fd);
	if (setrlimit(RLIMIT_NOFILE, &old))
		return 12;
	if (iour_feature_level() != IOUR_LEVEL_RING)
		return 3;
	return 0;
}

static void check_shortage(void)
{
	int st = 0;
	pid_t pid = fork();

	if (pid == 0)
		_exit(shortage_child());
	CHECK_EQ("fork for the full-fd-table check", pid > 0, 1);
	if (pid <= 0)
		return;
	waitpid(pid, &st, 0);
	CHECK_NUM("full fd table: -EMFILE reported, not cached, level 2 afterwards (first "
		  "failed step, 0: none)",
		  WIFEXITED(st) ? WEXITSTATUS(st) : 100 + WTERMSIG(st), 0);
}

int main(void)
{
	if (guest_gen()->query || !guest_gen()->exact) {
		GUEST_SKIP("t_probe",
			   "pre-QUERY answers need a kernel before 6.18; the live tier's "
			   "probe tests check QUERY kernels");
		return guest_summary();
	}
	check_shortage();
	check_answers();
	check_forced();
	return guest_summary();
}
