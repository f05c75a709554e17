"""Intent classifier inference latency on this CPU, the model loaded once.

    python bench/intent.py [--config config.yaml] [--repeats 5] [--threads N ...]

Times `IntentClassifier.predict(text)` one query at a time over the queries of the external file
(`intent.external_file`), after a warm-up, and prints p50/p90/mean per query. For comparison it
also times the same adapter left unmerged (peft wrapper, LoRA applied at every forward pass) and a
batched call (`predict_batch`, 32 queries), side by side in the same process. Target: p50 ≤ 10 ms.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import argparse  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from pathlib import Path  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def _times(fn: Callable[[str], object], texts: list[str], repeats: int) -> list[float]:
    for t in texts[:20]:
        fn(t)
    out = []
    for _ in range(repeats):
        for t in texts:
            t0 = time.perf_counter()
            fn(t)
            out.append((time.perf_counter() - t0) * 1000)
    return sorted(out)


def _row(name: str, threads: int, ms: list[float], per: int = 1) -> str:
    ms = [m / per for m in ms]
    p90 = ms[int(0.9 * (len(ms) - 1))]
    return f"| {name} | {threads} | {statistics.median(ms):.2f} | {p90:.2f} | {statistics.fmean(ms):.2f} | {len(ms)} |"


def main() -> int:
    import torch

    from assistant.config import load_config
    from models.intent import IntentClassifier, base_model_path
    from models.intent_data import read_csv

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", default=None)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--threads", type=int, nargs="*", default=[torch.get_num_threads()])
    args = ap.parse_args()

    cfg = load_config(args.config)
    settings = cfg.intent
    texts = [e.text for e in read_csv(cfg.path(settings.external_file))]
    t0 = time.perf_counter()
    clf = IntentClassifier(settings, cfg.base_dir)
    clf.warm_up()
    load_s = time.perf_counter() - t0

    from peft import PeftModel
    from transformers import AutoModelForSequenceClassification

    base = AutoModelForSequenceClassification.from_pretrained(
        base_model_path(settings), num_labels=len(clf.labels)
    )
    unmerged = PeftModel.from_pretrained(base, str(clf.adapter_dir)).eval()
    tok = clf._tokenizer

    def predict_unmerged(text: str) -> object:
        enc = tok([text], truncation=True, max_length=settings.max_length, return_tensors="pt")
        with torch.inference_mode():
            return unmerged(**enc).logits.softmax(-1)

    batch = 32
    chunks = [texts[i : i + batch] for i in range(0, len(texts), batch) if len(texts[i : i + batch]) == batch]

    print(
        f"intent classifier: {settings.base_model} + {settings.adapter_dir}; load {load_s:.2f} s; "
        f"{len(texts)} queries × {args.repeats}; {os.cpu_count()} CPUs; load average {os.getloadavg()[0]:.1f}"
    )
    print("| variant | torch threads | p50 ms/query | p90 ms/query | mean ms/query | calls |")
    print("|---|---|---|---|---|---|")
    for n in args.threads:
        torch.set_num_threads(n)
        print(
            _row("predict(), adapter merged (shipped)", n, _times(clf.predict, texts, args.repeats)),
            flush=True,
        )
        print(
            _row("adapter unmerged (peft wrapper)", n, _times(predict_unmerged, texts, args.repeats)),
            flush=True,
        )
        bt = _times(
            lambda i: clf.predict_batch(chunks[int(i)]), [str(i) for i in range(len(chunks))], args.repeats
        )
        print(_row(f"predict_batch({batch}), per query", n, bt, per=batch), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
