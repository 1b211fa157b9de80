/* SPDX-License-Identifier: MIT */
/*
 * iour-verify-helper: the program an enforcement check executes when it
 * must look at the kernel's answers after an execve.
 *
 *   struct iour_verify_opts o = { .sz = sizeof(o),
 *                                 .exec_path = "/usr/libexec/iour-verify-helper" };
 *   rc = iour_verify(reqs, nr, results, &o);
 *
 * Started that way, it runs the check in its own process and hands the
 * results back.  Started by hand, it runs a small demonstration instead:
 * it checks, in a forked child, that a NOP is allowed and reports what the
 * kernel answered.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <iouring_restrict/iouring_restrict.h>

static int demo(void)
{
	struct iour_verify_req req;
	struct iour_verify_result res;
	char msg[128];
	int rc;

	memset(&req, 0, sizeof(req));
	req.sz = sizeof(req);
	req.opcode = 0; /* IORING_OP_NOP */
	req.expect = IOUR_EXPECT_ALLOW;
	rc = iour_verify(&req, 1, &res, NULL);
	iour_strerror(rc, msg, sizeof(msg));
	printf("NOP expected allowed: %s (status %u, res %d); threads in this process: %d\n",
	       rc == 0 ? "as expected" : msg, res.status, res.res, iour_task_thread_count());
	return rc == 0 ? 0 : 1;
}

int main(void)
{
	int rc = iour_verify_serve();

	if (rc == -ENOENT)
		return demo();
	if (rc < 0) {
		fprintf(stderr, "iour-verify-helper: %s\n", iour_errname(rc));
		return 1;
	}
	return 0;
}
