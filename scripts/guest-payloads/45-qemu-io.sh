# SPDX-License-Identifier: MIT
# Payload (scripts/guest-initramfs.sh): Debian's qemu-io (qemu-utils, the
# host's /usr/bin/qemu-io; its shared libraries follow by ldd) and the
# policy learned from it, for tests/guest/qemu_io_guest.sh: qemu-io
# --aio io_uring under `iour-restrict run` writes, reads back and verifies
# a pattern; without WRITEV its write gets EACCES; before 7.0 through the
# ring broker, and with --broker=off the companion's ENOSYS.
# Needs the CLI of 30-cli.sh and /bin/sh of 40-fio.sh.
command -v qemu-io >/dev/null 2>&1 || scripts/deps.sh qemu-utils >&2 || fail "cannot install qemu-utils"
qio=$(command -v qemu-io) || fail "no qemu-io after installing qemu-utils"
guest_file "$qio" /usr/bin/qemu-io
for p in tests/guest/policies/qemu-io*.json; do
	guest_file "$p" "/progs/policies/$(basename "$p")"
done
guest_test tests/guest/qemu_io_guest.sh
