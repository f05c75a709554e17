"""Spoken questions with and without a pause in the middle, for the end-of-turn benches.

Each English question of `../shared/data/eval/manuals/questions.jsonl` is spoken by Piper (the
bundled en_US-joe-medium voice) and by eSpeak NG (`en+m3`, 165 wpm); whisper tiny.en's word
timestamps find the gap between the middle words, and sox inserts a pause there
(`pad SECONDS@POSITION`) of 300, 500 or 800 ms (by the question's position, in turn). Questions
are split by position: even → "select" (defaults are chosen there), odd → "report".

    clips = make_turn_clips(folder, limit=None)   # cached in folder (clips.json)
"""

from __future__ import annotations

import json
import subprocess
import wave
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
QUESTIONS = ROOT.parent / "shared" / "data" / "eval" / "manuals" / "questions.jsonl"
PAUSES_MS = (300, 500, 800)
LOUD = 600  # int16: louder samples are speech (as bench.voice_browser.speech_timing)


@dataclass(frozen=True)
class TurnClip:
    path: str  # 16 kHz mono 16-bit WAV, 0.3 s of quiet before, 1.5 s after
    text: str
    voice: str  # piper | espeak
    half: str  # select | report
    pause_ms: int  # 0: spoken straight through
    pause_at: float  # where the inserted pause starts (s; 0 when none)
    speech_end: float  # the last loud sample (s)


def read_wav(path: str | Path) -> tuple[np.ndarray, int]:
    with wave.open(str(path)) as w:
        data = np.frombuffer(w.readframes(w.getnframes()), "<i2")
        return data, w.getframerate()


def english_questions(limit: int | None = None) -> list[str]:
    rows = [json.loads(line) for line in QUESTIONS.read_text(encoding="utf-8").splitlines() if line.strip()]
    out = [r["question"] for r in rows if r.get("language", "en") == "en"]
    return out[:limit] if limit else out


def _sox(*args: str) -> None:
    subprocess.run(["sox", *args], check=True, capture_output=True)


def _speak(text: str, voice: str, raw: Path, piper) -> None:
    if voice == "espeak":
        subprocess.run(["espeak-ng", "-v", "en+m3", "-s", "165", "-w", str(raw), text], check=True)
        return
    rate, samples = piper.synthesise(text)
    with wave.open(str(raw), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(samples.astype("<i2").tobytes())


def _gap(words: list, k: int) -> float:
    """The middle of the gap after word k (0-based) of whisper's word timestamps."""
    return (words[k].end + words[k + 1].start) / 2


def make_turn_clips(folder: Path, limit: int | None = None) -> list[TurnClip]:
    folder.mkdir(parents=True, exist_ok=True)
    index = folder / "clips.json"
    if index.exists():
        clips = [TurnClip(**c) for c in json.loads(index.read_text())]
        if limit is None or len({c.text for c in clips}) >= limit:
            keep = set(english_questions(limit))
            return [c for c in clips if c.text in keep]
    from faster_whisper import WhisperModel

    from models.settings import TTSSettings
    from models.tts_piper import PiperEngine
    from models.weights import whisper_model

    piper = PiperEngine(TTSSettings())
    whisper = WhisperModel(whisper_model("tiny.en"), device="cpu", compute_type="int8")
    clips: list[TurnClip] = []
    for i, text in enumerate(english_questions(limit)):
        half = "select" if i % 2 == 0 else "report"
        pause = PAUSES_MS[(i // 2) % len(PAUSES_MS)]
        for voice in ("piper", "espeak"):
            raw, base = folder / f"raw_{voice}_{i}.wav", folder / f"{voice}_{i}.wav"
            _speak(text, voice, raw, piper)
            _sox(str(raw), "-r", "16000", "-c", "1", "-b", "16", str(base), "pad", "0.3", "1.5")
            raw.unlink()
            segments, _ = whisper.transcribe(str(base), word_timestamps=True, language="en", beam_size=1)
            words = [w for s in segments for w in (s.words or [])]
            data, rate = read_wav(base)
            end = float(np.flatnonzero(np.abs(data) > LOUD)[-1] / rate)
            clips.append(TurnClip(str(base), text, voice, half, 0, 0.0, end))
            if len(words) < 4:
                continue  # too short to pause in the middle
            k = max(1, min(len(words) - 3, len(words) // 2 - 1))
            at = round(_gap(words, k), 3)
            paused = folder / f"{voice}_{i}_p{pause}.wav"
            _sox(str(base), str(paused), "pad", f"{pause / 1000}@{at}")
            data, rate = read_wav(paused)
            end = float(np.flatnonzero(np.abs(data) > LOUD)[-1] / rate)
            clips.append(TurnClip(str(paused), text, voice, half, pause, float(at), end))
    index.write_text(json.dumps([asdict(c) for c in clips], indent=1))
    return clips
