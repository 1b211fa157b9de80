/* The enforcement check after an exec: this program is its own helper.
 * Started normally, it asks the kernel (iour_verify) whether NOP gets
 * through in a child that executes this program again; started by the
 * check, it runs the requests (iour_verify_serve). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <iouring_restrict/iouring_restrict.h>

int main(int argc, char **argv)
{
	struct iour_verify_req req;
	struct iour_verify_result res;
	char *args[] = { argv[0], NULL };
	IOUR_OPTS(iour_verify_opts, vo, .exec_path = "/proc/self/exe",
		  .exec_argv = args);
	int rc = iour_verify_serve();

	(void)argc;
	if (rc != -ENOENT) /* started by the check */
		return rc ? 1 : 0;
	memset(&req, 0, sizeof(req));
	req.sz = sizeof(req);
	req.opcode = IOUR_OP_NOP;
	req.expect = IOUR_EXPECT_ALLOW;
	rc = iour_verify(&req, 1, &res, &vo);
	printf("NOP: %s, status %u, res %d\n", iour_errname(rc),
	       res.status, res.res);
	return rc ? 1 : 0;
}
