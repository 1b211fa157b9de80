# SPDX-License-Identifier: MIT
"""Loading, declarations and the layout check against iour_abi_layout()."""
import ctypes
import os
import subprocess
import sys

import pytest

import iouring_restrict as ir
from iouring_restrict import _lib
from conftest import SRC


def test_version_is_1_1():
    assert ir.version_info()[:2] >= (1, 1)
    assert ir.version() == "%d.%d.%d" % ir.version_info()


def test_every_exported_function_is_declared():
    for name in _lib.FUNCS:
        f = getattr(ir._api._raw, name)
        assert f.argtypes is not None, name
    # The binding covers the library's whole export list (abi/symbols.txt
    # of the source tree these tests come from).
    with open(os.path.join(SRC, "abi", "symbols.txt")) as fh:
        exported = {ln.strip() for ln in fh if ln.strip()}
    assert exported == set(_lib.FUNCS)


def test_layout_table_covers_every_declared_struct_and_back():
    types = {t for t, f, *_ in ir.LAYOUT}
    assert types == set(_lib.STRUCTS)
    assert _lib.check_layout(ir.LAYOUT) > 150


def _patched(rows, tag, field, **chg):
    out = []
    for t, f, off, size, align in rows:
        if t == tag and f == field:
            off = chg.get("offset", off)
            size = chg.get("size", size)
            align = chg.get("align", align)
        out.append((t, f, off, size, align))
    return out


@pytest.mark.parametrize("tag,field,chg", [
    ("iour_verify_req", "addrlen", {"offset": 80}),
    ("iour_ring_report", "clamped_sqe_ops", {"size": 16}),
    ("iour_insn", "", {"size": 16}),
    ("iour_cmp", "", {"align": 4}),
])
def test_check_layout_refuses_a_wrong_row(tag, field, chg):
    rows = _patched(ir.LAYOUT, tag, field, **chg)
    with pytest.raises(ir.LayoutError, match=tag):
        _lib.check_layout(rows)


def test_check_layout_refuses_a_missing_struct_or_member():
    with pytest.raises(ir.LayoutError, match="iour_features"):
        _lib.check_layout([r for r in ir.LAYOUT if r[0] != "iour_features"])
    with pytest.raises(ir.LayoutError, match="sqe_flags"):
        _lib.check_layout([r for r in ir.LAYOUT if r[:2] != ("iour_verify_req", "sqe_flags")])
    # A newer library's larger options struct is fine (the sz discipline).
    rows = _patched(ir.LAYOUT, "iour_probe_opts", "", size=24)
    _lib.check_layout(rows)


def test_import_fails_on_a_wrong_layout(monkeypatch):
    # A fresh interpreter whose layout table is wrong must refuse to import.
    code = ("import importlib\n"
            "import iouring_restrict._lib as L, iouring_restrict._api as A\n"
            "orig = L.layout_table\n"
            "L.layout_table = lambda lib: [(t, f, o + (8 if (t, f) == ('iour_cmp', 'value') "
            "else 0), s, a) for t, f, o, s, a in orig(lib)]\n"
            "try:\n"
            "    importlib.reload(A)\n"
            "except ImportError as e:\n"
            "    print(type(e).__name__, e)\n"
            "    raise SystemExit(3)\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert p.returncode == 3, p.stdout + p.stderr
    assert "LayoutError" in p.stdout and "iour_cmp.value" in p.stdout


def test_library_override_by_environment():
    code = "import iouring_restrict as ir; print(ir.lib._name)"
    env = dict(os.environ, IOURING_RESTRICT_LIBRARY="/nonexistent/libiouring-restrict.so.1")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert p.returncode != 0
    assert "IOURING_RESTRICT_LIBRARY" in p.stderr and "/nonexistent" in p.stderr


def test_structs_match_the_c_sizes_the_abi_froze():
    assert ctypes.sizeof(_lib.iour_insn) == 8
    assert ctypes.sizeof(_lib.iour_restriction) == 16
