# SPDX-License-Identifier: MIT
# Payload (scripts/guest-initramfs.sh): Debian's fio (the host's
# /usr/bin/fio, its shared libraries follow by ldd) and /bin/sh (the
# host's dash) for two shell tests, each counting every check in the
# guest's total:
#   tests/guest/fio_guest.sh: fio (--ioengine=io_uring, randrw on a tmpfs
#     file) and uring-try under `iour-restrict run` with policy files
#     (examples/policies/fio.json, tests/guest/policies/): completes,
#     writes refused with EACCES without WRITE, AF_UNIX refused by a SOCKET
#     filter on 7.0+; the companion's fallback, as the report line says it,
#     before.
#   tests/guest/learn_guest_run.sh: tests/live/learn_guest.sh, `iour-restrict
#     learn` of fio and fio under the learned policy.
# and tests/learn/learn_allops.c, learn's policy of one request of every
# opcode against the kernel's own trace.
# Needs the CLI and uring-try of 30-cli.sh.
command -v fio >/dev/null 2>&1 || scripts/deps.sh fio >&2 || fail "cannot install fio"
fio=$(command -v fio) || fail "no fio after installing it"
sh=$(readlink -f /bin/sh)
case $sh in
*/dash | */bash | */busybox) ;;
*) fail "/bin/sh is $sh, not a shell the guest tests were written for (dash)" ;;
esac
guest_file "$fio" /usr/bin/fio
guest_file "$sh" /bin/sh
guest_file tests/live/learn_guest.sh /progs/learn_guest.sh
guest_file examples/policies/fio.json /progs/policies/fio.json
for p in tests/guest/policies/*.json; do
	guest_file "$p" "/progs/policies/$(basename "$p")"
done
guest_test tests/guest/fio_guest.sh
guest_test tests/guest/learn_guest_run.sh
# tests/learn/learn_allops.c: every opcode below the kernel's IORING_OP_LAST
# learned, against the kernel's own trace (static in the library)
$MAKE --no-print-directory O="$O" "$O/tests/learn_allops" >&2 || fail "building learn_allops failed"
guest_test "$O/tests/learn_allops"
