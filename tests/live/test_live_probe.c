/* SPDX-License-Identifier: MIT */
/*
 * Live, probe: a shortage of the caller's resources is not a kernel fact.
 * With the file-descriptor table full, io_uring_setup() fails with EMFILE
 * in the probe child on every kernel; the probe, planning and the ring
 * functions must report -EMFILE, cache nothing, and give the kernel's real
 * level once descriptors are free again.  Runs on every kernel with
 * per-ring restrictions (5.10+), this one included.
 */
#include <errno.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "live.h"

struct shortage_arg {
	int level; /* the kernel's level, from an uncached probe */
};

static int shortage_child(void *arg, struct child_msg *m)
{
	const struct shortage_arg *a = arg;
	struct iour_features f = { .sz = sizeof(f) };
	struct iour_ruleset *rs = NULL;
	struct iour_policy *p = NULL;
	struct iour_plan *pl = NULL;
	struct fd_table_fill full;
	int r, ring = -1;

	CHK(m, iour_ruleset__new(NULL, &rs) == 0 && iour_ruleset__allow_sqe_op(rs, OP_NOP) == 0 &&
		       iour_ruleset__set_sqe_flags(rs, 0, 0) == 0);
	CHK(m, iour_policy__new(NULL, &p) == 0 && iour_policy__set_ruleset(p, rs) == 0);
	CHK(m, fd_table_fill(&full) == 0);
	r = iour_feature_level();
	CHKF(m, r == -EMFILE, "iour_feature_level() with a full fd table: %d", r);
	r = iour_probe(NULL, &f);
	CHKF(m, r == -EMFILE, "iour_probe(): %s", iour_errname(r));
	r = iour_policy__plan(p, NULL, &pl);
	CHKF(m, r == -EMFILE, "iour_policy__plan(): %s", iour_errname(r));
	r = iour_ring_create(4, NULL, rs, NULL, &ring);
	CHKF(m, r == -EMFILE && ring < 0, "iour_ring_create(): %s", iour_errname(r));
	CHK(m, fd_table_release(&full) == 0);

	r = iour_feature_level();
	CHKF(m, r == a->level, "level once descriptors are free: %d, want %d", r, a->level);
	CHK(m, iour_policy__plan(p, NULL, &pl) == 0);
	iour_plan__free(pl);
	CHK(m, iour_ring_create(4, NULL, rs, NULL, &ring) == 0 && ring >= 0);
	close(ring);
	iour_policy__free(p);
	iour_ruleset__free(rs);
	return 0;
}

Test(live_probe, full_fd_table_is_reported_not_cached)
{
	IOUR_OPTS(iour_probe_opts, o, .flags = IOUR_PROBE_NO_CACHE);
	struct iour_features f = { .sz = sizeof(f) };
	struct shortage_arg a;
	struct child_msg m;

	/* Uncached: the child must start with nothing cached (LIVE_REQUIRE
	 * would fill the cache). */
	cr_assert_eq(iour_probe(&o, &f), 0);
	if (f.level < IOUR_LEVEL_RING) {
		fprintf(stderr, "live: skipped: kernel lacks per-ring restrictions (level %u)\n",
			f.level);
		cr_skip_test("kernel lacks per-ring restrictions (level %u)", f.level);
	}
	a.level = (int)f.level;
	cr_assert_eq(child_run(shortage_child, &a, &m), 0, "%s", m.text);
	fprintf(stderr, "live: full fd table: -EMFILE from probe, plan and ring creation; level %d "
			"afterwards\n",
		a.level);
}
