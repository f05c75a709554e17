"""`Assistant.ingest` reads documents in a real child process (knowledge/ingest_process.py).

Everything is real: the child is `python -m knowledge.ingest_process`, the documents are real PDF,
DOCX and Markdown files, the store a LanceDB folder in tmp_path. The store's `refresh_seconds` is an
hour, so the parent's open table handle sees the child's commits only through `store.refresh()`.
Crashes are real signals sent to the child (SIGKILL as the out-of-memory killer does, SIGSEGV as a
faulting parser would), found through /proc as children of the process under test.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from assistant.assistant import Assistant
from knowledge.ingest import Ingestor, IngestReport
from knowledge.ingest_process import OOM_SCORE_ADJ, STARTING, IngestProcessError
from knowledge.ingest_progress import current_file
from models.runtime.errors import HarkError
from tests.knowledge.docs_factory import write_docx, write_text_pdf

ROOT = Path(__file__).resolve().parents[2]
CHILD = b"knowledge.ingest_process"
LIBRARY = {"lease.docx", "notes.md", "report.pdf"}
FACTS = {"lease.docx": "notice period three months", "notes.md": "greenhouse key ceramic frog", "report.pdf": "vault codeword"}


def _children(parent: int) -> dict[int, str]:
    """pid → state of the ingest children of `parent` (from /proc)."""
    found = {}
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            stat = (d / "stat").read_text()
            cmd = (d / "cmdline").read_bytes()
        except OSError:
            continue
        state, ppid = stat.rsplit(")", 1)[1].split()[:2]
        if int(ppid) == parent and CHILD in cmd:
            found[int(d.name)] = state
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _read(path: Path) -> str:
    try:
        return path.read_text().strip()
    except OSError:  # the child has just exited
        return ""


def _library(folder: Path) -> Path:
    folder.mkdir(parents=True)
    write_text_pdf(folder / "report.pdf", [["Quarterly report", "The vault codeword is ALPHAQUARTZ."]])
    write_docx(folder / "lease.docx", "Lease", ["The notice period of the flat is three months."])
    (folder / "notes.md").write_text("# Garden\n\nThe greenhouse key hangs behind the blue ceramic frog.\n")
    return folder


def _config(hark_config):
    hark_config.store.refresh_seconds = 3600.0  # only refresh() shows another process's commits
    assert hark_config.ingest.isolation == "process"  # the shipped default
    return hark_config


def _consistent(store) -> None:
    """Every manifest entry's chunks are stored, and nothing else is."""
    docs = store.documents()
    assert sum(d.chunks for d in docs) == store.count(), [(d.source_path, d.chunks) for d in docs]


def test_the_child_ingests_and_the_open_store_sees_it_at_once(hark_config, tmp_path, minilm):
    cfg = _config(hark_config)
    lib = _library(tmp_path / "lib")
    a = Assistant(cfg)  # nothing injected: the app's path
    store = a.parts.store.get()  # a table handle opened before the child writes
    assert store.count() == 0
    seen: list[tuple[float, str, dict[int, str]]] = []
    oom: list[str] = []

    def progress(fraction: float, message: str) -> None:
        kids = _children(os.getpid())
        seen.append((fraction, message, kids))
        oom.extend(_read(Path(f"/proc/{pid}/oom_score_adj")) for pid in kids)

    report = a.ingest([lib], progress=progress)

    assert isinstance(report, IngestReport)
    assert {f.source_path: f.status for f in report.files} == dict.fromkeys(LIBRARY, "added")
    assert report.embedder == a.parts.embedder.get().identity
    # progress streamed from a live child, one message per file, fractions in order
    assert seen[0][1] == STARTING  # said before the child's first word
    per_file = [(f, current_file(m), kids) for f, m, kids in seen[1:] if f < 1]
    assert {m for _f, m, _k in per_file} == LIBRARY
    assert all(kids for _f, _m, kids in per_file), "progress arrived while no ingest child was running"
    assert [f for f, _m, _k in seen] == sorted(f for f, _m, _k in seen)
    assert not _children(os.getpid()), "the child outlived its ingestion"
    assert set(oom) - {""} == {str(OOM_SCORE_ADJ)}, "the out-of-memory killer would not pick the child first"
    # the parent's handle sees the new data without waiting
    assert store.count() == report.total_chunks > 0
    _consistent(store)
    top = store.search(minilm.embed_query("what is the vault codeword?"), 3)
    assert top[0].source_path == "report.pdf" and "ALPHAQUARTZ" in top[0].chunk_text
    assert {d.source_path for d in a.documents()} == LIBRARY


def _kill_at_second_file(sig: signal.Signals, files: list[str]):
    def progress(fraction: float, message: str) -> None:
        name = current_file(message)
        if fraction < 1 and message != STARTING and "!killed" not in files and name not in files:
            files.append(name)
            if len(files) == 2:  # the child has read one file and is reading the next
                for pid in _children(os.getpid()):
                    os.kill(pid, sig)
                files.append("!killed")

    return progress


def _library_before_the_crash(cfg, tmp_path, minilm):
    a = Assistant(cfg, embedder=minilm)  # embedder injected, store from the config: the load rig's shape
    store = a.parts.store.get()
    first = tmp_path / "first"
    first.mkdir()
    (first / "old.txt").write_text("The spare bicycle lock code is 4719, written on the cellar door.\n")
    Ingestor(store, minilm, cfg.ingest).ingest([first])  # the library as it was, written in this process
    return a, store


@dataclass
class _Crash:
    """An app with a library, and an ingest of a second folder whose child got a signal."""

    assistant: Assistant
    store: object
    count_before: int
    folder: Path
    files: list[str]  # what the child reported reading, "!killed" where the signal was sent
    error: IngestProcessError


def _ingest_killed_at_second_file(hark_config, tmp_path, minilm, sig: signal.Signals) -> _Crash:
    cfg = _config(hark_config)
    cfg.ingest.commit_seconds = 0.0  # every finished file is committed before the next one is read
    a, store = _library_before_the_crash(cfg, tmp_path, minilm)
    before = store.count()
    lib = _library(tmp_path / "lib")
    files: list[str] = []
    with pytest.raises(IngestProcessError) as err:
        a.ingest([lib], progress=_kill_at_second_file(sig, files))
    return _Crash(a, store, before, lib, files, err.value)


def _intact(a, store, minilm, count_before: int) -> None:
    assert store.count() >= count_before
    _consistent(store)
    assert "old.txt" in {d.source_path for d in a.documents()}
    hit = store.search(minilm.embed_query("bicycle lock code"), 1)[0]
    assert hit.source_path == "old.txt" and "4719" in hit.chunk_text


@pytest.mark.slow
def test_a_child_killed_mid_run_leaves_the_library_intact_and_a_retry_finishes(hark_config, tmp_path, minilm):
    crash = _ingest_killed_at_second_file(hark_config, tmp_path, minilm, signal.SIGKILL)
    a, store, before, lib = crash.assistant, crash.store, crash.count_before, crash.folder

    assert "!killed" in crash.files
    msg = crash.error.message
    assert "SIGKILL" in msg and "out of memory" in msg and "intact" in msg, msg
    assert any(f"while reading {name!r}" in msg for name in LIBRARY), msg
    assert crash.error.hint
    assert not _children(os.getpid())
    _intact(a, store, minilm, before)
    # the file finished before the kill is kept and searchable
    finished = crash.files[0]
    assert finished in {d.source_path for d in a.documents()}
    assert store.fts_search(FACTS[finished], 1)[0].source_path == finished
    # the app goes on: the same Assistant indexes only the rest on the next try
    report = a.ingest([lib])
    statuses = {f.source_path: f.status for f in report.files if f.source_path in LIBRARY}
    assert statuses == {name: "unchanged" if name == finished else "added" for name in LIBRARY}
    _intact(a, store, minilm, before)
    assert "ALPHAQUARTZ" in store.search(minilm.embed_query("vault codeword"), 1)[0].chunk_text


def test_a_segfaulting_reader_is_reported_not_fatal(hark_config, tmp_path, minilm):
    crash = _ingest_killed_at_second_file(hark_config, tmp_path, minilm, signal.SIGSEGV)
    msg = crash.error.message
    assert "SIGSEGV" in msg and "document reader" in msg, msg
    _intact(crash.assistant, crash.store, minilm, crash.count_before)


def test_a_failure_inside_the_child_comes_back_as_its_message(hark_config, tmp_path, minilm):
    """The child's own HarkError (a table of another dimension) reaches the caller word for word."""
    from knowledge.store import ChunkStore

    cfg = _config(hark_config)
    ChunkStore.open(cfg.lancedb_uri, minilm.identity, 512, cfg.store)  # a 512-d table where 384-d go
    a = Assistant(cfg, embedder=minilm)
    with pytest.raises(HarkError) as err:
        a.ingest([_library(tmp_path / "lib")])
    assert not isinstance(err.value, IngestProcessError)
    assert "512-dimensional" in err.value.message and "--rebuild" in err.value.hint


def test_injected_store_or_foreign_embedder_ingests_in_this_process(hark_config, tmp_path, minilm):
    from knowledge.store import ChunkStore
    from models.embedder import MiniLMEmbedder

    cfg = _config(hark_config)
    store = ChunkStore.open(cfg.lancedb_uri, minilm.identity, minilm.dim, cfg.store)
    kids: list[dict[int, str]] = []
    a = Assistant(cfg, embedder=minilm, store=store)
    report = a.ingest([_library(tmp_path / "lib")], progress=lambda f, m: kids.append(_children(os.getpid())))
    assert {f.status for f in report.files} == {"added"} and store.count() == report.total_chunks
    assert kids and not any(kids)

    # an embedder the configuration would never build (truncating MiniLM): its own table, inline
    trunc = MiniLMEmbedder(cfg.embedder.model_copy(update={"long_text": "truncate"}))
    b = Assistant(cfg, embedder=trunc)
    kids.clear()
    other = b.ingest([tmp_path / "lib"], progress=lambda f, m: kids.append(_children(os.getpid())))
    assert other.embedder == "minilm-l6-v2-trunc" and {f.status for f in other.files} == {"added"}
    assert kids and not any(kids)
    assert b.parts.store.get().count() == other.total_chunks


@pytest.mark.slow
def test_the_child_does_not_outlive_a_killed_parent(tmp_path):
    """A parent process that ingests through the child keeps the parser stack out of its own memory;
    killed by SIGKILL mid-ingest, its child exits at once (its stdin closes) instead of finishing:
    it is held (SIGSTOP) after reading the file, before embedding and committing, while the parent
    dies, then let go."""
    lib = _library(tmp_path / "lib")
    second = tmp_path / "second"
    second.mkdir()  # one file: after its progress message the child embeds and commits, saying nothing
    (second / "extra.md").write_text("# Extra\n\nAn extra note about the orchard.\n")
    script = textwrap.dedent(
        f"""
        import json, os, sys, time
        sys.path.insert(0, {str(ROOT)!r})
        from assistant.assistant import Assistant
        from assistant.config import load_config
        from knowledge.ingest_progress import current_file
        cfg = load_config({str(ROOT / "config.yaml")!r}, embedder={{"backend": "minilm"}},
                          store={{"data_dir": {str(tmp_path / "data")!r}}})
        a = Assistant(cfg)
        report = a.ingest([{str(lib)!r}])
        parsers = sorted(m for m in sys.modules if m.split(".")[0] in ("unstructured", "spacy", "pypdf", "docx"))
        print(json.dumps({{"added": report.totals["added"], "parsers": parsers}}), flush=True)
        def stall(fraction, message):
            if current_file(message) == "extra.md":  # the child reads the file; embedding and the commit follow
                print("progress", flush=True)
                time.sleep(600)
        a.ingest([{str(second)!r}], progress=stall)
        """
    )
    parent = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, cwd=tmp_path)
    try:
        first = json.loads(parent.stdout.readline())
        assert first == {"added": 3, "parsers": []}, first
        assert parent.stdout.readline().strip() == "progress"
        (child,) = _children(parent.pid)
        os.kill(child, signal.SIGSTOP)  # hold the child while its parent dies
        parent.kill()
        parent.wait(timeout=10)
        os.kill(child, signal.SIGCONT)
        deadline = time.monotonic() + 10
        while _alive(child) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(child), "the ingest child outlived its parent"
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()
    # it exited when its parent went, before embedding and committing the second folder's file
    import lancedb

    from knowledge.manifest import Manifest

    db = lancedb.connect(str(tmp_path / "data" / "lancedb"))
    name = next(t for t in db.list_tables().tables if t.endswith("__files"))
    assert "extra.md" not in Manifest(db, name).all()
