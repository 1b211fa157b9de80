#!/bin/sh
# SPDX-License-Identifier: MIT
# What a policy learned from fio does on the running kernel: learn the
# policy of a small fio job (io_uring engine), then run the same job under
# it and under the same policy without WRITE.
#
#   Linux 7.0+ (task restrictions): the learned policy must let the job
#     run (exit 0); without WRITE the job must fail.
#   before 7.0: no task restriction exists; `run` (1.1) is a ring broker:
#     the learned policy lets the job run on brokered, restricted rings and
#     without WRITE it fails; with --broker=off (or `exec`, or a 1.0 `run`)
#     the fallback, the seccomp companion, makes io_uring unavailable, so
#     fio must fail under both policies and the report line must name the
#     companion.  This is the
#     fallback working, NOT the learned policy being enforced.
#
# Self-contained for the 7.x qemu guest: needs only sh (builtins), fio,
# iour-restrict (argument 1) and a writable directory (argument 2, made if
# missing); root, and /sys mounted (learn mounts tracefs on
# /sys/kernel/tracing if needed).  Uses `iour-restrict run` when the tool
# has it; otherwise `exec` (the companion alone) before 7.0, and a SKIP on
# 7.0+.  Last line: "learn_guest: N passed, M failed" (or "... SKIP: why");
# exit 0 when nothing failed.
set -u
T=${1:?usage: learn_guest.sh IOUR_RESTRICT DIR}
D=${2:?usage: learn_guest.sh IOUR_RESTRICT DIR}
pass=0
failed=0
ok() { pass=$((pass + 1)); echo "learn_guest: ok   $*"; }
bad() { failed=$((failed + 1)); echo "learn_guest: FAIL $*"; }
skip() { echo "learn_guest: SKIP: $*"; exit 0; }
# prints the first line of file $1
first_line() { IFS= read -r l <"$1" || true; echo "${l:-}"; }

# 0 if file $1 contains $2
has() {
	while IFS= read -r line; do
		case $line in *"$2"*) return 0 ;; esac
	done <"$1"
	return 1
}

[ -d "$D" ] || mkdir -p "$D" || skip "cannot create $D"
command -v fio >/dev/null 2>&1 || skip "fio is not installed"
job="--name=learn --ioengine=io_uring --filename=$D/fio.dat --size=1m --bs=4k --rw=randrw \
--iodepth=4 --output=/dev/null"

# shellcheck disable=SC2086
"$T" learn -q -o "$D/learned.json" -- fio $job 2>"$D/learn.err"
rc=$?
[ $rc -eq 4 ] && skip "learn cannot trace here: $(first_line "$D/learn.err")"
if [ $rc -ne 0 ]; then
	bad "learn fio: exit $rc: $(first_line "$D/learn.err")"
	echo "learn_guest: $pass passed, $failed failed"
	exit 1
fi
ok "learn fio: policy written"
# the same policy without WRITE (learn writes "requestOps" on one line)
haswrite=0
while IFS= read -r line; do
	case $line in
	*'"requestOps"'*'"WRITE"'*)
		haswrite=1
		pre=${line%%'"WRITE"'*}
		post=${line#*'"WRITE"'}
		case $post in
		', '*) post=${post#, } ;;
		*) pre=${pre%, } ;;
		esac
		line="$pre$post"
		;;
	esac
	printf '%s\n' "$line"
done <"$D/learned.json" >"$D/nowrite.json"
[ $haswrite -eq 1 ] && ok "learned policy allows WRITE" || bad "learned policy lacks WRITE"
has "$D/nowrite.json" '"WRITE"' && bad "WRITE still in the policy without WRITE" ||
	ok "policy without WRITE written"

if "$T" probe --min-level 4 >/dev/null 2>&1; then level4=1; else level4=0; fi
if "$T" run --help >/dev/null 2>&1; then how=run; else how=exec; fi
if [ $level4 -eq 1 ] && [ $how = exec ]; then
	skip "Linux 7.0+ but this iour-restrict has no 'run' command"
fi

# under POLICY (or the companion alone): fio's exit status, report in $D/run.err
under() {
	if [ $how = run ]; then
		# shellcheck disable=SC2086
		"$T" run "$1" ${2:-} -- fio $job 2>"$D/run.err"
	else
		# shellcheck disable=SC2086
		"$T" exec -- fio $job 2>"$D/run.err"
	fi
}

if [ $level4 -eq 1 ]; then
	under "$D/learned.json"
	rc=$?
	[ $rc -eq 0 ] && ok "7.x: fio runs under its learned policy (task restrictions)" ||
		bad "7.x: fio under its learned policy exited $rc: $(first_line "$D/run.err")"
	has "$D/run.err" "task restrictions" && ok "7.x: report names task restrictions" ||
		bad "7.x: report does not name task restrictions: $(first_line "$D/run.err")"
	under "$D/nowrite.json"
	rc=$?
	[ $rc -ne 0 ] && ok "7.x: fio fails under the policy without WRITE (exit $rc)" ||
		bad "7.x: fio succeeded under a policy without WRITE"
else
	off=
	case $how:$("$T" run --help 2>/dev/null) in run:*--broker=*) broker=1 ;; *) broker=0 ;; esac
	if [ $broker -eq 1 ]; then
		off=--broker=off
		under "$D/learned.json"
		rc=$?
		[ $rc -eq 0 ] && ok "before 7.0: fio runs under its learned policy (ring broker)" ||
			bad "before 7.0: fio under its learned policy (ring broker) exited $rc: $(first_line "$D/run.err")"
		has "$D/run.err" "ring broker" && ok "before 7.0: report names the ring broker" ||
			bad "before 7.0: report does not name the ring broker: $(first_line "$D/run.err")"
		under "$D/nowrite.json"
		rc=$?
		[ $rc -ne 0 ] && ok "before 7.0: fio fails under the policy without WRITE (ring broker, exit $rc)" ||
			bad "before 7.0: fio succeeded under a policy without WRITE (ring broker)"
	fi
	for p in learned nowrite; do
		under "$D/$p.json" $off
		rc=$?
		[ $rc -ne 0 ] &&
			ok "before 7.0 ($how, $p policy): fio cannot use io_uring (fallback: seccomp companion; the policy itself is NOT enforced on this kernel)" ||
			bad "before 7.0 ($how, $p policy): fio succeeded although io_uring should be unavailable"
		has "$D/run.err" "seccomp companion" && ok "before 7.0: the report says seccomp companion" ||
			bad "before 7.0: the report does not name the companion: $(first_line "$D/run.err")"
		has "$D/run.err" "doesn't support io_uring" &&
			ok "before 7.0: fio says io_uring is unavailable" ||
			bad "before 7.0: fio failed for another reason: $(first_line "$D/run.err")"
	done
fi
echo "learn_guest: $pass passed, $failed failed"
[ $failed -eq 0 ]
