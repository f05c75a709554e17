"""The gold-string check of `eval grounding`: fair to the answer as read out, never lenient."""

from __future__ import annotations

from assistant.grounding_eval import holds_gold


def test_the_citation_marker_a_voice_skips_does_not_hide_the_gold_string():
    answer = "The song appears on the 1989 album Sleeping with the Past [1]."
    assert holds_gold(answer, ["Sleeping with the Past."])  # NQ's gold string, with its full stop
    assert holds_gold("Der Test begann am 27.\nJanuar 1967 [2].", ["27. Januar 1967"])


def test_numbers_accents_and_other_words_are_not_normalised():
    assert not holds_gold("It enrolls 16801 students [1].", ["16,801"])
    assert not holds_gold("Máximo Gómez fought on [1].", ["Maximo Gomez"])
    assert not holds_gold("The song appears on the album [1].", ["Sleeping with the Past"])


def test_the_summary_counts_the_sentences_of_the_answers_given_not_the_refusals():
    from assistant.events import NOT_KNOWN
    from assistant.grounding_eval import Row, summarise

    def row(text: str, not_known: bool = False, own: bool = True) -> Row:
        return Row("q", "Who?", own, not_known, 0.5, {}, text)

    rows = [row("One whole sentence [1]."), row("First [1]. Second one [1]. Third one [2]."),
            row(NOT_KNOWN, not_known=True), row("Out of scope answer [1]. Two [1]. Three [1].", own=False)]
    s = summarise(rows)
    assert s["sentences_per_answer"] == 2.0 and s["at_most_two_sentences"] == 0.5
    assert s["answerable_false_not_known"] == round(1 / 3, 4) and s["out_of_scope_not_known"] == 0.0
