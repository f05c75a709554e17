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


def test_a_refusal_is_told_apart_from_a_search_that_missed_the_gold_passage(hark_config, tmp_path):
    """A real library (MiniLM, LanceDB in tmp_path): the evidence of a question holds its judged passage
    or not, and the summary splits false "not known" by it."""
    import json

    from assistant.grounding_eval import build, run_pairing, summarise
    from knowledge.beir import load_beir

    docs = {
        "boiler": "The boiler in the cellar is serviced every October by Becker Heating, and its pressure must stay "
                  "between one and two bar.",
        "keys": "The spare key of the cabin hangs on the hook behind the woodshed door.",
        "bins": "Paper bins are emptied on Tuesdays, and glass goes to the container on Mill Street.",
        "wifi": "The cabin's wifi network is called Lakeview and its router sits above the fridge.",
    }
    questions = {
        "q1": ("Who services the boiler in the cellar?", "boiler"),
        "q2": ("Where does the spare key of the cabin hang?", "keys"),
        "q3": ("On which day are the paper bins emptied?", "wifi"),  # judged against the wrong passage
    }
    d = tmp_path / "set"
    (d / "qrels").mkdir(parents=True)
    (d / "corpus.jsonl").write_text("".join(json.dumps({"_id": k, "title": "", "text": v}) + "\n"
                                            for k, v in docs.items()))
    (d / "queries.jsonl").write_text("".join(json.dumps({"_id": k, "text": q}) + "\n" for k, (q, _) in questions.items()))
    (d / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + "".join(
        f"{k}\t{doc}\t1\n" for k, (_, doc) in questions.items()))
    hark_config.llm.order = []
    hark_config.prompts.context_blocks = 1  # the answer is made from the first passage only
    library, retriever, answerer = build(hark_config, d, tmp_path / "work")
    rows = {r.qid: r for r in run_pairing(library, load_beir(d), retriever, answerer)}
    assert rows["q1"].found_gold and rows["q2"].found_gold and not rows["q3"].found_gold
    assert not rows["q1"].not_known and rows["q1"].cited_gold
    s = summarise(list(rows.values()))
    assert s["found_gold"] == round(2 / 3, 4)
    assert s["false_not_known_missed"] == float(rows["q3"].not_known)
