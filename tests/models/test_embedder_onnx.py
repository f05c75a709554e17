"""MiniLM on ONNX Runtime: the same vectors and the same rankings as sentence-transformers on
PyTorch (so existing tables stay valid), the export written once into the cache (also when several
sessions start together), and PyTorch — with one warning — when ONNX cannot be had."""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from models.embedder import MiniLMEmbedder
from models.embedder_onnx import EXPORT_FORMAT, cache_path
from models.settings import EmbedderSettings
from models.weights import minilm_path
from tests.conftest import EVAL_DATA, ROOT

NQ = EVAL_DATA / "nq_oracle"
FILLER = (
    "The committee met in the town hall to discuss the annual budget, the state of the roads, "
    "the library opening hours and the schedule of the summer festival. "
)
LONG = FILLER * 12 + "The secret ingredient of grandmother's apple pie is a pinch of cardamom."
ODD = ["", "a", "Ünïcödé naïve café — 東京 ☕", "x " * 400, "[CLS] [SEP] [PAD] tokens in the text"]


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


@pytest.fixture(scope="module")
def nq() -> tuple[list[str], list[str], list[str], list[str]]:
    """200 real passages (title + text), their ids, and 40 real questions whose gold passage is
    among them with that gold id."""
    corpus = _jsonl(NQ / "corpus.jsonl")[:200]
    ids = [d["_id"] for d in corpus]
    gold: dict[str, str] = {}
    for line in (NQ / "qrels" / "test.tsv").read_text(encoding="utf-8").splitlines()[1:]:
        qid, did, *_ = line.split("\t")
        gold[qid] = did
    queries = [q for q in _jsonl(NQ / "queries.jsonl") if gold.get(q["_id"]) in set(ids)][:40]
    passages = [f"{d['title']}\n{d['text']}" for d in corpus]
    return passages, ids, [q["text"] for q in queries], [gold[q["_id"]] for q in queries]


@pytest.fixture(scope="module")
def torch_minilm() -> MiniLMEmbedder:
    emb = MiniLMEmbedder(EmbedderSettings(backend="minilm", minilm_runtime="torch"))
    emb.warm_up()
    return emb


@pytest.fixture(scope="module")
def nq_vectors(nq, minilm, torch_minilm) -> dict[str, np.ndarray]:
    passages, _, queries, _ = nq
    return {
        "docs_onnx": minilm.embed_documents(passages),
        "docs_torch": torch_minilm.embed_documents(passages),
        "q_onnx": np.vstack([minilm.embed_query(q) for q in queries]),
        "q_torch": np.vstack([torch_minilm.embed_query(q) for q in queries]),
    }


def test_default_minilm_runs_on_onnx_in_the_same_vector_space(minilm, torch_minilm) -> None:
    from assistant.config import load_config

    assert load_config(ROOT / "config.yaml").embedder.minilm_runtime == "onnx"
    assert minilm.runtime == "onnx" and minilm.runtime_note == ""
    assert torch_minilm.runtime == "torch"
    # the table name depends on the identity: it must not depend on the runtime
    assert minilm.identity == torch_minilm.identity == "minilm-l6-v2-wmax"


def test_onnx_vectors_equal_torch_on_real_short_long_and_padded_batches(
    nq, nq_vectors, minilm, torch_minilm
) -> None:
    assert np.abs(nq_vectors["docs_onnx"] - nq_vectors["docs_torch"]).max() <= 1e-4
    encoder = minilm._model  # batches ran on their own all-core session, queries on the 1-thread one
    assert (encoder.threads, encoder.batch_threads) == (1, 0) and encoder._batch is not encoder.session
    assert np.abs(nq_vectors["q_onnx"] - nq_vectors["q_torch"]).max() <= 1e-4
    # one batch mixing a 1-token and a 254-token window (heavy padding), a multi-window text, odd input
    passages, _, queries, _ = nq
    texts = [*queries[:5], LONG, *passages[:5], *ODD]
    assert len(minilm._token_ids(LONG)) > minilm.window_size
    onnx, ref = minilm.embed_documents(texts), torch_minilm.embed_documents(texts)
    assert np.allclose(np.linalg.norm(onnx, axis=1), 1.0, atol=1e-5)
    assert np.abs(onnx - ref).max() <= 1e-4
    windows = [minilm._token_ids("tomatoes")[:1], minilm._token_ids(LONG)[: minilm.window_size], [7592]]
    raw_onnx, raw_torch = minilm._encode_windows(windows), torch_minilm._encode_windows(windows)
    norm = np.linalg.norm
    assert (
        np.abs(
            raw_onnx / norm(raw_onnx, axis=1)[:, None] - raw_torch / norm(raw_torch, axis=1)[:, None]
        ).max()
        <= 1e-4
    )
    # padding does not leak into a short row: alone it embeds the same
    assert np.abs(minilm._encode_windows(windows[:1]) - raw_onnx[:1]).max() <= 1e-4


def test_onnx_and_torch_rank_the_same_top10_on_nq_oracle(nq, nq_vectors) -> None:
    _, ids, queries, gold = nq
    top = {}
    for rt in ("onnx", "torch"):
        scores = nq_vectors[f"q_{rt}"] @ nq_vectors[f"docs_{rt}"].T
        top[rt] = [[ids[j] for j in np.argsort(-row, kind="stable")[:10]] for row in scores]
    assert top["onnx"] == top["torch"]
    found = sum(g in t for g, t in zip(gold, top["onnx"], strict=True))
    assert found >= 0.9 * len(queries)  # a real retrieval, not noise (dense nDCG@10 ≈ 0.95 on this set)


def test_token_ids_equal_the_transformers_tokenizer(nq, minilm) -> None:
    from transformers import AutoTokenizer

    hf = AutoTokenizer.from_pretrained(minilm_path(minilm.settings.minilm_model))
    passages, _, queries, _ = nq
    for text in [*queries, *passages[:50], LONG, *ODD]:
        want = hf(text, add_special_tokens=False, truncation=False, verbose=False)["input_ids"]
        assert minilm._token_ids(text) == want
    assert len(minilm._token_ids(LONG)) > 128  # tokenizer.json truncates at 128: ours must not


def _exports(caplog) -> int:
    return sum("exporting the sentence embedder" in r.getMessage() for r in caplog.records)


def test_export_happens_once_when_sessions_start_together(tmp_path, monkeypatch, caplog, minilm) -> None:
    cache = tmp_path / "cache"
    monkeypatch.setenv("HARK_CACHE", str(cache))
    caplog.set_level(logging.INFO, logger="models.embedder_onnx")
    questions = ["who wrote the iliad", "when did the berlin wall fall", "how tall is mount everest", "hi"]
    a = MiniLMEmbedder(EmbedderSettings(backend="minilm"))
    b = MiniLMEmbedder(EmbedderSettings(backend="minilm"))
    start = threading.Barrier(4)
    out: dict[int, np.ndarray] = {}

    def ask(i: int) -> None:
        start.wait()
        out[i] = (a if i % 2 else b).embed_query(questions[i])

    threads = [threading.Thread(target=ask, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    assert len(out) == 4 and a.runtime == b.runtime == "onnx"
    assert _exports(caplog) == 1
    for i, q in enumerate(questions):
        assert np.abs(out[i] - minilm.embed_query(q)).max() <= 1e-5
    target = cache_path(Path(minilm_path(a.settings.minilm_model)), cache)
    assert sorted(p.name for p in target.parent.iterdir()) == [target.with_suffix(".json").name, target.name]
    assert json.loads(target.with_suffix(".json").read_text())["max_seq_length"] == 256
    c = MiniLMEmbedder(EmbedderSettings(backend="minilm"))
    c.warm_up()  # reused from the cache: no second export
    assert c.runtime == "onnx" and _exports(caplog) == 1


def test_damaged_cache_file_is_exported_again(tmp_path, monkeypatch, caplog, minilm) -> None:
    cache = tmp_path / "cache"
    monkeypatch.setenv("HARK_CACHE", str(cache))
    caplog.set_level(logging.INFO, logger="models.embedder_onnx")
    target = cache_path(Path(minilm_path(minilm.settings.minilm_model)), cache)
    target.parent.mkdir(parents=True)
    target.write_bytes(b"\x08\x07half-written garbage")
    target.with_suffix(".json").write_text(json.dumps({"max_seq_length": 256, "format": EXPORT_FORMAT}))
    killed = target.parent / "0123abcd.onnx.4242-1.tmp"  # an export SIGKILLed two hours ago
    killed.write_bytes(b"half")
    os.utime(killed, (time.time() - 7200, time.time() - 7200))
    running = target.parent / "4567cdef.onnx.4343-1.tmp"  # another process exporting right now
    running.write_bytes(b"half")
    emb = MiniLMEmbedder(EmbedderSettings(backend="minilm"))
    q = "what is the capital of australia"
    assert np.abs(emb.embed_query(q) - minilm.embed_query(q)).max() <= 1e-5
    assert emb.runtime == "onnx" and _exports(caplog) == 1
    assert any("does not load" in r.getMessage() for r in caplog.records)
    assert target.stat().st_size > 1_000_000
    assert not killed.exists() and running.exists()


def test_unusable_cache_falls_back_to_torch_with_one_warning(
    tmp_path, monkeypatch, caplog, torch_minilm
) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the cache folder should be")  # mkdir fails, even for root
    monkeypatch.setenv("HARK_CACHE", str(blocker))
    caplog.set_level(logging.WARNING, logger="models.embedder")
    emb = MiniLMEmbedder(EmbedderSettings(backend="minilm"))
    texts = ["the tenant must give three months notice", LONG]
    got = emb.embed_documents(texts)
    emb.embed_query("and a second call")
    assert emb.runtime == "torch" and "ONNX Runtime unavailable" in emb.runtime_note
    warnings = [r for r in caplog.records if r.name == "models.embedder" and r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "runs on PyTorch" in warnings[0].getMessage()
    assert np.abs(got - torch_minilm.embed_documents(texts)).max() <= 1e-6
    assert emb.identity == "minilm-l6-v2-wmax"


class _FailingSession:
    """An ONNX Runtime session that fails while running (as on an allocation failure)."""

    def run(self, *args: object, **kwargs: object) -> object:
        from onnxruntime.capi.onnxruntime_pybind11_state import RuntimeException

        raise RuntimeException("simulated: failed to allocate memory")


def test_onnx_failing_while_running_switches_to_pytorch_for_good(torch_minilm, caplog) -> None:
    emb = MiniLMEmbedder(EmbedderSettings(backend="minilm"))
    emb.warm_up()
    assert emb.runtime == "onnx"
    emb._model.session = emb._model._batch = _FailingSession()
    texts = ["Who wrote the declaration of independence?", "The capital of Australia is Canberra."]
    with caplog.at_level(logging.WARNING, logger="models.embedder"):
        query = emb.embed_query(texts[0])  # the failing call is answered, by PyTorch
        docs = emb.embed_documents(texts)
    assert emb.runtime == "torch" and "failed while running" in emb.runtime_note
    assert "RuntimeException" in emb.runtime_note
    assert sum("runs on PyTorch from now on" in r.getMessage() for r in caplog.records) == 1
    np.testing.assert_allclose(query, torch_minilm.embed_query(texts[0]), atol=1e-5)
    np.testing.assert_allclose(docs, torch_minilm.embed_documents(texts), atol=1e-5)
    assert emb.identity == torch_minilm.identity  # the same table: vectors of one space
