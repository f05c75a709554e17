"""Routing of a turn: the classifier's label, the confidence threshold, the per-session
always-web switch, and the rules used when the classifier is missing or fails."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from assistant.routing import Route, about_this_chat, library_may_answer, route, rule_intent


@dataclass
class Prediction:
    label: str
    confidence: float
    scores: dict[str, float] = field(default_factory=dict)


class Scripted:
    """Returns a given prediction (the classifier's output is this test's input)."""

    def __init__(self, label: str, confidence: float) -> None:
        self.pred = Prediction(label, confidence, {label: confidence})

    def predict(self, text: str) -> Prediction:
        return self.pred


class Broken:
    def predict(self, text: str) -> Prediction:
        raise RuntimeError("model crashed")


def test_confident_labels_are_followed():
    texts = {
        "rag_search": "what is the notice period",
        "web_search": "weather in paris",
        "greeting": "hello",
        "conversation_meta": "what did I ask you first?",
    }
    for label, text in texts.items():
        r = route(text, always_web=False, classifier=Scripted(label, 0.9), threshold=0.5)
        assert (r.label, r.source, r.predicted) == (label, "classifier", label)


@pytest.mark.parametrize(
    "text",
    ["How quickly does the support team answer emails?", "When are the meeting minutes published?"],
)
def test_a_question_that_names_no_one_in_the_chat_is_not_about_the_chat(text):
    r = route(text, always_web=False, classifier=Scripted("conversation_meta", 0.62), threshold=0.5)
    assert (r.label, r.source, r.predicted) == ("rag_search", "rules", "conversation_meta")


@pytest.mark.parametrize(
    "text", ["what did i ask u before", "recap pls", "shorten that", "what was my second question"]
)
def test_questions_about_the_chat_stay_meta(text):
    r = route(text, always_web=False, classifier=Scripted("conversation_meta", 0.9), threshold=0.5)
    assert r.label == "conversation_meta"


def test_below_the_threshold_goes_to_rag_search():
    r = route("q", always_web=False, classifier=Scripted("web_search", 0.49), threshold=0.5)
    assert (r.label, r.source, r.predicted) == ("rag_search", "threshold", "web_search")
    r = route("q", always_web=False, classifier=Scripted("greeting", 0.3), threshold=0.2)
    assert r.label == "greeting"  # the threshold is the configured one


def test_the_session_switch_sends_every_question_to_the_web():
    for label in ("rag_search", "web_search"):
        r = route("q", always_web=True, classifier=Scripted(label, 0.99), threshold=0.5)
        assert (r.label, r.source) == ("web_search", "switch")
    # greetings and questions about the conversation keep their short answers
    assert (
        route("hi", always_web=True, classifier=Scripted("greeting", 0.99), threshold=0.5).label == "greeting"
    )


@pytest.mark.parametrize("classifier", [None, Broken(), Scripted("unknown_label", 0.99)])
def test_without_a_working_classifier_the_rules_route(classifier):
    r = route("Hello there!", always_web=False, classifier=classifier, threshold=0.5)
    assert (r.label, r.source) == ("greeting", "rules")
    assert (
        route("What is the notice period?", always_web=False, classifier=classifier, threshold=0.5).label
        == "rag_search"
    )


@pytest.mark.parametrize(
    "text,label",
    [
        ("hi", "greeting"), ("Good morning, Hark!", "greeting"), ("thanks so much", "greeting"),
        ("What did I ask first?", "conversation_meta"), ("summarise our conversation", "conversation_meta"),
        ("search the web for the latest news about the elections", "web_search"),
        ("what's the weather in Paris today", "web_search"),
        ("hi, what is the notice period in my lease?", "rag_search"),
        ("What does the handbook say about attendance?", "rag_search"),
    ],
)  # fmt: skip
def test_rules(text, label):
    assert rule_intent(text) == label


def test_a_follow_up_keeps_the_path_it_follows():
    tell_me_more = Scripted("greeting", 0.94)  # what a single-utterance classifier may well say
    for path in ("rag_search", "web_search"):
        r = route("tell me more", always_web=False, classifier=tell_me_more, threshold=0.5, follows=path)
        assert (r.label, r.source, r.predicted) == (path, "follow-up", "greeting")
    # following a greeting or a question about the conversation changes nothing
    r = route("tell me more", always_web=False, classifier=tell_me_more, threshold=0.5, follows="greeting")
    assert (r.label, r.source) == ("greeting", "classifier")
    # the session switch still wins
    r = route("tell me more", always_web=True, classifier=tell_me_more, threshold=0.5, follows="rag_search")
    assert (r.label, r.source) == ("web_search", "switch")


@pytest.mark.parametrize(
    "text",
    ["what did i ask u before", "What did I ask you first in this session?", "repeat your previous answer please",
     "can you summarise what weve covered", "which files did you use to answer that", "recap pls",
     "what were we talking about", "whats my name", "how many questions have I asked", "translate that into spanish",
     "who are you?", "were we talking about the lease or the contract before"],
)  # fmt: skip
def test_words_about_this_conversation_keep_the_label_without_a_search(text):
    assert about_this_chat(text)
    assert not library_may_answer(Route("conversation_meta", 0.9, "classifier"), text)


@pytest.mark.parametrize(
    "text",
    ["How do I end an R session?", "How do I end in our session?", "How do I tell R to quit?",
     "how do I save the history of a session", "How do I repeat a section in LilyPond?",
     "What does the conversation module do?", "who paintd the night watch#"],
)  # fmt: skip
def test_a_conversation_label_the_words_do_not_confirm_asks_the_library(text):
    assert not about_this_chat(text)
    assert library_may_answer(Route("conversation_meta", 0.9, "classifier"), text)
    # a label set by the rules, a follow-up or the switch is not second-guessed
    for source in ("rules", "follow-up", "switch", "threshold"):
        assert not library_may_answer(Route("conversation_meta", 0.9, source), text)


def test_only_a_greeting_that_is_no_greeting_formula_asks_the_library():
    greeted = Route("greeting", 0.9, "classifier")
    assert not library_may_answer(greeted, "hello there!") and not library_may_answer(greeted, "thanks so much")
    assert not library_may_answer(greeted, "hey you there")  # too short to be a question for the library
    assert library_may_answer(greeted, "hi, how do I quit an R session?")
    assert not library_may_answer(Route("rag_search", 0.9, "classifier"), "How do I end an R session?")


@pytest.mark.parametrize("text", ["why did you say that", "can you repeat that", "what did u mean by that"])
def test_words_about_this_conversation_are_no_follow_up_of_the_topic(text):
    r = route(text, always_web=False, classifier=Scripted("conversation_meta", 0.95), threshold=0.5,
              follows="rag_search")  # fmt: skip
    assert (r.label, r.source) == ("conversation_meta", "classifier")
    thanks = route("thanks so much!", always_web=False, classifier=Scripted("greeting", 0.95), threshold=0.5,
                   follows="web_search")  # fmt: skip
    assert (thanks.label, thanks.source) == ("greeting", "classifier")
