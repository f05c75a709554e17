"""What the pass in each pause heard, for `bench.turns`: the text side of the end of turn.

In the voice loop, a pause of `pause_ms` (100 ms: 4 VAD frames, 128 ms) starts a pass of the main
model over the utterance so far (`models/streaming.py`); its transcript is what the text test
(`models/turn_text.py`) reads. Here, for every silence of a clip that reaches that pause, the same
pass (whisper base int8, the short window of `window_margin_s`) runs over the clip up to the pause's
128th ms; kept: its text and how long it took (ms, on this machine, alone: in the browser the same
pass takes ~1.5× as long beside Chromium). Cached in the clips' folder (`texts.json`).
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path

import numpy as np

from bench.turn_clips import TurnClip, read_wav

RATE = 16000


def pass_pause_ms() -> float:
    """Where the pass in the pause starts: `pause_ms` in whole 32 ms VAD frames."""
    from models.settings import StreamingSettings
    from models.vad import FRAME_MS

    return math.ceil(StreamingSettings().pause_ms / FRAME_MS) * FRAME_MS


def pause_texts(folder: Path, clips: list[TurnClip], events: list[list[dict]]) -> None:
    """Adds "text" and "text_ms" (the pass's time) to each event long enough for the pass."""
    cache_path = folder / "texts.json"
    cache: dict[str, dict] = json.loads(cache_path.read_text()) if cache_path.exists() else {}
    at_ms = pass_pause_ms()
    transcriber = None
    for clip, ev in zip(clips, events, strict=True):
        x = None
        for e in ev:
            if e["ms"] < at_ms:
                continue
            key = f"{clip.path}@{e['start']:.3f}"
            if key not in cache:
                if transcriber is None:
                    transcriber = _transcriber()
                if x is None:
                    data, rate = read_wav(clip.path)
                    assert rate == RATE
                    x = data.astype(np.float32) / 32768
                end = int((e["start"] + at_ms / 1000) * RATE)
                t0 = time.perf_counter()
                decoded = transcriber.decode(x[:end], margin_s=transcriber.settings.streaming.window_margin_s)
                cache[key] = {"text": decoded.text.strip(), "ms": (time.perf_counter() - t0) * 1000}
            e["text"], e["text_ms"] = cache[key]["text"], cache[key]["ms"]
    cache_path.write_text(json.dumps(cache))


def _transcriber():
    from models.settings import SpeechSettings
    from models.speech import Transcriber

    t = Transcriber(SpeechSettings())
    t.warm_up()
    return t
