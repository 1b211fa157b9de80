#!/bin/sh
# SPDX-License-Identifier: MIT
# make bench-learn: the cost of `iour-restrict learn` to the program it
# records.  fio's io_uring engine (4 KiB random reads on tmpfs, depth 8,
# time-based) runs alone and under learn, interleaved (alone, learn, alone,
# learn, ...) so that drifts of a shared machine hit both; the metric is
# learn.fio_iops_ratio = median IOPS under learn / median IOPS alone (goal:
# 0.85 or more, doc/cli.md "learn").  Writes a JSON object to OUT; when
# root, tracefs or fio is missing it writes {"learn": {"skipped": WHY}}.
#
# Usage: bench/learn_fio.sh IOUR_RESTRICT OUT [ROUNDS] [SECONDS]
set -u
KEY=learn
WHY_ROOT="learn needs tracefs"
# shellcheck source=bench/fio_common.sh
. "$(dirname "$0")/fio_common.sh"
"$T" learn -q -o "$work/p.json" -- fio $job --runtime=1 --output="$work/probe.json" \
	>/dev/null 2>"$work/probe.err"
rc=$?
[ $rc -eq 4 ] && skip "$(head -n 1 "$work/probe.err" | tr -d '"\\')"
[ $rc -eq 0 ] || { cat "$work/probe.err"; echo "bench-learn: learn failed ($rc)"; exit 1; }
i=0
while [ $i -lt "$ROUNDS" ]; do
	# shellcheck disable=SC2086
	fio $job --output="$work/base-$i.json" >/dev/null 2>&1
	# shellcheck disable=SC2086
	"$T" learn -q -o "$work/l-$i.json" -- fio $job --output="$work/learn-$i.json" \
		>/dev/null 2>&1
	i=$((i + 1))
done
python3 - "$work" "$ROUNDS" "$OUT" <<'PY'
import json, statistics, sys
work, rounds, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
def iops(p):
    return json.load(open(p))["jobs"][0]["read"]["iops"]
base = [iops(f"{work}/base-{i}.json") for i in range(rounds)]
learn = [iops(f"{work}/learn-{i}.json") for i in range(rounds)]
r = statistics.median(learn) / statistics.median(base)
json.dump({"learn": {"fio_iops_ratio": r, "fio_iops_alone": statistics.median(base),
                     "fio_iops_learn": statistics.median(learn), "rounds": rounds}},
          open(out, "w"))
print("bench-learn: fio IOPS alone", [round(x) for x in base])
print("bench-learn: fio IOPS under learn", [round(x) for x in learn])
print(f"bench-learn: learn.fio_iops_ratio {r:.3f} (goal >= 0.85)")
PY
