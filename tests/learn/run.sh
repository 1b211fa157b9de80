#!/bin/sh
# SPDX-License-Identifier: MIT
# make check-learn: `iour-restrict learn` on the running kernel, with real
# programs: tests/learn/learn_prog.c (known requests from a thread, a child
# process and an SQPOLL ring) and Debian's fio (io_uring engine, plain and
# with registered files and buffers under SQPOLL).  Checks exact recording,
# that unrelated io_uring users running at the same time are not recorded,
# that the tracefs instance is always removed (signals included), the
# exit codes, and what the learned policy does on this kernel
# (tests/live/learn_guest.sh, which the 7.x guest runs too).
#
# Usage: tests/learn/run.sh [BUILD_DIR]   (needs root and tracefs; skips,
# saying why, otherwise)
set -u
O=${1:-build}
T=$O/tools/iour-restrict
P=$O/tests/learn_prog
pass=0
failed=0
ok() { pass=$((pass + 1)); echo "  ok   $*"; }
bad() { failed=$((failed + 1)); echo "  FAIL $*"; }
# check DESCRIPTION COMMAND...: ok if COMMAND succeeds
# skip WHAT REASON: say what is skipped and why, and record it for make
# check's summary (scripts/skip-note.sh)
skip() { echo "learn: SKIP $1: $2"; scripts/skip-note.sh "learn: $1: $2"; }
check() { d=$1; shift; if "$@"; then ok "$d"; else bad "$d"; fi; }

[ -x "$T" ] && [ -x "$P" ] && [ -x "$O/tests/learn_allops" ] ||
	{ echo "learn: build $T, $P and $O/tests/learn_allops first"; exit 1; }
if [ "$(id -u)" -ne 0 ]; then
	skip "all" "not root (learn reads the kernel's tracepoints through tracefs)"
	exit 0
fi
work=$(mktemp -d /dev/shm/iour-learn.XXXXXX 2>/dev/null || mktemp -d)
ours=""
trap 'rm -rf "$work"; [ -n "$ours" ] && umount "$ours"' EXIT
"$T" learn -q -o "$work/probe.json" -- "$P" >/dev/null 2>"$work/probe.err"
rc=$?
if [ $rc -eq 4 ]; then
	skip "all" "learn cannot trace here: $(head -n 1 "$work/probe.err")"
	exit 0
fi
[ $rc -eq 0 ] || { cat "$work/probe.err"; echo "learn: FAIL: learn -- learn_prog exited $rc"; exit 1; }

# The checks that learn removes its instance need tracefs to stay mounted
# after learn exits: when nothing has it mounted (a fresh machine or a
# chroot), this script mounts it where learn looks first, and unmounts it
# at the end; learn's own mounting is checked below, in a mount namespace
# without tracefs.
tracefs=/sys/kernel/tracing
if [ ! -d $tracefs/instances ]; then
	if [ -d /sys/kernel/debug/tracing/instances ]; then
		tracefs=/sys/kernel/debug/tracing
	elif mount -t tracefs nodev $tracefs 2>/dev/null; then
		ours=$tracefs
	else
		# learn traced above, through a tracefs of its own, but this
		# script cannot keep one mounted to look into afterwards
		skip "all" "tracefs is not mounted and cannot be mounted on $tracefs ($(mount -t tracefs nodev $tracefs 2>&1 | head -n 1))"
		exit 0
	fi
fi
# no instance left by a learner that has exited (another learn running at
# the same time, say another worktree's tests, may have its own)
no_instance() {
	for i in $tracefs/instances/iour-learn-*; do
		[ -d "$i" ] || continue
		_pid=${i##*/iour-learn-}
		kill -0 "${_pid%%-*}" 2>/dev/null || return 1
	done
	return 0
}
# learner PID's instance exists
has_instance() { ls -d $tracefs/instances/iour-learn-"$1"-* >/dev/null 2>&1; }
# run_learn ARG...: iour-restrict learn ARG..., its PID in lpid, its status
lpid=none
run_learn() { "$T" learn "$@" & lpid=$!; wait $lpid; }

echo "learn: exact recording (tests/learn/learn_prog.c)"
# an unrelated io_uring user runs meanwhile: it must not be recorded
( for _ in 1 2 3 4 5 6 7 8 9 10; do "$P" >/dev/null 2>&1; done ) &
noise=$!
run_learn -o "$work/prog.json" -- "$P" 2>"$work/prog.err"
rc=$?
wait $noise
check "learn_prog: exit 0 (got $rc)" [ $rc -eq 0 ]
grep '^  ' "$work/prog.err" | sort >"$work/prog.got"
sort >"$work/prog.want" <<'WANT'
  op NOP 3 sqpoll 0 flags IO_LINK
  op READ 2 sqpoll 0 flags none
  op WRITE 1 sqpoll 0 flags ASYNC
  op FSYNC 1 sqpoll 0 flags none (ASYNC ambiguous)
  op SYNC_FILE_RANGE 1 sqpoll 0 flags none (ASYNC ambiguous)
  op FADVISE 1 sqpoll 1 flags none
  register REGISTER_FILES 1 failed 0
  register UNREGISTER_FILES 1 failed 0
  register REGISTER_PROBE 1 failed 0
WANT
if cmp -s "$work/prog.want" "$work/prog.got"; then
	ok "learn_prog: exactly its requests, flags and register ops (thread, child, SQPOLL)"
else
	bad "learn_prog: recorded differs from its known use"
	diff "$work/prog.want" "$work/prog.got"
fi
# its process, thread and child, and the SQPOLL thread of its ring
check "learn_prog: 4 tasks, 4 rings (1 SQPOLL), 9 requests, 3 register calls" \
	grep -q '4 tasks followed, 4 rings (1 SQPOLL), 9 requests, 3 register calls, 0 events lost' \
	"$work/prog.err"
check "learn_prog: the policy lists exactly what it used" python3 -c '
import json, sys
p = json.load(open(sys.argv[1]))
assert p["defaultAction"] == "deny", p
assert sorted(p["requestOps"]) == sorted(["NOP", "READ", "WRITE", "FSYNC", "SYNC_FILE_RANGE", "FADVISE"]), p
# REGISTER_PROBE is the whole of the group @probe
assert sorted(p["registerOps"]) == ["@probe", "REGISTER_FILES", "UNREGISTER_FILES"], p
assert sorted(p["sqeFlags"]["allowed"]) == ["ASYNC", "IO_LINK"] and p["sqeFlags"]["required"] == [], p
for s in ("NOP 3", "READ 2", "FADVISE 1 (1 by an SQPOLL thread)", "REGISTER_FILES 1"):
    assert s in p["comment"], (s, p["comment"])
assert "IO_LINK 1, ASYNC 1" in p["sqeFlags"]["comment"], p
' "$work/prog.json"
if [ -f doc/policy.schema.json ] && python3 -c 'import jsonschema' 2>/dev/null; then
	check "learn_prog, fio: the policies validate against doc/policy.schema.json" python3 -c '
import json, sys, jsonschema
schema = json.load(open("doc/policy.schema.json"))
for f in sys.argv[1:]:
    jsonschema.validate(json.load(open(f)), schema)
' "$work/prog.json"
fi
check "learn_prog: tracefs instance removed" no_instance

# Every opcode (tests/learn/learn_allops.c): one request of each opcode
# below the kernel's IORING_OP_LAST and every register opcode; the learned
# policy must allow exactly what the kernel's own trace (a tracefs instance
# of the test's own) shows.
echo "learn: every opcode against the kernel's own trace (tests/learn/learn_allops.c)"
"$O/tests/learn_allops" "$T" "$work" >"$work/allops.out" 2>&1
rc=$?
sed 's/^/  /' "$work/allops.out"
check "learn_allops: exit 0 (got $rc)" [ $rc -eq 0 ]
check "learn_allops: nothing failed" grep -q ' 0 failed$' "$work/allops.out"
check "every opcode: tracefs instance removed" no_instance

# Warnings and suggestions (doc/cli.md, "learn"): learn_prog's SQPOLL ring,
# which run refuses before 7.0 and the agent always; a program that only
# creates a socket gets a SOCKET policy, with CLOSE and SHUTDOWN suggested,
# not allowed.
echo "learn: warnings and suggestions"
check "SQPOLL: learn warns on stderr" grep -q 'warning: the program created 1 SQPOLL ring' \
	"$work/prog.err"
check "SQPOLL: the policy's comment says what run and the agent do" python3 -c '
import json, sys
c = json.load(open(sys.argv[1]))["comment"]
assert "WARNING, SQPOLL: the program created 1 SQPOLL ring" in c, c
assert "the agent" in c and "sqthread_poll=0" in c, c
' "$work/prog.json"
if [ -x "$O/tests/uring-try" ]; then
	run_learn -o "$work/sock.json" -- "$O/tests/uring-try" socket-inet >/dev/null 2>"$work/sock.err"
	rc=$?
	check "socket only: exit 0, a policy (got $rc)" [ $rc -eq 0 ]
	check "socket only: SOCKET allowed, its companions suggested, not allowed" python3 -c '
import json, sys
p = json.load(open(sys.argv[1]))
assert "SOCKET" in p["requestOps"], p
assert "SHUTDOWN" not in p["requestOps"] and "CLOSE" not in p["requestOps"], p
c = p["comment"]
assert "SUGGESTIONS, not allowed" in c and "SHUTDOWN (usual with SOCKET" in c and "CLOSE (usual with SOCKET" in c, c
' "$work/sock.json"
	check "socket only: the suggestions on stderr" grep -q 'suggestion (not added): SHUTDOWN is usual with SOCKET' \
		"$work/sock.err"
else
	skip "socket-only check" "$O/tests/uring-try is not built (make uring-try)"
fi

# Ring-address reuse (doc/cli.md, "learn"): learn_prog, learned, creates and
# frees its rings (one SQPOLL) 20 times while an unrelated loop of
# learn_prog does the same, so the kernel may hand a freed ring's address
# to the other side's next ring.  The counts must stay those of 20 runs:
# a submission of the unrelated loop would add to them.  Whether an
# address was reused in this run is not visible from here; the emulated
# test (tests/learn/tracer_emulated.c) covers that case for certain.
echo "learn: ring-address reuse by an unrelated io_uring user"
( i=0
  while [ $i -lt 3000 ] && [ ! -e "$work/reuse.stop" ]; do
	"$P" >/dev/null 2>&1
	i=$((i + 1))
  done
  echo "$i" >"$work/reuse.noise" ) &
noise=$!
run_learn --timeout 120 -o "$work/reuse.json" -- sh -c \
	'i=0; while [ $i -lt 20 ]; do "$0" >/dev/null || exit 1; i=$((i + 1)); done' \
	"$P" 2>"$work/reuse.err"
rc=$?
: >"$work/reuse.stop"
wait $noise
echo "  (the unrelated loop ran learn_prog $(cat "$work/reuse.noise") times)"
check "reuse: exit 0 (got $rc)" [ $rc -eq 0 ]
check "reuse: exactly 20 runs of learn_prog, nothing of the unrelated loop" python3 -c '
import re, sys
t = open(sys.argv[1]).read()
ops = dict((m[0], (int(m[1]), int(m[2]))) for m in re.findall(r"^  op (\S+) (\d+) sqpoll (\d+) ", t, re.M))
want = {"NOP": (60, 0), "READ": (40, 0), "WRITE": (20, 0), "FSYNC": (20, 0),
        "SYNC_FILE_RANGE": (20, 0), "FADVISE": (20, 20)}
assert ops == want, ops
assert "81 tasks followed, 80 rings (20 SQPOLL)" in t, t
' "$work/reuse.err" || cat "$work/reuse.err"
check "reuse: tracefs instance removed" no_instance

if command -v fio >/dev/null 2>&1; then
	echo "learn: fio (io_uring engine, 1024 random 4 KiB reads and writes on tmpfs)"
	job="--name=learn --ioengine=io_uring --filename=$work/fio.dat --size=4m --bs=4k \
--rw=randrw --iodepth=8 --output=/dev/null"
	# shellcheck disable=SC2086
	run_learn -o "$work/fio.json" -- fio $job 2>"$work/fio.err"
	rc=$?
	check "fio: exit 0 (got $rc)" [ $rc -eq 0 ]
	check "fio: writes without FSYNC: learn warns, on stderr and in the comment" sh -c \
		'grep -q "warning: writes were learned (WRITE) but no sync opcode" "$0" &&
		grep -q "WARNING, NO SYNC" "$1"' "$work/fio.err" "$work/fio.json"
	"$T" lint "$work/fio.json" >"$work/fio.lint" 2>&1
	check "fio: lint reports no-sync for the learned policy" grep -q ': no-sync: ' "$work/fio.lint"
	check "fio: only READ and WRITE, 1024 in all, register PROBE only" python3 -c '
import re, sys
t = open(sys.argv[1]).read()
ops = dict((m[0], int(m[1])) for m in re.findall(r"^  op (\S+) (\d+) ", t, re.M))
regs = re.findall(r"^  register (\S+) ", t, re.M)
assert set(ops) == {"READ", "WRITE"} and sum(ops.values()) == 1024, ops
assert regs == ["REGISTER_PROBE"], regs
' "$work/fio.err" || cat "$work/fio.err"
	if "$T" compile --help >/dev/null 2>&1; then
		"$T" compile "$work/fio.json" --kernel 7.0 >"$work/fio.plan" 2>&1
		check "fio: the policy plans, for 7.0, to task restrictions of READ, WRITE, no SQE flag, REGISTER_PROBE" python3 -c '
import re, sys
t = open(sys.argv[1]).read()
ent = re.findall(r"^\s+\[\s*\d+\]\s+(\S+)\s+(.*)$", t, re.M)
got = sorted((k, v.split()[-1]) for k, v in ent)
assert "mechanism: task" in t, t
assert got == sorted([("SQE_OP", "READ"), ("SQE_OP", "WRITE"), ("SQE_FLAGS_ALLOWED", "0x00"), ("REGISTER_OP", "REGISTER_PROBE")]), got
' "$work/fio.plan" || cat "$work/fio.plan"
	fi
	# shellcheck disable=SC2086
	run_learn -o "$work/fio2.json" -- fio $job --fixedbufs --registerfiles \
		--sqthread_poll=1 2>"$work/fio2.err"
	rc=$?
	check "fio SQPOLL: exit 0 (got $rc)" [ $rc -eq 0 ]
	"$T" lint "$work/fio2.json" --kernel 6.18 >"$work/fio2.lint" 2>&1
	check "fio SQPOLL: lint reports sqpoll-refused for Linux 6.18" \
		grep -q ': sqpoll-refused: .*on Linux 6.18 `run` (its ring broker) and the agent refuse' \
		"$work/fio2.lint"
	check "fio SQPOLL: READ_FIXED/WRITE_FIXED by the SQPOLL thread, FIXED_FILE, registered files and buffers" python3 -c '
import re, sys
t = open(sys.argv[1]).read()
ops = re.findall(r"^  op (\S+) (\d+) sqpoll (\d+) flags (\S+)", t, re.M)
regs = sorted(re.findall(r"^  register (\S+) ", t, re.M))
assert sorted(o[0] for o in ops) == ["READ_FIXED", "WRITE_FIXED"], ops
assert sum(int(o[1]) for o in ops) == 1024, ops
assert all(o[1] == o[2] and o[3] == "FIXED_FILE" for o in ops), ops
assert regs == ["REGISTER_BUFFERS", "REGISTER_FILES", "REGISTER_PROBE"], regs
' "$work/fio2.err" || cat "$work/fio2.err"
	check "fio: tracefs instances removed" no_instance
	echo "learn: what the learned fio policy does on this kernel (tests/live/learn_guest.sh)"
	tests/live/learn_guest.sh "$T" "$work/guest"
	rc=$?
	check "learn_guest.sh: exit 0 (got $rc)" [ $rc -eq 0 ]
else
	skip "fio parts" "fio not installed (scripts/deps.sh installs it)"
fi

echo "learn: exit codes and cleanup"
"$T" learn -o "$work/nf.json" -- /nonexistent/cmd 2>/dev/null
rc=$?
check "missing command: exit 127 (got $rc)" [ $rc -eq 127 ]
check "missing command: no policy file left" [ ! -e "$work/nf.json" ]
"$T" learn 2>/dev/null
rc=$?
check "no command: exit 2 (got $rc)" [ $rc -eq 2 ]
"$T" learn -o "$work/f.json" -- sh -c 'exit 7' 2>/dev/null
rc=$?
check "command exits 7 without io_uring: exit 6, nothing recorded (got $rc)" [ $rc -eq 6 ]
check "command exits 7 without io_uring: no policy written" [ ! -e "$work/f.json" ]
"$T" learn -o "$work/f.json" -- sh -c "\"\$0\" >/dev/null; exit 7" "$P" 2>/dev/null
rc=$?
check "command exits 7: exit 5 (got $rc)" [ $rc -eq 5 ]
check "command exits 7: the policy is written and says it failed" grep -q 'it FAILED' "$work/f.json"
"$T" learn -o "$work/sig.json" -- sh -c "\"\$0\" >/dev/null; : >\"\$1\"; sleep 10" "$P" \
	"$work/ran" 2>"$work/sig.err" &
lp=$!
lpid=$lp
i=0
while [ $i -lt 100 ] && [ ! -e "$work/ran" ]; do sleep 0.1; i=$((i + 1)); done
check "signal: the instance exists while the command runs" has_instance $lp
kill -TERM $lp
wait $lp
rc=$?
check "SIGTERM to learn: forwarded, the command dies of it: a normal stop, exit 0 (got $rc)" \
	[ $rc -eq 0 ]
check "SIGTERM to learn: tracefs instance removed" no_instance
# sig_stop NAME SIGNAL EXIT: a command that traps SIGNAL and exits EXIT
# (learn runs in the background, where a shell starts it with SIGINT
# ignored, which the command would inherit: env sets it to the default)
sig_stop() {
	rm -f "$work/ran"
	env --default-signal=INT "$T" learn -q -o "$work/$1.json" -- sh -c "trap 'exit $3' $2; \"\$0\" >/dev/null; : >\"\$1\"; sleep 10 & wait" \
		"$P" "$work/ran" 2>/dev/null &
	lp=$!
	i=0
	while [ $i -lt 100 ] && [ ! -e "$work/ran" ]; do sleep 0.1; i=$((i + 1)); done
	kill -$2 $lp
	wait $lp
}
sig_stop int INT 130
rc=$?
check "SIGINT to learn, the command exits 130 on it: a normal stop, exit 0 (got $rc)" [ $rc -eq 0 ]
check "SIGINT: the comment says so" grep -q 'exited with 130 on SIGINT, a normal stop' "$work/int.json"
sig_stop term3 TERM 3
rc=$?
check "SIGTERM to learn, the command exits 3 on it: exit 5 (got $rc)" [ $rc -eq 5 ]
check "SIGTERM, exit 3: the comment says it failed" grep -q 'it FAILED' "$work/term3.json"
if ! command -v unshare >/dev/null 2>&1; then
	skip "no-tracefs check" "unshare(1) is missing"
elif ! unshare -m true 2>/dev/null; then
	# in a chroot whose / is not a mount point, unshare cannot make the
	# mounts private ("cannot change root filesystem propagation")
	skip "no-tracefs check" "no mount namespace here, a chroot? ($(unshare -m true 2>&1 | head -n 1))"
else
	# in a mount namespace of its own without tracefs: learn mounts it,
	# records, and unmounts it again
	unshare -m sh -c 'umount /sys/kernel/tracing 2>/dev/null
		umount /sys/kernel/debug/tracing 2>/dev/null
		grep -q " tracefs " /proc/self/mounts && exit 10
		"$1" learn -q -o "$2" -- "$3" 2>/dev/null || exit $?
		grep -q " tracefs " /proc/self/mounts && exit 11
		exit 0' sh "$T" "$work/mnt.json" "$P"
	rc=$?
	check "no tracefs mounted: learn mounts it and unmounts it again (got $rc)" [ $rc -eq 0 ]
	check "no tracefs mounted: the policy is learned all the same" \
		grep -q '"FADVISE"' "$work/mnt.json"
fi
if command -v setpriv >/dev/null 2>&1; then
	setpriv --reuid=65534 --regid=65534 --clear-groups "$T" learn -o - -- true 2>"$work/nr.err"
	rc=$?
	check "not root: exit 4 (got $rc)" [ $rc -eq 4 ]
	check "not root: says learn needs root" grep -q 'learn needs root' "$work/nr.err"
else
	skip "not-root check" "setpriv(1) is missing"
fi

tests/learn/services.sh "$O" "$work" "$tracefs"
rc=$?
check "services.sh (issue 23: daemons, attach, output, signals): exit 0 (got $rc)" [ $rc -eq 0 ]

echo "learn: $pass passed, $failed failed"
[ $failed -eq 0 ]
