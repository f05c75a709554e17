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
from knowledge.store_rows import blend_scores, hit_from_row, ids_in, rows_and_vectors
from knowledge.types import Hit
from knowledge.vector_cache import StaleSnapshot, VectorCache

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
        best_window_weight: float | None = None,
    ) -> None:
        self.table = table
        self.facts = facts
        self.dim = dim
        self.settings = settings
        self._vectors = vectors
        self.weight = best_window_weight  # None: one vector per chunk (`ChunkStore.best_window_weight`)

    @property
    def version(self) -> int:
        return self.facts.version

    def count(self) -> int:
        return self.facts.count

    def search(
        self, query_vector: Any, k: int, where: str | None = None, exact: bool | None = None
    ) -> list[Hit]:
        """Top-k by cosine similarity (a table with windows: by `blend_scores`, one hit per chunk).
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
        if self.weight is not None:
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
        """Top-k by `blend_scores` through LanceDB: the top 2k by mean vector and the top 2k by best
        window (the multivector column's MaxSim, for one query vector its best window's cosine)
        scored exactly; a chunk in neither is far down both."""
        found: dict[str, tuple[dict[str, Any], np.ndarray]] = {}
        for column in ("vector", "windows"):
            rows, vecs = rows_and_vectors(self._query(vec, column, 2 * k, where, exact).to_arrow())
            for i, r in enumerate(rows):
                if vecs is not None:
                    found.setdefault(r["chunk_id"], (r, vecs[i]))
        scored = [(self._dense(vec, v, r.get("windows")), r, v) for r, v in found.values()]
        scored.sort(key=lambda t: -t[0])
        return [hit_from_row(r, v, score=s, dense_score=s) for s, r, v in scored[:k]]

    def _dense(self, query: np.ndarray, vector: Any, windows: np.ndarray | None) -> float:
        """A chunk's dense score: its cosine, or with windows `blend_scores`."""
        v = np.asarray(vector, dtype=np.float32)
        if self.weight is None or windows is None or not len(windows):
            return float(v @ query)
        return float(blend_scores(query, v[None, :], windows, np.array([0, len(windows)]), self.weight)[0])

    def dense_scores(self, hits: list[Hit], query: np.ndarray) -> list[Hit]:
        """The hits (full-text ones: no dense score yet) with the dense score a dense search gives
        them, when this table scores chunks by their windows; the others as they are."""
        if self.weight is None:
            return hits
        q = np.asarray(query, dtype=np.float32)
        q = q / max(float(np.linalg.norm(q)), 1e-12)
        return [
            replace(h, dense_score=self._dense(q, h.vector, h.windows))
            if h.dense_score is None and h.vector is not None
            else h
            for h in hits
        ]

    def _memory_search(self, vec: np.ndarray, k: int) -> list[Hit]:
        snap = self._vectors.snapshot(self.table, self.version)  # the schema fixes the dimension
        query = vec / max(float(np.linalg.norm(vec)), 1e-12)
        positions, scores = snap.top(query, k, self.weight)
        rows = snap.fetch(positions)
        if snap.windows is not None:
            for r, i in zip(rows, positions, strict=True):
                r["windows"] = snap.windows_of(i)
        return [
            hit_from_row(r, snap.matrix[i], score=float(s), dense_score=float(s))
            for r, i, s in zip(rows, positions, scores, strict=True)
        ]

    def fts_search(self, text: str, k: int, where: str | None = None) -> list[Hit]:
        """Top-k by BM25 from LanceDB's FTS index (`bm25_score`, `score` = bm25)."""
        if not text.strip() or self.facts.count == 0:
            return []
        q = self.table.search(text, query_type="fts", fts_columns="chunk_text").limit(k)
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
        q = self.table.search(text, query_type="fts", fts_columns="chunk_text")
        got = q.where(ids_in(chunk_ids), prefilter=True).select(["chunk_id", "_score"]).limit(len(chunk_ids)).to_arrow()
        return dict(zip(got["chunk_id"].to_pylist(), map(float, got["_score"].to_pylist()), strict=True))
