#!/bin/sh
# SPDX-License-Identifier: MIT
# `iour-restrict run --log-denials` and `run --audit` in every kernel
# guest (scripts/guest-payloads/47-audit.sh), with tests/audit/mix_prog.c
# (/progs/audit-mix), and what each kernel's tracepoints let them see
# (doc/cli.md, "run": the denial log per kernel).  Prints one
# "audit_guest: measured:" line per signal:
#   - io_uring_req_failed for a request a restriction denied (the ring
#     broker's per-ring restrictions before 7.0, task restrictions on 7.0+);
#   - io_uring_register (ret -EACCES) for a denied register call;
#   - on 7.0+, io_uring_req_failed for a request a cBPF argument filter
#     denied (policies/socket-inet.json: AF_UNIX refused).
# Checks: every request the program saw fail with EACCES is logged with
# its pid and opcode, and nothing else, where run's status line says
# denials are logged; where it says they are NOT (a kernel without
# io_uring_req_failed), no request line appears.  Audit mode: every request
# runs, and the would-be denials are exactly those of the policy
# (NOP:ASYNC only where the submit tracepoint has the SQE flags; an
# argument filter's opcode is "unknown").
# Needs only sh builtins, iour-restrict and audit-mix.  Usage:
# audit_guest.sh [IOUR_RESTRICT [POLICY_DIR [DIR]]]; the last line is
# "N passed, M failed".
# shellcheck disable=SC2015
set -u
PATH=/usr/bin:/bin:/progs:/tools:$PATH
export PATH
T=${1:-/tools/iour-restrict}
P=${2:-/progs/policies}
D=${3:-/tmp}
pass=0
failed=0
ok() { pass=$((pass + 1)); echo "audit_guest: ok   $*"; }
bad() { failed=$((failed + 1)); echo "audit_guest: FAIL $*"; }
has() { # FILE TEXT: a line of FILE contains TEXT
	while IFS= read -r l; do
		case $l in *"$2"*) return 0 ;; esac
	done <"$1"
	return 1
}
count() { # FILE TEXT: lines of FILE that contain TEXT
	n=0
	while IFS= read -r l; do
		case $l in *"$2"*) n=$((n + 1)) ;; esac
	done <"$1"
	echo $n
}
joined() {
	s=
	while IFS= read -r l; do s="$s$l|"; done <"$1"
	echo "$s"
}
rel=
read -r rel </proc/sys/kernel/osrelease || true
printf '%s\n' '{"defaultAction": "deny", "requestOps": ["NOP", "READ"],' \
	' "registerOps": ["REGISTER_PROBE"], "sqeFlags": {"allowed": [], "required": []}}' \
	>"$D/audit-pol.json"
mix="NOP READ FSYNC NOP:ASYNC SOCKET reg:FILES"

# ---- the denial log
# shellcheck disable=SC2086
"$T" run "$D/audit-pol.json" --log-denials="$D/deny.log" -- audit-mix $mix >"$D/out" 2>"$D/err"
rc=$?
[ $rc -eq 0 ] && ok "denials: audit-mix ran (exit 0)" || bad "denials: exit $rc: $(joined "$D/err")"
pid=
while IFS=' ' read -r a b; do [ "$a" = pid ] && pid=$b; done <"$D/out"
[ -e "$D/deny.log" ] || : >"$D/deny.log"
if has "$D/err" "denials NOT logged"; then
	echo "audit_guest: measured: Linux $rel: io_uring_req_failed: absent (run says: denials NOT logged)"
	[ "$(count "$D/deny.log" " request ")" -eq 0 ] &&
		ok "denials: no request line where the status line says denials are not logged" ||
		bad "denials: request lines although the status line says none: $(joined "$D/deny.log")"
	# register calls on a ring: io_uring_register, as the status line says
	has "$D/deny.log" "register REGISTER_FILES" && sig=yes || sig=no
	echo "audit_guest: measured: Linux $rel: io_uring_register (ret -EACCES) for a denied register call: $sig"
	if has "$D/out" "reg:FILES res -13"; then
		has "$D/deny.log" "pid $pid comm auditmix register REGISTER_FILES flags none: EACCES (count 1, total)" &&
			ok "denials: the denied register call is logged" ||
			bad "denials: the denied register call is not logged: $(joined "$D/deny.log")"
	fi
else
	n=0
	missing=
	while IFS=' ' read -r a r res; do
		[ "$r" = res ] && [ "$res" = -13 ] || continue
		n=$((n + 1))
		op=${a%%:*}
		fl=none
		case $a in *:ASYNC) fl=ASYNC ;; esac
		if [ "$op" = reg ]; then
			want="pid $pid comm auditmix register REGISTER_${a#reg:} flags none: EACCES (count 1, total)"
		else
			want="pid $pid comm auditmix request $op flags $fl: EACCES (count 1, total)"
		fi
		has "$D/deny.log" "$want" || missing="$missing [$want]"
	done <"$D/out"
	total=$(count "$D/deny.log" ", total)")
	has "$D/deny.log" "request FSYNC" && sig=yes || sig=no
	echo "audit_guest: measured: Linux $rel: io_uring_req_failed for a restriction-denied request: $sig"
	has "$D/deny.log" "register REGISTER_FILES" && sig=yes || sig=no
	echo "audit_guest: measured: Linux $rel: io_uring_register (ret -EACCES) for a denied register call: $sig"
	[ $n -gt 0 ] && [ -z "$missing" ] && [ "$total" -eq $n ] &&
		ok "denials: the $n requests that got EACCES are logged with pid $pid, nothing else" ||
		bad "denials: $n EACCES ($(joined "$D/out")), $total logged, missing:$missing; log: $(joined "$D/deny.log")"
fi

if "$T" probe --min-level 4 >/dev/null 2>&1; then
	# an argument filter's denial (7.0+)
	"$T" run "$P/socket-inet.json" --log-denials="$D/f.log" -- audit-mix NOP SOCKET \
		>"$D/out" 2>"$D/err"
	pid=
	while IFS=' ' read -r a b; do [ "$a" = pid ] && pid=$b; done <"$D/out"
	[ -e "$D/f.log" ] || : >"$D/f.log"
	if has "$D/out" "SOCKET res -13"; then
		has "$D/f.log" "pid $pid comm auditmix request SOCKET flags none: EACCES" && sig=yes || sig=no
		echo "audit_guest: measured: Linux $rel: io_uring_req_failed for a cBPF-filter-denied request: $sig"
		[ $sig = yes ] && ok "denials: the filter's SOCKET denial is logged" ||
			bad "denials: the filter's SOCKET denial is not logged: $(joined "$D/f.log")"
	else
		bad "denials: socket-inet.json did not deny AF_UNIX: $(joined "$D/out")"
	fi
fi

# ---- audit mode
# shellcheck disable=SC2086
"$T" run --audit="$D/audit.log" "$D/audit-pol.json" -- audit-mix $mix >"$D/out" 2>"$D/err"
rc=$?
pid=
while IFS=' ' read -r a b; do [ "$a" = pid ] && pid=$b; done <"$D/out"
[ -e "$D/audit.log" ] || : >"$D/audit.log"
# an opcode the kernel does not have (SOCKET before 5.19) gets EINVAL at
# submission and fires no submit tracepoint: not a request that ran
nosock=0
has "$D/out" "SOCKET res -22" && nosock=1
[ $rc -eq 0 ] && [ "$(count "$D/out" " res -")" -eq $nosock ] &&
	ok "audit: every request ran (nothing enforced)" ||
	bad "audit: exit $rc, results $(joined "$D/out") $(joined "$D/err")"
has "$D/err" "audit: NOT enforced" && ok "audit: the status line says NOT enforced" ||
	bad "audit: the status line: $(joined "$D/err")"
want="request FSYNC flags none|request SOCKET flags none|register REGISTER_FILES flags none|register UNREGISTER_FILES flags none"
fl=none
if has "$D/err" "SQE flags unknown"; then
	want="request FSYNC flags unknown|request SOCKET flags unknown|register REGISTER_FILES flags none|register UNREGISTER_FILES flags none"
	fl=unknown
else
	want="$want|request NOP flags ASYNC"
fi
echo "audit_guest: measured: Linux $rel: the submit tracepoint's SQE flags: $([ $fl = unknown ] && echo absent || echo present)"
if [ $nosock -eq 1 ]; then
	echo "audit_guest: Linux $rel has no IORING_OP_SOCKET (EINVAL): not expected in the report"
	want=$(IFS='|'; r=; for w in $want; do case $w in *SOCKET*) ;; *) r="$r${r:+|}$w" ;; esac; done; echo "$r")
fi
missing=
n=0
IFS='|'
for w in $want; do
	n=$((n + 1))
	has "$D/audit.log" "pid $pid comm auditmix $w: would be denied (count 1, total)" ||
		missing="$missing [$w]"
done
unset IFS
total=$(count "$D/audit.log" ", total)")
[ -z "$missing" ] && [ "$total" -eq $n ] && ok "audit: the $n would-be denials, nothing else" ||
	bad "audit: missing$missing, $total reported: $(joined "$D/audit.log")"

echo "$pass passed, $failed failed"
[ $failed -eq 0 ]
