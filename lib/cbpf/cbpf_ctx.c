/* SPDX-License-Identifier: MIT */
/*
 * Builders of the 40-byte io_uring filter context (struct io_uring_bpf_ctx),
 * filled the way the kernel fills it after a request's prep; see
 * include/iouring_restrict/cbpf.h for each rule and why.
 */
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "cbpf_internal.h"
#include "iouring_restrict/filter.h"
#include "base/schema.h"

/* force_o_largefile(): true on every 64-bit kernel. */
#if UINTPTR_MAX > 0xffffffffU
#define KIO_FORCE_LARGEFILE 1
#else
#define KIO_FORCE_LARGEFILE 0
#endif

#ifndef O_TMPFILE
#error "O_TMPFILE missing from <fcntl.h>"
#endif
/* The __O_TMPFILE bit (O_TMPFILE without O_DIRECTORY). */
#define KIO_O_TMPFILE_BIT ((uint64_t)(O_TMPFILE & ~O_DIRECTORY))

/* The kernel's VALID_OPEN_FLAGS (include/linux/fcntl.h). */
#define KIO_VALID_OPEN_FLAGS                                                                       \
	((uint64_t)(O_ACCMODE | O_CREAT | O_EXCL | O_NOCTTY | O_TRUNC | O_APPEND | O_NONBLOCK |    \
		    O_SYNC | O_DSYNC | O_ASYNC | O_DIRECT | O_DIRECTORY | O_NOFOLLOW | O_NOATIME | \
		    O_CLOEXEC | O_PATH | O_TMPFILE) |                                              \
	 KIO_O_LARGEFILE)
/* What O_PATH keeps (fs/open.c O_PATH_FLAGS). */
#define KIO_O_PATH_FLAGS ((uint64_t)(O_DIRECTORY | O_NOFOLLOW | O_PATH | O_CLOEXEC))
/* S_IALLUGO: the permission and set-id bits. */
#define KIO_S_IALLUGO 07777ULL

/* The largest address the kernel copies in (sizeof(struct sockaddr_storage)). */
#define KIO_SOCKADDR_STORAGE 128U
/* The length of a struct sockaddr_in6 without sin6_scope_id (RFC 2133):
 * what the kernel's CONNECT payload needs to fill port and address
 * (doc/kernel.md 4.3), not the 28 bytes of today's struct. */
#define KIO_SIN6_LEN_RFC2133 24U

/* The payload sizes and where each field sits: lib/base/schema.def. */
uint8_t iour__ctx_pdu_size(uint32_t opcode)
{
	const struct iour__schema_payload *pl = iour__schema_payload_of(opcode);

	return pl ? (uint8_t)pl->pdu_size : 0;
}

void iour__ctx_put(uint8_t *ctx, uint32_t field, uint64_t v)
{
	const struct iour__schema_field *f = iour__schema_field_of(field);
	uint32_t v32 = (uint32_t)v;
	uint16_t v16 = (uint16_t)v;

	if (!f)
		return;
	switch (f->bytes) {
	case 1:
		ctx[f->off] = (uint8_t)v;
		break;
	case 2:
		memcpy(ctx + f->off, &v16, sizeof(v16));
		break;
	case 4:
		memcpy(ctx + f->off, &v32, sizeof(v32));
		break;
	case 8:
		memcpy(ctx + f->off, &v, sizeof(v));
		break;
	default:
		break;
	}
}

/* A network-order field's bytes, copied as they are. */
static void copy_field(uint8_t *ctx, uint32_t field, const uint8_t *src)
{
	const struct iour__schema_field *f = iour__schema_field_of(field);

	if (f)
		memcpy(ctx + f->off, src, f->bytes);
}

/* Documented in include/iouring_restrict/cbpf.h */
int iour_ctx_generic(uint8_t *ctx, size_t len, uint32_t opcode, uint32_t sqe_flags,
		     uint64_t user_data)
{
	if (!ctx || len != IOUR_CTX_SIZE || opcode >= KIO_OP_LAST_NEWEST ||
	    (sqe_flags & ~KIO_SQE_VALID_FLAGS))
		return -EINVAL;
	memset(ctx, 0, IOUR_CTX_SIZE);
	iour__ctx_put(ctx, IOUR_FIELD_USER_DATA, user_data);
	ctx[IOUR_CTX_OFF_OPCODE] = (uint8_t)opcode;
	iour__ctx_put(ctx, IOUR_FIELD_SQE_FLAGS, sqe_flags);
	ctx[IOUR_CTX_OFF_PDU_SIZE] = iour__ctx_pdu_size(opcode);
	return 0;
}

/* A context iour_ctx_generic() made for an opcode whose payload holds the
 * group's fields; on success the payload is zeroed, as the kernel does
 * before filling it. */
static int payload_begin(uint8_t *ctx, size_t len, enum iour__schema_group group)
{
	const struct iour__schema_payload *pl;
	uint8_t op;

	if (!ctx || len != IOUR_CTX_SIZE)
		return -EINVAL;
	op = ctx[IOUR_CTX_OFF_OPCODE];
	pl = iour__schema_payload_of(op);
	if (!pl || pl->group != group || ctx[IOUR_CTX_OFF_PDU_SIZE] != iour__ctx_pdu_size(op))
		return -EINVAL;
	memset(ctx + IOUR_CTX_OFF_PDU, 0, IOUR_CTX_SIZE - IOUR_CTX_OFF_PDU);
	return 0;
}

/* Documented in include/iouring_restrict/cbpf.h */
int iour_ctx_socket(uint8_t *ctx, size_t len, uint32_t family, uint32_t type, uint32_t protocol)
{
	int rc = payload_begin(ctx, len, IOUR__SG_SOCKET);

	if (rc)
		return rc;
	iour__ctx_put(ctx, IOUR_FIELD_SOCKET_FAMILY, family);
	iour__ctx_put(ctx, IOUR_FIELD_SOCKET_TYPE_RAW, type);
	iour__ctx_put(ctx, IOUR_FIELD_SOCKET_PROTOCOL, protocol);
	return 0;
}

/* Documented in include/iouring_restrict/cbpf.h */
int iour_ctx_open(uint8_t *ctx, size_t len, uint64_t flags, uint64_t mode, uint64_t resolve)
{
	int rc;

	if (!ctx || len != IOUR_CTX_SIZE)
		return -EINVAL;
	if (ctx[IOUR_CTX_OFF_OPCODE] == IOUR_OP_OPENAT) {
		/* The SQE holds 32-bit flags and mode and no resolve field. */
		if (flags > UINT32_MAX || mode > UINT32_MAX || resolve != 0)
			return -EINVAL;
		/* build_open_how(): flags (an int) masked to the valid open
		 * flags, O_PATH keeps only its companions; mode (a umode_t)
		 * masked to S_IALLUGO and dropped unless creating. */
		flags &= KIO_VALID_OPEN_FLAGS;
		if (flags & O_PATH)
			flags &= KIO_O_PATH_FLAGS;
		mode &= KIO_S_IALLUGO;
		if (!(flags & ((uint64_t)O_CREAT | KIO_O_TMPFILE_BIT)))
			mode = 0;
	}
	/* OPENAT2 takes struct open_how from the caller unchanged (its
	 * checks run at issue time, after the filter). */
	rc = payload_begin(ctx, len, IOUR__SG_OPEN);
	if (rc)
		return rc;
	/* __io_openat_prep(): O_LARGEFILE added unless O_PATH. */
	if (KIO_FORCE_LARGEFILE && !(flags & O_PATH))
		flags |= KIO_O_LARGEFILE;
	iour__ctx_put(ctx, IOUR_FIELD_OPEN_FLAGS, flags);
	iour__ctx_put(ctx, IOUR_FIELD_OPEN_MODE, mode);
	iour__ctx_put(ctx, IOUR_FIELD_OPEN_RESOLVE, resolve);
	return 0;
}

/* Documented in include/iouring_restrict/cbpf.h */
int iour_ctx_connect(uint8_t *ctx, size_t len, const void *addr, uint32_t addr_len)
{
	const uint8_t *a = addr;
	uint16_t family;
	int rc;

	if ((!addr && addr_len > 0) || addr_len > KIO_SOCKADDR_STORAGE)
		return -EINVAL;
	rc = payload_begin(ctx, len, IOUR__SG_CONNECT);
	if (rc)
		return rc;
	if (addr_len < sizeof(sa_family_t))
		return 0;
	memcpy(&family, a, sizeof(family));
	iour__ctx_put(ctx, IOUR_FIELD_CONNECT_FAMILY, family);
	if (family == AF_INET && addr_len >= sizeof(struct sockaddr_in)) {
		copy_field(ctx, IOUR_FIELD_CONNECT_PORT,
			   a + offsetof(struct sockaddr_in, sin_port));
		copy_field(ctx, IOUR_FIELD_CONNECT_ADDR4,
			   a + offsetof(struct sockaddr_in, sin_addr));
	} else if (family == AF_INET6 && addr_len >= KIO_SIN6_LEN_RFC2133) {
		copy_field(ctx, IOUR_FIELD_CONNECT_PORT,
			   a + offsetof(struct sockaddr_in6, sin6_port));
		copy_field(ctx, IOUR_FIELD_CONNECT_ADDR6,
			   a + offsetof(struct sockaddr_in6, sin6_addr));
	}
	return 0;
}
