/* SPDX-License-Identifier: MIT */
/*
 * Linked only into the coverage build (`make coverage`).  The library's
 * forked children, and the tests' own, end with _exit(), which skips the
 * exit handler that writes the coverage counters: the code they ran would
 * be reported as never executed.  The coverage build links with
 * -Wl,--wrap=_exit, so those calls come here and write the counters first.
 */
#include <unistd.h>

void __gcov_dump(void);
void __real__exit(int status) __attribute__((noreturn));
void __wrap__exit(int status) __attribute__((noreturn));

void __wrap__exit(int status)
{
	__gcov_dump();
	__real__exit(status);
}
