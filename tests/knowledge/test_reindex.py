"""After a change of embedder: the plan names the files of the other index as they were first given
(a walked folder as the folder, a single file as itself), and ingesting it restores every source
under its old name. Real LanceDB, real MiniLM."""

from __future__ import annotations

from pathlib import Path

from knowledge.ingest import Ingestor
from knowledge.reindex import reindex_plan, stale_plan
from knowledge.settings import IngestSettings, StoreSettings
from knowledge.store import ChunkStore


class _Renamed:
    """The real embedder under another identity (as if another model had embedded the library)."""

    def __init__(self, inner, identity: str) -> None:  # noqa: ANN001
        self.inner, self.identity = inner, identity

    def __getattr__(self, name: str):  # noqa: ANN204
        return getattr(self.inner, name)


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_the_plan_gives_the_other_index_files_back_as_they_were_given(tmp_path, minilm) -> None:
    uri = str(tmp_path / "lancedb")
    folder = tmp_path / "notes"
    _write(folder / "garden" / "tomatoes.txt", "Water the tomato plants every morning.")
    _write(folder / "bread.txt", "Bake the sourdough bread at 230 degrees for forty minutes.")
    single = _write(tmp_path / "loose" / "boiler.txt", "The boiler service is booked for the fourth of May.")
    gone = _write(tmp_path / "loose" / "gone.txt", "This file is deleted after it was indexed.")
    old = ChunkStore.open(uri, "old-model", minilm.dim, StoreSettings())
    settings = IngestSettings(isolation="inline")
    Ingestor(old, _Renamed(minilm, "old-model"), settings).ingest([folder, single, gone])
    gone.unlink()
    before = {d.source_path: d.root for d in old.documents()}

    new = ChunkStore.open(uri, minilm.identity, minilm.dim, StoreSettings())
    plan = reindex_plan(new)
    assert plan is not None and plan.source_table == old.name and plan.chunks == old.count()
    assert sorted(map(str, plan.paths)) == sorted([str(folder.resolve()), str(single.resolve())])
    assert (plan.files, plan.missing) == (3, 1)
    assert "gone" not in plan.describe(minilm.identity) and "1 listed file(s) no longer exist" in plan.describe("x")

    Ingestor(new, minilm, settings).ingest(plan.paths)
    after = {d.source_path: d.root for d in new.documents()}
    assert after == {sp: root for sp, root in before.items() if sp != "gone.txt"}
    assert old.count() > 0  # the other index is kept apart, untouched
    assert reindex_plan(new) is None  # this embedder has its index now


def test_files_read_or_cut_by_an_earlier_version_are_read_again(tmp_path, minilm, monkeypatch) -> None:
    from knowledge import pdf_text
    from tests.knowledge.docs_factory import write_text_pdf

    uri = str(tmp_path / "lancedb")
    folder = tmp_path / "manuals"
    folder.mkdir()
    write_text_pdf(folder / "boiler.pdf", [["The boiler is serviced every spring by the landlord."]])
    _write(folder / "bread.txt", "Bake the sourdough bread at 230 degrees for forty minutes.")
    store = ChunkStore.open(uri, minilm.identity, minilm.dim, StoreSettings())
    settings = IngestSettings(isolation="inline")
    monkeypatch.setattr(pdf_text, "VERSION", pdf_text.VERSION - 1)  # an earlier PDF reader indexed it
    Ingestor(store, minilm, settings).ingest([folder])
    monkeypatch.undo()
    assert stale_plan(store, settings.chunk_words, settings.overlap_words) is not None
    plan = stale_plan(store, settings.chunk_words, settings.overlap_words)
    assert plan.files == 1 and plan.paths == [(folder / "boiler.pdf").resolve()]  # the PDF only
    assert "earlier version of Hark: reading its 1 file(s) again" in plan.describe(minilm.identity)

    report = Ingestor(store, minilm, settings).ingest(plan.paths)
    assert report.totals.get("updated") == 1 and report.total_chunks == 2, report.totals  # bread.txt kept as it was
    assert stale_plan(store, settings.chunk_words, settings.overlap_words) is None
    other_cut = stale_plan(store, settings.chunk_words + 50, settings.overlap_words)  # another chunk size: both files
    assert other_cut is not None and other_cut.files == 2
