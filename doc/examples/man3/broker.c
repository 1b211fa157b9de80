/* The ring broker: a child's io_uring_setup() is answered with a ring this
 * process creates disabled, restricts by the plan (NOP only) and enables. */
#include <errno.h>
#include <linux/io_uring.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <iouring_restrict/iouring_restrict.h>

/* passes one fd over a unix socket */
static int pass_fd(int sock, int fd, int send)
{
	char c = 0, buf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { &c, 1 };
	struct msghdr m = { .msg_iov = &iov,
			    .msg_iovlen = 1,
			    .msg_control = buf,
			    .msg_controllen = sizeof(buf) };
	struct cmsghdr *cm;

	memset(buf, 0, sizeof(buf));
	cm = CMSG_FIRSTHDR(&m);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	if (send) {
		memcpy(CMSG_DATA(cm), &fd, sizeof(int));
		return sendmsg(sock, &m, 0) == 1 ? 0 : -1;
	}
	if (recvmsg(sock, &m, 0) != 1 || !(cm = CMSG_FIRSTHDR(&m)))
		return -1;
	memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	return fd;
}

int main(void)
{
	IOUR_OPTS(iour_broker_counters, c);
	struct iour_policy *pol;
	struct iour_ruleset *rs;
	struct iour_broker *b;
	struct iour_plan *plan;
	int sv[2], listener, rc, status;
	pid_t pid;

	if (iour_ruleset__new(NULL, &rs) ||
	    iour_ruleset__allow_sqe_op_name(rs, "NOP") ||
	    iour_ruleset__set_sqe_flags(rs, 0, 0) ||
	    iour_policy__new(NULL, &pol) ||
	    iour_policy__set_ruleset(pol, rs) ||
	    iour_policy__set_attr(pol, IOUR_POLICY_ATTR_TARGET,
				  IOUR_POLICY_TARGET_RING) ||
	    iour_policy__plan(pol, NULL, &plan) ||
	    socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
		return 1;
	prctl(PR_SET_DUMPABLE, 0);
	pid = fork();
	if (pid == 0) {
		struct io_uring_params p;

		close(sv[0]);
		if (iour_broker__install(NULL, &listener) ||
		    pass_fd(sv[1], listener, 1))
			_exit(2);
		close(listener);
		memset(&p, 0, sizeof(p));
		/* served: a ring restricted to NOP; refused: an errno */
		_exit(syscall(__NR_io_uring_setup, 4, &p) >= 0 ? 0 : errno);
	}
	close(sv[1]);
	listener = pass_fd(sv[0], -1, 0);
	if (listener < 0 ||
	    iour_broker__new(plan, listener, NULL, &b)) {
		waitpid(pid, &status, 0);
		return 1;
	}
	printf("serving on fd %d\n", iour_broker__fd(b));
	while ((rc = iour_broker__serve(b)) == 0 || rc == -EINTR)
		;
	iour_broker__counters(b, &c);
	waitpid(pid, &status, 0);
	/* A refusal is an answer too: without root, for example, the
	 * ring's memory may not be chargeable to the caller. */
	printf("served %llu, refused %llu (memory %llu); the child's "
	       "io_uring_setup: %s\n",
	       (unsigned long long)c.served,
	       (unsigned long long)c.refused,
	       (unsigned long long)c.refused_memory,
	       WEXITSTATUS(status) ? strerror(WEXITSTATUS(status)) : "a ring");
	iour_broker__free(b);
	iour_plan__free(plan);
	iour_policy__free(pol);
	iour_ruleset__free(rs);
	return c.served + c.refused == 1 ? 0 : 1;
}
