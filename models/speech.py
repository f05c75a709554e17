"""Speech to text with faster-whisper: loaded once (thread-safe, lazily), warmed, greedy by default.

`Transcriber(SpeechSettings).transcribe(audio)` takes a path, a `(sample_rate, ndarray)` tuple (what
`gr.Audio` gives) or an ndarray with `sample_rate=`, converts it to 16 kHz mono (models/audio.py)
and returns a `TranscriptResult`. A clip that is empty, too short, silent, too long or unreadable
raises `SpeechInputError`, whose message starts "I didn't catch that"; limits are checked before
any decoding where the input allows (array length, file size and header duration).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from models import audio as audio_io
from models.runtime.errors import HarkError, ModelLoadError
from models.settings import SpeechSettings
from models.short_window import decode_short
from models.speech_bias import Bias, TermIndex, choose_bias, keeps_the_rest, writes_new_term
from models.weights import whisper_model

if TYPE_CHECKING:
    from faster_whisper import WhisperModel

log = logging.getLogger(__name__)

SILENCE_PEAK = 10 ** (-60 / 20)  # a clip whose loudest sample is below -60 dBFS holds no speech
_TYPE_HINT = "Hold the button (or press Enter) and speak, or type your question."


class SpeechInputError(HarkError):
    """Audio that cannot become a question: empty, silent, too short or long, or unreadable."""


class SpeechRecognitionError(HarkError):
    """The recogniser itself failed on valid audio (runtime error, out of memory, …)."""


@dataclass(frozen=True)
class TranscriptResult:
    text: str
    seconds: float  # wall time of decoding + recognition
    duration: float  # seconds of audio
    language: str | None = None
    speech_seconds: float | None = None  # seconds the VAD kept as speech (the clip's without the VAD)
    avg_logprob: float | None = None  # Whisper's token-weighted average log-probability
    no_speech_prob: float | None = None
    passes: int = 1  # 2: heard again with the library's terms spelled or sounding like its words


@dataclass(frozen=True)
class Decoded:
    """One pass of the recogniser over raw samples."""

    text: str
    seconds: float
    avg_logprob: float | None  # token-weighted, as in TranscriptResult (None: no segment)
    no_speech_prob: float | None
    speech_seconds: float  # what the VAD kept as speech


def _didnt_catch(why: str, hint: str = _TYPE_HINT) -> SpeechInputError:
    return SpeechInputError(f"I didn't catch that — {why}", hint)


def resolve_device(settings: SpeechSettings) -> tuple[str, str]:
    """(device, compute_type): int8 on the CPU, float16 on CUDA, unless configured otherwise."""
    device = settings.device
    if device == "auto":
        try:
            import ctranslate2  # noqa: PLC0415

            device = "cuda" if ctranslate2.get_cuda_device_count() > 0 else "cpu"
        except Exception:  # a broken CUDA install must not stop speech on the CPU
            device = "cpu"
    compute = settings.compute_type
    if compute == "auto":
        compute = "float16" if device == "cuda" else "int8"
    return device, compute


class Transcriber:
    """faster-whisper behind a lock-guarded lazy load; safe to share between sessions."""

    def __init__(self, settings: SpeechSettings) -> None:
        self.settings = settings
        self.device, self.compute_type = resolve_device(settings)
        self._model: WhisperModel | None = None
        self._lock = threading.Lock()
        self.load_seconds: float | None = None
        # the library's terms, best first (knowledge/vocabulary.py), read before each pass; None: none
        self.vocabulary: Callable[[], Sequence[str] | None] | None = None
        self._index: TermIndex | None = None
        self._token_counts: dict[str, int] = {}

    @property
    def model_name(self) -> str:
        return self.settings.model

    def _load(self) -> WhisperModel:
        if self._model is not None:
            return self._model
        with self._lock:
            if self._model is None:
                self._model = self._create()
        return self._model

    def _create(self) -> WhisperModel:
        from faster_whisper import WhisperModel  # noqa: PLC0415 — heavy import, only on first use

        source = whisper_model(self.settings.model)
        t0 = time.perf_counter()
        try:
            model = WhisperModel(
                source,
                device=self.device,
                compute_type=self.compute_type,
                cpu_threads=self.settings.cpu_threads,
            )
        except Exception as exc:
            raise ModelLoadError(
                f"The speech model '{self.settings.model}' could not be loaded ({type(exc).__name__}: {exc}).",
                "Offline, use 'base' or 'tiny.en' (bundled; see requirements.txt), or a local model "
                "folder in config.yaml → speech.model.",
            ) from exc
        self.load_seconds = time.perf_counter() - t0
        log.info(
            "speech model %s loaded from %s on %s/%s in %.2f s",
            self.settings.model,
            source,
            self.device,
            self.compute_type,
            self.load_seconds,
        )
        return model

    # --- the library's terms ---------------------------------------------------------------------
    def bias(self, hint: str | None = None) -> Bias | None:
        """The terms one pass is given (`models.speech_bias`); `hint`: words an earlier pass heard."""
        if self.vocabulary is None or self.settings.bias.mode == "off":
            return None
        try:
            terms = self.vocabulary()
        except Exception:  # noqa: BLE001 - recognition goes on without the library's terms
            log.warning("the library's vocabulary could not be read", exc_info=True)
            return None
        if not terms:
            return None
        return choose_bias(self.index_terms(terms), self.settings.bias, self._count_tokens, hint)

    def written(self, text: str) -> str:
        """The transcript with the library's terms written as the library writes them
        (`TermIndex.write`: "AMCTXT" → "AMC-TXT"); as it is without a vocabulary."""
        if not text or self.vocabulary is None or self.settings.bias.mode == "off":
            return text
        try:
            terms = self.vocabulary()
            return self.index_terms(terms).write(text) if terms else text
        except Exception:  # noqa: BLE001 - the words as heard
            log.warning("the library's terms could not be applied to the transcript", exc_info=True)
            return text

    def index_terms(self, terms: Sequence[str]) -> TermIndex:
        """The index of these terms (their spellings and sounds: ~0.5 s for 2,000 terms), kept until
        the terms change; `LibraryTerms` calls it when the library changes, so no pass waits for it."""
        index = self._index
        if index is None or index.terms is not terms and index.terms != tuple(terms):
            index = self._index = TermIndex(terms)
        return index

    def _count_tokens(self, term: str) -> int:
        n = self._token_counts.get(term)
        if n is None:
            tokenizer = self._load().hf_tokenizer
            n = self._token_counts[term] = len(tokenizer.encode(" " + term, add_special_tokens=False).ids)
        return n

    def _pass(self, model: WhisperModel, samples: np.ndarray, bias: Bias | None, prefix: str | None = None):
        """One standard pass with this Transcriber's settings: (segments, info)."""
        s = self.settings
        segments, info = model.transcribe(
            samples,
            beam_size=s.beam_size,
            language=s.language,
            vad_filter=s.vad_filter,
            word_timestamps=False,
            without_timestamps=s.without_timestamps,
            condition_on_previous_text=s.condition_on_previous_text,
            prefix=prefix or None,
            **(bias.kwargs(prefix is not None) if bias is not None else {}),
        )
        return list(segments), info  # segments decode lazily

    def warm_up(self) -> None:
        """Load the model and run it once so the first question is not the slow one."""
        model = self._load()
        t0 = time.perf_counter()
        rng = np.random.default_rng(0)
        noise = (rng.standard_normal(audio_io.TARGET_RATE) * 0.01).astype(np.float32)
        segments, _ = model.transcribe(
            noise, beam_size=1, language=self.settings.language, vad_filter=False, without_timestamps=True
        )
        for _ in segments:
            pass
        log.debug("speech model warmed up in %.2f s", time.perf_counter() - t0)

    # --- input checks --------------------------------------------------------------------------
    def _check_length(self, seconds: float) -> None:
        s = self.settings
        if seconds <= 0:
            raise _didnt_catch("the recording is empty.")
        if seconds > s.max_seconds:
            raise _didnt_catch(
                f"the recording is {seconds:.0f} seconds long; the limit is {s.max_seconds:.0f} seconds.",
                "Ask a shorter question, or raise speech.max_seconds in config.yaml.",
            )
        if seconds < s.min_seconds:
            raise _didnt_catch("the recording was too short to hold a question.")

    def prepare(self, audio: audio_io.AudioLike | None, sample_rate: int | None = None) -> audio_io.Clip:
        """Validate and convert; raises SpeechInputError before the costly steps where it can."""
        if audio is None:
            raise _didnt_catch("there was no recording.")
        try:
            path, samples, rate = audio_io.split_input(audio, sample_rate)
            if path is not None:
                if not path.is_file():
                    raise _didnt_catch(f"there is no audio file at {path}.", "Check the path.")
                if path.stat().st_size == 0:
                    raise _didnt_catch(f"{path.name} is empty.")
                header_seconds = audio_io.probe_seconds(path)
                if header_seconds is not None:
                    self._check_length(header_seconds)
                clip = audio_io.decode_file(path)
            else:
                assert samples is not None and rate is not None
                if rate <= 0:
                    raise _didnt_catch(f"the audio came with an invalid sample rate ({rate}).")
                if samples.size == 0:
                    raise _didnt_catch("the recording is empty.")
                self._check_length(audio_io.array_seconds(samples, rate))
                clip = audio_io.from_array(samples, rate)
        except audio_io.AudioDecodeError as exc:
            raise _didnt_catch(
                exc.message[0].lower() + exc.message[1:], "Try a WAV, MP3, OGG or WebM recording."
            ) from exc
        self._check_length(clip.seconds)
        if clip.peak < SILENCE_PEAK:
            raise _didnt_catch("the recording is silent.", "Check that the microphone is on and not muted.")
        return clip

    def _check_confidence(self, segments: list[Any], speech_seconds: float, text: str) -> tuple[float, float]:
        """(avg log-probability, no-speech probability) of the transcript, token-weighted. A short
        utterance counts only when Whisper is sure of it: a blip or a clipped word is otherwise
        heard as "Hi." or "Another one." and answered as a greeting."""
        s = self.settings
        weights = [max(1, len(getattr(seg, "tokens", []) or [])) for seg in segments]
        total = sum(weights) or 1
        logprob = sum(w * float(seg.avg_logprob) for w, seg in zip(weights, segments, strict=True)) / total
        no_speech = (
            sum(w * float(seg.no_speech_prob) for w, seg in zip(weights, segments, strict=True)) / total
        )
        short = speech_seconds < s.short_speech_seconds
        if short and (logprob < s.short_min_avg_logprob or no_speech > s.short_max_no_speech_prob):
            log.info(
                "short transcript %r rejected (%.1f s of speech, avg log-prob %.2f, no-speech %.2f)",
                text, speech_seconds, logprob, no_speech,
            )  # fmt: skip
            raise _didnt_catch("I'm not sure what I heard.", "Say it again, a little longer, or type it.")
        return logprob, no_speech

    # --- recognition ---------------------------------------------------------------------------
    def transcribe(
        self, audio: audio_io.AudioLike | None, sample_rate: int | None = None
    ) -> TranscriptResult:
        t0 = time.perf_counter()
        clip = self.prepare(audio, sample_rate)
        model = self._load()
        t_model = time.perf_counter()
        s = self.settings
        try:
            bias, passes = self.bias(), 1
            segs, info = self._pass(model, clip.samples, bias)
            text = " ".join(seg.text.strip() for seg in segs).strip()
            second = self.hear_again(clip.samples, text) if s.bias.second_pass and text else None
            if second is not None:
                segs, info, text, passes = *second, 2
        except Exception as exc:  # CTranslate2/ONNX runtime failures: a message, not a traceback
            log.exception("speech recognition failed")
            raise SpeechRecognitionError(
                f"Speech recognition failed ({type(exc).__name__}: {exc}).", "Type your question instead."
            ) from exc
        seconds = time.perf_counter() - t0
        log.debug(
            "transcribed %.2f s of audio in %.2f s (model %.2f s): %r",
            clip.seconds,
            seconds,
            time.perf_counter() - t_model,
            text,
        )
        if not _has_words(text):
            raise _didnt_catch("I couldn't hear any words.", "Speak a little closer to the microphone.")
        speech = float(info.duration_after_vad) if s.vad_filter else clip.seconds
        logprob, no_speech = self._check_confidence(segs, speech, text)
        return TranscriptResult(
            text=self.written(text), seconds=seconds, duration=clip.seconds, language=info.language, speech_seconds=speech,
            avg_logprob=logprob, no_speech_prob=no_speech, passes=passes,
        )  # fmt: skip

    def hear_again(self, samples: np.ndarray, text: str) -> tuple[list[Any], Any, str] | None:
        """A second pass over a whole clip first heard as `text`, given the library's terms that
        look or sound like its words: (segments, info, text) when it writes such a term that `text`
        does not, else None (the first pass's words stand)."""
        again = self.bias(hint=text)
        if again is None or not again.hinted:
            return None
        segs, info = self._pass(self._load(), samples, again)
        heard = " ".join(seg.text.strip() for seg in segs).strip()
        if not _has_words(heard) or not writes_new_term(text, heard, again.hinted):
            return None
        if not keeps_the_rest(text, heard, again.hinted):
            log.debug("second pass with %s dropped the rest: %r → %r; the first stands", again.hinted, text, heard)
            return None
        log.debug("second pass with %s: %r → %r", again.hinted, text, heard)
        return segs, info, heard

    def decode(
        self, samples: np.ndarray, prefix: str | None = None, margin_s: float | None = None, hint: str | None = None
    ) -> Decoded:
        """One recognition pass over 16 kHz mono float32 `samples`, with the settings of `transcribe`
        but no input checks (a live stream calls it on its growing buffer). `prefix` is text the
        decoder takes as already said: it generates only what follows (the result includes it).
        `margin_s`: the encoder's window cut to the clip plus this margin (`models.short_window`),
        the full window when that pass is refused. `hint`: an earlier pass's words (the library's
        terms spelled like them go first in the pass's bias)."""
        model = self._load()
        s = self.settings
        t0 = time.perf_counter()
        bias = self.bias(hint)
        if margin_s is not None:
            short = decode_short(model, samples, s.language, s.beam_size, s.vad_filter, prefix, margin_s, bias=bias)
            if short is not None:
                return Decoded(short.text, time.perf_counter() - t0, short.avg_logprob, short.no_speech_prob,
                               short.speech_seconds)
        try:
            segs, info = self._pass(model, samples, bias, prefix)
        except Exception as exc:
            log.exception("speech recognition failed")
            raise SpeechRecognitionError(
                f"Speech recognition failed ({type(exc).__name__}: {exc}).", "Type your question instead."
            ) from exc
        text = " ".join(seg.text.strip() for seg in segs).strip()
        weights = [max(1, len(getattr(seg, "tokens", []) or [])) for seg in segs]
        total = sum(weights) or 1
        logprob = sum(w * float(seg.avg_logprob) for w, seg in zip(weights, segs, strict=True)) / total
        no_speech = sum(w * float(seg.no_speech_prob) for w, seg in zip(weights, segs, strict=True)) / total
        speech = float(info.duration_after_vad) if s.vad_filter else len(samples) / audio_io.TARGET_RATE
        return Decoded(text, time.perf_counter() - t0, logprob if segs else None, no_speech if segs else None, speech)

    def check_short(self, decoded: Decoded) -> None:
        """The rule of `transcribe` for a short utterance: it counts only when Whisper is sure of it."""
        s = self.settings
        if decoded.avg_logprob is None or decoded.speech_seconds >= s.short_speech_seconds:
            return
        if decoded.avg_logprob < s.short_min_avg_logprob or (decoded.no_speech_prob or 0) > s.short_max_no_speech_prob:
            raise _didnt_catch("I'm not sure what I heard.", "Say it again, a little longer, or type it.")


def _has_words(text: str) -> bool:
    return any(ch.isalnum() for ch in text)
