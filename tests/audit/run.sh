#!/bin/sh
# SPDX-License-Identifier: MIT
# make check-audit: `iour-restrict run --audit` and `run --log-denials` on
# the running kernel (doc/cli.md, "run").
#
# - audit: tests/audit/mix_prog.c submits a known mix; the would-be
#   denials run reports must EQUAL what the kernel's own submit and register
#   tracepoints (read here, from a tracefs instance of this script's) show
#   minus what the policy allows; the --audit-out delta merged with the
#   policy must then let the same mix run under enforcement;
# - denial log: under the policy, the denied opcodes appear with the
#   program's pid, and the program saw EACCES for exactly those; the
#   positive control: under a policy that allows the mix, no line appears;
# - Debian's fio and qemu-img under a policy without FSYNC: their fsyncs
#   are reported in audit mode, and logged (EACCES) under enforcement.
#
# Usage: tests/audit/run.sh [BUILD_DIR]   (needs root and tracefs with the
# "fields" option, Linux 5.15+; skips, saying why, otherwise)
set -u
O=${1:-build}
T=$O/tools/iour-restrict
P=$O/tests/audit_mix
pass=0
failed=0
ok() { pass=$((pass + 1)); echo "  ok   $*"; }
bad() { failed=$((failed + 1)); echo "  FAIL $*"; }
skip() { echo "audit: SKIP $1: $2"; scripts/skip-note.sh "audit: $1: $2"; }
check() { d=$1; shift; if "$@"; then ok "$d"; else bad "$d"; fi; }

[ -x "$T" ] && [ -x "$P" ] || { echo "audit: build $T and $P first"; exit 1; }
if [ "$(id -u)" -ne 0 ]; then
	skip "all" "not root (audit mode reads the kernel's tracepoints through tracefs)"
	exit 0
fi
tracefs=/sys/kernel/tracing
[ -d $tracefs/instances ] || tracefs=/sys/kernel/debug/tracing
if [ ! -d $tracefs/instances ] || [ ! -e $tracefs/options/fields ]; then
	skip "all" "no tracefs with the 'fields' option here (Linux 5.15+)"
	exit 0
fi
work=$(mktemp -d /dev/shm/iour-audit.XXXXXX 2>/dev/null || mktemp -d)
inst=$tracefs/instances/iour-audit-test-$$
cleanup() {
	[ -d "$inst" ] && { echo 0 >"$inst/tracing_on"; rmdir "$inst"; }
	rm -rf "$work"
}
trap cleanup EXIT

# The policy: NOP, READ, WRITE and REGISTER_PROBE, no SQE flag.
cat >"$work/pol.json" <<'EOF'
{"defaultAction": "deny", "requestOps": ["NOP", "READ", "WRITE"],
 "registerOps": ["REGISTER_PROBE"], "sqeFlags": {"allowed": [], "required": []}}
EOF
mix="NOP READ WRITE FSYNC NOP:ASYNC SOCKET FADVISE FADVISE READ:ASYNC reg:PROBE reg:FILES"

echo "audit: would-be denials equal the kernel's submit trace minus the policy"
# the kernel's own record, independent of run: an instance of this script
mkdir "$inst" || { bad "creating $inst"; exit 1; }
echo 1 >"$inst/options/fields"
echo 1 >"$inst/events/io_uring/io_uring_submit_req/enable"
echo 1 >"$inst/events/io_uring/io_uring_register/enable"
echo 1 >"$inst/tracing_on"
# shellcheck disable=SC2086
"$T" run --audit="$work/audit.log" "$work/pol.json" --audit-out "$work/delta.json" -- \
	"$P" $mix >"$work/audit.out" 2>"$work/audit.err"
rc=$?
echo 0 >"$inst/tracing_on"
cat "$inst/trace" >"$work/kernel.trace"
check "audit: exit 0 (got $rc)" [ $rc -eq 0 ]
check "audit: the status line says NOT enforced" grep -q "audit: NOT enforced" "$work/audit.err"
check "audit: every request ran (nothing enforced)" python3 -c '
import sys
res = [l.split() for l in open(sys.argv[1]) if " res " in l]
assert len(res) == 11 and all(int(r[-1]) >= 0 for r in res), res
' "$work/audit.out"
check "audit: the report equals the kernel's trace minus the policy" python3 - \
	"$work/kernel.trace" "$work/audit.log" "$work/audit.out" <<'PY'
import re, sys
trace, log, out = (open(p).read() for p in sys.argv[1:4])
pid = re.search(r"^pid (\d+)", out, re.M)[1]
allowed, allowed_reg = {"NOP", "READ", "WRITE"}, {8}  # 8: IORING_REGISTER_PROBE
regname = {2: "REGISTER_FILES", 3: "UNREGISTER_FILES", 8: "REGISTER_PROBE"}
# opcodes whose preparation sets ASYNC itself: it cannot be told from the
# SQE's (doc/cli.md, "run")
forced = {"FSYNC", "SYNC_FILE_RANGE", "FALLOCATE", "FADVISE"}
want = {}
for l in trace.splitlines():
    m = re.search(r"-(\d+)\s+\[.*io_uring_submit_req: .* flags=0x([0-9a-f]+).* op_str=(\w+)", l)
    if m and m[1] == pid:
        fl, op = int(m[2], 16) & 0x7F, m[3]
        if op in forced:
            fl &= ~0x10
        if op not in allowed or fl:
            k = ("request", op, "ASYNC" if fl == 0x10 else ("none" if not fl else hex(fl)))
            want[k] = want.get(k, 0) + 1
    m = re.search(r"-(\d+)\s+\[.*io_uring_register: .*opcode=0x[0-9a-f]+ \((\d+)\)", l)
    if m and m[1] == pid and int(m[2]) not in allowed_reg:
        k = ("register", regname[int(m[2])], "none")
        want[k] = want.get(k, 0) + 1
got = {}
for m in re.finditer(r"audit \(NOT enforced\): pid (\d+) comm auditmix (request|register) (\S+) "
                     r"flags (\S+): would be denied \(count (\d+), total\)", log):
    assert m[1] == pid, (m[0], pid)
    got[(m[2], m[3], m[4])] = int(m[5])
assert want and got == want, f"kernel trace minus policy {want}\nreported {got}\n{log}"
print("    ", sorted(want.items()))
PY
check "audit: --audit-out merges with the policy" \
	"$T" merge -o "$work/merged.json" "$work/pol.json" "$work/delta.json"
# shellcheck disable=SC2086
"$T" run -q "$work/merged.json" -- "$P" $mix >"$work/merged.out" 2>&1
check "audit: under the merged policy the same mix runs (no EACCES)" python3 -c '
import sys
res = [l.split() for l in open(sys.argv[1]) if " res " in l]
assert len(res) == 11 and all(int(r[-1]) >= 0 for r in res), res
' "$work/merged.out"

echo "audit: periodic reports (--report-interval 1)"
"$T" run -q --audit="$work/period.log" --report-interval 1 "$work/pol.json" -- \
	"$P" FSYNC SLEEP FSYNC SLEEP >/dev/null 2>&1
check "audit: a report between the first and the total counts both fsyncs so far" \
	grep -q "request FSYNC flags none: would be denied (count 2, so far)" "$work/period.log"

echo "denial log: a denied opcode appears with its pid and opcode"
# shellcheck disable=SC2086
"$T" run "$work/pol.json" --log-denials="$work/deny.log" -- "$P" $mix \
	>"$work/deny.out" 2>"$work/deny.err"
rc=$?
check "denials: exit 0 (got $rc)" [ $rc -eq 0 ]
if grep -q "denials NOT logged" "$work/deny.err"; then
	skip "denial log" "$(grep -o 'denials NOT logged[^;]*' "$work/deny.err")"
else
	check "denials: the logged denials are exactly the requests that failed with EACCES" \
		python3 - "$work/deny.out" "$work/deny.log" <<'PY'
import re, sys
out, log = (open(p).read() for p in sys.argv[1:3])
pid = re.search(r"^pid (\d+)", out, re.M)[1]
want = {}
for a, res in re.findall(r"^(\S+) res (-?\d+)$", out, re.M):
    if int(res) != -13:
        continue
    op, _, fl = a.partition(":")
    k = ("register", {"FILES": "REGISTER_FILES"}[fl], "none") if op == "reg" else \
        ("request", op, fl or "none")
    want[k] = want.get(k, 0) + 1
got = {}
for m in re.finditer(r"denial: pid (\d+) comm auditmix (request|register) (\S+) flags (\S+): "
                     r"EACCES \(count (\d+), total\)", log):
    assert m[1] == pid, (m[0], pid)
    got[(m[2], m[3], m[4])] = int(m[5])
assert ("request", "FSYNC", "none") in want and got == want, f"EACCES {want}\nlogged {got}"
print("    ", sorted(want.items()))
PY
	# the positive control: a policy that allows the mix logs nothing
	cat >"$work/all.json" <<'EOF'
{"defaultAction": "deny",
 "requestOps": ["NOP", "READ", "WRITE", "FSYNC", "SOCKET", "FADVISE"],
 "registerOps": ["REGISTER_PROBE", "REGISTER_FILES", "UNREGISTER_FILES"],
 "sqeFlags": {"allowed": ["ASYNC"], "required": []}}
EOF
	# shellcheck disable=SC2086
	"$T" run -q "$work/all.json" --log-denials="$work/none.log" -- "$P" $mix \
		>"$work/none.out" 2>&1
	check "denials: control: allowed, nothing is logged and nothing fails" python3 -c '
import sys
res = [l.split() for l in open(sys.argv[1]) if " res " in l]
assert len(res) == 11 and all(int(r[-1]) >= 0 for r in res), res
log = open(sys.argv[2]).read()
assert "denial:" not in log, log
' "$work/none.out" "$work/none.log"
fi

# fio and qemu-img: a policy without FSYNC
cat >"$work/nofsync.json" <<'EOF'
{"defaultAction": "deny", "requestOps": ["NOP", "READ", "WRITE", "READV", "WRITEV"],
 "registerOps": ["REGISTER_PROBE", "REGISTER_EVENTFD", "UNREGISTER_EVENTFD"],
 "sqeFlags": {"allowed": [], "required": []}}
EOF
# fsyncs: reported in audit mode (count), logged under enforcement
fsync_line() { # MODE LOG COMM
	if [ "$1" = audit ]; then
		grep -q "audit (NOT enforced): pid [0-9]* comm $3 request FSYNC flags none: would be denied (count [0-9]*, total)" "$2"
	else
		grep -q "denial: pid [0-9]* comm $3 request FSYNC flags none: EACCES (count [0-9]*, total)" "$2"
	fi
}
if command -v fio >/dev/null 2>&1; then
	echo "audit: fio (io_uring engine, 256 writes with an fsync every 4) without FSYNC"
	job="--name=audit --ioengine=io_uring --filename=$work/fio.dat --size=1m --bs=4k \
--rw=randwrite --fsync=4 --iodepth=4 --output=/dev/null"
	# shellcheck disable=SC2086
	"$T" run --audit="$work/fio-audit.log" "$work/nofsync.json" -- fio $job >/dev/null 2>&1
	check "fio --audit: its fsyncs reported" fsync_line audit "$work/fio-audit.log" fio
	# shellcheck disable=SC2086
	"$T" run --log-denials="$work/fio-deny.log" "$work/nofsync.json" -- fio $job \
		>/dev/null 2>&1
	check "fio --log-denials: its fsyncs logged with EACCES" \
		fsync_line deny "$work/fio-deny.log" fio
else
	skip "fio" "fio not installed (scripts/deps.sh installs it)"
fi
if command -v qemu-img >/dev/null 2>&1 &&
	qemu-img create -f raw "$work/q.img" 4M >/dev/null 2>&1 &&
	qemu-img bench -w -c 8 -i io_uring -t writeback -f raw "$work/q.img" >/dev/null 2>&1; then
	echo "audit: qemu-img bench (io_uring, 200 writes, a flush every 10) without FSYNC"
	qb="bench -w -c 200 -d 4 -i io_uring -t writeback --flush-interval=10 -f raw $work/q.img"
	# shellcheck disable=SC2086
	"$T" run --audit="$work/q-audit.log" "$work/nofsync.json" -- qemu-img $qb >/dev/null 2>&1
	check "qemu-img --audit: its flushes reported as FSYNC" \
		fsync_line audit "$work/q-audit.log" qemu-img
	# shellcheck disable=SC2086
	"$T" run --log-denials="$work/q-deny.log" "$work/nofsync.json" -- qemu-img $qb \
		>/dev/null 2>&1
	check "qemu-img --log-denials: its flush logged with EACCES" \
		fsync_line deny "$work/q-deny.log" qemu-img
else
	skip "qemu-img" "qemu-img (qemu-utils) with io_uring is not available here"
fi
if command -v setpriv >/dev/null 2>&1; then
	chmod 755 "$work" && chmod 644 "$work/pol.json"
	out=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$T" run --audit "$work/pol.json" \
		-- echo RAN 2>&1)
	rc=$?
	check "audit without root: exit 1, says why, the command does not run (got $rc)" \
		sh -c '[ "$1" -eq 1 ] && case "$2" in *RAN*) exit 1 ;; *"needs root"*) exit 0 ;; *) exit 1 ;; esac' \
		- "$rc" "$out"
else
	skip "audit without root" "no setpriv (util-linux)"
fi
# an instance whose owner (the pid in its name) is gone was left behind
stale() {
	for i in "$tracefs"/instances/iour-learn-*; do
		[ -d "$i" ] || continue
		p=${i##*/iour-learn-}
		[ -d "/proc/${p%%-*}" ] || return 0
	done
	return 1
}
check "no tracefs instance of a finished run is left" eval '! stale'

echo "audit: $pass passed, $failed failed"
[ $failed -eq 0 ]
