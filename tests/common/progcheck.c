/* SPDX-License-Identifier: MIT */
#include <stdlib.h>

#include "progcheck.h"

#define ST_UNREACHED (-2)
#define ST_UNKNOWN (-1)

static int is_jump(uint16_t code)
{
	return (code & 7) == 5;
}

static int is_ja(uint16_t code)
{
	return code == 0x05;
}

static void meet(long *in, long v)
{
	if (*in == ST_UNREACHED)
		*in = v;
	else if (*in != v)
		*in = ST_UNKNOWN;
}

size_t prog_redundant_loads(const struct iour_insn *p, size_t cnt)
{
	long *in = malloc(cnt * sizeof(*in));
	size_t bad = 0;

	for (size_t i = 0; i < cnt; i++)
		in[i] = ST_UNREACHED;
	in[0] = ST_UNKNOWN;
	for (size_t i = 0; i < cnt; i++) {
		uint16_t c = p[i].code;
		long out = ST_UNKNOWN;
		size_t succ[2];
		int ns = 0;

		if (in[i] == ST_UNREACHED)
			continue;
		if (c == 0x20) /* ld [k] */
			out = (long)p[i].k;
		else if (is_jump(c) || c == 0x07 || c == 0x01 || c == 0x61 || c == 0x02 ||
			 c == 0x03 || c == 0x81)
			out = in[i]; /* jumps, tax, ldx imm/mem/len, st, stx */
		if ((c & 7) == 6)
			continue;
		if (is_ja(c)) {
			succ[ns++] = i + 1 + p[i].k;
		} else if (is_jump(c)) {
			succ[ns++] = i + 1 + p[i].jt;
			succ[ns++] = i + 1 + p[i].jf;
		} else {
			succ[ns++] = i + 1;
		}
		for (int s = 0; s < ns; s++) {
			size_t t = succ[s];

			if (t >= cnt)
				continue;
			if (p[t].code == 0x20 && out >= 0 && (long)p[t].k == out)
				bad++;
			meet(&in[t], out);
		}
	}
	free(in);
	return bad;
}

uint32_t prog_longest_path(const struct iour_insn *p, size_t cnt)
{
	uint32_t *len = calloc(cnt, sizeof(*len)), best;

	for (size_t i = cnt; i-- > 0;) {
		uint16_t c = p[i].code;

		if ((c & 7) == 6)
			len[i] = 1;
		else if (is_ja(c))
			len[i] = 1 + len[i + 1 + p[i].k];
		else if (is_jump(c)) {
			uint32_t a = len[i + 1 + p[i].jt], b = len[i + 1 + p[i].jf];

			len[i] = 1 + (a > b ? a : b);
		} else
			len[i] = 1 + len[i + 1];
	}
	best = cnt ? len[0] : 0;
	free(len);
	return best;
}

size_t prog_count(const struct iour_insn *p, size_t cnt, uint16_t code, uint32_t k, int any_k)
{
	size_t n = 0;

	for (size_t i = 0; i < cnt; i++)
		if (p[i].code == code && (any_k || p[i].k == k))
			n++;
	return n;
}
