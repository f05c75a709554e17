"""Barge-in decisions of the voice loop on real sounds through the real Silero VAD: the same sound
gives the same decision however the page's chunks fall (a busy machine posts fewer, longer ones).
The speech recogniser is not part of these decisions, so the listener here only runs the VAD."""

from __future__ import annotations

import functools
import subprocess
import time
import wave
from types import SimpleNamespace

import numpy as np
import pytest

from models import audio as audio_io
from models.settings import StreamingSettings
from models.streaming import StreamingTranscriber
from models.turn_end import TurnEnd
from models.vad import FRAME_MS, VoiceActivity
from tests.audio_data import shared_transcriber
from tests.ui.conftest import speak_to_wav, vowel_blip
from ui.voice import SEND_MS, VoiceLoop, VoiceState

RATE = 44100  # what Chromium's AudioContext ran at here
# ScriptProcessor buffers of 2048 samples, one to nine at a time; then what a page posts after a
# stalled request (the sound and all the quiet after it in one chunk)
CHUNK_MS = [46, 100, 139, 232, 418, 1000, 2500]


class _Listener:
    """The VAD of one utterance (what `VoiceLoop` reads for barge-in)."""

    def __init__(self, settings: StreamingSettings) -> None:
        self.vad = VoiceActivity(settings.vad_threshold, settings.min_speech_ms)
        self.heard: list[np.ndarray] = []

    def feed(self, samples: np.ndarray, rate: int) -> None:
        clip = audio_io.from_array(samples, rate).samples
        self.heard.append(clip)
        self.vad.feed(clip)

    def view(self):
        return None

    def audio(self) -> np.ndarray:
        return np.concatenate(self.heard) if self.heard else np.zeros(0, np.float32)

    def passing(self) -> bool:  # no recogniser here: never a pass of the main model
        return False

    def pause_text(self) -> None:  # ... and never its words
        return None

    def pausing(self) -> bool:
        return False

    def end(self) -> None:
        pass

    def close(self) -> None:
        pass


class _Listening:
    def __init__(self, settings: StreamingSettings) -> None:
        self.settings = settings
        self.interrupted = 0

    def open(self, session):
        return _Listener(self.settings)

    def interrupt(self, session) -> None:
        self.interrupted += 1

    def resumed(self, session, owner) -> None:
        pass

    def turn_complete(self, audio: np.ndarray) -> float:  # the real Smart-Turn model
        return _turn_model().probability(audio)


@functools.lru_cache(maxsize=1)
def _turn_model() -> TurnEnd:
    return TurnEnd()


def _wav(path) -> np.ndarray:
    with wave.open(str(path)) as w:
        return np.frombuffer(w.readframes(w.getnframes()), np.int16)


def _resampled(path, folder) -> np.ndarray:
    out = folder / f"{path.stem}_{RATE}.wav"
    subprocess.run(["sox", str(path), "-r", str(RATE), str(out)], check=True)
    return _wav(out)


@pytest.fixture(scope="module")
def sounds(tmp_path_factory):
    folder = tmp_path_factory.mktemp("voice_loop")
    stop = speak_to_wav("stop, how much is the deposit for the flat", folder / "stop.wav")
    blip = vowel_blip(folder, 0.12)  # 3-4 VAD frames: long enough to pause, not speech
    return {"stop": _resampled(stop, folder), "blip": _resampled(blip, folder)}


def _onset_ms(samples: np.ndarray) -> float:
    """Where the VAD hears the first sound of the whole clip."""
    vad = VoiceActivity()
    clip = audio_io.from_array(samples, RATE).samples
    for i in range(0, len(clip), 512):
        vad.feed(clip[i : i + 512])
        if vad.voiced_frames:  # the first frame of the first run
            return (vad.last_voiced_end - vad.voiced_frames) * FRAME_MS
    raise AssertionError("no sound in the clip")


def _play(samples: np.ndarray, chunk_ms: float):
    """Post `samples` in chunks while Hark is speaking; each decision with the audio time (ms) it came at."""
    settings = StreamingSettings()
    listening = _Listening(settings)
    loop = VoiceLoop(SimpleNamespace(listening=listening), settings)
    voice = VoiceState(hands_free=True, playing=True)
    voice.session = SimpleNamespace(busy=False)
    step = max(1, int(RATE * chunk_ms / 1000))
    decisions = []
    for at in range(0, len(samples), step):
        reply = loop.chunk(voice, 1, samples[at : at + step], RATE, end=False)
        for kind in ("hold", "resume", "barge", "turn"):
            if getattr(reply, kind):
                decisions.append((kind, (at + step) * 1000 / RATE))
    return decisions, listening, voice


@pytest.mark.parametrize("chunk_ms", CHUNK_MS)
def test_speech_over_the_answer_pauses_it_then_stops_it_never_resumes(sounds, chunk_ms):
    """ "stop," is one short word and a pause before the rest: together they are speech."""
    decisions, listening, voice = _play(sounds["stop"], chunk_ms)
    kinds = [k for k, _ in decisions]
    assert kinds[:2] == ["hold", "barge"], decisions
    assert "resume" not in kinds, decisions
    assert listening.interrupted == 1 and voice.cut_off_pending
    hold_at = dict(decisions)["hold"]
    settings = StreamingSettings()
    # paused as soon as the chunk with the sound's first barge_hold_ms has arrived
    assert hold_at - _onset_ms(sounds["stop"]) <= settings.barge_hold_ms + chunk_ms + FRAME_MS, decisions


@pytest.mark.parametrize("chunk_ms", CHUNK_MS)
def test_a_short_sound_pauses_the_answer_then_lets_it_play_on(sounds, chunk_ms):
    decisions, listening, voice = _play(sounds["blip"], chunk_ms)
    kinds = [k for k, _ in decisions]
    assert kinds == ["hold", "resume"], decisions  # never a barge-in, never a turn
    assert listening.interrupted == 0 and not voice.cut_off_pending
    resume_at = dict(decisions)["resume"]
    sound_end = _onset_ms(sounds["blip"]) + 5 * FRAME_MS  # the vowel is 3 to 5 frames long
    settings = StreamingSettings()
    # the quiet after the sound is what lets it play on, not the time since the pause
    assert (
        sound_end + settings.resume_ms - 3 * FRAME_MS
        <= resume_at
        <= sound_end + settings.resume_ms + chunk_ms
    )


def test_nothing_happens_while_the_user_is_quiet(sounds):
    quiet = np.zeros(RATE * 2, np.int16)
    decisions, listening, _ = _play(quiet, 100)
    assert decisions == [] and listening.interrupted == 0


class _Recognising(_Listening):
    """Opens a real streaming transcription (bundled tiny.en) for each utterance."""

    def open(self, session):
        return StreamingTranscriber(shared_transcriber("tiny.en"), self.settings)


@pytest.mark.parametrize("hands_free", [True, False])
def test_the_page_posts_sooner_while_the_next_frames_decide_the_pass_or_the_end_of_turn(tmp_path, hands_free):
    """While the user speaks, and while a pass of the main model runs, every ~100 ms; in the pause
    before its pass starts (and, hands-free, until the end of turn) every `pause_chunk_ms`."""
    # no pass while speaking: the pause's pass is the first; the silence alone ends the turn
    settings = StreamingSettings(interval_s=60, end_of_turn="silence")
    loop = VoiceLoop(SimpleNamespace(listening=_Recognising(settings)), settings)
    voice = VoiceState(hands_free=hands_free)
    voice.session = SimpleNamespace(busy=False)
    question = audio_io.load(speak_to_wav("what is the notice period", tmp_path / "q.wav")).samples
    spoken = question[: np.flatnonzero(np.abs(question) > 0.02)[-1] + 1]  # no trailing silence
    speaking = loop.chunk(voice, 1, np.concatenate([np.zeros(4800, np.float32), spoken]), 16000, end=False)
    assert speaking.send_ms == SEND_MS
    listener = voice.listener
    before = speaking
    while listener.vad.speaking:  # the speech's last frames, 32 ms at a time
        before = loop.chunk(voice, 1, np.zeros(512, np.float32), 16000, end=False)
    assert listener.vad.silence_ms < settings.pause_ms  # not yet a pause: its pass is still to come
    assert listener.pausing() and before.send_ms == settings.pause_chunk_ms < SEND_MS
    deadline = time.monotonic() + 60
    while not listener.passing() and not listener.view().passes:
        assert time.monotonic() < deadline, "no pass in the pause"
        loop.chunk(voice, 1, np.zeros(512, np.float32), 16000, end=False)
        time.sleep(0.005)
    if listener.passing():
        assert loop.chunk(voice, 1, np.zeros(0, np.float32), 16000, end=False).send_ms == SEND_MS
    while not listener.view().passes:
        assert time.monotonic() < deadline, "the pass in the pause did not end"
        time.sleep(0.01)
    after = loop.chunk(voice, 1, np.zeros(0, np.float32), 16000, end=False)  # the pause's pass made
    assert not listener.pausing()
    assert after.send_ms == (settings.pause_chunk_ms if hands_free else SEND_MS)
