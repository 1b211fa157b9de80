/* SPDX-License-Identifier: MIT */
/*
 * The help texts of the rule language (`iour-restrict help rules`, the
 * --op line of filter and sim, check's paragraph on FIELD=VALUE) and
 * cli_help(), which writes a command's help with its "@{NAME}" lines
 * made from the request schema (iouring_restrict/schema.h), so that a
 * payload or field added there needs no edit here (doc/design.md, "Adding
 * a filterable opcode or field").  The library parses the language
 * (iouring_restrict/rules.h); this file only describes it.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cli.h"
#include "expr.h"

/* The width of the help texts' lines. */
#define HELP_WIDTH 76
/* The margin of a labelled help line ("  SOCKET             family, ..."). */
#define HELP_MARGIN 21

/* ---- the request schema */

static bool field_at(size_t i, struct iour_field_info *fi)
{
	memset(fi, 0, sizeof(*fi));
	fi->sz = sizeof(*fi);
	return iour_field_get(i, fi) == 0;
}

static bool payload_at(size_t i, struct iour_payload_info *pi)
{
	memset(pi, 0, sizeof(*pi));
	pi->sz = sizeof(*pi);
	return iour_payload_get(i, pi) == 0;
}

static bool const_at(size_t i, struct iour_const_info *ci)
{
	memset(ci, 0, sizeof(*ci));
	ci->sz = sizeof(*ci);
	return iour_const_get(i, ci) == 0;
}

static const char *expr_bare(const struct iour_field_info *fi)
{
	size_t n = strlen(fi->group);

	return n && !strncmp(fi->name, fi->group, n) && fi->name[n] == '.' ? fi->name + n + 1
									   : fi->name;
}

/* The index of the first field of @idx's group at its byte slot. */
static size_t slot_owner(size_t idx)
{
	struct iour_field_info fi, o;
	size_t i;

	if (!field_at(idx, &fi))
		return idx;
	for (i = 0; i < idx && field_at(i, &o); i++)
		if (!strcmp(o.group, fi.group) && o.offset == fi.offset && o.size == fi.size)
			return i;
	return idx;
}

static bool expr_owns_slot(size_t idx)
{
	return slot_owner(idx) == idx;
}

static void expr_cat(char *buf, size_t cap, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Appends to a string buffer, never past @cap. */
static void expr_cat(char *buf, size_t cap, const char *fmt, ...)
{
	size_t n = strlen(buf);
	va_list ap;

	if (n + 1 >= cap)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + n, cap - n, fmt, ap);
	va_end(ap);
}

/* ---- help */

static void expr_put_wrapped(FILE *out, size_t margin, const char *label, const char *text)
{
	size_t indent = label ? margin : 0, avail = HELP_WIDTH - indent, j;
	const char *s = text;

	if (label && strlen(label) + 3 > margin)
		fprintf(out, "  %s\n%*s", label, (int)indent, "");
	else if (label)
		fprintf(out, "  %-*s", (int)(margin - 2), label);
	while (strlen(s) > avail) {
		/* the last end of a word that fits; a longer word stands alone */
		for (j = avail; j > 0 && !(s[j] == ' ' && s[j - 1] != ' '); j--)
			;
		if (!j)
			j = strcspn(s, " ");
		fprintf(out, "%.*s\n", (int)j, s);
		s += j;
		while (*s == ' ')
			s++;
		if (!*s)
			return;
		fprintf(out, "%*s", (int)indent, "");
	}
	fprintf(out, "%s\n", s);
}

static void expr_group_label(const char *group, bool since, char *buf, size_t cap)
{
	struct iour_payload_info pi;
	uint32_t first = UINT32_MAX, kver = 0;
	char v[16];
	size_t i;

	buf[0] = '\0';
	for (i = 0; payload_at(i, &pi); i++) {
		if (pi.since < first)
			first = pi.since;
		if (strcmp(pi.group, group))
			continue;
		expr_cat(buf, cap, "%s%s", buf[0] ? ", " : "", iour_opcode_name(pi.opcode));
		kver = pi.since;
	}
	if (since && kver > first) {
		cli_kver_str(kver, v, sizeof(v));
		expr_cat(buf, cap, " (%s+)", v);
	}
}

/* Whether payload row @i is the first of its group. */
static bool first_of_group(size_t i, struct iour_payload_info *pi)
{
	struct iour_payload_info o;
	size_t k;

	if (!payload_at(i, pi))
		return false;
	for (k = 0; k < i && payload_at(k, &o); k++)
		if (!strcmp(o.group, pi->group))
			return false;
	return true;
}

/* What `help rules` says of a field beside its name: the width or the
 * constants of a field of every opcode, and how a field that is part of
 * its slot's bits, or a view of another field's slot, is read. */
static void field_note(size_t idx, const struct iour_field_info *fi, char *buf, size_t cap)
{
	struct iour_field_info owner;
	struct iour_const_info ci;
	bool listed = false;
	size_t i;

	buf[0] = '\0';
	if (!fi->group[0]) {
		if (fi->kind == IOUR_FIELD_KIND_BITS && fi->prefix)
			expr_cat(buf, cap, " (%s* bits)", fi->prefix);
		else if (fi->kind == IOUR_FIELD_KIND_NUM && !fi->prefix)
			expr_cat(buf, cap, " (%u bits)", fi->size * 8);
		return;
	}
	if (!fi->mask) {
		if (!expr_owns_slot(idx))
			expr_cat(buf, cap, " (the whole word)");
		return;
	}
	if (fi->kind == IOUR_FIELD_KIND_BITS) {
		/* the named bits it holds */
		for (i = 0; fi->prefix && const_at(i, &ci); i++) {
			if (!ci.ns || strcmp(ci.ns, fi->prefix) || !ci.value || (ci.value & ~fi->mask))
				continue;
			expr_cat(buf, cap, "%s%s", listed ? ", " : " (", ci.name);
			listed = true;
		}
		if (listed)
			expr_cat(buf, cap, ")");
		return;
	}
	/* a number: the slot's first field, masked */
	if (!field_at(slot_owner(idx), &owner))
		return;
	expr_cat(buf, cap, " (%s & ", expr_bare(&owner));
	for (i = 0; fi->prefix && const_at(i, &ci); i++)
		if (ci.ns && !strcmp(ci.ns, fi->prefix) && ci.value == fi->mask)
			break;
	if (fi->prefix && const_at(i, &ci))
		expr_cat(buf, cap, "%s)", ci.name);
	else
		expr_cat(buf, cap, "0x%llx)", (unsigned long long)fi->mask);
}

/* One line of fields for the fields of @group ("": every opcode). */
static void help_fields(FILE *out, const char *label, const char *group)
{
	struct iour_field_info fi;
	char text[1024] = "", note[256];
	size_t i;

	for (i = 0; field_at(i, &fi); i++) {
		if (strcmp(fi.group, group))
			continue;
		field_note(i, &fi, note, sizeof(note));
		expr_cat(text, sizeof(text), "%s%s%s", text[0] ? ", " : "", expr_bare(&fi), note);
	}
	expr_put_wrapped(out, HELP_MARGIN, label, text);
}

/* A list of names (static strings of the schema), each once. */
struct names {
	const char *v[64];
	size_t n;
};

static void names_add(struct names *l, const char *name)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (!strcmp(l->v[i], name))
			return;
	if (l->n < sizeof(l->v) / sizeof(l->v[0]))
		l->v[l->n++] = name;
}

/* "a", "a and b", "a, b and c" */
static void cat_joined(char *buf, size_t cap, const struct names *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		expr_cat(buf, cap, "%s%s", !i ? "" : i + 1 == l->n ? " and " : ", ", l->v[i]);
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* A bit-flag view of an earlier field's slot (socket.type_flags): its
 * slot's field already names the namespace. */
static bool bit_view(size_t idx, const struct iour_field_info *fi)
{
	return fi->kind == IOUR_FIELD_KIND_BITS && !expr_owns_slot(idx);
}

/* Which constants each field takes: namespaces in table order, the fields
 * of every opcode last, each naming its fields; then the fields that take
 * numbers only, in table order; and the bit-flag fields, by name. */
static void help_namespaces(FILE *out)
{
	char text[2048] = "Each field takes its own constants only (";
	struct names prefixes = { .n = 0 }, names, bits = { .n = 0 };
	struct iour_field_info fi;
	size_t i, k;
	int pass;

	for (pass = 0; pass < 2; pass++)
		for (i = 0; field_at(i, &fi); i++)
			if (fi.prefix && (fi.group[0] == 0) == (pass == 1) && !bit_view(i, &fi))
				names_add(&prefixes, fi.prefix);
	for (k = 0; k < prefixes.n; k++) {
		names.n = 0;
		for (pass = 0; pass < 2; pass++)
			for (i = 0; field_at(i, &fi); i++)
				if (fi.prefix && (fi.group[0] == 0) == (pass == 1) && !bit_view(i, &fi) &&
				    !strcmp(fi.prefix, prefixes.v[k]))
					names_add(&names, expr_bare(&fi));
		expr_cat(text, sizeof(text), "%s", k ? ", " : "");
		cat_joined(text, sizeof(text), &names);
		expr_cat(text, sizeof(text), ": %s*", prefixes.v[k]);
	}
	names.n = 0;
	for (i = 0; field_at(i, &fi); i++) {
		if (!fi.prefix && fi.kind != IOUR_FIELD_KIND_ADDR6)
			names_add(&names, expr_bare(&fi));
		if (fi.kind == IOUR_FIELD_KIND_BITS)
			names_add(&bits, expr_bare(&fi));
	}
	expr_cat(text, sizeof(text), "; ");
	cat_joined(text, sizeof(text), &names);
	expr_cat(text, sizeof(text), ": numbers).  '|' joins bit flags (");
	qsort(bits.v, bits.n, sizeof(bits.v[0]), cmp_name);
	for (i = 0; i < bits.n; i++)
		expr_cat(text, sizeof(text), "%s%s", i ? ", " : "", bits.v[i]);
	expr_cat(text, sizeof(text), "); for several values of any other field write 'in {A, B}'.");
	expr_put_wrapped(out, 0, NULL, text);
}

static void expr_any_fields(char *buf, size_t cap)
{
	struct iour_field_info fi;
	struct names any = { .n = 0 };
	size_t i;

	for (i = 0; field_at(i, &fi); i++)
		if (!fi.group[0])
			names_add(&any, expr_bare(&fi));
	buf[0] = '\0';
	cat_joined(buf, cap, &any);
}

/* The --op line of `filter --help` and `sim --help`: the opcodes with a
 * payload, in table order. */
static void help_filter_op(FILE *out)
{
	struct iour_payload_info pi;
	char text[512] = "the request opcode to filter (", any[128];
	size_t i;

	for (i = 0; payload_at(i, &pi); i++)
		expr_cat(text, sizeof(text), "%s, ", iour_opcode_name(pi.opcode));
	expr_any_fields(any, sizeof(any));
	expr_cat(text, sizeof(text), "or any other for %s only); required", any);
	expr_put_wrapped(out, 25, "--op OPCODE", text);
}

static void expr_ctx_help_check(FILE *out);

int expr_help_part(const char *name, size_t len, FILE *out)
{
	if (len == 9 && !strncmp(name, "filter-op", len))
		help_filter_op(out);
	else if (len == 9 && !strncmp(name, "check-ctx", len))
		expr_ctx_help_check(out);
	else
		return -1;
	return 0;
}

/* A payload group whose contexts a library builder makes (lib/rules/rules_ctx.c),
 * as help describes them. */
struct builder {
	const char *group;
	const char *extra;        /* a key of its own, or NULL */
	const char *const *notes; /* key, note: what help says beside a key */
	const char *trailer;      /* what help says after the keys */
};

static const char *const socket_notes[] = { "type", "the raw word: SOCK_STREAM|SOCK_CLOEXEC",
					    NULL };
static const char *const open_notes[] = { "resolve", "OPENAT2 only", NULL };
static const char *const connect_notes[] = { "family", "default: from addr4/addr6/port", "addrlen",
					     "default: the size of the address", NULL };

static const struct builder builders[] = {
	{ "socket", NULL, socket_notes, "" },
	{ "open", NULL, open_notes,
	  "; as the kernel does, OPENAT masks them and O_LARGEFILE is added" },
	{ "connect", "addrlen", connect_notes, "" },
};

static const struct builder *builder_of(const char *group)
{
	size_t i;

	for (i = 0; group && i < sizeof(builders) / sizeof(builders[0]); i++)
		if (!strcmp(builders[i].group, group))
			return &builders[i];
	return NULL;
}

/* The keys of a context as help lists them: the group's slot-owning
 * fields, its builder's own key, then those of every opcode (@any).  The
 * library's iour_rule_ctx() takes the same keys. */
struct kv {
	const char *name[32];
	bool any[32];
	size_t n;
};

static void add_key(struct kv *v, const char *name, bool any)
{
	if (v->n < sizeof(v->name) / sizeof(v->name[0])) {
		v->name[v->n] = name;
		v->any[v->n++] = any;
	}
}

static void keys_of(const char *group, struct kv *v)
{
	const struct builder *b = builder_of(group);
	struct iour_field_info fi;
	size_t i;

	v->n = 0;
	for (i = 0; group && field_at(i, &fi); i++)
		if (!strcmp(fi.group, group) && expr_owns_slot(i))
			add_key(v, expr_bare(&fi), false);
	if (b && b->extra)
		add_key(v, b->extra, false);
	for (i = 0; field_at(i, &fi); i++)
		if (!fi.group[0] && expr_owns_slot(i))
			add_key(v, expr_bare(&fi), true);
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
		if (group[0] && v.any[i])
			continue;
		note = note_of(b, v.name[i]);
		expr_cat(text, sizeof(text), "%s%s%s%s%s", text[0] ? ", " : "", v.name[i],
			 note ? " (" : "", note ? note : "", note ? ")" : "");
	}
	if (b)
		expr_cat(text, sizeof(text), "%s", b->trailer);
	expr_put_wrapped(out, 21, label, text);
}

static void expr_ctx_help(FILE *out)
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
static void expr_ctx_help_check(FILE *out)
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
			if (!v.any[j])
				expr_cat(text, sizeof(text), "%s%s", k++ ? ", " : " ", v.name[j]);
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
static const char help_head[] =
"Rule expressions of 'iour-restrict filter' and 'sim'\n"
"\n"
"A rule is a comma-separated list of comparisons; it holds when all of them\n"
"hold.  The word 'true' is a rule that always holds.  Rules are tried in the\n"
"order given; the first that holds decides (--allow or --deny), and the\n"
"opcode's default decides when none holds.\n"
"\n"
"  rule     := 'true' | cmp { ',' cmp }\n"
"  cmp      := FIELD ( '==' | '!=' | '<' | '<=' | '>' | '>=' ) value\n"
"            | FIELD ( '&=' | 'any-bits' ) value  any bit of value is set\n"
"            | FIELD 'all-bits' value           every bit of value is set\n"
"            | FIELD 'none-bits' value          no bit of value is set\n"
"            | FIELD '&' value '==' value       (FIELD & mask) == value\n"
"            | FIELD '&' value '!=' '0'         any bit of mask is set\n"
"            | FIELD [ 'not' ] 'in' '{' value { ',' value } '}'\n"
"            | FIELD [ 'not' ] 'in' '[' value ',' value ']'   inclusive range\n"
"            | ADDR  [ 'not' ] 'in' address [ '/' length ]  network prefix\n"
"  value    := term { '|' term }            '|': bit-flag fields only\n"
"  term     := number | CONSTANT | IPv4 address (addr4) | IPv6 address (addr6)\n"
"\n"
"Numbers are unsigned: decimal, 0x hexadecimal, or octal with a leading 0\n"
"(mode==0644).  '!in' is the same as 'not in'; an address without '/length'\n"
"is its full length.  Spaces are allowed between tokens.  All comparisons\n"
"are unsigned.  Policy files spell their conditions the same way.\n"
"\n"
"Fields (the opcode chooses the payload; 'socket.family' etc. also work):\n";

static const char help_middle[] =
"\n"
"The kernel adds O_LARGEFILE to open flags, so 'flags==O_RDONLY' never\n"
"matches a real request: test bits with '&=' or 'flags & MASK == VALUE', and\n"
"the access mode with accmode.  addr4 and addr6 comparisons, negated ones\n"
"included, hold only for requests of their own family.  A CONNECT to an\n"
"IPv4-mapped address ::ffff:a.b.c.d goes to a.b.c.d over IPv4, so it is\n"
"judged as that IPv4 connect (family AF_INET, addr4 a.b.c.d); deny rules\n"
"also see it as given (AF_INET6, addr6).  --addr4-literal turns this off.\n"
"\n";

/* Examples of constants, not their list: `names` and the schema have it. */
static const char help_tail[] =
"\n"
"Constants: AF_UNIX AF_LOCAL AF_INET AF_INET6 AF_NETLINK AF_PACKET AF_VSOCK ...;\n"
"SOCK_STREAM SOCK_DGRAM SOCK_RAW SOCK_SEQPACKET SOCK_NONBLOCK SOCK_CLOEXEC;\n"
"IPPROTO_TCP IPPROTO_UDP ...; O_RDONLY O_WRONLY O_RDWR O_CREAT O_EXCL O_TRUNC\n"
"O_APPEND O_DIRECTORY O_NOFOLLOW O_CLOEXEC O_PATH O_TMPFILE O_LARGEFILE ...;\n"
"RESOLVE_NO_XDEV RESOLVE_NO_MAGICLINKS RESOLVE_NO_SYMLINKS RESOLVE_BENEATH\n"
"RESOLVE_IN_ROOT RESOLVE_CACHED; S_IRWXU ... S_ISVTX; IOSQE_ASYNC and the\n"
"other IOSQE_* flags.  Names are case-insensitive.\n"
"\n"
"Examples:\n"
"  family==AF_INET,type==SOCK_STREAM\n"
"  family in {AF_UNIX, AF_INET, AF_INET6}\n"
"  accmode==O_RDONLY, flags & O_CREAT|O_TRUNC == 0\n"
"  resolve &= RESOLVE_BENEATH|RESOLVE_IN_ROOT\n"
"  port in [1024, 65535], addr4 in 10.0.0.0/8\n"
"  addr6 == ::1\n"
"\n";

/* `iour-restrict help rules`: the grammar, then the fields, namespaces and
 * contexts as the schema has them. */
int cli_help_rules(void)
{
	struct iour_payload_info pi;
	char label[128];
	size_t i;

	fputs(help_head, stdout);
	help_fields(stdout, "every opcode", "");
	for (i = 0; payload_at(i, &pi); i++) {
		if (!first_of_group(i, &pi))
			continue;
		expr_group_label(pi.group, true, label, sizeof(label));
		help_fields(stdout, label, pi.group);
	}
	fputs(help_middle, stdout);
	help_namespaces(stdout);
	fputs(help_tail, stdout);
	expr_ctx_help(stdout);
	return CLI_OK;
}
