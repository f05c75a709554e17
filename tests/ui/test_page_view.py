"""The citation viewer's rendering: a real PDF page rendered by pypdfium2 with the highlight drawn
where the located passage is, and text passages marked in their file."""

from __future__ import annotations

import io
from pathlib import Path

from PIL import Image

from knowledge.citations import locate
from tests.knowledge.docs_factory import write_text_pdf
from ui.page_view import render_pdf_page, viewer_html


def test_the_highlight_is_drawn_on_the_located_lines_only(tmp_path: Path) -> None:
    lines = ["Alpha line about the kitchen.", "The notice period is two months.", "Zulu line about parking."]
    pdf = write_text_pdf(tmp_path / "a.pdf", [lines])
    loc = locate(pdf, "The notice period is two months.", [1])
    png, pixels = render_pdf_page(pdf, 1, loc.boxes, scale=2.0)
    img = Image.open(io.BytesIO(png)).convert("RGB")
    assert len(pixels) == 1
    x0, y0, x1, y1 = pixels[0]
    # the second line: its baseline 14 pt below the first (y = 720 from the bottom), capitals ~9 pt high
    assert abs(y0 / 2.0 - (792 - (720 - 14) - 9)) < 4 and abs(x0 / 2.0 - 72) < 3

    def yellow(x: float, y: float) -> bool:
        r, _g, b = img.getpixel((int(x), int(y)))
        return r - b > 60

    assert yellow(x0 + 2, (y0 + y1) / 2) and yellow(x1 - 2, y0 + 2)
    assert not yellow(x0 + 2, y0 - 20) and not yellow(x0 + 2, y1 + 20)  # the lines above and below


def test_a_text_passage_is_marked_in_its_file_and_everything_is_escaped(tmp_path: Path) -> None:
    path = tmp_path / "n.md"
    path.write_text("# Notes <b>\n\nFirst part.\n\nThe <script>x</script> passage is here.\n", encoding="utf-8")
    loc = locate(path, "The x passage is here", [])
    out = viewer_html("<Notes>", "n.md", loc, "The x passage is here", section="Notes")
    assert "<script>" not in out and "&lt;script&gt;" in out and "&lt;Notes&gt;" in out
    assert '<mark class="hark-passage">' in out and "First part." in out


def test_a_missing_file_shows_the_chunk_in_its_section() -> None:
    loc = locate(None, "the passage", [3])
    out = viewer_html("T", "gone.docx", loc, "the passage", section="Chapter 2")
    assert "page 3" in out and "Chapter 2" in out and "the passage" in out and "not available" in out
