"""Embedders: the bundled MiniLM for meaning, the real open_clip ViT-B-32 architecture (random
weights) for shape and plumbing, long-text window-mean vs truncation, and the offline fallback."""

from __future__ import annotations

import numpy as np
import pytest

from models.embedder import ClipEmbedder, MiniLMEmbedder, _windows, load_embedder
from models.runtime.errors import ModelLoadError
from models.settings import EmbedderSettings

FILLER = (
    "The committee met in the town hall to discuss the annual budget, the state of the roads, "
    "the library opening hours and the schedule of the summer festival. "
)
LATE_FACT = "The secret ingredient of grandmother's apple pie is a pinch of cardamom."


@pytest.fixture(scope="module")
def minilm_torch() -> MiniLMEmbedder:
    emb = MiniLMEmbedder(EmbedderSettings(backend="minilm", minilm_runtime="torch"))
    emb.warm_up()
    return emb


def _truncating(minilm: MiniLMEmbedder) -> MiniLMEmbedder:
    """The same loaded weights, with long_text: truncate."""
    t = MiniLMEmbedder(EmbedderSettings(backend="minilm", long_text="truncate"))
    t._model, t._tok, t._max, t._once.done = minilm._model, minilm._tok, minilm._max, True
    return t


def test_minilm_unit_vectors_and_meaning(minilm) -> None:
    docs = [
        "The notice period of the lease is three months.",
        "Tomatoes need full sun.",
        "Bake bread at 250 C.",
    ]
    m = minilm.embed_documents(docs)
    assert m.shape == (3, 384) and m.dtype == np.float32
    assert np.allclose(np.linalg.norm(m, axis=1), 1.0, atol=1e-5)
    q = minilm.embed_query("how long before I can leave my flat?")
    assert int(np.argmax(m @ q)) == 0
    assert minilm.identity == "minilm-l6-v2-wmax" and minilm.dim == 384


def test_window_encoding_matches_sentence_transformers_on_short_text(minilm, minilm_torch) -> None:
    texts = [
        "Short text about the garden.",
        "Another, slightly longer sentence about the weekly budget meeting.",
    ]
    ours = minilm.embed_documents(texts)
    ref = minilm_torch._model.model.encode(texts, normalize_embeddings=True)  # sentence-transformers itself
    assert np.allclose(ours, ref, atol=1e-5)


def test_batching_does_not_change_an_embedding(minilm) -> None:
    texts = ["tiny", FILLER * 8, "a medium length sentence about bicycles and their repair"]
    together = minilm.embed_documents(texts)
    alone = np.vstack([minilm.embed_documents([t]) for t in texts])
    assert np.allclose(together, alone, atol=1e-5)


def test_window_mean_sees_the_end_of_a_long_text_truncation_does_not(minilm) -> None:
    long_text = FILLER * 12 + LATE_FACT  # ~330 words: the fact lies beyond MiniLM's 256-token window
    assert len(minilm._token_ids(long_text)) > minilm.window_size
    trunc = _truncating(minilm)
    q = minilm.embed_query("what is the secret ingredient in the apple pie?")
    mean_score = float(minilm.embed_documents([long_text])[0] @ q)
    trunc_score = float(trunc.embed_documents([long_text])[0] @ q)
    assert mean_score > trunc_score + 0.1
    # a short text is one window: both modes agree exactly
    assert np.allclose(minilm.embed_documents([LATE_FACT]), trunc.embed_documents([LATE_FACT]), atol=1e-6)
    assert trunc.identity == "minilm-l6-v2-trunc"  # different vectors, different table


def test_windows_cover_every_token_with_overlap() -> None:
    ids = list(range(600))
    wins = _windows(ids, 254, 8)
    assert all(len(w) <= 254 for w in wins)
    assert wins[0][0] == 0 and wins[-1][-1] == 599
    for a, b in zip(wins, wins[1:], strict=False):
        assert a[-8:] == b[:8]
    assert _windows(list(range(10)), 254, 8) == [list(range(10))]


@pytest.fixture(scope="module")
def clip_random() -> ClipEmbedder:
    emb = ClipEmbedder(EmbedderSettings(), random_weights=True)
    emb.warm_up()
    return emb


def test_clip_keeps_only_the_text_tower_with_the_same_text_vectors() -> None:
    import open_clip
    import torch

    torch.manual_seed(1234)
    full = open_clip.create_model("ViT-B-32", pretrained=None).eval()
    torch.manual_seed(1234)  # the same random weights
    emb = ClipEmbedder(EmbedderSettings(), random_weights=True)
    emb.warm_up()
    assert isinstance(emb._model.visual, torch.nn.Identity)  # the image tower's memory is freed
    kept = sum(p.numel() for p in emb._model.parameters())
    assert kept < 0.5 * sum(p.numel() for p in full.parameters())
    text = "the notice period of the lease"
    with torch.inference_mode():
        ref = full.encode_text(open_clip.get_tokenizer("ViT-B-32")([text]))[0].numpy()
    np.testing.assert_allclose(emb.embed_query(text), ref / np.linalg.norm(ref), atol=1e-5)


def test_clip_architecture_shapes_and_windows(clip_random: ClipEmbedder) -> None:
    assert clip_random.dim == 512 and clip_random.identity == "clip-vit-b-32-random-wmax"
    assert clip_random.window_size == 75  # 77 tokens less start and end
    texts = ["a photo of a cat", FILLER * 4]  # the second is ~100 words: several windows
    assert len(clip_random._token_ids(texts[1])) > 75
    m = clip_random.embed_documents(texts)
    assert m.shape == (2, 512) and np.allclose(np.linalg.norm(m, axis=1), 1.0, atol=1e-5)
    alone = clip_random.embed_documents([texts[1]])[0]
    assert np.allclose(alone, m[1], atol=1e-4)
    trunc = ClipEmbedder(EmbedderSettings(long_text="truncate"), random_weights=True)
    trunc._model, trunc._tokenizer, trunc._ctx, trunc._torch = (
        clip_random._model,
        clip_random._tokenizer,
        clip_random._ctx,
        clip_random._torch,
    )
    trunc._once.done = True
    first_window_only = trunc.embed_documents([texts[1]])[0]
    assert not np.allclose(first_window_only, alone, atol=1e-3)


def test_offline_clip_falls_back_to_minilm_and_says_why(monkeypatch, tmp_path, caplog) -> None:
    import huggingface_hub.constants as hc

    monkeypatch.setattr(hc, "HF_HUB_CACHE", str(tmp_path / "empty-cache"))  # no cached CLIP weights
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    emb = load_embedder(EmbedderSettings(backend="clip"))
    assert emb.is_fallback and emb.identity == "minilm-l6-v2-wmax" and emb.dim == 384
    assert "CLIP weights unavailable" in emb.fallback_reason
    assert any("offline fallback" in r.getMessage() for r in caplog.records)
    with pytest.raises(ModelLoadError) as info:
        load_embedder(EmbedderSettings(backend="clip", offline_fallback=False))
    assert "embedder.backend: text" in info.value.hint


def test_text_model_prefixes_and_identity(minilm) -> None:
    assert EmbedderSettings().backend == "text" and MiniLMEmbedder(EmbedderSettings()).identity == "minilm-l6-v2-wmax"
    prefixed = MiniLMEmbedder(EmbedderSettings(query_prefix="query: ", passage_prefix="passage: "))
    assert prefixed.identity != minilm.identity and prefixed.identity.startswith("st-all-minilm-l6-v2-p")
    other = MiniLMEmbedder(EmbedderSettings(query_prefix="question: ", passage_prefix="passage: "))
    assert other.identity != prefixed.identity  # another prefix is another vector space
    prefixed._model, prefixed._tok, prefixed._max, prefixed._once.done = minilm._model, minilm._tok, minilm._max, True
    q, p = "how long is the notice period?", "The notice period is three months."
    assert np.allclose(prefixed.embed_query(q), minilm.embed_documents([f"query: {q}"])[0], atol=1e-5)
    assert np.allclose(prefixed.embed_documents([p])[0], minilm.embed_documents([f"passage: {p}"])[0], atol=1e-5)
    assert not np.allclose(prefixed.embed_query(q), minilm.embed_query(q), atol=1e-3)
    # a long passage has several windows, each led by the prefix (so each holds less of the text)
    long = FILLER * 40 + LATE_FACT
    wins, owners = prefixed.embed_windows([long])
    assert len(wins) > 1 and set(owners.tolist()) == {0}
    assert len(wins) >= len(minilm.embed_windows([long])[0])  # the prefix takes room in each window


def test_embed_passages_gives_the_mean_and_every_window_in_one_pass(minilm) -> None:
    blend = MiniLMEmbedder(EmbedderSettings(backend="minilm", long_text="window_max"))
    blend._model, blend._tok, blend._max, blend._once.done = minilm._model, minilm._tok, minilm._max, True
    texts = [FILLER * 12 + LATE_FACT, LATE_FACT]
    means, windows = blend.embed_passages(texts)
    assert np.allclose(means, minilm.embed_documents(texts), atol=1e-5)  # the vector column: window_mean's
    assert [w.shape[0] for w in windows] == [2, 1]
    assert np.allclose(np.concatenate(windows), minilm.embed_windows(texts)[0], atol=1e-6)
    assert blend.identity == "minilm-l6-v2-wmax" and blend.stores_windows
    assert not _truncating(minilm).stores_windows


def test_smaller_windows_are_another_vector_space_with_a_window_for_the_late_fact(minilm) -> None:
    small = MiniLMEmbedder(EmbedderSettings(window_tokens=32))
    small._model, small._tok, small._max, small._once.done = minilm._model, minilm._tok, minilm._max, True
    assert small.identity == "minilm-l6-v2-w32-wmax" and small.stores_windows  # a library is read again
    text = FILLER * 3 + LATE_FACT
    _, [default_windows] = minilm.embed_passages([text])
    _, [small_windows] = small.embed_passages([text])
    assert len(default_windows) == 1 and len(small_windows) > 3  # one 254-token window against many
    fact = minilm.embed_query("What is the secret ingredient of the apple pie?")
    # the late fact has a window nearly to itself: its best window is much closer to the question
    assert float((small_windows @ fact).max()) > float((default_windows @ fact).max()) + 0.1
    assert small.embed_query("a short question").shape == fact.shape  # a query within one window is unchanged
    assert np.allclose(small.embed_query("a short question"), minilm.embed_query("a short question"), atol=1e-6)
