"""The library's terms in recognition (models/speech_bias.py, Transcriber.vocabulary): real
faster-whisper base on real speech — a Piper question with a one-letter name, the LibriVox clips
with an unrelated vocabulary."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import pytest

from bench.wer import normalise
from knowledge.vocabulary import build_vocabulary
from models.audio import decode_file
from models.settings import BiasSettings, SpeechSettings
from models.speech import Transcriber
from models.speech_bias import TermIndex, choose_bias
from tests.audio_data import R_MANUAL, librivox_clips, piper_wav
from tests.knowledge.test_vocabulary import MANUALS


@lru_cache(maxsize=1)
def _base() -> Transcriber:
    tr = Transcriber(SpeechSettings(model="base"))
    tr.warm_up()
    return tr


@pytest.fixture
def base():
    tr = _base()
    yield tr
    tr.vocabulary = None


def _r_terms() -> tuple[str, ...]:
    return tuple(build_vocabulary([("An Introduction to R", "", R_MANUAL)]).texts())


def _manual_terms() -> tuple[str, ...]:
    return tuple(build_vocabulary([("Manuals", "", MANUALS)]).texts())


@pytest.fixture(scope="module")
def r_session(tmp_path_factory) -> Path:
    return piper_wav(tmp_path_factory.mktemp("speech"), "How do I end an R session?", name="r-session")


def test_a_one_letter_name_of_the_library_is_heard(base, r_session) -> None:
    base.vocabulary = _r_terms
    text = base.transcribe(r_session).text
    assert "r session" in " ".join(normalise(text)), text
    # a streaming pass (models/streaming.py): the earlier pass's words are the hint
    samples = decode_file(r_session).samples
    passed = base.decode(samples, margin_s=6.0, hint="How do I end in our session?")
    assert "r session" in " ".join(normalise(passed.text)), passed.text


def test_an_unrelated_vocabulary_leaves_the_librivox_clips_as_they_were(base) -> None:
    clips = librivox_clips()
    plain = [base.transcribe(c.path).text for c in clips]
    base.vocabulary = _manual_terms
    biased = [base.transcribe(c.path).text for c in clips]
    assert [normalise(t) for t in biased] == [normalise(t) for t in plain]
    for text in biased:
        assert not {"lilypond", "frescobaldi", "dpkg"} & set(normalise(text))


def test_the_terms_fit_the_prompt_budget_and_words_heard_go_first(base) -> None:
    terms = tuple(f"term{i}x" for i in range(300)) + ("pstoedit", "Frescobaldi", "R")
    index = TermIndex(terms)
    settings = BiasSettings(mode="hotwords", max_tokens=40, max_terms=300)
    bias = choose_bias(index, settings, base._count_tokens, hint="which PS to edit version does fresco Baldi need")
    assert bias is not None and set(bias.hinted) == {"pstoedit", "Frescobaldi"}
    assert set(bias.terms[:2]) == {"pstoedit", "Frescobaldi"} and "R" not in bias.terms
    tokenizer = base._load().hf_tokenizer
    assert len(tokenizer.encode(" " + bias.hotwords, add_special_tokens=False).ids) <= 40
    # only the words heard (no terms given to every pass): nothing without a hint, "our" → R
    only_heard = BiasSettings(mode="prompt", max_terms=0)
    assert choose_bias(index, only_heard, base._count_tokens, hint="the weather is fine") is None
    heard = choose_bias(index, only_heard, base._count_tokens, hint="end our session")
    assert heard is not None and heard.initial_prompt == "R" and heard.hotwords is None
    assert choose_bias(TermIndex(("pstoedit",)), only_heard, base._count_tokens, hint="end our session") is None


def test_words_that_spell_a_term_are_written_the_library_s_way_and_nothing_else_changes():
    index = TermIndex(["AMC-TXT", "LilyPond", "postinst", "init", "DEB_BUILD_OPTIONS", "\\melody", "\\clef", "linewidth"])
    assert index.write("AMCTXT complains about a missing font.") == "AMC-TXT complains about a missing font."
    assert index.write("How should my post-inst start it?") == "How should my postinst start it?"
    assert index.write("Can lily pond set tablature?") == "Can LilyPond set tablature?"
    assert index.write("put the services in it script") == "put the services in it script"  # "in it": too short to join
    assert index.write("What is the weather in Paris?") == "What is the weather in Paris?"
    assert index.write("my treble clef melody and the line width") == "my treble clef melody and the line width"  # words stay words
    assert index.write("which DEB build options tag") == "which DEB_BUILD_OPTIONS tag"


def test_letters_heard_as_capitals_near_one_of_the_library_s_capitals_names_are_written_as_it():
    index = TermIndex(["AMC-TXT", "DEB_BUILD_OPTIONS", "UID", "LilyPond"])
    assert index.write("multiple answer questions in an ANCDXT file") == "multiple answer questions in an AMC-TXT file"
    assert index.write("MCDXT complains about a missing font") == "AMC-TXT complains about a missing font"
    assert index.write("NASA and the FBI were asked") == "NASA and the FBI were asked"  # no name of the library is near
    assert index.write("an amcdxt file") == "an amcdxt file"  # not heard as letters
    dotted = TermIndex(["FO", "AMC-TXT"])
    assert dotted.write("Allow a table to break across pages in F.O. output.") == "Allow a table to break across pages in FO output."
    assert dotted.write("Is it F.O.") == "Is it FO."  # its last dot ended the sentence
    assert dotted.write("The U.K. and i.e. stay.") == "The U.K. and i.e. stay."  # no name of the library
    two = TermIndex(["AMC-TXT", "AMC-TEX"])
    assert two.write("an ANC-TXX file") == "an ANC-TXX file"  # near two names: left as heard


def test_a_whole_clip_transcript_writes_the_library_s_terms(base, tmp_path):
    """Piper says "AMC-TXT"; whatever spacing whisper hears, the transcript writes the term."""
    base.vocabulary = lambda: ("AMC-TXT", "LilyPond", "postinst")
    try:
        text = base.transcribe(piper_wav(tmp_path, "AMC-TXT complains about a missing font. Which font does it use?")).text
    finally:
        base.vocabulary = None
    assert "AMC-TXT" in text, text


def test_a_word_no_word_list_has_needs_a_looser_match_to_suggest_a_term():
    index = TermIndex(["Asymptote", "LilyPond", "Frescobaldi", "pstoedit"])
    heard = "Who funded the development of Asimptop? Which editor does the lilycont manual use?"
    assert index.matching_terms(heard, 80, 6) == []  # 71 and 75: under the ratio ordinary words need
    assert set(index.matching_terms(heard, 80, 6, nonword_ratio=70)) == {"Asymptote", "LilyPond"}
    # ordinary words keep the strict ratio
    assert index.matching_terms("the lily was in the post office", 80, 6, nonword_ratio=70) == []


def test_a_second_pass_that_writes_the_term_alone_leaves_the_first_standing(base, tmp_path):
    """Given "dpkg-shlibdeps" as a hotword, whisper base heard a Piper clip of "What does dpkg
    shlibdeps do?" (Piper's variation on) as "dpkg-shlibdeps" and nothing else, and a slow one as
    "dpkg-shlibdeps do." (its temperature fallback samples: not every run). Such a pass is refused;
    one that keeps the question's other words is taken."""
    from models.speech_bias import keeps_the_rest

    assert not keeps_the_rest("What does DPKG Shlip Bet stew?", "dpkg-shlibdeps", ["dpkg-shlibdeps"])
    assert not keeps_the_rest("What does DPKG Schlibet stew?", "dpkg-shlibdeps do.", ["dpkg-shlibdeps"])
    assert keeps_the_rest("How do I end in our session?", "How do I end an R session?", ["R"])
    assert keeps_the_rest("which PS to edit version has it", "which pstoedit version has it", ["pstoedit"])
    assert keeps_the_rest("how do I get two voices per staff?", "How do I get twoVoicesPerStaff?", ["TwoVoicesPerStaff"])
    assert not keeps_the_rest("What port goes into MSNTPRC when AMC sends mail?", "msmtprc when AMC sends mail",
                              ["msmtprc"])  # the term, with the question's start dropped
    base.vocabulary = lambda: ("pkg", "dpkg-shlibdeps", "shlibs", "debian-policy")
    try:
        text = base.transcribe(piper_wav(tmp_path, "What does dpkg shlibdeps do?")).text
    finally:
        base.vocabulary = None
    assert "what does dpkg shlibdeps" in " ".join(normalise(text)), text  # the term, and the rest
