"""Speech synthesis speed, side by side: the Piper voice (default) and eSpeak NG (fallback).

    python -m bench.tts [--rounds N] [--json OUT]

Per engine, interleaved in one run (medians over the rounds):
- `first piece ms`: synthesis of the first piece of an answer (its first clause, as
  `SentenceSplitter` cuts it), i.e. what stands between the text and the first sound;
- `sentence ms`: synthesis of one whole answer sentence;
- `speech/compute`: seconds of speech per second of compute (real-time factor);
- `first audio ms` (clause / sentence): from the first token of a streamed answer (tokens at
  40 per second, like a fast LLM) to the first audio, with the first-clause splitter and with
  whole sentences only.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

from assistant.speak import SentenceSplitter, speak_stream
from assistant.speech_text import for_speech
from bench.common import load_average
from models.settings import TTSSettings
from models.tts import Synthesiser

SENTENCES = [
    "The notice period in your rental agreement is three months, counted from the end of the month.",
    "You must give notice in writing, and the landlord has to confirm it within two weeks.",
    "Keep a copy of the letter.",
    "The deposit is returned within thirty days after the keys are handed back, minus any repairs.",
]
ENGINES = {
    "piper, 1 thread": TTSSettings(piper_threads=1),
    "piper, 2 threads": TTSSettings(piper_threads=2),
    "espeak-ng library": TTSSettings(engine="espeak-ng", backend="library"),
    "espeak-ng command": TTSSettings(engine="espeak-ng", backend="command"),
}
TOKEN_SECONDS = 1 / 40


def _first_piece(sentence: str) -> str:
    return SentenceSplitter().feed(sentence + " Next")[0]


def _stream(text: str):
    for i, tok in enumerate(text.split(" ")):
        if i:
            time.sleep(TOKEN_SECONDS)
        yield tok if i == 0 else " " + tok


def _first_audio_ms(synth: Synthesiser, text: str, first_clause: bool) -> float:
    splitter = SentenceSplitter(first_clause_words=8 if first_clause else 0)
    t0 = time.perf_counter()
    for _audio in speak_stream(_stream(text), synth, splitter):
        return (time.perf_counter() - t0) * 1000
    raise AssertionError("no audio")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--json", dest="json_out", default=None)
    args = ap.parse_args(argv)

    load_before = load_average()
    synths = {name: Synthesiser(s) for name, s in ENGINES.items()}
    for synth in synths.values():
        synth.warm_up()
    voices = {name: synth.engine_name for name, synth in synths.items()}
    first = {n: [] for n in synths}
    whole = {n: [] for n in synths}
    speech = {n: 0.0 for n in synths}
    compute = {n: 0.0 for n in synths}
    stream_clause = {n: [] for n in synths}
    stream_sentence = {n: [] for n in synths}
    answer = " ".join(SENTENCES)
    for _ in range(args.rounds):
        for sentence in SENTENCES:
            piece, said = _first_piece(sentence), for_speech(sentence)
            for name, synth in synths.items():  # interleaved: the machine's load hits all alike
                t0 = time.perf_counter()
                synth.synthesise(piece)
                first[name].append((time.perf_counter() - t0) * 1000)
                t0 = time.perf_counter()
                rate, samples = synth.synthesise(said)
                dt = time.perf_counter() - t0
                whole[name].append(dt * 1000)
                speech[name] += len(samples) / rate
                compute[name] += dt
        for name, synth in synths.items():
            stream_clause[name].append(_first_audio_ms(synth, answer, True))
            stream_sentence[name].append(_first_audio_ms(synth, answer, False))

    med = statistics.median
    rows = []
    load = (load_before + load_average()) / 2
    print(f"{args.rounds} rounds of {len(SENTENCES)} sentences, load average {load:.1f}; first pieces: "
          f"{[_first_piece(s) for s in SENTENCES]}")  # fmt: skip
    print("| engine | voice | first piece ms | sentence ms | speech/compute | first audio ms, clause | "
          "first audio ms, sentence |")  # fmt: skip
    print("|---|---|---|---|---|---|---|")
    for name in synths:
        row = {
            "engine": name,
            "voice": voices[name],
            "first_piece_ms_p50": round(med(first[name]), 1),
            "sentence_ms_p50": round(med(whole[name]), 1),
            "speech_per_compute": round(speech[name] / compute[name], 1),
            "first_audio_ms_clause_p50": round(med(stream_clause[name]), 1),
            "first_audio_ms_sentence_p50": round(med(stream_sentence[name]), 1),
        }
        rows.append(row)
        print(
            f"| {name} | {row['voice']} | {row['first_piece_ms_p50']:.0f} | {row['sentence_ms_p50']:.0f} | "
            f"{row['speech_per_compute']:.0f}× | {row['first_audio_ms_clause_p50']:.0f} | "
            f"{row['first_audio_ms_sentence_p50']:.0f} |"
        )
    if args.json_out:
        Path(args.json_out).write_text(
            json.dumps({"rounds": args.rounds, "load": load, "engines": rows}, indent=2)
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
