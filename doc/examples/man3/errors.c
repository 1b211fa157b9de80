/* Explaining an error code: its name, its text, and the text in a buffer. */
#include <stdio.h>
#include <iouring_restrict/iouring_restrict.h>

int main(void)
{
	struct iour_ruleset *rs;
	char msg[128];
	int rc;

	if (iour_ruleset__new(NULL, &rs))
		return 1;
	rc = iour_ruleset__allow_sqe_op_name(rs, "NO_SUCH_OP");
	printf("%s: %s\n", iour_errname(rc), iour_strerror_desc(rc));
	iour_strerror(rc, msg, sizeof(msg));
	printf("%s\n", msg);
	iour_ruleset__free(rs);
	return rc < 0 ? 0 : 1;
}
