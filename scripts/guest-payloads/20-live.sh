# SPDX-License-Identifier: MIT
# Payload (scripts/guest-initramfs.sh): the live tier (tests/live, make
# check-live) and the examples it runs, with the shared library.  Its
# task-level and filter tests run on 7.x and skip, saying why, before.
# /tests/live finds the examples at /examples (../examples).
$MAKE --no-print-directory O="$O" live-tests examples tools uring-try >&2 || fail "building the live tier failed"
guest_test "$O/tests/live"
guest_file "$O/libiouring-restrict.so.1" /libiouring-restrict.so.1
for e in "$O"/examples/*; do
	[ -f "$e" ] || continue # not examples/tutorial/ (make tutorial)
	guest_file "$e" "/examples/$(basename "$e")"
done
# The CLI and the program it runs under policies (tests/live/test_live_cli.c);
# not in /tests, whose every program /init runs as a test.
guest_file "$O/tools/iour-restrict" /tools/iour-restrict
# tests/live/test_live_effects.c attacks the shipped tcp-client.json.
guest_file examples/policies/tcp-client.json /policies/tcp-client.json
guest_file "$O/tests/uring-try" /progs/uring-try
