/* SPDX-License-Identifier: MIT */
/*
 * One output line longer than any fixed buffer: /init (init.c) must pass
 * it to the log in one piece, as bench_guest's JSON line of well over
 * 1 KB needs (scripts/bench-guest.sh).  The payload 05-init.sh runs it as
 * a command whose pass pattern matches only the whole line.
 */
#include <stdio.h>

int main(void)
{
	putchar('L');
	for (int i = 0; i < 500; i++)
		fputs("0123456789", stdout);
	puts("E");
	return 0;
}
