# SPDX-License-Identifier: MIT
"""Errors that name the value and the limit, attribute values by name, and
enums that print their names."""
import errno

import pytest

import iouring_restrict as ir

LAST_OP = max(ir.Op)


def test_opcode_beyond_the_table_names_it_and_the_last():
    with ir.Ruleset() as rs:
        with pytest.raises(ir.IourError) as ei:
            rs.allow_sqe_op(255)
        e = ei.value
        assert e.errno == errno.ERANGE  # the code is unchanged
        assert e.detail == ("opcode 255: the library's request-opcode table ends at %d (%s)"
                            % (LAST_OP, LAST_OP.name))
        assert e.detail in str(e) and e.strerror == e.detail
        assert e.description == ir.strerror(-errno.ERANGE)
        assert not rs.sqe_restricted  # nothing half-applied


@pytest.mark.parametrize("bad", [-1, 1 << 32])
def test_opcode_no_c_argument_holds_names_it(bad):
    with ir.Ruleset() as rs, pytest.raises(OverflowError) as ei:
        rs.allow_sqe_op(bad)
    assert str(ei.value) == ("opcode %d: the library's request-opcode table is 0..%d (NOP .. %s)"
                             % (bad, LAST_OP, LAST_OP.name))
    assert "4294967295" not in str(ei.value)


def test_plan_level_names_the_range():
    with ir.Policy() as p:
        with pytest.raises(ir.IourError) as ei:
            p.plan(level=9)
        assert ei.value.errno == errno.EINVAL and ei.value.detail == "level 9: levels are 0..5"
        with pytest.raises(OverflowError, match=r"^level -1: levels are 0\.\.5$"):
            p.plan(level=-1)
        assert p.plan(level="ring").info().level == ir.FeatureLevel.RING


def test_set_attr_names_the_unknown_attribute_and_the_range():
    with ir.Policy() as p:
        with pytest.raises(ir.IourError) as ei:
            p.set_attr(99, 0)
        assert ei.value.errno == errno.EINVAL
        assert ei.value.detail == ("attribute 99: attributes are 1..7 "
                                   "(IOUR_POLICY_ATTR_TARGET .. IOUR_POLICY_ATTR_DEFAULT)")
        with pytest.raises(ir.IourError) as ei:
            p.set_attr(ir.PolicyAttr.TARGET, 7)
        assert ei.value.errno == errno.ERANGE
        assert ei.value.detail == "IOUR_POLICY_ATTR_TARGET value 7: values are 0..1"
        assert p.get_attr("target") is ir.Target.TASK


def test_apply_task_on_a_ring_plan_says_so():
    with ir.Policy(target="ring") as p, p.plan(level=ir.FeatureLevel.RING) as pl:
        with pytest.raises(ir.IourError) as ei:
            pl.apply_task()
    assert ei.value.errno == errno.EINVAL and ei.value.report is None
    assert ei.value.detail.startswith("apply_task: this plan targets a ring")


def test_a_detail_belongs_to_its_call_only():
    with ir.Ruleset() as rs:
        with pytest.raises(ir.IourError):
            rs.allow_sqe_op(200)
        # another function failing with the same code gets no stale words
        with pytest.raises(ir.IourError) as ei:
            rs.export(kver=ir.kver(6, 1), op_last=300)
        assert ei.value.detail is None
        assert ei.value.strerror == ir.strerror(ei.value.errno)


def test_attribute_values_by_name():
    with ir.Policy(target="ring", compat="best-effort") as p:
        p.set_attr("default", "allow")
        assert p.get_attr(ir.PolicyAttr.TARGET) is ir.Target.RING
        assert p.get_attr("compat") is ir.Compat.BEST_EFFORT
        assert p.get_attr("IOUR_POLICY_ATTR_DEFAULT") is ir.DefaultVerdict.ALLOW
    with pytest.raises(ValueError) as ei:
        ir.Policy(target="rings")
    assert str(ei.value) == "TARGET value 'rings': the names are 'task' (0), 'ring' (1)"
    with ir.Policy() as p:
        with pytest.raises(TypeError):
            p.set_attr("target", ir.Compat.HARD)
        with pytest.raises(ValueError, match="'target' \\(1\\)"):
            p.set_attr("targte", 1)


def test_enums_print_their_names():
    assert str(ir.Status.FULLY) == "FULLY" and "%s" % ir.Op.READ == "READ"
    assert "%d" % ir.Status.FULLY == "2" and "{:d}".format(ir.Op.READ) == "22"
    assert "{}".format(ir.Target.RING) == "RING" and repr(ir.Status.FULLY) == "<Status.FULLY: 2>"
    assert ir.Status.FULLY == 2 and int(ir.Op.READ) == 22
    assert str(ir.SqeFlag.IO_LINK | ir.SqeFlag.ASYNC) == "IO_LINK|ASYNC"
    assert str(ir.SqeFlag(0)) == "0"
    with ir.Policy() as p, p.set_attr("default", "allow").plan(level=0) as pl:
        rep = pl.report
        assert str(rep.status) == rep.status.name and rep.status.name in ir.Status.__members__


def _import_copy(tmp_path, env):
    """Imports a copy of the package that sits outside any source tree
    (as in a venv's site-packages): the exit status and stderr."""
    import os
    import shutil
    import subprocess
    import sys
    site = tmp_path / "venv" / "lib" / "python3" / "site-packages"
    shutil.copytree(os.path.dirname(ir.__file__), str(site / "iouring_restrict"),
                    ignore=shutil.ignore_patterns("__pycache__"))
    e = {k: v for k, v in os.environ.items()
         if k not in ("IOURING_RESTRICT_LIBRARY", "LD_LIBRARY_PATH", "PYTHONPATH")}
    e.update(env, PYTHONPATH=str(site), PYTHONDONTWRITEBYTECODE="1")
    p = subprocess.run([sys.executable, "-c", "import iouring_restrict"], env=e,
                       cwd=str(tmp_path), capture_output=True, text=True)
    return p.returncode, p.stderr


def test_import_error_says_what_was_tried_and_how_to_fix(tmp_path):
    rc, err = _import_copy(tmp_path, {"IOURING_RESTRICT_LIBRARY": "/nonexistent/libx.so.1"})
    assert rc != 0
    msg = err[err.index("ImportError: "):]
    assert "IOURING_RESTRICT_LIBRARY=/nonexistent/libx.so.1: cannot open shared object" in msg
    assert "/nonexistent/libx.so.1: /nonexistent" not in msg  # the name once
    assert "LD_LIBRARY_PATH=" in msg and "IOURING_RESTRICT_LIBRARY=/path/to/" in msg


def test_import_error_outside_a_source_tree_points_nowhere_else(tmp_path):
    rc, err = _import_copy(tmp_path, {})
    if rc == 0:
        pytest.skip("skipped: libiouring-restrict.so.1 is in the loader's search path here, "
                    "so the import cannot fail")
    msg = err[err.index("ImportError: "):]
    assert "libiouring-restrict.so.1 through the loader's search path: cannot open" in msg
    assert "libiouring-restrict.so.1: libiouring-restrict.so.1" not in msg
    assert str(tmp_path) not in msg  # no made-up build path inside the venv
