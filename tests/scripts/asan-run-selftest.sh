#!/bin/sh
# Self-test of scripts/asan-run.sh: the one leak it forgives (the Criterion
# runner's own 48-byte block) is forgiven only in the runner; the same
# report from a worker, a leak with a frame outside libcriterion, or a
# second leak fails the run.  Each case prints a fake sanitizer report from
# a shell whose PID is the one asan-run.sh started (exec keeps it).
set -u
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
run=scripts/asan-run.sh
fails=0

cat > "$dir/report.sh" <<'EOR'
report() { # PID FRAME1 [BYTES] [SECOND_LEAK]
	printf '==%s==ERROR: LeakSanitizer: detected memory leaks\n\n' "$1"
	printf 'Direct leak of %s byte(s) in 1 object(s) allocated from:\n' "${3:-48}"
	printf '    #0 0x1 in __interceptor_calloc (/x/unit+0x1)\n'
	printf '    #1 0x2  (%s+0x1a332)\n\n' "$2"
	[ -n "${4:-}" ] && printf 'Direct leak of 8 byte(s) in 1 object(s) allocated from:\n    #0 0x1 in malloc (/x/unit+0x1)\n    #1 0x3 in f (/x/unit+0x2)\n\n'
	printf 'SUMMARY: AddressSanitizer: %s byte(s) leaked in 1 allocation(s).\n' "${3:-48}"
}
EOR
expect() { # WANT(0|1) NAME SCRIPT
	printf '%s\n' "$3" > "$dir/case.sh"
	sh "$run" "$dir/log" sh "$dir/case.sh" > /dev/null 2>&1
	got=$?
	[ "$got" -ne 0 ] && got=1
	if [ "$got" -ne "$1" ]; then
		echo "asan-run selftest: FAILED: $2 (exit $got, expected $1)"
		fails=$((fails + 1))
	fi
}
lib=/lib/x86_64-linux-gnu/libcriterion.so.3
expect 0 "runner's own Criterion leak is forgiven" ". $dir/report.sh
report \$\$ $lib"
expect 1 "the same leak in another process (a worker) fails" ". $dir/report.sh
report 999999 $lib"
expect 1 "a runner leak with a frame outside libcriterion fails" ". $dir/report.sh
report \$\$ /x/libiouring-restrict.so.1"
expect 1 "a runner leak of another size fails" ". $dir/report.sh
report \$\$ $lib 64"
expect 1 "a second leak in the runner fails" ". $dir/report.sh
report \$\$ $lib 48 yes"
expect 1 "an AddressSanitizer error fails" "echo '==1==ERROR: AddressSanitizer: heap-use-after-free'"
expect 1 "a UBSan runtime error fails" "echo 'x.c:1:2: runtime error: signed integer overflow'"
expect 1 "a failing exit status fails" "exit 3"
expect 0 "a clean run passes" "echo fine"
[ $fails -eq 0 ] && echo "asan-run selftest: 9 cases ok"
exit $fails
