/* SPDX-License-Identifier: MIT */
/*
 * The library's one syscall seam.
 *
 * These kernel calls of the library go through the function table below:
 * io_uring_setup/enter/register, prctl, seccomp, close of io_uring fds,
 * mmap/munmap, fork, memfd_create and execve.  The default table calls the
 * real kernel.  Tests install another table to inject faults or to emulate
 * kernel behaviour that cannot run on the development machine (the Linux
 * 7.x task and filter paths); such tests say "emulated" in their names.  A
 * NULL entry after `close` in an installed table means the real kernel's
 * call, so a table that predates an entry keeps working.
 *
 * The library's other system calls stay direct; doc/design.md ("One
 * syscall seam") lists them and says why.
 *
 * Every entry returns the syscall's result or a negative errno; errno is not
 * used.
 */
#ifndef IOUR_LIB_SYS_H
#define IOUR_LIB_SYS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "internal.h"

struct iour_sys_ops {
	long (*io_uring_setup)(void *ctx, uint32_t entries, void *params);
	long (*io_uring_enter)(void *ctx, int fd, uint32_t to_submit, uint32_t min_complete,
			       uint32_t flags, const void *arg, size_t argsz);
	long (*io_uring_register)(void *ctx, int fd, uint32_t opcode, void *arg, uint32_t nr_args);
	long (*prctl)(void *ctx, int option, unsigned long a2, unsigned long a3, unsigned long a4,
		      unsigned long a5);
	long (*seccomp)(void *ctx, unsigned int op, unsigned int flags, void *args);
	long (*close)(void *ctx, int fd);
	/* mmap(NULL, len, prot, flags, fd, off): 0 with *out set, or -errno. */
	long (*mmap)(void *ctx, void **out, size_t len, int prot, int flags, int fd, off_t off);
	long (*munmap)(void *ctx, void *addr, size_t len);
	/* fork(): the child's pid in the parent, 0 in the child, or -errno. */
	long (*fork)(void *ctx);
	long (*memfd_create)(void *ctx, const char *name, unsigned int flags);
	/* Called in a forked child: async-signal-safe; returns only on failure. */
	long (*execve)(void *ctx, const char *path, char *const argv[], char *const envp[]);
	void *ctx; /* passed as the first argument of every call */
};

/* The ops in force (never NULL). */
IOUR_INTERNAL const struct iour_sys_ops *iour__sys(void);
/* Install `ops` (NULL restores the real kernel); returns the previous ops.
 * Not thread-safe: tests call it before starting any work. */
IOUR_INTERNAL const struct iour_sys_ops *iour__sys_set(const struct iour_sys_ops *ops);
/* The real-kernel ops, for emulators that forward some calls. */
IOUR_INTERNAL const struct iour_sys_ops *iour__sys_real(void);

static inline long iour__setup(uint32_t entries, void *params)
{
	const struct iour_sys_ops *o = iour__sys();
	return o->io_uring_setup(o->ctx, entries, params);
}
static inline long iour__enter(int fd, uint32_t to_submit, uint32_t min_complete, uint32_t flags,
			       const void *arg, size_t argsz)
{
	const struct iour_sys_ops *o = iour__sys();
	return o->io_uring_enter(o->ctx, fd, to_submit, min_complete, flags, arg, argsz);
}
static inline long iour__register(int fd, uint32_t opcode, void *arg, uint32_t nr)
{
	const struct iour_sys_ops *o = iour__sys();
	return o->io_uring_register(o->ctx, fd, opcode, arg, nr);
}
static inline long iour__prctl(int option, unsigned long a2, unsigned long a3, unsigned long a4,
			       unsigned long a5)
{
	const struct iour_sys_ops *o = iour__sys();
	return o->prctl(o->ctx, option, a2, a3, a4, a5);
}
static inline long iour__seccomp(unsigned int op, unsigned int flags, void *args)
{
	const struct iour_sys_ops *o = iour__sys();
	return o->seccomp(o->ctx, op, flags, args);
}
static inline long iour__close(int fd)
{
	const struct iour_sys_ops *o = iour__sys();
	return o->close(o->ctx, fd);
}

/* The entries added after the io_uring ones may be NULL in a test's table:
 * IOUR__SYS_PICK() falls back to the real kernel's table. */
#define IOUR__SYS_PICK(o, name) ((o)->name ? (o) : iour__sys_real())

static inline long iour__mmap(void **out, size_t len, int prot, int flags, int fd, off_t off)
{
	const struct iour_sys_ops *o = IOUR__SYS_PICK(iour__sys(), mmap);
	return o->mmap(o->ctx, out, len, prot, flags, fd, off);
}
static inline long iour__munmap(void *addr, size_t len)
{
	const struct iour_sys_ops *o = IOUR__SYS_PICK(iour__sys(), munmap);
	return o->munmap(o->ctx, addr, len);
}
static inline long iour__fork(void)
{
	const struct iour_sys_ops *o = IOUR__SYS_PICK(iour__sys(), fork);
	return o->fork(o->ctx);
}
static inline long iour__memfd_create(const char *name, unsigned int flags)
{
	const struct iour_sys_ops *o = IOUR__SYS_PICK(iour__sys(), memfd_create);
	return o->memfd_create(o->ctx, name, flags);
}
static inline long iour__execve(const char *path, char *const argv[], char *const envp[])
{
	const struct iour_sys_ops *o = IOUR__SYS_PICK(iour__sys(), execve);
	return o->execve(o->ctx, path, argv, envp);
}

#endif /* IOUR_LIB_SYS_H */
