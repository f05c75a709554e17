"""One recognition pass with the encoder's window cut to the clip (whisper.cpp's `audio_ctx`).

faster-whisper pads every clip's features to Whisper's 30-second window, so the encoder costs the
same for a 3-second question as for 30 seconds of speech, and the decoder's cross-attention reads
all 1500 positions. CTranslate2's encoder takes a shorter input: the clip's frames plus a margin
of padding (`margin_s`, rounded up to whole seconds) give the same words in a fraction of the
time (`bench/window.py`). Whisper was trained on the whole window, so a pass whose text looks
wrong by faster-whisper's own fallback rules (compression ratio above 2.4: a repetition loop;
average log-probability below -1.0) is not used: `decode_short` returns None and the caller makes
the standard pass. So it does for a pass writing more tokens than its speech can hold (a loop,
stopped at twice that), an empty text where the VAD kept speech, a clip too long for the cut to
pay, a multilingual model without a configured language, or an error in the cut path.

The pass mirrors the standard one's settings: the Silero VAD filter (faster-whisper's own
`get_speech_timestamps` and `collect_chunks`), greedy or beam search, the same suppressed tokens,
an optional `prefix` the decoder takes as already said, and the library's terms (`Bias`); always
without timestamps.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass

import numpy as np

from models.audio import TARGET_RATE as RATE
from models.speech_bias import Bias

log = logging.getLogger(__name__)

FRAMES_PER_SECOND = 100  # log-Mel frames (hop of 160 samples)
WINDOW_FRAMES = 3000  # Whisper's 30 seconds
COMPRESSION_MAX = 2.4  # faster-whisper's fallback thresholds
LOGPROB_MIN = -1.0
MAX_NEW_TOKENS = 20  # and TOKENS_PER_SECOND of speech: the most a cut pass may write
TOKENS_PER_SECOND = 12
HEARD_S = 0.3  # speech the VAD kept for an empty text to be doubted


@dataclass(frozen=True)
class ShortPass:
    text: str
    avg_logprob: float | None
    no_speech_prob: float | None
    speech_seconds: float  # after the VAD filter
    frames: int  # the encoder's input length (log-Mel frames)


def window_frames(seconds: float, margin_s: float) -> int:
    """The encoder's input for a clip of `seconds`: its frames and the margin, in whole seconds
    (fewer shapes for CTranslate2), at most the full window."""
    return min(WINDOW_FRAMES, FRAMES_PER_SECOND * math.ceil(seconds + margin_s))


def decode_short(
    model,
    samples: np.ndarray,
    language: str | None,
    beam_size: int = 1,
    vad_filter: bool = True,
    prefix: str | None = None,
    margin_s: float = 6.0,
    max_seconds: float = 20.0,
    bias: Bias | None = None,
) -> ShortPass | None:
    """One pass of a faster-whisper `WhisperModel` over 16 kHz mono float32 `samples` with a cut
    window; None when the standard pass should be made instead (see the module's text)."""
    language = language or ("en" if not model.model.is_multilingual else None)  # tiny.en speaks English
    if not language or len(samples) > max_seconds * RATE:
        return None
    try:
        return _decode(model, samples, language, beam_size, vad_filter, prefix, margin_s, bias)
    except Exception:  # noqa: BLE001 - the standard pass is the fallback
        log.warning("short-window pass failed; the standard pass is made", exc_info=True)
        return None


def _decode(model, samples, language, beam_size, vad_filter, prefix, margin_s, bias=None) -> ShortPass | None:
    import ctranslate2
    from faster_whisper.tokenizer import Tokenizer
    from faster_whisper.transcribe import get_compression_ratio, get_suppressed_tokens
    from faster_whisper.vad import VadOptions, collect_chunks, get_speech_timestamps

    audio = np.asarray(samples, dtype=np.float32)
    if vad_filter:
        chunks = get_speech_timestamps(audio, VadOptions())
        if not chunks:
            return ShortPass("", None, None, 0.0, 0)
        audio = np.concatenate(collect_chunks(audio, chunks)[0])
    speech = len(audio) / RATE
    features = model.feature_extractor(audio)
    n = window_frames(speech, margin_s)
    features = features[:, :n]
    padded = np.zeros((1, features.shape[0], n), dtype=np.float32)
    padded[0, :, : features.shape[1]] = features
    encoded = model.model.encode(ctranslate2.StorageView.from_array(padded), to_cpu=False)
    tokenizer = Tokenizer(model.hf_tokenizer, model.model.is_multilingual, task="transcribe", language=language)
    given = bias.kwargs(bool(prefix)) if bias is not None else {}  # the library's terms, as the standard pass
    previous = tokenizer.encode(" " + given["initial_prompt"].strip()) if "initial_prompt" in given else []
    prompt = model.get_prompt(
        tokenizer, previous, without_timestamps=True, prefix=prefix, hotwords=given.get("hotwords")
    )
    forced = min(len(tokenizer.encode(" " + prefix.strip())), model.max_length // 2 - 1) if prefix else 0
    budget = MAX_NEW_TOKENS + int(TOKENS_PER_SECOND * speech)
    result = model.model.generate(
        encoded,
        [prompt],
        beam_size=beam_size,
        # a loop (the cut window's failure) stops early: speech holds ~3-5 tokens a second
        max_length=min(model.max_length, len(prompt) + 2 * budget),
        return_scores=True,
        return_no_speech_prob=True,
        suppress_blank=True,
        suppress_tokens=get_suppressed_tokens(tokenizer, [-1]),
    )[0]
    tokens = result.sequences_ids[0]
    avg_logprob = result.scores[0] * len(tokens) / (len(tokens) + 1)  # as faster-whisper recovers it
    text = tokenizer.decode(tokens).strip()  # the prefix's tokens included, as in the standard pass
    if not text and speech < HEARD_S:
        return ShortPass("", None, float(result.no_speech_prob), speech, n)
    written = len(tokens) - forced
    if (
        not text  # the VAD kept speech and the cut pass heard none: the full window may
        or written > budget  # more words than the speech can hold: a loop
        or get_compression_ratio(text) > COMPRESSION_MAX
        or avg_logprob < LOGPROB_MIN
    ):
        log.debug("short-window pass rejected (%r, log-prob %.2f)", text[:60], avg_logprob)
        return None
    return ShortPass(text, float(avg_logprob), float(result.no_speech_prob), speech, n)
