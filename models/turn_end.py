"""Has the user finished their turn? Pipecat's Smart-Turn v3 scores how the speech ends.

The model (`smart-turn-v3.2-cpu.onnx`, BSD-2-Clause, 8.7 MB) ships inside the `pipecat-ai` wheel
and is run by Pipecat's own `LocalSmartTurnAnalyzerV3`: its ONNX Runtime session, its numpy
Whisper log-mel features, the last 8 s of audio (zero-padded at the front). Pipecat's public API
(`append_audio` + async `analyze_end_of_turn`) keeps its own copy of the audio, timed by arrival,
and needs an event loop; the voice loop already holds the utterance at 16 kHz with its VAD, so
`TurnEnd.probability` hands that buffer straight to the analyzer's prediction (pinned version:
`_predict_endpoint` is not public).

`TurnEnd.verdict(p, settings)`: "complete" (end the turn now), "incomplete" (the user is
mid-sentence: wait longer), or "unsure" (the silence rule decides). One analyzer (one ONNX session,
thread-safe `run`) serves every stream; ~30 ms per call on one core.
"""

from __future__ import annotations

import functools
import logging
import threading
import time
from typing import Literal

import numpy as np

from models.runtime.errors import HarkError

log = logging.getLogger(__name__)

Verdict = Literal["complete", "incomplete", "unsure"]


class TurnModelError(HarkError):
    """The end-of-turn model cannot be loaded (pipecat-ai missing or broken)."""


@functools.lru_cache(maxsize=1)
def _analyzer(threads: int):
    try:
        from loguru import logger  # noqa: PLC0415 - Pipecat logs through loguru

        logger.disable("pipecat")  # its banner and per-load debug lines are not Hark's log
        from pipecat.audio.turn.smart_turn.local_smart_turn_v3 import (  # noqa: PLC0415
            LocalSmartTurnAnalyzerV3,
        )
    except ImportError as exc:
        raise TurnModelError(
            f"the end-of-turn model needs the pipecat-ai package ({exc.name} is missing)",
            "pip install -r requirements.txt, or set speech.streaming.end_of_turn: silence",
        ) from exc
    try:
        analyzer = LocalSmartTurnAnalyzerV3(cpu_count=max(1, threads), sample_rate=16000)
    except Exception as exc:  # noqa: BLE001 - a missing or corrupt model file, an ONNX Runtime error
        raise TurnModelError(f"the Smart-Turn model could not be loaded ({type(exc).__name__}: {exc})") from exc
    analyzer.set_sample_rate(16000)
    return analyzer


class TurnEnd:
    """The Smart-Turn v3 model, loaded on first use (or `warm_up`)."""

    def __init__(self, threads: int = 1) -> None:
        self.threads = threads
        self._lock = threading.Lock()
        self.last_ms = 0.0  # how long the latest call took

    def warm_up(self) -> None:
        self.probability(np.zeros(16000, np.float32))

    def probability(self, audio: np.ndarray) -> float:
        """P(the turn is complete) for 16 kHz mono float32 audio that ends now (the pause included)."""
        with self._lock:
            analyzer = _analyzer(self.threads)
        x = np.asarray(audio, np.float32).reshape(-1)
        if not len(x):
            return 0.0
        t0 = time.perf_counter()
        result = analyzer._predict_endpoint(x)  # noqa: SLF001 - see the module's docstring
        self.last_ms = (time.perf_counter() - t0) * 1000
        return float(result["probability"])

    @staticmethod
    def verdict(p: float, complete: float, incomplete: float) -> Verdict:
        """`p ≥ complete`: the turn is over; `p ≤ incomplete`: it goes on; else unsure."""
        if p >= complete:
            return "complete"
        if p <= incomplete:
            return "incomplete"
        return "unsure"
