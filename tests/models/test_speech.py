"""models/speech.py with real faster-whisper (bundled tiny.en; base once) on real speech."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import wave

import numpy as np
import pytest

from bench.wer import normalise, wer
from models.settings import SpeechSettings
from models.speech import SpeechInputError, Transcriber, resolve_device
from tests.audio_data import ROOT, espeak_wav, librivox_clips, shared_transcriber


@pytest.fixture(scope="module")
def tiny() -> Transcriber:
    return shared_transcriber("tiny.en")


def _read_wav(path) -> tuple[int, np.ndarray]:
    with wave.open(str(path)) as w:
        rate, ch = w.getframerate(), w.getnchannels()
        data = np.frombuffer(w.readframes(w.getnframes()), dtype="<i2")
    return rate, data.reshape(-1, ch) if ch > 1 else data


def _fresh(**kw) -> Transcriber:
    return Transcriber(SpeechSettings(model="tiny.en", **kw))


def test_librivox_human_speech_tiny(tiny):
    clips = librivox_clips()
    assert len(clips) == 5
    texts = [tiny.transcribe(c.path).text for c in clips]
    assert wer([c.reference for c in clips], texts) <= 0.12, texts
    assert "dashwood" in normalise(texts[0])


@pytest.mark.slow
def test_default_settings_base_model_on_human_speech():
    base = Transcriber(SpeechSettings())  # config defaults: base, greedy, VAD, int8, English
    assert (base.device, base.compute_type) == resolve_device(SpeechSettings())
    clip = librivox_clips()[3]  # "had he married a more amiable woman …"
    result = base.transcribe(clip.path)
    assert wer([clip.reference], [result.text]) <= 0.1, result.text
    assert result.duration == pytest.approx(6.05, abs=0.05)
    assert 0 < result.seconds < 30


def test_device_and_compute_type_resolution():
    assert resolve_device(SpeechSettings(device="cpu")) == ("cpu", "int8")
    assert resolve_device(SpeechSettings(device="cuda")) == ("cuda", "float16")
    assert resolve_device(SpeechSettings(device="cpu", compute_type="float32")) == ("cpu", "float32")


def test_44k_and_48k_stereo_int16_give_the_same_words(tiny, tmp_path):
    clip = librivox_clips()[0]  # 7 s of "and mister john dashwood had then leisure …"
    reference = tiny.transcribe(clip.path).text
    for rate, as_file in ((44100, False), (48000, True)):
        out = tmp_path / f"s{rate}.wav"
        subprocess.run(["sox", str(clip.path), "-r", str(rate), "-c", "2", "-b", "16", str(out)], check=True)
        sr, stereo = _read_wav(out)
        assert (sr, stereo.shape[1], stereo.dtype) == (rate, 2, np.int16)
        # what gr.Audio hands over, or the file a browser uploads
        text = tiny.transcribe(out).text if as_file else tiny.transcribe((sr, stereo)).text
        assert wer([reference], [text]) <= 0.1, (rate, text, reference)
        assert {"dashwood", "leisure", "power"} <= set(normalise(text)), text


def test_compressed_upload_ogg_vorbis(tiny, tmp_path):
    clip = librivox_clips()[1]  # "he was not an ill disposed young man"
    ogg = tmp_path / "upload.ogg"
    subprocess.run(["sox", str(clip.path), "-r", "48000", "-c", "2", str(ogg)], check=True)
    text = tiny.transcribe(ogg).text
    assert {"he", "was", "not", "young", "man"} <= set(normalise(text)), text


def test_espeak_question_as_float_array(tiny, tmp_path):
    path = espeak_wav(tmp_path, "what is the notice period in my rental agreement", rate=22050)
    sr, samples = _read_wav(path)
    result = tiny.transcribe(samples.astype(np.float32) / 32768, sample_rate=sr)
    assert {"rental", "agreement"} <= set(normalise(result.text)), result.text


@pytest.mark.parametrize(
    "make, words",
    [
        (lambda: np.zeros(3 * 16000, np.int16), "silent"),
        (lambda: np.zeros(0, np.float32), "empty"),
        (lambda: np.full(800, 1000, np.int16), "too short"),
        (lambda: np.random.default_rng(1).normal(0, 0.02, 3 * 16000).astype(np.float32), "any words"),
    ],
    ids=["silence", "zero-length", "too-short", "noise-without-speech"],
)
def test_unusable_audio_gets_a_clear_message(tiny, make, words):
    with pytest.raises(SpeechInputError) as err:
        tiny.transcribe(make(), sample_rate=16000)
    assert err.value.message.startswith("I didn't catch that")
    assert words in err.value.message


def test_no_recording_at_all(tiny):
    with pytest.raises(SpeechInputError, match="I didn't catch that — there was no recording"):
        tiny.transcribe(None)  # gr.Audio's value when nothing was recorded


def test_too_long_is_refused_before_any_work(tmp_path):
    tr = _fresh(max_seconds=5)
    long_array = np.random.default_rng(0).integers(-3000, 3000, (48000 * 6, 2), dtype=np.int16)
    with pytest.raises(SpeechInputError, match="I didn't catch that .*limit is 5 seconds"):
        tr.transcribe((48000, long_array))
    long_file = tmp_path / "long.wav"
    subprocess.run(
        ["sox", "-n", "-r", "16000", "-c", "1", str(long_file), "synth", "7", "sine", "300"], check=True
    )
    with pytest.raises(SpeechInputError, match="7 seconds long"):
        tr.transcribe(long_file)
    assert tr._model is None  # refused before the model was even loaded


def test_corrupt_empty_and_missing_files(tmp_path):
    tr = _fresh()
    good = espeak_wav(tmp_path, "hello there")
    truncated = tmp_path / "truncated.wav"
    truncated.write_bytes(good.read_bytes()[:30])
    garbage = tmp_path / "garbage.mp3"
    garbage.write_bytes(os.urandom(4096))
    empty = tmp_path / "empty.wav"
    empty.write_bytes(b"")
    text = tmp_path / "notes.wav"
    text.write_text("this is not audio\n" * 50)
    for path in (truncated, garbage, empty, text, tmp_path / "missing.wav"):
        with pytest.raises(SpeechInputError) as err:
            tr.transcribe(path)
        assert err.value.message.startswith("I didn't catch that"), path.name
    assert tr._model is None


def test_model_loads_once_under_concurrency(tmp_path):
    tr = _fresh()
    loads = []
    real_create = tr._create

    def counting_create():
        loads.append(1)
        return real_create()

    tr._create = counting_create
    clip = librivox_clips()[1]  # "he was not an ill disposed young man"
    results: list[str] = []
    threads = [
        threading.Thread(target=lambda: results.append(tr.transcribe(clip.path).text)) for _ in range(3)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(loads) == 1
    assert len(results) == 3 and all("young" in normalise(r) for r in results), results


def test_cli_bad_file_is_a_message_not_a_traceback(tmp_path):
    bad = tmp_path / "bad.wav"
    bad.write_bytes(b"not audio at all")
    env = dict(os.environ, HF_HUB_OFFLINE="1")
    done = subprocess.run(
        [sys.executable, str(ROOT / "launch.py"), "transcribe", str(bad)],
        capture_output=True, text=True, env=env, cwd=ROOT, timeout=120,
    )  # fmt: skip
    assert done.returncode == 2
    assert "I didn't catch that" in done.stderr
    assert "Traceback" not in done.stderr + done.stdout


def test_an_unbundled_model_offline_is_a_clear_load_error(monkeypatch):
    from models.runtime.errors import ModelLoadError

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # the hub is unreachable: only bundled or cached weights
    tr = Transcriber(SpeechSettings(model="hark-test/no-such-whisper-model"))
    with pytest.raises(ModelLoadError) as err:
        tr.warm_up()
    assert "no-such-whisper-model" in err.value.message and "tiny.en" in err.value.hint
