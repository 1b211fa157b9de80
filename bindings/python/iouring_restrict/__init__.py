# SPDX-License-Identifier: MIT
"""Python bindings of libiouring-restrict (ctypes, no compiler needed).

The shared library is loaded by its SONAME (libiouring-restrict.so.1), or
from the path in $IOURING_RESTRICT_LIBRARY, or from the build tree these
bindings sit in.  At import every struct declared here is checked against
the library's own layout table (iour_abi_layout()); a mismatch raises
:class:`LayoutError` instead of corrupting memory later.

    import iouring_restrict as ir
    with ir.Ruleset() as rs:
        rs.allow_sqe_op("READ", ir.Op.WRITE).set_sqe_flags(0, 0)
        ring, report = ir.ring_create(rs)
"""
from .enums import *  # noqa: F401,F403
from .enums import __all__ as _enums_all
from .errors import IourError, LayoutError, LibraryError, UnknownNameError, error_from_code
from ._api import (BROKER_ALL_THREADS, BROKER_ALLOW_PTRACE, BROKER_NONBLOCK, Broker, BrokerCounters, BrokerEvent, broker_install)
from ._api import (CTX_SIZE, OPCODE_ANY, Cmp, Decision, Features, Filter, Insn, Plan,
                   PlanInfo, PlanStep, Policy, Program, Report, Ring, RingReport, Ruleset,
                   SimResult, ValidateInfo, VerifyReq, VerifyResult, cbpf_disasm, cbpf_run,
                   cbpf_validate, ctx_connect, ctx_generic, ctx_open, ctx_socket, errname,
                   feature_level, kernel_describe, kver, opcode, opcode_name, opcode_since, opcodes_up_to,
                   probe, register_op, RequestVerdict, Group, groups, group, register_op_name, ring_apply, ring_create, ring_enable,
                   sqe_flag, sqe_flag_name, strerror, task_thread_count, verify, version,
                   version_info, lib, LAYOUT)

__version__ = "1.1.0"

__all__ = list(_enums_all) + [
    "IourError", "LayoutError", "LibraryError", "UnknownNameError", "error_from_code", "CTX_SIZE", "OPCODE_ANY",
    "Cmp", "Decision", "Features", "Filter", "Insn", "Plan", "PlanInfo", "PlanStep", "Policy",
    "Program", "Report", "Ring", "RingReport", "Ruleset", "SimResult", "ValidateInfo",
    "VerifyReq", "VerifyResult", "cbpf_disasm", "cbpf_run", "cbpf_validate", "ctx_connect",
    "ctx_generic", "ctx_open", "ctx_socket", "errname", "feature_level", "kernel_describe", "kver", "opcode",
    "opcode_name", "opcode_since", "opcodes_up_to", "probe", "register_op",
    "register_op_name", "ring_apply", "ring_create", "ring_enable", "sqe_flag",
    "sqe_flag_name", "strerror", "task_thread_count", "verify", "version", "version_info",
    "lib", "LAYOUT", "RequestVerdict", "Group", "groups", "group",
    "BROKER_ALL_THREADS", "BROKER_ALLOW_PTRACE", "BROKER_NONBLOCK", "Broker", "BrokerCounters", "BrokerEvent", "broker_install",
]
