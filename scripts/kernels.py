#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""make check-kernels: the guest suite on every Debian kernel generation.

usage: kernels.py [SUITE ...]   (default: every suite of KERNELS below)

Builds the guest suite's initramfs once (scripts/guest-initramfs.sh), then
boots each suite's newest cloud kernel with scripts/guest.sh, KERNELS_JOBS
(default 3, at most one more than the CPUs; fewer when MemAvailable cannot
hold that many guests of GUEST_MEM MiB, and none, a recorded skip, when not
even one fits)
at a time, prints a table (kernel, level, passed, failed,
skipped, seconds, skip reasons) and writes $O/kernels.json, a list of
{"kernel", "level", "passed", "failed", "skipped", "seconds"} objects
(plus "suite", "package", and "error" for a kernel that could not be
downloaded or booted).  Exit status 0 only if every kernel ran and passed.
experimental runs only if its kernel is newer than sid's and than
trixie-backports' (when those run too): an older kernel of a series
another guest already boots adds nothing but a guest's time (7.3 beside
trixie-backports' 7.3.4); if it is not newer, the table says so (not a
pass, not a failure).
"""
import json
import os
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

ANY = r"^linux-image-[0-9].*-cloud-amd64$"
# suite, package pattern, what the suite is there for
KERNELS = [
    ("bullseye", r"^linux-image-5\.10\.[0-9]+-[0-9]+-cloud-amd64$", "5.10: first R_DISABLED"),
    ("bookworm", r"^linux-image-6\.1\.[0-9]+-[0-9]+-cloud-amd64$", "6.1"),
    ("trixie", r"^linux-image-6\.12\.[0-9].*-cloud-amd64$", "6.12"),
    ("trixie-backports", ANY, "backports"),
    ("sid", ANY, "7.x"),
    ("experimental", ANY, "newer than sid, if it is"),
]

O = os.environ.get("O", "build")
HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def resolve(suite, pattern):
    env = dict(os.environ, O=O, GUEST_RESOLVE_ONLY="1")
    r = subprocess.run(["scripts/guest.sh", suite, pattern], env=env, cwd=HERE,
                       capture_output=True, text=True)
    lines = r.stdout.strip().splitlines()
    if r.returncode or not lines:
        return None
    pkg, _, ver = lines[-1].partition(" ")
    return pkg, ver


def newer(a, b):
    return subprocess.run(["dpkg", "--compare-versions", a, "gt", b]).returncode == 0


# Set once a guest under GUEST_ACCEL=auto found that KVM cannot run it
# (scripts/guest.sh fell back to TCG): the guests started after it boot
# under TCG at once instead of each trying KVM first.
KVM_FAILED = threading.Event()


def run(suite, pattern, initrd):
    t0 = time.time()
    logp = os.path.join(O, "guests", suite, "run.log")
    os.makedirs(os.path.dirname(logp), exist_ok=True)
    env = dict(os.environ, O=O)
    if KVM_FAILED.is_set() and env.get("GUEST_ACCEL", "auto") == "auto":
        env["GUEST_ACCEL"] = "tcg"
    with open(logp, "w") as log:
        if env.get("GUEST_ACCEL") == "tcg" and os.environ.get("GUEST_ACCEL", "auto") == "auto":
            log.write("kernels: TCG: KVM could not run an earlier guest\n")
            log.flush()
        r = subprocess.run(["scripts/guest.sh", suite, pattern, initrd],
                           env=env, cwd=HERE, stdout=log,
                           stderr=subprocess.STDOUT)
    secs = round(time.time() - t0)
    res = {"suite": suite, "kernel": None, "error": "no result"}
    try:
        with open(os.path.join(HERE, O, "guests", suite, "result.json")) as f:
            res = json.load(f)
    except (OSError, ValueError):
        pass
    res["seconds"] = secs
    if r.returncode and "error" not in res:
        res["error"] = "guest failed"
    try:
        with open(os.path.join(HERE, O, "guests", suite, "skips.txt")) as f:
            res["skip_reasons"] = [ln.strip() for ln in f if ln.strip()]
    except OSError:
        res["skip_reasons"] = []
    with open(os.path.join(HERE, logp)) as f:
        tail = f.read().strip().splitlines()
    if any("KVM could not run this guest" in ln for ln in tail):
        KVM_FAILED.set()
    verdict = tail[-1] if tail else "(no output)"
    print(("ok   " if not r.returncode else "FAIL ") + verdict, flush=True)
    if r.returncode:
        print("\n".join("  | " + ln for ln in tail[-25:]), flush=True)
    return res


def mem_available_mib():
    """MemAvailable of /proc/meminfo in MiB, or None."""
    try:
        with open("/proc/meminfo") as f:
            for ln in f:
                if ln.startswith("MemAvailable:"):
                    return int(ln.split()[1]) // 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def guest_jobs():
    """How many guests boot at once: KERNELS_JOBS (default 3), lowered to
    one more than the CPUs this process may run on and to the guests of
    GUEST_MEM MiB (default 1024, plus about 256 for qemu itself) that
    MemAvailable holds.  One more guest than CPUs: a guest is not busy all
    the time (its suite sleeps and waits on timers; under TCG a guest kept
    0.62 of a CPU busy on average, 47.6 s of CPU in 76.8 s), so three
    guests share two CPUs without waiting on each other for long, and five
    kernels boot in two rounds instead of three.
    Returns (jobs, reasons it was lowered); jobs is 0 if not even one fits."""
    want = max(1, int(os.environ.get("KERNELS_JOBS", "3")))
    mem = int(os.environ.get("GUEST_MEM", "1024"))
    cpus = len(os.sched_getaffinity(0))
    jobs, why = want, []
    if cpus + 1 < jobs:
        jobs = cpus + 1
        why.append("%d CPU(s)" % cpus)
    avail = mem_available_mib()
    if avail is not None and avail // (mem + 256) < jobs:
        jobs = avail // (mem + 256)
        why.append("MemAvailable %d MiB for guests of GUEST_MEM=%d MiB (+256 MiB for qemu)"
                   % (avail, mem))
    return jobs, why


def record_skip(reason):
    """One line for make check's summary (scripts/ci-step.sh sets the log)."""
    log = os.environ.get("IOUR_SKIP_LOG")
    if log:
        with open(log, "a") as f:
            f.write("%s\t%s\n" % (os.environ.get("IOUR_SKIP_STEP", "?"), reason))


def main(argv):
    want = argv[1:] or [k[0] for k in KERNELS]
    table = {k[0]: k for k in KERNELS}
    for s in want:
        if s not in table:
            sys.exit("kernels: unknown suite %s (known: %s)" % (s, " ".join(table)))
    t0 = time.time()
    notes = {}
    if "experimental" in want:
        exp = resolve("experimental", ANY)
        for other in ("sid", "trixie-backports"):
            if other != "sid" and other not in want:
                continue
            o = resolve(other, table[other][1])
            if exp and o and not newer(exp[1], o[1]):
                notes["experimental"] = "not run: %s (%s) is not newer than %s (%s, %s)" % (
                    exp[0], exp[1], o[0], o[1], other)
                want.remove("experimental")
                break
    jobs, lowered = guest_jobs()
    if not jobs:
        why = "the guests were NOT run: %s; lower GUEST_MEM or free memory" % "; ".join(lowered)
        print("kernels: SKIP: " + why)
        record_skip("kernels: " + why)
        return 0
    if lowered:
        print("kernels: %d guest(s) at a time, not %s: %s" % (
            jobs, os.environ.get("KERNELS_JOBS", "3"), "; ".join(lowered)))
    r = subprocess.run(["scripts/guest-initramfs.sh"], env=dict(os.environ, O=O), cwd=HERE)
    if r.returncode:
        sys.exit("kernels: FAIL: building the guest suite failed")
    t_build = time.time() - t0
    initrd = os.path.join(O, "guests", "initrd.cpio")
    with ThreadPoolExecutor(max_workers=jobs) as ex:
        futs = [(s, ex.submit(run, s, table[s][1], initrd)) for s in want]
        results = [(s, f.result()) for s, f in futs]
    total = round(time.time() - t0)

    rows = [("suite", "kernel", "level", "passed", "failed", "skipped", "seconds")]
    for s, res in results:
        rows.append((s, res.get("kernel") or res.get("package") or "?",
                     str(res.get("level", "-")), str(res.get("passed", "-")),
                     str(res.get("failed", "-")), str(res.get("skipped", "-")),
                     str(res["seconds"])))
    w = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    print()
    for r in rows:
        print("  ".join(c.ljust(w[i]) for i, c in enumerate(r)).rstrip())
    for s, note in notes.items():
        print("%s  %s" % (s.ljust(w[0]), note))
    bad = [s for s, res in results if "error" in res or res.get("failed", 1) or
           not res.get("passed")]
    for s, res in results:
        if "error" in res:
            print("%s: FAIL: %s" % (s, res["error"]))
        if res.get("skip_reasons"):
            print("%s skips:" % s)
            for ln in res["skip_reasons"]:
                print("    " + ln)
                record_skip("guest %s: %s" % (s, ln))
    out = []
    for s, res in results:
        o = {k: res.get(k) for k in ("kernel", "level", "passed", "failed", "skipped",
                                     "seconds")}
        o.update(suite=s, package=res.get("package"))
        if "error" in res:
            o["error"] = res["error"]
        out.append(o)
    with open(os.path.join(HERE, O, "kernels.json"), "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")
    print("kernels: %d kernels in %d s (guest suite built in %d s, %d at a time); %s/kernels.json"
          % (len(results), total, round(t_build), jobs, O))
    if bad:
        print("kernels: FAIL: %s" % " ".join(bad))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
