# SPDX-License-Identifier: MIT
# Payload (scripts/guest-initramfs.sh): tests/guest/liburing_coexist.c,
# the library's task policy beside rings made and restricted with
# liburing's own helpers (io_uring_register_restrictions, and the BPF
# filter helpers io_uring_register_bpf_filter / _task of liburing 2.14+).
# Debian 12's liburing (2.3) has no filter helpers, so the program is
# built against Debian sid's liburing-dev: downloaded with private apt
# lists (scripts/guest.sh GUEST_RESOLVE_ONLY=1 in its own build
# directory, $G/liburing), unpacked there, its liburing.a linked in;
# nothing is installed.  tests/guest/compat supplies the one kernel header
# Debian 12 lacks.  The library is the shared one (/libiouring-restrict.so.1).
LU=$G/liburing
lu_pkg=$(O=$LU GUEST_RESOLVE_ONLY=1 scripts/guest.sh sid '^liburing-dev$' | tail -n 1) ||
	fail "cannot find liburing-dev in Debian sid"
lu_ver=${lu_pkg#* }
if [ "$(cat "$LU/version" 2>/dev/null)" != "$lu_ver" ]; then
	echo "guest-initramfs: downloading liburing-dev $lu_ver (Debian sid)"
	lu_apt=$(pwd)/$LU/guests/apt/sid
	rm -rf "$LU/root" "$LU/dl"
	mkdir -p "$LU/dl"
	(cd "$LU/dl" && apt-get -o Dir::Etc::SourceList="$lu_apt/sources.list" \
		-o Dir::Etc::SourceParts=/dev/null -o Dir::State::Lists="$lu_apt/lists" \
		-o Dir::Cache="$lu_apt/cache" -o Debug::NoLocking=1 download -q liburing-dev 2>&1) |
		grep -v '^W: Download is performed unsandboxed' >&2 || true
	deb=
	for f in "$LU"/dl/liburing-dev_*.deb; do [ -f "$f" ] && deb=$f; done
	[ -n "$deb" ] || fail "apt-get download liburing-dev (sid) failed"
	dpkg-deb -x "$deb" "$LU/root" || fail "dpkg-deb -x $deb failed"
	echo "$lu_ver" >"$LU/version"
fi
lu_a=$(find "$LU/root" -name liburing.a | head -n 1)
[ -n "$lu_a" ] || fail "no liburing.a in sid's liburing-dev $lu_ver"
# shellcheck disable=SC2016 # $ORIGIN is for the linker
${CC:-cc} -std=c11 -O2 -Wall -Wextra -Werror -D_GNU_SOURCE -I"$LU/root/usr/include" -Iinclude \
	-idirafter tests/guest/compat -o "$GB/liburing_coexist" tests/guest/liburing_coexist.c \
	"$lu_a" -L"$O" -Wl,-rpath,'$ORIGIN/..' -liouring-restrict ||
	fail "building tests/guest/liburing_coexist.c against liburing $lu_ver failed"
guest_test "$GB/liburing_coexist"
