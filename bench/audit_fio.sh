#!/bin/sh
# SPDX-License-Identifier: MIT
# make bench-audit: the cost of `iour-restrict run --audit` and of
# `run --log-denials` to the program (doc/cli.md, "run").  fio's io_uring
# engine (4 KiB random reads on tmpfs, depth 8, time-based) runs, in
# interleaved rounds so that drifts of a shared machine hit all:
#   alone;
#   under `run --audit POLICY` (POLICY allows what fio does: the kernel's
#   event filters keep its requests out of the trace's reader);
#   under `run --audit DENY` (DENY lacks READ: every request is reported);
#   under `run POLICY` and under `run --log-denials POLICY`.
# Metrics: audit.fio_iops_ratio = median IOPS under --audit POLICY / alone
# (goal: 0.85 or more); audit.fio_iops_ratio_all_reported = the same with
# DENY; denials.fio_iops_ratio = median under --log-denials / under plain
# run.  Writes a JSON object to OUT; without root, tracefs or fio it writes
# {"audit": {"skipped": WHY}}.
#
# Usage: bench/audit_fio.sh IOUR_RESTRICT OUT [ROUNDS] [SECONDS]
set -u
KEY=audit
WHY_ROOT="audit mode needs tracefs"
# shellcheck source=bench/fio_common.sh
. "$(dirname "$0")/fio_common.sh"
cat >"$work/pol.json" <<'PJ'
{"defaultAction": "deny", "requestOps": ["READ", "WRITE", "NOP"],
 "registerOps": ["REGISTER_PROBE"], "sqeFlags": {"allowed": [], "required": []}}
PJ
cat >"$work/deny.json" <<'PJ'
{"defaultAction": "deny", "requestOps": ["NOP"],
 "registerOps": ["REGISTER_PROBE"], "sqeFlags": {"allowed": [], "required": []}}
PJ
# shellcheck disable=SC2086
"$T" run -q --audit="$work/probe.log" "$work/pol.json" -- fio $job --runtime=1 \
	--output="$work/probe.json" >/dev/null 2>"$work/probe.err" ||
	skip "$(head -n 1 "$work/probe.err" | tr -d '"\\')"
i=0
while [ $i -lt "$ROUNDS" ]; do
	# shellcheck disable=SC2086
	fio $job --output="$work/alone-$i.json" >/dev/null 2>&1
	# shellcheck disable=SC2086
	"$T" run -q --audit="$work/a-$i.log" "$work/pol.json" -- fio $job \
		--output="$work/audit-$i.json" >/dev/null 2>&1
	# shellcheck disable=SC2086
	"$T" run -q --audit="$work/d-$i.log" "$work/deny.json" -- fio $job \
		--output="$work/auditall-$i.json" >/dev/null 2>&1
	# shellcheck disable=SC2086
	"$T" run -q "$work/pol.json" -- fio $job --output="$work/run-$i.json" >/dev/null 2>&1
	# shellcheck disable=SC2086
	"$T" run -q --log-denials="$work/l-$i.log" "$work/pol.json" -- fio $job \
		--output="$work/log-$i.json" >/dev/null 2>&1
	i=$((i + 1))
done
grep -q "request READ flags none: would be denied" "$work/d-0.log" ||
	{ echo "bench-audit: the DENY rounds reported no READ"; exit 1; }
python3 - "$work" "$ROUNDS" "$OUT" <<'PY'
import json, statistics, sys
work, rounds, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
def med(kind):
    v = [json.load(open(f"{work}/{kind}-{i}.json"))["jobs"][0]["read"]["iops"]
         for i in range(rounds)]
    print(f"bench-audit: fio IOPS {kind}", [round(x) for x in v])
    return statistics.median(v)
alone, audit, auditall = med("alone"), med("audit"), med("auditall")
run, log = med("run"), med("log")
res = {"audit": {"fio_iops_ratio": audit / alone,
                 "fio_iops_ratio_all_reported": auditall / alone,
                 "fio_iops_alone": alone, "fio_iops_audit": audit, "rounds": rounds},
       "denials": {"fio_iops_ratio": log / run, "fio_iops_run": run,
                   "fio_iops_log_denials": log, "rounds": rounds}}
json.dump(res, open(out, "w"))
print(f"bench-audit: audit.fio_iops_ratio {res['audit']['fio_iops_ratio']:.3f} (goal >= 0.85)")
print(f"bench-audit: audit.fio_iops_ratio_all_reported "
      f"{res['audit']['fio_iops_ratio_all_reported']:.3f}")
print(f"bench-audit: denials.fio_iops_ratio {res['denials']['fio_iops_ratio']:.3f}")
PY
