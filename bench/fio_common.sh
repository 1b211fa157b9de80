# SPDX-License-Identifier: MIT
# shellcheck shell=sh disable=SC2034 # sets what its includers use
# bench/fio_common.sh: the set-up the fio benchmarks share (sourced by
# bench/learn_fio.sh and bench/audit_fio.sh, which set KEY, the JSON key of
# their result, and WHY_ROOT before sourcing it, with their arguments
# IOUR_RESTRICT OUT [ROUNDS] [SECONDS] still in "$@").
#
# It defines skip WHY (writes {KEY: {"skipped": WHY}} to OUT and exits 0),
# skips when not root or without fio, makes the tmpfs work directory
# $work (removed at exit), sets $job, the fio job (io_uring engine, 4 KiB
# random reads, depth 8, $SECS seconds), and runs it once to warm up (or
# skips when fio's io_uring engine does not run here).
T=$1
OUT=$2
ROUNDS=${3:-5}
SECS=${4:-3}
skip() {
	printf '{"%s": {"skipped": "%s"}}\n' "$KEY" "$1" >"$OUT"
	echo "bench-$KEY: SKIP: $1"
	exit 0
}
[ "$(id -u)" -eq 0 ] || skip "not root ($WHY_ROOT)"
command -v fio >/dev/null 2>&1 || skip "fio is not installed"
work=$(mktemp -d "/dev/shm/iour-bench-$KEY.XXXXXX" 2>/dev/null || mktemp -d)
trap 'rm -rf "$work"' EXIT
job="--name=bench --ioengine=io_uring --filename=$work/f --size=64m --bs=4k --rw=randread \
--iodepth=8 --time_based --runtime=$SECS --output-format=json"
# shellcheck disable=SC2086
fio $job --runtime=1 --output="$work/warm.json" >/dev/null 2>&1 || skip "fio's io_uring engine does not run here"
