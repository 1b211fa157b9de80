#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A container runtime's connection to `iour-restrict agent`, for
tests/agent/run.sh, in the ways a runtime (or something posing as one) can
make it:

  client.py SOCKET garbage   a message that is not JSON
  client.py SOCKET nofd      a state message without any fd
  client.py SOCKET silent N  connect, send nothing for N seconds
  client.py SOCKET huge      2 MiB of JSON (the agent takes at most 1 MiB)
  client.py SOCKET many N    N connections at once, silent for 2 seconds
  client.py SOCKET decoy [ID]  runc's message (container id ID, default
                             decoy) with unknown fields and two fds,
                             /dev/null as "other" and the read end of a pipe
                             as "seccompFd"; holds the pipe's write end for
                             one second (the agent sees its listener hang up)
"""
import json
import os
import socket
import sys
import time


def connect(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    return s


def main():
    path, mode = sys.argv[1], sys.argv[2]
    s = connect(path)
    if mode == "garbage":
        s.sendall(b"{ this is not json")
    elif mode == "nofd":
        s.sendall(json.dumps({"ociVersion": "1.0.2", "fds": ["seccompFd"], "pid": 1,
                              "state": {"id": "nofd", "pid": 1}}).encode())
    elif mode == "silent":
        time.sleep(float(sys.argv[3]))
    elif mode == "huge":
        try:
            s.sendall(b'{"pad": "' + b"x" * (2 << 20) + b'"}')
        except OSError:
            pass  # the agent hung up: what is tested
    elif mode == "many":
        more = [connect(path) for _ in range(int(sys.argv[3]))]
        time.sleep(2)
        for c in more:
            c.close()
    elif mode == "decoy":
        r, w = os.pipe()
        null = os.open("/dev/null", os.O_RDONLY)
        msg = {"ociVersion": "1.0.2-dev", "fds": ["other", "seccompFd"], "pid": 4242,
               "metadata": "iour-test", "newField": {"x": [1, 2]},
               "state": {"ociVersion": "1.0.2-dev",
                         "id": sys.argv[3] if len(sys.argv) > 3 else "decoy",
                         "status": "creating",
                         "pid": 4242, "bundle": "/nowhere", "future": True,
                         "annotations": {"example.other": "x"}}}
        socket.send_fds(s, [json.dumps(msg).encode()], [null, r])
        os.close(r)
        os.close(null)
        s.close()
        time.sleep(1)
        os.close(w)
        return
    else:
        sys.exit("client.py: unknown mode " + mode)
    s.close()


main()
