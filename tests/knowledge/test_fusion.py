"""z-score and reciprocal-rank fusion: definitions checked against hand-computed values."""

from __future__ import annotations

import math

import numpy as np
import pytest

from knowledge.fusion import order_by, rrf_fuse, zscore, zscore_fuse


def test_zscore_standardises():
    z = zscore([1.0, 2.0, 3.0])
    sd = math.sqrt(2 / 3)
    assert z == pytest.approx([-1 / sd, 0.0, 1 / sd])
    assert np.mean(z) == pytest.approx(0.0)


def test_zscore_constant_empty_and_nonfinite():
    assert zscore([5.0, 5.0, 5.0]).tolist() == [0.0, 0.0, 0.0]
    assert zscore([]).size == 0
    assert zscore([math.nan, math.nan]).tolist() == [0.0, 0.0]
    z = zscore([3.0, math.nan, 1.0])  # NaN takes the minimum → ties with the lowest, never NaN
    assert np.isfinite(z).all()
    assert z[1] == pytest.approx(z[2]) and z[0] > z[1]


def test_zscore_fuse_weights_bm25_half():
    dense = [0.9, 0.88, 0.7, 0.6, 0.5]
    bm25 = [0.0, 10.0, 0.0, 0.0, 0.0]
    fused = zscore_fuse([dense, bm25], [1.0, 0.5])
    expect = zscore(dense) + 0.5 * zscore(bm25)
    assert fused == pytest.approx(expect)
    # the strong BM25 match overtakes the top dense hit
    assert order_by(fused)[0] == 1


def test_zscore_fuse_rejects_mismatch():
    with pytest.raises(ValueError):
        zscore_fuse([[1.0, 2.0], [1.0]], [1.0, 1.0])
    with pytest.raises(ValueError):
        zscore_fuse([[1.0]], [1.0, 0.5])


def test_rrf_hand_computed():
    fused = rrf_fuse([["a", "b", "c"], ["c", "a"]], k=60)
    assert fused["a"] == pytest.approx(1 / 61 + 1 / 62)
    assert fused["b"] == pytest.approx(1 / 62)
    assert fused["c"] == pytest.approx(1 / 63 + 1 / 61)
    assert order_by(fused) == ["a", "c", "b"]


def test_rrf_duplicates_count_once_and_weights():
    fused = rrf_fuse([["a", "a", "b"]], k=1)
    assert fused == {"a": pytest.approx(1 / 2), "b": pytest.approx(1 / 3)}
    weighted = rrf_fuse([["a"], ["b"]], k=10, weights=[1.0, 2.0])
    assert weighted["b"] == pytest.approx(2 * weighted["a"])
    with pytest.raises(ValueError):
        rrf_fuse([["a"]], k=0)


def test_order_by_is_stable_on_ties():
    assert order_by(np.array([1.0, 2.0, 2.0, math.nan])) == [1, 2, 0, 3]
    assert order_by({"x": 1.0, "y": 1.0, "z": 2.0}, tie_order=["y", "x"]) == ["z", "y", "x"]
