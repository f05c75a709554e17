"""Retrieval evaluation on BEIR-layout datasets, through Hark's own ingestion, store and retriever.

The corpus becomes one `.txt` file per document (title, blank line, text; `knowledge.beir`) in a work
folder keyed by dataset content + ingest settings, indexed by `Ingestor` into a `ChunkStore` whose
table is keyed by the embedder identity — a second run re-embeds nothing. For each query the searches
run once (dense top-n with vectors, full-text top-n, BM25 of the dense pool); every method is then a
pure function of those results (`build_pool` + `DiffusionReranker`), exactly as `Retriever` does it.
Chunks map back to documents through `source_path` (a document's best chunk ranks it). Metrics come
from ranx.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from knowledge.beir import BeirDataset, doc_id_from_path, write_corpus
from knowledge.rerank import DiffusionParams, DiffusionReranker
from knowledge.retrieve import Retriever, SearchResults, build_pool
from knowledge.settings import IngestSettings, RetrievalSettings, StoreSettings
from models.runtime.errors import HarkError

log = logging.getLogger(__name__)

METRICS = ["ndcg@5", "ndcg@10", "ndcg@20", "mrr@10", "recall@5", "recall@20"]
DEPTH = 20  # ranked documents per query (the deepest metric)


@dataclass(frozen=True)
class Method:
    """One evaluated configuration: which first stage, and which diffusion (None = none).

    `pool`, `bm25_weight`, `rrf_k`, `candidates` override the retrieval settings (None: as configured)."""

    name: str
    first_stage: str  # "bm25" | "dense" | "hybrid"
    fusion: str = "zscore"  # for hybrid: "zscore" | "rrf"
    diffusion: DiffusionParams | None = None
    pool: str | None = None  # for hybrid: "union" | "dense"
    bm25_weight: float | None = None
    rrf_k: int | None = None
    candidates: int | None = None

    def settings(self, base: RetrievalSettings) -> RetrievalSettings:
        update: dict = {"search": self.first_stage, "fusion": self.fusion}
        for key in ("pool", "bm25_weight", "rrf_k", "candidates"):
            if getattr(self, key) is not None:
                update[key] = getattr(self, key)
        return base.model_copy(update=update)


# the first stage Hark shipped before the union pool (dense top-50 re-scored with BM25, no rerank)
OLD_DEFAULT = Method("old-default", "hybrid", "zscore", pool="dense", bm25_weight=0.5, candidates=50)
DEFAULT_METHODS = ["bm25", "dense", "old-default", "default", "rrf", "default+ppr-paper", "dense+ppr-paper"]
SUMMARY_METHODS = ["bm25", "dense", "old-default", "default", "rrf"]
# defaults are chosen on the "select" half (even positions in queries.jsonl) and reported on the other
HALVES = ("all", "select", "report")
# four views of the same XQuAD questions: together they weigh as one set in a mean over sets
XQUAD_VIEWS = frozenset({"xquad_en", "xquad_en_noisy", "xquad_de", "xquad_de_en"})


def half_of(qids: Sequence[str], half: str) -> list[str]:
    """The queries of one half, by position: select = even (0, 2, …), report = odd, all = all."""
    if half not in HALVES:
        raise HarkError(f"unknown half {half!r}", f"choose from {', '.join(HALVES)}")
    return list(qids) if half == "all" else list(qids)[0 if half == "select" else 1 :: 2]


def weighted_mean(per_set: dict[str, float]) -> float:
    """Mean over sets, the XQuAD views counting together as one set (each 1/4 of it)."""
    views = [v for k, v in per_set.items() if k in XQUAD_VIEWS]
    parts = [v for k, v in per_set.items() if k not in XQUAD_VIEWS] + ([float(np.mean(views))] if views else [])
    return float(np.mean(parts)) if parts else float("nan")


def standard_methods(settings: RetrievalSettings) -> dict[str, Method]:
    """The named methods: the configured default, the baselines it must not fall below, and the
    variants that explain it."""
    from knowledge.rerank import PAPER, params_for

    default = params_for(settings.rerank)
    fusion = settings.fusion
    methods = [
        Method("bm25", "bm25"),
        Method("dense", "dense"),
        OLD_DEFAULT,
        Method("default", "hybrid", fusion=fusion, diffusion=default),
        Method("rrf", "hybrid", fusion="rrf", pool="union", bm25_weight=1.0, rrf_k=60),
        Method("default+ppr-paper", "hybrid", fusion=fusion, diffusion=PAPER),
        Method("dense+ppr", "dense", diffusion=default),
        Method("dense+ppr-paper", "dense", diffusion=PAPER),
        Method("hybrid", "hybrid", fusion=fusion),
        Method("hybrid+ppr", "hybrid", fusion=fusion, diffusion=default),
        Method("hybrid+ppr-paper", "hybrid", fusion=fusion, diffusion=PAPER),
        Method("hybrid-zscore", "hybrid", fusion="zscore"),
        Method("hybrid-rrf", "hybrid", fusion="rrf"),
    ]
    return {m.name: m for m in methods}


@dataclass
class QueryResults:
    qid: str
    text: str
    vector: np.ndarray
    results: SearchResults


@dataclass
class EvalReport:
    dataset: str
    methods: dict[str, dict[str, float]]
    queries: int
    corpus: int
    chunks: int
    embedder: str
    seconds: dict[str, float] = field(default_factory=dict)

    def to_json(self) -> dict:
        return {"dataset": self.dataset, "methods": self.methods}


# --------------------------------------------------------------------------- indexing


def _settings_key(*parts: object) -> str:
    blob = json.dumps([p.model_dump() if hasattr(p, "model_dump") else p for p in parts], sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:10]


def index_dataset(
    dataset: BeirDataset, embedder, store_settings: StoreSettings, ingest: IngestSettings, work_dir: Path
):
    """The dataset's corpus indexed through Hark's Ingestor + ChunkStore (cached in `work_dir`)."""
    from knowledge.ingest import Ingestor
    from knowledge.open_library import open_store

    # keyed by the settings that decide the chunks (not batch sizes, commit interval, isolation)
    content = ingest.model_dump(include={"chunk_words", "overlap_words", "max_file_mb", "extensions", "ocr"})
    folder = Path(work_dir) / f"{dataset.name}-{dataset.fingerprint()}-{_settings_key(content)}"
    corpus_dir = folder / "corpus"
    write_corpus(dataset, corpus_dir)
    store = open_store(embedder, store_settings, str(folder / "lancedb"))
    if store.count() == 0 or len(store.documents()) < len(dataset.corpus):
        t0 = time.perf_counter()
        report = Ingestor(store, embedder, ingest).ingest([corpus_dir])
        log.info("indexed %s in %.1f s: %s", dataset.name, time.perf_counter() - t0, _summary(report))
    if not store.has_fts_index():  # the Ingestor keeps the indexes current after a change
        store.update_indexes()
    return store


def _summary(report) -> str:
    summary = getattr(report, "summary", None)
    return summary() if callable(summary) else str(summary or "")


# --------------------------------------------------------------------------- running


def collect(
    dataset: BeirDataset,
    retriever: Retriever,
    embedder,
    n: int,
    progress: Callable[[int, int], None] | None = None,
) -> list[QueryResults]:
    """Embed every query (batched) and run the searches once per query."""
    qids = list(dataset.queries)
    vectors = embedder.embed_queries([dataset.queries[q] for q in qids]) if qids else np.zeros((0, 1))
    out = []
    for i, (qid, vec) in enumerate(zip(qids, vectors, strict=True)):
        text = dataset.queries[qid]
        out.append(QueryResults(qid, text, vec, _compact(retriever.search(text, vec, n), vec)))
        if progress is not None:
            progress(i + 1, len(qids))
    return out


def _compact(results: SearchResults, query_vec: np.ndarray) -> SearchResults:
    """Keep thousands of queries in memory: vectors as float32 arrays (the diffusion needs the dense
    pool's), full-text hits with their dense score precomputed (the store's, when it scores chunks by
    their windows; else the cosine) and no vector, no chunk text, no window vectors."""
    dense = [
        replace(h, chunk_text="", vector=np.asarray(h.vector, dtype=np.float32), windows=None) for h in results.dense
    ]
    fts = []
    for h in results.fts:
        cos = h.dense_score
        if cos is None and h.vector is not None:
            cos = float(np.dot(np.asarray(h.vector, dtype=np.float32), query_vec))
        fts.append(replace(h, chunk_text="", vector=None, windows=None, dense_score=cos))
    return SearchResults(dense, fts, results.pool_bm25, results.notices)


COLLECT_N = 100  # searches are cached at this depth (or deeper); a smaller pool is a prefix of it


def collect_cached(dataset: BeirDataset, store, embedder, retrieval: RetrievalSettings, work_dir: Path):
    """`collect` once per dataset content, embedder and query set (a pickle in work_dir), at depth
    max(candidates, COLLECT_N); the results are cut to `candidates` (a prefix of each list)."""
    import pickle

    n = max(retrieval.candidates, COLLECT_N)
    # the index (its folder carries the ingest settings) and the FTS tokenizer decide the hits too
    key = _settings_key(sorted(dataset.queries.items()), n, Path(store.uri).parent.name, store.settings.fts)
    cache = work_dir / f"{dataset.name}-{dataset.fingerprint()}-{embedder.identity}-n{n}-{key}.searches.pkl"
    results = None
    if cache.is_file():
        try:
            results = pickle.loads(cache.read_bytes())
        except Exception as exc:  # noqa: BLE001 - a stale or truncated cache is recomputed
            log.warning("ignoring the search cache %s (%s)", cache, exc)
    if results is None:
        # one search pass serves every method: dense top-n, full-text top-n, BM25 of the dense pool
        searcher = Retriever(embedder, store, retrieval.model_copy(update={"search": "hybrid", "fusion": "rrf"}))
        results = collect(dataset, searcher, embedder, n)
        tmp = cache.with_suffix(".tmp")
        tmp.write_bytes(pickle.dumps(results))
        tmp.replace(cache)
    return with_vectors([cut(qr, retrieval.candidates) for qr in results], store)


def with_vectors(results: list[QueryResults], store) -> list[QueryResults]:
    """The full-text hits with their vectors again (the cache drops them; the diffusion over a
    union pool needs every member's), read once from the store, shared between queries."""
    ids = list(dict.fromkeys(h.chunk_id for qr in results for h in qr.results.fts if h.vector is None))
    found = store.vectors(ids) if ids else {}
    for qr in results:
        qr.results.fts = [replace(h, vector=found.get(h.chunk_id)) if h.vector is None else h for h in qr.results.fts]
    return results


def cut(qr: QueryResults, n: int) -> QueryResults:
    """The results a search of depth n would have returned (each list's top n)."""
    dense = qr.results.dense[:n]
    bm25 = {h.chunk_id: qr.results.pool_bm25[h.chunk_id] for h in dense if h.chunk_id in qr.results.pool_bm25}
    return replace(qr, results=SearchResults(dense, qr.results.fts[:n], bm25, qr.results.notices))


def search_depth(retrieval: RetrievalSettings, methods: Sequence[Method]) -> int:
    """How deep the cached searches must be cut for these methods: the deepest one's candidates."""
    return max([retrieval.candidates, *(m.candidates or 0 for m in methods)])


def rank_documents(
    qr: QueryResults,
    method: Method,
    settings: RetrievalSettings,
    n: int,
    canonical: dict[str, str] | None = None,
) -> list[str]:
    """The method's document ranking for one query (top DEPTH documents, canonical ids)."""
    canonical = canonical or {}
    if method.first_stage == "bm25":
        hits = qr.results.fts
    else:
        s = method.settings(settings)
        pool = build_pool(qr.results, qr.vector, s, method.candidates or n)
        reranker = DiffusionReranker(params=method.diffusion) if method.diffusion else None
        hits = reranker.rerank(pool, len(pool)).hits if reranker else pool
    docs: list[str] = []
    for h in hits:
        doc = doc_id_from_path(h.source_path)
        doc = canonical.get(doc, doc)
        if doc not in docs:
            docs.append(doc)
            if len(docs) == DEPTH:
                break
    return docs


def score_runs(
    qrels: dict[str, dict[str, int]], runs: dict[str, dict[str, list[str]]]
) -> dict[str, dict[str, float]]:
    """ranx metrics per method; `runs[method][qid]` is a ranked list of document ids."""
    from ranx import Qrels, Run, evaluate

    q = Qrels(qrels)
    out = {}
    for name, run in runs.items():
        scored = {}
        for qid in qrels:
            docs = run.get(qid) or []
            # rank-derived scores so ranx keeps our order exactly; a placeholder for empty results
            scored[qid] = {d: float(len(docs) - i) for i, d in enumerate(docs)} or {"__no_result__": 0.0}
        res = evaluate(q, Run(scored, name=name), METRICS, make_comparable=True)
        out[name] = {m: round(float(res[m]), 4) for m in METRICS}
    return out


def evaluate_dataset(
    dataset: BeirDataset,
    embedder,
    store_settings: StoreSettings,
    ingest: IngestSettings,
    retrieval: RetrievalSettings,
    work_dir: Path,
    methods: Sequence[str] | None = None,
    half: str = "all",
) -> tuple[EvalReport, list[QueryResults]]:
    """Every method on the queries of `half` (the searches are cached for all queries)."""
    available = standard_methods(retrieval)
    names = list(methods) if methods else DEFAULT_METHODS
    unknown = [m for m in names if m not in available]
    if unknown:
        raise HarkError(f"unknown method(s): {', '.join(unknown)}", f"choose from {', '.join(available)}")
    t0 = time.perf_counter()
    store = index_dataset(dataset, embedder, store_settings, ingest, work_dir)
    t1 = time.perf_counter()
    n = retrieval.candidates
    # one search pass serves every method: dense top-n, full-text top-n, BM25 of the dense pool,
    # as deep as the deepest method (old-default re-scores a dense top 50); `build_pool` cuts each
    deep = search_depth(retrieval, [available[m] for m in names])
    results = collect_cached(dataset, store, embedder, retrieval.model_copy(update={"candidates": deep}), Path(work_dir))
    keep = set(half_of([qr.qid for qr in results], half))
    results = [qr for qr in results if qr.qid in keep]
    t2 = time.perf_counter()
    canonical = dataset.canonical_ids()
    runs = {
        m: {qr.qid: rank_documents(qr, available[m], retrieval, n, canonical) for qr in results}
        for m in names
    }
    qrels = {q: rel for q, rel in dataset.canonical_qrels().items() if q in keep}
    scores = score_runs(qrels, runs)
    t3 = time.perf_counter()
    report = EvalReport(
        dataset=dataset.name,
        methods=scores,
        queries=len(results),
        corpus=len(dataset.corpus),
        chunks=store.count(),
        embedder=embedder.identity,
        seconds={"index": t1 - t0, "search": t2 - t1, "rank+metrics": t3 - t2},
    )
    return report, results


def limit_queries(dataset: BeirDataset, limit: int | None) -> BeirDataset:
    if not limit:
        return dataset
    keep = list(dataset.queries)[:limit]
    dataset.queries = {q: dataset.queries[q] for q in keep}
    dataset.qrels = {q: dataset.qrels[q] for q in keep}
    return dataset
