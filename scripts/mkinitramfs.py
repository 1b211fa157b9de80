#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Write a newc (SVR4 "070701") cpio archive for an initramfs.

usage: mkinitramfs.py OUT INIT [TEST ...]
INIT becomes /init, each TEST /tests/<basename>; the archive also holds
/dev/console (so the kernel can give /init a console) and empty /proc, /sys,
/dev and /tmp.  No cpio binary is needed.
"""
import os
import stat
import sys


def entry(out, ino, name, mode, data=b"", rdev=(0, 0)):
    name_b = name.encode() + b"\0"
    hdr = "070701" + "".join("%08x" % v for v in (
        ino, mode, 0, 0, 2 if stat.S_ISDIR(mode) else 1, 0, len(data),
        0, 0, rdev[0], rdev[1], len(name_b), 0))
    out.write(hdr.encode() + name_b)
    out.write(b"\0" * (-(110 + len(name_b)) % 4))
    out.write(data)
    out.write(b"\0" * (-len(data) % 4))


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__)
    out_path, init, tests = argv[1], argv[2], argv[3:]
    with open(out_path, "wb") as out:
        ino = 1
        for d in ("dev", "proc", "sys", "tmp", "tests"):
            entry(out, ino, d, stat.S_IFDIR | 0o755)
            ino += 1
        entry(out, ino, "dev/console", stat.S_IFCHR | 0o600, rdev=(5, 1))
        ino += 1
        with open(init, "rb") as f:
            entry(out, ino, "init", stat.S_IFREG | 0o755, f.read())
        ino += 1
        for t in tests:
            with open(t, "rb") as f:
                entry(out, ino, "tests/" + os.path.basename(t), stat.S_IFREG | 0o755, f.read())
            ino += 1
        entry(out, 0, "TRAILER!!!", 0)


if __name__ == "__main__":
    main(sys.argv)
