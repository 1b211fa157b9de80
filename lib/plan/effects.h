/* SPDX-License-Identifier: MIT */
/*
 * Effects and every path to each (lib/plan/effects.c).  Internal: the public
 * view is the report's effect notes (report.h, enum iour_effect), which
 * the CLI (`explain`, `lint`) and the bindings read through
 * iour_report__decision().  Not installed.
 */
#ifndef IOUR_LIB_EFFECTS_H
#define IOUR_LIB_EFFECTS_H

#include "planner.h"
#include "policy/ruleset_internal.h"

/* What a plan leaves reachable, as the effects table needs it. */
struct iour__effect_in {
	const uint8_t *achieved;        /* IOUR__V_* per request opcode */
	const struct iour_ruleset *eff; /* the classic set the kernel holds */
	uint32_t op_last, reg_last;     /* the target kernel's limits */
	bool rings;                     /* requests/registers go through a gated ring */
	bool no_new_rings;              /* the companion blocks io_uring_setup */
	bool blind_gated;               /* the task set gates fd -1 by its register list */
	uint64_t blind_denied;          /* fd -1 register opcodes seccomp denies (bits) */
	bool blind_reached;             /* the plan restricts the task (not a ring only) */
};

/* Add one note per effect the plan touches (IOUR_REASON_EFFECT_*).
 * Returns true when a request that names a plain descriptor stays open
 * although the set requires IOSQE_FIXED_FILE (then LOOSENED decisions
 * are added for those opcodes as well).  With `r` NULL it adds nothing
 * and formats no text: the same answer, for a plan whose report nobody
 * reads (the ring.h wrappers'). */
IOUR_INTERNAL bool iour__effects_report(struct iour_report *r, const struct iour__effect_in *in);

/* The ring-less register opcodes (fd -1) that are not restrictions,
 * which a seccomp guard must deny where the kernel does not: bits of
 * register opcodes whose blind path exists below reg_last and that the
 * set does not allow. */
IOUR_INTERNAL uint64_t iour__effects_blind_unlisted(const struct iour_ruleset *eff,
						    uint32_t reg_last);

#endif /* IOUR_LIB_EFFECTS_H */
