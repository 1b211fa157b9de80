/* SPDX-License-Identifier: MIT */
/*
 * Context assignments (iour_rule_ctx(), include/iouring_restrict/rules.h):
 * "family=AF_INET,type=SOCK_STREAM" turned into the filter context the
 * kernel would build for a request (doc/kernel.md 4.3), for the tool's
 * `sim --ctx` and `check`.
 *
 * The keys come from the request schema: every field that owns its byte
 * slot (the first of its payload group at that offset and size;
 * socket.type_flags and open.accmode are views of another field's bytes,
 * so they are not keys).  SOCKET, OPENAT/OPENAT2 and CONNECT contexts are
 * built by the context builders (lib/cbpf/cbpf_ctx.c), which do what the
 * kernel does (the raw socket type word, OPENAT's masking, a sockaddr and
 * its length); the builders below call them.  Any other payload gets each
 * of its keys written at the field's offset, size and byte order, so a
 * payload added to the schema needs no edit here (doc/design.md, "Adding
 * a filterable opcode or field").
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "rules_internal.h"
#include "iouring_restrict/cbpf.h"
#include "iouring_restrict/errors.h"
#include "iouring_restrict/names.h"

#define MAX_KEYS 32

/* One key of a context and what was assigned to it. */
struct key {
	struct iour__rfield f;
	bool field; /* a field of the schema (else a builder's own key) */
	bool any;   /* a field of every opcode */
	uint32_t off, size, order;
};

struct kv {
	struct key k[MAX_KEYS];
	size_t n;
	uint64_t val[MAX_KEYS];
	size_t at[MAX_KEYS];
	bool set[MAX_KEYS];
	uint8_t a6[MAX_KEYS][16];
};

static int build_socket(struct iour__rps *p, const struct kv *v, uint8_t *ctx);
static int build_open(struct iour__rps *p, const struct kv *v, uint8_t *ctx);
static int build_connect(struct iour__rps *p, const struct kv *v, uint8_t *ctx);

/* A payload group whose contexts a library builder makes. */
struct builder {
	const char *group;
	const char *extra; /* a key of its own, or NULL */
	int (*build)(struct iour__rps *p, const struct kv *v, uint8_t *ctx);
};

static const struct builder builders[] = {
	{ "socket", NULL, build_socket },
	{ "open", NULL, build_open },
	{ "connect", "addrlen", build_connect },
};

static const struct builder *builder_of(const char *group)
{
	size_t i;

	for (i = 0; group && i < sizeof(builders) / sizeof(builders[0]); i++)
		if (!strcmp(builders[i].group, group))
			return &builders[i];
	return NULL;
}

static bool field_at(size_t i, struct iour_field_info *fi)
{
	memset(fi, 0, sizeof(*fi));
	fi->sz = sizeof(*fi);
	return iour_field_get(i, fi) == 0;
}

/* The key of a slot-owning field: it takes '|' if any field of its slot
 * is a set of bits (the socket type word takes SOCK_STREAM|SOCK_CLOEXEC). */
static void key_of_field(size_t idx, const struct iour_field_info *fi, struct key *k)
{
	struct iour_field_info o;
	size_t i;

	memset(k, 0, sizeof(*k));
	iour__rule_field_from(fi, &k->f);
	k->field = true;
	k->any = !fi->group[0];
	k->off = fi->offset;
	k->size = fi->size;
	k->order = fi->order;
	for (i = idx; field_at(i, &o); i++)
		if (!strcmp(o.group, fi->group) && o.offset == fi->offset && o.size == fi->size &&
		    o.kind == IOUR_FIELD_KIND_BITS)
			k->f.bits = true;
}

static void add_key(struct kv *v, const struct key *k)
{
	if (v->n < MAX_KEYS)
		v->k[v->n++] = *k;
}

/* The keys of @group's contexts (NULL: an opcode without a payload): the
 * group's, its builder's, then those of every opcode. */
static void keys_of(const char *group, struct kv *v)
{
	const struct builder *b = builder_of(group);
	struct iour_field_info fi;
	struct key k;
	size_t i;

	memset(v, 0, sizeof(*v));
	for (i = 0; group && field_at(i, &fi); i++) {
		if (strcmp(fi.group, group) != 0 || !iour__rule_owns_slot(i))
			continue;
		key_of_field(i, &fi, &k);
		add_key(v, &k);
	}
	if (b && b->extra) {
		memset(&k, 0, sizeof(k));
		k.f.name = b->extra;
		k.f.kind = IOUR_FIELD_KIND_NUM;
		add_key(v, &k);
	}
	for (i = 0; field_at(i, &fi); i++) {
		if (fi.group[0] || !iour__rule_owns_slot(i))
			continue;
		key_of_field(i, &fi, &k);
		add_key(v, &k);
	}
}

static void key_list(const struct kv *v, char *buf, size_t cap)
{
	size_t i, n;

	buf[0] = '\0';
	for (i = 0, n = 0; i < v->n && n < cap; i++)
		n += (size_t)snprintf(buf + n, cap - n, "%s%s", i ? ", " : "", v->k[i].f.name);
}

/* Whether @name is a key of the contexts of another payload. */
static bool key_elsewhere(const char *name)
{
	struct iour_field_info fi;
	size_t i;

	for (i = 0; i < sizeof(builders) / sizeof(builders[0]); i++)
		if (builders[i].extra && !strcasecmp(builders[i].extra, name))
			return true;
	for (i = 0; field_at(i, &fi); i++)
		if (fi.group[0] && iour__rule_owns_slot(i) &&
		    !strcasecmp(iour__rule_bare(&fi), name))
			return true;
	return false;
}

static int find_key(const struct kv *v, const char *name)
{
	size_t i;

	for (i = 0; i < v->n; i++)
		if (!strcasecmp(v->k[i].f.name, name))
			return (int)i;
	return -EBADMSG;
}

/* A key's value, where it was given and whether it was; 0 and false if
 * the context has no such key. */
static uint64_t val(const struct kv *v, const char *name)
{
	int i = find_key(v, name);

	return i < 0 ? 0 : v->val[i];
}

static size_t at(const struct kv *v, const char *name)
{
	int i = find_key(v, name);

	return i < 0 ? 0 : v->at[i];
}

static bool given(const struct kv *v, const char *name)
{
	int i = find_key(v, name);

	return i >= 0 && v->set[i];
}

static int build_socket(struct iour__rps *p, const struct kv *v, uint8_t *ctx)
{
	static const char *const words[] = { "family", "type", "protocol" };
	size_t i;
	int r;

	for (i = 0; i < 3; i++)
		if (val(v, words[i]) > UINT32_MAX)
			return iour__rps_fail(p, at(v, words[i]),
					      "value does not fit the 32-bit field");
	r = iour_ctx_socket(ctx, IOUR_CTX_SIZE, (uint32_t)val(v, "family"),
			    (uint32_t)val(v, "type"), (uint32_t)val(v, "protocol"));
	if (r)
		return iour__rps_fail(p, 0, "iour_ctx_socket: %s", iour_strerror_desc(r));
	return 0;
}

static int build_open(struct iour__rps *p, const struct kv *v, uint8_t *ctx)
{
	int r;

	if (p->op == IOUR_OP_OPENAT) {
		if (val(v, "flags") > UINT32_MAX)
			return iour__rps_fail(p, at(v, "flags"), "OPENAT's flags are 32 bits");
		if (val(v, "mode") > UINT32_MAX)
			return iour__rps_fail(p, at(v, "mode"), "OPENAT's mode is 32 bits");
		if (val(v, "resolve"))
			return iour__rps_fail(p, at(v, "resolve"),
					      "OPENAT has no resolve flags "
					      "(use OPENAT2)");
	}
	r = iour_ctx_open(ctx, IOUR_CTX_SIZE, val(v, "flags"), val(v, "mode"), val(v, "resolve"));
	if (r)
		return iour__rps_fail(p, 0, "iour_ctx_open: %s", iour_strerror_desc(r));
	return 0;
}

static int build_connect(struct iour__rps *p, const struct kv *v, uint8_t *ctx)
{
	struct sockaddr_storage ss;
	int a6 = find_key(v, "addr6"), r;
	uint64_t family = val(v, "family");
	uint32_t addrlen = 0;

	if (!given(v, "family"))
		family = given(v, "addr6")                     ? AF_INET6 :
			 given(v, "addr4") || given(v, "port") ? AF_INET :
								 AF_UNSPEC;
	if (family > 0xffff)
		return iour__rps_fail(p, at(v, "family"), "an address family is 16 bits");
	if (val(v, "port") > 0xffff)
		return iour__rps_fail(p, at(v, "port"), "a port is 16 bits");
	if (val(v, "addr4") > UINT32_MAX)
		return iour__rps_fail(p, at(v, "addr4"), "an IPv4 address is 32 bits");
	if (given(v, "addr4") && given(v, "addr6"))
		return iour__rps_fail(p, at(v, "addr6"), "give addr4 or addr6, not both");
	memset(&ss, 0, sizeof(ss));
	ss.ss_family = (sa_family_t)family;
	if (family == AF_INET) {
		struct sockaddr_in *in = (struct sockaddr_in *)&ss;

		in->sin_port = htons((uint16_t)val(v, "port"));
		in->sin_addr.s_addr = htonl((uint32_t)val(v, "addr4"));
		addrlen = sizeof(*in);
	} else if (family == AF_INET6) {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;

		in6->sin6_port = htons((uint16_t)val(v, "port"));
		if (a6 >= 0)
			memcpy(&in6->sin6_addr, v->a6[a6], 16);
		addrlen = sizeof(*in6);
	} else if (given(v, "family")) {
		addrlen = sizeof(struct sockaddr);
	}
	if (given(v, "addrlen")) {
		if (val(v, "addrlen") > sizeof(ss))
			return iour__rps_fail(p, at(v, "addrlen"), "addrlen is at most %zu",
					      sizeof(ss));
		addrlen = (uint32_t)val(v, "addrlen");
	}
	r = iour_ctx_connect(ctx, IOUR_CTX_SIZE, &ss, addrlen);
	if (r)
		return iour__rps_fail(p, 0, "iour_ctx_connect: %s", iour_strerror_desc(r));
	return 0;
}

/* A payload without a builder: each key at its slot, as the schema
 * places it (doc/kernel.md 4.3). */
static int build_generic(struct iour__rps *p, const struct kv *v, uint8_t *ctx)
{
	const struct key *k;
	uint8_t b[8];
	size_t i, j;

	for (i = 0; i < v->n; i++) {
		k = &v->k[i];
		if (!k->field || (size_t)k->off + k->size > IOUR_CTX_SIZE ||
		    k->off < IOUR_CTX_OFF_PDU)
			continue;
		if (k->f.kind == IOUR_FIELD_KIND_ADDR6) {
			memcpy(ctx + k->off, v->a6[i], k->size < 16 ? k->size : 16);
			continue;
		}
		if (k->size > 8)
			continue;
		if (k->size < 8 && (v->val[i] >> (8 * k->size)))
			return iour__rps_fail(p, v->at[i], "value does not fit the %u-bit field",
					      8 * k->size);
		for (j = 0; j < k->size; j++) {
			/* NET: stored as in memory, most significant byte first */
			size_t shift = k->order == IOUR_FIELD_ORDER_NET ? k->size - 1 - j : j;

			b[j] = (uint8_t)(v->val[i] >> (8 * shift));
		}
		if (k->order == IOUR_FIELD_ORDER_HOST) {
			uint64_t x = v->val[i];
			uint32_t x32 = (uint32_t)x;
			uint16_t x16 = (uint16_t)x;
			uint8_t x8 = (uint8_t)x;

			memcpy(b,
			       k->size == 8 ? (void *)&x :
			       k->size == 4 ? (void *)&x32 :
			       k->size == 2 ? (void *)&x16 :
					      (void *)&x8,
			       k->size);
		}
		memcpy(ctx + k->off, b, k->size);
	}
	return 0;
}

static int rule_ctx(const char *text, uint32_t opcode, uint8_t *ctx, size_t len,
		    struct iour_rule_error *err)
{
	struct iour__rps p = { .s = text, .op = opcode, .err = err };
	const struct builder *b;
	struct kv v;
	char w[64], list[256];
	size_t start;
	int k, r;

	if (iour__rule_err_init(err) || !text || !ctx || len < IOUR_CTX_SIZE)
		return -EINVAL;
	p.group = iour__rule_group_of(opcode);
	b = builder_of(p.group);
	if (opcode >= IOUR_OP__COUNT)
		return iour__rps_fail(&p, 0, "opcode %u has no filter context", opcode);
	keys_of(p.group, &v);
	iour__rps_skip_ws(&p);
	while (p.s[p.i] != '\0') {
		if (iour__rps_word(&p, w, sizeof(w), &start, "a context field"))
			return -EBADMSG;
		k = find_key(&v, w);
		if (k < 0) {
			key_list(&v, list, sizeof(list));
			return iour__rps_fail(&p, start,
					      "%s context field '%s' (context fields of %s: %s)",
					      key_elsewhere(w) ? "no" : "unknown", w,
					      iour_opcode_name(opcode), list);
		}
		if (v.set[k])
			return iour__rps_fail(&p, start, "'%s' is assigned twice", w);
		if (!iour__rps_eat(&p, "=")) {
			iour__rps_skip_ws(&p);
			return iour__rps_fail(&p, p.i, "expected '=' after '%s'", w);
		}
		iour__rps_skip_ws(&p);
		v.at[k] = p.i;
		if (v.k[k].f.kind == IOUR_FIELD_KIND_ADDR6) {
			if (iour__rps_addr6(&p, v.a6[k]))
				return -EBADMSG;
		} else if (iour__rps_scalar(&p, &v.k[k].f, &v.val[k])) {
			return -EBADMSG;
		}
		v.set[k] = true;
		iour__rps_skip_ws(&p);
		if (p.s[p.i] == '\0')
			break;
		if (p.s[p.i] != ',')
			return iour__rps_fail(&p, p.i, "expected ',' or the end, found '%c'",
					      p.s[p.i]);
		p.i++;
		iour__rps_skip_ws(&p);
		if (p.s[p.i] == '\0')
			return iour__rps_fail(&p, p.i, "expected a context field after ','");
	}

	if (val(&v, "sqe_flags") & ~(uint64_t)IOUR_SQE__VALID)
		return iour__rps_fail(&p, at(&v, "sqe_flags"), "sqe_flags has bits outside 0x7f");
	r = iour_ctx_generic(ctx, IOUR_CTX_SIZE, opcode, (uint32_t)val(&v, "sqe_flags"),
			     val(&v, "user_data"));
	if (r)
		return iour__rps_fail(&p, 0, "iour_ctx_generic: %s", iour_strerror_desc(r));
	if (b)
		return b->build(&p, &v, ctx);
	return p.group ? build_generic(&p, &v, ctx) : 0;
}

/* Documented in include/iouring_restrict/rules.h */
int iour_rule_ctx(const char *text, uint32_t opcode, uint8_t *ctx, size_t len,
		  struct iour_rule_error *err)
{
	return iour__err_public(rule_ctx(text, opcode, ctx, len, err), IOUR__ERRSET_RULE_CTX);
}
