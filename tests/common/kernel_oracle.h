/* SPDX-License-Identifier: MIT */
/*
 * The real kernel's classic-BPF engine as a test oracle.
 *
 * A program is attached with SO_ATTACH_FILTER to the receiving end of an
 * AF_UNIX datagram socketpair.  Each 40-byte io_uring filter context is sent
 * with every 32-bit word byte-swapped (socket filters load big-endian words,
 * io_uring loads native-endian ones), so the kernel computes exactly what an
 * io_uring filter would.  A datagram that arrives means "allowed"; EAGAIN
 * on a non-blocking receive means "denied".
 *
 * Only programs the library's own io_uring validator accepts may be run here:
 * the socket checker accepts more than io_uring's.
 */
#ifndef IOUR_TEST_KERNEL_ORACLE_H
#define IOUR_TEST_KERNEL_ORACLE_H

#include <stddef.h>
#include <stdint.h>

#include "iouring_restrict/cbpf.h"

struct kernel_oracle {
	int sv[2];
};

/* 0 or -errno. */
int oracle_open(struct kernel_oracle *o);
void oracle_close(struct kernel_oracle *o);
/* Attach (replacing any earlier program).  0 or -errno (EINVAL: the generic
 * checker rejected the program). */
int oracle_attach(struct kernel_oracle *o, const struct iour_insn *insns, size_t cnt);
/* Run the attached program on a 40-byte context: 1 allowed, 0 denied,
 * -errno on failure.  *delivered (optional) gets the delivered length, which
 * is min(retval, 40) when allowed. */
int oracle_run(struct kernel_oracle *o, const uint8_t ctx[40], size_t *delivered);

/* Generic (socket-filter) checker verdict: 0 accepted, -EINVAL rejected. */
int oracle_socket_accepts(const struct iour_insn *insns, size_t cnt);
/* seccomp's checker verdict, in a forked child: 0 accepted, -EINVAL
 * rejected, other -errno on failure to run the check. */
int oracle_seccomp_accepts(const struct iour_insn *insns, size_t cnt);

#endif
