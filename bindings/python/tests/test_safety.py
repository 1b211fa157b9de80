# SPDX-License-Identifier: MIT
"""Bad input and thread safety of the bindings (issue 18)."""
import os
import socket
import subprocess
import sys
import threading

import pytest

import iouring_restrict as ir

HERE = os.path.dirname(os.path.abspath(__file__))


def test_close_while_another_thread_calls():
    # In a child: a use-after-free kills the process rather than pytest.
    p = subprocess.run([sys.executable, os.path.join(HERE, "close_race.py"), "40"],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, "close race: rc %d\n%s" % (p.returncode, p.stderr[-2000:])
    assert p.stdout.strip() == "ok"


def test_close_from_other_thread_then_call_raises():
    rs = ir.Ruleset()
    t = threading.Thread(target=rs.close)
    t.start()
    t.join()
    assert rs.closed
    with pytest.raises(ValueError):
        rs.allow_sqe_op("NOP")


def test_close_during_call_defers_free():
    # A call in flight holds a reference: close() marks the handle closed
    # at once, the object is freed when the call returns.
    f = ir.Filter().add_rule("SOCKET", ir.Verdict.ALLOW)
    with f._held():
        f.close()
        assert f.closed
        with pytest.raises(ValueError):
            f.opcodes()
        assert f._ptr  # not freed yet
    assert not f._ptr


@pytest.mark.parametrize("call", [
    lambda rs: rs.allow_sqe_op(2**32 + 22),
    lambda rs: rs.allow_sqe_op(-1),
    lambda rs: rs.allow_register_op(2**32),
    lambda rs: rs.set_sqe_flags(2**32 + 1, 0),
    lambda rs: rs.sqe_op_allowed(2**40),
])
def test_ruleset_ints_out_of_range(call):
    with ir.Ruleset() as rs:
        rs.deny_all_sqe_ops().deny_all_register_ops()
        with pytest.raises(OverflowError):
            call(rs)
        assert not rs.sqe_op_allowed(ir.Op.READ)  # nothing truncated got in


def test_filter_ints_out_of_range():
    f = ir.Filter()
    with pytest.raises(OverflowError):
        f.add_rule("SOCKET", 2**32)                       # would be DENY (0)
    with pytest.raises(OverflowError):
        ir.Filter(default_verdict=2**32 + 1)
    with pytest.raises(OverflowError):
        f.add_rule("SOCKET", ir.Verdict.ALLOW,
                   ir.Cmp(ir.Field.SOCKET_FAMILY, ir.CmpOp.EQ, value=2**64 + 5))
    with pytest.raises(OverflowError):
        f.add_rule("SOCKET", ir.Verdict.ALLOW,
                   ir.Cmp(ir.Field.SOCKET_FAMILY, ir.CmpOp.IN_SET, values=[2, 2**64 + 10]))
    assert f.opcodes() == []
    f.close()


def test_insn_fields_out_of_range():
    ret_allow = (0x06, 0, 0, 0x7FFF0000)
    assert ir.cbpf_validate([ret_allow]).ok
    for bad in [(0x06, 257, 0, 0), (0x06, 0, 256, 0), (0x10006, 0, 0, 0), (0x06, 0, 0, 2**32),
                ir.Insn(0x06, 0, 0, -1)]:
        with pytest.raises(OverflowError):
            ir.cbpf_validate([bad])
        with pytest.raises(OverflowError):
            ir.cbpf_run([bad], ir.ctx_generic("NOP"))


def test_other_ints_out_of_range():
    with pytest.raises(OverflowError):
        ir.kver(6, 256)                                   # not 7.0
    with pytest.raises(OverflowError):
        ir.ctx_socket(2**32 + 2, 1)
    with pytest.raises(OverflowError):
        ir.ctx_generic("NOP", user_data=2**64)
    assert ir.ctx_generic("NOP", user_data=2**64 - 1)     # a u64 is fine
    with ir.Policy() as p:
        with pytest.raises(OverflowError):
            p.set_attr(ir.PolicyAttr.TARGET, 2**32 + 1)


@pytest.mark.parametrize("call", [
    lambda rs: rs.allow_sqe_op(ir.SqeFlag.ASYNC),         # would be CONNECT
    lambda rs: rs.allow_sqe_op(ir.RegisterOp.REGISTER_FILES),  # would be WRITEV
    lambda rs: rs.allow_register_op(ir.Op.WRITEV),
    lambda rs: rs.set_sqe_flags(ir.Op.READ, 0),
    lambda rs: rs.sqe_op_allowed(ir.Verdict.ALLOW),
])
def test_enum_of_wrong_kind_is_type_error(call):
    with ir.Ruleset() as rs:
        rs.deny_all_sqe_ops().deny_all_register_ops()
        with pytest.raises(TypeError):
            call(rs)
        assert not rs.sqe_op_allowed(ir.Op.CONNECT)
        assert not rs.sqe_op_allowed(ir.Op.WRITEV)


def test_enum_of_wrong_kind_in_filter():
    f = ir.Filter()
    with pytest.raises(TypeError):
        f.add_rule("SOCKET", ir.Op.NOP)                   # Op as a verdict
    with pytest.raises(TypeError):
        f.add_rule("SOCKET", ir.Verdict.ALLOW, ir.Cmp(ir.CmpOp.EQ, ir.Field.SOCKET_FAMILY))
    with pytest.raises(TypeError):
        f.add_rule(ir.SqeFlag.ASYNC, ir.Verdict.ALLOW)
    f.close()


def test_right_kinds_still_work():
    with ir.Ruleset() as rs:
        rs.allow_sqe_op(ir.Op.READ, "NOP", 0).allow_register_op(ir.RegisterOp.REGISTER_FILES)
        rs.set_sqe_flags(ir.SqeFlag.ASYNC | ir.SqeFlag.IO_LINK, 0)
        assert rs.sqe_op_allowed("READ") and rs.register_op_allowed(2)


def test_ring_fd_must_be_a_ring():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        with pytest.raises(ValueError, match="not an io_uring"):
            ir.Ring(s.fileno())
        assert s.fileno() >= 0                            # not closed by the failure
    finally:
        s.close()
    r, w = os.pipe()
    try:
        with pytest.raises(ValueError):
            ir.Ring(r)
    finally:
        os.close(r)
        os.close(w)
    with pytest.raises(OSError):
        ir.Ring(2**20)                                    # no such fd
    with pytest.raises(OverflowError):
        ir.Ring(2**31)


def test_ring_fd_accepts_a_ring():
    if ir.probe().io_uring != ir.Avail.YES:
        pytest.skip("io_uring unavailable: %s" % ir.probe().io_uring)
    with ir.Ruleset() as rs:
        rs.allow_sqe_op("NOP").set_sqe_flags(0, 0)
        ring, _ = ir.ring_create(rs)
    with ring:
        fd = os.dup(ring.fileno())
        with ir.Ring(fd) as again:
            assert again.fileno() == fd


@pytest.mark.parametrize("call,value,near", [
    (lambda: ir.opcode("opnat"), "opnat", "OPENAT"),
    (lambda: ir.register_op("register_bufers"), "register_bufers", "REGISTER_BUFFERS"),
    (lambda: ir.sqe_flag("asyn"), "asyn", "ASYNC"),
    (lambda: ir.Ruleset().allow_sqe_op("conect"), "conect", "CONNECT"),
    (lambda: ir.Ruleset().allow_register_op("probes"), "probes", "REGISTER_PROBE"),
])
def test_unknown_name_names_value_and_nearest(call, value, near):
    with pytest.raises(ir.UnknownNameError) as ei:
        call()
    e = ei.value
    assert isinstance(e, ValueError) and isinstance(e, FileNotFoundError)  # ENOENT as before
    assert e.name == value and e.suggestion == near
    assert repr(value) in str(e) and repr(near) in str(e), str(e)


def test_unknown_name_without_a_near_one():
    with pytest.raises(ir.UnknownNameError) as ei:
        ir.opcode("xyzzy")
    assert ei.value.suggestion is None and "'xyzzy'" in str(ei.value)


def test_policy_file_unknown_name_suggests():
    with pytest.raises(ir.IourError) as ei:
        ir.Policy.from_json('{"entries": [{"names": ["opnat"], "action": "allow"}]}')
    assert 'unknown request opcode "opnat" (did you mean "OPENAT"?)' in str(ei.value)
    with pytest.raises(ir.IourError) as ei:
        ir.Policy.from_json('{"entries": [{"names": ["connect"], "action": "allow", "args": '
                            '[{"field": "connect.port", "op": "in", "range": [65535, 1024]}]}]}')
    assert "the range's low end is above its high end" in str(ei.value)
    assert ei.value.json_path == "entries[0].args[0].range"
