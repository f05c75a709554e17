"""LanceDB full-text tokenizer options on misspelt, spoken and German questions (nDCG@10, ranx).

    OMP_WAIT_POLICY=PASSIVE nice -n 10 python -m bench.fts_tokenizers [--dataset NAME ...] [--limit N]

Each set's chunks (indexed and embedded once by `launch.py eval retrieval` / bench/fusion_sweep.py,
same cache) are copied into one table per tokenizer configuration (`store.fts`, knowledge/fts.py),
whose full-text index `ChunkStore` builds itself. Per query the production calls run: the
full-text top-100 (`fts_search`) and the BM25 of the dense top-100 (`fts_scores`); the dense
results are the cached ones (the embedder does not change). Then `bm25` alone and the configured
default first stage (`knowledge.evaluate` "default") are ranked by the production code.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import replace
from pathlib import Path

from bench.common import EVAL, load_average
from knowledge.settings import FtsSettings, RetrievalSettings, StoreSettings

SETS = ["xquad_en", "xquad_en_noisy", "covid_faq", "xquad_de"]
CONFIGS = {
    "default (simple, English stem, stop words, folding)": FtsSettings(),
    "no stemming": FtsSettings(stem=False),
    "no stop-word removal": FtsSettings(remove_stop_words=False),
    "German stemming": FtsSettings(language="German"),
    "3-grams (no stem, no stop words)": FtsSettings(base_tokenizer="ngram", stem=False, remove_stop_words=False),
}


def copy_store(source, folder: Path, fts: FtsSettings):
    """A ChunkStore at `folder` holding the source's rows, full-text indexed with `fts`."""
    import lancedb

    from knowledge.store import ChunkStore

    db = lancedb.connect(str(folder))
    if source.name not in db.list_tables().tables:
        rows = source.table.search().limit(source.count()).to_arrow()
        db.create_table(source.name, rows)
    store = ChunkStore.open(str(folder), source.identity, source.dim, StoreSettings(fts=fts))
    if not store.has_fts_index():
        store.update_indexes()
    return store


def searches(store, results, n: int):
    from knowledge.retrieve import SearchResults

    out = []
    for qr in results:
        fts = store.fts_search(qr.text, n)
        found = {h.chunk_id: float(h.bm25_score or 0.0) for h in fts}
        rest = [h.chunk_id for h in qr.results.dense if h.chunk_id not in found]
        scores = {**store.fts_scores(qr.text, rest), **found}
        pool = {h.chunk_id: scores.get(h.chunk_id, 0.0) for h in qr.results.dense}
        out.append(replace(qr, results=SearchResults(qr.results.dense, fts, pool)))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", action="append", default=None)
    ap.add_argument("--work-dir", default=os.environ.get("HARK_EVAL_DIR", "/tmp/hark-eval"))
    ap.add_argument("--limit", type=int, default=0, help="first N queries of each set (0: all)")
    args = ap.parse_args()
    from knowledge.beir import load_beir
    from knowledge.evaluate import collect_cached, index_dataset, rank_documents, score_runs, standard_methods
    from knowledge.fts import fts_index_name
    from knowledge.settings import IngestSettings
    from models.embedder import MiniLMEmbedder
    from models.settings import EmbedderSettings

    print(f"load average at start: {load_average():.1f} on {os.cpu_count()} cores")
    work = Path(args.work_dir)
    emb = MiniLMEmbedder(EmbedderSettings())
    retrieval = RetrievalSettings(candidates=100)
    default = RetrievalSettings()
    methods = standard_methods(default)
    table = []
    for name in args.dataset or SETS:
        ds = load_beir(EVAL / name)
        source = index_dataset(ds, emb, StoreSettings(), IngestSettings(), work)
        results = collect_cached(ds, source, emb, retrieval, work)
        if args.limit:
            results = results[: args.limit]
        qrels = {q: r for q, r in ds.canonical_qrels().items() if q in {qr.qid for qr in results}}
        canonical = ds.canonical_ids()
        for label, fts in CONFIGS.items():
            t0 = time.perf_counter()
            store = copy_store(source, work / "fts" / f"{name}-{fts_index_name(fts)}", fts)
            got = searches(store, results, 100)
            runs = {
                m: {qr.qid: rank_documents(qr, methods[m], default, default.candidates, canonical) for qr in got}
                for m in ("bm25", "default")
            }
            scores = score_runs(qrels, runs)
            table.append((name, label, scores["bm25"]["ndcg@10"], scores["default"]["ndcg@10"]))
            print(f"# {name} {label}: {table[-1][2:]} ({time.perf_counter() - t0:.0f} s)", file=sys.stderr)
    print("\n| set | tokenizer | BM25 nDCG@10 | default hybrid nDCG@10 |\n|---|---|---|---|")
    for name, label, b, d in table:
        print(f"| {name} | {label} | {b:.4f} | {d:.4f} |")
    print(f"load average at end: {load_average():.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
