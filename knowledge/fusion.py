"""Score fusion of ranked lists: z-score fusion and reciprocal-rank fusion (RRF).

Pure numpy, no I/O. Both functions are total: empty input gives empty output, constant or
non-finite scores never produce NaN (a constant score column carries no evidence and becomes 0).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np


def zscore(values: Sequence[float] | np.ndarray, missing: float | None = None) -> np.ndarray:
    """Standardise `values` to mean 0, standard deviation 1 (population).

    Non-finite entries are replaced by `missing` (default: the minimum of the finite values) before
    standardising, so a candidate without a score sorts last rather than poisoning the whole pool.
    A constant (or empty, or all-non-finite) column returns zeros.
    """
    x = np.asarray(values, dtype=np.float64).copy()
    if x.size == 0:
        return x
    finite = np.isfinite(x)
    if not finite.any():
        return np.zeros_like(x)
    fill = float(np.min(x[finite])) if missing is None else float(missing)
    x[~finite] = fill
    sd = float(np.std(x))
    if not np.isfinite(sd) or sd < 1e-12:
        return np.zeros_like(x)
    return (x - float(np.mean(x))) / sd


def zscore_fuse(columns: Sequence[Sequence[float] | np.ndarray], weights: Sequence[float]) -> np.ndarray:
    """Σ_j weights[j] · z(columns[j]); all columns score the same items in the same order."""
    if len(columns) != len(weights):
        raise ValueError("one weight per score column")
    if not columns:
        return np.zeros(0)
    n = len(columns[0])
    out = np.zeros(n, dtype=np.float64)
    for col, w in zip(columns, weights, strict=True):
        if len(col) != n:
            raise ValueError("score columns differ in length")
        if w:
            out += float(w) * zscore(col)
    return out


def rrf_fuse(
    rankings: Sequence[Sequence[str]], k: int = 60, weights: Sequence[float] | None = None
) -> dict[str, float]:
    """Reciprocal-rank fusion (Cormack et al. 2009): score(d) = Σ_lists w / (k + rank(d)), ranks 1-based.

    Returns the fused score per item; items absent from a list get nothing from it. Duplicate items
    within one list count at their best rank only.
    """
    if k < 1:
        raise ValueError("rrf k must be ≥ 1")
    ws = [1.0] * len(rankings) if weights is None else [float(w) for w in weights]
    if len(ws) != len(rankings):
        raise ValueError("one weight per ranking")
    fused: dict[str, float] = {}
    for ranking, w in zip(rankings, ws, strict=True):
        seen: set[str] = set()
        rank = 0
        for item in ranking:
            if item in seen:
                continue
            seen.add(item)
            rank += 1
            fused[item] = fused.get(item, 0.0) + w / (k + rank)
    return fused


def order_by(scores: Mapping[str, float] | np.ndarray, tie_order: Sequence[str] | None = None) -> list:
    """Indices (array input) or keys (mapping input) sorted by descending score, stable on ties.

    For a mapping, ties keep the order of `tie_order` (then insertion order).
    """
    if isinstance(scores, Mapping):
        pos: dict[str, int] = {}
        for k in [*(tie_order or ()), *scores]:
            if k in scores and k not in pos:
                pos[k] = len(pos)
        keys = list(pos)
        return sorted(keys, key=lambda k: (-scores[k], pos[k]))
    arr = np.asarray(scores, dtype=np.float64)
    arr = np.where(np.isfinite(arr), arr, -np.inf)
    return [int(i) for i in np.argsort(-arr, kind="stable")]
