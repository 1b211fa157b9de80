#!/bin/sh
# `make check-tutorial`: runs the programs of doc/tutorial.md
# (examples/tutorial/) once each and checks what they print.  Each program
# checks the kernel's answers itself and exits 1 on a contradiction; this
# script also checks that each says "ok", that step 1's forbidden request
# got -EACCES, and that the path the task steps took matches the kernel's
# feature level: task restrictions and filters on Linux 7.0+ (level 4 and
# up), the seccomp companion before.
# Usage: check-tutorial.sh DIR
set -eu
dir=$1
fail() { echo "check-tutorial: FAILED: $*"; exit 1; }
for s in step1_ring step2_task step3_filters step4_report; do
	[ -x "$dir/$s" ] || fail "$dir/$s not built"
	rc=0
	"$dir/$s" > "$dir/$s.out" 2>&1 || rc=$?
	sed 's/^/  /' "$dir/$s.out"
	[ "$rc" -eq 0 ] || fail "$s exited $rc"
	grep -qx "${s%%_*}: ok" "$dir/$s.out" || fail "$s did not say ok"
done
grep -qx 'step1: WRITE -> -EACCES (not in the set)' "$dir/step1_ring.out" ||
	fail "step1: WRITE was not denied with -EACCES"
level=$(sed -n 's/^step2: kernel feature level \([0-9]\).*/\1/p' "$dir/step2_task.out")
[ -n "$level" ] || fail "step2 did not print the feature level"
for s in step2_task step3_filters; do
	if [ "$level" -ge 4 ]; then
		grep -q '(Linux 7.0+):' "$dir/$s.out" || fail "$s: level $level but not the task path"
	else
		grep -q 'fell back to the seccomp companion: io_uring_setup -> -ENOSYS' "$dir/$s.out" ||
			fail "$s: level $level but no companion fallback"
	fi
done
grep -q '^step4: Linux 7.2: fully enforced; mechanism task' "$dir/step4_report.out" ||
	fail "step4: the 7.2 plan is not fully enforced by task restrictions"
echo "check-tutorial: ok: 4 steps on feature level $level"
