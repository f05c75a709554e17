"""Routing of a turn: the classifier's label, the confidence threshold, the per-session
always-web switch, and the rules used when the classifier is missing or fails."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from assistant.routing import route, rule_intent


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
