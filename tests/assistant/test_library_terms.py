"""The recogniser's terms follow the library (assistant/library_terms.py): real LanceDB, real ingest."""

from __future__ import annotations

import time
from pathlib import Path

from assistant.library_terms import LibraryTerms, library_terms_for
from knowledge.ingest import Ingestor
from knowledge.settings import IngestSettings, StoreSettings
from knowledge.store import ChunkStore
from knowledge.vocabulary import read_vocabulary
from tests.audio_data import R_MANUAL
from tests.knowledge.test_vocabulary import MANUALS


def test_terms_follow_ingests_and_deletions(tmp_path: Path, minilm) -> None:
    lib = tmp_path / "library"
    lib.mkdir()
    (lib / "r-intro.md").write_text(R_MANUAL, encoding="utf-8")
    (lib / "manuals.md").write_text(MANUALS, encoding="utf-8")
    uri = str(tmp_path / "data" / "lancedb")
    store = ChunkStore.open(uri, minilm.identity, minilm.dim, StoreSettings())
    Ingestor(store, minilm, IngestSettings()).ingest([lib])
    seen: list[tuple[str, ...]] = []
    terms = LibraryTerms(lambda: store, check_seconds=0.0, on_change=seen.append)
    first = terms()  # the first call starts the check in the background and returns what is known so far
    assert first == () or {"R", "LilyPond"} <= set(first)  # nothing yet, or (a fast check) the terms
    deadline = time.monotonic() + 10
    while not terms() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert {"R", "LilyPond"} <= set(terms()) and seen[-1] == terms()
    # a document deleted (the Library tab): no ingest runs, the terms are rebuilt from the store
    store.delete_document("r-intro.md")
    terms.refresh()
    assert "R" not in terms() and "LilyPond" in terms()
    kept = read_vocabulary(uri, store.name)
    assert kept is not None and kept.version == int(store.table.version) and "R" not in kept.texts()


def test_a_command_without_a_library_gets_no_terms(hark_config) -> None:
    terms = library_terms_for(hark_config)
    assert terms() == ()
    assert not (Path(hark_config.lancedb_uri)).exists()  # asking made no library
