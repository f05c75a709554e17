"""Audio in, 16 kHz mono float32 out — the one place that decodes and resamples speech.

Accepts a file path (anything FFmpeg reads, through PyAV, which ships with faster-whisper), a
`(sample_rate, ndarray)` tuple as `gr.Audio` gives, or an ndarray with its sample rate (what
sounddevice records). Any channel count, int16/int32/uint8/float samples. Channels are averaged and
the rate converted with libswresample (a windowed-sinc resampler with an anti-aliasing filter), so
a file and the same samples given as an array take the same path.

`probe_seconds(path)` reads a file's duration from its header without decoding it, so a caller can
turn away a clip that is too long before doing any work.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from models.runtime.errors import HarkError

log = logging.getLogger(__name__)

TARGET_RATE = 16000

AudioLike = str | Path | tuple[int, Any] | np.ndarray


class AudioDecodeError(HarkError):
    """The audio could not be read (missing, corrupt, not audio, or an unusable array)."""


@dataclass(frozen=True)
class Clip:
    """Speech ready for the recogniser: 16 kHz mono float32 in [-1, 1]."""

    samples: np.ndarray
    sample_rate: int = TARGET_RATE

    @property
    def seconds(self) -> float:
        return len(self.samples) / self.sample_rate

    @property
    def peak(self) -> float:
        return float(np.max(np.abs(self.samples))) if len(self.samples) else 0.0

    @property
    def rms_dbfs(self) -> float:
        if not len(self.samples):
            return float("-inf")
        rms = float(np.sqrt(np.mean(np.square(self.samples, dtype=np.float64))))
        return 20.0 * np.log10(rms) if rms > 0 else float("-inf")


def split_input(
    audio: AudioLike, sample_rate: int | None = None
) -> tuple[Path | None, np.ndarray | None, int | None]:
    """Tell a path from samples: `(path, None, None)` or `(None, samples, rate)`."""
    if isinstance(audio, (str, Path)):
        return Path(audio).expanduser(), None, None
    if isinstance(audio, tuple):
        if len(audio) != 2:
            raise AudioDecodeError("Audio must be a (sample_rate, samples) pair.")
        rate, samples = audio
        if isinstance(rate, np.ndarray) and not isinstance(samples, np.ndarray):
            samples, rate = rate, samples  # (samples, rate) — tolerate the other order
        return None, np.asarray(samples), int(rate)
    if isinstance(audio, np.ndarray):
        if sample_rate is None:
            raise AudioDecodeError("An audio array needs its sample rate.")
        return None, audio, int(sample_rate)
    raise AudioDecodeError(f"Unsupported audio input: {type(audio).__name__}.")


def array_seconds(samples: np.ndarray, sample_rate: int) -> float:
    """Duration of an array in either layout (frames × channels or channels × frames)."""
    if samples.ndim == 0 or sample_rate <= 0:
        return 0.0
    return _frames(samples) / sample_rate


def _frames(samples: np.ndarray) -> int:
    if samples.ndim == 1:
        return samples.shape[0]
    if samples.ndim == 2:
        # gr.Audio / sounddevice give (frames, channels); tolerate (channels, frames)
        return samples.shape[1] if _channels_first(samples) else samples.shape[0]
    raise AudioDecodeError(f"Audio must be 1-D or 2-D, got {samples.ndim} dimensions.")


def _channels_first(samples: np.ndarray) -> bool:
    rows, cols = samples.shape
    return rows <= 8 and cols > rows


def to_float_mono(samples: np.ndarray) -> np.ndarray:
    """Any dtype and layout → mono float32 in [-1, 1] (channels averaged)."""
    x = np.asarray(samples)
    if x.ndim == 2:
        x = x.T if _channels_first(x) else x
    elif x.ndim != 1:
        raise AudioDecodeError(f"Audio must be 1-D or 2-D, got {x.ndim} dimensions.")
    if x.dtype.kind == "i":
        scale = float(2 ** (8 * x.dtype.itemsize - 1))
        y = x.astype(np.float32) / scale
    elif x.dtype.kind == "u":
        half = float(2 ** (8 * x.dtype.itemsize - 1))
        y = (x.astype(np.float32) - half) / half
    elif x.dtype.kind == "f":
        y = np.nan_to_num(x.astype(np.float32), nan=0.0, posinf=0.0, neginf=0.0)
        peak = float(np.max(np.abs(y))) if y.size else 0.0
        if peak > 1.0:  # float samples on an integer scale
            log.debug("float audio peaks at %.1f; scaling into [-1, 1]", peak)
            y = y / peak
    else:
        raise AudioDecodeError(f"Unsupported sample type {x.dtype}.")
    if y.ndim == 2:
        y = y.mean(axis=1, dtype=np.float32)
    return np.ascontiguousarray(y, dtype=np.float32)


def resample(samples: np.ndarray, rate: int, target: int = TARGET_RATE) -> np.ndarray:
    """Mono float32 at `rate` → mono float32 at `target`, with libswresample (anti-aliased)."""
    if rate == target or not len(samples):
        return samples.astype(np.float32, copy=False)
    import av  # noqa: PLC0415 — PyAV is heavy; only when needed

    frame = av.AudioFrame.from_ndarray(samples[np.newaxis, :], format="flt", layout="mono")
    frame.sample_rate = rate
    resampler = av.AudioResampler(format="flt", layout="mono", rate=target)
    parts = [f.to_ndarray().reshape(-1) for f in resampler.resample(frame)]
    parts += [f.to_ndarray().reshape(-1) for f in resampler.resample(None)]  # flush the filter tail
    out = np.concatenate(parts) if parts else np.zeros(0, np.float32)
    return out.astype(np.float32, copy=False)


def from_array(samples: np.ndarray, sample_rate: int) -> Clip:
    if sample_rate <= 0:
        raise AudioDecodeError(f"Invalid sample rate {sample_rate}.")
    return Clip(resample(to_float_mono(samples), sample_rate))


def probe_seconds(path: Path) -> float | None:
    """A file's duration from its container header, without decoding; None when unknown."""
    import av  # noqa: PLC0415

    try:
        with av.open(str(path), metadata_errors="ignore") as container:
            if not container.streams.audio:
                raise AudioDecodeError(f"{path.name} has no audio track.")
            stream = container.streams.audio[0]
            if stream.duration is not None and stream.time_base is not None:
                return float(stream.duration * stream.time_base)
            if container.duration is not None:
                return container.duration / 1_000_000
    except AudioDecodeError:
        raise
    except Exception as exc:  # PyAV raises many FFmpeg error types
        raise AudioDecodeError(f"{path.name} is not a readable audio file ({_reason(exc)}).") from exc
    return None


def decode_file(path: Path) -> Clip:
    """Decode any FFmpeg-readable file straight to 16 kHz mono float32."""
    import av  # noqa: PLC0415

    parts: list[np.ndarray] = []
    try:
        with av.open(str(path), metadata_errors="ignore") as container:
            if not container.streams.audio:
                raise AudioDecodeError(f"{path.name} has no audio track.")
            stream = container.streams.audio[0]
            resampler = av.AudioResampler(format="flt", layout="mono", rate=TARGET_RATE)
            for frame in container.decode(stream):
                frame.pts = None  # let the resampler ignore gaps in timestamps
                parts += [f.to_ndarray().reshape(-1) for f in resampler.resample(frame)]
            parts += [f.to_ndarray().reshape(-1) for f in resampler.resample(None)]
    except AudioDecodeError:
        raise
    except Exception as exc:
        raise AudioDecodeError(f"{path.name} is not a readable audio file ({_reason(exc)}).") from exc
    samples = np.concatenate(parts).astype(np.float32, copy=False) if parts else np.zeros(0, np.float32)
    return Clip(samples)


def load(audio: AudioLike, sample_rate: int | None = None) -> Clip:
    """Any supported input → a 16 kHz mono float32 `Clip`."""
    path, samples, rate = split_input(audio, sample_rate)
    if path is not None:
        if not path.is_file():
            raise AudioDecodeError(f"No audio file at {path}.")
        return decode_file(path)
    assert samples is not None and rate is not None
    return from_array(samples, rate)


def _reason(exc: Exception) -> str:
    text = getattr(exc, "strerror", None) or str(exc).strip() or type(exc).__name__
    return text.splitlines()[0][:160]
