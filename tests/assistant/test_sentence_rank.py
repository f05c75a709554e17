"""The extractive answer's sentence weights: the hand-set ones unless a fitted file says otherwise."""

from __future__ import annotations

import json

import numpy as np

from assistant.llm.extractive import ExtractiveAnswerer
from assistant.llm.sentence_rank import FEATURES, HAND, SentenceWeights
from knowledge.types import Hit


def test_weights_come_from_the_file_else_the_hand_set_ones(tmp_path):
    path = tmp_path / "w.json"
    path.write_text(json.dumps({"weights": {"overlap": 2.0, "pairs": 1.0, "unknown": 5.0}}))
    fitted = SentenceWeights.load(path)
    assert fitted.values == {"overlap": 2.0, "pairs": 1.0}
    x = np.zeros((1, len(FEATURES)))
    x[0, FEATURES.index("overlap")], x[0, FEATURES.index("pairs")] = 0.5, 1.0
    assert fitted.score(x)[0] == 2.0
    assert SentenceWeights.load(tmp_path / "none.json").values == HAND
    path.write_text("{not json")
    assert SentenceWeights.load(path).values == HAND  # a damaged file: the hand-set weights, logged


def test_the_weights_decide_which_sentence_comes_first():
    hit = Hit("c1", "d.md", "Paper", "Paper sizes vary a lot between countries. The default paper size is A4.", 0.8,
              section="Paper")
    question = "What is the default paper size?"
    assert ExtractiveAnswerer(max_sentences=1).answer(question, [hit]).startswith("The default paper size is A4")
    # a ranker that prefers a chunk's opening sentence over the words it shares with the question
    contrary = ExtractiveAnswerer(max_sentences=1)
    contrary.weights = SentenceWeights({"overlap": 0.1, "opens_chunk": 5.0})
    assert contrary.answer(question, [hit]).startswith("Paper sizes vary")
