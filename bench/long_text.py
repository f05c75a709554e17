"""Long text: how should a chunk longer than the encoder's window be scored against a query?

    OMP_WAIT_POLICY=PASSIVE nice -n 10 python -m bench.long_text [--dataset NAME ...] [--mode M ...] [--json OUT]

Modes, all from the same window vectors (all-MiniLM-L6-v2, windows of 254 tokens, 8 overlapping); per
chunk three cosines: its first window's, its mean vector's (the normalised sum of its unit windows),
its best window's:
- `truncate`: the first window; `window_mean`: the mean vector; `maxp`: the best window;
- `max_of_all`: the best of the windows and the mean vector (Hark's `embedder.long_text: window_max`);
- `blend_25/50/75`: 0.25/0.5/0.75 · best window + the rest · mean vector; `first_best`: 0.5 · first +
  0.5 · best window.
The rule (printed): on the select half, within 0.01 nDCG@10 of the best mode on every set, then the
best mean (the XQuAD views as one set); the report half shows how the pick holds.

Every set is indexed through Hark's Ingestor (500-word chunks; the cache shared with
bench/fusion_sweep.py). The windows of each chunk are embedded once and cached (a chunk of one
window reuses its stored vector). Per query and mode: the exact dense top-100 over all chunks; the
full-text top-100 (cached, the embedder does not touch it) with its BM25, the BM25 of new dense
members from the store (`fts_scores`); then `dense` and the configured `default` first stage are
ranked by the production code (`knowledge.evaluate.rank_documents`). nDCG@10 on the select half
(even positions: where a choice is made) and on the report half (odd), as `launch.py eval retrieval
--half`. A set is a name under the dev data or a BEIR folder (e.g. a `bench/subset.py` copy of
medquad_liveqa: its 15,768 passages are not in the default list, too slow to embed on a shared CPU).

The long-document set `xquad_en_articles` is built from xquad_en: the five paragraphs of each of
the 48 articles joined in corpus order into one document (title + paragraphs); each question's
gold paragraph maps to its article. Ingested as 500-word chunks, an article is 2–3 chunks of about
2–3 encoder windows each, so the answer can sit in any window.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from bench.common import EVAL, load_average

SETS = ["xquad_en_articles", "nq_oracle", "xquad_en", "xquad_en_noisy", "xquad_de", "xquad_de_en", "covid_faq"]
# a mode is a per-chunk score from three: its first window's cosine, its mean vector's, its best window's
MODES = {
    "truncate": (1.0, 0.0, 0.0),
    "window_mean": (0.0, 1.0, 0.0),
    "maxp": (0.0, 0.0, 1.0),
    "max_of_all": None,  # the best of the windows and the mean vector
    "blend_25": (0.0, 0.75, 0.25),  # 0.25 · best window + 0.75 · mean vector
    "blend_50": (0.0, 0.5, 0.5),
    "blend_75": (0.0, 0.25, 0.75),
    "first_best": (0.5, 0.0, 0.5),  # 0.5 · first window + 0.5 · best window
}
N = 100


def articles(name: str = "xquad_en"):
    """xquad_en with each article's paragraphs joined into one document."""
    from knowledge.beir import BeirDataset, Document, load_beir

    ds = load_beir(EVAL / name)
    groups: dict[str, list[Document]] = {}
    for d in ds.corpus:
        groups.setdefault(d.title, []).append(d)
    owner = {d.doc_id: f"article-{i:02d}" for i, docs in enumerate(groups.values()) for d in docs}
    corpus = [
        Document(f"article-{i:02d}", title, "\n\n".join(d.text for d in docs))
        for i, (title, docs) in enumerate(groups.items())
    ]
    qrels = {q: {owner[d]: r for d, r in rels.items()} for q, rels in ds.qrels.items()}
    return BeirDataset(f"{name}_articles", ds.path, corpus, ds.queries, qrels)


def windows(store, emb, work: Path, tag: str):
    """(chunk ids, source paths, window matrix, window → chunk index), cached in `work`."""
    rows = store.table.search().select(["chunk_id", "source_path", "chunk_text", "vector"]).limit(store.count())
    tbl = rows.to_arrow()
    ids, paths = tbl["chunk_id"].to_pylist(), tbl["source_path"].to_pylist()
    cache = work / f"{tag}-{emb.identity}-windows.npz"
    if cache.is_file():
        got = np.load(cache, allow_pickle=False)
        if list(got["ids"]) == ids:
            return ids, paths, got["w"], got["owner"]
    texts = tbl["chunk_text"].to_pylist()
    stored = np.asarray(tbl["vector"].to_pylist(), dtype=np.float32)
    size = emb.window_size
    long = [i for i, t in enumerate(texts) if len(emb._token_ids(t)) > size]
    wl, ol = emb.embed_windows([texts[i] for i in long]) if long else (np.zeros((0, emb.dim)), np.zeros(0, int))
    short = sorted(set(range(len(texts))) - set(long))
    w = np.concatenate([stored[short], wl]).astype(np.float32)
    owner = np.concatenate([np.asarray(short, dtype=np.int64), np.asarray(long, dtype=np.int64)[ol]])
    np.savez(cache, ids=np.asarray(ids), w=w, owner=owner)
    return ids, paths, w, owner


def first_windows(owner: np.ndarray, n: int) -> np.ndarray:
    """Index of each chunk's first window (windows are stored in chunk order)."""
    first = np.full(n, -1)
    for j in range(len(owner) - 1, -1, -1):
        first[owner[j]] = j
    return first


def mean_vectors(w: np.ndarray, owner: np.ndarray, n: int) -> np.ndarray:
    out = np.zeros((n, w.shape[1]), dtype=np.float64)
    np.add.at(out, owner, w)
    return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)


def mode_scores(q: np.ndarray, w: np.ndarray, owner: np.ndarray, first: np.ndarray, means: np.ndarray, mode: str):
    """Every chunk's score for query vector `q` under `mode`."""
    per_window = w @ q
    best = np.full(len(first), -np.inf)
    np.maximum.at(best, owner, per_window)
    mean = means @ q
    weights = MODES[mode]
    if weights is None:
        return np.maximum(best, mean)
    a, b, c = weights
    return a * per_window[first] + b * mean + c * best
def run_set(ds, emb, work: Path, methods, default, modes) -> dict[str, dict[str, float]]:
    from knowledge.evaluate import collect_cached, half_of, index_dataset, rank_documents, score_runs
    from knowledge.retrieve import SearchResults
    from knowledge.settings import IngestSettings, RetrievalSettings, StoreSettings
    from knowledge.types import Hit

    store = index_dataset(ds, emb, StoreSettings(), IngestSettings(), work)
    results = collect_cached(ds, store, emb, RetrievalSettings(candidates=N), work)
    ids, paths, w, owner = windows(store, emb, work, f"{ds.name}-{ds.fingerprint()}")
    pos = {c: i for i, c in enumerate(ids)}
    multi = float(np.mean(np.bincount(owner, minlength=len(ids)) > 1))
    canonical = ds.canonical_ids()
    out = {}
    first, vecs = first_windows(owner, len(ids)), mean_vectors(w, owner, len(ids))
    for mode in modes:
        runs: dict[str, dict[str, list[str]]] = {"dense": {}, "default": {}}
        hit_vecs = w[first] if mode == "truncate" else vecs  # what the store would hold per chunk
        for qr in results:
            s = mode_scores(np.asarray(qr.vector, dtype=np.float64), w, owner, first, vecs, mode)
            top = np.argsort(-s, kind="stable")[:N]
            known = {**qr.results.pool_bm25, **{h.chunk_id: h.bm25_score or 0.0 for h in qr.results.fts}}
            missing = [ids[i] for i in top if ids[i] not in known]
            if missing:
                known.update({c: 0.0 for c in missing} | store.fts_scores(qr.text, missing))
            dense = [
                Hit(ids[i], paths[i], "", "", float(s[i]), dense_score=float(s[i]), vector=hit_vecs[i]) for i in top
            ]
            fts = [replace(h, dense_score=float(s[pos[h.chunk_id]]), vector=hit_vecs[pos[h.chunk_id]]) for h in qr.results.fts]
            sr = SearchResults(dense, fts, {h.chunk_id: float(known[h.chunk_id]) for h in dense})
            q2 = replace(qr, results=sr)
            for m in runs:
                runs[m][qr.qid] = rank_documents(q2, methods[m], default, default.candidates, canonical)
        qrels = ds.canonical_qrels()
        out[mode] = {}
        for half in ("select", "report"):
            keep = half_of([qr.qid for qr in results], half)
            scores = score_runs({q: qrels[q] for q in keep}, {m: {q: r[q] for q in keep} for m, r in runs.items()})
            out[mode] |= {f"{m}/{half}": scores[m]["ndcg@10"] for m in runs}
        print(f"# {ds.name} {mode}: {out[mode]} ({100 * multi:.0f} % of chunks > 1 window)", file=sys.stderr)
    out["multi_window_share"] = {"chunks": multi}
    return out


def shortfalls(table, modes, key: str) -> dict[str, dict[str, float]]:
    """Per mode and set: its nDCG@10 less the best mode's on that set (0 = the best)."""
    best = {name: max(r[m][key] for m in modes) for name, r in table.items()}
    return {m: {name: r[m][key] - best[name] for name, r in table.items()} for m in modes}


def print_tables(table, modes) -> None:
    """Default first stage, nDCG@10 per half; the rule picks on the select half: within 0.01 of the
    best mode on every set, then the best mean (the XQuAD views as one set, `weighted_mean`)."""
    from knowledge.evaluate import weighted_mean

    names = list(table)
    chosen = None
    for half in ("select", "report"):
        key = f"default/{half}"
        short = shortfalls(table, modes, key)
        print(f"\nnDCG@10, default first stage, {half} half (chunks > 1 window: "
              + ", ".join(f"{n} {100 * table[n]['multi_window_share']['chunks']:.0f} %" for n in names) + ")")
        print("| mode | " + " | ".join(names) + " | mean | worst vs best |")
        print("|---|" + "---:|" * (len(names) + 2))
        means = {m: weighted_mean({n: table[n][m][key] for n in names}) for m in modes}
        for m in modes:
            cells = [f"{table[n][m][key]:.4f}" for n in names]
            print(f"| {m} | " + " | ".join(cells) + f" | {means[m]:.4f} | {min(short[m].values()):+.4f} |")
        if half == "select":
            ok = [m for m in modes if min(short[m].values()) >= -0.01]
            chosen = max(ok, key=means.get) if ok else None
    print(f"\nrule (select half): within 0.01 of the best mode on every set, then the best mean -> {chosen or 'none'}")
    dense = {m: weighted_mean({n: table[n][m]["dense/select"] for n in names}) for m in modes}
    print("dense alone, select half, mean: " + ", ".join(f"{m} {v:.4f}" for m, v in dense.items()))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", action="append", default=None)
    ap.add_argument("--work-dir", default=os.environ.get("HARK_EVAL_DIR", "/tmp/hark-eval"))
    ap.add_argument("--json", default=None)
    ap.add_argument("--mode", action="append", choices=list(MODES), default=None)
    args = ap.parse_args()
    from knowledge.beir import load_beir
    from knowledge.evaluate import standard_methods
    from knowledge.settings import RetrievalSettings
    from models.embedder import MiniLMEmbedder
    from models.settings import EmbedderSettings

    print(f"load average at start: {load_average():.1f} on {os.cpu_count()} cores")
    work = Path(args.work_dir)
    work.mkdir(parents=True, exist_ok=True)
    emb = MiniLMEmbedder(EmbedderSettings(long_text="window_mean"))  # every mode is scored from its windows
    emb.warm_up()
    default = RetrievalSettings()
    methods = standard_methods(default)
    modes = args.mode or list(MODES)
    table = {}
    for name in args.dataset or SETS:
        t0 = time.perf_counter()
        ds = articles() if name == "xquad_en_articles" else load_beir(Path(name) if "/" in name else EVAL / name)
        table[Path(name).name] = run_set(ds, emb, work, methods, default, modes)
        print(f"# {name}: {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    print_tables(table, modes)
    if args.json:
        Path(args.json).write_text(json.dumps(table, indent=1) + "\n")
    print(f"load average at end: {load_average():.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
