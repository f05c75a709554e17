"""Transcribe while the user speaks: a growing buffer re-decoded in the background, the stable prefix
committed (local agreement of two passes), so that at release only the tail is left to decode.

faster-whisper encodes a 30-second window whatever the clip's length, so a pass costs about the
same at 1 s as at 10 s; what can be saved at release is the pass itself and the decoding of the
words already heard. A `StreamingTranscriber` keeps one background thread per utterance and model:

- audio arrives with `feed()` (any rate, any chunking); the Silero VAD (`models/vad.py`) scores it;
- while there is speech, a pass runs over the whole buffer each time `interval_s` of new audio has
  arrived (on `partial`, a smaller model, when given: those passes only feed the live words), and
  once more on the main model as soon as the speech pauses for `pause_ms` (that pass usually covers
  the whole utterance). The two models have a thread each, but they take turns: a pass in the
  pause starts as soon as a running partial pass ends (two passes at once on two cores, beside
  the browser, both end later: `bench.voice`), and no partial pass starts while the speech pauses
  or a main pass runs;
- LocalAgreement-2 (whisper-streaming, Macháček et al. 2023): the words on which the last two
  passes agree, from the start, are committed; later words are tentative. Both are shown live;
- `end()` (the user released, or the end of turn was detected) starts making the transcript and
  `finish()` returns it: when the last main-model pass already covered every frame of speech, its
  text as it is (no pass at release; a running `partial` pass is never waited for); else one
  more pass over the whole buffer (`prefix_at_release`: with the committed words forced as the
  decoder's prefix; `tail_model`, e.g. tiny.en, can run that pass instead).

Every pass uses the settings of the whole-clip `Transcriber.transcribe`, so a transcript from the
stream is the one the whole clip would give, up to the last pass's cut (bench: `bench/stream_stt.py`).
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from models import audio as audio_io
from models.agreement import agreed_prefix, leading_words, mid_sentence, words
from models.settings import StreamingSettings
from models.speech import Decoded, SpeechInputError, Transcriber
from models.vad import FRAME, FRAME_MS, RATE, VoiceActivity

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class StreamView:
    """What the page shows while the user speaks."""

    committed: str  # agreed by two passes: will not change
    tentative: str  # the latest pass's words after the committed ones
    heard: bool  # speech of at least min_speech_ms so far
    speaking: bool
    silence_ms: float  # since the last speech
    seconds: float  # audio received
    passes: int

    @property
    def text(self) -> str:
        return " ".join(p for p in (self.committed, self.tentative) if p)


@dataclass(frozen=True)
class StreamResult:
    """The transcript of one streamed utterance."""

    text: str
    seconds: float  # wall time from finish() to the text: what the user waits at release
    duration: float  # seconds of audio
    final_pass: str  # none (the last pass covered all speech) | tail (prefix forced) | full
    passes: int  # passes while the user spoke
    committed_words: int
    avg_logprob: float | None  # of the pass that gave the text (as TranscriptResult)
    no_speech_prob: float | None
    speech_seconds: float
    ready_at: float = 0.0  # time.time() when the text was ready
    timeline: tuple[PassMark, ...] = ()  # the utterance's passes (bench.voice prints them)


@dataclass(frozen=True)
class PassMark:
    """One pass: which, when (time.time()), over how much of the buffer (s), speech's end then."""

    kind: str  # partial | pause (main model, in a pause) | main (main model, speaking) | final
    started: float
    ended: float
    audio_s: float
    speech_end_s: float


class StreamingTranscriber:
    """One utterance, transcribed while it is spoken. `feed` from the audio thread, `view` from any."""

    def __init__(
        self,
        transcriber: Transcriber,
        settings: StreamingSettings,
        tail: Transcriber | None = None,
        partial: Transcriber | None = None,
        on_hypothesis: Callable[[Decoded], None] | None = None,
        max_seconds: float = 60.0,
    ) -> None:
        self.transcriber = transcriber
        self.settings = settings
        self.tail = tail
        self.partial = partial  # passes while the user speaks (None: the main model)
        self.on_hypothesis = on_hypothesis  # called with each pass made in a pause (its words and confidence)
        self.max_samples = int(max_seconds * RATE)
        self.vad = VoiceActivity(settings.vad_threshold, settings.min_speech_ms)
        self._parts: list[np.ndarray] = []
        self._samples = 0
        self._offset = 0  # samples of leading silence dropped (the VAD counts from the stream start)
        self._cond = threading.Condition()
        self._closed = False
        self._finishing = False
        self._last: Decoded | None = None  # the latest pass
        self._last_end = 0  # samples the latest pass covered
        self._main: tuple[Decoded, int] | None = None  # the latest pass of the main model, its end
        self._committed = ""
        self._committed_n = 0
        self._passes = 0
        self._error: Exception | None = None
        self._inflight_end: int | None = None  # samples the running pass of the main model covers
        self._inflight_partial = False  # a pass of the partial model is running
        self._abandoned = False  # finish() went ahead without the running pass of the main model
        self._ending = False  # end() was called: the transcript is being made
        self._ended = threading.Event()  # ... and is ready (in _outcome)
        self._outcome: StreamResult | Exception | None = None
        self._timeline: list[PassMark] = []
        self._thread = threading.Thread(target=self._loop, args=(False,), name="hark-stream", daemon=True)
        self._thread.start()
        if partial is not None:
            threading.Thread(target=self._loop, args=(True,), name="hark-stream-partial", daemon=True).start()

    # ---- input --------------------------------------------------------------------------------
    def feed(self, samples: np.ndarray, sample_rate: int) -> None:
        """Append a chunk (any dtype/layout/rate; converted to 16 kHz mono)."""
        clip = audio_io.from_array(np.asarray(samples), int(sample_rate)).samples
        with self._cond:
            if self._finishing or self._closed:
                return
            room = self.max_samples - self._samples
            if room <= 0:
                return
            clip = clip[:room]
            self._parts.append(clip)
            self._samples += len(clip)
        self.vad.feed(clip)
        with self._cond:
            if not self.vad.heard and self._samples > 3 * RATE:
                # nothing said yet (hands-free waits here): keep only the last second
                audio = self._audio_locked()
                drop = len(audio) - RATE
                self._parts = [audio[drop:]]
                self._samples -= drop
                self._offset += drop
            self._cond.notify_all()

    def _speech_end(self) -> int:
        """Where the last speech ended, in samples of the buffer."""
        return max(0, int(self.vad.speech_end_seconds * RATE) - self._offset)

    @property
    def seconds(self) -> float:
        return self._samples / RATE

    def view(self) -> StreamView:
        with self._cond:
            last = self._last.text if self._last is not None else ""
            committed = self._committed
            tentative = " ".join(last.split()[len(committed.split()) :])
            return StreamView(
                committed=committed,
                tentative=tentative,
                heard=self.vad.heard,
                speaking=self.vad.speaking,
                silence_ms=self.vad.silence_ms,
                seconds=self._samples / RATE,
                passes=self._passes,
            )

    def pausing(self) -> bool:
        """The speech has paused, no pass of the main model runs, and the pass in the pause has
        not yet covered it: the next frames may start that pass."""
        with self._cond:
            if not self.vad.heard or self.vad.speaking or self._inflight_end is not None:
                return False
            return self._pause_uncovered()

    def pause_text(self) -> str | None:
        """While the speech pauses: the text of the main model's pass that reached this pause (the
        transcript the turn would take, what `models/turn_text.py` reads), or None (none yet)."""
        with self._cond:
            if not self.vad.heard or self.vad.speaking or self._main is None:
                return None
            decoded, end = self._main
            return decoded.text if end >= self._speech_end() + self._margin() else None

    def passing(self) -> bool:
        """A pass of the main model runs."""
        with self._cond:
            return self._inflight_end is not None

    def audio(self) -> np.ndarray:
        with self._cond:
            return self._audio_locked()

    def _audio_locked(self) -> np.ndarray:
        if len(self._parts) > 1:
            self._parts = [np.concatenate(self._parts)]
        return self._parts[0] if self._parts else np.zeros(0, np.float32)

    # ---- the background passes ----------------------------------------------------------------
    def _pause_samples(self) -> int:
        """The pause that starts a pass, in samples: the VAD counts it in whole frames, so a pass
        in a pause of 100 ms starts after 4 frames (128 ms) and covers at least that."""
        return math.ceil(self.settings.pause_ms / FRAME_MS) * FRAME

    def _pause_uncovered(self) -> bool:
        """No pass of the main model has reached the pause after the speech yet (lock held)."""
        covered = self._main[1] if self._main is not None else 0
        return covered < self._speech_end() + self._pause_samples()

    def _margin(self) -> int:
        """How far past the last speech (in samples) a pass must reach to be the transcript. By
        default what a pass in the pause covers: a pass that started before the pause was long
        enough (while speaking, without a partial model) then leaves the transcript, and the turn
        run ahead, to the pass in the pause."""
        cover = self.settings.cover_margin_ms
        return self._pause_samples() if cover is None else int(cover * RATE / 1000)

    def _in_pause(self) -> bool:
        return not self.vad.speaking and self.vad.silence_ms >= self.settings.pause_ms

    def _due(self, partial: bool) -> bool:
        """A pass is due on the partial model's thread (`partial`) or the main model's."""
        if not self.vad.heard or self._samples < RATE // 2:
            return False  # no speech yet: a pass over silence only invents words
        new = self._samples - self._last_end
        if new <= 0:
            return False
        if partial:  # the live words, while the user speaks and no pass of the main model runs
            return self.vad.speaking and self._inflight_end is None and new >= self.settings.interval_s * RATE
        if not self._in_pause():
            return self.partial is None and new >= self.settings.interval_s * RATE
        if self._inflight_partial:
            return False  # two passes at once on two cores (beside a browser) end later than in turn
        return self._pause_uncovered()

    def _loop(self, partial: bool) -> None:
        """The passes of one model: the main model's (in a pause; also while speaking when there is
        no partial model), or the partial model's, each on its own thread, one pass at a time."""
        model = (self.partial if partial else None) or self.transcriber
        while True:
            with self._cond:
                while not (self._closed or self._finishing or self._due(partial)):
                    self._cond.wait(0.05)
                if self._closed or self._finishing:
                    return
                end = self._samples
                audio = self._audio_locked()[:end]
                in_pause = not partial and self._in_pause()
                if partial:
                    self._inflight_partial = True
                else:
                    self._inflight_end = end
                kind = "partial" if partial else "pause" if in_pause else "main"
                speech_end = self._speech_end() / RATE
                hint = self._last.text if self._last is not None else None  # the library's terms like it go first
            started = time.time()
            try:
                result = model.decode(audio, margin_s=self.settings.window_margin_s, hint=hint)
            except Exception as exc:  # noqa: BLE001 - kept for finish(), which reports it
                log.warning("streaming pass failed: %s", exc)
                with self._cond:
                    if partial:  # a failing partial model only stops the live words
                        self._inflight_partial = False
                    else:
                        self._error, self._inflight_end = exc, None
                    self._cond.notify_all()
                return
            with self._cond:
                if partial:
                    self._inflight_partial = False
                else:
                    self._inflight_end = None
                self._cond.notify_all()
                self._timeline.append(PassMark(kind, started, time.time(), end / RATE, speech_end))
                if self._finishing and (partial or self._abandoned):
                    return  # finish() did not wait for this pass
                if not partial:
                    self._main = (result, end)
                self._agree(result, end)
            if in_pause and result.text and self.on_hypothesis is not None:
                try:
                    self.on_hypothesis(result)
                except Exception:  # noqa: BLE001 - a prefetch hook never breaks listening
                    log.warning("hypothesis hook failed", exc_info=True)

    def _agree(self, result: Decoded, end: int) -> None:
        self._passes += 1
        if end < self._last_end:
            return  # a pass over a shorter buffer that ended after a longer one
        previous = self._last.text if self._last is not None else None
        self._last, self._last_end = result, end
        if previous is not None:
            # the shorter pass's last word may be cut off by the end of its buffer ("ill" of
            # "ill-disposed" agrees with "ill."): it is never committed
            n = min(agreed_prefix(previous, result.text), len(words(previous)) - 1)
            if n > self._committed_n and agreed_prefix(self._committed, result.text) >= self._committed_n:
                self._committed_n = n
                self._committed = mid_sentence(leading_words(result.text, n))
        self._cond.notify_all()

    # ---- the end of the utterance -------------------------------------------------------------
    def end(self) -> None:
        """The user has stopped: start making the transcript now, in the background (at release,
        before the turn that reads it with `finish()` has started)."""
        with self._cond:
            if self._ending:
                return
            self._ending = True
        threading.Thread(target=self._end, name="hark-stream-end", daemon=True).start()

    def _end(self) -> None:
        try:
            self._outcome = self._transcript()
        except Exception as exc:  # noqa: BLE001 - finish() raises it in the caller's thread
            self._outcome = exc
        self._ended.set()

    def finish(self) -> StreamResult:
        """The transcript, once the user has stopped (waits for `end()`'s work, starting it if
        needed). Raises SpeechInputError when no speech came."""
        self.end()
        self._ended.wait()
        if isinstance(self._outcome, Exception):
            raise self._outcome
        assert self._outcome is not None
        return self._outcome

    def _transcript(self) -> StreamResult:
        t0 = time.perf_counter()
        margin = self._margin()
        with self._cond:
            self._finishing = True
            inflight = self._inflight_end
            stale = inflight is not None and inflight < self._speech_end() + margin
            # a running pass that ends before the speech does cannot give the transcript: with a
            # separate tail model, decode the tail at once instead of waiting for it (a pass of the
            # partial model never gives it and is never waited for)
            self._abandoned = stale and self.tail is not None
            self._cond.notify_all()
        if not self._abandoned:
            self._thread.join()
        with self._cond:
            audio = self._audio_locked()
            main, committed, passes = self._main, self._committed, self._passes
            error = self._error
        duration = len(audio) / RATE
        if not len(audio):
            raise SpeechInputError(
                "I didn't catch that — the recording is empty.", "Hold the button and speak."
            )
        if not self.vad.heard:
            raise SpeechInputError(
                "I didn't catch that — I couldn't hear any words.", "Speak a little closer to the microphone."
            )
        speech_end = self._speech_end()
        started = time.time()
        if (
            error is None
            and main is not None
            and main[0].text
            and main[1] >= min(speech_end + margin, len(audio))
        ):
            decoded, mode = main[0], "none"
        else:
            # with the committed words forced as a prefix the release pass drops words (LibriVox WER
            # 1.4 → 7.0 %), so the main model decodes the whole utterance; only a separate tail model
            # decodes after the committed prefix
            window = self.settings.window_margin_s
            hint = main[0].text if main is not None else committed
            if committed and (self.tail is not None or self.settings.prefix_at_release):
                decoded, mode = (self.tail or self.transcriber).decode(audio, committed, window, hint), "tail"
            else:
                decoded, mode = self.transcriber.decode(audio, None, window, hint), "full"
            with self._cond:
                self._timeline.append(PassMark("final", started, time.time(), duration, speech_end / RATE))
        text = decoded.text.strip()
        if not any(ch.isalnum() for ch in text):
            raise SpeechInputError(
                "I didn't catch that — I couldn't hear any words.", "Speak a little closer to the microphone."
            )
        self.transcriber.check_short(decoded)
        return StreamResult(
            text=self.transcriber.written(text),
            seconds=time.perf_counter() - t0,
            duration=duration,
            final_pass=mode,
            passes=passes,
            committed_words=len(words(committed)),
            avg_logprob=decoded.avg_logprob,
            no_speech_prob=decoded.no_speech_prob,
            speech_seconds=decoded.speech_seconds,
            ready_at=time.time(),
            timeline=tuple(self._timeline),
        )

    def close(self) -> None:
        """Stop listening without a transcript (the utterance was abandoned)."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()
