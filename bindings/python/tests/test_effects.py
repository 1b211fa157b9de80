# SPDX-License-Identifier: MIT
"""Effect notes of a plan's report (doc/security.md 2.1) reach Python as
typed Reason and Effect values."""
import os

import iouring_restrict as ir

from conftest import SRC

BYPASS = os.path.join(SRC, "tests", "cli", "policies", "bypass.json")


def effects(level):
    with ir.Policy.from_file(BYPASS) as p, p.plan(level=level) as plan:
        return {ir.Effect(d.value): d for d in plan.report.decisions
                if d.reason in (ir.Reason.EFFECT_CLOSED, ir.Reason.EFFECT_FILTERED,
                                ir.Reason.EFFECT_OPEN)}


def test_a_connect_rule_with_sendmsg_allowed_leaves_the_destination_open():
    e = effects(5)  # Linux 7.2: CONNECT has a filter payload
    net = e[ir.Effect.NET_DEST]
    assert net.reason is ir.Reason.EFFECT_OPEN and net.kind is ir.DecisionKind.NOTE
    assert net.opcode == ir.Op.SENDMSG
    assert "filtered: CONNECT" in net.text
    assert e[ir.Effect.PLAIN_FD].reason is ir.Reason.EFFECT_OPEN


def test_fixed_file_with_splice_is_not_fully_enforced():
    with ir.Policy.from_file(BYPASS) as p, p.plan(level=5) as plan:
        r = plan.report
        assert r.status is not ir.Status.FULLY
        assert any(d.kind is ir.DecisionKind.LOOSENED and d.reason is ir.Reason.FIXED_FILES
                   and d.opcode == ir.Op.SPLICE for d in r.decisions)
