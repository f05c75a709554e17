"""Intent classifier inference latency on this CPU, the model loaded once.

    python -m bench.intent [--config config.yaml] [--repeats 5] [--threads 1 2]

Times `IntentClassifier.predict(text)` one query at a time over the queries of the external file
(`intent.external_file`), after a warm-up, and prints p50/p90 wall-clock and p50 CPU time per
query. Side by side in the same process: the shipped ONNX Runtime path, the same merged model in
PyTorch and the adapter left unmerged (peft wrapper), taking turns query by query, then a batched
call (`predict_batch`, 32 queries).
CPU time is what an idle core would take; wall time also counts waiting for a busy machine.
Target: p50 <= 10 ms.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable

from bench.common import load_average


def _times_interleaved(
    fns: list[Callable[[str], object]], texts: list[str], repeats: int
) -> list[tuple[list[float], list[float]]]:
    """Wall-clock and CPU ms of each call, the variants taking turns on every input so that a busy
    machine's load swings hit them alike (CPU time = what an idle core would take)."""
    for fn in fns:
        for t in texts[:20]:
            fn(t)
    out: list[tuple[list[float], list[float]]] = [([], []) for _ in fns]
    for _ in range(repeats):
        for t in texts:
            for fn, (wall, cpu) in zip(fns, out, strict=True):
                w0, c0 = time.perf_counter(), time.process_time()
                fn(t)
                wall.append((time.perf_counter() - w0) * 1000)
                cpu.append((time.process_time() - c0) * 1000)
    return [(sorted(w), sorted(c)) for w, c in out]


def _row(name: str, threads: str, timed: tuple[list[float], list[float]], per: int = 1) -> str:
    wall, cpu = ([m / per for m in ms] for ms in timed)
    p90 = wall[int(0.9 * (len(wall) - 1))]
    return (
        f"| {name} | {threads} | {statistics.median(wall):.2f} | {p90:.2f} | {statistics.median(cpu):.2f} | "
        f"{len(wall)} |"
    )


def main() -> int:
    import torch

    from assistant.config import load_config
    from models.intent import IntentClassifier, base_model_path
    from models.intent_data import read_csv

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", default=None)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--threads", type=int, nargs="*", default=[1, 2])
    args = ap.parse_args()

    cfg = load_config(args.config)
    settings = cfg.intent
    texts = [e.text for e in read_csv(cfg.path(settings.external_file))]
    t0 = time.perf_counter()
    shipped = IntentClassifier(settings, cfg.base_dir)
    shipped.warm_up()
    load_s = time.perf_counter() - t0
    eager = IntentClassifier(settings.model_copy(update={"runtime": "torch"}), cfg.base_dir)
    eager.warm_up()

    from peft import PeftModel
    from transformers import AutoModelForSequenceClassification

    base = AutoModelForSequenceClassification.from_pretrained(
        base_model_path(settings), num_labels=len(shipped.labels)
    )
    unmerged = PeftModel.from_pretrained(base, str(shipped.adapter_dir)).eval()
    tok = shipped._tokenizer

    def predict_unmerged(text: str) -> object:
        enc = tok([text], truncation=True, max_length=settings.max_length, return_tensors="pt")
        with torch.inference_mode():
            return unmerged(**enc).logits.softmax(-1)

    batch = 32
    chunks = [texts[i : i + batch] for i in range(0, len(texts) - batch + 1, batch)]

    print(
        f"intent classifier: {settings.base_model} + {settings.adapter_dir}; load {load_s:.2f} s "
        f"({shipped.runtime}); {len(texts)} queries x {args.repeats}; {os.cpu_count()} CPUs; "
        f"load average {load_average():.1f}"
    )
    print("| variant | threads | p50 ms/query (wall) | p90 ms/query (wall) | p50 CPU ms/query | calls |")
    print("|---|---|---|---|---|---|")
    for n in args.threads:
        torch.set_num_threads(n)
        onnx = IntentClassifier(settings.model_copy(update={"threads": n}), cfg.base_dir)
        singles = [
            (f"predict(), {onnx.runtime} (shipped default)", onnx.predict),
            ("predict(), torch, adapter merged", eager.predict),
            ("torch, adapter unmerged (peft wrapper)", predict_unmerged),
        ]
        timed = _times_interleaved([fn for _, fn in singles], texts, args.repeats)
        for (name, _), t in zip(singles, timed, strict=True):
            print(_row(name, str(n), t), flush=True)
        (bt,) = _times_interleaved(
            [lambda i, clf=onnx: clf.predict_batch(chunks[int(i)])],
            [str(i) for i in range(len(chunks))],
            args.repeats,
        )
        print(_row(f"predict_batch({batch}), {onnx.runtime}, per query", str(n), bt, per=batch), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
