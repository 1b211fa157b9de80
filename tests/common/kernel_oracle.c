/* SPDX-License-Identifier: MIT */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kernel_oracle.h"

_Static_assert(sizeof(struct iour_insn) == sizeof(struct sock_filter), "insn size");

int oracle_open(struct kernel_oracle *o)
{
	if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, o->sv) < 0)
		return -errno;
	return 0;
}

void oracle_close(struct kernel_oracle *o)
{
	close(o->sv[0]);
	close(o->sv[1]);
	o->sv[0] = o->sv[1] = -1;
}

int oracle_attach(struct kernel_oracle *o, const struct iour_insn *insns, size_t cnt)
{
	struct sock_fprog fp = { .len = (unsigned short)cnt, .filter = (struct sock_filter *)insns };

	if (cnt > 0xffff)
		return -EINVAL;
	if (setsockopt(o->sv[1], SOL_SOCKET, SO_ATTACH_FILTER, &fp, sizeof(fp)) < 0)
		return -errno;
	return 0;
}

int oracle_run(struct kernel_oracle *o, const uint8_t ctx[40], size_t *delivered)
{
	uint32_t w[10];
	uint8_t buf[64];
	ssize_t r;
	int i;

	memcpy(w, ctx, 40);
	for (i = 0; i < 10; i++)
		w[i] = htonl(w[i]);
	if (send(o->sv[0], w, 40, 0) != 40)
		return -errno;
	r = recv(o->sv[1], buf, sizeof(buf), MSG_DONTWAIT);
	if (r < 0) {
		if (errno == EAGAIN || errno == EWOULDBLOCK) {
			if (delivered)
				*delivered = 0;
			return 0;
		}
		return -errno;
	}
	if (delivered)
		*delivered = (size_t)r;
	/* A program returning 0 drops; any non-zero value delivers at least
	 * one byte, so r >= 1 here. */
	return 1;
}

int oracle_socket_accepts(const struct iour_insn *insns, size_t cnt)
{
	struct kernel_oracle o;
	int rc;

	rc = oracle_open(&o);
	if (rc)
		return rc;
	rc = oracle_attach(&o, insns, cnt);
	oracle_close(&o);
	return rc;
}

int oracle_seccomp_accepts(const struct iour_insn *insns, size_t cnt)
{
	struct sock_fprog fp = { .len = (unsigned short)cnt, .filter = (struct sock_filter *)insns };
	volatile int *shared;
	struct pollfd pfd;
	int status, rc;
	pid_t pid;

	if (cnt > 0xffff)
		return -EINVAL;
	shared = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (shared == MAP_FAILED)
		return -errno;
	shared[0] = 1; /* "not reached" */
	pid = fork();
	if (pid < 0) {
		rc = -errno;
		munmap((void *)shared, 4096);
		return rc;
	}
	if (pid == 0) {
		/* The filter may fail every later system call, exit included,
		 * so the child may end by a fault.  It must die of it at once:
		 * the handlers it inherited (libFuzzer's, the sanitizers') take
		 * locks that another thread of the parent may have held at
		 * fork, and one such child hung a fuzzing run until its
		 * timeout. */
		static const int fatal[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE,
					     SIGABRT, SIGSYS, SIGTRAP };
		long r;

		for (size_t i = 0; i < sizeof(fatal) / sizeof(fatal[0]); i++)
			signal(fatal[i], SIG_DFL);
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
			_exit(2);
		r = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &fp);
		/* Only plain stores from here on: the filter may kill us.
		 * The raw exit_group runs nothing else on the way out (the
		 * counted build's _exit also writes coverage counts,
		 * tests/coverage/gcov_exit.c, which this child of test code
		 * alone has none of its own to write). */
		shared[0] = r == 0 ? 0 : -errno;
		syscall(SYS_exit_group, 0);
		_exit(0);
	}
	/* The answer is in shared[0] before the child tries to exit; a
	 * child still there after 5 s is killed (pidfd_open() and poll();
	 * without them, a plain wait). */
	pfd.fd = (int)syscall(SYS_pidfd_open, pid, 0);
	pfd.events = POLLIN;
	if (pfd.fd >= 0) {
		int n;

		while ((n = poll(&pfd, 1, 5000)) < 0 && errno == EINTR)
			;
		if (n == 0)
			kill(pid, SIGKILL);
		close(pfd.fd);
	}
	/* Retry on EINTR: callers may run timers (libFuzzer's -timeout). */
	while ((rc = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
		;
	if (rc < 0) {
		rc = -errno;
	} else {
		rc = shared[0];
		if (rc == 1)
			rc = -ECHILD;
	}
	munmap((void *)shared, 4096);
	return rc;
}
