/* SPDX-License-Identifier: MIT */
/*
 * Kernel generations: the representative kernel of each feature level
 * (probe.h's ladder).  A fact of the base, read by the schema (a payload's
 * "since"), the effects and the kernel description of lib/probe/kernel.c
 * (doc/design.md, "Layers").
 */
#include "internal.h"
#include "iouring_restrict/probe.h"

/* The representative kernel of each feature level (probe.h's ladder):
 * its limits are the name tables' up to that version. */
static const struct {
	uint32_t kver; /* IOUR_KVER(); 0 for no io_uring */
	const char *name;
} level_kernels[IOUR_LEVEL_MAX + 1] = {
	[IOUR_LEVEL_NONE] = { 0, "no io_uring" },
	[IOUR_LEVEL_IO_URING] = { IOUR_KVER(5, 4), "Linux 5.4" },
	[IOUR_LEVEL_RING] = { IOUR_KVER(6, 1), "Linux 6.1" },
	[IOUR_LEVEL_QUERY] = { IOUR_KVER(6, 18), "Linux 6.18" },
	[IOUR_LEVEL_TASK_BPF] = { IOUR_KVER(7, 0), "Linux 7.0" },
	[IOUR_LEVEL_CONNECT] = { IOUR_KVER(7, 2), "Linux 7.2" },
};

uint32_t iour__kernel_level_kver(uint32_t level)
{
	return level <= IOUR_LEVEL_MAX ? level_kernels[level].kver : 0;
}

const char *iour__kernel_level_name(uint32_t level)
{
	return level <= IOUR_LEVEL_MAX ? level_kernels[level].name : "unknown level";
}
