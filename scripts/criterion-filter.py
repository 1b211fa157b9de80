#!/usr/bin/env python3
"""Print Criterion --filter patterns that together run every test of a
binary except those matched by the given shell patterns.

    criterion-filter.py BINARY [PATTERN...]

Each output line is "N<TAB>FILTER": one Criterion run with --filter FILTER
runs exactly N tests; the lines' runs together run every test left.  A
suite kept whole is "suite/*", one with a few tests left out is
"suite/!(a|b)", otherwise its tests are named, "suite/@(a|b|...)"; the
alternatives are joined as "@(...|...)", at most MAX_LEN characters per
line.  Not "!(PATTERN|...)": Criterion 2.4 matches a negated alternation in
time that grows much faster than the number of its alternatives (40 cost
about a second of CPU before the first test; the runner under valgrind was
seen spending over three minutes on make check's list), and it crashes on
a pattern of about 4,000 characters.  The patterns here still cost the
runner under valgrind some time (on one loaded machine: 51 s before the
first test for make check's valgrind list, 4 s for a single suite/*, more
than 300 s for the negated list).  The tests come from BINARY --list;
PATTERN uses fnmatch's syntax (suite/*, suite/name).  Fails when the list
cannot be read or when no test is left.
"""
import fnmatch
import re
import subprocess
import sys


def tests_of(binary):
    out = subprocess.run([binary, "--list"], stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, check=True).stdout.decode()
    tests, suite = [], None
    for line in out.splitlines():
        m = re.match(r"^(\S+): \d+ tests?$", line)
        if m:
            suite = m.group(1)
            continue
        m = re.match(r"^[\s\u2502\u251c\u2514\u2500|`-]+(\S+)$", line)
        if m and suite:
            tests.append("%s/%s" % (suite, m.group(1)))
    return tests


MAX_LEN = 1500
FEW = 4


def alternatives(tests, skip):
    """(pattern, count) per suite with tests left, in --list order."""
    suites = {}
    for t in tests:
        suites.setdefault(t.split("/", 1)[0], []).append(t.split("/", 1)[1])
    out = []
    for suite, names in suites.items():
        gone = [n for n in names if any(fnmatch.fnmatchcase(suite + "/" + n, p) for p in skip)]
        kept = [n for n in names if n not in gone]
        if not kept:
            continue
        if not gone:
            out.append(("%s/*" % suite, len(kept)))
        elif len(gone) <= FEW:
            out.append(("%s/!(%s)" % (suite, "|".join(gone)), len(kept)))
        else:
            out.append(("%s/@(%s)" % (suite, "|".join(kept)), len(kept)))
    return out


def main(argv):
    if len(argv) < 2:
        sys.exit("usage: criterion-filter.py BINARY [PATTERN...]")
    skip = argv[2:]
    try:
        tests = tests_of(argv[1])
    except (OSError, subprocess.CalledProcessError) as e:
        sys.exit("criterion-filter: %s --list: %s" % (argv[1], e))
    bad = [t for t in tests if not re.match(r"^[A-Za-z0-9_]+/[A-Za-z0-9_]+$", t)]
    if bad:
        sys.exit("criterion-filter: test name with a pattern character: %s" % bad[0])
    alts = alternatives(tests, skip)
    if not alts:
        sys.exit("criterion-filter: no test of %s left to run (%d listed)"
                 % (argv[1], len(tests)))
    chunk, n = [], 0
    for pat, count in alts:
        if len(pat) + 3 > MAX_LEN:
            sys.exit("criterion-filter: %s alone is longer than %d characters" % (pat, MAX_LEN))
        if chunk and len("|".join(chunk + [pat])) + 3 > MAX_LEN:
            print("%d\t@(%s)" % (n, "|".join(chunk)))
            chunk, n = [], 0
        chunk.append(pat)
        n += count
    print("%d\t@(%s)" % (n, "|".join(chunk)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
