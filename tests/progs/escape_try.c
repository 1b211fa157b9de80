/* SPDX-License-Identifier: MIT */
/*
 * escape-try: a confined program trying to take a ring from another
 * process, with raw system calls only (doc/security.md, section 3a, "Ring
 * acquisition").  The escape tests (tests/live/test_live_escape.c) run it
 * under `iour-restrict run` and read its output.
 *
 *   escape-try TARGET STEP...
 *
 * TARGET is "parent", "grandparent" or a pid.  STEP is one of:
 *   steal      PTRACE_SEIZE the target ("seize: ok" or the errno), stop it,
 *              inject io_uring_setup(4, params on its stack below the red
 *              zone) at its rip ("inject: ok" or the errno io_uring_setup
 *              returned there), take the ring with pidfd_getfd ("getfd:
 *              ok" or the errno), inject close() of the target's copy,
 *              restore its registers, text and stack, detach; then submit
 *              OPENAT of "/" on the stolen ring: "openat: ok" when the
 *              request opened it, else the completion's errno.  x86-64
 *              only: elsewhere "inject: unsupported" after the seize
 *   attach     PTRACE_ATTACH: "attach: ok" (then detached) or the errno
 *   getfd      pidfd_getfd(target, 0): "getfd0: ok" or the errno
 *   vm_writev  process_vm_writev of one byte to address 0 of the target:
 *              "vm_writev: EFAULT" means the kernel let this process write
 *              the target's memory (the address only was bad), EPERM or
 *              ESRCH that it did not
 *   vm_readv   the same with process_vm_readv: "vm_readv: ..."
 *   mem        open("/proc/TARGET/mem", O_RDWR): "mem: ok" or the errno
 * Exit status 0 unless the program itself failed (2).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <linux/io_uring.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kernel_facts_oracle.h"

#ifndef __WALL
#define __WALL 0x40000000
#endif
#define NR_PIDFD_OPEN 434
#define NR_PIDFD_GETFD 438
/* io_uring's numbers restated (tests/common/kernel_facts_oracle.h) */
#define NR_IO_URING_SETUP ORACLE_NR_IO_URING_SETUP
#define NR_IO_URING_ENTER ORACLE_NR_IO_URING_ENTER

static pid_t target;
static int pidfd = -1;

static const char *ename(long e)
{
	static char buf[32];
	const char *n = e ? strerrorname_np((int)e) : "ok";

	if (n)
		return n;
	snprintf(buf, sizeof(buf), "errno %ld", e);
	return buf;
}

static void say(const char *what, long err)
{
	printf("%s: %s\n", what, ename(err));
	fflush(stdout);
}

static pid_t ppid_of(pid_t pid)
{
	char path[64], buf[512], *p;
	int fd, n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = (int)read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	p = strrchr(buf, ')'); /* "PID (COMM) S PPID ..." */
	return p ? (pid_t)atoi(p + 4) : -1;
}

/* ---- the stolen ring: one OPENAT ---------------------------------------- */

static long openat_on(int fd, const struct io_uring_params *p)
{
	size_t sq_len = p->sq_off.array + p->sq_entries * sizeof(unsigned);
	size_t cq_len = p->cq_off.cqes + p->cq_entries * sizeof(struct io_uring_cqe);
	char *sq, *cq;
	struct io_uring_sqe *sqes;
	struct io_uring_cqe *cqe;
	unsigned tail, idx, *array;
	long rc;

	sq = mmap(NULL, sq_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, IORING_OFF_SQ_RING);
	cq = mmap(NULL, cq_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, IORING_OFF_CQ_RING);
	sqes = mmap(NULL, p->sq_entries * sizeof(*sqes), PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		    IORING_OFF_SQES);
	if (sq == MAP_FAILED || cq == MAP_FAILED || sqes == MAP_FAILED)
		return -errno;
	tail = *(unsigned *)(sq + p->sq_off.tail);
	idx = tail & *(unsigned *)(sq + p->sq_off.ring_mask);
	memset(&sqes[idx], 0, sizeof(sqes[idx]));
	sqes[idx].opcode = IORING_OP_OPENAT;
	sqes[idx].fd = AT_FDCWD;
	sqes[idx].addr = (uint64_t)(uintptr_t) "/";
	sqes[idx].open_flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC;
	sqes[idx].user_data = 7;
	array = (unsigned *)(sq + p->sq_off.array);
	array[idx] = idx;
	__atomic_store_n((unsigned *)(sq + p->sq_off.tail), tail + 1, __ATOMIC_RELEASE);
	rc = syscall(NR_IO_URING_ENTER, fd, 1, 1, IORING_ENTER_GETEVENTS, NULL, 0);
	if (rc < 0)
		return -errno;
	cqe = (struct io_uring_cqe *)(cq + p->cq_off.cqes) +
	      (*(unsigned *)(cq + p->cq_off.head) & *(unsigned *)(cq + p->cq_off.ring_mask));
	if (cqe->res >= 0) {
		close(cqe->res);
		return 0;
	}
	return cqe->res;
}

/* ---- injection (x86-64) ------------------------------------------------- */

#if defined(__x86_64__)
#define RED_ZONE 128
#define SCRATCH 1024

/*
 * With `pid` in a ptrace stop: run system call `nr` (a0, a1) in it, at its
 * rip, with `len` bytes of `data` (a multiple of 8) at a stack address
 * below the red zone (passed as a1 when `data`), read back after the call.
 * Everything is restored.  The call's result, or -errno of ptrace (as
 * -1000 - errno, so the two cannot be confused).
 */
static long inject(pid_t pid, long nr, long a0, long a1, void *data, size_t len)
{
	struct user_regs_struct saved, r;
	long text, words[64], res;
	uint64_t at;
	size_t i, nw = len / 8;
	int st;

	if (ptrace(PTRACE_GETREGS, pid, 0, &saved))
		return -1000 - errno;
	errno = 0;
	text = ptrace(PTRACE_PEEKTEXT, pid, (void *)saved.rip, 0);
	if (errno)
		return -1000 - errno;
	at = (saved.rsp - RED_ZONE - SCRATCH) & ~15ULL;
	for (i = 0; i < nw; i++) {
		errno = 0;
		words[i] = ptrace(PTRACE_PEEKDATA, pid, (void *)(at + 8 * i), 0);
		if (errno)
			return -1000 - errno;
		if (ptrace(PTRACE_POKEDATA, pid, (void *)(at + 8 * i), ((long *)data)[i]))
			return -1000 - errno;
	}
	/* 0f 05: syscall */
	if (ptrace(PTRACE_POKETEXT, pid, (void *)saved.rip, (text & ~0xffffL) | 0x050f))
		return -1000 - errno;
	r = saved;
	r.rax = (unsigned long)nr;
	r.orig_rax = (unsigned long)-1; /* no restart of the interrupted call now */
	r.rdi = (unsigned long)a0;
	r.rsi = data ? at : (unsigned long)a1;
	r.rdx = 0;
	if (ptrace(PTRACE_SETREGS, pid, 0, &r) || ptrace(PTRACE_SINGLESTEP, pid, 0, 0) ||
	    waitpid(pid, &st, __WALL) != pid || !WIFSTOPPED(st) ||
	    ptrace(PTRACE_GETREGS, pid, 0, &r))
		res = -1000 - (errno ? errno : EIO);
	else
		res = (long)r.rax;
	for (i = 0; i < nw; i++) {
		errno = 0;
		((long *)data)[i] = ptrace(PTRACE_PEEKDATA, pid, (void *)(at + 8 * i), 0);
		ptrace(PTRACE_POKEDATA, pid, (void *)(at + 8 * i), words[i]);
	}
	ptrace(PTRACE_POKETEXT, pid, (void *)saved.rip, text);
	ptrace(PTRACE_SETREGS, pid, 0, &saved);
	return res;
}
#endif

static void steal(void)
{
	int st;

	if (ptrace(PTRACE_SEIZE, target, 0, 0)) {
		say("seize", errno);
		return;
	}
	say("seize", 0);
#if defined(__x86_64__)
	{
		union {
			struct io_uring_params p;
			long w[(sizeof(struct io_uring_params) + 7) / 8];
		} u;
		long fd, mine;

		if (ptrace(PTRACE_INTERRUPT, target, 0, 0) ||
		    waitpid(target, &st, __WALL) != target) {
			say("inject", errno);
			ptrace(PTRACE_DETACH, target, 0, 0);
			return;
		}
		memset(&u, 0, sizeof(u));
		fd = inject(target, NR_IO_URING_SETUP, 4, 0, u.w, sizeof(u.w));
		if (fd <= -1000) {
			printf("inject: ptrace failed: %s\n", ename(-fd - 1000));
			ptrace(PTRACE_DETACH, target, 0, 0);
			return;
		}
		say("inject", fd < 0 ? -fd : 0);
		mine = fd < 0 ? -1 : syscall(NR_PIDFD_GETFD, pidfd, (int)fd, 0);
		if (fd >= 0) {
			say("getfd", mine < 0 ? errno : 0);
			inject(target, __NR_close, fd, 0, NULL, 0);
		}
		ptrace(PTRACE_DETACH, target, 0, 0);
		if (mine >= 0)
			say("openat", -openat_on((int)mine, &u.p));
	}
#else
	(void)st;
	printf("inject: unsupported\n");
	ptrace(PTRACE_DETACH, target, 0, 0);
#endif
}

int main(int argc, char **argv)
{
	char path[64];
	int i;

	if (argc < 3) {
		fprintf(stderr, "usage: escape-try parent|grandparent|PID STEP...\n");
		return 2;
	}
	if (!strcmp(argv[1], "parent"))
		target = getppid();
	else if (!strcmp(argv[1], "grandparent"))
		target = ppid_of(getppid());
	else
		target = (pid_t)atoi(argv[1]);
	if (target <= 0) {
		fprintf(stderr, "escape-try: no target\n");
		return 2;
	}
	printf("target: %d\n", (int)target);
	pidfd = (int)syscall(NR_PIDFD_OPEN, target, 0);
	for (i = 2; i < argc; i++) {
		const char *s = argv[i];

		if (!strcmp(s, "steal")) {
			steal();
		} else if (!strcmp(s, "attach")) {
			if (ptrace(PTRACE_ATTACH, target, 0, 0)) {
				say("attach", errno);
			} else {
				int st;

				waitpid(target, &st, __WALL);
				ptrace(PTRACE_DETACH, target, 0, 0);
				say("attach", 0);
			}
		} else if (!strcmp(s, "getfd")) {
			long fd = syscall(NR_PIDFD_GETFD, pidfd, 0, 0);

			say("getfd0", fd < 0 ? errno : 0);
			if (fd >= 0)
				close((int)fd);
		} else if (!strcmp(s, "vm_writev") || !strcmp(s, "vm_readv")) {
			char c = 0;
			struct iovec l = { &c, 1 }, r = { NULL, 1 };
			ssize_t n = s[3] == 'w' ? process_vm_writev(target, &l, 1, &r, 1, 0) :
						  process_vm_readv(target, &l, 1, &r, 1, 0);

			say(s, n < 0 ? errno : 0);
		} else if (!strcmp(s, "mem")) {
			int fd;

			snprintf(path, sizeof(path), "/proc/%d/mem", (int)target);
			fd = open(path, O_RDWR | O_CLOEXEC);
			say("mem", fd < 0 ? errno : 0);
			if (fd >= 0)
				close(fd);
		} else {
			fprintf(stderr, "escape-try: unknown step '%s'\n", s);
			return 2;
		}
	}
	return 0;
}
