#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The socket-only server policy from Python: a server whose io_uring may
accept, receive, send and close, and create only TCP sockets (IPv4 or
IPv6) -- an argument filter on IORING_OP_SOCKET.

It builds the policy, shows the compiled filter and checks it in the
library's simulator, then plans it for this kernel and prints the plan and
the report it predicts.  Nothing is applied (see restricted_ring.py for a
ring restricted for real).  Exits 0 when the simulator agrees with the
policy on every probe context.

    python3 examples/python/socket_server_policy.py
"""
import socket
import sys

import iouring_restrict as ir

SERVER_OPS = ["ACCEPT", "RECV", "SEND", "CLOSE", "SOCKET", "CONNECT", "READ", "WRITE"]


def build():
    rs = ir.Ruleset().allow_sqe_op(*SERVER_OPS).set_sqe_flags(0, 0)
    flt = ir.Filter().add_rule(
        ir.Op.SOCKET, ir.Verdict.ALLOW,
        ir.Cmp(ir.Field.SOCKET_FAMILY, ir.CmpOp.IN_SET, values=[socket.AF_INET, socket.AF_INET6]),
        ir.Cmp(ir.Field.SOCKET_TYPE, ir.CmpOp.EQ, socket.SOCK_STREAM))
    return rs, flt


def main():
    rs, flt = build()
    failures = 0
    with rs, flt, flt.compile("SOCKET") as prog:
        print("Filter for IORING_OP_SOCKET: %d instructions, %s" % (
            len(prog.insns), "valid" if prog.validate().ok else "INVALID"))
        for line in prog.disasm().splitlines():
            print("  | " + line)
        cases = [
            ("TCP over IPv4", socket.AF_INET, socket.SOCK_STREAM, True),
            ("TCP over IPv6", socket.AF_INET6, socket.SOCK_STREAM, True),
            ("UDP over IPv4", socket.AF_INET, socket.SOCK_DGRAM, False),
            ("a Unix socket", socket.AF_UNIX, socket.SOCK_STREAM, False),
            ("a netlink socket", socket.AF_NETLINK, socket.SOCK_RAW, False),
        ]
        print("\nSimulated SOCKET requests:")
        for what, fam, typ, want in cases:
            got = prog.run(ir.ctx_socket(fam, typ)).allowed
            ok = got == want
            failures += not ok
            print("  %-6s %-18s %s" % ("[ok]" if ok else "[FAIL]", what,
                                        "allowed" if got else "denied"))

        with ir.Policy(rs, flt, target=ir.Target.TASK, compat=ir.Compat.BEST_EFFORT) as pol, \
                pol.plan() as plan:
            print("\nThe plan on this kernel (nothing applied):")
            for line in plan.describe().splitlines():
                print("  | " + line)
            rep = plan.report
            print("\nPredicted status: %s (mechanism: %s)" % (rep.status.name, rep.mechanism.name))
            for d in rep.decisions:
                print("  - %s: %s" % (d.kind.name, d.text))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
