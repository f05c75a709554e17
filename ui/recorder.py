"""Push-to-talk in the terminal: record from the microphone between two presses of Enter, and play
spoken answers. sounddevice (PortAudio) is imported only when used.

Without PortAudio, without the sounddevice package or without an input device these raise
`RecorderError` with a clear message, so the chat can say so and fall back to typing.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from types import ModuleType

import numpy as np

from models.runtime.errors import HarkError

log = logging.getLogger(__name__)

_TYPE_INSTEAD = "Type your question instead."


class RecorderError(HarkError):
    """The microphone (or the speaker) cannot be used."""


def _sounddevice() -> ModuleType:
    try:
        import sounddevice as sd  # noqa: PLC0415
    except ImportError as exc:
        raise RecorderError(
            "Voice input needs the sounddevice package, which is not installed.",
            f"pip install sounddevice. {_TYPE_INSTEAD}",
        ) from exc
    except OSError as exc:  # raised at import when the PortAudio library is missing
        raise RecorderError(
            "Voice input needs the PortAudio library, which is not installed.",
            f"Debian/Ubuntu: sudo apt-get install libportaudio2; macOS: brew install portaudio. {_TYPE_INSTEAD}",
        ) from exc
    return sd


def input_device() -> dict:
    """The default input device's description; RecorderError when there is none."""
    sd = _sounddevice()
    try:
        device = sd.query_devices(kind="input")
    except (sd.PortAudioError, ValueError) as exc:
        raise RecorderError("No microphone found.", f"Connect a microphone. {_TYPE_INSTEAD}") from exc
    if not device or device.get("max_input_channels", 0) < 1:
        raise RecorderError("No microphone found.", f"Connect a microphone. {_TYPE_INSTEAD}")
    return dict(device)


def record_until_enter(
    sample_rate: int = 16000,
    channels: int = 1,
    max_seconds: float = 60.0,
    wait: Callable[[str], object] = input,
) -> tuple[int, np.ndarray]:
    """Press Enter to start, Enter to stop → `(sample_rate, int16 array of shape (frames, channels))`.

    Recording stops keeping audio after `max_seconds` (the transcriber would refuse it anyway).
    If the device cannot record at `sample_rate`, its own default rate is used and returned.
    """
    sd = _sounddevice()
    device = input_device()
    blocks: list[np.ndarray] = []
    capped = threading.Event()
    kept = 0

    def callback(indata: np.ndarray, frames: int, _time: object, status: object) -> None:
        nonlocal kept
        if status:
            log.debug("recording status: %s", status)
        if kept < limit:
            blocks.append(indata[: limit - kept].copy())
            kept += min(frames, limit - kept)
        else:
            capped.set()

    wait("Press Enter and speak… ")
    rate = sample_rate
    limit = int(max_seconds * rate)
    try:
        stream = sd.InputStream(samplerate=rate, channels=channels, dtype="int16", callback=callback)
    except sd.PortAudioError:
        rate = int(device.get("default_samplerate") or 44100)
        limit = int(max_seconds * rate)
        log.info("the microphone cannot record at %d Hz; using %d Hz", sample_rate, rate)
        try:
            stream = sd.InputStream(samplerate=rate, channels=channels, dtype="int16", callback=callback)
        except sd.PortAudioError as exc:
            raise RecorderError(f"The microphone could not be opened ({exc}).", _TYPE_INSTEAD) from exc
    with stream:
        wait("Recording — press Enter to stop. ")
    if capped.is_set():
        log.info("recording stopped at the %.0f s limit", max_seconds)
    audio = np.concatenate(blocks) if blocks else np.zeros((0, channels), np.int16)
    return rate, audio


def play(sample_rate: int, samples: np.ndarray) -> None:
    """Play audio on the default output device and wait until it has finished."""
    sd = _sounddevice()
    try:
        sd.play(samples, samplerate=sample_rate, blocking=True)
    except (sd.PortAudioError, ValueError) as exc:
        raise RecorderError(
            f"Audio could not be played ({exc}).", "Set tts.enabled: false to stop trying."
        ) from exc
