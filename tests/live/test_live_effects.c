/* SPDX-License-Identifier: MIT */
/*
 * Live: effects, not opcodes (doc/security.md 2.1), attacked on the
 * running kernel through ring plans of policy files.
 *
 * - A set that requires IOSQE_FIXED_FILE does not keep requests to
 *   registered files when SPLICE or EPOLL_CTL is allowed: SPLICE reads a
 *   plain descriptor (its fd_in), EPOLL_CTL acts on a plain epoll
 *   descriptor and a plain target.  The plan says so (not "fully
 *   enforced"; LOOSENED, FIXED_FILES), and the kernel agrees.
 * - A destination rule on CONNECT does not close the destination while
 *   SENDMSG is allowed: SENDMSG with MSG_FASTOPEN to a 127.0.0.1 listener
 *   (in a network namespace the test creates, loopback only)
 *   connects (the listener accepts) on a ring whose set denies CONNECT; the
 *   plan's net-dest effect is open.  With SENDMSG denied too (the shipped
 *   tcp-client.json), the same request gets -EACCES and nobody connects.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "live.h"
#include "ring_util.h"

#define OP_SENDMSG 9
#define OP_EPOLL_CTL 29
#define OP_SPLICE 30

/* Plan `json` for the running kernel and apply it to a fresh disabled
 * ring whose fixed-file table is `files`.  The plan's status, whether it
 * has a LOOSENED FIXED_FILES decision for `op`, and the reason of its
 * effect note `effect` are returned. */
struct planned {
	int status;
	bool loosened_op;
	uint32_t effect_reason;
};

static int plan_json(struct io_uring *ring, const char *json, const int *files, int nfiles,
		     uint32_t op, uint32_t effect, struct planned *out)
{
	struct iour_policy *p = NULL;
	struct iour_plan *pl = NULL;
	const struct iour_report *r;
	int rc, n;

	memset(out, 0, sizeof(*out));
	/* `json` is a policy text, or "@PATH" for a policy file. */
	if (json[0] == '@')
		rc = iour_policy__load_file(json + 1, NULL, &p, NULL);
	else
		rc = iour_policy__load_json(json, strlen(json), NULL, &p, NULL);
	if (!rc)
		rc = iour_policy__set_attr(p, IOUR_POLICY_ATTR_TARGET, IOUR_POLICY_TARGET_RING);
	if (!rc)
		rc = iour_policy__plan(p, NULL, &pl);
	if (!rc) {
		r = iour_plan__report(pl);
		out->status = iour_report__status(r);
		n = iour_report__decision_cnt(r);
		for (int i = 0; i < n; i++) {
			struct iour_decision d = { .sz = sizeof(d) };

			if (iour_report__decision(r, (size_t)i, &d))
				continue;
			if (d.kind == IOUR_DECISION_LOOSENED &&
			    d.reason == IOUR_REASON_FIXED_FILES && d.opcode == op)
				out->loosened_op = true;
			if (d.kind == IOUR_DECISION_NOTE && d.value == (int32_t)effect &&
			    d.reason >= IOUR_REASON_EFFECT_CLOSED &&
			    d.reason <= IOUR_REASON_EFFECT_OPEN)
				out->effect_reason = d.reason;
		}
		rc = ring_init_disabled(ring, 0);
	}
	if (!rc && nfiles)
		rc = io_uring_register_files(ring, files, (unsigned)nfiles);
	if (!rc)
		rc = iour_plan__apply_ring(pl, ring->ring_fd, NULL, NULL);
	iour_plan__free(pl);
	iour_policy__free(p);
	return rc;
}

static const char splice_policy[] =
	"{ \"target\": \"ring\", \"defaultAction\": \"deny\", \"registerOps\": [],"
	"  \"sqeFlags\": { \"allowed\": [\"FIXED_FILE\"], \"required\": [\"FIXED_FILE\"] },"
	"  \"entries\": [ { \"names\": [\"splice\", \"epoll_ctl\"], \"action\": \"allow\" } ] }";

static int splice_child(void *arg, struct child_msg *m)
{
	struct io_uring ring;
	struct io_uring_sqe *s;
	struct planned pl;
	int out[2], secret[2], res;
	char buf[4] = { 0 };

	(void)arg;
	CHK(m, pipe(out) == 0 && pipe(secret) == 0);
	CHK(m, write(secret[1], "SS", 2) == 2);
	/* Only the output pipe's write end is registered (slot 0). */
	res = plan_json(&ring, splice_policy, &out[1], 1, OP_SPLICE, IOUR_EFFECT_PLAIN_FD, &pl);
	CHKF(m, res == 0, "plan and apply: %s", iour_errname(res));
	CHKF(m, pl.status != IOUR_STATUS_FULLY && pl.loosened_op,
	     "the plan says SPLICE escapes the fixed table: status %d, loosened %d", pl.status,
	     pl.loosened_op);
	CHKF(m, pl.effect_reason == IOUR_REASON_EFFECT_OPEN, "plain-fd effect open: reason %u",
	     pl.effect_reason);
	s = io_uring_get_sqe(&ring);
	CHK(m, s != NULL);
	/* fd_out is fixed slot 0; fd_in is the plain secret pipe. */
	io_uring_prep_splice(s, secret[0], -1, 0, -1, 2, 0);
	s->flags |= IOSQE_FIXED_FILE;
	res = live_submit(&ring, s);
	CHKF(m, res == 2, "SPLICE with FIXED_FILE read the plain descriptor: %d", res);
	CHK(m, read(out[0], buf, 2) == 2 && !memcmp(buf, "SS", 2));
	io_uring_queue_exit(&ring);
	return 0;
}

Test(live_effects, splice_with_fixed_file_reads_a_plain_descriptor)
{
	LIVE_REQUIRE(LIVE_RING);
	if (live_features()->op_last <= OP_SPLICE)
		cr_skip_test("skipped: the kernel lacks SPLICE (5.7)");
	LIVE_CHILD(splice_child, NULL);
	live_log("FIXED_FILE required, SPLICE allowed: SPLICE read a plain pipe; the plan is "
		 "not fully enforced (LOOSENED, FIXED_FILES) and its plain-fd effect is open");
}

static int epoll_child(void *arg, struct child_msg *m)
{
	struct io_uring ring;
	struct io_uring_sqe *s;
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = 0x5e5e }, got;
	struct planned pl;
	int p[2], dummy[2], ep, res;

	(void)arg;
	CHK(m, pipe(p) == 0 && pipe(dummy) == 0);
	ep = epoll_create1(0);
	CHK(m, ep >= 0);
	res = plan_json(&ring, splice_policy, &dummy[0], 1, OP_EPOLL_CTL, IOUR_EFFECT_PLAIN_FD,
			&pl);
	CHKF(m, res == 0, "plan and apply: %s", iour_errname(res));
	CHKF(m, pl.status != IOUR_STATUS_FULLY && pl.loosened_op,
	     "the plan says EPOLL_CTL escapes the fixed table: status %d, loosened %d", pl.status,
	     pl.loosened_op);
	s = io_uring_get_sqe(&ring);
	CHK(m, s != NULL);
	io_uring_prep_epoll_ctl(s, ep, p[0], EPOLL_CTL_ADD, &ev);
	s->flags |= IOSQE_FIXED_FILE;
	res = live_submit(&ring, s);
	CHKF(m, res == 0, "EPOLL_CTL with FIXED_FILE on a plain epoll fd: %d", res);
	CHK(m, write(p[1], "x", 1) == 1);
	res = epoll_wait(ep, &got, 1, 1000);
	CHKF(m, res == 1 && got.data.u64 == 0x5e5e,
	     "the plain pipe was added to the plain epoll set: %d", res);
	io_uring_queue_exit(&ring);
	return 0;
}

Test(live_effects, epoll_ctl_with_fixed_file_acts_on_plain_descriptors)
{
	LIVE_REQUIRE(LIVE_RING);
	if (live_features()->op_last <= OP_EPOLL_CTL)
		cr_skip_test("skipped: the kernel lacks EPOLL_CTL (5.6)");
	LIVE_CHILD(epoll_child, NULL);
	live_log("FIXED_FILE required, EPOLL_CTL allowed: a plain pipe entered a plain epoll set; "
		 "the plan is not fully enforced (LOOSENED, FIXED_FILES)");
}

/* A listener on 127.0.0.1 (port chosen by the kernel). */
static int listener(struct sockaddr_in *a)
{
	socklen_t len = sizeof(*a);
	int l = socket(AF_INET, SOCK_STREAM, 0), one = 1;

	memset(a, 0, sizeof(*a));
	a->sin_family = AF_INET;
	a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (l < 0 || setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(l, (struct sockaddr *)a, sizeof(*a)) || listen(l, 4) ||
	    getsockname(l, (struct sockaddr *)a, &len) || fcntl(l, F_SETFL, O_NONBLOCK)) {
		if (l >= 0)
			close(l);
		return -1;
	}
	return l;
}

/* SENDMSG with MSG_FASTOPEN to `a` on `ring`; the CQE result. */
static int fastopen(struct io_uring *ring, const struct sockaddr_in *a)
{
	static char data[] = "hi";
	struct iovec iov = { data, 2 };
	struct msghdr mh = { 0 };
	struct io_uring_sqe *s = io_uring_get_sqe(ring);
	int fd = socket(AF_INET, SOCK_STREAM, 0), res;

	if (!s || fd < 0)
		return -EBADF;
	mh.msg_name = (void *)a;
	mh.msg_namelen = sizeof(*a);
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	io_uring_prep_sendmsg(s, fd, &mh, MSG_FASTOPEN);
	res = live_submit(ring, s);
	/* The descriptor stays open until the listener was asked. */
	return res == -EBADF ? -EIO : res;
}

static bool accepted(int l)
{
	struct pollfd p = { .fd = l, .events = POLLIN };
	int c;

	if (poll(&p, 1, 1000) != 1)
		return false;
	c = accept(l, NULL, NULL);
	if (c < 0)
		return false;
	close(c);
	return true;
}

static const char connect_only_policy[] =
	"{ \"target\": \"ring\", \"defaultAction\": \"deny\", \"registerOps\": [],"
	"  \"entries\": [ { \"names\": [\"sendmsg\", \"nop\"], \"action\": \"allow\" },"
	"    { \"names\": [\"connect\"], \"action\": \"deny\","
	"      \"args\": [ { \"field\": \"connect.addr4\", \"op\": \"in\", \"value\": "
	"\"127.0.0.0/8\" } ] } ] }";

/* In a new network namespace (the caller's child): loopback up and TCP
 * Fast Open on for clients there.  Nothing leaves the namespace. */
static int private_loopback(void)
{
	struct ifreq ifr;
	int s, f;

	if (unshare(CLONE_NEWNET))
		return -errno;
	s = socket(AF_INET, SOCK_DGRAM, 0);
	if (s < 0)
		return -errno;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
	if (ioctl(s, SIOCGIFFLAGS, &ifr) == 0) {
		ifr.ifr_flags |= IFF_UP;
		if (ioctl(s, SIOCSIFFLAGS, &ifr)) {
			close(s);
			return -errno;
		}
	}
	close(s);
	f = open("/proc/sys/net/ipv4/tcp_fastopen", O_WRONLY);
	if (f >= 0) {
		if (write(f, "1", 1) != 1) {
			close(f);
			return -EIO;
		}
		close(f);
	}
	return 0;
}

static int fastopen_child(void *arg, struct child_msg *m)
{
	struct io_uring ring;
	struct sockaddr_in a;
	struct planned pl;
	char path[520];
	int l, res;

	res = private_loopback();
	CHKF(m, res == 0, "a private network namespace with loopback: %s", strerror(-res));
	l = listener(&a);
	CHK(m, l >= 0);
	/* 1. CONNECT denied to 127/8 (whole, before 7.2), SENDMSG allowed. */
	res = plan_json(&ring, connect_only_policy, NULL, 0, 0, IOUR_EFFECT_NET_DEST, &pl);
	CHKF(m, res == 0, "plan and apply: %s", iour_errname(res));
	CHKF(m, pl.effect_reason == IOUR_REASON_EFFECT_OPEN,
	     "the plan's net-dest effect is open while SENDMSG is allowed: reason %u",
	     pl.effect_reason);
	{
		/* CONNECT itself is refused (a filter on 7.2+, whole before). */
		struct io_uring_sqe *s = io_uring_get_sqe(&ring);
		int fd = socket(AF_INET, SOCK_STREAM, 0);

		CHK(m, s != NULL && fd >= 0);
		io_uring_prep_connect(s, fd, (struct sockaddr *)&a, sizeof(a));
		res = live_submit(&ring, s);
		CHKF(m, res == -EACCES && !accepted(l), "CONNECT to 127.0.0.1 refused: %d", res);
		close(fd);
	}
	res = fastopen(&ring, &a);
	CHKF(m, (res >= 0 || res == -EINPROGRESS) && accepted(l),
	     "SENDMSG+MSG_FASTOPEN connected although CONNECT is denied: %d", res);
	io_uring_queue_exit(&ring);
	/* 2. The shipped tcp-client.json, as a ring policy: SENDMSG denied. */
	snprintf(path, sizeof(path), "@%s/tcp-client.json", (const char *)arg);
	res = plan_json(&ring, path, NULL, 0, 0, IOUR_EFFECT_NET_DEST, &pl);
	CHKF(m, res == 0, "plan and apply %s: %s", path + 1, iour_errname(res));
	CHKF(m, pl.effect_reason != IOUR_REASON_EFFECT_OPEN,
	     "tcp-client.json leaves no destination path open: reason %u", pl.effect_reason);
	res = fastopen(&ring, &a);
	CHKF(m, res == -EACCES, "tcp-client.json: SENDMSG+MSG_FASTOPEN refused: %d", res);
	CHK(m, !accepted(l));
	io_uring_queue_exit(&ring);
	close(l);
	return 0;
}

Test(live_effects, sendmsg_fastopen_reaches_a_destination_connect_rules_deny)
{
	const char *dir = getenv("IOUR_POLICIES_DIR");
	pid_t pid;
	int st = -1;

	LIVE_REQUIRE(LIVE_RING);
	/* The guests keep the policy files in /policies (20-live.sh). */
	if (!dir)
		dir = access("examples/policies/tcp-client.json", R_OK) == 0 ? "examples/policies" :
									       "/policies";
	pid = fork();
	if (pid == 0)
		_exit(unshare(CLONE_NEWNET) ? 1 : 0);
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st)) {
		fprintf(stderr, "live: skipped: cannot create a network namespace\n");
		cr_skip_test("skipped: cannot create a network namespace (unshare CLONE_NEWNET)");
	}
	LIVE_CHILD(fastopen_child, (void *)dir);
	live_log("CONNECT denied, SENDMSG allowed: SENDMSG+MSG_FASTOPEN connected to 127.0.0.1 "
		 "and the plan's net-dest effect is open; under tcp-client.json it got -EACCES");
}

/*
 * Ring-less register calls (doc/kernel.md 2 and 3).  A task policy whose
 * register list is empty must keep fd -1 SEND_MSG_RING and QUERY out: the
 * task set does so on 7.3.4, a seccomp guard on 7.0 to 7.2 and with the
 * companion before 7.0.  The attack: a ring-less SEND_MSG_RING posting a
 * completion into a ring created before, and a ring-less QUERY; a control
 * call before the policy shows that the kernel has the path.
 */
#define REG_SEND_MSG_RING 31
#define REG_QUERY 35
#define REG_BPF_FILTER 37

static long blind_msg(int target, uint64_t tag)
{
	struct io_uring_sqe sqe;

	memset(&sqe, 0, sizeof(sqe));
	sqe.opcode = 40; /* MSG_RING, IORING_MSG_DATA */
	sqe.fd = target;
	sqe.off = tag;
	return syscall(__NR_io_uring_register, -1, REG_SEND_MSG_RING, &sqe, 1) < 0 ? -errno : 0;
}

static long blind_query(void)
{
	struct {
		uint64_t next, data;
		uint32_t op, size;
		int32_t result;
		uint32_t resv[3];
	} h;
	uint8_t q[256];

	memset(&h, 0, sizeof(h));
	h.data = (uint64_t)(uintptr_t)q;
	h.size = sizeof(q);
	return syscall(__NR_io_uring_register, -1, REG_QUERY, &h, 0) < 0 ? -errno : 0;
}

static bool cqe_with(struct io_uring *r, uint64_t tag)
{
	struct io_uring_cqe *c;
	bool hit = false;

	while (io_uring_peek_cqe(r, &c) == 0) {
		hit |= c->user_data == tag;
		io_uring_cqe_seen(r, c);
	}
	return hit;
}

static const char ringless_policy[] = "{ \"defaultAction\": \"deny\", \"registerOps\": [],"
				      "  \"entries\": [ { \"names\": [\"nop\"], \"action\": \"allow\" } ] }";

static int ringless_child(void *arg, struct child_msg *m)
{
	bool query = arg != NULL;
	struct iour_policy *p = NULL;
	struct iour_plan *pl = NULL;
	struct iour_report *rep = NULL;
	struct io_uring t;
	long res;
	int rc;

	CHK(m, io_uring_queue_init(4, &t, 0) == 0);
	res = blind_msg(t.ring_fd, 0x11);
	CHKF(m, res == 0 && cqe_with(&t, 0x11), "control: ring-less SEND_MSG_RING posts: %ld",
	     res);
	if (query)
		CHKF(m, blind_query() == 0, "control: ring-less QUERY answers");
	rc = iour_policy__load_json(ringless_policy, strlen(ringless_policy), NULL, &p, NULL);
	if (!rc)
		rc = iour_policy__plan(p, NULL, &pl);
	if (!rc)
		rc = iour_plan__apply_task(pl, NULL, &rep);
	CHKF(m, rc == 0, "apply the task policy: %s", iour_errname(rc));
	res = blind_msg(t.ring_fd, 0x22);
	CHKF(m, res == -EACCES, "ring-less SEND_MSG_RING under registerOps []: %ld", res);
	CHK(m, !cqe_with(&t, 0x22));
	if (query) {
		res = blind_query();
		CHKF(m, res == -EACCES, "ring-less QUERY under registerOps []: %ld", res);
	}
	/* Register calls on the ring that existed before are not the task's
	 * ring-less calls: PROBE on it still answers (only fd -1 is denied). */
	{
		struct io_uring_probe *pr = io_uring_get_probe_ring(&t);

		CHKF(m, pr != NULL, "PROBE on an existing ring still answers");
		io_uring_free_probe(pr);
	}
	iour_report__free(rep);
	iour_plan__free(pl);
	iour_policy__free(p);
	io_uring_queue_exit(&t);
	return 0;
}

Test(live_effects, ringless_register_calls_denied_by_an_empty_register_list)
{
	const struct iour_features *f = live_features();

	LIVE_REQUIRE(LIVE_RING);
	if (f->reg_last <= REG_SEND_MSG_RING) {
		fprintf(stderr, "live: skipped: no ring-less register path (6.13+)\n");
		cr_skip_test("skipped: no ring-less register path (6.13+)");
	}
	LIVE_CHILD(ringless_child, f->reg_last > REG_QUERY ? (void *)1 : NULL);
	live_log("registerOps []: ring-less SEND_MSG_RING%s answered before the policy and "
		 "-EACCES under it (%s)",
		 f->reg_last > REG_QUERY ? " and QUERY" : "",
		 f->flags & IOUR_FEATURES_TASK_SET_GATES_FILTERS ? "the task set" :
		 live_missing(LIVE_TASK)                          ? "seccomp companion guard" :
								    "seccomp guard");
}

/* 7.0+: the plan's own fd -1 filter registrations still go through (the
 * guard comes last), and the filters hold; later filters may be added, as
 * on 7.3.4; ring-less SEND_MSG_RING stays refused. */
static const char filtered_policy[] =
	"{ \"defaultAction\": \"deny\", \"registerOps\": [],"
	"  \"entries\": [ { \"names\": [\"nop\"], \"action\": \"allow\" },"
	"    { \"names\": [\"socket\"], \"action\": \"allow\", \"args\": [ { \"field\": "
	"\"socket.family\", \"op\": \"==\", \"value\": \"AF_INET\" } ] } ] }";

static int tighten_child(void *arg, struct child_msg *m)
{
	struct iour_policy *p = NULL;
	struct iour_plan *pl = NULL;
	struct iour_report *rep = NULL;
	struct io_uring r;
	struct io_uring_sqe *s;
	long res;
	int rc;

	(void)arg;
	rc = iour_policy__load_json(filtered_policy, strlen(filtered_policy), NULL, &p, NULL);
	if (!rc)
		rc = iour_policy__plan(p, NULL, &pl);
	if (!rc)
		rc = iour_plan__apply_task(pl, NULL, &rep);
	CHKF(m, rc == 0, "apply: %s", iour_errname(rc));
	CHKF(m, iour_report__status(rep) == IOUR_STATUS_FULLY, "fully enforced: %d",
	     iour_report__status(rep));
	CHK(m, io_uring_queue_init(4, &r, 0) == 0);
	s = io_uring_get_sqe(&r);
	io_uring_prep_socket(s, AF_UNIX, SOCK_STREAM, 0, 0);
	res = live_submit(&r, s);
	CHKF(m, res == -EACCES, "the plan's SOCKET filter holds: AF_UNIX %ld", res);
	s = io_uring_get_sqe(&r);
	io_uring_prep_socket(s, AF_INET, SOCK_STREAM, 0, 0);
	res = live_submit(&r, s);
	CHKF(m, res >= 0, "AF_INET allowed: %ld", res);
	/* As on 7.3.4, whose set lists BPF_FILTER when the plan registers
	 * filters: the task may add more (a filter only adds denials); a
	 * NULL program reaches the kernel, which answers -EFAULT. */
	res = syscall(__NR_io_uring_register, -1, REG_BPF_FILTER, NULL, 0) < 0 ? -errno : 0;
	CHKF(m, res != -EACCES, "a later ring-less BPF_FILTER reaches the kernel: %ld", res);
	{
		struct io_uring t;

		CHK(m, io_uring_queue_init(4, &t, 0) == 0);
		res = blind_msg(t.ring_fd, 0x33);
		CHKF(m, res == -EACCES && !cqe_with(&t, 0x33),
		     "ring-less SEND_MSG_RING still refused: %ld", res);
		io_uring_queue_exit(&t);
	}
	io_uring_queue_exit(&r);
	iour_report__free(rep);
	iour_plan__free(pl);
	iour_policy__free(p);
	return 0;
}

Test(live_effects, plan_registers_its_filters_before_the_ringless_guard)
{
	LIVE_REQUIRE(LIVE_TASK | LIVE_TASK_BPF);
	LIVE_CHILD(tighten_child, NULL);
	live_log("registerOps [] with a SOCKET filter: applied fully, the filter holds, a later "
		 "ring-less BPF_FILTER reaches the kernel, ring-less SEND_MSG_RING -EACCES");
}
