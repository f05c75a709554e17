"""Smart-Turn v3 (models/turn_end.py) on real speech: a question spoken to its end against the same
speaker stopping on a filler ("um"), each followed by a short pause, as the voice loop asks it."""

from __future__ import annotations

import subprocess

import numpy as np
import pytest

from models import audio as audio_io
from models.turn_end import TurnEnd


def _spoken(text: str, folder) -> np.ndarray:
    """espeak-ng speech at 16 kHz, cut 224 ms after its last loud sample (the pause it is asked at)."""
    raw, out = folder / "raw.wav", folder / "q.wav"
    subprocess.run(["espeak-ng", "-v", "en+m3", "-s", "150", "-g", "6", "-w", str(raw), text], check=True)
    subprocess.run(["sox", str(raw), "-r", "16000", "-c", "1", str(out), "pad", "0.3", "1"], check=True)
    x = audio_io.load(out).samples
    end = np.flatnonzero(np.abs(x) > 0.02)[-1]
    return x[: end + int(0.224 * 16000)]


@pytest.fixture(scope="module")
def model() -> TurnEnd:
    return TurnEnd()


def test_a_filler_is_not_the_end_of_the_question(model, tmp_path):
    cut = model.probability(_spoken("what is the notice period, um", tmp_path))
    whole = model.probability(_spoken("what is the notice period", tmp_path))
    assert cut < 0.1 and whole > 0.5, (cut, whole)
    assert model.verdict(cut, 0.99, 0.5) == "incomplete"
    assert model.last_ms > 0


def test_silence_and_nothing_are_not_errors(model):
    assert model.probability(np.zeros(0, np.float32)) == 0.0
    assert 0.0 <= model.probability(np.zeros(16000, np.float32)) <= 1.0


def test_the_verdict_bands():
    assert TurnEnd.verdict(0.995, 0.99, 0.5) == "complete"
    assert TurnEnd.verdict(0.7, 0.99, 0.5) == "unsure"
    assert TurnEnd.verdict(0.5, 0.99, 0.5) == "incomplete"
