"""The diffusion rerank as a `lancedb.rerankers.Reranker`, for use straight on a LanceDB query:

    reranker = DiffusionLanceReranker(RerankSettings(mode="paper"), top_k=20)
    tbl.search(qvec).distance_type("cosine").limit(50).rerank(reranker, query_string=q).to_arrow()
    tbl.search(query_type="hybrid").vector(qvec).text(q).limit(50).rerank(reranker).to_arrow()

LanceDB's rules: `rerank_hybrid` must exist even for vector search, the
result is a `pa.Table` with a `_relevance_score` column, and the reranker cuts to its own limit
(`top_k`). The rows must carry their vectors (the default: all columns are selected).

Restart scores: for vector results the dense cosine is `1 − _distance` (the query must use
`distance_type("cosine")`); FTS-only rows have no dense score and restart with weight 0 in hybrid
results; a pure FTS result restarts from the BM25 score scaled to [0, 1]. The first-stage score is
the cosine (vector), the BM25 score (FTS) or reciprocal-rank fusion of both lists (hybrid). On any
failure the first-stage order is kept (logged), cut to `top_k`.
"""

from __future__ import annotations

import logging

import numpy as np
import pyarrow as pa
from lancedb.rerankers import Reranker

from knowledge.fusion import rrf_fuse
from knowledge.rerank import DiffusionReranker
from knowledge.settings import RerankSettings
from knowledge.types import Hit

log = logging.getLogger(__name__)

RELEVANCE = "_relevance_score"


class DiffusionLanceReranker(Reranker):
    """Personalized-PageRank rerank of a LanceDB result set (vector, FTS or hybrid)."""

    def __init__(
        self,
        settings: RerankSettings | None = None,
        top_k: int = 20,
        vector_column: str = "vector",
        id_column: str = "chunk_id",
        rrf_k: int = 60,
        return_score: str = "relevance",
    ) -> None:
        super().__init__(return_score)
        if top_k < 1:
            raise ValueError("top_k must be ≥ 1")
        self.settings = settings or RerankSettings()
        self.top_k = top_k
        self.vector_column = vector_column
        self.id_column = id_column
        self.rrf_k = rrf_k
        self._reranker = DiffusionReranker(self.settings)

    def __str__(self) -> str:
        return f"DiffusionLanceReranker(mode={self.settings.mode}, top_k={self.top_k})"

    # --- the three entry points LanceDB calls -------------------------------------------------
    def rerank_vector(self, query: str, vector_results: pa.Table) -> pa.Table:
        if len(vector_results) == 0:
            return self._handle_empty_results(vector_results)
        dense = 1.0 - np.asarray(vector_results["_distance"].to_numpy(zero_copy_only=False), dtype=np.float64)
        return self._apply(vector_results, first=dense, dense=dense)

    def rerank_fts(self, query: str, fts_results: pa.Table) -> pa.Table:
        if len(fts_results) == 0:
            return self._handle_empty_results(fts_results)
        bm25 = np.asarray(fts_results["_score"].to_numpy(zero_copy_only=False), dtype=np.float64)
        top = float(np.nanmax(bm25)) if np.isfinite(bm25).any() else 0.0
        restart = bm25 / top if top > 0 else np.zeros_like(bm25)
        return self._apply(fts_results, first=bm25, dense=restart)

    def rerank_hybrid(self, query: str, vector_results: pa.Table, fts_results: pa.Table) -> pa.Table:
        if len(vector_results) == 0:
            return self.rerank_fts(query, fts_results)
        if len(fts_results) == 0:
            return self.rerank_vector(query, vector_results)
        vec_ids = [str(x) for x in self._ids(vector_results)]
        fts_ids = [str(x) for x in self._ids(fts_results)]
        fused = rrf_fuse([vec_ids, fts_ids], k=self.rrf_k)
        dense_by_id = dict(
            zip(
                vec_ids,
                (1.0 - vector_results["_distance"].to_numpy(zero_copy_only=False)).tolist(),
                strict=True,
            )
        )
        keep_fts = [i for i, cid in enumerate(fts_ids) if cid not in dense_by_id]
        merged = pa.concat_tables(
            [
                vector_results.drop_columns(
                    [c for c in ("_distance", "_score") if c in vector_results.column_names]
                ),
                fts_results.take(keep_fts).drop_columns(
                    [c for c in ("_distance", "_score") if c in fts_results.column_names]
                ),
            ],
            **self._concat_tables_args,
        )
        ids = vec_ids + [fts_ids[i] for i in keep_fts]
        first = np.asarray([fused[c] for c in ids], dtype=np.float64)
        order = np.argsort(-first, kind="stable")
        merged = merged.take(pa.array(order))
        ids = [ids[i] for i in order]
        dense = np.asarray([dense_by_id.get(c, np.nan) for c in ids], dtype=np.float64)
        return self._apply(merged, first=first[order], dense=dense)

    # --- shared ---------------------------------------------------------------------------------
    def _ids(self, table: pa.Table) -> list:
        if self.id_column in table.column_names:
            return table[self.id_column].to_pylist()
        if "_rowid" in table.column_names:
            return table["_rowid"].to_pylist()
        raise ValueError(f"hybrid rerank needs an id column ({self.id_column!r} or _rowid)")

    def _apply(self, table: pa.Table, first: np.ndarray, dense: np.ndarray) -> pa.Table:
        """Reorder `table` (rows in first-stage order) and add `_relevance_score`, cut to top_k."""
        n = len(table)
        order = list(range(n))
        scores = first
        try:
            vectors = table[self.vector_column].to_pylist()
            hits = [
                Hit(
                    chunk_id=str(i),
                    source_path="",
                    title="",
                    chunk_text="",
                    score=float(first[i]),
                    dense_score=float(dense[i]),
                    vector=vectors[i],
                )
                for i in range(n)
            ]
            if self._reranker.params is not None:
                order, _, scores = self._reranker.order(hits)
        except Exception as exc:  # noqa: BLE001 - degrade to the first-stage order
            log.warning(
                "diffusion rerank failed in LanceDB (%s: %s); first-stage order kept", type(exc).__name__, exc
            )
            order, scores = list(range(n)), first
        order = order[: self.top_k]
        out = table.take(pa.array(order, type=pa.int64()))
        rel = pa.array([float(scores[i]) for i in order], type=pa.float32())
        if RELEVANCE in out.column_names:
            out = out.drop_columns([RELEVANCE])
        return out.append_column(RELEVANCE, rel)
