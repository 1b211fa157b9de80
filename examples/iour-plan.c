/* SPDX-License-Identifier: MIT */
/*
 * iour-plan: the dry run of a policy.  Prints the plan (every registration
 * with its bytes decoded and its programs disassembled) and the report it
 * expects, for the running kernel or a forced feature level.  Nothing is
 * applied unless --verify is given.
 *
 *   iour-plan [-l LEVEL] [-r] [-s|-h] [-o] [-c] [--verify] OPCODE...
 *
 *   OPCODE    request opcodes to allow, by name (NOP, READ, ...);
 *             "SOCKET:inet" allows SOCKET for AF_INET only (an argument rule)
 *   -l        plan for feature level 0..5 instead of the running kernel
 *   -r        restrict a ring instead of the calling task
 *   -s / -h   soft / hard compatibility requirement (default: best effort)
 *   -o        conditional rules fail open on kernels without filters
 *   -c        on kernels without task restrictions, block io_uring_setup
 *             with the seccomp companion (ENOSYS)
 *   --verify  (or -v) then apply the plan and run the enforcement check:
 *             a ring target is created through the plan and checked in
 *             ring-fd mode; a task target is applied in a forked child,
 *             which then checks what the report claims (a fresh ring, also
 *             after execve of iour-verify-helper when it sits next to this
 *             program; the plan's own ring on the ring fallback; io_uring
 *             blocked by the companion).  Exits 0 only if the kernel
 *             answered every request as the report says.
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <linux/io_uring.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <iouring_restrict/iouring_restrict.h>

#define OP_NOP 0
#define OP_CONNECT 16
#define OP_OPENAT 18
#define OP_SOCKET 45

static int fail(const char *what, int rc)
{
	fprintf(stderr, "iour-plan: %s: %s\n", what, iour_errname(rc));
	return 1;
}

/* ---- the enforcement check ---- */

/* Opcodes the check can submit, with the arguments it uses. */
static const uint32_t checkable[] = { 0, 1, 2, 16, 18, 22, 23, 28, 45 };

static struct sockaddr_in loopback; /* 127.0.0.1 port 1: refused if allowed */

struct checks {
	struct iour_verify_req r[16];
	const char *what[16];
	size_t n;
};

static void add(struct checks *c, uint32_t op, uint32_t expect, int family, const char *what)
{
	struct iour_verify_req *r = &c->r[c->n];

	memset(r, 0, sizeof(*r));
	r->sz = sizeof(*r);
	r->opcode = op;
	r->expect = expect;
	if (op == OP_SOCKET) {
		r->family = family;
		r->type = SOCK_STREAM;
	} else if (op == OP_CONNECT) {
		r->addr = &loopback;
		r->addrlen = sizeof(loopback);
	} else if (op == OP_OPENAT || op == 28) {
		r->path = "/dev/null";
	}
	c->what[c->n++] = what;
}

/* Did the report change opcode `op`: 'T' tightened (denied), 'L' loosened
 * (allowed without its rules), 'C' clamped (unknown to the kernel), 0. */
static int changed(const struct iour_report *r, uint32_t op)
{
	struct iour_decision d = { .sz = sizeof(d) };
	int i, n = iour_report__decision_cnt(r), res = 0;

	for (i = 0; i < n; i++) {
		if (iour_report__decision(r, (size_t)i, &d) || d.opcode != op)
			continue;
		if (d.kind == IOUR_DECISION_TIGHTENED)
			res = 'T';
		else if (d.kind == IOUR_DECISION_LOOSENED && res != 'T')
			res = 'L';
		else if (d.kind == IOUR_DECISION_CLAMPED)
			return 'C';
	}
	return res;
}

/* What the report claims for each checkable opcode; `all_allowed` when the
 * claim is that nothing restricts the ring being checked. */
static void build_checks(struct checks *c, const bool *listed, bool inet,
			 const struct iour_report *rep, bool all_allowed)
{
	size_t i;

	c->n = 0;
	for (i = 0; i < sizeof(checkable) / sizeof(checkable[0]); i++) {
		uint32_t op = checkable[i];
		int ch = changed(rep, op);
		const char *name = iour_opcode_name(op);

		if (ch == 'C')
			continue;
		if (all_allowed) {
			add(c, op, IOUR_EXPECT_ALLOW, AF_INET, name);
		} else if (op == OP_SOCKET && inet) {
			add(c, op, ch == 'T' ? IOUR_EXPECT_DENY : IOUR_EXPECT_ALLOW, AF_INET,
			    "SOCKET AF_INET");
			add(c, op, ch == 'L' ? IOUR_EXPECT_ALLOW : IOUR_EXPECT_DENY, AF_INET6,
			    "SOCKET AF_INET6");
		} else {
			add(c, op, listed[op] && ch != 'T' ? IOUR_EXPECT_ALLOW : IOUR_EXPECT_DENY,
			    op == OP_SOCKET ? AF_INET : 0, name);
		}
	}
}

/* Run one check and print every answer; 0 if all were as claimed. */
static int check(const char *title, const struct checks *c, const struct iour_verify_opts *o)
{
	struct iour_verify_result res[16];
	size_t i;
	int rc;

	memset(res, 0, sizeof(res));
	rc = iour_verify(c->r, c->n, res, o);
	printf("enforcement check, %s:\n", title);
	for (i = 0; i < c->n; i++)
		printf("  %-16s expected %-7s -> res %-5d %s\n", c->what[i],
		       c->r[i].expect == IOUR_EXPECT_ALLOW ? "allowed" : "denied", res[i].res,
		       res[i].status == IOUR_VERIFY_MATCH ? "as claimed" :
		       res[i].status == IOUR_VERIFY_MISMATCH ? "NOT as claimed" : "not checked");
	printf("  => %s\n", rc == 0 ? "confirmed" : iour_errname(rc));
	return rc == 0 ? 0 : 1;
}

/* io_uring itself must be unavailable (the companion's claim). */
static int check_blocked(int err)
{
	struct iour_verify_req r;
	struct iour_verify_result res;
	int rc;

	memset(&r, 0, sizeof(r));
	r.sz = sizeof(r);
	r.opcode = OP_NOP;
	r.expect = IOUR_EXPECT_ALLOW;
	rc = iour_verify(&r, 1, &res, NULL);
	printf("enforcement check, a fresh ring after the companion: %s (claimed -%s)\n",
	       iour_errname(rc), err == EPERM ? "EPERM" : "ENOSYS");
	return rc == -err ? 0 : 1;
}

static const char *helper_next_to(const char *argv0)
{
	static char path[4096];
	const char *slash = strrchr(argv0, '/');

	if (!slash)
		return NULL;
	snprintf(path, sizeof(path), "%.*s/iour-verify-helper", (int)(slash - argv0), argv0);
	return access(path, X_OK) == 0 ? path : NULL;
}

static void print_report(const char *title, const struct iour_report *r)
{
	size_t len = 0;
	char *t;

	if (iour_report__describe(r, NULL, &len) || !(t = malloc(len)))
		return;
	if (!iour_report__describe(r, t, &len))
		printf("%s:\n%s", title, t);
	free(t);
}

static int verify_ring(const struct iour_plan *pl, const bool *listed, bool inet)
{
	IOUR_OPTS(iour_verify_opts, o, .flags = IOUR_VERIFY_RING_FD, .ring_flags = IORING_SETUP_R_DISABLED);
	struct iour_report *rep = NULL;
	struct checks c;
	int fd = -1, rc;

	rc = iour_plan__create_ring(pl, 8, NULL, NULL, &fd, &rep);
	if (rep)
		print_report("applied (iour_plan__create_ring)", rep);
	if (rc)
		return fail("create_ring", rc);
	build_checks(&c, listed, inet, rep, false);
	o.ring_fd = fd;
	rc = check("the ring made through the plan", &c, &o);
	close(fd);
	iour_report__free(rep);
	return rc;
}

/* In a forked child: apply the task plan, then check each claim. */
static int verify_task_child(const struct iour_plan *pl, const bool *listed, bool inet,
			     const char *helper, uint32_t companion)
{
	IOUR_OPTS(iour_verify_opts, ro, .flags = IOUR_VERIFY_RING_FD, .ring_flags = IORING_SETUP_R_DISABLED);
	IOUR_OPTS(iour_verify_opts, eo, .exec_path = helper);
	const struct iour_report *planned = iour_plan__report(pl);
	struct iour_report *rep = NULL;
	struct checks c;
	int mech = iour_report__mechanism(planned), rc, bad = 0, fd = -1;

	struct iour_plan_info info = { .sz = sizeof(info) };

	/* The library's own ring, made before anything blocks io_uring. */
	if (!(mech & IOUR_MECH_TASK) && !iour_plan__info(pl, &info) && info.ring_steps > 0 &&
	    (rc = iour_plan__create_ring(pl, 8, NULL, NULL, &fd, NULL)))
		return fail("create_ring", rc);
	rc = iour_plan__apply_task(pl, NULL, &rep);
	if (rep)
		print_report("applied (iour_plan__apply_task, in a child)", rep);
	if (rc)
		return fail("apply_task", rc);
	if (mech & IOUR_MECH_TASK) {
		build_checks(&c, listed, inet, rep, false);
		bad |= check("a fresh ring of the restricted task", &c, NULL);
		if (helper)
			bad |= check("after execve of iour-verify-helper", &c, &eo);
	}
	if (fd >= 0) {
		build_checks(&c, listed, inet, rep, false);
		ro.ring_fd = fd;
		bad |= check("the ring made through the plan", &c, &ro);
		close(fd);
	}
	if (mech & IOUR_MECH_COMPANION) {
		bad |= check_blocked(companion == IOUR_POLICY_COMPANION_EPERM ? EPERM : ENOSYS);
	} else if (!(mech & IOUR_MECH_TASK)) {
		/* Ring-only, or nothing enforced: the report says other rings
		 * are not restricted.  So must the kernel. */
		build_checks(&c, listed, inet, rep, true);
		bad |= check("a ring made without the library (claimed unrestricted)", &c, NULL);
	}
	iour_report__free(rep);
	return bad;
}

static int verify_task(const struct iour_plan *pl, const bool *listed, bool inet,
		       const char *helper, uint32_t companion)
{
	int st = 0;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return fail("fork", -errno);
	if (pid == 0) {
		int rc = verify_task_child(pl, listed, inet, helper, companion);

		fflush(NULL);
		_exit(rc);
	}
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = { { "verify", no_argument, NULL, 'v' },
						  { NULL, 0, NULL, 0 } };
	struct iour_ruleset *rs = NULL;
	struct iour_filter *flt = NULL;
	struct iour_policy *p = NULL;
	struct iour_plan *pl = NULL;
	IOUR_OPTS(iour_plan_opts, o);
	bool listed[256] = { false }, inet = false, verify = false;
	uint32_t target = IOUR_POLICY_TARGET_TASK, companion = IOUR_POLICY_COMPANION_NONE;
	size_t len = 0;
	char *text;
	int c, rc, i;

	if (iour_ruleset__new(NULL, &rs) || iour_filter__new(NULL, &flt) ||
	    iour_policy__new(NULL, &p))
		return fail("allocation", -ENOMEM);
	while ((c = getopt_long(argc, argv, "l:rshocv", longopts, NULL)) != -1) {
		switch (c) {
		case 'l':
			o.flags = IOUR_PLAN_FORCE_LEVEL;
			o.level = (uint32_t)atoi(optarg);
			break;
		case 'r':
			target = IOUR_POLICY_TARGET_RING;
			break;
		case 's':
			iour_policy__set_attr(p, IOUR_POLICY_ATTR_COMPAT, IOUR_POLICY_COMPAT_SOFT);
			break;
		case 'h':
			iour_policy__set_attr(p, IOUR_POLICY_ATTR_COMPAT, IOUR_POLICY_COMPAT_HARD);
			break;
		case 'o':
			iour_policy__set_attr(p, IOUR_POLICY_ATTR_NO_FILTER_FALLBACK,
					      IOUR_POLICY_FALLBACK_OPEN);
			break;
		case 'c':
			companion = IOUR_POLICY_COMPANION_ENOSYS;
			break;
		case 'v':
			verify = true;
			break;
		default:
			fprintf(stderr, "usage: %s [-l LEVEL] [-r] [-s|-h] [-o] [-c] [--verify] "
				"OPCODE...\n", argv[0]);
			return 2;
		}
	}
	iour_policy__set_attr(p, IOUR_POLICY_ATTR_TARGET, target);
	iour_policy__set_attr(p, IOUR_POLICY_ATTR_COMPANION, companion);
	iour_ruleset__deny_all_sqe_ops(rs);
	iour_ruleset__set_sqe_flags(rs, 0, 0);
	for (i = optind; i < argc; i++) {
		if (strcmp(argv[i], "SOCKET:inet") == 0) {
			struct iour_cmp cmp = { .sz = sizeof(cmp), .field = IOUR_FIELD_SOCKET_FAMILY,
						.op = IOUR_CMP_EQ, .value = AF_INET };

			rc = iour_filter__add_rule(flt, OP_SOCKET, IOUR_ALLOW, &cmp, 1);
			if (!rc)
				rc = iour_ruleset__allow_sqe_op(rs, OP_SOCKET);
			inet = true;
		} else {
			rc = iour_ruleset__allow_sqe_op_name(rs, argv[i]);
			if (!rc)
				listed[iour_opcode_from_name(argv[i]) & 0xff] = true;
		}
		if (rc)
			return fail(argv[i], rc);
	}
	if ((rc = iour_policy__set_ruleset(p, rs)) || (rc = iour_policy__set_filter(p, flt)))
		return fail("policy", rc);
	rc = iour_policy__plan(p, &o, &pl);
	if (rc)
		return fail("plan", rc);
	if ((rc = iour_plan__describe(pl, NULL, &len)) || !(text = malloc(len)) ||
	    (rc = iour_plan__describe(pl, text, &len)))
		return fail("describe", rc ? rc : -ENOMEM);
	fputs(text, stdout);
	free(text);
	rc = 0;
	if (verify) {
		loopback.sin_family = AF_INET;
		loopback.sin_port = htons(1);
		loopback.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		putchar('\n');
		rc = target == IOUR_POLICY_TARGET_RING ?
			     verify_ring(pl, listed, inet) :
			     verify_task(pl, listed, inet, helper_next_to(argv[0]), companion);
		printf("%s\n", rc ? "The kernel did NOT confirm the report."
				  : "The kernel confirmed the report.");
	}
	iour_plan__free(pl);
	iour_policy__free(p);
	iour_filter__free(flt);
	iour_ruleset__free(rs);
	return rc ? 1 : 0;
}
