"""Short and unclear recordings through the whole turn, with real audio and Hark's default speech
model (whisper base): a tap of the button or a 300 ms blip is "I didn't catch that", never a
greeting; a real short greeting is still greeted."""

from __future__ import annotations

import numpy as np
import pytest

from assistant.assistant import Assistant
from assistant.events import AudioInput, Done, IntentEvent, Notice
from models.audio import decode_file, from_array
from tests.assistant.turn_fixtures import build_library, make_config, shared_classifier
from tests.audio_data import librivox_clips, shared_transcriber

RATE = 16000
GREETING_WORDS = ("hello", "hi!", "welcome", "goodbye", "ready to help")


@pytest.fixture(scope="module")
def assistant(tmp_path_factory, minilm):
    library = build_library(tmp_path_factory, minilm)
    cfg = make_config(tmp_path_factory.mktemp("voice"), library)
    assert cfg.speech.model == "base"  # the thresholds are the defaults of the default model
    return Assistant(
        cfg,
        embedder=library.embedder,
        store=library.store,
        classifier=shared_classifier(),
        transcriber=shared_transcriber("base"),
    )


def _recording(sound: np.ndarray, before: float = 0.5, after: float = 0.7, seed: int = 0) -> np.ndarray:
    """`sound` in a push-to-talk recording: silence around it and a quiet microphone hiss."""
    rng = np.random.default_rng(seed)
    clip = np.concatenate([np.zeros(int(before * RATE)), sound, np.zeros(int(after * RATE))])
    return (clip + rng.standard_normal(len(clip)) * 0.003).astype(np.float32)


def _turn(assistant, samples: np.ndarray) -> list:
    pcm = (np.clip(samples, -1, 1) * 32767).astype(np.int16)
    return list(assistant.respond(assistant.new_session(), AudioInput(samples=pcm, sample_rate=RATE)))


def _blips() -> list[tuple[str, np.ndarray]]:
    """300 ms cut out of real speech (LibriVox), the way a too-quick press catches a word."""
    out = []
    for clip_index, offsets in ((0, (0.5, 2.0, 3.0)), (1, (0.4, 1.2, 2.2))):
        speech = decode_file(librivox_clips()[clip_index].path).samples
        for off in offsets:
            out.append((f"clip{clip_index}@{off}", speech[int(off * RATE) : int((off + 0.3) * RATE)]))
    return out


def test_a_300_ms_blip_is_never_a_greeting(assistant):
    caught = 0
    for name, blip in _blips():
        events = _turn(assistant, _recording(blip, seed=len(name)))
        done = events[-1]
        assert isinstance(done, Done), name
        intents = [e.label for e in events if isinstance(e, IntentEvent)]
        assert "greeting" not in intents and done.answer.provider != "greeting", (name, events)
        if done.answer.provider == "speech":
            assert "didn't catch" in done.answer.text.lower(), (name, done.answer.text)
            assert any(isinstance(e, Notice) for e in events)
            caught += 1
    assert caught >= 5, caught  # clipped words are "didn't catch that", not a guess at a question


def test_a_tap_of_the_button_is_too_short(assistant):
    speech = decode_file(librivox_clips()[0].path).samples
    events = _turn(assistant, speech[RATE : RATE + int(0.3 * RATE)])  # the whole recording is 300 ms
    done = events[-1]
    assert done.answer.provider == "speech" and "too short" in done.answer.text, done.answer.text


@pytest.mark.parametrize("words", ["Hello.", "Thank you."])
def test_a_real_short_greeting_is_still_greeted(assistant, words):
    rate, samples = assistant.synthesise(words)
    events = _turn(assistant, _recording(from_array(samples, rate).samples))
    assert [e.label for e in events if isinstance(e, IntentEvent)] == ["greeting"], events
    done = events[-1]
    assert done.answer.provider == "greeting" and any(w in done.answer.text.lower() for w in GREETING_WORDS)


def test_the_live_words_run_on_the_partial_model_with_its_own_threads(assistant):
    """The passes while the user speaks use `partial_model` on `partial_threads` CPU threads (its
    last pass may run beside the main model's pass in the pause), loaded once for all sessions."""
    streaming = assistant.cfg.speech.streaming
    first, second = assistant.listening.open(assistant.new_session()), assistant.listening.open(None)
    streaming.partial_threads = 1
    third = assistant.listening.open(None)
    try:
        assert first.partial is not None and first.partial.settings.model == streaming.partial_model == "tiny.en"
        assert second.partial is first.partial  # loaded once
        assert third.partial is not first.partial and third.partial.settings.cpu_threads == 1
        assert first.partial.settings.cpu_threads == first.transcriber.settings.cpu_threads == 0
    finally:
        streaming.partial_threads = 0
        for st in (first, second, third):
            st.close()
