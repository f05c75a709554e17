"""models/audio.py: any input → 16 kHz mono float32, resampled properly (anti-aliased)."""

from __future__ import annotations

import wave
from pathlib import Path

import numpy as np
import pytest

from models import audio


def _tone(freq: float, rate: int, seconds: float = 1.0, amp: float = 0.5) -> np.ndarray:
    t = np.arange(int(rate * seconds)) / rate
    return (amp * np.sin(2 * np.pi * freq * t)).astype(np.float32)


def _spectrum_peak(x: np.ndarray, rate: int) -> float:
    spec = np.abs(np.fft.rfft(x * np.hanning(len(x))))
    return float(np.argmax(spec) * rate / len(x))


def _rms(x: np.ndarray) -> float:
    return float(np.sqrt(np.mean(np.square(x))))


def _write_wav(path: Path, rate: int, samples: np.ndarray) -> Path:
    channels = 1 if samples.ndim == 1 else samples.shape[1]
    with wave.open(str(path), "wb") as w:
        w.setnchannels(channels)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(samples.astype("<i2").tobytes())
    return path


@pytest.mark.parametrize("rate", [44100, 48000, 8000, 22050])
def test_resampling_keeps_speech_band_and_length(rate):
    x = _tone(1000, rate)
    clip = audio.load((rate, (x * 32767).astype(np.int16)))
    assert clip.sample_rate == 16000
    assert abs(len(clip.samples) - 16000) <= 16  # one second stays one second
    assert abs(_spectrum_peak(clip.samples, 16000) - 1000) < 5
    assert _rms(clip.samples[200:-200]) == pytest.approx(0.5 / np.sqrt(2), rel=0.03)


@pytest.mark.parametrize("rate", [44100, 48000])
def test_resampling_filters_what_16khz_cannot_hold(rate):
    # 10 kHz is above the 8 kHz Nyquist limit: a naive decimation would fold it to 6 kHz at full level
    clip = audio.load((rate, _tone(10000, rate)), None)
    assert _rms(clip.samples[200:-200]) < 0.01 * 0.5


def test_int_and_float_dtypes_agree():
    x = _tone(440, 16000, amp=0.25)
    variants = {
        "int16": (x * 32768).astype(np.int16),
        "int32": (x * 2**31).astype(np.int32),
        "uint8": (x * 128 + 128).astype(np.uint8),
        "float64": x.astype(np.float64),
        "float32 on int scale": x * 32768,
    }
    ref = audio.load((16000, variants["int16"])).samples
    for name, arr in variants.items():
        got = audio.load(arr, 16000).samples
        tol = 0.02 if name != "float32 on int scale" else 0.01  # peak-normalised: 0.25 → 1.0
        if name == "float32 on int scale":
            assert float(np.max(np.abs(got))) == pytest.approx(1.0, abs=1e-3)
            continue
        assert np.max(np.abs(got - ref)) < tol, name


def test_stereo_is_averaged_in_either_layout():
    left, right = _tone(440, 48000, amp=0.4), _tone(440, 48000, amp=0.2)
    frames_first = np.stack([left, right], axis=1)  # (frames, 2) as gr.Audio / sounddevice give
    channels_first = frames_first.T.copy()
    a = audio.load((48000, frames_first)).samples
    b = audio.load(channels_first, 48000).samples
    assert np.allclose(a, b, atol=1e-6)
    assert _rms(a[200:-200]) == pytest.approx(0.3 / np.sqrt(2), rel=0.03)
    assert audio.array_seconds(frames_first, 48000) == pytest.approx(1.0)
    assert audio.array_seconds(channels_first, 48000) == pytest.approx(1.0)


def test_file_and_array_take_the_same_path(tmp_path):
    rate = 44100
    stereo = (np.stack([_tone(300, rate), _tone(300, rate, amp=0.3)], axis=1) * 32767).astype(np.int16)
    path = _write_wav(tmp_path / "tone.wav", rate, stereo)
    from_file = audio.load(path).samples
    from_array = audio.load((rate, stereo)).samples
    n = min(len(from_file), len(from_array))
    assert abs(len(from_file) - len(from_array)) <= 32
    assert np.corrcoef(from_file[:n], from_array[:n])[0, 1] > 0.999
    assert audio.probe_seconds(path) == pytest.approx(1.0, abs=0.01)


def test_unreadable_inputs_raise_audio_decode_error(tmp_path):
    junk = tmp_path / "junk.wav"
    junk.write_bytes(b"RIFF\x00\x00\x00\x00WAVEjunkjunkjunk" + bytes(range(256)) * 4)
    with pytest.raises(audio.AudioDecodeError):
        audio.load(junk)
    with pytest.raises(audio.AudioDecodeError):
        audio.load(tmp_path / "missing.wav")
    with pytest.raises(audio.AudioDecodeError):
        audio.load(np.zeros((2, 2, 2)), 16000)
    with pytest.raises(audio.AudioDecodeError):
        audio.load(np.zeros(100))  # an array without its rate
    with pytest.raises(audio.AudioDecodeError):
        audio.load(np.array(["a", "b"]), 16000)
