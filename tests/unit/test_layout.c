/* SPDX-License-Identifier: MIT */
/*
 * iour_abi_layout(): the table bindings check their struct copies against.
 * Complete: every struct with a body in include/iouring_restrict/ *.h, and
 * every member of it, is in the table, and nothing else is (the headers are
 * parsed here).  Right: each row equals offsetof/sizeof/alignof compiled in
 * this file.  IOUR_SRCDIR names the source tree (default: the current
 * directory, where make runs the tests).
 */
#include <criterion/criterion.h>
#include <ctype.h>
#include <glob.h>
#include <stdalign.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iouring_restrict/iouring_restrict.h"
#include "base/layout_list.h"

#define MAXNAMES 1024

struct name {
	char type[64];
	char field[64];
};

static struct name parsed[MAXNAMES];
static size_t n_parsed;

static void add(const char *type, const char *field)
{
	cr_assert_lt(n_parsed, MAXNAMES);
	snprintf(parsed[n_parsed].type, sizeof(parsed[n_parsed].type), "%s", type);
	snprintf(parsed[n_parsed].field, sizeof(parsed[n_parsed].field), "%s", field);
	n_parsed++;
}

/* The text of a file with its comments blanked. */
static char *read_nocomments(const char *path)
{
	FILE *f = fopen(path, "r");
	char *s;
	long n;

	cr_assert_not_null(f, "cannot open %s", path);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	s = calloc(1, (size_t)n + 1);
	cr_assert_not_null(s);
	cr_assert_eq(fread(s, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	for (char *p = s; *p; p++) {
		if (p[0] == '/' && p[1] == '*') {
			char *e = strstr(p + 2, "*/");
			cr_assert_not_null(e, "%s: unterminated comment", path);
			memset(p, ' ', (size_t)(e + 2 - p));
			p = e + 1;
		} else if (p[0] == '/' && p[1] == '/') {
			while (*p && *p != '\n')
				*p++ = ' ';
		}
	}
	return s;
}

/* Every `struct TAG {` ... `};` of a header: TAG, then each member's name
 * (the last identifier of its declaration, before an array bound). */
static void parse_header(const char *path)
{
	char *s = read_nocomments(path), *p = s;

	while ((p = strstr(p, "struct ")) != NULL) {
		char tag[64], *q = p + 7, *body, *end;
		size_t n = 0;

		if (p > s && (isalnum((unsigned char)p[-1]) || p[-1] == '_')) {
			p += 7;
			continue;
		}
		while (isalnum((unsigned char)*q) || *q == '_')
			if (n < sizeof(tag) - 1)
				tag[n++] = *q++;
		tag[n] = '\0';
		while (isspace((unsigned char)*q))
			q++;
		if (!n || *q != '{') {
			p = q;
			continue;
		}
		body = q + 1;
		end = strchr(body, '}');
		cr_assert_not_null(end, "%s: struct %s has no end", path, tag);
		cr_assert_eq(memchr(body, '{', (size_t)(end - body)), NULL,
			     "%s: struct %s has a nested body; teach this parser", path, tag);
		add(tag, "");
		for (char *d = body; d < end;) {
			char *semi = memchr(d, ';', (size_t)(end - d)), *e, field[64];
			size_t len;

			if (!semi)
				break;
			e = semi;
			while (e > d && isspace((unsigned char)e[-1]))
				e--;
			if (e > d && e[-1] == ']') { /* array bound */
				while (e > d && e[-1] != '[')
					e--;
				e--;
				while (e > d && isspace((unsigned char)e[-1]))
					e--;
			}
			len = 0;
			while (e - len > d && (isalnum((unsigned char)e[-(long)len - 1]) ||
					       e[-(long)len - 1] == '_'))
				len++;
			cr_assert_gt(len, 0, "%s: struct %s: no member name", path, tag);
			cr_assert_lt(len, sizeof(field));
			memcpy(field, e - len, len);
			field[len] = '\0';
			add(tag, field);
			d = semi + 1;
		}
		p = end;
	}
	free(s);
}

static void parse_all(void)
{
	const char *dir = getenv("IOUR_SRCDIR");
	char pat[512];
	glob_t g;

	n_parsed = 0;
	snprintf(pat, sizeof(pat), "%s/include/iouring_restrict/*.h", dir ? dir : ".");
	cr_assert_eq(glob(pat, 0, NULL, &g), 0, "no headers under %s", pat);
	for (size_t i = 0; i < g.gl_pathc; i++)
		parse_header(g.gl_pathv[i]);
	globfree(&g);
	/* The parser itself must see the well-known structs. */
	cr_assert_gt(n_parsed, 100);
}

static int in_table(const struct iour_layout_field *t, size_t cnt, const char *type,
		    const char *field)
{
	for (size_t i = 0; i < cnt; i++)
		if (!strcmp(t[i].type, type) && !strcmp(t[i].field, field))
			return 1;
	return 0;
}

static int in_parsed(const char *type, const char *field)
{
	for (size_t i = 0; i < n_parsed; i++)
		if (!strcmp(parsed[i].type, type) && !strcmp(parsed[i].field, field))
			return 1;
	return 0;
}

Test(layout, table_lists_every_public_struct_and_member_both_ways)
{
	size_t cnt = 0;
	const struct iour_layout_field *t = iour_abi_layout(&cnt);

	parse_all();
	cr_assert_not_null(t);
	cr_assert_null(t[cnt].type, "the table must end with a NULL type");
	for (size_t i = 0; i < n_parsed; i++)
		cr_expect(in_table(t, cnt, parsed[i].type, parsed[i].field),
			  "struct %s member '%s' is in the headers but not in iour_abi_layout()",
			  parsed[i].type, parsed[i].field);
	for (size_t i = 0; i < cnt; i++) {
		cr_assert_not_null(t[i].field);
		cr_expect(in_parsed(t[i].type, t[i].field),
			  "iour_abi_layout() row %s.%s is not in the headers", t[i].type,
			  t[i].field);
	}
	cr_assert_eq(cnt, n_parsed, "the table has %zu rows, the headers %zu", cnt, n_parsed);
	/* Same order: struct row, then members in declaration order. */
	for (size_t i = 0; i < cnt; i++)
		cr_expect(!strcmp(t[i].type, parsed[i].type) && !strcmp(t[i].field, parsed[i].field),
			  "row %zu is %s.%s, the headers say %s.%s", i, t[i].type, t[i].field,
			  parsed[i].type, parsed[i].field);
}

/* The same list, expanded in this file: what this compiler says. */
#define WANT_STRUCT(T) { #T, "", 0, sizeof(struct T), alignof(struct T) },
#define WANT_FIELD(T, M) { #T, #M, offsetof(struct T, M), sizeof(((struct T *)0)->M), 0 },

static const struct {
	const char *type, *field;
	size_t offset, size, align;
} want[] = { IOUR_LAYOUT_LIST(WANT_STRUCT, WANT_FIELD) };

Test(layout, rows_equal_offsetof_sizeof_alignof)
{
	size_t cnt = 0, i = 0;
	const struct iour_layout_field *t = iour_abi_layout(&cnt);

	cr_assert_eq(cnt, sizeof(want) / sizeof(want[0]));
	for (i = 0; i < cnt; i++) {
		cr_expect_str_eq(t[i].type, want[i].type, "row %zu", i);
		cr_expect_str_eq(t[i].field, want[i].field, "row %zu", i);
		cr_expect_eq(t[i].offset, want[i].offset, "offset of %s.%s", want[i].type,
			     want[i].field);
		cr_expect_eq(t[i].size, want[i].size, "size of %s.%s", want[i].type, want[i].field);
		cr_expect_eq(t[i].align, want[i].align, "align of %s.%s", want[i].type,
			     want[i].field);
		cr_expect_eq(t[i].resv, 0);
	}
	/* Spot checks against the numbers the ABI froze. */
	for (i = 0; i < cnt; i++) {
		if (!strcmp(t[i].type, "iour_insn") && !*t[i].field)
			cr_expect_eq(t[i].size, 8);
		if (!strcmp(t[i].type, "iour_restriction") && !*t[i].field)
			cr_expect_eq(t[i].size, 16);
	}
}

Test(layout, cnt_is_optional_and_table_is_static)
{
	size_t cnt = 0;
	const struct iour_layout_field *a = iour_abi_layout(NULL), *b = iour_abi_layout(&cnt);

	cr_assert_eq(a, b);
	cr_assert_gt(cnt, 0);
	cr_assert_null(a[cnt].type);
	cr_assert_null(a[cnt].field);
}
