#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The mutation campaign over lib/ (doc/design.md, "Mutation testing").

tests/mutation/mutants.txt holds one mutant a line, fields separated by
TABs (\\t and \\n in the locator and the replacement stand for a TAB and a
newline):

    id  file  locator  replacement  kind  unit-filter[;live-filter]  [equivalent: reason]

The locator must occur exactly once in the file.  --check verifies that
(make mutation-list, seconds).  --run copies the tree (tracked and new
files, and the build directory so the first build is incremental) to a
scratch directory per worker, never touching the work tree; for each
mutant it replaces the locator, rebuilds the unit tests and the tools,
runs the unit tests the filter selects (then the live ones, if given),
stopping at the first failure (= killed), and restores the file.  Before
any mutant, every filter runs once on the unmutated tree and must pass:
a filter that fails there would "kill" every mutant it is given.  It
prints killed / non-equivalent and the survivors, and writes
tests.mutation_score and the run time to bench/bench-mutation.json.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

MUTANTS = "tests/mutation/mutants.txt"
MIN_MUTANTS = 60


def unescape(s):
    return s.replace("\\t", "\t").replace("\\n", "\n")


def load(path):
    out = []
    with open(path, encoding="utf-8") as f:
        for no, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line.strip() or line.startswith("#"):
                continue
            parts = line.split("\t")
            if len(parts) not in (6, 7):
                sys.exit(f"{path}:{no}: expected 6 or 7 TAB-separated fields, found {len(parts)}")
            m = {
                "id": parts[0], "file": parts[1], "locator": unescape(parts[2]),
                "replacement": unescape(parts[3]), "kind": parts[4],
                "unit": parts[5].split(";")[0],
                "live": parts[5].split(";")[1] if ";" in parts[5] else "",
                "equivalent": None, "line": no,
            }
            if len(parts) == 7:
                if not parts[6].startswith("equivalent: ") or len(parts[6]) < 20:
                    sys.exit(f"{path}:{no}: the 7th field must be 'equivalent: <reason>'")
                m["equivalent"] = parts[6][len("equivalent: "):]
            out.append(m)
    return out


def check(mutants, root):
    bad = 0
    ids = set()
    for m in mutants:
        if m["id"] in ids:
            print(f"{MUTANTS}:{m['line']}: duplicate id {m['id']}")
            bad += 1
        ids.add(m["id"])
        if not m["file"].startswith("lib/"):
            print(f"{MUTANTS}:{m['line']}: {m['id']}: {m['file']} is not under lib/")
            bad += 1
        try:
            with open(os.path.join(root, m["file"]), encoding="utf-8") as f:
                text = f.read()
        except OSError as e:
            print(f"{MUTANTS}:{m['line']}: {m['id']}: {e}")
            bad += 1
            continue
        n = text.count(m["locator"])
        if n != 1:
            print(f"{MUTANTS}:{m['line']}: {m['id']}: locator occurs {n} times in {m['file']}"
                  f" (must be exactly once): {m['locator']!r}")
            bad += 1
        if m["locator"] == m["replacement"]:
            print(f"{MUTANTS}:{m['line']}: {m['id']}: the replacement changes nothing")
            bad += 1
    if len(mutants) < MIN_MUTANTS:
        print(f"{MUTANTS}: {len(mutants)} mutants, at least {MIN_MUTANTS} expected")
        bad += 1
    return bad


def copy_tree(root, dst):
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=root,
                           check=True, capture_output=True).stdout.split(b"\0")
    for f in files:
        if not f:
            continue
        f = f.decode()
        src = os.path.join(root, f)
        if not os.path.isfile(src):
            continue
        os.makedirs(os.path.dirname(os.path.join(dst, f)) or dst, exist_ok=True)
        shutil.copy2(src, os.path.join(dst, f))
    b = os.path.join(root, "build")
    if os.path.isdir(b):
        shutil.copytree(b, os.path.join(dst, "build"), symlinks=True,
                        ignore=shutil.ignore_patterns("asan*", "valgrind", "coverage", "fuzz*",
                                                      "guest*", "*.json", "*.xml"))


def sh(cmd, cwd, timeout):
    try:
        r = subprocess.run(cmd, cwd=cwd, shell=True, capture_output=True, timeout=timeout)
        return r.returncode, (r.stdout + r.stderr).decode(errors="replace")
    except subprocess.TimeoutExpired:
        return -1, "timeout"


BUILD = "make -j1 O=build unit-tests tools live-tests uring-try >/dev/null 2>&1"


class HarnessError(Exception):
    pass


def harness_error(m, out):
    """A filter that selects nothing or that Criterion cannot parse is the
    campaign's error, not a killed mutant."""
    if "pattern error" in out or "Tested: 0 " in out:
        raise HarnessError(f"{m['id']}: the filter of {MUTANTS}:{m['line']} runs no test")


ENV = "IOUR_EXAMPLES_DIR=build/examples IOUR_TOOLS_DIR=build/tools"


def run_filter(tier, flt, wdir, timeout):
    return sh(f"{ENV} build/tests/{tier} -j1 --fail-fast --filter '@({flt})'", wdir, timeout)


def baseline(todo, wdir, timeout):
    """Every filter must pass on the unmutated tree (and select a test),
    or a mutant it 'kills' proves nothing.  Returns the failures."""
    bad = []
    seen = set()
    for m in todo:
        for tier, flt in (("unit", m["unit"]), ("live", m["live"])):
            if not flt or (tier, flt) in seen:
                continue
            seen.add((tier, flt))
            rc, out = run_filter(tier, flt, wdir, timeout)
            if rc != 0 or "pattern error" in out or "Tested: 0 " in out:
                bad.append(f"{m['id']}: {tier} filter {flt!r} fails unmutated: "
                           + (out.strip().splitlines() or ["?"])[-1][:200])
    return bad


def run_one(m, wdir, timeout):
    path = os.path.join(wdir, m["file"])
    with open(path, encoding="utf-8") as f:
        orig = f.read()
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write(orig.replace(m["locator"], m["replacement"], 1))
        rc, _ = sh(BUILD, wdir, timeout)
        if rc != 0:
            return "killed", "build fails"
        rc, out = run_filter("unit", m["unit"], wdir, timeout)
        harness_error(m, out)
        if rc != 0:
            return "killed", "unit " + (out.strip().splitlines() or ["?"])[-1][:100]
        if m["live"]:
            rc, out = run_filter("live", m["live"], wdir, timeout)
            harness_error(m, out)
            if rc != 0:
                return "killed", "live " + (out.strip().splitlines() or ["?"])[-1][:100]
        return "survived", ""
    finally:
        with open(path, "w", encoding="utf-8") as f:
            f.write(orig)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--run", action="store_true")
    ap.add_argument("-j", type=int, default=1)
    ap.add_argument("--only", default="", help="comma-separated mutant ids")
    ap.add_argument("--timeout", type=int, default=600)
    ap.add_argument("--bench", default="bench/bench-mutation.json")
    a = ap.parse_args()
    root = os.getcwd()
    mutants = load(os.path.join(root, MUTANTS))
    bad = check(mutants, root)
    if a.check or bad:
        if not bad:
            print(f"mutation-list: {len(mutants)} mutants, every locator matches exactly once")
        sys.exit(1 if bad else 0)
    if not a.run:
        ap.error("--check or --run")
    todo = [m for m in mutants if m["equivalent"] is None]
    if a.only:
        want = set(a.only.split(","))
        todo = [m for m in todo if m["id"] in want]
    t0 = time.time()
    scratch = tempfile.mkdtemp(prefix="iour-mutation.")
    workers = max(1, min(a.j, 2))
    results = {}
    lock = threading.Lock()
    queue = list(todo)
    ready = threading.Event()
    broken = []

    def worker(k):
        wdir = os.path.join(scratch, f"w{k}")
        copy_tree(root, wdir)
        rc, out = sh(BUILD, wdir, 3600)
        if rc != 0:
            print(f"worker {k}: the unmutated tree does not build:\n{out}", file=sys.stderr)
            if k == 0:
                broken.append("build")
                ready.set()
            return
        if k == 0:
            broken.extend(baseline(todo, wdir, a.timeout))
            for b in broken:
                print(f"baseline: {b}", file=sys.stderr)
            ready.set()
        ready.wait()
        if broken:
            return
        while True:
            with lock:
                if not queue:
                    return
                m = queue.pop(0)
            try:
                st, why = run_one(m, wdir, a.timeout)
            except HarnessError as e:
                st, why = "error", str(e)
            with lock:
                results[m["id"]] = (st, why)
                print(f"  {m['id']:<10} {st:<8} {m['file']}: {m['kind']} {why}", flush=True)

    ts = [threading.Thread(target=worker, args=(k,)) for k in range(workers)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    shutil.rmtree(scratch, ignore_errors=True)
    if broken:
        sys.exit("mutation: the unmutated tree fails a filter (see above); no mutant ran")
    if len(results) != len(todo):
        sys.exit("mutation: some mutants did not run")
    errors = [k for k, (s, _) in results.items() if s == "error"]
    if errors:
        sys.exit("mutation: harness errors (fix the filters): " + ", ".join(errors))
    killed = sum(1 for s, _ in results.values() if s == "killed")
    equiv = sum(1 for m in mutants if m["equivalent"] is not None)
    secs = round(time.time() - t0, 1)
    score = killed / len(todo) if todo else 1.0
    print(f"mutation: {killed}/{len(todo)} non-equivalent mutants killed "
          f"({score:.1%}); {equiv} equivalent; {secs} s")
    surv = [m for m in todo if results[m["id"]][0] == "survived"]
    for m in surv:
        print(f"  SURVIVED {m['id']} {m['file']}: {m['locator']!r} -> {m['replacement']!r}")
    if not a.only:
        doc = {"tests": {"mutation_score": round(score, 4), "mutation_killed": killed,
                         "mutation_non_equivalent": len(todo), "mutation_equivalent": equiv,
                         "mutation_survivors": [m["id"] for m in surv],
                         "mutation_run_seconds": secs}}
        with open(os.path.join(root, a.bench), "w", encoding="utf-8") as f:
            json.dump(doc, f, indent=1, sort_keys=True)
            f.write("\n")
    sys.exit(0 if score >= 0.95 else 1)


if __name__ == "__main__":
    main()
