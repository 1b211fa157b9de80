#!/bin/sh
# SPDX-License-Identifier: MIT
# make check-oldkernel: run the guest checks (tests/oldkernel/t_*.c) inside a
# real Linux 6.1 kernel (Debian's cloud image kernel) booted under qemu with
# software emulation (TCG; KVM is not usable on the development machines).
#
# Steps: install qemu-system-x86 if absent; apt-get download the newest
# linux-image-6.1*-cloud-amd64 and extract its vmlinuz; build /init and the
# guest programs statically against the library's static archive; pack them
# into a newc initramfs; boot; require the guest's last line
# "N passed, M failed" with N > 0 and M = 0.
#
# The guest programs link a static library built for them alone, in
# $O/oldkernel/lib with gcc -O2 and no sanitizers, whatever flags the rest
# of $O was built with (make check, make CC=clang, SAN=1 ...).
#
# Every failure is loud and exits non-zero: qemu that cannot be installed,
# a kernel package that cannot be found or downloaded, a guest that times
# out, crashes or reports a failed check.  Nothing is skipped.
#
# Environment: O (build directory, default build), OLDKERNEL_PKG (a kernel
# package name instead of the newest 6.1 cloud one), OLDKERNEL_TIMEOUT
# (seconds for the boot and all guest checks, default 600),
# OLDKERNEL_TEST_TIMEOUT (seconds per guest program, default 120),
# CC_STATIC (default gcc), MAKE (default make).
set -eu

here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
O=${O:-build}
OUT=$O/oldkernel
CC_STATIC=${CC_STATIC:-gcc}
TIMEOUT=${OLDKERNEL_TIMEOUT:-600}
TEST_TIMEOUT=${OLDKERNEL_TEST_TIMEOUT:-120}
MAKE=${MAKE:-make}
LIBO=$OUT/lib
LIB=$LIBO/libiouring-restrict.a
t0=$(date +%s)
now() { date +%s; }
fail() { echo "oldkernel: FAIL: $*" >&2; exit 1; }
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"

mkdir -p "$OUT/bin" "$OUT/dl"

# 1. qemu (and the build tools, if this is a fresh machine)
scripts/deps.sh qemu-system-x86 || fail "cannot install qemu-system-x86 (scripts/deps.sh failed)"
command -v qemu-system-x86_64 >/dev/null 2>&1 ||
	fail "qemu-system-x86_64 not found after installing qemu-system-x86"
t_deps=$(now)

# 2. the kernel
find_pkg() {
	apt-cache search --names-only '^linux-image-6\.1\.0-[0-9]+-cloud-amd64$' 2>/dev/null |
		awk '{print $1}' | sort -V | tail -n 1
}
apt_update() {
	echo "oldkernel: apt-get update"
	$SUDO apt-get update -qq || fail "apt-get update failed"
}
# apt-get download into $OUT/dl; 0 if the .deb arrived.  (As root, apt warns
# that the download is unsandboxed; that line is noise.)
download() {
	rm -f "$OUT/dl/"*.deb
	(cd "$OUT/dl" && apt-get download -q "$1" 2>&1) |
		grep -v '^W: Download is performed unsandboxed' || true
	ls "$OUT/dl/${1}_"*.deb >/dev/null 2>&1
}
pkg=${OLDKERNEL_PKG:-}
updated=0
if [ -z "$pkg" ]; then
	pkg=$(find_pkg)
	if [ -z "$pkg" ]; then
		apt_update
		updated=1
		pkg=$(find_pkg)
	fi
	[ -n "$pkg" ] || fail "apt-cache finds no linux-image-6.1.0-N-cloud-amd64 package" \
		"(is Debian 12 bookworm main in the apt sources?)"
fi
kdir=$OUT/$pkg
if [ ! -s "$kdir/vmlinuz" ]; then
	echo "oldkernel: downloading $pkg"
	if ! download "$pkg"; then
		[ "$updated" -eq 0 ] || fail "apt-get download $pkg failed"
		# stale package lists may name a version the mirror no longer has
		apt_update
		download "$pkg" || fail "apt-get download $pkg failed (also after apt-get update)"
	fi
	deb=$(ls "$OUT/dl/${pkg}_"*.deb | head -n 1)
	rm -rf "$kdir/root"
	mkdir -p "$kdir"
	dpkg-deb -x "$deb" "$kdir/root" || fail "dpkg-deb -x $deb failed"
	cp "$kdir/root/boot/vmlinuz-"* "$kdir/vmlinuz.tmp" || fail "no /boot/vmlinuz-* in $deb"
	mv "$kdir/vmlinuz.tmp" "$kdir/vmlinuz"
	rm -rf "$kdir/root" "$deb"
fi
echo "oldkernel: kernel $pkg"
t_kernel=$(now)

# 3. static guest programs, against the library's own static build
$MAKE --no-print-directory O="$LIBO" CC="$CC_STATIC" CFLAGS="-O2" SAN= CPPFLAGS= \
	EXTRA_CFLAGS= LDFLAGS= "$LIB" || fail "building $LIB failed"
CFLAGS_G="-std=c11 -O2 -Wall -Wextra -Werror -D_GNU_SOURCE -Iinclude -Ilib -Itests/oldkernel -static"
$CC_STATIC $CFLAGS_G -DGUEST_TEST_TIMEOUT="$TEST_TIMEOUT" -o "$OUT/init" tests/oldkernel/init.c ||
	fail "building the guest's /init failed"
rm -f "$OUT/bin/"*
for src in tests/oldkernel/t_*.c; do
	name=$(basename "$src" .c)
	$CC_STATIC $CFLAGS_G -o "$OUT/bin/$name" "$src" "$LIB" || fail "building $src failed"
done
python3 scripts/mkinitramfs.py "$OUT/initrd.cpio" "$OUT/init" "$OUT/bin/"* ||
	fail "writing the initramfs failed"
t_build=$(now)

# 4. boot
log=$OUT/serial.log
set +e
timeout -k 10 "$TIMEOUT" qemu-system-x86_64 -machine q35,accel=tcg -m 512 -nographic -no-reboot \
	-kernel "$kdir/vmlinuz" -initrd "$OUT/initrd.cpio" \
	-append "console=ttyS0 panic=-1 quiet" </dev/null >"$log" 2>&1
qrc=$?
set -e
t_boot=$(now)
tr -d '\r' <"$log" | sed 's/^.*guest kernel:/guest kernel:/' | grep -E '^(guest kernel:|\[[a-z_0-9]+\] |[0-9]+ passed, [0-9]+ failed$|FAIL)' || true
echo "oldkernel: times: deps $((t_deps - t0)) s, kernel $((t_kernel - t_deps)) s," \
	"build $((t_build - t_kernel)) s, boot+tests $((t_boot - t_build)) s," \
	"total $((t_boot - t0)) s"
log_tail() {
	echo "oldkernel: last lines of $log:" >&2
	# without the firmware's terminal escape sequences
	tr -d '\r' <"$log" | sed 's/\x1b\[[0-9;?]*[A-Za-z]//g; s/\x1b[a-z]//g' | tail -n 25 >&2
}
if [ "$qrc" -eq 124 ] || [ "$qrc" -eq 137 ]; then
	log_tail
	fail "qemu timed out after $TIMEOUT s (OLDKERNEL_TIMEOUT; log: $log)"
fi
summary=$(tr -d '\r' <"$log" | grep -E '^[0-9]+ passed, [0-9]+ failed$' | tail -n 1)
if [ -z "$summary" ]; then
	log_tail
	fail "no summary from the guest (qemu exit status $qrc, log: $log)"
fi
passed=${summary%% passed*}
failed=${summary#*passed, }
failed=${failed%% failed}
if [ "$passed" -gt 0 ] && [ "$failed" -eq 0 ]; then
	echo "oldkernel: $pkg: $summary"
	exit 0
fi
echo "oldkernel: FAIL: $pkg: $summary" >&2
exit 1
