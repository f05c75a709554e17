"""An unchanged re-ingest decided from the manifest snapshot: the same report as a full run, and
None (a full run is needed) whenever anything changed: a file, the folder, or the store itself."""

from __future__ import annotations

from pathlib import Path

from knowledge.ingest import Ingestor
from knowledge.settings import IngestSettings, StoreSettings
from knowledge.store import ChunkStore
from knowledge.unchanged import quick_report, snapshot_path


def _setup(tmp_path: Path, minilm) -> tuple[Path, Ingestor, ChunkStore, str]:
    lib = tmp_path / "library"
    lib.mkdir()
    (lib / "boiler.md").write_text("# Boiler\n\nThe boiler is serviced every October.\n", encoding="utf-8")
    (lib / "bins.txt").write_text("The bins go out on Tuesday evening.\n", encoding="utf-8")
    (lib / "blank.txt").write_text("   \n", encoding="utf-8")  # fails: empty
    uri = str(tmp_path / "data" / "lancedb")
    store = ChunkStore.open(uri, minilm.identity, minilm.dim, StoreSettings())
    return lib, Ingestor(store, minilm, IngestSettings()), store, uri


def _statuses(report) -> dict[str, tuple[str, int, str]]:
    return {f.source_path: (f.status, f.chunks, f.reason) for f in report.files}


def test_unchanged_report_matches_a_full_run(tmp_path: Path, minilm) -> None:
    lib, ing, store, uri = _setup(tmp_path, minilm)
    first = ing.ingest([lib])
    assert snapshot_path(uri, store.name).is_file()
    quick = quick_report([lib], ing.settings, uri, store.name)
    full = ing.ingest([lib])  # the full run over the same files
    assert quick is not None and _statuses(quick) == _statuses(full)
    assert _statuses(quick)["boiler.md"] == ("unchanged", 1, "")
    status, _n, reason = _statuses(quick)["blank.txt"]
    assert status == "failed" and "empty" in reason and "unchanged since the last run" in reason
    assert quick.total_chunks == full.total_chunks == first.total_chunks == 2
    assert quick.embedder == minilm.identity


def test_any_change_needs_a_full_run(tmp_path: Path, minilm) -> None:
    lib, ing, store, uri = _setup(tmp_path, minilm)
    ing.ingest([lib])
    check = lambda: quick_report([lib], ing.settings, uri, store.name)  # noqa: E731
    assert check() is not None
    (lib / "bins.txt").write_text("The bins go out on Wednesday now.\n", encoding="utf-8")
    assert check() is None  # changed content
    ing.ingest([lib])
    (lib / "shed.txt").write_text("The shed key hangs by the door.\n", encoding="utf-8")
    assert check() is None  # a new file
    ing.ingest([lib])
    (lib / "shed.txt").unlink()
    assert check() is None  # a removed file
    ing.ingest([lib])
    assert check() is not None
    other = ChunkStore.open(uri, minilm.identity, minilm.dim, StoreSettings())
    other.delete_document("boiler.md")  # another process writes to the store: the snapshot is stale
    assert check() is None
    store.refresh()  # this handle sees the other's commit now (else within refresh_seconds)
    assert ing.ingest([lib]).by_path()["boiler.md"].status == "added"
    assert check() is not None
