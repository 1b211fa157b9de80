# SPDX-License-Identifier: MIT
# Payload (scripts/guest-initramfs.sh): the CLI and the programs the live
# tier's CLI tests (tests/live/test_live_cli.c) run under policy files:
# /tools/iour-restrict (it finds the library at /, $ORIGIN/..) and
# /progs/uring-try (tests/progs/uring_try.c; not in /tests, whose every
# program /init runs) and /progs/broker-try (tests/progs/broker_try.c, the
# raw-syscall program of the broker tests, tests/live/test_live_broker.c and
# test_live_claims.c) and /progs/escape-try (tests/progs/escape_try.c,
# tests/live/test_live_escape.c).  Without them those tests fail in the guest.
# Also the tutorial's programs (examples/tutorial/, doc/tutorial.md), one
# check each: each checks the kernel's answers itself, on every
# generation, and prints "stepN: ok" (rpath $ORIGIN/.., from /progs).
$MAKE --no-print-directory O="$O" tools uring-try >&2 || fail "building the CLI failed"
guest_file "$O/tools/iour-restrict" /tools/iour-restrict
guest_file "$O/tests/uring-try" /progs/uring-try
guest_file "$O/tests/broker-try" /progs/broker-try
# the policy tests/live/test_live_claims.c attacks explain's claims with
guest_file examples/policies/tcp-client.json /progs/tcp-client.json
guest_file "$O/tests/escape-try" /progs/escape-try
mkdir -p "$GB/tutorial"
for src in examples/tutorial/step*.c; do
	name=$(basename "$src" .c)
	# shellcheck disable=SC2016 # $ORIGIN is for the linker
	${CC:-cc} -std=c11 -O2 -Wall -Wextra -Werror -D_GNU_SOURCE -Iinclude -o "$GB/tutorial/$name" \
		"$src" -L"$O" -Wl,-rpath,'$ORIGIN/..' -liouring-restrict -luring ||
		fail "building $src failed"
	guest_file "$GB/tutorial/$name" "/progs/$name"
	step=${name%%_*}
	guest_cmd "tutorial_$name" "^$step: ok\$" '' "/progs/$name"
done
