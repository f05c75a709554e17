"""One version of the chunks table, read as a whole.

A search makes several reads (the dense top-k, the full-text top-k, the BM25 of the dense hits).
Made on the live table, a commit landing between them (an ingest replacing a file) would let the
dense half see the old chunks and the full-text half the new ones, and an answer would quote both
versions of the file. A `StoreView` holds a table handle checked out at one version, so every read
of a search sees the same commit: a file replaced meanwhile is old or new, never both.

The store keeps one view per version (opening one costs a couple of milliseconds locally, a
round-trip on object storage) and hands the same one to every search until the table moves.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from knowledge.settings import StoreSettings
from knowledge.short_forms import with_full_forms
from knowledge.store_rows import (
    HIT_COLUMNS,
    hit_from_row,
    ids_in,
    rows_and_vectors,
    window_lists,
)
from knowledge.types import Hit, LibraryWords
from knowledge.vector_cache import StaleSnapshot, VectorCache, window_max_scores

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Facts:
    """What one table version holds: its row count and which indexes it has."""

    version: int
    count: int
    fts_index: bool
    vector_index: bool


def read_facts(table: Any, fts_name: str) -> Facts:
    """Row count and indexes of a pinned table handle (it does not move while read)."""
    indices = table.list_indices()
    return Facts(
        int(table.version),
        int(table.count_rows()),
        # an index built with other tokenizer settings counts as missing: it is rebuilt
        any(i.index_type == "FTS" and i.name == fts_name for i in indices),
        # a table that stores windows needs its multivector column indexed too
        all(any(i.columns == [c] for i in indices) for c in ("vector", "windows") if c in table.schema.names),
    )


class StoreView:
    """Read-only searches over one table version (thread-safe: nothing in it changes)."""

    def __init__(
        self,
        table: Any,
        facts: Facts,
        dim: int,
        settings: StoreSettings,
        vectors: VectorCache,
        windows: bool = False,
    ) -> None:
        self.table = table
        self.facts = facts
        self.dim = dim
        self.settings = settings
        self._vectors = vectors
        self.windows = windows  # the table stores every window's vector (`ChunkStore.stores_windows`)

    @property
    def version(self) -> int:
        return self.facts.version

    def count(self) -> int:
        return self.facts.count

    def search(
        self, query_vector: Any, k: int, where: str | None = None, exact: bool | None = None
    ) -> list[Hit]:
        """Top-k by cosine similarity (a table with windows: by `window_max_scores`, one hit per chunk).
        `exact=None`: exact below `ann_threshold`, the index above."""
        vec = np.asarray(query_vector, dtype=np.float32).reshape(-1)
        if vec.shape[0] != self.dim:
            raise ValueError(f"query vector has {vec.shape[0]} dimensions, the store {self.dim}")
        use_exact = exact if exact is not None else self.facts.count < self.settings.ann_threshold
        if use_exact and not where and self.settings.memory_search:
            try:
                return self._memory_search(vec, k)
            except StaleSnapshot as exc:
                log.debug("in-memory search fell back to LanceDB: %s", exc)
        if self.windows:
            return self._window_search(vec, k, where, use_exact)
        rows, vecs = rows_and_vectors(self._query(vec, "vector", k, where, use_exact).to_arrow())
        hits = []
        for i, r in enumerate(rows):
            cos = 1.0 - float(r["_distance"])
            hits.append(hit_from_row(r, vecs[i] if vecs is not None else None, score=cos, dense_score=cos))
        return hits

    def _query(self, vec: np.ndarray, column: str, k: int, where: str | None, exact: bool) -> Any:
        q = self.table.search(vec, vector_column_name=column).distance_type("cosine").limit(k)
        if where:
            q = q.where(where, prefilter=True)
        if exact:
            return q.bypass_vector_index()
        return q.nprobes(self.settings.ann_nprobes).refine_factor(self.settings.ann_refine_factor)

    def _window_search(self, vec: np.ndarray, k: int, where: str | None, exact: bool) -> list[Hit]:
        """Top-k by `window_max_scores` through LanceDB: the top k by mean vector and the top k by
        best window (the multivector column's MaxSim: for one query vector, its best window's
        cosine). A chunk of the top k by the better of the two is in one of them: exact as each is."""
        found: dict[str, tuple[dict[str, Any], np.ndarray]] = {}
        for column in ("vector", "windows"):
            rows, vecs = rows_and_vectors(self._query(vec, column, k, where, exact).to_arrow())
            for i, r in enumerate(rows):
                if vecs is not None:
                    found.setdefault(r["chunk_id"], (r, vecs[i]))
        scored = [(self._dense(vec, v, r.get("windows")), r, v) for r, v in found.values()]
        scored.sort(key=lambda t: -t[0])
        return [hit_from_row(r, v, score=s, dense_score=s) for s, r, v in scored[:k]]

    def _dense(self, query: np.ndarray, vector: Any, windows: np.ndarray | None) -> float:
        """A chunk's dense score: its cosine, or with windows `window_max_scores`."""
        mean = np.asarray(vector, dtype=np.float32)
        if not self.windows or windows is None or not len(windows):
            return float(mean @ query)
        windows = np.asarray(windows, dtype=np.float32)
        return float(window_max_scores(query, mean[None, :], windows, np.array([0, len(windows)]))[0])

    def dense_scores(self, hits: list[Hit], query: np.ndarray) -> list[Hit]:
        """The hits (full-text ones: no dense score yet) with the dense score a dense search gives
        them, when this table scores chunks by their windows; the others as they are."""
        todo = [h.chunk_id for h in hits if h.dense_score is None and h.vector is not None]
        if not self.windows or not todo:
            return hits
        q = np.asarray(query, dtype=np.float32)
        q = q / max(float(np.linalg.norm(q)), 1e-12)
        windows = self._windows_of(todo)
        return [
            replace(h, dense_score=self._dense(q, h.vector, windows.get(h.chunk_id, h.windows)))
            if h.chunk_id in windows
            else h
            for h in hits
        ]

    def _windows_of(self, chunk_ids: list[str]) -> dict[str, np.ndarray]:
        """The stored window vectors of these chunks: from the in-memory snapshot when searches use
        it, else read from the table."""
        if self.facts.count < self.settings.ann_threshold and self.settings.memory_search:
            try:
                snap = self._vectors.snapshot(self.table, self.version)
                where = snap.positions
                return {c: w for c in chunk_ids if c in where and (w := snap.windows_of(where[c])) is not None}
            except StaleSnapshot as exc:
                log.debug("windows read from LanceDB: %s", exc)
        got = self.table.search().where(ids_in(chunk_ids)).select(["chunk_id", "windows"]).limit(len(chunk_ids))
        tbl = got.to_arrow()
        return dict(zip(tbl["chunk_id"].to_pylist(), window_lists(tbl["windows"]), strict=True))

    def level(self, query_vector: Any) -> float | None:
        """The 99th percentile of the query's cosines over the library (`Snapshot.level`), from the
        in-memory snapshot; None without one (above `ann_threshold`, memory search off, a stale read)."""
        if not self.settings.memory_search or self.facts.count >= self.settings.ann_threshold:
            return None
        try:
            snap = self._vectors.snapshot(self.table, self.version)
        except StaleSnapshot:
            return None
        vec = np.asarray(query_vector, dtype=np.float32).reshape(-1)
        return snap.level(vec / max(float(np.linalg.norm(vec)), 1e-12))

    def vocabulary(self) -> LibraryWords | None:
        """The library's sorted word list (`Snapshot.vocabulary`), from the in-memory snapshot; None
        without one (as `level`)."""
        if not self.settings.memory_search or self.facts.count >= self.settings.ann_threshold:
            return None
        try:
            return self._vectors.snapshot(self.table, self.version).vocabulary
        except StaleSnapshot:
            return None

    def _memory_search(self, vec: np.ndarray, k: int) -> list[Hit]:
        snap = self._vectors.snapshot(self.table, self.version)  # the schema fixes the dimension
        query = vec / max(float(np.linalg.norm(vec)), 1e-12)
        positions, scores = snap.top(query, k)
        rows = snap.fetch(positions)
        if snap.windows is not None:
            for r, i in zip(rows, positions, strict=True):
                r["windows"] = snap.windows_of(i)
        return [
            hit_from_row(r, snap.matrix[i], score=float(s), dense_score=float(s))
            for r, i, s in zip(rows, positions, scores, strict=True)
        ]

    def fts_search(self, text: str, k: int, where: str | None = None) -> list[Hit]:
        """Top-k by BM25 from LanceDB's FTS index (`bm25_score`, `score` = bm25); a shortening in the
        query ("max") is searched with its full form too (`short_forms`)."""
        if not text.strip() or self.facts.count == 0:
            return []
        q = self.table.search(with_full_forms(text), query_type="fts", fts_columns="chunk_text").limit(k)
        if self.windows:  # the windows are read only for the hits that need them
            q = q.select([*HIT_COLUMNS, "vector", "_score"])
        if where:
            q = q.where(where, prefilter=True)
        rows, vecs = rows_and_vectors(q.to_arrow())
        return [
            hit_from_row(r, vecs[i] if vecs is not None else None, score=float(r["_score"]), bm25_score=float(r["_score"]))
            for i, r in enumerate(rows)
        ]

    def fts_scores(self, text: str, chunk_ids: list[str]) -> dict[str, float]:
        """BM25 of each listed chunk that matches a query term (others are absent). BM25 statistics
        are corpus-wide, so a search restricted to these chunks scores each of them exactly as the
        unrestricted one does; only ids and scores are read."""
        if not text.strip() or not chunk_ids or self.facts.count == 0:
            return {}
        q = self.table.search(with_full_forms(text), query_type="fts", fts_columns="chunk_text")
        got = q.where(ids_in(chunk_ids), prefilter=True).select(["chunk_id", "_score"]).limit(len(chunk_ids)).to_arrow()
        return dict(zip(got["chunk_id"].to_pylist(), map(float, got["_score"].to_pylist()), strict=True))
