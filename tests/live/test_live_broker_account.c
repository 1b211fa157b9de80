/* SPDX-License-Identifier: MIT */
/*
 * Live, who pays for a brokered ring (lib/serve/broker_account.h; doc/security.md
 * 3a, "Who pays"): a broker worker that entered the caller's accounting
 * context creates rings the kernel charges to the caller.
 *
 * This process plays the broker (root, outside the test's cgroup): for each
 * ring it forks a worker that opens /proc/<program>, calls
 * iour__broker_account_enter() and creates the ring; the broker then takes
 * the ring with pidfd_getfd() and holds it, so its memory stays charged.
 *
 * - memory cgroup, v1 and v2 (each where it exists with the memory
 *   controller): a program in a 64 MiB cgroup creates rings of 32768
 *   entries itself until ENOMEM (N1); the broker's workers then do it for
 *   the same program (N2); |N1 - N2| <= 1, ENOMEM.  Positive control:
 *   workers that do not enter get more than N1 + 1.
 * - locked memory: a program of uid 65534 with RLIMIT_MEMLOCK 1 MiB; on a
 *   ring made by a worker that entered its context, 2 MiB of registered
 *   buffers fail with ENOMEM and 512 KiB work (in the worker and in another
 *   process of that uid).  Positive control: on a ring made by root
 *   (CAP_IPC_LOCK) without entering, the 2 MiB registration works.
 * - the same count for RLIMIT_MEMLOCK: rings of a program of uid 65534 with
 *   an 8 MiB limit (Linux 6.18 counts the ring's memory against it).
 * - credentials: the worker then shows the program's uids and gids and no
 *   capability, and the program cannot take the ring from it with
 *   pidfd_getfd() (control: it can from a dumpable process of its uid); a
 *   worker already in the program's context is told so and keeps the
 *   program's own CAP_IPC_LOCK; the worker joins a cgroup v2 even where v2
 *   has no memory controller (this machine: hybrid).
 *
 * Needs root (cgroups, other uids, pidfd_getfd: 5.6); each part skips with
 * the reason where the machine lacks what it needs.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "live.h"
#include "serve/broker_account.h"

#define NOBODY 65534
#define BIG_RING 32768
#define RING_CAP 40 /* no more rings than this (4 MiB each), whatever happens */
#define MIB (1024UL * 1024UL)

/* ---- state cleaned up by fini() even when an assertion fails -------------- */

static char cg_dirs[2][PATH_MAX]; /* the test's cgroups, "" if none */
static const char *cg_dir = "";   /* the program's, one of them or "" */
static pid_t prog_pid;            /* the "program", 0 if none */
static int prog_gate = -1;        /* closing it releases the program */
static int held[RING_CAP * 2];
static int nheld;
static char own_cg2[64]; /* cgroup2 mounted by the test (find_or_mount_cg2) */

static void release_all(void)
{
	while (nheld > 0)
		close(held[--nheld]);
	if (prog_gate >= 0)
		close(prog_gate);
	prog_gate = -1;
	if (prog_pid > 0) {
		kill(prog_pid, SIGKILL);
		waitpid(prog_pid, NULL, 0);
	}
	prog_pid = 0;
}

static void fini(void)
{
	release_all();
	for (int i = 0; i < 2; i++) {
		if (cg_dirs[i][0] && rmdir(cg_dirs[i]))
			fprintf(stderr, "live: could not remove %s: %s\n", cg_dirs[i],
				strerror(errno));
		cg_dirs[i][0] = '\0';
	}
	cg_dir = "";
	if (own_cg2[0]) {
		if (umount2(own_cg2, 0) || rmdir(own_cg2))
			fprintf(stderr, "live: could not unmount %s: %s\n", own_cg2,
				strerror(errno));
		own_cg2[0] = '\0';
	}
}

/* ---- small helpers ---------------------------------------------------------- */

static int raw_setup(unsigned entries)
{
	char p[120]; /* struct io_uring_params */

	memset(p, 0, sizeof(p));
	return (int)syscall(__NR_io_uring_setup, entries, p);
}

static int raw_register_buffers(int ring, size_t len)
{
	void *buf = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	int rc, err;

	if (buf == MAP_FAILED)
		return -errno;
	memset(buf, 1, len);
	rc = (int)syscall(__NR_io_uring_register, ring, REG_BUFFERS, &iov, 1);
	err = errno;
	if (rc == 0)
		syscall(__NR_io_uring_register, ring, 1 /* UNREGISTER_BUFFERS */, NULL, 0);
	munmap(buf, len);
	return rc ? -err : 0;
}

static int write_file(const char *dir, const char *name, const char *val)
{
	char p[PATH_MAX + 64];
	int fd, rc = 0;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	fd = open(p, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, val, strlen(val)) != (ssize_t)strlen(val))
		rc = -errno;
	close(fd);
	return rc;
}

static long long read_num(const char *dir, const char *name)
{
	char p[PATH_MAX + 64], b[64] = "";
	int fd;
	ssize_t n;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, b, sizeof(b) - 1);
	close(fd);
	return n > 0 ? atoll(b) : -1;
}

/* The mount point of cgroup2 ("cgroup2"), or of the v1 hierarchy with the
 * memory controller ("cgroup"), whose root is the hierarchy's root. */
static int find_mount(const char *fstype, char *out, size_t len)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[4096];
	int found = 0;

	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f)) {
		char root[1024], mnt[1024], type[64], src[1024], opts[1024];
		const char *dash = strstr(line, " - ");

		if (!dash || sscanf(line, "%*s %*s %*s %1023s %1023s", root, mnt) != 2 ||
		    sscanf(dash + 3, "%63s %1023s %1023s", type, src, opts) != 3)
			continue;
		if (strcmp(type, fstype) || strcmp(root, "/"))
			continue;
		if (!strcmp(fstype, "cgroup") && !strstr(opts, "memory"))
			continue;
		snprintf(out, len, "%s", mnt);
		found = 1;
	}
	fclose(f);
	return found;
}

/*
 * cgroup2 mounted by the test itself where nothing mounts it (the qemu
 * guests boot with a bare /init): root may mount the hierarchy anywhere,
 * and the broker's worker finds it in /proc/self/mountinfo as it would
 * find /sys/fs/cgroup.  "" if the test mounted nothing.
 */
static int find_or_mount_cg2(char *out, size_t len)
{
	if (find_mount("cgroup2", out, len))
		return 1;
	if (getuid() != 0 || own_cg2[0])
		return 0;
	snprintf(own_cg2, sizeof(own_cg2), "/tmp/iour-cg2-XXXXXX");
	if (!mkdtemp(own_cg2)) {
		own_cg2[0] = '\0';
		return 0;
	}
	if (mount("none", own_cg2, "cgroup2", 0, NULL)) {
		rmdir(own_cg2);
		own_cg2[0] = '\0';
		return 0;
	}
	live_log("cgroup2 was not mounted: the test mounted it at %s", own_cg2);
	return find_mount("cgroup2", out, len);
}

/* Make the test's two 64 MiB cgroups under the hierarchy's root (one for
 * the program paying itself, one for the broker's rings: the memory of
 * rings closed in one is freed by the kernel a little later); NULL, or why
 * they cannot be made (then the test skips). */
static const char *make_cgroup(int v2)
{
	static char why[PATH_MAX + 128];
	char mnt[1024], ctl[512] = "";
	const char *limit = v2 ? "memory.max" : "memory.limit_in_bytes";
	int fd, rc;

	if (getuid() != 0)
		return "needs root";
	if (!(v2 ? find_or_mount_cg2(mnt, sizeof(mnt)) : find_mount("cgroup", mnt, sizeof(mnt))))
		return v2 ? "cgroup2 is not mounted and cannot be mounted" :
			    "no cgroup v1 hierarchy has the memory controller";
	if (v2) {
		snprintf(why, sizeof(why), "%s/cgroup.controllers", mnt);
		fd = open(why, O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			ssize_t n = read(fd, ctl, sizeof(ctl) - 1);

			ctl[n > 0 ? n : 0] = '\0';
			close(fd);
		}
		if (!strstr(ctl, "memory")) {
			snprintf(why, sizeof(why), "cgroup v2 at %s has no memory controller", mnt);
			return why;
		}
		/* Already on, or refused: the mkdir'd child then lacks memory.max. */
		(void)write_file(mnt, "cgroup.subtree_control", "+memory");
	}
	for (int i = 0; i < 2; i++) {
		char *d = cg_dirs[i];

		snprintf(d, PATH_MAX, "%s/iour-acct-%d-%d", mnt, (int)getpid(), i);
		if (mkdir(d, 0755)) {
			snprintf(why, sizeof(why), "cannot create %s: %s", d, strerror(errno));
			d[0] = '\0';
			return why;
		}
		rc = write_file(d, limit, "67108864");
		if (rc) {
			snprintf(why, sizeof(why), "cannot set %s/%s: %s", d, limit, strerror(-rc));
			return why;
		}
	}
	return NULL;
}

/* Take uid and gid `id`, dumpable as after an exec of an ordinary program
 * (a change of ids alone leaves a process not dumpable). */
static void become(uid_t id)
{
	if (setgroups(0, NULL) || setresgid(id, id, id) || setresuid(id, id, id) ||
	    prctl(PR_SET_DUMPABLE, 1, 0, 0, 0))
		_exit(90);
}

/* ---- the program ------------------------------------------------------------ */

struct self_result {
	int n;   /* rings created; -1: one ring was not charged to the cgroup */
	int err; /* errno of the failed one */
};

/*
 * Fork the program into cg_dir (if set) as `uid` (0: stays root) with
 * RLIMIT_MEMLOCK `memlock` (0: as high as it can be).  self: it creates
 * rings of `entries` until failure and reports; otherwise it waits until
 * prog_gate is closed.
 */
static void start_program(int self, uid_t uid, rlim_t memlock, unsigned entries,
			  struct self_result *res)
{
	int ready[2], gate[2];
	char c;

	cr_assert_eq(pipe2(ready, O_CLOEXEC), 0);
	cr_assert_eq(pipe2(gate, O_CLOEXEC), 0);
	fflush(NULL);
	prog_pid = fork();
	cr_assert(prog_pid >= 0);
	if (prog_pid == 0) {
		struct self_result r = { 0, 0 };
		struct rlimit inf = { RLIM_INFINITY, RLIM_INFINITY };
		struct rlimit ml = { memlock, memlock };

		close(ready[0]);
		close(gate[1]);
		if (cg_dir[0] && write_file(cg_dir, "cgroup.procs", "0"))
			_exit(91);
		/* Ring memory counts against RLIMIT_MEMLOCK without
		 * CAP_IPC_LOCK: out of the way when it can be. */
		(void)setrlimit(RLIMIT_MEMLOCK, memlock ? &ml : &inf);
		if (uid)
			become(uid);
		if (self) {
			const char *use;
			long long before, after;

			use = read_num(cg_dir, "memory.usage_in_bytes") >= 0 ?
				      "memory.usage_in_bytes" :
				      "memory.current";
			before = read_num(cg_dir, use);
			while (r.n < RING_CAP && raw_setup(entries) >= 0) {
				if (r.n++ == 0 && cg_dir[0]) {
					after = read_num(cg_dir, use);
					if (after - before < (long long)MIB) {
						r.n = -1;
						break;
					}
				}
			}
			r.err = r.n < RING_CAP ? errno : 0;
			if (write(ready[1], &r, sizeof(r)) != sizeof(r))
				_exit(92);
			_exit(0);
		}
		if (write(ready[1], "r", 1) != 1)
			_exit(92);
		while (read(gate[0], &c, 1) < 0 && errno == EINTR)
			;
		_exit(0);
	}
	close(ready[1]);
	close(gate[0]);
	prog_gate = gate[1];
	if (self) {
		/* died before reporting: the memory cgroup's OOM killer (6.1,
		 * 6.12 with v2) rather than ENOMEM; count_case() says so */
		if (read(ready[0], res, sizeof(*res)) != (ssize_t)sizeof(*res))
			res->n = -2;
	} else {
		cr_assert_eq(read(ready[0], &c, 1), 1, "the program died before it was ready");
	}
	close(ready[0]);
}

/* ---- the broker's worker ----------------------------------------------------- */

struct worker_result {
	int stage; /* 0 ok; 1 open /proc/PID; 2 enter; 3 setup */
	int err;   /* errno (positive) of the failed stage */
	int ring;  /* the ring's fd number in the worker */
	unsigned done;
	char why[160];
	int reg_big, reg_small; /* REGISTER_BUFFERS in the worker (probe_reg) */
	char status[512];       /* Uid:, Gid:, CapPrm:, CapEff: lines (probe_status) */
	char v2[256];           /* its "0::" cgroup (probe_status) */
};

enum { ENTER = 1, PROBE_REG = 2, PROBE_STATUS = 4 };

static void status_lines(char *out, size_t len)
{
	FILE *f = fopen("/proc/self/status", "re");
	char line[256];
	size_t off = 0;

	out[0] = '\0';
	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "Uid:", 4) || !strncmp(line, "Gid:", 4) ||
		    !strncmp(line, "CapPrm:", 7) || !strncmp(line, "CapEff:", 7) ||
		    !strncmp(line, "Groups:", 7)) {
			size_t n = strlen(line);

			if (off + n < len) {
				memcpy(out + off, line, n + 1);
				off += n;
			}
		}
	fclose(f);
}

/* This process's cgroup v2 path (the "0::" line), "" if none. */
static void own_v2(char *out, size_t len)
{
	FILE *f = fopen("/proc/self/cgroup", "re");
	char line[512];

	out[0] = '\0';
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "0::", 3)) {
			line[strcspn(line, "\n")] = '\0';
			snprintf(out, len, "%.200s", line + 3);
		}
	if (f)
		fclose(f);
}

/*
 * One ring for the program, as a broker worker makes it: fork, open
 * /proc/<prog_pid>, enter its context (if ENTER), io_uring_setup(entries).
 * The broker takes the ring with pidfd_getfd(): its fd here, or -1 with
 * *res saying why.
 */
static void (*while_held)(pid_t worker, int ring); /* runs while the worker waits */

static int worker_ring(unsigned entries, unsigned how, struct worker_result *res)
{
	int rp[2], gate[2], fd = -1, pidfd;
	pid_t w;
	char path[64];

	memset(res, 0, sizeof(*res));
	cr_assert_eq(pipe2(rp, O_CLOEXEC), 0);
	cr_assert_eq(pipe2(gate, O_CLOEXEC), 0);
	snprintf(path, sizeof(path), "/proc/%d", (int)prog_pid);
	fflush(NULL);
	w = fork();
	cr_assert(w >= 0);
	if (w == 0) {
		struct worker_result r;
		struct iour__acct a;
		int dir = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		char c;

		memset(&r, 0, sizeof(r));
		close(rp[0]);
		close(gate[1]);
		if (dir < 0) {
			r.stage = 1;
			r.err = errno;
		} else if (how & ENTER) {
			int rc = iour__broker_account_enter(dir, &a);

			r.done = a.done;
			memcpy(r.why, a.why, sizeof(r.why));
			if (rc) {
				r.stage = 2;
				r.err = -rc;
			}
		}
		if (!r.stage) {
			if (how & PROBE_STATUS) {
				status_lines(r.status, sizeof(r.status));
				own_v2(r.v2, sizeof(r.v2));
			}
			r.ring = raw_setup(entries);
			if (r.ring < 0) {
				r.stage = 3;
				r.err = errno;
			} else if (how & PROBE_REG) {
				r.reg_big = raw_register_buffers(r.ring, 2 * MIB);
				r.reg_small = raw_register_buffers(r.ring, MIB / 2);
			}
		}
		if (write(rp[1], &r, sizeof(r)) != sizeof(r))
			_exit(1);
		while (read(gate[0], &c, 1) < 0 && errno == EINTR)
			;
		_exit(0);
	}
	close(rp[1]);
	close(gate[0]);
	cr_assert_eq(read(rp[0], res, sizeof(*res)), (ssize_t)sizeof(*res),
		     "the worker died before reporting");
	close(rp[0]);
	if (!res->stage) {
		pidfd = (int)syscall(SYS_pidfd_open, w, 0);
		cr_assert(pidfd >= 0, "pidfd_open: %s", strerror(errno));
		fd = (int)syscall(SYS_pidfd_getfd, pidfd, res->ring, 0);
		cr_assert(fd >= 0, "pidfd_getfd: %s", strerror(errno));
		close(pidfd);
		if (while_held)
			while_held(w, res->ring);
	}
	close(gate[1]);
	cr_assert_eq(waitpid(w, NULL, 0), w);
	return fd;
}

/* Rings for the program from workers until one fails (or `cap`). */
static int broker_rings(unsigned entries, unsigned how, int cap, struct worker_result *last)
{
	int n = 0;

	while (n < cap) {
		int fd = worker_ring(entries, how, last);

		if (fd < 0)
			break;
		held[nheld++] = fd;
		n++;
	}
	return n;
}

static int pidfd_getfd_missing(void)
{
	int fd = (int)syscall(SYS_pidfd_getfd, -1, 0, 0);

	return fd < 0 && errno == ENOSYS;
}

/* ---- memory cgroup --------------------------------------------------------------- */

enum kind { CG_V1, CG_V2, MEMLOCK };

/*
 * Rings until ENOMEM: the program's own (N1), then the broker's workers'
 * in its context (N2), then the broker's without entering it (the positive
 * control).  CG_V1/CG_V2: a root program (CAP_IPC_LOCK: no locked-memory
 * accounting) in a 64 MiB cgroup, rings of 32768 entries.  MEMLOCK: a
 * program of uid 65534 (N1) or 65533 (N2: locked memory is counted per
 * user, and the kernel frees closed rings a little later) with an 8 MiB
 * RLIMIT_MEMLOCK, rings of 4096 entries.
 */
static void count_case(enum kind k)
{
	static const char *const name[] = { "cgroup v1, 64 MiB", "cgroup v2, 64 MiB",
					    "RLIMIT_MEMLOCK 8 MiB" };
	unsigned entries = k == MEMLOCK ? 4096 : BIG_RING;
	rlim_t ml = k == MEMLOCK ? 8 * MIB : 0;
	struct self_result self;
	struct worker_result last;
	const char *why;
	int n2, n3;

	if (getuid() != 0)
		cr_skip_test("skipped: needs root (cgroups, other uids)");
	if (pidfd_getfd_missing())
		cr_skip_test("skipped: the kernel lacks pidfd_getfd (5.6)");
	if (k != MEMLOCK) {
		why = make_cgroup(k == CG_V2);
		if (why) {
			live_log("%s", why);
			cr_skip_test("skipped: %s", why);
		}
	}

	/* N1: the program pays for its own rings. */
	cg_dir = cg_dirs[0];
	start_program(1, k == MEMLOCK ? NOBODY : 0, ml, entries, &self);
	release_all();
	if (self.n == -2)
		cr_skip_test("skipped: this kernel's memory cgroup OOM-kills the program instead of "
			     "failing its io_uring_setup with ENOMEM, so rings cannot be counted "
			     "(run_program_pays_in_its_memcg_* compares that outcome under run)");
	if (self.n < 0)
		cr_skip_test("skipped: a ring's memory is not charged to the memory cgroup of its "
			     "creator on this kernel");
	if (k == MEMLOCK && self.n == RING_CAP)
		cr_skip_test("skipped: a ring's memory does not count against RLIMIT_MEMLOCK on "
			     "this kernel");
	cr_assert(self.n < RING_CAP, "%s let the program create %d rings", name[k], self.n);
	cr_assert_eq(self.err, ENOMEM, "the program's ring %d failed with %s, not ENOMEM",
		     self.n + 1, strerror(self.err));

	/* N2: the broker's workers make them, in the program's context. */
	cg_dir = cg_dirs[1];
	start_program(0, k == MEMLOCK ? NOBODY - 1 : 0, ml, 0, NULL);
	n2 = broker_rings(entries, ENTER, RING_CAP, &last);
	live_log("%s: the program itself created %d rings of %u entries, then %s; workers that "
		 "entered its context %d (done %#x), then %s",
		 name[k], self.n, entries, strerror(self.err), n2, last.done, strerror(last.err));
	cr_assert_eq(last.stage, 3, "worker stage %d: %s (%s)", last.stage, strerror(last.err),
		     last.why);
	if (k != MEMLOCK)
		cr_assert(last.done & (k == CG_V2 ? IOUR__ACCT_CGROUP_V2 : IOUR__ACCT_CGROUP_V1),
			  "the worker did not join the program's cgroup (done %#x, %s)", last.done,
			  last.why);
	else
		cr_assert(last.done & IOUR__ACCT_CREDS && last.done & IOUR__ACCT_NOCAPS,
			  "done %#x, %s", last.done, last.why);
	cr_assert_eq(last.err, ENOMEM, "ring %d through the broker failed with %s", n2 + 1,
		     strerror(last.err));
	cr_assert(abs(self.n - n2) <= 1, "the program got %d rings itself, %d through the broker",
		  self.n, n2);
	release_all();

	/* Positive control: workers that stay in the broker's context. */
	start_program(0, k == MEMLOCK ? NOBODY - 1 : 0, ml, 0, NULL);
	n3 = broker_rings(entries, 0, self.n + 3, &last);
	live_log("positive control: workers that did not enter made %d rings (stopped at %d)", n3,
		 self.n + 3);
	cr_assert(n3 > self.n + 1,
		  "without entering the program's context the broker made only %d rings", n3);
}

TestSuite(live_broker_account, .fini = fini);

Test(live_broker_account, memcg_v1)
{
	count_case(CG_V1);
}

Test(live_broker_account, memcg_v2)
{
	count_case(CG_V2);
}

Test(live_broker_account, memlock_rings)
{
	count_case(MEMLOCK);
}

/* ---- locked memory ---------------------------------------------------------------- */

/* REGISTER_BUFFERS of 2 MiB and 512 KiB on `ring` from a new process of uid
 * 65534 with RLIMIT_MEMLOCK 1 MiB: both results (0 or -errno). */
static void nobody_registers(int ring, int *big, int *small)
{
	int rp[2], r[2] = { -1000, -1000 };
	pid_t q;

	cr_assert_eq(pipe2(rp, O_CLOEXEC), 0);
	fflush(NULL);
	q = fork();
	cr_assert(q >= 0);
	if (q == 0) {
		struct rlimit ml = { MIB, MIB };

		close(rp[0]);
		if (setrlimit(RLIMIT_MEMLOCK, &ml))
			_exit(93);
		become(NOBODY);
		r[0] = raw_register_buffers(ring, 2 * MIB);
		r[1] = raw_register_buffers(ring, MIB / 2);
		_exit(write(rp[1], r, sizeof(r)) == sizeof(r) ? 0 : 1);
	}
	close(rp[1]);
	cr_assert_eq(read(rp[0], r, sizeof(r)), (ssize_t)sizeof(r), "the registering process died");
	close(rp[0]);
	waitpid(q, NULL, 0);
	*big = r[0];
	*small = r[1];
}

Test(live_broker_account, memlock)
{
	struct worker_result w;
	int fd, big, small;

	if (getuid() != 0)
		cr_skip_test("skipped: needs root (a program of another uid)");
	if (pidfd_getfd_missing())
		cr_skip_test("skipped: the kernel lacks pidfd_getfd (5.6)");
	start_program(0, NOBODY, MIB, 0, NULL);

	fd = worker_ring(8, ENTER | PROBE_REG, &w);
	cr_assert_geq(fd, 0, "worker stage %d: %s (%s)", w.stage, strerror(w.err), w.why);
	cr_assert(w.done & IOUR__ACCT_MEMLOCK, "RLIMIT_MEMLOCK not taken: %s", w.why);
	cr_assert(w.done & IOUR__ACCT_NOCAPS);
	nobody_registers(fd, &big, &small);
	live_log("entered: REGISTER_BUFFERS in the worker 2 MiB %d, 512 KiB %d; by uid %d with a "
		 "1 MiB RLIMIT_MEMLOCK 2 MiB %d, 512 KiB %d",
		 w.reg_big, w.reg_small, NOBODY, big, small);
	cr_assert_eq(w.reg_big, -ENOMEM);
	cr_assert_eq(w.reg_small, 0);
	cr_assert_eq(big, -ENOMEM);
	cr_assert_eq(small, 0);
	close(fd);

	/* Positive control: a ring root made with CAP_IPC_LOCK accounts nothing. */
	fd = worker_ring(8, 0, &w);
	cr_assert_geq(fd, 0);
	nobody_registers(fd, &big, &small);
	live_log("positive control, not entered: by uid %d, 2 MiB %d, 512 KiB %d", NOBODY, big,
		 small);
	cr_assert_eq(big, 0, "a root-made ring refused 2 MiB (%d): the control cannot fail", big);
	close(fd);
}

/* ---- credentials and capabilities ----------------------------------------------------- */

Test(live_broker_account, creds)
{
	struct worker_result w;
	char want[64];
	int fd;

	if (getuid() != 0)
		cr_skip_test("skipped: needs root (a program of another uid)");
	if (pidfd_getfd_missing())
		cr_skip_test("skipped: the kernel lacks pidfd_getfd (5.6)");
	start_program(0, NOBODY, 0, 0, NULL);
	fd = worker_ring(8, ENTER | PROBE_STATUS, &w);
	cr_assert_geq(fd, 0, "worker stage %d: %s (%s)", w.stage, strerror(w.err), w.why);
	close(fd);
	live_log("worker after entering: done %#x why \"%s\"\n%s", w.done, w.why, w.status);
	cr_assert_eq(w.done & (IOUR__ACCT_CREDS | IOUR__ACCT_NOCAPS | IOUR__ACCT_MEMLOCK),
		     IOUR__ACCT_CREDS | IOUR__ACCT_NOCAPS | IOUR__ACCT_MEMLOCK);
	snprintf(want, sizeof(want), "Uid:\t%d\t%d\t%d\t%d\n", NOBODY, NOBODY, NOBODY, NOBODY);
	cr_assert(strstr(w.status, want), "%s", w.status);
	snprintf(want, sizeof(want), "Gid:\t%d\t%d\t%d\t%d\n", NOBODY, NOBODY, NOBODY, NOBODY);
	cr_assert(strstr(w.status, want), "%s", w.status);
	cr_assert(strstr(w.status, "CapPrm:\t0000000000000000\n"), "%s", w.status);
	cr_assert(strstr(w.status, "CapEff:\t0000000000000000\n"), "%s", w.status);
}

/* The program (uid 65534) tries pidfd_getfd() on `target`'s fd: 0 or -errno. */
static int nobody_steals(pid_t target, int fd)
{
	int rp[2], r = -1000;
	pid_t q;

	cr_assert_eq(pipe2(rp, O_CLOEXEC), 0);
	fflush(NULL);
	q = fork();
	cr_assert(q >= 0);
	if (q == 0) {
		int pidfd, got;

		close(rp[0]);
		become(NOBODY);
		pidfd = (int)syscall(SYS_pidfd_open, target, 0);
		got = pidfd < 0 ? -1 : (int)syscall(SYS_pidfd_getfd, pidfd, fd, 0);
		r = got >= 0 ? 0 : -errno;
		_exit(write(rp[1], &r, sizeof(r)) == sizeof(r) ? 0 : 1);
	}
	close(rp[1]);
	cr_assert_eq(read(rp[0], &r, sizeof(r)), (ssize_t)sizeof(r), "the thief died");
	close(rp[0]);
	waitpid(q, NULL, 0);
	return r;
}

static int stolen = -1000;

static void steal_from_worker(pid_t w, int ring)
{
	stolen = nobody_steals(w, ring);
}

/* The worker took the program's uid: the program must still not be able to
 * take the ring from it before the broker restricted and handed it over
 * (the worker is not dumpable).  Positive control: the same theft from a
 * dumpable process of uid 65534 (the program itself, its stdin) works. */
Test(live_broker_account, worker_not_stealable)
{
	struct worker_result w;
	int fd, ctl;

	if (getuid() != 0)
		cr_skip_test("skipped: needs root (a program of another uid)");
	if (pidfd_getfd_missing())
		cr_skip_test("skipped: the kernel lacks pidfd_getfd (5.6)");
	start_program(0, NOBODY, 0, 0, NULL);
	while_held = steal_from_worker;
	fd = worker_ring(8, ENTER, &w);
	while_held = NULL;
	cr_assert_geq(fd, 0, "worker stage %d: %s (%s)", w.stage, strerror(w.err), w.why);
	close(fd);
	ctl = nobody_steals(prog_pid, 0);
	live_log("uid %d's pidfd_getfd of the ring in the worker: %s; of the program's own fd "
		 "0 (control): %s",
		 NOBODY, strerror(-stolen), ctl ? strerror(-ctl) : "taken");
	cr_assert_eq(ctl, 0, "the control theft failed (%s): the test cannot fail", strerror(-ctl));
	cr_assert_eq(stolen, -EPERM, "the program took the worker's ring (%d)", stolen);
}

/* The worker joins the program's cgroup v2 wherever v2 is mounted, with
 * the memory controller or not (memcg_v2 measures the charge where it is):
 * here, a cgroup of the program's own under v2's root. */
Test(live_broker_account, joins_cgroup_v2)
{
	struct worker_result w;
	char mnt[1024], mine[256], want[64];
	int fd;

	if (getuid() != 0)
		cr_skip_test("skipped: needs root (cgroups)");
	if (pidfd_getfd_missing())
		cr_skip_test("skipped: the kernel lacks pidfd_getfd (5.6)");
	if (!find_or_mount_cg2(mnt, sizeof(mnt)))
		cr_skip_test("skipped: cgroup2 is not mounted and cannot be mounted");
	snprintf(want, sizeof(want), "/iour-acct-%d-v2", (int)getpid());
	snprintf(cg_dirs[0], PATH_MAX, "%s%s", mnt, want);
	if (mkdir(cg_dirs[0], 0755)) {
		int err = errno;

		cg_dirs[0][0] = '\0';
		cr_skip_test("skipped: cannot create a cgroup under %s: %s", mnt, strerror(err));
	}
	own_v2(mine, sizeof(mine));
	cr_assert_str_neq(mine, want);
	cg_dir = cg_dirs[0];
	start_program(0, NOBODY, 0, 0, NULL);
	fd = worker_ring(8, ENTER | PROBE_STATUS, &w);
	cr_assert_geq(fd, 0, "worker stage %d: %s (%s)", w.stage, strerror(w.err), w.why);
	close(fd);
	live_log("broker in cgroup v2 %s, program in %s: the worker joined %s (done %#x)", mine,
		 want, w.v2, w.done);
	cr_assert(w.done & IOUR__ACCT_CGROUP_V2, "done %#x: %s", w.done, w.why);
	cr_assert_str_eq(w.v2, want);
}

/* Not a /proc/PID directory: an error, said, nothing entered. */
Test(live_broker_account, bad_piddir)
{
	struct iour__acct a;
	int dir = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	cr_assert_geq(dir, 0);
	cr_assert_eq(iour__broker_account_enter(dir, &a), -ENOENT);
	cr_assert_eq(a.done, 0u);
	cr_assert(strstr(a.why, "status"), "%s", a.why);
	close(dir);
}

static int has_ipc_lock(void)
{
	char st[512];
	const char *e;

	status_lines(st, sizeof(st));
	e = strstr(st, "CapEff:\t");
	return e && (strtoull(e + 8, NULL, 16) & (1ULL << 14));
}

/* A worker already in the program's context (same cgroups, same ids)
 * changes nothing and says so: the common case under `iour-restrict run`. */
Test(live_broker_account, same_context)
{
	pid_t self = getpid();
	char status[512];
	int rp[2], ipc_lock = has_ipc_lock();
	struct iour__acct a;
	int rc = -1000;
	pid_t w;

	cr_assert_eq(pipe2(rp, O_CLOEXEC), 0);
	fflush(NULL);
	w = fork();
	cr_assert(w >= 0);
	if (w == 0) {
		char path[64];
		int dir;

		snprintf(path, sizeof(path), "/proc/%d", (int)self);
		dir = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		rc = dir < 0 ? -errno : iour__broker_account_enter(dir, &a);
		status_lines(status, sizeof(status));
		if (write(rp[1], &rc, sizeof(rc)) != sizeof(rc) ||
		    write(rp[1], &a, sizeof(a)) != sizeof(a) ||
		    write(rp[1], status, sizeof(status)) != sizeof(status))
			_exit(1);
		_exit(0);
	}
	close(rp[1]);
	cr_assert_eq(read(rp[0], &rc, sizeof(rc)), (ssize_t)sizeof(rc));
	cr_assert_eq(read(rp[0], &a, sizeof(a)), (ssize_t)sizeof(a));
	cr_assert_eq(read(rp[0], status, sizeof(status)), (ssize_t)sizeof(status));
	close(rp[0]);
	waitpid(w, NULL, 0);
	live_log("same context: rc %d done %#x why \"%s\"\n%s", rc, a.done, a.why, status);
	cr_assert_eq(rc, 0, "%s", a.why);
	cr_assert(!(a.done & (IOUR__ACCT_CGROUP_V1 | IOUR__ACCT_CGROUP_V2)));
	cr_assert((a.done & IOUR__ACCT_SAME_CGROUP) || strstr(a.why, "no memory cgroup"));
	cr_assert(a.done & IOUR__ACCT_CREDS);
	cr_assert(a.done & IOUR__ACCT_MEMLOCK);
	/* This process is the caller: its own CAP_IPC_LOCK stays, no other. */
	if (ipc_lock) {
		cr_assert(!(a.done & IOUR__ACCT_NOCAPS));
		cr_assert(strstr(status, "CapEff:\t0000000000004000\n"), "%s", status);
	} else {
		cr_assert(a.done & IOUR__ACCT_NOCAPS);
		cr_assert(strstr(status, "CapEff:\t0000000000000000\n"), "%s", status);
	}
}

/* ---- end to end: `iour-restrict run`'s broker --------------------------------- */

/* broker-try cgroup:DIR rings:ENTRIES, under `run POLICY` or unconfined;
 * the number of rings it held and the errno word that stopped it. */
static int rings_in_cgroup(bool under_run, const char *dir, char *err, size_t errlen)
{
	static const char nop_only[] = "{ \"defaultAction\": \"deny\",\n  \"entries\": "
				       "[ { \"names\": [\"nop\"], \"action\": \"allow\" } ] }\n";
	char tool[4096], prog[4096], cg[PATH_MAX + 8], rings[32], pol[64] = "/tmp/iour-acct-XXXXXX";
	char out[4096] = "", *p;
	char *argv[12];
	int pipefd[2], n = 0, st, count = -1, pf;
	ssize_t got, len = 0;
	pid_t pid;

	live_prog_path(tool, sizeof(tool), "tools/iour-restrict");
	live_prog_path(prog, sizeof(prog), "tests/broker-try");
	pf = mkstemp(pol);
	cr_assert_geq(pf, 0);
	cr_assert_eq(write(pf, nop_only, strlen(nop_only)), (ssize_t)strlen(nop_only));
	close(pf);
	snprintf(cg, sizeof(cg), "cgroup:%s", dir);
	snprintf(rings, sizeof(rings), "rings:%u", BIG_RING);
	if (under_run) {
		argv[n++] = tool;
		argv[n++] = "run";
		argv[n++] = "-q";
		argv[n++] = pol;
		argv[n++] = "--";
	}
	argv[n++] = prog;
	argv[n++] = cg;
	argv[n++] = rings;
	argv[n] = NULL;
	cr_assert_eq(pipe2(pipefd, O_CLOEXEC), 0);
	fflush(NULL);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		dup2(pipefd[1], 1);
		execv(argv[0], argv);
		_exit(125);
	}
	close(pipefd[1]);
	while ((got = read(pipefd[0], out + len, sizeof(out) - 1 - (size_t)len)) > 0)
		len += got;
	out[len] = '\0';
	close(pipefd[0]);
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	unlink(pol);
	cr_assert(strstr(out, "cgroup: ok\n"), "%s could not join %s: %s",
		  under_run ? "the command under run" : "the program", dir, out);
	p = strstr(out, "rings: ");
	if (!p && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL) {
		/* the memory cgroup's OOM killer (6.1, 6.12) instead of ENOMEM */
		snprintf(err, errlen, "SIGKILL");
		return -1;
	}
	cr_assert_not_null(p, "no rings line: %s (status %#x)", out, st);
	cr_assert_eq(sscanf(p, "rings: %d %31s", &count, err), 2, "%s", out);
	return count;
}

/* The measurement as a test: the program moves itself into a
 * 64 MiB memory cgroup of its own (the broker stays where it is) and
 * creates rings of 32768 entries until one fails.  Under run it gets as
 * many as unconfined (within one), and ENOMEM: the broker's worker
 * charged each ring to the program's cgroup (doc/security.md 3a, "Who
 * pays").  Before the workers, run's broker paid and the program held
 * 100 of them (its cgroup was charged nothing). */
static void run_pays_case(enum kind k)
{
	char e1[32], e2[32];
	const char *why;
	int n1, n2;

	LIVE_REQUIRE(LIVE_RING);
	if (getuid() != 0)
		cr_skip_test("skipped: needs root (cgroups)");
	if (!live_missing(LIVE_TASK))
		cr_skip_test("skipped: this kernel has task restrictions, which run uses instead of "
			     "the broker (the program creates its rings itself)");
	why = make_cgroup(k == CG_V2);
	if (why) {
		live_log("%s", why);
		cr_skip_test("skipped: %s", why);
	}
	n1 = rings_in_cgroup(false, cg_dirs[0], e1, sizeof(e1));
	if (n1 >= 1000)
		cr_skip_test("skipped: a ring's memory is not charged to the memory cgroup of its "
			     "creator on this kernel");
	n2 = rings_in_cgroup(true, cg_dirs[1], e2, sizeof(e2));
	if (n1 < 0) {
		/* Some kernels' memory cgroups OOM-kill rather than fail
		 * io_uring_setup (6.1, 6.12 with v2).  Under run the cgroup must
		 * still pay: the program is killed, or the worker creating its
		 * ring is (it is in that cgroup) and the call gets ENOMEM after
		 * as many rings as 64 MiB holds (16 of 32768 entries at most),
		 * never the 1000 a paying broker would give. */
		live_log("%s: unconfined the memory cgroup killed the program (SIGKILL); under run: "
			 "%d rings, %s",
			 k == CG_V2 ? "cgroup v2, 64 MiB" : "cgroup v1, 64 MiB", n2,
			 n2 < 0 ? "killed the same way" : e2);
		if (n2 >= 0) {
			cr_assert_str_eq(e2, "ENOMEM", "under run: %d rings, then %s", n2, e2);
			cr_assert_leq(n2, 16, "under run the program held %d rings of 64 MiB's", n2);
		}
		return;
	}
	live_log("%s: unconfined the program held %d rings of %u entries, then %s; under run "
		 "(broker) %d, then %s",
		 k == CG_V2 ? "cgroup v2, 64 MiB" : "cgroup v1, 64 MiB", n1, BIG_RING, e1, n2, e2);
	cr_assert_str_eq(e1, "ENOMEM");
	cr_assert_str_eq(e2, "ENOMEM", "under run the program's ring %d failed with %s", n2 + 1,
			 e2);
	cr_assert(abs(n1 - n2) <= 1, "unconfined %d rings, under run %d", n1, n2);
}

Test(live_broker_account, run_program_pays_in_its_memcg_v1)
{
	run_pays_case(CG_V1);
}

Test(live_broker_account, run_program_pays_in_its_memcg_v2)
{
	run_pays_case(CG_V2);
}
