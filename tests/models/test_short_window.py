"""The encoder's window cut to the clip: the same words as the full 30-second pass, on real speech."""

from __future__ import annotations

import numpy as np

from bench.wer import wer
from models import audio as audio_io
from models.settings import StreamingSettings
from models.short_window import WINDOW_FRAMES, decode_short, window_frames
from tests.audio_data import librivox_clips, shared_transcriber

RATE = 16000
MARGIN = StreamingSettings().window_margin_s  # the shipped margin


def test_the_window_is_the_clip_and_the_margin_in_whole_seconds():
    assert window_frames(3.2, 1.0) == 500
    assert window_frames(7.0, 10.0) == 1700
    assert window_frames(25.0, 10.0) == WINDOW_FRAMES


def test_a_cut_pass_hears_what_the_full_pass_hears():
    tr = shared_transcriber("tiny.en")
    model = tr._load()
    refs, full, cut = [], [], []
    for clip in librivox_clips():
        samples = audio_io.load(clip.path).samples
        short = decode_short(model, samples, "en", margin_s=MARGIN)
        assert short is not None
        assert short.frames < WINDOW_FRAMES and short.frames >= 100 * len(samples) / RATE
        assert short.avg_logprob is not None and -1.0 <= short.avg_logprob <= 0
        refs.append(clip.reference)
        cut.append(short.text)
        full.append(tr.decode(samples).text)  # the standard pass
    # at most one word more than the full pass: tiny.en's "ill-disposed" / "old-sposed" (two words
    # once normalised) flips with the CPU and its thread count even between two full passes
    words = sum(len(r.split()) for r in refs)
    assert wer(refs, cut) <= wer(refs, full) + 2 / words + 1e-9, (cut, full)
    # with the committed words forced as the prefix: the text holds them once, then the rest
    samples = audio_io.load(librivox_clips()[0].path).samples
    short = decode_short(model, samples, "en", prefix="And Mr. John Dashwood", margin_s=MARGIN)
    assert short is not None, "the cut pass was refused"
    assert short.text.lower().startswith("and mr. john dashwood had then leisure")
    assert short.text.lower().count("dashwood") == 1
    assert tr.decode(samples, prefix="And Mr. John Dashwood", margin_s=MARGIN).text == short.text


def test_a_pass_writing_more_than_its_speech_holds_is_refused(monkeypatch):
    """A loop writes more tokens than the speech can hold: such a pass goes to the full window."""
    import models.short_window as sw

    model = shared_transcriber("tiny.en")._load()
    samples = audio_io.load(librivox_clips()[0].path).samples  # ~25 tokens of speech
    assert decode_short(model, samples, "en") is not None
    monkeypatch.setattr(sw, "MAX_NEW_TOKENS", 6)
    monkeypatch.setattr(sw, "TOKENS_PER_SECOND", 0)
    assert decode_short(model, samples, "en") is None


def test_silence_a_long_clip_or_no_language_are_not_cut():
    model = shared_transcriber("tiny.en")._load()
    quiet = decode_short(model, np.zeros(RATE * 2, np.float32), "en")
    assert quiet is not None and quiet.text == "" and quiet.frames == 0  # the VAD kept nothing
    long = np.tile(audio_io.load(librivox_clips()[0].path).samples, 4)  # ~28 s
    assert decode_short(model, long, "en", max_seconds=20.0) is None  # the standard pass instead
    base = shared_transcriber("base")._load()  # multilingual: the full pass detects the language
    assert decode_short(base, long[: RATE * 3], None) is None
    assert decode_short(model, long[: RATE * 3], None) is not None  # tiny.en speaks English
