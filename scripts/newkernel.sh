#!/bin/sh
# SPDX-License-Identifier: MIT
# make check-newkernel: the live tier (tests/live, make check-live) inside a
# real Linux 7.x kernel, where its task-level tests run instead of
# skipping: Debian's newest linux-image-7.*-cloud-amd64 booted under qemu
# with software emulation (TCG).
#
# Steps: install qemu-system-x86 if absent; find and apt-get download the
# kernel package from Debian unstable through a private apt configuration
# in $O/newkernel/apt (the machine's own apt sources are not touched);
# extract its vmlinuz; build the live binary and the examples; pack them
# with every shared library they load into an initramfs whose /init is the
# old-kernel guest's (tests/oldkernel/init.c); boot; require the guest's
# last line "N passed, M failed" with N > 0 and M = 0, and that no
# task-level or ring-filter test (live_task*, live_ring_bpf) was skipped.
#
# Every failure is loud and exits non-zero.  Environment: O (build
# directory, default build), NEWKERNEL_PKG (a kernel package name instead
# of the newest 7.x cloud one), NEWKERNEL_SUITE (default sid),
# NEWKERNEL_TIMEOUT (seconds for the boot and the tests, default 900),
# MAKE (default make).
set -eu

here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
O=${O:-build}
OUT=$O/newkernel
TIMEOUT=${NEWKERNEL_TIMEOUT:-900}
SUITE=${NEWKERNEL_SUITE:-sid}
MAKE=${MAKE:-make}
t0=$(date +%s)
now() { date +%s; }
fail() { echo "newkernel: FAIL: $*" >&2; exit 1; }

mkdir -p "$OUT/dl" "$OUT/apt/lists/partial" "$OUT/apt/cache/archives/partial"

# 1. qemu
scripts/deps.sh qemu-system-x86 || fail "cannot install qemu-system-x86 (scripts/deps.sh failed)"
command -v qemu-system-x86_64 >/dev/null 2>&1 ||
	fail "qemu-system-x86_64 not found after installing qemu-system-x86"

# 2. the kernel, from Debian $SUITE through a private apt configuration
# The mirror is the one this machine's own apt configuration uses for Debian
# (deb822 .sources files or one-line sources.list), with the suite replaced.
mirror=${NEWKERNEL_MIRROR:-}
if [ -z "$mirror" ]; then
	mirror=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null |
		awk '/^URIs:/ { for (i = 2; i <= NF; i++) if ($i ~ /debian\/?$/ && $i !~ /security/) { print $i; exit } }')
fi
if [ -z "$mirror" ]; then
	mirror=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
		awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i ~ /debian\/?$/ && $i !~ /security/) { print $i; exit } }')
fi
[ -n "$mirror" ] || fail "no Debian mirror found in the apt configuration (set NEWKERNEL_MIRROR)"
echo "deb $mirror $SUITE main" >"$OUT/apt/sources.list"
APT_OPTS="-o Dir::Etc::SourceList=$here/$OUT/apt/sources.list -o Dir::Etc::SourceParts=/dev/null
 -o Dir::State::Lists=$here/$OUT/apt/lists -o Dir::Cache=$here/$OUT/apt/cache"
find_pkg() {
	# shellcheck disable=SC2086
	apt-cache $APT_OPTS search --names-only '^linux-image-7\.[0-9.]+\+deb[0-9]+-cloud-amd64$' \
		2>/dev/null | awk '{print $1}' | sort -V | tail -n 1
}
pkg=${NEWKERNEL_PKG:-}
if [ -z "$pkg" ]; then
	pkg=$(find_pkg)
	if [ -z "$pkg" ]; then
		echo "newkernel: apt-get update ($SUITE, private lists)"
		# shellcheck disable=SC2086
		apt-get $APT_OPTS update -qq || fail "apt-get update of $SUITE failed"
		pkg=$(find_pkg)
	fi
	[ -n "$pkg" ] || fail "apt-cache finds no linux-image-7.*-cloud-amd64 in Debian $SUITE"
fi
kdir=$OUT/$pkg
# apt-get download $1 and unpack it into $kdir/root; 0 if it arrived.
fetch() {
	rm -f "$OUT/dl/"*.deb
	# shellcheck disable=SC2086
	(cd "$OUT/dl" && apt-get $APT_OPTS download -q "$1" 2>&1) |
		grep -v '^W: Download is performed unsandboxed' || true
	deb=$(ls "$OUT/dl/${1}_"*.deb 2>/dev/null | head -n 1)
	[ -n "$deb" ] || return 1
	dpkg-deb -x "$deb" "$kdir/root" || fail "dpkg-deb -x $deb failed"
	rm -f "$deb"
}
if [ ! -s "$kdir/vmlinuz" ]; then
	echo "newkernel: downloading $pkg"
	rm -rf "$kdir/root"
	mkdir -p "$kdir/root"
	fetch "$pkg" || fail "apt-get download $pkg failed"
	# Newer Debian kernels keep the image in linux-binary-*, a dependency,
	# as /usr/lib/modules/VERSION/vmlinuz.
	img() { find "$kdir/root" -type f \( -name 'vmlinuz-*' -o -name vmlinuz \) | head -n 1; }
	if [ -z "$(img)" ]; then
		bin="linux-binary-${pkg#linux-image-}"
		echo "newkernel: downloading $bin (holds the kernel image)"
		fetch "$bin" || fail "apt-get download $bin failed"
	fi
	[ -n "$(img)" ] || fail "no vmlinuz in $pkg or its linux-binary package"
	cp "$(img)" "$kdir/vmlinuz.tmp"
	mv "$kdir/vmlinuz.tmp" "$kdir/vmlinuz"
	rm -rf "$kdir/root"
fi
echo "newkernel: kernel $pkg"
t_kernel=$(now)

# 3. the live binary, the examples, and every library they load
$MAKE --no-print-directory O="$O" live-tests examples tools || fail "building the live tier failed"
gcc -std=c11 -O2 -Wall -Wextra -Werror -D_GNU_SOURCE -static -DGUEST_TEST_TIMEOUT="$TIMEOUT" \
	-o "$OUT/init" tests/oldkernel/init.c || fail "building the guest's /init failed"
files="$O/libiouring-restrict.so.1=/libiouring-restrict.so.1"
for e in "$O"/examples/*; do
	files="$files $e=/examples/$(basename "$e")"
done
# The CLI and the program it runs under policies (tests/live/test_live_cli.c).
files="$files $O/tools/iour-restrict=/tools/iour-restrict $O/tests/uring-try=/tests/uring-try"
# shellcheck disable=SC2046
libs=$(ldd "$O/tests/live" "$O"/examples/* "$O/tools/iour-restrict" "$O/tests/uring-try" |
	awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// {print $1}' | sort -u)
for l in $libs; do
	case "$l" in
	*libiouring-restrict*) ;;
	*) files="$files $l=$l" ;;
	esac
done
# The live binary is /tests/live: the examples are found at ../examples.
cp "$O/tests/live" "$OUT/live"
# shellcheck disable=SC2086
python3 scripts/mkinitramfs.py "$OUT/initrd.cpio" "$OUT/init" "$OUT/live" $files ||
	fail "writing the initramfs failed"
t_build=$(now)

# 4. boot
log=$OUT/serial.log
set +e
timeout -k 10 "$TIMEOUT" qemu-system-x86_64 -machine q35,accel=tcg -m 1024 -nographic -no-reboot \
	-kernel "$kdir/vmlinuz" -initrd "$OUT/initrd.cpio" \
	-append "console=ttyS0 panic=-1 quiet" </dev/null >"$log" 2>&1
qrc=$?
set -e
t_boot=$(now)
tr -d '\r' <"$log" | sed 's/^.*guest kernel:/guest kernel:/' |
	grep -E '^(guest kernel:|\[live\] (live|\[(PASS|FAIL|SKIP|----)\])|[0-9]+ passed, [0-9]+ failed$|FAIL)' || true
echo "newkernel: times: kernel $((t_kernel - t0)) s, build $((t_build - t_kernel)) s," \
	"boot+tests $((t_boot - t_build)) s"
log_tail() {
	echo "newkernel: last lines of $log:" >&2
	tr -d '\r' <"$log" | sed 's/\x1b\[[0-9;?]*[A-Za-z]//g; s/\x1b[a-z]//g' | tail -n 40 >&2
}
if [ "$qrc" -eq 124 ] || [ "$qrc" -eq 137 ]; then
	log_tail
	fail "qemu timed out after $TIMEOUT s (NEWKERNEL_TIMEOUT; log: $log)"
fi
summary=$(tr -d '\r' <"$log" | grep -E '^[0-9]+ passed, [0-9]+ failed$' | tail -n 1)
if [ -z "$summary" ]; then
	log_tail
	fail "no summary from the guest (qemu exit status $qrc, log: $log)"
fi
passed=${summary%% passed*}
failed=${summary#*passed, }
failed=${failed%% failed}
skipped_task=$(tr -d '\r' <"$log" | grep -cE '^\[live\] \[SKIP\] live_(task|ring_bpf)' || true)
if [ "$passed" -gt 0 ] && [ "$failed" -eq 0 ] && [ "$skipped_task" -eq 0 ]; then
	echo "newkernel: $pkg: $summary"
	exit 0
fi
[ "$skipped_task" -eq 0 ] ||
	echo "newkernel: $skipped_task task-level or ring-filter tests were skipped" >&2
echo "newkernel: FAIL: $pkg: $summary" >&2
exit 1
