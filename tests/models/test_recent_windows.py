"""A window the embedder encoded a moment ago (the question, searched and then assessed) is read
back, not encoded again; with a real MiniLM, the vectors are the ones the encoder gives."""

from __future__ import annotations

import numpy as np

from models.embedder import MiniLMEmbedder
from models.recent_windows import RecentWindows
from models.settings import EmbedderSettings


def test_the_least_recently_used_window_goes_first():
    recent = RecentWindows(size=2)
    recent.put([1, 2], np.ones(3))
    recent.put([3], np.zeros(3))
    assert recent.get([1, 2]) is not None  # now the most recent
    recent.put([4], np.full(3, 2.0))
    assert recent.get([3]) is None and recent.get([1, 2]) is not None and recent.get([4]) is not None


def test_the_question_searched_is_not_encoded_again_beside_its_sentences(minilm):
    emb = MiniLMEmbedder(EmbedderSettings(backend="minilm"))  # its own recent windows
    emb.warm_up()
    seen: list[int] = []
    encode = emb._encode_windows

    def counting(windows):
        seen.append(len(windows))
        return encode(windows)

    emb._encode_windows = counting  # type: ignore[method-assign]
    question = "What is the default paper size for the FO output?"
    sentence = "paper.type selects the paper type; the default is USletter."
    query = emb.embed_query(question)
    both = emb.embed_documents([question, sentence])
    assert seen == [1, 1]  # the query's window, then only the sentence's
    fresh = minilm.embed_documents([question, sentence])  # another embedder: both encoded
    assert np.allclose(both, fresh, atol=1e-5) and np.allclose(query, fresh[0], atol=1e-5)
    # a model with query and passage prefixes never shares a window between the two
    e5 = MiniLMEmbedder(EmbedderSettings(backend="minilm", query_prefix="query: ", passage_prefix="passage: "))
    e5.warm_up()
    e5_encode, e5_seen = e5._encode_windows, []
    e5._encode_windows = lambda w: (e5_seen.append(len(w)), e5_encode(w))[1]  # type: ignore[method-assign]
    e5.embed_query(question)
    e5.embed_documents([question])
    assert e5_seen == [1, 1]
