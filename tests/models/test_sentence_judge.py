"""The sentence judge: the shipped adapter on the bundled MiniLM reads a question and a sentence
together and prefers the sentence that answers, where the shared words do not tell; ONNX Runtime
runs the same model as PyTorch; a missing or mismatched adapter is a clear error."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from assistant.llm.words import content_words
from models.runtime.errors import ModelLoadError
from models.sentence_judge import META_FILE, SentenceJudge
from models.settings import JudgeSettings
from tests.conftest import ROOT

# (question, sentences, the one that answers): written for this test; the answer never shares the
# most words with the question
CASES = [
    ("Which option stops the answers from being mixed up?",
     ["shuffle: the answers of each question are mixed for every student.",
      "ordered: the answers are never mixed; they stay as written in the source file.",
      "columns=n: the answers of the question are set on n columns."], 1),
    ("Who maintains the package archive?",
     ["The package archive holds over 20,000 packages in the archive.",
      "The archive is maintained by a team of volunteers led by Anna Berg.",
      "Packages in the package archive must pass the checks before they are accepted."], 1),
]  # fmt: skip


@pytest.fixture(scope="module")
def judge() -> SentenceJudge:
    j = SentenceJudge(JudgeSettings(), ROOT)
    j.warm_up()
    return j


def test_the_sentence_that_answers_scores_highest_where_shared_words_mislead(judge):
    for question, sentences, right in CASES:
        q = set(content_words(question))
        shared = [len(q & set(content_words(s))) for s in sentences]
        assert int(np.argmax(shared)) != right  # the words alone pick another sentence
        logits = judge.logits(question, sentences)
        assert logits.shape == (len(sentences),)
        assert int(np.argmax(logits)) == right, (question, logits)


def test_onnx_runtime_runs_the_same_model_as_pytorch(judge):
    assert judge.runtime == "onnx"
    eager = SentenceJudge(JudgeSettings(runtime="torch"), ROOT)
    for question, sentences, _ in CASES:
        assert np.allclose(judge.logits(question, sentences), eager.logits(question, sentences), atol=1e-3)


def test_sentences_of_any_length_mix_keep_their_own_scores(judge):
    """Sentences run in batches of like length: each keeps the score it gets alone."""
    question, sentences, _ = CASES[1]
    many = sentences * 4 + ["Short one here.", CASES[0][1][1] * 3]
    together = judge.logits(question, many)
    alone = np.array([judge.logits(question, [s])[0] for s in many])
    assert np.allclose(together, alone, atol=1e-2)


def test_a_long_sentence_is_cut_and_nothing_is_lost(judge):
    long = "The archive is maintained by a team of volunteers led by Anna Berg. " * 80
    logits = judge.logits("Who maintains the package archive?", [long, "Tomatoes need sun."])
    assert logits.shape == (2,) and np.all(np.isfinite(logits)) and logits[0] > logits[1]
    assert judge.logits("anything", []).shape == (0,)


def test_no_adapter_or_one_for_another_base_is_a_clear_error(tmp_path):
    with pytest.raises(ModelLoadError) as missing:
        SentenceJudge(JudgeSettings(adapter_dir=str(tmp_path / "none")), ROOT).warm_up()
    assert "train-judge" in missing.value.hint
    other = tmp_path / "other"
    shutil.copytree(ROOT / JudgeSettings().adapter_dir, other)
    (other / META_FILE).write_text(json.dumps({"base_model": "roberta-base"}), encoding="utf-8")
    with pytest.raises(ModelLoadError) as mismatched:
        SentenceJudge(JudgeSettings(adapter_dir=str(other)), ROOT).warm_up()
    assert "roberta-base" in mismatched.value.message
