#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The bindings' lists of opcodes, register opcodes, SQE flags and fields,
written from the library's own tables (make generate; doc/design.md).

    gen-bindings.py [--build O] [--cc CC] [--cflags FLAGS]
                    [--check | --out DIR | --rows]

Compiles scripts/gen-bindings.c against O/libiouring-restrict.a (built
with the same CFLAGS, so a test build's extra schema rows count), runs it,
and rewrites every block between "BEGIN GENERATED <name>" and
"END GENERATED <name>" comment lines of the files below.

  (default)   rewrite the blocks in place
  --check     rewrite copies in a temporary directory and compare them with
              the tree; exit 1, showing the diff, if regenerating would
              change a file (needs no .git: works in a tarball)
  --out DIR   write the regenerated files under DIR (same relative paths)
  --rows      print the table rows only
"""
import argparse
import difflib
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PY_ENUMS = "bindings/python/iouring_restrict/enums.py"
RS_SYS = "bindings/rust/iouring-restrict-sys/src/lib.rs"
RS_NAMES = "bindings/rust/iouring-restrict/src/names.rs"
RS_FILTER = "bindings/rust/iouring-restrict/src/filter.rs"
FILES = (PY_ENUMS, RS_SYS, RS_NAMES, RS_FILTER)

BLOCK_RE = re.compile(
    r"^(?P<indent>[ \t]*)(?P<c>#|//) BEGIN GENERATED (?P<name>[\w-]+)[^\n]*\n"
    r"(?P<body>.*?)"
    r"^[ \t]*(?P=c) END GENERATED (?P=name)[^\n]*$",
    re.M | re.S)


def table_rows(build, cc, cflags):
    """(kind, number, name) rows of scripts/gen-bindings.c's output."""
    lib = os.path.join(build, "libiouring-restrict.a")
    if not os.path.exists(lib):
        sys.exit("gen-bindings: %s is not built (make lib)" % lib)
    with tempfile.TemporaryDirectory() as tmp:
        prog = os.path.join(tmp, "gen-bindings")
        cmd = [cc, "-std=c11", "-D_GNU_SOURCE", "-Iinclude", "-Ilib"] + cflags.split() + [
            "-o", prog, "scripts/gen-bindings.c", lib, "-ljansson"]
        subprocess.run(cmd, cwd=ROOT, check=True)
        out = subprocess.run([prog], check=True, stdout=subprocess.PIPE,
                             universal_newlines=True).stdout
    rows = []
    for line in out.splitlines():
        kind, num, name = line.split()
        rows.append((kind, int(num), name))
    return rows


def wrap(items, indent, width=79):
    """items, comma-separated, in lines no longer than width."""
    lines, cur = [], indent
    for it in items:
        piece = it + ","
        if cur.strip() and len(cur) + 1 + len(piece) > width:
            lines.append(cur.rstrip())
            cur = indent
        cur += piece if not cur.strip() else " " + piece
    if cur.strip():
        lines.append(cur.rstrip())
    return lines


def camel(dotted):
    return "".join(w.capitalize() for w in re.split(r"[._]", dotted))


def blocks(rows):
    """Block name -> its lines (without indentation handling: each block
    writes its own)."""
    ops = [(n, s) for k, n, s in rows if k == "op"]
    regs = [(n, s) for k, n, s in rows if k == "reg"]
    sqes = [(n, s) for k, n, s in rows if k == "sqe"]
    fields = [(n, s) for k, n, s in rows if k == "field"]
    for lst in (ops, regs):
        assert [n for n, _ in lst] == list(range(len(lst))), "opcode numbers not dense"
    valid = 0
    for n, _ in sqes:
        valid |= n
    fname = [(n, s.upper().replace(".", "_")) for n, s in fields]
    b = {}
    b["py-ops"] = ["_OPS = ("] + wrap(['"%s"' % s for _, s in ops], "    ") + [")"]
    b["py-regs"] = ["_REGS = ("] + wrap(['"%s"' % s for _, s in regs], "    ") + [")"]
    b["py-sqe-flags"] = ["    %s = 0x%02x" % (s, n) for n, s in sqes]
    b["py-fields"] = ["    %s = %d" % (s, n) for n, s in fname]
    b["rs-sys-ops"] = ["pub const IOUR_OP_%s: u32 = %d;" % (s, n) for n, s in ops] + [
        "pub const IOUR_OP__COUNT: u32 = %d;" % len(ops)]
    b["rs-sys-regs"] = ["pub const IOUR_%s: u32 = %d;" % (s, n) for n, s in regs] + [
        "pub const IOUR_REGISTER__COUNT: u32 = %d;" % len(regs)]
    b["rs-sys-sqe-flags"] = ["pub const IOUR_SQE_%s: u32 = %d;" % (s, n) for n, s in sqes] + [
        "pub const IOUR_SQE__VALID: u32 = %d;" % valid]
    b["rs-sys-fields"] = ["pub const IOUR_FIELD_%s: u32 = %d;" % (s, n) for n, s in fname]
    b["rs-ops"] = ["    pub const %s: Opcode = Opcode(%d);" % (s, n) for n, s in ops]
    b["rs-regs"] = ["    pub const %s: RegisterOp = RegisterOp(%d);" % (s, n) for n, s in regs]
    b["rs-sqe-flags"] = ["    pub const %s: SqeFlags = SqeFlags(sys::IOUR_SQE_%s);" % (s, s)
                         for _, s in sqes]
    b["rs-field-variants"] = ["    %s," % camel(s) for _, s in fields]
    b["rs-field-raw"] = ["            Field::%s => sys::IOUR_FIELD_%s," % (camel(d), s)
                         for (_, d), (_, s) in zip(fields, fname)]
    return b


def regenerate(text, gen, path):
    seen = set()

    def repl(m):
        name = m.group("name")
        if name not in gen:
            sys.exit("gen-bindings: %s: unknown block %s" % (path, name))
        seen.add(name)
        head = m.group(0).split("\n", 1)[0]
        tail = m.group(0).rsplit("\n", 1)[1]
        return "\n".join([head] + gen[name] + [tail])

    out = BLOCK_RE.sub(repl, text)
    if not seen:
        sys.exit("gen-bindings: %s has no GENERATED block" % path)
    return out, seen


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--cc", default=os.environ.get("CC", "cc"))
    ap.add_argument("--cflags", default="")
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true")
    mode.add_argument("--out")
    mode.add_argument("--rows", action="store_true")
    a = ap.parse_args()
    rows = table_rows(os.path.join(ROOT, a.build) if not os.path.isabs(a.build) else a.build,
                      a.cc, a.cflags)
    if a.rows:
        for k, n, s in rows:
            print(k, n, s)
        return 0
    gen = blocks(rows)
    used, changed = set(), []
    for rel in FILES:
        with open(os.path.join(ROOT, rel), encoding="utf-8") as f:
            old = f.read()
        new, seen = regenerate(old, gen, rel)
        used |= seen
        if a.check:
            if new != old:
                changed.append(rel)
                sys.stdout.writelines(difflib.unified_diff(
                    old.splitlines(True), new.splitlines(True), rel, rel + " (regenerated)"))
        else:
            dest = os.path.join(a.out, rel) if a.out else os.path.join(ROOT, rel)
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            with open(dest, "w", encoding="utf-8") as f:
                f.write(new)
    missing = set(gen) - used
    if missing:
        sys.exit("gen-bindings: no block for %s" % ", ".join(sorted(missing)))
    if changed:
        print("gen-bindings: regenerating changes %s: run 'make generate' and commit"
              % ", ".join(changed))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
