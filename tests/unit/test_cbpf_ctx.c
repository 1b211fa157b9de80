/* SPDX-License-Identifier: MIT */
/*
 * Context builders, against the filling rules of the kernel (no 7.x kernel
 * is available to compare with, so the expectations are written from the
 * documented rules: generic fields, pdu sizes, SOCKET, OPENAT/OPENAT2 with
 * build_open_how() and O_LARGEFILE, CONNECT by addr_len).
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "cbpf/cbpf_internal.h"
#include "iouring_restrict/iouring_restrict.h"

#if defined(__x86_64__)
#define LARGEFILE 0x8000ULL
#elif defined(__aarch64__)
#define LARGEFILE 0x20000ULL
#endif

static uint32_t rd32(const uint8_t *c, size_t off)
{
	uint32_t v;

	memcpy(&v, c + off, 4);
	return v;
}

static uint64_t rd64(const uint8_t *c, size_t off)
{
	uint64_t v;

	memcpy(&v, c + off, 8);
	return v;
}

static bool zero(const uint8_t *c, size_t from, size_t to)
{
	for (; from < to; from++)
		if (c[from])
			return false;
	return true;
}

Test(cbpf_ctx, generic_fields_and_pdu_sizes)
{
	uint8_t ctx[40];
	uint32_t op;

	for (op = 0; op < 65; op++) {
		uint8_t want = op == 45 ? 12 : (op == 18 || op == 28 || op == 16) ? 24 : 0;

		memset(ctx, 0xaa, sizeof(ctx));
		cr_assert_eq(iour_ctx_generic(ctx, 40, op, 0x7f, 0x0102030405060708ULL), 0);
		cr_assert_eq(rd64(ctx, IOUR_CTX_OFF_USER_DATA), 0x0102030405060708ULL);
		cr_assert_eq(ctx[IOUR_CTX_OFF_OPCODE], op);
		cr_assert_eq(ctx[IOUR_CTX_OFF_SQE_FLAGS], 0x7f);
		cr_assert_eq(ctx[IOUR_CTX_OFF_PDU_SIZE], want, "opcode %u", op);
		cr_assert(zero(ctx, 11, 40), "pad and payload must be zero");
	}
}

Test(cbpf_ctx, generic_bad_input)
{
	uint8_t ctx[41];

	memset(ctx, 0x55, sizeof(ctx));
	cr_assert_eq(iour_ctx_generic(NULL, 40, 0, 0, 0), -EINVAL);
	cr_assert_eq(iour_ctx_generic(ctx, 39, 0, 0, 0), -EINVAL);
	cr_assert_eq(iour_ctx_generic(ctx, 41, 0, 0, 0), -EINVAL);
	cr_assert_eq(iour_ctx_generic(ctx, 40, 65, 0, 0), -EINVAL);
	cr_assert_eq(iour_ctx_generic(ctx, 40, UINT32_MAX, 0, 0), -EINVAL);
	cr_assert_eq(iour_ctx_generic(ctx, 40, 0, 0x80, 0), -EINVAL);
	cr_assert_eq(iour_ctx_generic(ctx, 40, 0, 0x100, 0), -EINVAL);
	/* Nothing written on failure. */
	for (size_t i = 0; i < sizeof(ctx); i++)
		cr_assert_eq(ctx[i], 0x55);
}

Test(cbpf_ctx, socket)
{
	uint8_t ctx[40];

	cr_assert_eq(iour_ctx_generic(ctx, 40, 45, 0, 7), 0);
	memset(ctx + 16, 0xee, 24); /* stale payload is cleared */
	cr_assert_eq(iour_ctx_socket(ctx, 40, AF_INET6, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
				     IPPROTO_TCP), 0);
	cr_assert_eq(rd32(ctx, IOUR_CTX_OFF_SOCKET_FAMILY), AF_INET6);
	cr_assert_eq(rd32(ctx, IOUR_CTX_OFF_SOCKET_TYPE),
		     SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC);
	cr_assert_eq(rd32(ctx, IOUR_CTX_OFF_SOCKET_PROTOCOL), IPPROTO_TCP);
	cr_assert(zero(ctx, 28, 40));
	cr_assert_eq(rd64(ctx, 0), 7);
	cr_assert_eq(ctx[IOUR_CTX_OFF_PDU_SIZE], 12);
}

Test(cbpf_ctx, payload_builders_need_matching_context)
{
	uint8_t ctx[40], copy[40];
	struct sockaddr_in sin = { .sin_family = AF_INET };

	cr_assert_eq(iour_ctx_generic(ctx, 40, 0, 0, 0), 0);
	memcpy(copy, ctx, 40);
	cr_assert_eq(iour_ctx_socket(ctx, 40, 2, 1, 0), -EINVAL);
	cr_assert_eq(iour_ctx_open(ctx, 40, 0, 0, 0), -EINVAL);
	cr_assert_eq(iour_ctx_connect(ctx, 40, &sin, sizeof(sin)), -EINVAL);
	cr_assert_eq(memcmp(ctx, copy, 40), 0);

	cr_assert_eq(iour_ctx_generic(ctx, 40, 18, 0, 0), 0);
	cr_assert_eq(iour_ctx_socket(ctx, 40, 2, 1, 0), -EINVAL);
	cr_assert_eq(iour_ctx_connect(ctx, 40, &sin, sizeof(sin)), -EINVAL);
	cr_assert_eq(iour_ctx_generic(ctx, 40, 45, 0, 0), 0);
	cr_assert_eq(iour_ctx_open(ctx, 40, 0, 0, 0), -EINVAL);
	/* A context whose pdu_size byte was not set by the generic builder. */
	ctx[IOUR_CTX_OFF_PDU_SIZE] = 0;
	cr_assert_eq(iour_ctx_socket(ctx, 40, 2, 1, 0), -EINVAL);
	ctx[IOUR_CTX_OFF_PDU_SIZE] = 12;
	cr_assert_eq(iour_ctx_socket(ctx, 40, 2, 1, 0), 0);

	cr_assert_eq(iour_ctx_socket(NULL, 40, 2, 1, 0), -EINVAL);
	cr_assert_eq(iour_ctx_socket(ctx, 39, 2, 1, 0), -EINVAL);
	cr_assert_eq(iour_ctx_open(NULL, 40, 0, 0, 0), -EINVAL);
	cr_assert_eq(iour_ctx_open(ctx, 0, 0, 0, 0), -EINVAL);
	cr_assert_eq(iour_ctx_connect(NULL, 40, &sin, sizeof(sin)), -EINVAL);
	cr_assert_eq(iour_ctx_connect(ctx, 41, &sin, sizeof(sin)), -EINVAL);
}

#ifdef LARGEFILE
Test(cbpf_ctx, openat_builds_open_how)
{
	uint8_t ctx[40];

	cr_assert_eq(iour_ctx_generic(ctx, 40, 18, 0, 0), 0);
	/* Plain open: O_LARGEFILE added, mode dropped (not creating). */
	cr_assert_eq(iour_ctx_open(ctx, 40, O_RDONLY, 0644, 0), 0);
	cr_assert_eq(rd64(ctx, IOUR_CTX_OFF_OPEN_FLAGS), LARGEFILE);
	cr_assert_eq(rd64(ctx, IOUR_CTX_OFF_OPEN_MODE), 0);
	cr_assert_eq(rd64(ctx, IOUR_CTX_OFF_OPEN_RESOLVE), 0);
	/* O_CREAT keeps the mode, masked to 07777. */
	cr_assert_eq(iour_ctx_open(ctx, 40, O_WRONLY | O_CREAT | O_TRUNC, 0170644, 0), 0);
	cr_assert_eq(rd64(ctx, IOUR_CTX_OFF_OPEN_FLAGS),
		     (uint64_t)(O_WRONLY | O_CREAT | O_TRUNC) | LARGEFILE);
	cr_assert_eq(rd64(ctx, IOUR_CTX_OFF_OPEN_MODE), 0644);
	/* O_TMPFILE also keeps the mode. */
	cr_assert_eq(iour_ctx_open(ctx, 40, O_TMPFILE | O_RDWR, 0600, 0), 0);
	cr_assert_eq(rd64(ctx, IOUR_CTX_OFF_OPEN_MODE), 0600);
	/* umode_t truncation: the SQE's 32-bit len is cut to 16 bits. */
	cr_assert_eq(iour_ctx_open(ctx, 40, O_CREAT, 0x10000 | 0755, 0), 0);
	cr_assert_eq(rd64(ctx, IOUR_CTX_OFF_OPEN_MODE), 0755);
	/* O_PATH keeps only its companions and gets no O_LARGEFILE. */
	cr_assert_eq(iour_ctx_open(ctx, 40, O_PATH | O_CLOEXEC | O_NOFOLLOW | O_CREAT | O_RDWR, 0644,
				   0), 0);
	cr_assert_eq(rd64(ctx, IOUR_CTX_OFF_OPEN_FLAGS), (uint64_t)(O_PATH | O_CLOEXEC | O_NOFOLLOW));
	cr_assert_eq(rd64(ctx, IOUR_CTX_OFF_OPEN_MODE), 0);
	/* Unknown flag bits are masked away (VALID_OPEN_FLAGS). */
	cr_assert_eq(iour_ctx_open(ctx, 40, 0x80000000U | O_RDONLY, 0, 0), 0);
	cr_assert_eq(rd64(ctx, IOUR_CTX_OFF_OPEN_FLAGS), LARGEFILE);
	/* The kernel's own O_LARGEFILE passed in stays. */
	cr_assert_eq(iour_ctx_open(ctx, 40, LARGEFILE | O_RDONLY, 0, 0), 0);
	cr_assert_eq(rd64(ctx, IOUR_CTX_OFF_OPEN_FLAGS), LARGEFILE);
	/* O_ACCMODE 3 survives. */
	cr_assert_eq(iour_ctx_open(ctx, 40, 3, 0, 0), 0);
	cr_assert_eq(rd64(ctx, IOUR_CTX_OFF_OPEN_FLAGS), 3 | LARGEFILE);
	cr_assert(zero(ctx, 11, 16));
}

Test(cbpf_ctx, openat2_takes_open_how_unchanged)
{
	uint8_t ctx[40];

	cr_assert_eq(iour_ctx_generic(ctx, 40, 28, 0, 0), 0);
	cr_assert_eq(iour_ctx_open(ctx, 40, O_RDONLY, 0644, 0x10), 0);
	cr_assert_eq(rd64(ctx, IOUR_CTX_OFF_OPEN_FLAGS), LARGEFILE);
	cr_assert_eq(rd64(ctx, IOUR_CTX_OFF_OPEN_MODE), 0644); /* not dropped */
	cr_assert_eq(rd64(ctx, IOUR_CTX_OFF_OPEN_RESOLVE), 0x10);
	cr_assert_eq(iour_ctx_open(ctx, 40, 0x100000000ULL | O_PATH | O_RDWR, 0xfffff, ~0ULL), 0);
	cr_assert_eq(rd64(ctx, IOUR_CTX_OFF_OPEN_FLAGS), 0x100000000ULL | O_PATH | O_RDWR);
	cr_assert_eq(rd64(ctx, IOUR_CTX_OFF_OPEN_MODE), 0xfffff);
	cr_assert_eq(rd64(ctx, IOUR_CTX_OFF_OPEN_RESOLVE), ~0ULL);
}
#endif

Test(cbpf_ctx, openat_bad_input)
{
	uint8_t ctx[40], copy[40];

	cr_assert_eq(iour_ctx_generic(ctx, 40, 18, 0, 0), 0);
	memcpy(copy, ctx, 40);
	cr_assert_eq(iour_ctx_open(ctx, 40, 0x100000000ULL, 0, 0), -EINVAL);
	cr_assert_eq(iour_ctx_open(ctx, 40, 0, 0x100000000ULL, 0), -EINVAL);
	cr_assert_eq(iour_ctx_open(ctx, 40, 0, 0, 1), -EINVAL);
	cr_assert_eq(memcmp(ctx, copy, 40), 0);
}

Test(cbpf_ctx, connect_by_addr_len)
{
	uint8_t ctx[40];
	struct sockaddr_in s4 = { .sin_family = AF_INET, .sin_port = htons(8080) };
	struct sockaddr_in6 s6 = { .sin6_family = AF_INET6, .sin6_port = htons(443) };
	struct sockaddr_un su = { .sun_family = AF_UNIX };
	uint8_t raw[2];
	uint32_t len;

	s4.sin_addr.s_addr = htonl(0x7f000001);
	inet_pton(AF_INET6, "2001:db8::dead", &s6.sin6_addr);
	cr_assert_eq(iour_ctx_generic(ctx, 40, 16, 0, 0), 0);

	for (len = 0; len <= sizeof(s4); len++) {
		memset(ctx + 16, 0xee, 24);
		cr_assert_eq(iour_ctx_connect(ctx, 40, &s4, len), 0);
		cr_assert_eq(rd32(ctx, IOUR_CTX_OFF_CONNECT_FAMILY), len >= 2 ? AF_INET : 0);
		if (len >= sizeof(s4)) {
			cr_assert_eq(memcmp(ctx + 20, &s4.sin_port, 2), 0);
			cr_assert_eq(memcmp(ctx + 24, &s4.sin_addr, 4), 0);
			cr_assert_eq(ctx[20], 0x1f); /* 8080 = 0x1f90, network order */
			cr_assert_eq(ctx[21], 0x90);
			cr_assert_eq(ctx[24], 127);
			cr_assert(zero(ctx, 22, 24));
			cr_assert(zero(ctx, 28, 40));
		} else {
			cr_assert(zero(ctx, 20, 40), "len %u", len);
		}
	}
	for (len = 0; len <= sizeof(s6); len++) {
		cr_assert_eq(iour_ctx_connect(ctx, 40, &s6, len), 0);
		cr_assert_eq(rd32(ctx, IOUR_CTX_OFF_CONNECT_FAMILY), len >= 2 ? AF_INET6 : 0);
		/* 24 (SIN6_LEN_RFC2133), not sizeof(s6) == 28: the kernel
		 * (7.2.13, 7.3.4) fills port and address from a sockaddr_in6
		 * without sin6_scope_id (doc/kernel.md 4.3) */
		if (len >= 24) {
			cr_assert_eq(ctx[20], 0x01);
			cr_assert_eq(ctx[21], 0xbb);
			cr_assert_eq(memcmp(ctx + 24, &s6.sin6_addr, 16), 0);
			cr_assert_eq(ctx[24], 0x20);
			cr_assert_eq(ctx[39], 0xad);
		} else {
			cr_assert(zero(ctx, 20, 40), "len %u", len);
		}
	}
	/* Other families fill only the family. */
	cr_assert_eq(iour_ctx_connect(ctx, 40, &su, sizeof(su)), 0);
	cr_assert_eq(rd32(ctx, IOUR_CTX_OFF_CONNECT_FAMILY), AF_UNIX);
	cr_assert(zero(ctx, 20, 40));
	/* The family is the native u16, zero-extended. */
	memset(raw, 0xff, 2);
	cr_assert_eq(iour_ctx_connect(ctx, 40, raw, 2), 0);
	cr_assert_eq(rd32(ctx, IOUR_CTX_OFF_CONNECT_FAMILY), 0xffff);
	/* No address at all. */
	cr_assert_eq(iour_ctx_connect(ctx, 40, NULL, 0), 0);
	cr_assert(zero(ctx, 16, 40));
}

Test(cbpf_ctx, connect_bad_input)
{
	uint8_t ctx[40], copy[40];
	uint8_t big[129] = { AF_INET };

	cr_assert_eq(iour_ctx_generic(ctx, 40, 16, 0, 0), 0);
	memcpy(copy, ctx, 40);
	cr_assert_eq(iour_ctx_connect(ctx, 40, NULL, 1), -EINVAL);
	cr_assert_eq(iour_ctx_connect(ctx, 40, big, 129), -EINVAL);
	cr_assert_eq(memcmp(ctx, copy, 40), 0);
	cr_assert_eq(iour_ctx_connect(ctx, 40, big, 128), 0);
}

/* The builders feed the simulator: a SOCKET filter as liburing's test
 * writes it (family at 16, type & 0xf at 20). */
Test(cbpf_ctx, feeds_the_simulator)
{
	struct iour_insn p[] = {
		{ .code = KBPF_LD | KBPF_W | KBPF_ABS, .k = 20 },
		{ .code = KBPF_ALU | KBPF_AND | KBPF_K, .k = 0xf },
		{ .code = KBPF_JMP | KBPF_JEQ | KBPF_K, .jt = 0, .jf = 1, .k = SOCK_STREAM },
		{ .code = KBPF_RET | KBPF_K, .k = 1 },
		{ .code = KBPF_RET | KBPF_K, .k = 0 },
	};
	struct iour_sim_result res = { .sz = sizeof(res) };
	uint8_t ctx[40];

	iour_ctx_generic(ctx, 40, 45, 0, 0);
	iour_ctx_socket(ctx, 40, AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	cr_assert_eq(iour_cbpf_run(p, 5, ctx, 40, &res), 0);
	cr_assert_eq(res.allowed, 1);
	iour_ctx_socket(ctx, 40, AF_INET, SOCK_DGRAM, 0);
	cr_assert_eq(iour_cbpf_run(p, 5, ctx, 40, &res), 0);
	cr_assert_eq(res.allowed, 0);
}
