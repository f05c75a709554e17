"""Does `TOKENIZERS_PARALLELISM=false` (set by models/runtime_env.py for the app, tests and benches)
cost embedding speed? MiniLM (sentence-transformers) embeds the same NQ passages in fresh child
processes, with the variable unset and set to false, alternating, and prints the medians.

    python bench/process_env.py [--passages 256] [--reps 3]

The variable is read once when `tokenizers` is imported, hence one child process per run.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EVAL = ROOT.parent / "shared" / "data" / "eval"

CHILD = """
import json, sys, time
sys.path.insert(0, {root!r})
from models.weights import minilm_path
from sentence_transformers import SentenceTransformer
texts = [json.loads(l)["text"] for _, l in zip(range({n}), open({corpus!r}, encoding="utf-8"))]
m = SentenceTransformer(minilm_path("sentence-transformers/all-MiniLM-L6-v2"), device="cpu")
m.encode(texts[:32])
t = time.perf_counter()
m.encode(texts, batch_size=32)
print(time.perf_counter() - t)
"""


def run_once(n: int, parallelism: str | None) -> float:
    env = {k: v for k, v in os.environ.items() if k != "TOKENIZERS_PARALLELISM"}
    env |= {"OMP_WAIT_POLICY": "PASSIVE", "HF_HUB_OFFLINE": "1"}
    if parallelism is not None:
        env["TOKENIZERS_PARALLELISM"] = parallelism
    code = CHILD.format(root=str(ROOT), n=n, corpus=str(EVAL / "nq_oracle" / "corpus.jsonl"))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--passages", type=int, default=256)
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    times: dict[str, list[float]] = {"unset": [], "false": []}
    for _ in range(args.reps):
        times["unset"].append(run_once(args.passages, None))
        times["false"].append(run_once(args.passages, "false"))
    load = os.getloadavg()[0]
    print(f"\n# bench/process_env.py — {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load {load:.1f}")
    print(f"MiniLM, {args.passages} NQ passages, batch 32, {args.reps} alternating runs each")
    print("| TOKENIZERS_PARALLELISM | median s | runs s |")
    print("|---|---:|---|")
    for name, ts in times.items():
        print(f"| {name} | {statistics.median(ts):.2f} | {', '.join(f'{t:.2f}' for t in ts)} |")
    print(json.dumps({k: statistics.median(v) for k, v in times.items()}))


if __name__ == "__main__":
    main()
