#!/bin/sh
# SPDX-License-Identifier: MIT
# make check-agent: `iour-restrict agent`, the OCI seccomp agent, on the
# running kernel.  First the agent alone (its socket, its command line,
# runtimes that send garbage or nothing), then with Debian's runc (and
# crun, where it can run a container here: on a hybrid cgroup hierarchy,
# in a mount namespace without its cgroup2 mount) running bundles built here
# from tests/agent/agent_prog.c (static; nothing is downloaded):
# - a container's ring is restricted by the policy of its annotation
#   (READ completes with the file's data, NOP gets -EACCES) and the
#   program cannot register a restriction set of its own;
# - two containers at once with different policies;
# - a container without the annotation, or with a policy that does not
#   load, gets EPERM from io_uring_setup;
# - policy selection (doc/agent.md): the annotation over listenerMetadata,
#   listenerMetadata naming a file in --policy-dir, a --config rule on an
#   annotation, --default-policy; listenerMetadata escaping --policy-dir
#   ('..', a path, a symlink out) gets EPERM; the JSON-lines log parses and
#   carries each container's counters; SIGUSR1 logs the status; SIGHUP
#   reloads --config (new containers get the new rule, a running one keeps
#   its plan, a bad file is refused and the previous kept);
# - a container killed while its io_uring_setup calls wait does not take
#   the agent down;
# - a container whose io_uring_setup params lie in a FUSE page that never
#   answers: another container is served meanwhile, the stalled call gets
#   EFAULT at the deadline, SIGTERM ends the agent at once (simulated
#   runtime connections, tests/agent/agent_stall.c: runs without runc);
# - the agent killed while a container runs: the container's next
#   io_uring_setup fails with ENOSYS, its ring keeps working, it exits
#   normally, and a new agent on the same socket serves new containers.
#
# Usage: tests/agent/run.sh [BUILD_DIR]   (needs root and runc; skips,
# saying why, otherwise)
set -u
O=${1:-build}
T=$(cd "$(dirname "$O/tools/iour-restrict")" && pwd)/iour-restrict
P=$O/tests/agent_prog
pass=0
failed=0
ok() { pass=$((pass + 1)); echo "  ok   $*"; }
bad() { failed=$((failed + 1)); echo "  FAIL $*"; }
# check DESCRIPTION COMMAND...: ok if COMMAND succeeds
check() { d=$1; shift; if "$@"; then ok "$d"; else bad "$d"; fi; }
skip() { echo "agent: SKIP: $*"; exit 0; }

[ -x "$T" ] || { echo "agent: build $T first"; exit 1; }
[ "$(id -u)" -eq 0 ] || skip "not root (runc needs root, and the agent reads the containers' memory)"
command -v python3 >/dev/null 2>&1 || skip "no python3 (the test's runtime client and config.json editor)"

work=$(mktemp -d /tmp/iour-agent.XXXXXX)
agent_pid=""
names=""
cleanup() {
	for n in $names; do
		runc delete -f "$n" >/dev/null 2>&1
		crun delete -f "$n" >/dev/null 2>&1
	done
	[ -n "$agent_pid" ] && kill "$agent_pid" 2>/dev/null && wait "$agent_pid" 2>/dev/null
	[ -n "${IOUR_AGENT_KEEP:-}" ] && echo "agent: kept $work" || rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
S=$work/agent.sock
AGENT_PRE=${IOUR_AGENT_WRAP:-}
LOG=$work/agent.log

# start_agent [ARGS...]: the agent on $S, logging to $LOG; waits until it
# logs that it listens (its signal handling is in place by then).
listening() { n=$(grep -c -e ' listening socket=' -e '"event":"listening"' "$LOG" 2>/dev/null); echo "${n:-0}"; }
start_agent() {
	n0=$(listening)
	# shellcheck disable=SC2086
	$AGENT_PRE "$T" agent --socket "$S" --log "$LOG" "$@" 2>>"$work/agent.err" &
	agent_pid=$!
	i=0
	while [ "$(listening)" -le "$n0" ]; do
		kill -0 "$agent_pid" 2>/dev/null && [ $i -lt 100 ] || return 1
		sleep 0.05
		i=$((i + 1))
	done
	[ -S "$S" ]
}
stop_agent() {
	kill -TERM "$agent_pid" 2>/dev/null
	wait "$agent_pid"
	rc=$?
	agent_pid=""
	return $rc
}
# wait_for FILE PATTERN [TENTHS]: until grep finds PATTERN in FILE.
wait_for() {
	i=0
	while ! grep -q -- "$2" "$1" 2>/dev/null; do
		[ $i -ge "${3:-300}" ] && return 1
		sleep 0.1
		i=$((i + 1))
	done
}
# client MODE: a runtime's connection, as tests/agent/client.py makes it.
client() { python3 "$(dirname "$0")/client.py" "$S" "$@"; }

echo "agent: the command line and the socket"
"$T" agent >/dev/null 2>&1
check "no --socket: usage error, exit 2 (got $?)" [ $? -eq 2 ]
"$T" agent --socket "$S" stray >/dev/null 2>&1
check "a stray operand: exit 2" [ $? -eq 2 ]
"$T" agent --socket "$S" --max-rings -1 >/dev/null 2>&1
check "--max-rings -1: exit 2" [ $? -eq 2 ]
echo keep >"$work/file"
"$T" agent --socket "$work/file" 2>"$work/err" >/dev/null
rc=$?
check "a path that is not a socket: exit 1, not replaced (got $rc)" \
	sh -c "[ $rc -eq 1 ] && grep -qx keep '$work/file' && grep -q 'not a socket' '$work/err'"
check "the agent starts" start_agent
check "its socket has mode 0600" [ "$(stat -c %a "$S")" = 600 ]
"$T" agent --socket "$S" 2>"$work/err" >/dev/null
rc=$?
check "a second agent on a socket in use: exit 1 (got $rc)" \
	sh -c "[ $rc -eq 1 ] && grep -q 'another agent' '$work/err' && [ -S '$S' ]"
client garbage >/dev/null 2>&1
client nofd >/dev/null 2>&1
client silent 7 >/dev/null 2>&1 &
silent=$!
sleep 0.3
# while the silent client holds its connection, another one is served:
# unknown fields, and the listener the second of two fds
client decoy
check "while a client sends nothing, another is served (the listener is the fd named seccompFd)" \
	grep -q 'container=decoy pid=4242 new policy=none io_uring_setup=EPERM' "$LOG"
check "... and dropped when its listener hangs up" \
	wait_for "$LOG" 'container=decoy pid=4242 gone reason=exited' 30
wait $silent
check "the silent client was dropped after the timeout" \
	grep -q 'no complete message within 5000 ms' "$LOG"
check "a message that is not JSON is logged and dropped" grep -q 'not JSON' "$LOG"
check "a message without a listener is logged and dropped" grep -q 'no seccomp listener' "$LOG"
client huge
check "a message over 1 MiB is dropped" wait_for "$LOG" 'longer than 1048576 bytes' 30
client many 70
check "more than 64 waiting connections: the rest are refused" \
	grep -q 'more than 64 runtimes connected at once' "$LOG"
mv "$LOG" "$LOG.1"
kill -HUP "$agent_pid"
client garbage >/dev/null 2>&1
check "SIGHUP reopens the log (log rotation)" wait_for "$LOG" 'not JSON' 30
cat "$LOG.1" "$LOG" >"$LOG.2" && mv "$LOG.2" "$LOG" && rm -f "$LOG.1"
kill -HUP "$agent_pid"
check "the agent survived all of them" kill -0 "$agent_pid"
stop_agent
rc=$?
check "SIGTERM: exit 0 (got $rc)" [ $rc -eq 0 ]
check "SIGTERM: the socket is removed" [ ! -e "$S" ]
# a stale socket (nobody listens) is replaced
python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$S"
check "a stale socket is replaced" start_agent
stop_agent

# ---- a container whose io_uring_setup params never arrive: they lie in a
# FUSE page whose READ is never answered (tests/agent/agent_stall.c: two
# simulated runtime connections, no real container; doc/security.md 3a)
STALL=$O/tests/agent_stall
# sval FILE KEY, sms FILE KEY: the result / the milliseconds agent-stall
# printed for KEY ("KEY=RESULT ms=MS").
sval() { sed -n "s/^$2=\(-*[0-9]*\) ms=.*/\1/p" "$1" | head -n 1; }
sms() { sed -n "s/^$2=-*[0-9]* ms=\([0-9]*\)$/\1/p" "$1" | head -n 1; }
cat >"$work/stall.json" <<'EOF'
{ "defaultAction": "deny", "entries": [ { "names": ["read"], "action": "allow" } ] }
EOF
echo "agent: a container whose params never arrive (FUSE)"
if [ ! -x "$STALL" ]; then
	bad "build $STALL first (make check-agent builds it)"
else
	start_agent
	"$STALL" "$S" stall-a "$work/stall.json" fuse >"$work/stall-a.out" 2>&1 &
	ja=$!
	wait_for "$work/stall-a.out" '^calling\|^skip:' 100
	if grep -q '^skip:' "$work/stall-a.out"; then
		echo "agent: FUSE stall: SKIP: $(sed -n 's/^skip: //p' "$work/stall-a.out")"
		wait $ja
		stop_agent
	else
		sleep 0.3
		"$STALL" "$S" plain-b "$work/stall.json" plain >"$work/plain-b.out" 2>&1
		r=$(sval "$work/plain-b.out" setup)
		ms=$(sms "$work/plain-b.out" setup)
		check "while a container's params never arrive, a new runtime connection's container is served at once (setup=$r in ${ms:-?} ms)" \
			sh -c "[ '${r:--1}' -ge 0 ] && [ '${ms:-9999}' -lt 1000 ]"
		wait $ja
		r=$(sval "$work/stall-a.out" setup)
		ms=$(sms "$work/stall-a.out" setup)
		check "the stalled call gets EFAULT at the 2 s deadline (got $r after ${ms:-?} ms)" \
			sh -c "[ '$r' = -14 ] && [ '${ms:-0}' -ge 1900 ] && [ '${ms:-0}' -lt 4000 ]"
		check "... logged with the reason" \
			grep -q 'container=stall-a pid=[0-9]* ring .*result=EFAULT .*could not be read in time' "$LOG"
		r=$(sval "$work/stall-a.out" setup2)
		check "... and the container's next io_uring_setup is served (setup2=$r)" [ "${r:--1}" -ge 0 ]
		# SIGTERM while a call is stalled
		"$STALL" "$S" stall-c "$work/stall.json" fuse1 >"$work/stall-c.out" 2>&1 &
		jc=$!
		wait_for "$work/stall-c.out" '^calling' 100
		wait_for "$LOG" 'container=stall-c pid=[0-9]* new' 50
		sleep 0.5
		t0=$(date +%s%N)
		stop_agent
		rc=$?
		ms=$((($(date +%s%N) - t0) / 1000000))
		check "SIGTERM while a container's call is stalled: the agent exits 0 at once (rc $rc after $ms ms)" \
			sh -c "[ $rc -eq 0 ] && [ $ms -lt 1000 ]"
		wait $jc
		r=$(sval "$work/stall-c.out" setup)
		check "... and the stalled call gets ENOSYS (got $r)" [ "$r" = -38 ]
	fi
fi

# ---- containers
command -v runc >/dev/null 2>&1 || skip "runc is not installed (Debian package runc)"
[ -x "$P" ] || { echo "agent: build $P first (cc -static)"; exit 1; }
rootfs=$work/rootfs
mkdir -p "$rootfs/bin" "$rootfs/etc" "$rootfs/proc" "$rootfs/dev" "$rootfs/sys" "$rootfs/shared" \
	"$work/shared"
cp "$P" "$rootfs/bin/prog"
printf 'iouring-restrict agent test data\n' >"$rootfs/etc/agent-data"
mkdir "$work/spec" && (cd "$work/spec" && runc spec) ||
	skip "runc spec failed"
cat >"$work/read.json" <<'EOF'
{ "defaultAction": "deny", "entries": [ { "names": ["read"], "action": "allow" } ] }
EOF
cat >"$work/nop.json" <<'EOF'
{ "defaultAction": "deny", "entries": [ { "names": ["nop"], "action": "allow" } ] }
EOF
echo '{ "defaultAction": ' >"$work/broken.json"
cat >"$work/pin.json" <<'EOF'
{ "defaultAction": "deny", "requestOps": ["READ"], "registerOps": ["REGISTER_BUFFERS"] }
EOF

# bundle NAME POLICY|- SECCOMP(yes|no) ARGS...: a bundle in $work/NAME;
# its listenerMetadata is $META (default iour-test; empty: none) and $ANN
# (KEY=VALUE) an annotation more.
bundle() {
	mkdir -p "$work/$1"
	META=${META-iour-test} ANN=${ANN-} python3 - "$work/spec/config.json" "$work/$1/config.json" \
		"$rootfs" "$S" "$work/shared" "$@" <<'EOF'
import json, os, sys
src, dst, rootfs, sock, shared, name, policy, seccomp = sys.argv[1:9]
c = json.load(open(src))
c["process"]["terminal"] = False
c["process"]["args"] = ["/bin/prog"] + sys.argv[9:]
c["root"] = {"path": rootfs, "readonly": True}
c["hostname"] = name
# a locked-memory limit of 64 KiB (the pin checks)
c["process"]["rlimits"] = [r for r in c["process"].get("rlimits", []) if r["type"] != "RLIMIT_MEMLOCK"] + \
    [{"type": "RLIMIT_MEMLOCK", "hard": 65536, "soft": 65536}]
c["mounts"].append({"destination": "/shared", "type": "bind", "source": shared,
                    "options": ["rbind", "ro"]})
if policy != "-":
    c["annotations"] = {"org.iouring-restrict.policy": policy, "example.other": "x"}
if os.environ["ANN"]:
    k, v = os.environ["ANN"].split("=", 1)
    c.setdefault("annotations", {})[k] = v
if seccomp == "yes":
    c["linux"]["seccomp"] = {
        "defaultAction": "SCMP_ACT_ALLOW", "listenerPath": sock,
        "architectures": ["SCMP_ARCH_X86_64"],
        "syscalls": [{"names": ["io_uring_setup"], "action": "SCMP_ACT_NOTIFY"}]}
    if os.environ["META"]:
        c["linux"]["seccomp"]["listenerMetadata"] = os.environ["META"]
json.dump(c, open(dst, "w"), indent=1)
EOF
}
# start RUNTIME NAME: runs the bundle $work/NAME; output in $work/NAME.out.
# RUNTIME crun_hybrid: crun in a mount namespace without the hybrid
# hierarchy's cgroup2 mount (below).
start() {
	names="$names $2"
	if [ "$1" = crun_hybrid ]; then
		(cd "$work/$2" && exec timeout 60 unshare -m --propagation private sh -c \
			'umount -l /sys/fs/cgroup/unified && exec crun run "$0"' "$2" \
			</dev/null >"$work/$2.out" 2>"$work/$2.err")
		return
	fi
	(cd "$work/$2" && exec timeout 60 "$1" run "$2" </dev/null >"$work/$2.out" 2>"$work/$2.err")
}
# val NAME KEY: the value the program printed for KEY.
val() { sed -n "s/^$2=//p" "$work/$1.out" | head -n 1; }

# Can runc run a container here at all (cgroups, namespaces)?
bundle plain - no
if ! start runc plain || ! grep -qx 'setup=0' "$work/plain.out"; then
	skip "runc cannot run a container here: $(head -c 300 "$work/plain.err")"
fi

# restricted RUNTIME NAME: the checks of one container under read.json.
restricted() {
	check "$1 $2: io_uring_setup gives a ring" [ "$(val "$2" setup)" = 0 ]
	check "$1 $2: READ allowed: 33 bytes, data intact" \
		sh -c "[ '$(val "$2" read)' = 33 ] && [ '$(val "$2" read_data)' = ok ]"
	check "$1 $2: NOP forbidden: -EACCES (got $(val "$2" nop))" [ "$(val "$2" nop)" = -13 ]
	r=$(val "$2" restrict)
	check "$1 $2: its own IORING_REGISTER_RESTRICTIONS fails (got $r)" [ "${r:-0}" -lt 0 ]
	r=$(val "$2" enable)
	check "$1 $2: IORING_REGISTER_ENABLE_RINGS fails (got $r)" [ "${r:-0}" -lt 0 ]
	r=$(val "$2" rdis_setup)
	check "$1 $2: a ring asked with R_DISABLED is refused, or cannot take its own set" \
		sh -c "[ -n '$r' ] && { [ '$r' != 0 ] || [ '$(val "$2" rdis_restrict)' -lt 0 ]; }"
	check "$1 $2: the agent logs the ring (container, task, flags, what it registered)" \
		grep -q "container=$2 pid=[0-9]* ring task=[0-9]* entries=8 flags=0x0 result=ok" "$LOG"
}

echo "agent: runc containers ($(runc --version | head -n 1))"
start_agent
bundle one "$work/read.json" yes
start runc one
rc=$?
check "runc one: exit 0 (got $rc)" [ $rc -eq 0 ]
restricted runc one
check "runc one: the agent logs the container gone" grep -q 'container=one pid=[0-9]* gone' "$LOG"
# The agent's logged status and effects are explain's for the ring broker
# (both from tools/cli/core/mechanism.c; doc/security.md 5).  Not explain's
# ring-acquire row: it describes run's peer guard, which the agent cannot
# put on a container (doc/containers.md); the agent logs no such effect.
explained=$("$T" explain "$work/read.json" --mechanism broker)
want="status=$(echo "$explained" | sed -n '1s/.*, mechanism broker: //p') effects=$(echo "$explained" |
	awk 'NR > 2 && $1 != "ring-acquire" { printf "%s%s:%s", (n++ ? "," : ""), $1, $2 } END { if (!n) printf "none" }')"
check "runc one: the agent logs explain --mechanism broker's status and effects ($want)" \
	grep -qF -- "$want" "$LOG"

# two containers at once, with different policies
bundle two-a "$work/read.json" yes wait /shared/go-two
bundle two-b "$work/nop.json" yes wait /shared/go-two
start runc two-a &
ja=$!
start runc two-b &
jb=$!
wait_for "$work/two-a.out" waiting && wait_for "$work/two-b.out" waiting
check "two containers at once: both have their rings" \
	sh -c "[ '$(val two-a setup)' = 0 ] && [ '$(val two-b setup)' = 0 ]"
touch "$work/shared/go-two"
wait $ja
ra=$?
wait $jb
rb=$?
check "two-a (READ only): exit 0, READ 33, NOP -EACCES (got $ra, $(val two-a read), $(val two-a nop))" \
	sh -c "[ $ra -eq 0 ] && [ '$(val two-a read)' = 33 ] && [ '$(val two-a nop)' = -13 ]"
check "two-b (NOP only): exit 0, READ -EACCES, NOP 0 (got $rb, $(val two-b read), $(val two-b nop))" \
	sh -c "[ $rb -eq 0 ] && [ '$(val two-b read)' = -13 ] && [ '$(val two-b nop)' = 0 ]"
check "two-a, two-b: a second ring each, after both started" \
	sh -c "[ '$(val two-a setup2)' = 0 ] && [ '$(val two-b setup2)' = 0 ]"

# ---- audit mode and the denial log (doc/agent.md, "Audit mode and the
# denial log"): one agent with --log-denials; an audit container, an
# enforce container, and a control whose policy allows what it does.
# Lines are attributed by ring (agent_watch.c); logfmt: "container=ID
# pid=INIT audit|denial task=T comm=C request=OP flags=F ...".
stop_agent
cat >"$work/allow.json" <<'EOF2'
{ "defaultAction": "allow" }
EOF2
if ! start_agent --log-denials --report-interval 1; then
	bad "the agent starts with --log-denials"
	stop_agent
elif grep -q 'tracepoints cannot be read' "$LOG"; then
	echo "agent: audit and denial log: SKIP: $(grep -o 'the io_uring tracepoints cannot be read[^"]*' "$LOG" | head -n 1)"
	stop_agent
else
	ANN=org.iouring-restrict.mode=audit bundle aud "$work/read.json" yes
	start runc aud
	ra=$?
	# the container's last lines come when the agent sees it gone
	wait_for "$LOG" 'container=aud pid=[0-9]* gone' 50
	check "audit container (READ-only policy): exit 0, the ring is NOT restricted: NOP 0, READ 33 (got $ra, $(val aud nop), $(val aud read))" \
		sh -c "[ $ra -eq 0 ] && [ '$(val aud nop)' = 0 ] && [ '$(val aud read)' = 33 ]"
	check "audit container: its new line says mode=audit enforced=no" \
		grep -q 'container=aud pid=[0-9]* new .*mode=audit enforced=no' "$LOG"
	check "audit container: the would-be-denied NOP is logged with its container id" \
		wait_for "$LOG" 'container=aud pid=[0-9]* audit task=[0-9]* comm=prog request=NOP flags=none verdict=would_deny count=1 when=' 30
	check "audit container: READ (allowed) is not logged" \
		sh -c "! grep -q 'container=aud pid=[0-9]* audit .*request=READ ' '$LOG'"
	check "audit container: nothing logged for the agent's own worker (it restricts and enables the ring)" \
		sh -c "! grep -q 'container=aud pid=[0-9]* audit .*comm=iour-restrict ' '$LOG'"
	check "audit container: totals at its end" \
		grep -q 'container=aud pid=[0-9]* audit .*request=NOP .*when=total' "$LOG"
	# while the container runs (not only at its end): the first of each
	ANN=org.iouring-restrict.mode=audit bundle audw "$work/read.json" yes wait /shared/go-audw
	start runc audw &
	jw=$!
	wait_for "$work/audw.out" waiting
	check "audit container: the would-be denial is logged while the container runs" \
		wait_for "$LOG" 'container=audw pid=[0-9]* audit task=[0-9]* comm=prog request=NOP .*when=first' 30
	touch "$work/shared/go-audw"
	wait $jw
	bundle den "$work/read.json" yes
	start runc den
	wait_for "$LOG" 'container=den pid=[0-9]* gone' 50
	check "enforce container with --log-denials: NOP -EACCES (got $(val den nop))" [ "$(val den nop)" = -13 ]
	check "... the denied NOP is logged with its container id and EACCES" \
		grep -q 'container=den pid=[0-9]* denial task=[0-9]* comm=prog request=NOP flags=none error=EACCES count=1' "$LOG"
	check "... READ (allowed) is not" \
		sh -c "! grep -q 'container=den pid=[0-9]* denial .*request=READ ' '$LOG'"
	d=$(sed -n 's/.*container=den pid=[0-9]* gone .*denials=\([0-9]*\).*/\1/p' "$LOG")
	check "... and counted on its gone line (denials=$d)" [ "${d:-0}" -ge 1 ]
	ANN=org.iouring-restrict.mode=complain bundle badmode "$work/read.json" yes
	start runc badmode
	check "an unknown mode: EPERM, logged with the reason (got $(val badmode setup))" \
		sh -c "[ '$(val badmode setup)' = -1 ] && grep -q 'container=badmode pid=[0-9]* new .*why=\"the annotation org.iouring-restrict.mode is neither audit nor enforce\"' '$LOG'"
	bundle ctl "$work/allow.json" yes
	start runc ctl
	wait_for "$LOG" 'container=ctl pid=[0-9]* gone' 50
	check "control (a policy allowing all it does): NOP 0, READ 33 (got $(val ctl nop), $(val ctl read))" \
		sh -c "[ '$(val ctl nop)' = 0 ] && [ '$(val ctl read)' = 33 ]"
	check "control: no denial logged, denials=0 on its gone line" \
		sh -c "! grep -q 'container=ctl pid=[0-9]* denial' '$LOG' && grep -q 'container=ctl pid=[0-9]* gone .*denials=0' '$LOG'"
	stop_agent
	check "every event of the containers' rings was attributed (no unattributed count logged)" \
		sh -c "! grep -q ' watch .*unattributed=[1-9]' '$LOG'"
fi
# without root the tracepoints cannot be read: the agent says so (and
# serves as before)
nr=$(mktemp -d /tmp/iour-agent-nr.XXXXXX)
chmod 0777 "$nr"
setpriv --reuid=65534 --regid=65534 --clear-groups "$T" agent --socket "$nr/s" --log "$nr/log" \
	--log-denials 2>/dev/null &
nrpid=$!
wait_for "$nr/log" ' listening socket=' 50
kill -TERM $nrpid 2>/dev/null
wait $nrpid
check "--log-denials as uid 65534: the agent logs that the tracepoints cannot be read" \
	grep -q 'the io_uring tracepoints cannot be read' "$nr/log"
rm -rf "$nr"
start_agent

# no annotation; a policy that does not load; one outside --policy-dir
bundle none - yes
start runc none
check "no annotation: io_uring_setup fails with EPERM (got $(val none setup))" \
	[ "$(val none setup)" = -1 ]
check "no annotation: logged" \
	grep -q 'container=none pid=[0-9]* ring task=[0-9]* entries=8 result=EPERM' "$LOG"
bundle broken "$work/broken.json" yes
start runc broken
check "a policy file that does not load: EPERM (got $(val broken setup))" \
	[ "$(val broken setup)" = -1 ]
check "a policy file that does not load: logged with its line" \
	grep -q "container=broken pid=[0-9]* policy=$work/broken.json error=" "$LOG"

# a container killed while its calls wait for the agent
bundle storm "$work/read.json" yes storm
start runc storm &
js=$!
wait_for "$work/storm.out" storming
sleep 0.5
runc kill storm KILL 2>/dev/null
wait $js
check "a container killed in the middle of its io_uring_setup calls: the agent lives on" \
	kill -0 "$agent_pid"
check "... and logs it gone" grep -q 'container=storm pid=[0-9]* gone' "$LOG"
n=$(grep -c 'container=storm pid=[0-9]* ring ' "$LOG")
served=$(sed -n 's/.*container=storm pid=[0-9]* gone.* rings=\([0-9]*\).*/\1/p' "$LOG")
check "... its ring lines are rate-limited: $n lines for ${served:-?} rings, the rest counted" \
	sh -c "[ '${served:-0}' -gt $n ] && [ $n -lt 60 ] && grep -q 'container=storm .* suppressed=[0-9]' '$LOG'"
bundle after "$work/read.json" yes
start runc after
check "... and serves the next container" sh -c "[ '$(val after nop)' = -13 ]"

stop_agent
start_agent --policy-dir "$work/spec"
bundle outside "$work/read.json" yes
start runc outside
check "--policy-dir: a policy outside it gives EPERM (got $(val outside setup))" \
	[ "$(val outside setup)" = -1 ]
check "--policy-dir: logged" grep -q 'outside --policy-dir' "$LOG"
stop_agent

# ---- policy selection (doc/agent.md): the annotation, listenerMetadata,
# a --config rule, --default-policy, in that order; JSON-lines log;
# SIGUSR1 status; SIGHUP reload.  The runtime's message carries
# listenerMetadata and the annotations (runc: measured, see doc/agent.md).
echo "agent: policy selection, JSON log, status, reload"
t_sel=$(date +%s)
pdir=$work/policies
mkdir -p "$pdir"
cp "$work/read.json" "$work/nop.json" "$pdir/"
ln -s "$work/read.json" "$pdir/link.json"
IMG=io.kubernetes.cri.image-name
conf() { printf '{ "rules": [ { "annotation": "%s", "value": "registry.test/app:*", "policy": "%s" } ] }\n' \
	"$IMG" "$1" >"$work/agent.conf"; }
conf nop.json
LOG0=$LOG
LOG=$work/agent-json.log
# jlog EXPR: evaluates the python EXPR over L, the parsed JSON lines
# (exit 1 if any line is not JSON); prints the result.
jlog() { python3 -c 'import json, sys
L = [json.loads(x) for x in open(sys.argv[1])]
def ev(e, c=None): return [x for x in L if x["event"] == e and (c is None or x.get("container") == c)]
print(eval(sys.argv[2]))' "$LOG" "$1"; }
"$T" agent --socket "$S" --config "$work/agent.conf" >/dev/null 2>&1
check "--config without --policy-dir: exit 2 (got $?)" [ $? -eq 2 ]
"$T" agent --socket "$S" --policy-dir "$pdir" --default-policy "$work/read.json" 2>"$work/err" >/dev/null
check "--default-policy outside --policy-dir: exit 1 (got $?)" [ $? -eq 1 ]
"$T" agent --socket "$S" --log-format xml >/dev/null 2>&1
check "--log-format xml: exit 2 (got $?)" [ $? -eq 2 ]
check "the agent starts with --policy-dir, --config, --default-policy, --log-format json" \
	start_agent --policy-dir "$pdir" --config "$work/agent.conf" --default-policy "$pdir/read.json" \
	--log-format json --control "$work/control.sock"
# annotation (nop) over listenerMetadata (read)
META=read.json bundle sel-ann "$pdir/nop.json" yes
start runc sel-ann
check "annotation first: NOP 0, READ -EACCES (got $(val sel-ann nop), $(val sel-ann read))" \
	sh -c "[ '$(val sel-ann nop)' = 0 ] && [ '$(val sel-ann read)' = -13 ]"
META=nop.json bundle sel-meta - yes
start runc sel-meta
check "listenerMetadata nop.json: NOP 0, READ -EACCES (got $(val sel-meta nop), $(val sel-meta read))" \
	sh -c "[ '$(val sel-meta nop)' = 0 ] && [ '$(val sel-meta read)' = -13 ]"
META="" ANN="$IMG=registry.test/app:1" bundle sel-conf - yes wait /shared/go-sel
start runc sel-conf &
jc=$!
wait_for "$work/sel-conf.out" waiting
check "a --config rule ($IMG): NOP 0, READ -EACCES (got $(val sel-conf nop), $(val sel-conf read))" \
	sh -c "[ '$(val sel-conf nop)' = 0 ] && [ '$(val sel-conf read)' = -13 ]"
META="" ANN="$IMG=registry.test/other:1" bundle sel-def - yes
start runc sel-def
check "no rule matches: --default-policy (read): READ 33, NOP -EACCES (got $(val sel-def read), $(val sel-def nop))" \
	sh -c "[ '$(val sel-def read)' = 33 ] && [ '$(val sel-def nop)' = -13 ]"
check "each container's new line says where its policy came from" \
	[ "$(jlog '[ev("new", n)[0]["source"] for n in ("sel-ann", "sel-meta", "sel-conf", "sel-def")]')" = \
	"['annotation', 'metadata', 'config', 'default']" ]
# path escapes through listenerMetadata: '..', a path, a symlink leading
# out of --policy-dir (its target loads: the positive control is the
# --policy-dir-less load of the same file above)
for m in ../read.json .. "$work/read.json" link.json; do
	META=$m bundle sel-esc - yes
	start runc sel-esc
	check "listenerMetadata '$m': EPERM, not the default policy (got $(val sel-esc setup))" \
		[ "$(val sel-esc setup)" = -1 ]
	runc delete -f sel-esc >/dev/null 2>&1
done
check "... each logged with why" \
	[ "$(jlog 'sum(1 for x in ev("new", "sel-esc") if x["io_uring_setup"] == "EPERM" and x["source"] == "metadata")')" = 4 ]
# status while sel-conf runs
kill -USR1 "$agent_pid"
wait_for "$LOG" '"event":"status","container":"sel-conf"' 30
check "SIGUSR1: a status line for the agent and for the running container (source, counts)" \
	[ "$(jlog '(ev("status")[0]["containers"] >= 1, [(x["source"], x["rings"], x["refused"], x["denials"]) for x in ev("status", "sel-conf")][0])')" = \
	"(True, ('config', 1, 1, None))" ]
# the same status through --control; a process of another uid cannot
# connect (mode 0600)
q=$("$T" agent --query "$work/control.sock")
check "agent --query: the agent's status line and sel-conf's, in JSON (exit $?)" \
	[ "$(printf '%s\n' "$q" | python3 -c 'import json, sys
L = [json.loads(x) for x in sys.stdin]
print([x["event"] for x in L][0], [(x["source"], x["rings"]) for x in L if x.get("container") == "sel-conf"])')" = \
	"status [('config', 1)]" ]
check "agent --query: the control socket is the agent's uid's only (mode $(stat -c %a "$work/control.sock"))" \
	[ "$(stat -c %a "$work/control.sock")" = 600 ]
if command -v setpriv >/dev/null 2>&1; then
	# the directory lets uid 65534 reach the socket: only its mode refuses
	chmod 711 "$work"
	setpriv --reuid 65534 --regid 65534 --clear-groups "$T" agent --query "$work/control.sock" \
		>"$work/q65534" 2>&1
	r=$?
	chmod 700 "$work"
	check "agent --query as uid 65534: refused, nothing read (exit $r: $(head -c 120 "$work/q65534"))" \
		sh -c "[ $r = 1 ] && ! grep -q sel-conf '$work/q65534'"
fi
"$T" agent --query "$work/no-such.sock" >/dev/null 2>&1
check "agent --query with no agent there: exit 1 (got $?)" [ $? -eq 1 ]
# reload: the rule now names read.json; sel-conf keeps nop
conf read.json
kill -HUP "$agent_pid"
wait_for "$LOG" '"event":"reload","result":"ok"' 30
META="" ANN="$IMG=registry.test/app:2" bundle sel-new - yes
start runc sel-new
check "SIGHUP: a new container gets the new rule's policy: READ 33, NOP -EACCES (got $(val sel-new read), $(val sel-new nop))" \
	sh -c "[ '$(val sel-new read)' = 33 ] && [ '$(val sel-new nop)' = -13 ]"
touch "$work/shared/go-sel"
wait $jc
check "... a running container keeps its plan: its first ring still refuses READ, its next ring is served under nop.json (read2 $(val sel-conf read2), setup2 $(val sel-conf setup2))" \
	sh -c "[ '$(val sel-conf read2)' = -13 ] && [ '$(val sel-conf setup2)' = 0 ] &&
	[ \"\$(python3 -c 'import json,sys; print([x[\"policy\"] for x in map(json.loads, open(sys.argv[1])) if x[\"event\"] == \"ring\" and x.get(\"container\") == \"sel-conf\"][-1])' '$LOG')\" = '$pdir/nop.json' ]"
# a bad configuration (a rule escaping --policy-dir) is refused whole
conf ../nop.json
kill -HUP "$agent_pid"
wait_for "$LOG" '"event":"reload","result":"error"' 30
check "SIGHUP with a rule naming ../nop.json: refused and logged, the previous kept" \
	jlog 'ev("reload")[-1]["error"]' | grep -q 'not a plain file name'
META="" ANN="$IMG=registry.test/app:3" bundle sel-kept - yes
start runc sel-kept
check "... a new container still gets the previous rule's policy: READ 33 (got $(val sel-kept read))" \
	[ "$(val sel-kept read)" = 33 ]
# a container id with a quote, a backslash, a control byte and non-ASCII
client decoy "$(printf 'odd"\\\001\303\277id')"
check "a container id with a quote, a backslash, a control byte and UTF-8 is logged as it came (bytes as \\u00XX)" \
	[ "$(jlog '[x["container"] for x in ev("new") if x["container"].startswith("odd")][0].encode("latin-1") == b"odd\"\\\x01\xc3\xbfid"')" = True ]
stop_agent
check "every line of the JSON log parses" jlog 'len(L)' >/dev/null
# agent_prog asks 2 rings: a plain one (served) and one with R_DISABLED
# (refused by the broker); without a policy it stops after the first EPERM
check "gone lines carry the counters: sel-def 1 ring served, 1 refused; sel-esc 0 and 1" \
	[ "$(jlog '[(x["rings"], x["refused"], x["quota"], x["deadline"], x["busy"], x["accounting"], x["denials"]) for x in ev("gone", "sel-def") + ev("gone", "sel-esc")[:1]]')" = \
	"[(1, 1, 0, 0, 0, 0, None), (0, 1, 0, 0, 0, 0, None)]" ]
cat "$LOG" >>"$LOG0"
LOG=$LOG0
echo "agent: policy selection, JSON log, status, reload: $(($(date +%s) - t_sel)) s"

# the ring quota: rings alive, not calls
start_agent --max-rings 2
bundle quota "$work/read.json" yes rings 8
start runc quota
check "--max-rings 2: a container holds 2 rings, the third gets ENOMEM (rings=$(val quota rings) last=$(val quota last))" \
	sh -c "[ '$(val quota rings)' = 2 ] && [ '$(val quota last)' = -12 ]"
check "... once it closed them it gets 2 again (rings2=$(val quota rings2) last2=$(val quota last2))" \
	sh -c "[ '$(val quota rings2)' = 2 ] && [ '$(val quota last2)' = -12 ]"
stop_agent
check "... logged, and counted on the gone line" sh -c \
	"grep -q 'container=quota pid=[0-9]* ring .*result=ENOMEM .*ring quota: 2 rings alive (max_rings 2)' '$LOG' &&
	 grep -q 'container=quota pid=[0-9]* gone .* quota=2' '$LOG'"
start_agent
bundle noquota "$work/read.json" yes rings 8
start runc noquota
check "... control: with the default quota the same container holds 8 (rings=$(val noquota rings))" \
	[ "$(val noquota rings)" = 8 ]
stop_agent

# the agent killed mid-run
start_agent
bundle killed "$work/read.json" yes wait /shared/go-killed
start runc killed &
jk=$!
wait_for "$work/killed.out" waiting
kill -KILL "$agent_pid"
wait "$agent_pid" 2>/dev/null
agent_pid=""
touch "$work/shared/go-killed"
wait $jk
rk=$?
check "agent killed: the container's next io_uring_setup fails with ENOSYS (got $(val killed setup2))" \
	[ "$(val killed setup2)" = -38 ]
check "agent killed: its ring keeps working (READ $(val killed read2))" \
	sh -c "[ '$(val killed read2)' = 33 ] && [ '$(val killed read2_data)' = ok ]"
check "agent killed: the container exits normally (runc $rk)" \
	sh -c "[ $rk -eq 0 ] && grep -qx done '$work/killed.out'"
bundle orphan "$work/read.json" yes
start runc orphan
ro=$?
check "no agent listening: runc refuses to create a container that names it (runc $ro)" \
	sh -c "[ $ro -ne 0 ] && ! grep -q setup= '$work/orphan.out'"
check "a new agent replaces the stale socket" start_agent
bundle reborn "$work/read.json" yes
start runc reborn
check "... and serves the next container" sh -c "[ '$(val reborn nop)' = -13 ]"

# the systemd unit's capabilities (examples/systemd): the agent serves
# containers with exactly its bounding set
unit=$(dirname "$0")/../../examples/systemd/iour-restrict-agent.service
caps=$(sed -n 's/^CapabilityBoundingSet=//p' "$unit" | tr 'A-Z' 'a-z' | sed 's/cap_/+/g; s/ /,/g')
stop_agent
if ! command -v setpriv >/dev/null 2>&1; then
	echo "agent: unit: SKIP: no setpriv (Debian package util-linux)"
elif [ -z "$caps" ]; then
	bad "the unit has no CapabilityBoundingSet"
else
	AGENT_PRE="setpriv --bounding-set -all,$caps --no-new-privs"
	check "the agent starts with the unit's capabilities only ($caps)" start_agent
	AGENT_PRE=${IOUR_AGENT_WRAP:-}
	bundle unitcaps "$work/read.json" yes
	start runc unitcaps
	check "... and serves a container: READ 33, NOP -EACCES" \
		sh -c "[ '$(val unitcaps read)' = 33 ] && [ '$(val unitcaps nop)' = -13 ]"
	check "... and has exactly the unit's capabilities, effective and bounding" python3 -c '
import sys
st = dict(l.split(":\t", 1) for l in open("/proc/%s/status" % sys.argv[1]).read().splitlines() if ":\t" in l)
bnd, eff = int(st["CapBnd"], 16), int(st["CapEff"], 16)
assert eff == bnd and bin(bnd).count("1") == len(sys.argv[2].split(",")), (st["CapBnd"], st["CapEff"])
' "$agent_pid" "$caps"
		bundle pin-unit "$work/pin.json" yes pin 16
	start runc pin-unit
	check "... and a container's registered buffers count against its locked-memory limit (16 MiB over 64 KiB: $(val pin-unit pin))" \
		[ "$(val pin-unit pin)" = -12 ]
	stop_agent
fi
start_agent
# with CAP_IPC_LOCK too: the worker that creates a container's ring drops
# every capability the container lacks (doc/security.md 3a, "Who pays"),
# so the agent's CAP_IPC_LOCK no longer lifts the container's limit
bundle pin-root "$work/pin.json" yes pin 16
start runc pin-root
check "an agent with CAP_IPC_LOCK: a container's registered buffers still count against its locked-memory limit (16 MiB over 64 KiB: $(val pin-root pin))" \
	[ "$(val pin-root pin)" = -12 ]
check "... and the agent logs where the ring was charged" \
	grep -q "container=pin-root pid=[0-9]* ring .*accounting: charged to the caller's cgroup" "$LOG"

# crun, where it can run a container here.  crun 1.8 refuses a hybrid
# cgroup hierarchy ("cgroups in hybrid mode not supported"): there it runs
# in a private mount namespace without the cgroup2 mount
# /sys/fs/cgroup/unified, as doc/containers.md ("crun") tells operators.
CRUN=crun
if command -v crun >/dev/null 2>&1 && bundle cprobe - no && ! start crun cprobe &&
	grep -q 'cgroups in hybrid mode not supported' "$work/cprobe.err" &&
	command -v unshare >/dev/null 2>&1 && mountpoint -q /sys/fs/cgroup/unified; then
	echo "agent: crun: hybrid cgroups: crun runs in a mount namespace without /sys/fs/cgroup/unified"
	CRUN=crun_hybrid
fi
if ! command -v crun >/dev/null 2>&1; then
	echo "agent: crun: SKIP: not installed (Debian package crun)"
elif ! { bundle cplain - no && start $CRUN cplain && grep -qx 'setup=0' "$work/cplain.out"; }; then
	echo "agent: crun: SKIP: crun cannot run a container here: $(head -c 300 "$work/cplain.err")"
else
	echo "agent: crun containers ($(crun --version | head -n 1))"
	bundle cone "$work/read.json" yes
	start $CRUN cone
	restricted crun cone
	bundle cnone - yes
	start $CRUN cnone
	check "crun: no annotation: EPERM (got $(val cnone setup))" [ "$(val cnone setup)" = -1 ]
	bundle ckilled "$work/read.json" yes wait /shared/go-ckilled
	start $CRUN ckilled &
	jk=$!
	wait_for "$work/ckilled.out" waiting
	kill -KILL "$agent_pid"
	wait "$agent_pid" 2>/dev/null
	agent_pid=""
	touch "$work/shared/go-ckilled"
	wait $jk
	rk=$?
	check "crun: agent killed: the next io_uring_setup fails with ENOSYS, the ring keeps working (got $(val ckilled setup2), READ $(val ckilled read2), crun $rk)" \
		sh -c "[ '$(val ckilled setup2)' = -38 ] && [ '$(val ckilled read2)' = 33 ] && [ $rk -eq 0 ]"
	bundle corphan "$work/read.json" yes
	start $CRUN corphan
	ro=$?
	check "crun: no agent listening: crun refuses the container (crun $ro: $(grep -o 'open seccomp receiver[^:]*: connect socket[^:]*' "$work/corphan.err"))" \
		sh -c "[ $ro -ne 0 ] && grep -q 'open seccomp receiver' '$work/corphan.err' && ! grep -q setup= '$work/corphan.out'"
	start_agent
fi
stop_agent

echo "agent: $pass passed, $failed failed"
if [ $failed -gt 0 ]; then
	echo "agent: the agent's log:"
	cat "$LOG" "$work/agent.err"
	exit 1
fi
