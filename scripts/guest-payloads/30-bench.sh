# SPDX-License-Identifier: MIT
# Payload (scripts/guest-initramfs.sh): the quick mode of the guest
# benchmark (bench/guest/bench_guest.c, make bench-guest), static, linked
# with the static library 10-checks.sh built.  Without timing: each
# configuration (no restriction, the task allow-list, a 4-instruction
# filter, a 1,000-entry set filter, 4 stacked filters) in its own child,
# its denied requests checked to get EACCES there, and the simulator's
# instruction counts checked; before 7.0 the restricted ones skip.
LIBO=$G/lib
$MAKE --no-print-directory O="$LIBO" CC="${CC_STATIC:-gcc}" CFLAGS="-O2" SAN= CPPFLAGS= \
	EXTRA_CFLAGS= LDFLAGS= "$LIBO/libiouring-restrict.a" >&2 || fail "building the static library failed"
${CC_STATIC:-gcc} -std=c11 -O2 -Wall -Wextra -Werror -D_GNU_SOURCE -Iinclude -Ilib \
	-Itests/oldkernel -static -o "$GB/bench_guest" bench/guest/bench_guest.c \
	"$LIBO/libiouring-restrict.a" -lm || fail "building bench/guest/bench_guest.c failed"
guest_test "$GB/bench_guest"
