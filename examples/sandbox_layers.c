/* SPDX-License-Identifier: MIT */
/*
 * sandbox_layers: run a command under three layers, each covering what the
 * others cannot (doc/sandbox.md; iouring-restrict(7), "WHAT IT CANNOT
 * RESTRICT"):
 *
 *   Landlock   the file trees the command may read (-r) and write (-w),
 *              through open(2) and io_uring's OPENAT alike;
 *   seccomp    plain system calls: socket(2) and a few kernel-attack
 *              surfaces fail with EPERM;
 *   io_uring   the request opcodes of every ring the command creates (-a;
 *              SOCKET is not among the defaults): task restrictions on
 *              Linux 7.0+, before 7.0 the ring broker (broker.h), which
 *              creates each ring restricted.
 *
 *   sandbox_layers [-r DIR]... [-w DIR]... [-a OP,OP,...] -- COMMAND [ARG...]
 *
 * The order is fixed: no_new_privs (which lets an unprivileged process
 * apply the next three), Landlock, the seccomp filter, then the io_uring
 * layer; the command is executed last and inherits all of them.  The
 * launcher stays outside the sandbox: with the broker it serves the
 * command's io_uring_setup() calls until the command exits.  Without
 * Landlock the launcher refuses to run the command.
 *
 * Exit status: the command's; 1 if a layer could not be applied; 2 for a
 * usage error.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/landlock.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <iouring_restrict/iouring_restrict.h>

#define ME "sandbox_layers"
#define MAX_DIRS 32
#define DEFAULT_OPS "NOP,READ,WRITE,READV,WRITEV,OPENAT,CLOSE,STATX,FSYNC"

#if defined(__x86_64__)
#define NATIVE_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define NATIVE_ARCH AUDIT_ARCH_AARCH64
#else
#error "sandbox_layers: add this architecture's AUDIT_ARCH_*"
#endif

struct dir {
	const char *path;
	int write;
};

static int usage(void)
{
	fprintf(stderr,
		"usage: " ME " [-r DIR]... [-w DIR]... [-a OP,OP,...] -- COMMAND [ARG...]\n");
	return 2;
}

/* ---- Landlock: the trees the command may read and write */

/* The file-system rights this kernel's Landlock ABI knows (all handled, so
 * that whatever no rule grants is denied). */
static __u64 fs_rights(int abi)
{
	__u64 r = LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE |
		  LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR |
		  LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REMOVE_FILE |
		  LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_DIR |
		  LANDLOCK_ACCESS_FS_MAKE_REG | LANDLOCK_ACCESS_FS_MAKE_SOCK |
		  LANDLOCK_ACCESS_FS_MAKE_FIFO | LANDLOCK_ACCESS_FS_MAKE_BLOCK |
		  LANDLOCK_ACCESS_FS_MAKE_SYM;

	if (abi >= 2)
		r |= 1ULL << 13; /* LANDLOCK_ACCESS_FS_REFER */
	if (abi >= 3)
		r |= 1ULL << 14; /* LANDLOCK_ACCESS_FS_TRUNCATE */
	return r;
}

static int apply_landlock(const struct dir *dirs, size_t n)
{
	const __u64 read = LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_READ_FILE |
			   LANDLOCK_ACCESS_FS_READ_DIR;
	const __u64 file_only = LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE |
				LANDLOCK_ACCESS_FS_READ_FILE | (1ULL << 14);
	struct landlock_ruleset_attr ra = { 0 };
	int abi, rs;
	size_t i;

	abi = (int)syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
	if (abi < 1) {
		fprintf(stderr, ME ": Landlock is not available (%s): refusing to run\n",
			strerror(errno));
		return -1;
	}
	ra.handled_access_fs = fs_rights(abi);
	rs = (int)syscall(SYS_landlock_create_ruleset, &ra, sizeof(ra), 0);
	if (rs < 0) {
		perror(ME ": landlock_create_ruleset");
		return -1;
	}
	for (i = 0; i < n; i++) {
		struct landlock_path_beneath_attr pb = { 0 };
		struct stat st;

		pb.parent_fd = open(dirs[i].path, O_PATH | O_CLOEXEC);
		if (pb.parent_fd < 0 || fstat(pb.parent_fd, &st)) {
			fprintf(stderr, ME ": %s: %s\n", dirs[i].path, strerror(errno));
			return -1;
		}
		pb.allowed_access = dirs[i].write ? ra.handled_access_fs : read;
		if (!S_ISDIR(st.st_mode)) /* a file takes the rights of files only */
			pb.allowed_access &= file_only;
		if (syscall(SYS_landlock_add_rule, rs, LANDLOCK_RULE_PATH_BENEATH, &pb, 0)) {
			fprintf(stderr, ME ": landlock_add_rule %s: %s\n", dirs[i].path,
				strerror(errno));
			return -1;
		}
		close(pb.parent_fd);
	}
	if (syscall(SYS_landlock_restrict_self, rs, 0)) {
		perror(ME ": landlock_restrict_self");
		return -1;
	}
	close(rs);
	return abi;
}

/* ---- seccomp: plain system calls */

/* Denied with EPERM: the plain network (io_uring's SOCKET is left to the
 * io_uring layer), and kernel interfaces a confined program has no use
 * for. */
static const int denied_syscalls[] = {
	SYS_socket,  SYS_mount,		  SYS_umount2, SYS_pivot_root,	SYS_unshare,
	SYS_setns,   SYS_bpf,		  SYS_keyctl,  SYS_add_key,	SYS_request_key,
	SYS_ptrace,  SYS_perf_event_open, SYS_userfaultfd,
};

static int apply_seccomp(void)
{
	enum { N = sizeof(denied_syscalls) / sizeof(denied_syscalls[0]) };
	struct sock_filter f[N + 8];
	struct sock_fprog prog = { 0 };
	unsigned int i, k = 0;

	f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
					      offsetof(struct seccomp_data, arch));
	f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NATIVE_ARCH, 1, 0);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
					      offsetof(struct seccomp_data, nr));
#if defined(__x86_64__)
	/* x32 system calls (bit 30) would name the same calls by other numbers */
	f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000U, N + 1, 0);
#endif
	for (i = 0; i < N; i++)
		f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
						      (unsigned int)denied_syscalls[i], N - i, 0);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM);
	prog.len = (unsigned short)k;
	prog.filter = f;
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog)) {
		perror(ME ": seccomp");
		return -1;
	}
	return 0;
}

/* ---- io_uring: the library's policy */

static int make_plan(char *ops, int brokered, struct iour_plan **plan)
{
	IOUR_OPTS(iour_plan_opts, po, .flags = brokered ? IOUR_PLAN_BROKERED : 0);
	struct iour_ruleset *rs = NULL;
	struct iour_policy *pol = NULL;
	char *op, *save = NULL;
	int rc;

	rc = iour_ruleset__new(NULL, &rs);
	for (op = strtok_r(ops, ",", &save); !rc && op; op = strtok_r(NULL, ",", &save)) {
		rc = iour_ruleset__allow_sqe_op_name(rs, op);
		if (rc)
			fprintf(stderr, ME ": -a %s: %s\n", op, iour_strerror_desc(rc));
	}
	rc = rc ? rc : iour_ruleset__set_sqe_flags(rs, IOUR_SQE__VALID, 0);
	rc = rc ? rc : iour_policy__new(NULL, &pol);
	rc = rc ? rc : iour_policy__set_ruleset(pol, rs);
	rc = rc ? rc : iour_policy__plan(pol, &po, plan);
	if (rc)
		fprintf(stderr, ME ": the io_uring policy: %s\n", iour_strerror_desc(rc));
	iour_policy__free(pol);
	iour_ruleset__free(rs);
	return rc;
}

static int send_fd(int sock, int fd)
{
	char c = 0, buf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { &c, 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = buf,
			    .msg_controllen = sizeof(buf) };
	struct cmsghdr *cm;

	memset(buf, 0, sizeof(buf));
	cm = CMSG_FIRSTHDR(&m);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	return sendmsg(sock, &m, 0) == 1 ? 0 : -1;
}

static int recv_fd(int sock)
{
	char c, buf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { &c, 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = buf,
			    .msg_controllen = sizeof(buf) };
	struct cmsghdr *cm;
	int fd;

	if (recvmsg(sock, &m, MSG_CMSG_CLOEXEC) != 1 || !(cm = CMSG_FIRSTHDR(&m)) ||
	    cm->cmsg_type != SCM_RIGHTS)
		return -1;
	memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	return fd;
}

/* The child: the layers in order, then the command.  Never returns. */
static void child(const struct dir *dirs, size_t ndirs, const struct iour_plan *plan,
		  int brokered, int sock, char **cmd)
{
	struct iour_report *rep = NULL;
	int lfd, rc;
	char go;

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) {
		perror(ME ": no_new_privs");
		_exit(1);
	}
	if (apply_landlock(dirs, ndirs) < 0 || apply_seccomp())
		_exit(1);
	if (brokered) {
		rc = iour_broker__install(NULL, &lfd);
		if (!rc && send_fd(sock, lfd))
			rc = -EPIPE;
		if (rc) {
			fprintf(stderr, ME ": the ring broker: %s\n", iour_strerror_desc(rc));
			_exit(1);
		}
		close(lfd);
		/* the broker serves before the command runs */
		if (read(sock, &go, 1) != 1)
			_exit(1);
	} else {
		rc = iour_plan__apply_task(plan, NULL, &rep);
		if (rc || !rep || iour_report__status(rep) != IOUR_STATUS_FULLY) {
			fprintf(stderr, ME ": io_uring task restrictions: %s, %s\n",
				iour_errname(rc),
				rep ? iour_status_str(iour_report__status(rep)) : "no report");
			_exit(1);
		}
		iour_report__free(rep);
	}
	close(sock);
	execvp(cmd[0], cmd);
	fprintf(stderr, ME ": %s: %s\n", cmd[0], strerror(errno));
	_exit(127);
}

int main(int argc, char **argv)
{
	char ops_default[] = DEFAULT_OPS;
	struct iour_broker *broker = NULL;
	struct iour_plan *plan = NULL;
	struct dir dirs[MAX_DIRS];
	size_t ndirs = 0;
	char *ops = ops_default;
	int brokered, sv[2], st = 0, lfd, c;
	pid_t pid;

	while ((c = getopt(argc, argv, "+r:w:a:")) != -1) {
		if ((c == 'r' || c == 'w') && ndirs < MAX_DIRS) {
			dirs[ndirs].path = optarg;
			dirs[ndirs++].write = c == 'w';
		} else if (c == 'a') {
			ops = optarg;
		} else {
			return usage();
		}
	}
	if (optind >= argc)
		return usage();

	/* Task restrictions from Linux 7.0; the ring broker before. */
	brokered = iour_feature_level() < IOUR_LEVEL_TASK_BPF;
	if (make_plan(ops, brokered, &plan))
		return 1;
	fprintf(stderr, ME ": Landlock (%zu rules), seccomp (%zu calls denied), io_uring: %s\n",
		ndirs, sizeof(denied_syscalls) / sizeof(denied_syscalls[0]),
		brokered ? "ring broker" : "task restrictions");
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		return 1;
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		close(sv[0]);
		child(dirs, ndirs, plan, brokered, sv[1], argv + optind);
	}
	close(sv[1]);
	if (brokered) {
		/* The command may not read or write this process's memory. */
		prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
		lfd = recv_fd(sv[0]);
		if (lfd < 0 || iour_broker__new(plan, lfd, NULL, &broker) ||
		    write(sv[0], "g", 1) != 1) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			return 1;
		}
		for (;;) {
			struct pollfd pfd = { .fd = iour_broker__fd(broker), .events = POLLIN };

			if (waitpid(pid, &st, WNOHANG) == pid)
				break;
			if (poll(&pfd, 1, 50) > 0)
				(void)iour_broker__serve(broker);
		}
		iour_broker__free(broker);
	} else {
		while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
	}
	close(sv[0]);
	iour_plan__free(plan);
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}
