# SPDX-License-Identifier: MIT
"""Run by test_safety.py in a child process: threads plan and serialize a
policy while the main thread closes it.  Before handles counted their calls
in flight this crashed (a use-after-free: ctypes releases the GIL)."""
import sys, threading
import iouring_restrict as ir

def build():
    f = ir.Filter()
    for fam in range(2, 40):
        f.add_rule("SOCKET", ir.Verdict.ALLOW,
                   ir.Cmp(ir.Field.SOCKET_FAMILY, ir.CmpOp.EQ, value=fam),
                   ir.Cmp(ir.Field.SOCKET_TYPE, ir.CmpOp.IN_SET, values=list(range(1, 12))))
    rs = ir.Ruleset().allow_sqe_op("SOCKET", "NOP").set_sqe_flags(0, 0)
    return ir.Policy(rs, f, target=ir.Target.TASK, compat=ir.Compat.SOFT)

errors = []
for round in range(int(sys.argv[1]) if len(sys.argv) > 1 else 40):
    pol = build()
    go = threading.Event()
    def worker():
        go.wait()
        try:
            while True:
                with pol.plan(level=ir.FeatureLevel.CONNECT) as p:
                    p.describe()
                pol.to_json()
        except ValueError:
            pass
    ts = [threading.Thread(target=worker) for _ in range(2)]
    for t in ts: t.start()
    go.set()
    import time; time.sleep(0.005 * (round % 5))
    pol.close()
    for t in ts: t.join()
print("ok")
