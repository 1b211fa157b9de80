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
# Environment: O (build directory, default build), OLDKERNEL_PKG (a kernel
# package name instead of the newest 6.1 cloud one), OLDKERNEL_TIMEOUT
# (seconds for the boot, default 600), CC_STATIC (default gcc).
set -eu

here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
O=${O:-build}
OUT=$O/oldkernel
CC_STATIC=${CC_STATIC:-gcc}
TIMEOUT=${OLDKERNEL_TIMEOUT:-600}
LIB=$O/libiouring-restrict.a
t0=$(date +%s)
now() { date +%s; }

mkdir -p "$OUT/bin" "$OUT/dl"

# 1. qemu
scripts/deps.sh qemu-system-x86
t_deps=$(now)

# 2. the kernel
find_pkg() {
	apt-cache search --names-only '^linux-image-6\.1\.0-[0-9]+-cloud-amd64$' 2>/dev/null |
		awk '{print $1}' | sort -V | tail -n 1
}
pkg=${OLDKERNEL_PKG:-}
if [ -z "$pkg" ]; then
	pkg=$(find_pkg)
	if [ -z "$pkg" ]; then
		SUDO=""
		[ "$(id -u)" -ne 0 ] && SUDO="sudo"
		$SUDO apt-get update -qq
		pkg=$(find_pkg)
	fi
fi
[ -n "$pkg" ] || { echo "oldkernel: no linux-image-6.1*-cloud-amd64 package found" >&2; exit 1; }
kdir=$OUT/$pkg
if [ ! -s "$kdir/vmlinuz" ]; then
	echo "oldkernel: downloading $pkg"
	rm -f "$OUT/dl/"*.deb
	(cd "$OUT/dl" && apt-get download -q "$pkg" 2>&1 | grep -v '^W: Download is performed unsandboxed' || true)
	deb=$(ls "$OUT/dl/${pkg}_"*.deb 2>/dev/null | head -n 1)
	[ -n "$deb" ] || { echo "oldkernel: apt-get download $pkg failed" >&2; exit 1; }
	rm -rf "$kdir/root"
	mkdir -p "$kdir"
	dpkg-deb -x "$deb" "$kdir/root"
	cp "$kdir/root/boot/vmlinuz-"* "$kdir/vmlinuz"
	rm -rf "$kdir/root" "$deb"
fi
echo "oldkernel: kernel $pkg"
t_kernel=$(now)

# 3. static guest programs
[ -f "$LIB" ] || make --no-print-directory -j2 O="$O" "$LIB"
CFLAGS_G="-std=c11 -O2 -Wall -Wextra -Werror -D_GNU_SOURCE -Iinclude -Ilib -Itests/oldkernel -static"
$CC_STATIC $CFLAGS_G -o "$OUT/init" tests/oldkernel/init.c
rm -f "$OUT/bin/"*
for src in tests/oldkernel/t_*.c; do
	name=$(basename "$src" .c)
	$CC_STATIC $CFLAGS_G -o "$OUT/bin/$name" "$src" "$LIB"
done
python3 scripts/mkinitramfs.py "$OUT/initrd.cpio" "$OUT/init" "$OUT/bin/"*
t_build=$(now)

# 4. boot
log=$OUT/serial.log
set +e
timeout "$TIMEOUT" qemu-system-x86_64 -machine q35,accel=tcg -m 512 -nographic -no-reboot \
	-kernel "$kdir/vmlinuz" -initrd "$OUT/initrd.cpio" \
	-append "console=ttyS0 panic=-1 quiet" </dev/null >"$log" 2>&1
qrc=$?
set -e
t_boot=$(now)
tr -d '\r' <"$log" | sed 's/^.*guest kernel:/guest kernel:/' | grep -E '^(guest kernel:|\[[a-z_0-9]+\] |[0-9]+ passed, [0-9]+ failed$|FAIL)' || true
echo "oldkernel: times: deps $((t_deps - t0)) s, kernel $((t_kernel - t_deps)) s," \
	"build $((t_build - t_kernel)) s, boot+tests $((t_boot - t_build)) s," \
	"total $((t_boot - t0)) s"
if [ "$qrc" -eq 124 ]; then
	echo "oldkernel: FAIL: qemu timed out after $TIMEOUT s (log: $log)" >&2
	exit 1
fi
summary=$(tr -d '\r' <"$log" | grep -E '^[0-9]+ passed, [0-9]+ failed$' | tail -n 1)
if [ -z "$summary" ]; then
	echo "oldkernel: FAIL: no summary from the guest (qemu rc $qrc, log: $log)" >&2
	exit 1
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
