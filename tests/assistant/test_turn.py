"""The turn's typed values on the real small library: the retriever's result reaches the `Sources`
event as it is, a rewritten follow-up keeps what was heard apart from what was searched, and the
trace line is the turn state of the path taken (here: an unsure web route answered from the library)."""

from __future__ import annotations

import pytest

from assistant.assistant import Assistant
from assistant.events import Sources
from assistant.hear import Heard, NotHeard, hear
from knowledge.types import Retrieval
from tests.assistant.turn_fixtures import build_library, make_config, shared_classifier


@pytest.fixture(scope="module")
def library(tmp_path_factory, minilm):
    return build_library(tmp_path_factory, minilm)


class _Says:
    """A classifier whose prediction is this test's input (the routing around it is under test)."""

    def __init__(self, label: str, confidence: float) -> None:
        from models.intent import IntentPrediction

        self.prediction = IntentPrediction(label, confidence, {label: confidence})

    def predict(self, text: str):
        return self.prediction


def test_sources_carry_the_retrievers_own_result(tmp_path, library):
    a = Assistant(make_config(tmp_path, library), embedder=library.embedder, store=library.store,
                  classifier=shared_classifier())  # fmt: skip
    s = a.new_session()
    list(a.respond(s, "How is the data science course assessed?"))
    events = list(a.respond(s, "and what about attendance?"))
    src = next(e for e in events if isinstance(e, Sources))
    assert isinstance(src.retrieval, Retrieval) and src.kind == "documents"
    done = events[-1]
    # the library was searched for the standalone query, and the trace says both
    assert src.retrieval.query == done.trace["query"] != done.trace["question"] == "and what about attendance?"
    assert src.hits == src.retrieval.hits and len(src.candidates) >= len(src.hits)
    assert [h["chunk_id"] for h in done.trace["reranked"]] == [h.chunk_id for h in src.hits]
    assert s.memory.last.query == done.trace["query"] and s.memory.last.intent == "rag_search"


def test_an_unsure_web_route_answered_from_the_library_is_one_route_in_the_trace(tmp_path, library):
    cfg = make_config(tmp_path, library, routing__web_min_confidence=0.8)
    a = Assistant(cfg, embedder=library.embedder, store=library.store, classifier=_Says("web_search", 0.6))
    s = a.new_session()
    done = list(a.respond(s, "How much is the monthly rent?"))[-1]
    intent = done.trace["intent"]
    assert (intent["label"], intent["source"], intent["predicted"]) == ("rag_search", "documents-first", "web_search")
    assert intent["confidence"] == 0.6 and "web" not in done.trace and done.trace["relevant"] is True
    assert s.memory.last.intent == "rag_search" and "950 euros" in done.answer.text


def test_hear_normalises_typed_text_and_names_a_missing_recogniser(tmp_path):
    from assistant.components import Lazy
    from assistant.events import AudioInput

    assert hear("  what is\n the   rent? ", None) == Heard("what is the rent?")

    def broken():
        raise RuntimeError("no whisper here")

    missing = hear(AudioInput(path=str(tmp_path / "q.wav")), Lazy("speech recogniser", broken))
    assert isinstance(missing, NotHeard) and missing.level == "error"
    assert "Speech recognition is unavailable (no whisper here)" in missing.message
