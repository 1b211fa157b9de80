/* SPDX-License-Identifier: MIT */
/*
 * learn's and lint's advice on an allow-list (advice.h; doc/cli.md,
 * "learn" and "lint").
 *
 * SQPOLL: before task restrictions, `run` serves rings from a ring broker,
 * which refuses IORING_SETUP_SQPOLL with EPERM (broker.h: the SQ thread
 * would run as the broker); the agent serves every container's rings from
 * a broker, on every kernel.  With task restrictions `run` lets the
 * program create its own rings, SQPOLL ones included.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "advice.h"
#include "cli.h"

static int op(const char *name)
{
	return iour_opcode_from_name(name);
}

static bool has(const bool *ops, const char *name)
{
	int o = op(name);

	return o >= 0 && o < ADVICE_NOPS && ops[o];
}

static bool is_sync(uint32_t o)
{
	return (int)o == op("FSYNC") || (int)o == op("SYNC_FILE_RANGE");
}

bool advice_no_sync(const bool *ops, char *writes, size_t len)
{
	uint32_t w[ADVICE_NOPS];
	int g = iour_group_find("@file-write"), n;
	size_t off = 0;

	writes[0] = '\0';
	if (g < 0 || has(ops, "FSYNC") || has(ops, "SYNC_FILE_RANGE"))
		return false;
	n = iour_group_opcodes((size_t)g, 0, w, ADVICE_NOPS);
	for (int i = 0; i < n; i++) {
		/* FALLOCATE and FTRUNCATE change sizes, not data to lose */
		if (w[i] >= ADVICE_NOPS || !ops[w[i]] || is_sync(w[i]) ||
		    (int)w[i] == op("FALLOCATE") || (int)w[i] == op("FTRUNCATE"))
			continue;
		if (off < len)
			off += (size_t)snprintf(writes + off, len - off, "%s%s", off ? ", " : "",
						iour_opcode_name(w[i]));
	}
	return writes[0] != '\0';
}

/* An opcode and its usual companion, with why a program needs it. */
static const struct {
	const char *seen, *missing, *why;
} pairs[] = {
	/* a sync with writes: advice_no_sync(), a warning of its own */
	{ "SOCKET", "CLOSE", "to close its sockets" },
	{ "SOCKET", "SHUTDOWN", "to end its connections" },
	{ "ACCEPT", "CLOSE", "to close accepted connections" },
	{ "ACCEPT", "SHUTDOWN", "to end its connections" },
	{ "CONNECT", "CLOSE", "to close its sockets" },
	{ "CONNECT", "SHUTDOWN", "to end its connections" },
	{ "OPENAT", "CLOSE", "to close the files it opens" },
	{ "OPENAT2", "CLOSE", "to close the files it opens" },
	{ "PROVIDE_BUFFERS", "REMOVE_BUFFERS", "to take its buffers back" },
	{ "POLL_ADD", "POLL_REMOVE", "to remove a poll" },
	{ "TIMEOUT", "TIMEOUT_REMOVE", "to remove a timeout" },
	/* requests that wait are cancelled when a service stops */
	{ "ACCEPT", "ASYNC_CANCEL", "to cancel waiting requests when it stops" },
	{ "RECV", "ASYNC_CANCEL", "to cancel waiting requests when it stops" },
	{ "RECVMSG", "ASYNC_CANCEL", "to cancel waiting requests when it stops" },
	{ "POLL_ADD", "ASYNC_CANCEL", "to cancel waiting requests when it stops" },
	{ "READ_MULTISHOT", "ASYNC_CANCEL", "to cancel waiting requests when it stops" },
	{ "EPOLL_WAIT", "ASYNC_CANCEL", "to cancel waiting requests when it stops" },
};

size_t advice_companions(const bool *ops, uint32_t kver, struct advice_pair *out, size_t cap)
{
	bool given[ADVICE_NOPS] = { false };
	size_t n = 0;

	for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]) && n < cap; i++) {
		int s = op(pairs[i].seen), m = op(pairs[i].missing);
		int since = m >= 0 ? iour_opcode_since((uint32_t)m) : -ENOENT;

		if (s < 0 || m < 0 || s >= ADVICE_NOPS || m >= ADVICE_NOPS || !ops[s] || ops[m] ||
		    given[m] || since < 0 || (kver && (uint32_t)since > (kver & ~0xffu)))
			continue;
		given[m] = true;
		out[n++] = (struct advice_pair){ (uint32_t)s, (uint32_t)m, pairs[i].why };
	}
	return n;
}

/* The first kernel with task restrictions (the split-gates generation). */
static uint32_t task_restrictions_since(void)
{
	return (uint32_t)iour_kernel_generation(IOUR_KGEN_SPLIT_GATES);
}

bool advice_sqpoll(uint32_t kver, char *buf, size_t len)
{
	uint32_t since = task_restrictions_since();
	char k[32], s[32];

	cli_kver_str(kver, k, sizeof(k));
	cli_kver_str(since, s, sizeof(s));
	if (since && kver >= since)
		snprintf(buf, len,
			 "on Linux %s `run` lets the program create SQPOLL rings (task "
			 "restrictions), but `run` before Linux %s and the agent on every kernel "
			 "refuse them (EPERM: their ring broker): there, run the program without "
			 "SQPOLL (fio: sqthread_poll=0)",
			 k, s);
	else
		snprintf(buf, len,
			 "on Linux %s `run` (its ring broker) and the agent refuse SQPOLL rings "
			 "(EPERM): run the program without SQPOLL there (fio: sqthread_poll=0), "
			 "or use `run` on Linux %s or later (task restrictions)",
			 k, since ? s : "?");
	return true;
}
