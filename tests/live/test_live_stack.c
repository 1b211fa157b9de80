/* SPDX-License-Identifier: MIT */
/*
 * Live tier: a deny-list too large for one 4096-instruction program, split
 * across stacked task filters for CONNECT (doc/design.md, "Stacked
 * filters"), registered on the real kernel.  The kernel runs every filter
 * of an opcode and the request runs only if all allow (doc/kernel.md, 4.6):
 * addresses held by the first, a middle and the last program are denied
 * (EACCES), unlisted ones reach the network (connection refused on
 * loopback).  Needs task filters and the CONNECT payload (Linux 7.2); skips
 * elsewhere, saying why.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/internal.h"
#include "live.h"

#define NADDR 30000

struct sin4 {
	uint16_t family;
	uint16_t port; /* network order */
	uint32_t addr; /* network order */
	uint8_t zero[8];
};

/* NADDR distinct, never adjacent addresses in 127.0.0.0/8, ascending:
 * one in each block of 300 at an even, scattered offset (127.0.0.1 is
 * never listed). */
static uint64_t *blocklist(void)
{
	uint64_t *set = malloc(NADDR * sizeof(*set));

	if (!set)
		return NULL;
	for (uint32_t i = 0; i < NADDR; i++)
		set[i] = IOUR_IPV4(127, 0, 0, 2) + i * 300U + 2 * ((i * 2654435761U) % 100U);
	return set;
}

static int stack_child(void *arg, struct child_msg *m)
{
	uint64_t *set = blocklist();
	struct iour_cmp c = { .sz = sizeof(c),
			      .field = IOUR_FIELD_CONNECT_ADDR4,
			      .op = IOUR_CMP_IN_SET };
	struct iour_filter *f = NULL;
	struct iour_policy *p = NULL;
	struct iour_plan *pl = NULL;
	struct iour_report *rep = NULL;
	struct sin4 a[6];
	struct iour_verify_req r[6];
	char why[512];
	int rc, nprogs, nsteps = 0;

	(void)arg;
	CHK(m, set != NULL);
	c.set = set;
	c.set_len = NADDR;
	rc = iour_filter__new(NULL, &f);
	CHKF(m, rc == 0, "filter: %s", iour_errname(rc));
	CHK(m, iour_filter__add_rule(f, OP_CONNECT, IOUR_DENY, &c, 1) == 0);
	CHK(m, iour_filter__set_default(f, OP_CONNECT, IOUR_ALLOW) == 0);
	CHK(m, iour_filter__set_default(f, OP_NOP, IOUR_ALLOW) == 0);
	rc = live_policy(&p, IOUR_POLICY_TARGET_TASK, NULL, f, IOUR_POLICY_DEFAULT_DENY);
	iour_filter__free(f);
	CHKF(m, rc == 0, "policy with %d blocked addresses: %s", NADDR, iour_errname(rc));
	nprogs = iour_policy__prog_cnt(p, OP_CONNECT);
	CHKF(m, nprogs > 1, "a %d-address deny-list is split (got %d programs)", NADDR, nprogs);
	rc = iour_policy__plan(p, NULL, &pl);
	CHKF(m, rc == 0, "plan: %s", iour_errname(rc));
	for (int i = 0; i < iour_plan__step_cnt(pl); i++) {
		struct iour_plan_step s = { .sz = sizeof(s) };

		CHK(m, iour_plan__step(pl, (size_t)i, &s) == 0);
		nsteps += s.op == IOUR_STEP_BPF_FILTER && s.opcode == OP_CONNECT;
	}
	CHKF(m, nsteps == nprogs, "%d CONNECT filter registrations for %d programs", nsteps,
	     nprogs);
	rc = iour_plan__apply_task(pl, NULL, &rep);
	CHKF(m, rc == 0, "apply_task: %s", iour_errname(rc));
	CHKF(m, live_report_is(rep, IOUR_STATUS_FULLY, IOUR_MECH_TASK, why, sizeof(why)), "%s",
	     why);
	/* listed: the lowest (first program), a middle one, the highest (last
	 * program); unlisted: 127.0.0.1, neighbours of listed ones */
	{
		const uint32_t addrs[6] = { (uint32_t)set[0], (uint32_t)set[NADDR / 2],
					    (uint32_t)set[NADDR - 1], IOUR_IPV4(127, 0, 0, 1),
					    (uint32_t)set[NADDR / 2] + 1, (uint32_t)set[0] - 1 };

		for (int i = 0; i < 6; i++) {
			a[i] = (struct sin4){ 2 /* AF_INET */, 0x0100 /* port 1 */,
					      htonl(addrs[i]), { 0 } };
			r[i] = (struct iour_verify_req){ .sz = sizeof(r[i]),
							 .opcode = OP_CONNECT,
							 .expect = i < 3 ? IOUR_EXPECT_DENY :
									   IOUR_EXPECT_ALLOW,
							 .addr = &a[i],
							 .addrlen = sizeof(a[i]) };
		}
	}
	rc = live_verify(r, 6, LV_PLAIN, -1, why, sizeof(why));
	CHKF(m, rc == 0, "fresh ring: %s", why);
	live_log("CONNECT deny-list of %d addresses: %d stacked task filters registered",
		 NADDR, nprogs);
	iour_report__free(rep);
	iour_plan__free(pl);
	iour_policy__free(p);
	free(set);
	return 0;
}

Test(live_task_bpf, connect_stacked_denylist)
{
	LIVE_REQUIRE(LIVE_TASK | LIVE_TASK_BPF | LIVE_CONNECT);
	LIVE_CHILD(stack_child, NULL);
	live_log("task filters CONNECT: a %d-address deny-list stacked across several "
		 "programs; listed addresses in the first, a middle and the last program "
		 "denied (EACCES), unlisted ones allowed",
		 NADDR);
}
