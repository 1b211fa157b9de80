#!/bin/sh
# Run libFuzzer targets one after the other for a bounded time each and fail
# on any crash, leak, timeout, sanitizer report or failed harness check.
#   fuzz-run.sh SECONDS BUILD_DIR 'TARGETS TO RUN' 'TARGETS NOT READY'
# Seeds come from tests/fuzz/corpus/NAME (never written); inputs found during
# the run are kept in BUILD_DIR/corpus/NAME and reused by the next run;
# crashing inputs land in BUILD_DIR/artifacts/NAME/.  Reproduce one with
#   BUILD_DIR/bin/NAME BUILD_DIR/artifacts/NAME/crash-...
set -u
secs=$1 dir=$2 run=$3 notready=$4

for name in $notready; do
	printf '  %-8s %s: NOT READY (a symbol on its fuzz-requires line is not exported yet)\n' \
		FUZZ "$name"
done
[ -n "$run" ] || { echo "fuzz: no target to run"; exit 0; }

# Targets run FUZZ_JOBS at a time (default 2: libFuzzer is single-threaded
# and the CI machine has two cores); each still gets its full time, and the
# results are printed in the order the targets were given.
jobs=${FUZZ_JOBS:-2}

fuzz_one() { # NAME: run it, leave its exit status in $dir/NAME.rc
	name=$1
	bin=$dir/bin/$name
	seeds=tests/fuzz/corpus/$name
	work=$dir/corpus/$name
	art=$dir/artifacts/$name
	log=$dir/$name.log
	mkdir -p "$work" "$art" "$seeds"
	ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1} \
	UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
	"$bin" -max_total_time="$(fuzz_time "$name")" -timeout=10 -rss_limit_mb=2048 \
		-print_final_stats=1 -artifact_prefix="$art/" "$work" "$seeds" > "$log" 2>&1
	echo $? > "$dir/$name.rc"
}

fuzz_time() { # NAME: its time; a harness may cap it ("fuzz-max-time: N")
	t=$secs
	cap=$(sed -n 's/.*fuzz-max-time: *\([0-9]*\).*/\1/p' "tests/fuzz/$1.c" | head -n 1)
	[ -n "$cap" ] && [ "$cap" -lt "$t" ] && t=$cap
	echo "$t"
}

report() { # NAME: print its result, return its status
	name=$1
	work=$dir/corpus/$name
	art=$dir/artifacts/$name
	log=$dir/$name.log
	r=$(cat "$dir/$name.rc" 2>/dev/null || echo 99)
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
	speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
	cov=$(grep -Eo 'cov: [0-9]+' "$log" | tail -n 1)
	units=$(find "$work" -type f | wc -l)
	# Harness statistics (lines starting with "fuzz-stats:") go to the log.
	stats=$(grep '^fuzz-stats:' "$log" | tail -n 1 | sed 's/^fuzz-stats: *//')
	if [ "$r" -eq 0 ]; then
		printf '  %-8s %s: ok, %s runs (%s/s), %s, corpus %s%s\n' FUZZ "$name" \
			"${execs:-?}" "${speed:-?}" "${cov:-cov: ?}" "$units" \
			"${stats:+, $stats}"
		return 0
	fi
	printf '  %-8s %s: FAILED (exit %s); last lines of %s:\n' FUZZ "$name" "$r" "$log"
	tail -n 60 "$log"
	ls -l "$art"
	return 1
}

rc=0
# shellcheck disable=SC2086 # a list of names
set -- $run
while [ $# -gt 0 ]; do
	batch=""
	i=0
	while [ $# -gt 0 ] && [ $i -lt "$jobs" ]; do
		batch="$batch $1"
		printf '  %-8s %s (%ss)\n' FUZZ "$1" "$(fuzz_time "$1")"
		rm -f "$dir/$1.rc"
		fuzz_one "$1" &
		shift
		i=$((i + 1))
	done
	wait
	for name in $batch; do
		report "$name" || rc=1
	done
done
exit $rc
