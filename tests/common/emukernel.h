/* SPDX-License-Identifier: MIT */
/*
 * An emulated io_uring kernel behind the library's syscall seam (lib/base/sys.h).
 *
 * The development machine runs Linux 6.18, which has neither task-level
 * restrictions nor cBPF filters.  This emulator implements the io_uring
 * restriction rules of Linux 6.1, 6.18, 7.0 and 7.2 exactly as
 * doc/kernel.md specifies them (register dispatch order, per-ring
 * restrictions, the task path, BPF_FILTER registration with pdu-size
 * negotiation, stacking, DENY_REST, COW, fork inheritance, the NNP gate) so
 * that the library's planner and executor can be tested on paths the real
 * kernel here cannot run.  Tests that use it say "emulated".
 *
 * Emulated rings are bookkeeping only: io_uring_setup returns a fake fd from
 * EMU_FD_BASE upwards and nothing is mapped.  Requests are "submitted" with
 * emu_submit(), which answers the way the emulated kernel would: the classic
 * SQE gate first, then every registered cBPF filter in kernel order, each
 * program executed by the real kernel's classic-BPF engine through the
 * socket-filter oracle (tests/common/kernel_oracle.h), never by a user-space
 * interpreter.  Program acceptance uses the real kernel's generic checker
 * (SO_ATTACH_FILTER) plus io_uring's own instruction list and load bound.
 *
 * One `struct emu` is one emulated task (its restriction object, its
 * no_new_privs flag, its seccomp filters, its fd table of rings).  Rings are
 * shared, reference-counted objects, so a task made by emu_fork() sees the
 * rings of its parent.  Every io_uring, prctl, seccomp and close call on
 * the seam is logged (with a copy of the argument bytes) and can be made to
 * fail by fault-injection rules; the seam's mmap, munmap, fork,
 * memfd_create and execve entries are left NULL, so they reach the real
 * kernel (tests/unit/test_sys_faults.c injects faults there).
 *
 * Not thread-safe; one emulator per test process is the intended use.
 */
#ifndef IOUR_TEST_EMUKERNEL_H
#define IOUR_TEST_EMUKERNEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "iouring_restrict/cbpf.h"
#include "base/sys.h"

/* Kernel generations the emulator knows. */
enum emu_gen {
	EMU_GEN_6_1 = 0,  /* no blind path (fd -1 -> -EBADF), no QUERY; 49/26 */
	EMU_GEN_6_18 = 1, /* blind path, QUERY, no task restrictions; 63/36 */
	EMU_GEN_7_0 = 2,  /* task restrictions, cBPF filters (SOCKET, OPENAT, OPENAT2) */
	EMU_GEN_7_2 = 3,  /* 7.0 plus the CONNECT payload (pdu 24) */
};

/* Fake ring fds start here (beyond any real fd number). */
#define EMU_FD_BASE (1 << 24)
/* Rings one emulated task can hold open at once. */
#define EMU_MAX_RINGS 1024

struct emu_config {
	enum emu_gen gen;
	/* Override IORING_OP_LAST / IORING_REGISTER_LAST (0 = the generation's). */
	uint32_t op_last;
	uint32_t reg_last;
	/* The task has CAP_SYS_ADMIN in its own user namespace. */
	bool cap_sys_admin;
	/* The task starts with no_new_privs set. */
	bool no_new_privs;
	/* CONFIG_IO_URING_BPF=n: BPF_FILTER answers -EINVAL (7.x only). */
	bool no_bpf_config;
	/* CONFIG_NET=n: SOCKET and CONNECT have payload size 0. */
	bool no_net;
	/* io_uring_allowed() verdict for io_uring_setup: 0, or a positive
	 * errno (EPERM for kernel.io_uring_disabled=2, ...). */
	int setup_errno;
	/* Exec drops the task's restrictions if the task has an io_uring task
	 * context (doc/kernel.md 3.4, the exec hazard).  Default (false here)
	 * means: on for 7.x; set exec_keeps_restrictions to model a fix. */
	bool exec_keeps_restrictions;
	/* Model the first merged 7.0 text, where cloning did not COW-mark the
	 * source table: a parent's later task filter leaks into children and
	 * rings that already exist (doc/kernel.md 3.5 and 7.3). */
	bool cow_source_unmarked;
	/* Model Debian's 7.3.4 (doc/kernel.md 3.3): a task set with a
	 * register gate also gates the task's own fd -1 registrations
	 * (BPF_FILTER, QUERY, SEND_MSG_RING) by its register list. */
	bool task_set_gates_blind;
};

/* Kinds of seam calls (struct emu_call.kind, struct emu_fault.kind). */
enum emu_call_kind {
	EMU_CALL_ANY = 0,
	EMU_CALL_SETUP = 1,
	EMU_CALL_ENTER = 2,
	EMU_CALL_REGISTER = 3,
	EMU_CALL_PRCTL = 4,
	EMU_CALL_SECCOMP = 5,
	EMU_CALL_CLOSE = 6,
};

/* One logged seam call. */
struct emu_call {
	uint64_t seq;      /* 1-based position among this task's seam calls */
	uint32_t kind;     /* enum emu_call_kind */
	int fd;            /* register/enter/close fd; -1 otherwise */
	uint32_t opcode;   /* register: raw opcode (bit 31 kept); prctl: option;
			    * seccomp: op; setup: entries */
	uint32_t nr_args;  /* register: nr_args; seccomp: flags; enter: to_submit */
	uint64_t a[4];     /* prctl a2..a5; enter min_complete, flags, argsz */
	uint8_t *arg;      /* copy of the argument bytes as passed (NULL if none) */
	size_t arg_len;
	bool arg_fault;    /* the argument could not be read */
	uint8_t *prog;     /* BPF_FILTER / seccomp filter: the instructions */
	size_t prog_len;   /* bytes (8 per instruction) */
	long result;       /* what the call returned */
	bool injected;     /* the result came from a fault rule or the hook */
};

/* A fault-injection rule: the call it matches fails with -err and has no
 * effect (it is still logged, with injected = true).  Rules are one-shot. */
enum emu_fd_class {
	EMU_FD_ANY = 0,
	EMU_FD_BLIND = 1, /* fd == -1 */
	EMU_FD_RING = 2,  /* any other fd */
};
struct emu_fault {
	uint64_t seq;   /* if non-zero: fail exactly the seq-th seam call (1-based),
			 * ignoring the other match fields */
	uint32_t kind;  /* enum emu_call_kind, EMU_CALL_ANY matches all */
	bool match_opcode; /* compare opcode (register/prctl/seccomp calls only) */
	uint32_t opcode;   /* register opcode (bit 31 ignored), prctl option or
			    * seccomp op */
	uint32_t fd_class; /* enum emu_fd_class (register/enter only) */
	uint32_t nth;   /* fail the nth matching call (0 or 1 = the first) */
	int err;        /* positive errno; the call returns -err */
};

/* Hook called before each seam call is carried out: return 0 to proceed or
 * a negative errno to fail the call without effect. */
typedef int (*emu_hook_fn)(void *arg, const struct emu_call *call);

/* Why emu_submit() decided what it did. */
enum emu_stage {
	EMU_STAGE_ALLOWED = 0,
	EMU_STAGE_RING = 1,    /* not a ring / disabled ring / other task (errno) */
	EMU_STAGE_INVALID = 2, /* opcode >= OP_LAST or invalid SQE flags: -EINVAL */
	EMU_STAGE_CLASSIC = 3, /* the classic SQE gate: -EACCES */
	EMU_STAGE_FILTER = 4,  /* a cBPF program returned 0: -EACCES */
	EMU_STAGE_DUMMY = 5,   /* the DENY_REST dummy: -EACCES */
};
struct emu_verdict {
	int res;            /* 0 allowed, else the CQE's negative errno */
	uint32_t stage;     /* enum emu_stage */
	uint32_t filters_run; /* programs executed in the kernel's engine */
	uint32_t deny_index;  /* position in the opcode's list of the denier */
};

/* Restriction state of a task or ring, for assertions. */
struct emu_state {
	bool exists;        /* task: has a restriction object; ring: fd open */
	bool disabled;      /* ring: still IORING_SETUP_R_DISABLED */
	bool registered;    /* classic set registered (or inherited) */
	bool op_registered; /* 7.0 split: SQE side given */
	bool reg_registered;/* 7.0 split: register side given */
	bool sqe_gate;      /* ring: the SQE gate is on now */
	bool reg_gate;      /* ring: the register gate is on now */
	uint64_t sqe_ops[4];
	uint64_t reg_ops[4];
	uint8_t flags_allowed;
	uint8_t flags_required;
	uint32_t nr_filters[256]; /* real programs per opcode */
	bool dummy[256];          /* the opcode's list ends in the DENY_REST dummy */
	uint32_t total_filters;
};

struct emu;

/* Create a task of an emulated kernel (cfg NULL: 7.0 defaults).  0 or -errno. */
int emu_new(const struct emu_config *cfg, struct emu **out);
void emu_free(struct emu *e);
/* The seam table for this task (ctx = e). */
const struct iour_sys_ops *emu_ops(struct emu *e);
/* Install this task on the library's seam; returns the previous table. */
const struct iour_sys_ops *emu_install(struct emu *e);
/* Restore the real kernel on the seam. */
void emu_uninstall(void);

/* The generation's limits and payload size K for an opcode. */
uint32_t emu_op_last(const struct emu *e);
uint32_t emu_reg_last(const struct emu *e);
uint8_t emu_pdu_size(const struct emu *e, uint32_t opcode);
const char *emu_gen_name(enum emu_gen gen);

/* Task state. */
void emu_set_nnp(struct emu *e, bool on);
void emu_set_cap(struct emu *e, bool on);
bool emu_nnp(const struct emu *e);
/* fork(): a child task with a copy of the restriction object (filters shared
 * copy-on-write), no_new_privs, CAP_SYS_ADMIN, seccomp filters and fd table
 * (rings shared).  Empty log, no fault rules.  NULL on allocation failure. */
struct emu *emu_fork(struct emu *e);
/* execve(): ring fds are closed (O_CLOEXEC); the restriction object is
 * dropped when the hazard applies (see emu_config.exec_keeps_restrictions).
 * Returns true if the restrictions were dropped. */
bool emu_exec(struct emu *e);
/* Does the task have an io_uring task context (created or used a ring)? */
bool emu_has_tctx(const struct emu *e);

/* State snapshots: 0, or -EBADF if fd is not an emulated ring of e. */
void emu_task_state(const struct emu *e, struct emu_state *out);
int emu_ring_state(const struct emu *e, int fd, struct emu_state *out);

/* "Submit this request": ctx is the 40-byte filter context describing the
 * request (opcode at 8, sqe_flags at 9, payload from 16).  The emulator
 * normalises it the way the generation's kernel would fill it (pdu_size byte
 * = K, pad zeroed, payload beyond K zeroed) and answers: 0 allowed, or the
 * CQE error.  emu_submit_ex also says why. */
int emu_submit(struct emu *e, int ring_fd, const uint8_t ctx[40]);
int emu_submit_ex(struct emu *e, int ring_fd, const uint8_t ctx[40],
		  struct emu_verdict *v);
/* Programs executed in the kernel's engine so far (all tasks). */
uint64_t emu_programs_run(void);

/* Context builders (test helpers; little-endian hosts assumed by callers
 * that hard-code offsets, as the kernel's own tests do). */
void emu_ctx(uint8_t ctx[40], uint32_t opcode, uint8_t sqe_flags, uint64_t user_data);
void emu_ctx_socket(uint8_t ctx[40], uint32_t family, uint32_t type, uint32_t protocol);
void emu_ctx_open(uint8_t ctx[40], uint32_t opcode, uint64_t flags, uint64_t mode,
		  uint64_t resolve);
/* CONNECT: applies the kernel's addr_len filling rules (doc/kernel.md 4.3). */
void emu_ctx_connect(uint8_t ctx[40], const void *addr, uint32_t addr_len);

/* Seccomp filters installed through the seam (count, and whether emulated
 * io_uring_setup consults them: it does, by running them in the real kernel
 * in a forked child). */
size_t emu_seccomp_count(const struct emu *e);

/* Fault injection.  Rules and the hook act only in the process that added
 * them: a real fork() (such as the library's probe child, which the
 * executor also runs to compare the plan with the emulated kernel) carries
 * the emulated kernel along, but not the faults. */
int emu_fault_add(struct emu *e, const struct emu_fault *f);
void emu_fault_clear(struct emu *e);
size_t emu_faults_pending(const struct emu *e);
void emu_set_hook(struct emu *e, emu_hook_fn fn, void *arg);

/* Call log. */
size_t emu_log_len(const struct emu *e);
const struct emu_call *emu_log_at(const struct emu *e, size_t i);
void emu_log_reset(struct emu *e);
void emu_log_dump(const struct emu *e, FILE *f);
uint64_t emu_calls(const struct emu *e); /* seam calls so far (= last seq) */

#endif /* IOUR_TEST_EMUKERNEL_H */
