#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The tutorial (doc/tutorial.md) in Python: its four steps, as
examples/tutorial/step1_ring.c .. step4_report.c do in C.  Steps 2 and 3
restrict the task for good, so each runs in a child process.

Step 1 goes through the whole life of a restricted ring: created disabled,
a file and a buffer registered while it is disabled (the set denies every
register opcode once the ring is enabled), the set
applied and the ring enabled, then requests: NOP and a READ through the
fixed file complete, a WRITE completes with EACCES.

Exits 0 only if the kernel answered as the set says (step 1 is skipped,
saying so, on a kernel without per-ring restrictions).

    python3 examples/python/tutorial.py
"""
import errno
import os
import socket
import sys
import traceback

import iouring_restrict as ir


def step1():
    if ir.feature_level() < ir.FeatureLevel.RING:
        print("step1: skipped: the kernel has no per-ring restrictions (Linux 5.10+)")
        return True
    # 1. The allow-list: NOP, READ and READ_FIXED; FIXED_FILE is the only
    # SQE flag a request may carry; no register opcode once enabled.
    rs = ir.Ruleset().allow_sqe_op("NOP", "READ", "READ_FIXED").deny_all_register_ops()
    rs.set_sqe_flags(allowed=ir.SqeFlag.FIXED_FILE, required=0)
    r, w = os.pipe()
    os.write(w, b"hello, ring")
    with rs, ir.Ring.setup(8) as ring:               # 2. created disabled
        ring.register_files([r])                      # 3. while disabled
        ring.register_buffers([bytearray(16)])
        rep = ir.ring_apply(ring, rs)                 # 4. restrict, then enable
        print("step1: ring restricted: %d entries registered, enabled=%d"
              % (rep.nr_entries, rep.enabled))
        ring.nop()                                    # 5. use it
        print("step1: NOP -> 0 (allowed)")
        got = ring.read(0, 5, offset=-1, fixed_file=True)
        print("step1: READ of fixed file 0 -> %r (allowed)" % got)
        got2 = ring.read_fixed(0, 0, 6, offset=-1, fixed_file=True)
        print("step1: READ_FIXED into buffer 0 -> %r (allowed)" % got2)
        try:
            ring.write(w, b"x")
            wr = "completed"
        except PermissionError as e:
            wr = "-" + errno.errorcode[e.errno]
        print("step1: WRITE -> %s (not in the set)" % wr)
        try:
            ring.register_buffers([bytearray(16)])
            reg = "completed"
        except PermissionError as e:
            reg = "-" + errno.errorcode[e.errno]
        print("step1: REGISTER_BUFFERS after enabling -> %s (not in the set)" % reg)
    os.close(r)
    os.close(w)
    ok = (got, got2, wr, reg) == (b"hello", b", ring", "-EACCES", "-EACCES")
    print("step1: ok" if ok else "step1: FAILED: expected the reads, and EACCES for the rest")
    return ok


def in_child(step):
    """Runs ``step`` in a forked child (a task policy is for good): whether
    it said ok."""
    sys.stdout.flush()
    pid = os.fork()
    if pid == 0:
        try:
            ok = step()
        except BaseException:
            traceback.print_exc()
            ok = False
        sys.stdout.flush()
        os._exit(0 if ok else 1)
    _, st = os.waitpid(pid, 0)
    return os.WIFEXITED(st) and os.WEXITSTATUS(st) == 0


def apply_task(name, pol):
    """Plans ``pol`` for this kernel and applies it to the task: the level
    and the report."""
    level = ir.feature_level()
    print("%s: kernel feature level %d: %s"
          % (name, level, ir.lib.iour_feature_level_str(level).decode()))
    with pol.plan() as plan:
        rep = plan.apply_task()                       # no_new_privs, then the set
    print("%s: task: %s (mechanism %s)" % (name, rep.status, rep.mechanism))
    return level, rep


def companion_fallback(name, rep):
    """Before Linux 7.0: the seccomp companion makes io_uring_setup fail
    with ENOSYS."""
    try:
        ir.Ring.setup(8, disabled=False).close()
        got = "a ring"
    except OSError as e:
        got = "-" + errno.errorcode[e.errno]
    print("%s: no task restrictions before Linux 7.0: fell back to the seccomp companion: "
          "io_uring_setup -> %s" % (name, got))
    return (rep.status, rep.mechanism, got) == (ir.Status.PARTIALLY, ir.Mechanism.COMPANION,
                                                "-ENOSYS")


def step2():
    rs = ir.Ruleset().allow_sqe_op("NOP", "READ").set_sqe_flags(0, 0)
    with rs, ir.Policy(rs) as pol:                    # target: the calling task
        level, rep = apply_task("step2", pol)
    if level >= ir.FeatureLevel.TASK_BPF:
        with ir.Ring.setup(8, disabled=False) as ring:  # a new ring: restricted
            nop = ring.submit(ir.Op.NOP)
            op = ring.submit(ir.Op.OPENAT)            # denied before its arguments
        print("step2: task restrictions (Linux 7.0+): a new ring: NOP -> %d, OPENAT -> %s"
              % (nop, "-" + errno.errorcode[-op] if op < 0 else "completed"))
        ok = rep.status is ir.Status.FULLY and (nop, op) == (0, -errno.EACCES)
    else:
        ok = companion_fallback("step2", rep)
    print("step2: ok" if ok else "step2: FAILED")
    return ok


def step3():
    rs = ir.Ruleset().allow_sqe_op("NOP", "SOCKET").set_sqe_flags(0, 0)
    flt = ir.Filter().add_rule("SOCKET", ir.Verdict.ALLOW,
                               ir.Cmp(ir.Field.SOCKET_FAMILY, ir.CmpOp.EQ,
                                      value=socket.AF_UNIX))
    flt.set_default("SOCKET", ir.Verdict.DENY)
    with rs, flt, ir.Policy(rs, flt) as pol:
        level, rep = apply_task("step3", pol)
    if level >= ir.FeatureLevel.TASK_BPF:
        with ir.Ring.setup(8, disabled=False) as ring:
            # IORING_OP_SOCKET: fd is the domain, off the type
            unix = ring.submit(ir.Op.SOCKET, fd=socket.AF_UNIX, off=socket.SOCK_STREAM)
            inet = ring.submit(ir.Op.SOCKET, fd=socket.AF_INET, off=socket.SOCK_STREAM)
        if unix >= 0:
            os.close(unix)
        print("step3: filters (Linux 7.0+): SOCKET AF_UNIX -> %s, AF_INET -> %s"
              % ("a socket" if unix >= 0 else "-" + errno.errorcode[-unix],
                 "-" + errno.errorcode[-inet] if inet < 0 else "a socket"))
        ok = rep.status is ir.Status.FULLY and unix >= 0 and inet == -errno.EACCES
    else:
        ok = companion_fallback("step3", rep)
    print("step3: ok" if ok else "step3: FAILED")
    return ok


def show(title, plan):
    rep = plan.report
    # The enums print their names.
    print("step4: %s: %s; mechanism %s" % (title, rep.status, rep.mechanism))
    print("step4: %s: flags %s" % (title, rep.flags))
    for i, d in enumerate(rep.decisions):
        print("step4: %s: decision %d: %s: %s" % (title, i, d.kind, d.text))
    return rep


def step4():
    # The policy of step 3: SOCKET for AF_UNIX only, as a task policy.
    rs = ir.Ruleset().allow_sqe_op("NOP", "SOCKET").set_sqe_flags(0, 0)
    flt = ir.Filter().add_rule("SOCKET", ir.Verdict.ALLOW,
                               ir.Cmp(ir.Field.SOCKET_FAMILY, ir.CmpOp.EQ,
                                      value=socket.AF_UNIX))
    flt.set_default("SOCKET", ir.Verdict.DENY)
    with rs, flt, ir.Policy(rs, flt, target="task") as pol:
        print("step4: this kernel: feature level %s" % ir.feature_level())
        with pol.plan() as plan:
            here = show("this kernel", plan)
        with pol.plan(level="connect") as plan:      # Linux 7.2's level
            future = show("Linux 7.2", plan)
    ok = future.status is ir.Status.FULLY and future.mechanism == ir.Mechanism.TASK
    ok = ok and here.status in ir.Status
    print("step4: ok" if ok else "step4: FAILED: the 7.2 plan is not fully enforced")
    return ok


if __name__ == "__main__":
    oks = [step1(), in_child(step2), in_child(step3), step4()]
    sys.exit(0 if all(oks) else 1)
