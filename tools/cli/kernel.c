/* SPDX-License-Identifier: MIT */
/*
 * A kernel described from the library's tables, for commands that plan a
 * policy for a kernel other than the running one (compile --kernel).
 */
#include <string.h>

#include "cli.h"

void cli_kernel_features(uint32_t kver, struct iour_features *f)
{
	memset(f, 0, sizeof(*f));
	f->sz = sizeof(*f);
	f->sysctl_group = -1;
	f->sysctl_disabled = -1;
	/* What a fresh process (no seccomp, no no_new_privs) would find. */
	if (kver < IOUR_KVER(5, 1)) {
		f->level = f->kernel_level = IOUR_LEVEL_NONE;
		f->setup_err = -38; /* ENOSYS: the kernel has no io_uring */
		return;
	}
	f->io_uring = IOUR_AVAIL_YES;
	f->setup_err = -14; /* EFAULT: io_uring_setup exists */
	f->op_last = (uint32_t)iour_opcode_last(kver);
	f->reg_last = (uint32_t)iour_register_op_last(kver);
	f->limits_source = IOUR_LIMITS_TABLE;
	f->level = IOUR_LEVEL_IO_URING;
	if (kver < IOUR_KVER(5, 10)) {
		f->r_disabled_err = -22;
		f->enable_rings_err = -22;
		f->kernel_level = f->level;
		return;
	}
	f->level = IOUR_LEVEL_RING;
	f->ring_restrictions = IOUR_AVAIL_YES;
	f->ring_register_err = -22;
	f->enable_rings_err = -77; /* EBADFD */
	f->probe = IOUR_AVAIL_YES;
	if (kver >= IOUR_KVER(6, 13))
		f->blind_register = IOUR_AVAIL_YES;
	if (kver >= IOUR_KVER(6, 18)) {
		f->level = IOUR_LEVEL_QUERY;
		f->query = IOUR_AVAIL_YES;
		f->limits_source = IOUR_LIMITS_QUERY;
	}
	if (kver >= IOUR_KVER(7, 0)) {
		f->level = IOUR_LEVEL_TASK_BPF;
		f->split_gates = 1;
		f->task_restrictions = f->bpf_task = IOUR_AVAIL_NO_PRIV;
		f->bpf_ring = IOUR_AVAIL_YES;
		f->task_restrictions_err = -13; /* EACCES: no_new_privs missing */
		f->bpf_task_err = -13;
		f->bpf_ring_err = -14;
		f->pdu_socket = 12;
		f->pdu_openat = f->pdu_openat2 = 24;
	}
	if (kver >= IOUR_KVER(7, 2)) {
		f->level = IOUR_LEVEL_CONNECT;
		f->pdu_connect = 24;
	}
	f->kernel_level = f->level;
}
