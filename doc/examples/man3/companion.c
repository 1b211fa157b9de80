/* The seccomp companion (io_uring_setup fails with ENOSYS afterwards) and
 * the io_uring fds this process holds.  It restricts this process for
 * good: run it as a program of its own. */
#include <errno.h>
#include <linux/io_uring.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <iouring_restrict/iouring_restrict.h>

int main(void)
{
	IOUR_OPTS(iour_companion_opts, co,
		  .flags = IOUR_COMPANION_SET_NNP);
	struct iour_insn prog[64];
	struct io_uring_params p;
	int fds[4], n, fd, rc;

	n = iour_companion_program(&co, prog, 64);
	printf("the companion's program: %d instructions; threads: %d\n",
	       n, iour_task_thread_count());

	memset(&p, 0, sizeof(p));
	fd = (int)syscall(__NR_io_uring_setup, 4, &p);
	printf("io_uring fds held: %d\n", iour_ring_fds(fds, 4));
	rc = iour_ring_fds_close(0); /* closes fd */
	printf("closed: %d\n", rc);

	rc = iour_companion_install(&co);
	if (rc) {
		fprintf(stderr, "iour_companion_install: %s\n",
			iour_strerror_desc(rc));
		return 1;
	}
	fd = (int)syscall(__NR_io_uring_setup, 4, &p);
	printf("io_uring_setup after the companion: %d (%s)\n", fd,
	       strerror(errno));
	return fd < 0 && errno == ENOSYS ? 0 : 1;
}
