"""`launch.py transcribe AUDIO` (ui/cli_models.py): real faster-whisper tiny.en on a real LibriVox clip."""

from __future__ import annotations

import io

from bench.wer import normalise
from models.settings import SpeechSettings
from tests.audio_data import librivox_clips
from ui.cli_models import transcribe_command


def test_transcribe_command_prints_text_and_seconds():
    out = io.StringIO()
    clip = librivox_clips()[4]  # "he might even have been made amiable himself"
    assert transcribe_command(SpeechSettings(model="tiny.en"), clip.path, out=out) == 0
    text, timing = out.getvalue().strip().splitlines()
    assert "amiable" in normalise(text)
    assert float(timing.strip("(").split(" s ")[0]) > 0
