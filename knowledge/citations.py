"""Where a cited chunk sits in its document: the page and the character span of the passage.

A chunk's text went through a parser (unstructured) and chunking (whitespace folded, blocks joined),
so it is not a substring of the file. It is located by aligning words: the chunk's words against
the words of the PDF page as pypdfium2 reads it (or the text file as it is on disk), keeping runs of
matching words. The result gives the span (characters in that text), the matched runs, and for
PDFs the rectangles of those characters on the page (PDF canvas units), which the app draws over
the rendered page. Files are only read here; nothing is written.
"""

from __future__ import annotations

import difflib
import logging
import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

from knowledge.manifest import DocumentInfo

log = logging.getLogger(__name__)

_WORD = re.compile(r"\w+", re.UNICODE)
_PUNCT_AFTER = re.compile(r"[^\w\s]*")  # a sentence's closing punctuation belongs to the passage
TEXT_SUFFIXES = {".txt", ".text", ".md", ".markdown"}
MIN_RUN = 2  # words: shorter runs of agreement are chance (common words)
MERGE_GAP = 40  # characters: matched runs closer than this form one highlighted span
MIN_STRONG = 4  # words: a highlighted span with fewer matched words is dropped when others exist

Box = tuple[float, float, float, float]  # left, bottom, right, top (PDF canvas units)


@dataclass
class Location:
    """The passage of one chunk in its document.

    `kind`: "pdf" (span in the text of `page` as pypdfium2 reads it, `boxes` on that page), "text"
    (span in the file's text), "section" (the document cannot be read here; the chunk's own text).
    `coverage` is the share of the chunk's words found there (0 when the passage is not on it).
    """

    kind: str
    page: int | None = None
    char_start: int = 0
    char_end: int = 0
    spans: list[tuple[int, int]] = field(default_factory=list)
    boxes: list[Box] = field(default_factory=list)
    coverage: float = 0.0
    text: str = ""  # the text the spans index into
    note: str = ""  # why there is no highlight, when there is none

    @property
    def found(self) -> bool:
        return bool(self.spans)

    def to_json(self) -> dict[str, object]:
        return {
            "kind": self.kind,
            "page": self.page,
            "char_start": self.char_start if self.found else None,
            "char_end": self.char_end if self.found else None,
            "coverage": round(self.coverage, 3),
            "note": self.note or None,
        }


def _words(text: str) -> list[tuple[str, int, int]]:
    return [(unicodedata.normalize("NFKC", m.group()).casefold(), m.start(), m.end()) for m in _WORD.finditer(text)]


def align(passage: str, text: str) -> tuple[list[tuple[int, int]], float]:
    """Character spans of `text` that hold `passage`'s words, and the share of its words found."""
    want = [w for w, _, _ in _words(passage)]
    have = _words(text)
    if not want or not have:
        return [], 0.0
    matcher = difflib.SequenceMatcher(None, want, [w for w, _, _ in have], autojunk=False)
    min_run = MIN_RUN if len(want) >= MIN_RUN * 2 else 1
    runs = [b for b in matcher.get_matching_blocks() if b.size >= min_run]
    if not runs:
        return [], 0.0
    merged: list[list[int]] = []  # [start, end, words]
    for b in runs:
        start, end = have[b.b][1], have[b.b + b.size - 1][2]
        if merged and start - merged[-1][1] <= MERGE_GAP:
            merged[-1][1:] = [end, merged[-1][2] + b.size]
        else:
            merged.append([start, end, b.size])
    strong = [m for m in merged if m[2] >= MIN_STRONG] or merged  # drop stray agreements of common words
    found = sum(m[2] for m in strong)
    return [(m[0], _PUNCT_AFTER.match(text, m[1]).end()) for m in strong], found / len(want)


def _main_span(spans: list[tuple[int, int]]) -> tuple[int, int]:
    return (spans[0][0], spans[-1][1]) if spans else (0, 0)


def document_path(info: DocumentInfo | None, source_path: str) -> Path | None:
    """The file a manifest entry describes (its root + source_path; a folder-name prefix is allowed)."""
    if info is None or not info.root:
        return None
    root = Path(info.root)
    candidates = [root / source_path]
    prefix = root.name + "/"
    if source_path.startswith(prefix):
        candidates.append(root / source_path[len(prefix) :])
    for path in candidates:
        try:
            if path.is_file() and path.resolve().is_relative_to(root.resolve()):
                return path
        except OSError:
            continue
    return None


_CITED = re.compile(r"([^\[\]]+?)\s*\[(\d+(?:\s*,\s*\d+)*)\]([.!?]?)")


def quoted(answer: str, n: int) -> str:
    """The sentences of `answer` that cite source `n` ("… three months' notice [2]."), without
    their markers: what the answer quotes from that source."""
    parts = []
    for m in _CITED.finditer(answer or ""):
        if n in {int(x) for x in re.findall(r"\d+", m.group(2))}:
            parts.append(m.group(1).strip() + m.group(3))
    return " ".join(p for p in parts if p)


def locate(path: Path | None, chunk_text: str, pages: list[int], *, best_page: bool = False) -> Location:
    """The passage `chunk_text` in the file `path` (a PDF page of `pages` if a PDF; with
    `best_page`, the page that holds most of it rather than the first that holds some)."""
    if path is None:
        return Location("section", page=min(pages) if pages else None, note="the file is not available")
    suffix = path.suffix.lower()
    try:
        if suffix == ".pdf":
            return locate_in_pdf(path, chunk_text, pages, best_page=best_page)
        if suffix in TEXT_SUFFIXES:
            text = path.read_text(encoding="utf-8", errors="replace")
            spans, coverage = align(chunk_text, text)
            start, end = _main_span(spans)
            return Location("text", None, start, end, spans, coverage=coverage, text=text)
    except Exception as exc:  # noqa: BLE001 - a damaged file shows the passage without a highlight
        log.warning("could not locate a passage in %s: %s", path.name, exc)
        return Location("section", page=min(pages) if pages else None, note=f"the file could not be read ({exc})")
    return Location("section", page=min(pages) if pages else None)


def locate_in_pdf(
    path: Path, chunk_text: str, pages: list[int], page: int | None = None, *, best_page: bool = False
) -> Location:
    """The passage on `page` (default: the first of `pages` that holds it), with its character boxes."""
    import pypdfium2 as pdfium

    doc = pdfium.PdfDocument(str(path))
    try:
        order = [page] if page else (sorted(pages) or list(range(1, min(len(doc), 50) + 1)))
        best: Location | None = None
        for number in order:
            if not 1 <= number <= len(doc):
                continue
            loc = _on_page(doc[number - 1], number, chunk_text)
            if best is None or loc.coverage > best.coverage:
                best = loc
            if loc.found and page is None and not best_page:
                break  # the first page of the chunk that holds its words is the cited one
        if best is None:
            return Location("pdf", page=page or (min(pages) if pages else 1), note="no such page")
        if not best.found:
            best.note = "the passage is not in the page's text layer (an OCR'd page?)"
        return best
    finally:
        doc.close()


def _on_page(pdf_page: object, number: int, chunk_text: str) -> Location:
    textpage = pdf_page.get_textpage()  # type: ignore[attr-defined]
    try:
        n = textpage.count_chars()
        text = textpage.get_text_range(0, n) if n > 0 else ""
        spans, coverage = align(chunk_text, text)
        boxes: list[Box] = []
        for s, e in spans:
            count = textpage.count_rects(s, e - s)
            boxes.extend(tuple(textpage.get_rect(i)) for i in range(count))  # type: ignore[misc]
        start, end = _main_span(spans)
        return Location("pdf", number, start, end, spans, boxes, coverage, text)
    finally:
        textpage.close()
