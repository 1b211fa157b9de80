# SPDX-License-Identifier: MIT
# Payload (scripts/guest-initramfs.sh): tests/audit/mix_prog.c as
# /progs/audit-mix and tests/guest/audit_guest.sh: `iour-restrict run
# --log-denials` and `run --audit` on each kernel, and what its
# tracepoints show (the "measured:" lines).  Needs the CLI of 30-cli.sh,
# /bin/sh of 40-fio.sh and policies/socket-inet.json.
$MAKE --no-print-directory O="$O" "$O/tests/audit_mix" >&2 || fail "building audit_mix failed"
guest_file "$O/tests/audit_mix" /progs/audit-mix
guest_test tests/guest/audit_guest.sh
