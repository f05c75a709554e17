"""Documents → logical blocks (titles, paragraphs, list items, table rows) with unstructured.

One entry point, `load_document(path, ocr=...)`. PDF, DOCX and HTML are parsed by unstructured;
Markdown and plain text by `text_reader` (the same elements, a fraction of the time). Nothing is
downloaded at parse time (`offline_nlp` keeps spaCy local, PDFs never use `hi_res`). Bad input raises
`LoadFailed` (the file is reported as failed with the reason) or `LoadSkipped` (nothing indexable,
e.g. a scanned PDF without tesseract).
"""

from __future__ import annotations

import io
import logging
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from knowledge import pdf_text
from knowledge.offline_nlp import ensure_offline_nlp
from knowledge.text_reader import markdown_elements, text_elements
from knowledge.visible_html import visible_html

log = logging.getLogger(__name__)

BlockKind = Literal["title", "text", "list_item", "table_row"]

PDF = {".pdf"}
DOCX = {".docx"}
HTML = {".html", ".htm"}
MARKDOWN = {".md", ".markdown"}
TEXT = {".txt", ".text"}
SUPPORTED = PDF | DOCX | HTML | MARKDOWN | TEXT
_NO_LANG = [""]  # skip unstructured's per-document language detection (60 % of parse time, unused)
DEFAULT_MAX_FILE_MB = 50.0  # IngestSettings.max_file_mb's default
ZIP_EXPANSION_LIMIT = 20  # a .docx may unpack to at most this many times max_file_mb
MAX_ZIP_MEMBERS = 10_000
MAX_ZIP_RATIO = 1000  # deflate cannot do better than ~1032:1; above this is a crafted archive
ZIP_RATIO_FLOOR = 10 * 2**20  # the ratio check applies to parts over 10 MB unpacked

_TAGS_HEADING = re.compile(r"^\s*tags\s*:?\s*$", re.IGNORECASE)
_TAGS_INLINE = re.compile(r"^\s*tags\s*:\s*(.+)$", re.IGNORECASE | re.DOTALL)


class LoadFailed(Exception):
    """The file could not be read or parsed; `reason` says why in plain words."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class LoadSkipped(LoadFailed):
    """The file holds nothing Hark can index with what is installed (reported as skipped)."""


@dataclass
class Block:
    text: str
    kind: BlockKind = "text"
    page: int | None = None
    section: str = ""


@dataclass
class LoadedDocument:
    title: str
    blocks: list[Block]
    tags: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # e.g. "pages 3-4 OCR'd", "page 2 has no text"


def tesseract_available() -> bool:
    return shutil.which("tesseract") is not None


# ---------------------------------------------------------------- text decoding


def looks_binary(data: bytes) -> bool:
    """NUL bytes or mostly control characters in the first 8 KB: not a text file."""
    head = data[:8192]
    if not head:
        return False
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):  # UTF-16 with BOM: text
        return False
    if b"\x00" in head:
        return True
    control = sum(1 for b in head if b < 32 and b not in (9, 10, 12, 13))
    return control / len(head) > 0.1


def decode_text(data: bytes) -> str:
    """UTF-8 (with or without BOM), UTF-16 with BOM, else Windows-1252, else Latin-1 (never fails)."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return data.decode("utf-16")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        pass
    try:
        return data.decode("cp1252")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def _read_text_file(path: Path) -> str:
    data = path.read_bytes()
    if looks_binary(data):
        raise LoadFailed("binary content, not text (is the file extension wrong?)")
    text = decode_text(data)
    if not text.strip():
        raise LoadFailed("the file is empty")
    return text


# ---------------------------------------------------------------- elements → blocks


def _table_rows(element: Any) -> list[str]:
    html = getattr(element.metadata, "text_as_html", None)
    if not html:
        return [element.text]
    try:
        from lxml import html as lxml_html

        root = lxml_html.fromstring(html)
        rows = []
        for tr in root.iter("tr"):
            cells = [" ".join(c.text_content().split()) for c in tr if c.tag in ("td", "th")]
            line = " | ".join(c for c in cells if c)
            if line:
                rows.append(line)
        return rows or [element.text]
    except Exception:  # noqa: BLE001 - fall back to the table's flat text
        return [element.text]


def _split_tags(text: str) -> list[str]:
    parts = re.split(r"[,;\n]+", text)
    return [p.strip().lstrip("#").strip() for p in parts if p.strip().lstrip("#").strip()]


def elements_to_document(
    elements: list[Any], fallback_title: str, use_first_title: bool = True
) -> LoadedDocument:
    """Group unstructured elements into blocks; the first heading is the title; "Tags" feed tags."""
    blocks: list[Block] = []
    tags: list[str] = []
    title = ""
    section = ""
    in_tags = False
    for el in elements:
        text = (getattr(el, "text", "") or "").strip()
        if not text:
            continue
        category = getattr(el, "category", "")
        page = getattr(el.metadata, "page_number", None)
        if category == "Title":
            if _TAGS_HEADING.match(text):
                in_tags = True
                continue
            in_tags = False
            if use_first_title and not title and not blocks:
                title = text
            section = text
            blocks.append(Block(text, "title", page, section))
            continue
        if in_tags:
            tags.extend(_split_tags(text))
            continue
        inline = _TAGS_INLINE.match(text)
        if inline and len(text) < 300:
            tags.extend(_split_tags(inline.group(1)))
            continue
        if category == "Table":
            blocks.extend(Block(row, "table_row", page, section) for row in _table_rows(el))
        elif category == "ListItem":
            blocks.append(Block(text, "list_item", page, section))
        elif category in ("PageBreak", "Image", "Header", "Footer", "PageNumber"):
            continue
        else:
            blocks.append(Block(text, "text", page, section))
    seen: set[str] = set()
    unique_tags = [t for t in tags if not (t.lower() in seen or seen.add(t.lower()))]
    return LoadedDocument(title=title or fallback_title, blocks=blocks, tags=unique_tags)


# ---------------------------------------------------------------- formats


def _load_pdf(path: Path, ocr: bool) -> LoadedDocument:
    """A text PDF through PDFium (`knowledge.pdf_reader`: fast, headings as structure, no page
    furniture); pages without a text layer through Tesseract OCR when it is installed."""
    from knowledge.pdf_reader import PdfUnreadable, read_pdf

    try:
        read = read_pdf(path)
    except PdfUnreadable as exc:
        raise LoadFailed(str(exc)) from exc
    if read.n_pages == 0:
        raise LoadFailed("the PDF has no pages")
    blocks = list(read.blocks)
    missing = read.empty_pages
    notes: list[str] = []
    if missing and ocr and tesseract_available():
        ocr_doc = _ocr_document(path, missing)
        if ocr_doc is not None:
            blocks = sorted(blocks + ocr_doc.blocks, key=lambda b: b.page or 0)
            notes.append(f"OCR on page(s) {_ranges(missing)}")
    elif missing:
        notes.append(f"page(s) {_ranges(missing)} have no text layer (OCR off or tesseract not installed)")
    if read.skipped_pages:
        notes.append(f"page(s) {_ranges(read.skipped_pages)} are contents or index pages, not indexed")
    doc = LoadedDocument(title=read.title or path.stem, blocks=blocks, notes=notes)
    if not doc.blocks:
        if missing and not (ocr and tesseract_available()):
            raise LoadSkipped(
                "scanned PDF without a text layer; install tesseract-ocr (and enable ocr) to read it"
            )
        raise LoadFailed("no text found in the PDF")
    return doc


def _ocr_document(path: Path, pages: list[int]) -> LoadedDocument | None:
    import pypdf
    from pypdf.errors import PdfReadError

    try:
        reader = pypdf.PdfReader(str(path))
    except (PdfReadError, ValueError, KeyError, TypeError, OSError, AssertionError) as exc:
        log.warning("OCR skipped, pypdf cannot read %s: %s", path, exc)
        return None
    ensure_offline_nlp()
    elements = _ocr_pages(reader, pages)
    for el in elements:
        if getattr(el, "text", None):
            el.text = pdf_text.clean(el.text)
    return elements_to_document(elements, fallback_title=path.stem, use_first_title=False)


def _ocr_pages(reader: Any, pages: list[int]) -> list[Any]:
    """OCR the given 1-based pages (in memory: a PDF of just those pages); page numbers mapped back."""
    import pypdf
    from unstructured.partition.pdf import partition_pdf

    writer = pypdf.PdfWriter()
    for p in pages:
        writer.add_page(reader.pages[p - 1])
    buf = io.BytesIO()
    writer.write(buf)
    buf.seek(0)
    try:
        elements = partition_pdf(file=buf, strategy="ocr_only", languages=["eng"])
    except Exception as exc:  # noqa: BLE001 - OCR is best effort; the text pages still index
        log.warning("OCR failed: %s", exc)
        return []
    for el in elements:
        local = el.metadata.page_number or 1
        el.metadata.page_number = pages[min(len(pages), local) - 1]
    return elements


def _ranges(pages: list[int]) -> str:
    out: list[str] = []
    start = prev = pages[0]
    for p in pages[1:] + [None]:  # type: ignore[list-item]
        if p is not None and p == prev + 1:
            prev = p
            continue
        out.append(str(start) if start == prev else f"{start}-{prev}")
        if p is not None:
            start = prev = p
    return ", ".join(out)


def check_zip_archive(path: Path, max_unpacked_mb: float) -> None:
    """Refuse a zip-based file (.docx) that is not a zip or would inflate past `max_unpacked_mb`.

    Reads only the zip directory. `zipfile` stops reading a member at its declared size, so the
    sum of declared sizes bounds what a parser can inflate from this archive.
    """
    import zipfile

    try:
        with zipfile.ZipFile(path) as archive:
            members = archive.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, EOFError) as exc:
        raise LoadFailed(f"not a valid DOCX file (not a readable zip archive): {exc}") from exc
    if len(members) > MAX_ZIP_MEMBERS:
        raise LoadFailed(f"refused: the .docx holds {len(members)} parts (more than {MAX_ZIP_MEMBERS})")
    total = sum(m.file_size for m in members)
    if total > max_unpacked_mb * 2**20:
        raise LoadFailed(
            f"refused: the .docx would unpack to {total / 2**20:,.0f} MB "
            f"(limit {max_unpacked_mb:,.0f} MB, {ZIP_EXPANSION_LIMIT}x max_file_mb)"
        )
    for m in members:
        if m.file_size > ZIP_RATIO_FLOOR and m.file_size > MAX_ZIP_RATIO * max(m.compress_size, 1):
            raise LoadFailed(
                f"refused: the .docx part {m.filename!r} is compressed {m.file_size // max(m.compress_size, 1)}:1 "
                "(a zip bomb)"
            )


def _load_docx(path: Path, max_unpacked_mb: float) -> LoadedDocument:
    check_zip_archive(path, max_unpacked_mb)
    from unstructured.partition.docx import partition_docx

    try:
        elements = partition_docx(filename=str(path), languages=_NO_LANG)
    except Exception as exc:  # noqa: BLE001 - python-docx raises many types on damaged files
        raise LoadFailed(f"could not read the DOCX: {type(exc).__name__}: {exc}") from exc
    return elements_to_document(elements, fallback_title=path.stem)


def _load_html(path: Path) -> LoadedDocument:
    from unstructured.partition.html import partition_html

    text = _read_text_file(path)
    title_match = re.search(r"<title[^>]*>(.*?)</title>", text, re.IGNORECASE | re.DOTALL)
    elements = partition_html(text=visible_html(text), languages=_NO_LANG)
    doc = elements_to_document(elements, fallback_title=path.stem)
    if title_match and " ".join(title_match.group(1).split()):
        doc.title = " ".join(title_match.group(1).split())
    return doc


def _load_markdown(path: Path) -> LoadedDocument:
    return elements_to_document(markdown_elements(_read_text_file(path)), fallback_title=path.stem)


def _load_text(path: Path) -> LoadedDocument:
    elements = text_elements(_read_text_file(path))
    return elements_to_document(elements, fallback_title=path.stem, use_first_title=False)


def load_document(path: Path, ocr: bool = True, max_file_mb: float = DEFAULT_MAX_FILE_MB) -> LoadedDocument:
    """Parse one file into blocks. Raises LoadFailed / LoadSkipped with a clear reason.

    `max_file_mb` bounds what an archive (.docx) may unpack to: ZIP_EXPANSION_LIMIT times it.
    """
    suffix = path.suffix.lower()
    if suffix not in SUPPORTED:
        raise LoadSkipped(f"unsupported file type {suffix or '(none)'}")
    if suffix in DOCX | HTML:  # unstructured's parsers (a PDF reads through PDFium; OCR loads it itself)
        ensure_offline_nlp()
    try:
        if path.stat().st_size == 0:
            raise LoadFailed("the file is empty")
        if suffix in PDF:
            doc = _load_pdf(path, ocr)
        elif suffix in DOCX:
            doc = _load_docx(path, max_file_mb * ZIP_EXPANSION_LIMIT)
        elif suffix in HTML:
            doc = _load_html(path)
        elif suffix in MARKDOWN:
            doc = _load_markdown(path)
        else:
            doc = _load_text(path)
    except LoadFailed:
        raise
    except PermissionError as exc:
        raise LoadFailed(f"permission denied: {exc.strerror or exc}") from exc
    except IsADirectoryError as exc:
        raise LoadFailed("a directory, not a file") from exc
    except OSError as exc:
        raise LoadFailed(f"could not read the file: {exc.strerror or exc}") from exc
    except Exception as exc:  # noqa: BLE001 - a parser bug must not end the run
        log.debug("parser error on %s", path, exc_info=True)
        raise LoadFailed(f"could not parse the file: {type(exc).__name__}: {exc}") from exc
    if not doc.blocks:
        raise LoadFailed("no text found")
    return doc
