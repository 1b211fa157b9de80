//! Raw declarations of libiouring-restrict's public C API
//! (`include/iouring_restrict/*.h`), written by hand: every function and every
//! struct (`#[repr(C)]`, checked against the library's layout table by
//! `tests/layout.rs`); every constant, under its C name, is written from
//! the headers by `make generate` (scripts/gen-bindings.py).
//!
//! Conventions of the C API (common.h): fallible functions return 0 or a
//! count on success and a negative errno (or `-IOUR_ERRNO__*`) on failure;
//! handles are made by `*__new()` and released by `*__free()`; options
//! structs start with `sz`, set to their size, and every other byte zero:
//! the `Default` of every struct here is all zeroes with `sz` set where the
//! struct has one.
//!
//! Use the `iouring-restrict` crate for a safe interface.
//!
//! ```
//! use iouring_restrict_sys as sys;
//! let mut rs = std::ptr::null_mut();
//! assert_eq!(unsafe { sys::iour_ruleset__new(std::ptr::null(), &mut rs) }, 0);
//! assert_eq!(unsafe { sys::iour_ruleset__allow_sqe_op(rs, sys::IOUR_OP_NOP) }, 0);
//! assert_eq!(unsafe { sys::iour_ruleset__sqe_op_allowed(rs, sys::IOUR_OP_NOP) }, 1);
//! unsafe { sys::iour_ruleset__free(rs) };
//! ```
#![allow(non_camel_case_types, non_upper_case_globals)]
use std::marker::{PhantomData, PhantomPinned};
use std::mem;
pub use std::os::raw::{c_char, c_int, c_uint, c_void};

// constants
// BEGIN GENERATED rs-sys-consts: scripts/gen-bindings.py (make generate), do not edit
// ---- version.h

pub const IOUR_VERSION_MAJOR: u32 = 1;
pub const IOUR_VERSION_MINOR: u32 = 1;
pub const IOUR_VERSION_PATCH: u32 = 0;
pub const IOUR_VERSION_NUMBER: u32 = 10100;

// ---- errors.h

// enum iour_errno
pub const IOUR_ERRNO__START: i32 = 4000;
pub const IOUR_ERRNO__INTERNAL: i32 = 4001;
pub const IOUR_ERRNO__PROG_TOO_LARGE: i32 = 4002;
pub const IOUR_ERRNO__INVALID_PROG: i32 = 4003;
pub const IOUR_ERRNO__UNSUPPORTED: i32 = 4004;
pub const IOUR_ERRNO__PARTIAL: i32 = 4005;
pub const IOUR_ERRNO__KERNEL_MISMATCH: i32 = 4006;
pub const IOUR_ERRNO__NOT_ENFORCED: i32 = 4007;
pub const IOUR_ERRNO__END: i32 = 4008;

// ---- names.h

// enum iour_op
pub const IOUR_OP_NOP: u32 = 0;
pub const IOUR_OP_READV: u32 = 1;
pub const IOUR_OP_WRITEV: u32 = 2;
pub const IOUR_OP_FSYNC: u32 = 3;
pub const IOUR_OP_READ_FIXED: u32 = 4;
pub const IOUR_OP_WRITE_FIXED: u32 = 5;
pub const IOUR_OP_POLL_ADD: u32 = 6;
pub const IOUR_OP_POLL_REMOVE: u32 = 7;
pub const IOUR_OP_SYNC_FILE_RANGE: u32 = 8;
pub const IOUR_OP_SENDMSG: u32 = 9;
pub const IOUR_OP_RECVMSG: u32 = 10;
pub const IOUR_OP_TIMEOUT: u32 = 11;
pub const IOUR_OP_TIMEOUT_REMOVE: u32 = 12;
pub const IOUR_OP_ACCEPT: u32 = 13;
pub const IOUR_OP_ASYNC_CANCEL: u32 = 14;
pub const IOUR_OP_LINK_TIMEOUT: u32 = 15;
pub const IOUR_OP_CONNECT: u32 = 16;
pub const IOUR_OP_FALLOCATE: u32 = 17;
pub const IOUR_OP_OPENAT: u32 = 18;
pub const IOUR_OP_CLOSE: u32 = 19;
pub const IOUR_OP_FILES_UPDATE: u32 = 20;
pub const IOUR_OP_STATX: u32 = 21;
pub const IOUR_OP_READ: u32 = 22;
pub const IOUR_OP_WRITE: u32 = 23;
pub const IOUR_OP_FADVISE: u32 = 24;
pub const IOUR_OP_MADVISE: u32 = 25;
pub const IOUR_OP_SEND: u32 = 26;
pub const IOUR_OP_RECV: u32 = 27;
pub const IOUR_OP_OPENAT2: u32 = 28;
pub const IOUR_OP_EPOLL_CTL: u32 = 29;
pub const IOUR_OP_SPLICE: u32 = 30;
pub const IOUR_OP_PROVIDE_BUFFERS: u32 = 31;
pub const IOUR_OP_REMOVE_BUFFERS: u32 = 32;
pub const IOUR_OP_TEE: u32 = 33;
pub const IOUR_OP_SHUTDOWN: u32 = 34;
pub const IOUR_OP_RENAMEAT: u32 = 35;
pub const IOUR_OP_UNLINKAT: u32 = 36;
pub const IOUR_OP_MKDIRAT: u32 = 37;
pub const IOUR_OP_SYMLINKAT: u32 = 38;
pub const IOUR_OP_LINKAT: u32 = 39;
pub const IOUR_OP_MSG_RING: u32 = 40;
pub const IOUR_OP_FSETXATTR: u32 = 41;
pub const IOUR_OP_SETXATTR: u32 = 42;
pub const IOUR_OP_FGETXATTR: u32 = 43;
pub const IOUR_OP_GETXATTR: u32 = 44;
pub const IOUR_OP_SOCKET: u32 = 45;
pub const IOUR_OP_URING_CMD: u32 = 46;
pub const IOUR_OP_SEND_ZC: u32 = 47;
pub const IOUR_OP_SENDMSG_ZC: u32 = 48;
pub const IOUR_OP_READ_MULTISHOT: u32 = 49;
pub const IOUR_OP_WAITID: u32 = 50;
pub const IOUR_OP_FUTEX_WAIT: u32 = 51;
pub const IOUR_OP_FUTEX_WAKE: u32 = 52;
pub const IOUR_OP_FUTEX_WAITV: u32 = 53;
pub const IOUR_OP_FIXED_FD_INSTALL: u32 = 54;
pub const IOUR_OP_FTRUNCATE: u32 = 55;
pub const IOUR_OP_BIND: u32 = 56;
pub const IOUR_OP_LISTEN: u32 = 57;
pub const IOUR_OP_RECV_ZC: u32 = 58;
pub const IOUR_OP_EPOLL_WAIT: u32 = 59;
pub const IOUR_OP_READV_FIXED: u32 = 60;
pub const IOUR_OP_WRITEV_FIXED: u32 = 61;
pub const IOUR_OP_PIPE: u32 = 62;
pub const IOUR_OP_NOP128: u32 = 63;
pub const IOUR_OP_URING_CMD128: u32 = 64;
pub const IOUR_OP__COUNT: u32 = 65;
// enum iour_register_op
pub const IOUR_REGISTER_BUFFERS: u32 = 0;
pub const IOUR_UNREGISTER_BUFFERS: u32 = 1;
pub const IOUR_REGISTER_FILES: u32 = 2;
pub const IOUR_UNREGISTER_FILES: u32 = 3;
pub const IOUR_REGISTER_EVENTFD: u32 = 4;
pub const IOUR_UNREGISTER_EVENTFD: u32 = 5;
pub const IOUR_REGISTER_FILES_UPDATE: u32 = 6;
pub const IOUR_REGISTER_EVENTFD_ASYNC: u32 = 7;
pub const IOUR_REGISTER_PROBE: u32 = 8;
pub const IOUR_REGISTER_PERSONALITY: u32 = 9;
pub const IOUR_UNREGISTER_PERSONALITY: u32 = 10;
pub const IOUR_REGISTER_RESTRICTIONS: u32 = 11;
pub const IOUR_REGISTER_ENABLE_RINGS: u32 = 12;
pub const IOUR_REGISTER_FILES2: u32 = 13;
pub const IOUR_REGISTER_FILES_UPDATE2: u32 = 14;
pub const IOUR_REGISTER_BUFFERS2: u32 = 15;
pub const IOUR_REGISTER_BUFFERS_UPDATE: u32 = 16;
pub const IOUR_REGISTER_IOWQ_AFF: u32 = 17;
pub const IOUR_UNREGISTER_IOWQ_AFF: u32 = 18;
pub const IOUR_REGISTER_IOWQ_MAX_WORKERS: u32 = 19;
pub const IOUR_REGISTER_RING_FDS: u32 = 20;
pub const IOUR_UNREGISTER_RING_FDS: u32 = 21;
pub const IOUR_REGISTER_PBUF_RING: u32 = 22;
pub const IOUR_UNREGISTER_PBUF_RING: u32 = 23;
pub const IOUR_REGISTER_SYNC_CANCEL: u32 = 24;
pub const IOUR_REGISTER_FILE_ALLOC_RANGE: u32 = 25;
pub const IOUR_REGISTER_PBUF_STATUS: u32 = 26;
pub const IOUR_REGISTER_NAPI: u32 = 27;
pub const IOUR_UNREGISTER_NAPI: u32 = 28;
pub const IOUR_REGISTER_CLOCK: u32 = 29;
pub const IOUR_REGISTER_CLONE_BUFFERS: u32 = 30;
pub const IOUR_REGISTER_SEND_MSG_RING: u32 = 31;
pub const IOUR_REGISTER_ZCRX_IFQ: u32 = 32;
pub const IOUR_REGISTER_RESIZE_RINGS: u32 = 33;
pub const IOUR_REGISTER_MEM_REGION: u32 = 34;
pub const IOUR_REGISTER_QUERY: u32 = 35;
pub const IOUR_REGISTER_ZCRX_CTRL: u32 = 36;
pub const IOUR_REGISTER_BPF_FILTER: u32 = 37;
pub const IOUR_REGISTER__COUNT: u32 = 38;
// enum iour_sqe_flag
pub const IOUR_SQE_FIXED_FILE: u32 = 1;
pub const IOUR_SQE_IO_DRAIN: u32 = 2;
pub const IOUR_SQE_IO_LINK: u32 = 4;
pub const IOUR_SQE_IO_HARDLINK: u32 = 8;
pub const IOUR_SQE_ASYNC: u32 = 16;
pub const IOUR_SQE_BUFFER_SELECT: u32 = 32;
pub const IOUR_SQE_CQE_SKIP_SUCCESS: u32 = 64;
pub const IOUR_SQE__VALID: u32 = 127;
// enum iour_name_kind
pub const IOUR_NAME_OPCODE: u32 = 0;
pub const IOUR_NAME_REGISTER_OP: u32 = 1;
pub const IOUR_NAME_SQE_FLAG: u32 = 2;

// ---- ruleset.h

// enum iour_restriction_kind
pub const IOUR_RESTRICTION_REGISTER_OP: u32 = 0;
pub const IOUR_RESTRICTION_SQE_OP: u32 = 1;
pub const IOUR_RESTRICTION_SQE_FLAGS_ALLOWED: u32 = 2;
pub const IOUR_RESTRICTION_SQE_FLAGS_REQUIRED: u32 = 3;
pub const IOUR_EXPORT_COUPLED: u32 = 1 << 0;
pub const IOUR_EXPORT_SPLIT: u32 = 1 << 1;

// ---- ring.h

pub const IOUR_RING_APPLY_NO_ENABLE: u64 = 1 << 0;

// ---- probe.h

// enum iour_feature_level
pub const IOUR_LEVEL_NONE: u32 = 0;
pub const IOUR_LEVEL_IO_URING: u32 = 1;
pub const IOUR_LEVEL_RING: u32 = 2;
pub const IOUR_LEVEL_QUERY: u32 = 3;
pub const IOUR_LEVEL_TASK_BPF: u32 = 4;
pub const IOUR_LEVEL_CONNECT: u32 = 5;
pub const IOUR_LEVEL_MAX: u32 = 5;
// enum iour_avail
pub const IOUR_AVAIL_NO: u32 = 0;
pub const IOUR_AVAIL_YES: u32 = 1;
pub const IOUR_AVAIL_NO_PRIV: u32 = 2;
pub const IOUR_AVAIL_RESTRICTED: u32 = 3;
pub const IOUR_AVAIL_UNKNOWN: u32 = 4;
// enum iour_limits_source
pub const IOUR_LIMITS_NONE: u32 = 0;
pub const IOUR_LIMITS_QUERY: u32 = 1;
pub const IOUR_LIMITS_PROBE: u32 = 2;
pub const IOUR_LIMITS_TABLE: u32 = 3;
// enum iour_kernel_gen
pub const IOUR_KGEN_NEWEST: u32 = 0;
pub const IOUR_KGEN_RING_RESTRICTIONS: u32 = 1;
pub const IOUR_KGEN_BLIND_REGISTER: u32 = 2;
pub const IOUR_KGEN_SPLIT_GATES: u32 = 3;
pub const IOUR_FEATURES_FORCED: u64 = 1 << 0;
pub const IOUR_FEATURES_FORCE_IGNORED: u64 = 1 << 1;
pub const IOUR_FEATURES_MISMATCH: u64 = 1 << 2;
pub const IOUR_FEATURES_CHILD_DIED: u64 = 1 << 3;
pub const IOUR_FEATURES_SOCKET_FLAGS_HIDDEN: u64 = 1 << 4;
pub const IOUR_FEATURES_TASK_SET_GATES_FILTERS: u64 = 1 << 5;
pub const IOUR_PROBE_NO_CACHE: u64 = 1 << 0;
pub const IOUR_PROBE_REFRESH: u64 = 1 << 1;

// ---- cbpf.h

// enum iour_cbpf_reject
pub const IOUR_REJECT_OK: u32 = 0;
pub const IOUR_REJECT_LENGTH: u32 = 1;
pub const IOUR_REJECT_CODE: u32 = 2;
pub const IOUR_REJECT_NOT_ALLOWED: u32 = 3;
pub const IOUR_REJECT_LOAD_OFFSET: u32 = 4;
pub const IOUR_REJECT_DIV_ZERO: u32 = 5;
pub const IOUR_REJECT_SHIFT: u32 = 6;
pub const IOUR_REJECT_MEM_INDEX: u32 = 7;
pub const IOUR_REJECT_JUMP: u32 = 8;
pub const IOUR_REJECT_NO_RET: u32 = 9;
pub const IOUR_REJECT_MEM_UNINIT: u32 = 10;
pub const IOUR_REJECT__MAX: u32 = 11;
// enum iour_disasm_format
pub const IOUR_DISASM_TEXT: u32 = 0;
pub const IOUR_DISASM_C_ARRAY: u32 = 1;
pub const IOUR_DISASM_RAW: u32 = 2;
pub const IOUR_CTX_SIZE: u32 = 40;
pub const IOUR_MAX_INSNS: u32 = 4096;
pub const IOUR_CTX_OFF_USER_DATA: u32 = 0;
pub const IOUR_CTX_OFF_OPCODE: u32 = 8;
pub const IOUR_CTX_OFF_SQE_FLAGS: u32 = 9;
pub const IOUR_CTX_OFF_PDU_SIZE: u32 = 10;
pub const IOUR_CTX_OFF_PDU: u32 = 16;
pub const IOUR_CTX_OFF_SOCKET_FAMILY: u32 = 16;
pub const IOUR_CTX_OFF_SOCKET_TYPE: u32 = 20;
pub const IOUR_CTX_OFF_SOCKET_PROTOCOL: u32 = 24;
pub const IOUR_CTX_OFF_OPEN_FLAGS: u32 = 16;
pub const IOUR_CTX_OFF_OPEN_MODE: u32 = 24;
pub const IOUR_CTX_OFF_OPEN_RESOLVE: u32 = 32;
pub const IOUR_CTX_OFF_CONNECT_FAMILY: u32 = 16;
pub const IOUR_CTX_OFF_CONNECT_PORT: u32 = 20;
pub const IOUR_CTX_OFF_CONNECT_ADDR: u32 = 24;
pub const IOUR_VALIDATE_GENERIC_ONLY: u32 = 1 << 0;
pub const IOUR_OPCODE_ANY: u32 = u32::MAX;
pub const IOUR_DISASM_SECCOMP: u32 = 1 << 8;

// ---- filter.h

// enum iour_verdict
pub const IOUR_DENY: u32 = 0;
pub const IOUR_ALLOW: u32 = 1;
// enum iour_field
pub const IOUR_FIELD_USER_DATA: u32 = 1;
pub const IOUR_FIELD_SQE_FLAGS: u32 = 2;
pub const IOUR_FIELD_SOCKET_FAMILY: u32 = 16;
pub const IOUR_FIELD_SOCKET_TYPE: u32 = 17;
pub const IOUR_FIELD_SOCKET_TYPE_FLAGS: u32 = 18;
pub const IOUR_FIELD_SOCKET_TYPE_RAW: u32 = 19;
pub const IOUR_FIELD_SOCKET_PROTOCOL: u32 = 20;
pub const IOUR_FIELD_OPEN_FLAGS: u32 = 32;
pub const IOUR_FIELD_OPEN_ACCMODE: u32 = 33;
pub const IOUR_FIELD_OPEN_MODE: u32 = 34;
pub const IOUR_FIELD_OPEN_RESOLVE: u32 = 35;
pub const IOUR_FIELD_CONNECT_FAMILY: u32 = 48;
pub const IOUR_FIELD_CONNECT_PORT: u32 = 49;
pub const IOUR_FIELD_CONNECT_ADDR4: u32 = 50;
pub const IOUR_FIELD_CONNECT_ADDR6: u32 = 51;
// enum iour_cmp_op
pub const IOUR_CMP_EQ: u32 = 1;
pub const IOUR_CMP_NE: u32 = 2;
pub const IOUR_CMP_LT: u32 = 3;
pub const IOUR_CMP_LE: u32 = 4;
pub const IOUR_CMP_GT: u32 = 5;
pub const IOUR_CMP_GE: u32 = 6;
pub const IOUR_CMP_MASKED_EQ: u32 = 7;
pub const IOUR_CMP_ANY_BITS: u32 = 8;
pub const IOUR_CMP_ALL_BITS: u32 = 9;
pub const IOUR_CMP_NONE_BITS: u32 = 10;
pub const IOUR_CMP_IN_SET: u32 = 11;
pub const IOUR_CMP_NOT_IN_SET: u32 = 12;
pub const IOUR_CMP_IN_RANGE: u32 = 13;
pub const IOUR_CMP_NOT_IN_RANGE: u32 = 14;
pub const IOUR_CMP_IN_PREFIX: u32 = 15;
pub const IOUR_CMP_NOT_IN_PREFIX: u32 = 16;
// enum iour_prog_kind
pub const IOUR_PROG_FILTER: u32 = 0;
pub const IOUR_PROG_ALWAYS_ALLOW: u32 = 1;
pub const IOUR_PROG_ALWAYS_DENY: u32 = 2;
pub const IOUR_FILTER_MAX_SET: u32 = 65536;
pub const IOUR_FILTER_MAX_CMPS: u32 = 64;
pub const IOUR_FILTER_ADDR4_LITERAL: u32 = 1 << 0;
pub const IOUR_OPINFO_HAS_DEFAULT: u32 = 1 << 0;
pub const IOUR_OPINFO_RAW: u32 = 1 << 1;

// ---- schema.h

// enum iour_field_kind
pub const IOUR_FIELD_KIND_NUM: u32 = 0;
pub const IOUR_FIELD_KIND_BITS: u32 = 1;
pub const IOUR_FIELD_KIND_ADDR4: u32 = 2;
pub const IOUR_FIELD_KIND_ADDR6: u32 = 3;
// enum iour_field_order
pub const IOUR_FIELD_ORDER_HOST: u32 = 0;
pub const IOUR_FIELD_ORDER_NET: u32 = 1;

// ---- companion.h

pub const IOUR_COMPANION_ENTER: u32 = 1 << 0;
pub const IOUR_COMPANION_REGISTER: u32 = 1 << 1;
pub const IOUR_COMPANION_SET_NNP: u32 = 1 << 2;
pub const IOUR_COMPANION_ALL_THREADS: u32 = 1 << 3;
pub const IOUR_COMPANION_DEFAULT_ERRNO: u32 = 38;
pub const IOUR_COMPANION_MAX_ERRNO: u32 = 4095;
pub const IOUR_RING_FDS_REFUSE: u32 = 1 << 0;

// ---- broker.h

pub const IOUR_BROKER_ALL_THREADS: u32 = 1 << 0;
pub const IOUR_BROKER_NONBLOCK: u32 = 1 << 1;
pub const IOUR_BROKER_ALLOW_PTRACE: u32 = 1 << 2;

// ---- verify.h

pub const IOUR_EXPECT_ALLOW: u32 = 1;
pub const IOUR_EXPECT_DENY: u32 = 2;
pub const IOUR_VERIFY_MAX_REQS: u32 = 256;
pub const IOUR_VERIFY_MAX_PATH: u32 = 4095;
pub const IOUR_VERIFY_MAX_ADDR: u32 = 128;
pub const IOUR_VERIFY_NOT_RUN: u32 = 0;
pub const IOUR_VERIFY_MATCH: u32 = 1;
pub const IOUR_VERIFY_MISMATCH: u32 = 2;
pub const IOUR_VERIFY_FAILED: u32 = 3;
pub const IOUR_VERIFY_RING_FD: u32 = 1 << 0;
pub const IOUR_VERIFY_ENV: &[u8] = b"IOUR_VERIFY_FD\0";
pub const IOUR_VERIFY_COV_MSG_RING: u32 = 1 << 0;
pub const IOUR_VERIFY_COV_FIXED_FILE_REQUIRED: u32 = 1 << 1;
pub const IOUR_VERIFY_COV_FLAGS_UNSETTABLE: u32 = 1 << 2;
pub const IOUR_VERIFY_COV_REGISTER_NOT_TRIED: u32 = 1 << 3;
pub const IOUR_VERIFY_COV_KERNEL_UNKNOWN: u32 = 1 << 4;

// ---- policy.h

// enum iour_policy_attr
pub const IOUR_POLICY_ATTR__MIN: u32 = 0;
pub const IOUR_POLICY_ATTR_TARGET: u32 = 1;
pub const IOUR_POLICY_ATTR_COMPAT: u32 = 2;
pub const IOUR_POLICY_ATTR_NNP: u32 = 3;
pub const IOUR_POLICY_ATTR_NO_FILTER_FALLBACK: u32 = 4;
pub const IOUR_POLICY_ATTR_THREADS: u32 = 5;
pub const IOUR_POLICY_ATTR_COMPANION: u32 = 6;
pub const IOUR_POLICY_ATTR_DEFAULT: u32 = 7;
pub const IOUR_POLICY_ATTR__MAX: u32 = 8;
// enum iour_policy_target
pub const IOUR_POLICY_TARGET_TASK: u32 = 0;
pub const IOUR_POLICY_TARGET_RING: u32 = 1;
// enum iour_policy_compat
pub const IOUR_POLICY_COMPAT_BEST_EFFORT: u32 = 0;
pub const IOUR_POLICY_COMPAT_SOFT: u32 = 1;
pub const IOUR_POLICY_COMPAT_HARD: u32 = 2;
// enum iour_policy_nnp
pub const IOUR_POLICY_NNP_KEEP: u32 = 0;
pub const IOUR_POLICY_NNP_SET: u32 = 1;
// enum iour_policy_fallback
pub const IOUR_POLICY_FALLBACK_CLOSED: u32 = 0;
pub const IOUR_POLICY_FALLBACK_OPEN: u32 = 1;
// enum iour_policy_threads
pub const IOUR_POLICY_THREADS_REPORT: u32 = 0;
pub const IOUR_POLICY_THREADS_REFUSE: u32 = 1;
// enum iour_policy_companion
pub const IOUR_POLICY_COMPANION_NONE: u32 = 0;
pub const IOUR_POLICY_COMPANION_ENOSYS: u32 = 1;
pub const IOUR_POLICY_COMPANION_EPERM: u32 = 2;
// enum iour_policy_default
pub const IOUR_POLICY_DEFAULT_DENY: u32 = 0;
pub const IOUR_POLICY_DEFAULT_ALLOW: u32 = 1;

// ---- plan.h

// enum iour_step_op
pub const IOUR_STEP_SET_NNP: u32 = 1;
pub const IOUR_STEP_RESTRICTIONS: u32 = 2;
pub const IOUR_STEP_BPF_FILTER: u32 = 3;
pub const IOUR_STEP_ENABLE_RINGS: u32 = 4;
pub const IOUR_STEP_COMPANION: u32 = 5;
// enum iour_step_side
pub const IOUR_STEP_TASK: u32 = 0;
pub const IOUR_STEP_RING: u32 = 1;
pub const IOUR_PLAN_FORCE_LEVEL: u32 = 1 << 0;
pub const IOUR_PLAN_BROKERED: u32 = 1 << 1;
pub const IOUR_PLAN_INFO_FORCED: u32 = 1 << 0;
pub const IOUR_PLAN_INFO_REFUSED: u32 = 1 << 1;
pub const IOUR_APPLY_ALLOW_PTRACE: u64 = 1 << 0;

// ---- report.h

// enum iour_status
pub const IOUR_STATUS_NOT_ENFORCED: u32 = 0;
pub const IOUR_STATUS_PARTIALLY: u32 = 1;
pub const IOUR_STATUS_FULLY: u32 = 2;
// enum iour_decision_kind
pub const IOUR_DECISION_DROPPED: u32 = 1;
pub const IOUR_DECISION_TIGHTENED: u32 = 2;
pub const IOUR_DECISION_LOOSENED: u32 = 3;
pub const IOUR_DECISION_CLAMPED: u32 = 4;
pub const IOUR_DECISION_NEGOTIATED: u32 = 5;
pub const IOUR_DECISION_NOTE: u32 = 6;
pub const IOUR_DECISION_FAILED: u32 = 7;
// enum iour_reason
pub const IOUR_REASON_NONE: u32 = 0;
pub const IOUR_REASON_NO_IO_URING: u32 = 1;
pub const IOUR_REASON_NO_RING_RESTRICTIONS: u32 = 2;
pub const IOUR_REASON_NO_TASK_RESTRICTIONS: u32 = 3;
pub const IOUR_REASON_NO_FILTERS: u32 = 4;
pub const IOUR_REASON_NO_PAYLOAD: u32 = 5;
pub const IOUR_REASON_UNKNOWN_OPCODE: u32 = 6;
pub const IOUR_REASON_COMPANION: u32 = 7;
pub const IOUR_REASON_COMPAT_SOFT: u32 = 8;
pub const IOUR_REASON_COMPAT_HARD: u32 = 9;
pub const IOUR_REASON_THREADS: u32 = 10;
pub const IOUR_REASON_STEP_FAILED: u32 = 11;
pub const IOUR_REASON_ALREADY_RESTRICTED: u32 = 12;
pub const IOUR_REASON_EXISTING_RINGS: u32 = 13;
pub const IOUR_REASON_NOT_EXPRESSIBLE: u32 = 14;
pub const IOUR_REASON_NNP: u32 = 15;
pub const IOUR_REASON_RING_LEFT_DISABLED: u32 = 16;
pub const IOUR_REASON_SHADOWED: u32 = 17;
pub const IOUR_REASON_KERNEL_MISMATCH: u32 = 18;
pub const IOUR_REASON_FIXED_FILES: u32 = 19;
pub const IOUR_REASON_EFFECT_CLOSED: u32 = 20;
pub const IOUR_REASON_EFFECT_FILTERED: u32 = 21;
pub const IOUR_REASON_EFFECT_OPEN: u32 = 22;
// enum iour_effect
pub const IOUR_EFFECT_NET_DEST: u32 = 1;
pub const IOUR_EFFECT_FILE_OPEN: u32 = 2;
pub const IOUR_EFFECT_PLAIN_FD: u32 = 3;
pub const IOUR_EFFECT_CROSS_RING: u32 = 4;
pub const IOUR_EFFECT_MEM_REG: u32 = 5;
pub const IOUR_EFFECT_RINGLESS_REG: u32 = 6;
pub const IOUR_MECH_NONE: u32 = 0;
pub const IOUR_MECH_TASK: u32 = 1 << 0;
pub const IOUR_MECH_RING: u32 = 1 << 1;
pub const IOUR_MECH_RING_DISABLED: u32 = 1 << 2;
pub const IOUR_MECH_COMPANION: u32 = 1 << 3;
pub const IOUR_REPORT_LOOSENED: u32 = 1 << 0;
pub const IOUR_REPORT_TIGHTENED: u32 = 1 << 1;
pub const IOUR_REPORT_NNP_SET: u32 = 1 << 2;
pub const IOUR_REPORT_OTHER_THREADS: u32 = 1 << 3;
pub const IOUR_REPORT_STOPPED: u32 = 1 << 4;
pub const IOUR_REPORT_RING_ONLY: u32 = 1 << 5;
pub const IOUR_REPORT_PLANNED: u32 = 1 << 6;
pub const IOUR_DECISION_NO_OPCODE: u32 = u32::MAX;

// ---- policyfile.h

// enum iour_decide_reason
pub const IOUR_DECIDE_CLASSIC_GATE: u32 = 1;
pub const IOUR_DECIDE_SQE_FLAGS: u32 = 2;
pub const IOUR_DECIDE_RULE: u32 = 3;
pub const IOUR_DECIDE_OPCODE_DEFAULT: u32 = 4;
pub const IOUR_DECIDE_PROGRAM: u32 = 5;
pub const IOUR_DECIDE_CLASSIC_ALLOW: u32 = 6;
pub const IOUR_DECIDE_POLICY_DEFAULT: u32 = 7;
pub const IOUR_LOAD_ERROR_MSG: u32 = 256;
pub const IOUR_LOAD_ERROR_PATH: u32 = 128;
pub const IOUR_VERDICT_NO_RULE: u32 = u32::MAX;

// ---- common.h

pub const IOUR_OPTS_MAX_SZ: u32 = 4096;
// END GENERATED rs-sys-consts

// opaque handles
#[repr(C)]
pub struct iour_filter {
    _private: [u8; 0],
    _marker: PhantomData<(*mut u8, PhantomPinned)>,
}
#[repr(C)]
pub struct iour_plan {
    _private: [u8; 0],
    _marker: PhantomData<(*mut u8, PhantomPinned)>,
}
#[repr(C)]
pub struct iour_policy {
    _private: [u8; 0],
    _marker: PhantomData<(*mut u8, PhantomPinned)>,
}
#[repr(C)]
pub struct iour_prog {
    _private: [u8; 0],
    _marker: PhantomData<(*mut u8, PhantomPinned)>,
}
#[repr(C)]
pub struct iour_report {
    _private: [u8; 0],
    _marker: PhantomData<(*mut u8, PhantomPinned)>,
}
#[repr(C)]
pub struct iour_ruleset {
    _private: [u8; 0],
    _marker: PhantomData<(*mut u8, PhantomPinned)>,
}

// ---- version.h

// ---- errors.h

// ---- names.h

// ---- ruleset.h

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct iour_ruleset_opts {
    pub sz: usize,
    pub flags: u64,
}
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct iour_restriction {
    pub opcode: u16,
    pub arg: u8,
    pub resv: u8,
    pub resv2: [u32; 3],
}
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct iour_clamp_report {
    pub sz: usize,
    pub n_sqe_ops: u32,
    pub n_register_ops: u32,
    pub sqe_ops: [u64; 4],
    pub register_ops: [u64; 4],
}
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct iour_export_opts {
    pub sz: usize,
    pub kver: u32,
    pub op_last: u32,
    pub reg_last: u32,
    pub flags: u32,
    pub clamp: *mut iour_clamp_report,
}

// ---- ring.h

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct iour_ring_report {
    pub sz: usize,
    pub registered: u32,
    pub enabled: u32,
    pub nr_entries: u32,
    pub op_last: u32,
    pub reg_last: u32,
    pub split_gates: u32,
    pub n_clamped_sqe_ops: u32,
    pub n_clamped_register_ops: u32,
    pub clamped_sqe_ops: [u64; 4],
    pub clamped_register_ops: [u64; 4],
}
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct iour_ring_apply_opts {
    pub sz: usize,
    pub flags: u64,
    pub report: *mut iour_ring_report,
}
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct iour_ring_create_opts {
    pub sz: usize,
    pub flags: u64,
    pub report: *mut iour_ring_report,
}

// ---- probe.h

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct iour_features {
    pub sz: usize,
    pub level: u32,
    pub kernel_level: u32,
    pub flags: u64,
    pub io_uring: u32,
    pub setup_err: i32,
    pub sysctl_disabled: i32,
    pub sysctl_group: i32,
    pub seccomp_mode: i32,
    pub no_new_privs: i32,
    pub ring_restrictions: u32,
    pub r_disabled_err: i32,
    pub ring_register_err: i32,
    pub enable_rings_err: i32,
    pub op_last: u32,
    pub reg_last: u32,
    pub limits_source: u32,
    pub split_gates: u32,
    pub query: u32,
    pub query_err: i32,
    pub nr_query_opcodes: u32,
    pub probe: u32,
    pub feature_flags: u64,
    pub setup_flags: u64,
    pub enter_flags: u64,
    pub sqe_flags: u64,
    pub probe_err: i32,
    pub probe_last_op: u32,
    pub nr_supported_ops: u32,
    pub blind_register: u32,
    pub supported_ops: [u64; 4],
    pub task_restrictions: u32,
    pub task_restrictions_err: i32,
    pub bpf_ring: u32,
    pub bpf_ring_err: i32,
    pub bpf_task: u32,
    pub bpf_task_err: i32,
    pub pdu_socket: u32,
    pub pdu_openat: u32,
    pub pdu_openat2: u32,
    pub pdu_connect: u32,
    pub child_signal: i32,
    pub pad: u32,
    /// Filter payload size per request opcode (since 1.1).
    pub pdu_size: [u8; 256],
}
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct iour_probe_opts {
    pub sz: usize,
    pub flags: u64,
}

// ---- cbpf.h

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct iour_insn {
    pub code: u16,
    pub jt: u8,
    pub jf: u8,
    pub k: u32,
}
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct iour_validate_info {
    pub sz: usize,
    pub insn: u32,
    pub reason: u32,
}
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct iour_sim_result {
    pub sz: usize,
    pub retval: u32,
    pub executed: u32,
    pub allowed: u32,
    pub pad: u32,
}

// ---- filter.h

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct iour_cmp {
    pub sz: usize,
    pub field: u32,
    pub op: u32,
    pub value: u64,
    pub arg: u64,
    pub set: *const u64,
    pub set_len: u64,
    pub addr6: [u8; 16],
}
// ---- rules.h

/// Where and why a rule text did not parse (`iour_rule_*()`, since 1.1).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct iour_rule_error {
    pub sz: usize,
    pub pos: usize,
    pub message: [c_char; 256],
}
/// A parsed comparison list (opaque; `iour_rule_parse()`, since 1.1).
#[repr(C)]
pub struct iour_rule {
    _private: [u8; 0],
    _marker: PhantomData<(*mut u8, PhantomPinned)>,
}

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct iour_filter_opts {
    pub sz: usize,
    pub default_verdict: u32,
    pub flags: u32,
}
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct iour_filter_opinfo {
    pub sz: usize,
    pub nrules: u32,
    pub flags: u32,
    pub default_verdict: u32,
    pub raw_cnt: u32,
}
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct iour_compile_opts {
    pub sz: usize,
    pub flags: u32,
    pub max_insns: u32,
}

// ---- policy.h

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct iour_policy_opts {
    pub sz: usize,
    pub flags: u64,
}

// ---- plan.h

/// iour_apply_opts::flags, iour_plan__apply_task() only: no peer guard.

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct iour_plan_opts {
    pub sz: usize,
    pub flags: u32,
    pub level: u32,
    pub features: *const iour_features,
}
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct iour_plan_info {
    pub sz: usize,
    pub target: u32,
    pub level: u32,
    pub op_last: u32,
    pub reg_last: u32,
    pub split_gates: u32,
    pub flags: u32,
    pub task_steps: u32,
    pub ring_steps: u32,
}
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct iour_plan_step {
    pub sz: usize,
    pub side: u32,
    pub op: u32,
    pub call_op: u32,
    pub nr_args: u32,
    pub opcode: u32,
    pub arg_len: u32,
    pub insn_cnt: u32,
    pub entries: u32,
}
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct iour_apply_opts {
    pub sz: usize,
    pub flags: u64,
}

// ---- report.h

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct iour_decision {
    pub sz: usize,
    pub kind: u32,
    pub reason: u32,
    pub opcode: u32,
    pub step: u32,
    pub value: i32,
    pub pad: u32,
    pub text: *const c_char,
}

// ---- companion.h

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct iour_companion_opts {
    pub sz: usize,
    pub flags: u32,
    pub errno_value: u32,
}

// ---- broker.h

/// Opaque ring broker.
#[repr(C)]
pub struct iour_broker {
    _private: [u8; 0],
    _marker: PhantomData<(*mut u8, PhantomPinned)>,
}


#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct iour_broker_event {
    pub sz: usize,
    pub pid: c_int,
    pub entries: u32,
    pub setup_flags: u32,
    pub result: c_int,
    pub what: *const c_char,
}

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct iour_broker_opts {
    pub sz: usize,
    pub flags: u32,
    pub on_ring: Option<unsafe extern "C" fn(arg: *mut c_void, ev: *const iour_broker_event)>,
    pub arg: *mut c_void,
    pub deadline_ms: u32,
    pub max_workers: u32,
    pub process_workers: u32,
    pub max_rings: u32,
}

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct iour_broker_counters {
    pub sz: usize,
    pub notifications: u64,
    pub served: u64,
    pub refused: u64,
    pub refused_flags: u64,
    pub refused_kernel: u64,
    pub refused_memory: u64,
    pub gone: u64,
    pub refused_deadline: u64,
    pub refused_busy: u64,
    pub refused_accounting: u64,
    pub deferred: u64,
    pub refused_quota: u64,
}

// ---- verify.h

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct iour_verify_req {
    pub sz: usize,
    pub opcode: u32,
    pub expect: u32,
    pub sqe_flags: u32,
    pub family: i32,
    pub r#type: i32,
    pub protocol: i32,
    pub open_flags: u64,
    pub open_mode: u64,
    pub open_resolve: u64,
    pub path: *const c_char,
    pub addr: *const c_void,
    pub addrlen: u32,
    pub resv: u32,
}
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct iour_verify_result {
    pub res: i32,
    pub status: u32,
    pub observed: u32,
    pub resv: u32,
}
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct iour_verify_coverage {
    pub sz: usize,
    pub flags: u32,
    pub op_last: u32,
    pub n_allowed: u32,
    pub n_tried: u32,
    pub n_untried: u32,
    pub n_unpreparable: u32,
    pub allowed: [u64; 4],
    pub tried: [u64; 4],
    pub untried: [u64; 4],
    pub unpreparable: [u64; 4],
    pub denied_tried: [u64; 4],
}
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct iour_verify_opts {
    pub sz: usize,
    pub flags: u32,
    pub ring_fd: i32,
    pub ring_flags: u32,
    pub timeout_ms: u32,
    pub exec_path: *const c_char,
    pub exec_argv: *const *mut c_char,
    pub exec_envp: *const *mut c_char,
    pub ruleset: *const iour_ruleset,
    pub coverage: *mut iour_verify_coverage,
}

// ---- policyfile.h

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct iour_policy_load_opts {
    pub sz: usize,
    pub flags: u64,
    pub origin: *const c_char,
    pub kernel: u32,
    /// Must be 0 (fills the tail padding; see policyfile.h).
    pub reserved: u32,
}
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct iour_load_error {
    pub sz: usize,
    pub line: u32,
    pub column: u32,
    pub offset: u64,
    pub path: [c_char; IOUR_LOAD_ERROR_PATH as usize],
    pub message: [c_char; IOUR_LOAD_ERROR_MSG as usize],
}
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct iour_request_verdict {
    pub sz: usize,
    pub verdict: u32,
    pub reason: u32,
    pub opcode: u32,
    pub rule: u32,
}
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct iour_group_info {
    pub sz: usize,
    pub name: *const c_char,
    pub help: *const c_char,
    pub source: *const c_char,
    pub nops: u32,
    pub nregister_ops: u32,
}

// ---- schema.h

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct iour_payload_info {
    pub sz: usize,
    pub group: *const c_char,
    pub opcode: u32,
    pub pdu_size: u32,
    pub level: u32,
    pub since: u32,
}
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct iour_field_info {
    pub sz: usize,
    pub name: *const c_char,
    pub group: *const c_char,
    pub prefix: *const c_char,
    pub mask: u64,
    pub valid: u64,
    pub id: u32,
    pub kind: u32,
    pub offset: u32,
    pub size: u32,
    pub order: u32,
}
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct iour_const_info {
    pub sz: usize,
    pub name: *const c_char,
    pub ns: *const c_char,
    pub value: u64,
    pub since: u32,
}

// ---- layout.h

/// One row of the library's layout table (`iour_abi_layout()`).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct iour_layout_field {
    pub r#type: *const c_char,
    pub field: *const c_char,
    pub offset: u32,
    pub size: u32,
    pub align: u32,
    pub resv: u32,
}

/// All zeroes, with `sz` (where the struct has it) set to the struct's size.
macro_rules! zeroed_default {
    ($($t:ident),* ; $($s:ident),*) => {
        $(impl Default for $t {
            fn default() -> Self {
                // SAFETY: integers and raw pointers: all-zero is valid.
                unsafe { mem::zeroed() }
            }
        })*
        $(impl Default for $s {
            fn default() -> Self {
                // SAFETY: as above.
                let mut v: Self = unsafe { mem::zeroed() };
                v.sz = mem::size_of::<Self>();
                v
            }
        })*
    };
}
zeroed_default!(iour_restriction, iour_insn, iour_verify_result, iour_layout_field;
    iour_ruleset_opts,
    iour_clamp_report,
    iour_export_opts,
    iour_ring_report,
    iour_ring_apply_opts,
    iour_ring_create_opts,
    iour_features,
    iour_probe_opts,
    iour_validate_info,
    iour_sim_result,
    iour_cmp,
    iour_filter_opts,
    iour_filter_opinfo,
    iour_compile_opts,
    iour_policy_opts,
    iour_plan_opts,
    iour_plan_info,
    iour_plan_step,
    iour_apply_opts,
    iour_decision,
    iour_companion_opts,
    iour_broker_event,
    iour_broker_opts,
    iour_broker_counters,
    iour_verify_req,
    iour_verify_coverage,
    iour_verify_opts,
    iour_policy_load_opts,
    iour_load_error,
    iour_request_verdict,
    iour_group_info,
    iour_payload_info,
    iour_field_info,
    iour_const_info);
extern "C" {

    // ---- version.h

    pub fn iour_version_major() -> c_uint;
    pub fn iour_version_minor() -> c_uint;
    pub fn iour_version_patch() -> c_uint;
    pub fn iour_version_string() -> *const c_char;

    // ---- errors.h

    pub fn iour_strerror(err: c_int, buf: *mut c_char, len: usize) -> c_int;
    pub fn iour_strerror_desc(err: c_int) -> *const c_char;
    pub fn iour_errname(err: c_int) -> *const c_char;
    pub fn iour_errdetail(function: *const c_char, err: c_int) -> *const c_char;

    // ---- names.h

    pub fn iour_opcode_from_name(name: *const c_char) -> c_int;
    pub fn iour_opcode_name(op: u32) -> *const c_char;
    pub fn iour_opcode_since(op: u32) -> c_int;
    pub fn iour_opcode_last(kver: u32) -> c_int;
    pub fn iour_opcodes_up_to(kver: u32, ops: *mut u32, cap: usize) -> c_int;
    /// Since 1.1.
    pub fn iour_opcode_forces_async(op: u32) -> c_int;
    pub fn iour_register_op_from_name(name: *const c_char) -> c_int;
    pub fn iour_register_op_name(op: u32) -> *const c_char;
    pub fn iour_register_op_since(op: u32) -> c_int;
    pub fn iour_register_op_last(kver: u32) -> c_int;
    pub fn iour_register_ops_up_to(kver: u32, ops: *mut u32, cap: usize) -> c_int;
    pub fn iour_sqe_flag_from_name(name: *const c_char) -> c_int;
    pub fn iour_name_suggest(kind: u32, name: *const c_char) -> *const c_char;
    pub fn iour_sqe_flag_name(flag: u32) -> *const c_char;
    pub fn iour_sqe_flag_since(flag: u32) -> c_int;
    pub fn iour_sqe_flags_up_to(kver: u32) -> c_int;

    // ---- ruleset.h

    pub fn iour_ruleset__new(opts: *const iour_ruleset_opts, out: *mut *mut iour_ruleset) -> c_int;
    pub fn iour_ruleset__free(rs: *mut iour_ruleset);
    pub fn iour_ruleset__dup(rs: *const iour_ruleset, out: *mut *mut iour_ruleset) -> c_int;
    pub fn iour_ruleset__allow_sqe_op(rs: *mut iour_ruleset, op: u32) -> c_int;
    pub fn iour_ruleset__allow_sqe_op_name(rs: *mut iour_ruleset, name: *const c_char) -> c_int;
    pub fn iour_ruleset__allow_register_op(rs: *mut iour_ruleset, op: u32) -> c_int;
    pub fn iour_ruleset__allow_register_op_name(
        rs: *mut iour_ruleset,
        name: *const c_char,
    ) -> c_int;
    pub fn iour_ruleset__deny_all_sqe_ops(rs: *mut iour_ruleset) -> c_int;
    pub fn iour_ruleset__deny_all_register_ops(rs: *mut iour_ruleset) -> c_int;
    pub fn iour_ruleset__set_sqe_flags(rs: *mut iour_ruleset, allowed: u32, required: u32)
        -> c_int;
    pub fn iour_ruleset__sqe_op_allowed(rs: *const iour_ruleset, op: u32) -> c_int;
    pub fn iour_ruleset__register_op_allowed(rs: *const iour_ruleset, op: u32) -> c_int;
    pub fn iour_ruleset__sqe_restricted(rs: *const iour_ruleset) -> c_int;
    pub fn iour_ruleset__register_restricted(rs: *const iour_ruleset) -> c_int;
    pub fn iour_ruleset__sqe_flags(
        rs: *const iour_ruleset,
        allowed: *mut u32,
        required: *mut u32,
    ) -> c_int;
    pub fn iour_ruleset__export(
        rs: *const iour_ruleset,
        opts: *const iour_export_opts,
        buf: *mut c_void,
        len: *mut usize,
    ) -> c_int;

    // ---- ring.h

    pub fn iour_ring_apply(
        ring_fd: c_int,
        rs: *const iour_ruleset,
        opts: *const iour_ring_apply_opts,
    ) -> c_int;
    pub fn iour_ring_enable(ring_fd: c_int) -> c_int;
    pub fn iour_ring_create(
        entries: u32,
        params: *mut c_void,
        rs: *const iour_ruleset,
        opts: *const iour_ring_create_opts,
        ring_fd: *mut c_int,
    ) -> c_int;

    // ---- probe.h

    pub fn iour_probe(opts: *const iour_probe_opts, out: *mut iour_features) -> c_int;
    pub fn iour_feature_level() -> c_int;
    pub fn iour_feature_level_str(level: c_int) -> *const c_char;
    pub fn iour_avail_str(avail: u32) -> *const c_char;
    /// Since 1.1.
    pub fn iour_kernel_describe(kver: u32, out: *mut iour_features) -> c_int;
    /// Since 1.1.
    pub fn iour_kernel_generation(gen: u32) -> c_int;
    /// Since 1.1.
    pub fn iour_level_kernel(level: u32) -> c_int;
    /// Since 1.1.
    pub fn iour_kernel_split_gates(kver: u32) -> c_int;

    // ---- rules.h (all since 1.1)
    pub fn iour_rule_field(
        name: *const c_char,
        opcode: u32,
        id: *mut u32,
        err: *mut iour_rule_error,
    ) -> c_int;
    pub fn iour_rule_op(name: *const c_char, op: *mut u32) -> c_int;
    pub fn iour_rule_value(
        text: *const c_char,
        field: u32,
        c: *mut iour_cmp,
        err: *mut iour_rule_error,
    ) -> c_int;
    pub fn iour_rule_prefix(
        text: *const c_char,
        field: u32,
        c: *mut iour_cmp,
        err: *mut iour_rule_error,
    ) -> c_int;
    pub fn iour_rule_parse(
        text: *const c_char,
        opcode: u32,
        out: *mut *mut iour_rule,
        err: *mut iour_rule_error,
    ) -> c_int;
    pub fn iour_rule_cmps(rule: *const iour_rule, cmps: *mut *const iour_cmp) -> c_int;
    pub fn iour_rule_warning(rule: *const iour_rule) -> *const c_char;
    pub fn iour_rule_free(rule: *mut iour_rule);
    pub fn iour_rule_ctx(
        text: *const c_char,
        opcode: u32,
        ctx: *mut u8,
        len: usize,
        err: *mut iour_rule_error,
    ) -> c_int;

    // ---- cbpf.h

    pub fn iour_cbpf_validate(
        insns: *const iour_insn,
        cnt: usize,
        flags: u32,
        info: *mut iour_validate_info,
    ) -> c_int;
    pub fn iour_cbpf_reject_str(reason: u32) -> *const c_char;
    pub fn iour_cbpf_run(
        insns: *const iour_insn,
        cnt: usize,
        ctx: *const u8,
        ctx_len: usize,
        res: *mut iour_sim_result,
    ) -> c_int;
    pub fn iour_ctx_generic(
        ctx: *mut u8,
        len: usize,
        opcode: u32,
        sqe_flags: u32,
        user_data: u64,
    ) -> c_int;
    pub fn iour_ctx_socket(
        ctx: *mut u8,
        len: usize,
        family: u32,
        type_: u32,
        protocol: u32,
    ) -> c_int;
    pub fn iour_ctx_open(ctx: *mut u8, len: usize, flags: u64, mode: u64, resolve: u64) -> c_int;
    pub fn iour_ctx_connect(ctx: *mut u8, len: usize, addr: *const c_void, addr_len: u32) -> c_int;
    pub fn iour_cbpf_disasm(
        insns: *const iour_insn,
        cnt: usize,
        opcode: u32,
        format: u32,
        buf: *mut c_char,
        len: *mut usize,
    ) -> c_int;

    // ---- filter.h

    pub fn iour_filter__new(opts: *const iour_filter_opts, out: *mut *mut iour_filter) -> c_int;
    pub fn iour_filter__free(f: *mut iour_filter);
    pub fn iour_filter__dup(f: *const iour_filter, out: *mut *mut iour_filter) -> c_int;
    pub fn iour_filter__add_rule(
        f: *mut iour_filter,
        opcode: u32,
        verdict: u32,
        cmps: *const iour_cmp,
        ncmps: usize,
    ) -> c_int;
    pub fn iour_filter__set_default(f: *mut iour_filter, opcode: u32, verdict: u32) -> c_int;
    pub fn iour_filter__set_raw(
        f: *mut iour_filter,
        opcode: u32,
        insns: *const iour_insn,
        cnt: usize,
    ) -> c_int;
    pub fn iour_filter__opcodes(f: *const iour_filter, buf: *mut u32, cap: usize) -> c_int;
    pub fn iour_filter__opcode_info(
        f: *const iour_filter,
        opcode: u32,
        info: *mut iour_filter_opinfo,
    ) -> c_int;
    pub fn iour_filter__compile(
        f: *const iour_filter,
        opcode: u32,
        opts: *const iour_compile_opts,
        out: *mut *mut iour_prog,
    ) -> c_int;
    pub fn iour_prog__insns(p: *const iour_prog) -> *const iour_insn;
    pub fn iour_prog__insn_cnt(p: *const iour_prog) -> usize;
    pub fn iour_prog__opcode(p: *const iour_prog) -> u32;
    pub fn iour_prog__kind(p: *const iour_prog) -> u32;
    pub fn iour_prog__pdu_size(p: *const iour_prog) -> u32;
    pub fn iour_prog__free(p: *mut iour_prog);

    // ---- policy.h

    pub fn iour_policy__new(opts: *const iour_policy_opts, out: *mut *mut iour_policy) -> c_int;
    pub fn iour_policy__free(p: *mut iour_policy);
    pub fn iour_policy__dup(p: *const iour_policy, out: *mut *mut iour_policy) -> c_int;
    pub fn iour_policy__set_ruleset(p: *mut iour_policy, rs: *const iour_ruleset) -> c_int;
    pub fn iour_policy__get_ruleset(p: *const iour_policy, out: *mut *mut iour_ruleset) -> c_int;
    pub fn iour_policy__set_filter(p: *mut iour_policy, f: *const iour_filter) -> c_int;
    pub fn iour_policy__set_prog(
        p: *mut iour_policy,
        opcode: u32,
        insns: *const iour_insn,
        cnt: usize,
        pdu_size: u32,
    ) -> c_int;
    pub fn iour_policy__set_attr(p: *mut iour_policy, attr: u32, value: u32) -> c_int;
    pub fn iour_policy__get_attr(p: *const iour_policy, attr: u32, value: *mut u32) -> c_int;
    pub fn iour_policy__prog_cnt(p: *const iour_policy, opcode: u32) -> c_int;
    pub fn iour_policy_attr_bounds(attr: u32, min: *mut u32, max: *mut u32, def: *mut u32)
        -> c_int;

    // ---- plan.h

    pub fn iour_policy__plan(
        p: *const iour_policy,
        opts: *const iour_plan_opts,
        out: *mut *mut iour_plan,
    ) -> c_int;
    pub fn iour_plan__free(plan: *mut iour_plan);
    pub fn iour_plan__info(plan: *const iour_plan, info: *mut iour_plan_info) -> c_int;
    pub fn iour_plan__step_cnt(plan: *const iour_plan) -> c_int;
    pub fn iour_plan__step(plan: *const iour_plan, i: usize, out: *mut iour_plan_step) -> c_int;
    pub fn iour_plan__step_arg(
        plan: *const iour_plan,
        i: usize,
        buf: *mut c_void,
        len: *mut usize,
    ) -> c_int;
    pub fn iour_plan__get_ruleset(
        plan: *const iour_plan,
        side: u32,
        out: *mut *mut iour_ruleset,
    ) -> c_int;
    pub fn iour_plan__step_insns(
        plan: *const iour_plan,
        i: usize,
        buf: *mut iour_insn,
        cnt: *mut usize,
    ) -> c_int;
    pub fn iour_plan__describe(plan: *const iour_plan, buf: *mut c_char, len: *mut usize) -> c_int;
    pub fn iour_plan__report(plan: *const iour_plan) -> *const iour_report;
    pub fn iour_plan__apply_task(
        plan: *const iour_plan,
        opts: *const iour_apply_opts,
        report: *mut *mut iour_report,
    ) -> c_int;
    pub fn iour_plan__apply_ring(
        plan: *const iour_plan,
        ring_fd: c_int,
        opts: *const iour_apply_opts,
        report: *mut *mut iour_report,
    ) -> c_int;
    pub fn iour_plan__create_ring(
        plan: *const iour_plan,
        entries: u32,
        params: *mut c_void,
        opts: *const iour_apply_opts,
        ring_fd: *mut c_int,
        report: *mut *mut iour_report,
    ) -> c_int;

    // ---- report.h

    pub fn iour_report__free(r: *mut iour_report);
    pub fn iour_report__status(r: *const iour_report) -> c_int;
    pub fn iour_report__mechanism(r: *const iour_report) -> c_int;
    pub fn iour_report__flags(r: *const iour_report) -> c_int;
    pub fn iour_report__steps(r: *const iour_report, done: *mut u32, total: *mut u32) -> c_int;
    pub fn iour_report__error(r: *const iour_report, err: *mut i32) -> c_int;
    pub fn iour_report__threads(r: *const iour_report) -> c_int;
    pub fn iour_report__decision_cnt(r: *const iour_report) -> c_int;
    pub fn iour_report__decision(r: *const iour_report, i: usize, out: *mut iour_decision)
        -> c_int;
    pub fn iour_report__describe(r: *const iour_report, buf: *mut c_char, len: *mut usize)
        -> c_int;
    pub fn iour_status_str(status: c_int) -> *const c_char;
    pub fn iour_decision_kind_str(kind: u32) -> *const c_char;
    pub fn iour_reason_str(reason: u32) -> *const c_char;

    // ---- companion.h

    pub fn iour_companion_install(opts: *const iour_companion_opts) -> c_int;
    pub fn iour_companion_program(
        opts: *const iour_companion_opts,
        insns: *mut iour_insn,
        cnt: usize,
    ) -> c_int;
    pub fn iour_task_thread_count() -> c_int;
    pub fn iour_ring_fds(fds: *mut c_int, cnt: usize) -> c_int;
    pub fn iour_ring_fds_close(flags: u32) -> c_int;

    // ---- broker.h

    pub fn iour_broker__install(opts: *const iour_broker_opts, listener_fd: *mut c_int) -> c_int;
    pub fn iour_broker__new(
        plan: *const iour_plan,
        listener_fd: c_int,
        opts: *const iour_broker_opts,
        out: *mut *mut iour_broker,
    ) -> c_int;
    pub fn iour_broker__fd(b: *const iour_broker) -> c_int;
    pub fn iour_broker__serve(b: *mut iour_broker) -> c_int;
    pub fn iour_broker__counters(b: *const iour_broker, out: *mut iour_broker_counters) -> c_int;
    pub fn iour_broker__free(b: *mut iour_broker);

    // ---- verify.h

    pub fn iour_verify(
        reqs: *const iour_verify_req,
        nr: usize,
        results: *mut iour_verify_result,
        opts: *const iour_verify_opts,
    ) -> c_int;
    pub fn iour_verify_serve() -> c_int;

    // ---- layout.h
    pub fn iour_abi_layout(cnt: *mut usize) -> *const iour_layout_field;

    // ---- policyfile.h

    pub fn iour_policy__load_json(
        text: *const c_char,
        len: usize,
        opts: *const iour_policy_load_opts,
        out: *mut *mut iour_policy,
        err: *mut iour_load_error,
    ) -> c_int;
    pub fn iour_policy__load_file(
        path: *const c_char,
        opts: *const iour_policy_load_opts,
        out: *mut *mut iour_policy,
        err: *mut iour_load_error,
    ) -> c_int;
    pub fn iour_policy__save_json(
        p: *const iour_policy,
        flags: u64,
        buf: *mut c_char,
        size: usize,
    ) -> c_int;
    pub fn iour_policy__decide(
        p: *const iour_policy,
        ctx: *const u8,
        ctx_len: usize,
        out: *mut iour_request_verdict,
    ) -> c_int;
    pub fn iour_group_count() -> c_int;
    pub fn iour_group_get(idx: usize, info: *mut iour_group_info) -> c_int;
    pub fn iour_group_find(name: *const c_char) -> c_int;

    // ---- schema.h

    pub fn iour_payload_count() -> c_int;
    pub fn iour_payload_get(idx: usize, info: *mut iour_payload_info) -> c_int;
    pub fn iour_payload_find(opcode: u32) -> c_int;
    pub fn iour_field_count() -> c_int;
    pub fn iour_field_get(idx: usize, info: *mut iour_field_info) -> c_int;
    pub fn iour_field_find(name: *const c_char) -> c_int;
    pub fn iour_field_index(id: u32) -> c_int;
    pub fn iour_field_applies(id: u32, opcode: u32) -> c_int;
    pub fn iour_const_count() -> c_int;
    pub fn iour_const_get(idx: usize, info: *mut iour_const_info) -> c_int;
    pub fn iour_const_find(name: *const c_char) -> c_int;
    pub fn iour_group_opcodes(idx: usize, kver: u32, ops: *mut u32, cap: usize) -> c_int;
    pub fn iour_group_register_ops(idx: usize, kver: u32, ops: *mut u32, cap: usize) -> c_int;
}
