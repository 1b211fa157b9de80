#!/bin/sh
# SPDX-License-Identifier: MIT
# `iour-restrict learn` on real-service shapes (issue 23), on the running
# kernel, with tests/learn/learn_prog.c as the io_uring user (9 known
# requests, 3 register calls): daemons that leave the command (background,
# setsid, double fork), --stop-at-exit and --timeout, --pid and --cgroup,
# --per-task, the output file as root (symlinks and other non-regular
# targets refused, the target untouched on failure, -o required), runs that
# record nothing (exit 6), PID namespaces (exit 4), and the restoration of
# tracefs on signals (fatal ones included; SIGKILL's instance removed by
# the next learn).
#
# Usage: tests/learn/services.sh BUILD_DIR WORKDIR TRACEFS   (called by
# tests/learn/run.sh, which checks for root and tracefs first)
set -u
O=$1
work=$2/services
tracefs=$3
T=$O/tools/iour-restrict
P=$(cd "$(dirname "$O/tests/learn_prog")" && pwd)/learn_prog
pass=0
failed=0
ok() { pass=$((pass + 1)); echo "  ok   $*"; }
bad() { failed=$((failed + 1)); echo "  FAIL $*"; }
check() { d=$1; shift; if "$@"; then ok "$d"; else bad "$d"; fi; }
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
no_partial() { ! ls -a "$work" | grep -q '\.learn-'; }
# the 9 requests of learn_prog, all recorded
full() { grep -q '"requestOps": \["NOP", "FSYNC", "SYNC_FILE_RANGE", "READ", "WRITE", "FADVISE"\]' "$1" &&
	grep -q 'Requests seen (9)' "$1"; }
mkdir -p "$work"

echo "learn: daemons (tasks that outlive the command)"
"$T" learn -o "$work/bg.json" -- sh -c '(sleep 1; "$0" >/dev/null) &' "$P" 2>"$work/bg.err"
rc=$?
check "background child: exit 0 (got $rc)" [ $rc -eq 0 ]
check "background child: all 9 requests recorded after the command exited" full "$work/bg.json"
check "background child: learn says the command exited while tasks still run" \
	grep -q 'tasks it started still run' "$work/bg.err"
"$T" learn -q -o "$work/dd.json" -- sh -c 'setsid sh -c "(sleep 1; \"$0\" >/dev/null) &" "$0" &' "$P" 2>"$work/dd.err"
rc=$?
check "setsid + double fork daemon: exit 0 (got $rc)" [ $rc -eq 0 ]
check "setsid + double fork daemon: all 9 requests recorded" full "$work/dd.json"
"$T" learn -q -o "$work/sx.json" --stop-at-exit -- sh -c '(sleep 2; "$0" >/dev/null) &' "$P" 2>"$work/sx.err"
rc=$?
check "--stop-at-exit: nothing recorded, exit 6 (got $rc)" [ $rc -eq 6 ]
check "--stop-at-exit: the tasks left running are named" grep -q 'still run.*(sleep)' "$work/sx.err"
"$T" learn -q -o "$work/to.json" --timeout 1 -- sh -c '"$0" >/dev/null; sleep 5' "$P" 2>"$work/to.err"
rc=$?
check "--timeout with the command still running: a normal stop, exit 0 (got $rc)" [ $rc -eq 0 ]
check "--timeout: the comment says the recording ended at --timeout" \
	grep -q 'recorded until --timeout' "$work/to.json"
check "--timeout: the policy has what was recorded" full "$work/to.json"
check "--timeout: learn names what still runs" grep -q 'timeout reached.*(sleep)' "$work/to.err"
check "daemons: tracefs instances removed" no_instance

echo "learn: attaching (--pid, --cgroup, --per-task)"
sh -c 'sleep 1; "$0" >/dev/null; sleep 0.5' "$P" &
sp=$!
"$T" learn -q -o "$work/pid.json" --per-task --pid $sp 2>"$work/pid.err"
rc=$?
wait $sp
check "--pid: exit 0 when the process and its descendants are gone (got $rc)" [ $rc -eq 0 ]
check "--pid: all 9 requests recorded" full "$work/pid.json"
check "--per-task: pid and comm of the task that used each opcode" \
	grep -q 'Per task: pid [0-9]* (learn_prog): 6 requests NOP, READ, WRITE; 3 register calls' "$work/pid.json"
sh -c 'sleep 1; "$0" >/dev/null; exec sleep 30' "$P" &
sp=$!
"$T" learn -q -o "$work/int1.json" --pid $sp 2>/dev/null &
lp=$!
sleep 2.5
kill -INT $lp
wait $lp
rc=$?
kill $sp
check "--pid, SIGINT (Ctrl-C) while the process runs: the policy is written, exit 0 (got $rc)" \
	sh -c '[ $0 -eq 0 ] && grep -q "Requests seen (9)" "$1"' $rc "$work/int1.json"
sleep 30 &
sp=$!
"$T" learn -q -o "$work/int.json" --pid $sp 2>"$work/int.err" &
lp=$!
sleep 1
kill -INT $lp
wait $lp
rc=$?
kill $sp
check "--pid, SIGINT, no io_uring use: exit 6 (got $rc)" [ $rc -eq 6 ]
"$T" learn -q -o "$work/nopid.json" --pid 999999999 2>/dev/null
rc=$?
check "--pid of no process: usage error (got $rc)" [ $rc -eq 2 ]
cg=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/self/mounts)
if [ -z "$cg" ] || ! mkdir "$cg/iour-learn-test.$$" 2>/dev/null; then
	echo "learn: SKIP --cgroup: no writable cgroup2 mount"
else
	cgd=$cg/iour-learn-test.$$
	sh -c 'echo $$ >"$1/cgroup.procs"; sleep 1; "$0" >/dev/null; sleep 0.3' "$P" "$cgd" &
	sp=$!
	# io_uring users outside the cgroup at the same time
	(sleep 0.5; for _ in 1 2 3; do "$P" >/dev/null; done) &
	np=$!
	"$T" learn -q -o "$work/cg.json" --cgroup "$cgd" --duration 2.5 2>"$work/cg.err"
	rc=$?
	wait $sp $np
	rmdir "$cgd"
	check "--cgroup --duration: exit 0 (got $rc)" [ $rc -eq 0 ]
	check "--cgroup: exactly the 9 requests of the task in the cgroup" full "$work/cg.json"
	"$T" learn -q -o "$work/cg2.json" --cgroup /tmp --duration 1 2>/dev/null
	rc=$?
	check "--cgroup of a directory that is not a cgroup: usage error (got $rc)" [ $rc -eq 2 ]
fi
check "attaching: tracefs instances removed" no_instance

echo "learn: the output file as root"
echo keep >"$work/victim"
ln -s "$work/victim" "$work/link.json"
"$T" learn -q -o "$work/link.json" -- "$P" >/dev/null 2>"$work/link.err"
rc=$?
check "-o a symlink: refused, exit 1 (got $rc)" [ $rc -eq 1 ]
check "-o a symlink: its target untouched" [ "$(cat "$work/victim")" = keep ]
check "-o a symlink: says why" grep -q 'not a regular file' "$work/link.err"
mkfifo "$work/fifo.json"
"$T" learn -q -o "$work/fifo.json" -- "$P" >/dev/null 2>/dev/null
rc=$?
check "-o a FIFO: refused, exit 1 (got $rc)" [ $rc -eq 1 ]
echo old >"$work/old.json"
"$T" learn -q -o "$work/old.json" -- true 2>/dev/null
rc=$?
check "a failing run: exit 6 (got $rc), the existing target untouched" \
	[ $rc -eq 6 ] && [ "$(cat "$work/old.json")" = old ]
"$T" learn -q -o "$work/old.json" -- "$P" >/dev/null 2>&1
check "a successful run replaces the target" full "$work/old.json"
"$T" learn -q -- "$P" >"$work/noo.out" 2>"$work/noo.err"
rc=$?
check "no -o: usage error, the command not run (got $rc)" [ $rc -eq 2 ] && [ ! -s "$work/noo.out" ]
"$T" learn -q -o - -- "$P" >"$work/stdout.out" 2>/dev/null
check "-o -: the policy on stdout after the command's output" \
	python3 -c 'import json,sys; t=open(sys.argv[1]).read(); json.loads(t[t.index("{"):])' "$work/stdout.out"
check "output: no unfinished file left" no_partial

echo "learn: signals"
# Started under nohup (SIGHUP ignored, as every child inherits), the
# command keeps ignoring the SIGHUP learn passes on, as it would without
# learn: it runs to its end and learn writes its policy (exit 0).
hup_ignored=$(( 0x$(sed -n 's/^SigIgn:[[:space:]]*//p' /proc/$$/status) & 1 ))
[ "$hup_ignored" -eq 0 ] || echo "learn: SIGHUP is ignored here (nohup?): the command is expected to run on"
for s in TERM USR1 USR2 PIPE ALRM HUP; do
	rm -f "$work/ran"
	"$T" learn -q -o "$work/sig-$s.json" -- sh -c '"$0" >/dev/null; : >"$1"; sleep 5' "$P" \
		"$work/ran" 2>/dev/null &
	lp=$!
	# learn_prog has run (its requests are recorded) before the signal
	i=0
	while [ $i -lt 100 ] && [ ! -e "$work/ran" ]; do sleep 0.1; i=$((i + 1)); done
	kill -$s $lp
	wait $lp
	rc=$?
	check "SIG$s: tracefs instance removed (exit $rc)" no_instance
	check "SIG$s: no unfinished output left" no_partial
	case $s in
	HUP) if [ "$hup_ignored" -eq 1 ]; then
		check "SIGHUP (ignored here): forwarded, the command runs on, its policy, exit 0" \
			sh -c '[ $0 -eq 0 ] && grep -q FADVISE "$1"' $rc "$work/sig-$s.json"
	else
		check "SIGHUP: forwarded, the policy of what ran, exit 5" \
			sh -c '[ $0 -eq 5 ] && grep -q FADVISE "$1"' $rc "$work/sig-$s.json"
	fi ;;
	TERM) check "SIG$s: forwarded, the command stops on it: a normal stop, exit 0" \
		sh -c '[ $0 -eq 0 ] && grep -q FADVISE "$1" && grep -q "stopped on SIGTERM, a normal stop" "$1"' \
		$rc "$work/sig-$s.json" ;;
	*) check "SIG$s: learn dies of it, no policy" \
		sh -c '[ $0 -gt 128 ] && [ ! -e "$1" ]' $rc "$work/sig-$s.json" ;;
	esac
done
"$T" learn -q -o "$work/pipe.json" -- sh -c '"$0"' "$P" 2>/dev/null | true
check "learn ... | true: tracefs instance removed" no_instance
"$T" learn -q -o "$work/kill.json" -- sleep 3 2>/dev/null &
lp=$!
i=0
while [ $i -lt 50 ] && ! has_instance $lp; do sleep 0.1; i=$((i + 1)); done
kill -KILL $lp
wait $lp 2>/dev/null
if ! has_instance $lp; then bad "SIGKILL: the instance stays (the documented exception)"; else
	ok "SIGKILL: the instance stays (the documented exception)"; fi
rm -f "$work"/.kill.json.learn-*
"$T" learn -o "$work/after.json" -- "$P" >/dev/null 2>"$work/after.err"
# (a learn of another worktree running meanwhile may remove it first)
check "the next learn removes the dead learner's instance, and says so" \
	sh -c '! ls -d "$0"/instances/iour-learn-"$1"-* >/dev/null 2>&1 &&
		{ grep -q "removed .*iour-learn-$1-.*which no longer runs" "$2" ||
		  ! grep -q "iour-learn-$1-" "$2"; }' "$tracefs" $lp "$work/after.err"
check "after SIGKILL and the next learn: no instance of a dead learner left" no_instance

echo "learn: PID namespaces"
if ! unshare -pf true 2>/dev/null; then
	echo "learn: SKIP PID namespace checks: unshare -pf fails here"
else
	unshare -pf "$T" learn -q -o "$work/ns.json" -- "$P" >/dev/null 2>"$work/ns.err"
	rc=$?
	check "in a PID namespace: exit 4 with the reason (got $rc)" \
		sh -c '[ $0 -eq 4 ] && grep -q "PID namespace" "$1"' $rc "$work/ns.err"
	if unshare -pf --mount-proc true 2>/dev/null; then
		unshare -pf --mount-proc "$T" learn -q -o "$work/ns2.json" -- "$P" >/dev/null 2>"$work/ns2.err"
		rc=$?
		check "in a PID namespace with its own /proc: exit 4, nothing traced (got $rc)" \
			sh -c '[ $0 -eq 4 ] && grep -q "not even its start" "$1"' $rc "$work/ns2.err"
	fi
	check "PID namespaces: no policy written" [ ! -e "$work/ns.json" ] && [ ! -e "$work/ns2.json" ]
fi
check "tracefs instances removed" no_instance

echo "learn services: $pass passed, $failed failed"
[ $failed -eq 0 ]
