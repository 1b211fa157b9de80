# SPDX-License-Identifier: MIT
"""Error mapping and argument types."""
import errno
import os

import pytest

import iouring_restrict as ir


def test_system_codes_map_to_builtin_oserror_subclasses():
    e = ir.error_from_code(-errno.EACCES, "f", ir.lib)
    assert isinstance(e, PermissionError) and isinstance(e, ir.IourError)
    assert e.errno == errno.EACCES and e.strerror == ir.strerror(-errno.EACCES)
    assert "Permission denied" in str(e) and e.errname == "-EACCES"
    assert isinstance(ir.error_from_code(-errno.ENOENT, None, ir.lib), FileNotFoundError)
    assert isinstance(ir.error_from_code(-errno.EPERM, None, ir.lib), PermissionError)
    e = ir.error_from_code(-errno.EINVAL, None, ir.lib)
    assert type(e) is ir.IourError and isinstance(e, OSError)


def test_library_codes_are_named():
    e = ir.error_from_code(-ir.ErrorCode.PROG_TOO_LARGE, "iour_filter__compile", ir.lib)
    assert isinstance(e, ir.LibraryError) and isinstance(e, OSError)
    assert e.errno == 4002 and e.code is ir.ErrorCode.PROG_TOO_LARGE
    assert e.name == "PROG_TOO_LARGE"
    assert e.strerror == ir.strerror(-4002) and "4096" in e.strerror


def test_real_failures_raise_the_mapped_class():
    with pytest.raises(FileNotFoundError) as ei:
        ir.opcode("NO_SUCH_OPCODE")
    assert ei.value.errno == errno.ENOENT and ei.value.function == "iour_opcode_from_name"
    with ir.Ruleset() as rs, pytest.raises(FileNotFoundError):
        rs.allow_sqe_op("NO_SUCH_OPCODE")
    r, w = os.pipe()
    try:
        with ir.Ruleset() as rs, pytest.raises(ir.IourError) as ei:
            ir.ring_apply(r, rs.allow_sqe_op("NOP").set_sqe_flags(0, 0))
        assert ei.value.errno == errno.EOPNOTSUPP  # a pipe is not an io_uring
    finally:
        os.close(r)
        os.close(w)


def test_str_and_int_names_are_equivalent():
    assert ir.opcode("read") == ir.opcode("IORING_OP_READ") == ir.Op.READ == 22
    assert ir.register_op("REGISTER_BUFFERS") == ir.RegisterOp.REGISTER_BUFFERS
    assert ir.sqe_flag(["ASYNC", ir.SqeFlag.IO_LINK]) == 0x14
    with ir.Ruleset() as a, ir.Ruleset() as b:
        a.allow_sqe_op("READ", "socket").set_sqe_flags(0, 0)
        b.allow_sqe_op(22, ir.Op.SOCKET).set_sqe_flags(0, 0)
        assert a.export(kver=ir.kver(6, 1)) == b.export(kver=ir.kver(6, 1))


@pytest.mark.parametrize("bad", [1.5, b"READ", None, True, [22], object()])
def test_anything_else_is_a_type_error(bad):
    with ir.Ruleset() as rs:
        with pytest.raises(TypeError):
            rs.allow_sqe_op(bad)
    with pytest.raises(TypeError):
        ir.opcode(bad)


def test_handles_of_the_wrong_kind_are_type_errors(ring_rs):
    with ir.Filter() as f, ir.Policy() as p:
        with pytest.raises(TypeError):
            p.set_ruleset(f)
        with pytest.raises(TypeError):
            p.set_filter(ring_rs)
        with pytest.raises(TypeError):
            p.set_ruleset(0x1234)  # an address never reaches the library
        with pytest.raises(TypeError):
            ir.ring_apply("3", ring_rs)
        with pytest.raises(TypeError):
            ir.lib.iour_ruleset__sqe_restricted(12345)
        with pytest.raises(TypeError):
            f.add_rule("SOCKET", ir.Verdict.ALLOW, "family == 2")


def test_closed_handles_raise_not_crash():
    rs = ir.Ruleset()
    rs.close()
    rs.close()  # idempotent
    assert rs.closed
    with pytest.raises(ValueError, match="closed"):
        rs.allow_sqe_op("NOP")
    with pytest.raises(ValueError, match="closed"):
        ir.ring_create(rs)
    with ir.Filter() as f:
        pass
    with pytest.raises(ValueError):
        f.compile("SOCKET")
    p = ir.Policy()
    p.close()
    with pytest.raises(ValueError):
        p.plan()
    with pytest.raises(ValueError):
        with p:
            pass


def test_objects_outlive_their_source():
    f = ir.Filter().add_rule("SOCKET", ir.Verdict.ALLOW,
                             ir.Cmp(ir.Field.SOCKET_FAMILY, ir.CmpOp.EQ, 2))
    prog = f.compile("SOCKET")
    f.close()
    assert prog.run(ir.ctx_socket(2, 1)).allowed
    prog.close()
    del prog  # garbage collection after close is harmless
