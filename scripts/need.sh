#!/bin/sh
# Fail early, naming the Debian package, when a tool a make step needs is
# missing, instead of letting the tool's caller fail with its own message
# (abi-dumper's "can't find ctags", a shell's "command not found").
#   need.sh WHAT:PACKAGE ...
# WHAT is a command looked up on PATH, or an absolute path to a file (a
# header or runtime library a step needs).  `make deps` (scripts/deps.sh)
# installs every package named here.
set -u
rc=0
for a in "$@"; do
	what=${a%:*}
	pkg=${a##*:}
	case $what in
	/*) [ -e "$what" ] && continue ;;
	*) command -v "$what" >/dev/null 2>&1 && continue ;;
	esac
	echo "missing: '$what' (Debian package '$pkg'): run 'make deps' or 'apt-get install $pkg'" >&2
	rc=1
done
exit $rc
