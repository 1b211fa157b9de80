/* Restricted rings: one created ready by the library, and one the program
 * creates with IORING_SETUP_R_DISABLED, restricts, then enables itself. */
#include <errno.h>
#include <linux/io_uring.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <iouring_restrict/iouring_restrict.h>

int main(void)
{
	IOUR_OPTS(iour_ring_report, rep);
	IOUR_OPTS(iour_ring_apply_opts, ao,
		  .flags = IOUR_RING_APPLY_NO_ENABLE, .report = &rep);
	struct io_uring_params p;
	struct iour_ruleset *rs;
	int fd, rc;

	if (iour_ruleset__new(NULL, &rs) ||
	    iour_ruleset__allow_sqe_op_name(rs, "NOP") ||
	    iour_ruleset__set_sqe_flags(rs, 0, 0))
		return 1;

	/* the library creates, restricts and enables the ring */
	rc = iour_ring_create(8, NULL, rs, NULL, &fd);
	if (rc) {
		fprintf(stderr, "iour_ring_create: %s\n",
			iour_strerror_desc(rc));
		iour_ruleset__free(rs);
		return rc == -EOPNOTSUPP || rc == -ENOSYS ? 0 : 1;
	}
	close(fd);

	/* the program creates the ring disabled ... */
	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_R_DISABLED;
	fd = (int)syscall(__NR_io_uring_setup, 8, &p);
	if (fd < 0)
		return 1;
	/* ... restricts it, and enables it from the thread that will submit */
	rc = iour_ring_apply(fd, rs, &ao);
	rc = rc ? rc : iour_ring_enable(fd);
	printf("registered %u, %u entries; enable: %s\n",
	       rep.registered, rep.nr_entries, iour_errname(rc));
	close(fd);
	iour_ruleset__free(rs);
	return rc ? 1 : 0;
}
