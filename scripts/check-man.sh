#!/bin/sh
# `make check-man`: the manual pages under MANOUT (man1, man3, man7).
# - every public function of the headers (IOUR_API declarations, listed by
#   scripts/gen-man3.py --list) has its section 3 page, and there is no page
#   for a function that is not public;
# - every command of the tool, from its command table (CLI_SRC, default
#   tools/iour-restrict.c) and from `CLI_BIN --help` when CLI_BIN is built,
#   has its iour-restrict-COMMAND(1) with OPTIONS, EXIT STATUS and a SEE
#   ALSO naming iour-restrict(1) and iouring-restrict(7), and
#   iour-restrict(1) names it in its SEE ALSO;
# - every page has NAME, SYNOPSIS and DESCRIPTION; a section 3 page of a
#   function that returns a value has RETURN VALUE and SEE ALSO, and every
#   section 3 page has EXAMPLES showing a program that calls the function;
# - every page renders with `man --warnings -l` (groff's warnings, at 80
#   columns) without a single warning.
# Usage: [CLI_SRC=FILE] [CLI_BIN=TOOL] check-man.sh MANOUT HEADER...
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

# The tool's commands: its table ({ "name", cmd_name, ... }) and, when the
# tool is built, the "Commands:" list of its --help ("help" is no command
# section of its own).
cli_src=${CLI_SRC:-tools/iour-restrict.c}
cmds=$(sed -n 's/^[[:space:]]*{[[:space:]]*"\([a-z0-9-]*\)",[[:space:]]*cmd_.*/\1/p' "$cli_src")
[ -n "$cmds" ] || bad "no command found in the command table of $cli_src"
if [ -n "${CLI_BIN:-}" ] && [ -x "$CLI_BIN" ]; then
	helped=$("$CLI_BIN" --help | sed -n '/^Commands:/,/^$/s/^  \([a-z0-9-]*\) .*/\1/p' | grep -vx help) ||
		bad "$CLI_BIN --help lists no command"
	cmds=$(printf '%s\n%s\n' "$cmds" "$helped" | sort -u)
fi
ncmd=0
for c in $cmds; do
	ncmd=$((ncmd + 1))
	p=$out/man1/iour-restrict-$c.1
	if [ ! -s "$p" ]; then
		bad "command $c has no page ($p): give it a '### $c' section under COMMANDS in doc/cli.md"
		continue
	fi
	for s in OPTIONS "EXIT STATUS" "SEE ALSO"; do
		grep -q "^\.SH \"$s\"\$" "$p" || bad "$p has no $s section"
	done
	# the name as roff writes it (a command's '-' is "\-"), as a pattern
	ce=$(printf '%s' "$c" | sed 's/-/\\\\-/g')
	sed -n '/^\.SH "SYNOPSIS"/,/^\.SH/p' "$p" | grep -q "^iour\\\\-restrict $ce\( \|\$\)" ||
		bad "$p: the SYNOPSIS has no 'iour-restrict $c' line"
	sed -n '/^\.SH "SEE ALSO"/,$p' "$p" | grep -q 'iour\\-restrict\\fR(1)' ||
		bad "$p does not refer to iour-restrict(1)"
	sed -n '/^\.SH "SEE ALSO"/,$p' "$p" | grep -q 'iouring\\-restrict\\fR(7)' ||
		bad "$p does not refer to iouring-restrict(7)"
	sed -n '/^\.SH "SEE ALSO"/,$p' "$out/man1/iour-restrict.1" |
		grep -q "iour\\\\-restrict\\\\-$ce\\\\fR(1)" ||
		bad "iour-restrict(1) does not name iour-restrict-$c(1) in its SEE ALSO"
done

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
		# EXAMPLES: a program (doc/examples/man3/, built and run by
		# check-man-examples) that calls the page's function
		f=$(basename "$p" .3)
		sed -n '/^\.SH EXAMPLES$/,/^\.SH/p' "$p" | grep -q "\\b$f *(" ||
			bad "$p has no EXAMPLES section with a program that calls $f()"
		if ! grep -q '^\\fBvoid iour' "$p"; then
			grep -q '^\.SH RETURN VALUE$' "$p" || bad "$p has no RETURN VALUE"
		fi
		;;
	esac
	warn=$(MANWIDTH=80 LC_ALL=C.UTF-8 man --warnings -l "$p" 2>&1 >/dev/null) || bad "man -l $p failed"
	[ -z "$warn" ] || bad "$p: $warn"
done
[ "$fail" -eq 0 ] || exit 1
echo "check-man: ok: $n functions and $ncmd commands, each with its page; $pages pages render without warnings"
