/* SPDX-License-Identifier: MIT */
/*
 * Live, task-level argument filters (Linux 7.0+): the reference
 * behaviours of doc/kernel.md 8.3, produced through the
 * library's filter and policy API in forked children of the real kernel and
 * confirmed by the enforcement check: SOCKET family and type rules,
 * DENY_REST, OPENAT/OPENAT2 rules, CONNECT rules (7.2), inheritance and
 * stacking across generations, and payload-size negotiation on the task and
 * ring paths (the executor's -EMSGSIZE write-back handling).
 *
 * Skipped, with the reason, on kernels without the filters.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/internal.h"
#include "live.h"
#include "ring_util.h"

#define SQE_DRAIN 0x02
#define AF_UNIX_ 1
#define AF_INET_ 2
#define AF_INET6_ 10
#define STREAM 1
#define DGRAM 2

/* A task policy from the filter set `flt` (freed here), default deny;
 * plan, apply, check the report says `status`. */
static int apply_filters(struct iour_filter *flt, const struct iour_ruleset *rs, int status,
			 int deny_rest_op, struct child_msg *m)
{
	struct iour_report *rep = NULL;
	struct iour_policy *p;
	struct iour_plan *pl;
	char why[512];
	int rc;

	rc = live_policy(&p, IOUR_POLICY_TARGET_TASK, rs, flt, IOUR_POLICY_DEFAULT_DENY);
	iour_filter__free(flt);
	CHKF(m, rc == 0, "policy: %s", iour_errname(rc));
	rc = iour_policy__plan(p, NULL, &pl);
	CHKF(m, rc == 0, "plan: %s", iour_errname(rc));
	if (deny_rest_op >= 0)
		CHKF(m, (live_filter_flags(pl, (uint32_t)deny_rest_op) & 1) == 1,
		     "DENY_REST on the filter of opcode %d", deny_rest_op);
	rc = iour_plan__apply_task(pl, NULL, &rep);
	CHKF(m, rc == 0, "apply_task: %s", iour_errname(rc));
	CHKF(m, live_report_is(rep, status, IOUR_MECH_TASK, why, sizeof(why)), "%s", why);
	iour_report__free(rep);
	iour_plan__free(pl);
	iour_policy__free(p);
	return 0;
}

struct fcase {
	struct iour_filter *(*make)(void);
	const struct iour_verify_req *reqs;
	size_t n;
	int deny_rest_op;
};

static int filter_child(void *arg, struct child_msg *m)
{
	const struct fcase *c = arg;
	char why[512];
	int rc;

	if (apply_filters(c->make(), NULL, IOUR_STATUS_FULLY, c->deny_rest_op, m))
		return 1;
	rc = live_verify(c->reqs, c->n, LV_PLAIN, -1, why, sizeof(why));
	CHKF(m, rc == 0, "fresh ring: %s", why);
	rc = live_verify(c->reqs, c->n, LV_EXEC, -1, why, sizeof(why));
	CHKF(m, rc == 0 || rc == -ENOENT, "after execve: %s", why);
	return 0;
}

static struct iour_filter *rule(uint32_t opcode, uint32_t verdict, uint32_t field, uint32_t op,
				uint64_t value, uint64_t arg, uint32_t dflt)
{
	struct iour_filter *f = NULL;

	if (live_rule(&f, opcode, verdict, field, op, value, arg, dflt)) {
		iour_filter__free(f);
		return NULL;
	}
	return f;
}

static struct iour_filter *with_nop(struct iour_filter *f)
{
	if (f && iour_filter__set_default(f, OP_NOP, IOUR_ALLOW)) {
		iour_filter__free(f);
		return NULL;
	}
	return f;
}

static struct iour_filter *inet_only(void)
{
	return with_nop(rule(OP_SOCKET, IOUR_ALLOW, IOUR_FIELD_SOCKET_FAMILY, IOUR_CMP_EQ, AF_INET_,
			     0, IOUR_DENY));
}

static struct iour_filter *stream_only(void)
{
	return with_nop(rule(OP_SOCKET, IOUR_ALLOW, IOUR_FIELD_SOCKET_TYPE, IOUR_CMP_EQ, STREAM, 0,
			     IOUR_DENY));
}

/* NOP allowed unless IO_DRAIN; nothing else: DENY_REST closes the rest. */
static struct iour_filter *nop_filtered(void)
{
	return rule(OP_NOP, IOUR_ALLOW, IOUR_FIELD_SQE_FLAGS, IOUR_CMP_NONE_BITS, SQE_DRAIN, 0,
		    IOUR_DENY);
}

static struct iour_filter *no_creat(void)
{
	return with_nop(rule(OP_OPENAT, IOUR_DENY, IOUR_FIELD_OPEN_FLAGS, IOUR_CMP_ANY_BITS,
			     O_CREAT, 0, IOUR_ALLOW));
}

static struct iour_filter *no_in_root(void)
{
	return with_nop(rule(OP_OPENAT2, IOUR_DENY, IOUR_FIELD_OPEN_RESOLVE, IOUR_CMP_ANY_BITS,
			     0x10 /* RESOLVE_IN_ROOT */, 0, IOUR_ALLOW));
}

#define FCASE(mk, r, dr) { mk, r, IOUR_ARRAY_SIZE(r), dr }

static const struct iour_verify_req r_socket_family[] = {
	{ .sz = sizeof(struct iour_verify_req), .opcode = OP_SOCKET, .expect = IOUR_EXPECT_ALLOW,
	  .family = AF_INET_, .type = STREAM },
	{ .sz = sizeof(struct iour_verify_req), .opcode = OP_SOCKET, .expect = IOUR_EXPECT_DENY,
	  .family = AF_INET6_, .type = STREAM },
	{ .sz = sizeof(struct iour_verify_req), .opcode = OP_SOCKET, .expect = IOUR_EXPECT_DENY,
	  .family = AF_UNIX_, .type = STREAM },
	{ .sz = sizeof(struct iour_verify_req), .opcode = OP_NOP, .expect = IOUR_EXPECT_ALLOW },
	{ .sz = sizeof(struct iour_verify_req), .opcode = OP_READ, .expect = IOUR_EXPECT_DENY },
};

Test(live_task_bpf, socket_family)
{
	struct fcase c = FCASE(inet_only, r_socket_family, -1);

	LIVE_REQUIRE(LIVE_TASK | LIVE_TASK_BPF);
	LIVE_CHILD(filter_child, &c);
	live_log("task filter SOCKET AF_INET only: %zu answers confirmed", c.n);
}

static const struct iour_verify_req r_socket_type[] = {
	{ .sz = sizeof(struct iour_verify_req), .opcode = OP_SOCKET, .expect = IOUR_EXPECT_ALLOW,
	  .family = AF_INET_, .type = STREAM },
	{ .sz = sizeof(struct iour_verify_req), .opcode = OP_SOCKET, .expect = IOUR_EXPECT_ALLOW,
	  .family = AF_INET6_, .type = STREAM },
	{ .sz = sizeof(struct iour_verify_req), .opcode = OP_SOCKET, .expect = IOUR_EXPECT_DENY,
	  .family = AF_INET_, .type = DGRAM },
};

Test(live_task_bpf, socket_type)
{
	struct fcase c = FCASE(stream_only, r_socket_type, -1);

	LIVE_REQUIRE(LIVE_TASK | LIVE_TASK_BPF);
	LIVE_CHILD(filter_child, &c);
	live_log("task filter SOCKET SOCK_STREAM only: %zu answers confirmed", c.n);
}

static const struct iour_verify_req r_deny_rest[] = {
	{ .sz = sizeof(struct iour_verify_req), .opcode = OP_NOP, .expect = IOUR_EXPECT_ALLOW },
	{ .sz = sizeof(struct iour_verify_req), .opcode = OP_NOP, .expect = IOUR_EXPECT_DENY,
	  .sqe_flags = SQE_DRAIN },
	{ .sz = sizeof(struct iour_verify_req), .opcode = OP_SOCKET, .expect = IOUR_EXPECT_DENY,
	  .family = AF_INET_, .type = STREAM },
	{ .sz = sizeof(struct iour_verify_req), .opcode = OP_WRITE, .expect = IOUR_EXPECT_DENY },
};

Test(live_task_bpf, deny_rest)
{
	struct fcase c = FCASE(nop_filtered, r_deny_rest, OP_NOP);

	LIVE_REQUIRE(LIVE_TASK | LIVE_TASK_BPF);
	LIVE_CHILD(filter_child, &c);
	live_log("task filter NOP only with DENY_REST: %zu answers confirmed", c.n);
}

/* OPENAT without O_CREAT: a ring made before the filter is not affected,
 * new rings are. */
static int openat_child(void *arg, struct child_msg *m)
{
	char dir[1024], p1[1100], p2[1100], p3[1100], why[512];
	struct io_uring before;
	struct io_uring_sqe *sqe;
	int res, rc;

	(void)arg;
	CHK(m, test_tmp_template(dir, sizeof(dir), "iour-live-", NULL) == 0);
	CHK(m, mkdtemp(dir) != NULL);
	snprintf(p1, sizeof(p1), "%s/before", dir);
	snprintf(p2, sizeof(p2), "%s/old-ring", dir);
	snprintf(p3, sizeof(p3), "%s/new-ring", dir);
	CHK(m, io_uring_queue_init(8, &before, 0) == 0);
	sqe = io_uring_get_sqe(&before);
	io_uring_prep_openat(sqe, AT_FDCWD, p1, O_CREAT | O_WRONLY, 0600);
	res = live_submit(&before, sqe);
	CHKF(m, res >= 0, "O_CREAT before the filter: %d", res);
	close(res);
	if (apply_filters(no_creat(), NULL, IOUR_STATUS_FULLY, -1, m))
		return 1;
	sqe = io_uring_get_sqe(&before);
	io_uring_prep_openat(sqe, AT_FDCWD, p2, O_CREAT | O_WRONLY, 0600);
	res = live_submit(&before, sqe);
	CHKF(m, res >= 0, "O_CREAT on the ring made before: %d", res);
	close(res);
	{
		const struct iour_verify_req r[] = {
			live_open(OP_OPENAT, p3, O_CREAT | O_WRONLY, 0, IOUR_EXPECT_DENY),
			live_open(OP_OPENAT, "/dev/null", O_RDONLY, 0, IOUR_EXPECT_ALLOW),
			live_req(OP_NOP, IOUR_EXPECT_ALLOW),
		};

		rc = live_verify(r, 3, LV_PLAIN, -1, why, sizeof(why));
		CHKF(m, rc == 0, "new ring: %s", why);
	}
	CHK(m, access(p3, F_OK) != 0);
	io_uring_queue_exit(&before);
	unlink(p1);
	unlink(p2);
	rmdir(dir);
	return 0;
}

Test(live_task_bpf, openat_no_creat)
{
	LIVE_REQUIRE(LIVE_TASK | LIVE_TASK_BPF);
	LIVE_CHILD(openat_child, NULL);
	live_log("task filter OPENAT without O_CREAT: denied on new rings, not on a ring made "
		 "before");
}

static const struct iour_verify_req r_openat2_resolve[] = {
	{ .sz = sizeof(struct iour_verify_req), .opcode = OP_OPENAT2, .expect = IOUR_EXPECT_DENY, .path = ".",
	  .open_flags = O_RDONLY | O_DIRECTORY, .open_resolve = 0x10 },
	{ .sz = sizeof(struct iour_verify_req), .opcode = OP_OPENAT2, .expect = IOUR_EXPECT_ALLOW, .path = ".",
	  .open_flags = O_RDONLY | O_DIRECTORY },
};

Test(live_task_bpf, openat2_resolve)
{
	struct fcase c = FCASE(no_in_root, r_openat2_resolve, -1);

	LIVE_REQUIRE(LIVE_TASK | LIVE_TASK_BPF);
	LIVE_CHILD(filter_child, &c);
	live_log("task filter OPENAT2 without RESOLVE_IN_ROOT: %zu answers confirmed", c.n);
}

/* CONNECT (7.2): only loopback destinations are ever used. */
static struct iour_filter *connect_rules(void)
{
	struct iour_filter *f = NULL;

	if (live_rule(&f, OP_CONNECT, IOUR_DENY, IOUR_FIELD_CONNECT_PORT, IOUR_CMP_EQ, 22, 0,
		      IOUR_DENY) ||
	    live_rule(&f, OP_CONNECT, IOUR_ALLOW, IOUR_FIELD_CONNECT_ADDR4, IOUR_CMP_EQ,
		      IOUR_IPV4(127, 0, 0, 1), 0, IOUR_DENY)) {
		iour_filter__free(f);
		return NULL;
	}
	return with_nop(f);
}

struct sin4 {
	uint16_t family;
	uint16_t port; /* network order */
	uint32_t addr; /* network order */
	uint8_t zero[8];
};
struct sin6 {
	uint16_t family;
	uint16_t port;
	uint32_t flow;
	uint8_t addr[16];
	uint32_t scope;
};

static const struct sin4 lo_1 = { AF_INET_, 0x0100 /* port 1 */, 0x0100007f, { 0 } };
static const struct sin4 lo_22 = { AF_INET_, 0x1600 /* port 22 */, 0x0100007f, { 0 } };
static const struct sin4 lo_2 = { AF_INET_, 0x0100, 0x0200007f /* 127.0.0.2 */, { 0 } };
static const struct sin6 lo6 = { AF_INET6_, 0x0100, 0, { [15] = 1 }, 0 };

static const struct iour_verify_req r_connect_rules[] = {
	{ .sz = sizeof(struct iour_verify_req), .opcode = OP_CONNECT, .expect = IOUR_EXPECT_ALLOW,
	  .addr = &lo_1, .addrlen = sizeof(lo_1) },
	{ .sz = sizeof(struct iour_verify_req), .opcode = OP_CONNECT, .expect = IOUR_EXPECT_DENY,
	  .addr = &lo_22, .addrlen = sizeof(lo_22) },
	{ .sz = sizeof(struct iour_verify_req), .opcode = OP_CONNECT, .expect = IOUR_EXPECT_DENY,
	  .addr = &lo_2, .addrlen = sizeof(lo_2) },
	{ .sz = sizeof(struct iour_verify_req), .opcode = OP_CONNECT, .expect = IOUR_EXPECT_DENY,
	  .addr = &lo6, .addrlen = sizeof(lo6) },
};

Test(live_task_bpf, connect_rules)
{
	struct fcase c = FCASE(connect_rules, r_connect_rules, -1);

	LIVE_REQUIRE(LIVE_TASK | LIVE_TASK_BPF | LIVE_CONNECT);
	LIVE_CHILD(filter_child, &c);
	live_log("task filter CONNECT (port 22 denied, only 127.0.0.1): %zu answers confirmed", c.n);
}

/* The stale addr_len case: family 0 passes a family deny-list. */
static struct iour_filter *no_unix_connect(void)
{
	return with_nop(rule(OP_CONNECT, IOUR_DENY, IOUR_FIELD_CONNECT_FAMILY, IOUR_CMP_EQ, AF_UNIX_,
			     0, IOUR_ALLOW));
}

static const struct {
	uint16_t family;
	char path[32];
} un = { AF_UNIX_, "/nonexistent/iour-live" };
static const struct iour_verify_req r_connect_short_address[] = {
	{ .sz = sizeof(struct iour_verify_req), .opcode = OP_CONNECT, .expect = IOUR_EXPECT_DENY,
	  .addr = &un, .addrlen = sizeof(un) },
	{ .sz = sizeof(struct iour_verify_req), .opcode = OP_CONNECT, .expect = IOUR_EXPECT_ALLOW,
	  .addr = &lo_1, .addrlen = sizeof(lo_1) },
	/* addr_len 1: the kernel fills no family (0): allowed, and the
	 * network code answers -EINVAL. */
	{ .sz = sizeof(struct iour_verify_req), .opcode = OP_CONNECT, .expect = IOUR_EXPECT_ALLOW,
	  .family = AF_UNIX_, .addr = &un, .addrlen = 1 },
};

Test(live_task_bpf, connect_short_address)
{
	struct fcase c = FCASE(no_unix_connect, r_connect_short_address, -1);

	LIVE_REQUIRE(LIVE_TASK | LIVE_TASK_BPF | LIVE_CONNECT);
	LIVE_CHILD(filter_child, &c);
	live_log("task filter CONNECT family deny-list, short address: %zu answers confirmed", c.n);
}

/* ---- IPv4-mapped destinations (filter.h, IOUR_FILTER_ADDR4_LITERAL) ----
 * Real connects to a listener on 127.0.0.1: through an AF_INET6 socket to
 * ::ffff:127.0.0.1 (which the kernel delivers over IPv4 to that listener)
 * and through an AF_INET socket.  Loopback only, in a network namespace of
 * the child's own when it can have one. */
enum { M_DENY_LO, M_ALLOW_LO, M_ALLOW_V6_AND_10 };

struct mcase {
	const char *what;
	int rules;      /* M_* */
	uint32_t flags; /* iour_filter_opts.flags */
	int want6;      /* CQE res of the connect to ::ffff:127.0.0.1 */
	int want4;      /* CQE res of the connect to 127.0.0.1 */
};

static struct iour_filter *mapped_filter(const struct mcase *c)
{
	struct iour_filter_opts o = { .sz = sizeof(o), .flags = c->flags };
	struct iour_cmp fam6 = { .sz = sizeof(fam6), .field = IOUR_FIELD_CONNECT_FAMILY,
				 .op = IOUR_CMP_EQ, .value = AF_INET6_ };
	struct iour_cmp a4 = { .sz = sizeof(a4), .field = IOUR_FIELD_CONNECT_ADDR4 };
	struct iour_filter *f;
	uint32_t dflt = IOUR_DENY;
	int rc;

	if (iour_filter__new(&o, &f))
		return NULL;
	switch (c->rules) {
	case M_DENY_LO: /* deny addr4 in 127.0.0.0/8, default allow */
		a4.op = IOUR_CMP_IN_PREFIX;
		a4.value = IOUR_IPV4(127, 0, 0, 0);
		a4.arg = 8;
		rc = iour_filter__add_rule(f, OP_CONNECT, IOUR_DENY, &a4, 1);
		dflt = IOUR_ALLOW;
		break;
	case M_ALLOW_LO: /* allow addr4 == 127.0.0.1, default deny */
		a4.op = IOUR_CMP_EQ;
		a4.value = IOUR_IPV4(127, 0, 0, 1);
		rc = iour_filter__add_rule(f, OP_CONNECT, IOUR_ALLOW, &a4, 1);
		break;
	default: /* allow addr4 in 10.0.0.0/8 (never connected to), allow
		  * family == AF_INET6, default deny */
		a4.op = IOUR_CMP_IN_PREFIX;
		a4.value = IOUR_IPV4(10, 0, 0, 0);
		a4.arg = 8;
		rc = iour_filter__add_rule(f, OP_CONNECT, IOUR_ALLOW, &a4, 1);
		if (!rc)
			rc = iour_filter__add_rule(f, OP_CONNECT, IOUR_ALLOW, &fam6, 1);
		break;
	}
	if (!rc)
		rc = iour_filter__set_default(f, OP_CONNECT, dflt);
	if (rc) {
		iour_filter__free(f);
		return NULL;
	}
	return f;
}

/* Brings lo up (a fresh network namespace has it down). */
static int lo_up(void)
{
	struct ifreq ifr;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), rc = -1;

	if (fd < 0)
		return -1;
	memset(&ifr, 0, sizeof(ifr));
	strcpy(ifr.ifr_name, "lo");
	if (!ioctl(fd, SIOCGIFFLAGS, &ifr)) {
		ifr.ifr_flags |= IFF_UP;
		rc = ioctl(fd, SIOCSIFFLAGS, &ifr);
	}
	close(fd);
	return rc;
}

/* An io_uring CONNECT from a new socket of `family` to 127.0.0.1:port or
 * ::ffff:127.0.0.1:port; the CQE's res (or a negative errno of the set-up,
 * below LIVE_NO_CQE). */
static int ring_connect(struct io_uring *ring, int family, uint16_t port, int *sfd)
{
	struct sockaddr_in6 s6 = { .sin6_family = AF_INET6, .sin6_port = htons(port) };
	struct sockaddr_in s4 = { .sin_family = AF_INET, .sin_port = htons(port),
				  .sin_addr = { htonl(INADDR_LOOPBACK) } };
	struct io_uring_sqe *sqe;
	int off = 0;

	*sfd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (*sfd < 0)
		return LIVE_NO_CQE - errno;
	if (family == AF_INET6) {
		if (setsockopt(*sfd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof(off)) ||
		    inet_pton(AF_INET6, "::ffff:127.0.0.1", &s6.sin6_addr) != 1)
			return LIVE_NO_CQE - errno;
	}
	sqe = io_uring_get_sqe(ring);
	if (!sqe)
		return LIVE_NO_CQE;
	if (family == AF_INET6)
		io_uring_prep_connect(sqe, *sfd, (struct sockaddr *)&s6, sizeof(s6));
	else
		io_uring_prep_connect(sqe, *sfd, (struct sockaddr *)&s4, sizeof(s4));
	return live_submit(ring, sqe);
}

static int mapped_child(void *arg, struct child_msg *m)
{
	const struct mcase *c = arg;
	struct sockaddr_in la = { .sin_family = AF_INET, .sin_addr = { htonl(INADDR_LOOPBACK) } };
	socklen_t ll = sizeof(la);
	struct iour_filter *flt;
	struct io_uring ring;
	int lfd, s6 = -1, s4 = -1, res6, res4, accepted = 0, fd, rc;

	if (!unshare(CLONE_NEWNET))
		CHKF(m, lo_up() == 0, "bringing lo up in a new network namespace: errno %d", errno);
	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	CHKF(m, lfd >= 0, "socket: errno %d", errno);
	CHKF(m, !bind(lfd, (struct sockaddr *)&la, sizeof(la)) && !listen(lfd, 8) &&
			!getsockname(lfd, (struct sockaddr *)&la, &ll),
	     "listener on 127.0.0.1: errno %d", errno);
	flt = with_nop(mapped_filter(c));
	CHKF(m, flt != NULL, "%s: building the filter failed", c->what);
	if (apply_filters(flt, NULL, IOUR_STATUS_FULLY, -1, m))
		return 1;
	rc = io_uring_queue_init(4, &ring, 0);
	CHKF(m, rc == 0, "ring: %d", rc);
	res6 = ring_connect(&ring, AF_INET6, ntohs(la.sin_port), &s6);
	res4 = ring_connect(&ring, AF_INET, ntohs(la.sin_port), &s4);
	while ((fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC)) >= 0) {
		accepted++;
		close(fd);
	}
	io_uring_queue_exit(&ring);
	close(s6);
	close(s4);
	close(lfd);
	CHKF(m, res6 == c->want6, "%s: connect to ::ffff:127.0.0.1 gave %d, want %d", c->what, res6,
	     c->want6);
	CHKF(m, res4 == c->want4, "%s: connect to 127.0.0.1 gave %d, want %d", c->what, res4,
	     c->want4);
	CHKF(m, accepted == (c->want6 == 0) + (c->want4 == 0),
	     "%s: the listener accepted %d connections", c->what, accepted);
	return 0;
}

Test(live_task_bpf, connect_ipv4_mapped)
{
	static const struct mcase cases[] = {
		{ "deny addr4 in 127/8", M_DENY_LO, 0, -EACCES, -EACCES },
		{ "deny addr4 in 127/8, literal", M_DENY_LO, IOUR_FILTER_ADDR4_LITERAL, 0,
		  -EACCES },
		{ "allow only addr4 127.0.0.1", M_ALLOW_LO, 0, 0, 0 },
		{ "allow only addr4 127.0.0.1, literal", M_ALLOW_LO, IOUR_FILTER_ADDR4_LITERAL,
		  -EACCES, 0 },
		{ "allow addr4 in 10/8 and AF_INET6", M_ALLOW_V6_AND_10, 0, -EACCES, -EACCES },
		{ "allow addr4 in 10/8 and AF_INET6, literal", M_ALLOW_V6_AND_10,
		  IOUR_FILTER_ADDR4_LITERAL, 0, -EACCES },
	};

	LIVE_REQUIRE(LIVE_TASK | LIVE_TASK_BPF | LIVE_CONNECT);
	for (size_t i = 0; i < IOUR_ARRAY_SIZE(cases); i++) {
		LIVE_CHILD(mapped_child, (void *)&cases[i]);
		live_log("task filter CONNECT %s: ::ffff:127.0.0.1 gave %d, 127.0.0.1 gave %d, "
			 "as expected", cases[i].what, cases[i].want6, cases[i].want4);
	}
}

/* ---- inheritance and stacking across generations ---- */

static int plan_apply_fresh(struct iour_filter *flt, struct iour_ruleset *rs, uint32_t dflt,
			    struct child_msg *m)
{
	struct iour_features f;
	struct iour_report *rep = NULL;
	struct iour_policy *p;
	struct iour_plan *pl;
	int rc;

	CHK(m, live_refresh(&f) == 0); /* the task may be restricted by now */
	rc = live_policy(&p, IOUR_POLICY_TARGET_TASK, rs, flt, dflt);
	iour_filter__free(flt);
	iour_ruleset__free(rs);
	CHKF(m, rc == 0, "policy: %s", iour_errname(rc));
	rc = iour_policy__plan(p, NULL, &pl);
	CHKF(m, rc == 0, "plan: %s", iour_errname(rc));
	CHKF(m, live_filter_flags(pl, OP_NOP) < 0 || !(live_filter_flags(pl, OP_NOP) & 1),
	     "%s", "no DENY_REST on a restricted task");
	rc = iour_plan__apply_task(pl, NULL, &rep);
	CHKF(m, rc == 0, "apply: %s", iour_errname(rc));
	iour_report__free(rep);
	iour_plan__free(pl);
	iour_policy__free(p);
	return 0;
}

static int level3(void *arg, struct child_msg *m)
{
	static const uint32_t ops[] = { OP_NOP, OP_SOCKET };
	const struct iour_verify_req r[] = {
		live_req(OP_NOP, IOUR_EXPECT_ALLOW),	  live_socket(AF_INET_, STREAM, IOUR_EXPECT_ALLOW),
		live_socket(AF_INET_, DGRAM, IOUR_EXPECT_DENY),
		live_socket(AF_INET6_, STREAM, IOUR_EXPECT_DENY),
		live_req(OP_READ, IOUR_EXPECT_DENY),
	};
	char why[512];
	int rc;

	(void)arg;
	/* NOP and SOCKET allowed, the rest denied: deny filters stack on the
	 * inherited ones. */
	if (plan_apply_fresh(NULL, rs_make(ops, 2, 0x7f, 0, NULL, -1), IOUR_POLICY_DEFAULT_DENY, m))
		return 1;
	rc = live_verify(r, IOUR_ARRAY_SIZE(r), LV_PLAIN, -1, why, sizeof(why));
	CHKF(m, rc == 0, "level 3: %s", why);
	return 0;
}

static int level2(void *arg, struct child_msg *m)
{
	const struct iour_verify_req r[] = {
		live_socket(AF_INET_, STREAM, IOUR_EXPECT_ALLOW),
		live_socket(AF_INET_, DGRAM, IOUR_EXPECT_DENY),
		live_socket(AF_INET6_, STREAM, IOUR_EXPECT_DENY),
		live_req(OP_NOP, IOUR_EXPECT_ALLOW),
	};
	struct child_msg gm;
	char why[512];
	int rc;

	(void)arg;
	if (plan_apply_fresh(stream_only(), NULL, IOUR_POLICY_DEFAULT_DENY, m))
		return 1;
	rc = live_verify(r, IOUR_ARRAY_SIZE(r), LV_PLAIN, -1, why, sizeof(why));
	CHKF(m, rc == 0, "level 2 (stacked): %s", why);
	memset(&gm, 0, sizeof(gm));
	rc = child_run(level3, NULL, &gm);
	CHKF(m, rc == 0, "%.900s", gm.text);
	return 0;
}

static int loosen(void *arg, struct child_msg *m)
{
	const struct iour_verify_req r[] = { live_socket(AF_INET6_, STREAM, IOUR_EXPECT_DENY),
					     live_req(OP_READ, IOUR_EXPECT_DENY) };
	char why[512];
	int rc;

	(void)arg;
	/* A policy that allows everything restricts nothing: it cannot
	 * loosen what the parent registered. */
	if (plan_apply_fresh(NULL, NULL, IOUR_POLICY_DEFAULT_ALLOW, m))
		return 1;
	rc = live_verify(r, 2, LV_PLAIN, -1, why, sizeof(why));
	CHKF(m, rc == 0, "%s", why);
	return 0;
}

static int level1(void *arg, struct child_msg *m)
{
	const struct iour_verify_req r[] = {
		live_socket(AF_INET_, DGRAM, IOUR_EXPECT_ALLOW),
		live_socket(AF_INET6_, STREAM, IOUR_EXPECT_DENY),
	};
	struct child_msg gm;
	char why[512];
	int rc;

	(void)arg;
	if (apply_filters(inet_only(), NULL, IOUR_STATUS_FULLY, -1, m))
		return 1;
	memset(&gm, 0, sizeof(gm));
	rc = child_run(level2, NULL, &gm);
	CHKF(m, rc == 0, "%.900s", gm.text);
	memset(&gm, 0, sizeof(gm));
	rc = child_run(loosen, NULL, &gm);
	CHKF(m, rc == 0, "%.900s", gm.text);
	/* The descendants' filters stayed with them. */
	rc = live_verify(r, 2, LV_PLAIN, -1, why, sizeof(why));
	CHKF(m, rc == 0, "level 1 after its children: %s", why);
	return 0;
}

Test(live_task_bpf, inherit_and_stack)
{
	LIVE_REQUIRE(LIVE_TASK | LIVE_TASK_BPF);
	LIVE_CHILD(level1, NULL);
	live_log("task filters across three generations: AF_INET-only, then SOCK_STREAM-only "
		 "stacked, then deny filters; a child cannot loosen; the parent keeps its own");
}

/* ---- payload-size negotiation (the executor's -EMSGSIZE handling) ---- */

/* SOCKET AF_INET only, as a raw program that reads `pdu` payload bytes. */
static const struct iour_insn inet_prog[] = {
	{ 0x20, 0, 0, 16 }, /* ld socket.family */
	{ 0x15, 0, 1, AF_INET_ },
	{ 0x06, 0, 0, 1 },
	{ 0x06, 0, 0, 0 },
};

/*
 * Plan for the running kernel described with a wrong SOCKET payload size
 * `claimed`, with a program declaring `pdu` bytes; apply; the report must
 * hold a decision of `kind` for SOCKET with value 12 (what the kernel wrote
 * back), and SOCKET(AF_INET) must be `inet_expect`.
 */
struct pducase {
	uint32_t target;
	uint8_t claimed, pdu;
	uint32_t kind;
	uint32_t inet_expect;
};

static int pdu_child(void *arg, struct child_msg *m)
{
	const struct pducase *c = arg;
	static const uint32_t ops[] = { OP_NOP, OP_SOCKET };
	struct iour_ruleset *rs = rs_make(ops, 2, 0x7f, 0, NULL, -1);
	const struct iour_verify_req r[] = { live_socket(AF_INET_, STREAM, c->inet_expect),
					     live_socket(AF_INET6_, STREAM, IOUR_EXPECT_DENY),
					     live_req(OP_NOP, IOUR_EXPECT_ALLOW) };
	struct iour_features f;
	struct iour_report *rep = NULL;
	struct iour_policy *p;
	struct iour_plan *pl;
	struct iour_decision d = { .sz = sizeof(d) };
	IOUR_OPTS(iour_plan_opts, o, .features = &f);
	char why[512];
	int rc, i, n, found = 0, fd = -1, flags;

	CHK(m, live_refresh(&f) == 0);
	CHKF(m, f.pdu_socket == 12, "the kernel's SOCKET payload: %u", f.pdu_socket);
	f.pdu_socket = c->claimed;
	CHK(m, live_policy(&p, c->target, rs, NULL, IOUR_POLICY_DEFAULT_DENY) == 0);
	iour_ruleset__free(rs);
	CHK(m, iour_policy__set_prog(p, OP_SOCKET, inet_prog, 4, c->pdu) == 0);
	rc = iour_policy__plan(p, &o, &pl);
	CHKF(m, rc == 0, "plan: %s", iour_errname(rc));
	flags = live_filter_flags(pl, OP_SOCKET);
	CHKF(m, flags >= 0 && (flags & 2) && (flags >> 8) == c->pdu,
	     "planned SZ_STRICT with pdu %u: %#x", c->pdu, flags);
	if (c->target == IOUR_POLICY_TARGET_TASK)
		rc = iour_plan__apply_task(pl, NULL, &rep);
	else
		rc = iour_plan__create_ring(pl, 8, NULL, NULL, &fd, &rep);
	CHKF(m, rc == 0, "apply: %s", iour_errname(rc));
	live_print_report("negotiated", rep);
	n = iour_report__decision_cnt(rep);
	for (i = 0; i < n; i++)
		if (!iour_report__decision(rep, (size_t)i, &d) && d.kind == c->kind &&
		    d.opcode == OP_SOCKET && d.value == 12)
			found++;
	CHKF(m, found == 1, "decision kind %u with the written-back size 12: %d", c->kind, found);
	rc = live_verify(r, 3, fd < 0 ? LV_PLAIN : LV_RING, fd, why, sizeof(why));
	CHKF(m, rc == 0, "%s", why);
	if (fd >= 0)
		close(fd);
	iour_report__free(rep);
	iour_plan__free(pl);
	iour_policy__free(p);
	return 0;
}

Test(live_task_bpf, pdu_size_negotiation)
{
	/* Claimed 8, program reads 8: SZ_STRICT refused, K = 12 written back,
	 * registered again without SZ_STRICT (a prefix read). */
	struct pducase smaller = { IOUR_POLICY_TARGET_TASK, 8, 8, IOUR_DECISION_NEGOTIATED,
				   IOUR_EXPECT_ALLOW };
	/* Claimed 24, program reads 24: K = 12 cannot hold it; replaced by
	 * `ret #0` (fallback closed), reported tightened. */
	struct pducase larger = { IOUR_POLICY_TARGET_TASK, 24, 24, IOUR_DECISION_TIGHTENED,
				  IOUR_EXPECT_DENY };

	LIVE_REQUIRE(LIVE_TASK | LIVE_TASK_BPF);
	LIVE_CHILD(pdu_child, &smaller);
	LIVE_CHILD(pdu_child, &larger);
	live_log("task filter payload negotiation: K = 12 written back; prefix program "
		 "re-registered, oversized program replaced by the closed fallback");
}

Test(live_ring_bpf, pdu_size_negotiation)
{
	struct pducase smaller = { IOUR_POLICY_TARGET_RING, 8, 8, IOUR_DECISION_NEGOTIATED,
				   IOUR_EXPECT_ALLOW };
	struct pducase larger = { IOUR_POLICY_TARGET_RING, 24, 24, IOUR_DECISION_TIGHTENED,
				  IOUR_EXPECT_DENY };

	LIVE_REQUIRE(LIVE_RING_BPF);
	LIVE_CHILD(pdu_child, &smaller);
	LIVE_CHILD(pdu_child, &larger);
	live_log("ring filter payload negotiation: K = 12 written back; prefix program "
		 "re-registered, oversized program replaced by the closed fallback");
}

/*
 * The requests of the filter tests above, on this kernel with nothing
 * restricted: every one must be prepared, submitted and let through (no
 * -EACCES), so the task-level tests cannot rot on kernels where they skip.
 */
Test(live_task_bpf, requests_answered_unrestricted)
{
	static const struct {
		const struct iour_verify_req *r;
		size_t n;
	} sets[] = {
		{ r_socket_family, IOUR_ARRAY_SIZE(r_socket_family) },
		{ r_socket_type, IOUR_ARRAY_SIZE(r_socket_type) },
		{ r_deny_rest, IOUR_ARRAY_SIZE(r_deny_rest) },
		{ r_openat2_resolve, IOUR_ARRAY_SIZE(r_openat2_resolve) },
		{ r_connect_rules, IOUR_ARRAY_SIZE(r_connect_rules) },
		{ r_connect_short_address, IOUR_ARRAY_SIZE(r_connect_short_address) },
	};
	struct iour_verify_req all[64];
	char why[1024];
	size_t i, j, n = 0;
	int rc;

	LIVE_REQUIRE(LIVE_RING);
	for (i = 0; i < IOUR_ARRAY_SIZE(sets); i++)
		for (j = 0; j < sets[i].n; j++) {
			cr_assert_lt(n, IOUR_ARRAY_SIZE(all));
			all[n] = sets[i].r[j];
			/* unknown opcodes (SOCKET before 5.19) are refused
			 * unrun (doc/kernel.md 1.7) */
			all[n++].expect = sets[i].r[j].opcode < live_features()->op_last ?
						  IOUR_EXPECT_ALLOW :
						  IOUR_EXPECT_DENY;
		}
	rc = live_verify(all, n, LV_PLAIN, -1, why, sizeof(why));
	cr_expect_eq(rc, 0, "%s", why);
	live_log("the filter tests' %zu requests are prepared and answered (none denied) on an "
		 "unrestricted ring", n);
}
