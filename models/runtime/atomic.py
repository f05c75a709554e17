"""Files written whole or not at all: caches that several processes may fill at once."""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

log = logging.getLogger(__name__)


def write_atomic(target: Path, write: Callable[[Path], None]) -> None:
    """`write(tmp)` to a temp file of this process and thread, then renamed to `target`: a crash
    midway never leaves half a file under the name, and two writers never share a temp file."""
    tmp = target.with_name(f"{target.name}.{os.getpid()}-{threading.get_ident()}.tmp")
    try:
        write(tmp)
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)


def remove_stale_temps(folder: Path, older_than_s: float = 3600.0) -> None:
    """Temp files of writes killed midway (SIGKILL skips `finally`; an ONNX export is ~90 MB, the
    joined whisper base ~140 MB). A write takes seconds, so an hour-old temp file belongs to no live
    process."""
    if not folder.is_dir():
        return
    now = time.time()
    for tmp in folder.glob("*.tmp"):
        try:
            if now - tmp.stat().st_mtime > older_than_s:
                tmp.unlink()
                log.info("removed a stale temp file of an interrupted write: %s", tmp)
        except OSError:  # gone meanwhile, or not ours to remove
            continue
