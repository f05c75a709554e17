"""Choose the first stage (pool, fusion, weights, depth) and the rerank on all seven dev sets.

    OMP_WAIT_POLICY=PASSIVE nice -n 10 python -m bench.fusion_sweep [--dataset NAME ...] [--json OUT]

Each set is indexed through Hark's Ingestor + ChunkStore and searched once per query at depth 100
(`knowledge.evaluate.collect_cached`, shared with `launch.py eval retrieval`); every configuration is
then ranked by the production code (`knowledge.retrieve.build_pool`, `knowledge.rerank`) through
`knowledge.evaluate.rank_documents`, so the numbers are those `Retriever` gives.

Rule. The queries of each set are split in two halves by position (even: "select", odd: "held").
On the select half a configuration is admissible when on EVERY set its nDCG@10 ≥ max(BM25, dense)
− 0.01; among the admissible ones the best weighted mean wins. The four XQuAD views (en, en_noisy,
de, de_en) share their questions, so together they weigh as one set: the mean is over nq_oracle,
medquad_liveqa, covid_faq and the mean of the four views (each view 1/4). If nothing is admissible,
the configuration with the smallest worst shortfall is named instead. The held half is reported
for the winner and the baselines (the table a user should believe).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

from bench.common import EVAL, load_average
from bench.rerank_sweep import Scorer
from knowledge.beir import doc_id_from_path
from knowledge.evaluate import OLD_DEFAULT, XQUAD_VIEWS, Method, rank_documents, weighted_mean
from knowledge.fusion import zscore_fuse
from knowledge.rerank import PAPER, DiffusionParams, diffusion_scores, final_scores
from knowledge.settings import RetrievalSettings

SETS = ["nq_oracle", "xquad_en", "xquad_en_noisy", "xquad_de", "xquad_de_en", "medquad_liveqa", "covid_faq"]
VIEWS = XQUAD_VIEWS
MARGIN = 0.01
DEPTH_N = 100


def first_stages() -> list[Method]:
    out = [Method("bm25", "bm25"), Method("dense", "dense"), OLD_DEFAULT]
    for n in (20, 50, 100):
        for w in (0.5, 1.0, 1.5, 2.0, 3.0):
            out.append(Method(f"union-z/w{w}/n{n}", "hybrid", "zscore", pool="union", bm25_weight=w, candidates=n))
        for k in (10, 60):
            for w in (0.5, 1.0, 2.0):
                out.append(
                    Method(f"union-rrf/k{k}/w{w}/n{n}", "hybrid", "rrf", pool="union", bm25_weight=w, rrf_k=k, candidates=n)
                )
    return out


def with_rerank(base: Method) -> list[Method]:
    variants = {
        "paper": PAPER,
        "d0.85/w0.2": DiffusionParams(fusion_weight=0.2),
        "knn10/d0.5/w0.2": DiffusionParams(damping=0.5, graph="knn", fusion_weight=0.2),
    }
    return [
        Method(f"{base.name}+{k}", base.first_stage, base.fusion, p, base.pool, base.bm25_weight, base.rrf_k, base.candidates)
        for k, p in variants.items()
    ]


def collected(name: str, work: Path, embedder):
    from knowledge.beir import load_beir
    from knowledge.evaluate import collect_cached, index_dataset
    from knowledge.settings import IngestSettings, StoreSettings

    ds = load_beir(Path(name) if "/" in name else EVAL / name)
    store = index_dataset(ds, embedder, StoreSettings(), IngestSettings(), work)
    return ds, collect_cached(ds, store, embedder, RetrievalSettings(candidates=DEPTH_N), work)


class Prepared:
    """One query's union at depth 100 as arrays, in `build_pool`'s member order (dense list, then
    the full-text-only hits in full-text order); smaller depths are masks of it."""

    def __init__(self, qr, canonical: dict[str, str]) -> None:
        from knowledge.retrieve import union

        members = union(qr.results, qr.vector, DEPTH_N)
        self.qid = qr.qid
        self.docs = np.array([canonical.get(d, d) for d in (doc_id_from_path(h.source_path) for h in members)])
        self.dense = np.array([np.nan if h.dense_score is None else h.dense_score for h in members])
        self.bm25 = np.array([h.bm25_score or 0.0 for h in members], dtype=np.float64)
        dpos = {h.chunk_id: i for i, h in enumerate(qr.results.dense)}
        fpos = {h.chunk_id: i for i, h in enumerate(qr.results.fts)}
        big = 10**9
        self.drank = np.array([dpos.get(h.chunk_id, big) for h in members])
        self.frank = np.array([fpos.get(h.chunk_id, big) for h in members])
        self.fts_docs = [canonical.get(d, d) for d in (doc_id_from_path(h.source_path) for h in qr.results.fts)]
        self._vec = None
        self._members = members

    def vec(self, idx: np.ndarray) -> np.ndarray:
        if self._vec is None:
            self._vec = np.array([np.asarray(h.vector, dtype=np.float64) for h in self._members])
        return self._vec[idx]

    def mask(self, m: Method) -> np.ndarray:
        n = m.candidates or DEPTH_N
        if m.first_stage == "dense" or (m.pool == "dense" and m.fusion == "zscore"):
            return np.flatnonzero(self.drank < n)
        return np.flatnonzero((self.drank < n) | (self.frank < n))

    def first_stage(self, m: Method, idx: np.ndarray) -> np.ndarray:
        if m.first_stage == "dense":
            return self.dense[idx]
        if m.fusion == "zscore":
            return zscore_fuse([self.dense[idx], self.bm25[idx]], [1.0, m.bm25_weight])
        n = m.candidates or DEPTH_N
        d, f = self.drank[idx], self.frank[idx]
        return np.where(d < n, 1.0 / (m.rrf_k + d + 1), 0.0) + np.where(f < n, m.bm25_weight / (m.rrf_k + f + 1), 0.0)

    def ranking(self, m: Method) -> list[str]:
        if m.first_stage == "bm25":
            return _unique(self.fts_docs)
        idx = self.mask(m)
        if not len(idx):
            return []
        first = self.first_stage(m, idx)
        if m.fusion == "rrf" and m.pool == "dense":  # the fused list cut to n
            keep = np.argsort(-first, kind="stable")[: m.candidates or DEPTH_N]
            idx, first = idx[np.sort(keep)], first[np.sort(keep)]
        final = first
        if m.diffusion is not None:
            diff = diffusion_scores(self.vec(idx), self.dense[idx], m.diffusion)
            final = final_scores(first, diff, m.diffusion.fusion_weight)
        order = np.argsort(-np.where(np.isfinite(final), final, -np.inf), kind="stable")
        return _unique(self.docs[idx][order])


def _unique(docs, depth: int = 20) -> list[str]:
    out: list[str] = []
    for d in docs:
        if d not in out:
            out.append(str(d))
            if len(out) == depth:
                break
    return out


def check_with_production(prepared: list[Prepared], results, canonical, methods: list[Method], k: int = 150) -> None:
    """The array version ranks exactly as `rank_documents` (production `build_pool` + rerank)."""
    base = RetrievalSettings(candidates=DEPTH_N)
    for m in methods:
        for p, qr in zip(prepared[:k], results[:k], strict=True):
            ref = rank_documents(qr, m, base, DEPTH_N, canonical)
            assert p.ranking(m) == ref, (m.name, qr.qid, p.ranking(m)[:5], ref[:5])


def score(methods: list[Method], data: dict) -> dict[str, dict[str, dict[str, float]]]:
    """scores[method][set] = {"select": nDCG@10, "held": nDCG@10}."""
    out: dict[str, dict[str, dict[str, float]]] = {m.name: {} for m in methods}
    for name, (prepared, scorer) in data.items():
        for m in methods:
            out[m.name][name] = scorer({p.qid: p.ranking(m) for p in prepared})
    return out


def judge(scores: dict, half: str) -> dict[str, dict]:
    """Per method: the weighted mean, the worst margin over the floor max(BM25, dense) − 0.01."""
    sets = list(scores["bm25"])
    floor = {s: max(scores["bm25"][s][half], scores["dense"][s][half]) - MARGIN for s in sets}
    out = {}
    for name, per in scores.items():
        vals = {s: per[s][half] for s in sets}
        margins = {s: vals[s] - floor[s] for s in sets}
        out[name] = {"mean": weighted_mean(vals), "worst": min(margins.values()), "margins": margins}
    return out


def pick(verdict: dict[str, dict], exclude: set[str]) -> tuple[str, bool]:
    cands = {k: v for k, v in verdict.items() if k not in exclude}
    ok = [k for k, v in cands.items() if v["worst"] >= 0]
    if ok:
        return max(ok, key=lambda k: cands[k]["mean"]), True
    return max(cands, key=lambda k: cands[k]["worst"]), False


def print_table(title: str, names: list[str], scores: dict, half: str, sets: list[str]) -> None:
    verdict = judge(scores, half)
    short = {s: s.replace("xquad_", "xq_").replace("_liveqa", "").replace("_oracle", "") for s in sets}
    print(f"\n{title} ({half} half, nDCG@10; worst = min over sets of nDCG − (max(BM25, dense) − {MARGIN}))")
    print(f"{'method':<34}" + "".join(f"{short[s]:>10}" for s in sets) + f"{'w.mean':>9}{'worst':>9}")
    for n in names:
        cells = "".join(f"{scores[n][s][half]:>10.4f}" for s in sets)
        print(f"{n:<34}{cells}{verdict[n]['mean']:>9.4f}{verdict[n]['worst']:>+9.4f}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--dataset", action="append", default=None, help=f"set names or BEIR folders (default: {', '.join(SETS)})"
    )
    ap.add_argument("--work-dir", default=os.environ.get("HARK_EVAL_DIR", "/tmp/hark-eval"))
    ap.add_argument("--top", type=int, default=15)
    ap.add_argument("--json", default=None)
    ap.add_argument("--stages", default="", help="only first stages whose name contains one of these (comma-separated)")
    args = ap.parse_args()
    from models.embedder import MiniLMEmbedder
    from models.settings import EmbedderSettings

    print(f"load average at start: {load_average():.1f} on {os.cpu_count()} cores")
    emb = MiniLMEmbedder(EmbedderSettings(backend="minilm"))
    work = Path(args.work_dir)
    work.mkdir(parents=True, exist_ok=True)
    sets = args.dataset or SETS
    data = {}
    for name in sets:
        ds, results = collected(name, work, emb)
        canonical = ds.canonical_ids()
        prepared = [Prepared(qr, canonical) for qr in results]
        checks = [OLD_DEFAULT, first_stages()[4], first_stages()[10], with_rerank(first_stages()[4])[0]]
        checks.append(Method("rrf-cut", "hybrid", "rrf", pool="dense", bm25_weight=1.0, rrf_k=60, candidates=50))
        check_with_production(prepared, results, canonical, checks, k=40)
        del results
        data[ds.name] = (prepared, Scorer(ds.canonical_qrels(), [p.qid for p in prepared]))
    t0 = time.perf_counter()
    stages = first_stages()
    if args.stages:
        keep = args.stages.split(",")
        stages = [m for m in stages if m.name in {"bm25", "dense", OLD_DEFAULT.name} or any(k in m.name for k in keep)]
    scores = score(stages, data)
    verdict = judge(scores, "select")
    baselines = {"bm25", "dense", OLD_DEFAULT.name}
    ranked = sorted((k for k in verdict if k not in baselines), key=lambda k: (verdict[k]["worst"] < 0, -verdict[k]["mean"]))
    # the diffusion variants on the three best first stages (and on the best of each fusion)
    best_rrf = next(k for k in ranked if "rrf" in k)
    best_z = next(k for k in ranked if "union-z" in k)
    tops = list(dict.fromkeys([ranked[0], best_rrf, best_z]))
    by_name = {m.name: m for m in stages}
    reranked = [v for t in tops for v in with_rerank(by_name[t])]
    scores.update(score(reranked, data))
    print(f"{len(scores)} configurations in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    verdict = judge(scores, "select")
    winner, admissible = pick(verdict, baselines)
    order = sorted((k for k in verdict if k not in baselines), key=lambda k: (verdict[k]["worst"] < 0, -verdict[k]["mean"]))
    print_table("Sweep, admissible first, by weighted mean", [*sorted(baselines), *order[: args.top]], scores, "select", list(data))
    rr = [m.name for m in reranked]
    print_table("Diffusion rerank on the best first stages", [*tops, *rr], scores, "select", list(data))
    print(f"\nchosen on the select half: {winner} ({'admissible' if admissible else 'NOT admissible: smallest shortfall'})")
    final = ["bm25", "dense", OLD_DEFAULT.name, winner, best_rrf, f"{winner.split('+')[0]}+paper"]
    final = [f for f in dict.fromkeys(final) if f in scores]
    for half in ("select", "held"):
        print_table("Final", final, scores, half, list(data))
    if args.json:
        Path(args.json).write_text(json.dumps({"scores": scores, "winner": winner}, indent=1) + "\n")
    print(f"load average at end: {load_average():.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
