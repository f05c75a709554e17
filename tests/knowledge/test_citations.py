"""Locating a cited chunk in its document: real PDFs (text layer written byte by byte, parsed by
unstructured as ingest does), text files on disk; the highlight is checked against pypdfium2's own
character boxes of the passage."""

from __future__ import annotations

from pathlib import Path

import pypdfium2 as pdfium

from knowledge.chunking import chunk_document
from knowledge.citations import align, document_path, locate, quoted
from knowledge.loaders import load_document
from knowledge.manifest import DocumentInfo
from tests.knowledge.docs_factory import write_text_pdf

PAGE1 = [
    "Harbour Street tenancy handbook.",
    "The kitchen has a gas cooker and a fridge freezer.",
    "Bins are collected every Tuesday morning from the yard.",
]
PAGE2 = [
    "Ending the tenancy.",
    "The tenant may end this tenancy with a written notice",
    "period of two months, sent by post to the landlord.",
    "Keys are returned to the letting office on the last day.",
]
PAGE3 = ["Parking.", "Residents park in bays 4 to 9 with a permit from the council."]


def _inside(inner, outer, tol=0.5) -> bool:
    return (
        inner[0] >= outer[0] - tol
        and inner[1] >= outer[1] - tol
        and inner[2] <= outer[2] + tol
        and inner[3] <= outer[3] + tol
    )


def _char_boxes(path: Path, page: int, phrase: str) -> list[tuple[float, float, float, float]]:
    """pypdfium2's boxes of each non-space character of `phrase` on `page` (found by its own search)."""
    doc = pdfium.PdfDocument(str(path))
    try:
        tp = doc[page - 1].get_textpage()
        searcher = tp.search(phrase, match_case=True)
        start, count = searcher.get_next()
        text = tp.get_text_range(start, count)
        return [tp.get_charbox(start + i) for i in range(count) if not text[i].isspace()]
    finally:
        doc.close()


def test_a_pdf_chunk_is_found_on_its_page_and_the_highlight_covers_exactly_its_lines(tmp_path: Path) -> None:
    pdf = write_text_pdf(tmp_path / "handbook.pdf", [PAGE1, PAGE2, PAGE3])
    doc = load_document(pdf)
    chunks = chunk_document(doc, "handbook.pdf", "h", chunk_words=20, overlap_words=0)
    notice = next(c for c in chunks if "notice" in c.chunk_text)
    assert notice.pages == [2]

    loc = locate(pdf, notice.chunk_text, notice.pages)
    assert loc.kind == "pdf" and loc.page == 2 and loc.found and loc.coverage > 0.9
    assert "written notice" in loc.text[loc.char_start : loc.char_end]
    assert loc.boxes
    assert notice.chunk_text.endswith("to the landlord.")  # chunks end at a sentence end
    assert notice.chunk_text.startswith("Ending the tenancy.")  # the heading opens the chunk it titles
    # every character of the passage lies inside a highlight rectangle …
    for phrase in (PAGE2[0], PAGE2[1], PAGE2[2]):
        for box in _char_boxes(pdf, 2, phrase):
            assert any(_inside(box, h) for h in loc.boxes), (phrase, box)
    # … and none of the text of the next chunk on the same page does
    for phrase in (PAGE2[3],):  # the next chunk
        for box in _char_boxes(pdf, 2, phrase):
            assert not any(_inside(box, h) for h in loc.boxes), (phrase, box)


def test_a_chunk_spanning_two_pages_opens_on_its_first_page(tmp_path: Path) -> None:
    pdf = write_text_pdf(tmp_path / "two.pdf", [PAGE1, PAGE2])
    doc = load_document(pdf)
    (chunk,) = chunk_document(doc, "two.pdf", "h", chunk_words=200, overlap_words=0)
    assert chunk.pages == [1, 2]
    loc = locate(pdf, chunk.chunk_text, chunk.pages)
    assert loc.page == 1 and loc.found and 0.3 < loc.coverage < 0.7  # page 1 holds its first half
    assert "Bins are collected" in loc.text[loc.char_start : loc.char_end]


def test_a_text_file_passage_has_its_character_span_in_the_file(tmp_path: Path) -> None:
    text = (
        "# Garden notes\n\nTomatoes are sown indoors in March.\n\n"
        "Water the basil in the morning and never let the pots\nstand in water.\n\nThe end.\n"
    )
    path = tmp_path / "garden.md"
    path.write_text(text, encoding="utf-8")
    passage = "Water the basil in the morning and never let the pots stand in water."
    loc = locate(path, passage, [])
    assert loc.kind == "text" and loc.coverage == 1.0
    assert text[loc.char_start : loc.char_end] == "Water the basil in the morning and never let the pots\nstand in water."


def test_unrelated_text_is_not_located_and_stray_common_words_are_dropped() -> None:
    spans, coverage = align("the notice period of two months", "bananas grow on trees in the tropics")
    assert spans == [] and coverage == 0.0
    page = "of the year. " + "x " * 40 + "The notice period is two months long."
    spans, _ = align("the notice period is two months of the year", page)
    assert len(spans) == 1 and page[spans[0][0] : spans[0][1]] == "The notice period is two months"


def test_document_path_stays_inside_the_root(tmp_path: Path) -> None:
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "a.txt").write_text("x")
    (tmp_path / "secret.txt").write_text("x")
    info = DocumentInfo("a.txt", root=str(tmp_path / "lib"))
    assert document_path(info, "a.txt") == tmp_path / "lib" / "a.txt"
    assert document_path(info, "lib/a.txt") == tmp_path / "lib" / "a.txt"  # stored with the folder's name
    assert document_path(info, "../secret.txt") is None
    assert document_path(None, "a.txt") is None


MIME_SPEC = Path("/usr/share/doc/shared-mime-info/shared-mime-info-spec.pdf")  # installed by .ci/install


def test_the_highlight_is_the_quoted_sentence_on_its_page_not_the_whole_chunk() -> None:
    doc = load_document(MIME_SPEC)
    chunk = next(c for c in chunk_document(doc, "spec.pdf", "h", chunk_words=150, overlap_words=30)
                 if "provided for this purpose" in c.chunk_text)  # fmt: skip
    answer = ("Directories have a media type [2]. The media type ’inode’ is provided for this purpose, with the "
              "following types corresponding to the standard types of object found in a Unix filesystem [1].")
    quote = quoted(answer, 1)
    assert quote.startswith("The media type ’inode’") and "[1]" not in quote and "Directories" not in quote
    whole = locate(MIME_SPEC, chunk.chunk_text, chunk.pages)
    loc = locate(MIME_SPEC, quote, chunk.pages, best_page=True)
    assert loc.found and loc.page == 15 and loc.coverage > 0.9
    lit = " ".join(loc.text[loc.char_start : loc.char_end].split())
    assert lit.startswith("The media type ’inode’ is provided for this purpose") and lit.endswith("filesystem:")
    assert loc.char_end - loc.char_start < (whole.char_end - whole.char_start) / 2  # the sentence, not the chunk
    assert len(loc.boxes) >= 2  # its two lines drawn on the page
