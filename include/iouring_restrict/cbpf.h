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

/**
 * @brief Why the validator rejected a program (iour_validate_info::reason).
 *
 * The checks run in the kernel's order, and the first failing one is
 * reported:
 * 1. the length (#IOUR_REJECT_LENGTH);
 * 2. the generic classic checker, instruction by instruction from index 0:
 *    for each instruction first its code (#IOUR_REJECT_CODE), then its
 *    operand (#IOUR_REJECT_DIV_ZERO, #IOUR_REJECT_SHIFT,
 *    #IOUR_REJECT_MEM_INDEX, #IOUR_REJECT_JUMP, and
 *    #IOUR_REJECT_LOAD_OFFSET for an unknown ancillary `SKF_AD_*` load);
 * 3. the last instruction (#IOUR_REJECT_NO_RET);
 * 4. the scratch-memory data flow (#IOUR_REJECT_MEM_UNINIT);
 * 5. unless #IOUR_VALIDATE_GENERIC_ONLY, io_uring's checker, instruction by
 *    instruction: #IOUR_REJECT_LOAD_OFFSET for a word load at an offset
 *    that is not a multiple of 4 below 40, #IOUR_REJECT_NOT_ALLOWED for any
 *    other instruction outside its list.
 *
 * So a program with an io_uring-only fault at index 0 and a generic fault
 * at index 9 is reported at index 9, as the kernel would see it.
 */
enum iour_cbpf_reject {
	IOUR_REJECT_OK = 0,          /**< the program is valid */
	IOUR_REJECT_LENGTH = 1,      /**< 0 or more than 4096 instructions */
	IOUR_REJECT_CODE = 2,        /**< opcode unknown to the generic checker */
	IOUR_REJECT_NOT_ALLOWED = 3, /**< valid classic BPF, not in io_uring's list
					  (MOD, H/B loads, IND, MSH, ...) */
	IOUR_REJECT_LOAD_OFFSET = 4, /**< word load at k >= 40 or k % 4 != 0, or an
					  unknown ancillary load (k >= SKF_AD_OFF) */
	IOUR_REJECT_DIV_ZERO = 5,    /**< division (or modulo) by constant zero */
	IOUR_REJECT_SHIFT = 6,       /**< constant shift by 32 or more */
	IOUR_REJECT_MEM_INDEX = 7,   /**< scratch memory index of 16 or more */
	IOUR_REJECT_JUMP = 8,        /**< jump target outside the program */
	IOUR_REJECT_NO_RET = 9,      /**< the last instruction is not a return */
	IOUR_REJECT_MEM_UNINIT = 10, /**< scratch word read before written on a path */
	IOUR_REJECT__MAX             /**< one past the last reason */
};

/**
 * @brief Flag of iour_cbpf_validate(): apply only the generic classic
 *        checker, i.e. accept exactly what `SO_ATTACH_FILTER` accepts.
 */
#define IOUR_VALIDATE_GENERIC_ONLY (1U << 0)

/** @brief Where and why a program was rejected. */
struct iour_validate_info {
	size_t sz;       /**< sizeof(struct iour_validate_info) */
	uint32_t insn;   /**< index of the first offending instruction (0 if
			      valid; 4096 for a program that is too long) */
	uint32_t reason; /**< enum iour_cbpf_reject (#IOUR_REJECT_OK if valid) */
};

/**
 * @brief **iour_cbpf_validate()** checks a program against the kernel's
 *        acceptance rules for io_uring filters (`IORING_REGISTER_BPF_FILTER`):
 *        the generic classic-BPF checker followed by io_uring's checker.
 *
 * Rules of the generic checker: 1 to 4096 instructions; every code known;
 * no DIV or MOD by constant 0; no constant LSH/RSH by 32 or more; scratch
 * indexes below 16; every jump lands inside the program (JA: k < cnt-pc-1;
 * conditional: pc+jt+1 < cnt and pc+jf+1 < cnt); LD ABS at k >= SKF_AD_OFF
 * only for a known ancillary offset; the last instruction RET K or RET A;
 * every scratch read preceded by a write to that word on every path.
 * io_uring then allows only RET K/A, ALU ADD SUB MUL DIV AND OR XOR LSH
 * RSH (K or X) and NEG, LD/LDX IMM, LD/LDX MEM, ST, STX, TAX, TXA, JA,
 * JEQ/JGT/JGE/JSET (K or X), LD/LDX W LEN, and LD W ABS with k a multiple
 * of 4 below 40.  See enum iour_cbpf_reject for the order of the checks.
 *
 * Pure computation, thread-safe, no allocation.
 *
 * @param insns the program; may be NULL only if @p cnt is 0.
 * @param cnt number of instructions.
 * @param flags 0 for the io_uring rules, or #IOUR_VALIDATE_GENERIC_ONLY.
 * @param info optional; on return (valid or not) holds the first offending
 *        instruction and the reason; info->sz must be set.
 * @return 0 if the program is valid;
 *         -IOUR_ERRNO__INVALID_PROG if it is not (see @p info);
 *         -EINVAL if @p insns is NULL with @p cnt > 0, @p flags has an
 *         unknown bit, or info->sz is smaller than the struct up to
 *         `reason`.
 * @since 1.0
 */
IOUR_API int iour_cbpf_validate(const struct iour_insn *insns, size_t cnt, uint32_t flags,
				struct iour_validate_info *info);

/**
 * @brief **iour_cbpf_reject_str()** describes a reject reason.
 * @param reason a value of enum iour_cbpf_reject.
 * @return a static string; "unknown reason" for values from
 *         #IOUR_REJECT__MAX on.  Never NULL.
 * @since 1.0
 */
IOUR_API const char *iour_cbpf_reject_str(uint32_t reason);
/** @} */

/** @name Simulator
 *  @{ */
/** @brief Outcome of one simulated run. */
struct iour_sim_result {
	size_t sz;         /**< sizeof(struct iour_sim_result) */
	uint32_t retval;   /**< the program's 32-bit return value */
	uint32_t executed; /**< instructions executed, the RET included (a DIV
				by a zero X counts and ends the run) */
	uint32_t allowed;  /**< 1 if retval != 0 (request allowed), else 0 */
	uint32_t pad;      /**< reserved, set to 0 */
};

/**
 * @brief **iour_cbpf_run()** runs a program on a filter context exactly as
 *        the kernel runs an io_uring filter.
 *
 * The program is validated first with the io_uring rules
 * (iour_cbpf_validate() with flags 0); a program the kernel would refuse
 * is never run.  Semantics: A and X start at 0; ALU operations on 32-bit
 * unsigned values with wraparound; LD W ABS k loads the native-endian
 * 32-bit word at byte k of the context; LD/LDX W LEN give 40; a DIV by X
 * when X is 0 ends the program with return value 0 (deny); shifts by X use
 * X & 31; conditional jumps compare unsigned; RET K returns k, RET A
 * returns A.  The kernel allows the request if the return value is not 0.
 *
 * Pure computation, thread-safe, no allocation.
 *
 * @param insns the program; may be NULL only if @p cnt is 0.
 * @param cnt number of instructions.
 * @param ctx the 40-byte context (see the IOUR_CTX_OFF_* offsets and the
 *        iour_ctx_*() builders).
 * @param ctx_len must be #IOUR_CTX_SIZE.
 * @param res receives the outcome; res->sz must be set.
 * @return 0 on success (the verdict is in @p res);
 *         -IOUR_ERRNO__INVALID_PROG if the validator rejects the program;
 *         -EINVAL if @p insns is NULL with @p cnt > 0, @p ctx or @p res is
 *         NULL, @p ctx_len is not 40, or res->sz is smaller than the struct
 *         up to `allowed`.
 * @since 1.0
 */
IOUR_API int iour_cbpf_run(const struct iour_insn *insns, size_t cnt, const uint8_t *ctx,
			   size_t ctx_len, struct iour_sim_result *res);
/** @} */

/** @name Context builders
 *  Fill a 40-byte context the way the kernel fills `struct io_uring_bpf_ctx`
 *  for a request, after the request's prep: first iour_ctx_generic(), then,
 *  for an opcode with a payload, the matching payload builder.  Each
 *  builder validates all its arguments before writing, so a failed call
 *  leaves the buffer unchanged.  Pure computation, thread-safe.
 *  @{ */

/**
 * @brief **iour_ctx_generic()** zeroes a context and fills the fields every
 *        request has.
 *
 * Writes `user_data` (native byte order) at offset 0, `opcode` at 8,
 * `sqe_flags` at 9 and `pdu_size` at 10, the payload size the newest known
 * kernel (7.2) reports for the opcode: 12 for IORING_OP_SOCKET (45), 24 for
 * IORING_OP_OPENAT (18), IORING_OP_OPENAT2 (28) and IORING_OP_CONNECT (16),
 * 0 otherwise.  Everything else is 0.
 *
 * @param ctx the buffer to fill.
 * @param len size of @p ctx; must be #IOUR_CTX_SIZE.
 * @param opcode the request opcode, below 65 (IORING_OP_LAST of 7.2).
 * @param sqe_flags IOSQE_* flags as the kernel records them (bits 0..6).
 * @param user_data the request's user_data.
 * @return 0 on success; -EINVAL if @p ctx is NULL, @p len is not 40,
 *         @p opcode is 65 or more, or @p sqe_flags has a bit above 0x7f.
 * @since 1.0
 */
IOUR_API int iour_ctx_generic(uint8_t *ctx, size_t len, uint32_t opcode, uint32_t sqe_flags,
			      uint64_t user_data);

/**
 * @brief **iour_ctx_socket()** fills the payload of an IORING_OP_SOCKET
 *        context: `family` (sqe->fd) at 16, `type` (sqe->off) at 20,
 *        `protocol` (sqe->len) at 24, each a native u32.
 *
 * The payload is zeroed first.  @p type is stored unmasked, with its
 * SOCK_NONBLOCK and SOCK_CLOEXEC bits, as the kernel stores it.  (The
 * kernel's prep refuses a type with flag bits other than those two before
 * any filter runs; the builder does not check for that, so tests can
 * build such contexts.)
 *
 * @param ctx a context set up by iour_ctx_generic() for opcode 45.
 * @param len size of @p ctx; must be #IOUR_CTX_SIZE.
 * @param family the socket domain (AF_*).
 * @param type the socket type, flags included.
 * @param protocol the protocol.
 * @return 0 on success; -EINVAL if @p ctx is NULL, @p len is not 40, or the
 *         context's opcode is not IORING_OP_SOCKET (or its pdu_size byte is
 *         not 12).
 * @since 1.0
 */
IOUR_API int iour_ctx_socket(uint8_t *ctx, size_t len, uint32_t family, uint32_t type,
			     uint32_t protocol);

/**
 * @brief **iour_ctx_open()** fills the payload of an IORING_OP_OPENAT or
 *        IORING_OP_OPENAT2 context: `flags` at 16, `mode` at 24, `resolve`
 *        at 32, each a native u64, as the kernel's `struct open_how`.
 *
 * The payload is zeroed first.  For IORING_OP_OPENAT the kernel builds the
 * `open_how` from the SQE's 32-bit `open_flags` and `len` with
 * `build_open_how()`, and so does this function: the flags are masked to
 * the kernel's valid open flags (with O_PATH, only O_DIRECTORY,
 * O_NOFOLLOW, O_PATH and O_CLOEXEC are kept); the mode is masked to 07777
 * and set to 0 unless O_CREAT or O_TMPFILE is in the flags; resolve is 0.
 * For IORING_OP_OPENAT2 the kernel copies the caller's `struct open_how`
 * unchanged (it rejects a bad mode or bad flags only later, when the
 * request is issued, after the filters ran), so @p flags, @p mode and
 * @p resolve are stored as given.  For both, the kernel then adds
 * O_LARGEFILE (0x8000 on x86-64, 0x20000 on arm64) to the flags unless
 * O_PATH is set, on 64-bit kernels; so does this function on 64-bit
 * builds.
 *
 * @param ctx a context set up by iour_ctx_generic() for opcode 18 or 28.
 * @param len size of @p ctx; must be #IOUR_CTX_SIZE.
 * @param flags the open flags (O_*), as passed to openat/openat2.
 * @param mode the creation mode.
 * @param resolve RESOLVE_* flags (OPENAT2 only).
 * @return 0 on success; -EINVAL if @p ctx is NULL, @p len is not 40, the
 *         context's opcode is neither OPENAT nor OPENAT2 (or its pdu_size
 *         byte is not 24), or, for OPENAT, @p flags or @p mode does not fit
 *         the SQE's 32 bits or @p resolve is not 0.
 * @since 1.0
 */
IOUR_API int iour_ctx_open(uint8_t *ctx, size_t len, uint64_t flags, uint64_t mode,
			   uint64_t resolve);

/**
 * @brief **iour_ctx_connect()** fills the payload of an IORING_OP_CONNECT
 *        context (Linux 7.2+) from the address the request passes.
 *
 * The payload is zeroed first.  Then, as the kernel does: `family` (the
 * address's sa_family, zero-extended to a native u32, at 16) only if
 * @p addr_len >= 2; for AF_INET with @p addr_len >= sizeof(struct
 * sockaddr_in) (16), `port` at 20 and the IPv4 address at 24; for AF_INET6
 * with @p addr_len >= 24 (SIN6_LEN_RFC2133: a struct sockaddr_in6 without
 * its trailing sin6_scope_id, which the network stack accepts too), `port`
 * at 20 and the 16 address bytes at 24..39 (measured on 7.2.13 and 7.3.4,
 * doc/kernel.md 4.3).  Port and addresses keep their network
 * byte order, byte for byte.  Any other family fills only `family`.
 *
 * @param ctx a context set up by iour_ctx_generic() for opcode 16.
 * @param len size of @p ctx; must be #IOUR_CTX_SIZE.
 * @param addr the socket address (struct sockaddr_*); may be NULL only if
 *        @p addr_len is 0.
 * @param addr_len the address length the request passes.
 * @return 0 on success; -EINVAL if @p ctx is NULL, @p len is not 40, the
 *         context's opcode is not IORING_OP_CONNECT (or its pdu_size byte is
 *         not 24), @p addr is NULL with @p addr_len > 0, or @p addr_len is
 *         above 128 (the kernel refuses such a request before any filter).
 * @since 1.0
 */
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
/**
 * @brief Flag ORed into the format of iour_cbpf_disasm(): the program is a
 *        seccomp filter, not an io_uring one.
 *
 * Its loads are named by `struct seccomp_data` and its returns by the
 * `SECCOMP_RET_*` action they select (the seccomp companion,
 * iour_companion_program(), is such a program).  The opcode must be
 * #IOUR_OPCODE_ANY.
 */
#define IOUR_DISASM_SECCOMP (1U << 8)

/**
 * @brief **iour_cbpf_disasm()** renders a program as a listing, a C
 *        initialiser or raw bytes.
 *
 * #IOUR_DISASM_TEXT gives one line per instruction: the label `L<index>:`,
 * the mnemonic, and after `;` a remark.  Jump targets are absolute labels
 * (`jeq #0x2, L3, L5`: to L3 if equal, else L5; `ja L7`).  Word loads from
 * the context are named by field for @p opcode, with the byte offset as
 * the remark: `ld user_data.lo` / `.hi` (the half of the native u64 that
 * word holds on this host), `ld opcode|sqe_flags|pdu_size` (offset 8),
 * `ld pad`, `ld socket.family` / `.type` / `.protocol`,
 * `ld open.flags.lo` (also `.hi`, `open.mode.*`, `open.resolve.*`),
 * `ld connect.family`, `ld connect.port` (the word holding the port),
 * `ld connect.addr[0]` .. `[3]` (IPv4 address in [0]; IPv6 words
 * in network order); other payload words, and all of them for
 * #IOUR_OPCODE_ANY, are `ld pdu+<offset in payload>`.  Immediates are
 * `#0` or hexadecimal (`#0x28`); scratch words are `M[i]`; `ret #0` is
 * remarked `deny`, any other `ret #k` `allow`, `ret a` `allow if A != 0`.
 * Instructions io_uring refuses are still shown (`ldh [k]`, `ld [x+k]`,
 * `mod`, `.insn code, jt, jf, k` for an unknown code).
 *
 * With #IOUR_DISASM_SECCOMP ORed into @p format, the program is listed as
 * a seccomp filter: loads are `ld nr`, `ld arch`,
 * `ld instruction_pointer.lo` / `.hi`, `ld args[0].lo` .. `args[5].hi`
 * (offsets 0 to 60; anything else is remarked `outside seccomp_data`),
 * `ld len` is remarked `= 64`, `ret #k` is remarked with its action
 * (`SECCOMP_RET_ALLOW`, `SECCOMP_RET_ERRNO(38)`, `SECCOMP_RET_KILL_PROCESS`,
 * `SECCOMP_RET_KILL_THREAD`, `SECCOMP_RET_TRAP(n)`, `SECCOMP_RET_TRACE(n)`,
 * `SECCOMP_RET_LOG`, `SECCOMP_RET_USER_NOTIF`, or `unknown action: kills
 * the process`), `ret a` `the action in A`.
 *
 * #IOUR_DISASM_C_ARRAY gives `struct sock_filter filter[] = { ... };` with
 * one `BPF_STMT()`/`BPF_JUMP()` per instruction (a plain `{ code, jt, jf,
 * k }` initialiser for unknown codes or non-jumps with non-zero jt/jf),
 * each followed by the listing line as a comment.
 *
 * #IOUR_DISASM_RAW gives the instructions' 8-byte memory images, exactly
 * 8 * @p cnt bytes, not NUL-terminated.
 *
 * Two-call sizing: with @p buf NULL, *len is set to the size needed (for
 * the text formats including the terminating NUL) and 0 is returned.  With
 * a buffer, *len is its size on entry and the size written on return.
 * The output does not depend on anything but the arguments (and the host
 * byte order for the `.lo`/`.hi` names).  Thread-safe, no allocation.
 *
 * @param insns the program; may be NULL only if @p cnt is 0.  It need not
 *        be valid.
 * @param cnt number of instructions, 0 to 4096.
 * @param opcode the request opcode whose payload names to use (below 65),
 *        or #IOUR_OPCODE_ANY.
 * @param format an enum iour_disasm_format value, optionally ORed with
 *        #IOUR_DISASM_SECCOMP (no effect on #IOUR_DISASM_RAW).
 * @param buf destination, or NULL to ask for the size.
 * @param len in: size of @p buf; out: bytes needed or written.
 * @return 0 on success; -ERANGE if @p buf is too small (*len then holds the
 *         size needed and @p buf is untouched); -EINVAL if @p len is NULL,
 *         @p insns is NULL with @p cnt > 0, @p cnt is above 4096, @p opcode
 *         is 65 or more but not #IOUR_OPCODE_ANY, @p format is unknown
 *         (or has #IOUR_DISASM_SECCOMP with an opcode other than
 *         #IOUR_OPCODE_ANY).
 * @since 1.0
 */
IOUR_API int iour_cbpf_disasm(const struct iour_insn *insns, size_t cnt, uint32_t opcode,
			      uint32_t format, char *buf, size_t *len);
/** @} */

#ifdef __cplusplus
}
#endif

#endif /* IOURING_RESTRICT_CBPF_H */
