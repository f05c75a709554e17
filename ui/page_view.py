"""The document viewer of a citation: the cited PDF page rendered with the passage highlighted, or
the passage shown in its text (other formats). Pure rendering of a `knowledge.citations.Location`;
every value from a document is HTML-escaped.
"""

from __future__ import annotations

import base64
import html
import io
import logging
import re
from pathlib import Path
from typing import Any

from knowledge.citations import Box, Location, quoted

log = logging.getLogger(__name__)

HIGHLIGHT = (255, 214, 0, 110)  # RGBA drawn over the passage
SCALE = 1.5  # pixels per PDF canvas unit (108 dpi)
CONTEXT_CHARS = 1500  # characters of the file shown either side of a text passage


def render_pdf_page(path: Path, page: int, boxes: list[Box], scale: float = SCALE) -> tuple[bytes, list[Box]]:
    """PNG of `page` (1-based) with `boxes` (PDF canvas units) highlighted; also the boxes in pixels
    (left, top, right, bottom), as drawn."""
    import pypdfium2 as pdfium
    from PIL import Image, ImageDraw

    doc = pdfium.PdfDocument(str(path))
    try:
        pdf_page = doc[page - 1]
        bitmap = pdf_page.render(scale=scale)
        conv = bitmap.get_posconv(pdf_page)
        image = bitmap.to_pil().convert("RGBA")
        pixels: list[Box] = []
        for left, bottom, right, top in boxes:
            x0, y0 = conv.to_bitmap(left, top)
            x1, y1 = conv.to_bitmap(right, bottom)
            pixels.append((min(x0, x1), min(y0, y1), max(x0, x1), max(y0, y1)))
    finally:
        doc.close()
    overlay = Image.new("RGBA", image.size, (0, 0, 0, 0))
    draw = ImageDraw.Draw(overlay)
    for x0, y0, x1, y1 in pixels:
        draw.rectangle((x0 - 1, y0 - 1, x1 + 1, y1 + 1), fill=HIGHLIGHT)
    out = io.BytesIO()
    Image.alpha_composite(image, overlay).convert("RGB").save(out, format="PNG", optimize=True)
    return out.getvalue(), pixels


def _marked(text: str, spans: list[tuple[int, int]]) -> str:
    """`text` escaped, the spans wrapped in <mark>."""
    parts, pos = [], 0
    for s, e in spans:
        parts.append(html.escape(text[pos:s]))
        parts.append(f'<mark class="hark-passage">{html.escape(text[s:e])}</mark>')
        pos = e
    parts.append(html.escape(text[pos:]))
    return "".join(parts)


def viewer_html(
    title: str,
    source_path: str,
    loc: Location,
    chunk_text: str,
    section: str = "",
    image_png: bytes | None = None,
    pages: list[int] | None = None,
) -> str:
    """The viewer's content for one citation."""
    e = html.escape
    where = f"page {loc.page}" if loc.page else ""
    if section:
        where = " · ".join(p for p in (where, f"section “{section}”") if p)
    head = (
        f'<div class="hark-viewer-head"><b>{e(title or source_path)}</b>'
        f'<div class="hark-source-meta"><code>{e(source_path)}</code>{" · " + e(where) if where else ""}</div>'
    )
    others = [p for p in (pages or []) if p != loc.page]
    if others:
        head += '<div class="hark-viewer-pages">the passage continues on page ' + ", ".join(map(str, others)) + "</div>"
    head += "</div>"
    note = f'<div class="hark-viewer-note">{e(loc.note)}</div>' if loc.note else ""
    if image_png is not None:
        b64 = base64.b64encode(image_png).decode("ascii")
        body = (
            f'<img class="hark-page" data-page="{loc.page}" data-highlights="{len(loc.boxes)}" '
            f'alt="page {loc.page} of {e(source_path)}" src="data:image/png;base64,{b64}"/>'
        )
    elif loc.kind == "text" and loc.found:
        lo = max(0, loc.char_start - CONTEXT_CHARS)
        hi = min(len(loc.text), loc.char_end + CONTEXT_CHARS)
        spans = [(s - lo, e_ - lo) for s, e_ in loc.spans if s >= lo and e_ <= hi]
        body = (
            f'<div class="hark-doc-text">{"…" if lo else ""}{_marked(loc.text[lo:hi], spans)}'
            f'{"…" if hi < len(loc.text) else ""}</div>'
        )
    else:
        heading = f"<h5>{e(section)}</h5>" if section else ""
        body = f'<div class="hark-doc-text">{heading}<mark class="hark-passage">{e(chunk_text)}</mark></div>'
    return f'<div class="hark-viewer-doc">{head}{note}{body}</div>'


_REQUEST = re.compile(r"hark-src-(\d+)-(\d+)")


def citation_viewer(assistant: Any, turns: list[Any], request: str) -> str | None:
    """The viewer for a request `hark-src-TURN-N…` (source N of answer TURN); None when unknown."""
    m = _REQUEST.search(request or "")
    if not m:
        return None
    number, n = int(m.group(1)), int(m.group(2))
    view = next((t for t in turns if t.number == number), None)
    hit = view.source(n) if view is not None else None
    if hit is None or hit.source_path.startswith(("http://", "https://")):
        return None
    try:
        quote = quoted(view.answer.text, n) if view.answer is not None and not view.answer.not_known else ""
        path, loc = assistant.locate_source(hit, quote)
        png = None
        if path is not None and loc.kind == "pdf" and loc.page:
            png, _ = render_pdf_page(path, loc.page, loc.boxes)
    except Exception as exc:  # noqa: BLE001 - the viewer shows the passage without the page
        log.warning("could not open %s: %s", hit.source_path, exc)
        loc, png = Location("section", page=min(hit.pages) if hit.pages else None, note="the document could not be opened"), None
    return viewer_html(hit.title, hit.source_path, loc, hit.chunk_text, hit.section, png, list(hit.pages))
