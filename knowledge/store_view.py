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
from dataclasses import dataclass
from typing import Any

import numpy as np

from knowledge.settings import StoreSettings
from knowledge.store_rows import hit_from_row, ids_in, rows_and_vectors
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
        any(i.columns == ["vector"] for i in indices),
    )


class StoreView:
    """Read-only searches over one table version (thread-safe: nothing in it changes)."""

    def __init__(self, table: Any, facts: Facts, dim: int, settings: StoreSettings, vectors: VectorCache) -> None:
        self.table = table
        self.facts = facts
        self.dim = dim
        self.settings = settings
        self._vectors = vectors

    @property
    def version(self) -> int:
        return self.facts.version

    def count(self) -> int:
        return self.facts.count

    def search(
        self, query_vector: Any, k: int, where: str | None = None, exact: bool | None = None
    ) -> list[Hit]:
        """Top-k by cosine similarity. `exact=None`: exact below `ann_threshold`, the index above."""
        vec = np.asarray(query_vector, dtype=np.float32).reshape(-1)
        if vec.shape[0] != self.dim:
            raise ValueError(f"query vector has {vec.shape[0]} dimensions, the store {self.dim}")
        use_exact = exact if exact is not None else self.facts.count < self.settings.ann_threshold
        if use_exact and not where and self.settings.memory_search:
            try:
                return self._memory_search(vec, k)
            except StaleSnapshot as exc:
                log.debug("in-memory search fell back to LanceDB: %s", exc)
        q = self.table.search(vec, vector_column_name="vector").distance_type("cosine").limit(k)
        if where:
            q = q.where(where, prefilter=True)
        if use_exact:
            q = q.bypass_vector_index()
        else:
            q = q.nprobes(self.settings.ann_nprobes).refine_factor(self.settings.ann_refine_factor)
        rows, vecs = rows_and_vectors(q.to_arrow())
        hits = []
        for i, r in enumerate(rows):
            cos = 1.0 - float(r["_distance"])
            hits.append(hit_from_row(r, vecs[i] if vecs is not None else None, score=cos, dense_score=cos))
        return hits

    def _memory_search(self, vec: np.ndarray, k: int) -> list[Hit]:
        snap = self._vectors.snapshot(self.table, self.version)  # the schema fixes the dimension
        query = vec / max(float(np.linalg.norm(vec)), 1e-12)
        positions, scores = snap.top(query, k)
        rows = snap.fetch(positions)
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
