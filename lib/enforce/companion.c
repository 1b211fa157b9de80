/* SPDX-License-Identifier: MIT */
/*
 * The seccomp companion (documented in include/iouring_restrict/companion.h).
 *
 * The filter is small enough to write by hand:
 *
 *     ld   [4]                       arch
 *     jeq  NATIVE, load, (next|kill)
 *     jeq  COMPAT, load, kill        only where a compat ABI exists
 * load:
 *     ld   [0]                       nr
 *     and  #~0x40000000              x86-64 only: fold x32 numbers
 *     jeq  #425, deny                io_uring_setup
 *     jeq  #426, deny                io_uring_enter    (IOUR_COMPANION_ENTER)
 *     jeq  #427, deny                io_uring_register (IOUR_COMPANION_REGISTER)
 *     ret  #ALLOW
 * deny:
 *     ret  #ERRNO|e
 * kill:
 *     ret  #KILL_PROCESS
 *
 * io_uring has the numbers 425..427 in every ABI this file knows (x86-64,
 * x32 with bit 30, i386, arm64, arm EABI, riscv64).  Folding bit 30 on the
 * compat path too only widens what is denied: no i386 system call has that
 * bit set.
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <string.h>
#include <sys/prctl.h>

#include "enforce_internal.h"
#include "base/uapi.h"
#include "base/sys.h"
#include "iouring_restrict/companion.h"

_Static_assert(sizeof(struct iour_insn) == sizeof(struct sock_filter), "insn layout");
_Static_assert(IOUR_COMPANION_DEFAULT_ERRNO == ENOSYS, "ENOSYS value");

#if defined(__x86_64__)
#define NATIVE_ARCH AUDIT_ARCH_X86_64
#define COMPAT_ARCH AUDIT_ARCH_I386
#define FOLD_X32 1
#elif defined(__i386__)
#define NATIVE_ARCH AUDIT_ARCH_I386
#elif defined(__aarch64__) && defined(__AARCH64EL__)
#define NATIVE_ARCH AUDIT_ARCH_AARCH64
#define COMPAT_ARCH AUDIT_ARCH_ARM
#elif defined(__arm__) && defined(__ARM_EABI__) && defined(__ARMEL__)
#define NATIVE_ARCH AUDIT_ARCH_ARM
#elif defined(__riscv) && __riscv_xlen == 64
#define NATIVE_ARCH AUDIT_ARCH_RISCV64
#endif

#define X32_SYSCALL_BIT 0x40000000U
#define NR_SETUP ((uint32_t)KIO_NR_SETUP)
#define NR_ENTER ((uint32_t)KIO_NR_ENTER)
#define NR_REGISTER ((uint32_t)KIO_NR_REGISTER)
#define SD_NR KIO_SD_NR
#define SD_ARCH KIO_SD_ARCH
_Static_assert(KIO_SD_NR == offsetof(struct seccomp_data, nr), "seccomp_data.nr");
_Static_assert(KIO_SD_ARCH == offsetof(struct seccomp_data, arch), "seccomp_data.arch");
_Static_assert(KIO_SD_ARG0 == offsetof(struct seccomp_data, args[0]), "seccomp_data.args[0]");
_Static_assert(KIO_SD_ARG1 == offsetof(struct seccomp_data, args[1]), "seccomp_data.args[1]");

#define KNOWN_FLAGS                                                                \
	(IOUR_COMPANION_ENTER | IOUR_COMPANION_REGISTER | IOUR_COMPANION_SET_NNP | \
	 IOUR_COMPANION_ALL_THREADS)

static struct iour_insn stmt(uint16_t code, uint32_t k)
{
	struct iour_insn i = { code, 0, 0, k };
	return i;
}

static struct iour_insn jump(uint16_t code, uint32_t k, size_t at, size_t t, size_t f)
{
	struct iour_insn i = { code, (uint8_t)(t - at - 1), (uint8_t)(f - at - 1), k };
	return i;
}

int iour__companion_build(uint32_t flags, uint32_t err, struct iour_insn *out)
{
#ifndef NATIVE_ARCH
	(void)flags;
	(void)err;
	(void)out;
	return -EOPNOTSUPP;
#else
	uint32_t nrs[3];
	size_t n = 0, nnr = 0, j_native, load, cmp, allow, deny, kill, i;
#ifdef COMPAT_ARCH
	size_t j_compat;
#endif

	nrs[nnr++] = NR_SETUP;
	if (flags & IOUR_COMPANION_ENTER)
		nrs[nnr++] = NR_ENTER;
	if (flags & IOUR_COMPANION_REGISTER)
		nrs[nnr++] = NR_REGISTER;

	/* Lay out first, then fill the jumps (all forward, all short). */
	out[n++] = stmt(BPF_LD | BPF_W | BPF_ABS, SD_ARCH);
	j_native = n++;
#ifdef COMPAT_ARCH
	j_compat = n++;
#endif
	load = n;
	out[n++] = stmt(BPF_LD | BPF_W | BPF_ABS, SD_NR);
#ifdef FOLD_X32
	out[n++] = stmt(BPF_ALU | BPF_AND | BPF_K, ~X32_SYSCALL_BIT);
#endif
	cmp = n;
	n += nnr;
	allow = n;
	out[n++] = stmt(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	deny = n;
	out[n++] = stmt(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (err & SECCOMP_RET_DATA));
	kill = n;
	out[n++] = stmt(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);

#ifdef COMPAT_ARCH
	out[j_native] = jump(BPF_JMP | BPF_JEQ | BPF_K, NATIVE_ARCH, j_native, load, j_compat);
	out[j_compat] = jump(BPF_JMP | BPF_JEQ | BPF_K, COMPAT_ARCH, j_compat, load, kill);
#else
	out[j_native] = jump(BPF_JMP | BPF_JEQ | BPF_K, NATIVE_ARCH, j_native, load, kill);
#endif
	for (i = 0; i < nnr; i++)
		out[cmp + i] = jump(BPF_JMP | BPF_JEQ | BPF_K, nrs[i], cmp + i, deny, cmp + i + 1);
	(void)allow;
	return (int)n;
#endif
}

#define SD_ARG0 (KIO_SD_ARG0 + KIO_SD_LO) /* args[0], low word */
#define SD_ARG1 (KIO_SD_ARG1 + KIO_SD_LO) /* args[1], low word */
#define USE_REGISTERED_RING 0x80000000U

int iour__companion_build_guard(uint32_t setup_err, uint64_t blind, uint32_t blind_err,
				struct iour_insn *out)
{
#if !defined(NATIVE_ARCH) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
	(void)setup_err;
	(void)blind;
	(void)blind_err;
	(void)out;
	return -EOPNOTSUPP;
#else
	size_t n = 0, j_native, load, j_setup = 0, j_reg, j_fd, first_op, nops = 0, allow,
	       deny_setup, deny_blind, kill, i;
	uint32_t ops[64];
#ifdef COMPAT_ARCH
	size_t j_compat;
#endif

	for (uint32_t op = 0; op < 64; op++)
		if (blind & (1ULL << op))
			ops[nops++] = op;
	if (nops > IOUR__GUARD_MAX_INSNS - 20)
		return -EINVAL;
	out[n++] = stmt(BPF_LD | BPF_W | BPF_ABS, SD_ARCH);
	j_native = n++;
#ifdef COMPAT_ARCH
	j_compat = n++;
#endif
	load = n;
	out[n++] = stmt(BPF_LD | BPF_W | BPF_ABS, SD_NR);
#ifdef FOLD_X32
	out[n++] = stmt(BPF_ALU | BPF_AND | BPF_K, ~X32_SYSCALL_BIT);
#endif
	if (setup_err)
		j_setup = n++;
	j_reg = n++;
	/* io_uring_register: the fd is an unsigned int, the opcode too, with
	 * bit 31 meaning "registered ring index" (fd -1 is then -EINVAL). */
	out[n++] = stmt(BPF_LD | BPF_W | BPF_ABS, SD_ARG0);
	j_fd = n++;
	out[n++] = stmt(BPF_LD | BPF_W | BPF_ABS, SD_ARG1);
	out[n++] = stmt(BPF_ALU | BPF_AND | BPF_K, ~USE_REGISTERED_RING);
	first_op = n;
	n += nops;
	allow = n;
	out[n++] = stmt(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	deny_setup = n;
	if (setup_err)
		out[n++] =
			stmt(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (setup_err & SECCOMP_RET_DATA));
	deny_blind = n;
	out[n++] = stmt(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (blind_err & SECCOMP_RET_DATA));
	kill = n;
	out[n++] = stmt(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);

#ifdef COMPAT_ARCH
	out[j_native] = jump(BPF_JMP | BPF_JEQ | BPF_K, NATIVE_ARCH, j_native, load, j_compat);
	out[j_compat] = jump(BPF_JMP | BPF_JEQ | BPF_K, COMPAT_ARCH, j_compat, load, kill);
#else
	out[j_native] = jump(BPF_JMP | BPF_JEQ | BPF_K, NATIVE_ARCH, j_native, load, kill);
#endif
	if (setup_err)
		out[j_setup] =
			jump(BPF_JMP | BPF_JEQ | BPF_K, NR_SETUP, j_setup, deny_setup, j_setup + 1);
	out[j_reg] = jump(BPF_JMP | BPF_JEQ | BPF_K, NR_REGISTER, j_reg, j_reg + 1, allow);
	out[j_fd] = jump(BPF_JMP | BPF_JEQ | BPF_K, 0xffffffffU, j_fd, j_fd + 1, allow);
	for (i = 0; i < nops; i++)
		out[first_op + i] = jump(BPF_JMP | BPF_JEQ | BPF_K, ops[i], first_op + i,
					 deny_blind, first_op + i + 1);
	return (int)n;
#endif
}

/*
 * The broker's filter (lib/serve/broker.c): native io_uring_setup goes to the
 * listener; io_uring_setup from another ABI (x32 numbers, the compat ABI)
 * fails with ENOSYS as with the companion; an unknown ABI is killed.
 *
 *     ld   [4]
 *     jeq  NATIVE, +0, compat
 *     ld   [0]
 *     jeq  #425, notify, fold
 * compat:
 *     jeq  COMPAT, +0, kill        only where a compat ABI exists
 *     ld   [0]
 * fold:
 *     and  #~0x40000000            x86-64 only
 *     jeq  #425, enosys, allow
 *     ret  #ALLOW / #ERRNO|ENOSYS / #USER_NOTIF / #KILL_PROCESS
 */
int iour__broker_filter_build(struct iour_insn *out)
{
#ifndef NATIVE_ARCH
	(void)out;
	return -EOPNOTSUPP;
#else
	size_t n = 0, j_native, j_setup, fold, j_fold, allow, enosys, notify, kill;
#ifdef COMPAT_ARCH
	size_t j_compat;
#endif

	out[n++] = stmt(BPF_LD | BPF_W | BPF_ABS, SD_ARCH);
	j_native = n++;
	out[n++] = stmt(BPF_LD | BPF_W | BPF_ABS, SD_NR);
	j_setup = n++;
#ifdef COMPAT_ARCH
	j_compat = n++;
	out[n++] = stmt(BPF_LD | BPF_W | BPF_ABS, SD_NR);
#endif
	fold = n;
#ifdef FOLD_X32
	out[n++] = stmt(BPF_ALU | BPF_AND | BPF_K, ~X32_SYSCALL_BIT);
#endif
	j_fold = n++;
	allow = n;
	out[n++] = stmt(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	enosys = n;
	out[n++] = stmt(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS);
	notify = n;
	out[n++] = stmt(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF);
	kill = n;
	out[n++] = stmt(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
#ifdef COMPAT_ARCH
	out[j_native] =
		jump(BPF_JMP | BPF_JEQ | BPF_K, NATIVE_ARCH, j_native, j_native + 1, j_compat);
	out[j_compat] = jump(BPF_JMP | BPF_JEQ | BPF_K, COMPAT_ARCH, j_compat, j_compat + 1, kill);
#else
	out[j_native] = jump(BPF_JMP | BPF_JEQ | BPF_K, NATIVE_ARCH, j_native, j_native + 1, kill);
#endif
	out[j_setup] = jump(BPF_JMP | BPF_JEQ | BPF_K, NR_SETUP, j_setup, notify, fold);
	out[j_fold] = jump(BPF_JMP | BPF_JEQ | BPF_K, NR_SETUP, j_fold, enosys, allow);
	return (int)n;
#endif
}

/* Validated flags and errno of `opts`. */
static int companion_opts(const struct iour_companion_opts *opts, uint32_t *flags, uint32_t *err)
{
	int rc = IOUR_OPTS_VALID(opts, iour_companion_opts);

	if (rc)
		return rc;
	*flags = IOUR_OPTS_GET(opts, flags, 0U);
	*err = IOUR_OPTS_GET(opts, errno_value, 0U);
	if (*flags & ~KNOWN_FLAGS)
		return -EINVAL;
	if (*err > IOUR_COMPANION_MAX_ERRNO)
		return -EINVAL;
	if (!*err)
		*err = ENOSYS;
	return 0;
}

/* Documented in include/iouring_restrict/companion.h */
int iour_companion_program(const struct iour_companion_opts *opts, struct iour_insn *insns,
			   size_t cnt)
{
	struct iour_insn prog[IOUR__COMPANION_MAX_INSNS];
	uint32_t flags, err;
	int n;

	n = companion_opts(opts, &flags, &err);
	if (n)
		return n;
	n = iour__companion_build(flags, err, prog);
	if (n < 0 || !insns)
		return n;
	if (cnt < (size_t)n)
		return -ERANGE;
	memcpy(insns, prog, (size_t)n * sizeof(prog[0]));
	return n;
}

/* Documented in include/iouring_restrict/companion.h */
int iour_companion_install(const struct iour_companion_opts *opts)
{
	struct iour_insn prog[IOUR__COMPANION_MAX_INSNS];
	struct sock_fprog fp;
	uint32_t flags, err;
	long rc;
	int n;

	n = companion_opts(opts, &flags, &err);
	if (n)
		return n;
	n = iour__companion_build(flags, err, prog);
	if (n < 0)
		return n;

	/* Is seccomp filtering there at all?  (-EINVAL: CONFIG_SECCOMP off.) */
	rc = iour__prctl(PR_GET_SECCOMP, 0, 0, 0, 0);
	if (rc < 0)
		return rc == -EINVAL ? -EOPNOTSUPP :
				       iour__err_public((int)rc, IOUR__ERRSET_COMPANION_INSTALL);

	if (flags & IOUR_COMPANION_SET_NNP) {
		rc = iour__prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
		if (rc < 0)
			return iour__err_public((int)rc, IOUR__ERRSET_COMPANION_INSTALL);
	}

	fp.len = (unsigned short)n;
	fp.filter = (struct sock_filter *)prog;
	rc = iour__seccomp(SECCOMP_SET_MODE_FILTER,
			   (flags & IOUR_COMPANION_ALL_THREADS) ? SECCOMP_FILTER_FLAG_TSYNC : 0,
			   &fp);
	if (rc == -ENOSYS && !(flags & IOUR_COMPANION_ALL_THREADS)) {
		/* Kernels before 3.17 have no seccomp(2); prctl does the same. */
		rc = iour__prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, (unsigned long)&fp, 0, 0);
	}
	if (rc > 0)
		return -EBUSY; /* TSYNC: the id of a thread that could not follow */
	if (rc == -EINVAL || rc == -ENOSYS)
		return -EOPNOTSUPP; /* no filter mode, or no TSYNC */
	return iour__err_public((int)rc, IOUR__ERRSET_COMPANION_INSTALL);
}
