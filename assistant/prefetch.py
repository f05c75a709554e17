"""Search the documents for a turn's own words while the intent classifier runs.

Nearly every turn searches the library (rag_search, and uncertain web_search checks the library
first), and the search (query embedding, vector and full-text search, rerank) does not depend on the
intent. On a 2-core machine the two can run at the same time: both release the GIL in their native
runtimes (ONNX Runtime, LanceDB, numpy). The turn starts the search for the text as typed or
transcribed, classifies, rewrites; if the query it then needs is the same text it takes the
prefetched result, otherwise it searches anew and the prefetch is dropped (cancelled when it has
not started).

The pool is small and shared by the sessions of one Assistant; a prefetch that is still queued
when the turn needs it is cancelled and the search runs in the turn's own thread, so a busy pool
never makes a turn wait longer than searching itself.
"""

from __future__ import annotations

import logging
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from assistant.evidence import Found, search_documents

log = logging.getLogger(__name__)


@dataclass
class Prefetch:
    query: str
    future: Future[Found]

    def take(self, query: str) -> Found | None:
        """The prefetched result when it is for `query` and has started; else None (and cancelled)."""
        if query != self.query or self.future.cancel():
            return None
        try:
            return self.future.result()
        except Exception as exc:  # noqa: BLE001 - search_documents never raises; be safe anyway
            log.warning("prefetched search failed (%s); searching again", type(exc).__name__)
            return None

    def drop(self) -> None:
        self.future.cancel()


class Prefetcher:
    """A small thread pool for prefetched searches. Thread-safe; one per Assistant."""

    def __init__(self, workers: int = 2) -> None:
        self._workers = workers
        self._lock = threading.Lock()
        self._pool: ThreadPoolExecutor | None = None

    def start(self, retriever: Any, query: str) -> Prefetch | None:
        """Begin `search_documents(retriever, query)` in the background; None when it cannot."""
        if not query.strip() or retriever.get_or_none() is None:
            return None
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self._workers, thread_name_prefix="hark-prefetch")
            try:
                future = self._pool.submit(search_documents, retriever, query)
            except RuntimeError:  # shut down
                return None
        return Prefetch(query, future)

    def shutdown(self) -> None:
        with self._lock:
            if self._pool is not None:
                self._pool.shutdown(wait=False, cancel_futures=True)
                self._pool = None
