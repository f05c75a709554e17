"""Speech synthesis speed: eSpeak NG through the wheel's library vs the espeak-ng program.

    python -m bench.tts

Prints, per backend, the median seconds to synthesise one answer sentence, the real-time factor
(seconds of speech per second of compute), and how long after a sentence's last token its audio
is ready when `speak_stream` runs on a token stream.
"""

from __future__ import annotations

import statistics
import sys
import time

from assistant.speak import speak_stream
from models.settings import TTSSettings
from models.tts import Synthesiser

SENTENCES = [
    "The notice period in your rental agreement is three months.",
    "You must give notice in writing, and the landlord has to confirm it within two weeks.",
    "Keep a copy of the letter.",
    "The deposit is returned within thirty days after the keys are handed back, minus any repairs.",
]


def main() -> int:
    rounds = 5
    synths = {b: Synthesiser(TTSSettings(backend=b)) for b in ("library", "command")}
    times: dict[str, list[float]] = {b: [] for b in synths}
    speech: dict[str, list[float]] = {b: [] for b in synths}
    for _ in range(rounds):
        for s in SENTENCES:
            for b, synth in synths.items():  # interleaved
                t0 = time.perf_counter()
                rate, samples = synth.synthesise(s)
                times[b].append(time.perf_counter() - t0)
                speech[b].append(len(samples) / rate)
    print("| backend | median s per sentence | speech s / compute s |")
    print("|---|---|---|")
    for b in synths:
        print(f"| {b} | {statistics.median(times[b]):.4f} | {sum(speech[b]) / sum(times[b]):.0f}× |")

    tokens = " ".join(SENTENCES).split(" ")
    delays = []
    for _ in range(rounds):
        last_token_at: list[float] = []

        def stream(stamps: list[float] = last_token_at):
            for i, tok in enumerate(tokens):
                stamps.append(time.perf_counter())
                yield tok if i == 0 else " " + tok

        t_start = time.perf_counter()
        first = None
        for _audio in speak_stream(stream(), synths["library"]):
            if first is None:
                first = time.perf_counter()
                # the first sentence is complete once the token after it has arrived
                delays.append(first - last_token_at[-1])
        assert first is not None and first - t_start < 1
    print(
        f"\nspeak_stream, library: first audio {statistics.median(delays) * 1000:.1f} ms "
        f"(median of {rounds}) after the token that completes the first sentence"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
