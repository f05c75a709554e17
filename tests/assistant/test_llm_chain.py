"""The fallback chain end to end: real SDKs, real HTTP to the loopback server, real timeouts.

Every scenario asserts what the caller receives, which provider is recorded, and how long it took
against the configured timeouts (margins are generous: the machine is shared and noisy)."""

from __future__ import annotations

import json
import threading
import time

import pytest

from assistant.answer import Answerer, Restart, TracedAnswer
from assistant.config import PromptSettings
from assistant.events import NOT_KNOWN, Notice, Token
from assistant.llm.base import Message
from assistant.llm.chain import LLMChain
from tests.assistant import llm_fixtures as fx
from tests.assistant.llm_fixtures import KEYS, MODELS, lease_hits, llm_settings
from tests.llm_server import Drop, Fail, Reply, Stall

server, llm_server, keys, no_key_leak = fx.server, fx.llm_server, fx.keys, fx.no_key_leak

QUESTION = "How much notice must the tenant give?"
ORDER = ["gemini", "openai", "groq"]


def _run(answerer: Answerer, **kwargs) -> tuple[list, TracedAnswer, float]:
    t0 = time.monotonic()
    events = list(answerer.stream(QUESTION, lease_hits(), **kwargs))
    elapsed = time.monotonic() - t0
    assert isinstance(events[-1], TracedAnswer)
    return events, events[-1], elapsed


def _streamed(events: list) -> str:
    """What a renderer following the protocol shows: tokens, cleared at each Restart."""
    text = ""
    for e in events:
        if isinstance(e, Restart):
            text = ""
        elif isinstance(e, Token):
            text += e.text
    return text


def _assert_no_secret(answer: TracedAnswer) -> None:
    blob = repr(answer) + json.dumps(answer.trace, default=str)
    for value in KEYS.values():
        assert value not in blob


def _answerer(server, order=ORDER, **overrides) -> Answerer:
    settings = llm_settings(server, order, **overrides)
    chain = LLMChain(settings)
    chain.warm_up()
    return Answerer(settings, PromptSettings(), chain=chain)


@pytest.fixture(scope="module", autouse=True)
def _warm_sdks(server):
    """The first request through each SDK in a process pays for lazy imports and response-model
    building (seconds on a loaded machine): pay it once, before any clock in these tests matters."""
    with pytest.MonkeyPatch.context() as mp:
        for name, value in KEYS.items():
            mp.setenv(name, value)
        for provider in ORDER:
            _answerer(server, order=[provider]).answer(QUESTION, lease_hits())
    server.clear()


def test_clean_stream_from_the_first_provider(llm_server, keys, no_key_leak):
    llm_server.script(MODELS["gemini"], Reply(["Three months' ", "notice [2], ", "in writing [2]."]))
    events, answer, _ = _run(_answerer(llm_server))
    assert answer.provider == "gemini" and not answer.not_known
    assert answer.text == "Three months' notice [1], in writing [1]."
    assert _streamed(events) == answer.text  # the stream already matches the final text
    assert [h.chunk_id for h in answer.cited] == ["lease-3"]
    assert [r.route for r in llm_server.requests] == ["gemini"]
    _assert_no_secret(answer)


@pytest.mark.parametrize("status", [500, 429, 401, 403])
def test_error_before_first_token_fails_over_at_once(status, llm_server, keys, no_key_leak):
    llm_server.script(MODELS["gemini"], Fail(status))
    llm_server.script(MODELS["openai"], Reply("Three months [2]."))
    events, answer, elapsed = _run(_answerer(llm_server, first_token_timeout=8.0))
    assert answer.provider == "openai"
    assert answer.text == "Three months [1]."
    assert elapsed < 4.0, "failover should not wait for the (8 s) first-token timeout"
    attempts = answer.trace["attempts"]
    assert attempts[0]["provider"] == "gemini" and attempts[0]["status"] == status
    assert not any(isinstance(e, Restart) for e in events)  # nothing was streamed, nothing to void
    _assert_no_secret(answer)


def test_no_first_token_before_the_timeout(llm_server, keys, no_key_leak):
    llm_server.script(MODELS["gemini"], Stall(seconds=20))
    llm_server.script(MODELS["openai"], Stall(seconds=20, headers_first=False))
    llm_server.script(MODELS["groq"], Reply("Three months [2]."))
    _, answer, elapsed = _run(_answerer(llm_server, first_token_timeout=1.0))
    assert answer.provider == "groq"
    assert [a["error"] for a in answer.trace["attempts"][:2]] == ["timeout", "timeout"]
    assert 2.0 <= elapsed < 2.0 + 4.0, f"two 1 s first-token timeouts took {elapsed:.2f} s"


def test_slow_but_steady_stream_is_not_cut_by_the_first_token_timeout(llm_server, keys):
    llm_server.script(MODELS["gemini"], Reply(["Three ", "months ", "[2]."], ttft=0.6, chunk_delay=0.6))
    _, answer, elapsed = _run(_answerer(llm_server, first_token_timeout=2.0))
    assert elapsed >= 1.8  # 0.6 s to the first token + two 0.6 s gaps, each under the 2 s timeout
    assert answer.provider == "gemini" and answer.text == "Three months [1]."


def test_overall_timeout_breaks_a_stream_that_goes_on_too_long(llm_server, keys):
    llm_server.script(MODELS["gemini"], Reply(["word "] * 50, chunk_delay=0.1))
    llm_server.script(MODELS["openai"], Reply("Three months [2]."))
    events, answer, elapsed = _run(_answerer(llm_server, first_token_timeout=3.0, total_timeout=1.0))
    assert answer.provider == "openai" and answer.text == "Three months [1]."
    assert any(isinstance(e, Restart) for e in events)
    assert 1.0 <= elapsed < 1.0 + 3.0  # cut at the 1 s overall timeout, not after 5 s of words


def test_connection_dropped_mid_stream_restarts_with_the_next_provider(llm_server, keys, no_key_leak):
    llm_server.script(
        MODELS["gemini"], Drop(["The tenant ", "must give ", "ZZZ-partial ", "never sent"], after=3)
    )
    llm_server.script(MODELS["openai"], Reply("Three months' notice, in writing [2]."))
    events, answer, elapsed = _run(_answerer(llm_server, first_token_timeout=8.0))
    restarts = [e for e in events if isinstance(e, Restart)]
    assert len(restarts) == 1 and "gemini" in restarts[0].text
    # the partial text came through before the notice, and none of it is in the answer
    before = "".join(e.text for e in events[: events.index(restarts[0])] if isinstance(e, Token))
    assert "ZZZ-partial" in before
    assert answer.text == "Three months' notice, in writing [1]." and "ZZZ" not in answer.text
    assert _streamed(events) == answer.text
    assert answer.provider == "openai" and answer.trace["restarts"] == 1
    assert answer.trace["attempts"][0]["outcome"] == "broken"
    assert elapsed < 4.0  # the drop is seen at once, not after the (8 s) stall timeout


def test_all_providers_down_gives_the_extractive_answer(llm_server, keys, no_key_leak):
    llm_server.script(MODELS["gemini"], Fail(500))
    llm_server.script(MODELS["openai"], Fail(401))
    llm_server.script(MODELS["groq"], Stall(seconds=20))
    events, answer, elapsed = _run(_answerer(llm_server, first_token_timeout=1.0))
    assert answer.provider == "extractive"
    assert "three months' notice [1]" in answer.text
    assert [h.chunk_id for h in answer.cited][0] == "lease-3"
    assert len(llm_server.requests) == 3
    assert 1.0 <= elapsed < 1.0 + 3.0
    _assert_no_secret(answer)


def test_no_keys_means_no_requests_no_warnings_and_still_an_answer(llm_server, caplog):
    caplog.set_level("DEBUG", logger="assistant")
    _, answer, _ = _run(_answerer(llm_server))
    assert answer.provider == "extractive" and "three months' notice" in answer.text
    assert llm_server.requests == []
    assert not [r for r in caplog.records if r.name.startswith("assistant") and r.levelname != "DEBUG"]


def test_a_failing_provider_cools_down_then_is_tried_again(llm_server, keys):
    settings = llm_settings(
        llm_server, ["gemini", "openai"], failures_before_cooldown=2, cooldown_seconds=1.0
    )
    chain = LLMChain(settings)
    msgs = [Message("user", "hi")]
    llm_server.script(MODELS["gemini"], Fail(500), Fail(503), Reply("back again"))
    for _ in range(2):
        assert chain.complete(msgs) == "A default answer from the loopback server [1]."
    assert chain.cooling_down() == ["gemini"]
    chain.complete(msgs)  # skipped: no third gemini request while cooling down
    assert len(llm_server.requests_for(MODELS["gemini"])) == 2
    time.sleep(1.1)
    assert chain.complete(msgs) == "back again"
    assert chain.cooling_down() == []


def test_auth_failure_cools_down_at_once(llm_server, keys):
    chain = LLMChain(llm_settings(llm_server, ["openai", "groq"]))
    llm_server.script(MODELS["openai"], Fail(401))
    chain.complete([Message("user", "hi")])
    chain.complete([Message("user", "hi")])
    assert len(llm_server.requests_for(MODELS["openai"])) == 1
    assert chain.cooling_down() == ["openai"]


def test_cancel_stops_the_stream_promptly(llm_server, keys):
    llm_server.script(MODELS["gemini"], Reply(["word "] * 100, chunk_delay=0.1))
    cancel = threading.Event()
    answerer = _answerer(llm_server)
    got: list = []
    t_cancel = None
    for event in answerer.stream(QUESTION, lease_hits(), cancel=cancel):
        got.append(event)
        if isinstance(event, Token) and len(got) == 3:
            cancel.set()
            t_cancel = time.monotonic()
    stop_delay = time.monotonic() - t_cancel
    answer = got[-1]
    assert isinstance(answer, TracedAnswer) and answer.trace["cancelled"]
    assert stop_delay < 1.0, f"the stream went on for {stop_delay:.2f} s after cancel"
    assert len([e for e in got if isinstance(e, Token)]) <= 4
    assert len(llm_server.requests) == 1  # no failover after a cancel


def test_complete_and_available_for_other_components(llm_server, keys, monkeypatch):
    chain = LLMChain(llm_settings(llm_server, ["gemini", "openai", "groq", "local"]))
    llm_server.script(MODELS["gemini"], Fail(429))
    llm_server.script(MODELS["openai"], Reply("What is the notice period of the lease?"))
    assert (
        chain.complete([Message("user", "rewrite")], max_tokens=32)
        == "What is the notice period of the lease?"
    )
    assert llm_server.requests_for(MODELS["openai"])[0].body["max_completion_tokens"] == 32

    monkeypatch.delenv("GROQ_API_KEY")
    status = chain.available()
    assert status == [
        ("gemini", True),
        ("openai", True),
        ("groq", False),
        ("local", True),
        ("extractive", True),
    ]
    assert not any(v in repr(status) for v in KEYS.values())

    only_dead = LLMChain(llm_settings(llm_server, ["openai"]))
    llm_server.script(MODELS["openai"], Fail(500))
    assert only_dead.complete([Message("user", "x")]) is None  # no extractive link in complete()


def test_answer_notices_name_the_failed_provider_without_details(llm_server, keys):
    llm_server.script(MODELS["gemini"], Fail(429))
    events, answer, _ = _run(_answerer(llm_server))
    notices = [e for e in events if isinstance(e, Notice) and not isinstance(e, Restart)]
    assert notices and "gemini" in notices[0].text and "rate-limited" in notices[0].text
    assert answer.provider == "openai"


def test_not_known_from_the_llm_is_recorded(llm_server, keys):
    llm_server.script(MODELS["gemini"], Reply(["I'm sorry, that information ", "is not known to me."]))
    _, answer, _ = _run(_answerer(llm_server))
    assert answer.not_known and answer.text == NOT_KNOWN and answer.cited == []
    assert answer.provider == "gemini"


def test_cancel_before_the_call_sends_nothing(llm_server, keys):
    cancel = threading.Event()
    cancel.set()
    _, answer, _ = _run(_answerer(llm_server), cancel=cancel)
    assert answer.trace["cancelled"] and llm_server.requests == []


def test_one_chain_serves_concurrent_turns(llm_server, keys):
    answerer = _answerer(llm_server)
    llm_server.script(MODELS["gemini"], Reply(["Alpha ", "answer [1]."], chunk_delay=0.05))
    llm_server.script(MODELS["gemini"], Reply(["Beta ", "answer [2]."], chunk_delay=0.05))
    results: list[str] = []

    def turn() -> None:
        results.append(answerer.answer(QUESTION, lease_hits()).text)

    threads = [threading.Thread(target=turn) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=20)
    assert sorted(results) == ["Alpha answer [1].", "Beta answer [1]."]
