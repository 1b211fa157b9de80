#!/bin/sh
# SPDX-License-Identifier: MIT
# One Debian kernel booted under qemu (KVM or TCG, GUEST_ACCEL) with the
# guest suite's initramfs; the helper every guest run uses (make
# check-kernels, check-oldkernel, check-newkernel; doc/design.md, "Real
# kernels under qemu").
#
# usage: scripts/guest.sh SUITE PATTERN [INITRD]
#   SUITE    a Debian suite (bullseye, bookworm, trixie, trixie-backports,
#            sid, experimental, ...)
#   PATTERN  an extended regex for the kernel package names of that suite
#            (apt-cache search --names-only); the newest match (sort -V) wins
#   INITRD   the guest suite's initramfs (default: built by
#            scripts/guest-initramfs.sh into $O/guests/initrd.cpio)
#
# The package lists are private ($O/guests/apt/SUITE): the machine's own apt
# configuration gives the Debian mirror (deb822 .sources or sources.list),
# the suite is replaced, and nothing of the machine's apt state is touched.
# Stable suites also get SUITE-updates and SUITE-security.  Newer Debian
# kernels keep the image in a linux-binary-* dependency; the helper fetches
# it when the linux-image package holds no vmlinuz.  The cloud kernels have
# everything the guest needs built in (serial console, tmpfs, devtmpfs), so
# no module goes into the initramfs.
#
# The last line of standard output is the verdict:
#   guest: SUITE PACKAGE level L: N passed, M failed, K skipped, S s
# and $O/guests/SUITE/result.json holds the same as one JSON object; the
# skip reasons the guest printed are in $O/guests/SUITE/skips.txt (count,
# reason).  Exit status 0 only if the guest ran, reported N > 0 and M = 0.
# A kernel that cannot be found, downloaded or booted, a guest that times
# out or prints no verdict: a loud failure, never a pass.
#
# Environment: O (build directory, default build), GUEST_TIMEOUT (seconds
# for boot and suite, default 900), GUEST_MEM (MiB, default 1024),
# GUEST_ACCEL (auto, kvm or tcg; see "boot" below), GUEST_KVM_START
# (seconds a KVM boot has to start /init, default 30), GUEST_PKG (a package
# name instead of the newest match), GUEST_MIRROR (the
# Debian mirror), GUEST_SECURITY_MIRROR, MAKE; GUEST_RESOLVE_ONLY=1 prints
# "PACKAGE VERSION" of the newest match and stops.
set -eu

here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
[ $# -ge 2 ] || { sed -n '8,15p' "$0" >&2; exit 2; }
SUITE=$1
PATTERN=$2
O=${O:-build}
INITRD=${3:-}
TIMEOUT=${GUEST_TIMEOUT:-900}
MEM=${GUEST_MEM:-1024}
OUT=$O/guests/$SUITE
case $O in
/*) APT=$O/guests/apt/$SUITE ;;
*) APT=$here/$O/guests/apt/$SUITE ;;
esac
t0=$(date +%s)
now() { date +%s; }
tag="guest $SUITE"
fail() {
	echo "$tag: FAIL: $*" >&2
	mkdir -p "$OUT"
	printf '{"suite": "%s", "kernel": "%s", "error": "%s"}\n' "$SUITE" "${pkg:-?}" \
		"$(echo "$*" | tr -d '"\\')" >"$OUT/result.json"
	exit 1
}

mkdir -p "$OUT/dl" "$APT/lists/partial" "$APT/cache/archives/partial"
rm -f "$OUT/result.json" "$OUT/skips.txt"

# 1. qemu
command -v qemu-system-x86_64 >/dev/null 2>&1 ||
	scripts/deps.sh qemu-system-x86 >&2 || fail "cannot install qemu-system-x86"
command -v qemu-system-x86_64 >/dev/null 2>&1 ||
	fail "qemu-system-x86_64 not found after installing qemu-system-x86"

# 2. the kernel, through private apt lists for $SUITE
mirror_of() { # $1: "main" or "security"
	{
		cat /etc/apt/sources.list.d/*.sources 2>/dev/null |
			awk '/^URIs:/ { for (i = 2; i <= NF; i++) print $i }'
		cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
			awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) print $i }'
	} | if [ "$1" = security ]; then grep -E 'debian-security/?$'; else
		grep -E 'debian/?$' | grep -v security; fi | head -n 1
}
mirror=${GUEST_MIRROR:-$(mirror_of main)}
[ -n "$mirror" ] || fail "no Debian mirror in the apt configuration (set GUEST_MIRROR)"
sec=${GUEST_SECURITY_MIRROR:-$(mirror_of security)}
{
	echo "deb $mirror $SUITE main"
	case $SUITE in
	*-*|sid|unstable|experimental|testing) ;;
	*)
		echo "deb $mirror $SUITE-updates main"
		[ -z "$sec" ] || echo "deb $sec $SUITE-security main"
		;;
	esac
} >"$APT/sources.list"
APT_OPTS="-o Dir::Etc::SourceList=$APT/sources.list -o Dir::Etc::SourceParts=/dev/null
 -o Dir::State::Lists=$APT/lists -o Dir::Cache=$APT/cache -o Debug::NoLocking=1"
find_pkg() {
	# shellcheck disable=SC2086
	apt-cache $APT_OPTS search --names-only "$PATTERN" 2>/dev/null | awk '{print $1}' |
		grep -vE -- '-(dbg|unsigned)$' | sort -V | tail -n 1
}
apt_update() {
	echo "$tag: apt-get update (private lists in $APT)"
	# shellcheck disable=SC2086
	apt-get $APT_OPTS update -qq >&2 || fail "apt-get update of $SUITE failed"
}
pkg=${GUEST_PKG:-}
updated=0
if [ -z "$pkg" ]; then
	# lists older than a day are refreshed: the mirror drops old versions
	if [ -n "$(find "$APT/lists" -maxdepth 1 -name '*_Packages*' -mtime -1 2>/dev/null)" ]; then
		pkg=$(find_pkg)
	fi
	if [ -z "$pkg" ]; then
		apt_update
		updated=1
		pkg=$(find_pkg)
	fi
	[ -n "$pkg" ] || fail "no package matching $PATTERN in Debian $SUITE ($mirror)"
fi
if [ -n "${GUEST_RESOLVE_ONLY:-}" ]; then
	# shellcheck disable=SC2086
	echo "$pkg $(apt-cache $APT_OPTS show "$pkg" 2>/dev/null | sed -n 's/^Version: //p' | sort -V | tail -n 1)"
	exit 0
fi
kdir=$O/guests/kernels/$pkg
fetch() { # apt-get download $1 and unpack it into $kdir/root; 0 if it arrived
	rm -f "$OUT/dl/"*.deb
	# shellcheck disable=SC2086
	(cd "$OUT/dl" && apt-get $APT_OPTS download -q "$1" 2>&1) |
		grep -v '^W: Download is performed unsandboxed' >&2 || true
	deb=$(ls "$OUT/dl/${1}_"*.deb 2>/dev/null | head -n 1)
	[ -n "$deb" ] || return 1
	dpkg-deb -x "$deb" "$kdir/root" || fail "dpkg-deb -x $deb failed"
	rm -f "$deb"
}
fetch_retry() {
	fetch "$1" && return 0
	[ "$updated" -eq 0 ] || return 1
	apt_update # stale lists may name a version the mirror no longer has
	updated=1
	fetch "$1"
}
if [ ! -s "$kdir/vmlinuz" ]; then
	echo "$tag: downloading $pkg"
	rm -rf "$kdir/root"
	mkdir -p "$kdir/root"
	fetch_retry "$pkg" || fail "apt-get download $pkg failed"
	img() { find "$kdir/root" -type f \( -name 'vmlinuz-*' -o -name vmlinuz \) | head -n 1; }
	if [ -z "$(img)" ]; then
		bin="linux-binary-${pkg#linux-image-}"
		echo "$tag: downloading $bin (holds the kernel image)"
		fetch_retry "$bin" || fail "apt-get download $bin failed"
	fi
	[ -n "$(img)" ] || fail "no vmlinuz in $pkg or its linux-binary package"
	cp "$(img)" "$kdir/vmlinuz.tmp"
	mv "$kdir/vmlinuz.tmp" "$kdir/vmlinuz"
	rm -rf "$kdir/root"
fi
t_kernel=$(now)

# 3. the guest suite
if [ -z "$INITRD" ]; then
	O=$O scripts/guest-initramfs.sh >&2 || fail "building the guest suite failed"
	INITRD=$O/guests/initrd.cpio
fi
[ -s "$INITRD" ] || fail "no initramfs $INITRD"

# 4. boot
log=$OUT/serial.log
# GUEST_ACCEL: auto (default) boots with KVM where /dev/kvm can be opened
# and with TCG (slower, the timeouts allow for it) elsewhere; kvm or tcg
# force one.  Both run the same suite.  Some hosts hand out a /dev/kvm
# whose in-kernel instruction emulator stops a Debian guest early ("KVM
# internal error ... emulation failure": qemu then waits, paused, until the
# timeout); under auto such a boot is stopped as soon as the log says so and
# the guest is booted again under TCG, saying why.
ACCEL=${GUEST_ACCEL:-auto}
KVM_DEV=${GUEST_KVM_DEV:-/dev/kvm} # another path only for tests/scripts/guest-accel-selftest.sh
case $ACCEL in
auto)
	if [ -r "$KVM_DEV" ] && [ -w "$KVM_DEV" ]; then
		accel=kvm how="KVM"
	else
		accel=tcg how="TCG: /dev/kvm is absent or not usable"
	fi
	;;
kvm) accel=kvm how="KVM (GUEST_ACCEL=kvm)" ;;
tcg) accel=tcg how="TCG (GUEST_ACCEL=tcg)" ;;
*) fail "GUEST_ACCEL must be auto, kvm or tcg, not '$ACCEL'" ;;
esac
echo "$tag: booting $pkg ($how, log: $log)"
kvm_broken() { grep -q 'KVM internal error' "$log" 2>/dev/null; }
# A KVM that cannot run the guest does not always say so at once: on some
# hosts Debian's 5.10 and 6.1 kernels ran for about two minutes under KVM
# before the "KVM internal error" (the newer kernels stop within seconds).
# A guest's /init starts within 10 s even under TCG (bookworm's 6.1 on a
# busy two-CPU host: 9.4 s), sooner under KVM, so a KVM boot whose
# /init has not said "guest kernel:" after GUEST_KVM_START seconds (default
# 30) is stopped and booted under TCG, saying why, like a KVM error (on a
# host where KVM works but is slow, that costs time, never a result).
KVM_START=${GUEST_KVM_START:-30}
kvm_slow=0
kvm_started() { tr -d '\r' <"$log" 2>/dev/null | grep -q 'guest kernel:'; }
# no_timer_check: under TCG on a loaded machine the kernel's IO-APIC timer
# check can fail and panic before /init; a guest whose /init never started
# is booted once more, saying so.
boot() {
	set +e
	timeout -k 10 "$TIMEOUT" qemu-system-x86_64 -machine q35,accel=$accel -m "$MEM" -nographic \
		-no-reboot -kernel "$kdir/vmlinuz" -initrd "$INITRD" \
		-append "console=ttyS0 panic=-1 quiet no_timer_check clocksource=hpet" </dev/null >"$log" 2>&1 &
	qpid=$!
	if [ "$accel" = kvm ]; then
		kstart=$(now)
		while kill -0 "$qpid" 2>/dev/null; do
			if kvm_broken; then
				kill "$qpid" 2>/dev/null
				break
			fi
			if [ $(($(now) - kstart)) -ge "$KVM_START" ] && ! kvm_started; then
				kvm_slow=1
				kill "$qpid" 2>/dev/null
				break
			fi
			sleep 2
		done
	fi
	wait "$qpid"
	qrc=$?
	set -e
}
boot
if [ "$accel" = kvm ] && { kvm_broken || [ "$kvm_slow" -eq 1 ]; }; then
	if [ "$kvm_slow" -eq 1 ]; then
		echo "$tag: KVM could not run this guest (its /init did not start within $KVM_START s, GUEST_KVM_START)"
	else
		echo "$tag: KVM could not run this guest ($(grep -m 1 'KVM internal error' "$log" | tr -d '\r'))"
	fi
	if [ "$ACCEL" = kvm ]; then
		fail "$pkg: KVM failed and GUEST_ACCEL=kvm forbids falling back to TCG"
	fi
	accel=tcg
	echo "$tag: booting $pkg again under TCG"
	boot
fi
if ! tr -d '\r' <"$log" | grep -q 'guest kernel:'; then
	echo "$tag: the guest's /init did not start (qemu exit status $qrc); booting again"
	tr -d '\r' <"$log" | grep -m 3 -E 'panic|Panic' || true
	boot
fi
t_end=$(now)
secs=$((t_end - t0))
clean() { tr -d '\r' <"$log" | sed 's/\x1b\[[0-9;?]*[A-Za-z]//g; s/\x1b[a-z]//g'; }
clean | sed 's/^.*guest kernel:/guest kernel:/' |
	grep -E '^(guest kernel:|guest level:|\[[a-z_0-9.]+\] (FAIL|\[FAIL\])|[0-9]+ passed, )' || true
log_tail() {
	echo "$tag: last lines of $log:" >&2
	clean | tail -n 40 >&2
}
if [ "$qrc" -eq 124 ] || [ "$qrc" -eq 137 ]; then
	log_tail
	fail "$pkg: qemu timed out after $TIMEOUT s (GUEST_TIMEOUT)"
fi
summary=$(clean | grep -E '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' | tail -n 1)
if [ -z "$summary" ]; then
	log_tail
	fail "$pkg: no verdict from the guest (qemu exit status $qrc)"
fi
# shellcheck disable=SC2086 # three numbers, split on purpose
set -- $summary
passed=$1 failed=$3 skipped=$5
level=$(clean | sed -n 's/^.*guest level: \([0-9]*\).*/\1/p' | tail -n 1)
krel=$(clean | sed -n 's/^.*guest kernel: Linux \([^ ]*\) .*/\1/p' | tail -n 1)
# One line per skip: the live tier's "live: skipped:" echo repeats what
# Criterion's [SKIP] line says, so it is left out.
clean | grep -v '^\[live\] live: skipped: ' | sed -n 's/^.*skipped: //p' | sort | uniq -c |
	sort -rn >"$OUT/skips.txt"
printf '{"suite": "%s", "package": "%s", "kernel": "%s", "level": %s, "passed": %s, "failed": %s, "skipped": %s, "seconds": %s, "download_seconds": %s}\n' \
	"$SUITE" "$pkg" "${krel:-?}" "${level:-null}" "$passed" "$failed" "$skipped" "$secs" \
	"$((t_kernel - t0))" >"$OUT/result.json"
# On 7.0+ (level 4 and up) the task-level and ring-filter tests must run.
task_skips=0
if [ -n "$level" ] && [ "$level" -ge 4 ]; then
	task_skips=$(clean | grep -cE '^\[live\] \[SKIP\] live_(task|ring_bpf)' || true)
	[ "$task_skips" -eq 0 ] ||
		echo "$tag: FAIL: $task_skips task-level or ring-filter tests skipped on level $level" >&2
fi
verdict="guest: $SUITE $pkg level ${level:-?}: $passed passed, $failed failed, $skipped skipped, $secs s"
if [ "$passed" -gt 0 ] && [ "$failed" -eq 0 ] && [ -n "$level" ] && [ "$task_skips" -eq 0 ]; then
	echo "$verdict"
	exit 0
fi
[ -n "$level" ] || echo "$tag: the guest printed no 'guest level:' line" >&2
echo "$verdict"
exit 1
