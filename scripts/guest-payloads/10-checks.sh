# SPDX-License-Identifier: MIT
# Payload (scripts/guest-initramfs.sh): the kernel-generation checks,
# tests/oldkernel/t_*.c, static binaries linked with a static build of the
# library made for them alone ($O/guests/lib: gcc -O2, no sanitizers,
# whatever flags $O was built with).  They check the probe's level and
# answers against the kernel's own QUERY/PROBE, the ring restriction matrix,
# the planner's plan executed and confirmed by the enforcement check, the
# fallback and the companion, with expectations per kernel generation.
LIBO=$G/lib
$MAKE --no-print-directory O="$LIBO" CC="${CC_STATIC:-gcc}" CFLAGS="-O2" SAN= CPPFLAGS= \
	EXTRA_CFLAGS= LDFLAGS= "$LIBO/libiouring-restrict.a" >&2 || fail "building the static library failed"
for src in tests/oldkernel/t_*.c; do
	name=$(basename "$src" .c)
	${CC_STATIC:-gcc} -std=c11 -O2 -Wall -Wextra -Werror -D_GNU_SOURCE -Iinclude -Ilib \
		-Itests/oldkernel -static -o "$GB/$name" "$src" "$LIBO/libiouring-restrict.a" ||
		fail "building $src failed"
	guest_test "$GB/$name"
done
