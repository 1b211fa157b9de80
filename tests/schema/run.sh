#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/schema/run.sh: the fictitious payload of tests/schema/fictitious.def,
# in a build made with -DIOUR_SCHEMA_TEST_EXTRA and no other source edit
# (make check-schema-extra), is handled by every consumer of the request
# schema: the public view, the kernel description (payload sizes by
# version), the CLI's rule language (filter), the disassembler, the
# simulator (sim), policy files (check; compile and its plan on 7.2 and
# 7.0; load, save, merge), help rules, and the bindings' generator.  Also
# checks that the normal build does not know it.  doc/design.md, "Adding a
# filterable opcode or field".
#
#   tests/schema/run.sh XO MAINTOOL CC CFLAGS
#     XO        the test build's output directory (library and tools)
#     MAINTOOL  the normal build's iour-restrict
set -u
XO=$1
MAIN=$2
CC=${3:-cc}
CFLAGS=${4:-}
T=$XO/tools/iour-restrict
POL=tests/schema/probe.json
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT INT TERM
pass=0
fail=0

# check NAME WANT-STATUS PATTERN CMD...: CMD exits WANT-STATUS and its
# output (stdout and stderr) contains the fixed string PATTERN ("" for any).
check() {
	name=$1 want=$2 pat=$3
	shift 3
	out=$("$@" 2>&1)
	st=$?
	if [ "$st" -eq "$want" ] && printf '%s\n' "$out" | grep -qF -- "$pat"; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		printf 'FAIL %s: exit %s (want %s), want "%s" in:\n%s\n' "$name" "$st" "$want" \
			"$pat" "$out" >&2
	fi
}

# ---- the public view and policy save (a small C program on the library)
$CC -std=c11 -D_GNU_SOURCE -Iinclude $CFLAGS -o "$TMP/schema_extra" tests/schema/schema_extra.c \
	"$XO/libiouring-restrict.a" -ljansson || exit 1
X=$TMP/schema_extra
check view-payload 0 "payload probe op 55 pdu 16 level 5" $X view
check view-field 0 "field probe.mode id 0x7ff0 prefix PMODE_ off 16 size 4 applies 1/0" $X view
check view-const 0 "const PMODE_GROW ns PMODE_ value 2" $X view
check describe-7.2 0 "pdu FTRUNCATE 16 CONNECT 24 (named 24)" $X describe 7.2
check describe-7.0 0 "pdu FTRUNCATE 0 CONNECT 0 (named 0)" $X describe 7.0
check save-round-trip 0 '"field": "probe.length"' $X save $POL
check save-writes-constants 0 '"PMODE_GROW"' $X save $POL

# ---- the rule language, and the disassembler through filter
check filter-dotted 0 "ld probe.mode" $T filter --op FTRUNCATE --allow 'probe.mode == PMODE_GROW'
check filter-bare-64bit 0 "ld probe.length.hi" $T filter --op FTRUNCATE \
	--allow 'mode == PMODE_GROW, length > 4096'
check filter-pdu-size 0 "pdu_size 16" $T filter --op FTRUNCATE --allow 'mode == 1'
check filter-uppercase 0 "jeq #0x1" $T filter --op FTRUNCATE --allow 'PROBE.MODE == pmode_shrink'
check filter-set 0 "# allow mode in {PMODE_SHRINK, PMODE_ZERO}" $T filter --op FTRUNCATE \
	--allow 'mode in {PMODE_SHRINK, PMODE_ZERO}'
check filter-c 0 "BPF_STMT" $T filter --op FTRUNCATE --allow 'mode == 1' --format c
check filter-namespace 2 "is not a constant of mode, which takes PMODE_* constants" \
	$T filter --op FTRUNCATE --allow 'mode == AF_INET'
check filter-valid-range 2 "value outside the field's valid values" \
	$T filter --op FTRUNCATE --allow 'mode == 256'
check filter-numbers-only 2 "length takes numbers, not constants" \
	$T filter --op FTRUNCATE --allow 'length == PMODE_GROW'
check filter-other-opcode 2 "field 'probe.mode' does not exist for opcode SOCKET" \
	$T filter --op SOCKET --allow 'probe.mode == 1'
check filter-field-list 2 "(fields of FTRUNCATE: mode, length, user_data, sqe_flags)" \
	$T filter --op FTRUNCATE --allow 'bogus == 1'

# ---- the simulator
check sim-allow 0 "mode=PMODE_SHRINK,length=5: allow" $T sim --op FTRUNCATE \
	--allow 'mode == PMODE_SHRINK' --ctx 'mode=PMODE_SHRINK,length=5' --expect allow
check sim-deny 0 "mode=PMODE_GROW: deny" $T sim --op FTRUNCATE \
	--allow 'mode == PMODE_SHRINK' --ctx 'mode=PMODE_GROW' --expect deny
check sim-ctx-bytes 0 "37 00 10 00 00 00 00 00  02 00 00 00 00 00 00 00  01 00 00 00 01 00 00 00" \
	$T sim --op FTRUNCATE --allow true --ctx 'mode=PMODE_GROW,length=0x100000001' --show-ctx
check sim-64bit 0 "length=0x100000001: allow" $T sim --op FTRUNCATE \
	--allow 'length > 0x100000000' --ctx 'length=0x100000001' --expect allow
check sim-keys 2 "(context fields of FTRUNCATE: mode, length, user_data, sqe_flags)" \
	$T sim --op FTRUNCATE --allow true --ctx 'bogus=1'
check sim-slot-width 2 "value does not fit the 32-bit field" \
	$T sim --op FTRUNCATE --allow true --ctx 'mode=0x100000000'

# ---- help rules, written from the table
check help-fields 0 "  FTRUNCATE (7.2+)   mode, length" $T help rules
check help-namespaces 0 "mode: PMODE_*" $T help rules
check help-contexts 0 "  FTRUNCATE          mode, length" $T help rules
check help-filter-op 0 "OPENAT2, CONNECT, FTRUNCATE, or any other" $T filter --help
check help-check-ctx 0 "FTRUNCATE mode, length." $T check --help

# ---- policy files through the tool
check policy-check-allow 0 "rule: 1" $T check $POL --op FTRUNCATE mode=PMODE_GROW length=10 \
	--kernel 7.2 --expect allow
check policy-check-deny 0 "verdict: deny" $T check $POL --op FTRUNCATE mode=PMODE_ZERO \
	length=10 --kernel 7.2 --expect deny
check policy-check-length 0 "verdict: deny" $T check $POL --op FTRUNCATE mode=PMODE_SHRINK \
	length=2000000 --kernel 7.2 --expect deny
check policy-compile 0 "opcode 55 (FTRUNCATE), flags SZ_STRICT, pdu_size 16" \
	$T compile $POL --kernel 7.2
check policy-compile-before 0 "FTRUNCATE: the program reads 16 payload bytes but the kernel fills 0" \
	$T compile $POL --kernel 7.0
printf '{"entries":[{"names":["socket"],"action":"allow","args":[{"field":"socket.family","op":"==","value":"PMODE_GROW"}]}]}' >"$TMP/wrong.json"
check policy-namespace 3 "PMODE_GROW belongs to another field" $T compile "$TMP/wrong.json" --kernel 7.2
printf '{"entries":[{"names":["socket"],"action":"allow","args":[{"field":"bogus","op":"==","value":1}]}]}' >"$TMP/unknown.json"
check policy-field-list 3 "probe.*)" $T compile "$TMP/unknown.json" --kernel 7.2
check policy-merge 0 "" $T merge -o "$TMP/m1.json" $POL $POL
$T merge -o "$TMP/m2.json" "$TMP/m1.json" "$TMP/m1.json" 2>/dev/null
# merge keeps each input's comment (numbered, with its path), so only the
# rules must come back unchanged
nocomment() { python3 -c 'import json, sys
def strip(x):
    if isinstance(x, dict): return {k: strip(v) for k, v in x.items() if k != "comment"}
    if isinstance(x, list): return [strip(v) for v in x]
    return x
print(json.dumps(strip(json.load(open(sys.argv[1]))), sort_keys=True))' "$1"; }
nocomment "$TMP/m1.json" >"$TMP/m1.rules"
nocomment "$TMP/m2.json" >"$TMP/m2.rules"
check policy-merge-round-trip 0 "" sh -c 'grep -q "\"entries\"" "$1" && cmp "$1" "$2"' - \
	"$TMP/m1.rules" "$TMP/m2.rules"

# ---- the bindings' generator
check gen-bindings 0 "" python3 scripts/gen-bindings.py --build "$XO" --cc "$CC" \
	--cflags="$CFLAGS" --out "$TMP/gen"
check gen-python 0 "PROBE_MODE = 32752" cat "$TMP/gen/bindings/python/iouring_restrict/enums.py"
check gen-rust-sys 0 "pub const IOUR_FIELD_PROBE_LENGTH: u32 = 32753;" \
	cat "$TMP/gen/bindings/rust/iouring-restrict-sys/src/lib.rs"
check gen-rust 0 "Field::ProbeMode => sys::IOUR_FIELD_PROBE_MODE," \
	cat "$TMP/gen/bindings/rust/iouring-restrict/src/filter.rs"

# ---- and the normal build knows none of it
check main-build-unaware 2 "unknown field 'probe.mode'" $MAIN filter --op FTRUNCATE \
	--allow 'probe.mode == 1'

echo "schema-extra: $pass checks passed, $fail failed"
[ "$fail" -eq 0 ]
