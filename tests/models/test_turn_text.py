"""The text side of the hands-free end of turn (models/turn_text.py) on what Whisper hears: the
first half of a question spoken by Piper, cut where a user pauses, reads as unfinished; the whole question as
finished."""

from __future__ import annotations

import numpy as np
import pytest

from models import audio as audio_io
from models.turn_text import text_verdict
from tests.audio_data import piper_wav, shared_transcriber

QUESTIONS = [
    # (the words before the pause, the rest)
    ("what is the notice period for", "a tenant in the flat"),
    ("how do I configure the", "network interface on debian"),
    ("can I pay the rent and", "the deposit by bank transfer"),
    ("where can I find the list of", "packages installed on debian"),
]


def _speak(text: str, folder, name: str) -> np.ndarray:
    """Hark's Piper voice, as a user's question is spoken in bench.turn_clips."""
    return audio_io.load(piper_wav(folder, text, name=name)).samples


@pytest.mark.parametrize(("head", "rest"), QUESTIONS)
def test_whisper_s_words_at_a_mid_question_pause_read_as_unfinished(tmp_path, head, rest):
    whisper = shared_transcriber("base")
    head_text = whisper.decode(_speak(head, tmp_path, "head"), margin_s=6).text
    whole_text = whisper.decode(_speak(f"{head} {rest}", tmp_path, "whole"), margin_s=6).text
    assert text_verdict(head_text) == "incomplete", head_text
    assert text_verdict(whole_text) != "incomplete", whole_text


@pytest.mark.parametrize(
    ("text", "verdict"),
    [
        ("How do I end an R session?", "complete"),
        ("What is the notice period", "complete"),
        ("What is the notice period for?", "incomplete"),
        ("How do I, um...", "incomplete"),
        ("I want to know about the", "incomplete"),
        ("Rent", "incomplete"),
        ("the deposit", "unsure"),
        ("Comment quitter une séance R ?", "unsure"),
    ],
)
def test_the_verdict_reads_how_the_text_ends(text, verdict):
    assert text_verdict(text) == verdict
