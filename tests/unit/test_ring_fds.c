/* SPDX-License-Identifier: MIT */
/*
 * iour_ring_fds() and iour_ring_fds_close() against the real kernel, and
 * the attack they exist for: a program executed under the companion that
 * maps an inherited SQPOLL ring again and submits through shared memory
 * (tests/common/sqpoll_attack.h).  Everything that changes the process
 * (closing fds, seccomp, mount namespaces) happens in a forked child.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "child.h"
#include "sqpoll_attack.h"
#include "iouring_restrict/companion.h"
#include "uring_avail.h"

static bool fd_open(int fd)
{
	return fcntl(fd, F_GETFD) >= 0;
}

static int lists_and_closes(void *arg, struct child_msg *m)
{
	struct io_uring a, b;
	int fds[4], n, pipefd[2];

	(void)arg;
	CHK(m, iour_ring_fds(NULL, 0) == 0);
	CHK(m, iour_ring_fds_close(IOUR_RING_FDS_REFUSE) == 0);
	CHK(m, io_uring_queue_init(4, &a, 0) == 0);
	CHK(m, pipe(pipefd) == 0); /* an fd that is not a ring, in between */
	CHK(m, io_uring_queue_init(4, &b, 0) == 0);
	n = iour_ring_fds(NULL, 0);
	CHKF(m, n == 2, "%d", n);
	CHK(m, iour_ring_fds(fds, 4) == 2);
	CHK(m, fds[0] == a.ring_fd && fds[1] == b.ring_fd);
	CHK(m, iour_ring_fds(fds, 1) == -ERANGE);
	CHK(m, fds[0] == a.ring_fd);
	CHK(m, iour_ring_fds_close(2) == -EINVAL);
	CHK(m, iour_ring_fds_close(~0U) == -EINVAL);
	/* refuse: -EBUSY, and nothing closed */
	CHK(m, iour_ring_fds_close(IOUR_RING_FDS_REFUSE) == -EBUSY);
	CHK(m, fd_open(a.ring_fd) && fd_open(b.ring_fd));
	/* close: both rings, nothing else */
	CHK(m, iour_ring_fds_close(0) == 2);
	CHK(m, !fd_open(a.ring_fd) && !fd_open(b.ring_fd));
	CHK(m, fd_open(pipefd[0]) && fd_open(pipefd[1]));
	CHK(m, iour_ring_fds(NULL, 0) == 0);
	CHK(m, iour_ring_fds_close(0) == 0);
	return 0;
}

Test(ring_fds, lists_and_closes_only_rings)
{
	UNIT_REQUIRE_URING();
	struct child_msg m;

	cr_assert_eq(child_run(lists_and_closes, NULL, &m), 0, "%s", m.text);
}

/* Without procfs the fds cannot be found: an error, never "none". */
static int no_procfs(void *arg, struct child_msg *m)
{
	struct io_uring a;

	(void)arg;
	CHK(m, io_uring_queue_init(4, &a, 0) == 0);
	CHK(m, unshare(CLONE_NEWNS) == 0);
	CHK(m, mount("none", "/", "none", MS_REC | MS_PRIVATE, NULL) == 0);
	CHK(m, umount2("/proc", MNT_DETACH) == 0);
	CHK(m, iour_ring_fds(NULL, 0) == -ENOENT);
	CHK(m, iour_ring_fds_close(0) == -ENOENT);
	CHK(m, iour_ring_fds_close(IOUR_RING_FDS_REFUSE) == -ENOENT);
	/* something else mounted there, shaped like procfs, is not believed */
	CHK(m, mount("tmpfs", "/proc", "tmpfs", 0, NULL) == 0);
	CHK(m, mkdir("/proc/thread-self", 0755) == 0 && mkdir("/proc/thread-self/fd", 0755) == 0);
	CHK(m, iour_ring_fds(NULL, 0) == -ENOENT);
	CHK(m, iour_ring_fds_close(0) == -ENOENT);
	CHK(m, fd_open(a.ring_fd));
	return 0;
}

/* Is "/" a mount point of this mount namespace?  Not in a chroot, where
 * making "/" private fails and the mounts below it may propagate out. */
static bool root_is_a_mount(void)
{
	char line[4096];
	bool found = false;
	FILE *f = fopen("/proc/self/mountinfo", "re");

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		char mnt[4096];

		if (sscanf(line, "%*s %*s %*s %*s %4095s", mnt) == 1 && strcmp(mnt, "/") == 0)
			found = true;
	}
	fclose(f);
	return found;
}

Test(ring_fds, no_procfs_fails_closed)
{
	UNIT_REQUIRE_URING();
	struct child_msg m;

	if (geteuid() != 0)
		cr_skip_test("needs root for a private mount namespace");
	if (!root_is_a_mount())
		cr_skip_test("/ is not a mount point here (a chroot): the test cannot make its "
			     "mount namespace private without touching the host's mounts");
	cr_assert_eq(child_run(no_procfs, NULL, &m), 0, "%s", m.text);
}

/* Fork; the child installs the companion (enter and register denied too),
 * optionally closes the io_uring fds, and executes the attacker. */
static int attack_under_companion(const struct sqpoll_owner *o, bool close_rings)
{
	IOUR_OPTS(iour_companion_opts, co,
		  .flags = IOUR_COMPANION_ENTER | IOUR_COMPANION_REGISTER | IOUR_COMPANION_SET_NNP);
	char *argv[] = { (char *)o->self, NULL };
	char *envp[] = { (char *)o->env, NULL };
	int st, out = open("/dev/null", O_WRONLY);
	pid_t pid;

	cr_assert_geq(out, 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		dup2(out, 1);
		if (iour_companion_install(&co))
			_exit(100);
		if (close_rings && iour_ring_fds_close(0) != 1)
			_exit(101);
		execve(o->self, argv, envp);
		_exit(102);
	}
	close(out);
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert(WIFEXITED(st), "attacker killed by signal %d", WTERMSIG(st));
	return WEXITSTATUS(st);
}

/*
 * The companion alone (setup, enter and register denied) does not stop an
 * inherited SQPOLL ring; closing its fd before execve does.
 */
Test(ring_fds, sqpoll_ring_inherited_across_exec)
{
	UNIT_REQUIRE_URING();
	struct sqpoll_owner o;
	int rc = sqpoll_owner_init(&o), st;

	if (rc == -EPERM || rc == -EINVAL)
		cr_skip_test("SQPOLL rings are not available here (%d)", rc);
	cr_assert_eq(rc, 0, "owner setup: %d", rc);

	/* closed before execve: the attacker finds no ring; the file is intact */
	st = attack_under_companion(&o, true);
	cr_expect_eq(st, SQPOLL_NO_RING, "attacker exit %d", st);
	cr_expect_eq(sqpoll_owner_file_size(&o), 4096);

	/* the companion alone: the attack gets through (the documented limit
	 * that iour_ring_fds_close() exists for) */
	st = attack_under_companion(&o, false);
	cr_expect_eq(st, SQPOLL_DONE, "attacker exit %d", st);
	cr_expect_eq(sqpoll_owner_file_size(&o), 0, "the attack did not truncate the file");
	sqpoll_owner_fini(&o);
}
