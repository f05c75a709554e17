"""`launch.py speak`: the text is said by the configured voice (Piper by default), written as a WAV
that Hark's own speech-to-text hears back; the voice used is printed; bad input is a message."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import wave

import numpy as np
import pytest

from bench.wer import normalise
from models.runtime.errors import HarkError
from models.settings import TTSSettings
from tests.audio_data import ROOT, shared_transcriber
from ui.cli_speak import speak_command

TEXT = (
    "The deposit is returned within thirty days [1], e.g. after the keys are back. See https://example.com."
)


def _read(path):
    with wave.open(str(path)) as w:
        assert w.getnchannels() == 1 and w.getsampwidth() == 2
        return w.getframerate(), np.frombuffer(w.readframes(w.getnframes()), np.int16)


def test_the_command_line_writes_the_default_voice_and_names_it(tmp_path):
    out = tmp_path / "speech.wav"
    env = dict(os.environ, HF_HUB_OFFLINE="1")
    done = subprocess.run(
        [sys.executable, str(ROOT / "launch.py"), "speak", TEXT, "--out", str(out)],
        capture_output=True, text=True, env=env, cwd=ROOT, timeout=180,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == "voice: Piper (en_US-joe-medium)"
    assert f"wrote {out}" in done.stdout and "piece(s)" in done.stdout
    rate, samples = _read(out)
    heard = normalise(shared_transcriber("tiny.en").transcribe((rate, samples)).text)
    assert {"deposit", "returned", "30", "days", "example", "keys", "link"} <= set(heard), heard
    assert "example.com" not in " ".join(heard) and "https" not in heard


def test_another_language_and_the_fallback_are_named(tmp_path):
    out, printed = tmp_path / "de.wav", io.StringIO()
    assert speak_command(TTSSettings(), "Die Frist beträgt drei Monate.", out, "de", stdout=printed) == 0
    assert printed.getvalue().splitlines()[0] == "voice: espeak-ng library (espeakng-loader), voice de"
    assert _read(out)[1].size > 0
    printed = io.StringIO()
    missing = TTSSettings(piper_voice=str(tmp_path / "no-such-voice.onnx"))
    assert speak_command(missing, "Three months.", out, stdout=printed) == 0
    assert printed.getvalue().splitlines()[0] == "voice: espeak-ng library (espeakng-loader), voice en-us"


def test_nothing_to_say_is_a_message(tmp_path):
    with pytest.raises(HarkError, match="nothing to say"):
        speak_command(TTSSettings(), "[1] [2]", tmp_path / "x.wav", stdout=io.StringIO())
    assert not (tmp_path / "x.wav").exists()
