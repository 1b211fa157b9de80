# SPDX-License-Identifier: MIT
"""Policy files (policyfile.h): load, save, decide, groups."""
import errno
import os
import socket

import pytest

import iouring_restrict as ir
from conftest import SRC

POLICIES = os.path.join(SRC, "examples", "policies")


def test_load_save_round_trip_and_decide():
    with ir.Policy.from_file(os.path.join(POLICIES, "tcp-client.json")) as p:
        text = p.to_json()
        assert '"version": 1' in text
        tcp = p.decide(ir.ctx_socket(socket.AF_INET, socket.SOCK_STREAM))
        unix = p.decide(ir.ctx_socket(socket.AF_UNIX, socket.SOCK_STREAM))
        assert tcp.allowed and tcp.reason is ir.DecideReason.RULE and tcp.rule is not None
        assert not unix.allowed and unix.opcode == ir.Op.SOCKET
        with ir.Policy.from_json(text) as q:
            assert q.to_json() == text  # canonical form is a fixed point
            with q.plan() as plan:
                assert plan.describe()


def test_load_errors_carry_the_position_and_the_library_message():
    with pytest.raises(ir.IourError) as ei:
        ir.Policy.from_json('{"version": 1,\n "nmes": 3}', origin="inline")
    e = ei.value
    assert e.errno == errno.EBADMSG and e.line == 2 and e.column >= 2
    assert "nmes" in e.detail and "nmes" in str(e)
    with pytest.raises(FileNotFoundError):
        ir.Policy.from_file("/nonexistent/policy.json")
    with pytest.raises(TypeError):
        ir.Policy.from_json(42)


def test_groups():
    gs = ir.groups()
    assert gs and all(g.name.startswith("@") for g in gs)
    fr = ir.group("file-read")
    assert fr.name == "@file-read" and ir.Op.READ in fr.ops and ir.Op.WRITE not in fr.ops
    assert set(ir.group("@file-read", kver=ir.kver(5, 1)).ops) <= set(fr.ops)
    with pytest.raises(FileNotFoundError):
        ir.group("no-such-group")
