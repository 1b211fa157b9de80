#!/bin/sh
# SPDX-License-Identifier: MIT
# make check-engines: `iour-restrict agent` behind the container engines
# people run, each started and stopped by this script in a temporary
# directory (its own root, state and socket; no network: Docker with
# --iptables=false --bridge=none), running an image imported from a tar
# built here (tests/engines/mkimage.py: tests/agent/agent_prog.c, static;
# nothing is downloaded), with the profile `iour-restrict seccomp-profile`
# makes of the engine's default:
# - containerd (ctr run --seccomp-profile, in the OCI format containerd's
#   CRI plugin reads a Kubernetes localhost profile in);
# - Docker 20.10 through `iour-restrict runc-shim` (dockerd drops
#   listenerPath: without the shim runc refuses the container);
# - podman, with runc and with crun.
# For each: a container with a policy gets a restricted ring (READ
# completes, NOP -EACCES); one without a policy gets EPERM; ptrace,
# pidfd_getfd and process_vm_* are denied by the profile (and ptrace is
# allowed by the engine's own default: the control); the agent killed
# while a container runs: its next io_uring_setup gets ENOSYS, its ring
# keeps working; with no agent listening the engine refuses to create the
# container, with the message doc/containers.md quotes.  Also, once: a
# denied request ends the kernel's submit batch unless
# IORING_SETUP_SUBMIT_ALL, and a profile that sends io_uring_setup to the
# agent but leaves io_uring_enter to a denying default (podman's trap)
# gives rings whose every submit fails.
# Each engine's cost is printed in seconds.  An engine that is not
# installed, or cannot run a container here, is skipped, saying why.
#
# Usage: tests/engines/run.sh [BUILD_DIR]   (needs root)
set -u
O=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
T=$(cd "$(dirname "$O/tools/iour-restrict")" && pwd)/iour-restrict
P=$O/tests/agent_prog
PROFILES=$here/../cli/seccomp
pass=0
failed=0
ok() { pass=$((pass + 1)); echo "  ok   $*"; }
bad() { failed=$((failed + 1)); echo "  FAIL $*"; }
check() { d=$1; shift; if "$@"; then ok "$d"; else bad "$d"; fi; }
note() { echo "engines: $*"; }
# skip WHAT REASON: printed, and recorded for make check's summary
skip() { note "$1: SKIP: $2"; "$here/../../scripts/skip-note.sh" "engines: $1: $2"; }

[ -x "$T" ] || { note "build $T first"; exit 1; }
[ -x "$P" ] || { note "build $P first"; exit 1; }
[ "$(id -u)" -eq 0 ] || { skip all "not root (the engines and the agent need root)"; exit 0; }
command -v python3 >/dev/null 2>&1 || { skip all "no python3 (builds the image)"; exit 0; }

work=$(mktemp -d /tmp/iour-engines.XXXXXX)
agent_pid=""
daemon_pid=""
cleanup_cmds=""
cleanup() {
	eval "$cleanup_cmds"
	stop_daemon
	[ -n "$agent_pid" ] && kill "$agent_pid" 2>/dev/null && wait "$agent_pid" 2>/dev/null
	if [ -n "${IOUR_ENGINES_KEEP:-}" ]; then
		note "kept $work"
	else
		# a daemon's leftover mounts under $work, if any
		grep -o " $work/[^ ]*" /proc/self/mounts | sort -r | while read -r m; do
			umount -l "$m" 2>/dev/null
		done
		rm -rf "$work"
	fi
}
trap cleanup EXIT
trap 'exit 1' INT TERM
S=$work/agent.sock
LOG=$work/agent.log
POL=$work/policies
mkdir -p "$POL" "$work/shared"
cat >"$POL/read.json" <<'EOF'
{ "defaultAction": "deny", "entries": [ { "names": ["read"], "action": "allow" } ] }
EOF

listening() { n=$(grep -c ' listening socket=' "$LOG" 2>/dev/null); echo "${n:-0}"; }
start_agent() {
	n0=$(listening)
	"$T" agent --socket "$S" --policy-dir "$POL" --log "$LOG" 2>>"$work/agent.err" &
	agent_pid=$!
	i=0
	while [ "$(listening)" -le "$n0" ]; do
		kill -0 "$agent_pid" 2>/dev/null && [ $i -lt 100 ] || return 1
		sleep 0.05
		i=$((i + 1))
	done
}
kill_agent() {
	kill -KILL "$agent_pid" 2>/dev/null
	wait "$agent_pid" 2>/dev/null
	agent_pid=""
}
stop_daemon() {
	[ -n "$daemon_pid" ] || return 0
	kill -TERM "$daemon_pid" 2>/dev/null
	i=0
	while kill -0 "$daemon_pid" 2>/dev/null && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	kill -KILL "$daemon_pid" 2>/dev/null
	daemon_pid=""
}
wait_for() {
	i=0
	while ! grep -q -- "$2" "$1" 2>/dev/null; do
		[ $i -ge "${3:-300}" ] && return 1
		sleep 0.1
		i=$((i + 1))
	done
}
# val NAME KEY: what the program in container NAME printed for KEY
val() { sed -n "s/^$2=//p" "$work/$1.out" | head -n 1; }
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

# A command prefix that runs its command in a private mount namespace
# without the hybrid hierarchy's cgroup2 mount (crun 1.8 refuses hybrid).
hybrid_ns() { unshare -m --propagation private sh -c 'umount -l /sys/fs/cgroup/unified && exec "$@"' sh "$@"; }

IMG=localhost/iour-agent-prog:test
python3 "$here/mkimage.py" "$P" "$IMG" "$work/image.tar" || { bad "mkimage.py"; exit 1; }
start_agent || { bad "the agent starts"; exit 1; }

# RUN is set per engine: RUN NAME POLICY|- ARGS... runs a container of the
# image with the engine's profile (and policy), output in $work/NAME.out,
# stderr in $work/NAME.err; returns the engine's exit status.

# engine_checks ENGINE: the checks every engine gets
engine_checks() {
	e=$1
	RUN "$e-one" read.json
	rc=$?
	check "$e: a container with a policy: exit 0 (got $rc), io_uring_setup gives a ring" \
		sh -c "[ $rc -eq 0 ] && [ '$(val "$e-one" setup)' = 0 ]"
	check "$e: READ allowed: 33 bytes, data intact (got $(val "$e-one" read))" \
		sh -c "[ '$(val "$e-one" read)' = 33 ] && [ '$(val "$e-one" read_data)' = ok ]"
	check "$e: NOP forbidden: -EACCES (got $(val "$e-one" nop))" [ "$(val "$e-one" nop)" = -13 ]
	check "$e: the program cannot register restrictions of its own (got $(val "$e-one" restrict))" \
		[ "$(val "$e-one" restrict)" -lt 0 ]
	n0=$(wc -l <"$LOG")
	RUN "$e-none" -
	check "$e: a container without a policy: EPERM (got $(val "$e-none" setup))" \
		[ "$(val "$e-none" setup)" = -1 ]
	check "$e: ... logged" sh -c "tail -n +$((n0 + 1)) '$LOG' |
		grep -q 'pid=[0-9]* ring task=[0-9]* entries=8 result=EPERM why=\"no policy: no org.iouring-restrict.policy annotation'"
	RUN "$e-peer" - peer
	check "$e: ptrace, pidfd_getfd, process_vm_readv/writev denied by the profile ($(tr '\n' ' ' <"$work/$e-peer.out"))" \
		sh -c "for k in ptrace pidfd_getfd vm_readv vm_writev; do
			v=\$(sed -n \"s/^\$k=//p\" '$work/$e-peer.out'); [ \"\$v\" = -1 ] || [ \"\$v\" = -38 ] || exit 1; done"
	# the agent killed while a container runs
	rm -f "$work/shared/go"
	RUN "$e-killed" read.json wait /shared/go &
	jk=$!
	wait_for "$work/$e-killed.out" waiting
	kill_agent
	touch "$work/shared/go"
	wait $jk
	rk=$?
	check "$e: agent killed: the next io_uring_setup fails with ENOSYS (got $(val "$e-killed" setup2))" \
		[ "$(val "$e-killed" setup2)" = -38 ]
	check "$e: agent killed: the ring keeps working, the container exits 0 (READ $(val "$e-killed" read2), exit $rk)" \
		sh -c "[ '$(val "$e-killed" read2)' = 33 ] && [ $rk -eq 0 ]"
	RUN "$e-orphan" read.json
	ro=$?
	msg=$(grep -o 'failed to connect with seccomp agent[^:]*\|open seccomp receiver[^:]*' \
		"$work/$e-orphan.err" | head -n 1)
	check "$e: no agent: the engine refuses the container (exit $ro: ${msg:-$(head -c 200 "$work/$e-orphan.err")})" \
		sh -c "[ $ro -ne 0 ] && [ -n '$msg' ] && ! grep -q setup= '$work/$e-orphan.out'"
	start_agent || bad "$e: the agent restarts"
}

# ---- containerd (ctr)
containerd_engine() {
	command -v containerd >/dev/null 2>&1 && command -v ctr >/dev/null 2>&1 ||
		{ skip containerd "not installed (Debian package containerd; scripts/deps.sh containerd)"; return; }
	t0=$(now)
	d=$work/containerd
	mkdir -p "$d"
	printf 'version = 2\ndisabled_plugins = ["io.containerd.grpc.v1.cri"]\n' >"$d/config.toml"
	containerd --config "$d/config.toml" --root "$d/root" --state "$d/state" \
		--address "$d/c.sock" >"$d/log" 2>&1 &
	daemon_pid=$!
	CTR="ctr --address $d/c.sock"
	i=0
	until $CTR version >/dev/null 2>&1; do
		[ $i -lt 100 ] && kill -0 $daemon_pid 2>/dev/null ||
			{ skip containerd "it does not start: $(tail -n 2 "$d/log")"; stop_daemon; return; }
		sleep 0.1
		i=$((i + 1))
	done
	$CTR images import "$work/image.tar" >/dev/null 2>"$d/import.err" ||
		{ bad "containerd: ctr images import: $(cat "$d/import.err")"; stop_daemon; return; }
	"$T" seccomp-profile --engine containerd --input "$PROFILES/containerd-1.6.20.json" \
		--listener-path "$S" -o "$work/containerd.json" 2>/dev/null
	PROFILE=$work/containerd.json
	RUN() {
		n=$1
		p=$2
		shift 2
		if [ "$p" = - ]; then
			set -- --rm --seccomp --seccomp-profile "$PROFILE" \
				--mount "type=bind,src=$work/shared,dst=/shared,options=rbind:ro" \
				"$IMG" "$n" /bin/prog "$@"
		else
			set -- --rm --seccomp --seccomp-profile "$PROFILE" \
				--mount "type=bind,src=$work/shared,dst=/shared,options=rbind:ro" \
				--annotation "org.iouring-restrict.policy=$POL/$p" "$IMG" "$n" /bin/prog "$@"
		fi
		timeout 60 $CTR run "$@" </dev/null >"$work/$n.out" 2>"$work/$n.err"
	}
	RUN cplain - || true
	if ! grep -q '^setup=' "$work/cplain.out"; then
		skip containerd "cannot run a container here: $(head -c 300 "$work/cplain.err")"
		stop_daemon
		return
	fi
	note "containerd ($(containerd --version | cut -d' ' -f3), runc $(runc --version | sed -n 's/^runc version //p'))"
	engine_checks containerd
	# the engine's own default: io_uring and ptrace allowed (the control)
	timeout 60 $CTR run --rm --seccomp "$IMG" cdefault /bin/prog peer </dev/null >"$work/cdefault.out" 2>&1
	check "containerd's default profile allows ptrace (the control, -ESRCH: $(tr '\n' ' ' <"$work/cdefault.out"))" \
		[ "$(val cdefault ptrace)" = -3 ]
	timeout 60 $CTR run --rm --seccomp "$IMG" cdefault2 /bin/prog </dev/null >"$work/cdefault2.out" 2>&1
	check "containerd's default profile allows an unrestricted ring (NOP $(val cdefault2 nop))" \
		sh -c "[ '$(val cdefault2 setup)' = 0 ] && [ '$(val cdefault2 nop)' = 0 ]"
	# a denied request ends the submit batch without SUBMIT_ALL
	RUN cbatch read.json batch
	check "a denied SQE ends the submit batch: READ, NOP, READ submits 2 ($(val cbatch batch): $(val cbatch cqes))" \
		sh -c "[ '$(val cbatch batch)' = 2 ] && ! grep -q '^cqes=.*2:' '$work/cbatch.out'"
	check "... with IORING_SETUP_SUBMIT_ALL all 3 ($(val cbatch batch_all): $(val cbatch cqes_all))" \
		sh -c "[ '$(val cbatch batch_all)' = 3 ] && grep -q '^cqes_all=.*2:33' '$work/cbatch.out'"
	# podman's trap: io_uring_setup to the agent, io_uring_enter left to a
	# denying default
	python3 -c '
import json, sys
p = json.load(open(sys.argv[1]))
p["syscalls"] = [e for e in p["syscalls"] if "io_uring_enter" not in e["names"]]
json.dump(p, open(sys.argv[2], "w"))' "$work/containerd.json" "$work/trap.json"
	PROFILE=$work/trap.json
	RUN ctrap read.json
	PROFILE=$work/containerd.json
	check "a profile that leaves io_uring_enter denied: a ring, and every submit fails (setup $(val ctrap setup), READ $(val ctrap read))" \
		sh -c "[ '$(val ctrap setup)' = 0 ] && [ '$(val ctrap read)' -le -1000 ]"
	stop_daemon
	note "containerd: $(secs "$t0") s"
}

# ---- Docker, through runc-shim
docker_engine() {
	command -v dockerd >/dev/null 2>&1 ||
		{ skip docker "not installed (Debian package docker.io; scripts/deps.sh docker.io)"; return; }
	DOCKER=$(command -v docker)
	[ -x /usr/bin/docker ] && DOCKER=/usr/bin/docker
	t0=$(now)
	d=$work/docker
	mkdir -p "$d"
	cat >"$d/daemon.json" <<EOF
{ "runtimes": { "iour": { "path": "$T",
  "runtimeArgs": ["runc-shim", "--socket", "$S", "--policy-dir", "$POL", "--"] } } }
EOF
	dockerd --config-file "$d/daemon.json" --data-root "$d/data" --exec-root "$d/exec" \
		--pidfile "$d/dockerd.pid" -H "unix://$d/docker.sock" --iptables=false \
		--ip6tables=false --bridge=none --storage-driver=vfs >"$d/log" 2>&1 &
	daemon_pid=$!
	DK="$DOCKER -H unix://$d/docker.sock"
	i=0
	until $DK version >/dev/null 2>&1; do
		[ $i -lt 150 ] && kill -0 $daemon_pid 2>/dev/null ||
			{ skip docker "dockerd does not start: $(tail -n 2 "$d/log")"; stop_daemon; return; }
		sleep 0.1
		i=$((i + 1))
	done
	$DK load -i "$work/image.tar" >/dev/null 2>"$d/load.err" ||
		{ bad "docker: docker load: $(cat "$d/load.err")"; stop_daemon; return; }
	"$T" seccomp-profile --engine docker --input "$PROFILES/docker-20.10.24.json" \
		--listener-path "$S" -o "$work/docker.json" 2>/dev/null
	RUNTIME=iour
	RUN() {
		n=$1
		p=$2
		shift 2
		if [ "$p" = - ]; then
			set -- "$IMG" /bin/prog "$@"
		else
			set -- -e "IOUR_RESTRICT_POLICY=$p" "$IMG" /bin/prog "$@"
		fi
		timeout 60 $DK run --rm --network none --runtime "$RUNTIME" \
			--security-opt "seccomp=$work/docker.json" -v "$work/shared:/shared:ro" \
			"$@" </dev/null >"$work/$n.out" 2>"$work/$n.err"
	}
	RUNTIME=runc
	RUN dk-runc read.json
	rc=$?
	if grep -q 'listenerPath is not set' "$work/dk-runc.err"; then
		note "docker ($(dockerd --version | cut -d' ' -f3 | tr -d ,)): dockerd drops listenerPath"
		check "docker without the shim: runc refuses the container (exit $rc, \"listenerPath is not set\")" \
			[ $rc -ne 0 ]
	elif [ "$(val dk-runc nop)" = -13 ]; then
		note "docker ($(dockerd --version)): keeps listenerPath: the shim is not needed"
	else
		bad "docker without the shim: neither refused nor served: $(head -c 300 "$work/dk-runc.err")"
	fi
	RUNTIME=iour
	RUN dkplain -
	if ! grep -q '^setup=' "$work/dkplain.out"; then
		skip docker "cannot run a container here: $(head -c 300 "$work/dkplain.err")"
		stop_daemon
		return
	fi
	engine_checks docker
	RUN dk-bad ../read.json
	rc=$?
	check "docker: IOUR_RESTRICT_POLICY=../read.json: not created (exit $rc), the shim's reason shown" \
		sh -c "[ $rc -ne 0 ] && grep -q 'not a file name in' '$work/dk-bad.err' && ! grep -q setup= '$work/dk-bad.out'"
	timeout 60 $DK run --rm --network none "$IMG" /bin/prog peer </dev/null >"$work/dkdefault.out" 2>&1
	check "Docker's default profile allows ptrace (the control, -ESRCH: $(tr '\n' ' ' <"$work/dkdefault.out"))" \
		[ "$(val dkdefault ptrace)" = -3 ]
	timeout 60 $DK run --rm --network none "$IMG" /bin/prog </dev/null >"$work/dkdefault2.out" 2>&1
	check "Docker's default profile allows an unrestricted ring (NOP $(val dkdefault2 nop))" \
		sh -c "[ '$(val dkdefault2 setup)' = 0 ] && [ '$(val dkdefault2 nop)' = 0 ]"
	stop_daemon
	note "docker: $(secs "$t0") s"
}

# ---- podman, with runc and crun
podman_engine() {
	command -v podman >/dev/null 2>&1 ||
		{ skip podman "not installed (Debian package podman; scripts/deps.sh podman)"; return; }
	t0=$(now)
	d=$work/podman
	mkdir -p "$d"
	PM="podman --root $d/root --runroot $d/run --storage-driver vfs --cgroup-manager cgroupfs --events-backend none"
	# podman raises RLIMIT_NOFILE and RLIMIT_NPROC for the container (to
	# 1048576 and the like); where the engine lacks CAP_SYS_RESOURCE (a
	# machine that is itself a container) the runtimes then fail with
	# EPERM.  Give limits at or below the machine's own.
	lim() { awk -v k="$1" -v m="$2" 'index($0, k) == 1 { v = $(NF - 1); print (v == "unlimited" || v + 0 > m) ? m : v }' /proc/self/limits; }
	nofile=$(lim "Max open files" 1024)
	nproc=$(lim "Max processes" 4096)
	PM_ULIMIT="--ulimit nofile=$nofile:$nofile --ulimit nproc=$nproc:$nproc"
	$PM load -i "$work/image.tar" >/dev/null 2>"$d/load.err" ||
		{ bad "podman: podman load: $(cat "$d/load.err")"; return; }
	"$T" seccomp-profile --engine podman --input "$PROFILES/podman-4.3.1.json" \
		--listener-path "$S" -o "$work/podman.json" 2>/dev/null
	RUN() {
		n=$1
		p=$2
		shift 2
		if [ "$p" = - ]; then
			set -- "$IMG" /bin/prog "$@"
		else
			set -- --annotation "org.iouring-restrict.policy=$POL/$p" "$IMG" /bin/prog "$@"
		fi
		$PM_PRE timeout 60 $PM run --rm --network none --runtime "$PRT" $PM_ULIMIT \
			--security-opt "seccomp=$work/podman.json" -v "$work/shared:/shared:ro" \
			"$@" </dev/null >"$work/$n.out" 2>"$work/$n.err"
	}
	ran=""
	for PRT in runc crun; do
		command -v $PRT >/dev/null 2>&1 || { skip "podman $PRT" "not installed (Debian package $PRT)"; continue; }
		PM_PRE=""
		RUN "pm-$PRT-plain" -
		if grep -q 'cgroups in hybrid mode not supported' "$work/pm-$PRT-plain.err"; then
			# crun 1.8 refuses a hybrid cgroup hierarchy (v1 controllers
			# plus the cgroup2 mount /sys/fs/cgroup/unified): run podman
			# in a private mount namespace without that mount, as an
			# operator of such a host would (doc/containers.md, "crun")
			PM_PRE=hybrid_ns
			note "podman $PRT: hybrid cgroups: podman runs in a mount namespace without /sys/fs/cgroup/unified"
			RUN "pm-$PRT-plain" -
		fi
		if ! grep -q '^setup=' "$work/pm-$PRT-plain.out"; then
			skip "podman $PRT" "cannot run a container here: $(head -c 300 "$work/pm-$PRT-plain.err")"
			continue
		fi
		note "podman ($(podman --version | cut -d' ' -f3)) with $PRT ($($PRT --version | head -n 1))"
		engine_checks "podman-$PRT"
		ran=$PRT
	done
	[ -n "$ran" ] || { $PM rm -af >/dev/null 2>&1; $PM rmi -af >/dev/null 2>&1; return; }
	timeout 60 $PM run --rm --network none --runtime runc $PM_ULIMIT "$IMG" /bin/prog </dev/null >"$work/pmdefault.out" 2>&1
	check "podman's default profile has no io_uring rule: ENOSYS (got $(val pmdefault setup))" \
		[ "$(val pmdefault setup)" = -38 ]
	timeout 60 $PM run --rm --network none --runtime runc $PM_ULIMIT "$IMG" /bin/prog peer </dev/null >"$work/pmdefault2.out" 2>&1
	check "podman's default profile allows ptrace and process_vm_readv (the control: $(val pmdefault2 ptrace), $(val pmdefault2 vm_readv))" \
		sh -c "[ '$(val pmdefault2 ptrace)' = -3 ] && [ '$(val pmdefault2 vm_readv)' = 8 ]"
	$PM rm -af >/dev/null 2>&1
	$PM rmi -af >/dev/null 2>&1
	note "podman: $(secs "$t0") s"
}

for e in ${IOUR_ENGINES:-containerd docker podman}; do
	"${e}_engine"
done

echo "engines: $pass passed, $failed failed"
if [ $failed -gt 0 ]; then
	echo "engines: the agent's log:"
	cat "$LOG" "$work/agent.err"
	exit 1
fi
