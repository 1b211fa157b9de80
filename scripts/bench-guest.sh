#!/bin/sh
# SPDX-License-Identifier: MIT
# make bench-guest: the cost of restrictions and filters on Debian sid's
# newest cloud kernel (7.x), booted under qemu (TCG) by scripts/guest.sh
# with an initramfs holding bench/guest/bench_guest alone, run with
# --bench (doc/design.md, "The cost of a filter in the 7.x guest").  The
# guest prints one line "BENCH_GUEST_JSON {...}"; its object, with the
# kernel and the run's seconds, is merged into $O/bench.json (what make
# bench wrote there stays) and printed by scripts/bench-merge.py.
#
# The guest run has its own directory, $O/bench-guest (serial log in
# $O/bench-guest/guests/sid/serial.log), so check-kernels' results for sid
# stay as they are; the kernel packages and apt lists are shared with it
# ($O/guests/kernels and $O/guests/apt, through symbolic links).
#
# Environment: O (default build), MAKE, BENCH_GUEST_REPS (rounds, default
# 11), BENCH_GUEST_SUITE (default sid), GUEST_TIMEOUT (default 900).
set -eu

here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
O=${O:-build}
MAKE=${MAKE:-make}
REPS=${BENCH_GUEST_REPS:-11}
SUITE=${BENCH_GUEST_SUITE:-sid}
B=$O/bench-guest
t0=$(date +%s)
fail() { echo "bench-guest: FAIL: $*" >&2; exit 1; }

rm -rf "$B/root" "$B/initrd.cpio"
mkdir -p "$B/root/tests" "$B/guests" "$O/guests/kernels" "$O/guests/apt"
ln -sfn ../../guests/kernels "$B/guests/kernels"
ln -sfn ../../guests/apt "$B/guests/apt"

# the program, static, with a static library built for it alone
LIBO=$O/guests/lib
$MAKE --no-print-directory O="$LIBO" CC="${CC_STATIC:-gcc}" CFLAGS="-O2" SAN= CPPFLAGS= \
	EXTRA_CFLAGS= LDFLAGS= "$LIBO/libiouring-restrict.a" >&2 || fail "building the static library failed"
${CC_STATIC:-gcc} -std=c11 -O2 -Wall -Wextra -Werror -D_GNU_SOURCE -Iinclude -Ilib \
	-Itests/oldkernel -static -o "$B/root/bench_guest" bench/guest/bench_guest.c \
	"$LIBO/libiouring-restrict.a" -lm || fail "building bench/guest/bench_guest.c failed"
gcc -std=c11 -O2 -Wall -Wextra -Werror -D_GNU_SOURCE -static -DGUEST_TEST_TIMEOUT=600 \
	-o "$B/root/init" tests/oldkernel/init.c || fail "building the guest's /init failed"
# /init runs /tests/bench.cmd (tests/oldkernel/init.c): one check, passed
# if the program exits 0 having printed its JSON line
printf 'arg /bench_guest\narg --bench\narg %s\npass ^BENCH_GUEST_JSON \n' "$REPS" \
	>"$B/root/tests/bench.cmd"
python3 scripts/mkinitramfs.py "$B/initrd.cpio" "$B/root/init" "$B/root/tests/bench.cmd" \
	"$B/root/bench_guest=/bench_guest" || fail "writing the initramfs failed"

# the newest 7.x cloud kernel of $SUITE (scripts/kernels.py's pattern)
O=$B MAKE="$MAKE" scripts/guest.sh "$SUITE" '^linux-image-[0-9].*-cloud-amd64$' \
	"$B/initrd.cpio" || fail "the guest run failed (log: $B/guests/$SUITE/serial.log)"
log=$B/guests/$SUITE/serial.log
tr -d '\r' <"$log" | sed -n 's/^.*BENCH_GUEST_JSON //p' | tail -n 1 >"$B/bench_guest.json"
[ -s "$B/bench_guest.json" ] || fail "no BENCH_GUEST_JSON line in $log"
python3 - "$B/bench_guest.json" "$B/guests/$SUITE/result.json" "$(($(date +%s) - t0))" <<'PY'
import json, sys
path, result, secs = sys.argv[1], sys.argv[2], int(sys.argv[3])
with open(path) as f:
    b = json.load(f)
with open(result) as f:
    r = json.load(f)
b["guest"]["kernel"] = r.get("kernel")
b["guest"]["package"] = r.get("package")
b["guest"]["seconds"] = secs
with open(path, "w") as f:
    json.dump(b, f)
PY
parts=$B/bench_guest.json
[ ! -s "$O/bench.json" ] || parts="$O/bench.json $parts"
# shellcheck disable=SC2086 # one or two files
python3 scripts/bench-merge.py "$O/bench.json" $parts | grep -E '^(metric|guest\.|wrote)'
echo "bench-guest: $(($(date +%s) - t0)) s"
