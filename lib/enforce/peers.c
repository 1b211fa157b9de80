/* SPDX-License-Identifier: MIT */
/*
 * The peer guard (lib/enforce/peers.h; doc/security.md, section 3a, "Ring
 * acquisition").
 *
 * The seccomp program, for x86-64:
 *
 *     ld   [4]                       arch
 *     jeq  X86_64, native, +0
 *     jeq  I386, compat, kill
 * native:
 *     ld   [0]
 *     and  #~0x40000000              x32 numbers fold onto their own (521...)
 *     jeq  #101, ptrace              ptrace
 *     jeq  #521, ptrace              x32 ptrace
 *     jeq  #310/#311/#539/#540/#438, deny   process_vm_*, x32 ones, pidfd_getfd
 *     ret  #ALLOW
 * compat:
 *     ld   [0]
 *     jeq  #26, ptrace
 *     jeq  #347/#348/#438, deny
 *     ret  #ALLOW
 * ptrace:
 *     ld   [16]                      the request's low word
 *     jeq  #16 (PTRACE_ATTACH), deny
 *     jeq  #0x4206 (PTRACE_SEIZE), deny
 *     ret  #ALLOW
 * deny:
 *     ret  #ERRNO|EPERM
 * kill:
 *     ret  #KILL_PROCESS
 *
 * Comparing the request's low word denies every request whose low word
 * is an attach, a superset of what the kernel would take as one.  Other
 * requests need an attached tracee, which the program cannot get.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "peers.h"
#include "base/uapi.h"

#if defined(__x86_64__)
#define NATIVE_ARCH AUDIT_ARCH_X86_64
#define COMPAT_ARCH AUDIT_ARCH_I386
#define FOLD_X32 1
static const uint32_t nat_ptrace[] = { 101, 521 };
static const uint32_t nat_deny[] = { 310, 311, 539, 540, 438 };
static const uint32_t cmp_ptrace[] = { 26 };
static const uint32_t cmp_deny[] = { 347, 348, 438 };
#elif defined(__i386__)
#define NATIVE_ARCH AUDIT_ARCH_I386
static const uint32_t nat_ptrace[] = { 26 };
static const uint32_t nat_deny[] = { 347, 348, 438 };
#elif defined(__aarch64__) && defined(__AARCH64EL__)
#define NATIVE_ARCH AUDIT_ARCH_AARCH64
#define COMPAT_ARCH AUDIT_ARCH_ARM
static const uint32_t nat_ptrace[] = { 117 };
static const uint32_t nat_deny[] = { 270, 271, 438 };
static const uint32_t cmp_ptrace[] = { 26 };
static const uint32_t cmp_deny[] = { 376, 377, 438 };
#elif defined(__arm__) && defined(__ARM_EABI__) && defined(__ARMEL__)
#define NATIVE_ARCH AUDIT_ARCH_ARM
static const uint32_t nat_ptrace[] = { 26 };
static const uint32_t nat_deny[] = { 376, 377, 438 };
#elif defined(__riscv) && __riscv_xlen == 64
#define NATIVE_ARCH AUDIT_ARCH_RISCV64
static const uint32_t nat_ptrace[] = { 117 };
static const uint32_t nat_deny[] = { 270, 271, 438 };
#endif

#define X32_SYSCALL_BIT 0x40000000U
#define SD_NR KIO_SD_NR
#define SD_ARCH KIO_SD_ARCH
#define SD_ARG0_LO (KIO_SD_ARG0 + KIO_SD_LO) /* args[0], low word */
#define REQ_ATTACH 16U
#define REQ_SEIZE 0x4206U

/* Landlock (its uapi: include/uapi/linux/landlock.h; syscalls 444..446 in
 * every ABI's unified numbering). */
#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule 445
#define SYS_landlock_restrict_self 446
#endif
#define LL_CREATE_RULESET_VERSION (1U << 0)
#define LL_RULE_PATH_BENEATH 1
#define LL_FS_MAKE_BLOCK (1ULL << 11)
#define LL_FS_REFER (1ULL << 13) /* ABI 2 */

struct ll_ruleset_attr {
	uint64_t handled_access_fs;
};

struct ll_path_beneath {
	uint64_t allowed_access;
	int32_t parent_fd;
} __attribute__((packed));

#define CAP_BIT(c) (1U << ((c)&31))
#define CAP_IDX(c) ((c) >> 5)

static struct iour_insn stmt(uint16_t code, uint32_t k)
{
	struct iour_insn i = { code, 0, 0, k };
	return i;
}

#ifdef NATIVE_ARCH
enum { TO_PTRACE, TO_DENY };

struct fix {
	size_t at;
	int to;
};

/* One ABI's comparisons: `ptr` numbers go to the request check, `deny`
 * ones to the errno; anything else is allowed. */
static void emit_abi(struct iour_insn *out, size_t *n, struct fix *fx, size_t *nfx,
		     const uint32_t *ptr, size_t nptr, const uint32_t *deny, size_t ndeny, int fold)
{
	size_t i;

	out[(*n)++] = stmt(BPF_LD | BPF_W | BPF_ABS, SD_NR);
	if (fold)
		out[(*n)++] = stmt(BPF_ALU | BPF_AND | BPF_K, ~X32_SYSCALL_BIT);
	for (i = 0; i < nptr + ndeny; i++) {
		fx[*nfx].at = *n;
		fx[*nfx].to = i < nptr ? TO_PTRACE : TO_DENY;
		out[*n] = stmt(BPF_JMP | BPF_JEQ | BPF_K, i < nptr ? ptr[i] : deny[i - nptr]);
		(*nfx)++;
		(*n)++;
	}
	out[(*n)++] = stmt(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
}
#endif

int iour__peers_build(struct iour_insn *out)
{
#ifndef NATIVE_ARCH
	(void)out;
	return -EOPNOTSUPP;
#else
	struct fix fx[IOUR__PEERS_MAX_INSNS];
	size_t n = 0, nfx = 0, j_native, native, ptrace, deny, kill, i;
	int fold = 0;
#ifdef COMPAT_ARCH
	size_t j_compat, compat;
#endif
#ifdef FOLD_X32
	fold = 1;
#endif

	out[n++] = stmt(BPF_LD | BPF_W | BPF_ABS, SD_ARCH);
	j_native = n++;
#ifdef COMPAT_ARCH
	j_compat = n++;
#endif
	native = n;
	emit_abi(out, &n, fx, &nfx, nat_ptrace, IOUR_ARRAY_SIZE(nat_ptrace), nat_deny,
		 IOUR_ARRAY_SIZE(nat_deny), fold);
#ifdef COMPAT_ARCH
	compat = n;
	emit_abi(out, &n, fx, &nfx, cmp_ptrace, IOUR_ARRAY_SIZE(cmp_ptrace), cmp_deny,
		 IOUR_ARRAY_SIZE(cmp_deny), 0);
#endif
	ptrace = n;
	out[n++] = stmt(BPF_LD | BPF_W | BPF_ABS, SD_ARG0_LO);
	fx[nfx].at = n;
	fx[nfx++].to = TO_DENY;
	out[n++] = stmt(BPF_JMP | BPF_JEQ | BPF_K, REQ_ATTACH);
	fx[nfx].at = n;
	fx[nfx++].to = TO_DENY;
	out[n++] = stmt(BPF_JMP | BPF_JEQ | BPF_K, REQ_SEIZE);
	out[n++] = stmt(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	deny = n;
	out[n++] = stmt(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM);
	kill = n;
	out[n++] = stmt(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);

	out[j_native] = stmt(BPF_JMP | BPF_JEQ | BPF_K, NATIVE_ARCH);
	out[j_native].jt = (uint8_t)(native - j_native - 1);
#ifdef COMPAT_ARCH
	out[j_native].jf = 0;
	out[j_compat] = stmt(BPF_JMP | BPF_JEQ | BPF_K, COMPAT_ARCH);
	out[j_compat].jt = (uint8_t)(compat - j_compat - 1);
	out[j_compat].jf = (uint8_t)(kill - j_compat - 1);
#else
	out[j_native].jf = (uint8_t)(kill - j_native - 1);
#endif
	for (i = 0; i < nfx; i++) {
		size_t to = fx[i].to == TO_PTRACE ? ptrace : deny;

		out[fx[i].at].jt = (uint8_t)(to - fx[i].at - 1);
		out[fx[i].at].jf = 0;
	}
	return (int)n;
#endif
}

/* Yama's ptrace_scope, or -1 without Yama. */
static int yama_scope(void)
{
	int32_t v;

	if (iour__read_int_file("/proc/sys/kernel/yama/ptrace_scope", &v) < 0 || v < 0)
		return -1;
	return v;
}

static int caps_get(struct __user_cap_data_struct d[2])
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };

	memset(d, 0, 2 * sizeof(d[0]));
	return syscall(SYS_capget, &h, d) ? -errno : 0;
}

void iour__peers_release(struct iour__peers *g)
{
	if (g->ruleset >= 0)
		close(g->ruleset);
	g->ruleset = -1;
}

int iour__peers_prepare(struct iour__peers *g)
{
	struct __user_cap_data_struct d[2];
	struct ll_ruleset_attr attr = { LL_FS_REFER | LL_FS_MAKE_BLOCK };
	struct ll_path_beneath pb;
	long abi;
	int rc, root;

	memset(g, 0, sizeof(*g));
	g->ruleset = -1;
	g->len = iour__peers_build(g->prog);
	if (g->len < 0)
		return g->len;
	g->closes = IOUR__PEERS_SECCOMP | IOUR__PEERS_NOCAP;
	g->yama = yama_scope();
	if (g->yama >= 1)
		g->closes |= IOUR__PEERS_YAMA;
	rc = caps_get(d);
	if (rc)
		return rc;
	g->drop_bset = prctl(PR_CAPBSET_READ, CAP_SYS_PTRACE, 0, 0, 0) == 1 &&
		       (d[CAP_IDX(CAP_SETPCAP)].effective & CAP_BIT(CAP_SETPCAP));
	abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LL_CREATE_RULESET_VERSION);
	g->landlock_abi = abi < 0 ? 0 : (int)abi;
	if (g->landlock_abi < 2)
		return 0; /* no Landlock, or ABI 1: left open (lib/enforce/peers.h) */
	root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		return -errno;
	g->ruleset = (int)syscall(SYS_landlock_create_ruleset, &attr, sizeof(attr), 0);
	if (g->ruleset < 0) {
		rc = -errno;
		close(root);
		g->ruleset = -1;
		return rc;
	}
	memset(&pb, 0, sizeof(pb));
	pb.allowed_access = LL_FS_REFER | LL_FS_MAKE_BLOCK;
	pb.parent_fd = root;
	rc = syscall(SYS_landlock_add_rule, g->ruleset, LL_RULE_PATH_BENEATH, &pb, 0) ? -errno : 0;
	close(root);
	if (rc) {
		iour__peers_release(g);
		return rc;
	}
	g->closes |= IOUR__PEERS_LANDLOCK;
	return 0;
}

/* CAP_SYS_PTRACE out of every set.  Lowering is always allowed; the
 * bounding set needs CAP_SETPCAP (prepare checked it).  Without it in the
 * bounding set, or with no_new_privs, execve cannot give it back. */
static int drop_ptrace_cap(struct iour__peers *g)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];
	uint32_t bit = CAP_BIT(CAP_SYS_PTRACE);
	int i = CAP_IDX(CAP_SYS_PTRACE), rc;

	if (g->drop_bset && prctl(PR_CAPBSET_DROP, CAP_SYS_PTRACE, 0, 0, 0))
		return -errno;
	/* EINVAL: no ambient set (before 4.3), nothing to lower */
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_LOWER, CAP_SYS_PTRACE, 0, 0) && errno != EINVAL)
		return -errno;
	rc = caps_get(d);
	if (rc)
		return rc;
	if ((d[i].effective | d[i].permitted | d[i].inheritable) & bit) {
		d[i].effective &= ~bit;
		d[i].permitted &= ~bit;
		d[i].inheritable &= ~bit;
		if (syscall(SYS_capset, &h, d))
			return -errno;
	}
	if (prctl(PR_CAPBSET_READ, CAP_SYS_PTRACE, 0, 0, 0) == 1 &&
	    prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1)
		g->closes &= ~IOUR__PEERS_NOCAP; /* execve of a privileged file regains it */
	return 0;
}

int iour__peers_apply(struct iour__peers *g, bool all_threads)
{
	struct sock_fprog fp;
	int rc;

	rc = drop_ptrace_cap(g);
	if (!rc && g->ruleset >= 0 && syscall(SYS_landlock_restrict_self, g->ruleset, 0))
		rc = -errno;
	iour__peers_release(g);
	if (rc)
		return rc;
	fp.len = (unsigned short)g->len;
	fp.filter = (struct sock_filter *)g->prog;
	rc = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
			  all_threads ? SECCOMP_FILTER_FLAG_TSYNC : 0, &fp);
	if (rc > 0)
		return -EBUSY; /* TSYNC: the id of a thread that could not follow */
	return rc < 0 ? -errno : 0;
}

const char *iour__peers_describe(uint32_t closes, char *buf, size_t len)
{
	if (!(closes & IOUR__PEERS_SECCOMP))
		snprintf(buf, len,
			 "other processes' rings are NOT closed (ptrace allowed): "
			 "ptrace, pidfd_getfd, process_vm_writev and /proc/PID/mem are open");
	else if (IOUR__PEERS_CLOSED(closes))
		snprintf(buf, len,
			 "other processes' rings are closed (ptrace, pidfd_getfd, "
			 "process_vm_*, /proc/PID/mem: %s)",
			 (closes & IOUR__PEERS_LANDLOCK) ? "seccomp and Landlock" :
							   "seccomp and Yama");
	else if (!(closes & IOUR__PEERS_NOCAP))
		snprintf(buf, len,
			 "other processes' rings are NOT closed: the command can regain "
			 "CAP_SYS_PTRACE (no no_new_privs)");
	else
		snprintf(buf, len,
			 "/proc/PID/mem of other processes of the same uid is open "
			 "(no Landlock ABI 2, no Yama); ptrace, pidfd_getfd and "
			 "process_vm_* are closed");
	return buf;
}
