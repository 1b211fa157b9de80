/* SPDX-License-Identifier: MIT */
/*
 * Classic-BPF definitions shared by the validator, the simulator, the
 * disassembler and the filter compiler.  Not installed.
 */
#ifndef IOUR_LIB_CBPF_INTERNAL_H
#define IOUR_LIB_CBPF_INTERNAL_H

#include <stdint.h>

#include "base/internal.h"
#include "iouring_restrict/cbpf.h"

/* The instruction encoding (KBPF_*) is in uapi.h. */

/* SKF_AD_OFF (-0x1000) as the unsigned k the checker compares against. */
#define KBPF_SKF_AD_OFF 0xfffff000U
/* One past the last ancillary offset known to the kernel (SKF_AD_MAX). */
#define KBPF_SKF_AD_MAX 64U

/*
 * Runs a program that iour_cbpf_validate() accepted with the io_uring rules
 * (flags 0) on a 40-byte context, exactly as the kernel does, and returns
 * its 32-bit return value.  *executed (optional) gets the number of
 * instructions executed, the final RET included.  No check of any kind:
 * an unvalidated program is undefined behaviour.  For fuzzers, benchmarks
 * and the library's own differential tests, which validate once and run
 * many contexts.
 */
IOUR_INTERNAL uint32_t iour__cbpf_run_unchecked(const struct iour_insn *insns, const uint8_t *ctx,
						uint32_t *executed);

/* The payload size K the newest known kernel reports for `opcode` (0 for
 * opcodes without a payload, and for opcodes >= 65). */
IOUR_INTERNAL uint8_t iour__ctx_pdu_size(uint32_t opcode);

/* Stores v, in host byte order, in the slot of the filter context that
 * lib/base/schema.def gives the field (1, 2, 4 or 8 bytes; nothing for an
 * unknown field or a 16-byte one). */
IOUR_INTERNAL void iour__ctx_put(uint8_t *ctx, uint32_t field, uint64_t v);

#endif /* IOUR_LIB_CBPF_INTERNAL_H */
