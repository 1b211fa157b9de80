/* SPDX-License-Identifier: MIT */
/*
 * The opcode groups of policy files ("@file-read", ...): one table, listed
 * by `iour-restrict groups`.  A group names opcodes only; the kernel
 * version that added each member comes from the names tables (names.c),
 * so "a group as of kernel X.Y" is the same set on every machine.  See
 * doc/policy-files.md for what each group is for.
 */
#include <strings.h>

#include "internal.h"
#include "iouring_restrict/names.h"
#include "iouring_restrict/policyfile.h"

struct group {
	const char *name;
	const char *help;
	const char *source;
	const uint8_t *ops;
	size_t nops;
	const uint8_t *regs;
	size_t nregs;
};

#define OPS(...) (const uint8_t[]){ __VA_ARGS__ }, sizeof((const uint8_t[]){ __VA_ARGS__ })
#define NONE NULL, 0

/* Members are kept in ascending order (iour_group_opcodes() relies on
 * it; tests/unit/test_policyfile.c checks it). */
static const struct group groups[] = {
	{ "@file-read", "read files: open, read (plain, vectored, fixed, multishot), stat, close",
	  "the request opcodes that read file data or metadata without changing them",
	  OPS(IOUR_OP_READV, IOUR_OP_READ_FIXED, IOUR_OP_OPENAT, IOUR_OP_CLOSE, IOUR_OP_STATX,
	      IOUR_OP_READ, IOUR_OP_FADVISE, IOUR_OP_OPENAT2, IOUR_OP_FGETXATTR, IOUR_OP_GETXATTR,
	      IOUR_OP_READ_MULTISHOT, IOUR_OP_READV_FIXED),
	  NONE },
	{ "@file-write", "write files: write (plain, vectored, fixed), sync, allocate, truncate",
	  "the request opcodes that change file data (opening is in @file-read)",
	  OPS(IOUR_OP_WRITEV, IOUR_OP_FSYNC, IOUR_OP_WRITE_FIXED, IOUR_OP_SYNC_FILE_RANGE,
	      IOUR_OP_FALLOCATE, IOUR_OP_WRITE, IOUR_OP_FTRUNCATE, IOUR_OP_WRITEV_FIXED),
	  NONE },
	{ "@file-meta",
	  "change the file system tree and attributes: rename, unlink, mkdir, links, xattrs",
	  "the request opcodes that change names, directories and extended attributes",
	  OPS(IOUR_OP_RENAMEAT, IOUR_OP_UNLINKAT, IOUR_OP_MKDIRAT, IOUR_OP_SYMLINKAT,
	      IOUR_OP_LINKAT, IOUR_OP_FSETXATTR, IOUR_OP_SETXATTR),
	  NONE },
	{ "@net-client", "open sockets, connect, send and receive, shut down",
	  "the request opcodes of an outgoing connection (zero-copy sends included)",
	  OPS(IOUR_OP_SENDMSG, IOUR_OP_RECVMSG, IOUR_OP_CONNECT, IOUR_OP_CLOSE, IOUR_OP_SEND,
	      IOUR_OP_RECV, IOUR_OP_SHUTDOWN, IOUR_OP_SOCKET, IOUR_OP_SEND_ZC, IOUR_OP_SENDMSG_ZC),
	  NONE },
	{ "@net-server", "open sockets, bind, listen, accept, send and receive, shut down",
	  "the request opcodes of a listening server (zero-copy sends included)",
	  OPS(IOUR_OP_SENDMSG, IOUR_OP_RECVMSG, IOUR_OP_ACCEPT, IOUR_OP_CLOSE, IOUR_OP_SEND,
	      IOUR_OP_RECV, IOUR_OP_SHUTDOWN, IOUR_OP_SOCKET, IOUR_OP_SEND_ZC, IOUR_OP_SENDMSG_ZC,
	      IOUR_OP_BIND, IOUR_OP_LISTEN),
	  NONE },
	{ "@timers", "timeouts and their removal, linked timeouts", "the timeout request opcodes",
	  OPS(IOUR_OP_TIMEOUT, IOUR_OP_TIMEOUT_REMOVE, IOUR_OP_LINK_TIMEOUT), NONE },
	{ "@sync", "cancel requests, no-ops, futexes, waitid",
	  "request opcodes that synchronise with other requests, tasks or threads",
	  OPS(IOUR_OP_NOP, IOUR_OP_ASYNC_CANCEL, IOUR_OP_WAITID, IOUR_OP_FUTEX_WAIT,
	      IOUR_OP_FUTEX_WAKE, IOUR_OP_FUTEX_WAITV),
	  NONE },
	{ "@poll", "poll and epoll through the ring", "the readiness request opcodes",
	  OPS(IOUR_OP_POLL_ADD, IOUR_OP_POLL_REMOVE, IOUR_OP_EPOLL_CTL, IOUR_OP_EPOLL_WAIT), NONE },
	{ "@buffers", "provided buffers (legacy and ring) and registered buffers",
	  "PROVIDE/REMOVE_BUFFERS and the register opcodes of registered and provided buffers",
	  OPS(IOUR_OP_PROVIDE_BUFFERS, IOUR_OP_REMOVE_BUFFERS),
	  OPS(IOUR_REGISTER_BUFFERS, IOUR_UNREGISTER_BUFFERS, IOUR_REGISTER_BUFFERS2,
	      IOUR_REGISTER_BUFFERS_UPDATE, IOUR_REGISTER_PBUF_RING, IOUR_UNREGISTER_PBUF_RING,
	      IOUR_REGISTER_PBUF_STATUS, IOUR_REGISTER_CLONE_BUFFERS) },
	{ "@probe", "ask the ring which opcodes it supports",
	  "IORING_REGISTER_PROBE, which liburing's io_uring_get_probe_ring() issues", NONE,
	  OPS(IOUR_REGISTER_PROBE) },
	/* libuv: src/unix/linux.c of libuv's v1.x branch (2026) declares the
	 * request opcodes it submits in its UV__IORING_OP_* enum (READV,
	 * WRITEV, FSYNC, OPENAT, CLOSE, STATX, EPOLL_CTL, RENAMEAT, UNLINKAT,
	 * MKDIRAT, SYMLINKAT, LINKAT, FTRUNCATE) and registers nothing. */
	{ "@libuv", "what libuv's Linux backend submits (file system requests, batched epoll_ctl)",
	  "libuv src/unix/linux.c, v1.x branch: its UV__IORING_OP_* opcodes; it registers nothing",
	  OPS(IOUR_OP_READV, IOUR_OP_WRITEV, IOUR_OP_FSYNC, IOUR_OP_OPENAT, IOUR_OP_CLOSE,
	      IOUR_OP_STATX, IOUR_OP_EPOLL_CTL, IOUR_OP_RENAMEAT, IOUR_OP_UNLINKAT, IOUR_OP_MKDIRAT,
	      IOUR_OP_SYMLINKAT, IOUR_OP_LINKAT, IOUR_OP_FTRUNCATE),
	  NONE },
	/* fio: engines/io_uring.c (fio master, 2026), the io_uring engine:
	 * READV/WRITEV (or READ/WRITE when the probe says so, "nonvectored"),
	 * READ_FIXED/WRITE_FIXED (fixedbufs), FSYNC and SYNC_FILE_RANGE (fsync
	 * and fdatasync), registering PROBE, RING_FDS, BUFFERS (fixedbufs) and
	 * FILES (registerfiles).  The io_uring_cmd engine's URING_CMD is not
	 * included: that engine passes NVMe commands through. */
	{ "@fio", "what fio's io_uring engine submits and registers",
	  "fio engines/io_uring.c (engine io_uring; not io_uring_cmd's URING_CMD)",
	  OPS(IOUR_OP_READV, IOUR_OP_WRITEV, IOUR_OP_FSYNC, IOUR_OP_READ_FIXED, IOUR_OP_WRITE_FIXED,
	      IOUR_OP_SYNC_FILE_RANGE, IOUR_OP_READ, IOUR_OP_WRITE),
	  OPS(IOUR_REGISTER_BUFFERS, IOUR_REGISTER_FILES, IOUR_REGISTER_PROBE,
	      IOUR_REGISTER_RING_FDS) },
};

/* Documented in include/iouring_restrict/policyfile.h */
int iour_group_count(void)
{
	return (int)IOUR_ARRAY_SIZE(groups);
}

/* Documented in include/iouring_restrict/policyfile.h */
int iour_group_get(size_t idx, struct iour_group_info *info)
{
	const struct group *g;

	if (!info || info->sz > IOUR_OPTS_MAX_SZ || !IOUR_OUT_HAS(info, name))
		return -EINVAL;
	if (idx >= IOUR_ARRAY_SIZE(groups))
		return -ENOENT;
	g = &groups[idx];
	info->name = g->name;
	if (IOUR_OUT_HAS(info, help))
		info->help = g->help;
	if (IOUR_OUT_HAS(info, source))
		info->source = g->source;
	if (IOUR_OUT_HAS(info, nops))
		info->nops = (uint32_t)g->nops;
	if (IOUR_OUT_HAS(info, nregister_ops))
		info->nregister_ops = (uint32_t)g->nregs;
	return 0;
}

/* Documented in include/iouring_restrict/policyfile.h */
int iour_group_find(const char *name)
{
	size_t i;

	if (!name)
		return -EINVAL;
	if (name[0] == '@')
		name++;
	for (i = 0; i < IOUR_ARRAY_SIZE(groups); i++)
		if (!strcasecmp(name, groups[i].name + 1))
			return (int)i;
	return -ENOENT;
}

static int list(const uint8_t *m, size_t n, int (*since)(uint32_t), uint32_t kver, uint32_t *ops,
		size_t cap)
{
	size_t cnt = 0, i;

	if (!ops && cap)
		return -EINVAL;
	for (i = 0; i < n; i++)
		if (!kver || (uint32_t)since(m[i]) <= kver)
			cnt++;
	if (!ops)
		return (int)cnt;
	if (cap < cnt)
		return -ERANGE;
	cnt = 0;
	for (i = 0; i < n; i++)
		if (!kver || (uint32_t)since(m[i]) <= kver)
			ops[cnt++] = m[i];
	return (int)cnt;
}

/* Documented in include/iouring_restrict/policyfile.h */
int iour_group_opcodes(size_t idx, uint32_t kver, uint32_t *ops, size_t cap)
{
	if (idx >= IOUR_ARRAY_SIZE(groups))
		return -ENOENT;
	return list(groups[idx].ops, groups[idx].nops, iour_opcode_since, kver, ops, cap);
}

/* Documented in include/iouring_restrict/policyfile.h */
int iour_group_register_ops(size_t idx, uint32_t kver, uint32_t *ops, size_t cap)
{
	if (idx >= IOUR_ARRAY_SIZE(groups))
		return -ENOENT;
	return list(groups[idx].regs, groups[idx].nregs, iour_register_op_since, kver, ops, cap);
}
