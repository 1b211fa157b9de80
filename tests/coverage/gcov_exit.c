/* SPDX-License-Identifier: MIT */
/*
 * Linked only into the counted build (test-asan, `make coverage`).  The
 * library's forked children, and the tests' own, end with _exit(), which
 * skips the exit handler that writes the coverage counters: the code they
 * ran would be reported as never executed.  The counted build links with
 * -Wl,--wrap=_exit, so those calls come here and write the counters first.
 *
 * Writing the counters needs memory (the runtime maps each counts file,
 * and under ASan every allocation maps memory too).  A child whose seccomp
 * filter makes mmap fail (tests/unit/test_probe.c fakes such a kernel) can
 * write nothing: the sanitizer runtime would die saying "Failed to mmap"
 * and turn the child's exit status into its own.  So one page is mapped
 * first, and where that fails the counters are left unwritten and the
 * child exits with its own status, as it does in an uncounted build.
 */
#include <sys/mman.h>
#include <unistd.h>

void __gcov_dump(void);
void __real__exit(int status) __attribute__((noreturn));
void __wrap__exit(int status) __attribute__((noreturn));

void __wrap__exit(int status)
{
	long page = sysconf(_SC_PAGESIZE);
	void *p = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);

	if (p != MAP_FAILED) {
		munmap(p, (size_t)page);
		__gcov_dump();
	}
	__real__exit(status);
}
