"""Uploads into the library folder: hostile names stay inside it, limits are enforced with a clear
message, and the rest of a batch goes on."""

from __future__ import annotations

import os

import pytest

from ui.uploads import UploadGuard, sanitise_filename

HOSTILE = [
    "../../etc/passwd.txt",
    "..\\..\\windows\\evil.md",
    "/abs/path/notes.md",
    "$(rm -rf ~).txt",
    "`reboot`; ls | cat > x.md",
    "name\x00with\x07control\nchars.txt",
    "..",
    ".hidden.md",
    "CON.txt",
    "ｆｕｌｌｗｉｄｔｈ.md",
    "a" * 400 + ".md",
]


@pytest.mark.parametrize("name", HOSTILE)
def test_sanitised_names_are_single_safe_components(name):
    safe = sanitise_filename(name)
    assert safe and "/" not in safe and "\\" not in safe and ".." not in safe
    assert not safe.startswith(".")
    assert all(ch.isalnum() or ch in "._ -" for ch in safe), safe
    assert len(safe) <= 120
    assert safe.lower() != "con.txt"


def test_hostile_uploads_land_inside_the_library_only(tmp_path):
    lib = tmp_path / "lib"
    src = tmp_path / "src"
    src.mkdir()
    uploads = []
    for i, name in enumerate(HOSTILE):
        p = src / f"u{i}"
        p.write_text(f"content {i}")
        uploads.append((p, name))
    guard = UploadGuard(lib, max_mb=1, max_files=50, extensions=None)
    staged = guard.stage(uploads)
    assert not staged.message
    written = {p.resolve() for p in staged.saved}
    assert written and all(p.parent == lib.resolve() for p in written)
    # nothing anywhere else under tmp_path but the sources and the library
    outside = [
        os.path.join(d, f)
        for d, _, fs in os.walk(tmp_path)
        for f in fs
        if not d.startswith(str(lib)) and not d.startswith(str(src))
    ]
    assert outside == []
    # names that sanitise to the same thing within one batch are reported, not overwritten
    assert len(staged.saved) + len(staged.rejected) == len(HOSTILE)
    assert not any(p.name.startswith(".upload-") for p in lib.iterdir())


def test_limits_and_types_are_enforced_with_clear_messages(tmp_path):
    lib = tmp_path / "lib"
    big = tmp_path / "big.txt"
    big.write_bytes(b"x" * (2 * 1024 * 1024 + 1))
    ok = tmp_path / "ok.txt"
    ok.write_text("hello")
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"")
    exe = tmp_path / "tool.exe"
    exe.write_bytes(b"MZ")
    guard = UploadGuard(lib, max_mb=2, max_files=4, extensions=[".txt", ".md"])

    too_many = guard.stage([(ok, f"{c}.txt") for c in "abcde"])
    assert (
        too_many.saved == [] and "Too many files: 5" in too_many.message and "limit is 4" in too_many.message
    )

    staged = guard.stage([(big, "big.txt"), (ok, "ok.txt"), (empty, "empty.txt"), (exe, "tool.exe")])
    assert [p.name for p in staged.saved] == ["ok.txt"]
    reasons = {r.name: r.reason for r in staged.rejected}
    assert reasons["big.txt"].startswith("too large (2.0 MB; the limit is 2 MB)")
    assert reasons["empty.txt"] == "the file is empty"
    assert reasons["tool.exe"].startswith("unsupported file type")
    assert (lib / "ok.txt").read_text() == "hello"


def test_reupload_replaces_and_remove_stays_inside(tmp_path):
    lib = tmp_path / "lib"
    v1, v2 = tmp_path / "v1", tmp_path / "v2"
    v1.write_text("first")
    v2.write_text("second")
    guard = UploadGuard(lib, max_mb=1, max_files=5)
    guard.stage([(v1, "doc.txt")])
    guard.stage([(v2, "doc.txt")])
    assert (lib / "doc.txt").read_text() == "second"
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    assert guard.remove("../victim.txt") is False and victim.exists()
    assert guard.remove("doc.txt") is True and not (lib / "doc.txt").exists()
