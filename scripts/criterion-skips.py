#!/usr/bin/env python3
"""Record the skipped tests of a Criterion run for make check's summary.

    criterion-skips.py [--expect N] REPORT.json [LABEL]

REPORT.json is Criterion's --json output.  Every test skipped with a reason
(cr_skip_test("...")) becomes one line "STEP<TAB>LABEL: suite::test: reason"
in $IOUR_SKIP_LOG (set, with IOUR_SKIP_STEP, by scripts/ci-step.sh for each
step of make check).  Criterion reports the tests a --filter left out as
skipped with its own message, "The test was skipped."; those are not
skips of this machine and are left out.  Without IOUR_SKIP_LOG it only
prints the count.  --expect N fails unless exactly N tests were selected
(run or skipped by the test itself, not left out by --filter): the count
scripts/criterion-filter.py gives with each filter.
"""
import json
import os
import sys

FILTERED = "The test was skipped."


def main():
    args = sys.argv[1:]
    expect = None
    if args[:1] == ["--expect"]:
        expect = int(args[1])
        args = args[2:]
    path = args[0]
    label = args[1] if len(args) > 1 else os.path.basename(path)
    try:
        with open(path) as f:
            rep = json.load(f)
    except (OSError, ValueError) as e:
        print("criterion-skips: %s: %s" % (path, e), file=sys.stderr)
        return 1
    # reason -> [suite::test, ...]; a reason many tests share is one line
    # per test naming the suites, so the summary counts it once
    by_reason = {}
    selected = 0
    for suite in rep.get("test_suites", []):
        for t in suite.get("tests", []):
            if t.get("status") != "SKIPPED":
                selected += 1
                continue
            msgs = [m for m in t.get("messages", []) if m and m != FILTERED]
            if not msgs:
                continue
            selected += 1
            why = " ".join(msgs)
            if why.startswith("skipped: "):
                why = why[len("skipped: "):]
            by_reason.setdefault(why, []).append((suite.get("name"), t.get("name")))
    lines = []
    for why, tests in sorted(by_reason.items()):
        if len(tests) == 1:
            lines.append("%s::%s: %s" % (tests[0][0], tests[0][1], why))
        else:
            suites = sorted(set(s for s, _ in tests))
            lines += ["%s (%s)" % (why, ", ".join(suites))] * len(tests)
    log = os.environ.get("IOUR_SKIP_LOG")
    step = os.environ.get("IOUR_SKIP_STEP", "?")
    if log:
        with open(log, "a") as f:
            for ln in lines:
                f.write("%s\t%s: %s\n" % (step, label, ln.replace("\t", " ").replace("\n", " ")))
    print("%s: %d test(s) skipped on this machine, each saying why" % (label, len(lines)))
    if expect is not None and selected != expect:
        print("%s: %d tests selected, the filter names %d" % (label, selected, expect),
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
