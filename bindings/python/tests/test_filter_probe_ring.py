# SPDX-License-Identifier: MIT
"""Filters (build, compile, disassemble, simulate), probe, enums against
the library's tables, and rings restricted for real on this kernel."""
import errno
import re
import socket
from pathlib import Path

import pytest

import iouring_restrict as ir


def socket_filter():
    return ir.Filter().add_rule(
        "SOCKET", ir.Verdict.ALLOW,
        ir.Cmp(ir.Field.SOCKET_FAMILY, ir.CmpOp.IN_SET,
               values=[socket.AF_INET, socket.AF_INET6]),
        ir.Cmp(ir.Field.SOCKET_TYPE, ir.CmpOp.EQ, socket.SOCK_STREAM))


def test_filter_compile_disassemble_simulate():
    with socket_filter() as f:
        assert f.opcodes() == [ir.Op.SOCKET]
        with f.compile(ir.Op.SOCKET) as prog:
            assert prog.kind is ir.ProgKind.FILTER and prog.opcode == ir.Op.SOCKET
            insns = prog.insns
            assert 3 <= len(insns) <= 4096 and all(isinstance(i, ir.Insn) for i in insns)
            assert prog.validate().ok
            text = prog.disasm()
            assert "ret" in text and len(text.splitlines()) >= len(insns)
            assert "{" in prog.disasm(ir.DisasmFormat.C_ARRAY)
            assert len(prog.disasm(ir.DisasmFormat.RAW)) == 8 * len(insns)
            inet = prog.run(ir.ctx_socket(socket.AF_INET, socket.SOCK_STREAM))
            inet6 = prog.run(ir.ctx_socket(socket.AF_INET6, socket.SOCK_STREAM))
            unix = prog.run(ir.ctx_socket(socket.AF_UNIX, socket.SOCK_STREAM))
            udp = prog.run(ir.ctx_socket(socket.AF_INET, socket.SOCK_DGRAM))
            assert inet.allowed and inet6.allowed
            assert not unix.allowed and not udp.allowed
            assert inet.executed > 0


def test_validator_rejects_a_program_without_return():
    bad = [ir.Insn(0x20, 0, 0, 0)]  # ld [0], no ret
    v = ir.cbpf_validate(bad)
    assert not v.ok and v.reason is ir.Reject.NO_RET and v.message


def test_probe_answers_as_a_dataclass():
    f = ir.probe()
    assert f.op_last > ir.Op.SOCKET  # this kernel (6.18) knows SOCKET
    assert f.feature_level >= ir.FeatureLevel.RING
    assert f.avail("ring_restrictions") is ir.Avail.YES
    assert f.op_supported("NOP") and f.op_supported(ir.Op.READ)
    assert isinstance(f.supported_ops, tuple) and len(f.supported_ops) == 4
    assert ir.feature_level() == f.level


def test_kernel_describe_from_the_tables():
    """iour_kernel_describe(): the ladder and the payload sizes of a
    described version, and bad input."""
    f = ir.kernel_describe(ir.kver(7, 2))
    assert f.feature_level is ir.FeatureLevel.CONNECT
    assert (f.pdu_socket, f.pdu_openat, f.pdu_connect) == (12, 24, 24)
    # Every opcode's payload, indexed by opcode (1.1): the same sizes, no others.
    assert len(f.pdu_size) == 256
    assert {op: n for op, n in enumerate(f.pdu_size) if n} == {
        ir.Op.SOCKET: 12, ir.Op.OPENAT: 24, ir.Op.OPENAT2: 24, ir.Op.CONNECT: 24}
    assert f.avail("task_restrictions") is ir.Avail.NO_PRIV
    assert f.op_last == len(ir.opcodes_up_to(ir.kver(7, 2)))
    old = ir.kernel_describe(ir.kver(6, 1))
    assert old.feature_level is ir.FeatureLevel.RING and old.pdu_socket == 0
    assert not any(old.pdu_size)
    assert ir.kernel_describe(ir.kver(5, 0)).feature_level is ir.FeatureLevel.NONE
    with pytest.raises((OverflowError, ValueError)):
        ir.kernel_describe(-1)


def test_features_flags_match_probe_h():
    """Every IOUR_FEATURES_* of the C header is a FeaturesFlag member of the
    same value, and the probe's flags read back as FeaturesFlag."""
    hdr = (Path(__file__).resolve().parents[3] / "include" / "iouring_restrict"
           / "probe.h").read_text()
    defs = dict(re.findall(r"#define IOUR_FEATURES_(\w+) \(1ULL << (\d+)\)", hdr))
    assert "SOCKET_FLAGS_HIDDEN" in defs and "TASK_SET_GATES_FILTERS" in defs
    assert {m.name: m.value for m in ir.FeaturesFlag} == \
        {k: 1 << int(v) for k, v in defs.items()}
    f = ir.probe()
    assert f.features_flags == ir.FeaturesFlag(f.flags)
    # Linux 6.18 here: no filters, so neither 7.3.4 measurement can be set
    assert ir.FeaturesFlag.SOCKET_FLAGS_HIDDEN not in f.features_flags
    assert ir.FeaturesFlag.TASK_SET_GATES_FILTERS not in f.features_flags


def test_enums_agree_with_the_library_name_tables():
    for op in ir.Op:
        assert ir.opcode_name(op) == op.name
    for op in ir.RegisterOp:
        assert ir.lib.iour_register_op_name(op).decode() == op.name
    for fl in ir.SqeFlag:
        assert ir.sqe_flag_name(fl) == fl.name
    assert ir.lib.iour_opcode_name(len(ir.Op)) is None
    for c in ir.ErrorCode:
        assert ir.errname(-c) == "-IOUR_ERRNO__" + c.name
    for s in ir.Status:
        assert ir.lib.iour_status_str(s)
    for k in ir.DecisionKind:
        assert ir.lib.iour_decision_kind_str(k).decode() == k.name.lower()
    for r in ir.Reason:
        assert ir.lib.iour_reason_str(r).decode() == r.name.lower()
    assert ir.lib.iour_reason_str(len(ir.Reason)) == b"invalid"


def test_restricted_ring_denies_a_forbidden_request_with_eacces(ring_rs):
    ring, rep = ir.ring_create(ring_rs)
    with ring:
        assert rep.registered == 1 and rep.enabled == 1 and rep.nr_entries > 0
        res = ir.verify([ir.VerifyReq(ir.Op.NOP, ir.Expect.ALLOW),
                         ir.VerifyReq("WRITE", ir.Expect.DENY),
                         ir.VerifyReq("NOP", ir.Expect.DENY, sqe_flags=ir.SqeFlag.ASYNC)],
                        ring=ring)
        assert [r.status for r in res] == [ir.VerifyStatus.MATCH] * 3
        assert res[0].res == 0
        assert res[1].error == errno.EACCES and res[2].error == errno.EACCES
        assert isinstance(ir.error_from_code(res[1].res, None, ir.lib), PermissionError)
        # A wrong expectation is reported, not hidden.
        with pytest.raises(ir.LibraryError) as ei:
            ir.verify([ir.VerifyReq("WRITE", ir.Expect.ALLOW)], ring=ring)
        assert ei.value.code is ir.ErrorCode.NOT_ENFORCED
        assert ei.value.results[0].status is ir.VerifyStatus.MISMATCH
        assert ei.value.results[0].error == errno.EACCES
        # The ring is enabled and restricted: a second set is refused.
        with pytest.raises(ir.IourError) as ei:
            ir.ring_apply(ring, ring_rs)
        assert ei.value.errno in (errno.EBADFD, errno.EBUSY)
    assert ring.closed


def test_policy_plan_and_ring_through_the_plan(ring_rs):
    with ir.Policy(ring_rs, target=ir.Target.RING) as pol, pol.plan() as plan:
        info = plan.info()
        assert info.target is ir.Target.RING and info.ring_steps >= 2
        steps = plan.steps()
        assert ir.StepOp.RESTRICTIONS in [s.op for s in steps]
        assert "RESTRICTIONS" in plan.describe().upper()
        predicted = plan.report
        assert predicted.status is ir.Status.FULLY
        assert ir.ReportFlag.PLANNED in predicted.flags
        ring, report = plan.create_ring()
        with ring:
            assert report.fully_enforced
            assert report.mechanism & (ir.Mechanism.RING | ir.Mechanism.RING_DISABLED)
            assert report.steps_done == report.steps_total > 0
            res = ir.verify([ir.VerifyReq("READ", ir.Expect.ALLOW, path=None),
                             ir.VerifyReq("OPENAT", ir.Expect.DENY, path="/dev/null")],
                            ring=ring)
            assert res[1].error == errno.EACCES


def test_plan_ruleset_is_what_the_ring_enforces(ring_rs):
    # The ring's set as the library decodes the plan's entries.
    with ir.Policy(ring_rs, target=ir.Target.RING) as pol, pol.plan() as plan:
        got = plan.ruleset()
        assert got is not None and plan.ruleset(ir.StepSide.TASK) is None
        with got:
            assert got.sqe_restricted
            assert got.sqe_op_allowed("READ") and not got.sqe_op_allowed("OPENAT")
            assert got.sqe_flags() == (0, 0)
            # The policy leaves register opcodes open: a kernel before 7.0
            # gates them anyway, with every one listed.
            assert got.register_restricted == (not plan.info().split_gates)
            assert got.register_op_allowed(ir.RegisterOp.REGISTER_FILES)
    # A classic part that allows everything plans no restriction step,
    # although the policy has one.
    with ir.Ruleset() as rs, ir.Policy(rs, target=ir.Target.RING) as pol:
        rs.set_sqe_flags(0x7f, 0)
        pol.set_ruleset(rs)
        pol.set_attr(ir.PolicyAttr.DEFAULT, ir.DefaultVerdict.ALLOW)
        with pol.plan() as plan:
            assert plan.ruleset() is None and plan.ruleset(ir.StepSide.TASK) is None
    with ir.Policy(ring_rs, target=ir.Target.RING) as pol, pol.plan() as plan:
        with pytest.raises(ir.IourError) as ei:
            plan.ruleset(2)
        assert ei.value.errno == errno.EINVAL
