/* SPDX-License-Identifier: MIT */
/* The real-kernel side of the syscall seam (see sys.h). */
#include <errno.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sys.h"

static long neg(long rc)
{
	return rc < 0 ? -errno : rc;
}

static long real_setup(void *ctx, uint32_t entries, void *params)
{
	(void)ctx;
	return neg(syscall(KIO_NR_SETUP, entries, params));
}

static long real_enter(void *ctx, int fd, uint32_t to_submit, uint32_t min_complete, uint32_t flags,
		       const void *arg, size_t argsz)
{
	(void)ctx;
	return neg(syscall(KIO_NR_ENTER, fd, to_submit, min_complete, flags, arg, argsz));
}

static long real_register(void *ctx, int fd, uint32_t opcode, void *arg, uint32_t nr)
{
	(void)ctx;
	return neg(syscall(KIO_NR_REGISTER, fd, opcode, arg, nr));
}

static long real_prctl(void *ctx, int option, unsigned long a2, unsigned long a3, unsigned long a4,
		       unsigned long a5)
{
	(void)ctx;
	return neg(prctl(option, a2, a3, a4, a5));
}

static long real_seccomp(void *ctx, unsigned int op, unsigned int flags, void *args)
{
	(void)ctx;
	return neg(syscall(SYS_seccomp, op, flags, args));
}

static long real_close(void *ctx, int fd)
{
	(void)ctx;
	return neg(close(fd));
}

static long real_mmap(void *ctx, void **out, size_t len, int prot, int flags, int fd, off_t off)
{
	void *m = mmap(NULL, len, prot, flags, fd, off);

	(void)ctx;
	if (m == MAP_FAILED)
		return -errno;
	*out = m;
	return 0;
}

static long real_munmap(void *ctx, void *addr, size_t len)
{
	(void)ctx;
	return neg(munmap(addr, len));
}

static long real_fork(void *ctx)
{
	(void)ctx;
	return neg(fork());
}

static long real_memfd_create(void *ctx, const char *name, unsigned int flags)
{
	(void)ctx;
	return neg(memfd_create(name, flags));
}

static long real_execve(void *ctx, const char *path, char *const argv[], char *const envp[])
{
	(void)ctx;
	return neg(execve(path, argv, envp));
}

static const struct iour_sys_ops real_ops = {
	.io_uring_setup = real_setup,
	.io_uring_enter = real_enter,
	.io_uring_register = real_register,
	.prctl = real_prctl,
	.seccomp = real_seccomp,
	.close = real_close,
	.mmap = real_mmap,
	.munmap = real_munmap,
	.fork = real_fork,
	.memfd_create = real_memfd_create,
	.execve = real_execve,
	.ctx = NULL,
};

static const struct iour_sys_ops *cur_ops = &real_ops;

const struct iour_sys_ops *iour__sys(void)
{
	return __atomic_load_n(&cur_ops, __ATOMIC_ACQUIRE);
}

const struct iour_sys_ops *iour__sys_set(const struct iour_sys_ops *ops)
{
	return __atomic_exchange_n(&cur_ops, ops ? ops : &real_ops, __ATOMIC_ACQ_REL);
}

const struct iour_sys_ops *iour__sys_real(void)
{
	return &real_ops;
}
