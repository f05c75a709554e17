"""Real audio made at test time: spoken questions (espeak-ng + sox) and broken or hostile clips."""

from __future__ import annotations

import shutil
import subprocess
import wave
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np

Expect = Literal["reject", "transcribe"]


def have_speech_tools() -> bool:
    return bool(shutil.which("espeak-ng") and shutil.which("sox"))


def spoken(text: str, path: Path, *, rate: int = 16000, pad: float = 0.2, seconds: float | None = None) -> Path:
    """`text` spoken by espeak-ng (with word gaps, which Whisper tiny hears better), as 16-bit mono.

    With `seconds`, the speed is adjusted so the clip lasts about that long (for a 5 s question).
    """
    raw = path.with_suffix(".raw.wav")
    subprocess.run(["espeak-ng", "-v", "en+m3", "-s", "150", "-g", "4", "-w", str(raw), text], check=True)
    effects: list[str] = []
    if seconds:
        with wave.open(str(raw)) as w:
            natural = w.getnframes() / w.getframerate()
        effects = ["tempo", f"{max(0.5, min(2.0, natural / max(0.1, seconds - 2 * pad))):.3f}"]
    subprocess.run(
        ["sox", str(raw), "-r", str(rate), "-c", "1", "-b", "16", str(path), *effects, "pad", str(pad), str(pad)],
        check=True,
    )
    raw.unlink(missing_ok=True)
    return path


def write_wav(path: Path, samples: np.ndarray, rate: int = 16000) -> Path:
    pcm = np.clip(samples, -1, 1)
    pcm = (pcm * 32767).astype("<i2")
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(pcm.tobytes())
    return path


def duration(path: Path) -> float:
    with wave.open(str(path)) as w:
        return w.getnframes() / w.getframerate()


@dataclass(frozen=True)
class BadClip:
    path: Path
    kind: str
    expect: Expect


def build_bad_audio(folder: Path, long_seconds: float = 180.0) -> list[BadClip]:
    """Zero-length, header-only, silent, noise, minutes long, wrong formats."""
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(7)
    clips: list[BadClip] = []

    def add(p: Path, kind: str, expect: Expect = "reject") -> None:
        clips.append(BadClip(p, kind, expect))

    (folder / "zero_bytes.wav").write_bytes(b"")
    add(folder / "zero_bytes.wav", "zero_bytes")
    add(write_wav(folder / "no_frames.wav", np.zeros(0)), "no_frames")
    add(write_wav(folder / "blip.wav", np.zeros(160)), "ten_ms")
    add(write_wav(folder / "silence.wav", np.zeros(16000 * 4)), "silence")
    add(write_wav(folder / "white_noise.wav", rng.uniform(-0.8, 0.8, 16000 * 6)), "white_noise")
    # minutes long: a spoken sentence repeated (sox) — longer than speech.max_seconds
    one = spoken("this is a very long recording that nobody should transcribe in full", folder / "one.wav")
    reps = max(1, int(long_seconds / duration(one)))
    subprocess.run(["sox", str(one), str(folder / "minutes_long.wav"), "repeat", str(reps)], check=True)
    add(folder / "minutes_long.wav", "minutes_long")
    (folder / "text_named.wav").write_text("this is not audio at all\n" * 50)
    add(folder / "text_named.wav", "text_as_wav")
    (folder / "truncated.wav").write_bytes(one.read_bytes()[:44 + 10])
    add(folder / "truncated.wav", "truncated_wav")
    (folder / "garbage.mp3").write_bytes(b"ID3\x04\x00\x00\x00\x00\x00\x00" + bytes(rng.integers(0, 256, 8000, dtype=np.uint8)))
    add(folder / "garbage.mp3", "garbage_mp3")
    return clips
