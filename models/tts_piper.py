"""A Piper voice (piper-tts: a VITS model run by ONNX Runtime on the CPU, espeak-ng phonemes).

`PiperEngine(TTSSettings)` loads the voice named by `tts.piper_voice` (the bundled
en_US-joe-medium, or a path, resolved by `models.weights.piper_voice`) with its own ONNX Runtime
session (`tts.piper_threads`). `.synthesise(text)` → (sample_rate, int16 mono samples): Piper cuts
the text into sentences itself; their audio is joined. Loading failures raise
`PiperUnavailableError`; a failure while speaking raises `PiperSpeakError`.
"""

from __future__ import annotations

import json
import logging

import numpy as np

from models.runtime.errors import HarkError
from models.settings import TTSSettings
from models.weights import piper_voice

log = logging.getLogger(__name__)


class PiperUnavailableError(HarkError):
    """The Piper package or the voice cannot be loaded."""


class PiperSpeakError(HarkError):
    """Piper failed on one text."""


class PiperEngine:
    """One loaded Piper voice. ONNX Runtime sessions run concurrently; Piper's phonemizer has its
    own lock, so one engine serves every session."""

    def __init__(self, settings: TTSSettings) -> None:
        try:
            import onnxruntime  # noqa: PLC0415
            from piper import PiperConfig, PiperVoice, SynthesisConfig  # noqa: PLC0415
        except ImportError as exc:
            raise PiperUnavailableError(f"the piper-tts package is not installed ({exc.name})") from exc
        try:
            files = piper_voice(settings.piper_voice)
        except FileNotFoundError as exc:
            raise PiperUnavailableError(str(exc)) from exc
        try:
            config = PiperConfig.from_dict(json.loads(files.config.read_text(encoding="utf-8")))
            opts = onnxruntime.SessionOptions()
            opts.intra_op_num_threads = settings.piper_threads
            opts.inter_op_num_threads = 1
            session = onnxruntime.InferenceSession(
                str(files.model), sess_options=opts, providers=["CPUExecutionProvider"]
            )
        except Exception as exc:  # noqa: BLE001 - bad JSON, not an ONNX file, wrong opset…
            raise PiperUnavailableError(
                f"the Piper voice {files.model.name} could not be loaded ({type(exc).__name__}: {exc})"
            ) from exc
        self._voice = PiperVoice(session=session, config=config)
        self._syn = SynthesisConfig(length_scale=config.length_scale * settings.piper_length_scale,
                                    noise_scale=settings.piper_noise_scale, noise_w_scale=settings.piper_noise_w)
        self.sample_rate = int(config.sample_rate)
        self.voice = files.model.name.removesuffix(".onnx")
        self.language = str(config.espeak_voice or "en").lower()  # e.g. "en-us"
        self.name = f"Piper ({self.voice})"

    def speaks(self, language: str | None) -> bool:
        """Whether this voice can say text in `language` ("en", "en-GB", None = the voice's own)."""
        if not language:
            return True
        return language.lower().replace("_", "-").split("-")[0] == self.language.split("-")[0]

    def synthesise(self, text: str) -> tuple[int, np.ndarray]:
        # "[[ … ]]" is Piper's syntax for raw phonemes: never taken from answer text
        text = text.replace("[[", "[").replace("]]", "]")
        try:
            chunks = [c.audio_int16_array for c in self._voice.synthesize(text, syn_config=self._syn)]
        except Exception as exc:  # noqa: BLE001 - ONNX Runtime or phonemizer failure
            raise PiperSpeakError(f"Piper could not speak that ({type(exc).__name__}: {exc}).") from exc
        samples = np.concatenate(chunks) if chunks else np.zeros(0, np.int16)
        return self.sample_rate, samples.astype(np.int16, copy=False)
