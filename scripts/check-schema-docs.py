#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The hand-written lists of the request schema, checked against the
library's table (lib/base/schema.def, read through the public iterators of
include/iouring_restrict/schema.h and the Python binding's declarations).

    check-schema-docs.py [--build O] [--write]

Checked (make check-docs):
  doc/policy-files.md   the field table: every field once, in a row of its
                        payload group, with that group's opcodes (and the
                        kernel that added them past 7.0) and constant
                        namespaces
  doc/cli.md            (and so the iour-restrict(1) pages rendered from
                        it) the rule language's field table, which
                        constants each field takes, which fields join bits
                        with '|', and the list of constant namespaces with
                        their examples
  doc/iouring-restrict.7.md  the kernel table names each payload's opcode
                        in the row of the kernel that added it
  tools/prove/iour-prove     its field ids, payload sizes and the constant
                        names a saved policy may write for a number field
  tools/completion/iour-restrict.bash  the keys it offers after `sim --ctx`:
                        the fields that own their slot in the context (the
                        first of their payload group at that offset and
                        size) and CONNECT's addrlen, as the tool takes them
Generated (make generate writes it, this check compares):
  doc/policy.schema.json     the enum of a condition's "field"

Each problem is one line; the exit status is 1 if there is any.
"""
import argparse
import ast
import ctypes
import json
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KIND = {0: "NUM", 1: "BITS", 2: "ADDR4", 3: "ADDR6"}


def kver_str(v):
    return "%d.%d" % (v >> 16, (v >> 8) & 0xff)


class Schema:
    """The table, through the library's public iterators."""

    def __init__(self, build):
        # The build's library, whatever the environment names.
        os.environ["IOURING_RESTRICT_LIBRARY"] = os.path.join(build, "libiouring-restrict.so")
        sys.path.insert(0, os.path.join(ROOT, "bindings", "python"))
        from iouring_restrict import _lib  # noqa: E402 (needs the path above)
        lib = _lib.load()
        for name in ("iour_payload_count", "iour_payload_get", "iour_field_count",
                     "iour_field_get", "iour_const_count", "iour_const_get",
                     "iour_opcode_name"):
            res, args = _lib.FUNCS[name]
            getattr(lib, name).restype = res
            getattr(lib, name).argtypes = args

        def rows(count, get, cls):
            out = []
            for i in range(count()):
                r = cls()
                r.sz = ctypes.sizeof(cls)
                if get(i, ctypes.byref(r)) != 0:
                    sys.exit("check-schema-docs: row %d unreadable" % i)
                out.append(r)
            return out

        dec = (lambda b: b.decode() if b is not None else None)
        self.payloads = [
            {"opcode": p.opcode, "name": dec(lib.iour_opcode_name(p.opcode)),
             "group": dec(p.group), "pdu": p.pdu_size, "since": p.since}
            for p in rows(lib.iour_payload_count, lib.iour_payload_get, _lib.iour_payload_info)]
        self.fields = [
            {"name": dec(f.name), "group": dec(f.group), "prefix": dec(f.prefix),
             "kind": KIND[f.kind], "id": f.id, "valid": f.valid, "mask": f.mask,
             "offset": f.offset, "size": f.size}
            for f in rows(lib.iour_field_count, lib.iour_field_get, _lib.iour_field_info)]
        self.consts = [
            {"name": dec(c.name), "ns": dec(c.ns), "value": c.value}
            for c in rows(lib.iour_const_count, lib.iour_const_get, _lib.iour_const_info)]
        self.const_by_name = {c["name"]: c for c in self.consts}
        self.namespaces = sorted({f["prefix"] for f in self.fields if f["prefix"]})

    def short(self, f):
        return f["name"].split(".", 1)[1] if f["group"] else f["name"]

    def group_fields(self, group):
        return [f for f in self.fields if f["group"] == group]

    def group_payloads(self, group):
        return [p for p in self.payloads if p["group"] == group]

    def saved_names(self):
        """The constant names policy-file saving may write for a number
        field: the field's own namespace, values the field can hold."""
        out = {}
        for f in self.fields:
            if f["kind"] != "NUM" or not f["prefix"]:
                continue
            lim = f["mask"] or f["valid"]
            for c in self.consts:
                if c["ns"] == f["prefix"] and not (c["value"] & ~lim):
                    out[c["name"]] = c["value"]
        return out


def backticked(s):
    return re.findall(r"`([^`]+)`", s)


def split_top(cell):
    """A table cell's comma-separated parts, outside parentheses."""
    parts, depth, cur = [], 0, ""
    for ch in cell:
        depth += ch == "("
        depth -= ch == ")"
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    return parts + [cur]


def table_after(text, header):
    """The rows (lists of cells) of the markdown table whose header line
    starts with `header`."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith(header):
            rows = []
            for row in lines[i + 2:]:
                if not row.startswith("|"):
                    break
                rows.append([c.strip() for c in row.strip().strip("|").split("|")])
            return rows
    return None


def ns_of(token, schema):
    """`AF_*` -> "AF_"; `S_I*` -> "S_" (the longest namespace starting it)."""
    t = token.rstrip("*")
    best = None
    for ns in schema.namespaces:
        if t.startswith(ns) and (best is None or len(ns) > len(best)):
            best = ns
    return best


def opcodes_cell(group, schema):
    """What a table's opcode column says for a group: the payload opcodes,
    and "(7.2+)" for a kernel after 7.0."""
    pls = schema.group_payloads(group)
    since = {p["since"] for p in pls}
    return [p["name"] for p in pls], since


def check_policy_files(schema, errs):
    path = "doc/policy-files.md"
    rows = table_after(read(path), "| field | opcodes | constants |")
    if rows is None:
        errs.append("%s: no '| field | opcodes | constants |' table" % path)
        return
    seen = []
    for cells in rows:
        if len(cells) != 3:
            errs.append("%s: row %r has %d cells" % (path, cells, len(cells)))
            continue
        names = backticked(cells[0])
        fields = [f for f in schema.fields if f["name"] in names]
        for n in names:
            if n not in [f["name"] for f in schema.fields]:
                errs.append("%s: field %s is not in the schema" % (path, n))
        seen += names
        groups = {f["group"] for f in fields}
        if len(groups) != 1:
            errs.append("%s: row %s mixes payload groups %s" % (path, names, sorted(groups)))
            continue
        group = groups.pop()
        missing = [f["name"] for f in schema.group_fields(group) if f["name"] not in names]
        if missing:
            errs.append("%s: the %s row lacks %s" % (path, group or "every-opcode",
                                                      ", ".join(missing)))
        ops_text = cells[1]
        if not group:
            if ops_text != "every opcode":
                errs.append("%s: the row of %s says %r, not 'every opcode'"
                            % (path, names, ops_text))
        else:
            want, since = opcodes_cell(group, schema)
            got = [w.upper() for w in re.findall(r"[a-z0-9_]+", re.sub(r"\(.*?\)", "", ops_text))]
            if got != want:
                errs.append("%s: the %s row lists opcodes %s, the schema %s"
                            % (path, group, got, want))
            note = re.findall(r"\((\d+\.\d+)\+\)", ops_text)
            late = sorted(kver_str(s) for s in since if s > 0x070000)
            if note != late:
                errs.append("%s: the %s row notes kernel %s, the schema %s"
                            % (path, group, note or "none", late or "none"))
        nss = {ns_of(t, schema) for t in backticked(cells[2]) if t.endswith("*")}
        want_ns = {f["prefix"] for f in schema.group_fields(group) if f["prefix"]}
        if nss != want_ns:
            errs.append("%s: the %s row lists constants %s, its fields take %s"
                        % (path, group or "every-opcode", sorted(n or "?" for n in nss),
                           sorted(want_ns)))
    for f in schema.fields:
        if seen.count(f["name"]) != 1:
            errs.append("%s: field %s listed %d times" % (path, f["name"], seen.count(f["name"])))


def check_cli(schema, errs):
    path = "doc/cli.md"
    text = read(path)
    rows = table_after(text, "| opcode | fields |")
    if rows is None:
        errs.append("%s: no '| opcode | fields |' table" % path)
        return
    groups = {}
    for cells in rows:
        if len(cells) != 2:
            errs.append("%s: row %r has %d cells" % (path, cells, len(cells)))
            continue
        shorts = [backticked(p)[0] for p in split_top(cells[1]) if backticked(p)]
        if cells[0] == "every opcode":
            group = ""
        else:
            ops = re.findall(r"[A-Z][A-Z0-9_]+", re.sub(r"\(.*?\)", "", cells[0]))
            pls = [p for p in schema.payloads if p["name"] in ops]
            if [p["name"] for p in pls] != ops or len({p["group"] for p in pls}) != 1:
                errs.append("%s: row %r: opcodes %s are not one payload group"
                            % (path, cells[0], ops))
                continue
            group = pls[0]["group"]
            want_ops, since = opcodes_cell(group, schema)
            if ops != want_ops:
                errs.append("%s: the %s row lists opcodes %s, the schema %s"
                            % (path, group, ops, want_ops))
            note = re.findall(r"\((\d+\.\d+)\+\)", cells[0])
            late = sorted(kver_str(s) for s in since if s > 0x070000)
            if note != late:
                errs.append("%s: the %s row notes kernel %s, the schema %s"
                            % (path, group, note or "none", late or "none"))
        groups[group] = shorts
        want = [schema.short(f) for f in schema.group_fields(group)]
        if shorts != want:
            errs.append("%s: the %s row lists fields %s, the schema %s"
                        % (path, group or "every-opcode", shorts, want))
    for g in sorted({f["group"] for f in schema.fields} - set(groups)):
        errs.append("%s: no row for the %s fields" % (path, g))

    # "Each field takes the constants of its own kind only: `family` `AF_*`, ..."
    m = re.search(r"Each field takes the constants of its own kind only:(.*?);(.*?take numbers)",
                  text, re.S)
    if not m:
        errs.append("%s: no 'Each field takes the constants of its own kind only' sentence"
                    % path)
    else:
        takes = {}
        for part in re.split(r",\s", m.group(1)):
            toks = backticked(part)
            if len(toks) < 2 or not toks[-1].endswith("*"):
                continue
            for name in toks[0].split("/") + toks[1:-1]:
                takes[name] = ns_of(toks[-1], schema)
        numbers = set(backticked(m.group(2)))
        for f in schema.fields:
            s = schema.short(f)
            if f["prefix"]:
                if takes.get(s) != f["prefix"]:
                    errs.append("%s: field %s takes %s constants, the text says %s"
                                % (path, s, f["prefix"] + "*", takes.get(s)))
            elif f["kind"] in ("NUM", "ADDR4") and s not in numbers:
                errs.append("%s: field %s takes numbers; not said" % (path, s))
        shorts = {schema.short(f) for f in schema.fields}
        for s in set(takes) | numbers:
            if s not in shorts:
                errs.append("%s: the constants sentence names field %s, not in the schema"
                            % (path, s))
    m = re.search(r"`\|` joins bit flags and is accepted only on (.*?);", text, re.S)
    if not m:
        errs.append("%s: no '`|` joins bit flags' sentence" % path)
    else:
        got = set(backticked(m.group(1)))
        want = {schema.short(f) for f in schema.fields if f["kind"] == "BITS"}
        if got != want:
            errs.append("%s: '|' is said to apply to %s, the bit fields are %s"
                        % (path, sorted(got), sorted(want)))
    m = re.search(r"Constants \(case-insensitive\):(.*?)\n\n", text, re.S)
    if not m:
        errs.append("%s: no 'Constants (case-insensitive):' paragraph" % path)
    else:
        body = m.group(1)
        listed = set()
        for tok, ex in re.findall(r"`([A-Z0-9_]+\*)`(?:\s*(?:mode bits\s*)?\(([^)]*)\))?", body):
            ns = ns_of(tok, schema)
            if ns is None:
                errs.append("%s: constants %s: no field takes them" % (path, tok))
                continue
            listed.add(ns)
            for word in re.split(r",\s*", " ".join(ex.split())):
                word = word.split(" ")[0]
                if not word or word == "...":
                    continue
                if tok.rstrip("*") + word not in schema.const_by_name:
                    errs.append("%s: constant %s%s is not in the schema"
                                % (path, tok.rstrip("*"), word))
        if listed != set(schema.namespaces):
            errs.append("%s: constants listed %s, the schema's namespaces %s"
                        % (path, sorted(listed), schema.namespaces))


def check_man7(schema, errs):
    path = "doc/iouring-restrict.7.md"
    rows = table_after(read(path), "| kernel | what it offers | feature level |")
    if rows is None:
        errs.append("%s: no kernel table" % path)
        return
    by_kernel = {r[0]: r[1] for r in rows if len(r) == 3}
    for p in schema.payloads:
        k = kver_str(p["since"])
        if p["name"] not in by_kernel.get(k, ""):
            errs.append("%s: the %s row does not name the %s payload" % (path, k, p["name"]))


def prove_names(path):
    """The module-level constants of iour-prove, evaluated without running
    it (it needs z3)."""
    ns = {"range": range}
    for node in ast.parse(read(path)).body:
        if not isinstance(node, ast.Assign):
            continue
        try:
            val = eval(compile(ast.Expression(node.value), path, "eval"), {"__builtins__": {}}, ns)
        except Exception:  # noqa: BLE001 (anything not a plain constant)
            continue
        for t in node.targets:
            if isinstance(t, ast.Name):
                ns[t.id] = val
            elif isinstance(t, ast.Tuple) and all(isinstance(e, ast.Name) for e in t.elts):
                vals = list(val)
                if len(vals) == len(t.elts):
                    for e, v in zip(t.elts, vals):
                        ns[e.id] = v
    return ns


def check_prove(schema, errs):
    path = "tools/prove/iour-prove"
    ns = prove_names(path)
    fields = ns.get("FIELDS")
    if not isinstance(fields, dict):
        errs.append("%s: no FIELDS table" % path)
    else:
        want = {f["name"]: f["id"] for f in schema.fields}
        for n in sorted(set(fields) | set(want)):
            if fields.get(n) != want.get(n):
                errs.append("%s: FIELDS[%r] is %s, the schema's id %s"
                            % (path, n, fields.get(n), want.get(n)))
    pdu = ns.get("PDU")
    if not isinstance(pdu, dict):
        errs.append("%s: no PDU table" % path)
    else:
        want = {p["opcode"]: p["pdu"] for p in schema.payloads}
        if pdu != want:
            errs.append("%s: PDU is %s, the schema's payloads %s" % (path, pdu, want))
    names = ns.get("NAMES")
    if not isinstance(names, dict):
        errs.append("%s: no NAMES table" % path)
    else:
        want = schema.saved_names()
        for n in sorted(set(names) | set(want)):
            c = schema.const_by_name.get(n)
            if n not in want and c is None:
                errs.append("%s: NAMES has %s, not a constant of the schema" % (path, n))
            elif c is not None and names.get(n, c["value"]) != c["value"]:
                errs.append("%s: NAMES[%r] is %s, the schema's %s"
                            % (path, n, names.get(n), c["value"]))
            elif n in want and n not in names:
                errs.append("%s: NAMES lacks %s (%s), which a saved policy may write"
                            % (path, n, want[n]))


# ---- generated: doc/policy.schema.json's field enum

SCHEMA_JSON = "doc/policy.schema.json"
ENUM_RE = re.compile(r'^(?P<indent>[ \t]*)"field": \{\n(?P=indent)  "enum": \[[^\]]*\]', re.M)


def field_enum(schema, text):
    """text with the "field" enum rewritten from the table, wrapped at 100
    columns as the rest of the file."""
    m = ENUM_RE.search(text)
    if not m:
        sys.exit("check-schema-docs: %s: no \"field\": { \"enum\": [...] }" % SCHEMA_JSON)
    indent = m.group("indent") + "  "
    head = indent + '"enum": ['
    lines, cur = [], head
    items = [json.dumps(f["name"]) for f in schema.fields]
    for i, it in enumerate(items):
        piece = it + ("," if i + 1 < len(items) else "]")
        sep = "" if cur == head else " "
        if cur != head and len(cur) + len(sep) + len(piece) > 100:
            lines.append(cur.rstrip())
            cur = " " * len(head) + piece
        else:
            cur += sep + piece
    lines.append(cur)
    new = m.group(0).split("\n", 1)[0] + "\n" + "\n".join(lines)
    return text[:m.start()] + new + text[m.end():]


def check_completion(schema, errs):
    rel = "tools/completion/iour-restrict.bash"
    m = re.search(r'compgen -W "((?:[a-z_0-9]+= ?)+)"', read(rel))
    if not m:
        errs.append("%s: no list of sim --ctx keys (compgen -W \"key= ...\")" % rel)
        return
    have = [w.rstrip("=") for w in m.group(1).split()]
    want, seen = [], set()
    for f in schema.fields:
        slot = (f["group"], f["offset"], f["size"])
        if slot in seen:
            continue
        seen.add(slot)
        if schema.short(f) not in want:
            want.append(schema.short(f))
    want.append("addrlen")
    for k in want:
        if k not in have:
            errs.append("%s: sim --ctx key '%s' is not offered" % (rel, k))
    for k in have:
        if k not in want:
            errs.append("%s: offers '%s=', which is no sim --ctx key" % (rel, k))
    if len(have) != len(set(have)):
        errs.append("%s: a sim --ctx key is offered twice" % rel)


def read(rel):
    with open(os.path.join(ROOT, rel), encoding="utf-8") as f:
        return f.read()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--write", action="store_true",
                    help="rewrite the generated lists instead of checking them")
    a = ap.parse_args()
    schema = Schema(os.path.abspath(a.build))
    old = read(SCHEMA_JSON)
    new = field_enum(schema, old)
    json.loads(new)
    if a.write:
        if new != old:
            with open(os.path.join(ROOT, SCHEMA_JSON), "w", encoding="utf-8") as f:
                f.write(new)
        return 0
    errs = []
    if new != old:
        errs.append("%s: the field enum differs from the schema's fields: run 'make generate'"
                    % SCHEMA_JSON)
    check_policy_files(schema, errs)
    check_cli(schema, errs)
    check_man7(schema, errs)
    check_prove(schema, errs)
    check_completion(schema, errs)
    for e in errs:
        print("check-schema-docs: " + e)
    if errs:
        return 1
    print("check-schema-docs: %d fields, %d constants, %d payloads: the lists agree"
          % (len(schema.fields), len(schema.consts), len(schema.payloads)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
