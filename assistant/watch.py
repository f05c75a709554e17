"""Folders that stay in sync: each watched folder is re-ingested (incrementally) after its files change.

One thread per folder waits for file-system events (`watchfiles`: inotify on Linux, polling where
events are not available, e.g. network mounts) on the indexable files; a burst of changes is
gathered for `debounce_ms`, then the whole folder goes through the normal ingest, which costs a
hash for each unchanged file, reads only new and changed ones and removes deleted ones, with the
same per-file report as any other ingest. The first sync runs when the folder is added.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

Ingest = Callable[[list[Path]], Any]  # paths → IngestReport


@dataclass
class Sync:
    """One sync of a watched folder: when, what started it, and its report (or the error)."""

    folder: Path
    at: float
    cause: str  # "added" | "changed"
    report: Any = None
    error: str = ""


class FolderWatcher:
    """Watches folders while the app runs; thread-safe. `on_sync` is called after each sync."""

    def __init__(
        self,
        ingest: Ingest,
        extensions: list[str],
        on_sync: Callable[[Sync], None] | None = None,
        debounce_ms: int = 800,
        force_polling: bool | None = None,
    ) -> None:
        self._ingest = ingest
        self._exts = {e.lower() for e in extensions}
        self._on_sync = on_sync
        self._debounce_ms = debounce_ms
        self._polling = force_polling
        self._lock = threading.Lock()
        self._threads: dict[Path, threading.Thread] = {}
        self._stop = threading.Event()
        self.syncs: list[Sync] = []  # the latest first, at most 20
        self.version = 0  # bumped after every sync (the UI redraws when it changes)

    def folders(self) -> list[Path]:
        with self._lock:
            return sorted(self._threads)

    def add(self, folder: Path) -> bool:
        """Watch `folder` (synced now, then after every change). False when it is already watched."""
        folder = Path(folder).expanduser().resolve()
        if not folder.is_dir():
            raise NotADirectoryError(f"not a folder: {folder}")
        with self._lock:
            if folder in self._threads:
                return False
            ready = threading.Event()
            thread = threading.Thread(target=self._run, args=(folder, ready), name=f"watch-{folder.name}", daemon=True)
            self._threads[folder] = thread
        thread.start()
        ready.wait(timeout=10)  # the watch is in place before the first sync: no change is missed
        return True

    def stop(self) -> None:
        self._stop.set()
        for thread in list(self._threads.values()):
            thread.join(timeout=5)

    def _wanted(self, _change: Any, path: str) -> bool:
        suffix = Path(path).suffix.lower()
        name = Path(path).name
        return not name.startswith(".") and (suffix in self._exts or not suffix)  # no suffix: a folder

    def _run(self, folder: Path, ready: threading.Event) -> None:
        import watchfiles

        started = False
        try:
            for changes in watchfiles.watch(
                folder,
                watch_filter=self._wanted,
                debounce=self._debounce_ms,
                step=100,
                stop_event=self._stop,
                yield_on_timeout=True,
                rust_timeout=500,
                force_polling=self._polling,
                raise_interrupt=False,
            ):
                if not started:  # the watch is in place: the first sync covers everything so far
                    started = True
                    ready.set()
                    self._sync(folder, "added")
                elif changes:
                    self._sync(folder, "changed")
        except Exception as exc:  # noqa: BLE001 - a folder that goes away ends its watch with a note
            log.warning("stopped watching %s: %s", folder, exc)
            self._record(Sync(folder, time.time(), "stopped", error=f"stopped watching: {exc}"))
        finally:
            ready.set()
            with self._lock:
                self._threads.pop(folder, None)

    def _sync(self, folder: Path, cause: str) -> None:
        sync = Sync(folder, time.time(), cause)
        try:
            sync.report = self._ingest([folder])
        except Exception as exc:  # noqa: BLE001 - reported; the next change tries again
            log.warning("sync of %s failed: %s", folder, exc)
            sync.error = getattr(exc, "message", None) or str(exc)
        self._record(sync)

    def _record(self, sync: Sync) -> None:
        with self._lock:
            self.syncs = [sync, *self.syncs][:20]
            self.version += 1
        if self._on_sync is not None:
            try:
                self._on_sync(sync)
            except Exception:  # noqa: BLE001 - a listener never stops the watch
                log.exception("sync listener failed")
