#!/bin/sh
# SPDX-License-Identifier: MIT
# Debian's qemu-io (qemu-utils, --aio io_uring on a raw image in tmpfs)
# under `iour-restrict run` with the policy learned from it
# (tests/guest/policies/qemu-io.json) and the same less WRITEV, in every
# kernel guest (scripts/guest-payloads/45-qemu-io.sh).
#
#   Linux 7.0+ (task restrictions): qemu-io writes a pattern, reads it back
#     and verifies it (read -P), flushes; without WRITEV its write fails
#     with EACCES ("Permission denied") and its read still completes.
#   before 7.0: the same through the ring broker (every ring qemu-io
#     creates is made by the broker and restricted per ring), and with
#     --broker=off the companion: io_uring_setup fails and qemu-io says it
#     cannot use io_uring (NOT the policy being enforced; the report line
#     says so).
#
# Usage: qemu_io_guest.sh [IOUR_RESTRICT [POLICY_DIR [DIR]]].  Every check
# counts; the last line is "N passed, M failed"; exit 0 when nothing failed.
# ok and bad always succeed, so "A && ok || bad" is an if-then-else here
# shellcheck disable=SC2015
set -u
PATH=/usr/bin:/bin:/progs:/tools:$PATH
export PATH
T=${1:-/tools/iour-restrict}
P=${2:-/progs/policies}
D=${3:-/tmp}
pass=0
failed=0
ok() { pass=$((pass + 1)); echo "qemu_io_guest: ok   $*"; }
bad() { failed=$((failed + 1)); echo "qemu_io_guest: FAIL $*"; }
line_with() { # FILE TEXT: the first line of FILE containing TEXT; 0 if found
	while IFS= read -r l; do
		case $l in *"$2"*) echo "$l"; return 0 ;; esac
	done <"$1"
	return 1
}
joined() { # a file's lines joined by "|"
	s=
	while IFS= read -r l; do s="$s$l|"; done <"$1"
	echo "$s"
}
check() { # DESCRIPTION FILE TEXT: passes if a line of FILE contains TEXT
	if l=$(line_with "$2" "$3"); then ok "$1: $l"; else bad "$1: no line with '$3' in: $(joined "$2")"; fi
}
nocheck() { # DESCRIPTION FILE TEXT: passes if no line of FILE contains TEXT
	if l=$(line_with "$2" "$3"); then bad "$1: $l"; else ok "$1"; fi
}
img=$D/qemu-io.img
qio() { # POLICY [RUN OPTION] -- QEMU-IO COMMANDS...: output in $D/out, report in $D/err
	pol=$1
	shift
	opt=
	if [ "$1" != -- ]; then
		opt=$1
		shift
	fi
	shift
	set -- qemu-io -f raw --aio io_uring "$@" "$img"
	if [ -n "$opt" ]; then
		"$T" run "$pol" "$opt" -- "$@" >"$D/out" 2>"$D/err"
	else
		"$T" run "$pol" -- "$@" >"$D/out" 2>"$D/err"
	fi
}

[ -d "$D" ] || { bad "no directory $D"; echo "$pass passed, $failed failed"; exit 1; }
command -v qemu-io >/dev/null 2>&1 && ok "qemu-io is on PATH" || bad "qemu-io is not on PATH ($PATH)"
: >"$img"
qemu-io -f raw -c 'truncate 1M' "$img" >"$D/out" 2>&1 &&
	ok "a 1 MiB raw image (qemu-io truncate, no io_uring)" || bad "qemu-io truncate: $(joined "$D/out")"
if "$T" probe --min-level 4 >/dev/null 2>&1; then
	how="7.x" names="task restrictions"
else
	how="before 7.0" names="ring broker"
fi
echo "qemu_io_guest: $how: expecting the report line to name $names"

qio "$P/qemu-io.json" -- -c 'write -P 0x5a 0 64k' -c 'read -P 0x5a 0 64k' -c flush
rc=$?
[ $rc -eq 0 ] && ok "$how: qemu-io completes under qemu-io.json" ||
	bad "$how: qemu-io under qemu-io.json exited $rc: $(joined "$D/out") $(joined "$D/err")"
check "$how: the report line names $names" "$D/err" "$names"
check "$how: qemu-io wrote through io_uring" "$D/out" "wrote 65536/65536 bytes at offset 0"
check "$how: qemu-io read it back" "$D/out" "read 65536/65536 bytes at offset 0"
nocheck "$how: the data read is the data written (read -P)" "$D/out" "Pattern verification failed"
nocheck "$how: no request refused under the learned policy" "$D/out" "Permission denied"

qio "$P/qemu-io-nowrite.json" -- -c 'write -P 0xa5 0 64k' -c 'read -P 0x5a 0 64k'
check "$how: without WRITEV, qemu-io's write gets EACCES" "$D/out" "write failed: Permission denied"
check "$how: without WRITEV, the read still completes" "$D/out" "read 65536/65536 bytes at offset 0"
nocheck "$how: the refused write changed nothing (read -P 0x5a)" "$D/out" "Pattern verification failed"

if [ "$how" = "before 7.0" ]; then
	qio "$P/qemu-io.json" --broker=off -- -c 'read 0 4k'
	rc=$?
	[ $rc -ne 0 ] && ok "before 7.0, --broker=off: qemu-io cannot use io_uring (exit $rc; the fallback, NOT the policy)" ||
		bad "before 7.0, --broker=off: qemu-io succeeded although io_uring should be unavailable"
	check "before 7.0, --broker=off: the report line names the companion" "$D/err" "seccomp companion"
	check "before 7.0, --broker=off: qemu-io says it cannot use io_uring" "$D/err" "Unable to use io_uring"
fi
echo "$pass passed, $failed failed"
[ $failed -eq 0 ]
