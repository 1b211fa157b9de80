/* A restriction set: build it, query it, and export the kernel's entries
 * (struct io_uring_restriction, 16 bytes each) for Linux 6.1. */
#include <stdio.h>
#include <stdlib.h>
#include <iouring_restrict/iouring_restrict.h>

int main(void)
{
	struct iour_ruleset *rs, *copy;
	IOUR_OPTS(iour_export_opts, eo, .kver = IOUR_KVER(6, 1));
	uint32_t allowed, required;
	size_t len = 0;
	void *buf;
	int rc;

	if (iour_ruleset__new(NULL, &rs))
		return 1;
	rc = iour_ruleset__deny_all_sqe_ops(rs);
	rc = rc ? rc : iour_ruleset__deny_all_register_ops(rs);
	rc = rc ? rc : iour_ruleset__allow_sqe_op_name(rs, "READ");
	rc = rc ? rc : iour_ruleset__allow_sqe_op(rs, IOUR_OP_WRITE);
	rc = rc ? rc :
		  iour_ruleset__allow_register_op_name(
			  rs, "REGISTER_FILES");
	rc = rc ? rc :
		  iour_ruleset__allow_register_op(
			  rs, IOUR_REGISTER_BUFFERS);
	rc = rc ? rc :
		  iour_ruleset__set_sqe_flags(rs, IOUR_SQE_FIXED_FILE,
					      0);
	rc = rc ? rc : iour_ruleset__dup(rs, &copy);
	if (rc) {
		fprintf(stderr, "%s\n", iour_strerror_desc(rc));
		return 1;
	}
	iour_ruleset__sqe_flags(copy, &allowed, &required);
	printf("READ %d, OPENAT %d, REGISTER_FILES %d; restricted: sqe %d, register %d; "
	       "flags allowed 0x%x required 0x%x\n",
	       iour_ruleset__sqe_op_allowed(copy, IOUR_OP_READ),
	       iour_ruleset__sqe_op_allowed(copy, IOUR_OP_OPENAT),
	       iour_ruleset__register_op_allowed(copy,
						 IOUR_REGISTER_FILES),
	       iour_ruleset__sqe_restricted(copy),
	       iour_ruleset__register_restricted(copy), allowed,
	       required);

	/* NULL asks for the size; the count of entries comes back */
	if (iour_ruleset__export(copy, &eo, NULL, &len) < 0 ||
	    !(buf = malloc(len)))
		return 1;
	rc = iour_ruleset__export(copy, &eo, buf, &len);
	printf("export for 6.1: %d entries, %zu bytes\n", rc, len);
	free(buf);
	iour_ruleset__free(copy);
	iour_ruleset__free(rs);
	return rc > 0 ? 0 : 1;
}
