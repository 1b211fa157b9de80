#!/bin/sh
# `make check-man-examples`: runs once each program of doc/examples/man3/
# (the EXAMPLES of the section 3 pages, built by mk/docs.mk against the
# library).  Each exits 0 when the library and the kernel answered as the
# program expects; its output goes to DIR/NAME.out and is shown on failure.
# The programs confine only themselves (the companion example installs its
# seccomp filter in its own process) and finish in well under a second.
# Usage: check-man-examples.sh DIR PROGRAM...
set -eu
dir=$1
shift
fail=0
n=0
for p in "$@"; do
	n=$((n + 1))
	name=$(basename "$p")
	rc=0
	timeout 30 "$p" >"$dir/$name.out" 2>&1 </dev/null || rc=$?
	if [ "$rc" -ne 0 ]; then
		echo "check-man-examples: FAILED: $name exited $rc:"
		sed 's/^/  /' "$dir/$name.out"
		fail=1
	fi
done
[ "$n" -gt 0 ] || { echo "check-man-examples: FAILED: no program given"; exit 1; }
[ "$fail" -eq 0 ] || exit 1
echo "check-man-examples: ok: $n programs of doc/examples/man3 built and ran"
