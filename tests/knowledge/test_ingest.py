"""Ingestor with the real MiniLM embedder and a real LanceDB: formats, bad input, incremental runs,
deduplication, recovery of an interrupted run, progress, embedder switch, and the CLI."""

from __future__ import annotations

import builtins
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from knowledge.ingest import Ingestor
from knowledge.ingest_progress import ChunkProgress, current_file
from knowledge.settings import IngestSettings, StoreSettings
from knowledge.store import ChunkStore, StoreWriteError
from models.embedder import MiniLMEmbedder
from models.settings import EmbedderSettings
from tests.conftest import ROOT
from tests.knowledge.docs_factory import write_docx, write_encrypted_pdf, write_text_pdf
from tests.knowledge.test_store import _make_read_only, _small_filesystem
from ui.cli_ingest import format_report


class CountingEmbedder:
    """The real embedder, counting the texts it is asked to embed."""

    def __init__(self, inner: MiniLMEmbedder) -> None:
        self.inner = inner
        self.texts = 0

    def __getattr__(self, name: str):
        return getattr(self.inner, name)

    def embed_documents(self, texts):
        self.texts += len(texts)
        return self.inner.embed_documents(texts)

    def embed_passages(self, texts):
        self.texts += len(texts)
        return self.inner.embed_passages(texts)


def _ingestor(tmp_path: Path, emb, **ingest: object) -> tuple[Ingestor, ChunkStore]:
    store = ChunkStore.open(str(tmp_path / "data" / "lancedb"), emb.identity, emb.dim, StoreSettings())
    return Ingestor(store, emb, IngestSettings(**ingest)), store


def _library(root: Path) -> Path:
    lib = root / "library"
    (lib / "home").mkdir(parents=True)
    (lib / "home" / "lease.md").write_text(
        "# Rental agreement\n\nThe tenant must give three months notice before moving out.\n\n"
        "## Tags\n\nhousing\n",
        encoding="utf-8",
    )
    (lib / "garden.txt").write_text(
        "Tomatoes need full sun and regular watering in summer.\n", encoding="utf-8"
    )
    (lib / "bread.html").write_text(
        "<html><head><title>Bread</title></head><body><p>Sourdough bread is baked at 250 degrees "
        "for forty minutes.</p></body></html>",
        encoding="utf-8",
    )
    write_docx(lib / "trip.docx", "Holiday", ["The flight to Lisbon leaves on the third of May."])
    write_text_pdf(lib / "car.pdf", [["The car insurance renews every January."]], title="Car")
    return lib


def test_folder_ingest_formats_and_search(tmp_path: Path, minilm) -> None:
    lib = _library(tmp_path)
    ing, store = _ingestor(tmp_path, minilm)
    seen: list[float] = []
    report = ing.ingest([lib], progress=lambda f, _m: seen.append(f))
    res = report.by_path()
    assert {sp: r.status for sp, r in res.items()} == {
        "home/lease.md": "added",
        "garden.txt": "added",
        "bread.html": "added",
        "trip.docx": "added",
        "car.pdf": "added",
    }
    assert store.count() == 5 and report.total_chunks == 5 and report.chunks_written == 5
    assert seen == sorted(seen) and seen[-1] == 1.0
    questions = {
        "how much notice before I move out of my flat?": "home/lease.md",
        "when should I water the tomatoes": "garden.txt",
        "at what temperature is sourdough baked": "bread.html",
        "when does my flight to Portugal leave": "trip.docx",
        "when is the car insurance renewed": "car.pdf",
    }
    for q, sp in questions.items():
        assert store.search(minilm.embed_query(q), 1)[0].source_path == sp, q
    lease = store.search(minilm.embed_query("notice period"), 1)[0]
    assert (lease.title, lease.tags) == ("Rental agreement", ["housing"])
    assert store.fts_search("sourdough", 3)[0].source_path == "bread.html"
    docs = {d.source_path: d for d in store.documents()}
    assert (
        docs["car.pdf"].title == "Car" and docs["car.pdf"].chunks == 1 and docs["car.pdf"].status == "indexed"
    )
    text = format_report(report)
    assert "5 added" in text and "home/lease.md" in text


def test_incremental_runs_skip_replace_and_remove(tmp_path: Path, minilm) -> None:
    lib = _library(tmp_path)
    emb = CountingEmbedder(minilm)
    ing, store = _ingestor(tmp_path, emb)
    ing.ingest([lib])
    first = emb.texts
    again = ing.ingest([lib])
    assert emb.texts == first, "an unchanged library must not embed anything"
    assert set(again.totals.items()) >= {("unchanged", 5), ("added", 0), ("updated", 0)}
    (lib / "garden.txt").write_text("Cucumbers want warm soil and a lot of water.\n", encoding="utf-8")
    (lib / "bread.html").unlink()
    (lib / "new.md").write_text(
        "# Bike\n\nThe bike lock code is written in the blue notebook.\n", encoding="utf-8"
    )
    third = ing.ingest([lib])
    status = {sp: r.status for sp, r in third.by_path().items()}
    assert (
        status["garden.txt"] == "updated"
        and status["bread.html"] == "removed"
        and status["new.md"] == "added"
    )
    assert status["home/lease.md"] == "unchanged"
    assert emb.texts == first + 2
    assert store.count() == 5
    assert (
        store.fts_search("tomatoes", 5) == []
        and store.fts_search("cucumbers", 5)[0].source_path == "garden.txt"
    )
    assert "bread.html" not in {d.source_path for d in store.documents()}
    rebuilt = ing.ingest([lib], rebuild=True)
    assert rebuilt.totals["added"] == 5 and store.count() == 5


def test_duplicates_are_stored_once_and_restored_when_the_original_goes(tmp_path: Path, minilm) -> None:
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "a.txt").write_text("The spare key is under the flower pot.\n", encoding="utf-8")
    (lib / "b.txt").write_text("the SPARE key is under the flower-pot!\n", encoding="utf-8")
    ing, store = _ingestor(tmp_path, minilm)
    report = ing.ingest([lib])
    res = report.by_path()
    assert res["a.txt"].chunks == 1 and res["b.txt"].chunks == 0 and res["b.txt"].duplicates == 1
    assert res["b.txt"].same_as == "a.txt" and res["b.txt"].reason.startswith("same text as a.txt")
    assert res["a.txt"].same_as == "" and res["a.txt"].reason == ""
    assert store.count() == 1
    (lib / "a.txt").unlink()
    later = ing.ingest([lib]).by_path()
    assert later["a.txt"].status == "removed"
    assert later["b.txt"].status == "updated" and later["b.txt"].chunks == 1
    assert later["b.txt"].same_as == "" and "same text" not in later["b.txt"].reason
    assert [h.source_path for h in store.search(minilm.embed_query("where is the spare key"), 5)] == ["b.txt"]


def test_bad_input_is_reported_and_the_rest_indexed(tmp_path: Path, minilm, monkeypatch) -> None:
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "good.md").write_text("# Good\n\nThe boiler is serviced every October.\n", encoding="utf-8")
    (lib / "latin1.txt").write_bytes("Le café coûte 3 € à Paris.".encode("cp1252"))
    (lib / "binary.txt").write_bytes(bytes(range(256)) * 50)
    (lib / "empty.pdf").write_bytes(b"")
    (lib / "corrupt.pdf").write_bytes(b"%PDF-1.7\n1 0 obj << /Type /Catalog /Pages 2 0 R")
    write_encrypted_pdf(lib / "locked.pdf", ["Account number 1234"])
    (lib / "huge.txt").write_text("big file " * 20000, encoding="utf-8")  # 180 KB > max_file_mb below
    (lib / "secret.md").write_text("# Secret\n\nNot readable.\n", encoding="utf-8")
    (lib / "secret.md").chmod(0)
    (lib / "loop1.txt").symlink_to(lib / "loop2.txt")
    (lib / "loop2.txt").symlink_to(lib / "loop1.txt")
    (lib / "sub").mkdir()
    (lib / "sub" / "back").symlink_to(lib)  # a folder loop
    (lib / "sub" / "inner.txt").write_text("Inner folder note about the attic window.\n", encoding="utf-8")
    os.mkfifo(lib / "pipe.txt")
    if os.geteuid() == 0:  # root reads mode-000 files: refuse the open the way the kernel would
        real_open = builtins.open

        def guarded(file, *a, **k):
            if Path(str(file)) == lib / "secret.md":
                raise PermissionError(13, "Permission denied", str(file))
            return real_open(file, *a, **k)

        monkeypatch.setattr(builtins, "open", guarded)
    ing, store = _ingestor(tmp_path, minilm, max_file_mb=0.1)
    report = ing.ingest([lib])
    res = report.by_path()
    expect = {
        "good.md": ("added", ""),
        "latin1.txt": ("added", ""),
        "sub/inner.txt": ("added", ""),
        "binary.txt": ("failed", "binary content"),
        "empty.pdf": ("failed", "empty"),
        "corrupt.pdf": ("failed", "not a readable PDF"),
        "locked.pdf": ("failed", "encrypted"),
        "huge.txt": ("skipped", "larger than max_file_mb"),
        "secret.md": ("failed", "permission denied"),
        "loop1.txt": ("failed", "symlink loop"),
        "loop2.txt": ("failed", "symlink loop"),
        "sub/back": ("skipped", "symlink loop"),
        "pipe.txt": ("failed", "not a regular file"),
    }
    for sp, (status, reason) in expect.items():
        assert res[sp].status == status, (sp, res[sp])
        assert reason in res[sp].reason, (sp, res[sp])
    assert store.count() == 3
    hit = store.search(minilm.embed_query("how much is a coffee in Paris"), 1)[0]
    assert hit.source_path == "latin1.txt" and "café coûte 3 €" in hit.chunk_text
    assert not any(p.name not in ("lancedb",) for p in (tmp_path / "data").iterdir())  # nothing else written
    again = ing.ingest([lib]).by_path()  # failures are reported again, cheaply
    assert (
        again["corrupt.pdf"].status == "failed"
        and "unchanged since the last run" in again["corrupt.pdf"].reason
    )


def test_interrupted_run_leftovers_are_repaired(tmp_path: Path, minilm) -> None:
    lib = _library(tmp_path)
    ing, store = _ingestor(tmp_path, minilm)
    ing.ingest([lib])
    # a crash after the chunks commit but before the manifest entry: the entry is missing
    store.manifest.delete(["garden.txt"])
    # a crash in a run whose file was then deleted: chunks with no entry and no file
    store.manifest.delete(["bread.html"])
    (lib / "bread.html").unlink()
    res = ing.ingest([lib]).by_path()
    assert res["garden.txt"].status == "updated" and res["garden.txt"].chunks == 1
    assert res["bread.html"].status == "removed" and "interrupted" in res["bread.html"].reason
    assert store.chunk_counts() == {"home/lease.md": 1, "garden.txt": 1, "trip.docx": 1, "car.pdf": 1}
    assert {d.source_path for d in store.documents()} == set(store.chunk_counts())


def test_single_files_and_another_embedder_get_their_own_table(tmp_path: Path, minilm) -> None:
    lib = _library(tmp_path)
    ing, store = _ingestor(tmp_path, minilm)
    r = ing.ingest([lib / "garden.txt", lib / "car.pdf", lib / "missing.md"]).by_path()
    assert r["garden.txt"].status == "added" and r["car.pdf"].status == "added"
    assert r[str(lib / "missing.md")].status == "failed"
    trunc = MiniLMEmbedder(EmbedderSettings(backend="minilm", long_text="truncate"))
    trunc._model, trunc._tok, trunc._max, trunc._loaded = minilm._model, minilm._tok, minilm._max, True
    ing2, store2 = _ingestor(tmp_path, trunc)
    assert store2.name != store.name
    assert ing2.ingest([lib / "garden.txt"]).by_path()["garden.txt"].status == "added"
    assert store.count() == 2 and store2.count() == 1
    v1 = store.vectors([h.chunk_id for h in store.search(minilm.embed_query("tomatoes"), 1)])
    assert all(np.isclose(np.linalg.norm(v), 1.0, atol=1e-4) for v in v1.values())


def test_read_only_library_raises_a_clear_error_and_keeps_the_index(tmp_path: Path, minilm) -> None:
    lib = _library(tmp_path)
    with _small_filesystem(tmp_path / "data", "16m") as mounted:
        if not mounted and os.geteuid() == 0:
            pytest.skip("root without mount capability: file modes do not stop root")
        ing, store = _ingestor(tmp_path, minilm)
        ing.ingest([lib / "garden.txt"])
        _make_read_only(tmp_path / "data", mounted)
        with pytest.raises(StoreWriteError) as info:
            ing.ingest([lib])
        assert "data folder is writable" in str(info.value)
        assert store.search(minilm.embed_query("tomatoes"), 1)[0].source_path == "garden.txt"


@pytest.mark.slow
def test_cli_ingest_prints_the_report(tmp_path: Path) -> None:
    lib = _library(tmp_path)
    cfg = tmp_path / "config.yaml"
    cfg.write_text("embedder: {backend: minilm}\nstore: {data_dir: data}\n", encoding="utf-8")
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "OMP_WAIT_POLICY": "PASSIVE"}
    cmd = [sys.executable, str(ROOT / "launch.py"), "ingest", str(lib), "--config", str(cfg)]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "5 added" in out.stdout and "car.pdf" in out.stdout
    assert (tmp_path / "data" / "lancedb" / "chunks__minilm-l6-v2-wmax.lance").is_dir()
    assert "ingest" in out.stderr  # the progress bar
    # nothing changed: decided from the manifest snapshot, without LanceDB or a model
    out = subprocess.run([sys.executable, "-X", "importtime", *cmd[1:]], capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "5 unchanged" in out.stdout, out.stdout
    imported = {ln.split("|")[-1].strip() for ln in out.stderr.splitlines() if ln.startswith("import time:")}
    assert "knowledge.unchanged" in imported
    assert not imported & {"lancedb", "onnxruntime", "torch", "unstructured"}, imported & {"lancedb", "onnxruntime", "torch"}


def _stored(store: ChunkStore) -> dict[str, str]:
    rows = store.table.to_arrow().select(["source_path", "chunk_text"]).to_pylist()
    out: dict[str, str] = {}
    for r in rows:
        out[r["source_path"]] = (out.get(r["source_path"], "") + " " + r["chunk_text"]).strip()
    return out


def test_a_renamed_file_keeps_its_text(tmp_path: Path, minilm) -> None:
    """The new name's text duplicates the old name's until the old one is removed in the same run."""
    lib = tmp_path / "library"
    lib.mkdir()
    (lib / "old.txt").write_text("The renamed codeword is quartzpelican.\n", encoding="utf-8")
    ing, store = _ingestor(tmp_path, minilm)
    ing.ingest([lib])
    (lib / "old.txt").rename(lib / "new.txt")
    report = ing.ingest([lib])
    assert report.by_path()["old.txt"].status == "removed"
    assert "quartzpelican" in _stored(store).get("new.txt", ""), _stored(store)


def test_several_folders_keep_same_named_files_apart(tmp_path: Path, minilm) -> None:
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    home.mkdir()
    (work / "notes.txt").write_text("The work codeword is saffronkestrel.\n", encoding="utf-8")
    (home / "notes.txt").write_text("The home codeword is indigomarmot.\n", encoding="utf-8")
    ing, store = _ingestor(tmp_path, minilm)
    ing.ingest([work, home])
    stored = _stored(store)
    assert "saffronkestrel" in stored["work/notes.txt"] and "indigomarmot" in stored["home/notes.txt"], stored
    again = ing.ingest([work])  # one folder alone keeps the names it was stored under
    assert {f.source_path: f.status for f in again.files} == {"work/notes.txt": "unchanged"}, again.files
    assert set(_stored(store)) == {"work/notes.txt", "home/notes.txt"}


def test_one_folder_keeps_paths_relative_to_it(tmp_path: Path, minilm) -> None:
    lib = tmp_path / "library"
    (lib / "sub").mkdir(parents=True)
    (lib / "sub" / "a.txt").write_text("Plain relative paths for one folder.\n", encoding="utf-8")
    ing, store = _ingestor(tmp_path, minilm)
    ing.ingest([lib])
    assert set(_stored(store)) == {"sub/a.txt"}


def test_report_escapes_control_characters_in_names_and_reasons(tmp_path: Path, minilm) -> None:
    lib = tmp_path / "library"
    lib.mkdir()
    (lib / "evil\x1b[2Jname.txt").write_bytes(b"")
    ing, _store = _ingestor(tmp_path, minilm)
    report = ing.ingest([lib])
    report.files[0].reason += " \x07bell"
    text = format_report(report)
    assert "\x1b" not in text and "\x07" not in text, text
    assert "evil\\x1b[2Jname.txt" in text and "\\x07bell" in text, text


def test_progress_counts_chunks_done_out_of_the_total(tmp_path: Path, minilm) -> None:
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "a_small.txt").write_text("The boiler is serviced every October.\n", encoding="utf-8")
    big = " ".join(f"Garden hose number {i} hangs in the shed." for i in range(400))
    (lib / "b_big.txt").write_text(big, encoding="utf-8")
    (lib / "c_small.txt").write_text("The bins go out on Tuesday.\n", encoding="utf-8")
    ing, store = _ingestor(tmp_path, minilm)
    seen: list[tuple[float, str]] = []
    ing.ingest([lib], progress=lambda f, m: seen.append((f, m)))
    total = store.count()
    assert total > 3  # the big file holds several chunks
    counted = [(f, m) for f, m in seen if " chunks" in m]
    assert [f for f, _m in counted] == sorted(f for f, _m in counted)  # the bar never goes back
    # before anything is embedded: 0 done, the total estimated from the sizes (at least a chunk a file)
    assert counted[0][1].startswith("0 of ~") and current_file(counted[0][1]) == "a_small.txt"
    # at the end the total is known and every chunk is done
    assert counted[-1][1].startswith(f"{total} of {total} chunks · "), counted[-1]
    assert {current_file(m) for _f, m in counted} == {"a_small.txt", "b_big.txt", "c_small.txt"}
    assert seen[-1] == (1.0, "done")
    # an unchanged re-run counts the stored chunks as done: the last file starts with the others done
    again: list[tuple[float, str]] = []
    ing.ingest([lib], progress=lambda f, m: again.append((f, m)))
    last = [m for _f, m in again if current_file(m) == "c_small.txt"]
    assert last == [f"{total - 1} of ~{total} chunks · c_small.txt"], again


def test_progress_estimate_scales_with_the_files_read() -> None:
    said: list[str] = []
    files = {"a.md": ("text", 600), "b.md": ("text", 600), "big.md": ("text", 30_000), "scan.pdf": ("pdf", 50_000)}
    p = ChunkProgress(lambda _f, m: said.append(m), files)
    assert p.total == 1 + 1 + 24 + 6  # the priors: 1,250 text bytes, 9,500 PDF bytes a chunk
    p.start("a.md")
    p.read("a.md", 2)  # text files hold twice the chunks the prior says
    assert p.total == 2 + 2 * (1 + 24) + 6 and p.estimated
    p.embedded(2)
    assert said[-1] == "2 of ~58 chunks · a.md" and current_file(said[-1]) == "a.md"
    for name in ("b.md", "big.md", "scan.pdf"):
        p.read(name, 3)
    assert p.total == 2 + 9 and not p.estimated
    assert current_file("updating the indexes") == "updating the indexes"
