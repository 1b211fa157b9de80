#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A manual page from a markdown manual (doc/cli.md, doc/iouring-restrict.7.md).

    md2man.py IN.md OUT.N

The markdown is the subset these files use:
- "# name(N)" first: the page's name and section (.TH);
- "## TITLE" sections (.SH, upper-cased), "### title" subsections (.SS);
- paragraphs; "- " and "1. " lists whose items continue on lines indented
  by two or more spaces;
- fenced (```) and indented (4 spaces) code blocks;
- pipe tables (rendered with tbl: the page starts with the tbl marker);
- inline `code`, **bold**, *emphasis* and [text](link).
Anything else is a paragraph, so a new construct shows up as text rather
than vanishing; scripts/check-man.sh renders every page with warnings on.
"""
import re
import sys

DATE = "2026"
SOURCE = "libiouring-restrict"


def esc(text):
    return text.replace("\\", "\\e")


def minus(text):
    """Dashes in code and option names are minus signs (\\-) in roff."""
    return text.replace("-", "\\-")


def inline(text):
    out = []
    pos = 0
    for m in re.finditer(r"`([^`]+)`", text):
        out.append(prose(text[pos:m.start()]))
        out.append("\\fB" + minus(esc(m.group(1))) + "\\fR")
        pos = m.end()
    out.append(prose(text[pos:]))
    return "".join(out)


def prose(text):
    text = esc(text)
    text = re.sub(r"\[([^\]]+)\]\(([^)]+)\)", r"\1", text)
    text = re.sub(r"\*\*([^*]+)\*\*", r"\\fB\1\\fR", text)
    text = re.sub(r"(?<![\w*])\*([^*\s][^*]*)\*(?![\w*])", r"\\fI\1\\fR", text)
    # Option names in prose (--foo, -q) are minus signs too.
    text = re.sub(r"(?<![\w-])(--?)(?=[A-Za-z])", lambda m: minus(m.group(1)), text)
    return text


def line_safe(text):
    out = []
    for ln in text.split("\n"):
        if ln.startswith((".", "'")):
            ln = "\\&" + ln
        out.append(ln)
    return "\n".join(out)


def code_block(lines):
    body = []
    for ln in lines:
        ln = minus(esc(ln.rstrip()))
        stripped = ln.lstrip(" ")
        ln = "\\ " * (len(ln) - len(stripped)) + stripped
        if ln.startswith((".", "'")):
            ln = "\\&" + ln
        body.append(ln if ln else "")
    return [".PP", ".RS 4", ".nf"] + body + [".fi", ".RE"]


def split_row(row):
    """A table row's cells; a | inside `code` or escaped as \\| is text."""
    cells, cur, code, i = [], "", False, 0
    row = row.strip()
    if row.startswith("|"):
        row = row[1:]
    while i < len(row):
        ch = row[i]
        if ch == "\\" and row[i + 1:i + 2] == "|":
            cur += "|"
            i += 2
            continue
        if ch == "`":
            code = not code
        if ch == "|" and not code:
            cells.append(cur.strip())
            cur = ""
        else:
            cur += ch
        i += 1
    if cur.strip():
        cells.append(cur.strip())
    return cells


def table(rows):
    cells = [split_row(r) for r in rows]
    cells = [r for r in cells if not all(re.fullmatch(r":?-+:?", c) for c in r)]
    ncol = max(len(r) for r in cells)
    # The column with the most text takes the width left (x); the others
    # are as wide as their longest word allows.
    widest = max(range(ncol), key=lambda c: sum(len(r[c]) for r in cells if c < len(r)))
    fmt_head = " ".join("lbx" if c == widest else "lb" for c in range(ncol))
    fmt_body = " ".join("lx" if c == widest else "l" for c in range(ncol)) + "."
    out = [".PP", ".TS", "allbox tab(\t);", fmt_head, fmt_body]
    for r in cells:
        r = r + [""] * (ncol - len(r))
        out.append("\t".join("T{\n%s\nT}" % line_safe(inline(c)) for c in r))
    out.append(".TE")
    return out


def convert(md):
    lines = md.split("\n")
    out = []
    m = re.match(r"#\s+([\w.-]+)\((\d)\)\s*$", lines[0])
    if not m:
        raise SystemExit("md2man: the first line must be '# name(N)'")
    name, sect = m.group(1), m.group(2)
    out.append("'\\\" t")
    out.append('.TH "%s" %s "%s" "%s"' % (name.upper(), sect, DATE, SOURCE))
    out.append(".nh")
    out.append(".ad l")
    i = 1
    section = ""
    para = []

    def flush():
        if para:
            text = " ".join(p.strip() for p in para)
            if section == "NAME":
                text = re.sub(r"\s+-\s+", " \\\\- ", inline(text), count=1)
                text = text.replace("\\fB", "").replace("\\fR", "")
                out.append(line_safe(text))
            else:
                out.append(".PP")
                out.append(line_safe(inline(text)))
            para.clear()

    while i < len(lines):
        ln = lines[i]
        if ln.startswith("```"):
            flush()
            j = i + 1
            while j < len(lines) and not lines[j].startswith("```"):
                j += 1
            out += code_block(lines[i + 1:j])
            i = j + 1
            continue
        h = re.match(r"(#{2,3})\s+(.*)", ln)
        if h:
            flush()
            if len(h.group(1)) == 2:
                section = h.group(2).strip().upper()
                out.append('.SH "%s"' % esc(section))
            else:
                out.append('.SS "%s"' % esc(h.group(2).strip()))
            i += 1
            continue
        if ln.startswith("|"):
            flush()
            j = i
            while j < len(lines) and lines[j].startswith("|"):
                j += 1
            out += table(lines[i:j])
            i = j
            continue
        li = re.match(r"(-|\d+\.)\s+(.*)", ln)
        if li and not para:
            mark = "\\(bu" if li.group(1) == "-" else li.group(1)
            item = [li.group(2)]
            j = i + 1
            while j < len(lines) and re.match(r"\s{2,}\S", lines[j]):
                item.append(lines[j])
                j += 1
            out.append(".IP %s 4" % mark)
            out.append(line_safe(inline(" ".join(x.strip() for x in item))))
            i = j
            continue
        if ln.startswith("    ") and not para:
            j = i
            block = []
            while j < len(lines) and (lines[j].startswith("    ") or not lines[j].strip()):
                block.append(lines[j][4:])
                j += 1
            while block and not block[-1].strip():
                block.pop()
            out += code_block(block)
            i = j
            continue
        if not ln.strip():
            flush()
        else:
            para.append(ln)
        i += 1
    flush()
    return "\n".join(out) + "\n"


def main(argv):
    if len(argv) != 3:
        sys.stderr.write(__doc__)
        return 2
    with open(argv[1], encoding="utf-8") as f:
        text = convert(f.read())
    with open(argv[2], "w", encoding="utf-8") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
