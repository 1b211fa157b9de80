/* SPDX-License-Identifier: MIT */
/*
 * The library side of tests/schema/run.sh, built against the test build's
 * static library (-DIOUR_SCHEMA_TEST_EXTRA): the public schema view has
 * the fictitious payload of tests/schema/fictitious.def, and a policy file
 * using it survives load, save and load (doc/policy-files.md).
 *
 *   schema_extra view             the public view's answers
 *   schema_extra describe X.Y     the payload sizes iour_kernel_describe()
 *                                 gives FTRUNCATE and CONNECT for Linux X.Y
 *   schema_extra save POLICY      the policy saved, then saved again after
 *                                 a reload: both texts, exit 1 if they differ
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iouring_restrict/iouring_restrict.h"

static int view(void)
{
	struct iour_payload_info pi = { .sz = sizeof(pi) };
	struct iour_field_info fi = { .sz = sizeof(fi) };
	struct iour_const_info ci = { .sz = sizeof(ci) };
	int i;

	i = iour_payload_find(IOUR_OP_FTRUNCATE);
	if (i < 0 || iour_payload_get((size_t)i, &pi))
		return 1;
	printf("payload %s op %u pdu %u level %u\n", pi.group, pi.opcode, pi.pdu_size, pi.level);
	i = iour_field_find("probe.mode");
	if (i < 0 || iour_field_get((size_t)i, &fi))
		return 1;
	printf("field %s id 0x%x prefix %s off %u size %u applies %d/%d\n", fi.name, fi.id,
	       fi.prefix, fi.offset, fi.size, iour_field_applies(fi.id, IOUR_OP_FTRUNCATE),
	       iour_field_applies(fi.id, IOUR_OP_SOCKET));
	i = iour_const_find("pmode_grow");
	if (i < 0 || iour_const_get((size_t)i, &ci))
		return 1;
	printf("const %s ns %s value %llu\n", ci.name, ci.ns, (unsigned long long)ci.value);
	return 0;
}

static int describe(const char *ver)
{
	struct iour_features f = { .sz = sizeof(f) };
	unsigned int a, b;

	if (sscanf(ver, "%u.%u", &a, &b) != 2 || iour_kernel_describe(IOUR_KVER(a, b), &f))
		return 1;
	printf("pdu FTRUNCATE %u CONNECT %u (named %u)\n", f.pdu_size[IOUR_OP_FTRUNCATE],
	       f.pdu_size[IOUR_OP_CONNECT], f.pdu_connect);
	return 0;
}

static char *save(const struct iour_policy *p)
{
	int n = iour_policy__save_json(p, 0, NULL, 0);
	char *s;

	if (n < 0)
		return NULL;
	s = malloc((size_t)n + 1);
	if (s && iour_policy__save_json(p, 0, s, (size_t)n + 1) < 0) {
		free(s);
		return NULL;
	}
	return s;
}

static int round_trip(const char *path)
{
	struct iour_load_error e = { .sz = sizeof(e) };
	struct iour_policy *p = NULL, *q = NULL;
	char *a, *b;
	int rc;

	if (iour_policy__load_file(path, NULL, &p, &e)) {
		fprintf(stderr, "%s: %s\n", path, e.message);
		return 1;
	}
	a = save(p);
	if (!a || iour_policy__load_json(a, strlen(a), NULL, &q, &e)) {
		fprintf(stderr, "reload: %s\n", e.message);
		return 1;
	}
	b = save(q);
	rc = !b || strcmp(a, b);
	printf("%s", a);
	if (rc)
		fprintf(stderr, "second save differs:\n%s", b ? b : "(failed)");
	free(a);
	free(b);
	iour_policy__free(p);
	iour_policy__free(q);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "view"))
		return view();
	if (argc == 3 && !strcmp(argv[1], "describe"))
		return describe(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "save"))
		return round_trip(argv[2]);
	fprintf(stderr, "usage: schema_extra view | describe X.Y | save POLICY\n");
	return 2;
}
