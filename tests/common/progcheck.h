/* SPDX-License-Identifier: MIT */
/* Structural checks of compiled programs. */
#ifndef IOUR_TEST_PROGCHECK_H
#define IOUR_TEST_PROGCHECK_H

#include <stddef.h>
#include <stdint.h>

#include "iouring_restrict/cbpf.h"

/*
 * Jumps into a word load `ld [k]` from an instruction after which A is
 * known to hold that very word already (the loaded value is tracked
 * through jumps, TAX, LDX, ST and STX, which leave A alone).  A compiler
 * that tracks the accumulator never emits one.  Programs must have
 * forward jumps only (every valid classic-BPF program does).
 */
size_t prog_redundant_loads(const struct iour_insn *p, size_t cnt);

/* Longest path from the first instruction to a RET, RET included. */
uint32_t prog_longest_path(const struct iour_insn *p, size_t cnt);

/* Number of instructions with the given code (and k, unless any_k). */
size_t prog_count(const struct iour_insn *p, size_t cnt, uint16_t code, uint32_t k, int any_k);

#endif
