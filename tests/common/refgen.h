/* SPDX-License-Identifier: MIT */
/*
 * Random argument-filter policies and requests aimed at their edges, for
 * the three-way differential test (reference model, simulator, kernel).
 */
#ifndef IOUR_TEST_REFGEN_H
#define IOUR_TEST_REFGEN_H

#include "cbpf_gen.h"
#include "refeval.h"

/* A random valid policy for a random opcode among NOP, SOCKET, OPENAT,
 * OPENAT2 and CONNECT: random fields and operators, operands biased to
 * edges (0, 1, the field's maximum, 2^31, 2^32 +- 1, values that differ
 * only in one 32-bit half), sets of 1..50 values (runs that merge into
 * ranges included), ranges, CIDR prefixes, several rules, runs of
 * one-comparison rules on one field, random defaults. */
void refgen_policy(struct gen_rng *r, struct ref_policy *p);

/* A request for p->opcode: most often built to sit on or next to the
 * operands of one rule's comparisons (boundaries +- 1, inside and outside
 * prefixes, only the high or only the low half of a 64-bit value
 * changed), else random.  Always as the kernel would fill it (zero port
 * and addresses for other families, sqe_flags within 0x7f, ...). */
void refgen_req(struct gen_rng *r, const struct ref_policy *p, struct ref_req *q);

#endif
