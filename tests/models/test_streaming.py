"""models/vad.py and models/streaming.py on real speech with real faster-whisper (bundled tiny.en)."""

from __future__ import annotations

import time

import numpy as np
import pytest

from bench.wer import wer
from models import audio as audio_io
from models.settings import SpeechSettings, StreamingSettings
from models.speech import SpeechInputError, Transcriber
from models.streaming import StreamingTranscriber
from models.vad import VoiceActivity
from tests.audio_data import espeak_wav, librivox_clips, shared_transcriber

RATE = 16000


@pytest.fixture(scope="module")
def question(tmp_path_factory) -> np.ndarray:
    path = espeak_wav(tmp_path_factory.mktemp("stream"), "what is the notice period in my rental agreement")
    return audio_io.load(path).samples


def _silence(seconds: float) -> np.ndarray:
    return np.zeros(int(seconds * RATE), np.float32)


def test_vad_finds_the_speech_and_the_silence_after_it(question):
    audio = np.concatenate([_silence(0.5), question, _silence(1.0)])
    whole = VoiceActivity()
    whole.feed(audio)
    assert whole.heard and not whole.speaking
    loud = np.flatnonzero(np.abs(question) > 0.02)
    speech_end = 0.5 + loud[-1] / RATE  # the last loud sample
    assert abs(whole.speech_end_seconds - speech_end) < 0.25, (whole.speech_end_seconds, speech_end)
    assert 0.5 - 0.2 <= whole.heard_at_seconds <= 0.5 + 0.3
    assert whole.silence_ms >= 900
    # fed in 100 ms chunks (as the browser sends them) it decides the same
    chunked = VoiceActivity()
    for i in range(0, len(audio), 1600):
        chunked.feed(audio[i : i + 1600])
    assert chunked.frames == whole.frames
    assert chunked.speech_end_seconds == whole.speech_end_seconds
    assert chunked.heard_at_seconds == whole.heard_at_seconds


def test_vad_a_click_or_a_cough_is_not_speech(question):
    rng = np.random.default_rng(1)
    click = np.concatenate(
        [_silence(0.5), rng.uniform(-0.8, 0.8, int(0.03 * RATE)).astype(np.float32), _silence(1)]
    )
    vad = VoiceActivity(min_speech_ms=250)
    vad.feed(click)
    assert not vad.heard
    short = VoiceActivity(min_speech_ms=250)
    short.feed(np.concatenate([_silence(0.3), question[int(0.2 * RATE) : int(0.35 * RATE)], _silence(1)]))
    assert not short.heard  # 150 ms of a word


def _wait(st: StreamingTranscriber, passes: int, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while st.view().passes < passes:
        assert time.monotonic() < deadline, "the background pass did not finish"
        time.sleep(0.05)


def test_streamed_transcript_matches_the_whole_clip():
    """Decoded while it arrives (in 100 ms chunks, as the browser sends them); the machine's speed
    decides how many passes fit while a user speaks, so the test waits for them instead."""
    tiny = shared_transcriber("tiny.en")
    clip = max(librivox_clips(), key=lambda c: c.path.stat().st_size)  # the longest, ~7 s
    samples = audio_io.load(clip.path).samples
    held = np.concatenate([samples, _silence(0.4)])
    st = StreamingTranscriber(tiny, StreamingSettings(interval_s=0.8))
    half = len(samples) // 2
    for i in range(0, half, 1600):
        st.feed(held[i : min(i + 1600, half)], RATE)
    _wait(st, 1)
    first = st.view()
    assert first.text and first.committed == ""  # one pass: nothing agreed yet
    for i in range(half, len(held), 1600):
        st.feed(held[i : i + 1600], RATE)
    _wait(st, 2)
    assert "dashwood" in st.view().text.lower()
    result = st.finish()
    whole = tiny.transcribe(held, sample_rate=RATE)
    assert result.passes >= 2
    assert wer([clip.reference], [result.text]) <= wer([clip.reference], [whole.text]) + 0.02
    # what a browser sends (48 kHz int16, here stereo) is converted like any other input
    st2 = StreamingTranscriber(tiny, StreamingSettings())
    pcm = (audio_io.resample(held, RATE, 48000) * 30000).astype(np.int16)
    st2.feed(np.repeat(pcm[:, None], 2, axis=1), 48000)
    assert "dashwood" in st2.finish().text.lower()


def test_no_speech_is_a_clear_message():
    tiny = shared_transcriber("tiny.en")
    st = StreamingTranscriber(tiny, StreamingSettings())
    st.feed(_silence(1.5), RATE)
    with pytest.raises(SpeechInputError, match="didn't catch"):
        st.finish()
    empty = StreamingTranscriber(tiny, StreamingSettings())
    with pytest.raises(SpeechInputError, match="empty"):
        empty.finish()


def test_leading_silence_is_not_kept_while_waiting(question):
    """Hands-free: the microphone is open long before anyone speaks."""
    tiny = shared_transcriber("tiny.en")
    st = StreamingTranscriber(tiny, StreamingSettings(), max_seconds=5)
    for _ in range(80):  # 8 s of quiet, more than max_seconds
        st.feed(_silence(0.1), RATE)
    assert st.seconds <= 3.1
    st.feed(np.concatenate([question, _silence(0.5)]), RATE)
    text = st.finish().text.lower()
    assert "notice" in text and "rental" in text


class _Counted(Transcriber):
    """A real tiny.en whose passes are counted."""

    def __init__(self) -> None:
        super().__init__(SpeechSettings(model="tiny.en"))
        self.passes = 0

    def decode(self, samples, prefix=None, margin_s=None, hint=None):
        self.passes += 1
        return super().decode(samples, prefix, margin_s, hint)


def test_partial_model_speaks_live_and_the_main_model_gives_the_transcript():
    """Passes while the user speaks run on `partial`; the transcript at release is always a pass of
    the main model, started by `end()` (at release) without waiting for a running partial pass."""
    main, partial = _Counted(), _Counted()
    clip = max(librivox_clips(), key=lambda c: c.path.stat().st_size)
    samples = audio_io.load(clip.path).samples
    st = StreamingTranscriber(main, StreamingSettings(interval_s=0.8), partial=partial)
    for i in range(0, len(samples), 1600):
        st.feed(samples[i : i + 1600], RATE)
    _wait(st, 1)
    assert partial.passes >= 1  # while the speech went on
    st.feed(_silence(0.4), RATE)
    st.end()
    result = st.finish()
    assert st.finish() is result  # one transcript, however often it is asked for
    assert main.passes >= 1 and result.final_pass in ("none", "full")
    assert result.ready_at <= time.time()
    whole = main.transcribe(np.concatenate([samples, _silence(0.4)]), sample_rate=RATE)
    assert wer([clip.reference], [result.text]) <= wer([clip.reference], [whole.text]) + 0.02




class _Timed:
    """A real, shared whisper model whose passes note when they started and ended."""

    def __init__(self, model: str) -> None:
        self.model = shared_transcriber(model)
        self.started: list[float] = []
        self.ended: list[float] = []

    def decode(self, samples, prefix=None, margin_s=None, hint=None):
        self.started.append(time.monotonic())
        try:
            return self.model.decode(samples, prefix, margin_s, hint)
        finally:
            self.ended.append(time.monotonic())

    def check_short(self, decoded) -> None:
        self.model.check_short(decoded)

    def written(self, text: str) -> str:
        return self.model.written(text)


def test_the_pass_in_the_pause_follows_a_running_partial_pass():
    """The user stops while a pass of the partial model (here the slower base) runs: the main
    model's pass in the pause starts when that pass ends, not beside it (two passes at once on
    two cores both end later), and at the end of the turn it is the transcript (no pass is left
    to run then)."""
    main, partial = _Timed("tiny.en"), _Timed("base")
    clip = max(librivox_clips(), key=lambda c: c.path.stat().st_size)
    samples = audio_io.load(clip.path).samples
    st = StreamingTranscriber(main, StreamingSettings(interval_s=0.8), partial=partial)
    fed = 0
    while fed < 3 * RATE or not st.vad.speaking:  # the speech at once, up to a word: a partial pass starts
        st.feed(samples[fed : fed + 1600], RATE)
        fed += 1600
    samples = samples[:fed]
    deadline = time.monotonic() + 60
    while not partial.started:
        assert time.monotonic() < deadline, "no partial pass"
        time.sleep(0.005)
    st.feed(_silence(0.3), RATE)  # the user stops: a pause
    while not main.started:
        assert time.monotonic() < deadline, "no pass in the pause"
        time.sleep(0.005)
    assert len(partial.ended) == len(partial.started), "the pass in the pause ran beside a partial pass"
    assert main.started[0] >= partial.ended[-1]
    st.feed(_silence(0.3), RATE)
    st.end()
    result = st.finish()
    assert result.final_pass == "none", result.timeline  # the pass in the pause was the transcript
    assert [m.kind for m in result.timeline if m.kind != "partial"] == ["pause"]
    margin = StreamingSettings().window_margin_s  # the stream's passes, the same window
    assert result.text == main.model.decode(np.concatenate([samples, _silence(0.3)]), margin_s=margin).text


@pytest.mark.parametrize("cover_margin_ms, final", [(None, "none"), (300.0, "full")])
def test_the_pass_in_a_short_pause_is_the_transcript_unless_a_longer_margin_is_asked(question, cover_margin_ms, final):
    """The pass starts once the silence reaches `pause_ms`, so it covers that much past the speech:
    by default that is enough for the transcript (no pass at the end); a `cover_margin_ms` longer
    than the pause asks for one more pass over the whole buffer at the end."""
    main = _Timed("tiny.en")
    settings = StreamingSettings(cover_margin_ms=cover_margin_ms, interval_s=60)  # no pass while speaking
    st = StreamingTranscriber(main, settings)
    spoken = question[: np.flatnonzero(np.abs(question) > 0.02)[-1] + 1]  # no trailing silence
    st.feed(np.concatenate([_silence(0.3), spoken]), RATE)
    deadline = time.monotonic() + 60
    while not main.started:  # the pause grows frame by frame until its pass starts
        assert time.monotonic() < deadline, "no pass in the pause"
        st.feed(_silence(0.032), RATE)
        time.sleep(0.01)
    assert st.vad.silence_ms < settings.pause_ms + 200
    _wait(st, 1)
    st.feed(_silence(0.4), RATE)  # the rest of the endpoint's silence
    st.end()
    result = st.finish()
    assert result.final_pass == final, result.timeline
    assert result.timeline[0].kind == "pause", result.timeline
    assert "notice" in result.text.lower()
