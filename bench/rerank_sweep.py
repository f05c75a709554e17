"""The damping / variant sweep of the diffusion rerank on the BEIR dev sets (nDCG@10, ranx).

Each dataset is indexed through Hark's Ingestor + ChunkStore (cached) and searched once per query
(`knowledge.evaluate.collect`, cached as a pickle next to the index). Every configuration then
reorders the same dense top-50 pool with the production functions (`knowledge.rerank`,
`knowledge.fusion`): graph (complete, kNN), edge transform, damping, degree correction, and fusion
weight w of z(diffusion) with z(first stage), for two first stages: dense, and hybrid
(z(dense) + 0.5·z(bm25) over the same pool). The restart vector is always the dense cosine.

To keep the choice honest the queries of each set are split in two halves (even / odd position):
configurations are ranked on the "select" half and also reported on the "held" half.

    python -m bench.rerank_sweep [--dataset DIR ...] [--work-dir DIR] [--top 25] [--json OUT]
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
import time
from dataclasses import asdict
from pathlib import Path

import numpy as np

from bench.common import EVAL
from knowledge.beir import doc_id_from_path, load_beir
from knowledge.fusion import zscore
from knowledge.rerank import DiffusionParams, affinity, personalized_pagerank, restart_vector

DAMPINGS = [0.1, 0.3, 0.5, 0.85]
GRAPHS = [("complete", 0), ("knn", 10)]
EDGES = [("cosine", 0.0), ("shifted", 0.0), ("temperature", 0.1)]
WEIGHTS = [0.1, 0.2, 0.3, 1.0]
BM25_WEIGHT = 0.5


def collected(dataset_dir: Path, work_dir: Path, candidates: int):
    """(dataset, per-query search results) through Hark's own store; shared cache with the CLI eval."""
    from knowledge.evaluate import collect_cached, index_dataset
    from knowledge.settings import IngestSettings, RetrievalSettings, StoreSettings
    from models.embedder import MiniLMEmbedder
    from models.settings import EmbedderSettings

    ds = load_beir(dataset_dir)
    emb = MiniLMEmbedder(EmbedderSettings(backend="minilm"))
    store = index_dataset(ds, emb, StoreSettings(), IngestSettings(), work_dir)
    return ds, collect_cached(ds, store, emb, RetrievalSettings(candidates=candidates), work_dir)


def prepare(results, canonical: dict[str, str]) -> list[dict]:
    """Per query: pool doc ids (canonical), vectors, dense and hybrid first-stage scores (dense order)."""
    out = []
    for qr in results:
        pool = qr.results.dense
        if not pool:
            out.append({"qid": qr.qid, "docs": [], "vec": np.zeros((0, 1)), "dense": np.zeros(0)})
            continue
        dense = np.array([h.dense_score for h in pool], dtype=np.float64)
        bm25 = np.array([qr.results.pool_bm25.get(h.chunk_id, 0.0) for h in pool], dtype=np.float64)
        out.append(
            {
                "qid": qr.qid,
                "docs": [canonical.get(d, d) for d in (doc_id_from_path(h.source_path) for h in pool)],
                "vec": np.array([h.vector for h in pool], dtype=np.float64),
                "dense": dense,
                "hybrid": zscore(dense) + BM25_WEIGHT * zscore(bm25),
            }
        )
    return out


def ranking(docs: list[str], scores: np.ndarray, depth: int = 20) -> list[str]:
    seen: list[str] = []
    for i in np.argsort(-scores, kind="stable"):
        if docs[i] not in seen:
            seen.append(docs[i])
            if len(seen) == depth:
                break
    return seen


def ndcg10(ranked: list[str], rels: dict[str, int]) -> float:
    """nDCG@10 with linear gains (ranx's default "ndcg", as used for the tables)."""
    dcg = sum(rels.get(d, 0) / np.log2(i + 2) for i, d in enumerate(ranked[:10]))
    ideal = sorted(rels.values(), reverse=True)[:10]
    idcg = sum(r / np.log2(i + 2) for i, r in enumerate(ideal) if r > 0)
    return float(dcg / idcg) if idcg > 0 else 0.0


class Scorer:
    """Mean nDCG@10 on two fixed halves of the queries. A direct formula (hundreds of runs); the
    baseline rows are checked against ranx once, so both agree."""

    def __init__(self, qrels: dict[str, dict[str, int]], qids: list[str]) -> None:
        self.qrels = qrels
        self.halves = {"select": qids[0::2], "held": qids[1::2]}

    def __call__(self, run: dict[str, list[str]]) -> dict[str, float]:
        return {
            h: float(np.mean([ndcg10(run[q], self.qrels[q]) for q in ids])) for h, ids in self.halves.items()
        }

    def check_with_ranx(self, run: dict[str, list[str]]) -> None:
        from ranx import Qrels, Run, evaluate

        for half, ids in self.halves.items():
            scored = {
                q: ({d: float(len(run[q]) - i) for i, d in enumerate(run[q])} or {"__none__": 0.0})
                for q in ids
            }
            ref = float(
                evaluate(Qrels({q: self.qrels[q] for q in ids}), Run(scored), "ndcg@10", make_comparable=True)
            )
            assert abs(ref - self(run)[half]) < 1e-6, (half, ref, self(run)[half])


def sweep_dataset(ds, prepared: list[dict]) -> list[dict]:
    scorer = Scorer(ds.canonical_qrels(), [p["qid"] for p in prepared])
    rows = []
    base = {
        stage: {p["qid"]: ranking(p["docs"], p[stage]) if p["docs"] else [] for p in prepared}
        for stage in ("dense", "hybrid")
    }
    for stage, run in base.items():
        scorer.check_with_ranx(run)
        rows.append({"stage": stage, "config": "none", "w": 0.0, **scorer(run)})
    for (graph, k), (edge, temp) in itertools.product(GRAPHS, EDGES):
        params = DiffusionParams(graph=graph, knn_k=max(k, 1), edge=edge, temperature=temp or 0.05)
        # per query: affinity once, PPR per damping
        diff: dict[tuple[float, bool], list[np.ndarray]] = {
            (d, c): [] for d in DAMPINGS for c in (False, True)
        }
        for p in prepared:
            if not p["docs"]:
                for key in diff:
                    diff[key].append(np.zeros(0))
                continue
            w = affinity(p["vec"], params)
            degree = w.sum(axis=1)
            reset = restart_vector(p["dense"])
            for d in DAMPINGS:
                pr = personalized_pagerank(w, reset, d)
                diff[(d, False)].append(pr)
                diff[(d, True)].append(np.where(degree > 0, pr / np.maximum(degree, 1e-12), 0.0))
        for (d, corr), scores in diff.items():
            name = f"{graph}{k or ''}/{edge}{temp or ''}/d{d}" + ("/degcorr" if corr else "")
            for stage, wt in itertools.product(("dense", "hybrid"), WEIGHTS):
                run = {}
                for p, s in zip(prepared, scores, strict=True):
                    if not p["docs"]:
                        run[p["qid"]] = []
                        continue
                    final = s if wt >= 1.0 else (1 - wt) * zscore(p[stage]) + wt * zscore(s)
                    run[p["qid"]] = ranking(p["docs"], final)
                rows.append({"stage": stage, "config": name, "w": wt, **scorer(run)})
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", action="append", default=None)
    ap.add_argument("--work-dir", default=os.environ.get("HARK_EVAL_DIR", "/tmp/hark-eval"))
    ap.add_argument("--candidates", type=int, default=50)
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--json", default=None)
    ap.add_argument("--dampings", default=None, help="e.g. 0.1,0.5,0.85 (default: the full grid)")
    ap.add_argument("--weights", default=None, help="fusion weights, e.g. 0.2,0.3,1.0")
    ap.add_argument(
        "--complete-cosine-only", action="store_true", help="only the complete graph, cosine edges"
    )
    args = ap.parse_args()
    global DAMPINGS, WEIGHTS, GRAPHS, EDGES
    if args.dampings:
        DAMPINGS = [float(x) for x in args.dampings.split(",")]
    if args.weights:
        WEIGHTS = [float(x) for x in args.weights.split(",")]
    if args.complete_cosine_only:
        GRAPHS, EDGES = [("complete", 0)], [("cosine", 0.0)]
    work = Path(args.work_dir)
    work.mkdir(parents=True, exist_ok=True)
    datasets = args.dataset or [str(EVAL / "nq_oracle"), str(EVAL / "xquad_en")]
    per_set: dict[str, dict[tuple, dict]] = {}
    for d in datasets:
        t0 = time.perf_counter()
        ds, results = collected(Path(d), work, args.candidates)
        rows = sweep_dataset(ds, prepare(results, ds.canonical_ids()))
        per_set[ds.name] = {(r["stage"], r["config"], r["w"]): r for r in rows}
        print(f"{ds.name}: {len(rows)} configurations in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    names = list(per_set)
    keys = list(per_set[names[0]])
    table = []
    for key in keys:
        row = {"stage": key[0], "config": key[1], "w": key[2]}
        for n in names:
            base = per_set[n][(key[0], "none", 0.0)]
            row[f"{n}.select"] = per_set[n][key]["select"] - base["select"]
            row[f"{n}.held"] = per_set[n][key]["held"] - base["held"]
            row[f"{n}.all"] = (per_set[n][key]["select"] + per_set[n][key]["held"]) / 2
        row["select_mean"] = float(np.mean([row[f"{n}.select"] for n in names]))
        row["select_min"] = float(np.min([row[f"{n}.select"] for n in names]))
        table.append(row)
    table.sort(key=lambda r: -r["select_mean"])
    cols = [f"{n}.{h}" for n in names for h in ("select", "held")]
    print("Δ nDCG@10 against the same first stage without diffusion (select half / held half)")
    print(f"{'stage':<7} {'config':<40} {'w':>5} " + " ".join(f"{c:>17}" for c in cols) + f" {'sel.mean':>9}")
    show = table[: args.top] + [r for r in table if r["config"] == "complete/cosine/d0.85" and r["w"] == 1.0]
    for r in show:
        print(
            f"{r['stage']:<7} {r['config']:<40} {r['w']:>5.2f} "
            + " ".join(f"{r[c]:>+17.4f}" for c in cols)
            + f" {r['select_mean']:>+9.4f}"
        )
    print("\nbaselines (absolute nDCG@10, select / held):")
    for n in names:
        for stage in ("dense", "hybrid"):
            b = per_set[n][(stage, "none", 0.0)]
            print(f"  {n:<10} {stage:<7} {b['select']:.4f} / {b['held']:.4f}")
    if args.json:
        Path(args.json).write_text(json.dumps({"rows": table, "grid": asdict(DiffusionParams())}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
