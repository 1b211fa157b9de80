/* SPDX-License-Identifier: MIT */
/*
 * The ring broker's accounting context (lib/broker_account.h).
 *
 * Placeholder: it enters nothing, so a worker's ring is still charged to
 * the broker, and the served line says so (lib/broker.c).  It is replaced
 * by the implementation that joins the caller's memory cgroup and takes
 * its locked-memory limit and credentials (doc/security.md 3a).
 */
#include "broker_account.h"

int iour__broker_account_enter(int piddir, struct iour__acct *a)
{
	(void)piddir;
	a->done = 0;
	a->why[0] = '\0';
	return 0;
}
