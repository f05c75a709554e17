"""Speech-to-text accuracy and speed: Hark's settings against faster-whisper's defaults.

Word error rate (normalised: bench/wer.py) on the LibriVox clips of Debian's pocketsphinx-testdata
(`.ci/install --test` unpacks them), and latency of clip → text (decoding included) on this
machine. Every setting runs on the same model object, interleaved clip by clip and round by
round, so machine load hits them alike and the ratios are robust.

    python -m bench.stt                                   # tiny.en and base, Hark vs defaults
    python -m bench.stt --models base --ablations         # what each Hark option buys
    python -m bench.stt --models base --threads 0,1,2     # CTranslate2 threads
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.common import load_average
from bench.wer import wer
from models.settings import SpeechSettings
from models.speech import Transcriber
from tests.audio_data import librivox_clips

HARK = "hark"
DEFAULTS = "defaults"
DEFAULTS_EN = "defaults + language forced"
ABLATIONS: dict[str, dict[str, Any]] = {
    "hark + beam 5": {"beam_size": 5},
    "hark - VAD": {"vad_filter": False},
    "hark + timestamps": {"without_timestamps": False},
}


@dataclass
class Row:
    model: str
    setting: str
    threads: int
    texts: list[str] = field(default_factory=list)
    times: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)  # process CPU seconds: less sensitive to other load


def _hark_kwargs(s: SpeechSettings) -> dict[str, Any]:
    return {
        "beam_size": s.beam_size,
        "language": s.language,
        "vad_filter": s.vad_filter,
        "without_timestamps": s.without_timestamps,
        "condition_on_previous_text": s.condition_on_previous_text,
    }


def _run_once(tr: Transcriber, setting: str, path: Path) -> tuple[str, float]:
    if setting == HARK:
        res = tr.transcribe(path)
        return res.text, res.seconds
    model = tr._load()  # the same loaded model, so only the decoding options differ
    t0 = time.perf_counter()
    if setting == DEFAULTS:
        segments, _ = model.transcribe(str(path))  # faster-whisper's defaults: beam 5, no VAD, …
    elif setting == DEFAULTS_EN:
        segments, _ = model.transcribe(str(path), language=tr.settings.language)
    else:
        kwargs = _hark_kwargs(tr.settings) | ABLATIONS[setting]
        segments, _ = model.transcribe(str(path), **kwargs)
    text = " ".join(s.text.strip() for s in segments)
    return text, time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default="tiny.en,base")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", default="0", help="comma-separated CTranslate2 cpu_threads (0 = default)")
    ap.add_argument("--ablations", action="store_true", help="also Hark with one option changed")
    ap.add_argument("--json", dest="json_out", default=None)
    args = ap.parse_args(argv)

    load_before = load_average()
    clips = librivox_clips()
    settings_names = [HARK, DEFAULTS] + ([DEFAULTS_EN, *ABLATIONS] if args.ablations else [])
    transcribers: list[Transcriber] = []
    for name in args.models.split(","):
        for threads in [int(t) for t in args.threads.split(",")]:
            tr = Transcriber(SpeechSettings(model=name, cpu_threads=threads))
            tr.warm_up()
            print(f"# {name}, cpu_threads={threads}: loaded in {tr.load_seconds:.2f} s", file=sys.stderr)
            transcribers.append(tr)
    groups = {
        (id(tr), s): Row(tr.settings.model, s, tr.settings.cpu_threads)
        for tr in transcribers
        for s in settings_names
    }
    # everything interleaved: per round, per clip, every model × threads × setting (order alternating)
    for rnd in range(args.rounds):
        for clip in clips:
            for tr in transcribers if rnd % 2 == 0 else transcribers[::-1]:
                for setting in settings_names if rnd % 2 == 0 else settings_names[::-1]:
                    cpu0 = time.process_time()
                    text, secs = _run_once(tr, setting, clip.path)
                    groups[(id(tr), setting)].cpu.append(time.process_time() - cpu0)
                    groups[(id(tr), setting)].times.append(secs)
                    if rnd == 0:
                        groups[(id(tr), setting)].texts.append(text)
        print(f"# round {rnd + 1}/{args.rounds} done", file=sys.stderr)
    rows = list(groups.values())
    durations = [transcribers[0].prepare(clip.path).seconds for clip in clips]

    refs = [c.reference for c in clips]
    print(
        f"\n{len(clips)} LibriVox clips ({sum(durations):.1f} s; median {statistics.median(durations):.2f} s), "
        f"{args.rounds} rounds, {os.cpu_count()} CPUs, load average {load_before:.1f} before / "
        f"{load_average():.1f} after\n"
    )
    print("| model | threads | setting | WER | p50 s | p90 s | defaults p50 / this p50 | CPU s p50 |")
    print("|---|---|---|---|---|---|---|---|")
    out = []
    for row in rows:
        p50 = statistics.median(row.times)
        p90 = statistics.quantiles(row.times, n=10)[-1] if len(row.times) > 1 else p50
        base = next(r for r in rows if (r.model, r.threads, r.setting) == (row.model, row.threads, DEFAULTS))
        ratio = statistics.median(base.times) / p50
        w = wer(refs, row.texts)
        cpu = statistics.median(row.cpu)
        print(
            f"| {row.model} | {row.threads} | {row.setting} | {w:.1%} | {p50:.3f} | {p90:.3f} | {ratio:.2f}× "
            f"| {cpu:.2f} |"
        )
        out.append({"model": row.model, "threads": row.threads, "setting": row.setting, "wer": w,
                    "p50": p50, "p90": p90, "cpu_p50": cpu, "speedup_vs_defaults": ratio, "texts": row.texts})  # fmt: skip
    if args.json_out:
        Path(args.json_out).write_text(
            json.dumps({"clips": [str(c.path) for c in clips], "rows": out}, indent=1)
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
