#!/bin/sh
# SPDX-License-Identifier: MIT
# Debian's fio (--ioengine=io_uring, a small randrw job on a tmpfs file) and
# uring-try (tests/progs/uring_try.c) under `iour-restrict run` with task
# policy files, in every kernel guest (scripts/guest-payloads/40-fio.sh).
#
#   Linux 7.0+ (level 4 and up, task restrictions and filters):
#     fio.json (examples/policies/fio.json): the job completes, reads and
#       writes, and the report line names task restrictions;
#     policies/fio-nowrite.json (fio's engine less every write opcode):
#       fio's writes fail with EACCES and fio says so ("Permission denied");
#     policies/socket-inet.json (SOCKET only for AF_INET): uring-try's
#       AF_UNIX socket request gets EACCES, its AF_INET one a socket.
#   before 7.0: no task restriction exists; run is a ring broker: fio's
#     rings are created by the broker and restricted per ring, so fio
#     completes under fio.json, its writes get EACCES under
#     fio-nowrite.json, and the report line names the ring broker.  With
#     --broker=off the fallback of 1.0, the seccomp companion: io_uring_setup
#     fails, fio says io_uring is unavailable, uring-try's setup gets ENOSYS
#     (NOT the policies being enforced, and the report line says so).
#
# Needs only sh builtins, fio and uring-try on PATH, iour-restrict.  Usage:
# fio_guest.sh [IOUR_RESTRICT [POLICY_DIR [DIR]]].  Every check counts; the
# last line is "N passed, M failed" (the guest's /init adds it up); exit 0
# when nothing failed.
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
ok() { pass=$((pass + 1)); echo "fio_guest: ok   $*"; }
bad() { failed=$((failed + 1)); echo "fio_guest: FAIL $*"; }
# the first line of file $1 that contains $2 (empty if none); status 0 if found
line_with() {
	while IFS= read -r l; do
		case $l in *"$2"*) echo "$l"; return 0 ;; esac
	done <"$1"
	return 1
}
# the first line of file $1
first() { IFS= read -r l <"$1" || true; echo "${l:-}"; }
# a file's lines joined by "|"
joined() {
	s=
	while IFS= read -r l; do s="$s$l|"; done <"$1"
	echo "$s"
}
check() { # DESCRIPTION FILE TEXT: passes if a line of FILE contains TEXT
	if l=$(line_with "$2" "$3"); then ok "$1: $l"; else bad "$1: no line with '$3' in: $(joined "$2")"; fi
}
fio_job() { # POLICY: fio under POLICY; output in $D/out, report and errors in $D/err
	"$T" run "$1" -- fio --name=guest --ioengine=io_uring --filename="$D/fio.dat" --size=256k \
		--bs=4k --rw=randrw --iodepth=4 --direct=0 >"$D/out" 2>"$D/err"
}

[ -d "$D" ] || { bad "no directory $D (the guest has no mkdir)"; echo "$pass passed, $failed failed"; exit 1; }
command -v fio >/dev/null 2>&1 && ok "fio is on PATH" || bad "fio is not on PATH ($PATH)"
if "$T" probe --min-level 4 >/dev/null 2>&1; then level4=1; else level4=0; fi
echo "fio_guest: task restrictions: $([ $level4 -eq 1 ] && echo yes || echo 'no (before 7.0)')"

if [ $level4 -eq 1 ]; then
	fio_job "$P/fio.json"
	rc=$?
	[ $rc -eq 0 ] && ok "7.x: fio completes under fio.json" ||
		bad "7.x: fio under fio.json exited $rc: $(joined "$D/err")"
	check "7.x: the report line names task restrictions" "$D/err" "task restrictions"
	check "7.x: fio read" "$D/out" "READ: bw="
	check "7.x: fio wrote" "$D/out" "WRITE: bw="

	fio_job "$P/fio-nowrite.json"
	rc=$?
	[ $rc -ne 0 ] && ok "7.x: fio fails under fio-nowrite.json (exit $rc)" ||
		bad "7.x: fio succeeded under a policy without WRITE"
	if l=$(line_with "$D/err" "Permission denied") || l=$(line_with "$D/out" "Permission denied"); then
		case $l in
		*write*) ok "7.x: fio says its write got EACCES: $l" ;;
		*) bad "7.x: EACCES, but not for a write: $l" ;;
		esac
	else
		bad "7.x: fio does not say Permission denied: $(joined "$D/err")"
	fi

	"$T" run "$P/socket-inet.json" -- uring-try nop socket-unix socket-inet >"$D/out" 2>"$D/err"
	rc=$?
	[ $rc -eq 0 ] && ok "7.x: uring-try ran under socket-inet.json" ||
		bad "7.x: uring-try under socket-inet.json exited $rc: $(joined "$D/err")"
	s=$(joined "$D/out")
	[ "$s" = "setup: ok|nop: ok|socket-unix: EACCES|socket-inet: ok|" ] &&
		ok "7.x: SOCKET filter: AF_UNIX refused (EACCES), AF_INET allowed" ||
		bad "7.x: SOCKET filter: expected AF_UNIX EACCES and AF_INET ok, got $s"
	check "7.x: the report line names filters" "$D/err" "filters"
else
	fio_job "$P/fio.json"
	rc=$?
	[ $rc -eq 0 ] && ok "before 7.0: fio completes under fio.json (ring broker)" ||
		bad "before 7.0: fio under fio.json exited $rc: $(joined "$D/err")"
	check "before 7.0: the report line names the ring broker" "$D/err" "ring broker"
	check "before 7.0: fio read" "$D/out" "READ: bw="
	check "before 7.0: fio wrote" "$D/out" "WRITE: bw="

	fio_job "$P/fio-nowrite.json"
	rc=$?
	[ $rc -ne 0 ] && ok "before 7.0: fio fails under fio-nowrite.json (exit $rc)" ||
		bad "before 7.0: fio succeeded under a policy without WRITE"
	if l=$(line_with "$D/err" "Permission denied") || l=$(line_with "$D/out" "Permission denied"); then
		case $l in
		*write*) ok "before 7.0: fio says its write got EACCES (brokered ring): $l" ;;
		*) bad "before 7.0: EACCES, but not for a write: $l" ;;
		esac
	else
		bad "before 7.0: fio does not say Permission denied: $(joined "$D/err")"
	fi

	for p in fio fio-nowrite; do
		"$T" run "$P/$p.json" --broker=off -- fio --name=guest --ioengine=io_uring \
			--filename="$D/fio.dat" --size=256k --bs=4k --rw=randrw --iodepth=4 \
			--direct=0 >"$D/out" 2>"$D/err"
		rc=$?
		[ $rc -ne 0 ] &&
			ok "before 7.0, --broker=off ($p.json): fio cannot use io_uring (exit $rc; the fallback, NOT the policy)" ||
			bad "before 7.0, --broker=off ($p.json): fio succeeded although io_uring should be unavailable"
		check "before 7.0, --broker=off ($p.json): the report line names the companion" "$D/err" "seccomp companion"
		check "before 7.0, --broker=off ($p.json): the report line says io_uring_setup fails" "$D/err" "io_uring_setup fails"
		check "before 7.0, --broker=off ($p.json): fio says io_uring is unavailable" "$D/err" "doesn't support io_uring"
	done
	"$T" run "$P/socket-inet.json" --broker=off -- uring-try nop socket-unix >"$D/out" 2>"$D/err"
	rc=$?
	s=$(joined "$D/out")
	[ $rc -eq 0 ] && [ "$s" = "setup: ENOSYS|" ] &&
		ok "before 7.0, --broker=off: uring-try: io_uring_setup -> ENOSYS (companion)" ||
		bad "before 7.0, --broker=off: uring-try: expected setup ENOSYS, got exit $rc, $s $(joined "$D/err")"
fi
echo "$pass passed, $failed failed"
[ $failed -eq 0 ]
