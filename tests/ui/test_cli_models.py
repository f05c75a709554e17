"""`launch.py transcribe AUDIO` (ui/cli_models.py): real faster-whisper tiny.en on a real LibriVox clip."""

from __future__ import annotations

import io

import pytest

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


@pytest.mark.alone  # beside another worker, the biased passes once heard a word or two of it
def test_transcribe_with_the_librarys_terms(tmp_path):
    """`launch.py transcribe AUDIO --config C` hears with the vocabulary of C's library: an ingested
    R manual makes "an R session" heard as such (real ingest, real faster-whisper base)."""
    import os
    import subprocess
    import sys

    from tests.audio_data import R_MANUAL, piper_wav
    from tests.conftest import ROOT

    lib = tmp_path / "library"
    lib.mkdir()
    (lib / "r-intro.md").write_text(R_MANUAL, encoding="utf-8")
    cfg = tmp_path / "config.yaml"
    cfg.write_text("embedder: {backend: minilm}\nstore: {data_dir: data}\nspeech: {model: base}\n", encoding="utf-8")
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "OMP_WAIT_POLICY": "PASSIVE"}
    run = [sys.executable, str(ROOT / "launch.py")]
    out = subprocess.run([*run, "ingest", str(lib), "--config", str(cfg)], capture_output=True, text=True,
                         timeout=300, env=env, cwd=tmp_path)  # fmt: skip
    assert out.returncode == 0, out.stderr[-2000:]
    assert list((tmp_path / "data" / "lancedb").glob("*.vocabulary.json"))
    clip = piper_wav(tmp_path, "How do I end an R session?")
    out = subprocess.run([*run, "transcribe", str(clip), "--config", str(cfg)], capture_output=True, text=True,
                         timeout=300, env=env, cwd=tmp_path)  # fmt: skip
    assert out.returncode == 0, out.stderr[-2000:]
    assert "r session" in " ".join(normalise(out.stdout.splitlines()[0])), out.stdout
