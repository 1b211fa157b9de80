#!/bin/sh
# Record a skipped check for the summary at the end of `make check`:
#   skip-note.sh REASON...
# appends "STEP<TAB>REASON" to $IOUR_SKIP_LOG, which scripts/ci-step.sh sets
# (with IOUR_SKIP_STEP, the step's title) for every step it runs; outside
# make check (the variable unset) it does nothing.  The caller prints its
# own message; REASON names what the machine lacks.
set -u
[ -n "${IOUR_SKIP_LOG:-}" ] || exit 0
printf '%s\t%s\n' "${IOUR_SKIP_STEP:-?}" "$*" | tr -d '\r' >>"$IOUR_SKIP_LOG"
