"""Real speech for tests: LibriVox clips from Debian's pocketsphinx-testdata, and espeak-ng speech.

`.ci/install --test` unpacks pocketsphinx-testdata into `$HARK_CACHE/testdata` (default
~/.cache/hark/testdata). Speech made at test time uses espeak-ng + sox.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def testdata_dir() -> Path:
    root = Path(os.environ.get("HARK_CACHE", Path.home() / ".cache" / "hark"))
    return root / "testdata" / "usr" / "share" / "pocketsphinx" / "test" / "data" / "librivox"


@dataclass(frozen=True)
class LibriClip:
    path: Path
    reference: str


def librivox_clips() -> list[LibriClip]:
    """The five LibriVox clips with their reference transcripts (fails clearly when missing)."""
    folder = testdata_dir()
    listing = folder / "transcription"
    if not listing.is_file():
        pytest.fail(f"pocketsphinx-testdata not found in {folder}: run `.ci/install --test` first")
    clips = []
    for line in listing.read_text().splitlines():
        m = re.match(r"\s*<s>(.*)</s>\s*\((\S+)\)", line)
        if m:
            clips.append(LibriClip(folder / f"{m.group(2)}.wav", m.group(1).strip()))
    return clips


def espeak_wav(
    folder: Path,
    text: str,
    *,
    name: str = "speech",
    rate: int = 16000,
    channels: int = 1,
    bits: int = 16,
    gap: int = 4,
    speed: int = 165,
    voice: str = "en+m3",
) -> Path:
    """Speak `text` with the espeak-ng program into a WAV at the given rate/channels/bits."""
    for tool in ("espeak-ng", "sox"):
        if shutil.which(tool) is None:
            pytest.fail(f"{tool} is not installed: run `.ci/install --test`")
    raw = folder / f"{name}.raw.wav"
    out = folder / f"{name}.wav"
    subprocess.run(
        ["espeak-ng", "-v", voice, "-s", str(speed), "-g", str(gap), "-w", str(raw), text], check=True
    )
    subprocess.run(
        [
            "sox",
            str(raw),
            "-r",
            str(rate),
            "-c",
            str(channels),
            "-b",
            str(bits),
            str(out),
            "pad",
            "0.2",
            "0.2",
        ],
        check=True,
    )
    return out


@lru_cache(maxsize=2)
def shared_transcriber(model: str = "tiny.en"):
    """One warmed Transcriber per model for the whole test session."""
    from models.settings import SpeechSettings
    from models.speech import Transcriber

    tr = Transcriber(SpeechSettings(model=model))
    tr.warm_up()
    return tr
