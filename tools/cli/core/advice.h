/* SPDX-License-Identifier: MIT */
/*
 * What `learn` and `lint` say about an allow-list before it breaks a
 * program (doc/cli.md, "learn" and "lint"): SQPOLL rings that `run` or the
 * agent refuse, writes without a sync opcode, and the usual companions of
 * an opcode that were never allowed.  Suggestions only: nothing here adds
 * to a policy.
 */
#ifndef IOUR_CLI_ADVICE_H
#define IOUR_CLI_ADVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ADVICE_NOPS 256

/*
 * Writes without sync: the writing opcodes of @ops (the group @file-write
 * without its sync opcodes) into @writes ("WRITE, WRITEV"), when @ops has
 * one and neither FSYNC nor SYNC_FILE_RANGE; true then.
 */
bool advice_no_sync(const bool *ops, char *writes, size_t len);

/* One suggestion: @missing is the usual companion of @seen. */
struct advice_pair {
	uint32_t seen, missing;
	const char *why;
};

/*
 * The companions @ops lacks of the opcodes it has, among those Linux
 * @kver has (0: every kernel the library knows), into @out (up to @cap);
 * their number.  A companion missing for several opcodes is given once.
 */
size_t advice_companions(const bool *ops, uint32_t kver, struct advice_pair *out, size_t cap);

/*
 * What `run` and the agent do with SQPOLL rings on Linux @kver, in @buf
 * (one sentence, with what to do); true if either refuses them there.
 * The kernel that brought task restrictions comes from the library's
 * kernel descriptions, not from a version kept here.
 */
bool advice_sqpoll(uint32_t kver, char *buf, size_t len);

#endif /* IOUR_CLI_ADVICE_H */
