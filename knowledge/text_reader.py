"""Plain text and Markdown → elements, without unstructured (its per-file classification is most of
an ingest's time on text libraries).

The elements have the shape `loaders.elements_to_document` reads (`category`, `text`,
`metadata.page_number`, `metadata.text_as_html`), so titles, sections and tags follow the same rules
as for the formats unstructured reads.

- Markdown is rendered by Python-Markdown (the `tables` and `fenced_code` extensions, as
  unstructured does) and its HTML walked: headings are titles, paragraphs text, each list item (nested
  ones too) a list item, tables rows, code blocks text; inline markup is reduced to its text.
- Plain text is split as unstructured splits it: at blank lines when at least one line in ten is
  blank (a paragraph's lines joined), else at every line break. A paragraph starting with a bullet
  (•, *, -, –) is a list item without it, `1.`/`1)` a list item; a single short line (at most 12
  words, no closing `.,;:!?`, at least half its characters letters) is a heading. Other text is text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_BULLET = re.compile(r"^(?:[\u2022\u2023\u2043\u2219\u25cb\u25cf\u25e6\u00b7\uf0b7*]|[-\u2013](?=\s|$))\s*")
_NUMBERED = re.compile(r"^\d+[.)]\s+\S")
_SENTENCE_END = re.compile(r"[.,;:!?]\s*$")
_BLANK_LINE = re.compile(r"\n\s*\n")
_TAGS_LINE = re.compile(r"^\s*tags\s*:?\s*$", re.IGNORECASE)
_HEADINGS = {"h1", "h2", "h3", "h4", "h5", "h6"}
_CONTAINERS = {"div", "blockquote", "section", "article", "details", "body", "dl"}
_SKIP = {"hr", "img", "script", "style", "br"}
_BLOCKS = {"p", "pre", "div", "blockquote", "table", "br", *_HEADINGS}
TITLE_MAX_WORDS = 12


@dataclass
class Metadata:
    page_number: int | None = None
    text_as_html: str | None = None


@dataclass
class Element:
    category: str  # Title, NarrativeText, ListItem, Table
    text: str
    metadata: Metadata = field(default_factory=Metadata)


def _flat(text: str) -> str:
    return " ".join(text.split())


# ---------------------------------------------------------------- Markdown


def markdown_elements(text: str) -> list[Element]:
    """The elements of a Markdown document, in order."""
    import markdown
    from lxml import html as lxml_html

    rendered = markdown.markdown(text, extensions=["tables", "fenced_code"])
    if not rendered.strip():
        return []
    root = lxml_html.fragment_fromstring(rendered, create_parent="div")
    out: list[Element] = []
    _walk(root, out)
    return [e for e in out if e.text]


def _paragraph(text: str) -> Element:
    flat = _flat(text)
    return Element("Title" if _TAGS_LINE.match(flat) else "NarrativeText", flat)


def _loose(text: str, out: list[Element]) -> None:
    """Text outside any block element (raw HTML blocks keep their Markdown as text): one
    paragraph per blank-line-separated part."""
    out.extend(_paragraph(part) for part in _BLANK_LINE.split(text) if part.strip())


def _walk(node, out: list[Element]) -> None:  # noqa: ANN001 - an lxml element
    if node.text and node.text.strip():
        _loose(node.text, out)
    for child in node:
        tag = child.tag if isinstance(child.tag, str) else ""
        if tag in _HEADINGS:
            out.append(Element("Title", _flat(child.text_content())))
        elif tag in ("ul", "ol"):
            _list(child, out)
        elif tag == "table":
            _table(child, out)
        elif tag == "pre":
            out.append(Element("NarrativeText", child.text_content().strip()))
        elif tag in _CONTAINERS:
            _walk(child, out)
        elif tag and tag not in _SKIP:
            out.append(_paragraph(child.text_content()))
        if child.tail and child.tail.strip():
            _loose(child.tail, out)


def _list(node, out: list[Element]) -> None:  # noqa: ANN001 - an lxml <ul>/<ol>
    for li in node:
        if li.tag != "li":
            continue
        nested = [c for c in li if c.tag in ("ul", "ol")]
        own = [li.text or ""]
        for c in li:
            if isinstance(c.tag, str) and c.tag not in ("ul", "ol"):
                gap = " " if c.tag in _BLOCKS else ""
                own.append(gap + c.text_content() + gap)
            own.append(c.tail or "")
        text = _flat("".join(own))
        if text:
            out.append(Element("ListItem", text))
        for sub in nested:
            _list(sub, out)


def _table(node, out: list[Element]) -> None:  # noqa: ANN001 - an lxml <table>
    from lxml import html as lxml_html

    text = _flat(" ".join(c.text_content() for c in node.iter("td", "th")))
    html = lxml_html.tostring(node, encoding="unicode")
    out.append(Element("Table", text, Metadata(text_as_html=html)))


# ---------------------------------------------------------------- plain text


def text_paragraphs(text: str) -> list[str]:
    """Paragraphs the way unstructured groups plain text (see the module docstring)."""
    lines = text.splitlines()
    if not lines:
        return []
    window = lines[:2000]
    blank = sum(1 for ln in window if not ln.strip()) / len(window)
    if blank < 0.1:
        return [ln.strip() for ln in lines if ln.strip()]
    out: list[str] = []
    cur: list[str] = []
    for ln in lines + [""]:
        s = ln.strip()
        if not s or (cur and _BULLET.match(s)):
            if cur:
                out.append(" ".join(cur))
            cur = [s] if s else []
            continue
        cur.append(s)
    return out


def _alpha_share(text: str) -> float:
    chars = [ch for ch in text if not ch.isspace()]
    return sum(ch.isalpha() for ch in chars) / len(chars) if chars else 0.0


def is_heading(text: str) -> bool:
    """A single short line without a closing punctuation mark, with letters, not a number."""
    return (
        "\n" not in text
        and len(text.split()) <= TITLE_MAX_WORDS
        and not _SENTENCE_END.search(text)
        and _alpha_share(text) >= 0.5
        and not text.replace(" ", "").isnumeric()
    )


def text_elements(text: str) -> list[Element]:
    """The elements of a plain-text document, in order."""
    out: list[Element] = []
    for para in text_paragraphs(text):
        if _BULLET.match(para):
            item = _BULLET.sub("", para, count=1).strip()
            if item:
                out.append(Element("ListItem", item))
        elif _NUMBERED.match(para):
            out.append(Element("ListItem", para))
        elif is_heading(para) or _TAGS_LINE.match(para):
            out.append(Element("Title", para))
        else:
            out.append(Element("NarrativeText", para))
    return out
