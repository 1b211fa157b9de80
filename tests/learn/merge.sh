#!/bin/sh
# SPDX-License-Identifier: MIT
# make check-merge: `iour-restrict merge` (doc/cli.md, "merge"): unions of
# classic parts and of entries, groups expanded, conflicting argument rules,
# attributes and mixed shapes refused with the reason, -o required, and the
# union's verdicts checked with `iour-restrict check` against each input's.
# Needs nothing of the machine.  Usage: tests/learn/merge.sh [BUILD_DIR]
set -u
O=${1:-build}
T=$O/tools/iour-restrict
pass=0
failed=0
ok() { pass=$((pass + 1)); echo "  ok   $*"; }
bad() { failed=$((failed + 1)); echo "  FAIL $*"; }
check() { d=$1; shift; if "$@"; then ok "$d"; else bad "$d"; fi; }
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
cat >"$W/a.json" <<'J'
{"defaultAction":"deny","requestOps":["READ","WRITE"],"registerOps":["@probe"],"sqeFlags":{"allowed":["IO_LINK"],"required":[]}}
J
cat >"$W/b.json" <<'J'
{"defaultAction":"deny","requestOps":["read","FSYNC"],"registerOps":["REGISTER_FILES"],"sqeFlags":{"allowed":["ASYNC"],"required":[]}}
J
cat >"$W/c.json" <<'J'
{"defaultAction":"deny","entries":[{"names":["openat"],"action":"allow","args":[{"field":"open.accmode","op":"==","value":"O_RDONLY"}]},{"names":["read","close"],"action":"allow"}]}
J
cat >"$W/d.json" <<'J'
{"defaultAction":"deny","entries":[{"names":["openat"],"action":"allow","args":[{"field":"open.accmode","op":"==","value":"O_WRONLY"}]},{"names":["write"],"action":"allow"}]}
J
cat >"$W/e.json" <<'J'
{"defaultAction":"deny","entries":[{"names":["write","openat"],"action":"allow"}]}
J
cat >"$W/f.json" <<'J'
{"defaultAction":"deny","target":"ring","requestOps":["NOP"]}
J
cat >"$W/g.json" <<'J'
{"defaultAction":"deny","entries":[{"names":["openat"],"action":"allow","args":[{"field":"open.accmode","op":"==","value":"O_RDONLY"}]},{"names":["write"],"action":"allow"}]}
J

"$T" merge -o "$W/ab.json" "$W/a.json" "$W/b.json"
rc=$?
check "classic parts: exit 0 (got $rc)" [ $rc -eq 0 ]
check "classic parts: requestOps, registerOps and allowed flags united, once each" python3 -c '
import json, sys
p = json.load(open(sys.argv[1]))
assert p["requestOps"] == ["READ", "WRITE", "FSYNC"], p
assert p["registerOps"] == ["@probe", "REGISTER_FILES"], p
assert p["sqeFlags"] == {"allowed": ["IO_LINK", "ASYNC"], "required": []}, p
assert p["defaultAction"] == "deny", p
' "$W/ab.json"
# the union's verdicts: what either input allows, nothing else
for op in READ WRITE FSYNC NOP OPENAT; do
	ua=$("$T" check "$W/a.json" --op "$op" 2>/dev/null | head -n 1)
	ub=$("$T" check "$W/b.json" --op "$op" 2>/dev/null | head -n 1)
	u=$("$T" check "$W/ab.json" --op "$op" 2>/dev/null | head -n 1)
	case "$ua $ub" in
	*allow*) want=allow ;;
	*) want=deny ;;
	esac
	check "union verdict for $op is $want ($u)" sh -c 'case "$0" in *"$1"*) exit 0;; esac; exit 1' "$u" "$want"
done
"$T" merge -o "$W/cd.json" "$W/c.json" "$W/d.json" 2>"$W/cd.err"
rc=$?
check "different argument rules for OPENAT: refused, exit 1 (got $rc)" [ $rc -eq 1 ]
check "different argument rules: the message names the opcode and both files" \
	grep -q "conflicting argument rules for OPENAT: .*c.json and .*d.json" "$W/cd.err"
check "refused: no output written" [ ! -e "$W/cd.json" ]
"$T" merge -o "$W/cg.json" "$W/c.json" "$W/g.json"
rc=$?
check "same argument rules for OPENAT: merged (got $rc)" [ $rc -eq 0 ]
check "same argument rules: kept once, outright opcodes united" python3 -c '
import json, sys
e = json.load(open(sys.argv[1]))["entries"]
assert e[0] == {"names": ["CLOSE", "READ", "WRITE"], "action": "allow"} or sorted(e[0]["names"]) == ["CLOSE", "READ", "WRITE"], e
rules = [x for x in e[1:] if x["names"] == ["OPENAT"]]
assert len(rules) == 1 and rules[0]["args"][0]["value"] == "O_RDONLY", e
' "$W/cg.json"
"$T" merge -o "$W/ce.json" "$W/c.json" "$W/e.json"
rc=$?
check "rules in one, outright in the other: the outright allow wins (got $rc)" python3 -c '
import json, sys
e = json.load(open(sys.argv[1]))["entries"]
assert len(e) == 1 and sorted(e[0]["names"]) == ["CLOSE", "OPENAT", "READ", "WRITE"], e
' "$W/ce.json"
"$T" merge -o - "$W/a.json" "$W/f.json" >/dev/null 2>"$W/af.err"
rc=$?
check "different target: refused naming the key (got $rc)" sh -c '[ $0 -eq 1 ] && grep -q "target" "$1"' $rc "$W/af.err"
"$T" merge -o - "$W/a.json" "$W/c.json" >/dev/null 2>"$W/ac.err"
rc=$?
check "classic part in one input only: refused (got $rc)" sh -c '[ $0 -eq 1 ] && grep -q "classic part" "$1"' $rc "$W/ac.err"
"$T" merge "$W/a.json" "$W/b.json" >/dev/null 2>&1
rc=$?
check "no -o: usage error (got $rc)" [ $rc -eq 2 ]
echo '{"defaultAction":"deny","requestOps":["NOPE"]}' >"$W/bad.json"
"$T" merge -o - "$W/a.json" "$W/bad.json" >/dev/null 2>&1
rc=$?
check "an invalid input: exit 3 (got $rc)" [ $rc -eq 3 ]
# options after the operands (merge has no COMMAND operand)
"$T" merge "$W/a.json" "$W/b.json" -o "$W/ab2.json" 2>"$W/ab2.err"
rc=$?
check "-o after the operands: accepted, exit 0 (got $rc)" [ $rc -eq 0 ]
check "-o after the operands: the same union as -o first" cmp -s "$W/ab.json" "$W/ab2.json"
# each input's comments are kept: learn's counts, command and kernel
cat >"$W/la.json" <<'J'
{"comment":"learned by iour-restrict learn on Linux 6.18 from one run of: srv-a (it exited with 0). Requests seen (3): READ 3.","defaultAction":"deny","requestOps":["READ"],"registerOps":[],"sqeFlags":{"comment":"requests carrying each flag: ASYNC 1.","allowed":["ASYNC"],"required":[]}}
J
cat >"$W/lb.json" <<'J'
{"comment":"learned by iour-restrict learn on Linux 7.0 from one run of: srv-b (it exited with 0). Requests seen (2): WRITE 2.","defaultAction":"deny","requestOps":["WRITE"],"registerOps":[],"sqeFlags":{"comment":"no request carried an SQE flag.","allowed":[],"required":[]}}
J
"$T" merge -o "$W/lab.json" "$W/la.json" "$W/lb.json"
rc=$?
check "learned inputs: merged (got $rc)" [ $rc -eq 0 ]
check "learned inputs: each input's comment kept, numbered, with its path" python3 -c '
import json, sys
p = json.load(open(sys.argv[1]))
c = p["comment"]
assert "[1] " + sys.argv[2] + ": learned by iour-restrict learn on Linux 6.18 from one run of: srv-a" in c, c
assert "[2] " + sys.argv[3] + ": learned by iour-restrict learn on Linux 7.0 from one run of: srv-b" in c, c
assert "Requests seen (3): READ 3." in c and "Requests seen (2): WRITE 2." in c, c
s = p["sqeFlags"]["comment"]
assert "ASYNC 1" in s and "no request carried an SQE flag" in s, s
' "$W/lab.json" "$W/la.json" "$W/lb.json"
echo "merge: $pass passed, $failed failed"
[ $failed -eq 0 ]
