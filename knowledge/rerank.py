"""Diffusion rerank: personalized PageRank (python-igraph) over the first-stage candidates.

The paper's method (`mode: paper`): a complete undirected graph over the N candidates, edge weight =
cosine similarity of the chunk vectors clamped at 0, no self-loops; restart vector p ∝ the dense
score (clamped at 0, uniform when all are 0); personalized PageRank at damping 0.85; order by the
PageRank score.

Variants (`mode: custom`): damping; complete or k-nearest-neighbour graph; edge transform
(`cosine` max(cos, 0), `shifted` (cos + 1) / 2, `temperature` exp((cos − 1) / T)); optional degree
correction (PPR / weighted degree — for a symmetric graph raw PPR is score smoothing multiplied by
each node's degree, i.e. a centrality bias); and fusion of the first-stage score with the
diffusion score: final = (1 − w)·z(first stage) + w·z(diffusion).

Any failure (missing or non-finite vectors, igraph errors) keeps the first-stage order, logs a
warning and returns a notice; the turn goes on.
"""

from __future__ import annotations

import functools
import logging
import time
from dataclasses import dataclass
from typing import Literal

import numpy as np

from knowledge.fusion import zscore
from knowledge.settings import RerankSettings
from knowledge.types import Hit
from models.runtime.blas import single_threaded_blas

log = logging.getLogger(__name__)

FALLBACK_NOTICE = "rerank failed; first-stage order kept"


class RerankError(RuntimeError):
    """The diffusion could not be computed for these candidates."""


@dataclass(frozen=True)
class DiffusionParams:
    """A fully resolved diffusion configuration (what `mode` + the settings fields mean)."""

    damping: float = 0.85
    graph: Literal["complete", "knn"] = "complete"
    knn_k: int = 10
    edge: Literal["cosine", "shifted", "temperature"] = "cosine"
    temperature: float = 0.05
    degree_correct: bool = False
    # weight of z(diffusion) in the final score; 1.0 = pure diffusion order (the paper)
    fusion_weight: float = 1.0


PAPER = DiffusionParams()


def params_for(settings: RerankSettings) -> DiffusionParams | None:
    """The diffusion parameters a settings block selects; None when the stage is off."""
    if settings.mode == "off":
        return None
    if settings.mode == "paper":
        return PAPER
    return DiffusionParams(
        damping=settings.damping,
        graph=settings.graph,
        knn_k=settings.knn_k,
        edge=settings.edge,
        temperature=settings.temperature,
        degree_correct=settings.degree_correct,
        fusion_weight=settings.fusion_weight,
    )


def affinity(vectors: np.ndarray, params: DiffusionParams) -> np.ndarray:
    """Symmetric non-negative edge weights (n × n, zero diagonal) from unit row vectors."""
    v = np.asarray(vectors, dtype=np.float64)
    if v.ndim != 2:
        raise RerankError(f"expected a 2-D array of vectors, got shape {v.shape}")
    if not np.isfinite(v).all():
        raise RerankError("candidate vectors contain NaN or infinity")
    with single_threaded_blas():
        gram = v @ v.T
    # cosine from the Gram matrix itself: norms are its diagonal (cheaper than a separate norm pass)
    inv = 1.0 / np.maximum(np.sqrt(np.maximum(np.diagonal(gram), 0.0)), 1e-12)
    cos = np.clip(gram * inv[:, None] * inv[None, :], -1.0, 1.0)
    if params.edge == "cosine":
        w = np.maximum(cos, 0.0)
    elif params.edge == "shifted":
        w = (cos + 1.0) / 2.0
    elif params.edge == "temperature":
        w = np.exp((cos - 1.0) / params.temperature)
    else:  # pragma: no cover - the settings model rejects other values
        raise RerankError(f"unknown edge transform {params.edge!r}")
    np.fill_diagonal(w, 0.0)
    if params.graph == "knn" and params.knn_k < len(w) - 1:
        # keep each node's k strongest edges; an edge survives if either end keeps it
        nearest = np.argsort(-w, axis=1, kind="stable")[:, : params.knn_k]
        keep = np.zeros_like(w, dtype=bool)
        keep[np.arange(len(w))[:, None], nearest] = True
        w = np.where(keep | keep.T, w, 0.0)
    return w


def restart_vector(scores: np.ndarray) -> np.ndarray:
    """p ∝ max(score, 0) (non-finite → 0), normalised to sum 1; uniform when nothing is positive."""
    s = np.asarray(scores, dtype=np.float64)
    s = np.where(np.isfinite(s), np.maximum(s, 0.0), 0.0)
    total = float(s.sum())
    if total <= 0.0:
        return np.full(len(s), 1.0 / max(len(s), 1))
    return s / total


@functools.lru_cache(maxsize=64)
def _complete_graph(n: int):
    """The complete undirected graph on n nodes (igraph, never modified) and the flat indices of its
    edges' cells in an n × n matrix. Candidate pools have a handful of sizes; building the graph
    per query cost more than the PageRank itself."""
    import igraph as ig

    iu, ju = np.triu_indices(n, 1)
    graph = ig.Graph(n=n, edges=np.column_stack([iu, ju]).tolist(), directed=False)
    return graph, iu * n + ju


def personalized_pagerank(weights: np.ndarray, reset: np.ndarray, damping: float) -> np.ndarray:
    """Personalized PageRank of the undirected weighted graph `weights` (igraph, PRPACK).

    Dangling (isolated) nodes restart according to `reset`, as in NetworkX's default.
    """
    n = len(reset)
    if n == 0:
        return np.zeros(0)
    if n == 1:
        return np.ones(1)
    graph, upper = _complete_graph(n)
    w = weights.ravel()[upper]
    if (w < 0.0).any():
        raise RerankError("edge weights must be non-negative")
    # every pair is an edge of the cached complete graph; a 0 weight is no edge (PRPACK skips it)
    pr = graph.personalized_pagerank(
        directed=False, damping=float(damping), reset=reset.tolist(), weights=w.tolist()
    )
    out = np.asarray(pr, dtype=np.float64)
    if out.shape != (n,) or not np.isfinite(out).all():
        raise RerankError("personalized PageRank returned non-finite values")
    return out


def diffusion_scores(vectors: np.ndarray, dense_scores: np.ndarray, params: DiffusionParams) -> np.ndarray:
    """The diffusion score of each candidate (PPR, or PPR / weighted degree when degree-corrected)."""
    w = affinity(vectors, params)
    pr = personalized_pagerank(w, restart_vector(dense_scores), params.damping)
    if params.degree_correct:
        degree = w.sum(axis=1)
        pr = np.where(degree > 0, pr / np.maximum(degree, 1e-12), 0.0)
    return pr


def final_scores(first_stage: np.ndarray, diffusion: np.ndarray, fusion_weight: float) -> np.ndarray:
    """(1 − w)·z(first stage) + w·z(diffusion); w = 1 → the diffusion score itself (paper order)."""
    if fusion_weight >= 1.0:
        return np.asarray(diffusion, dtype=np.float64)
    if fusion_weight <= 0.0:
        return np.asarray(first_stage, dtype=np.float64)
    return (1.0 - fusion_weight) * zscore(first_stage) + fusion_weight * zscore(diffusion)


@dataclass
class RerankOutcome:
    hits: list[Hit]  # top_k in the final order
    candidates: list[Hit]  # the whole pool in first-stage order, with diffusion scores when computed
    ms: float
    notice: str | None = None


def _copy(hit: Hit, **changes: object) -> Hit:
    """A shallow copy with some fields changed (`dataclasses.replace` re-runs `__init__` over every
    field and `copy.copy` goes through `__reduce_ex__`: 70 of those cost more than the diffusion)."""
    out = object.__new__(Hit)
    out.__dict__.update(hit.__dict__)
    out.__dict__.update(changes)
    return out


class DiffusionReranker:
    """Reorders first-stage candidates (`Hit.score` = first-stage score, vectors filled)."""

    def __init__(self, settings: RerankSettings | None = None, params: DiffusionParams | None = None) -> None:
        self.params = params if params is not None else params_for(settings or RerankSettings())

    def rerank(self, candidates: list[Hit], top_k: int) -> RerankOutcome:
        """Top `top_k` candidates in the final order, each a copy with `diffusion_score`, `score`
        (final) and `first_stage_rank` set. Never raises: a failure keeps the first-stage order."""
        t0 = time.perf_counter()
        ranked = [_copy(h, first_stage_rank=i + 1) for i, h in enumerate(candidates)]
        if self.params is None or not ranked:
            return RerankOutcome(ranked[:top_k], ranked, (time.perf_counter() - t0) * 1e3)
        try:
            order, diffusion, final = self.order(ranked)
        except Exception as exc:  # noqa: BLE001 - any failure degrades to the first-stage order
            log.warning("diffusion rerank failed (%s: %s); first-stage order kept", type(exc).__name__, exc)
            return RerankOutcome(ranked[:top_k], ranked, (time.perf_counter() - t0) * 1e3, FALLBACK_NOTICE)
        for i, h in enumerate(ranked):  # the pool carries the diffusion score too (the UI draws it)
            h.diffusion_score = float(diffusion[i])
        out = [_copy(ranked[i], score=float(final[i])) for i in order[:top_k]]
        return RerankOutcome(out, ranked, (time.perf_counter() - t0) * 1e3)

    def order(self, candidates: list[Hit]) -> tuple[list[int], np.ndarray, np.ndarray]:
        """(final order as candidate indices, diffusion scores, final scores). Raises on failure."""
        assert self.params is not None
        if any(h.vector is None for h in candidates):
            raise RerankError("a candidate has no vector")
        vectors = np.asarray([h.vector for h in candidates], dtype=np.float64)
        dense = np.asarray(
            [h.dense_score if h.dense_score is not None else np.nan for h in candidates], dtype=np.float64
        )
        first = np.asarray([h.score for h in candidates], dtype=np.float64)
        diffusion = diffusion_scores(vectors, dense, self.params)
        final = final_scores(first, diffusion, self.params.fusion_weight)
        if not np.isfinite(final).all():
            raise RerankError("final scores are not finite")
        return [int(i) for i in np.argsort(-final, kind="stable")], diffusion, final
