"""The first stage of a turn: the question as heard — typed text, or speech transcribed.

`hear(user_input, transcriber)` → `Heard` (the text, whitespace-normalised, possibly empty) or
`NotHeard` (the message to show: speech recognition unavailable, or "I didn't catch that…").
Audio that cannot become a question raises `SpeechInputError` in the recogniser, whose message
says why; any other recogniser failure gets the generic `DIDNT_CATCH`.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Literal

from assistant.events import AudioInput
from assistant.routing import rule_intent
from models.speech import SpeechInputError

log = logging.getLogger(__name__)

DIDNT_CATCH = "I didn't catch that. Please try again, or type your question."


@dataclass(frozen=True)
class SpeechConfidence:
    """How sure the recogniser was (faster-whisper's segment statistics); None until it reports them."""

    avg_logprob: float | None = None
    no_speech_prob: float | None = None


@dataclass(frozen=True)
class Heard:
    text: str  # "" when nothing was said or typed
    input: Literal["text", "audio"] = "text"
    seconds: float = 0.0  # recognition wall time (audio)
    audio_seconds: float | None = None  # length of the recording (audio)
    confidence: SpeechConfidence | None = None
    speech_seconds: float | None = None  # how much of the recording was speech (audio)

    def unsure_greeting(self, short_speech_seconds: float) -> bool:
        """A short utterance classified as a greeting that the greeting rules do not confirm: a
        clipped word heard as "Another one." is not a greeting, so it is asked again."""
        short = self.speech_seconds is not None and self.speech_seconds < short_speech_seconds
        return self.input == "audio" and short and rule_intent(self.text) != "greeting"


@dataclass(frozen=True)
class NotHeard:
    message: str  # shown as a warning (error when recognition is unavailable) and as the answer
    level: Literal["warning", "error"] = "warning"
    audio_seconds: float | None = None


def hear(user_input: str | AudioInput, transcriber: Any) -> Heard | NotHeard:
    """`transcriber`: the lazy speech-recogniser part (`get_or_none()`, `error`), used for audio only."""
    if not isinstance(user_input, AudioInput):
        return Heard(" ".join(str(user_input or "").split()))
    done = user_input.streamed
    if done is not None:  # transcribed while the user spoke (models/streaming.py)
        confidence = SpeechConfidence(done.avg_logprob, done.no_speech_prob)
        text = " ".join(done.text.split())
        return Heard(text, "audio", done.seconds, round(done.duration, 2), confidence, done.speech_seconds)
    recogniser = transcriber.get_or_none()
    if recogniser is None:
        msg = f"Speech recognition is unavailable ({transcriber.error}). Please type your question."
        return NotHeard(msg, "error")
    try:
        if user_input.path:
            result = recogniser.transcribe(user_input.path)
        else:
            result = recogniser.transcribe(user_input.samples, sample_rate=user_input.sample_rate)
    except SpeechInputError as exc:  # empty, silent, too short/long, unreadable: the message says which
        return NotHeard(exc.message)
    except Exception as exc:  # noqa: BLE001 - a recogniser or decoder failure is still "didn't catch that"
        log.warning("transcription failed: %s", type(exc).__name__)
        return NotHeard(DIDNT_CATCH)
    audio_seconds = round(float(getattr(result, "duration", 0.0) or 0.0), 2)
    text = " ".join((result.text or "").split())
    if not text:
        return NotHeard(DIDNT_CATCH, audio_seconds=audio_seconds)
    confidence = SpeechConfidence(
        getattr(result, "avg_logprob", None), getattr(result, "no_speech_prob", None)
    )
    speech = getattr(result, "speech_seconds", None)
    return Heard(text, "audio", float(result.seconds), audio_seconds, confidence, speech)
