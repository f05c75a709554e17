"""The spoken turn run ahead on the pass in the speech's pause (assistant/speculation.py), on the real
small library and a real LLM client over loopback: adopted when the utterance ends with those words
(one LLM call, one memory exchange, one trace line), dropped otherwise (nothing recorded), and a
paid provider is never called before the verdict."""

from __future__ import annotations

import time

import numpy as np
import pytest

from assistant.assistant import Assistant
from assistant.events import AudioInput, Done, Sources, Streamed, Token
from assistant.speculation import local_url
from models.audio import from_array
from models.speech import Decoded
from tests.assistant.llm_fixtures import KEYS, llm_settings
from tests.assistant.turn_fixtures import build_library, make_config, shared_classifier
from tests.audio_data import shared_transcriber
from tests.llm_server import LLMServer, Reply

QUESTION = "How often should I check the brake pads?"
ANSWER = "Check the brake pads every 500 kilometres [1]."
LONGER = "Check the brake pads every 500 kilometres, and replace them when the groove is under a millimetre [1]."


@pytest.fixture(scope="module")
def library(tmp_path_factory, minilm):
    return build_library(tmp_path_factory, minilm)


@pytest.fixture(scope="module")
def server():
    with LLMServer(max_lifetime=600) as s:
        yield s


def _assistant(tmp_path, library, server, provider: str = "local", transcriber=None, **changes) -> Assistant:
    cfg = make_config(tmp_path, library, **changes)
    cfg.llm = llm_settings(server, [provider])
    return Assistant(cfg, embedder=library.embedder, store=library.store, classifier=shared_classifier(),
                     transcriber=transcriber)


def _decoded(text: str = QUESTION) -> Decoded:
    return Decoded(text=text, seconds=0.3, avg_logprob=-0.2, no_speech_prob=0.01, speech_seconds=2.1)


def _heard(d: Decoded) -> AudioInput:
    """What the turn gets when the utterance's final transcript is that pass."""
    return AudioInput(streamed=Streamed(d.text, 0.0, 3.0, d.speech_seconds, d.avg_logprob, d.no_speech_prob))


def _requests(server: LLMServer, model: str) -> int:
    return sum(r.model == model for r in server.requests)


def _wait(condition, seconds: float = 20.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return False


def test_local_addresses_are_free_and_cloud_ones_are_not():
    for url in ("http://127.0.0.1:11434/v1", "http://localhost:8080/v1", "http://192.168.1.20:11434/v1",
                "http://[::1]:8000/v1", "http://gpu-box.local:11434/v1"):
        assert local_url(url), url
    for url in ("https://api.openai.com/v1", "https://api.groq.com", "http://8.8.8.8/v1", None, ""):
        assert not local_url(url), url


def test_a_turn_run_ahead_is_adopted_when_the_utterance_ends_with_its_words(tmp_path, library, server):
    a = _assistant(tmp_path, library, server)
    server.script("local-test", Reply(ANSWER))
    before = _requests(server, "local-test")
    s = a.new_session()
    owner = object()
    d = _decoded()
    spec = a.listening.run_ahead(s, owner, d)
    assert spec is not None
    # a local server costs nothing per call: the answer is asked for before the user has finished
    assert _wait(lambda: _requests(server, "local-test") == before + 1)
    assert s.memory.exchanges == [] and a.parts.trace.read() == []  # nothing recorded before the verdict
    events = list(a.respond(s, _heard(d)))
    done = events[-1]
    assert isinstance(done, Done) and done.trace.get("ahead") is True
    assert "".join(e.text for e in events if isinstance(e, Token)).startswith("Check the brake pads")
    assert _requests(server, "local-test") == before + 1  # the adopted turn asked once
    assert [ex.user for ex in s.memory.exchanges] == [QUESTION]
    assert [t.get("ahead") for t in a.parts.trace.read()] == [True]
    assert not s.busy


def test_other_final_words_drop_it_and_it_records_nothing(tmp_path, library, server):
    a = _assistant(tmp_path, library, server)
    s = a.new_session()
    spec = a.listening.run_ahead(s, object(), _decoded("How often should I check the"))
    assert spec is not None
    done = list(a.respond(s, _heard(_decoded())))[-1]
    spec.join(10)
    assert not spec._thread.is_alive()
    assert "ahead" not in done.trace and spec.cancel.is_set()
    assert [ex.user for ex in s.memory.exchanges] == [QUESTION]  # only the turn that ran
    assert len(a.parts.trace.read()) == 1


def test_speech_that_goes_on_drops_it(tmp_path, library, server):
    a = _assistant(tmp_path, library, server)
    s = a.new_session()
    owner = object()
    spec = a.listening.run_ahead(s, owner, _decoded())
    a.listening.resumed(s, object())  # another utterance speaking: not this one's business
    assert not spec.cancel.is_set()
    a.listening.resumed(s, owner)
    assert spec.cancel.is_set()
    done = list(a.respond(s, _heard(_decoded())))[-1]
    assert "ahead" not in done.trace and len(s.memory.exchanges) == 1


def test_a_changed_conversation_drops_it(tmp_path, library, server):
    from assistant.memory import Exchange

    a = _assistant(tmp_path, library, server)
    s = a.new_session()
    a.listening.run_ahead(s, object(), _decoded())
    s.memory.add(Exchange(user="Hello", assistant="Hi!", intent="greeting", query="Hello"))
    done = list(a.respond(s, _heard(_decoded())))[-1]
    assert "ahead" not in done.trace


def test_a_paid_provider_is_not_called_before_the_verdict(tmp_path, library, server, monkeypatch):
    for k, v in KEYS.items():
        monkeypatch.setenv(k, v)
    a = _assistant(tmp_path, library, server, provider="openai")
    s = a.new_session()
    before = _requests(server, "gpt-test")
    dropped = a.listening.run_ahead(s, object(), _decoded())
    assert _wait(lambda: _has_sources(dropped))  # the free part ran ahead: search and answerability
    time.sleep(0.3)
    assert _requests(server, "gpt-test") == before  # the answer waits for the end of the utterance
    dropped.drop()
    dropped.join(10)
    assert _requests(server, "gpt-test") == before  # dropped: never paid for

    server.script("gpt-test", Reply(ANSWER))
    d = _decoded()
    spec = a.listening.run_ahead(s, object(), d)
    assert _wait(lambda: _has_sources(spec))
    assert _requests(server, "gpt-test") == before
    done = list(a.respond(s, _heard(d)))[-1]
    assert done.trace.get("ahead") is True and done.answer.provider == "openai"
    assert _requests(server, "gpt-test") == before + 1


def _has_sources(spec) -> bool:
    with spec._cond:
        return any(isinstance(e, Sources) for e in spec._events)


def test_off_runs_nothing_ahead(tmp_path, library, server):
    a = _assistant(tmp_path, library, server, speech__streaming__preemptive="off")
    assert a.listening.run_ahead(a.new_session(), object(), _decoded()) is None


def test_a_real_utterance_is_answered_from_the_turn_run_in_its_pause(tmp_path, library, server):
    """Real speech fed as the page posts it, real whisper base: the pass in the pause starts the
    turn, and the turn at the end of the utterance is that one."""
    a = _assistant(tmp_path, library, server, transcriber=shared_transcriber("base"),
                   speech__streaming__partial_model=None)
    server.script("local-test", Reply(ANSWER))
    s = a.new_session()
    rate, speech = a.synthesise(QUESTION)
    clip = from_array(speech, rate).samples
    clip = np.concatenate([np.zeros(8000, np.float32), clip, np.zeros(16000, np.float32)])
    listener = a.listening.open(s)
    for i in range(0, len(clip), 1600):  # 100 ms chunks, in real time
        listener.feed(clip[i : i + 1600], 16000)
        time.sleep(0.1)
    assert _wait(lambda: s._ahead is not None, 10)
    result = listener.finish()
    assert result.final_pass == "none", result
    done = list(a.respond(s, a.listening.heard(result)))[-1]
    assert done.trace.get("ahead") is True, done.trace
    assert "brake" in done.trace["question"].lower() and "500" in done.answer.text


def test_the_first_piece_of_a_spoken_answer_is_synthesised_ahead(tmp_path, library, server):
    a = _assistant(tmp_path, library, server)
    synth = a.parts.synthesiser.get()  # loaded (the app warms it up)
    server.script("local-test", Reply(LONGER))
    s = a.new_session()
    s.speak_answers = True
    d = _decoded()
    spec = a.listening.run_ahead(s, object(), d)
    assert _wait(lambda: spec.first_piece is not None and spec.first_piece[1].done())
    piece, audio = spec.first_piece
    assert piece.strip() == "Check the brake pads every 500 kilometres,"
    tokens = "".join(e.text for e in a.respond(s, _heard(d)) if isinstance(e, Token))
    assert tokens.startswith(piece.strip())
    ahead = audio.result()
    assert a.synthesise(piece, s) is ahead  # the page's first piece: the audio made in the pause
    again = a.synthesise(piece, s)  # once only; anything else is synthesised now
    assert again is not ahead and again[0] == ahead[0] and abs(len(again[1]) - len(ahead[1])) < ahead[0]
    assert synth.engine_name


def test_a_silent_session_synthesises_nothing_ahead(tmp_path, library, server):
    a = _assistant(tmp_path, library, server)
    a.parts.synthesiser.get()
    server.script("local-test", Reply(ANSWER))
    s = a.new_session()
    d = _decoded()
    spec = a.listening.run_ahead(s, object(), d)
    done = list(a.respond(s, _heard(d)))[-1]
    assert done.trace.get("ahead") is True and spec.first_piece is None


def test_a_first_piece_completed_after_the_adoption_is_still_the_one_synthesised_ahead(tmp_path, library, server):
    """Hands-free: the end of the turn often comes before the answer's first words; the page's first
    piece is then still the audio the turn run ahead makes, not a second synthesis of it."""
    from assistant.speak import SentenceSplitter

    a = _assistant(tmp_path, library, server)
    a.parts.synthesiser.get()
    server.script("local-test", Reply(LONGER, ttft=0.6))
    s = a.new_session()
    s.speak_answers = True
    d = _decoded()
    spec = a.listening.run_ahead(s, object(), d)
    splitter, first = SentenceSplitter(), None
    for event in a.respond(s, _heard(d)):  # adopted before the provider's first token
        if isinstance(event, Token) and first is None:
            pieces = splitter.feed(event.text)
            if pieces:
                first = pieces[0]
                assert spec.first_piece is not None and spec.first_piece[0] == first
                assert a.synthesise(first, s) is spec.first_piece[1].result()
    assert first is not None


def test_an_adopted_turn_nobody_reads_on_is_stopped(tmp_path, library, server):
    a = _assistant(tmp_path, library, server)
    server.script("local-test", Reply(LONGER, chunk_delay=0.2))
    s = a.new_session()
    d = _decoded()
    spec = a.listening.run_ahead(s, object(), d)
    events = a.respond(s, _heard(d))
    assert next(e for e in events if isinstance(e, Token))
    events.close()  # the page went away mid-answer
    assert spec.cancel.is_set() and not s.busy
    spec.join(10)
    assert not spec._thread.is_alive()


def test_the_pass_that_starts_it_never_waits_for_the_local_server_probe(tmp_path, library, server, monkeypatch):
    """Whether a local server answers is a network probe (up to 0.5 s for one that does not): it is
    asked in the turn's own thread, never in the speech pass's, whose transcript the user waits for."""
    import threading

    import assistant.listening as listening

    release, asked = threading.Event(), threading.Event()

    def slow_probe(parts):
        asked.set()
        release.wait(10)
        return True

    monkeypatch.setattr(listening, "answers_locally", slow_probe)
    a = _assistant(tmp_path, library, server)
    s = a.new_session()
    returned = threading.Event()
    threading.Thread(target=lambda: (a.listening.run_ahead(s, object(), _decoded()), returned.set()), daemon=True).start()
    assert returned.wait(5) and asked.wait(5)  # the pass went on while the probe was still waiting
    release.set()
    done = list(a.respond(s, _heard(_decoded())))[-1]
    assert done.trace.get("ahead") is True
