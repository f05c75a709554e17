"""The Library tab's actions on a real Assistant (MiniLM, LanceDB in tmp_path, ingest inline):
honest reports for duplicates and renamed uploads, failed files removable, delete in two steps."""

from __future__ import annotations

from pathlib import Path

import pytest

from assistant.assistant import Assistant
from ui.library_tab import LibraryView, _md
from ui.uploads import UploadGuard, sanitise_filename


def _progress(*_args, **_kwargs) -> None:
    return None


@pytest.fixture
def view(hark_config, minilm, tmp_path):
    hark_config.ingest.isolation = "inline"
    assistant = Assistant(hark_config, embedder=minilm)
    guard = UploadGuard(tmp_path / "library", max_mb=1, max_files=10, extensions=hark_config.ingest.extensions)
    return LibraryView(assistant, guard)


def _upload(tmp_path: Path, name: str, text: str | bytes) -> str:
    folder = tmp_path / "uploads" / str(len(list((tmp_path).glob("uploads/*"))))
    folder.mkdir(parents=True)
    path = folder / name
    path.write_bytes(text) if isinstance(text, bytes) else path.write_text(text, encoding="utf-8")
    return str(path)


def test_duplicates_and_renamed_uploads_are_reported_plainly(view, tmp_path):
    first = _upload(tmp_path, "keys.txt", "The spare key is under the flower pot by the door.")
    report, rows, _ = view.add([first], progress=_progress)
    assert "keys.txt** — added (1 chunks)" in report
    copy = _upload(tmp_path, "keys: copy?.txt", "The spare key is under the flower pot by the door.")
    report, rows, _ = view.add([copy], progress=_progress)
    saved = sanitise_filename("keys: copy?.txt")
    assert saved == "keys_ copy.txt" and f"was saved as **{_md(saved)}**" in report, report
    assert f"**{_md(saved)}** — same text as **keys.txt**: nothing new to index" in report, report
    row = next(r for r in rows if r[0] == saved)
    assert "same text as keys.txt" in row[3]


def test_failed_files_can_be_removed_and_delete_asks_first(view, tmp_path):
    good = _upload(tmp_path, "good.md", "# Boiler\n\nThe boiler is serviced every October.\n")
    bad = _upload(tmp_path, "broken.pdf", b"%PDF-1.7\n1 0 obj << /Type /Catalog /Pages 2 0 R")
    report, rows, _ = view.add([good, bad], progress=_progress)
    assert "broken.pdf** — failed" in report
    assert {r[0]: r[2] for r in rows} == {"good.md": "indexed", "broken.pdf": "failed"}

    report, rows, _ = view.remove_failed()
    assert "Removed 1 failed file(s)" in report and [r[0] for r in rows] == ["good.md"]
    assert not (view.guard.library_dir / "broken.pdf").exists()  # its uploaded copy too

    question, confirm = view.ask_delete("good.md")
    assert "Delete **good.md**?" in question and confirm["visible"] is True
    assert [r[0] for r in view.rows()] == ["good.md"]  # nothing deleted by asking
    report, rows, _ = view.delete("good.md")
    assert "Deleted **good.md** (and its uploaded copy)" in report and rows == []


def test_the_time_left_is_said_once_the_run_has_gone_long_enough():
    from ui.library_tab import _time_left

    assert _time_left(0.5, 1.0) == ""  # too early to say
    assert _time_left(0.25, 10.0) == " · about 30 s left"
    assert _time_left(0.1, 60.0) == " · about 9 min left"
    assert _time_left(1.0, 60.0) == ""


def test_a_german_library_gets_a_note_on_the_english_embedder_and_an_english_one_none(view, tmp_path):
    english = _upload(tmp_path, "boiler.md", "# Boiler\n\nThe boiler is serviced every October by the landlord, "
                      "and the filter of the heating is changed when it is cold.\n")
    report, _, _ = view.add([english], progress=_progress)
    assert "boiler.md** — added" in report and "German" not in report
    german = _upload(tmp_path, "ordnung.md", "# Prüfungsordnung\n\nDie Prüfung wird von zwei Prüfern bewertet, "
                     "und sie kann einmal wiederholt werden. Der Antrag ist bei dem Prüfungsamt zu stellen, "
                     "wenn die Frist noch nicht abgelaufen ist.\n")
    report, _, _ = view.add([german], progress=_progress)
    assert "ordnung.md** — added" in report
    assert "% of the library is German text" in report and "multilingual" in report, report
