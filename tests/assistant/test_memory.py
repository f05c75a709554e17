"""Each memory strategy keeps what it should; the prompt history stays within its token budget."""

from __future__ import annotations

import pytest

from assistant.memory import ConversationMemory, Exchange, count_tokens


def _ex(i: int, words: int = 5) -> Exchange:
    return Exchange(
        user=f"question {i} about topic{i}?", assistant=f"Answer {i} says fact{i}. " + "filler " * words
    )


def _fill(mem: ConversationMemory, n: int, words: int = 5) -> None:
    for i in range(1, n + 1):
        mem.add(_ex(i, words))


def test_window_keeps_the_last_n_verbatim_and_summarises_the_older_ones():
    mem = ConversationMemory("window", window_exchanges=10, token_budget=5000)
    _fill(mem, 14)
    kept = [e.user for e in mem.exchanges]
    assert kept == [f"question {i} about topic{i}?" for i in range(5, 15)]
    # the four older exchanges live on in the running summary (extractive: no LLM here)
    for i in range(1, 5):
        assert f"topic{i}" in mem.summary and f"fact{i}" in mem.summary
    assert "topic5" not in mem.summary
    history = mem.history()
    assert history.startswith("Summary of the earlier conversation:")
    assert "User: question 14 about topic14?" in history
    assert mem.questions[0] == "question 1 about topic1?" and len(mem.questions) == 14


def test_buffer_keeps_everything_verbatim():
    mem = ConversationMemory("buffer", window_exchanges=3, token_budget=100000)
    _fill(mem, 14)
    assert len(mem.exchanges) == 14 and mem.summary == ""
    assert "User: question 1 about topic1?" in mem.history()


def test_summary_keeps_only_a_summary():
    mem = ConversationMemory("summary", token_budget=5000)
    _fill(mem, 3)
    assert mem.exchanges == []
    assert all(f"topic{i}" in mem.summary for i in (1, 2, 3))
    assert "User:" not in mem.history() and "topic3" in mem.history()


def test_none_keeps_nothing():
    mem = ConversationMemory("none")
    _fill(mem, 3)
    assert mem.exchanges == [] and mem.summary == "" and mem.questions == [] and mem.history() == ""
    assert mem.last is None


@pytest.mark.parametrize("strategy", ["window", "buffer", "summary"])
def test_history_stays_within_the_token_budget(strategy):
    mem = ConversationMemory(strategy, window_exchanges=10, token_budget=200)
    _fill(mem, 30, words=60)  # each exchange alone is ~80 tokens
    history = mem.history()
    assert 0 < count_tokens(history) <= 200
    # the newest exchange always survives (window/buffer) or is in the summary
    assert "topic30" in history


def test_llm_summariser_is_used_when_it_answers_and_extractive_otherwise():
    calls = []

    def llm(previous: str, exchanges: list[Exchange]) -> str | None:
        calls.append([e.user for e in exchanges])
        return "LLM SUMMARY of " + ", ".join(e.user for e in exchanges)

    mem = ConversationMemory("window", window_exchanges=2, summariser=llm)
    _fill(mem, 3)
    # the extractive summary is there at once; the LLM's replaces it in the background
    assert mem.wait_idle(10)
    assert calls == [["question 1 about topic1?"]]
    assert mem.summary.startswith("LLM SUMMARY of question 1")

    def broken(previous: str, exchanges: list[Exchange]) -> str | None:
        raise TimeoutError("provider down")

    mem = ConversationMemory("window", window_exchanges=2, summariser=broken)
    _fill(mem, 3)
    assert mem.wait_idle(10)
    assert mem.summary.startswith("User asked: question 1 about topic1?")  # extractive fallback

    mem = ConversationMemory("window", window_exchanges=2, summariser=lambda p, e: None)
    _fill(mem, 3)
    assert mem.wait_idle(10)
    assert "Hark answered: Answer 1 says fact1." in mem.summary


def test_switching_strategy_folds_or_forgets():
    mem = ConversationMemory("buffer", window_exchanges=2)
    _fill(mem, 5)
    mem.strategy = "window"
    assert [e.user for e in mem.exchanges] == ["question 4 about topic4?", "question 5 about topic5?"]
    assert "topic1" in mem.summary
    mem.strategy = "none"
    assert mem.exchanges == [] and mem.summary == "" and mem.questions == []
    with pytest.raises(ValueError):
        mem.strategy = "forever"  # type: ignore[assignment]


def test_the_assistant_summarises_through_the_real_llm_chain(tmp_path, monkeypatch):
    from assistant.assistant import Assistant
    from assistant.config import ProviderSettings
    from tests.assistant.turn_fixtures import make_config
    from tests.llm_server import LLMServer, Reply

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-MEMORY")
    with LLMServer() as server:
        server.set_default(Reply("The user greeted Hark twice."))
        cfg = make_config(tmp_path, memory__window_exchanges=1)
        cfg.llm.order = ["openai"]
        cfg.llm.providers = {"openai": ProviderSettings(kind="openai", model="gpt-test", base_url=server.openai_url,
                                                        key_env=["OPENAI_API_KEY"])}  # fmt: skip
        a = Assistant(cfg)
        s = a.new_session()
        for text in ("hello", "hi there", "good morning"):
            list(a.respond(s, text))
        assert [e.user for e in s.memory.exchanges] == ["good morning"]
        assert s.memory.wait_idle(20)
        assert s.memory.summary.startswith("The user greeted Hark twice.")
        prompts = [" ".join(m["content"] for m in r.body["messages"]) for r in server.requests]
        assert (
            1 <= len(prompts) <= 2
            and "Summarise the conversation" in prompts[0]
            and "User: hello" in prompts[0]
        )


def test_a_slow_llm_summary_never_delays_adding_and_is_swapped_in_later():
    import threading
    import time

    release = threading.Event()
    batches: list[list[str]] = []

    def slow(previous: str, exchanges: list[Exchange]) -> str | None:
        release.wait(10)
        batches.append([e.user for e in exchanges])
        return f"LLM({len(batches)}) after [{previous}]"

    mem = ConversationMemory("window", window_exchanges=1, summariser=slow)
    t0 = time.perf_counter()
    _fill(mem, 4)  # three folds while the first LLM summary is still being written
    assert time.perf_counter() - t0 < 1.0
    assert mem.summary.startswith("User asked: question 1")  # extractive meanwhile
    release.set()
    assert mem.wait_idle(10)
    # every folded exchange went to the LLM exactly once, in order, each call on top of the last
    assert [q for b in batches for q in b] == [f"question {i} about topic{i}?" for i in (1, 2, 3)]
    expected = ""
    for n in range(1, len(batches) + 1):
        expected = f"LLM({n}) after [{expected}]"
    assert mem.summary == expected
    mem.clear()
    assert mem.summary == "" and mem.wait_idle(1)
