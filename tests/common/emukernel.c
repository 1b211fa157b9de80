/* SPDX-License-Identifier: MIT */
/*
 * Emulated io_uring restriction kernel behind the syscall seam.  See
 * emukernel.h for the model; the numbered comments refer to the sections of
 * doc/kernel.md whose rules each piece implements.
 */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <signal.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <unistd.h>

#include "emukernel.h"
#include "kernel_oracle.h"

#define EMU_NOPS 256            /* size of the opcode tables (u8 opcodes) */
#define EMU_MAX_QUERY_SIZE 512  /* kernel buffer for one query entry */
#define EMU_MAX_QUERY_ENTRIES 1000
#define EMU_RINGFD_REG_MAX 16   /* IO_RINGFD_REG_MAX */
#define EMU_MAX_ENTRIES 32768   /* IORING_MAX_ENTRIES */
#define EMU_MAX_CQ_ENTRIES (2 * EMU_MAX_ENTRIES)

/* ------------------------------------------------------------------ */
/* generations                                                          */

struct gen_info {
	const char *name;
	uint32_t op_last, reg_last;
	bool blind, query, task, bpf, connect_pdu;
	uint32_t features, setup_mask, enter_mask, nr_query_ops;
};

static const struct gen_info gens[] = {
	[EMU_GEN_6_1] = { "6.1", 49, 26, false, false, false, false, false,
			  0x1fff, 0x3fff, 0x1f, 0 },
	[EMU_GEN_6_18] = { "6.18", 63, 36, true, true, false, false, false,
			   0x3ffff, 0x7ffff, 0xff, 1 },
	[EMU_GEN_7_0] = { "7.0", 65, 38, true, true, true, true, false,
			  0x3ffff, 0x1fffff, 0xff, 3 },
	[EMU_GEN_7_2] = { "7.2", 65, 38, true, true, true, true, true,
			  0x3ffff, 0x1fffff, 0xff, 4 },
};

const char *emu_gen_name(enum emu_gen gen)
{
	return (unsigned)gen < IOUR_ARRAY_SIZE(gens) ? gens[gen].name : "?";
}

/* ------------------------------------------------------------------ */
/* filters: per-opcode singly linked lists, newest first (4.6)          */

struct fnode {
	int refs;
	bool dummy;
	uint64_t serial;
	struct fnode *next; /* owns one reference */
	struct iour_insn *insns;
	uint32_t cnt;
};

/* The one DENY_REST dummy; never freed. */
static struct fnode dummy_node = { .refs = 1, .dummy = true };
static uint64_t next_serial = 1;

static void fnode_put(struct fnode *n)
{
	while (n && !n->dummy) {
		struct fnode *next = n->next;

		if (--n->refs > 0)
			return;
		free(n->insns);
		free(n);
		n = next;
	}
}

static struct fnode *fnode_get(struct fnode *n)
{
	if (n && !n->dummy)
		n->refs++;
	return n;
}

/* A filter table: one head per opcode, shared by reference count. */
struct ftable {
	int refs;
	struct fnode *head[EMU_NOPS];
};

static void ftable_put(struct ftable *t)
{
	if (!t || --t->refs > 0)
		return;
	for (int i = 0; i < EMU_NOPS; i++)
		fnode_put(t->head[i]);
	free(t);
}

/* ------------------------------------------------------------------ */
/* restriction objects (task or ring)                                   */

struct restrict_set {
	uint64_t sqe_op[4];
	uint64_t reg_op[4];
	uint8_t flags_allowed;
	uint8_t flags_required;
	bool registered;
	bool op_registered;
	bool reg_registered;
	struct ftable *bpf; /* NULL: no filters */
	bool bpf_cow;       /* bpf is shared: copy before writing */
};

static bool bit_test(const uint64_t *bm, unsigned n)
{
	return n < EMU_NOPS && (bm[n >> 6] >> (n & 63)) & 1;
}

static void bit_set(uint64_t *bm, unsigned n)
{
	bm[(n >> 6) & 3] |= 1ULL << (n & 63);
}

/* Clone src into dst the way io_uring_fork / io_ctx_restriction_clone do:
 * classic state copied, filter table shared copy-on-write (3.4, 3.5, 4.6). */
static void restrict_clone(struct restrict_set *dst, struct restrict_set *src,
			   bool mark_source)
{
	*dst = *src;
	if (src->bpf) {
		src->bpf->refs++;
		dst->bpf_cow = true;
		if (mark_source)
			src->bpf_cow = true;
	}
}

static void restrict_release(struct restrict_set *r)
{
	ftable_put(r->bpf);
	r->bpf = NULL;
}

/* ------------------------------------------------------------------ */
/* rings and tasks                                                      */

struct ring {
	int refs;
	uint32_t setup_flags;
	bool disabled;          /* IORING_SETUP_R_DISABLED still set */
	uint64_t submitter;     /* SINGLE_ISSUER submitter task id, 0 = none */
	struct restrict_set r;
	bool restricted;        /* 5.10-6.19: gates on after enable */
	bool op_restricted;     /* 7.0: SQE gate */
	bool reg_restricted;    /* 7.0: register gate */
};

struct sprog {
	struct sock_filter *insns;
	uint16_t len;
};

struct fault_rule {
	pid_t pid; /* the process that added the rule */
	struct emu_fault f;
	uint32_t seen;
	bool live;
};

#define EMU_MAX_FAULTS 16

struct emu {
	struct emu_config cfg;
	const struct gen_info *g;
	uint32_t op_last, reg_last;
	uint64_t task_id;
	bool nnp, cap;
	bool tctx;
	struct restrict_set *rs; /* current->io_uring_restrict */
	struct ring *fds[EMU_MAX_RINGS];
	struct sprog *seccomp;
	size_t nseccomp;
	struct fault_rule faults[EMU_MAX_FAULTS];
	emu_hook_fn hook;
	void *hook_arg;
	pid_t hook_pid;
	struct emu_call *log;
	size_t nlog, caplog;
	uint64_t seq;
	struct iour_sys_ops ops;
};

static uint64_t next_task_id = 1;
static uint64_t programs_run;

static void ring_put(struct ring *r)
{
	if (!r || --r->refs > 0)
		return;
	restrict_release(&r->r);
	free(r);
}

static bool is_7x(const struct emu *e)
{
	return e->g->task;
}

uint32_t emu_op_last(const struct emu *e)
{
	return e->op_last;
}

uint32_t emu_reg_last(const struct emu *e)
{
	return e->reg_last;
}

/* K: the kernel's payload size for an opcode (4.3). */
uint8_t emu_pdu_size(const struct emu *e, uint32_t opcode)
{
	if (!e->g->bpf)
		return 0;
	switch (opcode) {
	case IOUR_OP_SOCKET:
		return e->cfg.no_net ? 0 : KIO_PDU_SOCKET;
	case IOUR_OP_OPENAT:
	case IOUR_OP_OPENAT2:
		return KIO_PDU_OPEN;
	case IOUR_OP_CONNECT:
		return e->g->connect_pdu && !e->cfg.no_net ? KIO_PDU_CONNECT : 0;
	default:
		return 0;
	}
}

static uint32_t max_restrictions(const struct emu *e)
{
	return KIO_RESTRICTION_LAST + e->reg_last + e->op_last;
}

/* ------------------------------------------------------------------ */
/* user memory: copy_from_user / copy_to_user with real -EFAULT         */

static int ucopy_from(void *dst, uint64_t src, size_t len)
{
	struct iovec l = { dst, len }, r = { (void *)(uintptr_t)src, len };
	ssize_t n;

	if (!len)
		return 0;
	if (!src)
		return -EFAULT;
	n = process_vm_readv(getpid(), &l, 1, &r, 1, 0);
	if (n == (ssize_t)len)
		return 0;
	if (n < 0 && (errno == ENOSYS || errno == EPERM)) {
		memcpy(dst, (const void *)(uintptr_t)src, len);
		return 0;
	}
	return -EFAULT;
}

static int ucopy_to(uint64_t dst, const void *src, size_t len)
{
	struct iovec l = { (void *)src, len }, r = { (void *)(uintptr_t)dst, len };
	ssize_t n;

	if (!len)
		return 0;
	if (!dst)
		return -EFAULT;
	n = process_vm_writev(getpid(), &l, 1, &r, 1, 0);
	if (n == (ssize_t)len)
		return 0;
	if (n < 0 && (errno == ENOSYS || errno == EPERM)) {
		memcpy((void *)(uintptr_t)dst, src, len);
		return 0;
	}
	return -EFAULT;
}

static int uzero(uint64_t dst, size_t len)
{
	static const uint8_t zeros[4096];

	while (len) {
		size_t n = len < sizeof(zeros) ? len : sizeof(zeros);

		if (ucopy_to(dst, zeros, n))
			return -EFAULT;
		dst += n;
		len -= n;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* the kernel's engine (through the socket-filter oracle)               */

static struct kernel_oracle oracle;
static bool oracle_ready;
static uint64_t oracle_serial;

/* 1 allow, 0 deny, -errno on failure of the oracle itself. */
static int run_in_kernel(struct fnode *n, const uint8_t ctx[40])
{
	int rc;

	if (!oracle_ready) {
		rc = oracle_open(&oracle);
		if (rc)
			return rc;
		oracle_ready = true;
		oracle_serial = 0;
	}
	if (oracle_serial != n->serial) {
		rc = oracle_attach(&oracle, n->insns, n->cnt);
		if (rc)
			return rc;
		oracle_serial = n->serial;
	}
	programs_run++;
	return oracle_run(&oracle, ctx, NULL);
}

uint64_t emu_programs_run(void)
{
	return programs_run;
}

/* io_uring_check_cbpf_filter (4.4): runs after the generic checker. */
static int io_uring_checker(const struct iour_insn *p, uint32_t cnt)
{
	for (uint32_t i = 0; i < cnt; i++) {
		uint16_t c = p[i].code;

		switch (c) {
		case BPF_LD | BPF_W | BPF_ABS:
			if (p[i].k >= IOUR_CTX_SIZE || (p[i].k & 3))
				return -EINVAL;
			break;
		case BPF_LD | BPF_W | BPF_LEN:
		case BPF_LDX | BPF_W | BPF_LEN:
		case BPF_RET | BPF_K:
		case BPF_RET | BPF_A:
		case BPF_ALU | BPF_NEG:
		case BPF_LD | BPF_IMM:
		case BPF_LDX | BPF_IMM:
		case BPF_MISC | BPF_TAX:
		case BPF_MISC | BPF_TXA:
		case BPF_LD | BPF_MEM:
		case BPF_LDX | BPF_MEM:
		case BPF_ST:
		case BPF_STX:
		case BPF_JMP | BPF_JA:
			break;
		default:
			if (BPF_CLASS(c) == BPF_ALU && (c & ~(0xf0 | BPF_X)) == BPF_ALU) {
				switch (BPF_OP(c)) {
				case BPF_ADD: case BPF_SUB: case BPF_MUL: case BPF_DIV:
				case BPF_AND: case BPF_OR: case BPF_XOR: case BPF_LSH:
				case BPF_RSH:
					continue;
				}
			}
			if (BPF_CLASS(c) == BPF_JMP && (c & ~(0xf0 | BPF_X)) == BPF_JMP) {
				switch (BPF_OP(c)) {
				case BPF_JEQ: case BPF_JGE: case BPF_JGT: case BPF_JSET:
					continue;
				}
			}
			return -EINVAL;
		}
	}
	return 0;
}

/* bpf_prog_create_from_user(): generic checker in the real kernel, then the
 * io_uring checker.  0, -EINVAL, or another -errno of the oracle. */
static int check_program(const struct iour_insn *p, uint32_t cnt)
{
	int rc = oracle_socket_accepts(p, cnt);

	if (rc && rc != -EINVAL && rc != -ENOMEM) {
		fprintf(stderr, "emulated kernel: checker oracle failed: %d\n", rc);
		abort();
	}
	if (rc)
		return rc;
	return io_uring_checker(p, cnt);
}

/* ------------------------------------------------------------------ */
/* restriction parsing (2.3 steps 3-8)                                  */

static int parse_restrictions(struct emu *e, uint64_t arg, uint32_t nr,
			      struct restrict_set *out)
{
	struct kio_restriction *res;
	int rc = 0;

	if (!arg || nr > max_restrictions(e))
		return -EINVAL;
	res = calloc(nr ? nr : 1, sizeof(*res));
	if (!res)
		return -ENOMEM;
	if (ucopy_from(res, arg, (size_t)nr * sizeof(*res))) {
		free(res);
		return -EFAULT;
	}
	for (uint32_t i = 0; i < nr && !rc; i++) {
		switch (res[i].opcode) {
		case KIO_RESTRICTION_REGISTER_OP:
			if (res[i].register_op >= e->reg_last) {
				rc = -EINVAL;
				break;
			}
			bit_set(out->reg_op, res[i].register_op);
			out->reg_registered = true;
			break;
		case KIO_RESTRICTION_SQE_OP:
			if (res[i].sqe_op >= e->op_last) {
				rc = -EINVAL;
				break;
			}
			bit_set(out->sqe_op, res[i].sqe_op);
			out->op_registered = true;
			break;
		case KIO_RESTRICTION_SQE_FLAGS_ALLOWED:
			out->flags_allowed = res[i].sqe_flags;
			out->op_registered = true;
			break;
		case KIO_RESTRICTION_SQE_FLAGS_REQUIRED:
			out->flags_required = res[i].sqe_flags;
			out->op_registered = true;
			break;
		default:
			rc = -EINVAL;
		}
	}
	if (!rc && nr == 0)
		out->op_registered = out->reg_registered = true;
	free(res);
	return rc;
}

/* ------------------------------------------------------------------ */
/* BPF filter registration (4.2)                                        */

static int ftable_writable(struct emu *e, struct restrict_set *r)
{
	struct ftable *t;

	(void)e;
	if (r->bpf && !r->bpf_cow)
		return 0;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->refs = 1;
	if (r->bpf) {
		for (int i = 0; i < EMU_NOPS; i++)
			t->head[i] = fnode_get(r->bpf->head[i]);
		ftable_put(r->bpf);
	}
	r->bpf = t;
	r->bpf_cow = false;
	return 0;
}

static int bpf_register(struct emu *e, struct restrict_set *r, uint64_t arg)
{
	struct kio_bpf b;
	struct kio_bpf_filter *f = &b.filter;
	struct iour_insn *insns;
	struct fnode *n;
	uint8_t k, u;
	int rc = 0;

	if (ucopy_from(&b, arg, sizeof(b)))                       /* 1 */
		return -EFAULT;
	if (b.cmd_type != KIO_BPF_CMD_FILTER)                      /* 2 */
		return -EINVAL;
	if (b.cmd_flags || b.resv)
		return -EINVAL;
	if (f->opcode >= e->op_last)                               /* 3 */
		return -EINVAL;
	if (f->flags & ~(KIO_BPF_FILTER_DENY_REST | KIO_BPF_FILTER_SZ_STRICT))
		return -EINVAL;                                    /* 4 */
	if (f->resv[0] || f->resv[1] || f->resv[2])
		return -EINVAL;
	for (int i = 0; i < 5; i++)
		if (f->resv2[i])
			return -EINVAL;
	if (f->filter_len == 0 || f->filter_len > BPF_MAXINSNS)   /* 5 */
		return -EINVAL;
	k = emu_pdu_size(e, f->opcode);                            /* 6 */
	u = f->pdu_size;
	if (u != k && ((f->flags & KIO_BPF_FILTER_SZ_STRICT) || u > k))
		rc = -EMSGSIZE;
	f->pdu_size = k;                                           /* 7 */
	if (ucopy_to(arg + offsetof(struct kio_bpf, filter), f, sizeof(*f)))
		return -EFAULT;
	if (rc)
		return rc;
	if (!f->filter_ptr)                                        /* 8 */
		return -EINVAL;
	insns = calloc(f->filter_len, sizeof(*insns));
	if (!insns)
		return -ENOMEM;
	if (ucopy_from(insns, f->filter_ptr, (size_t)f->filter_len * sizeof(*insns))) {
		free(insns);
		return -EFAULT;
	}
	rc = check_program(insns, f->filter_len);
	if (rc) {
		free(insns);
		return rc;
	}
	n = calloc(1, sizeof(*n));                                 /* 9 */
	if (!n || ftable_writable(e, r)) {
		free(n);
		free(insns);
		return -ENOMEM;
	}
	n->refs = 1;
	n->serial = next_serial++;
	n->insns = insns;
	n->cnt = f->filter_len;
	n->next = r->bpf->head[f->opcode];
	r->bpf->head[f->opcode] = n;
	if (f->flags & KIO_BPF_FILTER_DENY_REST) {
		for (uint32_t i = 0; i < e->op_last; i++)
			if (i != f->opcode && !r->bpf->head[i])
				r->bpf->head[i] = &dummy_node;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* task path (3.2, 4.2 task path)                                       */

static bool privileged(const struct emu *e)
{
	return e->nnp || e->cap;
}

static long task_restrictions(struct emu *e, uint64_t arg, uint32_t nr)
{
	struct kio_task_restriction hdr;
	struct restrict_set *r;
	int rc;

	if (e->rs)                                                 /* 2 */
		return -EPERM;
	if (!privileged(e))                                        /* 3 */
		return -EACCES;
	if (nr != 1)                                               /* 4 */
		return -EINVAL;
	if (ucopy_from(&hdr, arg, sizeof(hdr)))                    /* 5 */
		return -EFAULT;
	if (hdr.flags || hdr.resv[0] || hdr.resv[1] || hdr.resv[2]) /* 6 */
		return -EINVAL;
	r = calloc(1, sizeof(*r));                                 /* 7 */
	if (!r)
		return -ENOMEM;
	rc = parse_restrictions(e, arg + sizeof(hdr), hdr.nr_res, r); /* 8 */
	if (rc) {
		free(r);
		return rc;
	}
	r->registered = true;                                      /* 9 */
	e->rs = r;
	return 0;
}

static long task_bpf_filter(struct emu *e, uint64_t arg, uint32_t nr)
{
	bool fresh = false;
	int rc;

	if (!privileged(e))
		return -EACCES;
	if (nr != 1)
		return -EINVAL;
	if (e->cfg.no_bpf_config)
		return -EINVAL;
	if (!e->rs) {
		e->rs = calloc(1, sizeof(*e->rs));
		if (!e->rs)
			return -ENOMEM;
		fresh = true;
	}
	rc = bpf_register(e, e->rs, arg);
	if (rc && fresh) {
		restrict_release(e->rs);
		free(e->rs);
		e->rs = NULL;
	}
	return rc;
}

/* ------------------------------------------------------------------ */
/* QUERY (5.3)                                                          */

static long fill_query(const struct emu *e, uint32_t op, uint8_t *data)
{
	struct kio_query_opcode q;

	switch (op) {
	case KIO_QUERY_OPCODES:
		memset(&q, 0, sizeof(q));
		q.nr_request_opcodes = e->op_last;
		q.nr_register_opcodes = e->reg_last;
		q.feature_flags = e->g->features;
		q.ring_setup_flags = e->g->setup_mask;
		q.enter_flags = e->g->enter_mask;
		q.sqe_flags = KIO_SQE_VALID_FLAGS;
		q.nr_query_opcodes = e->g->nr_query_ops;
		memcpy(data, &q, sizeof(q));
		return sizeof(q);
	case KIO_QUERY_ZCRX: /* contents not modelled: zeroes of the right size */
		memset(data, 0, 40);
		return 40;
	case KIO_QUERY_SCQ:
		memset(data, 0, 16);
		return 16;
	default: /* ZCRX_NOTIF (7.2) */
		memset(data, 0, 8);
		return 8;
	}
}

static long do_query(struct emu *e, uint64_t arg, uint32_t nr)
{
	uint8_t data[EMU_MAX_QUERY_SIZE];
	uint64_t uhdr = arg;
	int n = 0;

	if (nr)
		return -EINVAL;
	while (uhdr) {
		struct kio_query_hdr h;
		uint32_t usize, ksize;
		long ret = -EINVAL;
		size_t res = 0;

		if (n++ >= EMU_MAX_QUERY_ENTRIES)
			return -ERANGE;
		if (ucopy_from(&h, uhdr, sizeof(h)))
			return -EFAULT;
		usize = h.size;
		ksize = usize < EMU_MAX_QUERY_SIZE ? usize : EMU_MAX_QUERY_SIZE;
		if (h.query_op >= e->g->nr_query_ops) {
			ret = -EOPNOTSUPP;
		} else if (!(h.resv[0] || h.resv[1] || h.resv[2] || h.result || !usize)) {
			memset(data, 0, sizeof(data));
			if (ucopy_from(data, h.query_data, ksize))
				return -EFAULT;
			ret = fill_query(e, h.query_op, data);
			res = (size_t)ret;
			ret = 0;
		}
		h.result = (int32_t)ret;
		h.size = (uint32_t)(res < usize ? res : usize);
		/* copy_struct_to_user: written bytes, then zeroes up to usize */
		if (ucopy_to(h.query_data, data, h.size))
			return -EFAULT;
		if (usize > h.size && uzero(h.query_data + h.size, usize - h.size))
			return -EFAULT;
		if (ucopy_to(uhdr, &h, sizeof(h)))
			return -EFAULT;
		uhdr = h.next_entry;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* ring-fd handlers                                                     */

static long ring_probe(struct emu *e, uint64_t arg, uint32_t nr)
{
	size_t size = sizeof(struct kio_probe) + (size_t)nr * sizeof(struct kio_probe_op);
	struct kio_probe *p;
	long rc = 0;

	if (!arg || nr > 256)
		return -EINVAL;
	p = calloc(1, size);
	if (!p)
		return -ENOMEM;
	if (ucopy_from(p, arg, size)) {
		rc = -EFAULT;
		goto out;
	}
	for (size_t i = 0; i < size; i++) {
		if (((uint8_t *)p)[i]) {
			rc = -EINVAL;
			goto out;
		}
	}
	p->last_op = (uint8_t)(e->op_last - 1);
	if (nr > e->op_last)
		nr = e->op_last;
	for (uint32_t i = 0; i < nr; i++) {
		p->ops[i].op = (uint8_t)i;
		p->ops[i].flags = KIO_OP_SUPPORTED;
	}
	p->ops_len = (uint8_t)nr;
	if (ucopy_to(arg, p, size))
		rc = -EFAULT;
out:
	free(p);
	return rc;
}

static long ring_restrictions(struct emu *e, struct ring *ring, uint64_t arg, uint32_t nr)
{
	struct restrict_set parsed = { 0 };
	int rc;

	if (!ring->disabled)                                       /* 1 */
		return -EBADFD;
	if (ring->r.registered)                                    /* 2 */
		return -EBUSY;
	rc = parse_restrictions(e, arg, nr, &parsed);              /* 3-6 */
	if (rc)                                                    /* 7 */
		return rc;
	memcpy(ring->r.sqe_op, parsed.sqe_op, sizeof(parsed.sqe_op));
	memcpy(ring->r.reg_op, parsed.reg_op, sizeof(parsed.reg_op));
	ring->r.flags_allowed = parsed.flags_allowed;
	ring->r.flags_required = parsed.flags_required;
	ring->r.op_registered = parsed.op_registered;
	ring->r.reg_registered = parsed.reg_registered;
	ring->r.registered = true;
	if (is_7x(e)) {
		/* 7.0: the gates' flags are set at registration (2.5). */
		ring->op_restricted = parsed.op_registered;
		ring->reg_restricted = parsed.reg_registered;
	}
	return 0;
}

static long ring_enable(struct emu *e, struct ring *ring)
{
	if (!ring->disabled)
		return -EBADFD;
	if ((ring->setup_flags & KIO_SETUP_SINGLE_ISSUER) && !ring->submitter)
		ring->submitter = e->task_id;
	if (!is_7x(e) && ring->r.registered)
		ring->restricted = true;
	ring->disabled = false;
	return 0;
}

static bool reg_gate_on(const struct emu *e, const struct ring *ring)
{
	if (is_7x(e))
		return ring->reg_restricted && !ring->disabled;
	return ring->restricted;
}

static bool sqe_gate_on(const struct emu *e, const struct ring *ring)
{
	if (is_7x(e))
		return ring->op_restricted;
	return ring->restricted;
}

/* fd -> ring of this task, or the lookup error (1, step 4). */
static struct ring *lookup(struct emu *e, int fd, long *err)
{
	if (fd >= EMU_FD_BASE && fd < EMU_FD_BASE + EMU_MAX_RINGS && e->fds[fd - EMU_FD_BASE])
		return e->fds[fd - EMU_FD_BASE];
	if (fd >= 0 && fd < EMU_FD_BASE && fcntl(fd, F_GETFD) >= 0)
		*err = -EOPNOTSUPP; /* a real file, not an (emulated) io_uring */
	else
		*err = -EBADF;
	return NULL;
}

static long blind_send_msg_ring(struct emu *e, uint64_t arg, uint32_t nr)
{
	struct kio_sqe sqe;
	long err = 0;

	if (!arg || nr != 1)
		return -EINVAL;
	if (ucopy_from(&sqe, arg, sizeof(sqe)))
		return -EFAULT;
	if (sqe.opcode != 40 /* IORING_OP_MSG_RING */ || sqe.flags)
		return -EINVAL;
	if (!lookup(e, sqe.fd, &err))
		return err;
	return 0; /* the message itself is not modelled */
}

static long do_register(struct emu *e, int fd, uint32_t opcode, void *argp, uint32_t nr)
{
	bool use_registered = opcode & KIO_REGISTER_USE_REGISTERED_RING;
	uint64_t arg = (uintptr_t)argp;
	struct ring *ring;
	long err = 0;

	opcode &= ~KIO_REGISTER_USE_REGISTERED_RING;               /* 1 */
	if (opcode >= e->reg_last)                                 /* 2 */
		return -EINVAL;
	if (fd == -1 && e->g->blind) {                             /* 3 */
		if (e->cfg.task_set_gates_blind && opcode != KIO_REGISTER_RESTRICTIONS &&
		    e->rs && e->rs->registered && e->rs->reg_registered &&
		    !bit_test(e->rs->reg_op, opcode))
			return -EACCES;
		switch (opcode) {
		case 31: /* IORING_REGISTER_SEND_MSG_RING */
			return blind_send_msg_ring(e, arg, nr);
		case KIO_REGISTER_QUERY:
			return do_query(e, arg, nr);
		case KIO_REGISTER_RESTRICTIONS:
			if (e->g->task)
				return task_restrictions(e, arg, nr);
			return -EINVAL;
		case KIO_REGISTER_BPF_FILTER:
			if (e->g->bpf)
				return task_bpf_filter(e, arg, nr);
			return -EINVAL;
		default:
			return -EINVAL;
		}
	}
	if (use_registered) {                                      /* 4 */
		/* No ring is ever registered in the emulator's tctx. */
		if (!e->tctx || (uint32_t)fd >= EMU_RINGFD_REG_MAX)
			return -EINVAL;
		return -EBADF;
	}
	ring = lookup(e, fd, &err);
	if (!ring)
		return err;
	if (ring->submitter && ring->submitter != e->task_id)      /* 5 */
		return -EEXIST;
	if (reg_gate_on(e, ring) && !bit_test(ring->r.reg_op, opcode))
		return -EACCES;
	switch (opcode) {
	case KIO_REGISTER_PROBE:
		return ring_probe(e, arg, nr);
	case KIO_REGISTER_RESTRICTIONS:
		return ring_restrictions(e, ring, arg, nr);
	case KIO_REGISTER_ENABLE_RINGS:
		if (arg || nr)
			return -EINVAL;
		return ring_enable(e, ring);
	case KIO_REGISTER_QUERY:
		if (!e->g->query)
			return 0;
		return do_query(e, arg, nr);
	case KIO_REGISTER_BPF_FILTER:
		if (!e->g->bpf)
			return 0;
		if (nr != 1)
			return -EINVAL;
		if (e->cfg.no_bpf_config)
			return -EINVAL;
		return bpf_register(e, &ring->r, arg);
	default:
		/* Other handlers (buffers, files, ...) are not modelled:
		 * having passed the gate, they succeed. */
		return 0;
	}
}

/* ------------------------------------------------------------------ */
/* seccomp (the companion filter path)                                  */

/* Run the task's seccomp filters on io_uring_setup(entries, params) in the
 * real kernel: a forked child installs a marker filter that answers
 * ERRNO(4095) for io_uring_setup, then the task's filters, and makes the
 * call.  A later filter's ERRNO/KILL/TRAP takes precedence over the marker;
 * an ALLOW (or LOG/TRACE/USER_NOTIF) leaves the marker's 4095: "allowed".
 * Returns 0 if allowed, -errno chosen by a filter, or -ENOTRECOVERABLE if the
 * task would have been killed. */
static long seccomp_verdict_setup(struct emu *e, uint32_t entries, void *params)
{
	struct sock_filter marker[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, KIO_NR_SETUP, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | 4095),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog mp = { .len = 4, .filter = marker };
	volatile long *shared;
	long rc;
	int status;
	pid_t pid;

	if (!e->nseccomp)
		return 0;
	shared = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (shared == MAP_FAILED)
		return -ENOMEM;
	shared[0] = 1;
	pid = fork();
	if (pid < 0) {
		munmap((void *)shared, 4096);
		return -ENOMEM;
	}
	if (pid == 0) {
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
		    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &mp))
			_exit(2);
		for (size_t i = 0; i < e->nseccomp; i++) {
			struct sock_fprog fp = { .len = e->seccomp[i].len,
						 .filter = e->seccomp[i].insns };
			if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &fp))
				_exit(3);
		}
		rc = syscall(KIO_NR_SETUP, entries, params);
		shared[0] = rc < 0 ? -errno : rc;
		_exit(0);
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	rc = shared[0];
	munmap((void *)shared, 4096);
	if (rc == 1) {
		if (WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS)
			return -ENOTRECOVERABLE;
		fprintf(stderr, "emulated kernel: seccomp evaluation failed (status %d)\n", status);
		abort();
	}
	if (rc == -4095)
		return 0;
	if (rc >= 0)
		return 0; /* a filter allowed and the call really ran in the child */
	return rc;
}

static long do_seccomp(struct emu *e, unsigned int op, unsigned int flags, void *args)
{
	struct sock_fprog fp;
	struct sprog *np;
	struct sock_filter *insns;
	int rc;

	if (op == SECCOMP_GET_ACTION_AVAIL) {
		long r = syscall(SYS_seccomp, op, flags, args);
		return r < 0 ? -errno : r;
	}
	if (op != SECCOMP_SET_MODE_FILTER)
		return -EINVAL;
	if (flags & ~0x3fU)
		return -EINVAL;
	if (ucopy_from(&fp, (uintptr_t)args, sizeof(fp)))
		return -EFAULT;
	if (fp.len == 0 || fp.len > BPF_MAXINSNS)
		return -EINVAL;
	if (!privileged(e))
		return -EACCES;
	insns = calloc(fp.len, sizeof(*insns));
	if (!insns)
		return -ENOMEM;
	if (ucopy_from(insns, (uintptr_t)fp.filter, (size_t)fp.len * sizeof(*insns))) {
		free(insns);
		return -EFAULT;
	}
	rc = oracle_seccomp_accepts((const struct iour_insn *)insns, fp.len);
	if (rc && rc != -EINVAL) {
		fprintf(stderr, "emulated kernel: seccomp checker oracle failed: %d\n", rc);
		abort();
	}
	if (rc) {
		free(insns);
		return rc;
	}
	np = realloc(e->seccomp, (e->nseccomp + 1) * sizeof(*np));
	if (!np) {
		free(insns);
		return -ENOMEM;
	}
	e->seccomp = np;
	e->seccomp[e->nseccomp].insns = insns;
	e->seccomp[e->nseccomp].len = fp.len;
	e->nseccomp++;
	return 0;
}

size_t emu_seccomp_count(const struct emu *e)
{
	return e->nseccomp;
}

/* ------------------------------------------------------------------ */
/* io_uring_setup / enter / close                                       */

static uint32_t roundup_pow2(uint32_t v)
{
	uint32_t r = 1;

	while (r < v)
		r <<= 1;
	return r;
}

static long do_setup(struct emu *e, uint32_t entries, void *paramsp)
{
	uint64_t up = (uintptr_t)paramsp;
	struct kio_params p;
	struct ring *ring;
	uint32_t cq;
	long rc;
	int slot;

	rc = seccomp_verdict_setup(e, entries, paramsp);
	if (rc)
		return rc;
	if (e->cfg.setup_errno)                           /* io_uring_allowed() */
		return -e->cfg.setup_errno;
	if (ucopy_from(&p, up, sizeof(p)))
		return -EFAULT;
	if (p.resv[0] || p.resv[1] || p.resv[2])
		return -EINVAL;
	if (p.flags & ~e->g->setup_mask)
		return -EINVAL;
	if (!entries)
		return -EINVAL;
	if (entries > EMU_MAX_ENTRIES) {
		if (!(p.flags & KIO_SETUP_CLAMP))
			return -EINVAL;
		entries = EMU_MAX_ENTRIES;
	}
	if ((p.flags & KIO_SETUP_SQ_AFF) && !(p.flags & KIO_SETUP_SQPOLL))
		return -EINVAL;
	if ((p.flags & (1U << 13)) && !(p.flags & KIO_SETUP_SINGLE_ISSUER))
		return -EINVAL; /* DEFER_TASKRUN needs SINGLE_ISSUER */
	entries = roundup_pow2(entries);
	if (p.flags & KIO_SETUP_CQSIZE) {
		if (!p.cq_entries)
			return -EINVAL;
		cq = p.cq_entries;
		if (cq > EMU_MAX_CQ_ENTRIES) {
			if (!(p.flags & KIO_SETUP_CLAMP))
				return -EINVAL;
			cq = EMU_MAX_CQ_ENTRIES;
		}
		cq = roundup_pow2(cq);
		if (cq < entries)
			return -EINVAL;
	} else {
		cq = 2 * entries;
	}
	if (p.flags & KIO_SETUP_ATTACH_WQ) {
		long err = 0;

		if (!lookup(e, (int)p.wq_fd, &err))
			return err == -EBADF ? -ENXIO : -EINVAL;
	}
	for (slot = 0; slot < EMU_MAX_RINGS && e->fds[slot]; slot++)
		;
	if (slot == EMU_MAX_RINGS)
		return -EMFILE;
	ring = calloc(1, sizeof(*ring));
	if (!ring)
		return -ENOMEM;
	ring->refs = 1;
	ring->setup_flags = p.flags;
	ring->disabled = p.flags & KIO_SETUP_R_DISABLED;
	if ((p.flags & KIO_SETUP_SINGLE_ISSUER) && !ring->disabled)
		ring->submitter = e->task_id;
	if (e->rs) {
		/* 3.5: the ring picks up the task's set at creation. */
		restrict_clone(&ring->r, e->rs, !e->cfg.cow_source_unmarked);
		ring->op_restricted = ring->r.op_registered;
		ring->reg_restricted = ring->r.reg_registered;
	}
	p.sq_entries = entries;
	p.cq_entries = cq;
	p.features = e->g->features;
	memset(&p.sq_off, 0, sizeof(p.sq_off));
	memset(&p.cq_off, 0, sizeof(p.cq_off));
	if (ucopy_to(up, &p, sizeof(p))) {
		ring_put(ring);
		return -EFAULT;
	}
	e->tctx = true;
	e->fds[slot] = ring;
	return EMU_FD_BASE + slot;
}

static long do_enter(struct emu *e, int fd, uint32_t flags)
{
	struct ring *ring;
	long err = 0;

	if (flags & ~e->g->enter_mask)
		return -EINVAL;
	if (flags & (1U << 4)) /* IORING_ENTER_REGISTERED_RING: none registered */
		return -EINVAL;
	ring = lookup(e, fd, &err);
	if (!ring)
		return err;
	if (ring->disabled)
		return -EBADFD;
	if (ring->submitter && ring->submitter != e->task_id)
		return -EEXIST;
	e->tctx = true;
	return 0; /* no SQ memory: nothing is consumed */
}

static long do_close(struct emu *e, int fd)
{
	if (fd >= EMU_FD_BASE) {
		if (fd >= EMU_FD_BASE + EMU_MAX_RINGS || !e->fds[fd - EMU_FD_BASE])
			return -EBADF;
		ring_put(e->fds[fd - EMU_FD_BASE]);
		e->fds[fd - EMU_FD_BASE] = NULL;
		return 0;
	}
	return close(fd) < 0 ? -errno : 0;
}

static long do_prctl(struct emu *e, int option, unsigned long a2, unsigned long a3,
		     unsigned long a4, unsigned long a5)
{
	switch (option) {
	case PR_SET_NO_NEW_PRIVS:
		if (a2 != 1 || a3 || a4 || a5)
			return -EINVAL;
		e->nnp = true;
		return 0;
	case PR_GET_NO_NEW_PRIVS:
		if (a2 || a3 || a4 || a5)
			return -EINVAL;
		return e->nnp ? 1 : 0;
	case PR_GET_SECCOMP:
		return e->nseccomp ? 2 : 0;
	default:
		return -EINVAL; /* not modelled */
	}
}

/* ------------------------------------------------------------------ */
/* logging and fault injection                                          */

static struct emu_call *log_begin(struct emu *e, uint32_t kind, int fd, uint32_t opcode,
				  uint32_t nr)
{
	struct emu_call *c;

	if (e->nlog == e->caplog) {
		size_t cap = e->caplog ? 2 * e->caplog : 64;
		struct emu_call *n = realloc(e->log, cap * sizeof(*n));

		if (!n)
			abort();
		e->log = n;
		e->caplog = cap;
	}
	c = &e->log[e->nlog++];
	memset(c, 0, sizeof(*c));
	c->seq = ++e->seq;
	c->kind = kind;
	c->fd = fd;
	c->opcode = opcode;
	c->nr_args = nr;
	return c;
}

static void log_copy(uint8_t **dst, size_t *dlen, bool *fault, uint64_t src, size_t len)
{
	if (!len)
		return;
	*dst = malloc(len);
	if (!*dst)
		abort();
	if (ucopy_from(*dst, src, len)) {
		free(*dst);
		*dst = NULL;
		if (fault)
			*fault = true;
		return;
	}
	*dlen = len;
}

static void log_register_args(struct emu_call *c, uint32_t opcode, uint64_t arg, uint32_t nr)
{
	bool dummy;

	opcode &= ~KIO_REGISTER_USE_REGISTERED_RING;
	if (!arg)
		return;
	switch (opcode) {
	case KIO_REGISTER_RESTRICTIONS:
		if (c->fd == -1) {
			struct kio_task_restriction h;

			if (ucopy_from(&h, arg, sizeof(h))) {
				c->arg_fault = true;
				return;
			}
			log_copy(&c->arg, &c->arg_len, &c->arg_fault, arg,
				 sizeof(h) + (size_t)h.nr_res * sizeof(struct kio_restriction));
		} else {
			size_t n = nr < 1024 ? nr : 1024;

			log_copy(&c->arg, &c->arg_len, &c->arg_fault, arg,
				 n * sizeof(struct kio_restriction));
		}
		break;
	case KIO_REGISTER_BPF_FILTER: {
		struct kio_bpf b;

		log_copy(&c->arg, &c->arg_len, &c->arg_fault, arg, sizeof(b));
		if (!c->arg)
			return;
		memcpy(&b, c->arg, sizeof(b));
		if (b.filter.filter_ptr && b.filter.filter_len && b.filter.filter_len <= BPF_MAXINSNS)
			log_copy(&c->prog, &c->prog_len, &dummy, b.filter.filter_ptr,
				 (size_t)b.filter.filter_len * sizeof(struct iour_insn));
		break;
	}
	case KIO_REGISTER_PROBE:
		if (nr <= 256)
			log_copy(&c->arg, &c->arg_len, &c->arg_fault, arg,
				 sizeof(struct kio_probe) + (size_t)nr * sizeof(struct kio_probe_op));
		break;
	case KIO_REGISTER_QUERY:
		log_copy(&c->arg, &c->arg_len, &c->arg_fault, arg, sizeof(struct kio_query_hdr));
		break;
	default:
		break;
	}
}

static bool fault_matches(const struct fault_rule *r, const struct emu_call *c)
{
	const struct emu_fault *f = &r->f;
	uint32_t opc;

	if (f->seq)
		return f->seq == c->seq;
	if (f->kind != EMU_CALL_ANY && f->kind != c->kind)
		return false;
	if (f->match_opcode) {
		switch (c->kind) {
		case EMU_CALL_REGISTER:
			opc = c->opcode & ~KIO_REGISTER_USE_REGISTERED_RING;
			break;
		case EMU_CALL_PRCTL:
		case EMU_CALL_SECCOMP:
			opc = c->opcode;
			break;
		default:
			return false;
		}
		if (opc != f->opcode)
			return false;
	}
	if (f->fd_class != EMU_FD_ANY) {
		if (c->kind != EMU_CALL_REGISTER && c->kind != EMU_CALL_ENTER)
			return false;
		if ((f->fd_class == EMU_FD_BLIND) != (c->fd == -1))
			return false;
	}
	return true;
}

/* Returns 0 to carry the call out, or the injected -errno. */
static int fault_check(struct emu *e, struct emu_call *c)
{
	for (int i = 0; i < EMU_MAX_FAULTS; i++) {
		struct fault_rule *r = &e->faults[i];

		if (!r->live || r->pid != getpid() || !fault_matches(r, c))
			continue;
		if (++r->seen >= (r->f.nth ? r->f.nth : 1) || r->f.seq) {
			r->live = false;
			c->injected = true;
			return -r->f.err;
		}
	}
	if (e->hook && e->hook_pid == getpid()) {
		int rc = e->hook(e->hook_arg, c);

		if (rc) {
			c->injected = true;
			return rc < 0 ? rc : -rc;
		}
	}
	return 0;
}

int emu_fault_add(struct emu *e, const struct emu_fault *f)
{
	if (!f || f->err <= 0)
		return -EINVAL;
	for (int i = 0; i < EMU_MAX_FAULTS; i++) {
		if (!e->faults[i].live) {
			e->faults[i].f = *f;
			e->faults[i].pid = getpid();
			e->faults[i].seen = 0;
			e->faults[i].live = true;
			return 0;
		}
	}
	return -ENOSPC;
}

void emu_fault_clear(struct emu *e)
{
	memset(e->faults, 0, sizeof(e->faults));
}

size_t emu_faults_pending(const struct emu *e)
{
	size_t n = 0;

	for (int i = 0; i < EMU_MAX_FAULTS; i++)
		n += e->faults[i].live;
	return n;
}

void emu_set_hook(struct emu *e, emu_hook_fn fn, void *arg)
{
	e->hook = fn;
	e->hook_arg = arg;
	e->hook_pid = getpid();
}

/* ------------------------------------------------------------------ */
/* the seam entries                                                     */

static long op_setup(void *ctx, uint32_t entries, void *params)
{
	struct emu *e = ctx;
	struct emu_call *c = log_begin(e, EMU_CALL_SETUP, -1, entries, 0);
	size_t i = e->nlog - 1;
	long rc;

	log_copy(&c->arg, &c->arg_len, &c->arg_fault, (uintptr_t)params, sizeof(struct kio_params));
	rc = fault_check(e, c);
	if (!rc)
		rc = do_setup(e, entries, params);
	e->log[i].result = rc;
	return rc;
}

static long op_enter(void *ctx, int fd, uint32_t to_submit, uint32_t min_complete,
		     uint32_t flags, const void *arg, size_t argsz)
{
	struct emu *e = ctx;
	struct emu_call *c = log_begin(e, EMU_CALL_ENTER, fd, 0, to_submit);
	long rc;

	(void)arg;
	c->a[0] = min_complete;
	c->a[1] = flags;
	c->a[2] = argsz;
	rc = fault_check(e, c);
	if (!rc)
		rc = do_enter(e, fd, flags);
	c->result = rc;
	return rc;
}

static long op_register(void *ctx, int fd, uint32_t opcode, void *arg, uint32_t nr)
{
	struct emu *e = ctx;
	struct emu_call *c = log_begin(e, EMU_CALL_REGISTER, fd, opcode, nr);
	size_t i = e->nlog - 1;
	long rc;

	log_register_args(c, opcode, (uintptr_t)arg, nr);
	rc = fault_check(e, c);
	if (!rc)
		rc = do_register(e, fd, opcode, arg, nr);
	e->log[i].result = rc;
	return rc;
}

static long op_prctl(void *ctx, int option, unsigned long a2, unsigned long a3,
		     unsigned long a4, unsigned long a5)
{
	struct emu *e = ctx;
	struct emu_call *c = log_begin(e, EMU_CALL_PRCTL, -1, (uint32_t)option, 0);
	long rc;

	c->a[0] = a2;
	c->a[1] = a3;
	c->a[2] = a4;
	c->a[3] = a5;
	rc = fault_check(e, c);
	if (!rc)
		rc = do_prctl(e, option, a2, a3, a4, a5);
	c->result = rc;
	return rc;
}

static long op_seccomp(void *ctx, unsigned int op, unsigned int flags, void *args)
{
	struct emu *e = ctx;
	struct emu_call *c = log_begin(e, EMU_CALL_SECCOMP, -1, op, flags);
	size_t i = e->nlog - 1;
	long rc;

	if (op == SECCOMP_SET_MODE_FILTER && args) {
		struct sock_fprog fp;
		bool dummy;

		if (!ucopy_from(&fp, (uintptr_t)args, sizeof(fp)) && fp.len <= BPF_MAXINSNS)
			log_copy(&c->prog, &c->prog_len, &dummy, (uintptr_t)fp.filter,
				 (size_t)fp.len * sizeof(struct sock_filter));
	}
	rc = fault_check(e, c);
	if (!rc)
		rc = do_seccomp(e, op, flags, args);
	e->log[i].result = rc;
	return rc;
}

static long op_close(void *ctx, int fd)
{
	struct emu *e = ctx;
	struct emu_call *c = log_begin(e, EMU_CALL_CLOSE, fd, 0, 0);
	long rc;

	rc = fault_check(e, c);
	if (!rc)
		rc = do_close(e, fd);
	c->result = rc;
	return rc;
}

/* ------------------------------------------------------------------ */
/* public API                                                           */

static struct emu *emu_alloc(const struct emu_config *cfg)
{
	struct emu *e = calloc(1, sizeof(*e));

	if (!e)
		return NULL;
	e->cfg = *cfg;
	e->g = &gens[cfg->gen];
	e->op_last = cfg->op_last ? cfg->op_last : e->g->op_last;
	e->reg_last = cfg->reg_last ? cfg->reg_last : e->g->reg_last;
	if (e->op_last > EMU_NOPS)
		e->op_last = EMU_NOPS;
	if (e->reg_last > EMU_NOPS)
		e->reg_last = EMU_NOPS;
	e->task_id = next_task_id++;
	e->ops.io_uring_setup = op_setup;
	e->ops.io_uring_enter = op_enter;
	e->ops.io_uring_register = op_register;
	e->ops.prctl = op_prctl;
	e->ops.seccomp = op_seccomp;
	e->ops.close = op_close;
	e->ops.ctx = e;
	return e;
}

int emu_new(const struct emu_config *cfg, struct emu **out)
{
	struct emu_config def = { .gen = EMU_GEN_7_0 };
	struct emu *e;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (!cfg)
		cfg = &def;
	if ((unsigned)cfg->gen >= IOUR_ARRAY_SIZE(gens) || cfg->setup_errno < 0)
		return -EINVAL;
	e = emu_alloc(cfg);
	if (!e)
		return -ENOMEM;
	e->nnp = cfg->no_new_privs;
	e->cap = cfg->cap_sys_admin;
	*out = e;
	return 0;
}

static void free_log_entries(struct emu *e)
{
	for (size_t i = 0; i < e->nlog; i++) {
		free(e->log[i].arg);
		free(e->log[i].prog);
	}
	e->nlog = 0;
}

void emu_free(struct emu *e)
{
	if (!e)
		return;
	if (iour__sys() == &e->ops)
		iour__sys_set(NULL);
	for (int i = 0; i < EMU_MAX_RINGS; i++)
		ring_put(e->fds[i]);
	if (e->rs) {
		restrict_release(e->rs);
		free(e->rs);
	}
	for (size_t i = 0; i < e->nseccomp; i++)
		free(e->seccomp[i].insns);
	free(e->seccomp);
	free_log_entries(e);
	free(e->log);
	free(e);
}

const struct iour_sys_ops *emu_ops(struct emu *e)
{
	return &e->ops;
}

const struct iour_sys_ops *emu_install(struct emu *e)
{
	return iour__sys_set(&e->ops);
}

void emu_uninstall(void)
{
	iour__sys_set(NULL);
}

void emu_set_nnp(struct emu *e, bool on)
{
	e->nnp = on;
}

void emu_set_cap(struct emu *e, bool on)
{
	e->cap = on;
}

bool emu_nnp(const struct emu *e)
{
	return e->nnp;
}

bool emu_has_tctx(const struct emu *e)
{
	return e->tctx;
}

struct emu *emu_fork(struct emu *e)
{
	struct emu *c = emu_alloc(&e->cfg);

	if (!c)
		return NULL;
	c->nnp = e->nnp;
	c->cap = e->cap;
	if (e->rs) {
		c->rs = calloc(1, sizeof(*c->rs));
		if (!c->rs) {
			emu_free(c);
			return NULL;
		}
		restrict_clone(c->rs, e->rs, !e->cfg.cow_source_unmarked);
	}
	if (e->nseccomp) {
		c->seccomp = calloc(e->nseccomp, sizeof(*c->seccomp));
		if (!c->seccomp) {
			emu_free(c);
			return NULL;
		}
		for (size_t i = 0; i < e->nseccomp; i++) {
			size_t sz = (size_t)e->seccomp[i].len * sizeof(struct sock_filter);

			c->seccomp[i].insns = malloc(sz);
			if (!c->seccomp[i].insns) {
				emu_free(c);
				return NULL;
			}
			memcpy(c->seccomp[i].insns, e->seccomp[i].insns, sz);
			c->seccomp[i].len = e->seccomp[i].len;
			c->nseccomp++;
		}
	}
	for (int i = 0; i < EMU_MAX_RINGS; i++) {
		if (e->fds[i]) {
			e->fds[i]->refs++;
			c->fds[i] = e->fds[i];
		}
	}
	return c;
}

bool emu_exec(struct emu *e)
{
	bool drop = is_7x(e) && e->tctx && e->rs && !e->cfg.exec_keeps_restrictions;

	for (int i = 0; i < EMU_MAX_RINGS; i++) {
		ring_put(e->fds[i]);
		e->fds[i] = NULL;
	}
	if (drop) {
		restrict_release(e->rs);
		free(e->rs);
		e->rs = NULL;
	}
	e->tctx = false;
	return drop;
}

static void fill_state(const struct restrict_set *r, struct emu_state *s)
{
	s->registered = r->registered;
	s->op_registered = r->op_registered;
	s->reg_registered = r->reg_registered;
	memcpy(s->sqe_ops, r->sqe_op, sizeof(s->sqe_ops));
	memcpy(s->reg_ops, r->reg_op, sizeof(s->reg_ops));
	s->flags_allowed = r->flags_allowed;
	s->flags_required = r->flags_required;
	if (!r->bpf)
		return;
	for (int i = 0; i < EMU_NOPS; i++) {
		for (const struct fnode *n = r->bpf->head[i]; n; n = n->next) {
			if (n->dummy) {
				s->dummy[i] = true;
				break;
			}
			s->nr_filters[i]++;
			s->total_filters++;
		}
	}
}

void emu_task_state(const struct emu *e, struct emu_state *out)
{
	memset(out, 0, sizeof(*out));
	if (!e->rs)
		return;
	out->exists = true;
	fill_state(e->rs, out);
}

int emu_ring_state(const struct emu *e, int fd, struct emu_state *out)
{
	const struct ring *r;

	memset(out, 0, sizeof(*out));
	if (fd < EMU_FD_BASE || fd >= EMU_FD_BASE + EMU_MAX_RINGS || !e->fds[fd - EMU_FD_BASE])
		return -EBADF;
	r = e->fds[fd - EMU_FD_BASE];
	out->exists = true;
	out->disabled = r->disabled;
	out->sqe_gate = sqe_gate_on(e, r);
	out->reg_gate = reg_gate_on(e, r);
	fill_state(&r->r, out);
	return 0;
}

int emu_submit_ex(struct emu *e, int fd, const uint8_t in[40], struct emu_verdict *v)
{
	struct emu_verdict dummy;
	uint8_t ctx[40];
	struct ring *ring;
	uint8_t op, fl, k;
	long err = 0;
	uint32_t idx = 0;

	if (!v)
		v = &dummy;
	memset(v, 0, sizeof(*v));
	v->stage = EMU_STAGE_RING;
	ring = lookup(e, fd, &err);
	if (!ring)
		return v->res = (int)err;
	if (ring->disabled)
		return v->res = -EBADFD;
	if (ring->submitter && ring->submitter != e->task_id)
		return v->res = -EEXIST;
	e->tctx = true;
	memcpy(ctx, in, 40);
	op = ctx[8];
	fl = ctx[9];
	v->stage = EMU_STAGE_INVALID;
	if (op >= e->op_last || (fl & ~KIO_SQE_VALID_FLAGS))
		return v->res = -EINVAL;
	/* The kernel fills the context itself: pdu_size = K, pad zero, the
	 * payload zero beyond K (4.1, 4.3). */
	k = emu_pdu_size(e, op);
	ctx[10] = k;
	memset(ctx + 11, 0, 5);
	memset(ctx + 16 + k, 0, 24 - k);
	v->stage = EMU_STAGE_CLASSIC;
	if (sqe_gate_on(e, ring)) {                                /* 2.4 */
		uint8_t req = ring->r.flags_required, allowed = ring->r.flags_allowed;

		if (!bit_test(ring->r.sqe_op, op) || (fl & req) != req ||
		    (fl & ~(allowed | req)))
			return v->res = -EACCES;
	}
	if (ring->r.bpf) {                                         /* 4.6 */
		for (struct fnode *n = ring->r.bpf->head[op]; n; n = n->next, idx++) {
			int rc;

			v->deny_index = idx;
			if (n->dummy) {
				v->stage = EMU_STAGE_DUMMY;
				return v->res = -EACCES;
			}
			rc = run_in_kernel(n, ctx);
			v->filters_run++;
			if (rc < 0) {
				fprintf(stderr, "emulated kernel: oracle failure %d\n", rc);
				abort();
			}
			if (rc == 0) {
				v->stage = EMU_STAGE_FILTER;
				return v->res = -EACCES;
			}
		}
	}
	v->deny_index = 0;
	v->stage = EMU_STAGE_ALLOWED;
	return v->res = 0;
}

int emu_submit(struct emu *e, int fd, const uint8_t ctx[40])
{
	return emu_submit_ex(e, fd, ctx, NULL);
}

/* ------------------------------------------------------------------ */
/* context builders                                                     */

void emu_ctx(uint8_t ctx[40], uint32_t opcode, uint8_t sqe_flags, uint64_t user_data)
{
	memset(ctx, 0, 40);
	memcpy(ctx, &user_data, 8);
	ctx[8] = (uint8_t)opcode;
	ctx[9] = sqe_flags;
}

static void put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

static void put64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

void emu_ctx_socket(uint8_t ctx[40], uint32_t family, uint32_t type, uint32_t protocol)
{
	emu_ctx(ctx, IOUR_OP_SOCKET, 0, 0);
	put32(ctx + 16, family);
	put32(ctx + 20, type);
	put32(ctx + 24, protocol);
}

void emu_ctx_open(uint8_t ctx[40], uint32_t opcode, uint64_t flags, uint64_t mode,
		  uint64_t resolve)
{
	emu_ctx(ctx, opcode, 0, 0);
	put64(ctx + 16, flags);
	put64(ctx + 24, mode);
	put64(ctx + 32, resolve);
}

void emu_ctx_connect(uint8_t ctx[40], const void *addr, uint32_t addr_len)
{
	const uint8_t *a = addr;
	uint16_t fam;

	emu_ctx(ctx, IOUR_OP_CONNECT, 0, 0);
	if (!addr || addr_len < sizeof(sa_family_t))
		return;
	memcpy(&fam, a, sizeof(fam));
	put32(ctx + 16, fam);
	if (fam == AF_INET && addr_len >= sizeof(struct sockaddr_in)) {
		const struct sockaddr_in *s = addr;

		memcpy(ctx + 20, &s->sin_port, 2);
		memcpy(ctx + 24, &s->sin_addr, 4);
	} else if (fam == AF_INET6 && addr_len >= sizeof(struct sockaddr_in6)) {
		const struct sockaddr_in6 *s = addr;

		memcpy(ctx + 20, &s->sin6_port, 2);
		memcpy(ctx + 24, &s->sin6_addr, 16);
	}
}

/* ------------------------------------------------------------------ */
/* log access                                                           */

size_t emu_log_len(const struct emu *e)
{
	return e->nlog;
}

const struct emu_call *emu_log_at(const struct emu *e, size_t i)
{
	return i < e->nlog ? &e->log[i] : NULL;
}

void emu_log_reset(struct emu *e)
{
	free_log_entries(e);
}

uint64_t emu_calls(const struct emu *e)
{
	return e->seq;
}

void emu_log_dump(const struct emu *e, FILE *f)
{
	static const char *const kinds[] = { "any", "setup", "enter", "register",
					     "prctl", "seccomp", "close" };

	for (size_t i = 0; i < e->nlog; i++) {
		const struct emu_call *c = &e->log[i];

		fprintf(f, "emulated #%llu %s fd=%d op=%u nr=%u arg=%zuB prog=%zuB -> %ld%s\n",
			(unsigned long long)c->seq, kinds[c->kind], c->fd, c->opcode,
			c->nr_args, c->arg_len, c->prog_len, c->result,
			c->injected ? " (injected)" : "");
	}
}
