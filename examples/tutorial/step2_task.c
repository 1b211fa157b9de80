/* SPDX-License-Identifier: MIT */
/*
 * Tutorial step 2 (doc/tutorial.md): restrict the task.
 *
 * The same allow-list (NOP and READ) as a task policy: on Linux 7.0+ every
 * ring this process and its children create from now on is restricted by
 * the kernel.  Older kernels cannot restrict a task; the policy degrades
 * closed: the seccomp companion makes io_uring_setup fail with ENOSYS for
 * this process and its children.  The program checks whichever of the two
 * the running kernel gives, and says which.
 */
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <stdio.h>

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
	struct iour_ruleset *rs = NULL;
	struct iour_policy *pol = NULL;
	struct iour_plan *plan = NULL;
	struct iour_report *rep = NULL;
	struct io_uring ring;
	int r, level, status, mech, nop, op;

	level = iour_feature_level();
	if (level < 0) {
		fprintf(stderr, "step2: probe: %s\n", iour_strerror_desc(level));
		return 1;
	}
	printf("step2: kernel feature level %d: %s\n", level, iour_feature_level_str(level));

	if ((r = iour_ruleset__new(NULL, &rs)) ||
	    (r = iour_ruleset__allow_sqe_op_name(rs, "NOP")) ||
	    (r = iour_ruleset__allow_sqe_op_name(rs, "READ")) ||
	    (r = iour_ruleset__set_sqe_flags(rs, 0, 0)) || (r = iour_policy__new(NULL, &pol)) ||
	    (r = iour_policy__set_ruleset(pol, rs)) || (r = iour_policy__plan(pol, NULL, &plan))) {
		fprintf(stderr, "step2: policy: %s\n", iour_strerror_desc(r));
		return 1;
	}
	/* Sets no_new_privs, then the task set (7.0+) or the companion. */
	r = iour_plan__apply_task(plan, NULL, &rep);
	if (r) {
		fprintf(stderr, "step2: iour_plan__apply_task: %s\n", iour_strerror_desc(r));
		return 1;
	}
	status = iour_report__status(rep);
	mech = iour_report__mechanism(rep);
	printf("step2: task: %s\n", iour_status_str(status));

	r = io_uring_queue_init(8, &ring, 0);
	if (level >= IOUR_LEVEL_TASK_BPF) {
		if (status != IOUR_STATUS_FULLY || !(mech & IOUR_MECH_TASK) || r) {
			printf("step2: FAILED: expected task restrictions and a usable ring (%s)\n",
			       iour_errname(r));
			return 1;
		}
		io_uring_prep_nop(io_uring_get_sqe(&ring));
		nop = run(&ring);
		io_uring_prep_openat(io_uring_get_sqe(&ring), AT_FDCWD, "/dev/null", O_RDONLY, 0);
		op = run(&ring);
		printf("step2: task restrictions (Linux 7.0+): a new ring: NOP -> %d, OPENAT -> %s\n",
		       nop, op < 0 ? iour_errname(op) : "completed");
		if (nop != 0 || op != -EACCES) {
			printf("step2: FAILED: expected NOP 0 and OPENAT -EACCES\n");
			return 1;
		}
	} else {
		printf("step2: no task restrictions before Linux 7.0: fell back to the seccomp "
		       "companion: io_uring_setup -> %s\n",
		       r < 0 ? iour_errname(r) : "a ring");
		if (status != IOUR_STATUS_PARTIALLY || mech != (int)IOUR_MECH_COMPANION ||
		    r != -ENOSYS) {
			printf("step2: FAILED: expected the companion and io_uring_setup -ENOSYS\n");
			return 1;
		}
	}
	iour_report__free(rep);
	iour_plan__free(plan);
	iour_policy__free(pol);
	iour_ruleset__free(rs);
	printf("step2: ok\n");
	return 0;
}
