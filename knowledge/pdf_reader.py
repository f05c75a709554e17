"""A PDF's text layer read as a person reads it, with pypdfium2 (PDFium).

Why PDFium and not unstructured's pdfminer path: it reads a 200-page manual's text in well under a
second where pdfminer takes tens of seconds, and its text page gives what structure needs: each
character's font size, font name and baseline. From those, per page:

- lines → paragraphs: a new block where the gap to the previous line is larger than the leading, the
  font size changes, prose turns into code (a monospace font) or a line starts a list item; a link
  set in a code font inside a sentence, or broken at a line end, stays one word of that sentence;
- headings: a line that matches the PDF's outline (bookmarks) on that page, else a short line set
  clearly larger than the body text; each block carries its section path ("3 Usage notes › 3.1
  Numerical limitations"), so a heading is structure, never words glued into a sentence;
- a definition list's term set in bold at a paragraph's start ("**horiz** present choices
  horizontally") gets its colon back ("horiz: present choices …"): the term is not read into its
  description, and the answer knows the sentence as that term's entry;
- DocBook reference pages set as one running paragraph ("Nameslidy.duration — … Synopsis<xsl:param
  …> Description …") split back into headings, name line, synopsis and description (`refentry`);
- furniture left out: running headers and footers, page numbers (`pdf_text.furniture` on each page's
  first and last lines), footnote markers (a digit set smaller than its line, right after a word)
  and a footnote's own number (`pdf_text.without_footnote_numbers`),
  pages that are a table of contents or an index (most lines end in a page number);
- German accents that TeX sets as a separate glyph ("k¨onnen") joined to their letter, soft hyphens
  and line-end hyphenation undone (`pdf_text.clean`).

`read_pdf(path)` returns the blocks, the title and the 1-based pages without text (for OCR).
"""

from __future__ import annotations

import bisect
import ctypes
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from knowledge import pdf_text, refentry
from knowledge.loaders import Block
from knowledge.sentences import LIST_MARK
from knowledge.types import SECTION_SEP

_LIST = re.compile(LIST_MARK.pattern + r"\S")
# a URL the layout broke at a line end ("… see: https://tiswww.case." ¶ "edu/php/chet/readline.html"),
# its rest often in another font: one word again, not a new paragraph (nor the term of the next one)
_URL_HEAD = re.compile(r"https?://(?:\S*[./_~-])?$")
_URL_REST = re.compile(r"[a-z0-9][\w~%#?=&+.-]*/")
_URL_LINE = re.compile(r"^(?:https?://|www\.)\S+$")  # a line that is one link: "… available at" ¶ "https://brew.sh/"
_NUMBERED = re.compile(r"^\s*(?:(?:chapter|kapitel|appendix|anhang|part|teil)\s+)?(?:[A-Z]|\d{1,2})(?:\.\d{1,2})*\.?\s+", re.I)
_LEADERS = re.compile(r"(?:\.\s?){3,}\s*[\dIVXLCivxlc]{1,4}\s*$")
_TRAILING_REF = re.compile(r"[^\d\s][\s,]+\d{1,4}(?:\s*[,–-]\s*\d{1,4})*\s*$")
_MONO = re.compile(rb"mono|courier|cmtt|typewriter|consol|code|lmtt|sfmono", re.I)
_BOLD = re.compile(rb"bold|cmbx|-bd\b|black|heavy", re.I)
_FORCE_BOLD = 1 << 18
_TERM_CHARS = 40
_TERM_ENDS = ".:;,!?)]}—–-"
_MUSIC = re.compile(rb"emmentaler|feta|bravura|lilyjazz|petrucci|sonata|opus|maestro", re.I)
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_WORD2 = re.compile(r"[^\W\d_]{2,}")
_SUPER = re.compile(r"(?<=[^\W\d_]|[).,;:”’\"])\d{1,2}(?=[\s.,;:)]|$)")
_ACCENT = {"\u00a8": "\u0308", "\u00b4": "\u0301", "\u02c6": "\u0302", "\u02dc": "\u0303", "\u02da": "\u030a", "\u02c7": "\u030c"}
_ACCENTED = re.compile("([" + "".join(_ACCENT) + r"])([A-Za-z])")
_STRAY_ACCENT = re.compile("\\s?([" + "".join(_ACCENT) + "])(?![A-Za-z])")
_CAPITAL_VOWEL = re.compile(r"(?:^|\s)([AOU])[a-zß]")
_CALLOUT = re.compile(r"\d?[\u2460-\u2473\u2776-\u277f\u2780-\u2793]\s?")
_HEADING_MAX_WORDS = 14
_TOC_SHARE = 0.5  # a page whose lines mostly end in a page number is a table of contents or an index
_TOC_MIN_LINES = 8
_EDGE_LINES = 2  # lines at a page's top and bottom that may be running headers or footers


class PdfUnreadable(Exception):
    """PDFium could not open the file; the message says why in plain words."""


@dataclass
class Line:
    text: str
    page: int  # 1-based
    size: float
    y: float  # baseline, PDF units (grows upwards)
    x: float
    mono: bool
    heading_level: int = 0  # 1 = top level; 0 = not a heading
    term: str = ""  # a definition list's term set in bold at the line's start ("horiz" of "horiz present choices …")


@dataclass
class PdfText:
    title: str
    blocks: list[Block]
    n_pages: int
    empty_pages: list[int] = field(default_factory=list)  # 1-based, no text layer
    skipped_pages: list[int] = field(default_factory=list)  # contents or index pages


def fix_text(text: str) -> str:
    """Accents set apart joined to their letter, PDFium's soft hyphen and stray carriage returns
    (a quote glyph without a character) resolved, NFC."""
    text = text.replace("\ufffe", "").replace("\x02", "").replace("\r", "‘")
    if _CALLOUT.search(text):  # a code listing's callout mark ("2②"): a pointer, not text
        text = _CALLOUT.sub("", text)
    if any(a in text for a in _ACCENT):
        text = _ACCENTED.sub(lambda m: m.group(2) + _ACCENT[m.group(1)], text)
        text = _join_stray(text) if _STRAY_ACCENT.search(text) else text
    return unicodedata.normalize("NFC", text)


def _join_stray(text: str) -> str:
    for m in list(_STRAY_ACCENT.finditer(text))[::-1]:
        head = text[: m.start()]
        cap = _CAPITAL_VOWEL.search(head)
        mark = _ACCENT[m.group(1)]
        if cap:
            i = cap.start(1)
            head = head[: i + 1] + mark + head[i + 1 :]
        text = head + text[m.end() :]
    return text


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[\W_]+", " ", text.casefold()).split())


def _strip_number(text: str) -> str:
    return _NUMBERED.sub("", text, count=1)


def _page_text(textpage, raw) -> str:
    """The page's text with one character per PDFium character index, so a line's first character
    gives its font, size and position. The text range leaves out some control characters (a soft
    hyphen's marker, a music font's glyphs), which shifts every later index; then the text is built
    character by character (~7 ms a page; LilyPond's manuals have a third of their pages so)."""
    text = textpage.get_text_range()
    n = textpage.count_chars()
    if n == len(text):
        return text
    codes = (raw.FPDFText_GetUnicode(textpage.raw, i) for i in range(n))
    return "".join("\ufffd" if 0xD800 <= c <= 0xDFFF or c > 0x10FFFF else chr(c) for c in codes)


def _page_lines(textpage, page_no: int, raw) -> list[Line]:
    text = _page_text(textpage, raw)
    aligned = textpage.count_chars() == len(text)  # one UTF-16 unit per character
    out: list[Line] = []
    pos = 0
    buf = ctypes.create_string_buffer(96)
    flags = ctypes.c_int()
    x, y = ctypes.c_double(), ctypes.c_double()
    for part in text.split("\r\n"):
        start, pos = pos, pos + len(part) + 2
        stripped = part.strip()
        if not stripped:
            continue
        i = start + (len(part) - len(part.lstrip())) if aligned else 0
        size = raw.FPDFText_GetFontSize(textpage.raw, i)
        raw.FPDFText_GetCharOrigin(textpage.raw, i, ctypes.byref(x), ctypes.byref(y))
        raw.FPDFText_GetFontInfo(textpage.raw, i, buf, 96, ctypes.byref(flags))
        if _MUSIC.search(buf.value):
            continue  # a music font's glyphs (notes, clefs): no text
        mono = _fixed_pitch(buf, flags)  # the font info of character i, read above
        if mono and aligned and len(stripped) > 24:
            # a line opening with inline code ("DynamicLineSpanner object instead. This …") is prose:
            # it is code only when its middle and its end are in a fixed-pitch font too
            end = start + len(part.rstrip()) - 1
            mono = _mono(textpage, raw, (i + end) // 2, buf, flags) and _mono(textpage, raw, end, buf, flags)
        # read before a footnote marker is dropped: the text's indices are still PDFium's
        term = _bold_term(textpage, raw, i, part[i - start :], buf, flags) if aligned and not mono else ""
        if aligned and size > 0 and _SUPER.search(part):
            part = _drop_markers(part, start, size, textpage, raw)
        clean = fix_text(_CONTROL.sub("", part)).strip()
        if clean and (mono or not _glyph_soup(clean)):
            out.append(Line(clean, page_no, round(size, 1), y.value, x.value, mono, term=term if clean.startswith(term) else ""))
    return out


def _bold_term(textpage, raw, index: int, text: str, buf, flags) -> str:
    """A bold run of one to three words opening the line (`text`, from PDFium's character `index` on),
    followed on it by regular text: a definition list's term ("horiz present choices horizontally" set
    as **horiz** present …), else ''. Not one in a code font: an option's entry ("--ignore-red With this
    option, …") is known as one without a colon (`assistant.llm.sentence_filters.entry_term`)."""
    if not _bold_at(textpage, raw, index, buf, flags) or _fixed_pitch(buf, flags):
        return ""
    n = min(len(text), _TERM_CHARS + 1)
    end = 1
    while end < n and (text[end].isspace() or _bold_at(textpage, raw, index + end, buf, flags)):
        end += 1
    term, rest = text[:end].strip(), text[end:]
    if end >= n or not rest[:1].isalpha() or not term or term[-1] in _TERM_ENDS or len(term.split()) > 3:
        return ""
    return fix_text(term)


def _bold_at(textpage, raw, index: int, buf, flags) -> bool:
    raw.FPDFText_GetFontInfo(textpage.raw, index, buf, 96, ctypes.byref(flags))
    return _bold(buf, flags)


def _bold(buf, flags) -> bool:
    """Whether the font info just read is a bold font's (PDF flag 19, ForceBold, or its name says so)."""
    return bool(flags.value & _FORCE_BOLD) or bool(_BOLD.search(buf.value))


def _mono(textpage, raw, index: int, buf, flags) -> bool:
    """Whether the character at `index` is set in a fixed-pitch (code) font."""
    raw.FPDFText_GetFontInfo(textpage.raw, index, buf, 96, ctypes.byref(flags))
    return _fixed_pitch(buf, flags)


def _fixed_pitch(buf, flags) -> bool:
    """Whether the font info just read (its name, its flags) is a fixed-pitch font's."""
    return bool(_MONO.search(buf.value)) or bool(flags.value & 1)  # PDF flag 1: fixed pitch


def _glyph_soup(text: str) -> bool:
    """Symbols from a font without text (a score's notes, a dingbat): under a third of its tokens
    with a letter are words of two letters or more ("h h hP h")."""
    tokens = [t for t in text.split() if any(c.isalpha() for c in t)]
    return sum(bool(_WORD2.search(t)) for t in tokens) * 3 < len(tokens)


def _drop_markers(part: str, start: int, size: float, textpage, raw) -> str:
    """A footnote marker: digits right after a word, set smaller than the line ("file1 is")."""
    cut = [
        m.span()
        for m in _SUPER.finditer(part)
        if raw.FPDFText_GetFontSize(textpage.raw, start + m.start()) < 0.8 * size
    ]
    for a, b in reversed(cut):
        part = part[:a] + part[b:]
    return part


def _is_toc(lines: list[Line]) -> bool:
    if len(lines) < _TOC_MIN_LINES:
        return False
    refs = sum(bool(_LEADERS.search(ln.text) or _TRAILING_REF.search(ln.text)) for ln in lines)
    return refs >= _TOC_SHARE * len(lines)


def _outline(pdf) -> dict[int, list[tuple[str, int]]]:
    """1-based page → [(normalised title, level)] of the bookmarks that point there."""
    out: dict[int, list[tuple[str, int]]] = {}
    try:
        for mark in pdf.get_toc(max_depth=8):
            dest = mark.get_dest()
            index = dest.get_index() if dest is not None else None
            title = _norm(_strip_number(fix_text(mark.get_title() or "")))
            if index is not None and title:
                out.setdefault(index + 1, []).append((title, mark.level + 1))
    except Exception:  # noqa: BLE001 - a damaged outline only loses the headings it would give
        return {}
    return out


def _mark_headings(lines: list[Line], outline: dict[int, list[tuple[str, int]]], body: float) -> None:
    """Outline titles on their page (a wrapped heading may take two lines), else a short line in a
    font clearly larger than the body's (levels by size, largest first)."""
    big = sorted({ln.size for ln in lines if ln.size >= 1.15 * body}, reverse=True)
    level_of = {s: i + 1 for i, s in enumerate(big)}
    depth = max((lv for marks in outline.values() for _, lv in marks), default=0)
    for i, ln in enumerate(lines):
        marks = outline.get(ln.page, []) + outline.get(ln.page - 1, [])
        if marks and len(ln.text.split()) <= _HEADING_MAX_WORDS * 2:
            own = _norm(_strip_number(ln.text))
            nxt = lines[i + 1] if i + 1 < len(lines) and lines[i + 1].page == ln.page else None
            both = _norm(_strip_number(f"{ln.text} {nxt.text}")) if nxt else ""
            for title, level in marks:
                if own == title or (nxt and both == title and ln.size == nxt.size):
                    ln.heading_level = level
                    if own != title and nxt is not None:
                        ln.text, nxt.text = f"{ln.text} {nxt.text}", ""
                    break
        if ln.heading_level or ln.size < 1.15 * body or not big:
            continue
        words = ln.text.split()
        if 1 <= len(words) <= _HEADING_MAX_WORDS and not ln.text.endswith((".", ",", ";")) and not ln.mono:
            ln.heading_level = depth + level_of[ln.size] if outline else level_of[ln.size]


def _blocks(lines: list[Line], body: float) -> list[Block]:
    blocks: list[Block] = []
    path: list[tuple[int, str]] = []  # (level, heading) from the top
    cur: list[Line] = []
    kind = "text"
    term = ""  # a definition list's term, set in code type on its own line: it heads the next paragraph

    def section() -> str:
        return SECTION_SEP.join(h for _, h in path)

    def heading(level: int, text: str, page: int) -> None:
        while path and path[-1][0] >= level:
            path.pop()
        path.append((level, text))
        blocks.append(Block(text, "title", page, section()))

    def flush(hold: bool = False) -> None:
        nonlocal cur, term
        if cur:
            joiner = "\n" if cur[0].mono else " "
            joined = joiner.join(ln.text for ln in cur)
            if hold and not cur[0].mono and refentry.open_entry(joined):
                return  # a reference page's head broken by a gap: the next paragraph joins it
            pieces = refentry.split(joined) if not cur[0].mono and refentry.marked(joined) else []
            if len(pieces) > 1 or any(p.role != "text" for p in pieces):
                _reference_pages(cur, pieces, heading, lambda text, page: blocks.append(Block(text, "text", page, section())))
                cur, term = [], ""
                return
            text = pdf_text.clean(joined)
            text = f"{term}: {text}" if term else text
            if not cur[0].mono and refentry.contents_run(text):
                cur, term = [], ""
                return  # a contents list run together: no sentence to read or quote
            blocks.append(Block(text, kind, cur[0].page, section()))  # type: ignore[arg-type]
            term = ""
        cur = []

    for ln in lines:
        if not ln.text:
            continue
        if ln.heading_level:
            flush()
            heading(ln.heading_level, ln.text, ln.page)
            continue
        prev = cur[-1] if cur else None
        if prev is not None and _URL_HEAD.search(prev.text) and _URL_REST.match(ln.text):
            prev.text += ln.text
            prev.y = ln.y  # where the paragraph's last line now is
            continue
        starts_item = bool(_LIST.match(ln.text)) and not ln.mono
        new = (
            prev is None
            or starts_item
            or prev.page != ln.page and (prev.mono != ln.mono or prev.text.endswith((".", ":", "!", "?")))
            or prev.page == ln.page and (prev.y - ln.y > 1.45 * max(ln.size, prev.size) or prev.y < ln.y)
            or prev.mono != ln.mono and not _link_in_sentence(prev, ln)
            or abs(prev.size - ln.size) > 0.15 * max(prev.size, ln.size)
        )
        if new:
            if _is_term(cur, ln) and not starts_item:
                term, cur = cur[0].text, []  # "nocheck" / "This tag says to not run …"
            else:
                flush(hold=True)
            kind = "list_item" if starts_item else "text"
            if ln.term and not starts_item:  # "horiz present choices …" → "horiz: present choices …"
                ln.text = f"{ln.term}: {ln.text[len(ln.term):].lstrip()}"
        cur.append(ln)
    flush()
    return blocks


def _reference_pages(cur: list[Line], pieces: list[refentry.Piece], heading, text) -> None:
    """A paragraph that `refentry.split` cut into headings, name lines, synopses and descriptions:
    each piece on the page where it starts; a synopsis is a block of its own (code, not prose)."""
    starts, pos = [], 0
    for ln in cur:
        starts.append(pos)
        pos += len(ln.text) + 1
    for piece in pieces:
        page = cur[max(0, bisect.bisect_right(starts, piece.start) - 1)].page
        if piece.role == "heading":
            heading(piece.level, piece.text, page)
        elif not refentry.contents_run(piece.text):
            text(pdf_text.clean(piece.text), page)


def _link_in_sentence(prev: Line, ln: Line) -> bool:
    """A link set on a line of its own in code type inside a sentence: "… available at" ¶
    "https://www.macports.org/" ¶ "or at" …: the font changes, the paragraph does not."""
    if ln.mono and _URL_LINE.match(ln.text):
        return not prev.text.endswith((".", ":", "!", "?"))
    return prev.mono and bool(_URL_LINE.match(prev.text)) and ln.text[:1].islower()


def _is_term(cur: list[Line], ln: Line) -> bool:
    """One short line in code type (`nocheck`, `--smtp-port`) right above a paragraph of prose that
    begins with a capital: the term that paragraph defines."""
    if len(cur) != 1 or not cur[0].mono or ln.mono or cur[0].page != ln.page:
        return False
    t = cur[0].text
    return not _URL_LINE.match(t) and len(t.split()) <= 3 and not re.search(r"[{}()\[\]=<>;,.:!?]$|[{}=<>]", t) and ln.text[:1].isupper()


def read_pdf(path: Path) -> PdfText:
    """The document's blocks in reading order. Raises `PdfUnreadable` when PDFium cannot open it."""
    import pypdfium2 as pdfium
    import pypdfium2.raw as raw

    try:
        pdf = pdfium.PdfDocument(str(path))
    except pdfium.PdfiumError as exc:
        msg = str(exc)
        if "password" in msg.lower():
            raise PdfUnreadable("the PDF is encrypted (password protected)") from exc
        raise PdfUnreadable(f"not a readable PDF (corrupt or truncated): {msg}") from exc
    try:
        n_pages = len(pdf)
        title = (pdf.get_metadata_dict().get("Title") or "").strip()
        lines: list[Line] = []
        empty: list[int] = []
        skipped: list[int] = []
        for i in range(n_pages):
            page = pdf[i]
            textpage = page.get_textpage()
            try:
                page_lines = _page_lines(textpage, i + 1, raw)
            finally:
                textpage.close()
                page.close()
            if not page_lines:
                empty.append(i + 1)
            elif _is_toc(page_lines):
                skipped.append(i + 1)
            else:
                lines.extend(page_lines)
        outline = _outline(pdf)
    finally:
        pdf.close()
    lines = _without_furniture(lines)
    sizes = Counter()
    for ln in lines:
        sizes[ln.size] += len(ln.text)
    body = sizes.most_common(1)[0][0] if sizes else 10.0
    for ln, text in zip(lines, pdf_text.without_footnote_numbers([(ln.text, ln.size) for ln in lines], body), strict=True):
        ln.text = text
    _mark_headings(lines, outline, body)
    blocks = _blocks(lines, body)
    if not title:
        title = next((b.text for b in blocks if b.kind == "title"), "")
    return PdfText(title, blocks, n_pages, empty, skipped)


def _without_furniture(lines: list[Line]) -> list[Line]:
    """Running headers, footers and page numbers among each page's first and last lines."""
    by_page: dict[int, list[int]] = {}
    for i, ln in enumerate(lines):
        by_page.setdefault(ln.page, []).append(i)
    edge = sorted({i for idx in by_page.values() for i in idx[:_EDGE_LINES] + idx[-_EDGE_LINES:]})
    gone = {edge[k] for k in pdf_text.edge_furniture([(lines[i].text, lines[i].page) for i in edge])}
    return [ln for i, ln in enumerate(lines) if i not in gone]
