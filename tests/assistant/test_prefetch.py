"""The document search started beside the intent classifier (assistant/prefetch.py) on the real small
library: the same evidence as searching afterwards, used only when the turn searches for the same
text, dropped on other paths, and a queued prefetch never makes a turn wait."""

from __future__ import annotations

import threading

import pytest

from assistant.assistant import Assistant
from assistant.events import Sources
from assistant.prefetch import Prefetcher
from tests.assistant.turn_fixtures import build_library, make_config, shared_classifier


@pytest.fixture(scope="module")
def library(tmp_path_factory, minilm):
    return build_library(tmp_path_factory, minilm)


def _assistant(tmp_path, library, **changes):
    cfg = make_config(tmp_path, library, **changes)
    return Assistant(cfg, embedder=library.embedder, store=library.store, classifier=shared_classifier())


def _turn(a, session, text):
    events = list(a.respond(session, text))
    src = next((e for e in events if isinstance(e, Sources)), None)
    return src, events[-1]


def test_prefetched_turn_gives_the_same_evidence_and_answer_as_a_sequential_one(tmp_path, library):
    on = _assistant(tmp_path / "on", library)
    off = _assistant(tmp_path / "off", library, routing__prefetch_search=False)
    for q in ["How often should I check the brake pads?", "What percentage is the written exam worth?"]:
        src_on, done_on = _turn(on, on.new_session(), q)
        src_off, done_off = _turn(off, off.new_session(), q)
        assert done_on.trace["prefetched"] is True and done_off.trace["prefetched"] is False
        assert [h.chunk_id for h in src_on.hits] == [h.chunk_id for h in src_off.hits]
        assert [h.score for h in src_on.hits] == pytest.approx([h.score for h in src_off.hits])
        assert done_on.answer.text == done_off.answer.text
        assert {"retrieve", "retrieve.embed", "retrieve.search"} <= set(done_on.trace["timings_ms"])


def test_a_rewritten_follow_up_searches_for_the_rewritten_query(tmp_path, library):
    a = _assistant(tmp_path, library)
    s = a.new_session()
    _turn(a, s, "How is the data science course assessed?")
    src, done = _turn(a, s, "and what about attendance?")
    assert done.trace["query"] != "and what about attendance?"
    assert done.trace["prefetched"] is False  # the prefetch for the raw words was not used
    assert src.hits[0].source_path == "handbook.md"


def test_greetings_and_the_always_web_switch_take_no_search(tmp_path, library):
    a = _assistant(tmp_path, library)
    src, done = _turn(a, a.new_session(), "Hello!")
    assert src is None and "prefetched" not in done.trace
    s = a.new_session()
    s.always_web_search = True
    started = []
    real_start = a.parts.prefetcher.start
    a.parts.prefetcher.start = lambda *args: started.append(args) or real_start(*args)
    list(a.respond(s, "How often should I check the brake pads?"))
    assert started == []


def test_a_queued_prefetch_is_cancelled_and_the_turn_searches_itself(library):
    pool = Prefetcher(workers=1)
    gate = threading.Event()

    class Blocking:  # occupies the only worker until released
        error = ""

        def get_or_none(self):
            return self

        def retrieve(self, query):
            gate.wait(30)
            raise RuntimeError("released")

    class Real:
        error = ""

        def get_or_none(self):
            from knowledge.retrieve import Retriever
            from knowledge.settings import RetrievalSettings

            return Retriever(library.embedder, library.store, RetrievalSettings())

    busy = pool.start(Blocking(), "occupy the worker")
    queued = pool.start(Real(), "How often should I check the brake pads?")
    assert queued is not None and queued.take("How often should I check the brake pads?") is None
    assert queued.future.cancelled()  # never ran: the turn searched in its own thread instead
    gate.set()
    assert busy.take("occupy the worker").errors  # a failed search comes back as a message
    pool.shutdown()
