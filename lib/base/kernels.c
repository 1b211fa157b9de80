/* SPDX-License-Identifier: MIT */
/*
 * Kernel generations: the representative kernel of each feature level
 * (probe.h's ladder) and the generations of the kernel facts
 * (lib/base/kernel_facts.def).  A fact of the base, read by the schema (a
 * payload's "since"), the effects and the kernel description of
 * lib/probe/kernel.c (doc/design.md, "Layers"), and by tools through
 * iour_kernel_generation(), iour_level_kernel() and
 * iour_kernel_split_gates().
 */
#include "internal.h"
#include "iouring_restrict/names.h"
#include "iouring_restrict/probe.h"

/* The versions of lib/base/kernel_facts.def the levels start at. */
enum {
#define IOUR_KF_GEN(name, maj, min) KF_GEN_##name = IOUR_KVER(maj, min),
#define IOUR_KF_NR(name, nr, maj, min) KF_NR_##name##_SINCE = IOUR_KVER(maj, min),
#define IOUR_KF_REG(name, value, maj, min) KF_##name##_SINCE = IOUR_KVER(maj, min),
#include "kernel_facts.def"
};

/* Each feature level (probe.h's ladder): its representative kernel, whose
 * limits are the name tables' up to that version, and the first release
 * of the level, as a fresh process finds it. */
static const struct {
	uint32_t kver;  /* IOUR_KVER(); 0 for no io_uring */
	uint32_t first; /* IOUR_KVER() */
	const char *name;
} level_kernels[IOUR_LEVEL_MAX + 1] = {
	[IOUR_LEVEL_NONE] = { 0, 0, "no io_uring" },
	[IOUR_LEVEL_IO_URING] = { IOUR_KVER(5, 4), KF_NR_SETUP_SINCE, "Linux 5.4" },
	[IOUR_LEVEL_RING] = { IOUR_KVER(6, 1), KF_GEN_RING_RESTRICTIONS, "Linux 6.1" },
	[IOUR_LEVEL_QUERY] = { IOUR_KVER(6, 18), KF_REGISTER_QUERY_SINCE, "Linux 6.18" },
	[IOUR_LEVEL_TASK_BPF] = { IOUR_KVER(7, 0), KF_GEN_SPLIT_GATES, "Linux 7.0" },
	/* the CONNECT payload (doc/kernel.md 4.3) */
	[IOUR_LEVEL_CONNECT] = { IOUR_KVER(7, 2), IOUR_KVER(7, 2), "Linux 7.2" },
};

uint32_t iour__kernel_level_kver(uint32_t level)
{
	return level <= IOUR_LEVEL_MAX ? level_kernels[level].kver : 0;
}

uint32_t iour__kernel_level_first(uint32_t level)
{
	return level <= IOUR_LEVEL_MAX ? level_kernels[level].first : 0;
}

const char *iour__kernel_level_name(uint32_t level)
{
	return level <= IOUR_LEVEL_MAX ? level_kernels[level].name : "unknown level";
}

static const uint32_t generations[] = {
#define IOUR_KF_GEN(name, maj, min) [IOUR_KGEN_##name] = IOUR_KVER(maj, min),
#include "kernel_facts.def"
};

/* One row per enum iour_kernel_gen value (the rows are as many as the
 * members, each names a member, none twice), and each a release. */
#define IOUR_KF_GEN(name, maj, min) _Static_assert(IOUR_KVER(maj, min) != 0, "generation " #name);
#include "kernel_facts.def"
/* NOLINTBEGIN(bugprone-macro-parentheses): each row adds a term */
enum {
	KF_NGENS = 0
#define IOUR_KF_GEN(name, maj, min) +1
#include "kernel_facts.def"
};
/* NOLINTEND(bugprone-macro-parentheses) */
_Static_assert(KF_NGENS == IOUR_KGEN_SPLIT_GATES + 1 &&
		       IOUR_ARRAY_SIZE(generations) == IOUR_KGEN_SPLIT_GATES + 1,
	       "one row per enum iour_kernel_gen value");

/* Documented in include/iouring_restrict/probe.h */
int iour_kernel_generation(uint32_t gen)
{
	return gen < IOUR_ARRAY_SIZE(generations) ?
		       (int)generations[gen] :
		       iour__err_public(-EINVAL, IOUR__ERRSET_KERNEL_GENERATION);
}

/* Documented in include/iouring_restrict/probe.h */
int iour_level_kernel(uint32_t level)
{
	return level <= IOUR_LEVEL_MAX ? (int)level_kernels[level].kver :
					 iour__err_public(-EINVAL, IOUR__ERRSET_LEVEL_KERNEL);
}

/* Documented in include/iouring_restrict/probe.h */
int iour_kernel_split_gates(uint32_t kver)
{
	return (kver & ~0xffU) >= generations[IOUR_KGEN_SPLIT_GATES];
}
