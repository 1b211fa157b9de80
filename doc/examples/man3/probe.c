/* What the running kernel supports, and what a given kernel would. */
#include <stdio.h>
#include <iouring_restrict/iouring_restrict.h>

int main(void)
{
	IOUR_OPTS(iour_features, f);
	IOUR_OPTS(iour_features, k);
	int rc = iour_probe(NULL, &f);

	if (rc) {
		fprintf(stderr, "iour_probe: %s\n",
			iour_strerror_desc(rc));
		return 1;
	}
	printf("level %d (%s); ring restrictions: %s; task restrictions: %s\n",
	       iour_feature_level(),
	       iour_feature_level_str((int)f.level),
	       iour_avail_str(f.ring_restrictions),
	       iour_avail_str(f.task_restrictions));
	rc = iour_kernel_describe(IOUR_KVER(7, 0), &k);
	printf("Linux 7.0: level %u, %s\n", k.level,
	       iour_feature_level_str((int)k.level));

	/* the kernel generations the library plans around */
	int newest = iour_kernel_generation(IOUR_KGEN_NEWEST);
	int rep = iour_level_kernel(IOUR_LEVEL_QUERY);

	if (newest < 0 || rep < 0)
		return 1;
	printf("newest known: %d.%d; level 3 is Linux %d.%d; split gates: %d\n",
	       newest >> 16, (newest >> 8) & 0xff, rep >> 16, (rep >> 8) & 0xff,
	       iour_kernel_split_gates((uint32_t)newest));
	return rc ? 1 : 0;
}
