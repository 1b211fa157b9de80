#!/bin/sh
# `make check-man`: the manual pages under MANOUT (man1, man3, man7).
# - every public function of the headers (IOUR_API declarations, listed by
#   scripts/gen-man3.py --list) has its section 3 page, and there is no page
#   for a function that is not public;
# - every page has NAME, SYNOPSIS and DESCRIPTION; a section 3 page of a
#   function that returns a value has RETURN VALUE and SEE ALSO;
# - every page renders with `man --warnings -l` (groff's warnings, at 80
#   columns) without a single warning.
# Usage: check-man.sh MANOUT HEADER...
set -eu
out=$1
shift
fail=0
bad() { echo "check-man: FAILED: $*"; fail=1; }

names=$(python3 scripts/gen-man3.py --list "$@")
[ -n "$names" ] || bad "no public function found in $*"
n=0
for f in $names; do
	n=$((n + 1))
	[ -s "$out/man3/$f.3" ] || bad "public function $f has no page ($out/man3/$f.3)"
done
for p in "$out"/man3/*.3; do
	f=$(basename "$p" .3)
	echo "$names" | grep -qx "$f" || bad "page $p is not a public function"
done
[ -s "$out/man1/iour-restrict.1" ] || bad "no iour-restrict(1)"
[ -s "$out/man7/iouring-restrict.7" ] || bad "no iouring-restrict(7)"

pages=0
for p in "$out"/man1/*.1 "$out"/man3/*.3 "$out"/man7/*.7; do
	[ -e "$p" ] || continue
	pages=$((pages + 1))
	for s in NAME SYNOPSIS DESCRIPTION; do
		grep -q "^\.SH \"\?$s\"\?\$" "$p" || bad "$p has no $s section"
	done
	case $p in
	*.3)
		grep -q '^\.SH SEE ALSO$' "$p" || bad "$p has no SEE ALSO"
		grep -q 'iouring\\-restrict\\fP(7)' "$p" || bad "$p does not refer to iouring-restrict(7)"
		if ! grep -A2 '^\.SH SYNOPSIS' "$p" | grep -q '#include <iouring_restrict/'; then
			bad "$p does not name its header"
		fi
		if ! grep -q '^\\fBvoid iour' "$p"; then
			grep -q '^\.SH RETURN VALUE$' "$p" || bad "$p has no RETURN VALUE"
		fi
		;;
	esac
	warn=$(MANWIDTH=80 LC_ALL=C.UTF-8 man --warnings -l "$p" 2>&1 >/dev/null) || bad "man -l $p failed"
	[ -z "$warn" ] || bad "$p: $warn"
done
[ "$fail" -eq 0 ] || exit 1
echo "check-man: ok: $n functions, each with its page; $pages pages render without warnings"
