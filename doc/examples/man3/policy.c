/* A policy: the classic part, argument filters, a raw program, and its
 * attributes with their bounds. */
#include <stdio.h>
#include <sys/socket.h>
#include <iouring_restrict/iouring_restrict.h>

int main(void)
{
	struct iour_cmp unix_only = { .sz = sizeof(unix_only),
				      .field = IOUR_FIELD_SOCKET_FAMILY,
				      .op = IOUR_CMP_EQ,
				      .value = AF_UNIX };
	struct iour_insn allow[1] = { { 0x06, 0, 0,
					1 } }; /* BPF_RET|BPF_K 1 */
	uint32_t min, max, def, v;
	struct iour_policy *pol, *copy;
	struct iour_ruleset *rs, *got = NULL;
	struct iour_filter *f;
	int rc;

	if (iour_ruleset__new(NULL, &rs) ||
	    iour_filter__new(NULL, &f) || iour_policy__new(NULL, &pol))
		return 1;
	iour_ruleset__allow_sqe_op_name(rs, "SOCKET");
	iour_ruleset__allow_sqe_op_name(rs, "OPENAT");
	iour_ruleset__set_sqe_flags(rs, 0, 0);
	iour_filter__add_rule(f, IOUR_OP_SOCKET, IOUR_ALLOW, &unix_only,
			      1);
	rc = iour_policy__set_ruleset(pol, rs);
	rc = rc ? rc : iour_policy__set_filter(pol, f);
	rc = rc ? rc :
		  iour_policy__set_prog(pol, IOUR_OP_OPENAT, allow, 1,
					0);
	rc = rc ? rc :
		  iour_policy__set_attr(pol, IOUR_POLICY_ATTR_COMPAT,
					IOUR_POLICY_COMPAT_HARD);
	rc = rc ? rc : iour_policy__dup(pol, &copy);
	if (rc) {
		fprintf(stderr, "%s\n", iour_strerror_desc(rc));
		return 1;
	}
	iour_policy__get_attr(copy, IOUR_POLICY_ATTR_COMPAT, &v);
	if (iour_policy__get_ruleset(copy, &got) == 0 && got) {
		printf("classic part: OPENAT %s\n",
		       iour_ruleset__sqe_op_allowed(got, IOUR_OP_OPENAT) == 1 ?
			       "allowed" : "denied");
		iour_ruleset__free(got);
	}
	iour_policy_attr_bounds(IOUR_POLICY_ATTR_COMPANION, &min, &max,
				&def);
	printf("compat %u; companion %u..%u, default %u; SOCKET programs: %d\n",
	       v, min, max, def,
	       iour_policy__prog_cnt(copy, IOUR_OP_SOCKET));
	iour_policy__free(copy);
	iour_policy__free(pol);
	iour_filter__free(f);
	iour_ruleset__free(rs);
	return 0;
}
