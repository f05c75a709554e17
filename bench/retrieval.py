"""Retrieval speed: (1) the diffusion rerank of 50 candidates, graph construction included, side by
side with the paper's NetworkX implementation; (2) query embedding + search + rerank at 10k and 100k
chunks through `Retriever` (dense + paper PPR, and the configured default: hybrid z-score + rerank).

    OMP_WAIT_POLICY=PASSIVE python -m bench.retrieval [--sizes 10000,100000] [--queries 60] [--reps 300]

(1) Candidates are real: all-MiniLM-L6-v2 vectors of 50 nq_oracle passages per query, the dense top-50
of an exact search over the first 2,000 passages; the two implementations run interleaved on the same
inputs. NetworkX: `nx.Graph` with every pair weighted by max(cos, 0), `nx.pagerank(G, alpha=0.85,
personalization=p, weight="weight")` (its default tolerance), sort. Hark: `DiffusionReranker(mode=
paper).rerank(hits, 20)` (Hit vectors → numpy, Gram matrix, igraph PRPACK, sort, copies of the hits).
(2) Chunk vectors are synthetic 384-d unit vectors clustered around the real passage vectors (noise
of norm 0.6), texts are the passages themselves, written through `ChunkStore.replace_files`; the
store builds its FTS index and, at ≥ ann_threshold (20k) chunks, its IVF index. Queries are real
nq_oracle questions embedded live with MiniLM. Stores are cached in --work-dir. `--layouts
window_mean,window_max` runs every configuration on both chunk layouts side by side (the
window_max store: 1–3 synthetic windows per chunk, `build_store`).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

from bench.common import EVAL, load_average


def _p(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))]


def networkx_paper(vectors: np.ndarray, dense: np.ndarray, top_k: int = 20) -> list[int]:
    """The paper's implementation: complete graph, cosine edges clamped at 0, PPR 0.85, NetworkX."""
    import networkx as nx

    n = len(vectors)
    sims = vectors @ vectors.T
    g = nx.Graph()
    g.add_nodes_from(range(n))
    for i in range(n):
        for j in range(i + 1, n):
            w = float(sims[i, j])
            if w > 0:
                g.add_edge(i, j, weight=w)
    p = np.maximum(dense, 0)
    p = p / p.sum() if p.sum() > 0 else np.full(n, 1 / n)
    pr = nx.pagerank(g, alpha=0.85, personalization=dict(enumerate(p.tolist())), weight="weight")
    return sorted(range(n), key=lambda i: -pr[i])[:top_k]


def passages(emb, work: Path):
    """nq_oracle passage texts and their MiniLM vectors (cached in `work`)."""
    from knowledge.beir import doc_file_text, load_beir

    ds = load_beir(EVAL / "nq_oracle")
    texts = [doc_file_text(d) for d in ds.corpus]
    cache = work / f"nq_oracle-{ds.fingerprint()}-{emb.identity}.npy"
    if cache.is_file():
        return ds, texts, np.load(cache)
    vecs = emb.embed_documents(texts)
    np.save(cache, vecs)
    return ds, texts, vecs


def bench_rerank(emb, reps: int, work: Path) -> None:
    from knowledge.rerank import DiffusionReranker
    from knowledge.settings import RerankSettings
    from knowledge.types import Hit

    ds, _, docs = passages(emb, work)
    docs = docs[:2000]
    qids = [q for q in ds.queries][:reps]
    qv = emb.embed_documents([ds.queries[q] for q in qids])
    pools = []
    for v in qv:
        sims = docs @ v
        top = np.argsort(-sims)[:50]
        pools.append((docs[top].astype(np.float64), sims[top].astype(np.float64)))
    reranker = DiffusionReranker(RerankSettings(mode="paper"))
    ours, theirs, agree = [], [], 0
    for vecs, dense in pools:
        hits = [
            Hit(f"c{i}", f"d{i}.txt", "", "", float(s), dense_score=float(s), vector=vecs[i])  # as the store returns them: rows of a float32 matrix
            for i, s in enumerate(dense)
        ]
        t0 = time.perf_counter()
        out = reranker.rerank(hits, 20)
        t1 = time.perf_counter()
        ref = networkx_paper(vecs, dense)
        t2 = time.perf_counter()
        ours.append((t1 - t0) * 1e3)
        theirs.append((t2 - t1) * 1e3)
        agree += [int(h.chunk_id[1:]) for h in out.hits] == ref
    o50, t50 = statistics.median(ours), statistics.median(theirs)
    print(f"\n(1) rerank of 50 candidates incl. graph construction, {len(pools)} real queries, interleaved")
    print(f"{'implementation':<34}{'p50 ms':>9}{'p95 ms':>9}")
    print(f"{'Hark (igraph PRPACK, numpy)':<34}{o50:>9.3f}{_p(ours, 0.95):>9.3f}")
    print(f"{'paper (NetworkX pagerank)':<34}{t50:>9.3f}{_p(theirs, 0.95):>9.3f}")
    print(
        f"ratio NetworkX / Hark p50: {t50 / o50:.1f}x; identical top-20 order on {agree}/{len(pools)} queries"
    )


def build_store(n: int, emb, work: Path, layout: str = "window_mean"):
    """`layout` window_max: each chunk 1–3 windows (2 on average) around its passage vector, their
    normalised sum as the chunk vector, stored as `embedder.long_text: window_max` stores them."""
    from knowledge.settings import StoreSettings
    from knowledge.store import ChunkStore
    from knowledge.types import Chunk
    from models.settings import LAYOUT_SUFFIX

    suffix = LAYOUT_SUFFIX[layout]
    uri = str(work / f"synthetic-{n}{suffix}")
    store = ChunkStore.open(uri, emb.identity + suffix, emb.dim, StoreSettings())
    windows = store.stores_windows
    if store.count() >= n:
        if (n >= store.settings.ann_threshold and not store.has_vector_index()) or not store.has_fts_index():
            store.update_indexes()  # an interrupted build: finish the indexes
        return store
    store.clear()
    _, texts, centres = passages(emb, work)
    rng = np.random.default_rng(0)
    batch = 5000
    for start in range(0, n, batch):
        idx = np.arange(start, min(n, start + batch))
        owner = idx % len(texts)
        noise = rng.normal(scale=0.6 / np.sqrt(emb.dim), size=(len(idx), emb.dim)).astype(np.float32)
        vecs = centres[owner] + noise
        vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
        files = {}
        for j, i in enumerate(idx):
            path = f"syn/{i // 10}.txt"
            chunk = Chunk(f"s{i}", path, texts[owner[j]], f"doc {i // 10}")
            wins = vecs[j][None, :]
            if windows:
                extra = rng.normal(scale=0.6 / np.sqrt(emb.dim), size=(i % 3, emb.dim)).astype(np.float32)
                wins = np.concatenate([wins, centres[owner[j]] + extra]) if len(extra) else wins
                wins /= np.linalg.norm(wins, axis=1, keepdims=True)
            files.setdefault(path, ([], [], []))
            files[path][0].append(chunk)
            files[path][1].append(wins.sum(0) / np.linalg.norm(wins.sum(0)))
            files[path][2].append(wins)
        store.replace_files({p: (c, np.asarray(v), w) for p, (c, v, w) in files.items()})
    t0 = time.perf_counter()
    store.update_indexes()
    print(f"  built {n} chunks; indexes in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    return store


def bench_end_to_end(
    emb, sizes: list[int], queries: int, work: Path, only: list[str] | None = None, layouts: tuple[str, ...] = ("window_mean",)
) -> None:
    from knowledge.beir import load_beir
    from knowledge.retrieve import Retriever
    from knowledge.settings import RerankSettings, RetrievalSettings

    qs = list(load_beir(EVAL / "nq_oracle").queries.values())[:queries]
    old = RetrievalSettings(pool="dense", fusion="zscore", bm25_weight=0.5, candidates=50)
    ppr = RerankSettings(fusion_weight=0.2)
    configs = {
        "dense + paper PPR": RetrievalSettings(search="dense", rerank=RerankSettings(mode="paper")),
        "old default (dense pool 50, z 0.5)": old.model_copy(update={"rerank": RerankSettings(fusion_weight=0.0)}),
        "default (as configured)": RetrievalSettings(),
        "union 20, z 1.0": RetrievalSettings(candidates=20, bm25_weight=1.0, rerank=RerankSettings(mode="off")),
        "union 50, z 1.0": RetrievalSettings(candidates=50, bm25_weight=1.0, rerank=RerankSettings(mode="off")),
        "union 100, z 1.0": RetrievalSettings(candidates=100, bm25_weight=1.0, rerank=RerankSettings(mode="off")),
        "union 50, z 1.0 + PPR 0.2": RetrievalSettings(candidates=50, bm25_weight=1.0, rerank=ppr),
        "union 100, z 1.0 + PPR 0.2": RetrievalSettings(candidates=100, bm25_weight=1.0, rerank=ppr),
    }
    if only:
        configs = {k: v for k, v in configs.items() if k.startswith(tuple(only))}
    print(f"\n(2) query embedding + search + rerank, top-50 → 20, {len(qs)} real questions, p50 (p95) ms")
    print(f"{'chunks':>8}  {'configuration':<50}{'embed':>14}{'search':>14}{'rerank':>14}{'total':>14}")
    for n in sizes:
        stores = {layout: build_store(n, emb, work, layout) for layout in layouts}
        retrievers = {
            name + ("" if len(layouts) == 1 else f" · {layout}"): Retriever(emb, store, settings)
            for layout, store in stores.items()
            for name, settings in configs.items()
        }
        rows = {name: {"embed": [], "search": [], "rerank": [], "total": []} for name in retrievers}
        for r in retrievers.values():
            r.retrieve(qs[0])  # warm: FTS index and IVF files opened
        for q in qs:  # the configurations take turns on every question (load drifts alike)
            for name, r in retrievers.items():
                t0 = time.perf_counter()
                out = r.retrieve(q)
                rows[name]["total"].append((time.perf_counter() - t0) * 1e3)
                for k in ("embed", "search", "rerank"):
                    rows[name][k].append(out.timings_ms[k])
        for name, got in rows.items():
            cells = "".join(f"{statistics.median(v):>8.1f} ({_p(v, 0.95):>4.0f})" for v in got.values())
            print(f"{n:>8}  {name:<50}{cells}")
        if len(rows) > 1:
            ref = statistics.median(next(iter(rows.values()))["total"])
            for name, got in rows.items():
                print(f"{'':>8}  total p50 vs {next(iter(rows))}: {name} {statistics.median(got['total']) / ref:.2f}x")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--queries", type=int, default=60)
    ap.add_argument("--reps", type=int, default=300)
    ap.add_argument("--work-dir", default=os.environ.get("HARK_BENCH_DIR", "/tmp/hark-bench-retrieval"))
    ap.add_argument("--skip-rerank", action="store_true")
    ap.add_argument("--configs", default=None, help="comma-separated name prefixes, e.g. 'old,default'")
    ap.add_argument("--layouts", default="window_mean", help="embedder.long_text layouts, e.g. window_mean,window_max")
    args = ap.parse_args()
    from models.embedder import MiniLMEmbedder
    from models.settings import EmbedderSettings

    print(f"load average at start: {load_average():.1f} on {os.cpu_count()} cores")
    # the query side is the same for every layout; the stores pick theirs (`--layouts`)
    emb = MiniLMEmbedder(EmbedderSettings(backend="minilm", long_text="window_mean"))
    emb.warm_up()
    work = Path(args.work_dir)
    work.mkdir(parents=True, exist_ok=True)
    if not args.skip_rerank:
        bench_rerank(emb, args.reps, work)
    sizes = [int(s) for s in args.sizes.split(",") if s]
    if sizes:
        only = args.configs.split(",") if args.configs else None
        bench_end_to_end(emb, sizes, args.queries, work, only, tuple(args.layouts.split(",")))
    print(f"load average at end: {load_average():.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
