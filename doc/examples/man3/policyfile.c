/* A policy file: loaded from text and from a file, decided for one
 * request, written back; and the opcode groups policy files name. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <iouring_restrict/iouring_restrict.h>

static const char text[] =
	"{ \"version\": 1, \"defaultAction\": \"deny\", \"entries\": [\n"
	"  { \"names\": [\"@file-read\"], \"action\": \"allow\" },\n"
	"  { \"names\": [\"socket\"], \"action\": \"allow\",\n"
	"    \"args\": [ { \"field\": \"socket.family\", \"op\": \"==\", \"value\": \"AF_UNIX\" } ] } ] }\n";

int main(void)
{
	IOUR_OPTS(iour_load_error, err);
	IOUR_OPTS(iour_request_verdict, v);
	IOUR_OPTS(iour_group_info, g);
	char path[] = "/tmp/policyXXXXXX";
	uint8_t ctx[IOUR_CTX_SIZE];
	struct iour_policy *pol, *again;
	uint32_t ops[256];
	char *out;
	int fd, gi, n, len;

	if (iour_policy__load_json(text, strlen(text), NULL, &pol,
				   &err)) {
		fprintf(stderr, "%u:%u: %s (at %s)\n", err.line,
			err.column, err.message, err.path);
		return 1;
	}
	iour_ctx_generic(ctx, sizeof(ctx), IOUR_OP_SOCKET, 0, 0);
	iour_ctx_socket(ctx, sizeof(ctx), AF_INET, SOCK_STREAM, 0);
	iour_policy__decide(pol, ctx, sizeof(ctx), &v);
	printf("SOCKET(AF_INET): %s (reason %u)\n",
	       v.verdict == IOUR_ALLOW ? "allowed" : "denied",
	       v.reason);

	len = iour_policy__save_json(pol, 0, NULL, 0);
	if (len < 0 || !(out = malloc((size_t)len + 1)))
		return 1;
	iour_policy__save_json(pol, 0, out, (size_t)len + 1);
	fd = mkstemp(path);
	if (fd < 0 || write(fd, out, (size_t)len) != len)
		return 1;
	close(fd);
	free(out);
	n = iour_policy__load_file(path, NULL, &again, &err);
	unlink(path);
	printf("saved and loaded again: %s\n", iour_errname(n));

	gi = iour_group_find("@file-read");
	if (gi < 0 || iour_group_get((size_t)gi, &g))
		return 1;
	n = iour_group_opcodes((size_t)gi, IOUR_KVER(6, 1), ops, 256);
	printf("%s (%s): %d opcodes on 6.1, %d register opcodes; %d groups\n",
	       g.name, g.help, n,
	       iour_group_register_ops((size_t)gi, IOUR_KVER(6, 1), ops,
				       256),
	       iour_group_count());
	iour_policy__free(again);
	iour_policy__free(pol);
	return 0;
}
