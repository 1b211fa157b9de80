# SPDX-License-Identifier: MIT
"""The library's enumerations and flag sets.  Their members are written
from the C headers and the library's tables by `make generate`
(scripts/gen-bindings.py); check-generate fails when they are stale."""
import enum as _enum

_NUMERIC = "bcdoxXneEfFgG%"


class IntEnum(_enum.IntEnum):
    """An int that prints its name: ``print(report.status)`` shows
    ``FULLY``, ``repr()`` ``<Status.FULLY: 2>``; ``int()``, ``%d`` and
    ``f"{x:d}"`` give the number."""

    def __str__(self):
        return self.name

    def __format__(self, spec):
        if spec and spec[-1] in _NUMERIC:
            return format(int(self), spec)
        return format(str(self), spec)


class IntFlag(_enum.IntFlag):
    """A flag set that prints its members' names joined by "|" (bits no
    member names as hex, "0" for none); numbers as for IntEnum."""

    def __str__(self):
        v = int(self)
        if v == 0:
            return "0"
        names = []
        for m in type(self).__members__.values():
            # single bits only: composite aliases would repeat them
            if m.value and m.value & (m.value - 1) == 0 and v & m.value:
                names.append(m.name)
                v &= ~m.value
        if v:
            names.append(hex(v))
        return "|".join(names)

    def __format__(self, spec):
        if spec and spec[-1] in _NUMERIC:
            return format(int(self), spec)
        return format(str(self), spec)


__all__ = [
    "Op", "RegisterOp", "SqeFlag", "Verdict", "Field", "CmpOp", "ProgKind",
    "DisasmFormat", "Reject", "Status", "DecisionKind", "Reason", "Effect", "Mechanism",
    "ReportFlag", "FeatureLevel", "Avail", "LimitsSource", "PolicyAttr",
    "Target", "Compat", "Nnp", "Fallback", "Threads", "Companion",
    "DefaultVerdict", "StepOp", "StepSide", "Expect", "VerifyStatus",
    "ErrorCode", "RestrictionKind", "FeaturesFlag", "CompanionFlag",
    "ExportFlag", "PlanInfoFlag", "DecideReason",
]

# BEGIN GENERATED py-ops: scripts/gen-bindings.py (make generate), do not edit
_OPS = (
    "NOP", "READV", "WRITEV", "FSYNC", "READ_FIXED", "WRITE_FIXED", "POLL_ADD",
    "POLL_REMOVE", "SYNC_FILE_RANGE", "SENDMSG", "RECVMSG", "TIMEOUT",
    "TIMEOUT_REMOVE", "ACCEPT", "ASYNC_CANCEL", "LINK_TIMEOUT", "CONNECT",
    "FALLOCATE", "OPENAT", "CLOSE", "FILES_UPDATE", "STATX", "READ", "WRITE",
    "FADVISE", "MADVISE", "SEND", "RECV", "OPENAT2", "EPOLL_CTL", "SPLICE",
    "PROVIDE_BUFFERS", "REMOVE_BUFFERS", "TEE", "SHUTDOWN", "RENAMEAT",
    "UNLINKAT", "MKDIRAT", "SYMLINKAT", "LINKAT", "MSG_RING", "FSETXATTR",
    "SETXATTR", "FGETXATTR", "GETXATTR", "SOCKET", "URING_CMD", "SEND_ZC",
    "SENDMSG_ZC", "READ_MULTISHOT", "WAITID", "FUTEX_WAIT", "FUTEX_WAKE",
    "FUTEX_WAITV", "FIXED_FD_INSTALL", "FTRUNCATE", "BIND", "LISTEN",
    "RECV_ZC", "EPOLL_WAIT", "READV_FIXED", "WRITEV_FIXED", "PIPE", "NOP128",
    "URING_CMD128",
)
# END GENERATED py-ops

#: Request opcodes (enum iour_op, the kernel's IORING_OP_*).
Op = IntEnum("Op", [(n, i) for i, n in enumerate(_OPS)], module=__name__)

# BEGIN GENERATED py-regs: scripts/gen-bindings.py (make generate), do not edit
_REGS = (
    "REGISTER_BUFFERS", "UNREGISTER_BUFFERS", "REGISTER_FILES",
    "UNREGISTER_FILES", "REGISTER_EVENTFD", "UNREGISTER_EVENTFD",
    "REGISTER_FILES_UPDATE", "REGISTER_EVENTFD_ASYNC", "REGISTER_PROBE",
    "REGISTER_PERSONALITY", "UNREGISTER_PERSONALITY", "REGISTER_RESTRICTIONS",
    "REGISTER_ENABLE_RINGS", "REGISTER_FILES2", "REGISTER_FILES_UPDATE2",
    "REGISTER_BUFFERS2", "REGISTER_BUFFERS_UPDATE", "REGISTER_IOWQ_AFF",
    "UNREGISTER_IOWQ_AFF", "REGISTER_IOWQ_MAX_WORKERS", "REGISTER_RING_FDS",
    "UNREGISTER_RING_FDS", "REGISTER_PBUF_RING", "UNREGISTER_PBUF_RING",
    "REGISTER_SYNC_CANCEL", "REGISTER_FILE_ALLOC_RANGE",
    "REGISTER_PBUF_STATUS", "REGISTER_NAPI", "UNREGISTER_NAPI",
    "REGISTER_CLOCK", "REGISTER_CLONE_BUFFERS", "REGISTER_SEND_MSG_RING",
    "REGISTER_ZCRX_IFQ", "REGISTER_RESIZE_RINGS", "REGISTER_MEM_REGION",
    "REGISTER_QUERY", "REGISTER_ZCRX_CTRL", "REGISTER_BPF_FILTER",
)
# END GENERATED py-regs

#: Register opcodes (enum iour_register_op, IORING_REGISTER_* and
#: IORING_UNREGISTER_*).
RegisterOp = IntEnum("RegisterOp", [(n, i) for i, n in enumerate(_REGS)],
                     module=__name__)


class SqeFlag(IntFlag):
    """SQE flags (enum iour_sqe_flag, IOSQE_*)."""
    # BEGIN GENERATED py-sqe-flags: scripts/gen-bindings.py (make generate), do not edit
    FIXED_FILE = 0x01
    IO_DRAIN = 0x02
    IO_LINK = 0x04
    IO_HARDLINK = 0x08
    ASYNC = 0x10
    BUFFER_SELECT = 0x20
    CQE_SKIP_SUCCESS = 0x40
    # END GENERATED py-sqe-flags


class Verdict(IntEnum):
    # BEGIN GENERATED py-enum-Verdict: scripts/gen-bindings.py (make generate), do not edit
    DENY = 0
    ALLOW = 1
    # END GENERATED py-enum-Verdict


class Field(IntEnum):
    """What a filter comparison reads (enum iour_field)."""
    # BEGIN GENERATED py-fields: scripts/gen-bindings.py (make generate), do not edit
    USER_DATA = 1
    SQE_FLAGS = 2
    SOCKET_FAMILY = 16
    SOCKET_TYPE = 17
    SOCKET_TYPE_FLAGS = 18
    SOCKET_TYPE_RAW = 19
    SOCKET_PROTOCOL = 20
    OPEN_FLAGS = 32
    OPEN_ACCMODE = 33
    OPEN_MODE = 34
    OPEN_RESOLVE = 35
    CONNECT_FAMILY = 48
    CONNECT_PORT = 49
    CONNECT_ADDR4 = 50
    CONNECT_ADDR6 = 51
    # END GENERATED py-fields


class CmpOp(IntEnum):
    """Comparison operators (enum iour_cmp_op)."""
    # BEGIN GENERATED py-enum-CmpOp: scripts/gen-bindings.py (make generate), do not edit
    EQ = 1
    NE = 2
    LT = 3
    LE = 4
    GT = 5
    GE = 6
    MASKED_EQ = 7
    ANY_BITS = 8
    ALL_BITS = 9
    NONE_BITS = 10
    IN_SET = 11
    NOT_IN_SET = 12
    IN_RANGE = 13
    NOT_IN_RANGE = 14
    IN_PREFIX = 15
    NOT_IN_PREFIX = 16
    # END GENERATED py-enum-CmpOp


class ProgKind(IntEnum):
    # BEGIN GENERATED py-enum-ProgKind: scripts/gen-bindings.py (make generate), do not edit
    FILTER = 0
    ALWAYS_ALLOW = 1
    ALWAYS_DENY = 2
    # END GENERATED py-enum-ProgKind


class DisasmFormat(IntEnum):
    # BEGIN GENERATED py-enum-DisasmFormat: scripts/gen-bindings.py (make generate), do not edit
    TEXT = 0
    C_ARRAY = 1
    RAW = 2
    # END GENERATED py-enum-DisasmFormat


class Reject(IntEnum):
    """Why the cBPF validator refused a program (enum iour_cbpf_reject)."""
    # BEGIN GENERATED py-enum-Reject: scripts/gen-bindings.py (make generate), do not edit
    OK = 0
    LENGTH = 1
    CODE = 2
    NOT_ALLOWED = 3
    LOAD_OFFSET = 4
    DIV_ZERO = 5
    SHIFT = 6
    MEM_INDEX = 7
    JUMP = 8
    NO_RET = 9
    MEM_UNINIT = 10
    # END GENERATED py-enum-Reject


class Status(IntEnum):
    """A report's enforcement status (enum iour_status)."""
    # BEGIN GENERATED py-enum-Status: scripts/gen-bindings.py (make generate), do not edit
    NOT_ENFORCED = 0
    PARTIALLY = 1
    FULLY = 2
    # END GENERATED py-enum-Status


class DecisionKind(IntEnum):
    # BEGIN GENERATED py-enum-DecisionKind: scripts/gen-bindings.py (make generate), do not edit
    DROPPED = 1
    TIGHTENED = 2
    LOOSENED = 3
    CLAMPED = 4
    NEGOTIATED = 5
    NOTE = 6
    FAILED = 7
    # END GENERATED py-enum-DecisionKind


class Reason(IntEnum):
    # BEGIN GENERATED py-enum-Reason: scripts/gen-bindings.py (make generate), do not edit
    NONE = 0
    NO_IO_URING = 1
    NO_RING_RESTRICTIONS = 2
    NO_TASK_RESTRICTIONS = 3
    NO_FILTERS = 4
    NO_PAYLOAD = 5
    UNKNOWN_OPCODE = 6
    COMPANION = 7
    COMPAT_SOFT = 8
    COMPAT_HARD = 9
    THREADS = 10
    STEP_FAILED = 11
    ALREADY_RESTRICTED = 12
    EXISTING_RINGS = 13
    NOT_EXPRESSIBLE = 14
    NNP = 15
    RING_LEFT_DISABLED = 16
    SHADOWED = 17
    KERNEL_MISMATCH = 18
    FIXED_FILES = 19
    EFFECT_CLOSED = 20
    EFFECT_FILTERED = 21
    EFFECT_OPEN = 22
    # END GENERATED py-enum-Reason


class Effect(IntEnum):
    """An effect of a report's effect note (enum iour_effect; the note's
    value): doc/security.md 2.1."""
    # BEGIN GENERATED py-enum-Effect: scripts/gen-bindings.py (make generate), do not edit
    NET_DEST = 1
    FILE_OPEN = 2
    PLAIN_FD = 3
    CROSS_RING = 4
    MEM_REG = 5
    RINGLESS_REG = 6
    # END GENERATED py-enum-Effect


class Mechanism(IntFlag):
    """What enforces a report (IOUR_MECH_*)."""
    # BEGIN GENERATED py-enum-Mechanism: scripts/gen-bindings.py (make generate), do not edit
    NONE = 0
    TASK = 1 << 0
    RING = 1 << 1
    RING_DISABLED = 1 << 2
    COMPANION = 1 << 3
    # END GENERATED py-enum-Mechanism


class ReportFlag(IntFlag):
    """IOUR_REPORT_* flags."""
    # BEGIN GENERATED py-enum-ReportFlag: scripts/gen-bindings.py (make generate), do not edit
    LOOSENED = 1 << 0
    TIGHTENED = 1 << 1
    NNP_SET = 1 << 2
    OTHER_THREADS = 1 << 3
    STOPPED = 1 << 4
    RING_ONLY = 1 << 5
    PLANNED = 1 << 6
    # END GENERATED py-enum-ReportFlag


class FeatureLevel(IntEnum):
    # BEGIN GENERATED py-enum-FeatureLevel: scripts/gen-bindings.py (make generate), do not edit
    NONE = 0
    IO_URING = 1
    RING = 2
    QUERY = 3
    TASK_BPF = 4
    CONNECT = 5
    # END GENERATED py-enum-FeatureLevel


class Avail(IntEnum):
    # BEGIN GENERATED py-enum-Avail: scripts/gen-bindings.py (make generate), do not edit
    NO = 0
    YES = 1
    NO_PRIV = 2
    RESTRICTED = 3
    UNKNOWN = 4
    # END GENERATED py-enum-Avail


class LimitsSource(IntEnum):
    # BEGIN GENERATED py-enum-LimitsSource: scripts/gen-bindings.py (make generate), do not edit
    NONE = 0
    QUERY = 1
    PROBE = 2
    TABLE = 3
    # END GENERATED py-enum-LimitsSource


class FeaturesFlag(IntFlag):
    # BEGIN GENERATED py-enum-FeaturesFlag: scripts/gen-bindings.py (make generate), do not edit
    FORCED = 1 << 0
    FORCE_IGNORED = 1 << 1
    MISMATCH = 1 << 2
    CHILD_DIED = 1 << 3
    SOCKET_FLAGS_HIDDEN = 1 << 4
    TASK_SET_GATES_FILTERS = 1 << 5
    # END GENERATED py-enum-FeaturesFlag


class PolicyAttr(IntEnum):
    # BEGIN GENERATED py-enum-PolicyAttr: scripts/gen-bindings.py (make generate), do not edit
    TARGET = 1
    COMPAT = 2
    NNP = 3
    NO_FILTER_FALLBACK = 4
    THREADS = 5
    COMPANION = 6
    DEFAULT = 7
    # END GENERATED py-enum-PolicyAttr


class Target(IntEnum):
    # BEGIN GENERATED py-enum-Target: scripts/gen-bindings.py (make generate), do not edit
    TASK = 0
    RING = 1
    # END GENERATED py-enum-Target


class Compat(IntEnum):
    """Compatibility levels (enum iour_policy_compat)."""
    # BEGIN GENERATED py-enum-Compat: scripts/gen-bindings.py (make generate), do not edit
    BEST_EFFORT = 0
    SOFT = 1
    HARD = 2
    # END GENERATED py-enum-Compat


class Nnp(IntEnum):
    # BEGIN GENERATED py-enum-Nnp: scripts/gen-bindings.py (make generate), do not edit
    KEEP = 0
    SET = 1
    # END GENERATED py-enum-Nnp


class Fallback(IntEnum):
    # BEGIN GENERATED py-enum-Fallback: scripts/gen-bindings.py (make generate), do not edit
    CLOSED = 0
    OPEN = 1
    # END GENERATED py-enum-Fallback


class Threads(IntEnum):
    # BEGIN GENERATED py-enum-Threads: scripts/gen-bindings.py (make generate), do not edit
    REPORT = 0
    REFUSE = 1
    # END GENERATED py-enum-Threads


class Companion(IntEnum):
    # BEGIN GENERATED py-enum-Companion: scripts/gen-bindings.py (make generate), do not edit
    NONE = 0
    ENOSYS = 1
    EPERM = 2
    # END GENERATED py-enum-Companion


class DefaultVerdict(IntEnum):
    # BEGIN GENERATED py-enum-DefaultVerdict: scripts/gen-bindings.py (make generate), do not edit
    DENY = 0
    ALLOW = 1
    # END GENERATED py-enum-DefaultVerdict


class StepOp(IntEnum):
    # BEGIN GENERATED py-enum-StepOp: scripts/gen-bindings.py (make generate), do not edit
    SET_NNP = 1
    RESTRICTIONS = 2
    BPF_FILTER = 3
    ENABLE_RINGS = 4
    COMPANION = 5
    # END GENERATED py-enum-StepOp


class StepSide(IntEnum):
    # BEGIN GENERATED py-enum-StepSide: scripts/gen-bindings.py (make generate), do not edit
    TASK = 0
    RING = 1
    # END GENERATED py-enum-StepSide


class PlanInfoFlag(IntFlag):
    # BEGIN GENERATED py-enum-PlanInfoFlag: scripts/gen-bindings.py (make generate), do not edit
    FORCED = 1 << 0
    REFUSED = 1 << 1
    # END GENERATED py-enum-PlanInfoFlag


class Expect(IntEnum):
    # BEGIN GENERATED py-enum-Expect: scripts/gen-bindings.py (make generate), do not edit
    ALLOW = 1
    DENY = 2
    # END GENERATED py-enum-Expect


class VerifyStatus(IntEnum):
    # BEGIN GENERATED py-enum-VerifyStatus: scripts/gen-bindings.py (make generate), do not edit
    NOT_RUN = 0
    MATCH = 1
    MISMATCH = 2
    FAILED = 3
    # END GENERATED py-enum-VerifyStatus


class ErrorCode(IntEnum):
    """The library's own error codes (enum iour_errno), 4001 and up."""
    # BEGIN GENERATED py-enum-ErrorCode: scripts/gen-bindings.py (make generate), do not edit
    INTERNAL = 4001
    PROG_TOO_LARGE = 4002
    INVALID_PROG = 4003
    UNSUPPORTED = 4004
    PARTIAL = 4005
    KERNEL_MISMATCH = 4006
    NOT_ENFORCED = 4007
    # END GENERATED py-enum-ErrorCode


class RestrictionKind(IntEnum):
    # BEGIN GENERATED py-enum-RestrictionKind: scripts/gen-bindings.py (make generate), do not edit
    REGISTER_OP = 0
    SQE_OP = 1
    SQE_FLAGS_ALLOWED = 2
    SQE_FLAGS_REQUIRED = 3
    # END GENERATED py-enum-RestrictionKind


class CompanionFlag(IntFlag):
    # BEGIN GENERATED py-enum-CompanionFlag: scripts/gen-bindings.py (make generate), do not edit
    ENTER = 1 << 0
    REGISTER = 1 << 1
    SET_NNP = 1 << 2
    ALL_THREADS = 1 << 3
    # END GENERATED py-enum-CompanionFlag


class ExportFlag(IntFlag):
    # BEGIN GENERATED py-enum-ExportFlag: scripts/gen-bindings.py (make generate), do not edit
    COUPLED = 1 << 0
    SPLIT = 1 << 1
    # END GENERATED py-enum-ExportFlag


class DecideReason(IntEnum):
    """Why iour_policy__decide() gave its verdict (enum iour_decide_reason)."""
    # BEGIN GENERATED py-enum-DecideReason: scripts/gen-bindings.py (make generate), do not edit
    CLASSIC_GATE = 1
    SQE_FLAGS = 2
    RULE = 3
    OPCODE_DEFAULT = 4
    PROGRAM = 5
    CLASSIC_ALLOW = 6
    POLICY_DEFAULT = 7
    # END GENERATED py-enum-DecideReason
