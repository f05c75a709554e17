"""models/tts.py: eSpeak NG through the pip-only library and the system program; spoken text is
checked by transcribing it back with Hark's own speech-to-text."""

from __future__ import annotations

import os
import subprocess
import sys
import threading

import numpy as np
import pytest

from bench.wer import normalise
from models.settings import TTSSettings
from models.tts import Synthesiser, TTSError, TTSUnavailableError
from tests.audio_data import ROOT, shared_transcriber

SENTENCE = "Your rental agreement says the notice period is three months."


@pytest.mark.parametrize("backend", ["library", "command"])
def test_each_backend_speaks_int16_mono(backend):
    synth = Synthesiser(TTSSettings(backend=backend))
    rate, samples = synth.synthesise(SENTENCE)
    assert rate == 22050
    assert samples.dtype == np.int16 and samples.ndim == 1
    seconds = len(samples) / rate
    words = len(SENTENCE.split())
    assert 0.5 * words * 60 / 170 < seconds < 2.0 * words * 60 / 170  # about 170 words a minute
    assert np.abs(samples).max() > 3000  # not silence
    assert backend.split()[0] in synth.engine_name


def test_spoken_answer_round_trip_through_hark_speech_to_text():
    """Hark's default synthesiser says a known sentence; Hark's transcriber must hear its words."""
    synth = Synthesiser(TTSSettings())  # defaults: auto → the library from the espeakng-loader wheel
    rate, samples = synth.synthesise(SENTENCE)
    heard = normalise(shared_transcriber("tiny.en").transcribe((rate, samples)).text)
    assert {"rental", "agreement", "3", "months"} <= set(heard), heard


def test_speaking_rate_setting_changes_duration():
    slow = Synthesiser(TTSSettings(words_per_minute=120)).synthesise(SENTENCE)[1]
    fast = Synthesiser(TTSSettings(words_per_minute=300)).synthesise(SENTENCE)[1]
    assert len(slow) > 1.6 * len(fast)


def test_concurrent_calls_do_not_mix_audio():
    # eSpeak NG jitters a few samples between runs, so compare lengths: texts of clearly
    # different lengths, each concurrent result as long as its text's sequential one
    synth = Synthesiser(TTSSettings(backend="library"))
    texts = ["Rent.", "The deposit comes back.", "The deposit comes back within thirty days of the move."]
    expected = {t: len(synth.synthesise(t)[1]) for t in texts}
    assert expected[texts[0]] * 1.5 < expected[texts[1]] and expected[texts[1]] * 1.5 < expected[texts[2]]
    got: dict[str, list[int]] = {t: [] for t in texts}
    threads = [
        threading.Thread(target=lambda t=t: got[t].append(len(synth.synthesise(t)[1]))) for t in texts * 3
    ]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    for t in texts:
        assert len(got[t]) == 3 and all(abs(n - expected[t]) < 0.02 * expected[t] for n in got[t]), (
            t,
            got[t],
        )


def test_unknown_voice_and_empty_text():
    with pytest.raises(TTSError, match="no voice"):
        Synthesiser(TTSSettings(voice="xx-nonexistent")).synthesise("hello")
    rate, samples = Synthesiser(TTSSettings()).synthesise("   ")
    assert rate == 22050 and samples.size == 0


def test_no_program_on_path_is_a_clear_error(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))  # no espeak-ng program here
    synth = Synthesiser(TTSSettings(backend="command"))
    assert not synth.available()
    with pytest.raises(TTSUnavailableError) as err:
        synth.synthesise("hello")
    assert "espeak-ng" in err.value.message and "tts.enabled" in err.value.hint


def test_no_engine_at_all_in_a_fresh_process(tmp_path):
    # neither the wheel (import blocked) nor the program (empty PATH): the message says what to install
    code = (
        "import sys; sys.modules['espeakng_loader'] = None\n"
        "from models.tts import Synthesiser, TTSUnavailableError\n"
        "from models.settings import TTSSettings\n"
        "try:\n    Synthesiser(TTSSettings()).synthesise('hello')\n"
        "except TTSUnavailableError as e:\n    print(e)\n"
    )
    env = dict(os.environ, PATH=str(tmp_path), PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert "Spoken answers are unavailable" in done.stdout, done.stderr
    assert "pip install espeakng-loader" in done.stdout
