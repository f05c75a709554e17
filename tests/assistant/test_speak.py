"""assistant/speak.py: the first clause, then sentences, from a token stream, ready for a voice and
spoken as they complete."""

from __future__ import annotations

import random

import numpy as np
import pytest

from assistant.speak import SentenceSplitter, speak_stream
from assistant.speech_text import clean as clean_for_speech
from models.settings import TTSSettings
from models.tts import Synthesiser

ANSWER = (
    "**Answer:** Dr. Smith says the notice period is 3.5 months [1]. It starts on the first day, "
    "e.g. the 1st of May.[2] Is that clear? Yes!\n"
    "- Pay the rent by the 5th.\n"
    "- Keep the receipts\n\n"
    "1. First step\n2. Second step\n"
    "See [the lease](http://example.com/lease.pdf) or https://example.com for more, etc. The end... "
    "J. R. R. Tolkien wrote at 3 p.m. on Mondays [3][4]. Done"
)
EXPECTED = [
    "Answer: Doctor Smith says the notice period is 3.5 months.",
    "It starts on the first day, for example, the 1st of May.",
    "Is that clear?",
    "Yes!",
    "Pay the rent by the 5th.",
    "Keep the receipts",
    "First step",
    "Second step",
    "See the lease or the link for more, et cetera.",
    "The end...",
    "J R R Tolkien wrote at 3 p.m. on Mondays.",
    "Done",
]
CLAUSES = (
    "According to the tenancy handbook [1], the landlord returns the deposit within thirty days, "
    "minus any repairs. You must give notice in writing, and keep a copy; the landlord confirms it."
)
CLAUSES_EXPECTED = [
    "According to the tenancy handbook,",
    "the landlord returns the deposit within thirty days, minus any repairs.",
    "You must give notice in writing, and keep a copy; the landlord confirms it.",
]


def _split(chunks: list[str], first_clause_words: int = 8, phrase_words: int = 4, determiner_words: int = 6) -> list[str]:
    s = SentenceSplitter(
        first_clause_words=first_clause_words, phrase_words=phrase_words, determiner_words=determiner_words
    )
    out = [sentence for c in chunks for sentence in s.feed(c)]
    return out + s.flush()


def _sentences(chunks: list[str]) -> list[str]:
    return _split(chunks, first_clause_words=0)


def test_whole_text():
    assert _split([ANSWER]) == EXPECTED
    assert _split([CLAUSES]) == CLAUSES_EXPECTED


@pytest.mark.parametrize("seed", range(12))
def test_chunk_boundaries_anywhere_give_the_same_pieces(seed):
    rng = random.Random(seed)
    for text, expected in ((ANSWER, EXPECTED), (CLAUSES, CLAUSES_EXPECTED)):
        chunks, i = [], 0
        while i < len(text):
            n = rng.choice([1, 1, 2, 3, 5, 8, 13])
            chunks.append(text[i : i + n])
            i += n
        assert _split(chunks) == expected


def test_one_character_at_a_time():
    assert _split(list(ANSWER)) == EXPECTED
    assert _split(list(CLAUSES)) == CLAUSES_EXPECTED


def test_speech_starts_at_the_first_clause():
    s = SentenceSplitter()
    assert s.feed("Yes, the notice period") == []  # "Yes," is one word: too short to be a clause
    assert s.feed(" is three months, and") == ["Yes, the notice period is three months,"]
    assert s.feed(" it starts on the first day, so") == []  # later pieces are whole sentences
    assert s.feed(" plan ahead. ") == ["and it starts on the first day, so plan ahead."]


def test_a_first_clause_without_punctuation_ends_after_about_eight_words():
    # never right after a word that leans on the next one: "the", "of", a number, "Dr."
    def split(text: str) -> list[str]:
        return _split([text], phrase_words=0)  # no early end before a phrase: the word count alone

    assert split("The deposit is returned within thirty days after the keys are handed back to you.") == [
        "The deposit is returned within thirty days after the keys",
        "are handed back to you.",
    ]
    assert split("Tenants in the building on the corner of the street pay 950 euros in rent.") == [
        "Tenants in the building on the corner of the street",
        "pay 950 euros in rent.",
    ]
    # a citation or full stop right after the eighth word stays with it
    assert split("The deposit is returned within thirty full days [2]. Then more.") == [
        "The deposit is returned within thirty full days.",
        "Then more.",
    ]


def test_a_first_clause_of_four_words_or_more_ends_before_a_phrase():
    """Right before a preposition or conjunction that opens a phrase of its own, once it has
    `phrase_words` words: shorter, so the voice starts sooner, and still a natural break."""
    assert _split(["The deposit is returned within thirty days after the keys are handed back to you."]) == [
        "The deposit is returned",
        "within thirty days after the keys are handed back to you.",
    ]
    assert _split(["Tenants in the building on the corner of the street pay 950 euros in rent."]) == [
        "Tenants in the building",
        "on the corner of the street pay 950 euros in rent.",
    ]
    # not before "to" or (under six words) an article, never after a word that leans on the next,
    # a number, or a word with a citation: the eight-word rule decides then
    assert _split(["The tenant wants to give the landlord a written notice of two months [1]."], determiner_words=0) == [
        "The tenant wants to give the landlord a written",
        "notice of two months.",
    ]
    assert _split(["Rent is 950 euros per month [1], due on the first."]) == [
        "Rent is 950 euros per month,",
        "due on the first.",
    ]
    assert _split(["The deposit is returned [1] within thirty days. Then more."]) == [
        "The deposit is returned within thirty days.",
        "Then more.",
    ]
    # the next word decides only once it is complete ("in" or "inside"), so chunking never matters
    s = SentenceSplitter()
    assert s.feed("The deposit is returned in") == []
    assert s.feed("side the month. ") == ["The deposit is returned inside the month."]


def test_a_first_clause_of_six_words_or_more_ends_before_a_determiner():
    """An article or another determiner opens a noun phrase: from `determiner_words` words the first
    clause may end right before it, where the eight-word rule would part an adjective from its noun
    ("a written | notice"). Sooner it would part a verb from its object, so it does not."""
    assert _split(["The tenant wants to give the landlord a written notice of two months [1]."]) == [
        "The tenant wants to give the landlord",
        "a written notice of two months.",
    ]
    assert _split(["You must give the landlord a written notice period of two months."]) == [
        "You must give the landlord a written notice",
        "period of two months.",
    ]
    assert _split(["The amount that the tenant pays the landlord each month is fixed."]) == [
        "The amount that the tenant pays the landlord",
        "each month is fixed.",
    ]
    # the next word decides only once it is complete ("the" or "three")
    s = SentenceSplitter()
    assert s.feed("The tenant wants to give the landlord th") == []
    assert s.feed("ree letters. ") == ["The tenant wants to give the landlord three letters."]


def test_a_short_first_sentence_is_followed_by_a_first_clause():
    assert _split(["Yes. The deposit comes back within thirty days, minus repairs. Keep it."], phrase_words=0) == [
        "Yes.",
        "The deposit comes back within thirty days,",
        "minus repairs.",
        "Keep it.",
    ]


def test_sentences_only_when_the_first_clause_is_off():
    s = SentenceSplitter(first_clause_words=0)
    assert s.feed(CLAUSES) == [
        "According to the tenancy handbook, the landlord returns the deposit within thirty days, minus any repairs."
    ]


def test_a_sentence_is_released_only_when_the_next_character_arrives():
    s = SentenceSplitter()
    assert s.feed("The rate is 3.") == []  # could still become "3.5"
    assert s.feed("5 percent. Then") == ["The rate is 3.5 percent."]
    assert s.feed(" more") == []
    assert s.feed(" [1") == []
    assert s.feed("].") == []
    assert s.feed(" ") == ["Then more."]
    assert s.flush() == []


def test_citations_and_markdown_are_never_spoken():
    spoken = " ".join(_split([ANSWER]))
    for symbol in ("[", "]", "*", "#", "http", "(", "`"):
        assert symbol not in spoken
    assert clean_for_speech("## Sources [1][2]") == "Sources"
    assert clean_for_speech("[1]") == ""
    assert clean_for_speech("Use `launch.py` with __care__ | col 2 |") == "Use launch.py with care, col 2,"


def test_abbreviation_before_capital_ends_a_sentence_only_when_it_must():
    assert _sentences(["Bring pens, paper, etc. The exam starts at nine."]) == [
        "Bring pens, paper, et cetera.",
        "The exam starts at nine.",
    ]
    assert _sentences(["Cats, dogs etc. are allowed."]) == ["Cats, dogs et cetera are allowed."]
    assert _sentences(["Mr. and Mrs. Dashwood vs. the Ferrars, cf. chapter 2."]) == [
        "Mister and Missus Dashwood versus the Ferrars, compare chapter 2."
    ]


def test_a_long_run_without_full_stop_is_cut_at_a_comma():
    clause = "the landlord may keep part of the deposit for damage beyond normal wear"
    text = ", ".join([clause] * 8) + "."
    out = _sentences([text])
    assert len(out) >= 2
    assert all(len(s) <= 300 for s in out)
    assert " ".join(out).replace(",", "").split() == text.replace(",", "").split()


class _Consumption:
    """A token stream that records how many tokens have been taken from it."""

    def __init__(self, tokens: list[str]) -> None:
        self.tokens = tokens
        self.taken = 0

    def __iter__(self):
        for tok in self.tokens:
            self.taken += 1
            yield tok


def test_first_sentence_is_spoken_before_the_stream_ends():
    tokens = ["The notice", " period is", " three months.", " You must", " give it", " in writing", " to the",
              " landlord.", " Keep", " a copy", " of the", " letter."]  # fmt: skip
    stream = _Consumption(tokens)
    audio = speak_stream(stream, Synthesiser(TTSSettings()))
    rate, first = next(audio)
    assert stream.taken == 4  # "three months." is confirmed by the space of the fourth token
    assert rate == 22050 and first.dtype == np.int16 and len(first) > rate  # > 1 s of speech
    rest = list(audio)
    assert stream.taken == len(tokens)
    assert len(rest) == 2


def test_a_broken_synthesiser_makes_the_answer_silent_not_broken(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))  # no espeak-ng program
    stream = _Consumption(["One. ", "Two. ", "Three."])
    out = list(speak_stream(stream, Synthesiser(TTSSettings(engine="espeak-ng", backend="command"))))
    assert out == []
    assert stream.taken == 3


def test_no_speech_engine_at_all_does_not_stop_the_assistant_from_starting(tmp_path):
    """Spoken answers are optional: with neither Piper nor eSpeak NG the synthesiser part still
    builds (its warm-up logs why), and speaking says it is unavailable."""
    import os
    import subprocess
    import sys

    from tests.conftest import ROOT

    code = (
        "import sys; sys.modules['espeakng_loader'] = None; sys.modules['piper'] = None\n"
        "from assistant.config import load_config\n"
        "from assistant.components import Components\n"
        f"cfg = load_config({str(ROOT / 'config.yaml')!r})\n"
        "synth = Components(cfg).synthesiser.get()\n"
        "print('available', synth.available())\n"
    )
    env = dict(os.environ, PATH=str(tmp_path), PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert done.stdout.strip() == "available False", done.stderr
    assert "spoken answers unavailable: Spoken answers are unavailable" in done.stderr
