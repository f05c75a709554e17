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

`--first-piece` compares, for Piper only, where the first piece ends: before a phrase from 4 words
or a determiner from 6 (the default), without the determiner rule, and the word count alone (~8
words): first audio from the first token, the first piece's synthesis, and the gaps while the
answer plays (a piece not synthesised when the one before has finished playing).
`--first-piece-rules N` counts how often each early-end rule changes the first piece of the first N
passages of four dev sets (real sentences; nothing is synthesised).
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


def _first_piece(text: str, **splitter: int) -> str:
    """The first piece the splitter (its settings: `splitter`) would speak of `text`."""
    s = SentenceSplitter(**splitter)
    pieces = s.feed(text + " ") + s.flush()
    return pieces[0] if pieces else ""


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


def _played(synth: Synthesiser, text: str, splitter: SentenceSplitter) -> tuple[float, float, float]:
    """(first audio, first piece's synthesis, gaps) in ms for `text` streamed at 40 tokens/s and
    synthesised piece by piece, each piece played once ready and the one before has finished."""
    pieces, words = [], text.split(" ")
    for i, word in enumerate(words):  # each piece with the time its last token arrives
        pieces += [(p, i * TOKEN_SECONDS) for p in splitter.feed(word if i == 0 else " " + word)]
    pieces += [(p, len(words) * TOKEN_SECONDS) for p in splitter.flush()]
    clock, played_to, gaps, first = 0.0, 0.0, 0.0, None
    for piece, arrives in pieces:
        t0 = time.perf_counter()
        rate, samples = synth.synthesise(piece)
        took = time.perf_counter() - t0
        clock = max(clock, arrives) + took
        if first is None:
            first = (clock * 1000, took * 1000)
        else:
            gaps += max(0.0, clock - played_to)
        played_to = max(played_to, clock) + len(samples) / rate
    assert first is not None
    return first[0], first[1], gaps * 1000


def _first_piece_ab(rounds: int) -> int:
    synth = Synthesiser(TTSSettings())
    synth.warm_up()
    variants = {
        "before a phrase from 4 words, a determiner from 6 (default)": {},
        "not before a determiner": {"determiner_words": 0},
        "word count alone (~8)": {"phrase_words": 0, "determiner_words": 0},
    }
    answers = [" ".join(SENTENCES[:2]), " ".join(SENTENCES[2:]), *SENTENCES]
    rows: dict[str, list[tuple[float, float, float]]] = {v: [] for v in variants}
    load_before = load_average()
    for _ in range(rounds):
        for text in answers:
            for name, kw in variants.items():  # interleaved
                rows[name].append(_played(synth, text, SentenceSplitter(**kw)))
    mean = statistics.mean
    print(f"{rounds} rounds of {len(answers)} answers, load average {(load_before + load_average()) / 2:.1f}")
    print("| first piece | first audio ms, mean | its synthesis ms, mean | answers with a gap | gaps ms, sum | first pieces |")
    print("|---|---:|---:|---:|---:|---|")
    for name, kw in variants.items():
        firsts = sorted({SentenceSplitter(**kw).feed(t + " Next")[0] for t in SENTENCES})
        r = rows[name]
        print(f"| {name} | {mean(x[0] for x in r):.0f} | {mean(x[1] for x in r):.0f} | "
              f"{sum(x[2] > 0 for x in r)}/{len(r)} | {sum(x[2] for x in r):.0f} | {' / '.join(firsts)} |")  # fmt: skip
    return 0


def _first_piece_rules(limit: int) -> int:
    """How often each first-clause rule changes the first piece of real text: the first sentences of
    the dev sets' passages (no synthesis)."""
    from bench.common import EVAL

    rules = {"before a determiner from 6 words": {"determiner_words": 0}, "before a phrase from 4 words": {"phrase_words": 0}}
    print("| set | passages | words in the first piece, mean | " + " | ".join(f"changed by '{r}'" for r in rules) + " |")
    print("|---|---:|---:|" + "---:|" * len(rules))
    for name in ("xquad_en", "nq_oracle", "medquad_liveqa", "covid_faq"):
        with open(EVAL / name / "corpus.jsonl", encoding="utf-8") as f:
            texts = [json.loads(line)["text"][:600] for _, line in zip(range(limit), f, strict=False)]
        pieces = [_first_piece(t) for t in texts]
        changed = [sum(_first_piece(t, **kw) != p for t, p in zip(texts, pieces, strict=True)) for kw in rules.values()]
        words = statistics.mean(len(p.split()) for p in pieces)
        print(f"| {name} | {len(texts)} | {words:.1f} | " + " | ".join(str(c) for c in changed) + " |")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--json", dest="json_out", default=None)
    ap.add_argument("--first-piece", action="store_true", help="Piper: where the first piece ends, A/B")
    ap.add_argument("--first-piece-rules", type=int, metavar="N", help="how often each first-clause rule "
                    "changes the first piece of N passages of each dev set (no synthesis)")
    args = ap.parse_args(argv)
    if args.first_piece_rules:
        return _first_piece_rules(args.first_piece_rules)
    if args.first_piece:
        return _first_piece_ab(args.rounds)

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
