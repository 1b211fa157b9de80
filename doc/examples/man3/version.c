/* The library's version, at run time. */
#include <stdio.h>
#include <iouring_restrict/iouring_restrict.h>

int main(void)
{
	printf("libiouring-restrict %s (%u.%u.%u)\n",
	       iour_version_string(), iour_version_major(),
	       iour_version_minor(), iour_version_patch());
	return 0;
}
