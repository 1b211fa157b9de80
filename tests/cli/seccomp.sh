#!/bin/sh
# SPDX-License-Identifier: MIT
# `iour-restrict seccomp-profile` (doc/cli.md) on the default profiles of
# Docker 20.10.24, podman 4.3.1 (containers-common 0.50.1) and containerd
# 1.6.20 (tests/cli/seccomp/, README there says where each comes from):
# - the output is examples/seccomp/ENGINE.json byte for byte, and the
#   changes printed are tests/cli/seccomp/*.changes (golden files:
#   `make seccomp-golden` rewrites them; review the diff);
# - independently of the golden files (python3): io_uring_setup is named
#   by one rule only, SCMP_ACT_NOTIFY; io_uring_enter and
#   io_uring_register by one rule only, SCMP_ACT_ALLOW; no rule allows
#   ptrace, pidfd_getfd or process_vm_*; with those names taken out, every
#   other rule and key is the input's; listenerPath is set;
# - run again on its own output, the command changes nothing more;
# - refusals: not JSON, Docker's format for containerd, NOTIFY for another
#   call, no or a relative --listener-path (nothing written);
# - --keep-peer-calls warns, and an allowing default gets a deny rule.
#
#   tests/cli/seccomp.sh BUILD_DIR
set -u
O=${1:-build}
T=$O/tools/iour-restrict
D=$(dirname "$0")/seccomp
E=$(dirname "$0")/../../examples/seccomp
L=/run/iour-restrict/agent.sock
pass=0
failed=0
ok() { pass=$((pass + 1)); }
bad() { failed=$((failed + 1)); echo "  FAIL $*"; }
check() { d=$1; shift; if "$@"; then ok; else bad "$d"; fi; }
work=$(mktemp -d /tmp/iour-seccomp.XXXXXX)
trap 'rm -rf "$work"' EXIT

# structure INPUT OUTPUT: the properties above, by a second reading
structure() {
	python3 - "$1" "$2" "$L" <<'EOF'
import json, sys
src, out, lp = sys.argv[1:4]
a, b = json.load(open(src)), json.load(open(out))
uring = {"io_uring_setup", "io_uring_enter", "io_uring_register"}
peer = {"ptrace", "pidfd_getfd", "process_vm_readv", "process_vm_writev"}
allows = lambda act: act in ("SCMP_ACT_ALLOW", "SCMP_ACT_LOG")
names = lambda e: e.get("names") or ([e["name"]] if "name" in e else [])
def rules_naming(p, n):
    return [e for e in p["syscalls"] if n in names(e)]
s = rules_naming(b, "io_uring_setup")
assert len(s) == 1 and s[0]["action"] == "SCMP_ACT_NOTIFY" and not s[0].get("args"), s
for n in ("io_uring_enter", "io_uring_register"):
    r = rules_naming(b, n)
    if allows(b["defaultAction"]):
        assert not r, (n, r)
    else:
        assert len(r) == 1 and r[0]["action"] == "SCMP_ACT_ALLOW" and not r[0].get("args"), (n, r)
for e in b["syscalls"]:
    if set(names(e)) & peer:
        assert not allows(e["action"]), e
if allows(b["defaultAction"]):
    assert any(set(names(e)) >= peer for e in b["syscalls"]), "no rule denies the peer calls"
assert b["listenerPath"] == lp
# everything else is the input's
strip = lambda p: [dict(e, names=[n for n in names(e) if n not in uring | peer])
                   for e in p["syscalls"]]
sa = [e for e in strip(a) if e["names"]]
sb = [e for e in strip(b) if e["names"]]
assert sb[:len(sa)] == sa, "the rules differ in more than the io_uring and peer calls"
assert all(set(names(e)) <= uring | peer for e in b["syscalls"][len(sa):])
ka = {k: v for k, v in a.items() if k not in ("syscalls", "listenerPath", "listenerMetadata")}
kb = {k: v for k, v in b.items() if k not in ("syscalls", "listenerPath", "listenerMetadata")}
assert ka == kb and list(ka) == list(kb), "keys changed"
EOF
}

echo "seccomp-profile: the engines' default profiles"
for e in docker:docker-20.10.24 podman:podman-4.3.1 containerd:containerd-1.6.20; do
	eng=${e%%:*}
	in=$D/${e#*:}.json
	"$T" seccomp-profile --engine "$eng" --input "$in" --listener-path "$L" \
		-o "$work/$eng.json" 2>"$work/$eng.changes"
	rc=$?
	check "$eng: exit 0 (got $rc)" [ $rc -eq 0 ]
	check "$eng: the output is examples/seccomp/$eng.json" cmp -s "$work/$eng.json" "$E/$eng.json"
	check "$eng: the changes printed are ${e#*:}.changes" \
		cmp -s "$work/$eng.changes" "$D/${e#*:}.changes"
	if command -v python3 >/dev/null 2>&1; then
		check "$eng: only the io_uring and peer calls and listenerPath changed" \
			structure "$in" "$work/$eng.json"
	fi
	"$T" seccomp-profile --engine "$eng" --input "$work/$eng.json" --listener-path "$L" \
		-o "$work/$eng.2.json" 2>/dev/null
	check "$eng: run again on its output, nothing more changes" \
		cmp -s "$work/$eng.json" "$work/$eng.2.json"
done
check "podman: its default had no io_uring rule; the output allows io_uring_enter" \
	grep -q 'added: io_uring_enter, io_uring_register SCMP_ACT_ALLOW' "$work/podman.changes"
check "podman: its default allowed the peer calls; they are taken out" \
	grep -q 'took out pidfd_getfd, process_vm_readv, process_vm_writev, ptrace' "$work/podman.changes"

echo "seccomp-profile: refusals"
# refused NAME RC ARGS...: exit RC, nothing written to $work/r.json
refused() {
	d=$1
	want=$2
	shift 2
	rm -f "$work/r.json"
	"$T" seccomp-profile "$@" -o "$work/r.json" 2>"$work/r.err"
	rc=$?
	check "$d: exit $want (got $rc), nothing written" sh -c "[ $rc -eq $want ] && [ ! -e '$work/r.json' ]"
}
echo '{ "defaultAction": ' >"$work/broken.json"
refused "not JSON" 3 --input "$work/broken.json" --listener-path "$L"
check "not JSON: FILE:LINE:COLUMN" grep -q "broken.json:[0-9]*:[0-9]*:" "$work/r.err"
refused "Docker's format for containerd" 3 --engine containerd --input "$D/docker-20.10.24.json" \
	--listener-path "$L"
check "... says why" grep -q "reads the OCI format only" "$work/r.err"
cat >"$work/notify.json" <<'EOF'
{ "defaultAction": "SCMP_ACT_ALLOW",
  "syscalls": [ { "names": ["openat"], "action": "SCMP_ACT_NOTIFY" } ] }
EOF
refused "SCMP_ACT_NOTIFY for another call" 3 --input "$work/notify.json" --listener-path "$L"
echo '{ "syscalls": [] }' >"$work/nodefault.json"
refused "no defaultAction" 3 --input "$work/nodefault.json" --listener-path "$L"
refused "no --listener-path" 2 --input "$D/podman-4.3.1.json"
refused "a relative --listener-path" 2 --input "$D/podman-4.3.1.json" --listener-path agent.sock
refused "no --input, engine docker (compiled in)" 2 --engine docker --listener-path "$L"
refused "an unknown engine" 2 --engine lxc --input "$D/podman-4.3.1.json" --listener-path "$L"

echo "seccomp-profile: an allowing default, --keep-peer-calls, listenerMetadata"
cat >"$work/allow.json" <<'EOF'
{ "defaultAction": "SCMP_ACT_ALLOW", "architectures": ["SCMP_ARCH_X86_64"],
  "syscalls": [ { "names": ["ptrace", "mount"], "action": "SCMP_ACT_ERRNO", "errnoRet": 1 } ] }
EOF
"$T" seccomp-profile --input "$work/allow.json" --listener-path "$L" --listener-metadata web \
	-o "$work/allow.out" 2>"$work/allow.err"
check "an allowing default: exit 0" [ $? -eq 0 ]
if command -v python3 >/dev/null 2>&1; then
	check "... io_uring_setup NOTIFY, no rule for enter/register, the peer calls EPERM, metadata set" \
		python3 -c '
import json, sys
p = json.load(open(sys.argv[1]))
r = p["syscalls"]
assert r[0] == {"names": ["mount"], "action": "SCMP_ACT_ERRNO", "errnoRet": 1}, r[0]
assert r[1] == {"names": ["io_uring_setup"], "action": "SCMP_ACT_NOTIFY"}, r[1]
assert r[2] == {"names": ["ptrace", "pidfd_getfd", "process_vm_readv", "process_vm_writev"],
                "action": "SCMP_ACT_ERRNO", "errnoRet": 1}, r[2]
assert len(r) == 3 and p["listenerMetadata"] == "web"
' "$work/allow.out"
	check "... structure" structure "$work/allow.json" "$work/allow.out"
fi
"$T" seccomp-profile --engine podman --input "$D/podman-4.3.1.json" --listener-path "$L" \
	--keep-peer-calls -o "$work/keep.json" 2>"$work/keep.err"
check "--keep-peer-calls: exit 0, a WARNING for podman's rule that allows them" \
	sh -c "[ $? -eq 0 ] && grep -q 'WARNING: syscalls\[1\] (SCMP_ACT_ALLOW) allows ptrace' '$work/keep.err'"
check "... and they stay allowed" grep -q '"process_vm_writev"' "$work/keep.json"

echo "seccomp-profile: $pass passed, $failed failed"
[ $failed -eq 0 ]
