# SPDX-License-Identifier: MIT
"""A restricted ring driven from Python: created disabled, files and
buffers registered while disabled, restricted and enabled, then requests
through the ring's own queues.  Each denial is checked against a positive
control: the same request on an unrestricted ring succeeds."""
import errno
import os

import pytest

import iouring_restrict as ir

pytestmark = pytest.mark.skipif(
    ir.feature_level() < ir.FeatureLevel.RING,
    reason="skipped: the kernel has no per-ring restrictions (Linux 5.10+)")


@pytest.fixture
def pipe():
    r, w = os.pipe()
    yield r, w
    os.close(r)
    os.close(w)


def _rs():
    rs = ir.Ruleset().allow_sqe_op("NOP", "READ", "READ_FIXED").deny_all_register_ops()
    return rs.set_sqe_flags(allowed=ir.SqeFlag.FIXED_FILE, required=0)


def test_the_life_cycle_of_a_restricted_ring(pipe):
    r, w = pipe
    os.write(w, b"0123456789")
    with _rs() as rs, ir.Ring.setup(4) as ring:
        with pytest.raises(OSError) as ei:
            ring.nop()  # disabled: the kernel refuses to submit
        assert ei.value.errno == errno.EBADFD
        ring.register_files([r]).register_buffers([bytearray(8)])
        rep = ir.ring_apply(ring, rs)
        assert rep.registered and rep.enabled
        ring.nop()
        assert ring.read(0, 3, offset=-1, fixed_file=True) == b"012"
        assert ring.read_fixed(0, 0, 4, offset=-1, fixed_file=True) == b"3456"
        assert bytes(ring.buffers[0][:4]) == b"3456"
        with pytest.raises(PermissionError):
            ring.write(w, b"x")                   # WRITE is not in the set
        with pytest.raises(PermissionError):
            ring.register_files([w])              # nor any register opcode
        assert ring.submit(ir.Op.NOP, sqe_flags="ASYNC") == -errno.EACCES


def test_positive_control_an_unrestricted_ring_does_all_of_it(pipe):
    r, w = pipe
    with ir.Ring.setup(4, disabled=False) as ring:
        assert ring.write(w, b"abc", offset=-1) == 3
        assert os.read(r, 3) == b"abc"
        ring.register_files([w])
        assert ring.submit(ir.Op.NOP, sqe_flags="ASYNC") == 0


def test_a_plan_applies_to_a_ring_made_disabled(pipe):
    r, w = pipe
    os.write(w, b"xy")
    with _rs() as rs, ir.Policy(rs, target="ring") as pol, pol.plan() as plan, \
            ir.Ring.setup(4) as ring:
        ring.register_files([r])
        rep = plan.apply_ring(ring)
        assert rep.status is ir.Status.FULLY, rep.text
        assert ring.read(0, 2, offset=-1, fixed_file=True) == b"xy"
        with pytest.raises(PermissionError):
            ring.write(w, b"x")


def test_rings_the_library_creates_can_submit_too():
    with _rs() as rs:
        ring, _ = ir.ring_create(rs)
        with ring:
            ring.nop()
            with pytest.raises(PermissionError):
                ring.write(1, b"")


def test_a_ring_given_by_fd_has_no_queues():
    with _rs() as rs:
        ring, _ = ir.ring_create(rs)
        with ring, ir.Ring(os.dup(ring.fileno())) as other:
            with pytest.raises(ValueError, match="offsets are unknown"):
                other.nop()
