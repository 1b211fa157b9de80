/* The kernel structures the library writes, field by field. */
#include <stdio.h>
#include <iouring_restrict/iouring_restrict.h>

int main(void)
{
	size_t i, n;
	const struct iour_layout_field *l = iour_abi_layout(&n);

	for (i = 0; i < n; i++)
		printf("%s.%s: offset %u, size %u\n", l[i].type,
		       l[i].field, l[i].offset, l[i].size);
	return n ? 0 : 1;
}
