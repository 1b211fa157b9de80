#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A restricted ring from Python: a ring that may only run NOP and READ,
with no SQE flag, created disabled, restricted and enabled by the library;
then the enforcement check (a forked child submitting on this very ring)
shows the kernel answering the forbidden requests with EACCES.

Exits 0 only if the kernel confirmed every expectation.

    python3 examples/python/restricted_ring.py
"""
import errno
import sys

import iouring_restrict as ir


def main():
    f = ir.probe()
    print("kernel: feature level %s, per-ring restrictions %s" % (
        f.feature_level.name, f.avail("ring_restrictions").name))

    with ir.Ruleset() as rs:
        rs.allow_sqe_op("NOP", ir.Op.READ).set_sqe_flags(allowed=0, required=0)
        try:
            ring, rep = ir.ring_create(rs, entries=8)
        except PermissionError as e:
            print("io_uring is not allowed here: %s" % e)
            return 1
    with ring:
        print("ring fd %d: %d restriction entries for op_last %d, enabled=%d" % (
            ring.fileno(), rep.nr_entries, rep.op_last, rep.enabled))
        reqs = [
            ir.VerifyReq("NOP", ir.Expect.ALLOW),
            ir.VerifyReq("READ", ir.Expect.ALLOW),
            ir.VerifyReq("WRITE", ir.Expect.DENY),
            ir.VerifyReq("OPENAT", ir.Expect.DENY, path="/dev/null"),
            ir.VerifyReq("NOP", ir.Expect.DENY, sqe_flags=ir.SqeFlag.ASYNC),
        ]
        try:
            results = ir.verify(reqs, ring=ring)
            confirmed = True
        except ir.LibraryError as e:
            if e.code is not ir.ErrorCode.NOT_ENFORCED:
                raise
            results, confirmed = e.results, False
        for req, res in zip(reqs, results):
            answer = "ok" if res.res >= 0 else errno.errorcode.get(-res.res, str(res.res))
            print("  %-7s %-7s%-8s expected %-5s kernel said %s" % (
                "[ok]" if res.status is ir.VerifyStatus.MATCH else "[FAIL]",
                ir.opcode_name(req.opcode), " +ASYNC" if req.sqe_flags else "",
                ir.Expect(req.expect).name.lower(), answer))
    print("The kernel %s the restrictions." % ("confirmed" if confirmed else "did NOT confirm"))
    return 0 if confirmed else 1


if __name__ == "__main__":
    sys.exit(main())
