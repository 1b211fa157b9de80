/* The rule language: a comparison list parsed for a filter, one field,
 * operator, value and prefix each, a context built from assignments, and
 * an error shown with a caret under its place. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <iouring_restrict/iouring_restrict.h>

int main(void)
{
	IOUR_OPTS(iour_rule_error, err);
	IOUR_OPTS(iour_cmp, c);
	const struct iour_cmp *cmps;
	const char *bad = "family == SOCK_STREAM";
	struct iour_filter *f = NULL;
	struct iour_rule *rule = NULL;
	uint8_t ctx[IOUR_CTX_SIZE];
	uint32_t id, op;
	int n, r;

	r = iour_rule_parse("family in {AF_INET, AF_INET6}, type == SOCK_STREAM", IOUR_OP_SOCKET,
			    &rule, &err);
	if (r)
		return 1;
	n = iour_rule_cmps(rule, &cmps);
	printf("%d comparisons%s%s\n", n, iour_rule_warning(rule) ? ": " : "",
	       iour_rule_warning(rule) ? iour_rule_warning(rule) : "");
	if (iour_filter__new(NULL, &f) ||
	    iour_filter__add_rule(f, IOUR_OP_SOCKET, IOUR_ALLOW, cmps, (size_t)n))
		return 1;
	iour_filter__free(f);
	iour_rule_free(rule);

	if (iour_rule_parse(bad, IOUR_OP_SOCKET, &rule, &err) == -EBADMSG)
		printf("%s\n%*s^ %s\n", bad, (int)err.pos, "", err.message);

	if (iour_rule_field("socket.family", IOUR_RULE_NO_OPCODE, &id, &err) ||
	    iour_rule_op("not in", &op) || iour_rule_value("AF_UNIX", id, &c, &err))
		return 1;
	printf("field %u, op %u, value %" PRIu64 "\n", id, op, c.value);
	if (iour_rule_prefix("10.0.0.0/8", IOUR_FIELD_CONNECT_ADDR4, &c, &err))
		return 1;
	printf("prefix 0x%" PRIx64 "/%" PRIu64 "\n", c.value, c.arg);

	if (iour_rule_ctx("family=AF_INET, type=SOCK_STREAM", IOUR_OP_SOCKET, ctx, sizeof(ctx),
			  &err))
		return 1;
	printf("context built: payload byte 16 is %u\n", ctx[16]);
	return 0;
}
