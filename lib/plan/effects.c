/* SPDX-License-Identifier: MIT */
/*
 * The effects table: what a program can achieve, and every path to each
 * effect, with the kernel version that added the path (doc/security.md,
 * section 2.1).  The kernel restricts opcodes; a policy author thinks in
 * effects ("cannot reach 10.0.0.0/8", "only registered files").  Where
 * several opcodes lead to one effect, a plan's report says which paths are
 * closed, filtered or open on the target kernel.
 *
 * Each path's version was checked against the kernel's history
 * (doc/kernel.md 6.7 gives the evidence per path).  A path's version is
 * read from the name tables (lib/base/names.c; doc/kernel.md 6.1, 6.2), the
 * opcode's, unless the row gives one because the path came later or
 * earlier than its opcode (REQ_AT), and where the request schema
 * (lib/base/schema.def) gives an opcode a filter payload, the kernel that
 * first filters it is written from there.  Notes on the versions:
 *
 *   SEND with an address (addr2)   6.1   sendto for plain SEND came with
 *                                        SENDMSG_ZC; SEND_ZC had it at 6.0
 *   SCM_RIGHTS through SENDMSG or  5.3   allowed at 5.3, refused (-EINVAL)
 *   RECVMSG                              from 5.5 to 5.11, allowed again
 *                                        from 5.12 and in 5.10.162+ stable
 *   RENAMEAT                       5.10  5.11 upstream; 5.10.162+ stable
 *                                        carries 5.15's io_uring
 *   OPENAT/OPENAT2 into the fixed  5.15  direct descriptors
 *   table
 *   MSG_RING send-fd               6.0   data messages from 5.18
 *   ring-less register calls       6.13  SEND_MSG_RING; QUERY 6.18
 *
 * Where a path exists only on some kernels of a range, the earliest
 * version is given: a report that lists a path the kernel lacks is safe,
 * one that omits a path the kernel has is not.  Whether a path is absent
 * on a kernel is decided from the opcode number alone (path_state()), so
 * these versions are shown, never used to hide a path.  The limits come
 * from the running kernel, or for a named version (--kernel X.Y) from the
 * name tables, which describe releases: 5.10.162+ stable has RENAMEAT,
 * UNLINKAT and SHUTDOWN, which a "5.10" from the tables lacks.
 */
#include <stdio.h>
#include <string.h>

#include "effects.h"
#include "probe/kernel.h"
#include "base/schema.h"
#include "base/uapi.h"
#include "iouring_restrict/names.h"
#include "iouring_restrict/report.h"

enum path_kind {
	P_REQ = 1,   /* a request opcode */
	P_REG = 2,   /* a register opcode on a ring */
	P_BLIND = 3, /* a register opcode on fd -1 (no ring) */
};

struct path {
	uint8_t kind;
	uint16_t num;
	uint32_t since; /* IOUR_KVER() of the path; 0: the opcode's */
	const char *how;
	const char *filter; /* what the opcode's filter payload inspects, or NULL */
};

struct effect {
	const char *key;
	const char *name;
	const struct path *paths;
	size_t npaths;
	uint32_t id;     /* enum iour_effect */
	bool fixed_only; /* meaningful only when IOSQE_FIXED_FILE is required */
};

#define K(a, b) IOUR_KVER(a, b)
#define REQ(op, how)                              \
	{                                         \
		P_REQ, IOUR_OP_##op, 0, how, NULL \
	}
#define REQ_AT(op, a, b, how)                           \
	{                                               \
		P_REQ, IOUR_OP_##op, K(a, b), how, NULL \
	}
#define REQ_FILTERED(op, how, what)               \
	{                                         \
		P_REQ, IOUR_OP_##op, 0, how, what \
	}
#define REG(op, how)                           \
	{                                      \
		P_REG, IOUR_##op, 0, how, NULL \
	}
#define BLIND(op, how)                           \
	{                                        \
		P_BLIND, IOUR_##op, 0, how, NULL \
	}

static const struct path net_dest[] = {
	REQ_FILTERED(CONNECT, "connect", "destination filters"),
	REQ(SENDMSG, "msg_name: UDP sendto, TCP MSG_FASTOPEN"),
	REQ(SEND_ZC, "destination address (addr2)"),
	REQ_AT(SEND, 6, 1, "destination address (addr2)"),
	REQ(SENDMSG_ZC, "msg_name"),
};

/* Files that were not open (or names that did not exist) before; the
 * fixed-file table's own inputs (REGISTER_FILES, FILES_UPDATE) take
 * descriptors the task holds already and belong to no effect here
 * (doc/security.md 3, "A fixed-file table is not sealed"). */
static const struct path file_open[] = {
	REQ(OPENAT, "open, create, truncate; direct into the fixed table 5.15"),
	REQ(OPENAT2, "open, create, truncate; direct into the fixed table 5.15"),
	REQ_AT(RENAMEAT, 5, 10, "new name; 5.11, and 5.10.162+ stable"),
	REQ(MKDIRAT, "new directory"),
	REQ(SYMLINKAT, "new symlink"),
	REQ(LINKAT, "new hard link"),
};

static const struct path plain_fd[] = {
	REQ(SPLICE, "fd_in without SPLICE_F_FD_IN_FIXED"),
	REQ(TEE, "fd_in without SPLICE_F_FD_IN_FIXED"),
	REQ(EPOLL_CTL, "epoll descriptor and target descriptor"),
	REQ(WAITID, "P_PIDFD id"),
	REQ(SENDMSG, "SCM_RIGHTS descriptors; -EINVAL 5.5-5.11 before 5.10.162"),
	REQ(SENDMSG_ZC, "SCM_RIGHTS descriptors"),
	REQ(URING_CMD, "driver-defined payloads"),
};

static const struct path cross_ring[] = {
	REQ(MSG_RING, "data to any ring it can name; send-fd 6.0"),
	BLIND(REGISTER_SEND_MSG_RING, "ring-less MSG_RING"),
	REQ(FIXED_FD_INSTALL, "a fixed file becomes a plain descriptor"),
	REQ(SENDMSG, "SCM_RIGHTS over unix sockets; -EINVAL 5.5-5.11 before 5.10.162"),
	REQ(RECVMSG, "SCM_RIGHTS received; -EINVAL 5.5-5.11 before 5.10.162"),
	REQ(SENDMSG_ZC, "SCM_RIGHTS over unix sockets"),
};

static const struct path mem_reg[] = {
	REG(REGISTER_BUFFERS, "pins user memory"),
	REG(REGISTER_BUFFERS2, "pins user memory"),
	REG(REGISTER_BUFFERS_UPDATE, "pins user memory"),
	REG(REGISTER_PBUF_RING, "buffer ring"),
	REG(REGISTER_CLONE_BUFFERS, "another ring's buffers"),
	REG(REGISTER_RESIZE_RINGS, "new rings; user pages with IORING_SETUP_NO_MMAP"),
	REG(REGISTER_MEM_REGION, "memory region"),
	REG(REGISTER_ZCRX_IFQ, "zero-copy receive area"),
	REQ(PROVIDE_BUFFERS, "buffers the kernel writes into"),
};

static const struct path ringless_reg[] = {
	BLIND(REGISTER_SEND_MSG_RING, "posts a completion into any ring it can name"),
	BLIND(REGISTER_QUERY, "kernel capabilities"),
};

#define E(i, k, n, f, t)                                                                        \
	{                                                                                       \
		.key = (k), .name = (n), .paths = (t), .npaths = IOUR_ARRAY_SIZE(t), .id = (i), \
		.fixed_only = (f)                                                               \
	}

static const struct effect effects[] = {
	E(IOUR_EFFECT_NET_DEST, "net-dest", "network destination", false, net_dest),
	E(IOUR_EFFECT_FILE_OPEN, "file-open", "file open and creation", false, file_open),
	E(IOUR_EFFECT_PLAIN_FD, "plain-fd", "plain descriptors despite FIXED_FILE", true, plain_fd),
	E(IOUR_EFFECT_CROSS_RING, "cross-ring", "descriptor passing and cross-ring messages", false,
	  cross_ring),
	E(IOUR_EFFECT_MEM_REG, "mem-reg", "memory registration", false, mem_reg),
	E(IOUR_EFFECT_RINGLESS_REG, "ringless-register", "ring-less register calls", false,
	  ringless_reg),
};

enum { ST_ABSENT = 0, ST_CLOSED, ST_FILTERED, ST_OPEN };

static bool blind_exists(uint32_t reg, uint32_t reg_last)
{
	/* The blind path came with SEND_MSG_RING (6.13); an opcode exists on
	 * it only where the kernel has the opcode (doc/kernel.md, 2). */
	return reg_last > IOUR_REGISTER_SEND_MSG_RING && reg < reg_last;
}

static int path_state(const struct path *p, const struct iour__effect_in *in)
{
	switch (p->kind) {
	case P_REQ:
		if (p->num >= in->op_last)
			return ST_ABSENT;
		if (in->no_new_rings)
			return ST_CLOSED;
		if (!in->rings)
			return ST_OPEN;
		return in->achieved[p->num] == IOUR__V_DENY   ? ST_CLOSED :
		       in->achieved[p->num] == IOUR__V_FILTER ? ST_FILTERED :
								ST_OPEN;
	case P_REG:
		if (p->num >= in->reg_last)
			return ST_ABSENT;
		if (in->no_new_rings)
			return ST_CLOSED;
		if (!in->rings)
			return ST_OPEN;
		return in->eff->reg_restricted && !iour__bm_test(&in->eff->reg_ops, p->num) ?
			       ST_CLOSED :
			       ST_OPEN;
	default:
		if (!blind_exists(p->num, in->reg_last))
			return ST_ABSENT;
		if (in->blind_denied & (1ULL << p->num))
			return ST_CLOSED;
		if (in->blind_reached && in->blind_gated && in->eff->reg_restricted &&
		    !iour__bm_test(&in->eff->reg_ops, p->num))
			return ST_CLOSED;
		return ST_OPEN;
	}
}

static const char *path_name(const struct path *p)
{
	const char *n = p->kind == P_REQ ? iour_opcode_name(p->num) : iour_register_op_name(p->num);

	return n ? n : "?";
}

/* The kernel version that added a path: the row's, else its opcode's. */
static uint32_t path_since(const struct path *p)
{
	int v;

	if (p->since)
		return p->since;
	v = p->kind == P_REQ ? iour_opcode_since(p->num) : iour_register_op_since(p->num);
	return v > 0 ? (uint32_t)v : 0;
}

/* Open and filtered paths with how and since; closed ones by name. */
static void add_path(char *buf, size_t len, const struct path *p, bool detail)
{
	size_t used = strlen(buf);
	const uint32_t since = path_since(p);
	int maj = (int)(since >> 16), min = (int)((since >> 8) & 0xff);
	char how[128];

	/* The kernel of the opcode's payload row (lib/base/schema.def). */
	const struct iour__schema_payload *pl = p->filter ? iour__schema_payload_of(p->num) : NULL;

	if (pl) {
		uint32_t k = iour__kernel_level_kver(pl->level);

		snprintf(how, sizeof(how), "%s; %s need %u.%u", p->how, p->filter, k >> 16,
			 (k >> 8) & 0xff);
	} else {
		snprintf(how, sizeof(how), "%s", p->how);
	}
	if (detail)
		snprintf(buf + used, len - used, "%s%s%s (%s; %d.%d+)", used ? ", " : "",
			 p->kind == P_BLIND ? "fd -1 " : "", path_name(p), how, maj, min);
	else
		snprintf(buf + used, len - used, "%s%s%s", used ? ", " : "",
			 p->kind == P_BLIND ? "fd -1 " : "", path_name(p));
}

uint64_t iour__effects_blind_unlisted(const struct iour_ruleset *eff, uint32_t reg_last)
{
	static const uint32_t blind[] = { IOUR_REGISTER_SEND_MSG_RING, IOUR_REGISTER_QUERY,
					  IOUR_REGISTER_BPF_FILTER };
	uint64_t m = 0;

	if (!eff->reg_restricted)
		return 0;
	for (size_t i = 0; i < IOUR_ARRAY_SIZE(blind); i++)
		if (blind_exists(blind[i], reg_last) && !iour__bm_test(&eff->reg_ops, blind[i]))
			m |= 1ULL << blind[i];
	return m;
}

bool iour__effects_report(struct iour_report *r, const struct iour__effect_in *in)
{
	bool fixed = (in->eff->flags_required & IOUR_SQE_FIXED_FILE) != 0, plain_open = false;

	if (!r) {
		/* The verdict alone: no text is formatted (nor its buffers
		 * cleared). */
		for (size_t e = 0; e < IOUR_ARRAY_SIZE(effects); e++) {
			const struct effect *ef = &effects[e];

			if (ef->id != IOUR_EFFECT_PLAIN_FD || (ef->fixed_only && !fixed))
				continue;
			for (size_t i = 0; i < ef->npaths; i++)
				if (path_state(&ef->paths[i], in) == ST_OPEN)
					plain_open = true;
		}
		return plain_open;
	}
	for (size_t e = 0; e < IOUR_ARRAY_SIZE(effects); e++) {
		const struct effect *ef = &effects[e];
		char open[1024] = "", filt[512] = "", closed[512] = "";
		size_t n_open = 0, n_filt = 0, n_closed = 0, n_denied_open = 0;
		uint32_t first_open = IOUR_DECISION_NO_OPCODE, reason;
		const char *state;

		if (ef->fixed_only && !fixed)
			continue;
		for (size_t i = 0; i < ef->npaths; i++) {
			const struct path *p = &ef->paths[i];

			switch (path_state(p, in)) {
			case ST_OPEN:
				/* A ring-less register call the policy does not
				 * allow, open on the task: the policy touches it. */
				if (p->kind == P_BLIND && in->blind_reached &&
				    in->eff->reg_restricted &&
				    !iour__bm_test(&in->eff->reg_ops, p->num))
					n_denied_open++;
				add_path(open, sizeof(open), p, true);
				if (first_open == IOUR_DECISION_NO_OPCODE && p->kind == P_REQ)
					first_open = p->num;
				n_open++;
				if (ef->id == IOUR_EFFECT_PLAIN_FD) {
					plain_open = true;
					iour__report_add(
						r, IOUR_DECISION_LOOSENED, IOUR_REASON_FIXED_FILES,
						p->num, UINT32_MAX, 0,
						"%s: the set requires IOSQE_FIXED_FILE, yet "
						"this opcode names a plain descriptor (%s): "
						"requests do not use only registered files",
						path_name(p), p->how);
				}
				break;
			case ST_FILTERED:
				add_path(filt, sizeof(filt), p, true);
				n_filt++;
				break;
			case ST_CLOSED:
				add_path(closed, sizeof(closed), p, false);
				n_closed++;
				break;
			default:
				break;
			}
		}
		if (!n_open && !n_filt && !n_closed)
			continue; /* no path on this kernel */
		if (!ef->fixed_only && !n_filt && !n_closed && !n_denied_open)
			continue; /* the policy does not touch it */
		if (n_open) {
			reason = IOUR_REASON_EFFECT_OPEN;
			state = "open";
		} else if (n_filt) {
			reason = IOUR_REASON_EFFECT_FILTERED;
			state = "filtered";
		} else {
			reason = IOUR_REASON_EFFECT_CLOSED;
			state = "closed";
		}
		iour__report_add(r, IOUR_DECISION_NOTE, reason, first_open, UINT32_MAX,
				 (int32_t)ef->id, "effect %s (%s): %s%s%s%s%s%s%s%s%s", ef->key,
				 ef->name, state, n_open ? "; open: " : "", open,
				 n_filt ? "; filtered: " : "", filt, n_closed ? "; closed: " : "",
				 closed,
				 n_open && n_filt ? "; the open paths bypass the filters" : "", "");
	}
	return plain_open;
}
