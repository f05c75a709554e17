"""Grounding: the threshold gate (no LLM call), the optional relevance check, and the citation
clean-up on the stream — over real HTTP where an LLM is involved."""

from __future__ import annotations

import random

import pytest

from assistant.answer import Answerer, TracedAnswer
from assistant.config import PromptSettings
from assistant.events import NOT_KNOWN, Token
from assistant.grounding import (
    CitationRewriter,
    after_marker,
    has_evidence,
    is_not_known,
    parse_relevance,
    tidy,
)
from assistant.llm.chain import LLMChain
from knowledge.types import Hit
from tests.assistant import llm_fixtures as fx
from tests.assistant.llm_fixtures import MODELS, lease_hits, llm_settings
from tests.llm_server import Reply

server, llm_server, keys = fx.server, fx.llm_server, fx.keys


def _answerer(server, prompts: PromptSettings | None = None, min_score: float | None = None) -> Answerer:
    settings = llm_settings(server, ["openai"])
    return Answerer(settings, prompts or PromptSettings(), chain=LLMChain(settings), min_score=min_score)


def _final(events) -> TracedAnswer:
    assert isinstance(events[-1], TracedAnswer)
    return events[-1]


# ---------------------------------------------------------------------- the gate before any LLM
def test_below_threshold_answers_not_known_without_calling_an_llm(llm_server, keys):
    weak = [Hit("w", "a.md", "A", "Tomatoes need sun.", 0.2, dense_score=0.12)]
    events = list(_answerer(llm_server, min_score=0.25).stream("What is the notice period?", weak))
    answer = _final(events)
    assert answer.text == NOT_KNOWN and answer.not_known and answer.provider == "grounding"
    assert [e.text for e in events if isinstance(e, Token)] == [NOT_KNOWN]
    assert llm_server.requests == []


def test_retrieval_saying_not_relevant_or_no_evidence_skips_the_llm(llm_server, keys):
    a = _answerer(llm_server)
    assert _final(list(a.stream("q", lease_hits(), relevant=False))).not_known
    assert _final(list(a.stream("q", []))).not_known
    assert llm_server.requests == []


def test_has_evidence_rules():
    hits = lease_hits()
    assert has_evidence(hits, True, 0.5)
    assert not has_evidence(hits, True, 0.9)
    assert not has_evidence(hits, False)
    web = [Hit("u", "https://example.org/a", "A", "text", 1.0)]  # web results carry no dense score
    assert has_evidence(web, True, 0.9)


# ---------------------------------------------------------------------- optional relevance check
def test_relevance_check_no_stops_before_the_answer(llm_server, keys):
    llm_server.script(MODELS["openai"], Reply("NO"))
    a = _answerer(llm_server, PromptSettings(relevance_check=True))
    answer = _final(list(a.stream("Who won the 1998 World Cup?", lease_hits())))
    assert answer.not_known and answer.provider == "relevance_check"
    (req,) = llm_server.requests  # only the check was asked, never the answer
    assert "YES or NO" in req.body["messages"][0]["content"]
    assert req.body["max_completion_tokens"] == 4


def test_relevance_check_yes_goes_on_to_answer(llm_server, keys):
    llm_server.script(MODELS["openai"], Reply("YES"), Reply("Three months [2]."))
    a = _answerer(llm_server, PromptSettings(relevance_check=True))
    answer = _final(list(a.stream("How much notice?", lease_hits())))
    assert answer.text == "Three months [1]." and answer.trace["relevance_check"] == "yes"
    assert len(llm_server.requests) == 2


def test_relevance_check_is_off_by_default(llm_server, keys):
    llm_server.script(MODELS["openai"], Reply("Three months [2]."))
    _final(list(_answerer(llm_server).stream("How much notice?", lease_hits())))
    assert len(llm_server.requests) == 1


# ---------------------------------------------------------------------- citations after the answer
def test_citations_to_no_block_are_removed_and_the_rest_renumbered(llm_server, keys):
    llm_server.script(MODELS["openai"], Reply("Rent is 900 EUR [1][7]. Notice is three months [2, 9] [12]."))
    events = list(_answerer(llm_server).stream("Rent and notice?", lease_hits()))
    answer = _final(events)
    assert answer.text == "Rent is 900 EUR [1]. Notice is three months [2]."
    assert [h.chunk_id for h in answer.cited] == ["lease-1", "lease-3"]
    assert "".join(e.text for e in events if isinstance(e, Token)) == answer.text


def test_renumbering_follows_first_citation_order():
    r = CitationRewriter(3)
    assert r.rewrite("B [3] then A [1] and B again [3].") == "B [1] then A [2] and B again [1]."
    assert r.cited == [3, 1]


def test_streamed_rewrite_equals_whole_text_rewrite_for_any_chunking():
    text = "Rent [1] is due [4]. Notice [2][3] and [x] brackets [ 2 ] stay; [1, 2, 9] end [10]."
    whole = CitationRewriter(3).rewrite(text)
    rng = random.Random(1)
    for _ in range(200):
        cuts = sorted(rng.sample(range(1, len(text)), rng.randint(1, 12)))
        pieces = [text[i:j] for i, j in zip([0, *cuts], [*cuts, len(text)], strict=True)]
        r = CitationRewriter(3)
        streamed = "".join(r.feed(p) for p in pieces) + r.finish()
        assert streamed == whole
    assert whole == "Rent [1] is due. Notice [2][3] and [x] brackets [2] stay; [1, 2] end."


def test_text_is_not_held_back_without_a_bracket():
    r = CitationRewriter(2)
    assert r.feed("The answer") == "The answer"  # streamed at once
    assert r.feed(" is [") == " is"  # only the possible citation (and its space) waits
    assert r.feed("1] here") == " [1] here"


def test_not_known_detection_and_final_marker():
    assert is_not_known("I\u2019m sorry, that information is not known to me.")
    assert is_not_known(NOT_KNOWN)
    assert not is_not_known("The notice is three months.")
    assert after_marker("Thought: x [1]\nAnswer: Three months [1].", "Answer:") == "Three months [1]."
    assert after_marker("no marker here", "Answer:") == "no marker here"
    assert parse_relevance("Yes.") is True and parse_relevance("NO") is False
    assert parse_relevance(None) is None and parse_relevance("maybe") is None


def test_cot_answer_keeps_only_the_final_part(llm_server, keys):
    reply = [
        "Block [3] is about ",
        "gardens. Block [2] gives the notice.\nAns",
        "wer: Three months' ",
        "notice [2].",
    ]
    llm_server.script(MODELS["openai"], Reply(reply))
    a = _answerer(llm_server, PromptSettings(reasoning="cot"))
    events = list(a.stream("How much notice?", lease_hits()))
    answer = _final(events)
    assert answer.text == "Three months' notice [1]."
    assert [h.chunk_id for h in answer.cited] == ["lease-3"]  # the reasoning's [3] is not a source
    # the reasoning is neither shown nor spoken: only the final part streams
    assert "".join(e.text for e in events if isinstance(e, Token)) == answer.text


def test_reasoning_without_the_marker_still_answers(llm_server, keys):
    llm_server.script(MODELS["openai"], Reply("Three months' notice [2]."))
    a = _answerer(llm_server, PromptSettings(reasoning="react"))
    events = list(a.stream("How much notice?", lease_hits()))
    assert _final(events).text == "Three months' notice [1]."
    assert "".join(e.text for e in events if isinstance(e, Token)) == "Three months' notice [1]."


@pytest.mark.parametrize("reply", ["", "   "])
def test_empty_llm_answer_is_not_known(reply, llm_server, keys):
    llm_server.script(MODELS["openai"], Reply([reply]))
    answer = _final(list(_answerer(llm_server).stream("How much notice?", lease_hits())))
    assert answer.not_known and answer.text == NOT_KNOWN


def test_tidy_keeps_the_dot_that_starts_a_file_name():
    assert tidy("Use it for .ly files , like .bashrc .") == "Use it for .ly files, like .bashrc."
