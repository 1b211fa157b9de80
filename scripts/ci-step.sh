#!/bin/sh
# One step of `make check`: print a header, run the command, print its result
# and duration, and append "seconds<TAB>title" to $CI_TIMES (if set) so the
# last step can print how long each took.
#   ci-step.sh TITLE COMMAND [ARG...]
#   ci-step.sh --summary
set -u
if [ "${1:-}" = "--summary" ]; then
	[ -n "${CI_TIMES:-}" ] && [ -f "$CI_TIMES" ] || exit 0
	printf '\n======== summary: all steps passed ========\n'
	total=0
	while IFS='	' read -r secs title; do
		printf '  %5ss  %s\n' "$secs" "$title"
		total=$((total + secs))
	done < "$CI_TIMES"
	printf '  %5ss  total\n' "$total"
	exit 0
fi
title=$1
shift
printf '\n======== %s ========\n' "$title"
start=$(date +%s)
"$@"
rc=$?
secs=$(($(date +%s) - start))
if [ $rc -eq 0 ]; then
	printf -- '-------- ok: %s (%ss)\n' "$title" "$secs"
	[ -n "${CI_TIMES:-}" ] && printf '%s\t%s\n' "$secs" "$title" >> "$CI_TIMES"
else
	printf -- '-------- FAILED: %s (exit %s after %ss)\n' "$title" "$rc" "$secs"
fi
exit $rc
