# SPDX-License-Identifier: MIT
import os

import pytest

import iouring_restrict as ir

SRC = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))


@pytest.fixture
def ring_rs():
    """A ruleset allowing NOP and READ only, no SQE flag."""
    with ir.Ruleset() as rs:
        rs.allow_sqe_op(ir.Op.NOP, "READ").set_sqe_flags(0, 0)
        yield rs


def pytest_report_header(config):
    return "iouring_restrict from %s, library %s" % (ir.__file__, ir.lib._name)
