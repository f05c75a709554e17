"""`launch.py speak "TEXT" [--out FILE.wav] [--language CODE]`: hear Hark's voice.

The text goes through the same pieces and speech-text rules as a spoken answer
(`assistant.speak.SentenceSplitter`: first clause, then sentences; no citation markers or URLs).
With `--out` the audio is written as a 16-bit mono WAV, otherwise it is played on the default
output device. Prints the voice that spoke, the length of the speech and how long the first piece
took to synthesise.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import TextIO

import numpy as np

from assistant.speak import SentenceSplitter
from models.runtime.errors import HarkError
from models.settings import TTSSettings
from models.tts import Synthesiser
from ui.speaker import wav_bytes

GAP_SECONDS = 0.12  # silence between pieces, as between the sentences of a spoken answer


def speak_command(
    settings: TTSSettings,
    text: str,
    out: Path | None,
    language: str | None = None,
    stdout: TextIO | None = None,
) -> int:
    stdout = stdout or sys.stdout
    splitter = SentenceSplitter()
    pieces = splitter.feed(text) + splitter.flush()
    if not pieces:
        raise HarkError(
            "There is nothing to say in that text.", 'Give some words, e.g. launch.py speak "Hello."'
        )
    synth = Synthesiser(settings)
    t0 = time.perf_counter()
    synth.warm_up()  # load the voice first, so the timing below is the one an answer sees
    load_seconds = time.perf_counter() - t0
    audio: list[np.ndarray] = []
    voices: list[str] = []
    rate = 0
    first_seconds = 0.0
    for i, piece in enumerate(pieces):
        t0 = time.perf_counter()
        spoken = synth.render(piece, language)
        if i == 0:
            first_seconds = time.perf_counter() - t0
        rate = rate or spoken.sample_rate
        samples = spoken.samples
        if spoken.sample_rate != rate:  # a piece spoken by the fallback at another rate
            samples = _resampled(samples, spoken.sample_rate, rate)
        if audio:
            audio.append(np.zeros(int(GAP_SECONDS * rate), np.int16))
        audio.append(samples)
        if spoken.voice not in voices:
            voices.append(spoken.voice)
    samples = np.concatenate(audio)
    seconds = len(samples) / rate
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(wav_bytes(rate, samples))
        where = f"wrote {out}"
    else:
        from ui.recorder import RecorderError, play

        try:
            play(rate, samples)
        except RecorderError as exc:
            raise HarkError(exc.message, "Write the speech to a file instead: --out speech.wav") from exc
        where = "played"
    print(f"voice: {' + '.join(voices)}", file=stdout)
    print(
        f"{where}: {seconds:.1f} s of speech in {len(pieces)} piece(s); voice loaded in "
        f"{load_seconds:.2f} s, first piece synthesised in {first_seconds * 1000:.0f} ms",
        file=stdout,
    )
    return 0


def _resampled(samples: np.ndarray, rate: int, target: int) -> np.ndarray:
    n = int(round(len(samples) * target / rate))
    x = np.interp(np.linspace(0, len(samples) - 1, n), np.arange(len(samples)), samples.astype(np.float32))
    return x.astype(np.int16)
