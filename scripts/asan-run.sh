#!/bin/sh
# Run a sanitized Criterion binary, show its output, and fail on its exit
# status or on any sanitizer report in the output of any of its processes.
# Criterion counts a test passed when its worker reports a leak only as it
# exits, so the exit status alone proves nothing about leaks.
#   asan-run.sh LOG PROGRAM [ARGS...]
set -u
log=$1
shift
mkdir -p "$(dirname "$log")"
"$@" > "$log" 2>&1
rc=$?
cat "$log"
if grep -qE 'ERROR: (Leak|Address)Sanitizer|runtime error:|ERROR: UndefinedBehaviorSanitizer' "$log"; then
	echo "asan-run: sanitizer reports in $log:" >&2
	grep -E 'ERROR: (Leak|Address)Sanitizer|runtime error:|SUMMARY: ' "$log" >&2
	exit 1
fi
exit $rc
