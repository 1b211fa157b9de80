/* SPDX-License-Identifier: MIT */
/*
 * The request schema (lib/base/schema.def) as arrays, and lookups over them.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <netinet/in.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "iouring_restrict/cbpf.h"
#include "iouring_restrict/filter.h"
#include "iouring_restrict/names.h"
#include "iouring_restrict/probe.h"
#include "iouring_restrict/schema.h"
#include "schema.h"
#include "uapi.h"

/*
 * The public context offsets (include/iouring_restrict/cbpf.h), which the
 * rows of schema.def name, are the kernel's layout (struct kio_bpf_ctx of
 * uapi.h; doc/kernel.md 4.3).
 */
_Static_assert(IOUR_CTX_SIZE == sizeof(struct kio_bpf_ctx), "IOUR_CTX_SIZE");
_Static_assert(IOUR_CTX_OFF_USER_DATA == offsetof(struct kio_bpf_ctx, user_data), "user_data");
_Static_assert(IOUR_CTX_OFF_OPCODE == offsetof(struct kio_bpf_ctx, opcode), "opcode");
_Static_assert(IOUR_CTX_OFF_SQE_FLAGS == offsetof(struct kio_bpf_ctx, sqe_flags), "sqe_flags");
_Static_assert(IOUR_CTX_OFF_PDU_SIZE == offsetof(struct kio_bpf_ctx, pdu_size), "pdu_size");
_Static_assert(IOUR_CTX_OFF_PDU == offsetof(struct kio_bpf_ctx, socket), "payload");
_Static_assert(IOUR_CTX_OFF_SOCKET_FAMILY == offsetof(struct kio_bpf_ctx, socket.family),
	       "socket.family");
_Static_assert(IOUR_CTX_OFF_SOCKET_TYPE == offsetof(struct kio_bpf_ctx, socket.type),
	       "socket.type");
_Static_assert(IOUR_CTX_OFF_SOCKET_PROTOCOL == offsetof(struct kio_bpf_ctx, socket.protocol),
	       "socket.protocol");
_Static_assert(IOUR_CTX_OFF_OPEN_FLAGS == offsetof(struct kio_bpf_ctx, open.flags), "open.flags");
_Static_assert(IOUR_CTX_OFF_OPEN_MODE == offsetof(struct kio_bpf_ctx, open.mode), "open.mode");
_Static_assert(IOUR_CTX_OFF_OPEN_RESOLVE == offsetof(struct kio_bpf_ctx, open.resolve),
	       "open.resolve");
_Static_assert(IOUR_CTX_OFF_CONNECT_FAMILY == offsetof(struct kio_bpf_ctx, connect.family),
	       "connect.family");
_Static_assert(IOUR_CTX_OFF_CONNECT_PORT == offsetof(struct kio_bpf_ctx, connect.port),
	       "connect.port");
_Static_assert(IOUR_CTX_OFF_CONNECT_ADDR == offsetof(struct kio_bpf_ctx, connect.v4_addr),
	       "connect.addr");

/*
 * Each field row's slot is where the kernel can put it: a size the
 * context's words hold, inside the context, the fields of every opcode in
 * the header and the others in the payload.
 */
/* clang-format off */
#define IOUR_SCHEMA_FIELD(name, id, group, kind, prefix, off, bytes, order, mask, valid, label) \
	_Static_assert(((bytes) == 1 || (bytes) == 2 || (bytes) == 4 || (bytes) == 8 ||        \
			(bytes) == 16) && (off) % ((bytes) < 4 ? (bytes) : 4) == 0 &&          \
		       (off) + (bytes) <= IOUR_CTX_SIZE &&                                     \
		       (IOUR__SG_##group == IOUR__SG_ANY ? (off) + (bytes) <= IOUR_CTX_OFF_PDU \
							 : (off) >= IOUR_CTX_OFF_PDU),         \
		       "the slot of " name);
#include "schema.def"
/* clang-format on */

#ifndef IOUR_SCHEMA_TEST_EXTRA
/*
 * Every public field id (enum iour_field, include/iouring_restrict/filter.h)
 * has exactly one row: -Wswitch (in -Wall, an error with -Werror) fails on
 * a member without a case, and a duplicate case does not compile.  Not in
 * the test build whose fictitious rows have ids of their own.  Never
 * called: the compiler's check is its purpose (unused, for clang).
 */
__attribute__((unused)) static inline bool field_id_has_row(enum iour_field id)
{
	switch (id) {
#define IOUR_SCHEMA_FIELD(name, id, group, kind, prefix, off, bytes, order, mask, valid, label) \
	case id:
#include "schema.def"
		return true;
	}
	return false;
}
#endif

static const struct iour__schema_payload payloads[] = {
#define IOUR_SCHEMA_PAYLOAD(op, group, pdu, level) { (op), IOUR__SG_##group, (pdu), (level) },
#include "schema.def"
};

/* clang-format off */
static const struct iour__schema_field fields[] = {
#define IOUR_SCHEMA_FIELD(name, id, group, kind, prefix, off, bytes, order, mask, valid, label) \
	{ (name), (prefix), (mask), (valid), (label), (id), IOUR__SG_##group,                     \
	  IOUR__SK_##kind, (off), (bytes), IOUR__SO_##order },
#include "schema.def"
};
/* clang-format on */

static const struct iour__schema_const consts[] = {
#define IOUR_SCHEMA_CONST(name, value, since) { (name), (uint64_t)(value), (since) },
#include "schema.def"
};

static const char *const group_names[] = {
#define IOUR_SCHEMA_GROUP(group, name) [IOUR__SG_##group] = (name),
#include "schema.def"
};

const struct iour__schema_payload *iour__schema_payload_at(size_t i)
{
	return i < IOUR_ARRAY_SIZE(payloads) ? &payloads[i] : NULL;
}

const struct iour__schema_field *iour__schema_field_at(size_t i)
{
	return i < IOUR_ARRAY_SIZE(fields) ? &fields[i] : NULL;
}

const struct iour__schema_const *iour__schema_const_at(size_t i)
{
	return i < IOUR_ARRAY_SIZE(consts) ? &consts[i] : NULL;
}

const char *iour__schema_group_name(enum iour__schema_group g)
{
	return (size_t)g < IOUR_ARRAY_SIZE(group_names) ? group_names[g] : NULL;
}

const char *iour__schema_const_ns(const char *name)
{
	const char *best = NULL;
	size_t i, n, bn = 0;

	for (i = 0; name && i < IOUR_ARRAY_SIZE(fields); i++) {
		if (!fields[i].prefix)
			continue;
		n = strlen(fields[i].prefix);
		if (n > bn && !strncmp(name, fields[i].prefix, n)) {
			best = fields[i].prefix;
			bn = n;
		}
	}
	return best;
}

const struct iour__schema_payload *iour__schema_payload_of(uint32_t opcode)
{
	size_t i;

	for (i = 0; i < IOUR_ARRAY_SIZE(payloads); i++)
		if (payloads[i].opcode == opcode)
			return &payloads[i];
	return NULL;
}

const struct iour__schema_field *iour__schema_field_of(uint32_t id)
{
	size_t i;

	for (i = 0; i < IOUR_ARRAY_SIZE(fields); i++)
		if (fields[i].id == id)
			return &fields[i];
	return NULL;
}

const struct iour__schema_field *iour__schema_field_named(const char *name)
{
	size_t i;

	for (i = 0; name && i < IOUR_ARRAY_SIZE(fields); i++)
		if (!strcmp(fields[i].name, name))
			return &fields[i];
	return NULL;
}

/* Copies @len bytes of @s to @buf at @at, as far as @cap allows. */
static void put_clamped(char *buf, size_t cap, size_t at, const char *s, size_t len)
{
	if (at < cap)
		memcpy(buf + at, s, at + len < cap ? len : cap - at);
}

size_t iour__schema_field_names(char *buf, size_t cap, bool grouped)
{
	const char *name, *gname = "";
	size_t i, k, n = 0, len;

	for (i = 0; i < IOUR_ARRAY_SIZE(fields); i++) {
		name = fields[i].name;
		len = strlen(name);
		if (grouped && fields[i].group != IOUR__SG_ANY) {
			/* once per group, at its first field */
			for (k = 0; k < i && fields[k].group != fields[i].group; k++)
				;
			if (k < i)
				continue;
			gname = iour__schema_group_name(fields[i].group);
			len = strlen(gname) + 2;
			name = NULL;
		}
		if (n) {
			put_clamped(buf, cap, n, ", ", 2);
			n += 2;
		}
		if (name) {
			put_clamped(buf, cap, n, name, len);
		} else {
			put_clamped(buf, cap, n, gname, len - 2);
			put_clamped(buf, cap, n + len - 2, ".*", 2);
		}
		n += len;
	}
	if (cap)
		buf[n < cap ? n : cap - 1] = '\0';
	return n;
}

uint32_t iour__schema_max_pdu(void)
{
	uint32_t m = 0;
	size_t i;

	for (i = 0; i < IOUR_ARRAY_SIZE(payloads); i++)
		if (payloads[i].pdu_size > m)
			m = payloads[i].pdu_size;
	return m;
}

/* ---- the public, read-only view (include/iouring_restrict/schema.h) */

/* An output struct's `sz`: at least up to `first`, at most
 * IOUR_OPTS_MAX_SZ (as iour_group_get()). */
#define OUT_OK(info, first) ((info) && (info)->sz <= IOUR_OPTS_MAX_SZ && IOUR_OUT_HAS(info, first))

/* Documented in include/iouring_restrict/schema.h */
int iour_payload_count(void)
{
	return (int)IOUR_ARRAY_SIZE(payloads);
}

/* Documented in include/iouring_restrict/schema.h */
int iour_payload_get(size_t idx, struct iour_payload_info *info)
{
	const struct iour__schema_payload *pl;

	if (!OUT_OK(info, group))
		return -EINVAL;
	pl = iour__schema_payload_at(idx);
	if (!pl)
		return -ENOENT;
	info->group = iour__schema_group_name(pl->group);
	if (IOUR_OUT_HAS(info, opcode))
		info->opcode = pl->opcode;
	if (IOUR_OUT_HAS(info, pdu_size))
		info->pdu_size = pl->pdu_size;
	if (IOUR_OUT_HAS(info, level))
		info->level = pl->level;
	if (IOUR_OUT_HAS(info, since))
		info->since = iour__kernel_level_kver(pl->level);
	return 0;
}

/* Documented in include/iouring_restrict/schema.h */
int iour_payload_find(uint32_t opcode)
{
	const struct iour__schema_payload *pl = iour__schema_payload_of(opcode);

	return pl ? (int)(pl - payloads) : -ENOENT;
}

/* Documented in include/iouring_restrict/schema.h */
int iour_field_count(void)
{
	return (int)IOUR_ARRAY_SIZE(fields);
}

/* Documented in include/iouring_restrict/schema.h */
int iour_field_get(size_t idx, struct iour_field_info *info)
{
	const struct iour__schema_field *f;

	if (!OUT_OK(info, name))
		return -EINVAL;
	f = iour__schema_field_at(idx);
	if (!f)
		return -ENOENT;
	info->name = f->name;
	if (IOUR_OUT_HAS(info, group))
		info->group = iour__schema_group_name(f->group);
	if (IOUR_OUT_HAS(info, prefix))
		info->prefix = f->prefix;
	if (IOUR_OUT_HAS(info, mask))
		info->mask = f->mask;
	if (IOUR_OUT_HAS(info, valid))
		info->valid = f->valid;
	if (IOUR_OUT_HAS(info, id))
		info->id = f->id;
	if (IOUR_OUT_HAS(info, kind))
		info->kind = (uint32_t)f->kind;
	if (IOUR_OUT_HAS(info, offset))
		info->offset = f->off;
	if (IOUR_OUT_HAS(info, size))
		info->size = f->bytes;
	if (IOUR_OUT_HAS(info, order))
		info->order = (uint32_t)f->order;
	return 0;
}

/* Documented in include/iouring_restrict/schema.h */
int iour_field_find(const char *name)
{
	const struct iour__schema_field *f;

	if (!name)
		return -EINVAL;
	f = iour__schema_field_named(name);
	return f ? (int)(f - fields) : -ENOENT;
}

/* Documented in include/iouring_restrict/schema.h */
int iour_field_index(uint32_t id)
{
	const struct iour__schema_field *f = iour__schema_field_of(id);

	return f ? (int)(f - fields) : -ENOENT;
}

/* Documented in include/iouring_restrict/schema.h */
int iour_field_applies(uint32_t id, uint32_t opcode)
{
	const struct iour__schema_field *f = iour__schema_field_of(id);
	const struct iour__schema_payload *pl = iour__schema_payload_of(opcode);

	if (!f)
		return -ENOENT;
	return f->group == IOUR__SG_ANY || (pl && pl->group == f->group);
}

/* Documented in include/iouring_restrict/schema.h */
int iour_const_count(void)
{
	return (int)IOUR_ARRAY_SIZE(consts);
}

/* Documented in include/iouring_restrict/schema.h */
int iour_const_get(size_t idx, struct iour_const_info *info)
{
	const struct iour__schema_const *c;

	if (!OUT_OK(info, name))
		return -EINVAL;
	c = iour__schema_const_at(idx);
	if (!c)
		return -ENOENT;
	info->name = c->name;
	if (IOUR_OUT_HAS(info, ns))
		info->ns = iour__schema_const_ns(c->name);
	if (IOUR_OUT_HAS(info, value))
		info->value = c->value;
	if (IOUR_OUT_HAS(info, since))
		info->since = c->since;
	return 0;
}

/* Documented in include/iouring_restrict/schema.h */
int iour_const_find(const char *name)
{
	size_t i;

	if (!name)
		return -EINVAL;
	for (i = 0; i < IOUR_ARRAY_SIZE(consts); i++)
		if (!strcasecmp(consts[i].name, name))
			return (int)i;
	return -ENOENT;
}
