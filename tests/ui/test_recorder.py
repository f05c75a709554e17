"""ui/recorder.py with real PortAudio. Each case runs in a fresh process, because PortAudio reads
the ALSA configuration once: a configuration whose only device is a sound card that does not
exist is a machine without a microphone (an empty configuration makes alsa-lib abort), and
ALSA's `file` plugin reading a raw speech file is a microphone that says a known question.
ALSA's null clock is not real time, so the fake microphone delivers its audio faster than life."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

from bench.wer import normalise
from tests.audio_data import ROOT, espeak_wav, shared_transcriber

RUN = """
import json, sys, time, numpy as np
from ui.recorder import RecorderError, record_until_enter
try:
    rate, audio = record_until_enter(max_seconds=6, wait=lambda prompt: time.sleep(0.3))
except RecorderError as e:
    print(json.dumps({"error": e.message, "hint": e.hint}))
else:
    np.save(sys.argv[1], audio)
    print(json.dumps({"rate": rate, "shape": list(audio.shape), "dtype": str(audio.dtype)}))
"""
NO_DEVICE = "pcm.!default { type hw card 99 }\nctl.!default { type hw card 99 }\n"


def _run(tmp_path: Path, alsa_conf: str, prelude: str = "") -> dict:
    conf = tmp_path / "asound.conf"
    conf.write_text(alsa_conf)
    env = dict(os.environ, ALSA_CONFIG_PATH=str(conf), PYTHONPATH=str(ROOT))
    done = subprocess.run(
        [sys.executable, "-c", prelude + RUN, str(tmp_path / "rec.npy")],
        capture_output=True, text=True, env=env, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_no_sound_device_says_so(tmp_path):
    result = _run(tmp_path, NO_DEVICE)
    assert result["error"] == "No microphone found."
    assert "Type your question" in result["hint"]


def test_missing_sounddevice_says_so(tmp_path):
    result = _run(tmp_path, NO_DEVICE, prelude="import sys; sys.modules['sounddevice'] = None\n")
    assert "sounddevice" in result["error"]
    assert "Type your question" in result["hint"]


def test_records_a_real_stream_between_two_enters(tmp_path):
    wav = espeak_wav(tmp_path, "what is the notice period in my rental agreement", rate=16000)
    raw = tmp_path / "mic.raw"
    subprocess.run(["sox", str(wav), "-e", "signed-integer", "-b", "16", "-t", "raw", str(raw)], check=True)
    conf = f"""
pcm.!default {{ type file slave.pcm "null" file "/dev/null" infile "{raw}" format "raw" }}
pcm.null {{ type null }}
"""
    result = _run(tmp_path, conf)
    assert result == {"rate": 16000, "shape": [6 * 16000, 1], "dtype": "int16"}  # capped at max_seconds
    audio = np.load(tmp_path / "rec.npy")
    text = shared_transcriber("tiny.en").transcribe((16000, audio)).text
    assert {"rental", "agreement"} <= set(normalise(text)), text


def test_missing_portaudio_library_says_so(tmp_path):
    # sounddevice looks PortAudio up with ctypes.util.find_library; make the lookup find nothing
    prelude = "import ctypes.util; ctypes.util.find_library = lambda name: None\n"
    result = _run(tmp_path, NO_DEVICE, prelude=prelude)
    assert "PortAudio" in result["error"]
    assert "libportaudio2" in result["hint"]
