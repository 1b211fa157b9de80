/* SPDX-License-Identifier: MIT */
/*
 * Tutorial step 3 (doc/tutorial.md): argument filters.
 *
 * The task policy of step 2 plus SOCKET, with a classic-BPF filter on its
 * arguments: AF_UNIX sockets are allowed, every other family is denied.
 * On Linux 7.0+ the kernel runs the filter for every SOCKET request of
 * every ring this process creates.  Before 7.0 there are no filters (nor
 * task restrictions): the policy degrades closed to the seccomp companion,
 * as in step 2.  The program checks whichever the running kernel gives.
 */
#include <errno.h>
#include <liburing.h>
#include <stdio.h>
#include <sys/socket.h>
#include <unistd.h>

#include <iouring_restrict/iouring_restrict.h>

static int run(struct io_uring *ring)
{
	struct io_uring_cqe *cqe;
	int res;

	if (io_uring_submit(ring) != 1 || io_uring_wait_cqe(ring, &cqe))
		return -EPROTO;
	res = cqe->res;
	io_uring_cqe_seen(ring, cqe);
	return res;
}

int main(void)
{
	struct iour_cmp unix_only = { .sz = sizeof(unix_only),
				      .field = IOUR_FIELD_SOCKET_FAMILY,
				      .op = IOUR_CMP_EQ,
				      .value = AF_UNIX };
	struct iour_ruleset *rs = NULL;
	struct iour_filter *f = NULL;
	struct iour_policy *pol = NULL;
	struct iour_plan *plan = NULL;
	struct iour_report *rep = NULL;
	struct io_uring ring;
	int r, level, status, mech, s_unix, s_inet;

	level = iour_feature_level();
	if (level < 0) {
		fprintf(stderr, "step3: probe: %s\n", iour_strerror_desc(level));
		return 1;
	}
	printf("step3: kernel feature level %d: %s\n", level, iour_feature_level_str(level));

	/* The classic part must allow SOCKET, or the filter is never used. */
	if ((r = iour_ruleset__new(NULL, &rs)) ||
	    (r = iour_ruleset__allow_sqe_op_name(rs, "NOP")) ||
	    (r = iour_ruleset__allow_sqe_op_name(rs, "SOCKET")) ||
	    (r = iour_ruleset__set_sqe_flags(rs, 0, 0)) || (r = iour_filter__new(NULL, &f)) ||
	    (r = iour_filter__add_rule(f, IORING_OP_SOCKET, IOUR_ALLOW, &unix_only, 1)) ||
	    (r = iour_filter__set_default(f, IORING_OP_SOCKET, IOUR_DENY)) ||
	    (r = iour_policy__new(NULL, &pol)) || (r = iour_policy__set_ruleset(pol, rs)) ||
	    (r = iour_policy__set_filter(pol, f)) || (r = iour_policy__plan(pol, NULL, &plan))) {
		fprintf(stderr, "step3: policy: %s\n", iour_strerror_desc(r));
		return 1;
	}
	r = iour_plan__apply_task(plan, NULL, &rep);
	if (r) {
		fprintf(stderr, "step3: iour_plan__apply_task: %s\n", iour_strerror_desc(r));
		return 1;
	}
	status = iour_report__status(rep);
	mech = iour_report__mechanism(rep);
	printf("step3: task: %s\n", iour_status_str(status));

	r = io_uring_queue_init(8, &ring, 0);
	if (level >= IOUR_LEVEL_TASK_BPF) {
		if (status != IOUR_STATUS_FULLY || !(mech & IOUR_MECH_TASK) || r) {
			printf("step3: FAILED: expected task filters and a usable ring (%s)\n",
			       iour_errname(r));
			return 1;
		}
		io_uring_prep_socket(io_uring_get_sqe(&ring), AF_UNIX, SOCK_STREAM, 0, 0);
		s_unix = run(&ring);
		io_uring_prep_socket(io_uring_get_sqe(&ring), AF_INET, SOCK_STREAM, 0, 0);
		s_inet = run(&ring);
		printf("step3: filters (Linux 7.0+): SOCKET AF_UNIX -> %s, SOCKET AF_INET -> %s\n",
		       s_unix >= 0 ? "a socket" : iour_errname(s_unix),
		       s_inet >= 0 ? "a socket" : iour_errname(s_inet));
		if (s_unix >= 0)
			close(s_unix);
		if (s_inet >= 0)
			close(s_inet);
		if (s_unix < 0 || s_inet != -EACCES) {
			printf("step3: FAILED: expected an AF_UNIX socket and AF_INET -EACCES\n");
			return 1;
		}
	} else {
		printf("step3: no argument filters before Linux 7.0: fell back to the seccomp "
		       "companion: io_uring_setup -> %s\n",
		       r < 0 ? iour_errname(r) : "a ring");
		if (status != IOUR_STATUS_PARTIALLY || mech != (int)IOUR_MECH_COMPANION ||
		    r != -ENOSYS) {
			printf("step3: FAILED: expected the companion and io_uring_setup -ENOSYS\n");
			return 1;
		}
	}
	iour_report__free(rep);
	iour_plan__free(plan);
	iour_policy__free(pol);
	iour_filter__free(f);
	iour_ruleset__free(rs);
	printf("step3: ok\n");
	return 0;
}
