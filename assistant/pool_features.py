"""Scale-free features of the retrieval pool, recorded in the answerability trace (not fitted: they
did not help on the dev sets' fit half). Cosines and BM25 scores differ from one library, language
and embedder to another; these say how the best hit stands out from its own pool instead."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from knowledge.types import Hit


def relative_features(
    pool: Sequence[Hit], dense: list[float], bm25: list[float], q: set[str], seqs: list[list[str]]
) -> dict[str, float]:
    """Scale-free features: how the best hit stands out from the rest of its own pool, not how high
    its score is (cosines and BM25 scores differ from one library, language and embedder to another).

    - `dense_z`, `bm25_z`: the best score's distance above the mean of the next nine, in their spread;
    - `bm25_share`: the best full-text score's share of the top ten's sum;
    - `rank_agree`: 1 / (rank in the dense order of the full-text top hit), 0 without full-text;
    - `cover_idf`: the share of the question's content words the best of the top chunks holds, each
      word weighted by its rarity in the pool (a word in every candidate tells nothing)."""
    rest = dense[1:10]
    dz = (dense[0] - float(np.mean(rest))) / (float(np.std(rest)) + 0.01) if dense and rest else 0.0
    logs = sorted((math.log1p(max(b, 0.0)) for b in bm25), reverse=True)
    brest = logs[1:10]
    bz = (logs[0] - float(np.mean(brest))) / (float(np.std(brest)) + 0.01) if logs and brest and logs[0] > 0 else 0.0
    top10 = sum(logs[:10])
    share = logs[0] / top10 if top10 > 0 else 0.0
    rank_agree = 0.0
    if bm25 and max(bm25) > 0:
        top_bm25 = pool[max(range(len(pool)), key=lambda i: bm25[i])].chunk_id
        order = [h.chunk_id for h in sorted(pool, key=lambda h: -(h.dense_score if h.dense_score is not None else -1e9))]
        rank_agree = 1.0 / (1 + order.index(top_bm25))
    cover_idf = 0.0
    if q and pool:
        texts = [h.chunk_text.lower() for h in pool]  # a stem as a substring: cheap, close enough to count
        weight = {w: math.log(1.0 + len(texts) / (1 + sum(w in t for t in texts))) for w in q}
        total = sum(weight.values())
        cover_idf = max((sum(weight[w] for w in q & set(seq)) / total for seq in seqs), default=0.0) if total else 0.0
    return {"dense_z": float(dz), "bm25_z": float(bz), "bm25_share": float(share), "rank_agree": float(rank_agree),
            "cover_idf": float(cover_idf)}
