"""Voice activity on a live stream: the Silero VAD that ships inside faster-whisper, fed as audio arrives.

`VoiceActivity.feed(samples)` takes 16 kHz mono float32 in any chunk size and scores every 32 ms
frame (512 samples, with the 64-sample context the model expects), carrying the model's recurrent
state across calls, so a stream scored in pieces gives the same probabilities as the whole. The
speech/silence decision uses the hysteresis of faster-whisper's `get_speech_timestamps` (speech
above `threshold`, silence only below `threshold - 0.15`), and answers what a voice loop asks: has
the user spoken at all (at least `min_speech_ms` in one run, so a cough or a click is not speech;
after that, every speech frame counts), how long has it been silent since, and where did the last
speech end; and, for sounds too short to be speech yet, how long the latest was and how long ago.

One ONNX session (1 thread, ~0.1 ms a frame) is shared by every stream; its `run` is thread-safe.
"""

from __future__ import annotations

import functools
import os
import threading

import numpy as np

FRAME = 512  # samples per VAD frame at 16 kHz (32 ms)
CONTEXT = 64
RATE = 16000
FRAME_MS = FRAME * 1000 / RATE


@functools.lru_cache(maxsize=1)
def _session():
    import onnxruntime  # noqa: PLC0415
    from faster_whisper.utils import get_assets_path  # noqa: PLC0415

    opts = onnxruntime.SessionOptions()
    opts.inter_op_num_threads = 1
    opts.intra_op_num_threads = 1
    opts.log_severity_level = 4
    path = os.path.join(get_assets_path(), "silero_vad_v6.onnx")
    return onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"], sess_options=opts)


class VoiceActivity:
    """Speech/silence of one live stream. Not shared between streams; `feed` from one thread."""

    def __init__(self, threshold: float = 0.5, min_speech_ms: float = 250.0) -> None:
        self.threshold = threshold
        self.neg_threshold = max(threshold - 0.15, 0.01)
        self.min_speech_frames = max(1, round(min_speech_ms / FRAME_MS))
        self._pending = np.zeros(0, np.float32)
        self._context = np.zeros(CONTEXT, np.float32)
        self._h = np.zeros((1, 1, 128), np.float32)
        self._c = np.zeros((1, 1, 128), np.float32)
        self._lock = threading.Lock()
        self.frames = 0  # frames scored so far
        self._in_speech = False
        self._run = 0  # frames in the current speech run
        self.speech_frames = 0  # frames of speech in runs of at least min_speech_frames
        self.heard_at: int | None = None  # frame at which the first qualifying speech run began
        self.last_speech_end = 0  # frame after the last speech frame of a qualifying run
        self._run_start = 0
        # every sound, speech or not yet (a voice loop pauses for a short sound, not only for speech)
        self.voiced_frames = 0  # frames in runs of any length
        self.last_run_frames = 0  # length of the latest run, going on or ended
        self.last_voiced_end = 0  # frame after the latest frame of any run

    # ---- input --------------------------------------------------------------------------------
    def feed(self, samples: np.ndarray) -> None:
        """Score the new 16 kHz mono float32 samples (whole frames now, the rest with the next call)."""
        with self._lock:
            data = np.concatenate([self._pending, np.asarray(samples, np.float32).reshape(-1)])
            n = len(data) // FRAME
            self._pending = data[n * FRAME :]
            if n == 0:
                return
            frames = data[: n * FRAME].reshape(n, FRAME)
            contexts = np.concatenate([self._context[None, :], frames[:-1, -CONTEXT:]], axis=0)
            batch = np.concatenate([contexts, frames], axis=1)
            probs, self._h, self._c = _session().run(None, {"input": batch, "h": self._h, "c": self._c})
            self._context = frames[-1, -CONTEXT:].copy()
            for p in np.asarray(probs).reshape(-1):
                self._step(float(p))

    def _step(self, p: float) -> None:
        i = self.frames
        self.frames += 1
        if p >= self.threshold or (self._in_speech and p >= self.neg_threshold):
            if not self._in_speech:
                self._in_speech, self._run, self._run_start = True, 0, i
            self._run += 1
            self.voiced_frames += 1
            self.last_run_frames = self._run
            self.last_voiced_end = i + 1
            if self.heard_at is None:
                if self._run < self.min_speech_frames:
                    return
                self.heard_at = self._run_start  # the first run long enough to be speech
                self.speech_frames += self._run
            else:
                self.speech_frames += 1  # once heard, the short runs between pauses are words too
            self.last_speech_end = i + 1
        else:
            self._in_speech = False
            self._run = 0

    # ---- questions ----------------------------------------------------------------------------
    @property
    def heard(self) -> bool:
        """At least one run of speech of `min_speech_ms` so far."""
        return self.heard_at is not None

    @property
    def speaking(self) -> bool:
        """The latest frames are speech (of an utterance that has been heard)."""
        return self.heard and self._in_speech

    @property
    def last_run_ms(self) -> float:
        """How long the latest run of speech frames is or was (a sound that ended between two
        looks at the stream still counts)."""
        return self.last_run_frames * FRAME_MS

    @property
    def quiet_ms(self) -> float:
        """Silence since the latest sound of any length (since the start when there was none)."""
        return 0.0 if self._in_speech else (self.frames - self.last_voiced_end) * FRAME_MS

    @property
    def seconds(self) -> float:
        return self.frames * FRAME / RATE

    @property
    def speech_end_seconds(self) -> float:
        """Where the last qualifying speech ended (0 when none)."""
        return self.last_speech_end * FRAME / RATE

    @property
    def heard_at_seconds(self) -> float | None:
        return None if self.heard_at is None else self.heard_at * FRAME / RATE

    @property
    def silence_ms(self) -> float:
        """Silence since the last speech (0 while speaking or before any speech)."""
        if not self.heard or self.speaking:
            return 0.0
        return (self.frames - self.last_speech_end) * FRAME_MS
