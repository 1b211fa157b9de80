#!/bin/sh
# Run a Criterion test binary under valgrind memcheck and fail on any memory
# error or definite leak in ANY process.  Criterion runs every test in a
# worker process and reports it passed even when valgrind found an error in
# that worker, so valgrind's exit code alone proves nothing: each process
# writes its own log and every log must end with "ERROR SUMMARY: 0 errors".
#   valgrind-run.sh LOG_DIR TEST_BINARY [CRITERION ARGS...]
set -u
logdir=$1
shift
rm -rf "$logdir"
mkdir -p "$logdir"
supp=""
[ -f tests/valgrind.supp ] && supp="--suppressions=tests/valgrind.supp"

# System binaries a test may exec are not ours to check.
# shellcheck disable=SC2086
${VALGRIND:-valgrind} --tool=memcheck --leak-check=full --errors-for-leak-kinds=definite \
	--show-leak-kinds=definite --error-exitcode=1 --trace-children=yes \
	--trace-children-skip='/bin/*,/usr/bin/*,/sbin/*,/usr/sbin/*' \
	--track-origins=no --num-callers=30 $supp \
	--log-file="$logdir/vg.%p.log" "$@" 2> "$logdir/stderr.log"
rc=$?
grep -v "running under valgrind, but the number of jobs" "$logdir/stderr.log"

nlogs=$(find "$logdir" -name 'vg.*.log' | wc -l)
bad=$(grep -L 'ERROR SUMMARY: 0 errors' "$logdir"/vg.*.log 2>/dev/null)
tested=$(sed -n 's/.*Synthesis: Tested: \([0-9]*\).*/\1/p' "$logdir/stderr.log" | tail -n 1)
status=0
if [ -n "$bad" ]; then
	for f in $bad; do
		echo "valgrind: errors in $f:"
		cat "$f"
	done
	status=1
fi
if [ $rc -ne 0 ]; then
	echo "valgrind: the test run exited with $rc"
	status=1
fi
if [ -z "$tested" ] || [ "$tested" -eq 0 ]; then
	echo "valgrind: Criterion ran no test (no 'Tested: N' with N > 0)"
	status=1
fi
if [ $status -eq 0 ]; then
	echo "valgrind: $nlogs processes checked, 0 errors, 0 definite leaks, $tested tests"
else
	echo "valgrind: FAILED ($(echo "$bad" | grep -c .) of $nlogs process logs with errors)"
fi
exit $status
