"""Evaluation harness: metric sanity on hand-made qrels, the BEIR loader, and a small real end-to-end
run on a slice of nq_oracle through Hark's Ingestor + ChunkStore, checked against an independent
exact-cosine computation."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys

import numpy as np
import pytest

from knowledge.beir import doc_file_text, doc_filename, doc_id_from_path, load_beir
from knowledge.evaluate import METRICS
from tests.conftest import EVAL_DATA, ROOT


def _write_beir(folder, corpus, queries, qrels):
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in corpus), encoding="utf-8")
    (folder / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in queries), encoding="utf-8")
    lines = ["query-id\tcorpus-id\tscore"] + [f"{q}\t{d}\t{s}" for q, d, s in qrels]
    (folder / "qrels" / "test.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")


def _score_runs_interpreted(qrels: dict, runs: dict) -> dict:
    """`knowledge.evaluate.score_runs` in a child process with numba's compiler off: ranx's metric
    code runs as plain Python, with the same results, and without the ~50 s compile a fresh install
    pays on its first ranx call (cheap for a case this small)."""
    code = (
        "import json, sys; from knowledge.evaluate import score_runs; "
        "qrels, runs = json.load(sys.stdin); print(json.dumps(score_runs(qrels, runs)))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        input=json.dumps([qrels, runs]),
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "NUMBA_DISABLE_JIT": "1"},
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


def test_metrics_on_hand_made_qrels(tmp_path):
    _write_beir(
        tmp_path,
        corpus=[{"_id": f"d{i}", "title": "", "text": f"doc {i}"} for i in range(1, 9)],
        queries=[{"_id": "q1", "text": "one"}, {"_id": "q2", "text": "two"}, {"_id": "q3", "text": "three"}],
        qrels=[("q1", "d1", 1), ("q2", "d2", 1), ("q2", "d3", 1), ("q3", "d4", 1)],
    )
    ds = load_beir(tmp_path)
    assert ds.qrels == {"q1": {"d1": 1}, "q2": {"d2": 1, "d3": 1}, "q3": {"d4": 1}}
    runs = {
        "m": {
            "q1": ["d5", "d1", "d6"],  # relevant at rank 2
            "q2": ["d3", "d5", "d6", "d7", "d8", "d2"],  # ranks 1 and 6
            "q3": [],  # nothing retrieved
        }
    }
    got = _score_runs_interpreted(ds.qrels, runs)["m"]
    assert set(got) == set(METRICS)
    l2 = math.log2
    q1 = {"ndcg": 1 / l2(3), "mrr": 0.5, "r5": 1.0, "r20": 1.0}
    idcg2 = 1 + 1 / l2(3)
    q2 = {"ndcg5": 1 / idcg2, "ndcg10": (1 + 1 / l2(7)) / idcg2, "mrr": 1.0, "r5": 0.5, "r20": 1.0}
    assert got["ndcg@5"] == pytest.approx((q1["ndcg"] + q2["ndcg5"]) / 3, abs=1e-4)
    assert got["ndcg@10"] == pytest.approx((q1["ndcg"] + q2["ndcg10"]) / 3, abs=1e-4)
    assert got["ndcg@20"] == pytest.approx(got["ndcg@10"], abs=1e-4)
    assert got["mrr@10"] == pytest.approx((0.5 + 1.0) / 3, abs=1e-4)
    assert got["recall@5"] == pytest.approx((1.0 + 0.5) / 3, abs=1e-4)
    assert got["recall@20"] == pytest.approx(2 / 3, abs=1e-4)


def test_doc_files_round_trip_ids():
    for doc_id in ["p0", "Super_Bowl_50_0", "a/b c?.txt", "ünï–code"]:
        name = doc_filename(doc_id)
        assert "/" not in name
        assert doc_id_from_path(f"sub/{name}") == doc_id


def test_not_a_beir_folder(tmp_path):
    from models.runtime.errors import HarkError

    with pytest.raises(HarkError, match="BEIR"):
        load_beir(tmp_path)


@pytest.mark.slow
def test_end_to_end_slice_through_the_real_store(tmp_path, minilm, capsys):
    """100 nq_oracle passages ingested by Hark; dense nDCG@10 equals an independent exact-cosine run."""
    from knowledge.settings import IngestSettings, RetrievalSettings, StoreSettings
    from models.settings import EmbedderSettings
    from ui.cli_eval import eval_retrieval_command

    full = load_beir(EVAL_DATA / "nq_oracle")
    corpus = full.corpus[:100]
    ids = {d.doc_id for d in corpus}
    qids = [q for q, rel in full.qrels.items() if set(rel) <= ids][:40]
    assert len(qids) == 40
    data = tmp_path / "slice"
    _write_beir(
        data,
        corpus=[{"_id": d.doc_id, "title": d.title, "text": d.text} for d in corpus],
        queries=[{"_id": q, "text": full.queries[q]} for q in qids],
        qrels=[(q, d, s) for q in qids for d, s in full.qrels[q].items()],
    )
    out = tmp_path / "out.json"
    methods = ["bm25", "dense", "dense+ppr", "dense+ppr-paper", "hybrid", "hybrid+ppr"]
    rc = eval_retrieval_command(
        EmbedderSettings(backend="minilm"),
        StoreSettings(),
        IngestSettings(),
        RetrievalSettings(),
        data,
        methods,
        str(out),
        work_dir=tmp_path / "work",
    )
    assert rc == 0
    report = json.loads(out.read_text())
    assert report["dataset"] == "slice"
    assert list(report["methods"]) == methods
    for scores in report["methods"].values():
        assert set(scores) == set(METRICS) and all(0.0 <= v <= 1.0 for v in scores.values())
    assert "ndcg@10" in capsys.readouterr().out  # the printed table

    # independent dense run: exact cosine of the same texts, own nDCG for one relevant doc per query
    docs = minilm.embed_documents([doc_file_text(d) for d in corpus])
    queries = minilm.embed_documents([full.queries[q] for q in qids])
    sims = queries @ docs.T
    gains = []
    for i, q in enumerate(qids):
        (gold,) = full.qrels[q]
        rank = 1 + int(np.sum(sims[i] > sims[i, [d.doc_id for d in corpus].index(gold)]))
        gains.append(1 / math.log2(rank + 1) if rank <= 10 else 0.0)
    assert report["methods"]["dense"]["ndcg@10"] == pytest.approx(float(np.mean(gains)), abs=0.01)
    # the paper's diffusion really reorders (it is not the dense order under another name)
    assert report["methods"]["dense+ppr-paper"] != report["methods"]["dense"]

    # the report half: the odd-position queries only (searches cached), the side-by-side table
    capsys.readouterr()
    rc = eval_retrieval_command(
        EmbedderSettings(backend="minilm"), StoreSettings(), IngestSettings(), RetrievalSettings(),
        [data, data], ["bm25", "dense", "default"], str(out), work_dir=tmp_path / "work", half="report",
    )
    assert rc == 0
    both = json.loads(out.read_text())
    assert both["half"] == "report" and len(both["sets"]) == 2
    odd = float(np.mean(gains[1::2]))
    assert both["sets"][0]["methods"]["dense"]["ndcg@10"] == pytest.approx(odd, abs=0.01)
    printed = capsys.readouterr().out
    assert "20 queries (report half)" in printed
    table = printed[printed.index("nDCG@10, report half"):]
    row = next(line for line in table.splitlines() if line.startswith("slice"))
    assert f"{both['sets'][0]['methods']['dense']['ndcg@10']:.4f}" in row
    assert "mean, xquad=1" in table


def test_cut_is_the_shallower_search_and_methods_override_the_settings():
    from knowledge.evaluate import OLD_DEFAULT, QueryResults, cut, search_depth, standard_methods
    from knowledge.retrieve import SearchResults
    from knowledge.settings import RetrievalSettings
    from knowledge.types import Hit

    dense = [Hit(f"d{i}", f"d{i}.txt", "", "", 1 - i / 10, dense_score=1 - i / 10) for i in range(6)]
    fts = [Hit(f"f{i}", f"f{i}.txt", "", "", 9 - i, bm25_score=9 - i) for i in range(6)]
    qr = QueryResults("q", "text", np.zeros(3), SearchResults(dense, fts, {h.chunk_id: 0.5 for h in dense}))
    short = cut(qr, 2)
    assert [h.chunk_id for h in short.results.dense] == ["d0", "d1"]
    assert [h.chunk_id for h in short.results.fts] == ["f0", "f1"]
    assert short.results.pool_bm25 == {"d0": 0.5, "d1": 0.5}
    assert len(qr.results.dense) == 6  # the cached results are not changed
    base = RetrievalSettings(bm25_weight=2.0, pool="union")
    old = OLD_DEFAULT.settings(base)
    assert (old.pool, old.bm25_weight, old.candidates, old.search) == ("dense", 0.5, 50, "hybrid")
    default = standard_methods(base)["default"].settings(base)
    assert (default.pool, default.bm25_weight) == ("union", 2.0)
    # the searches are cut as deep as the deepest method needs (old-default: a dense top 50)
    methods = standard_methods(base)
    assert search_depth(base, [methods["default"], methods["rrf"]]) == base.candidates == 20
    assert search_depth(base, [methods["default"], OLD_DEFAULT]) == 50


def test_halves_and_the_mean_over_sets():
    from knowledge.evaluate import half_of, weighted_mean
    from models.runtime.errors import HarkError

    qids = ["a", "b", "c", "d", "e"]
    assert half_of(qids, "select") == ["a", "c", "e"]
    assert half_of(qids, "report") == ["b", "d"]
    assert half_of(qids, "all") == qids
    with pytest.raises(HarkError):
        half_of(qids, "held")
    # the four XQuAD views weigh as one set
    per_set = {"nq_oracle": 0.9, "covid_faq": 0.3, "xquad_en": 1.0, "xquad_de": 0.6, "xquad_en_noisy": 0.8, "xquad_de_en": 0.6}
    assert weighted_mean(per_set) == pytest.approx((0.9 + 0.3 + 0.75) / 3)
