#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A manual page from a markdown manual (doc/cli.md, doc/iouring-restrict.7.md).

    md2man.py IN.md OUT.N
    md2man.py --command NAME doc/cli.md OUT.1   iour-restrict-NAME(1)
    md2man.py --list-commands doc/cli.md        the command sections' names

A manual with a "## COMMANDS" section of "### name" subsections (doc/cli.md)
also gives one git-style page per command, PROG-NAME(1) (see command_md):
NAME, SYNOPSIS (the command's lines of the main SYNOPSIS), DESCRIPTION (the
subsection's text), OPTIONS (its "- `--option`" lists), EXIT STATUS (its
"Exit status:" paragraph, else the main page's EXIT STATUS) and SEE ALSO;
the main page's SEE ALSO then lists every command page.

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


def sections(md):
    """The "## " sections of a manual: [(title, [lines])], code fences kept
    whole (a "# " or "## " line inside a fence is text)."""
    out = []
    fence = False
    for ln in md.split("\n"):
        if ln.startswith("```"):
            fence = not fence
        if not fence and re.match(r"##\s", ln):
            out.append((ln[2:].strip(), []))
        elif out:
            out[-1][1].append(ln)
    return out


def commands(md):
    """The command subsections ("### name" under "## COMMANDS"): an
    ordered list of (name, [lines])."""
    out = []
    fence = False
    for title, lines in sections(md):
        if title.upper() != "COMMANDS":
            continue
        for ln in lines:
            if ln.startswith("```"):
                fence = not fence
            m = None if fence else re.match(r"###\s+([\w-]+)\s*$", ln)
            if m:
                out.append((m.group(1), []))
            elif out:
                out[-1][1].append(ln)
    return out


def blocks(lines):
    """Blank-line separated blocks; a fenced code block is one block, and
    an indented block (the continuation of a list item) joins the block
    before it."""
    out, cur, fence = [], [], False
    for ln in lines:
        if ln.startswith("```"):
            fence = not fence
        if not fence and not ln.strip():
            if cur:
                out.append(cur)
            cur = []
            continue
        cur.append(ln)
    if cur:
        out.append(cur)
    merged = []
    for b in out:
        if merged and re.match(r"  \S", b[0]) and not b[0].startswith("    "):
            merged[-1] = merged[-1] + [""] + b
        else:
            merged.append(b)
    return merged


def prog_name(md):
    m = re.match(r"#\s+([\w.-]+)\((\d)\)", md)
    if not m:
        raise SystemExit("md2man: the first line must be '# name(N)'")
    return m.group(1)


def synopsis(md, prog, name):
    """The command's lines of the main SYNOPSIS, with their continuations."""
    for title, lines in sections(md):
        if title.upper() != "SYNOPSIS":
            continue
        out, take, pad = [], False, 0
        for ln in lines:
            if ln.startswith("```") or not ln.strip():
                take = False
                continue
            if ln.startswith(prog + " "):
                take = ln.split()[1] == name
                if take:
                    # The main page aligns the commands' options; alone,
                    # the command needs no padding.
                    m = re.match(r"\S+ \S+( +)", ln)
                    pad = len(m.group(1)) - 1 if m else 0
                    out.append(ln[:len(prog) + 1 + len(name) + 1] + ln[len(prog) + len(name) + 2 + pad:])
                    continue
            if take:
                out.append(ln[pad:] if ln[:pad].strip() == "" else ln)
        return out
    return []


def summary(body):
    """NAME's description: the first sentence of the section, without its
    parenthesised asides and without what follows a colon."""
    for b in blocks(body):
        if b[0].startswith(("```", "|", "- ", "    ")):
            continue
        text = re.sub(r"`([^`]*)`", r"\1", " ".join(x.strip() for x in b))
        while re.search(r"\([^()]*\)", text):
            text = re.sub(r"\s*\([^()]*\)", "", text)
        text = re.split(r"\.(?:\s|$)|:\s", text)[0].strip()
        if len(text) > 70:
            text = text.split(", ")[0]
        return text[:1].lower() + text[1:]
    raise SystemExit("md2man: the command section has no paragraph for NAME")


def command_md(md, name):
    """The markdown of PROG-NAME(1), for command_md's caller to convert."""
    prog = prog_name(md)
    cmds = dict(commands(md))
    if name not in cmds:
        raise SystemExit("md2man: no command section '### %s' under '## COMMANDS'" % name)
    body = cmds[name]
    syn = synopsis(md, prog, name)
    if not syn:
        raise SystemExit("md2man: the SYNOPSIS has no line for '%s %s'" % (prog, name))
    desc, opts, status = [], [], []
    for b in blocks(body):
        if re.match(r"- `--?\w", b[0]):
            # An option list takes the paragraph introducing it ("Set
            # options (shared with `verify`):") along.
            if desc and desc[-1][-1].rstrip().endswith(":") and \
                    not desc[-1][0].startswith(("```", "|", "- ")):
                opts.append(desc.pop())
            opts.append(b)
        elif re.match(r"Exit status:\s", b[0]):
            first = re.sub(r"^Exit status:\s*", "", b[0])
            status.append([first[:1].upper() + first[1:]] + b[1:])
        else:
            desc.append(b)
    # Option lists another command's section shares with this one ("Set
    # options (shared with `verify`):" under ruleset).
    for other, obody in cmds.items():
        if other == name:
            continue
        obl = blocks(obody)
        for k, b in enumerate(obl):
            if re.search(r"\(shared with [^)]*`%s`" % re.escape(name), " ".join(b)) and \
                    k + 1 < len(obl) and re.match(r"- `--?\w", obl[k + 1][0]):
                opts += [["%s, as `%s %s` takes them:" % (" ".join(b).rstrip(":"), prog, other)], obl[k + 1]]
    opts.append(["- `-h`, `--help`: print the command's help and exit."])
    if not status:
        for title, lines in sections(md):
            if title.upper() == "EXIT STATUS":
                status = blocks(lines)
    page = "%s-%s" % (prog, name)
    out = ["# %s(1)" % page, "", "## NAME", "",
           "`%s` - %s" % (page, summary(body)), "",
           "## SYNOPSIS", "", "```"] + syn + ["```", "",
           "## DESCRIPTION", ""]
    for sec, bl in (("DESCRIPTION", desc), ("OPTIONS", opts), ("EXIT STATUS", status)):
        if sec != "DESCRIPTION":
            out += ["## " + sec, ""]
        for b in bl:
            out += b + [""]
    out += ["## SEE ALSO", "", see_also([prog + "(1)", "iouring-restrict(7)"]), ""]
    return "\n".join(out)


def see_also(pages):
    return ", ".join("`%s`(%s)" % (p[:-3], p[-2]) for p in pages)


def with_command_pages(md):
    """The main page lists every command page in its SEE ALSO (added at the
    end, or to the end of the manual's own SEE ALSO)."""
    cmds = commands(md)
    if not cmds:
        return md
    prog = prog_name(md)
    line = see_also(["%s-%s(1)" % (prog, n) for n, _ in cmds] + ["iouring-restrict(7)"])
    lines = md.rstrip("\n").split("\n")
    fence = False
    for i, ln in enumerate(lines):
        if ln.startswith("```"):
            fence = not fence
        if not fence and re.match(r"##\s+SEE ALSO\s*$", ln, re.I):
            j = i + 1
            while j < len(lines) and not re.match(r"##?\s", lines[j]):
                j += 1
            return "\n".join(lines[:j] + ["", line, ""] + lines[j:]) + "\n"
    return "\n".join(lines + ["", "## SEE ALSO", "", line]) + "\n"


def main(argv):
    if len(argv) == 3 and argv[1] == "--list-commands":
        with open(argv[2], encoding="utf-8") as f:
            for name, _ in commands(f.read()):
                print(name)
        return 0
    if len(argv) == 5 and argv[1] == "--command":
        with open(argv[3], encoding="utf-8") as f:
            text = convert(command_md(f.read(), argv[2]))
        out = argv[4]
    elif len(argv) == 3:
        with open(argv[1], encoding="utf-8") as f:
            text = convert(with_command_pages(f.read()))
        out = argv[2]
    else:
        sys.stderr.write(__doc__)
        return 2
    with open(out, "w", encoding="utf-8") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
