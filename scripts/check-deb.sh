#!/bin/sh
# `make check-deb` after `make deb`: the packages in $O/deb are
#   1. lintian-clean: no error and no warning on any package (overrides
#      live in debian/*.lintian-overrides, each with the reason);
#   2. tested as installed: debian/tests (autopkgtest) in a fresh Debian 12
#      root made by debootstrap (minbase, from this machine's apt mirror),
#      with autopkgtest's chroot runner: it installs the .debs and the
#      tests' dependencies there, and runs the tests from a copy of the
#      source tree (which holds no build output).
# The base root is built once and kept as $DEB_ROOT_CACHE/base.tar
# (163 s and 195 MB the first time, measured); every run unpacks a new copy.
# Needs root (debootstrap, chroot, mounts): without it, step 2 is skipped
# and says so (scripts/skip-note.sh).
# Environment: O (build directory), DEB_ROOT_CACHE.
set -eu
O=${O:-build}
DEB_ROOT_CACHE=${DEB_ROOT_CACHE:-/var/tmp/iour-deb-root}
top=$(pwd)
out=$top/$O/deb
fail() { echo "check-deb: FAILED: $*"; exit 1; }
changes=
for f in "$out"/*.changes; do [ -f "$f" ] && changes=$f; done
[ -n "$changes" ] || fail "no .changes in $O/deb (make deb)"
scripts/need.sh lintian:lintian autopkgtest:autopkgtest debootstrap:debootstrap

# ---- 1. lintian
t0=$(date +%s)
rc=0
lintian --fail-on error,warning --display-info \
	"$changes" > "$out/lintian.log" 2>&1 || rc=$?
grep -v 'running with root privileges' "$out/lintian.log" | sed 's/^/lintian: /' || true
[ $rc -eq 0 ] || fail "lintian found errors or warnings (exit $rc; $O/deb/lintian.log)"
echo "check-deb: lintian: no error, no warning ($(grep -c '^[EW]:' "$out/lintian.log") E/W, $(grep -c '^I:' "$out/lintian.log") info) in $(( $(date +%s) - t0 )) s"

# ---- 2. autopkgtest in a fresh Debian 12 root
if [ "$(id -u)" -ne 0 ]; then
	echo "check-deb: SKIPPED the autopkgtests: a fresh root needs root (debootstrap, chroot)"
	scripts/skip-note.sh "autopkgtest in a fresh Debian 12 root: needs root"
	exit 0
fi
src_list=/etc/apt/sources.list.d/debian.sources
mirror=$(awk '/^URIs:/ { print $2; exit }' "$src_list" 2>/dev/null || true)
[ -n "$mirror" ] || mirror=$(awk '$1 == "deb" && $3 == "bookworm" { print $2; exit }' /etc/apt/sources.list 2>/dev/null || true)
[ -n "$mirror" ] || mirror=http://deb.debian.org/debian
base=$DEB_ROOT_CACHE/base.tar
if [ ! -f "$base" ]; then
	t0=$(date +%s)
	mkdir -p "$DEB_ROOT_CACHE"
	rm -rf "$DEB_ROOT_CACHE/base"
	echo "check-deb: debootstrap --variant=minbase bookworm from $mirror (once; cached in $base)"
	debootstrap --variant=minbase bookworm "$DEB_ROOT_CACHE/base" "$mirror" \
		> "$DEB_ROOT_CACHE/debootstrap.log" 2>&1 ||
		{ tail -n 20 "$DEB_ROOT_CACHE/debootstrap.log"; fail "debootstrap"; }
	tar -C "$DEB_ROOT_CACHE/base" -cf "$base.tmp" . && mv "$base.tmp" "$base"
	rm -rf --one-file-system "$DEB_ROOT_CACHE/base"
	echo "check-deb: base root made in $(( $(date +%s) - t0 )) s"
fi
t0=$(date +%s)
root=$(mktemp -d "$DEB_ROOT_CACHE/root.XXXXXX")
cleanup() {
	for m in dev/pts dev sys proc; do
		if mountpoint -q "$root/$m"; then umount "$root/$m"; fi
	done
	rm -rf --one-file-system "$root"
}
trap cleanup EXIT INT TERM
tar -C "$root" -xf "$base"
# The machine's apt sources and mirror options, as a new machine has them.
rm -f "$root/etc/apt/sources.list"
if [ -f "$src_list" ]; then cp "$src_list" "$root/etc/apt/sources.list.d/"; else cp /etc/apt/sources.list "$root/etc/apt/"; fi
for f in /etc/apt/apt.conf.d/*; do
	if grep -qs 'Acquire::' "$f"; then cp "$f" "$root/etc/apt/apt.conf.d/"; fi
done
cp /etc/resolv.conf "$root/etc/resolv.conf"
mount --bind /proc "$root/proc"
mount --bind /sys "$root/sys"
mount --bind /dev "$root/dev"
mount --bind /dev/pts "$root/dev/pts"
chroot "$root" apt-get update -q > "$out/apt-update.log" 2>&1 ||
	{ cat "$out/apt-update.log"; fail "apt-get update in the fresh root"; }
rm -rf "$out/autopkgtest"
rc=0
# The source tree as autopkgtest reads it: a copy without build output
# (the tests use the installed packages, and a few of the project's
# source files: tests/progs/uring_try.c, examples/python).
autopkgtest --output-dir "$out/autopkgtest" "$out"/*.deb "$out/src/" -- chroot "$root" \
	> "$out/autopkgtest.log" 2>&1 || rc=$?
grep -E '^(c-library|cli|cli-run|python) ' "$out/autopkgtest/summary" 2>/dev/null | sed 's/^/autopkgtest: /' || true
case $rc in
0) echo "check-deb: autopkgtest: all tests passed in a fresh Debian 12 root ($(( $(date +%s) - t0 )) s)" ;;
2)
	echo "check-deb: autopkgtest: passed, some SKIPPED ($(( $(date +%s) - t0 )) s):"
	grep -i 'skip' "$out/autopkgtest/summary" | sed 's/^/  /'
	grep -i 'skip' "$out/autopkgtest/summary" | while read -r t _; do
		scripts/skip-note.sh "autopkgtest $t skipped (see $O/deb/autopkgtest/$t-stdout)"
	done ;;
*) tail -n 60 "$out/autopkgtest.log"; fail "autopkgtest exit $rc ($O/deb/autopkgtest.log, $O/deb/autopkgtest/)" ;;
esac
