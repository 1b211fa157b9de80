#!/bin/sh
# `make check-install`: install into a DESTDIR staging tree the way a
# distribution package does (PREFIX=/usr), build a consumer program with
# pkg-config against it (shared, and fully static with --static), run both,
# run the installed tools, pip-install the Python bindings and run their
# tests and examples against the staged library, check that
# LIBDIR/INCLUDEDIR/PKGCONFIGDIR/BINDIR overrides are honoured, then
# uninstall and check that none of our files
# are left.
# Environment: MAKE, CC, O (build directory), VERSION, PYTHON.
set -eu
MAKE=${MAKE:-make}
CC=${CC:-cc}
O=${O:-build}
top=$(pwd)
base=$top/$O/install-check
rm -rf "$base"
mkdir -p "$base"
fail() { echo "check-install: FAILED: $*"; exit 1; }
m() { $MAKE --no-print-directory -s "$@" > "$base/make.log" 2>&1 || { cat "$base/make.log"; fail "make $*"; }; }

# ---- 1. PREFIX=/usr into a staging tree
stage=$base/stage
m install DESTDIR="$stage" PREFIX=/usr
for f in usr/lib/libiouring-restrict.a usr/lib/libiouring-restrict.so \
	usr/lib/libiouring-restrict.so.1 "usr/lib/libiouring-restrict.so.$VERSION" \
	usr/lib/pkgconfig/iouring-restrict.pc usr/include/iouring_restrict/iouring_restrict.h; do
	[ -e "$stage/$f" ] || fail "missing $f"
done
for h in include/iouring_restrict/*.h; do
	cmp -s "$h" "$stage/usr/include/iouring_restrict/$(basename "$h")" || fail "header $h not installed"
done
[ "$(readlink "$stage/usr/lib/libiouring-restrict.so")" = libiouring-restrict.so.1 ] ||
	fail "libiouring-restrict.so does not link to the SONAME"
[ "$(readlink "$stage/usr/lib/libiouring-restrict.so.1")" = "libiouring-restrict.so.$VERSION" ] ||
	fail "libiouring-restrict.so.1 does not link to the real file"
readelf -d "$stage/usr/lib/libiouring-restrict.so.$VERSION" | grep -q 'SONAME.*\[libiouring-restrict\.so\.1\]' ||
	fail "SONAME is not libiouring-restrict.so.1"
# The manual pages: iour-restrict(1) and its command pages,
# iouring-restrict(7) and one section 3
# page per public function, under MANDIR (default PREFIX/share/man), and
# man finds them there.
for f in usr/share/man/man1/iour-restrict.1 usr/share/man/man7/iouring-restrict.7; do
	[ -s "$stage/$f" ] || fail "missing $f"
done
# One iour-restrict-COMMAND(1) per command section of doc/cli.md.
ncmd=0
for c in $(python3 scripts/md2man.py --list-commands doc/cli.md); do
	ncmd=$((ncmd + 1))
	[ -s "$stage/usr/share/man/man1/iour-restrict-$c.1" ] || fail "no installed man page for iour-restrict $c"
done
[ "$ncmd" -gt 0 ] || fail "doc/cli.md lists no command section"
MANPATH="$stage/usr/share/man" man -w iour-restrict-run > /dev/null 2>&1 ||
	fail "man does not find iour-restrict-run(1) under the staged MANDIR"
for fn in $(python3 scripts/gen-man3.py --list include/iouring_restrict/*.h); do
	[ -s "$stage/usr/share/man/man3/$fn.3" ] || fail "no installed man page for $fn"
done
MANPATH="$stage/usr/share/man" man -w iour_ring_apply > /dev/null 2>&1 ||
	fail "man does not find iour_ring_apply(3) under the staged MANDIR"
grep -qx 'prefix=/usr' "$stage/usr/lib/pkgconfig/iouring-restrict.pc" ||
	fail "the installed .pc does not say prefix=/usr"
# Every tool is installed in BINDIR and finds the staged library.
for t in tools/*.c; do
	[ -e "$t" ] || continue
	b=$stage/usr/bin/$(basename "$t" .c)
	[ -x "$b" ] || fail "tool $(basename "$b") not installed in BINDIR"
	LD_LIBRARY_PATH="$stage/usr/lib" "$b" --version > "$base/tool.out" 2>&1 ||
		fail "$(basename "$b") --version: $(cat "$base/tool.out")"
	grep -q "$VERSION" "$base/tool.out" || fail "$(basename "$b") --version does not say $VERSION"
done

export PKG_CONFIG_PATH="$stage/usr/lib/pkgconfig"
export PKG_CONFIG_LIBDIR="$stage/usr/lib/pkgconfig"   # never the system's .pc files
export PKG_CONFIG_SYSROOT_DIR="$stage"
pkg-config --validate iouring-restrict || fail "pkg-config --validate"
ver=$(pkg-config --modversion iouring-restrict)
[ "$ver" = "$VERSION" ] || fail ".pc version $ver, expected $VERSION"
cflags=$(pkg-config --cflags iouring-restrict)
libs=$(pkg-config --libs iouring-restrict)
slibs=$(pkg-config --static --libs iouring-restrict)
echo "check-install: pkg-config --cflags --libs: $cflags $libs"
echo "check-install: pkg-config --static --libs: $slibs"

# ---- 2. consumer, shared
# shellcheck disable=SC2086
$CC -std=c11 -Wall -Wextra -Werror -DEXPECT_VERSION="\"$ver\"" tests/install/consumer.c \
	$cflags $libs -o "$base/consumer-shared" || fail "building the shared consumer"
lib=$(LD_LIBRARY_PATH="$stage/usr/lib" ldd "$base/consumer-shared" | sed -n 's/.*libiouring-restrict\.so\.1 => \([^ ]*\).*/\1/p')
[ "$lib" = "$stage/usr/lib/libiouring-restrict.so.1" ] ||
	fail "the shared consumer resolves libiouring-restrict.so.1 to '$lib', not the staged copy"
LD_LIBRARY_PATH="$stage/usr/lib" "$base/consumer-shared" || fail "running the shared consumer"

# ---- 3. consumer, static (--static flags, fully static link)
# shellcheck disable=SC2086
$CC -std=c11 -Wall -Wextra -Werror -static -DEXPECT_VERSION="\"$ver\"" tests/install/consumer.c \
	$cflags $slibs -o "$base/consumer-static" || fail "building the static consumer"
if readelf -d "$base/consumer-static" 2>/dev/null | grep -q NEEDED; then
	fail "the static consumer still needs shared libraries"
fi
"$base/consumer-static" || fail "running the static consumer"

# ---- 3b. the Python bindings, pip-installed, against the staged library
scripts/check-install-python.sh "$stage/usr/lib" "$base/python"

# ---- 4. uninstall leaves none of our files
m uninstall DESTDIR="$stage" PREFIX=/usr
left=$(find "$stage" ! -type d)
[ -z "$left" ] || fail "uninstall left files behind: $left"

# ---- 5. LIBDIR / INCLUDEDIR / PKGCONFIGDIR overrides
alt=$base/alt
m install DESTDIR="$alt" PREFIX=/opt/iour LIBDIR=/opt/iour/lib64 INCLUDEDIR=/opt/iour/inc \
	PKGCONFIGDIR=/opt/iour/share/pkgconfig BINDIR=/opt/iour/sbin MANDIR=/opt/iour/man
[ -s "$alt/opt/iour/man/man7/iouring-restrict.7" ] || fail "MANDIR not honoured"
[ -s "$alt/opt/iour/man/man1/iour-restrict-learn.1" ] || fail "MANDIR not honoured for the command pages"
[ -e "$alt/opt/iour/lib64/libiouring-restrict.so.$VERSION" ] || fail "LIBDIR not honoured"
[ -e "$alt/opt/iour/inc/iouring_restrict/iouring_restrict.h" ] || fail "INCLUDEDIR not honoured"
pc=$alt/opt/iour/share/pkgconfig/iouring-restrict.pc
[ -e "$pc" ] || fail "PKGCONFIGDIR not honoured"
if ls tools/*.c > /dev/null 2>&1; then
	[ -n "$(ls "$alt/opt/iour/sbin" 2>/dev/null)" ] || fail "BINDIR not honoured"
fi
grep -qx 'libdir=/opt/iour/lib64' "$pc" && grep -qx 'includedir=/opt/iour/inc' "$pc" ||
	fail "the .pc does not follow LIBDIR/INCLUDEDIR"
m uninstall DESTDIR="$alt" PREFIX=/opt/iour LIBDIR=/opt/iour/lib64 INCLUDEDIR=/opt/iour/inc \
	PKGCONFIGDIR=/opt/iour/share/pkgconfig BINDIR=/opt/iour/sbin MANDIR=/opt/iour/man
left=$(find "$alt" ! -type d)
[ -z "$left" ] || fail "uninstall (overridden paths) left files behind: $left"

# The build tree's .pc is back to the default paths for the next `make`.
m lib
echo "check-install: ok: staged install, shared + static consumers, tools, man pages, uninstall clean, path overrides"
