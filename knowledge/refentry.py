"""DocBook reference pages whose PDF lost its layout, split back into their structure.

Some DocBook PDFs (dblatex builds of the DocBook XSL reference) set every reference page ("refentry")
as one running paragraph in one font: the headings "Name", "Synopsis" and "Description" carry no
size, weight or line break of their own, and each part's title is printed three times, then "Table
of Contents" and its entries glued together, before its first page:

    "XHTML: Slidy ParamsXHTML: Slidy ParamsXHTML: Slidy ParamsTable of Contentsslidy.durationslidy.path.prefix…
    Nameslidy.duration — Specifies the duration of the presentation Synopsis <xsl:param …>0</xsl:param>
    Description This parameter specifies …"

Read as it stands, "Nameslidy.duration — … Synopsis<xsl:param" is one sentence that an answer
quotes. `split` finds these marks in a paragraph's text and returns its pieces as a reader sees
them: the part's title and each entry's name as headings, the name line as a sentence of its own
("slidy.duration — Specifies the duration of the presentation."), the synopsis as code, the
description as prose; the glued contents list is dropped. Only text with these marks is split.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from knowledge.sentences import ends_sentence

Role = Literal["heading", "text", "code"]

# "Table of Contents" glued to its first entry ("Table of Contentsslidy.duration"), not prose's words
_CONTENTS = re.compile(r"Table of Contents(?=[\w*@])")
# the title printed before it: twice for a part ("HTML Parameter Reference"), three times for a section
_TITLE = re.compile(r"(?P<title>[^\W_][^\n]{1,80}?)\s?(?P=title)(?P<third>\s?(?P=title))?\s?$")
_TITLE_WINDOW = 3 * 82
_ENTRY_START = r"Name(?P<name>[^\s—]{1,80})\s?—\s"


def _word(word: str) -> str:
    """`word` also when a line break split it ("Synop sis" once the lines are joined)."""
    return r"\s?".join(word)


# "Name<refname> — <purpose> [Synopsis <code>] Description <text>"
_ENTRY = re.compile(
    _ENTRY_START
    + r"(?P<purpose>[^—]{1,300}?)\s*(?:" + _word("Synopsis") + r"\s*(?P<code>(?:(?!Name[^\s—]+\s?—\s).){1,3000}?)\s*)?" + _word("Description") + r"\s",
    re.S,
)
# dblatex's mark of a code line broken in the output ("<xsl:param -" / "name=…")
_CODE_BREAK = re.compile(r"\s-\s(?=[\w:.-]+=|<|\"|$)|^-\s")
# an admonition's label glued to its first word ("NoteThis function began as …")
_ADMONITION = re.compile(r"\b(Note|Tip|Warning|Caution|Important)(?=[A-Z][a-z])")
_GLUED_TOKEN = 25  # a token this long in a contents list is entries run together


@dataclass
class Piece:
    role: Role
    text: str
    start: int  # offset in the paragraph's text: where the piece's page is found
    level: int = 0  # a heading's: 1 a part, 2 a section, 3 a reference page


# a processing instruction's page ends with sections whose headings the layout glued into the prose:
# "… Parameters dir="path"Specifies the pathname … Related Global Parameters base.dir Related
# Information in DocBook XSL: The Complete Guide (http://…) dbhtml dir processing instruction (http://…)"
_PI_SECTION = re.compile(r"\s(?=Parameters\s+[\w.:-]+=\"|Related Global Parameters\s|Related Information in DocBook XSL\b)")
_ATTRIBUTE = re.compile(r'^Parameters\s+')
_ATTRIBUTE_GLUED = re.compile(r'(="[^"]*")\s*(?=[A-Z])')  # 'dir="path"Specifies …' → 'dir="path": Specifies …'


def marked(text: str) -> bool:
    """Whether `text` holds a reference page's glued headings (cheap test before `split`)."""
    return "Table of Contents" in text or ("Name" in text and "Description" in text and _ENTRY.search(text) is not None) \
        or (("Related " in text or "Parameters " in text) and _PI_SECTION.search(text) is not None)


_NAME_AT_END = re.compile(r"Name[\w.:@*-]{2,80}\s?—?\s*$")  # an entry's name, its dash and purpose in the next paragraph
_OPEN_MAX = 3000  # characters after an entry's name: a longer "head" is not one, stop holding


def open_entry(text: str) -> bool:
    """Whether `text` ends inside an entry's head: its last "Name… — " has no "Description" after
    it yet. dblatex leaves wide gaps inside a head (around the synopsis), so a paragraph can end
    there; the reader then joins the next paragraph before splitting."""
    if _NAME_AT_END.search(text):  # "… get.namespace.prefixNameget.namespace.prefix" ¶ "— Obtain …"
        return True
    starts = list(re.finditer(_ENTRY_START, text))
    last = starts[-1] if starts else None
    if last is None or len(text) - last.end() > _OPEN_MAX:
        return False
    return re.search(_word("Description") + r"\s", text[last.end():]) is None


_RUN = re.compile(r"(?<!\S)[\w.:@-]{80,}(?!\S)")  # a word of names run together, 80 characters or more (no URL: no "/")


def contents_run(text: str) -> bool:
    """A contents list whose entries the layout ran together without "Table of Contents" before it
    ("Generationannotate.tocautotoc.label.separator…"): most of its characters in such runs."""
    return sum(len(m.group()) for m in _RUN.finditer(text)) * 2 >= len(text) > 0


def _glued(text: str) -> bool:
    """A contents list run together: most of its characters are in very long tokens."""
    tokens = text.split()
    long = sum(len(t) for t in tokens if len(t) >= _GLUED_TOKEN)
    return bool(tokens) and long * 2 >= sum(len(t) for t in tokens)


def _sentence(text: str) -> str:
    text = text.strip()
    return text if not text or ends_sentence(text) else f"{text}."


def _code(text: str) -> str:
    return " ".join(_CODE_BREAK.sub(" ", text.strip()).split())


def split(text: str) -> list[Piece]:
    """The paragraph's pieces in order; one "text" piece when it holds no marks."""
    marks: list[tuple[int, int, str, re.Match[str]]] = []  # (start, end, kind, match)
    for m in _CONTENTS.finditer(text):
        head = _TITLE.search(text, max(0, m.start() - _TITLE_WINDOW), m.start())
        marks.append((head.start() if head else m.start(), m.end(), "contents", head or m))
    for m in _ENTRY.finditer(text):
        if not any(a <= m.start() < b for a, b, _, _ in marks):
            marks.append((m.start(), m.end(), "entry", m))
    marks.sort(key=lambda k: k[0])
    out: list[Piece] = []
    pos = 0
    for start, end, kind, m in marks:
        if start < pos:
            continue
        if kind == "entry":  # the entry's index terms printed before its name ("dbhtml_stop-chunkingdbhtml_stopchunking")
            start = _before_index_terms(text, pos, start, m.group("name"))
        _prose(text, pos, start, out, finished=True)
        if kind == "contents":
            if m.re is _TITLE:
                out.append(Piece("heading", m.group("title").strip(), start, 2 if m.group("third") else 1))
            # the list runs to the next mark; it goes when it is entries glued together
            nxt = next((s for s, _, _, _ in marks if s >= end), len(text))
            end = nxt if _glued(text[end:nxt]) else end
        else:
            name = m.group("name")
            out.append(Piece("heading", name, start, 3))
            out.append(Piece("text", _sentence(f"{name} — {m.group('purpose')}"), start))
            if m.group("code") and m.group("code").strip(" -"):
                out.append(Piece("code", _code(m.group("code")), m.start("code")))
        pos = end
    _prose(text, pos, len(text), out)
    return out


def _before_index_terms(text: str, a: int, b: int, name: str) -> int:
    """Where the prose before an entry ends: before a last token that runs its name's index terms
    together ("…#ListStartNum dbhtml_stop-chunkingdbhtml_stopchunking"), else `b`."""
    key = re.sub(r"[\W_]", "", name).casefold()
    head = text[a:b].rstrip()
    last = head.rsplit(None, 1)[-1] if head.split() else ""
    if key and len(last) > len(name) and key in re.sub(r"[\W_]", "", last).casefold():
        return a + len(head) - len(last)
    return b


def _prose(text: str, a: int, b: int, out: list[Piece], finished: bool = False) -> None:
    """The prose between two marks; `finished`: a mark follows, so its last sentence ends here (a
    description's closing list item, "•TIFF (extension: .tif)", gets its stop). A processing
    instruction's "Parameters" become a section of their own, and its lists of related parameters and
    links ("Related Global Parameters", "Related Information in DocBook XSL") pieces of their own: no
    sentence of the description runs into them (their words still find the page)."""
    chunk = _ADMONITION.sub(r"\1: ", text[a:b].strip())
    start = a + len(text[a:b]) - len(text[a:b].lstrip())
    parts = _PI_SECTION.split(chunk) if "Related " in chunk or "Parameters " in chunk else [chunk]
    for i, part in enumerate(parts):
        part = part.strip()
        whole = finished or i < len(parts) - 1  # a section follows: its last sentence ends here
        if i and _ATTRIBUTE.match(part):
            out.append(Piece("heading", "Parameters", start, 4))
            part = _ATTRIBUTE_GLUED.sub(r"\1: ", _ATTRIBUTE.sub("", part))
        if part:  # "Related Information …: The Complete Guide (…) Chunking (…)": a piece of its own
            out.append(Piece("text", _sentence(part) if whole else part, start))
