"""The rules that refuse what the answerability model would answer (assistant/answer_rules.py)."""

from __future__ import annotations

from assistant.answer_rules import other_document, refusal
from knowledge.types import Hit

AMC = Hit("a1", "amc-manual.pdf", "Auto Multiple Choice", "When mode equals 2, the pages are taken from the sheet.", 0.6)
DOCBOOK = Hit("d1", "docbook-xsl-reference.pdf", "DocBook XSL Stylesheets: Reference Documentation",
              "webhelp.include.search.tab: Should the search tab be included?", 0.5)


def test_a_document_named_by_a_rare_title_word_must_be_where_the_answer_comes_from():
    question = "Is there a dark mode for the DocBook webhelp output?"
    assert other_document(question, [AMC, DOCBOOK], "amc-manual.pdf")
    assert not other_document(question, [AMC, DOCBOOK], "docbook-xsl-reference.pdf")
    # "Auto Multiple Choice": ordinary words name no document; nor does a title the pool does not hold
    assert not other_document("Which multiple choice options does the DocBook list have?", [AMC], "amc-manual.pdf")
    assert not other_document("How do I pick a mode?", [AMC, DOCBOOK], "amc-manual.pdf")
    # a topic a follow-up rewrite added in parentheses is not a document the user asked about
    assert not other_document("Which mode is the default (DocBook)?", [AMC, DOCBOOK], "amc-manual.pdf")


def test_refusal_names_the_rule_and_records_what_each_found():
    reason, found = refusal("Is there a dark mode for the DocBook webhelp output?", None, [AMC], [AMC, DOCBOOK],
                            "amc-manual.pdf")  # fmt: skip
    assert reason == "other_document" and found == {"unknown_terms": 0.0, "absent_asked": 0.0, "other_document": 1.0}
    assert refusal("How do I pick a mode?", None, [AMC], [AMC, DOCBOOK], "amc-manual.pdf")[0] == ""
