#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The folder tree is the architecture (doc/design.md, "Layers").

    scripts/check-layers.py [--objects DIR[:ROOT]]... [--summary]
    scripts/check-layers.py --selftest

Each layered tree (lib/ and tools/cli/) has a README.md whose table names
its folders with a rank: "| 0 | base/ | ... |".  A file may use a file of
its own folder or of a folder of lower rank, never one of higher or equal
rank in another folder, and no two files may use each other, directly or
round a longer circle.  "Use" is read two ways:

  - includes: every `#include "..."` of the tree's .c, .h and .def files
    (a lib/ file including anything under tests/ is refused as well);
  - calls: with --objects DIR:ROOT, the compiled objects of ROOT (for
    example build/static:lib), read with nm: a file uses another when it
    takes a symbol the other defines.

--summary prints the structure's numbers (files, folders, dependencies,
dependencies that point back up, circles).  Exit 0 clean, 1 with findings.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

TREES = ("lib", "tools/cli")
ROW = re.compile(r"^\|\s*(\d+)\s*\|\s*`?([a-z_]+)/`?\s*\|")
INC = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def ranks(root, tree):
    """folder -> rank, from TREE/README.md"""
    out = {}
    path = os.path.join(root, tree, "README.md")
    with open(path) as f:
        for line in f:
            m = ROW.match(line)
            if m:
                out[m.group(2)] = int(m.group(1))
    if not out:
        sys.exit(f"{path}: no '| RANK | folder/ |' rows")
    return out


def tree_files(root, tree):
    base = os.path.join(root, tree)
    for d in sorted(os.listdir(base)):
        full = os.path.join(base, d)
        if not os.path.isdir(full):
            continue
        for f in sorted(os.listdir(full)):
            if f.endswith((".c", ".h", ".def")):
                yield f"{tree}/{d}/{f}"


def include_edges(root, tree, files, errors):
    """(from, to) pairs of files of the tree, from their includes"""
    edges = set()
    known = set(files)
    for fn in files:
        with open(os.path.join(root, fn)) as f:
            text = f.read()
        here = os.path.dirname(fn)
        for m in INC.finditer(text):
            name = m.group(1)
            if "tests/" in name or name.startswith(".."):
                errors.append(f"{fn}: includes {name}: outside its tree")
                continue
            for cand in (f"{here}/{name}", f"{tree}/{name}"):
                if cand in known:
                    if cand != fn:
                        edges.add((fn, cand))
                    break
    return edges


def call_edges(objdir, tree):
    """(from, to) pairs of source files, from the objects' symbols"""
    defs, uses = {}, {}
    for dirpath, _, names in os.walk(objdir):
        for n in names:
            if not n.endswith(".o"):
                continue
            obj = os.path.join(dirpath, n)
            src = f"{tree}/{os.path.relpath(obj, objdir)[:-2]}.c"
            out = subprocess.run(["nm", obj], capture_output=True, text=True,
                                 check=True).stdout
            for line in out.splitlines():
                p = line.split()
                if len(p) == 3 and p[1] in "TDBR":
                    defs[p[2]] = src
                elif len(p) == 2 and p[0] == "U":
                    uses.setdefault(src, set()).add(p[1])
    edges = set()
    for src, names in uses.items():
        for n in names:
            dst = defs.get(n)
            if dst and dst != src:
                edges.add((src, dst))
    return edges


def folder(fn, tree):
    return fn[len(tree) + 1:].split("/", 1)[0]


def circles(edges):
    """strongly connected components of more than one file (Tarjan)"""
    graph = {}
    for a, b in edges:
        graph.setdefault(a, set()).add(b)
        graph.setdefault(b, set())
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def check(tree, rank, files, edges, errors):
    """findings for one tree; returns the numbers of upward dependencies
    and of circles"""
    up = 0
    for fn in files:
        if folder(fn, tree) not in rank:
            errors.append(f"{fn}: folder {folder(fn, tree)}/ has no row in {tree}/README.md")
    for a, b in sorted(edges):
        fa, fb = folder(a, tree), folder(b, tree)
        if fa == fb or fa not in rank or fb not in rank:
            continue
        if rank[fb] >= rank[fa]:
            up += 1
            errors.append(f"{a} -> {b}: {fa}/ (rank {rank[fa]}) uses {fb}/ "
                          f"(rank {rank[fb]}); dependencies point down only")
    comps = circles(edges)
    for comp in comps:
        errors.append("circle: " + " <-> ".join(comp))
    return up, len(comps)


def run(root, objects, summary):
    errors = []
    for tree in TREES:
        rank = ranks(root, tree)
        files = list(tree_files(root, tree))
        inc = include_edges(root, tree, files, errors)
        calls = set()
        for spec in objects:
            objdir, _, objtree = spec.partition(":")
            if objtree == tree:
                calls |= call_edges(objdir, tree)
        edges = inc | calls
        up, ncircles = check(tree, rank, files, edges, errors)
        if summary:
            print(f"{tree}/: {len(files)} files in {len(rank)} folders; "
                  f"{len(inc)} include and {len(calls)} call dependencies between files; "
                  f"{up} pointing back up; {ncircles} circles")
    for e in errors:
        print(e)
    return 1 if errors else 0


def selftest():
    """the check fails on an upward use, a same-rank sibling and a circle"""
    rank = {"base": 0, "plan": 1, "serve": 2, "files": 2}
    files = ["t/base/a.c", "t/plan/b.c", "t/serve/c.c", "t/files/d.c"]
    cases = [
        ({("t/plan/b.c", "t/base/a.c"), ("t/serve/c.c", "t/plan/b.c")}, 0),
        ({("t/base/a.c", "t/plan/b.c")}, 1),
        ({("t/serve/c.c", "t/files/d.c")}, 1),
        ({("t/plan/b.c", "t/plan/x.c"), ("t/plan/x.c", "t/plan/b.c")}, 1),
    ]
    for edges, want in cases:
        errors = []
        check("t", rank, files, edges, errors)
        if bool(errors) != bool(want):
            print(f"check-layers selftest: {sorted(edges)} gave {errors}")
            return 1
    errors = []
    with tempfile.TemporaryDirectory() as tmp:
        os.makedirs(f"{tmp}/t/base")
        with open(f"{tmp}/t/base/a.c", "w") as f:
            f.write('#include "../tests/x.def"\n')
        include_edges(tmp, "t", ["t/base/a.c"], errors)
    if not errors:
        print("check-layers selftest: an include of tests/ was not refused")
        return 1
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=".")
    ap.add_argument("--objects", action="append", default=[], metavar="DIR:TREE")
    ap.add_argument("--summary", action="store_true")
    ap.add_argument("--selftest", action="store_true")
    a = ap.parse_args()
    if a.selftest:
        return selftest()
    return run(a.root, a.objects, a.summary)


if __name__ == "__main__":
    sys.exit(main())
