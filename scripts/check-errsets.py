#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The error sets of lib/base/errsets.def are the contract of the public functions.

For every function in the table, the error codes its header comment
documents after "@return" (every "-EFOO" and "-IOUR_ERRNO__FOO" there) must
be exactly its set: a code in the set but undocumented is an undocumented
error, a documented code missing from the set would reach the caller as
-IOUR_ERRNO__INTERNAL (doc/design.md, "Error codes at the boundary").
Also checked: no code twice in a set, and every set used by lib/*/*.c.

Usage: check-errsets.py [--cc CC] [ROOT]    (ROOT: the source tree, default .)
The table is expanded by the C preprocessor (CC -E), so its fragments
compose exactly as the compiler sees them.
"""
import argparse
import glob
import os
import re
import subprocess
import sys

DECL_RE = re.compile(r"^IOUR_API\b[^;{]*?\b([A-Za-z_]\w*)\s*\(", re.M)
CODE_RE = re.compile(r"(?<![\w-])-(E[A-Z0-9]+|IOUR_ERRNO__[A-Z_]+)\b")


def load_table(root, cc):
    src = '#define IOUR_ERRSET(id, function, ...) @@ id function __VA_ARGS__ @@\n#include "errsets.def"\n'
    out = subprocess.run(
        cc.split() + ["-E", "-P", "-I", os.path.join(root, "lib", "base"), "-x", "c", "-"],
        input=src, capture_output=True, text=True, check=True).stdout
    sets = []
    for m in re.finditer(r"@@\s*(\w+)\s+\"(\w+)\"\s*(.*?)@@", out, re.S):
        codes = [c.strip() for c in m.group(3).split(",") if c.strip()]
        sets.append((m.group(1), m.group(2), codes))
    return sets


def header_docs(root):
    """function -> (header, the text of its comment after @return)"""
    docs = {}
    for h in sorted(glob.glob(os.path.join(root, "include/iouring_restrict/*.h"))):
        text = open(h, encoding="utf-8").read()
        for m in DECL_RE.finditer(text):
            end = text.rfind("*/", 0, m.start())
            start = text.rfind("/**", 0, end)
            if end < 0 or start < 0 or text[end + 2:m.start()].strip():
                continue
            comment = text[start:end]
            ret = comment.find("@return")
            if ret >= 0:
                docs[m.group(1)] = (os.path.relpath(h, root), comment[ret:])
    return docs


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cc", default=os.environ.get("CC") or "cc")
    ap.add_argument("root", nargs="?", default=".")
    a = ap.parse_args()

    sets = load_table(a.root, a.cc)
    docs = header_docs(a.root)
    lib = "".join(open(f, encoding="utf-8").read()
                  for f in sorted(glob.glob(os.path.join(a.root, "lib/*/*.c"))))
    errors = []
    if not sets:
        errors.append("lib/base/errsets.def: no IOUR_ERRSET entries found")
    for sid, fn, codes in sets:
        for c in sorted({c for c in codes if codes.count(c) > 1}):
            errors.append(f"{fn}: {c} is twice in its error set (lib/base/errsets.def)")
        if not re.search(r"\bIOUR__ERRSET_" + sid + r"\b", lib):
            errors.append(f"{fn}: its error set IOUR__ERRSET_{sid} is used nowhere in lib/")
        if fn not in docs:
            errors.append(f"{fn}: no public declaration with an @return comment "
                          "in include/iouring_restrict/")
            continue
        hdr, ret = docs[fn]
        documented = set(CODE_RE.findall(ret))
        inset = set(codes)
        for c in sorted(inset - documented):
            errors.append(f"{fn}: -{c} is in its error set (lib/base/errsets.def) "
                          f"but not documented in {hdr}")
        for c in sorted(documented - inset):
            errors.append(f"{fn}: -{c} is documented in {hdr} but not in its error "
                          "set (lib/base/errsets.def): it would be returned as "
                          "-IOUR_ERRNO__INTERNAL")
    for e in errors:
        print("check-errsets: " + e, file=sys.stderr)
    if errors:
        return 1
    print(f"check-errsets: {len(sets)} error sets match their header documentation")
    return 0


if __name__ == "__main__":
    sys.exit(main())
