"""Spoken answers in the browser, sentence by sentence while the text still streams.

The chat turn feeds answer text into a `SpeechQueue` (split into sentences by
`assistant.speak.SentenceSplitter`, the same rules as the terminal voice). A second Gradio event,
started by the turn's first update, reads the sentences, synthesises each with
`Assistant.synthesise` and puts its WAV into the tab's `SpeechOutbox`, from which the page fetches
and plays it at once (`ui/speech_outbox.py`). Text streaming is therefore never held up by
synthesis, and when "Speak answers" is off nothing is synthesised. A synthesis failure mutes the
rest of the answer; it never breaks the turn. A stopped answer (Stop, a barge-in, a newer answer)
synthesises no further sentence.
"""

from __future__ import annotations

import io
import logging
import queue
import threading
import wave
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from assistant.speak import SentenceSplitter
from ui.speech_outbox import SpeechOutbox
from ui.voice import now_ms

log = logging.getLogger(__name__)

_END = object()


def wav_bytes(sample_rate: int, samples: np.ndarray) -> bytes:
    """16-bit mono WAV of `samples` (int16, or float in [-1, 1])."""
    data = np.asarray(samples)
    if data.ndim > 1:
        data = data.reshape(len(data), -1)[:, 0]
    if data.dtype != np.int16:
        data = (np.clip(data.astype(np.float32), -1.0, 1.0) * 32767).astype(np.int16)
    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(int(sample_rate))
        w.writeframes(data.tobytes())
    return buf.getvalue()


class SpeechQueue:
    """Sentences of the running answer, from the chat turn to the tab's speech thread (`ui.app`)."""

    def __init__(self) -> None:
        self._queue: queue.Queue[object] = queue.Queue()
        self._splitter = SentenceSplitter()
        self.marks: dict[str, Any] = {}  # the turn's stage times (ui.voice.VoiceState.marks)
        self.answer = 0  # its number in the tab's SpeechOutbox (0: not spoken)
        self._finished = threading.Lock()
        self._done = False

    def start_turn(self) -> None:
        """Forget anything left over from a stopped turn."""
        self._splitter = SentenceSplitter()
        self._done = False
        while True:
            try:
                self._queue.get_nowait()
            except queue.Empty:
                break

    def feed(self, text: str) -> None:
        for sentence in self._splitter.feed(text):
            if sentence.strip():
                self._queue.put(sentence)

    def finish(self) -> None:
        """The answer has no more text: its last sentence is complete. Only the first call counts."""
        with self._finished:
            if self._done:
                return
            self._done = True
        for sentence in self._splitter.flush():
            if sentence.strip():
                self._queue.put(sentence)
        self._queue.put(_END)

    def sentences(self, timeout: float = 180.0) -> Iterator[str]:
        """Sentences as they complete, until the turn finishes (or nothing comes for `timeout` s)."""
        while True:
            try:
                item = self._queue.get(timeout=timeout)
            except queue.Empty:
                return
            if item is _END:
                return
            self.marks.setdefault("first_clause", now_ms())  # taken to be synthesised
            yield str(item)

    def speak_into(
        self,
        outbox: SpeechOutbox,
        synthesise: Callable[[str], tuple[int, np.ndarray]],
        on_error: Callable[[str], None] | None = None,
    ) -> None:
        """Synthesise this answer's sentences into `outbox` as they come, until the answer ends or is
        no longer wanted there; marks when the first audio is ready. Returns at once for an answer
        that is not spoken."""
        number = self.answer
        if not number:
            return
        try:
            wanted = lambda: outbox.active(number)  # noqa: E731
            for wav in speak_sentences(self.sentences(), synthesise, on_error, wanted):
                self.marks.setdefault("audio_ready", now_ms())
                outbox.put(number, wav)
        finally:
            outbox.end(number)


def speak_sentences(
    sentences: Iterator[str],
    synthesise: Callable[[str], tuple[int, np.ndarray]],
    on_error: Callable[[str], None] | None = None,
    wanted: Callable[[], bool] = lambda: True,
) -> Iterator[bytes]:
    """WAV bytes for each sentence; at the first synthesis failure, tells `on_error` and stops.
    Once `wanted()` is false the rest is not synthesised (the iterator is still drained)."""
    for sentence in sentences:
        if not wanted():
            for _ in sentences:  # drain so the producer never blocks
                pass
            return
        try:
            rate, samples = synthesise(sentence)
        except Exception as exc:  # noqa: BLE001 - speech is optional; the text answer goes on
            log.warning("speech synthesis failed; the rest of this answer stays silent", exc_info=True)
            if on_error is not None:
                detail = getattr(exc, "message", "") or "the speech synthesiser is unavailable"
                on_error(f"Could not speak the answer: {detail}")
            for _ in sentences:  # drain so the producer never blocks
                pass
            return
        if len(samples):
            yield wav_bytes(rate, samples)
