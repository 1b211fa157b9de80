/* SPDX-License-Identifier: MIT */
/*
 * The kernel probe.
 *
 * A forked child makes every probing call (doc/kernel.md 5.4)
 * and records the kernel's raw answers in a shared anonymous page; the
 * parent then interprets them with the errno-by-generation table (doc/kernel.md
 * 5.5) in lib/probe/probe_interpret.c.  Keeping "ask" and "decide" apart lets the
 * tests feed the interpretation with the answers of kernels this machine
 * does not run.
 *
 * The answer is cached in an immutable snapshot published with a release
 * store, so the cached path is one acquire load and a copy.  A probe in
 * which any call ran short of a resource (EMFILE, ENFILE, ENOMEM, EAGAIN)
 * describes the caller's limits, not the kernel: it fails with that errno
 * and is never cached, so the next call probes afresh.
 *
 * This file asks (the child's calls, the parent's diagnostics), caches and
 * serves the answer; lib/probe/probe_interpret.c decides what the answers mean;
 * the raw-answer record they share is in lib/probe/probe_answers.h; the kernel
 * description the planner uses lives in lib/probe/kernel.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "iouring_restrict/cbpf.h"
#include "iouring_restrict/schema.h"
#include "base/miniring.h"
#include "probe_answers.h"
#include "base/sys.h"

/* ---- the probe child ------------------------------------------------- */

/* PROBE buffer for 256 opcodes, without a struct holding a flexible array. */
#define PROBE_BUF_SZ (sizeof(struct kio_probe) + 256 * sizeof(struct kio_probe_op))

static int32_t setup_ring(uint32_t flags)
{
	struct kio_params p;

	memset(&p, 0, sizeof(p));
	p.flags = flags;
	return (int32_t)iour__setup(1, &p);
}

static void probe_opcodes(int fd, struct iour__probe_raw *raw)
{
	uint64_t buf[PROBE_BUF_SZ / sizeof(uint64_t)];
	const struct kio_probe *h;
	const struct kio_probe_op *ops;
	uint32_t i, n;

	memset(buf, 0, sizeof(buf));
	h = (const struct kio_probe *)buf;
	ops = (const struct kio_probe_op *)(h + 1);
	raw->probe = (int32_t)iour__register(fd, KIO_REGISTER_PROBE, buf, 256);
	if (raw->probe == 0) {
		raw->probe_last_op = h->last_op;
		raw->probe_ops_len = h->ops_len;
		n = h->ops_len;
		for (i = 0; i < n && i < 256; i++)
			if (ops[i].flags & KIO_OP_SUPPORTED)
				iour__bm_set(&raw->probe_ops, i);
	}
	raw->done |= IOUR__RAW_PROBE;
}

/*
 * Filter payload sizes, one per payload of the request schema
 * (lib/base/schema.def): a filter registration with SZ_STRICT and an
 * impossible pdu_size fails with -EMSGSIZE before anything is installed,
 * and the kernel writes its own size back (doc/kernel.md 4.2).
 */
static void probe_pdu(int fd, struct iour__probe_raw *raw)
{
	/* BPF_RET|BPF_K 0: never read, the size check fails first. */
	uint64_t insn = KBPF_RET;
	const struct iour__schema_payload *pl;
	struct kio_bpf b;
	size_t i;

	for (i = 0; i < IOUR__PDU_N && (pl = iour__schema_payload_at(i)); i++) {
		memset(&b, 0, sizeof(b));
		b.cmd_type = KIO_BPF_CMD_FILTER;
		b.filter.opcode = pl->opcode;
		b.filter.flags = KIO_BPF_FILTER_SZ_STRICT;
		b.filter.filter_len = 1;
		b.filter.pdu_size = 0xff;
		b.filter.filter_ptr = (uint64_t)(uintptr_t)&insn;
		raw->pdu_err[i] = (int32_t)iour__register(fd, KIO_REGISTER_BPF_FILTER, &b, 1);
		if (raw->pdu_err[i] == -EMSGSIZE || raw->pdu_err[i] == 0)
			raw->pdu[i] = b.filter.pdu_size;
	}
}

/* The size probe_pdu() found for an opcode; 0 if it has no payload row. */
static uint32_t raw_pdu_of(const struct iour__probe_raw *raw, uint32_t opcode)
{
	int i = iour_payload_find(opcode);

	return i >= 0 && i < IOUR__PDU_N ? raw->pdu[i] : 0;
}

/*
 * Does a SOCKET filter see SOCK_NONBLOCK in the payload's type word?
 * Measured: 7.0 to 7.3-rc7 yes, Debian's 7.3.4 no (doc/kernel.md 4.3).  A
 * filter denying the flag runs on a SOCKET request for a family no kernel
 * has: -EACCES if it saw the flag, else the socket call's own error; no
 * socket is ever created.
 */
static void probe_socket_flags(struct iour__probe_raw *raw)
{
	const struct iour_insn prog[] = {
		{ KBPF_LD | KBPF_W | KBPF_ABS, 0, 0, 20 },
		{ KBPF_JMP | KBPF_JSET | KBPF_K, 0, 1, 04000 /* SOCK_NONBLOCK */ },
		{ KBPF_RET | KBPF_K, 0, 0, 0 },
		{ KBPF_RET | KBPF_K, 0, 0, 1 },
	};
	struct iour__ring r;
	struct kio_sqe sqe;
	struct kio_cqe cqe;
	struct kio_bpf b;
	int rc;

	if (iour__ring_init(&r, 2, KIO_SETUP_R_DISABLED))
		return;
	memset(&b, 0, sizeof(b));
	b.cmd_type = KIO_BPF_CMD_FILTER;
	b.filter.opcode = IOUR_OP_SOCKET;
	b.filter.filter_len = sizeof(prog) / sizeof(prog[0]);
	b.filter.pdu_size = KIO_PDU_SOCKET;
	b.filter.filter_ptr = (uint64_t)(uintptr_t)prog;
	if (iour__register(r.fd, KIO_REGISTER_BPF_FILTER, &b, 1) == 0 &&
	    iour__register(r.fd, KIO_REGISTER_ENABLE_RINGS, NULL, 0) == 0) {
		memset(&sqe, 0, sizeof(sqe));
		sqe.opcode = IOUR_OP_SOCKET;
		sqe.fd = 0x7ffe; /* no such address family */
		sqe.off = 2 /* SOCK_DGRAM */ | 04000 /* SOCK_NONBLOCK */;
		rc = iour__ring_submit_one(&r, &sqe, &cqe);
		if (rc == 0) {
			if (cqe.res >= 0)
				iour__close(cqe.res);
			raw->sock_flags = cqe.res;
			raw->done |= IOUR__RAW_SOCK_FLAGS;
		}
	}
	iour__ring_exit(&r);
}

/*
 * Does a task set with a register-opcode entry gate the task's own fd -1
 * registrations?  Measured: 7.0 to 7.3-rc7 no, Debian's 7.3.4 yes
 * (doc/kernel.md 3.3).  Both calls are there (-EFAULT, or -EACCES for
 * want of no_new_privs).  The child sets no_new_privs, registers the set
 * {REGISTER_OP ENABLE_RINGS} (the planner's sentinel for "no register
 * opcode") and asks for a task filter with a NULL argument: -EACCES if
 * gated, else -EFAULT; nothing is installed.  It restricts this child, so
 * it runs after every other step.
 */
static void probe_task_gate(struct iour__probe_raw *raw)
{
	/* the header and one entry (a struct cannot hold a flexible-array
	 * struct followed by more members in ISO C) */
	_Alignas(struct kio_task_restriction)
		uint8_t buf[sizeof(struct kio_task_restriction) + sizeof(struct kio_restriction)];
	struct kio_task_restriction *t = (struct kio_task_restriction *)(void *)buf;

	if (iour__prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		return;
	memset(buf, 0, sizeof(buf));
	t->nr_res = 1;
	t->restrictions[0].opcode = KIO_RESTRICTION_REGISTER_OP;
	t->restrictions[0].register_op = KIO_REGISTER_ENABLE_RINGS;
	if (iour__register(-1, KIO_REGISTER_RESTRICTIONS, buf, 1) != 0)
		return;
	raw->task_gate = (int32_t)iour__register(-1, KIO_REGISTER_BPF_FILTER, NULL, 1);
	raw->done |= IOUR__RAW_TASK_GATE;
}

/*
 * IORING_REGISTER_LAST without QUERY: the kernel rejects a restriction
 * entry naming a register opcode >= IORING_REGISTER_LAST with -EINVAL (and
 * resets the ring's restriction state), and accepts one below it.  Binary
 * search between ENABLE_RINGS (12, present on every kernel with
 * restrictions) and 256; an accepted entry uses up its ring.
 */
static void probe_reg_range(struct iour__probe_raw *raw)
{
	uint32_t lo = KIO_REGISTER_ENABLE_RINGS, hi = 256, mid;
	struct kio_restriction e;
	int fd = -1;
	long r;

	while (hi - lo > 1) {
		mid = lo + (hi - lo) / 2;
		if (fd < 0) {
			r = setup_ring(KIO_SETUP_R_DISABLED);
			if (r < 0) {
				raw->range = (int32_t)r;
				goto out;
			}
			fd = (int)r;
		}
		memset(&e, 0, sizeof(e));
		e.opcode = KIO_RESTRICTION_REGISTER_OP;
		e.register_op = (uint8_t)mid;
		r = iour__register(fd, KIO_REGISTER_RESTRICTIONS, &e, 1);
		if (r == 0) {
			lo = mid;
			iour__close(fd);
			fd = -1;
		} else if (r == -EINVAL) {
			hi = mid;
		} else {
			raw->range = (int32_t)r;
			goto out;
		}
	}
	raw->range = 0;
	raw->range_reg_last = hi;
out:
	if (fd >= 0)
		iour__close(fd);
	raw->done |= IOUR__RAW_RANGE;
}

/* Documented in probe_answers.h.  Runs in the child: system calls only. */
void iour__probe_steps(struct iour__probe_raw *raw)
{
	struct kio_query_hdr h;
	struct kio_query_opcode q;
	long r;
	int fd;

	/* (a) io_uring usable: -EFAULT (params are read after the checks). */
	r = iour__setup(1, NULL);
	if (r >= 0) {
		iour__close((int)r);
		r = 0;
	}
	raw->setup = (int32_t)r;
	raw->done |= IOUR__RAW_SETUP;
	if (r != -EFAULT && r != 0) {
		raw->done |= IOUR__RAW_END; /* nothing else can be probed */
		return;
	}

	/* (b) a disabled ring: restrictions (5.10+), PROBE, BPF ring path. */
	raw->rdis = setup_ring(KIO_SETUP_R_DISABLED);
	if (raw->rdis >= 0) {
		fd = raw->rdis;
		raw->rdis = 0;
		/* NULL array: -EBUSY if inherited restrictions, else -EINVAL. */
		raw->ring_reg_null =
			(int32_t)iour__register(fd, KIO_REGISTER_RESTRICTIONS, NULL, 1);
		raw->done |= IOUR__RAW_RDIS;
		/* A disabled ring's register ops are never gated. */
		probe_opcodes(fd, raw);
		/* (c) ring-path filters: -EFAULT when supported (7.0+). */
		raw->bpf_ring = (int32_t)iour__register(fd, KIO_REGISTER_BPF_FILTER, NULL, 1);
		if (raw->bpf_ring == -EFAULT) {
			probe_pdu(fd, raw);
			if (raw_pdu_of(raw, IOUR_OP_SOCKET) >= KIO_PDU_SOCKET)
				probe_socket_flags(raw);
		}
		raw->done |= IOUR__RAW_BPF_RING;
		iour__close(fd);
	} else {
		raw->done |= IOUR__RAW_RDIS;
	}

	/* (b) an enabled ring: ENABLE_RINGS gives -EBADFD on 5.10+. */
	raw->plain = setup_ring(0);
	if (raw->plain >= 0) {
		fd = raw->plain;
		raw->plain = 0;
		raw->enable = (int32_t)iour__register(fd, KIO_REGISTER_ENABLE_RINGS, NULL, 0);
		if (!(raw->done & IOUR__RAW_PROBE))
			probe_opcodes(fd, raw);
		iour__close(fd);
	}
	raw->done |= IOUR__RAW_PLAIN;

	/* QUERY on the blind path (6.18+). */
	memset(&h, 0, sizeof(h));
	memset(&q, 0, sizeof(q));
	h.query_data = (uint64_t)(uintptr_t)&q;
	h.query_op = KIO_QUERY_OPCODES;
	h.size = sizeof(q);
	raw->query = (int32_t)iour__register(-1, KIO_REGISTER_QUERY, &h, 0);
	raw->query_result = h.result;
	raw->query_size = h.size;
	raw->q = q;
	raw->done |= IOUR__RAW_QUERY;

	/* (d) task restrictions and the blind path; (c') task-path filters.
	 * NULL arguments: nothing can be installed. */
	raw->task = (int32_t)iour__register(-1, KIO_REGISTER_RESTRICTIONS, NULL, 1);
	raw->done |= IOUR__RAW_TASK;
	raw->bpf_task = (int32_t)iour__register(-1, KIO_REGISTER_BPF_FILTER, NULL, 1);
	raw->done |= IOUR__RAW_BPF_TASK;

	/* Register-opcode limit without QUERY, or when the caller forced a
	 * level below QUERY's and must see the fallback. */
	if (raw->rdis == 0 && (raw->query != 0 || raw->query_result != 0 ||
			       (raw->force >= 0 && raw->force < IOUR_LEVEL_QUERY)))
		probe_reg_range(raw);

	/* Last: it restricts this child. */
	if ((raw->task == -EFAULT || raw->task == -EACCES) &&
	    (raw->bpf_task == -EFAULT || raw->bpf_task == -EACCES))
		probe_task_gate(raw);

	raw->done |= IOUR__RAW_END;
}

/* ---- the parent side -------------------------------------------------- */

/* Errnos that say the caller ran short of a resource (file descriptors,
 * memory, processes), not what the kernel supports. */
static bool resource_errno(long e)
{
	return e == -EMFILE || e == -ENFILE || e == -ENOMEM || e == -EAGAIN;
}

/* Documented in probe_answers.h. */
int iour__probe_resource_err(const struct iour__probe_raw *raw)
{
	const uint32_t d = raw->done;
	int i;

	if ((d & IOUR__RAW_SETUP) && resource_errno(raw->setup))
		return raw->setup;
	if (d & IOUR__RAW_RDIS) {
		if (resource_errno(raw->rdis))
			return raw->rdis;
		if (resource_errno(raw->ring_reg_null))
			return raw->ring_reg_null;
	}
	if ((d & IOUR__RAW_PROBE) && resource_errno(raw->probe))
		return raw->probe;
	if (d & IOUR__RAW_BPF_RING) {
		if (resource_errno(raw->bpf_ring))
			return raw->bpf_ring;
		for (i = 0; i < IOUR__PDU_N; i++)
			if (resource_errno(raw->pdu_err[i]))
				return raw->pdu_err[i];
	}
	if (d & IOUR__RAW_PLAIN) {
		if (resource_errno(raw->plain))
			return raw->plain;
		if (resource_errno(raw->enable))
			return raw->enable;
	}
	if (d & IOUR__RAW_QUERY) {
		if (resource_errno(raw->query))
			return raw->query;
		if (resource_errno(raw->query_result))
			return raw->query_result;
	}
	if ((d & IOUR__RAW_TASK) && resource_errno(raw->task))
		return raw->task;
	if ((d & IOUR__RAW_BPF_TASK) && resource_errno(raw->bpf_task))
		return raw->bpf_task;
	if ((d & IOUR__RAW_RANGE) && resource_errno(raw->range))
		return raw->range;
	return 0;
}

static unsigned long probe_runs;

static void read_diag(struct iour__probe_raw *raw);

unsigned long iour__probe_runs(void)
{
	return __atomic_load_n(&probe_runs, __ATOMIC_RELAXED);
}

int iour__probe_run(struct iour__probe_raw *raw)
{
	size_t len = (sizeof(*raw) + 4095) & ~(size_t)4095;
	struct iour__probe_raw *sh;
	int saved = errno, st = 0, r;
	void *map = NULL;
	long rc;
	pid_t pid, w;

	rc = iour__mmap(&map, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (rc < 0) {
		r = rc == -EAGAIN || rc == -ENFILE ? (int)rc : -ENOMEM;
		errno = saved;
		return r;
	}
	sh = map;
	memcpy(sh, raw, sizeof(*raw));
	rc = iour__fork();
	if (rc < 0) {
		/* EAGAIN (process limit) and ENOMEM are the caller's resources,
		 * reported as themselves; anything else means no child. */
		r = resource_errno((int)rc) ? (int)rc : -ECHILD;
		iour__munmap(sh, len);
		errno = saved;
		return r;
	}
	pid = (pid_t)rc;
	if (pid == 0) {
		iour__probe_steps(sh);
		_exit(0);
	}
	/* While the child asks the kernel (on another CPU, if there is one):
	 * fields the child never writes. */
	read_diag(sh);
	do
		w = waitpid(pid, &st, 0);
	while (w < 0 && errno == EINTR);
	/* w < 0 (ECHILD): someone else reaped the child, which has exited. */
	if (w == pid && WIFSIGNALED(st))
		sh->child_signal = WTERMSIG(st);
	memcpy(raw, sh, sizeof(*raw));
	iour__munmap(sh, len);
	__atomic_fetch_add(&probe_runs, 1, __ATOMIC_RELAXED);
	errno = saved;
	/* A step that ran short of a resource tells nothing about the
	 * kernel: the whole answer is void (never cached, never
	 * interpreted). */
	return iour__probe_resource_err(raw);
}

/* Documented in internal.h */
int iour__read_int_file(const char *path, int32_t *val)
{
	char buf[32];
	ssize_t n;
	long v;
	char *end;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	v = strtol(buf, &end, 10);
	if (end == buf || v < INT32_MIN || v > INT32_MAX)
		return -1;
	*val = (int32_t)v;
	return 0;
}

static int32_t status_field(const char *buf, const char *key)
{
	const char *p = strstr(buf, key);
	long v;
	char *end;

	if (!p)
		return -1;
	p += strlen(key);
	v = strtol(p, &end, 10);
	if (end == p || v < 0 || v > INT32_MAX)
		return -1;
	return (int32_t)v;
}

static int32_t parse_force(const char *s)
{
	int32_t v = 0;

	if (!s)
		return -1;
	if (!*s)
		return -2;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -2;
		v = v * 10 + (*s - '0');
		if (v > 255)
			return -2;
	}
	return v;
}

/*
 * The task's seccomp mode and no_new_privs, the values of the Seccomp: and
 * NoNewPrivs: lines of /proc/self/status.  prctl() tells both for a
 * hundredth of what formatting that file costs; where it does not (a
 * seccomp policy refusing prctl, a kernel without CONFIG_SECCOMP), the
 * file is read.  Direct calls: the caller's own state, never an emulated
 * kernel's (doc/design.md, "One syscall seam").
 */
static void read_task_state(struct iour__probe_raw *raw)
{
	int mode = prctl(PR_GET_SECCOMP, 0, 0, 0, 0);
	int nnp = prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0);
	char buf[8192];
	ssize_t n;
	size_t got = 0;
	int fd;

	if (mode >= 0 && mode <= 2 && (nnp == 0 || nnp == 1)) {
		raw->seccomp_mode = mode;
		raw->no_new_privs = nnp;
		return;
	}
	fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		while (got < sizeof(buf) - 1) {
			n = read(fd, buf + got, sizeof(buf) - 1 - got);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				break;
			got += (size_t)n;
		}
		close(fd);
		buf[got] = '\0';
		raw->seccomp_mode = status_field(buf, "\nSeccomp:");
		raw->no_new_privs = status_field(buf, "\nNoNewPrivs:");
	}
}

/* The parent-side diagnostics (doc/kernel.md 5.1): the io_uring sysctls,
 * the task's seccomp mode and no_new_privs. */
static void read_diag(struct iour__probe_raw *raw)
{
	raw->sysctl_disabled = -1;
	raw->sysctl_group = -1;
	raw->seccomp_mode = -1;
	raw->no_new_privs = -1;
	if (iour__read_int_file("/proc/sys/kernel/io_uring_disabled", &raw->sysctl_disabled) < 0)
		raw->sysctl_disabled = -1;
	if (iour__read_int_file("/proc/sys/kernel/io_uring_group", &raw->sysctl_group) < 0)
		raw->sysctl_group = -1;
	read_task_state(raw);
}

/* Documented in probe_answers.h */
void iour__probe_read_force(struct iour__probe_raw *raw)
{
	raw->force = parse_force(secure_getenv("IOUR_FEATURE_LEVEL"));
}

/* ---- cache ------------------------------------------------------------- */

/*
 * memcpy() with a length the compiler cannot see: for a constant length of
 * a few hundred bytes (struct iour_features is 480) GCC inlines `rep movsq`,
 * more than twice as slow as libc's vector copy on the bench machine
 * (doc/design.md, "Kernel probe").
 */
static void copy_opaque(void *dst, const void *src, size_t n)
{
	__asm__("" : "+r"(n));
	memcpy(dst, src, n);
}

struct snapshot {
	struct iour_features f;
	struct iour__kernel_limits lim;
	struct snapshot *prev; /* older answers stay allocated (reachable) */
};

static struct snapshot *cache;
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;

static int probe_fresh(struct iour_features *f, struct iour__kernel_limits *lim)
{
	struct iour__probe_raw raw;
	int r;

	memset(&raw, 0, sizeof(raw));
	iour__probe_read_force(&raw);
	r = iour__probe_run(&raw);
	if (r)
		return r;
	iour__probe_interpret(&raw, f, lim);
	return 0;
}

static int probe_get(uint64_t flags, struct iour_features *f, struct iour__kernel_limits *lim)
{
	struct snapshot *s, *n;
	int r = 0;

	if (iour_likely(!(flags & (IOUR_PROBE_NO_CACHE | IOUR_PROBE_REFRESH)))) {
		s = __atomic_load_n(&cache, __ATOMIC_ACQUIRE);
		if (iour_likely(s != NULL)) {
			copy_opaque(f, &s->f, sizeof(*f));
			*lim = s->lim;
			return 0;
		}
	}
	if (flags & IOUR_PROBE_NO_CACHE)
		return probe_fresh(f, lim);

	pthread_mutex_lock(&cache_lock);
	s = __atomic_load_n(&cache, __ATOMIC_RELAXED);
	if (!s || (flags & IOUR_PROBE_REFRESH)) {
		n = iour__calloc(1, sizeof(*n));
		if (!n) {
			r = -ENOMEM;
			goto out;
		}
		r = probe_fresh(&n->f, &n->lim);
		if (r) {
			iour__free(n);
			goto out;
		}
		n->prev = s;
		__atomic_store_n(&cache, n, __ATOMIC_RELEASE);
		s = n;
	}
	/* s is not NULL here: the branch above either set it or left. */
	*f = s->f;     /* cppcheck-suppress nullPointerRedundantCheck */
	*lim = s->lim; /* cppcheck-suppress nullPointerRedundantCheck */
out:
	pthread_mutex_unlock(&cache_lock);
	return r;
}

int iour__probe_cached(struct iour_features *f, struct iour__kernel_limits *lim)
{
	return probe_get(0, f, lim);
}

int iour__probe_limits(struct iour__kernel_limits *lim)
{
	struct iour__kernel_limits l;
	struct iour_features f;
	int r;

	r = probe_get(0, &f, &l);
	if (r)
		return r;
	if (f.level < IOUR_LEVEL_RING || !l.op_last || !l.reg_last)
		return -IOUR_ERRNO__UNSUPPORTED;
	*lim = l;
	return 0;
}

/* ---- public API ---------------------------------------------------------- */

/* End offsets of the fields of struct iour_features, so that a caller's
 * smaller struct gets whole fields only. */
#define FEND(m) (offsetof(struct iour_features, m) + sizeof(((struct iour_features *)0)->m))
static const uint16_t feature_ends[] = {
	FEND(level),
	FEND(kernel_level),
	FEND(flags),
	FEND(io_uring),
	FEND(setup_err),
	FEND(sysctl_disabled),
	FEND(sysctl_group),
	FEND(seccomp_mode),
	FEND(no_new_privs),
	FEND(ring_restrictions),
	FEND(r_disabled_err),
	FEND(ring_register_err),
	FEND(enable_rings_err),
	FEND(op_last),
	FEND(reg_last),
	FEND(limits_source),
	FEND(split_gates),
	FEND(query),
	FEND(query_err),
	FEND(nr_query_opcodes),
	FEND(probe),
	FEND(feature_flags),
	FEND(setup_flags),
	FEND(enter_flags),
	FEND(sqe_flags),
	FEND(probe_err),
	FEND(probe_last_op),
	FEND(nr_supported_ops),
	FEND(blind_register),
	FEND(supported_ops),
	FEND(task_restrictions),
	FEND(task_restrictions_err),
	FEND(bpf_ring),
	FEND(bpf_ring_err),
	FEND(bpf_task),
	FEND(bpf_task_err),
	FEND(pdu_socket),
	FEND(pdu_openat),
	FEND(pdu_openat2),
	FEND(pdu_connect),
	FEND(child_signal),
	FEND(pad),
	FEND(pdu_size),
};
_Static_assert(FEND(pdu_size) == sizeof(struct iour_features),
	       "iour_features has trailing padding");
_Static_assert(offsetof(struct iour_features, pdu_size) == 224, "the 1.0 iour_features changed");
_Static_assert(sizeof(struct iour_features) == 480, "iour_features layout changed");
_Static_assert(offsetof(struct iour_features, feature_flags) % 8 == 0, "feature_flags alignment");
_Static_assert(offsetof(struct iour_features, supported_ops) % 8 == 0, "supported_ops alignment");
_Static_assert(offsetof(struct iour_features, supported_ops) == 144, "supported_ops offset");

#define FEATURES_MAX_SZ 4096

/* Documented in probe_answers.h */
void iour__features_copy_out(const struct iour_features *src, struct iour_features *out)
{
	size_t sz = out->sz, n = 0, lo = 0, hi = IOUR_ARRAY_SIZE(feature_ends), mid;

	if (iour_likely(sz >= sizeof(*src))) {
		n = sizeof(*src);
	} else {
		/* The last field end within sz (feature_ends ascends): a
		 * binary search, as a caller built against an older header
		 * (1.0: 224 bytes) asks on every cached call. */
		while (lo < hi) {
			mid = lo + (hi - lo) / 2;
			if (feature_ends[mid] <= sz)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo)
			n = feature_ends[lo - 1];
	}
	copy_opaque((char *)out + sizeof(size_t), (const char *)src + sizeof(size_t),
		    n - sizeof(size_t));
	if (sz > sizeof(*src))
		memset((char *)out + sizeof(*src), 0, sz - sizeof(*src));
}

/* Documented in include/iouring_restrict/probe.h */
int iour_probe(const struct iour_probe_opts *opts, struct iour_features *out)
{
	struct iour__kernel_limits lim;
	struct iour_features f;
	uint64_t flags;
	int r;

	r = IOUR_OPTS_VALID(opts, iour_probe_opts);
	if (r)
		return r;
	flags = IOUR_OPTS_GET(opts, flags, 0);
	if (flags & ~(IOUR_PROBE_NO_CACHE | IOUR_PROBE_REFRESH))
		return -EINVAL;
	if ((flags & IOUR_PROBE_NO_CACHE) && (flags & IOUR_PROBE_REFRESH))
		return -EINVAL;
	if (!out || out->sz < FEND(level) || out->sz > FEATURES_MAX_SZ)
		return -EINVAL;
	if (iour_likely(!flags)) {
		/* Cached fast path: one acquire load and one copy.  The
		 * snapshot's sz is sizeof(s->f): a caller of this size gets the
		 * whole struct, copied from its start. */
		const struct snapshot *s = __atomic_load_n(&cache, __ATOMIC_ACQUIRE);

		if (iour_likely(s != NULL)) {
			if (iour_likely(out->sz == sizeof(s->f)))
				copy_opaque(out, &s->f, sizeof(s->f));
			else
				iour__features_copy_out(&s->f, out);
			return 0;
		}
	}
	r = probe_get(flags, &f, &lim);
	if (r)
		return iour__err_public(r, IOUR__ERRSET_PROBE);
	iour__features_copy_out(&f, out);
	return 0;
}

/* Documented in include/iouring_restrict/probe.h */
int iour_feature_level(void)
{
	struct iour__kernel_limits lim;
	struct iour_features f;
	int r;

	r = probe_get(0, &f, &lim);
	if (r)
		return iour__err_public(r, IOUR__ERRSET_FEATURE_LEVEL);
	return (int)f.level;
}

/* Documented in include/iouring_restrict/probe.h */
const char *iour_feature_level_str(int level)
{
	switch (level) {
	case IOUR_LEVEL_NONE:
		return "io_uring unusable";
	case IOUR_LEVEL_IO_URING:
		return "io_uring without restrictions (before Linux 5.10)";
	case IOUR_LEVEL_RING:
		return "per-ring restrictions (Linux 5.10+)";
	case IOUR_LEVEL_QUERY:
		return "per-ring restrictions and QUERY (Linux 6.18+)";
	case IOUR_LEVEL_TASK_BPF:
		return "task restrictions and BPF filters (Linux 7.0+)";
	case IOUR_LEVEL_CONNECT:
		return "BPF filters with the CONNECT payload (Linux 7.2+)";
	default:
		return "unknown level";
	}
}

/* Documented in include/iouring_restrict/probe.h */
const char *iour_avail_str(uint32_t avail)
{
	switch (avail) {
	case IOUR_AVAIL_NO:
		return "no";
	case IOUR_AVAIL_YES:
		return "yes";
	case IOUR_AVAIL_NO_PRIV:
		return "no privilege";
	case IOUR_AVAIL_RESTRICTED:
		return "already restricted";
	case IOUR_AVAIL_UNKNOWN:
		return "unknown";
	default:
		return "invalid";
	}
}
