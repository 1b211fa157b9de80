/* SPDX-License-Identifier: MIT */
/*
 * The kernel's io_uring interface as libiouring-restrict uses it.
 *
 * The system headers on the build machine may be years older than the
 * kernel the library runs on (Debian 12 ships Linux 6.1 UAPI headers), so the
 * library defines every constant and structure it needs itself, under its
 * own names (prefix `kio_` / `KIO_`), and pins sizes and offsets with static
 * assertions.  Values follow the kernel UAPI of Linux 7.2; see
 * doc/kernel.md (section 6 for the per-version history).
 * Nothing here is installed or part of the public API.
 */
#ifndef IOUR_LIB_UAPI_H
#define IOUR_LIB_UAPI_H

#include <stddef.h>
#include <stdint.h>

#include "iouring_restrict/names.h"

/*
 * The numbers of this header that the kernel facts also hold
 * (lib/base/kernel_facts.def: syscall numbers, setup flags, register
 * opcodes, the opcode and flag limits) are checked against them at the end
 * of this header; register opcodes and limits are the public enums'
 * (include/iouring_restrict/names.h), themselves checked against the
 * table in lib/base/names.c.
 */

/* Syscall numbers: identical on x86-64, arm64 and the generic table. */
#define KIO_NR_SETUP 425
#define KIO_NR_ENTER 426
#define KIO_NR_REGISTER 427

/* struct seccomp_data: the offsets the library's seccomp filters load
 * (lib/enforce/companion.c asserts them against the kernel header). */
#define KIO_SD_NR 0U
#define KIO_SD_ARCH 4U
#define KIO_SD_ARG0 16U
#define KIO_SD_ARG1 24U
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define KIO_SD_LO 4U /* the low word of an argument */
#else
#define KIO_SD_LO 0U
#endif

/* io_uring_setup flags. */
#define KIO_SETUP_IOPOLL (1U << 0)
#define KIO_SETUP_SQPOLL (1U << 1)
#define KIO_SETUP_SQ_AFF (1U << 2)
#define KIO_SETUP_CQSIZE (1U << 3)
#define KIO_SETUP_CLAMP (1U << 4)
#define KIO_SETUP_ATTACH_WQ (1U << 5)
#define KIO_SETUP_R_DISABLED (1U << 6)
#define KIO_SETUP_SUBMIT_ALL (1U << 7)
#define KIO_SETUP_COOP_TASKRUN (1U << 8)
#define KIO_SETUP_TASKRUN_FLAG (1U << 9)
#define KIO_SETUP_SQE128 (1U << 10)
#define KIO_SETUP_CQE32 (1U << 11)
#define KIO_SETUP_SINGLE_ISSUER (1U << 12)
#define KIO_SETUP_DEFER_TASKRUN (1U << 13)
#define KIO_SETUP_NO_MMAP (1U << 14)
#define KIO_SETUP_REGISTERED_FD_ONLY (1U << 15)
#define KIO_SETUP_NO_SQARRAY (1U << 16)
#define KIO_SETUP_HYBRID_IOPOLL (1U << 17)
#define KIO_SETUP_CQE_MIXED (1U << 18)
#define KIO_SETUP_SQE_MIXED (1U << 19)
#define KIO_SETUP_SQ_REWIND (1U << 20)

/* io_uring_enter flags. */
#define KIO_ENTER_GETEVENTS (1U << 0)

/* Register opcodes the library itself issues: the public enum's
 * (enum iour_register_op). */
#define KIO_REGISTER_PROBE IOUR_REGISTER_PROBE
#define KIO_REGISTER_RESTRICTIONS IOUR_REGISTER_RESTRICTIONS
#define KIO_REGISTER_ENABLE_RINGS IOUR_REGISTER_ENABLE_RINGS
#define KIO_REGISTER_QUERY IOUR_REGISTER_QUERY
#define KIO_REGISTER_BPF_FILTER IOUR_REGISTER_BPF_FILTER
/* IORING_REGISTER_LAST of the newest kernel the library knows */
#define KIO_REGISTER_LAST_NEWEST IOUR_REGISTER__COUNT
#define KIO_REGISTER_USE_REGISTERED_RING (1U << 31)

/* Request opcodes: enum iour_op (include/iouring_restrict/names.h).
 * IORING_OP_LAST of the newest kernel the library knows: */
#define KIO_OP_LAST_NEWEST IOUR_OP__COUNT

/* SQE flags: enum iour_sqe_flag; every flag the newest kernel knows. */
#define KIO_SQE_VALID_FLAGS ((uint32_t)IOUR_SQE__VALID)

/* enum io_uring_register_restriction_op */
#define KIO_RESTRICTION_REGISTER_OP 0
#define KIO_RESTRICTION_SQE_OP 1
#define KIO_RESTRICTION_SQE_FLAGS_ALLOWED 2
#define KIO_RESTRICTION_SQE_FLAGS_REQUIRED 3
#define KIO_RESTRICTION_LAST 4

struct kio_restriction {
	uint16_t opcode;
	union {
		uint8_t register_op;
		uint8_t sqe_op;
		uint8_t sqe_flags;
	};
	uint8_t resv;
	uint32_t resv2[3];
};
_Static_assert(sizeof(struct kio_restriction) == 16, "io_uring_restriction size");
_Static_assert(_Alignof(struct kio_restriction) == 4, "io_uring_restriction align");
_Static_assert(offsetof(struct kio_restriction, opcode) == 0, "restriction.opcode");
_Static_assert(offsetof(struct kio_restriction, sqe_op) == 2, "restriction.sqe_op");
_Static_assert(offsetof(struct kio_restriction, resv) == 3, "restriction.resv");
_Static_assert(offsetof(struct kio_restriction, resv2) == 4, "restriction.resv2");

/* Header of IORING_REGISTER_RESTRICTIONS on fd -1 (task level, 7.0+). */
struct kio_task_restriction {
	uint16_t flags;
	uint16_t nr_res;
	uint32_t resv[3];
	struct kio_restriction restrictions[];
};
_Static_assert(sizeof(struct kio_task_restriction) == 16, "task_restriction size");
_Static_assert(offsetof(struct kio_task_restriction, nr_res) == 2, "task.nr_res");
_Static_assert(offsetof(struct kio_task_restriction, resv) == 4, "task.resv");
_Static_assert(offsetof(struct kio_task_restriction, restrictions) == 16, "task.restrictions");

/* <linux/io_uring/bpf_filter.h> */
#define KIO_BPF_CMD_FILTER 1
#define KIO_BPF_FILTER_DENY_REST 1U
#define KIO_BPF_FILTER_SZ_STRICT 2U

struct kio_bpf_filter {
	uint32_t opcode;
	uint32_t flags;
	uint32_t filter_len;
	uint8_t pdu_size;
	uint8_t resv[3];
	uint64_t filter_ptr;
	uint64_t resv2[5];
};
_Static_assert(sizeof(struct kio_bpf_filter) == 64, "io_uring_bpf_filter size");
_Static_assert(_Alignof(struct kio_bpf_filter) == 8, "io_uring_bpf_filter align");
_Static_assert(offsetof(struct kio_bpf_filter, flags) == 4, "filter.flags");
_Static_assert(offsetof(struct kio_bpf_filter, filter_len) == 8, "filter.filter_len");
_Static_assert(offsetof(struct kio_bpf_filter, pdu_size) == 12, "filter.pdu_size");
_Static_assert(offsetof(struct kio_bpf_filter, resv) == 13, "filter.resv");
_Static_assert(offsetof(struct kio_bpf_filter, filter_ptr) == 16, "filter.filter_ptr");
_Static_assert(offsetof(struct kio_bpf_filter, resv2) == 24, "filter.resv2");

struct kio_bpf {
	uint16_t cmd_type;
	uint16_t cmd_flags;
	uint32_t resv;
	union {
		struct kio_bpf_filter filter;
	};
};
_Static_assert(sizeof(struct kio_bpf) == 72, "io_uring_bpf size");
_Static_assert(_Alignof(struct kio_bpf) == 8, "io_uring_bpf align");
_Static_assert(offsetof(struct kio_bpf, cmd_flags) == 2, "bpf.cmd_flags");
_Static_assert(offsetof(struct kio_bpf, resv) == 4, "bpf.resv");
_Static_assert(offsetof(struct kio_bpf, filter) == 8, "bpf.filter");

/* The filter context (struct io_uring_bpf_ctx), 40 bytes on 7.0-7.2. */
struct kio_bpf_ctx {
	uint64_t user_data;
	uint8_t opcode;
	uint8_t sqe_flags;
	uint8_t pdu_size;
	uint8_t pad[5];
	union {
		struct {
			uint32_t family;
			uint32_t type;
			uint32_t protocol;
		} socket;
		struct {
			uint64_t flags;
			uint64_t mode;
			uint64_t resolve;
		} open;
		struct {
			uint32_t family;
			uint16_t port; /* network order */
			uint8_t pad[2];
			union {
				uint32_t v4_addr; /* network order */
				uint8_t v6_addr[16];
			};
		} connect;
	};
};
_Static_assert(sizeof(struct kio_bpf_ctx) == 40, "io_uring_bpf_ctx size");
_Static_assert(offsetof(struct kio_bpf_ctx, opcode) == 8, "ctx.opcode");
_Static_assert(offsetof(struct kio_bpf_ctx, sqe_flags) == 9, "ctx.sqe_flags");
_Static_assert(offsetof(struct kio_bpf_ctx, pdu_size) == 10, "ctx.pdu_size");
_Static_assert(offsetof(struct kio_bpf_ctx, pad) == 11, "ctx.pad");
_Static_assert(offsetof(struct kio_bpf_ctx, socket.family) == 16, "ctx.socket.family");
_Static_assert(offsetof(struct kio_bpf_ctx, socket.type) == 20, "ctx.socket.type");
_Static_assert(offsetof(struct kio_bpf_ctx, socket.protocol) == 24, "ctx.socket.protocol");
_Static_assert(offsetof(struct kio_bpf_ctx, open.flags) == 16, "ctx.open.flags");
_Static_assert(offsetof(struct kio_bpf_ctx, open.mode) == 24, "ctx.open.mode");
_Static_assert(offsetof(struct kio_bpf_ctx, open.resolve) == 32, "ctx.open.resolve");
_Static_assert(offsetof(struct kio_bpf_ctx, connect.family) == 16, "ctx.connect.family");
_Static_assert(offsetof(struct kio_bpf_ctx, connect.port) == 20, "ctx.connect.port");
_Static_assert(offsetof(struct kio_bpf_ctx, connect.v4_addr) == 24, "ctx.connect.v4_addr");
_Static_assert(offsetof(struct kio_bpf_ctx, connect.v6_addr) == 24, "ctx.connect.v6_addr");

/* Payload sizes (K) per opcode on the newest kernel known (7.2). */
#define KIO_PDU_SOCKET 12
#define KIO_PDU_OPEN 24
#define KIO_PDU_CONNECT 24

/* IORING_REGISTER_QUERY (6.18+) */
#define KIO_QUERY_OPCODES 0
#define KIO_QUERY_ZCRX 1
#define KIO_QUERY_SCQ 2

struct kio_query_hdr {
	uint64_t next_entry;
	uint64_t query_data;
	uint32_t query_op;
	uint32_t size;
	int32_t result;
	uint32_t resv[3];
};
_Static_assert(sizeof(struct kio_query_hdr) == 40, "io_uring_query_hdr size");
_Static_assert(offsetof(struct kio_query_hdr, query_data) == 8, "hdr.query_data");
_Static_assert(offsetof(struct kio_query_hdr, query_op) == 16, "hdr.query_op");
_Static_assert(offsetof(struct kio_query_hdr, size) == 20, "hdr.size");
_Static_assert(offsetof(struct kio_query_hdr, result) == 24, "hdr.result");
_Static_assert(offsetof(struct kio_query_hdr, resv) == 28, "hdr.resv");

struct kio_query_opcode {
	uint32_t nr_request_opcodes;
	uint32_t nr_register_opcodes;
	uint64_t feature_flags;
	uint64_t ring_setup_flags;
	uint64_t enter_flags;
	uint64_t sqe_flags;
	uint32_t nr_query_opcodes;
	uint32_t pad;
};
_Static_assert(sizeof(struct kio_query_opcode) == 48, "io_uring_query_opcode size");
_Static_assert(offsetof(struct kio_query_opcode, nr_register_opcodes) == 4, "q.nr_register");
_Static_assert(offsetof(struct kio_query_opcode, feature_flags) == 8, "q.feature_flags");
_Static_assert(offsetof(struct kio_query_opcode, ring_setup_flags) == 16, "q.setup_flags");
_Static_assert(offsetof(struct kio_query_opcode, enter_flags) == 24, "q.enter_flags");
_Static_assert(offsetof(struct kio_query_opcode, sqe_flags) == 32, "q.sqe_flags");
_Static_assert(offsetof(struct kio_query_opcode, nr_query_opcodes) == 40, "q.nr_query");

/* IORING_REGISTER_PROBE (5.6+) */
#define KIO_OP_SUPPORTED (1U << 0)
struct kio_probe_op {
	uint8_t op;
	uint8_t resv;
	uint16_t flags;
	uint32_t resv2;
};
_Static_assert(sizeof(struct kio_probe_op) == 8, "io_uring_probe_op size");
struct kio_probe {
	uint8_t last_op;
	uint8_t ops_len;
	uint16_t resv;
	uint32_t resv2[3];
	struct kio_probe_op ops[];
};
_Static_assert(sizeof(struct kio_probe) == 16, "io_uring_probe size");
_Static_assert(offsetof(struct kio_probe, ops) == 16, "probe.ops");

/* io_uring_setup parameters and ring layout (for the library's own rings). */
struct kio_sqring_offsets {
	uint32_t head, tail, ring_mask, ring_entries, flags, dropped, array, resv1;
	uint64_t user_addr;
};
struct kio_cqring_offsets {
	uint32_t head, tail, ring_mask, ring_entries, overflow, cqes, flags, resv1;
	uint64_t user_addr;
};
struct kio_params {
	uint32_t sq_entries;
	uint32_t cq_entries;
	uint32_t flags;
	uint32_t sq_thread_cpu;
	uint32_t sq_thread_idle;
	uint32_t features;
	uint32_t wq_fd;
	uint32_t resv[3];
	struct kio_sqring_offsets sq_off;
	struct kio_cqring_offsets cq_off;
};
_Static_assert(sizeof(struct kio_sqring_offsets) == 40, "io_sqring_offsets size");
_Static_assert(sizeof(struct kio_cqring_offsets) == 40, "io_cqring_offsets size");
_Static_assert(sizeof(struct kio_params) == 120, "io_uring_params size");
_Static_assert(offsetof(struct kio_params, sq_off) == 40, "params.sq_off");
_Static_assert(offsetof(struct kio_params, cq_off) == 80, "params.cq_off");

#define KIO_OFF_SQ_RING 0ULL
#define KIO_OFF_CQ_RING 0x8000000ULL
#define KIO_OFF_SQES 0x10000000ULL
#define KIO_FEAT_SINGLE_MMAP (1U << 0)

struct kio_sqe {
	uint8_t opcode;
	uint8_t flags;
	uint16_t ioprio;
	int32_t fd;
	uint64_t off;  /* also addr2 */
	uint64_t addr; /* also splice_off_in */
	uint32_t len;
	uint32_t op_flags; /* rw_flags, open_flags, ... */
	uint64_t user_data;
	uint16_t buf_index;
	uint16_t personality;
	int32_t splice_fd_in;
	uint64_t addr3;
	uint64_t pad2;
};
_Static_assert(sizeof(struct kio_sqe) == 64, "io_uring_sqe size");
_Static_assert(offsetof(struct kio_sqe, off) == 8, "sqe.off");
_Static_assert(offsetof(struct kio_sqe, addr) == 16, "sqe.addr");
_Static_assert(offsetof(struct kio_sqe, len) == 24, "sqe.len");
_Static_assert(offsetof(struct kio_sqe, op_flags) == 28, "sqe.op_flags");
_Static_assert(offsetof(struct kio_sqe, user_data) == 32, "sqe.user_data");

struct kio_cqe {
	uint64_t user_data;
	int32_t res;
	uint32_t flags;
};
_Static_assert(sizeof(struct kio_cqe) == 16, "io_uring_cqe size");

/* Classic BPF encoding (<linux/bpf_common.h>, <linux/filter.h>). */
#define KBPF_LD 0x00
#define KBPF_LDX 0x01
#define KBPF_ST 0x02
#define KBPF_STX 0x03
#define KBPF_ALU 0x04
#define KBPF_JMP 0x05
#define KBPF_RET 0x06
#define KBPF_MISC 0x07
#define KBPF_W 0x00
#define KBPF_H 0x08
#define KBPF_B 0x10
#define KBPF_IMM 0x00
#define KBPF_ABS 0x20
#define KBPF_IND 0x40
#define KBPF_MEM 0x60
#define KBPF_LEN 0x80
#define KBPF_MSH 0xa0
#define KBPF_ADD 0x00
#define KBPF_SUB 0x10
#define KBPF_MUL 0x20
#define KBPF_DIV 0x30
#define KBPF_OR 0x40
#define KBPF_AND 0x50
#define KBPF_LSH 0x60
#define KBPF_RSH 0x70
#define KBPF_NEG 0x80
#define KBPF_MOD 0x90
#define KBPF_XOR 0xa0
#define KBPF_JA 0x00
#define KBPF_JEQ 0x10
#define KBPF_JGT 0x20
#define KBPF_JGE 0x30
#define KBPF_JSET 0x40
#define KBPF_K 0x00
#define KBPF_X 0x08
#define KBPF_A 0x10
#define KBPF_TAX 0x00
#define KBPF_TXA 0x80
#define KBPF_MAXINSNS 4096
#define KBPF_MEMWORDS 16
/* clang-format 14 would print ((c)&0x07): keep these as written. */
/* clang-format off */
#define KBPF_CLASS(c) ((c) & 0x07)
#define KBPF_SIZE(c) ((c) & 0x18)
#define KBPF_MODE(c) ((c) & 0xe0)
#define KBPF_OP(c) ((c) & 0xf0)
#define KBPF_SRC(c) ((c) & 0x08)
#define KBPF_RVAL(c) ((c) & 0x18)
#define KBPF_MISCOP(c) ((c) & 0xf8)
/* clang-format on */

/* The numbers above that the kernel facts hold (lib/base/kernel_facts.def). */
#define IOUR_KF_NR(name, nr, maj, min) _Static_assert(KIO_NR_##name == (nr), "NR_" #name);
#define IOUR_KF_SETUP(name, bit, maj, min) \
	_Static_assert(KIO_SETUP_##name == 1U << (bit), "SETUP_" #name);
#include "kernel_facts.def"

#endif /* IOUR_LIB_UAPI_H */
