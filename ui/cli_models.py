"""`python launch.py transcribe AUDIO`, `train-intents` and `train-judge`: the model commands."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from models.settings import IntentSettings, JudgeSettings, SpeechSettings


def transcribe_command(
    settings: SpeechSettings, path: Path, out: Any = None, terms: Callable[[], Any] | None = None
) -> int:
    """Print the transcript, then the seconds it took. `terms`: the library's terms (as the app
    gives them), made once the audio is known to be readable."""
    from models.speech import Transcriber

    out = out or sys.stdout
    transcriber = Transcriber(settings)
    transcriber.prepare(path)  # a bad file fails before the model loads
    if terms is not None:
        transcriber.vocabulary = terms()
    transcriber.warm_up()
    result = transcriber.transcribe(path)
    print(result.text, file=out)
    print(
        f"({result.seconds:.2f} s for {result.duration:.1f} s of audio; model {settings.model}, "
        f"{transcriber.device}/{transcriber.compute_type})",
        file=out,
    )
    return 0


def train_command(settings: IntentSettings, base_dir: Path) -> int:
    """Regenerate the intent data, retrain the adapter, print its evaluations and a summary."""
    from models.intent_train import train
    from ui.cli_eval import format_intent_report

    report = train(settings, Path(base_dir), on_evaluated=lambda title, r: print(format_intent_report(r, title)))
    kept = report.runs[0]
    print(
        f"adapter written to {settings.adapter_dir} (best epoch {kept.best_epoch} of {len(kept.curve)}, "
        f"{kept.seconds:.0f} s): test macro-F1 {report.test['macro_f1']:.4f}, "
        f"external macro-F1 {report.external['macro_f1']:.4f}, p50 {report.latency_ms['p50']:.1f} ms"
    )
    return 0


def train_judge_command(settings: JudgeSettings, data: Path, base_dir: Path, out: Path | None = None) -> int:
    """Retrain the sentence judge on the BEIR sets under `data`; print its held-out accuracy."""
    from assistant.judge_train import train

    target = out or (Path(base_dir) / settings.adapter_dir)
    meta = train(settings, data, target)
    for name, r in meta["held_out"].items():
        print(f"{name} report half ({r['groups']} questions): best sentence holds the answer "
              f"{r['judge_top1']:.3f} (shared words: {r['overlap_top1']:.3f})")
    print(f"adapter written to {target} ({meta['train_groups']} questions, {meta['seconds']} s)")
    return 0
