/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "live.h"
#include "ring_util.h"
#include "base/uapi.h"

static struct iour_features feat = { .sz = sizeof(feat) };
static int feat_rc = 1;

const struct iour_features *live_features(void)
{
	if (feat_rc == 1) {
		feat.sz = sizeof(feat);
		feat_rc = iour_probe(NULL, &feat);
	}
	return feat_rc ? NULL : &feat;
}

static const char *level_note(const struct iour_features *f, char *buf, size_t len)
{
	if (f->flags & IOUR_FEATURES_FORCED)
		snprintf(buf, len, ", lowered by IOUR_FEATURE_LEVEL from %u", f->kernel_level);
	else
		buf[0] = '\0';
	return buf;
}

static bool present(uint32_t a)
{
	return a == IOUR_AVAIL_YES || a == IOUR_AVAIL_NO_PRIV;
}

const char *live_missing(unsigned need)
{
	static char why[256];
	const struct iour_features *f = live_features();
	char note[64];

	if (!f) {
		snprintf(why, sizeof(why), "the kernel probe failed (%s)", iour_errname(feat_rc));
		return why;
	}
	level_note(f, note, sizeof(note));
	/* io_uring present but not for this process: name the cause, not the
	 * feature level it lowers (kernel.io_uring_disabled, its group). */
	if (need && f->io_uring != IOUR_AVAIL_YES && f->setup_err != -ENOSYS) {
		snprintf(why, sizeof(why),
			 "io_uring is not usable by this process: io_uring_setup answers %s "
			 "(kernel.io_uring_disabled=%d, kernel.io_uring_group=%d; -1: no sysctl)",
			 iour_errname(f->setup_err), f->sysctl_disabled, f->sysctl_group);
		return why;
	}
	if ((need & LIVE_RING) && f->level < IOUR_LEVEL_RING) {
		snprintf(why, sizeof(why),
			 "kernel lacks per-ring restrictions (feature level %u%s, needs 2)", f->level,
			 note);
		return why;
	}
	if ((need & LIVE_TASK) && (f->level < IOUR_LEVEL_TASK_BPF || !present(f->task_restrictions))) {
		if (f->task_restrictions == IOUR_AVAIL_RESTRICTED)
			snprintf(why, sizeof(why), "this process already holds io_uring task "
				 "restrictions; the test needs an unrestricted task");
		else if (f->level >= IOUR_LEVEL_TASK_BPF)
			snprintf(why, sizeof(why), "the probe could not confirm task-level "
				 "restrictions (answer %s)", iour_errname(f->task_restrictions_err));
		else
			snprintf(why, sizeof(why),
				 "kernel lacks task-level restrictions (feature level %u%s, needs 4)",
				 f->level, note);
		return why;
	}
	if ((need & LIVE_TASK_BPF) && (f->level < IOUR_LEVEL_TASK_BPF || !present(f->bpf_task))) {
		snprintf(why, sizeof(why),
			 "kernel lacks task-level BPF filters (feature level %u%s, needs 4)", f->level,
			 note);
		return why;
	}
	if ((need & LIVE_RING_BPF) && (f->level < IOUR_LEVEL_TASK_BPF || !present(f->bpf_ring))) {
		snprintf(why, sizeof(why),
			 "kernel lacks ring-level BPF filters (feature level %u%s, needs 4)", f->level,
			 note);
		return why;
	}
	if ((need & LIVE_CONNECT) && f->level < IOUR_LEVEL_CONNECT) {
		snprintf(why, sizeof(why),
			 "kernel fills no CONNECT filter payload (feature level %u%s, needs 5: "
			 "Linux 7.2)", f->level, note);
		return why;
	}
	return NULL;
}

void live_log(const char *fmt, ...)
{
	va_list ap;

	fputs("live: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int live_policy(struct iour_policy **out, uint32_t target, const struct iour_ruleset *rs,
		const struct iour_filter *flt, uint32_t dflt)
{
	struct iour_policy *p = NULL;
	int rc;

	*out = NULL;
	rc = iour_policy__new(NULL, &p);
	if (!rc && rs)
		rc = iour_policy__set_ruleset(p, rs);
	if (!rc && flt)
		rc = iour_policy__set_filter(p, flt);
	if (!rc)
		rc = iour_policy__set_attr(p, IOUR_POLICY_ATTR_TARGET, target);
	if (!rc)
		rc = iour_policy__set_attr(p, IOUR_POLICY_ATTR_DEFAULT, dflt);
	if (rc) {
		iour_policy__free(p);
		return rc;
	}
	*out = p;
	return 0;
}

int live_rule(struct iour_filter **f, uint32_t opcode, uint32_t verdict, uint32_t field,
	      uint32_t op, uint64_t value, uint64_t arg, uint32_t dflt)
{
	struct iour_cmp c;
	int rc;

	if (!*f && (rc = iour_filter__new(NULL, f)))
		return rc;
	memset(&c, 0, sizeof(c));
	c.sz = sizeof(c);
	c.field = field;
	c.op = op;
	c.value = value;
	c.arg = arg;
	rc = iour_filter__add_rule(*f, opcode, verdict, &c, 1);
	if (!rc)
		rc = iour_filter__set_default(*f, opcode, dflt);
	return rc;
}

int live_report_is(const struct iour_report *r, int status, int mech, char *why, size_t len)
{
	int st = iour_report__status(r), me = iour_report__mechanism(r);

	if (st == status && me >= 0 && (me & mech) == mech)
		return 1;
	snprintf(why, len, "report says %s, mechanism %#x, flags %#x; expected %s with %#x",
		 iour_status_str(st), me, iour_report__flags(r), iour_status_str(status), mech);
	return 0;
}

int live_filter_flags(const struct iour_plan *pl, uint32_t opcode)
{
	int i, n = iour_plan__step_cnt(pl);

	for (i = 0; i < n; i++) {
		struct iour_plan_step s = { .sz = sizeof(s) };
		struct kio_bpf b;
		size_t len = sizeof(b);

		if (iour_plan__step(pl, (size_t)i, &s) || s.op != IOUR_STEP_BPF_FILTER ||
		    s.opcode != opcode)
			continue;
		if (iour_plan__step_arg(pl, (size_t)i, &b, &len) || len != sizeof(b))
			return -1;
		return (int)(b.filter.flags | ((uint32_t)b.filter.pdu_size << 8));
	}
	return -1;
}

void live_print_plan(const struct iour_plan *pl)
{
	size_t len = 0;
	char *t;

	if (iour_plan__describe(pl, NULL, &len) || !(t = malloc(len)))
		return;
	if (!iour_plan__describe(pl, t, &len))
		fputs(t, stderr);
	free(t);
}

void live_print_report(const char *title, const struct iour_report *r)
{
	size_t len = 0;
	char *t;

	if (iour_report__describe(r, NULL, &len) || !(t = malloc(len)))
		return;
	if (!iour_report__describe(r, t, &len))
		fprintf(stderr, "%s:\n%s", title, t);
	free(t);
}

struct iour_verify_req live_req(uint32_t opcode, uint32_t expect)
{
	struct iour_verify_req r;

	memset(&r, 0, sizeof(r));
	r.sz = sizeof(r);
	r.opcode = opcode;
	r.expect = expect;
	return r;
}

struct iour_verify_req live_socket(int family, int type, uint32_t expect)
{
	struct iour_verify_req r = live_req(OP_SOCKET, expect);

	r.family = family;
	r.type = type;
	return r;
}

struct iour_verify_req live_open(uint32_t opcode, const char *path, uint64_t flags,
				 uint64_t resolve, uint32_t expect)
{
	struct iour_verify_req r = live_req(opcode, expect);

	r.path = path;
	r.open_flags = flags;
	r.open_mode = (flags & 0100 /* O_CREAT */) ? 0600 : 0;
	r.open_resolve = resolve;
	return r;
}

const char *live_examples_dir(void)
{
	static char path[4096];
	const char *dir = getenv("IOUR_EXAMPLES_DIR");
	char self[2048];
	ssize_t n;

	if (dir)
		return dir;
	/* The build tree's layout: tests/live next to examples/. */
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return NULL;
	self[n] = '\0';
	if (strrchr(self, '/'))
		*strrchr(self, '/') = '\0';
	snprintf(path, sizeof(path), "%s/../examples", self);
	return access(path, X_OK) == 0 ? path : NULL;
}

const char *live_helper(void)
{
	static char path[4096];
	const char *dir = live_examples_dir();

	if (!dir)
		return NULL;
	snprintf(path, sizeof(path), "%s/iour-verify-helper", dir);
	return access(path, X_OK) == 0 ? path : NULL;
}

int live_run_example(char *const argv[], char *out, size_t cap)
{
	const char *dir = live_examples_dir();
	char path[4096];
	size_t n = 0;
	ssize_t k;
	int pfd[2], st = 0;
	pid_t pid;

	if (!dir)
		return -ENOENT;
	snprintf(path, sizeof(path), "%s/%s", dir, argv[0]);
	if (pipe(pfd))
		return -errno;
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		dup2(pfd[1], 1);
		dup2(pfd[1], 2);
		char *args[32];
		size_t i;

		close(pfd[0]);
		close(pfd[1]);
		/* argv[0] is the full path: the examples look for their helper
		 * next to themselves. */
		args[0] = path;
		for (i = 1; i < 31 && argv[i]; i++)
			args[i] = argv[i];
		args[i] = NULL;
		execv(path, args);
		_exit(127);
	}
	close(pfd[1]);
	while (n + 1 < cap && (k = read(pfd[0], out + n, cap - 1 - n)) > 0)
		n += (size_t)k;
	out[n] = '\0';
	close(pfd[0]);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1000 + WTERMSIG(st);
}

int live_verify(const struct iour_verify_req *reqs, size_t n, enum live_verify_mode mode,
		int ring_fd, char *why, size_t len)
{
	struct iour_verify_result res[IOUR_VERIFY_MAX_REQS];
	struct iour_verify_opts o;
	size_t i, off = 0;
	int rc;

	memset(&o, 0, sizeof(o));
	o.sz = sizeof(o);
	o.timeout_ms = 20000;
	if (mode == LV_RING) {
		o.flags = IOUR_VERIFY_RING_FD;
		o.ring_fd = ring_fd;
	} else if (mode == LV_EXEC) {
		o.exec_path = live_helper();
		if (!o.exec_path && live_examples_dir()) {
			/* The build tree (make check-live sets IOUR_EXAMPLES_DIR)
			 * and the 7.x guest (/examples) ship the helper: its
			 * absence is a failure there, never a pass. */
			if (why && len)
				snprintf(why, len, "the exec helper iour-verify-helper is missing "
					 "from %s", live_examples_dir());
			return -ENOEXEC;
		}
		if (!o.exec_path)
			return -ENOENT;
	}
	memset(res, 0, sizeof(res));
	rc = iour_verify(reqs, n, res, &o);
	if (why && len) {
		why[0] = '\0';
		off = (size_t)snprintf(why, len, "iour_verify: %s;", iour_errname(rc));
		for (i = 0; i < n && off < len; i++) {
			if (res[i].status == IOUR_VERIFY_MATCH)
				continue;
			off += (size_t)snprintf(why + off, len - off,
						" [%zu] opcode %u: expected %s, status %u, res %d;", i,
						reqs[i].opcode,
						reqs[i].expect == IOUR_EXPECT_ALLOW ? "allow" : "deny",
						res[i].status, res[i].res);
		}
	}
	return rc;
}

int live_submit(struct io_uring *ring, struct io_uring_sqe *sqe)
{
	int res = 0, r = ring_submit_wait(ring, sqe, &res);

	return r == 1 ? res : LIVE_NO_CQE;
}

int live_refresh(struct iour_features *f)
{
	IOUR_OPTS(iour_probe_opts, o, .flags = IOUR_PROBE_REFRESH);

	memset(f, 0, sizeof(*f));
	f->sz = sizeof(*f);
	return iour_probe(&o, f);
}

/* One closing line that counts the skips too (Criterion's synthesis leaves
 * them out). */
ReportHook(POST_ALL)(struct criterion_global_stats *st)
{
	const struct iour_features *f = live_features();

	fprintf(stderr, "live tier on feature level %u: %zu tests, %zu passed, %zu failed, "
		"%zu crashed, %zu skipped (filtered out, or lacking kernel support: reasons above)\n",
		f ? f->level : 0, st->nb_tests, st->tests_passed, st->tests_failed,
		st->tests_crashed, st->tests_skipped);
	fprintf(stderr, "%zu passed, %zu failed, %zu skipped\n", st->tests_passed,
		st->tests_failed + st->tests_crashed, st->tests_skipped);
}

/* Verbose by default (every test and every skip with its reason), one
 * test at a time; the command line can still change both. */
__attribute__((visibility("default"))) int main(int argc, char *argv[])
{
	struct criterion_test_set *tests = criterion_initialize();
	int ok = 1;

	criterion_options.logging_threshold = CRITERION_INFO;
	criterion_options.jobs = 1;
	if (criterion_handle_args(argc, argv, true))
		ok = criterion_run_all_tests(tests);
	criterion_finalize(tests);
	return ok ? 0 : 1;
}

/* Documented in live.h */
void live_prog_path(char *buf, size_t len, const char *rel)
{
	const char *dir = live_examples_dir();
	const char *base = strrchr(rel, '/') ? strrchr(rel, '/') + 1 : rel;

	cr_assert_not_null(dir, "the examples' directory is unknown");
	snprintf(buf, len, "%s/../%s", dir, rel);
	if (access(buf, X_OK))
		snprintf(buf, len, "%s/../progs/%s", dir, base);
	cr_assert_eq(access(buf, X_OK), 0,
		     "%s is missing: the build (make tools) or the guest's initramfs "
		     "(scripts/guest-payloads/30-cli.sh) must provide it",
		     rel);
}

/* Documented in live.h */
char *live_slurp(int fd)
{
	off_t n = lseek(fd, 0, SEEK_END);
	char *s;

	cr_assert_geq(n, 0);
	s = malloc((size_t)n + 1);
	cr_assert_not_null(s);
	cr_assert_eq(pread(fd, s, (size_t)n, 0), n);
	s[n] = '\0';
	return s;
}

/* Documented in live.h */
int live_run_argv(char *const argv[], const char *in, char **out, char **err)
{
	int i = memfd_create("in", 0), o = memfd_create("out", 0), e = memfd_create("err", 0);
	int st;
	pid_t pid;

	cr_assert(i >= 0 && o >= 0 && e >= 0);
	if (in)
		cr_assert_eq(write(i, in, strlen(in)), (ssize_t)strlen(in));
	lseek(i, 0, SEEK_SET);
	fflush(NULL);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		dup2(i, 0);
		dup2(o, 1);
		dup2(e, 2);
		execv(argv[0], argv);
		_exit(125);
	}
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	*out = live_slurp(o);
	*err = live_slurp(e);
	close(i);
	close(o);
	close(e);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
