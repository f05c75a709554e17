"""The whole turn on a real small LanceDB library (real Ingestor, MiniLM, extractive answers):
routing, sources, answers, follow-ups, the web path, speech in, cancelling, degrading."""

from __future__ import annotations

import subprocess
import threading
import time

import numpy as np
import pytest

from assistant.assistant import Assistant
from assistant.config import ProviderSettings
from assistant.events import (
    NOT_KNOWN,
    AudioInput,
    Done,
    IntentEvent,
    Notice,
    Rewritten,
    Sources,
    Token,
    Transcript,
)
from assistant.memory import Exchange
from tests.assistant.turn_fixtures import build_library, make_config, shared_classifier
from tests.llm_server import LLMServer, Reply
from tests.serp_server import SerpServer


@pytest.fixture(scope="module")
def library(tmp_path_factory, minilm):
    return build_library(tmp_path_factory, minilm)


def _assistant(cfg, library, **parts):
    return Assistant(
        cfg, embedder=library.embedder, store=library.store, classifier=shared_classifier(), **parts
    )


def _events(assistant, session, text, cancel=None):
    return list(assistant.respond(session, text, cancel))


def _kinds(events):
    return [type(e).__name__ for e in events]


def test_a_document_question_is_answered_from_the_right_document(tmp_path, library):
    a = _assistant(make_config(tmp_path, library), library)
    s = a.new_session()
    events = _events(a, s, "How often should I check the brake pads?")
    kinds = _kinds(events)
    assert kinds[0] == "IntentEvent" and kinds[1] == "Sources" and kinds[-1] == "Done"
    assert events[0].label == "rag_search"
    src = events[1]
    assert src.kind == "documents" and src.hits[0].source_path == "bicycle.md"
    assert {h.source_path for h in src.candidates} == {"lease.md", "bicycle.md", "handbook.md"}
    done = events[-1]
    assert "500 kilometres" in done.answer.text and done.answer.provider == "extractive"
    assert [h.source_path for h in done.answer.cited] == ["bicycle.md"]
    assert "".join(e.text for e in events if isinstance(e, Token)).strip() == done.answer.text
    # the turn's trace: intent, scores of candidates and of the final order, per-stage times
    tr = done.trace
    assert tr["intent"]["label"] == "rag_search" and tr["provider"] == "extractive"
    assert tr["candidates"][0]["dense"] is not None and tr["reranked"][0]["chunk_id"] == src.hits[0].chunk_id
    assert {"persona", "intent", "retrieve", "answer", "total"} <= set(tr["timings_ms"])
    assert a.parts.trace.read()[-1]["turn_id"] == tr["turn_id"]


def test_unrelated_question_is_not_known_without_guessing(tmp_path, library):
    a = _assistant(make_config(tmp_path, library), library)
    done = _events(a, a.new_session(), "What is the boiling point of liquid nitrogen in kelvin?")[-1]
    assert done.answer.not_known and done.answer.text == NOT_KNOWN and done.answer.cited == []


def test_a_follow_up_is_rewritten_and_answered(tmp_path, library):
    a = _assistant(make_config(tmp_path, library), library)
    s = a.new_session()
    first = _events(a, s, "How is the data science course assessed?")[-1]
    assert "written exam" in first.answer.text
    events = _events(a, s, "and what about attendance?")
    rw = next(e for e in events if isinstance(e, Rewritten))
    assert rw.original == "and what about attendance?" and "attendance" in rw.query and "course" in rw.query
    src = next(e for e in events if isinstance(e, Sources))
    assert src.hits[0].source_path == "handbook.md"
    assert "attend at least 80 percent" in events[-1].answer.text.lower()  # the sentence under "Attendance"
    assert [h.source_path for h in events[-1].answer.cited] == ["handbook.md"]
    assert events[-1].trace["rewrite"]["original"] == "and what about attendance?"
    assert events[-1].trace["query"] == rw.query


def test_greeting_and_conversation_meta(tmp_path, library):
    a = _assistant(make_config(tmp_path, library), library)
    s = a.new_session()
    hello = _events(a, s, "Hello!")
    assert hello[0].label == "greeting" and not any(isinstance(e, Sources) for e in hello)
    _events(a, s, "How much is the monthly rent?")
    meta = _events(a, s, "What was my first question?")
    assert meta[0].label == "conversation_meta"
    assert meta[-1].answer.text == 'Your first question was: "Hello!"'


def test_web_path_on_a_loopback_serpapi(tmp_path, library, monkeypatch):
    monkeypatch.setenv("SERPAPI_API_KEY", "serp-test-KEY")
    with SerpServer() as serp:
        serp.state.answer = "The Eiffel Tower is 330 metres tall."
        a = _assistant(make_config(tmp_path, library, websearch__base_url=serp.url), library)
        s = a.new_session()
        s.always_web_search = True
        events = _events(a, s, "How tall is the Eiffel Tower?")
        assert events[0].label == "web_search" and events[0].source == "switch"
        src = next(e for e in events if isinstance(e, Sources))
        assert src.kind == "web" and src.hits[0].source_path == "https://example.org/answer"
        assert serp.state.requests[0]["q"] == ["How tall is the Eiffel Tower?"]
        assert "330 metres" in events[-1].answer.text
        assert events[-1].answer.cited[0].source_path.startswith("https://example.org/")
        # the service fails → a notice, and the answer comes from the documents instead
        serp.state.mode = "garbage"
        events = _events(a, s, "How much is the pet deposit for a dog?")
        notices = [e.text for e in events if isinstance(e, Notice)]
        assert any("Web search failed" in n for n in notices)
        src = next(e for e in events if isinstance(e, Sources))
        assert src.kind == "documents" and "300 euros" in events[-1].answer.text
        assert s.memory.last.intent == "rag_search"  # a follow-up of it searches the library
    assert "serp-test-KEY" not in a.parts.trace.path.read_text()


def test_cancel_stops_a_streaming_answer_and_keeps_what_was_said(tmp_path, library, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-CANCEL")
    with LLMServer() as server:
        server.set_default(Reply("The rent is 950 euros per month [1]. " * 30, chunk_delay=0.05))
        cfg = make_config(tmp_path, library)
        cfg.llm.order = ["openai"]
        cfg.llm.providers = {"openai": ProviderSettings(kind="openai", model="gpt-test", base_url=server.openai_url,
                                                        key_env=["OPENAI_API_KEY"])}  # fmt: skip
        a = _assistant(cfg, library)
        s = a.new_session()
        cancel = threading.Event()
        events, t_cancel = [], None
        for ev in a.respond(s, "How much is the monthly rent?", cancel):
            events.append(ev)
            if sum(isinstance(e, Token) for e in events) == 5 and t_cancel is None:
                t_cancel = time.perf_counter()
                cancel.set()
        took = time.perf_counter() - t_cancel
        done = events[-1]
        assert isinstance(done, Done) and took < 2.0
        assert any(isinstance(e, Notice) and e.text.startswith("Stopped") for e in events)
        assert done.trace["cancelled"] and 0 < len(done.answer.text) < 200
        assert done.answer.text.startswith("The rent is 950")
        assert not s.busy  # the session is free for the next turn
        assert s.memory.last.assistant == done.answer.text


@pytest.mark.slow
def test_spoken_question_is_transcribed_then_answered(tmp_path, library):
    wav = tmp_path / "q.wav"
    subprocess.run(["espeak-ng", "-v", "en-us", "-s", "150", "-g", "4", "-w", str(wav),
                    "how much is the monthly rent"], check=True)  # fmt: skip
    cfg = make_config(tmp_path, library, speech__model="tiny.en", speech__beam_size=5)
    a = _assistant(cfg, library)
    s = a.new_session()
    events = _events(a, s, AudioInput(path=str(wav)))
    assert isinstance(events[0], Transcript) and "rent" in events[0].text.lower()
    assert "950 euros" in events[-1].answer.text
    assert events[-1].trace["input"] == "audio" and "transcribe" in events[-1].trace["timings_ms"]
    # silence never reaches the rest of the pipeline
    silent = _events(a, s, AudioInput(samples=np.zeros(16000, np.int16), sample_rate=16000))
    assert _kinds(silent) == ["Notice", "Done"]
    assert "didn't catch" in silent[0].text.lower()


def test_a_store_that_cannot_open_degrades_the_turn(tmp_path, library):
    bad = tmp_path / "not-a-db"
    bad.write_text("a file where a LanceDB folder should be")
    cfg = make_config(tmp_path, None, store__uri=str(bad / "lancedb"))
    a = Assistant(cfg, embedder=library.embedder, classifier=shared_classifier())
    events = _events(a, a.new_session(), "How much is the monthly rent?")
    assert isinstance(events[-1], Done) and events[-1].answer.not_known
    assert any(isinstance(e, Notice) and e.level == "error" for e in events)
    assert isinstance(events[0], IntentEvent)


def test_status_reports_parts_and_never_keys(tmp_path, library, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-STATUS")
    a = _assistant(make_config(tmp_path, library), library)
    st = a.status()
    assert st["embedder"]["identity"] == library.embedder.identity and st["chunks"] >= 3
    assert ("openai", True) in st["providers"] and ("extractive", True) in st["providers"]
    assert "sk-test-STATUS" not in repr(st)


def test_warm_up_names_the_model_that_failed_and_what_to_do(tmp_path, library):
    from models.runtime.errors import HarkError

    cfg = make_config(tmp_path, library, intent__adapter_dir=str(tmp_path / "no-adapter"))
    a = Assistant(cfg, embedder=library.embedder, store=library.store)
    with pytest.raises(HarkError) as info:
        a.warm_up(speech=False, tts=False)
    assert "intent adapter" in info.value.message and "train-intents" in info.value.hint
    # the app can still answer: routing degrades to rules, and the turn goes on
    done = _events(a, a.new_session(), "How much is the monthly rent?")[-1]
    assert "950 euros" in done.answer.text and done.trace["intent"]["source"] == "rules"


class _Says:
    """A classifier whose prediction is this test's input (the routing around it is under test)."""

    def __init__(self, label: str, confidence: float) -> None:
        from models.intent import IntentPrediction

        self.prediction = IntentPrediction(label, confidence, {label: confidence})

    def predict(self, text: str):
        return self.prediction


def test_an_unsure_web_route_checks_the_library_first(tmp_path, library, monkeypatch):
    monkeypatch.setenv("SERPAPI_API_KEY", "serp-test-FIRST")
    with SerpServer() as serp:
        cfg = make_config(tmp_path, library, websearch__base_url=serp.url, routing__web_min_confidence=0.8)
        unsure = Assistant(
            cfg, embedder=library.embedder, store=library.store, classifier=_Says("web_search", 0.6)
        )
        events = _events(unsure, unsure.new_session(), "How much is the monthly rent?")
        intent = next(e for e in events if isinstance(e, IntentEvent))
        assert (intent.label, intent.source) == ("rag_search", "documents-first")
        assert next(e for e in events if isinstance(e, Sources)).kind == "documents"
        assert "950 euros" in events[-1].answer.text and serp.state.requests == []
        # nothing relevant in the library → the web after all
        events = _events(unsure, unsure.new_session(), "What is the population of Lima in Peru?")
        assert next(e for e in events if isinstance(e, IntentEvent)).label == "web_search"
        assert (
            next(e for e in events if isinstance(e, Sources)).kind == "web" and len(serp.state.requests) == 1
        )
        # asking for the web itself goes straight to the web
        events = _events(unsure, unsure.new_session(), "Search the web for the monthly rent of a flat")
        assert (
            next(e for e in events if isinstance(e, Sources)).kind == "web" and len(serp.state.requests) == 2
        )
        # so does a web route at or above routing.web_min_confidence
        sure = Assistant(
            cfg, embedder=library.embedder, store=library.store, classifier=_Says("web_search", 0.95)
        )
        events = _events(sure, sure.new_session(), "How much is the monthly rent?")
        assert (
            next(e for e in events if isinstance(e, Sources)).kind == "web" and len(serp.state.requests) == 3
        )


def test_a_follow_up_keeps_the_path_of_the_question_it_follows(tmp_path, library):
    # "tell me more" alone looks like small talk to a classifier; after a document question it is one
    a = Assistant(make_config(tmp_path, library), embedder=library.embedder, store=library.store,
                  classifier=_Says("greeting", 0.95))  # fmt: skip
    s = a.new_session()
    s.memory.add(Exchange(user="How is the course assessed?", assistant="By an exam [1].", intent="rag_search",
                          query="How is the course assessed?"))  # fmt: skip
    events = _events(a, s, "tell me more")
    intent = next(e for e in events if isinstance(e, IntentEvent))
    assert (intent.label, intent.source) == ("rag_search", "follow-up")
    assert next(e for e in events if isinstance(e, Sources)).hits[0].source_path == "handbook.md"
    # a greeting that is not a follow-up stays a greeting
    assert _events(a, s, "good morning")[0].label == "greeting"


def test_an_answers_sentence_batch_runs_on_a_session_made_before_the_first_answer(tmp_path, library):
    """Answerability embeds the top chunks' sentences as one batch, on the embedder's batch
    session; building the answerer (the warm-up does) makes that session, so the first answer
    does not pay for it."""
    from knowledge.open_library import open_embedder

    cfg = make_config(tmp_path, library)
    emb = open_embedder(cfg.embedder)  # a fresh embedder: queries only so far
    encoder = emb._model
    assert encoder.batch_threads != encoder.threads and encoder._batch is None
    a = Assistant(cfg, embedder=emb, store=library.store)
    a.parts.answerer.get()
    assert encoder._batch is not None


def test_building_the_answerer_reads_the_word_lists_and_prompts_the_first_answer_needs(tmp_path, library):
    """The rules of the answerability decision look words up in wordfreq's lists (~0.5 s to read)
    and the prompt builder reads its YAML files: building the answerer (the warm-up does) reads
    them, so the user's first question does not wait for them."""
    from knowledge import vocabulary

    vocabulary._frequencies.cache_clear()
    a = Assistant(make_config(tmp_path, library), store=library.store)
    answerer = a.parts.answerer.get()
    assert vocabulary._frequencies.cache_info().currsize == 1
    assert answerer.builder._profiles is not None and answerer.builder._strategies is not None
