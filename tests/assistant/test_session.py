"""Sessions: two side by side on one Assistant keep their own memory and switches, even when
their turns run at the same time; cancelling one turn never touches another session."""

from __future__ import annotations

import threading

import pytest

from assistant.assistant import Assistant
from assistant.events import Done, Sources
from assistant.session import Session
from tests.assistant.turn_fixtures import build_library, make_config, shared_classifier
from tests.serp_server import SerpServer


@pytest.fixture(scope="module")
def library(tmp_path_factory, minilm):
    return build_library(tmp_path_factory, minilm)


def _run(assistant, session, text):
    events = list(assistant.respond(session, text))
    assert isinstance(events[-1], Done)
    return events


def test_two_sessions_side_by_side_keep_separate_memory_and_switches(tmp_path, library, monkeypatch):
    monkeypatch.setenv("SERPAPI_API_KEY", "serp-test-SESSION")
    with SerpServer() as serp:
        cfg = make_config(tmp_path, library, websearch__base_url=serp.url)
        a = Assistant(cfg, embedder=library.embedder, store=library.store, classifier=shared_classifier())
        web, docs = a.new_session(), a.new_session()
        web.always_web_search = True
        web.memory_strategy = "buffer"
        assert docs.memory_strategy == "window" and not docs.always_web_search and web.id != docs.id

        questions = {
            web.id: [
                "How much is the monthly rent?",
                "How tall is the Eiffel Tower?",
                "What is the tyre pressure?",
            ],
            docs.id: [
                "How often should I check the brake pads?",
                "How is the course assessed?",
                "Are cats allowed?",
            ],
        }
        kinds: dict[str, list[str]] = {web.id: [], docs.id: []}
        errors: list[BaseException] = []
        start = threading.Barrier(2)

        def converse(session: Session) -> None:
            try:
                start.wait()
                for q in questions[session.id]:
                    events = _run(a, session, q)
                    kinds[session.id].append(next(e.kind for e in events if isinstance(e, Sources)))
            except BaseException as exc:  # noqa: BLE001 - reported below
                errors.append(exc)

        threads = [threading.Thread(target=converse, args=(s,)) for s in (web, docs)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=300)
        assert not errors, errors

        # the switch of one session routed only its own questions to the web
        assert kinds[web.id] == ["web", "web", "web"] and kinds[docs.id] == ["documents"] * 3
        assert len(serp.state.requests) == 3
        # each memory holds exactly its own conversation, in order
        assert web.memory.questions == questions[web.id]
        assert docs.memory.questions == questions[docs.id]
        assert [e.user for e in web.memory.exchanges] == questions[web.id]
        assert "Eiffel" not in docs.memory.history() and "brake" not in web.memory.history()
        # and answers about the conversation come from the asking session only
        first_web = _run(a, web, "What was my first question?")[-1].answer.text
        first_docs = _run(a, docs, "What was my first question?")[-1].answer.text
        assert questions[web.id][0] in first_web and questions[docs.id][0] in first_docs
        # one trace line per turn, each tagged with its own session
        sessions = [r["session_id"] for r in a.parts.trace.read()]
        assert sessions.count(web.id) == 4 and sessions.count(docs.id) == 4


def test_cancel_belongs_to_one_session_and_one_turn(hark_config):
    a, b = Session.from_config(hark_config), Session.from_config(hark_config)
    ev_a = a.begin_turn()
    ev_b = b.begin_turn()
    assert a.busy and b.busy
    assert a.cancel() and ev_a.is_set() and not ev_b.is_set()
    a.end_turn(ev_a)
    assert not a.busy and not a.cancel()  # nothing left to cancel
    given = threading.Event()
    assert b.begin_turn(given) is given  # a caller's own event is the one used
    b.end_turn(given)
    assert not b.busy


def test_switches_and_memory_start_from_the_config(hark_config):
    hark_config.memory.strategy = "summary"
    hark_config.prompts.reasoning = "cot"
    s = Session.from_config(hark_config)
    assert (
        s.memory_strategy == "summary" and s.reasoning == "cot" and s.profile == hark_config.prompts.profile
    )
    assert not s.always_web_search and not s.speak_answers
    with pytest.raises(ValueError):
        s.memory_strategy = "everything"  # type: ignore[assignment]
