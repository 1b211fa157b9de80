#!/bin/sh
# ABI gate, layers (a) and (b): the shared object exports exactly the names
# listed in the version script, exactly the names in abi/symbols.txt, each
# with an iour_ prefix and a symbol version.
set -eu
so=$1 map=$2 list=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

nm -D --defined-only "$so" | awk '$2 != "A" { print $3 }' > "$tmp/raw"
sed 's/@.*//' "$tmp/raw" | sort -u > "$tmp/exported"
grep -oE '\biour_[A-Za-z0-9_]+' "$map" | sort -u > "$tmp/map"
sort -u "$list" > "$tmp/list"
rc=0
if ! diff -u "$tmp/map" "$tmp/exported" > "$tmp/d1"; then
	echo "check-symbols: exports differ from $map:"; cat "$tmp/d1"; rc=1
fi
if ! diff -u "$tmp/list" "$tmp/exported" > "$tmp/d2"; then
	echo "check-symbols: exports differ from $list:"; cat "$tmp/d2"; rc=1
fi
if grep -v '^iour_' "$tmp/exported"; then
	echo "check-symbols: exported symbols without the iour_ prefix (above)"; rc=1
fi
if grep -v '@@IOURING_RESTRICT_' "$tmp/raw" | grep -v '^IOURING_RESTRICT_'; then
	echo "check-symbols: symbols without a version (above)"; rc=1
fi
[ $rc -eq 0 ] && echo "check-symbols: $(wc -l < "$tmp/exported") symbols OK"
exit $rc
