/* SPDX-License-Identifier: MIT */
/*
 * Name tables of io_uring request opcodes, register opcodes and SQE flags.
 *
 * Each table is indexed by the kernel's number and records the kernel
 * version that added the entry.  Versions come from the io_uring man pages
 * and UAPI history, corrected where the numbering or a measurement on
 * 6.18.44 contradicts the man pages (see the notes next to the entries).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdint.h>
#include <strings.h>

#include "internal.h"
#include "iouring_restrict/names.h"

struct name_ent {
	const char *name; /* without the "IORING_OP_" / "IORING_" / "IOSQE_" prefix */
	uint32_t since;   /* IOUR_KVER() */
};

#define K(maj, min) IOUR_KVER(maj, min)

static const struct name_ent op_tab[IOUR_OP__COUNT] = {
	[IOUR_OP_NOP] = { "NOP", K(5, 1) },
	[IOUR_OP_READV] = { "READV", K(5, 1) },
	[IOUR_OP_WRITEV] = { "WRITEV", K(5, 1) },
	[IOUR_OP_FSYNC] = { "FSYNC", K(5, 1) },
	[IOUR_OP_READ_FIXED] = { "READ_FIXED", K(5, 1) },
	[IOUR_OP_WRITE_FIXED] = { "WRITE_FIXED", K(5, 1) },
	[IOUR_OP_POLL_ADD] = { "POLL_ADD", K(5, 1) },
	[IOUR_OP_POLL_REMOVE] = { "POLL_REMOVE", K(5, 1) },
	[IOUR_OP_SYNC_FILE_RANGE] = { "SYNC_FILE_RANGE", K(5, 2) },
	[IOUR_OP_SENDMSG] = { "SENDMSG", K(5, 3) },
	[IOUR_OP_RECVMSG] = { "RECVMSG", K(5, 3) },
	[IOUR_OP_TIMEOUT] = { "TIMEOUT", K(5, 4) },
	[IOUR_OP_TIMEOUT_REMOVE] = { "TIMEOUT_REMOVE", K(5, 5) },
	[IOUR_OP_ACCEPT] = { "ACCEPT", K(5, 5) },
	[IOUR_OP_ASYNC_CANCEL] = { "ASYNC_CANCEL", K(5, 5) },
	[IOUR_OP_LINK_TIMEOUT] = { "LINK_TIMEOUT", K(5, 5) },
	[IOUR_OP_CONNECT] = { "CONNECT", K(5, 5) },
	[IOUR_OP_FALLOCATE] = { "FALLOCATE", K(5, 6) },
	[IOUR_OP_OPENAT] = { "OPENAT", K(5, 6) },
	[IOUR_OP_CLOSE] = { "CLOSE", K(5, 6) },
	[IOUR_OP_FILES_UPDATE] = { "FILES_UPDATE", K(5, 6) },
	[IOUR_OP_STATX] = { "STATX", K(5, 6) },
	[IOUR_OP_READ] = { "READ", K(5, 6) },
	[IOUR_OP_WRITE] = { "WRITE", K(5, 6) },
	[IOUR_OP_FADVISE] = { "FADVISE", K(5, 6) },
	[IOUR_OP_MADVISE] = { "MADVISE", K(5, 6) },
	[IOUR_OP_SEND] = { "SEND", K(5, 6) },
	[IOUR_OP_RECV] = { "RECV", K(5, 6) },
	[IOUR_OP_OPENAT2] = { "OPENAT2", K(5, 6) },
	[IOUR_OP_EPOLL_CTL] = { "EPOLL_CTL", K(5, 6) },
	[IOUR_OP_SPLICE] = { "SPLICE", K(5, 7) },
	[IOUR_OP_PROVIDE_BUFFERS] = { "PROVIDE_BUFFERS", K(5, 7) },
	[IOUR_OP_REMOVE_BUFFERS] = { "REMOVE_BUFFERS", K(5, 7) },
	[IOUR_OP_TEE] = { "TEE", K(5, 8) },
	[IOUR_OP_SHUTDOWN] = { "SHUTDOWN", K(5, 11) },
	[IOUR_OP_RENAMEAT] = { "RENAMEAT", K(5, 11) },
	[IOUR_OP_UNLINKAT] = { "UNLINKAT", K(5, 11) },
	[IOUR_OP_MKDIRAT] = { "MKDIRAT", K(5, 15) },
	[IOUR_OP_SYMLINKAT] = { "SYMLINKAT", K(5, 15) },
	[IOUR_OP_LINKAT] = { "LINKAT", K(5, 15) },
	[IOUR_OP_MSG_RING] = { "MSG_RING", K(5, 18) },
	[IOUR_OP_FSETXATTR] = { "FSETXATTR", K(5, 19) },
	[IOUR_OP_SETXATTR] = { "SETXATTR", K(5, 19) },
	[IOUR_OP_FGETXATTR] = { "FGETXATTR", K(5, 19) },
	[IOUR_OP_GETXATTR] = { "GETXATTR", K(5, 19) },
	[IOUR_OP_SOCKET] = { "SOCKET", K(5, 19) },
	[IOUR_OP_URING_CMD] = { "URING_CMD", K(5, 19) },
	[IOUR_OP_SEND_ZC] = { "SEND_ZC", K(6, 0) },
	[IOUR_OP_SENDMSG_ZC] = { "SENDMSG_ZC", K(6, 1) },
	[IOUR_OP_READ_MULTISHOT] = { "READ_MULTISHOT", K(6, 7) },
	/* The man page says 6.5; the numbering (after READ_MULTISHOT, 6.7)
	 * says 6.7. */
	[IOUR_OP_WAITID] = { "WAITID", K(6, 7) },
	[IOUR_OP_FUTEX_WAIT] = { "FUTEX_WAIT", K(6, 7) },
	[IOUR_OP_FUTEX_WAKE] = { "FUTEX_WAKE", K(6, 7) },
	[IOUR_OP_FUTEX_WAITV] = { "FUTEX_WAITV", K(6, 7) },
	[IOUR_OP_FIXED_FD_INSTALL] = { "FIXED_FD_INSTALL", K(6, 8) },
	[IOUR_OP_FTRUNCATE] = { "FTRUNCATE", K(6, 9) },
	[IOUR_OP_BIND] = { "BIND", K(6, 11) },
	[IOUR_OP_LISTEN] = { "LISTEN", K(6, 11) },
	[IOUR_OP_RECV_ZC] = { "RECV_ZC", K(6, 15) },
	[IOUR_OP_EPOLL_WAIT] = { "EPOLL_WAIT", K(6, 15) },
	[IOUR_OP_READV_FIXED] = { "READV_FIXED", K(6, 15) },
	[IOUR_OP_WRITEV_FIXED] = { "WRITEV_FIXED", K(6, 15) },
	[IOUR_OP_PIPE] = { "PIPE", K(6, 16) },
	/* IORING_OP_LAST was 63 on 6.18 (measured through QUERY). */
	[IOUR_OP_NOP128] = { "NOP128", K(6, 19) },
	[IOUR_OP_URING_CMD128] = { "URING_CMD128", K(6, 19) },
};

static const struct name_ent reg_tab[IOUR_REGISTER__COUNT] = {
	[IOUR_REGISTER_BUFFERS] = { "REGISTER_BUFFERS", K(5, 1) },
	[IOUR_UNREGISTER_BUFFERS] = { "UNREGISTER_BUFFERS", K(5, 1) },
	[IOUR_REGISTER_FILES] = { "REGISTER_FILES", K(5, 1) },
	[IOUR_UNREGISTER_FILES] = { "UNREGISTER_FILES", K(5, 1) },
	[IOUR_REGISTER_EVENTFD] = { "REGISTER_EVENTFD", K(5, 2) },
	[IOUR_UNREGISTER_EVENTFD] = { "UNREGISTER_EVENTFD", K(5, 2) },
	[IOUR_REGISTER_FILES_UPDATE] = { "REGISTER_FILES_UPDATE", K(5, 5) },
	[IOUR_REGISTER_EVENTFD_ASYNC] = { "REGISTER_EVENTFD_ASYNC", K(5, 6) },
	[IOUR_REGISTER_PROBE] = { "REGISTER_PROBE", K(5, 6) },
	[IOUR_REGISTER_PERSONALITY] = { "REGISTER_PERSONALITY", K(5, 6) },
	[IOUR_UNREGISTER_PERSONALITY] = { "UNREGISTER_PERSONALITY", K(5, 6) },
	/* Ring fd from 5.10; on fd -1 (task level) from 7.0. */
	[IOUR_REGISTER_RESTRICTIONS] = { "REGISTER_RESTRICTIONS", K(5, 10) },
	[IOUR_REGISTER_ENABLE_RINGS] = { "REGISTER_ENABLE_RINGS", K(5, 10) },
	[IOUR_REGISTER_FILES2] = { "REGISTER_FILES2", K(5, 13) },
	[IOUR_REGISTER_FILES_UPDATE2] = { "REGISTER_FILES_UPDATE2", K(5, 13) },
	[IOUR_REGISTER_BUFFERS2] = { "REGISTER_BUFFERS2", K(5, 13) },
	[IOUR_REGISTER_BUFFERS_UPDATE] = { "REGISTER_BUFFERS_UPDATE", K(5, 13) },
	[IOUR_REGISTER_IOWQ_AFF] = { "REGISTER_IOWQ_AFF", K(5, 14) },
	[IOUR_UNREGISTER_IOWQ_AFF] = { "UNREGISTER_IOWQ_AFF", K(5, 14) },
	[IOUR_REGISTER_IOWQ_MAX_WORKERS] = { "REGISTER_IOWQ_MAX_WORKERS", K(5, 15) },
	[IOUR_REGISTER_RING_FDS] = { "REGISTER_RING_FDS", K(5, 18) },
	[IOUR_UNREGISTER_RING_FDS] = { "UNREGISTER_RING_FDS", K(5, 18) },
	[IOUR_REGISTER_PBUF_RING] = { "REGISTER_PBUF_RING", K(5, 19) },
	[IOUR_UNREGISTER_PBUF_RING] = { "UNREGISTER_PBUF_RING", K(5, 19) },
	[IOUR_REGISTER_SYNC_CANCEL] = { "REGISTER_SYNC_CANCEL", K(6, 0) },
	[IOUR_REGISTER_FILE_ALLOC_RANGE] = { "REGISTER_FILE_ALLOC_RANGE", K(6, 0) },
	[IOUR_REGISTER_PBUF_STATUS] = { "REGISTER_PBUF_STATUS", K(6, 8) },
	[IOUR_REGISTER_NAPI] = { "REGISTER_NAPI", K(6, 9) },
	[IOUR_UNREGISTER_NAPI] = { "UNREGISTER_NAPI", K(6, 9) },
	[IOUR_REGISTER_CLOCK] = { "REGISTER_CLOCK", K(6, 12) },
	[IOUR_REGISTER_CLONE_BUFFERS] = { "REGISTER_CLONE_BUFFERS", K(6, 12) },
	/* The first opcode that also works ring-less ("blind", fd -1). */
	[IOUR_REGISTER_SEND_MSG_RING] = { "REGISTER_SEND_MSG_RING", K(6, 13) },
	/* Number 32 was reserved for zero-copy receive when 33 and 34 were
	 * merged in 6.13; the opcode itself came in 6.15. */
	[IOUR_REGISTER_ZCRX_IFQ] = { "REGISTER_ZCRX_IFQ", K(6, 15) },
	[IOUR_REGISTER_RESIZE_RINGS] = { "REGISTER_RESIZE_RINGS", K(6, 13) },
	[IOUR_REGISTER_MEM_REGION] = { "REGISTER_MEM_REGION", K(6, 13) },
	/* The man page says 6.15; 6.18.44 answers it and reports
	 * IORING_REGISTER_LAST = 36, and 32 (6.15) precedes it. */
	[IOUR_REGISTER_QUERY] = { "REGISTER_QUERY", K(6, 18) },
	/* The man page says 6.15; absent on 6.18.44 (measured). */
	[IOUR_REGISTER_ZCRX_CTRL] = { "REGISTER_ZCRX_CTRL", K(6, 19) },
	[IOUR_REGISTER_BPF_FILTER] = { "REGISTER_BPF_FILTER", K(7, 0) },
};

/* Indexed by bit number. */
static const struct name_ent flag_tab[7] = {
	{ "FIXED_FILE", K(5, 1) },        { "IO_DRAIN", K(5, 2) }, { "IO_LINK", K(5, 3) },
	{ "IO_HARDLINK", K(5, 5) },       { "ASYNC", K(5, 6) },    { "BUFFER_SELECT", K(5, 7) },
	{ "CQE_SKIP_SUCCESS", K(5, 17) },
};

_Static_assert(IOUR_ARRAY_SIZE(flag_tab) == 7 && IOUR_SQE__VALID == 0x7f,
	       "one flag_tab entry per bit of IOUR_SQE__VALID");
_Static_assert(IOUR_OP__COUNT == KIO_OP_LAST_NEWEST, "opcode table size");
_Static_assert(IOUR_REGISTER__COUNT == KIO_REGISTER_LAST_NEWEST, "register table size");

/* Versions compare without the patch byte. */
static uint32_t kver_norm(uint32_t kver)
{
	return kver & ~0xffU;
}

/* Case-insensitive prefix strip: returns the rest of `s` after `prefix`,
 * or NULL if `s` does not start with it. */
static const char *strip(const char *s, const char *prefix)
{
	size_t n = strlen(prefix);

	return strncasecmp(s, prefix, n) == 0 ? s + n : NULL;
}

static int find(const struct name_ent *tab, size_t n, const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcasecmp(tab[i].name, name) == 0)
			return (int)i;
	return -ENOENT;
}

/* Count of entries with since <= kver, and one past the highest such. */
static void scan(const struct name_ent *tab, size_t n, uint32_t kver, size_t *count, size_t *last)
{
	size_t i;

	*count = 0;
	*last = 0;
	kver = kver_norm(kver);
	for (i = 0; i < n; i++) {
		if (tab[i].since <= kver) {
			(*count)++;
			*last = i + 1;
		}
	}
}

static int list_up_to(const struct name_ent *tab, size_t n, uint32_t kver, uint32_t *out,
		      size_t cap)
{
	size_t count, last, i, k = 0;

	if (!out && cap)
		return -EINVAL;
	scan(tab, n, kver, &count, &last);
	if (!out)
		return (int)count;
	if (cap < count)
		return -ERANGE;
	kver = kver_norm(kver);
	for (i = 0; i < n; i++)
		if (tab[i].since <= kver)
			out[k++] = (uint32_t)i;
	return (int)count;
}

/* ---- request opcodes ---- */

/* Documented in include/iouring_restrict/names.h */
int iour_opcode_from_name(const char *name)
{
	const char *s;

	if (!name)
		return -EINVAL;
	s = strip(name, "IORING_OP_");
	return find(op_tab, IOUR_ARRAY_SIZE(op_tab), s ? s : name);
}

/* Documented in include/iouring_restrict/names.h */
const char *iour_opcode_name(uint32_t op)
{
	return op < IOUR_OP__COUNT ? op_tab[op].name : NULL;
}

/* Documented in include/iouring_restrict/names.h */
int iour_opcode_since(uint32_t op)
{
	return op < IOUR_OP__COUNT ? (int)op_tab[op].since : -ENOENT;
}

/* Documented in include/iouring_restrict/names.h */
int iour_opcode_last(uint32_t kver)
{
	size_t count, last;

	/* Request opcodes were always added in numeric order, so the count
	 * and one-past-the-highest agree (the tests check it). */
	scan(op_tab, IOUR_ARRAY_SIZE(op_tab), kver, &count, &last);
	return (int)last;
}

/* Documented in include/iouring_restrict/names.h */
int iour_opcodes_up_to(uint32_t kver, uint32_t *ops, size_t cap)
{
	return list_up_to(op_tab, IOUR_ARRAY_SIZE(op_tab), kver, ops, cap);
}

/* ---- register opcodes ---- */

/* Documented in include/iouring_restrict/names.h */
int iour_register_op_from_name(const char *name)
{
	const size_t n = IOUR_ARRAY_SIZE(reg_tab);
	const char *s;
	size_t i;

	if (!name)
		return -EINVAL;
	/* "IORING_X": X must be a table name exactly. */
	s = strip(name, "IORING_");
	if (s)
		return find(reg_tab, n, s);
	/* "X": a table name, or a table name without its "REGISTER_". */
	for (i = 0; i < n; i++) {
		const char *t = reg_tab[i].name;
		const char *shortname = strip(t, "REGISTER_");

		if (strcasecmp(t, name) == 0 || (shortname && strcasecmp(shortname, name) == 0))
			return (int)i;
	}
	return -ENOENT;
}

/* Documented in include/iouring_restrict/names.h */
const char *iour_register_op_name(uint32_t op)
{
	return op < IOUR_REGISTER__COUNT ? reg_tab[op].name : NULL;
}

/* Documented in include/iouring_restrict/names.h */
int iour_register_op_since(uint32_t op)
{
	return op < IOUR_REGISTER__COUNT ? (int)reg_tab[op].since : -ENOENT;
}

/* Documented in include/iouring_restrict/names.h */
int iour_register_op_last(uint32_t kver)
{
	size_t count, last;

	scan(reg_tab, IOUR_ARRAY_SIZE(reg_tab), kver, &count, &last);
	return (int)last;
}

/* Documented in include/iouring_restrict/names.h */
int iour_register_ops_up_to(uint32_t kver, uint32_t *ops, size_t cap)
{
	return list_up_to(reg_tab, IOUR_ARRAY_SIZE(reg_tab), kver, ops, cap);
}

/* ---- kernel limits from the tables ---- */

uint32_t iour__reg_last_for_op_last(uint32_t op_last)
{
	/* The kernels to choose from are 5.10 (the first with per-ring
	 * restrictions) and every later version that added a request opcode:
	 * the newest of them whose IORING_OP_LAST is still <= op_last is the
	 * oldest kernel with that limit, so its IORING_REGISTER_LAST is the
	 * smallest (doc/kernel.md 6.1 and 6.2). */
	const uint32_t first = K(5, 10);
	uint32_t best = 0, v;
	size_t i;

	if ((uint32_t)iour_opcode_last(first) > op_last)
		return 0;
	best = first;
	for (i = 0; i < IOUR_ARRAY_SIZE(op_tab); i++) {
		v = op_tab[i].since;
		if (v > best && (uint32_t)iour_opcode_last(v) <= op_last)
			best = v;
	}
	return (uint32_t)iour_register_op_last(best);
}

/* ---- SQE flags ---- */

static int flag_bit(uint32_t flag)
{
	if (!flag || (flag & (flag - 1)) || (flag & ~(uint32_t)IOUR_SQE__VALID))
		return -1;
	return __builtin_ctz(flag);
}

/* Documented in include/iouring_restrict/names.h */
int iour_sqe_flag_from_name(const char *name)
{
	const char *s;
	int bit;

	if (!name)
		return -EINVAL;
	s = strip(name, "IOSQE_");
	bit = find(flag_tab, IOUR_ARRAY_SIZE(flag_tab), s ? s : name);
	return bit < 0 ? bit : 1 << bit;
}

/* Documented in include/iouring_restrict/names.h */
const char *iour_sqe_flag_name(uint32_t flag)
{
	int bit = flag_bit(flag);

	return bit < 0 ? NULL : flag_tab[bit].name;
}

/* Documented in include/iouring_restrict/names.h */
int iour_sqe_flag_since(uint32_t flag)
{
	int bit = flag_bit(flag);

	return bit < 0 ? -ENOENT : (int)flag_tab[bit].since;
}

/* Documented in include/iouring_restrict/names.h */
int iour_sqe_flags_up_to(uint32_t kver)
{
	int mask = 0;
	size_t i;

	kver = kver_norm(kver);
	for (i = 0; i < IOUR_ARRAY_SIZE(flag_tab); i++)
		if (flag_tab[i].since <= kver)
			mask |= 1 << i;
	return mask;
}

/* ---- suggestions ----------------------------------------------------------- */

/* Levenshtein distance, case-insensitive, of two short names; names longer
 * than 63 bytes count as far from everything. */
static size_t distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i, j;
	size_t row[64];

	if (la >= 64 || lb >= 64)
		return SIZE_MAX;
	for (j = 0; j <= lb; j++)
		row[j] = j;
	for (i = 1; i <= la; i++) {
		size_t diag = row[0];

		row[0] = i;
		for (j = 1; j <= lb; j++) {
			size_t up = row[j];
			size_t cost = tolower((unsigned char)a[i - 1]) ==
						      tolower((unsigned char)b[j - 1]) ?
					      0 :
					      1;
			size_t best = diag + cost;

			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			if (up + 1 < best)
				best = up + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

/* The rest of `name` after the longest of `prefixes` it starts with. */
static const char *bare(const char *name, const char *const *prefixes)
{
	const char *best = name, *s;

	for (; *prefixes; prefixes++)
		if ((s = strip(name, *prefixes)) && s > best)
			best = s;
	return best;
}

/* Documented in include/iouring_restrict/names.h */
const char *iour_name_suggest(uint32_t kind, const char *name)
{
	static const char *const op_pfx[] = { "IORING_OP_", NULL };
	static const char *const reg_pfx[] = { "IORING_", NULL };
	static const char *const flag_pfx[] = { "IOSQE_", NULL };
	const struct name_ent *tab;
	const char *b, *best = NULL;
	size_t n, i, d, best_d = SIZE_MAX, len;

	if (!name)
		return NULL;
	switch (kind) {
	case IOUR_NAME_OPCODE:
		tab = op_tab;
		n = IOUR_ARRAY_SIZE(op_tab);
		b = bare(name, op_pfx);
		break;
	case IOUR_NAME_REGISTER_OP:
		tab = reg_tab;
		n = IOUR_ARRAY_SIZE(reg_tab);
		b = bare(name, reg_pfx);
		break;
	case IOUR_NAME_SQE_FLAG:
		tab = flag_tab;
		n = IOUR_ARRAY_SIZE(flag_tab);
		b = bare(name, flag_pfx);
		break;
	default:
		return NULL;
	}
	len = strlen(b);
	if (!len)
		return NULL;
	for (i = 0; i < n; i++) {
		const char *t = tab[i].name, *shortname;

		if (!t)
			continue;
		d = distance(b, t);
		/* register opcodes are also written without "REGISTER_" */
		if (kind == IOUR_NAME_REGISTER_OP && (shortname = strip(t, "REGISTER_")) &&
		    distance(b, shortname) < d)
			d = distance(b, shortname);
		/* ties: a name the input starts with ("readd": READ, not READV) */
		if (d < best_d || (d == best_d && best && strncasecmp(b, t, strlen(t)) == 0 &&
				   strncasecmp(b, best, strlen(best)) != 0)) {
			best_d = d;
			best = t;
		}
	}
	/* Near enough to be a typo: at most a third of the name, at least 1
	 * and at most 3 edits; an exact match is no suggestion. */
	if (!best || best_d == 0 || best_d > (len / 3 > 3 ? 3 : len / 3 ? len / 3 : 1))
		return NULL;
	return best;
}

const char *iour__op_label(uint32_t op, char *tmp, size_t tmplen)
{
	const char *n = iour_opcode_name(op);

	if (n)
		return n;
	snprintf(tmp, tmplen, "opcode %u", op);
	return tmp;
}
