#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Section 3 manual pages from the public headers' Doxygen comments.

    gen-man3.py --list HEADER...            the public functions (IOUR_API
                                            declarations), one per line
    gen-man3.py XMLDIR OUTDIR HEADER...     one OUTDIR/NAME.3 per public
                                            function, from doxygen's XML

The list comes from the headers themselves, not from doxygen, so that a
function doxygen missed is still listed: scripts/check-man.sh compares it
with the pages written.  New functions and new headers are picked up by
themselves; SEE ALSO names the other functions of the same header (the
family) and iouring-restrict(7).

Each page also gives, from doxygen's XML of the headers:
- the members of every struct it takes or returns (and of the structs
  those point to), the values of every enum it takes, returns or names
  in its description (an enum's value such as IOUR_POLICY_ATTR_COMPAT
  names the enum), and the documented macros those texts name (flags,
  limits, IOUR_KVER());
- an EXAMPLES section: a program of doc/examples/man3/ that calls the
  function (the one named after the function's header if it does, else
  the shortest), which `make check-man-examples` compiles, links and runs.
A page without an example, or a struct named in a SYNOPSIS without its
members (other than the library's opaque handles), fails the generation.
"""
import copy
import os
import re
import sys
import xml.etree.ElementTree as ET

DATE = "2026"
SOURCE = "libiouring-restrict"
MANUAL = "libiouring-restrict Manual"

EXAMPLES_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "doc",
                            "examples", "man3")
TYPE_RE = re.compile(r"\b(struct|enum)\s+(iour_\w+)")
DECL_RE = re.compile(r"^IOUR_API\b[^;{]*?\b([A-Za-z_]\w*)\s*\(", re.M)


def opaque_structs(headers):
    """The library's opaque handles: structs the headers declare
    (`struct iour_plan;`) and never define."""
    declared, defined = set(), set()
    for h in headers:
        with open(h, encoding="utf-8") as f:
            src = f.read()
        declared.update(re.findall(r"^struct\s+(iour_\w+)\s*;", src, re.M))
        defined.update(re.findall(r"^struct\s+(iour_\w+)\s*\{", src, re.M))
    return declared - defined


def public_functions(header):
    with open(header, encoding="utf-8") as f:
        return DECL_RE.findall(f.read())


def esc(text):
    """Escape text for roff (not at line starts: see fix_lines)."""
    return text.replace("\\", "\\e")


def fix_lines(text):
    """Protect lines that would start with a control character."""
    out = []
    for line in text.split("\n"):
        line = line.strip()
        if line.startswith("\x01"):
            line = line[1:]
        elif line.startswith((".", "'")):
            line = "\\&" + line
        out.append(line)
    return "\n".join(out)


class Roff:
    """Inline and block rendering of doxygen's XML description markup."""

    def __init__(self):
        self.skip = {"parameterlist", "simplesect"}

    def inline(self, el, font="R"):
        parts = [esc(el.text or "")]
        for ch in el:
            tag = ch.tag
            if tag in self.skip and font == "R":
                pass
            elif tag in ("bold", "computeroutput"):
                parts.append("\\fB" + self.inline(ch, "B") + "\\f" + font)
            elif tag == "emphasis":
                parts.append("\\fI" + self.inline(ch, "I") + "\\f" + font)
            elif tag == "ref":
                txt = self.inline(ch, font)
                if ch.get("kindref") == "member" and font == "R":
                    txt = "\\fB" + txt + "\\fR"
                parts.append(txt)
            elif tag in ("itemizedlist", "orderedlist", "programlisting"):
                parts.append("\n" + self.block(ch) + "\n")
            elif tag == "linebreak":
                parts.append("\n.br\n")
            elif tag == "ulink":
                parts.append(self.inline(ch, font))
            elif tag == "sp":
                parts.append(" ")
            else:
                parts.append(self.inline(ch, font))
            parts.append(esc(ch.tail or ""))
        return "".join(parts)

    def block(self, el):
        if el.tag in ("itemizedlist", "orderedlist"):
            items = []
            for n, li in enumerate(el.findall("listitem"), 1):
                mark = "\\(bu" if el.tag == "itemizedlist" else "%d." % n
                body = "\n.IP\n".join(self.para(p) for p in li.findall("para"))
                items.append("\x01.IP %s 4\n%s" % (mark, body.replace("\n.IP\n", "\n\x01.IP\n")))
            return "\n".join(items) + "\n\x01.PP"
        if el.tag == "programlisting":
            lines = []
            for cl in el.findall("codeline"):
                line = esc(code_text(cl))
                stripped = line.lstrip(" ")
                line = "\\ " * (len(line) - len(stripped)) + stripped
                if line.startswith((".", "'")):
                    line = "\\&" + line
                lines.append(line)
            return "\x01.PP\n\x01.nf\n\x01.RS 4\n" + "\n".join(lines) + "\n\x01.RE\n\x01.fi\n\x01.PP"
        return self.para(el)

    def para(self, p):
        return fix_lines(re.sub(r"[ \t]*\n[ \t]*", "\n", self.inline(p)).strip())


def _md_inline(text):
    """The markdown subset of the header comments as doxygen-like XML."""
    from xml.sax.saxutils import escape
    text = escape(text)
    text = re.sub(r"`([^`]+)`", r"<computeroutput>\1</computeroutput>", text)
    text = re.sub(r"\*\*([^*]+)\*\*", r"<bold>\1</bold>", text)
    text = re.sub(r"[#@]p\s+(\w+)", r"<computeroutput>\1</computeroutput>", text)
    text = re.sub(r"#(\w+)", r"\1", text)
    return text


def member_from_header(header, name):
    """A memberdef built from the header itself, for a function doxygen
    lists under another entity (a function named like an enum)."""
    with open(header, encoding="utf-8") as f:
        src = f.read()
    m = re.search(r"/\*\*((?:(?!\*/).)*)\*/\s*IOUR_API\s+([^;]*?)\b%s\s*\(([^)]*)\)\s*;"
                  % re.escape(name), src, re.S)
    if not m:
        return None
    comment, rtype, args = m.group(1), m.group(2).strip(), m.group(3)
    lines = [re.sub(r"^\s*\* ?", "", ln) for ln in comment.split("\n")]
    blocks, cur = [], None
    for ln in lines:
        t = re.match(r"@(\w+)\s*(.*)", ln.strip())
        if t:
            cur = [t.group(1), t.group(2)]
            blocks.append(cur)
        elif cur is not None:
            cur[1] += "\n" + ln
        else:
            blocks.append(cur := ["text", ln])
    brief, paras, params, simple = "", [], [], []
    for kind, body in blocks:
        body = body.strip()
        if kind == "brief":
            brief = body
        elif kind == "param":
            pn, _, pd = body.partition(" ")
            params.append((pn, pd))
        elif kind in ("return", "since"):
            simple.append((kind, body))
        elif body:
            paras.append(body)
    xml = ["<memberdef kind='function'><type>%s</type><name>%s</name>" % (_md_inline(rtype), name)]
    for a in args.split(","):
        a = a.strip()
        if a == "void" or not a:
            continue
        mm = re.match(r"(.*?)(\w+)$", a)
        xml.append("<param><type>%s</type><declname>%s</declname></param>"
                   % (_md_inline(mm.group(1).strip()), mm.group(2)))
    xml.append("<briefdescription><para>%s</para></briefdescription>" % _md_inline(brief))
    xml.append("<detaileddescription>")
    xml += ["<para>%s</para>" % _md_inline(p) for p in paras]
    xml.append("<para><parameterlist kind='param'>")
    for pn, pd in params:
        xml.append("<parameteritem><parameternamelist><parametername>%s</parametername>"
                   "</parameternamelist><parameterdescription><para>%s</para>"
                   "</parameterdescription></parameteritem>" % (pn, _md_inline(pd)))
    xml.append("</parameterlist>")
    for kind, body in simple:
        xml.append("<simplesect kind='%s'><para>%s</para></simplesect>" % (kind, _md_inline(body)))
    xml.append("</para></detaileddescription></memberdef>")
    return ET.fromstring("".join(xml))


def code_text(el):
    """A code line's text, with doxygen's <sp/> as spaces."""
    parts = [el.text or ""]
    for ch in el:
        parts.append(" " if ch.tag == "sp" else code_text(ch))
        parts.append(ch.tail or "")
    return "".join(parts)


def text_of(el):
    return "".join(el.itertext()).strip() if el is not None else ""


class Types:
    """The structs and enums of the headers, from doxygen's XML."""

    def __init__(self, xmldir):
        self.structs, self.enums, self.value_enum, self.defines = {}, {}, {}, {}
        for fn in os.listdir(xmldir):
            if not fn.endswith(".xml"):
                continue
            root = ET.parse(os.path.join(xmldir, fn)).getroot()
            for cd in root.iter("compounddef"):
                if cd.get("kind") == "struct":
                    self.structs[cd.findtext("compoundname")] = [
                        m for m in cd.iter("memberdef") if m.get("kind") == "variable"]
            if fn.endswith("_8h.xml"):
                for m in root.iter("memberdef"):
                    if m.get("kind") == "define" and m.findtext("name"):
                        self.defines[m.findtext("name")] = m
                    if m.get("kind") == "enum" and m.findtext("name"):
                        self.enums[m.findtext("name")] = m
                        for ev in m.findall("enumvalue"):
                            self.value_enum[ev.findtext("name")] = m.findtext("name")

    def wanted(self, member):
        """(kind, name) of the types the function takes, returns or names."""
        seen = []

        def add(kind, name):
            if (kind, name) not in seen:
                seen.append((kind, name))

        for el in [member.find("type")] + [p.find("type") for p in member.findall("param")]:
            for kind, name in TYPE_RE.findall(text_of(el)):
                add(kind, name)
        # "enum iour_x" anywhere in the text ("@return an enum iour_status
        # value"); enum values only where the description and the
        # parameters name them (RETURN VALUE's IOUR_ERRNO__* would add the
        # error enum to every page)
        for part in ("briefdescription", "detaileddescription"):
            el = member.find(part)
            for kind, name in TYPE_RE.findall(" ".join(el.itertext()) if el is not None else ""):
                if kind == "enum":
                    add(kind, name)
        words = []
        for part in ("briefdescription", "detaileddescription"):
            el = member.find(part)
            if el is None:
                continue
            el = copy.deepcopy(el)
            for ss in el.iter("simplesect"):
                if ss.get("kind") == "return":
                    for sub in list(ss):
                        ss.remove(sub)
                    ss.text = ""
            words.append(" ".join(el.itertext()))
        text = " ".join(words)
        for w in re.findall(r"\b[A-Z][A-Z0-9_]+\b", text):
            e = self.value_enum.get(w)
            if e:
                add("enum", e)
            elif w in self.defines:
                add("define", w)
        # and what those name in turn: the structs a struct's members point
        # to, the enums its members name, the enums an enum's values name
        # (an attribute's values), and the macros either names
        i = 0
        while i < len(seen):
            kind, name = seen[i]
            i += 1
            if kind == "struct":
                for m in self.structs.get(name, []):
                    for k2, n2 in TYPE_RE.findall(text_of(m.find("type"))):
                        if k2 == "struct":
                            add(k2, n2)
                    mtext = " ".join(m.itertext())
                    for k2, n2 in TYPE_RE.findall(mtext):
                        if k2 == "enum" and n2 in self.enums:
                            add(k2, n2)
                    for w in re.findall(r"\b[A-Z][A-Z0-9_]+\b", mtext):
                        if w in self.defines:
                            add("define", w)
            elif name in self.enums:
                for ev in self.enums[name].findall("enumvalue"):
                    etext = " ".join(ev.itertext())
                    for k2, n2 in TYPE_RE.findall(etext):
                        if k2 == "enum" and n2 in self.enums:
                            add(k2, n2)
                    for w in re.findall(r"\b[A-Z][A-Z0-9_]+\b", etext):
                        if w in self.defines:
                            add("define", w)
        return seen

    def render(self, member, r):
        out, missing = [], []
        for kind, name in self.wanted(member):
            if kind == "struct":
                if name not in self.structs:
                    missing.append(name)
                    continue
                out.append('.SS "struct %s"' % name)
                out.append("Members, in order:")
                for m in self.structs[name]:
                    decl = "%s %s%s" % (text_of(m.find("type")), m.findtext("name"),
                                        m.findtext("argsstring") or "")
                    out.append(".TP")
                    out.append("\\fB%s\\fP" % esc(re.sub(r"\*\s+", "*", decl).replace("* ", "*")))
                    out.append(self.doc(m, r) or "(undocumented)")
            elif kind == "define":
                continue
            elif name in self.enums:
                e = self.enums[name]
                out.append('.SS "enum %s"' % name)
                out.append("Values:")
                for ev in e.findall("enumvalue"):
                    init = text_of(ev.find("initializer"))
                    out.append(".TP")
                    out.append("\\fB%s\\fP%s" % (ev.findtext("name"),
                                                  (" " + esc(init)) if init else ""))
                    out.append(self.doc(ev, r) or "(undocumented)")
        # the documented macros the text names (flags, limits, IOUR_KVER())
        macros = [n for k, n in self.wanted(member) if k == "define" and self.doc(self.defines[n], r)]
        if macros:
            out.append('.SS "Constants and macros"')
            for n in macros:
                d = self.defines[n]
                params = [p.findtext("defname") for p in d.findall("param")]
                head = n + ("(%s)" % ", ".join(params) if d.find("param") is not None else "")
                init = text_of(d.find("initializer"))
                out.append(".TP")
                out.append("\\fB%s\\fP%s" % (head, (" " + esc(init)) if init and not params
                                              and len(init) < 40 else ""))
                out.append(self.doc(self.defines[n], r))
        return out, missing

    @staticmethod
    def doc(el, r):
        paras = []
        for part in ("briefdescription", "detaileddescription"):
            d = el.find(part)
            if d is not None:
                paras += [r.para(p) for p in d.findall("para")]
        return "\n.IP\n".join(p for p in paras if p)


def find_example(name, header):
    """The example program for function NAME: doc/examples/man3/H.c for
    header H.h if it calls NAME, else the shortest one that does."""
    call = re.compile(r"\b%s\s*\(" % re.escape(name))
    found = []
    for fn in sorted(os.listdir(EXAMPLES_DIR)):
        if not fn.endswith(".c"):
            continue
        with open(os.path.join(EXAMPLES_DIR, fn), encoding="utf-8") as f:
            src = f.read()
        if call.search(src):
            found.append((fn != os.path.basename(header)[:-2] + ".c", src.count("\n"), fn, src))
    return min(found)[2:] if found else (None, None)


def render_example(fn, src):
    out = [".SH EXAMPLES",
           "The program \\fIdoc/examples/man3/%s\\fP of the source tree "
           "(\\fBmake check\\-man\\-examples\\fP compiles, links and runs it):" % esc(fn),
           ".PP", ".RS 4", ".EX"]
    for line in src.rstrip("\n").split("\n"):
        if line.startswith("/* SPDX"):
            continue
        line = line.expandtabs(4).rstrip()
        line = line.replace("\\", "\\e").replace("-", "\\-")
        if not line or line.startswith((".", "'")):
            line = "\\&" + line
        out.append(line)
    out += [".EE", ".RE"]
    return out


def render(member, header, family, filedoc=None, types=None, problems=None):
    r = Roff()
    name = member.findtext("name")
    rtype = text_of(member.find("type"))
    brief_el = member.find("briefdescription")
    brief_paras = [r.para(p) for p in brief_el.findall("para")] if brief_el is not None else []
    # NAME: the brief without the leading "**name()** ".
    brief_plain = " ".join(text_of(p) for p in brief_el.findall("para")) if brief_el is not None else ""
    brief_plain = re.sub(r"^\s*%s\(\)\s*" % re.escape(name), "", brief_plain)
    brief_plain = re.sub(r"\s+", " ", brief_plain).strip()
    # The first sentence ("e.g." and "i.e." do not end one).
    first = re.split(r"(?<!e\.g\.)(?<!i\.e\.)(?<=[.:;])\s", brief_plain, maxsplit=1)[0]
    first = first.rstrip(".:;")
    out = []
    out.append('.TH "%s" 3 "%s" "%s" "%s"' % (name.upper(), DATE, SOURCE, MANUAL))
    out.append(".nh")
    out.append(".ad l")
    out.append(".SH NAME")
    out.append(fix_lines("%s \\- %s" % (name, esc(first or "see DESCRIPTION"))))
    out.append(".SH SYNOPSIS")
    out.append(".nf")
    out.append("\\fB#include <iouring_restrict/%s>\\fR" % os.path.basename(header))
    out.append(".PP")
    params = member.findall("param")
    args = []
    for prm in params:
        t = text_of(prm.find("type"))
        d = prm.findtext("declname") or ""
        a = prm.findtext("array") or ""
        sep = "" if (t.endswith("*") or not d) else " "
        args.append(("%s%s\\fI%s\\fP%s" % (esc(t), sep, d, esc(a))) if d else esc(t))
    sep = "" if rtype.endswith("*") else " "
    lead = "\\fB%s%s%s\\fP(" % (esc(rtype), sep, name)
    if not args:
        out.append(lead + "void);")
    else:
        out.append(fix_lines(lead + (",\n" + " " * 8).join(args) + ");"))
    out.append(".fi")
    out.append(".PP")
    out.append("Link with \\fI\\-liouring\\-restrict\\fP "
               "(\\fBpkg\\-config \\-\\-libs iouring\\-restrict\\fP).")

    detail = member.find("detaileddescription")
    desc = list(brief_paras)
    param_items, returns, since, notes = [], [], "", []
    if detail is not None:
        for p in detail.findall("para"):
            for pl in p.findall("parameterlist"):
                for it in pl.findall("parameteritem"):
                    pn = ", ".join(text_of(x) for x in it.iter("parametername"))
                    pd = it.find("parameterdescription")
                    body = "\n.IP\n".join(r.para(x) for x in pd.findall("para")) if pd is not None else ""
                    param_items.append((pn, body))
            for ss in p.findall("simplesect"):
                kind = ss.get("kind")
                body = "\n.PP\n".join(r.para(x) for x in ss.findall("para"))
                if kind == "return":
                    returns.append(body)
                elif kind == "since":
                    since = text_of(ss)
                elif kind in ("note", "warning", "see", "par", "remark", "attention"):
                    notes.append((kind, body))
                else:
                    desc.append(body)
            own = r.para(p)
            if own:
                desc.append(own)
    out.append(".SH DESCRIPTION")
    out.append("\n.PP\n".join(d for d in desc if d) or "Undocumented.")
    for kind, body in notes:
        out.append(".PP")
        out.append("\\fB%s:\\fR %s" % (kind.capitalize(), body))
    if param_items:
        out.append(".SS Parameters")
        for pn, body in param_items:
            out.append(".TP")
            out.append("\\fI%s\\fP" % esc(pn))
            out.append(body)
    if types is not None:
        tlines, missing = types.render(member, r)
        out += tlines
        for t in missing:
            if t not in types.opaque:
                problems.append("%s: struct %s has no members in doxygen's XML" % (name, t))
    if returns:
        out.append(".SH RETURN VALUE")
        for body in returns:
            # One paragraph per outcome: "0 on success; -EINVAL if ...; ..."
            clauses = re.split(r";\s+(?=(?:\\f[BIR])*-)", body)
            out.append(clauses[0].rstrip(";"))
            for c in clauses[1:]:
                out.append(".IP \\(bu 2")
                out.append(fix_lines(c.rstrip(";")))
    if since:
        out.append(".SH VERSIONS")
        out.append("Since libiouring\\-restrict %s." % esc(since.rstrip(".")))
    if filedoc is not None:
        fparas = [r.para(p) for p in filedoc.findall("para")]
        fparas = [p for p in fparas if p]
        if fparas:
            out.append(".SH NOTES")
            out.append("About \\fB<iouring_restrict/%s>\\fR as a whole:" % os.path.basename(header))
            for p in fparas:
                out.append(".PP")
                out.append(p)
    fn, src = find_example(name, header)
    if fn is None:
        if problems is not None:
            problems.append("%s: no program of doc/examples/man3/ calls it" % name)
    else:
        out += render_example(fn, src)
    out.append(".SH SEE ALSO")
    others = [f for f in family if f != name]
    refs = ["\\fB%s\\fP(3)" % f for f in others] + ["\\fBiouring\\-restrict\\fP(7)"]
    out.append(",\n".join(refs))
    text = "\n".join(out) + "\n"
    # Minus signs of errno values and options: "-EINVAL" reads as \-EINVAL.
    text = re.sub(r"(^|[^\\\w]|\\f[BIRP])-(?=[A-Za-z0-9])", r"\1\\-", text, flags=re.M)
    return re.sub(r"\n{2,}", "\n", text)


def main(argv):
    if len(argv) >= 2 and argv[1] == "--list":
        for h in argv[2:]:
            for n in public_functions(h):
                print(n)
        return 0
    if len(argv) < 4:
        sys.stderr.write(__doc__)
        return 2
    xmldir, outdir, headers = argv[1], argv[2], argv[3:]
    members, filedocs = {}, {}
    for fn in os.listdir(xmldir):
        if not fn.endswith("_8h.xml"):
            continue
        root = ET.parse(os.path.join(xmldir, fn)).getroot()
        for cd in root.iter("compounddef"):
            if cd.get("kind") == "file":
                filedocs[cd.findtext("compoundname")] = cd.find("detaileddescription")
        for m in root.iter("memberdef"):
            if m.get("kind") == "function":
                members[m.findtext("name")] = m
    os.makedirs(outdir, exist_ok=True)
    missing, problems = [], []
    types = Types(xmldir)
    types.opaque = opaque_structs(headers)
    for h in headers:
        family = public_functions(h)
        for name in family:
            m = members.get(name)
            if m is None:
                m = member_from_header(h, name)
            if m is None:
                missing.append(name)
                continue
            with open(os.path.join(outdir, name + ".3"), "w", encoding="utf-8") as f:
                f.write(render(m, h, family, filedocs.get(os.path.basename(h)), types,
                               problems))
    if missing:
        sys.stderr.write("gen-man3: no doxygen entry for: %s\n" % " ".join(missing))
        return 1
    if problems:
        sys.stderr.write("".join("gen-man3: %s\n" % p for p in problems))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
