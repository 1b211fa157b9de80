/* Explaining an error code: its name, its text, the text in a buffer, and
 * the detail the failed call recorded about the value it refused. */
#include <stdio.h>
#include <iouring_restrict/iouring_restrict.h>

int main(void)
{
	struct iour_ruleset *rs;
	const char *detail;
	char msg[128];
	int rc;

	if (iour_ruleset__new(NULL, &rs))
		return 1;
	rc = iour_ruleset__allow_sqe_op_name(rs, "NO_SUCH_OP");
	printf("%s: %s\n", iour_errname(rc), iour_strerror_desc(rc));
	iour_strerror(rc, msg, sizeof(msg));
	printf("%s\n", msg);

	rc = iour_ruleset__allow_sqe_op(rs, 255);
	detail = iour_errdetail("iour_ruleset__allow_sqe_op", rc);
	printf("%s: %s\n", iour_errname(rc), detail ? detail : iour_strerror_desc(rc));
	iour_ruleset__free(rs);
	return rc < 0 && detail ? 0 : 1;
}
