"""Retriever on a real LanceDB ChunkStore with the real MiniLM embedder (chunks written through the
store's own `replace_files`, so these tests skip unstructured's slow start; ingestion itself is
covered end to end in test_evaluate.py)."""

from __future__ import annotations

import numpy as np
import pytest

from knowledge.rerank import FALLBACK_NOTICE
from knowledge.retrieve import Retriever
from knowledge.settings import RerankSettings, RetrievalSettings, StoreSettings
from knowledge.store_view import StoreView
from knowledge.types import Chunk

DOCS = {
    "lease.txt": "The notice period in the rental agreement is three months, given in writing to the landlord.",
    "deposit.txt": "The tenant pays a security deposit of two months' rent, returned within thirty days after moving out.",
    "pets.txt": "Pets are allowed in the apartment only with the written consent of the landlord.",
    "bread.txt": "Knead the dough for ten minutes, let it rise for an hour, then bake the bread at 220 degrees.",
    "pasta.txt": "Boil the pasta in salted water for nine minutes and toss it with garlic, olive oil and chili.",
    "soup.txt": "Simmer the lentil soup with carrots, onions and cumin for forty minutes.",
    "tax.txt": "The income tax return is due on the 31st of July; late filing costs a surcharge.",
    "car.txt": "Change the engine oil every fifteen thousand kilometres and check the tyre pressure monthly.",
    "invoice.txt": "Invoice ZX-4471 from Zorblax Ltd covers the annual maintenance of the heating system.",
    "garden.txt": "Water the tomato plants every morning and prune the side shoots weekly.",
}


@pytest.fixture(scope="module")
def store(tmp_path_factory, minilm):
    from knowledge.store import ChunkStore

    uri = str(tmp_path_factory.mktemp("retrieve") / "lancedb")
    st = ChunkStore.open(uri, minilm.identity, minilm.dim, StoreSettings())
    files = {}
    for i, (path, text) in enumerate(DOCS.items()):
        chunk = Chunk(chunk_id=f"id{i:02d}", source_path=path, chunk_text=text, title=path[:-4])
        files[path] = ([chunk], minilm.embed_documents([text]))
    st.replace_files(files)
    st.update_indexes()
    return st


def _settings(**kw) -> RetrievalSettings:
    rerank = kw.pop("rerank", RerankSettings(mode="off"))
    return RetrievalSettings(candidates=8, top_k=5, rerank=rerank, **kw)


def test_dense_retrieval_finds_the_answer_and_reports_everything(store, minilm):
    r = Retriever(minilm, store, _settings(search="dense")).retrieve(
        "how long is the notice period for my flat?"
    )
    assert r.hits[0].source_path == "lease.txt"
    assert r.relevant is True
    assert len(r.hits) == 5 and len(r.candidates) == 8
    assert set(r.timings_ms) == {"embed", "search", "rerank"} and all(v >= 0 for v in r.timings_ms.values())
    assert r.notices == []
    # dense_score is the cosine of the query and chunk vectors, and the order follows it
    q = minilm.embed_query("how long is the notice period for my flat?")
    for h in r.candidates:
        assert h.dense_score == pytest.approx(float(np.dot(q, np.asarray(h.vector))), abs=1e-4)
    dense = [h.dense_score for h in r.candidates]
    assert dense == sorted(dense, reverse=True)
    assert [h.first_stage_rank for h in r.candidates] == list(range(1, 9))


def test_hybrid_zscore_promotes_an_exact_keyword_match(store, minilm):
    query = "ZX-4471"
    dense = Retriever(minilm, store, _settings(search="dense")).retrieve(query)
    hybrid = Retriever(minilm, store, _settings(search="hybrid", fusion="zscore")).retrieve(query)
    rank_dense = [h.source_path for h in dense.candidates].index("invoice.txt")
    assert hybrid.hits[0].source_path == "invoice.txt"
    assert rank_dense >= 0  # present in the dense pool; z-score fusion re-scores that pool only
    top = hybrid.hits[0]
    assert top.bm25_score and top.bm25_score > 0
    others = [h.bm25_score for h in hybrid.candidates if h.source_path != "invoice.txt"]
    assert all(b == 0.0 for b in others)  # no other chunk contains the token


def test_hybrid_rrf_fills_dense_score_for_fulltext_only_hits(store, minilm):
    s = _settings(search="hybrid", fusion="rrf")
    r = Retriever(minilm, store, s).retrieve("Zorblax heating maintenance", candidates=3)
    assert "invoice.txt" in [h.source_path for h in r.hits]
    q = minilm.embed_query("Zorblax heating maintenance")
    for h in r.candidates:
        assert h.dense_score == pytest.approx(float(np.dot(q, np.asarray(h.vector))), abs=1e-4)
    scores = [h.score for h in r.candidates]
    assert scores == sorted(scores, reverse=True)


def test_union_pool_keeps_a_keyword_match_the_dense_search_misses(store, minilm):
    query = "boil the pasta and bake the bread, Zorblax"
    dense = Retriever(minilm, store, _settings(search="dense")).retrieve(query, candidates=3)
    assert "invoice.txt" not in [h.source_path for h in dense.candidates]
    old = Retriever(minilm, store, _settings(pool="dense", bm25_weight=1.0)).retrieve(query, candidates=3)
    assert "invoice.txt" not in [h.source_path for h in old.candidates]
    new = Retriever(minilm, store, _settings(pool="union", bm25_weight=1.0)).retrieve(query, candidates=3)
    paths = [h.source_path for h in new.candidates]
    assert "invoice.txt" in paths and len(paths) > 3
    q = minilm.embed_query(query)
    for h in new.candidates:  # every member has its cosine and its BM25 (0 when no term matches)
        assert h.dense_score == pytest.approx(float(np.dot(q, np.asarray(h.vector))), abs=1e-4)
        assert h.bm25_score is not None and h.bm25_score >= 0
    invoice = new.candidates[paths.index("invoice.txt")]
    assert invoice.bm25_score > 0
    scores = [h.score for h in new.candidates]
    assert scores == sorted(scores, reverse=True)


def test_paper_rerank_runs_and_keeps_the_pool(store, minilm):
    s = _settings(search="dense", rerank=RerankSettings(mode="paper"))
    r = Retriever(minilm, store, s).retrieve("what does the tenant pay as deposit?")
    assert r.notices == []
    assert all(h.diffusion_score is not None for h in r.candidates)
    assert sum(h.diffusion_score for h in r.candidates) == pytest.approx(1.0, abs=1e-6)
    assert [h.score for h in r.hits] == sorted((h.score for h in r.hits), reverse=True)
    assert {h.chunk_id for h in r.hits} <= {h.chunk_id for h in r.candidates}


def test_overrides_and_irrelevant_query(store, minilm):
    r = Retriever(minilm, store, _settings(search="dense", min_score=0.6)).retrieve(
        "the migration of arctic terns", candidates=4, top_k=2
    )
    assert len(r.candidates) == 4 and len(r.hits) == 2
    assert r.relevant is False and r.best_dense is not None and r.best_dense < 0.6


def test_fulltext_failure_degrades_to_dense(store, minilm, monkeypatch):
    def broken(*a, **k):
        raise RuntimeError("no FTS index")

    monkeypatch.setattr(StoreView, "fts_search", broken)
    monkeypatch.setattr(StoreView, "fts_scores", broken)
    r = Retriever(minilm, store, _settings(search="hybrid")).retrieve("notice period of the lease")
    assert r.hits[0].source_path == "lease.txt"
    assert any("full-text" in n for n in r.notices)


def test_rerank_failure_keeps_first_stage_order(store, minilm, monkeypatch):
    import knowledge.rerank as rr

    def broken(*a, **k):
        raise ValueError("simulated")

    monkeypatch.setattr(rr, "personalized_pagerank", broken)
    s = _settings(search="dense", rerank=RerankSettings(mode="paper"))
    r = Retriever(minilm, store, s).retrieve("bake bread")
    assert FALLBACK_NOTICE in r.notices
    assert [h.chunk_id for h in r.hits] == [h.chunk_id for h in r.candidates[:5]]


def test_embedding_failure_falls_back_to_fulltext(store, minilm):
    class Broken:
        def embed_query(self, text):
            raise RuntimeError("model gone")

    r = Retriever(Broken(), store, _settings(search="hybrid")).retrieve("Zorblax invoice")
    assert r.hits and r.hits[0].source_path == "invoice.txt"
    assert any("embedding failed" in n for n in r.notices)
    assert r.relevant is False  # no dense evidence


def test_empty_table(tmp_path, minilm):
    from knowledge.store import ChunkStore

    st = ChunkStore.open(str(tmp_path / "db"), minilm.identity, minilm.dim, StoreSettings())
    for search in ("dense", "hybrid"):
        r = Retriever(minilm, st, _settings(search=search, rerank=RerankSettings(mode="paper"))).retrieve(
            "hello"
        )
        assert r.hits == [] and r.candidates == [] and r.relevant is False


def test_a_file_replaced_between_the_dense_and_fulltext_reads_is_seen_in_one_version(tmp_path, minilm, monkeypatch):
    """An ingest commits the new version of a file after the dense half of a search has read the old
    one: the full-text half must still see the old one (else an answer quotes both versions)."""
    from knowledge.store import ChunkStore

    st = ChunkStore.open(str(tmp_path / "lancedb"), minilm.identity, minilm.dim, StoreSettings())

    def version(code: str, cid: str) -> dict:
        text = f"The vault policy codeword is {code}. Tell it to nobody outside the team."
        chunk = Chunk(chunk_id=cid, source_path="policy.txt", chunk_text=text, title="policy")
        return {"policy.txt": ([chunk], minilm.embed_documents([text]))}

    other = "Water the tomato plants every morning and prune the side shoots weekly."
    garden = Chunk(chunk_id="g", source_path="garden.txt", chunk_text=other, title="garden")
    st.replace_files({"garden.txt": ([garden], minilm.embed_documents([other]))})
    st.replace_files(version("ALPHAQUARTZ", "old"))
    st.update_indexes()
    dense_search = StoreView.search

    def dense_then_commit(self, *a, **k):
        hits = dense_search(self, *a, **k)
        if st.count() and "old" in {h.chunk_id for h in hits}:
            st.replace_files(version("BETAGARNET", "new"))  # lands between the two halves
        return hits

    monkeypatch.setattr(StoreView, "search", dense_then_commit)
    settings = _settings(search="hybrid", fusion="zscore", pool="union")
    first = Retriever(minilm, st, settings).retrieve("what is the vault policy codeword")
    texts = " ".join(h.chunk_text for h in first.candidates)
    assert "ALPHAQUARTZ" in texts and "BETAGARNET" not in texts
    monkeypatch.setattr(StoreView, "search", dense_search)
    second = Retriever(minilm, st, settings).retrieve("what is the vault policy codeword")
    texts = " ".join(h.chunk_text for h in second.candidates)
    assert "BETAGARNET" in texts and "ALPHAQUARTZ" not in texts
