"""The library search a turn calls (`DocumentSearch`), which searches ahead for the turn's own words.

Nearly every turn searches the library (rag_search, and uncertain web_search checks the library
first), and the search (query embedding, vector and full-text search, rerank) does not depend on the
intent. On a 2-core machine the two can run at the same time: both release the GIL in their native
runtimes (ONNX Runtime, LanceDB, numpy). A turn opens its `DocumentSearch` with the text as typed or
transcribed, which starts that search in the background; classifies and rewrites; then `find(query)`
takes the prefetched result when the query is that same text and searches anew otherwise. Closing
the search drops a prefetch nobody took (cancelled when it has not started).

While the user is still speaking, the live transcription can start the search for what it has
heard so far (`early`): when the transcript at release is that same text, the turn takes that
search (once) instead of starting its own, so it is ready, or nearly, when the turn needs it.

The pool is small and shared by the sessions of one Assistant; a prefetch that is still queued
when the turn needs it is cancelled and the search runs in the turn's own thread, so a busy pool
never makes a turn wait longer than searching itself.
"""

from __future__ import annotations

import logging
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Any

from assistant.evidence import Evidence, search_library

log = logging.getLogger(__name__)


@dataclass
class Prefetch:
    query: str
    future: Future[Evidence]

    def take(self, query: str) -> Evidence | None:
        """The prefetched result when it is for `query` and has started; else None (and cancelled)."""
        if query != self.query or self.future.cancel():
            return None
        try:
            return self.future.result()
        except Exception as exc:  # noqa: BLE001 - search_library never raises; be safe anyway
            log.warning("prefetched search failed (%s); searching again", type(exc).__name__)
            return None

    def drop(self) -> None:
        self.future.cancel()


class Prefetcher:
    """A small thread pool for prefetched searches. Thread-safe; one per Assistant."""

    EARLY_SECONDS = 30.0  # an early search older than this is not taken
    EARLY_KEPT = 8

    def __init__(self, workers: int = 2) -> None:
        self._workers = workers
        self._lock = threading.Lock()
        self._pool: ThreadPoolExecutor | None = None
        self._early: dict[str, tuple[float, Prefetch]] = {}

    def early(self, retriever: Any, query: str) -> None:
        """Search now for words the user is still saying; `start(query)` takes it, once."""
        query = " ".join(query.split())
        with self._lock:
            if query in self._early:
                return
        found = self._submit(retriever, query)
        if found is None:
            return
        with self._lock:
            self._early[query] = (time.monotonic(), found)
            while len(self._early) > self.EARLY_KEPT:
                self._early.pop(next(iter(self._early)))[1].drop()

    def start(self, retriever: Any, query: str) -> Prefetch | None:
        """Begin `search_library(retriever, query)` in the background (or take the early search
        for the same words); None when it cannot."""
        with self._lock:
            early = self._early.pop(" ".join(query.split()), None)
        if early is not None:
            started, found = early
            if time.monotonic() - started <= self.EARLY_SECONDS and not found.future.cancelled():
                return Prefetch(query, found.future)
        return self._submit(retriever, query)

    def _submit(self, retriever: Any, query: str) -> Prefetch | None:
        if not query.strip() or retriever.get_or_none() is None:
            return None
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self._workers, thread_name_prefix="hark-prefetch")
            try:
                future = self._pool.submit(search_library, retriever, query)
            except RuntimeError:  # shut down
                return None
        return Prefetch(query, future)

    def shutdown(self) -> None:
        with self._lock:
            self._early.clear()
            if self._pool is not None:
                self._pool.shutdown(wait=False, cancel_futures=True)
                self._pool = None


class DocumentSearch:
    """One turn's library search. `with DocumentSearch(retriever, prefetcher, ahead=text) as s:`
    starts searching for `ahead` (None: no prefetch); `s.find(query) -> Evidence` never raises."""

    def __init__(self, retriever: Any, prefetcher: Prefetcher, ahead: str | None = None) -> None:
        self._retriever = retriever
        self._prefetch = prefetcher.start(retriever, ahead) if ahead is not None else None

    def find(self, query: str) -> Evidence:
        prefetch, self._prefetch = self._prefetch, None
        found = prefetch.take(query) if prefetch is not None else None
        if found is not None:
            return replace(found, prefetched=True)
        if prefetch is not None:
            prefetch.drop()  # for other words: not needed any more
        return search_library(self._retriever, query)

    def close(self) -> None:
        if self._prefetch is not None:  # never used (another path, or a rewritten query)
            self._prefetch.drop()
            self._prefetch = None

    def __enter__(self) -> DocumentSearch:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
