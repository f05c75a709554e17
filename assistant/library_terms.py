"""The library's terms for the speech recogniser, kept current with the library.

An ingest writes the library's vocabulary beside it when it ends (`knowledge.vocabulary`);
`LibraryTerms` is the `Transcriber.vocabulary` provider: it returns the terms at once (a pass never
waits) and, at most every `check_seconds`, checks in the background that they still belong to the
library's current version: else it reads the file the last ingest wrote, or builds the vocabulary
from the stored chunks when there is none for this version (a deletion from the Library tab, a
library in object storage) and keeps it beside the library.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from knowledge.vocabulary import Vocabulary, read_vocabulary, write_vocabulary

if TYPE_CHECKING:
    from assistant.config import HarkConfig

log = logging.getLogger(__name__)


class LibraryTerms:
    """Callable: the library's terms, best first (empty until known)."""

    def __init__(
        self,
        store: Callable[[], Any],
        check_seconds: float = 5.0,
        on_change: Callable[[tuple[str, ...]], Any] | None = None,
    ) -> None:
        self._store = store  # the loaded ChunkStore, or None (not loaded yet, unavailable)
        self.on_change = on_change  # called with the new terms, in the thread that found them
        self.check_seconds = check_seconds
        self.vocabulary: Vocabulary | None = None
        self._terms: tuple[str, ...] = ()
        self._checked = 0.0
        self._busy = threading.Lock()

    def __call__(self) -> tuple[str, ...]:
        now = time.monotonic()
        if now - self._checked >= self.check_seconds and self._busy.acquire(blocking=False):
            self._checked = now
            threading.Thread(target=self._refresh_locked, name="hark-library-terms", daemon=True).start()
        return self._terms

    def refresh(self) -> None:
        """Bring the terms up to the library's current version now (at warm-up)."""
        with self._busy:
            self._refresh()
        self._checked = time.monotonic()

    def _refresh_locked(self) -> None:
        try:
            self._refresh()
        finally:
            self._busy.release()

    def _refresh(self) -> None:
        try:
            store = self._store()
            if store is None:
                return
            version = int(store.table.version)
            if self.vocabulary is not None and self.vocabulary.version == version:
                return
            vocab = read_vocabulary(store.uri, store.name)
            if vocab is None or vocab.version != version:
                vocab = write_vocabulary(store)
            if vocab is not None:
                terms = tuple(vocab.texts())
                if self.on_change is not None:
                    self.on_change(terms)  # e.g. the recogniser indexes them before they are used
                self.vocabulary, self._terms = vocab, terms
        except Exception:  # noqa: BLE001 - recognition goes on with the terms it has
            log.warning("the library's terms could not be brought up to date", exc_info=True)


def library_terms_for(cfg: HarkConfig) -> LibraryTerms:
    """The terms of `cfg`'s library for a command (`launch.py transcribe`): the file the last
    ingest wrote, or the vocabulary built from the store when there is none for its version."""
    from knowledge.open_library import open_library
    from knowledge.unchanged import local_folder

    folder = local_folder(cfg.lancedb_uri)
    if folder is not None and not folder.is_dir():
        return LibraryTerms(lambda: None)  # no library yet (and none made by asking)
    holder: list[Any] = []

    def store() -> Any:
        if not holder:
            holder.append(open_library(cfg.embedder, cfg.store, cfg.lancedb_uri, lazy=True)[1])
        return holder[0]

    terms = LibraryTerms(store)
    terms.refresh()
    return terms
