"""Diffusion rerank: equality with NetworkX's personalized PageRank, variants, edge cases, fallback."""

from __future__ import annotations

import logging
import math

import networkx as nx
import numpy as np
import pytest

from knowledge.rerank import (
    FALLBACK_NOTICE,
    PAPER,
    DiffusionParams,
    DiffusionReranker,
    RerankError,
    affinity,
    diffusion_scores,
    personalized_pagerank,
    restart_vector,
)
from knowledge.settings import RerankSettings
from knowledge.types import Hit


def _unit(rng, n, dim=24):
    v = rng.normal(size=(n, dim))
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def _hits(vectors, scores):
    return [
        Hit(
            chunk_id=f"c{i}",
            source_path=f"doc{i}.txt",
            title="",
            chunk_text=f"text {i}",
            score=float(s),
            dense_score=float(s),
            vector=None if v is None else list(map(float, v)),
        )
        for i, (v, s) in enumerate(zip(vectors, scores, strict=True))
    ]


def _networkx_ppr(weights, reset, damping):
    """The paper's reference implementation: NetworkX pagerank on the same weighted graph."""
    n = len(reset)
    g = nx.Graph()
    g.add_nodes_from(range(n))
    for i in range(n):
        for j in range(i + 1, n):
            if weights[i, j] > 0:
                g.add_edge(i, j, weight=weights[i, j])
    pr = nx.pagerank(
        g, alpha=damping, personalization=dict(enumerate(reset)), weight="weight", tol=1e-13, max_iter=100000
    )
    return np.array([pr[i] for i in range(n)])


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize(
    "params",
    [
        PAPER,
        DiffusionParams(damping=0.5, graph="knn", knn_k=3),
        DiffusionParams(damping=0.3, edge="temperature", temperature=0.1),
        DiffusionParams(damping=0.95, edge="shifted"),
    ],
    ids=["paper", "knn3-d0.5", "temp-d0.3", "shifted-d0.95"],
)
def test_same_ranking_as_networkx(seed, params):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 60))
    vectors = _unit(rng, n)
    scores = rng.normal(size=n)  # some negative: clamped in the restart vector
    w = affinity(vectors, params)
    reset = restart_vector(scores)
    ours = personalized_pagerank(w, reset, params.damping)
    ref = _networkx_ppr(w, reset, params.damping)
    assert ours.sum() == pytest.approx(1.0)
    np.testing.assert_allclose(ours, ref, atol=1e-9)
    assert np.argsort(-ours, kind="stable").tolist() == np.argsort(-ref, kind="stable").tolist()


def test_isolated_node_zero_weight_edges_match_networkx_missing_edges():
    # node 3 points away from everyone: every edge to it is clamped to 0. The complete igraph graph
    # carries those edges with weight 0; the result must equal NetworkX, which has no such edges
    # (node 3 is dangling and restarts by the reset vector).
    v = np.array([[1.0, 0.1], [0.9, 0.3], [0.8, 0.5], [-1.0, -0.2]])
    w = affinity(v, PAPER)
    assert np.all(w[3] == 0.0)
    reset = restart_vector(np.array([0.9, 0.5, 0.2, 0.95]))
    for n in (4, 4):  # the second call reuses the cached graph
        ours = personalized_pagerank(w[:n, :n], reset, 0.85)
        np.testing.assert_allclose(ours, _networkx_ppr(w, reset, 0.85), atol=1e-9)


def test_negative_edge_weights_are_refused():
    w = np.array([[0.0, -0.5], [-0.5, 0.0]])
    with pytest.raises(RerankError):
        personalized_pagerank(w, np.array([0.5, 0.5]), 0.85)


def test_paper_graph_is_complete_clamped_without_self_loops():
    v = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0], [0.6, 0.8]])
    w = affinity(v, PAPER)
    assert np.allclose(np.diag(w), 0.0)
    assert np.allclose(w, w.T)
    assert w[0, 2] == 0.0  # cos = −1, clamped
    assert w[0, 3] == pytest.approx(0.6)
    shifted = affinity(v, DiffusionParams(edge="shifted"))
    assert shifted[0, 2] == pytest.approx(0.0) and shifted[0, 1] == pytest.approx(0.5)


def test_knn_graph_keeps_k_strongest_per_node():
    rng = np.random.default_rng(3)
    v = _unit(rng, 12)
    full = affinity(v, DiffusionParams(edge="shifted"))
    knn = affinity(v, DiffusionParams(edge="shifted", graph="knn", knn_k=2))
    assert np.allclose(knn, knn.T)
    for i in range(12):
        strongest = set(np.argsort(-full[i])[:2].tolist())
        assert strongest <= set(np.nonzero(knn[i])[0].tolist())
    assert (knn > 0).sum() < (full > 0).sum()


def test_restart_vector_clamps_and_falls_back_to_uniform():
    assert restart_vector(np.array([0.5, -1.0, 1.5])).tolist() == pytest.approx([0.25, 0.0, 0.75])
    assert restart_vector(np.zeros(4)).tolist() == pytest.approx([0.25] * 4)
    assert restart_vector(np.array([-0.2, -0.1])).tolist() == pytest.approx([0.5, 0.5])
    assert restart_vector(np.array([math.nan, 1.0])).tolist() == pytest.approx([0.0, 1.0])


def test_paper_mode_promotes_a_cluster_over_an_isolated_look_alike():
    # c0 is the best dense match but points away from the other relevant chunks c1..c3
    cluster = np.array([0.0, 1.0, 0.0])
    vectors = [np.array([1.0, 0.0, 0.0])] + [cluster + 0.05 * k * np.array([1, 0, 1]) for k in range(3)]
    hits = _hits(vectors, [0.80, 0.75, 0.74, 0.73])
    out = DiffusionReranker(RerankSettings(mode="paper")).rerank(hits, top_k=4)
    assert out.notice is None
    assert [h.chunk_id for h in out.hits][-1] == "c0"
    assert out.hits[-1].first_stage_rank == 1
    assert all(h.diffusion_score is not None for h in out.candidates)


def test_degree_correction_removes_the_centrality_bias():
    rng = np.random.default_rng(7)
    v = _unit(rng, 30, dim=8)
    params = DiffusionParams(edge="shifted")
    degree = affinity(v, params).sum(axis=1)
    # uniform restart: raw PPR is almost pure centrality (weighted degree)
    raw = diffusion_scores(v, np.full(30, 0.5), params)
    assert np.corrcoef(raw, degree)[0, 1] > 0.99
    # restart ∝ degree is the stationary distribution: raw PPR returns it, the corrected score is flat
    raw_deg = diffusion_scores(v, degree, params)
    assert raw_deg == pytest.approx(degree / degree.sum(), rel=1e-6)
    corrected = diffusion_scores(v, degree, DiffusionParams(edge="shifted", degree_correct=True))
    assert np.ptp(corrected) < 1e-6 * np.mean(corrected)


def test_fusion_weight_zero_keeps_first_stage_order():
    rng = np.random.default_rng(1)
    hits = _hits(_unit(rng, 10), np.linspace(0.9, 0.5, 10))
    out = DiffusionReranker(RerankSettings(mode="custom", fusion_weight=0.0)).rerank(hits, top_k=10)
    assert [h.chunk_id for h in out.hits] == [h.chunk_id for h in hits]
    assert [h.first_stage_rank for h in out.hits] == list(range(1, 11))


def test_one_candidate_and_fewer_than_k():
    rng = np.random.default_rng(2)
    one = DiffusionReranker(RerankSettings(mode="paper")).rerank(_hits(_unit(rng, 1), [0.4]), top_k=20)
    assert [h.chunk_id for h in one.hits] == ["c0"] and one.hits[0].diffusion_score == pytest.approx(1.0)
    three = DiffusionReranker(RerankSettings(mode="paper")).rerank(
        _hits(_unit(rng, 3), [0.9, 0.8, 0.7]), top_k=20
    )
    assert len(three.hits) == 3 and three.notice is None
    assert sum(h.diffusion_score for h in three.hits) == pytest.approx(1.0)
    assert DiffusionReranker(RerankSettings(mode="paper")).rerank([], top_k=5).hits == []


def test_all_zero_or_negative_scores_restart_uniformly():
    rng = np.random.default_rng(4)
    v = _unit(rng, 8)
    for scores in (np.zeros(8), -np.linspace(0.1, 0.8, 8)):
        out = DiffusionReranker(RerankSettings(mode="paper")).rerank(_hits(v, scores), top_k=8)
        assert out.notice is None
        pr = personalized_pagerank(affinity(v, PAPER), np.full(8, 1 / 8), 0.85)
        got = {h.chunk_id: h.diffusion_score for h in out.hits}
        assert [got[f"c{i}"] for i in range(8)] == pytest.approx(pr.tolist())


def test_duplicate_vectors_are_fine():
    rng = np.random.default_rng(5)
    base = _unit(rng, 4)
    vectors = [base[0], base[0], base[1], base[2], base[3], base[3]]
    out = DiffusionReranker(RerankSettings(mode="paper")).rerank(
        _hits(vectors, [0.9, 0.9, 0.5, 0.4, 0.3, 0.3]), 6
    )
    assert out.notice is None
    d = {h.chunk_id: h.diffusion_score for h in out.hits}
    assert d["c0"] == pytest.approx(d["c1"]) and d["c4"] == pytest.approx(d["c5"])


def test_nan_vector_or_missing_vector_falls_back_to_first_stage(caplog):
    rng = np.random.default_rng(6)
    v = _unit(rng, 5)
    v[2, 3] = math.nan
    hits = _hits(v, [0.9, 0.8, 0.7, 0.6, 0.5])
    with caplog.at_level(logging.WARNING, logger="knowledge.rerank"):
        out = DiffusionReranker(RerankSettings(mode="paper")).rerank(hits, top_k=3)
    assert out.notice == FALLBACK_NOTICE
    assert [h.chunk_id for h in out.hits] == ["c0", "c1", "c2"]
    assert "first-stage order kept" in caplog.text
    missing = _hits([*_unit(rng, 2), None], [0.9, 0.8, 0.7])
    out = DiffusionReranker(RerankSettings(mode="paper")).rerank(missing, top_k=3)
    assert out.notice == FALLBACK_NOTICE and [h.chunk_id for h in out.hits] == ["c0", "c1", "c2"]


def test_nan_dense_score_gets_no_restart_mass():
    rng = np.random.default_rng(8)
    hits = _hits(_unit(rng, 4), [0.9, math.nan, 0.7, 0.6])
    hits[1].score = 0.8
    out = DiffusionReranker(RerankSettings(mode="paper")).rerank(hits, top_k=4)
    assert out.notice is None and all(math.isfinite(h.score) for h in out.hits)


def test_igraph_failure_falls_back(monkeypatch):
    import igraph

    def boom(*a, **k):
        raise igraph.InternalError("simulated")

    monkeypatch.setattr(igraph.Graph, "personalized_pagerank", boom)
    rng = np.random.default_rng(9)
    hits = _hits(_unit(rng, 6), np.linspace(0.9, 0.4, 6))
    out = DiffusionReranker(RerankSettings(mode="custom", fusion_weight=0.5)).rerank(hits, top_k=4)
    assert out.notice == FALLBACK_NOTICE
    assert [h.chunk_id for h in out.hits] == ["c0", "c1", "c2", "c3"]
    assert [h.score for h in out.hits] == pytest.approx([0.9, 0.8, 0.7, 0.6])


def test_mode_off_is_identity():
    rng = np.random.default_rng(10)
    hits = _hits(_unit(rng, 5), [0.5, 0.4, 0.3, 0.2, 0.1])
    out = DiffusionReranker(RerankSettings(mode="off")).rerank(hits, top_k=2)
    assert [h.chunk_id for h in out.hits] == ["c0", "c1"] and out.hits[0].diffusion_score is None
