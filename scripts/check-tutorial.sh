#!/bin/sh
# `make check-tutorial`: runs the programs of doc/tutorial.md
# (examples/tutorial/) and checks what they print.  Each program checks the
# kernel's answers itself and exits 1 on a contradiction; this script also
# checks that each says "ok" and, for the task steps, which of the two
# paths it took matches the kernel's feature level: task restrictions on
# Linux 7.0+ (level 4 and up), the seccomp companion before.
# Usage: check-tutorial.sh DIR
set -eu
dir=$1
fail() { echo "check-tutorial: FAILED: $*"; exit 1; }
for s in step1_ring step2_task step3_filters step4_report; do
	[ -x "$dir/$s" ] || fail "$dir/$s not built"
	out=$("$dir/$s" 2>&1) || { echo "$out"; fail "$s exited $?"; }
	echo "$out" | sed 's/^/  /'
	echo "$out" | grep -qx "${s%%_*}: ok" || fail "$s did not say ok"
done
level=$("$dir/step2_task" 2>&1 | sed -n 's/^step2: kernel feature level \([0-9]\).*/\1/p')
[ -n "$level" ] || fail "step2 did not print the feature level"
for s in step2_task step3_filters; do
	out=$("$dir/$s" 2>&1)
	if [ "$level" -ge 4 ]; then
		echo "$out" | grep -q '(Linux 7.0+):' || fail "$s: level $level but no task path"
	else
		echo "$out" | grep -q 'fell back to the seccomp companion: io_uring_setup -> -ENOSYS' ||
			fail "$s: level $level but no companion fallback"
	fi
done
echo "$("$dir/step1_ring")" | grep -qx 'step1: WRITE -> -EACCES (not in the set)' ||
	fail "step1: WRITE was not denied with -EACCES"
"$dir/step4_report" | grep -q '^step4: Linux 7.2: fully enforced' || fail "step4: the 7.2 plan"
echo "check-tutorial: ok: 4 steps on feature level $level"
