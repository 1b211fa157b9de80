/* SPDX-License-Identifier: MIT */
/*
 * agent-stall: a container runtime's connection to `iour-restrict agent`
 * without a container (tests/agent/run.sh): a child installs a seccomp
 * filter that sends io_uring_setup to a listener (as runc does for
 * SCMP_ACT_NOTIFY), the listener goes to the agent with runc's message,
 * then the child calls io_uring_setup.
 *
 *   agent-stall SOCKET ID POLICY plain   params on the stack
 *   agent-stall SOCKET ID POLICY fuse    params in a FUSE page that never
 *                                        arrives (tests/common/fuse_stall.h),
 *                                        then a second call, params on the
 *                                        stack
 *   agent-stall SOCKET ID POLICY fuse1   the FUSE call alone
 *
 * Prints "calling", then "setup=RESULT ms=MS" (RESULT the fd or -errno)
 * per call, and "setup2=..." for the second.  The FUSE server stays until
 * the child exits (at most 20 s).  Needs root (FUSE).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/io_uring.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fuse_stall.h"

static long long ms_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int listener(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog p = { .len = sizeof(f) / sizeof(f[0]), .filter = f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -1;
	return (int)syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER,
			    &p);
}

static int send_fd(int s, int fd, const char *msg)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} cb;
	struct iovec iov = { (void *)msg, strlen(msg) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *cm;

	memset(&cb, 0, sizeof(cb));
	mh.msg_control = cb.buf;
	mh.msg_controllen = sizeof(cb.buf);
	cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	return sendmsg(s, &mh, MSG_NOSIGNAL) < 0 ? -1 : 0;
}

static void call(const char *name, void *params)
{
	long long t0 = ms_now();
	long fd = syscall(__NR_io_uring_setup, 8, params);

	printf("%s=%ld ms=%lld\n", name, fd >= 0 ? fd : -errno, ms_now() - t0);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct fuse_stall fs = { .server = -1 };
	int sv[2], s, lfd, st, fuse;
	char msg[1024], why[256], c;
	pid_t pid;

	if (argc != 5 || strlen(argv[1]) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "usage: agent-stall SOCKET ID POLICY plain|fuse|fuse1\n");
		return 2;
	}
	fuse = !strcmp(argv[4], "fuse") ? 2 : !strcmp(argv[4], "fuse1");
	if (fuse && fuse_stall_start(&fs, why, sizeof(why))) {
		printf("skip: %s\n", why);
		return 0;
	}
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
		return 2;
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		struct io_uring_params p;
		void *m = NULL;

		close(sv[0]);
		if (fuse) {
			int f = open(fs.file, O_RDONLY);

			m = f < 0 ? MAP_FAILED :
				    mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE, f, 0);
			if (m == MAP_FAILED)
				_exit(3);
		}
		lfd = listener();
		if (lfd < 0 || send_fd(sv[1], lfd, "l") || read(sv[1], &c, 1) != 1)
			_exit(4);
		close(lfd);
		printf("calling\n");
		fflush(stdout);
		memset(&p, 0, sizeof(p));
		call("setup", fuse ? m : &p);
		if (fuse == 2) {
			memset(&p, 0, sizeof(p));
			call("setup2", &p);
		}
		_exit(0);
	}
	close(sv[1]);
	{
		union {
			char buf[CMSG_SPACE(sizeof(int))];
			struct cmsghdr align;
		} cb;
		struct iovec iov = { &c, 1 };
		struct msghdr mh = { .msg_iov = &iov,
				     .msg_iovlen = 1,
				     .msg_control = cb.buf,
				     .msg_controllen = sizeof(cb.buf) };

		if (recvmsg(sv[0], &mh, 0) != 1 || !CMSG_FIRSTHDR(&mh))
			return 2;
		memcpy(&lfd, CMSG_DATA(CMSG_FIRSTHDR(&mh)), sizeof(int));
	}
	snprintf(
		msg, sizeof(msg),
		"{\"ociVersion\": \"1.0.2\", \"fds\": [\"seccompFd\"], \"pid\": %d, \"state\": "
		"{\"ociVersion\": \"1.0.2\", \"id\": \"%s\", \"status\": \"creating\", \"pid\": %d, "
		"\"annotations\": {\"org.iouring-restrict.policy\": \"%s\"}}}",
		pid, argv[2], pid, argv[3]);
	memcpy(sa.sun_path, argv[1], strlen(argv[1]));
	s = socket(AF_UNIX, SOCK_STREAM, 0);
	if (s < 0 || connect(s, (struct sockaddr *)&sa, sizeof(sa)) || send_fd(s, lfd, msg))
		return 2;
	close(s);
	close(lfd);
	if (write(sv[0], "g", 1) != 1)
		return 2;
	for (int i = 0; i < 2000 && waitpid(pid, &st, WNOHANG) != pid; i++)
		usleep(10000);
	if (fuse)
		fuse_stall_stop(&fs); /* ends the reads still waiting */
	if (waitpid(pid, &st, 0) != pid && errno != ECHILD)
		return 2;
	return 0;
}
