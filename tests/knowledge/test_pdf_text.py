"""Typeset PDFs read as words: ligatures spelt out, line-end hyphenation undone (real Debian
manuals: tests/assistant/test_grounded_answers.py), and a library indexed before this reading
re-reads its PDFs once, nothing else."""

from __future__ import annotations

from knowledge import pdf_text
from knowledge.ingest import Ingestor
from knowledge.settings import IngestSettings, StoreSettings
from knowledge.store import ChunkStore
from tests.knowledge.docs_factory import write_text_pdf


def test_ligatures_and_broken_words_become_words():
    assert pdf_text.clean("The ﬂags of ﬁles, eﬀect, oﬃce, baﬄe") == "The flags of files, effect, office, baffle"
    assert pdf_text.clean("decompres- sion and DIS- CLAIMED, start-\ning") == "decompression and DISCLAIMED, starting"


def test_hyphens_of_the_text_itself_stay():
    for text in ["pre- and post-processing", "end-of-stream", "well-known", "x86-64", "a - b", "see- Figure 2"]:
        assert pdf_text.clean(text.replace("end-of-stream", "end-of- stream")) == text, text


def test_a_library_read_before_re_reads_its_pdfs_once(tmp_path, minilm, monkeypatch):
    lib = tmp_path / "library"
    lib.mkdir()
    write_text_pdf(lib / "lease.pdf", [["The tenant gives two months of notice."]])
    (lib / "notes.md").write_text("# Notes\n\nThe bike lock code is in the blue notebook.\n", encoding="utf-8")
    store = ChunkStore.open(str(tmp_path / "lancedb"), minilm.identity, minilm.dim, StoreSettings())
    ingest = Ingestor(store, minilm, IngestSettings(isolation="inline"))
    ingest.ingest([lib])
    monkeypatch.setattr(pdf_text, "VERSION", pdf_text.VERSION + 1)  # the PDF reading improves
    status = {sp: r.status for sp, r in ingest.ingest([lib]).by_path().items()}
    assert status == {"lease.pdf": "updated", "notes.md": "unchanged"}, status
    status = {sp: r.status for sp, r in ingest.ingest([lib]).by_path().items()}
    assert set(status.values()) == {"unchanged"}, status
    assert store.fts_search("notice", 5)[0].source_path == "lease.pdf"
