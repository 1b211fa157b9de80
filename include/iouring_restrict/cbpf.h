/* SPDX-License-Identifier: MIT */
/**
 * @file cbpf.h
 * @brief Classic-BPF programs for io_uring filters: the instruction type,
 *        the filter context, a validator with the kernel's acceptance
 *        rules, a simulator with the kernel's run-time semantics, context
 *        builders and a disassembler.
 *
 * io_uring filters (Linux 7.0+) are classic BPF programs that read a 40-byte
 * context (`struct io_uring_bpf_ctx`) with 32-bit native-endian loads and
 * return 0 to deny a request or any other value to allow it.
 */
#ifndef IOURING_RESTRICT_CBPF_H
#define IOURING_RESTRICT_CBPF_H

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @brief One classic-BPF instruction; layout-compatible with the kernel's
 *        `struct sock_filter` (8 bytes).
 */
struct iour_insn {
	uint16_t code; /**< opcode: class | size | mode, or class | op | src */
	uint8_t jt;    /**< conditional jump: instructions skipped if true */
	uint8_t jf;    /**< conditional jump: instructions skipped if false */
	uint32_t k;    /**< generic operand */
};

/** @brief Size in bytes of the io_uring filter context (`BPF_LEN`). */
#define IOUR_CTX_SIZE 40
/** @brief Maximum number of instructions in one program (`BPF_MAXINSNS`). */
#define IOUR_MAX_INSNS 4096

/** @name Byte offsets of the fields of the filter context
 *  64-bit fields are stored in native byte order; connect port and
 *  addresses in network byte order.
 *  @{ */
#define IOUR_CTX_OFF_USER_DATA 0        /**< u64 sqe->user_data */
#define IOUR_CTX_OFF_OPCODE 8           /**< u8 request opcode */
#define IOUR_CTX_OFF_SQE_FLAGS 9        /**< u8 IOSQE_* flags */
#define IOUR_CTX_OFF_PDU_SIZE 10        /**< u8 payload size for this opcode */
#define IOUR_CTX_OFF_PDU 16             /**< start of the 24-byte payload */
#define IOUR_CTX_OFF_SOCKET_FAMILY 16   /**< u32 socket domain */
#define IOUR_CTX_OFF_SOCKET_TYPE 20     /**< u32 type incl. NONBLOCK/CLOEXEC */
#define IOUR_CTX_OFF_SOCKET_PROTOCOL 24 /**< u32 protocol */
#define IOUR_CTX_OFF_OPEN_FLAGS 16      /**< u64 open flags */
#define IOUR_CTX_OFF_OPEN_MODE 24       /**< u64 open mode */
#define IOUR_CTX_OFF_OPEN_RESOLVE 32    /**< u64 RESOLVE_* flags */
#define IOUR_CTX_OFF_CONNECT_FAMILY 16  /**< u32 address family */
#define IOUR_CTX_OFF_CONNECT_PORT 20    /**< be16 port */
#define IOUR_CTX_OFF_CONNECT_ADDR 24    /**< be32 IPv4 or 16-byte IPv6 */
/** @} */

/** @name Validator
 *  @{ */

/** @brief Why the validator rejected a program (iour_validate_info::reason). */
enum iour_cbpf_reject {
	IOUR_REJECT_OK = 0,          /**< the program is valid */
	IOUR_REJECT_LENGTH = 1,      /**< 0 or more than 4096 instructions */
	IOUR_REJECT_CODE = 2,        /**< opcode unknown to the generic checker */
	IOUR_REJECT_NOT_ALLOWED = 3, /**< valid classic BPF, not in io_uring's list */
	IOUR_REJECT_LOAD_OFFSET = 4, /**< load outside the context or unaligned */
	IOUR_REJECT_DIV_ZERO = 5,    /**< division (or modulo) by constant zero */
	IOUR_REJECT_SHIFT = 6,       /**< constant shift by 32 or more */
	IOUR_REJECT_MEM_INDEX = 7,   /**< scratch memory index of 16 or more */
	IOUR_REJECT_JUMP = 8,        /**< jump target outside the program */
	IOUR_REJECT_NO_RET = 9,      /**< the last instruction is not a return */
	IOUR_REJECT_MEM_UNINIT = 10, /**< scratch word read before written on a path */
	IOUR_REJECT__MAX             /**< one past the last reason */
};

/** @brief Check only the generic classic-BPF checker (socket-filter rules). */
#define IOUR_VALIDATE_GENERIC_ONLY (1U << 0)

/** @brief Where and why a program was rejected. */
struct iour_validate_info {
	size_t sz;       /**< sizeof(struct iour_validate_info) */
	uint32_t insn;   /**< index of the first offending instruction */
	uint32_t reason; /**< enum iour_cbpf_reject */
};

IOUR_API int iour_cbpf_validate(const struct iour_insn *insns, size_t cnt, uint32_t flags,
				struct iour_validate_info *info);
IOUR_API const char *iour_cbpf_reject_str(uint32_t reason);
/** @} */

/** @name Simulator
 *  @{ */
/** @brief Outcome of one simulated run. */
struct iour_sim_result {
	size_t sz;         /**< sizeof(struct iour_sim_result) */
	uint32_t retval;   /**< the program's 32-bit return value */
	uint32_t executed; /**< instructions executed, the RET included */
	uint32_t allowed;  /**< 1 if retval != 0 (request allowed), else 0 */
	uint32_t pad;      /**< reserved, set to 0 */
};
IOUR_API int iour_cbpf_run(const struct iour_insn *insns, size_t cnt, const uint8_t *ctx,
			   size_t ctx_len, struct iour_sim_result *res);
/** @} */

/** @name Context builders
 *  @{ */
IOUR_API int iour_ctx_generic(uint8_t *ctx, size_t len, uint32_t opcode, uint32_t sqe_flags,
			      uint64_t user_data);
IOUR_API int iour_ctx_socket(uint8_t *ctx, size_t len, uint32_t family, uint32_t type,
			     uint32_t protocol);
IOUR_API int iour_ctx_open(uint8_t *ctx, size_t len, uint64_t flags, uint64_t mode,
			   uint64_t resolve);
IOUR_API int iour_ctx_connect(uint8_t *ctx, size_t len, const void *addr, uint32_t addr_len);
/** @} */

/** @name Disassembler and exporters
 *  @{ */
/** @brief Output formats of iour_cbpf_disasm(). */
enum iour_disasm_format {
	IOUR_DISASM_TEXT = 0,    /**< readable listing with field names */
	IOUR_DISASM_C_ARRAY = 1, /**< a `struct sock_filter` C initialiser */
	IOUR_DISASM_RAW = 2      /**< the raw 8-byte instructions, native order */
};
/** @brief Pass as the opcode to iour_cbpf_disasm() to name no payload. */
#define IOUR_OPCODE_ANY UINT32_MAX
IOUR_API int iour_cbpf_disasm(const struct iour_insn *insns, size_t cnt, uint32_t opcode,
			      uint32_t format, char *buf, size_t *len);
/** @} */

#ifdef __cplusplus
}
#endif

#endif /* IOURING_RESTRICT_CBPF_H */
