/* SPDX-License-Identifier: MIT */
/*
 * Every filter reference behaviour of doc/kernel.md 8.3, expressed with
 * the builder instead of hand-written cBPF, with the verdicts the kernel
 * gives.  Contexts come
 * from the library's context builders, filled as the kernel fills them;
 * each verdict is checked in the simulator and in the kernel's own
 * classic-BPF engine.  Stacked filters (a parent's and a child's) must
 * all allow, as the kernel requires.
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

#include "iouring_restrict/iouring_restrict.h"
#include "kernel_oracle.h"

#define NOP 0
#define CONNECT 16
#define OPENAT 18
#define OPENAT2 28
#define SOCKET 45
#define RESOLVE_IN_ROOT_BIT 0x10

struct ctx {
	uint8_t b[40];
};

static struct ctx sock(uint32_t fam, uint32_t type, uint32_t proto)
{
	struct ctx c;

	cr_assert_eq(iour_ctx_generic(c.b, 40, SOCKET, 0, 0x5678), 0);
	cr_assert_eq(iour_ctx_socket(c.b, 40, fam, type, proto), 0);
	return c;
}

static struct ctx op_open(uint32_t op, uint64_t flags, uint64_t mode, uint64_t resolve)
{
	struct ctx c;

	cr_assert_eq(iour_ctx_generic(c.b, 40, op, 0, 0xabcd), 0);
	cr_assert_eq(iour_ctx_open(c.b, 40, flags, mode, resolve), 0);
	return c;
}

static struct ctx v4(const char *ip, uint16_t port)
{
	struct ctx c;
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port) };

	cr_assert_eq(inet_pton(AF_INET, ip, &sa.sin_addr), 1);
	cr_assert_eq(iour_ctx_generic(c.b, 40, CONNECT, 0, 1), 0);
	cr_assert_eq(iour_ctx_connect(c.b, 40, &sa, sizeof(sa)), 0);
	return c;
}

static struct ctx v6(const char *ip, uint16_t port)
{
	struct ctx c;
	struct sockaddr_in6 sa = { .sin6_family = AF_INET6, .sin6_port = htons(port) };

	cr_assert_eq(inet_pton(AF_INET6, ip, &sa.sin6_addr), 1);
	cr_assert_eq(iour_ctx_generic(c.b, 40, CONNECT, 0, 1), 0);
	cr_assert_eq(iour_ctx_connect(c.b, 40, &sa, sizeof(sa)), 0);
	return c;
}

static struct ctx unix_addr(void)
{
	struct ctx c;
	struct sockaddr sa = { .sa_family = AF_UNIX };

	cr_assert_eq(iour_ctx_generic(c.b, 40, CONNECT, 0, 1), 0);
	cr_assert_eq(iour_ctx_connect(c.b, 40, &sa, sizeof(sa)), 0);
	return c;
}

static struct ctx nop(void)
{
	struct ctx c;

	cr_assert_eq(iour_ctx_generic(c.b, 40, NOP, 0, 0x1234), 0);
	return c;
}

static struct iour_filter *filt(uint32_t dflt)
{
	struct iour_filter_opts o = { .sz = sizeof(o), .default_verdict = dflt };
	struct iour_filter *f;

	cr_assert_eq(iour_filter__new(&o, &f), 0);
	return f;
}

static void rule(struct iour_filter *f, uint32_t op, uint32_t verdict, uint32_t field,
		 uint32_t cmpop, uint64_t value, uint64_t arg)
{
	struct iour_cmp c = { .sz = sizeof(c), .field = field, .op = cmpop, .value = value,
			      .arg = arg };

	cr_assert_eq(iour_filter__add_rule(f, op, verdict, &c, 1), 0);
}

static void rule6(struct iour_filter *f, uint32_t verdict, uint32_t cmpop, const char *ip,
		  uint64_t plen)
{
	struct iour_cmp c = { .sz = sizeof(c), .field = IOUR_FIELD_CONNECT_ADDR6, .op = cmpop,
			      .arg = plen };

	cr_assert_eq(inet_pton(AF_INET6, ip, c.addr6), 1);
	cr_assert_eq(iour_filter__add_rule(f, CONNECT, verdict, &c, 1), 0);
}

/* The verdict of a stack of filters (all must allow), in the simulator and
 * in the kernel; both must equal `want`. */
static void expect_stack(struct iour_filter **fs, size_t n, uint32_t op, const struct ctx *c,
			 int want, const char *what)
{
	int sim_all = 1, ker_all = 1;

	for (size_t i = 0; i < n; i++) {
		struct iour_prog *p;
		struct iour_sim_result r = { .sz = sizeof(r) };
		struct kernel_oracle o;
		int k;

		cr_assert_eq(iour_filter__compile(fs[i], op, NULL, &p), 0, "%s", what);
		cr_assert_eq(iour_cbpf_validate(iour_prog__insns(p), iour_prog__insn_cnt(p), 0, NULL),
			     0, "%s", what);
		cr_assert_eq(iour_cbpf_run(iour_prog__insns(p), iour_prog__insn_cnt(p), c->b, 40, &r),
			     0);
		cr_assert_eq(oracle_open(&o), 0);
		cr_assert_eq(oracle_attach(&o, iour_prog__insns(p), iour_prog__insn_cnt(p)), 0,
			     "%s", what);
		k = oracle_run(&o, c->b, NULL);
		oracle_close(&o);
		cr_assert_geq(k, 0);
		sim_all &= (int)r.allowed;
		ker_all &= k;
		iour_prog__free(p);
	}
	cr_assert_eq(sim_all, want, "simulator: %s", what);
	cr_assert_eq(ker_all, want, "kernel: %s", what);
}

static void expect(struct iour_filter *f, uint32_t op, struct ctx c, int want, const char *what)
{
	expect_stack(&f, 1, op, &c, want, what);
}

static uint32_t kind(struct iour_filter *f, uint32_t op)
{
	struct iour_prog *p;
	uint32_t k;

	cr_assert_eq(iour_filter__compile(f, op, NULL, &p), 0);
	k = iour_prog__kind(p);
	iour_prog__free(p);
	return k;
}

Test(filter_liburing, deny_and_allow_nop)
{
	struct iour_filter *deny = filt(IOUR_DENY), *allow = filt(IOUR_ALLOW);

	cr_assert_eq(iour_filter__set_default(deny, NOP, IOUR_DENY), 0);
	expect(deny, NOP, nop(), 0, "deny-all NOP");
	cr_assert_eq(kind(deny, NOP), IOUR_PROG_ALWAYS_DENY);
	/* the DENY_REST example: allow NOP; its program is constant too */
	cr_assert_eq(iour_filter__set_default(allow, NOP, IOUR_ALLOW), 0);
	expect(allow, NOP, nop(), 1, "allow-all NOP");
	cr_assert_eq(kind(allow, NOP), IOUR_PROG_ALWAYS_ALLOW);
	iour_filter__free(deny);
	iour_filter__free(allow);
}

Test(filter_liburing, socket_family_type_protocol)
{
	struct iour_filter *inet = filt(IOUR_DENY), *tcp = filt(IOUR_DENY), *lists = filt(IOUR_DENY);
	uint64_t fams[] = { AF_INET, AF_INET6 }, types[] = { SOCK_STREAM, SOCK_DGRAM };
	uint64_t protos[] = { 0, IPPROTO_TCP, IPPROTO_UDP };
	struct iour_cmp three[3] = {
		{ .sz = sizeof(struct iour_cmp), .field = IOUR_FIELD_SOCKET_FAMILY,
		  .op = IOUR_CMP_IN_SET, .set = fams, .set_len = 2 },
		{ .sz = sizeof(struct iour_cmp), .field = IOUR_FIELD_SOCKET_TYPE,
		  .op = IOUR_CMP_IN_SET, .set = types, .set_len = 2 },
		{ .sz = sizeof(struct iour_cmp), .field = IOUR_FIELD_SOCKET_PROTOCOL,
		  .op = IOUR_CMP_IN_SET, .set = protos, .set_len = 3 },
	};

	/* AF_INET only */
	rule(inet, SOCKET, IOUR_ALLOW, IOUR_FIELD_SOCKET_FAMILY, IOUR_CMP_EQ, AF_INET, 0);
	expect(inet, SOCKET, sock(AF_INET, SOCK_STREAM, 0), 1, "AF_INET TCP");
	expect(inet, SOCKET, sock(AF_INET6, SOCK_STREAM, 0), 0, "AF_INET6 TCP");
	expect(inet, SOCKET, sock(AF_UNIX, SOCK_STREAM, 0), 0, "AF_UNIX");
	/* TCP only: the base type, whatever NONBLOCK/CLOEXEC say */
	rule(tcp, SOCKET, IOUR_ALLOW, IOUR_FIELD_SOCKET_TYPE, IOUR_CMP_EQ, SOCK_STREAM, 0);
	expect(tcp, SOCKET, sock(AF_INET, SOCK_STREAM, 0), 1, "TCP");
	expect(tcp, SOCKET, sock(AF_INET, SOCK_DGRAM, 0), 0, "UDP");
	expect(tcp, SOCKET, sock(AF_INET6, SOCK_STREAM, 0), 1, "IPv6 TCP");
	expect(tcp, SOCKET, sock(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), 1, "TCP | CLOEXEC");
	expect(tcp, SOCKET, sock(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0), 1, "TCP | NONBLOCK");
	/* allow-lists of all three */
	cr_assert_eq(iour_filter__add_rule(lists, SOCKET, IOUR_ALLOW, three, 3), 0);
	expect(lists, SOCKET, sock(AF_INET6, SOCK_DGRAM, IPPROTO_UDP), 1, "v6 UDP");
	expect(lists, SOCKET, sock(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), 1, "v4 TCP cloexec");
	expect(lists, SOCKET, sock(AF_INET, SOCK_RAW, 0), 0, "raw socket");
	expect(lists, SOCKET, sock(AF_INET, SOCK_STREAM, IPPROTO_SCTP), 0, "SCTP");
	expect(lists, SOCKET, sock(AF_PACKET, SOCK_DGRAM, 0), 0, "AF_PACKET");
	iour_filter__free(inet);
	iour_filter__free(tcp);
	iour_filter__free(lists);
}

Test(filter_liburing, stacked_and_multi_level)
{
	struct iour_filter *l1 = filt(IOUR_DENY), *l2 = filt(IOUR_DENY), *l3 = filt(IOUR_DENY);
	struct iour_filter *stack[3] = { l1, l2, l3 };
	struct ctx c;

	rule(l1, SOCKET, IOUR_ALLOW, IOUR_FIELD_SOCKET_FAMILY, IOUR_CMP_EQ, AF_INET, 0);
	rule(l2, SOCKET, IOUR_ALLOW, IOUR_FIELD_SOCKET_TYPE, IOUR_CMP_EQ, SOCK_STREAM, 0);
	/* parent AF_INET only + child TCP only */
	c = sock(AF_INET, SOCK_STREAM, 0);
	expect_stack(stack, 2, SOCKET, &c, 1, "stack: AF_INET TCP");
	c = sock(AF_INET, SOCK_DGRAM, 0);
	expect_stack(stack, 2, SOCKET, &c, 0, "stack: AF_INET UDP");
	c = sock(AF_INET6, SOCK_STREAM, 0);
	expect_stack(stack, 2, SOCKET, &c, 0, "stack: AF_INET6 TCP");
	/* a third level allows NOP (its DENY_REST closes the rest) */
	cr_assert_eq(iour_filter__set_default(l3, NOP, IOUR_ALLOW), 0);
	expect(l3, NOP, nop(), 1, "multi-level: NOP");
	cr_assert_eq(iour_filter__compile(l3, SOCKET, NULL, &(struct iour_prog *){ NULL }), -ENOENT,
		     "level 3 says nothing about SOCKET");
	c = sock(AF_INET, SOCK_STREAM, 0);
	expect_stack(stack, 2, SOCKET, &c, 1, "multi-level: AF_INET TCP");
	/* cannot loosen: a parent's deny stays whatever the child allows */
	cr_assert_eq(iour_filter__set_default(l1, NOP, IOUR_DENY), 0);
	c = nop();
	{
		struct iour_filter *nops[2] = { l3, l1 };

		expect_stack(nops, 2, NOP, &c, 0, "cannot loosen");
	}
	iour_filter__free(l1);
	iour_filter__free(l2);
	iour_filter__free(l3);
}

Test(filter_liburing, open_flags_and_resolve)
{
	struct iour_filter *creat = filt(IOUR_ALLOW), *root = filt(IOUR_ALLOW);
	struct iour_filter *eq = filt(IOUR_DENY), *acc = filt(IOUR_DENY);

	rule(creat, OPENAT, IOUR_DENY, IOUR_FIELD_OPEN_FLAGS, IOUR_CMP_ANY_BITS, O_CREAT, 0);
	expect(creat, OPENAT, op_open(OPENAT, O_CREAT | O_RDWR, 0644, 0), 0, "O_CREAT denied");
	expect(creat, OPENAT, op_open(OPENAT, O_RDONLY, 0, 0), 1, "/dev/null O_RDONLY");
	rule(root, OPENAT2, IOUR_DENY, IOUR_FIELD_OPEN_RESOLVE, IOUR_CMP_ANY_BITS,
	     RESOLVE_IN_ROOT_BIT, 0);
	expect(root, OPENAT2, op_open(OPENAT2, O_RDONLY | O_DIRECTORY, 0, RESOLVE_IN_ROOT_BIT), 0,
	       "RESOLVE_IN_ROOT denied");
	expect(root, OPENAT2, op_open(OPENAT2, O_RDONLY | O_DIRECTORY, 0, 0), 1, "plain openat2");
	/* the documented trap: the kernel adds O_LARGEFILE, so an equality on
	 * the flags misses a read-only open; the access-mode field does not */
	rule(eq, OPENAT, IOUR_ALLOW, IOUR_FIELD_OPEN_FLAGS, IOUR_CMP_EQ, O_RDONLY, 0);
	expect(eq, OPENAT, op_open(OPENAT, O_RDONLY, 0, 0), 0, "flags == O_RDONLY never matches");
	rule(acc, OPENAT, IOUR_ALLOW, IOUR_FIELD_OPEN_ACCMODE, IOUR_CMP_EQ, O_RDONLY, 0);
	expect(acc, OPENAT, op_open(OPENAT, O_RDONLY, 0, 0), 1, "accmode == O_RDONLY");
	expect(acc, OPENAT, op_open(OPENAT, O_RDWR | O_CREAT, 0600, 0), 0, "accmode O_RDWR");
	iour_filter__free(creat);
	iour_filter__free(root);
	iour_filter__free(eq);
	iour_filter__free(acc);
}

Test(filter_liburing, connect_family_lists)
{
	struct iour_filter *allow = filt(IOUR_DENY), *deny = filt(IOUR_ALLOW);

	rule(allow, CONNECT, IOUR_ALLOW, IOUR_FIELD_CONNECT_FAMILY, IOUR_CMP_EQ, AF_INET, 0);
	expect(allow, CONNECT, v4("127.0.0.1", 80), 1, "allow-list: v4");
	expect(allow, CONNECT, v6("::1", 80), 0, "allow-list: v6");
	expect(allow, CONNECT, unix_addr(), 0, "allow-list: unix");
	rule(deny, CONNECT, IOUR_DENY, IOUR_FIELD_CONNECT_FAMILY, IOUR_CMP_EQ, AF_UNIX, 0);
	expect(deny, CONNECT, unix_addr(), 0, "deny-list: unix");
	expect(deny, CONNECT, v4("127.0.0.1", 80), 1, "deny-list: v4");
	expect(deny, CONNECT, v6("::1", 80), 1, "deny-list: v6");
	iour_filter__free(allow);
	iour_filter__free(deny);
}

Test(filter_liburing, connect_ipv4_addresses)
{
	struct iour_filter *deny = filt(IOUR_ALLOW), *only = filt(IOUR_DENY);

	rule(deny, CONNECT, IOUR_DENY, IOUR_FIELD_CONNECT_ADDR4, IOUR_CMP_EQ, IOUR_IPV4(127, 0, 0, 127), 0);
	expect(deny, CONNECT, v4("127.0.0.127", 80), 0, "deny 127.0.0.127");
	expect(deny, CONNECT, v4("127.0.0.1", 80), 1, "other v4 allowed");
	expect(deny, CONNECT, v6("::ffff:127.0.0.127", 80), 0, "the mapped form is v4");
	expect(deny, CONNECT, v6("::127.0.0.127", 80), 1, "the compatible form is v6");
	rule(only, CONNECT, IOUR_ALLOW, IOUR_FIELD_CONNECT_ADDR4, IOUR_CMP_EQ, IOUR_IPV4(127, 0, 0, 1), 0);
	expect(only, CONNECT, v4("127.0.0.1", 80), 1, "allow only 127.0.0.1");
	expect(only, CONNECT, v4("127.0.0.2", 80), 0, "127.0.0.2");
	expect(only, CONNECT, v4("1.0.0.127", 80), 0, "byte order");
	expect(only, CONNECT, v6("::1", 80), 0, "v6");
	iour_filter__free(deny);
	iour_filter__free(only);
}

static struct iour_filter *filt_flags(uint32_t dflt, uint32_t flags)
{
	struct iour_filter_opts o = { .sz = sizeof(o), .default_verdict = dflt, .flags = flags };
	struct iour_filter *f;

	cr_assert_eq(iour_filter__new(&o, &f), 0);
	return f;
}

/* An IPv4 rule also covers the IPv4-mapped IPv6 form (::ffff:a.b.c.d),
 * which the kernel connects over IPv4, unless IOUR_FILTER_ADDR4_LITERAL. */
Test(filter_liburing, connect_ipv4_mapped)
{
	struct iour_filter *deny = filt(IOUR_ALLOW), *fam = filt(IOUR_ALLOW), *only = filt(IOUR_DENY);
	struct iour_filter *lit = filt_flags(IOUR_ALLOW, IOUR_FILTER_ADDR4_LITERAL);
	struct iour_filter *famonly = filt(IOUR_ALLOW), *v6rule = filt(IOUR_ALLOW);
	struct iour_cmp two[2] = {
		{ .sz = sizeof(two[0]), .field = IOUR_FIELD_CONNECT_FAMILY, .op = IOUR_CMP_EQ,
		  .value = AF_INET },
		{ .sz = sizeof(two[0]), .field = IOUR_FIELD_CONNECT_ADDR4,
		  .op = IOUR_CMP_IN_PREFIX, .value = IOUR_IPV4(10, 0, 0, 0), .arg = 8 },
	};

	/* deny addr4 in 10.0.0.0/8 */
	rule(deny, CONNECT, IOUR_DENY, IOUR_FIELD_CONNECT_ADDR4, IOUR_CMP_IN_PREFIX,
	     IOUR_IPV4(10, 0, 0, 0), 8);
	expect(deny, CONNECT, v4("10.0.0.1", 80), 0, "v4");
	expect(deny, CONNECT, v6("::ffff:10.0.0.1", 80), 0, "mapped");
	expect(deny, CONNECT, v6("::ffff:10.255.1.2", 443), 0, "mapped, other host");
	expect(deny, CONNECT, v6("::ffff:11.0.0.1", 80), 1, "mapped, outside");
	expect(deny, CONNECT, v6("::ffff:0:10.0.0.1", 80), 1, "translated form is v6");
	expect(deny, CONNECT, v6("::10.0.0.1", 80), 1, "compatible form is v6");
	expect(deny, CONNECT, v6("::fffe:10.0.0.1", 80), 1, "not the mapped prefix");
	expect(deny, CONNECT, v6("1::ffff:10.0.0.1", 80), 1, "not the mapped prefix");
	expect(deny, CONNECT, v6("::1", 80), 1, "v6");
	/* family == AF_INET, addr4 in 10.0.0.0/8 */
	cr_assert_eq(iour_filter__add_rule(fam, CONNECT, IOUR_DENY, two, 2), 0);
	expect(fam, CONNECT, v4("10.0.0.1", 80), 0, "family rule, v4");
	expect(fam, CONNECT, v6("::ffff:10.0.0.1", 80), 0, "family rule, mapped");
	expect(fam, CONNECT, v6("::ffff:127.0.0.1", 80), 1, "family rule, mapped outside");
	/* deny family == AF_INET: every IPv4 destination */
	rule(famonly, CONNECT, IOUR_DENY, IOUR_FIELD_CONNECT_FAMILY, IOUR_CMP_EQ, AF_INET, 0);
	expect(famonly, CONNECT, v6("::ffff:1.2.3.4", 80), 0, "AF_INET covers mapped");
	expect(famonly, CONNECT, v6("::1", 80), 1, "AF_INET does not cover v6");
	/* an IPv6 rule keeps seeing the mapped bytes */
	{
		struct iour_cmp c = { .sz = sizeof(c), .field = IOUR_FIELD_CONNECT_ADDR6,
				      .op = IOUR_CMP_IN_PREFIX, .arg = 96 };

		c.addr6[10] = c.addr6[11] = 0xff;
		cr_assert_eq(iour_filter__add_rule(v6rule, CONNECT, IOUR_DENY, &c, 1), 0);
		expect(v6rule, CONNECT, v6("::ffff:1.2.3.4", 80), 0, "addr6 ::ffff:0:0/96");
		expect(v6rule, CONNECT, v4("1.2.3.4", 80), 1, "addr6 rule, v4");
	}
	/* an allow-list of IPv4 hosts admits their mapped form */
	rule(only, CONNECT, IOUR_ALLOW, IOUR_FIELD_CONNECT_ADDR4, IOUR_CMP_EQ,
	     IOUR_IPV4(127, 0, 0, 1), 0);
	expect(only, CONNECT, v6("::ffff:127.0.0.1", 80), 1, "allow-list, mapped");
	expect(only, CONNECT, v6("::ffff:127.0.0.2", 80), 0, "allow-list, mapped other");
	expect(only, CONNECT, v6("::1", 80), 0, "allow-list, v6");
	/* allowing IPv6 destinations does not open IPv4 ones through the
	 * mapped form */
	{
		struct iour_filter *mix = filt(IOUR_DENY), *any6 = filt(IOUR_DENY);
		struct iour_cmp c = { .sz = sizeof(c), .field = IOUR_FIELD_CONNECT_ADDR6,
				      .op = IOUR_CMP_IN_PREFIX, .arg = 0 };

		rule(mix, CONNECT, IOUR_ALLOW, IOUR_FIELD_CONNECT_ADDR4, IOUR_CMP_IN_PREFIX,
		     IOUR_IPV4(10, 0, 0, 0), 8);
		rule(mix, CONNECT, IOUR_ALLOW, IOUR_FIELD_CONNECT_FAMILY, IOUR_CMP_EQ, AF_INET6, 0);
		expect(mix, CONNECT, v6("::ffff:127.0.0.1", 80), 0, "allow AF_INET6, mapped");
		expect(mix, CONNECT, v6("::ffff:10.1.2.3", 80), 1, "allow AF_INET6, mapped 10/8");
		expect(mix, CONNECT, v6("::1", 80), 1, "allow AF_INET6, v6");
		expect(mix, CONNECT, v4("127.0.0.1", 80), 0, "allow AF_INET6, v4");
		cr_assert_eq(iour_filter__add_rule(any6, CONNECT, IOUR_ALLOW, &c, 1), 0);
		expect(any6, CONNECT, v6("::ffff:127.0.0.1", 80), 0, "allow ::/0, mapped");
		expect(any6, CONNECT, v6("2001:db8::1", 80), 1, "allow ::/0, v6");
		iour_filter__free(mix);
		iour_filter__free(any6);
	}
	/* the opt-out: literal families */
	rule(lit, CONNECT, IOUR_DENY, IOUR_FIELD_CONNECT_ADDR4, IOUR_CMP_IN_PREFIX,
	     IOUR_IPV4(10, 0, 0, 0), 8);
	expect(lit, CONNECT, v4("10.0.0.1", 80), 0, "literal, v4");
	expect(lit, CONNECT, v6("::ffff:10.0.0.1", 80), 1, "literal, mapped");
	{
		struct iour_filter *copy;

		cr_assert_eq(iour_filter__dup(lit, &copy), 0);
		expect(copy, CONNECT, v6("::ffff:10.0.0.1", 80), 1, "a copy stays literal");
		iour_filter__free(copy);
	}
	iour_filter__free(deny);
	iour_filter__free(fam);
	iour_filter__free(famonly);
	iour_filter__free(v6rule);
	iour_filter__free(only);
	iour_filter__free(lit);
}

Test(filter_liburing, connect_ports)
{
	struct iour_filter *deny = filt(IOUR_ALLOW), *only = filt(IOUR_DENY);

	rule(deny, CONNECT, IOUR_DENY, IOUR_FIELD_CONNECT_PORT, IOUR_CMP_EQ, 22, 0);
	expect(deny, CONNECT, v4("127.0.0.1", 22), 0, "deny port 22 (v4)");
	expect(deny, CONNECT, v6("::1", 22), 0, "deny port 22 (v6)");
	expect(deny, CONNECT, v4("127.0.0.1", 80), 1, "port 80");
	expect(deny, CONNECT, v4("127.0.0.1", 22 << 8), 1, "byte-swapped 22");
	rule(only, CONNECT, IOUR_ALLOW, IOUR_FIELD_CONNECT_PORT, IOUR_CMP_EQ, 80, 0);
	expect(only, CONNECT, v4("127.0.0.1", 80), 1, "allow only port 80");
	expect(only, CONNECT, v4("127.0.0.1", 81), 0, "port 81");
	expect(only, CONNECT, v6("::1", 80), 1, "port 80 (v6)");
	iour_filter__free(deny);
	iour_filter__free(only);
}

Test(filter_liburing, connect_ipv6_addresses)
{
	struct iour_filter *deny = filt(IOUR_ALLOW), *only = filt(IOUR_DENY);

	rule6(deny, IOUR_DENY, IOUR_CMP_EQ, "2001:db8::dead", 0);
	expect(deny, CONNECT, v6("2001:db8::dead", 80), 0, "deny 2001:db8::dead");
	expect(deny, CONNECT, v6("2001:db8::beef", 80), 1, "2001:db8::beef");
	expect(deny, CONNECT, v4("127.0.0.1", 80), 1, "v4");
	rule6(only, IOUR_ALLOW, IOUR_CMP_EQ, "::1", 0);
	expect(only, CONNECT, v6("::1", 80), 1, "allow only ::1");
	expect(only, CONNECT, v6("::2", 80), 0, "::2");
	expect(only, CONNECT, v6("1::1", 80), 0, "1::1");
	expect(only, CONNECT, v4("0.0.0.1", 80), 0, "v4");
	iour_filter__free(deny);
	iour_filter__free(only);
}

Test(filter_liburing, connect_subnets)
{
	struct iour_filter *d24 = filt(IOUR_ALLOW), *a24 = filt(IOUR_DENY);
	struct iour_filter *d32 = filt(IOUR_ALLOW), *a16 = filt(IOUR_DENY);

	rule(d24, CONNECT, IOUR_DENY, IOUR_FIELD_CONNECT_ADDR4, IOUR_CMP_IN_PREFIX,
	     IOUR_IPV4(192, 168, 1, 0), 24);
	expect(d24, CONNECT, v4("192.168.1.1", 80), 0, "v4 /24 deny: inside");
	expect(d24, CONNECT, v4("192.168.1.255", 80), 0, "v4 /24 deny: broadcast");
	expect(d24, CONNECT, v4("192.168.2.1", 80), 1, "v4 /24 deny: outside");
	rule(a24, CONNECT, IOUR_ALLOW, IOUR_FIELD_CONNECT_ADDR4, IOUR_CMP_IN_PREFIX,
	     IOUR_IPV4(127, 0, 0, 0), 24);
	expect(a24, CONNECT, v4("127.0.0.1", 80), 1, "v4 /24 allow: inside");
	expect(a24, CONNECT, v4("127.0.1.1", 80), 0, "v4 /24 allow: outside");
	expect(a24, CONNECT, v6("::1", 80), 0, "v4 /24 allow: v6");
	rule6(d32, IOUR_DENY, IOUR_CMP_IN_PREFIX, "2001:db8::", 32);
	expect(d32, CONNECT, v6("2001:db8:1::1", 80), 0, "v6 /32 deny: inside");
	expect(d32, CONNECT, v6("2001:db9::1", 80), 1, "v6 /32 deny: outside");
	rule6(a16, IOUR_ALLOW, IOUR_CMP_IN_PREFIX, "fe80::", 16);
	expect(a16, CONNECT, v6("fe80::1", 80), 1, "fe80::/16 allow: inside");
	expect(a16, CONNECT, v6("fe80:ffff::1", 80), 1, "fe80::/16 allow: inside, far");
	expect(a16, CONNECT, v6("fe81::1", 80), 0, "fe80::/16 allow: outside");
	expect(a16, CONNECT, v6("::1", 80), 0, "fe80::/16 allow: loopback");
	iour_filter__free(d24);
	iour_filter__free(a24);
	iour_filter__free(d32);
	iour_filter__free(a16);
}

Test(filter_liburing, connect_stale_addr_len)
{
	struct iour_filter *f = filt(IOUR_ALLOW);
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(80),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct ctx c;

	rule(f, CONNECT, IOUR_DENY, IOUR_FIELD_CONNECT_FAMILY, IOUR_CMP_EQ, AF_INET, 0);
	expect(f, CONNECT, v4("127.0.0.1", 80), 0, "AF_INET denied");
	/* addr_len 1: the kernel fills no family at all, so the filter sees
	 * 0 and lets the request through to the network code's -EINVAL */
	cr_assert_eq(iour_ctx_generic(c.b, 40, CONNECT, 0, 1), 0);
	cr_assert_eq(iour_ctx_connect(c.b, 40, &sa, 1), 0);
	expect(f, CONNECT, c, 1, "stale addr_len: family 0 passes");
	iour_filter__free(f);
}

/* Does the program load a context word at `off`? */
static bool prog_loads(struct iour_filter *f, uint32_t off)
{
	struct iour_prog *p;
	bool found = false;

	cr_assert_eq(iour_filter__compile(f, CONNECT, NULL, &p), 0);
	for (size_t i = 0; i < iour_prog__insn_cnt(p); i++)
		if (iour_prog__insns(p)[i].code == 0x20 /* ld [k] */ &&
		    iour_prog__insns(p)[i].k == off)
			found = true;
	iour_prog__free(p);
	return found;
}

static size_t prog_len(struct iour_filter *f)
{
	struct iour_prog *p;
	size_t n;

	cr_assert_eq(iour_filter__compile(f, CONNECT, NULL, &p), 0);
	n = iour_prog__insn_cnt(p);
	iour_prog__free(p);
	return n;
}

/* A rule that no reading of an IPv4-mapped request can satisfy, or that
 * every reading decides alike, gets no mapped-address check (filter_lower.c,
 * compile_mapped()); one whose readings differ keeps it.  Verdicts through
 * the simulator and the kernel's engine (expect()). */
Test(filter_liburing, connect_mapped_check_only_where_it_decides)
{
	struct iour_filter *unix_deny = filt(IOUR_ALLOW), *two = filt(IOUR_ALLOW);
	struct iour_filter *inet_allow = filt(IOUR_DENY), *inet_deny = filt(IOUR_ALLOW);

	/* deny family == AF_UNIX: a mapped request is AF_INET6 or AF_INET,
	 * never AF_UNIX: ld, jeq, ret (doc/design.md) */
	rule(unix_deny, CONNECT, IOUR_DENY, IOUR_FIELD_CONNECT_FAMILY, IOUR_CMP_EQ, AF_UNIX, 0);
	cr_expect_eq(prog_len(unix_deny), 4, "ld, jeq, ret, ret");
	cr_expect_not(prog_loads(unix_deny, IOUR_CTX_OFF_CONNECT_ADDR + 8),
		      "no test of the ::ffff: word");
	expect(unix_deny, CONNECT, unix_addr(), 0, "AF_UNIX denied");
	expect(unix_deny, CONNECT, v4("10.0.0.1", 80), 1, "AF_INET allowed");
	expect(unix_deny, CONNECT, v6("::ffff:10.0.0.1", 80), 1, "mapped allowed");
	expect(unix_deny, CONNECT, v6("::1", 80), 1, "AF_INET6 allowed");
	/* and with a port rule after it: still no check */
	rule(two, CONNECT, IOUR_DENY, IOUR_FIELD_CONNECT_FAMILY, IOUR_CMP_EQ, AF_UNIX, 0);
	rule(two, CONNECT, IOUR_DENY, IOUR_FIELD_CONNECT_PORT, IOUR_CMP_EQ, 22, 0);
	cr_expect_not(prog_loads(two, IOUR_CTX_OFF_CONNECT_ADDR + 8));
	expect(two, CONNECT, v6("::ffff:10.0.0.1", 22), 0, "mapped, port 22");
	expect(two, CONNECT, v6("::ffff:10.0.0.1", 23), 1, "mapped, port 23");
	expect(two, CONNECT, unix_addr(), 0, "AF_UNIX");
	/* allow family == AF_INET: a mapped request is read as AF_INET, the
	 * plain one as AF_INET6: the check decides */
	rule(inet_allow, CONNECT, IOUR_ALLOW, IOUR_FIELD_CONNECT_FAMILY, IOUR_CMP_EQ, AF_INET, 0);
	cr_expect(prog_loads(inet_allow, IOUR_CTX_OFF_CONNECT_ADDR + 8), "the check is kept");
	expect(inet_allow, CONNECT, v6("::ffff:10.0.0.1", 80), 1, "mapped allowed as AF_INET");
	expect(inet_allow, CONNECT, v6("::fffe:10.0.0.1", 80), 0, "not mapped: AF_INET6");
	expect(inet_allow, CONNECT, v6("::1", 80), 0, "AF_INET6 denied");
	/* deny family == AF_INET: likewise */
	rule(inet_deny, CONNECT, IOUR_DENY, IOUR_FIELD_CONNECT_FAMILY, IOUR_CMP_EQ, AF_INET, 0);
	cr_expect(prog_loads(inet_deny, IOUR_CTX_OFF_CONNECT_ADDR + 8));
	expect(inet_deny, CONNECT, v6("::ffff:10.0.0.1", 80), 0, "mapped denied");
	expect(inet_deny, CONNECT, v6("1::ffff:10.0.0.1", 80), 1, "not mapped");
	iour_filter__free(unix_deny);
	iour_filter__free(two);
	iour_filter__free(inet_allow);
	iour_filter__free(inet_deny);
}
