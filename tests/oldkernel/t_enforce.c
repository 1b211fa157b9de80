/* SPDX-License-Identifier: MIT */
/*
 * The enforcement check and the seccomp companion on a real Linux 6.1
 * kernel, which can restrict only the rings the library creates:
 * - iour_verify() on a ring restricted by iour_ring_create() (ring-fd mode,
 *   also after an execve of this program as the helper) finds the
 *   expectations met, and a wrong expectation reported as not enforced;
 * - iour_verify() in plain mode (a fresh ring, as any application would
 *   create) finds a "deny" expectation NOT_ENFORCED: nothing restricts
 *   new rings on this kernel;
 * - iour_companion_install() in a forked child makes io_uring_setup fail
 *   with ENOSYS there (and in its children, across execve) while the ring
 *   it restricted before keeps working, and the parent is unaffected.
 *
 * Started by iour_verify() with IOUR_VERIFY_FD set, this program is the
 * helper: it serves the check and exits.
 */
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "mini_ring.h"

#define OP_NOP 0
#define OP_OPENAT 18
#define OP_WRITE 23
#define OP_SOCKET 45

static const char *self_path;

static struct iour_verify_req req(uint32_t op, uint32_t expect)
{
	struct iour_verify_req r;

	memset(&r, 0, sizeof(r));
	r.sz = sizeof(r);
	r.opcode = op;
	r.expect = expect;
	if (op == OP_OPENAT)
		r.path = "/dev/null";
	if (op == OP_SOCKET) {
		r.family = 1; /* AF_UNIX */
		r.type = 1;   /* SOCK_STREAM */
	}
	return r;
}

/* A ring restricted to {NOP, OPENAT}, no SQE flags; -errno on failure. */
static int restricted_ring(struct mini_ring *ring)
{
	struct iour_ruleset *rs = NULL;
	struct kio_params p;
	int fd = -1, rc;

	rc = iour_ruleset__new(NULL, &rs);
	if (rc)
		return rc;
	iour_ruleset__allow_sqe_op(rs, OP_NOP);
	iour_ruleset__allow_sqe_op(rs, OP_OPENAT);
	iour_ruleset__set_sqe_flags(rs, 0, 0);
	memset(&p, 0, sizeof(p));
	rc = iour_ring_create(4, &p, rs, NULL, &fd);
	iour_ruleset__free(rs);
	if (rc)
		return rc;
	return mini_ring_map(ring, fd, &p);
}

/* Run fn in a forked child; its checks count in the parent's total. */
static void in_child(const char *what, void (*fn)(void))
{
	int *counts = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	char name[128];
	int st = 0;
	pid_t pid;

	snprintf(name, sizeof(name), "%s: child ran to the end", what);
	if (counts == MAP_FAILED) {
		CHECK(name, 0);
		return;
	}
	counts[0] = counts[1] = counts[2] = 0;
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		guest_passed = guest_failed = 0;
		fn();
		counts[0] = guest_passed;
		counts[1] = guest_failed;
		counts[2] = 1;
		fflush(stdout);
		_exit(0);
	}
	if (pid > 0)
		waitpid(pid, &st, 0);
	guest_passed += counts[0];
	guest_failed += counts[1];
	CHECK(name, pid > 0 && counts[2] == 1 && WIFEXITED(st) && WEXITSTATUS(st) == 0);
	munmap(counts, 4096);
}

static void check_verify_ring(void)
{
	struct iour_verify_req reqs[5];
	struct iour_verify_result res[5];
	struct iour_verify_opts o;
	struct mini_ring ring;
	int ok = 1, rc;

	rc = restricted_ring(&ring);
	CHECK_EQ("ring restricted to {NOP, OPENAT}", rc, 0);
	if (rc)
		return;
	reqs[0] = req(OP_NOP, IOUR_EXPECT_ALLOW);
	reqs[1] = req(OP_OPENAT, IOUR_EXPECT_ALLOW);
	reqs[2] = req(OP_WRITE, IOUR_EXPECT_DENY);
	reqs[3] = req(OP_SOCKET, IOUR_EXPECT_DENY);
	reqs[4] = req(OP_NOP, IOUR_EXPECT_ALLOW);
	reqs[4].sqe_flags = IOUR_SQE_ASYNC;
	reqs[4].expect = IOUR_EXPECT_DENY;
	memset(&o, 0, sizeof(o));
	o.sz = sizeof(o);
	o.flags = IOUR_VERIFY_RING_FD;
	o.ring_fd = ring.fd;
	memset(res, 0, sizeof(res));
	CHECK_EQ("verify ring-fd mode: expectations met", iour_verify(reqs, 5, res, &o), 0);
	for (int i = 0; i < 5; i++)
		ok &= res[i].status == IOUR_VERIFY_MATCH && res[i].observed == reqs[i].expect;
	CHECK("verify ring-fd mode: every result MATCH, observed as expected", ok);
	CHECK_EQ("verify ring-fd mode: NOP completion", res[0].res, 0);
	CHECK("verify ring-fd mode: OPENAT /dev/null opened", res[1].res >= 0);
	CHECK_EQ("verify ring-fd mode: WRITE completion", res[2].res, -EACCES);
	CHECK_EQ("verify ring-fd mode: NOP with ASYNC completion", res[4].res, -EACCES);
	/* Before 5.19 SOCKET is unknown: the kernel refuses it with -EINVAL
	 * before the gate, and the check counts that as denied. */
	CHECK_EQ("verify ring-fd mode: SOCKET completion", res[3].res,
		 guest_gen()->op_last <= OP_SOCKET ? -EINVAL : -EACCES);

	/* an unknown opcode expected allowed is a mismatch, observed denied */
	if (guest_gen()->op_last <= OP_SOCKET) {
		reqs[3].expect = IOUR_EXPECT_ALLOW;
		memset(res, 0, sizeof(res));
		CHECK_EQ("verify ring-fd mode: unknown SOCKET expected allowed",
			 iour_verify(reqs, 5, res, &o), -IOUR_ERRNO__NOT_ENFORCED);
		CHECK_EQ("verify ring-fd mode: unknown SOCKET MISMATCH, observed DENY",
			 res[3].status == IOUR_VERIFY_MISMATCH && res[3].observed == IOUR_EXPECT_DENY,
			 1);
		reqs[3].expect = IOUR_EXPECT_DENY;
	}

	/* a wrong expectation is found */
	reqs[2].expect = IOUR_EXPECT_ALLOW;
	memset(res, 0, sizeof(res));
	CHECK_EQ("verify ring-fd mode: WRITE expected allowed", iour_verify(reqs, 5, res, &o),
		 -IOUR_ERRNO__NOT_ENFORCED);
	CHECK_EQ("verify ring-fd mode: WRITE status MISMATCH", res[2].status, IOUR_VERIFY_MISMATCH);
	CHECK_EQ("verify ring-fd mode: WRITE observed DENY", res[2].observed, IOUR_EXPECT_DENY);
	CHECK_EQ("verify ring-fd mode: the others still MATCH",
		 res[0].status == IOUR_VERIFY_MATCH && res[1].status == IOUR_VERIFY_MATCH &&
			 res[3].status == IOUR_VERIFY_MATCH && res[4].status == IOUR_VERIFY_MATCH,
		 1);

	/* after execve of a helper: the ring's restrictions go with the ring */
	reqs[2].expect = IOUR_EXPECT_DENY;
	o.exec_path = self_path;
	memset(res, 0, sizeof(res));
	CHECK_EQ("verify ring-fd mode after execve of the helper", iour_verify(reqs, 5, res, &o),
		 0);
	CHECK_EQ("verify after execve: WRITE completion", res[2].res, -EACCES);

	/* the caller's ring is left usable and still restricted */
	CHECK_EQ("ring after the checks: NOP", mini_ring_op(&ring, OP_NOP, -1, 0), 0);
	CHECK_EQ("ring after the checks: WRITE", mini_ring_op(&ring, OP_WRITE, 1, 0), -EACCES);
	mini_ring_exit(&ring);

	/* a disabled ring cannot be checked */
	if (mini_ring_init(&ring, 4, KIO_SETUP_R_DISABLED) == 0) {
		o.exec_path = NULL;
		o.ring_fd = ring.fd;
		CHECK_EQ("verify ring-fd mode on a disabled ring", iour_verify(reqs, 1, res, &o),
			 -EBADFD);
		mini_ring_exit(&ring);
	}
}

static void check_verify_plain(void)
{
	struct iour_verify_req reqs[3];
	struct iour_verify_result res[3];

	reqs[0] = req(OP_NOP, IOUR_EXPECT_ALLOW);
	reqs[1] = req(OP_WRITE, IOUR_EXPECT_DENY);
	reqs[2] = req(OP_OPENAT, IOUR_EXPECT_ALLOW);
	memset(res, 0, sizeof(res));
	CHECK_EQ("verify plain mode: deny WRITE on an unrestricted kernel",
		 iour_verify(reqs, 3, res, NULL), -IOUR_ERRNO__NOT_ENFORCED);
	CHECK_EQ("verify plain mode: WRITE status MISMATCH", res[1].status, IOUR_VERIFY_MISMATCH);
	CHECK_EQ("verify plain mode: WRITE observed ALLOW", res[1].observed, IOUR_EXPECT_ALLOW);
	CHECK_EQ("verify plain mode: WRITE wrote its byte", res[1].res, 1);
	CHECK_EQ("verify plain mode: NOP MATCH", res[0].status, IOUR_VERIFY_MATCH);
	CHECK_EQ("verify plain mode: OPENAT MATCH", res[2].status, IOUR_VERIFY_MATCH);
	CHECK_EQ("verify plain mode: allow-only expectations", iour_verify(reqs, 1, res, NULL), 0);
}

/* ---- the companion, in forked children -------------------------------- */

static int status_field(const char *key)
{
	char buf[4096], *p;
	FILE *f = fopen("/proc/self/status", "r");
	size_t n;

	if (!f)
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	p = strstr(buf, key);
	return p ? atoi(p + strlen(key)) : -1;
}

static void companion_default(void)
{
	struct iour_verify_req reqs[1];
	struct iour_verify_result res[1];
	struct iour_verify_opts o;
	struct iour_probe_opts po;
	struct iour_features f;
	struct iour_ruleset *rs = NULL;
	struct mini_ring ring;
	int fd = -1, st = 0;
	pid_t pid;

	CHECK_EQ("companion: one thread", iour_task_thread_count(), 1);
	CHECK_EQ("companion: ring restricted first", restricted_ring(&ring), 0);
	CHECK_EQ("companion: install (defaults, root: no no_new_privs needed)",
		 iour_companion_install(NULL), 0);
	CHECK_EQ("companion: seccomp mode 2", status_field("\nSeccomp:"), 2);
	CHECK_EQ("companion: no_new_privs untouched", status_field("\nNoNewPrivs:"), 0);
	CHECK_EQ("companion: io_uring_setup(1, NULL)", raw_setup(1, NULL), -ENOSYS);
	iour_ruleset__new(NULL, &rs);
	CHECK_EQ("companion: iour_ring_create", iour_ring_create(4, NULL, rs, NULL, &fd), -ENOSYS);
	iour_ruleset__free(rs);
	CHECK_EQ("companion: restricted ring still works: NOP", mini_ring_op(&ring, OP_NOP, -1, 0),
		 0);
	CHECK_EQ("companion: restricted ring still restricted: WRITE",
		 mini_ring_op(&ring, OP_WRITE, 1, 0), -EACCES);

	memset(&po, 0, sizeof(po));
	po.sz = sizeof(po);
	po.flags = IOUR_PROBE_NO_CACHE;
	memset(&f, 0, sizeof(f));
	f.sz = sizeof(f);
	CHECK_EQ("companion: probe", iour_probe(&po, &f), 0);
	CHECK_EQ("companion: probe says io_uring unusable", f.io_uring, IOUR_AVAIL_NO);
	CHECK_EQ("companion: probe's raw setup answer", f.setup_err, -ENOSYS);
	CHECK_EQ("companion: probe level 0", f.level, IOUR_LEVEL_NONE);
	CHECK_EQ("companion: probe sees seccomp mode 2", f.seccomp_mode, 2);

	reqs[0] = req(OP_NOP, IOUR_EXPECT_ALLOW);
	CHECK_EQ("companion: plain verify", iour_verify(reqs, 1, res, NULL), -ENOSYS);
	memset(&o, 0, sizeof(o));
	o.sz = sizeof(o);
	o.exec_path = self_path;
	CHECK_EQ("companion: plain verify after execve", iour_verify(reqs, 1, res, &o), -ENOSYS);
	CHECK_EQ("companion: its result NOT_RUN with -ENOSYS",
		 res[0].status == IOUR_VERIFY_NOT_RUN && res[0].res == -ENOSYS, 1);

	fflush(stdout);
	pid = fork();
	if (pid == 0)
		_exit(raw_setup(1, NULL) == -ENOSYS ? 0 : 1);
	if (pid > 0)
		waitpid(pid, &st, 0);
	CHECK("companion: a grandchild's io_uring_setup gets ENOSYS",
	      pid > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0);
	mini_ring_exit(&ring);
}

static void companion_eperm_enter(void)
{
	struct iour_companion_opts o;
	struct mini_ring ring;

	CHECK_EQ("companion EPERM+ENTER: ring restricted first", restricted_ring(&ring), 0);
	memset(&o, 0, sizeof(o));
	o.sz = sizeof(o);
	o.flags = IOUR_COMPANION_SET_NNP | IOUR_COMPANION_ENTER;
	o.errno_value = EPERM;
	CHECK_EQ("companion EPERM+ENTER: install", iour_companion_install(&o), 0);
	CHECK_EQ("companion EPERM+ENTER: no_new_privs set", status_field("\nNoNewPrivs:"), 1);
	CHECK_EQ("companion EPERM+ENTER: io_uring_setup", raw_setup(1, NULL), -EPERM);
	CHECK_EQ("companion EPERM+ENTER: io_uring_enter on the existing ring",
		 raw_enter(ring.fd, 0, 0, 0), -EPERM);
	CHECK_EQ("companion EPERM+ENTER: io_uring_register still allowed (PROBE, NULL: EINVAL)",
		 raw_register(ring.fd, KIO_REGISTER_PROBE, NULL, 0), -EINVAL);
	mini_ring_exit(&ring);
}

static void check_parent_unaffected(void)
{
	struct iour_probe_opts po;
	struct iour_features f;
	struct mini_ring ring;

	CHECK_EQ("parent: seccomp mode 0", status_field("\nSeccomp:"), 0);
	CHECK_EQ("parent: no_new_privs 0", status_field("\nNoNewPrivs:"), 0);
	CHECK_EQ("parent: io_uring_setup(1, NULL)", raw_setup(1, NULL), -EFAULT);
	CHECK_EQ("parent: iour_ring_create", restricted_ring(&ring), 0);
	CHECK_EQ("parent: NOP", mini_ring_op(&ring, OP_NOP, -1, 0), 0);
	mini_ring_exit(&ring);
	memset(&po, 0, sizeof(po));
	po.sz = sizeof(po);
	po.flags = IOUR_PROBE_NO_CACHE;
	memset(&f, 0, sizeof(f));
	f.sz = sizeof(f);
	CHECK_EQ("parent: probe level 2 again", iour_probe(&po, &f) ? -1 : (int)f.level,
		 (int)guest_gen()->level);
}

int main(int argc, char **argv)
{
	int rc = iour_verify_serve();

	if (rc != -ENOENT)
		return rc < 0 ? 1 : 0; /* started by iour_verify() as the helper */
	self_path = argc > 0 ? argv[0] : "/tests/t_enforce";
	check_verify_ring();
	check_verify_plain();
	in_child("companion (ENOSYS)", companion_default);
	in_child("companion (EPERM, enter too)", companion_eperm_enter);
	check_parent_unaffected();
	return guest_summary();
}
