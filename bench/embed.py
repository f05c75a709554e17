"""MiniLM embedding latency and throughput: ONNX Runtime (thread settings) vs sentence-transformers
on PyTorch, side by side in one process.

    python -m bench.embed [--queries 60] [--passages 200] [--repeats 3]
    python -m bench.embed --memory onnx|torch     # resident memory, one runtime per process

`embed_query` on real nq_oracle questions, one at a time, the variants taking turns on every
question in a shuffled order (so a busy machine's load swings hit them alike and none always
follows the same other one): p50/p95 wall-clock ms and p50 CPU ms
(all threads of the process). Then `embed_documents` on real nq_oracle passages (title + text),
the whole list per call, variants alternating per repeat: passages per second (median of the
repeats). PyTorch runs with its default thread count (what Hark used before). `threads` is
`embedder.onnx_threads` (one text: a query), `batch` is `embedder.onnx_batch_threads` (several
texts: ingest; 0 = ONNX Runtime's default, all cores). Also checks that the variants give the same
vectors (max |difference|). The ONNX file comes from the Hark cache (exported on first use).
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from pathlib import Path

from bench.common import EVAL, jsonl, load_average, memory_mb, pct

NQ = EVAL / "nq_oracle"


def _rss_mb() -> int:
    return int(memory_mb()["VmRSS"])


def _memory(runtime: str, questions: list[str], passages: list[str]) -> int:
    """Resident memory this process gains loading one runtime, then embedding (run each runtime in
    its own process: memory is not given back)."""
    import torch  # noqa: F401 - imported by both runtimes' loaders; counted before, not in the model
    import transformers  # noqa: F401

    from models.embedder import MiniLMEmbedder
    from models.settings import EmbedderSettings

    base = _rss_mb()
    emb = MiniLMEmbedder(EmbedderSettings(backend="minilm", minilm_runtime=runtime))
    t0 = time.perf_counter()
    emb.warm_up()
    load_s = time.perf_counter() - t0
    for q in questions:
        emb.embed_query(q)
    after_queries = _rss_mb()
    emb.embed_documents(passages)
    print(
        f"{emb.runtime}: loaded in {load_s:.2f} s (after the imports); "
        f"resident {base} MB after imports; +{after_queries - base} MB loading and "
        f"{len(questions)} queries; +{_rss_mb() - after_queries} MB embedding {len(passages)} passages; "
        f"{_rss_mb() - base} MB gained"
    )
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default=str(NQ))
    ap.add_argument("--queries", type=int, default=60)
    ap.add_argument("--passages", type=int, default=200)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument(
        "--memory",
        choices=["onnx", "torch"],
        help="instead: resident MB gained by this runtime (loading + queries, then + passages)",
    )
    args = ap.parse_args()

    data = Path(args.dataset)
    questions = [q["text"] for q in jsonl(data / "queries.jsonl")[: args.queries]]
    passages = [f"{d['title']}\n{d['text']}" for d in jsonl(data / "corpus.jsonl")[: args.passages]]
    if args.memory:
        return _memory(args.memory, questions, passages)

    import numpy as np
    import torch

    from models.embedder import MiniLMEmbedder
    from models.settings import EmbedderSettings

    variants: dict[str, MiniLMEmbedder] = {}
    loads: dict[str, float] = {}
    for name, update in {
        "torch (sentence-transformers)": {"minilm_runtime": "torch"},
        "onnx, threads 1, batch 0 (default)": {"onnx_threads": 1, "onnx_batch_threads": 0},
        "onnx, threads 2, batch 2": {"onnx_threads": 2, "onnx_batch_threads": 2},
        "onnx, threads 1, batch 1": {"onnx_threads": 1, "onnx_batch_threads": 1},
    }.items():
        emb = MiniLMEmbedder(EmbedderSettings(backend="minilm", **update))
        t0 = time.perf_counter()
        emb.warm_up()
        loads[name] = time.perf_counter() - t0
        variants[name] = emb
    for emb in variants.values():  # warm-up
        for q in questions[:10]:
            emb.embed_query(q)
        emb.embed_documents(passages[:32])

    wall: dict[str, list[float]] = {n: [] for n in variants}
    cpu: dict[str, list[float]] = {n: [] for n in variants}
    rng = random.Random(0)
    names = list(variants)
    for _ in range(args.repeats):
        for q in questions:
            rng.shuffle(names)  # no variant always runs right after the same other one (cache, clocks)
            for name in names:
                emb = variants[name]
                w0, c0 = time.perf_counter(), time.process_time()
                emb.embed_query(q)
                wall[name].append((time.perf_counter() - w0) * 1000)
                cpu[name].append((time.process_time() - c0) * 1000)

    rates: dict[str, list[float]] = {n: [] for n in variants}
    vectors: dict[str, np.ndarray] = {}
    for _ in range(args.repeats):
        rng.shuffle(names)
        for name in names:
            emb = variants[name]
            t0 = time.perf_counter()
            vectors[name] = emb.embed_documents(passages)
            rates[name].append(len(passages) / (time.perf_counter() - t0))

    ref_name = next(iter(variants))
    ref_p50 = statistics.median(wall[ref_name])
    ref_rate = statistics.median(rates[ref_name])
    print(
        f"all-MiniLM-L6-v2 on {data.name}: {len(questions)} questions x {args.repeats} (embed_query), "
        f"{len(passages)} passages x {args.repeats} (embed_documents, batch {variants[ref_name].settings.batch_size}); "
        f"{os.cpu_count()} CPUs, torch threads {torch.get_num_threads()}, "
        f"load average {load_average():.1f}"
    )
    print(
        "| runtime | load s | embed_query p50 ms | p95 ms | p50 CPU ms | p50 vs torch | "
        "embed_documents passages/s | vs torch | max abs diff vs torch |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for name in variants:
        p50 = statistics.median(wall[name])
        rate = statistics.median(rates[name])
        diff = float(np.abs(vectors[name] - vectors[ref_name]).max())
        print(
            f"| {name} | {loads[name]:.2f} | {p50:.2f} | {pct(wall[name], 0.95):.2f} | "
            f"{statistics.median(cpu[name]):.2f} | {ref_p50 / p50:.2f}x | {rate:.1f} | "
            f"{rate / ref_rate:.2f}x | {diff:.1e} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
