"""`launch.py ingest FOLDER --watch` in a real subprocess: the folder is indexed, then each change is
picked up and reported until Ctrl-C (SIGINT)."""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
import time

import pytest
import yaml

from tests.conftest import ROOT

pytestmark = pytest.mark.slow


def _lines(stream, out: queue.Queue) -> None:
    for line in stream:
        out.put(line)


def _wait_for(q: queue.Queue, text: str, seen: list[str], timeout: float = 240.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            line = q.get(timeout=1)
        except queue.Empty:
            continue
        seen.append(line)
        if text in line:
            return
    raise AssertionError(f"{text!r} not printed within {timeout:.0f} s:\n{''.join(seen)[-3000:]}")


def test_ingest_watch_reports_each_change_until_interrupted(tmp_path):
    raw = yaml.safe_load((ROOT / "config.yaml").read_text(encoding="utf-8"))
    raw["embedder"]["backend"] = "minilm"
    cfg = tmp_path / "config.yaml"
    cfg.write_text(yaml.safe_dump(raw), encoding="utf-8")
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "boiler.md").write_text("# Boiler\n\nThe boiler is serviced every October.\n")
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "OMP_WAIT_POLICY": "PASSIVE"}
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "launch.py"), "ingest", str(folder), "--watch", "--config", str(cfg)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=tmp_path, env=env,
    )  # fmt: skip
    q: queue.Queue = queue.Queue()
    threading.Thread(target=_lines, args=(proc.stdout, q), daemon=True).start()
    seen: list[str] = []
    try:
        _wait_for(q, "watching", seen)
        assert any("boiler.md" in ln and "added" in ln for ln in seen), seen
        (folder / "bins.txt").write_text("The recycling is collected every Thursday.\n")
        _wait_for(q, "bins.txt", seen, timeout=60)
        assert "added" in seen[-1]
        (folder / "boiler.md").unlink()
        _wait_for(q, "boiler.md", seen, timeout=60)
        assert "removed" in seen[-1]
    finally:
        proc.send_signal(signal.SIGINT)
        rc = proc.wait(timeout=60)
    assert rc == 0, "".join(seen)[-2000:]


def test_an_unchanged_re_ingest_decides_from_the_manifest_without_loading_a_model(tmp_path, monkeypatch, capsys):
    from knowledge.settings import IngestSettings, StoreSettings
    from models.embedder import MiniLMEmbedder
    from models.settings import EmbedderSettings
    from ui.cli_ingest import ingest_command

    folder = tmp_path / "notes"
    folder.mkdir()
    for i in range(5):
        (folder / f"n{i}.md").write_text(f"# Note {i}\n\nRoom {i} has {i + 2} chairs.\n")
    args = (EmbedderSettings(backend="minilm"), StoreSettings(), IngestSettings(), str(tmp_path / "db"), [folder])
    assert ingest_command(*args) == 0
    assert "5 added" in capsys.readouterr().out

    def no_model(self):  # noqa: ANN001
        raise AssertionError("the embedder was loaded for an unchanged library")

    monkeypatch.setattr(MiniLMEmbedder, "_load", no_model)
    assert ingest_command(*args) == 0
    assert "5 unchanged" in capsys.readouterr().out
    (folder / "n0.md").write_text("# Note 0\n\nRoom 0 now has 9 chairs.\n")  # something to embed: it loads
    with pytest.raises(AssertionError, match="was loaded"):
        ingest_command(*args)


def test_ingest_notes_a_german_library_on_the_english_embedder(tmp_path, capsys):
    from knowledge.settings import IngestSettings, StoreSettings
    from models.settings import EmbedderSettings
    from ui.cli_ingest import ingest_command

    folder = tmp_path / "regeln"
    folder.mkdir()
    (folder / "ordnung.md").write_text("# Prüfungsordnung\n\nDie Prüfung wird von zwei Prüfern bewertet, und sie "
                                       "kann einmal wiederholt werden, wenn die Frist noch nicht abgelaufen ist.\n")
    args = (EmbedderSettings(backend="minilm"), StoreSettings(), IngestSettings(), str(tmp_path / "db"), [folder])
    assert ingest_command(*args) == 0
    err = capsys.readouterr().err
    assert "100% of the library is German text" in err and "multilingual" in err, err
    (folder / "ordnung.md").write_text("# Exam rules\n\nThe exam is graded by two examiners, and it can be "
                                       "repeated once if the deadline has not passed.\n")
    assert ingest_command(*args) == 0
    assert "German" not in capsys.readouterr().err
