"""Retrieval: embed the query, first stage (dense, or dense + full-text fused), diffusion rerank.

First stage (`retrieval.search`):
- `dense`: the top `candidates` chunks by cosine similarity.
- `hybrid` (default): both searches run, the dense top `candidates` and LanceDB's full-text
  (BM25) top `candidates`. With `pool: union` (default) every chunk of either list is a candidate,
  so a keyword match the embedder misses is never cut before fusion; `pool: dense` keeps the dense
  list only (zscore) or cuts the fused list to `candidates` (rrf).
  - `fusion: zscore`: z(dense) + bm25_weight · z(bm25) over the pool (bm25 0 for a chunk matching
    no query term).
  - `fusion: rrf`: reciprocal-rank fusion of the two lists, the full-text list weighted by
    `bm25_weight`.
Every candidate carries its dense cosine (computed from its vector when it came from full-text
search only; a chunk whose windows are stored, `embedder.long_text: window_max`, carries the
score the dense search gives it) and its BM25, so `relevant`, the diffusion's restart vector and the answerability
checks above are defined for all of them. The default was chosen on seven development sets by the
rule in docs/results.md ("Retrieval", bench/fusion_sweep.py).

Then `knowledge.rerank.DiffusionReranker` reorders the pool and keeps `top_k`. A failing stage
degrades (full-text → dense only; rerank → first-stage order) and says so in `notices`.
"""

from __future__ import annotations

import logging
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Protocol

import numpy as np

from knowledge.fusion import order_by, rrf_fuse, zscore_fuse
from knowledge.rerank import DiffusionReranker
from knowledge.settings import RetrievalSettings
from knowledge.types import Hit, LibraryWords, Retrieval

log = logging.getLogger(__name__)


class _Embedder(Protocol):
    def embed_query(self, text: str) -> np.ndarray: ...


class _View(Protocol):
    def search(self, vec: np.ndarray, k: int, where: str | None = None) -> list[Hit]: ...
    def fts_search(self, text: str, k: int, where: str | None = None) -> list[Hit]: ...
    def fts_scores(self, text: str, chunk_ids: list[str]) -> dict[str, float]: ...
    def dense_scores(self, hits: list[Hit], query: np.ndarray) -> list[Hit]: ...


class _Store(Protocol):
    def view(self, text_search: bool = False) -> _View: ...
    def count(self) -> int: ...


@dataclass
class SearchResults:
    """What the searches returned for one query, before fusion (cacheable by the evaluator)."""

    dense: list[Hit]  # dense top-n, cosine order
    fts: list[Hit] = field(default_factory=list)  # full-text top-n, BM25 order (hybrid only)
    pool_bm25: dict[str, float] = field(default_factory=dict)  # BM25 of the dense hits (hybrid only)
    notices: list[str] = field(default_factory=list)
    level: float | None = None  # the query's 99th-percentile cosine over the library (`StoreView.level`)
    vocabulary: LibraryWords | None = field(default=None, repr=False)  # `StoreView.vocabulary`


def build_pool(
    results: SearchResults, query_vec: np.ndarray | None, settings: RetrievalSettings, n: int
) -> list[Hit]:
    """The first-stage candidates in first-stage order, `score` = the first-stage score."""
    if not results.dense:  # no query vector or no vector search: the full-text order
        return [replace(h, score=_f(h.bm25_score)) for h in results.fts[:n]]
    if settings.search == "dense" or (not results.fts and not results.pool_bm25):
        return [replace(h, score=_f(h.dense_score)) for h in results.dense[:n]]
    if settings.pool == "dense" and settings.fusion == "zscore":
        pool = results.dense[:n]
        bm25 = [results.pool_bm25.get(h.chunk_id, 0.0) for h in pool]
        fused = zscore_fuse([[_f(h.dense_score) for h in pool], bm25], [1.0, settings.bm25_weight])
        return [replace(pool[i], score=float(fused[i]), bm25_score=bm25[i]) for i in order_by(fused)]
    members = union(results, query_vec, n)
    dense_ids = [h.chunk_id for h in results.dense[:n]]
    if settings.fusion == "zscore":
        dense = [_f(h.dense_score) for h in members]
        fused = zscore_fuse([dense, [_f(h.bm25_score) for h in members]], [1.0, settings.bm25_weight])
        return [replace(members[i], score=float(fused[i])) for i in order_by(fused)]
    by_id = {h.chunk_id: h for h in members}
    ranked = rrf_fuse(
        [dense_ids, [h.chunk_id for h in results.fts[:n]]], k=settings.rrf_k, weights=[1.0, settings.bm25_weight]
    )
    order = order_by(ranked, tie_order=dense_ids)
    if settings.pool == "dense":
        order = order[:n]
    return [replace(by_id[cid], score=ranked[cid]) for cid in order]


def union(results: SearchResults, query_vec: np.ndarray | None, n: int) -> list[Hit]:
    """The dense top-n, then the full-text top-n hits not among them; every member carries its
    cosine (from its vector for full-text-only hits) and its BM25 (0 when it matches no term)."""
    fts_bm25 = {h.chunk_id: _f(h.bm25_score) for h in results.fts[:n]}
    out = []
    for h in results.dense[:n]:
        bm25 = results.pool_bm25.get(h.chunk_id, fts_bm25.get(h.chunk_id, 0.0))
        out.append(replace(h, bm25_score=float(bm25)))
    seen = {h.chunk_id for h in out}
    for h in results.fts[:n]:
        if h.chunk_id in seen:
            continue
        if h.dense_score is None and h.vector is not None and query_vec is not None:
            h = replace(h, dense_score=float(np.dot(np.asarray(h.vector, dtype=np.float64), query_vec)))
        out.append(h)
    return out


def _f(x: float | None) -> float:
    return float("nan") if x is None else float(x)


class Retriever:
    """`Retriever(embedder, store, settings).retrieve(query) -> Retrieval`. Thread-safe (no state
    per query; the full-text search runs on a small pool of its own beside the query embedding)."""

    def __init__(self, embedder: _Embedder, store: _Store, settings: RetrievalSettings) -> None:
        self.embedder = embedder
        self.store = store
        self.settings = settings
        self.reranker = DiffusionReranker(settings.rerank)
        self._fulltext = ThreadPoolExecutor(max_workers=2, thread_name_prefix="hark-fulltext")

    def retrieve(
        self,
        query: str,
        *,
        candidates: int | None = None,
        top_k: int | None = None,
        query_vector: np.ndarray | None = None,
    ) -> Retrieval:
        n = candidates or self.settings.candidates
        k = top_k or self.settings.top_k
        timings = {"embed": 0.0, "search": 0.0, "rerank": 0.0}
        notices: list[str] = []
        t0 = time.perf_counter()
        vec = query_vector
        view, fulltext = None, None
        if vec is None and self._fulltext_first(query):
            view = self._view(query, True, notices)
            if view is None:  # the library could not be read: nothing to search
                return Retrieval(query, [], [], False, timings, notices)
            fulltext = self._fulltext.submit(view.fts_search, query, n)
        if vec is None:
            try:
                vec = np.asarray(self.embedder.embed_query(query), dtype=np.float32)
            except Exception as exc:  # noqa: BLE001 - degrade to full-text only
                log.warning("query embedding failed (%s: %s)", type(exc).__name__, exc)
                notices.append("query embedding failed; full-text search only")
        timings["embed"] = (time.perf_counter() - t0) * 1e3

        t1 = time.perf_counter()
        results = self.search(query, vec, n, view=view, fulltext=fulltext)
        pool = build_pool(results, vec, self.settings, n)
        notices += results.notices
        timings["search"] = (time.perf_counter() - t1) * 1e3

        outcome = self.reranker.rerank(pool, k)
        timings["rerank"] = outcome.ms
        if outcome.notice:
            notices.append(outcome.notice)
        retrieval = Retrieval(query, outcome.hits, outcome.candidates, False, timings, notices, results.level,
                              results.vocabulary)
        best = retrieval.best_dense
        retrieval.relevant = best is not None and best >= self.settings.min_score
        return retrieval

    def _fulltext_first(self, query: str) -> bool:
        """Whether the full-text top-n can start before the query is embedded (it needs no vector):
        it then runs beside the embedding."""
        s = self.settings
        return s.search == "hybrid" and (s.pool == "union" or s.fusion == "rrf") and bool(query.strip())

    def _view(self, query: str, want_text: bool, notices: list[str]) -> _View | None:
        """The store pinned to its latest version (None, with a notice, when it cannot be read)."""
        try:
            try:
                return self.store.view(text_search=want_text and bool(query.strip()))
            except Exception as exc:  # noqa: BLE001 - e.g. the full-text index could not be built
                log.warning("full-text index unavailable (%s: %s)", type(exc).__name__, exc)
                return self.store.view()
        except Exception as exc:  # noqa: BLE001
            log.warning("the library could not be read (%s: %s)", type(exc).__name__, exc)
            notices.append("the library could not be read")
            return None

    def search(
        self,
        query: str,
        vec: np.ndarray | None,
        n: int,
        *,
        view: _View | None = None,
        fulltext: Future | None = None,
    ) -> SearchResults:
        """Run the searches the settings ask for, all on one table version (a file replaced meanwhile
        is seen old or new, never both): `view`, when the caller pinned it, and `fulltext`, the
        full-text top-n already started on it. Never raises; failures become notices."""
        out = SearchResults(dense=[])
        want_text = self.settings.search == "hybrid" or vec is None
        view = view if view is not None else self._view(query, want_text, out.notices)
        if view is None:
            return out
        if vec is not None:
            try:
                out.dense = view.search(vec, n)
                level = getattr(view, "level", None)  # a view without one (a stand-in) tells nothing
                out.level = level(vec) if callable(level) else None
                words = getattr(view, "vocabulary", None)
                out.vocabulary = words() if callable(words) else None
            except Exception as exc:  # noqa: BLE001
                log.warning("dense search failed (%s: %s)", type(exc).__name__, exc)
                out.notices.append("vector search failed")
        if not want_text or not query.strip():
            return out
        try:
            if fulltext is not None:
                out.fts = fulltext.result()
            elif self.settings.pool == "union" or self.settings.fusion == "rrf" or not out.dense:
                out.fts = view.fts_search(query, n)
            if vec is not None:  # a chunk scored by its windows: as the dense search scores it
                out.fts = view.dense_scores(out.fts, vec)
            if out.dense:
                found = {h.chunk_id: float(h.bm25_score or 0.0) for h in out.fts}
                # the full-text hits carry their BM25 already; only the other dense hits are asked for
                rest = [h.chunk_id for h in out.dense if h.chunk_id not in found]
                scores = {**pool_bm25(view, query, rest), **found}
                out.pool_bm25 = {h.chunk_id: scores[h.chunk_id] for h in out.dense}
        except Exception as exc:  # noqa: BLE001 - e.g. no full-text index yet
            log.warning("full-text search failed (%s: %s); dense results only", type(exc).__name__, exc)
            out.notices.append("full-text search unavailable; dense results only")
            out.fts, out.pool_bm25 = [], {}
        return out


def pool_bm25(view: _View, query: str, chunk_ids: list[str]) -> dict[str, float]:
    """Full-text (BM25) score of each given chunk; 0 for chunks matching no query term."""
    found = view.fts_scores(query, chunk_ids)
    return {cid: float(found.get(cid, 0.0)) for cid in chunk_ids}
