/* SPDX-License-Identifier: MIT */
/*
 * Live, `explain` against `run` (doc/security.md 2.1 and 5): every effect
 * `iour-restrict explain` calls closed for a policy is attacked through
 * each of its paths by a program under `iour-restrict run` with the same
 * policy, and must fail; every path it calls open must be reachable.  The
 * view is the default one, the mechanism run uses on this kernel: the
 * ring broker before Linux 7.0, task restrictions from 7.0.  The program
 * is broker-try (tests/progs/broker_try.c, raw system calls); each attack
 * runs unconfined first (the positive control: the attack works when
 * nothing restricts it).
 *
 * - examples/policies/tcp-client.json: the paths by name, and on the
 *   broker the concrete attacks explain calls open: a file created and
 *   truncated with OPENAT, a descriptor received with RECVMSG and
 *   SCM_RIGHTS, a completion posted with io_uring_register(-1,
 *   SEND_MSG_RING), a ring-less QUERY;
 * - random allow-lists over request and register opcodes (seeded; the
 *   seed is printed, IOUR_CLAIMS_SEED repeats one): each path of each
 *   effect, and every request opcode: allowed ones get past the ring's
 *   restrictions, the others fail with EACCES;
 * - the agent's view: `explain --mechanism broker` for the same policies
 *   (the agent logs the same status and effects, tools/cli/core/mechanism.c).
 *
 * IOUR_CLAIMS_MECHANISM=companion makes the tcp-client test read the
 * companion's view instead, which calls file-open closed: the test must
 * then fail (a check that it can).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "live.h"

#define MAX_ARGS 160

/* ---- helpers ------------------------------------------------------------- */

/* A program or file next to the examples' directory (build tree), or in
 * /progs (the guests' initramfs, scripts/guest-payloads/30-cli.sh). */
static bool find_file(char *buf, size_t len, const char *rel, int mode)
{
	const char *dir = live_examples_dir();
	const char *base = strrchr(rel, '/') + 1;

	if (!dir)
		return false;
	snprintf(buf, len, "%s/../%s", dir, rel);
	if (access(buf, mode))
		snprintf(buf, len, "%s/../progs/%s", dir, base);
	return access(buf, mode) == 0;
}

/* broker-try STEPS, under `run -` with @policy on stdin, or unconfined
 * when @policy is NULL.  The output; fails the test unless it exits 0. */
static char *try_steps(const char *policy, char *const *steps, int nsteps)
{
	char tool[4096], prog[4096], *argv[MAX_ARGS + 8], *out, *err;
	int n = 0, rc;

	live_prog_path(tool, sizeof(tool), "tools/iour-restrict");
	live_prog_path(prog, sizeof(prog), "tests/broker-try");
	if (policy) {
		argv[n++] = tool;
		argv[n++] = "run";
		argv[n++] = "-";
		argv[n++] = "--";
	}
	argv[n++] = prog;
	cr_assert_leq(nsteps, MAX_ARGS);
	for (int i = 0; i < nsteps; i++)
		argv[n++] = steps[i];
	argv[n] = NULL;
	rc = live_run_argv(argv, policy, &out, &err);
	cr_assert_eq(rc, 0, "%s: exit %d\nstdout:\n%s\nstderr:\n%s", policy ? "run" : "unconfined",
		     rc, out, err);
	if (policy)
		live_log("run: %.*s", (int)strcspn(err, "\n"), err);
	free(err);
	return out;
}

/* `explain - [--mechanism M]` of @policy: its output. */
static char *explain(const char *policy, const char *mech)
{
	char tool[4096], *argv[8], *out, *err;
	int n = 0, rc;

	live_prog_path(tool, sizeof(tool), "tools/iour-restrict");
	argv[n++] = tool;
	argv[n++] = "explain";
	argv[n++] = "-";
	if (mech) {
		argv[n++] = "--mechanism";
		argv[n++] = (char *)mech;
	}
	argv[n] = NULL;
	rc = live_run_argv(argv, policy, &out, &err);
	cr_assert_eq(rc, 0, "explain: exit %d: %s", rc, err);
	free(err);
	return out;
}

/* The answer broker-try printed for @what ("op 18", "blind-query"), or
 * NULL. */
static const char *answer(const char *out, const char *what, char *buf, size_t len)
{
	size_t wl = strlen(what);

	for (const char *l = out; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		if (!strncmp(l, what, wl) && l[wl] == ':' && l[wl + 1] == ' ') {
			snprintf(buf, len, "%.*s", (int)strcspn(l + wl + 2, "\n"), l + wl + 2);
			return buf;
		}
	}
	return NULL;
}

/* ---- explain's table ------------------------------------------------------ */

enum path_kind { PK_REQ, PK_REG, PK_BLIND };

struct claim {
	char effect[32];
	bool closed; /* the path is listed under "closed:" */
	enum path_kind kind;
	int num;
	char name[64];
};

/* The paths of one table row's list ("A (how; 5.6+), fd -1 B (...)" or
 * "A, B"): names at parenthesis depth 0. */
static int parse_list(const char *s, size_t len, const char *effect, bool closed,
		      struct claim *c, int max)
{
	int n = 0, depth = 0;
	size_t start = 0;

	for (size_t i = 0; i <= len && n < max; i++) {
		char tok[64];
		size_t tl;

		if (i < len && s[i] == '(')
			depth++;
		if (i < len && s[i] == ')')
			depth--;
		if (i < len && !(depth == 0 && s[i] == ','))
			continue;
		tl = i - start;
		while (tl && s[start] == ' ')
			start++, tl--;
		snprintf(tok, sizeof(tok), "%.*s", (int)tl, s + start);
		start = i + 1;
		memset(&c[n], 0, sizeof(c[n]));
		snprintf(c[n].effect, sizeof(c[n].effect), "%s", effect);
		c[n].closed = closed;
		if (!strncmp(tok, "fd -1 ", 6)) {
			c[n].kind = PK_BLIND;
			memmove(tok, tok + 6, strlen(tok + 6) + 1);
		}
		tok[strcspn(tok, " ")] = '\0';
		snprintf(c[n].name, sizeof(c[n].name), "%s", tok);
		if (c[n].kind != PK_BLIND) {
			c[n].num = iour_opcode_from_name(tok);
			c[n].kind = PK_REQ;
			if (c[n].num < 0) {
				c[n].num = iour_register_op_from_name(tok);
				c[n].kind = PK_REG;
			}
		} else {
			c[n].num = iour_register_op_from_name(tok);
		}
		cr_assert_geq(c[n].num, 0, "explain names an unknown path '%s'", tok);
		n++;
	}
	return n;
}

/* Every path explain lists, with its state. */
static int parse_explain(const char *out, struct claim *c, int max)
{
	int n = 0;

	for (const char *l = out; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		size_t ll = strcspn(l, "\n");
		char effect[32];
		const char *open, *closed, *filt, *end = l + ll;

		if (sscanf(l, "%31s", effect) != 1 || !strcmp(effect, "EFFECT") ||
		    (strstr(l, ", mechanism ") && strstr(l, ", mechanism ") < end) ||
		    !strchr(effect, '-'))
			continue;
		/* Its paths are system calls, not opcodes: live_escape attacks
		 * them (explain_ring_acquire_agrees_with_run). */
		if (!strcmp(effect, "ring-acquire"))
			continue;
		open = strstr(l, "open: ");
		closed = strstr(l, "closed: ");
		if (open && open > end)
			open = NULL;
		if (closed && closed > end)
			closed = NULL;
		/* Filtered paths (7.0+) are left out: argument filters are
		 * attacked by the live_task_bpf and live_ring_bpf suites
		 * (doc/security.md 5.3); this test attacks closed and open. */
		filt = strstr(l, "; filtered: ");
		if (filt && filt > end)
			filt = NULL;
		if (open)
			n += parse_list(open + 6,
					(size_t)((filt ? filt : closed ? closed - 2 : end) - (open + 6)),
					effect, false, c + n, max - n);
		if (closed)
			n += parse_list(closed + 8, (size_t)(end - (closed + 8)), effect, true, c + n,
					max - n);
	}
	return n;
}

/* The broker-try step that takes path @c, and the word of its answer. */
static void step_of(const struct claim *c, char *step, size_t sl, char *what, size_t wl)
{
	switch (c->kind) {
	case PK_REQ:
		snprintf(step, sl, "op:%d", c->num);
		snprintf(what, wl, "op %d", c->num);
		break;
	case PK_REG:
		snprintf(step, sl, "reg:%d", c->num);
		snprintf(what, wl, "reg %d", c->num);
		break;
	default:
		cr_assert(c->num == IOUR_REGISTER_SEND_MSG_RING || c->num == IOUR_REGISTER_QUERY,
			  "no attack for the ring-less path %s", c->name);
		snprintf(step, sl, "%s",
			 c->num == IOUR_REGISTER_QUERY ? "blind-query" : "blind-msg-ring");
		snprintf(what, wl, "%s", step);
		break;
	}
}

/* Did the confined answer show the path closed?  Requests and ring
 * registrations: EACCES is the ring's restriction (doc/kernel.md); a
 * ring-less call: anything but ok. */
static bool answer_closed(const struct claim *c, const char *a)
{
	return c->kind == PK_BLIND ? strcmp(a, "ok") != 0 : !strcmp(a, "EACCES");
}

/*
 * Attacks every path of @table under run with @policy, after the same
 * steps unconfined (each must get past: the control).  Returns how many
 * paths were attacked; fails the test on a claim run contradicts.
 */
static int attack(const char *policy, const char *table, const char *label)
{
	static struct claim c[256];
	char *steps[MAX_ARGS], *ctl, *got, buf[96];
	int n = parse_explain(table, c, 256), ns = 0;

	cr_assert_gt(n, 0, "%s: explain lists no path:\n%s", label, table);
	steps[ns++] = strdup("setup:0");
	for (int i = 0; i < n && ns < MAX_ARGS; i++) {
		char step[32], what[32];

		step_of(&c[i], step, sizeof(step), what, sizeof(what));
		steps[ns++] = strdup(step);
	}
	ctl = try_steps(NULL, steps, ns);
	got = try_steps(policy, steps, ns);
	cr_assert(answer(got, "setup", buf, sizeof(buf)) && !strcmp(buf, "ok"),
		  "%s: no ring under run:\n%s", label, got);
	for (int i = 0; i < n; i++) {
		char step[32], what[32], cb[96];
		const char *a, *ca;

		step_of(&c[i], step, sizeof(step), what, sizeof(what));
		ca = answer(ctl, what, cb, sizeof(cb));
		a = answer(got, what, buf, sizeof(buf));
		cr_assert(ca && a, "%s: no answer for %s:\n%s", label, what, got);
		cr_assert(!answer_closed(&c[i], ca),
			  "%s: control: %s (%s of %s) fails unconfined (%s): the attack proves "
			  "nothing",
			  label, c[i].name, what, c[i].effect, ca);
		cr_assert_eq(answer_closed(&c[i], a), c[i].closed,
			     "%s: explain says %s path %s is %s, but under run %s answers %s\n"
			     "explain:\n%s",
			     label, c[i].effect, c[i].name, c[i].closed ? "closed" : "open", what, a,
			     table);
	}
	for (int i = 0; i < ns; i++)
		free(steps[i]);
	free(ctl);
	free(got);
	return n;
}

/* The mechanism explain's header names ("... mechanism broker: ..."). */
static bool header_says(const char *table, const char *mech)
{
	char want[48];

	snprintf(want, sizeof(want), ", mechanism %s: ", mech);
	return strstr(table, want) && strstr(table, want) < strchr(table, '\n');
}

static const char *run_mechanism(void)
{
	return live_missing(LIVE_TASK) ? "broker" : "task";
}

/* ---- tcp-client ------------------------------------------------------------ */

static char *tcp_client(void)
{
	char path[4096];
	int fd;
	char *s;

	if (!find_file(path, sizeof(path), "../examples/policies/tcp-client.json", R_OK))
		cr_skip_test("skipped: examples/policies/tcp-client.json is in neither the source "
			     "tree nor /progs");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	cr_assert_geq(fd, 0);
	s = live_slurp(fd);
	close(fd);
	return s;
}

Test(live_claims, explain_against_run_tcp_client)
{
	char *pol, *table;
	int n;

	LIVE_REQUIRE(LIVE_RING);
	pol = tcp_client();
	/* IOUR_CLAIMS_MECHANISM=companion shows the test failing on the view
	 * that describes another mechanism than run's. */
	table = explain(pol, getenv("IOUR_CLAIMS_MECHANISM"));
	if (!getenv("IOUR_CLAIMS_MECHANISM"))
		cr_assert(header_says(table, run_mechanism()),
			  "explain's default is not run's (%s):\n%s", run_mechanism(), table);
	n = attack(pol, table, "tcp-client.json");
	live_log("tcp-client.json: explain's %d paths (mechanism %s) attacked under run, each "
		 "as explain says, each reachable unconfined",
		 n, run_mechanism());
	free(table);
	free(pol);
}

/*
 * What explain's broker view says open for tcp-client.json, done for real
 * under run: a file created and truncated with OPENAT, a descriptor
 * received through RECVMSG with SCM_RIGHTS, a completion posted with
 * io_uring_register(-1, SEND_MSG_RING), QUERY; and what it says closed
 * fails: SENDMSG with SCM_RIGHTS, MSG_RING.  The same steps unconfined
 * all succeed.
 */
Test(live_claims, broker_view_open_effects_are_reachable)
{
	static const char *const bases[] = { "/tmp", "/dev/shm", "/run", "" };
	char dir[64] = "", file[96], create[112], *pol, *table, *ctl, *got;
	char buf[64];
	char *steps[] = { "setup:0", create,     "recvmsg-fd", "sendmsg-fd",
			  "msg-ring", "blind-msg-ring", "blind-query" };
	struct {
		const char *what, *effect;
		bool open;
	} exp[] = {
		{ "create", "file-open", true },          { "recvmsg-fd", "cross-ring", true },
		{ "sendmsg-fd", "cross-ring", false },    { "msg-ring", "cross-ring", false },
		{ "blind-msg-ring", "cross-ring", true }, { "blind-query", "ringless-register", true },
	};

	LIVE_REQUIRE(LIVE_RING);
	if (!live_missing(LIVE_TASK))
		cr_skip_test("skipped: this kernel has task restrictions, which run uses instead of "
			     "the ring broker (explain_against_run_tcp_client covers the task view)");
	if (live_features()->reg_last <= IOUR_REGISTER_QUERY)
		cr_skip_test("skipped: no ring-less QUERY before Linux 6.18 (reg_last %u)",
			     live_features()->reg_last);
	pol = tcp_client();
	/* a writable directory (the guests' initramfs may lack /tmp) */
	for (size_t i = 0; i < sizeof(bases) / sizeof(bases[0]) && !dir[0]; i++) {
		snprintf(dir, sizeof(dir), "%s/iour-claims-XXXXXX", bases[i]);
		if (!mkdtemp(dir))
			dir[0] = '\0';
	}
	if (!dir[0])
		cr_skip_test("skipped: no writable directory for the OPENAT attack: %s",
			     strerror(errno));
	snprintf(file, sizeof(file), "%s/made", dir);
	snprintf(create, sizeof(create), "create:%s", file);
	table = explain(pol, "broker");
	for (size_t i = 0; i < sizeof(exp) / sizeof(exp[0]); i++) {
		char row[64];

		snprintf(row, sizeof(row), "\n%-18s open ", exp[i].effect);
		if (exp[i].open)
			cr_assert(strstr(table, row), "explain does not call %s open:\n%s",
				  exp[i].effect, table);
	}
	ctl = try_steps(NULL, steps, 7);
	unlink(file);
	got = try_steps(pol, steps, 7);
	for (size_t i = 0; i < sizeof(exp) / sizeof(exp[0]); i++) {
		const char *a = answer(got, exp[i].what, buf, sizeof(buf));

		cr_assert(answer(ctl, exp[i].what, buf, sizeof(buf)) && !strcmp(buf, "ok"),
			  "control: %s fails unconfined:\n%s", exp[i].what, ctl);
		a = answer(got, exp[i].what, buf, sizeof(buf));
		cr_assert_not_null(a, "no answer for %s:\n%s", exp[i].what, got);
		if (exp[i].open)
			cr_assert_str_eq(a, "ok", "%s (%s, which explain calls open) failed under "
				       "run: %s", exp[i].what, exp[i].effect, a);
		else
			cr_assert_str_eq(a, "EACCES", "%s (closed in %s) under run: %s", exp[i].what,
					 exp[i].effect, a);
	}
	live_log("tcp-client.json under run (broker): OPENAT created and truncated %s, "
		 "RECVMSG received a descriptor, io_uring_register(-1, SEND_MSG_RING) posted a "
		 "completion, QUERY answered: all as explain's broker view says open; SENDMSG "
		 "and MSG_RING got EACCES",
		 file);
	unlink(file);
	rmdir(dir);
	free(ctl);
	free(got);
	free(table);
	free(pol);
}

/* ---- random policies ------------------------------------------------------- */

static uint64_t rng_state;

static uint32_t rng(void)
{
	rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
	return (uint32_t)(rng_state >> 33);
}

/* A random allow-list policy: request opcodes and register opcodes each
 * listed with probability 1/3; its JSON, and which request opcodes it
 * lists. */
static char *random_policy(uint32_t op_last, uint32_t reg_last, bool *allowed)
{
	size_t cap = 8192, used = 0;
	char *s = malloc(cap);
	bool first = true;

	cr_assert_not_null(s);
	used += (size_t)snprintf(s + used, cap - used, "{ \"version\": 1, \"requestOps\": [");
	for (uint32_t op = 0; op < op_last; op++) {
		const char *name = iour_opcode_name(op);

		allowed[op] = name && rng() % 3 == 0;
		if (allowed[op]) {
			used += (size_t)snprintf(s + used, cap - used, "%s\"%s\"", first ? "" : ", ",
						 name);
			first = false;
		}
	}
	used += (size_t)snprintf(s + used, cap - used, "], \"registerOps\": [");
	first = true;
	for (uint32_t op = 0; op < reg_last; op++) {
		const char *name = iour_register_op_name(op);

		if (name && rng() % 3 == 0) {
			used += (size_t)snprintf(s + used, cap - used, "%s\"%s\"", first ? "" : ", ",
						 name);
			first = false;
		}
	}
	snprintf(s + used, cap - used, "] }\n");
	return s;
}

Test(live_claims, explain_against_run_random_policies, .timeout = 120)
{
	const struct iour_features *f;
	const char *seed_env = getenv("IOUR_CLAIMS_SEED");
	uint64_t seed;
	/* A fresh seed each run: runs add up; check-long takes more. */
	int npol = getenv("IOUR_TEST_LONG") ? 100 : 12, paths = 0;

	LIVE_REQUIRE(LIVE_RING);
	f = live_features();
	seed = seed_env ? strtoull(seed_env, NULL, 0) : (uint64_t)time(NULL);
	rng_state = seed;
	live_log("random policies: seed %llu (IOUR_CLAIMS_SEED=%llu repeats it)",
		 (unsigned long long)seed, (unsigned long long)seed);
	for (int p = 0; p < npol; p++) {
		bool allowed[256] = { false };
		char *pol = random_policy(f->op_last, f->reg_last, allowed);
		char *table = explain(pol, NULL), *steps[MAX_ARGS], *got, label[64], buf[64];
		int ns = 0;

		snprintf(label, sizeof(label), "seed %llu policy %d", (unsigned long long)seed, p);
		cr_assert(header_says(table, run_mechanism()), "%s: explain's default is not run's:\n%s",
			  label, table);
		paths += attack(pol, table, label);
		/* Every request opcode: the allow-list as run enforces it. */
		steps[ns++] = strdup("setup:0");
		for (uint32_t op = 0; op < f->op_last && ns < MAX_ARGS; op++) {
			char st[16];

			snprintf(st, sizeof(st), "op:%u", op);
			steps[ns++] = strdup(st);
		}
		got = try_steps(pol, steps, ns);
		for (uint32_t op = 0; op < f->op_last; op++) {
			char what[16];
			const char *a;

			snprintf(what, sizeof(what), "op %u", op);
			a = answer(got, what, buf, sizeof(buf));
			cr_assert_not_null(a, "%s: no answer for %s", label, what);
			/* The 128-byte opcodes (NOP128, URING_CMD128) fail with
			 * EINVAL on a 64-byte-SQE ring before the allow-list is
			 * consulted (doc/security.md 2): they never run either way. */
			if (!allowed[op] && !strcmp(a, "EINVAL") && iour_opcode_name(op) &&
			    strstr(iour_opcode_name(op), "128"))
				continue;
			cr_assert_eq(strcmp(a, "EACCES") != 0, allowed[op],
				     "%s: %s (%u) is %s by the policy, and under run answers %s\n%s",
				     label, iour_opcode_name(op) ? iour_opcode_name(op) : "?", op,
				     allowed[op] ? "allowed" : "not allowed", a, pol);
		}
		for (int i = 0; i < ns; i++)
			free(steps[i]);
		free(got);
		free(table);
		free(pol);
	}
	live_log("random policies: %d policies, %d effect paths attacked as explain says, and "
		 "every request opcode of each as its allow-list says",
		 npol, paths);
}

/* The broker view explain gives (the agent's) equals the default on a
 * kernel without task restrictions, and on 7.0+ the task view keeps the
 * ring-less register calls closed (the task set or the seccomp guard). */
Test(live_claims, explain_views_by_kernel)
{
	char *pol, *def, *brk;

	LIVE_REQUIRE(LIVE_RING);
	pol = tcp_client();
	def = explain(pol, NULL);
	brk = explain(pol, "broker");
	cr_assert(header_says(brk, "broker"), "%s", brk);
	if (live_missing(LIVE_TASK)) {
		cr_assert_str_eq(strchr(def, '\n'), strchr(brk, '\n'),
				 "before 7.0 the default view is the broker's");
	} else {
		cr_assert(header_says(def, "task"), "%s", def);
		if (live_features()->reg_last > IOUR_REGISTER_SEND_MSG_RING)
			cr_assert(strstr(def, "\nringless-register  closed"), "%s", def);
	}
	free(def);
	free(brk);
	free(pol);
}
