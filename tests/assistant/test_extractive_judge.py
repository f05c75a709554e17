"""The offline answer with the sentence judge: the judge reorders the best candidates when an answer
is composed, never the ranking the answerability decision reads; a failing judge costs nothing but
its say; with the shipped judge, the option that answers is quoted where shared words pick another."""

from __future__ import annotations

import logging

import numpy as np

from assistant.llm.extractive import ExtractiveAnswerer
from knowledge.types import Hit
from models.sentence_judge import SentenceJudge
from models.settings import JudgeSettings
from tests.conftest import ROOT

OPTIONS = Hit("c1", "quiz-guide.md", "Quiz guide",
              "Every question can take options after its title.\n\n"
              "shuffle: the answers of each question are mixed for every student.\n\n"
              "ordered: the answers are never mixed; they stay as written in the source file.\n\n"
              "columns=n: the answers of the question are set on n columns.", 0.9, section="Question options")  # fmt: skip
QUESTION = "Which option stops the answers from being mixed up?"


class Recorder:
    """A judge that prefers sentences holding `word`, and records what it was asked."""

    def __init__(self, word: str) -> None:
        self.word, self.calls = word, []

    def __call__(self, question: str, sentences: list[str]) -> np.ndarray:
        self.calls.append(list(sentences))
        return np.array([4.0 if self.word in s else 0.0 for s in sentences])


def test_the_judge_moves_its_choice_first_among_the_candidates_it_reads():
    plain = ExtractiveAnswerer(max_sentences=1)
    ranked = plain.rank(QUESTION, [OPTIONS])
    assert not ranked[0].text.startswith("ordered")
    judge = Recorder("never mixed")
    judged = ExtractiveAnswerer(max_sentences=1, judge=judge, judge_candidates=len(ranked))
    assert judged.answer(QUESTION, [OPTIONS]).startswith("ordered: the answers are never mixed")
    assert len(judge.calls) == 1 and len(judge.calls[0]) == len(ranked)
    # each read under its section, an entry's name not said twice
    assert "Question options: ordered: the answers are never mixed; they stay as written in the source file." in judge.calls[0]
    assert all(c.startswith("Question options: ") for c in judge.calls[0])


def test_only_the_best_candidates_are_judged():
    ranked = ExtractiveAnswerer().rank(QUESTION, [OPTIONS])
    right = next(i for i, s in enumerate(ranked) if s.text.startswith("ordered"))
    judge = Recorder("never mixed")
    few = ExtractiveAnswerer(max_sentences=1, judge=judge, judge_candidates=right)  # the right one not among them
    assert len(few.judged(QUESTION, ranked)) == len(ranked)
    assert not few.answer(QUESTION, [OPTIONS]).startswith("ordered")
    assert all(len(c) == right for c in judge.calls)


def test_the_answerability_ranking_is_not_judged():
    judge = Recorder("never mixed")
    with_judge = ExtractiveAnswerer(judge=judge).rank_with_similarity(QUESTION, [OPTIONS])
    without = ExtractiveAnswerer().rank_with_similarity(QUESTION, [OPTIONS])
    assert [(s.text, s.score) for s in with_judge[0]] == [(s.text, s.score) for s in without[0]]
    assert judge.calls == []


def test_a_failing_judge_leaves_the_answer_the_words_give(caplog):
    def broken(question: str, sentences: list[str]) -> np.ndarray:
        raise RuntimeError("onnx session died")

    def short(question: str, sentences: list[str]) -> np.ndarray:
        return np.zeros(1)

    expected = ExtractiveAnswerer(max_sentences=1).answer(QUESTION, [OPTIONS])
    with caplog.at_level(logging.WARNING):
        assert ExtractiveAnswerer(max_sentences=1, judge=broken).answer(QUESTION, [OPTIONS]) == expected
        assert ExtractiveAnswerer(max_sentences=1, judge=short).answer(QUESTION, [OPTIONS]) == expected
    assert "sentence judge failed" in caplog.text


def test_the_shipped_judge_quotes_the_option_that_answers():
    judge = SentenceJudge(JudgeSettings(), ROOT)
    words_only = ExtractiveAnswerer(max_sentences=1).answer(QUESTION, [OPTIONS])
    judged = ExtractiveAnswerer(max_sentences=1, judge=judge.logits).answer(QUESTION, [OPTIONS])
    assert not words_only.startswith("ordered"), words_only
    assert judged.startswith("ordered: the answers are never mixed"), judged


def test_the_app_loads_the_judge_and_answers_on_without_one(hark_config, tmp_path, caplog):
    from assistant.components import load_judge

    assert load_judge(hark_config) is None  # off unless asked for
    hark_config.judge.enabled = True
    judge = load_judge(hark_config)
    assert judge is not None and judge(QUESTION, ["a", "b"]).shape == (2,)
    hark_config.judge.adapter_dir = str(tmp_path / "no-adapter")
    with caplog.at_level(logging.WARNING):
        assert load_judge(hark_config) is None
    assert "sentence judge is unavailable" in caplog.text


def test_german_is_left_to_the_words():
    """The judge learnt English: a German question is not judged, nor are German sentences."""
    mixed = Hit("c2", "ordnung.md", "Ordnung",
                "Die Ordnung tritt am 1. Oktober 2020 in Kraft und gilt für alle Studierenden.\n\n"
                "The regulations enter into force on 1 October 2020 for all students.\n\n"
                "The English text is a translation; the German text of the regulations is binding.", 0.9)  # fmt: skip
    judge = Recorder("force")
    ExtractiveAnswerer(judge=judge).answer("Wann tritt die Ordnung in Kraft?", [mixed])
    assert judge.calls == []
    ExtractiveAnswerer(judge=judge).answer("When do the regulations enter into force?", [mixed])
    assert len(judge.calls) == 1 and not any("Ordnung tritt" in s for s in judge.calls[0])


def test_the_judge_picks_the_first_sentence_the_words_still_pick_what_follows():
    words = ExtractiveAnswerer(max_sentences=2)
    ranked = words.rank(QUESTION, [OPTIONS])
    judged = ExtractiveAnswerer(max_sentences=2, judge=Recorder("never mixed"))
    text = judged.compose(QUESTION, judged.judged(QUESTION, ranked))
    assert text.startswith("ordered: the answers are never mixed")
    # the words' best is as close to the judge's pick as before: it follows, the judge's margin aside
    assert ranked[0].text.split(":")[0] in text and text.count("[1]") == 2, text


def test_nothing_to_rank_is_nothing_to_judge():
    judge = Recorder("x")
    assert ExtractiveAnswerer(judge=judge).judged("Who wrote it?", []) == []
    assert judge.calls == []
