/* SPDX-License-Identifier: MIT */
/*
 * The contexts of `iour-restrict sim --ctx` and `check`: assignments
 * ("family=AF_INET,type=SOCK_STREAM") turned into the filter context the
 * kernel would build for a request (doc/kernel.md 4.3).
 *
 * The keys come from the library's request schema: every field that owns
 * its byte slot (the first of its payload group at that offset and size;
 * socket.type_flags and open.accmode are views of another field's bytes,
 * so they are not keys).  SOCKET, OPENAT/OPENAT2 and CONNECT contexts are
 * built by the library's iour_ctx_*() builders, which do what the kernel
 * does (the raw socket type word, OPENAT's masking, a sockaddr and its
 * length); the builders below call them.  Any other payload gets each of
 * its keys written at the field's offset, size and byte order, so a
 * payload added to the schema needs no edit here (doc/design.md, "Adding
 * a filterable opcode or field").
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "core/cli.h"
#include "expr.h"
#include "expr_internal.h"

#define MAX_KEYS 32

/* One key of a context and what was assigned to it. */
struct key {
	struct expr_field f;
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

static int build_socket(struct expr_ps *p, const struct kv *v, uint8_t *ctx);
static int build_open(struct expr_ps *p, const struct kv *v, uint8_t *ctx);
static int build_connect(struct expr_ps *p, const struct kv *v, uint8_t *ctx);

/* A payload group whose contexts a library builder makes. */
struct builder {
	const char *group;
	const char *extra;        /* a key of its own, or NULL */
	const char *const *notes; /* key, note: what help says beside a key */
	const char *trailer;      /* what help says after the keys */
	int (*build)(struct expr_ps *p, const struct kv *v, uint8_t *ctx);
};

static const char *const socket_notes[] = { "type", "the raw word: SOCK_STREAM|SOCK_CLOEXEC",
					    NULL };
static const char *const open_notes[] = { "resolve", "OPENAT2 only", NULL };
static const char *const connect_notes[] = { "family", "default: from addr4/addr6/port", "addrlen",
					     "default: the size of the address", NULL };

static const struct builder builders[] = {
	{ "socket", NULL, socket_notes, "", build_socket },
	{ "open", NULL, open_notes,
	  "; as the kernel does, OPENAT masks them and O_LARGEFILE is added", build_open },
	{ "connect", "addrlen", connect_notes, "", build_connect },
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
	expr_field_from(fi, &k->f);
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
		if (strcmp(fi.group, group) || !expr_owns_slot(i))
			continue;
		key_of_field(i, &fi, &k);
		add_key(v, &k);
	}
	if (b && b->extra) {
		memset(&k, 0, sizeof(k));
		k.f.name = b->extra;
		k.f.kind = EXPR_V_NUM;
		add_key(v, &k);
	}
	for (i = 0; field_at(i, &fi); i++) {
		if (fi.group[0] || !expr_owns_slot(i))
			continue;
		key_of_field(i, &fi, &k);
		add_key(v, &k);
	}
}

static void key_list(const struct kv *v, char *buf, size_t cap)
{
	size_t i;

	buf[0] = '\0';
	for (i = 0; i < v->n; i++)
		expr_cat(buf, cap, "%s%s", i ? ", " : "", v->k[i].f.name);
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
		if (fi.group[0] && expr_owns_slot(i) && !strcasecmp(expr_bare(&fi), name))
			return true;
	return false;
}

static int find_key(const struct kv *v, const char *name)
{
	size_t i;

	for (i = 0; i < v->n; i++)
		if (!strcasecmp(v->k[i].f.name, name))
			return (int)i;
	return -1;
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

static int build_socket(struct expr_ps *p, const struct kv *v, uint8_t *ctx)
{
	static const char *const words[] = { "family", "type", "protocol" };
	size_t i;
	int r;

	for (i = 0; i < 3; i++)
		if (val(v, words[i]) > UINT32_MAX)
			return expr_fail(p, at(v, words[i]), "value does not fit the 32-bit field");
	r = iour_ctx_socket(ctx, IOUR_CTX_SIZE, (uint32_t)val(v, "family"),
			    (uint32_t)val(v, "type"), (uint32_t)val(v, "protocol"));
	if (r)
		return expr_fail(p, 0, "iour_ctx_socket: %s", cli_strerror(r));
	return 0;
}

static int build_open(struct expr_ps *p, const struct kv *v, uint8_t *ctx)
{
	int r;

	if (p->op == IOUR_OP_OPENAT) {
		if (val(v, "flags") > UINT32_MAX)
			return expr_fail(p, at(v, "flags"), "OPENAT's flags are 32 bits");
		if (val(v, "mode") > UINT32_MAX)
			return expr_fail(p, at(v, "mode"), "OPENAT's mode is 32 bits");
		if (val(v, "resolve"))
			return expr_fail(p, at(v, "resolve"), "OPENAT has no resolve flags "
				    "(use OPENAT2)");
	}
	r = iour_ctx_open(ctx, IOUR_CTX_SIZE, val(v, "flags"), val(v, "mode"), val(v, "resolve"));
	if (r)
		return expr_fail(p, 0, "iour_ctx_open: %s", cli_strerror(r));
	return 0;
}

static int build_connect(struct expr_ps *p, const struct kv *v, uint8_t *ctx)
{
	struct sockaddr_storage ss;
	int a6 = find_key(v, "addr6"), r;
	uint64_t family = val(v, "family");
	uint32_t addrlen = 0;

	if (!given(v, "family"))
		family = given(v, "addr6")				 ? AF_INET6
			 : given(v, "addr4") || given(v, "port") ? AF_INET
								 : AF_UNSPEC;
	if (family > 0xffff)
		return expr_fail(p, at(v, "family"), "an address family is 16 bits");
	if (val(v, "port") > 0xffff)
		return expr_fail(p, at(v, "port"), "a port is 16 bits");
	if (val(v, "addr4") > UINT32_MAX)
		return expr_fail(p, at(v, "addr4"), "an IPv4 address is 32 bits");
	if (given(v, "addr4") && given(v, "addr6"))
		return expr_fail(p, at(v, "addr6"), "give addr4 or addr6, not both");
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
			return expr_fail(p, at(v, "addrlen"), "addrlen is at most %zu", sizeof(ss));
		addrlen = (uint32_t)val(v, "addrlen");
	}
	r = iour_ctx_connect(ctx, IOUR_CTX_SIZE, &ss, addrlen);
	if (r)
		return expr_fail(p, 0, "iour_ctx_connect: %s", cli_strerror(r));
	return 0;
}

/* A payload without a builder: each key at its slot, as the schema
 * places it (doc/kernel.md 4.3). */
static int build_generic(struct expr_ps *p, const struct kv *v, uint8_t *ctx)
{
	const struct key *k;
	uint8_t b[8];
	size_t i, j;

	for (i = 0; i < v->n; i++) {
		k = &v->k[i];
		if (!k->field || (size_t)k->off + k->size > IOUR_CTX_SIZE ||
		    k->off < IOUR_CTX_OFF_PDU)
			continue;
		if (k->f.kind == EXPR_V_ADDR6) {
			memcpy(ctx + k->off, v->a6[i], k->size < 16 ? k->size : 16);
			continue;
		}
		if (k->size > 8)
			continue;
		if (k->size < 8 && (v->val[i] >> (8 * k->size)))
			return expr_fail(p, v->at[i], "value does not fit the %u-bit field",
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

			memcpy(b, k->size == 8 ? (void *)&x : k->size == 4 ? (void *)&x32
						  : k->size == 2	   ? (void *)&x16
									   : (void *)&x8,
			       k->size);
		}
		memcpy(ctx + k->off, b, k->size);
	}
	return 0;
}

int expr_build_ctx(const char *text, uint32_t opcode, uint8_t ctx[IOUR_CTX_SIZE],
		   struct expr_error *err)
{
	struct expr_ps p = { .s = text, .op = opcode, .group = expr_group_of(opcode), .err = err };
	const struct builder *b = builder_of(p.group);
	struct kv v;
	char w[64], list[256];
	size_t start;
	int k, r;

	memset(err, 0, sizeof(*err));
	if (opcode >= IOUR_OP__COUNT)
		return expr_fail(&p, 0, "opcode %u has no filter context", opcode);
	keys_of(p.group, &v);
	expr_skip_ws(&p);
	while (p.s[p.i] != '\0') {
		if (expr_read_word(&p, w, sizeof(w), &start, "a context field"))
			return -1;
		k = find_key(&v, w);
		if (k < 0) {
			key_list(&v, list, sizeof(list));
			return expr_fail(&p, start, "%s context field '%s' (context fields of %s: %s)",
					 key_elsewhere(w) ? "no" : "unknown", w,
					 iour_opcode_name(opcode), list);
		}
		if (v.set[k])
			return expr_fail(&p, start, "'%s' is assigned twice", w);
		if (!expr_eat(&p, "=")) {
			expr_skip_ws(&p);
			return expr_fail(&p, p.i, "expected '=' after '%s'", w);
		}
		expr_skip_ws(&p);
		v.at[k] = p.i;
		if (v.k[k].f.kind == EXPR_V_ADDR6) {
			if (expr_parse_addr6(&p, v.a6[k]))
				return -1;
		} else if (expr_parse_scalar(&p, &v.k[k].f, &v.val[k])) {
			return -1;
		}
		v.set[k] = true;
		expr_skip_ws(&p);
		if (p.s[p.i] == '\0')
			break;
		if (p.s[p.i] != ',')
			return expr_fail(&p, p.i, "expected ',' or the end, found '%c'", p.s[p.i]);
		p.i++;
		expr_skip_ws(&p);
		if (p.s[p.i] == '\0')
			return expr_fail(&p, p.i, "expected a context field after ','");
	}

	if (val(&v, "sqe_flags") & ~(uint64_t)IOUR_SQE__VALID)
		return expr_fail(&p, at(&v, "sqe_flags"), "sqe_flags has bits outside 0x7f");
	r = iour_ctx_generic(ctx, IOUR_CTX_SIZE, opcode, (uint32_t)val(&v, "sqe_flags"),
			     val(&v, "user_data"));
	if (r)
		return expr_fail(&p, 0, "iour_ctx_generic: %s", cli_strerror(r));
	if (b)
		return b->build(&p, &v, ctx);
	return p.group ? build_generic(&p, &v, ctx) : 0;
}

/* What help says beside a key of @b's contexts. */
static const char *note_of(const struct builder *b, const char *key)
{
	size_t i;

	for (i = 0; b && b->notes[i]; i += 2)
		if (!strcmp(b->notes[i], key))
			return b->notes[i + 1];
	return NULL;
}

/* One line of keys for @group ("": every opcode). */
static void help_keys(FILE *out, const char *label, const char *group)
{
	const struct builder *b = builder_of(group);
	char text[1024] = "";
	const char *note;
	struct kv v;
	size_t i;

	keys_of(group[0] ? group : NULL, &v);
	for (i = 0; i < v.n; i++) {
		/* the keys of every opcode have their own line */
		if (group[0] && v.k[i].any)
			continue;
		note = note_of(b, v.k[i].f.name);
		expr_cat(text, sizeof(text), "%s%s%s%s%s", text[0] ? ", " : "", v.k[i].f.name,
			 note ? " (" : "", note ? note : "", note ? ")" : "");
	}
	if (b)
		expr_cat(text, sizeof(text), "%s", b->trailer);
	expr_put_wrapped(out, 21, label, text);
}

void expr_ctx_help(FILE *out)
{
	struct iour_payload_info pi, o;
	char label[128];
	size_t i, k;
	bool seen;

	fputs("Contexts of 'sim --ctx' are assignments FIELD=value, comma-separated:\n", out);
	help_keys(out, "every opcode", "");
	for (i = 0;; i++) {
		memset(&pi, 0, sizeof(pi));
		pi.sz = sizeof(pi);
		if (iour_payload_get(i, &pi))
			break;
		seen = false;
		for (k = 0; k < i && !seen; k++) {
			memset(&o, 0, sizeof(o));
			o.sz = sizeof(o);
			seen = !iour_payload_get(k, &o) && !strcmp(o.group, pi.group);
		}
		if (seen)
			continue;
		expr_group_label(pi.group, false, label, sizeof(label));
		help_keys(out, label, pi.group);
	}
	fputs("Fields not given are 0.\n", out);
}

/* `check --help`'s paragraph on its FIELD=VALUE assignments: the keys of
 * every opcode, then each payload's, by its opcodes. */
void expr_ctx_help_check(FILE *out)
{
	char text[1024] = "The request is described by FIELD=VALUE assignments, as the "
			  "contexts of 'sim' ('iour-restrict help rules'): ";
	struct iour_payload_info pi, o;
	char any[128];
	struct kv v;
	size_t i, k, j;

	expr_any_fields(any, sizeof(any));
	expr_cat(text, sizeof(text), "%s for every opcode", any);
	for (i = 0;; i++) {
		memset(&pi, 0, sizeof(pi));
		pi.sz = sizeof(pi);
		if (iour_payload_get(i, &pi))
			break;
		for (k = 0; k < i; k++) {
			memset(&o, 0, sizeof(o));
			o.sz = sizeof(o);
			if (!iour_payload_get(k, &o) && !strcmp(o.group, pi.group))
				break;
		}
		if (k < i)
			continue;
		expr_cat(text, sizeof(text), "; ");
		for (k = i;; k++) {
			memset(&o, 0, sizeof(o));
			o.sz = sizeof(o);
			if (iour_payload_get(k, &o))
				break;
			if (!strcmp(o.group, pi.group))
				expr_cat(text, sizeof(text), "%s%s", k == i ? "" : "/",
					 iour_opcode_name(o.opcode));
		}
		keys_of(pi.group, &v);
		for (j = 0, k = 0; j < v.n; j++)
			if (!v.k[j].any)
				expr_cat(text, sizeof(text), "%s%s", k++ ? ", " : " ", v.k[j].f.name);
	}
	expr_cat(text, sizeof(text), ".  Fields not given are 0.");
	expr_put_wrapped(out, 0, NULL, text);
}

/* cli_help (cli.h): a command's help text, with its "@{NAME}" lines written
 * from the request schema by expr_help_part(). */
int cli_help(const char *text)
{
	const char *s = text, *nl, *end;

	/* a line "@{NAME}": a part written from the request schema */
	for (; *s; s = nl ? nl + 1 : s + strlen(s)) {
		nl = strchr(s, '\n');
		end = strchr(s, '}');
		if (!strncmp(s, "@{", 2) && end && end + 1 == nl &&
		    !expr_help_part(s + 2, (size_t)(end - s - 2), stdout))
			continue;
		fwrite(s, 1, nl ? (size_t)(nl - s + 1) : strlen(s), stdout);
	}
	return CLI_OK;
}
