#!/bin/sh
# One step of `make check`: print a header, run the command, print its result
# and duration, and append "seconds<TAB>title" to $CI_TIMES (if set) so the
# last step can print how long each took.  With $CI_SKIPS set, every step
# runs with IOUR_SKIP_LOG=$CI_SKIPS and IOUR_SKIP_STEP=TITLE, where the
# checks that skip for want of something on this machine record why
# (scripts/skip-note.sh, scripts/criterion-skips.py); the summary counts
# and prints them once, step by step.
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
	if [ -n "${CI_SKIPS:-}" ] && [ -s "$CI_SKIPS" ]; then
		printf '\n======== skipped on this machine: %s (each names what is missing) ========\n' \
			"$(wc -l < "$CI_SKIPS" | tr -d ' ')"
		cut -f1 "$CI_SKIPS" | awk '!seen[$0]++' | while IFS= read -r step; do
			printf '  %s: %s skipped\n' "$step" \
				"$(awk -F'\t' -v s="$step" '$1 == s' "$CI_SKIPS" | wc -l | tr -d ' ')"
			awk -F'\t' -v s="$step" '$1 == s { sub(/^[^\t]*\t/, ""); print }' "$CI_SKIPS" |
				sort | uniq -c | sort -rn | sed 's/^ */    /'
		done
	elif [ -n "${CI_SKIPS:-}" ]; then
		printf '\nnothing was skipped on this machine\n'
	fi
	exit 0
fi
title=$1
shift
printf '\n======== %s ========\n' "$title"
if [ -n "${CI_SKIPS:-}" ]; then
	IOUR_SKIP_LOG=$CI_SKIPS IOUR_SKIP_STEP=$title
	export IOUR_SKIP_LOG IOUR_SKIP_STEP
fi
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
