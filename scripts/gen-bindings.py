#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The bindings' constants and enumerations, written from the C headers and
the library's own tables (make generate; doc/design.md).

    gen-bindings.py [--build O] [--cc CC] [--cflags FLAGS]
                    [--check | --out DIR | --rows]

Compiles scripts/gen-bindings.c against O/libiouring-restrict.a (built
with the same CFLAGS, so a test build's extra schema rows count), runs it,
and rewrites every block between "BEGIN GENERATED <name>" and
"END GENERATED <name>" comment lines of the files below.

Opcodes, register opcodes, SQE flags and fields come from the library's
tables.  Every other constant of include/iouring_restrict/*.h (each member
of a public enum, each object-like #define) is named by reading the
headers and valued by the compiler: a second program, written here, prints
each one as C evaluates it.  The -sys crate gets all of them under their C
names; the Python enums named in PY_ENUMS get the members of their C group.

  (default)   rewrite the blocks in place
  --check     rewrite copies in a temporary directory and compare them with
              the tree; exit 1, showing the diff, if regenerating would
              change a file (needs no .git: works in a tarball)
  --out DIR   write the regenerated files under DIR (same relative paths)
  --rows      print the table rows only
"""
import argparse
import difflib
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PY_ENUMS = "bindings/python/iouring_restrict/enums.py"
RS_SYS = "bindings/rust/iouring-restrict-sys/src/lib.rs"
RS_NAMES = "bindings/rust/iouring-restrict/src/names.rs"
RS_FILTER = "bindings/rust/iouring-restrict/src/filter.rs"
PY_API = "bindings/python/iouring_restrict/_api.py"
RS_LIB = "bindings/rust/iouring-restrict/src/lib.rs"
FILES = (PY_ENUMS, PY_API, RS_SYS, RS_NAMES, RS_FILTER, RS_LIB)
# Module constants of the Python API (named without "IOUR_"): block ->
# the C names, or a group as in PY_ENUMS_SPEC.
PY_API_CONSTS = {
    "py-api-consts": ("IOUR_CTX_SIZE", "IOUR_OPCODE_ANY", "IOUR_DISASM_SECCOMP",
                      "IOUR_RING_APPLY_NO_ENABLE", "IOUR_VERIFY_RING_FD", "IOUR_PROBE_NO_CACHE",
                      "IOUR_PROBE_REFRESH", "IOUR_PLAN_FORCE_LEVEL", "IOUR_PLAN_BROKERED",
                      "IOUR_FILTER_ADDR4_LITERAL"),
    "py-broker-consts": "define IOUR_BROKER_",
    "py-name-kinds": "enum iour_name_kind",
}
# The safe Rust crate's enums keep their own variant names and documents,
# and take their values from the -sys constants; each must name (as
# sys::NAME) every member of its C group but those listed (a match's
# default arm, or a range sentinel).
RS_COVER = (
    (RS_FILTER, "enum iour_verdict", ()),
    (RS_FILTER, "enum iour_prog_kind", ("IOUR_PROG_FILTER",)),
    ("bindings/rust/iouring-restrict/src/policy.rs", "enum iour_policy_target", ()),
    ("bindings/rust/iouring-restrict/src/policy.rs", "enum iour_policy_compat", ()),
    ("bindings/rust/iouring-restrict/src/policy.rs", "enum iour_status",
     ("IOUR_STATUS_NOT_ENFORCED",)),
    ("bindings/rust/iouring-restrict/src/policyfile.rs", "enum iour_decide_reason", ()),
    ("bindings/rust/iouring-restrict/src/error.rs", "enum iour_errno", ("IOUR_ERRNO__END",)),
    (RS_LIB, "define IOUR_FEATURES_", ()),
)
HDR_DIR = "include/iouring_restrict"
# The order of the -sys crate's constant sections (the umbrella header's).
HEADERS = ("version.h", "errors.h", "names.h", "ruleset.h", "ring.h", "probe.h", "cbpf.h",
           "filter.h", "schema.h", "companion.h", "broker.h", "verify.h", "policy.h",
           "plan.h", "report.h", "policyfile.h", "common.h", "layout.h")
# Enums whose members come from the library's tables (blocks() above).
TABLE_ENUMS = {"iour_op": "rs-sys-ops", "iour_register_op": "rs-sys-regs",
               "iour_sqe_flag": "rs-sys-sqe-flags", "iour_field": "rs-sys-fields"}
# Python class -> (C group, prefix stripped from the member names, names
# left out).  A group is "enum TAG" or "define PREFIX" (the #defines of that
# prefix; "define PREFIX@NAME": only those of NAME's run of #defines).
# IntFlag classes take the members that are 0 or a single bit.  Left out:
# range sentinels (never values) and aliases.
PY_ENUMS_SPEC = (
    ("Verdict", "enum iour_verdict", "IOUR_", ()),
    ("CmpOp", "enum iour_cmp_op", "IOUR_CMP_", ()),
    ("ProgKind", "enum iour_prog_kind", "IOUR_PROG_", ()),
    ("DisasmFormat", "enum iour_disasm_format", "IOUR_DISASM_", ()),
    ("Reject", "enum iour_cbpf_reject", "IOUR_REJECT_", ("_MAX",)),
    ("Status", "enum iour_status", "IOUR_STATUS_", ()),
    ("DecisionKind", "enum iour_decision_kind", "IOUR_DECISION_", ()),
    ("Reason", "enum iour_reason", "IOUR_REASON_", ()),
    ("Effect", "enum iour_effect", "IOUR_EFFECT_", ()),
    ("Mechanism", "define IOUR_MECH_", "IOUR_MECH_", ()),
    ("ReportFlag", "define IOUR_REPORT_", "IOUR_REPORT_", ()),
    ("FeatureLevel", "enum iour_feature_level", "IOUR_LEVEL_", ("MAX",)),
    ("Avail", "enum iour_avail", "IOUR_AVAIL_", ()),
    ("LimitsSource", "enum iour_limits_source", "IOUR_LIMITS_", ()),
    ("FeaturesFlag", "define IOUR_FEATURES_", "IOUR_FEATURES_", ()),
    ("PolicyAttr", "enum iour_policy_attr", "IOUR_POLICY_ATTR_", ("_MIN", "_MAX")),
    ("Target", "enum iour_policy_target", "IOUR_POLICY_TARGET_", ()),
    ("Compat", "enum iour_policy_compat", "IOUR_POLICY_COMPAT_", ()),
    ("Nnp", "enum iour_policy_nnp", "IOUR_POLICY_NNP_", ()),
    ("Fallback", "enum iour_policy_fallback", "IOUR_POLICY_FALLBACK_", ()),
    ("Threads", "enum iour_policy_threads", "IOUR_POLICY_THREADS_", ()),
    ("Companion", "enum iour_policy_companion", "IOUR_POLICY_COMPANION_", ()),
    ("DefaultVerdict", "enum iour_policy_default", "IOUR_POLICY_DEFAULT_", ()),
    ("StepOp", "enum iour_step_op", "IOUR_STEP_", ()),
    ("StepSide", "enum iour_step_side", "IOUR_STEP_", ()),
    ("PlanInfoFlag", "define IOUR_PLAN_INFO_", "IOUR_PLAN_INFO_", ()),
    ("Expect", "define IOUR_EXPECT_", "IOUR_EXPECT_", ()),
    ("VerifyStatus", "define IOUR_VERIFY_@IOUR_VERIFY_NOT_RUN", "IOUR_VERIFY_", ()),
    ("ErrorCode", "enum iour_errno", "IOUR_ERRNO__", ("START", "END")),
    ("RestrictionKind", "enum iour_restriction_kind", "IOUR_RESTRICTION_", ()),
    ("CompanionFlag", "define IOUR_COMPANION_", "IOUR_COMPANION_", ()),
    ("ExportFlag", "define IOUR_EXPORT_", "IOUR_EXPORT_", ()),
    ("DecideReason", "enum iour_decide_reason", "IOUR_DECIDE_", ()),
)

BLOCK_RE = re.compile(
    r"^(?P<indent>[ \t]*)(?P<c>#|//) BEGIN GENERATED (?P<name>[\w-]+)[^\n]*\n"
    r"(?P<body>.*?)"
    r"^[ \t]*(?P=c) END GENERATED (?P=name)[^\n]*$",
    re.M | re.S)


def table_rows(build, cc, cflags):
    """(kind, number, name) rows of scripts/gen-bindings.c's output."""
    lib = os.path.join(build, "libiouring-restrict.a")
    if not os.path.exists(lib):
        sys.exit("gen-bindings: %s is not built (make lib)" % lib)
    with tempfile.TemporaryDirectory() as tmp:
        prog = os.path.join(tmp, "gen-bindings")
        cmd = [cc, "-std=c11", "-D_GNU_SOURCE", "-Iinclude", "-Ilib"] + cflags.split() + [
            "-o", prog, "scripts/gen-bindings.c", lib, "-ljansson"]
        subprocess.run(cmd, cwd=ROOT, check=True)
        out = subprocess.run([prog], check=True, stdout=subprocess.PIPE,
                             universal_newlines=True).stdout
    rows = []
    for line in out.splitlines():
        kind, num, name = line.split()
        rows.append((kind, int(num), name))
    return rows


def _uncomment(text):
    """text with its comments blanked (newlines kept: line runs stay)."""
    def blank(m):
        return re.sub(r"[^\n]", " ", m.group(0))
    return re.sub(r"/\*.*?\*/|//[^\n]*", blank, text, flags=re.S)


def header_consts():
    """(header, group, name, body) of every public constant, in header
    order: group is "enum TAG" for an enum member, "define N" for an
    object-like #define in the N-th run of adjacent #define lines; body is
    the #define's text (None for an enum member).  Only names are read
    here; the values come from the compiler (const_values())."""
    out = []
    for h in HEADERS:
        with open(os.path.join(ROOT, HDR_DIR, h), encoding="utf-8") as f:
            text = _uncomment(f.read()).replace("\\\n", " ")
        for m in re.finditer(r"\benum\s+(iour_\w+)\s*\{(.*?)\}", text, re.S):
            for ent in m.group(2).split(","):
                nm = re.match(r"\s*(IOUR_\w+)", ent)
                if nm:
                    out.append((h, "enum " + m.group(1), nm.group(1), None))
        run = 0
        for line in text.split("\n"):
            d = re.match(r"\s*#\s*define\s+(IOUR_\w+)(\(?)(.*)$", line)
            if not d:
                if line.strip():
                    run += 1
                continue
            body = d.group(3).strip()
            if d.group(2) or not body or "__attribute__" in body:
                continue            # function-like, include guard, IOUR_API
            out.append((h, "define %s:%d" % (h, run), d.group(1), body))
    return out


def const_values(consts, cc, cflags):
    """name -> value (int, or str for a string #define) of consts, as the
    C compiler evaluates them."""
    src = ["#include <stdio.h>", '#include "iouring_restrict/iouring_restrict.h"',
           "int main(void)", "{"]
    for _, _, name, body in consts:
        if body is not None and body.startswith('"'):
            src.append('\tprintf("%%s s%%s\\n", "%s", %s);' % (name, name))
        else:
            src.append('\tprintf("%%s %%d %%llu\\n", "%s", (%s) < 0, '
                       '(unsigned long long)(%s));' % (name, name, name))
    src += ["\treturn 0;", "}", ""]
    with tempfile.TemporaryDirectory() as tmp:
        c = os.path.join(tmp, "consts.c")
        prog = os.path.join(tmp, "consts")
        with open(c, "w") as f:
            f.write("\n".join(src))
        subprocess.run([cc, "-std=c11", "-D_GNU_SOURCE", "-Iinclude"] + cflags.split() +
                       ["-o", prog, c], cwd=ROOT, check=True)
        res = subprocess.run([prog], check=True, stdout=subprocess.PIPE,
                             universal_newlines=True).stdout
    vals = {}
    for line in res.splitlines():
        name, rest = line.split(" ", 1)
        if rest.startswith("s"):
            vals[name] = rest[1:]
        else:
            neg, u = rest.split()
            vals[name] = int(u) - (1 << 64) if neg == "1" else int(u)
    return vals


def _group_members(consts, group):
    """The (name, body) of a PY_ENUMS_SPEC group."""
    if group.startswith("enum "):
        return [(n, b) for _, g, n, b in consts if g == group]
    prefix, _, anchor = group[len("define "):].partition("@")
    runs = None
    if anchor:
        runs = {g for _, g, n, _ in consts if n == anchor}
    return [(n, b) for _, g, n, b in consts
            if b is not None and n.startswith(prefix) and (runs is None or g in runs)]


def _bit(v):
    return v > 0 and v & (v - 1) == 0


def py_enum_blocks(consts, vals):
    with open(os.path.join(ROOT, PY_ENUMS), encoding="utf-8") as f:
        text = f.read()
    b = {}
    for cls, group, prefix, skip in PY_ENUMS_SPEC:
        m = re.search(r"^class %s\((\w+)\)" % cls, text, re.M)
        if not m:
            sys.exit("gen-bindings: %s: no class %s" % (PY_ENUMS, cls))
        flag = m.group(1) == "IntFlag"
        members = _group_members(consts, group)
        if not members:
            sys.exit("gen-bindings: %s: no C constants for %s" % (cls, group))
        lines = []
        for name, _ in members:
            short = name[len(prefix):]
            v = vals[name]
            if short in skip or (flag and v != 0 and not _bit(v)):
                continue
            if flag and v:
                lines.append("    %s = 1 << %d" % (short, v.bit_length() - 1))
            else:
                lines.append("    %s = %d" % (short, v))
        b["py-enum-" + cls] = lines
    return b


def _py_value(v, body):
    if body is not None and "<<" in body and _bit(v):
        return "1 << %d" % (v.bit_length() - 1)
    return "0x%X" % v if v == 0xffffffff else "%d" % v


def py_api_blocks(consts, vals):
    bodies = {n: b for _, _, n, b in consts}
    b = {}
    for block, names in PY_API_CONSTS.items():
        if isinstance(names, str):
            names = [n for n, _ in _group_members(consts, names)]
        b[block] = ["%s = %s" % (n[len("IOUR_"):], _py_value(vals[n], bodies[n]))
                    for n in names]
    return b


def rs_lib_blocks(consts, vals):
    lines = []
    for n, _ in _group_members(consts, "define IOUR_FEATURES_"):
        t = '(sys::%s, "%s"),' % (n, n[len("IOUR_FEATURES_"):])
        if len(t) <= 61:
            lines.append(" " * 16 + t)
        else:
            lines += [" " * 16 + "(", " " * 20 + "sys::%s," % n,
                      " " * 20 + '"%s",' % n[len("IOUR_FEATURES_"):], " " * 16 + "),"]
    return {"rs-features-names": lines}


def check_rust_cover(consts):
    """Fails unless each RS_COVER file names every member of its group."""
    for rel, group, skip in RS_COVER:
        with open(os.path.join(ROOT, rel), encoding="utf-8") as f:
            text = f.read()
        members = [n for n, _ in _group_members(consts, group)]
        if not members:
            sys.exit("gen-bindings: no C constants for %s" % group)
        for n in members:
            if n not in skip and not re.search(r"\bsys::%s\b" % n, text):
                sys.exit("gen-bindings: %s does not name sys::%s (%s): give it a variant"
                         % (rel, n, group))


def rs_sys_consts(consts, vals, gen):
    """The -sys crate's constant section: every header constant, by
    header, under its C name; the table-made lists where their enum is."""
    lines = []
    last_h, last_g = None, None
    for h, g, name, body in consts:
        if h != last_h:
            if last_h is not None:
                lines.append("")
            lines += ["// ---- " + h, ""]
            last_h, last_g = h, None
        if g in ("enum " + t for t in TABLE_ENUMS):
            block = TABLE_ENUMS[g[len("enum "):]]
            if g != last_g:
                lines += ["// " + g] + gen[block]
            last_g = g
            continue
        if g != last_g and g.startswith("enum "):
            lines.append("// " + g)
        last_g = g
        v = vals[name]
        if isinstance(v, str):
            lines.append('pub const %s: &[u8] = b"%s\\0";' % (name, v))
            continue
        if g == "enum iour_errno":
            ty = "i32"
        elif body is not None and re.search(r"\d[uU]?(ll|LL)[uU]?\b", body):
            ty = "u64"
        else:
            ty = "u32"
        if not 0 <= v < (1 << (64 if ty == "u64" else 31 if ty == "i32" else 32)):
            sys.exit("gen-bindings: %s = %d does not fit %s" % (name, v, ty))
        if ty == "u32" and v == 0xffffffff:
            val = "u32::MAX"
        elif body is not None and "<<" in body and _bit(v):
            val = "1 << %d" % (v.bit_length() - 1)
        else:
            val = "%d" % v
        lines.append("pub const %s: %s = %s;" % (name, ty, val))
    return lines


def check_tables(consts, vals, rows):
    """The library's tables name every member of the header enums they
    stand for, with the header's value (a test build's schema may add
    fields)."""
    kinds = {"iour_op": "op", "iour_register_op": "reg", "iour_sqe_flag": "sqe",
             "iour_field": "field"}
    prefix = {"op": "IOUR_OP_", "reg": "IOUR_", "sqe": "IOUR_SQE_", "field": "IOUR_FIELD_"}
    for tag, kind in kinds.items():
        table = {prefix[kind] + s.upper().replace(".", "_"): n
                 for k, n, s in rows if k == kind}
        for _, g, name, _ in consts:
            if g != "enum " + tag or "__" in name:
                continue
            if table.get(name) != vals[name]:
                sys.exit("gen-bindings: %s = %d in the header, %r in the library's table"
                         % (name, vals[name], table.get(name)))


def wrap(items, indent, width=79):
    """items, comma-separated, in lines no longer than width."""
    lines, cur = [], indent
    for it in items:
        piece = it + ","
        if cur.strip() and len(cur) + 1 + len(piece) > width:
            lines.append(cur.rstrip())
            cur = indent
        cur += piece if not cur.strip() else " " + piece
    if cur.strip():
        lines.append(cur.rstrip())
    return lines


def camel(dotted):
    return "".join(w.capitalize() for w in re.split(r"[._]", dotted))


def blocks(rows):
    """Block name -> its lines (without indentation handling: each block
    writes its own)."""
    ops = [(n, s) for k, n, s in rows if k == "op"]
    regs = [(n, s) for k, n, s in rows if k == "reg"]
    sqes = [(n, s) for k, n, s in rows if k == "sqe"]
    fields = [(n, s) for k, n, s in rows if k == "field"]
    for lst in (ops, regs):
        assert [n for n, _ in lst] == list(range(len(lst))), "opcode numbers not dense"
    valid = 0
    for n, _ in sqes:
        valid |= n
    fname = [(n, s.upper().replace(".", "_")) for n, s in fields]
    b = {}
    b["py-ops"] = ["_OPS = ("] + wrap(['"%s"' % s for _, s in ops], "    ") + [")"]
    b["py-regs"] = ["_REGS = ("] + wrap(['"%s"' % s for _, s in regs], "    ") + [")"]
    b["py-sqe-flags"] = ["    %s = 0x%02x" % (s, n) for n, s in sqes]
    b["py-fields"] = ["    %s = %d" % (s, n) for n, s in fname]
    b["rs-sys-ops"] = ["pub const IOUR_OP_%s: u32 = %d;" % (s, n) for n, s in ops] + [
        "pub const IOUR_OP__COUNT: u32 = %d;" % len(ops)]
    b["rs-sys-regs"] = ["pub const IOUR_%s: u32 = %d;" % (s, n) for n, s in regs] + [
        "pub const IOUR_REGISTER__COUNT: u32 = %d;" % len(regs)]
    b["rs-sys-sqe-flags"] = ["pub const IOUR_SQE_%s: u32 = %d;" % (s, n) for n, s in sqes] + [
        "pub const IOUR_SQE__VALID: u32 = %d;" % valid]
    b["rs-sys-fields"] = ["pub const IOUR_FIELD_%s: u32 = %d;" % (s, n) for n, s in fname]
    b["rs-ops"] = ["    pub const %s: Opcode = Opcode(%d);" % (s, n) for n, s in ops]
    b["rs-regs"] = ["    pub const %s: RegisterOp = RegisterOp(%d);" % (s, n) for n, s in regs]
    b["rs-sqe-flags"] = ["    pub const %s: SqeFlags = SqeFlags(sys::IOUR_SQE_%s);" % (s, s)
                         for _, s in sqes]
    b["rs-field-variants"] = ["    %s," % camel(s) for _, s in fields]
    b["rs-field-raw"] = ["            Field::%s => sys::IOUR_FIELD_%s," % (camel(d), s)
                         for (_, d), (_, s) in zip(fields, fname)]
    return b


def regenerate(text, gen, path):
    seen = set()

    def repl(m):
        name = m.group("name")
        if name not in gen:
            sys.exit("gen-bindings: %s: unknown block %s" % (path, name))
        seen.add(name)
        head = m.group(0).split("\n", 1)[0]
        tail = m.group(0).rsplit("\n", 1)[1]
        return "\n".join([head] + gen[name] + [tail])

    out = BLOCK_RE.sub(repl, text)
    if not seen:
        sys.exit("gen-bindings: %s has no GENERATED block" % path)
    return out, seen


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--cc", default=os.environ.get("CC", "cc"))
    ap.add_argument("--cflags", default="")
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true")
    mode.add_argument("--out")
    mode.add_argument("--rows", action="store_true")
    a = ap.parse_args()
    rows = table_rows(os.path.join(ROOT, a.build) if not os.path.isabs(a.build) else a.build,
                      a.cc, a.cflags)
    if a.rows:
        for k, n, s in rows:
            print(k, n, s)
        return 0
    gen = blocks(rows)
    consts = header_consts()
    vals = const_values(consts, a.cc, a.cflags)
    check_tables(consts, vals, rows)
    gen.update(py_enum_blocks(consts, vals))
    gen["rs-sys-consts"] = rs_sys_consts(consts, vals, gen)
    gen.update(py_api_blocks(consts, vals))
    gen.update(rs_lib_blocks(consts, vals))
    check_rust_cover(consts)
    for k in ("rs-sys-ops", "rs-sys-regs", "rs-sys-sqe-flags", "rs-sys-fields"):
        del gen[k]
    used, changed = set(), []
    for rel in FILES:
        with open(os.path.join(ROOT, rel), encoding="utf-8") as f:
            old = f.read()
        new, seen = regenerate(old, gen, rel)
        used |= seen
        if a.check:
            if new != old:
                changed.append(rel)
                sys.stdout.writelines(difflib.unified_diff(
                    old.splitlines(True), new.splitlines(True), rel, rel + " (regenerated)"))
        else:
            dest = os.path.join(a.out, rel) if a.out else os.path.join(ROOT, rel)
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            with open(dest, "w", encoding="utf-8") as f:
                f.write(new)
    missing = set(gen) - used
    if missing:
        sys.exit("gen-bindings: no block for %s" % ", ".join(sorted(missing)))
    if changed:
        print("gen-bindings: regenerating changes %s: run 'make generate' and commit"
              % ", ".join(changed))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
