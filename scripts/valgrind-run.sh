#!/bin/sh
# Run a program under valgrind memcheck and fail on any memory error or
# definite leak in ANY of its processes.  Criterion runs every test in a
# worker process (fork + exec) and reports the test passed even when
# valgrind found an error in that worker, so valgrind's exit code alone
# proves nothing: each process writes its own log and every log must end
# with "ERROR SUMMARY: 0 errors".
#   valgrind-run.sh [--criterion] LOG_DIR PROGRAM [ARGS...]
# --criterion: PROGRAM is a Criterion binary; also require "Tested: N", N > 0
# (Criterion exits 0 without running anything on an unknown option), and
# N = $VALGRIND_EXPECT_TESTS when that is set and not 0 (the count of tests
# its --filter names, scripts/criterion-filter.py); with $VALGRIND_JSON (the
# run's --json report) the tests that skipped, saying why, count too.
set -u
criterion=0
if [ "$1" = "--criterion" ]; then
	criterion=1
	shift
fi
logdir=$1
shift
rm -rf "$logdir"
mkdir -p "$logdir"
supp=""
[ -f tests/valgrind.supp ] && supp="--suppressions=tests/valgrind.supp"

# System binaries a test may exec are not ours to check; the command-line
# tools (tools/, run by the cli tests dozens of times, each a new valgrind
# start) run natively here and are checked under ASan+UBSan by test-asan.
# shellcheck disable=SC2086
${VALGRIND:-valgrind} --tool=memcheck --leak-check=full --errors-for-leak-kinds=definite \
	--show-leak-kinds=definite --error-exitcode=1 --trace-children=yes \
	--trace-children-skip='/bin/*,/usr/bin/*,/sbin/*,/usr/sbin/*,*/tools/*' \
	--num-callers=30 $supp \
	--log-file="$logdir/vg.%p.log" "$@" 2> "$logdir/stderr.log"
rc=$?
grep -v "running under valgrind, but the number of jobs" "$logdir/stderr.log"

# A log is bad if its summary counts errors, or, for a process that was
# killed before it could write a summary (tests kill children on purpose),
# if it shows an error report.
nlogs=$(find "$logdir" -name 'vg.*.log' | wc -l)
errpat='^==[0-9]+== (Invalid |Conditional jump|Use of uninitialised|Syscall param|Mismatched |Source and destination overlap|Argument .* of function|[0-9,]+ bytes in [0-9,]+ blocks are definitely lost)'
bad=""
for f in "$logdir"/vg.*.log; do
	[ -f "$f" ] || continue
	if grep -q 'ERROR SUMMARY: [1-9]' "$f" ||
		{ ! grep -q 'ERROR SUMMARY:' "$f" && grep -Eq "$errpat" "$f"; }; then
		bad="$bad $f"
	fi
done
status=0
if [ -n "$bad" ]; then
	for f in $bad; do
		echo "valgrind: errors in $f:"
		grep -v -e 'Memcheck, a memory error detector' -e 'Copyright (C)' \
			-e 'Using Valgrind-' "$f"
	done
	status=1
fi
if [ $rc -ne 0 ]; then
	echo "valgrind: $1 exited with $rc"
	status=1
fi
what="$nlogs processes"
if [ $criterion -eq 1 ]; then
	tested=$(sed -n 's/.*Synthesis: Tested: \([0-9]*\).*/\1/p' "$logdir/stderr.log" | tail -n 1)
	if [ -z "$tested" ] || [ "$tested" -eq 0 ]; then
		echo "valgrind: Criterion ran no test (no 'Tested: N' with N > 0)"
		status=1
	elif [ "${VALGRIND_EXPECT_TESTS:-0}" -gt 0 ] && [ -n "${VALGRIND_JSON:-}" ]; then
		# Criterion's JSON report (--json=VALGRIND_JSON) counts the
		# tests that skipped on this machine, saying why, which
		# "Tested: N" leaves out; the reasons go to make check's summary
		if ! python3 "$(dirname "$0")/criterion-skips.py" --expect "$VALGRIND_EXPECT_TESTS" \
			"$VALGRIND_JSON" "valgrind: unit tests"; then
			echo "valgrind: Criterion ran $tested tests (report $VALGRIND_JSON), the filter names $VALGRIND_EXPECT_TESTS"
			status=1
		fi
	elif [ "${VALGRIND_EXPECT_TESTS:-0}" -gt 0 ] && [ "$tested" -ne "$VALGRIND_EXPECT_TESTS" ]; then
		echo "valgrind: Criterion ran $tested tests, the filter names $VALGRIND_EXPECT_TESTS"
		status=1
	fi
	what="$what, ${tested:-0} tests"
fi
if [ $status -eq 0 ]; then
	echo "valgrind: ok: $what, 0 errors, 0 definite leaks"
else
	echo "valgrind: FAILED ($(echo $bad | wc -w) of $nlogs process logs with errors)"
fi
exit $status
