"""Search latency (p50/p95, top-50) at 10k and 100k chunks, exact vs the approximate index, with the
index's recall@50 against exact search.

    OMP_WAIT_POLICY=PASSIVE python -m bench.search [--sizes 10000,100000] [--queries 100]
        [--configs "ivf_pq:32:4,ivf_flat:32:1"] [--data clustered|uniform]

Synthetic 512-d unit vectors (the CLIP dimension) go through `ChunkStore.replace_files` into a real
LanceDB table in a temporary folder. `clustered` (default) draws them around `--centres` random
centres (100) with noise of norm 0.8 (cosine ~0.78 to the centre), like real embeddings, which cluster
by topic; `uniform` is the worst case for any IVF
index (no structure at all). Queries are perturbed copies of stored vectors. A config is
`index:nprobes:refine_factor`; partitions = sqrt(n) as in the store.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from bench.common import pct

DIM = 512


def make_vectors(n: int, kind: str, rng: np.random.Generator, n_centres: int) -> np.ndarray:
    if kind == "uniform":
        m = rng.normal(size=(n, DIM)).astype(np.float32)
    else:
        centres = rng.normal(size=(n_centres, DIM)).astype(np.float32)
        centres /= np.linalg.norm(centres, axis=1, keepdims=True)
        # noise of norm ~0.8 around a centre: cosine to the centre ~0.78, like a topic cluster
        noise = rng.normal(scale=0.8 / np.sqrt(DIM), size=(n, DIM)).astype(np.float32)
        m = centres[rng.integers(0, len(centres), n)] + noise
    return m / np.linalg.norm(m, axis=1, keepdims=True)


def _percentiles(xs: list[float]) -> tuple[float, float]:
    return statistics.median(xs), pct(xs, 0.95)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--configs", default="ivf_pq:32:4,ivf_flat:32:1")
    ap.add_argument("--data", default="clustered", choices=["clustered", "uniform"])
    ap.add_argument("--centres", type=int, default=100, help="topic centres of the clustered data")
    args = ap.parse_args()

    from knowledge.settings import StoreSettings
    from knowledge.store import ChunkStore
    from knowledge.types import Chunk

    rng = np.random.default_rng(0)
    rows = []
    for n in [int(s) for s in args.sizes.split(",")]:
        data = make_vectors(n, args.data, rng, args.centres)
        queries = data[rng.integers(0, n, args.queries)] + rng.normal(
            scale=0.02, size=(args.queries, DIM)
        ).astype(np.float32)
        with tempfile.TemporaryDirectory(prefix="hark-bench-search-") as tmp:
            store = ChunkStore.open(str(Path(tmp) / "db"), "bench", DIM, StoreSettings(ann_threshold=10**9))
            t0 = time.perf_counter()
            batch = 20000
            for start in range(0, n, batch):
                ids = range(start, min(n, start + batch))
                chunks = [Chunk(f"c{i}", f"f{i // 10}.md", f"text {i}", "t", text_hash=f"h{i}") for i in ids]
                store.replace_files({f"batch{start}": (chunks, data[start : start + len(chunks)])})
            t_load = time.perf_counter() - t0
            exact_ids, lat = [], []
            for q in queries:
                t0 = time.perf_counter()
                hits = store.search(q, 50, exact=True)
                lat.append((time.perf_counter() - t0) * 1000)
                exact_ids.append({h.chunk_id for h in hits})
            p50, p95 = _percentiles(lat)
            rows.append((n, "exact (flat)", "-", f"{p50:.1f}", f"{p95:.1f}", "1.000", "-"))
            print("# " + " | ".join(str(x) for x in rows[-1]), flush=True)
            for cfg in args.configs.split(","):
                index, nprobes, refine = cfg.split(":")
                store.settings = StoreSettings(
                    ann_threshold=256,
                    ann_index=index,
                    ann_nprobes=int(nprobes),
                    ann_refine_factor=int(refine),
                )
                t0 = time.perf_counter()
                store._create_ann(n)
                t_index = time.perf_counter() - t0
                lat, recalls = [], []
                for q, truth in zip(queries, exact_ids, strict=True):
                    t0 = time.perf_counter()
                    hits = store.search(q, 50, exact=False)
                    lat.append((time.perf_counter() - t0) * 1000)
                    recalls.append(len(truth & {h.chunk_id for h in hits}) / 50)
                p50, p95 = _percentiles(lat)
                rows.append(
                    (
                        n,
                        index,
                        f"nprobes {nprobes}, refine {refine}",
                        f"{p50:.1f}",
                        f"{p95:.1f}",
                        f"{np.mean(recalls):.3f} (min {min(recalls):.2f})",
                        f"{t_index:.1f}",
                    )
                )
                print("# " + " | ".join(str(x) for x in rows[-1]), flush=True)
            print(f"# n={n}: loaded in {t_load:.1f} s", flush=True)
    kind = f"clustered around {args.centres} centres" if args.data == "clustered" else "uniform"
    print(f"\ndata: {kind}, dim {DIM}, {args.queries} queries, top-50\n")
    print("| chunks | search | settings | p50 ms | p95 ms | recall@50 vs exact | index build s |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print("| " + " | ".join(str(x) for x in r) + " |")


if __name__ == "__main__":
    main()
