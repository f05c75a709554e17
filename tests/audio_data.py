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


def piper_wav(folder: Path, text: str, *, name: str = "piper", length_scale: float = 1.0, varied: bool = False) -> Path:
    """Speak `text` with Hark's Piper voice (the bundled en_US-joe-medium) into a WAV, 0.2 s of
    silence either side; the same audio every run unless `varied` (Piper's random variation on)."""
    import numpy as np
    import soundfile as sf

    from models.settings import TTSSettings
    from models.tts import Synthesiser

    fixed = {} if varied else {"piper_noise_scale": 0.0, "piper_noise_w": 0.0}
    rate, samples = Synthesiser(TTSSettings(engine="piper", piper_length_scale=length_scale, **fixed)).synthesise(text)
    pad = np.zeros(rate // 5, np.int16)
    out = folder / f"{name}.wav"
    sf.write(str(out), np.concatenate([pad, samples, pad]), rate, subtype="PCM_16")
    return out


# a page of an R manual: the library in which "R" is a name
R_MANUAL = """# An Introduction to R

R is a language and environment for statistical computing and graphics. An R session starts when
you run R in a terminal, or Rscript for a script. To end an R session, call q(); R asks whether to
save the workspace image. Packages come from CRAN, the Comprehensive R Archive Network, and
install.packages() installs them. In R a data.frame holds a table; lapply and sapply apply a
function to each element. The help of R opens with help.start(). When R starts it reads the
.Rprofile file; R_LIBS_USER names the folder of your own packages. RStudio is an editor for R,
and the R console prints the prompt. Every R object has a class; NA marks a missing value in R.

## The R workspace

The workspace holds the objects of the R session. save.image() writes it, and R loads .RData when
the next R session starts. Rscript runs R code without a session prompt; R CMD BATCH does too.
"""
