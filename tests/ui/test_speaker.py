"""Spoken answers: streamed text becomes sentences, each a playable WAV from the real synthesiser;
a synthesiser failure is reported once and silences the rest."""

from __future__ import annotations

import io
import wave

from models.runtime.errors import HarkError
from models.settings import TTSSettings
from models.tts import Synthesiser
from ui.speaker import SpeechQueue, speak_sentences


def _stream(text: str, size: int = 7) -> SpeechQueue:
    q = SpeechQueue()
    for i in range(0, len(text), size):  # token-sized pieces, as an answer streams
        q.feed(text[i : i + size])
    q.finish()
    return q


def test_sentences_become_playable_wavs():
    q = _stream("The rent is 950 euros per month [1]. The deposit is 1,900 euros. Thanks")
    wavs = list(speak_sentences(q.sentences(timeout=1), Synthesiser(TTSSettings()).synthesise))
    assert len(wavs) == 3
    for data in wavs:
        with wave.open(io.BytesIO(data)) as w:
            assert w.getnchannels() == 1 and w.getsampwidth() == 2
            assert w.getnframes() / w.getframerate() > 0.3  # real speech, not an empty clip


def test_a_failing_synthesiser_is_reported_once_and_the_rest_stays_silent():
    calls, errors = [], []

    def broken(text: str):
        calls.append(text)
        raise HarkError("espeak-ng is not installed")

    q = _stream("First sentence here. Second sentence here. Third one.")
    assert list(speak_sentences(q.sentences(timeout=1), broken, on_error=errors.append)) == []
    assert len(calls) == 1 and errors == ["Could not speak the answer: espeak-ng is not installed"]


def test_a_new_turn_drops_what_a_stopped_turn_left():
    q = SpeechQueue()
    q.feed("Left over from a stopped answer. ")
    q.finish()
    q.start_turn()
    q.feed("Fresh answer. ")
    q.finish()
    assert list(q.sentences(timeout=1)) == ["Fresh answer."]


def test_finishing_twice_ends_the_answer_once():
    q = SpeechQueue()
    q.feed("The deposit is returned within thirty days")
    q.finish()  # the turn's thread: the answer is complete
    q.feed(" and more")  # nothing counts after the end
    q.finish()  # the page's generator ends later: no second end, no leftover
    assert " ".join(q.sentences(timeout=1)) == "The deposit is returned within thirty days"
    q.start_turn()
    q.feed("Next answer.")
    q.finish()
    assert list(q.sentences(timeout=1)) == ["Next answer."]
