"""Typeset PDFs read as words: ligatures spelt out, line-end hyphenation undone (real Debian
manuals: tests/assistant/test_grounded_answers.py), page numbers and running headers dropped, and a
library indexed before this reading re-reads its PDFs once, nothing else."""

from __future__ import annotations

from pathlib import Path

from knowledge import pdf_text
from knowledge.ingest import Ingestor
from knowledge.loaders import load_document
from knowledge.settings import IngestSettings, StoreSettings
from knowledge.store import ChunkStore
from tests.knowledge.docs_factory import write_text_pdf

LIBTASN1 = Path("/usr/share/doc/libtasn1-doc/libtasn1.pdf")  # installed by .ci/install


def test_ligatures_and_broken_words_become_words():
    assert pdf_text.clean("The ﬂags of ﬁles, eﬀect, oﬃce, baﬄe") == "The flags of files, effect, office, baffle"
    assert pdf_text.clean("decompres- sion and DIS- CLAIMED, start-\ning") == "decompression and DISCLAIMED, starting"


def test_glyphs_without_a_character_are_dropped():
    got = pdf_text.clean("(cid:136) Optional radial clipping. (cid:136) Extra lines\n(cid:136)\tA third")
    assert got == "Optional radial clipping. Extra lines\nA third"
    assert pdf_text.clean("Copyright c(cid:13) 2001, 2002") == "Copyright c 2001, 2002"
    assert pdf_text.clean("(cid:136)") == ""


def test_a_real_manual_reads_without_glyph_stand_ins():
    """libtasn1's manual (Debian's libtasn1-doc) draws © as "c" and a circle pdfminer has no character for."""
    doc = load_document(LIBTASN1)
    text = " ".join(b.text for b in doc.blocks)
    assert "(cid:" not in text and "Copyright c 2000, 2001" in text


def test_hyphens_of_the_text_itself_stay():
    for text in ["pre- and post-processing", "end-of-stream", "well-known", "x86-64", "a - b", "see- Figure 2"]:
        assert pdf_text.clean(text.replace("end-of-stream", "end-of- stream")) == text, text


def test_a_library_read_before_re_reads_its_pdfs_once(tmp_path, minilm, monkeypatch):
    """… and reads a sentence across a page break whole, without the page numbers and header."""
    lib = tmp_path / "library"
    lib.mkdir()
    body = [
        ["The deposit is kept in a separate account and is returned to the tenant within thirty"],
        ["days after the keys are handed back. The tenant gives two months of notice."],
        ["Pets are allowed with the landlord's written consent."],
    ]
    write_text_pdf(lib / "lease.pdf", body, header="Tenancy Agreement 2024 v1.3", numbered=True)
    (lib / "notes.md").write_text("# Notes\n\nThe bike lock code is in the blue notebook.\n", encoding="utf-8")
    store = ChunkStore.open(str(tmp_path / "lancedb"), minilm.identity, minilm.dim, StoreSettings())
    ingest = Ingestor(store, minilm, IngestSettings(isolation="inline"))
    ingest.ingest([lib])
    text = " ".join(" ".join(store.table.to_arrow().column("chunk_text").to_pylist()).split())
    assert "Tenancy Agreement" not in text and "within thirty days after the keys" in text, text
    monkeypatch.setattr(pdf_text, "VERSION", pdf_text.VERSION + 1)  # the PDF reading improves
    status = {sp: r.status for sp, r in ingest.ingest([lib]).by_path().items()}
    assert status == {"lease.pdf": "updated", "notes.md": "unchanged"}, status
    status = {sp: r.status for sp, r in ingest.ingest([lib]).by_path().items()}
    assert set(status.values()) == {"unchanged"}, status
    assert store.fts_search("notice", 5)[0].source_path == "lease.pdf"


def test_page_numbers_and_a_running_header_are_dropped_labels_stay():
    items = [("Hark Manual 1.2", p) for p in range(1, 9)] + [(str(p), p) for p in range(1, 9)]
    items += [("Syntax:", p) for p in range(1, 9)] + [("The tenant gives notice.", 1), ("Hark Manual", None)]
    assert pdf_text.furniture(items) == set(range(16))
    assert pdf_text.furniture([("Hark Manual 1.2", 1), ("Hark Manual 1.2", 2), ("2", 2)]) == {2}  # 2 pages: no header yet


def test_a_link_footnote_number_glued_to_its_word_goes_and_the_url_stays():
    from knowledge.pdf_text import clean

    said = ("a copy of Nate Austin’s function in the Padding Content11 http://www.dpawson.co.uk/xsl/padding.html "
            "section of the XSLT FAQ22 http://www.dpawson.co.uk/xsl/index.html. Returns a string.")
    assert clean(said) == ("a copy of Nate Austin’s function in the Padding Content (http://www.dpawson.co.uk/xsl/"
                           "padding.html) section of the XSLT FAQ (http://www.dpawson.co.uk/xsl/index.html). Returns a string.")
    for kept in ("use X11 http://x.org for it", "see RFC 2616 http://ietf.org", "version 2.11 http://a.b"):
        assert clean(kept) == kept
