"""The words the extractive answer and the answerability decision compare: an irregular verb form
and a doubled consonant before a suffix stem like the other forms of the word."""

from __future__ import annotations

from assistant.llm.extractive import ExtractiveAnswerer
from assistant.llm.words import content_words, stem
from knowledge.types import Hit


def test_the_forms_of_a_verb_share_one_stem():
    for forms in ("write writes writer writing written wrote", "win wins winner winning won",
                  "sing sings singer singing sang sung", "build builder building built",
                  "run runner running ran", "stop stopped stopping"):
        stems = {stem(w) for w in forms.split()}
        assert len(stems) == 1, (forms, stems)
    assert stem("dresses") == "dress" and stem("fitted") == "fit"  # only the doubling a suffix made goes
    assert stem("controlled") == stem("control") and stem("labelled") == stem("label") and stem("filled") == "fill"
    assert content_words("Who wrote the song?") == ["writ", "song"]


def test_who_wrote_is_answered_by_the_sentence_saying_written_by():
    hit = Hit("c1", "song.md", "c1", "The song was released on 8 September 2001 by Parlophone in Australia. "
              "The song was written and produced by Cathy Dennis and Rob Davis in London.", 0.8)
    text = ExtractiveAnswerer(max_sentences=1).answer("Who wrote the song?", [hit])
    assert text.startswith("The song was written and produced by Cathy Dennis"), text


def test_a_shortened_word_is_its_full_form():
    assert stem("max") == stem("maximum") and stem("config") == stem("configuration") and stem("pkg") == stem("package")
    hit = Hit("c1", "amc.pdf", "c1", "Each student is given a number that is printed on the answer sheet. The maximum "
              "number of students per test is limited to 4,095.", 0.8)
    text = ExtractiveAnswerer(max_sentences=1).answer("whats the max number of students in a test?", [hit])
    assert text.startswith("The maximum number of students per test is limited to 4,095"), text


def test_a_contractions_ending_is_no_word():
    # "what's the default mode?" is two words: a short question without a subject (a follow-up)
    assert content_words("what's the default mode?") == ["default", "mod"]
    assert content_words("Why doesn't LilyPond’s beam work? I can't, it'd, we'll, you're, I've, I'm") == [
        "lilypond", "beam", "work"]
    # nor is a preposition or a conjunction ("Ossia are often written without clef" shares nothing with
    # "a note without a duration")
    assert content_words("a note without a duration, after the first one, between two bars") == [
        "not", "duration", "first", "two", "bar"]
