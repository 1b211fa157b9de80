#!/bin/sh
# SPDX-License-Identifier: MIT
# `iour-restrict runc-shim` (doc/cli.md) without an engine: a stand-in
# runc (a script that records its arguments and the bundle's config.json)
# is given as --runc, and the shim is called as dockerd's runc shim calls
# a runtime (runc's global options, then the command).  Checks:
# - create: listenerPath restored where a NOTIFY rule has none; the env
#   variable becomes the annotation DIR/FILE; runc gets the arguments
#   unchanged; nothing else in config.json changes;
# - a listenerPath already set, an annotation already set: left alone;
# - a value that is not a file name (../x, a/b, ., ..): not executed,
#   exit 1, the reason on stderr and in runc's --log as JSON;
# - other commands (state, delete, ...) go to runc untouched;
# - usage errors: no --socket, a relative --policy-dir (exit 2).
# The shim with Docker itself: tests/engines/run.sh.
#
#   tests/cli/runc-shim.sh BUILD_DIR
set -u
O=${1:-build}
T=$(cd "$(dirname "$O/tools/iour-restrict")" && pwd)/iour-restrict
pass=0
failed=0
ok() { pass=$((pass + 1)); }
bad() { failed=$((failed + 1)); echo "  FAIL $*"; }
check() { d=$1; shift; if "$@"; then ok; else bad "$d"; fi; }
command -v python3 >/dev/null 2>&1 || { echo "runc-shim: SKIP: no python3"; scripts/skip-note.sh "runc-shim: no python3"; exit 0; }
work=$(mktemp -d /tmp/iour-shim.XXXXXX)
trap 'rm -rf "$work"' EXIT
cat >"$work/runc" <<EOF
#!/bin/sh
printf '%s\n' "\$@" >"$work/runc.args"
for a in "\$@"; do
	case "\${prev:-}" in --bundle|-b) cp "\$a/config.json" "$work/runc.config" ;; esac
	prev=\$a
done
exit 7
EOF
chmod +x "$work/runc"
S=/run/iour-restrict/agent.sock
D=/etc/iour-restrict
SHIM="$T runc-shim --socket $S --policy-dir $D --runc $work/runc --"

# bundle NAME ENV-VALUE|- LISTENER|- ANNOTATION|-: a bundle in $work/NAME
bundle() {
	mkdir -p "$work/$1"
	python3 - "$work/$1/config.json" "$2" "$3" "$4" <<'EOF'
import json, sys
out, env, lp, ann = sys.argv[1:5]
c = {"ociVersion": "1.0.2", "process": {"args": ["/bin/prog"], "env": ["PATH=/bin", "A=1"]},
     "linux": {"seccomp": {"defaultAction": "SCMP_ACT_ERRNO",
                           "syscalls": [{"names": ["io_uring_setup"], "action": "SCMP_ACT_NOTIFY"},
                                        {"names": ["read"], "action": "SCMP_ACT_ALLOW"}]},
               "namespaces": [{"type": "pid"}]}}
if env != "-":
    c["process"]["env"].append("IOUR_RESTRICT_POLICY=" + env)
if lp != "-":
    c["linux"]["seccomp"]["listenerPath"] = lp
if ann != "-":
    c["annotations"] = {"org.iouring-restrict.policy": ann}
json.dump(c, open(out, "w"))
EOF
}
# same A B [KEY=VALUE...]: config.json B is A with the changes named
same() {
	python3 - "$@" <<'EOF'
import json, sys
a, b = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
for kv in sys.argv[3:]:
    k, v = kv.split("=", 1)
    if k == "listenerPath":
        a["linux"]["seccomp"]["listenerPath"] = v
    elif k == "annotation":
        a.setdefault("annotations", {})["org.iouring-restrict.policy"] = v
assert a == b, (a, b)
EOF
}

echo "runc-shim: create"
bundle one app.json - -
cp "$work/one/config.json" "$work/one.orig"
$SHIM --root /run/docker/runtime-runc/moby --log "$work/one.log" --log-format json \
	create --bundle "$work/one" --pid-file "$work/one/pid" one 2>"$work/one.err"
rc=$?
check "runc's exit status is the shim's (7, got $rc)" [ $rc -eq 7 ]
check "runc got the arguments unchanged" sh -c "printf '%s\n' --root /run/docker/runtime-runc/moby \
	--log '$work/one.log' --log-format json create --bundle '$work/one' --pid-file '$work/one/pid' one |
	cmp -s - '$work/runc.args'"
check "listenerPath restored and the annotation set, nothing else changed" \
	same "$work/one.orig" "$work/runc.config" "listenerPath=$S" "annotation=$D/app.json"

bundle two - /other.sock /etc/iour-restrict/given.json
cp "$work/two/config.json" "$work/two.orig"
rm -f "$work/runc.args"
(cd "$work/two" && $SHIM create two) 2>/dev/null
check "no --bundle (the current directory): runc run" grep -qx create "$work/runc.args"
check "... listenerPath and annotation already set: unchanged" \
	same "$work/two.orig" "$work/two/config.json"
bundle three b.json - /etc/iour-restrict/given.json
$SHIM create -b "$work/three" three 2>/dev/null
check "an annotation already set wins over the variable" python3 -c '
import json, sys
c = json.load(open(sys.argv[1]))
assert c["annotations"]["org.iouring-restrict.policy"] == "/etc/iour-restrict/given.json"
assert c["linux"]["seccomp"]["listenerPath"] == sys.argv[2]' "$work/three/config.json" "$S"

echo "runc-shim: refused values"
for v in ../x a/b . .. ""; do
	bundle bad "$v" - -
	cp "$work/bad/config.json" "$work/bad.orig"
	rm -f "$work/runc.args" "$work/bad.log"
	$SHIM --log "$work/bad.log" --log-format json run --bundle "$work/bad" bad 2>"$work/bad.err"
	rc=$?
	check "IOUR_RESTRICT_POLICY='$v': exit 1 (got $rc), runc not run, config.json unchanged" \
		sh -c "[ $rc -eq 1 ] && [ ! -e '$work/runc.args' ] && cmp -s '$work/bad.orig' '$work/bad/config.json'"
	check "... the reason on stderr and in runc's --log as JSON" sh -c \
		"grep -q 'not a file name in $D' '$work/bad.err' &&
		 python3 -c 'import json,sys; m = json.loads(open(sys.argv[1]).readline()); assert m[\"level\"] == \"error\" and \"not a file name\" in m[\"msg\"]' '$work/bad.log'"
done

echo "runc-shim: other commands, usage"
bundle four app.json - -
cp "$work/four/config.json" "$work/four.orig"
(cd "$work/four" && $SHIM --root /x state four) >/dev/null 2>&1
check "state: runc run, config.json untouched" \
	sh -c "grep -qx state '$work/runc.args' && cmp -s '$work/four.orig' '$work/four/config.json'"
"$T" runc-shim --policy-dir "$D" -- create x >/dev/null 2>&1
check "no --socket: exit 2" [ $? -eq 2 ]
"$T" runc-shim --socket "$S" --policy-dir etc -- create x >/dev/null 2>&1
check "a relative --policy-dir: exit 2" [ $? -eq 2 ]
"$T" runc-shim --socket "$S" --policy-dir "$D" --runc "$work/none" -- state x >/dev/null 2>&1
check "runc not found: exit 127" [ $? -eq 127 ]

echo "runc-shim: $pass passed, $failed failed"
[ $failed -eq 0 ]
