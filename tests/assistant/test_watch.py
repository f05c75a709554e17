"""Watched folders stay in sync while the Assistant runs: real inotify events (watchfiles), the real
ingest (MiniLM, LanceDB in tmp_path), and answers that follow the files as they are added, changed
and deleted."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from assistant.assistant import Assistant
from assistant.events import Done
from tests.assistant.turn_fixtures import make_config, shared_classifier

pytestmark = pytest.mark.slow

WAIT = 180.0  # seconds; the first sync loads the parser stack (~30 s on a busy machine), later ones ~1 s


def _answer(a: Assistant, question: str) -> str:
    done = [ev for ev in a.respond(a.new_session(), question) if isinstance(ev, Done)]
    return done[-1].answer.text


def _until(check, what: str) -> None:
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.3)
    raise AssertionError(f"not within {WAIT:.0f} s: {what}")


def _docs(a: Assistant) -> dict[str, int]:
    return {d.source_path: d.chunks for d in a.documents()}


def test_files_added_changed_and_deleted_in_a_watched_folder_are_followed(tmp_path: Path, minilm) -> None:
    cfg = make_config(tmp_path, ingest__isolation="inline", store__refresh_seconds=0.0)
    a = Assistant(cfg, embedder=minilm, classifier=shared_classifier())
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "boiler.md").write_text("# Boiler\n\nThe boiler is serviced every October by Hanna.\n")
    assert a.watch(folder) is True and a.watch(folder) is False  # once
    _until(lambda: "boiler.md" in _docs(a), "the first sync")
    version = a.watcher.version

    # added
    (folder / "sub").mkdir()
    (folder / "sub" / "recycling.txt").write_text("The recycling of the building is collected every Thursday morning by Rota Green.\n")
    _until(lambda: "sub/recycling.txt" in _docs(a), "a new file in a subfolder")
    assert "Thursday" in _answer(a, "When is the recycling collected?")
    sync = a.watcher.syncs[0]
    assert sync.cause == "changed" and sync.report.by_path()["sub/recycling.txt"].status == "added"
    assert sync.report.by_path()["boiler.md"].status == "unchanged"  # incremental: only the new file read
    assert a.watcher.version > version

    # changed
    (folder / "sub" / "recycling.txt").write_text("The recycling of the building is now collected every Saturday evening by Rota Green.\n")
    _until(lambda: a.watcher.syncs[0].report.by_path().get("sub/recycling.txt", None) is not None
           and a.watcher.syncs[0].report.by_path()["sub/recycling.txt"].status == "updated", "the changed file")  # fmt: skip
    answer = _answer(a, "When is the recycling collected?")
    assert "Saturday" in answer and "Thursday" not in answer

    # deleted
    (folder / "sub" / "recycling.txt").unlink()
    _until(lambda: "sub/recycling.txt" not in _docs(a), "the deleted file")
    assert "Saturday" not in _answer(a, "When is the recycling collected?")
    assert set(_docs(a)) == {"boiler.md"}
    a.watcher.stop()
