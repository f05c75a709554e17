"""Files written whole or not at all (`models/runtime/atomic.py`)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from models.runtime.atomic import remove_stale_temps, write_atomic


def test_an_interrupted_write_leaves_the_previous_file_and_no_temp(tmp_path) -> None:
    """Exports are written to a per-process temp file and renamed: a crash mid-write never leaves
    half a file under the cached name (and two processes never write the same temp file)."""
    target = tmp_path / "x.onnx"
    target.write_bytes(b"the previous, whole file")

    def crash_midway(tmp: Path) -> None:
        tmp.write_bytes(b"half a fi")
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        write_atomic(target, crash_midway)
    assert target.read_bytes() == b"the previous, whole file"
    assert [p.name for p in tmp_path.iterdir()] == ["x.onnx"]
    write_atomic(tmp_path / "new.onnx", lambda tmp: tmp.write_bytes(b"whole"))
    assert (tmp_path / "new.onnx").read_bytes() == b"whole" and len(list(tmp_path.iterdir())) == 2


def test_only_temp_files_an_hour_old_are_removed(tmp_path) -> None:
    """A temp file of a write killed midway goes at the next write; a live writer's stays."""
    old, fresh, kept = tmp_path / "model.bin.1-2.tmp", tmp_path / "model.bin.3-4.tmp", tmp_path / "model.bin"
    for f in (old, fresh, kept):
        f.write_bytes(b"x")
    hour_ago = time.time() - 3700
    os.utime(old, (hour_ago, hour_ago))
    os.utime(kept, (hour_ago, hour_ago))
    remove_stale_temps(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.bin", "model.bin.3-4.tmp"]
