"""SIGKILL a real ingest subprocess at several moments; the table must answer searches, hold no
duplicate or half-written file, and a re-run must complete the job."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from knowledge.chunking import chunk_document
from knowledge.discover import content_key
from knowledge.loaders import load_document
from knowledge.settings import StoreSettings
from knowledge.store import ChunkStore
from models.embedder import MiniLMEmbedder
from models.settings import EmbedderSettings

CHILD = Path(__file__).with_name("crash_child.py")
# the child's embedder (the default layout): the table it writes
IDENTITY, DIM = MiniLMEmbedder(EmbedderSettings(backend="minilm")).identity, 384

pytestmark = pytest.mark.slow


def _text(i: int, version: int) -> str:
    return (
        f"# Note {i}\n\nVersion {version} of note {i}: the meeting room {i * 7} has {i + version} chairs "
        f"and a projector that was repaired in week {i + 10 * version}.\n\nSecond paragraph {i}-{version}.\n"
    )


def _expected_ids(lib: Path) -> dict[str, set[str]]:
    out = {}
    for p in sorted(lib.glob("*.md")):
        doc = load_document(p)
        out[p.name] = {c.chunk_id for c in chunk_document(doc, p.name, content_key(p))}
    return out


def _run_child(data: Path, lib: Path, pause: str, kill_on: str | None) -> list[str]:
    """Run the child; SIGKILL it as soon as a line starting with `kill_on` appears."""
    env = {**os.environ, "OMP_WAIT_POLICY": "PASSIVE", "HF_HUB_OFFLINE": "1", "DO_NOT_TRACK": "1"}
    proc = subprocess.Popen(
        [sys.executable, str(CHILD), str(data), str(lib), pause],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    events: list[str] = []
    deadline = time.monotonic() + 400
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.startswith("EVENT"):
            events.append(line[6:].strip())
            if kill_on and events[-1].startswith(kill_on):
                proc.send_signal(signal.SIGKILL)
                break
        assert time.monotonic() < deadline, events
    rc = proc.wait(timeout=60)
    if kill_on:
        assert rc == -signal.SIGKILL, (rc, events)
    else:
        assert rc == 0 and events[-1].startswith("done"), events
    return events


def _check_consistent(data: Path, versions: list[dict[str, set[str]]]) -> ChunkStore:
    """Searchable, no duplicates, every stored file exactly one complete known version."""
    store = ChunkStore.open(str(data / "lancedb"), IDENTITY, DIM, StoreSettings())
    n = store.count()
    rows = store.table.search().select(["chunk_id", "source_path", "vector"]).limit(max(n, 1)).to_arrow()
    ids = rows["chunk_id"].to_pylist()
    assert len(ids) == len(set(ids)), "duplicate chunks"
    by_file: dict[str, set[str]] = {}
    for cid, sp in zip(ids, rows["source_path"].to_pylist(), strict=True):
        by_file.setdefault(sp, set()).add(cid)
    for sp, got in by_file.items():
        assert any(v.get(sp) == got for v in versions), f"{sp} is half-written: {sorted(got)}"
    manifest = {d.source_path: d for d in store.documents()}
    for sp, info in manifest.items():  # an entry is only written after its chunks
        assert sp in by_file and info.chunks == len(by_file[sp]), sp
    if n:
        hits = store.search(rows["vector"][0].as_py(), 5)
        assert hits and hits[0].chunk_id == ids[0]
    return store


def test_sigkill_at_any_moment_leaves_a_consistent_table_and_rerun_completes(tmp_path: Path) -> None:
    lib, data = tmp_path / "lib", tmp_path / "data"
    lib.mkdir()
    for i in range(8):
        (lib / f"note{i}.md").write_text(_text(i, 1), encoding="utf-8")
    v1 = _expected_ids(lib)

    # 1. first run: killed after the 3rd chunk commit, before its manifest entry
    events = _run_child(data, lib, "commit:3", kill_on="commit 3")
    store = _check_consistent(data, [v1])
    assert len(store.chunk_counts()) == 3 and len(store.documents()) == 2

    # 2. re-run killed in the middle of parsing/embedding (a moment not chosen by the code)
    _run_child(data, lib, "none", kill_on="file note5.md")
    _check_consistent(data, [v1])

    # 3. files change and disappear; killed between an updated file's commit and its manifest entry
    for i in (0, 1, 6):
        (lib / f"note{i}.md").write_text(_text(i, 2), encoding="utf-8")
    (lib / "note7.md").unlink()
    v2 = _expected_ids(lib)
    _run_child(data, lib, "commit:2", kill_on="commit 2")
    store = _check_consistent(data, [v1, v2])
    assert store.count() > 0

    # 4. killed while the indexes are being brought up to date
    events = _run_child(data, lib, "none", kill_on="indexing")
    assert any(e.startswith("commit") for e in events)
    _check_consistent(data, [v1, v2])

    # 5. a clean re-run completes the job: exactly the current library, nothing left over
    _run_child(data, lib, "none", kill_on=None)
    store = _check_consistent(data, [v2])
    assert {sp: ids for sp, ids in v2.items()} == {
        sp: set(
            store.table.search()
            .where(f"source_path = '{sp}'")
            .select(["chunk_id"])
            .limit(100)
            .to_arrow()["chunk_id"]
            .to_pylist()
        )
        for sp in store.chunk_counts()
    }
    assert {d.source_path for d in store.documents()} == set(v2)
    assert store.fts_search("projector repaired", 3)
    events = _run_child(data, lib, "none", kill_on=None)
    assert "'unchanged': 7" in events[-1] and not any(e.startswith("commit") for e in events)


def test_a_run_killed_midway_keeps_the_files_it_committed_and_the_next_run_does_the_rest(tmp_path: Path) -> None:
    """The shipped batch sizes (512 chunks would hold the whole run): commits come every
    `commit_seconds` (0 here: after every file, so the count does not depend on the machine's speed), so the files read before the kill are kept, searchable, and not read again."""
    lib, data = tmp_path / "lib", tmp_path / "data"
    lib.mkdir()
    for i in range(12):
        (lib / f"note{i:02d}.md").write_text(_text(i, 1), encoding="utf-8")
    v1 = _expected_ids(lib)
    events = _run_child(data, lib, "batched:0", kill_on="file note10.md")
    commits = [e.split(" ", 2)[2].split(",") for e in events if e.startswith("commit")]
    assert commits, events
    store = _check_consistent(data, [v1])
    kept = {d.source_path for d in store.documents()}
    # every commit but the last is fully recorded (the kill may land between the last one's chunks
    # and its manifest entry, which the next run redoes)
    assert {f for c in commits[:-1] for f in c} <= kept and kept <= {f for c in commits for f in c}
    assert len(kept) >= 2
    for sp in kept:
        i = int(sp[4:6])
        hits = store.fts_search(f"repaired in week {i + 10}", 20)
        assert sp in {h.source_path for h in hits}, sp
    events = _run_child(data, lib, "batched:0", kill_on=None)
    totals = events[-1]
    assert f"'unchanged': {len(kept)}" in totals and f"'added': {12 - len(kept)}" in totals, totals
    _check_consistent(data, [v1])
