#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""make prove: every argument filter the test corpus compiles, proved with
z3 to mean what its rules say (tools/prove/iour-prove, doc/cli.md "prove").

  1. policy files: tests/policies/good, examples/policies, tests/cli/policies,
     tests/guest/policies, and the policy texts the unit tests embed
     (tests/unit/*.c string literals holding an "entries" list; those the
     library refuses to load, on purpose, are counted and left out), each
     planned for Linux 7.2 and proved with `iour-restrict prove`, which
     also mutates every proved program;
  2. a fixed number of the differential test's random policies
     (tests/prove/prove_gen.c, seed fixed), each checked on the test's
     contexts against the reference model and then proved; and as many
     random programs of the checker tests: every one the validator accepts
     must be proved safe, and the prover's reading of it must give the
     library simulator's verdict on generated contexts;
  3. with --sizes, the timing cases: programs of about 10, 1,000 and 4,000
     instructions and the 100,000-entry stacked deny-list of `make bench`.

Prints each part's summary and the total "N proved, 0 counterexamples" with
the time taken; exits 1 on any counterexample, disagreement, or an
undecided question.
"""

import argparse
import glob
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROVER = os.path.join(ROOT, "tools", "prove", "iour-prove")
SUMMARY = re.compile(r"^(\d+) proved, (\d+) counterexamples, (\d+) unknown")
MUTANTS = re.compile(r"^mutants: (\d+), (\d+) killed by a counterexample, (\d+) equivalent, "
                     r"(\d+) unknown")
CTXS = re.compile(r"^reference contexts: (\d+) checked .*, (\d+) disagreements")
CHECKER = re.compile(r"^checker: .* (\d+) disagreements")


def c_string_policies(path):
    """JSON policy texts written as C string literals in a test file."""
    src = open(path, encoding="utf-8").read()
    out = []
    # runs of adjacent string literals
    for m in re.finditer(r'(?:"(?:[^"\\\n]|\\.)*"\s*)+', src):
        lits = re.findall(r'"((?:[^"\\\n]|\\.)*)"', m.group(0))
        text = "".join(lits)
        if '\\"entries\\"' not in text or not text.lstrip().startswith("{"):
            continue
        try:
            text = bytes(text, "utf-8").decode("unicode_escape")
            json.loads(text)
        except (ValueError, UnicodeDecodeError):
            continue
        out.append(text)
    return out


def run(cmd, stdin=None):
    p = subprocess.run(cmd, input=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, check=False)
    return p.returncode, p.stdout, p.stderr


def tally(text, totals):
    for line in text.splitlines():
        m = SUMMARY.match(line)
        if m:
            totals["proved"] += int(m.group(1))
            totals["cex"] += int(m.group(2))
            totals["unknown"] += int(m.group(3))
        m = MUTANTS.match(line)
        if m:
            for k, g in zip(("mutants", "killed", "equivalent", "mut_unknown"), m.groups()):
                totals[k] += int(g)
        m = CTXS.match(line) or CHECKER.match(line)
        if m and m.re is CHECKER:
            totals["disagree"] += int(m.group(1))
        elif m:
            totals["contexts"] += int(m.group(1))
            totals["disagree"] += int(m.group(2))


def show_problems(text):
    for line in text.splitlines():
        if SUMMARY.match(line) or MUTANTS.match(line) or CTXS.match(line) or \
                CHECKER.match(line):
            continue
        if "counterexample" in line or "unknown:" in line or "disagree" in line \
                or "unsafe" in line or "reference" in line and "here" in line:
            if not SUMMARY.match(line):
                print("  " + line)


def size_policies(tmp):
    """The timing cases as policy files: (label, path)."""
    rng = random.Random(7)
    out = []

    def write(label, entries, default="deny"):
        path = os.path.join(tmp, "size-%s.json" % label.replace(" ", "-"))
        with open(path, "w") as f:
            json.dump({"version": 1, "defaultAction": default, "entries": entries}, f)
        out.append((label, path))

    write("n=10", [{"names": ["socket"], "action": "allow", "args": [
        {"field": "socket.family", "op": "in", "values": ["AF_INET", "AF_INET6"]},
        {"field": "socket.type", "op": "==", "value": "SOCK_STREAM"}]}])
    def addrs(vals):
        return ["%d.%d.%d.%d" % (v >> 24, v >> 16 & 255, v >> 8 & 255, v & 255) for v in vals]

    # deny-lists of random addresses in one program: about 2.8
    # instructions per address
    for label, k in (("n=1000", 350), ("n=4000", 1400)):
        write(label, [{"names": ["connect"], "action": "deny", "args": [
            {"field": "connect.addr4", "op": "in",
             "values": addrs(sorted(rng.sample(range(1 << 32), k)))}]}], default="allow")
    vals = sorted(rng.sample(range(1 << 32), 100000))
    ents = []
    for i in range(0, len(vals), 65536):
        ents.append({"names": ["connect"], "action": "deny", "args": [
            {"field": "connect.addr4", "op": "in", "values": addrs(vals[i:i + 65536])}]})
    write("100k stacked deny-list", ents, default="allow")
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--gen", required=True)
    ap.add_argument("--random", type=int, default=120, help="random policies (default 120)")
    ap.add_argument("--seed", default="0x5eed0f11e7")
    ap.add_argument("--mutate", type=int, default=2)
    ap.add_argument("--sizes", action="store_true")
    ap.add_argument("--timeout", type=int, default=60000)
    a = ap.parse_args()

    t0 = time.monotonic()
    totals = dict.fromkeys(("proved", "cex", "unknown", "mutants", "killed", "equivalent",
                            "mut_unknown", "contexts", "disagree"), 0)
    bad = False
    with tempfile.TemporaryDirectory(prefix="iour-prove.") as tmp:
        files = []
        for pat in ("tests/policies/good/*.json", "examples/policies/*.json",
                    "tests/cli/policies/*.json", "tests/guest/policies/*.json"):
            files += sorted(glob.glob(os.path.join(ROOT, pat)))
        embedded = 0
        for src in sorted(glob.glob(os.path.join(ROOT, "tests/unit/*.c"))):
            for i, text in enumerate(c_string_policies(src)):
                p = os.path.join(tmp, "%s.%d.json" % (os.path.basename(src)[:-2], i))
                with open(p, "w") as f:
                    f.write(text)
                files.append(p)
                embedded += 1
        usable, refused = [], 0
        for p in files:
            rc, _, _ = run([a.cli, "compile", "--kernel", "7.2", p])
            if rc == 0:
                usable.append(p)
            else:
                refused += 1
        print("policy files: %d (%d embedded in tests/unit); %d refused by the loader "
              "(tests of bad input), %d proved below" % (len(files), embedded, refused,
                                                         len(usable)))
        part = dict.fromkeys(totals, 0)
        rc, out, err = run([a.cli, "prove", "--quiet", "--timeout", str(a.timeout),
                            "--mutate", str(a.mutate)] + usable)
        tally(out, part)
        show_problems(out)
        sys.stdout.write(err)
        print("  " + "\n  ".join(l for l in out.splitlines() if SUMMARY.match(l) or
                                 MUTANTS.match(l)))
        bad |= rc != 0
        for k in totals:
            totals[k] += part[k]

        rc, jobs, err = run([a.gen, a.seed, str(a.random)])
        if rc:
            sys.stdout.write(err)
            return 1
        doc = json.loads(jobs)
        doc.update({"timeout_ms": a.timeout, "mutate": 1, "quiet": True,
                    "seed": 2})
        print("random policies: %d (seed %s), with the differential test's contexts"
              % (a.random, a.seed))
        rc, out, err = run([PROVER], stdin=json.dumps(doc))
        part = dict.fromkeys(totals, 0)
        tally(out, part)
        show_problems(out)
        sys.stdout.write(err)
        print("  " + "\n  ".join(l for l in out.splitlines() if SUMMARY.match(l) or
                                 MUTANTS.match(l) or CTXS.match(l) or CHECKER.match(l)))
        bad |= rc != 0
        for k in totals:
            totals[k] += part[k]

        if a.sizes:
            print("timing cases:")
            for label, path in size_policies(tmp):
                t1 = time.monotonic()
                rc, out, err = run([a.cli, "prove", "--timeout", str(a.timeout), path])
                lines = [l for l in out.splitlines() if ": " in l and "(" in l]
                print("  %-24s %s; whole run %.1f s" % (
                    label, lines[0].split(": ", 2)[-1] if lines else err.strip(),
                    time.monotonic() - t1))
                tally(out, totals)
                bad |= rc != 0

    secs = time.monotonic() - t0
    print("make prove: %d proved, %d counterexamples, %d unknown; %d reference contexts, "
          "%d disagreements; mutants: %d, %d killed, %d equivalent, %d unknown; %.1f s"
          % (totals["proved"], totals["cex"], totals["unknown"], totals["contexts"],
             totals["disagree"], totals["mutants"], totals["killed"], totals["equivalent"],
             totals["mut_unknown"], secs))
    if totals["cex"] or totals["unknown"] or totals["disagree"] or totals["mut_unknown"]:
        bad = True
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
