/* SPDX-License-Identifier: MIT */
#ifndef IOUR_BROKER_ACCOUNT_H
#define IOUR_BROKER_ACCOUNT_H
#include <stddef.h>
/* What iour__broker_account_enter() did (doc/security.md 3a, "Who pays"). */
struct iour__acct {
	unsigned int done; /* IOUR__ACCT_* */
	char why[160];     /* what could not be done; "" if everything was */
};
#define IOUR__ACCT_SAME_CGROUP (1U << 0) /* already in the caller's memory cgroup(s) */
#define IOUR__ACCT_CGROUP_V2 (1U << 1)   /* joined the caller's cgroup v2 */
#define IOUR__ACCT_CGROUP_V1 (1U << 2)   /* joined the caller's v1 memory cgroup */
#define IOUR__ACCT_MEMLOCK (1U << 3)     /* RLIMIT_MEMLOCK taken from the caller */
#define IOUR__ACCT_CREDS (1U << 4)       /* the caller's uids, gids and groups taken */
#define IOUR__ACCT_NOCAPS (1U << 5)      /* every capability dropped (no CAP_IPC_LOCK) */
/* In a broker worker (a forked process of its own that exits after one
 * call): enter the accounting context of the caller whose /proc/PID
 * directory is `piddir`, so that the ring it creates next is charged to the
 * caller.  Irreversible.  0, or a negative errno with a->why filled. */
int iour__broker_account_enter(int piddir, struct iour__acct *a);
/* In a spare worker, before its call: read what the worker needs of itself
 * (its cgroups, its user namespace) off the caller's path.  Changes
 * nothing; iour__broker_account_enter() reads them itself without it. */
void iour__broker_account_warm(void);
#endif
