/* SPDX-License-Identifier: MIT */
/*
 * uring-off: run a program with io_uring made unusable for it, the way a
 * container's seccomp profile does, without touching the machine's
 * sysctls (make check-uring-off, mk/tests.mk).
 *
 *   uring-off setup|register PROGRAM [ARG...]
 *
 * Sets no_new_privs and installs a seccomp filter under which
 * io_uring_setup (setup) or io_uring_register (register) fails with EPERM,
 * then execs PROGRAM.  The filter is inherited by every child and kept
 * across exec, so the unit tests' probe (tests/common/uring_avail.c) sees
 * io_uring unusable and the tests that need a ring skip.
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The filter must know the native audit arch; elsewhere it would let every
 * call through and the check would prove nothing. */
#if defined(__x86_64__)
#define NATIVE_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define NATIVE_ARCH AUDIT_ARCH_AARCH64
#else
#error "uring-off: add this architecture's AUDIT_ARCH_ value"
#endif

int main(int argc, char **argv)
{
	unsigned nr;

	if (argc < 3 || (strcmp(argv[1], "setup") != 0 && strcmp(argv[1], "register") != 0)) {
		fprintf(stderr, "usage: uring-off setup|register PROGRAM [ARG...]\n");
		return 2;
	}
	nr = strcmp(argv[1], "setup") == 0 ? __NR_io_uring_setup : __NR_io_uring_register;
	{
		struct sock_filter insns[] = {
			BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
			BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NATIVE_ARCH, 1, 0),
			BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
			BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
			/* (x86-64: the x32 number of the same call as well) */
			BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, nr, 1, 0),
			BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, nr | 0x40000000U, 0, 1),
			BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
			BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		};
		struct sock_fprog prog = { .len = sizeof(insns) / sizeof(insns[0]),
					   .filter = insns };

		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
		    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
			perror("uring-off: seccomp");
			return 2;
		}
	}
	execvp(argv[2], argv + 2);
	fprintf(stderr, "uring-off: %s: %s\n", argv[2], strerror(errno));
	return 127;
}
