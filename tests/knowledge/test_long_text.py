"""`embedder.long_text: window_max`: every encoder window of a chunk is stored (a LanceDB multivector
column beside the mean vector) and a chunk is scored by the best cosine among its windows and its mean,
one hit per chunk. Real LanceDB in a temp dir, real MiniLM, real ingest."""

from __future__ import annotations

import numpy as np
import pytest

from knowledge.ingest import Ingestor
from knowledge.open_library import open_store
from knowledge.reindex import reindex_plan
from knowledge.retrieve import Retriever
from knowledge.settings import IngestSettings, RerankSettings, RetrievalSettings, StoreSettings
from models.embedder import MiniLMEmbedder
from models.settings import EmbedderSettings

FILLER = [
    "The bakery opened its doors on the market square in the spring of that year.",
    "Its ovens were fired with beech wood, which gave the crust a faint smoky taste.",
    "Rye loaves were shaped by hand and left to rise overnight in linen baskets.",
    "On Saturdays the queue reached the fountain before the church bells rang seven.",
    "The miller delivered flour twice a week on a cart pulled by two grey horses.",
    "Apprentices learned to fold the dough for pretzels before they could knead bread.",
    "In winter the shop sold spiced honey cakes wrapped in waxed brown paper.",
    "A fire in the back room closed the bakery for a month, and neighbours lent their ovens.",
]
FACT = "The lighthouse keeper on Skerry Island feeds his cat Marmalade fresh sardines every Tuesday."
# one 444-word chunk (500-word chunks asked for) of three encoder windows; the fact is in the third window only
LONG = " ".join(FILLER[i % len(FILLER)] for i in range(30)) + " " + FACT
SHORT = {
    "lighthouses.txt": "Lighthouses guide ships along rocky coasts with a rotating lamp at night.",
    "cats.txt": "Cats are fed twice a day; most cats prefer wet food to dry kibble.",
    "fishing.txt": "Sardines are caught in large nets off the coast in late summer.",
    "island.txt": "Skerry Island is a small rocky island with a harbour and a post office.",
}
QUESTION = "What does the lighthouse keeper feed his cat?"


@pytest.fixture(scope="module")
def library(tmp_path_factory, minilm):
    """The same folder indexed as window_mean, then (in the same library) as window_max."""
    root = tmp_path_factory.mktemp("long_text")
    folder = root / "notes"
    folder.mkdir()
    (folder / "bakery.txt").write_text(LONG, encoding="utf-8")
    for name, text in SHORT.items():
        (folder / name).write_text(text, encoding="utf-8")
    uri = str(root / "lancedb")
    mean_emb = MiniLMEmbedder(EmbedderSettings(backend="minilm", long_text="window_mean"))
    mean_emb._model, mean_emb._tok, mean_emb._max, mean_emb._once.done = minilm._model, minilm._tok, minilm._max, True
    mean = open_store(mean_emb, StoreSettings(), uri)
    Ingestor(mean, mean_emb, IngestSettings(isolation="inline", chunk_words=500, overlap_words=50)).ingest([folder])
    blend_emb = MiniLMEmbedder(EmbedderSettings(backend="minilm", long_text="window_max"))
    blend_emb._model, blend_emb._tok, blend_emb._max, blend_emb._once.done = minilm._model, minilm._tok, minilm._max, True
    blend = open_store(blend_emb, StoreSettings(), uri)
    plan = reindex_plan(blend)  # before this layout's table holds anything
    Ingestor(blend, blend_emb, IngestSettings(isolation="inline", chunk_words=500, overlap_words=50)).ingest(plan.paths if plan else [])
    return {"mean": mean, "blend": blend, "emb": blend_emb, "plan": plan, "uri": uri, "folder": folder}


def test_another_layout_is_a_table_of_its_own_and_is_indexed_again_from_the_other(library, minilm):
    mean, blend, plan = library["mean"], library["blend"], library["plan"]
    assert blend.identity == "minilm-l6-v2-wmax" and mean.identity == "minilm-l6-v2" and blend.name != mean.name
    assert plan is not None and plan.source_table == mean.name and plan.files == 5
    assert blend.count() == mean.count() == 5
    assert {d.source_path for d in blend.documents()} == {d.source_path for d in mean.documents()}


def test_a_fact_only_in_a_chunks_third_window_ranks_that_chunk_first(library, minilm):
    q = minilm.embed_query(QUESTION)
    old = library["mean"].search(q, 5)
    new = library["blend"].search(q, 5)
    assert old[0].source_path != "bakery.txt"  # the mean of three windows dilutes the fact
    assert new[0].source_path == "bakery.txt"
    wins = new[0].windows
    assert wins is not None and wins.shape == (3, minilm.dim)
    assert FACT in new[0].chunk_text and LONG.index(FACT) > 0.9 * len(LONG)
    # the score is the rule: the best of its windows and its mean vector; here its third window
    mean_cos = float(np.asarray(new[0].vector) @ q)
    assert new[0].dense_score == pytest.approx(float(wins[2] @ q), abs=1e-5) and new[0].dense_score > mean_cos + 0.1


def test_results_are_one_hit_per_chunk_with_its_text(library, minilm):
    hits = library["blend"].search(minilm.embed_query(QUESTION), 10)
    assert len(hits) == 5 and len({h.chunk_id for h in hits}) == 5
    by_path = {h.source_path: h for h in hits}
    assert by_path["bakery.txt"].chunk_text.startswith(FILLER[0]) and by_path["cats.txt"].chunk_text == SHORT["cats.txt"]
    assert by_path["cats.txt"].windows.shape == (1, minilm.dim)
    assert "windows" not in by_path["bakery.txt"].to_dict() and "vector" not in by_path["bakery.txt"].to_dict()
    scores = [h.dense_score for h in hits]
    assert scores == sorted(scores, reverse=True)


def test_the_lancedb_search_scores_as_the_in_memory_one(library, minilm):
    """With a filter (or memory_search off, or above the ANN threshold) the search runs in LanceDB:
    the mean-vector and the multivector top lists, rescored by the rule."""
    q = minilm.embed_query(QUESTION)
    memory = library["blend"].search(q, 5)
    filtered = library["blend"].search(q, 5, where="source_path != 'none.txt'")
    off = open_store(library["emb"], StoreSettings(memory_search=False), library["uri"]).search(q, 5)
    for got in (filtered, off):
        assert [h.chunk_id for h in got] == [h.chunk_id for h in memory]
        assert [h.dense_score for h in got] == pytest.approx([h.dense_score for h in memory], abs=1e-5)
        assert got[0].windows is not None and got[0].windows.shape == (3, minilm.dim)
    only = library["blend"].search(q, 5, where="source_path = 'bakery.txt'")
    assert [h.source_path for h in only] == ["bakery.txt"]


def test_a_full_text_hit_carries_the_score_the_dense_search_gives_its_chunk(library, minilm):
    blend = library["blend"]
    q = minilm.embed_query(QUESTION)
    dense = {h.chunk_id: h.dense_score for h in blend.search(q, 5)}
    fts = blend.fts_search("Marmalade sardines Tuesday", 5)
    assert fts and all(h.dense_score is None for h in fts)
    expect = {h.chunk_id: dense[h.chunk_id] for h in fts}
    scored = blend.view(text_search=True).dense_scores(fts, q)  # windows from the in-memory snapshot
    assert {h.chunk_id: h.dense_score for h in scored} == pytest.approx(expect, abs=1e-5)
    off = open_store(library["emb"], StoreSettings(memory_search=False), library["uri"])
    scored = off.view(text_search=True).dense_scores(off.fts_search("Marmalade sardines Tuesday", 5), q)
    assert {h.chunk_id: h.dense_score for h in scored} == pytest.approx(expect, abs=1e-5)  # … from LanceDB
    # through the retriever: a full-text-only candidate (dense top 1 leaves the rest out) too
    settings = RetrievalSettings(candidates=1, top_k=5, rerank=RerankSettings(mode="off"))
    query = "Which cat is called Marmalade?"
    got = Retriever(library["emb"], blend, settings).retrieve(query)
    assert {h.source_path for h in got.candidates} == {"cats.txt", "bakery.txt"}
    dense = {h.chunk_id: h.dense_score for h in blend.search(minilm.embed_query(query), 5)}
    for h in got.candidates:
        assert h.dense_score == pytest.approx(dense[h.chunk_id], abs=1e-5)


def test_above_the_ann_threshold_both_vector_columns_are_indexed_and_searched(tmp_path):
    from knowledge.store import ChunkStore
    from knowledge.types import Chunk

    dim, rng = 16, np.random.default_rng(3)
    settings = StoreSettings(ann_threshold=256, ann_partitions=4)
    store = ChunkStore.open(str(tmp_path / "db"), "synthetic-wmax", dim, settings)
    chunks, means, windows = [], [], []
    for i in range(300):
        w = rng.normal(size=(1 + i % 3, dim)).astype(np.float32)
        w /= np.linalg.norm(w, axis=1, keepdims=True)
        m = w.sum(0) / np.linalg.norm(w.sum(0))
        chunks.append(Chunk(f"c{i:03d}", f"f{i // 10}.txt", f"chunk number {i}", "t"))
        means.append(m)
        windows.append(w)
    store.replace_files({"all.txt": (chunks, np.asarray(means), windows)})
    store.update_indexes()
    names = {tuple(i.columns) for i in store.table.list_indices()}
    assert {("vector",), ("windows",)} <= names and store.has_vector_index()
    q = windows[122][2]  # the third window of chunk 122
    blend = np.array([max(float(np.max(w @ q)), float(m @ q)) for w, m in zip(windows, means, strict=True)])
    best = [f"c{i:03d}" for i in np.argsort(-blend)[:5]]
    ann, exact = store.search(q, 5), store.search(q, 5, exact=True)
    assert [h.chunk_id for h in exact] == [h.chunk_id for h in ann] == best
    assert [h.dense_score for h in ann] == pytest.approx(sorted(blend, reverse=True)[:5], abs=1e-5)
