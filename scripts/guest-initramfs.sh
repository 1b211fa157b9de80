#!/bin/sh
# SPDX-License-Identifier: MIT
# The guest suite's initramfs, $O/guests/initrd.cpio, run by every kernel of
# make check-kernels (scripts/guest.sh boots it).  Its /init is
# tests/oldkernel/init.c: it runs everything in /tests in name order and
# prints the total "N passed, M failed, K skipped" as its last line.
#
# The suite is made of payloads, one file each in scripts/guest-payloads/
# (NN-name.sh, sourced in name order).  A payload builds what it needs and
# declares it with these functions:
#   guest_test HOSTFILE       a program for /tests; it prints
#                             "N passed, M failed" (", K skipped" optional)
#                             as its last line
#   guest_file HOSTFILE DEST  any file, at DEST in the guest
#   guest_cmd NAME PASS SKIP ARG...
#                             a command /init runs (/tests/NAME.cmd): one
#                             check, passed if it exits 0 and a line of its
#                             output matches the extended regex PASS;
#                             skipped, with that line as the reason, if a
#                             line matches SKIP (empty: never)
# The shared libraries of every executable declared (ldd) are added at their
# host paths; a static binary needs none.  Nothing else is needed: adding a
# payload is adding one file (doc/design.md, "Real kernels under qemu").
#
# Environment: O (build directory, default build), MAKE, CC_STATIC.
set -eu

here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
O=${O:-build}
MAKE=${MAKE:-make}
G=$O/guests
GB=$G/build
fail() { echo "guest-initramfs: FAIL: $*" >&2; exit 1; }
rm -rf "$GB"
mkdir -p "$GB/tests"
: >"$GB/files"

guest_test() {
	[ -x "$1" ] || fail "guest_test: $1 is not an executable"
	cp "$1" "$GB/tests/"
	echo "$1" >>"$GB/exes"
}
guest_file() {
	[ -e "$1" ] || fail "guest_file: no $1"
	echo "$1=$2" >>"$GB/files"
	[ ! -x "$1" ] || echo "$1" >>"$GB/exes"
}
guest_cmd() {
	name=$1 pass=$2 skip=$3
	shift 3
	{
		echo "pass $pass"
		[ -z "$skip" ] || echo "skip $skip"
		for a in "$@"; do echo "arg $a"; done
	} >"$GB/tests/$name.cmd"
}

: >"$GB/exes"
for p in scripts/guest-payloads/*.sh; do
	echo "guest-initramfs: payload $p"
	# shellcheck disable=SC1090
	. "$p" || fail "payload $p failed"
done

gcc -std=c11 -O2 -Wall -Wextra -Werror -D_GNU_SOURCE -static \
	-DGUEST_TEST_TIMEOUT="${GUEST_TEST_TIMEOUT:-600}" -o "$GB/init" tests/oldkernel/init.c ||
	fail "building the guest's /init failed"
libs=$(sort -u "$GB/exes" | while read -r e; do ldd "$e" 2>/dev/null || true; done |
	awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// {print $1}' | sort -u)
files=$(cat "$GB/files")
for l in $libs; do
	case " $files " in
	*"=$l "*) ;;
	*) files="$files $l=$l" ;;
	esac
done
# shellcheck disable=SC2086
python3 scripts/mkinitramfs.py "$G/initrd.cpio.tmp" "$GB/init" "$GB"/tests/* $files ||
	fail "writing the initramfs failed"
mv "$G/initrd.cpio.tmp" "$G/initrd.cpio"
echo "guest-initramfs: $G/initrd.cpio ($(ls "$GB/tests" | wc -l) programs, $(du -k "$G/initrd.cpio" | cut -f1) KiB)"
