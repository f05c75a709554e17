"""Streaming transcription against whole-clip transcription: word error rate and release → text.

Each clip is played into a `StreamingTranscriber` in real time (100 ms chunks, as the browser sends
them), followed by `--hold` seconds of quiet (the user still holding the button after the last
word); then the user "releases": `finish()`. Today's path gets the same audio at release and
transcribes it whole. Both use one model object, clip by clip in turn, so load hits them alike.
Clips: the LibriVox clips of pocketsphinx-testdata and espeak-ng questions (made here).

    python -m bench.stream_stt                        # base int8, 1 round
    python -m bench.stream_stt --tail-model tiny.en   # the pass at release by tiny.en
    python -m bench.stream_stt --rounds 2 --json out.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from models.runtime.env import prepare_process_env  # noqa: E402

prepare_process_env(offline=True)

import numpy as np  # noqa: E402

from bench.wer import wer  # noqa: E402
from models import audio as audio_io  # noqa: E402
from models.settings import SpeechSettings, StreamingSettings  # noqa: E402
from models.speech import Transcriber  # noqa: E402
from models.streaming import StreamingTranscriber  # noqa: E402
from tests.audio_data import espeak_wav, librivox_clips  # noqa: E402

QUESTIONS = [
    "what is the notice period in my rental agreement",
    "how many days of annual leave do new employees get",
    "who signed the maintenance contract for the office building",
    "what does the handbook say about working from home on fridays",
    "when is the deadline for submitting travel expenses",
]
CHUNK = 0.1


def clips() -> list[tuple[str, np.ndarray, str]]:
    out = [(c.path.stem[-4:], audio_io.load(c.path).samples, c.reference) for c in librivox_clips()]
    with tempfile.TemporaryDirectory() as tmp:
        for i, q in enumerate(QUESTIONS):
            path = espeak_wav(Path(tmp), q, name=f"q{i}")
            out.append((f"q{i}", audio_io.load(path).samples, q))
    return out


def stream(
    tr: Transcriber,
    tail: Transcriber | None,
    settings: StreamingSettings,
    samples: np.ndarray,
    hold: float,
    partial: Transcriber | None = None,
):
    st = StreamingTranscriber(tr, settings, tail=tail, partial=partial)
    step = int(CHUNK * 16000)
    audio = np.concatenate([samples, np.zeros(int(hold * 16000), np.float32)])
    t_start = time.perf_counter()
    for i in range(0, len(audio), step):
        st.feed(audio[i : i + step], 16000)
        target = t_start + (i + step) / 16000
        time.sleep(max(0.0, target - time.perf_counter()))
    return st.finish()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="base")
    ap.add_argument("--tail-model", default=None)
    ap.add_argument("--partial-model", default=None, help="the model of the passes while speaking (e.g. tiny.en)")
    ap.add_argument("--hold", type=float, default=0.3, help="quiet seconds between the last word and release")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument(
        "--prefix",
        action="store_true",
        help="also stream with prefix_at_release (the committed words forced)",
    )
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args(argv)

    tr = Transcriber(SpeechSettings(model=args.model))
    tr.warm_up()
    tail = None
    if args.tail_model:
        tail = Transcriber(SpeechSettings(model=args.tail_model))
        tail.warm_up()
    partial = None
    if args.partial_model:
        partial = Transcriber(SpeechSettings(model=args.partial_model))
        partial.warm_up()
    settings = StreamingSettings(tail_model=args.tail_model, partial_model=args.partial_model)
    prefixed = settings.model_copy(update={"prefix_at_release": True}) if args.prefix else None
    data = clips()
    rows: dict[str, dict[str, list]] = {}
    for _ in range(args.rounds):
        for name, samples, ref in data:
            r = rows.setdefault(
                name,
                {
                    "ref": ref,
                    "stream": [],
                    "full": [],
                    "st_ms": [],
                    "full_ms": [],
                    "mode": [],
                    "prefix": [],
                    "px_ms": [],
                },
            )
            if prefixed is not None:
                res = stream(tr, tail, prefixed, samples, args.hold, partial)
                r["prefix"].append(res.text)
                r["px_ms"].append(res.seconds * 1000)
            res = stream(tr, tail, settings, samples, args.hold, partial)
            r["stream"].append(res.text)
            r["st_ms"].append(res.seconds * 1000)
            r["mode"].append(res.final_pass)
            held = np.concatenate([samples, np.zeros(int(args.hold * 16000), np.float32)])
            t0 = time.perf_counter()
            full = tr.transcribe(held, sample_rate=16000)
            r["full_ms"].append((time.perf_counter() - t0) * 1000)
            r["full"].append(full.text)

    def corpus_wer(kind: str, names: list[str]) -> float:
        refs = [rows[n]["ref"] for n in names for _ in rows[n][kind]]
        hyps = [h for n in names for h in rows[n][kind]]
        return 100 * wer(refs, hyps)

    print(f"{'clip':6} {'stream ms':>9} {'whole ms':>9}  final pass  stream text")
    for name, r in rows.items():
        print(
            f"{name:6} {statistics.median(r['st_ms']):9.0f} {statistics.median(r['full_ms']):9.0f}  "
            f"{','.join(r['mode']):10}  {r['stream'][-1]}"
        )
    libri = [n for n in rows if not n.startswith("q")]
    espeak = [n for n in rows if n.startswith("q")]
    st_ms = [x for r in rows.values() for x in r["st_ms"]]
    full_ms = [x for r in rows.values() for x in r["full_ms"]]
    summary = {
        "model": args.model,
        "tail_model": args.tail_model,
        "partial_model": args.partial_model,
        "hold_s": args.hold,
        "rounds": args.rounds,
        "release_to_transcript_ms_p50_streaming": round(statistics.median(st_ms)),
        "release_to_transcript_ms_p50_whole_clip": round(statistics.median(full_ms)),
        "wer_streaming_librivox": round(corpus_wer("stream", libri), 2),
        "wer_full_clip_librivox": round(corpus_wer("full", libri), 2),
        "wer_streaming_espeak": round(corpus_wer("stream", espeak), 2),
        "wer_full_clip_espeak": round(corpus_wer("full", espeak), 2),
        "final_pass_counts": {
            m: sum(r["mode"].count(m) for r in rows.values()) for m in ("none", "tail", "full")
        },
    }
    if prefixed is not None:
        px_ms = [x for r in rows.values() for x in r["px_ms"]]
        summary["release_to_transcript_ms_p50_prefix"] = round(statistics.median(px_ms))
        summary["wer_prefix_librivox"] = round(corpus_wer("prefix", libri), 2)
        summary["wer_prefix_espeak"] = round(corpus_wer("prefix", espeak), 2)
        for name, r in rows.items():
            print(f"{name:6} prefix {statistics.median(r['px_ms']):6.0f} ms  {r['prefix'][-1]}")
    print()
    print(
        f"release → transcript p50: streaming {summary['release_to_transcript_ms_p50_streaming']} ms, "
        f"whole clip {summary['release_to_transcript_ms_p50_whole_clip']} ms"
    )
    print(
        f"WER LibriVox: streaming {summary['wer_streaming_librivox']:.2f}, whole clip "
        f"{summary['wer_full_clip_librivox']:.2f}; espeak questions: streaming "
        f"{summary['wer_streaming_espeak']:.2f}, whole clip {summary['wer_full_clip_espeak']:.2f}"
    )
    print(f"final pass at release: {summary['final_pass_counts']}")
    if prefixed is not None:
        print(
            f"with the committed words forced at release: {summary['release_to_transcript_ms_p50_prefix']} ms p50, "
            f"WER LibriVox {summary['wer_prefix_librivox']:.2f}, espeak {summary['wer_prefix_espeak']:.2f}"
        )
    if args.json:
        args.json.write_text(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
