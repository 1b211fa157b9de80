#!/bin/sh
# SPDX-License-Identifier: MIT
# scripts/hash-outputs.sh: hash what the library computes for the test
# corpus, so a refactoring can show its outputs did not change byte for byte.
#
#   scripts/hash-outputs.sh [-t TOOL] OUT          write the corpus hashes to OUT
#   scripts/hash-outputs.sh [-t TOOL] -c BASELINE  recompute, diff against BASELINE
#
# TOOL is the built CLI (default build/tools/iour-restrict).  For every policy
# file of tests/policies/good, tests/cli/policies, examples/policies and
# tests/guest/policies, and every kernel version and feature level below, it
# hashes `compile` in its three formats (plan steps, their argument bytes,
# the disassembled programs, the expected report) and `explain`; then a few
# `ruleset` exports (restriction entries) and `filter` programs.  Each line is
# "SHA256 exit-status name"; a failing command is hashed too (its stderr and
# status), so an error that changes shows as well.
set -u

TOOL=build/tools/iour-restrict
CHECK=
while [ $# -gt 0 ]; do
	case "$1" in
	-t) TOOL=$2; shift 2 ;;
	-c) CHECK=$2; shift 2 ;;
	-h|--help) sed -n '2,16p' "$0"; exit 0 ;;
	*) break ;;
	esac
done
if [ -z "$CHECK" ] && [ $# -ne 1 ]; then
	echo "usage: $0 [-t TOOL] OUT | $0 [-t TOOL] -c BASELINE" >&2
	exit 2
fi
if [ ! -x "$TOOL" ]; then
	echo "$0: $TOOL is not built (make tools)" >&2
	exit 2
fi

KERNELS="5.10 5.11 5.12 5.15 5.19 6.0 6.1 6.6 6.12 6.18 6.19 7.0 7.1 7.2 7.3"
LEVELS="0 1 2 3 4 5"
POLICIES=$(ls tests/policies/good/*.json tests/cli/policies/*.json \
	examples/policies/*.json tests/guest/policies/*.json 2>/dev/null | sort)

# one NAME CMD...: one line for the command's stdout, stderr and status
one() {
	name=$1
	shift
	out=$("$@" 2>&1; echo "exit=$?")
	st=${out##*exit=}
	printf '%s %s %s\n' "$(printf '%s' "$out" | sha256sum | cut -d' ' -f1)" "$st" "$name"
}

run() {
	for p in $POLICIES; do
		for k in $KERNELS; do
			for f in text json c; do
				one "compile $p --kernel $k --format $f" \
					"$TOOL" compile "$p" --kernel "$k" --format "$f"
			done
			one "explain $p --kernel $k" "$TOOL" explain "$p" --kernel "$k"
		done
		for l in $LEVELS; do
			one "compile $p --level $l --format json" \
				"$TOOL" compile "$p" --level "$l" --format json
		done
	done
	for k in $KERNELS; do
		for f in text hex c; do
			one "ruleset read,write $k $f" "$TOOL" ruleset --allow-op READ,WRITE \
				--flags-allowed none --deny-register --kernel "$k" --format "$f"
			one "ruleset deny-ops $k $f" "$TOOL" ruleset --deny-ops \
				--allow-register BUFFERS --kernel "$k" --format "$f"
			one "ruleset all-ops $k $f" "$TOOL" ruleset --allow-op 0-255 \
				--flags-allowed all --kernel "$k" --format "$f"
		done
	done
	for f in text c raw; do
		one "filter socket $f" "$TOOL" filter --op SOCKET \
			--allow 'family==AF_INET,type==SOCK_STREAM' --allow 'family==AF_UNIX' \
			--default deny --format "$f"
		one "filter connect $f" "$TOOL" filter --op CONNECT \
			--allow 'family==AF_INET,addr4==10.0.0.0/8,port==443' --deny 'port==22' \
			--default deny --format "$f"
	done
}

if [ -n "$CHECK" ]; then
	tmp=$(mktemp)
	run > "$tmp"
	if diff -u "$CHECK" "$tmp"; then
		echo "hash-outputs: $(wc -l < "$tmp") outputs identical to $CHECK"
		rm -f "$tmp"
		exit 0
	fi
	echo "hash-outputs: outputs differ from $CHECK (new hashes: $tmp)" >&2
	exit 1
fi
run > "$1"
echo "hash-outputs: $(wc -l < "$1") outputs hashed into $1"
